-- 010_pending_in_segments.sql — a segment's pending content words move
-- from their own row (pending_words, 009) into the segment's row (issue 12).
--
-- 009 wrote one pending_words row per POST and deleted it at the settle:
-- a leaf of its own in every commit (1,000 interleaved sessions dirty a
-- different leaf each time), a 4 KiB WAL frame and later a checkpoint copy.
-- The segment row is written by the same commit anyway, so the words now go
-- there (segments.words, a JSON array of the segment's distinct content
-- words, NULL for rows written by older versions, a rescore or a replay:
-- their words are in vocab and occurrences already), and the session row,
-- also written by every commit, says how far the history is settled:
--
--   vocab and occurrences hold exactly the words of the segments with
--   seq <= sessions.settled; the words of a segment with seq > settled are
--   in its row (pending). A session's history is the two together.
--
-- The settle (the POST of every 32nd seq, an edit first, a clear) moves
-- the pending words into vocab and occurrences and sets settled to the
-- session's last seq; settled never decreases. A segment deleted while
-- pending takes its words with it; the words of an older row are never
-- read again (an edit settles first and rewrites vocab and occurrences
-- itself). Here every pending row is settled as the server does it.
ALTER TABLE segments ADD COLUMN words TEXT;
ALTER TABLE sessions ADD COLUMN settled INTEGER NOT NULL DEFAULT 0;
INSERT INTO vocab (sid, word, occ, first_seq, last_seq)
SELECT p.sid, j.value, count(*), min(p.seq), max(p.seq)
FROM pending_words p, json_each(p.words) j WHERE true GROUP BY p.sid, j.value
ON CONFLICT (sid, word) DO UPDATE
SET occ = occ + excluded.occ, first_seq = min(first_seq, excluded.first_seq),
    last_seq = max(last_seq, excluded.last_seq);
INSERT INTO occurrences (sid, word, seq)
SELECT p.sid, j.value, p.seq FROM pending_words p, json_each(p.words) j;
DROP TABLE pending_words;
UPDATE sessions SET settled = segments;
