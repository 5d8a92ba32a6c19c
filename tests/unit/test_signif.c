/* test_signif.c — numpy's generator (core/rng.c) against draws numpy
 * 1.24 made, numpy's pairwise mean, and the paired tests of core/signif.c
 * on small hand-checked cases. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exposure.h"
#include "rng.h"
#include "signif.h"

/* Generated with numpy 1.24.2 (python3-numpy):
 *   np.random.default_rng(seed).choice(n, size=(2, 8), replace=True)
 *   np.random.default_rng(seed).integers(2, size=(2, 50), dtype=bool)
 *   np.random.default_rng(12345).bit_generator.random_raw(4) */
static const struct {
    uint64_t seed, n;
    int64_t v[16];
} choice_cases[] = {
    {12345ULL,
     971ULL,
     {678, 220, 765, 307, 198, 774, 624, 656, 959, 379, 815, 323, 551, 580, 206, 181}},
    {12345ULL, 2ULL, {1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0}},
    {12345ULL, 7ULL, {4, 1, 5, 2, 1, 5, 4, 4, 6, 2, 5, 2, 3, 4, 1, 1}},
    {12345ULL,
     5000000000ULL,
     {1136680112, 1583791698, 3986827286, 3381273353, 1955547753, 1664069639, 2991543767, 933670928,
      3363780220, 4709014326, 1241228573, 4744405759, 3336187265, 479489677, 2209198330,
      4432399596}},
    {0ULL, 971ULL, {825, 618, 496, 261, 298, 39, 73, 16, 170, 789, 630, 886, 489, 589, 942, 708}},
    {0ULL, 2ULL, {1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}},
    {0ULL, 7ULL, {5, 4, 3, 1, 2, 0, 0, 0, 1, 5, 4, 6, 3, 4, 6, 5}},
    {0ULL,
     5000000000ULL,
     {3184808436, 1348933568, 204867619, 82638177, 4066351196, 4563777886, 3033178878, 3647482804,
      2718124957, 4675362118, 4079267770, 13692500, 4287021382, 167927876, 3648277232, 878278103}},
    {1ULL, 971ULL, {459, 496, 733, 922, 33, 139, 799, 921, 242, 302, 843, 411, 265, 803, 249, 397}},
    {1ULL, 2ULL, {0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0}},
    {1ULL, 7ULL, {3, 3, 5, 6, 0, 1, 5, 6, 1, 2, 6, 2, 1, 5, 1, 2}},
    {1ULL,
     5000000000ULL,
     {2559108123, 4752318481, 720798063, 4743247235, 1559157260, 2116632244, 4138512969, 2045995681,
      2747968438, 137795566, 3767565543, 2690716566, 1648658582, 3942143517, 1515974146,
      2267489447}},
    {4294967301ULL,
     971ULL,
     {128, 751, 755, 457, 853, 675, 823, 792, 791, 522, 553, 502, 574, 204, 867, 68}},
    {4294967301ULL, 2ULL, {0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0}},
    {4294967301ULL, 7ULL, {0, 5, 5, 3, 6, 4, 5, 5, 5, 3, 3, 3, 4, 1, 6, 0}},
    {4294967301ULL,
     5000000000ULL,
     {3871020901, 2353613415, 3479401721, 4082688229, 2689684645, 2586481114, 1051105726, 353989375,
      2400075672, 4962944156, 4377144047, 4858552248, 2158208572, 295534589, 2136566573,
      2448218822}},
    {9223372036854775815ULL,
     971ULL,
     {928, 41, 520, 551, 869, 130, 965, 162, 590, 561, 311, 296, 684, 497, 93, 277}},
    {9223372036854775815ULL, 2ULL, {1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0}},
    {9223372036854775815ULL, 7ULL, {6, 0, 3, 3, 6, 0, 6, 1, 4, 4, 2, 2, 4, 3, 0, 2}},
    {9223372036854775815ULL,
     5000000000ULL,
     {214378496, 2837594579, 670324670, 837004167, 2892235510, 1527817253, 2562738950, 1429910706,
      1914386046, 519500554, 1499953235, 2650599226, 4127563384, 299162583, 4302292453,
      2592779752}},
};
static const struct {
    uint64_t seed;
    const char *bits;
} bool_cases[] = {
    {12345ULL, "10111001100000111111111101001101101100011000110101001100010111000111101100100011001"
               "00111100100111010"},
    {0ULL, "111110100100000101000011100110111111001111010111111100001100010110000100111010111001101"
           "1010000010001"},
    {1ULL, "111111110010011101000100100111101100111110111101011000001100000101100110000101010100101"
           "0100000111101"},
    {4294967301ULL, "100010110001110101111011100001001100001101111100010011000110001111000001101000"
                    "0001011100111000111000"},
    {9223372036854775815ULL, "011101100000011100000111001011111011101101100111100111110101000001001"
                             "0111000000111000010100100011111"},
};
static const uint64_t raw12345[4] = {0x3a32b18db2ffc19dULL, 0x51171315c9e4c4deULL,
                                     0xcc2024823444efd9ULL, 0xad1f06aea486e910ULL};

