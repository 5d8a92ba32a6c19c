/* test_tbx.c — TBX import (core/tbx.c): TBX-Basic v2 (martif) and TBX v3
 * samples, language subtag matching, auto-detection through am_gloss_parse,
 * malformed XML with line numbers, XXE / billion laughs rejected, limits,
 * invalid UTF-8, empty input, concurrent parses, truncation robustness. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "glossary.h"

#define V2_FILE "tests/data/glossary/covid-en-fr.tbx"
#define V3_FILE "tests/data/glossary/covid-en-fr-v3.tbx"

/* ---- helpers ------------------------------------------------------------- */

/* The n-th entry (0-based) whose source is src and forbidden flag is forb. */
static const am_gloss_entry *find(const am_gloss *g, const char *src, int forb)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->v[i].source, src) == 0 && g->v[i].forbidden == forb)
            return &g->v[i];
    return NULL;
}

/* Asserts that g has an entry src -> targets (exactly, in order) with the
 * given forbidden flag and id (NULL = no id). */
static void expect_entry(const am_gloss *g, const char *src, int forb, const char *id,
                         const char *const *targets, size_t n)
{
    const am_gloss_entry *e = find(g, src, forb);
    if (!e)
        fail_msg("no %sentry for \"%s\"", forb ? "forbidden " : "", src);
    assert_int_equal(e->n_targets, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(e->targets[i], targets[i]);
    if (id)
        assert_string_equal(e->id, id);
    else
        assert_null(e->id);
    assert_false(e->case_sensitive);
}

#define EXPECT(g, src, forb, id, ...)                                                              \
    do {                                                                                           \
        static const char *const t_[] = {__VA_ARGS__};                                             \
        expect_entry((g), (src), (forb), (id), t_, sizeof t_ / sizeof t_[0]);                      \
    } while (0)

static int tbx_str(const char *s, const char *sl, const char *tl, am_gloss *g, am_gloss_report *rep)
{
    am_gloss_init(g);
    return am_gloss_parse_tbx(s, strlen(s), sl, tl, NULL, g, rep);
}

/* Wraps entries in a minimal TBX v2 document (caller frees). */
static char *v2_doc(const char *entries)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_printf(&b,
                  "<?xml version=\"1.0\"?>\n<martif type=\"TBX-Basic\" xml:lang=\"en\">\n"
                  "<text><body>\n%s</body></text>\n</martif>\n",
                  entries);
    return am_buf_detach(&b);
}

/* ---- samples --------------------------------------------------------------- */

static void check_v2_en_fr(const am_gloss *g, const am_gloss_report *rep)
{
    assert_int_equal(rep->format, AM_GLOSS_TBX);
    assert_int_equal(rep->rows, 5);
    assert_int_equal(rep->skipped, 1); /* c4 has no French term */
    assert_int_equal(g->n, 8);
    EXPECT(g, "COVID-19", 0, "c1", "COVID-19", "maladie à coronavirus 2019");
    EXPECT(g, "social distancing", 0, "c2", "distanciation sociale", "distanciation physique");
    EXPECT(g, "social distancing", 1, "c2", "distance sociale");
    EXPECT(g, "herd immunity", 0, "c3", "immunité collective");
    EXPECT(g, "herd immunity", 1, "c3", "immunité de groupe");
    EXPECT(g, "community immunity", 0, "c3", "immunité collective");
    EXPECT(g, "community immunity", 1, "c3", "immunité de groupe");
    EXPECT(g, "contact tracing", 0, "c5", "recherche des contacts");
    assert_null(find(g, "lockdown", 0));
    /* document order: allowed entry first, then its forbidden twin */
    assert_string_equal(g->v[0].source, "COVID-19");
    assert_string_equal(g->v[1].source, "social distancing");
    assert_false(g->v[1].forbidden);
    assert_true(g->v[2].forbidden);
    assert_string_equal(g->v[7].source, "contact tracing");
}

