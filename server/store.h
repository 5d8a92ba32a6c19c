/*
 * store.h — adaptmon's SQLite store (implemented in server/store/: the
 * design notes in store_int.h, all of the SQL in sql.h): one SQLite
 * database (WAL, busy_timeout, foreign keys on), numbered migrations from
 * schema/ applied at open, prepared statements, transactions.
 *
 * Data model (schema/001_init.sql … 007_segment_gaps.sql):
 *   sessions       id, options (JSON), signature, timestamps, last seq
 *                  (column segments: the highest seq given out),
 *                  version (bumped by every change: the metrics ETag),
 *                  incarnation (unique over the database's life, given at
 *                  creation from counters: a re-created id is a new one),
 *                  the current glossary version (its entries live in
 *                  glossaries since 004; the sessions.glossary column is
 *                  left NULL), custom stopwords (JSON array, NULL = none),
 *                  rewrites (PUT/DELETE of segments: replays to come),
 *                  result_gen (the generation of segment_results in force),
 *                  removed (segments deleted: the count is segments - removed;
 *                  seqs increase, with gaps where segments were deleted, 007),
 *                  settled (the seq up to which vocab and occurrences hold
 *                  the session's words, 010)
 *   glossaries     (session, version) → entries: every glossary version,
 *                  immutable (version 0 = none, no row)
 *   segments       (session, seq) → client id, body hash, request JSON,
 *                  result JSON, the glossary version it was scored with,
 *                  its content words (JSON array; read while seq > the
 *                  session's settled: pending, 010); client id unique per
 *                  session
 *   vocab          (session, word) → occ (confirmed segments containing
 *                  the word), first and last seq
 *   occurrences    (session, word, seq): which segments contain a word
 *   segment_results (session, gen, seq) → result: results a replay staged;
 *                  at the session's result_gen they replace segments.result
 *   totals         (session, system or "pair:<system>:baseline|system") →
 *                  running totals (JSON of am_totals, am_json_totals_raw)
 *   choices        (session, glossary entry, alternative) → count: the
 *                  translator's choices among a term's targets
 *   checkpoints    (session, seq, gen, totals entry) → the totals entry
 *                  after the segments up to seq, at every 32nd seq: where
 *                  a replay starts (schema/008)
 *   vocabularies, vocabulary_words: background vocabularies by name
 *   counters       name → value (the incarnation counter)
 *
 * Threading: one am_store is shared by all handler threads; every function
 * is safe to call concurrently (the store serializes access to its
 * connection(s) internally). A write transaction (am_store_tx_begin …
 * commit/rollback) holds the write lock for the calling thread until it
 * ends; only that thread may call store functions with the tx handle.
 *
 * Strings returned through out-parameters are malloc'd (caller frees).
 * Every function returns AM_OK or a negative am_err: AM_ERR_NOTFOUND,
 * AM_ERR_CONFLICT (unique key), AM_ERR_IO (SQLite error; logged with the
 * SQLite message), AM_ERR_INVALID (bad argument).
 */
#ifndef AM_STORE_H
#define AM_STORE_H

#include "am.h"

#include <stdint.h>

typedef struct am_store am_store;
typedef struct am_store_tx am_store_tx; /* a write transaction */
typedef struct am_store_rtx am_store_rtx; /* a read transaction (snapshot) */
typedef struct am_store_state am_store_state; /* a session's state, below */

/* Callback over (text, count) rows. */
typedef int (*am_store_count_fn)(void *ctx, const char *word, int64_t count);

enum am_durability {
    AM_DURABLE_NORMAL = 0, /* WAL + synchronous=NORMAL: survives a process crash */
    AM_DURABLE_FULL = 1 /* WAL + synchronous=FULL: survives power loss */
};

/* Opens (creating if needed, with parent directories) the database at
 * path and applies pending migrations. ":memory:" is allowed (tests). On
 * error *out is NULL and err holds a message. Caller closes. */
int am_store_open(const char *path, enum am_durability durability, am_store **out, am_buf *err);
/* Checkpoints the WAL (TRUNCATE) and closes. NULL-safe. */
void am_store_close(am_store *st);
/* Schema version after migrations; database file size in bytes (main file
 * plus WAL). */
int am_store_schema_version(am_store *st);
int64_t am_store_size_bytes(am_store *st);
/* Whether db names a PostgreSQL database rather than a SQLite file: a URI
 * "postgresql://…" or "postgres://…", or a libpq key=value string starting
 * "host=" (a multi-host one too: "host=a,b port=5432,5432 …"). Such a path
 * opens the PostgreSQL driver (server/store/drv_pg.c; durability is then
 * the cluster's and ignored); anything else is a SQLite file. */
int am_store_path_is_pg(const char *db);
/* Whether st is a PostgreSQL store. */
int am_store_is_pg(const am_store *st);
/* PostgreSQL: starts the probe thread (server/store/pg_sync.c: once a
 * second; the first probe runs before this returns) and, with on, from now
 * on every write fails with AM_ERR_UNAVAILABLE (503) while the cluster has
 * no synchronous standby streaming. Then it runs the open's purge of what
 * a crash left (deleted sessions' rows, unfinished vocabularies) unless
 * writes are refused. A no-op for SQLite. AM_ERR_IO when the thread cannot
 * start or the purge fails. */
