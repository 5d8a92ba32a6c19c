/* test_chrf.c — chrF / chrF++ against sacreBLEU 2.6.0 (data/golden). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chrf.h"
#include "text.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One reference: am_chrf_stats_add with refs = &ref. */
static int add1(am_chrf_stats *st, am_chrf_ws *ws, const am_chrf_opts *o, const char *hyp,
                const char *ref)
{
    return am_chrf_stats_add(st, ws, o, NULL, hyp, ref ? &ref : NULL, 1);
}

static double chrf_of(const char *hyp, const char *ref, int word_order)
{
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, hyp, ref), AM_OK);
    am_chrf_score_opts so;
    am_chrf_score_opts_init(&so, word_order);
    double v = -1;
    assert_int_equal(am_chrf_sentence_score(&st, &so, &v), AM_OK);
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
    assert_int_equal(json_array_size(per), tico.n);
    assert_int_equal(tico.n, 971);

    am_chrf_ws *ws;
    assert_int_equal(am_chrf_ws_new(&ws), AM_OK);
    am_chrf_score_opts o2, o2pp;
    am_chrf_score_opts_init(&o2, 0);
    am_chrf_score_opts_init(&o2pp, 2);
    am_chrf_stats corpus;
    am_chrf_stats_init(&corpus);
    const char **hyps = calloc(tico.n, sizeof *hyps);
    assert_non_null(hyps);
    double maxd = 0;
    for (size_t i = 0; i < tico.n; i++) {
        json_t *e = json_array_get(per, i);
        assert_string_equal(json_string_value(json_object_get(e, "id")), ts[i].id);
        hyps[i] = ts[i].hyp;
        assert_non_null(hyps[i]);
        am_chrf_stats seg;
        am_chrf_stats_init(&seg);
        assert_int_equal(add1(&seg, ws, NULL, hyps[i], ts[i].ref), AM_OK);
        double s;
        assert_int_equal(am_chrf_sentence_score(&seg, &o2, &s), AM_OK);
        double want = json_real_value(json_object_get(e, "sentence_chrf2"));
        if (fabs(s - want) > maxd)
            maxd = fabs(s - want);
        if (fabs(s - want) > 1e-9)
            print_error("segment %s: hyp [%s] ref [%s]\n", ts[i].id, hyps[i], ts[i].ref);
        tu_assert_close(s, want, 1e-9);
        assert_int_equal(am_chrf_merge(&corpus, &seg), AM_OK);
    }
    json_t *sb = json_object_get(g, "sacrebleu_2.6.0");
    double c2, c2pp;
    assert_int_equal(am_chrf_score(&corpus, &o2, &c2), AM_OK);
    assert_int_equal(am_chrf_score(&corpus, &o2pp, &c2pp), AM_OK);
    double w2 = json_real_value(json_object_get(sb, "chrf2"));
    double w2pp = json_real_value(json_object_get(sb, "chrf2pp"));
    printf("chrF2 corpus %.17g (golden %.17g, |d| %.3g); chrF2++ %.17g (golden %.17g, |d| %.3g);"
           " max |d| sentence chrF2 %.3g\n",
           c2, w2, fabs(c2 - w2), c2pp, w2pp, fabs(c2pp - w2pp), maxd);
    tu_assert_close(c2, w2, 1e-9);
    tu_assert_close(c2pp, w2pp, 1e-9);

    /* Accumulating directly gives the same statistics as merging segments. */
    am_chrf_stats direct;
    am_chrf_stats_init(&direct);
    for (size_t i = 0; i < tico.n; i++)
        assert_int_equal(add1(&direct, ws, NULL, hyps[i], ts[i].ref), AM_OK);
    assert_memory_equal(&direct, &corpus, sizeof corpus);

    /* Speed: statistics (char orders 1-6, word orders 1-4) + chrF2 + chrF2++. */
    int reps = 20;
    double t0 = now_s(), sink = 0;
    for (int r = 0; r < reps; r++)
        for (size_t i = 0; i < tico.n; i++) {
            am_chrf_stats seg;
            am_chrf_stats_init(&seg);
            add1(&seg, ws, NULL, hyps[i], ts[i].ref);
            double a, b;
            am_chrf_score(&seg, &o2, &a);
            am_chrf_score(&seg, &o2pp, &b);
            sink += a + b;
        }
    double us = (now_s() - t0) / (reps * (double)tico.n) * 1e6;
    printf("chrF2 + chrF2++ per TICO segment: %.2f us (checksum %.3f)\n", us, sink);

    free(hyps);
    am_chrf_ws_free(ws);
    tu_tico_free(&tico);
    json_decref(g);
}

/* ---- behaviour ----------------------------------------------------------------- */

static void test_identical(void **state)
{
    (void)state;
    assert_true(chrf_of("le chat noir .", "le chat noir .", 0) == 100.0);
    assert_true(chrf_of("le chat noir .", "le chat noir .", 2) == 100.0);
    /* Whitespace does not count: "ab c" and "abc" have the same characters. */
    assert_true(chrf_of("ab c", "abc", 0) == 100.0);
    /* U+00A0 and U+3000 are str.isspace() whitespace. */
    assert_true(chrf_of("a\xC2\xA0"
                        "b\xE3\x80\x80"
                        "c",
                        "abc", 0) == 100.0);
    assert_true(chrf_of("xyz", "abc", 0) == 0.0);
}