static void test_v2_sample(void **state)
{
    (void)state;
    size_t len;
    char *buf = tu_read(V2_FILE, &len);
    am_gloss g;
    am_gloss_report rep;

    /* languages picked from the document: en-US (first langSet), fr-FR */
    am_gloss_init(&g);
    int rc = am_gloss_parse_tbx(buf, len, NULL, NULL, NULL, &g, &rep);
    if (rc)
        fail_msg("%s", rep.msg);
    check_v2_en_fr(&g, &rep);
    assert_string_equal(rep.msg, "");
    am_gloss_cleanup(&g);

    /* explicit languages, matched by primary subtag, case-insensitively */
    static const char *const pairs[][2] = {
        {"en", "fr"},       {"EN", "fr-CA"}, {"en_GB", "FR"},
        {"en-US", "fr-FR"}, {NULL, "fr"},    {"en", NULL},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        am_gloss_init(&g);
        rc = am_gloss_parse_tbx(buf, len, pairs[i][0], pairs[i][1], NULL, &g, &rep);
        if (rc)
            fail_msg("%s: %s", pairs[i][1], rep.msg);
        check_v2_en_fr(&g, &rep);
        am_gloss_cleanup(&g);
    }

    /* only the target given: the source is the first other language */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, "en", NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 8);
    EXPECT(&g, "distance sociale", 0, "c2", "social distancing");
    am_gloss_cleanup(&g);

    /* another target language of the same file */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, "en", "es", NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 3);
    assert_int_equal(rep.skipped, 2);
    EXPECT(&g, "COVID-19", 0, "c1", "COVID-19");
    EXPECT(&g, "social distancing", 0, "c2", "distanciamiento social");
    EXPECT(&g, "lockdown", 0, "c4", "confinamiento");
    am_gloss_cleanup(&g);

    /* reverse direction: every French term (deprecated ones too) is a source */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, "fr", "en", NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 8);
    EXPECT(&g, "distance sociale", 0, "c2", "social distancing");
    EXPECT(&g, "immunité de groupe", 0, "c3", "herd immunity", "community immunity");
    for (size_t i = 0; i < g.n; i++)
        assert_false(g.v[i].forbidden);
    am_gloss_cleanup(&g);

    /* a language absent from the file: refused, naming the languages it
     * has (issue 24: an empty glossary used to be accepted silently) */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, "en", "de", NULL, &g, &rep), AM_ERR_INVALID);
    assert_int_equal(g.n, 0);
    assert_non_null(strstr(rep.msg, "target language de"));
    assert_non_null(strstr(rep.msg, "its languages: en-US, fr-FR, es"));
    am_gloss_cleanup(&g);
    free(buf);
}

static void test_v3_sample(void **state)
{
    (void)state;
    size_t len;
    char *buf = tu_read(V3_FILE, &len);
    am_gloss g;
    am_gloss_report rep;
    for (int pass = 0; pass < 2; pass++) {
        am_gloss_init(&g);
        int rc = pass ? am_gloss_parse_tbx(buf, len, "en-GB", "fr-BE", NULL, &g, &rep)
                      : am_gloss_parse_tbx(buf, len, NULL, NULL, NULL, &g, &rep);
        if (rc)
            fail_msg("%s", rep.msg);
        assert_int_equal(rep.rows, 4);
        assert_int_equal(rep.skipped, 1); /* v3-004 has no English term */
        assert_int_equal(g.n, 6);
        EXPECT(&g, "face mask", 0, "v3-001", "masque", "masque facial");
        EXPECT(&g, "face mask", 1, "v3-001", "cache-bouche");
        EXPECT(&g, "facemask", 0, "v3-001", "masque", "masque facial");
        EXPECT(&g, "facemask", 1, "v3-001", "cache-bouche");
        EXPECT(&g, "incubation period", 0, "v3-002", "période d'incubation", "durée d'incubation");
        /* only a deprecated target: a forbidden entry alone */
        EXPECT(&g, "self-isolation", 1, "v3-003", "quarantaine volontaire");
        assert_null(find(&g, "self-isolation", 0));
        am_gloss_cleanup(&g);
    }
    free(buf);
}

/* TBX v3 DCT style (namespaced <basic:administrativeStatus>), ntig-less
 * terms, inline markup, CDATA, entities, whitespace, duplicates, no id. */
