/*
 * ci_stats.c — the per-segment ?ci= statistics record (see ci_stats.h).
 * The writer builds the binary record in an am_buf and base64-encodes it;
 * the reader decodes into a stack buffer-sized heap copy and walks it with
 * a bounded cursor: any read past the end, an impossible count or a
 * checksum mismatch rejects the whole record (the caller recomputes), so a
 * damaged row can never yield a number.
 */
#include "ci_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Most bytes a record may decode to: 64 systems of a few hundred bytes
 * each fit easily; more is not a record this code wrote. */
#define CS_MAX_BYTES (1u << 20)

static const char cs_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* ---- writing ------------------------------------------------------------ */

static void cs_u64le(am_buf *b, uint64_t v)
{
    char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (char)(v >> (8 * i) & 0xff);
    am_buf_append(b, x, 8);
}

static void cs_int(am_buf *b, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0); /* zigzag */
    do {
        unsigned char c = z & 0x7f;
        z >>= 7;
        am_buf_appendc(b, (char)(z ? c | 0x80 : c));
    } while (z);
}

static void cs_real(am_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    cs_u64le(b, u);
}

/* A real as the stored result's JSON gives it back (ingest_ci.c reads
 * json_number_value): a non-finite one is not written there, so 0. */
static double cs_as_json(double d)
{
    return isfinite(d) ? d : 0;
}

/* One system's statistics (g, borrowed) as ingest_ci.c reads them from the
 * stored result: the window sums are the JSON's score times the count. */
