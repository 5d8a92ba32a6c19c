/*
 * answer_cache.h — a bounded, thread-safe cache of finished GET …/metrics
 * answer bodies, one entry per session, keyed by (session id, incarnation,
 * session version). The session version is bumped by every change of the
 * session and the incarnation by every creation (a deleted and re-created id
 * starts its versions again), so a body found for the pair just read from the
 * session row is the body a fresh build would produce. Least recently used entries are evicted past
 * AM_ACACHE_MAX_ENTRIES entries or AM_ACACHE_MAX_BYTES body bytes.
 */
#ifndef AM_ANSWER_CACHE_H
#define AM_ANSWER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define AM_ACACHE_MAX_ENTRIES 4096
#define AM_ACACHE_MAX_BYTES ((size_t)32 << 20)

typedef struct am_acache am_acache;

/* A new empty cache bounded by max_entries entries and max_bytes body bytes;
 * the caller owns it (free with am_acache_free). NULL when out of memory. */
am_acache *am_acache_new(size_t max_entries, size_t max_bytes);
/* Frees c and every body it holds; NULL is ignored. */
void am_acache_free(am_acache *c);

/* A ticket to take before reading the session state a body will be built
 * from; am_acache_put refuses the body if a drop happened since (so a body of
 * a deleted session cannot outlive the drop). */
uint64_t am_acache_ticket(am_acache *c);

/* On a hit, *body receives a malloc'd, NUL-terminated copy (owned by the
 * caller) of the body stored for exactly (id, incarnation, version) and *len
 * its length; returns AM_OK. Returns AM_ERR_NOTFOUND otherwise (body
 * untouched). */
int am_acache_get(am_acache *c, const char *id, int64_t incarnation, int64_t version, char **body,
                  size_t *len);

/* Stores a copy of body (borrowed) for (id, incarnation, version), replacing
 * an older one of id; ignored when a newer (incarnation, version) is held, when a drop happened
 * since ticket, or when the body alone exceeds the byte budget. Returns AM_OK
 * (also when ignored) or AM_ERR_NOMEM. */
int am_acache_put(am_acache *c, uint64_t ticket, const char *id, int64_t incarnation,
                  int64_t version, const char *body, size_t len);

/* Forgets the entry of id (the session was deleted); c may be NULL. */
void am_acache_drop(am_acache *c, const char *id);

#endif
