/*
 * bleu.c — sacreBLEU 2.6.0 BLEU sufficient statistics and score.
 *
 * N-gram counting: reference tokens are interned (exact string compare) to
 * 32-bit ids; reference n-grams form a prefix trie stored in an
 * open-addressing hash table keyed by ((id of the (n-1)-gram prefix + 1)
 * << 32 | token id), 64 bits compared exactly, mapping to dense n-gram ids
 * whose counts live in flat arrays. Hypothesis n-grams are only looked up;
 * a position stops extending at the first prefix the reference lacks. A
 * match is counted while the n-gram's hypothesis count is below its
 * reference count: the sum of min(hyp, ref), i.e. Counter intersection.
 * Tables are emptied by bumping a generation stamp, so a reused workspace
 * allocates nothing once grown.
 */
#include "bleu.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chrf.h" /* am_chrf_py_lower: Python str.lower() */

#define NO_ID UINT32_MAX
/* Longest accepted segment, so that ids and counts fit in 32 bits. */
#define MAX_SEG_BYTES ((size_t)1 << 26)

struct ng_ent {
    uint64_t key;
    uint32_t gen;
    uint32_t id;
};

struct tok_ent {
    uint64_t h;
    const char *p;
    uint32_t len;
    uint32_t id;
    uint32_t gen;
};

struct span {
    const char *p;
    size_t len;
};

struct am_bleu_ws {
    uint32_t gen; /* current generation, never 0 */
    struct ng_ent *ng;
    size_t ng_cap; /* power of two */
    unsigned ng_shift;
    uint32_t *ref_cnt, *hyp_cnt; /* per n-gram id */
    size_t cnt_cap;
    uint32_t n_ids;
    struct tok_ent *tt;
    size_t tt_cap; /* power of two */
    struct span *hs, *rs;
    size_t hs_cap, rs_cap;
    uint32_t *hid, *rid;
    size_t hid_cap, rid_cap;
    am_buf low, strip, th, tr;
};

/* ---- helpers -------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t str_hash(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 64;
    while (c < n)
        c <<= 1;
    return c;
}

static void *ensure(void *arr, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return arr;
    size_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    free(arr);
    *cap = c;
    return am_xmalloc(c * sz);
}

static int add_i64(int64_t *a, int64_t b)
{
    if ((b > 0 && *a > INT64_MAX - b) || (b < 0 && *a < INT64_MIN - b))
        return -1;
    *a += b;
    return 0;
}

static int ascii_space(unsigned char c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

static size_t next_cp(const char *s, size_t len, size_t i, int32_t *c)
{
    unsigned char u = (unsigned char)s[i];
    if (u < 0x80) {
        *c = u;
        return 1;
    }
    return am_utf8_decode(s + i, len - i, c);
}

static int is_space_cp(int32_t c)
{
    return c < 0x80 ? ascii_space((unsigned char)c) : am_py_isspace(c);
}

/* Length of s[0..len) without trailing str.isspace() code points (rstrip). */
static size_t rstrip_len(const char *s, size_t len)
{
    if (len == 0 || ((unsigned char)s[len - 1] < 0x80 && !ascii_space((unsigned char)s[len - 1])))
        return len;
    size_t end = 0, i = 0;
    while (i < len) {
        int32_t c;
        i += next_cp(s, len, i, &c);
        if (!is_space_cp(c))
            end = i;
    }
    return end;
}

/* str.split() into spans of s[0..len). */
static size_t split_py(const char *s, size_t len, struct span **arr, size_t *cap)
{
    *arr = ensure(*arr, cap, len / 2 + 2, sizeof **arr);
    struct span *v = *arr;
    size_t n = 0, i = 0;
    while (i < len) {
        int32_t c;
        size_t k;
        while (i < len) {
            k = next_cp(s, len, i, &c);
            if (!is_space_cp(c))
                break;
            i += k;
        }
        if (i >= len)
            break;
        size_t start = i;
        while (i < len) {
            k = next_cp(s, len, i, &c);
            if (is_space_cp(c))
                break;
            i += k;
        }
        v[n++] = (struct span){s + start, i - start};
    }
    assert(n <= len / 2 + 2);
    return n;
}

/* ---- tables ------------------------------------------------------------------ */

static void next_gen(am_bleu_ws *ws)
{
    ws->gen++;
    if (ws->gen == 0) {
        if (ws->ng)
            memset(ws->ng, 0, ws->ng_cap * sizeof *ws->ng);
        if (ws->tt)
            memset(ws->tt, 0, ws->tt_cap * sizeof *ws->tt);
        ws->gen = 1;
    }
}

static void ng_reserve(am_bleu_ws *ws, size_t n)
{
    size_t want = pow2_at_least(n + n / 2 + 1);
    if (want > ws->ng_cap) {
        free(ws->ng);
        ws->ng = am_xcalloc(want, sizeof *ws->ng);
        ws->ng_cap = want;
        unsigned bits = 0;
        while (((size_t)1 << bits) < want)
            bits++;
        ws->ng_shift = 64 - bits;
    }
    if (n + 1 > ws->cnt_cap) {
        size_t c = pow2_at_least(n + 1);
        free(ws->ref_cnt);
        free(ws->hyp_cnt);
        ws->ref_cnt = am_xmalloc(c * sizeof *ws->ref_cnt);
        ws->hyp_cnt = am_xmalloc(c * sizeof *ws->hyp_cnt);
        ws->cnt_cap = c;
    }
    ws->n_ids = 0;
}

