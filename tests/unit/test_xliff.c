/* test_xliff.c — XLIFF / TMX readers (core/xliff.c): 1.2 confirmation
 * conventions (state, approved, Trados sdl:seg, memoQ mq:status, Phrase
 * m:confirmed), MT candidates (alt-trans by state-qualifier, phase, origin,
 * tool-id; TM matches ignored), mrk segmentation, 2.x segments and
 * mtc:match, inline codes, id sanitizing, hostile XML (billion laughs,
 * external entities, deep nesting, missing attributes, bad UTF-8), TMX
 * counting and side choice. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "xliff.h"

static int parse(const char *s, am_xliff_doc *d)
{
    am_xliff_report rep;
    int rc = am_xliff_parse(s, strlen(s), d, &rep);
    if (rc)
        assert_true(rep.msg[0] != '\0');
    return rc;
}

static const char *hyp_of(const am_xliff_doc *d, const am_xliff_seg *s, const char *sys)
{
    for (size_t k = 0; k < s->nhyp; k++)
        if (!strcmp(d->systems[s->sys[k]], sys))
            return s->hyp[k];
    return NULL;
}

static void test_v12_conventions(void **state)
{
    (void)state;
    const char *x =
        "<?xml version='1.0'?><xliff version='1.2' xmlns:mq='MQXliff' "
        "xmlns:m='http://www.memsource.com/mxlf/2.0' "
        "xmlns:sdl='http://sdl.com/FileTypes/SdlXliff/1.0'>"
        "<file source-language='en' target-language='fr'><header><phase-group>"
        "<phase phase-name='p1' process-name='Machine Translation' tool-id='deepx'/>"
        "</phase-group></header><body>"
        "<trans-unit id='a'><source>Hello <g id='1'>big</g> world<x id='2'/></source>"
        "<target state='final'>Bonjour <g id='1'>grand</g> <bpt id='3'>&lt;b&gt;</bpt>monde"
        "<ept id='3'>&lt;/b&gt;</ept>  <ph id='4'>{1}</ph></target>"
        "<alt-trans origin='sys1'><target>Salut monde</target></alt-trans>"
        "<alt-trans origin='tm' match-quality='90'><target>TM</target></alt-trans>"
        "<alt-trans phase-name='p1'><target>Bonjour gros monde</target></alt-trans>"
        "<alt-trans alttranstype='previous-version' origin='old'><target>x</target></alt-trans>"
        "</trans-unit>"
        "<trans-unit id='b'><source>s</source><target state='needs-review-translation'>t</target>"
        "</trans-unit>"
        "<trans-unit id='c' approved='yes'><source>s</source><target>t</target>"
        "<alt-trans><target state-qualifier='mt-suggestion'>h</target></alt-trans></trans-unit>"
        "<trans-unit id='d' mq:status='ManuallyConfirmed'><source>s</source><target>t</target>"
        "</trans-unit>"
        "<trans-unit id='e' mq:status='PartiallyEdited'><source>s</source><target>t</target>"
        "</trans-unit>"
        "<trans-unit id='f' m:confirmed='1'><source>s</source><target>t</target></trans-unit>"
        "<trans-unit id='g' translate='no'><source>s</source><target state='final'>t</target>"
        "</trans-unit>"
        "<trans-unit id='h:1'><source>s</source><target state='final'></target></trans-unit>"
        "<group><trans-unit id='i j'><source>A. B.</source>"
        "<seg-source><mrk mtype='seg' mid='1'>A.</mrk> <mrk mtype='seg' "
        "mid='2'>B.</mrk></seg-source>"
        "<target><mrk mtype='seg' mid='1'>Un.</mrk> <mrk mtype='seg' mid='2'>Deux.</mrk></target>"
        "<alt-trans tool-id='nmt'><target><mrk mtype='seg' mid='1'>1.</mrk>"
        "<mrk mtype='seg' mid='2'>2.</mrk></target></alt-trans>"
        "<sdl:seg-defs><sdl:seg id='1' conf='Translated'/><sdl:seg id='2' conf='Draft'/>"
        "</sdl:seg-defs></trans-unit></group>"
        "</body></file></xliff>";
    am_xliff_doc d;
    assert_int_equal(parse(x, &d), AM_OK);
    assert_int_equal(d.version, 12);
    assert_string_equal(d.target_lang, "fr");
    assert_int_equal(d.nsegs, 5); /* a c d f i_j.1 */
    assert_string_equal(d.segs[0].id, "a");
    assert_string_equal(d.segs[0].source, "Hello big world");
    assert_string_equal(d.segs[0].target, "Bonjour grand monde");
    assert_int_equal(d.segs[0].nhyp, 2);
    assert_string_equal(hyp_of(&d, &d.segs[0], "sys1"), "Salut monde");
    assert_string_equal(hyp_of(&d, &d.segs[0], "deepx"), "Bonjour gros monde");
    assert_null(hyp_of(&d, &d.segs[0], "tm"));
    assert_null(hyp_of(&d, &d.segs[0], "old"));
    assert_string_equal(d.segs[1].id, "c");
    assert_string_equal(hyp_of(&d, &d.segs[1], "mt"), "h");
    assert_string_equal(d.segs[2].id, "d");
    assert_int_equal(d.segs[2].nhyp, 0);
    assert_string_equal(d.segs[3].id, "f");
    assert_string_equal(d.segs[4].id, "i_j.1");
    assert_string_equal(d.segs[4].source, "A.");
    assert_string_equal(d.segs[4].target, "Un.");
    assert_string_equal(hyp_of(&d, &d.segs[4], "nmt"), "1.");
    assert_int_equal(d.nskips, 5); /* b e g h i_j.2 */
    assert_string_equal(d.skips[0].reason, "unconfirmed");
    assert_string_equal(d.skips[2].reason, "translate=no");
    assert_string_equal(d.skips[3].id, "h_1");
    assert_string_equal(d.skips[3].reason, "no target");
    assert_string_equal(d.skips[4].id, "i_j.2");
    am_xliff_free(&d);
}

