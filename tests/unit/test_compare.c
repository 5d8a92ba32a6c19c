/* test_compare.c — relative differences of two systems' totals
 * (core/compare.h): every recall shot up to k, terms, TER, null cases. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "compare.h"

/* totals with k shots, r[s] = hits[s]/totals[s], and TER edits/ref_len */
static void make_totals(am_totals *t, int k, const int64_t *hits, const int64_t *totals,
                        double ter_edits, double ref_len)
{
    memset(t, 0, sizeof *t);
    am_recall_totals_init(&t->recall, k);
    for (int s = 0; s <= k; s++) {
        t->recall.r[s].hits = hits[s];
        t->recall.r[s].total = totals[s];
    }
    t->recall.r01.hits = hits[0] + hits[1];
    t->recall.r01.total = totals[0] + totals[1];
    am_ter_stats_init(&t->ter);
    am_ter_stats_init(&t->term);
    am_ter_stats_add(&t->ter, ter_edits, (size_t)ref_len);
    t->terms.instances = 4;
    t->terms.exact = (uint64_t)hits[0];
    t->segments = 1;
}

static void test_every_shot(void **state)
{
    (void)state;
    am_totals b, x;
    make_totals(&b, 3, (const int64_t[]){1, 2, 1, 0}, (const int64_t[]){4, 4, 2, 0}, 5, 10);
    make_totals(&x, 3, (const int64_t[]){2, 3, 2, 1}, (const int64_t[]){4, 4, 2, 1}, 4, 10);
    am_totals_rel r;
    am_totals_relative(&b, &x, &r);
    assert_int_equal(r.k, 3);
    tu_assert_close(r.rel.r[0], 1.0, 1e-12); /* (0.5 - 0.25) / 0.25 */
    tu_assert_close(r.rel.r[1], 0.5, 1e-12); /* (0.75 - 0.5) / 0.5 */
    tu_assert_close(r.rel.r[2], 1.0, 1e-12); /* (1 - 0.5) / 0.5 */
    assert_true(isnan(r.rel.r[3])); /* the baseline's R3 is null */
    assert_true(isnan(r.rel.r[4])); /* beyond k */
    tu_assert_close(r.rel.r01, (5.0 / 8 - 3.0 / 8) / (3.0 / 8), 1e-12);
    tu_assert_close(r.rel.ter, -0.2, 1e-12); /* (0.4 - 0.5) / 0.5 */
    tu_assert_close(r.rel.terms.exact, 1.0, 1e-12);
    assert_true(isnan(r.rel.bleu)); /* no BLEU statistics */
}

static void test_missing_or_zero_baseline(void **state)
{
    (void)state;
    am_totals b, x;
    make_totals(&b, 1, (const int64_t[]){0, 1}, (const int64_t[]){4, 4}, 0, 10);
    make_totals(&x, 1, (const int64_t[]){2, 3}, (const int64_t[]){4, 4}, 4, 10);
    am_totals_rel r;
    am_totals_relative(&b, &x, &r);
    assert_true(isnan(r.rel.r[0])); /* baseline 0 */
    tu_assert_close(r.rel.r[1], 2.0, 1e-12);
    assert_true(isnan(r.rel.ter)); /* baseline TER 0 */
    am_totals_relative(NULL, &x, &r);
    assert_true(isnan(r.rel.r[1]) && isnan(r.rel.r01) && isnan(r.rel.ter));
    am_totals_relative(&b, NULL, &r);
    assert_true(isnan(r.rel.r[1]));
    assert_true(isnan(am_relative_diff(NAN, 1)) && isnan(am_relative_diff(1, INFINITY)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_shot),
        cmocka_unit_test(test_missing_or_zero_baseline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
