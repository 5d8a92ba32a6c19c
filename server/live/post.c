/* post.c — the transaction of a POST: the history it is scored with, its
 * plan, the fast path and the retries (see ingest.h). */
#include "ingest_internal.h"

#include "ci_stats.h" /* the row's ?ci= statistics record */
#include "events.h" /* am_events_publish (SSE) */
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* ---- the transaction ------------------------------------------------------ */

/* A POST's history: h, and the settled part read through tx unless h is
 * full. */
typedef struct am_lookup_ctx {
    am_store_rtx *tx;
    const char *session;
    am_hist h;
} am_lookup_ctx;

/* occ of word in h's counts (borrowed) added to *occ. */
static void hist_add(const am_hist *h, const char *word, int64_t *occ)
{
    int64_t n = 0;
    if (h->counts && am_vocab_get(h->counts, word, &n))
        *occ += n;
}

/* occ of word: h's counts, plus the store's settled ones through rtx
 * unless h is full. */
int am_hist_lookup(am_store_rtx *rtx, const char *session, const am_hist *h, const char *word,
                   int64_t *occ)
{
    int rc = AM_OK;
    *occ = 0;
    if (!h->full)
        rc = am_store_tx_vocab_get(rtx, session, word, occ);
    if (rc == AM_OK)
        hist_add(h, word, occ);
    return rc;
}

static int am_tx_lookup(void *ctx, const char *word, int64_t *occ)
{
    am_lookup_ctx *c = ctx;
    return am_hist_lookup(c->tx, c->session, &c->h, word, occ);
}

/* A load of a session's settled counts within a byte budget. */
typedef struct hist_load {
    am_vocab *v;
    size_t room; /* bytes */
} hist_load;

#define AM_HIST_OVER 2 /* hist_word: the budget is exceeded */

/* Adds one settled word's count to the counts of ctx (hist_load); past the
 * load's budget it stops the walk. */
static int hist_word(void *ctx, const char *word, int64_t count)
{
    hist_load *l = ctx;
    if (!word)
        return 0;
    am_vocab_add(l->v, word, count);
    return am_vocab_count(l->v) % 256 == 0 && am_vocab_bytes(l->v) > l->room ? AM_HIST_OVER : 0;
}

/* Adds one pending word to the counts ctx. */
static int pend_word(void *ctx, const char *word, int64_t seq)
{
    (void)seq;
    if (word)
        am_vocab_add(ctx, word, 1);
    return 0;
}

/* The session's history counts at the snapshot's version (borrowed from
 * the session's cache, which is filled through rtx when it is not
 * current; the caller holds am_sess_lock): the whole history when the
 * cache's history budget has room for it (the settled vocab and the
 * pending words), else the pending words only; a 500 in f when the store
 * fails. */
int am_hist_ensure(am_sess *sess, am_store_rtx *rtx, const char *session, int64_t version,
                   am_hist *out, am_fail *f)
{
    out->counts = am_sess_hist_get(sess, version, &out->full);
    if (out->counts)
        return AM_OK;
    hist_load l = {am_vocab_new(), am_sess_hist_room(sess)};
    int full = l.room > 0;
    int rc = full ? am_store_tx_vocab_each(rtx, session, hist_word, &l) : AM_OK;
    if (rc == AM_OK && full && am_vocab_bytes(l.v) > l.room)
        rc = AM_HIST_OVER;
    if (rc == AM_HIST_OVER) { /* too large for the budget: the pending words only */
        am_sess_hist_over(sess, am_vocab_bytes(l.v));
        am_vocab_free(l.v); /* not cleared: its memory is not in the budget */
        l.v = am_vocab_new();
        full = 0;
        rc = AM_OK;
    }
    /* the pending words (fewer than --settle-every segments') on top; should they take a
     * full cache over the budget, the next commit drops it */
    if (rc == AM_OK)
        rc = am_store_tx_pending_each(rtx, session, pend_word, l.v);
    if (rc != AM_OK) {
        am_vocab_free(l.v);
        return am_failp(f, AM_P_INTERNAL, NULL,
                        "storage error: reading the session's history failed");
    }
    am_sess_hist_set(sess, version, l.v, full);
    out->counts = l.v;
    out->full = full;
    return AM_OK;
}

/* The session runtime's own scorer (borrowed from sess). */
am_scoring am_scoring_of(const am_sess *sess)
{
    am_scoring u = {sess->scorer, &sess->gloss, sess->glossary_version};
    return u;
}

