/*
 * store/store_int.h — the store's private header (see store.h for the
 * interface): the am_store, connection and transaction structs, the
 * statement ids (their SQL: sql.h, all of the service's SQL) and the helpers
 * the store's files share. Every value coming from a request is bound,
 * never spliced into SQL text.
 *
 * Files: conn.c (errors, statements in use, connections, the writer's
 * lock), open.c (open/close, migrations, pragmas, the checkpointer,
 * backups), tx.c (write and read transactions, group commit), sessions.c
 * (sessions, their deletion and purge), segments.c
 * (segments, their results and staged results), vocab.c (a session's
 * vocabulary history, background vocabularies), glossary.c (glossary
 * versions, term choices), totals.c (running totals). drv.h: the driver
 * seam the domain files use instead of sqlite3_* (rows, changes); sql_pg.h:
 * the statements' PostgreSQL text, run by drv_pg.c (the PostgreSQL driver:
 * a connection there is an am_conn with pg set; conn.c branches on it);
 * errs.c: the statement tables and the last error, below both drivers.
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
 * Transactions' types. A write transaction is an am_store_tx, a read
 * transaction (a reader's snapshot, am_store_rtx_begin) an am_store_rtx:
 * the write functions take the first, the reads the second, so passing a
 * snapshot to a write is a compile error. A write transaction's own reads
 * go through am_store_tx_reads(tx). Both share the core struct
 * (am_store_tx: connection and sid cache); internal reads in a snapshot
 * use a stack am_store_rtx (rtx_open/rtx_open_sid … rtx_close).
 *
 * Statements. Each connection prepares a statement on first use
 * (SQLITE_PREPARE_PERSISTENT) and keeps it; after every use it is reset and
 * its bindings cleared. A statement that is still stepping (a walk whose
 * callback calls back into the store) is not reused: a temporary copy is
 * prepared and finalized for the nested use. Rows are read with
 * store_get (one row: its columns through typed destinations,
 * COLS(col_int(&n), col_str(&s)); AM_ERR_NOTFOUND without a row) and
 * store_each (every row to a callback; store_collect keeps them, typed by
 * a column string, to pass on later); am_exec runs a statement whose rows
 * are not read. Arguments are bound from a format ("it": int64_t, text).
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
#include "walbuf.h"
#ifndef AM_STORE_INT_H
#define AM_STORE_INT_H

#include "store.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#define AM_STORE_READERS 4
#define AM_STORE_BUSY_MS 5000
#define AM_CKPT_PAGES 8192 /* WAL pages (32 MiB at 4 KiB) between checkpoints */
#define AM_CKPT_GAP_MS 50 /* at least this long between two checkpoints */
#define AM_CKPT_HARD_PAGES (4 * AM_CKPT_PAGES) /* the writer checkpoints itself */
#include "drv.h"
#include "sql.h"

enum am_stmt_id {
#define AM_STMT_ENUM(name, sql) AM_S_##name,
    AM_STMTS(AM_STMT_ENUM)
#undef AM_STMT_ENUM
        AM_S__COUNT
};

/* Statement texts and names (for error messages), by id (conn.c). */
extern const char *const am_stmt_sql[AM_S__COUNT];
extern const char *const am_stmt_name[AM_S__COUNT];

/* ---- types ---------------------------------------------------------------- */

typedef struct am_conn {
    sqlite3 *db; /* SQLite, or NULL for a PostgreSQL connection (pg) */
    pthread_mutex_t mu;
    sqlite3_stmt *stmt[AM_S__COUNT]; /* prepared on first use */
    struct am_store *pool; /* a pooled reader's store (am_reader_put), else NULL */
    /* PostgreSQL (drv_pg.c): the connection, which statements it has
     * prepared, the rows the last statement touched, whether a transaction
     * is open (so a broken connection fails it instead of reconnecting
     * into autocommit), and whether it is the writer (its SESSION_STATE
     * takes the session's row lock, DESIGN-postgres §2.5) */
    PGconn *pg;
    const char *pg_info; /* the store's conninfo (borrowed): set for every PostgreSQL
                            connection, the kind conn.c branches on (pg is NULL while
                            broken) */
    unsigned char pg_prep[AM_S__COUNT];
    unsigned char pg_prep_lock; /* SESSION_STATE's locking variant */
    int64_t pg_changes;
    int pg_intx;
    int pg_writer;
    int pg_pinned; /* a rewrite's connection: never reopened (its lock would be gone) */
} am_conn;

