/*
 * tbx.c — TBX (TermBase eXchange, ISO 30042) import into an am_gloss
 * (see glossary.h, am_gloss_parse_tbx).
 *
 * Parsing uses libxml2 from a memory buffer through am_xmlsafe_read_units
 * (xmlsafe.h), streamed: each termEntry/conceptEntry is imported when its
 * end tag is read and then freed, so the tree never holds more than one
 * entry (a first pass picks the languages the caller did not give); its own parser context and
 * structured error handler, no network, no entity substitution, no DTD loading, any entity
 * declaration or reference to an undeclared entity rejects the document (XXE, "billion laughs"),
 * and libxml2's own depth/size limits hold. A plain DOCTYPE
 * (<!DOCTYPE martif SYSTEM "TBXcoreStructV02.dtd">) is accepted and its DTD
 * is not read.
 * A document in another encoding than UTF-8 (a BOM or the XML declaration
 * says which: UTF-16, windows-1252, ISO-8859-x, …) is decoded to UTF-8
 * first (textenc.h); the UTF-8 text is validated (AM_ERR_UTF8/AM_ERR_NUL
 * with line and column) before libxml2 sees it, and libxml2 is told to read
 * it as UTF-8 (the declaration's encoding is ignored).
 *
 * Programs using several threads should call xmlInitParser() once in
 * main() before starting them (libxml2's advice), and may call
 * xmlCleanupParser() once at exit (only to make leak checkers quiet).
 */
#include "glossary.h"

#include "gloss_internal.h"
#include "lang.h"
#include "textenc.h"
#include "xmlsafe.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

/* ---- DOM helpers --------------------------------------------------------- */

static int elem_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static int is_concept(const xmlNode *n)
{
    return elem_is(n, "termEntry") || elem_is(n, "conceptEntry");
}

static int is_lang_sec(const xmlNode *n)
{
    return elem_is(n, "langSet") || elem_is(n, "langSec");
}

/* Line of node n in the caller's buffer: libxml2's line plus line_off,
 * the lines of leading whitespace removed before parsing. */
static size_t node_line(const xmlNode *n, size_t line_off)
{
    long l = xmlGetLineNo(n);
    return l > 0 ? (size_t)l + line_off : 0;
}

/* The value of attribute name of element n (ns_href NULL: no namespace),
 * found without DTD defaults; malloc'd via libxml2 (xmlFree) or NULL. */
static xmlChar *attr_value(const xmlNode *n, const char *name, const char *ns_href)
{
    for (const xmlAttr *a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0)
            continue;
        if (ns_href ? (a->ns && a->ns->href && strcmp((const char *)a->ns->href, ns_href) == 0)
                    : (a->ns == NULL))
            return xmlNodeListGetString(n->doc, a->children, 1);
    }
    return NULL;
}

/* Language of a langSet/langSec: its xml:lang (or a bare lang attribute),
 * else the nearest ancestor's. Returns an owned string (caller frees) or
 * NULL when there is none. */
static char *section_lang(const xmlNode *sec)
{
    for (const xmlNode *n = sec; n && n->type == XML_ELEMENT_NODE; n = n->parent) {
        xmlChar *v = attr_value(n, "lang", (const char *)XML_XML_NAMESPACE);
        if (!v)
            v = attr_value(n, "lang", NULL);
        if (v) {
            size_t len = strlen((const char *)v);
            const char *s = am_gloss_trim((const char *)v, &len);
            char *out = len ? am_xstrndup(s, len) : NULL;
            xmlFree(v);
            if (out)
                return out;
        }
    }
    return NULL;
}

/* Text content of n with ASCII whitespace runs collapsed to one space and
 * trimmed, into b (reset first). */
