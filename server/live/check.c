/* check.c — per-system totals (metrics) and the next-hypothesis check
 * (see ingest.h). */
#include "ingest_internal.h"

#include "json.h"
#include "peer.h"

#include <stdlib.h>
#include <string.h>

/* ---- metrics and check ------------------------------------------------------ */

typedef struct am_tot_ctx {
    const am_scorer *sc;
    json_t *systems; /* system → totals */
    json_t *pairs; /* "pair:<system>:baseline|system" → totals (am_apply) */
    json_t *translators; /* translator → {system → totals} ("tr:" entries) */
    json_t *raw; /* system or pair → its am_json_totals_raw statistics */
    int rc;
} am_tot_ctx;

static int am_tot_each(void *ctx, const char *system, const char *stats_json)
{
    am_tot_ctx *c = ctx;
    json_t *j = json_loads(stats_json, 0, NULL);
    am_totals t;
    if (!j || am_json_totals_parse(j, c->sc, &t) != AM_OK) {
        json_decref(j);
        c->rc = AM_ERR_INTERNAL;
        return 1;
    }
    if (!strncmp(system, "tr:", 3)) { /* "tr:<translator>:<system>" */
        json_decref(j);
        const char *colon = strchr(system + 3, ':');
        if (!colon)
            return 0;
        char who[160];
        snprintf(who, sizeof who, "%.*s", (int)(colon - system - 3), system + 3);
        json_t *o = json_object_get(c->translators, who);
        if (!o) {
            o = json_object();
            json_object_set_new(c->translators, who, o);
        }
        json_object_set_new(o, colon + 1, am_json_totals(c->sc, &t));
        return 0;
    }
    json_object_set_new(c->raw, system, j);
    json_object_set_new(strncmp(system, "pair:", 5) ? c->systems : c->pairs, system,
                        am_json_totals(c->sc, &t));
    return 0;
}

/* See ingest.h. For readers outside transactions (metrics checks again in
 * its snapshot). Ownership: *out is a reference the caller releases. */
