/* test_bleu.c — BLEU against sacreBLEU 2.6.0 (data/golden). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bleu.h"
#include "chrf.h"

/* One reference, as the array am_bleu_stats_add takes. */
#define AM_REF1(r) ((const char *const[]){(r)})

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static am_bleu_stats stats_of(const char *hyp, const char *ref)
{
    am_bleu_stats st;
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, hyp, AM_REF1(ref), 1), AM_OK);
    return st;
}

static double sbleu(const char *hyp, const char *ref)
{
    am_bleu_stats st = stats_of(hyp, ref);
    double v = -1;
    assert_int_equal(am_bleu_sentence_score(&st, &v), AM_OK);
    assert_false(isnan(v));
    return v;
}

/* ---- golden: TICO-19 En→Fr dev, sacreBLEU 2.6.0 ---------------------------- */

static void test_golden_tico(void **state)
{
    (void)state;
    json_t *g = tu_json("data/golden/tico19-enfr-dev.json");
    tu_tico tico;
    tu_tico_load(&tico);
    const tu_tico_seg *ts = tico.segs;
    json_t *per = json_object_get(g, "per_segment");
    assert_true(json_is_array(per));
    assert_int_equal(tico.n, 971);
    assert_int_equal(json_array_size(per), tico.n);

    am_bleu_ws *ws;
    assert_int_equal(am_bleu_ws_new(&ws), AM_OK);
    am_bleu_stats corpus;
    am_bleu_stats_init(&corpus);
    const char **hyps = calloc(tico.n, sizeof *hyps);
    assert_non_null(hyps);
    double maxd = 0;
    for (size_t i = 0; i < tico.n; i++) {
        json_t *e = json_array_get(per, i);
        assert_string_equal(json_string_value(json_object_get(e, "id")), ts[i].id);
        hyps[i] = ts[i].hyp;
        assert_non_null(hyps[i]);
        am_bleu_stats seg;
        am_bleu_stats_init(&seg);
        assert_int_equal(am_bleu_stats_add(&seg, ws, NULL, hyps[i], AM_REF1(ts[i].ref), 1), AM_OK);
        double s;
        assert_int_equal(am_bleu_sentence_score(&seg, &s), AM_OK);
        double want = json_real_value(json_object_get(e, "sentence_bleu"));
        if (fabs(s - want) > maxd)
            maxd = fabs(s - want);
        if (fabs(s - want) > 1e-9)
            print_error("segment %s: hyp [%s] ref [%s]\n", ts[i].id, hyps[i], ts[i].ref);
        tu_assert_close(s, want, 1e-9);
        assert_int_equal(am_bleu_merge(&corpus, &seg), AM_OK);
    }
    json_t *sb = json_object_get(g, "sacrebleu_2.6.0");
    double c, w = json_real_value(json_object_get(sb, "bleu"));
    assert_int_equal(am_bleu_score(&corpus, &c), AM_OK);
    printf("BLEU corpus %.17g (golden %.17g, |d| %.3g); max |d| sentence BLEU %.3g\n", c, w,
           fabs(c - w), maxd);
    tu_assert_close(c, w, 1e-9);
    /* The corpus score is not the mean of sentence scores. */
    assert_true(c > 0 && c < 100);

    /* Accumulating directly gives the same statistics as merging. */
    am_bleu_stats direct;
    am_bleu_stats_init(&direct);
    for (size_t i = 0; i < tico.n; i++)
        assert_int_equal(am_bleu_stats_add(&direct, ws, NULL, hyps[i], AM_REF1(ts[i].ref), 1),
                         AM_OK);
    assert_memory_equal(&direct, &corpus, sizeof corpus);

    /* Speed: BLEU alone, and BLEU + chrF2 + chrF2++ (statistics and scores). */
    am_chrf_ws *cws;
    assert_int_equal(am_chrf_ws_new(&cws), AM_OK);
    am_chrf_score_opts o2, o2pp;
    am_chrf_score_opts_init(&o2, 0);
    am_chrf_score_opts_init(&o2pp, 2);
    int reps = 20;
    double sink = 0;
    for (int all = 0; all < 2; all++) {
        double t0 = now_s();
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < tico.n; i++) {
                am_bleu_stats bs;
                am_bleu_stats_init(&bs);
                am_bleu_stats_add(&bs, ws, NULL, hyps[i], AM_REF1(ts[i].ref), 1);
                double a = 0, b = 0, d = 0;
                am_bleu_sentence_score(&bs, &a);
                if (all) {
                    am_chrf_stats cs;
                    am_chrf_stats_init(&cs);
                    am_chrf_stats_add(&cs, cws, NULL, NULL, hyps[i], &ts[i].ref, 1);
                    am_chrf_score(&cs, &o2, &b);
                    am_chrf_score(&cs, &o2pp, &d);
                }
                sink += a + b + d;
            }
        double us = (now_s() - t0) / (reps * (double)tico.n) * 1e6;
        printf("%s per TICO segment: %.2f us (checksum %.3f)\n",
               all ? "BLEU + chrF2 + chrF2++" : "BLEU", us, sink);
    }
    am_chrf_ws_free(cws);

    free(hyps);
    am_bleu_ws_free(ws);
    tu_tico_free(&tico);
    json_decref(g);
}

