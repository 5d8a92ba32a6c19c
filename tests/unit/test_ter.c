/* test_ter.c — TER (sacreBLEU 2.6.0) and TERm (core/ter.h). */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "config.h"
#include "glossary.h"
#include "score.h"
#include "ter.h"

/* ---- shared/data multilingual golden values (data/golden/multilingual.json) - */

/* The helpers (tu_ml_*) are in testutil.c, shared with test_ter.c / test_chrf.c. */

/* am_ter_tokenize_opts with options o on text, joined with spaces. */
static void check_tok_opts(const char *text, int norm, int nopunct, int asian, int cs,
                           const char *want)
{
    am_ter_opts o;
    am_ter_opts_init(&o);
    o.normalized = norm;
    o.no_punct = nopunct;
    o.asian_support = asian;
    o.case_sensitive = cs;
    am_toks t;
    am_toks_init(&t);
    am_ter_spans sp;
    am_ter_spans_init(&sp);
    assert_int_equal(am_ter_tokenize_opts(text, &o, &t, &sp), AM_OK);
    am_buf b;
    am_buf_init(&b);
    am_toks_join(&t, &b);
    if (strcmp(am_buf_str(&b), want))
        fail_msg("'%s' (norm %d punct %d asian %d): got '%s', want '%s'", text, norm, !nopunct,
                 asian, am_buf_str(&b), want);
    assert_int_equal(sp.n, t.n);
    am_buf_cleanup(&b);
    am_toks_cleanup(&t);
    am_ter_spans_cleanup(&sp);
}

/* The tokenizer options, against sacreBLEU 2.6.0's TercomTokenizer (its own
 * tests in test/test_tokenizer_ter.py, and outputs of tokenizer_ter.py on
 * the edge cases of each rule). */
static void test_tokenizer_options(void **state)
{
    (void)state;
    /* sacreBLEU's test_tokenizer_ter.py */
    check_tok_opts("a b c d.", 0, 0, 0, 0, "a b c d.");
    check_tok_opts("A B C D.", 0, 0, 0, 0, "a b c d.");
    check_tok_opts("a b c d.", 0, 1, 0, 0, "a b c d");
    check_tok_opts("A ; B ) C : D.", 0, 1, 0, 0, "a b c d");
    check_tok_opts("a b (c) d.", 1, 0, 0, 0, "a b ( c ) d .");
    check_tok_opts("Jim's car.", 1, 0, 0, 0, "jim 's car .");
    check_tok_opts("4.2", 1, 0, 0, 0, "4.2");
    check_tok_opts("美众院公布对特", 1, 0, 1, 0, "美 众 院 公 布 对 特");
    check_tok_opts("りの拳銃を持", 1, 0, 1, 0, "りの 拳 銃 を 持");
    /* each rule (values from tokenizer_ter.py) */
    check_tok_opts("4.2, 4-5 a.b", 1, 0, 0, 0, "4.2 , 4 - 5 a . b");
    check_tok_opts("4.2, 4-5 a.b", 0, 1, 0, 0, "42 4-5 ab");
    check_tok_opts("4.2, 4-5 a.b", 1, 1, 1, 0, "42 4 - 5 a b");
    check_tok_opts("&amp;lt;b&gt; &quot;x&quot;", 1, 0, 0, 0, "< b > \" x \"");
    check_tok_opts("&amp;lt;b&gt; &quot;x&quot;", 0, 1, 0, 0, "&ampltb&gt &quotx&quot");
    check_tok_opts("&amp;lt;b&gt; &quot;x&quot;", 1, 1, 1, 0, "< b > x");
    check_tok_opts("line one\n-two\nthree", 1, 0, 0, 0, "line onetwo three");
    check_tok_opts("line one\n-two\nthree", 0, 1, 0, 0, "line one -two three");
    check_tok_opts("ΟΔΟΣ. ΑΣ'Α", 1, 0, 0, 0, "οδος . ασ'α");
    check_tok_opts("ΟΔΟΣ. ΑΣ'Α", 1, 0, 0, 1, "ΟΔΟΣ . ΑΣ'Α");
    check_tok_opts("İSTANBUL's", 1, 0, 0, 0, "i\xcc\x87stanbul 's");
    check_tok_opts("x.,y", 1, 0, 0, 0, "x . , y");
    check_tok_opts("x.,y", 1, 1, 1, 0, "x y");
    check_tok_opts("end's", 1, 0, 0, 0, "end 's");
    check_tok_opts("end's   \t", 1, 0, 0, 0, "end 's"); /* str.rstrip() first */
    /* asian_support acts only inside normalized / no_punct */
    check_tok_opts("美众院公布对特", 0, 0, 1, 0, "美众院公布对特");
    check_tok_opts("「東京」、大阪。（テスト）！", 0, 0, 1, 0, "「東京」、大阪。（テスト）！");
    check_tok_opts("「東京」、大阪。（テスト）！", 0, 1, 0, 0, "「東京」、大阪。（テスト）！");
    check_tok_opts("「東京」、大阪。（テスト）！", 0, 1, 1, 0, "東京大阪テスト");
    check_tok_opts("「東京」、大阪。（テスト）！", 1, 0, 1, 0,
                   "「 東 京 」 、 大 阪 。 （ テスト ） ！");
    check_tok_opts("「東京」、大阪。（テスト）！", 1, 1, 1, 0, "東 京 大 阪 テスト");
    check_tok_opts("", 1, 1, 1, 0, "");
    check_tok_opts("   ", 1, 1, 1, 0, "");
    /* bad input */
    am_toks t;
    am_toks_init(&t);
    am_ter_opts o;
    am_ter_opts_init(&o);
    o.normalized = 1;
    assert_int_equal(am_ter_tokenize_opts("bad \xff", &o, &t, NULL), AM_ERR_UTF8);
    assert_int_equal(t.n, 0);
    assert_int_equal(am_ter_tokenize_opts(NULL, &o, &t, NULL), AM_ERR_INVALID);
    am_toks_cleanup(&t);
}

