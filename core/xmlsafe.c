/*
 * xmlsafe.c — hardened libxml2 reading from memory (see xmlsafe.h for the
 * rules): the SAX callbacks that reject entities and skip external subsets,
 * the structured error handler, the attribute-flood scan and the parse.
 */
#include "xmlsafe.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

/* What a parser context carries (its _private). */
typedef struct xs_priv {
    am_xmlsafe_state *st;
    const am_xmlsafe_units *units; /* NULL: keep the whole tree */
    int fn_rc; /* the first non-zero return of units->fn */
} xs_priv;

/* The state of parser context ctx (borrowed; NULL when there is none). */
static am_xmlsafe_state *ctx_state(void *ctx)
{
    xmlParserCtxtPtr c = ctx;
    return c && c->_private ? ((xs_priv *)c->_private)->st : NULL;
}

/* The end of an element: a unit (units->is_unit) is handed to units->fn
 * complete, then unlinked and freed, so the tree never holds more than
 * one unit besides its ancestors. */
static void on_end_ns(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                      const xmlChar *uri)
{
    xmlParserCtxtPtr c = ctx;
    xs_priv *p = c->_private;
    xmlNodePtr n = c->node; /* the element being closed */
    xmlSAX2EndElementNs(ctx, localname, prefix, uri);
    if (!n || !p->units->is_unit(n))
        return;
    if (!p->fn_rc && !p->st->entity_decl && !p->st->entity_ref) {
        p->fn_rc = p->units->fn(p->units->ctx, n);
        if (p->fn_rc)
            xmlStopParser(c);
    }
    xmlUnlinkNode(n);
    xmlFreeNode(n);
    /* the parent's last child may now be a text node that SAX2 did not
     * create last: nodemem 0 makes it append with xmlTextConcat instead of
     * growing that node's buffer in place (which it does not own) */
    c->nodemem = 0;
    c->nodelen = 0;
}

/* Structured error handler of our parser context: keeps the first fatal
 * error (or the first error when no fatal one came yet). */
static void on_xml_error(void *ctx, xmlErrorPtr err)
{
    am_xmlsafe_state *st = ctx_state(ctx);
    if (!st || !err || err->level < XML_ERR_ERROR)
        return;
    if (st->have_err && (st->err_fatal || err->level != XML_ERR_FATAL))
        return;
    st->have_err = 1;
    st->err_fatal = err->level == XML_ERR_FATAL;
    st->err_line = err->line > 0 ? (size_t)err->line : 0;
    st->err_col = err->int2 > 0 ? (size_t)err->int2 : 0;
    const char *m = err->message ? err->message : "malformed XML";
    size_t n = strlen(m);
    while (n && (m[n - 1] == '\n' || m[n - 1] == ' ' || m[n - 1] == '\r'))
        n--;
    if (n >= sizeof st->err_msg)
        n = sizeof st->err_msg - 1;
    memcpy(st->err_msg, m, n);
    st->err_msg[n] = '\0';
}

/* Records the first entity declaration (is_ref 0) or undeclared entity
 * reference (is_ref 1) with its line and name, and stops the parser. */
static void note_entity(void *ctx, const xmlChar *name, int is_ref)
{
    am_xmlsafe_state *st = ctx_state(ctx);
    int *seen = st ? (is_ref ? &st->entity_ref : &st->entity_decl) : NULL;
    if (seen && !*seen) {
        *seen = 1;
        st->entity_line = (size_t)xmlSAX2GetLineNumber(ctx);
        snprintf(st->entity_name, sizeof st->entity_name, "%s", name ? (const char *)name : "?");
    }
    xmlStopParser((xmlParserCtxtPtr)ctx);
}

static void on_entity_decl(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                           const xmlChar *system_id, xmlChar *content)
{
    (void)type;
    (void)public_id;
    (void)system_id;
    (void)content;
    note_entity(ctx, name, 0);
}

static void on_unparsed_entity_decl(void *ctx, const xmlChar *name, const xmlChar *public_id,
                                    const xmlChar *system_id, const xmlChar *notation)
{
    (void)public_id;
    (void)system_id;
    (void)notation;
    note_entity(ctx, name, 0);
}

/* A reference to an entity that is not predefined (all declarations are
 * rejected, so it is undeclared): its text is unknown, so the document is
 * rejected. */
static void on_reference(void *ctx, const xmlChar *name)
{
    note_entity(ctx, name, 1);
}

/* Never loads an external DTD subset. */
static void on_external_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                               const xmlChar *system_id)
{
    (void)ctx;
    (void)name;
    (void)external_id;
    (void)system_id;
}

/* The offset just past the first occurrence of end (a C string) in
 * buf[at..len), or len when there is none. */
