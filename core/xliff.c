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
 */
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

/* ---- hardened XML reading -------------------------------------------------- */

/* Formats an error into rep (may be NULL) and returns rc. */
static int xl_err(am_xliff_report *rep, int rc, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int xl_err(am_xliff_report *rep, int rc, size_t line, const char *fmt, ...)
{
    if (rep && !rep->msg[0]) {
        rep->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rep->msg, sizeof rep->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int xl_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 1-based line of byte offset off in buf. */
static size_t xl_line_of(const char *buf, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off; i++)
        line += buf[i] == '\n';
    return line;
}

/* The checks every XML input starts with: the buffer (NULL only when len
 * is 0) is valid UTF-8 without NUL and not larger than libxml2 takes; a BOM
 * and leading whitespace are skipped (*buf, *len advanced, *line_off = the
 * lines skipped). Returns AM_OK or an error filled into rep. */
static int xl_start(const char **buf, size_t *len, size_t *line_off, am_textenc_doc *dec,
                    am_xliff_report *rep)
{
    *line_off = 0;
    memset(dec, 0, sizeof *dec);
    if (!*buf && *len)
        return xl_err(rep, AM_ERR_INVALID, 0, "invalid argument");
    if (*len > (size_t)INT_MAX)
        return xl_err(rep, AM_ERR_RANGE, 0, "XML document larger than %d bytes", INT_MAX);
    if (!*buf)
        *buf = "";
    /* a document in UTF-16, windows-1252, ISO-8859-x … (BOM or XML
     * declaration) is decoded to UTF-8 first: everything below, the
     * hardening included, reads the decoded text */
    am_buf emsg;
    am_buf_init(&emsg);
    int rc = am_textenc_xml(*buf, *len, dec, &emsg);
    if (rc) {
        xl_err(rep, rc, 0, "%s", am_buf_str(&emsg));
        am_buf_cleanup(&emsg);
        return rc;
    }
    am_buf_cleanup(&emsg);
    if (dec->utf8) {
        *buf = dec->utf8;
        *len = dec->len;
    }
    const char *b = *buf;
    size_t n = *len, bad = 0;
    rc = am_text_validate(b, n, &bad);
    if (rc)
        return xl_err(rep, rc, xl_line_of(b, bad), "%s at byte %zu%s",
                      rc == AM_ERR_NUL ? "NUL byte" : "invalid UTF-8", bad,
                      rc == AM_ERR_UTF8 && !dec->utf8
                          ? " (read as UTF-8: no byte order mark, and the XML declaration names "
                            "UTF-8 or no encoding; if the file is in another one, declare it, "
                            "e.g. encoding=\"windows-1252\")"
                          : "");
    size_t i = 0;
    if (n >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && xl_is_space(b[i]))
        *line_off += b[i++] == '\n';
    if (i == n)
        return xl_err(rep, AM_ERR_PARSE, 0, "empty XML document");
    *buf = b + i;
    *len = n - i;
    return AM_OK;
}

/* ---- DOM helpers ------------------------------------------------------------- */

/* True when n is an element with local name name (any namespace). */
static int xl_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* First child element of n named name, or NULL (borrowed). */
static xmlNode *xl_child(const xmlNode *n, const char *name)
{
    for (xmlNode *c = n ? n->children : NULL; c; c = c->next)
        if (xl_is(c, name))
            return c;
    return NULL;
}

/* Value of n's attribute with local name name: without a namespace when
 * any_ns is 0, in any namespace (prefixed or not) when 1, only in the xml:
 * namespace when 2. Borrowed text of the attribute's first text child, or
 * NULL ("" for an empty attribute). */
static const char *xl_attr(const xmlNode *n, const char *name, int any_ns)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0)
            continue;
        if (any_ns == 0 && a->ns)
            continue;
        if (any_ns == 2 &&
            !(a->ns && a->ns->href &&
              strcmp((const char *)a->ns->href, (const char *)XML_XML_NAMESPACE) == 0))
            continue;
        if (a->children && a->children->type == XML_TEXT_NODE && !a->children->next)
            return (const char *)a->children->content;
        return "";
    }
    return NULL;
}

static size_t xl_line(const xmlNode *n, size_t line_off)
{
    long l = xmlGetLineNo(n);
    return l > 0 ? (size_t)l + line_off : 0;
}