static void test_v2(void **state)
{
    (void)state;
    const char *x =
        "<xliff xmlns='urn:oasis:names:tc:xliff:document:2.0' "
        "xmlns:mtc='urn:oasis:names:tc:xliff:matches:2.0' version='2.2' srcLang='en' trgLang='de'>"
        "<file id='f1'><unit id='u1'><mtc:matches>"
        "<mtc:match ref='#s2' type='mt' "
        "origin='A'><source>x</source><target>a2</target></mtc:match>"
        "<mtc:match ref='#s1' type='mt' "
        "origin='A'><source>x</source><target>a1</target></mtc:match>"
        "<mtc:match ref='#s1' type='tm'><source>x</source><target>tm</target></mtc:match>"
        "</mtc:matches>"
        "<segment id='s1' state='reviewed'><source>One <pc id='1'>two</pc><ph id='2'/></source>"
        "<target>Eins <pc id='1'>zwei</pc> <sc id='3'/>drei<ec startRef='3'/></target></segment>"
        "<segment id='s2' state='initial'><source>x</source><target>y</target></segment>"
        "</unit></file>"
        "<file id='f2'><unit id='u1'><segment state='final'><source>q</source><target>r</target>"
        "</segment></unit></file></xliff>";
    am_xliff_doc d;
    assert_int_equal(parse(x, &d), AM_OK);
    assert_int_equal(d.version, 20);
    assert_string_equal(d.target_lang, "de");
    assert_int_equal(d.nfiles, 2);
    assert_int_equal(d.nsegs, 2);
    assert_string_equal(d.segs[0].id, "f1.u1.s1");
    assert_string_equal(d.segs[0].source, "One two");
    assert_string_equal(d.segs[0].target, "Eins zwei drei");
    assert_int_equal(d.segs[0].nhyp, 1);
    assert_string_equal(hyp_of(&d, &d.segs[0], "A"), "a1");
    assert_string_equal(d.segs[1].id, "f2.u1");
    assert_int_equal(d.nskips, 1);
    assert_string_equal(d.skips[0].id, "f1.u1.s2");
    am_xliff_free(&d);
}

