/*
 * http.c — libmicrohttpd glue (see http.h and server.h): the daemon, the
 * route table dispatch, body limits, authentication, request ids,
 * problem+json, one log line and one metrics sample per request.
 *
 * Life of a request (all on one libmicrohttpd pool thread):
 *   1. am_http_uri_cb (MHD_OPTION_URI_LOG_CALLBACK) allocates the request
 *      context with the raw request target (before MHD decodes it, so an
 *      encoded '/' in an id cannot split a path segment) and counts the
 *      request as in flight.
 *   2. First call of am_http_access: headers are known. The request id is
 *      chosen, the target parsed and percent-decoded, the route matched
 *      (404/405/OPTIONS), the token checked (401/403), the path parameters
 *      validated (404) and Content-Length checked against the body limit
 *      (413). When one of these fails and a body is coming, the problem is
 *      sent at once with "Connection: close" and the body is never read.
 *   3. Upload calls: the body is buffered up to the limit. A chunked body
 *      that grows past it is dropped as it arrives (not buffered) and
 *      answered 413 with "Connection: close" when its end arrives (MHD
 *      0.9.75 cannot queue a response in the middle of an upload); a client
 *      that keeps sending far beyond the limit is disconnected.
 *   4. Last call: the handler runs and its am_resp becomes the response.
 *      A route marked offload (long work: a replay, a big upload) runs its
 *      handler on a thread of its own while the connection is suspended,
 *      so the pool thread keeps serving its other connections; the thread
 *      resumes the connection and the next call queues the response.
 *   5. am_http_done_cb (MHD_OPTION_NOTIFY_COMPLETED): one INFO log line and
 *      one am_prom_request sample, the context is freed.
 *
 * Safe defaults (README "Guarantees / safe defaults"): on a connection
 * that comes over loopback (always, when the server listens on a loopback
 * address; also the local clients of a server on 0.0.0.0 or ::), a Host
 * header that names anything but localhost, a loopback IP or an
 * allowed-host is refused with 403 forbidden-host before routing (DNS
 * rebinding: a page of evil.example whose name resolves to 127.0.0.1 would
 * otherwise read and write the API); on other connections the same holds
 * without read-token, except that any IP literal passes (am_http_host_ok).
 * Framing a proxy could read differently (a NUL in a header, two Host,
 * Content-Length or Transfer-Encoding headers, a coding other than
 * chunked) is refused first of all (am_http_framing_check). Connections
 * beyond max-connections (reserved-connections of them) serve only the
 * probes (am_http_conn_cb). A request with an unsafe method (not GET/HEAD/OPTIONS) that
 * carries an Origin other than the server's own (scheme://Host) or one of
 * cors-origin is refused with 403 forbidden-origin before authentication
 * (a page of another site cannot post even a "simple" request). JSON
 * bodies must declare Content-Type: application/json (am_req_json; 415).
 * CORS (cors-origin): a request whose Origin is listed gets
 * Access-Control-Allow-Origin and Vary: Origin on every answer, including
 * problems and event streams; a preflight (OPTIONS with
 * Access-Control-Request-Method) also gets the route's methods, the
 * request headers a client needs (Authorization, Content-Type, …) and a
 * Max-Age; other answers expose ETag, Location, Link, Retry-After and
 * X-Request-Id. No credentials (cookies) are involved.
 *
 * Choices: an invalid path parameter (an id outside [A-Za-z0-9._-]{1,128},
 * "." or "..", or a {word} that is not 1..256 bytes of UTF-8) is answered
 * 404 not-found — no resource can have that name — with a detail naming
 * the rule. A malformed percent-encoding (or an encoded NUL) in the target
 * is 400 bad-request. Wrong or read-only tokens are 403, a missing one 401.
 */
#include "http_int.h"

/* Counts the request as being answered (shutdown waits for these). */
static void am_http_set_active(am_http_ctx *x)
{
    if (!x->active) {
        x->active = 1;
        atomic_fetch_add(&x->http->active, 1);
    }
}

