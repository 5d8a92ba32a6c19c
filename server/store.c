/*
 * store.c — adaptmon's SQLite store (see store.h). All of the service's SQL
 * lives in this file; every value coming from a request is bound, never
 * spliced into SQL text.
 *
 * Design
 * ------
 * Connections. One read-write connection (the writer) and, for file
 * databases, a small pool of read-only connections (readers). All are
 * opened in SQLite's multi-thread mode (SQLITE_OPEN_NOMUTEX): each carries
 * its own pthread mutex and is used by one thread at a time.
 *   - Every write goes through the writer under its mutex. A write
 *     transaction (am_store_tx_begin … commit/rollback) holds that mutex
 *     from BEGIN IMMEDIATE to COMMIT/ROLLBACK, so writers are serialized in
 *     the process and never see SQLITE_BUSY from each other.
 *   - Reads outside transactions take any free reader (try-lock round
 *     robin, else wait for one). In WAL mode a reader sees the last
 *     committed state and never waits for the writer, so GETs are not
 *     blocked by long write transactions. Readers see committed data only,
 *     including when called by the thread that holds an open transaction.
 *   - ":memory:" databases are private to one connection, so they have no
 *     readers: reads then use the writer under its mutex.
 * The writer's mutex is recursive: a thread holding a transaction may call
 * the non-transactional write functions (session_create, glossary_put, …);
 * they then run inside its transaction (multi-statement ones inside a
 * SAVEPOINT) and become durable with its commit. Only one transaction per
 * thread: a nested am_store_tx_begin returns AM_ERR_INVALID.
 *
 * Statements. Each connection prepares a statement on first use
 * (SQLITE_PREPARE_PERSISTENT) and keeps it; after every use it is reset and
 * its bindings cleared. A statement that is still stepping (a walk whose
 * callback calls back into the store) is not reused: a temporary copy is
 * prepared and finalized for the nested use.
 *
 * Callbacks. Functions that report rows through callbacks collect small
 * results first and call back after releasing the connection, so a
 * callback may call the store (totals_each, segments_each, word_history).
 * am_store_tx_segments_walk and am_store_vocabulary_each stream (their
 * results can be large): the walk's callback may call the am_store_tx_*
 * functions of its transaction; vocabulary_each's callback must not call
 * the store.
 *
 * Durability. WAL with synchronous=NORMAL (AM_DURABLE_NORMAL: a commit
 * survives a process crash) or FULL (AM_DURABLE_FULL: also power loss);
 * foreign_keys=ON; busy_timeout 5000 ms (other processes, e.g. a backup
 * tool, may hold locks briefly).
 *
 * Checkpoints. The writer does not checkpoint (wal_autocheckpoint=0): its
 * WAL hook tells a checkpointer thread, which has its own connection with
 * the writer's synchronous setting, when the WAL holds AM_CKPT_PAGES
 * pages, and that thread runs a PASSIVE checkpoint (it never blocks the
 * writer or the readers). So a commit never waits for a checkpoint and its
 * fsyncs, and the larger interval writes a page dirtied by many commits
 * back to the database once. A WAL fully copied back is restarted from its
 * beginning by the next write transaction (SQLite does this itself). If the
 * WAL still reaches AM_CKPT_HARD_PAGES, the writer checkpoints itself.
 *
 * Migrations. schema/NNN_name.sql files embedded in the binary
 * (embedded.h) are applied at open, in NNN order, those above the highest
 * version recorded in schema_migrations, each in its own BEGIN IMMEDIATE
 * transaction together with its schema_migrations row. A database whose
 * recorded version is above the highest embedded one is refused. Migration
 * files must not contain transaction statements; they run with foreign keys
 * on (a table rebuild needs PRAGMA defer_foreign_keys=ON inside it).
 *
 * Hot path. A POST's transaction touches rows by primary key only: the
 * session's sid is looked up once per transaction and cached; vocab is an
 * upsert on (sid, word); occurrences, totals and segments are keyed inserts
 * or upserts. Upserts avoid RETURNING, which would open a statement journal
 * (a 64 KiB allocation) per statement.
 *
 * Errors. Every SQLite failure is mapped to an am_err (unique or primary
 * key violation: AM_ERR_CONFLICT; foreign key: AM_ERR_NOTFOUND; NOT NULL or
 * CHECK: AM_ERR_INVALID; SQLITE_FULL — disk full, or the max_page_count of
 * am_store_set_max_bytes reached: AM_ERR_FULL; anything else: AM_ERR_IO)
 * and its message ("what: sqlite message (extended code)") is kept;
 * am_store_last_error copies the most recent one, and AM_ERR_IO and
 * AM_ERR_FULL failures are passed to the logger set with
 * am_store_set_logger.
 */
#include "store.h"

#include "clock.h"
#include "dbfile.h"
#include "embedded.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AM_STORE_READERS 4
#define AM_STORE_BUSY_MS 5000
#define AM_CKPT_PAGES 8192 /* WAL pages (32 MiB at 4 KiB) between checkpoints */
#define AM_CKPT_GAP_MS 50 /* at least this long between two checkpoints */
#define AM_CKPT_HARD_PAGES (4 * AM_CKPT_PAGES) /* the writer checkpoints itself */

/* ---- statements ----------------------------------------------------------- */

/* The current glossary is the glossaries row of the session's version: the
 * sessions row keeps no copy (schema/004), so a POST's read of the row's
 * counters never walks the glossary text's overflow pages. */
#define AM_SESSION_COLS                                                                            \
    "id, options, signature, custom_stopwords, "                                                   \
    "(SELECT g.entries FROM glossaries g WHERE g.sid = sessions.sid "                              \
    "AND g.version = sessions.glossary_version), glossary_version, created_at, "                   \
    "updated_at, segments - removed, version, incarnation, segments"

/* A segment's result: its row of the newest generation not above the
 * session's current one in segment_results when there is one, else
 * segments.result (schema/006). Used with the segments table aliased s and
 * ?1 = sid. */
#define AM_RESULT_COL                                                                              \
    "coalesce((SELECT r.result FROM segment_results r WHERE r.sid = s.sid AND r.seq = s.seq "      \
    "AND r.gen <= (SELECT result_gen FROM sessions WHERE sid = ?1) ORDER BY r.gen DESC LIMIT 1), " \
    "s.result)"
#define AM_RESULT_JOIN " FROM segments s "

/* A checkpoint row c of session s that a replay may start from
 * (schema/008). */
#define AM_CKPT_VALID "(c.gen <= s.result_gen AND (c.seq <= s.ckpt_after OR c.gen >= s.ckpt_gen))"

