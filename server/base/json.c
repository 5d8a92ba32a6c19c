/* json.c — jansson encoding of core results (see json.h); the tree-less
 * POST answer is in json_answer.c. */
#include "json.h"
#include "json_int.h"
#include "realfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *am_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *am_json_count(int64_t hits, int64_t total)
{
    return json_pack("{sIsIso}", "hits", (json_int_t)hits, "total", (json_int_t)total, "score",
                     total > 0 ? json_real((double)hits / (double)total) : json_null());
}

static json_t *am_json_recall(const am_recall_totals *r)
{
    json_t *o = json_object();
    for (int k = 0; k <= r->k; k++) {
        char key[8];
        snprintf(key, sizeof key, "r%d", k);
        json_object_set_new(o, key, am_json_count(r->r[k].hits, r->r[k].total));
    }
    json_object_set_new(o, "r01", am_json_count(r->r01.hits, r->r01.total));
    return o;
}

static json_t *am_json_windows(const am_terms_totals *t, const double *scores)
{
    json_t *o = json_object();
    for (size_t w = 0; w < t->n_windows; w++) {
        char key[16];
        snprintf(key, sizeof key, "%zu", t->windows[w]);
        json_object_set_new(o, key,
                            json_pack("{sosI}", "score", am_json_real(scores[w]), "instances",
                                      (json_int_t)t->win_count[w]));
    }
    return o;
}

static json_t *am_json_terms_totals(const am_terms_totals *t)
{
    am_terms_scores sc;
    am_terms_totals_scores(t, &sc);
    return json_pack("{sIsIsIsIsIsososososo}", "instances", (json_int_t)t->instances, "exact",
                     (json_int_t)t->exact, "stem", (json_int_t)t->stem, "deviations",
                     (json_int_t)t->deviations, "forbidden", (json_int_t)t->forbidden,
                     "exact_match", am_json_real(sc.exact), "exact_or_stem_match",
                     am_json_real(sc.exact_or_stem), "partial_match", am_json_real(sc.partial),
                     "reorder_match", am_json_real(sc.reorder), "window_overlap",
                     am_json_windows(t, sc.window));
}

static json_t *am_json_span(const am_terms_span *sp)
{
    return json_pack("{sIsIsIsI}", "token_start", (json_int_t)sp->tok_start, "token_end",
                     (json_int_t)sp->tok_end, "byte_start", (json_int_t)sp->byte_start, "byte_end",
                     (json_int_t)sp->byte_end);
}

const char *am_json_match_name(enum am_terms_match m)
{
    return m == AM_TERMS_EXACT ? "exact" : m == AM_TERMS_STEM ? "stem" : "none";
}

static json_t *am_json_terms_seg(const am_terms_seg *ts, const am_terms_totals *tot)
{
    json_t *inst = json_array();
    for (size_t i = 0; i < ts->n_inst; i++) {
        const am_terms_inst *in = &ts->inst[i];
        json_t *o = json_pack("{sssIsoss}", "origin",
                              in->origin == AM_TERMS_GLOSSARY ? "glossary" : "annotation", "entry",
                              (json_int_t)in->entry, "reference", am_json_span(&in->ref), "match",
                              am_json_match_name(in->match));
        json_object_set_new(o, "partial", am_json_real(in->partial));
        json_object_set_new(o, "reorder", am_json_real(in->reorder));
        if (in->match != AM_TERMS_NONE)
            json_object_set_new(o, "hypothesis", am_json_span(&in->hyp));
        json_t *wo = json_object();
        for (size_t w = 0; w < tot->n_windows; w++) {
            char key[16];
            snprintf(key, sizeof key, "%zu", tot->windows[w]);
            json_object_set_new(wo, key, am_json_real(in->window[w]));
        }
        json_object_set_new(o, "window_overlap", wo);
        json_array_append_new(inst, o);
    }
    json_t *dev = json_array();
    for (size_t i = 0; i < ts->n_dev; i++)
        json_array_append_new(
            dev, json_pack("{sssI}", "origin",
                           ts->dev[i].origin == AM_TERMS_GLOSSARY ? "glossary" : "annotation",
                           "entry", (json_int_t)ts->dev[i].entry));
    json_t *forb = json_array();
    for (size_t i = 0; i < ts->n_forbid; i++)
        json_array_append_new(forb, json_pack("{sIsIso}", "entry", (json_int_t)ts->forbid[i].entry,
                                              "alternative", (json_int_t)ts->forbid[i].alt,
                                              "hypothesis", am_json_span(&ts->forbid[i].hyp)));
    json_t *o = am_json_terms_totals(tot);
    json_object_set_new(o, "instances_found", inst);
    json_object_set_new(o, "glossary_deviations", dev);
    json_object_set_new(o, "forbidden_used", forb);
    return o;
}

