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
#include "http.h"
#include "json.h"
#include "events.h"
#include "peer.h" /* am_req_socket */
#include "server.h"
#include "shard.h"

#include "text.h"

#define AM_HTTP_WORK_NICE 10

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define AM_HTTP_MAX_SEGS 16 /* path segments considered for routing */
#define AM_HTTP_MAX_QUERY 32 /* query parameters kept */
#define AM_HTTP_MAX_WORD 256 /* bytes of a {word} path parameter */
#define AM_HTTP_MAX_ID 128 /* bytes of any other path parameter */
#define AM_HTTP_DISCARD_SLACK (8LL * 1024 * 1024) /* dropped bytes tolerated past the limit */
#define AM_HTTP_RESERVED_IDLE_S 3 /* idle seconds allowed on a reserved (probe) connection */

/* The HTTP front end's private state (the MHD daemon and request
 * bookkeeping), kept in srv->http. */
typedef struct am_http {
    struct MHD_Daemon *daemon;
    am_server *srv;
    atomic_int inflight; /* requests between the URI callback and completion */
    atomic_int active; /* of those, the ones being answered (handler or sending) */
    _Atomic int64_t progress_ns; /* last time any request made progress */
    atomic_uint_fast64_t ids;
    uint64_t seed; /* request-id generator */
    atomic_int started; /* set once MHD_start_daemon returned */
    atomic_int stopping; /* set by am_http_stop: new connections are closed */
    atomic_int conns; /* open connections (am_http_conn_cb) */
    char reserved_mark; /* its address tags a connection opened beyond max-connections */
    char start_err[256]; /* last libmicrohttpd message before the start succeeded */
} am_http;

enum am_http_phase { AM_PH_NEW = 0, AM_PH_BODY, AM_PH_WORK, AM_PH_DONE };

/* One request's context (the con_cls of libmicrohttpd). */
typedef struct am_http_ctx {
    am_http *http;
    struct MHD_Connection *conn;
    int64_t start_ns; /* CLOCK_MONOTONIC */
    char *target; /* raw request target, owned */
    const char *raw_uri; /* the target in libmicrohttpd's read buffer (an address range only) */
    size_t raw_uri_len;
    char method[16]; /* copy for the completion log */
    enum am_http_phase phase;
    am_req req;
    const am_route *route; /* matched route, or NULL */
    const char *route_label; /* route pattern for metrics ("other" when none) */
    char *path; /* decoded path, owned */
    char *raw_path; /* path as sent, when the decoded one is not UTF-8 */
    char *segs[AM_HTTP_MAX_SEGS];
    size_t nsegs;
    int too_many_segs;
    char *qk[AM_HTTP_MAX_QUERY], *qv[AM_HTTP_MAX_QUERY];
    size_t nq;
    char *qtoken; /* ?access_token= of a GET, taken out of the query (owned) */
    char ctype[128];
    am_buf body;
    int64_t limit;
    int64_t dropped; /* body bytes dropped after the limit was passed */
    am_resp early; /* response decided before the body */
    int has_early;
    int close_conn; /* send "Connection: close" */
    int status; /* sent status (0: none queued) */
    size_t bytes; /* sent body length */
    const char *lost_reason; /* why the connection was closed without the response */
    int streamed; /* the response is an event stream (its end is the client's) */
    char *problem_type; /* a 4xx/5xx problem's type and detail, for the access line (owned) */
    char *problem_detail;
    int active; /* counted in am_http.active */
    am_resp work; /* AM_PH_WORK: the offloaded handler's response */
    atomic_int work_done; /* set by the handler's thread before it resumes */
} am_http_ctx;

/* ---- validation and decoding --------------------------------------------- */

int am_http_valid_id(const char *s)
{
    if (!s)
        return 0;
    size_t n = 0;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-') || c > 0x7f)
            return 0;
        if (n >= AM_HTTP_MAX_ID)
            return 0;
    }
    if (!n || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    return 1;
}

/* Valid {word} parameter: 1..256 bytes of UTF-8 without NUL. */
static int am_http_valid_word(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= AM_HTTP_MAX_WORD && am_text_validate(s, n, NULL) == AM_OK;
}

static int am_http_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a malloc'd string (*out, caller frees);
 * plus_space: '+' means ' ' (query strings). Returns -1 (and *out NULL)
 * for a malformed escape or an encoded NUL. */
static int am_http_decode(const char *s, size_t n, int plus_space, char **out)
{
    char *d = am_xmalloc(n + 1), *w = d;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 1 < n ? am_http_hex(s[i + 1]) : -1;
            int lo = i + 2 < n ? am_http_hex(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(d);
                *out = NULL;
                return -1;
            }
            *w++ = (char)(hi * 16 + lo);
            i += 2;
        } else if (plus_space && s[i] == '+') {
            *w++ = ' ';
        } else {
            *w++ = s[i];
        }
    }
    *w = '\0';
    *out = d;
    return 0;
}

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
struct am_stream {
    pthread_mutex_t mu;
    struct MHD_Connection *conn; /* set when the response is queued */
    int suspended; /* the connection is suspended by the reader */
    int woken; /* a wake arrived since the last read began */
    am_stream_read_fn read;
    am_stream_free_fn free;
    void *cls;
};

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
static void am_stream_destroy(void *cls)
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
static ssize_t am_stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
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

