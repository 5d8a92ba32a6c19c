/*
 * bleu.c — sacreBLEU 2.6.0 BLEU sufficient statistics and score.
 *
 * N-gram counting (ngram.h): reference tokens are interned to 32-bit ids
 * and the clipped n-gram matches (Counter intersection) come from
 * am_ngram_add_ref / am_ngram_match (AM_NGRAM_WORDS). A reused workspace
 * allocates nothing once grown.
 */
#include "bleu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h" /* am_text_py_lower: Python str.lower() */
#include "ngram.h"

/* Longest accepted segment, so that ids and counts fit in 32 bits. */
#define MAX_SEG_BYTES ((size_t)1 << 26)

struct am_bleu_ws {
    am_ngram_tab *tab;
    am_ngram_span *hs, *rs;
    size_t hs_cap, rs_cap;
    uint32_t *hid, *rid; /* token ids (AM_NGRAM_NONE: hypothesis token not in the reference) */
    size_t hid_cap, rid_cap;
    am_buf low, strip, th, tr;
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
    free(ws);
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
    return am_tok_tokenize(o->tokenizer, s, tok);
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

int am_bleu_stats_add(am_bleu_stats *stats, am_bleu_ws *ws, const am_bleu_opts *opts,
                      const char *hyp, const char *ref)
{
    if (!stats || !hyp || !ref || !*ref)
        return AM_ERR_INVALID;
    am_bleu_opts def;
    if (!opts) {
        am_bleu_opts_init(&def);
        opts = &def;
    }
    if ((unsigned)opts->tokenizer > (unsigned)AM_TOK_NONE)
        return AM_ERR_INVALID;
    if (strlen(hyp) > MAX_SEG_BYTES || strlen(ref) > MAX_SEG_BYTES)
        return AM_ERR_RANGE;
    am_bleu_ws *tmp = NULL;
    if (!ws) {
        am_bleu_ws_new(&tmp);
        ws = tmp;
    }
    int rc = preprocess(ws, opts, hyp, &ws->th);
    if (rc == AM_OK)
        rc = preprocess(ws, opts, ref, &ws->tr);
    am_bleu_stats seg;
    if (rc == AM_OK) {
        /* Tokenizers may grow the text (13a pads punctuation). */
        if (ws->th.len > 8 * MAX_SEG_BYTES || ws->tr.len > 8 * MAX_SEG_BYTES)
            rc = AM_ERR_RANGE;
        else
            segment_stats(ws, am_buf_str(&ws->th), am_buf_str(&ws->tr), &seg);
    }
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
