/*
 * test_sgml.c — the WMT21 SGML reader: the three TICO-19 dev files, entity
 * and tag handling, and malformed inputs (errors with a line, never a crash).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "sgml.h"

static void test_tico19_files(void **state)
{
    (void)state;
    am_sgml_doc src, ref, hyp;
    tu_sgml_load("data/tico19-enfr-dev/dev.en-fr.en.sgm", &src);
    tu_sgml_load("data/tico19-enfr-dev/dev.en-fr.fr.sgm", &ref);
    tu_sgml_load("data/tico19-enfr-dev/en-fr.dev.txt.truecased.sgm", &hyp);
    json_t *g = tu_json("data/golden/tico19-enfr-dev.json");
    size_t nseg = (size_t)json_integer_value(json_object_get(g, "segments"));
    json_t *per = json_object_get(g, "per_segment");

    assert_int_equal(src.nsegs, nseg);
    assert_int_equal(ref.nsegs, nseg);
    assert_int_equal(hyp.nsegs, nseg);
    assert_int_equal(src.kind, AM_SGML_SRCSET);
    assert_int_equal(ref.kind, AM_SGML_REFSET);
    assert_int_equal(hyp.kind, AM_SGML_TSTSET);
    assert_int_equal(ref.ndocs, 13);
    assert_int_equal(ref.nterms, 901);
    assert_string_equal(ref.trglang, "fr");
    assert_string_equal(ref.docs[0].docid, "CMU_1");
    assert_string_equal(hyp.docs[0].sysid, "Fairseq");
    size_t total = 0, nterms = 0;
    for (size_t i = 0; i < ref.ndocs; i++)
        total += ref.docs[i].nsegs;
    assert_int_equal(total, nseg);
    for (size_t i = 0; i < nseg; i++) {
        /* golden segments are in reference order; all three files agree */
        const char *id = json_string_value(json_object_get(json_array_get(per, i), "id"));
        assert_string_equal(ref.segs[i].id, id);
        assert_string_equal(src.segs[i].id, id);
        assert_string_equal(hyp.segs[i].id, id);
        nterms += ref.segs[i].nterms;
        for (size_t t = 0; t < ref.segs[i].nterms; t++) {
            const am_sgml_term *tm = &ref.segs[i].terms[t];
            assert_non_null(tm->id);
            assert_non_null(tm->type);
            assert_non_null(tm->src);
            assert_non_null(tm->tgt);
            assert_true(tm->tok_count > 0);
            /* the tag's tokens are the text's tokens at tok_start */
            am_toks a, b;
            am_toks_init(&a);
            am_toks_init(&b);
            am_toks_split_py(&a, ref.segs[i].text);
            am_toks_split_py(&b, tm->text);
            assert_true(tm->tok_start + tm->tok_count <= a.n);
            for (size_t k = 0; k < b.n; k++)
                assert_string_equal(a.v[tm->tok_start + k], b.v[k]);
            am_toks_cleanup(&a);
            am_toks_cleanup(&b);
        }
    }
    assert_int_equal(nterms, 901);

    /* segment 7 of CMU_1 */
    const am_sgml_seg *s = &ref.segs[1];
    assert_string_equal(s->id, "7");
    assert_string_equal(s->text, "et votre nez coule-t-il ?");
    assert_int_equal(s->nterms, 1);
    assert_string_equal(s->terms[0].tgt, "nez coule-t-il|nez qui coule");
    assert_string_equal(s->terms[0].src, "runny nose");
    assert_string_equal(s->terms[0].type, "src_original_and_tgt_original");
    assert_string_equal(s->terms[0].text, " nez coule-t-il ");
    assert_int_equal(s->terms[0].tok_start, 2);
    assert_int_equal(s->terms[0].tok_count, 2);
    assert_non_null(strstr(s->raw, "<term id=\"330\""));
    assert_int_equal(s->line, 5);
    /* a bare '<' in text ("aged < 19") is text, as for an HTML parser */
    size_t k = am_sgml_find_seg(&src, "819");
    assert_true(k != (size_t)-1);
    assert_non_null(strstr(src.segs[k].text, "aged < 19 years"));
    /* &amp; in the hypothesis is decoded */
    int amp = 0;
    for (size_t i = 0; i < hyp.nsegs; i++)
        amp += strchr(hyp.segs[i].text, '&') != NULL;
    assert_true(amp > 0);
    for (size_t i = 0; i < hyp.nsegs; i++)
        assert_null(strstr(hyp.segs[i].text, "&amp;"));
    assert_int_equal(am_sgml_find_seg(&ref, "no-such-id"), (size_t)-1);

    json_decref(g);
    am_sgml_free(&src);
    am_sgml_free(&ref);
    am_sgml_free(&hyp);
}

