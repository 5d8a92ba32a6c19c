/*
 * store/drv_pg.c — the PostgreSQL driver (libpq): connections, statements
 * run through the store's am_q functions (conn.c branches here on a
 * connection's kind), error mapping and the migrations of schema/pg/
 * (DESIGN-postgres.md §2; store_int.h for the design this keeps).
 *
 * Connections. As with SQLite: one writer (every write transaction and the
 * group commit's batches, under the writer's recursive mutex) and a pool of
 * readers. A reader's snapshot (rtx_open) is BEGIN ISOLATION LEVEL
 * REPEATABLE READ READ ONLY … COMMIT; reads outside a snapshot run in
 * autocommit. Writes run in READ COMMITTED (sql_pg.h BEGIN_IMM).
 *
 * Durability. Every connection sets synchronous_commit=on and
 * statement_timeout=0 at connect: a commit's wait for the synchronous
 * standby is never cancelled by adaptmon (a cancelled wait would make an
 * unreplicated commit visible, DESIGN-postgres §2.9). Nothing here cancels
 * a running statement.
 *
 * Statements. The texts are sql_pg.h's, under the names of sql.h; each
 * connection prepares a statement (protocol-level Parse, named "a<id>") on
 * first use and keeps it. A statement's parameters are kept as text until
 * its first am_q_step, which runs it (PQexecPrepared) and holds the whole
 * result: its rows are then stepped through in memory, so a callback may
 * call the store on the same connection while a walk is open, and nested
 * uses of a statement need no copy.
 *
 * Several nodes on one database (§2.5). On the writer, SESSION_STATE reads
 * the session's row FOR NO KEY UPDATE: inside a write transaction (a POST's
 * check-then-insert, am_store_tx_session_info) writers of one session on
 * every node are serialized on that row, and under READ COMMITTED the
 * locked read sees the latest committed version, so the checks of the job
 * (incarnation, glossary version, last seq, version) are exact across
 * nodes, as SQLite's single writer makes them on one.
 *
 * Errors (§2.9). SQLSTATE 23505 unique: AM_ERR_CONFLICT; 23503 foreign
 * key: AM_ERR_NOTFOUND; 23502 not null, 23514 check: AM_ERR_INVALID;
 * 53100/53200 disk or memory full: AM_ERR_FULL; a lost connection (class
 * 08, 57P01-57P03 shutdown, 25006 read-only: connected to a standby after a
 * failover, 40001/40P01 serialization or deadlock): AM_ERR_UNAVAILABLE,
 * which the API answers 503 with Retry-After. A connection lost while a
 * transaction is open fails that transaction's every further statement
 * (a reconnect would run them in autocommit); the next BEGIN, or any
 * statement outside a transaction, reconnects. A COMMIT whose connection
 * breaks is ambiguous: AM_ERR_UNAVAILABLE, and the client's retry with the
 * same id gets the stored result if the commit happened.
 *
 * Migrations: open.c (am_store_open_pg), with the statements of this file.
 */
#include "store_int.h"

#include "sql_pg.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The statements' PostgreSQL text, by id (the order of sql.h, which
 * tests/unit/test_sql_pg.c checks). */
static const char *const am_pg_sql[AM_S__COUNT] = {
#define AM_PG_STMT_SQL(name, sql) sql,
    AM_PG_STMTS(AM_PG_STMT_SQL)
#undef AM_PG_STMT_SQL
};

/* The writer's SESSION_STATE: the session's row locked until the end of
 * the write transaction (a no-op outside one). */
#define AM_PG_LOCK_SUFFIX " FOR NO KEY UPDATE"
#define AM_PG_LOCK_NAME "a_lock"

/* Set on every connection: no commit wait is ever cancelled (§2.9). */
#define AM_PG_SESSION_SETUP                                                                        \
    "SET synchronous_commit = on; SET statement_timeout = 0; "                                     \
    "SET idle_in_transaction_session_timeout = 0; SET client_encoding = 'UTF8'; "                  \
    "SET client_min_messages = warning"

