/*
 * xliff_read.c — what the XLIFF and TMX readers share: the hardened XML
 * reading (decoding, the prolog check, the streaming reader's set-up and
 * entity checks), the DOM helpers, and the document being read (the
 * segment under construction, skips, systems, ids). See xliff.c for the
 * hardening's rules; xliff_int.h declares what the other files use.
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

/* ---- hardened XML reading -------------------------------------------------- */

/* Formats an error into rep (may be NULL) and returns rc. */
int xl_err(am_xliff_report *rep, int rc, size_t line, const char *fmt, ...)
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
int xl_start(const char **buf, size_t *len, size_t *line_off, am_textenc_doc *dec,
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
int xl_is(const xmlNode *n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* First child element of n named name, or NULL (borrowed). */
xmlNode *xl_child(const xmlNode *n, const char *name)
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
const char *xl_attr(const xmlNode *n, const char *name, int any_ns)
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

size_t xl_line(const xmlNode *n, size_t line_off)
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
char *xl_text(const xmlNode *n, am_buf *tmp)
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
xmlNode *xl_find_mrk(xmlNode *n, const char *mid)
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

static void xl_fix_id(char **id, size_t file, int prefix);

void xl_seg_free(am_xliff_seg *s)
{
    free(s->id);
    free(s->source);
    free(s->target);
    for (size_t k = 0; k < s->nhyp; k++)
        free(s->hyp[k]);
    memset(s, 0, sizeof *s);
}

/* Hands the segment being built to the callback and frees it. */
void xl_flush(xl_job *j)
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

void xl_skip(xl_job *j, const char *id, const char *reason)
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
am_xliff_seg *xl_push(xl_job *j, const char *id, char *source, char *target)
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
int xl_add_hyp(xl_job *j, am_xliff_seg *s, const char *name, char *text, size_t line)
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

int xl_in_list(const char *v, const char *const *list, size_t n)
{
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (am_ascii_ieq(v, list[i]))
            return 1;
    return 0;
}

/* Why candidate language lang is not the document's target language
 * (written into why, size cap), or 0 when it is (or either is unknown). */
int xl_wrong_lang(const xl_job *j, const char *what, const char *lang, char *why, size_t cap)
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

/* Opens unit element u (<trans-unit> or <unit>): *id receives its id
 * (borrowed), or NULL when the unit is skipped for translate="no" (the skip
 * is recorded). Returns AM_OK, or AM_ERR_PARSE when u has no id. */
int xl_unit_open(xl_job *j, xmlNode *u, const char **id)
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
int xl_prolog_check(const char *buf, size_t len, size_t line_off, am_xliff_report *rep)
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

/* A reference to an undeclared entity in the subtree of n (tolerated by
 * libxml2 when the DOCTYPE names an external subset, which is never
 * read): the text is unknown, so the document is rejected. */
int xl_entity_refs(xl_job *j, xmlNode *n)
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
int xl_reader_open(xl_job *j, xl_rstate *st, const char *buf, size_t len, xmlTextReaderPtr *out)
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
