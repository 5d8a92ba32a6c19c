/* replay.c — replacement and deletion: the replay of a session's history
 * from its last checkpoint, staged result generations and the switch (see
 * ingest.h). */
#include "ingest_internal.h"

#include "clock.h" /* am_mono_ns */
#include "events.h" /* am_events_publish (SSE) */
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* ---- replacement and replay ------------------------------------------------ */

typedef struct am_row {
    int64_t seq;
    char *client_id;
    char *request;
    int64_t glossary_version; /* the segment was scored with */
} am_row;

typedef struct am_rows {
    am_row *v;
    size_t n, cap;
} am_rows;

static int am_collect(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                      int64_t glossary_version)
{
    am_rows *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 256;
        r->v = am_xrealloc(r->v, r->cap * sizeof *r->v);
    }
    r->v[r->n].seq = seq;
    r->v[r->n].client_id = am_xstrdup(client_id);
    r->v[r->n].request = am_xstrdup(request_json);
    r->v[r->n].glossary_version = glossary_version;
    r->n++;
    return 0;
}

static void am_rows_free(am_rows *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].client_id);
        free(r->v[i].request);
    }
    free(r->v);
}

/* The scorers of a replay: the session runtime's own for its glossary
 * version, and for a segment first scored with an older version a scorer
 * built from that stored, immutable version, lazily, when the replay
 * reaches the first such segment, and freed when it reaches a segment of
 * another version (the log's versions only grow with its seqs, so each is
 * built once): a replay over N versions holds at most one extra scorer,
 * never N (issue 25: 16 versions of a 100,000-entry glossary took 1.9 GB).
 * Its bytes are counted in the session cache's memory budget while it
 * lives (am_sessions_charge). */
typedef struct am_vscorers {
    const am_sess *sess; /* borrowed */
    am_store_session row; /* options and stopwords of the session (owned) */
    int have_row;
    int64_t incarnation; /* the session's, as the replay's snapshot read it */
    int64_t version; /* of sc (0: none built) */
    am_scorer *sc; /* owned */
    am_gloss gloss; /* owned */
    size_t charged; /* bytes of sc and gloss counted in the budget */
    size_t built; /* scorers built (the replay's debug log line) */
} am_vscorers;

static void am_vscorer_drop(am_server *srv, am_vscorers *vs)
{
    am_scorer_free(vs->sc);
    am_gloss_cleanup(&vs->gloss);
    am_gloss_init(&vs->gloss);
    vs->sc = NULL;
    vs->version = 0;
    if (vs->charged)
        am_sessions_uncharge(srv->sessions, vs->charged);
    vs->charged = 0;
}

static void am_vscorers_cleanup(am_server *srv, am_vscorers *vs)
{
    am_vscorer_drop(srv, vs);
    am_store_session_clear(&vs->row);
}

/* Reads the entries of glossary version `version` (caller frees) on a
 * snapshot of its own, checking that the session is still the incarnation
 * the replay read: the caller holds no reader (server/base/lockck.h). A
 * deleted (or deleted and re-created) session is AM_ERR_CONFLICT: the
 * replay's switch would refuse it anyway, and a re-created session's
 * versions are not the ones the log was scored with. */
static int vscorer_entries(am_server *srv, const char *session, int64_t incarnation,
                           int64_t version, char **entries)
{
    am_store_rtx *rtx = NULL;
    int rc = am_store_rtx_begin(srv->store, &rtx);
    if (rc != AM_OK)
        return rc;
    am_store_state now;
    rc = am_store_tx_session_info(rtx, session, &now);
    if (rc == AM_ERR_NOTFOUND || (rc == AM_OK && now.incarnation != incarnation))
        rc = AM_ERR_CONFLICT;
    if (rc == AM_OK)
        rc = am_store_tx_glossary_version(rtx, session, version, entries);
    am_store_rtx_end(rtx);
    return rc;
}

/* The scoring of glossary version `version` (borrowed from vs or its
 * session, valid until the next call) into *out, building it when it is
 * not the one vs holds (see am_vscorers). *retry set when the session
 * changed meanwhile. */
