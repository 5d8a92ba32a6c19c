/*
 * chrf.c — sacreBLEU 2.6.0 chrF / chrF++ sufficient statistics and score.
 *
 * N-gram counting (ngram.h): character n-grams are keyed on code points
 * and word n-grams on interned word ids, in one table; the clipped matches
 * (Counter intersection) come from am_ngram_add_ref / am_ngram_match. A
 * reused workspace allocates nothing once it has grown to the segment size.
 */
#include "chrf.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "ngram.h"
#include "text.h"

/* Longest accepted segment: at most 10 n-grams per byte keeps ids < 2^30. */
#define MAX_SEG_BYTES ((size_t)1 << 26)

struct am_chrf_ws {
    am_ngram_tab *tab;
    uint32_t *hcp, *rcp; /* code points */
    size_t hcp_cap, rcp_cap;
    am_ngram_span *hw, *rw, *tok; /* words; str.split() tokens (scratch) */
    size_t hw_cap, rw_cap, tok_cap;
    uint32_t *hid, *rid; /* word ids (AM_NGRAM_NONE: hypothesis word not in the reference) */
    size_t hid_cap, rid_cap;
    am_buf lh, lr; /* lowercased hypothesis / reference */
};

/* ---- workspace ------------------------------------------------------------- */

int am_chrf_ws_new(am_chrf_ws **out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_chrf_ws *ws = am_xcalloc(1, sizeof *ws);
    am_ngram_new(&ws->tab);
    am_buf_init(&ws->lh);
    am_buf_init(&ws->lr);
    *out = ws;
    return AM_OK;
}

void am_chrf_ws_free(am_chrf_ws *ws)
{
    if (!ws)
        return;
    am_ngram_free(ws->tab);
    free(ws->hcp);
    free(ws->rcp);
    free(ws->hw);
    free(ws->rw);
    free(ws->tok);
    free(ws->hid);
    free(ws->rid);
    am_buf_cleanup(&ws->lh);
    am_buf_cleanup(&ws->lr);
    free(ws);
}

void am_chrf_opts_init(am_chrf_opts *o)
{
    o->lowercase = 0;
    o->whitespace = 0;
}

void am_chrf_score_opts_init(am_chrf_score_opts *o, int word_order)
{
    o->char_order = 6;
    o->word_order = word_order;
    o->beta = 2;
    o->eps_smoothing = 0;
}

void am_chrf_stats_init(am_chrf_stats *s)
{
    memset(s, 0, sizeof *s);
}

/* ---- statistics ------------------------------------------------------------- */

