/*
 * xmlsafe.c — hardened libxml2 reading from memory (see xmlsafe.h for the
 * rules): the SAX callbacks that reject entities and skip external subsets,
 * the structured error handler, and the parse itself.
 */
#include "xmlsafe.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

/* The state of parser context ctx (borrowed; NULL when there is none). */
static am_xmlsafe_state *ctx_state(void *ctx)
{
    xmlParserCtxtPtr c = ctx;
    return c ? (am_xmlsafe_state *)c->_private : NULL;
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

int am_xmlsafe_read(const char *buf, size_t len, am_xmlsafe_state *st, xmlDocPtr *doc)
{
    assert(len <= (size_t)INT_MAX);
    memset(st, 0, sizeof *st);
    *doc = NULL;
    xmlInitParser(); /* idempotent, mutex-guarded inside libxml2 */
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt)
        return AM_ERR_NOMEM;
    ctxt->_private = st;
    assert(ctxt->sax);
    ctxt->sax->serror = on_xml_error;
    ctxt->sax->initialized = XML_SAX2_MAGIC;
    ctxt->sax->entityDecl = on_entity_decl;
    ctxt->sax->unparsedEntityDecl = on_unparsed_entity_decl;
    ctxt->sax->externalSubset = on_external_subset;
    ctxt->sax->reference = on_reference;
    int opts = XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_BIG_LINES | XML_PARSE_NOERROR |
               XML_PARSE_NOWARNING;
    xmlDocPtr d = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, "UTF-8", opts);
    int well_formed = ctxt->wellFormed;
    xmlFreeParserCtxt(ctxt);
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