void am_plan_init(am_plan *p, const char *session, int64_t seq)
{
    memset(p, 0, sizeof *p);
    p->session = session;
    p->seq = seq;
    p->settle_every = AM_SETTLE_EVERY;
    am_buf_init(&p->words);
}

void am_plan_cleanup(am_plan *p)
{
    am_buf_cleanup(&p->words);
    for (size_t k = 0; k < p->nsys; k++)
        free(p->totals[k]);
    for (size_t k = 0; k < AM_PLAN_MAX; k++)
        free(p->pair_names[k]);
    free(p->choices);
    free(p->tot);
    free(p->result_txt);
    free(p->stats_txt);
    memset(p, 0, sizeof *p);
}

/* Whether the commit of p's segment also takes the checkpoint (every
 * AM_CKPT_EVERY-th seq). */
int am_plan_ckpt(const am_plan *p)
{
    return p->seq % AM_CKPT_EVERY == 0;
}

/* Whether the commit of p's segment also settles the pending words (every
 * p->settle_every-th seq). */
int am_plan_settles(const am_plan *p)
{
    return p->settle_every > 0 && p->seq % p->settle_every == 0;
}

/* Applies a plan's totals and choices inside a write transaction (the
 * segment's words go with its row, am_post_job). */
static int am_plan_exec(am_store_tx *tx, const am_plan *p)
{
    int rc = AM_OK;
    for (size_t k = 0; k < p->nsys && rc == AM_OK; k++)
        rc = am_store_tx_totals_put(tx, p->session, p->sys[k], p->totals[k]);
    for (size_t i = 0; i < p->nchoices && rc == AM_OK; i++)
        rc = am_store_tx_choice_incr(tx, p->session, p->choices[2 * i], p->choices[2 * i + 1]);
    return rc;
}

/* The writes of plan p's job after its state check (am_post_job): the
 * plan's updates, its segment row, at a checkpoint seq the checkpoint and
 * at a settling seq the settle. */
static int am_post_job_write(am_store_tx *tx, am_plan *p)
{
    int rc = am_plan_exec(tx, p);
    if (rc == AM_OK) { /* with its words, pending in its row (schema/010) */
        rc = am_store_tx_segment_insert_st(tx, p->session, p->seq, p->client_id, p->hash,
                                           p->canonical, p->result_txt, p->glossary_version,
                                           am_buf_str(&p->words), p->nwords, p->stats_txt, p->now);
        /* the seq is free (checked above), so a conflict is the id's unique
         * index: stored before (the idempotency check am_post_fast skipped;
         * the job's savepoint is rolled back) */
        p->dup = rc == AM_ERR_CONFLICT;
    }
    if (rc == AM_OK && am_plan_ckpt(p)) /* the totals after p->seq */
        rc = am_store_tx_checkpoint_take(tx, p->session, p->seq);
    if (rc == AM_OK && am_plan_settles(p)) /* the pending words up to p->seq, settled */
        rc = am_store_tx_history_settle(tx, p->session);
    return rc;
}

/* The job of a POST inside a group-commit batch: checks that the session
 * is still where the plan was computed (am_post_job_check), then writes. */
int am_post_job(am_store_tx *tx, void *ctx)
{
    am_plan *p = ctx;
    int rc = am_post_job_check(tx, p);
    return rc == AM_OK ? am_post_job_write(tx, p) : rc;
}

/* See ingest_internal.h: the same incarnation, glossary version and seq =
 * last + 1 (and version, fast or exact), read under the row lock. */
int am_post_job_check(am_store_tx *tx, am_plan *p)
{
    am_store_state st;
    int rc = am_store_tx_session_info(am_store_tx_reads(tx), p->session, &st);
    /* fast: also any write since the noted state (the writers here drop or
     * move the caches as well, so this is the backstop) */
    if (rc == AM_OK &&
        (st.incarnation != p->incarnation || st.glossary_version != p->glossary_version ||
         st.last_seq + 1 != p->seq || ((p->fast || p->exact) && st.version != p->version))) {
        rc = AM_ERR_CONFLICT; /* moved on, deleted + re-created, new glossary: retry */
        p->stale = st.incarnation != p->incarnation || st.glossary_version != p->glossary_version;
    }
    return rc;
}

/* An empty history (am_mem_cleanup frees it). */
void am_mem_init(am_mem *m)
{
    memset(m, 0, sizeof *m);
    m->hist = am_vocab_new();
    m->cap = AM_PLAN_MAX;
    m->sys = am_xcalloc(m->cap, sizeof *m->sys);
    m->tot = am_xcalloc(m->cap, sizeof *m->tot);
}

