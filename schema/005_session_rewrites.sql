-- 005_session_rewrites.sql — a counter of the rewrites of a session's
-- stored results (a PUT replay or a rescore; appends do not count).
--
-- Streamed reads of the segment log (the timeline, exports) read it a page
-- at a time, each page in its own read snapshot so that a slow client never
-- holds one. A rewrite committed between two pages would mix old and new
-- results in one answer; the pager records (incarnation, rewrites) with its
-- first page and ends the stream with an error when a later page sees them
-- changed (server/store.c am_store_segments_each_at).
ALTER TABLE sessions ADD COLUMN rewrites INTEGER NOT NULL DEFAULT 0;