int am_store_pg_require_sync(am_store *st, int on, am_buf *err);
/* 1 unless the PostgreSQL store requires a synchronous standby and the
 * last probe found none. */
int am_store_pg_sync_ok(am_store *st);

/* The cluster as the last probe saw it (PostgreSQL; issue 28 item 5): the
 * probe runs once a second in PostgreSQL mode, --pg-require-sync or not,
 * and /readyz and /metrics read this copy, never the server. */
typedef struct am_store_pg_status {
    int probed; /* 1 once a probe ran */
    int reachable; /* the last probe reached the server and read its state */
    int configured; /* synchronous_standby_names is set */
    int require; /* --pg-require-sync is on */
    int writes_ok; /* writes are accepted (am_store_pg_sync_ok) */
    int degraded; /* reachable, and fewer standbys stream than expected */
    int64_t sync; /* synchronous (sync/quorum) standbys streaming */
    int64_t streaming; /* standbys streaming for some seconds (pg_sync.c) */
    int64_t expected; /* --pg-expect-standbys, else the standbys synchronous_standby_names
                         names (the primary's own cluster_name left out) */
    int64_t lag_bytes; /* largest replay lag of a streaming standby; -1: none known */
    char missing[256]; /* the expected standbys, by name, that do not stream
                          (comma separated; "" when none or not named) */
    int64_t committers; /* group committers, each its own connection (--pg-committers) */
} am_store_pg_status;
/* Copies the last probe's answer into *out; returns out->probed (0 for
 * SQLite or before the probe started). Caller owns *out. */
int am_store_pg_status_get(am_store *st, am_store_pg_status *out);
/* The standbys the cluster is expected to stream to (--pg-expect-standbys);
 * negative: as many as synchronous_standby_names names. */
void am_store_pg_expect_standbys(am_store *st, int n);
/* The standbys a synchronous_standby_names value names, the server's own
 * cluster_name (self, may be NULL) left out, as a count, and their names
 * comma separated into names (reset first; caller owns it). "*" counts as
 * the number the rule waits for. */
int am_store_pg_ssn_expected(const char *ssn, const char *self, am_buf *names);
/* The --db value as it may be shown: a PostgreSQL URI's or key=value
 * string's password and sslpassword values replaced by "***"; a SQLite
 * path unchanged. Into out (reset first; caller owns it). */
void am_store_db_shown(const char *db, am_buf *out);
/* Replaces in msg every password value of the PostgreSQL --db string db
 * (4 bytes or longer) by "***": libpq's messages may quote parts of the
 * string. A no-op for a SQLite path. */
void am_store_db_scrub(const char *db, am_buf *msg);
/* Runs a cheap query ("SELECT 1"); AM_OK when the database answers. */
int am_store_ping(am_store *st);
/* The most database pages one committed write transaction wrote since
 * open (every write holds the single writer for a time that grows with
 * it; /metrics). */
int64_t am_store_write_pages_max(am_store *st);
/* SQLite VM steps the session purges (am_store_session_delete, and at
 * open) and the background vocabularies' word deletes
 * (am_store_vocabulary_delete, a replaced one's) ran since open: a work count, so a test can bound
 * a purge's cost per row without timing it. */
int64_t am_store_purge_steps(am_store *st);

/* ---- sessions ------------------------------------------------------------ */
typedef struct am_store_session {
    char *id;
    char *options; /* JSON object text as stored */
    char *signature;
    char *custom_stopwords; /* JSON array text or NULL */
    char *glossary; /* JSON array of entries, or NULL */
    int64_t glossary_version;
    int64_t created_at; /* Unix ms */
    int64_t updated_at; /* Unix ms */
    int64_t segments; /* number of segments (seqs have gaps: schema/007) */
    int64_t version; /* bumped on every change */
    int64_t incarnation; /* unique per creation (a re-created id differs) */
    int64_t last_seq; /* highest seq given out (>= segments; 0: none) */
} am_store_session;

/* Frees the strings of s (not s itself) and zeroes it. */
void am_store_session_clear(am_store_session *s);

/* Creates a session. AM_ERR_CONFLICT when the id exists. */
int am_store_session_create(am_store *st, const char *id, const char *options_json,
                            const char *signature, const char *custom_stopwords_json,
                            int64_t now_ms);
/* The same, with the session's first glossary (JSON array text, NULL =
 * none) as glossary version 1, in one transaction; *incarnation (may be
 * NULL) receives the new session's incarnation. AM_ERR_CONFLICT when the
 * id exists. */
int am_store_session_create_gl(am_store *st, const char *id, const char *options_json,
                               const char *signature, const char *custom_stopwords_json,
                               const char *glossary_json, int64_t now_ms, int64_t *incarnation);