static void cs_put_sys(am_buf *b, const am_config *cfg, const char *name, const am_sys_seg *g)
{
    size_t len = strlen(name);
    cs_int(b, (int64_t)len);
    am_buf_append(b, name, len);
    cs_int(b, (g->has_bleu ? 1 : 0) | (g->has_bleu && g->chrfpp_own ? 2 : 0));
    for (int k = 0; k <= cfg->k; k++) {
        cs_int(b, g->recall.r[k].hits);
        cs_int(b, g->recall.r[k].total);
    }
    cs_int(b, g->recall.r01.hits);
    cs_int(b, g->recall.r01.total);
    cs_real(b, cs_as_json(g->ter_edits));
    cs_real(b, cs_as_json(g->term_edits));
    cs_int(b, (int64_t)g->ter_ref_len);
    cs_real(b, g->ter_avg_ref_len);
    /* the result has a "terms" object only when the segment was matched
     * against terms; without it every count reads as 0 */
    const am_terms_totals *t = g->terms ? &g->terms_totals : NULL;
    am_terms_scores sc = {0};
    if (t)
        am_terms_totals_scores(t, &sc);
    cs_int(b, t ? (int64_t)t->instances : 0);
    cs_int(b, t ? (int64_t)t->exact : 0);
    for (size_t w = 0; w < cfg->nwindows; w++) {
        uint64_t n = t && w < t->n_windows ? t->win_count[w] : 0;
        cs_int(b, (int64_t)n);
        cs_real(b, n ? cs_as_json(sc.window[w]) * (double)n : 0);
    }
    if (!g->has_bleu)
        return;
    cs_int(b, g->bleu.sys_len);
    cs_int(b, g->bleu.ref_len);
    for (int n = 0; n < cfg->bleu_max_ngram_order; n++)
        cs_int(b, g->bleu.correct[n]);
    for (int n = 0; n < cfg->bleu_max_ngram_order; n++)
        cs_int(b, g->bleu.total[n]);
    const am_chrf_stats *cs[2] = {&g->chrf, &g->chrfpp};
    for (int v = 0; v < (g->chrfpp_own ? 2 : 1); v++) {
        for (int n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
            for (int j = 0; j < 3; j++)
                cs_int(b, cs[v]->ch[n][j]);
        for (int n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
            for (int j = 0; j < 3; j++)
                cs_int(b, cs[v]->wd[n][j]);
    }
}

static void cs_base64(const unsigned char *p, size_t n, am_buf *out)
{
    am_buf_reserve(out, out->len + (n + 2) / 3 * 4 + 1);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        char q[4] = {cs_b64[v >> 18 & 63], cs_b64[v >> 12 & 63],
                     i + 1 < n ? cs_b64[v >> 6 & 63] : '=', i + 2 < n ? cs_b64[v & 63] : '='};
        am_buf_append(out, q, 4);
    }
}

void am_cistats_encode(const am_scorer *s, const am_seg_result *res, const char *const *names,
                       am_buf *out)
{
    const am_config *cfg = am_scorer_config(s);
    am_buf b;
    am_buf_init(&b);
    am_buf_appendc(&b, AM_CISTATS_VERSION);
    cs_u64le(&b, am_fnv1a(am_scorer_signature(s)));
    cs_int(&b, cfg->k);
    cs_int(&b, (int64_t)cfg->nwindows);
    cs_int(&b, cfg->bleu_max_ngram_order);
    cs_int(&b, (int64_t)res->nsys);
    for (size_t i = 0; i < res->nsys; i++)
        cs_put_sys(&b, cfg, names[i], &res->sys[i]);
    cs_u64le(&b, am_fnv1a_n(AM_FNV64_BASIS, b.data, b.len));
    cs_base64((const unsigned char *)b.data, b.len, out);
    am_buf_cleanup(&b);
}

/* ---- reading ------------------------------------------------------------ */

typedef struct cs_rd {
    const unsigned char *p, *end;
    int bad; /* a read past the end or a malformed value: the record is rejected */
} cs_rd;

static uint64_t cs_get_u64le(cs_rd *r)
{
    if (r->end - r->p < 8) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

static int64_t cs_get_int(cs_rd *r)
{
    if (r->p < r->end && !(*r->p & 0x80)) { /* one byte: most counts */
        uint64_t z = *r->p++;
        return (int64_t)((z >> 1) ^ (z & 1 ? UINT64_MAX : 0));
    }
    uint64_t z = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            break;
        unsigned char c = *r->p++;
        z |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return (int64_t)((z >> 1) ^ (z & 1 ? UINT64_MAX : 0));
    }
    r->bad = 1;
    return 0;
}

/* A count: a non-negative integer below lim. */
static int64_t cs_get_count(cs_rd *r, int64_t lim)
{
    int64_t v = cs_get_int(r);
    if (v < 0 || v >= lim)
        r->bad = 1;
    return r->bad ? 0 : v;
}

static double cs_get_real(cs_rd *r)
{
    uint64_t u = cs_get_u64le(r);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The value of each byte as a base64 digit; 64: not one (a table, not a
 * search of cs_b64: this runs for every byte of every record a cold ?ci=
 * reads). */
static const unsigned char cs_b64_inv[256] = {
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 62, 64, 64, 64, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 64, 64, 64, 64, 64, 64, 64, 0,  1,  2,  3,  4,  5,  6,
    7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 64, 64, 64, 64, 64,
    64, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
    49, 50, 51, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
};

static int cs_b64_val(unsigned char c)
{
    return cs_b64_inv[c] < 64 ? cs_b64_inv[c] : -1;
}

/* Decodes base64 text into *out (malloc'd, caller frees) of *n bytes;
 * AM_ERR_INVALID for anything but canonical padded base64. */
static int cs_unbase64(const char *text, unsigned char **out, size_t *n)
{
    size_t len = strlen(text);
    if (len == 0 || len % 4 || len / 4 * 3 > CS_MAX_BYTES)
        return AM_ERR_INVALID;
    unsigned char *p = am_xmalloc(len / 4 * 3);
    size_t k = 0;
    /* every quad but the last has no padding: four table lookups, one
     * test of their OR for a byte that is not a digit */
    const unsigned char *t = (const unsigned char *)text;
    for (size_t i = 0; i + 4 < len; i += 4, k += 3) {
        unsigned a = cs_b64_inv[t[i]], b = cs_b64_inv[t[i + 1]], c = cs_b64_inv[t[i + 2]],
                 d = cs_b64_inv[t[i + 3]];
        if ((a | b | c | d) & 64) {
            free(p);
            return AM_ERR_INVALID;
        }
        uint32_t x = a << 18 | b << 12 | c << 6 | d;
        p[k] = (unsigned char)(x >> 16);
        p[k + 1] = (unsigned char)(x >> 8 & 0xff);
        p[k + 2] = (unsigned char)(x & 0xff);
    }
    for (size_t i = len - 4; i < len; i += 4) { /* the last quad, padded or not */
        int pad = (text[i + 2] == '=') + (text[i + 3] == '=');
        int v[4];
        for (int j = 0; j < 4; j++)
            v[j] = j >= 4 - pad ? 0 : cs_b64_val((unsigned char)text[i + j]);
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || (pad && i + 4 != len) ||
            (pad == 1 && text[i + 2] == '=')) {
            free(p);
            return AM_ERR_INVALID;
        }
        uint32_t x =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        p[k++] = (unsigned char)(x >> 16);
        if (pad < 2)
            p[k++] = (unsigned char)(x >> 8 & 0xff);
        if (pad < 1)
            p[k++] = (unsigned char)(x & 0xff);
    }
    *out = p;
    *n = k;
    return AM_OK;
}

/* One system's statistics from r into g (zeroed by the caller, its recall
 * and windows laid out for cfg). */
static void cs_get_sys(cs_rd *r, const am_config *cfg, am_sys_seg *g)
{
    int64_t flags = cs_get_count(r, 4);
    for (int k = 0; k <= cfg->k; k++) {
        g->recall.r[k].hits = cs_get_int(r);
        g->recall.r[k].total = cs_get_int(r);
    }
    g->recall.r01.hits = cs_get_int(r);
    g->recall.r01.total = cs_get_int(r);
    g->ter_edits = cs_get_real(r);
    g->term_edits = cs_get_real(r);
    g->ter_ref_len = (size_t)cs_get_count(r, INT64_MAX);
    g->ter_avg_ref_len = cs_get_real(r);
    g->terms_totals.instances = (uint64_t)cs_get_count(r, INT64_MAX);
    g->terms_totals.exact = (uint64_t)cs_get_count(r, INT64_MAX);
    g->terms_totals.n_windows = cfg->nwindows;
    for (size_t w = 0; w < cfg->nwindows; w++) {
        g->terms_totals.windows[w] = (size_t)cfg->windows[w];
        g->terms_totals.win_count[w] = (uint64_t)cs_get_count(r, INT64_MAX);
        g->terms_totals.win_sum[w] = cs_get_real(r);
    }
    g->has_bleu = (flags & 1) != 0;
    g->chrfpp_own = (flags & 2) != 0;
    if (!g->has_bleu)
        return;
    g->bleu.sys_len = cs_get_int(r);
    g->bleu.ref_len = cs_get_int(r);
    for (int n = 0; n < cfg->bleu_max_ngram_order; n++)
        g->bleu.correct[n] = cs_get_int(r);
    for (int n = 0; n < cfg->bleu_max_ngram_order; n++)
        g->bleu.total[n] = cs_get_int(r);
    am_chrf_stats *cs[2] = {&g->chrf, &g->chrfpp};
    for (int v = 0; v < (g->chrfpp_own ? 2 : 1); v++) {
        for (int n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
            for (int j = 0; j < 3; j++)
                cs[v]->ch[n][j] = cs_get_int(r);
        for (int n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
            for (int j = 0; j < 3; j++)
                cs[v]->wd[n][j] = cs_get_int(r);
    }
}

/* The header of a record for scorer s: version, signature and layout. */
static int cs_header_ok(cs_rd *r, uint64_t sig, const am_config *cfg)
{
    if (r->p >= r->end || *r->p++ != AM_CISTATS_VERSION)
        return 0;
    if (cs_get_u64le(r) != sig)
        return 0;
    int64_t k = cs_get_int(r), nwin = cs_get_int(r), order = cs_get_int(r);
    return !r->bad && k == cfg->k && nwin == (int64_t)cfg->nwindows &&
           order == cfg->bleu_max_ngram_order && order >= 0 && order <= AM_BLEU_MAX_ORDER;
}

/* The systems of the record into sys (zeroed and laid out by the caller):
 * each one of names gets its record's statistics. */
static void cs_get_systems(cs_rd *r, const am_config *cfg, const char *const *names, size_t nsys,
                           am_sys_seg *sys)
{
    int64_t n = cs_get_count(r, AM_SCORE_MAX_SYSTEMS + 1);
    am_sys_seg scratch;
    for (int64_t k = 0; k < n && !r->bad; k++) {
        int64_t len = cs_get_count(r, r->end - r->p + 1);
        const char *name = (const char *)r->p;
        r->p += len;
        am_sys_seg *g = &scratch;
        for (size_t i = 0; i < nsys && !r->bad; i++)
            if (strlen(names[i]) == (size_t)len && !memcmp(names[i], name, (size_t)len))
                g = &sys[i];
        if (g == &scratch) /* not among the columns: read past it */
            memset(&scratch, 0, sizeof scratch);
        cs_get_sys(r, cfg, g);
    }
}

/* The bytes of record text (borrowed) into *bytes (caller frees, also on
 * failure) and r over its systems, when its base64, checksum and header
 * (version, s's signature and layout) are valid: 1; else 0. The checksum
 * is checked first: nothing of a damaged record is read. */
static int cs_open(uint64_t sig, const am_config *cfg, const char *text, unsigned char **bytes,
                   cs_rd *r)
{
    size_t n = 0;
    *bytes = NULL;
    if (!text || cs_unbase64(text, bytes, &n) != AM_OK)
        return 0;
    if (n <= 8)
        return 0;
    cs_rd tail = {*bytes + n - 8, *bytes + n, 0};
    if (cs_get_u64le(&tail) != am_fnv1a_n(AM_FNV64_BASIS, *bytes, n - 8))
        return 0;
    *r = (cs_rd){*bytes, *bytes + n - 8, 0};
    return cs_header_ok(r, sig, cfg);
}

uint64_t am_cistats_sig(const am_scorer *s)
{
    return am_fnv1a(am_scorer_signature(s));
}

int am_cistats_decode(const am_scorer *s, const char *text, const char *const *names, size_t nsys,
                      am_sys_seg *sys)
{
    return am_cistats_decode_sig(s, am_cistats_sig(s), text, names, nsys, sys);
}

int am_cistats_decode_sig(const am_scorer *s, uint64_t sig, const char *text,
                          const char *const *names, size_t nsys, am_sys_seg *sys)
{
    const am_config *cfg = am_scorer_config(s);
    unsigned char *p = NULL;
    cs_rd r;
    int ok = cs_open(sig, cfg, text, &p, &r);
    for (size_t i = 0; i < nsys; i++) {
        /* as ingest_ci.c's am_ci_sys: a system the segment lacks adds 0 */
        memset(&sys[i], 0, sizeof sys[i]);
        am_recall_totals_init(&sys[i].recall, cfg->k);
    }
    if (ok) {
        cs_get_systems(&r, cfg, names, nsys, sys);
        ok = !r.bad && r.p == r.end;
    }
    free(p);
    return ok ? AM_OK : AM_ERR_INVALID;
}

int am_cistats_read(const am_scorer *s, const char *text, am_cistats_rec *out)
{
    const am_config *cfg = am_scorer_config(s);
    unsigned char *p = NULL;
    cs_rd r;
    if (out->sig_of != s) { /* the signature's hash once per scorer, not per record */
        out->sig = am_cistats_sig(s);
        out->sig_of = s;
    }
    int ok = cs_open(out->sig, cfg, text, &p, &r);
    out->nsys = 0;
    int64_t n = ok ? cs_get_count(&r, AM_SCORE_MAX_SYSTEMS + 1) : 0;
    for (int64_t k = 0; k < n && !r.bad; k++) {
        int64_t len = cs_get_count(&r, r.end - r.p + 1);
        if (r.bad || len >= AM_CISTATS_NAME_MAX || memchr(r.p, '\0', (size_t)len)) {
            r.bad = 1; /* a name the caller cannot take as a C string */
            break;
        }
        memcpy(out->name[k], r.p, (size_t)len);
        out->name[k][len] = '\0';
        r.p += len;
        am_sys_seg *g = &out->sys[k];
        memset(g, 0, sizeof *g);
        am_recall_totals_init(&g->recall, cfg->k);
        cs_get_sys(&r, cfg, g);
        out->nsys = (size_t)k + 1;
    }
    ok = ok && !r.bad && r.p == r.end;
    free(p);
    if (!ok)
        out->nsys = 0;
    return ok ? AM_OK : AM_ERR_INVALID;
}
