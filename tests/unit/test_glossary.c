/* test_glossary.c — glossary parsers: TICO-19 files, generic CSV/TSV/JSON,
 * malformed input with line numbers, limits, and a small mutation fuzz. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glossary.h"

static const char *const tico_files[] = {
    "data/glossaries/tico19/f_en-cs_CZ.csv",  "data/glossaries/tico19/f_en-de_DE.csv",
    "data/glossaries/tico19/f_en-es_XX.csv",  "data/glossaries/tico19/f_en-fr_XX.csv",
    "data/glossaries/tico19/g_en_cs.csv",     "data/glossaries/tico19/g_en_de.csv",
    "data/glossaries/tico19/g_en_es-419.csv", "data/glossaries/tico19/g_en_fr-FR.csv",
};

/* Counts the data rows of a TICO-19 file independently of the parser: the
 * files hold no quoted newlines, so rows = non-empty lines minus the header;
 * padding rows (empty id and empty strings) start with ",,". */
static void count_rows(const char *buf, size_t len, size_t *rows, size_t *padding)
{
    size_t lines = 0, pad = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        if (j > i) {
            lines++;
            if (j - i >= 2 && buf[i] == ',' && buf[i + 1] == ',')
                pad++;
        }
        i = j + 1;
    }
    *rows = lines - 1;
    *padding = pad;
}

static const am_gloss_entry *find_source(const am_gloss *g, const char *src)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->v[i].source, src) == 0)
            return &g->v[i];
    return NULL;
}

static void test_tico19_files(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof tico_files / sizeof tico_files[0]; f++) {
        size_t len;
        char *buf = tu_read(tico_files[f], &len);
        size_t rows, pad;
        count_rows(buf, len, &rows, &pad);
        am_gloss g;
        am_gloss_init(&g);
        am_gloss_report rep;
        int rc = am_gloss_parse(buf, len, AM_GLOSS_AUTO, NULL, &g, &rep);
        if (rc)
            fail_msg("%s: %s", tico_files[f], rep.msg);
        assert_int_equal(rep.format, AM_GLOSS_CSV);
        assert_true(rep.has_header);
        assert_int_equal(rep.rows, rows);
        assert_int_equal(rep.skipped, pad);
        assert_int_equal(g.n, rows - pad);
        assert_true(g.n > 300);
        for (size_t i = 0; i < g.n; i++) {
            assert_true(g.v[i].source[0] != '\0');
            assert_int_equal(g.v[i].n_targets, 1);
            assert_non_null(g.v[i].id);
            assert_false(g.v[i].forbidden);
            assert_false(g.v[i].case_sensitive);
        }
        /* the first entry of every file */
        const char *nl = strchr(buf, '\n');
        assert_non_null(nl);
        assert_string_equal(g.v[0].id, "1");
        free(buf);
        am_gloss_cleanup(&g);
    }
}

static am_gloss load_file(const char *rel)
{
    size_t len;
    char *buf = tu_read(rel, &len);
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report rep;
    if (am_gloss_parse(buf, len, AM_GLOSS_AUTO, NULL, &g, &rep))
        fail_msg("%s: %s", rel, rep.msg);
    free(buf);
    return g;
}

static void test_tico19_spot_checks(void **state)
{
    (void)state;
    am_gloss g = load_file("data/glossaries/tico19/g_en_fr-FR.csv");
    /* "5 gestes ""barrière""" — doubled quotes inside a quoted field */
    const am_gloss_entry *e = find_source(&g, "Do the Five");
    assert_non_null(e);
    /* (the file has a no-break space after the 5) */
    assert_string_equal(e->targets[0], "5\xC2\xA0gestes \"barrière\"");
    assert_string_equal(e->id, "22");
    /* the description column (quoted, with commas) is skipped, not shifted */
    e = find_source(&g, "contagious");
    assert_non_null(e);
    assert_string_equal(e->targets[0], "contagieux");
    assert_string_equal(e->id, "1");
    e = find_source(&g, "World Health Organization");
    assert_non_null(e);
    assert_string_equal(e->targets[0], "Organisation mondiale de la Santé");
    am_gloss_cleanup(&g);

    g = load_file("data/glossaries/tico19/g_en_de.csv");
    e = find_source(&g, "spread");
    assert_non_null(e);
    /* a comma inside a quoted target is part of the one alternative */
    int found = 0;
    for (size_t i = 0; i < g.n; i++)
        if (strcmp(g.v[i].source, "spread") == 0 &&
            strcmp(g.v[i].targets[0], "sich verbreiten, sich ausbreiten") == 0)
            found = 1;
    assert_true(found);
    am_gloss_cleanup(&g);

    g = load_file("data/glossaries/tico19/f_en-fr_XX.csv");
    e = find_source(&g, "1918 flu");
    assert_non_null(e);
    assert_string_equal(e->targets[0], "Grippe de 1918");
    e = find_source(&g, "acute bronchitis");
    assert_non_null(e);
    assert_string_equal(e->targets[0], "bronchite aiguë");
    am_gloss_cleanup(&g);
}