/* Loads a session into *out (caller clears). AM_ERR_NOTFOUND. */
int am_store_session_get(am_store *st, const char *id, am_store_session *out);
/* Lists sessions ordered by id, those with id > after (NULL = from the
 * start), at most limit. *out is a malloc'd array of *n sessions (caller
 * clears each and frees the array). */
int am_store_session_list(am_store *st, const char *after, size_t limit, am_store_session **out,
                          size_t *n);
/* Number of sessions. */
int am_store_session_count(am_store *st, int64_t *n);
/* Deletes a session and everything that belongs to it. AM_ERR_NOTFOUND. */
int am_store_session_delete(am_store *st, const char *id);
/* Replaces the session's glossary (JSON array text; NULL removes it),
 * bumps glossary_version and version. AM_ERR_NOTFOUND. */
int am_store_glossary_put(am_store *st, const char *id, const char *glossary_json, int64_t now_ms);
/* The same, only while the session is incarnation `incarnation` (0 = any):
 * AM_ERR_NOTFOUND when it was deleted or re-created meanwhile. The new
 * version is also kept, immutable, in glossaries, and returned in
 * *new_version (may be NULL). (am_store_glossary_put keeps it too.) */
int am_store_glossary_put_if(am_store *st, const char *id, int64_t incarnation,
                             const char *glossary_json, int64_t now_ms, int64_t *new_version);

/* ---- write transactions ------------------------------------------------- */
/* BEGIN IMMEDIATE. *tx is valid until commit or rollback. */
int am_store_tx_begin(am_store *st, am_store_tx **tx);
/* COMMIT: returns after the data is durable per the store's durability. On
 * error the transaction is rolled back. */
int am_store_tx_commit(am_store_tx *tx);
void am_store_tx_rollback(am_store_tx *tx);

/* Read transactions: a snapshot of the committed state on a reader
 * connection (the writer for ":memory:"), for the am_store_tx_* read
 * functions, which take an am_store_rtx (session_state, session_info,
 * glossary_version, segment_find, segments_walk, vocab_get, totals_get,
 * background_get). A read transaction is a type of its own: the compiler
 * refuses one where a write function wants an am_store_tx. End with
 * am_store_rtx_end. */
int am_store_rtx_begin(am_store *st, am_store_rtx **rtx);
void am_store_rtx_end(am_store_rtx *rtx);
/* The reads of write transaction tx (they see its uncommitted writes), for
 * the read functions: borrowed, valid until tx ends. */
am_store_rtx *am_store_tx_reads(am_store_tx *tx);

/* Group commit: runs fn(tx, ctx) inside a write transaction shared with
 * the jobs of concurrent callers (one BEGIN IMMEDIATE ... COMMIT per batch,
 * each job in its own SAVEPOINT: a job returning non-zero is rolled back
 * alone). fn runs on whichever thread leads the batch and may only call
 * am_store_tx_* functions with tx. Returns fn's result, or the commit's
 * error (then nothing of the job was kept), and only after the batch has
 * committed (durable per the store's durability). The caller must not hold
 * a transaction. */
typedef int (*am_store_job_fn)(am_store_tx *tx, void *ctx);
int am_store_tx_group(am_store *st, am_store_job_fn fn, void *ctx);
/* am_store_tx_group for a job that writes session key (NULL: none in
 * particular). With several committers (am_store_set_committers) the jobs
 * of one key all go to the same committer, hash(key) % K, so they commit
 * in the order they were queued and never wait on each other's row locks
 * from two committers; jobs of other keys commit in parallel. */
int am_store_tx_group_on(am_store *st, const char *key, am_store_job_fn fn, void *ctx);
/* PostgreSQL: k group committers (1 to AM_STORE_COMMITTERS_MAX), each
 * with its own writer connection and batch transaction (the first commits
 * on the writer). Call before the store serves any write (at start-up: the
 * committers are replaced, not resized). SQLite keeps its single writer:
 * there k is checked and otherwise ignored. AM_ERR_INVALID for a k out of
 * range, AM_ERR_UNAVAILABLE when a connection cannot be opened (then the
 * store keeps its one committer). */
#define AM_STORE_COMMITTERS_MAX 64
int am_store_set_committers(am_store *st, size_t k, am_buf *err);
/* How many group committers the store runs. */
size_t am_store_committers(am_store *st);

/* Within a transaction: */
/* The session's highest seq and version (AM_ERR_NOTFOUND: no session). */
int am_store_tx_session_state(am_store_rtx *rtx, const char *session, int64_t *last_seq,
                              int64_t *version);
/* The same with the incarnation and the current glossary version. */
struct am_store_state {
    int64_t last_seq, version, incarnation, glossary_version;
    int64_t count; /* segments stored (last_seq less the deleted ones) */
};
int am_store_tx_session_info(am_store_rtx *rtx, const char *session, am_store_state *out);
/* am_store_session_get on the snapshot rtx: a caller that holds a read
 * snapshot reads through it, never through a second reader (lockck.h). */
int am_store_tx_session_get(am_store_rtx *rtx, const char *id, am_store_session *out);
/* Entries (JSON array text, caller frees; NULL for version 0 = no
 * glossary) of glossary version `version` of the session. AM_ERR_NOTFOUND
 * when that version was never stored. */
