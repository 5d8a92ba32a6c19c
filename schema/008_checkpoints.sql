-- 008_checkpoints.sql — running raw totals at every 32nd seq, so that the
-- replay after an edit of segment k starts at the last checkpoint before k
-- instead of segment 1 (server/ingest.c, docs/architecture.md "Replays").
--
-- A row (sid, seq, system) holds the totals entry `system` (a system, a
-- pair:… or tr:… entry) as am_json_totals_raw after every segment with a
-- seq <= seq, exactly as the totals table held it then. A checkpoint is
-- written by the POST (or batch item) of a seq that is a multiple of 32 and
-- rewritten by the replays; anything else that rewrites totals drops the
-- session's checkpoints (then the next replay starts at segment 1 and
-- writes them again). A session without checkpoints (older databases) is
-- replayed from its first segment, as before.
CREATE TABLE checkpoints (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    system TEXT    NOT NULL,
    stats  TEXT    NOT NULL,
    PRIMARY KEY (sid, seq, system)
);
