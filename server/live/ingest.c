/* ingest.c — confirmed segments into a session (see ingest.h). */
#include "ingest.h"

#include "events.h" /* am_events_publish (SSE) */
#include "json.h"
#include "sessions.h"
#include "vocab.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- time budget ---------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The am_cancel check of a budget (ctx: the am_budget, borrowed). */
static int budget_check(void *ctx)
{
    const am_budget *b = ctx;
    if (atomic_load(&b->srv->abandon))
        return 1;
    return b->limit_ns && thread_cpu_ns() >= b->limit_ns;
}

void am_budget_start(am_budget *b, am_server *srv)
{
    am_cancel_init(&b->cancel, budget_check, b);
    b->srv = srv;
    b->limit_ns = srv->cfg.request_timeout_ms > 0
                      ? thread_cpu_ns() + (int64_t)srv->cfg.request_timeout_ms * 1000000
                      : 0;
}

int am_budget_over(am_budget *b)
{
    return am_cancel_spend(&b->cancel, AM_CANCEL_QUANTUM);
}

/* ---- workspace pool ------------------------------------------------------ */

struct am_wspool {
    pthread_mutex_t mu;
    am_score_ws **free;
    size_t n, cap;
};

am_wspool *am_wspool_new(void)
{
    am_wspool *p = am_xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

void am_wspool_free(am_wspool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        am_score_ws_free(p->free[i]);
    free(p->free);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

am_score_ws *am_wspool_get(am_wspool *p)
{
    pthread_mutex_lock(&p->mu);
    am_score_ws *ws = p->n ? p->free[--p->n] : NULL;
    pthread_mutex_unlock(&p->mu);
    return ws ? ws : am_score_ws_new();
}

void am_wspool_put(am_wspool *p, am_score_ws *ws)
{
    pthread_mutex_lock(&p->mu);
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->free = am_xrealloc(p->free, p->cap * sizeof *p->free);
    }
    p->free[p->n++] = ws;
    pthread_mutex_unlock(&p->mu);
}

/* ---- failures ------------------------------------------------------------ */

/* A failed write of a session's rows (rc from the store; nothing was
 * stored), by am_problem_of_store: the session gone is a 404; a session
 * that changed meanwhile (AM_ERR_CONFLICT) a 503 to retry (*retry set;
 * during says while what, e.g. "the segment was scored"); a full disk a 507;
 * anything else a 500. what names the rows ("the segment"). Strings are
 * borrowed. */
static void am_fail_write(am_fail *f, int rc, const char *session, const char *what,
                          const char *during, int *retry)
{
    switch (am_problem_of_store(rc)) {
    case AM_P_NOT_FOUND: am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session); break;
    case AM_P_CONFLICT:
        *retry = 1;
        am_failp(f, AM_P_UNAVAILABLE, NULL, "the session changed while %s; retry", during);
        break;
    case AM_P_INSUFFICIENT_STORAGE:
        am_failp(f, AM_P_INSUFFICIENT_STORAGE, NULL,
                 "%s could not be stored: " AM_PROBLEM_FULL_NOTE, what);
        break;
    default: am_failp(f, AM_P_INTERNAL, NULL, "storage error: %s could not be stored", what);
    }
}

int am_fail_cancelled(am_fail *f, const am_server *srv, int shutdown)
{
    if (shutdown) {
        am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                 "the server is shutting down; the request was abandoned and nothing was "
                 "stored");
        f->retry_after = 1;
    } else {
        am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                 "the request needed more than %d ms of computing (request-timeout-ms); it "
                 "was abandoned and nothing was stored",
                 srv->cfg.request_timeout_ms);
    }
    return AM_ERR_CANCELLED;
}

/* The 503 of a request abandoned by its budget b (borrowed). */
static int fail_cancelled(am_fail *f, const am_budget *b)
{
    return am_fail_cancelled(f, b->srv, atomic_load(&b->srv->abandon));
}

/* ---- request validation --------------------------------------------------- */

/* A JSON string field without NUL bytes and within the token limit; its
 * token count is added to *total (the segment's budget, checked by the
 * caller). */
