/* test_bleu.c — BLEU against sacreBLEU 2.6.0 (data/golden). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bleu.h"
#include "config.h"
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

/* ---- sacreBLEU 2.6.0's own test suite (test/test_bleu.py,
 * test/test_sentence_bleu.py): the expected values and tolerances are
 * those files' (facts; Apache-2.0 project). ---------------------------- */

/* Corpus BLEU of hyps[0..n) against nrefs reference streams refs[r][i],
 * with statistics options o and score options so. */
static double corpus(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
                     const am_bleu_opts *o, const am_bleu_score_opts *so, am_bleu_stats *out)
{
    am_bleu_stats st;
    am_bleu_stats_init(&st);
    for (size_t i = 0; i < n; i++) {
        const char *seg[4];
        for (size_t r = 0; r < nrefs; r++)
            seg[r] = refs[r * n + i];
        assert_int_equal(am_bleu_stats_add(&st, NULL, o, hyps[i], seg, nrefs), AM_OK);
    }
    am_bleu_result res;
    assert_int_equal(am_bleu_compute(&st, so, &res), AM_OK);
    if (out)
        *out = st;
    return res.score;
}

static const char *const readme_hyps[] = {"The dog bit the man.", "It wasn't surprising.",
                                          "The man had just bitten him."};
static const char *const readme_refs[] = {"The dog bit the man.",   "It was not unexpected.",
                                          "The man bit him first.", "The dog had bit the man.",
                                          "No one was surprised.",  "The man had bitten the dog."};

/* test_corpus_bleu_cases and test_bleu_max_order (two references). */
static void test_sacrebleu_corpus(void **state)
{
    (void)state;
    am_bleu_opts o;
    am_bleu_score_opts so;
    am_bleu_opts_init(&o);
    am_bleu_score_opts_init(&so, 0);
    assert_float_equal(corpus(readme_hyps, 3, readme_refs, 2, &o, &so, NULL), 48.530827, 1e-8);
    const char *const empty[] = {"", "", ""};
    assert_float_equal(corpus(empty, 3, readme_refs, 2, &o, &so, NULL), 0.0, 1e-8);
    static const struct {
        enum am_tok_kind tok;
        double want;
    } toks[] = {{AM_TOK_NONE, 49.1919566}, {AM_TOK_13A, 48.530827}, {AM_TOK_INTL, 43.91623493}};
    for (size_t i = 0; i < 3; i++) {
        o.tokenizer = toks[i].tok;
        assert_float_equal(corpus(readme_hyps, 3, readme_refs, 2, &o, &so, NULL), toks[i].want,
                           1e-8);
    }
    o.tokenizer = AM_TOK_13A;
    so.smooth = AM_BLEU_SMOOTH_NONE;
    assert_float_equal(corpus(readme_hyps, 3, readme_refs, 2, &o, &so, NULL), 48.530827, 1e-8);
    /* max_ngram_order 1..4 (sacreBLEU also has 5 and 6, which adaptmon's
     * fixed-size statistics refuse: see the AM_ERR_INVALID below) */
    am_bleu_score_opts_init(&so, 0);
    const char *const want[] = {"77.65", "60.50", "53.93", "48.53"};
    for (int k = 1; k <= 4; k++) {
        so.max_order = k;
        char buf[32];
        snprintf(buf, sizeof buf, "%.2f", corpus(readme_hyps, 3, readme_refs, 2, &o, &so, NULL));
        assert_string_equal(buf, want[k - 1]);
    }
    am_bleu_stats st;
    am_bleu_stats_init(&st);
    am_bleu_result r;
    so.max_order = 5;
    assert_int_equal(am_bleu_compute(&st, &so, &r), AM_ERR_INVALID);
}

/* raw_corpus_bleu: tokenize none, floor smoothing, effective order. */
static double raw_corpus(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
                         double floor_value, am_bleu_stats *st)
{
    am_bleu_opts o;
    am_bleu_score_opts so;
    am_bleu_opts_init(&o);
    o.tokenizer = AM_TOK_NONE;
    am_bleu_score_opts_init(&so, 1);
    so.smooth = AM_BLEU_SMOOTH_FLOOR;
    so.smooth_value = floor_value;
    return corpus(hyps, n, refs, nrefs, &o, &so, st) / 100;
}