/* X(name, sql): every statement store.c runs after open. */
#define AM_STMTS(X)                                                                                \
    X(BEGIN_IMM, "BEGIN IMMEDIATE")                                                                \
    X(COMMIT, "COMMIT")                                                                            \
    X(ROLLBACK, "ROLLBACK")                                                                        \
    X(SAVEPOINT, "SAVEPOINT am_nested")                                                            \
    X(RELEASE, "RELEASE am_nested")                                                                \
    X(ROLLBACK_TO, "ROLLBACK TO am_nested")                                                        \
    X(PING, "SELECT max(version) FROM schema_migrations")                                          \
    X(PAGE_COUNT, "PRAGMA page_count")                                                             \
    X(PAGE_SIZE, "PRAGMA page_size")                                                               \
    X(SYNCHRONOUS, "PRAGMA synchronous")                                                           \
    X(MIG_MAX, "SELECT coalesce(max(version), 0) FROM schema_migrations")                          \
    X(MIG_INSERT, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)") \
    X(SID, "SELECT sid FROM sessions WHERE id = ?1")                                               \
    X(SESSION_INSERT, "INSERT INTO sessions (id, options, signature, custom_stopwords, "           \
                      "created_at, updated_at, incarnation) VALUES (?1, ?2, ?3, ?4, ?5, ?5, "      \
                      "(SELECT value FROM counters WHERE name = 'incarnation'))")                  \
    X(INCARNATION_NEXT, "UPDATE counters SET value = value + 1 WHERE name = 'incarnation'")        \
    X(INCARNATION_CUR, "SELECT value FROM counters WHERE name = 'incarnation'")                    \
    X(SESSION_GET, "SELECT " AM_SESSION_COLS " FROM sessions WHERE id = ?1")                       \
    X(SESSION_LIST_FIRST,                                                                          \
      "SELECT " AM_SESSION_COLS " FROM sessions WHERE id < '~' ORDER BY id LIMIT ?1")              \
    X(SESSION_LIST_AFTER, "SELECT " AM_SESSION_COLS " FROM sessions WHERE id > ?1 AND id < '~' "   \
                          "ORDER BY id LIMIT ?2")                                                  \
    X(SESSION_COUNT, "SELECT count(*) FROM sessions WHERE id < '~'")                               \
    X(SESSION_HIDE, "UPDATE sessions SET id = '~del~' || sid WHERE id = ?1 RETURNING sid")         \
    X(SESSION_HIDDEN, "SELECT sid FROM sessions WHERE id >= '~' ORDER BY sid LIMIT 64")            \
    X(PURGE_SEGMENTS, "DELETE FROM segments WHERE rowid IN "                                       \
                      "(SELECT rowid FROM segments WHERE sid = ?1 LIMIT ?2)")                      \
    X(PURGE_RESULTS, "DELETE FROM segment_results WHERE rowid IN "                                 \
                     "(SELECT rowid FROM segment_results WHERE sid = ?1 LIMIT ?2)")                \
    X(PURGE_CHECKPOINTS, "DELETE FROM checkpoints WHERE rowid IN "                                 \
                         "(SELECT rowid FROM checkpoints WHERE sid = ?1 LIMIT ?2)")                \
    X(PURGE_GLOSSARIES, "DELETE FROM glossaries WHERE rowid IN "                                   \
                        "(SELECT rowid FROM glossaries WHERE sid = ?1 LIMIT ?2)")                  \
    X(PURGE_VOCAB, "DELETE FROM vocab WHERE sid = ?1 AND word <= ?2")                              \
    X(PURGE_VOCAB_TO, "SELECT word FROM (SELECT word FROM vocab WHERE sid = ?1 ORDER BY word "     \
                      "LIMIT ?2) ORDER BY word DESC LIMIT 1")                                      \
    X(PURGE_OCC, "DELETE FROM occurrences WHERE sid = ?1 AND (word, seq) <= (?2, ?3)")             \
    X(PURGE_OCC_TO, "SELECT word, seq FROM (SELECT word, seq FROM occurrences WHERE sid = ?1 "     \
                    "ORDER BY word, seq LIMIT ?2) ORDER BY word DESC, seq DESC LIMIT 1")           \
    X(PURGE_TOTALS, "DELETE FROM totals WHERE sid = ?1 AND system <= ?2")                          \
    X(PURGE_TOTALS_TO, "SELECT system FROM (SELECT system FROM totals WHERE sid = ?1 ORDER BY "    \
                       "system LIMIT ?2) ORDER BY system DESC LIMIT 1")                            \
    X(PURGE_CHOICES, "DELETE FROM choices WHERE sid = ?1 AND (entry, alt) <= (?2, ?3)")            \
    X(PURGE_CHOICES_TO, "SELECT entry, alt FROM (SELECT entry, alt FROM choices WHERE sid = ?1 "   \
                        "ORDER BY entry, alt LIMIT ?2) ORDER BY entry DESC, alt DESC LIMIT 1")     \
    X(PURGE_SESSION, "DELETE FROM sessions WHERE sid = ?1")                                        \
    X(SHADOW_NEW, "INSERT INTO sessions (id, options, signature, custom_stopwords, "               \
                  "glossary_version, created_at, updated_at, segments, version, incarnation, "     \
                  "rewrites, removed) SELECT '~new~' || sid || '~' || ?2, options, signature, "    \
                  "custom_stopwords, glossary_version, created_at, updated_at, 0, version, "       \
                  "incarnation, rewrites, removed FROM sessions WHERE id = ?1 RETURNING id")       \
    X(SHADOW_GLOSSARIES, "INSERT INTO glossaries (sid, version, entries, created_at) "             \
                         "SELECT ?2, version, entries, created_at FROM glossaries WHERE sid = ?1") \
    X(SHADOW_SEGMENT, "INSERT INTO segments (sid, seq, client_id, body_hash, request, result, "    \
                      "created_at, updated_at, glossary_version) SELECT ?2, seq, client_id, "      \
                      "body_hash, request, ?4, created_at, ?5, ?6 FROM segments "                  \
                      "WHERE sid = ?1 AND seq = ?3")                                               \
    X(SHADOW_HIDE_OLD, "UPDATE sessions SET id = '~del~' || sid WHERE id = ?1 "                    \
                       "RETURNING sid, version, rewrites, segments")                               \
    X(SHADOW_TAKE_OVER,                                                                            \
      "UPDATE sessions SET id = ?2, version = ?3, rewrites = ?4, segments = ?5, "                  \
      "updated_at = ?6 WHERE id = ?1")                                                             \
    X(GLOSSARY_PUT, "UPDATE sessions SET glossary_version = glossary_version + 1, "                \
                    "version = version + 1, updated_at = ?2 WHERE id = ?1 "                        \
                    "AND (?3 = 0 OR incarnation = ?3)")                                            \
    X(GLOSSARY_KEEP, "INSERT INTO glossaries (sid, version, entries, created_at) "                 \
                     "SELECT sid, glossary_version, ?2, updated_at FROM sessions "                 \
                     "WHERE id = ?1")                                                              \
    X(GLOSSARY_VERSION, "SELECT entries FROM glossaries WHERE sid = ?1 AND version = ?2")          \
    X(GLOSSARY_CUR, "SELECT glossary_version FROM sessions WHERE id = ?1")                         \
    X(SESSION_STATE, "SELECT sid, segments, version, incarnation, glossary_version, "              \
                     "segments - removed FROM sessions WHERE id = ?1")                             \
    X(SESSION_TOUCH, "UPDATE sessions SET segments = max(segments, ?2), updated_at = ?3, "         \
                     "version = version + 1 WHERE sid = ?1")                                       \
    X(SESSION_BUMP, "UPDATE sessions SET version = version + 1, rewrites = rewrites + 1 "          \
                    "WHERE sid = ?1")                                                              \
    X(SESSION_STAMP, "SELECT incarnation, rewrites FROM sessions WHERE sid = ?1")                  \
    X(SEG_FIND, "SELECT s.seq, s.body_hash, " AM_RESULT_COL AM_RESULT_JOIN                         \
                "WHERE s.sid = ?1 AND s.client_id = ?2")                                           \
    X(SEG_INSERT, "INSERT INTO segments (sid, seq, client_id, body_hash, request, result, "        \
                  "created_at, updated_at, glossary_version) "                                     \
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)")                                   \
    X(SEG_UPDATE, "UPDATE segments SET body_hash = COALESCE(?3, body_hash), "                      \
                  "request = COALESCE(?4, request), result = ?5, "                                 \
                  "updated_at = ?6 WHERE sid = ?1 AND seq = ?2")                                   \
    X(SEG_WALK, "SELECT seq, client_id, request, glossary_version FROM segments "                  \
                "WHERE sid = ?1 AND seq >= ?2 "                                                    \
                "ORDER BY seq")                                                                    \
    X(SEG_EACH,                                                                                    \
      "SELECT s.seq, s.client_id, s.request, " AM_RESULT_COL ", s.created_at" AM_RESULT_JOIN       \
      "WHERE s.sid = ?1 AND s.seq > ?2 ORDER BY s.seq LIMIT ?3")                                   \
    X(SEG_GET, "SELECT s.seq, s.request, " AM_RESULT_COL AM_RESULT_JOIN                            \
               "WHERE s.sid = ?1 AND s.client_id = ?2")                                            \
    X(SEG_RESULT,                                                                                  \
      "SELECT s.client_id, " AM_RESULT_COL AM_RESULT_JOIN "WHERE s.sid = ?1 AND s.seq = ?2")       \
    X(RESULT_GEN, "SELECT result_gen FROM sessions WHERE sid = ?1")                                \
    X(RESULT_STAGE, "INSERT INTO segment_results (sid, gen, seq, result) VALUES (?1, ?2, ?3, ?4)") \
    X(RESULT_REUSE,                                                                                \
      "UPDATE segment_results SET gen = ?2, result = ?4 WHERE rowid = (SELECT r.rowid FROM "       \
      "segment_results r WHERE r.sid = ?1 AND r.seq = ?3 AND (r.gen > ?5 OR r.gen < (SELECT "      \
      "max(n.gen) FROM segment_results n WHERE n.sid = ?1 AND n.seq = ?3 AND n.gen <= ?5)) "       \
      "LIMIT 1)")                                                                                  \
    X(RESULT_ABANDONED, "SELECT 1 FROM segment_results WHERE sid = ?1 AND gen > ?2 LIMIT 1")       \
    X(RESULT_SWITCH, "UPDATE sessions SET result_gen = ?2 WHERE sid = ?1")                         \
    X(RESULT_STALE_DEL,                                                                            \
      "DELETE FROM segment_results WHERE rowid IN (SELECT r.rowid FROM segment_results r "         \
      "WHERE r.sid = ?1 AND r.seq >= ?3 AND r.seq < ?4 AND (r.gen > ?2 OR (SELECT count(*) FROM "  \
      "segment_results n WHERE n.sid = r.sid AND n.seq = r.seq AND n.gen > r.gen AND "             \
      "n.gen <= ?2) >= 2))")                                                                       \
    X(RESULT_MAX_SEQ, "SELECT coalesce(max(seq), 0) FROM segment_results WHERE sid = ?1")          \
    X(RESULT_CLEAR, "DELETE FROM segment_results WHERE sid = ?1")                                  \
    X(SEG_GLOSSARY_CHANGES,                                                                        \
      "WITH RECURSIVE v(version) AS (SELECT min(glossary_version) FROM segments WHERE sid = ?1 "   \
      "UNION ALL SELECT (SELECT min(glossary_version) FROM segments WHERE sid = ?1 "               \
      "AND glossary_version > v.version) FROM v WHERE v.version IS NOT NULL) "                     \
      "SELECT (SELECT min(seq) FROM segments WHERE sid = ?1 AND glossary_version = v.version) "    \
      "AS first, version FROM v WHERE version IS NOT NULL ORDER BY first, version")                \
    X(VOCAB_GET, "SELECT occ FROM vocab WHERE sid = ?1 AND word = ?2")                             \
    X(VOCAB_UPSERT, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                     \
                    "VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (sid, word) DO UPDATE "                \
                    "SET occ = occ + 1, last_seq = excluded.last_seq")                             \
    X(OCC_INSERT, "INSERT INTO occurrences (sid, word, seq) VALUES (?1, ?2, ?3)")                  \
    X(VOCAB_UPSERT_ALL, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                 \
                        "SELECT ?1, value, 1, ?3, ?3 FROM json_each(?2) WHERE true "               \
                        "ON CONFLICT (sid, word) DO UPDATE "                                       \
                        "SET occ = occ + 1, last_seq = excluded.last_seq")                         \
    X(OCC_INSERT_ALL, "INSERT INTO occurrences (sid, word, seq) "                                  \
                      "SELECT ?1, value, ?3 FROM json_each(?2)")                                   \
    X(OCC_SEQS, "SELECT seq FROM occurrences WHERE sid = ?1 AND word = ?2 ORDER BY seq")           \
    X(VOCAB_CLEAR, "DELETE FROM vocab WHERE sid = ?1")                                             \
    X(OCC_CLEAR, "DELETE FROM occurrences WHERE sid = ?1")                                         \
    X(TOTALS_CLEAR, "DELETE FROM totals WHERE sid = ?1")                                           \
    X(CHOICE_INCR, "INSERT INTO choices (sid, entry, alt, count) VALUES (?1, ?2, ?3, 1) "          \
                   "ON CONFLICT (sid, entry, alt) DO UPDATE SET count = count + 1")                \
    X(CHOICE_CLEAR, "DELETE FROM choices WHERE sid = ?1")                                          \
    X(CHOICE_ADD, "INSERT INTO choices (sid, entry, alt, count) VALUES (?1, ?2, ?3, ?4) "          \
                  "ON CONFLICT (sid, entry, alt) DO UPDATE SET count = count + excluded.count")    \
    X(OCC_DELETE, "DELETE FROM occurrences WHERE sid = ?1 AND word = ?2 AND seq = ?3")             \
    X(VOCAB_SHRINK,                                                                                \
      "UPDATE vocab SET occ = occ - 1, "                                                           \
      "first_seq = coalesce((SELECT min(seq) FROM occurrences WHERE sid = ?1 AND word = ?2), 0), " \
      "last_seq = coalesce((SELECT max(seq) FROM occurrences WHERE sid = ?1 AND word = ?2), 0) "   \
      "WHERE sid = ?1 AND word = ?2")                                                              \
    X(VOCAB_DROP_EMPTY, "DELETE FROM vocab WHERE sid = ?1 AND word = ?2 AND occ <= 0")             \
    X(VOCAB_WIDEN, "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "                      \
                   "VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (sid, word) DO UPDATE "                 \
                   "SET occ = occ + 1, first_seq = min(first_seq, excluded.first_seq), "           \
                   "last_seq = max(last_seq, excluded.last_seq)")                                  \
    X(SEG_DELETE, "DELETE FROM segments WHERE sid = ?1 AND seq = ?2")                              \
    X(SESSION_SHRINK, "UPDATE sessions SET removed = removed + 1, updated_at = ?2, "               \
                      "version = version + 1, rewrites = rewrites + 1 WHERE sid = ?1")             \
    X(CHOICE_EACH, "SELECT alt, count FROM choices WHERE sid = ?1 AND entry = ?2 "                 \
                   "ORDER BY count DESC, alt")                                                     \
    X(TOTALS_GET, "SELECT stats FROM totals WHERE sid = ?1 AND system = ?2")                       \
    X(TOTALS_PUT, "INSERT INTO totals (sid, system, stats) VALUES (?1, ?2, ?3) "                   \
                  "ON CONFLICT (sid, system) DO UPDATE SET stats = excluded.stats")                \
    X(TOTALS_EACH, "SELECT system, stats FROM totals WHERE sid = ?1 ORDER BY system")              \
    X(CKPT_TAKE, "INSERT OR REPLACE INTO checkpoints (sid, seq, gen, system, stats) "              \
                 "SELECT t.sid, ?2, s.result_gen, t.system, t.stats FROM totals t "                \
                 "JOIN sessions s ON s.sid = t.sid WHERE t.sid = ?1")                              \
    X(CKPT_LAST, "SELECT c.seq, c.gen FROM checkpoints c JOIN sessions s ON s.sid = c.sid "        \
                 "WHERE c.sid = ?1 AND c.seq < ?2 AND " AM_CKPT_VALID                              \
                 " ORDER BY c.seq DESC, c.gen DESC LIMIT 1")                                       \
    X(CKPT_EACH, "SELECT system, stats FROM checkpoints WHERE sid = ?1 AND seq = ?2 AND gen = ?3") \
    X(CKPT_STAGE, "INSERT OR REPLACE INTO checkpoints (sid, seq, gen, system, stats) "             \
                  "VALUES (?1, ?2, ?3, ?4, ?5)")                                                   \
    X(CKPT_SETTLE,                                                                                 \
      "DELETE FROM checkpoints WHERE rowid IN (SELECT c.rowid FROM checkpoints c "                 \
      "JOIN sessions s ON s.sid = c.sid WHERE c.sid = ?1 AND NOT " AM_CKPT_VALID " LIMIT ?2)")     \
    X(CKPT_CUT, "UPDATE sessions SET ckpt_after = ?2, ckpt_gen = ?3 WHERE sid = ?1")               \
    X(CKPT_CLEAR, "DELETE FROM checkpoints WHERE sid = ?1")                                        \
    X(OCC_UPTO, "SELECT word, count(*) FROM occurrences WHERE sid = ?1 AND seq <= ?2 "             \
                "GROUP BY word")                                                                   \
    X(CHOICE_DROP_EMPTY, "DELETE FROM choices WHERE sid = ?1 AND entry = ?2 AND alt = ?3 "         \
                         "AND count <= 0")                                                         \
    X(BG_GET, "SELECT w.count FROM vocabularies v JOIN vocabulary_words w ON w.vid = v.vid "       \
              "WHERE v.name = ?1 AND w.word = ?2")                                                 \
    X(VOCABULARY_DELETE, "DELETE FROM vocabularies WHERE name = ?1")                               \
    X(VOCABULARY_INSERT,                                                                           \
      "INSERT INTO vocabularies (name, words, created_at) VALUES (?1, 0, ?2) RETURNING vid")       \
    X(VOCABULARY_WORD, "INSERT INTO vocabulary_words (vid, word, count) VALUES (?1, ?2, ?3) "      \
                       "ON CONFLICT (vid, word) DO UPDATE SET count = count + excluded.count")     \
    X(VOCABULARY_SIZE, "UPDATE vocabularies SET words = (SELECT count(*) FROM vocabulary_words "   \
                       "WHERE vid = ?1) WHERE vid = ?1")                                           \
    X(VOCABULARY_INFO, "SELECT words, created_at FROM vocabularies WHERE name = ?1")               \
    X(VOCABULARY_VID, "SELECT vid FROM vocabularies WHERE name = ?1")                              \
    X(VOCABULARY_EACH, "SELECT word, count FROM vocabulary_words WHERE vid = ?1 ORDER BY word")    \
    X(VOCABULARY_RENAME, "UPDATE vocabularies SET name = ?2 WHERE vid = ?1")                       \
    X(VOCABULARY_DROP_VID, "DELETE FROM vocabularies WHERE vid = ?1")                              \
    X(VOCABULARY_WORDS_CHUNK, "DELETE FROM vocabulary_words WHERE vid = ?1 AND word IN "           \
                              "(SELECT word FROM vocabulary_words WHERE vid = ?1 LIMIT ?2)")       \
    X(VOCABULARY_HIDDEN, "SELECT vid FROM vocabularies WHERE substr(name, 1, 1) = '~'")

enum am_stmt_id {
#define AM_STMT_ENUM(name, sql) AM_S_##name,
    AM_STMTS(AM_STMT_ENUM)
#undef AM_STMT_ENUM
        AM_S__COUNT
};

static const char *const am_stmt_sql[AM_S__COUNT] = {
#define AM_STMT_SQL(name, sql) sql,
    AM_STMTS(AM_STMT_SQL)
#undef AM_STMT_SQL
};

/* Statement names for error messages. */
static const char *const am_stmt_name[AM_S__COUNT] = {
#define AM_STMT_NAME(name, sql) #name,
    AM_STMTS(AM_STMT_NAME)
#undef AM_STMT_NAME
};

/* ---- types ---------------------------------------------------------------- */

typedef struct am_conn {
    sqlite3 *db;
    pthread_mutex_t mu;
    sqlite3_stmt *stmt[AM_S__COUNT]; /* prepared on first use */
} am_conn;

struct am_store_tx {
    am_store *st;
    am_conn *c; /* the writer, or a reader for a read transaction */
    am_buf sess; /* session id whose sid is cached in sid ("" = none) */
    int64_t sid;
    int has_sid;
};