static void test_entities_and_nesting(void **state)
{
    (void)state;
    static const char doc[] =
        "<?xml version=\"1.0\"?>\n<!-- c -->\n<refset setid='x'>\n<doc docid=\"a&amp;b\">\n<p>\n"
        "<seg id=\"1\">  a &lt;b&gt; &#233;&#x20AC; &unknown; \xc2\xa0 <term id=\"t\" type=\"y\" "
        "src=\"s\" tgt=\"x&quot;y|z\"> dry <term id=\"u\" type=\"y\" src=\"c\" "
        "tgt=\"c\">cough</term> "
        "</term>   </seg>\n</p>\n</doc>\n</refset>\n";
    am_sgml_doc d;
    size_t line = 99;
    assert_int_equal(am_sgml_parse(doc, strlen(doc), &d, &line), AM_OK);
    assert_int_equal(line, 0);
    assert_int_equal(d.nsegs, 1);
    assert_string_equal(d.setid, "x");
    assert_string_equal(d.docs[0].docid, "a&b");
    assert_null(d.docs[0].sysid);
    const am_sgml_seg *s = &d.segs[0];
    assert_string_equal(s->text, "a <b> \xc3\xa9\xe2\x82\xac &unknown; dry cough");
    assert_int_equal(s->nterms, 2);
    assert_string_equal(s->terms[0].tgt, "x\"y|z");
    assert_string_equal(s->terms[0].text, " dry cough ");
    assert_int_equal(s->terms[0].tok_start, 4);
    assert_int_equal(s->terms[0].tok_count, 2);
    assert_string_equal(s->terms[1].text, "cough");
    assert_int_equal(s->terms[1].tok_start, 5);
    am_sgml_free(&d);
    am_sgml_free(&d); /* idempotent */
}

static void expect_error(const char *doc, size_t len, int err, size_t want_line)
{
    am_sgml_doc d;
    size_t line = 0;
    int rc = am_sgml_parse(doc, len, &d, &line);
    if (rc != err)
        fail_msg("expected %d, got %d for <%.*s>", err, rc, (int)len, doc);
    if (want_line && line != want_line)
        fail_msg("expected line %zu, got %zu for <%.*s>", want_line, line, (int)len, doc);
    assert_int_equal(d.nsegs, 0);
    am_sgml_free(&d);
}

#define HEAD "<refset>\n<doc docid=\"d\">\n"
#define TAIL "</doc>\n</refset>\n"

/* Segments are found by (document, segment id): two documents may both
 * have a segment "1" (WMT files do), and a lookup by id alone gives the
 * first. Many segments: every lookup by hash (issue 15 item 4). */
