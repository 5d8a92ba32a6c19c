/*
 * jscan.h — a member of a stored result or request, found in its text
 * without parsing the rest. Stored JSON is compact (am_json_dump: no blanks
 * between tokens), so a value's extent is found by skipping strings (with
 * their escapes) and counting brackets; the wanted member alone is then
 * handed to jansson. Whole-session routes (export csv/tmx, curve) read a few
 * numbers of each result and skip its per-word data, most of its bytes; a
 * rescore (server/live/rescore.c) reads the stored requests' strings. In
 * base, below the API handlers and the live logic that both use it.
 */
#ifndef AM_JSCAN_H
#define AM_JSCAN_H

#include "am.h"

#include <stddef.h>

/* The end of the JSON value that starts at p in compact text, or NULL
 * when the text there is not such a value. */
const char *am_js_skip(const char *p);
/* The text of member key (plain ASCII, no escapes) of the compact JSON
 * object at obj (may be NULL): its start, and its end in *end; NULL when
 * absent or when obj is not compact JSON (then parse it whole). */
const char *am_js_member(const char *obj, const char *key, const char **end);
/* The most keys am_js_members and am_js_members_end look for at once. */
#define AM_JS_KEYS_MAX 16
/* One pass over the members of the compact JSON object at obj: for each
 * keys[i] (plain ASCII) found, val[i] and end[i] get its value's extent,
 * NULL when absent. The number found; -1 when obj is not compact JSON. */
int am_js_members(const char *obj, const char *const *keys, size_t n, const char **val,
                  const char **end);
/* The start of member key's value (as am_js_member) without finding its
 * end: cheaper when the value is large and its end is not needed. */
const char *am_js_find(const char *obj, const char *key);
/* am_js_members that reads to the end of the object: *obj_end gets the
 * end of obj (after its '}'); -1, every val[i] and *obj_end NULL when obj
 * is not compact JSON. */
int am_js_members_end(const char *obj, const char *const *keys, size_t n, const char **val,
                      const char **end, const char **obj_end);
/* The number of elements of the compact JSON array that is the whole of
 * text p, or -1 when p is not such an array (then parse it whole): the
 * entry count of a stored glossary without building its entries. */
ptrdiff_t am_js_array_count(const char *p);
/* The decoded text of the JSON string value [v, e) into out (reset first;
 * NUL-terminated): 1; 0 when it is not a string or holds an escape this
 * does not decode (\u0000, surrogate pairs: parse such text instead). */
int am_js_string(const char *v, const char *e, am_buf *out);

#endif
