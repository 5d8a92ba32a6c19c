/* rescore.c — a whole session scored again with its current glossary (see
 * rescore.h). */
#include "rescore.h"

#include "ci_stats.h" /* each row's ?ci= statistics record */
#include "events.h" /* am_events_notice (SSE "rescore") */
#include "ingest_internal.h" /* am_rewrite_begin */
#include "jscan.h" /* the stored requests read as text */
#include "json.h"
#include "peer.h"
#include "sessions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the history in memory: word → occ ----------------------------------- */

typedef struct am_rs_word {
    char *word; /* owned; NULL = empty slot */
    int64_t occ, first, last; /* occurrences; seq of the first and the last */
    size_t id; /* order of first use: 0, 1, ... */
} am_rs_word;

typedef struct am_rs_vocab {
    am_rs_word *v; /* open addressing, cap a power of two */
    size_t cap, n;
} am_rs_vocab;

/* The slot of word: its entry or the empty slot where it goes (borrowed). */
static am_rs_word *am_rs_slot(const am_rs_vocab *h, const char *word)
{
    size_t i = (size_t)am_fnv1a(word) & (h->cap - 1);
    while (h->v[i].word && strcmp(h->v[i].word, word))
        i = (i + 1) & (h->cap - 1);
    return &h->v[i];
}

/* am_recall_lookup_fn over the in-memory history (ctx: am_rs_vocab). */
static int am_rs_lookup(void *ctx, const char *word, int64_t *occ)
{
    const am_rs_vocab *h = ctx;
    const am_rs_word *w = h->cap ? am_rs_slot(h, word) : NULL;
    *occ = w && w->word ? w->occ : 0;
    return AM_OK;
}

/* Counts an occurrence of word at seq; returns the word's id. */
static size_t am_rs_bump(am_rs_vocab *h, const char *word, int64_t seq)
{
    if (2 * (h->n + 1) > h->cap) {
        am_rs_vocab g = {am_xcalloc(h->cap ? 2 * h->cap : 1024, sizeof(am_rs_word)),
                         h->cap ? 2 * h->cap : 1024, h->n};
        for (size_t i = 0; i < h->cap; i++)
            if (h->v[i].word)
                *am_rs_slot(&g, h->v[i].word) = h->v[i];
        free(h->v);
        *h = g;
    }
    am_rs_word *w = am_rs_slot(h, word);
    if (!w->word) {
        w->word = am_xstrdup(word);
        w->occ = 0;
        w->first = seq;
        w->id = h->n++;
    }
    w->occ++;
    w->last = seq;
    return w->id;
}

static void am_rs_vocab_free(am_rs_vocab *h)
{
    for (size_t i = 0; i < h->cap; i++)
        free(h->v[i].word);
    free(h->v);
    memset(h, 0, sizeof *h);
}

/* ---- one rescore attempt ------------------------------------------------- */

/* The writes of one rescored segment. */
typedef struct am_rs_seg {
    int64_t seq;
    char *result; /* result JSON text (owned) */
    char *stats; /* its ?ci= statistics record (owned; ci_stats.h) */
    const char **choices; /* (entry source, target) pairs borrowed from the runtime (owned array) */
    size_t nchoices;
} am_rs_seg;

typedef struct am_rs_sys {
    char *name; /* owned */
    am_totals t;
} am_rs_sys;

typedef struct am_rs {
    am_server *srv; /* borrowed */
    const char *session; /* borrowed */
    const am_sess *sess; /* borrowed; its scorer and glossary are used */
    am_score_ws *ws; /* from srv->wspool */
    int64_t total, now;
    am_rs_vocab vocab;
    /* every occurrence (word id, seq) in seq order: the history's rows,
     * written at the end in (word, seq) order (am_rs_fill) */
    uint32_t *occ_w;
    int64_t *occ_seq;
    size_t nocc, cap_occ_w, cap_occ_seq;
    am_rs_seg *segs; /* n, in seq order */
    size_t n, cap;
    am_rs_sys *sys;
    size_t nsys;
    am_totals *tot; /* scratch: one segment's totals of its systems (owned) */
    size_t cap_tot;
    /* the checkpoints (schema/008) at every AM_CKPT_EVERY-th seq: entry
     * ck_sys[i] (owned) after segment ck_seq[i], its raw totals
     * ck_stats[i] (owned), as a replay stages them */
    int64_t *ck_seq;
    char **ck_sys, **ck_stats;
    size_t nck, cap_ck_seq, cap_ck_sys, cap_ck_stats;
    am_fail *f; /* borrowed */
    am_peer *peer; /* the client's connection (borrowed; NULL: not watched) */
} am_rs;

