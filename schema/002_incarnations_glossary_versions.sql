-- 002_incarnations_glossary_versions.sql — session incarnations and
-- immutable glossary versions (see server/store.h).
--
-- Incarnation: a number given to a session when it is created, unique over
-- the database's life (counters.incarnation, bumped by every create), so a
-- session deleted and re-created under the same id is a different
-- incarnation. Writes check it in their transaction; the metrics ETag and
-- the cached scorers carry it.
--
-- Glossary versions: every glossary PUT or DELETE stores the new version,
-- immutable, in glossaries (entries NULL = no glossary). Version 0 is "no
-- glossary" and has no row. Each segment records the glossary version it
-- was scored with when first posted; a replay (PUT of a segment) scores
-- each segment with that version, so totals always equal a replay of the
-- log.
--
-- Upgrade of existing databases (best effort): existing sessions get
-- incarnation = their sid; the current glossary of each session is stored
-- as its current version, and every existing segment is recorded as scored
-- with that version (the versions in force when they were posted were not
-- kept before this migration).

ALTER TABLE sessions ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET incarnation = sid;

CREATE TABLE counters (
    name  TEXT    PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value)
    VALUES ('incarnation', (SELECT coalesce(max(sid), 0) FROM sessions));

CREATE TABLE glossaries (
    sid        INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    entries    TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (sid, version)
);
INSERT INTO glossaries (sid, version, entries, created_at)
    SELECT sid, glossary_version, glossary, updated_at FROM sessions
    WHERE glossary_version > 0;

ALTER TABLE segments ADD COLUMN glossary_version INTEGER NOT NULL DEFAULT 0;
UPDATE segments SET glossary_version =
    (SELECT s.glossary_version FROM sessions s WHERE s.sid = segments.sid);