/* Token byte spans: each token maps back to the input bytes it came from,
 * through lower-casing that changes byte lengths, entity decoding,
 * punctuation splitting and removal. */
static void test_tokenizer_spans(void **state)
{
    (void)state;
    am_ter_opts o;
    am_ter_opts_init(&o);
    o.normalized = 1;
    o.no_punct = 1;
    o.asian_support = 1;
    am_toks t;
    am_toks_init(&t);
    am_ter_spans sp;
    am_ter_spans_init(&sp);
    /* "İX" lowers to 4 bytes from 3; "&amp;" is one token "&" of 5 bytes;
     * "a.b" loses its period and splits; 東京 splits per character */
    const char *text = "İX &amp; a.b 東京";
    assert_int_equal(am_ter_tokenize_opts(text, &o, &t, &sp), AM_OK);
    assert_int_equal(t.n, 6);
    const char *want[] = {"i\xcc\x87x", "&", "a", "b", "東", "京"};
    const size_t st[] = {0, 4, 10, 12, 14, 17}, en[] = {3, 9, 11, 13, 17, 20};
    for (size_t k = 0; k < 6; k++) {
        assert_string_equal(t.v[k], want[k]);
        assert_int_equal(sp.start[k], st[k]);
        assert_int_equal(sp.end[k], en[k]);
    }
    /* without normalization: whitespace tokens, spans on the input */
    am_ter_opts_init(&o);
    assert_int_equal(am_ter_tokenize_opts("  Ab  ΣΑΣ ", &o, &t, &sp), AM_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(sp.start[0], 2);
    assert_int_equal(sp.end[0], 4);
    assert_int_equal(sp.start[1], 6);
    assert_int_equal(sp.end[1], 12);
    assert_string_equal(t.v[1], "σας");
    am_toks_cleanup(&t);
    am_ter_spans_cleanup(&sp);
}

/* The TER options of a golden case. */
static void ter_case_opts(const tu_ml_cmd *c, am_ter_opts *o, am_config *cfg)
{
    am_config_init(cfg);
    static const char *const flags[] = {"--ter-case-sensitive", "--ter-normalized",
                                        "--ter-no-punct", "--ter-asian-support"};
    for (size_t k = 0; k < 4; k++)
        if (tu_ml_has(c, flags[k], NULL))
            assert_int_equal(am_config_set(cfg, flags[k] + 2, "true", NULL), AM_OK);
    am_config_ter_opts(cfg, o);
}

/* Every TER value of the multilingual golden file (corpus and sentence
 * level, one and two references, every tokenizer option; Chinese,
 * Japanese, German, English) through am_ter_segment, bit for bit, with its
 * sacreBLEU signature. */
static void test_golden_multilingual(void **state)
{
    (void)state;
    json_t *g = tu_json("data/golden/multilingual.json");
    am_ter_ws *ws = am_ter_ws_new();
    size_t ncases = 0, nsent = 0;
    const char *kinds[] = {"corpus", "sentence"};
    am_buf sig;
    am_buf_init(&sig);
    for (int kind = 0; kind < 2; kind++) {
        json_t *arr = json_object_get(g, kinds[kind]);
        size_t i;
        json_t *cs;
        json_array_foreach(arr, i, cs)
        {
            if (strcmp(json_string_value(json_object_get(cs, "metric")), "ter"))
                continue;
            tu_ml_cmd c;
            tu_ml_cmd_parse(json_string_value(json_object_get(cs, "command")), &c);
            am_config cfg;
            am_ter_opts o;
            ter_case_opts(&c, &o, &cfg);
            am_config_ter_signature(&cfg, c.nrefs, &sig);
            assert_string_equal(am_buf_str(&sig),
                                json_string_value(json_object_get(cs, "signature")));
            tu_ml_files f;
            tu_ml_files_load(g, cs, &c, &f);
            am_ter_stats st;
            am_ter_stats_init(&st);
            json_t *sent = json_object_get(cs, "scores");
            for (size_t k = 0; k < f.nseg; k++) {
                const char *refs[4];
                for (size_t r = 0; r < f.nrefs; r++)
                    refs[r] = f.ref[r][k];
                double e = -1, len = -1;
                assert_int_equal(am_ter_segment(ws, &o, f.hyp[k], refs, f.nrefs, &e, &len), AM_OK);
                am_ter_stats_add(&st, e, len);
                if (kind == 1 && k < json_array_size(sent)) {
                    double v = 100 * am_ter_score(e, len);
                    if (v != json_real_value(json_array_get(sent, k)))
                        fail_msg("%s segment %zu: %.17g, sacreBLEU %.17g",
                                 json_string_value(json_object_get(cs, "id")), k, v,
                                 json_real_value(json_array_get(sent, k)));
                    nsent++;
                }
            }
            if (kind == 0) {
                double v = 100 * am_ter_stats_score(&st);
                if (v != json_real_value(json_object_get(cs, "score")))
                    fail_msg("%s: %.17g, sacreBLEU %.17g",
                             json_string_value(json_object_get(cs, "id")), v,
                             json_real_value(json_object_get(cs, "score")));
            }
            tu_ml_files_free(&f);
            free(c.words);
            ncases++;
        }
    }
    /* 72 corpus cases (9 option sets on 8 set/reference variants) and 16
     * sentence-level ones */
    assert_int_equal(ncases, 88);
    assert_true(nsent >= 200);
    am_buf_cleanup(&sig);
    am_ter_ws_free(ws);
    json_decref(g);
}

/* Several references: the fewest edits and the average length, exactly as
 * TER._compute_segment_statistics; bad arguments are refused. */
static void test_multi_ref(void **state)
{
    (void)state;
    const char *refs[] = {"a b c d", "x a b c d e", ""};
    double e = -1, len = -1;
    /* against ref 0: 0 edits; lengths 4, 6, 0: average 10/3 */
    assert_int_equal(am_ter_segment(NULL, NULL, "a b c d", refs, 3, &e, &len), AM_OK);
    assert_true(e == 0.0);
    tu_assert_close(len, 10.0 / 3.0, 1e-15);
    /* the empty reference gives |hyp| edits; the best is still taken */
    assert_int_equal(am_ter_segment(NULL, NULL, "x a b c d e", refs, 3, &e, &len), AM_OK);
    assert_true(e == 0.0);
    assert_int_equal(am_ter_segment(NULL, NULL, "q", refs + 2, 1, &e, &len), AM_OK);
    assert_true(e == 1.0 && len == 0.0);
    assert_int_equal(am_ter_segment(NULL, NULL, "q", refs, 0, &e, &len), AM_ERR_INVALID);
    const char *withnull[] = {"a", NULL};
    assert_int_equal(am_ter_segment(NULL, NULL, "q", withnull, 2, &e, &len), AM_ERR_INVALID);
    const char *badutf[] = {"a \xff"};
    assert_int_equal(am_ter_segment(NULL, NULL, "q", badutf, 1, &e, &len), AM_ERR_UTF8);
    am_ter_stats s;
    am_ter_stats_init(&s);
    am_ter_stats_add(&s, 1.0, 2.5);
    am_ter_stats_add(&s, 1.0, 1.5);
    tu_assert_close(am_ter_stats_score(&s), 0.5, 1e-15);
}

/* Session options: parsing, the zh/ja/ko session defaults (explicit
 * settings win), the adaptmon and sacreBLEU signatures. */
static void test_config_options(void **state)
{
    (void)state;
    am_config c;
    am_buf sig;
    am_buf_init(&sig);
    am_config_init(&c);
    am_config_ter_signature(&c, 1, &sig);
    assert_string_equal(am_buf_str(&sig),
                        "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0");
    const char *cjk[] = {"zh", "ja", "ko", "zh-Hant"}, *other[] = {"fr", "und", "de-CH"};
    for (size_t i = 0; i < 4; i++) {
        am_config_init(&c);
        assert_int_equal(am_config_set(&c, "target_lang", cjk[i], NULL), AM_OK);
        am_config_session_defaults(&c);
        assert_true(c.ter_normalized && c.ter_asian_support && !c.ter_no_punct);
        am_config_ter_signature(&c, 1, &sig);
        assert_string_equal(
            am_buf_str(&sig),
            "nrefs:1|case:lc|tok:tercom|norm:yes|punct:yes|asian:yes|version:2.6.0");
        am_config_signature(&c, &sig);
        assert_non_null(strstr(am_buf_str(&sig), "|ter:norm,asian"));
    }
    for (size_t i = 0; i < 3; i++) {
        am_config_init(&c);
        assert_int_equal(am_config_set(&c, "target_lang", other[i], NULL), AM_OK);
        am_config_session_defaults(&c);
        assert_true(!c.ter_normalized && !c.ter_asian_support);
    }
    /* an explicit choice is kept */
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "ja", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "ter_normalized", "false", NULL), AM_OK);
    am_config_session_defaults(&c);
    assert_true(!c.ter_normalized && !c.ter_asian_support);
    /* every option in both signatures */
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "ter-case-sensitive", "true", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "ter-no-punct", "true", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "ter_asian_support", "1", NULL), AM_OK);
    am_config_ter_signature(&c, 2, &sig);
    assert_string_equal(am_buf_str(&sig),
                        "nrefs:2|case:mixed|tok:tercom|norm:no|punct:no|asian:yes|version:2.6.0");
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|ter:cs,nopunct,asian"));
    am_ter_opts o;
    am_config_ter_opts(&c, &o);
    assert_true(o.case_sensitive && !o.normalized && o.no_punct && o.asian_support);
    am_config before = c;
    assert_int_equal(am_config_set(&c, "ter_normalized", "2", NULL), AM_ERR_INVALID);
    assert_memory_equal(&c, &before, sizeof c);
    am_buf_cleanup(&sig);
}