/* str.isspace() for an ASCII byte. */
static int ascii_space(unsigned char c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

/* Decodes s[0..len) into code points (dropping Python whitespace unless
 * keep_ws); returns the count; the array grows as needed. */
static size_t decode_chars(const char *s, size_t len, int keep_ws, uint32_t **arr, size_t *cap)
{
    *arr = am_ngram_grow(*arr, cap, len + 1, sizeof **arr);
    uint32_t *v = *arr;
    size_t n = 0, i = 0;
    while (i < len) {
        int32_t c;
        unsigned char u = (unsigned char)s[i];
        if (u < 0x80) {
            i++;
            if (keep_ws || !ascii_space(u))
                v[n++] = u;
            continue;
        } else {
            i += am_utf8_decode(s + i, len - i, &c);
        }
        if (keep_ws || !am_py_isspace(c))
            v[n++] = (uint32_t)c;
    }
    return n;
}

static int is_ascii_punct(unsigned char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* chrF++ words: str.split() tokens (into *tok, scratch) with one leading
 * or trailing ASCII punctuation character split off, into *arr
 * (CHRF._remove_punctuation). Both arrays grow as needed. */
static size_t split_words(const char *s, size_t len, am_ngram_span **tok, size_t *tok_cap,
                          am_ngram_span **arr, size_t *cap)
{
    size_t nt = am_ngram_split_py(s, len, tok, tok_cap);
    /* At most 2 words per token and at most (len+1)/2 tokens. */
    *arr = am_ngram_grow(*arr, cap, len + 2, sizeof **arr);
    const am_ngram_span *t = *tok;
    am_ngram_span *v = *arr;
    size_t n = 0;
    for (size_t i = 0; i < nt; i++) {
        const char *p = t[i].p;
        size_t w = t[i].len;
        int32_t c;
        size_t first =
            (unsigned char)p[0] < 0x80 ? 1 : am_utf8_decode(p, len - (size_t)(p - s), &c);
        if (first == w) { /* a token of one code point stays whole */
            v[n++] = (am_ngram_span){p, w};
        } else if (is_ascii_punct((unsigned char)p[w - 1])) {
            v[n++] = (am_ngram_span){p, w - 1};
            v[n++] = (am_ngram_span){p + w - 1, 1};
        } else if (is_ascii_punct((unsigned char)p[0])) {
            v[n++] = (am_ngram_span){p, 1};
            v[n++] = (am_ngram_span){p + 1, w - 1};
        } else {
            v[n++] = (am_ngram_span){p, w};
        }
    }
    assert(n <= len + 2);
    return n;
}

static int64_t count_ngrams(size_t len, int n)
{
    return len >= (size_t)n ? (int64_t)(len - (size_t)n + 1) : 0;
}

static void segment_stats(am_chrf_ws *ws, const am_chrf_opts *o, const char *hyp, const char *ref,
                          am_chrf_stats *st)
{
    if (o->lowercase) {
        am_text_py_lower(hyp, &ws->lh);
        am_text_py_lower(ref, &ws->lr);
        hyp = am_buf_str(&ws->lh);
        ref = am_buf_str(&ws->lr);
    }
    size_t hlen = strlen(hyp), rlen = strlen(ref);
    size_t nh = decode_chars(hyp, hlen, o->whitespace, &ws->hcp, &ws->hcp_cap);
    size_t nr = decode_chars(ref, rlen, o->whitespace, &ws->rcp, &ws->rcp_cap);
    size_t nhw = split_words(hyp, hlen, &ws->tok, &ws->tok_cap, &ws->hw, &ws->hw_cap);
    size_t nrw = split_words(ref, rlen, &ws->tok, &ws->tok_cap, &ws->rw, &ws->rw_cap);

    am_ngram_begin(ws->tab, nr * AM_CHRF_MAX_CHAR_ORDER + nrw * AM_CHRF_MAX_WORD_ORDER, nrw);

    /* Character n-grams. */
    am_ngram_add_ref(ws->tab, AM_NGRAM_CHARS, ws->rcp, nr, AM_CHRF_MAX_CHAR_ORDER);
    int64_t cmatch[AM_CHRF_MAX_CHAR_ORDER] = {0};
    am_ngram_match(ws->tab, AM_NGRAM_CHARS, ws->hcp, nh, AM_CHRF_MAX_CHAR_ORDER, cmatch);

    /* Word n-grams. */
    ws->rid = am_ngram_grow(ws->rid, &ws->rid_cap, nrw + 1, sizeof *ws->rid);
    ws->hid = am_ngram_grow(ws->hid, &ws->hid_cap, nhw + 1, sizeof *ws->hid);
    am_ngram_intern(ws->tab, ws->rw, nrw, ws->rid);
    am_ngram_lookup(ws->tab, ws->hw, nhw, ws->hid);
    am_ngram_add_ref(ws->tab, AM_NGRAM_WORDS, ws->rid, nrw, AM_CHRF_MAX_WORD_ORDER);
    int64_t wmatch[AM_CHRF_MAX_WORD_ORDER] = {0};
    am_ngram_match(ws->tab, AM_NGRAM_WORDS, ws->hid, nhw, AM_CHRF_MAX_WORD_ORDER, wmatch);

    for (int n = 1; n <= AM_CHRF_MAX_CHAR_ORDER; n++) {
        int64_t r = count_ngrams(nr, n);
        st->ch[n - 1][0] = r > 0 ? count_ngrams(nh, n) : 0;
        st->ch[n - 1][1] = r;
        st->ch[n - 1][2] = cmatch[n - 1];
    }
    for (int n = 1; n <= AM_CHRF_MAX_WORD_ORDER; n++) {
        int64_t r = count_ngrams(nrw, n);
        st->wd[n - 1][0] = r > 0 ? count_ngrams(nhw, n) : 0;
        st->wd[n - 1][1] = r;
        st->wd[n - 1][2] = wmatch[n - 1];
    }
}

/* The score options valid for am_chrf_score (0) or not (AM_ERR_INVALID). */
static int check_score_opts(const am_chrf_score_opts *o)
{
    int co = o->char_order, wo = o->word_order;
    if (co < 0 || co > AM_CHRF_MAX_CHAR_ORDER || wo < 0 || wo > AM_CHRF_MAX_WORD_ORDER ||
        co + wo == 0 || o->beta < 0 || o->beta > AM_CHRF_MAX_BETA)
        return AM_ERR_INVALID;
    return AM_OK;
}

int am_chrf_stats_add(am_chrf_stats *stats, am_chrf_ws *ws, const am_chrf_opts *opts,
                      const am_chrf_score_opts *sel, const char *hyp, const char *const *refs,
                      size_t nrefs)
{
    if (!stats || !hyp || !refs || nrefs == 0)
        return AM_ERR_INVALID;
    am_chrf_opts def;
    if (!opts) {
        am_chrf_opts_init(&def);
        opts = &def;
    }
    am_chrf_score_opts sdef;
    if (!sel) {
        am_chrf_score_opts_init(&sdef, 0);
        sel = &sdef;
    }
    if (check_score_opts(sel) != AM_OK)
        return AM_ERR_INVALID;
    /* Ids and counts are 32-bit and trie keys need ids < 2^31. */
    if (strlen(hyp) > MAX_SEG_BYTES)
        return AM_ERR_RANGE;
    for (size_t k = 0; k < nrefs; k++) {
        if (!refs[k])
            return AM_ERR_INVALID;
        if (strlen(refs[k]) > MAX_SEG_BYTES)
            return AM_ERR_RANGE;
    }
    am_chrf_ws *tmp = NULL;
    if (!ws) {
        am_chrf_ws_new(&tmp);
        ws = tmp;
    }
    /* sacreBLEU: the first reference whose F score is strictly above every
     * earlier one (best_f_score starts at -1, so the first always counts) */
    am_chrf_stats best, seg;
    double best_f = -1.0;
    for (size_t k = 0; k < nrefs; k++) {
        segment_stats(ws, opts, hyp, refs[k], &seg);
        double f = 0.0;
        if (nrefs > 1)
            am_chrf_score(&seg, sel, &f);
        if (f > best_f) {
            best_f = f;
            best = seg;
        }
    }
    am_chrf_ws_free(tmp);
    return am_chrf_merge(stats, &best);
}

int am_chrf_merge(am_chrf_stats *dst, const am_chrf_stats *src)
{
    if (!dst || !src)
        return AM_ERR_INVALID;
    am_chrf_stats t = *dst;
    for (int n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        for (int k = 0; k < 3; k++)
            if (am_ngram_add_i64(&t.ch[n][k], src->ch[n][k]))
                return AM_ERR_RANGE;
    for (int n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        for (int k = 0; k < 3; k++)
            if (am_ngram_add_i64(&t.wd[n][k], src->wd[n][k]))
                return AM_ERR_RANGE;
    *dst = t;
    return AM_OK;
}

/* ---- score ---------------------------------------------------------------------- */

int am_chrf_score(const am_chrf_stats *stats, const am_chrf_score_opts *opts, double *out)
{
    if (!stats || !out)
        return AM_ERR_INVALID;
    am_chrf_score_opts def;
    if (!opts) {
        am_chrf_score_opts_init(&def, 0);
        opts = &def;
    }
    if (check_score_opts(opts) != AM_OK)
        return AM_ERR_INVALID;
    int co = opts->char_order, wo = opts->word_order;

    /* CHRF._compute_f_score, operation for operation. */
    const double eps = 1e-16;
    const double factor = (double)(opts->beta * opts->beta);
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (int i = 0; i < co + wo; i++) {
        const int64_t *t = i < co ? stats->ch[i] : stats->wd[i - co];
        int64_t n_hyp = t[0], n_ref = t[1], n_match = t[2];
        double prec = n_hyp > 0 ? (double)n_match / (double)n_hyp : eps;
        double rec = n_ref > 0 ? (double)n_match / (double)n_ref : eps;
        double denom = factor * prec + rec;
        score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective_order++;
        }
    }
    if (opts->eps_smoothing) {
        *out = 100 * score / (co + wo);
        return AM_OK;
    }
    if (effective_order == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= effective_order;
        avg_rec /= effective_order;
    }
    if (avg_prec + avg_rec != 0) {
        score = (1 + factor) * avg_prec * avg_rec;
        score /= (factor * avg_prec) + avg_rec;
        *out = 100 * score;
    } else {
        *out = 0.0;
    }
    return AM_OK;
}

int am_chrf_sentence_score(const am_chrf_stats *seg, const am_chrf_score_opts *opts, double *out)
{
    return am_chrf_score(seg, opts, out);
}
