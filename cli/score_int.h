/*
 * score_int.h — what the files of `adaptmon score` share, and nothing else.
 *
 * The command is five files along the life of one run: cli_score.c reads
 * the command line into an am_cli and drives the run (am_cli_score);
 * score_in.c loads the inputs (plain text, SGML, XLIFF, the glossary and
 * word lists) into an am_cli_run of segments and sessions; score_sess.c
 * scores one session in order, segment by segment (the path every
 * per-segment consumer needs, and the one on a single core); score_run.c
 * scores the sessions, on several threads when no per-segment output is
 * asked for, and runs the whole scoring step (am_cli_score_run);
 * score_out.c prints the results (and holds the alam2021 profile's own
 * path, whose work is mostly printing). The types below are the run's state
 * passed between them; the functions are the few each file calls in
 * another. Private to cli/: the public entry is cli.h's am_cli_score.
 */
#ifndef AM_SCORE_INT_H
#define AM_SCORE_INT_H

#include "cli_report.h"
#include "cli_xliff.h"
#include "config.h"
#include "glossary.h"
#include "score.h"
#include "sgml.h"
#include "sig.h"
#include "vocab.h"
#include "xliff.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define AM_CLI_MAX_FILE (1024L * 1024L * 1024L) /* 1 GiB per input file */
#define AM_CLI_MAX_SYS AM_SCORE_MAX_SYSTEMS

typedef struct am_cli_file {
    char *name; /* system name (hypotheses); NULL until named */
    char *path;
    char *buf; /* whole file, NUL-terminated */
    size_t len;
} am_cli_file;

/* References after the first (--ref repeated, -r a b ...). */
#define AM_CLI_MAX_XREF (AM_SCORE_MAX_REFS - 1)

typedef struct am_cli {
    am_config cfg;
    am_cli_file ref, src, sgm_src, sgm_ref;
    am_cli_file xref[AM_CLI_MAX_XREF]; /* more references: BLEU, chrF, TER only */
    size_t nxref;
    am_cli_file hyp[AM_CLI_MAX_SYS];
    size_t nhyp;
    int sgml; /* SGML input mode */
    const char *glossary_path, *glossary_format, *background_path, *stopwords_path;
    int per_segment, by_doc, by_file;
    enum am_rp_format format; /* --format (--json: AM_RP_JSON) */
    int precision; /* --precision: decimals of table/markdown/LaTeX numbers */
    const char *plot_path; /* --plot FILE.svg (borrowed from argv) */
    int plot_window, plot_points, plot_ci; /* --plot-window, --plot-points, --plot-ci */
    const char **xliff; /* --xliff paths (borrowed from argv; array owned) */
    size_t nxliff;
    const char **xliff_mt; /* --xliff-mt paths, the i-th pairs with the i-th --xliff */
    size_t nxliff_mt;
    am_cli_skips skips; /* XLIFF units not scored, per reason */
    am_sig_opts sig; /* --paired-bs / --paired-ar (sig.c) */
    int exposures; /* --exposures */
    int confidence; /* --confidence: bootstrap CIs of each system alone, no test */
    int ci_given; /* --ci given (it needs intervals: --paired-bs or --confidence) */
    unsigned metrics; /* -m/--metrics: the selected groups (am_cli_metric_names); 0: all */
    am_sig_collect *sigc; /* per-segment statistics (sig.test) and exposures */
    FILE *out, *err; /* where the run prints its result and its messages (borrowed:
                      * the caller's streams, never closed here) */
} am_cli;

/* One segment of the session, as texts borrowed from the loaded files. */
typedef struct am_cli_seg {
    const char *id;
    const char *src;
    const char *ref;
    const char *const *xrefs; /* the more references [nxref] (plain text) */
    const char *hyp[AM_CLI_MAX_SYS];
    size_t doc;
    const char *docid; /* SGML: the document's docid (NULL: none) */
    const am_sgml_seg *ref_seg; /* SGML mode: for term annotations */
} am_cli_seg;

/* Term annotations of an SGML reference segment: each <term> tag's targets
 * (tgt split on '|') and its span in the plain text. */
typedef struct am_cli_annots {
    am_terms_annot *v;
    char **targets; /* all split targets, owned */
    size_t n, ntargets;
} am_cli_annots;

