/* test_tok.c — tokenizers against sacreBLEU 2.6.0 (data/golden/tokenizers.json). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <utf8proc.h>

#include "am.h"
#include "text.h"
#include "tok.h"

static const enum am_tok_kind kinds[] = {AM_TOK_13A, AM_TOK_INTL, AM_TOK_ZH, AM_TOK_CHAR,
                                         AM_TOK_NONE};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static int toks_equal(const am_toks *a, const am_toks *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return 0;
    return 1;
}

/* Every case × every tokenizer: the token lists (both strings split on ASCII
 * whitespace, as the golden file's "about" says) must be equal. Also counts
 * byte-identical strings. */
static void test_golden_tokenizers(void **state)
{
    (void)state;
    json_t *root = tu_json("data/golden/tokenizers.json");
    json_t *cases = json_object_get(root, "cases");
    assert_true(json_is_array(cases));
    size_t ncases = json_array_size(cases);
    assert_true(ncases >= 189);

    size_t pass[NKINDS] = {0}, exact[NKINDS] = {0}, total = 0, failed = 0;
    am_buf out;
    am_toks got, want;
    am_buf_init(&out);
    am_toks_init(&got);
    am_toks_init(&want);
    for (size_t c = 0; c < ncases; c++) {
        json_t *cs = json_array_get(cases, c);
        const char *text = json_string_value(json_object_get(cs, "text"));
        assert_non_null(text);
        for (size_t k = 0; k < NKINDS; k++) {
            const char *name = am_tok_name(kinds[k]);
            const char *gold = json_string_value(json_object_get(cs, name));
            assert_non_null(gold);
            assert_int_equal(am_tok_tokenize(kinds[k], text, &out), AM_OK);
            am_toks_reset(&got);
            am_toks_reset(&want);
            am_toks_split_ascii(&got, am_buf_str(&out));
            am_toks_split_ascii(&want, gold);
            total++;
            if (toks_equal(&got, &want)) {
                pass[k]++;
            } else {
                failed++;
                print_message("FAIL case %zu tok %s\n  text: %s\n  want: %s\n  got:  %s\n", c, name,
                              text, gold, am_buf_str(&out));
            }
            if (strcmp(am_buf_str(&out), gold) == 0)
                exact[k]++;
        }
    }
    print_message("tokenizers.json: %zu cases\n", ncases);
    for (size_t k = 0; k < NKINDS; k++)
        print_message("  %-4s %zu/%zu token lists equal, %zu/%zu strings byte-identical\n",
                      am_tok_name(kinds[k]), pass[k], ncases, exact[k], ncases);
    print_message("  total %zu/%zu\n", total - failed, total);
    am_buf_cleanup(&out);
    am_toks_cleanup(&got);
    am_toks_cleanup(&want);
    json_decref(root);
    assert_int_equal(failed, 0);
    /* sacreBLEU's strings themselves are reproduced exactly. */
    for (size_t k = 0; k < NKINDS; k++)
        assert_int_equal(exact[k], ncases);
}

/* The intl classes of every ASCII character agree with utf8proc: a symbol
 * between digits is split off ("1 $ 1"), punctuation between digits is not
 * ("1,1"), digits and letters never are. */
static void test_intl_ascii_classes(void **state)
{
    (void)state;
    am_buf out;
    am_buf_init(&out);
    for (int c = 0x21; c < 0x7F; c++) {
        char in[4] = {'1', (char)c, '1', 0};
        char want[8];
        utf8proc_category_t cat = utf8proc_category(c);
        if (cat >= UTF8PROC_CATEGORY_SM && cat <= UTF8PROC_CATEGORY_SO)
            snprintf(want, sizeof want, "1 %c 1", c);
        else
            snprintf(want, sizeof want, "1%c1", c);
        assert_int_equal(am_tok_tokenize(AM_TOK_INTL, in, &out), AM_OK);
        assert_string_equal(am_buf_str(&out), want);
        /* between letters, P and S are both split off */
        char in2[4] = {'a', (char)c, 'a', 0};
        assert_int_equal(am_tok_tokenize(AM_TOK_INTL, in2, &out), AM_OK);
        if (cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_SO)
            snprintf(want, sizeof want, "a %c a", c);
        else
            snprintf(want, sizeof want, "a%ca", c);
        assert_string_equal(am_buf_str(&out), want);
    }
    am_buf_cleanup(&out);
}