static void node_text(const xmlNode *n, am_buf *b)
{
    am_buf_reset(b);
    xmlChar *c = xmlNodeGetContent(n);
    if (!c)
        return;
    int space = 0;
    for (const char *p = (const char *)c; *p; p++) {
        if (am_gloss_is_space(*p)) {
            space = 1;
            continue;
        }
        if (space && b->len)
            am_buf_appendc(b, ' ');
        space = 0;
        am_buf_appendc(b, *p);
    }
    xmlFree(c);
}

/* True when status (trimmed, case-insensitive) marks a term that must not
 * be used. */
static int status_forbidden(const char *status)
{
    static const char *const bad[] = {
        "deprecatedTerm-admn-sts", "supersededTerm-admn-sts", "deprecated",
        "deprecatedTerm",          "supersededTerm",          "superseded",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (am_ascii_ieq(status, bad[i]))
            return 1;
    return 0;
}

/* True when the term container (tig / ntig / termSec, or the section when
 * the term sits directly in it) carries a deprecated/superseded status:
 * <termNote type="administrativeStatus">, type="normativeAuthorization"
 * (older TBX), or a DCT-style <…:administrativeStatus> element. */
static int container_forbidden(xmlNode *cont, am_buf *tmp)
{
    for (xmlNode *n = cont->children; n;) {
        int descend = 1;
        if (n->type == XML_ELEMENT_NODE) {
            int is_status = elem_is(n, "administrativeStatus");
            if (!is_status &&
                (elem_is(n, "termNote") || elem_is(n, "admin") || elem_is(n, "descrip"))) {
                xmlChar *type = attr_value(n, "type", NULL);
                if (type) {
                    is_status = am_ascii_ieq((const char *)type, "administrativeStatus") ||
                                am_ascii_ieq((const char *)type, "normativeAuthorization");
                    xmlFree(type);
                }
            }
            if (is_status) {
                node_text(n, tmp);
                if (status_forbidden(am_buf_str(tmp)))
                    return 1;
                descend = 0;
            } else if (elem_is(n, "term") || is_lang_sec(n) || is_concept(n)) {
                descend = 0;
            }
        }
        n = am_xmlsafe_walk(n, cont, descend);
    }
    return 0;
}

/* The container of a term element inside section sec: the ancestor that is
 * a direct child of sec (tig, ntig, termSec); NULL for a term placed
 * directly in the section (not valid TBX: it has no status then). */
static xmlNode *term_container(xmlNode *term, xmlNode *sec)
{
    xmlNode *c = term;
    while (c->parent && c->parent != sec)
        c = c->parent;
    return (c == term || !c->parent) ? NULL : c;
}

/* ---- the import ---------------------------------------------------------- */

typedef struct tbx_job {
    const am_gloss_limits *lim;
    am_gloss *out;
    am_gloss_report *rep;
    const char *src_lang; /* borrowed; NULL until known */
    const char *tgt_lang;
    size_t line_off; /* see node_line */
    am_buf tmp, tmp2;
    am_toks src, ok, bad; /* terms of the current entry */
    am_toks langs; /* the distinct languages of the sections seen */
    int saw_src, saw_tgt; /* a section in the source / target language */
} tbx_job;

static int toks_has(const am_toks *t, const char *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i], s) == 0)
            return 1;
    return 0;
}

/* Appends one glossary entry source -> targets (checking the limits). */
static int emit(tbx_job *j, const char *source, const am_toks *targets, int forbidden,
                const char *id, size_t line)
{
    if (targets->n > j->lim->max_targets)
        return am_gloss_rep_err(j->rep, AM_ERR_RANGE, line, 0, "more than %zu target alternatives",
                                j->lim->max_targets);
    if (j->out->n >= j->lim->max_entries)
        return am_gloss_rep_err(j->rep, AM_ERR_RANGE, line, 0, "more than %zu entries",
                                j->lim->max_entries);
    int rc =
        am_gloss_add(j->out, source, (const char *const *)targets->v, targets->n, 0, forbidden, id);
    if (rc)
        return am_gloss_rep_err(j->rep, rc == AM_ERR_UTF8 ? AM_ERR_UTF8 : AM_ERR_PARSE, line, 0,
                                "unusable term in entry");
    return AM_OK;
}

