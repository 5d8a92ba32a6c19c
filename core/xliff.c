/*
 * xliff.c — XLIFF 1.2 / 2.x and TMX readers (see xliff.h for the rules).
 *
 * XLIFF is streamed with libxml2's xmlTextReader: each unit element is
 * expanded alone, turned into segments handed to the caller and freed
 * when the reader moves on, so memory does not grow with the document
 * (no tree, no list of units). The reader has no SAX hooks, so the
 * hardening of xmlsafe.h is kept as: no network, no DTD loading, no
 * entity substitution (the same parser options), the prolog checked as
 * text for any entity declaration or parameter entity reference before
 * libxml2 reads it, any reference to an undeclared entity rejects the
 * document, libxml2's depth and size limits hold. TMX is streamed the same
 * way, one <tu> at a time (issue 25: a tree of a 39 MB memory took 962 MB). A document in another
 * encoding (BOM or XML declaration: UTF-16, windows-1252, ISO-8859-x, …) is decoded to UTF-8 first
 * (textenc.h), so the checks above run on the decoded text; the UTF-8 text is validated and libxml2
 * reads it as UTF-8.
 *
 * This file holds the passes and the entry points; the shared reading is
 * in xliff_read.c, the units of each version in xliff12.c and xliff2.c,
 * TMX in tmx.c (xliff_int.h declares what they share).
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

/* ---- entry points --------------------------------------------------------------- */

void am_xliff_free(am_xliff_doc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nsegs; i++)
        xl_seg_free(&d->segs[i]);
    free(d->segs);
    for (size_t i = 0; i < d->nskips; i++) {
        free(d->skips[i].id);
        free((char *)(uintptr_t)d->skips[i].reason); /* copied by xl_collect */
    }
    free(d->skips);
    for (size_t i = 0; i < d->nsystems; i++)
        free(d->systems[i]);
    free(d->systems);
    free(d->source_lang);
    free(d->target_lang);
    memset(d, 0, sizeof *d);
}

/* The <xliff> root n: version and (2.x) languages into j->d. */
static int xl_root(xl_job *j, xmlNode *n)
{
    am_xliff_doc *d = j->d;
    const char *ver = xl_attr(n, "version", 0);
    const char *href = n->ns && n->ns->href ? (const char *)n->ns->href : "";
    if (!xl_is(n, "xliff"))
        return xl_err(j->rep, AM_ERR_PARSE, xl_line(n, j->line_off),
                      "not an XLIFF document: the root element is <%s>, expected <xliff>",
                      (const char *)n->name);
    if ((ver && ver[0] == '2') || strstr(href, "xliff:document:2"))
        d->version = 20;
    else if ((ver && ver[0] == '1') || strstr(href, "xliff:document:1"))
        d->version = 12;
    else
        return xl_err(j->rep, AM_ERR_PARSE, xl_line(n, j->line_off),
                      "unsupported XLIFF version '%s' (1.2, 2.0, 2.1 and 2.2 are read)",
                      ver ? ver : "");
    if (d->version == 20 && !d->source_lang) {
        const char *sl = xl_attr(n, "srcLang", 0), *tl = xl_attr(n, "trgLang", 0);
        free(d->target_lang); /* pass 2 reads the root again */
        d->source_lang = sl && *sl ? am_xstrdup(sl) : NULL;
        d->target_lang = tl && *tl ? am_xstrdup(tl) : NULL;
    }
    return AM_OK;
}

/* One streaming pass over buf[0..len) with the reader: every unit element
 * is expanded alone (xmlTextReaderExpand), handed to xl_unit12/xl_unit20
 * and dropped when the reader moves past it; a 1.2 <header> is copied
 * until the next <file>. Returns AM_OK or an error in j->rep. */
/* Complexity (issue 15): the reader's event loop, one case per element
 * the two XLIFF versions and the header copy need; the per-unit work is in
 * xl_unit12/xl_unit20. */
static int xl_pass(xl_job *j, const char *buf, size_t len)
{
    xl_rstate st;
    xmlTextReaderPtr r;
    int orc = xl_reader_open(j, &st, buf, len, &r);
    if (orc != AM_OK)
        return orc;
    int rc = AM_OK, seen_root = 0;
    int ret = xmlTextReaderRead(r);
    while (ret == 1 && rc == AM_OK && !j->fn_rc) {
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
            rc = xl_root(j, n);
            ret = xmlTextReaderRead(r);
            continue;
        }
        int v12 = j->d->version == 12;
        if (xl_is(n, "file")) {
            xl_flush(j);
            j->file = j->d->nfiles++;
            if (j->header)
                xmlFreeNode(j->header);
            j->header = NULL;
            if (v12 && !j->d->source_lang) {
                const char *sl = xl_attr(n, "source-language", 0);
                const char *tl = xl_attr(n, "target-language", 0);
                free(j->d->target_lang); /* a <file> without source-language set it */
                j->d->source_lang = sl && *sl ? am_xstrdup(sl) : NULL;
                j->d->target_lang = tl && *tl ? am_xstrdup(tl) : NULL;
            }
            ret = xmlTextReaderRead(r);
        } else if ((v12 && xl_is(n, "trans-unit")) || (!v12 && xl_is(n, "unit")) ||
                   xl_is(n, "header")) {
            xmlNode *u = xmlTextReaderExpand(r);
            if (!u)
                break; /* the error handler has the reason */
            rc = xl_entity_refs(j, u);
            if (rc == AM_OK && xl_is(u, "header")) {
                if (v12 && !j->header && u->parent && xl_is(u->parent, "file"))
                    j->header = xmlCopyNode(u, 1);
            } else if (rc == AM_OK) {
                rc = v12 ? xl_unit12(j, u) : xl_unit20(j, u);
                xl_flush(j);
            }
            ret = xmlTextReaderNext(r);
        } else if (xl_is(n, "notes")) {
            ret = xmlTextReaderNext(r);
        } else {
            ret = xmlTextReaderRead(r);
        }
    }
    xl_flush(j);
    if (rc == AM_OK && !j->fn_rc && (ret < 0 || st.have_err))
        rc = xl_err(j->rep, AM_ERR_PARSE, st.line ? st.line + j->line_off : 0, "malformed XML: %s",
                    st.have_err ? st.msg : "not well-formed");
    if (rc == AM_OK && !j->fn_rc && !seen_root)
        rc = xl_err(j->rep, AM_ERR_PARSE, 0, "malformed XML: no root element");
    xmlFreeTextReader(r);
    if (j->header)
        xmlFreeNode(j->header);
    j->header = NULL;
    return rc;
}