static int am_vscorer_get(am_server *srv, const char *session, am_vscorers *vs, int64_t version,
                          am_scoring *out, am_fail *f, int *retry)
{
    if (version == vs->sess->glossary_version) {
        *out = am_scoring_of(vs->sess);
        return AM_OK;
    }
    if (vs->sc && vs->version == version) {
        am_scoring u = {vs->sc, &vs->gloss, version};
        *out = u;
        return AM_OK;
    }
    am_vscorer_drop(srv, vs); /* the one before: no later segment uses it */
    char *entries = NULL;
    int rc = vs->have_row ? vscorer_entries(srv, session, vs->incarnation, version, &entries)
                          : AM_ERR_INTERNAL;
    if (rc == AM_ERR_CONFLICT) {
        free(entries);
        *retry = 1;
        return am_failp(f, AM_P_UNAVAILABLE, NULL,
                        "the session changed while the segment was replaced; retry");
    }
    if (rc != AM_OK) {
        free(entries);
        return am_failp(f, AM_P_INTERNAL, NULL,
                        "replay failed: glossary version %lld of session '%s' cannot be read (%s)",
                        (long long)version, session, am_strerror(rc));
    }
    am_buf err;
    am_buf_init(&err);
    /* the build's transient peak counts in the memory budget; under the
     * session lock it may not wait (alone = 1: idle runtimes are freed) */
    size_t est = am_sessions_build_estimate(entries ? strlen(entries) : 0); /* NULL: none */
    int reserved = am_sessions_reserve(srv->sessions, est, 1) == AM_OK;
    rc = am_sessions_build_in(srv->sessions, vs->row.options, vs->row.custom_stopwords, entries,
                              vs->sess->background, &vs->sc, &vs->gloss, &err);
    if (reserved)
        am_sessions_unreserve(srv->sessions, est);
    free(entries);
    if (rc != AM_OK) {
        am_failp(f, AM_P_INTERNAL, NULL, "replay failed: glossary version %lld: %s",
                 (long long)version, am_buf_str(&err));
        am_buf_cleanup(&err);
        am_vscorer_drop(srv, vs);
        return rc;
    }
    am_buf_cleanup(&err);
    vs->version = version;
    vs->built++;
    vs->charged = am_sessions_scorer_bytes(vs->sc, &vs->gloss);
    am_sessions_charge(srv->sessions, vs->charged);
    am_scoring u = {vs->sc, &vs->gloss, version};
    *out = u;
    return AM_OK;
}

/* The totals of system in m (borrowed), added (uninitialized) when m has
 * none. */
static am_totals *mem_slot(am_mem *m, const char *system)
{
    am_totals *t = am_mem_totals(m, system);
    if (t)
        return t;
    if (m->n == m->cap) {
        m->cap *= 2;
        m->sys = am_xrealloc(m->sys, m->cap * sizeof *m->sys);
        m->tot = am_xrealloc(m->tot, m->cap * sizeof *m->tot);
    }
    m->sys[m->n] = am_xstrdup(system);
    return &m->tot[m->n++];
}

/* Applies a scored segment's plan to the in-memory history (what
 * am_plan_exec does to the store). */
void am_mem_apply(am_mem *m, const am_plan *p)
{
    const char *w = p->words.len ? am_buf_str(&p->words) : "";
    for (size_t i = 0; i < p->nwords; i++) {
        am_vocab_add(m->hist, w, 1);
        w += strlen(w) + 1;
    }
    for (size_t k = 0; k < p->nsys; k++)
        *mem_slot(m, p->sys[k]) = p->tot[k];
}

/* The start of a replay from a checkpoint (am_store_tx_checkpoint_last,
 * am_store_tx_history_upto): entries and history into mem (borrowed),
 * totals parsed for sc (borrowed); failed set when an entry is damaged. */
typedef struct am_ckpt_load {
    am_mem *mem;
    const am_scorer *sc;
    int failed;
} am_ckpt_load;

static int ckpt_entry(void *ctx, const char *system, const char *stats_json)
{
    am_ckpt_load *l = ctx;
    json_t *j = stats_json ? json_loads(stats_json, 0, NULL) : NULL;
    am_totals t;
    if (system && j && am_json_totals_parse(j, l->sc, &t) == AM_OK)
        *mem_slot(l->mem, system) = t;
    else
        l->failed = 1;
    json_decref(j);
    return 0;
}

static int ckpt_word(void *ctx, const char *word, int64_t occ)
{
    am_ckpt_load *l = ctx;
    if (word)
        am_vocab_set(l->mem->hist, word, occ);
    return 0;
}

void am_mem_cleanup(am_mem *m)
{
    free(m->tot);
    am_vocab_free(m->hist);
    for (size_t i = 0; i < m->n; i++)
        free(m->sys[i]);
    free(m->sys);
}

/* What a replay writes, computed outside the write lock: the replaced
 * segment's content words and term choices before and after (only its
 * words and choices can change: they depend on its own text and glossary
 * version alone), the new results from the replaced seq on, the totals (in
 * the am_mem) and the checkpoints after the one it started from. */
typedef struct am_redo {
    am_buf old_words, new_words; /* NUL-separated */
    size_t n_old, n_new;
    am_vocab *choice_idx; /* "len:entry alt" -> index into choice */
    struct am_redo_choice {
        char *entry, *alt; /* owned */
        int64_t count;
    } * choice;
    size_t nchoice, cap_choice;
    int64_t *res_seq;
    char **res; /* owned JSON texts */
    char **res_stats; /* res[i]'s ?ci= statistics record (owned; ci_stats.h) */
    size_t nres, cap_res;
    int64_t from; /* the checkpoint the replay started after (0: none) */
    /* the checkpoints after `from`, written again: entry i is system
     * ck_sys[i] (owned) at seq ck_seq[i], totals ck_stats[i] (owned) */
    int64_t *ck_seq;
    char **ck_sys, **ck_stats;
    size_t nckpt, cap_ckpt;
} am_redo;