/* The occ of word: the store's (through m->base) plus the batch's. */
static int mem_overlay_lookup(void *ctx, const char *word, int64_t *occ)
{
    const am_mem *m = ctx;
    int64_t stored = 0, added = 0;
    int rc = am_hist_lookup(m->base, m->session, &m->stored, word, &stored);
    if (rc != AM_OK)
        return rc;
    if (!am_vocab_get(m->hist, word, &added))
        added = 0;
    *occ = stored + added;
    return AM_OK;
}

/* The totals of system in mem (borrowed), or NULL when it has none. */
am_totals *am_mem_totals(am_mem *m, const char *system)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->sys[i], system))
            return &m->tot[i];
    return NULL;
}

/* The failure of am_score_segment (rc, with the offending field or NULL)
 * into *f; returns the code the request fails with. */
static int apply_score_failed(const am_server *srv, am_budget *bud, int rc, const char *field,
                              am_fail *f)
{
    if (rc == AM_ERR_CANCELLED)
        return am_budget_fail(f, bud);
    if (rc == AM_ERR_IO)
        return am_failp(f, AM_P_INTERNAL, NULL, "the database failed");
    if (rc == AM_ERR_RANGE)
        return am_failp(f, AM_P_TOO_MANY_TERM_OCCURRENCES, field,
                        "more than %d glossary term occurrences or forbidden uses%s%s "
                        "(max-term-occurrences), or an annotation term of more than %d "
                        "tokens",
                        srv->cfg.max_term_occurrences, field ? " in " : "", field ? field : "",
                        AM_TERMS_MAX_TERM_TOKENS);
    return am_failp(f,
                    rc == AM_ERR_UTF8 || rc == AM_ERR_NUL ? AM_P_INVALID_UTF8 : AM_P_INVALID_VALUE,
                    field, "%s%s%s", am_strerror(rc), field ? " in " : "", field ? field : "");
}

/* The totals entries a segment of req updates: its systems, then the pairs
 * with the baseline (pair:<system>:system / :baseline, with paired totals),
 * then the translator's (tr:<translator>:<system>). ent[i] names entry i
 * (borrowed from req, or owned by plan->pair_names), from[i] is the index
 * of its scores among req's systems. Returns the number of entries. */
static size_t apply_entries(const am_sess *sess, const am_seg_req *req, am_plan *plan,
                            const char **ent, size_t *from)
{
    size_t n_ent = req->nsys, base = req->nsys;
    for (size_t k = 0; k < req->nsys; k++) {
        ent[k] = req->sys[k];
        from[k] = k;
        if (sess->baseline && sess->paired_totals && !strcmp(req->sys[k], sess->baseline))
            base = k;
    }
    for (size_t k = 0; base < req->nsys && k < req->nsys; k++) {
        if (k == base)
            continue;
        for (int side = 0; side < 2; side++) {
            char name[300];
            snprintf(name, sizeof name, "pair:%s:%s", req->sys[k], side ? "system" : "baseline");
            plan->pair_names[n_ent] = am_xstrdup(name);
            ent[n_ent] = plan->pair_names[n_ent];
            from[n_ent++] = side ? k : base;
        }
    }
    for (size_t k = 0; req->translator && k < req->nsys; k++) {
        char name[300];
        snprintf(name, sizeof name, "tr:%s:%s", req->translator, req->sys[k]);
        plan->pair_names[n_ent] = am_xstrdup(name);
        ent[n_ent] = plan->pair_names[n_ent];
        from[n_ent++] = k;
    }
    return n_ent;
}

/* The totals of entry `name` after seq - 1 into *t: from mem (a replay),
 * else, with cached, the session's totals cache, else the store (rtx);
 * empty totals when it has none yet. AM_ERR_INTERNAL for a damaged stored
 * row, or the store's error. */
static int apply_entry_totals(am_sess *sess, const am_scorer *sc, am_store_rtx *rtx, am_mem *mem,
                              int cached, const char *session, int64_t seq, const char *name,
                              am_totals *t)
{
    const am_totals *mt = mem ? am_mem_totals(mem, name) : NULL;
    if (mt) {
        *t = *mt;
        return AM_OK;
    }
    char *raw = NULL;
    int rc;
    if (mem && !mem->base)
        rc = AM_ERR_NOTFOUND; /* a replay from the start: none yet */
    else if (cached && am_sess_tot_get(sess, name, seq - 1, t))
        return AM_OK;
    else if (!rtx)
        return AM_ERR_CONFLICT; /* am_post_fast: not cached, the store must be read */
    else
        rc = am_store_tx_totals_get(rtx, session, name, &raw);
    if (rc == AM_OK) {
        json_t *j = json_loads(raw, 0, NULL);
        if (!j || am_json_totals_parse(j, sc, t) != AM_OK)
            rc = AM_ERR_INTERNAL;
        json_decref(j);
    } else if (rc == AM_ERR_NOTFOUND) {
        am_totals_init(t, sc);
        rc = AM_OK;
    }
    free(raw);
    return rc;
}