static void am_resp_clear_body(am_resp *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}

/* Frees everything resp owns (body, headers, stream). */
static void am_resp_cleanup(am_resp *resp)
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

static void am_resp_init(am_resp *resp)
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

static const char *am_resp_get_header(const am_resp *resp, const char *name)
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

/* ---- requests ------------------------------------------------------------ */

const char *am_req_query(const am_req *req, const char *key)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    if (!x)
        return NULL;
    for (size_t i = 0; i < x->nq; i++)
        if (!strcmp(x->qk[i], key))
            return x->qv[i];
    return NULL;
}

const char *am_req_header(const am_req *req, const char *name)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    if (!x || !x->conn)
        return NULL;
    return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

void am_req_peer(const am_req *req, char *buf, size_t n)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    buf[0] = '\0';
    const union MHD_ConnectionInfo *ci =
        x && x->conn ? MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa)
        return;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;
        if (!inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)n))
            buf[0] = '\0';
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        int mapped = IN6_IS_ADDR_V4MAPPED(a); /* one client, whichever socket it came on */
        if (!inet_ntop(mapped ? AF_INET : AF_INET6, mapped ? (const void *)&a->s6_addr[12] : a, buf,
                       (socklen_t)n))
            buf[0] = '\0';
    }
}

/* The charset parameter of a Content-Type header value, copied into out
 * (lower case, quotes removed); "" when absent. */
static void am_http_charset(const char *ct, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *p = ct ? strchr(ct, ';') : NULL; p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncasecmp(q, "charset=", 8))
            continue;
        q += 8;
        if (*q == '"')
            q++;
        size_t k = 0;
        while (*q && *q != ';' && *q != '"' && *q != ' ' && k + 1 < n)
            out[k++] = (char)tolower((unsigned char)*q++);
        out[k] = '\0';
        return;
    }
}

static int am_http_is_json_type(const char *ct)
{
    if (!strcmp(ct, "application/json"))
        return 1;
    size_t n = strlen(ct);
    return n > 5 && !strcmp(ct + n - 5, "+json") && strchr(ct, '/');
}

/* A body must declare a JSON type: no Content-Type at all is 415 too (a
 * web page can send a body without one to any site, and it used to be read
 * as JSON); a declared non-JSON type is 415 (curl -d sends
 * application/x-www-form-urlencoded: the detail names the type), as is a
 * charset other than UTF-8 (or its subset US-ASCII). */
/* am_req_json, or with any an array top level too (am_req_json_any). */
static int am_req_json_ex(const am_req *req, am_resp *resp, json_t **out, int any)
{
    *out = NULL;
    if (!req->content_type) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "the body must be JSON and say so: Content-Type: application/json");
        return AM_ERR_INVALID;
    }
    if (!am_http_is_json_type(req->content_type)) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "the body must be JSON (Content-Type: application/json), not %s",
                        req->content_type);
        return AM_ERR_INVALID;
    }
    char cs[32];
    am_http_charset(am_req_header(req, "Content-Type"), cs, sizeof cs);
    if (cs[0] && strcmp(cs, "utf-8") && strcmp(cs, "utf8") && strcmp(cs, "us-ascii")) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "JSON bodies must be UTF-8, not charset=%s", cs);
        return AM_ERR_INVALID;
    }
    if (!req->body || !req->body_len) {
        am_resp_problem(resp, req, AM_P_BAD_JSON,
                        "the request body is empty; a JSON object is expected");
        return AM_ERR_PARSE;
    }
    size_t off = 0;
    int rc = am_text_validate(req->body, req->body_len, &off);
    if (rc == AM_ERR_UTF8) {
        am_resp_problem(resp, req, AM_P_INVALID_UTF8,
                        "the body is not valid UTF-8 (first bad byte at offset %zu)", off);
        am_resp_problem_set(resp, "offset", json_integer((json_int_t)off));
        return AM_ERR_UTF8;
    }
    if (rc == AM_ERR_NUL) {
        am_resp_problem(resp, req, AM_P_BAD_JSON, "the body holds a NUL byte at offset %zu", off);
        am_resp_problem_set(resp, "offset", json_integer((json_int_t)off));
        return AM_ERR_PARSE;
    }
    json_error_t jerr;
    json_t *j =
        json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!j) {
        am_resp_problem(resp, req, AM_P_BAD_JSON, "line %d, column %d: %s", jerr.line, jerr.column,
                        jerr.text);
        am_resp_problem_set(resp, "line", json_integer(jerr.line));
        am_resp_problem_set(resp, "column", json_integer(jerr.column));
        return AM_ERR_PARSE;
    }
    if (!json_is_object(j) && !(any && json_is_array(j))) {
        json_decref(j);
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        any ? "the body must be a JSON object or array"
                            : "the body must be a JSON object");
        return AM_ERR_INVALID;
    }
    *out = j;
    return AM_OK;
}

