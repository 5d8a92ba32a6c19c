-- 014_staged_result_stats.sql — PostgreSQL mirror of
-- schema/014_staged_result_stats.sql (see there): a staged result of
-- segment_results keeps the ?ci= statistics record of its own result
-- (server/live/ci_stats.h) as base64 text; NULL: not recorded, computed
-- from the stored request and result then.
ALTER TABLE segment_results ADD COLUMN stats text;
