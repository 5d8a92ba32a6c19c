/*
 * bleu.c — sacreBLEU 2.6.0 BLEU sufficient statistics and score.
 *
 * N-gram counting (ngram.h): reference tokens are interned to 32-bit ids
 * and the clipped n-gram matches (Counter intersection) come from
 * am_ngram_add_ref / am_ngram_match (AM_NGRAM_WORDS). A reused workspace
 * allocates nothing once grown.
 *
 * Several references need each hypothesis n-gram clipped by its largest
 * count in any one reference, which the trie's summed counts cannot give:
 * there every word of every side is interned to one id space, each side's
 * n-grams are listed as id tuples and sorted, and the hypothesis's
 * distinct n-grams are merged against each reference's sorted list
 * (multi_stats). One reference keeps the trie path.
 */
#include "bleu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h" /* am_text_py_lower: Python str.lower() */
#include "ngram.h"

/* An n-gram of word ids (unused slots zero), for the several-reference
 * path. */
typedef struct bleu_gram {
    uint32_t w[AM_BLEU_MAX_ORDER];
    uint32_t n; /* order, 1..AM_BLEU_MAX_ORDER */
} bleu_gram;

/* Longest accepted segment, so that ids and counts fit in 32 bits. */
#define MAX_SEG_BYTES ((size_t)1 << 26)

struct am_bleu_ws {
    am_ngram_tab *tab;
    am_ngram_span *hs, *rs;
    size_t hs_cap, rs_cap;
    uint32_t *hid, *rid; /* token ids (AM_NGRAM_NONE: hypothesis token not in the reference) */
    size_t hid_cap, rid_cap;
    am_buf low, strip, th, tr;
    am_tok_ctx tok; /* borrowed models (am_bleu_ws_set_tok_ctx) */
    /* several references: tokenized refs, their word spans and ids, n-grams */
    am_buf *trs;
    size_t trs_cap;
    am_ngram_span *all;
    size_t all_cap;
    uint32_t *ids;
    size_t ids_cap;
    bleu_gram *hg, *rg;
    size_t hg_cap, rg_cap;
    int64_t *maxc;
    size_t maxc_cap;
};

/* Length of s[0..len) without trailing str.isspace() code points (rstrip). */
static size_t rstrip_len(const char *s, size_t len)
{
    if (len == 0 || ((unsigned char)s[len - 1] < 0x80 && !am_py_isspace((unsigned char)s[len - 1])))
        return len;
    size_t end = 0, pos = 0, start;
    while (am_ngram_next_token(s, len, &pos, &start))
        end = pos;
    return end;
}

/* ---- public: setup ---------------------------------------------------------------- */

int am_bleu_ws_new(am_bleu_ws **out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_bleu_ws *ws = am_xcalloc(1, sizeof *ws);
    am_ngram_new(&ws->tab);
    am_buf_init(&ws->low);
    am_buf_init(&ws->strip);
    am_buf_init(&ws->th);
    am_buf_init(&ws->tr);
    *out = ws;
    return AM_OK;
}

void am_bleu_ws_free(am_bleu_ws *ws)
{
    if (!ws)
        return;
    am_ngram_free(ws->tab);
    free(ws->hs);
    free(ws->rs);
    free(ws->hid);
    free(ws->rid);
    am_buf_cleanup(&ws->low);
    am_buf_cleanup(&ws->strip);
    am_buf_cleanup(&ws->th);
    am_buf_cleanup(&ws->tr);
    for (size_t i = 0; i < ws->trs_cap; i++)
        am_buf_cleanup(&ws->trs[i]);
    free(ws->trs);
    free(ws->all);
    free(ws->ids);
    free(ws->hg);
    free(ws->rg);
    free(ws->maxc);
    free(ws);
}

void am_bleu_ws_set_tok_ctx(am_bleu_ws *ws, const am_tok_ctx *ctx)
{
    if (!ws)
        return;
    if (ctx)
        ws->tok = *ctx;
    else
        memset(&ws->tok, 0, sizeof ws->tok);
}

void am_bleu_opts_init(am_bleu_opts *o)
{
    o->tokenizer = AM_TOK_13A;
    o->lowercase = 0;
}

void am_bleu_score_opts_init(am_bleu_score_opts *o, int sentence)
{
    o->smooth = AM_BLEU_SMOOTH_EXP;
    o->smooth_value = -1;
    o->effective_order = sentence ? 1 : 0;
    o->max_order = AM_BLEU_MAX_ORDER;
}