json_t *am_json_segment(const am_scorer *s, const am_seg_result *res, const char *const *names)
{
    (void)s;
    const am_recall_seg *rs = res->recall;
    json_t *words = json_array();
    for (size_t i = 0; i < rs->words.n; i++) {
        json_t *hits = json_object();
        for (size_t k = 0; k < res->nsys; k++)
            json_object_set_new(hits, names[k], json_boolean(rs->hit[k * rs->words.n + i]));
        json_array_append_new(words, json_pack("{sssIsbso}", "word", rs->words.v[i], "shot",
                                               (json_int_t)rs->shot[i], "counted",
                                               rs->shot[i] <= rs->k, "hits", hits));
    }
    json_t *systems = json_object();
    for (size_t k = 0; k < res->nsys; k++) {
        const am_sys_seg *r = &res->sys[k];
        json_t *o = am_json_recall(&r->recall);
        if (r->terms)
            json_object_set_new(o, "terms", am_json_terms_seg(r->terms, &r->terms_totals));
        json_object_set_new(o, "ter", am_json_real(100.0 * r->sent_ter));
        json_object_set_new(o, "one_minus_term", am_json_real(1.0 - r->sent_term));
        json_object_set_new(o, "ter_edits", json_real(r->ter_edits));
        json_object_set_new(o, "term_edits", json_real(r->term_edits));
        json_object_set_new(o, "ter_ref_len", json_integer((json_int_t)r->ter_ref_len));
        json_object_set_new(o, "bleu", am_json_real(r->sent_bleu));
        json_object_set_new(o, "chrf", am_json_real(r->sent_chrf));
        json_object_set_new(o, "chrfpp", am_json_real(r->sent_chrfpp));
        json_object_set_new(systems, names[k], o);
    }
    return json_pack("{soso}", "words", words, "systems", systems);
}

json_t *am_json_totals(const am_scorer *s, const am_totals *t)
{
    (void)s;
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    json_t *o = am_json_recall(&t->recall);
    json_object_set_new(o, "segments", json_integer((json_int_t)t->segments));
    json_object_set_new(o, "terms", am_json_terms_totals(&t->terms));
    json_object_set_new(o, "ter", am_json_real(100.0 * sc.ter));
    json_object_set_new(o, "one_minus_term", am_json_real(sc.one_minus_term));
    json_object_set_new(o, "bleu", am_json_real(sc.bleu));
    json_object_set_new(o, "chrf", am_json_real(sc.chrf));
    json_object_set_new(o, "chrfpp", am_json_real(sc.chrfpp));
    return o;
}

json_t *am_json_relative(const am_scorer *s, const json_t *b_raw, const json_t *x_raw,
                         json_t *segments)
{
    am_totals b, x;
    int have = b_raw && x_raw && am_json_totals_parse(b_raw, s, &b) == AM_OK &&
               am_json_totals_parse(x_raw, s, &x) == AM_OK;
    am_totals_rel r;
    am_totals_relative(have ? &b : NULL, have ? &x : NULL, &r);
    json_t *o = json_object();
    int k = have ? r.k : am_scorer_config(s)->k;
    for (int i = 0; i <= k; i++) {
        char key[8];
        snprintf(key, sizeof key, "r%d", i);
        json_object_set_new(o, key, am_json_real(r.rel.r[i]));
    }
    json_object_set_new(o, "r01", am_json_real(r.rel.r01));
    json_object_set_new(o, "bleu", am_json_real(r.rel.bleu));
    json_object_set_new(o, "chrf", am_json_real(r.rel.chrf));
    json_object_set_new(o, "chrfpp", am_json_real(r.rel.chrfpp));
    json_object_set_new(o, "ter", am_json_real(r.rel.ter));
    json_object_set_new(o, "one_minus_term", am_json_real(r.rel.one_minus_term));
    json_object_set_new(o, "term_exact_match", am_json_real(r.rel.terms.exact));
    json_object_set_new(o, "segments", segments);
    return o;
}

