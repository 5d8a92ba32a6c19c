/*
 * json_answer.c — the POST answer written without a jansson tree
 * (am_json_answer, see json.h): the same bytes as am_json_dump of the tree
 * json.c builds, members sorted by key, with json.c's number and string
 * spelling (json_int.h).
 */
#include "json.h"
#include "json_int.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the POST answer without a jansson tree ------------------------------- */

/* A member of an object being written: its key (borrowed, or kb when key
 * is NULL) and where its text ("key":value) starts in the writer's
 * buffer. */
typedef struct am_jw_m {
    const char *key;
    char kb[24];
    size_t off;
} am_jw_m;

/* The writer: each member is appended to b as it comes, key and value; an
 * object whose members did not come in key order is rewritten sorted when
 * it ends (am_jw_end), as am_json_dump sorts. The writers below emit the
 * fixed members in key order, so only objects keyed by data (system names,
 * window sizes, recall k past 9) are ever rewritten: the rewrite of every
 * object was 13 % of a rescore's instructions (callgrind, 1,000 segments). */
typedef struct am_jw_ml {
    am_jw_m m; /* first: am_jw_cmp compares these */
    size_t len;
} am_jw_ml;

typedef struct am_jw {
    am_buf b, tmp;
    am_jw_m *m; /* the open objects' members, innermost last (owned) */
    size_t n, cap;
    am_jw_ml *ml; /* scratch of am_jw_end (owned) */
    size_t cap_ml;
} am_jw;

/* An open object: its first member's index and where its '{' is. */
typedef struct am_jw_obj {
    size_t base, start;
} am_jw_obj;

static am_jw_obj am_jw_begin(am_jw *w)
{
    am_jw_obj o = {w->n, w->b.len};
    am_buf_appendc(&w->b, '{');
    return o;
}

static const char *am_jw_name(const am_jw_m *m)
{
    return m->key ? m->key : m->kb;
}

/* Starts member key (borrowed; must outlive the object; NULL: kb, copied)
 * of the innermost open object: a comma unless it is the object's first
 * member (the buffer then ends with its '{': no value ends so), the key
 * and the colon. Its value is what is appended to w->b next. */
static void am_jw_member(am_jw *w, const char *key, const char *kb)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->m = am_xrealloc(w->m, w->cap * sizeof *w->m);
    }
    if (w->b.len && w->b.data[w->b.len - 1] != '{')
        am_buf_appendc(&w->b, ',');
    am_jw_m *m = &w->m[w->n++];
    m->key = key;
    m->kb[0] = '\0';
    if (!key) /* kb: am_jw_keyn's digits, shorter than m->kb */
        memcpy(m->kb, kb, strlen(kb) + 1);
    m->off = w->b.len;
    const char *name = am_jw_name(m);
    size_t n = strlen(name), i = 0;
    while (i < n && (unsigned char)name[i] >= 0x20 && name[i] != '"' && name[i] != '\\')
        i++;
    if (i < n) { /* a key to escape (a system's name) */
        am_json_put_string(&w->b, name, n);
        am_buf_appendc(&w->b, ':');
        return;
    }
    /* "key": in one copy (put_string's calls per character were 5 % of a
     * rescore's instructions) */
    am_buf_reserve(&w->b, w->b.len + n + 3);
    char *d = w->b.data + w->b.len;
    d[0] = '"';
    memcpy(d + 1, name, n);
    d[n + 1] = '"';
    d[n + 2] = ':';
    d[n + 3] = '\0';
    w->b.len += n + 3;
}

static void am_jw_key(am_jw *w, const char *key)
{
    am_jw_member(w, key, NULL);
}

/* Starts a member whose key is a number with a prefix ("r3", "2"). */
static void am_jw_keyn(am_jw *w, const char *prefix, size_t n)
{
    char kb[24], digits[21];
    size_t d = 0, p = strlen(prefix);
    do /* no snprintf: 5 % of a rescore's instructions went to it here */
        digits[d++] = (char)('0' + n % 10);
    while ((n /= 10) > 0);
    memcpy(kb, prefix, p); /* prefix: "r" or "" */
    for (size_t i = 0; i < d; i++)
        kb[p + i] = digits[d - 1 - i];
    kb[p + d] = '\0';
    am_jw_member(w, NULL, kb);
}

static int am_jw_cmp(const void *a, const void *b)
{
    const am_jw_m *x = a, *y = b;
    int c = strcmp(am_jw_name(x), am_jw_name(y));
    return c ? c : x->off < y->off ? -1 : x->off > y->off;
}