/* ---- errors --------------------------------------------------------------- */

/* The am_err of a failed result r on c (r may be NULL: no result). */
static int pg_code(am_conn *c, const PGresult *r)
{
    if (PQstatus(c->pg) != CONNECTION_OK)
        return AM_ERR_UNAVAILABLE;
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!s)
        return AM_ERR_IO;
    if (!strcmp(s, "23505"))
        return AM_ERR_CONFLICT;
    if (!strcmp(s, "23503"))
        return AM_ERR_NOTFOUND;
    if (!strcmp(s, "23502") || !strcmp(s, "23514"))
        return AM_ERR_INVALID;
    if (!strcmp(s, "53100") || !strcmp(s, "53200"))
        return AM_ERR_FULL;
    if (!strncmp(s, "08", 2) || !strcmp(s, "57P01") || !strcmp(s, "57P02") || !strcmp(s, "57P03") ||
        !strcmp(s, "25006") || !strcmp(s, "40001") || !strcmp(s, "40P01"))
        return AM_ERR_UNAVAILABLE;
    return AM_ERR_IO;
}

/* Maps r's failure (NULL: the connection's) to an am_err and records
 * "what: message (SQLSTATE)". A connection left unusable (a standby after a
 * failover, a server shutting down) is dropped, to be reopened by the next
 * statement that may reconnect. */
static int pg_fail(am_store *st, am_conn *c, const PGresult *r, const char *what)
{
    int code = pg_code(c, r);
    const char *s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *m = r ? PQresultErrorMessage(r) : "";
    if (!m || !*m)
        m = PQerrorMessage(c->pg);
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %.*s (%s)", what, (int)strcspn(m, "\n"), m, s ? s : "no result");
    am_store_note(st, code, msg);
    if (code == AM_ERR_UNAVAILABLE && PQstatus(c->pg) == CONNECTION_OK && s &&
        strcmp(s, "40001") != 0 && strcmp(s, "40P01") != 0) {
        PQfinish(c->pg); /* reopened later: c->pg NULL counts as broken */
        c->pg = NULL;
    }
    return code;
}

/* ---- connections ---------------------------------------------------------- */

/* libpq's default notice processor prints a server's NOTICE or WARNING
 * raw on stderr, which breaks --log-format json and logfmt (a restart's
 * "relation ... already exists, skipping" from the migrations was the
 * first line of a JSON log). The session setup keeps notices on the
 * server (client_min_messages); a warning goes to the store's logger as
 * an error does, one line, or nowhere before serve sets the logger.
 * arg: the store (borrowed). */
static void pg_notice(void *arg, const char *message)
{
    am_store *st = arg;
    char msg[512];
    snprintf(msg, sizeof msg, "PostgreSQL: %.*s", (int)strcspn(message, "\n"), message);
    pthread_mutex_lock(&st->errmu); /* the logger's one call at a time (store.h) */
    if (st->logfn)
        st->logfn(st->logctx, msg);
    pthread_mutex_unlock(&st->errmu);
}

/* Connects c to c->pg_info and sets the session up; the prepared
 * statements of an earlier connection are gone. */
static int pg_connect(am_store *st, am_conn *c, am_buf *err)
{
    if (c->pg)
        PQfinish(c->pg);
    memset(c->pg_prep, 0, sizeof c->pg_prep);
    c->pg_prep_lock = 0;
    c->pg_intx = 0;
    /* connect_timeout first: a conninfo's own value (expanded after it)
     * overrides it; without one a dead host would block for minutes */
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *vals[] = {"5", "adaptmon", c->pg_info, NULL};
    c->pg = PQconnectdbParams(keys, vals, 1);
    PGresult *r = NULL;
    if (c->pg)
        PQsetNoticeProcessor(c->pg, pg_notice, st);
    if (c->pg && PQstatus(c->pg) == CONNECTION_OK)
        r = PQexec(c->pg, AM_PG_SESSION_SETUP);
    if (r && PQresultStatus(r) == PGRES_COMMAND_OK) {
        PQclear(r);
        return AM_OK;
    }
    char msg[512];
    const char *m = r ? PQresultErrorMessage(r) : c->pg ? PQerrorMessage(c->pg) : "out of memory";
    snprintf(msg, sizeof msg, "cannot connect to PostgreSQL: %.*s", (int)strcspn(m, "\n"), m);
    PQclear(r);
    PQfinish(c->pg);
    c->pg = NULL;
    if (err)
        am_buf_appends(err, msg);
    am_store_note(st, AM_ERR_UNAVAILABLE, msg);
    return AM_ERR_UNAVAILABLE;
}

