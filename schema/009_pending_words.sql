-- 009_pending_words.sql — a segment's content words, durable, until they
-- move into the session's vocab and occurrences (issue 12).
--
-- A POST wrote one vocab upsert and one occurrence row per content word
-- (~15 B-tree leaves of two word-ordered tables, each a 4 KiB WAL frame
-- and later a checkpoint copy). It now writes one row here: (sid, seq,
-- the words as a JSON array). The POST (or batch item) of every 32nd seq
-- moves the session's rows into vocab and occurrences in three
-- statements (store/vocab.c, am_store_tx_history_settle), so a word's
-- leaf is written once per 32 segments; an edit, a rescore or a clear
-- settles first. Invariant: vocab and occurrences hold exactly the
-- segments without a row here; a session's history is the two together
-- (the word-history reads merge them; a POST's lookups add the pending
-- counts, which the server keeps in memory: server/live/sessions.c).
CREATE TABLE pending_words (
    sid   INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
    seq   INTEGER NOT NULL,
    words TEXT    NOT NULL,
    PRIMARY KEY (sid, seq)
) WITHOUT ROWID;