json_t *am_json_alam(const am_alam_result *r, int per_segment)
{
    json_t *wo = json_object();
    for (size_t w = 0; w < r->nwindows; w++) {
        char key[16];
        snprintf(key, sizeof key, "%zu", r->windows[w]);
        json_object_set_new(wo, key, json_real(r->window_overlap[w]));
    }
    json_t *o = json_pack("{sIsIsososo}", "exact_match_correct", (json_int_t)r->em_correct,
                          "exact_match_terms", (json_int_t)r->em_terms, "exact_match",
                          r->exact_match_valid ? json_real(r->exact_match) : json_null(),
                          "window_overlap", wo, "one_minus_term",
                          r->term_ter_valid ? json_real(r->one_minus_term_ter) : json_null());
    if (per_segment) {
        json_t *segs = json_array();
        for (size_t i = 0; i < r->nsegs; i++) {
            const am_alam_seg *sg = &r->segs[i];
            json_t *w = json_object();
            for (size_t k = 0; k < r->nwindows; k++) {
                char key[16];
                snprintf(key, sizeof key, "%zu", r->windows[k]);
                json_object_set_new(w, key, json_real(sg->wo[k]));
            }
            json_array_append_new(
                segs, json_pack("{sssIsIsoso}", "id", sg->id, "exact_match_correct",
                                (json_int_t)sg->em_correct, "exact_match_terms",
                                (json_int_t)sg->em_terms, "window_overlap", w, "term_ter",
                                sg->term_ter_valid ? json_real(sg->term_ter) : json_null()));
        }
        json_object_set_new(o, "segments", segs);
    }
    return o;
}

/* Appends x as the shortest text that reads back, in jansson's spelling
 * (am_realfmt_json); non-finite: null. */
void am_json_put_real(am_buf *b, double x)
{
    char s[AM_REALFMT_MAX];
    size_t n = am_realfmt_json(x, s);
    am_buf_append(b, s, n);
}

/* Appends s (n bytes, UTF-8) as a JSON string, escaped as jansson does:
 * '"', '\\' and control characters only. */
void am_json_put_string(am_buf *b, const char *s, size_t n)
{
    am_buf_appendc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        am_buf_append(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': am_buf_append(b, "\\\"", 2); break;
        case '\\': am_buf_append(b, "\\\\", 2); break;
        case '\b': am_buf_append(b, "\\b", 2); break;
        case '\f': am_buf_append(b, "\\f", 2); break;
        case '\n': am_buf_append(b, "\\n", 2); break;
        case '\r': am_buf_append(b, "\\r", 2); break;
        case '\t': am_buf_append(b, "\\t", 2); break;
        default: am_buf_printf(b, "\\u%04X", (unsigned)c); break;
        }
    }
    am_buf_append(b, s + run, n - run);
    am_buf_appendc(b, '"');
}

/* An object member while dumping: key and value borrowed from the object. */
typedef struct am_json_kv {
    const char *key;
    const json_t *v;
} am_json_kv;

static int am_json_key_cmp(const void *a, const void *b)
{
    return strcmp(((const am_json_kv *)a)->key, ((const am_json_kv *)b)->key);
}

/* Appends the decimal text of v. */
void am_json_put_int(am_buf *b, json_int_t v)
{
    char s[24], *p = s + sizeof s;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    am_buf_append(b, p, (size_t)(s + sizeof s - p));
}

/* Appends j (borrowed) compactly; with sorted, object keys in strcmp order
 * (jansson's JSON_SORT_KEYS), else in insertion order. */
