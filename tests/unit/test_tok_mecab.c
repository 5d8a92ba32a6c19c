/* test_tok_mecab.c — the ja-mecab tokenizer (core/mecab.c, AM_TOK_JA_MECAB)
 * against sacreBLEU 2.6.0's output recorded in data/golden/multilingual.json,
 * its failure modes, and the names of the tokenizers adaptmon refuses. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "mecab.h"
#include "tok.h"

/* The model of Debian's mecab-ipadic-utf8, loaded once per test. */
static am_mecab *load_model(void)
{
    am_mecab *m = NULL;
    am_buf err;
    am_buf_init(&err);
    int rc = am_mecab_new(NULL, &m, &err);
    if (rc != AM_OK)
        fail_msg("am_mecab_new: %s", am_buf_str(&err));
    am_buf_cleanup(&err);
    return m;
}

/* Tokenizes s through tok.c's entry point with a workspace over m; the
 * result is returned malloc'd (caller frees). */
static char *ja_tokenize(am_mecab_ws *ws, const char *s)
{
    am_buf out;
    am_buf_init(&out);
    am_tok_ctx ctx = {.ja_mecab = ws};
    assert_int_equal(am_tok_tokenize_ctx(AM_TOK_JA_MECAB, &ctx, s, &out), AM_OK);
    char *r = strdup(am_buf_str(&out));
    am_buf_cleanup(&out);
    return r;
}

/* The golden sample and each Japanese set's first hypothesis line: the
 * tokenized string must equal sacreBLEU's byte for byte; the signature
 * must be the one sacreBLEU printed. */
static void test_golden_sample(void **state)
{
    (void)state;
    json_t *root = tu_json("data/golden/multilingual.json");
    json_t *jm = json_object_get(root, "ja_mecab");
    json_t *sample = json_object_get(jm, "sample");
    am_mecab *m = load_model();
    am_mecab_ws *ws = NULL;
    assert_int_equal(am_mecab_ws_new(m, &ws), AM_OK);

    char *got = ja_tokenize(ws, json_string_value(json_object_get(sample, "input")));
    assert_string_equal(got, json_string_value(json_object_get(sample, "ja-mecab")));
    free(got);
    assert_string_equal(am_mecab_signature(m),
                        json_string_value(json_object_get(jm, "tokenizer_signature")));

    json_t *sets = json_object_get(root, "sets");
    const char *key;
    json_t *set;
    int checked = 0;
    json_object_foreach(sets, key, set)
    {
        const char *want = json_string_value(json_object_get(set, "ja_mecab_first_hypothesis"));
        if (!want)
            continue;
        char rel[256];
        snprintf(rel, sizeof rel, "data/multilingual/%s/%s",
                 json_string_value(json_object_get(set, "dir")),
                 json_string_value(json_object_get(set, "hypothesis")));
        char *text = tu_read(rel, NULL);
        char *nl = strchr(text, '\n');
        if (nl)
            *nl = '\0';
        got = ja_tokenize(ws, text);
        assert_string_equal(got, want);
        free(got);
        free(text);
        checked++;
    }
    assert_int_equal(checked, 2);
    am_mecab_ws_free(ws);
    am_mecab_free(m);
    json_decref(root);
}

/* sacreBLEU strips the line (Python str.strip(): U+3000 and tabs too) and
 * the result; an empty or all-space line gives "". */
static void test_strip_and_empty(void **state)
{
    (void)state;
    am_mecab *m = load_model();
    am_mecab_ws *ws = NULL;
    assert_int_equal(am_mecab_ws_new(m, &ws), AM_OK);
    char *a = ja_tokenize(ws, "\xe3\x80\x80 \t猫が好きです。\t \xe3\x80\x80");
    char *b = ja_tokenize(ws, "猫が好きです。");
    assert_string_equal(a, b);
    assert_string_equal(b, "猫 が 好き です 。");
    free(a);
    free(b);
    a = ja_tokenize(ws, "");
    assert_string_equal(a, "");
    free(a);
    a = ja_tokenize(ws, " \xe3\x80\x80 ");
    assert_string_equal(a, "");
    free(a);
    /* Latin text passes through as MeCab splits it. */
    a = ja_tokenize(ws, "Tom  is here");
    assert_string_equal(a, "Tom is here");
    free(a);
    am_mecab_ws_free(ws);
    am_mecab_free(m);
}

/* ja-mecab without a model is refused, never run as another tokenizer. */
static void test_needs_model(void **state)
{
    (void)state;
    am_buf out;
    am_buf_init(&out);
    assert_int_equal(am_tok_tokenize(AM_TOK_JA_MECAB, "猫", &out), AM_ERR_INVALID);
    am_tok_ctx ctx = {.ja_mecab = NULL};
    assert_int_equal(am_tok_tokenize_ctx(AM_TOK_JA_MECAB, &ctx, "猫", &out), AM_ERR_INVALID);
    /* The other kinds ignore the context. */
    assert_int_equal(am_tok_tokenize_ctx(AM_TOK_13A, &ctx, "a,b", &out), AM_OK);
    assert_string_equal(am_buf_str(&out), "a , b");
    am_buf_cleanup(&out);
    assert_int_equal(am_mecab_tokenize(NULL, "x", &out), AM_ERR_INVALID);
    assert_int_equal(am_mecab_ws_new(NULL, NULL), AM_ERR_INVALID);
}

/* A missing dictionary and a non-UTF-8 one are refused with a message that
 * names the directory and what to install. */
