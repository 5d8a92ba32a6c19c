/* api_segments.c — confirmed segments (one, or a batch: a JSON array or
 * NDJSON), their replacement and deletion, the timeline and the check. */
#include "api.h"

#include "ingest.h"
#include "json.h"
#include "peer.h"

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
    am_peer peer; /* a replay of a long session stops when its client has gone */
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    if (rc == AM_OK) {
        rc = replace ? am_ingest_replace(req->srv, req->params[0], &sr, &result, &status, &peer, &f)
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

/* The 200 answer of a batch (see postSegment in openapi.yaml), written as
 * text while the batch is posted: one item per id, with its status and
 * result or problem, or status null when not attempted. The stored results
 * are compact JSON already and are copied as they are, each freed once
 * copied, step by step — a tree of every result (what json_pack would
 * build) took several times the answer's size (issue 25 §5: 107 MB for a
 * 5,000-item batch), and holding every result until the end twice it. */
typedef struct am_batch_out {
    am_buf b;
    long long created, unchanged, failed; /* failed: the failed item's index, or -1 */
} am_batch_out;

static void am_batch_out_init(am_batch_out *o)
{
    am_buf_init(&o->b);
    am_buf_appends(&o->b, "{\"items\":[");
    o->created = o->unchanged = 0;
    o->failed = -1;
}

/* Appends items[from..to) (their ids in ids[]) to o, each item before
 * attempted with its outcome (its result freed once copied), the later
 * ones with status null. */
static void am_batch_out_items(am_batch_out *o, json_t **ids, am_batch_item *items, size_t from,
                               size_t to, size_t attempted)
{
    for (size_t i = from; i < to; i++) {
        am_batch_item *it = &items[i];
        am_buf_printf(&o->b, "%s{\"index\":%zu,\"id\":", i ? "," : "", i);
        am_batch_put_json(&o->b, ids[i]);
        if (i >= attempted) {
            am_buf_appends(&o->b, ",\"status\":null}");
            continue;
        }
        if (it->status == 200 || it->status == 201) {
            am_buf_printf(&o->b, ",\"status\":%d,\"result\":", it->status);
            am_buf_appends(&o->b, it->result ? it->result : "null");
            free(it->result);
            it->result = NULL;
            if (it->status == 201)
                o->created++;
            else
                o->unchanged++;
        } else {
            am_buf_printf(&o->b, ",\"status\":%d,\"problem\":", am_fail_status(&it->fail));
            json_t *pj = am_fail_json(&it->fail, NULL);
            am_batch_put_json(&o->b, pj);
            json_decref(pj);
            o->failed = (long long)i;
        }
        am_buf_appendc(&o->b, '}');
    }
}

/* Sizes o's buffer for n items once the first `written` of them are in it,
 * at their rate plus 1/8: the answer grows by one allocation, not by a
 * doubling series of copies. */
static void am_batch_out_reserve(am_batch_out *o, size_t written, size_t n)
{
    if (written > 0 && written < n)
        am_buf_reserve(&o->b, o->b.len + (o->b.len / written) * (n - written) * 9 / 8 + 256);
}

/* Ends o's answer (n items, attempted of them) and sends it. */
static void am_batch_out_send(am_req *req, am_resp *resp, am_batch_out *o, size_t n,
                              size_t attempted)
{
    am_buf_appends(&o->b, "],\"session\":");
    json_t *sj = json_string(req->params[0]);
    am_batch_put_json(&o->b, sj);
    json_decref(sj);
    am_buf_printf(&o->b, ",\"created\":%lld,\"unchanged\":%lld,\"failed\":", o->created,
                  o->unchanged);
    if (o->failed < 0)
        am_buf_appends(&o->b, "null");
    else
        am_buf_printf(&o->b, "%lld", o->failed);
    am_buf_printf(&o->b, ",\"not_attempted\":%zu}", n - attempted);
    am_resp_json_text(resp, 200, am_buf_detach(&o->b));
}

/* Items parsed and posted per step of a batch: one group-commit chunk
 * (AM_BATCH_CHUNK). The body stays text; a step's items are parsed into
 * JSON trees when the step comes and freed after it, so a batch's working
 * memory is one chunk's, not the whole body's as trees (issue 25 §5: a tree
 * of a 20,000-item body took +55 MB). */
#define AM_BATCH_STEP AM_BATCH_CHUNK

/* An item's bytes in the body. */
typedef struct am_batch_span {
    size_t off, len;
} am_batch_span;

/* A batch being posted: its n items, each a span of the body parsed when
 * its step comes (spans), or the items of a body parsed whole (array). */
typedef struct am_batch_src {
    const char *body; /* borrowed, with spans */
    am_batch_span *spans; /* [n] owned, or NULL (vals given whole) */
    char **errs; /* [n] owned, NDJSON: why line i is not JSON, or NULL */
    json_t *
        *vals; /* [n] the items of the step posted; NULL when not loaded, released or not JSON */
    json_t *array; /* a body parsed whole, holding vals (borrowed), or NULL */
    json_t **ids; /* [n] each item's string id (owned references), NULL when none */
    size_t n;
    size_t flags; /* jansson's, for the items (with spans) */
} am_batch_src;

/* The flags of a whole body (am_req_json), for the items of an NDJSON
 * batch; an array's items are any value (a scalar item is refused by
 * am_batch_parse, as when the body was parsed whole). */
#define AM_BATCH_NDJSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)
#define AM_BATCH_ARRAY_FLAGS (AM_BATCH_NDJSON_FLAGS | JSON_DECODE_ANY)

/* Appends the item of src->body[off..off+len) to src, parsed with src's
 * flags and more (NULL when it is not JSON: *jerr says why), keeping its
 * string id; returns the parsed item, the caller's to free. */
static json_t *am_batch_add(am_batch_src *src, size_t *cap, size_t off, size_t len, size_t more,
                            json_error_t *jerr)
{
    if (src->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        src->spans = am_xrealloc(src->spans, *cap * sizeof *src->spans);
        src->ids = am_xrealloc(src->ids, *cap * sizeof *src->ids);
        src->errs = am_xrealloc(src->errs, *cap * sizeof *src->errs);
    }
    json_t *v = json_loadb(src->body + off, len, src->flags | more, jerr);
    json_t *id = json_object_get(v, "id");
    src->spans[src->n] = (am_batch_span){off, len};
    src->ids[src->n] = json_is_string(id) ? json_incref(id) : NULL;
    src->errs[src->n] = NULL;
    src->n++;
    return v;
}

/* Frees src's storage and the items still held (after a failure). */
static void am_batch_src_cleanup(am_batch_src *src)
{
    for (size_t i = 0; i < src->n; i++) {
        if (!src->array && src->vals)
            json_decref(src->vals[i]);
        if (src->errs)
            free(src->errs[i]);
        if (src->ids)
            json_decref(src->ids[i]);
    }
    free(src->spans);
    free(src->errs);
    free(src->vals);
    free(src->ids);
    json_decref(src->array);
    memset(src, 0, sizeof *src);
}

/* Whether c is JSON whitespace (RFC 8259 §2). */
static int am_json_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The deepest nesting of arrays and objects in the well-formed JSON text
 * t[0..len) (brackets inside strings do not count). */
static size_t am_json_depth(const char *t, size_t len)
{
    size_t depth = 0, deepest = 0;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if (in_str) {
            if (c == '\\')
                i++; /* the escaped character */
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return deepest;
}

/* The items of a JSON array body (borrowed into src->body; src zeroed by
 * the caller), without a tree of the body: each item is parsed by jansson on
 * its own, with the flags of a whole body, and freed at once, its span and
 * id kept; the brackets, commas and whitespace between items are checked
 * here. So an item is refused exactly when the whole body would be. Returns
 * AM_OK, or AM_ERR_PARSE when the body is not one well-formed array, or
 * holds an item that only the whole body's depth limit refuses (the caller
 * then parses the body whole for the problem with its line and column, as
 * before this scan). */
static int am_batch_scan_array(const char *body, size_t len, am_batch_src *src)
{
    size_t cap = 0, k = 0;
    src->body = body;
    src->flags = AM_BATCH_ARRAY_FLAGS;
    while (k < len && am_json_ws(body[k]))
        k++;
    if (k == len || body[k] != '[')
        return AM_ERR_PARSE;
    k++;
    while (k < len && am_json_ws(body[k]))
        k++;
    if (k == len) /* "[" alone */
        return AM_ERR_PARSE;
    int more = body[k] != ']'; /* else the empty array */
    if (!more)
        k++;
    while (more) {
        json_error_t jerr;
        /* the item alone: jansson stops after it (position: its end) */
        json_t *v = am_batch_add(src, &cap, k, len - k, JSON_DISABLE_EOF_CHECK, &jerr);
        json_decref(v);
        if (!v)
            return AM_ERR_PARSE;
        size_t end = k + (size_t)jerr.position;
        src->spans[src->n - 1].len = end - k;
        /* the body's own array is one level more (JSON_PARSER_MAX_DEPTH) */
        if (am_json_depth(body + k, end - k) + 1 > JSON_PARSER_MAX_DEPTH)
            return AM_ERR_PARSE;
        k = end;
        while (k < len && am_json_ws(body[k]))
            k++;
        if (k == len || (body[k] != ',' && body[k] != ']'))
            return AM_ERR_PARSE;
        more = body[k] == ',';
        k++; /* the comma, or the closing bracket */
    }
    while (k < len && am_json_ws(body[k]))
        k++;
    return k == len ? AM_OK : AM_ERR_PARSE;
}

/* Parses items [from, to) of a span source into src->vals (a line that is
 * not JSON stays NULL: am_batch_parse answers it). */
static void am_batch_load(am_batch_src *src, size_t from, size_t to)
{
    for (size_t k = from; src->spans && k < to; k++) {
        if (src->errs && src->errs[k])
            continue;
        json_error_t jerr; /* parsed once already (its id), so it parses */
        src->vals[k] =
            json_loadb(src->body + src->spans[k].off, src->spans[k].len, src->flags, &jerr);
    }
}

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

/* A batch POST (a JSON array or NDJSON body), src's items: parsed and
 * posted in steps of AM_BATCH_STEP, in order, up to the first invalid item
 * or the first one that fails to post (am_ingest_batch, which stops at its
 * own first failure); each step's items are released once posted, their
 * ids kept for the answer, which lists every item: status and result or
 * problem, or status null when not attempted (after the failed one). */
static void am_batch(am_req *req, am_resp *resp, am_batch_src *src)
{
    const am_srv_config *cfg = &req->srv->cfg;
    size_t n = src->n;
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
    for (size_t i = 0; i < n; i++)
        am_fail_init(&items[i].fail);
    am_seg_req *reqs = am_xcalloc(AM_BATCH_STEP, sizeof *reqs);
    am_batch_out out;
    am_batch_out_init(&out);
    size_t attempted = 0;
    for (size_t at = 0; at < n;) {
        size_t to = n - at < AM_BATCH_STEP ? n : at + AM_BATCH_STEP;
        am_batch_load(src, at, to);
        size_t valid = am_batch_parse(req, src, at, to, reqs, items);
        size_t done =
            valid ? am_ingest_batch(req->srv, req->params[0], reqs, valid, items + at) : 0;
        for (size_t k = 0; k < valid; k++)
            am_seg_req_cleanup(&reqs[k]);
        memset(reqs, 0, valid * sizeof *reqs);
        attempted = at + done;
        int st = done ? items[at + done - 1].status : 0;
        int stop = done < valid || (done > 0 && st != 200 && st != 201);
        if (!stop && valid < to - at) { /* the invalid item ends the batch */
            items[at + valid].status = am_fail_status(&items[at + valid].fail);
            attempted = at + valid + 1;
            stop = 1;
        }
        /* the items written before their trees go: a problem's field may
         * be a key of its item (an unknown field) */
        am_batch_out_items(&out, src->ids, items, at, stop ? attempted : to, attempted);
        for (size_t k = at; k < to; k++)
            am_batch_release(src, k);
        if (stop) /* an item failed: the batch stops there */
            break;
        if (at == 0)
            am_batch_out_reserve(&out, to, n);
        at = to;
    }
    if (attempted == 1 && items[0].status == 404 && !items[0].fail.field) {
        am_api_fail(req, resp, &items[0].fail); /* no such session: nothing was done */
        am_buf_cleanup(&out.b);
    } else {
        am_batch_out_items(&out, src->ids, items, attempted, n, attempted);
        am_batch_out_send(req, resp, &out, n, attempted);
    }
    for (size_t i = 0; i < n; i++) {
        free(items[i].result);
        am_fail_cleanup(&items[i].fail);
    }
    free(items);
    free(reqs);
}

/* An NDJSON batch: one segment object per line (blank lines skipped); each
 * line is parsed once for its id and whether it is JSON, then again when
 * its step is posted (am_batch_load). */
static void am_batch_ndjson(am_req *req, am_resp *resp)
{
    size_t off = 0;
    if (am_text_validate(req->body, req->body_len, &off) != AM_OK) {
        am_resp_problem(resp, req, AM_P_INVALID_UTF8,
                        "the body is not valid UTF-8 or holds a NUL byte (offset %zu)", off);
        return;
    }
    am_batch_src src;
    memset(&src, 0, sizeof src);
    src.body = req->body;
    src.flags = AM_BATCH_NDJSON_FLAGS;
    size_t cap = 0;
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
            json_error_t jerr;
            json_t *v = am_batch_add(&src, &cap, (size_t)(p - req->body), len, 0, &jerr);
            if (!v) {
                char msg[300];
                snprintf(msg, sizeof msg, "line %zu, column %d: %s", line, jerr.column, jerr.text);
                src.errs[src.n - 1] = am_xstrdup(msg);
            }
            json_decref(v);
        }
        p = nl ? nl + 1 : end;
    }
    src.vals = am_xcalloc(src.n ? src.n : 1, sizeof *src.vals);
    am_batch(req, resp, &src);
    am_batch_src_cleanup(&src);
}

