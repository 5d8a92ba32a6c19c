/* test_stopwords.c — stopword sets (core/stopwords.h). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "mecab.h"
#include "zhseg.h"
#include "score.h"
#include "stopwords.h"
#include "text.h"

static const char *const snowball_files[][2] = {
    {"danish", "da"},    {"dutch", "nl"},      {"english", "en"},   {"finnish", "fi"},
    {"french", "fr"},    {"german", "de"},     {"hungarian", "hu"}, {"italian", "it"},
    {"norwegian", "no"}, {"portuguese", "pt"}, {"russian", "ru"},   {"spanish", "es"},
    {"swedish", "sv"},
};

/* Parses a Snowball list file the way its header describes it ('|' starts a
 * comment, the word is the first field of a line) into distinct words. */
static size_t read_snowball(const char *file, char ***words_out)
{
    char rel[256];
    snprintf(rel, sizeof rel, "data/stopwords/snowball/%s.stop.txt", file);
    char *buf = tu_read(rel, NULL);
    char **words = NULL;
    size_t n = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *bar = strchr(line, '|');
        if (bar)
            *bar = '\0';
        char *w = line + strspn(line, " \t\r");
        size_t len = strcspn(w, " \t\r");
        if (len == 0)
            continue;
        w[len] = '\0';
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup |= strcmp(words[i], w) == 0;
        if (dup)
            continue;
        words = realloc(words, (n + 1) * sizeof *words);
        words[n++] = strdup(w);
    }
    free(buf);
    *words_out = words;
    return n;
}

static void free_words(char **w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(w[i]);
    free(w);
}

