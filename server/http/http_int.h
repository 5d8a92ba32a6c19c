/*
 * http_int.h — private to server/http/http*.c: the front end's state
 * (am_http), one request's context (am_http_ctx) and the functions the
 * http*.c files share. Handlers see only http.h.
 */
#ifndef AM_HTTP_INT_H
#define AM_HTTP_INT_H

#include "http.h"
#include "json.h"
#include "events.h"
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

/* A streamed response (http_resp.c makes it, http.c queues it). */
struct am_stream {
    pthread_mutex_t mu;
    struct MHD_Connection *conn; /* set when the response is queued */
    int suspended; /* the connection is suspended by the reader */
    int woken; /* a wake arrived since the last read began */
    am_stream_read_fn read;
    am_stream_free_fn free;
    void *cls;
};

/* http_check.c (request context before the handler) */
const char *am_http_cors_origin(const am_http_ctx *x);
void am_http_ctx_free(am_http_ctx *x);
void am_http_early(am_http_ctx *x, am_ptype type, const char *detail);
int am_http_framing_check(am_http_ctx *x, const char *method, const char *version);
int am_http_has_body(am_http_ctx *x);
int am_http_host_ok(const am_http_ctx *x);
void am_http_prepare(am_http_ctx *x, const char *method, const char *version);
int am_http_reserved_refuse(const am_http_ctx *x);

/* http_req.c (validation and decoding) */
int am_http_decode(const char *s, size_t n, int plus_space, char **out);
int am_http_valid_word(const char *s);

/* http_resp.c (responses) */
void am_resp_cleanup(am_resp *resp);
void am_resp_clear_body(am_resp *resp);
const char *am_resp_get_header(const am_resp *resp, const char *name);
void am_resp_init(am_resp *resp);
void am_stream_destroy(void *cls);
ssize_t am_stream_reader(void *cls, uint64_t pos, char *buf, size_t max);

#endif
