-- 006_staged_results.sql — rewritten results are staged, then switched in
-- at once (a PUT or DELETE of a segment: server/ingest.c am_edit_once).
--
-- A replay recomputes the stored result of every segment after the edited
-- one (each result embeds the running totals). Writing thousands of results
-- in one transaction held the single writer for up to ~160 ms, and every
-- other session's POST waited. Now the new results go into generation
-- `gen` of segment_results, a short transaction at a time (other writers
-- run in between); nobody reads them until one short transaction sets
-- sessions.result_gen = gen together with the history and totals. A
-- segment's result is its row of the newest generation not above
-- result_gen, else segments.result. The rows stay in this table: copying
-- them back into the segment rows rewrote each row's request too, and
-- deleting the replaced ones cost as much as writing them; either made
-- other sessions' POST p99 3-9x worse during back-to-back replays. A
-- segment keeps at most two rows, the current one and a spare that no
-- reader can see; the next replay rewrites the spare in place. Rows of a
-- generation above result_gen (an interrupted replay's) are deleted before
-- the next replay stages (server/store.c am_store_results_settle).
CREATE TABLE segment_results (
    sid    INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    gen    INTEGER NOT NULL,
    result TEXT    NOT NULL,
    PRIMARY KEY (sid, seq, gen)
);
ALTER TABLE sessions ADD COLUMN result_gen INTEGER NOT NULL DEFAULT 0;
