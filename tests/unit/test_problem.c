/* test_problem.c — the HTTP layer's problem-type table (server/problem.c):
 * one row per type, unique slugs, valid statuses, one title per type, the
 * slugs openapi.yaml documents, the AM_ERR mappings total, and am_fail. */
#include "testutil.h"

#include "problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every AM_ERR_* code and AM_OK, plus codes outside the enum. */
static const int codes[] = {
    AM_OK,           AM_ERR_NOMEM, AM_ERR_INVALID,   AM_ERR_UTF8, AM_ERR_NUL,
    AM_ERR_PARSE,    AM_ERR_RANGE, AM_ERR_NOTFOUND,  AM_ERR_IO,   AM_ERR_CONFLICT,
    AM_ERR_INTERNAL, AM_ERR_FULL,  AM_ERR_CANCELLED, -99,         42};

static void test_every_type_has_a_row(void **state)
{
    (void)state;
    for (int t = 0; t < AM_P_COUNT; t++) {
        const am_problem *p = am_problem_get((am_ptype)t);
        assert_non_null(p);
        assert_non_null(p->slug);
        assert_non_null(p->title);
        assert_true(p->title[0] >= 'A' && p->title[0] <= 'Z');
        /* a slug is lower-case letters, digits and dashes (it ends a URI) */
        assert_true(strlen(p->slug) > 0);
        assert_int_equal(strspn(p->slug, "abcdefghijklmnopqrstuvwxyz0123456789-"), strlen(p->slug));
        assert_true(p->status >= 400 && p->status <= 599);
        /* the row of t is t's, not the fallback (except for internal itself) */
        if (t != AM_P_INTERNAL)
            assert_ptr_not_equal(p, am_problem_get(AM_P_INTERNAL));
    }
    assert_string_equal(am_problem_get(AM_P_INTERNAL)->slug, "internal");
    assert_int_equal(am_problem_get(AM_P_INTERNAL)->status, 500);
    /* outside the enum: the internal row */
    assert_ptr_equal(am_problem_get(AM_P_COUNT), am_problem_get(AM_P_INTERNAL));
    assert_ptr_equal(am_problem_get((am_ptype)-1), am_problem_get(AM_P_INTERNAL));
}

static void test_slugs_and_titles_unique(void **state)
{
    (void)state;
    for (int a = 0; a < AM_P_COUNT; a++)
        for (int b = a + 1; b < AM_P_COUNT; b++) {
            const am_problem *pa = am_problem_get((am_ptype)a);
            const am_problem *pb = am_problem_get((am_ptype)b);
            assert_string_not_equal(pa->slug, pb->slug);
            assert_string_not_equal(pa->title, pb->title);
        }
}

/* Statuses clients depend on (the slug→status pairs answered before the
 * table existed). */
