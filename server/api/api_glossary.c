/* api_glossary.c — PUT/GET/DELETE /v1/sessions/{id}/glossary (stored through
 * am_ingest_glossary_put, under the session's write lock). */
#include "api.h"

#include "ingest.h"
#include "json.h"
#include "sessions.h"

#include <stdlib.h>
#include <string.h>

/* The glossary format of a request's media type; -1 when unsupported. */
static int am_gloss_media(const char *ct)
{
    if (!ct)
        return -1;
    if (!strcmp(ct, "application/json") ||
        (strlen(ct) > 5 && !strcmp(ct + strlen(ct) - 5, "+json")))
        return AM_GLOSS_JSON;
    if (!strcmp(ct, "text/csv"))
        return AM_GLOSS_CSV;
    if (!strcmp(ct, "text/tab-separated-values") || !strcmp(ct, "text/tsv"))
        return AM_GLOSS_TSV;
    if (!strcmp(ct, "application/x-tbx") || !strcmp(ct, "application/tbx+xml") ||
        !strcmp(ct, "application/xml") || !strcmp(ct, "text/xml"))
        return AM_GLOSS_TBX;
    return -1;
}

/* Bytes a glossary upload holds at its peak per byte of body, by format
 * (bench/README.md, "Memory budget": 100,000 entries, RSS high-water mark
 * less RSS before, the body itself included, measured 15.2, 22.9 and 4.0):
 * the parsed entries and the compiled glossary side by side, the parse's
 * own transient (jansson's tree, the TBX reader) before them. CSV and TSV
 * carry the most entries per byte, TBX the fewest. */
#define AM_GLOSS_PEAK_JSON 16
#define AM_GLOSS_PEAK_CSV 24
#define AM_GLOSS_PEAK_TBX 5

size_t am_api_gloss_estimate(int fmt, size_t body_len)
{
    size_t f = fmt == AM_GLOSS_TBX    ? AM_GLOSS_PEAK_TBX
               : fmt == AM_GLOSS_JSON ? AM_GLOSS_PEAK_JSON
                                      : AM_GLOSS_PEAK_CSV;
    return ((size_t)64 << 10) + body_len * f;
}

int am_api_gloss_reserve(am_req *req, am_resp *resp, size_t bytes)
{
    am_sessions *c = req->srv->sessions;
    int rc = am_sessions_reserve(c, bytes, 0);
    if (rc == AM_OK)
        return AM_OK;
    am_sess_mem m;
    am_sessions_memory(c, &m);
    size_t mib = (bytes >> 20) + 1, budget = m.budget >> 20;
    if (rc == AM_ERR_RANGE) {
        am_resp_problem(resp, req, AM_P_PAYLOAD_TOO_LARGE,
                        "this glossary needs about %zu MiB to parse and compile, more than the "
                        "whole session-memory budget (%zu MiB): split it into smaller "
                        "glossaries or raise --session-memory; nothing was changed",
                        mib, budget);
    } else {
        am_resp_problem(resp, req, AM_P_UNAVAILABLE,
                        "the session-memory budget (%zu MiB) is held by requests in flight; this "
                        "glossary needs about %zu MiB to parse and compile: nothing was "
                        "changed, retry later",
                        budget, mib);
        am_resp_header(resp, "Retry-After", AM_GLOSS_RETRY_AFTER);
    }
    am_resp_problem_set(resp, "cap", json_string("session-memory"));
    am_resp_problem_set(resp, "max", json_integer((json_int_t)m.budget));
    return rc;
}

/* The glossary g as the JSON text stored for it (caller frees), written
 * entry by entry: the same text am_api_gloss_json gives, without holding
 * a JSON tree of the whole glossary beside the entries. */
static char *gloss_text(const am_gloss *g)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_appendc(&b, '[');
    for (size_t i = 0; i < g->n; i++) {
        am_gloss one = *g;
        one.v = &g->v[i];
        one.n = 1;
        char *t = am_api_gloss_json(&one); /* "[{...}]" */
        if (i)
            am_buf_appendc(&b, ',');
        am_buf_append(&b, t + 1, strlen(t) - 2);
        free(t);
    }
    am_buf_appendc(&b, ']');
    return am_buf_detach(&b);
}

/* Parses the upload into g (initialized by the caller) with the session's
 * languages; a problem answered on error. */