static void test_hostile(void **state)
{
    (void)state;
    static const char *const bad[] = {
        /* billion laughs */
        "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaaaaaaaa'>"
        "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'><!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>]>"
        "<xliff version='1.2'><file><body><trans-unit id='1'><source>&c;</source>"
        "<target state='final'>&c;</target></trans-unit></body></file></xliff>",
        /* external entity */
        "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>"
        "<xliff version='1.2'><file><body><trans-unit id='1'><source>&e;</source>"
        "<target state='final'>&e;</target></trans-unit></body></file></xliff>",
        /* parameter entity, external DTD */
        "<?xml version='1.0'?><!DOCTYPE x [<!ENTITY % p SYSTEM 'http://127.0.0.1:1/x.dtd'> %p;]>"
        "<xliff version='1.2'/>",
        /* undeclared entity with an external DTD */
        "<?xml version='1.0'?><!DOCTYPE xliff SYSTEM 'xliff.dtd'><xliff version='1.2'><file>"
        "<body><trans-unit id='1'><source>&u;</source></trans-unit></body></file></xliff>",
        /* missing attributes */
        "<xliff version='1.2'><file><body><trans-unit><source>a</source>"
        "<target state='final'>b</target></trans-unit></body></file></xliff>",
        "<xliff version='2.0'><file><unit><segment state='final'><source>a</source>"
        "<target>b</target></segment></unit></file></xliff>",
        "<xliff><file/></xliff>", /* no version */
        "<martif/>", /* not XLIFF */
        "<xliff version='1.2'><file><body>", /* truncated */
        "",
        "   \n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        am_xliff_doc d;
        int rc = parse(bad[i], &d);
        if (rc != AM_ERR_PARSE)
            fail_msg("input %zu: rc %d", i, rc);
        assert_int_equal(d.nsegs, 0);
        am_xliff_free(&d);
    }
    /* deep nesting: libxml2's depth limit, no stack overflow */
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "<xliff version='1.2'><file><body><trans-unit id='1'><source>");
    for (int i = 0; i < 100000; i++)
        am_buf_appends(&b, "<g>");
    am_xliff_doc d;
    am_xliff_report rep;
    assert_int_equal(am_xliff_parse(b.data, b.len, &d, &rep), AM_ERR_PARSE);
    am_xliff_free(&d);
    am_buf_cleanup(&b);
    /* bad bytes */
    assert_int_equal(am_xliff_parse("<xliff\xff/>", 8, &d, &rep), AM_ERR_UTF8);
    assert_int_equal(am_xliff_parse("<x\0/>", 5, &d, &rep), AM_ERR_NUL);
    am_xliff_free(&d);
}

/* A start tag with thousands of attributes: libxml2 2.9 compares each new
 * attribute with every earlier one of its tag (20,000 took 1 s, a 64 MiB
 * import would take a day); refused before parsing. Quoted '=' and '>',
 * comments, CDATA and processing instructions are not attributes. */
