/*
 * events.c — the event hub (see events.h).
 *
 * Structures: a fixed hash of topics (one per session that has
 * subscribers), each with a list of subscribers and its count, and a fixed
 * hash of client addresses with their open streams (the caps of
 * am_ev_admit). One hub mutex guards the topics, lists and counts; each
 * subscriber has its own mutex for its queue. Lock order: hub->mu, then
 * sub->mu, then (inside am_stream_wake) http_resp.c's stream mutex and
 * libmicrohttpd's. Messages are formatted once and shared
 * by reference counting. A publisher (the posting thread) only checks
 * that the session has subscribers, formats the message and appends it to
 * the hub's FIFO (O(1), its own short lock qmu); the hub's thread fans it
 * out — per subscriber one pointer push and one wake — so open dashboards
 * cost the posting path nothing that grows with their number. The same
 * thread sends the heartbeats.
 *
 * A subscriber is freed by http_resp.c's response free callback
 * (am_events_sub_free), which unlinks it under hub->mu: publishers and the
 * heartbeat only touch subscribers while holding hub->mu, so none is ever
 * used after it is freed.
 */
#include "events.h"
#include "prom.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AM_EV_BUCKETS 256
#define AM_EV_PAGE 64 /* stored segments read per replay page */

/* One formatted SSE message, shared by the queues (reference counted). */
typedef struct am_ev_msg {
    atomic_int refs;
    int64_t seq; /* segment seq, or -1 */
    int fresh; /* a new segment (POST): dropped after a replay that sent it */
    int final; /* "event: deleted": the stream ends after it */
    size_t len;
    char text[];
} am_ev_msg;

typedef struct am_ev_topic {
    char *session;
    am_ev_sub *subs; /* doubly linked through am_ev_sub.prev/next */
    int n; /* subscribers in subs */
    struct am_ev_topic *next; /* bucket chain */
} am_ev_topic;

/* Open streams of one client address (per-client cap); dropped at 0. */
typedef struct am_ev_peer {
    char *addr;
    int n;
    struct am_ev_peer *next; /* bucket chain */
} am_ev_peer;

struct am_ev_sub {
    am_events *ev;
    am_ev_topic *topic; /* NULL once unlinked */
    am_ev_sub *prev, *next;
    char *session;
    am_ev_peer *peer; /* counted per client (hub->mu); NULL when not */
    am_prom *prom; /* borrowed; NULL = not counted */
    pthread_mutex_t mu;
    am_stream *stream; /* borrowed; NULL before am_events_sub_start */
    int64_t expire_ns; /* CLOCK_MONOTONIC end of the stream's life; 0 = never */
    int64_t last_id; /* highest segment seq sent, or the session's at the start */
    /* live queue (ring) */
    am_ev_msg **q;
    size_t qcap, qhead, qlen;
    /* the message being sent and how much of it went */
    am_ev_msg *cur;
    size_t off;
    /* replay (only the reading thread touches these) */
    int replaying;
    int64_t replay_after; /* next page: seq > replay_after */
    am_ev_msg **rep;
    size_t nrep, irep;
    int64_t dedup_upto; /* fresh events with seq <= this were replayed (-1: none) */
    int retry_sent;
    int ping; /* a heartbeat is due */
    int overflow; /* fell too far behind: abort */
    int closing; /* no more events accepted (deleted queued) */
    int shutdown; /* the server stops: end now */
    int ended; /* the final event went out */
    int expired; /* its reconnect event was queued (maximum age) */
};

/* A message waiting for the fan-out thread. */
typedef struct am_ev_item {
    char *session;
    am_ev_msg *msg;
    struct am_ev_item *next;
} am_ev_item;

struct am_events {
    pthread_mutex_t mu;
    am_ev_topic *buckets[AM_EV_BUCKETS];
    am_ev_peer *peers[AM_EV_BUCKETS]; /* open streams per client address */
    atomic_int nsubs;
    int stopping;
    am_store *store;
    int heartbeat_s;
    am_ev_msg *retry_msg, *ping_msg;
    pthread_t thread;
    /* the fan-out FIFO (qmu; never held while taking mu) */
    pthread_mutex_t qmu;
    pthread_cond_t cond; /* wakes the thread: items, or exit */
    am_ev_item *qhead, *qtail;
    int thread_stop;
};