struct am_store {
    char *path;
    int memory;
    enum am_durability durability;
    int schema_version;
    am_conn w; /* writer; w.mu is recursive */
    atomic_int w_waiting; /* threads blocked in am_w_lock (see am_w_handoff) */
    int64_t w_pages0; /* guarded by w.mu: pages written when the open write began */
    atomic_llong w_pages_max; /* most pages one write transaction wrote */
    int in_tx; /* guarded by w.mu: a write transaction is open */
    int nested; /* guarded by w.mu: depth of nested writes inside it */
    am_store_tx tx; /* the open transaction (one at a time) */
    am_conn *r; /* readers (none for ":memory:") */
    size_t nr;
    atomic_uint next_reader;
    pthread_mutex_t errmu;
    am_buf errmsg; /* guarded by errmu */
    /* group commit (am_store_tx_group): queued jobs and the batch leader */
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    struct am_gjob *ghead, **gtail; /* guarded by gmu */
    int gleader; /* guarded by gmu: a batch is running */
    am_store_log_fn logfn;
    void *logctx;
    /* the checkpointer (file databases): its connection and thread */
    am_conn ck;
    pthread_t ck_thread;
    int ck_running, ck_opened;
    pthread_mutex_t ckmu;
    pthread_cond_t ckcv;
    int ck_pages; /* guarded by ckmu: WAL size reported by the last commit */
    int ck_stop; /* guarded by ckmu */
    atomic_uint_fast64_t hidden_seq; /* names of staged/dropped vocabularies */
    atomic_llong purge_steps; /* VM steps of session purges (am_store_purge_steps) */
};

/* A bound statement in use: the cached one or a temporary copy. */
typedef struct am_q {
    am_conn *c;
    enum am_stmt_id id;
    sqlite3_stmt *s;
} am_q;

/* ---- errors --------------------------------------------------------------- */

static void am_store_note(am_store *st, int code, const char *msg)
{
    pthread_mutex_lock(&st->errmu);
    am_buf_reset(&st->errmsg);
    am_buf_appends(&st->errmsg, msg);
    am_store_log_fn fn = st->logfn;
    void *ctx = st->logctx;
    if (fn && (code == AM_ERR_IO || code == AM_ERR_FULL))
        fn(ctx, msg);
    pthread_mutex_unlock(&st->errmu);
}

/* Maps the connection's last error to an am_err and records its message.
 * Call before the connection runs anything else. */
static int am_db_fail(am_store *st, sqlite3 *db, const char *what)
{
    int ext = sqlite3_extended_errcode(db);
    int code;
    switch (ext) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY: code = AM_ERR_CONFLICT; break;
    case SQLITE_CONSTRAINT_FOREIGNKEY: code = AM_ERR_NOTFOUND; break;
    case SQLITE_CONSTRAINT_NOTNULL:
    case SQLITE_CONSTRAINT_CHECK: code = AM_ERR_INVALID; break;
    default: code = (ext & 0xff) == SQLITE_FULL ? AM_ERR_FULL : AM_ERR_IO;
    }
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s (%d)", what, sqlite3_errmsg(db), ext);
    am_store_note(st, code, msg);
    return code;
}

void am_store_last_error(am_store *st, am_buf *out)
{
    am_buf_reset(out);
    if (!st)
        return;
    pthread_mutex_lock(&st->errmu);
    am_buf_append(out, am_buf_str(&st->errmsg), st->errmsg.len);
    pthread_mutex_unlock(&st->errmu);
}

void am_store_set_logger(am_store *st, am_store_log_fn fn, void *ctx)
{
    pthread_mutex_lock(&st->errmu);
    st->logfn = fn;
    st->logctx = ctx;
    pthread_mutex_unlock(&st->errmu);
}

/* ---- statements in use ---------------------------------------------------- */

/* Takes statement id of connection c and binds the arguments described by
 * fmt: 't' const char * (NULL binds NULL), 'i' int64_t. */
static int am_q_vopen(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt,
                      va_list ap)
{
    sqlite3_stmt *s = c->stmt[id];
    if (!s || sqlite3_stmt_busy(s)) {
        sqlite3_stmt *fresh = NULL;
        int rc = sqlite3_prepare_v3(c->db, am_stmt_sql[id], -1, s ? 0 : SQLITE_PREPARE_PERSISTENT,
                                    &fresh, NULL);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(fresh);
            q->s = NULL;
            return am_db_fail(st, c->db, am_stmt_name[id]);
        }
        if (!s)
            c->stmt[id] = fresh;
        s = fresh;
    }
    q->c = c;
    q->id = id;
    q->s = s;
    int rc = SQLITE_OK;
    for (int i = 1; *fmt && rc == SQLITE_OK; fmt++, i++) {
        if (*fmt == 't') {
            const char *v = va_arg(ap, const char *);
            rc = v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
        } else {
            assert(*fmt == 'i');
            rc = sqlite3_bind_int64(s, i, va_arg(ap, int64_t));
        }
    }
    if (rc != SQLITE_OK) {
        int err = am_db_fail(st, c->db, am_stmt_name[id]);
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        if (s != c->stmt[id])
            sqlite3_finalize(s);
        q->s = NULL;
        return err;
    }
    return AM_OK;
}

static int am_q_open(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = am_q_vopen(st, c, id, q, fmt, ap);
    va_end(ap);
    return rc;
}

/* Steps q: 1 for a row, 0 when done, a negative am_err on failure. */
static int am_q_step(am_store *st, am_q *q)
{
    int rc = sqlite3_step(q->s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return am_db_fail(st, q->c->db, am_stmt_name[q->id]);
}

/* Releases q: resets a cached statement, finalizes a temporary one. */
static void am_q_close(am_q *q)
{
    if (!q->s)
        return;
    if (q->s == q->c->stmt[q->id]) {
        sqlite3_reset(q->s);
        sqlite3_clear_bindings(q->s);
    } else {
        sqlite3_finalize(q->s);
    }
    q->s = NULL;
}

/* Pages the connection has written to the database (its WAL) so far. */
static int64_t am_pages_written(sqlite3 *db)
{
    int cur = 0, hi = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
    return cur;
}

/* Runs a statement that returns no rows (or whose rows are ignored). */
static int am_exec(am_store *st, am_conn *c, enum am_stmt_id id, const char *fmt, ...)
{
    am_q q;
    va_list ap;
    va_start(ap, fmt);
    int rc = am_q_vopen(st, c, id, &q, fmt, ap);
    va_end(ap);
    if (rc)
        return rc;
    if (c == &st->w && id == AM_S_BEGIN_IMM)
        st->w_pages0 = am_pages_written(c->db);
    rc = am_q_step(st, &q);
    if (rc > 0)
        rc = AM_OK;
    am_q_close(&q);
    if (c == &st->w && id == AM_S_COMMIT && rc == AM_OK) {
        /* how long a write holds the writer grows with the pages it writes
         * (rows changed would miss the ones a foreign key cascade deletes) */
        long long n = (long long)(am_pages_written(c->db) - st->w_pages0);
        long long m = atomic_load(&st->w_pages_max);
        while (n > m && !atomic_compare_exchange_weak(&st->w_pages_max, &m, n))
            ;
    }
    return rc;
}

int64_t am_store_write_pages_max(am_store *st)
{
    return (int64_t)atomic_load(&st->w_pages_max);
}

int64_t am_store_purge_steps(am_store *st)
{
    return (int64_t)atomic_load(&st->purge_steps);
}

static char *am_col_str(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    if (!t)
        return NULL;
    return am_xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i));
}

/* ---- connections ---------------------------------------------------------- */

static void am_conn_close(am_conn *c)
{
    if (!c->db)
        return;
    for (int i = 0; i < AM_S__COUNT; i++)
        sqlite3_finalize(c->stmt[i]);
    memset(c->stmt, 0, sizeof c->stmt);
    sqlite3_close(c->db);
    c->db = NULL;
}

static int am_conn_open(am_conn *c, const char *path, int flags, int recursive, am_buf *err)
{
    memset(c, 0, sizeof *c);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    if (recursive)
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    int rc = sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        am_buf_printf(err, "cannot open database %s: %s", path,
                      c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
        sqlite3_close(c->db);
        c->db = NULL;
        return AM_ERR_IO;
    }
    sqlite3_extended_result_codes(c->db, 1);
    sqlite3_busy_timeout(c->db, AM_STORE_BUSY_MS);
    return AM_OK;
}

/* Runs constant SQL (pragmas, migrations) on c. */
static int am_conn_exec(am_conn *c, const char *sql, am_buf *err, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        am_buf_printf(err, "%s: %s", what, msg ? msg : sqlite3_errmsg(c->db));
        sqlite3_free(msg);
        return AM_ERR_IO;
    }
    return AM_OK;
}