/* Imports one termEntry / conceptEntry. */
/* Complexity (issue 15): one walk over the entry's language sections and
 * their terms (source or target role by language), with a refusal and its
 * line for each limit (terms, lengths, id). */
static int do_entry(tbx_job *j, xmlNode *ce)
{
    am_toks_reset(&j->src);
    am_toks_reset(&j->ok);
    am_toks_reset(&j->bad);
    j->rep->rows++;
    for (xmlNode *n = ce->children; n;) {
        if (!is_lang_sec(n)) {
            n = am_xmlsafe_walk(n, ce, !is_concept(n));
            continue;
        }
        char *lang = section_lang(n);
        int role = 0; /* 1 source, 2 target */
        if (lang && j->src_lang && am_lang_same(lang, j->src_lang))
            role = 1;
        else if (lang && j->tgt_lang && am_lang_same(lang, j->tgt_lang))
            role = 2;
        j->saw_src |= role == 1;
        j->saw_tgt |= role == 2;
        if (lang && !toks_has(&j->langs, lang) && j->langs.n < 16)
            am_toks_pushs(&j->langs, lang);
        free(lang);
        if (role) {
            for (xmlNode *t = n->children; t;) {
                if (!elem_is(t, "term")) {
                    t = am_xmlsafe_walk(t, n, !is_lang_sec(t) && !is_concept(t));
                    continue;
                }
                node_text(t, &j->tmp);
                if (j->tmp.len > j->lim->max_field_bytes) {
                    return am_gloss_rep_err(j->rep, AM_ERR_RANGE, node_line(t, j->line_off), 0,
                                            "term longer than %zu bytes", j->lim->max_field_bytes);
                }
                if (j->tmp.len) {
                    const char *s = am_buf_str(&j->tmp);
                    if (role == 1) {
                        if (!toks_has(&j->src, s)) {
                            if (j->src.n == j->lim->max_targets)
                                return am_gloss_rep_err(
                                    j->rep, AM_ERR_RANGE, node_line(t, j->line_off), 0,
                                    "more than %zu source terms in one entry", j->lim->max_targets);
                            am_toks_pushs(&j->src, s);
                        }
                    } else {
                        xmlNode *cont = term_container(t, n);
                        am_toks *dst =
                            (cont && container_forbidden(cont, &j->tmp2)) ? &j->bad : &j->ok;
                        if (!toks_has(dst, s)) {
                            if (dst->n == j->lim->max_targets)
                                return am_gloss_rep_err(
                                    j->rep, AM_ERR_RANGE, node_line(t, j->line_off), 0,
                                    "more than %zu target alternatives", j->lim->max_targets);
                            am_toks_pushs(dst, s);
                        }
                    }
                }
                t = am_xmlsafe_walk(t, n, 0);
            }
        }
        n = am_xmlsafe_walk(n, ce, 0);
    }
    if (j->src.n == 0 || j->ok.n + j->bad.n == 0) {
        j->rep->skipped++;
        return AM_OK;
    }
    size_t line = node_line(ce, j->line_off);
    char *id = NULL;
    xmlChar *idv = attr_value(ce, "id", NULL);
    if (!idv)
        idv = attr_value(ce, "id", (const char *)XML_XML_NAMESPACE);
    if (idv) {
        size_t len = strlen((const char *)idv);
        const char *s = am_gloss_trim((const char *)idv, &len);
        if (len > j->lim->max_field_bytes) {
            xmlFree(idv);
            return am_gloss_rep_err(j->rep, AM_ERR_RANGE, line, 0, "id longer than %zu bytes",
                                    j->lim->max_field_bytes);
        }
        if (len)
            id = am_xstrndup(s, len);
        xmlFree(idv);
    }
    int rc = AM_OK;
    for (size_t i = 0; i < j->src.n && !rc; i++) {
        if (j->ok.n)
            rc = emit(j, j->src.v[i], &j->ok, 0, id, line);
        if (!rc && j->bad.n)
            rc = emit(j, j->src.v[i], &j->bad, 1, id, line);
    }
    free(id);
    return rc;
}