static void redo_init(am_redo *r)
{
    memset(r, 0, sizeof *r);
    am_buf_init(&r->old_words);
    am_buf_init(&r->new_words);
    r->choice_idx = am_vocab_new();
}

static void redo_cleanup(am_redo *r)
{
    am_buf_cleanup(&r->old_words);
    am_buf_cleanup(&r->new_words);
    am_vocab_free(r->choice_idx);
    for (size_t i = 0; i < r->nchoice; i++) {
        free(r->choice[i].entry);
        free(r->choice[i].alt);
    }
    free(r->choice);
    for (size_t i = 0; i < r->nres; i++) {
        free(r->res[i]);
        free(r->res_stats[i]);
    }
    free(r->res);
    free(r->res_stats);
    free(r->res_seq);
    for (size_t i = 0; i < r->nckpt; i++) {
        free(r->ck_sys[i]);
        free(r->ck_stats[i]);
    }
    free(r->ck_seq);
    free(r->ck_sys);
    free(r->ck_stats);
}

/* Keeps the checkpoint at seq: every entry of m's totals. */
static void redo_checkpoint(am_redo *r, int64_t seq, const am_mem *m)
{
    for (size_t k = 0; k < m->n; k++) {
        if (r->nckpt == r->cap_ckpt) {
            r->cap_ckpt = r->cap_ckpt ? 2 * r->cap_ckpt : 64;
            r->ck_seq = am_xrealloc(r->ck_seq, r->cap_ckpt * sizeof *r->ck_seq);
            r->ck_sys = am_xrealloc(r->ck_sys, r->cap_ckpt * sizeof *r->ck_sys);
            r->ck_stats = am_xrealloc(r->ck_stats, r->cap_ckpt * sizeof *r->ck_stats);
        }
        r->ck_seq[r->nckpt] = seq;
        r->ck_sys[r->nckpt] = am_xstrdup(m->sys[k]);
        r->ck_stats[r->nckpt++] = am_json_totals_text(&m->tot[k]);
    }
}

/* Counts the plan's term choices into r, each sign (+1: the edited
 * segment's new body, -1: its old one) times. */
static void redo_choices(am_redo *r, const am_plan *p, int sign)
{
    am_buf key;
    am_buf_init(&key);
    for (size_t i = 0; i < p->nchoices; i++) {
        const char *e = p->choices[2 * i], *alt = p->choices[2 * i + 1];
        am_buf_reset(&key);
        am_buf_printf(&key, "%zu:%s%s", strlen(e), e, alt);
        int64_t at;
        if (!am_vocab_get(r->choice_idx, am_buf_str(&key), &at)) {
            if (r->nchoice == r->cap_choice) {
                r->cap_choice = r->cap_choice ? 2 * r->cap_choice : 64;
                r->choice = am_xrealloc(r->choice, r->cap_choice * sizeof *r->choice);
            }
            at = (int64_t)r->nchoice++;
            r->choice[at].entry = am_xstrdup(e);
            r->choice[at].alt = am_xstrdup(alt);
            r->choice[at].count = 0;
            am_vocab_set(r->choice_idx, am_buf_str(&key), at);
        }
        r->choice[at].count += sign;
    }
    am_buf_cleanup(&key);
}

/* Keeps the new result text of segment seq and its ?ci= statistics
 * record (both taken over; stats NULL: none), staged together so the
 * rewritten rows keep the fast ?ci= (schema/014). */
static void redo_result(am_redo *r, int64_t seq, char *txt, char *stats)
{
    if (r->nres == r->cap_res) {
        r->cap_res = r->cap_res ? 2 * r->cap_res : 256;
        r->res = am_xrealloc(r->res, r->cap_res * sizeof *r->res);
        r->res_stats = am_xrealloc(r->res_stats, r->cap_res * sizeof *r->res_stats);
        r->res_seq = am_xrealloc(r->res_seq, r->cap_res * sizeof *r->res_seq);
    }
    r->res_seq[r->nres] = seq;
    r->res_stats[r->nres] = stats;
    r->res[r->nres++] = txt;
}

/* Is w one of the n NUL-separated words of b? */
static int words_has(const am_buf *b, size_t n, const char *w)
{
    const char *x = b->len ? am_buf_str(b) : "";
    for (size_t i = 0; i < n; i++, x += strlen(x) + 1)
        if (!strcmp(x, w))
            return 1;
    return 0;
}