/* TERm with the tokenizer options: term costs follow the term's words
 * through normalization ("chien." is two TER tokens, "chien" and "."); TER
 * itself is sacreBLEU's normalized TER. */
static void test_term_costs_follow_normalization(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "ter_normalized", "true", NULL), AM_OK);
    am_gloss g;
    am_gloss_init(&g);
    const char *tgt[] = {"chien"};
    assert_int_equal(am_gloss_add(&g, "dog", tgt, 1, 0, 0, NULL), AM_OK);
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, &g, NULL, &s, NULL), AM_OK);
    assert_non_null(strstr(am_scorer_signature(s), "|ter:norm"));
    am_score_ws *ws = am_score_ws_new();
    const char *hyps[] = {"Le chat."};
    am_seg_input in = {.source = "The dog.", .translation = "Le chien.", .hyps = hyps, .nsys = 1};
    am_vocab *hist = am_vocab_new();
    am_seg_result res;
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL), AM_OK);
    const am_sys_seg *r = &res.sys[0];
    assert_true(r->terms && r->terms->n_inst == 1);
    assert_int_equal(r->ter_ref_len, 3); /* le chien . */
    assert_true(r->ter_edits == 1.0); /* chien → chat */
    assert_true(r->term_edits == 2.0); /* a term word: cost 2 */
    am_vocab_free(hist);
    am_score_ws_free(ws);
    am_scorer_free(s);
    am_gloss_cleanup(&g);
}