void am_bleu_stats_init(am_bleu_stats *s)
{
    memset(s, 0, sizeof *s);
}

/* ---- statistics --------------------------------------------------------------------- */

/* BLEU._preprocess_segment: optional str.lower(), str.rstrip(), tokenizer.
 * The result goes to *tok (its string stays valid until tok changes). */
static int preprocess(am_bleu_ws *ws, const am_bleu_opts *o, const char *s, am_buf *tok)
{
    if (o->lowercase) {
        am_text_py_lower(s, &ws->low);
        s = am_buf_str(&ws->low);
    }
    size_t len = strlen(s), keep = rstrip_len(s, len);
    if (keep < len) {
        am_buf_reset(&ws->strip);
        am_buf_append(&ws->strip, s, keep);
        s = am_buf_str(&ws->strip);
    }
    return am_tok_tokenize_ctx(o->tokenizer, &ws->tok, s, tok);
}

static void segment_stats(am_bleu_ws *ws, const char *th, const char *tr, am_bleu_stats *st)
{
    size_t hlen = strlen(th), rlen = strlen(tr);
    size_t nh = am_ngram_split_py(th, hlen, &ws->hs, &ws->hs_cap);
    size_t nr = am_ngram_split_py(tr, rlen, &ws->rs, &ws->rs_cap);

    am_ngram_begin(ws->tab, nr * AM_BLEU_MAX_ORDER, nr);
    ws->rid = am_ngram_grow(ws->rid, &ws->rid_cap, nr + 1, sizeof *ws->rid);
    ws->hid = am_ngram_grow(ws->hid, &ws->hid_cap, nh + 1, sizeof *ws->hid);
    am_ngram_intern(ws->tab, ws->rs, nr, ws->rid);
    am_ngram_lookup(ws->tab, ws->hs, nh, ws->hid);
    am_ngram_add_ref(ws->tab, AM_NGRAM_WORDS, ws->rid, nr, AM_BLEU_MAX_ORDER);
    int64_t correct[AM_BLEU_MAX_ORDER] = {0};
    am_ngram_match(ws->tab, AM_NGRAM_WORDS, ws->hid, nh, AM_BLEU_MAX_ORDER, correct);
    st->sys_len = (int64_t)nh;
    st->ref_len = (int64_t)nr;
    for (size_t n = 1; n <= AM_BLEU_MAX_ORDER; n++) {
        st->correct[n - 1] = correct[n - 1];
        st->total[n - 1] = nh >= n ? (int64_t)(nh - n + 1) : 0;
    }
}

/* ---- several references ------------------------------------------------------------ */

static int gram_cmp(const void *a, const void *b)
{
    const bleu_gram *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    for (int i = 0; i < AM_BLEU_MAX_ORDER; i++)
        if (x->w[i] != y->w[i])
            return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

/* Lists every n-gram of orders 1..AM_BLEU_MAX_ORDER of ids[0..n) into
 * (*arr)[0..return value), sorted. */
static size_t list_grams(const uint32_t *ids, size_t n, bleu_gram **arr, size_t *cap)
{
    size_t total = 0;
    for (size_t k = 1; k <= AM_BLEU_MAX_ORDER; k++)
        total += n >= k ? n - k + 1 : 0;
    *arr = am_ngram_grow(*arr, cap, total + 1, sizeof **arr);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 1; k <= AM_BLEU_MAX_ORDER && i + k <= n; k++) {
            bleu_gram *g = &(*arr)[m++];
            memset(g, 0, sizeof *g);
            g->n = (uint32_t)k;
            memcpy(g->w, ids + i, k * sizeof *ids);
        }
    qsort(*arr, m, sizeof **arr, gram_cmp);
    return m;
}

/* sacreBLEU's _get_closest_ref_len: the reference length closest to
 * hyp_len, the shorter one on a tie. */
static int64_t closest_ref_len(int64_t hyp_len, const int64_t *lens, size_t n)
{
    int64_t best_diff = -1, best = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t d = hyp_len > lens[i] ? hyp_len - lens[i] : lens[i] - hyp_len;
        if (best_diff == -1 || d < best_diff) {
            best_diff = d;
            best = lens[i];
        } else if (d == best_diff && lens[i] < best) {
            best = lens[i];
        }
    }
    return best;
}

/* Statistics of the tokenized hypothesis th against the tokenized
 * references trs[0..nrefs) (nrefs >= 2) into *st. */
