/* api_segments.c — confirmed segments (one, or a batch: a JSON array or
 * NDJSON), their replacement and deletion, the timeline and the check. */
#include "api.h"

#include "ingest.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

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
        am_api_fail(req, resp, &f);
    }
    am_seg_req_cleanup(&sr);
    am_fail_cleanup(&f);
    json_decref(body);
}

/* Appends v (borrowed) as compact JSON text, "null" for NULL. */
static void am_batch_put_json(am_buf *b, const json_t *v)
{
    char *t = v ? am_json_dumps(v, 0) : NULL;
    am_buf_appends(b, t ? t : "null");
    free(t);
}

/* The 200 answer of a batch (see postSegment in openapi.yaml): one item per
 * id in ids (NULL: the item had no string id), with its status and result or problem, or status
 * null when not attempted. Written as text: the stored results are compact JSON already and are
 * copied as they are, each freed once copied — a tree of every result (what json_pack would build)
 * took several times the answer's size (issue 25 §5: 107 MB for a 5,000-item batch). */
static void am_batch_answer(am_req *req, am_resp *resp, json_t **ids, am_batch_item *items,
                            size_t n, size_t attempted)
{
    am_buf b;
    am_buf_init(&b);
    long long created = 0, unchanged = 0, failed = -1;
    size_t need = 256;
    for (size_t i = 0; i < n; i++)
        need += 128 + (items[i].result ? strlen(items[i].result) : 0);
    am_buf_reserve(&b, need); /* one allocation, not a doubling series of copies */
    am_buf_appends(&b, "{\"items\":[");
    for (size_t i = 0; i < n; i++) {
        am_batch_item *it = &items[i];
        am_buf_printf(&b, "%s{\"index\":%zu,\"id\":", i ? "," : "", i);
        am_batch_put_json(&b, ids[i]);
        if (i >= attempted) {
            am_buf_appends(&b, ",\"status\":null}");
            continue;
        }
        if (it->status == 200 || it->status == 201) {
            am_buf_printf(&b, ",\"status\":%d,\"result\":", it->status);
            am_buf_appends(&b, it->result ? it->result : "null");
            free(it->result);
            it->result = NULL;
            if (it->status == 201)
                created++;
            else
                unchanged++;
        } else {
            am_buf_printf(&b, ",\"status\":%d,\"problem\":", am_fail_status(&it->fail));
            json_t *pj = am_fail_json(&it->fail, NULL);
            am_batch_put_json(&b, pj);
            json_decref(pj);
            failed = (long long)i;
        }
        am_buf_appendc(&b, '}');
    }
    am_buf_appends(&b, "],\"session\":");
    json_t *sj = json_string(req->params[0]);
    am_batch_put_json(&b, sj);
    json_decref(sj);
    am_buf_printf(&b, ",\"created\":%lld,\"unchanged\":%lld,\"failed\":", created, unchanged);
    if (failed < 0)
        am_buf_appends(&b, "null");
    else
        am_buf_printf(&b, "%lld", failed);
    am_buf_printf(&b, ",\"not_attempted\":%zu}", n - attempted);
    am_resp_json_text(resp, 200, am_buf_detach(&b));
}

/* Items parsed and posted per step of a batch: their parsed requests and
 * their JSON trees are freed after each step, so a batch's working memory
 * is about one step's, not the whole body's as trees (issue 25 §5). */
#define AM_BATCH_STEP 1000

/* A batch being posted: the items (JSON values) and how to let go of one. */
typedef struct am_batch_src {
    json_t **vals; /* the items; NULL once released (or a line that is not JSON) */
    char **errs; /* NDJSON: why vals[i] is NULL, or NULL */
    json_t *array; /* a JSON array body holding vals (borrowed), or NULL (vals owned) */
} am_batch_src;

static void am_batch_release(am_batch_src *src, size_t i)
{
    if (src->array)
        json_array_set_new(src->array, i, json_null());
    else
        json_decref(src->vals[i]);
    src->vals[i] = NULL;
}