/* Inline codes dropped with their content. */
static int xl_is_code(const xmlNode *n)
{
    static const char *const codes[] = {"x",  "bx", "ex", "ph", "bpt", "ept",
                                        "it", "sc", "ec", "cp", "sub"};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (xl_is(n, codes[i]))
            return 1;
    return 0;
}

/* Appends the translatable text under n (children only) to b. libxml2's
 * depth limit bounds the recursion. */
static void xl_text_rec(const xmlNode *n, am_buf *b)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                am_buf_appends(b, (const char *)c->content);
        } else if (c->type == XML_ELEMENT_NODE && !xl_is_code(c)) {
            xl_text_rec(c, b);
        }
    }
}

/* Translatable text of element n, whitespace collapsed and trimmed; caller
 * frees. tmp is scratch. */
static char *xl_text(const xmlNode *n, am_buf *tmp)
{
    am_buf_reset(tmp);
    if (n)
        xl_text_rec(n, tmp);
    am_buf out;
    am_buf_init(&out);
    int space = 0;
    for (size_t i = 0; i < tmp->len; i++) {
        char ch = tmp->data[i];
        if (xl_is_space(ch)) {
            space = 1;
            continue;
        }
        if (space && out.len)
            am_buf_appendc(&out, ' ');
        space = 0;
        am_buf_appendc(&out, ch);
    }
    return am_buf_detach(&out);
}

/* Finds the <mrk mtype="seg" mid=mid> under n (borrowed) or NULL. */
static xmlNode *xl_find_mrk(xmlNode *n, const char *mid)
{
    if (!n)
        return NULL;
    for (xmlNode *c = n->children; c; c = am_xmlsafe_walk(c, n, 1)) {
        if (xl_is(c, "mrk")) {
            const char *t = xl_attr(c, "mtype", 0), *m = xl_attr(c, "mid", 0);
            if (t && !strcmp(t, "seg") && m && !strcmp(m, mid))
                return c;
        }
    }
    return NULL;
}

/* ---- the document being read ---------------------------------------------------- */

typedef struct xl_job {
    am_xliff_doc *d; /* version, languages, files, systems (no segs/skips) */
    size_t line_off;
    size_t file; /* current <file> index */
    xmlNode *header; /* a copy of the current 1.2 <header> (phases; owned) or NULL */
    am_buf tmp;
    am_xliff_report *rep;
    int prefix; /* ids get the "fN." prefix (several <file>s) */
    am_xliff_unit_fn fn; /* NULL: a validating pass */
    void *ctx;
    am_xliff_seg cur; /* the segment being built (its hypotheses are added) */
    int has_cur;
    int fn_rc; /* a non-zero return of fn: stop with it */
    int mt_mode; /* am_xliff_mt_each: targets are MT pre-translations */
} xl_job;

static void xl_fix_id(char **id, size_t file, int prefix);

static void xl_seg_free(am_xliff_seg *s)
{
    free(s->id);
    free(s->source);
    free(s->target);
    for (size_t k = 0; k < s->nhyp; k++)
        free(s->hyp[k]);
    memset(s, 0, sizeof *s);
}

/* Hands the segment being built to the callback and frees it. */
static void xl_flush(xl_job *j)
{
    if (!j->has_cur)
        return;
    j->has_cur = 0;
    if (j->fn && !j->fn_rc) {
        xl_fix_id(&j->cur.id, j->cur.file, j->prefix);
        j->fn_rc = j->fn(j->ctx, j->d, &j->cur, NULL);
    }
    xl_seg_free(&j->cur);
}

static void xl_skip(xl_job *j, const char *id, const char *reason)
{
    xl_flush(j);
    if (!j->fn || j->fn_rc)
        return;
    am_xliff_skip k = {am_xstrdup(id), reason, j->file};
    xl_fix_id(&k.id, k.file, j->prefix);
    j->fn_rc = j->fn(j->ctx, j->d, NULL, &k);
    free(k.id);
}

/* Index of system name in the document, added when new; SIZE_MAX when
 * there would be more than AM_XLIFF_MAX_SYSTEMS. */
static size_t xl_system(am_xliff_doc *d, const char *name)
{
    for (size_t i = 0; i < d->nsystems; i++)
        if (!strcmp(d->systems[i], name))
            return i;
    if (d->nsystems == AM_XLIFF_MAX_SYSTEMS)
        return SIZE_MAX;
    d->systems = am_xrealloc(d->systems, (d->nsystems + 1) * sizeof *d->systems);
    d->systems[d->nsystems] = am_xstrdup(name);
    return d->nsystems++;
}