static void test_char_stats(void **state)
{
    (void)state;
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    /* "été" is 3 code points, not 5 bytes. */
    assert_int_equal(add1(&st, NULL, NULL, "été e", "étée"), AM_OK);
    assert_int_equal(st.ch[0][0], 4);
    assert_int_equal(st.ch[0][1], 4);
    assert_int_equal(st.ch[0][2], 4);
    assert_int_equal(st.ch[3][2], 1);
    assert_int_equal(st.ch[4][0], 0);
    assert_int_equal(st.ch[4][1], 0);

    /* Orders the reference lacks record no hypothesis n-grams. */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "abcdefgh", "ab"), AM_OK);
    assert_int_equal(st.ch[0][0], 8);
    assert_int_equal(st.ch[0][1], 2);
    assert_int_equal(st.ch[0][2], 2);
    assert_int_equal(st.ch[1][0], 7);
    assert_int_equal(st.ch[1][2], 1);
    assert_int_equal(st.ch[2][0], 0);
    assert_int_equal(st.ch[2][1], 0);
    /* Clipped counts: "aaaa" vs "aa" matches 2 unigrams and 1 bigram. */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "aaaa", "aa"), AM_OK);
    assert_int_equal(st.ch[0][2], 2);
    assert_int_equal(st.ch[1][0], 3);
    assert_int_equal(st.ch[1][2], 1);
    /* P = (2/4 + 1/3)/2, R = (2/2 + 1/1)/2 → F2 = 5PR/(4P+R). */
    double P = (2.0 / 4 + 1.0 / 3) / 2, R = 1.0, f = 5 * P * R / (4 * P + R) * 100;
    double v;
    assert_int_equal(am_chrf_score(&st, NULL, &v), AM_OK);
    tu_assert_close(v, f, 1e-12);

    /* Whitespace kept when asked. */
    am_chrf_opts o;
    am_chrf_opts_init(&o);
    o.whitespace = 1;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, &o, "a b", "ab"), AM_OK);
    assert_int_equal(st.ch[0][0], 3);
    assert_int_equal(st.ch[0][2], 2);
    assert_int_equal(st.ch[1][2], 0);
}

static void test_word_punct(void **state)
{
    (void)state;
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    /* "(hi)" → "(hi" ")" (sacreBLEU issue #124); "there." → "there" "." ;
     * ref: "hi" "there" "." ("." alone is one character and stays). */
    assert_int_equal(add1(&st, NULL, NULL, "(hi) there.", "hi there ."), AM_OK);
    assert_int_equal(st.wd[0][0], 4);
    assert_int_equal(st.wd[0][1], 3);
    assert_int_equal(st.wd[0][2], 2);
    assert_int_equal(st.wd[1][0], 3);
    assert_int_equal(st.wd[1][1], 2);
    assert_int_equal(st.wd[1][2], 1);
    /* Leading punctuation; non-ASCII punctuation is not split; one char only. */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "«oui» 'non ..", "«oui» ' non . ."), AM_OK);
    /* hyp words: «oui» ' non .. ⇒ "..": last is '.', → "." "." ; total 5 */
    assert_int_equal(st.wd[0][0], 5);
    assert_int_equal(st.wd[0][1], 5);
    assert_int_equal(st.wd[0][2], 5);
    assert_int_equal(st.wd[1][2], 4);
    /* A one-code-point non-ASCII token stays whole. */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "é.", "é ."), AM_OK);
    assert_int_equal(st.wd[0][2], 2);
}

static void test_empty(void **state)
{
    (void)state;
    am_chrf_stats st, before;
    am_chrf_stats_init(&st);
    double v = -1;
    /* Empty hypothesis: no hypothesis n-grams, score 0. */
    assert_int_equal(add1(&st, NULL, NULL, "", "le chat"), AM_OK);
    assert_int_equal(st.ch[0][0], 0);
    assert_int_equal(st.ch[0][1], 6);
    assert_int_equal(st.wd[0][1], 2);
    assert_int_equal(am_chrf_score(&st, NULL, &v), AM_OK);
    assert_true(v == 0.0);
    /* Empty reference: accepted since sacreBLEU 2.2, no n-grams, the hypothesis
     * counts 0 ("no hits if no reference"), the sentence score is 0.0. */
    before = st;
    assert_int_equal(add1(&st, NULL, NULL, "le chat", ""), AM_OK);
    assert_int_equal(add1(&st, NULL, NULL, "", ""), AM_OK);
    assert_memory_equal(&st, &before, sizeof st);
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "le chat", ""), AM_OK);
    v = -1;
    assert_int_equal(am_chrf_sentence_score(&st, NULL, &v), AM_OK);
    assert_true(v == 0.0);
    am_chrf_stats_init(&st);
    /* Whitespace-only reference is accepted: no n-grams at all, score 0. */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "le chat", "  "), AM_OK);
    for (int n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        for (int k = 0; k < 3; k++)
            assert_int_equal(st.ch[n][k], 0);
    assert_int_equal(am_chrf_score(&st, NULL, &v), AM_OK);
    assert_true(v == 0.0);
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "", " "), AM_OK);
    am_chrf_score_opts so;
    am_chrf_score_opts_init(&so, 2);
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_OK);
    assert_true(v == 0.0);
    so.eps_smoothing = 1;
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_OK);
    assert_false(isnan(v));
    tu_assert_close(v, 100 * 1e-16, 1e-20);
    /* Bad arguments. */
    assert_int_equal(add1(NULL, NULL, NULL, "a", "a"), AM_ERR_INVALID);
    assert_int_equal(add1(&st, NULL, NULL, NULL, "a"), AM_ERR_INVALID);
    so.char_order = 7;
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_ERR_INVALID);
    so.char_order = 0;
    so.word_order = 0;
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_ERR_INVALID);
}