/* Parses items [from, to) into reqs up to the first invalid one (its
 * problem in items[]). Returns how many parsed. */
static size_t am_batch_parse(am_req *req, am_batch_src *src, size_t from, size_t to,
                             am_seg_req *reqs, am_batch_item *items)
{
    const am_srv_config *cfg = &req->srv->cfg;
    size_t k = from;
    for (; k < to; k++) {
        am_fail *f = &items[k].fail;
        if (!src->vals[k]) {
            am_failp(f, AM_P_BAD_JSON, NULL, "%s",
                     src->errs && src->errs[k] ? src->errs[k] : "not JSON");
            break;
        }
        if (!json_is_object(src->vals[k])) {
            am_failp(f, AM_P_INVALID_VALUE, NULL, "a batch item must be a JSON object (a segment)");
            break;
        }
        if (am_seg_req_parse(src->vals[k], NULL, cfg, &reqs[k - from], f) != AM_OK)
            break;
    }
    return k - from;
}

/* A batch POST (a JSON array or NDJSON body), src's n items: parsed and
 * posted in steps of AM_BATCH_STEP, in order, up to the first invalid item
 * or the first one that fails to post (am_ingest_batch, which stops at its
 * own first failure); each step's items are released once posted, their
 * ids kept for the answer, which lists every item: status and result or
 * problem, or status null when not attempted (after the failed one). */
static void am_batch(am_req *req, am_resp *resp, am_batch_src *src, size_t n)
{
    const am_srv_config *cfg = &req->srv->cfg;
    if (n == 0) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "the batch is empty: give at least one segment");
        return;
    }
    if (n > (size_t)cfg->max_batch) {
        am_resp_problem(resp, req, AM_P_TOO_MANY_ITEMS,
                        "the batch has %zu segments; the limit is %d (max-batch)", n,
                        cfg->max_batch);
        return;
    }
    am_batch_item *items = am_xcalloc(n, sizeof *items);
    json_t **ids = am_xcalloc(n, sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        am_fail_init(&items[i].fail);
        json_t *id = json_object_get(src->vals[i], "id");
        ids[i] = json_is_string(id) ? json_incref(id) : NULL;
    }
    am_seg_req *reqs = am_xcalloc(AM_BATCH_STEP, sizeof *reqs);
    size_t attempted = 0;
    for (size_t at = 0; at < n;) {
        size_t to = n - at < AM_BATCH_STEP ? n : at + AM_BATCH_STEP;
        size_t valid = am_batch_parse(req, src, at, to, reqs, items);
        size_t done =
            valid ? am_ingest_batch(req->srv, req->params[0], reqs, valid, items + at) : 0;
        for (size_t k = 0; k < valid; k++)
            am_seg_req_cleanup(&reqs[k]);
        memset(reqs, 0, valid * sizeof *reqs);
        for (size_t k = at; k < to; k++)
            am_batch_release(src, k);
        attempted = at + done;
        int st = done ? items[at + done - 1].status : 0;
        if (done < valid || (done > 0 && st != 200 && st != 201))
            break; /* an item failed to post: the batch stops there */
        if (valid < to - at) { /* the invalid item ends the batch */
            items[at + valid].status = am_fail_status(&items[at + valid].fail);
            attempted = at + valid + 1;
            break;
        }
        at = to;
    }
    if (attempted == 1 && items[0].status == 404 && !items[0].fail.field)
        am_api_fail(req, resp, &items[0].fail); /* no such session: nothing was done */
    else
        am_batch_answer(req, resp, ids, items, n, attempted);
    for (size_t i = 0; i < n; i++) {
        free(items[i].result);
        am_fail_cleanup(&items[i].fail);
        json_decref(ids[i]);
    }
    free(ids);
    free(items);
    free(reqs);
}

