/* api_common.c — helpers shared by the handlers (see api.h). */
#include "api.h"

#include "ingest.h"
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int am_api_load_session(am_req *req, am_resp *resp, am_store_session *row)
{
    memset(row, 0, sizeof *row);
    int rc = am_store_session_get(req->srv->store, req->params[0], row);
    if (rc == AM_ERR_NOTFOUND)
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no session '%s'", req->params[0]);
    else if (rc != AM_OK)
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading the session failed");
    return rc;
}

void am_api_store_fail(am_req *req, am_resp *resp, int rc, const char *what)
{
    if (rc == AM_ERR_FULL) {
        am_resp_problem(resp, req, AM_P_INSUFFICIENT_STORAGE, "%s: " AM_PROBLEM_FULL_NOTE, what);
    } else if (rc == AM_ERR_UNAVAILABLE) {
        /* PostgreSQL unreachable, or a commit whose outcome is unknown: a
         * retry (a POST with the same id) gets the stored result */
        am_resp_problem(resp, req, AM_P_UNAVAILABLE,
                        "%s: the database is unavailable or the commit's outcome is unknown; "
                        "retry",
                        what);
        am_resp_header(resp, "Retry-After", "1");
    } else {
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: %s", what);
    }
}

void am_api_gone_or_500(am_req *req, am_resp *resp, int rc, const char *what)
{
    am_ptype t = am_problem_of_store(rc);
    if (t == AM_P_NOT_FOUND)
        am_resp_problem(resp, req, t, "session '%s' was deleted while the request ran",
                        req->params[0]);
    else if (t == AM_P_CONFLICT)
        am_resp_problem(resp, req, t, "session '%s' changed while the request ran; retry",
                        req->params[0]);
    else
        am_api_store_fail(req, resp, rc, what); /* 507 on a full disk, else 500 */
}

int am_api_query_int(am_req *req, am_resp *resp, const char *key, int64_t lo, int64_t hi,
                     int64_t *out)
{
    const char *v = am_req_query(req, key);
    if (!v)
        return AM_OK;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi) {
        am_resp_problem(resp, req, AM_P_BAD_REQUEST, "'%s' must be an integer from %lld to %lld",
                        key, (long long)lo, (long long)hi);
        return AM_ERR_INVALID;
    }
    *out = x;
    return AM_OK;
}

char *am_api_gloss_json(const am_gloss *g)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        json_t *t = json_array();
        for (size_t k = 0; k < e->n_targets; k++)
            json_array_append_new(t, json_string(e->targets[k]));
        json_t *o = json_pack("{sssosbsb}", "source", e->source, "targets", t, "case_sensitive",
                              e->case_sensitive, "forbidden", e->forbidden);
        if (e->id)
            json_object_set_new(o, "id", json_string(e->id));
        json_array_append_new(arr, o);
    }
    char *s = am_json_dump(arr);
    json_decref(arr);
    return s;
}

/* Does the If-None-Match header value inm list etag (or "*")? Weak
 * comparison (RFC 9110 §13.1.2): a W/ prefix is ignored. */
int am_api_etag_matches(const char *inm, const char *etag)
{
    if (!inm)
        return 0;
    size_t n = strlen(etag);
    const char *p = inm;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == '*')
            return 1;
        if (!strncmp(p, "W/", 2))
            p += 2;
        if (!strncmp(p, etag, n) && (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
            return 1;
        while (*p && *p != ',')
            p++;
    }
    return 0;
}

void am_api_body_problem(am_req *req, am_resp *resp, int rc, const char *msg, size_t line)
{
    am_resp_problem(resp, req, am_problem_of_input(rc), "%s", msg && *msg ? msg : am_strerror(rc));
    if (line)
        am_resp_problem_set(resp, "line", json_integer((json_int_t)line));
}

void am_api_fail(am_req *req, am_resp *resp, const am_fail *f)
{
    am_resp_problem(resp, req, f->type, "%s", am_buf_str(&f->detail));
    if (f->field)
        am_resp_problem_set(resp, "field", json_string(f->field));
    if (f->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", f->retry_after);
        am_resp_header(resp, "Retry-After", v);
    }
}

int am_api_acquire(am_req *req, am_resp *resp, am_sess **out)
{
    am_fail f;
    am_fail_init(&f);
    int rc = am_ingest_acquire(req->srv, req->params[0], out, &f);
    if (rc != AM_OK)
        am_api_fail(req, resp, &f);
    am_fail_cleanup(&f);
    return rc;
}
