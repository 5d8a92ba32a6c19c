/*
 * am.h — common definitions of the adaptmon scoring core.
 *
 * Error codes, allocation wrappers, a growable byte buffer (am_buf) and a
 * token list (am_toks). Everything in core/ builds on these. The core does
 * no I/O and keeps no global mutable state, so every function here may be
 * called from many threads at once on distinct objects.
 *
 * Conventions (docs/architecture.md, "Conventions"): functions return int, 0 (AM_OK) on success or
 * a negative enum am_err; results go through out-parameters; ownership is stated in the comment
 * above each function.
 */
#ifndef AM_H
#define AM_H

#include <stddef.h>
#include <stdint.h>

enum am_err {
    AM_OK = 0,
    AM_ERR_NOMEM = -1, /* allocation failed (the x-wrappers abort instead) */
    AM_ERR_INVALID = -2, /* invalid argument or option value */
    AM_ERR_UTF8 = -3, /* input is not valid UTF-8 */
    AM_ERR_NUL = -4, /* input contains a NUL byte */
    AM_ERR_PARSE = -5, /* malformed structured input (CSV, JSON, SGML, TBX) */
    AM_ERR_RANGE = -6, /* a value or size is outside the allowed range */
    AM_ERR_NOTFOUND = -7, /* a named thing (language, list, id) does not exist */
    AM_ERR_IO = -8, /* I/O failure (server/CLI only; core never does I/O) */
    AM_ERR_CONFLICT = -9, /* state conflict (server only) */
    AM_ERR_INTERNAL = -10, /* broken invariant or library failure */
    AM_ERR_FULL = -11, /* the disk or the database size limit is full (server only) */
    AM_ERR_CANCELLED = -12, /* the caller's cancel check asked to stop (am_cancel) */
    AM_ERR_UNAVAILABLE = -13 /* the database server is unreachable, or a commit's outcome is
                                unknown (server only: PostgreSQL); retry later */
};

/* Returns a static, human-readable name for an am_err code ("invalid UTF-8", ...). */
const char *am_strerror(int err);

/* Allocation wrappers: never return NULL; on allocation failure they print a
 * message to stderr and abort() (as redis does), so callers need not test.
 * Memory is released with free(). */
void *am_xmalloc(size_t n);
void *am_xcalloc(size_t nmemb, size_t size);
void *am_xrealloc(void *p, size_t n);
char *am_xstrdup(const char *s);
char *am_xstrndup(const char *s, size_t n);

/* Array growth, the one idiom for growable arrays: AM_GROW(arr, cap, need,
 * min) makes arr (an lvalue pointer, malloc'd or NULL) hold at least need
 * elements, with cap (a size_t lvalue) its capacity in elements; capacity
 * doubles from min (amortized O(1) appends). Aborts on overflow as the
 * x-wrappers do. am_grow is its slow path: returns the reallocated array. */
void *am_grow(void *arr, size_t *cap, size_t need, size_t elem_size, size_t min);
#define AM_GROW(arr, cap, need, min)                                                               \
    ((need) > (cap) ? (void)((arr) = am_grow((arr), &(cap), (need), sizeof *(arr), (min)))         \
                    : (void)0)

/* 64-bit FNV-1a hash of the NUL-terminated s (hash tables, and the
 * informational body_hash column of stored segments). */
uint64_t am_fnv1a(const char *s);
/* FNV-1a of the n bytes at p (borrowed), continuing from h: start with
 * AM_FNV64_BASIS (64 bits) or AM_FNV32_BASIS (32 bits, am_fnv1a32_n). The
 * one FNV implementation of the tree. */
#define AM_FNV64_BASIS 14695981039346656037ULL
#define AM_FNV32_BASIS 2166136261u
uint64_t am_fnv1a_n(uint64_t h, const void *p, size_t n);
/* A 64-bit finalizer (MurmurHash3's fmix64): spreads every input bit over
 * the result, for hash tables indexed by the low bits. */
static inline uint64_t am_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
uint32_t am_fnv1a32_n(uint32_t h, const void *p, size_t n);

/* True when a and b (borrowed) are equal ignoring ASCII case. */
int am_ascii_ieq(const char *a, const char *b);

/* ---- am_cancel: cooperative cancellation --------------------------------
 * The core never reads a clock. A caller that wants long work abandoned (a
 * deadline, a shutdown) hands the workspace an am_cancel with its own check
 * fn(ctx) (non-zero: stop). Long loops report their work in rough units
 * (about one inner-loop step each) with am_cancel_spend, which asks fn once
 * every AM_CANCEL_QUANTUM units; once fn said stop, every later call says
 * stop too (sticky), and the loop returns AM_ERR_CANCELLED. The struct is
 * plain data owned by the caller; one per thread (not thread-safe). */