static void multi_stats(am_bleu_ws *ws, const char *th, size_t nrefs, am_bleu_stats *st)
{
    size_t nh = am_ngram_split_py(th, strlen(th), &ws->hs, &ws->hs_cap);
    size_t nall = nh;
    int64_t lens[AM_BLEU_MAX_REFS];
    /* every side's word spans, one after the other: hyp, ref 0, ref 1, ... */
    ws->all = am_ngram_grow(ws->all, &ws->all_cap, nh + 1, sizeof *ws->all);
    memcpy(ws->all, ws->hs, nh * sizeof *ws->hs);
    for (size_t r = 0; r < nrefs; r++) {
        const char *t = am_buf_str(&ws->trs[r]);
        size_t nr = am_ngram_split_py(t, strlen(t), &ws->rs, &ws->rs_cap);
        lens[r] = (int64_t)nr;
        if (nall + nr + 1 > ws->all_cap) {
            size_t cap = 2 * (nall + nr + 1);
            ws->all = am_xrealloc(ws->all, cap * sizeof *ws->all);
            ws->all_cap = cap;
        }
        memcpy(ws->all + nall, ws->rs, nr * sizeof *ws->rs);
        nall += nr;
    }
    ws->ids = am_ngram_grow(ws->ids, &ws->ids_cap, nall + 1, sizeof *ws->ids);
    am_ngram_begin(ws->tab, 1, nall);
    am_ngram_intern(ws->tab, ws->all, nall, ws->ids);

    /* the hypothesis's distinct n-grams (runs in the sorted list) */
    size_t mh = list_grams(ws->ids, nh, &ws->hg, &ws->hg_cap);
    ws->maxc = am_ngram_grow(ws->maxc, &ws->maxc_cap, mh + 1, sizeof *ws->maxc);
    memset(ws->maxc, 0, (mh + 1) * sizeof *ws->maxc);
    size_t off = nh;
    for (size_t r = 0; r < nrefs; r++) {
        size_t mr = list_grams(ws->ids + off, (size_t)lens[r], &ws->rg, &ws->rg_cap);
        off += (size_t)lens[r];
        /* merge: for each distinct hypothesis n-gram (first of its run),
         * its count in this reference */
        size_t j = 0;
        for (size_t i = 0; i < mh;) {
            size_t e = i + 1;
            while (e < mh && gram_cmp(&ws->hg[i], &ws->hg[e]) == 0)
                e++;
            while (j < mr && gram_cmp(&ws->rg[j], &ws->hg[i]) < 0)
                j++;
            int64_t c = 0;
            while (j < mr && gram_cmp(&ws->rg[j], &ws->hg[i]) == 0) {
                c++;
                j++;
            }
            if (c > ws->maxc[i])
                ws->maxc[i] = c;
            i = e;
        }
    }
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < mh;) {
        size_t e = i + 1;
        while (e < mh && gram_cmp(&ws->hg[i], &ws->hg[e]) == 0)
            e++;
        int64_t hc = (int64_t)(e - i);
        st->correct[ws->hg[i].n - 1] += hc < ws->maxc[i] ? hc : ws->maxc[i];
        i = e;
    }
    st->sys_len = (int64_t)nh;
    st->ref_len = closest_ref_len((int64_t)nh, lens, nrefs);
    for (size_t n = 1; n <= AM_BLEU_MAX_ORDER; n++)
        st->total[n - 1] = nh >= n ? (int64_t)(nh - n + 1) : 0;
}

/* Room for nrefs tokenized references in ws->trs. */
static void reserve_refs(am_bleu_ws *ws, size_t nrefs)
{
    if (nrefs <= ws->trs_cap)
        return;
    ws->trs = am_xrealloc(ws->trs, nrefs * sizeof *ws->trs);
    for (size_t i = ws->trs_cap; i < nrefs; i++)
        am_buf_init(&ws->trs[i]);
    ws->trs_cap = nrefs;
}

/* 0 when the arguments of am_bleu_stats_add are acceptable. */
static int check_args(const am_bleu_stats *stats, const am_bleu_opts *opts, const char *hyp,
                      const char *const *refs, size_t nrefs)
{
    if (!stats || !hyp || !refs || nrefs == 0 || nrefs > AM_BLEU_MAX_REFS ||
        (unsigned)opts->tokenizer >= (unsigned)AM_TOK_KIND_COUNT)
        return AM_ERR_INVALID;
    for (size_t r = 0; r < nrefs; r++)
        if (!refs[r])
            return AM_ERR_INVALID;
    if (strlen(hyp) > MAX_SEG_BYTES)
        return AM_ERR_RANGE;
    for (size_t r = 0; r < nrefs; r++)
        if (strlen(refs[r]) > MAX_SEG_BYTES)
            return AM_ERR_RANGE;
    return AM_OK;
}

