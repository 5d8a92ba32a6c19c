/* problem.c — the problem-type table and the AM_ERR mapping (problem.h). */
#include "problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One row per am_ptype, in enum order (the unit test checks the order, the
 * slugs' uniqueness and the statuses). Titles are per type; what tells
 * one case from another goes in the detail. */
static const am_problem am_problems[AM_P_COUNT] = {
    [AM_P_INTERNAL] = {"internal", 500, "Internal error"},
    [AM_P_BAD_JSON] = {"bad-json", 400, "Malformed JSON"},
    [AM_P_BAD_REQUEST] = {"bad-request", 400, "Bad request"},
    [AM_P_INVALID_UTF8] = {"invalid-utf8", 422, "Invalid UTF-8"},
    [AM_P_UNKNOWN_FIELD] = {"unknown-field", 422, "Unknown field"},
    [AM_P_INVALID_VALUE] = {"invalid-value", 422, "Invalid value"},
    [AM_P_MISSING_FIELD] = {"missing-field", 422, "Missing field"},
    [AM_P_NOT_FOUND] = {"not-found", 404, "Not found"},
    [AM_P_CONFLICT] = {"conflict", 409, "Conflict"},
    [AM_P_METHOD_NOT_ALLOWED] = {"method-not-allowed", 405, "Method not allowed"},
    [AM_P_UNSUPPORTED_MEDIA_TYPE] = {"unsupported-media-type", 415, "Unsupported media type"},
    [AM_P_PAYLOAD_TOO_LARGE] = {"payload-too-large", 413, "Payload too large"},
    [AM_P_UNAUTHORIZED] = {"unauthorized", 401, "Unauthorized"},
    [AM_P_FORBIDDEN] = {"forbidden", 403, "Forbidden"},
    [AM_P_FORBIDDEN_ORIGIN] = {"forbidden-origin", 403, "Cross-origin request refused"},
    [AM_P_FORBIDDEN_HOST] = {"forbidden-host", 403, "Host not allowed"},
    [AM_P_TOO_MANY_TOKENS] = {"too-many-tokens", 422, "Too many tokens"},
    [AM_P_TOO_MANY_TERM_OCCURRENCES] = {"too-many-term-occurrences", 422,
                                        "Too many term occurrences"},
    [AM_P_TOO_MANY_ITEMS] = {"too-many-items", 422, "Too many items"},
    [AM_P_MISDIRECTED_REQUEST] = {"misdirected-request", 421, "Misdirected request"},
    [AM_P_UNAVAILABLE] = {"unavailable", 503, "Service unavailable"},
    [AM_P_REQUEST_TIMEOUT] = {"request-timeout", 503, "Request abandoned"},
    [AM_P_INSUFFICIENT_STORAGE] = {"insufficient-storage", 507, "Insufficient storage"},
    [AM_P_TOO_MANY_STREAMS] = {"too-many-streams", 429, "Too many event streams"},
    [AM_P_NOT_IMPLEMENTED] = {"not-implemented", 501, "Not implemented"},
};

const am_problem *am_problem_get(am_ptype t)
{
    if ((int)t < 0 || t >= AM_P_COUNT || !am_problems[t].slug)
        return &am_problems[AM_P_INTERNAL];
    return &am_problems[t];
}

am_ptype am_problem_of_err(int rc)
{
    switch (rc) {
    case AM_ERR_NOTFOUND: return AM_P_NOT_FOUND;
    case AM_ERR_CONFLICT: return AM_P_CONFLICT;
    case AM_ERR_FULL: return AM_P_INSUFFICIENT_STORAGE;
    case AM_ERR_CANCELLED: return AM_P_REQUEST_TIMEOUT;
    case AM_ERR_UNAVAILABLE: return AM_P_UNAVAILABLE;
    case AM_ERR_UTF8:
    case AM_ERR_NUL: return AM_P_INVALID_UTF8;
    case AM_ERR_INVALID:
    case AM_ERR_PARSE: return AM_P_INVALID_VALUE;
    case AM_ERR_RANGE: return AM_P_PAYLOAD_TOO_LARGE;
    default: /* AM_OK (no error to map), NOMEM, IO, INTERNAL, unknown */ return AM_P_INTERNAL;
    }
}

am_ptype am_problem_of_input(int rc)
{
    am_ptype t = am_problem_of_err(rc);
    return t == AM_P_PAYLOAD_TOO_LARGE || t == AM_P_INVALID_UTF8 ? t : AM_P_INVALID_VALUE;
}

am_ptype am_problem_of_store(int rc)
{
    am_ptype t = am_problem_of_err(rc);
    return t == AM_P_NOT_FOUND || t == AM_P_CONFLICT || t == AM_P_INSUFFICIENT_STORAGE ||
                   t == AM_P_UNAVAILABLE
               ? t
               : AM_P_INTERNAL;
}

json_t *am_problem_json(am_ptype t, const char *detail, const char *instance)
{
    const am_problem *p = am_problem_get(t);
    char type[160];
    snprintf(type, sizeof type, "https://adaptmon.dev/problems/%s", p->slug);
    json_t *j = json_object();
    json_object_set_new(j, "type", json_string(type));
    json_object_set_new(j, "title", json_string(p->title));
    json_object_set_new(j, "status", json_integer(p->status));
    /* json_string refuses invalid UTF-8 (a detail quoting raw input) */
    json_t *d = json_string(detail ? detail : "");
    json_object_set_new(j, "detail", d ? d : json_string("(detail not valid UTF-8)"));
    if (instance) {
        json_t *inst = json_string(instance);
        if (inst)
            json_object_set_new(j, "instance", inst);
    }
    return j;
}

void am_fail_init(am_fail *f)
{
    memset(f, 0, sizeof *f);
    am_buf_init(&f->detail);
}

void am_fail_cleanup(am_fail *f)
{
    am_buf_cleanup(&f->detail);
}

int am_failp(am_fail *f, am_ptype t, const char *field, const char *fmt, ...)
{
    f->failed = 1;
    f->type = t;
    f->field = field;
    am_buf_reset(&f->detail);
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    am_buf_appends(&f->detail, tmp);
    return AM_ERR_INVALID;
}

int am_fail_status(const am_fail *f)
{
    return f->failed ? am_problem_get(f->type)->status : 0;
}

json_t *am_fail_json(const am_fail *f, const char *instance)
{
    json_t *p = am_problem_json(f->type, am_buf_str(&f->detail), instance);
    if (f->field)
        json_object_set_new(p, "field", json_string(f->field));
    return p;
}
