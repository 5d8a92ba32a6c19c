/*
 * sess_internal.h — private to the session runtime cache (sessions.c, the
 * cache, its index, the memory budget and reservations, and a runtime
 * assembled from the store; sess_share.c, compiled scorers shared between
 * runtimes; sess_build.c, compiling a scorer and what it counts): the
 * cache's state and the functions its three files share, which depend on
 * each other in that order only (sessions.c → sess_share.c →
 * sess_build.c; `make house` checks it). Not for other modules.
 */
#ifndef AM_SESS_INTERNAL_H
#define AM_SESS_INTERNAL_H

#include "sessions.h"
#include "zhseg.h"

#include <stdatomic.h>

/* See sessions.h. refs counts the runtimes sharing it (guarded by the
 * cache lock); the rest is guarded by mu. */
struct am_sess_w {
    pthread_mutex_t mu;
    int refs;
    am_sess_tot *tot; /* owned, n_tot entries */
    size_t n_tot, cap_tot;
    /* bytes of tot's capacity counted in the cache's memory budget: a
     * session scoring one system holds two slots (2.5 KB), not the
     * AM_SESS_TOT_MAX (20 KB) a runtime used to count for every session
     * (issue 27: 10,000 sessions). Counted as tot grows (under the cache
     * lock, taken inside mu), uncounted when w is freed. */
    size_t tot_bytes;
    /* the history counts (am_sess_hist_get), current while the session's
     * version is hist_version; NULL: not cached. hist_full: of the whole
     * history, hist_bytes of it counted in the cache's history budget;
     * else of the pending words only (not counted) */
    am_vocab *hist; /* owned */
    int64_t hist_version;
    int hist_full;
    size_t hist_bytes;
    am_sessions *cache; /* borrowed: the cache whose budget counts hist */
    /* bytes a whole-history load had read when it did not fit (0: none):
     * no new attempt until the budget has twice that room (am_sess_hist_room) */
    size_t hist_over;
    /* the state a writer last saw or made (am_sess_note): the session's
     * last seq was known_seq at version known_version (-1: none) */
    int64_t known_version, known_seq;
    /* POSTs still to take the snapshot path after a repeated id
     * (am_sess_repeat): re-posts come in runs (retries, re-imports) */
    int repeat_pause;
};

struct am_sessions {
    am_store *st;
    pthread_mutex_t mu;
    am_sess **v;
    int64_t *used; /* last-use tick per entry */
    size_t n, cap, max;
    int64_t tick;
    uint32_t *tab; /* hash index: position in v + 1, 0 = empty slot */
    size_t mask; /* table size - 1 (a power of two >= 2 * max) */
    am_sess **old; /* dropped from the cache, still in use (n_old) */
    size_t n_old, cap_old;
    /* bytes of the whole-history counts held by write states (hist_full),
     * at most hist_max but for the growth of one commit */
    atomic_size_t hist_used;
    size_t hist_max;
    /* the memory budget (am_sessions_set_memory), under mu: mem_used
     * counts every runtime alive (cached or dropped but in use, s->bytes)
     * and the scorers replays charged (am_sessions_charge) */
    size_t mem_used, mem_max, mem_peak;
    int64_t evictions; /* runtimes dropped to fit the budget or the count */
    /* runtimes dropped with no user, freed by the next reap (outside the
     * lock), and the bytes of the large ones among them (mem_reap) */
    am_sess **dead;
    size_t n_dead, cap_dead, dead_bytes;
    /* bytes of large runtimes and forms (AM_SESS_TRIM_LARGE or more)
     * freed since the allocator was last asked to give memory back: the
     * next mem_reap does (a runtime of 20,000 entries counts 6.9 MB, under
     * AM_SESS_TRIM_BYTES once its key no longer holds its 1 MB text, and
     * its evicted peers' forms are freed in place) */
    size_t untrimmed;
    /* signalled (under mu) whenever mem_used falls: am_sessions_reserve
     * waits on it, at most room_wait_ms, for requests in flight to give
     * their bytes back; refused counts the reservations that gave up */
    pthread_cond_t room;
    int room_wait_ms;
    int64_t refused;
    /* friso's dictionary (recall zh-friso), loaded on the first Chinese
     * session and shared read-only by every scorer of the process: 0.5 s
     * and 24 MB, which each scorer cannot pay (docs/metrics.md §1). Under
     * zh_mu, which is never held with another lock. */
    pthread_mutex_t zh_mu;
    am_zhseg *zhseg;
    /* the shared compiled scorers (sess_share.c): AM_SESS_PART_BUCKETS
     * chains, under mu */
    am_sess_part **parts;
    /* the compact glossaries of sessions (sess_share.c): AM_SESS_PART_BUCKETS
     * chains by session id, a least-recently-used list, their bytes
     * (counted in mem_used too); under mu */
    am_sess_form **forms;
    am_sess_form *form_mru, *form_lru;
    size_t form_bytes, n_forms;
    int64_t form_builds; /* runtimes built from a form */
};

