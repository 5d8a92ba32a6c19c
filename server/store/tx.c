/*
 * store/tx.c — write transactions, read transactions (a reader's
 * snapshot) and the group commit. The per-transaction sid cache (am_tx_sid)
 * is conn.c's, next to am_sid, so that conn.c needs nothing of this file.
 */
#include "store_int.h"

#include "lockck.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- write transactions --------------------------------------------------- */

int am_store_tx_begin(am_store *st, am_store_tx **tx)
{
    *tx = NULL;
    if (st->pg) {
        int g = am_pg_write_gate(st);
        if (g)
            return g;
    }
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
    st->rtx.t.has_sid = 0;
    *tx = &st->rtx.t;
    return AM_OK;
}

static void am_tx_end(am_store *st)
{
    st->in_tx = 0;
    st->rtx.t.has_sid = 0;
    am_buf_reset(&st->rtx.t.sess);
    am_w_unlock(st);
}

int am_store_tx_commit(am_store_tx *tx)
{
    am_store *st = tx->st;
    assert(st->in_tx && st->nested == 0);
    int rc = am_exec(st, &st->w, AM_S_COMMIT, "");
    if (rc != AM_OK && !am_conn_autocommit(&st->w))
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
    if (!am_conn_autocommit(&st->w))
        am_exec(st, &st->w, AM_S_ROLLBACK, "");
    am_tx_end(st);
}

/* ---- read transactions ----------------------------------------------------- */

int am_store_rtx_begin(am_store *st, am_store_rtx **rtx)
{
    am_store_rtx *r = am_xcalloc(1, sizeof *r);
    int rc = rtx_open(st, r);
    if (rc != AM_OK) {
        free(r);
        r = NULL;
    }
    *rtx = r;
    return rc;
}

void am_store_rtx_end(am_store_rtx *rtx)
{
    if (!rtx)
        return;
    rtx_close(rtx);
    free(rtx);
}

am_store_rtx *am_store_tx_reads(am_store_tx *tx)
{
    /* the writer's transaction (st->rtx.t) or a committer's batch
     * (am_committer.rtx.t): either is the core of an am_store_rtx */
    assert(tx == &tx->st->rtx.t || tx->c->pg_writer);
    return (am_store_rtx *)(void *)((char *)tx - offsetof(am_store_rtx, t));
}

/* ---- group commit ----------------------------------------------------------- */

/*
 * A committer is a queue of jobs whose oldest waiting job's thread leads
 * the next batch. SQLite has one, on the writer: one writer is all SQLite
 * allows. PostgreSQL may have several (--pg-committers, DESIGN-postgres
 * §2.3): each further one commits on its own pinned writer connection, so
 * K batches wait for their synchronous commits at once instead of one
 * after the other, and a job goes to committer hash(key) % K, so that
 * the POSTs of one session stay in one queue, in order, and never wait on
 * their own session row lock held by another committer. (Within a node a
 * session's writers are serialized before they get here anyway: a POST
 * holds am_sess_lock until its job is committed, as PUT, DELETE, rescore
 * and replay hold it, so a session has at most one job queued per node.)
 * Correctness across committers is the same as across adaptmon nodes: the
 * session row lock taken by SESSION_STATE on a writer connection
 * (drv_pg.c), and the job's check of the seq it planned for.
 */

#define AM_STORE_GROUP_MAX 512

/* A queued job, on its submitter's stack. Its thread sleeps on cv until
 * the job is done or it is the head of the queue with no batch running
 * (then it leads); the leader signals exactly those threads, so a commit
 * wakes only the threads whose jobs it carried, not every waiter. */
typedef struct am_gjob {
    am_store_job_fn fn;
    void *ctx;
    const char *key; /* the session the job writes (borrowed), or NULL */
    int rc;
    int done;
    struct am_gjob *next;
    pthread_cond_t cv;
} am_gjob;

/* The batch's error for a job that left the connection outside any
 * transaction (SQLite rolled everything back, e.g. SQLITE_FULL). */
static int am_group_lost(int rc)
{
    return rc == AM_ERR_FULL || rc == AM_ERR_UNAVAILABLE ? rc : AM_ERR_IO;
}