/* ---- the TICO-19 dev set ---------------------------------------------------- */

typedef struct tico {
    tu_tico t;
    /* Per reference segment, per word of its text (split on spaces): 1 when
     * the word lies inside a <term> tag (the tag's tok_start/tok_count). */
    unsigned char **in_term;
    size_t *nwords;
    json_t *golden;
} tico;

static int tico_setup(void **state)
{
    tico *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    tu_tico_load(&t->t);
    t->in_term = calloc(t->t.n, sizeof *t->in_term);
    t->nwords = calloc(t->t.n, sizeof *t->nwords);
    assert_true(t->in_term && t->nwords);
    am_toks w;
    am_toks_init(&w);
    for (size_t k = 0; k < t->t.n; k++) {
        const am_sgml_seg *r = t->t.segs[k].ref_seg;
        am_toks_reset(&w);
        am_toks_split_ascii(&w, r->text);
        t->nwords[k] = w.n;
        t->in_term[k] = calloc(w.n + 1, 1);
        assert_non_null(t->in_term[k]);
        for (size_t m = 0; m < r->nterms; m++)
            for (size_t j = r->terms[m].tok_start;
                 j < r->terms[m].tok_start + r->terms[m].tok_count && j < w.n; j++)
                t->in_term[k][j] = 1;
    }
    am_toks_cleanup(&w);
    t->golden = tu_json("data/golden/tico19-enfr-dev.json");
    *state = t;
    return 0;
}

static int tico_teardown(void **state)
{
    tico *t = *state;
    for (size_t k = 0; k < t->t.n; k++)
        free(t->in_term[k]);
    free(t->in_term);
    free(t->nwords);
    tu_tico_free(&t->t);
    json_decref(t->golden);
    free(t);
    return 0;
}