static int gloss_parse(am_req *req, am_resp *resp, const am_store_session *row, int fmt,
                       am_gloss *g, am_gloss_report *rep)
{
    am_gloss_limits lim = am_gloss_limits_default();
    lim.max_entries = (size_t)req->srv->cfg.max_glossary_entries;
    lim.max_bytes = (size_t)req->srv->cfg.max_glossary_body;
    json_t *opts = json_loads(row->options, 0, NULL);
    const char *sl = json_string_value(json_object_get(opts, "source_lang"));
    const char *tl = json_string_value(json_object_get(opts, "target_lang"));
    int rc;
    if (fmt == AM_GLOSS_TBX)
        rc = am_gloss_parse_tbx(req->body, req->body_len, sl, tl, &lim, g, rep);
    else
        rc = am_gloss_parse_langs(req->body, req->body_len, (enum am_gloss_format)fmt, sl, tl, &lim,
                                  g, rep);
    json_decref(opts);
    if (rc != AM_OK)
        am_api_body_problem(req, resp, rc, rep->msg, rep->line);
    return rc;
}

/* The upload parsed, compiled once with the session's options (stemmer,
 * …) to validate it, and written as the JSON text to store (*txt, caller
 * frees), under a reservation of its peak in the session-memory budget
 * (am_api_gloss_reserve: 413 or 503 when it cannot fit, nothing changed).
 * The reservation ends before the store is written: storing acquires the
 * session's runtime, which reserves its own build. */
static int gloss_prepare(am_req *req, am_resp *resp, const am_store_session *row, int fmt,
                         char **txt, size_t *entries, am_gloss_report *rep)
{
    size_t est = am_api_gloss_estimate(fmt, req->body_len);
    int rc = am_api_gloss_reserve(req, resp, est);
    if (rc != AM_OK)
        return rc;
    am_gloss g;
    am_gloss_init(&g);
    rc = gloss_parse(req, resp, row, fmt, &g, rep);
    if (rc == AM_OK) {
        am_scorer *sc = NULL;
        am_buf err;
        am_buf_init(&err);
        rc = am_sessions_build_gloss(req->srv->sessions, row->options, row->custom_stopwords, &g,
                                     &sc, &err);
        am_scorer_free(sc); /* before the text is written: the peak is one of them */
        if (rc != AM_OK)
            am_resp_problem(resp, req, AM_P_INVALID_VALUE, "%s", am_buf_str(&err));
        am_buf_cleanup(&err);
    }
    if (rc == AM_OK) {
        *txt = gloss_text(&g);
        *entries = g.n;
    }
    am_gloss_cleanup(&g);
    am_sessions_unreserve(req->srv->sessions, est);
    return rc;
}

void am_api_glossary_put(am_req *req, am_resp *resp)
{
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    int fmt = am_gloss_media(req->content_type);
    if (fmt < 0) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "glossaries are application/json, text/csv, text/tab-separated-values or "
                        "application/x-tbx (TBX-Basic)");
        am_store_session_clear(&row);
        return;
    }
    am_gloss_report rep;
    memset(&rep, 0, sizeof rep);
    char *txt = NULL;
    size_t entries = 0;
    int64_t version = 0;
    int rc = gloss_prepare(req, resp, &row, fmt, &txt, &entries, &rep);
    if (rc != AM_OK) {
        /* answered */
    } else if ((rc = am_ingest_glossary_put(req->srv, row.id, row.incarnation, txt, &version)) !=
               AM_OK) {
        am_api_gone_or_500(req, resp, rc, "the glossary was not stored");
    } else {
        am_resp_json(resp, 200,
                     json_pack("{sssIsIsIss}", "session", row.id, "entries", (json_int_t)entries,
                               "skipped", (json_int_t)rep.skipped, "version", (json_int_t)version,
                               "format", am_gloss_format_name(rep.format)));
    }
    free(txt);
    am_store_session_clear(&row);
}

void am_api_glossary_get(am_req *req, am_resp *resp)
{
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    json_t *entries = row.glossary ? json_loads(row.glossary, 0, NULL) : json_array();
    am_resp_json(resp, 200,
                 json_pack("{sssIsIso}", "session", row.id, "version",
                           (json_int_t)row.glossary_version, "count",
                           (json_int_t)json_array_size(entries), "entries", entries));
    am_store_session_clear(&row);
}

void am_api_glossary_delete(am_req *req, am_resp *resp)
{
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    int rc = am_ingest_glossary_put(req->srv, row.id, row.incarnation, NULL, NULL);
    if (rc != AM_OK) {
        am_api_gone_or_500(req, resp, rc, "the glossary was not removed");
    } else {
        resp->status = 204;
    }
    am_store_session_clear(&row);
}
