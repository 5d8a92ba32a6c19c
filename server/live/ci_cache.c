/*
 * ci_cache.c — the ?ci= statistics cache (see ci_cache.h): a doubly linked
 * LRU list under one mutex. Few sessions ask for intervals at once, so the
 * list is searched linearly; the entries are large (tens of bytes a
 * segment and system), so the byte bound, not the count, evicts.
 */
#include "ci_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct am_cicache {
    pthread_mutex_t mu;
    am_sessions *sessions; /* borrowed; NULL: bytes not charged */
    size_t max_bytes, bytes, n;
    am_ci_entry *head, *tail; /* most recently used first */
};

am_cicache *am_cicache_new(size_t max_bytes, am_sessions *sessions)
{
    am_cicache *c = am_xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->max_bytes = max_bytes;
    c->sessions = sessions;
    return c;
}

/* Unlinks e from c's list and returns its charge (under c->mu). */
static void ci_unlink(am_cicache *c, am_ci_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    c->bytes -= e->charged;
    c->n--;
    if (c->sessions)
        am_sessions_uncharge(c->sessions, e->charged);
    e->charged = 0;
}

void am_cicache_free(am_cicache *c)
{
    if (!c)
        return;
    while (c->head) {
        am_ci_entry *e = c->head;
        ci_unlink(c, e);
        am_ci_entry_free(e);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

am_ci_entry *am_ci_entry_new(const char *id, int64_t incarnation, const char *options,
                             const char *const *names, size_t nsys, const am_scorer *s)
{
    am_ci_entry *e = am_xcalloc(1, sizeof *e);
    e->id = am_xstrdup(id);
    e->incarnation = incarnation;
    e->stamp[0] = e->stamp[1] = -1;
    e->options = am_xstrdup(options ? options : "");
    e->nsys = nsys;
    e->names = am_xcalloc(nsys ? nsys : 1, sizeof *e->names);
    for (size_t i = 0; i < nsys; i++)
        e->names[i] = am_xstrdup(names[i]);
    e->col = am_sig_collect_new(s, nsys, 1, 0);
    am_sig_collect_session(e->col); /* one session: segments are the units */
    return e;
}

int am_ci_entry_fits(am_ci_entry *e, int64_t incarnation, const char *options,
                     const char *const *names, size_t nsys, const am_scorer *s)
{
    if (e->incarnation != incarnation || e->nsys != nsys ||
        strcmp(e->options, options ? options : ""))
        return 0;
    for (size_t i = 0; i < nsys; i++)
        if (strcmp(e->names[i], names[i]))
            return 0;
    return am_sig_collect_bind(e->col, s) == AM_OK;
}

void am_ci_entry_free(am_ci_entry *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nsys; i++)
        free(e->names[i]);
    free(e->names);
    free(e->options);
    free(e->id);
    am_sig_collect_free(e->col);
    free(e);
}

/* The entry of id in c's list, or NULL (under c->mu). */
static am_ci_entry *ci_find(am_cicache *c, const char *id)
{
    for (am_ci_entry *e = c->head; e; e = e->next)
        if (!strcmp(e->id, id))
            return e;
    return NULL;
}

am_ci_entry *am_cicache_take(am_cicache *c, const char *id)
{
    if (!c)
        return NULL;
    pthread_mutex_lock(&c->mu);
    am_ci_entry *e = ci_find(c, id);
    if (e)
        ci_unlink(c, e);
    pthread_mutex_unlock(&c->mu);
    return e;
}

/* Complexity: the same-id rule, then the eviction loop; the frees happen
 * outside the lock. */
void am_cicache_put(am_cicache *c, am_ci_entry *e)
{
    if (!c || !e) {
        am_ci_entry_free(e);
        return;
    }
    size_t bytes = sizeof *e + strlen(e->options) + am_sig_collect_bytes(e->col);
    am_ci_entry *drop = NULL; /* freed after the lock: a chain through next */
    pthread_mutex_lock(&c->mu);
    am_ci_entry *old = ci_find(c, e->id);
    if (old && old->incarnation == e->incarnation &&
        am_sig_collect_nseg(old->col) >= am_sig_collect_nseg(e->col)) {
        old = NULL; /* the one in the cache knows as much: keep it */
        drop = e;
        e = NULL;
    }
    if (e && bytes > c->max_bytes) {
        drop = e;
        e = NULL;
    }
    if (old && e) {
        ci_unlink(c, old);
        old->next = drop;
        drop = old;
    }
    while (e && c->tail && c->bytes + bytes > c->max_bytes) {
        am_ci_entry *v = c->tail;
        ci_unlink(c, v);
        v->next = drop;
        drop = v;
    }
    if (e) {
        e->charged = bytes;
        e->prev = NULL;
        e->next = c->head;
        if (c->head)
            c->head->prev = e;
        else
            c->tail = e;
        c->head = e;
        c->bytes += bytes;
        c->n++;
        /* under the lock, so that a take cannot uncharge it first (the
         * sessions cache never calls back here: no lock order issue) */
        if (c->sessions)
            am_sessions_charge(c->sessions, bytes);
    }
    pthread_mutex_unlock(&c->mu);
    while (drop) {
        am_ci_entry *nx = drop->next;
        drop->next = NULL;
        am_ci_entry_free(drop);
        drop = nx;
    }
}

void am_cicache_usage(am_cicache *c, size_t *entries, size_t *bytes)
{
    pthread_mutex_lock(&c->mu);
    *entries = c->n;
    *bytes = c->bytes;
    pthread_mutex_unlock(&c->mu);
}
