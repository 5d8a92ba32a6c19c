/*
 * cli_report.h — the output of `adaptmon score` (score_out.c): the totals
 * and per-segment tables as report.h models, the sacreBLEU signatures, and
 * the learning-curve figure (plot.h).
 *
 * score_run.c scores; this module only turns scores into rows, columns,
 * notes and points. The significance tests and exposures (sig.c)
 * are further columns of the same rows: a Δ to the baseline, a CI, a
 * p-value and the resampling of every metric, so every format has them.
 */
#ifndef AM_CLI_REPORT_H
#define AM_CLI_REPORT_H

#include "report.h"
#include "score.h"

#include <jansson.h>
#include <stdint.h>

/* sacreBLEU 2.x signatures of the BLEU, chrF (nw 0 and 2) and TER that the
 * scorer computes with nrefs references, derived from the options it uses
 * (BLEU's tokenizer resolved from the target language), added as notes
 * "sacrebleu-bleu", "sacrebleu-chrf", "sacrebleu-chrf++", "sacrebleu-ter". */
#define AM_SACREBLEU_VERSION "2.6.0"
void am_cli_sacrebleu_notes(const am_scorer *s, size_t nrefs, am_report *r);
/* The signature of one metric ("bleu", "chrf", "chrf++", "ter") appended to out. */
void am_cli_sacrebleu_signature(const am_scorer *s, size_t nrefs, const char *metric, am_buf *out);

/* Adds a row of a system's totals: columns system, [doc when doc != NULL],
 * segments, R0.., R0+1, BLEU, chrF2, chrF2++, TER, 1-TERm and, when terms,
 * term-EM and WO<w>. */
void am_cli_report_totals(am_report *r, const am_config *cfg, const char *system, const char *doc,
                          const am_totals *t, int terms);

/* Adds a per-segment row: seq (1-based over the run), id, doc, system, the
 * segment's own R0, R1, R0+1, BLEU, chrF2, TER, term-EM and the running
 * values after it (run_r0, run_r1, run_r01, run_term_em, run_one_minus_term,
 * run_bleu, run_chrf2, run_ter) from running. */
/* Declares those columns (so that a run without segments still has its
 * header); am_cli_report_segment adds them in the same order. */
void am_cli_report_segment_columns(am_report *r);
void am_cli_report_segment(am_report *r, int64_t seq, const char *id, const char *doc,
                           const char *system, const am_sys_seg *seg, const am_totals *running);

/* -m/--metrics groups (bit numbers of the selection), in the order of
 * the names bleu, chrf, chrf++, ter, recall (R0..Rk, R0+1), 1-term and
 * terms (term-EM, WO). */
enum {
    AM_CLI_M_BLEU = 0,
    AM_CLI_M_CHRF,
    AM_CLI_M_CHRFPP,
    AM_CLI_M_TER,
    AM_CLI_M_RECALL,
    AM_CLI_M_TERM,
    AM_CLI_M_TERMS
};
/* A copy of in (notes, rows) into out (initialized here; the caller
 * cleans it up) with only the columns of the selected groups (bit g of
 * groups: group g) and those of no metric (system, doc, segments, seq,
 * id, exposures); a metric's significance columns follow it. */
void am_cli_report_select(const am_report *in, unsigned groups, am_report *out);
/* Adds the result of am_sig_run (sig.h; borrowed) to the rows of
 * the systems' totals (with by_doc, the aggregate rows, doc "all"): per
 * metric M (report key k) the columns k_delta (ΔM: score − the baseline's
 * score; empty for the baseline and without one), k_ci (the interval
 * [lo, hi]; paired bootstrap only), k_p (the p-value; empty for the
 * baseline) and k_resampling ("segments" or "sessions"), and the notes
 * test, baseline, n, seed and confidence. */
void am_cli_report_significance(am_report *r, json_t *sig, int by_doc);
/* The same result for papers (table, markdown, LaTeX): per metric M one
 * text column k_sig labelled "M (μ ± 95% CI)" (paired bootstrap and
 * --confidence) or "M (p)" (approximate randomization) in place of the
 * column of M's score, with cells as sacreBLEU prints them, "64.35 (64.36
 * ± 1.26) (p = 0.0010)*": the score, the bootstrap mean and half-width of
 * the interval with prec decimals, the p-value (not for the
 * baseline) with its own decimals (4, more when 1/(n+1) needs them), '*'
 * for p < 0.05 and '†' for Δ 0 at p = 1/(n+1) (identical totals); the
 * resampling unit once as a note, footnotes for the marks used. */
void am_cli_report_significance_compact(am_report *r, json_t *sig, int by_doc, int prec);
/* Adds the result of am_sig_exposures (borrowed) to the same rows: columns
 * exp_known, exp_learned, exp_never, exp_median (median exposures to learn;
 * empty when none) and exp_histogram (the counts of 0, 1, … exposures,
 * space-separated). */
void am_cli_report_exposures(am_report *r, json_t *expo, int by_doc);

/* ---- the learning-curve figure -------------------------------------------- */

enum { AM_CP_R0, AM_CP_R1, AM_CP_R01, AM_CP_TERM, AM_CP_WO, AM_CP_OMT, AM_CP_N };

/* Points of every system after every segment: running values (window 0)
 * or over the last `window` segments, with Wilson 95% intervals of the
 * ratio metrics when ci is set. */
typedef struct am_cli_plot {
    size_t nsys, window, n, cap;
    int ci;
    int wo_index; /* which window-overlap width (the first) */
    double *v; /* n × nsys × AM_CP_N values */
    double *lo, *hi; /* same layout, when ci */
    double *ring; /* window × nsys × AM_CP_N × {num, den} per-segment counts */
} am_cli_plot;

void am_cli_plot_init(am_cli_plot *p, size_t nsys, size_t window, int ci);
void am_cli_plot_cleanup(am_cli_plot *p);
/* Adds the point after one segment: seg[0..nsys) its scores, running[..]
 * the running totals after it. */
void am_cli_plot_add(am_cli_plot *p, const am_sys_seg *seg, const am_totals *running);
/* The SVG figure (at most `points` samples, first and last kept) into out;
 * names[0..nsys) the systems, wo the window-overlap width shown. */
void am_cli_plot_svg(const am_cli_plot *p, const char *const *names, int wo, size_t points,
                     const char *title, am_buf *out);

#endif