static void test_variants(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    const char *dct =
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        "<tbx type='TBX-Basic' style='dct' xml:lang='en' xmlns='urn:iso:std:iso:30042:ed-2'\n"
        "     xmlns:basic='http://www.tbxinfo.net/ns/basic'>\n"
        "<text><body>\n"
        "<conceptEntry id=' k1 '>\n"
        " <langSec xml:lang='en'><termSec><term>R&amp;D  \n  centre</term></termSec></langSec>\n"
        " <langSec xml:lang='fr'>\n"
        "  <termSec><term>centre de <hi>R&amp;D</hi></term></termSec>\n"
        "  <termSec><term><![CDATA[labo R&D]]></term>\n"
        "   <basic:administrativeStatus> Deprecated </basic:administrativeStatus></termSec>\n"
        "  <termSec><term>centre de R&amp;D</term></termSec>\n"
        "  <termSec><term>   </term></termSec>\n"
        " </langSec>\n"
        "</conceptEntry>\n"
        "<conceptEntry><langSec xml:lang='en'><termSec><term>virus</term></termSec></langSec>\n"
        " <langSec xml:lang='fr'><termSec><term>virus</term>\n"
        "  <termNote type='administrativeStatus'>preferredTerm-admn-sts</termNote></termSec>\n"
        " </langSec></conceptEntry>\n"
        "</body></text></tbx>\n";
    assert_int_equal(tbx_str(dct, NULL, NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 3);
    EXPECT(&g, "R&D centre", 0, "k1", "centre de R&D");
    EXPECT(&g, "R&D centre", 1, "k1", "labo R&D");
    EXPECT(&g, "virus", 0, NULL, "virus");
    am_gloss_cleanup(&g);

    /* older normativeAuthorization; target language picked as the first
     * language different from the source even when it first appears later */
    char *doc = v2_doc("<termEntry id='a'><langSet xml:lang='en'><tig><term>flu</term></tig>"
                       "</langSet></termEntry>\n"
                       "<termEntry id='b'><langSet xml:lang='en-GB'><tig><term>jab</term></tig>"
                       "</langSet><langSet xml:lang='de'><tig><term>Spritze</term></tig>"
                       "<tig><term>Impfung</term><termNote type='normativeAuthorization'>"
                       "supersededTerm</termNote></tig></langSet>"
                       "<langSet xml:lang='fr'><tig><term>piqûre</term></tig></langSet>"
                       "</termEntry>\n");
    assert_int_equal(tbx_str(doc, NULL, NULL, &g, &rep), AM_OK);
    assert_int_equal(rep.skipped, 1);
    assert_int_equal(g.n, 2);
    EXPECT(&g, "jab", 0, "b", "Spritze");
    EXPECT(&g, "jab", 1, "b", "Impfung");
    am_gloss_cleanup(&g);
    free(doc);

    /* a term placed directly in the langSet (no tig): accepted, no status */
    doc = v2_doc("<termEntry id='d'><langSet xml:lang='en'><term>flu</term></langSet>"
                 "<langSet xml:lang='fr'><term>grippe</term>"
                 "<termNote type='administrativeStatus'>deprecatedTerm-admn-sts</termNote>"
                 "</langSet></termEntry>\n");
    assert_int_equal(tbx_str(doc, "en", "fr", &g, &rep), AM_OK);
    assert_int_equal(g.n, 1);
    EXPECT(&g, "flu", 0, "d", "grippe");
    am_gloss_cleanup(&g);
    free(doc);

    /* a declared non-UTF-8 encoding is honoured (issue 24: it used to be
     * ignored, the bytes read as UTF-8): latin-1 0xE8 is è */
    const char *latin = "<?xml version='1.0' encoding='ISO-8859-1'?>\n"
                        "<martif><text><body><termEntry>"
                        "<langSet xml:lang='en'><tig><term>fever</term></tig></langSet>"
                        "<langSet xml:lang='fr'><tig><term>fi\xE8vre</term></tig></langSet>"
                        "</termEntry></body></text></martif>";
    assert_int_equal(tbx_str(latin, "en", "fr", &g, &rep), AM_OK);
    EXPECT(&g, "fever", 0, NULL, "fièvre");
    am_gloss_cleanup(&g);
}

/* ---- am_gloss_parse integration --------------------------------------------- */

static void test_autodetect(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    size_t len;
    char *buf = tu_read(V2_FILE, &len);
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse(buf, len, AM_GLOSS_AUTO, NULL, &g, &rep), AM_OK);
    check_v2_en_fr(&g, &rep);
    am_gloss_cleanup(&g);
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse(buf, len, AM_GLOSS_TBX, NULL, &g, &rep), AM_OK);
    check_v2_en_fr(&g, &rep);
    am_gloss_cleanup(&g);

    /* BOM + whitespace before the declaration, and the bare roots */
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "\xEF\xBB\xBF \r\n\t");
    am_buf_append(&b, buf, len);
    am_gloss_init(&g);
    int rc = am_gloss_parse(b.data, b.len, AM_GLOSS_AUTO, NULL, &g, &rep);
    if (rc)
        fail_msg("%s", rep.msg);
    check_v2_en_fr(&g, &rep);
    am_gloss_cleanup(&g);
    am_buf_cleanup(&b);
    free(buf);

    const char *bare[] = {
        "<martif><text><body><termEntry><langSet xml:lang='en'><tig><term>a</term></tig>"
        "</langSet><langSet xml:lang='fr'><tig><term>b</term></tig></langSet></termEntry>"
        "</body></text></martif>",
        "\n<tbx xmlns='urn:iso:std:iso:30042:ed-2'><text><body><conceptEntry id='1'>"
        "<langSec xml:lang='en'><termSec><term>a</term></termSec></langSec>"
        "<langSec xml:lang='fr'><termSec><term>b</term></termSec></langSec></conceptEntry>"
        "</body></text></tbx>",
    };
    for (size_t i = 0; i < 2; i++) {
        am_gloss_init(&g);
        assert_int_equal(am_gloss_parse(bare[i], strlen(bare[i]), AM_GLOSS_AUTO, NULL, &g, &rep),
                         AM_OK);
        assert_int_equal(rep.format, AM_GLOSS_TBX);
        assert_int_equal(g.n, 1);
        EXPECT(&g, "a", 0, i ? "1" : NULL, "b");
        am_gloss_cleanup(&g);
    }

    /* CSV/JSON detection unchanged */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse("a,b\n", 4, AM_GLOSS_AUTO, NULL, &g, &rep), AM_OK);
    assert_int_equal(rep.format, AM_GLOSS_CSV);
    am_gloss_cleanup(&g);
    /* an XML error through am_gloss_parse keeps TBX as the format */
    am_gloss_init(&g);
    const char *unclosed = "<?xml version='1.0'?>\n<martif>";
    assert_int_equal(am_gloss_parse(unclosed, strlen(unclosed), AM_GLOSS_AUTO, NULL, &g, &rep),
                     AM_ERR_PARSE);
    assert_int_equal(rep.format, AM_GLOSS_TBX);
    assert_int_equal(g.n, 0);
    am_gloss_cleanup(&g);

    enum am_gloss_format f = AM_GLOSS_AUTO;
    assert_int_equal(am_gloss_format_parse("tbx", &f), AM_OK);
    assert_int_equal(f, AM_GLOSS_TBX);
    assert_string_equal(am_gloss_format_name(AM_GLOSS_TBX), "tbx");
    assert_int_equal(am_gloss_format_parse("TBX", &f), AM_ERR_INVALID);
}