static void am_json_put(am_buf *b, const json_t *j, int sorted)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        am_json_kv stack[32], *kv = stack;
        size_t n = json_object_size(j), k = 0;
        if (n > sizeof stack / sizeof *stack)
            kv = am_xcalloc(n, sizeof *kv);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)(uintptr_t)j, key, v)
        {
            kv[k].key = key;
            kv[k++].v = v;
        }
        if (sorted && k > 1)
            qsort(kv, k, sizeof *kv, am_json_key_cmp);
        am_buf_appendc(b, '{');
        for (size_t i = 0; i < k; i++) {
            if (i)
                am_buf_appendc(b, ',');
            am_json_put_string(b, kv[i].key, strlen(kv[i].key));
            am_buf_appendc(b, ':');
            am_json_put(b, kv[i].v, sorted);
        }
        am_buf_appendc(b, '}');
        if (kv != stack)
            free(kv);
        break;
    }
    case JSON_ARRAY:
        am_buf_appendc(b, '[');
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i)
                am_buf_appendc(b, ',');
            am_json_put(b, json_array_get(j, i), sorted);
        }
        am_buf_appendc(b, ']');
        break;
    case JSON_STRING: am_json_put_string(b, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER: am_json_put_int(b, json_integer_value(j)); break;
    case JSON_REAL: am_json_put_real(b, json_real_value(j)); break;
    case JSON_TRUE: am_buf_append(b, "true", 4); break;
    case JSON_FALSE: am_buf_append(b, "false", 5); break;
    default: am_buf_append(b, "null", 4); break;
    }
}

char *am_json_dump(const json_t *j)
{
    return am_json_dumps(j, 1);
}

char *am_json_dumps(const json_t *j, int sorted)
{
    am_buf b;
    am_buf_init(&b);
    if (j)
        am_json_put(&b, j, sorted);
    else
        am_buf_append(&b, "null", 4);
    return am_buf_detach(&b);
}

int am_json_any(const json_t *j, int (*leaf)(const json_t *v))
{
    if (!j)
        return 0;
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++)
            if (am_json_any(json_array_get(j, i), leaf))
                return 1;
        return 0;
    }
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)(uintptr_t)j, key, v)
        {
            if (am_json_any(v, leaf))
                return 1;
        }
        return 0;
    }
    return leaf(j);
}

static int am_json_leaf_real(const json_t *v)
{
    return json_is_real(v);
}

char *am_json_canonical(const json_t *j)
{
    /* the writers differ in reals only (am_json_put_real: the shortest
     * that reads back; jansson here: 17 digits) */
    if (!j || am_json_any(j, am_json_leaf_real))
        return j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)) : NULL;
    return am_json_dumps(j, 1);
}

static json_t *am_json_i64_array(const int64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

/* 1 when t's chrF++ statistics are its own (several references), not
 * chrf's. */
static int am_json_chrfpp_own(const am_totals *t)
{
    return t->chrfpp_segments == t->bleu_segments &&
           memcmp(&t->chrfpp, &t->chrf, sizeof t->chrf) != 0;
}

json_t *am_json_totals_raw(const am_totals *t)
{
    json_t *r = json_array();
    for (int k = 0; k <= t->recall.k; k++)
        json_array_append_new(r, json_pack("[II]", (json_int_t)t->recall.r[k].hits,
                                           (json_int_t)t->recall.r[k].total));
    json_t *tw = json_array(), *ws = json_array(), *wc = json_array();
    for (size_t w = 0; w < t->terms.n_windows; w++) {
        json_array_append_new(tw, json_integer((json_int_t)t->terms.windows[w]));
        json_array_append_new(ws, json_real(t->terms.win_sum[w]));
        json_array_append_new(wc, json_integer((json_int_t)t->terms.win_count[w]));
    }
    json_t *ch = json_array(), *wd = json_array();
    for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        json_array_append_new(ch, am_json_i64_array(t->chrf.ch[n], 3));
    for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        json_array_append_new(wd, am_json_i64_array(t->chrf.wd[n], 3));
    json_t *o = json_pack(
        "{sI sI sI s{sIsos[II]} s{sIsIsIsIsIsfsfsososo} s{sfsfsI} s{sfsfsI} s{sIsIsoso} s{soso}}",
        "v", (json_int_t)1, "segments", (json_int_t)t->segments, "bleu_segments",
        (json_int_t)t->bleu_segments, "recall", "k", (json_int_t)t->recall.k, "r", r, "r01",
        (json_int_t)t->recall.r01.hits, (json_int_t)t->recall.r01.total, "terms", "instances",
        (json_int_t)t->terms.instances, "exact", (json_int_t)t->terms.exact, "stem",
        (json_int_t)t->terms.stem, "deviations", (json_int_t)t->terms.deviations, "forbidden",
        (json_int_t)t->terms.forbidden, "partial_sum", t->terms.partial_sum, "reorder_sum",
        t->terms.reorder_sum, "windows", tw, "win_sum", ws, "win_count", wc, "ter", "edits",
        t->ter.edits, "ref_len", t->ter.ref_len, "n", (json_int_t)t->ter.n, "term", "edits",
        t->term.edits, "ref_len", t->term.ref_len, "n", (json_int_t)t->term.n, "bleu", "sys_len",
        (json_int_t)t->bleu.sys_len, "ref_len", (json_int_t)t->bleu.ref_len, "correct",
        am_json_i64_array(t->bleu.correct, AM_BLEU_MAX_ORDER), "total",
        am_json_i64_array(t->bleu.total, AM_BLEU_MAX_ORDER), "chrf", "ch", ch, "wd", wd);
    /* chrF++'s own statistics, only when several references made them
     * differ from chrf's (older records and one-reference sessions: none) */
    if (am_json_chrfpp_own(t)) {
        json_t *pch = json_array(), *pwd = json_array();
        for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
            json_array_append_new(pch, am_json_i64_array(t->chrfpp.ch[n], 3));
        for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
            json_array_append_new(pwd, am_json_i64_array(t->chrfpp.wd[n], 3));
        json_object_set_new(o, "chrfpp", json_pack("{soso}", "ch", pch, "wd", pwd));
    }
    return o;
}

/* Appends ,"key": (first: no comma). */
static void am_json_put_key(am_buf *b, const char *key, int first)
{
    if (!first)
        am_buf_appendc(b, ',');
    am_buf_appendc(b, '"');
    am_buf_appends(b, key);
    am_buf_append(b, "\":", 2);
}

/* Appends [v0,v1,...] of n integers. */
static void am_json_put_i64s(am_buf *b, const int64_t *v, size_t n)
{
    am_buf_appendc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            am_buf_appendc(b, ',');
        am_json_put_int(b, (json_int_t)v[i]);
    }
    am_buf_appendc(b, ']');
}

