/* test_zhseg.c — the zh-friso recall tokenizer (core/zhseg.c,
 * AM_TOK_ZH_FRISO): friso's words cut from the caller's own text, no
 * character lost, one model shared by threads, and a clear refusal when
 * the dictionary is missing. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am.h"
#include "tok.h"
#include "zhseg.h"

/* Debian's friso-dict, loaded once for the whole file (0.5 s). */
static am_zhseg *model;

static int setup(void **state)
{
    (void)state;
    am_buf err;
    am_buf_init(&err);
    int rc = am_zhseg_new(NULL, &model, &err);
    if (rc != AM_OK)
        fprintf(stderr, "am_zhseg_new: %s\n", am_buf_str(&err));
    am_buf_cleanup(&err);
    return rc == AM_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    am_zhseg_free(model);
    return 0;
}

/* Tokenizes s through tok.c's entry point with workspace ws; returns the
 * result malloc'd (caller frees). */
static char *zh_tokenize(am_zhseg_ws *ws, const char *s)
{
    am_buf out;
    am_buf_init(&out);
    am_tok_ctx ctx = {.zh_friso = ws};
    assert_int_equal(am_tok_tokenize_ctx(AM_TOK_ZH_FRISO, &ctx, s, &out), AM_OK);
    char *r = strdup(am_buf_str(&out));
    am_buf_cleanup(&out);
    return r;
}

/* Known sentences. The first is line 2 of MLQE-PE en-zh mt.zh, whose
 * distributed segmentation (mt.tok.zh) is the same; the others pin what
 * friso rewrites and this module must not: Latin case, full-width
 * letters, and punctuation, whose length friso 1.6.4 reports wrongly
 * (a version that trusted it cut "2024年" into "20 24年"). */
static void test_sentences(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"他把欧文扔进了挖掘机挖出儿子心脏的坑里.",
         "他 把 欧文 扔进 了 挖掘机 挖出 儿子 心脏 的 坑里 ."},
        {"Hello World，我们在北京大学学习C++和Python！ 2024年。」",
         "Hello World ， 我们 在 北京大学 学习 C++ 和 Python ！ 2024年 。」"},
        {"学习 Ｈｅｌｌｏ１２３ 3.5亿", "学习 Ｈｅｌｌｏ１２３ 3.5 亿"},
        {"", ""},
        {"  \t ", ""},
        /* words of at most 5 characters (max_len) */
        {"中华人民共和国", "中华 人民共和国"},
    };
    am_zhseg_ws *ws = NULL;
    assert_int_equal(am_zhseg_ws_new(model, &ws), AM_OK);
    assert_ptr_equal(am_zhseg_ws_model(ws), model);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = zh_tokenize(ws, cases[i][0]);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
    am_zhseg_ws_free(ws);
    assert_string_equal(am_zhseg_signature(model), "zh-friso-1.6.4");
    assert_true(am_zhseg_dict_size(model) > 100000);
}

