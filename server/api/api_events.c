/* api_events.c — GET /v1/sessions/{id}/events: Server-Sent Events of a
 * session's scored segments (the hub is events.c, the streaming http.c). */
#include "api.h"

#include "events.h"
#include "prom.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Last-Event-ID (a reconnecting EventSource sends it) or, for a first
 * connection, ?after=N: replay stored segments with seq > N. Absent: -1
 * (live events only). Returns AM_OK or AM_ERR_INVALID with a 400 in resp. */
static int am_events_after(am_req *req, am_resp *resp, int64_t *after)
{
    *after = -1;
    const char *h = am_req_header(req, "Last-Event-ID");
    while (h && (*h == ' ' || *h == '\t'))
        h++;
    if (h && *h) {
        char *end;
        errno = 0;
        long long v = strtoll(h, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        if (*end || errno || v < 0 || *h == '-' || *h == '+') {
            am_resp_problem(resp, req, AM_P_BAD_REQUEST,
                            "Last-Event-ID must be a segment seq (an integer >= 0)");
            return AM_ERR_INVALID;
        }
        *after = v;
        return AM_OK;
    }
    return am_api_query_int(req, resp, "after", 0, INT64_MAX, after);
}

#define AM_EVENTS_RETRY_AFTER "5" /* seconds, on a refusal by a cap */

/* The key the per-client cap counts under (into key, n bytes): the IPv4
 * address, or the /64 prefix of an IPv6 one ("2001:db8:1:2::/64"): one
 * host is usually given a whole /64, so a per-address cap would not bind
 * it. "" when the address is unknown (not counted per client). */
static void am_events_client_key(const am_req *req, char *key, size_t n)
{
    char addr[64];
    am_req_peer(req, addr, sizeof addr);
    struct in6_addr a6;
    if (!strchr(addr, ':') || inet_pton(AF_INET6, addr, &a6) != 1) {
        snprintf(key, n, "%s", addr);
        return;
    }
    memset(&a6.s6_addr[8], 0, 8);
    char net[64];
    if (!inet_ntop(AF_INET6, &a6, net, sizeof net))
        net[0] = '\0';
    snprintf(key, n, "%s/64", net);
}

/* Answers the refusal of a cap (429 for a client's or a session's, 503 for
 * the server's) with Retry-After, and counts it. */
static void am_events_refuse(am_req *req, am_resp *resp, am_ev_refusal why)
{
    const am_srv_config *cfg = &req->srv->cfg;
    const char *limit = why == AM_EV_FULL_CLIENT    ? "client"
                        : why == AM_EV_FULL_SESSION ? "session"
                                                    : "server";
    int cap = why == AM_EV_FULL_CLIENT    ? cfg->max_streams_per_client
              : why == AM_EV_FULL_SESSION ? cfg->max_streams_per_session
                                          : cfg->max_streams;
    if (why == AM_EV_FULL_SERVER)
        am_resp_problem(resp, req, AM_P_UNAVAILABLE,
                        "the server has %d event streams open (max-streams); retry later", cap);
    else
        am_resp_problem(resp, req, AM_P_TOO_MANY_STREAMS,
                        "%s already has %d event streams open (max-streams-per-%s); close one "
                        "or retry later",
                        why == AM_EV_FULL_CLIENT ? "this client address" : "this session", cap,
                        limit);
    am_resp_problem_set(resp, "cap", json_string(limit));
    am_resp_problem_set(resp, "max", json_integer(cap));
    am_resp_header(resp, "Retry-After", AM_EVENTS_RETRY_AFTER);
    am_prom_stream_refused(req->srv->prom, limit);
}

void am_api_events(am_req *req, am_resp *resp)
{
    am_events *ev = req->srv->events;
    const am_srv_config *cfg = &req->srv->cfg;
    int64_t after = -1;
    if (am_events_after(req, resp, &after) != AM_OK)
        return;
    if (!ev || !cfg->max_streams) {
        am_resp_problem(resp, req, AM_P_UNAVAILABLE, "event streams are off");
        return;
    }
    /* subscribe before looking the session up: a delete in between is then
     * seen as "event: deleted", not missed; the caps are taken at once */
    char peer[80];
    am_events_client_key(req, peer, sizeof peer);
    am_ev_admit adm = {peer,
                       cfg->max_streams,
                       cfg->max_streams_per_client,
                       cfg->max_streams_per_session,
                       cfg->stream_max_age,
                       req->srv->prom};
    am_ev_sub *sub = NULL;
    am_ev_refusal why = AM_EV_ADMITTED;
    if (am_events_subscribe(ev, req->params[0], after, &adm, &sub, &why) != AM_OK) {
        am_events_refuse(req, resp, why);
        return;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK) {
        am_events_sub_free(sub);
        return;
    }
    /* ?incarnation=N (from the session resource): the stream of that
     * incarnation only. A reconnect (Last-Event-ID, same URL) after the
     * session was deleted and re-created is refused rather than resumed at
     * a seq of the old incarnation. */
    int64_t inc = 0;
    if (am_api_query_int(req, resp, "incarnation", 1, INT64_MAX, &inc) != AM_OK ||
        (inc && inc != row.incarnation)) {
        if (inc && inc != row.incarnation)
            am_resp_problem(resp, req, AM_P_NOT_FOUND,
                            "incarnation %lld of session '%s' was deleted (the current one is "
                            "%lld)",
                            (long long)inc, row.id, (long long)row.incarnation);
        am_store_session_clear(&row);
        am_events_sub_free(sub);
        return;
    }
    int64_t last_seq = row.last_seq;
    am_store_session_clear(&row);
    am_stream *st =
        am_resp_stream(resp, 200, "text/event-stream", am_events_sub_read, am_events_sub_free, sub);
    am_resp_header(resp, "Cache-Control", "no-store");
    am_resp_header(resp, "X-Accel-Buffering", "no"); /* nginx: do not buffer the stream */
    am_events_sub_start(sub, st, last_seq);
}
