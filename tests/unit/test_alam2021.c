/*
 * test_alam2021.c — profile alam2021 (evaluate_term_wmt.py, no lemmatizer):
 * the TERm vectors of notes-alam2021-terM.md, the script's index rule and
 * matching quirks on small inputs, and every per-segment and corpus value of
 * data/golden/tico19-enfr-dev.json recomputed from the TICO-19 dev SGML.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am.h"
#include "sgml.h"
#include "compat/alam2021.h"

#define TOL 1e-12

/* Splits a space-separated literal into a token array (static storage). */
static size_t split(char *s, const char **v, size_t cap)
{
    size_t n = 0;
    for (char *p = strtok(s, " "); p && n < cap; p = strtok(NULL, " "))
        v[n++] = p;
    return n;
}

static void test_term_ter_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *hyp, *ref;
        int terms[6];
        size_t nterms;
        double expect;
    } vec[] = {
        {"a b X c", "a b T c", {2}, 1, 0.5},
        {"a b c", "a b T c", {2}, 1, 0.5},
        {"a b T Y c", "a b T c", {2}, 1, 0.25},
        {"a b Y T c", "a b T c", {2}, 1, 0.5},
        {"T a b c", "a b c T", {3}, 1, 0.25},
        {"", "a T", {1}, 1, 1.0},
        {"X Y", "T U", {0, 1}, 2, 2.0},
        {"U T", "T U", {0, 1}, 2, 0.5},
        {"the cough is dry", "the dry cough is bad", {2}, 1, 0.4},
        {"is bad the dry cough", "the dry cough is bad", {2}, 1, 0.2},
        {"d e b c b T b", "T a e b", {0, 1, 2}, 3, 1.25},
        {"c d b c a c", "c d d a a c", {0, 1, 2, 3, 4}, 5, 0.5},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char hb[64], rb[64];
        const char *h[16], *r[16];
        unsigned char term[16] = {0};
        strcpy(hb, vec[i].hyp);
        strcpy(rb, vec[i].ref);
        size_t nh = split(hb, h, 16), nr = split(rb, r, 16);
        for (size_t k = 0; k < vec[i].nterms; k++)
            term[vec[i].terms[k]] = 1;
        double v = -1;
        assert_int_equal(am_alam_term_ter(h, nh, r, nr, term, AM_ALAM_TERM_COST, &v), AM_OK);
        tu_assert_close(v, vec[i].expect, TOL);
    }
    /* without term positions, TERm is plain PyTER: one shift + nothing */
    {
        const char *h[] = {"b", "a"}, *r[] = {"a", "b"};
        double v;
        assert_int_equal(am_alam_term_ter(h, 2, r, 2, NULL, 2, &v), AM_OK);
        tu_assert_close(v, 0.5, TOL);
    }
    /* empty reference: the script divides by zero */
    {
        const char *h[] = {"a"};
        double v;
        assert_int_equal(am_alam_term_ter(h, 1, NULL, 0, NULL, 2, &v), AM_ERR_RANGE);
    }
}