static int am_text_field(json_t *v, const char *name, const am_srv_config *cfg, const char **out,
                         size_t *total, am_fail *f)
{
    if (!json_is_string(v))
        return am_failp(f, AM_P_INVALID_VALUE, name, "'%s' must be a string", name);
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return am_failp(f, AM_P_INVALID_UTF8, name, "'%s' contains a NUL character", name);
    size_t n = am_toks_count_py(s);
    if (cfg && n > (size_t)cfg->max_tokens)
        return am_failp(f, AM_P_TOO_MANY_TOKENS, name, "'%s' has %zu tokens; the limit is %d", name,
                        n, cfg->max_tokens);
    *total += n;
    *out = s;
    return AM_OK;
}

/* The "references" of a body (references after the translation, for
 * BLEU, chrF and TER) into r: an array of 1..AM_SCORE_MAX_REFS - 1 texts,
 * each counted into the segment's token budget. */
static int am_seg_refs(json_t *v, const am_srv_config *cfg, am_seg_req *r, size_t *ntok, am_fail *f)
{
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > AM_SCORE_MAX_REFS - 1)
        return am_failp(f, AM_P_INVALID_VALUE, "references",
                        "'references' must be an array of 1 to %d texts (the references after "
                        "'translation')",
                        AM_SCORE_MAX_REFS - 1);
    for (size_t i = 0; i < n; i++)
        if (am_text_field(json_array_get(v, i), "references", cfg, &r->xrefs[i], ntok, f))
            return AM_ERR_INVALID;
    r->nxrefs = n;
    return AM_OK;
}

/* The "terms" annotations of a body into r. Complexity (issue 15): one
 * type or range check per field of an annotation, each refused with its
 * own problem. */
static int am_seg_terms(json_t *terms, am_seg_req *r, am_fail *f)
{
    if (!json_is_array(terms))
        return am_failp(f, AM_P_INVALID_VALUE, "terms",
                        "'terms' must be an array of {source, targets, span}");
    size_t n = json_array_size(terms), ntargets = 0;
    if (n > 1000)
        return am_failp(f, AM_P_INVALID_VALUE, "terms",
                        "at most 1000 term annotations per segment");
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(terms, i);
        if (!json_is_object(t))
            return am_failp(f, AM_P_INVALID_VALUE, "terms", "terms[%zu] must be an object", i);
        json_t *tg = json_object_get(t, "targets");
        ntargets += json_is_array(tg) ? json_array_size(tg) : 1;
    }
    r->annots = am_xcalloc(n ? n : 1, sizeof *r->annots);
    r->targets = am_xcalloc(ntargets ? ntargets : 1, sizeof *r->targets);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(terms, i);
        am_terms_annot *a = &r->annots[i];
        const char *key;
        json_t *v;
        json_object_foreach(t, key, v)
        {
            if (strcmp(key, "source") && strcmp(key, "targets") && strcmp(key, "target") &&
                strcmp(key, "case_sensitive") && strcmp(key, "span"))
                return am_failp(f, AM_P_UNKNOWN_FIELD, "terms", "terms[%zu]: unknown field '%s'", i,
                                key);
        }
        json_t *src = json_object_get(t, "source");
        if (src && !json_is_string(src))
            return am_failp(f, AM_P_INVALID_VALUE, "terms", "terms[%zu].source must be a string",
                            i);
        a->source = src ? json_string_value(src) : NULL;
        json_t *tg = json_object_get(t, "targets");
        json_t *one = json_object_get(t, "target");
        a->targets = r->targets + used;
        if (tg && json_is_array(tg) && json_array_size(tg) > 0 && !one) {
            for (size_t k = 0; k < json_array_size(tg); k++) {
                json_t *x = json_array_get(tg, k);
                if (!json_is_string(x) || !*json_string_value(x))
                    return am_failp(f, AM_P_INVALID_VALUE, "terms",
                                    "terms[%zu].targets must be non-empty strings", i);
                r->targets[used++] = json_string_value(x);
            }
            a->n_targets = json_array_size(tg);
        } else if (one && json_is_string(one) && *json_string_value(one) && !tg) {
            r->targets[used++] = json_string_value(one);
            a->n_targets = 1;
        } else {
            return am_failp(f, AM_P_MISSING_FIELD, "terms",
                            "terms[%zu] needs 'targets' (array of strings) or 'target'", i);
        }
        json_t *cs = json_object_get(t, "case_sensitive");
        if (cs && !json_is_boolean(cs))
            return am_failp(f, AM_P_INVALID_VALUE, "terms",
                            "terms[%zu].case_sensitive must be a boolean", i);
        a->case_sensitive = json_is_true(cs);
        json_t *span = json_object_get(t, "span");
        if (span) {
            json_t *s0 = json_array_get(span, 0), *s1 = json_array_get(span, 1);
            size_t tl = strlen(r->translation);
            if (!json_is_array(span) || json_array_size(span) != 2 || !json_is_integer(s0) ||
                !json_is_integer(s1) || json_integer_value(s0) < 0 ||
                json_integer_value(s1) <= json_integer_value(s0) ||
                (size_t)json_integer_value(s1) > tl)
                return am_failp(f, AM_P_INVALID_VALUE, "terms",
                                "terms[%zu].span must be [start, end) byte offsets within the "
                                "translation (%zu bytes)",
                                i, tl);
            a->has_span = 1;
            a->span_start = (size_t)json_integer_value(s0);
            a->span_end = (size_t)json_integer_value(s1);
        }
    }
    r->n_annots = n;
    return AM_OK;
}

