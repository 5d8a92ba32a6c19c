/*
 * xmlsafe.h — hardened libxml2 reading from a memory buffer, shared by the
 * TBX reader (tbx.c) and the XLIFF/TMX reader (xliff.c).
 *
 * Pure: no I/O, no globals of our own. Each parse has its own parser
 * context: errors go to a structured handler on that context (never a
 * process-wide one), so concurrent parses on distinct threads do not
 * interfere. Security:
 *   - XML_PARSE_NONET, and neither XML_PARSE_NOENT nor XML_PARSE_DTDLOAD /
 *     DTDATTR / DTDVALID: no entity substitution, no external DTD loading;
 *     the externalSubset SAX callback is replaced by a no-op besides.
 *   - any entity declaration (general or parameter, parsed or unparsed) in
 *     the internal subset stops the parser at once and is recorded, so the
 *     caller rejects the document: XXE and "billion laughs" never get to
 *     expand anything. A plain DOCTYPE is accepted and its DTD is not read.
 *   - a reference to an undeclared entity (libxml2 tolerates it when there
 *     is an external DTD) stops the parser and is recorded too.
 *   - XML_PARSE_HUGE is not set, so libxml2's own depth/size limits hold.
 *   - a start tag with more than AM_XMLSAFE_MAX_ATTRS attributes is refused
 *     before parsing (libxml2's duplicate check is quadratic per tag).
 *   - comments and processing instructions get no node in the tree (no
 *     caller reads them), so a document of comments costs no tree.
 * The input is read as UTF-8 whatever the XML declaration says
 * (XML_PARSE_IGNORE_ENC); callers decode other encodings to UTF-8 first
 * (textenc.h, am_textenc_xml) and validate the UTF-8 (their error reports
 * differ), so this hardening always sees the decoded text.
 *
 * libxml2 global state: xmlInitParser() is called on every parse; it is
 * idempotent and guarded by libxml2's own init mutex (2.9+). Never calls
 * xmlCleanupParser().
 */
#ifndef AM_XMLSAFE_H
#define AM_XMLSAFE_H

#include "am.h"

#include <libxml/tree.h>

/* What a hardened parse saw besides the document. */
typedef struct am_xmlsafe_state {
    int entity_decl; /* the DOCTYPE declared an entity (reject) */
    int entity_ref; /* a reference to an undeclared entity (reject) */
    size_t entity_line; /* line of the first of those (0: unknown) */
    char entity_name[64];
    int have_err; /* an error (level >= XML_ERR_ERROR) was recorded */
    int err_fatal; /* ... and it was fatal */
    size_t err_line, err_col; /* 0: unknown */
    char err_msg[200]; /* libxml2's message, trailing blanks cut */
} am_xmlsafe_state;

/* Parses buf[0..len) (len <= INT_MAX, borrowed) with the hardening above
 * and fills *st (zeroed first). *doc receives the document when it is
 * well-formed and no entity was declared or referenced (caller frees with
 * xmlFreeDoc), else NULL. Returns AM_OK, or AM_ERR_NOMEM when no parser
 * context could be made. */
int am_xmlsafe_read(const char *buf, size_t len, am_xmlsafe_state *st, xmlDocPtr *doc);

/* A streamed read (am_xmlsafe_read_units): every element for which
 * is_unit is true is handed to fn when its end tag is read, complete with
 * its subtree and still attached to its ancestors (borrowed for the call),
 * then unlinked and freed; memory holds one unit, not the document. A
 * non-zero return of fn stops the parser. */
typedef struct am_xmlsafe_units {
    int (*is_unit)(const xmlNode *n);
    int (*fn)(void *ctx, xmlNode *unit);
    void *ctx;
} am_xmlsafe_units;

/* As am_xmlsafe_read, with units (NULL: none, the whole tree is kept)
 * handed over and freed as they end (fn is not called once an entity
 * was declared or referenced). *doc is the document without its units.
 * *fn_rc (may be NULL) receives fn's first non-zero return, else 0. A
 * caller still rejects the document on an error or entity in *st: units
 * before the error were handed over already. */
int am_xmlsafe_read_units(const char *buf, size_t len, am_xmlsafe_state *st, xmlDocPtr *doc,
                          const am_xmlsafe_units *units, int *fn_rc);

/* Most attributes (namespace declarations included) a start tag may have:
 * libxml2 2.9 compares each new attribute of a tag with every earlier one,
 * so n attributes cost n^2/2 steps (20,000: 1 s). */
#define AM_XMLSAFE_MAX_ATTRS 128

/* Scans buf[0..len) (borrowed) in one linear pass for a start tag with
 * more than AM_XMLSAFE_MAX_ATTRS attributes ('=' outside quoted values;
 * comments, CDATA sections, processing instructions, declarations and end
 * tags skipped). Returns 0 when there is none, else the 1-based line of
 * the first such tag. am_xmlsafe_read refuses those; a caller of another
 * libxml2 reader checks with this first. */
size_t am_xmlsafe_attr_flood(const char *buf, size_t len);

/* Next node after n in a pre-order walk of root's subtree (root excluded),
 * descending into n's children when descend is true (element nodes only);
 * NULL at the end. No recursion, so a deep document costs no stack. */
xmlNode *am_xmlsafe_walk(xmlNode *n, const xmlNode *root, int descend);

#endif
