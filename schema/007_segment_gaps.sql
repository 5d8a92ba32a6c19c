-- 007_segment_gaps.sql — a DELETE of a segment leaves its seq unused.
--
-- Renumbering the later segments (seq - 1, their occurrences and the
-- vocabulary's first/last seqs) wrote O(session) pages in the one write
-- transaction that switches a replay in. Seqs now only increase and keep
-- gaps where segments were deleted: sessions.segments stays the highest
-- seq given out (the next append takes segments + 1) and removed counts
-- the deleted ones, so the session has segments - removed segments.
ALTER TABLE sessions ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;