/* ---- behaviour ----------------------------------------------------------------- */

static void test_counts(void **state)
{
    (void)state;
    /* 13a splits the final period; "a b c d ." vs "a b x d .". */
    am_bleu_stats st = stats_of("a b c d.", "a b x d.");
    assert_int_equal(st.sys_len, 5);
    assert_int_equal(st.ref_len, 5);
    assert_int_equal(st.correct[0], 4);
    assert_int_equal(st.total[0], 5);
    assert_int_equal(st.correct[1], 2); /* "a b", "d ." */
    assert_int_equal(st.total[1], 4);
    assert_int_equal(st.correct[2], 0);
    assert_int_equal(st.total[2], 3);
    assert_int_equal(st.correct[3], 0);
    assert_int_equal(st.total[3], 2);
    /* Clipping: "the the the" vs "the cat". */
    st = stats_of("the the the", "the cat");
    assert_int_equal(st.correct[0], 1);
    assert_int_equal(st.total[0], 3);
    assert_int_equal(st.correct[1], 0);
    /* Multi-byte tokens compare exactly; U+00A0 separates tokens like str.split(). */
    st = stats_of("\xC3\xA9t\xC3\xA9\xC2\xA0"
                  "chaud",
                  "\xC3\xA9t\xC3\xA9 chaud");
    assert_int_equal(st.sys_len, 2);
    assert_int_equal(st.correct[1], 1);
}

static void test_scores(void **state)
{
    (void)state;
    /* exp smoothing: precisions 80, 50, 100/(2*3), 100/(4*2). */
    am_bleu_stats st = stats_of("a b c d.", "a b x d.");
    am_bleu_result r;
    assert_int_equal(am_bleu_compute(&st, NULL, &r), AM_OK);
    tu_assert_close(r.precisions[0], 80.0, 1e-12);
    tu_assert_close(r.precisions[1], 50.0, 1e-12);
    tu_assert_close(r.precisions[2], 100.0 / 6, 1e-12);
    tu_assert_close(r.precisions[3], 12.5, 1e-12);
    assert_true(r.bp == 1.0);
    double want = exp((log(80.0) + log(50.0) + log(100.0 / 6) + log(12.5)) / 4);
    tu_assert_close(r.score, want, 1e-12);

    /* floor / add-k / none. */
    am_bleu_score_opts o;
    am_bleu_score_opts_init(&o, 0);
    o.smooth = AM_BLEU_SMOOTH_FLOOR;
    assert_int_equal(am_bleu_compute(&st, &o, &r), AM_OK);
    tu_assert_close(r.precisions[2], 100 * 0.1 / 3, 1e-12);
    o.smooth = AM_BLEU_SMOOTH_ADD_K;
    assert_int_equal(am_bleu_compute(&st, &o, &r), AM_OK);
    tu_assert_close(r.precisions[1], 100.0 * 3 / 5, 1e-12);
    tu_assert_close(r.precisions[2], 100.0 * 1 / 4, 1e-12);
    o.smooth = AM_BLEU_SMOOTH_NONE;
    assert_int_equal(am_bleu_compute(&st, &o, &r), AM_OK);
    assert_true(r.score == 0.0);

    /* Identical sentences. */
    tu_assert_close(sbleu("le chat est sur le tapis .", "le chat est sur le tapis ."), 100.0, 1e-9);
    /* One word: sentence BLEU uses the effective order (1); corpus BLEU is 0. */
    tu_assert_close(sbleu("bonjour", "bonjour"), 100.0, 1e-9);
    st = stats_of("bonjour", "bonjour");
    double c = -1;
    assert_int_equal(am_bleu_score(&st, &c), AM_OK);
    assert_true(c == 0.0);
    /* Brevity penalty. */
    st = stats_of("a b c", "a b c d e f");
    assert_int_equal(am_bleu_compute(&st, NULL, &r), AM_OK);
    tu_assert_close(r.bp, exp(1 - 6.0 / 3), 1e-15);
    /* Bad options. */
    o.max_order = 5;
    assert_int_equal(am_bleu_compute(&st, &o, &r), AM_ERR_INVALID);
    o.max_order = 2;
    o.smooth = AM_BLEU_SMOOTH_EXP;
    assert_int_equal(am_bleu_compute(&st, &o, &r), AM_OK);
    tu_assert_close(r.score, exp(1 - 2.0) * exp((log(100.0) + log(100.0)) / 2), 1e-12);
}