/* The translator's choices among the alternatives of the glossary entries
 * found in the segment (ts: the first system's terms, NULL for none) into
 * plan->choices (pairs source, target; borrowed from gloss). */
static void apply_choices(am_plan *plan, const am_terms_seg *ts, const am_gloss *gloss)
{
    if (!ts)
        return;
    plan->choices = am_xcalloc(2 * ts->n_inst + 1, sizeof *plan->choices);
    for (size_t i = 0; i < ts->n_inst; i++) {
        const am_terms_inst *inst = &ts->inst[i];
        if (inst->origin != AM_TERMS_GLOSSARY || inst->entry >= gloss->n)
            continue;
        const am_gloss_entry *e = &gloss->v[inst->entry];
        if (inst->alt < e->n_targets) {
            plan->choices[2 * plan->nchoices] = e->source;
            plan->choices[2 * plan->nchoices + 1] = e->targets[inst->alt];
            plan->nchoices++;
        }
    }
}

/* Scores one segment at seq with use (borrowed), reading the history and
 * totals through rtx (a read or write transaction) or, when mem is given,
 * from mem; fills plan with the writes (history, totals, choices) and
 * returns the result object (new reference) in *result or, when result is
 * NULL, its text (am_json_dump of it, built without the tree) in
 * plan->result_txt. With cached, the totals after seq - 1 come from the
 * session's totals cache when it has them (POST; the caller holds
 * am_sess_lock). */