int am_req_json(const am_req *req, am_resp *resp, json_t **out)
{
    return am_req_json_ex(req, resp, out, 0);
}

int am_req_json_any(const am_req *req, am_resp *resp, json_t **out)
{
    return am_req_json_ex(req, resp, out, 1);
}

/* ---- request context ----------------------------------------------------- */

static void am_http_ctx_free(am_http_ctx *x)
{
    if (!x)
        return;
    free(x->target);
    free(x->path);
    free(x->raw_path);
    for (size_t i = 0; i < x->nsegs; i++)
        free(x->segs[i]);
    for (size_t i = 0; i < x->nq; i++) {
        free(x->qk[i]);
        free(x->qv[i]);
    }
    free(x->qtoken);
    free(x->problem_type);
    free(x->problem_detail);
    for (size_t i = 0; i < AM_HTTP_MAX_PARAMS; i++)
        free((char *)(uintptr_t)x->req.params[i]);
    am_buf_cleanup(&x->body);
    am_resp_cleanup(&x->early);
    am_resp_cleanup(&x->work);
    free(x);
}

static uint64_t am_http_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* X-Request-Id when it is 1..64 of [A-Za-z0-9._-], else a new one. */
static void am_http_request_id(am_http_ctx *x)
{
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "X-Request-Id");
    size_t n = 0;
    int ok = h != NULL;
    for (; ok && h[n]; n++) {
        unsigned char c = (unsigned char)h[n];
        if (n >= 64 || !(isalnum(c) || c == '.' || c == '_' || c == '-') || c > 0x7f)
            ok = 0;
    }
    if (ok && n >= 1) {
        memcpy(x->req.request_id, h, n + 1);
        return;
    }
    uint64_t k = atomic_fetch_add(&x->http->ids, 1);
    uint64_t v = am_http_mix(x->http->seed ^ am_http_mix(k));
    snprintf(x->req.request_id, sizeof x->req.request_id, "%016llx", (unsigned long long)v);
}

/* Parses the raw target into path, segments and query. Returns 0, or -1
 * for malformed encoding or a target that is not a path. */
static int am_http_parse_target(am_http_ctx *x)
{
    const char *t = x->target;
    if (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8)) {
        t = strchr(strstr(t, "//") + 2, '/'); /* absolute form */
        if (!t)
            t = "/";
    }
    if (t[0] != '/')
        return -1;
    const char *q = strchr(t, '?');
    size_t plen = q ? (size_t)(q - t) : strlen(t);
    const char *hash = memchr(t, '#', plen);
    if (hash)
        plen = (size_t)(hash - t);
    if (am_http_decode(t, plen, 0, &x->path) < 0)
        return -1;
    /* segments of the raw path, each decoded on its own */
    const char *p = t + 1, *end = t + plen;
    for (;;) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        if (x->nsegs == AM_HTTP_MAX_SEGS) {
            x->too_many_segs = 1;
            break;
        }
        if (am_http_decode(p, (size_t)(stop - p), 0, &x->segs[x->nsegs]) < 0)
            return -1;
        x->nsegs++;
        if (!slash)
            break;
        p = slash + 1;
    }
    /* query: k=v pairs separated by '&' */
    if (q) {
        const char *s = q + 1;
        const char *qend = strchr(s, '#');
        if (!qend)
            qend = s + strlen(s);
        while (s < qend && x->nq < AM_HTTP_MAX_QUERY) {
            const char *amp = memchr(s, '&', (size_t)(qend - s));
            const char *stop = amp ? amp : qend;
            if (stop > s) {
                const char *eq = memchr(s, '=', (size_t)(stop - s));
                const char *kend = eq ? eq : stop;
                char *k = NULL, *v = NULL;
                if (am_http_decode(s, (size_t)(kend - s), 1, &k) < 0)
                    return -1;
                if (am_http_decode(eq ? eq + 1 : stop, eq ? (size_t)(stop - eq - 1) : 0, 1, &v) <
                    0) {
                    free(k);
                    return -1;
                }
                x->qk[x->nq] = k;
                x->qv[x->nq] = v;
                x->nq++;
                if (am_text_validate(k, strlen(k), NULL) != AM_OK ||
                    am_text_validate(v, strlen(v), NULL) != AM_OK)
                    return -1; /* handlers only ever see UTF-8 text */
            }
            s = amp ? amp + 1 : qend;
        }
    }
    return 0;
}

/* Matches route r against the path segments. On a match and when params
 * is non-NULL, fills params with decoded copies (caller owns). */
