/*
 * json_int.h — private declarations shared by json.c and json_answer.c:
 * the text writers that spell numbers and strings as jansson does, so the
 * tree-less POST answer has the bytes of am_json_dump. Not a public
 * interface.
 */
#ifndef AM_JSON_INT_H
#define AM_JSON_INT_H

#include <jansson.h>

#include "terms.h"
#include "text.h"

/* Appends the decimal text of v. */
void am_json_put_int(am_buf *b, json_int_t v);

/* Appends x as the shortest text that reads back, in jansson's spelling
 * (am_realfmt_json); non-finite: null. */
void am_json_put_real(am_buf *b, double x);

/* Appends s (n bytes, UTF-8) as a JSON string, escaped as jansson does:
 * '"', '\\' and control characters only. */
void am_json_put_string(am_buf *b, const char *s, size_t n);

/* The API name of match kind m: "exact", "stem" or "none". */
const char *am_json_match_name(enum am_terms_match m);

#endif