static int parse_str(const char *s, enum am_gloss_format fmt, am_gloss *g, am_gloss_report *rep)
{
    am_gloss_init(g);
    return am_gloss_parse(s, strlen(s), fmt, NULL, g, rep);
}

static void test_generic_csv(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    const char *csv = "Target,Source,Forbidden,case_sensitive,notes\r\n"
                      "tos seca|tos  seca , dry cough,no,false,x\r\n"
                      "\r\n"
                      "\"COVID-19\",\"COVID-19\",,TRUE,\"a, \"\"b\"\"\"\r\n"
                      "grippe espagnole,Spanish flu,yes,0,\n";
    assert_int_equal(parse_str(csv, AM_GLOSS_AUTO, &g, &rep), AM_OK);
    assert_true(rep.has_header);
    assert_int_equal(rep.format, AM_GLOSS_CSV);
    assert_int_equal(g.n, 3);
    assert_string_equal(g.v[0].source, "dry cough");
    assert_int_equal(g.v[0].n_targets, 2);
    assert_string_equal(g.v[0].targets[0], "tos seca");
    assert_string_equal(g.v[0].targets[1], "tos  seca");
    assert_false(g.v[0].forbidden);
    assert_null(g.v[0].id);
    assert_true(g.v[1].case_sensitive);
    assert_false(g.v[1].forbidden);
    assert_true(g.v[2].forbidden);
    assert_false(g.v[2].case_sensitive);
    am_gloss_cleanup(&g);

    /* no header: two or more columns, source then target */
    assert_int_equal(
        parse_str("fever,fièvre|fébrile\ncough,toux,ignored\n", AM_GLOSS_CSV, &g, &rep), AM_OK);
    assert_false(rep.has_header);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.v[0].targets[1], "fébrile");
    assert_string_equal(g.v[1].source, "cough");
    am_gloss_cleanup(&g);

    /* TSV, auto-detected, without a trailing newline */
    assert_int_equal(
        parse_str("source\ttarget\nhand washing\tlavage des mains", AM_GLOSS_AUTO, &g, &rep),
        AM_OK);
    assert_int_equal(rep.format, AM_GLOSS_TSV);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.v[0].targets[0], "lavage des mains");
    am_gloss_cleanup(&g);

    /* empty input = empty glossary */
    assert_int_equal(parse_str("", AM_GLOSS_AUTO, &g, &rep), AM_OK);
    assert_int_equal(g.n, 0);
    am_gloss_cleanup(&g);
}

static void test_json(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_report rep;
    const char *js = "[{\"source\":\"fever\",\"targets\":[\"fièvre\",\" fébrile \"]},\n"
                     " {\"source\":\"WHO\",\"target\":\"OMS\",\"case_sensitive\":true,\"id\":7},\n"
                     " {\"source\":\"flu\",\"targets\":[\"influenza\"],\"forbidden\":true,"
                     "\"id\":\"x1\",\"note\":1}]";
    assert_int_equal(parse_str(js, AM_GLOSS_AUTO, &g, &rep), AM_OK);
    assert_int_equal(rep.format, AM_GLOSS_JSON);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.v[0].n_targets, 2);
    assert_string_equal(g.v[0].targets[1], "fébrile");
    assert_true(g.v[1].case_sensitive);
    assert_string_equal(g.v[1].id, "7");
    assert_true(g.v[2].forbidden);
    assert_string_equal(g.v[2].id, "x1");
    am_gloss_cleanup(&g);

    assert_int_equal(parse_str("{\"entries\":[{\"source\":\"a\",\"targets\":[\"b\"]}]}",
                               AM_GLOSS_JSON, &g, &rep),
                     AM_OK);
    assert_int_equal(g.n, 1);
    am_gloss_cleanup(&g);
}

