/* routes.c — every endpoint in one table: method, path, handler, access,
 * offload (1: the handler runs on its own thread; AM_OFFLOAD_BIG: when its
 * body is large; see http.h).
 * The contract of each is in openapi.yaml (served at /openapi.yaml). */
#include "api.h"
#include "events.h" /* am_api_events */
#include "rescore.h" /* am_api_rescore */

static const am_route am_route_table[] = {
    {"GET", "/healthz", am_api_healthz, AM_AUTH_NONE, 0},
    {"GET", "/readyz", am_api_readyz, AM_AUTH_NONE, 0},
    {"GET", "/metrics", am_api_prometheus, AM_AUTH_NONE, 0},
    {"GET", "/openapi.yaml", am_api_openapi, AM_AUTH_NONE, 0},
    {"GET", "/", am_api_dashboard_index, AM_AUTH_NONE, 0},
    {"GET", "/dashboard/{file}", am_api_dashboard_file, AM_AUTH_NONE, 0},

    {"POST", "/v1/sessions", am_api_session_create, AM_AUTH_WRITE, 0},
    {"GET", "/v1/sessions", am_api_session_list, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}", am_api_session_get, AM_AUTH_READ, 0},
    {"DELETE", "/v1/sessions/{id}", am_api_session_delete, AM_AUTH_WRITE, 1},

    {"PUT", "/v1/sessions/{id}/glossary", am_api_glossary_put, AM_AUTH_WRITE, 1},
    {"GET", "/v1/sessions/{id}/glossary", am_api_glossary_get, AM_AUTH_READ, 0},
    {"DELETE", "/v1/sessions/{id}/glossary", am_api_glossary_delete, AM_AUTH_WRITE, 0},

    /* a batch scores for seconds: off the pool thread (issue 25 §5) */
    {"POST", "/v1/sessions/{id}/segments", am_api_segment_post, AM_AUTH_WRITE, AM_OFFLOAD_BIG},
    {"GET", "/v1/sessions/{id}/segments", am_api_segment_list, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/segments/{sid}", am_api_segment_get, AM_AUTH_READ, 0},
    {"PUT", "/v1/sessions/{id}/segments/{sid}", am_api_segment_put, AM_AUTH_WRITE, 1},
    {"DELETE", "/v1/sessions/{id}/segments/{sid}", am_api_segment_delete, AM_AUTH_WRITE, 1},
    {"POST", "/v1/sessions/{id}/check", am_api_check, AM_AUTH_READ, 0},
    {"POST", "/v1/sessions/{id}/import", am_api_import, AM_AUTH_WRITE, 1},
    {"POST", "/v1/sessions/{id}/rescore", am_api_rescore, AM_AUTH_WRITE, 1},

    {"GET", "/v1/sessions/{id}/metrics", am_api_metrics, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/curve", am_api_curve, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/plot.svg", am_api_plot, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/vocabulary/{word}", am_api_word, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/export", am_api_export, AM_AUTH_READ, 0},
    {"GET", "/v1/sessions/{id}/events", am_api_events, AM_AUTH_READ, 0},

    {"PUT", "/v1/vocabularies/{name}", am_api_vocab_put, AM_AUTH_WRITE, 1},
    {"GET", "/v1/vocabularies/{name}", am_api_vocab_get, AM_AUTH_READ, 0},
    {"DELETE", "/v1/vocabularies/{name}", am_api_vocab_delete, AM_AUTH_WRITE, 0},

    {NULL, NULL, NULL, AM_AUTH_NONE, 0}};

const am_route *am_routes(void)
{
    return am_route_table;
}
