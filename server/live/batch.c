/* batch.c — batches: items posted in order, a group commit per chunk (see
 * ingest.h). */
#include "ingest_internal.h"

#include "events.h" /* am_events_publish (SSE) */
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* ---- batches --------------------------------------------------------------- */

/* Items scored per group-commit job of a batch, at most, and the request
 * bytes (canonical text) after which a chunk ends early: one job holds the
 * write lock while it writes its segments, so a long batch commits in
 * bounded steps and other sessions' writes get the lock in between, each
 * waiting at most about one chunk's write (bench/batch.py measures it).
 * The chunk's plans are its working memory, bounded the same way. */
/* AM_BATCH_CHUNK: ingest.h */
#define AM_BATCH_CHUNK_BYTES (256u << 10)

/* The group-commit job of a batch chunk: the plans in order, all or none
 * (the job's savepoint). */
typedef struct am_batch_job {
    am_plan *plans;
    size_t n;
    int stale;
} am_batch_job;

static int am_batch_job_run(am_store_tx *tx, void *ctx)
{
    am_batch_job *j = ctx;
    int rc = AM_OK;
    for (size_t i = 0; i < j->n && rc == AM_OK; i++) {
        rc = am_post_job(tx, &j->plans[i]);
        j->stale |= j->plans[i].stale;
    }
    return rc;
}

/* The first item of reqs (an id seen before) as a re-post: 200 with the
 * stored result when the body is the same, else a 409. */
static int batch_known(am_store_rtx *rtx, const char *session, const am_seg_req *req,
                       am_batch_item *it, int *retry)
{
    int64_t seq;
    char *rq = NULL, *rs = NULL;
    /* on the chunk's snapshot: never a second reader (lockck.h) */
    int rc = am_store_tx_segment_get(rtx, session, req->id, &seq, &rq, &rs);
    if (rc == AM_OK && !strcmp(rq, req->canonical)) {
        it->status = 200;
        it->result = rs;
        rs = NULL;
    } else if (rc == AM_OK) {
        rc = AM_ERR_CONFLICT;
        am_failp(&it->fail, AM_P_CONFLICT, "id",
                 "segment '%s' was posted before with a different body; PUT "
                 "/v1/sessions/%s/segments/%s replaces it",
                 req->id, session, req->id);
    } else if (rc == AM_ERR_NOTFOUND) {
        *retry = 1; /* deleted meanwhile */
        am_failp(&it->fail, AM_P_UNAVAILABLE, NULL,
                 "the session changed while the batch was scored; retry");
    } else {
        am_failp(&it->fail, AM_P_INTERNAL, NULL,
                 "storage error: reading the stored segment failed");
    }
    free(rq);
    free(rs);
    return rc;
}

/* One attempt at the next chunk of a batch (reqs[0..n)): the items are
 * scored in order on one read snapshot under the session's lock, each
 * seeing the earlier ones through an in-memory overlay (am_mem with base),
 * then written by one group-commit job. *done: how many items are finished
 * (stored or answered 200); on failure items[*done] holds it, with *retry
 * set when the session changed and a new attempt may succeed. */
/* Length (issue 15): the chunk's snapshot, the per-item loop (idempotency,
 * scoring, the overlay) and the group-commit job with its outcome per
 * item, in order; the item work is in am_apply. */