static void test_attribute_flood(void **state)
{
    (void)state;
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "<xliff version='1.2'><file source-language='en' target-language='fr'>"
                       "<body><trans-unit id='1'");
    for (int i = 0; i < 20000; i++)
        am_buf_printf(&b, " a%d='x'", i);
    am_buf_appends(&b, "><source>a</source><target state='final'>b</target></trans-unit>"
                       "</body></file></xliff>");
    am_xliff_doc d;
    am_xliff_report rep;
    assert_int_equal(am_xliff_parse(b.data, b.len, &d, &rep), AM_ERR_PARSE);
    assert_non_null(strstr(rep.msg, "attributes"));
    assert_int_equal(rep.line, 1);
    am_xliff_free(&d);
    /* '=' in values, comments, CDATA and PIs: a valid document */
    am_buf_reset(&b);
    am_buf_appends(&b, "<?xml version='1.0'?>\n<!-- ");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "a='1' ");
    am_buf_appends(&b, "-->\n<?pi ");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "b='2' ");
    am_buf_appends(&b, "?>\n<xliff version='1.2'><file source-language='en' target-language='fr'>"
                       "<body><trans-unit id='1' note=\"");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "c='>' ");
    am_buf_appends(&b, "\"><source><![CDATA[");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "<d e='3'");
    am_buf_appends(&b, "]]></source><target state='final'>b</target></trans-unit>"
                       "</body></file></xliff>");
    assert_int_equal(am_xliff_parse(b.data, b.len, &d, &rep), AM_OK);
    assert_int_equal(d.nsegs, 1);
    am_xliff_free(&d);
    am_buf_cleanup(&b);
}

static void test_tmx(void **state)
{
    (void)state;
    const char *t =
        "<tmx version='1.4'><header srclang='en'/><body>"
        "<tu><tuv xml:lang='en'><seg>The virus</seg></tuv>"
        "<tuv xml:lang='fr-CA'><seg>Le <bpt i='1'>&lt;b&gt;</bpt>virus<ept i='1'/></seg>"
        "</tuv></tu>"
        "<tu><tuv lang='FR'><seg>Virus, virus !</seg></tuv></tu></body></tmx>";
    am_config cfg;
    am_config_init(&cfg);
    am_recall_config rc;
    am_xliff_tmx_rcfg(&cfg, &rc);
    am_vocab *v = am_vocab_new();
    char *lang = NULL;
    size_t n = 0;
    am_xliff_report rep;
    assert_int_equal(am_xliff_tmx_counts(t, strlen(t), NULL, &rc, v, &lang, &n, &rep), AM_OK);
    assert_string_equal(lang, "fr-CA");
    assert_int_equal(n, 2);
    int64_t c = 0;
    assert_true(am_vocab_get(v, "virus", &c));
    assert_int_equal(c, 3);
    assert_true(am_vocab_get(v, "le", &c));
    assert_int_equal(c, 1);
    assert_false(am_vocab_get(v, "the", &c));
    free(lang);
    am_vocab_clear(v);
    assert_int_equal(am_xliff_tmx_counts(t, strlen(t), "en", &rc, v, NULL, NULL, &rep), AM_OK);
    assert_true(am_vocab_get(v, "the", &c));
    /* no srclang: the side cannot be chosen */
    const char *u =
        "<tmx><header/><body><tu><tuv xml:lang='en'><seg>a</seg></tuv></tu></body></tmx>";
    assert_int_equal(am_xliff_tmx_counts(u, strlen(u), NULL, &rc, v, NULL, NULL, &rep),
                     AM_ERR_INVALID);
    const char *bl = "<!DOCTYPE t [<!ENTITY a 'x'>]><tmx><body/></tmx>";
    assert_int_equal(am_xliff_tmx_counts(bl, strlen(bl), "fr", &rc, v, NULL, NULL, &rep),
                     AM_ERR_PARSE);
    am_vocab_free(v);
}

/* A pre-translated file (am_xliff_parse_mt): the CAT tools' MT-origin
 * markers decide which targets are MT hypotheses (issue 24). */
