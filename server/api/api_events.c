/* api_events.c — GET /v1/sessions/{id}/events: Server-Sent Events of a
 * session's scored segments (the hub is events.c, the streaming http.c). */
#include "api.h"

#include "events.h"

#include <errno.h>
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

void am_api_events(am_req *req, am_resp *resp)
{
    am_events *ev = req->srv->events;
    int64_t after = -1;
    if (am_events_after(req, resp, &after) != AM_OK)
        return;
    if (!ev) {
        am_resp_problem(resp, req, AM_P_UNAVAILABLE, "event streams are off");
        return;
    }
    /* subscribe before looking the session up: a delete in between is then
     * seen as "event: deleted", not missed */
    am_ev_sub *sub = NULL;
    am_events_subscribe(ev, req->params[0], after, &sub);
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
    am_store_session_clear(&row);
    am_stream *st =
        am_resp_stream(resp, 200, "text/event-stream", am_events_sub_read, am_events_sub_free, sub);
    am_resp_header(resp, "Cache-Control", "no-store");
    am_resp_header(resp, "X-Accel-Buffering", "no"); /* nginx: do not buffer the stream */
    am_events_sub_start(sub, st);
}