/* Picks the languages not given by the caller: source = the language of
 * the first langSet/langSec of the first entry that has one (skipping the
 * caller's target language); target = the first language in document
 * order whose primary subtag differs from the source's. Stores owned copies in *src / *tgt (left
 * NULL when none). */
static void pick_langs(xmlNode *root, char **src, char **tgt)
{
    for (xmlNode *n = root->children; n && !(*src && *tgt);) {
        if (!is_lang_sec(n)) {
            n = am_xmlsafe_walk(n, root, 1);
            continue;
        }
        char *lang = section_lang(n);
        if (lang) {
            if (!*src && !(*tgt && am_lang_same(lang, *tgt)))
                *src = lang;
            else if (*src && !*tgt && !am_lang_same(lang, *src))
                *tgt = lang;
            else
                free(lang);
        }
        n = am_xmlsafe_walk(n, root, 0);
    }
}

/* The arguments' checks: languages (NULL or valid, not the same) and
 * size. AM_OK or the error reported in rep. */
static int tbx_check_args(size_t len, const char *source_lang, const char *target_lang,
                          const am_gloss_limits *lim, am_gloss_report *rep)
{
    if ((source_lang && !am_lang_tag_ok(source_lang)) ||
        (target_lang && !am_lang_tag_ok(target_lang)))
        return am_gloss_rep_err(rep, AM_ERR_INVALID, 0, 0, "invalid language tag");
    if (source_lang && target_lang && am_lang_same(source_lang, target_lang))
        return am_gloss_rep_err(rep, AM_ERR_INVALID, 0, 0,
                                "source and target languages are the same (%s, %s)", source_lang,
                                target_lang);
    if (len > lim->max_bytes)
        return am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "glossary larger than %zu bytes",
                                lim->max_bytes);
    if (len > (size_t)INT_MAX)
        return am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "TBX document larger than %d bytes",
                                INT_MAX);
    return AM_OK;
}

/* Decodes buf[0..len) to UTF-8 as its BOM or XML declaration says
 * (textenc.h) into *dec (caller frees dec->utf8), then validates the UTF-8
 * text. AM_OK or the error reported in rep. */
static int tbx_decode(const char *buf, size_t len, am_textenc_doc *dec, am_gloss_report *rep)
{
    am_buf msg;
    am_buf_init(&msg);
    int rc = am_textenc_xml(buf, len, dec, &msg);
    if (rc)
        am_gloss_rep_err(rep, rc, 0, 0, "%s", am_buf_str(&msg));
    am_buf_cleanup(&msg);
    if (rc)
        return rc;
    return dec->utf8 ? am_gloss_check_utf8(dec->utf8, dec->len, rep)
                     : am_gloss_check_utf8(buf, len, rep);
}

/* Skips a BOM and leading whitespace (XML allows neither before the XML
 * declaration; we tolerate both): returns how many bytes, and how far
 * line/column numbers move (*line_off lines, *col_off bytes on the first
 * line). len when nothing else is there. */
static size_t tbx_skip_lead(const char *buf, size_t len, size_t *line_off, size_t *col_off)
{
    size_t i = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    *line_off = 0;
    *col_off = i;
    for (; i < len && am_gloss_is_space(buf[i]); i++) {
        if (buf[i] == '\n') {
            (*line_off)++;
            *col_off = 0;
        } else {
            (*col_off)++;
        }
    }
    return i;
}