static void test_names(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        enum am_tok_kind got = AM_TOK_NONE;
        assert_int_equal(am_tok_parse(am_tok_name(kinds[k]), &got), AM_OK);
        assert_int_equal(got, kinds[k]);
    }
    enum am_tok_kind x = AM_TOK_13A;
    assert_int_equal(am_tok_parse("13A ", &x), AM_ERR_INVALID);
    assert_int_equal(am_tok_parse("", &x), AM_ERR_INVALID);
    assert_int_equal(am_tok_parse(NULL, &x), AM_ERR_INVALID);
    assert_string_equal(am_tok_name(AM_TOK_13A), "13a");
    assert_string_equal(am_tok_name(AM_TOK_INTL), "intl");

    assert_int_equal(am_tok_default_for_lang(NULL), AM_TOK_INTL);
    assert_int_equal(am_tok_default_for_lang("fr"), AM_TOK_INTL);
    assert_int_equal(am_tok_default_for_lang("zh"), AM_TOK_ZH);
    assert_int_equal(am_tok_default_for_lang("zh-CN"), AM_TOK_ZH);
    assert_int_equal(am_tok_default_for_lang("ZH_tw"), AM_TOK_ZH);
    assert_int_equal(am_tok_default_for_lang("ja"), AM_TOK_ZH);
    assert_int_equal(am_tok_default_for_lang("th"), AM_TOK_CHAR);
    assert_int_equal(am_tok_default_for_lang("lo"), AM_TOK_CHAR);
    assert_int_equal(am_tok_default_for_lang("km"), AM_TOK_CHAR);
    assert_int_equal(am_tok_default_for_lang("my"), AM_TOK_CHAR);
    assert_int_equal(am_tok_default_for_lang("zhx"), AM_TOK_INTL);
    assert_int_equal(am_tok_default_for_lang("jav"), AM_TOK_INTL);
    assert_int_equal(am_tok_default_for_lang(""), AM_TOK_INTL);
}

/* Hand-checked corner cases of re.sub's non-overlapping scanning. */
static void test_corner_cases(void **state)
{
    (void)state;
    static const struct {
        enum am_tok_kind k;
        const char *in, *want;
    } t[] = {
        {AM_TOK_13A, "", ""},
        {AM_TOK_INTL, "", ""},
        {AM_TOK_ZH, "", ""},
        {AM_TOK_CHAR, "", ""},
        {AM_TOK_NONE, "", ""},
        {AM_TOK_13A, " \t ", ""},
        {AM_TOK_13A, "a...", "a . . ."},
        {AM_TOK_13A, "1.5-2", "1.5 - 2"},
        {AM_TOK_13A, "x<skipped>y", "xy"},
        {AM_TOK_13A, "co-\noperate\nnow", "cooperate now"},
        {AM_TOK_13A, "&amp;lt;", "<"},
        {AM_TOK_13A,
         "a\xc2\xa0"
         "b",
         "a b"}, /* NBSP is Python whitespace */
        {AM_TOK_INTL, "2019.", "2019."},
        {AM_TOK_INTL,
         "a\xe2\x82\xac"
         "b",
         "a \xe2\x82\xac b"}, /* € is Sc */
        {AM_TOK_ZH, " \xe4\xb8\xad\xe6\x96\x87 ", "\xe4\xb8\xad \xe6\x96\x87"},
        {AM_TOK_CHAR, "ab c", "a b   c"},
        {AM_TOK_CHAR, "\xc3\xa9t\xc3\xa9", "\xc3\xa9 t \xc3\xa9"},
        {AM_TOK_NONE, " a  b ", " a  b "},
    };
    am_buf out;
    am_buf_init(&out);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        assert_int_equal(am_tok_tokenize(t[i].k, t[i].in, &out), AM_OK);
        assert_string_equal(am_buf_str(&out), t[i].want);
    }
    am_buf_cleanup(&out);
}

/* Lines longer than the stack scratch (heap path): a repeated unit
 * tokenizes to the repeated tokenization of the unit. */
static void test_long_line(void **state)
{
    (void)state;
    const char *unit = "mot, \xe4\xb8\xad(x) ";
    enum am_tok_kind ks[] = {AM_TOK_13A, AM_TOK_INTL, AM_TOK_ZH};
    am_buf in, one, want, out;
    am_buf_init(&in);
    am_buf_init(&one);
    am_buf_init(&want);
    am_buf_init(&out);
    for (int r = 0; r < 2000; r++)
        am_buf_appends(&in, unit);
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(am_tok_tokenize(ks[k], unit, &one), AM_OK);
        am_buf_reset(&want);
        for (int r = 0; r < 2000; r++) {
            if (r)
                am_buf_appendc(&want, ' ');
            am_buf_appends(&want, am_buf_str(&one));
        }
        assert_int_equal(am_tok_tokenize(ks[k], am_buf_str(&in), &out), AM_OK);
        assert_string_equal(am_buf_str(&out), am_buf_str(&want));
    }
    am_toks toks;
    am_toks_init(&toks);
    assert_int_equal(am_tok_split(AM_TOK_INTL, am_buf_str(&in), &toks), AM_OK);
    assert_int_equal(toks.n, 2000 * 6);
    assert_string_equal(toks.v[1], ",");
    am_toks_cleanup(&toks);
    am_buf_cleanup(&in);
    am_buf_cleanup(&one);
    am_buf_cleanup(&want);
    am_buf_cleanup(&out);
}

