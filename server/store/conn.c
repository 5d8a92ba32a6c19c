/*
 * store/conn.c — the store's plumbing: error mapping and the last error,
 * statements in use (open, bind, step, close), connections and the reader
 * pool, the writer's lock and its nested writes (store_int.h).
 */
#include "store_int.h"

#include "lockck.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- errors --------------------------------------------------------------- */

/* Maps the connection's last error to an am_err and records its message.
 * Call before the connection runs anything else. */
int am_db_fail(am_store *st, sqlite3 *db, const char *what)
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

/* ---- statements in use ---------------------------------------------------- */

/* Takes statement id of connection c and binds the arguments described by
 * fmt: 't' const char * (NULL binds NULL), 'i' int64_t. */
static int am_q_vopen(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt,
                      va_list ap)
{
    if (c->pg_info) /* a PostgreSQL connection, even while broken */
        return am_pg_q_vopen(st, c, id, q, fmt, ap);
    q->pg = 0;
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
    q->row.s = s;
    q->row.r = NULL;
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

int am_q_open(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = am_q_vopen(st, c, id, q, fmt, ap);
    va_end(ap);
    return rc;
}

/* Steps q: 1 for a row, 0 when done, a negative am_err on failure. */
int am_q_step(am_store *st, am_q *q)
{
    if (q->pg)
        return am_pg_q_step(st, q);
    int rc = sqlite3_step(q->s);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return am_db_fail(st, q->c->db, am_stmt_name[q->id]);
}

/* Releases q: resets a cached statement, finalizes a temporary one. */
void am_q_close(am_q *q)
{
    if (q->pg) {
        am_pg_q_close(q);
        return;
    }
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

/* store_each's walk, with the arguments in ap. */
static int store_veach(am_store *st, am_conn *c, enum am_stmt_id id, store_row_fn fn, void *ctx,
                       const char *fmt, va_list ap)
{
    am_q q;
    int rc = am_q_vopen(st, c, id, &q, fmt, ap);
    if (rc)
        return rc;
    while ((rc = am_q_step(st, &q)) > 0) {
        int r = fn(ctx, am_q_row(&q));
        if (r != 0) {
            rc = r;
            break;
        }
    }
    am_q_close(&q);
    return rc;
}

int store_each(am_store *st, am_conn *c, enum am_stmt_id id, store_row_fn fn, void *ctx,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = store_veach(st, c, id, fn, ctx, fmt, ap);
    va_end(ap);
    return rc;
}

/* store_get's row: the columns through the destinations, then stop (1). */
typedef struct get_cols {
    const store_col *cols;
    size_t n;
} get_cols;

static int get_row(void *ctx, am_row *row)
{
    const get_cols *g = ctx;
    for (size_t i = 0; i < g->n; i++) {
        if (g->cols[i].type == STORE_COL_INT && g->cols[i].to.i)
            *g->cols[i].to.i = row_int(row, (int)i);
        else if (g->cols[i].type == STORE_COL_STR && g->cols[i].to.s)
            *g->cols[i].to.s = row_str(row, (int)i);
    }
    return 1;
}

int store_get(am_store *st, am_conn *c, enum am_stmt_id id, const store_col *cols, size_t ncols,
              const char *fmt, ...)
{
    get_cols g = {cols, ncols};
    va_list ap;
    va_start(ap, fmt);
    int rc = store_veach(st, c, id, get_row, &g, fmt, ap);
    va_end(ap);
    return rc == 1 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
}

int store_ids_push(void *ctx, am_row *row)
{
    store_ids *ids = ctx;
    ids->v[ids->n++] = row_int(row, 0);
    return ids->n == sizeof ids->v / sizeof ids->v[0];
}

int store_count_row(void *ctx, am_row *row)
{
    const store_counts *p = ctx;
    return p->fn(p->ctx, row_text(row, 0), row_int(row, 1));
}

int store_exec_sid(am_store_tx *tx, int64_t sid, const enum am_stmt_id *ids, size_t n)
{
    int rc = AM_OK;
    for (size_t i = 0; i < n && rc == AM_OK; i++)
        rc = am_exec(tx->st, tx->c, ids[i], "i", sid);
    return rc;
}

int store_collect(void *ctx, am_row *row)
{
    store_rows *r = ctx;
    size_t m = strlen(r->kinds);
    r->v = vec_grow(r->v, &r->cap, (r->n + 1) * m - 1, sizeof *r->v, 16 * m);
    store_cell *c = &r->v[r->n * m];
    for (size_t j = 0; j < m; j++) {
        c[j].i = r->kinds[j] == 'i' ? row_int(row, (int)j) : 0;
        c[j].s = r->kinds[j] == 't' ? row_str(row, (int)j) : NULL;
    }
    r->n++;
    return 0;
}

void store_rows_free(store_rows *r)
{
    size_t m = strlen(r->kinds);
    for (size_t k = 0; k < r->n * m; k++)
        free(r->v[k].s);
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

void *vec_grow(void *v, size_t *cap, size_t k, size_t size, size_t first)
{
    if (k < *cap)
        return v;
    *cap = *cap ? 2 * *cap : first;
    return am_xrealloc(v, *cap * size);
}

/* Pages the connection has written to the database (its WAL) so far. */
static int64_t am_pages_written(sqlite3 *db)
{
    int cur = 0, hi = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
    return cur;
}

/* Runs a statement that returns no rows (or whose rows are ignored). */
int am_exec(am_store *st, am_conn *c, enum am_stmt_id id, const char *fmt, ...)
{
    am_q q;
    va_list ap;
    va_start(ap, fmt);
    int rc = am_q_vopen(st, c, id, &q, fmt, ap);
    va_end(ap);
    if (rc)
        return rc;
    if (c == &st->w && id == AM_S_BEGIN_IMM && c->db)
        st->w_pages0 = am_pages_written(c->db);
    rc = am_q_step(st, &q);
    if (rc > 0)
        rc = AM_OK;
    am_q_close(&q);
    if (c == &st->w && id == AM_S_COMMIT && rc == AM_OK && c->db) {
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

char *am_col_str(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    if (!t)
        return NULL;
    return am_xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i));
}

/* ---- the driver seam (drv.h) ---------------------------------------------- */

/* Each function branches on the row's or connection's kind (SQLite or
 * PostgreSQL, drv_pg.c): one predictable branch on the SQLite path. */
int64_t row_int(am_row *row, int i)
{
    if (row->r)
        return am_pg_row_int(row, i);
    return sqlite3_column_int64(row->s, i);
}

const char *row_text(am_row *row, int i)
{
    if (row->r)
        return am_pg_row_text(row, i);
    return (const char *)sqlite3_column_text(row->s, i);
}

char *row_str(am_row *row, int i)
{
    if (row->r) {
        const char *t = am_pg_row_text(row, i);
        return t ? am_xstrdup(t) : NULL;
    }
    return am_col_str(row->s, i);
}

int row_count(am_row *row)
{
    if (row->r)
        return PQnfields(row->r);
    return sqlite3_column_count(row->s);
}

am_row *am_q_row(am_q *q)
{
    return &q->row;
}

int64_t am_changes(am_conn *conn)
{
    if (conn->pg_info)
        return conn->pg_changes;
    return sqlite3_changes(conn->db);
}

int am_conn_autocommit(am_conn *c)
{
    if (c->db)
        return sqlite3_get_autocommit(c->db);
    return !c->pg || PQstatus(c->pg) != CONNECTION_OK || PQtransactionStatus(c->pg) == PQTRANS_IDLE;
}

/* sqlite3_bind_value keeps each value's storage class: a purge's key
 * range compares as the stored keys do. */
int am_q_bind_row(am_store *st, am_q *q, int first, am_row *row)
{
    if (q->pg) {
        int rc = am_pg_q_bind_row(q, first, row);
        if (rc)
            am_store_note(st, rc, "binding a row: too many parameters");
        return rc;
    }
    sqlite3_stmt *src = row->s;
    for (int k = 0; k < sqlite3_column_count(src); k++)
        if (sqlite3_bind_value(q->s, first + k, sqlite3_column_value(src, k)) != SQLITE_OK)
            return am_db_fail(st, q->c->db, am_stmt_name[q->id]);
    return AM_OK;
}

int64_t am_q_steps(am_q *q)
{
    if (q->pg)
        return 1; /* a statement's work is the server's: one unit each */
    return (int64_t)sqlite3_stmt_status(q->s, SQLITE_STMTSTATUS_VM_STEP, 1);
}

/* ---- connections ---------------------------------------------------------- */

void am_conn_close(am_conn *c)
{
    if (c->pg)
        am_pg_conn_close(c);
    if (!c->db)
        return;
    for (int i = 0; i < AM_S__COUNT; i++)
        sqlite3_finalize(c->stmt[i]);
    memset(c->stmt, 0, sizeof c->stmt);
    sqlite3_close(c->db);
    c->db = NULL;
}

int am_conn_open(am_conn *c, const char *path, int flags, int recursive, am_buf *err)
{
    return am_conn_open_vfs(c, path, flags, recursive, NULL, err);
}

int am_conn_open_vfs(am_conn *c, const char *path, int flags, int recursive, const char *vfs,
                     am_buf *err)
{
    memset(c, 0, sizeof *c);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    if (recursive)
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    int rc = sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX, vfs);
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
int am_conn_exec(am_conn *c, const char *sql, am_buf *err, const char *what)
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
int am_conn_int(am_conn *c, const char *sql, int64_t *out)
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

void am_pool_init(am_store *st)
{
    atomic_init(&st->next_reader, 0);
    atomic_init(&st->r_waits, 0);
    atomic_init(&st->r_waiting, 0);
    pthread_mutex_init(&st->rmu, NULL);
    pthread_cond_init(&st->rcv, NULL);
}

void am_pool_free(am_store *st)
{
    for (size_t i = 0; i < st->nr; i++) {
        am_conn_close(&st->r[i]);
        pthread_mutex_destroy(&st->r[i].mu);
    }
    free(st->r);
    st->r = NULL;
    st->nr = 0;
    pthread_cond_destroy(&st->rcv);
    pthread_mutex_destroy(&st->rmu);
}

int am_store_set_readers(am_store *st, size_t n, am_buf *err)
{
    if (n < 1 || n > AM_STORE_READERS_MAX) {
        am_buf_printf(err, "readers must be 1 to %d", AM_STORE_READERS_MAX);
        return AM_ERR_INVALID;
    }
    if (st->memory || n == st->nr)
        return AM_OK; /* ":memory:" reads through the writer */
    /* a new pool (a mutex must not be moved): the old one closed first */
    for (size_t i = 0; i < st->nr; i++) {
        am_conn_close(&st->r[i]);
        pthread_mutex_destroy(&st->r[i].mu);
    }
    free(st->r);
    st->r = am_xcalloc(n, sizeof *st->r);
    st->nr = 0;
    int rc = AM_OK;
    for (size_t i = 0; i < n && rc == AM_OK; i++) {
        rc = st->pg ? am_pg_conn_open(st, &st->r[i], 0, err)
                    : am_conn_open(&st->r[i], st->path, SQLITE_OPEN_READONLY, 0, err);
        st->r[i].pool = st;
        st->nr++; /* its mutex exists even if the open failed */
    }
    return rc;
}

int64_t am_store_reader_waits(am_store *st)
{
    return (int64_t)atomic_load(&st->r_waits);
}

/* A free pooled reader, locked, or NULL when all are busy. */
static am_conn *reader_try(am_store *st)
{
    unsigned start = atomic_fetch_add_explicit(&st->next_reader, 1, memory_order_relaxed);
    for (size_t i = 0; i < st->nr; i++) {
        am_conn *c = &st->r[(start + i) % st->nr];
        if (pthread_mutex_trylock(&c->mu) == 0)
            return c;
    }
    return NULL;
}

/* A reader for one read call; release with am_reader_put. When every
 * reader is busy this waits for any of them to be put back, not for one
 * in particular: the caller holds no reader (lockck.h, checked), so each
 * busy one is held by a thread that will put it back without waiting for
 * anything this thread holds. */
am_conn *am_reader_get(am_store *st)
{
    if (st->nr == 0) {
        am_lk_take(AM_LK_WRITER); /* ":memory:": the writer reads */
        pthread_mutex_lock(&st->w.mu);
        return &st->w;
    }
    am_lk_take(AM_LK_READER);
    am_conn *c = reader_try(st);
    if (c)
        return c;
    atomic_fetch_add(&st->r_waits, 1);
    pthread_mutex_lock(&st->rmu);
    /* counted before the next try: a put that misses the count unlocked
     * its reader before it looked, so that try finds the reader free */
    atomic_fetch_add(&st->r_waiting, 1);
    while (!(c = reader_try(st)))
        pthread_cond_wait(&st->rcv, &st->rmu);
    atomic_fetch_sub(&st->r_waiting, 1);
    pthread_mutex_unlock(&st->rmu);
    return c;
}

void am_reader_put(am_conn *c)
{
    am_store *st = c->pool;
    am_lk_drop(st ? AM_LK_READER : AM_LK_WRITER);
    pthread_mutex_unlock(&c->mu);
    if (!st)
        return;
    atomic_thread_fence(memory_order_seq_cst); /* the unlock before the count's load */
    if (atomic_load(&st->r_waiting) == 0)
        return; /* the common case: no lock taken */
    pthread_mutex_lock(&st->rmu);
    pthread_cond_signal(&st->rcv);
    pthread_mutex_unlock(&st->rmu);
}

/* Groups several reads into one snapshot (SAVEPOINT works inside the
 * writer's open transaction too, for ":memory:"). */
static int read_begin(am_store *st, am_conn *c)
{
    if (c->pg_info)
        return am_pg_exec_const(st, c, AM_PG_SQL_SNAPSHOT, "snapshot");
    return am_exec(st, c, AM_S_SAVEPOINT, "");
}

static void read_end(am_store *st, am_conn *c)
{
    if (c->pg_info) {
        if (am_pg_exec_const(st, c, "COMMIT", "snapshot end") != AM_OK && c->pg_intx)
            am_pg_exec_const(st, c, "ROLLBACK", "snapshot end");
        return;
    }
    if (am_exec(st, c, AM_S_RELEASE, "") != AM_OK && !sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, AM_SQL_ROLLBACK, NULL, NULL, NULL);
}

/* Looks up a session's sid on connection c. */
int am_sid(am_store *st, am_conn *c, const char *id, int64_t *sid)
{
    return store_get(st, c, AM_S_SID, COLS(col_int(sid)), "t", id);
}

/* The sid of session within tx (cached for the transaction). */
int am_tx_sid(am_store_tx *tx, const char *session, int64_t *sid)
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

int rtx_open(am_store *st, am_store_rtx *r)
{
    memset(r, 0, sizeof *r);
    am_conn *c = am_reader_get(st);
    int rc = read_begin(st, c);
    if (rc != AM_OK) {
        am_reader_put(c);
        return rc;
    }
    r->t.st = st;
    r->t.c = c;
    am_buf_init(&r->t.sess);
    return AM_OK;
}

int rtx_open_sid(am_store *st, am_store_rtx *r, const char *session, int64_t *sid)
{
    int rc = rtx_open(st, r);
    if (rc == AM_OK && (rc = am_tx_sid(&r->t, session, sid)) != AM_OK)
        rtx_close(r);
    return rc;
}

void rtx_close(am_store_rtx *r)
{
    read_end(r->t.st, r->t.c);
    am_reader_put(r->t.c);
    am_buf_cleanup(&r->t.sess);
}

/* ---- writes outside transactions ------------------------------------------ */

/* Locks the writer. Single statements then run in autocommit mode (or in
 * the caller's own open transaction). */
void am_w_lock(am_store *st)
{
    am_lk_take(AM_LK_WRITER);
    atomic_fetch_add(&st->w_waiting, 1);
    pthread_mutex_lock(&st->w.mu);
    atomic_fetch_sub(&st->w_waiting, 1);
}

/* Between the steps of a long chunked write (vocabulary upload and drop):
 * the writer mutex is not fair, and a thread that unlocks and locks again
 * at once usually wins it back, so other writers (the group commit) could
 * wait for the whole upload. Waits, at most about 10 ms, until the threads
 * waiting for the writer have had it. Called with the writer unlocked. */
void am_w_handoff(am_store *st)
{
    for (int i = 0; i < 200 && atomic_load(&st->w_waiting) > 0; i++) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

void am_w_unlock(am_store *st)
{
    am_lk_drop(AM_LK_WRITER);
    pthread_mutex_unlock(&st->w.mu);
}

/* Locks the writer and starts a multi-statement write: BEGIN IMMEDIATE, or
 * a SAVEPOINT inside the calling thread's open transaction. */
int am_w_begin(am_store *st)
{
    if (st->pg) { /* --pg-require-sync (pg_sync.c) */
        int g = am_pg_write_gate(st);
        if (g)
            return g;
    }
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
int am_w_end(am_store *st, int rc)
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
        if (rc != AM_OK && !am_conn_autocommit(c))
            am_exec(st, c, AM_S_ROLLBACK, "");
    } else if (!am_conn_autocommit(c)) {
        am_exec(st, c, AM_S_ROLLBACK, "");
    }
    am_w_unlock(st);
    return rc;
}