/* CORS answer headers for a request from a cors-origin (see the file
 * comment); Vary: Origin on every answer while cors-origin is set. */
static void am_http_cors_headers(am_http_ctx *x, const am_resp *resp, struct MHD_Response *r)
{
    if (!x->http->srv->cfg.cors_origin[0])
        return;
    MHD_add_response_header(r, "Vary", "Origin");
    const char *o = am_http_cors_origin(x);
    if (!o)
        return;
    MHD_add_response_header(r, "Access-Control-Allow-Origin", o);
    const char *acrm =
        MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
    if (!strcmp(x->method, "OPTIONS") && acrm) {
        const char *allow = am_resp_get_header(resp, "Allow");
        MHD_add_response_header(r, "Access-Control-Allow-Methods",
                                allow ? allow : "GET, HEAD, POST, PUT, DELETE");
        MHD_add_response_header(r, "Access-Control-Allow-Headers",
                                "Authorization, Content-Type, If-None-Match, If-Match, "
                                "X-Request-Id, Last-Event-ID");
        MHD_add_response_header(r, "Access-Control-Max-Age", "600");
    } else {
        MHD_add_response_header(r, "Access-Control-Expose-Headers",
                                "ETag, Location, Link, Retry-After, X-Request-Id");
    }
}

/* Keeps the type and detail of a 4xx/5xx problem body in x, so that the
 * access line says why the request failed (the client's X-Request-Id
 * joins it to what the client saw). */
static void am_http_note_problem(am_http_ctx *x, const am_resp *resp)
{
    if (resp->status < 400 || !resp->body || !resp->content_type ||
        strcmp(resp->content_type, "application/problem+json"))
        return;
    json_t *j = json_loadb(resp->body, resp->body_len, 0, NULL);
    const char *type = json_string_value(json_object_get(j, "type"));
    const char *detail = json_string_value(json_object_get(j, "detail"));
    free(x->problem_type);
    free(x->problem_detail);
    x->problem_type = type ? am_xstrdup(type) : NULL;
    x->problem_detail = detail ? am_xstrdup(detail) : NULL;
    json_decref(j);
}

/* Every 5xx is logged at ERROR with its request id and cause: the
 * problem's type and detail (am_http_note_problem has kept them) and, for
 * storage failures, the database's most recent error (SQLite's message;
 * its own log line, from the SQLITE_CONFIG_LOG logger of cli_serve.c,
 * comes just before). */
static void am_http_log_5xx(am_http_ctx *x, const am_resp *resp)
{
    am_server *srv = x->http->srv;
    const char *type = x->problem_type;
    const char *detail = x->problem_detail;
    am_buf cause;
    am_buf_init(&cause);
    if (srv->store && ((type && strstr(type, "storage")) || resp->status == 507))
        am_store_last_error(srv->store, &cause);
    am_log_at(&srv->log, AM_LOG_ERROR, x->req.request_id, "%s %s answered %d %s: %s%s%s%s",
              x->method, x->req.path ? x->req.path : "?", resp->status,
              type ? type : (resp->stream ? "(stream)" : "(no problem body)"),
              detail ? detail : "-", cause.len ? " (database: " : "", am_buf_str(&cause),
              cause.len ? ")" : "");
    am_buf_cleanup(&cause);
}

