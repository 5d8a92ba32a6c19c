/*
 * http.h — the handlers' view of HTTP: the request/response objects every
 * handler sees, the route table, RFC 9457 problem responses and streamed
 * (SSE) responses. Authentication, CORS, host checks and the per-route
 * Prometheus samples (prom.h) happen in http.c around the handler.
 *
 * A handler is one thin function per endpoint (api_*.c): it reads an
 * am_req, calls core/ and store, and fills an am_resp. It never touches
 * libmicrohttpd directly, never writes SQL, never computes a metric.
 * Handlers run on the libmicrohttpd pool threads; they may block (SQLite).
 */
#ifndef AM_HTTP_H
#define AM_HTTP_H

#include "am.h"
#include "problem.h"
#include "stream.h"

#include <jansson.h>
#include <stddef.h>

struct am_server;

#define AM_HTTP_MAX_PARAMS 4
#define AM_HTTP_MAX_HEADERS 8

enum am_auth { AM_AUTH_NONE = 0, AM_AUTH_READ = 1, AM_AUTH_WRITE = 2 };

typedef struct am_req {
    struct am_server *srv;
    const char *method; /* "GET", "POST", … */
    const char *path; /* decoded path without the query */
    const char *route; /* the route pattern, e.g. "/v1/sessions/{id}" */
    const char *params[AM_HTTP_MAX_PARAMS]; /* path parameters in pattern order, validated */
    size_t nparams;
    const char *body; /* NUL-terminated request body ("" when none) */
    size_t body_len;
    const char *content_type; /* media type without parameters, lower case; NULL if absent */
    char request_id[40]; /* X-Request-Id of the request, or generated */
    void *conn; /* http.c's request context (http.c only) */
} am_req;

typedef struct am_resp {
    int status;
    char *body; /* owned (malloc'd); NULL for an empty body */
    size_t body_len;
    const char *content_type; /* static string */
    char *headers[AM_HTTP_MAX_HEADERS][2]; /* owned name/value pairs */
    size_t nheaders;
    struct am_stream *stream; /* owned; set by am_resp_stream (SSE) */
} am_resp;

/* Returns the value of query parameter key (decoded), or NULL. */
const char *am_req_query(const am_req *req, const char *key);
/* Returns the value of request header name (case-insensitive), or NULL. */
const char *am_req_header(const am_req *req, const char *name);
/* Writes the client's address as text into buf (n bytes; "" when unknown):
 * the IP literal without port, IPv4-mapped IPv6 addresses as IPv4. */
void am_req_peer(const am_req *req, char *buf, size_t n);

/* Parses the body as a JSON object. Checks the content type (application/json
 * or a +json type; anything else → 415), UTF-8 (422), syntax (400) and that
 * the top level is an object (422), filling resp with the problem on error.
 * Returns AM_OK with *out owned by the caller (json_decref), or an error. */
int am_req_json(const am_req *req, am_resp *resp, json_t **out);
/* The same, accepting an array top level too (a batch). */
int am_req_json_any(const am_req *req, am_resp *resp, json_t **out);
/* The checks of am_req_json before the body is parsed (content type,
 * charset, empty body, UTF-8, NUL bytes), for a handler that parses the body
 * in parts (a batch); AM_OK, or an error with the problem in resp. */
int am_req_json_ready(const am_req *req, am_resp *resp);

/* Sets a JSON body (steals the reference to body) and the status. Real
 * numbers are printed with 17 significant digits (round-trip exact). */
void am_resp_json(am_resp *resp, int status, json_t *body);
/* Answers JSON text (owned, taken over: malloc'd, NUL-terminated) with a
 * newline appended. */
void am_resp_json_text(am_resp *resp, int status, char *text);
/* Sets a body copied from data with the given static content type. */
void am_resp_data(am_resp *resp, int status, const char *content_type, const char *data,
                  size_t len);
/* Sets an owned body (taken over, caller must not free it). */
void am_resp_take(am_resp *resp, int status, const char *content_type, char *data, size_t len);
/* Adds a response header (both strings are copied); a header of the same
 * name is replaced. */
void am_resp_header(am_resp *resp, const char *name, const char *value);
/* Removes (and frees) every header added so far. */
void am_resp_headers_clear(am_resp *resp);

/* An RFC 9457 problem+json response of the given type (problem.h's table
 * gives its slug, status and title):
 *   {"type": "https://adaptmon.dev/problems/<slug>", "title": title,
 *    "status": status, "detail": detail, "instance": request path,
 *    "request_id": …}
 * The slugs are openapi.yaml's (Problem.type), which a test keeps in step
 * with the answers. */
void am_resp_problem(am_resp *resp, const am_req *req, am_ptype type, const char *detail_fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Adds fields to the last problem body (e.g. "field": "k"); steals value. */
void am_resp_problem_set(am_resp *resp, const char *key, json_t *value);

/* A handler fills resp; the return value is ignored (the status says it). */
typedef void (*am_handler)(am_req *req, am_resp *resp);

typedef struct am_route {
    const char *method;
    const char *pattern; /* literal segments and {name} parameters */
    am_handler handler;
    enum am_auth auth; /* token needed when authentication is on */
    int offload; /* 1: long work (a replay, a big upload): the handler runs on
                    its own thread while the connection is suspended, so the
                    pool thread keeps serving its other connections;
                    AM_OFFLOAD_BIG: only when the body is larger than
                    AM_HTTP_OFFLOAD_BODY (a segment batch: one segment is a
                    short request, a batch can score for seconds) */
} am_route;
#define AM_OFFLOAD_BIG 2
#define AM_HTTP_OFFLOAD_BODY (16u << 10)

/* The route table (server/api/routes.c), terminated by a NULL method. */
const am_route *am_routes(void);

/* ---- streamed responses (Server-Sent Events): stream.h -------------------- */
/* Makes resp a streamed response (status, static content type); resp owns
 * the returned handle (and cls, freed with free_fn) from now on. */
am_stream *am_resp_stream(am_resp *resp, int status, const char *content_type,
                          am_stream_read_fn read_fn, am_stream_free_fn free_fn, void *cls);

/* Validates a path parameter: ids match [A-Za-z0-9._-]{1,128}; {word}
 * parameters are any valid UTF-8 of 1..256 bytes. */
int am_http_valid_id(const char *s);

#endif