/* Starts a new confirmed segment (strings taken) after handing over the
 * previous one; returns it (borrowed, valid until the next push/skip). */
static am_xliff_seg *xl_push(xl_job *j, const char *id, char *source, char *target)
{
    xl_flush(j);
    am_xliff_seg *s = &j->cur;
    memset(s, 0, sizeof *s);
    s->id = am_xstrdup(id);
    s->source = source;
    s->target = target;
    s->file = j->file;
    j->has_cur = 1;
    return s;
}

/* Adds hypothesis text (taken) of system name to s; a second candidate of
 * the same system in one segment is dropped (the first wins). */
static int xl_add_hyp(xl_job *j, am_xliff_seg *s, const char *name, char *text, size_t line)
{
    size_t k = xl_system(j->d, name);
    if (k == SIZE_MAX) {
        free(text);
        return xl_err(j->rep, AM_ERR_PARSE, line, "more than %d MT systems", AM_XLIFF_MAX_SYSTEMS);
    }
    for (size_t i = 0; i < s->nhyp; i++)
        if (s->sys[i] == k) {
            free(text);
            return AM_OK;
        }
    s->sys[s->nhyp] = k;
    s->hyp[s->nhyp++] = text;
    return AM_OK;
}

/* ---- XLIFF 1.2 ------------------------------------------------------------------ */

static int xl_in_list(const char *v, const char *const *list, size_t n)
{
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (am_ascii_ieq(v, list[i]))
            return 1;
    return 0;
}

/* Trados' <sdl:seg id=mid …> of trans-unit tu (mid NULL: the first);
 * borrowed or NULL. */
static xmlNode *xl_sdl_seg(xmlNode *tu, const char *mid)
{
    for (xmlNode *c = tu->children; c; c = am_xmlsafe_walk(c, tu, 1)) {
        if (xl_is(c, "seg") && c->parent && xl_is(c->parent, "seg-defs")) {
            const char *id = xl_attr(c, "id", 0);
            if (!mid || (id && !strcmp(id, mid)))
                return c;
        }
    }
    return NULL;
}

/* The conf of Trados' <sdl:seg> of the segment; borrowed or NULL. */
static const char *xl_sdl_conf(xmlNode *tu, const char *mid)
{
    xmlNode *sg = xl_sdl_seg(tu, mid);
    return sg ? xl_attr(sg, "conf", 0) : NULL;
}

/* Whether the target of a 1.2 segment of a pre-translated file is machine
 * translation, by the CAT tools' origin markers (see am_xliff_mt_each):
 * returns 1 with *name the system (borrowed; "mt" when unnamed), or 0 with
 * the reason in why (size cap) when a marker says another origin. */
static int xl_mt_origin12(xmlNode *tu, xmlNode *target, const char *mid, const char **name,
                          char *why, size_t cap)
{
    static const char *const tm_sq[] = {
        "exact-match",          "fuzzy-match",         "id-match",
        "leveraged-glossary",   "leveraged-inherited", "leveraged-mt",
        "leveraged-repository", "leveraged-tm"};
    *name = "mt";
    xmlNode *sg = xl_sdl_seg(tu, mid);
    const char *o = sg ? xl_attr(sg, "origin", 0) : NULL;
    if (o && *o) { /* Trados: sdl:seg origin, origin-system */
        if (am_ascii_ieq(o, "mt") || am_ascii_ieq(o, "nmt") || am_ascii_ieq(o, "adaptive-mt")) {
            const char *sys = xl_attr(sg, "origin-system", 0);
            *name = sys && *sys ? sys : "mt";
            return 1;
        }
        snprintf(why, cap, "pre-translated from %.40s, not MT (Trados sdl:seg origin)", o);
        return 0;
    }
    const char *po = xl_attr(tu, "trans-origin", 1); /* Phrase m:trans-origin */
    if (po && *po && !am_ascii_ieq(po, "null")) {
        if (am_ascii_ieq(po, "mt"))
            return 1;
        snprintf(why, cap, "pre-translated from %.40s, not MT (Phrase m:trans-origin)", po);
        return 0;
    }
    for (const xmlAttr *a = tu->properties; a; a = a->next) { /* memoQ mq:status */
        if (!a->ns || strcmp((const char *)a->name, "status"))
            continue;
        const char *v = xl_attr(tu, "status", 1);
        if (v && am_ascii_ieq(v, "MachineTranslated"))
            return 1;
        if (v && am_ascii_ieq(v, "PreTranslated")) {
            snprintf(why, cap, "pre-translated from a TM, not MT (memoQ mq:status)");
            return 0;
        }
    }
    const char *sq = target ? xl_attr(target, "state-qualifier", 0) : NULL;
    if (sq && xl_in_list(sq, tm_sq, sizeof tm_sq / sizeof tm_sq[0]) && strcmp(sq, "leveraged-mt")) {
        snprintf(why, cap, "pre-translated from a TM, not MT (state-qualifier=%.32s)", sq);
        return 0;
    }
    return 1; /* no marker: the file is the MT pass */
}