/* Turns resp into a libmicrohttpd response and queues it; resp is emptied. */
static enum MHD_Result am_http_queue(am_http_ctx *x, am_resp *resp)
{
    am_http_set_active(x);
    am_http_note_problem(x, resp);
    if (resp->status >= 500)
        am_http_log_5xx(x, resp);
    struct MHD_Response *r = NULL;
    size_t bytes = 0;
    if (resp->stream && !strcmp(x->method, "HEAD")) {
        /* MHD 0.9.75 sends the last chunk of a chunked answer to HEAD, which
         * corrupts a kept-alive connection: answer the headers only */
        am_stream_destroy(resp->stream);
        resp->stream = NULL;
    }
    if (resp->stream) {
        x->streamed = 1;
        resp->stream->conn = x->conn;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, am_stream_reader,
                                              resp->stream, am_stream_destroy);
        if (r)
            resp->stream = NULL; /* MHD frees it (am_stream_destroy) */
        am_resp_clear_body(resp);
    } else if (resp->body && resp->body_len) {
        bytes = resp->body_len;
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r) {
            resp->body = NULL;
            resp->body_len = 0;
        }
    } else {
        r = MHD_create_response_from_buffer(0, (void *)(uintptr_t) "", MHD_RESPMEM_PERSISTENT);
    }
    if (!r) {
        am_resp_cleanup(resp);
        return MHD_NO;
    }
    if (resp->content_type && resp->status != 204 && resp->status != 304)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    MHD_add_response_header(r, "X-Request-Id", x->req.request_id);
    /* RFC 8631: every answer points at the API's description */
    MHD_add_response_header(r, "Link", "</openapi.yaml>; rel=\"service-desc\"");
    for (size_t i = 0; i < resp->nheaders; i++)
        MHD_add_response_header(r, resp->headers[i][0], resp->headers[i][1]);
    if (x->path && !strncmp(x->path, "/v1/", 4) && !am_resp_get_header(resp, "Cache-Control"))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (x->close_conn || x->http->srv->stopping)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    am_http_cors_headers(x, resp, r);
    int status = resp->status;
    am_resp_cleanup(resp);
    enum MHD_Result ok = MHD_queue_response(x->conn, (unsigned)status, r);
    MHD_destroy_response(r);
    if (ok == MHD_YES) {
        x->status = status;
        x->bytes = bytes;
        x->phase = AM_PH_DONE;
    }
    return ok;
}

/* Runs the handler of the matched route into resp (a valid status
 * guaranteed). */
static void am_http_run(am_http_ctx *x, am_resp *resp)
{
    x->route->handler(&x->req, resp);
    if (resp->status < 100 || resp->status > 599) {
        am_log_at(&x->http->srv->log, AM_LOG_ERROR, x->req.request_id,
                  "handler of %s %s set no valid status (%d)", x->route->method, x->route->pattern,
                  resp->status);
        am_resp_cleanup(resp);
        am_resp_init(resp);
        am_resp_problem(resp, &x->req, AM_P_INTERNAL, "the request could not be answered");
    }
}

/* The thread of an offloaded handler (ctx: the request context, whose
 * connection is suspended): runs it, then resumes the connection, after
 * which libmicrohttpd calls am_http_access again to queue x->work. x is not
 * touched after the resume (it may be freed at once). */
static void *am_http_work_main(void *arg)
{
    am_http_ctx *x = arg;
    /* long work yields the CPU to the short requests of other sessions
     * (Linux: the nice value of this thread only) — but not a segment
     * batch: it takes the write lock and leads group commits that carry
     * other sessions' POSTs, which a low priority would hold up (priority
     * inversion: seconds on a busy machine) */
    if (x->route->offload == 1)
        (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), AM_HTTP_WORK_NICE);
    am_http_run(x, &x->work);
    struct MHD_Connection *conn = x->conn;
    atomic_store(&x->work_done, 1);
    MHD_resume_connection(conn);
    return NULL;
}

/* Runs the handler of the matched route and queues its response; an
 * offloaded route's handler runs on its own thread (the connection is
 * suspended meanwhile) and its response is queued when it resumes. */