static void test_raw_draws(void **state)
{
    (void)state;
    am_rng r;
    am_rng_seed(&r, 12345);
    for (size_t i = 0; i < 4; i++)
        assert_true(am_rng_next64(&r) == raw12345[i]);
}

static void test_choice_equals_numpy(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof choice_cases / sizeof choice_cases[0]; c++) {
        am_rng r;
        am_rng_seed(&r, choice_cases[c].seed);
        int64_t v[16];
        am_rng_choice(&r, choice_cases[c].n, 16, v);
        for (size_t i = 0; i < 16; i++)
            assert_int_equal(v[i], choice_cases[c].v[i]);
    }
}

static void test_bools_equal_numpy(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof bool_cases / sizeof bool_cases[0]; c++) {
        am_rng r;
        am_rng_seed(&r, bool_cases[c].seed);
        unsigned char v[100];
        am_rng_bools(&r, 100, v);
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(v[i], bool_cases[c].bits[i] - '0');
        /* the same bits drawn in pieces of 7 (as the AR test draws trials) */
        am_rng_seed(&r, bool_cases[c].seed);
        uint32_t buf = 0;
        int bcnt = 0;
        for (size_t i = 0; i < 100; i += 7)
            am_rng_bools_part(&r, &buf, &bcnt, i + 7 <= 100 ? 7 : 100 - i, v + i);
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(v[i], bool_cases[c].bits[i] - '0');
    }
}

/* numpy's float64 sum is pairwise: a plain left-to-right sum of these
 * values differs in the last bits (numpy 1.24:
 * np.random.default_rng(3).random(1000) * 100 → mean 49.440255696053306;
 * the values are rebuilt here from the same generator's doubles). */
static void test_np_sum_pairwise(void **state)
{
    (void)state;
    am_rng r;
    am_rng_seed(&r, 3);
    double x[1000], plain = 0;
    for (size_t i = 0; i < 1000; i++) {
        /* Generator.random(): (next64 >> 11) * 2^-53 */
        x[i] = (double)(am_rng_next64(&r) >> 11) * (1.0 / 9007199254740992.0) * 100;
        plain += x[i];
    }
    assert_true(am_sig_np_sum(x, 1000) / 1000 == 49.440255696053306);
    assert_true(plain / 1000 != 49.440255696053306);
}

/* Two identical systems on 4 segments, ratio metric. As in sacreBLEU
 * (c counts |Δ| strictly above the observed Δ = 0, which never happens),
 * p = 1/(n+1); the baseline has p = null; the interval holds the mean. */
static void test_paired_identical(void **state)
{
    (void)state;
    am_sig_metric m = {.kind = AM_SIG_RATIO};
    const double a[] = {1, 2, 0, 1, 2, 2, 1, 3};
    const double *st[] = {a, a};
    am_sig_data d = {&m, 2, 4, st, NULL, NULL};
    am_sig_plan p;
    assert_int_equal(am_sig_plan_new(&p, 0, 4, 200, 12345), AM_OK);
    am_sig_result res[2];
    assert_int_equal(am_sig_paired_bs(&d, 0, &p, 0.95, res), AM_OK);
    assert_true(isnan(res[0].p_value));
    assert_true(res[1].p_value == 1.0 / 201);
    assert_true(res[0].score == 4.0 / 8.0);
    assert_true(res[1].lo <= res[1].mean && res[1].mean <= res[1].hi);
    assert_true(res[1].ci > 0);
    am_sig_plan_free(&p);
    assert_int_equal(am_sig_plan_new(&p, 1, 4, 100, 12345), AM_OK);
    assert_int_equal(am_sig_paired_ar(&d, 0, &p, res), AM_OK);
    assert_true(res[1].p_value == 1.0 / 101);
    assert_true(isnan(res[1].mean));
    am_sig_plan_free(&p);
    /* bad arguments */
    assert_int_equal(am_sig_plan_new(&p, 0, 0, 10, 1), AM_ERR_INVALID);
    assert_int_equal(am_sig_plan_new(&p, 0, 4, 10, 1), AM_OK);
    assert_int_equal(am_sig_paired_bs(&d, 2, &p, 0.95, res), AM_ERR_INVALID);
    assert_int_equal(am_sig_paired_bs(&d, 0, &p, 1.5, res), AM_ERR_INVALID);
    assert_int_equal(am_sig_paired_ar(&d, 0, &p, res), AM_ERR_INVALID); /* a bootstrap plan */
    am_sig_plan_free(&p);
}

