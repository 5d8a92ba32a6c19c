/*
 * alam2021_int.h — private declarations shared by the files of profile
 * `alam2021` (alam2021.c: per segment and corpus; alam2021_re.c: the term
 * searches; alam2021_ter.c: TERm). Not a public interface.
 */
#ifndef AM_ALAM2021_INT_H
#define AM_ALAM2021_INT_H

#include "compat/alam2021.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* A compiled search for one pattern: a memcmp for a literal term (the
 * common case), else PCRE2. Owned by its rx_set. */
typedef struct finder {
    char *pat; /* the Python pattern (owned) */
    size_t n;
    int literal;
    int bad; /* not in the subset: every search for it fails */
    pcre2_code *re; /* NULL when literal or bad */
} finder;

/* The patterns of one am_alam_score call, each compiled once (hashed by
 * text), and the match data and limits of that call (no global state). */
typedef struct rx_set {
    finder *v;
    size_t n, cap;
    size_t *slot; /* open addressing over v, (size_t)-1 = empty */
    size_t nslot;
    pcre2_match_data *md;
    pcre2_match_context *mc;
} rx_set;

/* TERm's state (alam2021_ter.c): the reference and its term positions, the
 * prefix-row cache, its scratch and the work counter. Reused across the
 * segments of one call (alam_ter_cleanup frees it). */
typedef struct ter_ctx {
    size_t m; /* reference length */
    const int *r; /* reference token ids */
    const unsigned char *term; /* per reference position, may be NULL */
    int cost; /* C */
    /* prefix trie: node 0 is the root */
    int *tok, *child, *sib, *rowix; /* rowix: index of the stored row or -1 */
    unsigned char *tmode; /* 1 = row written in term mode */
    size_t nnodes, capnodes;
    int *rows; /* stored rows, (m + 1) ints each; row 0 is the root's */
    size_t nrows, caprows;
    int *scratch; /* two rows */
    int *path; /* nodes of the current walk, by depth */
    size_t cappath;
    /* w(j) for j = 0..m (w(m) = 1): with term costs, and all ones */
    int *wterm, *wunit;
    uint64_t cells; /* edit-distance cells computed for this segment */
    int over; /* cells passed AM_ALAM_TER_MAX_CELLS: the run was abandoned */
} ter_ctx;

/* An empty set with its match data and limits; pair with rx_set_cleanup. */
void alam_rx_set_init(rx_set *s);

void alam_rx_set_cleanup(rx_set *s);

/* The compiled finder of pattern pat[0..n) (borrowed; copied), compiled on
 * first use. Returns NULL when the pattern is outside the subset. */
const finder *alam_rx_find(rx_set *s, const char *pat, size_t n);

/* Finds the first position at or after code point start `from` of
 * t[0..len) where f matches (re.finditer's "(?=…)" positions, in bytes:
 * the callers compare and count them, never index characters). Returns 1
 * and *at, 0 when there is none, AM_ERR_INVALID when a limit stopped the
 * match. */
int alam_rx_next(const finder *f, rx_set *s, const char *t, size_t len, size_t from, size_t *at);

/* Next code-point start after pos. */
size_t alam_next_cp(const char *t, size_t len, size_t pos);

void alam_ter_cleanup(ter_ctx *c);

int alam_term_ter_ctx(ter_ctx *c, const char *const *hyp, size_t nhyp, const char *const *ref,
                      size_t nref, const unsigned char *is_term, int term_cost, double *out);

#endif