/* Reads one integer with constant SQL. */
static int am_conn_int(am_conn *c, const char *sql, int64_t *out)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(c->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(s, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_OK ? AM_OK : AM_ERR_IO;
}

/* A reader for one read call; release with am_reader_put. */
static am_conn *am_reader_get(am_store *st)
{
    if (st->nr == 0) {
        pthread_mutex_lock(&st->w.mu);
        return &st->w;
    }
    unsigned start = atomic_fetch_add_explicit(&st->next_reader, 1, memory_order_relaxed);
    for (size_t i = 0; i < st->nr; i++) {
        am_conn *c = &st->r[(start + i) % st->nr];
        if (pthread_mutex_trylock(&c->mu) == 0)
            return c;
    }
    am_conn *c = &st->r[start % st->nr];
    pthread_mutex_lock(&c->mu);
    return c;
}

static void am_reader_put(am_conn *c)
{
    pthread_mutex_unlock(&c->mu);
}

/* Groups several reads into one snapshot (SAVEPOINT works inside the
 * writer's open transaction too, for ":memory:"). */
static int am_read_begin(am_store *st, am_conn *c)
{
    return am_exec(st, c, AM_S_SAVEPOINT, "");
}

static void am_read_end(am_store *st, am_conn *c)
{
    if (am_exec(st, c, AM_S_RELEASE, "") != AM_OK && !sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Looks up a session's sid on connection c. */
static int am_sid(am_store *st, am_conn *c, const char *id, int64_t *sid)
{
    am_q q;
    int rc = am_q_open(st, c, AM_S_SID, &q, "t", id);
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        *sid = sqlite3_column_int64(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

/* ---- writes outside transactions ------------------------------------------ */

/* Locks the writer. Single statements then run in autocommit mode (or in
 * the caller's own open transaction). */
static void am_w_lock(am_store *st)
{
    atomic_fetch_add(&st->w_waiting, 1);
    pthread_mutex_lock(&st->w.mu);
    atomic_fetch_sub(&st->w_waiting, 1);
}

/* Between the steps of a long chunked write (vocabulary upload and drop):
 * the writer mutex is not fair, and a thread that unlocks and locks again
 * at once usually wins it back, so other writers (the group commit) could
 * wait for the whole upload. Waits, at most about 10 ms, until the threads
 * waiting for the writer have had it. Called with the writer unlocked. */
static void am_w_handoff(am_store *st)
{
    for (int i = 0; i < 200 && atomic_load(&st->w_waiting) > 0; i++) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

static void am_w_unlock(am_store *st)
{
    pthread_mutex_unlock(&st->w.mu);
}

/* Locks the writer and starts a multi-statement write: BEGIN IMMEDIATE, or
 * a SAVEPOINT inside the calling thread's open transaction. */
static int am_w_begin(am_store *st)
{
    am_w_lock(st);
    int rc;
    if (st->in_tx) {
        rc = am_exec(st, &st->w, AM_S_SAVEPOINT, "");
        if (rc == AM_OK)
            st->nested++;
    } else {
        rc = am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
    }
    if (rc)
        am_w_unlock(st);
    return rc;
}

/* Ends what am_w_begin started: commits when rc is AM_OK, else rolls back.
 * Returns rc, or the commit's error. Unlocks the writer. */
static int am_w_end(am_store *st, int rc)
{
    am_conn *c = &st->w;
    if (st->in_tx) {
        st->nested--;
        if (rc != AM_OK)
            am_exec(st, c, AM_S_ROLLBACK_TO, "");
        int r2 = am_exec(st, c, AM_S_RELEASE, "");
        if (rc == AM_OK)
            rc = r2;
    } else if (rc == AM_OK) {
        rc = am_exec(st, c, AM_S_COMMIT, "");
        if (rc != AM_OK && !sqlite3_get_autocommit(c->db))
            am_exec(st, c, AM_S_ROLLBACK, "");
    } else if (!sqlite3_get_autocommit(c->db)) {
        am_exec(st, c, AM_S_ROLLBACK, "");
    }
    am_w_unlock(st);
    return rc;
}

/* ---- open / close --------------------------------------------------------- */

typedef struct am_migration {
    int version;
    const am_embedded_file *file;
} am_migration;

static int am_migration_cmp(const void *a, const void *b)
{
    const am_migration *x = a, *y = b;
    return (x->version > y->version) - (x->version < y->version);
}

/* Collects the migrations among files ("schema/NNN_name.sql") in version
 * order into a malloc'd array. */
static int am_migrations_collect(const am_embedded_file *files, size_t nfiles, am_migration **out,
                                 size_t *n, am_buf *err)
{
    am_migration *v = am_xcalloc(nfiles ? nfiles : 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < nfiles; i++) {
        const char *p = files[i].path;
        size_t len = strlen(p);
        if (strncmp(p, "schema/", 7) != 0 || len < 11 || strcmp(p + len - 4, ".sql") != 0)
            continue;
        const char *d = p + 7;
        long ver = 0;
        size_t nd = 0;
        while (d[nd] >= '0' && d[nd] <= '9' && nd < 9)
            ver = ver * 10 + (d[nd++] - '0');
        if (nd == 0 || ver <= 0 || (d[nd] != '_' && d[nd] != '.')) {
            am_buf_printf(err, "migration %s: name must be schema/NNN_name.sql", p);
            free(v);
            return AM_ERR_INVALID;
        }
        v[k].version = (int)ver;
        v[k].file = &files[i];
        k++;
    }
    qsort(v, k, sizeof *v, am_migration_cmp);
    for (size_t i = 1; i < k; i++)
        if (v[i].version == v[i - 1].version) {
            am_buf_printf(err, "migrations %s and %s have the same version", v[i - 1].file->path,
                          v[i].file->path);
            free(v);
            return AM_ERR_INVALID;
        }
    *out = v;
    *n = k;
    return AM_OK;
}

/* Current recorded schema version (inside the caller's transaction). */
static int am_migrated_version(am_store *st, int64_t *v)
{
    am_q q;
    int rc = am_q_open(st, &st->w, AM_S_MIG_MAX, &q, "");
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        *v = sqlite3_column_int64(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_INTERNAL;
    }
    am_q_close(&q);
    return rc;
}

static int am_migrate(am_store *st, const am_embedded_file *files, size_t nfiles, am_buf *err)
{
    am_migration *m;
    size_t nm;
    int rc = am_migrations_collect(files, nfiles, &m, &nm, err);
    if (rc)
        return rc;
    int known = nm ? m[nm - 1].version : 0;
    rc = am_conn_exec(&st->w,
                      "CREATE TABLE IF NOT EXISTS schema_migrations ("
                      " version INTEGER PRIMARY KEY,"
                      " name TEXT NOT NULL,"
                      " applied_at INTEGER NOT NULL)",
                      err, "cannot create schema_migrations");
    int64_t cur = 0;
    for (size_t i = 0; rc == AM_OK; i++) {
        /* Each step re-reads the version inside its own transaction, so
         * two processes opening the same database cannot both apply a
         * migration. */
        rc = am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
        if (rc == AM_OK)
            rc = am_migrated_version(st, &cur);
        if (rc) {
            am_buf err2;
            am_buf_init(&err2);
            am_store_last_error(st, &err2);
            am_buf_printf(err, "cannot read the schema version: %s", am_buf_str(&err2));
            am_buf_cleanup(&err2);
            break;
        }
        if (cur > known) {
            am_buf_printf(err,
                          "database schema version %lld is newer than this adaptmon supports "
                          "(%d); use a newer adaptmon or restore a backup",
                          (long long)cur, known);
            rc = AM_ERR_RANGE;
            break;
        }
        while (i < nm && m[i].version <= cur)
            i++;
        if (i >= nm)
            break;
        char what[256];
        snprintf(what, sizeof what, "migration %s failed", m[i].file->path);
        rc = am_conn_exec(&st->w, (const char *)m[i].file->data, err, what);
        if (rc == AM_OK) {
            rc = am_exec(st, &st->w, AM_S_MIG_INSERT, "iti", (int64_t)m[i].version, m[i].file->path,
                         am_now_ms());
            if (rc == AM_OK)
                rc = am_exec(st, &st->w, AM_S_COMMIT, "");
            if (rc) {
                am_buf err2;
                am_buf_init(&err2);
                am_store_last_error(st, &err2);
                am_buf_printf(err, "%s: %s", what, am_buf_str(&err2));
                am_buf_cleanup(&err2);
            }
        }
        cur = m[i].version;
    }
    if (!sqlite3_get_autocommit(st->w.db)) {
        /* Read-only check finished (nothing to apply) or a failure. */
        if (rc == AM_OK)
            rc = am_exec(st, &st->w, AM_S_COMMIT, "");
        if (!sqlite3_get_autocommit(st->w.db))
            sqlite3_exec(st->w.db, "ROLLBACK", NULL, NULL, NULL);
    }
    if (rc == AM_OK)
        st->schema_version = (int)cur;
    free(m);
    return rc;
}

/* ---- checkpoints ------------------------------------------------------------ */

/* The writer's WAL hook: runs after each commit with the WAL's size. When
 * the checkpointer falls behind (a writer committing faster than it copies),
 * the writer checkpoints itself, as SQLite's automatic checkpoint would:
 * the back pressure that bounds the WAL. */
static int am_wal_hook(void *ctx, sqlite3 *db, const char *name, int pages)
{
    am_store *st = ctx;
    if (pages >= AM_CKPT_HARD_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&st->ckmu);
    st->ck_pages = pages;
    if (pages >= AM_CKPT_PAGES)
        pthread_cond_signal(&st->ckcv);
    pthread_mutex_unlock(&st->ckmu);
    return SQLITE_OK;
}

static void *am_ckpt_main(void *arg)
{
    am_store *st = arg;
    pthread_mutex_lock(&st->ckmu);
    for (;;) {
        while (!st->ck_stop && st->ck_pages < AM_CKPT_PAGES)
            pthread_cond_wait(&st->ckcv, &st->ckmu);
        if (st->ck_stop)
            break;
        st->ck_pages = 0; /* the next commit reports the WAL's size again */
        pthread_mutex_unlock(&st->ckmu);
        /* the bulk of the copy runs beside the writer; then, with the
         * writer held between two transactions, the frames committed
         * meanwhile: the WAL is then wholly in the database and the next
         * write transaction can restart it (otherwise it would only grow) */
        int rc = sqlite3_wal_checkpoint_v2(st->ck.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        if (rc == SQLITE_OK) {
            am_w_lock(st);
            rc = sqlite3_wal_checkpoint_v2(st->ck.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
            am_w_unlock(st);
        }
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            am_db_fail(st, st->ck.db, "checkpoint"); /* logged; the next one retries */
        /* a WAL that readers keep from restarting stays above the
         * threshold: pace the retries */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += AM_CKPT_GAP_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&st->ckmu);
        while (!st->ck_stop && pthread_cond_timedwait(&st->ckcv, &st->ckmu, &ts) == 0) {
        }
    }
    pthread_mutex_unlock(&st->ckmu);
    return NULL;
}

/* Opens the checkpointer's connection and starts its thread, and turns the
 * writer's automatic checkpoints off. */
static int am_ckpt_start(am_store *st, am_buf *err)
{
    int rc = am_conn_open(&st->ck, st->path, SQLITE_OPEN_READWRITE, 0, err);
    st->ck_opened = 1; /* its mutex exists even if the open failed */
    if (rc == AM_OK)
        rc = am_conn_exec(&st->ck,
                          st->durability == AM_DURABLE_FULL ? "PRAGMA synchronous=FULL"
                                                            : "PRAGMA synchronous=NORMAL",
                          err, "cannot set synchronous");
    if (rc != AM_OK)
        return rc;
    if (pthread_create(&st->ck_thread, NULL, am_ckpt_main, st) != 0) {
        am_buf_printf(err, "cannot start the checkpoint thread");
        return AM_ERR_IO;
    }
    st->ck_running = 1;
    sqlite3_wal_hook(st->w.db, am_wal_hook, st);
    return AM_OK;
}

static void am_ckpt_stop(am_store *st)
{
    if (st->ck_running) {
        if (st->w.db)
            sqlite3_wal_hook(st->w.db, NULL, NULL);
        pthread_mutex_lock(&st->ckmu);
        st->ck_stop = 1;
        pthread_cond_signal(&st->ckcv);
        pthread_mutex_unlock(&st->ckmu);
        pthread_join(st->ck_thread, NULL);
        st->ck_running = 0;
    }
    am_conn_close(&st->ck);
}

static void am_store_free(am_store *st)
{
    am_ckpt_stop(st);
    if (st->ck_opened)
        pthread_mutex_destroy(&st->ck.mu);
    pthread_mutex_destroy(&st->ckmu);
    pthread_cond_destroy(&st->ckcv);
    for (size_t i = 0; i < st->nr; i++) {
        am_conn_close(&st->r[i]);
        pthread_mutex_destroy(&st->r[i].mu);
    }
    free(st->r);
    am_conn_close(&st->w);
    pthread_mutex_destroy(&st->w.mu);
    pthread_mutex_destroy(&st->errmu);
    pthread_mutex_destroy(&st->gmu);
    pthread_cond_destroy(&st->gcv);
    am_buf_cleanup(&st->errmsg);
    am_buf_cleanup(&st->tx.sess);
    free(st->path);
    free(st);
}

static int vocab_cleanup(am_store *st);
static int am_tx_sid(am_store_tx *tx, const char *session, int64_t *sid);
static int sessions_purge_hidden(am_store *st);

int am_store_open_ex(const char *path, enum am_durability durability,
                     const struct am_embedded_file *migrations, size_t n, am_store **out,
                     am_buf *err)
{
    *out = NULL;
    if (!path || !*path || (durability != AM_DURABLE_NORMAL && durability != AM_DURABLE_FULL)) {
        am_buf_printf(err, "invalid database path or durability");
        return AM_ERR_INVALID;
    }
    am_store *st = am_xcalloc(1, sizeof *st);
    st->path = am_xstrdup(path);
    st->memory = strcmp(path, ":memory:") == 0;
    st->durability = durability;
    st->tx.st = st;
    st->tx.c = &st->w;
    pthread_mutex_init(&st->gmu, NULL);
    pthread_cond_init(&st->gcv, NULL);
    pthread_mutex_init(&st->ckmu, NULL);
    pthread_cond_init(&st->ckcv, NULL);
    st->gtail = &st->ghead;
    am_buf_init(&st->errmsg);
    am_buf_init(&st->tx.sess);
    pthread_mutex_init(&st->errmu, NULL);
    atomic_init(&st->next_reader, 0);

    int rc = st->memory ? AM_OK : am_dbfile_mkdir_parents(path, err);
    if (rc == AM_OK)
        rc = am_conn_open(&st->w, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1, err);
    else
        pthread_mutex_init(&st->w.mu, NULL);
    if (rc == AM_OK && !st->memory) {
        char *mode = NULL;
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(st->w.db, "PRAGMA journal_mode=WAL", -1, &s, NULL) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW)
            mode = am_col_str(s, 0);
        if (!mode || strcmp(mode, "wal") != 0) {
            am_buf_printf(err, "cannot switch %s to WAL mode: %s", path,
                          mode ? mode : sqlite3_errmsg(st->w.db));
            rc = AM_ERR_IO;
        }
        free(mode);
        sqlite3_finalize(s);
    }
    if (rc == AM_OK)
        rc = am_conn_exec(&st->w,
                          durability == AM_DURABLE_FULL ? "PRAGMA synchronous=FULL"
                                                        : "PRAGMA synchronous=NORMAL",
                          err, "cannot set synchronous");
    if (rc == AM_OK)
        rc = am_conn_exec(&st->w, "PRAGMA foreign_keys=ON", err, "cannot enable foreign keys");
    if (rc == AM_OK) {
        int64_t fk = 0;
        if (am_conn_int(&st->w, "PRAGMA foreign_keys", &fk) != AM_OK || fk != 1) {
            am_buf_printf(err, "this SQLite does not enforce foreign keys");
            rc = AM_ERR_IO;
        }
    }
    if (rc == AM_OK)
        rc = am_migrate(st, migrations, n, err);
    if (rc == AM_OK && vocab_cleanup(st) != AM_OK) {
        am_buf_printf(err, "deleting unfinished background vocabularies failed");
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && sessions_purge_hidden(st) != AM_OK) {
        am_buf_printf(err, "purging the rows of deleted sessions failed");
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && !st->memory)
        rc = am_ckpt_start(st, err);
    if (rc == AM_OK && !st->memory) {
        st->r = am_xcalloc(AM_STORE_READERS, sizeof *st->r);
        for (size_t i = 0; i < AM_STORE_READERS && rc == AM_OK; i++) {
            rc = am_conn_open(&st->r[i], path, SQLITE_OPEN_READONLY, 0, err);
            st->nr++; /* its mutex exists even if the open failed */
        }
    }
    if (rc != AM_OK) {
        am_store_free(st);
        return rc;
    }
    *out = st;
    return AM_OK;
}

int am_store_open(const char *path, enum am_durability durability, am_store **out, am_buf *err)
{
    size_t n;
    const am_embedded_file *files = am_embedded_files(&n);
    return am_store_open_ex(path, durability, files, n, out, err);
}

void am_store_close(am_store *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nr; i++)
        am_conn_close(&st->r[i]);
    am_ckpt_stop(st);
    if (st->w.db && !st->memory)
        sqlite3_wal_checkpoint_v2(st->w.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    am_store_free(st);
}

int am_store_schema_version(am_store *st)
{
    return st->schema_version;
}

int64_t am_store_size_bytes(am_store *st)
{
    if (st->memory) {
        int64_t pages = 0, size = 0;
        am_w_lock(st);
        int rc = am_conn_int(&st->w, "PRAGMA page_count", &pages);
        if (rc == AM_OK)
            rc = am_conn_int(&st->w, "PRAGMA page_size", &size);
        am_w_unlock(st);
        return rc == AM_OK ? pages * size : 0;
    }
    int64_t total = 0;
    struct stat sb;
    if (stat(st->path, &sb) == 0)
        total += (int64_t)sb.st_size;
    size_t len = strlen(st->path);
    char *wal = am_xmalloc(len + 5);
    memcpy(wal, st->path, len);
    memcpy(wal + len, "-wal", 5);
    if (stat(wal, &sb) == 0)
        total += (int64_t)sb.st_size;
    free(wal);
    return total;
}

int am_store_set_max_bytes(am_store *st, int64_t bytes)
{
    if (bytes <= 0 || st->memory)
        return AM_OK;
    am_w_lock(st);
    int64_t page = 0, got = 0;
    int rc = am_conn_int(&st->w, "PRAGMA page_size", &page);
    if (rc == AM_OK && page > 0) {
        char sql[64];
        int64_t pages = bytes / page > 0 ? bytes / page : 1;
        snprintf(sql, sizeof sql, "PRAGMA max_page_count = %lld", (long long)pages);
        rc = am_conn_int(&st->w, sql, &got);
    }
    am_w_unlock(st);
    return rc;
}

int am_store_ping(am_store *st)
{
    am_conn *c = am_reader_get(st);
    int rc = am_exec(st, c, AM_S_PING, "");
    am_reader_put(c);
    return rc;
}

int am_store_synchronous(am_store *st, int *level)
{
    am_w_lock(st);
    am_q q;
    int rc = am_q_open(st, &st->w, AM_S_SYNCHRONOUS, &q, "");
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            *level = sqlite3_column_int(q.s, 0);
            rc = AM_OK;
        } else if (rc == 0) {
            rc = AM_ERR_INTERNAL;
        }
        am_q_close(&q);
    }
    am_w_unlock(st);
    return rc;
}

/* ---- sessions ------------------------------------------------------------- */

void am_store_session_clear(am_store_session *s)
{
    if (!s)
        return;
    free(s->id);
    free(s->options);
    free(s->signature);
    free(s->custom_stopwords);
    free(s->glossary);
    memset(s, 0, sizeof *s);
}

static void am_session_row(sqlite3_stmt *s, am_store_session *out)
{
    out->id = am_col_str(s, 0);
    out->options = am_col_str(s, 1);
    out->signature = am_col_str(s, 2);
    out->custom_stopwords = am_col_str(s, 3);
    out->glossary = am_col_str(s, 4);
    out->glossary_version = sqlite3_column_int64(s, 5);
    out->created_at = sqlite3_column_int64(s, 6);
    out->updated_at = sqlite3_column_int64(s, 7);
    out->segments = sqlite3_column_int64(s, 8);
    out->version = sqlite3_column_int64(s, 9);
    out->incarnation = sqlite3_column_int64(s, 10);
    out->last_seq = sqlite3_column_int64(s, 11);
}

int am_store_session_create(am_store *st, const char *id, const char *options_json,
                            const char *signature, const char *custom_stopwords_json,
                            int64_t now_ms)
{
    return am_store_session_create_gl(st, id, options_json, signature, custom_stopwords_json, NULL,
                                      now_ms, NULL);
}

/* The glossary's new version row (GLOSSARY_KEEP: the only copy of its
 * text, glossary_json, borrowed, NULL for none) after GLOSSARY_PUT changed
 * the session; inside the caller's am_w_begin. */
static int am_glossary_keep(am_store *st, const char *id, const char *glossary_json)
{
    return am_exec(st, &st->w, AM_S_GLOSSARY_KEEP, "tt", id, glossary_json);
}

int am_store_session_create_gl(am_store *st, const char *id, const char *options_json,
                               const char *signature, const char *custom_stopwords_json,
                               const char *glossary_json, int64_t now_ms, int64_t *incarnation)
{
    if (!id || !options_json || !signature)
        return AM_ERR_INVALID;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_exec(st, &st->w, AM_S_INCARNATION_NEXT, "");
    if (rc == AM_OK && incarnation) {
        am_q q;
        rc = am_q_open(st, &st->w, AM_S_INCARNATION_CUR, &q, "");
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                *incarnation = sqlite3_column_int64(q.s, 0);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_INTERNAL;
            }
            am_q_close(&q);
        }
    }
    if (rc == AM_OK)
        rc = am_exec(st, &st->w, AM_S_SESSION_INSERT, "tttti", id, options_json, signature,
                     custom_stopwords_json, now_ms);
    if (rc == AM_OK && glossary_json) {
        rc = am_exec(st, &st->w, AM_S_GLOSSARY_PUT, "tii", id, now_ms, (int64_t)0);
        if (rc == AM_OK)
            rc = am_glossary_keep(st, id, glossary_json);
    }
    return am_w_end(st, rc);
}

int am_store_session_get(am_store *st, const char *id, am_store_session *out)
{
    memset(out, 0, sizeof *out);
    if (!id)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    am_q q;
    int rc = am_q_open(st, c, AM_S_SESSION_GET, &q, "t", id);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            am_session_row(q.s, out);
            rc = AM_OK;
        } else if (rc == 0) {
            rc = AM_ERR_NOTFOUND;
        }
        am_q_close(&q);
    }
    am_reader_put(c);
    return rc;
}