/* Whether a 1.2 segment is confirmed (see xliff.h). */
static int xl_confirmed12(xmlNode *tu, xmlNode *target, const char *mid)
{
    static const char *const states[] = {"final", "signed-off", "translated"};
    static const char *const sdl[] = {"Translated", "ApprovedTranslation", "ApprovedSignOff"};
    static const char *const mq[] = {"ManuallyConfirmed", "Reviewer1Confirmed",
                                     "Reviewer2Confirmed", "Proofread", "Confirmed"};
    static const char *const yes[] = {"1", "true", "yes"};
    if (target && xl_in_list(xl_attr(target, "state", 0), states, 3))
        return 1;
    const char *ap = xl_attr(tu, "approved", 0);
    if (ap && !strcmp(ap, "yes"))
        return 1;
    if (xl_in_list(xl_sdl_conf(tu, mid), sdl, 3))
        return 1;
    for (const xmlAttr *a = tu->properties; a; a = a->next) {
        if (!a->ns)
            continue;
        const char *v = xl_attr(tu, (const char *)a->name, 1);
        if (!strcmp((const char *)a->name, "status") && xl_in_list(v, mq, 5))
            return 1;
        if (!strcmp((const char *)a->name, "confirmed") && xl_in_list(v, yes, 3))
            return 1;
    }
    return 0;
}

/* The header <phase> named name (borrowed) or NULL. */
static xmlNode *xl_phase(const xl_job *j, const char *name)
{
    if (!j->header || !name)
        return NULL;
    for (xmlNode *c = j->header->children; c; c = am_xmlsafe_walk(c, j->header, 1))
        if (xl_is(c, "phase")) {
            const char *pn = xl_attr(c, "phase-name", 0);
            if (pn && !strcmp(pn, name))
                return c;
        }
    return NULL;
}

static int xl_mt_process(const char *p)
{
    if (!p)
        return 0;
    if (am_ascii_ieq(p, "mt"))
        return 1;
    return strncmp(p, "machine", 7) == 0 || strncmp(p, "Machine", 7) == 0 ||
           strncmp(p, "MT ", 3) == 0 || strncmp(p, "mt ", 3) == 0;
}

/* True when a tool or origin name says machine translation: "mt" or
 * "MT-…"/"MT …"/"…-MT" (any case), or a name holding "machine". */
static int xl_mt_word(const char *v)
{
    if (!v || !*v)
        return 0;
    size_t n = strlen(v);
    if (am_ascii_ieq(v, "mt") || (n > 3 && (v[0] == 'm' || v[0] == 'M') &&
                                  (v[1] == 't' || v[1] == 'T') && (v[2] == '-' || v[2] == ' ')))
        return 1;
    if (n > 3 && (v[n - 3] == '-' || v[n - 3] == ' ') && (v[n - 2] == 'm' || v[n - 2] == 'M') &&
        (v[n - 1] == 't' || v[n - 1] == 'T'))
        return 1;
    for (size_t i = 0; i + 7 <= n; i++)
        if (!strncmp(v + i, "machine", 7) || !strncmp(v + i, "Machine", 7))
            return 1;
    return 0;
}

/* The language of alt-trans a: its <target>'s xml:lang, else its own
 * (borrowed), else NULL. */
static const char *xl_alt_lang(xmlNode *a)
{
    xmlNode *tgt = xl_child(a, "target");
    const char *l = tgt ? xl_attr(tgt, "lang", 2) : NULL;
    if (!l || !*l)
        l = xl_attr(a, "lang", 2);
    return l && *l ? l : NULL;
}

/* Why candidate language lang is not the document's target language
 * (written into why, size cap), or 0 when it is (or either is unknown). */