static void test_bad_dictionary(void **state)
{
    (void)state;
    am_mecab *m = (am_mecab *)1;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_mecab_new("/nonexistent/mecab-dic", &m, &err), AM_ERR_NOTFOUND);
    assert_null(m);
    assert_non_null(strstr(am_buf_str(&err), "/nonexistent/mecab-dic"));
    assert_non_null(strstr(am_buf_str(&err), "mecab-ipadic-utf8"));
    /* Debian's mecab-ipadic (a dependency of mecab-ipadic-utf8) is EUC-JP. */
    assert_int_equal(am_mecab_new("/var/lib/mecab/dic/ipadic", &m, &err), AM_ERR_INVALID);
    assert_null(m);
    assert_non_null(strstr(am_buf_str(&err), "not UTF-8"));
    assert_int_equal(am_mecab_new(NULL, NULL, &err), AM_ERR_INVALID);
    am_buf_cleanup(&err);
}

/* Debian's dictionary (392127 entries: 令和 added) is accepted and reads
 * 令和 as one word; the size sacreBLEU checks (392126) is the other one
 * accepted. */
static void test_debian_dictionary(void **state)
{
    (void)state;
    am_mecab *m = load_model();
    unsigned n = am_mecab_dict_size(m);
    assert_true(n == AM_MECAB_IPADIC_SIZE || n == AM_MECAB_IPADIC_DEBIAN_SIZE);
    am_mecab_ws *ws = NULL;
    assert_int_equal(am_mecab_ws_new(m, &ws), AM_OK);
    char *r = ja_tokenize(ws, "令和元年");
    if (n == AM_MECAB_IPADIC_DEBIAN_SIZE)
        assert_string_equal(r, "令和 元年");
    free(r);
    am_mecab_ws_free(ws);
    am_mecab_free(m);
}

/* One model, one workspace per thread: concurrent use gives the same
 * tokens as a single thread. */
typedef struct worker {
    const am_mecab *m;
    const char *text;
    const char *want;
    int bad;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    am_mecab_ws *ws = NULL;
    if (am_mecab_ws_new(w->m, &ws) != AM_OK) {
        w->bad = 1;
        return NULL;
    }
    am_buf out;
    am_buf_init(&out);
    for (int i = 0; i < 200; i++)
        if (am_mecab_tokenize(ws, w->text, &out) != AM_OK || strcmp(am_buf_str(&out), w->want))
            w->bad++;
    am_buf_cleanup(&out);
    am_mecab_ws_free(ws);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    am_mecab *m = load_model();
    worker w[4];
    pthread_t t[4];
    const char *texts[2] = {"トムの妹は、二人とも結婚してるよ。", "物理って得意？"};
    const char *wants[2] = {"トム の 妹 は 、 二 人 とも 結婚 し てる よ 。", "物理 って 得意 ？"};
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){.m = m, .text = texts[i % 2], .want = wants[i % 2]};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].bad, 0);
    }
    am_mecab_free(m);
}

/* Names: ja-mecab parses and round-trips; the sacreBLEU tokenizers adaptmon
 * does not run have a reason; BLEU's default follows the target language
 * as sacreBLEU's CLI picks it. */
static void test_names_and_defaults(void **state)
{
    (void)state;
    enum am_tok_kind k = AM_TOK_13A;
    assert_int_equal(am_tok_parse("ja-mecab", &k), AM_OK);
    assert_int_equal(k, AM_TOK_JA_MECAB);
    assert_string_equal(am_tok_name(AM_TOK_JA_MECAB), "ja-mecab");
    const char *refused[] = {"ko-mecab", "flores101", "flores200", "spm", "spBLEU-1K"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(am_tok_parse(refused[i], &k), AM_ERR_INVALID);
        assert_non_null(am_tok_unsupported_reason(refused[i]));
    }
    assert_non_null(strstr(am_tok_unsupported_reason("ko-mecab"), "mecab-ko-dic"));
    assert_null(am_tok_unsupported_reason("13a"));
    assert_null(am_tok_unsupported_reason("bogus"));

    const char *name = NULL;
    assert_int_equal(am_tok_bleu_default("zh", &k, &name), AM_OK);
    assert_int_equal(k, AM_TOK_ZH);
    assert_string_equal(name, "zh");
    assert_int_equal(am_tok_bleu_default("zh-TW", &k, &name), AM_OK);
    assert_int_equal(k, AM_TOK_ZH);
    assert_int_equal(am_tok_bleu_default("ja", &k, &name), AM_OK);
    assert_int_equal(k, AM_TOK_JA_MECAB);
    assert_string_equal(name, "ja-mecab");
    assert_int_equal(am_tok_bleu_default("ko", &k, &name), AM_ERR_NOTFOUND);
    assert_string_equal(name, "ko-mecab");
    assert_int_equal(am_tok_bleu_default("fr", &k, &name), AM_OK);
    assert_int_equal(k, AM_TOK_13A);
    assert_int_equal(am_tok_bleu_default("jav", &k, &name), AM_OK); /* Javanese is not ja */
    assert_int_equal(k, AM_TOK_13A);
    assert_int_equal(am_tok_bleu_default(NULL, &k, &name), AM_OK);
    assert_int_equal(k, AM_TOK_13A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_sample),      cmocka_unit_test(test_strip_and_empty),
        cmocka_unit_test(test_needs_model),        cmocka_unit_test(test_bad_dictionary),
        cmocka_unit_test(test_debian_dictionary),  cmocka_unit_test(test_threads),
        cmocka_unit_test(test_names_and_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