static void test_lang_codes(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(am_sw_lang("fr", out, sizeof out), AM_OK);
    assert_string_equal(out, "fr");
    assert_int_equal(am_sw_lang("fr-FR", out, sizeof out), AM_OK);
    assert_string_equal(out, "fr");
    assert_int_equal(am_sw_lang("fr_XX", out, sizeof out), AM_OK);
    assert_string_equal(out, "fr");
    assert_int_equal(am_sw_lang("es-419", out, sizeof out), AM_OK);
    assert_string_equal(out, "es");
    assert_int_equal(am_sw_lang("PT-br", out, sizeof out), AM_OK);
    assert_string_equal(out, "pt");
    assert_int_equal(am_sw_lang("zh-Hant-TW", out, sizeof out), AM_OK);
    assert_string_equal(out, "zh");
    assert_int_equal(am_sw_lang("", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("f", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("f1", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("fr-", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("-fr", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("français", out, sizeof out), AM_ERR_INVALID);
    assert_int_equal(am_sw_lang("fr", out, 2), AM_ERR_INVALID);

    assert_string_equal(am_sw_default_source("en"), "snowball");
    assert_string_equal(am_sw_default_source("fr-FR"), "snowball");
    assert_string_equal(am_sw_default_source("no"), "snowball");
    assert_string_equal(am_sw_default_source("cs_CZ"), "iso");
    assert_string_equal(am_sw_default_source("ja"), "iso");
    assert_string_equal(am_sw_default_source("xx"), "none");
    assert_string_equal(am_sw_default_source("?"), "none");
    assert_string_equal(am_sw_default_source(NULL), "none");
}

static void test_iso_sizes(void **state)
{
    (void)state;
    json_t *iso = tu_json("data/stopwords/stopwords-iso/stopwords-iso.json");
    json_t *fr = json_object_get(iso, "fr");
    assert_non_null(fr);
    /* The number data/golden/tico19-enfr-dev.json's rk.rb run states. */
    assert_int_equal(json_array_size(fr), 691);

    const char *forms[] = {"fr", "fr-FR", "fr_XX", "FR", "fr-CA"};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        am_sw *sw = NULL;
        assert_int_equal(am_sw_builtin("iso", forms[f], AM_NORM_NONE, 0, &sw), AM_OK);
        assert_non_null(sw);
        assert_int_equal(am_sw_size(sw), json_array_size(fr));
        size_t i;
        json_t *w;
        json_array_foreach(fr, i, w) assert_true(am_sw_contains(sw, json_string_value(w)));
        am_sw_free(sw);
    }

    /* Every stopwords-iso language loads, with its words as listed. */
    const char *lang;
    json_t *arr;
    size_t nlang = 0;
    json_object_foreach(iso, lang, arr)
    {
        am_sw *sw = NULL;
        assert_int_equal(am_sw_builtin("iso", lang, AM_NORM_NONE, 0, &sw), AM_OK);
        assert_true(am_sw_size(sw) > 0);
        assert_true(am_sw_size(sw) <= json_array_size(arr));
        size_t i;
        json_t *w;
        json_array_foreach(arr, i, w) assert_true(am_sw_contains(sw, json_string_value(w)));
        am_sw_free(sw);
        nlang++;
    }
    assert_int_equal(nlang, 58);
    json_decref(iso);
}

static void test_snowball_lists(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof snowball_files / sizeof snowball_files[0]; f++) {
        char **words;
        size_t n = read_snowball(snowball_files[f][0], &words);
        assert_true(n > 50);
        am_sw *sw = NULL;
        assert_int_equal(am_sw_builtin("snowball", snowball_files[f][1], AM_NORM_NONE, 0, &sw),
                         AM_OK);
        assert_int_equal(am_sw_size(sw), n);
        for (size_t i = 0; i < n; i++)
            assert_true(am_sw_contains(sw, words[i]));
        assert_false(am_sw_contains(sw, "|"));
        assert_false(am_sw_contains(sw, ""));
        am_sw_free(sw);
        free_words(words, n);
    }
    am_sw *en = NULL;
    assert_int_equal(am_sw_builtin("snowball", "en-GB", AM_NORM_NFKC, 1, &en), AM_OK);
    assert_true(am_sw_contains(en, "the"));
    assert_true(am_sw_contains(en, "yourselves"));
    assert_false(am_sw_contains(en, "The")); /* lookups take normalized words */
    assert_false(am_sw_contains(en, "terrier"));
    assert_false(am_sw_contains(en, "mine")); /* commented out in the list */
    am_sw_free(en);
}

static void test_normalization(void **state)
{
    (void)state;
    /* German stopwords-iso has case and ß variants that fold together. */
    json_t *iso = tu_json("data/stopwords/stopwords-iso/stopwords-iso.json");
    json_t *de = json_object_get(iso, "de");
    am_sw *raw = NULL, *folded = NULL;
    assert_int_equal(am_sw_builtin("iso", "de", AM_NORM_NONE, 0, &raw), AM_OK);
    assert_int_equal(am_sw_builtin("iso", "de", AM_NORM_NFKC, 1, &folded), AM_OK);
    assert_int_equal(am_sw_size(raw), json_array_size(de));
    assert_true(am_sw_size(folded) < am_sw_size(raw));
    am_buf b;
    am_buf_init(&b);
    size_t i;
    json_t *w;
    json_array_foreach(de, i, w)
    {
        assert_int_equal(am_text_normalize(json_string_value(w), AM_NORM_NFKC, 1, &b), AM_OK);
        assert_true(am_sw_contains(folded, am_buf_str(&b)));
    }
    assert_true(am_sw_contains(raw, "daß"));
    assert_false(am_sw_contains(folded, "daß"));
    assert_true(am_sw_contains(folded, "dass"));
    am_buf_cleanup(&b);
    am_sw_free(raw);
    am_sw_free(folded);
    json_decref(iso);
}

static void test_custom(void **state)
{
    (void)state;
    const char *words[] = {"The", "\xef\xac\x81sh", "the", "", "Stra\303\237e"};
    am_sw *cs = NULL, *fold = NULL, *nfc = NULL;
    assert_int_equal(am_sw_from_words(words, 5, AM_NORM_NONE, 0, &cs), AM_OK);
    assert_int_equal(am_sw_size(cs), 4); /* "" skipped */
    assert_true(am_sw_contains(cs, "The"));
    assert_true(am_sw_contains(cs, "the"));
    assert_true(am_sw_contains(cs, "\xef\xac\x81sh"));
    assert_false(am_sw_contains(cs, "fish"));

    assert_int_equal(am_sw_from_words(words, 5, AM_NORM_NFKC, 1, &fold), AM_OK);
    assert_int_equal(am_sw_size(fold), 3); /* The/the merge */
    assert_true(am_sw_contains(fold, "the"));
    assert_false(am_sw_contains(fold, "The"));
    assert_true(am_sw_contains(fold, "fish")); /* NFKC splits the ligature */
    assert_true(am_sw_contains(fold, "strasse"));

    assert_int_equal(am_sw_from_words(words, 5, AM_NORM_NFC, 0, &nfc), AM_OK);
    assert_true(am_sw_contains(nfc, "\xef\xac\x81sh"));
    assert_true(am_sw_contains(nfc, "The"));

    am_sw *bad = (am_sw *)1;
    const char *badw[] = {"ok", "\xff"};
    assert_int_equal(am_sw_from_words(badw, 2, AM_NORM_NONE, 0, &bad), AM_ERR_UTF8);
    assert_null(bad);
    am_sw *empty = NULL;
    assert_int_equal(am_sw_from_words(NULL, 0, AM_NORM_NFKC, 1, &empty), AM_OK);
    assert_int_equal(am_sw_size(empty), 0);
    assert_false(am_sw_contains(empty, "the"));
    am_sw_free(empty);
    am_sw_free(cs);
    am_sw_free(fold);
    am_sw_free(nfc);
}

/* Whether the words of one shipped list that survive am_sw_builtin_for
 * with the language's default tokenizer are exactly those the tokenizer
 * gives back as one unchanged token (so every stopword in use can match,
 * and none that could is lost). words: the list as shipped. Returns the
 * number kept. */
static size_t check_list(const char *source, const char *lang, const char *const *words, size_t n)
{
    enum am_tok_kind kind = am_tok_default_for_lang(lang);
    am_sw *sw = NULL;
    assert_int_equal(am_sw_builtin_for(source, lang, kind, NULL, AM_NORM_NONE, 0, &sw), AM_OK);
    am_toks t;
    am_toks_init(&t);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        am_toks_reset(&t);
        assert_int_equal(am_tok_split(kind, words[i], &t), AM_OK);
        int one = t.n == 1 && strcmp(t.v[0], words[i]) == 0;
        if (am_sw_contains(sw, words[i]) != one)
            fail_msg("%s %s: \"%s\" is %s but %s one token of %s", source, lang, words[i],
                     one ? "left out" : "kept", one ? "is" : "is not", am_tok_name(kind));
        kept += (size_t)one;
    }
    assert_int_equal(am_sw_size(sw), kept);
    am_toks_cleanup(&t);
    am_sw_free(sw);
    return kept;
}

/* Issue 24 §2: a stopword that can never match its tokenizer is a bug.
 * Every shipped list, under its language's default tokenizer. */
static void test_lists_match_tokenizer(void **state)
{
    (void)state;
    json_t *iso = tu_json("data/stopwords/stopwords-iso/stopwords-iso.json");
    const char *lang;
    json_t *arr;
    json_object_foreach(iso, lang, arr)
    {
        size_t n = json_array_size(arr);
        const char **w = calloc(n ? n : 1, sizeof *w);
        for (size_t i = 0; i < n; i++)
            w[i] = json_string_value(json_array_get(arr, i));
        size_t kept = check_list("iso", lang, w, n);
        if (!strcmp(lang, "zh")) {
            /* The zh tokenizer makes every CJK character a token: only the
             * one-character words can match (282 of 794). */
            size_t one_char = 0;
            for (size_t i = 0; i < n; i++)
                one_char += am_utf8_decode(w[i], strlen(w[i]), &(int32_t){0}) == strlen(w[i]);
            assert_int_equal(kept, one_char);
            assert_true(kept < n);
        }
        free(w);
    }
    for (size_t f = 0; f < sizeof snowball_files / sizeof snowball_files[0]; f++) {
        char **words;
        size_t n = read_snowball(snowball_files[f][0], &words);
        check_list("snowball", snowball_files[f][1], (const char *const *)words, n);
        free_words(words, n);
    }
    json_decref(iso);

    /* The set a zh scorer uses: 的 (one character) can match, 我们 cannot. */
    am_sw *zh = NULL;
    assert_int_equal(am_sw_builtin_for("iso", "zh", AM_TOK_ZH, NULL, AM_NORM_NFKC, 1, &zh), AM_OK);
    assert_true(am_sw_contains(zh, "\xe7\x9a\x84"));
    assert_false(am_sw_contains(zh, "\xe6\x88\x91\xe4\xbb\xac"));
    am_sw_free(zh);
    /* English "don't": intl splits it, 13a and none keep it whole. */
    am_sw *en = NULL;
    assert_int_equal(am_sw_builtin_for("snowball", "en", AM_TOK_INTL, NULL, AM_NORM_NFKC, 1, &en),
                     AM_OK);
    assert_false(am_sw_contains(en, "don't"));
    assert_true(am_sw_contains(en, "the"));
    am_sw_free(en);
    assert_int_equal(am_sw_builtin_for("snowball", "en", AM_TOK_13A, NULL, AM_NORM_NFKC, 1, &en),
                     AM_OK);
    assert_true(am_sw_contains(en, "don't"));
    am_sw_free(en);
    assert_true(am_sw_one_token(AM_TOK_NONE, NULL, "don't"));
    assert_false(am_sw_one_token(AM_TOK_CHAR, NULL, "ab"));
}

/* The set a session really uses, for every shipped language under its
 * default options (the recall tokenizer that auto picks: ja-mecab for ja,
 * zh-friso for zh):
 * exactly the words of its default list that this tokenizer gives back as
 * one token, normalized. Catches a stopword that can never match in the
 * scorer itself (issue 24), whatever the tokenizer. */
static void test_scorer_uses_matchable_stopwords(void **state)
{
    (void)state;
    am_mecab *m = NULL;
    am_mecab_ws *mw = NULL;
    assert_int_equal(am_mecab_new(NULL, &m, NULL), AM_OK);
    assert_int_equal(am_mecab_ws_new(m, &mw), AM_OK);
    /* and friso for zh, whose default recall tokenizer it is (defaults 3) */
    am_zhseg *zm = NULL;
    am_zhseg_ws *zw = NULL;
    assert_int_equal(am_zhseg_new(NULL, &zm, NULL), AM_OK);
    assert_int_equal(am_zhseg_ws_new(zm, &zw), AM_OK);
    am_tok_ctx ctx = {.ja_mecab = mw, .zh_friso = zw};
    json_t *iso = tu_json("data/stopwords/stopwords-iso/stopwords-iso.json");
    const char *lang;
    json_t *arr;
    size_t checked = 0, friso_checked = 0;
    json_object_foreach(iso, lang, arr)
    {
        am_config c;
        am_config_init(&c);
        if (am_config_set(&c, "target_lang", lang, NULL) != AM_OK)
            continue; /* a key that is no language code */
        /* BLEU is not at stake here (and ko's default, ko-mecab, is refused) */
        assert_int_equal(am_config_set(&c, "bleu_tokenize", "13a", NULL), AM_OK);
        enum am_tok_kind kind = am_config_tokenizer(&c);
        const char *source = am_sw_default_source(lang);
        char **words = NULL;
        size_t n = 0;
        for (size_t f = 0; f < sizeof snowball_files / sizeof snowball_files[0]; f++)
            if (!strcmp(source, "snowball") && !strcmp(snowball_files[f][1], lang))
                n = read_snowball(snowball_files[f][0], &words);
        if (!words) {
            n = json_array_size(arr);
            words = calloc(n ? n : 1, sizeof *words);
            for (size_t i = 0; i < n; i++)
                words[i] = strdup(json_string_value(json_array_get(arr, i)));
        }
        const char **one = calloc(n ? n : 1, sizeof *one);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (am_sw_one_token(kind, &ctx, words[i]))
                one[k++] = words[i];
        if (kind == AM_TOK_ZH_FRISO) {
            /* friso cuts 我们 (we) alone, which the character rule never
             * gives: more of the list can match than its 282 single
             * characters */
            friso_checked++;
            int we = 0;
            for (size_t i = 0; i < k; i++)
                we |= !strcmp(one[i], "\xe6\x88\x91\xe4\xbb\xac");
            assert_true(we);
            assert_true(k > 282 && k < n);
        }
        am_sw *want = NULL;
        assert_int_equal(am_sw_from_words(one, k, AM_NORM_NFKC, 1, &want), AM_OK);
        am_scorer *sc = NULL;
        assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &sc, NULL), AM_OK);
        if (am_scorer_stopword_count(sc) != am_sw_size(want))
            fail_msg("%s (%s, tokenizer %s): the scorer uses %zu stopwords, %zu can match", lang,
                     source, am_tok_name(kind), am_scorer_stopword_count(sc), am_sw_size(want));
        am_scorer_free(sc);
        am_sw_free(want);
        free(one);
        free_words(words, n);
        checked++;
    }
    assert_true(checked >= 58);
    assert_int_equal(friso_checked, 1);
    json_decref(iso);
    am_mecab_ws_free(mw);
    am_mecab_free(m);
    am_zhseg_ws_free(zw);
    am_zhseg_free(zm);
}

