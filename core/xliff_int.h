/*
 * xliff_int.h — private declarations shared by the files of the XLIFF and
 * TMX readers (xliff.h is the interface): xliff_read.c holds the shared
 * reading and the document being read, xliff12.c and xliff2.c the unit
 * readers of each version, xliff.c the passes and entry points, tmx.c the
 * TMX counting. Not a public interface.
 */
#ifndef AM_XLIFF_INT_H
#define AM_XLIFF_INT_H

#include "text.h"
#include "textenc.h"
#include "xliff.h"

#include <stddef.h>

#include <libxml/tree.h>
#include <libxml/xmlreader.h>

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

/* The streaming reader's state: the first error libxml2 reported. */
typedef struct xl_rstate {
    int have_err;
    size_t line;
    char msg[200];
} xl_rstate;

/* Formats an error into rep (may be NULL) and returns rc. */
int xl_err(am_xliff_report *rep, int rc, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The checks every XML input starts with: the buffer (NULL only when len
 * is 0) is valid UTF-8 without NUL and not larger than libxml2 takes; a BOM
 * and leading whitespace are skipped (*buf, *len advanced, *line_off = the
 * lines skipped). Returns AM_OK or an error filled into rep. */
int xl_start(const char **buf, size_t *len, size_t *line_off, am_textenc_doc *dec,
             am_xliff_report *rep);

/* True when n is an element with local name name (any namespace). */
int xl_is(const xmlNode *n, const char *name);

/* First child element of n named name, or NULL (borrowed). */
xmlNode *xl_child(const xmlNode *n, const char *name);

/* Value of n's attribute with local name name: without a namespace when
 * any_ns is 0, in any namespace (prefixed or not) when 1, only in the xml:
 * namespace when 2. Borrowed text of the attribute's first text child, or
 * NULL ("" for an empty attribute). */
const char *xl_attr(const xmlNode *n, const char *name, int any_ns);

/* The 1-based line of n in the whole input (line_off: lines skipped
 * before the text libxml2 read). */
size_t xl_line(const xmlNode *n, size_t line_off);

/* Translatable text of element n, whitespace collapsed and trimmed; caller
 * frees. tmp is scratch. */
char *xl_text(const xmlNode *n, am_buf *tmp);

/* Finds the <mrk mtype="seg" mid=mid> under n (borrowed) or NULL. */
xmlNode *xl_find_mrk(xmlNode *n, const char *mid);

/* Frees the strings of s and zeroes it. */
void xl_seg_free(am_xliff_seg *s);

/* Hands the segment being built to the callback and frees it. */
void xl_flush(xl_job *j);

/* Records a skipped segment (id copied) after handing over the current
 * one. */
void xl_skip(xl_job *j, const char *id, const char *reason);

/* Starts a new confirmed segment (strings taken) after handing over the
 * previous one; returns it (borrowed, valid until the next push/skip). */
am_xliff_seg *xl_push(xl_job *j, const char *id, char *source, char *target);

/* Adds hypothesis text (taken) of system name to s; a second candidate of
 * the same system in one segment is dropped (the first wins). */
int xl_add_hyp(xl_job *j, am_xliff_seg *s, const char *name, char *text, size_t line);

/* True when v (may be NULL) is one of list[0..n), ASCII case-insensitive. */
int xl_in_list(const char *v, const char *const *list, size_t n);

/* Why candidate language lang is not the document's target language
 * (written into why, size cap), or 0 when it is (or either is unknown). */
int xl_wrong_lang(const xl_job *j, const char *what, const char *lang, char *why, size_t cap);

/* Opens unit element u (<trans-unit> or <unit>): *id receives its id
 * (borrowed), or NULL when the unit is skipped for translate="no" (the skip
 * is recorded). Returns AM_OK, or AM_ERR_PARSE when u has no id. */
int xl_unit_open(xl_job *j, xmlNode *u, const char **id);

/* The prolog of buf[0..len) declares no entity and references no
 * parameter entity (see xliff_read.c). */
/* Complexity (issue 15): a lexer of the prolog's constructs, one case per
 * construct, each refusal with its line. */
int xl_prolog_check(const char *buf, size_t len, size_t line_off, am_xliff_report *rep);

/* A reference to an undeclared entity in the subtree of n (tolerated by
 * libxml2 when the DOCTYPE names an external subset, which is never
 * read): the text is unknown, so the document is rejected. */
int xl_entity_refs(xl_job *j, xmlNode *n);

/* Opens the hardened streaming reader over buf (decoded UTF-8) with its
 * error handler writing into *st (zeroed here): the attribute-flood check
 * first, then libxml2's reader without network, CDATA nodes or its own
 * encoding guess. Returns AM_OK with *out (caller frees with
 * xmlFreeTextReader) or the error reported in j->rep. */
int xl_reader_open(xl_job *j, xl_rstate *st, const char *buf, size_t len, xmlTextReaderPtr *out);

/* One expanded XLIFF 1.2 <trans-unit> (xliff12.c): its segments and skips
 * handed over through j. Returns AM_OK or an error in j->rep. */
int xl_unit12(xl_job *j, xmlNode *tu);

/* One expanded XLIFF 2.x <unit> (xliff2.c), as xl_unit12. */
int xl_unit20(xl_job *j, xmlNode *u);

#endif
