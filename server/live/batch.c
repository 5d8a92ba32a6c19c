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

/* Whether plan p updates totals entry name. */
static int plan_has_entry(const am_plan *p, const char *name)
{
    for (size_t e = 0; e < p->nsys; e++)
        if (!strcmp(p->sys[e], name))
            return 1;
    return 0;
}

/* The writes of plan k of job j (am_post_job's, in fewer statements: in
 * PostgreSQL each is a round trip). A totals entry is written only when
 * no later plan of the job overwrites it first: the entries hold the
 * totals after a seq (TOTALS_PUT replaces the row), so the last value is
 * the one that counts, except at a checkpoint seq, whose checkpoint copies
 * the totals table as it is (every entry is current there: an entry the
 * checkpoint's plan lacks was written by the plan before it). The
 * session's row is updated once for the segments since the last update,
 * at the end and before each checkpoint and settle (which reads
 * segments). The job's state and all rows end as one am_post_job per plan
 * leaves them. *touched: the plans whose row update is done. */
static int batch_write(am_store_tx *tx, am_batch_job *j, size_t k, size_t *touched)
{
    am_plan *p = &j->plans[k];
    const am_plan *next = k + 1 < j->n ? &j->plans[k + 1] : NULL;
    int ckpt = am_plan_ckpt(p), settles = am_plan_settles(p);
    int rc = AM_OK;
    for (size_t e = 0; e < p->nsys && rc == AM_OK; e++)
        if (ckpt || !next || !plan_has_entry(next, p->sys[e]))
            rc = am_store_tx_totals_put(tx, p->session, p->sys[e], p->totals[e]);
    for (size_t c = 0; c < p->nchoices && rc == AM_OK; c++)
        rc = am_store_tx_choice_incr(tx, p->session, p->choices[2 * c], p->choices[2 * c + 1]);
    if (rc == AM_OK) { /* with its words, pending in its row (schema/010) */
        rc = am_store_tx_segment_append(tx, p->session, p->seq, p->client_id, p->hash, p->canonical,
                                        p->result_txt, p->glossary_version, am_buf_str(&p->words),
                                        p->nwords, p->stats_txt, p->now);
        p->dup = rc == AM_ERR_CONFLICT; /* the id's unique index: stored meanwhile */
    }
    if (rc == AM_OK && (ckpt || settles || !next)) {
        rc = am_store_tx_session_touch(tx, p->session, p->seq, (int64_t)(k + 1 - *touched), p->now);
        *touched = k + 1;
    }
    if (rc == AM_OK && ckpt) /* the totals after p->seq */
        rc = am_store_tx_checkpoint_take(tx, p->session, p->seq);
    if (rc == AM_OK && settles) /* the pending words up to p->seq, settled */
        rc = am_store_tx_history_settle(tx, p->session);
    return rc;
}

/* The job: the session's state checked once, under its row lock (the
 * first plan's, am_post_job_check), then every plan's writes in order.
 * PostgreSQL's 40P01/40001 (a deadlock, a serialization failure) cannot
 * reach it: writes run in READ COMMITTED, which raises no serialization
 * failure; every row the job writes (segments, totals, checkpoints,
 * vocab, occurrences) belongs to its session, whose row it locks first,
 * as the session's other writers on any node do (a POST's job, a
 * rewrite's switch, a settle), except a rewrite's staging, which writes
 * rows of a newer result generation that the job never touches; a group
 * commit's jobs take their sessions' rows in key order (tx.c). Were one
 * to come, the job fails as an unavailable database does: 503 with
 * Retry-After on that item, nothing of the chunk stored, and the
 * client's retry with the same ids is safe. */
static int am_batch_job_run(am_store_tx *tx, void *ctx)
{
    am_batch_job *j = ctx;
    int rc = j->n > 0 ? am_post_job_check(tx, &j->plans[0]) : AM_OK;
    j->stale |= j->n > 0 && j->plans[0].stale;
    size_t touched = 0;
    for (size_t k = 0; k < j->n && rc == AM_OK; k++)
        rc = batch_write(tx, j, k, &touched);
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

/* Adds to the store's count (am_store_count_fn): a stored id, ctx the
 * set of them. */
static int known_id(void *ctx, const char *client_id, int64_t seq)
{
    (void)seq;
    if (client_id)
        am_vocab_set(ctx, client_id, 1);
    return 0;
}

/* The ids among reqs[0..n) (at most a chunk's) stored before, into known:
 * one lookup on the chunk's snapshot for all (a statement per item was a
 * round trip per item in PostgreSQL). */
static int batch_known_ids(am_store_rtx *rtx, const char *session, const am_seg_req *reqs, size_t n,
                           am_vocab *known)
{
    am_buf ids; /* NUL-separated */
    am_buf_init(&ids);
    size_t nids = 0;
    for (size_t i = 0; i < n; i++)
        if (reqs[i].id) { /* an item without one fails later, in order */
            am_buf_append(&ids, reqs[i].id, strlen(reqs[i].id) + 1);
            nids++;
        }
    int rc = am_store_tx_segments_known(rtx, session, am_buf_str(&ids), nids, known_id, known);
    am_buf_cleanup(&ids);
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
    am_vocab *known = am_vocab_new(); /* the chunk's ids stored before */
    rc = batch_known_ids(rtx, session, reqs, n, known);
    if (rc != AM_OK) {
        am_vocab_free(known);
        am_failp(f, AM_P_INTERNAL, NULL, "storage error: looking up the segments failed");
        goto out;
    }
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
        if (am_vocab_contains(known, named.id)) {
            item_rc = batch_known(rtx, session, &named, it, retry);
            if (item_rc != AM_OK)
                break;
            continue;
        }
        am_budget bud; /* the CPU budget is per item */
        am_budget_start(&bud, srv);
        am_plan *p = &plans[np];
        am_plan_init(p, session, st.last_seq + 1 + (int64_t)np);
        p->settle_every = srv->cfg.settle_every;
        json_t *res = NULL;
        item_rc = am_apply(srv, sess, &use, rtx, &mem, session, p->seq, &named, now, 0, &bud, &res,
                           p, &it->fail);
        if (item_rc != AM_OK) {
            am_plan_cleanup(p);
            break;
        }
        am_mem_apply(&mem, p);
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
    am_vocab_free(known);
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