static void test_errors(void **state)
{
    (void)state;
    am_sw *sw = (am_sw *)1;
    assert_int_equal(am_sw_builtin("snowball", "ja", AM_NORM_NFKC, 1, &sw), AM_ERR_NOTFOUND);
    assert_null(sw);
    assert_int_equal(am_sw_builtin("iso", "xx", AM_NORM_NFKC, 1, &sw), AM_ERR_NOTFOUND);
    assert_int_equal(am_sw_builtin("snowball", "cs-CZ", AM_NORM_NONE, 0, &sw), AM_ERR_NOTFOUND);
    assert_int_equal(am_sw_builtin("nltk", "en", AM_NORM_NFKC, 1, &sw), AM_ERR_INVALID);
    assert_int_equal(am_sw_builtin("iso", "", AM_NORM_NFKC, 1, &sw), AM_ERR_INVALID);
    assert_int_equal(am_sw_builtin("iso", NULL, AM_NORM_NFKC, 1, &sw), AM_ERR_INVALID);
    assert_null(sw);
    assert_int_equal(am_sw_builtin("none", "ja", AM_NORM_NFKC, 1, &sw), AM_OK);
    assert_non_null(sw);
    assert_int_equal(am_sw_size(sw), 0);
    am_sw_free(sw);
    am_sw_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lang_codes),
        cmocka_unit_test(test_iso_sizes),
        cmocka_unit_test(test_snowball_lists),
        cmocka_unit_test(test_normalization),
        cmocka_unit_test(test_custom),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lists_match_tokenizer),
        cmocka_unit_test(test_scorer_uses_matchable_stopwords),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
