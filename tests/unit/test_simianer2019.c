/* test_simianer2019.c — profile simianer2019 (= rk.rb) against the seeds and
 * the rk.rb values on tico19-enfr-dev (data/golden/). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "compat/simianer2019.h"
#include "recall.h"
#include "stopwords.h"
#include "vocab.h"

/* ---- rk.rb's reading of the WMT SGML segments ------------------------- */

/* Returns s[0..n) without tags (as the regex <[^>]*> removes them: a '<'
 * with no later '>' is text, as in "< 5 ans"), collapsing ASCII whitespace
 * runs to one space and trimming. Caller frees. */
static char *seg_text(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    assert_non_null(out);
    size_t o = 0;
    int space = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '<') {
            const char *gt = memchr(s + i, '>', n - i);
            if (gt) {
                i = (size_t)(gt - s);
                continue;
            }
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
            space = 1;
            continue;
        }
        if (space && o > 0)
            out[o++] = ' ';
        space = 0;
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* rk.rb's text of every segment of d: the raw content (am_sgml_seg.raw)
 * through seg_text. Unlike am_sgml_seg.text, entities are NOT decoded
 * ("&amp;" stays), as rk.rb reads the files. Caller frees with free_texts. */
static char **rk_texts(const am_sgml_doc *d)
{
    char **v = calloc(d->nsegs + 1, sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < d->nsegs; i++)
        v[i] = seg_text(d->segs[i].raw, strlen(d->segs[i].raw));
    return v;
}

static void free_texts(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void assert_pair(json_t *pair, const am_recall_count *c)
{
    assert_true(json_is_array(pair));
    assert_int_equal(json_integer_value(json_array_get(pair, 0)), c->hits);
    assert_int_equal(json_integer_value(json_array_get(pair, 1)), c->total);
}

/* ---- tests ------------------------------------------------------------- */

static void test_reader(void **state)
{
    (void)state;
    const char *in = "  a <term id=\"1\" tgt=\"x|y\"> b  c </term>\td ";
    char *t = seg_text(in, strlen(in));
    assert_string_equal(t, "a b c d");
    free(t);
    in = " x : < 5 ans , 5-17 ans ";
    t = seg_text(in, strlen(in));
    assert_string_equal(t, "x : < 5 ans , 5-17 ans");
    free(t);
}

/* rk.rb splits on whitespace and drops only stopwords, [[:punct:]] tokens
 * (ASCII punctuation and symbols, Unicode P*) and digits; it does not
 * normalize. So "didn\u00b4t" stays one word, and a lone spacing acute
 * (Sk, not ASCII) or a lone combining mark counts as a content word, unlike
 * the standard profile (test_recall test_nonword_tokens). */
static void test_simianer_nonword(void **state)
{
    (void)state;
    am_toks t;
    am_toks_init(&t);
    assert_int_equal(am_simianer_content_words(NULL, "didn\xc2\xb4t \xc2\xb4 \xcc\x81 ' 7", &t),
                     AM_OK);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.v[0], "didn\xc2\xb4t");
    assert_string_equal(t.v[1], "\xc2\xb4");
    assert_string_equal(t.v[2], "\xcc\x81");
    am_toks_cleanup(&t);
}

static void test_slides(void **state)
{
    (void)state;
    json_t *seeds = tu_json("data/golden/seeds.json");
    json_t *ex = json_object_get(seeds, "simianer2019_slides");
    json_t *segs = json_object_get(ex, "segments");
    assert_int_equal(json_array_size(segs), 2);

    const char *sw_words[] = {"the", "The"};
    am_sw *sw = NULL;
    assert_int_equal(am_sw_from_words(sw_words, 2, AM_NORM_NONE, 0, &sw), AM_OK);
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    am_vocab *hist = am_vocab_new();
    am_recall_totals tot;
    am_recall_totals_init(&tot, 1);
    am_recall_seg r;
    am_recall_seg_init(&r);
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s)
    {
        const char *hyp = json_string_value(json_object_get(s, "hypothesis"));
        assert_int_equal(am_simianer_segment(&cfg,
                                             json_string_value(json_object_get(s, "translation")),
                                             &hyp, 1, am_recall_vocab_lookup, hist, &r),
                         AM_OK);
        assert_pair(json_object_get(s, "r0"), &r.sys[0].r[0]);
        assert_pair(json_object_get(s, "r1"), &r.sys[0].r[1]);
        assert_pair(json_object_get(s, "r01"), &r.sys[0].r01);
        json_t *words = json_object_get(s, "words");
        assert_int_equal(r.words.n, json_object_size(words));
        for (size_t w = 0; w < r.words.n; w++) {
            json_t *exp = json_object_get(words, r.words.v[w]);
            assert_non_null(exp);
            assert_int_equal(r.shot[w], json_integer_value(json_array_get(exp, 0)));
            assert_int_equal(r.hit[w], json_is_true(json_array_get(exp, 1)));
        }
        assert_int_equal(am_recall_totals_merge(&tot, &r.sys[0]), AM_OK);
        am_recall_seg_commit(&r, hist);
    }
    json_t *sess = json_object_get(ex, "session");
    assert_pair(json_object_get(sess, "r0"), &tot.r[0]);
    assert_pair(json_object_get(sess, "r1"), &tot.r[1]);
    assert_pair(json_object_get(sess, "r01"), &tot.r01);

    /* Case-sensitive: without "The" in the list, "The" becomes a word. */
    am_sw *lower = NULL;
    assert_int_equal(am_sw_from_words(sw_words, 1, AM_NORM_NONE, 0, &lower), AM_OK);
    am_toks t;
    am_toks_init(&t);
    assert_int_equal(am_simianer_content_words(lower, "The terrier , bites 42 the ( woman ) .", &t),
                     AM_OK);
    assert_int_equal(t.n, 4);
    assert_string_equal(t.v[0], "The");
    assert_string_equal(t.v[3], "woman");
    am_toks_reset(&t);
    /* rk.rb's punctuation class: ASCII symbols and Unicode P* go, € stays. */
    assert_int_equal(am_simianer_content_words(NULL, "<> $ ... « » \xe2\x82\xac 10 \xd9\xa3 x", &t),
                     AM_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.v[0], "\xe2\x82\xac");
    assert_string_equal(t.v[1], "x");
    assert_int_equal(am_simianer_content_words(NULL, "bad \xff", &t), AM_ERR_UTF8);
    assert_int_equal(t.n, 2);
    am_toks_cleanup(&t);

    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
    am_sw_free(lower);
    am_sw_free(sw);
    json_decref(seeds);
}

