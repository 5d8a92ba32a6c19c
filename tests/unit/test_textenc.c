/* test_textenc.c — encodings of input files (core/textenc.c): XML in
 * UTF-16 LE/BE (BOM or not), windows-1252 and ISO-8859-1 decoded to the
 * same text as its UTF-8 twin by the XLIFF, TMX and TBX readers; bytes not
 * valid in the declared encoding and unknown encodings refused with a
 * message naming them; the entity hardening applied to the decoded text;
 * the diagnosis of non-UTF-8 plain text. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "glossary.h"
#include "textenc.h"
#include "xliff.h"

/* Latin-1 text (one byte per character, as in the string literal) widened
 * to UTF-16 with an optional BOM; caller frees. */
static char *widen(const char *s, size_t n, int be, int bom, size_t *out_len)
{
    char *w = malloc(2 * n + 2);
    size_t k = 0;
    if (bom) {
        w[k++] = be ? '\xFE' : '\xFF';
        w[k++] = be ? '\xFF' : '\xFE';
    }
    for (size_t i = 0; i < n; i++) {
        w[k++] = be ? 0 : s[i];
        w[k++] = be ? s[i] : 0;
    }
    *out_len = k;
    return w;
}

/* The XLIFF of test_xliff_encodings, the declaration's encoding given. */
static char *xliff_in(const char *enc, const char *cafe)
{
    char *x = NULL;
    size_t n;
    FILE *f = open_memstream(&x, &n);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"%s\"?>\n<xliff version=\"1.2\">\n"
            "<file source-language=\"en\" target-language=\"fr\"><body>\n"
            "<trans-unit id=\"1\"><source>coffee</source><target state=\"final\">un %s "
            "noir</target>\n<alt-trans origin=\"mt\"><target>le %s</target></alt-trans>"
            "</trans-unit></body></file></xliff>\n",
            enc, cafe, cafe);
    fclose(f);
    return x;
}

static void check_cafe(const char *buf, size_t len)
{
    am_xliff_doc d;
    am_xliff_report rep;
    int rc = am_xliff_parse(buf, len, &d, &rep);
    if (rc)
        fprintf(stderr, "parse: %s\n", rep.msg);
    assert_int_equal(rc, AM_OK);
    assert_int_equal(d.nsegs, 1);
    assert_string_equal(d.segs[0].target, "un caf\xC3\xA9 noir");
    assert_string_equal(d.segs[0].hyp[0], "le caf\xC3\xA9");
    assert_string_equal(d.target_lang, "fr");
    am_xliff_free(&d);
}

static void test_xliff_encodings(void **state)
{
    (void)state;
    char *u8 = xliff_in("UTF-8", "caf\xC3\xA9");
    check_cafe(u8, strlen(u8));
    char *cp = xliff_in("windows-1252", "caf\xE9");
    check_cafe(cp, strlen(cp));
    char *l1 = xliff_in("ISO-8859-1", "caf\xE9");
    check_cafe(l1, strlen(l1));
    char *u16 = xliff_in("UTF-16", "caf\xE9"); /* latin-1 bytes, widened below */
    for (int be = 0; be < 2; be++)
        for (int bom = 0; bom < 2; bom++) {
            size_t n;
            char *w = widen(u16, strlen(u16), be, bom, &n);
            check_cafe(w, n);
            free(w);
        }
    /* 0x81 is not a windows-1252 character: refused, naming the byte,
     * its line and the encoding */
    char *bad = xliff_in("windows-1252", "caf\x81");
    am_xliff_doc d;
    am_xliff_report rep;
    assert_int_equal(am_xliff_parse(bad, strlen(bad), &d, &rep), AM_ERR_UTF8);
    assert_non_null(strstr(rep.msg, "0x81"));
    assert_non_null(strstr(rep.msg, "windows-1252"));
    assert_non_null(strstr(rep.msg, "line 4"));
    /* an encoding nobody knows */
    char *unk = xliff_in("x-no-such-charset", "cafe");
    assert_int_equal(am_xliff_parse(unk, strlen(unk), &d, &rep), AM_ERR_INVALID);
    assert_non_null(strstr(rep.msg, "x-no-such-charset"));
    /* undeclared latin-1 bytes: read as UTF-8, refused with a hint */
    char *und = xliff_in("UTF-8", "caf\xE9");
    assert_int_equal(am_xliff_parse(und, strlen(und), &d, &rep), AM_ERR_UTF8);
    assert_non_null(strstr(rep.msg, "windows-1252"));
    free(u8);
    free(cp);
    free(l1);
    free(u16);
    free(bad);
    free(unk);
    free(und);
}

/* The entity rules hold on the decoded text: a UTF-16 billion-laughs
 * document is refused as its UTF-8 twin is. */