/* Appends a TER/TERm statistics object ({edits, n, ref_len}, sorted). */
static void am_json_put_ter(am_buf *b, const am_ter_stats *s)
{
    am_json_put_key(b, "edits", 1);
    am_json_put_real(b, s->edits);
    am_json_put_key(b, "n", 0);
    am_json_put_int(b, (json_int_t)s->n);
    am_json_put_key(b, "ref_len", 0);
    am_json_put_real(b, s->ref_len);
}

/* chrF statistics as {"ch": [...], "wd": [...]}. */
static void am_json_put_chrf(am_buf *b, const am_chrf_stats *st)
{
    am_buf_appendc(b, '{');
    am_json_put_key(b, "ch", 1);
    am_buf_appendc(b, '[');
    for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++) {
        if (n)
            am_buf_appendc(b, ',');
        am_json_put_i64s(b, st->ch[n], 3);
    }
    am_buf_appendc(b, ']');
    am_json_put_key(b, "wd", 0);
    am_buf_appendc(b, '[');
    for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++) {
        if (n)
            am_buf_appendc(b, ',');
        am_json_put_i64s(b, st->wd[n], 3);
    }
    am_buf_append(b, "]}", 2);
}

/* The keys below are written in strcmp order, as am_json_dump sorts the
 * tree of am_json_totals_raw (tests/unit/test_json.c compares the two). */