int am_ingest_acquire(am_server *srv, const char *session, am_sess **out, am_fail *f)
{
    int rc = AM_OK;
    for (int attempt = 0; attempt < AM_WRITE_TRIES; attempt++) {
        rc = am_acquire(srv, session, out, f);
        if (rc != AM_OK)
            return rc;
        am_store_session row;
        rc = am_store_session_get(srv->store, session, &row);
        int64_t inc = row.incarnation, gv = row.glossary_version;
        am_store_session_clear(&row);
        if (rc == AM_OK && inc == (*out)->incarnation && gv == (*out)->glossary_version)
            return AM_OK;
        if (rc == AM_OK)
            am_sessions_forget_entry(srv->sessions, *out);
        am_sessions_release(srv->sessions, *out);
        *out = NULL;
        if (rc == AM_ERR_NOTFOUND)
            return am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
        if (rc != AM_OK)
            return am_failp(f, AM_P_INTERNAL, NULL, "storage error: reading the session failed");
    }
    return am_failp(f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
}

/* See ingest.h. When the runtime cannot be had (no session, busy) the
 * glossary is stored without the lock: put_if still checks the incarnation. */
int am_ingest_glossary_put(am_server *srv, const char *session, int64_t incarnation,
                           const char *glossary_json, int64_t *version)
{
    am_sess *sess = NULL;
    am_fail f;
    am_fail_init(&f);
    if (am_ingest_acquire(srv, session, &sess, &f) != AM_OK)
        sess = NULL;
    am_fail_cleanup(&f);
    if (sess)
        am_sess_lock(sess);
    int rc = am_store_glossary_put_if(srv->store, session, incarnation, glossary_json, am_now_ms(),
                                      version);
    if (sess) {
        am_sess_unlock(sess);
        am_sessions_release(srv->sessions, sess);
    }
    am_sessions_forget(srv->sessions, session);
    return rc;
}

int am_ingest_metrics(am_server *srv, const char *session, json_t **out, int64_t *incarnation,
                      am_fail *f)
{
    am_sess *sess = NULL;
    am_tot_ctx c = {NULL, NULL, NULL, NULL, NULL, AM_OK};
    am_store_state st;
    int rc = AM_ERR_CONFLICT;
    /* the totals and the session's version/incarnation from one snapshot,
     * formatted by a runtime of that incarnation */
    for (int attempt = 0; attempt < AM_WRITE_TRIES && rc == AM_ERR_CONFLICT; attempt++) {
        rc = am_acquire(srv, session, &sess, f);
        if (rc != AM_OK)
            return rc;
        c.sc = sess->scorer;
        c.systems = json_object();
        c.pairs = json_object();
        c.translators = json_object();
        c.raw = json_object();
        c.rc = AM_OK;
        rc = am_store_totals_snapshot(srv->store, session, &st, am_tot_each, &c);
        if (rc == AM_OK)
            rc = c.rc;
        if (rc == AM_OK && st.incarnation != sess->incarnation) {
            am_sessions_forget_entry(srv->sessions, sess);
            rc = AM_ERR_CONFLICT;
        }
        if (rc != AM_OK) {
            json_decref(c.systems);
            json_decref(c.pairs);
            json_decref(c.translators);
            json_decref(c.raw);
            am_sessions_release(srv->sessions, sess);
            sess = NULL;
        }
    }
    if (rc == AM_ERR_NOTFOUND)
        return am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
    if (rc == AM_ERR_CONFLICT)
        return am_failp(f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
    if (rc != AM_OK)
        return am_failp(f, AM_P_INTERNAL, NULL, "storage error: reading totals failed");
    /* options are fixed for an incarnation */
    am_store_session row;
    memset(&row, 0, sizeof row);
    rc = am_store_session_get(srv->store, session, &row);
    if (rc != AM_OK || row.incarnation != st.incarnation) {
        am_store_session_clear(&row);
        json_decref(c.systems);
        json_decref(c.pairs);
        json_decref(c.translators);
        json_decref(c.raw);
        am_sessions_release(srv->sessions, sess);
        return am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
    }
    row.segments = st.count; /* not the highest seq: seqs have gaps (schema/007) */
    row.version = st.version;
    if (incarnation)
        *incarnation = st.incarnation;
    json_t *opts = json_loads(row.options, 0, NULL);
    const char *baseline = json_string_value(json_object_get(opts, "baseline_system"));
    json_t *rel = json_object();
    json_t *base = baseline ? json_object_get(c.systems, baseline) : NULL;
    int paired_kept = json_is_true(json_object_get(opts, "paired_totals"));
    if (base) {
        /* paired (docs/metrics.md): over the segments that carry both the
         * system and the baseline, never over different segments */
        json_int_t bseg = json_integer_value(json_object_get(base, "segments"));
        const char *name;
        json_t *tot;
        json_object_foreach(c.systems, name, tot)
        {
            if (!strcmp(name, baseline))
                continue;
            json_int_t xseg = json_integer_value(json_object_get(tot, "segments"));
            char kb[300], kx[300];
            snprintf(kb, sizeof kb, "pair:%s:baseline", name);
            snprintf(kx, sizeof kx, "pair:%s:system", name);
            json_t *pb = json_object_get(c.raw, kb), *px = json_object_get(c.raw, kx);
            json_t *o;
            if (bseg == row.segments && xseg == row.segments)
                o = am_json_relative(c.sc, json_object_get(c.raw, baseline),
                                     json_object_get(c.raw, name),
                                     json_integer(xseg)); /* every segment has both */
            else if (paired_kept)
                o = am_json_relative(
                    c.sc, pb, px,
                    json_integer(px ? json_integer_value(json_object_get(px, "segments")) : 0));
            else /* older session with unpaired segments: no pair totals kept */
                o = am_json_relative(c.sc, NULL, NULL, json_null());
            json_object_set_new(rel, name, o);
        }
    }
    json_decref(c.pairs);
    json_decref(c.raw);
    *out = json_pack("{sssssIsIsososo}", "session", session, "signature",
                     am_scorer_signature(sess->scorer), "segments", (json_int_t)row.segments,
                     "version", (json_int_t)row.version, "baseline_system",
                     baseline ? json_string(baseline) : json_null(), "systems", c.systems,
                     "relative_to_baseline", rel);
    json_object_set_new(*out, "by_translator", c.translators);
    json_object_set_new(*out, "last_seq", json_integer((json_int_t)st.last_seq));
    json_decref(opts);
    am_store_session_clear(&row);
    am_sessions_release(srv->sessions, sess);
    return AM_OK;
}

typedef struct am_choice_ctx {
    json_t *arr;
} am_choice_ctx;

static int am_choice_each(void *ctx, const char *alt, int64_t count)
{
    am_choice_ctx *c = ctx;
    json_array_append_new(c->arr, json_pack("{sssI}", "target", alt, "count", (json_int_t)count));
    return 0;
}

/* UTF-16 code units of s[0..byte) (s valid UTF-8, byte on a character
 * boundary): one per character, two for a character beyond U+FFFF (a
 * 4-byte sequence). */
static size_t utf16_units(const char *s, size_t byte)
{
    size_t n = 0;
    for (size_t i = 0; i < byte; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80)
            n += c >= 0xF0 ? 2 : 1;
    }
    return n;
}

/* [start, end) of span sp in text t as UTF-16 code units (new array). */
static json_t *span_utf16(const char *t, const am_terms_span *sp)
{
    size_t a = utf16_units(t, sp->byte_start);
    size_t b = a + utf16_units(t + sp->byte_start, sp->byte_end - sp->byte_start);
    return json_pack("[II]", (json_int_t)a, (json_int_t)b);
}

/* The translator's recorded choices of the glossary entries a check meets,
 * each read once (the arrays are owned here; items borrow them). */
typedef struct check_choices {
    json_t **arr;
    size_t *entry;
    size_t n, cap;
} check_choices;

/* What a check reads from the store, all of it in one read snapshot rtx
 * (issue 27: a check used to open a snapshot and scan every pending
 * segment once per word, quadratic in the hypothesis's length): the
 * history counts a POST is scored with (am_hist_ensure: the session's cache,
 * filled once at the snapshot's version), so that a word's occ is a hash
 * lookup, plus an indexed one of its settled count when the cache holds
 * the pending words only; the choices of an entry read once. The session
 * lock is held from before the snapshot to the end of the check (lock
 * order: the session, then a reader): the cache is the session's, valid
 * while no commit moves it on. */
typedef struct check_snap {
    am_sess *sess; /* borrowed; locked by check_snap_begin */
    am_store_rtx *rtx; /* owned: ended by check_snap_end */
    const char *session; /* borrowed */
    am_hist hist; /* borrowed from sess's cache while the lock is held */
    am_budget *bud; /* borrowed: a long check stops at it between lookups */
    check_choices cc;
} check_snap;

/* Locks sess (a runtime of session, borrowed), opens cs's snapshot and
 * makes sure of the history counts at its version. AM_ERR_CONFLICT when
 * the stored session is not the runtime's incarnation or glossary version
 * (re-acquire and retry), AM_ERR_NOTFOUND when it is gone, CHECK_FAILED
 * with *f filled when the history could not be read, another am_err when
 * the store failed; on error nothing is left open or locked. */
#define CHECK_FAILED 1
static int check_snap_begin(check_snap *cs, am_server *srv, const char *session, am_sess *sess,
                            am_budget *bud, am_fail *f)
{
    memset(cs, 0, sizeof *cs);
    cs->session = session;
    cs->bud = bud;
    am_sess_lock(sess);
    int rc = am_store_rtx_begin(srv->store, &cs->rtx);
    if (rc != AM_OK) {
        am_sess_unlock(sess);
        memset(cs, 0, sizeof *cs);
        return rc;
    }
    cs->sess = sess;
    am_store_state st;
    rc = am_store_tx_session_info(cs->rtx, session, &st);
    if (rc == AM_OK &&
        (st.incarnation != sess->incarnation || st.glossary_version != sess->glossary_version))
        rc = AM_ERR_CONFLICT;
    if (rc == AM_OK && am_hist_ensure(sess, cs->rtx, session, st.version, &cs->hist, f) != AM_OK)
        rc = CHECK_FAILED;
    if (rc != AM_OK) {
        am_store_rtx_end(cs->rtx);
        am_sess_unlock(sess);
        memset(cs, 0, sizeof *cs);
    }
    return rc;
}

/* Ends cs's snapshot and unlocks its session (nothing when not begun). */
static void check_snap_end(check_snap *cs)
{
    for (size_t c = 0; c < cs->cc.n; c++)
        json_decref(cs->cc.arr[c]);
    free(cs->cc.arr);
    free(cs->cc.entry);
    if (cs->rtx)
        am_store_rtx_end(cs->rtx);
    if (cs->sess)
        am_sess_unlock(cs->sess);
    memset(cs, 0, sizeof *cs);
}

/* Choices of entry e (index idx) of the session (borrowed; read on first
 * use, in the check's snapshot). */
static json_t *check_choices_get(check_snap *cs, size_t idx, const am_gloss_entry *e)
{
    check_choices *cc = &cs->cc;
    for (size_t c = 0; c < cc->n; c++)
        if (cc->entry[c] == idx)
            return cc->arr[c];
    if (cc->n == cc->cap) {
        cc->cap = cc->cap ? 2 * cc->cap : 8;
        cc->arr = am_xrealloc(cc->arr, cc->cap * sizeof *cc->arr);
        cc->entry = am_xrealloc(cc->entry, cc->cap * sizeof *cc->entry);
    }
    am_choice_ctx ch = {json_array()};
    /* none read (a storage error) shows as no recorded choice, as before */
    am_store_tx_choices_each(cs->rtx, cs->session, e->source, am_choice_each, &ch);
    cc->entry[cc->n] = idx;
    cc->arr[cc->n++] = ch.arr;
    return ch.arr;
}

/* The 422/503 of a failed term preview (rc) or of n occurrences over the
 * limit (rc AM_OK). */
static int check_fail(am_server *srv, am_budget *bud, int rc, size_t n, am_fail *f)
{
    if (rc == AM_ERR_CANCELLED)
        return am_budget_fail(f, bud);
    if (rc == AM_ERR_RANGE)
        return am_failp(f, AM_P_TOO_MANY_TERM_OCCURRENCES, "source",
                        "more than %d glossary term occurrences in the source; the limit "
                        "is %d (max-term-occurrences)",
                        srv->cfg.max_term_occurrences, srv->cfg.max_term_occurrences);
    if (rc != AM_OK)
        return am_failp(f, AM_P_INVALID_VALUE, NULL, "%s", am_strerror(rc));
    return am_failp(f, AM_P_TOO_MANY_TERM_OCCURRENCES, "source",
                    "%zu glossary term occurrences in the source; the limit is %d "
                    "(max-term-occurrences)",
                    n, srv->cfg.max_term_occurrences);
}

/* One hypothesis's glossary terms (the check's "terms" items), with
 * counts: *missing, *forbidden, *established (entries with an established
 * choice) and *following (of those, the hypothesis uses the established
 * target). Returns a new array in *out, or an am_err with *f filled. */
static int check_terms(am_server *srv, check_snap *cs, am_sess *sess, am_score_ws *ws,
                       am_budget *bud, const char *source, const char *hyp, json_t **out,
                       int64_t counts[4], am_fail *f)
{
    const am_terms_prev *pv = NULL;
    size_t n = 0;
    am_score_ws_set_cancel(ws, &bud->cancel);
    int rc =
        am_terms_preview(am_score_ws_terms(ws), am_scorer_lex(sess->scorer), source, hyp, &pv, &n);
    am_score_ws_set_cancel(ws, NULL);
    if (rc != AM_OK || n > (size_t)srv->cfg.max_term_occurrences)
        return check_fail(srv, bud, rc, n, f);
    json_t *terms = json_array();
    memset(counts, 0, 4 * sizeof counts[0]);
    for (size_t i = 0; i < n; i++) {
        const am_terms_prev *p = &pv[i];
        if (p->entry >= sess->gloss.n)
            continue;
        const am_gloss_entry *e = &sess->gloss.v[p->entry];
        json_t *targets = json_array();
        for (size_t k = 0; k < e->n_targets; k++)
            json_array_append_new(targets, json_string(e->targets[k]));
        json_t *o = json_pack("{sIsssosb}", "entry", (json_int_t)p->entry, "source", e->source,
                              "targets", targets, "forbidden", e->forbidden);
        json_object_set_new(
            o, "source_span",
            json_pack("[II]", (json_int_t)p->src.byte_start, (json_int_t)p->src.byte_end));
        json_object_set_new(o, "source_span_utf16", span_utf16(source, &p->src));
        const char *used = p->used == AM_TERMS_EXACT  ? "exact"
                           : p->used == AM_TERMS_STEM ? "stem"
                                                      : NULL;
        json_object_set_new(o, "used", used ? json_string(used) : json_null());
        int uses_alt = used && p->alt < e->n_targets;
        if (uses_alt) {
            json_object_set_new(o, "used_target", json_string(e->targets[p->alt]));
            json_object_set_new(
                o, "hypothesis_span",
                json_pack("[II]", (json_int_t)p->hyp.byte_start, (json_int_t)p->hyp.byte_end));
            json_object_set_new(o, "hypothesis_span_utf16", span_utf16(hyp, &p->hyp));
            json_object_set_new(
                o, "used_surface",
                json_stringn(hyp + p->hyp.byte_start, p->hyp.byte_end - p->hyp.byte_start));
        }
        if (e->forbidden && used)
            counts[1]++;
        if (!e->forbidden && !used)
            counts[0]++;
        json_t *arr = check_choices_get(cs, p->entry, e);
        json_object_set(o, "translator_choices", arr);
        json_t *first = json_object_get(json_array_get(arr, 0), "target");
        json_object_set_new(o, "established_target", first ? json_incref(first) : json_null());
        if (first && !e->forbidden) {
            counts[2]++;
            if (uses_alt && !strcmp(json_string_value(first), e->targets[p->alt]))
                counts[3]++;
        }
        json_array_append_new(terms, o);
    }
    *out = terms;
    return AM_OK;
}

/* The recall lookup of a check (ctx: its check_snap): occ of word in the
 * session's history in the check's snapshot, the settled count plus the
 * pending segments containing it (0 when never confirmed), as
 * am_store_word_history counts it. The budget is asked every 64 lookups
 * (a lookup takes a microsecond or a few). */
static int check_occ(void *ctx, const char *word, int64_t *occ)
{
    check_snap *cs = ctx;
    if (am_cancel_spend(&cs->bud->cancel, AM_CANCEL_QUANTUM / 64))
        return AM_ERR_CANCELLED;
    return am_hist_lookup(cs->rtx, cs->session, &cs->hist, word, occ);
}

/* The adaptation signal of hypothesis hyp (docs/metrics.md §2, "The next
 * hypothesis"): its content words as the session would count them were
 * hyp confirmed (same extraction and novel-word filter as recall), each
 * with occ, the number of confirmed segments that contained it, which is
 * the shot it would be counted at. Returns a new object in *out or an
 * am_err with *f filled. */
static int check_adaptation(check_snap *cs, am_sess *sess, am_score_ws *ws, am_budget *bud,
                            const char *hyp, json_t **out, int64_t *confirmed, am_fail *f)
{
    am_seg_input in;
    memset(&in, 0, sizeof in);
    in.source = "";
    in.translation = hyp;
    in.hyps = &hyp;
    in.nsys = 1;
    const am_recall_seg *rec = NULL;
    const char *field = NULL;
    am_score_ws_set_cancel(ws, &bud->cancel);
    int rc = am_score_segment_recall(sess->scorer, ws, &in, check_occ, cs, &rec, &field);
    am_score_ws_set_cancel(ws, NULL);
    if (rc == AM_ERR_CANCELLED)
        return am_budget_fail(f, bud);
    if (rc != AM_OK)
        return am_failp(f,
                        rc == AM_ERR_UTF8 || rc == AM_ERR_NUL ? AM_P_INVALID_UTF8 : AM_P_INTERNAL,
                        NULL, "%s", am_strerror(rc));
    json_t *words = json_array();
    int64_t seen = 0, one = 0;
    for (size_t i = 0; i < rec->words.n; i++) {
        int64_t occ = rec->shot[i];
        json_array_append_new(words,
                              json_pack("{sssI}", "word", rec->words.v[i], "occ", (json_int_t)occ));
        seen += occ > 0;
        one += occ == 1;
    }
    size_t nw = rec->words.n;
    *confirmed = seen;
    *out = json_pack("{sIsIsIsosO}", "content_words", (json_int_t)nw, "confirmed_words",
                     (json_int_t)seen, "one_shot_words", (json_int_t)one, "reuse",
                     nw ? json_real((double)seen / (double)nw) : json_null(), "words", words);
    json_decref(words);
    return AM_OK;
}

/* A runtime of session in *sess and the check's snapshot of the same
 * incarnation and glossary version in *cs (both released by the caller),
 * or an am_err with *f filled. */
static int check_begin(am_server *srv, const char *session, am_budget *bud, am_sess **sess,
                       check_snap *cs, am_fail *f)
{
    for (int attempt = 0; attempt < AM_WRITE_TRIES; attempt++) {
        int rc = am_ingest_acquire(srv, session, sess, f);
        if (rc != AM_OK)
            return rc;
        rc = check_snap_begin(cs, srv, session, *sess, bud, f);
        if (rc == AM_OK)
            return AM_OK;
        if (rc == CHECK_FAILED) { /* *f filled */
            am_sessions_release(srv->sessions, *sess);
            *sess = NULL;
            return AM_ERR_INTERNAL;
        }
        if (rc == AM_ERR_CONFLICT)
            am_sessions_forget_entry(srv->sessions, *sess);
        am_sessions_release(srv->sessions, *sess);
        *sess = NULL;
        if (rc == AM_ERR_NOTFOUND)
            return am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
        if (rc != AM_ERR_CONFLICT)
            return am_failp(f, AM_P_INTERNAL, NULL,
                            "storage error: reading the session's history failed");
    }
    return am_failp(f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
}

int am_ingest_check(am_server *srv, const char *session, const char *source, const char *const *sys,
                    const char *const *hyps, size_t nsys, am_peer *peer, json_t **out, am_fail *f)
{
    am_sess *sess;
    am_budget bud;
    am_budget_start(&bud, srv);
    if (peer) /* every place that asks the budget asks the client too */
        am_peer_chain(peer, &bud.cancel);
    check_snap cs;
    int rc = check_begin(srv, session, &bud, &sess, &cs, f);
    if (rc != AM_OK)
        return rc;
    am_score_ws *ws = am_wspool_get(srv->wspool);
    am_terms_ws_set_max_occurrences(am_score_ws_terms(ws), (size_t)srv->cfg.max_term_occurrences);
    json_t *terms = NULL, *systems = json_object();
    int64_t top[4] = {0, 0, 0, 0};
    const char *best = NULL;
    int64_t best_seen = -1;
    int tie = 0;
    /* the top-level terms: of the first system ("" without a hypothesis) */
    rc = check_terms(srv, &cs, sess, ws, &bud, source, nsys ? hyps[0] : "", &terms, top, f);
    for (size_t s = 0; s < nsys && rc == AM_OK; s++) {
        json_t *st = NULL, *ad = NULL;
        int64_t c[4], seen = 0;
        rc = s == 0 ? AM_OK : check_terms(srv, &cs, sess, ws, &bud, source, hyps[s], &st, c, f);
        /* asked here too: tokenizing a long hypothesis (before its first
         * lookup) does not ask, and a client may have gone meanwhile */
        if (rc == AM_OK && am_budget_over(&bud))
            rc = am_budget_fail(f, &bud);
        if (rc == AM_OK)
            rc = check_adaptation(&cs, sess, ws, &bud, hyps[s], &ad, &seen, f);
        if (rc != AM_OK) {
            json_decref(st);
            break;
        }
        const int64_t *cn = s == 0 ? top : c;
        json_object_set_new(ad, "terms",
                            json_pack("{sIsIsIsI}", "missing", (json_int_t)cn[0], "forbidden_used",
                                      (json_int_t)cn[1], "established", (json_int_t)cn[2],
                                      "follows_established", (json_int_t)cn[3]));
        json_object_set_new(ad, "term_items", s == 0 ? json_incref(terms) : st);
        json_object_set_new(systems, sys[s], ad);
        if (seen > best_seen) {
            best = sys[s];
            best_seen = seen;
            tie = 0;
        } else if (seen == best_seen) {
            tie = 1;
        }
    }
    check_snap_end(&cs);
    am_wspool_put(srv->wspool, ws);
    am_sessions_release(srv->sessions, sess);
    if (rc != AM_OK) {
        json_decref(terms);
        json_decref(systems);
        if (rc == AM_ERR_CANCELLED && peer && peer->gone) /* nobody reads it; the log says why */
            am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                     "the client closed its connection: the check was abandoned");
        return rc;
    }
    json_t *adaptation = json_pack("{soso}", "systems", systems, "best_system",
                                   best && !tie && best_seen > 0 ? json_string(best) : json_null());
    *out = json_pack("{sssosIsIso}", "session", session, "terms", terms, "missing_terms",
                     (json_int_t)top[0], "forbidden_used", (json_int_t)top[1], "adaptation",
                     adaptation);
    return AM_OK;
}