static int am_http_match(const am_http_ctx *x, const am_route *r, char **params, size_t *nparams)
{
    if (x->too_many_segs || r->pattern[0] != '/')
        return 0;
    const char *p = r->pattern + 1;
    size_t i = 0, np = 0;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (i >= x->nsegs)
            return 0;
        const char *seg = x->segs[i];
        if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
            if (!seg[0])
                return 0; /* an empty segment matches no parameter */
            if (params) {
                assert(np < AM_HTTP_MAX_PARAMS);
                params[np] = am_xstrdup(seg);
            }
            np++;
        } else if (strlen(seg) != len || strncmp(seg, p, len)) {
            goto nomatch;
        }
        i++;
        if (!slash)
            break;
        p = slash + 1;
    }
    if (i != x->nsegs)
        goto nomatch;
    if (nparams)
        *nparams = np;
    return 1;
nomatch:
    if (params)
        for (size_t k = 0; k < np; k++) {
            free(params[k]);
            params[k] = NULL;
        }
    return 0;
}

/* The name of parameter k of pattern ("id", "word", …) copied into out. */
static void am_http_param_name(const char *pattern, size_t k, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = pattern;
    for (size_t i = 0; (p = strchr(p, '{')); i++, p++) {
        const char *close = strchr(p, '}');
        if (!close)
            return;
        if (i == k) {
            size_t len = (size_t)(close - p - 1);
            if (len >= n)
                len = n - 1;
            memcpy(out, p + 1, len);
            out[len] = '\0';
            return;
        }
    }
}

/* Constant-time comparison of a presented token with a configured one;
 * the time depends on neither token's content or length (tokens are at
 * most 255 bytes). */
static int am_http_token_eq(const char *given, size_t glen, const char *token)
{
    size_t tlen = strlen(token);
    unsigned diff = glen != tlen;
    for (size_t i = 0; i < 256; i++) {
        unsigned char a = i < glen ? (unsigned char)given[i] : 0;
        unsigned char b = i < tlen ? (unsigned char)token[i] : 0;
        diff |= (unsigned)(a ^ b);
    }
    return diff == 0;
}

/* Sets the early response to a problem. */
static void am_http_early(am_http_ctx *x, am_ptype type, const char *detail)
{
    am_resp_problem(&x->early, &x->req, type, "%s", detail);
    x->has_early = 1;
}

/* RFC 6750 §2.3: on GET (and HEAD) the token may come as the query
 * parameter access_token (browsers' EventSource cannot send headers). It
 * is moved out of the query list (handlers never see it) into x->qtoken;
 * the completion log line never shows the query string. */
static void am_http_take_token(am_http_ctx *x)
{
    if (strcmp(x->method, "GET") && strcmp(x->method, "HEAD"))
        return;
    for (size_t i = 0; i < x->nq; i++) {
        if (strcmp(x->qk[i], "access_token"))
            continue;
        free(x->qtoken);
        x->qtoken = x->qv[i];
        free(x->qk[i]);
        memmove(&x->qk[i], &x->qk[i + 1], (x->nq - i - 1) * sizeof x->qk[0]);
        memmove(&x->qv[i], &x->qv[i + 1], (x->nq - i - 1) * sizeof x->qv[0]);
        x->nq--;
        i--;
    }
}

/* Checks the bearer token for the matched route; sets the early response
 * on failure. */
static void am_http_auth(am_http_ctx *x)
{
    const am_srv_config *cfg = &x->http->srv->cfg;
    enum am_auth need = x->route->auth;
    if (need == AM_AUTH_NONE)
        return;
    if (need == AM_AUTH_WRITE && !cfg->write_token[0])
        return;
    if (need == AM_AUTH_READ && !cfg->write_token[0] && !cfg->read_token[0])
        return;
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Authorization");
    const char *tok = NULL;
    if (h && !strncasecmp(h, "Bearer", 6) && (h[6] == ' ' || h[6] == '\t')) {
        tok = h + 7;
        while (*tok == ' ' || *tok == '\t')
            tok++;
    }
    if ((!tok || !*tok) && x->qtoken) /* ?access_token= (GET only), see am_http_take_token */
        tok = x->qtoken;
    if (!tok || !*tok) {
        am_http_early(x, AM_P_UNAUTHORIZED,
                      "this server needs a bearer token: Authorization: Bearer <token>");
        am_resp_header(&x->early, "WWW-Authenticate", "Bearer realm=\"adaptmon\"");
        return;
    }
    size_t n = strlen(tok);
    while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        n--;
    int is_write = cfg->write_token[0] && am_http_token_eq(tok, n, cfg->write_token);
    int is_read = cfg->read_token[0] && am_http_token_eq(tok, n, cfg->read_token);
    if (is_write || (need == AM_AUTH_READ && is_read))
        return;
    am_http_early(x, AM_P_FORBIDDEN,
                  is_read ? "the read-only token cannot change state; use the write token"
                          : "the bearer token is not valid for this server");
}

/* True when the request announces a body. */
static int am_http_has_body(am_http_ctx *x)
{
    const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strcmp(cl, "0"))
        return 1;
    return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Transfer-Encoding") != NULL;
}