/* An NDJSON batch: one segment object per line (blank lines skipped). */
static void am_batch_ndjson(am_req *req, am_resp *resp)
{
    size_t off = 0;
    if (am_text_validate(req->body, req->body_len, &off) != AM_OK) {
        am_resp_problem(resp, req, AM_P_INVALID_UTF8,
                        "the body is not valid UTF-8 or holds a NUL byte (offset %zu)", off);
        return;
    }
    size_t n = 0, cap = 0;
    json_t **vals = NULL;
    char **errs = NULL;
    const char *p = req->body, *end = req->body + req->body_len;
    if (end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a byte order mark some editors write */
    for (size_t line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t len = (size_t)(e - p);
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
            k++;
        if (k < len) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                vals = am_xrealloc(vals, cap * sizeof *vals);
                errs = am_xrealloc(errs, cap * sizeof *errs);
            }
            json_error_t jerr;
            vals[n] = json_loadb(p, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
            errs[n] = NULL;
            if (!vals[n]) {
                char msg[300];
                snprintf(msg, sizeof msg, "line %zu, column %d: %s", line, jerr.column, jerr.text);
                errs[n] = am_xstrdup(msg);
            }
            n++;
        }
        p = nl ? nl + 1 : end;
    }
    am_batch_src src = {vals, errs, NULL};
    am_batch(req, resp, &src, n);
    for (size_t i = 0; i < n; i++) {
        json_decref(vals[i]); /* those not released (after a failure) */
        free(errs[i]);
    }
    free(vals);
    free(errs);
}

void am_api_segment_post(am_req *req, am_resp *resp)
{
    if (req->content_type && !strcmp(req->content_type, "application/x-ndjson")) {
        am_batch_ndjson(req, resp);
        return;
    }
    size_t k = 0;
    while (k < req->body_len && (req->body[k] == ' ' || req->body[k] == '\t' ||
                                 req->body[k] == '\r' || req->body[k] == '\n'))
        k++;
    if (k == req->body_len || req->body[k] != '[') {
        am_segment_write(req, resp, 0);
        return;
    }
    json_t *body;
    if (am_req_json_any(req, resp, &body) != AM_OK)
        return;
    size_t n = json_array_size(body);
    json_t **vals = am_xcalloc(n ? n : 1, sizeof *vals);
    for (size_t i = 0; i < n; i++)
        vals[i] = json_array_get(body, i);
    am_batch_src src = {vals, NULL, body};
    am_batch(req, resp, &src, n);
    free(vals);
    json_decref(body);
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
        am_api_fail(req, resp, &f);
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
            am_resp_problem(resp, req, AM_P_NOT_FOUND, "no segment '%s' in '%s'", req->params[1],
                            req->params[0]);
            am_store_session_clear(&row);
        }
        return;
    }
    if (rc != AM_OK) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading the segment failed");
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

/* Orders names[0..n) by strcmp (insertion sort; n is small). */
static void sort_names(const char **names, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
}

/* The systems and texts of a check body (borrowed from body) into
 * sys/hyps, *n of them (0 without either): `hypothesis` alone (system
 * "default", as in a segment) or `hypotheses` {system: text} in name
 * order. Answers the 422 and returns AM_ERR_INVALID on a bad body. */
static int check_systems(am_req *req, am_resp *resp, json_t *body, const char **sys,
                         const char **hyps, size_t *n)
{
    json_t *hyp = json_object_get(body, "hypothesis"), *hs = json_object_get(body, "hypotheses");
    const am_srv_config *cfg = &req->srv->cfg;
    size_t max = (size_t)cfg->max_systems < AM_SCORE_MAX_SYSTEMS ? (size_t)cfg->max_systems
                                                                 : AM_SCORE_MAX_SYSTEMS;
    *n = 0;
    if (hyp && hs) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "give either 'hypothesis' or 'hypotheses', not both");
        return AM_ERR_INVALID;
    }
    if (hyp) {
        if (!json_is_string(hyp))
            goto bad;
        sys[0] = "default";
        hyps[(*n)++] = json_string_value(hyp);
        return AM_OK;
    }
    if (!hs)
        return AM_OK;
    if (!json_is_object(hs) || json_object_size(hs) == 0 || json_object_size(hs) > max) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "'hypotheses' must be an object {system: text} of 1 to %zu systems", max);
        return AM_ERR_INVALID;
    }
    const char *key;
    json_t *v;
    json_object_foreach(hs, key, v)
    {
        if (!am_http_valid_id(key)) {
            am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                            "system names must match [A-Za-z0-9._-]{1,128}");
            return AM_ERR_INVALID;
        }
        if (!json_is_string(v))
            goto bad;
        sys[(*n)++] = key;
    }
    sort_names(sys, *n);
    for (size_t i = 0; i < *n; i++)
        hyps[i] = json_string_value(json_object_get(hs, sys[i]));
    return AM_OK;