/* Whether v is a string holding a NUL character (am_json_any: the body is
 * parsed with JSON_ALLOW_NUL, so that a text field's NUL gets its own
 * answer; jansson refuses one in a key). */
static int string_has_nul(const json_t *v)
{
    return json_is_string(v) && memchr(json_string_value(v), 0, json_string_length(v));
}

/* Length/complexity (issue 15): one check per field of the segment body
 * (types, unknown fields, the id, the texts and their token limits, the
 * hypotheses, the translator), each with its own problem; the texts,
 * annotations and terms have their helpers above. */
int am_seg_req_parse(json_t *body, const char *path_id, const am_srv_config *cfg, am_seg_req *r,
                     am_fail *f)
{
    memset(r, 0, sizeof *r);
    size_t ntok = 0; /* tokens of every text, against max-segment-tokens */
    static const char *const known[] = {"id",         "source",      "hypothesis",
                                        "hypotheses", "translation", "terms",
                                        "metadata",   "translator",  "references"};
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        size_t k;
        for (k = 0; k < sizeof known / sizeof known[0]; k++)
            if (!strcmp(key, known[k]))
                break;
        if (k == sizeof known / sizeof known[0])
            return am_failp(f, AM_P_UNKNOWN_FIELD, key,
                            "unknown field '%.64s' (allowed: id, source, hypothesis, hypotheses, "
                            "translation, references, terms, metadata, translator)",
                            key);
    }
    json_t *id = json_object_get(body, "id");
    if (!id && path_id) {
        r->id = path_id;
    } else if (!id) {
        return am_failp(f, AM_P_MISSING_FIELD, "id", "'id' (the client's segment id) is required");
    } else if (!json_is_string(id) || !am_http_valid_id(json_string_value(id))) {
        return am_failp(f, AM_P_INVALID_VALUE, "id",
                        "'id' must be a string of 1-128 characters from [A-Za-z0-9._-]");
    } else {
        r->id = json_string_value(id);
        if (path_id && strcmp(path_id, r->id))
            return am_failp(f, AM_P_INVALID_VALUE, "id", "body id '%s' differs from the URL's '%s'",
                            r->id, path_id);
    }
    json_t *who = json_object_get(body, "translator");
    if (who && !json_is_null(who) &&
        (!json_is_string(who) || !am_http_valid_id(json_string_value(who))))
        return am_failp(f, AM_P_INVALID_VALUE, "translator",
                        "'translator' must be a string of 1-128 characters from [A-Za-z0-9._-]");
    r->translator = json_is_string(who) ? json_string_value(who) : NULL;
    json_t *tr = json_object_get(body, "translation");
    if (!tr)
        return am_failp(f, AM_P_MISSING_FIELD, "translation",
                        "'translation' (the confirmed translation) is required");
    if (am_text_field(tr, "translation", cfg, &r->translation, &ntok, f))
        return AM_ERR_INVALID;
    json_t *xr = json_object_get(body, "references");
    if (xr && am_seg_refs(xr, cfg, r, &ntok, f))
        return AM_ERR_INVALID;
    json_t *src = json_object_get(body, "source");
    if (src && !json_is_null(src) && am_text_field(src, "source", cfg, &r->source, &ntok, f))
        return AM_ERR_INVALID;
    json_t *h = json_object_get(body, "hypothesis"), *hs = json_object_get(body, "hypotheses");
    if (h && hs)
        return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                        "give either 'hypothesis' or 'hypotheses', not both");
    if (h) {
        if (am_text_field(h, "hypothesis", cfg, &r->hyp[0], &ntok, f))
            return AM_ERR_INVALID;
        r->sys[0] = "default";
        r->nsys = 1;
        r->single = 1;
    } else if (hs) {
        if (!json_is_object(hs) || json_object_size(hs) == 0)
            return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                            "'hypotheses' must be a non-empty object {system: text}");
        size_t max = cfg ? (size_t)cfg->max_systems : AM_SCORE_MAX_SYSTEMS;
        if (max > AM_SCORE_MAX_SYSTEMS)
            max = AM_SCORE_MAX_SYSTEMS;
        if (json_object_size(hs) > max)
            return am_failp(f, AM_P_INVALID_VALUE, "hypotheses", "at most %zu systems per segment",
                            max);
        /* systems in name order, so results do not depend on key order */
        const char *names[AM_SCORE_MAX_SYSTEMS];
        size_t n = 0;
        json_object_foreach(hs, key, v)
        {
            if (!am_http_valid_id(key))
                return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                                "system names must match [A-Za-z0-9._-]{1,128}");
            names[n++] = key;
        }
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                const char *t = names[j];
                names[j] = names[j - 1];
                names[j - 1] = t;
            }
        for (size_t i = 0; i < n; i++) {
            r->sys[i] = names[i];
            if (am_text_field(json_object_get(hs, names[i]), "hypotheses", cfg, &r->hyp[i], &ntok,
                              f))
                return AM_ERR_INVALID;
        }
        r->nsys = n;
    } else {
        return am_failp(f, AM_P_MISSING_FIELD, "hypothesis",
                        "'hypothesis' (text) or 'hypotheses' ({system: text}) is required");
    }
    /* the segment's whole budget: scoring cost grows with every system's
     * hypothesis, so max-tokens per text alone would let 16 systems cost 16x */
    if (cfg && ntok > (size_t)cfg->max_segment_tokens)
        return am_failp(f, AM_P_TOO_MANY_TOKENS, "hypotheses",
                        "the segment has %zu tokens in its source, translation and hypotheses; "
                        "the limit is %d (max-segment-tokens)",
                        ntok, cfg->max_segment_tokens);
    json_t *md = json_object_get(body, "metadata");
    if (md && !json_is_object(md))
        return am_failp(f, AM_P_INVALID_VALUE, "metadata", "'metadata' must be an object");
    json_t *terms = json_object_get(body, "terms");
    if (terms && am_seg_terms(terms, r, f))
        return AM_ERR_INVALID;
    /* a NUL anywhere else (an id, a translator's name, the metadata,
     * the terms): the checks above saw the text up to it, and the stored
     * request could not be read back */
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (am_json_any(json_object_get(body, known[k]), string_has_nul))
            return am_failp(f, AM_P_INVALID_UTF8, known[k],
                            "'%s' contains a NUL character (\\u0000)", known[k]);
    /* the canonical form is the body with the id made explicit, in
     * jansson's spelling (17-digit reals, as every stored request was
     * written): a re-post compares it byte for byte with the stored one */
    if (id) { /* the body names its id: it is its own canonical form */
        r->canonical = am_json_canonical(body);
    } else { /* the id from the path, added to a copy (body is borrowed) */
        json_t *canon = json_deep_copy(body);
        json_object_set_new(canon, "id", json_string(r->id));
        r->canonical = am_json_canonical(canon);
        json_decref(canon);
    }
    if (!r->canonical)
        r->canonical = am_xstrdup("null");
    return AM_OK;
}