static void test_mt_file(void **state)
{
    (void)state;
    const char *x =
        "<xliff version='1.2' xmlns:sdl='http://sdl.com/FileTypes/SdlXliff/1.0' "
        "xmlns:mq='MQXliff' xmlns:m='http://www.memsource.com/mxlf/2.0'>"
        "<file source-language='en' target-language='fr'><body>"
        "<trans-unit id='t1'><source>a</source><target>A</target><sdl:seg-defs>"
        "<sdl:seg id='1' origin='mt' origin-system='DeepL'/></sdl:seg-defs></trans-unit>"
        "<trans-unit id='t2'><source>b</source><target>B</target><sdl:seg-defs>"
        "<sdl:seg id='1' origin='interactive'/></sdl:seg-defs></trans-unit>"
        "<trans-unit id='q1' mq:status='MachineTranslated'><source>c</source><target>C</target>"
        "</trans-unit>"
        "<trans-unit id='q2' mq:status='PreTranslated'><source>d</source><target>D</target>"
        "</trans-unit>"
        "<trans-unit id='p1' m:trans-origin='tm'><source>e</source><target>E</target>"
        "</trans-unit>"
        "<trans-unit id='s1'><source>f</source><target state-qualifier='exact-match'>F</target>"
        "</trans-unit>"
        "<trans-unit id='s2'><source>g</source><target state-qualifier='leveraged-mt'>G</target>"
        "</trans-unit>"
        "<trans-unit id='n1'><source>h</source><target>H</target></trans-unit>"
        "<trans-unit id='e1'><source>i</source><target></target></trans-unit>"
        "</body></file></xliff>";
    am_xliff_doc d;
    assert_int_equal(am_xliff_parse_mt(x, strlen(x), &d, NULL), AM_OK);
    assert_int_equal(d.nsegs, 4); /* t1, q1, s2, n1 */
    const char *ids[] = {"t1", "q1", "s2", "n1"}, *hyps[] = {"A", "C", "G", "H"};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(d.segs[i].id, ids[i]);
        assert_int_equal(d.segs[i].nhyp, 1);
        assert_string_equal(d.segs[i].hyp[0], hyps[i]);
    }
    assert_string_equal(d.systems[d.segs[0].sys[0]], "DeepL");
    assert_string_equal(d.systems[d.segs[1].sys[0]], "mt");
    assert_int_equal(d.nskips, 5); /* t2, q2, p1, s1, e1 */
    assert_non_null(strstr(d.skips[0].reason, "interactive"));
    assert_non_null(strstr(d.skips[1].reason, "memoQ"));
    assert_non_null(strstr(d.skips[2].reason, "Phrase"));
    assert_non_null(strstr(d.skips[3].reason, "exact-match"));
    assert_string_equal(d.skips[4].reason, "no target");
    am_xliff_free(&d);
}

/* alt-trans: MT by an MT-naming origin even with match-quality, Okapi's
 * okp:matchType; not in another language (issue 24). */
static void test_alt_trans_rules(void **state)
{
    (void)state;
    const char *x =
        "<xliff version='1.2' xmlns:okp='okapi-framework:xliff-extensions'>"
        "<file source-language='de' target-language='fr'><body>"
        "<trans-unit id='1'><source>s</source><target state='final'>t</target>"
        "<alt-trans match-quality='70' origin='MT-Google'><target>m1</target></alt-trans>"
        "<alt-trans match-quality='95' okp:matchType='MT' origin='sys2'><target>m2</target>"
        "</alt-trans>"
        "<alt-trans match-quality='99' origin='tm'><target>tm</target></alt-trans>"
        "<alt-trans origin='ref'><target xml:lang='de-DE'>s</target></alt-trans>"
        "<alt-trans origin='x' xml:lang='it'><target>it</target></alt-trans>"
        "<alt-trans origin='y'><target xml:lang='fr-CA'>m3</target></alt-trans>"
        "</trans-unit>"
        "<trans-unit id='2'><source>s</source><target state='final'>t</target>"
        "<alt-trans origin='ref'><target xml:lang='de'>s</target></alt-trans></trans-unit>"
        "</body></file></xliff>";
    am_xliff_doc d;
    assert_int_equal(am_xliff_parse(x, strlen(x), &d, NULL), AM_OK);
    assert_int_equal(d.nsegs, 2);
    assert_int_equal(d.segs[0].nhyp, 3);
    assert_string_equal(hyp_of(&d, &d.segs[0], "MT-Google"), "m1");
    assert_string_equal(hyp_of(&d, &d.segs[0], "sys2"), "m2");
    assert_string_equal(hyp_of(&d, &d.segs[0], "y"), "m3");
    assert_null(hyp_of(&d, &d.segs[0], "tm"));
    assert_int_equal(d.segs[1].nhyp, 0);
    assert_string_equal(d.segs[1].dropped, "alt-trans in the source language (de)");
    am_xliff_free(&d);
}