/* ---- messages ------------------------------------------------------------ */

/* A message with room for n bytes of text, not yet written (refs = 1). */
static am_ev_msg *am_ev_msg_alloc(size_t n, int64_t seq)
{
    am_ev_msg *m = am_xmalloc(sizeof *m + n + 1);
    atomic_init(&m->refs, 1);
    m->seq = seq;
    m->fresh = 0;
    m->final = 0;
    m->len = n;
    return m;
}

/* A message of n bytes copied from text (refs = 1). */
static am_ev_msg *am_ev_msg_new(const char *text, size_t n, int64_t seq)
{
    am_ev_msg *m = am_ev_msg_alloc(n, seq);
    memcpy(m->text, text, n);
    m->text[n] = '\0';
    return m;
}

/* "id: SEQ\nevent: segment\ndata: JSON\n\n" (refs = 1). The JSON is one
 * line (compact; newlines in strings are escaped); a stray CR or LF would
 * split the data field, so they are replaced by spaces to be safe. */
static am_ev_msg *am_ev_segment_msg(int64_t seq, const char *json)
{
    size_t jn = strlen(json);
    char head[64];
    int hn = snprintf(head, sizeof head, "id: %lld\nevent: segment\ndata: ", (long long)seq);
    size_t n = (size_t)hn + jn + 2;
    am_ev_msg *m = am_ev_msg_alloc(n, seq);
    memcpy(m->text, head, (size_t)hn);
    char *d = m->text + hn;
    for (size_t i = 0; i < jn; i++)
        d[i] = json[i] == '\n' || json[i] == '\r' ? ' ' : json[i];
    memcpy(d + jn, "\n\n", 3);
    return m;
}

static am_ev_msg *am_ev_ref(am_ev_msg *m)
{
    atomic_fetch_add(&m->refs, 1);
    return m;
}

static void am_ev_unref(am_ev_msg *m)
{
    if (!m)
        return;
    int before = atomic_fetch_sub(&m->refs, 1);
    assert(before > 0); /* one unref per ref */
    if (before == 1)
        free(m);
}

/* ---- topics (hub->mu held) ----------------------------------------------- */

static size_t am_ev_hash(const char *s)
{
    return (size_t)(am_fnv1a(s) % AM_EV_BUCKETS);
}

static am_ev_topic *am_ev_topic_find(am_events *ev, const char *session)
{
    for (am_ev_topic *t = ev->buckets[am_ev_hash(session)]; t; t = t->next)
        if (!strcmp(t->session, session))
            return t;
    return NULL;
}

/* Removes topic t from its bucket and frees it (its list is empty). */
static void am_ev_topic_drop(am_events *ev, am_ev_topic *t)
{
    am_ev_topic **pp = &ev->buckets[am_ev_hash(t->session)];
    while (*pp && *pp != t)
        pp = &(*pp)->next;
    if (*pp)
        *pp = t->next;
    free(t->session);
    free(t);
}

/* The open-stream count of client address addr, or NULL. */
static am_ev_peer *am_ev_peer_find(am_events *ev, const char *addr)
{
    for (am_ev_peer *p = ev->peers[am_ev_hash(addr)]; p; p = p->next)
        if (!strcmp(p->addr, addr))
            return p;
    return NULL;
}

/* Counts one more stream of addr (an entry is made at the first). */
static am_ev_peer *am_ev_peer_take(am_events *ev, const char *addr)
{
    am_ev_peer *p = am_ev_peer_find(ev, addr);
    if (!p) {
        size_t b = am_ev_hash(addr);
        p = am_xcalloc(1, sizeof *p);
        p->addr = am_xstrdup(addr);
        p->next = ev->peers[b];
        ev->peers[b] = p;
    }
    p->n++;
    return p;
}

/* Counts one stream of p less, dropping the entry at 0 (NULL-safe). */
static void am_ev_peer_put(am_events *ev, am_ev_peer *p)
{
    if (!p || --p->n > 0)
        return;
    am_ev_peer **pp = &ev->peers[am_ev_hash(p->addr)];
    while (*pp && *pp != p)
        pp = &(*pp)->next;
    if (*pp)
        *pp = p->next;
    free(p->addr);
    free(p);
}

/* Unlinks sub from its topic (dropping an empty topic) and from its
 * client's count. */