struct bad_case {
    const char *text;
    enum am_gloss_format fmt;
    int rc;
    size_t line;
    size_t entry;
};

static void test_malformed(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        /* unterminated quote: reported on the line that opened it */
        {"source,target\na,b\n\"c,d\ne,f\n", AM_GLOSS_CSV, AM_ERR_PARSE, 3, 0},
        {"source,target\na,\"b\"x\n", AM_GLOSS_CSV, AM_ERR_PARSE, 2, 0},
        {"source,target\na,b\nc,\n", AM_GLOSS_CSV, AM_ERR_PARSE, 3, 0},
        {"source,target\na,b\n,d\n", AM_GLOSS_CSV, AM_ERR_PARSE, 3, 0},
        {"source,target\na,b\nc\n", AM_GLOSS_CSV, AM_ERR_PARSE, 3, 0},
        {"a,b\nc\n", AM_GLOSS_CSV, AM_ERR_PARSE, 2, 0},
        {"source,target,forbidden\na,b,maybe\n", AM_GLOSS_CSV, AM_ERR_PARSE, 2, 0},
        {"source,target\na,b\n\"x\ny\",z\nc,\xC3\x28\n", AM_GLOSS_CSV, AM_ERR_UTF8, 5, 0},
        {"source\ttarget\na\tb\nc\t|\n", AM_GLOSS_TSV, AM_ERR_PARSE, 3, 0},
        {"source\ttarget\na\t\xED\xA0\x80\n", AM_GLOSS_TSV, AM_ERR_UTF8, 2, 0},
        {"[{\"source\":\"a\",\"targets\":[\"b\"]},\n {\"source\":\"c\" \"targets\":1}]",
         AM_GLOSS_JSON, AM_ERR_PARSE, 2, 0},
        {"[{\"source\":\"a\",\"targets\":[\"b\"]},\n{\"source\":\"c\",\"targets\":[]}]",
         AM_GLOSS_JSON, AM_ERR_PARSE, 0, 2},
        {"[{\"source\":\"a\",\"targets\":[\"b\"]},{\"targets\":[\"x\"]}]", AM_GLOSS_JSON,
         AM_ERR_PARSE, 0, 2},
        {"[{\"source\":\"a\",\"targets\":[\"b\", 3]}]", AM_GLOSS_JSON, AM_ERR_PARSE, 0, 1},
        {"[{\"source\":\"a\",\"targets\":[\"b\"],\"forbidden\":\"yes\"}]", AM_GLOSS_JSON,
         AM_ERR_PARSE, 0, 1},
        {"[{\"source\":\"  \",\"targets\":[\"b\"]}]", AM_GLOSS_JSON, AM_ERR_PARSE, 0, 1},
        {"{\"glossary\":[]}", AM_GLOSS_JSON, AM_ERR_PARSE, 0, 0},
        {"[1]", AM_GLOSS_JSON, AM_ERR_PARSE, 0, 1},
        {"[{\"source\":\"a\",\"targets\":[\"\\u0000\"]}]", AM_GLOSS_JSON, AM_ERR_PARSE, 1, 0},
        {"\n\n[{\"source\":\"a\",\"targets\":[\"b\"]}", AM_GLOSS_JSON, AM_ERR_PARSE, 3, 0},
        {"[{\"source\":\"\xF4\x90\x80\x80\",\"targets\":[\"b\"]}]", AM_GLOSS_AUTO, AM_ERR_UTF8, 1,
         0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        am_gloss g;
        am_gloss_report rep;
        int rc = parse_str(cases[i].text, cases[i].fmt, &g, &rep);
        if (rc != cases[i].rc || rep.line != cases[i].line || rep.entry != cases[i].entry)
            fail_msg("case %zu: rc %d line %zu entry %zu (%s)", i, rc, rep.line, rep.entry,
                     rep.msg);
        assert_int_equal(g.n, 0);
        assert_true(rep.msg[0] != '\0');
        if (cases[i].line) {
            char want[32];
            snprintf(want, sizeof want, "line %zu", cases[i].line);
            assert_non_null(strstr(rep.msg, want));
        }
        am_gloss_cleanup(&g);
    }

    /* NUL byte inside the buffer (strlen would stop there: pass the length) */
    static const char nul[] = "source,target\na,b\nc,d\0e\n";
    am_gloss g;
    am_gloss_report rep;
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse(nul, sizeof nul - 1, AM_GLOSS_CSV, NULL, &g, &rep), AM_ERR_NUL);
    assert_int_equal(rep.line, 3);
    assert_int_equal(rep.column, 4);
    /* a non-empty glossary is refused as output */
    assert_int_equal(parse_str("a,b\n", AM_GLOSS_CSV, &g, &rep), AM_OK);
    assert_int_equal(am_gloss_parse("c,d\n", 4, AM_GLOSS_CSV, NULL, &g, &rep), AM_ERR_INVALID);
    assert_int_equal(g.n, 1);
    am_gloss_cleanup(&g);
}