/* test_raw_bleu, test_effective_order, test_statistics, test_offset,
 * test_scoring, test_degenerate_statistics. */
static void test_sacrebleu_raw(void **state)
{
    (void)state;
    const char *const h1[] = {"this is a test", "another test"}, *const r1[] = {"ref1", "ref2"};
    assert_float_equal(raw_corpus(h1, 2, r1, 1, .01, NULL), 0.0, 1e-8);
    const char *const h2[] = {"this is a test"}, *const r2[] = {"this is a test"};
    assert_float_equal(raw_corpus(h2, 1, r2, 1, .01, NULL), 1.0, 1e-8);
    const char *const h3[] = {"this is a fest"};
    assert_float_equal(raw_corpus(h3, 1, r2, 1, .01, NULL), 0.223606797749979, 1e-8);
    const char *const e_h[][1] = {{"test"}, {"a test"}, {"a little test"}};
    const char *const e_r[] = {"a test"};
    const double e_want[] = {0.3678794411714425, 1.0, 0.03218297948685433};
    for (int i = 0; i < 3; i++)
        assert_float_equal(raw_corpus(e_h[i], 1, e_r, 1, .01, NULL), e_want[i], 1e-8);
    const char *const oh[] = {"am I am a character sequence"};
    const char *const orf[] = {"I am a symbol string sequence a a"};
    am_bleu_stats st;
    assert_float_equal(raw_corpus(oh, 1, orf, 1, 0.0, &st), 0.0, 1e-8);
    assert_float_equal(raw_corpus(oh, 1, orf, 1, -1, &st), 0.1555722182, 1e-8);
    const int64_t common[] = {4, 2, 1, 0}, total[] = {6, 5, 4, 3};
    assert_memory_equal(st.correct, common, sizeof common);
    assert_memory_equal(st.total, total, sizeof total);

    /* compute_bleu on given statistics */
    am_bleu_stats x = {
        .sys_len = 11, .ref_len = 11, .correct = {9, 7, 5, 3}, .total = {10, 8, 6, 4}};
    am_bleu_result r;
    assert_int_equal(am_bleu_compute(&x, NULL, &r), AM_OK);
    assert_float_equal(r.score / 100, 0.8375922397, 1e-8);
    static const struct {
        int64_t c[4], t[4], sys, ref;
        double floor;
    } deg[] = {
        {{0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1, 0.0}, {{0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10, 0.0},
        {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.0}, {{6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6, 0.0},
        {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.1}, {{0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5, 0.01}};
    for (size_t i = 0; i < sizeof deg / sizeof deg[0]; i++) {
        am_bleu_stats d = {.sys_len = deg[i].sys, .ref_len = deg[i].ref};
        memcpy(d.correct, deg[i].c, sizeof d.correct);
        memcpy(d.total, deg[i].t, sizeof d.total);
        am_bleu_score_opts so;
        am_bleu_score_opts_init(&so, 0);
        so.smooth = AM_BLEU_SMOOTH_FLOOR;
        so.smooth_value = deg[i].floor;
        assert_int_equal(am_bleu_compute(&d, &so, &r), AM_OK);
        assert_true(r.score == 0.0);
    }
}

/* test_sentence_bleu.py: every smoothing, tokenizer and case (EPSILON
 * 1e-3 there), and the #141 zero cases. */
static void test_sacrebleu_sentence(void **state)
{
    (void)state;
    const char *ref = "produc\xc5\xa3ia de zah\xc4\x83r brut se exprim\xc4\x83 \xc3\xaen "
                      "zah\xc4\x83r alb;";
    const char *sys = "Produc\xc8\x9bia de zah\xc4\x83r prim\xc4\x83 va fi exprimat\xc4\x83 "
                      "\xc3\xaen ceea ce prive\xc8\x99te zah\xc4\x83rul alb;";
    static const struct {
        enum am_bleu_smooth m;
        double v;
        int lc;
        enum am_tok_kind tok;
        double want;
    } cases[] = {
        {AM_BLEU_SMOOTH_EXP, -1, 0, AM_TOK_13A, 8.493},
        {AM_BLEU_SMOOTH_NONE, -1, 0, AM_TOK_13A, 0.0},
        {AM_BLEU_SMOOTH_FLOOR, -1, 0, AM_TOK_13A, 4.51688},
        {AM_BLEU_SMOOTH_FLOOR, 0.1, 0, AM_TOK_13A, 4.51688},
        {AM_BLEU_SMOOTH_FLOOR, 0.5, 0, AM_TOK_13A, 10.10},
        {AM_BLEU_SMOOTH_ADD_K, -1, 0, AM_TOK_13A, 14.882},
        {AM_BLEU_SMOOTH_ADD_K, 1, 0, AM_TOK_13A, 14.882},
        {AM_BLEU_SMOOTH_ADD_K, 2, 0, AM_TOK_13A, 21.389},
        {AM_BLEU_SMOOTH_EXP, -1, 0, AM_TOK_NONE, 7.347},
        {AM_BLEU_SMOOTH_EXP, -1, 0, AM_TOK_INTL, 8.493},
        {AM_BLEU_SMOOTH_EXP, -1, 0, AM_TOK_CHAR, 40.8759},
        {AM_BLEU_SMOOTH_EXP, -1, 1, AM_TOK_CHAR, 42.0267},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        am_bleu_opts o;
        am_bleu_score_opts so;
        am_bleu_opts_init(&o);
        o.tokenizer = cases[i].tok;
        o.lowercase = cases[i].lc;
        am_bleu_score_opts_init(&so, 1);
        so.smooth = cases[i].m;
        so.smooth_value = cases[i].v;
        assert_float_equal(corpus(&sys, 1, &ref, 1, &o, &so, NULL), cases[i].want, 1e-3);
        /* and the same against "okay thanks": 0.0 whatever the smoothing */
        const char *s0 = "this is a cat", *r0 = "okay thanks";
        if (cases[i].tok == AM_TOK_13A)
            assert_true(corpus(&s0, 1, &r0, 1, &o, &so, NULL) == 0.0);
    }
}

/* Several references: clipping by the largest count in one reference (not
 * the sum), the closest reference length (ties: the shorter), and the same
 * reference twice equals it once. */
static void test_several_references(void **state)
{
    (void)state;
    am_bleu_stats st;
    const char *refs[] = {"the cat", "the the cat sat"};
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "the the the", refs, 2), AM_OK);
    assert_int_equal(st.correct[0], 2); /* max(1, 2), not 1 + 2 */
    assert_int_equal(st.correct[1], 1); /* "the the" only in the second */
    assert_int_equal(st.ref_len, 2); /* |3-2| = |3-4|: the shorter one */
    assert_int_equal(st.sys_len, 3);
    assert_int_equal(st.total[0], 3);
    /* the same reference twice: the statistics of one */
    const char *h = "le chat est sur le tapis .", *r = "le chat est assis sur le tapis .";
    const char *twice[] = {r, r};
    am_bleu_stats one, two;
    am_bleu_stats_init(&one);
    am_bleu_stats_init(&two);
    assert_int_equal(am_bleu_stats_add(&one, NULL, NULL, h, &r, 1), AM_OK);
    assert_int_equal(am_bleu_stats_add(&two, NULL, NULL, h, twice, 2), AM_OK);
    assert_memory_equal(&one, &two, sizeof one);
    /* an empty reference among others is a reference of length 0 */
    const char *with_empty[] = {"", "a b c"};
    am_bleu_stats_init(&st);
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "a", with_empty, 2), AM_OK);
    assert_int_equal(st.ref_len, 0); /* |1-0| < |1-3| */
    assert_int_equal(st.correct[0], 1);
    /* bad counts */
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "a", with_empty, 0), AM_ERR_INVALID);
    const char *with_null[] = {"a", NULL};
    assert_int_equal(am_bleu_stats_add(&st, NULL, NULL, "a", with_null, 2), AM_ERR_INVALID);
}