int am_store_tx_glossary_version(am_store_rtx *rtx, const char *session, int64_t version,
                                 char **entries_json);
/* Finds a segment by client id: its seq, body hash and result (caller
 * frees the strings; pointers may be NULL when not wanted).
 * AM_ERR_NOTFOUND when the client id is new. */
int am_store_tx_segment_find(am_store_rtx *rtx, const char *session, const char *client_id,
                             int64_t *seq, char **body_hash, char **result_json);
/* Inserts segment seq (must be last_seq + 1 for appends) and sets the
 * session's segments = max(segments, seq), updated_at, version + 1. */
int am_store_tx_segment_insert(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json, int64_t now_ms);
/* The same, recording the glossary version the result was scored with
 * (am_store_tx_segment_insert records 0) and the segment's nwords distinct
 * content words (NUL-separated in words, borrowed; NULL: none), which
 * are then pending (schema/010): part of the session's history, moved into
 * vocab and occurrences by am_store_tx_history_settle. */
int am_store_tx_segment_insert_gv(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, const char *words, size_t nwords,
                                  int64_t now_ms);
/* The same, with the segment's ?ci= statistics record (schema/013,
 * server/live/ci_stats.h; text borrowed, NULL: none recorded). */
int am_store_tx_segment_insert_st(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, const char *words, size_t nwords,
                                  const char *stats, int64_t now_ms);
/* A batch chunk's writes (server/live/batch.c): the segment row alone,
 * as am_store_tx_segment_insert_st writes it but without the session's
 * update, which am_store_tx_session_touch then makes once for the n rows
 * appended up to seq (segments = max(segments, seq), updated_at, version
 * + n: the session row ends as n single inserts leave it). In PostgreSQL
 * each statement is a round trip; a chunk saves one per segment. */
int am_store_tx_segment_append(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json,
                               int64_t glossary_version, const char *words, size_t nwords,
                               const char *stats, int64_t now_ms);
int am_store_tx_session_touch(am_store_tx *tx, const char *session, int64_t seq, int64_t n,
                              int64_t now_ms);
/* Which of the n client ids (NUL-separated in ids, borrowed) are stored in
 * the session: fn(ctx, client id, its seq) for each, in no order; one
 * statement for all (a batch chunk's idempotency check). */
int am_store_tx_segments_known(am_store_rtx *rtx, const char *session, const char *ids, size_t n,
                               am_store_count_fn fn, void *ctx);
/* Replaces the request/hash/result of an existing segment (PUT). body_hash
 * and request_json may both be NULL to keep them and replace only the
 * result (a replay recomputing later segments). */
int am_store_tx_segment_update(am_store_tx *tx, const char *session, int64_t seq,
                               const char *body_hash, const char *request_json,
                               const char *result_json, int64_t now_ms);
/* As am_store_tx_segment_update, with the ?ci= statistics record of the
 * new result (server/live/ci_stats.h; borrowed; NULL: none, as
 * am_store_tx_segment_update writes) replacing the row's. */
int am_store_tx_segment_update_st(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *body_hash, const char *request_json,
                                  const char *result_json, const char *stats, int64_t now_ms);
/* Staged results (schema/006): a replay that rewrites many stored results
 * writes them with am_store_results_stage, outside its write transaction,
 * AM_RESULT_CHUNK rows per short transaction with the writer handed over
 * between chunks; stage sets *gen to the generation they were written as
 * (the current one + 1). They are invisible until the replay's write
 * transaction calls am_store_tx_results_switch(gen); every read of a
 * result then sees, per segment, the row of the newest generation not
 * above the current one, else segments.result. A segment keeps at most two
 * rows: the current one and a spare no reader can see, which the next
 * stage rewrites in place (nothing is deleted per replay: deleting the
 * replaced rows cost as much writing as staging them).
 * am_store_results_settle(from) deletes rows above the current generation
 * (an interrupted replay's), a window of seqs at a time, when a one-row
 * check finds any; it runs before a stage. The caller holds the session's
 * lock throughout, so no other rewrite of the session interleaves. */
int am_store_results_stage(am_store *st, const char *session, int64_t *gen, size_t n,
                           const int64_t *seq, char *const *result);
/* As am_store_results_stage, each row with the ?ci= statistics record of
 * its result (schema/014): stats[i] for result[i] (borrowed; stats NULL or
 * an entry NULL: none). */
int am_store_results_stage_st(am_store *st, const char *session, int64_t *gen, size_t n,
                              const int64_t *seq, char *const *result, char *const *stats);