static int xl_wrong_lang(const xl_job *j, const char *what, const char *lang, char *why, size_t cap)
{
    const am_xliff_doc *d = j->d;
    if (!lang || !d->target_lang || am_lang_same_canonical(lang, d->target_lang))
        return 0;
    if (d->source_lang && am_lang_same_canonical(lang, d->source_lang))
        snprintf(why, cap, "%s in the source language (%.24s)", what, lang);
    else
        snprintf(why, cap, "%s in %.24s, not the target language %.24s", what, lang,
                 d->target_lang);
    return 1;
}

/* If alt-trans a is an MT proposal in the target language, its system
 * name (borrowed; "mt" when it has none); else NULL with the reason in why
 * (size cap). */
static const char *xl_mt_name(const xl_job *j, xmlNode *a, char *why, size_t cap)
{
    const char *type = xl_attr(a, "alttranstype", 0);
    if (type && strcmp(type, "proposal")) {
        snprintf(why, cap, "alt-trans of type %.40s, not an MT proposal", type);
        return NULL;
    }
    if (xl_wrong_lang(j, "alt-trans", xl_alt_lang(a), why, cap))
        return NULL;
    const char *origin = xl_attr(a, "origin", 0), *tool = xl_attr(a, "tool-id", 0);
    const char *mtype = xl_attr(a, "matchType", 1); /* Okapi okp:matchType */
    xmlNode *ph = xl_phase(j, xl_attr(a, "phase-name", 0));
    xmlNode *tgt = xl_child(a, "target");
    const char *sq = tgt ? xl_attr(tgt, "state-qualifier", 0) : NULL;
    int mt = (sq && !strcmp(sq, "mt-suggestion")) ||
             (ph && xl_mt_process(xl_attr(ph, "process-name", 0))) || xl_mt_word(origin) ||
             xl_mt_word(tool) || (mtype && am_ascii_ieq(mtype, "mt")) ||
             ((origin || tool) && !xl_attr(a, "match-quality", 0));
    if (!mt) {
        snprintf(why, cap, "%s",
                 xl_attr(a, "match-quality", 0)
                     ? "alt-trans not marked as MT (a TM match: match-quality, no MT origin)"
                     : "alt-trans not marked as MT (no origin, tool-id, MT phase or "
                       "state-qualifier)");
        return NULL;
    }
    if (origin && *origin)
        return origin;
    if (tool && *tool)
        return tool;
    const char *pt = ph ? xl_attr(ph, "tool-id", 0) : NULL;
    if (!pt && ph)
        pt = xl_attr(ph, "tool", 0);
    return pt && *pt ? pt : "mt";
}

/* One 1.2 segment: mid NULL for an unsegmented trans-unit, else the mrk's
 * mid (src/tgt: the seg mrk elements or the source/target). */
static int xl_seg12(xl_job *j, xmlNode *tu, const char *id, const char *mid, xmlNode *src,
                    xmlNode *tgt, xmlNode *tgt_el, int single)
{
    char *target = tgt ? xl_text(tgt, &j->tmp) : NULL;
    if (!target || !*target) {
        free(target);
        xl_skip(j, id, "no target");
        return AM_OK;
    }
    if (j->mt_mode) {
        const char *sys;
        char why[112];
        if (!xl_mt_origin12(tu, tgt_el, mid, &sys, why, sizeof why)) {
            free(target);
            xl_skip(j, id, why);
            return AM_OK;
        }
        am_xliff_seg *s = xl_push(j, id, xl_text(src, &j->tmp), target);
        return xl_add_hyp(j, s, sys, am_xstrdup(target), xl_line(tu, j->line_off));
    }
    if (!xl_confirmed12(tu, tgt_el, mid)) {
        free(target);
        xl_skip(j, id, "unconfirmed");
        return AM_OK;
    }
    am_xliff_seg *s = xl_push(j, id, xl_text(src, &j->tmp), target);
    for (xmlNode *a = tu->children; a; a = a->next) {
        if (!xl_is(a, "alt-trans"))
            continue;
        char why[sizeof s->dropped];
        const char *name = xl_mt_name(j, a, why, sizeof why);
        xmlNode *at = xl_child(a, "target");
        if (!name && !s->dropped[0])
            memcpy(s->dropped, why, sizeof why);
        if (!name || !at)
            continue;
        const char *amid = xl_attr(a, "mid", 0);
        xmlNode *text_el = NULL;
        if (mid) {
            if (amid)
                text_el = strcmp(amid, mid) ? NULL : at;
            else
                text_el = xl_find_mrk(at, mid);
            if (!text_el && !amid && single)
                text_el = at;
        } else {
            text_el = at;
        }
        if (!text_el)
            continue;
        int rc = xl_add_hyp(j, s, name, xl_text(text_el, &j->tmp), xl_line(a, j->line_off));
        if (rc)
            return rc;
    }
    if (!s->nhyp && !s->dropped[0])
        snprintf(s->dropped, sizeof s->dropped, "the unit has no alt-trans");
    return AM_OK;
}