int am_pg_conn_open(am_store *st, am_conn *c, int writer, am_buf *err)
{
    memset(c, 0, sizeof *c);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    if (writer)
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&c->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    c->pg_info = st->path;
    c->pg_writer = writer;
    return pg_connect(st, c, err);
}

void am_pg_conn_close(am_conn *c)
{
    PQfinish(c->pg);
    c->pg = NULL;
}

/* A rewrite's pinned connection broke: it is not reopened, since the
 * session's rewrite lock went with it and another node may hold it now;
 * the rewrite fails (and its caller answers 503). */
static int pg_pin_broken(am_store *st, am_conn *c)
{
    c->pg_intx = 0;
    am_store_note(st, AM_ERR_UNAVAILABLE,
                  "the rewrite's connection to PostgreSQL broke: its lock is gone");
    return AM_ERR_UNAVAILABLE;
}

/* ---- statements ------------------------------------------------------------ */

int am_pg_q_vopen(am_store *st, am_conn *c, enum am_stmt_id id, am_q *q, const char *fmt,
                  va_list ap)
{
    q->c = c;
    q->id = id;
    q->s = NULL;
    q->pg = 1;
    q->np = q->ran = q->nrows = 0;
    q->row.s = NULL;
    q->row.r = NULL;
    q->row.i = -1;
    for (; *fmt; fmt++, q->np++) {
        if (q->np == AM_PG_PARAMS) {
            am_store_note(st, AM_ERR_INTERNAL, "too many statement parameters");
            return AM_ERR_INTERNAL;
        }
        if (*fmt == 't') {
            q->pv[q->np] = va_arg(ap, const char *);
        } else {
            assert(*fmt == 'i');
            snprintf(q->pi[q->np], sizeof q->pi[q->np], "%lld", (long long)va_arg(ap, int64_t));
            q->pv[q->np] = q->pi[q->np];
        }
    }
    return AM_OK;
}

int am_pg_q_bind_row(am_q *q, int first, am_row *row)
{
    int n = PQnfields(row->r);
    if (first < 1 || first - 1 + n > AM_PG_PARAMS)
        return AM_ERR_INTERNAL;
    for (int k = 0; k < n; k++)
        q->pv[first - 1 + k] =
            PQgetisnull(row->r, row->i, k) ? NULL : PQgetvalue(row->r, row->i, k);
    if (first - 1 + n > q->np)
        q->np = first - 1 + n;
    return AM_OK;
}

/* The prepared statement's name for q on its connection, prepared now if
 * it is not yet; NULL on failure (recorded in *rc). */
static const char *pg_prepared(am_store *st, am_q *q, char name[16], int *rc)
{
    am_conn *c = q->c;
    int lock = c->pg_writer && q->id == AM_S_SESSION_STATE;
    unsigned char *done = lock ? &c->pg_prep_lock : &c->pg_prep[q->id];
    if (lock)
        snprintf(name, 16, "%s", AM_PG_LOCK_NAME);
    else
        snprintf(name, 16, "a%d", (int)q->id);
    if (*done)
        return name;
    am_buf sql;
    am_buf_init(&sql);
    am_buf_appends(&sql, am_pg_sql[q->id]);
    if (lock)
        am_buf_appends(&sql, AM_PG_LOCK_SUFFIX);
    PGresult *r = PQprepare(c->pg, name, am_buf_str(&sql), 0, NULL);
    am_buf_cleanup(&sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        *rc = pg_fail(st, c, r, am_stmt_name[q->id]);
        PQclear(r);
        return NULL;
    }
    PQclear(r);
    *done = 1;
    return name;
}