static void test_empty(void **state)
{
    (void)state;
    am_bleu_stats st, keep;
    double v = -1;
    am_bleu_result r;
    /* Empty hypothesis: sys_len 0, BP 0, BLEU 0. */
    st = stats_of("", "le chat");
    assert_int_equal(st.sys_len, 0);
    assert_int_equal(st.ref_len, 2);
    assert_int_equal(st.total[0], 0);
    assert_int_equal(am_bleu_sentence_score(&st, &v), AM_OK);
    assert_true(v == 0.0);
    assert_int_equal(am_bleu_compute(&st, NULL, &r), AM_OK);
    assert_true(r.bp == 0.0);
    /* Empty reference: since sacreBLEU 2.2 a reference without tokens
     * (ref_len 0): the hypothesis n-grams count, nothing matches, BLEU 0. */
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "le chat", AM_REF1(""), 1), AM_OK);
    assert_int_equal(st.sys_len, 2);
    assert_int_equal(st.ref_len, 0);
    assert_int_equal(st.total[0], 2);
    assert_int_equal(st.correct[0], 0);
    assert_int_equal(am_bleu_sentence_score(&st, &v), AM_OK);
    assert_true(v == 0.0);
    keep = st;
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "", AM_REF1(""), 1), AM_OK);
    assert_memory_equal(&st, &keep, sizeof st);
    /* Whitespace-only reference: no tokens, BP 1, no match → 0. */
    st = stats_of("le chat", "   ");
    assert_int_equal(st.ref_len, 0);
    assert_int_equal(st.sys_len, 2);
    assert_int_equal(am_bleu_compute(&st, NULL, &r), AM_OK);
    assert_true(r.bp == 1.0 && r.score == 0.0);
    st = stats_of(" ", " ");
    assert_int_equal(am_bleu_sentence_score(&st, &v), AM_OK);
    assert_true(v == 0.0);
    assert_int_equal(am_bleu_compute(&st, NULL, &r), AM_OK);
    assert_true(r.bp == 1.0);
    /* Bad arguments. */
    assert_int_equal(am_bleu_stats_add(NULL, NULL, NULL, "a", AM_REF1("a"), 1), AM_ERR_INVALID);
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, NULL, AM_REF1("a"), 1), AM_ERR_INVALID);
    am_bleu_opts bo;
    am_bleu_opts_init(&bo);
    bo.tokenizer = (enum am_tok_kind)42;
    assert_int_equal(am_bleu_stats_add(&st, NULL, &bo, "a", AM_REF1("a"), 1), AM_ERR_INVALID);
    assert_int_equal(am_bleu_score(NULL, &v), AM_ERR_INVALID);
}

static void test_preprocess(void **state)
{
    (void)state;
    /* str.rstrip() comes before 13a, whose "-\n" removal then cannot apply. */
    am_bleu_stats st = stats_of("a b-\n", "a b-");
    assert_int_equal(st.correct[1], 1);
    assert_int_equal(st.total[1], 1);
    /* Lowercase option (str.lower()). */
    assert_true(sbleu("Le CHAT", "le chat") < 100.0);
    am_bleu_opts o;
    am_bleu_opts_init(&o);
    o.lowercase = 1;
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, &o, "Le CHAT \xC3\x89T\xC3\x89",
                                       AM_REF1("le chat \xC3\xa9t\xC3\xa9"), 1),
                     AM_OK);
    assert_int_equal(st.correct[2], 1);
    /* Another tokenizer: "none" keeps "chat." whole. */
    o.lowercase = 0;
    o.tokenizer = AM_TOK_NONE;
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, &o, "le chat.", AM_REF1("le chat ."), 1), AM_OK);
    assert_int_equal(st.sys_len, 2);
    assert_int_equal(st.correct[0], 1);
}

static void test_merge(void **state)
{
    (void)state;
    am_bleu_ws *ws;
    assert_int_equal(am_bleu_ws_new(&ws), AM_OK);
    const char *h[] = {"le chat est noir .", "un chien", "", "abc def ghi"};
    const char *r[] = {"le chat noir .", "une chienne", "rien", "abc ghi def"};
    am_bleu_stats a, b, all;
    am_bleu_stats_init(&a);
    am_bleu_stats_init(&b);
    am_bleu_stats_init(&all);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(am_bleu_stats_add(i < 2 ? &a : &b, ws, NULL, h[i], AM_REF1(r[i]), 1),
                         AM_OK);
        assert_int_equal(am_bleu_stats_add(&all, ws, NULL, h[i], AM_REF1(r[i]), 1), AM_OK);
    }
    assert_int_equal(am_bleu_merge(&a, &b), AM_OK);
    assert_memory_equal(&a, &all, sizeof a);
    assert_int_equal(all.sys_len, 5 + 2 + 0 + 3);
    am_bleu_stats big, keep = a;
    am_bleu_stats_init(&big);
    big.total[3] = INT64_MAX;
    assert_int_equal(am_bleu_merge(&a, &big), AM_ERR_RANGE);
    assert_memory_equal(&a, &keep, sizeof a);
    am_bleu_ws_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tico), cmocka_unit_test(test_counts),
        cmocka_unit_test(test_scores),      cmocka_unit_test(test_empty),
        cmocka_unit_test(test_preprocess),  cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