/* A transaction's handle: the write transaction (am_store.tx, one at a
 * time) or the core of a read one. */
struct am_store_tx {
    am_store *st;
    am_conn *c; /* the writer, or a reader for a read transaction */
    am_buf sess; /* session id whose sid is cached in sid ("" = none) */
    int64_t sid;
    int has_sid;
};

/* A read transaction: its own type, so the compiler refuses it where a
 * write transaction is expected; the reads of the write transaction are
 * &am_store.rtx, whose t is am_store.tx (am_store_tx_reads). */
struct am_store_rtx {
    am_store_tx t;
};

/* A group committer (tx.c): its queue of jobs and its leader. The first
 * commits on the writer (w, under its lock, as every other write); each
 * further one (PostgreSQL only) on a writer connection of its own, pinned
 * to it, with its own batch transaction. */
typedef struct am_committer {
    pthread_mutex_t mu;
    struct am_gjob *head, **tail; /* guarded by mu */
    int leader; /* guarded by mu: a batch is running */
    am_conn conn; /* committers after the first: their connection (only the leader uses it) */
    am_store_rtx rtx; /* committers after the first: their batch's transaction (t.c = &conn) */
} am_committer;

struct am_store {
    char *path;
    int memory;
    int pg; /* path is a PostgreSQL conninfo (drv_pg.c): every am_conn is one */
    enum am_durability durability;
    int schema_version;
    am_conn w; /* writer; w.mu is recursive */
    atomic_int w_waiting; /* threads blocked in am_w_lock (see am_w_handoff) */
    int64_t w_pages0; /* guarded by w.mu: pages written when the open write began */
    atomic_llong w_pages_max; /* most pages one write transaction wrote */
    int in_tx; /* guarded by w.mu: a write transaction is open */
    int nested; /* guarded by w.mu: depth of nested writes inside it */
    am_store_rtx rtx; /* rtx.t: the open write transaction (one at a time) */
    am_conn *r; /* readers (none for ":memory:") */
    size_t nr;
    atomic_uint next_reader;
    /* a thread finding every reader busy sleeps on rcv until one is put
     * back (am_reader_get); r_waiting counts the sleepers, under rmu */
    pthread_mutex_t rmu;
    pthread_cond_t rcv;
    atomic_int r_waiting;
    atomic_llong r_waits; /* gets that had to wait (am_store_reader_waits) */
    pthread_mutex_t errmu;
    am_buf errmsg; /* guarded by errmu */
    int64_t mig_from, mig_to; /* schema versions before/after the migrations of open */
    /* group commit (am_store_tx_group, tx.c): the committers, each with
     * its queue and leader; one for SQLite, --pg-committers for
     * PostgreSQL (am_store_set_committers, before any traffic) */
    struct am_committer *gc;
    size_t ngc;
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
    atomic_llong purge_steps; /* VM steps of purges (am_store_purge_steps) */
    am_walbuf *walbuf; /* the writer's VFS (file databases; walbuf.c), or NULL */
    /* the WAL's owner (dbfile.h "Database identity"; open.c) */
    uint32_t life; /* this open's database id (user_version) */
    unsigned char wal_id[12]; /* guarded by w.mu: WAL header bytes 12..23 last seen */
    /* PostgreSQL's --pg-require-sync (pg_sync.c): the probe's connection,
     * thread and answer; writes read pg_require and pg_sync_ok only */
    am_conn sync_conn;
    pthread_t sync_thread;
    int sync_running;
    pthread_mutex_t sync_mu;
    pthread_cond_t sync_cv;
    int sync_stop; /* guarded by sync_mu */
    atomic_int pg_require, pg_sync_ok;
    atomic_int pg_expect; /* --pg-expect-standbys + 1; 0: synchronous_standby_names' */
    am_store_pg_status pg_status; /* guarded by sync_mu: the last probe's answer */
    int pg_cleanup_due; /* open_cleanup not run yet (am_store_pg_require_sync runs it) */
    int wal_marking; /* guarded by w.mu: the WAL hook is writing the id */
    /* A rewrite's pinned view (drv_pg.c, am_store_rewrite_begin): the
     * store it was made from, whose errors, gate and counters it uses;
     * NULL for a store opened by am_store_open */
    struct am_store *parent;
};

