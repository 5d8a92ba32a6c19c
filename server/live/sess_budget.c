/*
 * sess_budget.c — the session cache's memory budget (sessions.h): what a
 * runtime counts, the least recently used idle runtimes freed to fit, and
 * the reservations requests wait for room with.
 */
#include "sess_internal.h"

#include "lockck.h"
#include "vocab.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <string.h>
#include <time.h>

/* Bytes a runtime's build holds at its peak per byte of its stored
 * glossary JSON: the text, jansson's tree of it, the parsed entries and the
 * compiled glossary (bench/README.md, "Memory budget": 11.8 for 100,000
 * entries, 10.3 MB stored, a 121.5 MB peak; the runtime then keeps 57 MB). */
#define AM_SESS_JSON_FACTOR 12

/* Queues s (no user, its write state released) to be freed by the next
 * mem_reap. Under the cache lock. */
void mem_bury(am_sessions *c, am_sess *s)
{
    AM_GROW(c->dead, c->cap_dead, c->n_dead + 1, 4);
    c->dead[c->n_dead++] = s;
    c->dead_bytes += s->bytes + am_sess_part_owned(s);
}

/* Frees the runtimes mem_bury queued, outside the cache lock (the caller
 * does not hold it), and hands large frees back to the system (with
 * `freed` bytes the caller freed itself). */
void mem_reap(am_sessions *c, size_t freed)
{
    pthread_mutex_lock(&c->mu);
    am_sess **dead = c->dead;
    size_t n = c->n_dead, bytes = c->dead_bytes;
    c->dead = NULL;
    c->n_dead = c->cap_dead = c->dead_bytes = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++)
        am_sess_free(dead[i]);
    free(dead);
#if defined(__GLIBC__)
    if (bytes + freed >= AM_SESS_TRIM_BYTES)
        malloc_trim(0);
#else
    (void)bytes;
    (void)freed;
#endif
}

size_t am_vocab_bytes_or0(const am_vocab *v)
{
    return v ? am_vocab_bytes(v) : 0;
}

/* Bytes malloc adds to each block (glibc: a size word, 16-byte rounding). */
#define AM_SESS_MALLOC_OVERHEAD 16
/* What a scorer holds besides its compiled glossary: the stopword set
 * (~14 KiB for the built-in lists), the configuration and signature;
 * an estimate (core does not count these), small beside a glossary. */
#define AM_SESS_SCORER_BASE ((size_t)16 << 10)

static size_t str_bytes(const char *t)
{
    return t ? strlen(t) + 1 + AM_SESS_MALLOC_OVERHEAD : 0;
}

size_t am_sessions_scorer_bytes(const am_scorer *sc, const am_gloss *g)
{
    size_t b = sc ? AM_SESS_SCORER_BASE + am_terms_lex_bytes(am_scorer_lex(sc)) : 0;
    if (g) {
        b += g->cap * sizeof *g->v;
        for (size_t i = 0; i < g->n; i++) {
            const am_gloss_entry *e = &g->v[i];
            b += str_bytes(e->source) + str_bytes(e->id) + e->n_targets * sizeof *e->targets +
                 AM_SESS_MALLOC_OVERHEAD;
            for (size_t k = 0; k < e->n_targets; k++)
                b += str_bytes(e->targets[k]);
        }
    }
    return b;
}

/* Frees idle runtimes (no user), least recently used first, until the
 * budget holds mem_used (mem_fit_for: and need bytes more), and counts them; a runtime in use stays
 * (its user drops it at release if it is then over). Under the cache lock. */

void mem_fit(am_sessions *c)
{
    mem_fit_for(c, 0);
}

/* mem_fit, leaving room for need bytes more (a reservation about to be
 * counted). Under the cache lock. */
void mem_fit_for(am_sessions *c, size_t need)
{
    size_t max = c->mem_max > need ? c->mem_max - need : 0;
    while (c->mem_used > max) {
        size_t lru = (size_t)-1;
        for (size_t k = 0; k < c->n; k++)
            if (c->v[k]->refs == 0 && (lru == (size_t)-1 || c->used[k] < c->used[lru]))
                lru = k;
        if (lru == (size_t)-1)
            return; /* every cached runtime is in use */
        c->evictions++;
        am_drop_at(c, lru);
    }
}