static enum MHD_Result am_http_dispatch(am_http_ctx *x)
{
    am_resp resp;
    am_resp_init(&resp);
    am_http_set_active(x);
    x->req.method = x->route->method; /* HEAD runs the GET handler */
    x->req.body = am_buf_str(&x->body);
    x->req.body_len = x->body.len;
    if (x->route->offload == 1 ||
        (x->route->offload == AM_OFFLOAD_BIG && x->body.len > AM_HTTP_OFFLOAD_BODY)) {
        pthread_attr_t attr;
        pthread_t th;
        x->phase = AM_PH_WORK;
        MHD_suspend_connection(x->conn);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 8u << 20); /* as a main thread's, whatever the limit */
        int started = pthread_create(&th, &attr, am_http_work_main, x) == 0;
        pthread_attr_destroy(&attr);
        if (started)
            return MHD_YES;
        MHD_resume_connection(x->conn); /* no thread: run it here */
        x->phase = AM_PH_BODY;
    }
    am_http_run(x, &resp);
    return am_http_queue(x, &resp);
}

static enum MHD_Result am_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    am_http *h = cls;
    am_http_ctx *x = *con_cls;
    atomic_store(&h->progress_ns, am_mono_ns());
    if (!x) { /* the URI callback always runs first; this is a safety net */
        x = am_xcalloc(1, sizeof *x);
        x->http = h;
        x->start_ns = am_mono_ns();
        x->target = am_xstrdup(url);
        am_resp_init(&x->early);
        am_resp_init(&x->work);
        atomic_fetch_add(&h->inflight, 1);
        *con_cls = x;
    }

    if (x->phase == AM_PH_NEW) {
        x->conn = conn;
        x->phase = AM_PH_BODY;
        am_http_prepare(x, method, version);
        if (x->has_early && am_http_has_body(x)) {
            x->close_conn = 1; /* the body is not read: the connection cannot be reused */
            return am_http_queue(x, &x->early);
        }
        return MHD_YES;
    }

    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (x->phase == AM_PH_DONE || x->has_early) {
            x->dropped += (int64_t)n;
            /* keep draining what is owed, but not forever */
            if (x->dropped <= x->limit + AM_HTTP_DISCARD_SLACK)
                return MHD_YES;
            x->status = x->early.status ? x->early.status : 413; /* logged and counted */
            x->lost_reason = "connection closed: the body kept coming";
            return MHD_NO;
        }
        if ((int64_t)(x->body.len + n) > x->limit) {
            char detail[160];
            snprintf(detail, sizeof detail, "the body is larger than %lld bytes",
                     (long long)x->limit);
            am_http_early(x, AM_P_PAYLOAD_TOO_LARGE, detail);
            am_resp_problem_set(&x->early, "limit", json_integer(x->limit));
            x->close_conn = 1;
            x->dropped = (int64_t)(x->body.len + n);
            am_buf_cleanup(&x->body);
            return MHD_YES;
        }
        am_buf_append(&x->body, upload_data, n);
        return MHD_YES;
    }

    if (x->phase == AM_PH_DONE)
        return MHD_YES;
    if (x->phase == AM_PH_WORK) /* resumed after the offloaded handler */
        return atomic_load(&x->work_done) ? am_http_queue(x, &x->work) : MHD_YES;
    if (x->has_early)
        return am_http_queue(x, &x->early);
    return am_http_dispatch(x);
}

/* The accept policy (MHD_start_daemon's apc): once am_http_stop began, a
 * new connection is closed at once, unanswered. This is how the server
 * stops taking connections: MHD_quiesce_daemon, with epoll and a thread
 * pool, races a worker that removes the listen socket from its epoll set
 * too, and the loser aborts the process (libmicrohttpd's MHD_PANIC "Failed
 * to remove listen FD from epoll set"; seen once in make test). */
static enum MHD_Result am_http_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr;
    (void)addrlen;
    const am_http *h = cls;
    return atomic_load(&h->stopping) ? MHD_NO : MHD_YES;
}

/* MHD_OPTION_NOTIFY_CONNECTION: counts open connections. libmicrohttpd
 * admits max-connections + reserved-connections (its limit is global and
 * knows nothing of paths); a connection opened while max-connections
 * others are open is tagged (its socket context is &h->reserved_mark) and
 * serves only the probes (am_http_reserved_refuse), so /healthz, /readyz
 * and /metrics answer when clients hold every ordinary connection. */