static void am_rs_cleanup(am_rs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->segs[i].result);
        free(r->segs[i].stats);
        free(r->segs[i].choices);
    }
    free(r->segs);
    for (size_t i = 0; i < r->nck; i++) {
        free(r->ck_sys[i]);
        free(r->ck_stats[i]);
    }
    free(r->ck_seq);
    free(r->ck_sys);
    free(r->ck_stats);
    r->ck_seq = NULL;
    r->ck_sys = r->ck_stats = NULL;
    r->nck = r->cap_ck_seq = r->cap_ck_sys = r->cap_ck_stats = 0;
    for (size_t i = 0; i < r->nsys; i++)
        free(r->sys[i].name);
    free(r->sys);
    free(r->tot);
    r->tot = NULL;
    r->cap_tot = 0;
    am_rs_vocab_free(&r->vocab);
    free(r->occ_w);
    free(r->occ_seq);
    r->occ_w = NULL;
    r->occ_seq = NULL;
    r->nocc = r->cap_occ_w = r->cap_occ_seq = 0;
    if (r->ws)
        am_wspool_put(r->srv->wspool, r->ws);
    r->ws = NULL;
    r->segs = NULL;
    r->sys = NULL;
    r->n = r->cap = r->nsys = 0;
}

/* The running totals of system name (borrowed from r; added on first use). */
static am_totals *am_rs_totals(am_rs *r, const char *name)
{
    for (size_t i = 0; i < r->nsys; i++)
        if (!strcmp(r->sys[i].name, name))
            return &r->sys[i].t;
    r->sys = am_xrealloc(r->sys, (r->nsys + 1) * sizeof *r->sys);
    am_rs_sys *s = &r->sys[r->nsys++];
    s->name = am_xstrdup(name);
    am_totals_init(&s->t, r->sess->scorer);
    return &s->t;
}

/* The pair totals of a segment as a POST keeps them (ingest.c, AM_PLAN_MAX):
 * for each system other than the baseline, "pair:<system>:baseline" and
 * "pair:<system>:system" over the segments that carry both. */
static void am_rs_pairs(am_rs *r, const am_seg_req *q, const am_seg_result *res)
{
    const char *bl = r->sess->baseline;
    size_t base = q->nsys;
    for (size_t k = 0; bl && r->sess->paired_totals && k < q->nsys; k++)
        if (!strcmp(q->sys[k], bl))
            base = k;
    for (size_t k = 0; base < q->nsys && k < q->nsys; k++) {
        if (k == base)
            continue;
        char name[300];
        snprintf(name, sizeof name, "pair:%s:baseline", q->sys[k]);
        am_totals_add(am_rs_totals(r, name), &res->sys[base]);
        snprintf(name, sizeof name, "pair:%s:system", q->sys[k]);
        am_totals_add(am_rs_totals(r, name), &res->sys[k]);
    }
}

/* Keeps the checkpoint after segment seq: every entry of the totals, as
 * a POST of that seq wrote it (the replay's redo_checkpoint). */
static void am_rs_checkpoint(am_rs *r, int64_t seq)
{
    for (size_t k = 0; k < r->nsys; k++) {
        AM_GROW(r->ck_seq, r->cap_ck_seq, r->nck + 1, 64);
        AM_GROW(r->ck_sys, r->cap_ck_sys, r->nck + 1, 64);
        AM_GROW(r->ck_stats, r->cap_ck_stats, r->nck + 1, 64);
        r->ck_seq[r->nck] = seq;
        r->ck_sys[r->nck] = am_xstrdup(r->sys[k].name);
        r->ck_stats[r->nck++] = am_json_totals_text(&r->sys[k].t);
    }
}

/* ---- a stored request read from its text ---------------------------------- */

/* The strings of a request read by am_rs_req_text (owned). */
typedef struct am_rs_strs {
    char *v[4 + 2 * AM_SCORE_MAX_SYSTEMS];
    size_t n;
} am_rs_strs;

static void am_rs_strs_free(am_rs_strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

/* The JSON string [v, e) decoded into a new string kept in s; NULL when
 * this reader does not decode it (am_js_string) or s is full. */
static const char *am_rs_str(am_rs_strs *s, const char *v, const char *e)
{
    if (s->n == sizeof s->v / sizeof s->v[0])
        return NULL;
    am_buf b;
    am_buf_init(&b);
    if (!am_js_string(v, e, &b)) {
        am_buf_cleanup(&b);
        return NULL;
    }
    return s->v[s->n++] = am_buf_detach(&b);
}

/* A member's value [v, e): is it the literal null? */
static int am_rs_null(const char *v, const char *e)
{
    return e - v == 4 && !memcmp(v, "null", 4);
}

/* The request's hypotheses object [v, e) into q: names in strcmp order
 * (a stored request is a key-sorted dump, the order am_seg_req_parse
 * gives them), each a valid id. 0 when not so (the caller parses). */
static int am_rs_hyps_text(const char *v, const char *e, am_seg_req *q, am_rs_strs *s)
{
    if (*v != '{' || e[-1] != '}')
        return 0;
    const char *p = v + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p), *ve = ke && *ke == ':' ? am_js_skip(ke + 1) : NULL;
        if (!ve || q->nsys == AM_SCORE_MAX_SYSTEMS)
            return 0;
        const char *name = am_rs_str(s, p, ke), *hyp = name ? am_rs_str(s, ke + 1, ve) : NULL;
        if (!hyp || !am_http_valid_id(name) || (q->nsys && strcmp(q->sys[q->nsys - 1], name) >= 0))
            return 0;
        q->sys[q->nsys] = name;
        q->hyp[q->nsys++] = hyp;
        p = *ve == ',' ? ve + 1 : ve;
    }
    return p + 1 == e && *p == '}' && q->nsys > 0;
}

