/*
 * tmx.c — TMX memories counted into a vocabulary (am_xliff_tmx_counts*),
 * streamed one <tu> at a time with the XLIFF readers' hardened reader
 * (xliff_read.c).
 */
#include "xliff_int.h"

#include "xliff.h"

#include "lang.h"
#include "text.h"
#include "textenc.h"
#include "xmlsafe.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlreader.h>

/* ---- TMX -------------------------------------------------------------------------- */

static const char *xl_tuv_lang(const xmlNode *tuv)
{
    const char *l = xl_attr(tuv, "lang", 2);
    return l ? l : xl_attr(tuv, "lang", 0);
}

/* One streamed pass over a TMX memory (xl_tmx_pass). */
typedef struct xl_tmx {
    const char *lang; /* the counted language; NULL: only collect languages */
    am_recall_config cfg; /* content words (no stopwords, no background) */
    am_vocab *out; /* borrowed */
    size_t count; /* <seg>s counted */
    am_toks langs; /* the distinct <tuv> languages seen (the first 16) */
    char *srclang; /* the header's srclang (owned) or NULL */
    am_toks words; /* scratch */
} xl_tmx;

/* The <tuv>s of one expanded <tu>: languages collected, the segment in
 * t->lang counted. Returns AM_OK or an error in j->rep. */
static int xl_tmx_tu(xl_job *j, xl_tmx *t, xmlNode *tu)
{
    for (xmlNode *v = tu->children; v; v = v->next) {
        const char *l = xl_is(v, "tuv") ? xl_tuv_lang(v) : NULL;
        xmlNode *seg = l && *l ? xl_child(v, "seg") : NULL;
        if (!seg)
            continue;
        size_t k = 0;
        while (k < t->langs.n && !am_lang_same_canonical(t->langs.v[k], l))
            k++;
        if (k == t->langs.n && t->langs.n < 16)
            am_toks_pushs(&t->langs, l);
        if (!t->lang || !am_lang_same_canonical(l, t->lang))
            continue;
        char *text = xl_text(seg, &j->tmp);
        am_toks_reset(&t->words);
        int rc = am_recall_content_words(&t->cfg, text, &t->words);
        free(text);
        if (rc)
            return xl_err(j->rep, AM_ERR_PARSE, xl_line(seg, j->line_off), "segment text: %s",
                          am_strerror(rc));
        for (size_t i = 0; i < t->words.n; i++)
            am_vocab_add(t->out, t->words.v[i], 1);
        t->count++;
    }
    return AM_OK;
}

/* One streaming pass over the TMX memory buf[0..len) with the reader (the
 * hardening of xl_pass): each <tu> is expanded alone, handed to xl_tmx_tu
 * and dropped, so memory does not grow with the memory's size; comments
 * and text between units are never kept. Returns AM_OK or an error in
 * j->rep. */
