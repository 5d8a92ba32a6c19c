/*
 * sessions.c — the per-session runtime cache (see sessions.h).
 *
 * The cache is an array of at most max_cached entries under one mutex, with
 * an open-addressing hash index (linear probing, backward-shift deletion)
 * from session id to array position: a linear scan of 1,000 ids was 2 % of
 * a POST's CPU. The cache is bounded: the least recently used entry is
 * evicted (freed once its last user releases it).
 */
#include "sess_internal.h"

#include "lockck.h"
#include "vocab.h"
#include "zhseg.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string.h>
#include <time.h>

#define AM_SESS_CACHE_MAX 16384
/* How long a request waits for room in the memory budget (requests in
 * flight releasing their runtimes or reservations) before it is refused
 * with 503 (am_sessions_reserve): a few POSTs' time, and a build of a
 * large glossary (~1 s for 100,000 entries), without holding a handler
 * thread for long. */
#define AM_SESS_ROOM_WAIT_MS 2000

am_sessions *am_sessions_new(am_store *st, size_t max_cached, size_t history_bytes)
{
    am_sessions *c = am_xcalloc(1, sizeof *c);
    c->st = st;
    c->hist_max = history_bytes;
    atomic_init(&c->hist_used, 0);
    c->max = max_cached ? max_cached : 1;
    c->mem_max = SIZE_MAX; /* am_sessions_set_memory */
    /* Count bound: runtimes built from the same options and glossary share
     * one compiled scorer (sess_share.c), so a runtime's own state is a
     * few KiB and 10,000 sessions posting in turn stay cached (issue 27:
     * at 2,048 every POST of 3,000 sessions rebuilt its runtime, ×4 CPU).
     * The byte budget (am_sessions_set_memory) bounds what they hold; this
     * bound only caps the index. An evicted session is rebuilt from the
     * store on its next use. */
    if (c->max > AM_SESS_CACHE_MAX)
        c->max = AM_SESS_CACHE_MAX;
    size_t size = 16;
    while (size < 2 * c->max)
        size *= 2;
    c->tab = am_xcalloc(size, sizeof *c->tab);
    c->mask = size - 1;
    pthread_mutex_init(&c->mu, NULL);
    /* a monotonic clock for the timed wait: a wall-clock step must not
     * lengthen or cut it */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->room, &ca);
    pthread_condattr_destroy(&ca);
    c->room_wait_ms = AM_SESS_ROOM_WAIT_MS;
    pthread_mutex_init(&c->zh_mu, NULL);
    c->parts = am_xcalloc(AM_SESS_PART_BUCKETS, sizeof *c->parts);
    c->forms = am_xcalloc(AM_SESS_PART_BUCKETS, sizeof *c->forms);
    return c;
}

am_sess_w *am_w_new(am_sessions *c)
{
    am_sess_w *w = am_xcalloc(1, sizeof *w);
    w->cache = c;
    pthread_mutex_init(&w->mu, NULL);
    w->refs = 1;
    w->known_version = w->known_seq = -1;
    return w;
}

/* Counts bytes for w's full history counts in the budget instead of the
 * bytes counted so far. */
static void hist_count(am_sess_w *w, size_t bytes)
{
    atomic_fetch_add(&w->cache->hist_used, bytes);
    atomic_fetch_sub(&w->cache->hist_used, w->hist_bytes);
    w->hist_bytes = bytes;
}

/* Drops w's history counts, and their bytes from the budget. */
static void hist_drop(am_sess_w *w)
{
    am_vocab_free(w->hist);
    w->hist = NULL;
    hist_count(w, 0);
    w->hist_full = 0;
}

static void am_w_clear(am_sess_w *w)
{
    for (size_t i = 0; i < w->n_tot; i++)
        free(w->tot[i].system);
    w->n_tot = 0;
    hist_drop(w);
}

/* Drops one runtime's reference to w; the caller holds the cache lock
 * (or owns w alone). */
void am_w_unref(am_sess_w *w)
{
    if (!w || --w->refs > 0)
        return;
    if (w->tot_bytes)
        mem_count(w->cache, w->tot_bytes, -1);
    am_w_clear(w);
    free(w->tot);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
/* Frees s except its write state (am_w_unref, under the cache lock).
 * Called without the cache lock: freeing a large compiled glossary takes
 * milliseconds, which other sessions' acquires must not wait for. */
void am_sess_free(am_sess *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_systems; i++)
        free(s->systems[i]);
    free(s->systems);
    free(s->baseline);
    if (s->part) {
        am_sess_part_free(s->part); /* the last borrower (am_sess_part_drop) */
    } else {
        am_scorer_free(s->scorer);
        am_gloss_cleanup(&s->gloss);
    }
    am_vocab_free(s->background);
    free(s->id);
    free(s);
}