int am_store_session_list(am_store *st, const char *after, size_t limit, am_store_session **out,
                          size_t *n)
{
    *out = NULL;
    *n = 0;
    if (limit == 0)
        return AM_OK;
    int64_t lim = limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
    am_conn *c = am_reader_get(st);
    am_q q;
    int rc = after ? am_q_open(st, c, AM_S_SESSION_LIST_AFTER, &q, "ti", after, lim)
                   : am_q_open(st, c, AM_S_SESSION_LIST_FIRST, &q, "i", lim);
    am_store_session *v = NULL;
    size_t k = 0, cap = 0;
    if (rc == AM_OK) {
        while ((rc = am_q_step(st, &q)) > 0) {
            if (k == cap) {
                cap = cap ? 2 * cap : 16;
                v = am_xrealloc(v, cap * sizeof *v);
            }
            am_session_row(q.s, &v[k++]);
        }
        am_q_close(&q);
    }
    am_reader_put(c);
    if (rc < 0) {
        for (size_t i = 0; i < k; i++)
            am_store_session_clear(&v[i]);
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return AM_OK;
}

int am_store_session_count(am_store *st, int64_t *n)
{
    am_conn *c = am_reader_get(st);
    am_q q;
    int rc = am_q_open(st, c, AM_S_SESSION_COUNT, &q, "");
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            *n = sqlite3_column_int64(q.s, 0);
            rc = AM_OK;
        } else if (rc == 0) {
            rc = AM_ERR_INTERNAL;
        }
        am_q_close(&q);
    }
    am_reader_put(c);
    return rc;
}

/* Deleting a session: one short transaction renames it to a hidden id
 * ("~del~<sid>": no valid id starts with '~', and every listing and count
 * stops below '~'), so it is gone for every reader and writer, and its id
 * is free, at once. Its rows are then purged AM_PURGE_CHUNK at a time per
 * short transaction, the writer handed over in between, and the sessions
 * row last: one cascading DELETE of a 30,000-segment session held the
 * writer, and every other session's POST, for 1.3 s. Hidden sessions left
 * by a crash are purged at open. */
#define AM_PURGE_CHUNK 512

/* The key of the last of the first chunk rows of a WITHOUT ROWID table in
 * the session (its _TO statement) bound as ?2.. of the purge statement,
 * which deletes up to it by a key range: a chunk walks its own rows only
 * ("WHERE (sid, k) IN (SELECT … LIMIT n)" walked every remaining row of
 * the session per chunk: quadratic). Returns AM_OK or an error; *more 0
 * when nothing was left. Adds the VM steps to purge_steps. */
static int purge_chunk_keyed(am_store *st, enum am_stmt_id to, enum am_stmt_id del, int64_t sid,
                             int64_t chunk, int *more)
{
    *more = 0;
    am_q b;
    int rc = am_q_open(st, &st->w, to, &b, "ii", sid, chunk);
    if (rc)
        return rc;
    rc = am_q_step(st, &b);
    if (rc > 0) {
        am_q d;
        rc = am_q_open(st, &st->w, del, &d, "i", sid);
        for (int k = 0; rc == AM_OK && k < sqlite3_column_count(b.s); k++)
            if (sqlite3_bind_value(d.s, k + 2, sqlite3_column_value(b.s, k)) != SQLITE_OK)
                rc = am_db_fail(st, st->w.db, am_stmt_name[del]);
        if (rc == AM_OK) {
            rc = am_q_step(st, &d);
            rc = rc > 0 ? AM_OK : rc;
            *more = rc == AM_OK && sqlite3_changes(st->w.db) > 0;
            atomic_fetch_add(&st->purge_steps,
                             (long long)sqlite3_stmt_status(d.s, SQLITE_STMTSTATUS_VM_STEP, 1));
        }
        if (d.s)
            am_q_close(&d);
    }
    rc = rc > 0 ? AM_OK : rc;
    atomic_fetch_add(&st->purge_steps,
                     (long long)sqlite3_stmt_status(b.s, SQLITE_STMTSTATUS_VM_STEP, 1));
    am_q_close(&b);
    return rc;
}

static int session_purge(am_store *st, int64_t sid)
{
    static const enum am_stmt_id steps[] = {
        AM_S_PURGE_RESULTS, AM_S_PURGE_SEGMENTS, AM_S_PURGE_OCC,         AM_S_PURGE_VOCAB,
        AM_S_PURGE_CHOICES, AM_S_PURGE_TOTALS,   AM_S_PURGE_CHECKPOINTS, AM_S_PURGE_GLOSSARIES};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0];) {
        int rc = am_w_begin(st);
        if (rc)
            return rc;
        /* segment rows are large (request and result texts): fewer a time */
        int64_t chunk = steps[i] == AM_S_PURGE_RESULTS || steps[i] == AM_S_PURGE_SEGMENTS
                            ? AM_PURGE_CHUNK / 4
                            : AM_PURGE_CHUNK;
        enum am_stmt_id to = steps[i] == AM_S_PURGE_OCC       ? AM_S_PURGE_OCC_TO
                             : steps[i] == AM_S_PURGE_VOCAB   ? AM_S_PURGE_VOCAB_TO
                             : steps[i] == AM_S_PURGE_CHOICES ? AM_S_PURGE_CHOICES_TO
                             : steps[i] == AM_S_PURGE_TOTALS  ? AM_S_PURGE_TOTALS_TO
                                                              : steps[i];
        int more = 0;
        if (to != steps[i]) {
            rc = purge_chunk_keyed(st, to, steps[i], sid, chunk, &more);
        } else {
            am_q q;
            rc = am_q_open(st, &st->w, steps[i], &q, "ii", sid, chunk);
            if (rc == AM_OK) {
                rc = am_q_step(st, &q);
                rc = rc > 0 ? AM_OK : rc;
                more = rc == AM_OK && sqlite3_changes(st->w.db) > 0;
                atomic_fetch_add(&st->purge_steps,
                                 (long long)sqlite3_stmt_status(q.s, SQLITE_STMTSTATUS_VM_STEP, 1));
                am_q_close(&q);
            }
        }
        rc = am_w_end(st, rc);
        if (rc)
            return rc;
        if (!more)
            i++;
        am_w_handoff(st);
    }
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    return am_w_end(st, am_exec(st, &st->w, AM_S_PURGE_SESSION, "i", sid));
}

int am_store_session_delete(am_store *st, const char *id)
{
    if (!id)
        return AM_ERR_INVALID;
    int64_t sid = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(st, &st->w, AM_S_SESSION_HIDE, &q, "t", id);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0)
            sid = sqlite3_column_int64(q.s, 0);
        rc = rc > 0 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
        am_q_close(&q);
    }
    int nested = st->in_tx;
    if (nested) {
        st->tx.has_sid = 0; /* the transaction's cached sid is gone */
        if (rc == AM_OK) /* inside the caller's transaction: all at once */
            rc = am_exec(st, &st->w, AM_S_PURGE_SESSION, "i", sid);
    }
    rc = am_w_end(st, rc);
    if (rc == AM_OK && !nested)
        rc = session_purge(st, sid);
    return rc;
}

int am_store_session_purge(am_store *st, int64_t handle)
{
    return session_purge(st, handle);
}

void am_store_handoff(am_store *st)
{
    am_w_handoff(st);
}

/* ---- shadow copies (a rescore) ------------------------------------------- */

int am_store_shadow_begin(am_store *st, const char *session, char **shadow_id)
{
    *shadow_id = NULL;
    if (!session)
        return AM_ERR_INVALID;
    char tag[32];
    snprintf(tag, sizeof tag, "%llu", (unsigned long long)atomic_fetch_add(&st->hidden_seq, 1));
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    int64_t sid = 0, shadow = 0;
    rc = am_sid(st, &st->w, session, &sid);
    am_q q;
    if (rc == AM_OK)
        rc = am_q_open(st, &st->w, AM_S_SHADOW_NEW, &q, "tt", session, tag);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0)
            *shadow_id = am_col_str(q.s, 0);
        rc = rc > 0 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
        am_q_close(&q);
    }
    if (rc == AM_OK)
        rc = am_sid(st, &st->w, *shadow_id, &shadow);
    if (rc == AM_OK)
        rc = am_exec(st, &st->w, AM_S_SHADOW_GLOSSARIES, "ii", sid, shadow);
    rc = am_w_end(st, rc);
    if (rc) {
        free(*shadow_id);
        *shadow_id = NULL;
    }
    return rc;
}

int am_store_tx_shadow_segment(am_store_tx *tx, const char *session, const char *shadow_id,
                               int64_t seq, const char *result_json, int64_t glossary_version,
                               int64_t now_ms)
{
    if (!result_json)
        return AM_ERR_INVALID;
    int64_t sid, shadow;
    int rc = am_sid(tx->st, tx->c, session, &sid);
    if (rc == AM_OK)
        rc = am_tx_sid(tx, shadow_id, &shadow);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SHADOW_SEGMENT, "iiitii", sid, shadow, seq, result_json,
                     now_ms, glossary_version);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) != 1)
        rc = AM_ERR_NOTFOUND;
    return rc;
}

int am_store_tx_shadow_swap(am_store_tx *tx, const char *session, const char *shadow_id,
                            int64_t now_ms, int64_t *old)
{
    am_store *st = tx->st;
    am_q q;
    int64_t version = 0, rewrites = 0, segments = 0;
    int rc = am_q_open(st, tx->c, AM_S_SHADOW_HIDE_OLD, &q, "t", session);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            *old = sqlite3_column_int64(q.s, 0);
            version = sqlite3_column_int64(q.s, 1);
            rewrites = sqlite3_column_int64(q.s, 2);
            segments = sqlite3_column_int64(q.s, 3);
        }
        rc = rc > 0 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
        am_q_close(&q);
    }
    tx->has_sid = 0; /* the cached sid of session is now the old one's */
    if (rc == AM_OK)
        rc = am_exec(st, tx->c, AM_S_SHADOW_TAKE_OVER, "ttiiii", shadow_id, session, version + 1,
                     rewrites + 1, segments, now_ms);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) != 1)
        rc = AM_ERR_NOTFOUND;
    return rc;
}

int am_store_shadow_drop(am_store *st, const char *shadow_id)
{
    int64_t sid;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, am_sid(st, &st->w, shadow_id, &sid));
    return rc == AM_OK ? session_purge(st, sid) : rc == AM_ERR_NOTFOUND ? AM_OK : rc;
}