/* Opens unit element u (<trans-unit> or <unit>): *id receives its id
 * (borrowed), or NULL when the unit is skipped for translate="no" (the skip
 * is recorded). Returns AM_OK, or AM_ERR_PARSE when u has no id. */
static int xl_unit_open(xl_job *j, xmlNode *u, const char **id)
{
    *id = xl_attr(u, "id", 0);
    if (!*id || !**id)
        return xl_err(j->rep, AM_ERR_PARSE, xl_line(u, j->line_off), "<%s> without an id attribute",
                      (const char *)u->name);
    const char *tr = xl_attr(u, "translate", 0);
    if (tr && !strcmp(tr, "no")) {
        xl_skip(j, *id, "translate=no");
        *id = NULL;
    }
    return AM_OK;
}

static int xl_unit12(xl_job *j, xmlNode *tu)
{
    const char *id;
    int rc = xl_unit_open(j, tu, &id);
    if (rc || !id)
        return rc;
    xmlNode *src = xl_child(tu, "source"), *tgt = xl_child(tu, "target");
    xmlNode *segsrc = xl_child(tu, "seg-source");
    size_t nmrk = 0;
    if (segsrc)
        for (xmlNode *c = segsrc->children; c; c = am_xmlsafe_walk(c, segsrc, 1))
            if (xl_is(c, "mrk") && xl_attr(c, "mtype", 0) &&
                !strcmp(xl_attr(c, "mtype", 0), "seg") && xl_attr(c, "mid", 0))
                nmrk++;
    if (nmrk == 0)
        return xl_seg12(j, tu, id, NULL, src, tgt, tgt, 1);
    am_buf sid;
    am_buf_init(&sid);
    for (xmlNode *c = segsrc->children; c && rc == AM_OK; c = am_xmlsafe_walk(c, segsrc, 1)) {
        if (!(xl_is(c, "mrk") && xl_attr(c, "mtype", 0) && !strcmp(xl_attr(c, "mtype", 0), "seg")))
            continue;
        const char *mid = xl_attr(c, "mid", 0);
        if (!mid)
            continue;
        am_buf_reset(&sid);
        am_buf_appends(&sid, id);
        if (nmrk > 1) {
            am_buf_appendc(&sid, '.');
            am_buf_appends(&sid, mid);
        }
        rc = xl_seg12(j, tu, am_buf_str(&sid), mid, c, xl_find_mrk(tgt, mid), tgt, nmrk == 1);
    }
    am_buf_cleanup(&sid);
    return rc;
}

/* ---- XLIFF 2.x ------------------------------------------------------------------ */

/* True when match reference ref ("#s1", "#/f=f1/u=u1/s1", "s1") names
 * segment id sid. */
static int xl_ref_names(const char *ref, const char *sid)
{
    if (!ref || !sid)
        return 0;
    const char *r = strrchr(ref, '/');
    r = r ? r + 1 : (ref[0] == '#' ? ref + 1 : ref);
    const char *eq = strchr(r, '=');
    if (eq)
        r = eq + 1;
    return strcmp(r, sid) == 0;
}

