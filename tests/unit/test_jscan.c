/* test_jscan.c — server/base/jscan.c on compact JSON texts: every member
 * found by am_js_find, am_js_member, am_js_members and am_js_members_end is
 * the one jansson finds (its text dumped back compactly is the same), the
 * object ends are right, and text that is not compact JSON is refused
 * (the callers then parse it whole). */
#include "testutil.h"

#include <string.h>

#include "jscan.h"
#include "json.h"

/* A stored result's shape: members with nested objects and arrays before
 * and after the wanted ones, strings with escapes and brackets inside. */
static const char *const RESULT =
    "{\"created_ms\":1,\"id\":\"a\\\"}{[\",\"scores\":{\"systems\":{\"b\":{\"bleu\":1.5,"
    "\"r0\":{\"hits\":2,\"total\":3},\"terms\":{\"x\":[1,{\"y\":\"]\"}]}},\"c\":{\"r0\":null}},"
    "\"words\":[{\"w\":\"}\"},[[]]]},\"seq\":7,\"totals\":{\"b\":{}}}";

/* The compact dump of the value [v, e): it parses, and is what jansson
 * gives for it. */
static void assert_value(const char *v, const char *e, const json_t *want)
{
    assert_non_null(v);
    assert_non_null(e);
    json_t *got = json_loadb(v, (size_t)(e - v), JSON_DECODE_ANY, NULL);
    assert_non_null(got);
    char *a = am_json_dumps(got, 0), *b = am_json_dumps(want, 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    json_decref(got);
}

static void test_find_and_member_agree_with_jansson(void **state)
{
    (void)state;
    json_t *r = json_loads(RESULT, 0, NULL);
    assert_non_null(r);
    const char *keys[] = {"created_ms", "id", "scores", "seq", "totals"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *e, *v = am_js_member(RESULT, keys[i], &e);
        assert_value(v, e, json_object_get(r, keys[i]));
        /* am_js_find: the same start, without the end */
        assert_ptr_equal(am_js_find(RESULT, keys[i]), v);
    }
    assert_null(am_js_find(RESULT, "absent"));
    assert_null(am_js_find(RESULT, "score")); /* a prefix of a key is not the key */
    const char *sc = am_js_find(RESULT, "scores"), *sy = am_js_find(sc, "systems");
    const char *e, *b = am_js_member(sy, "b", &e);
    assert_value(b, e,
                 json_object_get(json_object_get(json_object_get(r, "scores"), "systems"), "b"));
    json_decref(r);
}

static void test_members_end_reads_the_whole_object(void **state)
{
    (void)state;
    json_t *r = json_loads(RESULT, 0, NULL);
    const char *sy = am_js_find(am_js_find(RESULT, "scores"), "systems");
    static const char *const k[3] = {"terms", "r0", "nope"};
    const char *v[3], *e[3], *end;
    assert_int_equal(am_js_members_end(sy, k, 3, v, e, &end), 0); /* systems' keys are b, c */
    /* the end of systems: the next member of scores starts there */
    assert_memory_equal(end, ",\"words\":", 9);
    const char *b = am_js_find(sy, "b");
    assert_int_equal(am_js_members_end(b, k, 3, v, e, &end), 2);
    json_t *jb = json_object_get(json_object_get(json_object_get(r, "scores"), "systems"), "b");
    assert_value(v[0], e[0], json_object_get(jb, "terms"));
    assert_value(v[1], e[1], json_object_get(jb, "r0"));
    assert_null(v[2]);
    assert_null(e[2]);
    assert_memory_equal(end, ",\"c\":", 5);
    /* am_js_members finds the same values, stopping early */
    const char *v2[3], *e2[3];
    assert_int_equal(am_js_members(b, k, 3, v2, e2), 2);
    assert_ptr_equal(v2[0], v[0]);
    assert_ptr_equal(e2[1], e[1]);
    /* the whole text: its end is the terminating NUL */
    assert_int_equal(am_js_members_end(RESULT, k, 3, v, e, &end), 0);
    assert_ptr_equal(end, RESULT + strlen(RESULT));
    json_decref(r);
}

static void test_not_compact_is_refused(void **state)
{
    (void)state;
    static const char *const k[1] = {"a"};
    const char *v[1], *e[1], *end = "x";
    const char *bad[] = {"{ \"a\":1}", "{\"a\" :1}", "{\"a\":1", "[1]", "{\"a\":\"x}", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(am_js_members_end(bad[i], k, 1, v, e, &end), -1);
        assert_null(end);
        assert_null(v[0]);
    }
    assert_int_equal(am_js_members_end(NULL, k, 1, v, e, &end), -1);
    assert_null(am_js_find(NULL, "a"));
    assert_null(am_js_find("[1]", "a"));
    /* more keys than it looks for at once: refused, values cleared */
    const char *many[AM_JS_KEYS_MAX + 1], *mv[AM_JS_KEYS_MAX + 1], *me[AM_JS_KEYS_MAX + 1];
    for (size_t i = 0; i <= AM_JS_KEYS_MAX; i++)
        many[i] = "a";
    assert_int_equal(am_js_members("{\"a\":1}", many, AM_JS_KEYS_MAX + 1, mv, me), -1);
    assert_null(mv[AM_JS_KEYS_MAX]);
    /* a repeated key: the first one is found, counted once */
    assert_int_equal(am_js_members_end("{\"a\":1,\"a\":2}", k, 1, v, e, &end), 1);
    assert_memory_equal(v[0], "1", 1);
}

/* am_js_array_count: the elements jansson finds in a compact array (a
 * stored glossary's shape: objects whose strings hold brackets, commas and
 * escapes), and -1 for text that is not one compact array. */
static void test_array_count_agrees_with_jansson(void **state)
{
    (void)state;
    const char *arrays[] = {
        "[]",
        "[1]",
        "[[]]",
        "[null,true,-1.5e3,\"\"]",
        "[{\"source\":\"a]\",\"targets\":[\"b,[\",\"c\\\"]\"]},{},[1,[2,[3]]]]",
        "[{\"source\":\"\\\\\",\"targets\":[\"}\"],\"forbidden\":false},\"x\"]",
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        json_t *j = json_loads(arrays[i], 0, NULL);
        assert_non_null(j);
        assert_int_equal(am_js_array_count(arrays[i]), (ptrdiff_t)json_array_size(j));
        json_decref(j);
    }
    /* 1,000 glossary entries, as PUT …/glossary stores them */
    json_t *g = json_array();
    for (int k = 0; k < 1000; k++)
        json_array_append_new(g,
                              json_pack("{s:s,s:[s]}", "source", "a [w]", "targets", "b, \"c\""));
    char *text = am_json_dumps(g, 0);
    assert_int_equal(am_js_array_count(text), 1000);
    free(text);
    json_decref(g);
    const char *bad[] = {"",     "{}",   "[1,2",  "[1, 2]", "[ 1]", "[1]x", "[]]",
                         "[1,]", "[,1]", "[\"a]", "1",      "[",    "[[1]", "[\"\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(am_js_array_count(bad[i]), -1);
    assert_int_equal(am_js_array_count(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_and_member_agree_with_jansson),
        cmocka_unit_test(test_members_end_reads_the_whole_object),
        cmocka_unit_test(test_not_compact_is_refused),
        cmocka_unit_test(test_array_count_agrees_with_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