static void test_eps_smoothing(void **state)
{
    (void)state;
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "ab", "ab"), AM_OK);
    am_chrf_score_opts so;
    am_chrf_score_opts_init(&so, 0);
    double v;
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_OK);
    assert_true(v == 100.0); /* effective order: only orders 1-2 count */
    so.eps_smoothing = 1;
    assert_int_equal(am_chrf_score(&st, &so, &v), AM_OK);
    tu_assert_close(v, 100.0 * 2 / 6, 1e-9); /* orders 3-6 contribute ~eps */
}

static void test_lowercase(void **state)
{
    (void)state;
    am_buf b;
    am_buf_init(&b);
    /* Expected strings are Python 3's str.lower() of the inputs. */
    assert_int_equal(am_text_py_lower("\xC3\x80"
                                      "B \xC4\xB0stanbul \xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3 "
                                      "\xCE\xA3 \xCE\x91\xCE\xA3. \xCE\x91\xCE\xA3'\xCE\x91",
                                      &b),
                     AM_OK);
    assert_string_equal(am_buf_str(&b), "\xC3\xA0"
                                        "b i\xCC\x87stanbul \xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82 "
                                        "\xCF\x83 \xCE\xB1\xCF\x82. \xCE\xB1\xCF\x83'\xCE\xB1");
    assert_int_equal(am_text_py_lower("Stra\xC3\x9F"
                                      "e \xC7\x85",
                                      &b),
                     AM_OK);
    assert_string_equal(am_buf_str(&b), "stra\xC3\x9F"
                                        "e \xC7\x86");
    assert_int_equal(am_text_py_lower("", &b), AM_OK);
    assert_string_equal(am_buf_str(&b), "");
    am_buf_cleanup(&b);

    am_chrf_opts o;
    am_chrf_opts_init(&o);
    o.lowercase = 1;
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, &o, "Le CHAT", "le chat"), AM_OK);
    double v;
    assert_int_equal(am_chrf_score(&st, NULL, &v), AM_OK);
    assert_true(v == 100.0);
    assert_true(chrf_of("Le CHAT", "le chat", 0) < 100.0);
}

static void test_merge(void **state)
{
    (void)state;
    am_chrf_ws *ws;
    assert_int_equal(am_chrf_ws_new(&ws), AM_OK);
    const char *h[] = {"le chat est noir .", "un chien", "", "abc def ghi"};
    const char *r[] = {"le chat noir .", "une chienne", "rien", "abc ghi def"};
    am_chrf_stats a, b, all;
    am_chrf_stats_init(&a);
    am_chrf_stats_init(&b);
    am_chrf_stats_init(&all);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(add1(i < 2 ? &a : &b, ws, NULL, h[i], r[i]), AM_OK);
        assert_int_equal(add1(&all, ws, NULL, h[i], r[i]), AM_OK);
    }
    assert_int_equal(am_chrf_merge(&a, &b), AM_OK);
    assert_memory_equal(&a, &all, sizeof a);
    /* Overflow is refused and leaves dst unchanged. */
    am_chrf_stats big;
    am_chrf_stats_init(&big);
    big.wd[1][2] = INT64_MAX;
    am_chrf_stats keep = a;
    assert_int_equal(am_chrf_merge(&a, &big), AM_ERR_RANGE);
    assert_memory_equal(&a, &keep, sizeof a);
    /* A workspace reused across many calls keeps giving the same answer. */
    am_chrf_stats x, y;
    for (int k = 0; k < 3; k++) {
        am_chrf_stats_init(&x);
        am_chrf_stats_init(&y);
        assert_int_equal(add1(&x, ws, NULL, h[0], r[0]), AM_OK);
        assert_int_equal(add1(&y, NULL, NULL, h[0], r[0]), AM_OK);
        assert_memory_equal(&x, &y, sizeof x);
    }
    am_chrf_ws_free(ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tico), cmocka_unit_test(test_identical),
        cmocka_unit_test(test_char_stats),  cmocka_unit_test(test_word_punct),
        cmocka_unit_test(test_empty),       cmocka_unit_test(test_eps_smoothing),
        cmocka_unit_test(test_lowercase),   cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
