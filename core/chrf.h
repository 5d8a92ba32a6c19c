/*
 * chrf.h — chrF and chrF++ exactly as sacreBLEU 2.6.0 computes them
 * (sacrebleu/metrics/chrf.py, helpers.py), from mergeable sufficient
 * statistics.
 *
 * Statistics of one segment are computed once for every character order
 * 1..AM_CHRF_MAX_CHAR_ORDER and word order 1..AM_CHRF_MAX_WORD_ORDER; the
 * statistics of one order do not depend on the other orders, so chrF2
 * (char order 6, word order 0) and chrF2++ (word order 2) are both scored
 * from the same statistics. Corpus statistics are the element-wise sums of
 * segment statistics (am_chrf_merge), as sacreBLEU's sum_of_lists.
 *
 * sacreBLEU behaviours reproduced:
 *  - characters are Unicode code points; with whitespace off (default),
 *    every code point for which Python's str.isspace() holds is removed
 *    before the character n-grams are taken (''.join(line.split()));
 *  - word n-grams come from chrF++'s punctuation rule on str.split()
 *    tokens: a token of one code point stays; otherwise a trailing ASCII
 *    punctuation character (string.punctuation) is split off, else a
 *    leading one; at most one character is split off per token;
 *  - for an order where the reference has no n-gram, the hypothesis count
 *    is recorded as 0 ("don't count hits if no reference exists");
 *  - lowercase (off by default) is Python's str.lower();
 *  - an empty or whitespace-only reference has no n-grams: the segment's
 *    statistics are all 0 and its sentence chrF is 0.0 (sacreBLEU >= 2.2
 *    accepts "" and scores it so);
 *  - several references: the hypothesis is matched against each and the
 *    statistics of the reference with the highest chrF under the score
 *    options given (sacreBLEU's _compute_segment_statistics: strictly
 *    greater wins, so the first of equal references is kept) are added.
 *    The choice depends on the score options, so statistics gathered with
 *    several references are valid only for the score options used to
 *    gather them (chrF and chrF++ need separate statistics then).
 */
#ifndef AM_CHRF_H
#define AM_CHRF_H

#include "am.h"

#define AM_CHRF_MAX_CHAR_ORDER 6
#define AM_CHRF_MAX_WORD_ORDER 4
/* Largest beta accepted (sacreBLEU has no bound; beyond it the score is
 * recall alone to double precision). */
#define AM_CHRF_MAX_BETA 1000

/* Sufficient statistics. For each order n (index n-1): [0] hypothesis
 * n-grams, [1] reference n-grams, [2] matched n-grams (clipped counts).
 * Plain data: copy, zero with am_chrf_stats_init, no cleanup needed. */
typedef struct am_chrf_stats {
    int64_t ch[AM_CHRF_MAX_CHAR_ORDER][3];
    int64_t wd[AM_CHRF_MAX_WORD_ORDER][3];
} am_chrf_stats;

/* Options that change the statistics (store them with the statistics:
 * statistics computed with different options must not be merged). */
typedef struct am_chrf_opts {
    int lowercase; /* sacreBLEU lowercase=True: both sides str.lower() */
    int whitespace; /* sacreBLEU whitespace=True: keep whitespace in char n-grams */
} am_chrf_opts;

/* Options of the score formula. */
typedef struct am_chrf_score_opts {
    int char_order; /* 0..AM_CHRF_MAX_CHAR_ORDER; sacreBLEU default 6 */
    int word_order; /* 0..AM_CHRF_MAX_WORD_ORDER; 0 = chrF, 2 = chrF++ */
    int beta; /* >= 0; default 2 */
    int eps_smoothing; /* sacreBLEU eps_smoothing; default 0 (effective order) */
} am_chrf_score_opts;

/* Opaque reusable workspace (hash tables and buffers). One workspace per
 * thread; reusing it across calls avoids allocation in the hot path. */
typedef struct am_chrf_ws am_chrf_ws;

/* Creates a workspace into *out. Caller frees with am_chrf_ws_free.
 * Returns AM_OK. */
int am_chrf_ws_new(am_chrf_ws **out);
/* Frees a workspace (NULL is a no-op). */
void am_chrf_ws_free(am_chrf_ws *ws);

/* Sets *o to sacreBLEU's defaults (lowercase off, whitespace off). */
void am_chrf_opts_init(am_chrf_opts *o);
/* Sets *o to sacreBLEU's defaults (char order 6, beta 2, no eps
 * smoothing) with the given word order (0: chrF2, 2: chrF2++). */
void am_chrf_score_opts_init(am_chrf_score_opts *o, int word_order);

/* Zeroes the statistics. */
void am_chrf_stats_init(am_chrf_stats *s);

/* Computes the statistics of one segment (hypothesis hyp against the
 * references refs[0..nrefs), all valid UTF-8, NUL-terminated, borrowed)
 * and adds them to *stats (zero *stats first to get the segment's own
 * statistics). With nrefs > 1 the statistics of the best reference under
 * sel are added (see above; sel NULL: chrF2's defaults; ignored for one
 * reference). ws may be NULL (a temporary workspace is used); opts may be
 * NULL (defaults). Returns AM_OK; AM_ERR_INVALID when stats, hyp, refs or
 * a reference is NULL, nrefs is 0 or sel is out of range (then *stats is
 * unchanged); AM_ERR_RANGE (unchanged) when a sum would overflow or a
 * text is longer than 2^26 bytes. */
int am_chrf_stats_add(am_chrf_stats *stats, am_chrf_ws *ws, const am_chrf_opts *opts,
                      const am_chrf_score_opts *sel, const char *hyp, const char *const *refs,
                      size_t nrefs);

/* dst += src, element-wise. Returns AM_OK, or AM_ERR_RANGE (dst unchanged)
 * when a sum would overflow. */
int am_chrf_merge(am_chrf_stats *dst, const am_chrf_stats *src);

/* Scores statistics (corpus sums or one segment's) with sacreBLEU's
 * CHRF._compute_f_score; the result is in [0, 100], never NaN. opts may be
 * NULL (chrF2). Returns AM_OK, or AM_ERR_INVALID for NULL stats/out or an
 * order/beta out of range. */
int am_chrf_score(const am_chrf_stats *stats, const am_chrf_score_opts *opts, double *out);

/* Sentence chrF: sacreBLEU's sentence_score computes the very same formula
 * on one segment's statistics (the effective-order averaging of
 * _compute_f_score is what makes it well-defined for short segments), so
 * this is am_chrf_score on a segment's statistics; it exists so callers
 * need not know that. Same contract as am_chrf_score. */
int am_chrf_sentence_score(const am_chrf_stats *seg, const am_chrf_score_opts *opts, double *out);

#endif