int am_apply(am_server *srv, am_sess *sess, const am_scoring *use, am_store_rtx *rtx, am_mem *mem,
             const char *session, int64_t seq, const am_seg_req *req, int64_t now, int cached,
             am_budget *bud, json_t **result, am_plan *plan, am_fail *f)
{
    const am_scorer *sc = use->sc;
    am_score_ws *ws = am_wspool_get(srv->wspool);
    am_score_ws_set_cancel(ws, &bud->cancel);
    am_lookup_ctx lc = {rtx, session, plan->hist};
    am_seg_input in = am_seg_req_input(req);
    in.max_term_occurrences = (size_t)srv->cfg.max_term_occurrences;
    am_seg_result res;
    const char *field = NULL;
    /* no more scorers at once than slots (cores): the lookups read this
     * request's own snapshot or memory, so a holder never waits on another */
    am_wspool_enter(srv->wspool);
    int rc = mem && mem->base ? am_score_segment(sc, ws, &in, mem_overlay_lookup, mem, &res, &field)
             : mem ? am_score_segment(sc, ws, &in, am_recall_vocab_lookup, mem->hist, &res, &field)
                   : am_score_segment(sc, ws, &in, am_tx_lookup, &lc, &res, &field);
    am_wspool_leave(srv->wspool);
    if (rc != AM_OK) {
        am_score_ws_set_cancel(ws, NULL);
        am_wspool_put(srv->wspool, ws);
        return apply_score_failed(srv, bud, rc, field, f);
    }
    /* the output grows with the term occurrences: bounded before any of it is built */
    for (size_t k = 0; k < req->nsys; k++) {
        const am_terms_seg *ts = res.sys[k].terms;
        size_t occ = ts ? ts->n_inst + ts->n_dev + ts->n_forbid : 0;
        if (occ > (size_t)srv->cfg.max_term_occurrences) {
            am_wspool_put(srv->wspool, ws);
            return am_failp(f, AM_P_TOO_MANY_TERM_OCCURRENCES, "source",
                            "%zu glossary term occurrences in the segment; the limit is %d "
                            "(max-term-occurrences)",
                            occ, srv->cfg.max_term_occurrences);
        }
    }
    for (size_t i = 0; i < res.recall->words.n; i++) {
        const char *w = res.recall->words.v[i];
        am_buf_append(&plan->words, w, strlen(w) + 1);
    }
    plan->nwords = res.recall->words.n;

    /* the answer's tree only for a caller that wants it (result given); a
     * POST takes the text straight from am_json_answer below */
    json_t *scores = result ? am_json_segment(sc, &res, req->sys) : NULL;
    json_t *totals = result ? json_object() : NULL;
    const char *ent[AM_PLAN_MAX];
    size_t from[AM_PLAN_MAX]; /* index into res.sys of the entry's scores */
    size_t n_ent = apply_entries(sess, req, plan, ent, from);
    /* n_ent, not AM_PLAN_MAX, entries: AM_PLAN_MAX of them (~200 KB) were
     * zeroed on every POST */
    plan->tot = am_xcalloc(n_ent ? n_ent : 1, sizeof *plan->tot);
    for (size_t k = 0; k < n_ent && rc == AM_OK; k++) {
        am_totals t;
        rc = apply_entry_totals(sess, sc, rtx, mem, cached, session, seq, ent[k], &t);
        if (rc != AM_OK)
            break;
        am_totals_add(&t, &res.sys[from[k]]);
        plan->tot[k] = t;
        plan->sys[k] = ent[k];
        plan->totals[k] = am_json_totals_text(&t); /* = am_json_dump(am_json_totals_raw) */
        plan->nsys = k + 1;
        if (k >= req->nsys)
            continue; /* pair entries are not part of the answer */
        if (totals)
            json_object_set_new(totals, req->sys[k], am_json_totals(sc, &t));
        if (k == 0) /* the translator's choice among a glossary entry's alternatives */
            apply_choices(plan, res.sys[0].terms, use->gloss);
    }
    if (!plan->fast) /* am_post_fast counts what it stores */
        am_prom_segments(srv->prom, (int64_t)req->nsys);
    if (rc == AM_OK && !result) /* res points into ws: written before ws goes back */
        plan->result_txt = am_json_answer(&res, req->sys, plan->tot, session, req->id, seq,
                                          am_scorer_signature(sc), now, use->glossary_version);
    if (rc == AM_OK) { /* the row's ?ci= statistics (schema/013), of this scoring */
        am_buf sb;
        am_buf_init(&sb);
        am_cistats_encode(sc, &res, req->sys, &sb);
        free(plan->stats_txt);
        plan->stats_txt = am_buf_detach(&sb);
    }
    am_score_ws_set_cancel(ws, NULL);
    am_wspool_put(srv->wspool, ws);
    if (rc != AM_OK) {
        json_decref(scores);
        json_decref(totals);
        return am_failp(f, AM_P_INTERNAL, NULL, "the database failed (%s)", am_strerror(rc));
    }
    if (!result)
        return AM_OK;
    *result = json_pack("{sssssIsssoso}", "session", session, "id", req->id, "seq", (json_int_t)seq,
                        "signature", am_scorer_signature(sc), "scores", scores, "totals", totals);
    json_object_set_new(*result, "created_ms", json_integer((json_int_t)now));
    json_object_set_new(*result, "glossary_version",
                        json_integer((json_int_t)use->glossary_version));
    return AM_OK;
}

/* Applies the session's systems to a parsed request r (modified; names
 * borrowed from sess). A session that declared `systems` takes exactly those
 * in `hypotheses`, or `hypothesis` when it declared one system (which then
 * names it); a session with a baseline_system takes `hypotheses` only (a
 * `hypothesis` would add a system "default" compared with nothing). With
 * strict 0 (replaying stored requests, valid when posted) only the naming
 * is done. Returns AM_OK or AM_ERR_INVALID with a 422 in *f. */
int am_seg_systems(const am_sess *sess, am_seg_req *r, int strict, am_fail *f)
{
    if (sess->n_systems == 1 && r->single) {
        r->sys[0] = sess->systems[0];
        return AM_OK;
    }
    if (!strict)
        return AM_OK;
    char list[1024] = "";
    for (size_t i = 0, off = 0; i < sess->n_systems && off < sizeof list; i++) {
        int w = snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", sess->systems[i]);
        off += w > 0 ? (size_t)w : 0;
    }
    if (sess->n_systems > 0 && r->single)
        return am_failp(f, AM_P_INVALID_VALUE, "hypothesis",
                        "this session compares the systems %s: give 'hypotheses' with one "
                        "hypothesis of each",
                        list);
    if (sess->n_systems == 0 && sess->baseline && r->single)
        return am_failp(f, AM_P_INVALID_VALUE, "hypothesis",
                        "this session compares systems with the baseline '%s': give "
                        "'hypotheses' {system: text} (a 'hypothesis' would add a system "
                        "'default')",
                        sess->baseline);
    if (sess->n_systems == 0)
        return AM_OK;
    int same = r->nsys == sess->n_systems;
    for (size_t k = 0; same && k < r->nsys; k++) {
        same = 0;
        for (size_t i = 0; i < sess->n_systems && !same; i++)
            same = !strcmp(r->sys[k], sess->systems[i]);
    }
    if (!same)
        return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                        "this session declared the systems %s: 'hypotheses' must hold exactly "
                        "one hypothesis of each",
                        list);
    return AM_OK;
}

