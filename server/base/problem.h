/*
 * problem.h — the one list of the problem types HTTP answers carry (RFC
 * 9457): each type's slug (the stable https://adaptmon.dev/problems/<slug>
 * a client keys on, listed in openapi.yaml's Problem.type), its HTTP status
 * and its title, in one table (problem.c); the one mapping from the
 * AM_ERR_* codes of core/ and the store to a type; and am_fail, the one
 * carrier of a failure from the live layer (ingest, rescore) to the
 * handlers (type, detail, offending field, Retry-After). It lives in base/
 * so that live/ may use it; nothing here does I/O.
 */
#ifndef AM_PROBLEM_H
#define AM_PROBLEM_H

#include "am.h"

#include <jansson.h>

/* Kinds of error a client sees. AM_P_INTERNAL is 0, so that a zeroed
 * am_fail that was never filled answers 500. */
typedef enum am_ptype {
    AM_P_INTERNAL = 0, /* 500: a broken invariant or a storage failure */
    AM_P_BAD_JSON,
    AM_P_BAD_REQUEST,
    AM_P_INVALID_UTF8,
    AM_P_UNKNOWN_FIELD,
    AM_P_INVALID_VALUE,
    AM_P_MISSING_FIELD,
    AM_P_NOT_FOUND,
    AM_P_CONFLICT,
    AM_P_METHOD_NOT_ALLOWED,
    AM_P_UNSUPPORTED_MEDIA_TYPE,
    AM_P_PAYLOAD_TOO_LARGE,
    AM_P_UNAUTHORIZED,
    AM_P_FORBIDDEN,
    AM_P_FORBIDDEN_ORIGIN,
    AM_P_FORBIDDEN_HOST,
    AM_P_TOO_MANY_TOKENS,
    AM_P_TOO_MANY_TERM_OCCURRENCES,
    AM_P_TOO_MANY_ITEMS,
    AM_P_MISDIRECTED_REQUEST,
    AM_P_UNAVAILABLE, /* 503: busy database, a session that kept changing, stopping */
    AM_P_REQUEST_TIMEOUT, /* 503: abandoned by its time budget or at shutdown */
    AM_P_INSUFFICIENT_STORAGE, /* 507: disk or max-db-size full */
    AM_P_TOO_MANY_STREAMS, /* 429: a client's or a session's event-stream cap */
    AM_P_NOT_IMPLEMENTED, /* 501: a transfer coding other than chunked */
    AM_P_COUNT
} am_ptype;

/* One row of the table (static storage, borrowed). */
typedef struct am_problem {
    const char *slug;
    int status;
    const char *title;
} am_problem;

/* The row of type t; a t outside the enum gets the AM_P_INTERNAL row.
 * Never NULL. */
const am_problem *am_problem_get(am_ptype t);
/* The type of an AM_ERR_* code for the generic cases (total: every code,
 * AM_OK and unknown ones give AM_P_INTERNAL): NOTFOUND not-found, CONFLICT
 * conflict, FULL insufficient-storage, CANCELLED request-timeout, UTF8 and
 * NUL invalid-utf8, INVALID and PARSE invalid-value, RANGE
 * payload-too-large (an uploaded body over a limit), NOMEM, IO and
 * INTERNAL internal. */
am_ptype am_problem_of_err(int rc);
/* am_problem_of_err restricted to what a rejected request body can be
 * (total): payload-too-large for AM_ERR_RANGE (a limit), invalid-utf8 for
 * AM_ERR_UTF8 / AM_ERR_NUL, invalid-value for every other code. */
am_ptype am_problem_of_input(int rc);
/* am_problem_of_err restricted to what a failed store call can tell a
 * client (total): not-found (the session or row is gone), conflict,
 * insufficient-storage; internal for every other code. */
am_ptype am_problem_of_store(int rc);
/* The detail's end for AM_P_INSUFFICIENT_STORAGE (after "<what>: "). */
#define AM_PROBLEM_FULL_NOTE                                                                       \
    "the database is full (disk full or max-db-size reached); nothing was stored, retry once "     \
    "space is freed"
/* The problem+json object (new reference): type URI, title and status from
 * the table, detail (replaced by a note when not valid UTF-8), and
 * instance when not NULL. */
json_t *am_problem_json(am_ptype t, const char *detail, const char *instance);

/* What went wrong with a request, carried from ingest/rescore to the
 * handler that answers it (the one carrier of error detail: handlers that
 * fail by themselves answer with am_resp_problem directly). failed is 0
 * until am_failp fills it. */
typedef struct am_fail {
    int failed;
    am_ptype type;
    am_buf detail;
    const char *field; /* offending field or NULL (borrowed, static) */
    int retry_after; /* seconds for a Retry-After header, 0 = none */
} am_fail;
void am_fail_init(am_fail *f);
void am_fail_cleanup(am_fail *f);
/* Fills *f: type, field (borrowed, static, or NULL) and the detail (the
 * previous one replaced; at most 511 bytes). retry_after is left alone.
 * Returns AM_ERR_INVALID (call sites return it as the failure). */
int am_failp(am_fail *f, am_ptype t, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The HTTP status of *f: 0 when nothing failed yet. */
int am_fail_status(const am_fail *f);
/* The failure as a problem object (new reference; "field" added when set;
 * instance as for am_problem_json). */
json_t *am_fail_json(const am_fail *f, const char *instance);

#endif
