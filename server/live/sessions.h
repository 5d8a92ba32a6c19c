/*
 * sessions.h — the per-session runtime cache: for each session in use, its
 * compiled scorer (options + glossary + stopwords + background vocabulary)
 * and the lock that serializes its writes. Built from the store on first
 * use and rebuilt when the glossary changes; nothing here is authoritative
 * (the database is), so the cache can be dropped at any time. An entry
 * records the session incarnation and glossary version it was built from:
 * writers compare them with the store's inside their transaction (a build
 * racing a delete + re-create can leave an entry of the old incarnation)
 * and drop a stale entry with am_sessions_forget_entry.
 */
#ifndef AM_SESSIONS_H
#define AM_SESSIONS_H

#include "am.h"
#include "glossary.h"
#include "score.h"
#include "store.h"

#include <jansson.h>
#include <pthread.h>

typedef struct am_sessions am_sessions;
/* The write state of a session, shared by every live runtime of its id
 * and incarnation (sessions.c): a runtime rebuilt while a stale one is
 * still in use (a glossary PUT or an eviction dropped it) takes the same
 * lock and totals cache, so the session's writers still exclude each
 * other. */
typedef struct am_sess_w am_sess_w;
/* A compiled scorer and its glossary shared by the runtimes built from the
 * same options, stopwords and glossary (sess_share.c). */
typedef struct am_sess_part am_sess_part;
typedef struct am_sess_form am_sess_form;

/* The running totals of one system after segment seq of its session: a
 * cache of the totals table that spares a POST reading and parsing them. */
typedef struct am_sess_tot {
    char *system; /* owned */
    int64_t seq;
    am_totals t;
} am_sess_tot;

#define AM_SESS_TOT_MAX 16 /* systems cached per session */
#define AM_SESS_REPEAT_PAUSE 64 /* POSTs without am_sess_known after a repeated id */

typedef struct am_sess {
    char *id;
    am_scorer *scorer; /* owned, or part's (borrowed, read-only) */
    am_sess_part *part; /* the shared part holding scorer and gloss (a
                           reference), NULL when they are the runtime's own */
    am_vocab *background; /* owned; NULL without a background vocabulary */
    am_gloss gloss; /* the glossary compiled into scorer (entry order); with
                       part, a copy of part's (its entries borrowed) */
    int64_t glossary_version; /* of the glossary compiled into scorer */
    int64_t incarnation; /* of the session row it was built from */
    am_sess_w *w; /* shared (see am_sess_w); am_sess_lock/unlock */
    char **systems; /* the declared systems (owned, n_systems); NULL: undeclared */
    size_t n_systems;
    char *baseline; /* options.baseline_system (owned), NULL without one */
    int paired_totals; /* pair totals kept from the first segment (ingest.c) */
    size_t bytes; /* counted in the cache's memory budget (am_sessions_scorer_bytes + the rest) */
    int refs; /* guarded by the cache lock */
    int stale; /* dropped from the cache; freed at last release */
} am_sess;

/* A cache of at most max_cached runtimes whose full history caches hold
 * at most history_bytes together (0: none is kept full). */
am_sessions *am_sessions_new(am_store *st, size_t max_cached, size_t history_bytes);
void am_sessions_free(am_sessions *c);
/* Number of compiled scorers alive, each shared by every runtime built
 * from the same options, stopwords and glossary text (sess_share.c). */
size_t am_sessions_parts(am_sessions *c);
/* How many compact glossaries the cache keeps (sess_share.c) and their
 * bytes (*bytes, when not NULL), counted in the budget. */
size_t am_sessions_forms(am_sessions *c, size_t *bytes);
/* Returns the session's runtime (refcounted; pair with am_sessions_release),
 * building or rebuilding it from the store when needed. AM_ERR_NOTFOUND
 * when the session does not exist, AM_ERR_CONFLICT when its background
 * vocabulary was deleted; other errors; a message in err. */
int am_sessions_acquire(am_sessions *c, const char *id, am_sess **out, am_buf *err);
void am_sessions_release(am_sessions *c, am_sess *s);
/* The memory budget: every runtime alive (cached, or dropped while in
 * use) counts its bytes (am_sess.bytes: compiled glossary, parsed entries,
 * background vocabulary, an estimate of the rest), and so do the scorers a
 * replay builds for older glossary versions (am_sessions_charge). When a
 * new runtime or a charge takes the total over the budget, idle runtimes
 * are freed, least recently used first, until it fits; runtimes in use
 * stay, and an over-budget runtime is freed at its last release. A new
 * runtime's build is reserved first (am_sessions_reserve): when requests
 * in flight hold the budget, am_sessions_acquire waits for room and then
 * answers AM_ERR_FULL (503), rather than going over by one runtime per
 * request. The
 * history counts have their own budget (history_bytes). set_memory: 0 =
 * no budget (before use, or at any time). */