int am_store_tx_results_switch(am_store_tx *tx, const char *session, int64_t gen);
int am_store_results_settle(am_store *st, const char *session, int64_t from);
/* A rescore's switch (rescore.h; schema/015), in the transaction that
 * checked the session's version: the results staged as generation gen
 * (am_store_results_stage_st) and the checkpoints staged with them
 * (am_store_checkpoints_stage) become the session's, every older
 * checkpoint stale; the totals and term choices are deleted (the caller
 * writes the new ones in the same transaction), and with history set the
 * pending words of the later segment rows are settled into vocab and
 * occurrences (the caller then repairs the rows that differ:
 * am_store_tx_occ_drop, am_store_tx_occ_put, am_store_tx_vocab_set);
 * every segment counts
 * as scored with glossary_version from now on (sessions.gv_floor), the
 * session's updated_at is now_ms, its version and rewrite count bumped.
 * No segment row is written. */
int am_store_tx_rescore_switch(am_store_tx *tx, const char *session, int64_t gen,
                               int64_t glossary_version, int64_t now_ms, int history);
/* Purges the rows of the hidden session old (a sid: a deleted session's,
 * or a rescore's shadow copy an older binary left) in short transactions,
 * then its row. */
int am_store_session_purge(am_store *st, int64_t old);
/* Long rewrites with several nodes on one database (a replay after a PUT
 * or DELETE of a segment, a rescore; DESIGN-postgres §2.5 item 2). The
 * caller holds the session's in-process lock (am_sess_lock), which keeps
 * this node's other rewrites out; am_store_rewrite_begin keeps the other
 * nodes' out too. SQLite (one process owns the file): *on = st, nothing
 * else. PostgreSQL: a connection of its own is opened and pinned to the
 * rewrite (*on, a view of st: every store function given *on runs on that
 * connection), and the session's rewrite lock (a session-level advisory
 * lock keyed by its sid) is taken on it, waited for up to about 2 s;
 * hidden copies of the session that an earlier holder left (a node killed
 * mid-rescore) are purged. Every write of the rewrite — settle, staging,
 * shadow fill, switch, purge — must go through *on: if the node dies or is
 * cut off, the connection ends, the lock is released and nothing of that
 * rewrite can be written any more (it fences itself; no lease or epoch).
 * AM_ERR_NOTFOUND: no session; AM_ERR_CONFLICT: another node's rewrite
 * held the lock past the wait (nothing done: answer 503, retry later).
 * End with am_store_rewrite_end(st, *on) (closing the connection releases
 * the lock). */
int am_store_rewrite_begin(am_store *st, const char *session, am_store **on);
void am_store_rewrite_end(am_store *st, am_store *on);
/* Iterates the session's segments with seq >= from in seq order, calling
 * fn(ctx, seq, client_id, request_json); a non-zero return stops the walk
 * and is returned. */
typedef int (*am_store_segment_fn)(void *ctx, int64_t seq, const char *client_id,
                                   const char *request_json);
int am_store_tx_segments_walk(am_store_rtx *rtx, const char *session, int64_t from,
                              am_store_segment_fn fn, void *ctx);
/* The same walk, also passing each segment's recorded glossary version. */
typedef int (*am_store_segment_gv_fn)(void *ctx, int64_t seq, const char *client_id,
                                      const char *request_json, int64_t glossary_version);
int am_store_tx_segments_walk_gv(am_store_rtx *rtx, const char *session, int64_t from,
                                 am_store_segment_gv_fn fn, void *ctx);
/* occ of word before this transaction's increments (0 when absent). */
int am_store_tx_vocab_get(am_store_rtx *rtx, const char *session, const char *word, int64_t *occ);
/* occ += 1, last_seq = seq (first_seq set on insert) and records the
 * occurrence (session, word, seq). */
int am_store_tx_vocab_incr(am_store_tx *tx, const char *session, const char *word, int64_t seq);
/* A session's history written whole, for a session filled from nothing
 * (a rescore's hidden copy): the vocab row of word (occ, first_seq,
 * last_seq; the word must have none yet), and one occurrence (session,
 * word, seq) without touching vocab. Written in (word, seq) order they
 * append to the B-trees instead of updating a row per occurrence. */
int am_store_tx_vocab_put(am_store_tx *tx, const char *session, const char *word, int64_t occ,
                          int64_t first_seq, int64_t last_seq);
int am_store_tx_occ_put(am_store_tx *tx, const char *session, const char *word, int64_t seq);
/* am_store_tx_vocab_incr for each of n distinct words (NUL-separated in
 * words, borrowed), in two statements: one upsert of every vocab row and
 * one insert of every occurrence. */
int am_store_tx_vocab_incr_all(am_store_tx *tx, const char *session, const char *words, size_t n,
                               int64_t seq);
/* The pending history (schema/010): a POST's content words wait in its
 * segment's row (am_store_tx_segment_insert_gv) until the POST of every
 * --settle-every-th seq (AM_SETTLE_EVERY, or an edit, first) moves them into vocab and
 * occurrences; a session's history is the two together.
 * history_settle moves the words of every segment after the session's
 * settled seq into vocab and occurrences (as vocab_incr_all of each, in
 * seq order) and sets the settled seq to the session's last seq;
 * pending_each passes every pending word to fn(ctx, word, seq), in seq
 * order. */
int am_store_tx_history_settle(am_store_tx *tx, const char *session);
int am_store_tx_pending_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn,
                             void *ctx);