/* Counts bytes more (sign > 0) or fewer in the budget. Under the lock. */
void mem_count(am_sessions *c, size_t bytes, int sign)
{
    if (sign > 0) {
        c->mem_used += bytes;
        if (c->mem_used > c->mem_peak)
            c->mem_peak = c->mem_used;
    } else {
        assert(c->mem_used >= bytes);
        c->mem_used -= bytes;
        if (bytes)
            pthread_cond_broadcast(&c->room); /* am_sessions_reserve's waiters */
    }
}

void am_sessions_set_memory(am_sessions *c, size_t bytes)
{
    pthread_mutex_lock(&c->mu);
    c->mem_max = bytes ? bytes : SIZE_MAX;
    mem_fit(c);
    pthread_mutex_unlock(&c->mu);
    mem_reap(c, 0);
}

void am_sessions_memory(am_sessions *c, am_sess_mem *out)
{
    pthread_mutex_lock(&c->mu);
    out->used = c->mem_used;
    out->budget = c->mem_max == SIZE_MAX ? 0 : c->mem_max;
    out->peak = c->mem_peak;
    out->evictions = c->evictions;
    out->cached = c->n;
    out->history = atomic_load(&c->hist_used);
    out->refused = c->refused;
    pthread_mutex_unlock(&c->mu);
}

void am_sessions_charge(am_sessions *c, size_t bytes)
{
    pthread_mutex_lock(&c->mu);
    mem_count(c, bytes, 1);
    mem_fit(c);
    int reap = c->n_dead > 0;
    pthread_mutex_unlock(&c->mu);
    if (reap)
        mem_reap(c, 0);
}

void am_sessions_uncharge(am_sessions *c, size_t bytes)
{
    pthread_mutex_lock(&c->mu);
    mem_count(c, bytes, -1);
    pthread_mutex_unlock(&c->mu);
}

void am_sessions_set_wait(am_sessions *c, int ms)
{
    pthread_mutex_lock(&c->mu);
    c->room_wait_ms = ms < 0 ? 0 : ms;
    pthread_mutex_unlock(&c->mu);
}

/* Whether a reservation of bytes may be counted now (idle runtimes freed
 * first to make room): it fits beside what is in use, or (alone) it is
 * over three quarters of the budget and what is in use is at most a
 * quarter of it, so that a stored session as large as the budget or
 * larger is still served, beside small requests only, instead of waiting
 * for a moment when nothing else is in use. Under the cache lock. */
static int mem_admit(am_sessions *c, size_t bytes, int alone)
{
    mem_fit_for(c, bytes);
    if (c->mem_used + bytes <= c->mem_max)
        return 1;
    return alone && bytes > c->mem_max - c->mem_max / 4 && c->mem_used <= c->mem_max / 4;
}

/* The deadline ms milliseconds from now on the monotonic clock. */
static struct timespec deadline_in(int ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

int am_sessions_reserve(am_sessions *c, size_t bytes, int alone)
{
    /* A thread holding a session's write lock or a pooled reader must not
     * wait for other requests to finish (they may wait for what it holds):
     * its reservation is counted at once, over the budget if need be. */
    int may_wait =
        !am_lk_held(AM_LK_SESSION) && !am_lk_held(AM_LK_READER) && !am_lk_held(AM_LK_WRITER);
    int rc = AM_OK;
    pthread_mutex_lock(&c->mu);
    if (!alone && bytes > c->mem_max) {
        rc = AM_ERR_RANGE; /* would not fit an empty cache */
    } else if (!mem_admit(c, bytes, alone) && may_wait) { /* idle ones freed either way */
        struct timespec until = deadline_in(c->room_wait_ms);
        int w = 0;
        while (!mem_admit(c, bytes, alone) && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&c->room, &c->mu, &until);
        if (!mem_admit(c, bytes, alone)) {
            rc = AM_ERR_FULL;
            c->refused++;
        }
    }
    if (rc == AM_OK)
        mem_count(c, bytes, 1);
    int reap = c->n_dead > 0;
    pthread_mutex_unlock(&c->mu);
    if (reap)
        mem_reap(c, 0);
    return rc;
}

void am_sessions_unreserve(am_sessions *c, size_t bytes)
{
    am_sessions_uncharge(c, bytes);
#if defined(__GLIBC__)
    /* the transient memory was freed by the caller: hand it back, as
     * mem_reap does for runtimes */
    if (bytes >= AM_SESS_TRIM_BYTES)
        malloc_trim(0);
#endif
}

size_t am_sessions_build_estimate(size_t glossary_json_bytes)
{
    return AM_SESS_SCORER_BASE * 4 + glossary_json_bytes * AM_SESS_JSON_FACTOR;
}
