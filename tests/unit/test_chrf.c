/* test_chrf.c — chrF / chrF++ against sacreBLEU 2.6.0 (data/golden). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chrf.h"
#include "config.h"
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

/* ---- shared/data multilingual golden values (data/golden/multilingual.json) - */

/* The helpers (tu_ml_*) are in testutil.c, shared with test_ter.c / test_chrf.c. */

/* The session options of a golden chrF case into cfg. */
static void chrf_case_config(const tu_ml_cmd *c, am_config *cfg)
{
    am_config_init(cfg);
    const char *v = NULL;
    if (tu_ml_has(c, "--chrf-word-order", &v))
        assert_int_equal(am_config_set(cfg, "chrf_word_order", v, NULL), AM_OK);
    if (tu_ml_has(c, "--chrf-whitespace", NULL))
        assert_int_equal(am_config_set(cfg, "chrf-whitespace", "true", NULL), AM_OK);
    if (tu_ml_has(c, "--chrf-lowercase", NULL))
        assert_int_equal(am_config_set(cfg, "chrf-lowercase", "true", NULL), AM_OK);
}

/* Every chrF value of the multilingual golden file (corpus and sentence
 * level, one and two references, Chinese, Japanese, German, English;
 * whitespace, lowercase, word order 2) from the core API, bit for bit, and
 * its sacreBLEU signature and metric name. */
static void test_golden_multilingual(void **state)
{
    (void)state;
    json_t *g = tu_json("data/golden/multilingual.json");
    am_chrf_ws *ws;
    assert_int_equal(am_chrf_ws_new(&ws), AM_OK);
    size_t ncases = 0, nsent = 0;
    const char *kinds[] = {"corpus", "sentence"};
    am_buf sig, name;
    am_buf_init(&sig);
    am_buf_init(&name);
    for (int kind = 0; kind < 2; kind++) {
        json_t *arr = json_object_get(g, kinds[kind]);
        size_t i;
        json_t *cs;
        json_array_foreach(arr, i, cs)
        {
            if (strcmp(json_string_value(json_object_get(cs, "metric")), "chrf"))
                continue;
            tu_ml_cmd c;
            tu_ml_cmd_parse(json_string_value(json_object_get(cs, "command")), &c);
            am_config cfg;
            chrf_case_config(&c, &cfg);
            am_chrf_opts o;
            am_chrf_score_opts so;
            am_config_chrf_opts(&cfg, 0, &o, &so);
            am_config_chrf_signature(&cfg, 0, c.nrefs, &name, &sig);
            assert_string_equal(am_buf_str(&sig),
                                json_string_value(json_object_get(cs, "signature")));
            tu_ml_files f;
            tu_ml_files_load(g, cs, &c, &f);
            am_chrf_stats corpus;
            am_chrf_stats_init(&corpus);
            json_t *sent = json_object_get(cs, "scores");
            for (size_t k = 0; k < f.nseg; k++) {
                const char *refs[4];
                for (size_t r = 0; r < f.nrefs; r++)
                    refs[r] = f.ref[r][k];
                am_chrf_stats seg;
                am_chrf_stats_init(&seg);
                assert_int_equal(am_chrf_stats_add(&seg, ws, &o, &so, f.hyp[k], refs, f.nrefs),
                                 AM_OK);
                assert_int_equal(am_chrf_merge(&corpus, &seg), AM_OK);
                if (kind == 1 && k < json_array_size(sent)) {
                    double v = -1;
                    assert_int_equal(am_chrf_sentence_score(&seg, &so, &v), AM_OK);
                    if (v != json_real_value(json_array_get(sent, k)))
                        fail_msg("%s segment %zu: %.17g, sacreBLEU %.17g",
                                 json_string_value(json_object_get(cs, "id")), k, v,
                                 json_real_value(json_array_get(sent, k)));
                    nsent++;
                }
            }
            if (kind == 0) {
                double v = -1;
                assert_int_equal(am_chrf_score(&corpus, &so, &v), AM_OK);
                if (v != json_real_value(json_object_get(cs, "score")))
                    fail_msg("%s: %.17g, sacreBLEU %.17g",
                             json_string_value(json_object_get(cs, "id")), v,
                             json_real_value(json_object_get(cs, "score")));
                assert_string_equal(
                    am_buf_str(&name),
                    json_string_value(json_object_get(json_object_get(cs, "cli_json"), "name")));
            }
            tu_ml_files_free(&f);
            free(c.words);
            ncases++;
        }
    }
    /* 40 corpus and 16 sentence-level chrF cases (6 sets; the 2-reference
     * sets with one and with two references) */
    assert_int_equal(ncases, 56);
    assert_true(nsent >= 200);
    am_buf_cleanup(&sig);
    am_buf_cleanup(&name);
    am_chrf_ws_free(ws);
    json_decref(g);
}

/* Several references: the reference with the best F score under the score
 * options is the one counted; equal scores keep the first; the choice can
 * differ between chrF and chrF++. */
