/* test_terms.c — terminology consistency, standard profile: the paper's
 * Table 2 (data/golden/seeds.json), nested/repeated terms, deviations,
 * forbidden and case-sensitive entries, stems, windows, annotations,
 * totals, preview and a sanity run on the TICO-19 dev set. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "glossary.h"
#include "stopwords.h"
#include "terms.h"

#define NOPOS ((size_t)-1)

static am_terms_lex *build(const am_gloss *g, const am_terms_cfg *cfg)
{
    am_terms_lex *lex = NULL;
    assert_int_equal(am_terms_lex_build(g, cfg, &lex), AM_OK);
    assert_non_null(lex);
    return lex;
}

static void add1(am_gloss *g, const char *src, const char *tgt, int cs, int forbidden)
{
    const char *t[] = {tgt};
    assert_int_equal(am_gloss_add(g, src, t, 1, cs, forbidden, NULL), AM_OK);
}

static size_t byte_of(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    assert_non_null(p);
    return (size_t)(p - text);
}

/* ---- Table 2 of Alam et al. (2021), standard profile -------------------- */

static void test_table2(void **state)
{
    (void)state;
    json_t *root = tu_json("data/golden/seeds.json");
    json_t *t2 = json_object_get(root, "alam2021_table2");
    assert_non_null(t2);
    am_gloss g;
    am_gloss_init(&g);
    json_t *ge;
    size_t i;
    json_array_foreach(json_object_get(t2, "glossary"), i, ge)
    {
        json_t *tg = json_array_get(ge, 1);
        const char *alts[8];
        size_t n = json_array_size(tg);
        assert_true(n >= 1 && n <= 8);
        for (size_t k = 0; k < n; k++)
            alts[k] = json_string_value(json_array_get(tg, k));
        assert_int_equal(
            am_gloss_add(&g, json_string_value(json_array_get(ge, 0)), alts, n, 0, 0, NULL), AM_OK);
    }
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const char *src = json_string_value(json_object_get(t2, "source"));
    const char *ref = json_string_value(json_object_get(t2, "translation"));
    json_t *out;
    size_t nout = 0;
    json_array_foreach(json_object_get(t2, "outputs"), i, out)
    {
        const char *hyp = json_string_value(json_object_get(out, "hypothesis"));
        json_t *em = json_object_get(out, "exact_match");
        json_t *pm = json_object_get(out, "partial_match");
        const am_terms_seg *sg;
        assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, NULL, 0, &sg), AM_OK);
        assert_int_equal(sg->totals.exact, json_integer_value(json_array_get(em, 0)));
        assert_int_equal(sg->totals.instances, json_integer_value(json_array_get(em, 1)));
        tu_assert_close(sg->totals.partial_sum, json_number_value(json_array_get(pm, 0)), 1e-12);
        assert_int_equal(sg->totals.instances, json_integer_value(json_array_get(pm, 1)));
        assert_int_equal(sg->totals.deviations, 0);
        tu_assert_close(sg->scores.exact,
                        (double)json_integer_value(json_array_get(em, 0)) /
                            (double)json_integer_value(json_array_get(em, 1)),
                        1e-12);
        /* nested terms: "cough" and "dry cough" are separate instances, both
         * starting at "tos" in the translation */
        size_t cough = NOPOS, dry = NOPOS;
        for (size_t k = 0; k < sg->n_inst; k++) {
            if (strcmp(g.v[sg->inst[k].entry].source, "cough") == 0)
                cough = k;
            if (strcmp(g.v[sg->inst[k].entry].source, "dry cough") == 0)
                dry = k;
        }
        assert_true(cough != NOPOS && dry != NOPOS);
        assert_int_equal(sg->inst[cough].ref.tok_start, sg->inst[dry].ref.tok_start);
        assert_int_equal(sg->inst[dry].ref.tok_end, sg->inst[dry].ref.tok_start + 2);
        assert_int_equal(sg->inst[dry].ref.byte_start, byte_of(ref, "tos seca"));
        assert_int_equal(sg->inst[dry].ref.byte_end, byte_of(ref, "tos seca") + 8);
        assert_int_equal(sg->inst[dry].src.byte_start, byte_of(src, "dry cough"));
        nout++;
    }
    assert_int_equal(nout, 2);
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
    json_decref(root);
}

/* ---- repeated entries, deviations --------------------------------------- */