/* The write side of a replay, one short transaction: the session must
 * still be at the version the replay read (else AM_ERR_CONFLICT, nothing
 * written); then the replaced segment's words are swapped in the history
 * (the other segments' words did not change) or, for a deleted segment,
 * taken away and its row deleted (am_store_tx_segment_delete: the later
 * segments keep their seqs), its term choices swapped likewise (the other
 * segments' choices did not change either), the totals replaced, and the
 * results from the edited segment on and the checkpoints after the one the
 * replay started from switched in (both staged before; the older
 * checkpoints after that one are cut off). */
typedef struct am_redo_job {
    const char *session;
    int64_t version; /* session version the replay was computed from */
    int64_t incarnation; /* and its incarnation */
    int64_t seq; /* the replaced or deleted segment */
    const am_seg_req *req; /* the new body; NULL: seq is deleted */
    const char *hash;
    int64_t now;
    const am_redo *redo;
    const am_mem *mem;
    int64_t gen; /* the staged results' generation (am_store_results_stage) */
} am_redo_job;

static int redo_exec(am_store_tx *tx, const am_redo_job *j)
{
    const am_redo *r = j->redo;
    am_store_state st;
    int rc = am_store_tx_session_info(am_store_tx_reads(tx), j->session, &st);
    if (rc == AM_ERR_NOTFOUND ||
        (rc == AM_OK && (st.version != j->version || st.incarnation != j->incarnation)))
        return AM_ERR_CONFLICT;
    if (rc == AM_OK)
        rc = am_store_tx_replay_reset(tx, j->session, r->from, j->gen);
    const char *w = r->old_words.len ? am_buf_str(&r->old_words) : "";
    for (size_t k = 0; k < r->n_old && rc == AM_OK; k++, w += strlen(w) + 1)
        if (!words_has(&r->new_words, r->n_new, w))
            rc = am_store_tx_vocab_remove(tx, j->session, w, j->seq);
    w = r->new_words.len ? am_buf_str(&r->new_words) : "";
    for (size_t k = 0; k < r->n_new && rc == AM_OK; k++, w += strlen(w) + 1)
        if (!words_has(&r->old_words, r->n_old, w))
            rc = am_store_tx_vocab_insert(tx, j->session, w, j->seq);
    if (rc == AM_OK && !j->req) /* its words are gone: the row goes, the later seqs stay */
        rc = am_store_tx_segment_delete(tx, j->session, j->seq, j->now);
    for (size_t k = 0; k < r->nchoice && rc == AM_OK; k++)
        if (r->choice[k].count != 0) /* 0: the same choice before and after */
            rc = am_store_tx_choice_add(tx, j->session, r->choice[k].entry, r->choice[k].alt,
                                        r->choice[k].count);
    for (size_t k = 0; k < j->mem->n && rc == AM_OK; k++) {
        json_t *rj = am_json_totals_raw(&j->mem->tot[k]);
        char *txt = am_json_dump(rj);
        json_decref(rj);
        rc = am_store_tx_totals_put(tx, j->session, j->mem->sys[k], txt);
        free(txt);
    }
    /* the later results were staged: they become visible with this commit */
    for (size_t k = 0; k < r->nres && rc == AM_OK; k++)
        if (r->res_seq[k] == j->seq && j->req) /* the replaced segment's own row */
            rc = am_store_tx_segment_update_st(tx, j->session, r->res_seq[k], j->hash,
                                               j->req->canonical, r->res[k], r->res_stats[k],
                                               j->now);
    if (rc == AM_OK)
        rc = am_store_tx_results_switch(tx, j->session, j->gen);
    return rc;
}

/* Stages the new results of the replaced segment and the ones after it
 * (after a delete, seq 0: the later ones, under their unchanged seqs) and
 * the new checkpoints, first deleting what an earlier interrupted replay
 * left; *gen gets their generation. */
static int redo_stage(am_store *store, const char *session, am_redo *r, int64_t *gen)
{
    int rc = am_store_results_settle(store, session, 0);
    if (rc == AM_OK)
        rc = am_store_results_stage_st(store, session, gen, r->nres, r->res_seq, r->res,
                                       r->res_stats);
    if (rc == AM_OK)
        rc = am_store_checkpoints_stage(store, session, *gen, r->nckpt, r->ck_seq, r->ck_sys,
                                        r->ck_stats);
    return rc == AM_ERR_NOTFOUND ? AM_ERR_CONFLICT : rc; /* deleted meanwhile: retry */
}

/* The content words the stored (old) body of the replaced segment put into
 * the history, scored again into r->old_words (r->n_old), and its term
 * choices, taken away from r's counts. */