/* Preprocesses hyp and every reference, then counts (ws not NULL). */
static int stats_in(am_bleu_ws *ws, const am_bleu_opts *opts, const char *hyp,
                    const char *const *refs, size_t nrefs, am_bleu_stats *seg)
{
    int rc = preprocess(ws, opts, hyp, &ws->th);
    /* Tokenizers may grow the text (13a pads punctuation). */
    if (rc == AM_OK && ws->th.len > 8 * MAX_SEG_BYTES)
        rc = AM_ERR_RANGE;
    if (rc != AM_OK)
        return rc;
    if (nrefs == 1) {
        rc = preprocess(ws, opts, refs[0], &ws->tr);
        if (rc == AM_OK && ws->tr.len > 8 * MAX_SEG_BYTES)
            rc = AM_ERR_RANGE;
        if (rc == AM_OK)
            segment_stats(ws, am_buf_str(&ws->th), am_buf_str(&ws->tr), seg);
        return rc;
    }
    reserve_refs(ws, nrefs);
    for (size_t r = 0; r < nrefs; r++) {
        rc = preprocess(ws, opts, refs[r], &ws->trs[r]);
        if (rc == AM_OK && ws->trs[r].len > 8 * MAX_SEG_BYTES)
            rc = AM_ERR_RANGE;
        if (rc != AM_OK)
            return rc;
    }
    multi_stats(ws, am_buf_str(&ws->th), nrefs, seg);
    return AM_OK;
}

int am_bleu_stats_add(am_bleu_stats *stats, am_bleu_ws *ws, const am_bleu_opts *opts,
                      const char *hyp, const char *const *refs, size_t nrefs)
{
    am_bleu_opts def;
    if (!opts) {
        am_bleu_opts_init(&def);
        opts = &def;
    }
    int rc = check_args(stats, opts, hyp, refs, nrefs);
    if (rc != AM_OK)
        return rc;
    am_bleu_ws *tmp = NULL;
    if (!ws) {
        am_bleu_ws_new(&tmp);
        ws = tmp;
    }
    am_bleu_stats seg;
    rc = stats_in(ws, opts, hyp, refs, nrefs, &seg);
    am_bleu_ws_free(tmp);
    if (rc != AM_OK)
        return rc;
    return am_bleu_merge(stats, &seg);
}

int am_bleu_merge(am_bleu_stats *dst, const am_bleu_stats *src)
{
    if (!dst || !src)
        return AM_ERR_INVALID;
    am_bleu_stats t = *dst;
    if (am_ngram_add_i64(&t.sys_len, src->sys_len) || am_ngram_add_i64(&t.ref_len, src->ref_len))
        return AM_ERR_RANGE;
    for (int n = 0; n < AM_BLEU_MAX_ORDER; n++)
        if (am_ngram_add_i64(&t.correct[n], src->correct[n]) ||
            am_ngram_add_i64(&t.total[n], src->total[n]))
            return AM_ERR_RANGE;
    *dst = t;
    return AM_OK;
}

/* ---- score ---------------------------------------------------------------------------- */

/* sacrebleu.utils.my_log */
static double my_log(double x)
{
    return x == 0.0 ? -9999999999.0 : log(x);
}