static int xl_unit20(xl_job *j, xmlNode *u)
{
    const char *id;
    int rc = xl_unit_open(j, u, &id);
    if (rc || !id)
        return rc;
    size_t nseg = 0;
    for (xmlNode *c = u->children; c; c = c->next)
        nseg += xl_is(c, "segment");
    xmlNode *matches = xl_child(u, "matches");
    static const char *const states[] = {"translated", "reviewed", "final"};
    am_buf sid;
    am_buf_init(&sid);
    size_t idx = 0;
    for (xmlNode *sg = u->children; sg && rc == AM_OK; sg = sg->next) {
        if (!xl_is(sg, "segment"))
            continue;
        idx++;
        const char *segid = xl_attr(sg, "id", 0);
        am_buf_reset(&sid);
        am_buf_appends(&sid, id);
        if (nseg > 1) {
            if (segid)
                am_buf_printf(&sid, ".%s", segid);
            else
                am_buf_printf(&sid, ".%zu", idx);
        }
        const char *sidv = am_buf_str(&sid);
        char *target = xl_text(xl_child(sg, "target"), &j->tmp);
        if (!xl_child(sg, "target") || !*target) {
            free(target);
            xl_skip(j, sidv, "no target");
            continue;
        }
        if (j->mt_mode) { /* 2.x has no origin marker on a target */
            am_xliff_seg *s = xl_push(j, sidv, xl_text(xl_child(sg, "source"), &j->tmp), target);
            rc = xl_add_hyp(j, s, "mt", am_xstrdup(target), xl_line(sg, j->line_off));
            continue;
        }
        if (!xl_in_list(xl_attr(sg, "state", 0), states, 3)) {
            free(target);
            xl_skip(j, sidv, "unconfirmed");
            continue;
        }
        am_xliff_seg *s = xl_push(j, sidv, xl_text(xl_child(sg, "source"), &j->tmp), target);
        for (xmlNode *m = matches ? matches->children : NULL; m && rc == AM_OK; m = m->next) {
            if (!xl_is(m, "match"))
                continue;
            const char *type = xl_attr(m, "type", 0);
            xmlNode *mt = xl_child(m, "target");
            if (!type || strcmp(type, "mt") || !mt)
                continue;
            if (nseg > 1 && !xl_ref_names(xl_attr(m, "ref", 0), segid))
                continue;
            if (xl_wrong_lang(j, "mtc:match", xl_attr(mt, "lang", 2), s->dropped,
                              s->dropped[0] ? 0 : sizeof s->dropped))
                continue;
            const char *origin = xl_attr(m, "origin", 0);
            rc = xl_add_hyp(j, s, origin && *origin ? origin : "mt", xl_text(mt, &j->tmp),
                            xl_line(m, j->line_off));
        }
        if (!s->nhyp && !s->dropped[0])
            snprintf(s->dropped, sizeof s->dropped, "the unit has no <mtc:match type=\"mt\">");
    }
    am_buf_cleanup(&sid);
    return rc;
}

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

/* A segment id usable in the API (1..128 of [A-Za-z0-9._-]): "fN." (the
 * 1-based file index) prefixed when prefix, other bytes mapped to '_', and
 * an id longer than 128 bytes cut to 111 plus '.' and 16 hex digits of its
 * hash. Replaces *id (owned). */
static void xl_fix_id(char **id, size_t file, int prefix)
{
    am_buf b;
    am_buf_init(&b);
    if (prefix)
        am_buf_printf(&b, "f%zu.", file + 1);
    for (const char *p = *id; *p; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        am_buf_appendc(&b, ok ? c : '_');
    }
    if (b.len > 128) {
        uint64_t h = am_vocab_hash(b.data, b.len);
        b.len = 111;
        am_buf_printf(&b, ".%016llx", (unsigned long long)h);
    }
    free(*id);
    *id = am_buf_detach(&b);
}

/* The streaming reader's state: the first error libxml2 reported. */
typedef struct xl_rstate {
    int have_err;
    size_t line;
    char msg[200];
} xl_rstate;

static void xl_reader_err(void *arg, xmlErrorPtr err)
{
    xl_rstate *st = arg;
    if (!err || err->level < XML_ERR_ERROR || st->have_err)
        return;
    st->have_err = 1;
    st->line = err->line > 0 ? (size_t)err->line : 0;
    const char *m = err->message ? err->message : "not well-formed";
    size_t n = strlen(m);
    while (n && (m[n - 1] == '\n' || m[n - 1] == ' ' || m[n - 1] == '\r'))
        n--;
    if (n >= sizeof st->msg)
        n = sizeof st->msg - 1;
    memcpy(st->msg, m, n);
    st->msg[n] = '\0';
}

/* True when buf[i..len) starts with s. */
static int xl_at(const char *buf, size_t len, size_t i, const char *s)
{
    size_t n = strlen(s);
    return i <= len && len - i >= n && memcmp(buf + i, s, n) == 0;
}

/* Index just past the first occurrence of end at or after i (len when
 * there is none). */
static size_t xl_past(const char *buf, size_t len, size_t i, const char *end)
{
    while (i < len && !xl_at(buf, len, i, end))
        i++;
    return i < len ? i + strlen(end) : len;
}