static void test_repeated_and_deviations(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "cough", "toux", 0, 0);
    add1(&g, "fever", "fièvre", 0, 0);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;

    const char *src = "the cough and the cough";
    const char *ref = "la toux et la toux";
    assert_int_equal(am_terms_score(ws, lex, src, "la toux et le rhume", ref, NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->n_inst, 2);
    assert_int_equal(sg->inst[0].ref.tok_start, 1);
    assert_int_equal(sg->inst[1].ref.tok_start, 4);
    assert_int_equal(sg->inst[0].src.tok_start, 1);
    assert_int_equal(sg->inst[1].src.tok_start, 4);
    assert_int_equal(sg->totals.exact, 1);
    assert_int_equal(sg->inst[0].match, AM_TERMS_EXACT);
    assert_int_equal(sg->inst[0].hyp.tok_start, 1);
    assert_int_equal(sg->inst[1].match, AM_TERMS_NONE);
    /* presence-based partial: the second instance's word is present */
    tu_assert_close(sg->inst[1].partial, 1.0, 0);
    assert_int_equal(sg->totals.deviations, 0);

    /* both hypothesis occurrences are claimed, one per instance */
    assert_int_equal(am_terms_score(ws, lex, src, "toux ou toux", ref, NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.exact, 2);
    assert_int_equal(sg->inst[0].hyp.tok_start, 0);
    assert_int_equal(sg->inst[1].hyp.tok_start, 2);

    /* two source occurrences, one target occurrence: 1 instance, 1 deviation */
    assert_int_equal(am_terms_score(ws, lex, src, "la toux", "la toux et la grippe", NULL, 0, &sg),
                     AM_OK);
    assert_int_equal(sg->totals.instances, 1);
    assert_int_equal(sg->totals.deviations, 1);
    assert_int_equal(sg->dev[0].entry, 0);
    assert_int_equal(sg->dev[0].src.tok_start, 4);

    /* deviation only: no instance, scores null (NAN) */
    assert_int_equal(
        am_terms_score(ws, lex, "high fever", "forte fièvre", "température élevée", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.instances, 0);
    assert_int_equal(sg->totals.deviations, 1);
    assert_int_equal(sg->dev[0].entry, 1);
    assert_true(isnan(sg->scores.exact));
    assert_true(isnan(sg->scores.partial));
    assert_true(isnan(sg->scores.window[0]));

    /* no term at all */
    assert_int_equal(am_terms_score(ws, lex, "", "", "", NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->n_inst + sg->n_dev + sg->n_forbid, 0);
    assert_int_equal(am_terms_score(ws, lex, NULL, "", "", NULL, 0, &sg), AM_ERR_INVALID);

    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* ---- forbidden and case-sensitive entries ------------------------------- */

static void test_forbidden_and_case(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "flu", "influenza", 0, 1); /* forbidden */
    add1(&g, "flu", "grippe", 0, 0); /* the approved term */
    add1(&g, "WHO", "OMS", 1, 0); /* case-sensitive */
    add1(&g, "Covid", "covid-19", 0, 0); /* folded */
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;

    const char *hyp = "l' Influenza ou influenza";
    assert_int_equal(am_terms_score(ws, lex, "the flu", hyp, "la grippe", NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.instances, 1); /* forbidden entries make no instance */
    assert_int_equal(sg->inst[0].entry, 1);
    assert_int_equal(sg->totals.exact, 0);
    assert_int_equal(sg->totals.forbidden, 2);
    assert_int_equal(sg->n_forbid, 2);
    assert_int_equal(sg->forbid[0].entry, 0);
    assert_int_equal(sg->forbid[0].hyp.byte_start, byte_of(hyp, "Influenza"));
    assert_int_equal(sg->forbid[0].hyp.byte_end, byte_of(hyp, "Influenza") + 9);
    assert_int_equal(sg->forbid[1].hyp.tok_start, 4);
    /* no forbidden use without the source term */
    assert_int_equal(am_terms_score(ws, lex, "the cold", hyp, "le rhume", NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.forbidden, 0);

    /* case-sensitive source: "who" is not "WHO" */
    assert_int_equal(am_terms_score(ws, lex, "who said so", "OMS", "OMS", NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.instances + sg->totals.deviations, 0);
    /* case-sensitive target: "oms" in the hypothesis does not match */
    assert_int_equal(
        am_terms_score(ws, lex, "the WHO said", "l' oms a dit", "l' OMS a dit", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.instances, 1);
    assert_int_equal(sg->totals.exact, 0);
    assert_int_equal(
        am_terms_score(ws, lex, "the WHO said", "l'OMS a dit", "l' OMS a dit", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.exact, 1);
    /* a lower-case target in the translation is a deviation */
    assert_int_equal(am_terms_score(ws, lex, "the WHO said", "", "l' oms a dit", NULL, 0, &sg),
                     AM_OK);
    assert_int_equal(sg->totals.deviations, 1);
    /* folded entry: any case matches, source and target */
    assert_int_equal(
        am_terms_score(ws, lex, "COVID cases", "cas de COVID-19", "cas de Covid-19", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.exact, 1);
    am_terms_lex_free(lex);

    /* case: sensitive for the whole session */
    cfg.casefold = 0;
    lex = build(&g, &cfg);
    assert_int_equal(
        am_terms_score(ws, lex, "COVID cases", "cas de COVID-19", "cas de covid-19", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.instances + sg->totals.deviations, 0);
    assert_int_equal(
        am_terms_score(ws, lex, "Covid cases", "cas de COVID-19", "cas de covid-19", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.instances, 1);
    assert_int_equal(sg->totals.exact, 0);

    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* ---- stems -------------------------------------------------------------- */

static void test_stem(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "symptom", "symptôme", 0, 0);
    add1(&g, "respiratory disease", "maladie respiratoire", 0, 0);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    cfg.stem_match = 1;
    cfg.stem_lang = "fr-FR";
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;
    const char *src = "a symptom of a respiratory disease";
    const char *ref = "un symptôme d' une maladie respiratoire";
    const char *hyp = "des symptômes de maladies respiratoires";
    assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.instances, 2);
    assert_int_equal(sg->totals.exact, 0);
    assert_int_equal(sg->totals.stem, 2);
    assert_int_equal(sg->inst[0].match, AM_TERMS_STEM);
    assert_int_equal(sg->inst[0].hyp.byte_start, byte_of(hyp, "symptômes"));
    assert_int_equal(sg->inst[1].hyp.tok_start, 3);
    assert_int_equal(sg->inst[1].hyp.tok_end, 5);
    tu_assert_close(sg->scores.exact_or_stem, 1.0, 0);
    tu_assert_close(sg->scores.exact, 0.0, 0);
    /* window overlap counts exact matches only */
    assert_int_equal(sg->totals.win_count[0], 0);
    am_terms_lex_free(lex);

    /* stems off: no match */
    cfg.stem_match = 0;
    lex = build(&g, &cfg);
    assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, NULL, 0, &sg), AM_OK);
    assert_int_equal(sg->totals.stem, 0);
    assert_int_equal(sg->totals.exact, 0);
    am_terms_lex_free(lex);

    /* unknown language */
    cfg.stem_match = 1;
    cfg.stem_lang = "klingon";
    am_terms_lex *bad = NULL;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &bad), AM_ERR_NOTFOUND);
    assert_null(bad);
    am_terms_ws_free(ws);
    am_gloss_cleanup(&g);
}

/* ---- window overlap, partial, reorder (hand-checked) -------------------- */

static void test_windows(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "dry cough", "dry cough", 0, 0);
    add1(&g, "cough", "toux", 0, 0);
    const char *stop[] = {"the", "a", "very"};
    am_sw *sw = NULL;
    assert_int_equal(am_sw_from_words(stop, 3, AM_NORM_NFKC, 1, &sw), AM_OK);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    cfg.sw = sw;
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;

    /* ref:  yesterday the patient had a [dry cough] , very bad indeed
     *       w=2: had patient | bad indeed        w=3: + yesterday
     * hyp:  the patient now had a [dry cough] , bad indeed
     *       w=2: had now | bad indeed            w=3: + patient
     * w=2: {had, bad, indeed} = 3/4; w=3: {had, patient, bad, indeed} = 4/5 */
    const char *ref = "yesterday the patient had a dry cough , very bad indeed";
    const char *hyp = "The patient now had a dry cough, bad indeed";
    assert_int_equal(am_terms_score(ws, lex, "the patient had a dry cough", hyp, ref, NULL, 0, &sg),
                     AM_OK);
    assert_int_equal(sg->n_inst, 1);
    assert_int_equal(sg->inst[0].entry, 0);
    assert_int_equal(sg->inst[0].match, AM_TERMS_EXACT);
    tu_assert_close(sg->inst[0].window[0], 3.0 / 4.0, 1e-12);
    tu_assert_close(sg->inst[0].window[1], 4.0 / 5.0, 1e-12);
    assert_int_equal(sg->totals.win_count[0], 1);
    tu_assert_close(sg->scores.window[1], 0.8, 1e-12);
    /* spans: tokens 5..7 of the translation, bytes of "dry cough" */
    assert_int_equal(sg->inst[0].ref.tok_start, 5);
    assert_int_equal(sg->inst[0].ref.tok_end, 7);
    assert_int_equal(sg->inst[0].ref.byte_start, byte_of(ref, "dry cough"));
    assert_int_equal(sg->inst[0].ref.byte_end, byte_of(ref, "dry cough") + 9);
    /* the hypothesis "cough," is split by the tokenizer; bytes still exact */
    assert_int_equal(sg->inst[0].hyp.byte_start, byte_of(hyp, "dry cough"));
    assert_int_equal(sg->inst[0].hyp.byte_end, byte_of(hyp, "dry cough") + 9);
    assert_int_equal(sg->n_hyp_tokens, 10);
    assert_int_equal(sg->n_ref_tokens, 11);
    /* reorder: i = 5, 6 of |h| = 10; j = 5, 6 of |r| = 11 */
    double want = ((1 - fabs(5.0 / 10 - 5.0 / 11)) + (1 - fabs(6.0 / 10 - 6.0 / 11))) / 2;
    tu_assert_close(sg->inst[0].reorder, want, 1e-12);
    tu_assert_close(sg->inst[0].partial, 1.0, 0);

    /* partial / reorder of an unmatched instance: "dry" found at i = 0 */
    assert_int_equal(
        am_terms_score(ws, lex, "dry cough", "dry throat", "a dry cough", NULL, 0, &sg), AM_OK);
    tu_assert_close(sg->inst[0].partial, 0.5, 0);
    tu_assert_close(sg->inst[0].reorder, (1 - fabs(0.0 / 2 - 1.0 / 3)) / 2, 1e-12);

    /* empty reference window: left out */
    assert_int_equal(
        am_terms_score(ws, lex, "dry cough", "the dry cough", "a dry cough ,", NULL, 0, &sg),
        AM_OK);
    assert_int_equal(sg->totals.exact, 1);
    assert_true(isnan(sg->inst[0].window[0]));
    assert_int_equal(sg->totals.win_count[0], 0);
    assert_true(isnan(sg->scores.window[0]));

    /* repeated entry: greedy pairing by best overlap swaps the occurrences */
    cfg.windows[0] = 1;
    cfg.n_windows = 1;
    am_terms_lex *lex1 = build(&g, &cfg);
    assert_int_equal(am_terms_score(ws, lex1, "cough cough", "gamma toux delta alpha toux beta",
                                    "alpha toux beta gamma toux delta", NULL, 0, &sg),
                     AM_OK);
    assert_int_equal(sg->totals.exact, 2);
    assert_int_equal(sg->inst[0].hyp.tok_start, 1); /* claims: left to right */
    tu_assert_close(sg->inst[0].window[0], 1.0, 0);
    tu_assert_close(sg->inst[1].window[0], 1.0, 0);
    tu_assert_close(sg->scores.window[0], 1.0, 0);
    assert_int_equal(sg->totals.n_windows, 1);
    am_terms_lex_free(lex1);

    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_sw_free(sw);
    am_gloss_cleanup(&g);
}

/* ---- annotations -------------------------------------------------------- */

static void test_annotations(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "fever", "fiebre", 0, 0);
    add1(&g, "flu", "influenza", 0, 1);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;
    const char *src = "fever and dry cough , not flu";
    const char *ref = "fiebre y tos seca , no gripe";
    const char *hyp = "fiebre y tos , no influenza";
    const char *t1[] = {"tos seca", "tos"};
    const char *t2[] = {"gripe"};
    const char *t3[] = {"disnea"};
    am_terms_annot an[4];
    memset(an, 0, sizeof an);
    an[0].targets = t1; /* no span: placed like a glossary term */
    an[0].n_targets = 2;
    an[1].targets = t2; /* with span */
    an[1].n_targets = 1;
    an[1].has_span = 1;
    an[1].span_start = byte_of(ref, "gripe");
    an[1].span_end = an[1].span_start + 5;
    an[2].targets = t3; /* absent: a deviation */
    an[2].n_targets = 1;
    an[3].targets = t2; /* span not equal to an alternative */
    an[3].n_targets = 1;
    an[3].has_span = 1;
    an[3].span_start = byte_of(ref, "tos");
    an[3].span_end = byte_of(ref, "seca") + 2; /* overlaps "tos" and "seca" */
    assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, an, 4, &sg), AM_OK);
    /* annotations replace the glossary's instances (fever is not counted) */
    assert_int_equal(sg->totals.instances, 3);
    assert_int_equal(sg->totals.deviations, 1);
    assert_int_equal(sg->dev[0].origin, AM_TERMS_ANNOTATION);
    assert_int_equal(sg->dev[0].entry, 2);
    /* forbidden uses still come from the glossary */
    assert_int_equal(sg->totals.forbidden, 1);
    for (size_t i = 0; i < sg->n_inst; i++) {
        const am_terms_inst *in = &sg->inst[i];
        assert_int_equal(in->origin, AM_TERMS_ANNOTATION);
        if (in->entry == 0) {
            assert_int_equal(in->alt, 0); /* longest alternative at "tos" */
            assert_int_equal(in->ref.byte_start, byte_of(ref, "tos seca"));
            assert_int_equal(in->ref.byte_end, byte_of(ref, "tos seca") + 8);
            assert_int_equal(in->match, AM_TERMS_EXACT);
            assert_int_equal(in->hyp_alt, 1);
        } else if (in->entry == 1) {
            assert_int_equal(in->alt, 0);
            assert_int_equal(in->ref.tok_start, 6);
            assert_int_equal(in->match, AM_TERMS_NONE);
        } else {
            assert_int_equal(in->entry, 3);
            assert_int_equal(in->alt, NOPOS);
            assert_int_equal(in->ref.tok_start, 2);
            assert_int_equal(in->ref.tok_end, 4);
        }
    }
    am_terms_annot badan;
    memset(&badan, 0, sizeof badan);
    assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, &badan, 1, &sg), AM_ERR_INVALID);
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* ---- totals and preview ------------------------------------------------- */

static void test_totals(void **state)
{
    (void)state;
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_totals a, b;
    am_terms_totals_init(&a, &cfg);
    am_terms_totals_init(&b, &cfg);
    am_terms_scores sc;
    am_terms_totals_scores(&a, &sc);
    assert_true(isnan(sc.exact) && isnan(sc.partial) && isnan(sc.reorder));
    assert_true(isnan(sc.window[0]) && isnan(sc.window[1]));
    b.instances = 4;
    b.exact = 3;
    b.stem = 1;
    b.partial_sum = 3.5;
    b.win_sum[1] = 1.5;
    b.win_count[1] = 2;
    assert_int_equal(am_terms_totals_add(&a, &b), AM_OK);
    assert_int_equal(am_terms_totals_add(&a, &b), AM_OK);
    am_terms_totals_scores(&a, &sc);
    tu_assert_close(sc.exact, 0.75, 0);
    tu_assert_close(sc.exact_or_stem, 1.0, 0);
    tu_assert_close(sc.partial, 7.0 / 8.0, 0);
    tu_assert_close(sc.window[1], 0.75, 0);
    assert_true(isnan(sc.window[0]));
    b.windows[0] = 5;
    assert_int_equal(am_terms_totals_add(&a, &b), AM_ERR_INVALID);
    assert_int_equal(a.instances, 8);

    am_terms_lex *lex = NULL;
    am_gloss g;
    am_gloss_init(&g);
    cfg.windows[0] = 0;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_ERR_INVALID);
    cfg.windows[0] = 2;
    cfg.n_windows = AM_TERMS_MAX_WINDOWS + 1;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_ERR_INVALID);
    cfg.n_windows = 1;
    cfg.windows[0] = AM_TERMS_MAX_WINDOW + 1;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_ERR_INVALID);
    assert_null(lex);
}