/* Runs one batch on connection c with t as its jobs' transaction (the
 * caller has c to itself): BEGIN IMMEDIATE, each job in its own SAVEPOINT
 * (a failing job is rolled back alone), COMMIT. Returns AM_OK, or the
 * error that fails every job of the batch (then nothing of it is kept). */
static int am_group_tx(am_store *st, am_conn *c, am_store_tx *t, am_gjob *batch)
{
    int brc = am_exec(st, c, AM_S_BEGIN_IMM, "");
    if (brc != AM_OK)
        return brc;
    t->has_sid = 0;
    for (am_gjob *j = batch; j; j = j->next) {
        int rc = am_exec(st, c, AM_S_SAVEPOINT, "");
        if (rc == AM_OK) {
            rc = j->fn(t, j->ctx);
            if (am_conn_autocommit(c)) { /* e.g. SQLITE_FULL: all rolled back */
                j->rc = rc;
                brc = am_group_lost(rc);
                break;
            }
            if (rc != AM_OK)
                am_exec(st, c, AM_S_ROLLBACK_TO, "");
            int r2 = am_exec(st, c, AM_S_RELEASE, "");
            if (rc == AM_OK)
                rc = r2;
        }
        j->rc = rc;
        if (am_conn_autocommit(c)) { /* SQLite rolled the batch back */
            brc = am_group_lost(rc);
            break;
        }
    }
    if (brc == AM_OK)
        brc = am_exec(st, c, AM_S_COMMIT, "");
    if (brc != AM_OK && !am_conn_autocommit(c))
        am_exec(st, c, AM_S_ROLLBACK, "");
    t->has_sid = 0;
    am_buf_reset(&t->sess);
    return brc;
}

/* The first committer's batch: on the writer, under its lock, as the open
 * write transaction (st->in_tx), like any other write of this process. */
static int am_group_writer(am_store *st, am_gjob *batch)
{
    am_w_lock(st);
    int brc = AM_ERR_INVALID;
    if (!st->in_tx) {
        st->in_tx = 1;
        st->nested = 0;
        brc = am_group_tx(st, &st->w, &st->rtx.t, batch);
        st->in_tx = 0;
    }
    am_w_unlock(st);
    return brc;
}

static const char *am_gjob_key(const am_gjob *j)
{
    return j->key ? j->key : "";
}

/* Sorts a batch by key, stably (a session's jobs keep their order): every
 * batch, of any committer on any node, then takes its session row locks in
 * the same order, so two batches cannot deadlock on them (DESIGN-postgres
 * §2.3, "Lock order"). A merge sort of the list: no allocation. */
static am_gjob *am_group_sort(am_gjob *l)
{
    if (!l || !l->next)
        return l;
    am_gjob *mid = l, *fast = l->next;
    while (fast && fast->next) {
        mid = mid->next;
        fast = fast->next->next;
    }
    am_gjob *r = mid->next;
    mid->next = NULL;
    l = am_group_sort(l);
    r = am_group_sort(r);
    am_gjob *head = NULL, **t = &head;
    while (l && r) {
        am_gjob **from = strcmp(am_gjob_key(r), am_gjob_key(l)) < 0 ? &r : &l;
        *t = *from;
        *from = (*from)->next;
        t = &(*t)->next;
    }
    *t = l ? l : r;
    return head;
}

/* Runs one batch of committer cm (its leader, without cm->mu) and leaves
 * each job's result in its rc. */
static void am_group_run(am_store *st, am_committer *cm, am_gjob *batch)
{
    int brc = st->pg ? am_pg_write_gate(st) : AM_OK;
    if (brc == AM_OK && cm == st->gc) {
        brc = am_group_writer(st, batch);
    } else if (brc == AM_OK) { /* a PostgreSQL committer's own connection */
        am_lk_take(AM_LK_WRITER);
        brc = am_group_tx(st, &cm->conn, &cm->rtx.t, batch);
        am_lk_drop(AM_LK_WRITER);
    }
    for (am_gjob *j = batch; j; j = j->next)
        if (brc != AM_OK)
            j->rc = brc;
}

/* The committer of key: hash(key) % K (FNV-1a), the first for NULL. */
static am_committer *am_group_pick(am_store *st, const char *key)
{
    if (st->ngc == 1 || !key)
        return &st->gc[0];
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return &st->gc[h % st->ngc];
}

