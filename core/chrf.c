/*
 * chrf.c — sacreBLEU 2.6.0 chrF / chrF++ sufficient statistics and score.
 *
 * N-gram counting: the reference's n-grams form a prefix trie stored in an
 * open-addressing hash table: an n-gram's key is (id of its (n-1)-gram
 * prefix, its last code point or word id), packed into 64 bits, and maps
 * to a dense n-gram id whose counts live in flat arrays. Keys are compared
 * exactly (no hash-only equality). Reference words are interned (string
 * compare) to 32-bit ids first. Hypothesis n-grams are only looked up, and
 * a position stops extending as soon as its prefix is absent from the
 * reference (no longer n-gram there can match). A match is counted when
 * the n-gram's hypothesis count is still below its reference count, which
 * sums min(hyp, ref) over distinct n-grams, i.e. Counter intersection.
 * Tables are "cleared" by bumping a generation stamp, so a reused
 * workspace allocates nothing once it has grown to the segment size.
 */
#include "chrf.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define NO_ID UINT32_MAX
/* Longest accepted segment: at most 10 n-grams per byte keeps ids < 2^30. */
#define MAX_SEG_BYTES ((size_t)1 << 26)
/* Trie keys: a character n-gram is ((prefix id + 1) << 21) | code point
 * (prefix id + 1 = 0 for unigrams); a word n-gram additionally has bit 63
 * set and is ((prefix id + 1) << 32) | word id. N-gram ids < 2^30. */
#define WORD_FLAG (1ULL << 63)

struct ng_ent {
    uint64_t key;
    uint32_t gen;
    uint32_t id;
};

struct word_ent {
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

struct am_chrf_ws {
    uint32_t gen; /* current generation, never 0 */
    struct ng_ent *ng;
    size_t ng_cap; /* power of two */
    unsigned ng_shift; /* 64 - log2(ng_cap) */
    uint32_t *ref_cnt, *hyp_cnt; /* per n-gram id */
    size_t cnt_cap;
    uint32_t n_ids;
    struct word_ent *wt;
    size_t wt_cap; /* power of two */
    int32_t *hcp, *rcp;
    size_t hcp_cap, rcp_cap;
    struct span *hw, *rw;
    size_t hw_cap, rw_cap;
    uint32_t *hid, *rid; /* word ids (NO_ID: hypothesis word not in the reference) */
    size_t hid_cap, rid_cap;
    am_buf lh, lr; /* lowercased hypothesis / reference */
};

/* ---- small helpers ------------------------------------------------------ */

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

/* Ensures *arr has room for n elements of size sz (contents not kept). */
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

/* Starts a new generation: every table entry becomes empty. */
static void next_gen(am_chrf_ws *ws)
{
    ws->gen++;
    if (ws->gen == 0) {
        if (ws->ng)
            memset(ws->ng, 0, ws->ng_cap * sizeof *ws->ng);
        if (ws->wt)
            memset(ws->wt, 0, ws->wt_cap * sizeof *ws->wt);
        ws->gen = 1;
    }
}

/* Makes the n-gram table and count arrays hold n n-grams (load <= 1/2). */
static void ng_reserve(am_chrf_ws *ws, size_t n)
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

static void wt_reserve(am_chrf_ws *ws, size_t n)
{
    size_t want = pow2_at_least(2 * n + 1);
    if (want <= ws->wt_cap)
        return;
    free(ws->wt);
    ws->wt = am_xcalloc(want, sizeof *ws->wt);
    ws->wt_cap = want;
}

static size_t ng_slot(const am_chrf_ws *ws, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> ws->ng_shift);
}

/* Adds one reference n-gram occurrence; returns the n-gram's id. */
static uint32_t ng_insert(am_chrf_ws *ws, uint64_t key)
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

/* Looks a hypothesis n-gram up: returns its id or NO_ID. */
static uint32_t ng_find(const am_chrf_ws *ws, uint64_t key)
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

/* Counts one hypothesis occurrence of n-gram id; returns 1 when it is
 * matched by a reference occurrence not matched yet (clipped count). */
