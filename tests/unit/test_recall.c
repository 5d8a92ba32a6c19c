/* test_recall.c — R0/R1/Rk/R0+1 in the standard profile (core/recall.h)
 * and the vocabulary map it builds on (core/vocab.h). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "mecab.h"
#include "recall.h"
#include "stopwords.h"
#include "vocab.h"

static void assert_pair(json_t *pair, const am_recall_count *c)
{
    assert_true(json_is_array(pair));
    assert_int_equal(json_integer_value(json_array_get(pair, 0)), c->hits);
    assert_int_equal(json_integer_value(json_array_get(pair, 1)), c->total);
}

static void assert_totals_equal(const am_recall_totals *a, const am_recall_totals *b)
{
    assert_int_equal(a->k, b->k);
    for (int s = 0; s <= a->k; s++) {
        assert_int_equal(a->r[s].hits, b->r[s].hits);
        assert_int_equal(a->r[s].total, b->r[s].total);
    }
    assert_int_equal(a->r01.hits, b->r01.hits);
    assert_int_equal(a->r01.total, b->r01.total);
}

static am_sw *english(void)
{
    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin("snowball", "en", AM_NORM_NFKC, 1, &sw), AM_OK);
    return sw;
}

/* ---- vocab ------------------------------------------------------------ */

static void test_vocab_basic(void **state)
{
    (void)state;
    am_vocab *v = am_vocab_new();
    int64_t x = -1;
    assert_int_equal(am_vocab_count(v), 0);
    assert_false(am_vocab_get(v, "a", &x));
    assert_int_equal(am_vocab_insert(v, "a", 5), 1);
    assert_int_equal(am_vocab_insert(v, "a", 7), 0);
    assert_true(am_vocab_get(v, "a", &x));
    assert_int_equal(x, 5);
    assert_int_equal(am_vocab_add(v, "b", 2), 2);
    assert_int_equal(am_vocab_add(v, "b", 3), 5);
    am_vocab_set(v, "a", -4);
    assert_true(am_vocab_getn(v, "abc", 1, &x));
    assert_int_equal(x, -4);
    assert_false(am_vocab_contains(v, ""));
    am_vocab_set(v, "", 1); /* the empty key is a key like any other */
    assert_true(am_vocab_contains(v, ""));

    /* Growth, lookups and insertion-order iteration over many keys. */
    char key[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(key, sizeof key, "w%d", i);
        assert_int_equal(am_vocab_insert(v, key, i), 1);
    }
    assert_int_equal(am_vocab_count(v), 100003);
    for (int i = 0; i < 100000; i += 997) {
        snprintf(key, sizeof key, "w%d", i);
        assert_true(am_vocab_get(v, key, &x));
        assert_int_equal(x, i);
    }
    size_t it = 0, n = 0;
    const char *k;
    int64_t val;
    while (am_vocab_next(v, &it, &k, &val)) {
        if (n == 0)
            assert_string_equal(k, "a");
        if (n == 3)
            assert_string_equal(k, "w0");
        if (n == 100002) {
            assert_string_equal(k, "w99999");
            assert_int_equal(val, 99999);
        }
        n++;
    }
    assert_int_equal(n, 100003);

    am_vocab_clear(v);
    assert_int_equal(am_vocab_count(v), 0);
    assert_false(am_vocab_contains(v, "w5"));
    assert_int_equal(am_vocab_add(v, "w5", 1), 1);
    assert_int_equal(am_vocab_count(v), 1);
    am_vocab_free(v);
    am_vocab_free(NULL);
}

