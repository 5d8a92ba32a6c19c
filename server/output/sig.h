/*
 * sig.h — `adaptmon score --paired-bs / --paired-ar` (and the
 * server's GET …/metrics?ci=, ingest_ci.c): collects every
 * system's per-segment sufficient statistics while the CLI scores, then
 * runs core/signif on them (BLEU, chrF2, chrF2++, TER as sacreBLEU 2.6.0;
 * R0..Rk, R0+1, 1−TERm, term exact match and window overlap) and returns
 * the results as JSON (cli_report.c makes them columns of the totals
 * table of every --format). With --exposures it also
 * tracks how many exposures each system needed to first produce a word
 * (core/exposure.h).
 */
#ifndef AM_SIG_H
#define AM_SIG_H

#include "score.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

typedef struct am_sig_opts {
    int test; /* 0 none, 1 paired bootstrap, 2 approximate randomization */
    const char *baseline; /* system name (borrowed); NULL: the first system */
    size_t n; /* resamples / trials; 0: 1000 (bs) or 10000 (ar) */
    uint64_t seed; /* default 12345 (sacreBLEU's SACREBLEU_SEED) */
    double conf; /* confidence level of the intervals, default 0.95 */
    int text_metrics; /* 1 (default): BLEU, chrF2, chrF2++ too (needs their statistics) */
    int no_p; /* 1: no baseline, p-values null (the first system is only a reference) */
    am_cancel *cancel; /* borrowed; NULL: never stops; when it stops am_sig_run returns
                          NULL and cancel->hit is set */
} am_sig_opts;

void am_sig_opts_init(am_sig_opts *o);

typedef struct am_sig_collect am_sig_collect;

/* A collector for nsys systems scored by s (borrowed; must outlive it):
 * statistics for am_sig_run when stats, first productions for
 * am_sig_exposures when exposures. Caller frees with am_sig_collect_free. */
am_sig_collect *am_sig_collect_new(const am_scorer *s, size_t nsys, int stats, int exposures);
void am_sig_collect_free(am_sig_collect *c);
/* Rebinds c to the scorer s (borrowed; must outlive the next use of c) of
 * a later request on the same session: the GET …/metrics?ci= cache keeps a
 * collector between requests. AM_OK, or AM_ERR_INVALID (c unchanged) when
 * s's layout (R_k, windows) differs from the one c was made with. */
int am_sig_collect_bind(am_sig_collect *c, const am_scorer *s);
/* Segments added so far. */
size_t am_sig_collect_nseg(const am_sig_collect *c);
/* Bytes held by c (its rows and tables; exposures not counted). */
size_t am_sig_collect_bytes(const am_sig_collect *c);
/* Starts a new session: the segments added next belong to it. */
void am_sig_collect_session(am_sig_collect *c);
/* Adds one segment: sys[0..nsys) and its recall result rec (borrowed,
 * copied). */
void am_sig_collect_seg(am_sig_collect *c, const am_sys_seg *sys, const am_recall_seg *rec);

/* Runs the test. names[0..nsys): the system names (borrowed). Returns a
 * new JSON object (caller decrefs) or NULL with a message in err (an
 * unknown baseline, no segment). */
json_t *am_sig_run(const am_sig_collect *c, const am_sig_opts *o, const char *const *names,
                   am_buf *err);
/* Exposures before first production, per system: a new JSON object
 * {name: {histogram, never, known, learned, median_exposures_to_learn}}
 * (caller decrefs). Ends the last session: call it once, after scoring. */
json_t *am_sig_exposures(am_sig_collect *c, const char *const *names);

#endif