/* A system far better on every segment: p is the smallest possible,
 * 1/(n+1), for both tests. */
static void test_paired_clear_difference(void **state)
{
    (void)state;
    am_sig_metric m = {.kind = AM_SIG_RATIO};
    double a[2 * 50], b[2 * 50];
    for (size_t i = 0; i < 50; i++) {
        a[2 * i] = 1, a[2 * i + 1] = 10;
        b[2 * i] = 9, b[2 * i + 1] = 10;
    }
    const double *st[] = {a, b};
    am_sig_data d = {&m, 2, 50, st, NULL, NULL};
    am_sig_plan p;
    am_sig_result res[2];
    assert_int_equal(am_sig_plan_new(&p, 0, 50, 99, 7), AM_OK);
    assert_int_equal(am_sig_paired_bs(&d, 0, &p, 0.95, res), AM_OK);
    assert_true(res[1].p_value == 1.0 / 100);
    am_sig_plan_free(&p);
    assert_int_equal(am_sig_plan_new(&p, 1, 50, 99, 7), AM_OK);
    assert_int_equal(am_sig_paired_ar(&d, 0, &p, res), AM_OK);
    assert_true(res[1].p_value == 1.0 / 100);
    am_sig_plan_free(&p);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bootstrap as it was before am_sig_paired_bs_many: one metric, each
 * resample drawn for it and summed in the order of the draws; mean and
 * interval of system s as sacreBLEU's estimate_ci. */
static void ref_bs(const am_sig_metric *m, const double *const *st, size_t nsys, size_t nu,
                   size_t n, uint64_t seed, double conf, size_t s, am_sig_result *o)
{
    size_t ns = am_sig_nstats(m);
    double *v = malloc(n * sizeof *v), acc[64];
    int64_t *ix = malloc(nu * sizeof *ix);
    am_rng r;
    am_rng_seed(&r, seed);
    for (size_t b = 0; b < n; b++) {
        am_rng_choice(&r, nu, nu, ix);
        for (size_t k = 0; k < nsys; k++) {
            memset(acc, 0, sizeof acc);
            for (size_t i = 0; i < nu; i++)
                for (size_t j = 0; j < ns; j++)
                    acc[j] += st[k][(size_t)ix[i] * ns + j];
            if (k == s)
                v[b] = am_sig_score(m, acc, 1);
        }
    }
    qsort(v, n, sizeof *v, cmp_dbl);
    size_t lower = (size_t)floor((double)n * (1 - conf) / 2 + 1e-9), upper = n - lower - 1;
    o->lo = v[lower];
    o->hi = v[upper];
    o->mean = am_sig_np_sum(v, n) / (double)n;
    free(ix);
    free(v);
}

/* Several metrics through one am_sig_paired_bs_many: each result equals,
 * to the last bit, the one-metric bootstrap of before (draws per metric,
 * sums in draw order) — for small-integer statistics (summed from counts
 * of draws) and for fractional ones (summed in draw order). */
static void test_many_metrics_equal_one_at_a_time(void **state)
{
    (void)state;
    enum { NU = 300, NB = 200 };
    static double ia[NU * 2], ib[NU * 2], fa[NU * 2], fb[NU * 2], ta[NU * 2], tb[NU * 2];
    am_rng r;
    am_rng_seed(&r, 99);
    for (size_t u = 0; u < NU; u++) {
        ia[2 * u] = (double)(am_rng_next64(&r) % 7), ia[2 * u + 1] = 7;
        ib[2 * u] = (double)(am_rng_next64(&r) % 8), ib[2 * u + 1] = 8;
        fa[2 * u] = (double)(am_rng_next64(&r) % 1000) / 3.0, fa[2 * u + 1] = 400;
        fb[2 * u] = (double)(am_rng_next64(&r) % 1000) / 7.0, fb[2 * u + 1] = 300;
        ta[2 * u] = (double)(am_rng_next64(&r) % 5), ta[2 * u + 1] = 9;
        tb[2 * u] = (double)(am_rng_next64(&r) % 3), tb[2 * u + 1] = 9;
    }
    am_sig_metric ratio = {.kind = AM_SIG_RATIO}, ter = {.kind = AM_SIG_TER};
    const double *si[] = {ia, ib}, *sf[] = {fa, fb}, *st[] = {ta, tb};
    am_sig_data d[3] = {{&ratio, 2, NU, si, NULL, NULL},
                        {&ratio, 2, NU, sf, NULL, NULL},
                        {&ter, 2, NU, st, NULL, NULL}};
    am_sig_plan p;
    assert_int_equal(am_sig_plan_new(&p, 0, NU, NB, 12345), AM_OK);
    am_sig_result r0[2], r1[2], r2[2];
    am_sig_result *out[] = {r0, r1, r2};
    assert_int_equal(am_sig_paired_bs_many(d, 3, 0, &p, 0.95, out), AM_OK);
    for (size_t k = 0; k < 3; k++)
        for (size_t s = 0; s < 2; s++) {
            am_sig_result ref;
            ref_bs(d[k].metric, d[k].stats, 2, NU, NB, 12345, 0.95, s, &ref);
            assert_true(out[k][s].mean == ref.mean);
            assert_true(out[k][s].lo == ref.lo);
            assert_true(out[k][s].hi == ref.hi);
            am_sig_result one[2];
            assert_int_equal(am_sig_paired_bs(&d[k], 0, &p, 0.95, one), AM_OK);
            assert_true(one[s].mean == out[k][s].mean && one[s].score == out[k][s].score);
            assert_true(s == 0 ? isnan(one[s].p_value) : one[s].p_value == out[k][s].p_value);
        }
    /* systems that differ between the metrics: refused */
    d[1].nsys = 1;
    assert_int_equal(am_sig_paired_bs_many(d, 3, 0, &p, 0.95, out), AM_ERR_INVALID);
    am_sig_plan_free(&p);
}

/* Random statistics of a metric for nu units into st (ns a unit): BLEU
 * and chrF counts as a segment makes them (matches <= hypothesis and
 * reference n-grams), TER edits and lengths, ratios; big: values up to
 * 40,000 (past int16); frac: fractional numerators. */
static void fill_stats(am_rng *r, const am_sig_metric *m, size_t nu, int big, int frac, double *st)
{
    size_t ns = am_sig_nstats(m);
    double top = big ? 40000 : 60;
    for (size_t u = 0; u < nu; u++) {
        double *x = st + u * ns;
        if (m->kind == AM_SIG_BLEU) {
            int mo = m->bleu.max_order;
            double len = (double)(am_rng_next64(r) % (uint64_t)top);
            x[0] = len, x[1] = (double)(am_rng_next64(r) % (uint64_t)top);
            for (int n = 0; n < mo; n++) {
                double tot = len > n ? len - n : 0;
                x[2 + mo + n] = tot;
                x[2 + n] = tot > 0 ? (double)(am_rng_next64(r) % (uint64_t)(tot + 1)) : 0;
            }
        } else if (m->kind == AM_SIG_CHRF) {
            for (size_t i = 0; i < ns; i += 3) {
                double h = (double)(am_rng_next64(r) % (uint64_t)top);
                double f = (double)(am_rng_next64(r) % (uint64_t)top);
                double lo = h < f ? h : f;
                x[i] = h, x[i + 1] = f, x[i + 2] = (double)(am_rng_next64(r) % (uint64_t)(lo + 1));
            }
        } else {
            x[1] = (double)(1 + am_rng_next64(r) % (uint64_t)top);
            x[0] = (double)(am_rng_next64(r) % (uint64_t)(x[1] + 1));
            if (frac)
                x[0] /= 3.0;
        }
    }
}

/* The bootstrap of a session's mix of metrics (BLEU, chrF2, chrF2++,
 * TER, ratios) equals the one-metric reference bootstrap to the last bit
 * whatever path sums it: statistics shared between systems (the
 * reference side) and between metrics (chrF2 inside chrF2++), an odd
 * number of units, several seeds and levels, values past int16 and
 * fractional ones. */
static void test_bootstrap_paths_equal_reference(void **state)
{
    (void)state;
    enum { NB = 120, NM = 5 };
    am_sig_metric ms[NM];
    memset(ms, 0, sizeof ms);
    ms[0].kind = AM_SIG_BLEU;
    am_bleu_score_opts_init(&ms[0].bleu, 0);
    ms[1].kind = AM_SIG_CHRF;
    am_chrf_score_opts_init(&ms[1].chrf, 0);
    ms[2].kind = AM_SIG_CHRF;
    am_chrf_score_opts_init(&ms[2].chrf, 2);
    ms[3].kind = AM_SIG_TER;
    ms[4].kind = AM_SIG_RATIO;
    const size_t nus[] = {257, 300, 1};
    const uint64_t seeds[] = {12345, 7};
    const double confs[] = {0.95, 0.9, 0.5};
    for (int variant = 0; variant < 3; variant++)
        for (size_t iu = 0; iu < 3; iu++) {
            size_t nu = nus[iu];
            am_rng r;
            am_rng_seed(&r, 1000 + (uint64_t)variant * 10 + iu);
            double *mem[NM][3];
            const double *st[NM][3];
            am_sig_data d[NM];
            for (size_t k = 0; k < NM; k++) {
                size_t ns = am_sig_nstats(&ms[k]);
                for (size_t s = 0; s < 3; s++) {
                    mem[k][s] = calloc(nu * ns, sizeof(double));
                    fill_stats(&r, &ms[k], nu, variant == 1 && k == 0, variant == 2 && k == 4,
                               mem[k][s]);
                    st[k][s] = mem[k][s];
                }
                d[k] = (am_sig_data){&ms[k], 3, nu, st[k], NULL, NULL};
            }
            /* chrF2's statistics are chrF2++'s character orders; the
             * reference side is the same for every system */
            for (size_t s = 0; s < 3; s++)
                for (size_t u = 0; u < nu; u++) {
                    memcpy(mem[1][s] + u * 18, mem[2][s] + u * 24, 18 * sizeof(double));
                    mem[0][s][u * 10 + 1] = mem[0][0][u * 10 + 1];
                    mem[3][s][u * 2 + 1] = mem[3][0][u * 2 + 1];
                }
            for (size_t is = 0; is < 2; is++) {
                double conf = confs[(variant + is + iu) % 3];
                am_sig_plan p;
                assert_int_equal(am_sig_plan_new(&p, 0, nu, NB, seeds[is]), AM_OK);
                am_sig_result res[NM][3];
                am_sig_result *out[NM] = {res[0], res[1], res[2], res[3], res[4]};
                assert_int_equal(am_sig_paired_bs_many(d, NM, 1, &p, conf, out), AM_OK);
                for (size_t k = 0; k < NM; k++)
                    for (size_t s = 0; s < 3; s++) {
                        am_sig_result ref;
                        ref_bs(&ms[k], st[k], 3, nu, NB, seeds[is], conf, s, &ref);
                        assert_true(res[k][s].mean == ref.mean);
                        assert_true(res[k][s].lo == ref.lo);
                        assert_true(res[k][s].hi == ref.hi);
                    }
                am_sig_plan_free(&p);
            }
            for (size_t k = 0; k < NM; k++)
                for (size_t s = 0; s < 3; s++)
                    free(mem[k][s]);
        }
}

/* Compact rows as a server's collector keeps them (am_sig_view: int32
 * counts side by side, unit after unit, systems interleaved; TER's
 * fractional statistics in rows of doubles) give, to the last bit, what
 * the same statistics as arrays of doubles give, and both the reference
 * bootstrap — with offset columns (chrF's hypothesis and reference
 * n-gram counts of orders 2..6 its count of order 1 minus n − 1, BLEU's
 * totals its length minus n, a ratio's denominator its numerator plus
 * 3), constant columns (a ratio of 0 over 7 everywhere), and in variant
 * 1 the offsets broken in one unit only (a short segment: such a column
 * must be summed). Fails when an offset column is derived from the wrong
 * count of draws or without the unit-by-unit check. */
static void test_views_and_offsets_equal_reference(void **state)
{
    (void)state;
    enum { NB = 100, NM = 5, NSYS = 3, W = 10 + 18 + 2 + 2 };
    am_sig_metric ms[NM];
    memset(ms, 0, sizeof ms);
    ms[0].kind = AM_SIG_BLEU;
    am_bleu_score_opts_init(&ms[0].bleu, 0);
    ms[1].kind = AM_SIG_CHRF;
    am_chrf_score_opts_init(&ms[1].chrf, 0); /* 6 character orders, no words */
    ms[2].kind = AM_SIG_RATIO; /* 0 / 7 everywhere */
    ms[3].kind = AM_SIG_RATIO; /* num, num + 3 */
    ms[4].kind = AM_SIG_TER; /* fractional edits: rows of doubles */
    const size_t ioff[NM] = {0, 10, 28, 30, 0}; /* first int32 column of each metric */
    const size_t nus[] = {301, 2};
    for (int variant = 0; variant < 2; variant++)
        for (size_t iu = 0; iu < 2; iu++) {
            size_t nu = nus[iu];
            am_rng r;
            am_rng_seed(&r, 77 + (uint64_t)variant * 10 + iu);
            int32_t *irow = calloc(nu * NSYS * W, sizeof *irow);
            double *frow = calloc(nu * NSYS * 2, sizeof *frow);
            for (size_t u = 0; u < nu; u++) {
                int64_t rlen = 4 + (int64_t)(am_rng_next64(&r) % 30);
                int64_t rch = 6 + (int64_t)(am_rng_next64(&r) % 50);
                for (size_t s = 0; s < NSYS; s++) {
                    int32_t *x = irow + (u * NSYS + s) * W;
                    int64_t len = 4 + (int64_t)(am_rng_next64(&r) % 30);
                    int64_t ch = 6 + (int64_t)(am_rng_next64(&r) % 50);
                    if (variant == 1 && u == nu / 2 && s == 1)
                        len = 2, ch = 3; /* the offsets of system 1 hold but here */
                    x[0] = (int32_t)len, x[1] = (int32_t)rlen;
                    for (int n = 0; n < 4; n++) {
                        int64_t tot = len > n ? len - n : 0;
                        x[6 + n] = (int32_t)tot;
                        x[2 + n] = (int32_t)(am_rng_next64(&r) % (uint64_t)(tot + 1));
                    }
                    for (int n = 0; n < 6; n++) {
                        int64_t h = ch > n ? ch - n : 0, f = rch - n, lo = h < f ? h : f;
                        x[10 + 3 * n] = (int32_t)h;
                        x[10 + 3 * n + 1] = (int32_t)f;
                        x[10 + 3 * n + 2] = (int32_t)(am_rng_next64(&r) % (uint64_t)(lo + 1));
                    }
                    x[28] = 0, x[29] = 7;
                    x[30] = (int32_t)(am_rng_next64(&r) % 20), x[31] = x[30] + 3;
                    double *f = frow + (u * NSYS + s) * 2;
                    f[1] = (double)(1 + am_rng_next64(&r) % 40);
                    f[0] = (double)(am_rng_next64(&r) % 40) / 3.0;
                }
            }
            /* the same statistics as arrays of doubles, and as views */
            double *mem[NM][NSYS];
            const double *st[NM][NSYS];
            am_sig_view vw[NM][NSYS * 24];
            am_sig_data da[NM], dv[NM];
            for (size_t k = 0; k < NM; k++) {
                size_t ns = am_sig_nstats(&ms[k]);
                for (size_t s = 0; s < NSYS; s++) {
                    mem[k][s] = calloc(nu * ns, sizeof(double));
                    st[k][s] = mem[k][s];
                    for (size_t j = 0; j < ns; j++) {
                        vw[k][s * ns + j] =
                            k == 4 ? (am_sig_view){NULL, frow + s * 2 + j, NSYS * 2}
                                   : (am_sig_view){irow + s * W + ioff[k] + j, NULL, NSYS * W};
                        for (size_t u = 0; u < nu; u++)
                            mem[k][s][u * ns + j] =
                                k == 4 ? frow[(u * NSYS + s) * 2 + j]
                                       : (double)irow[(u * NSYS + s) * W + ioff[k] + j];
                    }
                }
                da[k] = (am_sig_data){&ms[k], NSYS, nu, st[k], NULL, NULL};
                dv[k] = (am_sig_data){&ms[k], NSYS, nu, NULL, NULL, vw[k]};
            }
            am_sig_plan p;
            assert_int_equal(am_sig_plan_new(&p, 0, nu, NB, 12345), AM_OK);
            am_sig_result ra[NM][NSYS], rv[NM][NSYS];
            am_sig_result *oa[NM] = {ra[0], ra[1], ra[2], ra[3], ra[4]};
            am_sig_result *ov[NM] = {rv[0], rv[1], rv[2], rv[3], rv[4]};
            assert_int_equal(am_sig_paired_bs_many(da, NM, 0, &p, 0.95, oa), AM_OK);
            assert_int_equal(am_sig_paired_bs_many(dv, NM, 0, &p, 0.95, ov), AM_OK);
            for (size_t k = 0; k < NM; k++)
                for (size_t s = 0; s < NSYS; s++) {
                    am_sig_result ref;
                    ref_bs(&ms[k], st[k], NSYS, nu, NB, 12345, 0.95, s, &ref);
                    assert_true(ra[k][s].mean == ref.mean ||
                                (isnan(ref.mean) && isnan(ra[k][s].mean)));
                    assert_true(ra[k][s].lo == ref.lo || (isnan(ref.lo) && isnan(ra[k][s].lo)));
                    assert_true(ra[k][s].hi == ref.hi || (isnan(ref.hi) && isnan(ra[k][s].hi)));
                    assert_memory_equal(&ra[k][s], &rv[k][s], sizeof ra[k][s]);
                }
            /* views are the bootstrap's: approximate randomization refuses them */
            am_sig_plan pa;
            assert_int_equal(am_sig_plan_new(&pa, 1, nu, 10, 12345), AM_OK);
            assert_int_equal(am_sig_paired_ar(&dv[0], 0, &pa, rv[0]), AM_ERR_INVALID);
            am_sig_plan_free(&pa);
            am_sig_plan_free(&p);
            for (size_t k = 0; k < NM; k++)
                for (size_t s = 0; s < NSYS; s++)
                    free(mem[k][s]);
            free(irow);
            free(frow);
        }
}

/* Draws counted as drawn (am_rng_choice_count) are the draws of
 * am_rng_choice, and leave the generator where it leaves it. */
static void test_choice_count_equals_choice(void **state)
{
    (void)state;
    const uint64_t ns[] = {1, 2, 7, 1000, 64001};
    for (size_t k = 0; k < 5; k++) {
        size_t n = (size_t)ns[k], draws = 3 * n + 5;
        am_rng a, b;
        am_rng_seed(&a, 12345 + k);
        am_rng_seed(&b, 12345 + k);
        (void)am_rng_next32(&a); /* a buffered half: both start mid-word */
        (void)am_rng_next32(&b);
        int64_t *ix = malloc(draws * sizeof *ix);
        uint16_t *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
        am_rng_choice(&a, n, draws, ix);
        for (size_t i = 0; i < draws; i++)
            want[ix[i]]++;
        unsigned seen = am_rng_choice_count(&b, n, draws, got);
        assert_memory_equal(want, got, n * sizeof *got);
        unsigned ors = 0; /* one unit: every draw lands on it, counting 1…draws */
        for (unsigned i = 1; i <= draws; i++)
            ors |= i;
        assert_true(n > 1 || seen == ors);
        assert_true(am_rng_next64(&a) == am_rng_next64(&b));
        free(ix);
        free(want);
        free(got);
    }
}

/* The batched draws (rng.c's pcg_fill: four PCG64 chains) are Lemire's
 * method on am_rng_next32, one draw at a time: for n where a draw is
 * redrawn half the time (2^31 + 1) or rarely (64,000; 1,000,003), from a
 * fresh generator and from one with a buffered half, in calls of odd and
 * even sizes, and the generator is left where the one-at-a-time draws
 * leave it (its next 32 and 64 bits). */
static void test_batched_draws_equal_one_at_a_time(void **state)
{
    (void)state;
    const uint64_t ns[] = {2147483649u, 64000, 1000003, 3};
    const size_t sizes[] = {1, 2, 7, 513, 100001};
    for (size_t k = 0; k < 4; k++)
        for (int mid = 0; mid < 2; mid++) {
            am_rng a, b, c;
            am_rng_seed(&a, 777 + k);
            if (mid)
                (void)am_rng_next32(&a);
            b = c = a;
            uint32_t excl = (uint32_t)ns[k], threshold = (UINT32_MAX - (excl - 1)) % excl;
            size_t redrawn = 0;
            for (size_t z = 0; z < 5; z++) {
                size_t cnt = sizes[z];
                int64_t *got = malloc(cnt * sizeof *got);
                am_rng_choice(&b, ns[k], cnt, got);
                uint16_t *want = NULL, *counted = NULL;
                if (ns[k] < 2000000) {
                    want = calloc(ns[k], sizeof *want);
                    counted = calloc(ns[k], sizeof *counted);
                    (void)am_rng_choice_count(&c, ns[k], cnt, counted);
                }
                for (size_t i = 0; i < cnt; i++) {
                    uint64_t m = (uint64_t)am_rng_next32(&a) * excl;
                    while ((uint32_t)m < threshold) {
                        m = (uint64_t)am_rng_next32(&a) * excl;
                        redrawn++;
                    }
                    assert_true(got[i] == (int64_t)(m >> 32));
                    if (want)
                        want[m >> 32]++;
                }
                if (want)
                    assert_memory_equal(want, counted, ns[k] * sizeof *want);
                free(want);
                free(counted);
                free(got);
            }
            assert_true(k == 3 || redrawn > 0); /* the redraw path ran */
            am_rng a2 = a, c2 = c;
            assert_true(am_rng_next32(&a) == am_rng_next32(&b));
            assert_true(am_rng_next64(&a) == am_rng_next64(&b));
            if (ns[k] < 2000000) {
                assert_true(am_rng_next32(&a2) == am_rng_next32(&c2));
                assert_true(am_rng_next64(&a2) == am_rng_next64(&c2));
            }
        }
}

static int always_stop(void *ctx)
{
    (void)ctx;
    return 1;
}

/* A cancel check that says stop ends both tests with AM_ERR_CANCELLED
 * (asked every AM_CANCEL_QUANTUM units: 200,000 resamples are enough). */
static void test_cancel_stops_the_tests(void **state)
{
    (void)state;
    am_sig_metric m = {.kind = AM_SIG_RATIO};
    const double a[] = {1, 2, 0, 1, 2, 2, 1, 3};
    const double *st[] = {a, a};
    am_cancel stop;
    am_cancel_init(&stop, always_stop, NULL);
    am_sig_data d = {&m, 2, 4, st, &stop, NULL};
    am_sig_result res[2];
    am_sig_plan p;
    assert_int_equal(am_sig_plan_new(&p, 0, 4, 200000, 1), AM_OK);
    assert_int_equal(am_sig_paired_bs(&d, 0, &p, 0.95, res), AM_ERR_CANCELLED);
    assert_true(stop.hit);
    am_cancel_init(&stop, always_stop, NULL);
    assert_int_equal(am_sig_plan_new(&p, 1, 4, 200000, 1), AM_OK);
    assert_int_equal(am_sig_paired_ar(&d, 0, &p, res), AM_ERR_CANCELLED);
    am_sig_plan_free(&p);
}

/* The plan draws its indices as the tests go (one resample at a time), so
 * its memory does not grow with resamples × units: 10^4 resamples of 10^7
 * segments (8·10^11 bytes as a stored index array) is a valid plan. */
static void test_plan_memory_does_not_grow(void **state)
{
    (void)state;
    am_sig_plan p;
    assert_int_equal(am_sig_plan_new(&p, 0, 10000000, 10000, 12345), AM_OK);
    am_sig_plan_free(&p);
    assert_int_equal(am_sig_plan_new(&p, 1, 10000000, 10000, 12345), AM_OK);
    am_sig_plan_free(&p);
}

/* One segment's recall result for the exposure tracker: words w[0..n)
 * with shots sh and hits hit[sys * n + i] (all borrowed). */
static void expo_seg(am_expo *e, size_t nsys, char **w, int64_t *sh, unsigned char *hit, size_t n)
{
    am_recall_seg r;
    memset(&r, 0, sizeof r);
    r.words.v = w;
    r.words.n = n;
    r.shot = sh;
    r.nsys = nsys;
    r.hit = hit;
    am_expo_add(e, &r);
}

/* Two sessions, two systems: the second session starts the word counts
 * again; words never produced are counted per session; the median. */
static void test_exposures_two_sessions(void **state)
{
    (void)state;
    am_expo *e = am_expo_new(2);
    char a[] = "a", b[] = "b", c[] = "c";
    char *w1[] = {a, b}, *w2[] = {a, c}, *w3[] = {a};
    int64_t s1[] = {0, 0}, s2[] = {1, 0}, s3[] = {2};
    /* system 0 produces a at shot 2, c at 0; system 1 a at 1, never b */
    unsigned char h1[] = {0, 0, 0, 0}, h2[] = {0, 1, 1, 0}, h3[] = {1, 1};
    expo_seg(e, 2, w1, s1, h1, 2);
    expo_seg(e, 2, w2, s2, h2, 2);
    expo_seg(e, 2, w3, s3, h3, 1);
    am_expo_session(e);
    /* session 2: a is new again, produced at once by both */
    unsigned char h4[] = {1, 1};
    expo_seg(e, 2, w3, s1, h4, 1);
    am_expo_session(e);
    const am_expo_hist *x = am_expo_get(e, 0), *y = am_expo_get(e, 1);
    assert_int_equal(x->bins[0], 2); /* c, then a in session 2 */
    assert_int_equal(x->bins[2], 1);
    assert_int_equal(x->never, 1); /* b */
    assert_int_equal(y->bins[0], 1);
    assert_int_equal(y->bins[1], 1);
    assert_int_equal(y->never, 2); /* b, c */
    assert_true(am_expo_median(x, 1) == 2.0);
    assert_true(am_expo_median(y, 0) == 0.5); /* {0, 1}: the two middle values */
    am_expo_hist none = {{0}, 3};
    assert_true(isnan(am_expo_median(&none, 1)));
    am_expo_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raw_draws),
        cmocka_unit_test(test_choice_equals_numpy),
        cmocka_unit_test(test_bools_equal_numpy),
        cmocka_unit_test(test_np_sum_pairwise),
        cmocka_unit_test(test_paired_identical),
        cmocka_unit_test(test_paired_clear_difference),
        cmocka_unit_test(test_plan_memory_does_not_grow),
        cmocka_unit_test(test_exposures_two_sessions),
        cmocka_unit_test(test_cancel_stops_the_tests),
        cmocka_unit_test(test_many_metrics_equal_one_at_a_time),
        cmocka_unit_test(test_bootstrap_paths_equal_reference),
        cmocka_unit_test(test_views_and_offsets_equal_reference),
        cmocka_unit_test(test_choice_count_equals_choice),
        cmocka_unit_test(test_batched_draws_equal_one_at_a_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
