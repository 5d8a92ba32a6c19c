/* test_lang.c — language tags as CAT tools write them (core/lang.h), the
 * warnings and settings they lead to (core/config.h), and what a profile
 * fixes (am_config_apply_profile / am_config_check_profile). */
#include "testutil.h"

#include <string.h>

#include "config.h"
#include "lang.h"
#include "score.h"
#include "vocab.h"

static void canon_is(const char *tag, const char *want, int want_known)
{
    char out[AM_LANG_MAX];
    int known = -1;
    assert_int_equal(am_lang_canonical(tag, out, sizeof out, &known), AM_OK);
    assert_string_equal(out, want);
    assert_int_equal(known, want_known);
}

static void test_canonical_tags(void **state)
{
    (void)state;
    canon_is("fre-FR", "fr-FR", 1); /* memoQ: ISO 639-2/B */
    canon_is("ger-DE", "de-DE", 1);
    canon_is("chi", "zh", 1);
    canon_is("fra", "fr", 1); /* ISO 639-2/T and 639-3 */
    canon_is("deu_AT", "de-AT", 1);
    canon_is("zho", "zh", 1);
    canon_is("ZHO-Hant-TW", "zh-Hant-TW", 1);
    canon_is("fr", "fr", 1);
    canon_is("EN_us", "en-us", 1);
    canon_is("cmn", "cmn", 1); /* 639-3 without a two-letter code stays */
    canon_is("und", "und", 1);
    canon_is("xx", "xx", 0); /* not an ISO 639 code: kept */
    canon_is("qqq-QQ", "qqq-QQ", 0);
    char out[8];
    assert_int_equal(am_lang_canonical("", out, sizeof out, NULL), AM_ERR_INVALID);
    assert_int_equal(am_lang_canonical("f", out, sizeof out, NULL), AM_ERR_INVALID);
    assert_int_equal(am_lang_canonical("f1", out, sizeof out, NULL), AM_ERR_INVALID);
    assert_int_equal(am_lang_canonical("-fr", out, sizeof out, NULL), AM_ERR_INVALID);
    assert_int_equal(am_lang_canonical("fre-FR-x-long", out, 6, NULL), AM_ERR_INVALID);
}

/* target_lang through am_config_set: stored canonical, so the tokenizer and
 * the stopwords follow the language. */
static void test_config_uses_the_canonical_language(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "zho", NULL), AM_OK);
    assert_string_equal(c.target_lang, "zh");
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_ZH_FRISO); /* defaults 3 */
    assert_int_equal(am_config_set(&c, "target_lang", "fre-FR", NULL), AM_OK);
    assert_string_equal(c.target_lang, "fr-FR");
    assert_int_equal(am_config_warnings(&c) & AM_WARN_NO_STOPWORDS, 0);
    am_buf sig;
    am_buf_init(&sig);
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|sw:snowball|"));
    assert_null(strstr(am_buf_str(&sig), "warn"));
    assert_int_equal(am_config_set(&c, "target_lang", "cmn", NULL), AM_OK);
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_ZH_FRISO);
    assert_int_equal(am_config_set(&c, "defaults", "2", NULL), AM_OK);
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_ZH);
    am_buf_cleanup(&sig);
}

static void test_warnings_and_signature(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    /* und: no language given; said since issue 24 (it was silent: French
     * stopwords then counted as content words without a word) */
    assert_int_equal(am_config_warnings(&c), AM_WARN_NO_TARGET_LANG);
    {
        am_buf s0;
        am_buf_init(&s0);
        am_config_signature(&c, &s0);
        assert_non_null(strstr(am_buf_str(&s0), "|sw:none|"));
        assert_non_null(strstr(am_buf_str(&s0), "|warn:no-target-lang"));
        am_buf_cleanup(&s0);
    }
    /* Thai: stopwords-iso has a list, but the char tokenizer produces none
     * of its words: no stopwords, said so */
    assert_int_equal(am_config_set(&c, "target_lang", "th", NULL), AM_OK);
    assert_int_equal(am_config_warnings(&c), AM_WARN_NO_STOPWORDS);
    assert_string_equal(am_config_stopwords(&c), "none");
    assert_int_equal(am_config_set(&c, "target_lang", "zh", NULL), AM_OK);
    assert_string_equal(am_config_stopwords(&c), "iso");
    assert_int_equal(am_config_warnings(&c), 0);
    /* Japanese recall runs MeCab; glossary terms stay per character */
    assert_int_equal(am_config_set(&c, "target_lang", "ja-JP", NULL), AM_OK);
    assert_int_equal(am_config_tokenizer(&c), AM_TOK_JA_MECAB);
    assert_int_equal(am_config_terms_tokenizer(&c), AM_TOK_ZH);
    assert_string_equal(am_config_stopwords(&c), "iso");
    assert_int_equal(am_config_set(&c, "source_lang", "en", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "target_lang", "kal", NULL), AM_OK); /* Greenlandic */
    assert_string_equal(c.target_lang, "kl");
    assert_int_equal(am_config_warnings(&c), AM_WARN_NO_STOPWORDS);
    am_buf sig;
    am_buf_init(&sig);
    am_config_signature(&c, &sig);
    assert_non_null(strstr(am_buf_str(&sig), "|sw:none|"));
    assert_non_null(strstr(am_buf_str(&sig), "|warn:no-stopwords"));
    assert_int_equal(am_config_set(&c, "target_lang", "xq-XQ", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "source_lang", "qqa", NULL), AM_OK);
    assert_int_equal(am_config_warnings(&c),
                     AM_WARN_NO_STOPWORDS | AM_WARN_TARGET_LANG | AM_WARN_SOURCE_LANG);
    am_config_signature(&c, &sig);
    assert_non_null(
        strstr(am_buf_str(&sig), "|warn:no-stopwords,unknown-target-lang,unknown-source-lang"));
    /* stopwords none is a choice, not a warning */
    assert_int_equal(am_config_set(&c, "stopwords", "none", NULL), AM_OK);
    assert_int_equal(am_config_warnings(&c) & AM_WARN_NO_STOPWORDS, 0);
    am_buf_cleanup(&sig);
}