static int old_words(am_server *srv, am_sess *sess, const am_scoring *how, am_mem *mem,
                     const char *session, int64_t seq, const char *request_json, am_budget *bud,
                     am_redo *r, am_fail *f)
{
    json_t *body = json_loads(request_json, 0, NULL);
    am_seg_req old;
    am_fail pf;
    am_fail_init(&pf);
    int rc = body ? am_seg_req_parse(body, NULL, NULL, &old, &pf) : AM_ERR_INTERNAL;
    if (rc == AM_OK)
        (void)am_seg_systems(sess, &old, 0, &pf);
    am_fail_cleanup(&pf);
    if (rc != AM_OK) {
        json_decref(body);
        return am_failp(f, AM_P_INTERNAL, NULL, "replay failed: stored segment %lld cannot be read",
                        (long long)seq);
    }
    am_plan plan;
    am_plan_init(&plan, session, seq);
    json_t *res = NULL;
    rc = am_apply(srv, sess, how, NULL, mem, session, seq, &old, 0, 0, bud, &res, &plan, f);
    if (rc == AM_OK) {
        am_buf_append(&r->old_words, plan.words.data ? plan.words.data : "", plan.words.len);
        r->n_old = plan.nwords;
        redo_choices(r, &plan, -1);
    }
    json_decref(res);
    am_plan_cleanup(&plan);
    am_seg_req_cleanup(&old);
    json_decref(body);
    return rc;
}

/* Where the replay of an edit of segment seq starts (in the read snapshot
 * rtx): the last checkpoint before seq into *from, its totals into mem and
 * the history counted over the segments up to it into mem->hist; with no
 * checkpoint (or a damaged one) *from is 0 and mem empty: the replay starts
 * at the first segment. mem and sess are borrowed. */
static int replay_start(am_store_rtx *rtx, const char *session, const am_sess *sess, int64_t seq,
                        am_mem *mem, int64_t *from)
{
    am_ckpt_load ld = {mem, sess->scorer, 0};
    int rc = am_store_tx_checkpoint_last(rtx, session, seq, from, ckpt_entry, &ld);
    if (rc == AM_OK && *from > 0 && !ld.failed)
        rc = am_store_tx_history_upto(rtx, session, *from, ckpt_word, &ld);
    if (rc != AM_OK || ld.failed || *from == 0) {
        am_mem_cleanup(mem); /* from the first segment */
        am_mem_init(mem);
        *from = 0;
    }
    return rc;
}

/* One attempt of an edit of segment `id`: a replacement by req_in, or
 * with req_in NULL a deletion (see am_ingest_replace, am_ingest_delete);
 * *retry as for am_post_once; *absent set (and 404 in *f) when the session
 * has no segment id. The stored log from the last checkpoint before the
 * edited segment on (replay_start; every AM_CKPT_EVERY seqs) is read on a
 * read snapshot, with the totals of that checkpoint and the history up to
 * it, and replayed in memory (scoring, the new history and totals, the new
 * results, the new checkpoints), each segment with the glossary version it
 * was first scored with, under the session's lock only, so the other
 * sessions' writes go on meanwhile: a replay re-scores the segments from
 * the edited one on and fewer than AM_CKPT_EVERY before it. Then
 * one short write transaction checks that the session is still the
 * incarnation and version the replay read (else a retry) and writes what
 * changed (redo_exec). A deleted segment is left out of the replay; the
 * later ones keep their seqs (its seq stays unused: schema/007), so the
 * write transaction does not grow with the session. */
/* The start of a rewrite of session (a replay here, a rescore:
 * rescore.c): with several nodes on one PostgreSQL database, its rewrite
 * lock on a connection pinned to the rewrite, *ws (store.h
 * am_store_rewrite_begin; SQLite: *ws is the store and nothing else
 * happens). The caller holds am_sess_lock, writes every step of the
 * rewrite through *ws and ends it with am_store_rewrite_end. A lock held
 * by another node's rewrite answers 503 with Retry-After (the client
 * retries; this node does not, the other rewrite may take long). */
int am_rewrite_begin(am_server *srv, const char *session, am_store **ws, am_fail *f, int *retry)
{
    int rc = am_store_rewrite_begin(srv->store, session, ws);
    if (rc == AM_ERR_CONFLICT) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "session '%s' is being rewritten (a replay or rescore) by another node; retry",
                 session);
        f->retry_after = 1;
    } else if (rc != AM_OK) {
        am_fail_write(f, rc, session, "the rewrite", "its lock was taken", retry);
    }
    return rc;
}

/* The state of one edit attempt (am_edit_once), shared by its steps. */
typedef struct am_edit {
    am_server *srv;
    const char *session, *id;
    am_sess *sess;
    const am_seg_req *req; /* the new body (systems as the session names them); NULL: delete */
    am_fail *f;
    am_budget *bud;
    am_store *ws; /* where the edit writes: the store, or its rewrite's pinned view */
    am_store_state st; /* the session as the snapshot read it */
    int64_t seq; /* the edited segment's */
    am_rows rows; /* the stored log from redo.from + 1 on */
    am_vscorers vs; /* a scorer per glossary version used */
    am_redo redo; /* what the switch writes */
    am_mem mem; /* the history, replayed */
    json_t *last_res; /* the replaced segment's new result (owned) */
    size_t replayed; /* segments scored (adaptmon_replay_segments_total) */
    int64_t now;
} am_edit;