char *am_json_totals_text(const am_totals *t)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_appendc(&b, '{');
    am_json_put_key(&b, "bleu", 1);
    am_buf_appendc(&b, '{');
    am_json_put_key(&b, "correct", 1);
    am_json_put_i64s(&b, t->bleu.correct, AM_BLEU_MAX_ORDER);
    am_json_put_key(&b, "ref_len", 0);
    am_json_put_int(&b, (json_int_t)t->bleu.ref_len);
    am_json_put_key(&b, "sys_len", 0);
    am_json_put_int(&b, (json_int_t)t->bleu.sys_len);
    am_json_put_key(&b, "total", 0);
    am_json_put_i64s(&b, t->bleu.total, AM_BLEU_MAX_ORDER);
    am_buf_appendc(&b, '}');
    am_json_put_key(&b, "bleu_segments", 0);
    am_json_put_int(&b, (json_int_t)t->bleu_segments);
    am_json_put_key(&b, "chrf", 0);
    am_json_put_chrf(&b, &t->chrf);
    if (am_json_chrfpp_own(t)) {
        am_json_put_key(&b, "chrfpp", 0);
        am_json_put_chrf(&b, &t->chrfpp);
    }
    am_json_put_key(&b, "recall", 0);
    am_buf_appendc(&b, '{');
    am_json_put_key(&b, "k", 1);
    am_json_put_int(&b, (json_int_t)t->recall.k);
    am_json_put_key(&b, "r", 0);
    am_buf_appendc(&b, '[');
    for (int k = 0; k <= t->recall.k; k++) {
        int64_t hr[2] = {t->recall.r[k].hits, t->recall.r[k].total};
        if (k)
            am_buf_appendc(&b, ',');
        am_json_put_i64s(&b, hr, 2);
    }
    am_buf_appendc(&b, ']');
    am_json_put_key(&b, "r01", 0);
    int64_t r01[2] = {t->recall.r01.hits, t->recall.r01.total};
    am_json_put_i64s(&b, r01, 2);
    am_buf_appendc(&b, '}');
    am_json_put_key(&b, "segments", 0);
    am_json_put_int(&b, (json_int_t)t->segments);
    am_json_put_key(&b, "ter", 0);
    am_buf_appendc(&b, '{');
    am_json_put_ter(&b, &t->ter);
    am_buf_appendc(&b, '}');
    am_json_put_key(&b, "term", 0);
    am_buf_appendc(&b, '{');
    am_json_put_ter(&b, &t->term);
    am_buf_appendc(&b, '}');
    const am_terms_totals *tt = &t->terms;
    am_json_put_key(&b, "terms", 0);
    am_buf_appendc(&b, '{');
    am_json_put_key(&b, "deviations", 1);
    am_json_put_int(&b, (json_int_t)tt->deviations);
    am_json_put_key(&b, "exact", 0);
    am_json_put_int(&b, (json_int_t)tt->exact);
    am_json_put_key(&b, "forbidden", 0);
    am_json_put_int(&b, (json_int_t)tt->forbidden);
    am_json_put_key(&b, "instances", 0);
    am_json_put_int(&b, (json_int_t)tt->instances);
    am_json_put_key(&b, "partial_sum", 0);
    am_json_put_real(&b, tt->partial_sum);
    am_json_put_key(&b, "reorder_sum", 0);
    am_json_put_real(&b, tt->reorder_sum);
    am_json_put_key(&b, "stem", 0);
    am_json_put_int(&b, (json_int_t)tt->stem);
    am_json_put_key(&b, "win_count", 0);
    am_buf_appendc(&b, '[');
    for (size_t w = 0; w < tt->n_windows; w++) {
        if (w)
            am_buf_appendc(&b, ',');
        am_json_put_int(&b, (json_int_t)tt->win_count[w]);
    }
    am_buf_appendc(&b, ']');
    am_json_put_key(&b, "win_sum", 0);
    am_buf_appendc(&b, '[');
    for (size_t w = 0; w < tt->n_windows; w++) {
        if (w)
            am_buf_appendc(&b, ',');
        am_json_put_real(&b, tt->win_sum[w]);
    }
    am_buf_appendc(&b, ']');
    am_json_put_key(&b, "windows", 0);
    am_buf_appendc(&b, '[');
    for (size_t w = 0; w < tt->n_windows; w++) {
        if (w)
            am_buf_appendc(&b, ',');
        am_json_put_int(&b, (json_int_t)tt->windows[w]);
    }
    am_buf_append(&b, "]}", 2);
    am_json_put_key(&b, "v", 0);
    am_buf_append(&b, "1}", 2);
    return am_buf_detach(&b);
}

static int am_json_get_i64(const json_t *o, const char *key, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        return AM_ERR_PARSE;
    *out = (int64_t)json_integer_value(v);
    return AM_OK;
}

static int am_json_get_real(const json_t *o, const char *key, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        return AM_ERR_PARSE;
    *out = json_number_value(v);
    return AM_OK;
}

static int am_json_i64s(const json_t *a, int64_t *out, size_t n)
{
    if (!json_is_array(a) || json_array_size(a) != n)
        return AM_ERR_PARSE;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v))
            return AM_ERR_PARSE;
        out[i] = (int64_t)json_integer_value(v);
    }
    return AM_OK;
}

