/* test_realfmt.c — core/realfmt.c: the shortest text that reads back,
 * checked against strtod and against printing with 1, 2, ... 17 digits
 * (the first precision whose %.*g reads back is the shortest text, and the
 * nearest of that length), on edge doubles and on random bit patterns. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "realfmt.h"

/* The oracle: the fewest digits p that read back (the first %.{p}g, p =
 * 1..17, that strtod reads back as x), in the layout of %.{max(p, 15)}g
 * (100, not 1e+02: the same digits) for normal numbers; subnormals are
 * below 1e-4, where %g always writes an exponent. */
static void oracle_g(double x, char *out, size_t n)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(out, n, "%.*g", p, x);
        if (strtod(out, NULL) == x) {
            if (p < 15 && !(x != 0 && fabs(x) < DBL_MIN))
                snprintf(out, n, "%.15g", x);
            return;
        }
    }
    fail_msg("%%.17g of %a does not read back", x);
}

/* Same bits, so -0.0 differs from 0.0. */
static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Asserts am_realfmt_g(x) is the oracle's text and reads back, and that
 * am_realfmt_json(x) reads back and is valid JSON number syntax. */
static void check(double x)
{
    char got[AM_REALFMT_MAX], want[AM_REALFMT_MAX], js[AM_REALFMT_MAX];
    am_realfmt_g(x, got);
    oracle_g(x, want, sizeof want);
    if (strcmp(got, want) != 0)
        fail_msg("%a: am_realfmt_g '%s', shortest %%g '%s'", x, got, want);
    assert_true(same_double(strtod(got, NULL), x));
    size_t n = am_realfmt_json(x, js);
    assert_int_equal(n, strlen(js));
    assert_true(same_double(strtod(js, NULL), x));
    assert_null(strchr(js, '+'));
    assert_true(strchr(js, '.') || strchr(js, 'e')); /* reads as a real */
}

static void test_edges(void **state)
{
    (void)state;
    static const double xs[] = {0.0,
                                -0.0,
                                0.1,
                                0.2,
                                0.3,
                                1.0 / 3,
                                2.0 / 3,
                                0.64352818371607512,
                                1e22,
                                1e23,
                                1e-5,
                                1e-7,
                                123456789012345678.0,
                                9007199254740993.0,
                                4.9406564584124654e-324, /* the smallest subnormal */
                                2.2250738585072009e-308, /* the largest subnormal */
                                2.2250738585072014e-308, /* the smallest normal */
                                1.7976931348623157e308,
                                -1.7976931348623157e308,
                                5e-324 * 3,
                                1.0,
                                -1.0,
                                3.0,
                                1e15,
                                999999999999999.0,
                                1e16,
                                100.0,
                                0.5,
                                0.75,
                                12.5,
                                0.05,
                                -0.0001,
                                0.00001,
                                1e-4,
                                9.999999999999999e-5,
                                5e-7,
                                33.333333333333336,
                                66.66666666666667};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        check(xs[i]);
    /* every integer and every decimal with few places near 0..1000 */
    for (int i = -2000; i <= 2000; i++) {
        check(i);
        check(i / 1000.0);
        check(i / 7.0);
        check(i * 1e-9);
    }
}

static uint64_t next_bits(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *st = x;
}

static void test_random(void **state)
{
    (void)state;
    uint64_t st = 0x9e3779b97f4a7c15u;
    size_t n = 0;
    for (long i = 0, rounds = tu_rounds(200000); i < rounds; i++) {
        uint64_t bits = next_bits(&st);
        double x;
        if (i % 2) { /* any bit pattern: every exponent, subnormals */
            memcpy(&x, &bits, sizeof x);
        } else { /* scores and ratios: [0, 100) */
            x = (double)(bits >> 11) / 9007199254740992.0 * (i % 4 ? 1 : 100);
        }
        if (!isfinite(x))
            continue;
        check(x);
        n++;
    }
    assert_true(n > (size_t)tu_rounds(190000));
}

static void test_known_texts(void **state)
{
    (void)state;
    static const struct {
        double x;
        const char *g, *json;
    } cases[] = {
        {0.64352818371607512, "0.6435281837160751", "0.6435281837160751"},
        {0.1, "0.1", "0.1"},
        {-0.0, "-0", "-0.0"},
        {0.0, "0", "0.0"},
        {3.0, "3", "3.0"},
        {1e22, "1e+22", "1e22"},
        {1e15, "1e+15", "1e15"},
        {1e-5, "1e-05", "1e-5"},
        {-2.5e-300, "-2.5e-300", "-2.5e-300"},
        {4.9406564584124654e-324, "5e-324", "5e-324"},
        {1.0 / 3, "0.3333333333333333", "0.3333333333333333"},
        {HUGE_VAL, "inf", "null"},
        {NAN, "nan", "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char g[AM_REALFMT_MAX], js[AM_REALFMT_MAX];
        am_realfmt_g(cases[i].x, g);
        am_realfmt_json(cases[i].x, js);
        if (strcmp(g, cases[i].g) != 0 || strcmp(js, cases[i].json) != 0)
            fail_msg("case %zu: '%s' '%s', want '%s' '%s'", i, g, js, cases[i].g, cases[i].json);
    }
}

/* Integral values (counts kept as reals) are written as "%lld.0" would
 * write them: zero, signs, every digit count up to the 1e15 bound, and
 * the values either side of each power of ten. */
static void test_integral_json(void **state)
{
    (void)state;
    char js[AM_REALFMT_MAX], want[64];
    for (int64_t p = 1; p < 1000000000000000LL; p *= 10)
        for (int64_t d = -1; d <= 1; d++)
            for (int sign = -1; sign <= 1; sign += 2) {
                int64_t v = sign * (p + d);
                size_t n = am_realfmt_json((double)v, js);
                snprintf(want, sizeof want, "%lld.0", (long long)v);
                assert_string_equal(js, want);
                assert_int_equal(n, strlen(want));
            }
    assert_int_equal(am_realfmt_json(999999999999999.0, js), 17);
    assert_string_equal(js, "999999999999999.0");
    assert_int_equal(am_realfmt_json(-999999999999999.0, js), 18);
    assert_string_equal(js, "-999999999999999.0");
}

static void test_json_text(void **state)
{
    (void)state;
    const char *in =
        "{\n \"a\": 0.64352818371607512,\n \"b\": \"x 0.10000000000000001 \\\" 1.5\",\n"
        " \"c\": [1, -2.5000000000000001e-5, 1e+22, 12, 3.0, -0.0, 1E2],\n \"d\": null\n}";
    const char *want =
        "{\n \"a\": 0.6435281837160751,\n \"b\": \"x 0.10000000000000001 \\\" 1.5\",\n"
        " \"c\": [1, -2.5e-5, 1e22, 12, 3.0, -0.0, 100.0],\n \"d\": null\n}";
    char *got = am_realfmt_json_text(in);
    assert_string_equal(got, want);
    free(got);
    got = am_realfmt_json_text("");
    assert_string_equal(got, "");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),       cmocka_unit_test(test_random),
        cmocka_unit_test(test_known_texts), cmocka_unit_test(test_integral_json),
        cmocka_unit_test(test_json_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