static int ng_hit(am_chrf_ws *ws, uint32_t id)
{
    if (ws->hyp_cnt[id] < ws->ref_cnt[id]) {
        ws->hyp_cnt[id]++;
        return 1;
    }
    return 0;
}

/* Interns a reference word; returns its id (ids are 0, 1, 2, ... per generation). */
static uint32_t wt_intern(am_chrf_ws *ws, const char *p, size_t len, uint32_t *next_id)
{
    uint64_t h = str_hash(p, len);
    size_t mask = ws->wt_cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        struct word_ent *e = &ws->wt[i];
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

/* Looks a hypothesis word up among the interned reference words. */
static uint32_t wt_find(const am_chrf_ws *ws, const char *p, size_t len)
{
    uint64_t h = str_hash(p, len);
    size_t mask = ws->wt_cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        const struct word_ent *e = &ws->wt[i];
        if (e->gen != ws->gen)
            return NO_ID;
        if (e->h == h && e->len == len && memcmp(e->p, p, len) == 0)
            return e->id;
        i = (i + 1) & mask;
    }
}

/* ---- Python str.lower() --------------------------------------------------- */

static int is_cased(int32_t c)
{
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL ||
           cat == UTF8PROC_CATEGORY_LT;
}

/* Unicode Case_Ignorable: Mn Me Cf Lm Sk, and Word_Break MidLetter,
 * MidNumLet, Single_Quote. */
static int is_case_ignorable(int32_t c)
{
    switch (c) {
    case 0x27: case 0x2E: case 0x3A: case 0xB7: case 0x387: case 0x55F: case 0x5F4:
    case 0x2018: case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52:
    case 0xFE55: case 0xFF07: case 0xFF0E: case 0xFF1A:
        return 1;
    default:
        break;
    }
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME ||
           cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_LM ||
           cat == UTF8PROC_CATEGORY_SK;
}

/* Final_Sigma for the capital sigma at byte offset i (length 2) of s[0..len). */
static int final_sigma(const char *s, size_t len, size_t i)
{
    int32_t c = 0;
    int found = 0;
    size_t j = i;
    while (j > 0) {
        size_t k = j - 1;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        am_utf8_decode(s + k, j - k, &c);
        j = k;
        if (!is_case_ignorable(c)) {
            found = 1;
            break;
        }
    }
    if (!found || !is_cased(c))
        return 0;
    j = i + 2;
    while (j < len) {
        j += am_utf8_decode(s + j, len - j, &c);
        if (!is_case_ignorable(c))
            return !is_cased(c);
    }
    return 1;
}

int am_chrf_py_lower(const char *s, am_buf *out)
{
    assert(s && out);
    am_buf_reset(out);
    size_t len = strlen(s);
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        while (run < len && (unsigned char)s[run] < 0x80)
            run++;
        if (run > i) {
            size_t start = out->len;
            am_buf_append(out, s + i, run - i);
            for (size_t k = start; k < out->len; k++)
                if (out->data[k] >= 'A' && out->data[k] <= 'Z')
                    out->data[k] = (char)(out->data[k] - 'A' + 'a');
            i = run;
            continue;
        }
        int32_t c;
        size_t n = am_utf8_decode(s + i, len - i, &c);
        char enc[8];
        if (c == 0x130) { /* LATIN CAPITAL LETTER I WITH DOT ABOVE → i + U+0307 */
            am_buf_append(out, "i\xCC\x87", 3);
        } else if (c == 0x3A3) {
            int32_t l = final_sigma(s, len, i) ? 0x3C2 : 0x3C3;
            am_buf_append(out, enc, am_utf8_encode(l, enc));
        } else {
            int32_t l = c <= 0x10FFFF ? utf8proc_tolower(c) : c;
            am_buf_append(out, enc, am_utf8_encode(l, enc));
        }
        i += n;
    }
    return AM_OK;
}

/* ---- workspace ------------------------------------------------------------- */