int am_acquire(am_server *srv, const char *session, am_sess **out, am_fail *f)
{
    am_buf err;
    am_buf_init(&err);
    int rc = am_sessions_acquire(srv->sessions, session, out, &err);
    if (rc == AM_ERR_NOTFOUND)
        am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
    else if (rc == AM_ERR_CONFLICT) /* its background vocabulary was deleted */
        am_failp(f, AM_P_CONFLICT, NULL, "%s; PUT the vocabulary again (/v1/vocabularies/{name})",
                 am_buf_str(&err));
    else if (rc == AM_ERR_FULL) { /* the memory budget stayed full for 2 s */
        am_failp(f, AM_P_UNAVAILABLE, NULL, "%s", am_buf_str(&err));
        f->retry_after = 2;
    } else if (rc == AM_ERR_UNAVAILABLE) { /* PostgreSQL unreachable or failing over */
        am_failp(f, AM_P_UNAVAILABLE, NULL, "session unavailable: %s",
                 err.len ? am_buf_str(&err) : am_strerror(rc));
        f->retry_after = 1;
    } else if (rc != AM_OK)
        am_failp(f, AM_P_INTERNAL, NULL, "session unavailable: %s",
                 err.len ? am_buf_str(&err) : am_strerror(rc));
    am_buf_cleanup(&err);
    return rc;
}

/* The session's state in the read snapshot rtx into *st, checked against
 * the cached runtime sess: 404 when the session is gone, 503 when it
 * cannot be read, and a retry (AM_ERR_CONFLICT, the runtime forgotten) when
 * the runtime is of another incarnation or glossary version; `what` names
 * the write in the detail. */
int am_snapshot_state(am_server *srv, am_sess *sess, am_store_rtx *rtx, const char *session,
                      const char *what, am_store_state *st, int *retry, am_fail *f)
{
    int rc = am_store_tx_session_info(rtx, session, st);
    if (rc == AM_ERR_NOTFOUND) {
        am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
        return rc;
    }
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is unavailable: session '%s' could not be read: %s", session,
                 am_strerror(rc));
        return rc;
    }
    if (st->incarnation != sess->incarnation || st->glossary_version != sess->glossary_version) {
        /* the cached runtime is of another incarnation or glossary */
        am_sessions_forget_entry(srv->sessions, sess);
        *retry = 1;
        am_failp(f, AM_P_UNAVAILABLE, NULL, "the session changed while the %s was scored; retry",
                 what);
        return AM_ERR_CONFLICT;
    }
    return AM_OK;
}

/* After the commit of plan's segment (a POST) at the session's version
 * before: the runtime's caches advance to it (totals, history, the state
 * noted for am_post_fast) and the answer goes to the event stream; the
 * result text moves to *result. */
static void post_committed(am_server *srv, am_sess *sess, const char *session, am_plan *plan,
                           int64_t before, char **result)
{
    am_sess_tot_commit(sess, plan->seq, plan->nsys, plan->sys, plan->tot);
    am_sess_hist_commit(sess, before, before + 1, am_buf_str(&plan->words), plan->nwords,
                        am_plan_settles(plan));
    am_sess_note(sess, before + 1, plan->seq);
    am_events_publish(srv->events, session, plan->seq, plan->result_txt); /* SSE (events.h) */
    *result = plan->result_txt;
    plan->result_txt = NULL;
}

/* Whether the totals of every entry a segment of req updates are cached
 * after seq (the caller holds am_sess_lock): else am_post_fast would find
 * out only after scoring. */
static int totals_cached(const am_sess *sess, const am_seg_req *req, int64_t seq)
{
    am_plan names; /* apply_entries' entry names (the pair names owned by it) */
    am_plan_init(&names, NULL, seq + 1);
    const char *ent[AM_PLAN_MAX];
    size_t from[AM_PLAN_MAX];
    size_t n = apply_entries(sess, req, &names, ent, from);
    int all = 1;
    for (size_t k = 0; k < n && all; k++)
        all = am_sess_tot_has(sess, ent[k], seq);
    am_plan_cleanup(&names);
    return all;
}