/* {"ch": [...], "wd": [...]} into *st. Returns 0 or AM_ERR_PARSE. */
static int am_json_chrf_parse(const json_t *o, am_chrf_stats *st)
{
    const json_t *ch = json_object_get(o, "ch"), *wd = json_object_get(o, "wd");
    if (json_array_size(ch) != AM_CHRF_MAX_CHAR_ORDER ||
        json_array_size(wd) != AM_CHRF_MAX_WORD_ORDER)
        return AM_ERR_PARSE;
    for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        if (am_json_i64s(json_array_get(ch, n), st->ch[n], 3))
            return AM_ERR_PARSE;
    for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        if (am_json_i64s(json_array_get(wd, n), st->wd[n], 3))
            return AM_ERR_PARSE;
    return 0;
}

/* Complexity (issue 15): one type and range check per field of
 * am_json_totals_raw's layout, since a stored row may be damaged; the
 * branches are that list, not logic. */
int am_json_totals_parse(const json_t *j, const am_scorer *s, am_totals *t)
{
    am_totals_init(t, s);
    const json_t *rec = json_object_get(j, "recall"), *terms = json_object_get(j, "terms");
    const json_t *ter = json_object_get(j, "ter"), *term = json_object_get(j, "term");
    const json_t *bleu = json_object_get(j, "bleu"), *chrf = json_object_get(j, "chrf");
    int64_t k, x;
    if (!rec || !terms || !ter || !term || !bleu || !chrf ||
        am_json_get_i64(j, "segments", &t->segments) || am_json_get_i64(rec, "k", &k) ||
        k != t->recall.k)
        return AM_ERR_PARSE;
    const json_t *r = json_object_get(rec, "r");
    if (!json_is_array(r) || json_array_size(r) != (size_t)k + 1)
        return AM_ERR_PARSE;
    for (int64_t i = 0; i <= k; i++) {
        int64_t p[2];
        if (am_json_i64s(json_array_get(r, (size_t)i), p, 2))
            return AM_ERR_PARSE;
        t->recall.r[i].hits = p[0];
        t->recall.r[i].total = p[1];
    }
    int64_t r01[2];
    if (am_json_i64s(json_object_get(rec, "r01"), r01, 2))
        return AM_ERR_PARSE;
    t->recall.r01.hits = r01[0];
    t->recall.r01.total = r01[1];
    int64_t inst, ex, st, dev, fb;
    if (am_json_get_i64(terms, "instances", &inst) || am_json_get_i64(terms, "exact", &ex) ||
        am_json_get_i64(terms, "stem", &st) || am_json_get_i64(terms, "deviations", &dev) ||
        am_json_get_i64(terms, "forbidden", &fb) ||
        am_json_get_real(terms, "partial_sum", &t->terms.partial_sum) ||
        am_json_get_real(terms, "reorder_sum", &t->terms.reorder_sum))
        return AM_ERR_PARSE;
    t->terms.instances = (uint64_t)inst;
    t->terms.exact = (uint64_t)ex;
    t->terms.stem = (uint64_t)st;
    t->terms.deviations = (uint64_t)dev;
    t->terms.forbidden = (uint64_t)fb;
    const json_t *ws = json_object_get(terms, "win_sum"), *wc = json_object_get(terms, "win_count");
    if (json_array_size(ws) != t->terms.n_windows || json_array_size(wc) != t->terms.n_windows)
        return AM_ERR_PARSE;
    for (size_t w = 0; w < t->terms.n_windows; w++) {
        json_t *a = json_array_get(ws, w), *b = json_array_get(wc, w);
        if (!json_is_number(a) || !json_is_integer(b))
            return AM_ERR_PARSE;
        t->terms.win_sum[w] = json_number_value(a);
        t->terms.win_count[w] = (uint64_t)json_integer_value(b);
    }
    if (am_json_get_real(ter, "edits", &t->ter.edits) ||
        am_json_get_real(ter, "ref_len", &t->ter.ref_len) || am_json_get_i64(ter, "n", &x))
        return AM_ERR_PARSE;
    t->ter.n = (size_t)x;
    if (am_json_get_real(term, "edits", &t->term.edits) ||
        am_json_get_real(term, "ref_len", &t->term.ref_len) || am_json_get_i64(term, "n", &x))
        return AM_ERR_PARSE;
    t->term.n = (size_t)x;
    if (am_json_get_i64(bleu, "sys_len", &t->bleu.sys_len) ||
        am_json_get_i64(bleu, "ref_len", &t->bleu.ref_len) ||
        am_json_i64s(json_object_get(bleu, "correct"), t->bleu.correct, AM_BLEU_MAX_ORDER) ||
        am_json_i64s(json_object_get(bleu, "total"), t->bleu.total, AM_BLEU_MAX_ORDER) ||
        am_json_get_i64(j, "bleu_segments", &t->bleu_segments))
        return AM_ERR_PARSE;
    if (am_json_chrf_parse(chrf, &t->chrf))
        return AM_ERR_PARSE;
    /* chrF++'s own statistics when stored (several references), else
     * chrf's; every BLEU segment has them (am_totals_add) */
    const json_t *pp = json_object_get(j, "chrfpp");
    if (!pp)
        t->chrfpp = t->chrf;
    else if (am_json_chrf_parse(pp, &t->chrfpp))
        return AM_ERR_PARSE;
    t->chrfpp_segments = t->bleu_segments;
    return AM_OK;
}