/* Runs q on its connection and keeps its result (one attempt). */
static int pg_run_once(am_store *st, am_q *q)
{
    am_conn *c = q->c;
    int begins = q->id == AM_S_BEGIN_IMM;
    int ends = q->id == AM_S_COMMIT || q->id == AM_S_ROLLBACK;
    if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
        if (c->pg_pinned)
            return pg_pin_broken(st, c);
        if (c->pg_intx && !begins) {
            /* the transaction died with the connection: fail it to its
             * end, never run its rest in autocommit on a new connection */
            if (ends)
                c->pg_intx = 0;
            am_store_note(st, AM_ERR_UNAVAILABLE,
                          "the connection to PostgreSQL broke inside a transaction");
            return AM_ERR_UNAVAILABLE;
        }
        int rc = pg_connect(st, c, NULL);
        if (rc)
            return rc;
    }
    char name[16];
    int rc = AM_OK;
    if (!pg_prepared(st, q, name, &rc))
        return rc;
    PGresult *r = PQexecPrepared(c->pg, name, q->np, q->pv, NULL, NULL, 0);
    ExecStatusType es = PQresultStatus(r);
    if (es == PGRES_TUPLES_OK || es == PGRES_COMMAND_OK) {
        /* COMMIT of a transaction a failed statement aborted answers
         * "ROLLBACK", not an error: nothing was stored */
        if (q->id == AM_S_COMMIT && !strcmp(PQcmdStatus(r), "ROLLBACK")) {
            PQclear(r);
            c->pg_intx = 0;
            am_store_note(st, AM_ERR_IO, "COMMIT: the transaction had failed and was rolled back");
            return AM_ERR_IO;
        }
        q->row.r = r;
        q->nrows = PQntuples(r);
        const char *n = PQcmdTuples(r);
        c->pg_changes = n && *n ? strtoll(n, NULL, 10) : 0;
        if (begins)
            c->pg_intx = 1;
        else if (ends)
            c->pg_intx = 0;
        return AM_OK;
    }
    rc = pg_fail(st, c, r, am_stmt_name[q->id]);
    PQclear(r);
    if (ends)
        c->pg_intx = 0;
    return rc;
}

/* Whether a failed statement on c may run once more on a new connection: c
 * is a reader outside a snapshot (it only reads) whose connection broke,
 * say a server restart or failover the pool's idle connection learns of
 * only by using it. A writer's statement is never run twice: its first
 * run may have committed. */
static int pg_retry(const am_conn *c, int rc)
{
    return rc == AM_ERR_UNAVAILABLE && !c->pg_writer && !c->pg_intx &&
           (!c->pg || PQstatus(c->pg) != CONNECTION_OK);
}

/* Runs q on its connection and keeps its result. */
static int pg_run(am_store *st, am_q *q)
{
    int rc = pg_run_once(st, q);
    if (pg_retry(q->c, rc))
        rc = pg_run_once(st, q);
    return rc;
}

int am_pg_q_step(am_store *st, am_q *q)
{
    if (!q->ran) {
        int rc = pg_run(st, q);
        if (rc)
            return rc;
        q->ran = 1;
    }
    if (q->row.i + 1 < q->nrows) {
        q->row.i++;
        return 1;
    }
    return 0;
}

void am_pg_q_close(am_q *q)
{
    PQclear(q->row.r);
    q->row.r = NULL;
    q->pg = 0;
}

/* am_pg_exec_const's one attempt; a BEGIN starts afresh on a broken
 * connection, anything else inside a transaction that broke fails. */