/* random texts over a small vocabulary: no crash, invariants hold */
static void test_random_texts(void **state)
{
    (void)state;
    static const char *const words[] = {"toux",  "sèche",  "Toux",  ",",   "la",
                                        "TOUX",  "grippe", "cough", "dry", "flu",
                                        "ﬁèvre", "fièvre", "(",     "x"};
    am_gloss g;
    am_gloss_init(&g);
    const char *t1[] = {"toux sèche", "toux"};
    assert_int_equal(am_gloss_add(&g, "dry cough", t1, 2, 0, 0, NULL), AM_OK);
    add1(&g, "cough", "toux", 0, 0);
    add1(&g, "cough", "TOUX", 1, 0);
    add1(&g, "flu", "grippe", 0, 1);
    add1(&g, "fever", "fièvre", 0, 0);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    cfg.stem_match = 1;
    cfg.stem_lang = "french";
    am_terms_lex *lex = build(&g, &cfg);
    am_terms_ws *ws = am_terms_ws_new();
    uint64_t r = 88172645463325252ull;
    char txt[3][256];
    for (int it = 0; it < 2000; it++) {
        for (int k = 0; k < 3; k++) {
            size_t n = 0;
            txt[k][0] = '\0';
            int nw = (int)(r % 12);
            for (int w = 0; w < nw; w++) {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                const char *wd = words[r % (sizeof words / sizeof words[0])];
                n += (size_t)snprintf(txt[k] + n, sizeof txt[k] - n, "%s%s", w ? " " : "", wd);
            }
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
        }
        const am_terms_seg *sg;
        assert_int_equal(am_terms_score(ws, lex, txt[0], txt[1], txt[2], NULL, 0, &sg), AM_OK);
        assert_true(sg->totals.exact + sg->totals.stem <= sg->totals.instances);
        for (size_t i = 0; i < sg->n_inst; i++) {
            assert_true(sg->inst[i].ref.byte_end <= strlen(txt[2]));
            assert_true(sg->inst[i].partial >= 0 && sg->inst[i].partial <= 1);
            for (size_t w = 0; w < cfg.n_windows; w++)
                assert_true(isnan(sg->inst[i].window[w]) ||
                            (sg->inst[i].window[w] >= 0 && sg->inst[i].window[w] <= 1));
        }
        const am_terms_prev *pv;
        size_t n;
        assert_int_equal(am_terms_preview(ws, lex, txt[0], txt[1], &pv, &n), AM_OK);
    }
    const am_terms_seg *sg;
    assert_int_equal(am_terms_score(ws, lex, "dry \xC3", "", "", NULL, 0, &sg), AM_ERR_UTF8);
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

static void test_preview(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    const char *alts[] = {"toux sèche", "toux grasse"};
    assert_int_equal(am_gloss_add(&g, "dry cough", alts, 1, 0, 0, "7"), AM_OK);
    add1(&g, "cough", "toux", 0, 0);
    add1(&g, "flu", "influenza", 0, 1);
    add1(&g, "fever", "fièvre", 0, 0);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = build(&g, &cfg);
    assert_int_equal(am_terms_lex_size(lex), 4);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_prev *pv;
    size_t n;
    const char *hyp = "toux sèche , grippe ou Influenza";
    assert_int_equal(am_terms_preview(ws, lex, "Dry cough, flu or fever", hyp, &pv, &n), AM_OK);
    assert_int_equal(n, 4);
    /* source order: dry cough (0), cough (1), flu (2), fever (3) */
    assert_int_equal(pv[0].entry, 0);
    assert_int_equal(pv[0].used, AM_TERMS_EXACT);
    assert_int_equal(pv[0].alt, 0);
    assert_int_equal(pv[0].hyp.byte_start, 0);
    assert_int_equal(pv[0].src.byte_end, 9);
    assert_int_equal(pv[1].entry, 1);
    assert_int_equal(pv[1].used, AM_TERMS_EXACT);
    assert_int_equal(pv[2].entry, 2);
    assert_true(pv[2].forbidden);
    assert_int_equal(pv[2].used, AM_TERMS_EXACT); /* a violation */
    assert_int_equal(pv[2].hyp.byte_start, byte_of(hyp, "Influenza"));
    assert_int_equal(pv[3].entry, 3);
    assert_int_equal(pv[3].used, AM_TERMS_NONE);
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* The TICO-19 glossary into *g, the Snowball French stopwords into *sw and
 * a stem-matching French configuration into *cfg, compiled (the caller
 * frees all four). */
static am_terms_lex *tico_stem_lex(am_gloss *g, am_sw **sw, am_terms_cfg *cfg)
{
    tu_gloss_load("data/glossaries/tico19/f_en-fr_XX.csv", g);
    assert_int_equal(am_sw_builtin("snowball", "fr", AM_NORM_NFKC, 1, sw), AM_OK);
    am_terms_cfg_default(cfg);
    cfg->sw = *sw;
    cfg->stem_match = 1;
    cfg->stem_lang = "fr";
    return build(g, cfg);
}

/* ---- TICO-19 dev set sanity run ----------------------------------------- */

static void run_dev(const am_terms_lex *lex, const tu_tico *tico, const am_terms_cfg *cfg,
                    am_terms_totals *tot, size_t *nseg)
{
    am_terms_ws *ws = am_terms_ws_new();
    am_terms_totals_init(tot, cfg);
    *nseg = 0;
    for (size_t i = 0; i < tico->n; i++) {
        const char *s = tico->segs[i].src, *ref = tico->segs[i].ref;
        const char *h = tico->segs[i].hyp;
        assert_non_null(s);
        if (!h)
            h = "";
        const am_terms_seg *sg;
        assert_int_equal(am_terms_score(ws, lex, s, h, ref, NULL, 0, &sg), AM_OK);
        for (size_t k = 0; k < sg->n_inst; k++) {
            const am_terms_inst *in = &sg->inst[k];
            assert_true(in->ref.tok_end > in->ref.tok_start);
            assert_true(in->ref.byte_end > in->ref.byte_start);
            assert_true(in->ref.byte_end <= strlen(ref));
            assert_true(in->partial >= 0 && in->partial <= 1);
            assert_true(in->reorder >= 0 && in->reorder <= 1);
            if (in->match != AM_TERMS_NONE)
                assert_true(in->hyp.byte_end <= strlen(h));
        }
        assert_int_equal(am_terms_totals_add(tot, &sg->totals), AM_OK);
        (*nseg)++;
    }
    am_terms_ws_free(ws);
}

static void test_tico19_dev(void **state)
{
    (void)state;
    tu_tico tico;
    tu_tico_load(&tico);
    size_t nref = tico.n;
    json_t *golden = tu_json("data/golden/tico19-enfr-dev.json");
    assert_int_equal(nref, json_integer_value(json_object_get(golden, "segments")));
    json_decref(golden);

    am_gloss g;
    am_sw *sw = NULL;
    am_terms_cfg cfg;
    am_terms_lex *lex = tico_stem_lex(&g, &sw, &cfg);

    am_terms_totals t1, t2;
    size_t n1, n2;
    clock_t c0 = clock();
    run_dev(lex, &tico, &cfg, &t1, &n1);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    run_dev(lex, &tico, &cfg, &t2, &n2);
    assert_int_equal(n1, nref);
    assert_true(t1.instances > 0);
    assert_true(t1.exact > 0);
    assert_true(t1.exact <= t1.instances);
    assert_true(t1.exact + t1.stem <= t1.instances);
    assert_true(t1.partial_sum >= (double)t1.exact);
    assert_true(t1.partial_sum <= (double)t1.instances);
    assert_true(t1.win_count[0] <= t1.exact);
    assert_true(t1.win_count[0] > 0);
    assert_true(t1.deviations > 0);
    /* deterministic: a second run with a fresh workspace gives the same */
    assert_int_equal(t1.instances, t2.instances);
    assert_int_equal(t1.exact, t2.exact);
    assert_int_equal(t1.stem, t2.stem);
    assert_int_equal(t1.deviations, t2.deviations);
    assert_true(t1.partial_sum == t2.partial_sum && t1.reorder_sum == t2.reorder_sum);
    assert_true(t1.win_sum[0] == t2.win_sum[0] && t1.win_sum[1] == t2.win_sum[1]);
    am_terms_scores sc;
    am_terms_totals_scores(&t1, &sc);
    print_message("tico19 dev: %zu segments, %llu instances, exact %.4f, stem %llu, "
                  "partial %.4f, reorder %.4f, wo2 %.4f, wo3 %.4f, deviations %llu "
                  "(%.0f segments/s)\n",
                  n1, (unsigned long long)t1.instances, sc.exact, (unsigned long long)t1.stem,
                  sc.partial, sc.reorder, sc.window[0], sc.window[1],
                  (unsigned long long)t1.deviations, secs > 0 ? (double)n1 / secs : 0.0);

    am_terms_lex_free(lex);
    am_sw_free(sw);
    am_gloss_cleanup(&g);
    tu_tico_free(&tico);
}

/* am_terms_score_tok (the hypothesis and translation tokenized once by the
 * caller and shared with recall) gives exactly am_terms_score's result on
 * the whole dev set, and refuses tokens of another tokenizer. */
static void test_shared_tokens(void **state)
{
    (void)state;
    tu_tico tico;
    tu_tico_load(&tico);
    am_gloss g;
    am_sw *sw = NULL;
    am_terms_cfg cfg;
    am_terms_lex *lex = tico_stem_lex(&g, &sw, &cfg);
    am_terms_ws *w1 = am_terms_ws_new(), *w2 = am_terms_ws_new();
    am_buf ht, rt;
    am_buf_init(&ht);
    am_buf_init(&rt);
    size_t insts = 0;
    for (size_t i = 0; i < tico.n; i++) {
        const char *s = tico.segs[i].src, *ref = tico.segs[i].ref;
        const char *h = tico.segs[i].hyp ? tico.segs[i].hyp : "";
        const am_terms_seg *a, *b;
        assert_int_equal(am_terms_score(w1, lex, s, h, ref, NULL, 0, &a), AM_OK);
        assert_int_equal(am_tok_tokenize(AM_TOK_INTL, h, &ht), AM_OK);
        assert_int_equal(am_tok_tokenize(AM_TOK_INTL, ref, &rt), AM_OK);
        am_tok_text hh = {h, am_buf_str(&ht), AM_TOK_INTL, NULL};
        am_tok_text rr = {ref, am_buf_str(&rt), AM_TOK_INTL, NULL};
        assert_int_equal(am_terms_score_tok(w2, lex, s, &hh, &rr, NULL, 0, &b), AM_OK);
        assert_int_equal(a->n_inst, b->n_inst);
        insts += a->n_inst;
        for (size_t k = 0; k < a->n_inst; k++) {
            const am_terms_inst *x = &a->inst[k], *y = &b->inst[k];
            assert_int_equal(x->entry, y->entry);
            assert_int_equal(x->match, y->match);
            assert_int_equal(x->ref.byte_start, y->ref.byte_start);
            assert_int_equal(x->ref.byte_end, y->ref.byte_end);
            assert_int_equal(x->hyp.byte_start, y->hyp.byte_start);
            assert_int_equal(x->hyp.byte_end, y->hyp.byte_end);
            assert_true(x->partial == y->partial && x->reorder == y->reorder);
        }
        assert_int_equal(a->totals.exact, b->totals.exact);
        assert_int_equal(a->totals.stem, b->totals.stem);
        assert_int_equal(a->totals.deviations, b->totals.deviations);
        assert_true(a->totals.partial_sum == b->totals.partial_sum);
        assert_true(a->totals.win_sum[0] == b->totals.win_sum[0]);
    }
    assert_true(insts > 100);
    /* tokens of another tokenizer (13a keeps "l'" with its word) */
    const am_terms_seg *sg;
    const char *h = "l'oxygène, le coronavirus";
    assert_int_equal(am_tok_tokenize(AM_TOK_13A, h, &ht), AM_OK);
    am_tok_text bad = {h, am_buf_str(&ht), AM_TOK_13A, NULL};
    am_tok_text ok = {h, NULL, AM_TOK_INTL, NULL};
    assert_int_equal(am_terms_score_tok(w2, lex, "oxygen", &bad, &ok, NULL, 0, &sg),
                     AM_ERR_INVALID);
    assert_int_equal(am_terms_score_tok(w2, lex, "oxygen", &ok, &bad, NULL, 0, &sg),
                     AM_ERR_INVALID);
    /* NULL tokens: tokenized here, as am_terms_score */
    assert_int_equal(am_terms_score_tok(w2, lex, "oxygen", &ok, &ok, NULL, 0, &sg), AM_OK);
    am_buf_cleanup(&ht);
    am_buf_cleanup(&rt);
    am_terms_ws_free(w1);
    am_terms_ws_free(w2);
    am_terms_lex_free(lex);
    am_sw_free(sw);
    am_gloss_cleanup(&g);
    tu_tico_free(&tico);
}

/* A compiled set is kept per session, thousands at once (issue 27): a
 * 131-entry glossary whose entries share their common words ("word",
 * "mot" and their stems) compiles into under 36 KB (52.4 KB before its
 * hash tables were sized exactly and its repeated token strings kept
 * once), and every entry is still found through those tables: each
 * source with its target is an exact match, with the next entry's target
 * no match, and with its plural a stem match. */
static void test_compact_set(void **state)
{
    (void)state;
    enum { N = 131 };
    am_gloss g;
    am_gloss_init(&g);
    char a[64], b[64], src[160], hyp[160], ref[160];
    for (int k = 0; k < N; k++) {
        snprintf(a, sizeof a, "s3t%d word", k);
        snprintf(b, sizeof b, "c3t%d mot", k);
        add1(&g, a, b, 0, 0);
    }
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    cfg.stem_match = 1;
    cfg.stem_lang = "fr-FR";
    am_terms_lex *lex = build(&g, &cfg);
    assert_int_equal(am_terms_lex_size(lex), N);
    assert_true(am_terms_lex_bytes(lex) < 36 * 1024);
    am_terms_ws *ws = am_terms_ws_new();
    const am_terms_seg *sg;
    for (int k = 0; k < N; k++) {
        snprintf(src, sizeof src, "the s3t%d word here", k);
        snprintf(ref, sizeof ref, "le c3t%d mot ici", k);
        assert_int_equal(am_terms_score(ws, lex, src, ref, ref, NULL, 0, &sg), AM_OK);
        assert_int_equal(sg->totals.instances, 1);
        assert_int_equal(sg->totals.exact, 1);
        snprintf(hyp, sizeof hyp, "le c3t%d mot ici", (k + 1) % N);
        assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, NULL, 0, &sg), AM_OK);
        assert_int_equal(sg->totals.instances, 1);
        assert_int_equal(sg->totals.exact, 0);
        assert_int_equal(sg->totals.stem, 0);
        snprintf(hyp, sizeof hyp, "les c3t%d mots ici", k);
        assert_int_equal(am_terms_score(ws, lex, src, hyp, ref, NULL, 0, &sg), AM_OK);
        assert_int_equal(sg->totals.exact, 0);
        assert_int_equal(sg->totals.stem, 1);
    }
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table2),
        cmocka_unit_test(test_repeated_and_deviations),
        cmocka_unit_test(test_forbidden_and_case),
        cmocka_unit_test(test_stem),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_annotations),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_preview),
        cmocka_unit_test(test_random_texts),
        cmocka_unit_test(test_tico19_dev),
        cmocka_unit_test(test_shared_tokens),
        cmocka_unit_test(test_compact_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