static void test_vocab_parse(void **state)
{
    (void)state;
    am_vocab *v = am_vocab_new();
    size_t line = 0;
    const char *msg = NULL;
    const char *ok = "12 terrier\n\n  0\tmann \r\n3 terrier\n9223372036854775807 big";
    assert_int_equal(am_vocab_parse_counts(ok, strlen(ok), v, &line, &msg), AM_OK);
    assert_int_equal(am_vocab_count(v), 3);
    int64_t x;
    assert_true(am_vocab_get(v, "terrier", &x));
    assert_int_equal(x, 15); /* repeated word: counts add up */
    assert_true(am_vocab_get(v, "mann", &x));
    assert_int_equal(x, 0);
    assert_true(am_vocab_get(v, "big", &x));
    assert_int_equal(x, INT64_MAX);

    static const struct {
        const char *text;
        int rc;
        size_t line;
    } bad[] = {
        {"1 a\nterrier\n", AM_ERR_PARSE, 2},
        {"1 a\n2 b c\n", AM_ERR_PARSE, 2},
        {"x a\n", AM_ERR_PARSE, 1},
        {"-1 a\n", AM_ERR_PARSE, 1},
        {"+1 a\n", AM_ERR_PARSE, 1},
        {"1.5 a\n", AM_ERR_PARSE, 1},
        {"\n\n9223372036854775808 a\n", AM_ERR_RANGE, 3},
        {"1 a\n2 \xff\n", AM_ERR_UTF8, 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_vocab *w = am_vocab_new();
        line = 0;
        msg = NULL;
        assert_int_equal(am_vocab_parse_counts(bad[i].text, strlen(bad[i].text), w, &line, &msg),
                         bad[i].rc);
        assert_int_equal(line, bad[i].line);
        assert_non_null(msg);
        am_vocab_free(w);
    }
    const char nul[] = "1 a\n2 b\0c\n";
    assert_int_equal(am_vocab_parse_counts(nul, sizeof nul - 1, v, &line, &msg), AM_ERR_NUL);
    assert_int_equal(line, 2);
    assert_int_equal(am_vocab_parse_counts("", 0, v, NULL, NULL), AM_OK);
    am_vocab_free(v);
}

/* ---- recall ----------------------------------------------------------- */

static void test_totals(void **state)
{
    (void)state;
    am_recall_totals t, u;
    am_recall_totals_init(&t, 2);
    assert_int_equal(t.k, 2);
    am_recall_totals_add(&t, 0, 1);
    am_recall_totals_add(&t, 1, 0);
    am_recall_totals_add(&t, 2, 1);
    am_recall_totals_add(&t, 3, 1); /* beyond k: nowhere */
    assert_int_equal(t.r[0].hits, 1);
    assert_int_equal(t.r[1].total, 1);
    assert_int_equal(t.r[2].hits, 1);
    assert_int_equal(t.r01.hits, 1);
    assert_int_equal(t.r01.total, 2);
    tu_assert_close(am_recall_score(&t.r01), 0.5, 0);
    am_recall_count z = {0, 0};
    assert_true(am_recall_score(&z) < 0);
    tu_assert_close(am_recall_score(&z), AM_RECALL_NULL, 0);
    am_recall_totals_init(&u, 1);
    assert_int_equal(am_recall_totals_merge(&u, &t), AM_ERR_INVALID);
    assert_int_equal(u.r01.total, 0);
    am_recall_totals_init(&u, 99);
    assert_int_equal(u.k, AM_RECALL_MAX_K);
}

static void test_slides(void **state)
{
    (void)state;
    json_t *seeds = tu_json("data/golden/seeds.json");
    json_t *ex = json_object_get(seeds, "simianer2019_slides");
    json_t *nonad = json_object_get(seeds, "simianer2019_nonadaptive");
    json_t *segs = json_object_get(ex, "segments");
    json_t *segs2 = json_object_get(nonad, "segments");
    assert_int_equal(json_array_size(segs), json_array_size(segs2));

    am_sw *sw = english();
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    am_vocab *hist = am_vocab_new();
    am_recall_totals tot[2];
    am_recall_totals_init(&tot[0], 1);
    am_recall_totals_init(&tot[1], 1);
    am_recall_seg r;
    am_recall_seg_init(&r);
    size_t i;
    json_t *s;
    json_array_foreach(segs, i, s)
    {
        json_t *s2 = json_array_get(segs2, i);
        const char *tr = json_string_value(json_object_get(s, "translation"));
        assert_string_equal(tr, json_string_value(json_object_get(s2, "translation")));
        /* Two systems on one segment: the slides' adaptive one, the
         * non-adaptive one. */
        const char *hyps[2] = {json_string_value(json_object_get(s, "hypothesis")),
                               json_string_value(json_object_get(s2, "hypothesis"))};
        assert_int_equal(am_recall_score_texts(&cfg, tr, hyps, 2, am_recall_vocab_lookup, hist, &r),
                         AM_OK);
        assert_int_equal(r.nsys, 2);
        assert_pair(json_object_get(s, "r0"), &r.sys[0].r[0]);
        assert_pair(json_object_get(s, "r1"), &r.sys[0].r[1]);
        assert_pair(json_object_get(s, "r01"), &r.sys[0].r01);
        json_t *words = json_object_get(s, "words");
        assert_int_equal(r.words.n, json_object_size(words));
        /* First-appearance order: the object lists them in text order. */
        size_t w = 0;
        const char *key;
        json_t *exp;
        json_object_foreach(words, key, exp)
        {
            assert_string_equal(r.words.v[w], key);
            assert_int_equal(r.shot[w], json_integer_value(json_array_get(exp, 0)));
            assert_int_equal(r.hit[w], json_is_true(json_array_get(exp, 1)));
            w++;
        }
        for (size_t sys = 0; sys < 2; sys++)
            assert_int_equal(am_recall_totals_merge(&tot[sys], &r.sys[sys]), AM_OK);
        am_recall_seg_commit(&r, hist);
    }
    json_t *sess = json_object_get(ex, "session");
    assert_pair(json_object_get(sess, "r0"), &tot[0].r[0]);
    assert_pair(json_object_get(sess, "r1"), &tot[0].r[1]);
    assert_pair(json_object_get(sess, "r01"), &tot[0].r01);
    sess = json_object_get(nonad, "session");
    assert_pair(json_object_get(sess, "r0"), &tot[1].r[0]);
    assert_pair(json_object_get(sess, "r1"), &tot[1].r[1]);
    assert_pair(json_object_get(sess, "r01"), &tot[1].r01);
    int64_t occ;
    assert_true(am_vocab_get(hist, "terrier", &occ));
    assert_int_equal(occ, 2);
    assert_true(am_vocab_get(hist, "woman", &occ));
    assert_int_equal(occ, 1);
    assert_false(am_vocab_contains(hist, "the"));

    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
    am_sw_free(sw);
    json_decref(seeds);
}

static void test_content_words(void **state)
{
    (void)state;
    am_sw *sw = english();
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    am_toks t;
    am_toks_init(&t);
    assert_int_equal(am_recall_content_words(&cfg,
                                             "The <g id=\"1\">Terrier</g> bites 42 \xd9\xa3 "
                                             "\xe2\x82\xac \xef\xac\x81sh, THE WOMAN!",
                                             &t),
                     AM_OK);
    assert_int_equal(t.n, 4);
    assert_string_equal(t.v[0], "terrier");
    assert_string_equal(t.v[1], "bites");
    assert_string_equal(t.v[2], "fish");
    assert_string_equal(t.v[3], "woman");
    /* Invalid input leaves out unchanged. */
    assert_int_equal(am_recall_content_words(&cfg, "ok \xc3", &t), AM_ERR_UTF8);
    assert_int_equal(t.n, 4);
    am_toks_reset(&t);

    /* Case-sensitive, no normalization, tags kept as text. */
    cfg.casefold = 0;
    cfg.norm = AM_NORM_NONE;
    cfg.strip_tags = 0;
    cfg.stopwords = NULL;
    cfg.tokenizer = AM_TOK_NONE;
    assert_int_equal(am_recall_content_words(&cfg, "The <x/> Terrier , 7", &t), AM_OK);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.v[0], "The");
    assert_string_equal(t.v[1], "<x/>");
    assert_string_equal(t.v[2], "Terrier");
    am_toks_cleanup(&t);
    am_sw_free(sw);
}

