-- 006_staged_results.sql — rewritten results are staged, then switched in
-- at once (a PUT replay, server/ingest.c am_replace_once).
--
-- A replay recomputes the stored result of every segment after the edited
-- one (each result embeds the running totals). Writing thousands of results
-- in one transaction held the single writer for up to ~160 ms, and every
-- other session's POST waited. Now the new results go into generation
-- `gen` of segment_results, a short transaction at a time (other writers
-- run in between); nobody reads them until one short transaction sets
-- sessions.result_gen = gen together with the history and totals. Readers
-- take a segment's result from segment_results at the session's current
-- generation when there is a row, else from segments.result. The rows are
-- then folded into segments.result and deleted, again a chunk at a time;
-- folding changes nothing a reader sees. Rows of any other generation are
-- left-overs of an interrupted replay and are deleted.
CREATE TABLE segment_results (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    gen    INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    result TEXT    NOT NULL,
    PRIMARY KEY (sid, gen, seq)
);
ALTER TABLE sessions ADD COLUMN result_gen INTEGER NOT NULL DEFAULT 0;
