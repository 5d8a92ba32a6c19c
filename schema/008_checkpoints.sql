-- 008_checkpoints.sql — running raw totals at every 32nd seq, so that the
-- replay after an edit of segment k starts at the last checkpoint before k
-- instead of segment 1 (server/live/ingest.c, docs/architecture.md "Replays").
--
-- A row (sid, seq, gen, system) holds the totals entry `system` (a system,
-- a pair:… or tr:… entry) as am_json_totals_raw after every segment with a
-- seq <= seq, exactly as the totals table held it then. The POST (or batch
-- item) of a seq that is a multiple of 32 writes one at the session's
-- result_gen; a replay stages the ones after the checkpoint it started
-- from at its new result generation in short transactions (like
-- segment_results, 006) and, with the switch, sets the cut: rows after
-- ckpt_after of a generation below ckpt_gen are stale. A row is valid when
-- gen <= result_gen AND (seq <= ckpt_after OR gen >= ckpt_gen); the next
-- replay deletes the others first. A session without valid checkpoints
-- (older databases, a rescored one) is replayed from its first segment.
CREATE TABLE checkpoints (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    gen    INTEGER NOT NULL,
    system TEXT    NOT NULL,
    stats  TEXT    NOT NULL,
    PRIMARY KEY (sid, seq, gen, system)
);
ALTER TABLE sessions ADD COLUMN ckpt_after INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN ckpt_gen INTEGER NOT NULL DEFAULT 0;