/* The first step of an edit: the session's pending words moved into its
 * vocab and occurrences (am_store_tx_history_settle) in a short write
 * transaction, so the replay reads and rewrites one settled history. An
 * unknown session is left to edit_read (404). */
static int edit_settle(am_edit *e, int *retry)
{
    am_store_tx *tx = NULL;
    int rc = am_store_tx_begin(e->ws, &tx);
    if (rc == AM_OK) {
        rc = am_store_tx_history_settle(tx, e->session);
        if (rc == AM_OK)
            rc = am_store_tx_commit(tx);
        else
            am_store_tx_rollback(tx);
    }
    am_sess_tot_clear(e->sess); /* its history cache is of before */
    if (rc == AM_ERR_NOTFOUND)
        return AM_OK;
    if (rc != AM_OK)
        am_fail_write(e->f, rc, e->session, "the replacement", "its word history was written",
                      retry);
    return rc;
}

/* The read step of an edit: the session's state, the edited segment's
 * seq, the start of the replay (replay_start) and the log after it, and
 * the scorers of every glossary version the log uses, all on one read
 * snapshot, which ends before the scoring: a read transaction held
 * through the scoring would keep the checkpointer from reusing the WAL,
 * and the writer would checkpoint itself. *retry and *absent as for
 * am_edit_once. */