/* Passes every settled word of the session's history (vocab) with its
 * occurrence count to fn(ctx, word, occ), in no set order; a nonzero return
 * of fn stops the walk and is returned. */
int am_store_tx_vocab_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn, void *ctx);
/* fn(ctx, word, seq) for every occurrence row of the session (the settled
 * part of its history; the later words are am_store_tx_pending_each's),
 * in no particular order. */
int am_store_tx_occ_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn, void *ctx);
/* A rescore's repair of a history that differs from the one it recomputed
 * (rescore.c; after am_store_tx_rescore_switch settled the pending
 * words): occ_drop deletes the occurrence row (word, seq) and nothing
 * else; vocab_set makes the word's vocab row (occ, first_seq, last_seq),
 * or deletes it when occ is 0. */
int am_store_tx_occ_drop(am_store_tx *tx, const char *session, const char *word, int64_t seq);
int am_store_tx_vocab_set(am_store_tx *tx, const char *session, const char *word, int64_t occ,
                          int64_t first_seq, int64_t last_seq);
/* Deletes the vocab, occurrences, pending words, totals, choices and
 * checkpoints of a session (replay). */
int am_store_tx_history_clear(am_store_tx *tx, const char *session);
/* Reads/writes a system's totals JSON. get: AM_ERR_NOTFOUND when absent. */
int am_store_tx_totals_get(am_store_rtx *rtx, const char *session, const char *system,
                           char **stats_json);
int am_store_tx_totals_put(am_store_tx *tx, const char *session, const char *system,
                           const char *stats_json);
/* Background-vocabulary lookup inside a transaction (0 when absent). */
int am_store_tx_background_get(am_store_rtx *rtx, const char *name, const char *word,
                               int64_t *count);

/* Term choices: how often the translator used target alternative `alt` of
 * the glossary entry with source `entry` (both normalized text). */
int am_store_tx_choice_incr(am_store_tx *tx, const char *session, const char *entry,
                            const char *alt);
/* Deleted with the history by am_store_tx_history_clear. */

/* Editing a history in place (a replay that changed one segment's words):
 * vocab_remove takes word's occurrence at seq away (occ - 1, first/last
 * recomputed, the word gone at 0; AM_ERR_NOTFOUND when it had none there);
 * vocab_insert adds one at any seq (occ + 1, first/last widened). */
int am_store_tx_vocab_remove(am_store_tx *tx, const char *session, const char *word, int64_t seq);
int am_store_tx_vocab_insert(am_store_tx *tx, const char *session, const char *word, int64_t seq);
/* Deletes segment seq; the later ones keep their seqs (its seq stays
 * unused: schema/007), so nothing written grows with the session;
 * removed, version and rewrites + 1. The deleted segment's words must
 * have been taken away first (am_store_tx_vocab_remove); the later
 * segments' stored results (their running totals) are the caller's to
 * rewrite. AM_ERR_NOTFOUND when there is no segment seq. */
int am_store_tx_segment_delete(am_store_tx *tx, const char *session, int64_t seq, int64_t now_ms);
/* choice_add adds count to (entry, alt); a negative count (a replay
 * taking an edited segment's choices away) that leaves none deletes the
 * row. */
int am_store_tx_choice_add(am_store_tx *tx, const char *session, const char *entry, const char *alt,
                           int64_t count);

/* ---- reads (outside transactions) --------------------------------------- */
/* All recorded choices of an entry: fn(ctx, alt, count), most used first. */
int am_store_choices_each(am_store *st, const char *session, const char *entry,
                          am_store_count_fn fn, void *ctx);
/* The same on the snapshot rtx (a caller holding one reads through it,
 * never through a second reader: server/base/lockck.h); fn is called while
 * the rows are read and must not use the store. */
int am_store_tx_choices_each(am_store_rtx *rtx, const char *session, const char *entry,
                             am_store_count_fn fn, void *ctx);
/* All systems' totals of a session: fn(ctx, system, stats_json) in system
 * name order. */
typedef int (*am_store_totals_fn)(void *ctx, const char *system, const char *stats_json);
int am_store_totals_each(am_store *st, const char *session, am_store_totals_fn fn, void *ctx);

/* ---- checkpoints: where a replay starts (schema/008) --------------------- */
/* checkpoint_take: the session's totals table as it is now (in tx) becomes
 * the checkpoint at seq (the totals after every segment with seq <= seq),
 * of the session's current result generation. checkpoints_stage: a
 * replay's checkpoints (n entries: seq[i], system[i], stats[i]) at its new
 * result generation gen (am_store_results_stage), in short transactions,
 * after deleting the rows no replay may start from (an interrupted
 * replay's, those a cut made stale); they count with the switch
 * (am_store_tx_results_switch to gen). replay_reset: in the switch
 * transaction before the replay's totals are written: deletes the totals,
 * makes the checkpoints after seq `after` of generations below gen stale
 * (the cut) and bumps the session's version. checkpoint_last: the valid
 * checkpoint with the highest seq below `before` into *seq (0: none) and
 * each of its entries to fn(ctx, system, stats_json). history_upto:
 * fn(ctx, word, occ) for every word of the history counted over the
 * segments with seq <= seq (the history a replay from seq + 1 starts
 * with). */
