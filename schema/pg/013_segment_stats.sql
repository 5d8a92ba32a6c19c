-- 013_segment_stats.sql — PostgreSQL mirror of schema/013_segment_stats.sql
-- (see there): each segment row keeps the statistics GET …/metrics?ci=
-- resamples, a versioned, checksummed binary record as base64 text
-- (server/live/ci_stats.h); NULL: not recorded (rows stored before, and
-- rows whose result was rewritten), computed from the stored request and
-- result then.
ALTER TABLE segments ADD COLUMN stats text;