int am_chrf_ws_new(am_chrf_ws **out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_chrf_ws *ws = am_xcalloc(1, sizeof *ws);
    ws->gen = 1;
    am_buf_init(&ws->lh);
    am_buf_init(&ws->lr);
    *out = ws;
    return AM_OK;
}

void am_chrf_ws_free(am_chrf_ws *ws)
{
    if (!ws)
        return;
    free(ws->ng);
    free(ws->wt);
    free(ws->hcp);
    free(ws->rcp);
    free(ws->hw);
    free(ws->rw);
    free(ws->hid);
    free(ws->rid);
    free(ws->ref_cnt);
    free(ws->hyp_cnt);
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

/* Decodes one code point at s[i] (i < len) into *c; returns its length. */
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

/* Decodes s[0..len) into code points (dropping Python whitespace unless
 * keep_ws); returns the count; the array grows as needed. */
static size_t decode_chars(const char *s, size_t len, int keep_ws, int32_t **arr, size_t *cap)
{
    *arr = ensure(*arr, cap, len + 1, sizeof **arr);
    int32_t *v = *arr;
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
            v[n++] = c;
    }
    return n;
}

static int is_ascii_punct(unsigned char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* chrF++ words: str.split() tokens with one leading/trailing ASCII
 * punctuation character split off (CHRF._remove_punctuation). */
static size_t split_words(const char *s, size_t len, struct span **arr, size_t *cap)
{
    /* At most 2 words per token and at most (len+1)/2 tokens. */
    *arr = ensure(*arr, cap, len + 2, sizeof **arr);
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
        size_t start = i, ncp = 0;
        while (i < len) {
            k = next_cp(s, len, i, &c);
            if (is_space_cp(c))
                break;
            i += k;
            ncp++;
        }
        const char *p = s + start;
        size_t w = i - start;
        if (ncp == 1) {
            v[n++] = (struct span){p, w};
        } else if (is_ascii_punct((unsigned char)p[w - 1])) {
            v[n++] = (struct span){p, w - 1};
            v[n++] = (struct span){p + w - 1, 1};
        } else if (is_ascii_punct((unsigned char)p[0])) {
            v[n++] = (struct span){p, 1};
            v[n++] = (struct span){p + 1, w - 1};
        } else {
            v[n++] = (struct span){p, w};
        }
    }
    assert(n <= len + 2);
    return n;
}

static int64_t count_ngrams(size_t len, int n)
{
    return len >= (size_t)n ? (int64_t)(len - (size_t)n + 1) : 0;
}

static uint64_t char_key(uint32_t prev, int32_t cp)
{
    return ((uint64_t)(prev + 1) << 21) | (uint32_t)cp;
}

static uint64_t word_key(uint32_t prev, uint32_t wid)
{
    return WORD_FLAG | ((uint64_t)(prev + 1) << 32) | wid;
}