static void test_statuses_unchanged(void **state)
{
    (void)state;
    static const struct {
        am_ptype t;
        const char *slug;
        int status;
    } want[] = {
        {AM_P_BAD_JSON, "bad-json", 400},
        {AM_P_BAD_REQUEST, "bad-request", 400},
        {AM_P_UNAUTHORIZED, "unauthorized", 401},
        {AM_P_FORBIDDEN, "forbidden", 403},
        {AM_P_FORBIDDEN_ORIGIN, "forbidden-origin", 403},
        {AM_P_FORBIDDEN_HOST, "forbidden-host", 403},
        {AM_P_NOT_FOUND, "not-found", 404},
        {AM_P_METHOD_NOT_ALLOWED, "method-not-allowed", 405},
        {AM_P_CONFLICT, "conflict", 409},
        {AM_P_PAYLOAD_TOO_LARGE, "payload-too-large", 413},
        {AM_P_UNSUPPORTED_MEDIA_TYPE, "unsupported-media-type", 415},
        {AM_P_MISDIRECTED_REQUEST, "misdirected-request", 421},
        {AM_P_INVALID_UTF8, "invalid-utf8", 422},
        {AM_P_UNKNOWN_FIELD, "unknown-field", 422},
        {AM_P_INVALID_VALUE, "invalid-value", 422},
        {AM_P_MISSING_FIELD, "missing-field", 422},
        {AM_P_TOO_MANY_TOKENS, "too-many-tokens", 422},
        {AM_P_TOO_MANY_TERM_OCCURRENCES, "too-many-term-occurrences", 422},
        {AM_P_TOO_MANY_ITEMS, "too-many-items", 422},
        {AM_P_INTERNAL, "internal", 500},
        {AM_P_UNAVAILABLE, "unavailable", 503},
        {AM_P_REQUEST_TIMEOUT, "request-timeout", 503},
        {AM_P_INSUFFICIENT_STORAGE, "insufficient-storage", 507},
        {AM_P_TOO_MANY_STREAMS, "too-many-streams", 429},
        {AM_P_NOT_IMPLEMENTED, "not-implemented", 501},
    };
    assert_int_equal(sizeof want / sizeof want[0], AM_P_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(am_problem_get(want[i].t)->slug, want[i].slug);
        assert_int_equal(am_problem_get(want[i].t)->status, want[i].status);
    }
}

/* Every slug is in openapi.yaml's Problem.type list. */
static void test_slugs_documented(void **state)
{
    (void)state;
    char *path = tu_path("openapi.yaml");
    FILE *fp = fopen(path, "rb");
    free(path);
    assert_non_null(fp);
    static char doc[1 << 20];
    size_t n = fread(doc, 1, sizeof doc - 1, fp);
    fclose(fp);
    doc[n] = '\0';
    const char *at = strstr(doc, "https://adaptmon.dev/problems/ followed by");
    assert_non_null(at);
    const char *end = strstr(at, "title:");
    assert_non_null(end);
    for (int t = 0; t < AM_P_COUNT; t++) {
        const char *slug = am_problem_get((am_ptype)t)->slug;
        size_t len = strlen(slug);
        int found = 0;
        for (const char *p = at; p < end && (p = strstr(p, slug)) && p < end; p += len) {
            char before = p[-1], after = p[len];
            if ((before == ' ' || before == '\n') &&
                (after == ',' || after == '.' || after == ' ' || after == '\n'))
                found = 1;
        }
        if (!found)
            fail_msg("slug '%s' not in openapi.yaml's Problem.type", slug);
    }
}

static int in_range(am_ptype t)
{
    return (int)t >= 0 && t < AM_P_COUNT;
}

static void test_err_mappings_total(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        int rc = codes[i];
        assert_true(in_range(am_problem_of_err(rc)));
        am_ptype in = am_problem_of_input(rc);
        assert_true(in == AM_P_INVALID_VALUE || in == AM_P_INVALID_UTF8 ||
                    in == AM_P_PAYLOAD_TOO_LARGE);
        am_ptype st = am_problem_of_store(rc);
        assert_true(st == AM_P_NOT_FOUND || st == AM_P_CONFLICT ||
                    st == AM_P_INSUFFICIENT_STORAGE || st == AM_P_INTERNAL);
        /* the restrictions agree with the mapping where they keep it */
        if (st != AM_P_INTERNAL)
            assert_int_equal(st, am_problem_of_err(rc));
        if (in != AM_P_INVALID_VALUE)
            assert_int_equal(in, am_problem_of_err(rc));
    }
    assert_int_equal(am_problem_of_err(AM_ERR_NOTFOUND), AM_P_NOT_FOUND);
    assert_int_equal(am_problem_of_err(AM_ERR_CONFLICT), AM_P_CONFLICT);
    assert_int_equal(am_problem_of_err(AM_ERR_FULL), AM_P_INSUFFICIENT_STORAGE);
    assert_int_equal(am_problem_of_err(AM_ERR_CANCELLED), AM_P_REQUEST_TIMEOUT);
    assert_int_equal(am_problem_of_err(AM_ERR_UTF8), AM_P_INVALID_UTF8);
    assert_int_equal(am_problem_of_err(AM_ERR_NUL), AM_P_INVALID_UTF8);
    assert_int_equal(am_problem_of_err(AM_ERR_INVALID), AM_P_INVALID_VALUE);
    assert_int_equal(am_problem_of_err(AM_ERR_RANGE), AM_P_PAYLOAD_TOO_LARGE);
    assert_int_equal(am_problem_of_err(AM_ERR_IO), AM_P_INTERNAL);
    assert_int_equal(am_problem_of_err(AM_ERR_NOMEM), AM_P_INTERNAL);
    assert_int_equal(am_problem_of_err(AM_OK), AM_P_INTERNAL);
    assert_int_equal(am_problem_of_input(AM_ERR_PARSE), AM_P_INVALID_VALUE);
    assert_int_equal(am_problem_of_input(AM_ERR_NOTFOUND), AM_P_INVALID_VALUE);
    assert_int_equal(am_problem_of_store(AM_ERR_INVALID), AM_P_INTERNAL);
    assert_int_equal(am_problem_of_store(AM_ERR_CANCELLED), AM_P_INTERNAL);
}

