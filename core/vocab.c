/* vocab.c — string → int64 hash map with owned keys (see vocab.h). */
#include "vocab.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define VOCAB_CHUNK 65536u
#define VOCAB_CHUNK_MIN 1024u
#define VOCAB_MIN_SLOTS 16u

typedef struct vocab_entry {
    const char *key; /* in the arena, NUL-terminated */
    size_t len;
    uint64_t hash;
    int64_t val;
} vocab_entry;

typedef struct vocab_chunk {
    char *mem;
    size_t cap, used;
} vocab_chunk;

struct am_vocab {
    vocab_entry *ent; /* dense, insertion order */
    size_t n, cap;
    uint32_t *slot; /* 0 = empty, else entry index + 1 */
    size_t nslots; /* power of two */
    vocab_chunk *chunk;
    size_t nchunks, chunkcap;
    size_t cur; /* chunk being filled; earlier ones are full */
};

/* 64-bit hash of s[0..n): 8-byte blocks mixed with multiplications, then
 * murmur3's finalizer. Not cryptographic; inputs are the caller's text. */
uint64_t am_vocab_hash(const char *s, size_t n)
{
    const uint64_t m = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ ((uint64_t)n * m);
    while (n >= 8) {
        uint64_t k;
        memcpy(&k, s, 8);
        k *= 0xBF58476D1CE4E5B9ull;
        k ^= k >> 31;
        h = (h ^ k) * m;
        s += 8;
        n -= 8;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t |= (uint64_t)(unsigned char)s[i] << (8 * i);
    h = (h ^ (t * 0x94D049BB133111EBull)) * m;
    return am_mix64(h);
}

am_vocab *am_vocab_new(void)
{
    am_vocab *v = am_xcalloc(1, sizeof *v);
    return v;
}

void am_vocab_free(am_vocab *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->nchunks; i++)
        free(v->chunk[i].mem);
    free(v->chunk);
    free(v->slot);
    free(v->ent);
    free(v);
}

void am_vocab_clear(am_vocab *v)
{
    v->n = 0;
    if (v->slot)
        memset(v->slot, 0, v->nslots * sizeof *v->slot);
    for (size_t i = 0; i < v->nchunks; i++)
        v->chunk[i].used = 0;
    v->cur = 0;
}

size_t am_vocab_count(const am_vocab *v)
{
    return v->n;
}

size_t am_vocab_bytes(const am_vocab *v)
{
    size_t b = sizeof *v + v->cap * sizeof *v->ent + v->nslots * sizeof *v->slot +
               v->chunkcap * sizeof *v->chunk;
    for (size_t i = 0; i < v->nchunks; i++)
        b += v->chunk[i].cap;
    return b;
}

/* Copies s[0..n) plus a NUL into the arena. */
static const char *vocab_store(am_vocab *v, const char *s, size_t n)
{
    vocab_chunk *c = NULL;
    /* Fill the chunks in order (after a clear they are reused). */
    while (v->cur < v->nchunks) {
        if (v->chunk[v->cur].cap - v->chunk[v->cur].used >= n + 1) {
            c = &v->chunk[v->cur];
            break;
        }
        v->cur++;
    }
    if (!c) {
        AM_GROW(v->chunk, v->chunkcap, v->nchunks + 1, 4);
        c = &v->chunk[v->nchunks++];
        /* chunks grow from 1 KiB to VOCAB_CHUNK: small sets (stopwords, one
         * per cached session scorer) stay small (bench/README.md, memory) */
        size_t want = v->nchunks > 1 ? v->chunk[v->nchunks - 2].cap * 2 : VOCAB_CHUNK_MIN;
        if (want > VOCAB_CHUNK)
            want = VOCAB_CHUNK;
        c->cap = n + 1 > want ? n + 1 : want;
        c->mem = am_xmalloc(c->cap);
        c->used = 0;
    }
    char *p = c->mem + c->used;
    memcpy(p, s, n);
    p[n] = '\0';
    c->used += n + 1;
    return p;
}

/* Returns the slot index holding key, or the empty slot where it belongs. */
static size_t vocab_find(const am_vocab *v, const char *key, size_t len, uint64_t h)
{
    size_t mask = v->nslots - 1;
    size_t i = (size_t)h & mask;
    for (;;) {
        uint32_t s = v->slot[i];
        if (s == 0)
            return i;
        const vocab_entry *e = &v->ent[s - 1];
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            return i;
        i = (i + 1) & mask;
    }
}

static void vocab_rehash(am_vocab *v, size_t nslots)
{
    free(v->slot);
    v->slot = am_xcalloc(nslots, sizeof *v->slot);
    v->nslots = nslots;
    size_t mask = nslots - 1;
    for (size_t k = 0; k < v->n; k++) {
        size_t i = (size_t)v->ent[k].hash & mask;
        while (v->slot[i])
            i = (i + 1) & mask;
        v->slot[i] = (uint32_t)(k + 1);
    }
}

/* Returns the entry for key, inserting it with value 0 when absent
 * (*inserted set accordingly). */
