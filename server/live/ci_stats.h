/*
 * ci_stats.h — a segment's bootstrap statistics as a compact record stored
 * with its row (segments.stats, schema/013): what GET …/metrics?ci= needs
 * of each system (R_k and R0+1 counts, TER/TERm edits and lengths, term
 * exact match and window overlap, BLEU and chrF n-gram statistics), so
 * that its first request reads these records instead of parsing every
 * stored request and result and scoring BLEU and chrF again.
 *
 * The values are the ones the stored result would give back (ingest_ci.c
 * reads the same numbers from the result's JSON when a row has no record),
 * so an answer is the same byte for byte either way. Format version 1:
 *
 *   byte     version (1)
 *   u64 LE   FNV-1a of the scorer's signature (another scorer: not used)
 *   varints  R_k's k, windows, BLEU max order, systems
 *   per system: name (varint length + bytes), flags (bit 0 has_bleu,
 *     bit 1 chrfpp_own), R_0..R_k and R0+1 (hits, total), TER edits,
 *     TERm edits, TER reference length, TER's average reference length,
 *     term instances and exact matches, per window (instances, sum),
 *     with has_bleu BLEU (sys_len, ref_len, correct[order],
 *     total[order]) and chrF (char 6 x 3, word 4 x 3), with chrfpp_own
 *     chrF++'s own chrF statistics
 *   u64 LE   FNV-1a of every byte before it
 *
 * Integers are zigzag LEB128 varints, reals IEEE-754 doubles little-endian.
 * The record is kept as base64 text: the store's driver seam (drv.h)
 * moves text and integers only, on SQLite and PostgreSQL alike.
 */
#ifndef AM_CI_STATS_H
#define AM_CI_STATS_H

#include "am.h"
#include "score.h"

#define AM_CISTATS_VERSION 1

/* The record of a segment's result res (borrowed) whose systems are
 * names[0..res->nsys) (borrowed), scored by s, appended to out as base64
 * text (NUL-terminated in out). */
void am_cistats_encode(const am_scorer *s, const am_seg_result *res, const char *const *names,
                       am_buf *out);

/* Decodes the record text (borrowed) for the systems names[0..nsys) of the
 * ?ci= columns, each into sys[i] (caller's array, filled completely; a
 * system the segment did not have gets what the stored result gives it:
 * zeros). Returns AM_OK, or AM_ERR_INVALID when text is not a valid record
 * of this version for scorer s (bad base64, checksum, lengths, another
 * signature or layout): then the caller computes the statistics from the
 * stored request and result, as for a row without one. */
int am_cistats_decode(const am_scorer *s, const char *text, const char *const *names, size_t nsys,
                      am_sys_seg *sys);

/* The hash of scorer s's signature a record carries, and
 * am_cistats_decode with it given: a reader of many records computes it
 * once (hashing the signature was ~1 % of a cold 64,000-segment ?ci=). */
uint64_t am_cistats_sig(const am_scorer *s);
int am_cistats_decode_sig(const am_scorer *s, uint64_t sig, const char *text,
                          const char *const *names, size_t nsys, am_sys_seg *sys);

/* A record's systems in their stored order (the segment's systems, as
 * its result lists them), for a reader that wants them all: GET …/curve's
 * moving windows (api_curve.c). */
#define AM_CISTATS_NAME_MAX 256 /* a longer name: the record is not read */
typedef struct am_cistats_rec {
    const am_scorer *sig_of; /* the scorer whose signature hash is sig (NULL: none yet) */
    uint64_t sig;
    size_t nsys;
    char name[AM_SCORE_MAX_SYSTEMS][AM_CISTATS_NAME_MAX];
    am_sys_seg sys[AM_SCORE_MAX_SYSTEMS];
} am_cistats_rec;

/* Decodes record text (borrowed) for scorer s into out (caller's, ~100 KB:
 * allocate it once, sig_of NULL before the first call). Returns AM_OK, or AM_ERR_INVALID (out->nsys
 * 0) as am_cistats_decode, and also when a name is AM_CISTATS_NAME_MAX bytes or longer or holds a
 * NUL. */
int am_cistats_read(const am_scorer *s, const char *text, am_cistats_rec *out);

#endif