static size_t skip_past(const char *buf, size_t len, size_t at, const char *end)
{
    size_t n = strlen(end);
    while (at < len) {
        const char *p = memchr(buf + at, end[0], len - at);
        if (!p)
            return len;
        at = (size_t)(p - buf);
        if (len - at >= n && !memcmp(p, end, n))
            return at + n;
        at++;
    }
    return len;
}

/* 1 when buf[at..len) starts with prefix (a C string). */
static int starts(const char *buf, size_t len, size_t at, const char *prefix)
{
    size_t n = strlen(prefix);
    return len - at >= n && !memcmp(buf + at, prefix, n);
}

size_t am_xmlsafe_attr_flood(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *lt = memchr(buf + i, '<', len - i);
        if (!lt)
            return 0;
        size_t at = (size_t)(lt - buf);
        if (starts(buf, len, at, "<!--")) {
            i = skip_past(buf, len, at + 4, "-->");
        } else if (starts(buf, len, at, "<![CDATA[")) {
            i = skip_past(buf, len, at + 9, "]]>");
        } else if (starts(buf, len, at, "<?")) {
            i = skip_past(buf, len, at + 2, "?>");
        } else if (starts(buf, len, at, "<!") || starts(buf, len, at, "</")) {
            i = skip_past(buf, len, at + 2, ">");
        } else { /* a start tag: '=' outside quotes until its '>' */
            size_t attrs = 0;
            char quote = 0;
            for (i = at + 1; i < len; i++) {
                char ch = buf[i];
                if (quote) {
                    if (ch == quote)
                        quote = 0;
                } else if (ch == '"' || ch == '\'') {
                    quote = ch;
                } else if (ch == '>') {
                    break;
                } else if (ch == '=' && ++attrs > AM_XMLSAFE_MAX_ATTRS) {
                    size_t line = 1;
                    for (const char *p = buf; (p = memchr(p, '\n', (size_t)(lt - p))); p++)
                        line++;
                    return line;
                }
            }
            i++;
        }
    }
    return 0;
}

int am_xmlsafe_read(const char *buf, size_t len, am_xmlsafe_state *st, xmlDocPtr *doc)
{
    return am_xmlsafe_read_units(buf, len, st, doc, NULL, NULL);
}

int am_xmlsafe_read_units(const char *buf, size_t len, am_xmlsafe_state *st, xmlDocPtr *doc,
                          const am_xmlsafe_units *units, int *fn_rc)
{
    assert(len <= (size_t)INT_MAX);
    memset(st, 0, sizeof *st);
    *doc = NULL;
    if (fn_rc)
        *fn_rc = 0;
    size_t flood = am_xmlsafe_attr_flood(buf, len);
    if (flood) {
        st->have_err = st->err_fatal = 1;
        st->err_line = flood;
        snprintf(st->err_msg, sizeof st->err_msg, "a start tag has more than %d attributes",
                 AM_XMLSAFE_MAX_ATTRS);
        return AM_OK;
    }
    xmlInitParser(); /* idempotent, mutex-guarded inside libxml2 */
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return AM_ERR_NOMEM;
    xs_priv priv = {st, units, 0};
    ctxt->_private = &priv;
    assert(ctxt->sax);
    ctxt->sax->serror = on_xml_error;
    ctxt->sax->initialized = XML_SAX2_MAGIC;
    ctxt->sax->entityDecl = on_entity_decl;
    ctxt->sax->unparsedEntityDecl = on_unparsed_entity_decl;
    ctxt->sax->externalSubset = on_external_subset;
    ctxt->sax->reference = on_reference;
    /* comments and processing instructions are never read by the callers:
     * not building their nodes keeps a document of comments from costing
     * a tree of them (issue 25: a 32 MB file of comments took 1.16 GB) */
    ctxt->sax->comment = NULL;
    ctxt->sax->processingInstruction = NULL;
    if (units)
        ctxt->sax->endElementNs = on_end_ns;
    int opts = XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
               XML_PARSE_NOWARNING | XML_PARSE_IGNORE_ENC;
    xmlDocPtr d = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, "UTF-8", opts);
    int well_formed = ctxt->wellFormed;
    xmlFreeParserCtxt(ctxt);
    if (fn_rc)
        *fn_rc = priv.fn_rc;
    if (d && (!well_formed || st->entity_decl || st->entity_ref)) {
        xmlFreeDoc(d);
        d = NULL;
    }
    *doc = d;
    return AM_OK;
}

xmlNode *am_xmlsafe_walk(xmlNode *n, const xmlNode *root, int descend)
{
    if (descend && n->children && n->type == XML_ELEMENT_NODE)
        return n->children;
    while (n && n != root) {
        if (n->next)
            return n->next;
        n = n->parent;
    }
    return NULL;
}
