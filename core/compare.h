/*
 * compare.h — one system's session totals against another's (a system
 * against the session's baseline): the relative difference (x − b) / b of
 * every session score (docs/metrics.md; docs/metrics.md §paired: both totals
 * must cover the same segments, which is the caller's business).
 *
 * Pure and allocation-free: plain structs in, plain structs out.
 */
#ifndef AM_COMPARE_H
#define AM_COMPARE_H

#include "score.h"

/* The relative differences: the fields of am_totals_scores, each one
 * (x − b) / b, or NAN where undefined. k: the highest recall shot both
 * totals have (rel.r[k+1..] are NAN). */
typedef struct am_totals_rel {
    int k;
    am_totals_scores rel;
} am_totals_rel;

/* (x − b) / b of every score of am_totals_scores_compute: recall R0..Rk
 * and R0+1, the term ratios and windows, TER, TERm, 1−TERm, BLEU, chrF and
 * chrF++. A score is NAN where b or x is NULL (no totals), either side's
 * score is null, or the baseline's is 0. b and x are borrowed. */
void am_totals_relative(const am_totals *b, const am_totals *x, am_totals_rel *out);

/* (x − b) / b, NAN when either is not finite or b is 0. */
double am_relative_diff(double b, double x);

#endif
