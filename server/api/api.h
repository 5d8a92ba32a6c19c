/*
 * api.h — the endpoint handlers (one file per resource: api_sessions.c,
 * api_glossary.c, api_segments.c, api_metrics.c, api_export.c,
 * api_vocab.c, api_system.c, api_curve.c, api_plot.c) and the few helpers they share. The route
 * table (routes.c) maps method + path onto these.
 */
#ifndef AM_API_H
#define AM_API_H

#include "glossary.h"
#include "http.h"
#include "problem.h"
#include "server.h"
#include "store.h"

/* sessions */
void am_api_session_create(am_req *req, am_resp *resp);
void am_api_session_get(am_req *req, am_resp *resp);
void am_api_session_list(am_req *req, am_resp *resp);
void am_api_session_delete(am_req *req, am_resp *resp);
/* glossary */
void am_api_glossary_put(am_req *req, am_resp *resp);
void am_api_glossary_get(am_req *req, am_resp *resp);
void am_api_glossary_delete(am_req *req, am_resp *resp);
/* segments */
void am_api_segment_post(am_req *req, am_resp *resp);
void am_api_segment_put(am_req *req, am_resp *resp);
void am_api_segment_delete(am_req *req, am_resp *resp);
void am_api_segment_get(am_req *req, am_resp *resp);
void am_api_segment_list(am_req *req, am_resp *resp);
void am_api_check(am_req *req, am_resp *resp);
/* metrics and history */
void am_api_metrics(am_req *req, am_resp *resp);
void am_api_word(am_req *req, am_resp *resp);
/* curves for the dashboard, downsampled (api_curve.c) */
void am_api_curve(am_req *req, am_resp *resp);
/* The curve of GET …/curve (query points, window, wo) into *out (caller
 * releases): 1; 0 when resp holds the answer (a problem or 304). tag is
 * appended to the ETag ("" for the JSON). */
int am_api_curve_data(am_req *req, am_resp *resp, const char *tag, json_t **out);
/* the curves as an SVG figure (api_plot.c) */
void am_api_plot(am_req *req, am_resp *resp);
/* export */
void am_api_export(am_req *req, am_resp *resp);
/* The streamed segment pager of api_export.c (exports and the timeline):
 * rows with after < seq <= upper of a session. fmt: 0 json export, 1 csv,
 * 2 tmx, 3 timeline rows. am_pager_stream makes resp its streamed answer
 * (200): header, the rows, footer (both copied); resp owns the pager. */
typedef struct am_pager am_pager;
am_pager *am_pager_new(am_server *srv, const char *session, int fmt, int64_t after, int64_t upper);
void am_pager_stream(am_pager *c, am_resp *resp, const char *content_type, const char *header,
                     const char *footer);
/* The timeline answer {session, segments, next, total} of row's segments
 * after `after`, at most limit, streamed (api_export.c). */
void am_api_timeline(am_req *req, am_resp *resp, const am_store_session *row, int64_t after,
                     int64_t limit);
/* background vocabularies */
void am_api_vocab_put(am_req *req, am_resp *resp);
void am_api_import(am_req *req, am_resp *resp);
void am_api_vocab_get(am_req *req, am_resp *resp);
void am_api_vocab_delete(am_req *req, am_resp *resp);
/* service */
void am_api_healthz(am_req *req, am_resp *resp);
void am_api_readyz(am_req *req, am_resp *resp);
void am_api_prometheus(am_req *req, am_resp *resp);
void am_api_openapi(am_req *req, am_resp *resp);
/* dashboard (api_dashboard.c): embedded static files */
void am_api_dashboard_index(am_req *req, am_resp *resp);
void am_api_dashboard_file(am_req *req, am_resp *resp);

/* Shared helpers (api_common.c). */
/* Loads the session of req->params[0] into *row (caller clears); on error
 * fills resp (404/500) and returns the error. */
int am_api_load_session(am_req *req, am_resp *resp, am_store_session *row);
/* The answer to a failed write of the session of req->params[0] (rc from
 * the store): AM_ERR_NOTFOUND 404 (deleted, or deleted and re-created, while
 * the request ran: a foreign key or a missing row), AM_ERR_CONFLICT 409 (a
 * unique key: created concurrently), anything else as am_api_store_fail
 * (507 for a full disk, 500 otherwise) with what. */
void am_api_gone_or_500(am_req *req, am_resp *resp, int rc, const char *what);
/* Answers a failed store write (rc from the store): 507 insufficient-storage
 * for AM_ERR_FULL (disk full or max-db-size reached), else 500 internal;
 * what (borrowed) starts the detail. The 5xx is logged by http.c. */
void am_api_store_fail(am_req *req, am_resp *resp, int rc, const char *what);
/* Parses an optional integer query parameter within [lo, hi] (keeps *out
 * when absent); 400 problem on a bad value. */
int am_api_query_int(am_req *req, am_resp *resp, const char *key, int64_t lo, int64_t hi,
                     int64_t *out);
/* The session resource object. */
json_t *am_api_session_json(am_server *srv, const am_store_session *row);
/* Does an If-None-Match value (NULL: absent) match etag? (api_common.c) */
int am_api_etag_matches(const char *inm, const char *etag);
/* Canonical JSON text of a glossary (caller frees). */
char *am_api_gloss_json(const am_gloss *g);
/* A glossary upload's memory (api_glossary.c): am_api_gloss_estimate is
 * the peak parsing and compiling body_len bytes of format fmt (enum
 * am_gloss_format) holds; am_api_gloss_reserve reserves bytes in the
 * session-memory budget (am_sessions_reserve) or answers 413 (it can never
 * fit) or 503 with Retry-After (requests in flight hold the budget), both
 * with "cap": "session-memory", and returns that error. The caller gives a
 * reservation back with am_sessions_unreserve. */
#define AM_GLOSS_RETRY_AFTER "2"
size_t am_api_gloss_estimate(int fmt, size_t body_len);
int am_api_gloss_reserve(am_req *req, am_resp *resp, size_t bytes);
/* Answers a request body a parser rejected with rc: am_problem_of_input's
 * problem, the parser's message (borrowed; the error's text when empty or
 * NULL) as detail, and a "line" member when line > 0. */
void am_api_body_problem(am_req *req, am_resp *resp, int rc, const char *msg, size_t line);
/* Answers a failed am_ingest_* / rescore call with the problem in f
 * (borrowed; problem.h): its type (internal when never filled), detail,
 * "field" when set and a Retry-After header when f->retry_after > 0. */
void am_api_fail(am_req *req, am_resp *resp, const am_fail *f);
/* The runtime of the request's session (req->params[0]) of its current
 * incarnation (am_ingest_acquire) into *out, to release with
 * am_sessions_release; on failure the problem is answered in resp and the
 * error returned. */
int am_api_acquire(am_req *req, am_resp *resp, struct am_sess **out);

#endif
