/*
 * events.h — the event hub behind GET /v1/sessions/{id}/events
 * (Server-Sent Events for live dashboards; handler in api_events.c).
 *
 * Publishers (ingest.c after a commit, the session delete handler) hand the
 * hub the stored result text of a segment; when the session has
 * subscribers, the hub formats one SSE message once ("id: SEQ\nevent:
 * segment\ndata: JSON\n\n") and appends it to its FIFO (O(1) for the
 * publisher, whatever the number of subscribers). The hub's thread then
 * appends a reference to the bounded queue of every subscriber of that
 * session under a short lock: no I/O, no store access, never a wait on a
 * client. A subscriber that falls more than AM_EVENTS_MAX_BACKLOG events
 * behind is disconnected (it resumes with Last-Event-ID).
 *
 * Subscribers are read by http_resp.c's streamed responses (am_resp_stream):
 * when a subscriber has nothing to send, http_resp.c suspends its connection
 * (libmicrohttpd suspend/resume), so an idle stream holds no thread; the
 * hub wakes it when an event, a heartbeat or the shutdown arrives.
 *
 * Resume (Last-Event-ID / ?after=N): the subscriber is registered first
 * (live events are buffered from then on), then the stored segments with
 * seq > N are replayed from the store in pages by the reading thread, then
 * the buffered live events follow, without the new-segment events the
 * replay already sent (seq <= the last replayed seq). Replacement (PUT)
 * events are always delivered: clients treat an already-seen seq as an
 * update.
 *
 * Budgets (issue 25): a subscriber is admitted only within the caps of
 * am_ev_admit — open streams on the server, per client address and per
 * session — so no client can take every connection with streams. A
 * stream ends after its maximum age (at a moment when nothing is queued
 * for it) with "id: N\nevent: reconnect\ndata: {…}": the id makes the
 * client's Last-Event-ID the last segment it was sent, and EventSource
 * reconnects by itself after the retry delay and resumes there without a
 * gap. So a stream nobody reads any more (a closed laptop, a dead NAT
 * entry) gives its connection back. A stream whose client stops reading
 * while events keep coming is dropped at AM_EVENTS_MAX_BACKLOG events, or
 * by the connection timeout (conn-timeout) once its writes cannot
 * progress (libmicrohttpd closes a connection without I/O for that long).
 */
#ifndef AM_EVENTS_H
#define AM_EVENTS_H

#include "http.h" /* am_api_events' am_req, am_resp */
#include "stream.h" /* am_stream, am_stream_wake */
#include "store.h"

#include <stdint.h>

#define AM_EVENTS_MAX_BACKLOG 1024 /* queued events before a subscriber is dropped */
#define AM_EVENTS_RETRY_MS 2000 /* the "retry:" sent first */

typedef struct am_events am_events;
typedef struct am_ev_sub am_ev_sub;

/* A hub reading replays from store (borrowed, must outlive the hub), with
 * a ": ping" comment to every subscriber every heartbeat_s seconds (the
 * hub's thread, which also fans events out). Returns NULL when the thread cannot start.
 * Caller frees with am_events_free (after the HTTP daemon stopped). */
am_events *am_events_new(am_store *store, int heartbeat_s);
void am_events_free(am_events *ev);

/* Ends every open stream now and every later one at once (SIGTERM). */
void am_events_shutdown(am_events *ev);

/* A new segment (POST) was committed: result_json is its stored result
 * text (one line of JSON, copied). Call in seq order per session (ingest.c
 * holds the session lock). */
void am_events_publish(am_events *ev, const char *session, int64_t seq, const char *result_json);
/* A replacement (PUT) was committed: re-sends the stored results of
 * segments seq >= from_seq, read from the store in pages (only when the
 * session has subscribers). Returns AM_OK or the store's error. */
int am_events_publish_from(am_events *ev, const char *session, int64_t from_seq);
/* A message without an id ("event: EVENT\ndata: JSON\n\n"; json is one
 * object, copied): the progress of a rescore ("rescore", rescore.c). */
void am_events_notice(am_events *ev, const char *session, const char *event, const char *json);
/* The session was deleted: subscribers get "event: deleted" and end. */
void am_events_deleted(am_events *ev, const char *session);

/* Who asks for a stream and the caps it must fit (api_events.c fills it
 * from the server options): every count is of open streams, checked and
 * taken under the hub's lock, so concurrent subscribers cannot overshoot.
 * A cap of 0 is no cap (max_streams 0 is refused before subscribing). */
typedef struct am_ev_admit {
    const char *peer; /* client address text ("" when unknown: not counted per client) */
    int max_streams; /* on the whole hub */
    int per_client; /* per peer */
    int per_session;
    int max_age_s; /* the stream ends with "event: reconnect" after this; 0 = never */
    struct am_prom *prom; /* borrowed, outlives the hub; NULL = not counted */
} am_ev_admit;

/* Which cap refused a subscriber (AM_EV_ADMITTED: none). */
typedef enum am_ev_refusal {
    AM_EV_ADMITTED = 0,
    AM_EV_FULL_SERVER,
    AM_EV_FULL_CLIENT,
    AM_EV_FULL_SESSION
} am_ev_refusal;

/* Registers a subscriber of session (events are buffered from now on);
 * after < 0: live events only, else replay seq > after first. Returns
 * AM_OK with *out owned by the caller: hand it to am_resp_stream with
 * am_events_sub_read and am_events_sub_free, then am_events_sub_start; or
 * free it. When a cap of adm is reached: AM_ERR_RANGE, *out NULL and
 * *refused says which (nothing registered). */
int am_events_subscribe(am_events *ev, const char *session, int64_t after, const am_ev_admit *adm,
                        am_ev_sub **out, am_ev_refusal *refused);
/* Tells the subscriber which stream to wake (borrowed; valid until
 * am_events_sub_free) and the session's highest seq when it was looked up
 * (the id its reconnect event carries when no later segment was sent). */
void am_events_sub_start(am_ev_sub *sub, am_stream *st, int64_t last_seq);
/* am_stream_read_fn: the next bytes of the stream (see http.h). */
long am_events_sub_read(void *sub, char *buf, size_t max);
/* am_stream_free_fn: unsubscribes and frees. */
void am_events_sub_free(void *sub);

/* GET /v1/sessions/{id}/events (api_events.c). */
void am_api_events(am_req *req, am_resp *resp);

#endif