static void test_find_by_document_and_id(void **state)
{
    (void)state;
    const char *x = "<refset setid=\"t\" srclang=\"en\" trglang=\"fr\">\n"
                    "<doc docid=\"A\" sysid=\"ref\"><seg id=\"1\">a one</seg>"
                    "<seg id=\"2\">a two</seg></doc>\n"
                    "<doc docid=\"B\" sysid=\"ref\"><seg id=\"2\">b two</seg>"
                    "<seg id=\"1\">b one</seg></doc>\n"
                    "<doc sysid=\"ref\"><seg id=\"1\">none one</seg></doc>\n</refset>\n";
    am_sgml_doc d;
    assert_int_equal(am_sgml_parse(x, strlen(x), &d, NULL), AM_OK);
    assert_int_equal(am_sgml_find_seg(&d, "1"), 0);
    assert_int_equal(am_sgml_find_seg(&d, "2"), 1);
    assert_int_equal(am_sgml_find_doc_seg(&d, "A", "1"), 0);
    assert_int_equal(am_sgml_find_doc_seg(&d, "B", "1"), 3);
    assert_int_equal(am_sgml_find_doc_seg(&d, "B", "2"), 2);
    assert_int_equal(am_sgml_find_doc_seg(&d, NULL, "1"), 4);
    assert_int_equal(am_sgml_find_doc_seg(&d, "C", "1"), (size_t)-1);
    assert_int_equal(am_sgml_find_doc_seg(&d, "A", "3"), (size_t)-1);
    assert_int_equal(am_sgml_find_seg(&d, "3"), (size_t)-1);
    am_sgml_free(&d);

    /* 40 documents of 500 segments with the same ids */
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "<tstset setid=\"t\" srclang=\"en\" trglang=\"fr\">\n");
    for (int doc = 0; doc < 40; doc++) {
        am_buf_printf(&b, "<doc docid=\"d%d\" sysid=\"s\">\n", doc);
        for (int i = 0; i < 500; i++)
            am_buf_printf(&b, "<seg id=\"%d\">w%d</seg>\n", 499 - i, doc);
        am_buf_appends(&b, "</doc>\n");
    }
    am_buf_appends(&b, "</tstset>\n");
    assert_int_equal(am_sgml_parse(b.data, b.len, &d, NULL), AM_OK);
    assert_int_equal(d.nsegs, 20000);
    for (int doc = 0; doc < 40; doc++) {
        char docid[16], id[16], text[16];
        snprintf(docid, sizeof docid, "d%d", doc);
        snprintf(text, sizeof text, "w%d", doc);
        for (int i = 0; i < 500; i++) {
            snprintf(id, sizeof id, "%d", i);
            size_t k = am_sgml_find_doc_seg(&d, docid, id);
            assert_true(k == (size_t)(doc * 500 + 499 - i));
            assert_string_equal(d.segs[k].text, text);
        }
    }
    assert_int_equal(am_sgml_find_seg(&d, "0"), 499);
    am_sgml_free(&d);
    am_buf_cleanup(&b);
}

