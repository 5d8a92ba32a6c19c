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
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report rep;
    memset(&rep, 0, sizeof rep);
    am_gloss_limits lim = am_gloss_limits_default();
    lim.max_entries = (size_t)req->srv->cfg.max_glossary_entries;
    lim.max_bytes = (size_t)req->srv->cfg.max_glossary_body;
    int rc;
    json_t *opts = json_loads(row.options, 0, NULL);
    const char *sl = json_string_value(json_object_get(opts, "source_lang"));
    const char *tl = json_string_value(json_object_get(opts, "target_lang"));
    if (fmt == AM_GLOSS_TBX)
        rc = am_gloss_parse_tbx(req->body, req->body_len, sl, tl, &lim, &g, &rep);
    else
        rc = am_gloss_parse_langs(req->body, req->body_len, (enum am_gloss_format)fmt, sl, tl, &lim,
                                  &g, &rep);
    json_decref(opts);
    if (rc != AM_OK) {
        am_api_body_problem(req, resp, rc, rep.msg, rep.line);
        am_gloss_cleanup(&g);
        am_store_session_clear(&row);
        return;
    }
    char *txt = am_api_gloss_json(&g);
    size_t entries = g.n;
    am_gloss_cleanup(&g);
    /* the glossary must compile with the session's options (stemmer, …) */
    am_scorer *sc = NULL;
    am_buf err;
    am_buf_init(&err);
    rc = am_sessions_scorer_in(req->srv->sessions, row.options, row.custom_stopwords, txt, NULL,
                               &sc, &err);
    am_scorer_free(sc);
    int64_t version = 0;
    if (rc != AM_OK) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE, "%s", am_buf_str(&err));
    } else if ((rc = am_ingest_glossary_put(req->srv, row.id, row.incarnation, txt, &version)) !=
               AM_OK) {
        am_api_gone_or_500(req, resp, rc, "the glossary was not stored");
    } else {
        am_resp_json(resp, 200,
                     json_pack("{sssIsIsIss}", "session", row.id, "entries", (json_int_t)entries,
                               "skipped", (json_int_t)rep.skipped, "version", (json_int_t)version,
                               "format", am_gloss_format_name(rep.format)));
    }
    am_buf_cleanup(&err);
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