/* Freed bytes past which the allocator is asked to give memory back to
 * the system (malloc_trim, after the frees, outside the cache lock): glibc
 * keeps a freed compiled glossary (tens of MiB, many small blocks) in its
 * heap, and RSS stayed high after deletes (issue 25). */
#define AM_SESS_TRIM_BYTES ((size_t)8 << 20)
/* A runtime or form of this size freed has the next mem_reap trim; smaller
 * ones' blocks are reused by the next builds, and trimming a heap of
 * 10,000 small sessions on their evictions would cost more than it
 * returns (a large one's build costs far more than the trim). */
#define AM_SESS_TRIM_LARGE ((size_t)1 << 20)

/* sessions.c */
am_sess_w *am_w_new(am_sessions *c);
void am_w_unref(am_sess_w *w);
void am_sess_free(am_sess *s);
void am_drop_at(am_sessions *c, size_t i);

/* sessions.c: the memory budget */
void mem_bury(am_sessions *c, am_sess *s);
void mem_reap(am_sessions *c, size_t freed);
void mem_fit(am_sessions *c);
void mem_fit_for(am_sessions *c, size_t need);

/* sess_share.c: compiled scorers shared between runtimes (a power of two
 * of hash buckets) */
#define AM_SESS_PART_BUCKETS 1024
/* The stored glossary version a runtime is built from: the key of its
 * compact glossary (sess_share.c). */
typedef struct am_sess_form_key {
    const char *id;
    int64_t incarnation, version;
} am_sess_form_key;
/* The part built from options, custom stopwords and glossary text (JSON
 * texts as stored) with a reference taken for the caller, who gives it back
 * with am_sess_part_unref: an existing one, or (build) a new one compiled
 * now and counted in the budget. AM_OK with *out NULL: the runtime does not
 * share (a background vocabulary, options not a JSON object) or, without
 * build, no part has the key. Else a build error, a message in err. */
int am_sess_part_get(am_sessions *c, const char *options_json, const char *sw, const char *glossary,
                     const am_sess_form_key *fk, int build, am_sess_part **out, am_buf *err);
/* Compact glossaries (sess_share.c): the packed glossary (am_gloss_pack) of
 * a stored session version whose runtime was evicted, kept while the budget
 * has room, so that its rebuild compiles its scorer from it instead of
 * parsing the stored JSON again. am_sess_form_forget
 * drops those of session id (its glossary replaced, or the session
 * deleted); am_sess_form_evict the least recently used one, returning
 * whether there was one; am_sess_forms_free all of them. Under the cache
 * lock. */
void am_sess_form_forget(am_sessions *c, const char *id);
/* Keeps the glossary of s's part as s's form when s was its last runtime
 * (after am_sess_part_drop; s idle, being evicted). */
void am_sess_part_to_form(am_sessions *c, am_sess *s);
int am_sess_form_evict(am_sessions *c);
void am_sess_forms_free(am_sessions *c);
/* Gives back a reference taken by am_sess_part_get outside a runtime
 * (without the cache lock). */
void am_sess_part_unref(am_sessions *c, am_sess_part *p);
/* Gives back s's reference to its part (none: nothing), under the cache
 * lock, where s's own bytes are uncounted: the last reference uncounts the
 * part's bytes and leaves the part to s, which frees it (am_sess_free);
 * otherwise s borrows nothing any more. s has no user. */
void am_sess_part_drop(am_sessions *c, am_sess *s);
void am_sess_part_free(am_sess_part *p);
/* The bytes of the part s frees with itself (the last borrower, after
 * am_sess_part_drop), else 0: for handing large frees back (mem_reap). */
size_t am_sess_part_owned(const am_sess *s);
/* The bytes of s's part still to be counted in the budget, marked counted
 * (0: none, or counted already): the caller counts them (mem_count) where
 * the build's reservation is exchanged for the runtime's own bytes
 * (am_sessions_acquire), so the two are never counted together. Under the
 * cache lock. */
size_t am_sess_part_count(const am_sess *s);
/* The part's scorer and glossary (owned by the part; read-only). */
am_scorer *am_sess_part_scorer(am_sess_part *p);
const am_gloss *am_sess_part_gloss(const am_sess_part *p);

/* sess_build.c */
size_t am_vocab_bytes_or0(const am_vocab *v);
void mem_count(am_sessions *c, size_t bytes, int sign);

/* sessions.c: a runtime assembled from the store */
int am_sess_build(am_sessions *c, const char *id, am_sess **out, size_t *reserved, am_buf *err);

#endif