static int edit_read(am_edit *e, int *retry, int *absent)
{
    am_store_rtx *rtx = NULL;
    int rc = am_store_rtx_begin(e->srv->store, &rtx);
    if (rc != AM_OK) {
        am_failp(e->f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        e->f->retry_after = 1;
        return rc;
    }
    rc = am_store_tx_session_info(rtx, e->session, &e->st);
    if (rc == AM_OK && e->st.incarnation != e->sess->incarnation) {
        /* the cached runtime is of a deleted incarnation */
        am_sessions_forget_entry(e->srv->sessions, e->sess);
        *retry = 1;
        am_failp(e->f, AM_P_UNAVAILABLE, NULL,
                 "the session changed while the segment was replaced; retry");
        am_store_rtx_end(rtx);
        return AM_ERR_CONFLICT;
    }
    if (rc == AM_OK)
        rc = am_store_tx_segment_find(rtx, e->session, e->id, &e->seq, NULL, NULL);
    if (rc == AM_ERR_NOTFOUND) {
        *absent = 1;
        am_failp(e->f, AM_P_NOT_FOUND, "id", "no segment '%s' in session '%s'", e->id, e->session);
    } else if (rc != AM_OK) {
        am_failp(e->f, AM_P_INTERNAL, NULL, "storage error: looking up the segment failed");
    } else {
        rc = replay_start(rtx, e->session, e->sess, e->seq, &e->mem, &e->redo.from);
        if (rc == AM_OK)
            rc = am_store_tx_segments_walk_gv(rtx, e->session, e->redo.from + 1, am_collect,
                                              &e->rows);
        int older = 0; /* a segment of an older glossary version: its scorer needs the row */
        for (size_t i = 0; i < e->rows.n && rc == AM_OK; i++)
            older |= e->rows.v[i].glossary_version != e->sess->glossary_version;
        if (rc == AM_OK && older) { /* on this snapshot: never a second reader */
            rc = am_store_tx_session_get(rtx, e->session, &e->vs.row);
            e->vs.have_row = rc == AM_OK;
            e->vs.incarnation = e->st.incarnation;
        }
        if (rc != AM_OK)
            am_failp(e->f, AM_P_INTERNAL, NULL, "storage error: reading the session failed");
    }
    am_store_rtx_end(rtx);
    return rc;
}

/* The replay of stored row r in memory: scored with the glossary version
 * it was first scored with (the edited one with its new body, or, deleted,
 * only its words taken out of the history), the history advanced, and
 * its result, checkpoint and choices noted in e->redo. */
static int edit_replay_row(am_edit *e, const am_row *r, int *retry)
{
    int replaced = r->seq == e->seq;
    int64_t at = r->seq; /* kept after a delete (seq gaps: schema/007) */
    am_scoring how; /* an older version's scorer is built here, on first use */
    int rc = am_vscorer_get(e->srv, e->session, &e->vs, r->glossary_version, &how, e->f, retry);
    if (rc != AM_OK)
        return rc;
    if (replaced && !e->req) /* deleted: its words leave the history */
        return am_budget_over(e->bud) ? am_budget_fail(e->f, e->bud)
                                      : old_words(e->srv, e->sess, &how, &e->mem, e->session,
                                                  e->seq, r->request, e->bud, &e->redo, e->f);
    am_seg_req stored;
    const am_seg_req *use = e->req;
    json_t *body = NULL;
    if (!replaced) {
        body = json_loads(r->request, 0, NULL);
        am_fail pf;
        am_fail_init(&pf);
        /* stored requests were valid when posted: no limits now */
        rc = body ? am_seg_req_parse(body, NULL, NULL, &stored, &pf) : AM_ERR_INTERNAL;
        if (rc == AM_OK)
            (void)am_seg_systems(e->sess, &stored, 0, &pf);
        am_fail_cleanup(&pf);
        if (rc != AM_OK) {
            json_decref(body);
            am_failp(e->f, AM_P_INTERNAL, NULL, "replay failed: stored segment %lld cannot be read",
                     (long long)at);
            return rc;
        }
        use = &stored;
    }
    json_t *res = NULL;
    am_plan plan;
    am_plan_init(&plan, e->session, at);
    rc = am_budget_over(e->bud) ? am_budget_fail(e->f, e->bud)
                                : am_apply(e->srv, e->sess, &how, NULL, &e->mem, e->session, at,
                                           use, e->now, 0, e->bud, &res, &plan, e->f);
    if (rc == AM_OK && replaced) /* the words it had before */
        rc = old_words(e->srv, e->sess, &how, &e->mem, e->session, e->seq, r->request, e->bud,
                       &e->redo, e->f);
    if (rc == AM_OK) {
        am_mem_apply(&e->mem, &plan); /* the history as the store will hold it */
        if (at % AM_CKPT_EVERY == 0)
            redo_checkpoint(&e->redo, at, &e->mem);
        e->replayed++;
        if (replaced) {
            redo_choices(&e->redo, &plan, 1);
            am_buf_append(&e->redo.new_words, plan.words.data ? plan.words.data : "",
                          plan.words.len);
            e->redo.n_new = plan.nwords;
        }
        if (r->seq >= e->seq) { /* the record am_apply encoded of this scoring */
            redo_result(&e->redo, at, am_json_dump(res), plan.stats_txt);
            plan.stats_txt = NULL;
        }
    }
    am_plan_cleanup(&plan);
    if (replaced) {
        e->last_res = res;
        res = NULL;
    }
    json_decref(res);
    if (!replaced) {
        am_seg_req_cleanup(&stored);
        json_decref(body);
    }
    return rc;
}

/* The write step of an edit: the new results and checkpoints staged in
 * short transactions (redo_stage), then the one short switch transaction
 * (redo_exec), which checks the session's version and incarnation. */
static int edit_switch(am_edit *e, int64_t t_start, int *retry)
{
    char hash[17] = "";
    if (e->req)
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)am_fnv1a(e->req->canonical));
    int64_t t_scored = am_mono_ns();
    am_redo_job job = {e->session, e->st.version, e->st.incarnation, e->seq,  e->req,
                       hash,       e->now,        &e->redo,          &e->mem, 0};
    am_store_tx *tx = NULL;
    int rc = redo_stage(e->ws, e->session, &e->redo, &job.gen);
    int64_t t_staged = am_mono_ns();
    if (rc == AM_OK)
        rc = am_store_tx_begin(e->ws, &tx);
    if (rc == AM_OK) {
        rc = redo_exec(tx, &job);
        if (rc == AM_OK)
            rc = am_store_tx_commit(tx);
        else
            am_store_tx_rollback(tx);
    }
    am_log_at(&e->srv->log, AM_LOG_DEBUG, NULL,
              "replay of %zu segments of %s (after seq %lld, %zu older glossary versions "
              "built): scored in %.0f ms, staged in %.0f ms, switched in %.0f ms",
              e->replayed, e->session, (long long)e->redo.from, e->vs.built,
              (double)(t_scored - t_start) / 1e6, (double)(t_staged - t_scored) / 1e6,
              (double)(am_mono_ns() - t_staged) / 1e6);
    if (rc != AM_OK)
        am_fail_write(e->f, rc, e->session, "the replacement",
                      e->req ? "the segment was replaced" : "the segment was deleted", retry);
    return rc;
}

/* One attempt of an edit of segment `id`: a replacement by req_in, or
 * with req_in NULL a deletion (see am_ingest_replace, am_ingest_delete);
 * *retry as for am_post_once; *absent set (and 404 in *f) when the session
 * has no segment id. The stored log from the last checkpoint before the
 * edited segment on (replay_start; every AM_CKPT_EVERY seqs) is read on a
 * read snapshot, with the totals of that checkpoint and the history up to
 * it (edit_read), and replayed in memory (edit_replay_row: scoring, the new
 * history and totals, the new results, the new checkpoints), each segment
 * with the glossary version it was first scored with, under the session's
 * lock only, so the other sessions' writes go on meanwhile: a replay
 * re-scores the segments from the edited one on and fewer than
 * AM_CKPT_EVERY before it. Then one short write transaction checks that
 * the session is still the incarnation and version the replay read (else
 * a retry) and writes what changed (edit_switch). A deleted segment is
 * left out of the replay; the later ones keep their seqs (its seq stays
 * unused: schema/007), so the write transaction does not grow with the
 * session. */