/* Issue 24 §5: NFKC maps a spacing acute U+00B4 ("didn\u00b4t", real MT
 * output) to a space plus the combining U+0301; intl splits the symbol off,
 * so the token becomes " \u0301". Neither it nor a lone combining mark, a
 * modifier letter (U+02BC, U+30FC) or a zero-width joiner is a content word;
 * a word carrying a mark is. The simianer2019 profile splits on whitespace
 * only and keeps "didn\u00b4t" whole (test_simianer_nonword). */
static void test_nonword_tokens(void **state)
{
    (void)state;
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    am_toks t;
    am_toks_init(&t);
    assert_int_equal(am_recall_content_words(&cfg, "didn\xc2\xb4t", &t), AM_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.v[0], "didn");
    assert_string_equal(t.v[1], "t");
    am_toks_reset(&t);
    cfg.tokenizer = AM_TOK_NONE;
    assert_int_equal(am_recall_content_words(&cfg,
                                             "\xc2\xb4 \xcc\x81 \xca\xbc \xe3\x83\xbc "
                                             "\xe2\x80\x8d e\xcc\x81t\xc3\xa9",
                                             &t),
                     AM_OK);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.v[0], "\xc3\xa9t\xc3\xa9");
    am_toks_cleanup(&t);

    /* The shared-words path classifies the same way. */
    am_tok_words w;
    am_tok_words_init(&w);
    assert_int_equal(am_recall_tok_words(&cfg, "\xc2\xb4 word", &w), AM_OK);
    assert_int_equal(w.fold.n, 2);
    assert_int_equal(w.content[0], 0);
    assert_int_equal(w.content[1], 1);
    am_tok_words_cleanup(&w);

    assert_true(am_text_is_nonword(" \xcc\x81"));
    assert_false(am_text_is_nonword("\xe2\x85\xa0")); /* U+2160 ROMAN NUMERAL ONE: Nl */
    assert_false(am_text_is_nonword(""));
}

