/*
 * ci_cache.h — the per-segment statistics of GET …/metrics?ci= kept between
 * requests, one entry per session: a long session's confidence intervals
 * then cost a bootstrap over columns already in memory plus the segments
 * posted since the last request, not a re-parse and re-scoring of every
 * stored segment (bench/README.md, "?ci= at memory speed").
 *
 * An entry is valid for a session incarnation and its rewrite count (the
 * stamp of am_store_segments_each_at): appending segments leaves its rows
 * valid and it is extended from its last seq; a PUT, DELETE, replay or
 * rescore changes the rewrite count and the entry is rebuilt. Entries are
 * taken out while a request extends them (one request at a time works on a
 * session's entry; a concurrent one builds its own) and put back after.
 * Bounded by bytes, least recently used evicted, and the bytes are counted
 * in the session cache's memory budget (am_sessions_charge). Thread-safe.
 */
#ifndef AM_CI_CACHE_H
#define AM_CI_CACHE_H

#include "sessions.h"
#include "sig.h"

#include <stddef.h>
#include <stdint.h>

typedef struct am_cicache am_cicache;

/* One session's statistics (owned by whoever took it or the cache). */
typedef struct am_ci_entry {
    char *id; /* session id */
    int64_t incarnation;
    int64_t stamp[2]; /* am_store_segments_each_at's (incarnation, rewrites); -1: none yet */
    int64_t last_seq; /* the rows hold every segment with seq <= last_seq */
    char *options; /* the session's stored options text: the scorer's settings */
    size_t nsys;
    char **names; /* [nsys] system names in the columns' order */
    am_sig_collect *col; /* the rows; its scorer rebound per request */
    size_t charged; /* bytes counted in the budget while in the cache */
    struct am_ci_entry *prev, *next; /* the cache's LRU list */
} am_ci_entry;

/* A new cache of at most max_bytes (0: no entry is kept) whose bytes are
 * charged to sessions (borrowed; NULL: not charged; must outlive the
 * cache). Caller frees with am_cicache_free. */
am_cicache *am_cicache_new(size_t max_bytes, am_sessions *sessions);
/* Frees c and every entry (their charges returned); NULL is ignored. */
void am_cicache_free(am_cicache *c);

/* A new empty entry for session id at incarnation with the session's
 * options text, systems names[0..nsys) (copied) and scorer s (borrowed,
 * see am_sig_collect_bind). Caller owns it. */
am_ci_entry *am_ci_entry_new(const char *id, int64_t incarnation, const char *options,
                             const char *const *names, size_t nsys, const am_scorer *s);
/* Non-zero when e was made for this incarnation, options text and systems
 * and could be rebound to s (then it is). */
int am_ci_entry_fits(am_ci_entry *e, int64_t incarnation, const char *options,
                     const char *const *names, size_t nsys, const am_scorer *s);
void am_ci_entry_free(am_ci_entry *e);

/* Takes the entry of id out of c (the caller owns it), or NULL. c may be
 * NULL. */
am_ci_entry *am_cicache_take(am_cicache *c, const char *id);
/* Hands e (owned) to c, replacing an entry of the same id that another
 * request put meanwhile when e holds more segments (else e is freed), and
 * evicting the least recently used past the byte bound; an entry larger
 * than the bound is freed. c may be NULL (e is freed). */
void am_cicache_put(am_cicache *c, am_ci_entry *e);
/* Entries and bytes held (tests, diagnostics). */
void am_cicache_usage(am_cicache *c, size_t *entries, size_t *bytes);

#endif