/* sacreBLEU's BLEU signature strings. */
static void test_signature(void **state)
{
    (void)state;
    am_bleu_opts o;
    am_bleu_score_opts so;
    am_bleu_opts_init(&o);
    am_bleu_score_opts_init(&so, 0);
    am_buf b;
    am_buf_init(&b);
    am_bleu_signature(&o, &so, 1, NULL, &b);
    assert_string_equal(am_buf_str(&b),
                        "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
    am_buf_reset(&b);
    o.lowercase = 1;
    o.tokenizer = AM_TOK_ZH;
    so.smooth = AM_BLEU_SMOOTH_FLOOR;
    so.effective_order = 1;
    am_bleu_signature(&o, &so, 2, NULL, &b);
    assert_string_equal(am_buf_str(&b),
                        "nrefs:2|case:lc|eff:yes|tok:zh|smooth:floor[0.10]|version:2.6.0");
    am_buf_reset(&b);
    so.smooth = AM_BLEU_SMOOTH_ADD_K;
    so.smooth_value = 2;
    so.max_order = 3;
    am_bleu_signature(&o, &so, 0, "ja-mecab-0.996-IPA", &b);
    assert_string_equal(am_buf_str(&b), "nrefs:var|case:lc|eff:yes|tok:ja-mecab-0.996-IPA|smooth:"
                                        "add-k[2.00]|ngram:3|version:2.6.0");
    am_buf_cleanup(&b);
    enum am_bleu_smooth m;
    assert_int_equal(am_bleu_smooth_parse("add-k", &m), AM_OK);
    assert_int_equal(m, AM_BLEU_SMOOTH_ADD_K);
    assert_int_equal(am_bleu_smooth_parse("addk", &m), AM_ERR_INVALID);
}

/* The BLEU session options: defaults by target language (never auto in
 * what runs), refusals with their reasons, the signature part. */
static void test_config_bleu(void **state)
{
    (void)state;
    am_config c;
    am_buf err, sig;
    am_buf_init(&err);
    am_buf_init(&sig);
    enum am_tok_kind k;
    static const struct {
        const char *lang;
        enum am_tok_kind want;
        const char *sig;
    } langs[] = {{"und", AM_TOK_13A, NULL},
                 {"fr", AM_TOK_13A, NULL},
                 {"zh", AM_TOK_ZH, "|bleu:zh"},
                 {"zh-TW", AM_TOK_ZH, "|bleu:zh"},
                 {"ja", AM_TOK_JA_MECAB, "|bleu:ja-mecab"}};
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        am_config_init(&c);
        assert_int_equal(am_config_set(&c, "target_lang", langs[i].lang, &err), AM_OK);
        assert_int_equal(am_config_check(&c, &err), AM_OK);
        assert_int_equal(am_config_bleu_tokenizer(&c, &k), AM_OK);
        assert_int_equal(k, langs[i].want);
        am_config_signature(&c, &sig);
        if (langs[i].sig)
            assert_non_null(strstr(am_buf_str(&sig), langs[i].sig));
        else
            assert_null(strstr(am_buf_str(&sig), "|bleu:"));
    }
    /* Korean under auto: refused, naming the option to set */
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "ko", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "bleu_tokenize"));
    assert_int_equal(am_config_set(&c, "bleu_tokenize", "char", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_OK);
    /* refused tokenizers say why; a bad value changes nothing */
    assert_int_equal(am_config_set(&c, "bleu_tokenize", "flores200", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "SentencePiece"));
    assert_int_equal(c.bleu_tokenize, AM_TOK_CHAR);
    /* smoothing value only with floor / add-k */
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "bleu_smooth_value", "0.5", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "bleu_smooth_method", "floor", &err), AM_OK);
    assert_int_equal(am_config_check(&c, &err), AM_OK);
    assert_int_equal(am_config_set(&c, "bleu_max_ngram_order", "5", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "bleu_lowercase", "true", &err), AM_OK);
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|bleu:13a,lc,smooth:floor[0.50]"));
    am_bleu_score_opts so;
    am_config_bleu_score_opts(&c, 0, &so);
    assert_int_equal(so.smooth, AM_BLEU_SMOOTH_FLOOR);
    assert_true(so.smooth_value == 0.5);
    assert_int_equal(so.effective_order, 0);
    am_config_bleu_score_opts(&c, 1, &so);
    assert_int_equal(so.effective_order, 1);
    am_buf_cleanup(&err);
    am_buf_cleanup(&sig);
}