/* The segment of the issue: a Chinese sentence under zho is tokenized as
 * under zh (before: one content word, R0 0/1). */
static void test_zho_scores_as_zh(void **state)
{
    (void)state;
    const char *tr = "\xe6\x88\x91\xe4\xbb\xac\xe4\xbb\x8a\xe5\xa4\xa9\xe5\x9c\xa8"
                     "\xe5\x8c\x97\xe4\xba\xac\xe5\xbc\x80\xe4\xbc\x9a\xe3\x80\x82";
    const char *hyp = "\xe6\x88\x91\xe4\xbb\xac\xe6\x98\x8e\xe5\xa4\xa9\xe5\x9c\xa8"
                      "\xe4\xb8\x8a\xe6\xb5\xb7\xe5\xbc\x80\xe4\xbc\x9a\xe3\x80\x82";
    int64_t totals[2];
    const char *langs[] = {"zh", "zho"};
    for (int i = 0; i < 2; i++) {
        am_config c;
        am_config_init(&c);
        assert_int_equal(am_config_set(&c, "target_lang", langs[i], NULL), AM_OK);
        assert_int_equal(am_config_set(&c, "stopwords", "none", NULL), AM_OK);
        am_scorer *s = NULL;
        assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, NULL), AM_OK);
        am_score_ws *ws = am_score_ws_new();
        am_vocab *hist = am_vocab_new();
        am_seg_input in = {.translation = tr, .hyps = &hyp, .nsys = 1};
        am_seg_result res;
        assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL),
                         AM_OK);
        totals[i] = res.sys[0].recall.r[0].total;
        am_vocab_free(hist);
        am_score_ws_free(ws);
        am_scorer_free(s);
    }
    /* friso's words 我们 今天 在 北京 开会 (defaults 3; one per character
     * before), not one per sentence */
    assert_int_equal(totals[0], 5);
    assert_int_equal(totals[1], totals[0]);
}

static void test_profile_settings(void **state)
{
    (void)state;
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "profile", "simianer2019", NULL), AM_OK);
    assert_int_equal(am_config_check_profile(&c, NULL), AM_OK); /* nothing explicit */
    assert_int_equal(am_config_set(&c, "case", "sensitive", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "tokenizer", "auto", NULL), AM_OK);
    assert_int_equal(am_config_check_profile(&c, NULL), AM_OK); /* what it runs anyway */
    am_config_apply_profile(&c);
    assert_int_equal(c.case_sensitive, 1);
    assert_int_equal(c.norm, AM_NORM_NONE);
    assert_int_equal(c.strip_tags, 0);
    assert_int_equal(c.tokenizer_auto, 0);
    assert_int_equal(c.tokenizer, AM_TOK_NONE);
    static const char *const refused[][2] = {
        {"case", "fold"},       {"normalize", "nfkc"}, {"strip_tags", "true"},
        {"stem_match", "true"}, {"tokenizer", "intl"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        am_config_init(&c);
        assert_int_equal(am_config_set(&c, "profile", "simianer2019", NULL), AM_OK);
        assert_int_equal(am_config_set(&c, refused[i][0], refused[i][1], NULL), AM_OK);
        am_buf err;
        am_buf_init(&err);
        assert_int_equal(am_config_check_profile(&c, &err), AM_ERR_INVALID);
        assert_non_null(strstr(am_buf_str(&err), refused[i][0]));
        am_buf_cleanup(&err);
        /* the standard profile runs every one of them */
        assert_int_equal(am_config_set(&c, "profile", "standard", NULL), AM_OK);
        assert_int_equal(am_config_check_profile(&c, NULL), AM_OK);
    }
    /* the scorer's config is what runs */
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "profile", "simianer2019", NULL), AM_OK);
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, NULL), AM_OK);
    assert_int_equal(am_scorer_config(s)->case_sensitive, 1);
    assert_int_equal(am_scorer_config(s)->norm, AM_NORM_NONE);
    am_scorer_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_tags),
        cmocka_unit_test(test_config_uses_the_canonical_language),
        cmocka_unit_test(test_warnings_and_signature),
        cmocka_unit_test(test_zho_scores_as_zh),
        cmocka_unit_test(test_profile_settings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