void am_sessions_set_memory(am_sessions *c, size_t bytes);
typedef struct am_sess_mem {
    size_t used, budget, peak; /* budget 0: none */
    int64_t evictions; /* runtimes dropped to fit the budget or the count */
    size_t cached; /* runtimes in the cache */
    size_t history; /* bytes of full history counts (am_sessions_hist_bytes) */
    int64_t refused; /* reservations refused for want of room (am_sessions_reserve) */
    /* compact glossaries of evicted sessions kept (sess_share.c), their
     * bytes (in used), and the runtimes built from one instead of the
     * stored JSON */
    size_t forms, form_bytes;
    int64_t form_builds;
} am_sess_mem;
void am_sessions_memory(am_sessions *c, am_sess_mem *out);
/* Counts bytes (a replay's scorer of an older glossary version) in the
 * budget until am_sessions_uncharge with the same bytes; idle runtimes are
 * freed to make room. */
void am_sessions_charge(am_sessions *c, size_t bytes);
void am_sessions_uncharge(am_sessions *c, size_t bytes);
/* Reserves bytes in the budget for a request's transient memory (a
 * glossary parsed and compiled by a PUT, a runtime being built) until
 * am_sessions_unreserve with the same bytes. Idle runtimes are freed, least
 * recently used first, to make room; when what requests in flight hold
 * (runtimes in use, charges, other reservations) leaves too little, it
 * waits for them, at most the cache's wait (am_sessions_set_wait, 2 s by
 * default). So the budget is exceeded only by what a thread that may not
 * wait reserves (one holding a session lock or a pooled reader: counted at
 * once), or by one request alone (alone != 0: bytes larger than the whole
 * budget are admitted when what is in use is at most a quarter of it, so
 * that a stored session larger than the budget is still served). Returns
 * AM_OK (reserved), AM_ERR_RANGE when !alone and bytes exceed the budget
 * itself (it can never fit: 413), AM_ERR_FULL when no room came in time
 * (503 with Retry-After); nothing is reserved on error. */
int am_sessions_reserve(am_sessions *c, size_t bytes, int alone);
void am_sessions_unreserve(am_sessions *c, size_t bytes);
/* The longest am_sessions_reserve waits, in milliseconds (0: not at all). */
void am_sessions_set_wait(am_sessions *c, int ms);
/* The bytes to reserve for building a runtime whose stored glossary JSON
 * has glossary_json_bytes (0: none): its peak while parsed and compiled. */
size_t am_sessions_build_estimate(size_t glossary_json_bytes);
/* Builds a scorer as am_sessions_scorer_in does from an already parsed
 * glossary g (borrowed; NULL: none): a glossary PUT validates its upload
 * without writing it as JSON and parsing it again first. c (NULL: none)
 * lends its shared models. */
int am_sessions_build_gloss(am_sessions *c, const char *options_json, const char *custom_sw_json,
                            const am_gloss *g, am_scorer **out, am_buf *err);
/* The bytes a compiled scorer and its parsed glossary hold (either NULL):
 * the compiled glossary exactly (am_terms_lex_bytes), the entries from
 * their strings, the rest of the scorer estimated. */
size_t am_sessions_scorer_bytes(const am_scorer *sc, const am_gloss *g);

/* Drops a session from the cache (deleted, or its glossary changed). */
void am_sessions_forget(am_sessions *c, const char *id);
/* Drops s (borrowed; the caller still holds its reference) from the cache
 * if it is still the cached entry of its id: a user found it stale (built
 * from another incarnation or glossary version than the store's). A newer
 * entry built meanwhile stays. */
void am_sessions_forget_entry(am_sessions *c, const am_sess *s);

/* The session's write lock (shared by its live runtimes, see am_sess_w),
 * held by a writer for its whole transaction. */
void am_sess_lock(am_sess *s);
void am_sess_unlock(am_sess *s);

/* The totals cache of a session (shared like its lock, so by the runtimes
 * of one incarnation only); the caller holds the lock (am_sess_lock).
 * am_sess_tot_get copies system's totals after segment seq into *out and
 * returns 1 when cached, 0 when they must be read from the store.
 * am_sess_tot_commit records that segment seq was committed with the new
 * totals t[i] of systems[i] (i < n, borrowed): the other systems' entries
 * that were current at seq - 1 stay current. am_sess_tot_clear empties the
 * cache and the history cache below (a replay rewrote the totals,
 * or a write failed). */
int am_sess_tot_get(const am_sess *s, const char *system, int64_t seq, am_totals *out);
/* Whether system's totals after segment seq are cached (am_sess_tot_get
 * would answer 1). */
int am_sess_tot_has(const am_sess *s, const char *system, int64_t seq);
void am_sess_tot_commit(am_sess *s, int64_t seq, size_t n, const char *const *systems,
                        const am_totals *t);
void am_sess_tot_clear(am_sess *s);

