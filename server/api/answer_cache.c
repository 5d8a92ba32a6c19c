/* answer_cache.c — per-session cache of GET …/metrics answer bodies (see answer_cache.h). */
#include "answer_cache.h"

#include "am.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct am_acache_ent {
    struct am_acache_ent *hnext; /* hash chain */
    struct am_acache_ent *prev, *next; /* LRU list, most recent at head */
    uint64_t hash;
    int64_t incarnation, version;
    char *id; /* owned */
    char *body; /* owned, NUL-terminated */
    size_t len;
} am_acache_ent;

struct am_acache {
    pthread_mutex_t mu;
    am_acache_ent **buckets; /* nbuckets chains */
    size_t nbuckets; /* a power of two */
    am_acache_ent *head, *tail;
    size_t count, bytes;
    size_t max_entries, max_bytes;
    uint64_t drops; /* bumped by every am_acache_drop (tickets) */
};

/* Ownership: the caller owns the result. */
am_acache *am_acache_new(size_t max_entries, size_t max_bytes)
{
    am_acache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nbuckets = 16;
    while (c->nbuckets < max_entries * 2)
        c->nbuckets *= 2;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->buckets || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c->buckets);
        free(c);
        return NULL;
    }
    c->max_entries = max_entries ? max_entries : 1;
    c->max_bytes = max_bytes;
    return c;
}

static void am_acache_ent_free(am_acache_ent *e)
{
    free(e->id);
    free(e->body);
    free(e);
}

/* Frees c and its entries. */
void am_acache_free(am_acache *c)
{
    if (!c)
        return;
    am_acache_ent *e = c->head;
    while (e) {
        am_acache_ent *n = e->next;
        am_acache_ent_free(e);
        e = n;
    }
    pthread_mutex_destroy(&c->mu);
    free(c->buckets);
    free(c);
}

/* The entry of id (lock held), or NULL; *slot receives its chain link. */
static am_acache_ent *am_acache_find(am_acache *c, const char *id, uint64_t h,
                                     am_acache_ent ***slot)
{
    am_acache_ent **p = &c->buckets[h & (c->nbuckets - 1)];
    for (; *p; p = &(*p)->hnext) {
        if ((*p)->hash == h && !strcmp((*p)->id, id))
            break;
    }
    if (slot)
        *slot = p;
    return *p;
}

static void am_acache_unlink(am_acache *c, am_acache_ent *e)
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
}

static void am_acache_push_front(am_acache *c, am_acache_ent *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
}

/* Removes and frees e (lock held). */
static void am_acache_remove(am_acache *c, am_acache_ent *e)
{
    am_acache_ent **p;
    am_acache_find(c, e->id, e->hash, &p);
    *p = e->hnext;
    am_acache_unlink(c, e);
    c->count--;
    c->bytes -= e->len;
    am_acache_ent_free(e);
}

uint64_t am_acache_ticket(am_acache *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t t = c->drops;
    pthread_mutex_unlock(&c->mu);
    return t;
}

/* Ownership: *body is a new malloc'd copy owned by the caller. */
int am_acache_get(am_acache *c, const char *id, int64_t incarnation, int64_t version, char **body,
                  size_t *len)
{
    uint64_t h = am_fnv1a(id);
    int rc = AM_ERR_NOTFOUND;
    pthread_mutex_lock(&c->mu);
    am_acache_ent *e = am_acache_find(c, id, h, NULL);
    if (e && e->incarnation == incarnation && e->version == version) {
        char *copy = malloc(e->len + 1);
        if (copy) {
            memcpy(copy, e->body, e->len + 1);
            *body = copy;
            *len = e->len;
            am_acache_unlink(c, e);
            am_acache_push_front(c, e);
            rc = AM_OK;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Ownership: id and body are borrowed (copied). */
int am_acache_put(am_acache *c, uint64_t ticket, const char *id, int64_t incarnation,
                  int64_t version, const char *body, size_t len)
{
    if (len > c->max_bytes)
        return AM_OK;
    uint64_t h = am_fnv1a(id);
    /* copies made outside the lock */
    char *copy = malloc(len + 1);
    char *idc = strdup(id);
    am_acache_ent *n = calloc(1, sizeof *n);
    if (!copy || !idc || !n) {
        free(copy);
        free(idc);
        free(n);
        return AM_ERR_NOMEM;
    }
    memcpy(copy, body, len);
    copy[len] = '\0';
    n->hash = h;
    n->incarnation = incarnation;
    n->version = version;
    n->id = idc;
    n->body = copy;
    n->len = len;
    pthread_mutex_lock(&c->mu);
    if (ticket != c->drops) {
        pthread_mutex_unlock(&c->mu);
        am_acache_ent_free(n);
        return AM_OK;
    }
    am_acache_ent *e = am_acache_find(c, id, h, NULL);
    if (e) {
        /* incarnations only grow, and versions within one */
        if (e->incarnation > incarnation ||
            (e->incarnation == incarnation && e->version > version)) { /* a newer one is held */
            pthread_mutex_unlock(&c->mu);
            am_acache_ent_free(n);
            return AM_OK;
        }
        am_acache_remove(c, e);
    }
    while (c->tail && (c->count + 1 > c->max_entries || c->bytes + len > c->max_bytes))
        am_acache_remove(c, c->tail);
    am_acache_ent **p = &c->buckets[h & (c->nbuckets - 1)];
    n->hnext = *p;
    *p = n;
    am_acache_push_front(c, n);
    c->count++;
    c->bytes += len;
    pthread_mutex_unlock(&c->mu);
    return AM_OK;
}

void am_acache_drop(am_acache *c, const char *id)
{
    if (!c)
        return;
    uint64_t h = am_fnv1a(id);
    pthread_mutex_lock(&c->mu);
    c->drops++;
    am_acache_ent *e = am_acache_find(c, id, h, NULL);
    if (e)
        am_acache_remove(c, e);
    pthread_mutex_unlock(&c->mu);
}
