/* am.c — common definitions of the scoring core (see am.h). */
#include "am.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *am_strerror(int err)
{
    switch (err) {
    case AM_OK: return "ok";
    case AM_ERR_NOMEM: return "out of memory";
    case AM_ERR_INVALID: return "invalid argument";
    case AM_ERR_UTF8: return "invalid UTF-8";
    case AM_ERR_NUL: return "NUL byte in text";
    case AM_ERR_PARSE: return "malformed input";
    case AM_ERR_RANGE: return "value out of range";
    case AM_ERR_NOTFOUND: return "not found";
    case AM_ERR_IO: return "I/O error";
    case AM_ERR_CONFLICT: return "conflict";
    case AM_ERR_INTERNAL: return "internal error";
    case AM_ERR_FULL: return "storage full";
    case AM_ERR_CANCELLED: return "cancelled (time budget exceeded)";
    case AM_ERR_UNAVAILABLE: return "database unavailable";
    default: return "unknown error";
    }
}

void am_cancel_init(am_cancel *c, int (*fn)(void *ctx), void *ctx)
{
    memset(c, 0, sizeof *c);
    c->fn = fn;
    c->ctx = ctx;
}

int am_cancel_spend(am_cancel *c, uint64_t units)
{
    if (!c)
        return 0;
    if (c->hit)
        return 1;
    c->spent += units;
    if (c->spent < AM_CANCEL_QUANTUM)
        return 0;
    c->spent = 0;
    c->checks++;
    if (c->fn && c->fn(c->ctx))
        c->hit = 1;
    return c->hit;
}

static void am_oom(size_t n)
{
    fprintf(stderr, "adaptmon: out of memory allocating %zu bytes\n", n);
    abort();
}

void *am_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        am_oom(n);
    return p;
}

void *am_xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        am_oom(nmemb * size);
    return p;
}

void *am_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        am_oom(n);
    return q;
}

char *am_xstrdup(const char *s)
{
    return am_xstrndup(s, strlen(s));
}