/* Purges the hidden sessions a crash left half-purged (at open). */
static int sessions_purge_hidden(am_store *st)
{
    for (;;) {
        int64_t sids[64];
        size_t n = 0;
        am_q q;
        am_w_lock(st);
        int rc = am_q_open(st, &st->w, AM_S_SESSION_HIDDEN, &q, "");
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0 && n < 64)
                sids[n++] = sqlite3_column_int64(q.s, 0);
            am_q_close(&q);
        }
        am_w_unlock(st);
        for (size_t i = 0; i < n && rc == AM_OK; i++)
            rc = session_purge(st, sids[i]);
        if (rc || n == 0)
            return rc;
    }
}

int am_store_glossary_put(am_store *st, const char *id, const char *glossary_json, int64_t now_ms)
{
    return am_store_glossary_put_if(st, id, 0, glossary_json, now_ms, NULL);
}

int am_store_glossary_put_if(am_store *st, const char *id, int64_t incarnation,
                             const char *glossary_json, int64_t now_ms, int64_t *new_version)
{
    if (!id)
        return AM_ERR_INVALID;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_exec(st, &st->w, AM_S_GLOSSARY_PUT, "tii", id, now_ms, incarnation);
    if (rc == AM_OK && sqlite3_changes(st->w.db) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_glossary_keep(st, id, glossary_json);
    if (rc == AM_OK && new_version) {
        am_q q;
        rc = am_q_open(st, &st->w, AM_S_GLOSSARY_CUR, &q, "t", id);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                *new_version = sqlite3_column_int64(q.s, 0);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
    }
    return am_w_end(st, rc);
}

/* ---- write transactions --------------------------------------------------- */

int am_store_tx_begin(am_store *st, am_store_tx **tx)
{
    *tx = NULL;
    am_w_lock(st);
    if (st->in_tx) {
        /* Only the owner can get here (the mutex is held by it). */
        am_w_unlock(st);
        am_store_note(st, AM_ERR_INVALID, "a transaction is already open in this thread");
        return AM_ERR_INVALID;
    }
    int rc = am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
    if (rc) {
        am_w_unlock(st);
        return rc;
    }
    st->in_tx = 1;
    st->nested = 0;
    st->tx.has_sid = 0;
    *tx = &st->tx;
    return AM_OK;
}

static void am_tx_end(am_store *st)
{
    st->in_tx = 0;
    st->tx.has_sid = 0;
    am_buf_reset(&st->tx.sess);
    am_w_unlock(st);
}

int am_store_tx_commit(am_store_tx *tx)
{
    am_store *st = tx->st;
    assert(st->in_tx && st->nested == 0);
    int rc = am_exec(st, &st->w, AM_S_COMMIT, "");
    if (rc != AM_OK && !sqlite3_get_autocommit(st->w.db))
        am_exec(st, &st->w, AM_S_ROLLBACK, "");
    am_tx_end(st);
    return rc;
}

void am_store_tx_rollback(am_store_tx *tx)
{
    if (!tx)
        return;
    am_store *st = tx->st;
    assert(st->in_tx && st->nested == 0);
    if (!sqlite3_get_autocommit(st->w.db))
        am_exec(st, &st->w, AM_S_ROLLBACK, "");
    am_tx_end(st);
}

/* ---- read transactions ----------------------------------------------------- */

int am_store_rtx_begin(am_store *st, am_store_tx **tx)
{
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc != AM_OK) {
        am_reader_put(c);
        *tx = NULL;
        return rc;
    }
    am_store_tx *t = am_xcalloc(1, sizeof *t);
    t->st = st;
    t->c = c;
    am_buf_init(&t->sess);
    *tx = t;
    return AM_OK;
}

void am_store_rtx_end(am_store_tx *tx)
{
    if (!tx)
        return;
    am_read_end(tx->st, tx->c);
    am_reader_put(tx->c);
    am_buf_cleanup(&tx->sess);
    free(tx);
}

/* ---- group commit ----------------------------------------------------------- */

#define AM_STORE_GROUP_MAX 512

typedef struct am_gjob {
    am_store_job_fn fn;
    void *ctx;
    int rc;
    int done;
    struct am_gjob *next;
} am_gjob;

/* Runs one batch of jobs (the leader, without gmu): BEGIN IMMEDIATE, each
 * job in its own SAVEPOINT (a failing job is rolled back alone), COMMIT.
 * When the commit fails every job of the batch fails with its error. */
static void am_group_run(am_store *st, am_gjob *batch)
{
    am_w_lock(st);
    int brc = st->in_tx ? AM_ERR_INVALID : am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
    if (brc == AM_OK) {
        st->in_tx = 1;
        st->nested = 0;
        st->tx.has_sid = 0;
        for (am_gjob *j = batch; j; j = j->next) {
            int rc = am_exec(st, &st->w, AM_S_SAVEPOINT, "");
            if (rc == AM_OK) {
                rc = j->fn(&st->tx, j->ctx);
                if (sqlite3_get_autocommit(st->w.db)) { /* e.g. SQLITE_FULL: all rolled back */
                    j->rc = rc;
                    brc = rc == AM_ERR_FULL ? AM_ERR_FULL : AM_ERR_IO;
                    break;
                }
                if (rc != AM_OK)
                    am_exec(st, &st->w, AM_S_ROLLBACK_TO, "");
                int r2 = am_exec(st, &st->w, AM_S_RELEASE, "");
                if (rc == AM_OK)
                    rc = r2;
            }
            j->rc = rc;
            if (sqlite3_get_autocommit(st->w.db)) { /* SQLite rolled the batch back */
                brc = rc == AM_ERR_FULL ? AM_ERR_FULL : AM_ERR_IO;
                break;
            }
        }
        if (brc == AM_OK)
            brc = am_exec(st, &st->w, AM_S_COMMIT, "");
        if (brc != AM_OK && !sqlite3_get_autocommit(st->w.db))
            am_exec(st, &st->w, AM_S_ROLLBACK, "");
        st->in_tx = 0;
        st->tx.has_sid = 0;
        am_buf_reset(&st->tx.sess);
    }
    am_w_unlock(st);
    for (am_gjob *j = batch; j; j = j->next)
        if (brc != AM_OK)
            j->rc = brc;
}

int am_store_tx_group(am_store *st, am_store_job_fn fn, void *ctx)
{
    am_gjob job = {fn, ctx, AM_OK, 0, NULL};
    pthread_mutex_lock(&st->gmu);
    /* job lives on this stack until it is done: the leader reads job.next
     * before it sets done, and this thread waits for done below */
    *st->gtail = &job;
    st->gtail = &job.next; /* cppcheck-suppress autoVariables */
    while (!job.done) {
        if (st->gleader) {
            pthread_cond_wait(&st->gcv, &st->gmu);
            continue;
        }
        /* lead: take up to AM_STORE_GROUP_MAX queued jobs (ours among them) */
        st->gleader = 1;
        am_gjob *batch = st->ghead, *last = batch;
        for (int n = 1; n < AM_STORE_GROUP_MAX && last->next; n++)
            last = last->next;
        st->ghead = last->next;
        if (!st->ghead)
            st->gtail = &st->ghead;
        last->next = NULL;
        pthread_mutex_unlock(&st->gmu);
        am_group_run(st, batch);
        pthread_mutex_lock(&st->gmu);
        for (am_gjob *j = batch, *nx; j; j = nx) {
            nx = j->next;
            j->done = 1;
        }
        st->gleader = 0;
        pthread_cond_broadcast(&st->gcv);
    }
    int rc = job.rc;
    pthread_mutex_unlock(&st->gmu);
    return rc;
}

/* The sid of session within tx (cached for the transaction). */
static int am_tx_sid(am_store_tx *tx, const char *session, int64_t *sid)
{
    if (!session)
        return AM_ERR_INVALID;
    if (tx->has_sid && strcmp(am_buf_str(&tx->sess), session) == 0) {
        *sid = tx->sid;
        return AM_OK;
    }
    int rc = am_sid(tx->st, tx->c, session, sid);
    if (rc == AM_OK) {
        am_buf_reset(&tx->sess);
        am_buf_appends(&tx->sess, session);
        tx->sid = *sid;
        tx->has_sid = 1;
    }
    return rc;
}

int am_store_tx_session_state(am_store_tx *tx, const char *session, int64_t *last_seq,
                              int64_t *version)
{
    am_store_state s;
    int rc = am_store_tx_session_info(tx, session, &s);
    if (rc == AM_OK && last_seq)
        *last_seq = s.last_seq;
    if (rc == AM_OK && version)
        *version = s.version;
    return rc;
}

int am_store_tx_session_info(am_store_tx *tx, const char *session, am_store_state *out)
{
    memset(out, 0, sizeof *out);
    if (!session)
        return AM_ERR_INVALID;
    am_store *st = tx->st;
    am_q q;
    int rc = am_q_open(st, tx->c, AM_S_SESSION_STATE, &q, "t", session);
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        tx->sid = sqlite3_column_int64(q.s, 0);
        tx->has_sid = 1;
        am_buf_reset(&tx->sess);
        am_buf_appends(&tx->sess, session);
        out->last_seq = sqlite3_column_int64(q.s, 1);
        out->version = sqlite3_column_int64(q.s, 2);
        out->incarnation = sqlite3_column_int64(q.s, 3);
        out->glossary_version = sqlite3_column_int64(q.s, 4);
        out->count = sqlite3_column_int64(q.s, 5);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_segment_find(am_store_tx *tx, const char *session, const char *client_id,
                             int64_t *seq, char **body_hash, char **result_json)
{
    if (body_hash)
        *body_hash = NULL;
    if (result_json)
        *result_json = NULL;
    if (!client_id)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_SEG_FIND, &q, "it", sid, client_id);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        if (seq)
            *seq = sqlite3_column_int64(q.s, 0);
        if (body_hash)
            *body_hash = am_col_str(q.s, 1);
        if (result_json)
            *result_json = am_col_str(q.s, 2);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_segment_insert(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json, int64_t now_ms)
{
    return am_store_tx_segment_insert_gv(tx, session, seq, client_id, body_hash, request_json,
                                         result_json, 0, now_ms);
}

int am_store_tx_segment_insert_gv(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, int64_t now_ms)
{
    if (seq < 1 || !body_hash || !request_json || !result_json)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_INSERT, "iittttii", sid, seq, client_id, body_hash,
                     request_json, result_json, now_ms, glossary_version);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, seq, now_ms);
    return rc;
}

int am_store_tx_segment_update(am_store_tx *tx, const char *session, int64_t seq,
                               const char *body_hash, const char *request_json,
                               const char *result_json, int64_t now_ms)
{
    if (!result_json || (!body_hash) != (!request_json))
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_UPDATE, "iittti", sid, seq, body_hash, request_json,
                     result_json, now_ms);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, (int64_t)0, now_ms);
    return rc;
}

/* Adapts an am_store_segment_fn to the walk with glossary versions. */
typedef struct am_walk_plain {
    am_store_segment_fn fn;
    void *ctx;
} am_walk_plain;

static int am_walk_plain_cb(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                            int64_t glossary_version)
{
    (void)glossary_version;
    am_walk_plain *w = ctx;
    return w->fn(w->ctx, seq, client_id, request_json);
}

int am_store_tx_segments_walk(am_store_tx *tx, const char *session, int64_t from,
                              am_store_segment_fn fn, void *ctx)
{
    am_walk_plain w = {fn, ctx};
    return am_store_tx_segments_walk_gv(tx, session, from, am_walk_plain_cb, &w);
}

int am_store_tx_segments_walk_gv(am_store_tx *tx, const char *session, int64_t from,
                                 am_store_segment_gv_fn fn, void *ctx)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_SEG_WALK, &q, "ii", sid, from);
    if (rc)
        return rc;
    while ((rc = am_q_step(tx->st, &q)) > 0) {
        int r = fn(ctx, sqlite3_column_int64(q.s, 0), (const char *)sqlite3_column_text(q.s, 1),
                   (const char *)sqlite3_column_text(q.s, 2), sqlite3_column_int64(q.s, 3));
        if (r != 0) {
            rc = r;
            break;
        }
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_glossary_version(am_store_tx *tx, const char *session, int64_t version,
                                 char **entries_json)
{
    *entries_json = NULL;
    if (version == 0)
        return AM_OK; /* no glossary */
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_GLOSSARY_VERSION, &q, "ii", sid, version);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        *entries_json = am_col_str(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_vocab_get(am_store_tx *tx, const char *session, const char *word, int64_t *occ)
{
    *occ = 0;
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_VOCAB_GET, &q, "it", sid, word);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0)
        *occ = sqlite3_column_int64(q.s, 0);
    am_q_close(&q);
    return rc < 0 ? rc : AM_OK;
}

int am_store_tx_vocab_bump(am_store_tx *tx, const char *session, const char *word, int64_t seq,
                           int64_t *occ_before)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    if (occ_before) {
        /* A separate lookup (the page is then hot for the upsert): an
         * upsert with RETURNING would need a statement journal (a 64 KiB
         * allocation per statement). */
        am_q q;
        rc = am_q_open(tx->st, tx->c, AM_S_VOCAB_GET, &q, "it", sid, word);
        if (rc)
            return rc;
        rc = am_q_step(tx->st, &q);
        *occ_before = rc > 0 ? sqlite3_column_int64(q.s, 0) : 0;
        am_q_close(&q);
        if (rc < 0)
            return rc;
    }
    rc = am_exec(tx->st, tx->c, AM_S_VOCAB_UPSERT, "iti", sid, word, seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT, "iti", sid, word, seq);
    return rc;
}

int am_store_tx_vocab_incr(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    return am_store_tx_vocab_bump(tx, session, word, seq, NULL);
}