/* rk.rb -p prints 0.0 where a segment has no counted word; we give null. */
static void check_seg_value(json_t *exp, const am_recall_count *c)
{
    assert_true(json_is_number(exp));
    double e = json_number_value(exp);
    double v = am_recall_score(c);
    if (c->total == 0) {
        assert_true(v < 0);
        tu_assert_close(e, 0.0, 0.0);
    } else {
        tu_assert_close(v, e, 1e-12);
    }
}

static void test_tico19(void **state)
{
    (void)state;
    tu_tico tico;
    tu_tico_load(&tico);
    const am_sgml_seg *ref = tico.ref.segs, *hyp = tico.hyp.segs;
    size_t nref = tico.ref.nsegs, nhyp = tico.hyp.nsegs;
    char **ref_text = rk_texts(&tico.ref), **hyp_text = rk_texts(&tico.hyp);
    json_t *golden = tu_json("data/golden/tico19-enfr-dev.json");
    assert_int_equal(nref, json_integer_value(json_object_get(golden, "segments")));
    assert_int_equal(nhyp, nref);

    /* Hypotheses by id. */
    am_vocab *hyp_by_id = am_vocab_new();
    for (size_t i = 0; i < nhyp; i++)
        assert_int_equal(am_vocab_insert(hyp_by_id, hyp[i].id, (int64_t)i), 1);

    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin("iso", "fr", AM_NORM_NONE, 0, &sw), AM_OK);
    assert_int_equal(am_sw_size(sw), 691);
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    cfg.k = 1;

    json_t *per = json_object_get(golden, "per_segment");
    assert_int_equal(json_array_size(per), nref);
    am_vocab *hist = am_vocab_new();
    am_recall_totals tot;
    am_recall_totals_init(&tot, 1);
    am_recall_seg r;
    am_recall_seg_init(&r);
    size_t nnull = 0;
    for (size_t i = 0; i < nref; i++) {
        json_t *g = json_array_get(per, i);
        assert_string_equal(json_string_value(json_object_get(g, "id")), ref[i].id);
        int64_t h;
        assert_true(am_vocab_get(hyp_by_id, ref[i].id, &h));
        const char *htext = hyp_text[h];
        assert_int_equal(
            am_simianer_segment(&cfg, ref_text[i], &htext, 1, am_recall_vocab_lookup, hist, &r),
            AM_OK);
        check_seg_value(json_object_get(g, "r0_rk.rb"), &r.sys[0].r[0]);
        check_seg_value(json_object_get(g, "r1_rk.rb"), &r.sys[0].r[1]);
        check_seg_value(json_object_get(g, "r01_rk.rb"), &r.sys[0].r01);
        nnull += r.sys[0].r01.total == 0;
        assert_int_equal(am_recall_totals_merge(&tot, &r.sys[0]), AM_OK);
        am_recall_seg_commit(&r, hist);
    }
    assert_true(nnull > 0); /* the null case is exercised */
    json_t *rk = json_object_get(golden, "simianer2019_rk.rb");
    assert_pair(json_object_get(rk, "r0"), &tot.r[0]);
    assert_pair(json_object_get(rk, "r1"), &tot.r[1]);
    assert_pair(json_object_get(rk, "r01"), &tot.r01);

    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
    am_vocab_free(hyp_by_id);
    am_sw_free(sw);
    json_decref(golden);
    free_texts(ref_text, nref);
    free_texts(hyp_text, nhyp);
    tu_tico_free(&tico);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_slides),
        cmocka_unit_test(test_simianer_nonword),
        cmocka_unit_test(test_tico19),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