static void am_http_conn_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                            enum MHD_ConnectionNotificationCode code)
{
    am_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        int n = atomic_fetch_add(&h->conns, 1) + 1;
        int reserved = n > h->srv->cfg.max_connections;
        *socket_context = reserved ? &h->reserved_mark : NULL;
        /* a probe asks at once: a reserved connection that idles is
         * somebody holding the probes' room (libmicrohttpd has put the
         * connection in its timeout list before this callback) */
        if (reserved)
            MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                      (unsigned)AM_HTTP_RESERVED_IDLE_S);
        am_prom_connections(h->srv->prom, 1);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&h->conns, 1);
        am_prom_connections(h->srv->prom, -1);
    }
}

static void *am_http_uri_cb(void *cls, const char *uri, struct MHD_Connection *conn)
{
    am_http *h = cls;
    (void)conn;
    am_http_ctx *x = am_xcalloc(1, sizeof *x);
    x->http = h;
    x->start_ns = am_mono_ns();
    x->target = am_xstrdup(uri ? uri : "");
    x->raw_uri = uri;
    x->raw_uri_len = uri ? strlen(uri) : 0;
    am_resp_init(&x->early);
    am_resp_init(&x->work);
    atomic_fetch_add(&h->inflight, 1);
    return x;
}

/* The access line of a request that got a response: the human message
 * (method, raw path without the query, status, bytes, duration and why
 * the connection ended early) and the same as fields for the json and
 * logfmt formats; a 4xx/5xx adds its problem type and detail, in every
 * format. The field names are documented in docs/operations.md. */
static void am_http_log_access(const am_http_ctx *x, int plen, double secs, const char *lost)
{
    char path[600], status[16], bytes[32], ms[32];
    snprintf(path, sizeof path, "%.*s", plen, x->target);
    snprintf(status, sizeof status, "%d", x->status);
    snprintf(bytes, sizeof bytes, "%zu", x->bytes);
    snprintf(ms, sizeof ms, "%.3f", secs * 1e3);
    const am_log_field f[] = {
        {"event", "access", 0},
        {"method", x->method, 0},
        {"path", path, 0},
        {"status", status, AM_LOG_F_NUM},
        {"bytes", bytes, AM_LOG_F_NUM},
        {"duration_ms", ms, AM_LOG_F_NUM},
        {"ended", lost, 0},
        {"problem_type", x->problem_type, AM_LOG_F_PLAIN},
        {"problem_detail", x->problem_detail, AM_LOG_F_PLAIN},
    };
    am_log_event(&x->http->srv->log, AM_LOG_INFO, x->req.request_id, f, sizeof f / sizeof f[0],
                 "%s %s %s %sB %sms%s%s%s", x->method, path, status, bytes, ms, lost ? " (" : "",
                 lost ? lost : "", lost ? ")" : "");
}

static void am_http_done_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                            enum MHD_RequestTerminationCode toe)
{
    am_http *h = cls;
    am_http_ctx *x = *con_cls;
    (void)conn;
    if (!x)
        return;
    *con_cls = NULL;
    double secs = (double)(am_mono_ns() - x->start_ns) / 1e9;
    am_server *srv = h->srv;
    if (x->status) {
        /* the raw path (as sent, without the query) is unambiguous in logs */
        const char *q = strchr(x->target, '?');
        int plen = q ? (int)(q - x->target) : (int)strlen(x->target);
        if (plen > 512)
            plen = 512;
        const char *why = x->lost_reason ? x->lost_reason : "connection lost";
        if (!x->lost_reason && x->streamed)
            why = "client closed the event stream";
        int ok = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
        if (srv->log.level >= AM_LOG_INFO)
            am_http_log_access(x, plen, secs, ok ? NULL : why);
        am_prom_request(srv->prom, x->method, x->route_label, x->status, secs);
    } else if (x->phase != AM_PH_NEW) {
        am_log_at(&srv->log, AM_LOG_DEBUG, x->req.request_id,
                  "%s request ended before a response (code %d)", x->method, (int)toe);
    }
    if (x->active)
        atomic_fetch_sub(&h->active, 1);
    am_http_ctx_free(x);
    atomic_fetch_sub(&h->inflight, 1);
    atomic_store(&h->progress_ns, am_mono_ns());
}