/* Rough speed of intl on the TICO-19 reference segments (tags stripped;
 * printed, not asserted beyond producing tokens). */
static void test_intl_speed(void **state)
{
    (void)state;
    char *txt = tu_read("data/tico19-enfr-dev/dev.en-fr.fr.sgm", NULL);
    am_toks lines;
    am_buf seg;
    am_toks_init(&lines);
    am_buf_init(&seg);
    for (char *p = txt; *p;) {
        char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0) {
            /* segment text: the line with its SGML tags removed */
            char *line = am_xstrndup(p, n);
            am_text_strip_tags(line, &seg);
            if (seg.len > 0)
                am_toks_push(&lines, seg.data, seg.len);
            free(line);
        }
        p += n + (e ? 1 : 0);
    }
    am_buf out;
    am_buf_init(&out);
    size_t ntok = 0, nseg = 0;
    clock_t t0 = clock();
    int reps = 0;
    do {
        for (size_t i = 0; i < lines.n; i++) {
            am_tok_tokenize(AM_TOK_INTL, lines.v[i], &out);
            if (out.len == 0)
                continue;
            for (const char *q = out.data; *q; q++)
                ntok += (*q == ' ');
            ntok++;
            nseg++;
        }
        reps++;
    } while (clock() - t0 < CLOCKS_PER_SEC / 4 && reps < 1000);
    double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
    print_message("intl: %zu segments, %zu tokens in %.3f s: %.0f segments/s, %.0f tokens/s\n",
                  nseg, ntok, sec, nseg / sec, ntok / sec);
    assert_true(ntok > nseg);
    am_buf_cleanup(&out);
    am_toks_cleanup(&lines);
    am_buf_cleanup(&seg);
    free(txt);
}

/* Every Python whitespace code point separates tokens, and the code points
 * that share their lead bytes (C2, E1, E2, E3) do not: the byte fast paths
 * of the whitespace collapse (tok.c) and of am_toks_split_py (am.c) against
 * Python's ' '.join(s.split()). */
static void test_python_whitespace(void **state)
{
    (void)state;
    const char *s = "a\xc2\x85"
                    "b\xc2\xa0"
                    "c\xe1\x9a\x80"
                    "d\xe2\x80\x80"
                    "e\xe2\x80\x8a"
                    "f\xe2\x80\xa8"
                    "g\xe2\x80\xa9"
                    "h\xe2\x80\xaf"
                    "i\xe2\x81\x9f"
                    "j\xe3\x80\x80"
                    "k\x1cl\x1fm\tn\x0bo x\xc2\xa9y z\xe2\x80\x8bw u\xe3\x80\x81v q\xe1\x9a\x81r "
                    "\xe2\x80\xb0  ";
    const char *want = "a b c d e f g h i j k l m n o x\xc2\xa9y z\xe2\x80\x8bw u\xe3\x80\x81v "
                       "q\xe1\x9a\x81r \xe2\x80\xb0";
    am_buf b;
    am_buf_init(&b);
    assert_int_equal(am_tok_tokenize(AM_TOK_13A, s, &b), AM_OK);
    assert_string_equal(am_buf_str(&b), want);
    am_toks t;
    am_toks_init(&t);
    am_toks_split_py(&t, s);
    assert_int_equal(t.n, 20);
    assert_string_equal(t.v[0], "a");
    assert_string_equal(t.v[14], "o");
    assert_string_equal(t.v[15], "x\xc2\xa9y");
    assert_string_equal(t.v[16], "z\xe2\x80\x8bw");
    assert_string_equal(t.v[19], "\xe2\x80\xb0");
    assert_int_equal(am_toks_count_py(s), 20);
    /* am_py_token_end from every code point against decoding each one */
    size_t len = strlen(s), ends = 0;
    for (size_t i = 0; i < len;) {
        int32_t c;
        size_t want_end = i;
        while (want_end < len) {
            size_t n = am_utf8_decode(s + want_end, len - want_end, &c);
            if (am_py_isspace(c))
                break;
            want_end += n;
        }
        assert_int_equal(am_py_token_end(s, len, i), want_end);
        ends += want_end > i;
        i += am_utf8_decode(s + i, len - i, &c);
    }
    assert_true(ends > 20);
    am_toks_cleanup(&t);
    am_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tokenizers),
        cmocka_unit_test(test_intl_ascii_classes),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_corner_cases),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_python_whitespace),
        cmocka_unit_test(test_intl_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
