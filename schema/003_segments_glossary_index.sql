-- 003_segments_glossary_index.sql — where a session's glossary version
-- changed along its segments, without reading the timeline.
--
-- GET …/curve returns the first segment scored with each glossary version
-- (store.c, SEG_GLOSSARY_CHANGES): with this covering index that is one
-- index seek per distinct version (a skip scan), not a scan of the
-- session's segments (whose rows hold the large request and result texts).
-- IF NOT EXISTS: a database re-migrated from version 2 keeps its index.

CREATE INDEX IF NOT EXISTS segments_glossary ON segments (sid, glossary_version, seq);