int am_store_tx_checkpoint_take(am_store_tx *tx, const char *session, int64_t seq);
int am_store_checkpoints_stage(am_store *st, const char *session, int64_t gen, size_t n,
                               const int64_t *seq, char *const *system, char *const *stats);
int am_store_tx_replay_reset(am_store_tx *tx, const char *session, int64_t after, int64_t gen);
int am_store_tx_checkpoint_last(am_store_rtx *rtx, const char *session, int64_t before,
                                int64_t *seq, am_store_totals_fn fn, void *ctx);
int am_store_tx_history_upto(am_store_rtx *rtx, const char *session, int64_t seq,
                             am_store_count_fn fn, void *ctx);
/* The same, with the session's state (incarnation, version, …) read in
 * the same snapshot as the totals (state may be NULL). */
int am_store_totals_snapshot(am_store *st, const char *session, am_store_state *state,
                             am_store_totals_fn fn, void *ctx);
/* Segments with seq > after, at most limit, in seq order:
 * fn(ctx, seq, client_id, request_json, result_json, created_at). */
typedef int (*am_store_segrow_fn)(void *ctx, int64_t seq, const char *client_id,
                                  const char *request_json, const char *result_json,
                                  int64_t created_at);
int am_store_segments_each(am_store *st, const char *session, int64_t after, size_t limit,
                           am_store_segrow_fn fn, void *ctx);
/* The same without the requests (request_json NULL): a reader of the
 * results alone (GET …/curve) copies half the bytes. */
int am_store_results_each(am_store *st, const char *session, int64_t after, size_t limit,
                          am_store_segrow_fn fn, void *ctx);
/* The same, for one answer read a page at a time: stamp (two int64, caller
 * owned; stamp[0] = -1 before the first page) records the session's
 * incarnation and rewrite count with the first page; a later page returns
 * AM_ERR_CONFLICT, without rows, when a replay or rescore rewrote the
 * stored results (or the session was re-created) in between, so one answer
 * never mixes old and new results. */
int am_store_segments_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                              int64_t stamp[2], am_store_segrow_fn fn, void *ctx);
/* A row of am_store_stats_each_at: the segment's ?ci= statistics record
 * (schema/013) or, when it has none (stats NULL: a row stored before, or
 * whose result a PUT, replay or rescore rewrote), its request and result
 * (else both NULL). All borrowed for the call. */
typedef int (*am_store_statrow_fn)(void *ctx, int64_t seq, const char *stats,
                                   const char *request_json, const char *result_json);
/* am_store_segments_each_at's paged walk over those rows: a row with a
 * record costs its few hundred bytes, not its request and result. */
int am_store_stats_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                           int64_t stamp[2], am_store_statrow_fn fn, void *ctx);
/* One segment by client id (caller frees). AM_ERR_NOTFOUND. */
int am_store_segment_get(am_store *st, const char *session, const char *client_id, int64_t *seq,
                         char **request_json, char **result_json);
/* The same on the snapshot rtx (a caller holding one reads through it,
 * never through a second reader: server/base/lockck.h). */
int am_store_tx_segment_get(am_store_rtx *rtx, const char *session, const char *client_id,
                            int64_t *seq, char **request_json, char **result_json);
/* Where the glossary version changed along a session's segments:
 * fn(ctx, seq, version) for the first segment scored with each version other
 * than the first segment's, in seq order (versions only grow with seq, so
 * these are the points where the version differs from the previous
 * segment's). AM_ERR_NOTFOUND. */
typedef int (*am_store_gchange_fn)(void *ctx, int64_t seq, int64_t version);
int am_store_glossary_changes(am_store *st, const char *session, am_store_gchange_fn fn, void *ctx);
/* A word's history: occ, and the seqs of the segments containing it, in
 * order: fn(ctx, seq). AM_ERR_NOTFOUND when the word never occurred. */
typedef int (*am_store_seq_fn)(void *ctx, int64_t seq);
int am_store_word_history(am_store *st, const char *session, const char *word, int64_t *occ,
                          am_store_seq_fn fn, void *ctx);
/* Result JSON of the segment with this seq (caller frees). */
int am_store_segment_result(am_store *st, const char *session, int64_t seq, char **client_id,
                            char **result_json);

/* ---- background vocabularies ------------------------------------------- */
/* What a background vocabulary was counted with (schema/012). The strings
 * are owned by the struct (am_store_vocab_meta_clear frees them). */
typedef struct am_store_vocab_meta {
    int64_t words, created_at;
    char *tokenizer; /* recall tokenizer name (am_tok_name); "auto:1" for a
                      * row stored before it was recorded; NULL: a count
                      * list (the uploader's words) */
    char *lang; /* the TMX side counted; NULL: a count list */
    char *source_lang; /* the source language checked at upload, or NULL */
} am_store_vocab_meta;
void am_store_vocab_meta_clear(am_store_vocab_meta *m);

/* Replaces vocabulary name with the given words and counts (one
 * transaction). */