/* Appends s as a JSON string ('"', '\\' and control characters escaped;
 * UTF-8 passes through). */
static void am_json_str_append(am_buf *b, const char *s)
{
    am_buf_appendc(b, '"');
    const char *run = s; /* the bytes since the last escape, appended at once */
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        am_buf_append(b, run, (size_t)(s - run));
        run = s + 1;
        if (c < 0x20) {
            am_buf_printf(b, "\\u%04x", (unsigned)c);
        } else {
            am_buf_appendc(b, '\\');
            am_buf_appendc(b, (char)c);
        }
    }
    am_buf_append(b, run, (size_t)(s - run));
    am_buf_appendc(b, '"');
}

int am_store_tx_vocab_incr_all(am_store_tx *tx, const char *session, const char *words, size_t n,
                               int64_t seq)
{
    if (n == 0)
        return AM_OK;
    if (!words)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    /* the words as a JSON array, which json_each() turns into rows */
    am_buf arr;
    am_buf_init(&arr);
    am_buf_appendc(&arr, '[');
    const char *w = words;
    for (size_t i = 0; i < n; i++) {
        if (i)
            am_buf_appendc(&arr, ',');
        am_json_str_append(&arr, w);
        w += strlen(w) + 1;
    }
    am_buf_appendc(&arr, ']');
    rc = am_exec(tx->st, tx->c, AM_S_VOCAB_UPSERT_ALL, "iti", sid, am_buf_str(&arr), seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT_ALL, "iti", sid, am_buf_str(&arr), seq);
    am_buf_cleanup(&arr);
    return rc;
}

int am_store_tx_history_clear(am_store_tx *tx, const char *session)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CKPT_CLEAR, "i", sid);
    if (rc == AM_OK) /* every result is rewritten into segments.result */
        rc = am_exec(tx->st, tx->c, AM_S_RESULT_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_BUMP, "i", sid);
    return rc;
}

int am_store_tx_vocab_remove(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_DELETE, "iti", sid, word, seq);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) == 0)
        return AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_SHRINK, "it", sid, word);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_DROP_EMPTY, "it", sid, word);
    return rc;
}

/* See store.h. The later segments keep their seqs (schema/007): nothing
 * here grows with the session. */
int am_store_tx_segment_delete(am_store_tx *tx, const char *session, int64_t seq, int64_t now_ms)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_DELETE, "ii", sid, seq);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) == 0)
        return AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_SHRINK, "ii", sid, now_ms);
    return rc;
}

int am_store_tx_vocab_insert(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_WIDEN, "iti", sid, word, seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT, "iti", sid, word, seq);
    return rc;
}

int am_store_tx_choice_add(am_store_tx *tx, const char *session, const char *entry, const char *alt,
                           int64_t count)
{
    if (!entry || !alt)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_ADD, "itti", sid, entry, alt, count);
    if (rc == AM_OK && count < 0) /* a replay took choices away: none left, no row */
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_DROP_EMPTY, "itt", sid, entry, alt);
    return rc;
}

/* ---- checkpoints: where a replay starts (schema/008) ---------------------- */

#define AM_CKPT_CHUNK 128 /* rows per short write transaction */

int am_store_tx_checkpoint_take(am_store_tx *tx, const char *session, int64_t seq)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CKPT_TAKE, "ii", sid, seq);
    return rc;
}

int am_store_checkpoints_stage(am_store *st, const char *session, int64_t gen, size_t n,
                               const int64_t *seq, char *const *system, char *const *stats)
{
    int64_t sid;
    int more = 1, rc = AM_OK;
    while (rc == AM_OK && more) { /* what an interrupted replay left, what the cut made stale */
        rc = am_w_begin(st);
        if (rc)
            return rc;
        rc = am_sid(st, &st->w, session, &sid);
        if (rc == AM_OK)
            rc = am_exec(st, &st->w, AM_S_CKPT_SETTLE, "ii", sid, (int64_t)AM_CKPT_CHUNK);
        more = rc == AM_OK && sqlite3_changes(st->w.db) > 0;
        rc = am_w_end(st, rc);
        am_w_handoff(st);
    }
    for (size_t i = 0; i < n && rc == AM_OK;) {
        rc = am_w_begin(st);
        if (rc)
            return rc;
        rc = am_sid(st, &st->w, session, &sid);
        for (size_t k = 0; k < AM_CKPT_CHUNK && i < n && rc == AM_OK; k++, i++)
            rc = am_exec(st, &st->w, AM_S_CKPT_STAGE, "iiitt", sid, seq[i], gen, system[i],
                         stats[i]);
        rc = am_w_end(st, rc);
        am_w_handoff(st);
    }
    return rc;
}

int am_store_tx_replay_reset(am_store_tx *tx, const char *session, int64_t after, int64_t gen)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CKPT_CUT, "iii", sid, after, gen);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_BUMP, "i", sid);
    return rc;
}

int am_store_tx_checkpoint_last(am_store_tx *tx, const char *session, int64_t before, int64_t *seq,
                                am_store_totals_fn fn, void *ctx)
{
    *seq = 0;
    int64_t sid, gen = 0;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_CKPT_LAST, &q, "ii", sid, before);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        *seq = sqlite3_column_int64(q.s, 0);
        gen = sqlite3_column_int64(q.s, 1);
    }
    am_q_close(&q);
    if (rc < 0 || *seq == 0)
        return rc < 0 ? rc : AM_OK;
    rc = am_q_open(tx->st, tx->c, AM_S_CKPT_EACH, &q, "iii", sid, *seq, gen);
    if (rc)
        return rc;
    while ((rc = am_q_step(tx->st, &q)) > 0) {
        int r = fn(ctx, (const char *)sqlite3_column_text(q.s, 0),
                   (const char *)sqlite3_column_text(q.s, 1));
        if (r != 0) {
            rc = r;
            break;
        }
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_history_upto(am_store_tx *tx, const char *session, int64_t seq,
                             am_store_count_fn fn, void *ctx)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_OCC_UPTO, &q, "ii", sid, seq);
    if (rc)
        return rc;
    while ((rc = am_q_step(tx->st, &q)) > 0) {
        int r = fn(ctx, (const char *)sqlite3_column_text(q.s, 0), sqlite3_column_int64(q.s, 1));
        if (r != 0) {
            rc = r;
            break;
        }
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_choice_incr(am_store_tx *tx, const char *session, const char *entry,
                            const char *alt)
{
    if (!entry || !alt)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_INCR, "itt", sid, entry, alt);
    return rc;
}

int am_store_tx_totals_get(am_store_tx *tx, const char *session, const char *system,
                           char **stats_json)
{
    *stats_json = NULL;
    if (!system)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_TOTALS_GET, &q, "it", sid, system);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        *stats_json = am_col_str(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_totals_put(am_store_tx *tx, const char *session, const char *system,
                           const char *stats_json)
{
    if (!system || !stats_json)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_PUT, "itt", sid, system, stats_json);
    return rc;
}

int am_store_tx_background_get(am_store_tx *tx, const char *name, const char *word, int64_t *count)
{
    *count = 0;
    if (!name || !word)
        return AM_ERR_INVALID;
    am_q q;
    int rc = am_q_open(tx->st, tx->c, AM_S_BG_GET, &q, "tt", name, word);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0)
        *count = sqlite3_column_int64(q.s, 0);
    am_q_close(&q);
    return rc < 0 ? rc : AM_OK;
}

/* ---- reads ---------------------------------------------------------------- */

typedef struct am_kv {
    char *a, *b;
} am_kv;

int am_store_totals_each(am_store *st, const char *session, am_store_totals_fn fn, void *ctx)
{
    return am_store_totals_snapshot(st, session, NULL, fn, ctx);
}

int am_store_totals_snapshot(am_store *st, const char *session, am_store_state *state,
                             am_store_totals_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    am_kv *v = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid = 0;
        am_q q;
        if (state) { /* the session's state in the same snapshot */
            am_store_tx t;
            memset(&t, 0, sizeof t);
            t.st = st;
            t.c = c;
            am_buf_init(&t.sess);
            rc = am_store_tx_session_info(&t, session, state);
            sid = t.sid;
            am_buf_cleanup(&t.sess);
        } else {
            rc = am_sid(st, c, session, &sid);
        }
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_TOTALS_EACH, &q, "i", sid);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k].a = am_col_str(q.s, 0);
                v[k].b = am_col_str(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].a, v[i].b);
            if (r != 0)
                rc = r;
        }
        free(v[i].a);
        free(v[i].b);
    }
    free(v);
    return rc;
}

int am_store_choices_each(am_store *st, const char *session, const char *entry,
                          am_store_count_fn fn, void *ctx)
{
    if (!session || !entry)
        return AM_ERR_INVALID;
    am_kv *v = NULL;
    int64_t *counts = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_CHOICE_EACH, &q, "it", sid, entry);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                    counts = am_xrealloc(counts, cap * sizeof *counts);
                }
                v[k].a = am_col_str(q.s, 0);
                v[k].b = NULL;
                counts[k] = sqlite3_column_int64(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].a, counts[i]);
            if (r != 0)
                rc = r;
        }
        free(v[i].a);
    }
    free(v);
    free(counts);
    return rc;
}

typedef struct am_segrow {
    int64_t seq, created_at;
    char *client_id, *request, *result;
} am_segrow;

int am_store_segments_each(am_store *st, const char *session, int64_t after, size_t limit,
                           am_store_segrow_fn fn, void *ctx)
{
    return am_store_segments_each_at(st, session, after, limit, NULL, fn, ctx);
}

/* Reads the session's (incarnation, rewrites) in the open read transaction
 * of c: fills stamp when stamp[0] < 0, else AM_ERR_CONFLICT when they
 * differ from it. */
static int am_stamp_check(am_store *st, am_conn *c, int64_t sid, int64_t stamp[2])
{
    am_q q;
    int rc = am_q_open(st, c, AM_S_SESSION_STAMP, &q, "i", sid);
    if (rc != AM_OK)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        int64_t inc = sqlite3_column_int64(q.s, 0), rw = sqlite3_column_int64(q.s, 1);
        if (stamp[0] < 0) {
            stamp[0] = inc;
            stamp[1] = rw;
            rc = AM_OK;
        } else {
            rc = (stamp[0] == inc && stamp[1] == rw) ? AM_OK : AM_ERR_CONFLICT;
        }
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_segments_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                              int64_t stamp[2], am_store_segrow_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    int64_t lim = limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
    am_segrow *v = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        if (rc == AM_OK && stamp)
            rc = am_stamp_check(st, c, sid, stamp);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_EACH, &q, "iii", sid, after, lim);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 16;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k].seq = sqlite3_column_int64(q.s, 0);
                v[k].client_id = am_col_str(q.s, 1);
                v[k].request = am_col_str(q.s, 2);
                v[k].result = am_col_str(q.s, 3);
                v[k].created_at = sqlite3_column_int64(q.s, 4);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].seq, v[i].client_id, v[i].request, v[i].result, v[i].created_at);
            if (r != 0)
                rc = r;
        }
        free(v[i].client_id);
        free(v[i].request);
        free(v[i].result);
    }
    free(v);
    return rc;
}

int am_store_segment_get(am_store *st, const char *session, const char *client_id, int64_t *seq,
                         char **request_json, char **result_json)
{
    if (request_json)
        *request_json = NULL;
    if (result_json)
        *result_json = NULL;
    if (!session || !client_id)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_GET, &q, "it", sid, client_id);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                if (seq)
                    *seq = sqlite3_column_int64(q.s, 0);
                if (request_json)
                    *request_json = am_col_str(q.s, 1);
                if (result_json)
                    *result_json = am_col_str(q.s, 2);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    return rc;
}

int am_store_segment_result(am_store *st, const char *session, int64_t seq, char **client_id,
                            char **result_json)
{
    if (client_id)
        *client_id = NULL;
    if (result_json)
        *result_json = NULL;
    if (!session)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_RESULT, &q, "ii", sid, seq);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                if (client_id)
                    *client_id = am_col_str(q.s, 0);
                if (result_json)
                    *result_json = am_col_str(q.s, 1);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    return rc;
}

/* The first segment scored with each glossary version (a skip scan of the
 * segments_glossary index: one seek per distinct version, no row read),
 * collected in one read snapshot, then fn(ctx, seq, version) in seq order,
 * leaving out the first segment's own version: the points where the
 * version changed. */
int am_store_glossary_changes(am_store *st, const char *session, am_store_gchange_fn fn, void *ctx)
{
    if (!session || !fn)
        return AM_ERR_INVALID;
    int64_t(*v)[2] = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_GLOSSARY_CHANGES, &q, "i", sid);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k][0] = sqlite3_column_int64(q.s, 0);
                v[k][1] = sqlite3_column_int64(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 1; i < k && rc == AM_OK; i++) {
        int r = fn(ctx, v[i][0], v[i][1]);
        if (r != 0)
            rc = r;
    }
    free(v);
    return rc;
}

int am_store_word_history(am_store *st, const char *session, const char *word, int64_t *occ,
                          am_store_seq_fn fn, void *ctx)
{
    if (occ)
        *occ = 0;
    if (!session || !word)
        return AM_ERR_INVALID;
    int64_t *v = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_VOCAB_GET, &q, "it", sid, word);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                if (occ)
                    *occ = sqlite3_column_int64(q.s, 0);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        if (rc == AM_OK && fn)
            rc = am_q_open(st, c, AM_S_OCC_SEQS, &q, "it", sid, word);
        if (rc == AM_OK && fn) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 64;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k++] = sqlite3_column_int64(q.s, 0);
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k && rc == AM_OK; i++) {
        int r = fn(ctx, v[i]);
        if (r != 0)
            rc = r;
    }
    free(v);
    return rc;
}

/* ---- staged results (schema/006) ----------------------------------------- */

#define AM_RESULT_CHUNK 128 /* rows per short write transaction */

/* The session's sid and current result generation, on the writer (locked
 * by the caller). */