json_t *am_json_config(const am_config *c)
{
    json_t *w = json_array();
    for (size_t i = 0; i < c->nwindows; i++)
        json_array_append_new(w, json_integer(c->windows[i]));
    json_t *o =
        json_pack("{sssssssssssssbsssIsosfsbsbsI}", "profile", am_config_profile_name(c->profile),
                  "source_lang", c->source_lang, "target_lang", c->target_lang, "tokenizer",
                  c->tokenizer_auto ? "auto" : am_tok_name(c->tokenizer), "case",
                  c->case_sensitive ? "sensitive" : "fold", "normalize", am_text_norm_name(c->norm),
                  "strip_tags", c->strip_tags, "stopwords", am_config_sw_name(c->stopwords), "k",
                  (json_int_t)c->k, "windows", w, "term_cost", c->term_cost, "stem_match",
                  c->stem_match, "ter_case_sensitive", c->ter_case_sensitive, "rare_threshold",
                  (json_int_t)c->rare_threshold);
    /* chrF and TER options (what runs: a zh/ja/ko session's TER defaults
     * resolved, config.h) */
    json_object_set_new(o, "ter_normalized", json_boolean(c->ter_normalized));
    json_object_set_new(o, "ter_no_punct", json_boolean(c->ter_no_punct));
    json_object_set_new(o, "ter_asian_support", json_boolean(c->ter_asian_support));
    json_object_set_new(o, "chrf_char_order", json_integer(c->chrf_char_order));
    json_object_set_new(o, "chrf_word_order", json_integer(c->chrf_word_order));
    json_object_set_new(o, "chrf_beta", json_integer(c->chrf_beta));
    json_object_set_new(o, "chrf_whitespace", json_boolean(c->chrf_whitespace));
    json_object_set_new(o, "chrf_lowercase", json_boolean(c->chrf_lowercase));
    json_object_set_new(o, "chrf_eps_smoothing", json_boolean(c->chrf_eps_smoothing));
    /* BLEU options: the tokenizer that runs (auto resolved from the target
     * language), the smoothing value only for floor / add-k, resolved */
    enum am_tok_kind bk = AM_TOK_13A;
    (void)am_config_bleu_tokenizer(c, &bk);
    json_object_set_new(o, "bleu_tokenize", json_string(am_tok_name(bk)));
    json_object_set_new(o, "bleu_lowercase", json_boolean(c->bleu_lowercase));
    json_object_set_new(o, "bleu_smooth_method", json_string(am_bleu_smooth_name(c->bleu_smooth)));
    if (c->bleu_smooth == AM_BLEU_SMOOTH_FLOOR || c->bleu_smooth == AM_BLEU_SMOOTH_ADD_K) {
        am_bleu_score_opts so;
        am_config_bleu_score_opts(c, 0, &so);
        json_object_set_new(o, "bleu_smooth_value",
                            json_real(so.smooth_value >= 0                     ? so.smooth_value
                                      : c->bleu_smooth == AM_BLEU_SMOOTH_FLOOR ? 0.1
                                                                               : 1.0));
    }
    json_object_set_new(o, "bleu_effective_order", json_boolean(c->bleu_effective_order));
    json_object_set_new(o, "bleu_max_ngram_order", json_integer(c->bleu_max_ngram_order));
    /* the version of the auto resolution above (config.h AM_DEFAULTS_*) */
    json_object_set_new(o, "defaults", json_integer(c->defaults));
    return o;
}

json_t *am_json_time(int64_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char buf[96];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return json_string(buf);
}