/* A stored request read from its compact text into q (strings owned by s)
 * without jansson, for the requests a rescore sees almost always: id,
 * source, translation, hypothesis or hypotheses, translator, metadata
 * (validated when posted; not part of the scoring). 1 done; 0 when the
 * request has anything else (terms, references), a string this reader
 * does not decode, or is not compact: the caller parses it with
 * am_seg_req_parse (json_loads + am_seg_req_parse were ~9 % of a
 * rescore's CPU, a tenth of it the canonical text a rescore never uses).
 * The values equal that parse's: jansson decodes the same escapes and
 * keeps a key's last value, and a repeated key here sends the request to
 * the parse. */
static int am_rs_req_text(const char *req, am_seg_req *q, am_rs_strs *s)
{
    memset(q, 0, sizeof *q);
    if (!req || *req != '{')
        return 0;
    static const char *const keys[] = {"hypotheses", "hypothesis",  "id",        "metadata",
                                       "source",     "translation", "translator"};
    enum { K_N = sizeof keys / sizeof keys[0] };
    const char *v[K_N], *e[K_N], *end;
    /* every member must be a known one: count them against those found */
    size_t members = 0;
    for (const char *p = req + 1; *p == '"'; members++) {
        const char *ke = am_js_skip(p), *ve = ke && *ke == ':' ? am_js_skip(ke + 1) : NULL;
        if (!ve)
            return 0;
        p = *ve == ',' ? ve + 1 : ve;
    }
    int found = am_js_members_end(req, keys, K_N, v, e, &end);
    if (found < 0 || (size_t)found != members || !end || *end)
        return 0;
    if (!v[2] || !v[5] || (v[0] && v[1]) || (!v[0] && !v[1]))
        return 0;
    if (!(q->id = am_rs_str(s, v[2], e[2])) || !(q->translation = am_rs_str(s, v[5], e[5])))
        return 0;
    if (v[4] && !am_rs_null(v[4], e[4]) && !(q->source = am_rs_str(s, v[4], e[4])))
        return 0;
    if (v[6] && !am_rs_null(v[6], e[6]) && !(q->translator = am_rs_str(s, v[6], e[6])))
        return 0;
    if (v[1]) {
        if (!(q->hyp[0] = am_rs_str(s, v[1], e[1])))
            return 0;
        q->sys[0] = "default";
        q->nsys = 1;
        q->single = 1;
        return 1;
    }
    return am_rs_hyps_text(v[0], e[0], q, s);
}

/* Publishes a "rescore" event (SSE) with the state and the progress. */
static void am_rs_event(am_server *srv, const char *session, const char *state, int64_t done,
                        int64_t total, int64_t glossary_version)
{
    char txt[256];
    snprintf(txt, sizeof txt,
             "{\"state\":\"%s\",\"done\":%lld,\"total\":%lld,\"glossary_version\":%lld}", state,
             (long long)done, (long long)total, (long long)glossary_version);
    am_events_notice(srv->events, session, "rescore", txt);
}

/* am_store_segment_gv_fn: scores one stored segment in memory with the
 * runtime's scorer and records its writes in r (ctx). Non-zero stops the
 * walk (r->f filled). */