/* libmicrohttpd's own messages go through the logger at WARN, except a
 * failed send: that is a client that went away (a closed dashboard tab
 * ends its event stream so), which the access line already reports as
 * "(client closed the event stream)" or "(connection lost)", so it is
 * only DEBUG. */
static void am_http_mhd_log(void *cls, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
static void am_http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    am_http *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    if (!h->started) {
        size_t k = n < sizeof h->start_err ? n : sizeof h->start_err - 1;
        memcpy(h->start_err, msg, k);
        h->start_err[k] = '\0';
    }
    int gone = !strncmp(msg, "Failed to send", 14);
    am_log_at(&h->srv->log, gone ? AM_LOG_DEBUG : AM_LOG_WARN, NULL, "libmicrohttpd: %s", msg);
}

/* A WARN when the listener is reachable from other machines (not a
 * loopback address) and writes, or reads, need no token. */
static void am_http_warn_exposed(am_server *srv, const struct sockaddr *sa)
{
    const am_srv_config *cfg = &srv->cfg;
    int loopback = 0;
    if (sa->sa_family == AF_INET)
        loopback =
            (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
    else if (sa->sa_family == AF_INET6)
        loopback =
            IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
    if (loopback || cfg->read_token[0])
        return;
    am_log_at(&srv->log, AM_LOG_WARN, NULL,
              "listening on %s without %s: anyone who can reach port %d can %s every session; "
              "set write-token and read-token (Host names other than IP addresses need "
              "allowed-host meanwhile)",
              cfg->listen, cfg->write_token[0] ? "read-token" : "a token", am_http_port(srv),
              cfg->write_token[0] ? "read" : "read and change");
}

int am_http_start(am_server *srv, am_buf *err)
{
    const am_srv_config *cfg = &srv->cfg;
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
    struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME; /* event streams (am_resp_stream) */
    memset(&sin, 0, sizeof sin);
    memset(&sin6, 0, sizeof sin6);
    if (inet_pton(AF_INET, cfg->listen, &sin.sin_addr) == 1) {
        sin.sin_family = AF_INET;
        sin.sin_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&sin;
    } else if (inet_pton(AF_INET6, cfg->listen, &sin6.sin6_addr) == 1) {
        sin6.sin6_family = AF_INET6;
        sin6.sin6_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&sin6;
        flags |= MHD_USE_IPv6;
    } else {
        am_buf_printf(err, "listen address '%s' is not an IPv4 or IPv6 literal", cfg->listen);
        return AM_ERR_INVALID;
    }
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        flags |= MHD_USE_EPOLL;
    else if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        flags |= MHD_USE_POLL;

    am_http *h = am_xcalloc(1, sizeof *h);
    h->srv = srv;
    atomic_init(&h->inflight, 0);
    atomic_init(&h->active, 0);
    atomic_init(&h->progress_ns, 0);
    atomic_init(&h->ids, 0);
    atomic_init(&h->stopping, 0);
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = (uint64_t)am_mono_ns() ^ ((uint64_t)getpid() << 32);
    h->seed = seed;

    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, &am_http_accept, h, &am_http_access, h,
        MHD_OPTION_EXTERNAL_LOGGER, &am_http_mhd_log, h, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(cfg->max_connections + cfg->reserved_connections), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->conn_timeout, MHD_OPTION_URI_LOG_CALLBACK, &am_http_uri_cb, h,
        MHD_OPTION_NOTIFY_COMPLETED, &am_http_done_cb, h, MHD_OPTION_NOTIFY_CONNECTION,
        &am_http_conn_cb, h, MHD_OPTION_END);
    if (!d) {
        am_buf_printf(err, "cannot listen on %s%s%s:%d%s%s", (flags & MHD_USE_IPv6) ? "[" : "",
                      cfg->listen, (flags & MHD_USE_IPv6) ? "]" : "", cfg->port,
                      h->start_err[0] ? ": " : " (address in use or not permitted?)", h->start_err);
        free(h);
        return AM_ERR_IO;
    }
    h->daemon = d;
    h->started = 1;
    srv->http = h;
    am_http_warn_exposed(srv, sa);
    return AM_OK;
}

