/*
 * json.h — jansson encoding of core results, shared by the CLI and the
 * HTTP service so both print the same numbers under the same names.
 * NAN (a null score) is encoded as JSON null. Every function returns a new
 * reference (caller json_decref's).
 */
#ifndef AM_JSON_H
#define AM_JSON_H

#include <jansson.h>

#include "compare.h"
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

/* The relative differences of a system's totals x to the baseline's b
 * (am_totals_relative), given as am_json_totals_raw objects (borrowed; NULL:
 * none, every metric null): {"r0".."rk", "r01", "term_exact_match", "ter",
 * "one_minus_term", "bleu", "chrf", "chrfpp", "segments"}; segments is
 * stolen. Unparsable totals count as none. */
json_t *am_json_relative(const am_scorer *s, const json_t *b_raw, const json_t *x_raw,
                         json_t *segments);

/* The alam2021 profile's corpus result (and per-segment values when
 * per_segment is non-zero). */
json_t *am_json_alam(const am_alam_result *r, int per_segment);

/* The raw, mergeable statistics of a totals record (not the scores), for
 * storage: every count and sum, reals with 17 significant digits so a
 * round trip is exact. */
json_t *am_json_totals_raw(const am_totals *t);
/* am_json_dump(am_json_totals_raw(t)), byte for byte, written straight
 * into a buffer without building the jansson tree (a POST stores one per
 * system and pair entry). Caller frees. */
char *am_json_totals_text(const am_totals *t);
/* Parses am_json_totals_raw output into *t (initialized for the scorer
 * first). Returns AM_OK or AM_ERR_PARSE. */
int am_json_totals_parse(const json_t *j, const am_scorer *s, am_totals *t);

/* The answer of a POST, am_json_dump of
 *   {session, id, seq, signature, scores: am_json_segment(res, names),
 *    totals: {names[k]: am_json_totals(tot[k])}, created_ms, glossary_version}
 * byte for byte, written straight into a buffer without building the
 * jansson tree (tests/unit/test_json.c compares the two). All borrowed;
 * tot[k] are the totals after this segment of names[k], k < res->nsys.
 * Caller frees. */
char *am_json_answer(const am_seg_result *res, const char *const *names, const am_totals *tot,
                     const char *session, const char *id, int64_t seq, const char *signature,
                     int64_t created_ms, int64_t glossary_version);

/* Every session option of c with its effective value, as the API shows
 * them (tokenizer "auto" stays "auto"; windows as an array). */
json_t *am_json_config(const am_config *c);
/* RFC 3339 UTC timestamp with milliseconds of a Unix ms time. */
json_t *am_json_time(int64_t ms);

/* Serializes compactly with sorted keys; reals with the fewest digits that
 * read back as the same double (0.6666666666666666, where jansson prints
 * 17 digits), otherwise as jansson writes them (caller frees). */
char *am_json_dump(const json_t *j);
/* The same, with object keys sorted (sorted != 0) or in insertion order. */
char *am_json_dumps(const json_t *j, int sorted);
/* Whether leaf answers 1 for a scalar of j (itself, or within its arrays
 * and objects at any depth); 0 for NULL. */
int am_json_any(const json_t *j, int (*leaf)(const json_t *v));
/* json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17)),
 * byte for byte (the canonical form of a stored request, which a re-post
 * is compared with), written by am_json_dumps unless j holds a real
 * (caller frees; NULL for NULL). */
char *am_json_canonical(const json_t *j);

#endif