static int batch_chunk_once(am_server *srv, const char *session, const am_seg_req *reqs, size_t n,
                            am_batch_item *items, size_t *done, int *retry)
{
    *done = 0;
    am_sess *sess;
    int rc = am_acquire(srv, session, &sess, &items[0].fail);
    if (rc != AM_OK)
        return rc;
    am_sess_lock(sess);
    if (n > AM_BATCH_CHUNK)
        n = AM_BATCH_CHUNK;
    am_plan *plans = am_xcalloc(n, sizeof *plans);
    size_t *plan_item = am_xcalloc(n, sizeof *plan_item);
    size_t np = 0, i = 0, bytes = 0;
    am_vocab *ids = am_vocab_new(); /* the ids of this chunk's plans */
    am_mem mem;
    am_mem_init(&mem);
    mem.session = session;
    am_store_rtx *rtx = NULL;
    am_fail *f = &items[0].fail;
    rc = am_store_rtx_begin(srv->store, &rtx);
    am_store_state st;
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        f->retry_after = 1;
        goto out;
    }
    mem.base = rtx;
    rc = am_snapshot_state(srv, sess, rtx, session, "batch", &st, retry, f);
    if (rc != AM_OK)
        goto out;
    rc = am_hist_ensure(sess, rtx, session, st.version, &mem.stored, f);
    if (rc != AM_OK)
        goto out;
    am_scoring use = am_scoring_of(sess);
    int64_t now = am_now_ms();
    int item_rc = AM_OK;
    for (i = 0; i < n; i++) {
        am_batch_item *it = &items[i];
        am_seg_req named = reqs[i]; /* shallow: the systems as the session names them */
        if (am_vocab_contains(ids, named.id))
            break; /* the same id again: commit what is before it first */
        if (am_seg_systems(sess, &named, 1, &it->fail) != AM_OK) {
            item_rc = AM_ERR_INVALID;
            break;
        }
        int64_t seq = 0;
        int found = am_store_tx_segment_find(rtx, session, named.id, &seq, NULL, NULL);
        if (found == AM_OK) {
            item_rc = batch_known(rtx, session, &named, it, retry);
            if (item_rc != AM_OK)
                break;
            continue;
        }
        if (found != AM_ERR_NOTFOUND) {
            item_rc = found;
            am_failp(&it->fail, AM_P_INTERNAL, NULL,
                     "storage error: looking up the segment failed");
            break;
        }
        am_budget bud; /* the CPU budget is per item */
        am_budget_start(&bud, srv);
        am_plan *p = &plans[np];
        am_plan_init(p, session, st.last_seq + 1 + (int64_t)np);
        json_t *res = NULL;
        item_rc = am_apply(srv, sess, &use, rtx, &mem, session, p->seq, &named, now, 0, &bud, &res,
                           p, &it->fail);
        if (item_rc != AM_OK) {
            am_plan_cleanup(p);
            break;
        }
        am_mem_apply(&mem, p);
        p->follows = np > 0; /* the job checks the state once, at its first plan */
        p->incarnation = st.incarnation;
        p->glossary_version = st.glossary_version;
        /* PostgreSQL: and the version, under the session's row lock, as a
         * POST's job does. A rewrite on another node (a PUT's replay, a
         * DELETE, a rescore) changes the totals and the history without
         * the last seq; one that committed after this chunk's snapshot
         * would otherwise let the chunk write totals scored from the old
         * ones (test_pg_nodes' test_racing_batch_equals_serial_replay).
         * SQLite: am_sess_lock keeps every writer of the session out. */
        p->version = st.version;
        p->exact = am_store_is_pg(srv->store);
        p->result_txt = am_json_dump(res);
        json_decref(res);
        p->client_id = reqs[i].id;
        p->canonical = reqs[i].canonical;
        p->now = now;
        snprintf(p->hash, sizeof p->hash, "%016llx",
                 (unsigned long long)am_fnv1a(reqs[i].canonical));
        am_vocab_set(ids, named.id, 1);
        plan_item[np++] = i;
        bytes += strlen(reqs[i].canonical);
        if (bytes >= AM_BATCH_CHUNK_BYTES) { /* big items: a shorter chunk */
            i++;
            break;
        }
    }
    am_store_rtx_end(rtx);
    rtx = NULL;
    mem.base = NULL;
    rc = AM_OK;
    if (np > 0) {
        am_batch_job job = {plans, np, 0};
        rc = am_store_tx_group_on(srv->store, session, am_batch_job_run, &job);
        if (rc != AM_OK) {
            am_sess_tot_clear(sess);
            if (job.stale)
                am_sessions_forget_entry(srv->sessions, sess);
            size_t at = plan_item[0]; /* the items before it were answered 200 */
            *done = at;
            f = &items[at].fail;
            am_fail_write(f, rc, session, "the segments", "the batch was scored", retry);
            goto out;
        }
        for (size_t k = 0; k < np; k++) {
            am_plan *p = &plans[k];
            am_sess_tot_commit(sess, p->seq, p->nsys, p->sys, p->tot);
            am_sess_hist_commit(sess, st.version + (int64_t)k, st.version + (int64_t)k + 1,
                                am_buf_str(&p->words), p->nwords, am_plan_settles(p));
            am_events_publish(srv->events, session, p->seq, p->result_txt); /* SSE */
            items[plan_item[k]].status = 201;
            items[plan_item[k]].result = p->result_txt;
            p->result_txt = NULL;
        }
        am_sess_note(sess, st.version + (int64_t)np, plans[np - 1].seq);
    }
    *done = i;
    rc = item_rc;
out:
    am_store_rtx_end(rtx);
    for (size_t k = 0; k < np; k++)
        am_plan_cleanup(&plans[k]);
    free(plans);
    free(plan_item);
    am_vocab_free(ids);
    am_mem_cleanup(&mem);
    am_sess_unlock(sess);
    am_sessions_release(srv->sessions, sess);
    return rc;
}

size_t am_ingest_batch(am_server *srv, const char *session, const am_seg_req *reqs, size_t n,
                       am_batch_item *items)
{
    size_t at = 0;
    int tries = 0;
    while (at < n) {
        size_t done = 0;
        int retry = 0;
        am_fail_cleanup(&items[at].fail);
        am_fail_init(&items[at].fail);
        int rc = batch_chunk_once(srv, session, reqs + at, n - at, items + at, &done, &retry);
        at += done;
        if (done > 0)
            tries = 0;
        if (rc == AM_OK)
            continue;
        if (retry && ++tries < AM_WRITE_TRIES)
            continue;
        items[at].status = am_problem_get(items[at].fail.type)->status; /* 500 when unset */
        return at + 1;
    }
    return n;
}