static int am_rs_segment(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                         int64_t glossary_version)
{
    (void)client_id;
    (void)glossary_version; /* every segment gets the current one */
    am_rs *r = ctx;
    if (r->srv->stopping)
        return am_failp(r->f, AM_P_UNAVAILABLE, NULL, "the server is stopping; retry later");
    if (r->peer && am_peer_gone(r->peer)) {
        /* before anything is staged: nothing was written, the answer
         * would go nowhere */
        am_prom_abandoned(r->srv->prom, "client_gone");
        return am_failp(r->f, AM_P_REQUEST_TIMEOUT, NULL,
                        "the client closed its connection: the rescore was abandoned and "
                        "nothing was changed");
    }
    const am_scorer *sc = r->sess->scorer;
    am_seg_req q;
    am_rs_strs strs = {.n = 0};
    json_t *body = NULL;
    am_fail pf;
    am_fail_init(&pf);
    int rc = AM_OK;
    if (!am_rs_req_text(request_json, &q, &strs)) {
        am_rs_strs_free(&strs);
        body = json_loads(request_json, 0, NULL);
        /* stored requests were valid when posted: no limits now */
        rc = body ? am_seg_req_parse(body, NULL, NULL, &q, &pf) : AM_ERR_INTERNAL;
    }
    if (rc == AM_OK)
        (void)am_seg_systems(r->sess, &q, 0, &pf); /* named as when posted (ingest.h) */
    am_fail_cleanup(&pf);
    if (rc != AM_OK) {
        if (body)
            am_seg_req_cleanup(&q);
        json_decref(body);
        am_rs_strs_free(&strs);
        return am_failp(r->f, AM_P_INTERNAL, NULL,
                        "rescore failed: stored segment %lld cannot be read", (long long)seq);
    }
    am_seg_input in = am_seg_req_input(&q);
    am_seg_result res;
    const char *field = NULL;
    rc = am_score_segment(sc, r->ws, &in, am_rs_lookup, &r->vocab, &res, &field);
    if (rc != AM_OK) {
        am_seg_req_cleanup(&q);
        json_decref(body);
        am_rs_strs_free(&strs);
        return am_failp(r->f, AM_P_INTERNAL, NULL,
                        "rescore failed: stored segment %lld cannot be scored: %s", (long long)seq,
                        am_strerror(rc));
    }
    AM_GROW(r->segs, r->cap, r->n + 1, 256);
    am_rs_seg *g = &r->segs[r->n++];
    memset(g, 0, sizeof *g);
    g->seq = seq;
    /* the next segments see this one in the history */
    for (size_t i = 0; i < res.recall->words.n; i++) {
        AM_GROW(r->occ_w, r->cap_occ_w, r->nocc + 1, 4096);
        AM_GROW(r->occ_seq, r->cap_occ_seq, r->nocc + 1, 4096);
        r->occ_w[r->nocc] = (uint32_t)am_rs_bump(&r->vocab, res.recall->words.v[i], seq);
        r->occ_seq[r->nocc++] = seq;
    }

    /* the running totals of the answer's systems, copied: the entries
     * added below (pairs, translators) may move r->sys */
    AM_GROW(r->tot, r->cap_tot, q.nsys, 8);
    for (size_t k = 0; k < q.nsys; k++) {
        am_totals *t = am_rs_totals(r, q.sys[k]);
        am_totals_add(t, &res.sys[k]);
        r->tot[k] = *t;
    }
    am_rs_pairs(r, &q, &res);
    for (size_t k = 0; q.translator && k < q.nsys; k++) { /* per translator (ingest.c) */
        char name[300];
        snprintf(name, sizeof name, "tr:%s:%s", q.translator, q.sys[k]);
        am_totals_add(am_rs_totals(r, name), &res.sys[k]);
    }
    if (seq % AM_CKPT_EVERY == 0) /* a checkpoint: every entry's totals so far */
        am_rs_checkpoint(r, seq);
    /* the translator's choice among a glossary entry's alternatives (the
     * first system's placement, as for a POST) */
    const am_gloss *gl = &r->sess->gloss;
    if (q.nsys > 0 && res.sys[0].terms) {
        const am_terms_seg *ts = res.sys[0].terms;
        g->choices = am_xcalloc(2 * ts->n_inst + 1, sizeof *g->choices);
        for (size_t i = 0; i < ts->n_inst; i++) {
            const am_terms_inst *inst = &ts->inst[i];
            if (inst->origin != AM_TERMS_GLOSSARY || inst->entry >= gl->n)
                continue;
            const am_gloss_entry *e = &gl->v[inst->entry];
            if (inst->alt < e->n_targets) {
                g->choices[2 * g->nchoices] = e->source;
                g->choices[2 * g->nchoices + 1] = e->targets[inst->alt];
                g->nchoices++;
            }
        }
    }
    am_prom_segments(r->srv->prom, (int64_t)q.nsys);
    /* the text a POST stores, written without a jansson tree (json_answer.c:
     * the same bytes as am_json_dump of am_json_segment and am_json_totals,
     * which cost two thirds more than the scoring itself here) */
    g->result = am_json_answer(&res, q.sys, r->tot, r->session, q.id, seq, am_scorer_signature(sc),
                               r->now, r->sess->glossary_version);
    /* and the row's ?ci= statistics, as a POST stores them (schema/013):
     * without them a rescored session lost the fast first ?ci= */
    am_buf sb;
    am_buf_init(&sb);
    am_cistats_encode(sc, &res, q.sys, &sb);
    g->stats = am_buf_detach(&sb);
    am_seg_req_cleanup(&q);
    json_decref(body);
    am_rs_strs_free(&strs);
    int64_t step = r->total >= 20 ? r->total / 20 : 1;
    if ((int64_t)r->n % step == 0 && (int64_t)r->n < r->total)
        am_rs_event(r->srv, r->session, "running", (int64_t)r->n, r->total,
                    r->sess->glossary_version);
    return 0;
}