/* Where per-segment results go besides the totals (each part optional). */
typedef struct am_cli_sink {
    json_t *jsegs; /* --json --per-segment: one object per segment (borrowed) */
    am_report *segrep; /* --per-segment in another format: rows (borrowed) */
    am_cli_plot *plot; /* --plot: the points (borrowed) */
    const am_totals *base; /* [nhyp] totals of the earlier sessions, or NULL */
    int64_t seq; /* segments scored before, over the whole run */
} am_cli_sink;

/* Everything one `adaptmon score` run loads and computes (am_cli_run_free
 * releases it). Sessions are [sess_first[d], +sess_n[d]) ranges of segs,
 * sess_doc[d] their document label (NULL without --by-doc). */
typedef struct am_cli_run {
    am_gloss gloss;
    am_vocab *background;
    am_toks custom_sw;
    am_sgml_doc sref, ssrc, shyp[AM_CLI_MAX_SYS];
    am_cli_seg *segs;
    size_t nseg;
    char **ref_lines, **src_lines, **hyp_lines[AM_CLI_MAX_SYS];
    char **xref_lines[AM_CLI_MAX_XREF];
    const char **xref_flat; /* [nseg × nxref]: segment k's more references at k × nxref */
    char (*line_ids)[24];
    am_xliff_doc *xdocs;
    size_t *sess_first, *sess_n, nsess;
    const char **sess_doc;
    am_scorer *scorer;
    am_score_ws *ws;
    am_totals *totals; /* [nhyp] over all sessions */
    am_totals *doc_totals; /* [nsess × nhyp] with --by-doc */
} am_cli_run;

/* cli_score.c: the options (score_embed.c reuses them). */
void am_cli_init(am_cli *c, FILE *out, FILE *err);
int am_cli_parse(int argc, char **argv, am_cli *c);
void am_cli_free(am_cli *c);

/* score_in.c: the inputs (each function documented where defined). */
int am_cli_load_resources(am_cli *c, am_gloss *gloss, am_vocab **background, am_toks *custom_sw);
int am_cli_xliff(am_cli *c, am_xliff_doc *docs, am_cli_seg **segs, size_t *nseg,
                 size_t **sess_first, size_t **sess_n, size_t *nsess);
am_cli_run *am_cli_run_new(const am_cli *c);
void am_cli_run_free(const am_cli *c, am_cli_run *r);
int am_cli_read_sgml(am_cli *c, am_cli_run *r);
int am_cli_read_plain(am_cli *c, am_cli_run *r);

/* score_sess.c: one session in order. */
void am_cli_annots_free(am_cli_annots *a);
am_seg_input am_cli_seg_input(const am_cli *c, const am_cli_seg *sg, am_cli_annots *an);
int am_cli_history_lookup(void *ctx, const char *word, int64_t *occ);
int am_cli_session_seg(const am_cli *c, const am_scorer *s, am_score_ws *ws, am_vocab *hist,
                       const am_cli_seg *sg, am_totals *totals, am_cli_sink *sink);
int am_cli_session(const am_cli *c, const am_scorer *s, am_score_ws *ws, const am_cli_seg *segs,
                   size_t n, am_totals *totals, am_cli_sink *sink);

/* score_run.c: the scoring step. */
int am_cli_new_scorer(const am_cli *c, am_cli_run *r);
int am_cli_score_run(am_cli *c, am_cli_run *r);

/* score_out.c: the output, and the alam2021 profile. */
void am_cli_put_json(FILE *out, const json_t *root);
int am_cli_alam(const am_cli *c, const am_sgml_doc *src, const am_sgml_doc *ref,
                const am_sgml_doc *hyps);
void am_cli_print_json(const am_cli *c, const am_cli_run *r, json_t *jsegs, json_t *sig,
                       json_t *expo);
void am_cli_print_table(const am_cli *c, const am_cli_run *r, const am_report *segrep, json_t *sig,
                        json_t *expo);
int am_cli_write_plot(const am_cli *c, const am_cli_run *r, const am_cli_plot *plot);
int am_cli_signif(const am_cli *c, json_t **sig, json_t **expo);

#endif