/* A result row: SQLite's current row of statement s, or PostgreSQL's row
 * i of result r (r non-NULL). */
struct am_row {
    sqlite3_stmt *s;
    PGresult *r;
    int i;
};

#define AM_PG_PARAMS 16 /* the most parameters of a statement (sql_pg.h) */

/* A bound statement in use: the cached one or a temporary copy. A
 * PostgreSQL one (pg) keeps its parameters until its first step, which runs
 * it; its rows are then row.r's. */
typedef struct am_q {
    am_conn *c;
    enum am_stmt_id id;
    sqlite3_stmt *s;
    struct am_row row;
    int pg; /* a PostgreSQL statement is open (am_q_close frees its result) */
    int np, ran, nrows;
    const char *pv[AM_PG_PARAMS];
    char pi[AM_PG_PARAMS][24]; /* integer parameters as text */
} am_q;

/* A column of a row to read (store_get): where to, as what. A NULL
 * destination skips the column. Build with col_int/col_str, which the
 * compiler type-checks. */
typedef struct store_col {
    enum { STORE_COL_INT, STORE_COL_STR } type;
    union {
        int64_t *i; /* sqlite3_column_int64 */
        char **s; /* malloc'd copy of the text (caller frees), NULL for NULL */
    } to;
} store_col;

static inline store_col col_int(int64_t *to)
{
    store_col c = {STORE_COL_INT, {.i = to}};
    return c;
}

static inline store_col col_str(char **to)
{
    store_col c = {STORE_COL_STR, {.s = to}};
    return c;
}

/* The columns argument pair of store_get: COLS(col_int(&a), col_str(&b)). */
#define COLS(...)                                                                                  \
    (const store_col[]){__VA_ARGS__}, sizeof((const store_col[]){__VA_ARGS__}) / sizeof(store_col)

/* Column i of the current row as a malloc'd string (caller frees; NULL
 * for SQL NULL). */
char *am_col_str(sqlite3_stmt *s, int i);

/* ---- conn.c --------------------------------------------------------------- */

/* Records msg as the last error and passes AM_ERR_IO/AM_ERR_FULL ones to
 * the logger. */
void am_store_note(am_store *st, int code, const char *msg);
/* Maps the connection's last error to an am_err and records its message.
 * Call before the connection runs anything else. */
int am_db_fail(am_store *st, sqlite3 *db, const char *what);
/* Takes statement id of connection c and binds the arguments described by
 * fmt: 't' const char * (NULL binds NULL; borrowed until am_q_close),
 * 'i' int64_t. */
int am_q_open(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt, ...);
/* Steps q: 1 for a row, 0 when done, a negative am_err on failure. */
int am_q_step(am_store *st, am_q *q);
/* Releases q: resets a cached statement, finalizes a temporary one. */
void am_q_close(am_q *q);
/* Runs a statement that returns no rows (or whose rows are ignored). */
int am_exec(am_store *st, am_conn *c, enum am_stmt_id id, const char *fmt, ...);
/* Reads one row: runs statement id on c with the arguments of fmt (as
 * am_q_open) and stores the first row's columns, in order, through cols
 * (COLS(...)). AM_ERR_NOTFOUND, the destinations untouched, when there is
 * no row. */
int store_get(am_store *st, am_conn *c, enum am_stmt_id id, const store_col *cols, size_t ncols,
              const char *fmt, ...);
/* Reads every row: fn(ctx, row) for each (row is borrowed: see row_int,
 * row_str, row_text); a non-zero return stops the walk and is returned.
 * fn may call the store: a nested use of the statement gets a copy. */