static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        size_t line;
    } bad[] = {
        {"", 1},
        {"   \n  ", 2},
        {"garbage", 1},
        {"<refset>", 1}, /* unterminated set */
        {HEAD "<seg id=\"1\"> a </seg>\n</doc>\n", 5}, /* no </refset> */
        {HEAD "<seg id=\"1\"> a </seg\n" TAIL, 3}, /* unterminated tag */
        {HEAD "<seg id=\"1> a </seg>\n" TAIL, 3}, /* unterminated value */
        {HEAD "<seg> a </seg>\n" TAIL, 3}, /* missing id */
        {HEAD "<seg idx=\"1\"> a </seg>\n" TAIL, 3}, /* missing id */
        {HEAD "<seg id=\"1\"> a \n" TAIL, 4}, /* no </seg>: </doc> inside it */
        {HEAD "<seg id=\"1\"> a \n", 3}, /* no </seg> at end of input */
        {HEAD "<seg id=\"1\"> <term tgt=\"a\"> a </seg>\n" TAIL, 3}, /* unclosed term */
        {HEAD "<seg id=\"1\"> a </term> </seg>\n" TAIL, 3}, /* stray </term> */
        {HEAD "<seg id=\"1\"> <b>a</b> </seg>\n" TAIL, 3}, /* unknown tag */
        {HEAD "<seg id=\"1\"> &#0; </seg>\n" TAIL, 3}, /* bad reference */
        {HEAD "<seg id=\"1\"> &#xD800; </seg>\n" TAIL, 3},
        {HEAD "<seg id=\"1\"> &#99999999; </seg>\n" TAIL, 3},
        {HEAD "<seg id=\"1&#0;\"> a </seg>\n" TAIL, 3},
        {HEAD "text\n" TAIL, 3}, /* text outside seg */
        {"<refset>\n<seg id=\"1\"> a </seg>\n</refset>\n", 2}, /* seg outside doc */
        {"<doc>\n</doc>\n", 1}, /* doc outside set */
        {HEAD TAIL "<refset>\n</refset>\n", 5}, /* second set */
        {"<refset>\n</tstset>\n", 2}, /* mismatched close */
        {HEAD "<p>\n" TAIL, 4}, /* unclosed p */
        {HEAD "<seg id=\"1\" id2 = > a </seg>\n" TAIL, 3},
        {HEAD "<seg id=\"1\"/>\n" TAIL, 3},
        {"<!-- unterminated", 1},
        {"<", 1},
        {"</", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_error(bad[i].doc, strlen(bad[i].doc), AM_ERR_PARSE, bad[i].line);
    /* invalid UTF-8 and NUL */
    static const char *utf8[] = {
        HEAD "<seg id=\"1\"> \xff </seg>\n" TAIL,
        HEAD "<seg id=\"1\"> \xc3 </seg>\n" TAIL,
        HEAD "<seg id=\"1\"> \xc0\xaf </seg>\n" TAIL, /* overlong */
        HEAD "<seg id=\"1\"> \xed\xa0\x80 </seg>\n" TAIL, /* surrogate */
        HEAD "<seg id=\"1\"> \xf4\x90\x80\x80 </seg>\n" TAIL, /* > U+10FFFF */
        HEAD "<seg id=\"1\"> \xe2\x82", /* truncated */
    };
    for (size_t i = 0; i < sizeof utf8 / sizeof utf8[0]; i++)
        expect_error(utf8[i], strlen(utf8[i]), AM_ERR_UTF8, 3);
    static const char nul[] = HEAD "<seg id=\"1\"> a\0b </seg>\n" TAIL;
    expect_error(nul, sizeof nul - 1, AM_ERR_NUL, 3);
    /* a last <doc> left open (the historical TICO-19 release): read as
     * sacreBLEU reads it, with the warning line set (issue 24; it used to
     * be refused) */
    static const char *open_doc[] = {
        HEAD "<seg id=\"1\"> a </seg>\n</refset>\n",
        HEAD "<seg id=\"1\"> a </seg>\n",
    };
    am_sgml_doc d;
    for (size_t i = 0; i < 2; i++) {
        size_t line = 99;
        assert_int_equal(am_sgml_parse(open_doc[i], strlen(open_doc[i]), &d, &line), AM_OK);
        assert_int_equal(d.nsegs, 1);
        assert_string_equal(d.segs[0].text, "a");
        assert_int_equal(d.unclosed_doc_line, 2);
        assert_int_equal(d.unclosed_set, (int)i);
        am_sgml_free(&d);
    }
    /* ... but an earlier <doc> left open is still an error */
    expect_error(HEAD "<doc docid=\"e\">\n" TAIL, strlen(HEAD "<doc docid=\"e\">\n" TAIL),
                 AM_ERR_PARSE, 3);
    /* NULL buffer */
    assert_int_equal(am_sgml_parse(NULL, 0, &d, NULL), AM_ERR_PARSE);
    assert_int_equal(am_sgml_parse(NULL, 3, &d, NULL), AM_ERR_INVALID);
    am_sgml_free(&d);
}

/* Every prefix and many random mutations of a valid document: an error or a
 * document, never a crash or leak (run under ASan/valgrind). */
static void test_no_crash(void **state)
{
    (void)state;
    static const char doc[] =
        HEAD "<seg id=\"1\"> a <term id=\"1\" type=\"t\" src=\"s\" tgt=\"x|y\"> x <term id=\"2\" "
             "type=\"t\" src=\"s\" tgt=\"x\">y</term></term> &amp; &#233; &lt; </seg>\n"
             "<seg id=\"2\"> b &#x41; <!-- c --> </seg>\n" TAIL;
    size_t n = strlen(doc);
    char *buf = malloc(n + 1);
    am_sgml_doc d;
    size_t ok = 0;
    for (size_t k = 0; k <= n; k++) {
        memcpy(buf, doc, k);
        int rc = am_sgml_parse(buf, k, &d, NULL);
        assert_true(rc == AM_OK || rc == AM_ERR_PARSE || rc == AM_ERR_UTF8);
        ok += rc == AM_OK;
        am_sgml_free(&d);
    }
    /* the whole document, without its final newline, and (issue 24) every
     * prefix that ends inside the open <doc> between segments, read as
     * sacreBLEU reads a file whose last <doc> is not closed */
    assert_int_equal(ok, 8);
    uint32_t seed = 12345;
    static const char alphabet[] = "<>/=\"'&#;! \nxtermsegdoc\xc3\xa9\xff";
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(buf, doc, n);
        int nmut = 1 + iter % 4;
        for (int m = 0; m < nmut; m++) {
            seed = seed * 1103515245u + 12345u;
            size_t pos = (seed >> 8) % n;
            seed = seed * 1103515245u + 12345u;
            buf[pos] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 8) % (n + 1);
        int rc = am_sgml_parse(buf, len, &d, NULL);
        assert_true(rc == AM_OK || rc == AM_ERR_PARSE || rc == AM_ERR_UTF8);
        if (rc == AM_OK)
            for (size_t i = 0; i < d.nsegs; i++)
                assert_non_null(d.segs[i].text);
        am_sgml_free(&d);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tico19_files),
        cmocka_unit_test(test_entities_and_nesting),
        cmocka_unit_test(test_find_by_document_and_id),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_no_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