int am_store_vocabulary_put(am_store *st, const char *name, const char *const *words,
                            const int64_t *counts, size_t n, int64_t now_ms);
/* As am_store_vocabulary_put, recording meta's strings (borrowed; meta may
 * be NULL: nothing recorded; its words and created_at are ignored). */
int am_store_vocabulary_put_meta(am_store *st, const char *name, const char *const *words,
                                 const int64_t *counts, size_t n, int64_t now_ms,
                                 const am_store_vocab_meta *meta);
/* Size and creation time; AM_ERR_NOTFOUND. */
int am_store_vocabulary_info(am_store *st, const char *name, int64_t *words, int64_t *created_at);
/* Size, creation time and what it was counted with into *out (cleared
 * first; the caller clears it after, also on error); AM_ERR_NOTFOUND. */
int am_store_vocabulary_meta(am_store *st, const char *name, am_store_vocab_meta *out);
int am_store_vocabulary_delete(am_store *st, const char *name);
/* Every word of vocabulary name: fn(ctx, word, count); a non-zero return
 * stops the walk and is returned. AM_ERR_NOTFOUND when name is unknown. */
int am_store_vocabulary_each(am_store *st, const char *name, am_store_count_fn fn, void *ctx);

/* Caps the database at about bytes (PRAGMA max_page_count on the writer;
 * 0 = no cap): a write that would grow it past fails with AM_ERR_FULL, as
 * on a full disk. Returns AM_OK or AM_ERR_IO. */
int am_store_set_max_bytes(am_store *st, int64_t bytes);
/* Sizes the pool of read-only connections (file databases; ":memory:"
 * reads through the writer) to n, 1 to AM_STORE_READERS_MAX: call before
 * any other thread uses st (serve: --readers). Each read call or read
 * snapshot holds one reader and never a second (server/base/lockck.h), so
 * any size is safe; more readers let more reads run beside each other.
 * AM_ERR_INVALID (n out of range) or AM_ERR_IO with a message in err. */
#define AM_STORE_READERS_MAX 64
int am_store_set_readers(am_store *st, size_t n, am_buf *err);
/* Reads that found every pooled reader busy and waited, since open. */
int64_t am_store_reader_waits(am_store *st);

/* ---- backups ------------------------------------------------------------ */
/* Consistent online copy of the database into dest_path (SQLite backup
 * API), while the server keeps running. The copy gets a database id of its
 * own and the mark of an untouched backup (dbfile.h), is written as
 * dest_path.tmp, synced and renamed, and its checksum goes to
 * dest_path.sha256 (sha256sum format). */
int am_store_backup(am_store *st, const char *dest_path, am_buf *err);
/* The same from the database file at db_path (borrowed) without opening a
 * store on it: one connection that only reads (`adaptmon backup` beside a
 * running server must not write, migrate or checkpoint its database). */
int am_store_backup_path(const char *db_path, const char *dest_path, am_buf *err);
/* PRAGMA integrity_check of the closed database file at path (borrowed),
 * opened read-only and immutable (nothing is written, no side file is
 * created). AM_OK when it says "ok"; AM_ERR_PARSE with its first complaint
 * in err; AM_ERR_IO when it cannot be opened. */
int am_store_check_file(const char *path, am_buf *err);

/* ---- additions (server/store/) ------------------------------------------- */
/* Like am_store_open, with an explicit list of migration files instead of
 * the embedded ones (tests; only paths "schema/NNN_name.sql" are used, in
 * NNN order). Each migration above the database's recorded version runs in
 * its own transaction with its schema_migrations row. A database whose
 * version is newer than the highest given migration is refused
 * (AM_ERR_RANGE, message in err). */
struct am_embedded_file;
int am_store_open_ex(const char *path, enum am_durability durability,
                     const struct am_embedded_file *migrations, size_t n, am_store **out,
                     am_buf *err);
/* The schema versions the database had before and after the migrations
 * run by the open (0 before: a new database). Returns 1 when the open ran
 * at least one migration (from < to), else 0 (from == to). */
int am_store_migrated(const am_store *st, int64_t *from, int64_t *to);
/* Copies the message of the store's most recent SQLite failure (any
 * thread) into out, after resetting it: "what: sqlite message (code)". */
void am_store_last_error(am_store *st, am_buf *out);
/* Every AM_ERR_IO failure is passed to fn(ctx, message) (e.g. to log it);
 * fn may be called from any thread, one call at a time. NULL disables. */
typedef void (*am_store_log_fn)(void *ctx, const char *msg);
void am_store_set_logger(am_store *st, am_store_log_fn fn, void *ctx);
/* The write connection's PRAGMA synchronous (1 NORMAL, 2 FULL). */
int am_store_synchronous(am_store *st, int *level);
/* am_store_tx_vocab_get + am_store_tx_vocab_incr in one statement: stores
 * the word's occ before this increment in *occ_before (may be NULL). */
int am_store_tx_vocab_bump(am_store_tx *tx, const char *session, const char *word, int64_t seq,
                           int64_t *occ_before);

#endif