/* ---- errors ------------------------------------------------------------------ */

static void test_malformed(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    static const struct {
        const char *doc;
        size_t line; /* expected error line */
    } cases[] = {
        /* mismatched end tag on line 4 */
        {"<?xml version='1.0'?>\n<martif><text><body>\n<termEntry>\n"
         "<langSet xml:lang='en'><tig><term>a</tig></langSet>\n</termEntry></body></text></martif>",
         4},
        /* unterminated document: error reported at the end (line 3) */
        {"<?xml version='1.0'?>\n<martif><text>\n<body>", 3},
        /* undefined entity (no DTD) on line 2 */
        {"<martif>\n<text>&nope;</text></martif>", 2},
        /* bad attribute syntax on line 3 */
        {"<martif>\n<text>\n<body a=1></body></text></martif>", 3},
        /* two roots */
        {"<martif/>\n<martif/>", 2},
        /* leading blank lines (tolerated) still count: error on line 5 */
        {"\n \n<?xml version='1.0'?>\n<martif>\n<text></body></martif>", 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = tbx_str(cases[i].doc, "en", "fr", &g, &rep);
        if (rc != AM_ERR_PARSE)
            fail_msg("case %zu: rc %d (%s)", i, rc, rep.msg);
        assert_int_equal(rep.line, cases[i].line);
        char want[32];
        snprintf(want, sizeof want, "line %zu", cases[i].line);
        if (!strstr(rep.msg, want) || !strstr(rep.msg, "malformed XML"))
            fail_msg("case %zu: message \"%s\"", i, rep.msg);
        assert_int_equal(g.n, 0);
        am_gloss_cleanup(&g);
    }
    /* not a TBX root */
    assert_int_equal(tbx_str("<?xml version='1.0'?>\n<html><body/></html>", NULL, NULL, &g, &rep),
                     AM_ERR_PARSE);
    assert_int_equal(rep.line, 2);
    assert_non_null(strstr(rep.msg, "<html>"));
    am_gloss_cleanup(&g);
}

static void test_xxe(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    static const char *const docs[] = {
        /* classic external entity */
        "<?xml version='1.0'?>\n"
        "<!DOCTYPE martif [\n  <!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n"
        "<martif><text><body><termEntry><langSet xml:lang='en'><tig><term>a</term></tig>"
        "</langSet><langSet xml:lang='fr'><tig><term>&x;</term></tig></langSet></termEntry>"
        "</body></text></martif>",
        /* external parameter entity */
        "<?xml version='1.0'?>\n<!DOCTYPE martif [\n"
        "<!ENTITY % p SYSTEM \"file:///etc/passwd\">\n%p;\n]>\n<martif/>",
        /* network entity */
        "<!DOCTYPE martif [\n<!ENTITY n SYSTEM \"http://127.0.0.1:1/x\">\n]>\n"
        "<martif>&n;</martif>",
        /* unparsed entity */
        "<!DOCTYPE martif [\n<!NOTATION gif SYSTEM \"gif\">\n"
        "<!ENTITY u SYSTEM \"file:///etc/passwd\" NDATA gif>\n]>\n<martif/>",
        /* internal entity: rejected as well */
        "<!DOCTYPE martif [\n<!ENTITY i \"inner\">\n]>\n<martif>&i;</martif>",
    };
    static const size_t lines[] = {3, 3, 2, 3, 2};
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        int rc = tbx_str(docs[i], NULL, NULL, &g, &rep);
        if (rc != AM_ERR_PARSE)
            fail_msg("doc %zu: rc %d (%s)", i, rc, rep.msg);
        if (!strstr(rep.msg, "entit"))
            fail_msg("doc %zu: message \"%s\"", i, rep.msg);
        assert_int_equal(rep.line, lines[i]);
        assert_null(strstr(rep.msg, "root:"));
        assert_int_equal(g.n, 0);
        am_gloss_cleanup(&g);
    }

    /* an undeclared entity is tolerated by libxml2 when there is an external
     * DTD; its text is unknown, so the document is rejected */
    const char *undeclared =
        "<?xml version='1.0'?>\n<!DOCTYPE martif SYSTEM \"TBXcoreStructV02.dtd\">\n"
        "<martif><text><body><termEntry><langSet xml:lang='en'><tig><term>a&foo;b</term>"
        "</tig></langSet><langSet xml:lang='fr'><tig><term>c</term></tig></langSet>"
        "</termEntry></body></text></martif>";
    assert_int_equal(tbx_str(undeclared, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    assert_int_equal(rep.line, 3);
    assert_non_null(strstr(rep.msg, "&foo;"));
    am_gloss_cleanup(&g);

    /* An external DTD is never read: it would give every termEntry a
     * default id and declare an entity. */
    char path[] = "/tmp/am_tbx_dtd_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *dtd = "<!ATTLIST termEntry id CDATA \"LEAKED\">\n<!ENTITY leak \"LEAKED\">\n";
    assert_int_equal(write(fd, dtd, strlen(dtd)), (ssize_t)strlen(dtd));
    close(fd);
    am_buf b;
    am_buf_init(&b);
    am_buf_printf(&b,
                  "<?xml version='1.0'?>\n<!DOCTYPE martif SYSTEM \"file://%s\">\n"
                  "<martif><text><body><termEntry><langSet xml:lang='en'><tig><term>a</term>"
                  "</tig></langSet><langSet xml:lang='fr'><tig><term>b</term></tig></langSet>"
                  "</termEntry></body></text></martif>",
                  path);
    assert_int_equal(tbx_str(b.data, NULL, NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 1);
    EXPECT(&g, "a", 0, NULL, "b"); /* no id: the DTD's default was not applied */
    am_gloss_cleanup(&g);
    unlink(path);
    am_buf_cleanup(&b);
}

static void test_billion_laughs(void **state)
{
    (void)state;
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "<?xml version=\"1.0\"?>\n<!DOCTYPE martif [\n"
                       "<!ENTITY lol0 \"lol\">\n");
    for (int i = 1; i <= 9; i++)
        am_buf_printf(&b,
                      "<!ENTITY lol%d \"&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;&lol%d;"
                      "&lol%d;&lol%d;\">\n",
                      i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    am_buf_appends(&b, "]>\n<martif><text><body><termEntry><langSet xml:lang='en'><tig>"
                       "<term>&lol9;</term></tig></langSet><langSet xml:lang='fr'><tig>"
                       "<term>&lol9;</term></tig></langSet></termEntry></body></text></martif>\n");
    am_gloss g;
    am_gloss_report rep;
    assert_int_equal(tbx_str(b.data, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    assert_int_equal(rep.line, 3);
    assert_non_null(strstr(rep.msg, "'lol0'"));
    assert_int_equal(g.n, 0);
    am_gloss_cleanup(&g);

    /* quadratic blow-up: one large entity used many times */
    am_buf_reset(&b);
    am_buf_appends(&b, "<!DOCTYPE martif [<!ENTITY a \"");
    for (int i = 0; i < 20000; i++)
        am_buf_appendc(&b, 'a');
    am_buf_appends(&b, "\">]>\n<martif><text>");
    for (int i = 0; i < 20000; i++)
        am_buf_appends(&b, "&a;");
    am_buf_appends(&b, "</text></martif>");
    assert_int_equal(tbx_str(b.data, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    assert_int_equal(rep.line, 1);
    am_gloss_cleanup(&g);
    am_buf_cleanup(&b);
}

static void test_limits(void **state)
{
    (void)state;
    size_t len;
    char *buf = tu_read(V2_FILE, &len);
    am_gloss g;
    am_gloss_report rep;
    am_gloss_limits lim = am_gloss_limits_default();

    lim.max_bytes = len - 1;
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_ERR_RANGE);
    lim.max_bytes = len;
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_OK);
    am_gloss_cleanup(&g);

    lim = am_gloss_limits_default();
    lim.max_entries = 7; /* the file gives 8 */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_ERR_RANGE);
    assert_int_equal(g.n, 0);
    assert_true(rep.line > 0);
    assert_non_null(strstr(rep.msg, "entries"));
    lim.max_entries = 8;
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_OK);
    am_gloss_cleanup(&g);

    lim = am_gloss_limits_default();
    lim.max_targets = 1; /* c1 has two French alternatives */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_ERR_RANGE);
    assert_non_null(strstr(rep.msg, "alternatives"));
    assert_int_equal(g.n, 0);
    lim.max_targets = 2;
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_OK);
    am_gloss_cleanup(&g);

    /* the cap also holds for the source synonyms of one concept (c2 has
     * three French terms) */
    lim.max_targets = 2;
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, "fr", "en", &lim, &g, &rep), AM_ERR_RANGE);
    assert_non_null(strstr(rep.msg, "source terms"));
    lim.max_targets = 3;
    assert_int_equal(am_gloss_parse_tbx(buf, len, "fr", "en", &lim, &g, &rep), AM_OK);
    am_gloss_cleanup(&g);

    lim = am_gloss_limits_default();
    lim.max_field_bytes = strlen("maladie à coronavirus 2019") - 1;
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_ERR_RANGE);
    /* the line of that <term> in the file */
    const char *at = strstr(buf, "maladie à coronavirus 2019");
    assert_non_null(at);
    size_t line = 1;
    for (const char *p = buf; p < at; p++)
        line += *p == '\n';
    assert_int_equal(rep.line, line);
    lim.max_field_bytes = strlen("maladie à coronavirus 2019");
    assert_int_equal(am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, &g, &rep), AM_OK);
    am_gloss_cleanup(&g);
    free(buf);

    /* libxml2's nesting limit holds (no XML_PARSE_HUGE) */
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "<martif>");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "<a>");
    for (int i = 0; i < 5000; i++)
        am_buf_appends(&b, "</a>");
    am_buf_appends(&b, "</martif>");
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(b.data, b.len, NULL, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    am_gloss_cleanup(&g);
    am_buf_cleanup(&b);
}

