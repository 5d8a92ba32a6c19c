/*
 * ngram.c — clipped n-gram matching shared by BLEU and chrF (see ngram.h).
 */
#include "ngram.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

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

struct am_ngram_tab {
    uint32_t gen; /* current generation, never 0 */
    struct ng_ent *ng;
    size_t ng_cap; /* power of two */
    unsigned ng_shift; /* 64 - log2(ng_cap) */
    uint32_t *ref_cnt, *hyp_cnt; /* per n-gram id */
    size_t cnt_cap;
    uint32_t n_ids; /* n-gram ids given out this generation */
    struct word_ent *wt;
    size_t wt_cap; /* power of two */
    uint32_t n_words; /* word ids given out this generation */
};

/* ---- small helpers ---------------------------------------------------------- */

static uint64_t str_hash(const char *p, size_t n)
{
    return am_mix64(am_fnv1a_n(AM_FNV64_BASIS, p, n));
}

static size_t pow2_at_least(size_t n)
{
    size_t c = 64;
    while (c < n)
        c <<= 1;
    return c;
}

void *am_ngram_grow(void *arr, size_t *cap, size_t n, size_t sz)
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

int am_ngram_add_i64(int64_t *a, int64_t b)
{
    if ((b > 0 && *a > INT64_MAX - b) || (b < 0 && *a < INT64_MIN - b))
        return AM_ERR_RANGE;
    *a += b;
    return AM_OK;
}

/* ---- str.split() ------------------------------------------------------------ */

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

/* str.isspace() of one code point, ASCII inline. */
static int is_space_cp(int32_t c)
{
    if (c < 0x80)
        return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return am_py_isspace(c);
}

/* am_ngram_next_token, inlined into am_ngram_split_py. */
static inline int next_token(const char *s, size_t len, size_t *pos, size_t *start)
{
    size_t i = *pos;
    int32_t c;
    size_t k;
    while (i < len) {
        k = next_cp(s, len, i, &c);
        if (!is_space_cp(c))
            break;
        i += k;
    }
    if (i >= len) {
        *pos = i;
        return 0;
    }
    *start = i;
    while (i < len) {
        k = next_cp(s, len, i, &c);
        if (is_space_cp(c))
            break;
        i += k;
    }
    *pos = i;
    return 1;
}

int am_ngram_next_token(const char *s, size_t len, size_t *pos, size_t *start)
{
    return next_token(s, len, pos, start);
}

size_t am_ngram_split_py(const char *s, size_t len, am_ngram_span **arr, size_t *cap)
{
    /* A token and its separator take at least 2 bytes. */
    *arr = am_ngram_grow(*arr, cap, len / 2 + 2, sizeof **arr);
    am_ngram_span *v = *arr;
    size_t n = 0, pos = 0, start;
    while (next_token(s, len, &pos, &start))
        v[n++] = (am_ngram_span){s + start, pos - start};
    assert(n <= len / 2 + 2);
    return n;
}

/* ---- tables ----------------------------------------------------------------- */

int am_ngram_new(am_ngram_tab **out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_ngram_tab *t = am_xcalloc(1, sizeof *t);
    t->gen = 1;
    *out = t;
    return AM_OK;
}

void am_ngram_free(am_ngram_tab *t)
{
    if (!t)
        return;
    free(t->ng);
    free(t->ref_cnt);
    free(t->hyp_cnt);
    free(t->wt);
    free(t);
}

/* Starts a new generation: every table entry becomes empty. */
static void next_gen(am_ngram_tab *t)
{
    t->gen++;
    if (t->gen == 0) {
        if (t->ng)
            memset(t->ng, 0, t->ng_cap * sizeof *t->ng);
        if (t->wt)
            memset(t->wt, 0, t->wt_cap * sizeof *t->wt);
        t->gen = 1;
    }
}

/* Makes the n-gram table and count arrays hold n n-grams (load <= 2/3). */
static void ng_reserve(am_ngram_tab *t, size_t n)
{
    size_t want = pow2_at_least(n + n / 2 + 1);
    if (want > t->ng_cap) {
        free(t->ng);
        t->ng = am_xcalloc(want, sizeof *t->ng);
        t->ng_cap = want;
        unsigned bits = 0;
        while (((size_t)1 << bits) < want)
            bits++;
        t->ng_shift = 64 - bits;
    }
    if (n + 1 > t->cnt_cap) {
        size_t c = pow2_at_least(n + 1);
        free(t->ref_cnt);
        free(t->hyp_cnt);
        t->ref_cnt = am_xmalloc(c * sizeof *t->ref_cnt);
        t->hyp_cnt = am_xmalloc(c * sizeof *t->hyp_cnt);
        t->cnt_cap = c;
    }
    t->n_ids = 0;
}

/* Makes the word table hold n words (load <= 1/2). */
static void wt_reserve(am_ngram_tab *t, size_t n)
{
    size_t want = pow2_at_least(2 * n + 1);
    if (want > t->wt_cap) {
        free(t->wt);
        t->wt = am_xcalloc(want, sizeof *t->wt);
        t->wt_cap = want;
    }
    t->n_words = 0;
}

void am_ngram_begin(am_ngram_tab *t, size_t max_ngrams, size_t max_words)
{
    next_gen(t);
    ng_reserve(t, max_ngrams);
    wt_reserve(t, max_words);
}