static int result_gen(am_store *st, const char *session, int64_t *sid, int64_t *gen)
{
    int rc = am_sid(st, &st->w, session, sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(st, &st->w, AM_S_RESULT_GEN, &q, "i", *sid);
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    *gen = rc > 0 ? sqlite3_column_int64(q.s, 0) : 0;
    rc = rc > 0 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
    am_q_close(&q);
    return rc;
}

/* One chunk of am_store_results_settle: deletes the rows at seqs
 * [*from, *from + AM_RESULT_CHUNK) that no reader can see and no replay
 * will reuse: rows of a generation above the current one (an interrupted
 * replay's) and, of each segment's older rows, all but the newest spare;
 * advances *from. *more = 0 past the highest staged seq. One window per
 * transaction, so each looks at about a chunk of rows. */
static int results_settle_chunk(am_store *st, const char *session, int64_t *from, int *more)
{
    int64_t sid, gen, top = 0;
    *more = 0;
    int rc = result_gen(st, session, &sid, &gen);
    am_q q;
    if (rc == AM_OK)
        rc = am_q_open(st, &st->w, AM_S_RESULT_MAX_SEQ, &q, "i", sid);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0)
            top = sqlite3_column_int64(q.s, 0);
        rc = rc < 0 ? rc : AM_OK;
        am_q_close(&q);
    }
    if (rc == AM_OK && *from <= top) {
        rc = am_exec(st, &st->w, AM_S_RESULT_STALE_DEL, "iiii", sid, gen, *from,
                     *from + AM_RESULT_CHUNK);
        *from += AM_RESULT_CHUNK;
        *more = rc == AM_OK && *from <= top;
    }
    return rc;
}

/* Whether the session has rows above its current generation (on the
 * writer, locked by the caller). */
static int results_abandoned(am_store *st, const char *session, int *any)
{
    int64_t sid, gen;
    *any = 0;
    int rc = result_gen(st, session, &sid, &gen);
    am_q q;
    if (rc == AM_OK)
        rc = am_q_open(st, &st->w, AM_S_RESULT_ABANDONED, &q, "ii", sid, gen);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        *any = rc > 0;
        rc = rc < 0 ? rc : AM_OK;
        am_q_close(&q);
    }
    return rc;
}

int am_store_results_settle(am_store *st, const char *session, int64_t from)
{
    int any = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, results_abandoned(st, session, &any));
    while (rc == AM_OK && any) {
        int more = 0;
        rc = am_w_begin(st);
        if (rc)
            return rc;
        rc = am_w_end(st, results_settle_chunk(st, session, &from, &more));
        if (rc || !more)
            return rc;
        am_w_handoff(st);
    }
    return rc;
}

int am_store_results_stage(am_store *st, const char *session, int64_t *gen, size_t n,
                           const int64_t *seq, char *const *result)
{
    int64_t sid, cur;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, result_gen(st, session, &sid, &cur));
    if (rc)
        return rc;
    *gen = cur + 1;
    for (size_t i = 0; i < n;) {
        am_w_handoff(st);
        rc = am_w_begin(st);
        if (rc)
            return rc;
        for (size_t k = 0; k < AM_RESULT_CHUNK && i < n && rc == AM_OK; k++, i++) {
            /* the segment's spare row (one no reader can see) is rewritten in
             * place: no row is ever deleted, and a segment has two at most */
            rc = am_exec(st, &st->w, AM_S_RESULT_REUSE, "iiiti", sid, *gen, seq[i], result[i], cur);
            if (rc == AM_OK && sqlite3_changes(st->w.db) == 0)
                rc = am_exec(st, &st->w, AM_S_RESULT_STAGE, "iiit", sid, *gen, seq[i], result[i]);
        }
        rc = am_w_end(st, rc);
        if (rc)
            return rc;
    }
    return AM_OK;
}

int am_store_tx_results_switch(am_store_tx *tx, const char *session, int64_t gen)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_RESULT_SWITCH, "ii", sid, gen);
    return rc;
}

/* ---- background vocabularies ---------------------------------------------- */

/* Background vocabularies are written and dropped in chunks of
 * AM_VOCAB_CHUNK rows, one short write transaction each, so that an upload
 * of millions of words never holds the writer for long: the words go into a
 * hidden vocabulary (a name starting with '~', which no vocabulary id can
 * have), which one short transaction then renames to the real name while
 * the previous one is renamed away; that one is then deleted chunk by
 * chunk. Hidden vocabularies left by a crash are deleted at open. */
#define AM_VOCAB_CHUNK 4096

/* A fresh hidden name "~kind~name~n" into out. */
static void vocab_hidden_name(am_store *st, const char *kind, const char *name, char *out, size_t n)
{
    unsigned long long k = (unsigned long long)atomic_fetch_add(&st->hidden_seq, 1);
    snprintf(out, n, "~%s~%.200s~%llu~%lld", kind, name, k, (long long)time(NULL));
}

/* Deletes vocabulary vid: its words a chunk per write transaction, then its
 * row. */
static int vocab_drop(am_store *st, int64_t vid)
{
    for (;;) {
        int rc = am_w_begin(st);
        if (rc)
            return rc;
        rc = am_exec(st, &st->w, AM_S_VOCABULARY_WORDS_CHUNK, "ii", vid, (int64_t)AM_VOCAB_CHUNK);
        int more = rc == AM_OK && sqlite3_changes(st->w.db) > 0;
        if (rc == AM_OK && !more)
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_DROP_VID, "i", vid);
        rc = am_w_end(st, rc);
        if (rc || !more)
            return rc;
        am_w_handoff(st);
    }
}

/* The vid of vocabulary name (AM_ERR_NOTFOUND), on the writer (locked by
 * the caller). */
static int vocab_vid(am_store *st, const char *name, int64_t *vid)
{
    am_q q;
    int rc = am_q_open(st, &st->w, AM_S_VOCABULARY_VID, &q, "t", name);
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        *vid = sqlite3_column_int64(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

/* Deletes the hidden vocabularies a crash left behind (at open). */
static int vocab_cleanup(am_store *st)
{
    int64_t vids[64];
    size_t n = 0;
    am_w_lock(st);
    am_q q;
    int rc = am_q_open(st, &st->w, AM_S_VOCABULARY_HIDDEN, &q, "");
    while (rc == AM_OK && n < sizeof vids / sizeof vids[0]) {
        int r = am_q_step(st, &q);
        if (r <= 0) {
            rc = r;
            break;
        }
        vids[n++] = sqlite3_column_int64(q.s, 0);
    }
    if (rc == AM_OK || rc > 0)
        am_q_close(&q);
    am_w_unlock(st);
    for (size_t i = 0; i < n && rc == AM_OK; i++)
        rc = vocab_drop(st, vids[i]);
    return rc;
}

int am_store_vocabulary_put(am_store *st, const char *name, const char *const *words,
                            const int64_t *counts, size_t n, int64_t now_ms)
{
    if (!name || (n && (!words || !counts)))
        return AM_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!words[i])
            return AM_ERR_INVALID;
    char stage[300];
    vocab_hidden_name(st, "new", name, stage, sizeof stage);
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    int64_t vid = 0;
    am_q q;
    rc = am_q_open(st, &st->w, AM_S_VOCABULARY_INSERT, &q, "ti", stage, now_ms);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            vid = sqlite3_column_int64(q.s, 0);
            rc = AM_OK;
        } else if (rc == 0) {
            rc = AM_ERR_INTERNAL;
        }
        am_q_close(&q);
    }
    rc = am_w_end(st, rc);
    if (rc)
        return rc;
    /* the words, a chunk per transaction, into the hidden vocabulary */
    for (size_t i = 0; i < n && rc == AM_OK; i += AM_VOCAB_CHUNK) {
        rc = am_w_begin(st);
        if (rc)
            break;
        for (size_t k = i; k < n && k < i + AM_VOCAB_CHUNK && rc == AM_OK; k++)
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_WORD, "iti", vid, words[k], counts[k]);
        rc = am_w_end(st, rc);
        am_w_handoff(st);
    }
    /* the switch: the old one (if any) renamed away, the new one named */
    int64_t old = 0;
    if (rc == AM_OK) {
        rc = am_w_begin(st);
        if (rc == AM_OK) {
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_SIZE, "i", vid);
            int r = rc == AM_OK ? vocab_vid(st, name, &old) : rc;
            if (r == AM_OK) {
                char away[300];
                vocab_hidden_name(st, "old", name, away, sizeof away);
                rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", old, away);
            } else if (r != AM_ERR_NOTFOUND) {
                rc = r;
            }
            if (rc == AM_OK)
                rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", vid, name);
            rc = am_w_end(st, rc);
        }
    }
    if (rc != AM_OK) {
        vocab_drop(st, vid); /* what remains is deleted at the next open */
        return rc;
    }
    if (old)
        vocab_drop(st, old); /* idem */
    return AM_OK;
}

int am_store_vocabulary_info(am_store *st, const char *name, int64_t *words, int64_t *created_at)
{
    if (!name)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    am_q q;
    int rc = am_q_open(st, c, AM_S_VOCABULARY_INFO, &q, "t", name);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0) {
            if (words)
                *words = sqlite3_column_int64(q.s, 0);
            if (created_at)
                *created_at = sqlite3_column_int64(q.s, 1);
            rc = AM_OK;
        } else if (rc == 0) {
            rc = AM_ERR_NOTFOUND;
        }
        am_q_close(&q);
    }
    am_reader_put(c);
    return rc;
}

int am_store_vocabulary_delete(am_store *st, const char *name)
{
    if (!name)
        return AM_ERR_INVALID;
    /* renamed away at once (the name is free when this returns), then
     * deleted in chunks */
    int64_t vid = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = vocab_vid(st, name, &vid);
    if (rc == AM_OK) {
        char away[300];
        vocab_hidden_name(st, "del", name, away, sizeof away);
        rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", vid, away);
    }
    rc = am_w_end(st, rc);
    if (rc == AM_OK)
        vocab_drop(st, vid); /* what remains is deleted at the next open */
    return rc;
}

int am_store_vocabulary_each(am_store *st, const char *name, am_store_count_fn fn, void *ctx)
{
    if (!name)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        am_q q;
        int64_t vid = 0;
        rc = am_q_open(st, c, AM_S_VOCABULARY_VID, &q, "t", name);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                vid = sqlite3_column_int64(q.s, 0);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_VOCABULARY_EACH, &q, "i", vid);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                int r = fn(ctx, (const char *)sqlite3_column_text(q.s, 0),
                           sqlite3_column_int64(q.s, 1));
                if (r != 0) {
                    rc = r;
                    break;
                }
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    return rc;
}

/* ---- backups -------------------------------------------------------------- */

static int am_fsync_path(const char *path, int dir)
{
    int fd = open(path, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int am_store_backup(am_store *st, const char *dest_path, am_buf *err)
{
    if (!dest_path || !*dest_path || strcmp(dest_path, ":memory:") == 0) {
        am_buf_printf(err, "invalid backup path");
        return AM_ERR_INVALID;
    }
    int rc = am_dbfile_mkdir_parents(dest_path, err);
    if (rc)
        return rc;
    size_t len = strlen(dest_path);
    char *tmp = am_xmalloc(len + 5);
    memcpy(tmp, dest_path, len);
    memcpy(tmp + len, ".tmp", 5);
    unlink(tmp);

    sqlite3 *dst = NULL;
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        am_buf_printf(err, "cannot create %s: %s", tmp,
                      dst ? sqlite3_errmsg(dst) : "out of memory");
        sqlite3_close(dst);
        free(tmp);
        return AM_ERR_IO;
    }
    /* A reader's snapshot: one step copies every page under one read
     * transaction, which in WAL mode does not stop the writer. */
    am_conn *c = am_reader_get(st);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", c->db, "main");
    if (!b) {
        am_buf_printf(err, "backup failed: %s", sqlite3_errmsg(dst));
        rc = AM_ERR_IO;
    } else {
        int s, tries = 0;
        /* Busy only while another process holds a lock: retry for about
         * the busy timeout. */
        while (((s = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || s == SQLITE_LOCKED) &&
               tries++ < AM_STORE_BUSY_MS / 10)
            sqlite3_sleep(10);
        if (s != SQLITE_DONE) {
            am_buf_printf(err, "backup failed: %s", sqlite3_errstr(s));
            rc = AM_ERR_IO;
        }
        if (sqlite3_backup_finish(b) != SQLITE_OK && rc == AM_OK) {
            am_buf_printf(err, "backup failed: %s", sqlite3_errmsg(dst));
            rc = AM_ERR_IO;
        }
    }
    am_reader_put(c);
    if (rc == AM_OK &&
        sqlite3_wal_checkpoint_v2(dst, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK) {
        am_buf_printf(err, "backup checkpoint failed: %s", sqlite3_errmsg(dst));
        rc = AM_ERR_IO;
    }
    if (sqlite3_close(dst) != SQLITE_OK && rc == AM_OK) {
        am_buf_printf(err, "cannot close %s", tmp);
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && am_fsync_path(tmp, 0) != 0) {
        am_buf_printf(err, "cannot sync %s: %s", tmp, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && rename(tmp, dest_path) != 0) {
        am_buf_printf(err, "cannot rename %s to %s: %s", tmp, dest_path, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK) {
        char *dir = am_xstrdup(dest_path);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            strcpy(dir, ".");
        am_fsync_path(dir, 1); /* best effort: makes the rename durable */
        free(dir);
    } else {
        unlink(tmp);
        size_t tl = strlen(tmp);
        char *side = am_xmalloc(tl + 5);
        memcpy(side, tmp, tl);
        memcpy(side + tl, "-wal", 5);
        unlink(side);
        memcpy(side + tl, "-shm", 5);
        unlink(side);
        free(side);
    }
    free(tmp);
    if (rc != AM_OK)
        am_store_note(st, rc, am_buf_str(err));
    return rc;
}