int am_http_port(const am_server *srv)
{
    const am_http *h = srv->http;
    if (!h || !h->daemon)
        return 0;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? (int)info->port : 0;
}

int am_http_stop(am_server *srv)
{
    am_http *h = srv->http;
    if (!h)
        return 0;
    /* No new connections (am_http_accept closes them; the listen socket
     * stays open until MHD_stop_daemon). Requests being answered finish;
     * requests still arriving may finish while they make progress, but a
     * client that stalls mid-request does not hold the shutdown (2 s
     * without progress from any request). Everything is bounded by
     * shutdown_timeout_ms: a grace period before it (a quarter, at most
     * 1 s) computing requests are told to give up (srv->abandon: their
     * cancel checks fail, they answer 503 and store nothing); whatever
     * still runs at the timeout is left to the process exit
     * (MHD_stop_daemon would join its thread). */
    atomic_store(&h->stopping, 1);
    if (srv->events) /* open event streams end now (none stays suspended) */
        am_events_shutdown(srv->events);
    int64_t t0 = am_mono_ns();
    int64_t total = (int64_t)srv->cfg.shutdown_timeout_ms * 1000000;
    int64_t grace = total / 4 < 1000000000LL ? total / 4 : 1000000000LL;
    int64_t deadline = t0 + total, abandon_at = deadline - grace;
    const int64_t stall = 2000000000LL;
    int stuck = 0;
    for (;;) {
        int64_t now = am_mono_ns();
        int active = atomic_load(&h->active), inflight = atomic_load(&h->inflight);
        if (now >= abandon_at && !atomic_load(&srv->abandon)) {
            atomic_store(&srv->abandon, 1);
            if (inflight > 0)
                am_log_at(&srv->log, AM_LOG_WARN, NULL,
                          "%d request(s) still running %.0f ms after the signal; abandoning "
                          "them",
                          inflight, (double)(now - t0) / 1e6);
        }
        if (now >= deadline) {
            if (inflight > 0)
                am_log_at(&srv->log, AM_LOG_WARN, NULL,
                          "%d request(s) still running after %d ms; stopping anyway", inflight,
                          srv->cfg.shutdown_timeout_ms);
            stuck = active > 0;
            break;
        }
        if (!active && (!inflight || now - atomic_load(&h->progress_ns) > stall))
            break;
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    am_log_at(&srv->log, AM_LOG_DEBUG, NULL, "waited %.0f ms for in-flight requests (%d left)",
              (double)(am_mono_ns() - t0) / 1e6, atomic_load(&h->inflight));
    if (stuck) {
        /* a handler is still inside its computation: joining it could take
         * forever; the daemon stays as it is and the process exits */
        am_log_at(&srv->log, AM_LOG_WARN, NULL,
                  "%d request(s) still being answered; exiting without waiting for them",
                  atomic_load(&h->active));
        return 1;
    }
    MHD_stop_daemon(h->daemon);
    am_log_at(&srv->log, AM_LOG_DEBUG, NULL, "HTTP daemon stopped");
    free(h);
    srv->http = NULL;
    return 0;
}