/* The history sorted by word (am_rs_history). */
typedef struct am_rs_hist {
    am_rs_word **words; /* distinct words in strcmp order (borrowed from r->vocab) */
    size_t *start; /* the occurrences of words[k]: seqs[start[k] .. start[k] + occ) */
    size_t *byid; /* the same start by word id (am_rs_word.id) */
    int64_t *seqs; /* every occurrence's seq, by word then seq */
    /* the difference to the stored history (am_rs_same): seen[i], seqs[i]
     * is stored too; gone_w[k] (owned) at gone_seq[k] is stored only */
    unsigned char *seen;
    char **gone_w;
    int64_t *gone_seq;
    size_t ngone, cap_gone_w, cap_gone_seq;
} am_rs_hist;

static int am_rs_word_cmp(const void *a, const void *b)
{
    return strcmp((*(am_rs_word *const *)a)->word, (*(am_rs_word *const *)b)->word);
}

/* Fills h from r: the distinct words sorted, the occurrences placed by
 * counting (no sort of the occurrences themselves). Free with
 * am_rs_hist_free. */
static void am_rs_history(const am_rs *r, am_rs_hist *h)
{
    size_t d = r->vocab.n ? r->vocab.n : 1;
    h->words = am_xcalloc(d, sizeof *h->words);
    h->start = am_xcalloc(d, sizeof *h->start);
    h->byid = am_xcalloc(d, sizeof *h->byid);
    h->seqs = am_xcalloc(r->nocc ? r->nocc : 1, sizeof *h->seqs);
    size_t *next = am_xcalloc(d, sizeof *next);
    for (size_t i = 0, k = 0; i < r->vocab.cap; i++)
        if (r->vocab.v[i].word)
            h->words[k++] = &r->vocab.v[i];
    if (r->vocab.n > 1)
        qsort(h->words, r->vocab.n, sizeof *h->words, am_rs_word_cmp);
    size_t at = 0;
    for (size_t k = 0; k < r->vocab.n; k++) {
        h->start[k] = h->byid[h->words[k]->id] = next[h->words[k]->id] = at;
        at += (size_t)h->words[k]->occ;
    }
    for (size_t i = 0; i < r->nocc; i++) /* in seq order: each word's seqs ascend */
        h->seqs[next[r->occ_w[i]]++] = r->occ_seq[i];
    free(next);
}

static void am_rs_hist_free(am_rs_hist *h)
{
    free(h->words);
    free(h->start);
    free(h->byid);
    free(h->seqs);
    free(h->seen);
    for (size_t k = 0; k < h->ngone; k++)
        free(h->gone_w[k]);
    free(h->gone_w);
    free(h->gone_seq);
    memset(h, 0, sizeof *h);
}

/* The stored history matched against the recomputed one (am_rs_same). */
typedef struct am_rs_cmp {
    const am_rs *r; /* borrowed */
    am_rs_hist *h; /* borrowed: its seen marks and gone rows are filled */
    size_t matched;
} am_rs_cmp;

/* Keeps the stored occurrence (word, seq) that the recomputed history
 * does not have, to be deleted by the switch. */
static void am_rs_gone(am_rs_hist *h, const char *word, int64_t seq)
{
    AM_GROW(h->gone_w, h->cap_gone_w, h->ngone + 1, 64);
    AM_GROW(h->gone_seq, h->cap_gone_seq, h->ngone + 1, 64);
    h->gone_w[h->ngone] = am_xstrdup(word);
    h->gone_seq[h->ngone++] = seq;
}

/* am_store_count_fn over the stored occurrences (word, seq): marks the
 * recomputed occurrence it equals, or keeps it as gone. */