static void test_multi_ref_rule(void **state)
{
    (void)state;
    am_chrf_score_opts c2, c2pp;
    am_chrf_score_opts_init(&c2, 0);
    am_chrf_score_opts_init(&c2pp, 2);
    const char *refs[] = {"the cat sat", "a cat sat on the mat", "the cat sat"};
    am_chrf_stats one, multi;
    am_chrf_stats_init(&one);
    am_chrf_stats_init(&multi);
    /* the second reference matches the hypothesis exactly: it wins */
    assert_int_equal(am_chrf_stats_add(&multi, NULL, NULL, &c2, "a cat sat on the mat", refs, 3),
                     AM_OK);
    assert_int_equal(add1(&one, NULL, NULL, "a cat sat on the mat", refs[1]), AM_OK);
    assert_memory_equal(&one, &multi, sizeof one);
    double v = 0;
    assert_int_equal(am_chrf_score(&multi, &c2, &v), AM_OK);
    tu_assert_close(v, 100.0, 1e-9);
    /* equal references: the statistics are the first one's */
    const char *same[] = {"x y", "x y"};
    am_chrf_stats_init(&multi);
    am_chrf_stats_init(&one);
    assert_int_equal(am_chrf_stats_add(&multi, NULL, NULL, NULL, "x z", same, 2), AM_OK);
    assert_int_equal(add1(&one, NULL, NULL, "x z", same[0]), AM_OK);
    assert_memory_equal(&one, &multi, sizeof one);
    /* chrF and chrF++ can prefer different references: ref A shares long
     * character n-grams but no words ("abcdef" vs "abcdefg"), ref B shares
     * the words but fewer characters */
    const char *ab[] = {"abcdefgh ijklmnop", "abc ijk xyz"};
    const char *hyp = "abcdefgh-ijklmnop abc ijk";
    am_chrf_stats s0, s2;
    am_chrf_stats_init(&s0);
    am_chrf_stats_init(&s2);
    assert_int_equal(am_chrf_stats_add(&s0, NULL, NULL, &c2, hyp, ab, 2), AM_OK);
    assert_int_equal(am_chrf_stats_add(&s2, NULL, NULL, &c2pp, hyp, ab, 2), AM_OK);
    /* each equals the single-reference statistics of the reference it chose,
     * and that choice has the higher score of the two under its options */
    for (int k = 0; k < 2; k++) {
        const am_chrf_score_opts *so = k ? &c2pp : &c2;
        const am_chrf_stats *got = k ? &s2 : &s0;
        am_chrf_stats r0, r1;
        am_chrf_stats_init(&r0);
        am_chrf_stats_init(&r1);
        add1(&r0, NULL, NULL, hyp, ab[0]);
        add1(&r1, NULL, NULL, hyp, ab[1]);
        double f0 = 0, f1 = 0;
        am_chrf_score(&r0, so, &f0);
        am_chrf_score(&r1, so, &f1);
        assert_memory_equal(got, f1 > f0 ? &r1 : &r0, sizeof r0);
    }
    /* bad arguments change nothing */
    am_chrf_stats before = s0;
    assert_int_equal(am_chrf_stats_add(&s0, NULL, NULL, NULL, hyp, ab, 0), AM_ERR_INVALID);
    const char *withnull[] = {"a", NULL};
    assert_int_equal(am_chrf_stats_add(&s0, NULL, NULL, NULL, hyp, withnull, 2), AM_ERR_INVALID);
    am_chrf_score_opts bad = c2;
    bad.beta = -1;
    assert_int_equal(am_chrf_stats_add(&s0, NULL, NULL, &bad, hyp, ab, 2), AM_ERR_INVALID);
    assert_memory_equal(&s0, &before, sizeof s0);
}

/* The score options one by one against sacreBLEU 2.6.0's own test values
 * (test/test_chrf.py: beta 3, char order 6, eps smoothing on and off,
 * whitespace kept) and hand-computed ones for char and word order. */