int am_store_tx_group_on(am_store *st, const char *key, am_store_job_fn fn, void *ctx)
{
    am_committer *cm = am_group_pick(st, key);
    am_gjob job = {fn, ctx, key, AM_OK, 0, NULL, PTHREAD_COND_INITIALIZER};
    pthread_mutex_lock(&cm->mu);
    /* job lives on this stack until it is done: the leader reads job.next
     * before it sets done, and this thread waits for done below */
    *cm->tail = &job;
    cm->tail = &job.next; /* cppcheck-suppress autoVariables */
    while (!job.done) {
        if (cm->leader) {
            pthread_cond_wait(&job.cv, &cm->mu);
            continue;
        }
        /* lead: take up to AM_STORE_GROUP_MAX queued jobs (ours among them) */
        cm->leader = 1;
        am_gjob *batch = cm->head, *last = batch;
        for (int n = 1; n < AM_STORE_GROUP_MAX && last->next; n++)
            last = last->next;
        cm->head = last->next;
        if (!cm->head)
            cm->tail = &cm->head;
        last->next = NULL;
        pthread_mutex_unlock(&cm->mu);
        if (st->pg) /* SQLite's single writer cannot deadlock: its order is kept */
            batch = am_group_sort(batch);
        am_group_run(st, cm, batch);
        pthread_mutex_lock(&cm->mu);
        /* Signalled under mu: a woken thread returns (and its job, cv
         * included, goes out of scope) only after it takes mu again. */
        for (am_gjob *j = batch, *nx; j; j = nx) {
            nx = j->next;
            j->done = 1;
            if (j != &job)
                pthread_cond_signal(&j->cv);
        }
        cm->leader = 0;
        if (cm->head) /* the next batch's leader: the oldest queued job */
            pthread_cond_signal(&cm->head->cv);
    }
    int rc = job.rc;
    pthread_mutex_unlock(&cm->mu);
    pthread_cond_destroy(&job.cv);
    return rc;
}

int am_store_tx_group(am_store *st, am_store_job_fn fn, void *ctx)
{
    return am_store_tx_group_on(st, NULL, fn, ctx);
}

/* ---- committers ------------------------------------------------------------- */

static void am_committer_init(am_store *st, am_committer *cm)
{
    pthread_mutex_init(&cm->mu, NULL);
    cm->tail = &cm->head;
    cm->rtx.t.st = st;
    cm->rtx.t.c = &cm->conn;
    am_buf_init(&cm->rtx.t.sess);
}

/* Frees gc[0..n) and gc (the first has no connection of its own). */
static void am_committers_free(am_committer *gc, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            am_conn_close(&gc[i].conn);
            pthread_mutex_destroy(&gc[i].conn.mu);
        }
        am_buf_cleanup(&gc[i].rtx.t.sess);
        pthread_mutex_destroy(&gc[i].mu);
    }
    free(gc);
}

void am_group_init(am_store *st)
{
    st->gc = am_xcalloc(1, sizeof *st->gc);
    st->ngc = 1;
    am_committer_init(st, &st->gc[0]);
}

void am_group_free(am_store *st)
{
    am_committers_free(st->gc, st->ngc);
    st->gc = NULL;
    st->ngc = 0;
}

int am_store_set_committers(am_store *st, size_t k, am_buf *err)
{
    if (k < 1 || k > AM_STORE_COMMITTERS_MAX) {
        am_buf_printf(err, "committers must be 1 to %d", AM_STORE_COMMITTERS_MAX);
        return AM_ERR_INVALID;
    }
    if (!st->pg || k == st->ngc)
        return AM_OK; /* SQLite: one writer */
    am_committer *gc = am_xcalloc(k, sizeof *gc);
    size_t n = 0;
    int rc = AM_OK;
    while (n < k && rc == AM_OK) {
        am_committer *cm = &gc[n++];
        am_committer_init(st, cm);
        if (n > 1) /* its mutex exists even if the open failed */
            rc = am_pg_conn_open(st, &cm->conn, 1, err);
    }
    if (rc != AM_OK) {
        am_committers_free(gc, n);
        return rc;
    }
    am_group_free(st);
    st->gc = gc;
    st->ngc = k;
    return AM_OK;
}

size_t am_store_committers(am_store *st)
{
    return st->ngc;
}