/* am_xliff_each (mt_mode 0) and am_xliff_mt_each (1). */
static int xl_each(const char *buf, size_t len, am_xliff_unit_fn fn, void *ctx, am_xliff_doc *info,
                   am_xliff_report *report, int mt_mode)
{
    am_xliff_report dummy = {0, {0}};
    am_xliff_report *rep = report ? report : &dummy;
    memset(rep, 0, sizeof *rep);
    if (!info)
        return xl_err(rep, AM_ERR_INVALID, 0, "invalid argument");
    memset(info, 0, sizeof *info);
    size_t line_off = 0;
    am_textenc_doc dec;
    int rc = xl_start(&buf, &len, &line_off, &dec, rep);
    if (rc == AM_OK)
        rc = xl_prolog_check(buf, len, line_off, rep);
    if (rc) {
        free(dec.utf8);
        return rc;
    }
    xl_job j;
    memset(&j, 0, sizeof j);
    j.d = info;
    j.line_off = line_off;
    j.rep = rep;
    j.mt_mode = mt_mode;
    am_buf_init(&j.tmp);
    /* pass 1 validates the whole document and counts its files (ids are
     * prefixed when there are several) before anything is handed over:
     * bad input hands over nothing */
    rc = xl_pass(&j, buf, len);
    if (rc == AM_OK && fn) {
        /* languages and systems stay as pass 1 found them (the same ones,
         * in the same order) */
        size_t nfiles = info->nfiles;
        info->nfiles = 0;
        j.file = 0;
        j.prefix = nfiles > 1;
        j.fn = fn;
        j.ctx = ctx;
        rc = xl_pass(&j, buf, len);
        info->nfiles = nfiles;
        if (rc == AM_OK && j.fn_rc)
            rc = j.fn_rc;
    }
    am_buf_cleanup(&j.tmp);
    free(dec.utf8);
    return rc;
}

int am_xliff_each(const char *buf, size_t len, am_xliff_unit_fn fn, void *ctx, am_xliff_doc *info,
                  am_xliff_report *report)
{
    return xl_each(buf, len, fn, ctx, info, report, 0);
}

int am_xliff_mt_each(const char *buf, size_t len, am_xliff_unit_fn fn, void *ctx,
                     am_xliff_doc *info, am_xliff_report *report)
{
    return xl_each(buf, len, fn, ctx, info, report, 1);
}

/* am_xliff_parse's collector: deep copies into the document. */
static int xl_collect(void *ctx, const am_xliff_doc *info, const am_xliff_seg *s,
                      const am_xliff_skip *k)
{
    (void)info;
    am_xliff_doc *d = ctx;
    if (s) {
        if ((d->nsegs & (d->nsegs - 1)) == 0)
            d->segs = am_xrealloc(d->segs, (d->nsegs ? 2 * d->nsegs : 1) * sizeof *d->segs);
        am_xliff_seg *c = &d->segs[d->nsegs++];
        *c = *s;
        c->id = am_xstrdup(s->id);
        c->source = am_xstrdup(s->source);
        c->target = am_xstrdup(s->target);
        for (size_t i = 0; i < s->nhyp; i++)
            c->hyp[i] = am_xstrdup(s->hyp[i]);
    } else {
        if ((d->nskips & (d->nskips - 1)) == 0)
            d->skips = am_xrealloc(d->skips, (d->nskips ? 2 * d->nskips : 1) * sizeof *d->skips);
        d->skips[d->nskips] = *k;
        d->skips[d->nskips].reason = am_xstrdup(k->reason);
        d->skips[d->nskips++].id = am_xstrdup(k->id);
    }
    return 0;
}

/* am_xliff_parse (mt_mode 0) and am_xliff_parse_mt (1). */
static int xl_parse(const char *buf, size_t len, am_xliff_doc *out, am_xliff_report *report,
                    int mt_mode)
{
    if (!out) {
        am_xliff_report dummy = {0, {0}};
        return xl_err(report ? report : &dummy, AM_ERR_INVALID, 0, "invalid argument");
    }
    am_xliff_doc segs;
    memset(&segs, 0, sizeof segs);
    int rc = xl_each(buf, len, xl_collect, &segs, out, report, mt_mode);
    out->segs = segs.segs;
    out->nsegs = segs.nsegs;
    out->skips = segs.skips;
    out->nskips = segs.nskips;
    if (rc)
        am_xliff_free(out);
    return rc;
}

int am_xliff_parse(const char *buf, size_t len, am_xliff_doc *out, am_xliff_report *report)
{
    return xl_parse(buf, len, out, report, 0);
}

int am_xliff_parse_mt(const char *buf, size_t len, am_xliff_doc *out, am_xliff_report *report)
{
    return xl_parse(buf, len, out, report, 1);
}

int am_xliff_looks_xml(const char *buf, size_t len)
{
    return am_textenc_looks_xml(buf, len);
}