int am_bleu_compute(const am_bleu_stats *stats, const am_bleu_score_opts *opts, am_bleu_result *out)
{
    if (!stats || !out)
        return AM_ERR_INVALID;
    am_bleu_score_opts def;
    if (!opts) {
        am_bleu_score_opts_init(&def, 0);
        opts = &def;
    }
    int max_order = opts->max_order;
    if (max_order < 1 || max_order > AM_BLEU_MAX_ORDER ||
        (unsigned)opts->smooth > (unsigned)AM_BLEU_SMOOTH_EXP || isnan(opts->smooth_value))
        return AM_ERR_INVALID;
    double smooth_value = opts->smooth_value;
    if (smooth_value < 0)
        smooth_value = opts->smooth == AM_BLEU_SMOOTH_FLOOR ? 0.1 : 1.0;

    /* BLEU.compute_bleu, operation for operation. */
    int64_t sys_len = stats->sys_len, ref_len = stats->ref_len;
    double bp;
    if (sys_len < ref_len)
        bp = sys_len > 0 ? exp(1 - (double)ref_len / (double)sys_len) : 0.0;
    else
        bp = 1.0;
    memset(out, 0, sizeof *out);
    out->bp = bp;
    double *precisions = out->precisions;

    int any = 0;
    for (int n = 0; n < max_order; n++)
        if (stats->correct[n] != 0)
            any = 1;
    if (!any) {
        out->score = 0.0;
        return AM_OK;
    }

    double smooth_mteval = 1.0;
    int eff_order = max_order;
    for (int n = 1; n <= max_order; n++) {
        double correct = (double)stats->correct[n - 1];
        double total = (double)stats->total[n - 1];
        if (opts->smooth == AM_BLEU_SMOOTH_ADD_K && n > 1) {
            correct += smooth_value;
            total += smooth_value;
        }
        if (total == 0)
            break;
        if (opts->effective_order)
            eff_order = n;
        if (correct == 0) {
            if (opts->smooth == AM_BLEU_SMOOTH_EXP) {
                smooth_mteval *= 2;
                precisions[n - 1] = 100. / (smooth_mteval * total);
            } else if (opts->smooth == AM_BLEU_SMOOTH_FLOOR) {
                precisions[n - 1] = 100. * smooth_value / total;
            }
        } else {
            precisions[n - 1] = 100. * correct / total;
        }
    }
    /* sum() of the logs: left to right from 0, as CPython < 3.12 does. */
    double sum = 0.0;
    for (int n = 0; n < eff_order; n++)
        sum += my_log(precisions[n]);
    out->score = bp * exp(sum / eff_order);
    return AM_OK;
}

/* ---- names and signature ------------------------------------------------------------- */

static const char *const smooth_names[] = {"none", "floor", "add-k", "exp"};

int am_bleu_smooth_parse(const char *name, enum am_bleu_smooth *out)
{
    for (size_t i = 0; name && i < sizeof smooth_names / sizeof smooth_names[0]; i++)
        if (!strcmp(name, smooth_names[i])) {
            *out = (enum am_bleu_smooth)i;
            return AM_OK;
        }
    return AM_ERR_INVALID;
}

const char *am_bleu_smooth_name(enum am_bleu_smooth m)
{
    return (unsigned)m <= AM_BLEU_SMOOTH_EXP ? smooth_names[m] : "?";
}

void am_bleu_signature(const am_bleu_opts *opts, const am_bleu_score_opts *so, size_t nrefs,
                       const char *tok_sig, am_buf *out)
{
    if (nrefs)
        am_buf_printf(out, "nrefs:%zu", nrefs);
    else
        am_buf_appends(out, "nrefs:var");
    am_buf_printf(out, "|case:%s|eff:%s|tok:%s|smooth:%s", opts->lowercase ? "lc" : "mixed",
                  so->effective_order ? "yes" : "no",
                  tok_sig ? tok_sig : am_tok_name(opts->tokenizer),
                  am_bleu_smooth_name(so->smooth));
    /* BLEUSignature: floor and add-k carry their value, f"[{v:.2f}]" */
    if (so->smooth == AM_BLEU_SMOOTH_FLOOR || so->smooth == AM_BLEU_SMOOTH_ADD_K) {
        double v = so->smooth_value;
        if (v < 0)
            v = so->smooth == AM_BLEU_SMOOTH_FLOOR ? 0.1 : 1.0;
        am_buf_printf(out, "[%.2f]", v);
    }
    if (so->max_order != AM_BLEU_MAX_ORDER)
        am_buf_printf(out, "|ngram:%d", so->max_order);
    am_buf_appends(out, "|version:2.6.0");
}

int am_bleu_score(const am_bleu_stats *stats, double *out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_bleu_result r;
    int rc = am_bleu_compute(stats, NULL, &r);
    if (rc == AM_OK)
        *out = r.score;
    return rc;
}

int am_bleu_sentence_score(const am_bleu_stats *seg, double *out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_bleu_score_opts o;
    am_bleu_score_opts_init(&o, 1);
    am_bleu_result r;
    int rc = am_bleu_compute(seg, &o, &r);
    if (rc == AM_OK)
        *out = r.score;
    return rc;
}