void am_sessions_free(am_sessions *c)
{
    if (!c)
        return;
    assert(c->n_old == 0); /* every runtime released */
    for (size_t i = 0; i < c->n; i++) {
        am_w_unref(c->v[i]->w);
        am_sess_part_drop(c, c->v[i]);
        am_sess_free(c->v[i]);
    }
    for (size_t i = 0; i < c->n_dead; i++)
        am_sess_free(c->dead[i]);
    free(c->dead);
    free(c->old);
    free(c->v);
    free(c->used);
    free(c->tab);
    for (size_t i = 0; i < AM_SESS_PART_BUCKETS; i++)
        assert(!c->parts[i]); /* the last runtime borrowing a part freed it */
    free(c->parts);
    am_sess_forms_free(c);
    free(c->forms);
    pthread_cond_destroy(&c->room);
    pthread_mutex_destroy(&c->mu);
    /* after every scorer that borrowed it */
    am_zhseg_free(c->zhseg);
    pthread_mutex_destroy(&c->zh_mu);
    free(c);
}

void am_sess_lock(am_sess *s)
{
    am_lk_take(AM_LK_SESSION); /* the first lock a thread takes (lockck.h) */
    pthread_mutex_lock(&s->w->mu);
}

void am_sess_unlock(am_sess *s)
{
    am_lk_drop(AM_LK_SESSION);
    pthread_mutex_unlock(&s->w->mu);
}

int am_sess_tot_get(const am_sess *s, const char *system, int64_t seq, am_totals *out)
{
    const am_sess_w *w = s->w;
    for (size_t i = 0; i < w->n_tot; i++)
        if (w->tot[i].seq == seq && !strcmp(w->tot[i].system, system)) {
            *out = w->tot[i].t;
            return 1;
        }
    return 0;
}

void am_sess_tot_clear(am_sess *s)
{
    am_w_clear(s->w);
}

void am_sess_tot_commit(am_sess *s, int64_t seq, size_t n, const char *const *systems,
                        const am_totals *t)
{
    am_sess_w *w = s->w;
    /* systems not in this segment keep their totals: current at seq if
     * they were current at seq - 1; any other entry is dropped */
    size_t keep = 0;
    for (size_t i = 0; i < w->n_tot; i++) {
        am_sess_tot *e = &w->tot[i];
        int posted = 0;
        for (size_t k = 0; k < n && !posted; k++)
            posted = !strcmp(e->system, systems[k]);
        if (!posted && e->seq == seq - 1) {
            e->seq = seq;
            w->tot[keep++] = *e;
        } else {
            free(e->system);
        }
    }
    w->n_tot = keep;
    size_t cap0 = w->cap_tot;
    for (size_t k = 0; k < n && w->n_tot < AM_SESS_TOT_MAX; k++) {
        AM_GROW(w->tot, w->cap_tot, w->n_tot + 1, 1); /* most sessions score one system */
        am_sess_tot *e = &w->tot[w->n_tot++];
        e->system = am_xstrdup(systems[k]);
        e->seq = seq;
        e->t = t[k];
    }
    if (w->cap_tot != cap0) { /* the slots counted as they are made */
        size_t more = (w->cap_tot - cap0) * sizeof *w->tot;
        pthread_mutex_lock(&w->cache->mu);
        mem_count(w->cache, more, 1);
        w->tot_bytes += more;
        pthread_mutex_unlock(&w->cache->mu);
    }
}

const am_vocab *am_sess_hist_get(const am_sess *s, int64_t version, int *full)
{
    const am_sess_w *w = s->w;
    if (!w->hist || w->hist_version != version)
        return NULL;
    *full = w->hist_full;
    return w->hist;
}

void am_sess_hist_set(am_sess *s, int64_t version, am_vocab *counts, int full)
{
    am_sess_w *w = s->w;
    hist_drop(w);
    w->hist = counts;
    w->hist_version = version;
    w->hist_full = full;
    if (full) {
        w->hist_over = 0;
        hist_count(w, am_vocab_bytes(counts));
    }
}

size_t am_sessions_hist_bytes(am_sessions *c)
{
    return atomic_load(&c->hist_used);
}