/* Complexity (issue 15): the reader's event loop, one case per element. */
static int xl_tmx_pass(xl_job *j, xl_tmx *t, const char *buf, size_t len)
{
    xl_rstate st;
    xmlTextReaderPtr r;
    int orc = xl_reader_open(j, &st, buf, len, &r);
    if (orc != AM_OK)
        return orc;
    int rc = AM_OK, seen_root = 0, seen_body = 0;
    int ret = xmlTextReaderRead(r);
    while (ret == 1 && rc == AM_OK) {
        int type = xmlTextReaderNodeType(r);
        xmlNode *n = xmlTextReaderCurrentNode(r);
        if (type == XML_READER_TYPE_ENTITY_REFERENCE) {
            rc = n ? xl_entity_refs(j, n) : AM_ERR_PARSE;
            break;
        }
        if (type != XML_READER_TYPE_ELEMENT || !n) {
            ret = xmlTextReaderRead(r);
            continue;
        }
        if (!seen_root) {
            seen_root = 1;
            if (!xl_is(n, "tmx"))
                rc = xl_err(j->rep, AM_ERR_PARSE, xl_line(n, j->line_off),
                            "not a TMX document: expected <tmx> with a <body>, the root is <%s>",
                            (const char *)n->name);
            ret = xmlTextReaderRead(r);
        } else if (xl_is(n, "header") && !t->srclang) {
            const char *sl = xl_attr(n, "srclang", 0);
            t->srclang = am_xstrdup(sl ? sl : "");
            ret = xmlTextReaderRead(r);
        } else if (xl_is(n, "tu")) {
            xmlNode *u = xmlTextReaderExpand(r);
            if (!u)
                break; /* the error handler has the reason */
            rc = xl_entity_refs(j, u);
            if (rc == AM_OK)
                rc = xl_tmx_tu(j, t, u);
            ret = xmlTextReaderNext(r);
        } else {
            seen_body |= xl_is(n, "body");
            ret = xmlTextReaderRead(r);
        }
    }
    if (rc == AM_OK && (ret < 0 || st.have_err))
        rc = xl_err(j->rep, AM_ERR_PARSE, st.line ? st.line + j->line_off : 0, "malformed XML: %s",
                    st.have_err ? st.msg : "not well-formed");
    if (rc == AM_OK && (!seen_root || !seen_body))
        rc = xl_err(j->rep, AM_ERR_PARSE, 0, "not a TMX document: expected <tmx> with a <body>%s",
                    seen_root ? "" : " (no root element)");
    xmlFreeTextReader(r);
    return rc;
}

/* Chooses the counted language when none was given: the memory's two
 * languages minus the run's source language run_src (NULL: the header's
 * srclang). Returns a borrowed tag or NULL. */
static const char *xl_tmx_pick(const xl_tmx *t, const char *run_src)
{
    const char *src = run_src ? run_src : t->srclang;
    if (!src || !am_lang_tag_ok(src) || t->langs.n != 2)
        return NULL;
    if (am_lang_same_canonical(t->langs.v[0], src))
        return t->langs.v[1];
    return am_lang_same_canonical(t->langs.v[1], src) ? t->langs.v[0] : NULL;
}

void am_xliff_tmx_rcfg(const am_config *cfg, am_recall_config *out)
{
    am_recall_config_init(out);
    out->tokenizer = am_config_tokenizer(cfg);
    out->norm = cfg->profile == AM_PROFILE_SIMIANER2019 ? AM_NORM_NONE : cfg->norm;
    out->casefold = cfg->profile == AM_PROFILE_SIMIANER2019 ? 0 : !cfg->case_sensitive;
    out->strip_tags = cfg->strip_tags;
}

int am_xliff_tmx_counts(const char *buf, size_t len, const char *lang, const am_recall_config *rcfg,
                        am_vocab *out, char **chosen, size_t *nsegs, am_xliff_report *report)
{
    return am_xliff_tmx_counts_src(buf, len, NULL, lang, rcfg, out, chosen, nsegs, report);
}

/* The memory of pass t against the run's source language src (a valid
 * tag): the header's srclang, when it names a language ("*all*" does
 * not), must be src, and so must one of the <tuv> languages when there
 * are any. Returns AM_OK or AM_ERR_INVALID in rep naming both. */
static int xl_tmx_check_src(const xl_tmx *t, const char *src, am_xliff_report *rep)
{
    const char *h = t->srclang;
    if (h && am_lang_tag_ok(h) && !am_lang_same_canonical(h, src))
        return xl_err(rep, AM_ERR_INVALID, 0,
                      "the memory's header declares srclang %s but the source language is %s: "
                      "count a memory of that language pair",
                      h, src);
    size_t k = 0;
    while (k < t->langs.n && !am_lang_same_canonical(t->langs.v[k], src))
        k++;
    if (t->langs.n == 0 || k < t->langs.n)
        return AM_OK;
    am_buf have;
    am_buf_init(&have);
    for (size_t i = 0; i < t->langs.n; i++)
        am_buf_printf(&have, "%s%s", i ? ", " : "", t->langs.v[i]);
    int rc = xl_err(rep, AM_ERR_INVALID, 0,
                    "the memory has no segment in the source language %s (its languages: %s): "
                    "count a memory of that language pair",
                    src, am_buf_str(&have));
    am_buf_cleanup(&have);
    return rc;
}