static void segment_stats(am_chrf_ws *ws, const am_chrf_opts *o, const char *hyp,
                          const char *ref, am_chrf_stats *st)
{
    if (o->lowercase) {
        am_chrf_py_lower(hyp, &ws->lh);
        am_chrf_py_lower(ref, &ws->lr);
        hyp = am_buf_str(&ws->lh);
        ref = am_buf_str(&ws->lr);
    }
    size_t hlen = strlen(hyp), rlen = strlen(ref);
    size_t nh = decode_chars(hyp, hlen, o->whitespace, &ws->hcp, &ws->hcp_cap);
    size_t nr = decode_chars(ref, rlen, o->whitespace, &ws->rcp, &ws->rcp_cap);
    size_t nhw = split_words(hyp, hlen, &ws->hw, &ws->hw_cap);
    size_t nrw = split_words(ref, rlen, &ws->rw, &ws->rw_cap);
    const int32_t *H = ws->hcp, *R = ws->rcp;

    next_gen(ws);
    ng_reserve(ws, nr * AM_CHRF_MAX_CHAR_ORDER + nrw * AM_CHRF_MAX_WORD_ORDER);
    wt_reserve(ws, nrw);

    /* Character n-grams. */
    for (size_t i = 0; i < nr; i++) {
        uint32_t prev = NO_ID; /* NO_ID + 1 == 0: the root */
        for (size_t n = 1; n <= AM_CHRF_MAX_CHAR_ORDER && i + n <= nr; n++)
            prev = ng_insert(ws, char_key(prev, R[i + n - 1]));
    }
    int64_t cmatch[AM_CHRF_MAX_CHAR_ORDER] = {0};
    for (size_t i = 0; i < nh; i++) {
        uint32_t prev = NO_ID;
        for (size_t n = 1; n <= AM_CHRF_MAX_CHAR_ORDER && i + n <= nh; n++) {
            prev = ng_find(ws, char_key(prev, H[i + n - 1]));
            if (prev == NO_ID)
                break;
            cmatch[n - 1] += ng_hit(ws, prev);
        }
    }

    /* Word n-grams. */
    ws->rid = ensure(ws->rid, &ws->rid_cap, nrw + 1, sizeof *ws->rid);
    ws->hid = ensure(ws->hid, &ws->hid_cap, nhw + 1, sizeof *ws->hid);
    uint32_t next_id = 0;
    for (size_t i = 0; i < nrw; i++)
        ws->rid[i] = wt_intern(ws, ws->rw[i].p, ws->rw[i].len, &next_id);
    for (size_t i = 0; i < nhw; i++)
        ws->hid[i] = wt_find(ws, ws->hw[i].p, ws->hw[i].len);
    for (size_t i = 0; i < nrw; i++) {
        uint32_t prev = NO_ID;
        for (size_t n = 1; n <= AM_CHRF_MAX_WORD_ORDER && i + n <= nrw; n++)
            prev = ng_insert(ws, word_key(prev, ws->rid[i + n - 1]));
    }
    int64_t wmatch[AM_CHRF_MAX_WORD_ORDER] = {0};
    for (size_t i = 0; i < nhw; i++) {
        uint32_t prev = NO_ID;
        for (size_t n = 1; n <= AM_CHRF_MAX_WORD_ORDER && i + n <= nhw; n++) {
            if (ws->hid[i + n - 1] == NO_ID)
                break;
            prev = ng_find(ws, word_key(prev, ws->hid[i + n - 1]));
            if (prev == NO_ID)
                break;
            wmatch[n - 1] += ng_hit(ws, prev);
        }
    }

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

int am_chrf_stats_add(am_chrf_stats *stats, am_chrf_ws *ws, const am_chrf_opts *opts,
                      const char *hyp, const char *ref)
{
    if (!stats || !hyp || !ref || !*ref)
        return AM_ERR_INVALID;
    am_chrf_opts def;
    if (!opts) {
        am_chrf_opts_init(&def);
        opts = &def;
    }
    /* Ids and counts are 32-bit and trie keys need ids < 2^31. */
    if (strlen(hyp) > MAX_SEG_BYTES || strlen(ref) > MAX_SEG_BYTES)
        return AM_ERR_RANGE;
    am_chrf_ws *tmp = NULL;
    if (!ws) {
        am_chrf_ws_new(&tmp);
        ws = tmp;
    }
    am_chrf_stats seg;
    segment_stats(ws, opts, hyp, ref, &seg);
    am_chrf_ws_free(tmp);
    return am_chrf_merge(stats, &seg);
}

int am_chrf_merge(am_chrf_stats *dst, const am_chrf_stats *src)
{
    if (!dst || !src)
        return AM_ERR_INVALID;
    am_chrf_stats t = *dst;
    for (int n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        for (int k = 0; k < 3; k++)
            if (add_i64(&t.ch[n][k], src->ch[n][k]))
                return AM_ERR_RANGE;
    for (int n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        for (int k = 0; k < 3; k++)
            if (add_i64(&t.wd[n][k], src->wd[n][k]))
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
    int co = opts->char_order, wo = opts->word_order;
    if (co < 0 || co > AM_CHRF_MAX_CHAR_ORDER || wo < 0 || wo > AM_CHRF_MAX_WORD_ORDER ||
        co + wo == 0 || opts->beta < 0 || opts->beta > 1000)
        return AM_ERR_INVALID;

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