static vocab_entry *vocab_upsert(am_vocab *v, const char *key, size_t len, int *inserted)
{
    uint64_t h = am_vocab_hash(key, len);
    /* Keep the load factor at most 1/2. */
    if ((v->n + 1) * 2 > v->nslots)
        vocab_rehash(v, v->nslots ? v->nslots * 2 : VOCAB_MIN_SLOTS);
    size_t i = vocab_find(v, key, len, h);
    if (v->slot[i]) {
        *inserted = 0;
        return &v->ent[v->slot[i] - 1];
    }
    AM_GROW(v->ent, v->cap, v->n + 1, 16);
    assert(v->n < UINT32_MAX);
    vocab_entry *e = &v->ent[v->n];
    e->key = vocab_store(v, key, len);
    e->len = len;
    e->hash = h;
    e->val = 0;
    v->slot[i] = (uint32_t)(++v->n);
    *inserted = 1;
    return e;
}

int am_vocab_getn(const am_vocab *v, const char *key, size_t len, int64_t *val)
{
    if (v->n == 0)
        return 0;
    size_t i = vocab_find(v, key, len, am_vocab_hash(key, len));
    if (!v->slot[i])
        return 0;
    if (val)
        *val = v->ent[v->slot[i] - 1].val;
    return 1;
}

int am_vocab_get(const am_vocab *v, const char *key, int64_t *val)
{
    return am_vocab_getn(v, key, strlen(key), val);
}

int am_vocab_contains(const am_vocab *v, const char *key)
{
    return am_vocab_getn(v, key, strlen(key), NULL);
}

int am_vocab_insertn(am_vocab *v, const char *key, size_t len, int64_t val)
{
    int inserted;
    vocab_entry *e = vocab_upsert(v, key, len, &inserted);
    if (inserted)
        e->val = val;
    return inserted;
}

int am_vocab_insert(am_vocab *v, const char *key, int64_t val)
{
    return am_vocab_insertn(v, key, strlen(key), val);
}

void am_vocab_set(am_vocab *v, const char *key, int64_t val)
{
    int inserted;
    vocab_upsert(v, key, strlen(key), &inserted)->val = val;
}

int64_t am_vocab_addn(am_vocab *v, const char *key, size_t len, int64_t delta)
{
    int inserted;
    vocab_entry *e = vocab_upsert(v, key, len, &inserted);
    e->val += delta;
    return e->val;
}

int64_t am_vocab_add(am_vocab *v, const char *key, int64_t delta)
{
    return am_vocab_addn(v, key, strlen(key), delta);
}

int am_vocab_next(const am_vocab *v, size_t *it, const char **key, int64_t *val)
{
    if (*it >= v->n)
        return 0;
    const vocab_entry *e = &v->ent[(*it)++];
    if (key)
        *key = e->key;
    if (val)
        *val = e->val;
    return 1;
}

static int vocab_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* Parses one "count word" line s[0..n) (no '\n'). Returns AM_OK (also for a
 * blank line), AM_ERR_PARSE or AM_ERR_RANGE with *msg set. */
static int vocab_parse_line(const char *s, size_t n, am_vocab *v, const char **msg)
{
    const char *p = s, *end = s + n;
    while (p < end && vocab_is_space(*p))
        p++;
    if (p == end)
        return AM_OK;
    const char *cs = p;
    while (p < end && !vocab_is_space(*p))
        p++;
    const char *ce = p;
    while (p < end && vocab_is_space(*p))
        p++;
    const char *ws = p;
    while (p < end && !vocab_is_space(*p))
        p++;
    const char *we = p;
    while (p < end && vocab_is_space(*p))
        p++;
    if (ws == we) {
        *msg = "expected \"count word\", found one field";
        return AM_ERR_PARSE;
    }
    if (p != end) {
        *msg = "expected \"count word\", found more than two fields";
        return AM_ERR_PARSE;
    }
    int64_t count = 0;
    for (const char *c = cs; c < ce; c++) {
        if (*c < '0' || *c > '9') {
            *msg = "count is not a non-negative decimal integer";
            return AM_ERR_PARSE;
        }
        int d = *c - '0';
        if (count > (INT64_MAX - d) / 10) {
            *msg = "count is too large";
            return AM_ERR_RANGE;
        }
        count = count * 10 + d;
    }
    int inserted;
    vocab_entry *e = vocab_upsert(v, ws, (size_t)(we - ws), &inserted);
    if (e->val > INT64_MAX - count) {
        *msg = "sum of the counts of a repeated word is too large";
        return AM_ERR_RANGE;
    }
    e->val += count;
    return AM_OK;
}

int am_vocab_parse_counts(const char *buf, size_t len, am_vocab *v, size_t *err_line,
                          const char **err_msg)
{
    const char *msg = NULL;
    size_t off = 0;
    int rc = am_text_validate(buf, len, &off);
    if (rc != AM_OK) {
        size_t line = 1;
        for (size_t i = 0; i < off && i < len; i++)
            line += buf[i] == '\n';
        if (err_line)
            *err_line = line;
        if (err_msg)
            *err_msg = rc == AM_ERR_NUL ? "NUL byte" : "invalid UTF-8";
        return rc;
    }
    size_t line = 1;
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        rc = vocab_parse_line(p, (size_t)(eol - p), v, &msg);
        if (rc != AM_OK) {
            if (err_line)
                *err_line = line;
            if (err_msg)
                *err_msg = msg;
            return rc;
        }
        line++;
        p = eol + (eol < end);
    }
    return AM_OK;
}