/* Complexity (issue 15): argument and document checks, each refusal with
 * its own message and line, then one pass (two when the language is
 * picked) over the memory. */
int am_xliff_tmx_counts_src(const char *buf, size_t len, const char *src, const char *lang,
                            const am_recall_config *rcfg, am_vocab *out, char **chosen,
                            size_t *nsegs, am_xliff_report *report)
{
    am_xliff_report dummy = {0, {0}};
    am_xliff_report *rep = report ? report : &dummy;
    memset(rep, 0, sizeof *rep);
    if (chosen)
        *chosen = NULL;
    if (nsegs)
        *nsegs = 0;
    if (!rcfg || !out)
        return xl_err(rep, AM_ERR_INVALID, 0, "invalid argument");
    if (lang && *lang && !am_lang_tag_ok(lang))
        return xl_err(rep, AM_ERR_INVALID, 0, "invalid language tag");
    if (src && (!*src || !strcmp(src, "und")))
        src = NULL;
    if (src && !am_lang_tag_ok(src))
        return xl_err(rep, AM_ERR_INVALID, 0, "invalid source language tag");
    size_t line_off = 0;
    am_textenc_doc dec;
    int rc = xl_start(&buf, &len, &line_off, &dec, rep);
    if (rc == AM_OK)
        rc = xl_prolog_check(buf, len, line_off, rep);
    am_xliff_doc info;
    memset(&info, 0, sizeof info);
    xl_job j;
    memset(&j, 0, sizeof j);
    j.d = &info;
    j.line_off = line_off;
    j.rep = rep;
    am_buf_init(&j.tmp);
    xl_tmx t;
    memset(&t, 0, sizeof t);
    t.cfg = *rcfg;
    t.cfg.stopwords = NULL;
    t.cfg.background = NULL;
    t.cfg.background_ctx = NULL;
    t.out = out;
    am_toks_init(&t.langs);
    am_toks_init(&t.words);
    char *picked = NULL;
    if (rc == AM_OK && !(lang && *lang)) {
        /* pass 1: the languages, to pick the side that is not srclang */
        rc = xl_tmx_pass(&j, &t, buf, len);
        if (rc == AM_OK && src)
            rc = xl_tmx_check_src(&t, src, rep);
        const char *p = rc == AM_OK ? xl_tmx_pick(&t, src) : NULL;
        if (rc == AM_OK && !p)
            rc = xl_err(rep, AM_ERR_INVALID, 0,
                        "cannot choose the counted language: give it (the memory does not have "
                        "exactly two languages with the %s one of them)",
                        src ? "source language" : "header's srclang");
        picked = p ? am_xstrdup(p) : NULL;
        lang = picked;
        am_toks_reset(&t.langs);
        free(t.srclang);
        t.srclang = NULL;
    }
    t.lang = lang;
    if (rc == AM_OK)
        rc = xl_tmx_pass(&j, &t, buf, len);
    if (rc == AM_OK && src)
        rc = xl_tmx_check_src(&t, src, rep);
    if (rc == AM_OK && t.count == 0) {
        /* no side in the language: an empty vocabulary would make the
         * novel-word results silently equal the standard ones */
        am_buf have;
        am_buf_init(&have);
        for (size_t i = 0; i < t.langs.n; i++)
            am_buf_printf(&have, "%s%s", i ? ", " : "", t.langs.v[i]);
        rc = xl_err(rep, AM_ERR_INVALID, 0, "the memory has no segment in %s (%s%s)", lang,
                    t.langs.n ? "its languages: " : "it has no <tuv> with xml:lang and a <seg>",
                    am_buf_str(&have));
        am_buf_cleanup(&have);
    }
    if (rc == AM_OK && chosen)
        *chosen = am_xstrdup(lang);
    if (rc == AM_OK && nsegs)
        *nsegs = t.count;
    free(picked);
    free(t.srclang);
    am_toks_cleanup(&t.langs);
    am_toks_cleanup(&t.words);
    am_buf_cleanup(&j.tmp);
    free(dec.utf8);
    return rc;
}