/* Issue 24 §2: Japanese content words are MeCab's words (ja-mecab, the
 * recall default for ja), with the stopwords-iso Japanese words MeCab keeps
 * whole. The zh tokenizer made 電気自動車 four one-kanji "words" and
 * kept kana runs such as がかかるのよ as one. */
static void test_japanese_mecab(void **state)
{
    (void)state;
    am_mecab *m = NULL;
    am_buf err;
    am_buf_init(&err);
    if (am_mecab_new(NULL, &m, &err) != AM_OK)
        fail_msg("am_mecab_new: %s", am_buf_str(&err));
    am_mecab_ws *mw = NULL;
    assert_int_equal(am_mecab_ws_new(m, &mw), AM_OK);
    am_tok_ctx ctx = {.ja_mecab = mw};
    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin_for("iso", "ja", AM_TOK_JA_MECAB, &ctx, AM_NORM_NFKC, 1, &sw),
                     AM_OK);
    assert_true(am_sw_contains(sw, "\xe3\x81\xae")); /* の */
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.tokenizer = AM_TOK_JA_MECAB;
    cfg.tok_ctx = &ctx;
    cfg.stopwords = sw;
    am_toks t;
    am_toks_init(&t);
    /* 電気自動車の充電って、めちゃくちゃ時間がかかるのよ。 */
    const char *text = "\xe9\x9b\xbb\xe6\xb0\x97\xe8\x87\xaa\xe5\x8b\x95\xe8\xbb\x8a"
                       "\xe3\x81\xae\xe5\x85\x85\xe9\x9b\xbb\xe3\x81\xa3\xe3\x81\xa6"
                       "\xe3\x80\x81\xe3\x82\x81\xe3\x81\xa1\xe3\x82\x83\xe3\x81\x8f"
                       "\xe3\x81\xa1\xe3\x82\x83\xe6\x99\x82\xe9\x96\x93\xe3\x81\x8c"
                       "\xe3\x81\x8b\xe3\x81\x8b\xe3\x82\x8b\xe3\x81\xae\xe3\x82\x88"
                       "\xe3\x80\x82";
    assert_int_equal(am_recall_content_words(&cfg, text, &t), AM_OK);
    const char *want[] = {
        "\xe9\x9b\xbb\xe6\xb0\x97", /* 電気 */
        "\xe8\x87\xaa\xe5\x8b\x95\xe8\xbb\x8a", /* 自動車 */
        "\xe5\x85\x85\xe9\x9b\xbb", /* 充電 */
    };
    assert_true(t.n >= 5);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(t.v[i], want[i]);
    int has_time = 0;
    for (size_t i = 0; i < t.n; i++) {
        has_time |= !strcmp(t.v[i], "\xe6\x99\x82\xe9\x96\x93"); /* 時間 */
        assert_string_not_equal(t.v[i], "\xe3\x81\xae"); /* の: a stopword */
        assert_string_not_equal(t.v[i], "\xe3\x80\x81"); /* 、: punctuation */
    }
    assert_true(has_time);
    /* Without a tagger ja-mecab is refused, never another tokenizer. */
    am_toks_reset(&t);
    cfg.tok_ctx = NULL;
    assert_int_equal(am_recall_content_words(&cfg, text, &t), AM_ERR_INVALID);
    assert_int_equal(t.n, 0);
    am_toks_cleanup(&t);
    am_sw_free(sw);
    am_mecab_ws_free(mw);
    am_mecab_free(m);
    am_buf_cleanup(&err);
}

