/*
 * signif.h — paired significance tests and bootstrap confidence intervals
 * over per-segment sufficient statistics, as sacreBLEU 2.6.0 computes them
 * (significance.py), extended to ratio metrics (R0, R1, R0+1, term exact
 * match, window overlap, 1−TERm).
 *
 * Every system is resampled with the same indices (numpy's default_rng
 * seeded with the seed, choice(units, size=(n, units))), fresh for every
 * system as sacreBLEU does, so the results of BLEU, chrF and TER equal
 * sacreBLEU's: the resampled sums go through float32 like sacreBLEU's
 * `np.array(stats, dtype='float32')` and the scores of a resample are
 * computed with numpy 1.x promotion (float32 divisions in chrF and TER).
 *
 * A unit is a segment, or a block of segments (a session) when the
 * metric's statistics depend on the history (R_k): then whole sessions are
 * resampled (a block bootstrap), see docs/metrics.md.
 *
 * Pure: no I/O, no globals. Memory: caller-provided inputs are borrowed.
 */
#ifndef AM_SIGNIF_H
#define AM_SIGNIF_H

#include "am.h"
#include "bleu.h"
#include "chrf.h"

#include <stddef.h>
#include <stdint.h>

enum am_sig_kind {
    AM_SIG_BLEU, /* stats: sys_len, ref_len, correct[max_order], total[max_order] */
    AM_SIG_CHRF, /* stats: (hyp, ref, match) per char order, then per word order */
    AM_SIG_TER, /* stats: edits, ref_len; score 100·edits/ref_len (sacreBLEU) */
    AM_SIG_RATIO, /* stats: num, den; score num/den (NAN when den = 0) */
    AM_SIG_ONE_MINUS /* stats: num, den; score 1 − num/den (NAN when den = 0) */
};

typedef struct am_sig_metric {
    enum am_sig_kind kind;
    am_bleu_score_opts bleu; /* AM_SIG_BLEU */
    am_chrf_score_opts chrf; /* AM_SIG_CHRF */
} am_sig_metric;

/* Number of statistics per segment of a metric. */
size_t am_sig_nstats(const am_sig_metric *m);

/* Score of summed statistics. f32: the arithmetic of sacreBLEU's bootstrap
 * resamples (statistics held as float32); 0: that of its corpus scores.
 * Returns NAN when the score is undefined. */
double am_sig_score(const am_sig_metric *m, const double *stats, int f32);

/* One column of statistics read where it lies: unit u's value is
 * i[u * stride] (an integer) or 0.0 + f[u * stride] (exactly one of i, f
 * is set; 0.0 + f: −0.0 read as +0.0, what a sum from zero gives). */
typedef struct am_sig_view {
    const int32_t *i;
    const double *f;
    size_t stride; /* elements from one unit to the next */
} am_sig_view;

/* The data of one metric: stats[s][u * nstats + j] is statistic j of unit
 * u of system s (borrowed). Units are segments, or sessions for a block
 * bootstrap (sum the segments of each session first). Instead of stats
 * (NULL), the bootstrap (am_sig_paired_bs, _many; not AR) also reads
 * views[s * nstats + j], statistic j of system s as a column (borrowed):
 * a caller that keeps compact rows hands them over without copying them
 * into doubles (the same results to the last bit). */
typedef struct am_sig_data {
    const am_sig_metric *metric;
    size_t nsys; /* systems, baseline included */
    size_t nunits;
    const double *const *stats;
    am_cancel *cancel; /* borrowed; NULL: never stops (am.h) */
    const am_sig_view *views; /* used when stats is NULL */
} am_sig_data;

/* One system's result, in sacreBLEU's terms. */
typedef struct am_sig_result {
    double score; /* on all units */
    double p_value; /* NAN for the baseline (null) */
    double mean; /* mean of the resampled scores (NAN for AR) */
    double ci; /* half width: (hi − lo) / 2 (NAN for AR) */
    double lo, hi; /* percentile interval bounds (NAN for AR) */
} am_sig_result;

/* The resampling plan shared by every metric and system of a run: the
 * draws are made as a test runs, one resample or trial at a time (numpy's
 * stream in order), so memory does not grow with n × units. */
typedef struct am_sig_plan {
    int ar; /* 0 bootstrap, 1 approximate randomization */
    size_t nunits, n; /* n resamples (bootstrap) or trials (AR) */
    uint64_t seed;
} am_sig_plan;

/* A plan: bootstrap (ar = 0) or approximate randomization (ar = 1) for
 * nunits units, n resamples/trials, the seed. Returns AM_OK or
 * AM_ERR_INVALID (nunits or n is 0). am_sig_plan_free releases nothing
 * today but pairs with it. */
int am_sig_plan_new(am_sig_plan *p, int ar, size_t nunits, size_t n, uint64_t seed);
void am_sig_plan_free(am_sig_plan *p);

/* Paired bootstrap (a bootstrap plan) against system `baseline`: out[0..nsys).
 * d->cancel is asked between resamples (AR: trials); when it says stop the
 * test returns AM_ERR_CANCELLED with nothing valid in out.
 * conf in (0, 1): the interval drops floor(n·(1−conf)/2) resamples on each
 * side (sacreBLEU: n // 40 for 0.95). Resamples with an undefined score
 * are left out of mean, interval and p-value. Returns AM_OK,
 * AM_ERR_INVALID (bad arguments), AM_ERR_CANCELLED or AM_ERR_NOMEM. */
int am_sig_paired_bs(const am_sig_data *d, size_t baseline, const am_sig_plan *plan, double conf,
                     am_sig_result *out);
/* The paired bootstrap of nd metrics d[0..nd) on the same units and
 * systems with the same plan: out[k][0..nsys) as am_sig_paired_bs(&d[k], …)
 * would give, to the last bit, but each resample drawn once for all of
 * them (the draws are most of a metric's cost), and the metrics whose
 * statistics are small integers summed unit by unit from counts of draws
 * (exact, so the order does not matter). d[0].cancel is asked. Same
 * returns as am_sig_paired_bs. */
int am_sig_paired_bs_many(const am_sig_data *d, size_t nd, size_t baseline, const am_sig_plan *plan,
                          double conf, am_sig_result *const *out);
/* Paired approximate randomization (an AR plan) against `baseline`. */
int am_sig_paired_ar(const am_sig_data *d, size_t baseline, const am_sig_plan *plan,
                     am_sig_result *out);

/* numpy's float64 sum (pairwise, blocks of 8 below 128 items) of x[0..n). */
double am_sig_np_sum(const double *x, size_t n);

#endif