static void tt_reserve(am_bleu_ws *ws, size_t n)
{
    size_t want = pow2_at_least(2 * n + 1);
    if (want <= ws->tt_cap)
        return;
    free(ws->tt);
    ws->tt = am_xcalloc(want, sizeof *ws->tt);
    ws->tt_cap = want;
}

static size_t ng_slot(const am_bleu_ws *ws, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> ws->ng_shift);
}

static uint64_t ng_key(uint32_t prev, uint32_t tok)
{
    return ((uint64_t)(prev + 1) << 32) | tok; /* prev == NO_ID: the root */
}

/* Adds one reference n-gram occurrence; returns the n-gram's id. */
static uint32_t ng_insert(am_bleu_ws *ws, uint64_t key)
{
    size_t mask = ws->ng_cap - 1;
    size_t i = ng_slot(ws, key);
    for (;;) {
        struct ng_ent *e = &ws->ng[i];
        if (e->gen != ws->gen) {
            assert(ws->n_ids < ws->cnt_cap);
            e->gen = ws->gen;
            e->key = key;
            e->id = ws->n_ids++;
            ws->ref_cnt[e->id] = 1;
            ws->hyp_cnt[e->id] = 0;
            return e->id;
        }
        if (e->key == key) {
            ws->ref_cnt[e->id]++;
            return e->id;
        }
        i = (i + 1) & mask;
    }
}

static uint32_t ng_find(const am_bleu_ws *ws, uint64_t key)
{
    size_t mask = ws->ng_cap - 1;
    size_t i = ng_slot(ws, key);
    for (;;) {
        const struct ng_ent *e = &ws->ng[i];
        if (e->gen != ws->gen)
            return NO_ID;
        if (e->key == key)
            return e->id;
        i = (i + 1) & mask;
    }
}

static uint32_t tt_intern(am_bleu_ws *ws, const char *p, size_t len, uint32_t *next_id)
{
    uint64_t h = str_hash(p, len);
    size_t mask = ws->tt_cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        struct tok_ent *e = &ws->tt[i];
        if (e->gen != ws->gen) {
            e->gen = ws->gen;
            e->h = h;
            e->p = p;
            e->len = (uint32_t)len;
            e->id = (*next_id)++;
            return e->id;
        }
        if (e->h == h && e->len == len && memcmp(e->p, p, len) == 0)
            return e->id;
        i = (i + 1) & mask;
    }
}

static uint32_t tt_find(const am_bleu_ws *ws, const char *p, size_t len)
{
    uint64_t h = str_hash(p, len);
    size_t mask = ws->tt_cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        const struct tok_ent *e = &ws->tt[i];
        if (e->gen != ws->gen)
            return NO_ID;
        if (e->h == h && e->len == len && memcmp(e->p, p, len) == 0)
            return e->id;
        i = (i + 1) & mask;
    }
}

/* ---- public: setup ---------------------------------------------------------------- */

int am_bleu_ws_new(am_bleu_ws **out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_bleu_ws *ws = am_xcalloc(1, sizeof *ws);
    ws->gen = 1;
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
    free(ws->ng);
    free(ws->ref_cnt);
    free(ws->hyp_cnt);
    free(ws->tt);
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
        am_chrf_py_lower(s, &ws->low);
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
    size_t nh = split_py(th, hlen, &ws->hs, &ws->hs_cap);
    size_t nr = split_py(tr, rlen, &ws->rs, &ws->rs_cap);

    next_gen(ws);
    ng_reserve(ws, nr * AM_BLEU_MAX_ORDER);
    tt_reserve(ws, nr);
    ws->rid = ensure(ws->rid, &ws->rid_cap, nr + 1, sizeof *ws->rid);
    ws->hid = ensure(ws->hid, &ws->hid_cap, nh + 1, sizeof *ws->hid);
    uint32_t next_id = 0;
    for (size_t i = 0; i < nr; i++)
        ws->rid[i] = tt_intern(ws, ws->rs[i].p, ws->rs[i].len, &next_id);
    for (size_t i = 0; i < nh; i++)
        ws->hid[i] = tt_find(ws, ws->hs[i].p, ws->hs[i].len);

    for (size_t i = 0; i < nr; i++) {
        uint32_t prev = NO_ID;
        for (size_t n = 1; n <= AM_BLEU_MAX_ORDER && i + n <= nr; n++)
            prev = ng_insert(ws, ng_key(prev, ws->rid[i + n - 1]));
    }
    int64_t correct[AM_BLEU_MAX_ORDER] = {0};
    for (size_t i = 0; i < nh; i++) {
        uint32_t prev = NO_ID;
        for (size_t n = 1; n <= AM_BLEU_MAX_ORDER && i + n <= nh; n++) {
            uint32_t t = ws->hid[i + n - 1];
            if (t == NO_ID)
                break;
            prev = ng_find(ws, ng_key(prev, t));
            if (prev == NO_ID)
                break;
            if (ws->hyp_cnt[prev] < ws->ref_cnt[prev]) {
                ws->hyp_cnt[prev]++;
                correct[n - 1]++;
            }
        }
    }
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
    if (add_i64(&t.sys_len, src->sys_len) || add_i64(&t.ref_len, src->ref_len))
        return AM_ERR_RANGE;
    for (int n = 0; n < AM_BLEU_MAX_ORDER; n++)
        if (add_i64(&t.correct[n], src->correct[n]) || add_i64(&t.total[n], src->total[n]))
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

int am_bleu_compute(const am_bleu_stats *stats, const am_bleu_score_opts *opts,
                    am_bleu_result *out)
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