/* A POST scored from the runtime's state alone, without a read snapshot:
 * when the session's state noted after its last write here is current in
 * the caches (am_sess_known: the whole history counts, and the totals of
 * every entry the segment updates), the segment is scored from them and
 * the group-commit job checks what the snapshot would have: the session is
 * still at that version (no write since), and the id is new (the insert
 * meets the id's unique index otherwise). The caller holds am_sess_lock.
 * Returns 1 when the segment was stored (*result, *status 201); 0 when
 * anything differs or fails (a repeated id, a state moved on, a scoring
 * error, a failed write): nothing was stored, and the caller takes the
 * snapshot path, which answers each of those as it always has. This saves
 * the read transaction (the session row and the id's index, read through
 * a page cache that every commit invalidates): bench/README.md, eighth
 * session. */
static int am_post_fast(am_server *srv, am_sess *sess, const char *session, const am_seg_req *req,
                        char **result, int *status, am_budget *bud)
{
    int64_t version, last_seq;
    const am_vocab *counts = am_sess_known(sess, &version, &last_seq);
    if (!counts || !totals_cached(sess, req, last_seq))
        return 0;
    am_plan plan;
    am_plan_init(&plan, session, last_seq + 1);
    plan.settle_every = srv->cfg.settle_every;
    plan.incarnation = sess->incarnation;
    plan.glossary_version = sess->glossary_version;
    plan.fast = 1;
    plan.version = version;
    plan.hist.counts = counts;
    plan.hist.full = 1;
    am_fail f;
    am_fail_init(&f); /* not answered: the snapshot path answers any failure */
    int64_t now = am_now_ms();
    am_scoring use = am_scoring_of(sess);
    int rc =
        am_apply(srv, sess, &use, NULL, NULL, session, plan.seq, req, now, 1, bud, NULL, &plan, &f);
    am_fail_cleanup(&f);
    int stored = 0;
    if (rc == AM_OK) {
        plan.client_id = req->id;
        plan.canonical = req->canonical;
        plan.now = now;
        snprintf(plan.hash, sizeof plan.hash, "%016llx",
                 (unsigned long long)am_fnv1a(req->canonical));
        rc = am_store_tx_group_on(srv->store, session, am_post_job, &plan);
        if (rc == AM_OK) {
            post_committed(srv, sess, session, &plan, version, result);
            *status = 201;
            stored = 1;
            am_prom_segments(srv->prom, (int64_t)req->nsys);
            am_prom_from_memory(srv->prom);
        } else if (plan.dup) {
            am_sess_repeat(sess); /* more re-posts may follow: the snapshot path finds them */
        } else { /* the session moved on, or the write failed */
            am_sess_tot_clear(sess);
            if (plan.stale)
                am_sessions_forget_entry(srv->sessions, sess);
        }
    }
    am_plan_cleanup(&plan);
    return stored;
}

/* One attempt of a POST (see am_ingest_post). *retry is set when the
 * session changed under it and a new attempt may succeed. */