/* Scores a sequence of (translation, hypothesis) pairs with one system and
 * an in-memory history; returns the session totals. */
static void run_session(const am_recall_config *cfg, const char *const (*pairs)[2], size_t n,
                        am_recall_totals *tot)
{
    am_vocab *hist = am_vocab_new();
    am_recall_seg r;
    am_recall_seg_init(&r);
    am_recall_totals_init(tot, cfg->k);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(am_recall_score_texts(cfg, pairs[i][0], &pairs[i][1], 1,
                                               am_recall_vocab_lookup, hist, &r),
                         AM_OK);
        assert_int_equal(am_recall_totals_merge(tot, &r.sys[0]), AM_OK);
        am_recall_seg_commit(&r, hist);
    }
    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
}

static void test_k2(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"The terrier bites.", "The dog bites."}, /* terrier 0 miss, bites 0 hit */
        {"The terrier barks.", "The terrier barks."}, /* terrier 1 hit, barks 0 hit */
        {"A terrier bites!", "A dog bites!"}, /* terrier 2 miss, bites 1 hit */
        {"The terrier barks.", "The terrier barks."}, /* terrier 3 hit, barks 1 hit */
    };
    am_sw *sw = english();
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    cfg.k = 2;
    am_recall_totals t;
    run_session(&cfg, pairs, 4, &t);
    assert_int_equal(t.k, 2);
    assert_int_equal(t.r[0].hits, 2);
    assert_int_equal(t.r[0].total, 3);
    assert_int_equal(t.r[1].hits, 3);
    assert_int_equal(t.r[1].total, 3);
    assert_int_equal(t.r[2].hits, 0);
    assert_int_equal(t.r[2].total, 1);
    assert_int_equal(t.r01.hits, 5); /* R0+1 stays shots 0 and 1 for any k */
    assert_int_equal(t.r01.total, 6);

    am_recall_totals t1;
    cfg.k = 1;
    run_session(&cfg, pairs, 4, &t1);
    assert_int_equal(t1.k, 1);
    assert_int_equal(t1.r[0].total, t.r[0].total);
    assert_int_equal(t1.r[1].total, t.r[1].total);
    assert_int_equal(t1.r01.total, t.r01.total);
    cfg.k = AM_RECALL_MAX_K + 1;
    am_recall_seg r;
    am_recall_seg_init(&r);
    const char *h = "x";
    assert_int_equal(am_recall_score_texts(&cfg, "x", &h, 1, am_recall_vocab_lookup, NULL, &r),
                     AM_ERR_INVALID);
    am_sw_free(sw);
}

static void test_novel_words(void **state)
{
    (void)state;
    json_t *seeds = tu_json("data/golden/seeds.json");
    json_t *segs = json_object_get(json_object_get(seeds, "simianer2019_slides"), "segments");
    const char *pairs[2][2];
    for (size_t i = 0; i < 2; i++) {
        json_t *s = json_array_get(segs, i);
        pairs[i][0] = json_string_value(json_object_get(s, "translation"));
        pairs[i][1] = json_string_value(json_object_get(s, "hypothesis"));
    }
    am_vocab *bg = am_vocab_new();
    const char *counts = "5 terrier\n0 woman\n1 bites\n";
    assert_int_equal(am_vocab_parse_counts(counts, strlen(counts), bg, NULL, NULL), AM_OK);
    am_sw *sw = english();
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    cfg.background = am_recall_vocab_background;
    cfg.background_ctx = bg;

    /* Threshold 0: woman (0) and man (absent = 0) count; bites and terrier not. */
    am_recall_totals t;
    run_session(&cfg, (const char *const(*)[2])pairs, 2, &t);
    assert_int_equal(t.r[0].hits, 1); /* man */
    assert_int_equal(t.r[0].total, 2);
    assert_int_equal(t.r[1].total, 0);
    assert_true(am_recall_score(&t.r[1]) < 0);

    /* Threshold 1: bites counts as well. */
    cfg.rare_threshold = 1;
    run_session(&cfg, (const char *const(*)[2])pairs, 2, &t);
    assert_int_equal(t.r[0].hits, 2);
    assert_int_equal(t.r[0].total, 3);
    assert_int_equal(t.r[1].hits, 1);
    assert_int_equal(t.r[1].total, 1);

    /* Threshold 5: every word counts, as without a background. */
    cfg.rare_threshold = 5;
    am_recall_totals all;
    run_session(&cfg, (const char *const(*)[2])pairs, 2, &t);
    cfg.background = NULL;
    run_session(&cfg, (const char *const(*)[2])pairs, 2, &all);
    assert_totals_equal(&t, &all);
    assert_int_equal(all.r01.total, 6);

    am_sw_free(sw);
    am_vocab_free(bg);
    json_decref(seeds);
}