size_t am_sess_hist_room(const am_sess *s)
{
    const am_sessions *c = s->w->cache;
    size_t used = atomic_load(&c->hist_used);
    size_t room = used < c->hist_max ? c->hist_max - used : 0;
    return s->w->hist_over && room / 2 <= s->w->hist_over ? 0 : room;
}

void am_sess_hist_over(am_sess *s, size_t bytes)
{
    s->w->hist_over = bytes ? bytes : 1;
}

void am_sess_hist_commit(am_sess *s, int64_t before, int64_t after, const char *words, size_t n,
                         int settled)
{
    am_sess_w *w = s->w;
    if (!w->hist || w->hist_version != before) {
        hist_drop(w); /* not the state the segment was scored on */
        return;
    }
    if (settled && !w->hist_full) {
        am_vocab_clear(w->hist);
    } else {
        for (size_t i = 0; i < n; i++) {
            am_vocab_add(w->hist, words, 1);
            words += strlen(words) + 1;
        }
    }
    w->hist_version = after;
    if (w->hist_full) {
        hist_count(w, am_vocab_bytes(w->hist));
        if (atomic_load(&w->cache->hist_used) > w->cache->hist_max)
            hist_drop(w); /* over the budget: reloaded, as pending only, when needed */
    }
}

void am_sess_note(am_sess *s, int64_t version, int64_t last_seq)
{
    s->w->known_version = version;
    s->w->known_seq = last_seq;
}

void am_sess_repeat(am_sess *s)
{
    s->w->repeat_pause = AM_SESS_REPEAT_PAUSE;
}

int am_sess_tot_has(const am_sess *s, const char *system, int64_t seq)
{
    const am_sess_w *w = s->w;
    for (size_t i = 0; i < w->n_tot; i++)
        if (w->tot[i].seq == seq && !strcmp(w->tot[i].system, system))
            return 1;
    return 0;
}

const am_vocab *am_sess_known(am_sess *s, int64_t *version, int64_t *last_seq)
{
    am_sess_w *w = s->w;
    int full = 0;
    if (w->repeat_pause > 0) {
        w->repeat_pause--;
        return NULL;
    }
    if (w->known_version < 0)
        return NULL;
    const am_vocab *counts = am_sess_hist_get(s, w->known_version, &full);
    if (!counts || !full)
        return NULL;
    *version = w->known_version;
    *last_seq = w->known_seq;
    return counts;
}

static size_t am_id_hash(const char *s)
{
    uint64_t h = am_fnv1a(s);
    return (size_t)(h ^ (h >> 32));
}

/* The table slot of id, or of the empty slot where it would go. */
static size_t am_slot(const am_sessions *c, const char *id)
{
    size_t k = am_id_hash(id) & c->mask;
    while (c->tab[k] && strcmp(c->v[c->tab[k] - 1]->id, id))
        k = (k + 1) & c->mask;
    return k;
}

static size_t am_find(const am_sessions *c, const char *id)
{
    size_t k = am_slot(c, id);
    return c->tab[k] ? c->tab[k] - 1 : (size_t)-1;
}

/* Removes the table entry of slot k (backward-shift deletion). */
static void am_tab_remove(am_sessions *c, size_t k)
{
    c->tab[k] = 0;
    for (size_t j = (k + 1) & c->mask; c->tab[j]; j = (j + 1) & c->mask) {
        size_t home = am_id_hash(c->v[c->tab[j] - 1]->id) & c->mask;
        /* the entry at j stays if its home lies cyclically in (k, j] */
        int stays = k <= j ? (k < home && home <= j) : (k < home || home <= j);
        if (!stays) {
            c->tab[k] = c->tab[j];
            c->tab[j] = 0;
            k = j;
        }
    }
}

void am_drop_at(am_sessions *c, size_t i)
{
    am_sess *s = c->v[i];
    am_tab_remove(c, am_slot(c, s->id));
    size_t last = c->n - 1;
    if (i != last) { /* the last entry moves to i */
        c->tab[am_slot(c, c->v[last]->id)] = (uint32_t)i + 1;
        c->v[i] = c->v[last];
        c->used[i] = c->used[last];
    }
    c->n--;
    if (s->refs == 0) {
        mem_count(c, s->bytes, -1);
        am_w_unref(s->w);
        am_sess_part_drop(c, s);
        am_sess_part_to_form(c, s); /* its rebuild parses no JSON */
        mem_bury(c, s);
    } else { /* in use: its write state stays findable (am_share_w) */
        s->stale = 1;
        AM_GROW(c->old, c->cap_old, c->n_old + 1, 2);
        c->old[c->n_old++] = s;
    }
}