/* defaults 1 resolves auto as before issue 24 (recall zh for ja, BLEU 13a,
 * TER without the zh/ja/ko session defaults; ko not refused), defaults 2
 * (the table's default) as this release; explicit choices win over both;
 * values outside 1..2 are refused and change nothing. */
static void test_config_defaults_version(void **state)
{
    (void)state;
    am_config c;
    am_buf err;
    am_buf_init(&err);
    enum am_tok_kind k;
    static const struct {
        const char *lang, *defaults;
        enum am_tok_kind recall, bleu;
        int ter;
    } rows[] = {{"ja", "1", AM_TOK_ZH, AM_TOK_13A, 0},
                {"ja", "2", AM_TOK_JA_MECAB, AM_TOK_JA_MECAB, 1},
                {"zh", "1", AM_TOK_ZH, AM_TOK_13A, 0},
                {"zh", "2", AM_TOK_ZH, AM_TOK_ZH, 1},
                {"zh", "3", AM_TOK_ZH_FRISO, AM_TOK_ZH, 1},
                {"zh-CN", "3", AM_TOK_ZH_FRISO, AM_TOK_ZH, 1},
                {"yue", "3", AM_TOK_ZH, AM_TOK_13A, 1},
                {"ja", "3", AM_TOK_JA_MECAB, AM_TOK_JA_MECAB, 1},
                {"ko", "1", AM_TOK_INTL, AM_TOK_13A, 0},
                {"fr", "1", AM_TOK_INTL, AM_TOK_13A, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        am_config_init(&c);
        assert_int_equal(c.defaults, AM_DEFAULTS_CURRENT);
        assert_int_equal(am_config_set(&c, "target_lang", rows[i].lang, &err), AM_OK);
        assert_int_equal(am_config_set(&c, "defaults", rows[i].defaults, &err), AM_OK);
        assert_int_equal(am_config_check(&c, &err), AM_OK);
        assert_int_equal(am_config_tokenizer(&c), rows[i].recall);
        assert_int_equal(am_config_bleu_tokenizer(&c, &k), AM_OK);
        assert_int_equal(k, rows[i].bleu);
        am_config_session_defaults(&c);
        assert_int_equal(c.ter_normalized, rows[i].ter);
        assert_int_equal(c.ter_asian_support, rows[i].ter);
    }
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "ja", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "defaults", "1", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "tokenizer", "ja-mecab", &err), AM_OK);
    assert_int_equal(am_config_set(&c, "bleu_tokenize", "char", &err), AM_OK);
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_JA_MECAB);
    assert_int_equal(am_config_bleu_tokenizer(&c, &k), AM_OK);
    assert_int_equal(k, AM_TOK_CHAR);
    /* zh-friso is recall's only: BLEU keeps sacreBLEU's tokenizers */
    assert_int_equal(am_config_set(&c, "bleu_tokenize", "zh-friso", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_bleu_tokenizer(&c, &k), AM_OK);
    assert_int_equal(k, AM_TOK_CHAR);
    assert_int_equal(am_config_set(&c, "tokenizer", "zh-friso", &err), AM_OK);
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_ZH_FRISO);
    assert_int_equal(am_config_terms_tokenizer(&c), AM_TOK_ZH);
    assert_int_equal(am_config_set(&c, "defaults", "4", &err), AM_ERR_INVALID);
    assert_int_equal(am_config_set(&c, "defaults", "0", &err), AM_ERR_INVALID);
    assert_int_equal(c.defaults, AM_DEFAULTS_V1);
    am_buf_cleanup(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tico),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_scores),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_preprocess),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_sacrebleu_corpus),
        cmocka_unit_test(test_sacrebleu_raw),
        cmocka_unit_test(test_sacrebleu_sentence),
        cmocka_unit_test(test_several_references),
        cmocka_unit_test(test_signature),
        cmocka_unit_test(test_config_bleu),
        cmocka_unit_test(test_config_defaults_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