static int teardown_libxml(void **state)
{
    (void)state;
    xmlCleanupParser();
    return 0;
}

/* am_xliff_each's callback in the tests: counts what it is handed. */
static int count_units(void *ctx, const am_xliff_doc *info, const am_xliff_seg *s,
                       const am_xliff_skip *k)
{
    (void)info;
    (void)k;
    size_t *n = ctx;
    n[s ? 0 : 1]++;
    return 0;
}

/* The streaming reader: the prolog check that replaces xmlsafe's SAX
 * hooks, entity references, and nothing handed over for a document whose
 * error comes after its first units. */
static void test_stream(void **state)
{
    (void)state;
    static const char *const bad[] = {
        /* an entity declared after a comment and a PI in the prolog */
        "<?xml version=\"1.0\"?><!-- c --><?pi x?>\n<!DOCTYPE x [\n<!ENTITY a \"x\">]>"
        "<xliff version=\"1.2\"/>",
        /* a parameter entity reference in the internal subset */
        "<!DOCTYPE x [ %pe; ]><xliff version=\"1.2\"/>",
        /* a reference to an entity the document never declares, with an
         * external subset libxml2 tolerates it for (never read) */
        "<!DOCTYPE xliff SYSTEM \"http://example.com/x.dtd\"><xliff version=\"1.2\"><file>"
        "<body><trans-unit id=\"1\"><source>a &ext; b</source><target state=\"final\">c"
        "</target></trans-unit></body></file></xliff>",
        /* malformed after two good units */
        "<xliff version=\"1.2\"><file><body><trans-unit id=\"1\"><source>a</source>"
        "<target state=\"final\">b</target><alt-trans origin=\"m\"><target>b</target>"
        "</alt-trans></trans-unit><trans-unit id=\"2\"><source>a</source><target "
        "state=\"final\">b</target></trans-unit><trans-unit id=\"3\"><source>a</source>"
        "</body></file></xliff>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n[2] = {0, 0};
        am_xliff_doc info;
        am_xliff_report rep;
        assert_int_equal(am_xliff_each(bad[i], strlen(bad[i]), count_units, n, &info, &rep),
                         AM_ERR_PARSE);
        assert_true(rep.msg[0] != '\0');
        assert_int_equal(n[0] + n[1], 0); /* nothing handed over */
        am_xliff_free(&info);
    }
    /* a DOCTYPE without entities (brackets and '%' inside quotes) is fine */
    const char *ok = "<!DOCTYPE xliff SYSTEM \"a]b[%.dtd\"><xliff version=\"1.2\">"
                     "<file><body><trans-unit id=\"1\"><source>a</source><target state=\"final\">"
                     "b</target><alt-trans origin=\"m\"><target>b</target></alt-trans>"
                     "</trans-unit><trans-unit id=\"2\"><source>a</source><target>b</target>"
                     "</trans-unit></body></file></xliff>";
    size_t n[2] = {0, 0};
    am_xliff_doc info;
    assert_int_equal(am_xliff_each(ok, strlen(ok), count_units, n, &info, NULL), AM_OK);
    assert_int_equal(n[0], 1);
    assert_int_equal(n[1], 1);
    assert_int_equal(info.nsystems, 1);
    am_xliff_free(&info);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v12_conventions), cmocka_unit_test(test_v2),
        cmocka_unit_test(test_hostile),         cmocka_unit_test(test_tmx),
        cmocka_unit_test(test_stream),          cmocka_unit_test(test_attribute_flood),
        cmocka_unit_test(test_mt_file),         cmocka_unit_test(test_alt_trans_rules),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_libxml);
}