/* Body limit of the matched route. */
static int64_t am_http_limit(const am_http_ctx *x)
{
    const am_srv_config *cfg = &x->http->srv->cfg;
    if (x->route && !strcmp(x->route->method, "PUT")) {
        const char *pat = x->route->pattern;
        size_t n = strlen(pat);
        if ((n >= 9 && !strcmp(pat + n - 9, "/glossary")) || !strncmp(pat, "/v1/vocabularies/", 17))
            return cfg->max_glossary_body;
    }
    /* XLIFF imports are files like glossaries */
    if (x->route && !strcmp(x->route->method, "POST") &&
        !strcmp(x->route->pattern, "/v1/sessions/{id}/import"))
        return cfg->max_glossary_body;
    return cfg->max_body;
}

/* Appends the methods allowed on the path to allow ("GET, HEAD, …"). */
static void am_http_allow(const am_http_ctx *x, char *allow, size_t n)
{
    allow[0] = '\0';
    int get = 0, head = 0;
    for (const am_route *r = am_routes(); r->method; r++) {
        if (!am_http_match(x, r, NULL, NULL))
            continue;
        if (!strcmp(r->method, "GET"))
            get = 1;
        if (!strcmp(r->method, "HEAD"))
            head = 1;
        if (strstr(allow, r->method)) /* methods are distinct words: no false hits */
            continue;
        size_t len = strlen(allow);
        snprintf(allow + len, n - len, "%s%s", len ? ", " : "", r->method);
    }
    size_t len = strlen(allow);
    if (get && !head)
        snprintf(allow + len, n - len, ", HEAD");
    len = strlen(allow);
    snprintf(allow + len, n - len, "%sOPTIONS", len ? ", " : "");
}

/* Everything that can be decided from the request line and headers. */
/* Is s[0..n) one of the comma-separated entries of list (blanks around
 * entries ignored, ASCII case-insensitive)? */
static int am_http_in_list(const char *list, const char *s, size_t n)
{
    const char *p = list;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && n && !strncasecmp(p, s, n))
            return 1;
        p = e;
    }
    return 0;
}

/* Did the connection come from a loopback address (127.0.0.0/8, ::1, or
 * 127.x mapped into IPv6)? */
static int am_http_peer_loopback(const am_http_ctx *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) ==
               127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return 0;
}

/* Is the Host header acceptable (DNS-rebinding protection)? A page of
 * evil.example whose name is made to resolve to this server's address
 * reaches it with Host: evil.example, so a Host that is a DNS name must
 * be one the operator named:
 *   - localhost, *.localhost, 127.0.0.0/8 and [::1] always pass;
 *   - on a loopback connection nothing else but an allowed-host does;
 *   - on a connection from another machine an IP literal passes too (a
 *     rebinding page always has a name), and when read-token is set every
 *     Host passes: then every route but the probes needs a token, which a
 *     rebinding page cannot send (no cookies are involved);
 * A request without Host (HTTP/1.0; no browser sends one) passes. */
static int am_http_host_ok(const am_http_ctx *x)
{
    int loopback = am_http_peer_loopback(x);
    if (!loopback && x->http->srv->cfg.read_token[0])
        return 1;
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Host");
    if (!h || !*h)
        return 1;
    size_t n = strlen(h), nl = n;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return 0;
        nl = (size_t)(close + 1 - h);
    } else {
        const char *colon = strchr(h, ':');
        if (colon)
            nl = (size_t)(colon - h);
    }
    char name[256];
    if (!nl || nl >= sizeof name)
        return 0;
    for (size_t i = 0; i < nl; i++)
        name[i] = (char)tolower((unsigned char)h[i]);
    name[nl] = '\0';
    if (nl > 0 && name[nl - 1] == '.') /* "localhost." is localhost */
        name[--nl] = '\0';
    struct in_addr a4;
    struct in6_addr a6;
    int v4 = inet_pton(AF_INET, name, &a4) == 1;
    if (!strcmp(name, "localhost") || (nl > 10 && !strcmp(name + nl - 10, ".localhost")) ||
        !strcmp(name, "[::1]") || (v4 && (ntohl(a4.s_addr) >> 24) == 127))
        return 1;
    if (!loopback && name[0] == '[' && nl > 2) { /* "[v6]" */
        name[nl - 1] = '\0';
        if (inet_pton(AF_INET6, name + 1, &a6) == 1)
            return 1;
        name[nl - 1] = ']';
    }
    if (!loopback && v4)
        return 1;
    const char *allowed = x->http->srv->cfg.allowed_host;
    return am_http_in_list(allowed, name, nl) || am_http_in_list(allowed, h, n);
}

/* Is origin (the Origin header) the server's own, i.e. http:// or https://
 * followed by the Host header? */
static int am_http_same_origin(const am_http_ctx *x, const char *origin)
{
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Host");
    if (!h || !*h)
        return 0;
    const char *rest = !strncasecmp(origin, "http://", 7)    ? origin + 7
                       : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                             : NULL;
    return rest && !strcasecmp(rest, h);
}

