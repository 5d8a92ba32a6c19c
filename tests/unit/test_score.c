/* test_score.c — session options, signature and the one-call segment scorer. */
#include "testutil.h"

#include "config.h"
#include "score.h"
#include "sgml.h"
#include "vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_config_defaults_and_signature(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    am_buf sig;
    am_buf_init(&sig);
    am_config_signature(&c, &sig);
    assert_string_equal(am_buf_str(&sig), "adaptmon:1|profile:standard|tok:intl|case:fold|"
                                          "norm:nfkc|sw:snowball|k:1|wo:2,3|cterm:2");
    assert_int_equal(am_config_set(&c, "target_lang", "zh-CN", NULL), AM_OK);
    am_config_signature(&c, &sig);
    /* Chinese recall counts friso's words (defaults 3), named with its
     * version; a session stored with defaults 2 keeps the character rule */
    assert_non_null(strstr(am_buf_str(&sig), "|tok:zh-friso-1.6.4|"));
    assert_non_null(strstr(am_buf_str(&sig), "|sw:iso|"));
    assert_int_equal(am_config_set(&c, "defaults", "2", NULL), AM_OK);
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|tok:zh|"));
    assert_int_equal(am_config_set(&c, "defaults", "3", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "term-cost", "2.5", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "windows", "1, 4", NULL), AM_OK);
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|wo:1,4|cterm:2.5"));
    am_buf_cleanup(&sig);
}

static void test_config_rejects_bad_values(void **state)
{
    (void)state;
    am_config c, before;
    am_config_init(&c);
    before = c;
    am_buf err;
    am_buf_init(&err);
    static const char *const bad[][2] = {{"k", "17"},
                                         {"k", "x"},
                                         {"k", ""},
                                         {"windows", "0"},
                                         {"windows", "2,2"},
                                         {"windows", "1,2,3,4,5,6,7,8,9"},
                                         {"term_cost", "0.5"},
                                         {"term_cost", "nan"},
                                         {"tokenizer", "moses"},
                                         {"case", "upper"},
                                         {"normalize", "nfd"},
                                         {"stopwords", "all"},
                                         {"profile", "bleu"},
                                         {"target_lang", "f"},
                                         {"target_lang", "fr;"},
                                         {"stem_match", "maybe"},
                                         {"rare_threshold", "-1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(am_config_set(&c, bad[i][0], bad[i][1], &err), AM_ERR_INVALID);
        assert_non_null(strstr(am_buf_str(&err),
                               bad[i][0][0] == 't' && bad[i][0][1] == 'e' ? "term_cost" : ""));
        assert_memory_equal(&c, &before, sizeof c);
    }
    assert_int_equal(am_config_set(&c, "colour", "red", &err), AM_ERR_NOTFOUND);
    assert_non_null(strstr(am_buf_str(&err), "unknown option 'colour'"));
    am_buf_cleanup(&err);
}

static void test_option_table_covers_every_option(void **state)
{
    (void)state;
    size_t n = 0;
    for (const am_config_option *o = am_config_options(); o->name; o++, n++) {
        am_config c;
        am_config_init(&c);
        /* every documented option is known to am_config_set */
        assert_int_not_equal(am_config_set(&c, o->name, "\x01", NULL), AM_ERR_NOTFOUND);
    }
    assert_true(n >= 14);
}

/* The table is the documentation and the parser at once: each option's
 * documented default is what am_config_init gives, each documented enum
 * value is accepted, and each documented range bound is accepted while one
 * step beyond it is refused (a guard for core/config.c's table). */
static void test_option_table_is_the_parser(void **state)
{
    (void)state;
    for (const am_config_option *o = am_config_options(); o->name; o++) {
        am_config init, c;
        am_config_init(&init);
        c = init;
        assert_int_equal(am_config_set(&c, o->name, o->def, NULL), AM_OK);
        c.explicit_set = init.explicit_set;
        assert_memory_equal(&c, &init, sizeof c);
        if (!strcmp(o->type, "enum")) {
            char v[64];
            for (const char *p = o->values; *p;) {
                size_t n = strcspn(p, "|");
                snprintf(v, sizeof v, "%.*s", (int)n, p);
                c = init;
                assert_int_equal(am_config_set(&c, o->name, v, NULL), AM_OK);
                p += n + (p[n] == '|');
            }
            assert_int_equal(am_config_set(&c, o->name, "nonesuch", NULL), AM_ERR_INVALID);
        }
        double lo, hi;
        if ((!strcmp(o->type, "int") || !strcmp(o->type, "number") || !strcmp(o->type, "list")) &&
            sscanf(o->values, "%lf..%lf", &lo, &hi) == 2) {
            char v[32];
            snprintf(v, sizeof v, "%g", lo);
            assert_int_equal(am_config_set(&c, o->name, v, NULL), AM_OK);
            snprintf(v, sizeof v, "%g", hi);
            assert_int_equal(am_config_set(&c, o->name, v, NULL), AM_OK);
            snprintf(v, sizeof v, "%g", lo - 1);
            assert_int_equal(am_config_set(&c, o->name, v, NULL), AM_ERR_INVALID);
            snprintf(v, sizeof v, "%g", hi + 0.5);
            assert_int_equal(am_config_set(&c, o->name, v, NULL), AM_ERR_INVALID);
        }
    }
}

static am_scorer *make_scorer(const char *lang, const am_gloss *g)
{
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", lang, NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "source_lang", "en", NULL), AM_OK);
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, g, NULL, &s, NULL), AM_OK);
    return s;
}