/* TER edits of one text pair (tokenizing both). */
static double ter_texts(am_ter_ws *ws, const char *hyp, const char *ref, int cs, size_t *ref_len)
{
    am_toks h, r;
    am_toks_init(&h);
    am_toks_init(&r);
    assert_int_equal(am_ter_tokenize(hyp, cs, &h), AM_OK);
    assert_int_equal(am_ter_tokenize(ref, cs, &r), AM_OK);
    double e = -1;
    assert_int_equal(am_ter_edits(ws, &h, &r, NULL, &e), AM_OK);
    *ref_len = r.n;
    am_toks_cleanup(&h);
    am_toks_cleanup(&r);
    return e;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_seed_vectors(void **state)
{
    (void)state;
    json_t *j = tu_json("data/golden/seeds.json");
    json_t *cases = json_object_get(json_object_get(j, "sacrebleu_ter_vectors"), "cases");
    assert_true(json_array_size(cases) >= 6);
    am_ter_ws *ws = am_ter_ws_new();
    size_t k;
    json_t *c;
    json_array_foreach(cases, k, c)
    {
        json_t *hyp = json_object_get(c, "hyp"), *ref = json_object_get(c, "ref");
        assert_int_equal(json_array_size(hyp), json_array_size(ref));
        am_ter_stats st;
        am_ter_stats_init(&st);
        for (size_t q = 0; q < json_array_size(hyp); q++) {
            size_t rl;
            double e = ter_texts(ws, json_string_value(json_array_get(hyp, q)),
                                 json_string_value(json_array_get(ref, q)), 0, &rl);
            am_ter_stats_add(&st, e, rl);
        }
        tu_assert_close(am_ter_stats_score(&st), json_number_value(json_object_get(c, "ter")),
                        1e-12);
    }
    am_ter_ws_free(ws);
    json_decref(j);
}

static void test_tico_sentence_and_corpus(void **state)
{
    tico *t = *state;
    json_t *per = json_object_get(t->golden, "per_segment");
    assert_int_equal(t->t.n, 971);
    assert_int_equal(json_array_size(per), t->t.n);
    am_ter_ws *ws = am_ter_ws_new();
    am_ter_stats lc, cs;
    am_ter_stats_init(&lc);
    am_ter_stats_init(&cs);
    size_t bad = 0;
    for (size_t k = 0; k < t->t.n; k++) {
        const tu_tico_seg *s = &t->t.segs[k];
        assert_non_null(s->hyp);
        json_t *g = json_array_get(per, k);
        assert_string_equal(json_string_value(json_object_get(g, "id")), s->id);
        size_t rl;
        double e = ter_texts(ws, s->hyp, s->ref, 0, &rl);
        am_ter_stats_add(&lc, e, rl);
        double want = json_number_value(json_object_get(g, "sentence_ter"));
        double got = 100.0 * am_ter_score(e, (double)rl);
        if (fabs(got - want) >= 1e-9) {
            print_message("segment %s: TER %.12f, sacreBLEU %.12f\n", s->id, got, want);
            bad++;
        }
        double e2 = ter_texts(ws, s->hyp, s->ref, 1, &rl);
        am_ter_stats_add(&cs, e2, rl);
    }
    assert_int_equal(bad, 0);
    json_t *sb = json_object_get(t->golden, "sacrebleu_2.6.0");
    tu_assert_close(100.0 * am_ter_stats_score(&lc), json_number_value(json_object_get(sb, "ter")),
                    1e-9);
    tu_assert_close(100.0 * am_ter_stats_score(&cs),
                    json_number_value(json_object_get(sb, "ter_case_sensitive")), 1e-9);
    /* merge gives the same corpus value */
    am_ter_stats a, b;
    am_ter_stats_init(&a);
    am_ter_stats_init(&b);
    am_ter_stats_add(&a, lc.edits / 2, 10);
    am_ter_stats_add(&b, lc.edits - lc.edits / 2, (size_t)lc.ref_len - 10);
    am_ter_stats_merge(&a, &b);
    assert_true(am_ter_stats_score(&a) == am_ter_stats_score(&lc));
    assert_int_equal(a.n, 2);
    am_ter_ws_free(ws);
}

/* Initializes t with the default (lower-casing) TER tokens of text. */
static void toks_of(const char *text, am_toks *t)
{
    am_toks_init(t);
    assert_int_equal(am_ter_tokenize(text, 0, t), AM_OK);
}

static void test_term_equals_ter_without_terms(void **state)
{
    tico *t = *state;
    am_ter_ws *ws = am_ter_ws_new();
    for (size_t k = 0; k < t->t.n; k++) {
        const tu_tico_seg *s = &t->t.segs[k];
        am_toks ht, rt;
        toks_of(s->hyp, &ht);
        toks_of(s->ref, &rt);
        double *ones = malloc((rt.n + 1) * sizeof(double));
        for (size_t j = 0; j < rt.n; j++)
            ones[j] = 1.0;
        double ter = -1, term = -2, term_null = -3, e1 = -4;
        assert_int_equal(am_ter_pair(ws, &ht, &rt, ones, &ter, &term), AM_OK);
        assert_int_equal(am_ter_edits(ws, &ht, &rt, NULL, &term_null), AM_OK);
        assert_int_equal(am_ter_edits(NULL, &ht, &rt, ones, &e1), AM_OK);
        assert_true(term == ter);
        assert_true(term_null == ter);
        assert_true(e1 == ter);
        free(ones);
        am_toks_cleanup(&ht);
        am_toks_cleanup(&rt);
    }
    am_ter_ws_free(ws);
}

static void test_term_never_below_ter(void **state)
{
    tico *t = *state;
    am_ter_ws *ws = am_ter_ws_new();
    unsigned long rng = 12345;
    size_t raised = 0, tagged = 0;
    am_ter_stats st_ter, st_term;
    am_ter_stats_init(&st_ter);
    am_ter_stats_init(&st_term);
    for (int round = 0; round < 3; round++) {
        for (size_t k = 0; k < t->t.n; k++) {
            const tu_tico_seg *s = &t->t.segs[k];
            const unsigned char *in_term = t->in_term[k];
            am_toks ht, rt;
            toks_of(s->hyp, &ht);
            toks_of(s->ref, &rt);
            assert_int_equal(rt.n, t->nwords[k]);
            double *cost = malloc((rt.n + 1) * sizeof(double));
            for (size_t j = 0; j < rt.n; j++) {
                if (round == 0) { /* the real <term> spans of the reference */
                    cost[j] = in_term[j] ? 2.0 : 1.0;
                } else { /* random spans, C_term 2 or 3.5 */
                    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
                    cost[j] = ((rng >> 33) % 5 == 0) ? (round == 1 ? 2.0 : 3.5) : 1.0;
                }
            }
            double ter = -1, term = -1;
            assert_int_equal(am_ter_pair(ws, &ht, &rt, cost, &ter, &term), AM_OK);
            assert_true(term >= ter);
            if (term > ter)
                raised++;
            if (round == 0) {
                for (size_t j = 0; j < rt.n; j++)
                    tagged += in_term[j];
                am_ter_stats_add(&st_ter, ter, rt.n);
                am_ter_stats_add(&st_term, term, rt.n);
            }
            free(cost);
            am_toks_cleanup(&ht);
            am_toks_cleanup(&rt);
        }
    }
    assert_true(tagged > 900); /* 901 term tags, several words each */
    assert_true(raised > 100); /* term costs make a difference */
    assert_true(am_ter_stats_score(&st_term) > am_ter_stats_score(&st_ter));
    print_message("TICO corpus TER %.6f, TERm (reference <term> spans, C=2) %.6f\n",
                  am_ter_stats_score(&st_ter), am_ter_stats_score(&st_term));
    am_ter_ws_free(ws);
}

/* hyp/ref texts; term positions given as a string of '0'/'1' per
 * reference word ('1' = C_term 2). */
static void check_term(const char *hyp, const char *ref, const char *mask, double want_ter,
                       double want_term)
{
    am_toks ht, rt;
    toks_of(hyp, &ht);
    toks_of(ref, &rt);
    assert_int_equal(strlen(mask), rt.n);
    double cost[64];
    for (size_t j = 0; j < rt.n; j++)
        cost[j] = mask[j] == '1' ? 2.0 : 1.0;
    double ter = -1, term = -1;
    assert_int_equal(am_ter_pair(NULL, &ht, &rt, cost, &ter, &term), AM_OK);
    tu_assert_close(ter, want_ter, 0);
    tu_assert_close(term, want_term, 0);
    am_toks_cleanup(&ht);
    am_toks_cleanup(&rt);
}

static void test_term_hand_cases(void **state)
{
    (void)state;
    check_term("a b X c", "a b T c", "0010", 1, 2); /* substitution of a term word */
    check_term("a X T c", "a b T c", "0010", 1, 1); /* substitution of another word */
    check_term("a b c", "a b T c", "0010", 1, 2); /* term word left out */
    check_term("a c", "a b T c", "0010", 2, 3); /* one term, one plain word left out */
    check_term("a b T Y c", "a b T c", "0010", 1, 1); /* extra hypothesis word: 1 */
    check_term("a b T c", "a b T c", "0010", 0, 0);
    check_term("", "a T", "01", 2, 3); /* empty hypothesis */
    check_term("X Y", "T U", "11", 2, 4);
    /* "a b c" is aligned without error, so only T may move: shift costs 2 */
    check_term("T a b c", "a b c T", "0001", 1, 2);
    check_term("c a b", "a b c", "000", 1, 1); /* plain shift */
    /* the plain span "a b c" is moved instead of the term-bearing "x y z" */
    check_term("x y z a b c", "a b c x y z", "000100", 1, 1);
    /* only the term word can move (the rest is longer than 10 words) */
    check_term("a b c d e f g h i j k T", "T a b c d e f g h i j k", "100000000000", 1, 2);
    /* here the weighted search alone ends at 2 edits, below TER's 3 (the
     * greedy unit search misses that path): the guard keeps TERm = TER */
    check_term("c b a a", "a c a b", "1010", 3, 3);
    check_term("b d d c e", "c b e c d", "01001", 4, 4);
    /* an empty reference: edits = |hyp| */
    check_term("a b", "", "", 2, 2);
}

static void test_scores_and_special_cases(void **state)
{
    (void)state;
    assert_true(am_ter_score(3, 4) == 0.75);
    assert_true(am_ter_score(2, 0) == 1.0);
    assert_true(am_ter_score(0, 0) == 0.0);
    am_ter_stats s;
    am_ter_stats_init(&s);
    assert_true(am_ter_stats_score(&s) == 0.0);
    am_ter_stats_add(&s, 1, 0);
    assert_true(am_ter_stats_score(&s) == 1.0);
    am_ter_stats_add(&s, 1, 4);
    assert_true(am_ter_stats_score(&s) == 0.5);

    am_toks h, r;
    toks_of("a b", &h);
    toks_of("a c", &r);
    double e;
    double bad_cost[2] = {1.0, 0.5};
    assert_int_equal(am_ter_edits(NULL, &h, &r, bad_cost, &e), AM_ERR_INVALID);
    bad_cost[1] = NAN;
    assert_int_equal(am_ter_edits(NULL, &h, &r, bad_cost, &e), AM_ERR_INVALID);
    assert_int_equal(am_ter_edits(NULL, NULL, &r, NULL, &e), AM_ERR_INVALID);
    assert_int_equal(am_ter_edits(NULL, &h, &r, NULL, NULL), AM_ERR_INVALID);
    assert_int_equal(am_ter_edits(NULL, &h, &r, NULL, &e), AM_OK);
    assert_true(e == 1.0);
    am_toks_cleanup(&h);
    am_toks_cleanup(&r);
}

static void check_tok(const char *text, int cs, const char *want_joined)
{
    am_toks t;
    am_buf b;
    am_toks_init(&t);
    am_buf_init(&b);
    assert_int_equal(am_ter_tokenize(text, cs, &t), AM_OK);
    am_toks_join(&t, &b);
    assert_string_equal(am_buf_str(&b), want_joined);
    am_buf_cleanup(&b);
    am_toks_cleanup(&t);
}

static void test_tokenizer(void **state)
{
    (void)state;
    /* no punctuation splitting, no normalization: lower-case + split only */
    check_tok("  Hello,  World! (Test)\t\n", 0, "hello, world! (test)");
    check_tok("Hello, World!", 1, "Hello, World!");
    check_tok("", 0, "");
    check_tok("ÉCOLE Ærø ẞ ǅ", 0, "école ærø ß ǆ");
    /* Python: 'İ'.lower() == 'i\u0307' */
    check_tok("İSTANBUL", 0, "i\xcc\x87stanbul");
    /* Python's final sigma */
    check_tok("ΟΔΟΣ Σ ΣΑ AΣ. ΑΣ'Α", 0, "οδος σ σα aς. ασ'α");
    /* Python whitespace: U+00A0 and U+3000 split */
    check_tok("a\xc2\xa0"
              "b\xe3\x80\x80"
              "C",
              0, "a b c");
    am_toks t;
    am_toks_init(&t);
    assert_int_equal(am_ter_tokenize("bad \xff utf8", 0, &t), AM_ERR_UTF8);
    assert_int_equal(t.n, 0);
    assert_int_equal(am_ter_tokenize(NULL, 0, &t), AM_ERR_INVALID);
    am_toks_cleanup(&t);
}

/* Long and very unequal inputs: exercises the beam (widened when
 * |ref|/|hyp| > 50), the shift-distance limit and the candidate limit; the
 * results must stay within the trivial bounds. */
static void test_long_inputs(void **state)
{
    (void)state;
    am_buf hb, rb;
    am_buf_init(&hb);
    am_buf_init(&rb);
    for (int k = 0; k < 300; k++)
        am_buf_printf(&rb, "w%d ", k % 37);
    for (int k = 0; k < 250; k++)
        am_buf_printf(&hb, "w%d ", (k * 7) % 41);
    size_t rl;
    am_ter_ws *ws = am_ter_ws_new();
    double e = ter_texts(ws, am_buf_str(&hb), am_buf_str(&rb), 0, &rl);
    assert_int_equal(rl, 300);
    assert_true(e >= 50 && e <= 300);
    double e2 = ter_texts(ws, "w1 w2", am_buf_str(&rb), 0, &rl);
    assert_true(e2 == 298);
    double e3 = ter_texts(ws, am_buf_str(&rb), "w1", 0, &rl);
    assert_true(e3 == 299);
    /* identical long texts: 0 */
    double e4 = ter_texts(ws, am_buf_str(&rb), am_buf_str(&rb), 0, &rl);
    assert_true(e4 == 0);
    am_ter_ws_free(ws);
    am_buf_cleanup(&hb);
    am_buf_cleanup(&rb);
}

/* The shift candidates' costs through shared rows (shift_cost, the
 * default) against the plain window DP (am_ter_ws_set_plain): the same TER
 * and TERm on random pairs over small vocabularies (many shift candidates
 * of every kind: blocks moved left, right, into their own span, up to
 * AM_TER_MAX_SHIFT_SIZE long), of lengths on both sides of the beam width,
 * with unit and random term costs, and on the TICO-19 dev set. */
static void test_shared_rows_equal_plain(void **state)
{
    tico *t = *state;
    am_ter_ws *a = am_ter_ws_new(), *b = am_ter_ws_new();
    am_ter_ws_set_plain(b, 1);
    am_toks hyp, ref;
    am_toks_init(&hyp);
    am_toks_init(&ref);
    unsigned long rng = 424242;
    double *cost = NULL;
    size_t pairs = 0, shifted = 0;
#define NEXT() (rng = rng * 6364136223846793005UL + 1442695040888963407UL, (size_t)(rng >> 33))
    for (long round = 0, rounds = tu_rounds(3000); round < rounds; round++) {
        size_t vocab = 2 + NEXT() % 8, n = NEXT() % 70, m = 1 + NEXT() % 70;
        if (round % 10 == 0) { /* long: beyond the beam */
            n = 60 + NEXT() % 60;
            m = 60 + NEXT() % 60;
        }
        am_toks_reset(&hyp);
        am_toks_reset(&ref);
        char w[16];
        for (size_t j = 0; j < m; j++) {
            snprintf(w, sizeof w, "w%zu", NEXT() % vocab);
            am_toks_pushs(&ref, w);
        }
        /* hypothesis: the reference with blocks moved and words changed */
        for (size_t i = 0; i < n; i++) {
            size_t k = NEXT() % 4 == 0 ? NEXT() % m : (i * 7 + round) % m;
            if (NEXT() % 5 == 0)
                snprintf(w, sizeof w, "x%zu", NEXT() % vocab);
            else
                snprintf(w, sizeof w, "%s", ref.v[k]);
            am_toks_pushs(&hyp, w);
        }
        cost = realloc(cost, m * sizeof *cost);
        for (size_t j = 0; j < m; j++)
            cost[j] = NEXT() % 3 == 0 ? (round % 2 ? 2.0 : 3.5) : 1.0;
        double ta, tma, tb, tmb;
        assert_int_equal(am_ter_pair(a, &hyp, &ref, cost, &ta, &tma), AM_OK);
        assert_int_equal(am_ter_pair(b, &hyp, &ref, cost, &tb, &tmb), AM_OK);
        assert_true(ta == tb);
        assert_true(tma == tmb);
        pairs++;
        /* the plain edit distance without shifts is at least max(n, m) -
         * min(n, m); TER below the hypothesis length means work was done */
        if (ta < (double)n)
            shifted++;
    }
#undef NEXT
    assert_true(pairs == (size_t)tu_rounds(3000) && shifted > (size_t)tu_rounds(1000));
    for (size_t k = 0; k < t->t.n; k++) {
        const char *h = t->t.segs[k].hyp ? t->t.segs[k].hyp : "";
        am_toks_reset(&hyp);
        am_toks_reset(&ref);
        assert_int_equal(am_ter_tokenize(h, 0, &hyp), AM_OK);
        assert_int_equal(am_ter_tokenize(t->t.segs[k].ref, 0, &ref), AM_OK);
        double ta, tb;
        assert_int_equal(am_ter_pair(a, &hyp, &ref, NULL, &ta, NULL), AM_OK);
        assert_int_equal(am_ter_pair(b, &hyp, &ref, NULL, &tb, NULL), AM_OK);
        assert_true(ta == tb);
    }
    free(cost);
    am_toks_cleanup(&hyp);
    am_toks_cleanup(&ref);
    am_ter_ws_free(a);
    am_ter_ws_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokenizer),
        cmocka_unit_test(test_tokenizer_options),
        cmocka_unit_test(test_tokenizer_spans),
        cmocka_unit_test(test_golden_multilingual),
        cmocka_unit_test(test_multi_ref),
        cmocka_unit_test(test_config_options),
        cmocka_unit_test(test_term_costs_follow_normalization),
        cmocka_unit_test(test_scores_and_special_cases),
        cmocka_unit_test(test_seed_vectors),
        cmocka_unit_test(test_term_hand_cases),
        cmocka_unit_test(test_long_inputs),
        cmocka_unit_test_setup_teardown(test_tico_sentence_and_corpus, tico_setup, tico_teardown),
        cmocka_unit_test_setup_teardown(test_term_equals_ter_without_terms, tico_setup,
                                        tico_teardown),
        cmocka_unit_test_setup_teardown(test_term_never_below_ter, tico_setup, tico_teardown),
        cmocka_unit_test_setup_teardown(test_shared_rows_equal_plain, tico_setup, tico_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