static void test_term_indices(void **state)
{
    (void)state;
    const char *toks[] = {"a", "b", "c", "d", "e", "b"};
    size_t idx[8], n;
    /* one word: just e */
    const char *w1[] = {"c"};
    assert_int_equal(am_alam_term_indices(toks, 6, w1, 1, idx, 8, &n), AM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 2);
    /* two words: s is skipped (range(s, e-1) is empty) */
    const char *w2[] = {"c", "d"};
    assert_int_equal(am_alam_term_indices(toks, 6, w2, 2, idx, 8, &n), AM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 3);
    /* four words: s..e-2, then e (e-1 skipped) */
    const char *w4[] = {"a", "b", "c", "d"};
    assert_int_equal(am_alam_term_indices(toks, 6, w4, 4, idx, 8, &n), AM_OK);
    assert_int_equal(n, 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 1);
    assert_int_equal(idx[2], 3);
    /* first occurrences in the whole sentence */
    const char *wb[] = {"e", "b"};
    assert_int_equal(am_alam_term_indices(toks, 6, wb, 2, idx, 8, &n), AM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(idx[0], 1);
    const char *wx[] = {"x"};
    assert_int_equal(am_alam_term_indices(toks, 6, wx, 1, idx, 8, &n), AM_ERR_NOTFOUND);
    assert_int_equal(am_alam_term_indices(toks, 6, wx, 0, idx, 8, &n), AM_ERR_INVALID);
}

static void test_regex(void **state)
{
    (void)state;
    const char *t = " a essoufflé ( e ) b ";
    size_t len = strlen(t);
    /* the script's pattern: "( e )" is a group, so the literal text is not found */
    assert_int_equal(am_alam_regex_match_at(" essoufflé ( e ) ", t, len, 2), 0);
    assert_int_equal(am_alam_regex_match_at(" essoufflé ( e ) ", " essoufflé  e  ",
                                            strlen(" essoufflé  e  "), 0),
                     1);
    assert_int_equal(am_alam_regex_match_at(" a ", t, len, 0), 1);
    assert_int_equal(am_alam_regex_match_at(" a.e", t, len, 0), 1);
    assert_int_equal(am_alam_regex_match_at(" [^ ]+ ", t, len, 0), 1);
    assert_int_equal(am_alam_regex_match_at("(?:x|a|b){1,2} ", t, len, 1), 1);
    assert_int_equal(am_alam_regex_match_at(" \\w+ é", t, len, 0), 0);
    assert_int_equal(am_alam_regex_match_at("\\bb\\b", t, len, len - 2), 1);
    assert_int_equal(am_alam_regex_match_at("x{,2}a", t, len, 1), 1);
    assert_int_equal(am_alam_regex_match_at("a{", "a{", 2, 0), 1);
    assert_int_equal(am_alam_regex_match_at("a(", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("a)", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("*a", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("a**", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("(?=a)", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("[a", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("a{3,1}", t, len, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("\\1", t, len, 0), AM_ERR_INVALID);
}

/* Python `re` rules that PCRE2 spells or reads differently: the
 * translation must keep Python's meaning. */
static void test_regex_python_rules(void **state)
{
    (void)state;
    /* \s is str.isspace(): U+001C..U+001F yes, U+180E (Cf) no; \S its complement */
    assert_int_equal(am_alam_regex_match_at("a\\sb",
                                            "a\x1c"
                                            "b",
                                            3, 0),
                     1);
    assert_int_equal(am_alam_regex_match_at("a\\sb",
                                            "a\xe1\xa0\x8e"
                                            "b",
                                            5, 0),
                     0);
    assert_int_equal(am_alam_regex_match_at("a\\Sb",
                                            "a\xe1\xa0\x8e"
                                            "b",
                                            5, 0),
                     1);
    assert_int_equal(am_alam_regex_match_at("a\\Sb",
                                            "a\x1f"
                                            "b",
                                            3, 0),
                     0);
    assert_int_equal(am_alam_regex_match_at("a[\\sx]b",
                                            "a\x1d"
                                            "b",
                                            3, 0),
                     1);
    assert_int_equal(am_alam_regex_match_at("a[^\\s]b",
                                            "a\x1d"
                                            "b",
                                            3, 0),
                     0);
    assert_int_equal(am_alam_regex_match_at("a[^\\s]b",
                                            "a\n"
                                            "b",
                                            3, 0),
                     0);
    assert_int_equal(am_alam_regex_match_at("a[^\\s]b", "aeb", 3, 0), 1);
    assert_int_equal(am_alam_regex_match_at("a[x\\S]b", "aeb", 3, 0), 1);
    assert_int_equal(am_alam_regex_match_at("a[x\\S]b", "a b", 3, 0), 0);
    assert_int_equal(am_alam_regex_match_at("a[^x\\S]b", "a b", 3, 0), 1);
    assert_int_equal(am_alam_regex_match_at("a[^x\\S]b", "axb", 3, 0), 0);
    /* \w: letters, digits, "_", not a combining mark (U+0301 is Mn) */
    assert_int_equal(am_alam_regex_match_at("\\w\\w", "\xc3\xa9\xd9\xa3", 4, 0), 1);
    assert_int_equal(am_alam_regex_match_at("e\\w", "e\xcc\x81", 3, 0), 0);
    assert_int_equal(am_alam_regex_match_at("\\d", "\xd9\xa3", 2, 0), 1); /* Arabic-Indic 3 */
    /* \Z is the very end only (PCRE2's \Z also matches before a final newline) */
    assert_int_equal(am_alam_regex_match_at("a\\Z", "a\n", 2, 0), 0);
    assert_int_equal(am_alam_regex_match_at("a$", "a\n", 2, 0), 1);
    assert_int_equal(am_alam_regex_match_at("a\\Z", "a", 1, 0), 1);
    /* ^ and \A only at the start of the whole text, not at pos */
    assert_int_equal(am_alam_regex_match_at("^b", "ab", 2, 1), 0);
    assert_int_equal(am_alam_regex_match_at("\\Ab", "ab", 2, 1), 0);
    /* \b looks at the character before pos */
    assert_int_equal(am_alam_regex_match_at("\\bb", "ab", 2, 1), 0);
    /* {,n} is {0,n} in Python (a literal in PCRE2 10.42) */
    assert_int_equal(am_alam_regex_match_at("ab{,2}c", "abbc", 4, 0), 1);
    assert_int_equal(am_alam_regex_match_at("ab{,2}c", "ab{,2}c", 7, 0), 0);
    /* POSIX classes and \Q are PCRE2 syntax: plain characters in Python */
    assert_int_equal(am_alam_regex_match_at("[[:a]]", ":]", 2, 0), 1);
    assert_int_equal(am_alam_regex_match_at("[[:alpha:]]", "x", 1, 0), 0);
    assert_int_equal(am_alam_regex_match_at("#x", "#x", 2, 0), 1);
    assert_int_equal(am_alam_regex_match_at("\\Q", "Q", 1, 0), AM_ERR_INVALID);
    assert_int_equal(am_alam_regex_match_at("\\p{L}", "x", 1, 0), AM_ERR_INVALID);
    /* escapes: \x \u \U and escaped punctuation; case is never folded */
    assert_int_equal(
        am_alam_regex_match_at("\\x41\\u00e9\\U0001F600", "A\xc3\xa9\xf0\x9f\x98\x80", 7, 0), 1);
    assert_int_equal(am_alam_regex_match_at("\\(\\.\\)", "(.)", 3, 0), 1);
    assert_int_equal(am_alam_regex_match_at("A", "a", 1, 0), 0);
    assert_int_equal(am_alam_regex_match_at("(?i)A", "a", 1, 0), AM_ERR_INVALID);
    /* . is anything but \n; positions are bytes at code point starts */
    assert_int_equal(am_alam_regex_match_at("a.b", "a\nb", 3, 0), 0);
    assert_int_equal(am_alam_regex_match_at("a.b",
                                            "a\xc3\xa9"
                                            "b",
                                            4, 0),
                     1);
    assert_int_equal(am_alam_regex_match_at("\xc3\xa9", "x\xc3\xa9", 3, 1), 1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A term that backtracks exponentially stops at the match limit: an error
 * for the exposed test, AM_ERR_INVALID from the scorer, in well under a
 * second either way (Python would run for hours). */
static void test_regex_limit(void **state)
{
    (void)state;
    char text[80];
    memset(text, 'a', sizeof text - 2);
    text[sizeof text - 2] = '!';
    text[sizeof text - 1] = '\0';
    assert_int_equal(am_alam_regex_match_at("(a|a)*!!", text, strlen(text), 0), AM_ERR_RANGE);
    assert_int_equal(am_alam_regex_match_at("(?:a|aa)*!", text, strlen(text), 0), 1);

    static const char ref[] = "<refset><doc docid=\"d\">\n<seg id=\"1\"> x <term id=\"1\" "
                              "type=\"x_tgt_original\" src=\"s\" tgt=\"(a|a)*b\"> x </term> "
                              "</seg>\n</doc></refset>";
    am_buf hyp;
    am_buf_init(&hyp);
    am_buf_appends(&hyp, "<tstset><doc docid=\"d\">\n<seg id=\"1\"> x ");
    for (int i = 0; i < 60; i++)
        am_buf_appendc(&hyp, 'a');
    am_buf_appends(&hyp, " b </seg>\n</doc></tstset>"); /* "b" is there: no shortcut */
    am_sgml_doc r, h;
    am_alam_result res;
    size_t w[] = {2};
    assert_int_equal(am_sgml_parse(ref, strlen(ref), &r, NULL), AM_OK);
    assert_int_equal(am_sgml_parse(hyp.data, hyp.len, &h, NULL), AM_OK);
    double t0 = now_s();
    assert_int_equal(am_alam_score(NULL, &r, &h, w, 1, &res), AM_ERR_INVALID);
    assert_true(now_s() - t0 < 5.0);
    am_alam_result_free(&res);
    am_sgml_free(&r);
    am_sgml_free(&h);
    am_buf_cleanup(&hyp);
}

static void parse(const char *s, am_sgml_doc *d)
{
    size_t line;
    int rc = am_sgml_parse(s, strlen(s), d, &line);
    if (rc != AM_OK)
        fail_msg("parse failed: %d at line %zu", rc, line);
}

/* Small documents exercising the script's quirks. */
static void test_quirks(void **state)
{
    (void)state;
    static const char ref[] =
        "<refset setid=\"t\" srclang=\"any\" trglang=\"fr\">\n<doc sysid=\"ref\" docid=\"d\">\n"
        /* two instances of one entry; one alternative in the hypothesis */
        "<seg id=\"1\"> une <term id=\"1\" type=\"src_original_and_tgt_original\" src=\"cough\" "
        "tgt=\"toux\"> toux </term> et une <term id=\"1\" type=\"src_original_and_tgt_original\" "
        "src=\"cough\" tgt=\"toux\"> toux </term> ! </seg>\n"
        /* the tag text is added as an alternative when not a substring of tgt */
        "<seg id=\"2\"> la <term id=\"2\" type=\"src_lemma_and_tgt_lemma\" src=\"x\" "
        "tgt=\"fièvre\"> fièvres </term> forte </seg>\n"
        /* each alternative claims its own position: "tension" and "tension artérielle" */
        "<seg id=\"3\"> <term id=\"3\" type=\"src_original_and_tgt_original\" src=\"bp\" "
        "tgt=\"tension|tension artérielle\"> tension </term> , <term id=\"3\" "
        "type=\"src_original_and_tgt_original\" src=\"bp\" tgt=\"tension|tension artérielle\"> "
        "tension </term> </seg>\n"
        "<seg id=\"4\"> rien </seg>\n"
        "</doc>\n</refset>\n";
    static const char hyp[] =
        "<tstset setid=\"t\" srclang=\"any\" trglang=\"fr\">\n<doc sysid=\"s\" docid=\"d\">\n"
        "<seg id=\"1\"> une toux et rien ! </seg>\n"
        "<seg id=\"2\"> la fièvres forte </seg>\n"
        "<seg id=\"3\"> tension artérielle , autre </seg>\n"
        "<seg id=\"4\"></seg>\n"
        "</doc>\n</tstset>\n";
    am_sgml_doc r, h;
    am_alam_result res;
    size_t w[] = {1, 2};
    parse(ref, &r);
    parse(hyp, &h);
    assert_int_equal(am_alam_score(NULL, &r, &h, w, 2, &res), AM_OK);
    assert_int_equal(res.nsegs, 4);
    assert_int_equal(res.segs[0].em_correct, 1);
    assert_int_equal(res.segs[0].em_terms, 2);
    assert_int_equal(res.segs[1].em_correct, 1);
    /* both alternatives start at the same position: the first claims it, the
     * second finds it taken, so the second instance fails */
    assert_int_equal(res.segs[2].em_correct, 1);
    assert_int_equal(res.segs[2].em_terms, 2);
    assert_int_equal(res.em_correct, 3);
    assert_int_equal(res.em_terms, 5);
    tu_assert_close(res.exact_match, 3.0 / 5.0, TOL);
    /* segment 1, window 1: instance 1's context {une, et}, instance 2's
     * {une, "!" skipped → nothing right} = {une}; the one occurrence has
     * {une, et}; best pair 1.0 */
    tu_assert_close(res.segs[0].wo[0], 1.0, TOL);
    /* segment 4 has no terms: 0; corpus divides by all 4 segments */
    tu_assert_close(res.segs[3].wo[0], 0.0, TOL);
    double sum = res.segs[0].wo[0] + res.segs[1].wo[0] + res.segs[2].wo[0] + res.segs[3].wo[0];
    tu_assert_close(res.window_overlap[0], sum / 4.0, TOL);
    /* empty hypothesis: TERm = 1 */
    assert_true(res.segs[3].term_ter_valid);
    tu_assert_close(res.segs[3].term_ter, 1.0, TOL);
    am_alam_result_free(&res);

    /* a hypothesis id missing from the reference */
    static const char hyp2[] = "<tstset><doc docid=\"d\"><seg id=\"9\"> a </seg></doc></tstset>";
    am_sgml_doc h2;
    parse(hyp2, &h2);
    assert_int_equal(am_alam_score(NULL, &r, &h2, w, 2, &res), AM_ERR_NOTFOUND);
    am_alam_result_free(&res);
    assert_int_equal(am_alam_score(NULL, &r, &h, w, 0, &res), AM_ERR_INVALID);
    am_alam_result_free(&res);
    /* the source must line up with the reference */
    assert_int_equal(am_alam_score(&h2, &r, &h, w, 2, &res), AM_ERR_INVALID);
    am_alam_result_free(&res);
    am_sgml_free(&h2);
    am_sgml_free(&r);
    am_sgml_free(&h);
}

/* Mutated reference/hypothesis pairs (term strings become odd regular
 * expressions, ids collide, tags break): an error or a result, never a crash
 * (run under ASan/valgrind). */
static void test_no_crash(void **state)
{
    (void)state;
    static const char ref[] = "<refset><doc docid=\"d\">\n<seg id=\"1\"> a <term id=\"1\" "
                              "type=\"x_tgt_original\" src=\"s\" "
                              "tgt=\"b c|d\"> b c </term> d , e <term id=\"2\" "
                              "type=\"x_tgt_original\" src=\"s\" tgt=\"e\"> e "
                              "</term> </seg>\n<seg id=\"2\"> f </seg>\n</doc></refset>";
    static const char hyp[] = "<tstset><doc docid=\"d\">\n<seg id=\"1\"> a b c d e , e b </seg>\n"
                              "<seg id=\"2\"> f g </seg>\n</doc></tstset>";
    static const char alphabet[] = "()[]{}*+?|.\\^$ ,ab12";
    size_t w[] = {1, 3};
    char rbuf[sizeof ref], hbuf[sizeof hyp];
    uint32_t seed = 7;
    size_t scored = 0;
    for (int iter = 0; iter < 5000; iter++) {
        memcpy(rbuf, ref, sizeof ref);
        memcpy(hbuf, hyp, sizeof hyp);
        for (int m = 0; m < 1 + iter % 3; m++) {
            seed = seed * 1103515245u + 12345u;
            int which = (seed >> 16) & 1;
            seed = seed * 1103515245u + 12345u;
            char *b = which ? hbuf : rbuf;
            size_t n = which ? sizeof hyp - 1 : sizeof ref - 1;
            size_t pos = (seed >> 8) % n;
            seed = seed * 1103515245u + 12345u;
            b[pos] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        am_sgml_doc r, h;
        am_alam_result res;
        int rr = am_sgml_parse(rbuf, strlen(rbuf), &r, NULL);
        int rh = am_sgml_parse(hbuf, strlen(hbuf), &h, NULL);
        if (rr == AM_OK && rh == AM_OK) {
            int rc = am_alam_score(NULL, &r, &h, w, 2, &res);
            assert_true(rc == AM_OK || rc == AM_ERR_INVALID || rc == AM_ERR_NOTFOUND);
            scored += rc == AM_OK;
            am_alam_result_free(&res);
        }
        am_sgml_free(&r);
        am_sgml_free(&h);
    }
    assert_true(scored > 0);
}

static void test_golden_tico19(void **state)
{
    (void)state;
    am_sgml_doc src, ref, hyp;
    am_alam_result res;
    size_t windows[] = {2, 3};
    json_t *g = tu_json("data/golden/tico19-enfr-dev.json");
    json_t *corpus = json_object_get(g, "alam2021_evaluate_term_wmt.py_no_lemmatizer");
    json_t *per = json_object_get(g, "per_segment");
    assert_non_null(corpus);
    assert_non_null(per);

    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    tu_sgml_load("data/tico19-enfr-dev/dev.en-fr.en.sgm", &src);
    tu_sgml_load("data/tico19-enfr-dev/dev.en-fr.fr.sgm", &ref);
    tu_sgml_load("data/tico19-enfr-dev/en-fr.dev.txt.truecased.sgm", &hyp);
    assert_int_equal(am_alam_score(&src, &ref, &hyp, windows, 2, &res), AM_OK);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    print_message("alam2021 on tico19-enfr-dev (parse + score): %.3f s wall, %.3f s CPU\n", secs,
                  cpu);

    assert_int_equal(res.nsegs, json_array_size(per));
    for (size_t i = 0; i < res.nsegs; i++) {
        json_t *e = json_array_get(per, i);
        const am_alam_seg *s = &res.segs[i];
        assert_string_equal(s->id, json_string_value(json_object_get(e, "id")));
        assert_int_equal(s->em_correct,
                         json_integer_value(json_object_get(e, "exact_match_correct_alam2021")));
        assert_int_equal(s->em_terms,
                         json_integer_value(json_object_get(e, "exact_match_terms_alam2021")));
        tu_assert_close(s->wo[0],
                        json_number_value(json_object_get(e, "window_overlap_2_alam2021")), TOL);
        tu_assert_close(s->wo[1],
                        json_number_value(json_object_get(e, "window_overlap_3_alam2021")), TOL);
        assert_true(s->term_ter_valid);
        tu_assert_close(s->term_ter, json_number_value(json_object_get(e, "term_ter_alam2021")),
                        TOL);
    }
    assert_int_equal(res.em_correct,
                     json_integer_value(json_object_get(corpus, "exact_match_correct")));
    assert_int_equal(res.em_terms,
                     json_integer_value(json_object_get(corpus, "exact_match_terms")));
    assert_true(res.exact_match_valid);
    tu_assert_close(res.window_overlap[0],
                    json_number_value(json_object_get(corpus, "window_overlap_2")), TOL);
    tu_assert_close(res.window_overlap[1],
                    json_number_value(json_object_get(corpus, "window_overlap_3")), TOL);
    assert_true(res.term_ter_valid);
    tu_assert_close(res.one_minus_term_ter,
                    json_number_value(json_object_get(corpus, "one_minus_term_ter")), TOL);
    /* the corpus values are the script's exactly (same summation order) */
    assert_true(res.one_minus_term_ter ==
                json_number_value(json_object_get(corpus, "one_minus_term_ter")));
    assert_true(res.window_overlap[0] ==
                json_number_value(json_object_get(corpus, "window_overlap_2")));
    assert_true(res.window_overlap[1] ==
                json_number_value(json_object_get(corpus, "window_overlap_3")));

    am_alam_result_free(&res);
    am_sgml_free(&src);
    am_sgml_free(&ref);
    am_sgml_free(&hyp);
    json_decref(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_term_ter_vectors),
        cmocka_unit_test(test_term_indices),
        cmocka_unit_test(test_regex),
        cmocka_unit_test(test_regex_python_rules),
        cmocka_unit_test(test_regex_limit),
        cmocka_unit_test(test_quirks),
        cmocka_unit_test(test_no_crash),
        cmocka_unit_test(test_golden_tico19),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