static void test_encoding_and_empty(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    const char bad[] = "<?xml version='1.0'?>\n<martif>\n<text>caf\xC3(</text></martif>";
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx(bad, sizeof bad - 1, NULL, NULL, NULL, &g, &rep),
                     AM_ERR_UTF8);
    assert_int_equal(rep.line, 3);
    assert_int_equal(rep.column, 10);
    assert_int_equal(am_gloss_parse(bad, sizeof bad - 1, AM_GLOSS_TBX, NULL, &g, &rep),
                     AM_ERR_UTF8);
    assert_int_equal(rep.line, 3);
    const char nul[] = "<martif>\n<text>a\0b</text></martif>";
    assert_int_equal(am_gloss_parse_tbx(nul, sizeof nul - 1, NULL, NULL, NULL, &g, &rep),
                     AM_ERR_NUL);
    assert_int_equal(rep.line, 2);
    assert_int_equal(rep.column, 8);
    /* overlong encoding and a UTF-16 document */
    const char *overlong = "<martif>\xC0\xAF</martif>";
    assert_int_equal(am_gloss_parse_tbx(overlong, strlen(overlong), NULL, NULL, NULL, &g, &rep),
                     AM_ERR_UTF8);
    assert_int_equal(rep.column, 9);
    /* a UTF-16 document is decoded (issue 24; it used to be refused as
     * invalid UTF-8): this truncated one is malformed XML */
    assert_int_equal(am_gloss_parse_tbx("\xFF\xFE<\0m\0", 6, NULL, NULL, NULL, &g, &rep),
                     AM_ERR_PARSE);

    /* empty input is not a TBX document (as for JSON) */
    assert_int_equal(am_gloss_parse_tbx("", 0, NULL, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    assert_non_null(strstr(rep.msg, "empty"));
    assert_int_equal(am_gloss_parse_tbx(NULL, 0, NULL, NULL, NULL, &g, &rep), AM_ERR_PARSE);
    assert_int_equal(am_gloss_parse_tbx("\xEF\xBB\xBF \n ", 6, NULL, NULL, NULL, &g, &rep),
                     AM_ERR_PARSE);
    assert_int_equal(am_gloss_parse("", 0, AM_GLOSS_TBX, NULL, &g, &rep), AM_ERR_PARSE);
    /* ... but a TBX document without entries is an empty glossary */
    assert_int_equal(
        tbx_str("<martif type='TBX'><text><body/></text></martif>", NULL, NULL, &g, &rep), AM_OK);
    assert_int_equal(g.n, 0);
    assert_int_equal(rep.rows, 0);
    am_gloss_cleanup(&g);
}

static void test_bad_args(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    const char *doc = "<martif/>";
    assert_int_equal(tbx_str(doc, "en", "en-GB", &g, &rep), AM_ERR_INVALID);
    assert_int_equal(tbx_str(doc, "e n", "fr", &g, &rep), AM_ERR_INVALID);
    assert_int_equal(tbx_str(doc, "en", "fr\n", &g, &rep), AM_ERR_INVALID);
    assert_int_equal(tbx_str(doc, "", "", &g, &rep), AM_OK); /* "" = unknown */
    assert_int_equal(am_gloss_parse_tbx(NULL, 3, NULL, NULL, NULL, &g, &rep), AM_ERR_INVALID);
    assert_int_equal(am_gloss_parse_tbx(doc, 9, NULL, NULL, NULL, NULL, &rep), AM_ERR_INVALID);
    /* out must be empty */
    const char *t = "x";
    assert_int_equal(am_gloss_add(&g, "y", &t, 1, 0, 0, NULL), AM_OK);
    assert_int_equal(am_gloss_parse_tbx(doc, 9, NULL, NULL, NULL, &g, &rep), AM_ERR_INVALID);
    assert_int_equal(g.n, 1);
    am_gloss_cleanup(&g);
    /* report may be NULL */
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse_tbx("<x/>", 4, NULL, NULL, NULL, &g, NULL), AM_ERR_PARSE);
    am_gloss_cleanup(&g);
}