static void am_ev_unlink(am_events *ev, am_ev_sub *sub)
{
    am_ev_topic *t = sub->topic;
    if (!t)
        return;
    if (sub->prev)
        sub->prev->next = sub->next;
    else
        t->subs = sub->next;
    if (sub->next)
        sub->next->prev = sub->prev;
    sub->prev = sub->next = NULL;
    sub->topic = NULL;
    t->n--;
    atomic_fetch_sub(&ev->nsubs, 1);
    if (!t->subs)
        am_ev_topic_drop(ev, t);
    am_ev_peer_put(ev, sub->peer);
    sub->peer = NULL;
}

/* ---- subscriber queue (sub->mu held) ---------------------------------------- */

static void am_ev_queue_clear(am_ev_sub *sub)
{
    for (size_t i = 0; i < sub->qlen; i++)
        am_ev_unref(sub->q[(sub->qhead + i) % sub->qcap]);
    sub->qhead = sub->qlen = 0;
}

/* Appends a reference to m; a subscriber past the backlog is marked
 * overflowed and its queue dropped (a final message is always taken). */
static void am_ev_push(am_ev_sub *sub, am_ev_msg *m)
{
    if (sub->closing || sub->overflow || sub->shutdown)
        return;
    if (sub->qlen >= AM_EVENTS_MAX_BACKLOG && !m->final) {
        sub->overflow = 1;
        am_ev_queue_clear(sub);
        return;
    }
    if (sub->qlen == sub->qcap) {
        size_t cap = sub->qcap ? sub->qcap * 2 : 16;
        am_ev_msg **q = am_xmalloc(cap * sizeof *q);
        for (size_t i = 0; i < sub->qlen; i++)
            q[i] = sub->q[(sub->qhead + i) % sub->qcap];
        free(sub->q);
        sub->q = q;
        sub->qcap = cap;
        sub->qhead = 0;
    }
    assert(sub->qlen < sub->qcap && sub->qhead < sub->qcap); /* room in the ring */
    sub->q[(sub->qhead + sub->qlen) % sub->qcap] = am_ev_ref(m);
    sub->qlen++;
    if (m->final)
        sub->closing = 1;
}

static am_ev_msg *am_ev_pop(am_ev_sub *sub)
{
    if (!sub->qlen)
        return NULL;
    am_ev_msg *m = sub->q[sub->qhead];
    sub->qhead = (sub->qhead + 1) % sub->qcap;
    sub->qlen--;
    return m;
}

/* Delivers m to every subscriber of session and wakes them. */
static void am_ev_broadcast(am_events *ev, const char *session, am_ev_msg *m)
{
    pthread_mutex_lock(&ev->mu);
    am_ev_topic *t = am_ev_topic_find(ev, session);
    for (am_ev_sub *s = t ? t->subs : NULL; s; s = s->next) {
        pthread_mutex_lock(&s->mu);
        am_ev_push(s, m);
        am_stream *st = s->stream;
        pthread_mutex_unlock(&s->mu);
        if (st)
            am_stream_wake(st);
    }
    pthread_mutex_unlock(&ev->mu);
}

/* True when session has subscribers (a hint: checked again under the lock
 * by am_ev_broadcast). */
static int am_ev_has_subs(am_events *ev, const char *session)
{
    if (!atomic_load(&ev->nsubs))
        return 0;
    pthread_mutex_lock(&ev->mu);
    int any = am_ev_topic_find(ev, session) != NULL;
    pthread_mutex_unlock(&ev->mu);
    return any;
}

/* ---- publishing --------------------------------------------------------------- */

/* Hands m (the reference is taken over) to the fan-out thread: the
 * publisher's cost does not depend on the number of subscribers. The FIFO
 * keeps the publishers' order (seq order per session). */
static void am_ev_enqueue(am_events *ev, const char *session, am_ev_msg *m)
{
    am_ev_item *it = am_xmalloc(sizeof *it);
    it->session = am_xstrdup(session);
    it->msg = m;
    it->next = NULL;
    pthread_mutex_lock(&ev->qmu);
    if (ev->qtail)
        ev->qtail->next = it;
    else
        ev->qhead = it;
    ev->qtail = it;
    pthread_cond_signal(&ev->cond);
    pthread_mutex_unlock(&ev->qmu);
}

