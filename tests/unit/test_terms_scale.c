/* test_terms_scale.c — the cost of terminology scoring and the preview
 * grows linearly with the input on adversarial inputs (issue 10 §1). The
 * bounds are on am_terms_ws_steps (counted work, not time): the old code
 * exceeded each of them by orders of magnitude (cubic claim scans, entries ×
 * tokens first-word chains, n² window matrices). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glossary.h"
#include "terms.h"

/* n copies of word, space-separated. Caller frees. */
static char *repeat(const char *word, size_t n)
{
    size_t wl = strlen(word);
    char *s = malloc(n * (wl + 1) + 1);
    assert_non_null(s);
    char *p = s;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, word, wl);
        p += wl;
        *p++ = ' ';
    }
    *p = '\0';
    return s;
}

static void add1(am_gloss *g, const char *src, const char *tgt, int forbidden)
{
    const char *t[] = {tgt};
    assert_int_equal(am_gloss_add(g, src, t, 1, 0, forbidden, NULL), AM_OK);
}

/* Scores (src, hyp = ref) and previews (src, hyp) once each; returns the
 * steps each call took. */
static void run(const am_terms_lex *lex, const char *src, const char *tgt, uint64_t *score_steps,
                uint64_t *prev_steps, const am_terms_seg **sg, size_t *nprev)
{
    static am_terms_ws *ws;
    if (!ws)
        ws = am_terms_ws_new();
    uint64_t s0 = am_terms_ws_steps(ws);
    assert_int_equal(am_terms_score(ws, lex, src, tgt, tgt, NULL, 0, sg), AM_OK);
    uint64_t s1 = am_terms_ws_steps(ws);
    /* copy the counts we need before the preview reuses ws */
    static am_terms_seg keep;
    keep = **sg;
    *sg = &keep;
    const am_terms_prev *pv;
    assert_int_equal(am_terms_preview(ws, lex, src, tgt, &pv, nprev), AM_OK);
    *score_steps = s1 - s0;
    *prev_steps = am_terms_ws_steps(ws) - s1;
}

/* Glossary `a,b`; source n × a, hypothesis = translation n × b: n
 * instances, all exact, one claim key (old code: 311 s at n = 3000). */
static void test_one_entry_repeated(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, "a", "b", 0);
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = NULL;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_OK);
    size_t n = 3000;
    char *src = repeat("a", n), *tgt = repeat("b", n);
    uint64_t ss, ps;
    const am_terms_seg *sg;
    size_t np;
    run(lex, src, tgt, &ss, &ps, &sg, &np);
    assert_int_equal(sg->totals.instances, n);
    assert_int_equal(sg->totals.exact, n);
    assert_int_equal(sg->totals.deviations, 0);
    assert_int_equal(sg->totals.win_count[0], n);
    assert_int_equal(np, n);
    printf("# a,b n=%zu: score %llu steps, preview %llu steps\n", n, (unsigned long long)ss,
           (unsigned long long)ps);
    assert_true(ss < 2000 * n);
    assert_true(ps < 100 * n);
    free(src);
    free(tgt);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* E entries sharing their first word (a w0 … a wE-1, none occurring) and
 * a source of n × a: nothing matches, the old first-word chain cost n × E. */
static void test_shared_first_word(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    size_t E = 20000, n = 5000;
    for (size_t k = 0; k < E; k++) {
        char s[32], t[32];
        snprintf(s, sizeof s, "a w%zu", k);
        snprintf(t, sizeof t, "b w%zu", k);
        add1(&g, s, t, k % 7 == 0);
    }
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = NULL;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_OK);
    char *src = repeat("a", n), *tgt = repeat("b", n);
    uint64_t ss, ps;
    const am_terms_seg *sg;
    size_t np;
    run(lex, src, tgt, &ss, &ps, &sg, &np);
    assert_int_equal(sg->totals.instances, 0);
    assert_int_equal(np, 0);
    printf("# shared first word E=%zu n=%zu: score %llu steps, preview %llu steps\n", E, n,
           (unsigned long long)ss, (unsigned long long)ps);
    assert_true(ss < 100 * n);
    assert_true(ps < 100 * n);
    free(src);
    free(tgt);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* Nested prefixes a, a a, …, a×10 → b, b b, …, b×10 (one forbidden):
 * about 10 genuine hits per position; cost linear in n × hits. */