/* Rewrites the members of object o (its last one ends the buffer) in key
 * order; of members with the same key the last one stays
 * (json_object_set). */
static void am_jw_sort(am_jw *w, am_jw_obj o)
{
    size_t k = w->n - o.base, end = w->b.len;
    am_jw_m *m = w->m + o.base;
    /* each member's text: up to the comma before the next one (write order) */
    if (k > w->cap_ml) {
        w->cap_ml = k;
        w->ml = am_xrealloc(w->ml, k * sizeof *w->ml);
    }
    for (size_t i = 0; i < k; i++) {
        w->ml[i].m = m[i];
        w->ml[i].len = (i + 1 < k ? m[i + 1].off - 1 : end) - m[i].off;
    }
    /* insertion sort: objects here have a few dozen members at most */
    for (size_t i = 1; i < k; i++) {
        am_jw_ml e = w->ml[i];
        size_t j = i;
        for (; j > 0 && am_jw_cmp(&w->ml[j - 1], &e) > 0; j--)
            w->ml[j] = w->ml[j - 1];
        w->ml[j] = e;
    }
    am_buf_reset(&w->tmp);
    for (size_t i = 0; i < k; i++) {
        if (i + 1 < k && !strcmp(am_jw_name(&w->ml[i].m), am_jw_name(&w->ml[i + 1].m)))
            continue; /* replaced by a later member of the same key */
        if (w->tmp.len)
            am_buf_appendc(&w->tmp, ',');
        am_buf_append(&w->tmp, w->b.data + w->ml[i].m.off, w->ml[i].len);
    }
    w->b.len = o.start + 1; /* after its '{' */
    w->b.data[w->b.len] = '\0';
    am_buf_append(&w->b, w->tmp.data, w->tmp.len);
}

/* Ends object o: its members are rewritten in key order unless they came
 * so (each key above the one before). */
static void am_jw_end(am_jw *w, am_jw_obj o)
{
    for (size_t i = o.base + 1; i < w->n; i++)
        if (strcmp(am_jw_name(&w->m[i - 1]), am_jw_name(&w->m[i])) >= 0) {
            am_jw_sort(w, o);
            break;
        }
    am_buf_appendc(&w->b, '}');
    w->n = o.base;
}

static void am_jw_int(am_jw *w, const char *key, int64_t v)
{
    am_jw_key(w, key);
    am_json_put_int(&w->b, (json_int_t)v);
}

/* A real or null (am_json_real). */
static void am_jw_real(am_jw *w, const char *key, double x)
{
    am_jw_key(w, key);
    am_json_put_real(&w->b, x);
}

static void am_jw_str(am_jw *w, const char *key, const char *s)
{
    am_jw_key(w, key);
    am_json_put_string(&w->b, s, strlen(s));
}

/* am_json_count */
static void am_jw_count(am_jw *w, int64_t hits, int64_t total)
{
    am_jw_obj o = am_jw_begin(w);
    am_jw_int(w, "hits", hits);
    am_jw_key(w, "score");
    if (total > 0)
        am_json_put_real(&w->b, (double)hits / (double)total);
    else
        am_buf_append(&w->b, "null", 4);
    am_jw_int(w, "total", total);
    am_jw_end(w, o);
}

/* am_json_recall's members, into the open object: in key order ("r0",
 * "r01", "r1", ...) when k is one digit */
static void am_jw_recall(am_jw *w, const am_recall_totals *r)
{
    int ordered = r->k <= 9;
    for (int k = 0; k <= r->k; k++) {
        am_jw_keyn(w, "r", (size_t)k);
        am_jw_count(w, r->r[k].hits, r->r[k].total);
        if (k == 0 && ordered) {
            am_jw_key(w, "r01");
            am_jw_count(w, r->r01.hits, r->r01.total);
        }
    }
    if (!ordered) {
        am_jw_key(w, "r01");
        am_jw_count(w, r->r01.hits, r->r01.total);
    }
}

static void am_jw_span(am_jw *w, const char *key, const am_terms_span *sp)
{
    am_jw_key(w, key);
    am_jw_obj o = am_jw_begin(w);
    am_jw_int(w, "byte_end", (int64_t)sp->byte_end);
    am_jw_int(w, "byte_start", (int64_t)sp->byte_start);
    am_jw_int(w, "token_end", (int64_t)sp->tok_end);
    am_jw_int(w, "token_start", (int64_t)sp->tok_start);
    am_jw_end(w, o);
}