static void test_slides_through_scorer(void **state)
{
    (void)state;
    json_t *seeds = tu_json("data/golden/seeds.json");
    json_t *ex = json_object_get(seeds, "simianer2019_slides");
    json_t *segs = json_object_get(ex, "segments");
    am_scorer *s = make_scorer("en", NULL);
    am_score_ws *ws = am_score_ws_new();
    am_vocab *hist = am_vocab_new();
    am_totals tot;
    am_totals_init(&tot, s);
    for (size_t i = 0; i < json_array_size(segs); i++) {
        json_t *sg = json_array_get(segs, i);
        const char *hyp = json_string_value(json_object_get(sg, "hypothesis"));
        am_seg_input in = {.source = json_string_value(json_object_get(sg, "source")),
                           .translation = json_string_value(json_object_get(sg, "translation")),
                           .hyps = &hyp,
                           .nsys = 1};
        am_seg_result res;
        assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL),
                         AM_OK);
        json_t *r0 = json_object_get(sg, "r0");
        assert_int_equal(res.sys[0].recall.r[0].hits, json_integer_value(json_array_get(r0, 0)));
        assert_int_equal(res.sys[0].recall.r[0].total, json_integer_value(json_array_get(r0, 1)));
        am_recall_seg_commit(res.recall, hist);
        am_totals_add(&tot, &res.sys[0]);
    }
    json_t *sess = json_object_get(ex, "session");
    assert_int_equal(tot.recall.r01.hits,
                     json_integer_value(json_array_get(json_object_get(sess, "r01"), 0)));
    assert_int_equal(tot.recall.r01.total,
                     json_integer_value(json_array_get(json_object_get(sess, "r01"), 1)));
    am_vocab_free(hist);
    am_score_ws_free(ws);
    am_scorer_free(s);
    json_decref(seeds);
}

static void test_invalid_text_is_rejected_and_counts_nothing(void **state)
{
    (void)state;
    am_scorer *s = make_scorer("en", NULL);
    am_score_ws *ws = am_score_ws_new();
    am_vocab *hist = am_vocab_new();
    const char *hyp = "ok";
    am_seg_input in = {.translation = "bad \xc3\x28 utf8", .hyps = &hyp, .nsys = 1};
    am_seg_result res;
    const char *field = NULL;
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, &field),
                     AM_ERR_UTF8);
    assert_string_equal(field, "translation");
    const char *badhyp = "x\xed\xa0\x80"; /* a surrogate */
    in.translation = "fine";
    in.hyps = &badhyp;
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, &field),
                     AM_ERR_UTF8);
    assert_string_equal(field, "hypothesis");
    assert_int_equal(am_vocab_count(hist), 0);
    am_vocab_free(hist);
    am_score_ws_free(ws);
    am_scorer_free(s);
}