/* s without its whitespace (ASCII and U+3000, all this data has). */
static char *squeeze(const char *s)
{
    char *r = malloc(strlen(s) + 1), *o = r;
    for (const char *p = s; *p;) {
        if (*p == ' ' || *p == '\t') {
            p++;
        } else if (!strncmp(p, "\xe3\x80\x80", 3)) {
            p += 3;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return r;
}

/* Every byte of the input is in exactly one token, in order: the tokens
 * joined without spaces are the text without its whitespace, on all 600
 * lines of MLQE-PE en-zh (MT and post-edits) and on a Latin word longer
 * than friso's 63-byte word buffer. */
static void test_no_text_lost(void **state)
{
    (void)state;
    am_zhseg_ws *ws = NULL;
    assert_int_equal(am_zhseg_ws_new(model, &ws), AM_OK);
    static const char *const files[] = {"data/multilingual/mlqepe-en-zh/mt.zh",
                                        "data/multilingual/mlqepe-en-zh/pe.tok.zh"};
    size_t total = 0;
    for (size_t f = 0; f < 2; f++) {
        char *buf, **lines;
        size_t n = tu_ml_lines(files[f], &buf, &lines);
        assert_int_equal(n, 300);
        for (size_t i = 0; i < n; i++) {
            char *got = zh_tokenize(ws, lines[i]);
            char *a = squeeze(lines[i]), *b = squeeze(got);
            if (strcmp(a, b))
                fail_msg("%s:%zu: tokens \"%s\" lose text of \"%s\"", files[f], i + 1, got,
                         lines[i]);
            total += am_toks_count_py(got);
            free(a);
            free(b);
            free(got);
        }
        free(lines);
        free(buf);
    }
    assert_true(total > 10000);
    char longw[200];
    memset(longw, 'x', 150);
    strcpy(longw + 150, "中国人");
    char *got = zh_tokenize(ws, longw);
    char *b = squeeze(got);
    assert_string_equal(b, longw);
    free(b);
    free(got);
    am_zhseg_ws_free(ws);
}

/* Two threads, each with its workspace over the one shared model, give
 * what one thread gives. The second thread's lines start with six
 * ideographic commas, so the same words sit at other offsets: friso
 * stores a word's offset in its shared dictionary entry (zhseg.c), and
 * unserialized threads could read each other's. */
#define ZH_SHIFT "\xef\xbc\x8c\xef\xbc\x8c\xef\xbc\x8c\xef\xbc\x8c\xef\xbc\x8c\xef\xbc\x8c"
typedef struct zh_job {
    char **lines; /* as the thread tokenizes them (malloc'd) */
    size_t n;
    char **want;
    int bad;
} zh_job;

static void *zh_worker(void *arg)
{
    zh_job *j = arg;
    am_zhseg_ws *ws = NULL;
    if (am_zhseg_ws_new(model, &ws) != AM_OK) {
        j->bad = -1;
        return NULL;
    }
    am_buf out;
    am_buf_init(&out);
    for (int round = 0; round < 5; round++)
        for (size_t i = 0; i < j->n; i++) {
            if (am_zhseg_tokenize(ws, j->lines[i], &out) != AM_OK ||
                strcmp(am_buf_str(&out), j->want[i]))
                j->bad++;
        }
    am_buf_cleanup(&out);
    am_zhseg_ws_free(ws);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char *buf, **lines;
    size_t n = tu_ml_lines("data/multilingual/mlqepe-en-zh/mt.zh", &buf, &lines);
    zh_job jobs[2];
    am_zhseg_ws *ws = NULL;
    assert_int_equal(am_zhseg_ws_new(model, &ws), AM_OK);
    for (int j = 0; j < 2; j++) {
        jobs[j] = (zh_job){calloc(n, sizeof(char *)), n, calloc(n, sizeof(char *)), 0};
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(lines[i]) + sizeof ZH_SHIFT;
            jobs[j].lines[i] = malloc(len);
            snprintf(jobs[j].lines[i], len, "%s%s", j ? ZH_SHIFT : "", lines[i]);
            jobs[j].want[i] = zh_tokenize(ws, jobs[j].lines[i]);
        }
    }
    am_zhseg_ws_free(ws);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, zh_worker, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int j = 0; j < 2; j++) {
        assert_int_equal(jobs[j].bad, 0);
        for (size_t i = 0; i < n; i++) {
            free(jobs[j].want[i]);
            free(jobs[j].lines[i]);
        }
        free(jobs[j].want);
        free(jobs[j].lines);
    }
    free(lines);
    free(buf);
}

/* A missing or empty dictionary is refused with a message naming the
 * package; the tokenizer without a workspace is refused. */
static void test_errors(void **state)
{
    (void)state;
    am_zhseg *m = (am_zhseg *)1;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_zhseg_new("/nonexistent/friso", &m, &err), AM_ERR_NOTFOUND);
    assert_null(m);
    assert_non_null(strstr(am_buf_str(&err), "/nonexistent/friso/friso.lex.ini"));
    assert_non_null(strstr(am_buf_str(&err), "friso-dict"));

    char dir[] = "/tmp/test_zhseg_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ini[64];
    snprintf(ini, sizeof ini, "%s/friso.lex.ini", dir);
    FILE *f = fopen(ini, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(am_zhseg_new(dir, &m, &err), AM_ERR_NOTFOUND);
    assert_null(m);
    assert_non_null(strstr(am_buf_str(&err), "has no word"));
    unlink(ini);
    rmdir(dir);
    assert_int_equal(am_zhseg_new(NULL, NULL, &err), AM_ERR_INVALID);
    am_buf_cleanup(&err);

    am_buf out;
    am_buf_init(&out);
    assert_int_equal(am_tok_tokenize(AM_TOK_ZH_FRISO, "中国", &out), AM_ERR_INVALID);
    am_tok_ctx none = {0};
    assert_int_equal(am_tok_tokenize_ctx(AM_TOK_ZH_FRISO, &none, "中国", &out), AM_ERR_INVALID);
    assert_int_equal(am_zhseg_tokenize(NULL, "x", &out), AM_ERR_INVALID);
    am_buf_cleanup(&out);
    assert_int_equal(am_zhseg_ws_new(NULL, &(am_zhseg_ws *){NULL}), AM_ERR_INVALID);
    am_zhseg_free(NULL);
    am_zhseg_ws_free(NULL);

    /* the name parses; BLEU refuses the kind (config: test_bleu) */
    enum am_tok_kind k;
    assert_int_equal(am_tok_parse("zh-friso", &k), AM_OK);
    assert_int_equal(k, AM_TOK_ZH_FRISO);
    assert_string_equal(am_tok_name(k), "zh-friso");
    assert_true(am_tok_recall_only(k));
    assert_false(am_tok_recall_only(AM_TOK_ZH));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sentences),
        cmocka_unit_test(test_no_text_lost),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
