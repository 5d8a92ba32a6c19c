/*
 * vocab.h — a fast string → int64 hash map with owned keys.
 *
 * Used as the in-memory occurrence history (occ[w]) of the CLI, as the
 * background vocabularies of the novel-word recall variant (`count word`
 * lines), and as the set behind stopword lists.
 *
 * Open addressing (linear probing) over an index table; entries live in a
 * dense array in insertion order, so iteration order is insertion order and
 * deterministic. Keys are copied into an internal arena and freed with the
 * map. No removal. Reads (get/iterate) on a map that nobody modifies may run
 * from many threads at once; modifications need exclusive access.
 */
#ifndef AM_VOCAB_H
#define AM_VOCAB_H

#include "am.h"

typedef struct am_vocab am_vocab;

/* Creates an empty map. Never returns NULL (aborts on OOM). Caller frees
 * with am_vocab_free. */
am_vocab *am_vocab_new(void);
/* Frees the map and its keys. NULL is allowed. */
void am_vocab_free(am_vocab *v);
/* Removes every entry, keeping the allocations for reuse. */
void am_vocab_clear(am_vocab *v);
/* Number of entries. */
size_t am_vocab_count(const am_vocab *v);
/* The heap memory the map holds (its arrays and key arena), in bytes. */
size_t am_vocab_bytes(const am_vocab *v);

/* Looks up key (NUL-terminated). Returns 1 and stores the value in *val
 * (val may be NULL) when present, 0 when absent. */
int am_vocab_get(const am_vocab *v, const char *key, int64_t *val);
/* As am_vocab_get for key[0..len) (need not be NUL-terminated; may hold any
 * byte but NUL). */
int am_vocab_getn(const am_vocab *v, const char *key, size_t len, int64_t *val);
/* True when key is present. */
int am_vocab_contains(const am_vocab *v, const char *key);

/* Inserts key with value val when absent (returns 1) and leaves the map
 * unchanged when present (returns 0). The key is copied. */
int am_vocab_insert(am_vocab *v, const char *key, int64_t val);
int am_vocab_insertn(am_vocab *v, const char *key, size_t len, int64_t val);
/* Sets key to val (inserting it when absent). The key is copied. */
void am_vocab_set(am_vocab *v, const char *key, int64_t val);
/* Adds delta to key's value (an absent key starts at 0) and returns the new
 * value. The key is copied when inserted. */
int64_t am_vocab_add(am_vocab *v, const char *key, int64_t delta);
int64_t am_vocab_addn(am_vocab *v, const char *key, size_t len, int64_t delta);

/* The map's 64-bit hash of s[0..n) (deterministic, not cryptographic);
 * exposed so that callers can build small index sets over their own
 * strings with the same function. */
uint64_t am_vocab_hash(const char *s, size_t n);

/* Iteration in insertion order:
 *     size_t it = 0; const char *k; int64_t val;
 *     while (am_vocab_next(v, &it, &k, &val)) ...
 * Returns 1 and the next entry (key owned by the map, valid until the map is
 * cleared or freed; key/val may be NULL), or 0 at the end. The map must not
 * be modified during an iteration. */
int am_vocab_next(const am_vocab *v, size_t *it, const char **key, int64_t *val);

/* Parses a background vocabulary: lines "count word" (as rk.rb reads them:
 * fields separated by ASCII whitespace; count a non-negative decimal
 * integer that fits int64; exactly two fields). Blank lines are skipped;
 * "\r\n" line ends are accepted. A word listed twice gets the sum of its
 * counts. buf[0..len) must be valid UTF-8 without NUL bytes. Entries are
 * added to v (which need not be empty). On error nothing is guaranteed about
 * v's content (the caller discards it), *err_line (may be NULL) receives the
 * 1-based line number and *err_msg (may be NULL) a static description.
 * Returns AM_OK; AM_ERR_NUL / AM_ERR_UTF8 for bad bytes; AM_ERR_PARSE for a
 * malformed line; AM_ERR_RANGE for a count above INT64_MAX. */
int am_vocab_parse_counts(const char *buf, size_t len, am_vocab *v, size_t *err_line,
                          const char **err_msg);

#endif