/* Session totals merged from two halves equal the totals of one pass, and
 * TERm equals TER on segments without term instances. */
static void test_totals_merge_and_term_equals_ter(void **state)
{
    (void)state;
    am_sgml_doc ref, hyp, src;
    am_gloss g;
    tu_tico_docs(&ref, &hyp, &src, &g);

    am_scorer *s = make_scorer("fr", &g);
    am_score_ws *ws = am_score_ws_new();
    am_vocab *hist = am_vocab_new();
    am_totals all, a, b;
    am_totals_init(&all, s);
    am_totals_init(&a, s);
    am_totals_init(&b, s);
    size_t with_terms = 0;
    for (size_t i = 0; i < ref.nsegs; i++) {
        size_t j = am_sgml_find_seg(&hyp, ref.segs[i].id);
        assert_true(j != (size_t)-1);
        const char *h = hyp.segs[j].text;
        am_seg_input in = {
            .source = src.segs[i].text, .translation = ref.segs[i].text, .hyps = &h, .nsys = 1};
        am_seg_result res;
        assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL),
                         AM_OK);
        const am_sys_seg *r = &res.sys[0];
        assert_true(r->term_edits >= r->ter_edits);
        if (!r->terms || r->terms->n_inst == 0)
            assert_true(r->term_edits == r->ter_edits);
        else
            with_terms++;
        am_recall_seg_commit(res.recall, hist);
        am_totals_add(&all, r);
        am_totals_add(i < ref.nsegs / 2 ? &a : &b, r);
    }
    assert_true(with_terms > 100);
    assert_int_equal(am_totals_merge(&a, &b), AM_OK);
    am_totals_scores x, y;
    am_totals_scores_compute(&all, &x);
    am_totals_scores_compute(&a, &y);
    assert_true(x.r[0] == y.r[0] && x.r[1] == y.r[1] && x.r01 == y.r01);
    assert_true(x.bleu == y.bleu && x.chrf == y.chrf && x.chrfpp == y.chrfpp);
    assert_true(x.ter == y.ter && x.term == y.term);
    assert_true(x.terms.exact == y.terms.exact);
    assert_true(x.term > x.ter);
    assert_int_equal(all.segments, (int64_t)ref.nsegs);

    am_vocab_free(hist);
    am_score_ws_free(ws);
    am_scorer_free(s);
    am_gloss_cleanup(&g);
    am_sgml_free(&ref);
    am_sgml_free(&hyp);
    am_sgml_free(&src);
}

/* Cancellation: a check that counts its calls and says stop after `after`
 * of them. */
typedef struct cancel_probe {
    int calls, after;
} cancel_probe;

static int cancel_probe_fn(void *ctx)
{
    cancel_probe *p = ctx;
    return ++p->calls > p->after;
}

static char *repeat_word(const char *w, size_t n)
{
    am_buf b;
    am_buf_init(&b);
    for (size_t i = 0; i < n; i++) {
        if (i)
            am_buf_appendc(&b, ' ');
        am_buf_appends(&b, w);
    }
    return am_buf_detach(&b);
}

/* The expensive input of issue 10 (glossary a -> b, n copies): a cancel
 * check that says stop makes am_score_segment return AM_ERR_CANCELLED after
 * asking it, and the same workspace scores normally without it. */