/* The request's Origin when it is one of cors-origin, else NULL. */
static const char *am_http_cors_origin(const am_http_ctx *x)
{
    const char *list = x->http->srv->cfg.cors_origin;
    if (!list[0] || !x->conn)
        return NULL;
    const char *o = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Origin");
    return o && am_http_in_list(list, o, strlen(o)) ? o : NULL;
}

/* Refuses an unsafe method from a foreign origin (see the file comment). */
static void am_http_origin_check(am_http_ctx *x)
{
    const char *m = x->method;
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD") || !strcmp(m, "OPTIONS"))
        return;
    const char *o = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Origin");
    if (!o || am_http_same_origin(x, o) || am_http_cors_origin(x))
        return;
    char detail[512];
    snprintf(detail, sizeof detail,
             "%s requests from the web origin '%.200s' are refused: it is not this server's "
             "origin nor one of its cors-origin values",
             m, am_text_validate(o, strlen(o), NULL) == AM_OK ? o : "?");
    am_http_early(x, AM_P_FORBIDDEN_ORIGIN, detail);
}

/* The request's media type, lower case without parameters, into x->ctype. */
static void am_http_content_type(am_http_ctx *x)
{
    const char *ct = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Type");
    if (!ct)
        return;
    size_t k = 0;
    while (*ct == ' ')
        ct++;
    for (; ct[k] && ct[k] != ';' && ct[k] != ' ' && k + 1 < sizeof x->ctype; k++)
        x->ctype[k] = (char)tolower((unsigned char)ct[k]);
    x->ctype[k] = '\0';
    x->req.content_type = x->ctype;
}

/* Finds x->route: the method's route, or HEAD on a GET route. Answers 404
 * (no route at the path), OPTIONS (204 with Allow) and 405 early. */
static void am_http_route(am_http_ctx *x, const char *method)
{
    const am_route *path_hit = NULL;
    const char *m = method;
    int is_head = !strcmp(method, "HEAD");
    for (int pass = 0; pass < 2 && !x->route; pass++) {
        for (const am_route *r = am_routes(); r->method; r++) {
            if (!am_http_match(x, r, NULL, NULL))
                continue;
            if (!path_hit)
                path_hit = r;
            if (!strcmp(r->method, m)) {
                x->route = r;
                break;
            }
        }
        if (!is_head)
            break;
        m = "GET";
    }
    if (!path_hit) {
        am_http_early(x, AM_P_NOT_FOUND, "no resource at this path");
        return;
    }
    x->route_label = path_hit->pattern;
    char allow[128];
    if (!strcmp(method, "OPTIONS")) {
        am_http_allow(x, allow, sizeof allow);
        am_resp_data(&x->early, 204, NULL, NULL, 0);
        am_resp_header(&x->early, "Allow", allow);
        x->has_early = 1;
        return;
    }
    if (!x->route) {
        am_http_allow(x, allow, sizeof allow);
        char detail[256];
        snprintf(detail, sizeof detail, "%s is not allowed here; allowed: %s", method, allow);
        am_http_early(x, AM_P_METHOD_NOT_ALLOWED, detail);
        am_resp_header(&x->early, "Allow", allow);
        return;
    }
    x->route_label = x->route->pattern;
    x->req.route = x->route->pattern;
}

/* Sets the path parameters of x->route and validates them: an invalid one
 * names no resource (404 early). */
static void am_http_params(am_http_ctx *x)
{
    char *params[AM_HTTP_MAX_PARAMS] = {0};
    size_t np = 0;
    am_http_match(x, x->route, params, &np);
    for (size_t k = 0; k < np; k++)
        x->req.params[k] = params[k];
    x->req.nparams = np;
    for (size_t k = 0; k < np; k++) {
        char name[32];
        am_http_param_name(x->route->pattern, k, name, sizeof name);
        int word = !strcmp(name, "word");
        if (word ? am_http_valid_word(params[k]) : am_http_valid_id(params[k]))
            continue;
        char detail[512];
        if (word)
            snprintf(detail, sizeof detail,
                     "the {word} path parameter must be 1..256 bytes of UTF-8, so no such "
                     "resource exists");
        else
            snprintf(detail, sizeof detail,
                     "'%.140s' is not a valid {%s}: ids are 1..128 of [A-Za-z0-9._-] (not '.' or "
                     "'..'), so no such resource exists",
                     am_text_validate(params[k], strlen(params[k]), NULL) == AM_OK ? params[k]
                                                                                   : "?",
                     name);
        am_http_early(x, AM_P_NOT_FOUND, detail);
        return;
    }
}