/* What the XML reader refused (entities, malformed XML: no doc) and a root
 * that is no TBX, as a parse error in rep; AM_OK otherwise. */
static int tbx_check_read(const am_xmlsafe_state *st, xmlDocPtr doc, size_t line_off,
                          size_t col_off, am_gloss_report *rep)
{
    if (st->entity_decl)
        return am_gloss_rep_err(
            rep, AM_ERR_PARSE, st->entity_line ? st->entity_line + line_off : 0, 0,
            "the DOCTYPE declares entity '%s': entity declarations are not allowed",
            st->entity_name);
    if (st->entity_ref)
        return am_gloss_rep_err(rep, AM_ERR_PARSE, st->entity_line ? st->entity_line + line_off : 0,
                                0, "reference to undeclared entity '&%s;'", st->entity_name);
    if (!doc && st->have_err)
        return am_gloss_rep_err(rep, AM_ERR_PARSE, st->err_line ? st->err_line + line_off : 0,
                                (st->err_line == 1 && st->err_col) ? st->err_col + col_off
                                                                   : st->err_col,
                                "malformed XML: %s", st->err_msg);
    if (!doc)
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "malformed XML");
    xmlNode *root = xmlDocGetRootElement(doc);
    if (!root || !(am_ascii_ieq((const char *)root->name, "martif") ||
                   am_ascii_ieq((const char *)root->name, "tbx")))
        return am_gloss_rep_err(
            rep, AM_ERR_PARSE, root ? node_line(root, line_off) : 0, 0,
            "not a TBX document: the root element is <%s>, expected <martif> or <tbx>",
            root ? (const char *)root->name : "");
    return AM_OK;
}

/* A document with language sections but none in the source or the target
 * language gives no entry: refused, naming the languages it has (issue 24:
 * an empty glossary was accepted silently). AM_OK or the error in rep. */
static int tbx_check_sides(tbx_job *j)
{
    if (j->out->n || !j->langs.n || (j->saw_src && j->saw_tgt))
        return AM_OK;
    am_buf have;
    am_buf_init(&have);
    for (size_t i = 0; i < j->langs.n; i++)
        am_buf_printf(&have, "%s%s", i ? ", " : "", j->langs.v[i]);
    int rc = am_gloss_rep_err(j->rep, AM_ERR_INVALID, 0, 0,
                              "the TBX has no term in the %s language %s (its languages: %s)",
                              !j->saw_tgt ? "target" : "source",
                              !j->saw_tgt ? (j->tgt_lang ? j->tgt_lang : "(none found)")
                                          : (j->src_lang ? j->src_lang : "(none found)"),
                              am_buf_str(&have));
    am_buf_cleanup(&have);
    return rc;
}

/* A unit of the streamed read: a termEntry/conceptEntry that is not inside
 * another one (do_entry skips nested ones, as it always did), in a
 * document whose root is <martif> or <tbx> (another root is refused by
 * tbx_check_read before anything of it is used). */
static int tbx_is_unit(const xmlNode *n)
{
    if (!is_concept(n))
        return 0;
    const xmlNode *top = n;
    for (const xmlNode *a = n->parent; a && a->type == XML_ELEMENT_NODE; a = a->parent) {
        if (is_concept(a))
            return 0;
        top = a;
    }
    return top != n && (am_ascii_ieq((const char *)top->name, "martif") ||
                        am_ascii_ieq((const char *)top->name, "tbx"));
}

/* Pass 1's unit callback: ctx is {char **src, char **tgt} (pick_langs). */
static int tbx_pick_unit(void *ctx, xmlNode *entry)
{
    char ***picked = ctx;
    pick_langs(entry, picked[0], picked[1]);
    return 0;
}

/* Pass 2's unit callback: ctx is the tbx_job. */
static int tbx_entry_unit(void *ctx, xmlNode *entry)
{
    return do_entry(ctx, entry);
}