static void test_hardening_after_decoding(void **state)
{
    (void)state;
    const char *x = "<?xml version='1.0' encoding='UTF-16'?><!DOCTYPE x [<!ENTITY a 'aa'>]>"
                    "<xliff version='1.2'><file><body><trans-unit id='1'><source>&a;</source>"
                    "</trans-unit></body></file></xliff>";
    size_t n;
    char *w = widen(x, strlen(x), 0, 1, &n);
    am_xliff_doc d;
    am_xliff_report rep;
    assert_int_equal(am_xliff_parse(w, n, &d, &rep), AM_ERR_PARSE);
    assert_non_null(strstr(rep.msg, "entity"));
    free(w);
}

static void test_tmx_tbx_encodings(void **state)
{
    (void)state;
    const char *tmx = "<?xml version='1.0' encoding='UTF-16'?><tmx version='1.4'>"
                      "<header srclang='en'/><body><tu><tuv xml:lang='en'><seg>coffee</seg></tuv>"
                      "<tuv xml:lang='fr'><seg>caf\xE9 caf\xE9</seg></tuv></tu></body></tmx>";
    size_t n;
    char *w = widen(tmx, strlen(tmx), 1, 1, &n);
    am_recall_config rcfg;
    am_recall_config_init(&rcfg);
    am_vocab *v = am_vocab_new();
    am_xliff_report rep;
    size_t nsegs = 0;
    int rc = am_xliff_tmx_counts(w, n, "fr", &rcfg, v, NULL, &nsegs, &rep);
    if (rc)
        fprintf(stderr, "tmx: %s\n", rep.msg);
    assert_int_equal(rc, AM_OK);
    assert_int_equal(nsegs, 1);
    int64_t cnt = 0;
    assert_true(am_vocab_get(v, "caf\xC3\xA9", &cnt));
    assert_int_equal(cnt, 2);
    am_vocab_free(v);
    free(w);

    const char *tbx = "<?xml version='1.0' encoding='windows-1252'?><martif type='TBX'><text>"
                      "<body><termEntry><langSet xml:lang='en'><tig><term>coffee</term></tig>"
                      "</langSet><langSet xml:lang='fr'><tig><term>caf\xE9</term></tig></langSet>"
                      "</termEntry></body></text></martif>";
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report grep;
    rc = am_gloss_parse_langs(tbx, strlen(tbx), AM_GLOSS_AUTO, "en", "fr", NULL, &g, &grep);
    if (rc)
        fprintf(stderr, "tbx: %s\n", grep.msg);
    assert_int_equal(rc, AM_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.v[0].targets[0], "caf\xC3\xA9");
    am_gloss_cleanup(&g);
    /* the same TBX in UTF-16 (no UTF-8 bytes at all): found by AUTO */
    w = widen(tbx, strlen(tbx), 0, 1, &n);
    /* its declaration still says windows-1252; the BOM wins (XML 1.0 F.1) */
    am_gloss_init(&g);
    rc = am_gloss_parse_langs(w, n, AM_GLOSS_AUTO, NULL, NULL, NULL, &g, &grep);
    if (rc)
        fprintf(stderr, "tbx16: %s\n", grep.msg);
    assert_int_equal(rc, AM_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.v[0].targets[0], "caf\xC3\xA9");
    am_gloss_cleanup(&g);
    free(w);
}

static void test_diagnose(void **state)
{
    (void)state;
    am_buf m;
    am_buf_init(&m);
    am_textenc_diagnose("caf\xE9 \x93ok\x94\n", 11, "r.txt", &m);
    assert_non_null(strstr(am_buf_str(&m), "windows-1252"));
    assert_non_null(strstr(am_buf_str(&m), "iconv -f WINDOWS-1252 -t UTF-8 r.txt"));
    am_buf_reset(&m);
    am_textenc_diagnose("caf\xE9\n", 5, NULL, &m);
    assert_non_null(strstr(am_buf_str(&m), "ISO-8859-1"));
    am_buf_reset(&m);
    am_textenc_diagnose("\xFF\xFE"
                        "a\0b\0",
                        6, "x", &m);
    assert_non_null(strstr(am_buf_str(&m), "UTF-16LE (byte order mark)"));
    am_buf_reset(&m);
    am_textenc_diagnose("\0a\0b\0c\0d", 8, "x", &m);
    assert_non_null(strstr(am_buf_str(&m), "UTF-16BE"));
    am_buf_cleanup(&m);
    assert_true(am_textenc_looks_xml("\xFF\xFE \0<\0", 6));
    assert_true(am_textenc_looks_xml("\xEF\xBB\xBF <x/>", 8));
    assert_false(am_textenc_looks_xml("\xFF\xFE"
                                      "a\0",
                                      4));
    assert_false(am_textenc_looks_xml("1 word\n", 7));
}

static int teardown_libxml(void **state)
{
    (void)state;
    xmlCleanupParser();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xliff_encodings),
        cmocka_unit_test(test_hardening_after_decoding),
        cmocka_unit_test(test_tmx_tbx_encodings),
        cmocka_unit_test(test_diagnose),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_libxml);
}
