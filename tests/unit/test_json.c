/* test_json.c — server/json.c: the compact writer's reals and the direct
 * writer of stored totals (am_json_totals_text), which must equal the
 * jansson tree of am_json_totals_raw dumped by am_json_dump byte for byte. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* am_json_dump of one real (caller frees). */
static char *dump_real(double x)
{
    json_t *j = json_real(x);
    char *s = am_json_dump(j);
    json_decref(j);
    return s;
}

static void test_reals(void **state)
{
    (void)state;
    static const struct {
        double x;
        const char *text;
    } cases[] = {
        {3.0, "3.0"},
        {-7.0, "-7.0"},
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {0.1, "0.1"},
        {0.8, "0.8"},
        {2.0 / 3.0, "0.6666666666666666"},
        {123456789012345.0, "123456789012345.0"},
        {999999999999999.0, "999999999999999.0"},
        {1e15, "1e15"},
        {9007199254740992.0, "9007199254740992.0"},
        {1e20, "1e20"},
        {1.5e-7, "1.5e-7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = dump_real(cases[i].x);
        assert_string_equal(s, cases[i].text);
        assert_true(strtod(s, NULL) == cases[i].x);
        free(s);
    }
}

/* Fills *t with distinct values of every field, reals of every kind. */
static void fill(am_totals *t, unsigned seed, int k, size_t windows)
{
    memset(t, 0, sizeof *t);
    srand(seed);
    t->segments = rand();
    t->bleu_segments = rand() % 1000;
    t->recall.k = k;
    for (int i = 0; i <= k; i++) {
        t->recall.r[i].hits = rand() % 100;
        t->recall.r[i].total = 100 + rand() % 100;
    }
    t->recall.r01.hits = 7;
    t->recall.r01.total = 9000000000LL; /* beyond 32 bits */
    t->terms.instances = 12;
    t->terms.exact = 5;
    t->terms.stem = 3;
    t->terms.deviations = 2;
    t->terms.forbidden = 1;
    t->terms.partial_sum = rand() / 7.0;
    t->terms.reorder_sum = seed & 1 ? 4.0 : 1e-9 * rand();
    t->terms.n_windows = windows;
    for (size_t w = 0; w < windows; w++) {
        t->terms.windows[w] = w + 2;
        t->terms.win_sum[w] = (double)rand() / 3.0;
        t->terms.win_count[w] = (uint64_t)rand();
    }
    t->ter.edits = rand() / 10.0;
    t->ter.ref_len = (double)rand();
    t->ter.n = (size_t)rand();
    t->term.edits = seed & 2 ? 1e16 : 0.25 * rand();
    t->term.ref_len = 33.0;
    t->term.n = 4;
    t->bleu.sys_len = rand();
    t->bleu.ref_len = rand();
    for (size_t i = 0; i < AM_BLEU_MAX_ORDER; i++) {
        t->bleu.correct[i] = rand() % 50;
        t->bleu.total[i] = 50 + rand() % 50;
    }
    for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        for (size_t i = 0; i < 3; i++)
            t->chrf.ch[n][i] = rand();
    for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        for (size_t i = 0; i < 3; i++)
            t->chrf.wd[n][i] = -(int64_t)rand();
}

static void test_totals_text_equals_tree(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 200; seed++) {
        am_totals t;
        fill(&t, seed, (int)(seed % (AM_RECALL_MAX_K + 1)), seed % (AM_TERMS_MAX_WINDOWS + 1));
        json_t *tree = am_json_totals_raw(&t);
        char *want = am_json_dump(tree);
        char *got = am_json_totals_text(&t);
        assert_string_equal(got, want);
        free(got);
        free(want);
        json_decref(tree);
    }
    am_totals z;
    memset(&z, 0, sizeof z);
    json_t *tree = am_json_totals_raw(&z);
    char *want = am_json_dump(tree);
    char *got = am_json_totals_text(&z);
    assert_string_equal(got, want);
    free(got);
    free(want);
    json_decref(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reals),
        cmocka_unit_test(test_totals_text_equals_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