/* One streamed read of buf[0..len) handing every entry to units; then the
 * parser's refusals (tbx_check_read). An error of a unit callback (already
 * in rep) comes first. Returns AM_OK or the error reported in rep. */
static int tbx_read(const char *buf, size_t len, const am_xmlsafe_units *units, size_t line_off,
                    size_t col_off, am_gloss_report *rep)
{
    am_xmlsafe_state st;
    xmlDocPtr doc = NULL;
    int fn_rc = 0;
    if (am_xmlsafe_read_units(buf, len, &st, &doc, units, &fn_rc))
        return am_gloss_rep_err(rep, AM_ERR_NOMEM, 0, 0, "cannot create an XML parser");
    int rc = fn_rc ? fn_rc : tbx_check_read(&st, doc, line_off, col_off, rep);
    if (doc)
        xmlFreeDoc(doc);
    return rc;
}

int am_gloss_parse_tbx(const char *buf, size_t len, const char *source_lang,
                       const char *target_lang, const am_gloss_limits *limits, am_gloss *out,
                       am_gloss_report *report)
{
    am_gloss_report dummy = {0};
    am_gloss_report *rep = report ? report : &dummy;
    memset(rep, 0, sizeof *rep);
    rep->format = AM_GLOSS_TBX;
    am_gloss_limits lim = limits ? *limits : am_gloss_limits_default();
    if ((!buf && len) || !out || out->n != 0)
        return am_gloss_rep_err(rep, AM_ERR_INVALID, 0, 0, "invalid argument");
    if (source_lang && !*source_lang)
        source_lang = NULL; /* "" = unknown, as NULL */
    if (target_lang && !*target_lang)
        target_lang = NULL;
    if (!buf)
        buf = "";
    int rc = tbx_check_args(len, source_lang, target_lang, &lim, rep);
    if (rc)
        return rc;
    am_textenc_doc dec;
    rc = tbx_decode(buf, len, &dec, rep);
    if (rc) {
        free(dec.utf8);
        return rc;
    }
    if (dec.utf8) {
        buf = dec.utf8;
        len = dec.len;
    }
    size_t line_off, col_off, lead = tbx_skip_lead(buf, len, &line_off, &col_off);
    if (lead == len) {
        free(dec.utf8);
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "empty TBX document");
    }
    buf += lead;
    len -= lead;

    char *auto_src = NULL, *auto_tgt = NULL;
    tbx_job j;
    memset(&j, 0, sizeof j);
    j.src_lang = source_lang;
    j.tgt_lang = target_lang;
    j.lim = &lim;
    j.line_off = line_off;
    j.out = out;
    j.rep = rep;
    if (!source_lang || !target_lang) {
        /* pass 1: the languages not given, from the entries in order */
        if (source_lang)
            auto_src = am_xstrdup(source_lang);
        if (target_lang)
            auto_tgt = am_xstrdup(target_lang);
        char **picked[2] = {&auto_src, &auto_tgt};
        am_xmlsafe_units pick = {tbx_is_unit, tbx_pick_unit, picked};
        rc = tbx_read(buf, len, &pick, line_off, col_off, rep);
        j.src_lang = auto_src;
        j.tgt_lang = auto_tgt;
    }
    if (rc == AM_OK) {
        am_xmlsafe_units entries = {tbx_is_unit, tbx_entry_unit, &j};
        rc = tbx_read(buf, len, &entries, line_off, col_off, rep);
    }
    if (rc == AM_OK)
        rc = tbx_check_sides(&j);
    free(dec.utf8);
    am_buf_cleanup(&j.tmp);
    am_buf_cleanup(&j.tmp2);
    am_toks_cleanup(&j.src);
    am_toks_cleanup(&j.ok);
    am_toks_cleanup(&j.bad);
    am_toks_cleanup(&j.langs);
    free(auto_src);
    free(auto_tgt);
    if (rc)
        am_gloss_cleanup(out);
    return rc;
}