/* am_json_terms_seg's instances_found */
static void am_jw_instances(am_jw *w, const am_terms_seg *ts, const am_terms_totals *tot)
{
    am_jw_key(w, "instances_found");
    am_buf_appendc(&w->b, '[');
    for (size_t i = 0; i < ts->n_inst; i++) {
        const am_terms_inst *in = &ts->inst[i];
        if (i)
            am_buf_appendc(&w->b, ',');
        am_jw_obj e = am_jw_begin(w);
        am_jw_int(w, "entry", (int64_t)in->entry);
        if (in->match != AM_TERMS_NONE)
            am_jw_span(w, "hypothesis", &in->hyp);
        am_jw_str(w, "match", am_json_match_name(in->match));
        am_jw_str(w, "origin", in->origin == AM_TERMS_GLOSSARY ? "glossary" : "annotation");
        am_jw_real(w, "partial", in->partial);
        am_jw_span(w, "reference", &in->ref);
        am_jw_real(w, "reorder", in->reorder);
        am_jw_key(w, "window_overlap");
        am_jw_obj wo = am_jw_begin(w);
        for (size_t k = 0; k < tot->n_windows; k++) {
            am_jw_keyn(w, "", tot->windows[k]);
            am_json_put_real(&w->b, in->window[k]);
        }
        am_jw_end(w, wo);
        am_jw_end(w, e);
    }
    am_buf_appendc(&w->b, ']');
}

/* am_json_terms_seg's glossary_deviations and forbidden_used */
static void am_jw_forbidden(am_jw *w, const am_terms_seg *ts)
{
    am_jw_key(w, "forbidden_used");
    am_buf_appendc(&w->b, '[');
    for (size_t i = 0; i < ts->n_forbid; i++) {
        if (i)
            am_buf_appendc(&w->b, ',');
        am_jw_obj e = am_jw_begin(w);
        am_jw_int(w, "alternative", (int64_t)ts->forbid[i].alt);
        am_jw_int(w, "entry", (int64_t)ts->forbid[i].entry);
        am_jw_span(w, "hypothesis", &ts->forbid[i].hyp);
        am_jw_end(w, e);
    }
    am_buf_appendc(&w->b, ']');
    am_jw_key(w, "glossary_deviations");
    am_buf_appendc(&w->b, '[');
    for (size_t i = 0; i < ts->n_dev; i++) {
        if (i)
            am_buf_appendc(&w->b, ',');
        am_jw_obj e = am_jw_begin(w);
        am_jw_int(w, "entry", (int64_t)ts->dev[i].entry);
        am_jw_str(w, "origin", ts->dev[i].origin == AM_TERMS_GLOSSARY ? "glossary" : "annotation");
        am_jw_end(w, e);
    }
    am_buf_appendc(&w->b, ']');
}

/* am_json_terms_totals' members into the open object, with ts (NULL:
 * none) am_json_terms_seg's lists among them, all in key order */
static void am_jw_terms(am_jw *w, const am_terms_totals *t, const am_terms_seg *ts)
{
    am_terms_scores sc;
    am_terms_totals_scores(t, &sc);
    am_jw_int(w, "deviations", (int64_t)t->deviations);
    am_jw_int(w, "exact", (int64_t)t->exact);
    am_jw_real(w, "exact_match", sc.exact);
    am_jw_real(w, "exact_or_stem_match", sc.exact_or_stem);
    am_jw_int(w, "forbidden", (int64_t)t->forbidden);
    if (ts)
        am_jw_forbidden(w, ts);
    am_jw_int(w, "instances", (int64_t)t->instances);
    if (ts)
        am_jw_instances(w, ts, t);
    am_jw_real(w, "partial_match", sc.partial);
    am_jw_real(w, "reorder_match", sc.reorder);
    am_jw_int(w, "stem", (int64_t)t->stem);
    am_jw_key(w, "window_overlap");
    am_jw_obj wo = am_jw_begin(w);
    for (size_t i = 0; i < t->n_windows; i++) {
        am_jw_keyn(w, "", t->windows[i]);
        am_jw_obj e = am_jw_begin(w);
        am_jw_int(w, "instances", (int64_t)t->win_count[i]);
        am_jw_real(w, "score", sc.window[i]);
        am_jw_end(w, e);
    }
    am_jw_end(w, wo);
}

/* A real member that jansson's json_real leaves out when not finite. */
static void am_jw_real_or_absent(am_jw *w, const char *key, double x)
{
    if (isfinite(x))
        am_jw_real(w, key, x);
}