bad:
    am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                    "'hypothesis' is a string; 'hypotheses' maps systems to strings");
    return AM_ERR_INVALID;
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
        if (strcmp(key, "source") && strcmp(key, "hypothesis") && strcmp(key, "hypotheses")) {
            am_resp_problem(resp, req, AM_P_UNKNOWN_FIELD,
                            "unknown field '%.64s' (allowed: source, hypothesis, hypotheses)", key);
            json_decref(body);
            return;
        }
    }
    json_t *src = json_object_get(body, "source");
    if (!json_is_string(src)) {
        am_resp_problem(resp, req, src ? AM_P_INVALID_VALUE : AM_P_MISSING_FIELD,
                        "'source' (string) is required; 'hypothesis' is a string");
        json_decref(body);
        return;
    }
    const char *sys[AM_SCORE_MAX_SYSTEMS], *hyps[AM_SCORE_MAX_SYSTEMS];
    size_t nsys = 0;
    if (check_systems(req, resp, body, sys, hyps, &nsys) != AM_OK) {
        json_decref(body);
        return;
    }
    int nul = strlen(json_string_value(src)) != json_string_length(src);
    json_t *hs = json_object_get(body, "hypotheses");
    for (size_t i = 0; i < nsys; i++) {
        json_t *h = hs ? json_object_get(hs, sys[i]) : json_object_get(body, "hypothesis");
        nul |= strlen(hyps[i]) != json_string_length(h);
    }
    if (nul) {
        am_resp_problem(resp, req, AM_P_INVALID_UTF8, "NUL characters in text");
        json_decref(body);
        return;
    }
    /* the same per-text and per-segment limits as a segment: the check
     * scores every text */
    const am_srv_config *cfg = &req->srv->cfg;
    size_t ns = am_toks_count_py(json_string_value(src)), total = ns;
    for (size_t i = 0; i <= nsys; i++) {
        size_t nh = i < nsys ? am_toks_count_py(hyps[i]) : 0;
        total += nh;
        if (ns > (size_t)cfg->max_tokens || nh > (size_t)cfg->max_tokens) {
            am_resp_problem(resp, req, AM_P_TOO_MANY_TOKENS, "'%s' has %zu tokens; the limit is %d",
                            ns > nh ? "source" : "hypothesis", ns > nh ? ns : nh, cfg->max_tokens);
            json_decref(body);
            return;
        }
    }
    if (nsys > 1 && total > (size_t)cfg->max_segment_tokens) {
        am_resp_problem(resp, req, AM_P_TOO_MANY_TOKENS,
                        "the check has %zu tokens in its source and hypotheses; the limit is %d "
                        "(max-segment-tokens)",
                        total, cfg->max_segment_tokens);
        json_decref(body);
        return;
    }
    am_fail f;
    am_fail_init(&f);
    json_t *out = NULL;
    if (am_ingest_check(req->srv, req->params[0], json_string_value(src), sys, hyps, nsys, &out,
                        &f) == AM_OK)
        am_resp_json(resp, 200, out);
    else
        am_api_fail(req, resp, &f);
    am_fail_cleanup(&f);
    json_decref(body);
}
