/*
 * ngram.h — clipped n-gram matching shared by BLEU (bleu.c) and chrF /
 * chrF++ (chrf.c).
 *
 * A segment's reference n-grams form a prefix trie stored in one
 * open-addressing hash table: an n-gram's 64-bit key is built from the id
 * of its (n-1)-gram prefix and its last token (enum am_ngram_kind), is
 * compared exactly (no hash-only equality), and maps to a dense n-gram id
 * whose reference and hypothesis counts live in flat arrays. Tokens are
 * code points, or word ids from the word table below; the two kinds of
 * n-gram have distinct keys, so they can share one table.
 * Hypothesis n-grams are only looked up: a position stops extending at the
 * first prefix the reference lacks (no longer n-gram there can match). A
 * match is counted while the n-gram's hypothesis count is below its
 * reference count, which sums min(hyp, ref) over distinct n-grams, i.e.
 * Python's Counter intersection.
 *
 * Words are interned (exact byte compare) to ids 0, 1, 2, ... per segment
 * in a second table. Both tables are emptied by bumping a generation stamp,
 * so a reused table allocates nothing once it has grown to the segment size.
 *
 * An am_ngram_tab has no global state; one table per thread (it is not
 * synchronized). Also here: the small helpers both metrics need (str.split()
 * tokens, a growable scratch array, overflow-checked int64 sums).
 */
#ifndef AM_NGRAM_H
#define AM_NGRAM_H

#include "am.h"

/* "No id": a hypothesis word absent from the reference, or a missing n-gram. */
#define AM_NGRAM_NONE UINT32_MAX

/* What an n-gram's tokens are, and its key:
 *   AM_NGRAM_CHARS: code points (< 2^21); key = ((prefix id + 1) << 21) | cp
 *   AM_NGRAM_WORDS: word ids (am_ngram_intern); key = 2^63 | ((prefix id + 1)
 *                   << 32) | word id
 * (prefix id + 1 = 0 for unigrams: the root). */
enum am_ngram_kind { AM_NGRAM_CHARS = 0, AM_NGRAM_WORDS = 1 };

/* A byte range s[0..len) of a caller-owned string (not NUL-terminated). */
typedef struct am_ngram_span {
    const char *p;
    size_t len;
} am_ngram_span;

/* Opaque reusable n-gram and word tables. */
typedef struct am_ngram_tab am_ngram_tab;

/* Creates an empty table into *out (caller frees with am_ngram_free).
 * Returns AM_OK, or AM_ERR_INVALID when out is NULL. */
int am_ngram_new(am_ngram_tab **out);

/* Frees t and everything it owns. NULL-safe. */
void am_ngram_free(am_ngram_tab *t);

/* Starts a segment: empties both tables and makes room for up to
 * max_ngrams reference n-gram occurrences (am_ngram_add_ref) and up to
 * max_words interned words (am_ngram_intern). Word ids restart at 0.
 * Strings interned before are forgotten (the table keeps no pointer to
 * them past the next am_ngram_begin). */
void am_ngram_begin(am_ngram_tab *t, size_t max_ngrams, size_t max_words);

/* Interns the n reference words w[0..n) and stores their ids in ids[0..n)
 * (equal bytes, equal id). The table keeps pointers into the words' strings:
 * they must stay valid until the next am_ngram_begin. The total interned
 * since am_ngram_begin must not exceed its max_words. */
void am_ngram_intern(am_ngram_tab *t, const am_ngram_span *w, size_t n, uint32_t *ids);

/* Stores in ids[0..n) the id of each hypothesis word w[i] among the words
 * interned since am_ngram_begin, or AM_NGRAM_NONE when it is not there. */
void am_ngram_lookup(const am_ngram_tab *t, const am_ngram_span *w, size_t n, uint32_t *ids);

/* Adds every reference n-gram of orders 1..order starting at each position
 * of seq[0..n), tokens of the given kind. The occurrences added since
 * am_ngram_begin must not exceed its max_ngrams, which must be below
 * 2^31 - 1 so that n-gram ids fit the keys. */
void am_ngram_add_ref(am_ngram_tab *t, enum am_ngram_kind kind, const uint32_t *seq, size_t n,
                      size_t order);

/* Matches every hypothesis n-gram of orders 1..order in seq[0..n) against
 * the reference n-grams of the same kind, and adds the clipped matches of
 * order k to matched[k-1] (matched has `order` entries). A token
 * AM_NGRAM_NONE matches nothing. Call once per segment side, after all
 * am_ngram_add_ref calls of the segment. */
void am_ngram_match(am_ngram_tab *t, enum am_ngram_kind kind, const uint32_t *seq, size_t n,
                    size_t order, int64_t *matched);

/* ---- helpers ------------------------------------------------------------ */

/* Python str.split() one token at a time: finds the first token of s[0..len)
 * at or after *pos (tokens are maximal runs of code points for which
 * str.isspace() is false). Returns 1 and sets *start to its first byte and
 * *pos to the byte after it; returns 0 when there is none. s need not be
 * NUL-terminated. */
int am_ngram_next_token(const char *s, size_t len, size_t *pos, size_t *start);

/* Python str.split() of s[0..len) into (*arr)[0..return value); *arr (with
 * capacity *cap, both owned by the caller, freed with free()) grows as needed.
 * The spans point into s. */
size_t am_ngram_split_py(const char *s, size_t len, am_ngram_span **arr, size_t *cap);

/* Makes the array arr (capacity *cap elements of sz bytes) hold at least n
 * elements and returns it: when it is too small it is freed and a larger one
 * allocated (contents are not kept) and *cap updated. The caller owns the
 * result and frees it with free(). */
void *am_ngram_grow(void *arr, size_t *cap, size_t n, size_t sz);

/* *a += b, unless the sum overflows: then *a is unchanged and AM_ERR_RANGE
 * is returned. Returns AM_OK otherwise. */
int am_ngram_add_i64(int64_t *a, int64_t b);

#endif