static void test_cancel_stops_scoring(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    am_gloss g;
    am_gloss_init(&g);
    const char *tgt[] = {"b"};
    assert_int_equal(am_gloss_add(&g, "a", tgt, 1, 0, 0, NULL), AM_OK);
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, &g, NULL, &s, NULL), AM_OK);
    am_score_ws *ws = am_score_ws_new();
    char *src = repeat_word("a", 400), *tr = repeat_word("b", 400);
    const char *hyps[] = {tr};
    am_seg_input in = {.source = src, .translation = tr, .hyps = hyps, .nsys = 1};
    am_vocab *hist = am_vocab_new();
    am_seg_result res;

    cancel_probe stop = {0, 0};
    am_cancel cc;
    am_cancel_init(&cc, cancel_probe_fn, &stop);
    am_score_ws_set_cancel(ws, &cc);
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL),
                     AM_ERR_CANCELLED);
    assert_int_equal(stop.calls, 1); /* asked once, then sticky */
    assert_int_equal(cc.hit, 1);

    cancel_probe go = {0, 1 << 30};
    am_cancel_init(&cc, cancel_probe_fn, &go);
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL), AM_OK);
    assert_true(go.calls > 0); /* the long loops did report their work */
    assert_int_equal((int)res.sys[0].terms->n_inst, 400);

    am_score_ws_set_cancel(ws, NULL);
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL), AM_OK);
    am_vocab_free(hist);
    free(src);
    free(tr);
    am_score_ws_free(ws);
    am_scorer_free(s);
    am_gloss_cleanup(&g);
}

/* TER's shift search alone: a long pair with many shifts stops when told. */
static void test_cancel_stops_ter(void **state)
{
    (void)state;
    am_toks h, r;
    am_toks_init(&h);
    am_toks_init(&r);
    am_buf ht, rt;
    am_buf_init(&ht);
    am_buf_init(&rt);
    for (int i = 0; i < 3000; i++) {
        am_buf_printf(&ht, "%sw%d", i ? " " : "", i % 97);
        am_buf_printf(&rt, "%sw%d", i ? " " : "", (i * 7 + 3) % 97);
    }
    assert_int_equal(am_ter_tokenize(am_buf_str(&ht), 0, &h), AM_OK);
    assert_int_equal(am_ter_tokenize(am_buf_str(&rt), 0, &r), AM_OK);
    am_ter_ws *ws = am_ter_ws_new();
    cancel_probe stop = {0, 0};
    am_cancel cc;
    am_cancel_init(&cc, cancel_probe_fn, &stop);
    am_ter_ws_set_cancel(ws, &cc);
    double e = 0;
    assert_int_equal(am_ter_edits(ws, &h, &r, NULL, &e), AM_ERR_CANCELLED);
    assert_int_equal(stop.calls, 1);
    am_ter_ws_set_cancel(ws, NULL);
    assert_int_equal(am_ter_edits(ws, &h, &r, NULL, &e), AM_OK);
    assert_true(e > 0);
    am_ter_ws_free(ws);
    am_toks_cleanup(&h);
    am_toks_cleanup(&r);
    am_buf_cleanup(&ht);
    am_buf_cleanup(&rt);
}

static void test_unknown_stopword_language(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "tlh", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "stopwords", "snowball", NULL), AM_OK);
    am_scorer *s = NULL;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, &err), AM_ERR_NOTFOUND);
    assert_null(s);
    assert_non_null(strstr(am_buf_str(&err), "no snowball stopword list"));
    /* auto falls back to none for a language no list has */
    assert_int_equal(am_config_set(&c, "stopwords", "auto", NULL), AM_OK);
    assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, &err), AM_OK);
    assert_non_null(strstr(am_scorer_signature(s), "|sw:none|"));
    am_scorer_free(s);
    am_buf_cleanup(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults_and_signature),
        cmocka_unit_test(test_config_rejects_bad_values),
        cmocka_unit_test(test_option_table_covers_every_option),
        cmocka_unit_test(test_option_table_is_the_parser),
        cmocka_unit_test(test_slides_through_scorer),
        cmocka_unit_test(test_invalid_text_is_rejected_and_counts_nothing),
        cmocka_unit_test(test_totals_merge_and_term_equals_ter),
        cmocka_unit_test(test_unknown_stopword_language),
        cmocka_unit_test(test_cancel_stops_scoring),
        cmocka_unit_test(test_cancel_stops_ter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