static size_t ng_slot(const am_ngram_tab *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> t->ng_shift);
}

/* Adds one reference n-gram occurrence; returns the n-gram's id. */
static inline uint32_t ng_insert(am_ngram_tab *t, uint64_t key)
{
    size_t mask = t->ng_cap - 1;
    size_t i = ng_slot(t, key);
    for (;;) {
        struct ng_ent *e = &t->ng[i];
        if (e->gen != t->gen) {
            assert(t->n_ids < t->cnt_cap);
            e->gen = t->gen;
            e->key = key;
            e->id = t->n_ids++;
            t->ref_cnt[e->id] = 1;
            t->hyp_cnt[e->id] = 0;
            return e->id;
        }
        if (e->key == key) {
            t->ref_cnt[e->id]++;
            return e->id;
        }
        i = (i + 1) & mask;
    }
}

/* Looks a hypothesis n-gram up: returns its id or AM_NGRAM_NONE. */
static inline uint32_t ng_find(const am_ngram_tab *t, uint64_t key)
{
    size_t mask = t->ng_cap - 1;
    size_t i = ng_slot(t, key);
    for (;;) {
        const struct ng_ent *e = &t->ng[i];
        if (e->gen != t->gen)
            return AM_NGRAM_NONE;
        if (e->key == key)
            return e->id;
        i = (i + 1) & mask;
    }
}

/* Key of the n-gram whose (n-1)-gram prefix has id prev (AM_NGRAM_NONE for
 * none: prev + 1 == 0, the root) and whose last token is tok. */
static inline uint64_t ng_key(enum am_ngram_kind kind, uint32_t prev, uint32_t tok)
{
    if (kind == AM_NGRAM_CHARS)
        return ((uint64_t)(prev + 1) << 21) | tok;
    return (1ULL << 63) | ((uint64_t)(prev + 1) << 32) | tok;
}

/* The loops of am_ngram_add_ref / am_ngram_match, inlined once per kind so
 * that the key layout is a constant. */
static inline void add_ref(am_ngram_tab *t, const uint32_t *seq, size_t n, size_t order,
                           enum am_ngram_kind kind)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t prev = AM_NGRAM_NONE;
        for (size_t k = 1; k <= order && i + k <= n; k++)
            prev = ng_insert(t, ng_key(kind, prev, seq[i + k - 1]));
    }
}

static inline void match(am_ngram_tab *t, const uint32_t *seq, size_t n, size_t order,
                         enum am_ngram_kind kind, int64_t *matched)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t prev = AM_NGRAM_NONE;
        for (size_t k = 1; k <= order && i + k <= n; k++) {
            uint32_t tok = seq[i + k - 1];
            if (tok == AM_NGRAM_NONE)
                break;
            prev = ng_find(t, ng_key(kind, prev, tok));
            if (prev == AM_NGRAM_NONE)
                break;
            if (t->hyp_cnt[prev] < t->ref_cnt[prev]) { /* clipped count */
                t->hyp_cnt[prev]++;
                matched[k - 1]++;
            }
        }
    }
}

void am_ngram_add_ref(am_ngram_tab *t, enum am_ngram_kind kind, const uint32_t *seq, size_t n,
                      size_t order)
{
    if (kind == AM_NGRAM_CHARS)
        add_ref(t, seq, n, order, AM_NGRAM_CHARS);
    else
        add_ref(t, seq, n, order, AM_NGRAM_WORDS);
}

void am_ngram_match(am_ngram_tab *t, enum am_ngram_kind kind, const uint32_t *seq, size_t n,
                    size_t order, int64_t *matched)
{
    if (kind == AM_NGRAM_CHARS)
        match(t, seq, n, order, AM_NGRAM_CHARS, matched);
    else
        match(t, seq, n, order, AM_NGRAM_WORDS, matched);
}

/* ---- words ------------------------------------------------------------------- */

/* The entry of word p[0..len) (hash h) in the word table, or the empty slot
 * of this generation where it would go (its gen differs from t->gen). */
static inline struct word_ent *wt_slot(const am_ngram_tab *t, const char *p, size_t len, uint64_t h)
{
    size_t mask = t->wt_cap - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        struct word_ent *e = &t->wt[i];
        if (e->gen != t->gen)
            return e;
        if (e->h == h && e->len == len && memcmp(e->p, p, len) == 0)
            return e;
        i = (i + 1) & mask;
    }
}

void am_ngram_intern(am_ngram_tab *t, const am_ngram_span *w, size_t n, uint32_t *ids)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t h = str_hash(w[k].p, w[k].len);
        struct word_ent *e = wt_slot(t, w[k].p, w[k].len, h);
        if (e->gen != t->gen) {
            assert(t->n_words < t->wt_cap / 2);
            e->gen = t->gen;
            e->h = h;
            e->p = w[k].p;
            e->len = (uint32_t)w[k].len;
            e->id = t->n_words++;
        }
        ids[k] = e->id;
    }
}

void am_ngram_lookup(const am_ngram_tab *t, const am_ngram_span *w, size_t n, uint32_t *ids)
{
    for (size_t k = 0; k < n; k++) {
        const struct word_ent *e = wt_slot(t, w[k].p, w[k].len, str_hash(w[k].p, w[k].len));
        ids[k] = e->gen == t->gen ? e->id : AM_NGRAM_NONE;
    }
}
