/*
 * json.h — jansson encoding of core results, shared by the CLI and the
 * HTTP service so both print the same numbers under the same names.
 * NAN (a null score) is encoded as JSON null. Every function returns a new
 * reference (caller json_decref's).
 */
#ifndef AM_JSON_H
#define AM_JSON_H

#include <jansson.h>

#include "compat/alam2021.h"
#include "score.h"

/* {"hits":h,"total":t,"score":x|null} */
json_t *am_json_count(int64_t hits, int64_t total);
/* A number, or null for NAN/inf. */
json_t *am_json_real(double x);

/* One segment: {"words":[{"word","shot","hits":{sys:bool}}], "systems":{name:{…}}}.
 * names[0..res->nsys) are the system names. */
json_t *am_json_segment(const am_scorer *s, const am_seg_result *res, const char *const *names);

/* Session totals of one system: recall counts and scores, terms, TER,
 * 1−TERm, BLEU, chrF, chrF++ and the segment count. */
json_t *am_json_totals(const am_scorer *s, const am_totals *t);

/* The alam2021 profile's corpus result (and per-segment values when
 * per_segment is non-zero). */
json_t *am_json_alam(const am_alam_result *r, int per_segment);

#endif