static int failing_lookup(void *ctx, const char *word, int64_t *occ)
{
    (void)ctx;
    *occ = 0;
    return strcmp(word, "bites") == 0 ? AM_ERR_IO : AM_OK;
}

static void test_errors(void **state)
{
    (void)state;
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    am_recall_seg r;
    am_recall_seg_init(&r);
    const char *h = "terrier bites";
    assert_int_equal(am_recall_score_texts(&cfg, "terrier bites", &h, 1, failing_lookup, NULL, &r),
                     AM_ERR_IO);
    assert_int_equal(r.words.n, 0);
    assert_null(r.sys);
    assert_int_equal(
        am_recall_score_texts(&cfg, "terrier \xff", &h, 1, am_recall_vocab_lookup, NULL, &r),
        AM_ERR_UTF8);
    assert_int_equal(am_recall_score_texts(&cfg, "terrier", &h, 1, NULL, NULL, &r), AM_ERR_INVALID);
    /* No system at all: the words and shots are still produced. */
    am_vocab *hist = am_vocab_new();
    assert_int_equal(am_recall_score_texts(&cfg, "terrier terrier bites", NULL, 0,
                                           am_recall_vocab_lookup, hist, &r),
                     AM_OK);
    assert_int_equal(r.words.n, 2);
    assert_int_equal(r.nsys, 0);
    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
}

/* ---- session totals: merging per-segment totals = one sequential pass -- */

static void test_merge_equals_sequential(void **state)
{
    (void)state;
    /* The raw segment contents (inline tags kept: the standard profile
     * strips them itself), hypotheses paired by id. */
    tu_tico tico;
    tu_tico_load(&tico);
    size_t n = tico.n;
    assert_int_equal(n, tico.hyp.nsegs);

    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin("snowball", "fr-FR", AM_NORM_NFKC, 1, &sw), AM_OK);
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    cfg.k = 3;
    am_vocab *hist = am_vocab_new();
    am_recall_seg r;
    am_recall_seg_init(&r);
    am_recall_totals seq, merged, half[2];
    am_recall_totals_init(&seq, 3);
    am_recall_totals_init(&merged, 3);
    am_recall_totals_init(&half[0], 3);
    am_recall_totals_init(&half[1], 3);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(tico.segs[i].hyp_seg);
        const char *ht = tico.segs[i].hyp_seg->raw;
        assert_int_equal(am_recall_score_texts(&cfg, tico.segs[i].ref_seg->raw, &ht, 1,
                                               am_recall_vocab_lookup, hist, &r),
                         AM_OK);
        /* Sequential: word by word from the listed shots and hits. */
        for (size_t w = 0; w < r.words.n; w++)
            am_recall_totals_add(&seq, r.shot[w], r.hit[w]);
        assert_int_equal(am_recall_totals_merge(&merged, &r.sys[0]), AM_OK);
        assert_int_equal(am_recall_totals_merge(&half[i >= n / 2], &r.sys[0]), AM_OK);
        am_recall_seg_commit(&r, hist);
    }
    assert_int_equal(am_recall_totals_merge(&half[0], &half[1]), AM_OK);
    assert_totals_equal(&seq, &merged);
    assert_totals_equal(&seq, &half[0]);
    assert_true(seq.r[0].total > 1000);
    assert_true(seq.r[3].total > 0);
    /* Every type was counted once per segment at some shot. */
    int64_t types = 0, occ;
    size_t it = 0;
    while (am_vocab_next(hist, &it, NULL, &occ))
        types += occ;
    assert_int_equal(seq.r01.total + seq.r[2].total + seq.r[3].total <= types, 1);
    assert_int_equal(seq.r[0].total, (int64_t)am_vocab_count(hist));

    am_recall_seg_cleanup(&r);
    am_vocab_free(hist);
    am_sw_free(sw);
    tu_tico_free(&tico);
}