char *am_xstrndup(const char *s, size_t n)
{
    char *p = am_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---- am_buf ------------------------------------------------------------- */

void am_buf_init(am_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void am_buf_cleanup(am_buf *b)
{
    free(b->data);
    am_buf_init(b);
}

void am_buf_reset(am_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static void am_buf_grow(am_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    b->data = am_xrealloc(b->data, cap);
    b->cap = cap;
}

void am_buf_append(am_buf *b, const char *s, size_t n)
{
    am_buf_grow(b, n);
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void am_buf_appends(am_buf *b, const char *s)
{
    am_buf_append(b, s, strlen(s));
}

void am_buf_appendc(am_buf *b, char c)
{
    if (b->len + 2 <= b->cap) { /* room for c and the NUL: no call, no memcpy */
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return;
    }
    am_buf_append(b, &c, 1);
}

void am_buf_reserve(am_buf *b, size_t n)
{
    if (n > b->len)
        am_buf_grow(b, n - b->len);
}

void am_buf_printf(am_buf *b, const char *fmt, ...)
{
    va_list ap;
    /* gcc 12 at -O1 with -fsanitize=undefined (make asan) reports a "null
     * format string" on the sizing call below unless fmt is known not to be
     * NULL; no caller passes NULL, and one that did gets nothing appended. */
    if (!fmt)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    am_buf_grow(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *am_buf_str(const am_buf *b)
{
    return b->data ? b->data : "";
}

char *am_buf_detach(am_buf *b)
{
    char *s = b->data ? b->data : am_xstrdup("");
    am_buf_init(b);
    return s;
}

/* ---- array growth ------------------------------------------------------- */

void *am_grow(void *arr, size_t *cap, size_t need, size_t elem_size, size_t min)
{
    size_t c = *cap ? *cap : (min ? min : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2)
            c = need;
        else
            c *= 2;
    }
    if (elem_size && c > SIZE_MAX / elem_size) {
        fprintf(stderr, "adaptmon: array of %zu elements is too large\n", c);
        abort();
    }
    assert(c >= need);
    *cap = c;
    return am_xrealloc(arr, c * elem_size);
}

/* ---- hashing ------------------------------------------------------------ */

uint64_t am_fnv1a_n(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL; /* the 64-bit FNV prime */
    }
    return h;
}

uint32_t am_fnv1a32_n(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u; /* the 32-bit FNV prime */
    }
    return h;
}

uint64_t am_fnv1a(const char *s)
{
    return am_fnv1a_n(AM_FNV64_BASIS, s, strlen(s));
}

/* ---- am_toks ------------------------------------------------------------ */

/* Token storage: chunks that never move, so v's pointers stay valid while
 * the list grows; sizes double from 256 bytes to 64 KiB (a longer token gets a
 * chunk of its own). One allocation per chunk instead of one per token. */
struct am_toks_chunk {
    struct am_toks_chunk *next;
    size_t used, cap;
    char data[];
};

#define AM_TOKS_CHUNK_MIN 256
#define AM_TOKS_CHUNK_MAX 65536

void am_toks_init(am_toks *t)
{
    t->v = NULL;
    t->n = 0;
    t->cap = 0;
    t->chunks = NULL;
}

void am_toks_reset(am_toks *t)
{
    t->n = 0;
    if (!t->chunks)
        return;
    struct am_toks_chunk *c = t->chunks->next;
    while (c) {
        struct am_toks_chunk *next = c->next;
        free(c);
        c = next;
    }
    t->chunks->next = NULL;
    t->chunks->used = 0;
}

void am_toks_cleanup(am_toks *t)
{
    am_toks_reset(t);
    free(t->chunks);
    free(t->v);
    am_toks_init(t);
}

void am_toks_push(am_toks *t, const char *s, size_t n)
{
    AM_GROW(t->v, t->cap, t->n + 1, 16);
    struct am_toks_chunk *c = t->chunks;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = c ? 2 * c->cap : AM_TOKS_CHUNK_MIN;
        if (cap > AM_TOKS_CHUNK_MAX)
            cap = AM_TOKS_CHUNK_MAX;
        if (cap < n + 1)
            cap = n + 1;
        struct am_toks_chunk *nc = am_xmalloc(sizeof *nc + cap);
        nc->next = c;
        nc->used = 0;
        nc->cap = cap;
        t->chunks = c = nc;
    }
    char *d = c->data + c->used;
    memcpy(d, s, n);
    d[n] = '\0';
    c->used += n + 1;
    t->v[t->n++] = d;
}

void am_toks_pushs(am_toks *t, const char *s)
{
    am_toks_push(t, s, strlen(s));
}

void am_toks_join(const am_toks *t, am_buf *b)
{
    am_buf_reset(b);
    am_buf_append(b, "", 0);
    for (size_t i = 0; i < t->n; i++) {
        if (i)
            am_buf_appendc(b, ' ');
        am_buf_appends(b, t->v[i]);
    }
}

static int am_ascii_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

void am_toks_split_ascii(am_toks *t, const char *s)
{
    const char *p = s;
    while (*p) {
        while (*p && am_ascii_space((unsigned char)*p))
            p++;
        const char *start = p;
        while (*p && !am_ascii_space((unsigned char)*p))
            p++;
        if (p > start)
            am_toks_push(t, start, (size_t)(p - start));
    }
}

int am_py_isspace(int32_t cp)
{
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F))
        return 1;
    if (cp < 0x80)
        return 0;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

size_t am_utf8_decode(const char *s, size_t len, int32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80 || len < 2) {
        *cp = u[0];
        return 1;
    }
    if ((u[0] & 0xE0) == 0xC0) {
        *cp = ((int32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F);
        return 2;
    }
    if ((u[0] & 0xF0) == 0xE0 && len >= 3) {
        *cp = ((int32_t)(u[0] & 0x0F) << 12) | ((int32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
        return 3;
    }
    if (len >= 4) {
        *cp = ((int32_t)(u[0] & 0x07) << 18) | ((int32_t)(u[1] & 0x3F) << 12) |
              ((int32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F);
        return 4;
    }
    *cp = u[0];
    return 1;
}

size_t am_utf8_encode(int32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Whether the code point at s[i] (i < len) is Python whitespace; its byte
 * length in *n (am_utf8_decode's). ASCII without a call. */
static int am_py_space_at(const char *s, size_t len, size_t i, size_t *n)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *n = 1;
        return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    }
    int32_t cp;
    *n = am_utf8_decode(s + i, len - i, &cp);
    return am_py_isspace(cp);
}

/* 1 for the bytes that are, or may start, a Python whitespace code point:
 * the ASCII ones and the lead bytes of U+0085/U+00A0 (C2), U+1680 (E1),
 * U+2000..U+205F (E2) and U+3000 (E3). Every other byte, continuation
 * bytes included, is inside a token. */
static const unsigned char am_py_space_lead[256] = {
    [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1, [0x1C] = 1, [0x1D] = 1,
    [0x1E] = 1, [0x1F] = 1, [0x20] = 1, [0xC2] = 1, [0xE1] = 1, [0xE2] = 1, [0xE3] = 1,
};

size_t am_py_token_end(const char *s, size_t len, size_t i)
{
    const unsigned char *u = (const unsigned char *)s;
    while (i < len) {
        size_t n;
        if (!am_py_space_lead[u[i]]) { /* no whitespace starts here */
            i++;
            continue;
        }
        if (am_py_space_at(s, len, i, &n))
            break;
        i += n;
    }
    return i;
}

/* The next whitespace-delimited token of s[*i..len) (Python's str.split()):
 * returns 1 with it at s[*start..*i), 0 at the end. */
static int am_py_next(const char *s, size_t len, size_t *i, size_t *start)
{
    while (*i < len) {
        size_t n;
        /* skip whitespace */
        while (*i < len && am_py_space_at(s, len, *i, &n))
            *i += n;
        *start = *i;
        *i = am_py_token_end(s, len, *i);
        if (*i > *start)
            return 1;
    }
    return 0;
}

void am_toks_split_py(am_toks *t, const char *s)
{
    size_t len = strlen(s), i = 0, start;
    while (am_py_next(s, len, &i, &start))
        am_toks_push(t, s + start, i - start);
}

size_t am_toks_count_py(const char *s)
{
    size_t len = strlen(s), i = 0, start, n = 0;
    while (am_py_next(s, len, &i, &start))
        n++;
    return n;
}

int am_ascii_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return 0;
    }
    return *a == *b;
}