/* The route's body limit, and 413 early when Content-Length exceeds it. */
static void am_http_length_check(am_http_ctx *x)
{
    x->limit = am_http_limit(x);
    const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl)
        return;
    char *end = NULL;
    unsigned long long v = strtoull(cl, &end, 10);
    if (end != cl && (v > (unsigned long long)x->limit)) {
        char detail[160];
        snprintf(detail, sizeof detail, "the body (%llu bytes) is larger than %lld bytes", v,
                 (long long)x->limit);
        am_http_early(x, AM_P_PAYLOAD_TOO_LARGE, detail);
        am_resp_problem_set(&x->early, "limit", json_integer(x->limit));
        x->close_conn = 1;
    }
}

/* A byte range of the request head that libmicrohttpd parsed into a
 * string (method, target, version, a header name or value). */
typedef struct am_http_span {
    const char *p;
    size_t n;
} am_http_span;

/* What am_http_hdr_scan collects from the request's headers. */
typedef struct am_http_hdrs {
    int host, length, coding; /* Host, Content-Length, Transfer-Encoding headers */
    am_http_span *spans; /* names and values (owned) */
    size_t nspans, cap;
} am_http_hdrs;

static void am_http_span_add(am_http_hdrs *c, const char *p, size_t n)
{
    AM_GROW(c->spans, c->cap, c->nspans + 1, 32);
    c->spans[c->nspans].p = p;
    c->spans[c->nspans].n = n;
    c->nspans++;
}

static enum MHD_Result am_http_hdr_scan(void *cls, enum MHD_ValueKind kind, const char *key,
                                        size_t key_size, const char *value, size_t value_size)
{
    am_http_hdrs *c = cls;
    (void)kind;
    if (key)
        am_http_span_add(c, key, key_size);
    if (value)
        am_http_span_add(c, value, value_size);
    if (key && !strcasecmp(key, "Host"))
        c->host++;
    if (key && !strcasecmp(key, "Content-Length"))
        c->length++;
    if (key && !strcasecmp(key, "Transfer-Encoding"))
        c->coding++;
    return MHD_YES;
}

/* Is the Transfer-Encoding value exactly "chunked" (blanks around it and
 * the case ignored)? */
static int am_http_is_chunked(const char *te)
{
    while (*te == ' ' || *te == '\t')
        te++;
    size_t n = strlen(te);
    while (n && (te[n - 1] == ' ' || te[n - 1] == '\t'))
        n--;
    return n == 7 && !strncasecmp(te, "chunked", 7);
}

/* Does the request head hide bytes behind a NUL? libmicrohttpd 0.9.75
 * parses the head in place, writing NULs over the line ends and the
 * separators, and keeps a header value only up to a NUL byte in it: the
 * rest of the line ("X-A: a<NUL>b") is silently dropped, so this server
 * and a proxy in front of it would read two different values. The head
 * (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes from the method) is
 * walked: every byte must lie inside a string the parser produced (method,
 * target, version, names, values) or be a separator or blank; anything
 * else was hidden by a NUL. When a parsed string lies outside that range
 * (another layout than 0.9.75's), nothing can be concluded: returns 0. */
static int am_http_hidden_bytes(const am_http_ctx *x, const char *method, const char *version,
                                const am_http_hdrs *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!ci || !method || !version || !x->raw_uri || !ci->header_size)
        return 0;
    const char *lo = method;
    size_t size = ci->header_size;
    unsigned char *known = am_xcalloc(size, 1);
    am_http_span fixed[3] = {
        {method, strlen(method)}, {x->raw_uri, x->raw_uri_len}, {version, strlen(version)}};
    int hidden = 0, layout_ok = 1;
    for (size_t i = 0; i < 3 + c->nspans && layout_ok; i++) {
        const am_http_span *s = i < 3 ? &fixed[i] : &c->spans[i - 3];
        /* address comparisons only: the spans point into the one read buffer */
        if ((uintptr_t)s->p < (uintptr_t)lo || (uintptr_t)s->p + s->n > (uintptr_t)lo + size)
            layout_ok = 0;
        else
            memset(known + ((uintptr_t)s->p - (uintptr_t)lo), 1, s->n);
    }
    for (size_t i = 0; layout_ok && i < size && !hidden; i++) {
        char ch = lo[i];
        hidden = !known[i] && ch != '\0' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' &&
                 ch != ':';
    }
    free(known);
    return hidden;
}

/* Header-level framing the HTTP parser lets through, refused before
 * anything else (400, or 501 for a transfer coding other than chunked),
 * with the connection closed (its framing cannot be trusted):
 *   - a NUL byte in a header (RFC 9110 §5.5 forbids it; libmicrohttpd
 *     0.9.75 keeps the value up to the NUL, so two parsers would see two
 *     values);
 *   - two Host headers (it uses the first; a proxy that uses the last
 *     would disagree with the DNS-rebinding check);
 *   - two Content-Length or Transfer-Encoding headers, or both at once
 *     (request smuggling through a proxy that reads the other one);
 *   - a Transfer-Encoding other than chunked: libmicrohttpd then waits for
 *     a body it cannot delimit until the idle timeout; RFC 9112 §6.1 says
 *     501.
 * Returns 1 when x->early is set. */