static int pg_exec_const_once(am_store *st, am_conn *c, const char *sql, const char *what)
{
    if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
        if (c->pg_pinned)
            return pg_pin_broken(st, c);
        if (c->pg_intx && strncmp(sql, "BEGIN", 5) != 0) {
            c->pg_intx = 0;
            am_store_note(st, AM_ERR_UNAVAILABLE,
                          "the connection to PostgreSQL broke inside a transaction");
            return AM_ERR_UNAVAILABLE;
        }
        int rc = pg_connect(st, c, NULL);
        if (rc)
            return rc;
    }
    PGresult *r = PQexec(c->pg, sql);
    int rc = AM_OK;
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = pg_fail(st, c, r, what);
    PQclear(r);
    /* a broken connection has no transaction (PQTRANS_UNKNOWN) */
    c->pg_intx =
        c->pg && PQstatus(c->pg) == CONNECTION_OK && PQtransactionStatus(c->pg) != PQTRANS_IDLE;
    return rc;
}

int am_pg_exec_const(am_store *st, am_conn *c, const char *sql, const char *what)
{
    int rc = pg_exec_const_once(st, c, sql, what);
    if (!strncmp(sql, "BEGIN", 5) && pg_retry(c, rc))
        rc = pg_exec_const_once(st, c, sql, what);
    return rc;
}

int64_t am_pg_row_int(am_row *row, int i)
{
    if (PQgetisnull(row->r, row->i, i))
        return 0;
    return strtoll(PQgetvalue(row->r, row->i, i), NULL, 10);
}

const char *am_pg_row_text(am_row *row, int i)
{
    if (PQgetisnull(row->r, row->i, i))
        return NULL;
    return PQgetvalue(row->r, row->i, i);
}

/* ---- a rewrite's pinned view (sessions.c: rewrites across nodes) ---------- */

/* A view is an am_store of its own whose writer is a connection opened for
 * one rewrite and pinned to it (never reopened: pg_pin_broken), and whose
 * errors, write gate and counters are its parent's (parent set). Every
 * store function works on a view unchanged: its writes take the view's
 * writer; it has no readers, so its reads use that writer too. */
/* Closes view v (am_pg_view_open): its connection, and with it its lock. */
void am_pg_view_close(am_store *v)
{
    am_pg_conn_close(&v->w);
    pthread_mutex_destroy(&v->w.mu);
    pthread_mutex_destroy(&v->errmu);
    am_buf_cleanup(&v->errmsg);
    am_buf_cleanup(&v->rtx.t.sess);
    free(v->path);
    free(v);
}

/* A view of st on a new pinned connection (caller closes it with
 * am_pg_view_close); NULL when it cannot connect (recorded in st). */
am_store *am_pg_view_open(am_store *st)
{
    am_store *v = am_xcalloc(1, sizeof *v);
    v->path = am_xstrdup(st->path);
    v->pg = 1;
    v->parent = st;
    v->durability = st->durability;
    v->schema_version = st->schema_version;
    v->rtx.t.st = v;
    v->rtx.t.c = &v->w;
    am_buf_init(&v->errmsg);
    am_buf_init(&v->rtx.t.sess);
    pthread_mutex_init(&v->errmu, NULL);
    if (am_pg_conn_open(v, &v->w, 1, NULL) != AM_OK) {
        am_pg_view_close(v);
        return NULL;
    }
    v->w.pg_pinned = 1;
    return v;
}

/* Runs sql with n text parameters on v's pinned connection (locked by the
 * caller); *out gets the result (caller clears) when it has rows. */
int am_pg_view_query(am_store *v, const char *sql, int n, const char *const *p, PGresult **out,
                     const char *what)
{
    *out = NULL;
    if (!v->w.pg || PQstatus(v->w.pg) != CONNECTION_OK)
        return pg_pin_broken(v, &v->w);
    PGresult *r = PQexecParams(v->w.pg, sql, n, NULL, p, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int rc = pg_fail(v, &v->w, r, what);
        PQclear(r);
        return rc;
    }
    *out = r;
    return AM_OK;
}