static void test_problem_json(void **state)
{
    (void)state;
    json_t *j = am_problem_json(AM_P_NOT_FOUND, "no session 'x'", "/v1/sessions/x");
    assert_string_equal(json_string_value(json_object_get(j, "type")),
                        "https://adaptmon.dev/problems/not-found");
    assert_string_equal(json_string_value(json_object_get(j, "title")), "Not found");
    assert_int_equal(json_integer_value(json_object_get(j, "status")), 404);
    assert_string_equal(json_string_value(json_object_get(j, "detail")), "no session 'x'");
    assert_string_equal(json_string_value(json_object_get(j, "instance")), "/v1/sessions/x");
    json_decref(j);
    /* a detail quoting invalid UTF-8 still gives a detail; no instance */
    j = am_problem_json(AM_P_INVALID_UTF8, "bad \xff byte", NULL);
    assert_string_equal(json_string_value(json_object_get(j, "detail")),
                        "(detail not valid UTF-8)");
    assert_null(json_object_get(j, "instance"));
    json_decref(j);
}

static void test_fail_carrier(void **state)
{
    (void)state;
    am_fail f;
    am_fail_init(&f);
    assert_int_equal(am_fail_status(&f), 0); /* nothing failed yet */
    json_t *j = am_fail_json(&f, NULL); /* never filled: a 500 */
    assert_int_equal(json_integer_value(json_object_get(j, "status")), 500);
    json_decref(j);
    assert_int_equal(am_failp(&f, AM_P_UNKNOWN_FIELD, "foo", "unknown field '%s'", "foo"),
                     AM_ERR_INVALID);
    assert_int_equal(am_fail_status(&f), 422);
    j = am_fail_json(&f, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "type")),
                        "https://adaptmon.dev/problems/unknown-field");
    assert_string_equal(json_string_value(json_object_get(j, "detail")), "unknown field 'foo'");
    assert_string_equal(json_string_value(json_object_get(j, "field")), "foo");
    json_decref(j);
    /* a second failure replaces the first (detail and field) */
    am_failp(&f, AM_P_UNAVAILABLE, NULL, "retry");
    assert_int_equal(am_fail_status(&f), 503);
    assert_string_equal(am_buf_str(&f.detail), "retry");
    assert_null(f.field);
    am_fail_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_has_a_row), cmocka_unit_test(test_slugs_and_titles_unique),
        cmocka_unit_test(test_statuses_unchanged),   cmocka_unit_test(test_slugs_documented),
        cmocka_unit_test(test_err_mappings_total),   cmocka_unit_test(test_problem_json),
        cmocka_unit_test(test_fail_carrier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