static void test_limits(void **state)
{
    (void)state;
    am_gloss_limits lim = am_gloss_limits_default();
    am_gloss g;
    am_gloss_report rep;
    const char *csv = "source,target\na,b\nc,d\ne,f\n";
    lim.max_entries = 2;
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse(csv, strlen(csv), AM_GLOSS_CSV, &lim, &g, &rep), AM_ERR_RANGE);
    assert_int_equal(rep.line, 4);
    assert_int_equal(g.n, 0);
    lim = am_gloss_limits_default();
    lim.max_field_bytes = 3;
    assert_int_equal(am_gloss_parse("a,b\nabcd,e\n", 11, AM_GLOSS_CSV, &lim, &g, &rep),
                     AM_ERR_RANGE);
    assert_int_equal(rep.line, 2);
    lim = am_gloss_limits_default();
    lim.max_targets = 2;
    assert_int_equal(am_gloss_parse("a,b|c|d\n", 8, AM_GLOSS_CSV, &lim, &g, &rep), AM_ERR_RANGE);
    assert_int_equal(am_gloss_parse("[{\"source\":\"a\",\"targets\":[\"b\",\"c\",\"d\"]}]", 40,
                                    AM_GLOSS_JSON, &lim, &g, &rep),
                     AM_ERR_RANGE);
    lim = am_gloss_limits_default();
    lim.max_bytes = 5;
    assert_int_equal(am_gloss_parse(csv, strlen(csv), AM_GLOSS_CSV, &lim, &g, &rep), AM_ERR_RANGE);
    lim = am_gloss_limits_default();
    lim.max_columns = 3;
    assert_int_equal(am_gloss_parse("a,b,c,d\n", 8, AM_GLOSS_CSV, &lim, &g, &rep), AM_ERR_RANGE);
    assert_int_equal(g.n, 0);
    am_gloss_cleanup(&g);
}

static void test_add(void **state)
{
    (void)state;
    am_gloss g;
    am_gloss_init(&g);
    const char *t[] = {"toux", "tousser"};
    assert_int_equal(am_gloss_add(&g, "cough", t, 2, 0, 0, NULL), AM_OK);
    assert_int_equal(am_gloss_add(&g, "", t, 2, 0, 0, NULL), AM_ERR_INVALID);
    assert_int_equal(am_gloss_add(&g, "x", t, 0, 0, 0, NULL), AM_ERR_INVALID);
    const char *bad[] = {"\xC3"};
    assert_int_equal(am_gloss_add(&g, "x", bad, 1, 0, 0, NULL), AM_ERR_UTF8);
    const char *empty[] = {""};
    assert_int_equal(am_gloss_add(&g, "x", empty, 1, 0, 0, NULL), AM_ERR_INVALID);
    assert_int_equal(am_gloss_add(&g, "flu", t, 1, 1, 1, "id9"), AM_OK);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.v[1].id, "id9");
    assert_true(g.v[1].forbidden && g.v[1].case_sensitive);
    am_gloss_cleanup(&g);
    enum am_gloss_format f;
    assert_int_equal(am_gloss_format_parse("tsv", &f), AM_OK);
    assert_int_equal(f, AM_GLOSS_TSV);
    assert_string_equal(am_gloss_format_name(f), "tsv");
    assert_int_equal(am_gloss_format_parse("xml", &f), AM_ERR_INVALID);
}

