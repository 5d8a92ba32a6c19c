/*
 * store/tx.c — write transactions, read transactions (a reader's
 * snapshot) and the group commit. The per-transaction sid cache (am_tx_sid)
 * is conn.c's, next to am_sid, so that conn.c needs nothing of this file.
 */
#include "store_int.h"

#include <assert.h>
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
    assert(tx == &tx->st->rtx.t);
    return &tx->st->rtx;
}

/* ---- group commit ----------------------------------------------------------- */

#define AM_STORE_GROUP_MAX 512

/* A queued job, on its submitter's stack. Its thread sleeps on cv until
 * the job is done or it is the head of the queue with no batch running
 * (then it leads); the leader signals exactly those threads, so a commit
 * wakes only the threads whose jobs it carried, not every waiter. */
typedef struct am_gjob {
    am_store_job_fn fn;
    void *ctx;
    int rc;
    int done;
    struct am_gjob *next;
    pthread_cond_t cv;
} am_gjob;

/* Runs one batch of jobs (the leader, without gmu): BEGIN IMMEDIATE, each
 * job in its own SAVEPOINT (a failing job is rolled back alone), COMMIT.
 * When the commit fails every job of the batch fails with its error. */
static void am_group_run(am_store *st, am_gjob *batch)
{
    int brc = st->pg ? am_pg_write_gate(st) : AM_OK;
    if (brc != AM_OK) {
        for (am_gjob *j = batch; j; j = j->next)
            j->rc = brc;
        return;
    }
    am_w_lock(st);
    brc = st->in_tx ? AM_ERR_INVALID : am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
    if (brc == AM_OK) {
        st->in_tx = 1;
        st->nested = 0;
        st->rtx.t.has_sid = 0;
        for (am_gjob *j = batch; j; j = j->next) {
            int rc = am_exec(st, &st->w, AM_S_SAVEPOINT, "");
            if (rc == AM_OK) {
                rc = j->fn(&st->rtx.t, j->ctx);
                if (am_conn_autocommit(&st->w)) { /* e.g. SQLITE_FULL: all rolled back */
                    j->rc = rc;
                    brc = rc == AM_ERR_FULL || rc == AM_ERR_UNAVAILABLE ? rc : AM_ERR_IO;
                    break;
                }
                if (rc != AM_OK)
                    am_exec(st, &st->w, AM_S_ROLLBACK_TO, "");
                int r2 = am_exec(st, &st->w, AM_S_RELEASE, "");
                if (rc == AM_OK)
                    rc = r2;
            }
            j->rc = rc;
            if (am_conn_autocommit(&st->w)) { /* SQLite rolled the batch back */
                brc = rc == AM_ERR_FULL || rc == AM_ERR_UNAVAILABLE ? rc : AM_ERR_IO;
                break;
            }
        }
        if (brc == AM_OK)
            brc = am_exec(st, &st->w, AM_S_COMMIT, "");
        if (brc != AM_OK && !am_conn_autocommit(&st->w))
            am_exec(st, &st->w, AM_S_ROLLBACK, "");
        st->in_tx = 0;
        st->rtx.t.has_sid = 0;
        am_buf_reset(&st->rtx.t.sess);
    }
    am_w_unlock(st);
    for (am_gjob *j = batch; j; j = j->next)
        if (brc != AM_OK)
            j->rc = brc;
}

int am_store_tx_group(am_store *st, am_store_job_fn fn, void *ctx)
{
    am_gjob job = {fn, ctx, AM_OK, 0, NULL, PTHREAD_COND_INITIALIZER};
    pthread_mutex_lock(&st->gmu);
    /* job lives on this stack until it is done: the leader reads job.next
     * before it sets done, and this thread waits for done below */
    *st->gtail = &job;
    st->gtail = &job.next; /* cppcheck-suppress autoVariables */
    while (!job.done) {
        if (st->gleader) {
            pthread_cond_wait(&job.cv, &st->gmu);
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
        /* Signalled under gmu: a woken thread returns (and its job, cv
         * included, goes out of scope) only after it takes gmu again. */
        for (am_gjob *j = batch, *nx; j; j = nx) {
            nx = j->next;
            j->done = 1;
            if (j != &job)
                pthread_cond_signal(&j->cv);
        }
        st->gleader = 0;
        if (st->ghead) /* the next batch's leader: the oldest queued job */
            pthread_cond_signal(&st->ghead->cv);
    }
    int rc = job.rc;
    pthread_mutex_unlock(&st->gmu);
    pthread_cond_destroy(&job.cv);
    return rc;
}