static int am_edit_once(am_server *srv, const char *session, const char *id,
                        const am_seg_req *req_in, char **result, int *status, am_fail *f,
                        int *retry, am_budget *bud, int *absent)
{
    int64_t t_start = am_mono_ns();
    am_sess *sess;
    int rc = am_acquire(srv, session, &sess, f);
    if (rc != AM_OK)
        return rc;
    am_seg_req named; /* shallow: the systems as the session names them */
    if (req_in) {
        named = *req_in;
        if (am_seg_systems(sess, &named, 1, f) != AM_OK) {
            am_sessions_release(srv->sessions, sess);
            return AM_ERR_INVALID;
        }
    }
    am_edit e;
    memset(&e, 0, sizeof e);
    e.srv = srv;
    e.session = session;
    e.id = id;
    e.sess = sess;
    e.req = req_in ? &named : NULL;
    e.f = f;
    e.bud = bud;
    e.vs.sess = sess;
    am_gloss_init(&e.vs.gloss);
    redo_init(&e.redo);
    am_mem_init(&e.mem);
    am_sess_lock(sess);
    rc = am_rewrite_begin(srv, session, &e.ws, f, retry);
    if (rc == AM_OK)
        rc = edit_settle(&e, retry);
    if (rc == AM_OK)
        rc = edit_read(&e, retry, absent);
    e.now = am_now_ms();
    for (size_t i = 0; i < e.rows.n && rc == AM_OK; i++)
        rc = edit_replay_row(&e, &e.rows.v[i], retry);
    if (rc == AM_OK)
        rc = edit_switch(&e, t_start, retry);
    if (rc == AM_OK) {
        am_prom_replayed(srv->prom, (int64_t)e.replayed);
        am_sess_tot_clear(sess); /* the replay rewrote every total */
        if (!e.req) {
            char note[320];
            snprintf(note, sizeof note, "{\"id\":\"%s\",\"seq\":%lld}", id, (long long)e.seq);
            am_events_notice(srv->events, session, "segment-deleted", note);
        }
        am_events_publish_from(srv->events, session, e.seq); /* SSE: seq.. changed (events.h) */
        *result = e.req ? am_json_dump(e.last_res) : NULL;
        *status = e.req ? 200 : 204;
    }
    json_decref(e.last_res);
    redo_cleanup(&e.redo);
    am_mem_cleanup(&e.mem);
    am_rows_free(&e.rows);
    am_vscorers_cleanup(srv, &e.vs);
    am_store_rewrite_end(srv->store, e.ws);
    am_sess_unlock(sess);
    am_sessions_release(srv->sessions, sess);
    return rc;
}

/* One attempt of a PUT: a replacement, or, for an id the session does not
 * have, a POST (an upsert). A POST that finds the id posted meanwhile with
 * another body (409) is retried as a replacement. */
static int am_upsert_once(am_server *srv, const char *session, const am_seg_req *req, char **result,
                          int *status, am_fail *f, int *retry, am_budget *bud)
{
    int absent = 0;
    int rc = am_edit_once(srv, session, req->id, req, result, status, f, retry, bud, &absent);
    if (!absent)
        return rc;
    am_fail_cleanup(f);
    am_fail_init(f);
    rc = am_post_once(srv, session, req, result, status, f, retry, bud);
    if (rc == AM_ERR_CONFLICT && f->failed && f->type == AM_P_CONFLICT)
        *retry = 1;
    return rc;
}

/* One attempt of a DELETE (only req->id is used). */
static int am_delete_once(am_server *srv, const char *session, const am_seg_req *req, char **result,
                          int *status, am_fail *f, int *retry, am_budget *bud)
{
    int absent = 0;
    return am_edit_once(srv, session, req->id, NULL, result, status, f, retry, bud, &absent);
}

/* A replacement (see am_edit_once): the segment replaced and the whole
 * history replayed, each segment scored with the glossary version recorded
 * when it was first posted (so totals equal a replay of the log); an
 * unknown id is posted (upsert). Retried like a POST when the session
 * changed under it (a deleted incarnation, a new version). */
int am_ingest_replace(am_server *srv, const char *session, const am_seg_req *req, char **result,
                      int *status, am_peer *peer, am_fail *f)
{
    return am_write_watched(srv, session, req, result, status, f, am_upsert_once, peer);
}

int am_ingest_delete(am_server *srv, const char *session, const char *id, int *status,
                     am_peer *peer, am_fail *f)
{
    am_seg_req del;
    memset(&del, 0, sizeof del);
    del.id = id;
    char *result = NULL;
    int rc = am_write_watched(srv, session, &del, &result, status, f, am_delete_once, peer);
    free(result);
    return rc;
}