/* ---- concurrency and robustness ---------------------------------------------- */

typedef struct thread_arg {
    const char *buf;
    size_t len;
    int failures;
} thread_arg;

static const char thread_bad_doc[] = "<martif><text>\n\n<body></text></martif>";

static void *parse_many(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 100; i++) {
        am_gloss g;
        am_gloss_report rep;
        am_gloss_init(&g);
        /* a good document and a bad one, alternately */
        int bad = i % 2;
        int rc = bad ? am_gloss_parse_tbx(thread_bad_doc, sizeof thread_bad_doc - 1, NULL, NULL,
                                          NULL, &g, &rep)
                     : am_gloss_parse_tbx(a->buf, a->len, NULL, NULL, NULL, &g, &rep);
        if (bad ? (rc != AM_ERR_PARSE || rep.line != 3)
                : (rc != AM_OK || g.n != 8 || strcmp(g.v[7].id, "c5") != 0))
            a->failures++;
        am_gloss_cleanup(&g);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    size_t len;
    char *buf = tu_read(V2_FILE, &len);
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].buf = buf;
        args[i].len = len;
        args[i].failures = 0;
        assert_int_equal(pthread_create(&th[i], NULL, parse_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
    }
    free(buf);
}

/* Every prefix of the samples parses or fails cleanly (never crashes; on
 * error the glossary is empty and the message is set). */