/* The history cache of a session (shared like its lock; the caller holds
 * am_sess_lock): word -> occurrences, valid while the session's stored
 * version is the one it was recorded at (every write of a session raises
 * its version; am_sess_tot_clear drops it too, and so must any writer that
 * rewrites the history). It is either full, the counts of the whole
 * history (settled vocab + pending words), so that a lookup needs no store
 * read, or the counts among the pending words only (store.h,
 * am_store_tx_history_settle), added to the store's vocab. Full caches are
 * bounded together by the cache's history budget (am_sessions_new).
 * am_sess_hist_get: the counts (borrowed until the next call here), *full
 * set, or NULL when not cached for version. am_sess_hist_set takes
 * ownership of counts (read at version; full as above). am_sess_hist_room:
 * the bytes the budget has left for a full cache of s (am_vocab_bytes).
 * am_sess_hist_commit: segment with the n NUL-separated words (borrowed)
 * was committed, moving the version from before to after, and (settled)
 * the pending words were moved into the settled history; the cache is
 * dropped when it was not current at before, or when its growth took the
 * budget over. */
const am_vocab *am_sess_hist_get(const am_sess *s, int64_t version, int *full);
void am_sess_hist_set(am_sess *s, int64_t version, am_vocab *counts, int full);
size_t am_sess_hist_room(const am_sess *s);
/* A load of the whole history stopped at bytes without fitting: until the
 * budget has more than twice that room, am_sess_hist_room answers 0 for s
 * (a session larger than the budget is not read again and again). */
void am_sess_hist_over(am_sess *s, size_t bytes);
/* The bytes all full history caches of c hold together. */
size_t am_sessions_hist_bytes(am_sessions *c);
void am_sess_hist_commit(am_sess *s, int64_t before, int64_t after, const char *words, size_t n,
                         int settled);

/* The state a writer of the session last read or committed (the caller
 * holds am_sess_lock): am_sess_note records that its last seq was last_seq
 * at version (a fact for good: every write raises the version, and s is of
 * one incarnation). am_sess_known gives the last one noted, with the
 * history counts (borrowed as am_sess_hist_get's), when the history cache
 * is full and current at that version; else NULL. A POST can then be
 * scored without reading the store, its commit checking that the session
 * is still at that version (server/live/ingest.c, am_post_fast). After
 * am_sess_repeat (a POST repeated a stored id) am_sess_known answers NULL
 * to the next AM_SESS_REPEAT_PAUSE calls: re-posts come in runs (a
 * client's retries, a re-import), and a repeated id is found by the
 * snapshot path before scoring, by am_post_fast only after. */
void am_sess_note(am_sess *s, int64_t version, int64_t last_seq);
const am_vocab *am_sess_known(am_sess *s, int64_t *version, int64_t *last_seq);
void am_sess_repeat(am_sess *s);

/* Builds a scorer from stored session data (shared by the cache, session
 * creation and replays): options JSON object, custom stopwords JSON array
 * (NULL), glossary JSON array (NULL), background vocabulary (borrowed,
 * NULL). On error err holds a message suitable for a 422 detail. */
int am_sessions_build_scorer(const char *options_json, const char *custom_sw_json,
                             const char *glossary_json, const am_vocab *background, am_scorer **out,
                             am_buf *err);
/* am_sessions_build_scorer with the models the cache c shares (friso for
 * zh-friso, loaded on first use); c NULL: the scorer loads its own. */
int am_sessions_scorer_in(am_sessions *c, const char *options_json, const char *custom_sw_json,
                          const char *glossary_json, const am_vocab *background, am_scorer **out,
                          am_buf *err);
/* Checks options JSON for what session creation refuses beyond what
 * am_sessions_build_scorer does: an option the profile cannot honour
 * (am_config_check_profile). Stored sessions are not re-checked. Returns
 * AM_OK or AM_ERR_INVALID with a 422 detail in err. */
int am_sessions_check_options(const char *options_json, am_buf *err);

/* Writes the options whose live-session default depends on the target
 * language (am_config_session_defaults: TER normalized + Asian support for
 * zh/ja/ko) into the options object opts (borrowed; it holds target_lang)
 * when the client left them out, so that they are stored with the session:
 * a later change of the defaults never alters an existing session, whose
 * stored totals were computed with them. Also stores "defaults" (the
 * version of the tokenizers' auto resolution, AM_DEFAULTS_CURRENT) when
 * absent. Call once, at creation. */
void am_sessions_pin_defaults(json_t *opts);
/* The same, keeping the parsed glossary in *gloss (initialized by the
 * caller, filled on success; caller cleans up). gloss may be NULL. */
int am_sessions_build(const char *options_json, const char *custom_sw_json,
                      const char *glossary_json, const am_vocab *background, am_scorer **out,
                      am_gloss *gloss, am_buf *err);
/* am_sessions_build with the models the cache c shares (c may be NULL). */
int am_sessions_build_in(am_sessions *c, const char *options_json, const char *custom_sw_json,
                         const char *glossary_json, const am_vocab *background, am_scorer **out,
                         am_gloss *gloss, am_buf *err);

/* Whether background vocabulary name (meta m, borrowed) fits a session
 * with options cfg: the side it counts is the session's target_lang, its
 * memory's source language the session's source_lang, and its recall
 * tokenizer the session's (by name). AM_OK, or AM_ERR_INVALID with the
 * message (naming both and what to do) in err and *field the option at
 * fault. */
int am_sessions_vocab_check(const char *name, const am_store_vocab_meta *m, const am_config *cfg,
                            am_buf *err, const char **field);

#endif
