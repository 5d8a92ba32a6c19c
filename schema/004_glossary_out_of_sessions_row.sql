-- 004_glossary_out_of_sessions_row.sql — a session's current glossary lives
-- only in the glossaries table (sid, version = sessions.glossary_version).
--
-- The sessions row held the glossary text (tens to hundreds of KiB) in front
-- of the counters every POST reads and updates (segments, version,
-- incarnation, glossary_version): each POST's read snapshot, whose page cache
-- SQLite drops at every commit, re-read all of the text's overflow pages to
-- reach them (one pread each; issue 12, bench/README.md). The glossaries
-- table has held every version, the current one included, since 002; a row
-- missing there is copied first, then the sessions rows drop their copy.
-- The column stays (always NULL): dropping it would rebuild the table.

INSERT OR IGNORE INTO glossaries (sid, version, entries, created_at)
    SELECT sid, glossary_version, glossary, updated_at FROM sessions
    WHERE glossary_version > 0;
UPDATE sessions SET glossary = NULL WHERE glossary IS NOT NULL;