int am_post_once(am_server *srv, const char *session, const am_seg_req *req_in, char **result,
                 int *status, am_fail *f, int *retry, am_budget *bud)
{
    am_sess *sess;
    int rc = am_acquire(srv, session, &sess, f);
    if (rc != AM_OK)
        return rc;
    am_seg_req named = *req_in; /* shallow: the systems as the session names them */
    const am_seg_req *req = &named;
    if (am_seg_systems(sess, &named, 1, f) != AM_OK) {
        am_sessions_release(srv->sessions, sess);
        return AM_ERR_INVALID;
    }
    am_sess_lock(sess);
    am_plan plan;
    am_plan_init(&plan, session, 0);
    plan.settle_every = srv->cfg.settle_every;
    am_store_rtx *rtx = NULL;
    if (am_post_fast(srv, sess, session, req, result, status, bud))
        goto out; /* rc AM_OK */
    rc = am_store_rtx_begin(srv->store, &rtx);
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        f->retry_after = 1;
        goto out;
    }
    am_store_state st;
    rc = am_snapshot_state(srv, sess, rtx, session, "segment", &st, retry, f);
    if (rc != AM_OK)
        goto out;
    int64_t seq = 0;
    int found = am_store_tx_segment_find(rtx, session, req->id, &seq, NULL, NULL);
    if (found == AM_OK) {
        /* idempotency: the same body answers the stored result */
        am_sess_repeat(sess);
        int64_t s2;
        char *rq = NULL, *rs = NULL;
        am_store_rtx_end(rtx);
        rtx = NULL;
        rc = am_store_segment_get(srv->store, session, req->id, &s2, &rq, &rs);
        if (rc == AM_OK && !strcmp(rq, req->canonical)) {
            *result = rs; /* the stored text, byte for byte */
            rs = NULL;
            *status = 200;
        } else if (rc == AM_OK) {
            rc = AM_ERR_CONFLICT;
            am_failp(f, AM_P_CONFLICT, "id",
                     "segment '%s' was posted before with a different body; PUT "
                     "/v1/sessions/%s/segments/%s replaces it",
                     req->id, session, req->id);
        } else if (rc == AM_ERR_NOTFOUND) {
            *retry = 1; /* deleted (and maybe re-created) meanwhile */
            am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
        } else {
            am_failp(f, AM_P_INTERNAL, NULL, "storage error: reading the stored segment failed");
        }
        free(rq);
        free(rs);
        goto out;
    }
    if (found != AM_ERR_NOTFOUND) {
        rc = found;
        am_failp(f, AM_P_INTERNAL, NULL, "storage error: looking up the segment failed");
        goto out;
    }
    int64_t now = am_now_ms();
    plan.seq = st.last_seq + 1;
    plan.incarnation = st.incarnation;
    plan.glossary_version = st.glossary_version;
    plan.version = st.version;
    plan.exact = am_store_is_pg(srv->store);
    rc = am_hist_ensure(sess, rtx, session, st.version, &plan.hist, f);
    if (rc != AM_OK)
        goto out;
    am_sess_note(sess, st.version, st.last_seq);
    am_scoring use = am_scoring_of(sess);
    rc = am_apply(srv, sess, &use, rtx, NULL, session, plan.seq, req, now, 1, bud, NULL, &plan, f);
    am_store_rtx_end(rtx);
    rtx = NULL;
    if (rc != AM_OK)
        goto out;
    plan.client_id = req->id;
    plan.canonical = req->canonical;
    plan.now = now;
    snprintf(plan.hash, sizeof plan.hash, "%016llx", (unsigned long long)am_fnv1a(req->canonical));
    rc = am_store_tx_group_on(srv->store, session, am_post_job, &plan);
    if (rc != AM_OK) {
        am_sess_tot_clear(sess);
        if (plan.stale)
            am_sessions_forget_entry(srv->sessions, sess);
        am_fail_write(f, rc, session, "the segment", "the segment was scored", retry);
        goto out;
    }
    post_committed(srv, sess, session, &plan, st.version, result);
    *status = 201;
out:
    am_store_rtx_end(rtx);
    am_plan_cleanup(&plan);
    am_sess_unlock(sess);
    am_sessions_release(srv->sessions, sess);
    return rc;
}

/* A POST: the reads (idempotency check, session state, history for recall,
 * totals) and the scoring run on a read snapshot outside the write lock,
 * under the session's lock, which is held until the segment is committed,
 * so the snapshot includes everything earlier of this session. The writes
 * then go through the store's group commit: one transaction for the
 * concurrent POSTs of many sessions, each in its own savepoint, and the
 * answer only after the commit. The commit checks that the session is
 * still the incarnation, glossary version and seq the segment was scored
 * for; when not (a delete + re-create, a glossary change, a concurrent
 * writer of another runtime), the POST is scored again from the start, so
 * a segment always lands scored by the session that holds it. */

/* Runs once until it succeeds or says no retry can help, at most
 * AM_WRITE_TRIES times, under one CPU budget for all attempts; f holds the
 * last attempt's failure. */
int am_write_with_retries(am_server *srv, const char *session, const am_seg_req *req, char **result,
                          int *status, am_fail *f, am_write_once_fn once)
{
    return am_write_watched(srv, session, req, result, status, f, once, NULL);
}

/* am_write_with_retries whose budget also stops when peer (borrowed; NULL:
 * not watched) says the client has gone: a replay's seconds of work. */
int am_write_watched(am_server *srv, const char *session, const am_seg_req *req, char **result,
                     int *status, am_fail *f, am_write_once_fn once, am_peer *peer)
{
    int rc = AM_OK;
    am_budget bud;
    am_budget_start(&bud, srv);
    if (peer)
        am_peer_chain(peer, &bud.cancel);
    for (int attempt = 0; attempt < AM_WRITE_TRIES; attempt++) {
        int retry = 0;
        am_fail_cleanup(f);
        am_fail_init(f);
        rc = once(srv, session, req, result, status, f, &retry, &bud);
        if (rc == AM_OK || !retry)
            break;
    }
    return rc;
}

int am_ingest_post(am_server *srv, const char *session, const am_seg_req *req, char **result,
                   int *status, am_fail *f)
{
    return am_write_with_retries(srv, session, req, result, status, f, am_post_once);
}