static void test_nested_prefixes(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    for (size_t k = 1; k <= 10; k++) {
        char *s = repeat("a", k), *t = repeat("b", k);
        add1(&g, s, t, k == 10);
        free(s);
        free(t);
    }
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    am_terms_lex *lex = NULL;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_OK);
    size_t n = 2000;
    char *src = repeat("a", n), *tgt = repeat("b", n);
    uint64_t ss, ps;
    const am_terms_seg *sg;
    size_t np;
    run(lex, src, tgt, &ss, &ps, &sg, &np);
    size_t hits = 0;
    for (size_t k = 1; k <= 10; k++)
        hits += n - k + 1;
    size_t forb = n - 9;
    assert_int_equal(sg->totals.instances, hits - forb);
    assert_int_equal(sg->totals.exact, hits - forb);
    assert_int_equal(sg->totals.forbidden, n / 10);
    assert_int_equal(np, hits);
    printf("# nested n=%zu: score %llu steps, preview %llu steps\n", n, (unsigned long long)ss,
           (unsigned long long)ps);
    assert_true(ss < 2000 * hits);
    assert_true(ps < 100 * hits);
    free(src);
    free(tgt);
    am_terms_lex_free(lex);
    am_gloss_cleanup(&g);
}

/* Terms of more than AM_TERMS_MAX_TERM_TOKENS tokens are refused (glossary
 * sources and targets, annotation targets): matching costs at most that
 * many trie steps per position. */
static void test_term_length_limit(void **state)
{
    (void)state;
    am_terms_cfg cfg;
    am_terms_cfg_default(&cfg);
    char *at = repeat("a", AM_TERMS_MAX_TERM_TOKENS),
         *over = repeat("a", AM_TERMS_MAX_TERM_TOKENS + 1);
    am_terms_lex *lex = NULL;
    am_gloss g;
    am_gloss_init(&g);
    add1(&g, at, at, 0);
    assert_int_equal(am_terms_lex_build(&g, &cfg, &lex), AM_OK);
    am_gloss_cleanup(&g);
    am_gloss_init(&g);
    add1(&g, over, "b", 0);
    am_terms_lex *bad = NULL;
    assert_int_equal(am_terms_lex_build(&g, &cfg, &bad), AM_ERR_RANGE);
    assert_null(bad);
    am_gloss_cleanup(&g);
    am_gloss_init(&g);
    add1(&g, "a", over, 0);
    assert_int_equal(am_terms_lex_build(&g, &cfg, &bad), AM_ERR_RANGE);
    am_gloss_cleanup(&g);
    /* annotations */
    am_terms_ws *ws = am_terms_ws_new();
    const char *t1[] = {at}, *t2[] = {over};
    am_terms_annot an;
    memset(&an, 0, sizeof an);
    an.targets = t1;
    an.n_targets = 1;
    const am_terms_seg *sg;
    assert_int_equal(am_terms_score(ws, lex, at, at, at, &an, 1, &sg), AM_OK);
    assert_int_equal(sg->totals.instances, 1);
    assert_int_equal(sg->totals.exact, 1);
    an.targets = t2;
    assert_int_equal(am_terms_score(ws, lex, at, over, over, &an, 1, &sg), AM_ERR_RANGE);
    /* the occurrence limit of a workspace */
    char *src = repeat("a", 100);
    am_terms_ws_set_max_occurrences(ws, 99);
    assert_int_equal(am_terms_score(ws, lex, src, src, src, NULL, 0, &sg), AM_OK); /* 69 hits */
    am_terms_ws_set_max_occurrences(ws, 68);
    assert_int_equal(am_terms_score(ws, lex, src, src, src, NULL, 0, &sg), AM_ERR_RANGE);
    const am_terms_prev *pv;
    size_t np;
    assert_int_equal(am_terms_preview(ws, lex, src, src, &pv, &np), AM_ERR_RANGE);
    am_terms_ws_set_max_occurrences(ws, 0);
    assert_int_equal(am_terms_preview(ws, lex, src, src, &pv, &np), AM_OK);
    assert_int_equal(np, 69);
    free(src);
    am_terms_ws_free(ws);
    am_terms_lex_free(lex);
    free(at);
    free(over);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_entry_repeated),
        cmocka_unit_test(test_shared_first_word),
        cmocka_unit_test(test_nested_prefixes),
        cmocka_unit_test(test_term_length_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