/* am_json_segment's words */
static void am_jw_words(am_jw *w, const am_seg_result *res, const char *const *names)
{
    const am_recall_seg *rs = res->recall;
    am_jw_key(w, "words");
    am_buf_appendc(&w->b, '[');
    for (size_t i = 0; i < rs->words.n; i++) {
        if (i)
            am_buf_appendc(&w->b, ',');
        am_jw_obj e = am_jw_begin(w);
        am_jw_key(w, "counted");
        am_buf_appends(&w->b, rs->shot[i] <= rs->k ? "true" : "false");
        am_jw_key(w, "hits");
        am_jw_obj h = am_jw_begin(w);
        for (size_t k = 0; k < res->nsys; k++) {
            am_jw_key(w, names[k]);
            am_buf_appends(&w->b, rs->hit[k * rs->words.n + i] ? "true" : "false");
        }
        am_jw_end(w, h);
        am_jw_int(w, "shot", rs->shot[i]);
        am_jw_str(w, "word", rs->words.v[i]);
        am_jw_end(w, e);
    }
    am_buf_appendc(&w->b, ']');
}

/* am_json_segment */
static void am_jw_segment(am_jw *w, const am_seg_result *res, const char *const *names)
{
    am_jw_obj o = am_jw_begin(w);
    am_jw_key(w, "systems");
    am_jw_obj sy = am_jw_begin(w);
    for (size_t k = 0; k < res->nsys; k++) {
        const am_sys_seg *r = &res->sys[k];
        am_jw_key(w, names[k]);
        am_jw_obj so = am_jw_begin(w);
        am_jw_real(w, "bleu", r->sent_bleu);
        am_jw_real(w, "chrf", r->sent_chrf);
        am_jw_real(w, "chrfpp", r->sent_chrfpp);
        am_jw_real(w, "one_minus_term", 1.0 - r->sent_term);
        am_jw_recall(w, &r->recall);
        am_jw_real(w, "ter", 100.0 * r->sent_ter);
        am_jw_real_or_absent(w, "ter_edits", r->ter_edits);
        am_jw_int(w, "ter_ref_len", (int64_t)r->ter_ref_len);
        am_jw_real_or_absent(w, "term_edits", r->term_edits);
        if (r->terms) {
            am_jw_key(w, "terms");
            am_jw_obj to = am_jw_begin(w);
            am_jw_terms(w, &r->terms_totals, r->terms);
            am_jw_end(w, to);
        }
        am_jw_end(w, so);
    }
    am_jw_end(w, sy);
    am_jw_words(w, res, names);
    am_jw_end(w, o);
}

/* am_json_totals */
static void am_jw_totals(am_jw *w, const am_totals *t)
{
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    am_jw_obj o = am_jw_begin(w);
    am_jw_real(w, "bleu", sc.bleu);
    am_jw_real(w, "chrf", sc.chrf);
    am_jw_real(w, "chrfpp", sc.chrfpp);
    am_jw_real(w, "one_minus_term", sc.one_minus_term);
    am_jw_recall(w, &t->recall);
    am_jw_int(w, "segments", t->segments);
    am_jw_real(w, "ter", 100.0 * sc.ter);
    am_jw_key(w, "terms");
    am_jw_obj to = am_jw_begin(w);
    am_jw_terms(w, &t->terms, NULL);
    am_jw_end(w, to);
    am_jw_end(w, o);
}

char *am_json_answer(const am_seg_result *res, const char *const *names, const am_totals *tot,
                     const char *session, const char *id, int64_t seq, const char *signature,
                     int64_t created_ms, int64_t glossary_version)
{
    am_jw w;
    memset(&w, 0, sizeof w);
    am_buf_init(&w.b);
    am_buf_init(&w.tmp);
    am_buf_reserve(&w.b, 4096); /* an answer is ~2 KB: no growing step by step */
    am_buf_reserve(&w.tmp, 4096);
    am_jw_obj o = am_jw_begin(&w); /* members in key order */
    am_jw_int(&w, "created_ms", created_ms);
    am_jw_int(&w, "glossary_version", glossary_version);
    am_jw_str(&w, "id", id);
    am_jw_key(&w, "scores");
    am_jw_segment(&w, res, names);
    am_jw_int(&w, "seq", seq);
    am_jw_str(&w, "session", session);
    am_jw_str(&w, "signature", signature);
    am_jw_key(&w, "totals");
    am_jw_obj to = am_jw_begin(&w);
    for (size_t k = 0; k < res->nsys; k++) {
        am_jw_key(&w, names[k]);
        am_jw_totals(&w, &tot[k]);
    }
    am_jw_end(&w, to);
    am_jw_end(&w, o);
    am_buf_cleanup(&w.tmp);
    free(w.m);
    free(w.ml);
    return am_buf_detach(&w.b);
}
