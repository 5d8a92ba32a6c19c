/*
 * http_resp.c — responses: bodies, headers, problem+json and streamed
 * (SSE) responses. See http.c for how a response is queued.
 */
#include "http_int.h"

/* ---- streamed responses (SSE) ---------------------------------------------
 * Choice: libmicrohttpd suspend/resume, not a blocking content reader. The
 * daemon runs a small thread pool (cfg.threads) with epoll: a reader that
 * waited on a condition variable would hold a pool thread per open stream,
 * so a handful of dashboards would stall the service. Instead, when the
 * producer has nothing, the content reader suspends the connection (no
 * thread, no polling) and returns 0; am_stream_wake resumes it from any
 * thread. The race between "nothing to send" and a concurrent wake is
 * closed by st->mu: the wake flag is cleared before read, checked again
 * before suspending, and the resume is only issued for a connection that
 * is suspended. A suspended connection does not time out and does not
 * notice a closed socket: the hub's heartbeat wakes every stream, and the
 * shutdown (am_events_shutdown, from am_http_stop) ends them all. */

am_stream *am_resp_stream(am_resp *resp, int status, const char *content_type,
                          am_stream_read_fn read_fn, am_stream_free_fn free_fn, void *cls)
{
    am_stream *st = am_xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    st->read = read_fn;
    st->free = free_fn;
    st->cls = cls;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = status;
    resp->content_type = content_type;
    resp->stream = st;
    return st;
}

void am_stream_wake(am_stream *st)
{
    pthread_mutex_lock(&st->mu);
    st->woken = 1;
    if (st->suspended) {
        st->suspended = 0;
        MHD_resume_connection(st->conn);
    }
    pthread_mutex_unlock(&st->mu);
}

/* Frees the stream and its producer (MHD's free callback of the response,
 * or a response that was never queued). */
void am_stream_destroy(void *cls)
{
    am_stream *st = cls;
    if (!st)
        return;
    if (st->free)
        st->free(st->cls);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

/* MHD's content reader: the producer's bytes, or a suspension. */
ssize_t am_stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    am_stream *st = cls;
    (void)pos;
    for (;;) {
        pthread_mutex_lock(&st->mu);
        st->woken = 0;
        pthread_mutex_unlock(&st->mu);
        long n = st->read(st->cls, buf, max);
        if (n > 0)
            return (ssize_t)n;
        if (n == AM_STREAM_END)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (n != AM_STREAM_WAIT)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        pthread_mutex_lock(&st->mu);
        if (!st->woken) {
            st->suspended = 1;
            MHD_suspend_connection(st->conn);
            pthread_mutex_unlock(&st->mu);
            return 0;
        }
        pthread_mutex_unlock(&st->mu); /* woken meanwhile: read again */
    }
}

/* ---- responses ----------------------------------------------------------- */

void am_resp_clear_body(am_resp *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}

/* Frees everything resp owns (body, headers, stream). */
void am_resp_cleanup(am_resp *resp)
{
    am_resp_clear_body(resp);
    for (size_t i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i][0]);
        free(resp->headers[i][1]);
    }
    resp->nheaders = 0;
    am_stream_destroy(resp->stream);
    resp->stream = NULL;
}

void am_resp_init(am_resp *resp)
{
    memset(resp, 0, sizeof *resp);
}

void am_resp_take(am_resp *resp, int status, const char *content_type, char *data, size_t len)
{
    am_resp_clear_body(resp);
    resp->status = status;
    resp->content_type = content_type;
    resp->body = data;
    resp->body_len = data ? len : 0;
}

void am_resp_data(am_resp *resp, int status, const char *content_type, const char *data, size_t len)
{
    char *copy = NULL;
    if (data && len) {
        copy = am_xmalloc(len + 1);
        memcpy(copy, data, len);
        copy[len] = '\0';
    }
    am_resp_take(resp, status, content_type, copy, copy ? len : 0);
}

/* Serializes j (borrowed) compactly with the shortest exact reals
 * (am_json_dumps, keys in insertion order), newline-terminated. */
static char *am_http_dump(const json_t *j, size_t *len)
{
    char *s = am_json_dumps(j, 0);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *out = am_xmalloc(n + 2);
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(s);
    *len = n + 1;
    return out;
}

void am_resp_json(am_resp *resp, int status, json_t *body)
{
    size_t len = 0;
    char *s = body ? am_http_dump(body, &len) : NULL;
    json_decref(body);
    if (!s) {
        static const char fallback[] =
            "{\"type\":\"https://adaptmon.dev/problems/internal\",\"title\":\"Internal error\","
            "\"status\":500,\"detail\":\"the response could not be encoded\"}\n";
        am_resp_data(resp, 500, "application/problem+json", fallback, sizeof fallback - 1);
        return;
    }
    am_resp_take(resp, status, "application/json", s, len);
}

void am_resp_json_text(am_resp *resp, int status, char *text)
{
    if (!text) {
        am_resp_json(resp, status, NULL);
        return;
    }
    size_t n = strlen(text);
    text = am_xrealloc(text, n + 2);
    text[n] = '\n';
    text[n + 1] = '\0';
    am_resp_take(resp, status, "application/json", text, n + 1);
}

void am_resp_headers_clear(am_resp *resp)
{
    for (size_t i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i][0]);
        free(resp->headers[i][1]);
    }
    resp->nheaders = 0;
}

void am_resp_header(am_resp *resp, const char *name, const char *value)
{
    for (size_t i = 0; i < resp->nheaders; i++) {
        if (!strcasecmp(resp->headers[i][0], name)) {
            free(resp->headers[i][1]);
            resp->headers[i][1] = am_xstrdup(value);
            return;
        }
    }
    if (resp->nheaders >= AM_HTTP_MAX_HEADERS)
        return; /* a handler bug; the header is dropped rather than the response */
    resp->headers[resp->nheaders][0] = am_xstrdup(name);
    resp->headers[resp->nheaders][1] = am_xstrdup(value);
    resp->nheaders++;
}

const char *am_resp_get_header(const am_resp *resp, const char *name)
{
    for (size_t i = 0; i < resp->nheaders; i++)
        if (!strcasecmp(resp->headers[i][0], name))
            return resp->headers[i][1];
    return NULL;
}

void am_resp_problem(am_resp *resp, const am_req *req, am_ptype type, const char *detail_fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, detail_fmt);
    vsnprintf(detail, sizeof detail, detail_fmt, ap);
    va_end(ap);
    int status = am_problem_get(type)->status;
    json_t *j = am_problem_json(type, detail, req ? req->path : NULL);
    if (req && req->request_id[0])
        json_object_set_new(j, "request_id", json_string(req->request_id));
    am_resp_json(resp, status, j);
    if (resp->status == status)
        resp->content_type = "application/problem+json";
}

void am_resp_problem_set(am_resp *resp, const char *key, json_t *value)
{
    json_t *j = NULL;
    if (resp->body && value)
        j = json_loadb(resp->body, resp->body_len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        json_decref(value);
        return;
    }
    json_object_set_new(j, key, value);
    size_t len = 0;
    char *s = am_http_dump(j, &len);
    json_decref(j);
    if (s) {
        free(resp->body);
        resp->body = s;
        resp->body_len = len;
    }
}