static int am_http_framing_check(am_http_ctx *x, const char *method, const char *version)
{
    am_http_hdrs c = {0};
    MHD_get_connection_values_n(x->conn, MHD_HEADER_KIND, am_http_hdr_scan, &c);
    int nul = am_http_hidden_bytes(x, method, version, &c);
    free(c.spans);
    const char *te = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Transfer-Encoding");
    const char *why = nul            ? "a header holds a NUL byte"
                      : c.host > 1   ? "the request has more than one Host header"
                      : c.length > 1 ? "the request has more than one Content-Length header"
                      : c.coding > 1 ? "the request has more than one Transfer-Encoding header"
                      : c.coding && c.length ? "the request has both Transfer-Encoding and "
                                               "Content-Length"
                                             : NULL;
    x->req.path = x->target; /* the problem's instance: nothing is decoded yet */
    if (why) {
        am_http_early(x, AM_P_BAD_REQUEST, why);
    } else if (te && !am_http_is_chunked(te)) {
        char detail[200];
        snprintf(detail, sizeof detail,
                 "Transfer-Encoding '%.60s' is not supported: send the body with "
                 "Content-Length or Transfer-Encoding: chunked",
                 am_text_validate(te, strlen(te), NULL) == AM_OK ? te : "?");
        am_http_early(x, AM_P_NOT_IMPLEMENTED, detail);
    } else {
        x->req.path = NULL;
        return 0;
    }
    x->close_conn = 1;
    return 1;
}

/* On a connection opened beyond max-connections (the reserved ones, see
 * am_http_conn_cb), a request for anything but the probes is refused
 * while the count is still above max-connections. */
static int am_http_reserved_refuse(const am_http_ctx *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (!ci || ci->socket_context != &x->http->reserved_mark)
        return 0;
    if (atomic_load(&x->http->conns) <= x->http->srv->cfg.max_connections)
        return 0; /* others closed meanwhile: it is an ordinary connection now */
    return strcmp(x->path, "/healthz") && strcmp(x->path, "/readyz") && strcmp(x->path, "/metrics");
}

/* Everything decided before the body: request id, target, host, route,
 * origin, authentication, path parameters, shard owner, body limit; the
 * first refusal becomes x->early (x->has_early). */
static void am_http_prepare(am_http_ctx *x, const char *method, const char *version)
{
    am_server *srv = x->http->srv;
    snprintf(x->method, sizeof x->method, "%s", method);
    x->req.srv = srv;
    x->req.method = method;
    x->req.conn = x;
    x->req.body = "";
    x->route_label = "other";
    x->limit = srv->cfg.max_body;
    am_http_request_id(x);
    am_http_content_type(x);

    if (am_http_framing_check(x, method, version))
        return;
    if (am_http_parse_target(x) < 0) {
        x->req.path = x->path ? x->path : x->target;
        am_http_early(x, AM_P_BAD_REQUEST,
                      "the request target is not a path, or holds a malformed percent-encoding, "
                      "an encoded NUL byte or a query that is not UTF-8");
        return;
    }
    x->req.path = x->path;
    if (am_text_validate(x->path, strlen(x->path), NULL) != AM_OK) {
        /* problem "instance" must be text: show the path as sent */
        const char *q = strchr(x->target, '?');
        x->raw_path = am_xstrndup(x->target, q ? (size_t)(q - x->target) : strlen(x->target));
        x->req.path = x->raw_path;
    }
    if (am_http_reserved_refuse(x)) {
        am_http_early(x, AM_P_UNAVAILABLE,
                      "every connection is taken (max-connections); this one is reserved for "
                      "/healthz, /readyz and /metrics");
        am_resp_header(&x->early, "Retry-After", "1");
        x->close_conn = 1;
        am_prom_reserved_refused(srv->prom);
        return;
    }
    if (!am_http_host_ok(x)) {
        am_http_early(x, AM_P_FORBIDDEN_HOST,
                      am_http_peer_loopback(x)
                          ? "on a loopback connection this server answers only requests for "
                            "localhost, a loopback IP or an allowed-host (DNS-rebinding "
                            "protection)"
                          : "without read-token this server answers only requests for "
                            "localhost, an IP address or an allowed-host (DNS-rebinding "
                            "protection)");
        return;
    }
    am_http_route(x, method);
    if (x->has_early)
        return;
    am_http_origin_check(x);
    if (x->has_early)
        return;
    am_http_take_token(x);
    am_http_auth(x);
    if (x->has_early)
        return;
    am_http_params(x);
    if (x->has_early)
        return;
    if (am_shard_check(srv->shard, &x->req, &x->early)) { /* 421: another instance owns it */
        x->has_early = 1;
        return;
    }
    am_http_length_check(x);
}

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

/* peer.h: the socket of req's connection, for peer.c's look at whether the
 * client is still there (-1 without a connection). */
int am_req_socket(const am_req *req)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    const union MHD_ConnectionInfo *ci =
        x && x->conn ? MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;
    return ci ? (int)ci->connect_fd : -1;
}