void am_events_publish(am_events *ev, const char *session, int64_t seq, const char *result_json)
{
    if (!ev || !result_json || !am_ev_has_subs(ev, session))
        return;
    am_ev_msg *m = am_ev_segment_msg(seq, result_json);
    m->fresh = 1;
    am_ev_enqueue(ev, session, m);
}

typedef struct am_ev_page {
    am_ev_msg **v;
    size_t n, cap;
    int64_t last;
} am_ev_page;

static int am_ev_page_row(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                          const char *result_json, int64_t created_at)
{
    am_ev_page *p = ctx;
    (void)client_id;
    (void)request_json;
    (void)created_at;
    AM_GROW(p->v, p->cap, p->n + 1, AM_EV_PAGE);
    p->v[p->n++] = am_ev_segment_msg(seq, result_json ? result_json : "{}");
    p->last = seq;
    return 0;
}

static void am_ev_page_free(am_ev_page *p)
{
    for (size_t i = 0; i < p->n; i++)
        am_ev_unref(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

int am_events_publish_from(am_events *ev, const char *session, int64_t from_seq)
{
    if (!ev || !am_ev_has_subs(ev, session))
        return AM_OK;
    int64_t after = from_seq - 1;
    for (;;) {
        am_ev_page p = {0};
        int rc = am_store_segments_each(ev->store, session, after, AM_EV_PAGE, am_ev_page_row, &p);
        if (rc != AM_OK) {
            am_ev_page_free(&p);
            return rc;
        }
        for (size_t i = 0; i < p.n; i++) {
            am_ev_enqueue(ev, session, p.v[i]);
            p.v[i] = NULL;
        }
        size_t n = p.n;
        after = p.last;
        am_ev_page_free(&p);
        if (n < AM_EV_PAGE)
            return AM_OK;
    }
}

void am_events_notice(am_events *ev, const char *session, const char *event, const char *json)
{
    if (!ev || !json || !am_ev_has_subs(ev, session))
        return;
    size_t jn = strlen(json);
    char head[80];
    int hn = snprintf(head, sizeof head, "event: %.40s\ndata: ", event);
    am_ev_msg *m = am_ev_msg_alloc((size_t)hn + jn + 2, -1);
    memcpy(m->text, head, (size_t)hn);
    char *d = m->text + hn;
    for (size_t i = 0; i < jn; i++)
        d[i] = json[i] == '\n' || json[i] == '\r' ? ' ' : json[i];
    memcpy(d + jn, "\n\n", 3);
    am_ev_enqueue(ev, session, m);
}

void am_events_deleted(am_events *ev, const char *session)
{
    if (!ev || !am_ev_has_subs(ev, session))
        return;
    static const char text[] = "event: deleted\ndata: {}\n\n";
    am_ev_msg *m = am_ev_msg_new(text, sizeof text - 1, -1);
    m->final = 1;
    am_ev_enqueue(ev, session, m);
}

/* ---- subscribers ------------------------------------------------------------------ */

/* Which cap of adm a new subscriber of session would pass (hub->mu
 * held): the server's, then the session's, then the client's. */
static am_ev_refusal am_ev_admit_check(am_events *ev, const char *session, const am_ev_admit *adm)
{
    if (adm->max_streams > 0 && atomic_load(&ev->nsubs) >= adm->max_streams)
        return AM_EV_FULL_SERVER;
    const am_ev_topic *t = am_ev_topic_find(ev, session);
    if (adm->per_session > 0 && t && t->n >= adm->per_session)
        return AM_EV_FULL_SESSION;
    const am_ev_peer *p = adm->peer && adm->peer[0] ? am_ev_peer_find(ev, adm->peer) : NULL;
    if (adm->per_client > 0 && p && p->n >= adm->per_client)
        return AM_EV_FULL_CLIENT;
    return AM_EV_ADMITTED;
}

static int64_t am_ev_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int am_events_subscribe(am_events *ev, const char *session, int64_t after, const am_ev_admit *adm,
                        am_ev_sub **out, am_ev_refusal *refused)
{
    static const am_ev_admit none = {"", 0, 0, 0, 0, NULL};
    if (!adm)
        adm = &none;
    *out = NULL;
    *refused = AM_EV_ADMITTED;
    am_ev_sub *sub = am_xcalloc(1, sizeof *sub);
    pthread_mutex_init(&sub->mu, NULL);
    sub->ev = ev;
    sub->session = am_xstrdup(session);
    sub->replaying = after >= 0;
    sub->replay_after = after;
    sub->dedup_upto = -1;
    sub->last_id = after;
    if (adm->max_age_s > 0)
        sub->expire_ns = am_ev_now_ns() + (int64_t)adm->max_age_s * 1000000000LL;
    pthread_mutex_lock(&ev->mu);
    if (ev->stopping) {
        sub->shutdown = 1;
    } else if ((*refused = am_ev_admit_check(ev, session, adm)) != AM_EV_ADMITTED) {
        pthread_mutex_unlock(&ev->mu);
        free(sub->session);
        pthread_mutex_destroy(&sub->mu);
        free(sub);
        return AM_ERR_RANGE;
    } else {
        am_ev_topic *t = am_ev_topic_find(ev, session);
        if (!t) {
            t = am_xcalloc(1, sizeof *t);
            t->session = am_xstrdup(session);
            size_t b = am_ev_hash(session);
            t->next = ev->buckets[b];
            ev->buckets[b] = t;
        }
        sub->topic = t;
        sub->next = t->subs;
        if (t->subs)
            t->subs->prev = sub;
        t->subs = sub;
        t->n++;
        if (adm->peer && adm->peer[0])
            sub->peer = am_ev_peer_take(ev, adm->peer);
        atomic_fetch_add(&ev->nsubs, 1);
        sub->prom = adm->prom;
        am_prom_stream_open(sub->prom, 1);
    }
    pthread_mutex_unlock(&ev->mu);
    *out = sub;
    return AM_OK;
}

void am_events_sub_start(am_ev_sub *sub, am_stream *st, int64_t last_seq)
{
    pthread_mutex_lock(&sub->mu);
    sub->stream = st;
    if (last_seq > sub->last_id && !sub->replaying)
        sub->last_id = last_seq; /* live only: the session was at last_seq */
    pthread_mutex_unlock(&sub->mu);
    am_stream_wake(st);
}

void am_events_sub_free(void *cls)
{
    am_ev_sub *sub = cls;
    if (!sub)
        return;
    am_events *ev = sub->ev;
    pthread_mutex_lock(&ev->mu);
    int counted = sub->topic != NULL;
    am_ev_unlink(ev, sub);
    pthread_mutex_unlock(&ev->mu);
    /* nobody else can reach sub now */
    if (counted)
        am_prom_stream_open(sub->prom, -1);
    if (sub->overflow)
        am_prom_stream_ended(sub->prom, "backlog");
    else if (sub->expired)
        am_prom_stream_ended(sub->prom, "max_age");
    am_ev_queue_clear(sub);
    free(sub->q);
    am_ev_unref(sub->cur);
    for (size_t i = sub->irep; i < sub->nrep; i++)
        am_ev_unref(sub->rep[i]);
    free(sub->rep);
    free(sub->session);
    pthread_mutex_destroy(&sub->mu);
    free(sub);
}

/* Reads the next replay page into sub->rep (no lock held: only the
 * reading thread uses the replay fields). Ends the replay on a short
 * page. Returns AM_OK or the store's error. */
static int am_ev_replay_page(am_ev_sub *sub)
{
    am_ev_page p = {0};
    int rc = am_store_segments_each(sub->ev->store, sub->session, sub->replay_after, AM_EV_PAGE,
                                    am_ev_page_row, &p);
    if (rc == AM_ERR_NOTFOUND)
        rc = AM_OK; /* the session is gone: nothing to replay (deleted follows) */
    if (rc != AM_OK) {
        am_ev_page_free(&p);
        return rc;
    }
    free(sub->rep);
    sub->rep = p.v;
    sub->nrep = p.n;
    sub->irep = 0;
    if (p.n)
        sub->replay_after = p.last;
    if (p.n < AM_EV_PAGE) {
        pthread_mutex_lock(&sub->mu);
        sub->replaying = 0;
        sub->dedup_upto = sub->replay_after;
        pthread_mutex_unlock(&sub->mu);
    }
    return AM_OK;
}

/* Notes the seq of m (about to be sent) as the last id; returns m. */
static am_ev_msg *am_ev_sent(am_ev_sub *sub, am_ev_msg *m)
{
    if (m->seq > sub->last_id)
        sub->last_id = m->seq;
    return m;
}

/* The last message of a stream past its maximum age (sub->mu held, nothing
 * queued): "id: LAST" sets the client's Last-Event-ID to the last segment
 * it was sent (an id field without data changes it too, but the event
 * also tells a raw client why the stream ends), so its automatic
 * reconnect resumes without a gap. The stream then ends; the subscriber
 * takes no more events. */
static am_ev_msg *am_ev_reconnect_msg(am_ev_sub *sub)
{
    char text[192];
    long long id = sub->last_id > 0 ? (long long)sub->last_id : 0;
    int n = snprintf(text, sizeof text,
                     "id: %lld\nevent: reconnect\ndata: {\"reason\":\"max-age\","
                     "\"last_event_id\":%lld,\"retry_ms\":%d}\n\n",
                     id, id, AM_EVENTS_RETRY_MS);
    am_ev_msg *m = am_ev_msg_new(text, (size_t)n, -1);
    m->final = 1;
    sub->closing = 1;
    sub->expired = 1;
    am_ev_queue_clear(sub);
    return m;
}

/* The next message to send (a reference the caller owns), or NULL (sub->mu
 * held). *need_page is set when the replay needs another page first. */
static am_ev_msg *am_ev_next(am_ev_sub *sub, int *need_page)
{
    *need_page = 0;
    if (!sub->retry_sent) {
        sub->retry_sent = 1;
        return am_ev_ref(sub->ev->retry_msg);
    }
    if (sub->irep < sub->nrep)
        return am_ev_sent(sub, sub->rep[sub->irep++]);
    if (sub->replaying) {
        *need_page = 1;
        return NULL;
    }
    am_ev_msg *m;
    while ((m = am_ev_pop(sub))) {
        if (m->fresh && m->seq <= sub->dedup_upto) {
            am_ev_unref(m); /* the replay sent it */
            continue;
        }
        sub->ping = 0; /* traffic is a heartbeat too */
        return am_ev_sent(sub, m);
    }
    if (sub->expire_ns && !sub->closing && am_ev_now_ns() >= sub->expire_ns)
        return am_ev_reconnect_msg(sub);
    if (sub->ping) {
        sub->ping = 0;
        return am_ev_ref(sub->ev->ping_msg);
    }
    return NULL;
}

long am_events_sub_read(void *cls, char *buf, size_t max)
{
    am_ev_sub *sub = cls;
    size_t n = 0;
    while (n < max) {
        pthread_mutex_lock(&sub->mu);
        if (sub->ended) { /* the final event went out */
            pthread_mutex_unlock(&sub->mu);
            return n ? (long)n : AM_STREAM_END;
        }
        if (sub->shutdown || sub->overflow) {
            int abort = sub->overflow;
            pthread_mutex_unlock(&sub->mu);
            if (n)
                return (long)n;
            return abort ? AM_STREAM_ABORT : AM_STREAM_END;
        }
        int need_page = 0;
        if (!sub->cur) {
            sub->cur = am_ev_next(sub, &need_page);
            sub->off = 0;
        }
        if (sub->cur) {
            am_ev_msg *m = sub->cur;
            size_t k = m->len - sub->off;
            if (k > max - n)
                k = max - n;
            memcpy(buf + n, m->text + sub->off, k);
            n += k;
            sub->off += k;
            if (sub->off == m->len) {
                if (m->final)
                    sub->ended = 1;
                sub->cur = NULL;
                am_ev_unref(m);
            }
            pthread_mutex_unlock(&sub->mu);
            continue;
        }
        pthread_mutex_unlock(&sub->mu);
        if (need_page && !n) {
            if (am_ev_replay_page(sub) != AM_OK)
                return AM_STREAM_ABORT;
            continue;
        }
        return n ? (long)n : AM_STREAM_WAIT;
    }
    return (long)n;
}

/* ---- heartbeat, shutdown, life ------------------------------------------------------ */

/* Marks every subscriber (ping or shutdown) and wakes it (hub->mu held). */
static void am_ev_mark_all(am_events *ev, int shutdown)
{
    for (size_t b = 0; b < AM_EV_BUCKETS; b++)
        for (am_ev_topic *t = ev->buckets[b]; t; t = t->next)
            for (am_ev_sub *s = t->subs; s; s = s->next) {
                pthread_mutex_lock(&s->mu);
                if (shutdown)
                    s->shutdown = 1;
                else
                    s->ping = 1;
                am_stream *st = s->stream;
                pthread_mutex_unlock(&s->mu);
                if (st)
                    am_stream_wake(st);
            }
}

/* The hub's thread: fans queued messages out to the subscribers, and
 * every heartbeat_s seconds marks a ping on every subscriber. */
static void *am_ev_thread(void *arg)
{
    am_events *ev = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    next.tv_sec += ev->heartbeat_s;
    pthread_mutex_lock(&ev->qmu);
    for (;;) {
        int rc = 0;
        while (!ev->thread_stop && !ev->qhead && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&ev->cond, &ev->qmu, &next);
        if (ev->thread_stop)
            break;
        am_ev_item *items = ev->qhead;
        ev->qhead = ev->qtail = NULL;
        pthread_mutex_unlock(&ev->qmu);
        while (items) {
            am_ev_item *it = items;
            items = it->next;
            am_ev_broadcast(ev, it->session, it->msg);
            am_ev_unref(it->msg);
            free(it->session);
            free(it);
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec ||
            (now.tv_sec == next.tv_sec && now.tv_nsec >= next.tv_nsec)) {
            pthread_mutex_lock(&ev->mu);
            if (!ev->stopping)
                am_ev_mark_all(ev, 0);
            pthread_mutex_unlock(&ev->mu);
            next = now;
            next.tv_sec += ev->heartbeat_s;
        }
        pthread_mutex_lock(&ev->qmu);
    }
    pthread_mutex_unlock(&ev->qmu);
    return NULL;
}

/* Frees ev's messages, locks and itself (its thread stopped or never
 * started, its queue and topics emptied). */
static void am_ev_destroy(am_events *ev)
{
    am_ev_unref(ev->retry_msg);
    am_ev_unref(ev->ping_msg);
    pthread_cond_destroy(&ev->cond);
    pthread_mutex_destroy(&ev->qmu);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

am_events *am_events_new(am_store *store, int heartbeat_s)
{
    am_events *ev = am_xcalloc(1, sizeof *ev);
    pthread_mutex_init(&ev->mu, NULL);
    pthread_mutex_init(&ev->qmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ev->cond, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&ev->nsubs, 0);
    ev->store = store;
    ev->heartbeat_s = heartbeat_s > 0 ? heartbeat_s : 15;
    char retry[64];
    int n = snprintf(retry, sizeof retry, "retry: %d\n\n", AM_EVENTS_RETRY_MS);
    ev->retry_msg = am_ev_msg_new(retry, (size_t)n, -1);
    static const char ping[] = ": ping\n\n";
    ev->ping_msg = am_ev_msg_new(ping, sizeof ping - 1, -1);
    if (pthread_create(&ev->thread, NULL, am_ev_thread, ev) != 0) {
        am_ev_destroy(ev);
        return NULL;
    }
    return ev;
}

void am_events_shutdown(am_events *ev)
{
    if (!ev)
        return;
    pthread_mutex_lock(&ev->mu);
    ev->stopping = 1;
    am_ev_mark_all(ev, 1);
    pthread_mutex_unlock(&ev->mu);
}

void am_events_free(am_events *ev)
{
    if (!ev)
        return;
    pthread_mutex_lock(&ev->qmu);
    ev->thread_stop = 1;
    pthread_cond_signal(&ev->cond);
    pthread_mutex_unlock(&ev->qmu);
    pthread_join(ev->thread, NULL);
    while (ev->qhead) { /* not delivered: nobody listens any more */
        am_ev_item *it = ev->qhead;
        ev->qhead = it->next;
        am_ev_unref(it->msg);
        free(it->session);
        free(it);
    }
    /* the daemon is stopped: every subscriber was freed with its response */
    for (size_t b = 0; b < AM_EV_BUCKETS; b++) {
        am_ev_topic *t = ev->buckets[b];
        while (t) {
            am_ev_topic *next = t->next;
            for (am_ev_sub *s = t->subs; s; s = s->next)
                s->topic = NULL;
            free(t->session);
            free(t);
            t = next;
        }
        for (am_ev_peer *p = ev->peers[b], *next; p; p = next) {
            next = p->next;
            free(p->addr);
            free(p);
        }
    }
    am_ev_destroy(ev);
}