typedef int (*store_row_fn)(void *ctx, am_row *row);
int store_each(am_store *st, am_conn *c, enum am_stmt_id id, store_row_fn fn, void *ctx,
               const char *fmt, ...);
/* Up to 64 ids (column 0 of each row), collected by store_each with
 * store_ids_push, which stops the walk (1) when v is full. */
typedef struct store_ids {
    int64_t v[64];
    size_t n;
} store_ids;
int store_ids_push(void *ctx, am_row *row);
/* (text, integer) rows passed on by store_each with store_count_row
 * (ctx: a store_counts) to fn(ctx, column 0, column 1). */
typedef struct store_counts {
    am_store_count_fn fn;
    void *ctx;
} store_counts;
int store_count_row(void *ctx, am_row *row);
/* Appends the n NUL-separated words (borrowed) to arr (initialized and
 * cleaned up by the caller) as a JSON array, which json_each() turns into
 * rows (store/vocab.c). */
void store_words_json(am_buf *arr, const char *words, size_t n);
/* Runs the n statements ids, each taking the session's sid as its one
 * parameter, in order on tx's connection; stops at the first failure. */
int store_exec_sid(am_store_tx *tx, int64_t sid, const enum am_stmt_id *ids, size_t n);
/* Rows collected by store_each with store_collect, to be passed on after
 * the connection is released (so the callbacks may call the store): kinds
 * names the columns to keep ('i' an integer, 't' a malloc'd copy of the
 * text, NULL for NULL); cell(&rows, k)[j] is row k's column j. Free with
 * store_rows_free. */
typedef struct store_cell {
    int64_t i;
    char *s;
} store_cell;
typedef struct store_rows {
    const char *kinds; /* borrowed */
    store_cell *v; /* n rows of strlen(kinds) cells, malloc'd */
    size_t n, cap;
} store_rows;
int store_collect(void *ctx, am_row *row);
void store_rows_free(store_rows *r);
static inline const store_cell *cell(const store_rows *r, size_t k)
{
    return &r->v[k * strlen(r->kinds)];
}
/* Makes room for element k of the malloc'd array v of *cap elements of
 * size bytes (first: the capacity of a new one); returns v, maybe moved. */
void *vec_grow(void *v, size_t *cap, size_t k, size_t size, size_t first);
void am_conn_close(am_conn *c);
int am_conn_open(am_conn *c, const char *path, int flags, int recursive, am_buf *err);
/* As am_conn_open through the VFS named vfs (NULL: the default). */
int am_conn_open_vfs(am_conn *c, const char *path, int flags, int recursive, const char *vfs,
                     am_buf *err);
/* Runs constant SQL (pragmas, migrations) on c. */
int am_conn_exec(am_conn *c, const char *sql, am_buf *err, const char *what);
/* Reads one integer with constant SQL. */
int am_conn_int(am_conn *c, const char *sql, int64_t *out);
/* A reader for one read call (the writer, locked, for ":memory:");
 * release with am_reader_put. */
am_conn *am_reader_get(am_store *st);
/* The reader pool's state (am_store_open_ex) and its teardown: closes
 * every reader (am_store_free). */
void am_pool_init(am_store *st);
void am_pool_free(am_store *st);
void am_reader_put(am_conn *c);
/* A read transaction in r (caller owned, e.g. on the stack): a reader and
 * its snapshot; end with rtx_close. */
/* tx.c: sets up the store's one committer (open) and frees every
 * committer, closing their connections (close). */
void am_group_init(am_store *st);
void am_group_free(am_store *st);
int rtx_open(am_store *st, am_store_rtx *r);
/* The same, and session's sid in it: on failure (AM_ERR_NOTFOUND: no
 * session) r is closed again. */
int rtx_open_sid(am_store *st, am_store_rtx *r, const char *session, int64_t *sid);
void rtx_close(am_store_rtx *r);
/* Looks up a session's sid on connection c (AM_ERR_NOTFOUND). */
int am_sid(am_store *st, am_conn *c, const char *id, int64_t *sid);
/* The writer's lock; am_w_handoff lets waiting writers have it first
 * (called unlocked). */