/* xorshift PRNG: deterministic mutations */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Parses csv with the session languages sl/tl; returns the parse status. */
static int parse_lang(const char *csv, const char *sl, const char *tl, am_gloss *g,
                      am_gloss_report *rep)
{
    am_gloss_init(g);
    return am_gloss_parse_langs(csv, strlen(csv), AM_GLOSS_AUTO, sl, tl, NULL, g, rep);
}

/* A header naming the languages maps columns by language (issue 13 §7). */
static void test_language_header(void **state)
{
    (void)state;
    static const char *const heads[] = {"en,fr",       "English,French", "en-US,fr-FR",
                                        "EN_gb,fr_CA", "eng,fre",        " english , FRENCH ",
                                        "en\tfr"};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        char csv[200];
        int tab = strchr(heads[i], '\t') != NULL;
        snprintf(csv, sizeof csv, "%s\ncat%sle chat\ndog%schien\n", heads[i], tab ? "\t" : ",",
                 tab ? "\t" : ",");
        am_gloss g;
        am_gloss_report rep;
        assert_int_equal(parse_lang(csv, "en", "fr-FR", &g, &rep), AM_OK);
        assert_int_equal(g.n, 2); /* the header is no term entry */
        assert_true(rep.has_header && rep.lang_header);
        assert_string_equal(g.v[0].source, "cat");
        assert_string_equal(g.v[0].targets[0], "le chat");
        am_gloss_cleanup(&g);
        /* without session languages: source, target as written */
        assert_int_equal(parse_lang(csv, NULL, NULL, &g, &rep), AM_OK);
        assert_int_equal(g.n, 2);
        am_gloss_cleanup(&g);
    }
    /* swapped: the header says fr,en */
    am_gloss g;
    am_gloss_report rep;
    assert_int_equal(parse_lang("French,English,note\nle chat,cat,x\n", "en", "fr", &g, &rep),
                     AM_OK);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.v[0].source, "cat");
    assert_string_equal(g.v[0].targets[0], "le chat");
    am_gloss_cleanup(&g);
    /* languages the session does not have: a clear error, nothing read */
    assert_int_equal(parse_lang("de,es\nKatze,gato\n", "en", "fr", &g, &rep), AM_ERR_INVALID);
    assert_int_equal(g.n, 0);
    assert_int_equal(rep.line, 1);
    assert_non_null(strstr(rep.msg, "not the source language en and the target language fr"));
    am_gloss_cleanup(&g);
    /* first rows that are real term pairs stay term pairs */
    static const char *const pairs[] = {"cat,chat\n",  "French fries,frites\n", "en,en\n",
                                        "dog,chien\n", "English,anglais\n",     "fr,frère\n"};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        assert_int_equal(parse_lang(pairs[i], "en", "fr", &g, &rep), AM_OK);
        assert_int_equal(g.n, 1);
        assert_false(rep.has_header);
        am_gloss_cleanup(&g);
    }
}