#define AM_CANCEL_QUANTUM ((uint64_t)1 << 20)
typedef struct am_cancel {
    int (*fn)(void *ctx); /* the caller's check; NULL: never cancels */
    void *ctx; /* borrowed, passed to fn */
    uint64_t spent; /* units since the last check */
    uint64_t checks; /* how many times fn was asked (tests, diagnostics) */
    int hit; /* 1 once fn asked to stop */
} am_cancel;

/* Initializes c with the check fn(ctx) (fn may be NULL). */
void am_cancel_init(am_cancel *c, int (*fn)(void *ctx), void *ctx);
/* Accounts units of work; returns non-zero when the work must stop. c may
 * be NULL (never stops). */
int am_cancel_spend(am_cancel *c, uint64_t units);

/* ---- am_buf: growable, always NUL-terminated byte buffer ---------------- */
typedef struct am_buf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len; /* bytes used, excluding the terminating NUL */
    size_t cap;
} am_buf;

/* Initializes an empty buffer (no allocation). Pair with am_buf_cleanup. */
void am_buf_init(am_buf *b);
/* Frees the buffer's memory and leaves it empty and reusable. */
void am_buf_cleanup(am_buf *b);
/* Sets length to 0, keeping the allocation. */
void am_buf_reset(am_buf *b);
void am_buf_append(am_buf *b, const char *s, size_t n);
void am_buf_appends(am_buf *b, const char *s);
void am_buf_appendc(am_buf *b, char c);
/* Makes room for n bytes in all (a hint: appends grow the buffer anyway). */
void am_buf_reserve(am_buf *b, size_t n);
/* printf-style append. */
void am_buf_printf(am_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Returns the buffer's string ("" when empty); valid until the next change. */
const char *am_buf_str(const am_buf *b);
/* Transfers ownership of the string to the caller (caller frees) and leaves
 * the buffer empty. Never returns NULL. */
char *am_buf_detach(am_buf *b);

/* ---- am_toks: list of tokens, each an owned NUL-terminated string ------- */
struct am_toks_chunk;
typedef struct am_toks {
    char **v; /* v[0..n-1], each stored in the list's chunks */
    size_t n;
    size_t cap;
    struct am_toks_chunk *chunks; /* token storage, newest first (owned) */
} am_toks;

void am_toks_init(am_toks *t);
/* Frees every token and the array; the list is empty and reusable after. */
void am_toks_cleanup(am_toks *t);
/* Empties the list, keeping the array and the newest storage chunk for
 * reuse. Tokens are never freed one by one: a token stays valid until the
 * list is reset or cleaned up (dropping pointers from v, e.g. to filter it
 * in place or to shorten it, is fine). */
void am_toks_reset(am_toks *t);
/* Appends a copy of s[0..n). */
void am_toks_push(am_toks *t, const char *s, size_t n);
void am_toks_pushs(am_toks *t, const char *s);
/* Joins the tokens with one ASCII space into b (b is reset first). */
void am_toks_join(const am_toks *t, am_buf *b);

/* Splits on ASCII whitespace (space, \t, \n, \v, \f, \r), as Ruby's
 * String#split and rk.rb do. Appends to t (does not reset it). */
void am_toks_split_ascii(am_toks *t, const char *s);
/* Splits as Python's str.split() with no argument: on every code point for
 * which str.isspace() is true (ASCII whitespace, U+001C..U+001F, U+0085,
 * U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
 * s must be valid UTF-8. Appends to t. sacreBLEU splits tokenized text so. */
void am_toks_split_py(am_toks *t, const char *s);
/* The number of tokens am_toks_split_py would give, without copying them. */
size_t am_toks_count_py(const char *s);

/* Decodes one UTF-8 code point at s (which must be valid UTF-8, len > 0).
 * Stores it in *cp and returns the number of bytes consumed (1..4). */
size_t am_utf8_decode(const char *s, size_t len, int32_t *cp);
/* Encodes cp as UTF-8 into out (at least 4 bytes); returns the byte count. */
size_t am_utf8_encode(int32_t cp, char *out);
/* True when cp is whitespace for Python's str.isspace(). */
int am_py_isspace(int32_t cp);
/* The end of the run of non-whitespace (Python str.isspace()) code points
 * of s[0..len) that starts at byte i: the byte of the first whitespace
 * code point at or after i, or len. Bytes that cannot start whitespace are
 * passed without decoding. */
size_t am_py_token_end(const char *s, size_t len, size_t i);

#endif
