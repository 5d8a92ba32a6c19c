/* api_segments.c — confirmed segments, the timeline and the check. */
#include "api.h"

#include "ingest.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

static void am_fail_resp(am_req *req, am_resp *resp, am_fail *f)
{
    am_resp_problem(resp, req, f->status ? f->status : 500, f->slug ? f->slug : "internal",
                    f->title ? f->title : "Error", "%s", am_buf_str(&f->detail));
    if (f->field)
        am_resp_problem_set(resp, "field", json_string(f->field));
    if (f->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", f->retry_after);
        am_resp_header(resp, "Retry-After", v);
    }
}

static void am_segment_write(am_req *req, am_resp *resp, int replace)
{
    json_t *body;
    if (am_req_json(req, resp, &body) != AM_OK)
        return;
    am_fail f;
    am_fail_init(&f);
    am_seg_req sr;
    char *result = NULL;
    int status = 0;
    int rc = am_seg_req_parse(body, replace ? req->params[1] : NULL, &req->srv->cfg, &sr, &f);
    if (rc == AM_OK) {
        rc = replace ? am_ingest_replace(req->srv, req->params[0], &sr, &result, &status, &f)
                     : am_ingest_post(req->srv, req->params[0], &sr, &result, &status, &f);
    }
    if (rc == AM_OK) {
        if (status == 201) {
            char loc[300];
            snprintf(loc, sizeof loc, "/v1/sessions/%s/segments/%s", req->params[0], sr.id);
            am_resp_header(resp, "Location", loc);
        }
        am_resp_json_text(resp, status, result);
    } else {
        am_fail_resp(req, resp, &f);
    }
    am_seg_req_cleanup(&sr);
    am_fail_cleanup(&f);
    json_decref(body);
}

void am_api_segment_post(am_req *req, am_resp *resp)
{
    am_segment_write(req, resp, 0);
}

void am_api_segment_put(am_req *req, am_resp *resp)
{
    am_segment_write(req, resp, 1);
}

void am_api_segment_delete(am_req *req, am_resp *resp)
{
    am_fail f;
    am_fail_init(&f);
    int status = 0;
    if (am_ingest_delete(req->srv, req->params[0], req->params[1], &status, &f) == AM_OK)
        resp->status = 204;
    else
        am_fail_resp(req, resp, &f);
    am_fail_cleanup(&f);
}

void am_api_segment_get(am_req *req, am_resp *resp)
{
    int64_t seq;
    char *rq = NULL, *rs = NULL;
    int rc = am_store_segment_get(req->srv->store, req->params[0], req->params[1], &seq, &rq, &rs);
    if (rc == AM_ERR_NOTFOUND) {
        am_store_session row;
        if (am_api_load_session(req, resp, &row) == AM_OK) {
            am_resp_problem(resp, req, 404, "not-found", "Not found", "no segment '%s' in '%s'",
                            req->params[1], req->params[0]);
            am_store_session_clear(&row);
        }
        return;
    }
    if (rc != AM_OK) {
        am_resp_problem(resp, req, 500, "internal", "Storage error", "reading the segment failed");
        return;
    }
    json_t *o = json_loads(rs, 0, NULL);
    json_object_set_new(o, "request", json_loads(rq, 0, NULL));
    am_resp_json(resp, 200, o);
    free(rq);
    free(rs);
}

void am_api_segment_list(am_req *req, am_resp *resp)
{
    int64_t after = 0, limit = 100;
    if (am_api_query_int(req, resp, "after", 0, INT64_MAX, &after) != AM_OK ||
        am_api_query_int(req, resp, "limit", 1, 1000, &limit) != AM_OK)
        return;
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    am_api_timeline(req, resp, &row, after, limit);
    am_store_session_clear(&row);
}

void am_api_check(am_req *req, am_resp *resp)
{
    json_t *body;
    if (am_req_json(req, resp, &body) != AM_OK)
        return;
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        if (strcmp(key, "source") && strcmp(key, "hypothesis")) {
            am_resp_problem(resp, req, 422, "unknown-field", "Unknown field",
                            "unknown field '%.64s' (allowed: source, hypothesis)", key);
            json_decref(body);
            return;
        }
    }
    json_t *src = json_object_get(body, "source"), *hyp = json_object_get(body, "hypothesis");
    if (!json_is_string(src) || (hyp && !json_is_string(hyp))) {
        am_resp_problem(resp, req, 422, src ? "invalid-value" : "missing-field",
                        src ? "Invalid value" : "Missing field",
                        "'source' (string) is required; 'hypothesis' is a string");
        json_decref(body);
        return;
    }
    if (strlen(json_string_value(src)) != json_string_length(src) ||
        (hyp && strlen(json_string_value(hyp)) != json_string_length(hyp))) {
        am_resp_problem(resp, req, 422, "invalid-utf8", "Invalid text", "NUL characters in text");
        json_decref(body);
        return;
    }
    /* the same per-text limit as a segment: the check scores both texts */
    const am_srv_config *cfg = &req->srv->cfg;
    size_t ns = am_toks_count_py(json_string_value(src));
    size_t nh = hyp ? am_toks_count_py(json_string_value(hyp)) : 0;
    if (ns > (size_t)cfg->max_tokens || nh > (size_t)cfg->max_tokens) {
        am_resp_problem(resp, req, 422, "too-many-tokens", "Too many tokens",
                        "'%s' has %zu tokens; the limit is %d", ns > nh ? "source" : "hypothesis",
                        ns > nh ? ns : nh, cfg->max_tokens);
        json_decref(body);
        return;
    }
    am_fail f;
    am_fail_init(&f);
    json_t *out = NULL;
    if (am_ingest_check(req->srv, req->params[0], json_string_value(src),
                        hyp ? json_string_value(hyp) : "", &out, &f) == AM_OK)
        am_resp_json(resp, 200, out);
    else
        am_fail_resp(req, resp, &f);
    am_fail_cleanup(&f);
    json_decref(body);
}