static void test_fuzz(void **state)
{
    (void)state;
    static const char *const seeds[] = {
        "source,target,case_sensitive,forbidden,id\n\"a,\"\"b\",c|d,true,no,1\ne,f,,,\n",
        "[{\"source\":\"a\",\"targets\":[\"b\",\"c\"],\"forbidden\":true,\"id\":3}]",
        "s\tt\nx\ty|z\n",
    };
    static const char alphabet[] = ",\"\n\r\t|[]{}:a\\\xC3\xA9\xFF\x00 ";
    uint64_t rs = 0x9E3779B97F4A7C15ull;
    size_t ok = 0, err = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t n0 = strlen(seeds[s]);
        char buf[256];
        for (int it = 0; it < 3000; it++) {
            size_t n = n0;
            memcpy(buf, seeds[s], n);
            int muts = 1 + (int)(rng_next(&rs) % 4);
            for (int m = 0; m < muts; m++) {
                size_t pos = (size_t)(rng_next(&rs) % (n + 1));
                char c = alphabet[rng_next(&rs) % (sizeof alphabet - 1)];
                switch (rng_next(&rs) % 3) {
                case 0: /* replace */
                    if (pos < n)
                        buf[pos] = c;
                    break;
                case 1: /* insert */
                    if (n + 1 < sizeof buf) {
                        memmove(buf + pos + 1, buf + pos, n - pos);
                        buf[pos] = c;
                        n++;
                    }
                    break;
                default: /* truncate */ n = pos;
                }
            }
            am_gloss g;
            am_gloss_init(&g);
            am_gloss_report rep;
            int rc = am_gloss_parse(buf, n, (enum am_gloss_format)(it % 4), NULL, &g, &rep);
            if (rc == AM_OK) {
                ok++;
                for (size_t i = 0; i < g.n; i++) {
                    assert_true(g.v[i].source[0] != '\0');
                    assert_true(g.v[i].n_targets >= 1);
                }
            } else {
                err++;
                assert_int_equal(g.n, 0);
                assert_true(rep.msg[0] != '\0');
            }
            am_gloss_cleanup(&g);
        }
    }
    assert_true(ok > 0);
    assert_true(err > 0);

    /* every prefix of a real file parses or fails cleanly */
    size_t len;
    char *file = tu_read("data/glossaries/tico19/g_en_fr-FR.csv", &len);
    for (size_t n = 0; n < len; n += 97) {
        am_gloss g;
        am_gloss_init(&g);
        am_gloss_report rep;
        int rc = am_gloss_parse(file, n, AM_GLOSS_AUTO, NULL, &g, &rep);
        assert_true(rc == AM_OK || rc == AM_ERR_PARSE || rc == AM_ERR_UTF8);
        am_gloss_cleanup(&g);
    }
    free(file);
}

/* A packed glossary (am_gloss_pack) and a relocated copy of it
 * (am_gloss_copy_packed) hold the same entries in the same order as the
 * parse, in one block of fewer bytes than the parse's allocations; the
 * copy lives on after the original is freed (its pointers are its own). */
static void test_pack(void **state)
{
    (void)state;
    const char *js = "[{\"source\":\"Big Cat\",\"targets\":[\"gros chat\",\"chat\"],"
                     "\"case_sensitive\":true,\"id\":\"e1\"},"
                     "{\"source\":\"dog\",\"targets\":[\"chien\"],\"forbidden\":true},"
                     "{\"source\":\"été\",\"targets\":[\"summer\"]}]";
    am_gloss ref, g, cp;
    am_gloss_report rep;
    am_gloss_init(&ref);
    am_gloss_init(&g);
    assert_int_equal(am_gloss_parse(js, strlen(js), AM_GLOSS_JSON, NULL, &ref, &rep), AM_OK);
    assert_int_equal(am_gloss_parse(js, strlen(js), AM_GLOSS_JSON, NULL, &g, &rep), AM_OK);
    size_t loose = am_gloss_bytes(&g, 16);
    am_gloss_pack(&g);
    assert_non_null(g.block);
    assert_true(am_gloss_bytes(&g, 16) < loose);
    am_gloss_copy_packed(&g, &cp);
    assert_ptr_not_equal(cp.block, g.block);
    am_gloss_cleanup(&g); /* the copy does not point into it */
    assert_int_equal(ref.n, 3);
    assert_int_equal(cp.n, ref.n);
    for (size_t i = 0; i < ref.n; i++) {
        const am_gloss_entry *a = &ref.v[i], *b = &cp.v[i];
        assert_string_equal(a->source, b->source);
        assert_int_equal(a->n_targets, b->n_targets);
        for (size_t k = 0; k < a->n_targets; k++)
            assert_string_equal(a->targets[k], b->targets[k]);
        assert_int_equal(a->case_sensitive, b->case_sensitive);
        assert_int_equal(a->forbidden, b->forbidden);
        if (a->id)
            assert_string_equal(a->id, b->id);
        else
            assert_null(b->id);
    }
    assert_string_equal(cp.v[0].id, "e1");
    /* an empty glossary stays unpacked (nothing to keep) */
    am_gloss e;
    am_gloss_init(&e);
    am_gloss_pack(&e);
    assert_null(e.block);
    am_gloss_cleanup(&cp);
    am_gloss_cleanup(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tico19_files),
        cmocka_unit_test(test_tico19_spot_checks),
        cmocka_unit_test(test_generic_csv),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_language_header),
        cmocka_unit_test(test_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