static void test_score_options(void **state)
{
    (void)state;
    am_chrf_score_opts b3;
    am_chrf_score_opts_init(&b3, 0);
    b3.beta = 3;
    b3.eps_smoothing = 1;
    struct {
        const char *h, *r;
        double want;
        int eps;
    } cases[] = {
        {"aa", "ab", 8.3333, 1},
        {"a", "a", 16.6667, 1},
        {"a b c", "abc", 50.0, 1},
        {"a", "a", 100.0, 0},
        {"aa", "ab", 25.0, 0},
        {"Niemand hat die Absicht, eine Mauer zu errichten",
         "Niemand hat die Absicht, eine Mauer zu errichten", 100.0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        am_chrf_stats st;
        am_chrf_stats_init(&st);
        assert_int_equal(add1(&st, NULL, NULL, cases[i].h, cases[i].r), AM_OK);
        b3.eps_smoothing = cases[i].eps;
        double v = -1;
        assert_int_equal(am_chrf_score(&st, &b3, &v), AM_OK);
        tu_assert_close(v, cases[i].want, 1e-4);
    }
    /* whitespace kept (sacreBLEU's test_chrf_keep_whitespace, beta 3) */
    am_chrf_opts ws;
    am_chrf_opts_init(&ws);
    ws.whitespace = 1;
    am_chrf_stats st;
    am_chrf_stats_init(&st);
    assert_int_equal(
        add1(&st, NULL, &ws,
             "Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.",
             "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."),
        AM_OK);
    b3.eps_smoothing = 0;
    double v = -1;
    assert_int_equal(am_chrf_score(&st, &b3, &v), AM_OK);
    tu_assert_close(v, 67.3481606, 1e-4);
    /* char order 1 on "ab" vs "ba": unigrams match fully: 100; char order 2:
     * the bigram never matches, effective order keeps it out of the average
     * only when a side has none, so it counts: (1 + 0) / 2 precision */
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "ab", "ba"), AM_OK);
    am_chrf_score_opts co;
    am_chrf_score_opts_init(&co, 0);
    co.char_order = 1;
    assert_int_equal(am_chrf_score(&st, &co, &v), AM_OK);
    tu_assert_close(v, 100.0, 1e-12);
    co.char_order = 2;
    assert_int_equal(am_chrf_score(&st, &co, &v), AM_OK);
    tu_assert_close(v, 50.0, 1e-12);
    /* char order 0 with word order 1: words only */
    co.char_order = 0;
    co.word_order = 1;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "x y", "y x"), AM_OK);
    assert_int_equal(am_chrf_score(&st, &co, &v), AM_OK);
    tu_assert_close(v, 100.0, 1e-12);
    /* beta 0: precision alone; a hypothesis inside the reference scores 100 */
    am_chrf_score_opts b0;
    am_chrf_score_opts_init(&b0, 0);
    b0.beta = 0;
    am_chrf_stats_init(&st);
    assert_int_equal(add1(&st, NULL, NULL, "abc", "abcdefgh"), AM_OK);
    assert_int_equal(am_chrf_score(&st, &b0, &v), AM_OK);
    tu_assert_close(v, 100.0, 1e-12);
    b0.beta = AM_CHRF_MAX_BETA + 1;
    assert_int_equal(am_chrf_score(&st, &b0, &v), AM_ERR_INVALID);
}

/* Session options: parsing, bounds, the check that some order is > 0,
 * the adaptmon signature and the sacreBLEU names and signatures. */
static void test_config_options(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    am_buf sig, name, err;
    am_buf_init(&sig);
    am_buf_init(&name);
    am_buf_init(&err);
    am_config_chrf_signature(&c, 0, 1, &name, &sig);
    assert_string_equal(am_buf_str(&name), "chrF2");
    assert_string_equal(am_buf_str(&sig),
                        "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0");
    am_config_chrf_signature(&c, 1, 2, &name, &sig);
    assert_string_equal(am_buf_str(&name), "chrF2++");
    assert_string_equal(am_buf_str(&sig),
                        "nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0");
    am_config_signature(&c, &sig);
    assert_null(strstr(am_buf_str(&sig), "|chrf:"));
    assert_int_equal(am_config_set(&c, "chrf-char-order", "4", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_word_order", "1", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_beta", "3", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_whitespace", "true", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_lowercase", "yes", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_eps_smoothing", "on", &err), AM_OK);
    am_config_chrf_signature(&c, 0, 1, &name, &sig);
    assert_string_equal(am_buf_str(&name), "chrF3+");
    assert_string_equal(am_buf_str(&sig),
                        "nrefs:1|case:lc|eff:no|nc:4|nw:1|space:yes|version:2.6.0");
    am_config_chrf_signature(&c, 1, 1, &name, &sig);
    assert_string_equal(am_buf_str(&name), "chrF3++");
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|chrf:nc4,nw1,beta3,space,lc,eps"));
    am_chrf_opts o;
    am_chrf_score_opts so;
    am_config_chrf_opts(&c, 1, &o, &so);
    assert_true(o.lowercase && o.whitespace && so.eps_smoothing);
    assert_int_equal(so.char_order, 4);
    assert_int_equal(so.word_order, 2);
    assert_int_equal(so.beta, 3);
    /* out of range: refused, nothing changed */
    am_config before = c;
    assert_int_equal(am_config_set(&c, "chrf_char_order", "7", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "chrf_word_order", "5", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "chrf_beta", "-1", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "chrf_whitespace", "maybe", &err), AM_ERR_INVALID);
    assert_memory_equal(&c, &before, sizeof c);
    /* both orders 0: am_config_check refuses */
    assert_int_equal(am_config_set(&c, "chrf_char_order", "0", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_OK);
    assert_int_equal(am_config_set(&c, "chrf_word_order", "0", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "chrf_char_order"));
    am_buf_cleanup(&sig);
    am_buf_cleanup(&name);
    am_buf_cleanup(&err);
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
        cmocka_unit_test(test_golden_tico),
        cmocka_unit_test(test_identical),
        cmocka_unit_test(test_char_stats),
        cmocka_unit_test(test_word_punct),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_eps_smoothing),
        cmocka_unit_test(test_lowercase),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_golden_multilingual),
        cmocka_unit_test(test_multi_ref_rule),
        cmocka_unit_test(test_score_options),
        cmocka_unit_test(test_config_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