/* A new runtime s of an id with a runtime of the same incarnation still
 * in use (dropped from the cache while a writer held it) takes that one's
 * write state, so the writers of the session keep excluding each other.
 * A runtime of a deleted incarnation is not shared: the re-created
 * session's writers need not wait for a long write (a rescore) of the
 * deleted one, which fails its own incarnation check. Under the cache
 * lock. */
static void am_share_w(am_sessions *c, am_sess *s)
{
    for (size_t i = 0; i < c->n_old; i++)
        if (c->old[i]->incarnation == s->incarnation && !strcmp(c->old[i]->id, s->id)) {
            am_w_unref(s->w); /* its own, not shared yet */
            s->w = c->old[i]->w;
            s->w->refs++;
            return;
        }
}

int am_sessions_acquire(am_sessions *c, const char *id, am_sess **out, am_buf *err)
{
    *out = NULL;
    /* Every change of a session's scorer inputs (glossary PUT, delete) goes
     * through this process and calls am_sessions_forget; a build racing such
     * a change can still insert an entry of the old incarnation or glossary
     * version, so users compare s->incarnation and s->glossary_version with
     * the store's (ingest.c) and drop a stale entry. */
    pthread_mutex_lock(&c->mu);
    size_t i = am_find(c, id);
    if (i != (size_t)-1) {
        c->v[i]->refs++;
        c->used[i] = ++c->tick;
        *out = c->v[i];
        pthread_mutex_unlock(&c->mu);
        return AM_OK;
    }
    pthread_mutex_unlock(&c->mu);
    int rc;

    /* Build outside the cache lock (glossaries can take a while). */
    am_sess *s = NULL;
    size_t reserved = 0;
    rc = am_sess_build(c, id, &s, &reserved, err);
    if (rc != AM_OK) {
        if (reserved)
            am_sessions_unreserve(c, reserved);
        return rc;
    }

    pthread_mutex_lock(&c->mu);
    mem_count(c, reserved, -1); /* the runtime's own bytes are counted below */
    i = am_find(c, id);
    /* incarnations only grow; within one, glossary versions only grow */
    if (i != (size_t)-1 && (c->v[i]->incarnation > s->incarnation ||
                            (c->v[i]->incarnation == s->incarnation &&
                             c->v[i]->glossary_version >= s->glossary_version))) {
        /* Another thread built it meanwhile: use theirs. */
        am_w_unref(s->w);
        am_sess_part_drop(c, s);
        mem_bury(c, s);
        s = c->v[i];
        c->used[i] = ++c->tick;
    } else {
        if (i != (size_t)-1)
            am_drop_at(c, i);
        if (c->n == c->max) {
            /* evict the least recently used entry */
            size_t lru = 0;
            for (size_t k = 1; k < c->n; k++)
                if (c->used[k] < c->used[lru])
                    lru = k;
            c->evictions++;
            am_drop_at(c, lru);
        }
        mem_count(c, s->bytes, 1);
        mem_count(c, am_sess_part_count(s), 1);
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            c->v = am_xrealloc(c->v, c->cap * sizeof *c->v);
            c->used = am_xrealloc(c->used, c->cap * sizeof *c->used);
        }
        am_share_w(c, s);
        c->v[c->n] = s;
        c->used[c->n] = ++c->tick;
        c->tab[am_slot(c, s->id)] = (uint32_t)c->n + 1;
        c->n++;
    }
    s->refs++;
    /* the idle runtimes make room for this one (LRU by bytes), which is
     * in use now; when those in use leave too little, it is over the
     * budget while it is used and freed at its release */
    mem_fit(c);
    *out = s;
    int reap = c->n_dead > 0;
    pthread_mutex_unlock(&c->mu);
    /* the build's transient (the glossary's text, its parse) is freed: a
     * large one is handed back to the system with the dead runtimes */
    if (reap || reserved >= AM_SESS_TRIM_BYTES)
        mem_reap(c, reserved);
    return AM_OK;
}