/* The prolog of buf[0..len) (XML declaration, comments, processing
 * instructions, DOCTYPE) must declare no entity and reference no
 * parameter entity: the streaming reader has no SAX hooks, so the rule of
 * xmlsafe.h (any entity declaration rejects the document) is checked on
 * the text before libxml2 sees it. Returns AM_OK or an error in rep. */
/* Complexity (issue 15): a lexer of the prolog's constructs, one case per
 * construct, each refusal with its line. */
static int xl_prolog_check(const char *buf, size_t len, size_t line_off, am_xliff_report *rep)
{
    size_t i = 0;
    for (;;) {
        while (i < len && xl_is_space(buf[i]))
            i++;
        if (xl_at(buf, len, i, "<?"))
            i = xl_past(buf, len, i + 2, "?>");
        else if (xl_at(buf, len, i, "<!--"))
            i = xl_past(buf, len, i + 4, "-->");
        else
            break;
    }
    if (!xl_at(buf, len, i, "<!DOCTYPE"))
        return AM_OK;
    char quote = 0;
    int subset = 0;
    for (i += 9; i < len; i++) {
        char c = buf[i];
        if (quote) {
            quote = c == quote ? 0 : quote;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (subset && xl_at(buf, len, i, "<!--")) {
            i = xl_past(buf, len, i + 4, "-->") - 1;
        } else if (subset && (xl_at(buf, len, i, "<!ENTITY") || c == '%')) {
            char name[64] = "";
            if (c != '%') {
                size_t a = i + 8;
                while (a < len && (xl_is_space(buf[a]) || buf[a] == '%'))
                    a++;
                size_t b = a;
                while (b < len && b - a < sizeof name - 1 && !xl_is_space(buf[b]) && buf[b] != '>')
                    b++;
                memcpy(name, buf + a, b - a);
                name[b - a] = '\0';
            }
            return xl_err(rep, AM_ERR_PARSE, xl_line_of(buf, i) + line_off,
                          c == '%' ? "parameter entity reference in the DOCTYPE: entities are not "
                                     "allowed%s"
                                   : "the DOCTYPE declares entity '%s': entity declarations are "
                                     "not allowed",
                          name);
        } else if (c == '[') {
            subset = 1;
        } else if (c == ']') {
            subset = 0;
        } else if (c == '>' && !subset) {
            return AM_OK;
        }
    }
    return AM_OK;
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

/* A reference to an undeclared entity in the subtree of n (tolerated by
 * libxml2 when the DOCTYPE names an external subset, which is never
 * read): the text is unknown, so the document is rejected. */
static int xl_entity_refs(xl_job *j, xmlNode *n)
{
    for (xmlNode *c = n; c; c = am_xmlsafe_walk(c, n, 1)) {
        const xmlNode *bad = c->type == XML_ENTITY_REF_NODE ? c : NULL;
        for (const xmlAttr *a = c->type == XML_ELEMENT_NODE ? c->properties : NULL; a && !bad;
             a = a->next)
            for (const xmlNode *t = a->children; t && !bad; t = t->next)
                bad = t->type == XML_ENTITY_REF_NODE ? t : NULL;
        if (bad)
            return xl_err(j->rep, AM_ERR_PARSE, xl_line(c, j->line_off),
                          "reference to undeclared entity '&%s;'", (const char *)bad->name);
    }
    return AM_OK;
}

/* Opens the hardened streaming reader over buf (decoded UTF-8) with its
 * error handler writing into *st (zeroed here): the attribute-flood check
 * first, then libxml2's reader without network, CDATA nodes or its own
 * encoding guess. Returns AM_OK with *out (caller frees with
 * xmlFreeTextReader) or the error reported in j->rep. */
static int xl_reader_open(xl_job *j, xl_rstate *st, const char *buf, size_t len,
                          xmlTextReaderPtr *out)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    size_t flood = am_xmlsafe_attr_flood(buf, len);
    if (flood)
        return xl_err(j->rep, AM_ERR_PARSE, flood, "a start tag has more than %d attributes",
                      AM_XMLSAFE_MAX_ATTRS);
    xmlInitParser(); /* idempotent, mutex-guarded inside libxml2 */
    int opts = XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
               XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC;
    *out = xmlReaderForMemory(buf, (int)len, NULL, "UTF-8", opts);
    if (!*out)
        return xl_err(j->rep, AM_ERR_NOMEM, 0, "cannot create an XML reader");
    xmlTextReaderSetStructuredErrorHandler(*out, xl_reader_err, st);
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