am_seg_input am_seg_req_input(const am_seg_req *r)
{
    am_seg_input in = {.source = r->source,
                       .translation = r->translation,
                       .hyps = r->hyp,
                       .nsys = r->nsys,
                       .annots = r->annots,
                       .n_annots = r->n_annots,
                       .more_refs = r->xrefs,
                       .n_more_refs = r->nxrefs};
    return in;
}

void am_seg_req_cleanup(am_seg_req *r)
{
    free(r->annots);
    free(r->targets);
    free(r->canonical);
    memset(r, 0, sizeof *r);
}

/* ---- the transaction ------------------------------------------------------ */

/* The history counts a POST or batch is scored with (am_sess_hist_get,
 * borrowed): of the whole history (full), or of the pending words only, to
 * be added to the store's settled counts. */
typedef struct am_hist {
    const am_vocab *counts;
    int full;
} am_hist;

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
static int hist_lookup(am_store_rtx *rtx, const char *session, const am_hist *h, const char *word,
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
    return hist_lookup(c->tx, c->session, &c->h, word, occ);
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
static int hist_ensure(am_sess *sess, am_store_rtx *rtx, const char *session, int64_t version,
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
    /* the pending words (at most 31 segments') on top; should they take a
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

/* Totals entries one segment writes: its systems, and for each system other
 * than the baseline two pair entries, "pair:<system>:baseline" and
 * "pair:<system>:system": the baseline's and the system's totals over the
 * segments that carried both (':' is not allowed in system names); and for
 * a segment with a translator, "tr:<translator>:<system>" for each system:
 * the totals over that translator's segments (docs/metrics.md). */
#define AM_PLAN_MAX (4 * AM_SCORE_MAX_SYSTEMS)

/* Every segment whose seq is a multiple of this leaves a checkpoint: the
 * raw totals of every entry after it (schema/008), where a replay after an
 * edit starts (am_edit_once): it re-scores at most this many segments
 * before the edited one. */
#define AM_CKPT_EVERY 32

/* The writes of one scored segment, computed outside the write
 * transaction (am_apply) and applied inside it (am_plan_exec). */
typedef struct am_plan {
    const char *session;
    int64_t seq;
    am_buf words; /* NUL-separated content words of the translation */
    size_t nwords;
    size_t nsys; /* systems, then pair totals (metrics: paired comparisons) */
    const char *sys[AM_PLAN_MAX];
    char *totals[AM_PLAN_MAX]; /* raw totals JSON after this segment (owned) */
    am_totals *tot; /* the same totals, nsys of them (owned) */
    char *pair_names[AM_PLAN_MAX]; /* owned names behind the pair entries of sys */
    const char **choices; /* (entry source, target) pairs, borrowed from the session */
    size_t nchoices;
    /* the segment row (POST); client_id NULL: no insert */
    const char *client_id, *canonical;
    char hash[17];
    char *result_txt; /* owned */
    int64_t now;
    /* what the segment was scored with: the job checks that the session
     * is still this incarnation with this glossary version */
    int64_t incarnation, glossary_version;
    am_hist hist; /* the history counts it was scored with (POST; borrowed) */
    int stale; /* set by the job: the session changed (retry) */
    /* a POST scored from the runtime's state alone (am_post_fast): the job
     * also checks that the session is still at version; dup: the segment
     * insert found the id stored */
    int fast, dup;
    int64_t version;
} am_plan;

/* What a segment is scored with: a compiled scorer, its glossary (entry
 * order, for the translator's choices) and that glossary's version. All
 * borrowed. */
typedef struct am_scoring {
    const am_scorer *sc;
    const am_gloss *gloss;
    int64_t glossary_version;
} am_scoring;

/* The session runtime's own scorer (borrowed from sess). */
static am_scoring am_scoring_of(const am_sess *sess)
{
    am_scoring u = {sess->scorer, &sess->gloss, sess->glossary_version};
    return u;
}

static void am_plan_init(am_plan *p, const char *session, int64_t seq)
{
    memset(p, 0, sizeof *p);
    p->session = session;
    p->seq = seq;
    am_buf_init(&p->words);
}

static void am_plan_cleanup(am_plan *p)
{
    am_buf_cleanup(&p->words);
    for (size_t k = 0; k < p->nsys; k++)
        free(p->totals[k]);
    for (size_t k = 0; k < AM_PLAN_MAX; k++)
        free(p->pair_names[k]);
    free(p->choices);
    free(p->tot);
    free(p->result_txt);
    memset(p, 0, sizeof *p);
}

/* Whether the commit of p's segment also takes the checkpoint and settles
 * the pending words (every AM_CKPT_EVERY-th seq). */
static int plan_settles(const am_plan *p)
{
    return p->seq % AM_CKPT_EVERY == 0;
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

/* The job of a POST inside a group-commit batch: checks that the session
 * is still where the plan was computed (the same incarnation, glossary
 * version and seq = last + 1), then writes. */
static int am_post_job(am_store_tx *tx, void *ctx)
{
    am_plan *p = ctx;
    am_store_state st;
    int rc = am_store_tx_session_info(am_store_tx_reads(tx), p->session, &st);
    /* fast: also any write since the noted state (the writers here drop or
     * move the caches as well, so this is the backstop) */
    if (rc == AM_OK &&
        (st.incarnation != p->incarnation || st.glossary_version != p->glossary_version ||
         st.last_seq + 1 != p->seq || (p->fast && st.version != p->version))) {
        rc = AM_ERR_CONFLICT; /* moved on, deleted + re-created, new glossary: retry */
        p->stale = st.incarnation != p->incarnation || st.glossary_version != p->glossary_version;
    }
    if (rc == AM_OK)
        rc = am_plan_exec(tx, p);
    if (rc == AM_OK) { /* with its words, pending in its row (schema/010) */
        rc = am_store_tx_segment_insert_gv(tx, p->session, p->seq, p->client_id, p->hash,
                                           p->canonical, p->result_txt, p->glossary_version,
                                           am_buf_str(&p->words), p->nwords, p->now);
        /* the seq is free (checked above), so a conflict is the id's unique
         * index: stored before (the idempotency check am_post_fast skipped;
         * the job's savepoint is rolled back) */
        p->dup = rc == AM_ERR_CONFLICT;
    }
    if (rc == AM_OK && plan_settles(p)) {
        rc = am_store_tx_checkpoint_take(tx, p->session, p->seq); /* the totals after p->seq */
        if (rc == AM_OK) /* the pending words up to p->seq into the settled history */
            rc = am_store_tx_history_settle(tx, p->session);
    }
    return rc;
}

/* A replay's history in memory (am_ingest_replace): occ per word and the
 * running totals per system, as the store would hold them. With base set
 * (a batch, am_ingest_batch), hist and tot hold only what the batch's
 * uncommitted items added on top of the store read through base: occ is
 * the store's plus hist's, and an entry not in tot is read from the store. */
typedef struct am_mem {
    am_vocab *hist; /* word -> occ (owned) */
    size_t n, cap;
    char **sys; /* [cap] owned names (systems, pair and translator entries) */
    am_totals *tot; /* [cap], owned (too large for a thread's stack) */
    am_store_rtx *base; /* borrowed read transaction, or NULL */
    const char *session; /* borrowed, with base */
    am_hist stored; /* with base: the history counts at base (borrowed) */
} am_mem;

/* An empty history (mem_cleanup frees it). */
static void mem_init(am_mem *m)
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
    int rc = hist_lookup(m->base, m->session, &m->stored, word, &stored);
    if (rc != AM_OK)
        return rc;
    if (!am_vocab_get(m->hist, word, &added))
        added = 0;
    *occ = stored + added;
    return AM_OK;
}

/* The totals of system in mem (borrowed), or NULL when it has none. */
static am_totals *mem_totals(am_mem *m, const char *system)
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
        return fail_cancelled(f, bud);
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
    const am_totals *mt = mem ? mem_totals(mem, name) : NULL;
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
static int am_apply(am_server *srv, am_sess *sess, const am_scoring *use, am_store_rtx *rtx,
                    am_mem *mem, const char *session, int64_t seq, const am_seg_req *req,
                    int64_t now, int cached, am_budget *bud, json_t **result, am_plan *plan,
                    am_fail *f)
{
    const am_scorer *sc = use->sc;
    am_score_ws *ws = am_wspool_get(srv->wspool);
    am_score_ws_set_cancel(ws, &bud->cancel);
    am_lookup_ctx lc = {rtx, session, plan->hist};
    am_seg_input in = am_seg_req_input(req);
    in.max_term_occurrences = (size_t)srv->cfg.max_term_occurrences;
    am_seg_result res;
    const char *field = NULL;
    int rc = mem && mem->base ? am_score_segment(sc, ws, &in, mem_overlay_lookup, mem, &res, &field)
             : mem ? am_score_segment(sc, ws, &in, am_recall_vocab_lookup, mem->hist, &res, &field)
                   : am_score_segment(sc, ws, &in, am_tx_lookup, &lc, &res, &field);
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

static int am_acquire(am_server *srv, const char *session, am_sess **out, am_fail *f)
{
    am_buf err;
    am_buf_init(&err);
    int rc = am_sessions_acquire(srv->sessions, session, out, &err);
    if (rc == AM_ERR_NOTFOUND)
        am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
    else if (rc == AM_ERR_CONFLICT) /* its background vocabulary was deleted */
        am_failp(f, AM_P_CONFLICT, NULL, "%s; PUT the vocabulary again (/v1/vocabularies/{name})",
                 am_buf_str(&err));
    else if (rc != AM_OK)
        am_failp(f, AM_P_INTERNAL, NULL, "session unavailable: %s",
                 err.len ? am_buf_str(&err) : am_strerror(rc));
    am_buf_cleanup(&err);
    return rc;
}

/* How often a write is retried when the session changed under it (a
 * concurrent write moved its seq on, it was deleted and re-created, or its
 * glossary changed) before it answers 503. */
#define AM_WRITE_TRIES 32

/* The session's state in the read snapshot rtx into *st, checked against
 * the cached runtime sess: 404 when the session is gone, 503 when it
 * cannot be read, and a retry (AM_ERR_CONFLICT, the runtime forgotten) when
 * the runtime is of another incarnation or glossary version; `what` names
 * the write in the detail. */
static int snapshot_state(am_server *srv, am_sess *sess, am_store_rtx *rtx, const char *session,
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
                        plan_settles(plan));
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
        rc = am_store_tx_group(srv->store, am_post_job, &plan);
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
static int am_post_once(am_server *srv, const char *session, const am_seg_req *req_in,
                        char **result, int *status, am_fail *f, int *retry, am_budget *bud)
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
    am_store_rtx *rtx = NULL;
    if (am_post_fast(srv, sess, session, req, result, status, bud))
        goto out; /* rc AM_OK */
    rc = am_store_rtx_begin(srv->store, &rtx);
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        goto out;
    }
    am_store_state st;
    rc = snapshot_state(srv, sess, rtx, session, "segment", &st, retry, f);
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
    rc = hist_ensure(sess, rtx, session, st.version, &plan.hist, f);
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
    rc = am_store_tx_group(srv->store, am_post_job, &plan);
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
/* One attempt of a segment write (am_post_once, am_upsert_once, am_delete_once). */
typedef int (*am_write_once_fn)(am_server *srv, const char *session, const am_seg_req *req,
                                char **result, int *status, am_fail *f, int *retry, am_budget *bud);

/* Runs once until it succeeds or says no retry can help, at most
 * AM_WRITE_TRIES times, under one CPU budget for all attempts; f holds the
 * last attempt's failure. */
static int am_write_with_retries(am_server *srv, const char *session, const am_seg_req *req,
                                 char **result, int *status, am_fail *f, am_write_once_fn once)
{
    int rc = AM_OK;
    am_budget bud;
    am_budget_start(&bud, srv);
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
    rc = am_sessions_build(vs->row.options, vs->row.custom_stopwords, entries, vs->sess->background,
                           &vs->sc, &vs->gloss, &err);
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
    am_totals *t = mem_totals(m, system);
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
static void mem_apply(am_mem *m, const am_plan *p)
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

static void mem_cleanup(am_mem *m)
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
    for (size_t i = 0; i < r->nres; i++)
        free(r->res[i]);
    free(r->res);
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

/* Keeps the new result text of segment seq (taken over). */
static void redo_result(am_redo *r, int64_t seq, char *txt)
{
    if (r->nres == r->cap_res) {
        r->cap_res = r->cap_res ? 2 * r->cap_res : 256;
        r->res = am_xrealloc(r->res, r->cap_res * sizeof *r->res);
        r->res_seq = am_xrealloc(r->res_seq, r->cap_res * sizeof *r->res_seq);
    }
    r->res_seq[r->nres] = seq;
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
            rc = am_store_tx_segment_update(tx, j->session, r->res_seq[k], j->hash,
                                            j->req->canonical, r->res[k], j->now);
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
        rc = am_store_results_stage(store, session, gen, r->nres, r->res_seq, r->res);
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
        mem_cleanup(mem); /* from the first segment */
        mem_init(mem);
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
/* The state of one edit attempt (am_edit_once), shared by its steps. */
typedef struct am_edit {
    am_server *srv;
    const char *session, *id;
    am_sess *sess;
    const am_seg_req *req; /* the new body (systems as the session names them); NULL: delete */
    am_fail *f;
    am_budget *bud;
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
    int rc = am_store_tx_begin(e->srv->store, &tx);
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
        return am_budget_over(e->bud) ? fail_cancelled(e->f, e->bud)
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
    rc = am_budget_over(e->bud) ? fail_cancelled(e->f, e->bud)
                                : am_apply(e->srv, e->sess, &how, NULL, &e->mem, e->session, at,
                                           use, e->now, 0, e->bud, &res, &plan, e->f);
    if (rc == AM_OK && replaced) /* the words it had before */
        rc = old_words(e->srv, e->sess, &how, &e->mem, e->session, e->seq, r->request, e->bud,
                       &e->redo, e->f);
    if (rc == AM_OK) {
        mem_apply(&e->mem, &plan); /* the history as the store will hold it */
        if (at % AM_CKPT_EVERY == 0)
            redo_checkpoint(&e->redo, at, &e->mem);
        e->replayed++;
        if (replaced) {
            redo_choices(&e->redo, &plan, 1);
            am_buf_append(&e->redo.new_words, plan.words.data ? plan.words.data : "",
                          plan.words.len);
            e->redo.n_new = plan.nwords;
        }
        if (r->seq >= e->seq)
            redo_result(&e->redo, at, am_json_dump(res));
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
    int64_t t_scored = mono_ns();
    am_redo_job job = {e->session, e->st.version, e->st.incarnation, e->seq,  e->req,
                       hash,       e->now,        &e->redo,          &e->mem, 0};
    am_store_tx *tx = NULL;
    int rc = redo_stage(e->srv->store, e->session, &e->redo, &job.gen);
    int64_t t_staged = mono_ns();
    if (rc == AM_OK)
        rc = am_store_tx_begin(e->srv->store, &tx);
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
              (double)(mono_ns() - t_staged) / 1e6);
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
    int64_t t_start = mono_ns();
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
    mem_init(&e.mem);
    am_sess_lock(sess);
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
    mem_cleanup(&e.mem);
    am_rows_free(&e.rows);
    am_vscorers_cleanup(srv, &e.vs);
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
                      int *status, am_fail *f)
{
    return am_write_with_retries(srv, session, req, result, status, f, am_upsert_once);
}

int am_ingest_delete(am_server *srv, const char *session, const char *id, int *status, am_fail *f)
{
    am_seg_req del;
    memset(&del, 0, sizeof del);
    del.id = id;
    char *result = NULL;
    int rc = am_write_with_retries(srv, session, &del, &result, status, f, am_delete_once);
    free(result);
    return rc;
}

/* ---- batches --------------------------------------------------------------- */

/* Items scored per group-commit job of a batch, at most, and the request
 * bytes (canonical text) after which a chunk ends early: one job holds the
 * write lock while it writes its segments, so a long batch commits in
 * bounded steps and other sessions' writes get the lock in between, each
 * waiting at most about one chunk's write (bench/batch.py measures it).
 * The chunk's plans are its working memory, bounded the same way. */
#define AM_BATCH_CHUNK 100
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
    mem_init(&mem);
    mem.session = session;
    am_store_rtx *rtx = NULL;
    am_fail *f = &items[0].fail;
    rc = am_store_rtx_begin(srv->store, &rtx);
    am_store_state st;
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        goto out;
    }
    mem.base = rtx;
    rc = snapshot_state(srv, sess, rtx, session, "batch", &st, retry, f);
    if (rc != AM_OK)
        goto out;
    rc = hist_ensure(sess, rtx, session, st.version, &mem.stored, f);
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
        mem_apply(&mem, p);
        p->incarnation = st.incarnation;
        p->glossary_version = st.glossary_version;
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
        rc = am_store_tx_group(srv->store, am_batch_job_run, &job);
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
                                am_buf_str(&p->words), p->nwords, plan_settles(p));
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
    mem_cleanup(&mem);
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
 * history counts a POST is scored with (hist_ensure: the session's cache,
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
    if (rc == AM_OK && hist_ensure(sess, cs->rtx, session, st.version, &cs->hist, f) != AM_OK)
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
        return fail_cancelled(f, bud);
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
    return hist_lookup(cs->rtx, cs->session, &cs->hist, word, occ);
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
        return fail_cancelled(f, bud);
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
                    const char *const *hyps, size_t nsys, json_t **out, am_fail *f)
{
    am_sess *sess;
    am_budget bud;
    am_budget_start(&bud, srv);
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
        return rc;
    }
    json_t *adaptation = json_pack("{soso}", "systems", systems, "best_system",
                                   best && !tie && best_seen > 0 ? json_string(best) : json_null());
    *out = json_pack("{sssosIsIso}", "session", session, "terms", terms, "missing_terms",
                     (json_int_t)top[0], "forbidden_used", (json_int_t)top[1], "adaptation",
                     adaptation);
    return AM_OK;
}