void am_sessions_release(am_sessions *c, am_sess *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&c->mu);
    assert(s->refs > 0); /* a release without its acquire */
    s->refs--;
    size_t s_bytes = s->bytes;
    int free_it = s->refs == 0 && s->stale;
    if (free_it) {
        for (size_t i = 0; i < c->n_old; i++)
            if (c->old[i] == s) {
                c->old[i] = c->old[--c->n_old];
                break;
            }
        mem_count(c, s->bytes, -1);
        am_w_unref(s->w);
        am_sess_part_drop(c, s);
        s_bytes += am_sess_part_owned(s);
    }
    if (s->refs == 0) {
        mem_fit(c); /* it may have stayed over the budget while in use */
        /* idle now: a waiting reservation may free it (am_sessions_reserve) */
        pthread_cond_broadcast(&c->room);
    }
    int reap = c->n_dead > 0;
    pthread_mutex_unlock(&c->mu);
    if (free_it)
        am_sess_free(s);
    if (reap || (free_it && s_bytes >= AM_SESS_TRIM_BYTES))
        mem_reap(c, free_it ? s_bytes : 0);
}

void am_sessions_forget_entry(am_sessions *c, const am_sess *s)
{
    pthread_mutex_lock(&c->mu);
    size_t i = am_find(c, s->id);
    if (i != (size_t)-1 && c->v[i] == s)
        am_drop_at(c, i);
    int reap = c->n_dead > 0;
    pthread_mutex_unlock(&c->mu);
    if (reap)
        mem_reap(c, 0);
}

void am_sessions_forget(am_sessions *c, const char *id)
{
    pthread_mutex_lock(&c->mu);
    size_t i = am_find(c, id);
    if (i != (size_t)-1)
        am_drop_at(c, i);
    am_sess_form_forget(c, id); /* its glossary replaced, or it is deleted */
    int reap = c->n_dead > 0 || c->untrimmed > 0;
    pthread_mutex_unlock(&c->mu);
    if (reap)
        mem_reap(c, 0);
}

/* ---- the memory budget: the least recently used idle runtimes freed to
 * fit, and the reservations requests wait for room with ---- */

/* Queues s (no user, its write state released) to be freed by the next
 * mem_reap. Under the cache lock. */
void mem_bury(am_sessions *c, am_sess *s)
{
    AM_GROW(c->dead, c->cap_dead, c->n_dead + 1, 4);
    c->dead[c->n_dead++] = s;
    size_t b = s->bytes + am_sess_part_owned(s);
    if (b >= AM_SESS_TRIM_LARGE)
        c->dead_bytes += b;
}

/* Frees the runtimes mem_bury queued, outside the cache lock (the caller
 * does not hold it), and hands large frees back to the system (with
 * `freed` bytes the caller freed itself). */
void mem_reap(am_sessions *c, size_t freed)
{
    pthread_mutex_lock(&c->mu);
    am_sess **dead = c->dead;
    size_t n = c->n_dead;
    c->untrimmed += c->dead_bytes + (freed >= AM_SESS_TRIM_LARGE ? freed : 0);
    int trim = c->untrimmed > 0;
    if (trim)
        c->untrimmed = 0;
    c->dead = NULL;
    c->n_dead = c->cap_dead = c->dead_bytes = 0;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++)
        am_sess_free(dead[i]);
    free(dead);
#if defined(__GLIBC__)
    if (trim)
        malloc_trim(0);
#else
    (void)trim;
#endif
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
        if (lru == (size_t)-1) {
            /* every cached runtime is in use: the compact glossaries go
             * (a rebuild parses its JSON again) before anyone waits */
            if (!am_sess_form_evict(c))
                return;
            continue;
        }
        c->evictions++;
        am_drop_at(c, lru);
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
    out->forms = c->n_forms;
    out->form_bytes = c->form_bytes;
    out->form_builds = c->form_builds;
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

/* ---- building a runtime from the store ---- */

/* Loads a background vocabulary from the store into an am_vocab. */
static int am_bg_add(void *ctx, const char *word, int64_t count)
{
    am_vocab_set(ctx, word, count);
    return 0;
}

/* Builds the runtime of id from the store into *out. Its build's memory
 * is reserved in the budget first (am_sessions_reserve, from the stored
 * glossary's size): *reserved bytes, which the caller gives back
 * (mem_count) once the runtime's own bytes are counted, also when the
 * build fails. AM_ERR_FULL (nothing reserved, a message in err) when
 * requests in flight hold the budget for longer than the cache waits. */