/* am_recall_content_words_tok (a text tokenized once by the caller, shared
 * with the terms matcher) gives am_recall_content_words's words on the dev
 * set, and refuses tokens of another tokenizer or of a text that the
 * configuration would still strip of tags. */
static void test_shared_tokens(void **state)
{
    (void)state;
    tu_tico tico;
    tu_tico_load(&tico);
    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin("snowball", "fr", AM_NORM_NFKC, 1, &sw), AM_OK);
    am_recall_config cfg;
    am_recall_config_init(&cfg);
    cfg.stopwords = sw;
    cfg.strip_tags = 0;
    am_toks a, b;
    am_toks_init(&a);
    am_toks_init(&b);
    am_buf tk;
    am_buf_init(&tk);
    size_t words = 0;
    for (size_t i = 0; i < tico.n; i++) {
        const char *texts[2] = {tico.segs[i].ref, tico.segs[i].hyp ? tico.segs[i].hyp : ""};
        for (int k = 0; k < 2; k++) {
            am_toks_reset(&a);
            am_toks_reset(&b);
            assert_int_equal(am_recall_content_words(&cfg, texts[k], &a), AM_OK);
            assert_int_equal(am_tok_tokenize(AM_TOK_INTL, texts[k], &tk), AM_OK);
            am_tok_text t = {texts[k], am_buf_str(&tk), AM_TOK_INTL, NULL};
            assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_OK);
            assert_int_equal(a.n, b.n);
            for (size_t j = 0; j < a.n; j++)
                assert_string_equal(a.v[j], b.v[j]);
            words += a.n;
        }
    }
    assert_true(words > 1000);
    /* misuse: 13a tokens, tags left to strip, NULL tokens; b unchanged */
    const char *x = "l'oxygène <b>pur</b>";
    assert_int_equal(am_tok_tokenize(AM_TOK_13A, x, &tk), AM_OK);
    am_tok_text t = {x, am_buf_str(&tk), AM_TOK_13A, NULL};
    size_t n = b.n;
    assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_ERR_INVALID);
    assert_int_equal(am_tok_tokenize(AM_TOK_INTL, x, &tk), AM_OK);
    t.tokens = am_buf_str(&tk);
    t.kind = AM_TOK_INTL;
    cfg.strip_tags = 1;
    assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_ERR_INVALID);
    cfg.strip_tags = 0;
    t.tokens = NULL;
    assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_ERR_INVALID);
    assert_int_equal(b.n, n);
    am_recall_seg seg;
    am_recall_seg_init(&seg);
    am_vocab *hist = am_vocab_new();
    t.tokens = am_buf_str(&tk);
    am_tok_text bad = {x, "l'oxygène < b > pur < / b >", AM_TOK_13A, NULL};
    assert_int_equal(am_recall_score_tok(&cfg, &t, &bad, 1, am_recall_vocab_lookup, hist, &seg),
                     AM_ERR_INVALID);
    assert_int_equal(seg.words.n, 0);
    assert_int_equal(am_recall_score_tok(&cfg, &t, &t, 1, am_recall_vocab_lookup, hist, &seg),
                     AM_OK);
    assert_true(seg.words.n > 0);
    am_recall_seg_cleanup(&seg);
    am_vocab_free(hist);
    am_buf_cleanup(&tk);
    am_toks_cleanup(&a);
    am_toks_cleanup(&b);
    am_sw_free(sw);
    tu_tico_free(&tico);
}

/* am_recall_tok_words: recall's content words from the shared normalized
 * tokens equal those from the tokens themselves, for every normalization
 * and case mode (forms that grow, shrink or stay; stopwords, punctuation,
 * digits), on TICO-19 and on hand-picked texts; a record made with other
 * settings is ignored (the tokens are normalized again). */