/* A JSON array batch: its items found and checked by am_batch_scan_array
 * and parsed one step at a time; a body that is not one well-formed array
 * is parsed whole as before, for the same problem (line, column) — and
 * should jansson accept what the scan refused, posted from that tree. */
static void am_batch_array(am_req *req, am_resp *resp)
{
    if (am_req_json_ready(req, resp) != AM_OK)
        return;
    am_batch_src src;
    memset(&src, 0, sizeof src);
    if (am_batch_scan_array(req->body, req->body_len, &src) != AM_OK) {
        am_batch_src_cleanup(&src);
        json_t *body;
        if (am_req_json_any(req, resp, &body) != AM_OK)
            return;
        src.array = body;
        src.n = json_array_size(body);
        src.vals = am_xcalloc(src.n ? src.n : 1, sizeof *src.vals);
        src.ids = am_xcalloc(src.n ? src.n : 1, sizeof *src.ids);
        for (size_t i = 0; i < src.n; i++) {
            src.vals[i] = json_array_get(body, i);
            json_t *id = json_object_get(src.vals[i], "id");
            src.ids[i] = json_is_string(id) ? json_incref(id) : NULL;
        }
    } else {
        src.vals = am_xcalloc(src.n ? src.n : 1, sizeof *src.vals);
    }
    am_batch(req, resp, &src);
    am_batch_src_cleanup(&src);
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
    am_batch_array(req, resp);
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
    am_peer peer; /* the replay after a long session's early segment: as a PUT's */
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    if (am_ingest_delete(req->srv, req->params[0], req->params[1], &status, &peer, &f) == AM_OK)
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
    am_peer peer; /* a long check stops when its client has gone */
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    if (am_ingest_check(req->srv, req->params[0], json_string_value(src), sys, hyps, nsys, &peer,
                        &out, &f) == AM_OK)
        am_resp_json(resp, 200, out);
    else
        am_api_fail(req, resp, &f);
    am_fail_cleanup(&f);
    json_decref(body);
}
