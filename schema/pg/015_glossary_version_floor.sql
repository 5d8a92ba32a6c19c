-- 015_glossary_version_floor.sql — PostgreSQL mirror of
-- schema/015_glossary_version_floor.sql (see there): the glossary version
-- of the session's last rescore; a segment's glossary version is the
-- larger of segments.glossary_version and gv_floor (0: never rescored).
ALTER TABLE sessions ADD COLUMN gv_floor bigint NOT NULL DEFAULT 0;