int am_sess_build(am_sessions *c, const char *id, am_sess **out, size_t *reserved, am_buf *err)
{
    am_store_session row;
    memset(&row, 0, sizeof row);
    *reserved = 0;
    int rc = am_store_session_get(c->st, id, &row);
    if (rc != AM_OK)
        return rc;
    /* a compiled scorer of the same inputs is borrowed (sess_share.c):
     * the build then parses and compiles nothing, and reserves only what
     * a runtime without a glossary needs */
    am_sess_part *part = NULL;
    am_sess_form_key fk = {id, row.incarnation, row.glossary_version};
    (void)am_sess_part_get(c, row.options, row.custom_stopwords, row.glossary, &fk, 0, &part, err);
    size_t est = am_sessions_build_estimate(row.glossary && !part ? strlen(row.glossary) : 0);
    rc = am_sessions_reserve(c, est, 1);
    if (rc != AM_OK) {
        am_sess_part_unref(c, part);
        am_buf_printf(err,
                      "the session-memory budget is held by requests in flight (building session "
                      "'%s' needs about %zu MiB); retry",
                      id, (est >> 20) + 1);
        am_store_session_clear(&row);
        return AM_ERR_FULL;
    }
    *reserved = est;
    am_sess *s = am_xcalloc(1, sizeof *s);
    s->id = am_xstrdup(id);
    am_gloss_init(&s->gloss);
    s->w = am_w_new(c);
    s->part = part; /* freed with s */
    s->glossary_version = row.glossary_version;
    s->incarnation = row.incarnation;

    json_t *opts = json_loads(row.options, 0, NULL);
    json_t *sys = json_object_get(opts, "systems");
    if (json_array_size(sys) > 0) {
        s->systems = am_xcalloc(json_array_size(sys), sizeof *s->systems);
        for (size_t i = 0; i < json_array_size(sys); i++)
            if (json_is_string(json_array_get(sys, i)))
                s->systems[s->n_systems++] = am_xstrdup(json_string_value(json_array_get(sys, i)));
    }
    const char *bs = json_string_value(json_object_get(opts, "baseline_system"));
    s->baseline = bs ? am_xstrdup(bs) : NULL;
    s->paired_totals = json_is_true(json_object_get(opts, "paired_totals"));
    const char *bg = json_string_value(json_object_get(opts, "background_vocabulary"));
    if (bg) {
        s->background = am_vocab_new();
        rc = am_store_vocabulary_each(c->st, bg, am_bg_add, s->background);
        if (rc == AM_ERR_NOTFOUND)
            rc = AM_ERR_CONFLICT; /* the session exists; its vocabulary was deleted */
        if (rc != AM_OK)
            am_buf_printf(err, "background vocabulary '%s' is not available", bg);
    }
    if (rc == AM_OK && !s->part && !bg)
        rc = am_sess_part_get(c, row.options, row.custom_stopwords, row.glossary, &fk, 1, &s->part,
                              err);
    if (rc == AM_OK && s->part) {
        s->scorer = am_sess_part_scorer(s->part);
        s->gloss = *am_sess_part_gloss(s->part); /* entries borrowed */
    } else if (rc == AM_OK) {
        rc = am_sessions_build_in(c, row.options, row.custom_stopwords, row.glossary, s->background,
                                  &s->scorer, &s->gloss, err);
    }
    if (rc == AM_OK && bg) {
        /* the vocabulary may have been replaced since the session was
         * created (same name, counted otherwise): its words would no
         * longer be the ones recall makes, so the session refuses it
         * (409) rather than count novel words wrongly */
        am_store_vocab_meta m;
        const char *field;
        memset(&m, 0, sizeof m);
        rc = am_store_vocabulary_meta(c->st, bg, &m);
        if (rc == AM_ERR_NOTFOUND) {
            am_buf_printf(err, "background vocabulary '%s' is not available", bg);
            rc = AM_ERR_CONFLICT;
        } else if (rc == AM_OK && am_sessions_vocab_check(bg, &m, am_scorer_config(s->scorer), err,
                                                          &field) != AM_OK)
            rc = AM_ERR_CONFLICT;
        am_store_vocab_meta_clear(&m);
    }
    json_decref(opts);
    size_t opt_bytes = row.options ? strlen(row.options) : 0;
    am_store_session_clear(&row);
    if (rc != AM_OK) {
        am_w_unref(s->w); /* not shared yet */
        pthread_mutex_lock(&c->mu);
        am_sess_part_drop(c, s);
        pthread_mutex_unlock(&c->mu);
        am_sess_free(s);
        return rc;
    }
    /* a shared part's bytes are counted once, by the part */
    s->bytes = (s->part ? 0 : am_sessions_scorer_bytes(s->scorer, &s->gloss)) +
               am_vocab_bytes_or0(s->background) + sizeof *s + sizeof *s->w + opt_bytes;
    *out = s;
    return AM_OK;
}