void am_w_lock(am_store *st);
void am_w_handoff(am_store *st);
void am_w_unlock(am_store *st);
/* A multi-statement write: locks the writer and begins (BEGIN IMMEDIATE,
 * or a SAVEPOINT inside the thread's open transaction); am_w_end commits
 * when rc is AM_OK, else rolls back, unlocks, and returns rc or the
 * commit's error. */
int am_w_begin(am_store *st);
int am_w_end(am_store *st, int rc);

/* Whether c has no transaction open (SQLite's autocommit; a PostgreSQL
 * connection that is idle or broken). */
int am_conn_autocommit(am_conn *c);

/* ---- drv_pg.c: the PostgreSQL driver --------------------------------------- */

/* Opens c as a connection to st->path; AM_ERR_UNAVAILABLE with err. */
int am_pg_conn_open(am_store *st, am_conn *c, int writer, am_buf *err);
void am_pg_conn_close(am_conn *c);
/* The PostgreSQL sides of am_q_open, am_q_step, am_q_close, am_q_bind_row. */
int am_pg_q_vopen(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt,
                  va_list ap);
int am_pg_q_step(am_store *st, am_q *q);
void am_pg_q_close(am_q *q);
int am_pg_q_bind_row(am_q *q, int first, am_row *row);
/* A reader's snapshot (DESIGN-postgres §2.4). */
#define AM_PG_SQL_SNAPSHOT "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
/* Runs constant SQL on c (a read snapshot's BEGIN and COMMIT). */
int am_pg_exec_const(am_store *st, am_conn *c, const char *sql, const char *what);
/* A rewrite's pinned view of st (sessions.c, am_store_rewrite_begin): an
 * am_store whose writer is a new connection that is never reopened, and
 * whose errors, gate and counters are st's; NULL when it cannot connect
 * (recorded). Close with am_pg_view_close, which ends the connection. */
am_store *am_pg_view_open(am_store *st);
void am_pg_view_close(am_store *v);
/* Runs sql with n text parameters on view v's connection (the caller holds
 * its writer); *out gets the rows (caller clears). */
int am_pg_view_query(am_store *v, const char *sql, int n, const char *const *p, PGresult **out,
                     const char *what);
/* Column accessors of a PostgreSQL row (row->r non-NULL). */
int64_t am_pg_row_int(am_row *row, int i);
const char *am_pg_row_text(am_row *row, int i);

/* ---- pg_sync.c ------------------------------------------------------------- */

/* AM_OK, or AM_ERR_UNAVAILABLE (recorded) when --pg-require-sync is on and
 * the last probe found no synchronous standby: every write transaction,
 * batch and multi-statement write asks before it begins. */
int am_pg_write_gate(am_store *st);
/* Stops the probe and closes its connection (am_store_free). */
void am_pg_sync_stop(am_store *st);
/* The probe's part of am_store_pg_require_sync (open.c runs the open's
 * deferred purge after it): the first probe, then the thread. */
int am_pg_sync_start(am_store *st, int on, am_buf *err);
/* Logs msg through the store's logger without making it the store's last
 * error (which a failing request would then answer). */
void am_pg_sync_log(am_store *st, const char *msg);

/* ---- the other files ------------------------------------------------------ */

/* The sid of session within tx, cached for the transaction (conn.c). */
int am_tx_sid(am_store_tx *tx, const char *session, int64_t *sid);
/* The glossary's new version row after GLOSSARY_PUT (glossary.c). */
int am_glossary_keep(am_store *st, const char *id, const char *glossary_json);
/* At open: purges the sessions a crash left hidden (sessions.c), deletes
 * the hidden vocabularies it left (vocab.c). */
int sessions_purge_hidden(am_store *st);
/* PostgreSQL (sessions.c, rewrites across nodes): the start-up purge of the
 * hidden sessions no live node owns (each one's rewrite lock is free),
 * leaving those another node is filling or purging; and a deleted
 * session's purge under the lock of its sid, once a rewrite still running
 * on any node lets go (left hidden, for a later start-up purge, when that
 * takes longer than ~2 s). */
int am_pg_purge_hidden(am_store *st);
int am_pg_purge_deleted(am_store *st, int64_t sid);
int vocab_cleanup(am_store *st);

#endif