static void test_shared_words(void **state)
{
    (void)state;
    tu_tico tico;
    tu_tico_load(&tico);
    const char *extra[] = {"ﷺ Ⅻ ﬁn Straße ÉTÉ 2021 , ... l'été DE la 12,5 ㎏",
                           "École ’ « Sars-CoV-2 » ＡＢＣ", ""};
    enum am_norm norms[3] = {AM_NORM_NFKC, AM_NORM_NFC, AM_NORM_NONE};
    am_toks a, b;
    am_toks_init(&a);
    am_toks_init(&b);
    am_buf tk;
    am_buf_init(&tk);
    am_tok_words w;
    am_tok_words_init(&w);
    size_t words = 0, grown = 0;
    for (int nm = 0; nm < 3; nm++) {
        for (int fold = 0; fold < 2; fold++) {
            am_sw *sw = NULL;
            assert_int_equal(am_sw_builtin("snowball", "fr", norms[nm], fold, &sw), AM_OK);
            am_recall_config cfg;
            am_recall_config_init(&cfg);
            cfg.stopwords = sw;
            cfg.strip_tags = 0;
            cfg.norm = norms[nm];
            cfg.casefold = fold;
            for (size_t i = 0; i < tico.n + 3; i++) {
                const char *x = i < tico.n ? tico.segs[i].ref : extra[i - tico.n];
                assert_int_equal(am_tok_tokenize(AM_TOK_INTL, x, &tk), AM_OK);
                am_tok_text t = {x, am_buf_str(&tk), AM_TOK_INTL, NULL};
                am_toks_reset(&a);
                am_toks_reset(&b);
                assert_int_equal(am_recall_content_words_tok(&cfg, &t, &a), AM_OK);
                assert_int_equal(am_recall_tok_words(&cfg, am_buf_str(&tk), &w), AM_OK);
                t.words = &w;
                assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_OK);
                assert_int_equal(a.n, b.n);
                for (size_t j = 0; j < a.n; j++)
                    assert_string_equal(a.v[j], b.v[j]);
                words += a.n;
                assert_int_equal(w.fold.n, am_toks_count_py(am_buf_str(&tk)));
                for (size_t j = 0; j < w.fold.n; j++)
                    grown += strlen(w.fold.v[j]) > 4 * 3; /* ﷺ under NFKC */
            }
            /* a record of other settings is not used */
            const char *x = "le Straße";
            assert_int_equal(am_tok_tokenize(AM_TOK_INTL, x, &tk), AM_OK);
            am_recall_config other = cfg;
            other.casefold = !fold;
            assert_int_equal(am_recall_tok_words(&other, am_buf_str(&tk), &w), AM_OK);
            am_tok_text t = {x, am_buf_str(&tk), AM_TOK_INTL, NULL};
            am_toks_reset(&a);
            assert_int_equal(am_recall_content_words_tok(&cfg, &t, &a), AM_OK);
            t.words = &w;
            am_toks_reset(&b);
            assert_int_equal(am_recall_content_words_tok(&cfg, &t, &b), AM_OK);
            assert_int_equal(a.n, 1);
            assert_int_equal(b.n, 1);
            assert_string_equal(a.v[0], b.v[0]);
            assert_string_not_equal(w.fold.v[1], a.v[0]); /* the record differs */
            am_sw_free(sw);
        }
    }
    assert_true(words > 5000);
    assert_true(grown > 0);
    /* a form longer than its token (U+FDFA under NFKC: 3 bytes -> 33) */
    am_recall_config nfkc;
    am_recall_config_init(&nfkc);
    assert_int_equal(am_recall_tok_words(&nfkc, "a \xef\xb7\xba b", &w), AM_OK);
    assert_int_equal(w.fold.n, 3);
    assert_true(strlen(w.fold.v[1]) > 3);
    assert_string_equal(w.fold.v[2], "b");
    assert_true(w.content[1]);
    assert_int_equal(am_recall_tok_words(NULL, "", &w), AM_ERR_INVALID);
    am_tok_words_cleanup(&w);
    am_buf_cleanup(&tk);
    am_toks_cleanup(&a);
    am_toks_cleanup(&b);
    tu_tico_free(&tico);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vocab_basic),
        cmocka_unit_test(test_vocab_parse),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_slides),
        cmocka_unit_test(test_content_words),
        cmocka_unit_test(test_nonword_tokens),
        cmocka_unit_test(test_japanese_mecab),
        cmocka_unit_test(test_k2),
        cmocka_unit_test(test_novel_words),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_merge_equals_sequential),
        cmocka_unit_test(test_shared_tokens),
        cmocka_unit_test(test_shared_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