static int am_rs_cmp_row(void *ctx, const char *word, int64_t seq)
{
    am_rs_cmp *c = ctx;
    am_rs_hist *h = c->h;
    const am_rs_word *w = word && c->r->vocab.cap ? am_rs_slot(&c->r->vocab, word) : NULL;
    if (!w || !w->word) {
        am_rs_gone(h, word ? word : "", seq);
        return 0;
    }
    size_t lo = h->byid[w->id], end = lo + (size_t)w->occ, hi = end;
    while (lo < hi) { /* the first of the word's seqs not below seq */
        size_t mid = lo + (hi - lo) / 2;
        if (h->seqs[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo < end && h->seqs[lo] == seq && h->seen[lo])
        lo++; /* a word twice in one segment: the next copy */
    if (lo == end || h->seqs[lo] != seq) {
        am_rs_gone(h, word, seq);
        return 0;
    }
    h->seen[lo] = 1;
    c->matched++;
    return 0;
}

/* *same: whether the history stored in the snapshot rtx (the occurrences
 * and the pending words of the later segment rows) is, occurrence for
 * occurrence, the one the rescore recomputed (h, from r); when not, h
 * holds the difference (am_rs_put). The content words of a segment come
 * from its reference and the session's options, not its glossary, so
 * after a glossary change they are the same and the rescore leaves the
 * history's rows alone: rewriting them cost a fifth of its writes
 * (bench/README.md, "Rescore, fifth pass"). The derived vocab counts are
 * not compared: every write keeps them with their occurrences. */
static int am_rs_same(am_store_rtx *rtx, const char *session, const am_rs *r, am_rs_hist *h,
                      int *same)
{
    am_rs_cmp c = {r, h, 0};
    h->seen = am_xcalloc(r->nocc ? r->nocc : 1, 1);
    int rc = am_store_tx_occ_each(rtx, session, am_rs_cmp_row, &c);
    if (rc == AM_OK)
        rc = am_store_tx_pending_each(rtx, session, am_rs_cmp_row, &c);
    *same = rc == AM_OK && h->ngone == 0 && c.matched == r->nocc;
    return rc;
}

/* Stages r's new results, each with its ?ci= record, as a new result
 * generation (*gen), and its checkpoints at that generation, in short
 * write transactions through ws (the rewrite's writer), after deleting
 * what an interrupted rewrite left staged (am_store_results_settle). No
 * reader sees any of it before am_store_tx_rescore_switch(*gen). */
static int am_rs_stage(am_store *ws, const char *session, const am_rs *r, int64_t *gen)
{
    int64_t *seq = am_xcalloc(r->n ? r->n : 1, sizeof *seq);
    char **res = am_xcalloc(r->n ? r->n : 1, sizeof *res),
         **st = am_xcalloc(r->n ? r->n : 1, sizeof *st);
    for (size_t i = 0; i < r->n; i++) {
        seq[i] = r->segs[i].seq;
        res[i] = r->segs[i].result;
        st[i] = r->segs[i].stats;
    }
    int rc = am_store_results_settle(ws, session, 0);
    if (rc == AM_OK)
        rc = am_store_results_stage_st(ws, session, gen, r->n, seq, res, st);
    if (rc == AM_OK)
        rc = am_store_checkpoints_stage(ws, session, *gen, r->nck, r->ck_seq, r->ck_sys,
                                        r->ck_stats);
    free(seq);
    free(res);
    free(st);
    return rc;
}

/* In the switch transaction, once the pending words are settled: the
 * stored history made the recomputed one by its difference (h, from
 * am_rs_same), as a replay swaps an edited segment's words: the stored
 * occurrences it lacks deleted, the ones it adds inserted, and the vocab
 * row of every word either touched set to the recomputed count, first and
 * last seq (deleted at 0). A history that differs in one occurrence costs
 * a few rows, not the whole history. */
static int am_rs_repair(am_store_tx *tx, const char *session, const am_rs *r, const am_rs_hist *h)
{
    unsigned char *touched = am_xcalloc(r->vocab.n ? r->vocab.n : 1, 1);
    int rc = AM_OK;
    for (size_t k = 0; k < h->ngone && rc == AM_OK; k++) {
        const am_rs_word *w = r->vocab.cap ? am_rs_slot(&r->vocab, h->gone_w[k]) : NULL;
        rc = am_store_tx_occ_drop(tx, session, h->gone_w[k], h->gone_seq[k]);
        if (rc == AM_OK && w && w->word)
            touched[w->id] = 1;
        else if (rc == AM_OK) /* not a word of the recomputed history */
            rc = am_store_tx_vocab_set(tx, session, h->gone_w[k], 0, 0, 0);
    }
    for (size_t i = 0; i < r->vocab.n && rc == AM_OK; i++) {
        const am_rs_word *w = h->words[i];
        for (size_t k = h->start[i]; k < h->start[i] + (size_t)w->occ && rc == AM_OK; k++)
            if (!h->seen[k]) {
                rc = am_store_tx_occ_put(tx, session, w->word, h->seqs[k]);
                touched[w->id] = 1;
            }
        if (rc == AM_OK && touched[w->id])
            rc = am_store_tx_vocab_set(tx, session, w->word, w->occ, w->first, w->last);
    }
    free(touched);
    return rc;
}

/* In the switch transaction, after am_store_tx_rescore_switch: r's totals
 * and term choices, and with history set the history repaired
 * (am_rs_repair). */
static int am_rs_put(am_store_tx *tx, const char *session, const am_rs *r, const am_rs_hist *h,
                     int history)
{
    int rc = AM_OK;
    for (size_t k = 0; k < r->nsys && rc == AM_OK; k++) {
        json_t *raw = am_json_totals_raw(&r->sys[k].t);
        char *txt = am_json_dump(raw);
        json_decref(raw);
        rc = am_store_tx_totals_put(tx, session, r->sys[k].name, txt);
        free(txt);
    }
    for (size_t i = 0; i < r->n && rc == AM_OK; i++)
        for (size_t k = 0; k < r->segs[i].nchoices && rc == AM_OK; k++)
            rc = am_store_tx_choice_incr(tx, session, r->segs[i].choices[2 * k],
                                         r->segs[i].choices[2 * k + 1]);
    if (history && rc == AM_OK)
        rc = am_rs_repair(tx, session, r, h);
    return rc;
}

/* Fills f for a failed write of the rescore (rc, not NOTFOUND): a full
 * disk or max-db-size is 507 insufficient-storage, as for every other
 * write (the client can free space and retry); PostgreSQL unreachable or
 * without a synchronous standby (--pg-require-sync) 503 with Retry-After;
 * anything else 500. */
static void am_rs_store_failed(am_fail *f, int rc, const char *session)
{
    if (rc == AM_ERR_FULL) {
        am_failp(f, AM_P_INSUFFICIENT_STORAGE, NULL, "the rescore of '%s': " AM_PROBLEM_FULL_NOTE,
                 session);
    } else if (rc == AM_ERR_UNAVAILABLE) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the rescore of '%s' was not stored: the database is unavailable; retry", session);
        f->retry_after = 1;
    } else
        am_failp(f, AM_P_INTERNAL, NULL, "storage error: the rescore of '%s' failed to store",
                 session);
}

/* The read step of an attempt, in one read snapshot: the session's state
 * into *st (checked against the runtime: a stale runtime is forgotten and
 * *retry set), every segment scored into r, the history compared with the
 * stored one (*same). Fills r->f on failure. */
static int am_rs_read(am_server *srv, const char *session, am_sess *sess, am_rs *r,
                      am_store_state *st, am_rs_hist *h, int *same, int *retry)
{
    am_fail *f = r->f;
    am_store_rtx *rtx = NULL;
    int rc = am_store_rtx_begin(srv->store, &rtx);
    if (rc != AM_OK) {
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not read the session; retry");
        f->retry_after = 1;
        return rc;
    }
    rc = am_store_tx_session_info(rtx, session, st);
    if (rc == AM_ERR_NOTFOUND)
        am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
    else if (rc != AM_OK)
        am_failp(f, AM_P_INTERNAL, NULL, "storage error: reading the session failed");
    else if (st->incarnation != sess->incarnation ||
             st->glossary_version != sess->glossary_version) {
        am_sessions_forget_entry(srv->sessions, sess); /* rebuilt on the next attempt */
        *retry = 1;
        rc = AM_ERR_CONFLICT;
        am_failp(f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
    }
    if (rc == AM_OK) {
        r->total = st->count;
        r->ws = am_wspool_get(srv->wspool);
        am_rs_event(srv, session, "started", 0, r->total, st->glossary_version);
        /* the scoring: from the snapshot into memory, no write lock held */
        rc = am_store_tx_segments_walk_gv(rtx, session, 1, am_rs_segment, r);
        if (rc == AM_OK) {
            am_rs_history(r, h);
            rc = am_rs_same(rtx, session, r, h, same);
        }
        if (rc != AM_OK && !f->failed)
            am_failp(f, AM_P_INTERNAL, NULL, "storage error: reading the segments failed");
    }
    am_store_rtx_end(rtx);
    return rc;
}

/* The switch of an attempt, one short write transaction through ws: the
 * session must still be the incarnation, glossary version and version
 * st read (else *retry and AM_ERR_CONFLICT, nothing written); then the
 * staged generation gen, the totals, choices and (when it changed, !same)
 * the history become the session's at once. *cur: the state after. */
static int am_rs_switch(am_store *ws, const char *session, const am_rs *r, const am_store_state *st,
                        const am_rs_hist *h, int same, int64_t gen, am_store_state *cur, int *retry)
{
    am_store_tx *tx = NULL;
    int rc = am_store_tx_begin(ws, &tx);
    if (rc != AM_OK) {
        am_failp(r->f, AM_P_UNAVAILABLE, NULL,
                 "the database is busy: could not start a transaction; retry");
        r->f->retry_after = 1;
        return rc;
    }
    rc = am_store_tx_session_info(am_store_tx_reads(tx), session, cur);
    if (rc == AM_OK &&
        (cur->incarnation != st->incarnation || cur->glossary_version != st->glossary_version ||
         cur->version != st->version)) {
        /* written meanwhile (not through this runtime's lock): again */
        *retry = 1;
        rc = AM_ERR_CONFLICT;
        am_failp(r->f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
    }
    if (rc == AM_OK)
        rc = am_store_tx_rescore_switch(tx, session, gen, st->glossary_version, r->now, !same);
    if (rc == AM_OK)
        rc = am_rs_put(tx, session, r, h, !same);
    if (rc == AM_OK)
        rc = am_store_tx_session_info(am_store_tx_reads(tx), session, cur);
    if (rc == AM_OK)
        return am_store_tx_commit(tx);
    am_store_tx_rollback(tx);
    return rc;
}

/* One attempt (see am_ingest_rescore). *retry is set when the session
 * changed under it. On success *summary is set. The steps: the snapshot
 * scored into memory (am_rs_read), the results and checkpoints staged as
 * a new generation in short writes (am_rs_stage), the switch
 * (am_rs_switch). A crash or failure before the switch's commit leaves
 * the staged rows invisible (a generation above the session's), deleted
 * by the next rewrite's settle. */
static int am_rescore_once(am_server *srv, const char *session, int attempt, am_peer *peer,
                           json_t **summary, am_fail *f, int *retry)
{
    am_sess *sess;
    int rc = am_ingest_acquire(srv, session, &sess, f);
    if (rc != AM_OK)
        return rc;
    am_sess_lock(sess); /* this session's writers queue behind */
    am_rs r;
    memset(&r, 0, sizeof r);
    r.srv = srv;
    r.session = session;
    r.sess = sess;
    r.f = f;
    r.peer = peer;
    r.now = am_now_ms();
    am_rs_hist h;
    memset(&h, 0, sizeof h);
    am_store_state st, cur;
    int same = 0;
    int64_t gen = 0;
    am_store *ws = srv->store; /* the writes: the store, or the rewrite's pinned view */
    rc = am_rewrite_begin(srv, session, &ws, f, retry);
    if (rc == AM_OK)
        rc = am_rs_read(srv, session, sess, &r, &st, &h, &same, retry);
    if (rc == AM_OK && peer && am_peer_gone(peer)) {
        /* before anything is written: the answer would go nowhere */
        am_prom_abandoned(srv->prom, "client_gone");
        rc = am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                      "the client closed its connection: the rescore was abandoned and "
                      "nothing was changed");
    }
    if (rc == AM_OK) {
        rc = am_rs_stage(ws, session, &r, &gen);
        if (rc == AM_OK)
            rc = am_rs_switch(ws, session, &r, &st, &h, same, gen, &cur, retry);
        if (rc == AM_ERR_NOTFOUND)
            am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session);
        else if (rc != AM_OK && !f->failed)
            am_rs_store_failed(f, rc, session);
    }
    if (rc == AM_OK) {
        am_sess_tot_clear(sess); /* the totals cache is of the old results */
        json_t *systems = json_object();
        for (size_t k = 0; k < r.nsys; k++)
            if (strncmp(r.sys[k].name, "pair:", 5) && strncmp(r.sys[k].name, "tr:", 3))
                /* pair and translator totals are for the metrics only */
                json_object_set_new(systems, r.sys[k].name,
                                    am_json_totals(sess->scorer, &r.sys[k].t));
        char link[300];
        snprintf(link, sizeof link, "/v1/sessions/%s/metrics", session);
        *summary = json_pack("{sssIsIsIsIsisssosI}", "session", session, "segments",
                             (json_int_t)r.n, "glossary_version", (json_int_t)st.glossary_version,
                             "version", (json_int_t)cur.version, "incarnation",
                             (json_int_t)cur.incarnation, "attempts", attempt + 1, "metrics", link,
                             "systems", systems, "rescored_ms", (json_int_t)r.now);
        am_rs_event(srv, session, "committed", (int64_t)r.n, (int64_t)r.n, st.glossary_version);
    }
    am_store_rewrite_end(srv->store, ws);
    am_rs_hist_free(&h);
    am_rs_cleanup(&r);
    am_sess_unlock(sess);
    am_sessions_release(srv->sessions, sess);
    return rc;
}

/* See rescore.h. Each attempt starts from a fresh runtime and snapshot. */
int am_ingest_rescore(am_server *srv, const char *session, am_peer *peer, json_t **summary,
                      am_fail *f)
{
    int rc = AM_OK;
    for (int attempt = 0; attempt < AM_RESCORE_TRIES; attempt++) {
        int retry = 0;
        am_fail_cleanup(f);
        am_fail_init(f);
        rc = am_rescore_once(srv, session, attempt, peer, summary, f, &retry);
        if (rc == AM_OK || !retry || (peer && peer->gone))
            break;
    }
    if (rc != AM_OK && am_fail_status(f) != 404)
        am_rs_event(srv, session, "failed", 0, 0, 0);
    return rc;
}

void am_api_rescore(am_req *req, am_resp *resp)
{
    am_fail f;
    am_fail_init(&f);
    json_t *summary = NULL;
    am_peer peer; /* minutes on a long session: stop when the client has gone */
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    int rc = am_ingest_rescore(req->srv, req->params[0], &peer, &summary, &f);
    if (rc == AM_OK) {
        am_resp_json(resp, 200, summary);
    } else {
        am_resp_problem(resp, req, f.type, "%s", am_buf_str(&f.detail));
        if (am_fail_status(&f) == 503)
            am_resp_header(resp, "Retry-After", "1");
    }
    am_fail_cleanup(&f);
}
