/*
 * gloss_internal.h — helpers shared by the glossary parsers (glossary.c:
 * CSV/TSV/JSON; tbx.c: TBX; gloss_read.c: detection and dispatch). Internal to core/: not part of
 * the public glossary API (glossary.h). Defined in glossary.c; no global state.
 */
#ifndef AM_GLOSS_INTERNAL_H
#define AM_GLOSS_INTERNAL_H

#include "glossary.h"

/* Records an error in r (r->line, r->column, and r->msg prefixed with
 * "line L, column C: ", "line L: ", or, with no line, "entry E: " when
 * r->entry is set) and returns rc. r must not be NULL. */
int am_gloss_rep_err(am_gloss_report *r, int rc, size_t line, size_t col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Validates buf[0..len) as UTF-8 without NUL bytes (buf may be NULL when
 * len is 0). Returns AM_OK, or AM_ERR_NUL / AM_ERR_UTF8 recorded in r
 * ("NUL byte" / "invalid UTF-8") with the 1-based line and byte column of
 * the offending byte. */
int am_gloss_check_utf8(const char *buf, size_t len, am_gloss_report *r);

/* True for an ASCII whitespace byte (space, \t, \n, \v, \f, \r). */
int am_gloss_is_space(char c);

/* Trims ASCII whitespace from both ends of s[0..*len): returns the first
 * byte kept and sets *len to the kept length (pointers into s, no copy). */
const char *am_gloss_trim(const char *s, size_t *len);

/* The CSV/TSV (delim ',' or '\t') and JSON readers of glossary.c, called by
 * am_gloss_parse_langs (gloss_read.c) on validated, BOM-stripped UTF-8
 * buf[0..len): fill out (empty on entry) under lim; errors go to rep. */
int am_gloss_read_csv(const char *buf, size_t len, char delim, const am_gloss_limits *lim,
                      const char *src_lang, const char *tgt_lang, am_gloss *out,
                      am_gloss_report *rep);
int am_gloss_read_json(const char *buf, size_t len, const am_gloss_limits *lim, am_gloss *out,
                       am_gloss_report *rep);

#endif