static void test_truncations(void **state)
{
    (void)state;
    const char *files[] = {V2_FILE, V3_FILE};
    for (size_t f = 0; f < 2; f++) {
        size_t len;
        char *buf = tu_read(files[f], &len);
        /* the files end with "</…>\n": anything shorter than len - 1 is cut */
        assert_true(len > 2 && buf[len - 1] == '\n' && buf[len - 2] == '>');
        for (size_t n = 0; n + 1 < len; n += 3) {
            am_gloss g;
            am_gloss_report rep;
            am_gloss_init(&g);
            int rc = am_gloss_parse(buf, n, AM_GLOSS_TBX, NULL, &g, &rep);
            if (rc != AM_ERR_PARSE && rc != AM_ERR_UTF8)
                fail_msg("%s cut at %zu: rc %d", files[f], n, rc);
            assert_int_equal(g.n, 0);
            assert_true(rep.msg[0] != '\0');
            am_gloss_cleanup(&g);
        }
        am_gloss g;
        am_gloss_report rep;
        am_gloss_init(&g);
        assert_int_equal(am_gloss_parse(buf, len - 1, AM_GLOSS_TBX, NULL, &g, &rep), AM_OK);
        assert_true(g.n > 0);
        am_gloss_cleanup(&g);
        free(buf);
    }
}

static int teardown_libxml(void **state)
{
    (void)state;
    xmlCleanupParser(); /* once, at exit: quiets leak checkers */
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_sample),
        cmocka_unit_test(test_v3_sample),
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_autodetect),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_xxe),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_encoding_and_empty),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_truncations),
    };
    return cmocka_run_group_tests(tests, NULL, teardown_libxml);
}
