/*
 * score_out.c — the output of `adaptmon score`.
 *
 * The totals (per document with --by-doc) become an am_report printed in
 * the chosen format by cli_report.c, or one JSON document (--json); the
 * learning-curve figure goes to --plot's file, written in place when that
 * is a link's target or a special file. Reals in JSON are printed as the
 * shortest text that reads back. The alam2021 profile scores whole SGML
 * documents through compat/alam2021 and only prints its rows, so its path
 * lives here too.
 */
#include "score_int.h"

#include "compat/alam2021.h"
#include "json.h"
#include "realfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Prints root (borrowed) indented, keys in insertion order, every real as
 * the shortest text that reads back (am_realfmt_json_text: jansson prints
 * 17 digits, 0.64352818371607512 for 0.6435281837160751). */
void am_cli_put_json(FILE *out, const json_t *root)
{
    char *dumped = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    char *text = am_realfmt_json_text(dumped ? dumped : "null");
    fputs(text, out);
    fputc('\n', out);
    free(text);
    free(dumped);
}

/* Prints the per-segment report (when not NULL) and the totals report in
 * the chosen format; CSV and TSV hold one table, so with per-segment rows
 * only those (their running values end at the totals). */
static void am_cli_print_reports(const am_cli *c, const am_report *segrep, const am_report *tot)
{
    am_buf out;
    am_buf_init(&out);
    am_report selseg, seltot;
    if (c->metrics) { /* -m: the selected metrics' columns only */
        if (segrep) {
            am_cli_report_select(segrep, c->metrics, &selseg);
            segrep = &selseg;
        }
        am_cli_report_select(tot, c->metrics, &seltot);
        tot = &seltot;
    }
    if (segrep) {
        am_report_render(segrep, c->format, c->precision, &out);
        if (c->format != AM_RP_CSV && c->format != AM_RP_TSV) {
            am_buf_appendc(&out, '\n');
            am_report_render(tot, c->format, c->precision, &out);
        }
    } else {
        am_report_render(tot, c->format, c->precision, &out);
    }
    if (c->metrics) {
        if (segrep)
            am_report_cleanup(&selseg);
        am_report_cleanup(&seltot);
    }
    fwrite(out.data ? out.data : "", 1, out.len, c->out);
    am_buf_cleanup(&out);
}

/* Rows of an alam2021 result: the totals row of system into rep and, with
 * --per-segment, a row per segment into segrep. */
static void am_cli_alam_rows(const am_cli *c, const am_alam_result *r, const char *system,
                             am_report *rep, am_report *segrep)
{
    char key[24], label[24];
    size_t row = am_report_row(rep);
    am_report_text(rep, row, am_report_col(rep, "system", NULL), system);
    am_report_ratio(rep, row, am_report_col(rep, "term_em", "term-EM"), (int64_t)r->em_correct,
                    (int64_t)r->em_terms);
    for (size_t w = 0; w < r->nwindows; w++) {
        snprintf(key, sizeof key, "wo%zu", r->windows[w]);
        snprintf(label, sizeof label, "WO%zu", r->windows[w]);
        am_report_real(rep, row, am_report_col(rep, key, label), r->window_overlap[w]);
    }
    am_report_real(rep, row, am_report_col(rep, "one_minus_term", "1-TERm"),
                   r->term_ter_valid ? r->one_minus_term_ter : NAN);
    if (!c->per_segment)
        return;
    for (size_t k = 0; k < r->nsegs; k++) {
        const am_alam_seg *sg = &r->segs[k];
        row = am_report_row(segrep);
        am_report_text(segrep, row, am_report_col(segrep, "id", NULL), sg->id);
        am_report_text(segrep, row, am_report_col(segrep, "system", NULL), system);
        am_report_ratio(segrep, row, am_report_col(segrep, "term_em", "term-EM"),
                        (int64_t)sg->em_correct, (int64_t)sg->em_terms);
        for (size_t w = 0; w < r->nwindows; w++) {
            snprintf(key, sizeof key, "wo%zu", r->windows[w]);
            snprintf(label, sizeof label, "WO%zu", r->windows[w]);
            am_report_real(segrep, row, am_report_col(segrep, key, label), sg->wo[w]);
        }
        am_report_real(segrep, row, am_report_col(segrep, "term", "TERm"),
                       sg->term_ter_valid ? sg->term_ter : NAN);
    }
}

/* The alam2021 profile: whole SGML documents through compat/alam2021. */
int am_cli_alam(const am_cli *c, const am_sgml_doc *src, const am_sgml_doc *ref,
                const am_sgml_doc *hyps)
{
    size_t windows[AM_MAX_WINDOWS];
    for (size_t w = 0; w < c->cfg.nwindows; w++)
        windows[w] = (size_t)c->cfg.windows[w];
    am_buf sig;
    am_buf_init(&sig);
    am_config_signature(&c->cfg, &sig);
    json_t *root = json_object();
    json_object_set_new(root, "signature", json_string(am_buf_str(&sig)));
    json_t *systems = json_object();
    am_report rep, segrep;
    am_report_init(&rep);
    am_report_init(&segrep);
    int rc = 0;
    for (size_t i = 0; i < c->nhyp && rc == 0; i++) {
        am_alam_result r;
        memset(&r, 0, sizeof r);
        int e = am_alam_score(src, ref, &hyps[i], windows, c->cfg.nwindows, &r);
        if (e == AM_ERR_RANGE) {
            fprintf(c->err,
                    "adaptmon score: %s: segment %s: TERm needs more than %llu edit-distance "
                    "cells, the alam2021 limit (its shift search grows like n^4; shorten the "
                    "segment)\n",
                    c->hyp[i].path, r.err_seg < ref->nsegs ? ref->segs[r.err_seg].id : "?",
                    (unsigned long long)AM_ALAM_TER_MAX_CELLS);
            rc = 1;
        } else if (e != AM_OK) {
            fprintf(c->err, "adaptmon score: %s: %s\n", c->hyp[i].path,
                    e == AM_ERR_NOTFOUND ? "a hypothesis segment id is not in the reference"
                                         : "input the alam2021 scorer cannot process");
            rc = 1;
        } else if (c->format == AM_RP_JSON) {
            json_object_set_new(systems, c->hyp[i].name, am_json_alam(&r, c->per_segment));
        } else {
            am_cli_alam_rows(c, &r, c->hyp[i].name, &rep, &segrep);
        }
        am_alam_result_free(&r);
    }
    json_object_set_new(root, "systems", systems);
    if (c->format == AM_RP_JSON && rc == 0) {
        am_cli_put_json(c->out, root);
    } else if (rc == 0) {
        am_report_note(&rep, "signature", am_buf_str(&sig));
        am_cli_print_reports(c, c->per_segment ? &segrep : NULL, &rep);
    }
    json_decref(root);
    am_report_cleanup(&rep);
    am_report_cleanup(&segrep);
    am_buf_cleanup(&sig);
    return rc;
}

/* sacreBLEU's BLEUScore parts of a system's corpus BLEU (the session's
 * score options): counts and totals (orders 1..max), precisions, bp,
 * sys_len, ref_len. The counts are the statistics themselves (sacreBLEU's
 * add-k adds k to its reported counts; these do not). */
static json_t *am_cli_bleu_stats(const am_totals *t)
{
    am_bleu_score_opts so = t->bleu_so;
    am_bleu_result res;
    json_t *o = json_object();
    if (am_bleu_compute(&t->bleu, &so, &res) != AM_OK)
        return o;
    json_t *counts = json_array(), *totals = json_array(), *prec = json_array();
    for (int n = 0; n < so.max_order; n++) {
        json_array_append_new(counts, json_integer((json_int_t)t->bleu.correct[n]));
        json_array_append_new(totals, json_integer((json_int_t)t->bleu.total[n]));
        json_array_append_new(prec, json_real(res.precisions[n]));
    }
    json_object_set_new(o, "score", json_real(res.score));
    json_object_set_new(o, "counts", counts);
    json_object_set_new(o, "totals", totals);
    json_object_set_new(o, "precisions", prec);
    json_object_set_new(o, "bp", json_real(res.bp));
    json_object_set_new(o, "sys_len", json_integer((json_int_t)t->bleu.sys_len));
    json_object_set_new(o, "ref_len", json_integer((json_int_t)t->bleu.ref_len));
    return o;
}

/* --json: the totals (per document too with --by-doc), the signatures, the
 * per-segment objects, the significance and the exposures (all borrowed)
 * when any. */
void am_cli_print_json(const am_cli *c, const am_cli_run *r, json_t *jsegs, json_t *sig,
                       json_t *expo)
{
    json_t *systems = json_object();
    for (size_t i = 0; i < c->nhyp; i++) {
        json_t *t = am_json_totals(r->scorer, &r->totals[i]);
        json_object_set_new(t, "bleu_stats", am_cli_bleu_stats(&r->totals[i]));
        json_object_set_new(systems, c->hyp[i].name, t);
    }
    json_t *root =
        json_pack("{sssIsIso}", "signature", am_scorer_signature(r->scorer), "sessions",
                  (json_int_t)r->nsess, "segments", (json_int_t)r->nseg, "systems", systems);
    json_t *sb = json_object();
    static const char *const metrics[] = {"bleu", "chrf", "chrf++", "ter"};
    am_buf b;
    am_buf_init(&b);
    for (size_t k = 0; k < 4; k++) {
        am_buf_reset(&b);
        am_cli_sacrebleu_signature(r->scorer, 1 + c->nxref, metrics[k], &b);
        json_object_set_new(sb, metrics[k], json_string(am_buf_str(&b)));
    }
    /* the metric names sacreBLEU prints with them (chrF{beta}, one '+' per
     * word order) */
    json_t *names = json_object();
    const am_config *cfg = am_scorer_config(r->scorer);
    json_object_set_new(names, "bleu", json_string("BLEU"));
    for (int pp = 0; pp < 2; pp++) {
        am_buf sigb;
        am_buf_init(&sigb);
        am_config_chrf_signature(cfg, pp, 1, &b, &sigb);
        json_object_set_new(names, pp ? "chrf++" : "chrf", json_string(am_buf_str(&b)));
        am_buf_cleanup(&sigb);
    }
    json_object_set_new(names, "ter", json_string("TER"));
    am_buf_cleanup(&b);
    json_object_set_new(root, "sacrebleu", sb);
    json_object_set_new(root, "sacrebleu_names", names);
    if (r->doc_totals) {
        json_t *docs = json_array();
        for (size_t d = 0; d < r->nsess; d++) {
            json_t *ds = json_object();
            for (size_t i = 0; i < c->nhyp; i++)
                json_object_set_new(ds, c->hyp[i].name,
                                    am_json_totals(r->scorer, &r->doc_totals[d * c->nhyp + i]));
            json_array_append_new(docs, json_pack("{sssIso}", "doc", r->sess_doc[d], "segments",
                                                  (json_int_t)r->sess_n[d], "systems", ds));
        }
        json_object_set_new(root, "documents", docs);
    }
    if (jsegs)
        json_object_set(root, "per_segment", jsegs);
    if (sig)
        json_object_set(root, "significance", sig);
    if (expo)
        json_object_set(root, "exposures", expo);
    if (c->skips.reasons)
        json_object_set_new(root, "skipped", am_cli_skips_json(&c->skips));
    am_cli_put_json(c->out, root);
    json_decref(root);
}

/* The totals table (a row per document and system first with --by-doc,
 * then the aggregate) with the signatures as notes, the significance and
 * exposures (borrowed; NULL: none) as columns of the aggregate rows, after
 * the per-segment rows when any. */
void am_cli_print_table(const am_cli *c, const am_cli_run *r, const am_report *segrep, json_t *sig,
                        json_t *expo)
{
    const am_config *cfg = am_scorer_config(r->scorer);
    am_report rep;
    am_report_init(&rep);
    char n[32];
    am_report_note(&rep, "signature", am_scorer_signature(r->scorer));
    am_cli_sacrebleu_notes(r->scorer, 1 + c->nxref, &rep);
    snprintf(n, sizeof n, "%zu", r->nsess);
    am_report_note(&rep, "sessions", n);
    snprintf(n, sizeof n, "%zu", r->nseg);
    am_report_note(&rep, "segments", n);
    int terms = am_scorer_glossary_size(r->scorer) > 0 || c->sgml;
    for (size_t d = 0; r->doc_totals && d < r->nsess; d++)
        for (size_t i = 0; i < c->nhyp; i++)
            am_cli_report_totals(&rep, cfg, c->hyp[i].name, r->sess_doc[d],
                                 &r->doc_totals[d * c->nhyp + i], terms);
    for (size_t i = 0; i < c->nhyp; i++)
        am_cli_report_totals(&rep, cfg, c->hyp[i].name, r->doc_totals ? "all" : NULL, &r->totals[i],
                             terms);
    if (sig && (c->format == AM_RP_TABLE || c->format == AM_RP_MARKDOWN ||
                c->format == AM_RP_LATEX)) /* for papers: compact cells */
        am_cli_report_significance_compact(&rep, sig, r->doc_totals != NULL, c->precision);
    else if (sig)
        am_cli_report_significance(&rep, sig, r->doc_totals != NULL);
    if (expo)
        am_cli_report_exposures(&rep, expo, r->doc_totals != NULL);
    am_cli_print_reports(c, segrep, &rep);
    am_report_cleanup(&rep);
}

/* Writes svg (borrowed; freed here) into the special file path in place.
 * Returns 0 or 1 with a message. */
static int am_cli_write_special(FILE *err, const char *path, am_buf *svg)
{
    FILE *fp = fopen(path, "wb");
    int bad = !fp || fwrite(svg->data, 1, svg->len, fp) != svg->len;
    if (fp && fclose(fp) != 0)
        bad = 1;
    if (bad)
        fprintf(err, "adaptmon score: cannot write '%s': %s\n", path, strerror(errno));
    am_buf_cleanup(svg);
    return bad;
}

/* Writes the learning-curve figure to c->plot_path. Returns 0 or 1. */
int am_cli_write_plot(const am_cli *c, const am_cli_run *r, const am_cli_plot *plot)
{
    const char *names[AM_CLI_MAX_SYS];
    for (size_t i = 0; i < c->nhyp; i++)
        names[i] = c->hyp[i].name;
    const am_config *cfg = am_scorer_config(r->scorer);
    char title[96];
    if (c->plot_window)
        snprintf(title, sizeof title, "Learning curves (moving window of %d segments)",
                 c->plot_window);
    else
        snprintf(title, sizeof title, "Learning curves (running values)");
    am_buf svg;
    am_buf_init(&svg);
    am_cli_plot_svg(plot, names, cfg->nwindows ? cfg->windows[0] : 0,
                    c->plot_points ? (size_t)c->plot_points : 500, title, &svg);
    /* a new file renamed over the target: a failed write leaves no half figure.
     * A link is followed (its target gets the figure, the link stays); a
     * special file (FIFO, /dev/stdout, a terminal) is written in place. */
    struct stat st;
    char *real = NULL;
    if (stat(c->plot_path, &st) == 0 && !S_ISREG(st.st_mode))
        return am_cli_write_special(c->err, c->plot_path, &svg);
    if (lstat(c->plot_path, &st) == 0 && S_ISLNK(st.st_mode))
        real = realpath(c->plot_path, NULL);
    const char *target = real ? real : c->plot_path;
    am_buf tmp;
    am_buf_init(&tmp);
    am_buf_printf(&tmp, "%s.XXXXXX", target);
    int fd = mkstemp(tmp.data);
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0)
        (void)fchmod(fd, 0666 & ~mask); /* as fopen would create it, not 0600 */
    FILE *fp = fd < 0 ? NULL : fdopen(fd, "wb");
    int bad = !fp || fwrite(svg.data, 1, svg.len, fp) != svg.len;
    if (fp && fclose(fp) != 0)
        bad = 1;
    else if (!fp && fd >= 0)
        close(fd);
    if (!bad && rename(tmp.data, target) != 0)
        bad = 1;
    if (bad) {
        fprintf(c->err, "adaptmon score: cannot write '%s': %s\n", c->plot_path, strerror(errno));
        if (fd >= 0)
            unlink(tmp.data);
    }
    free(real);
    am_buf_cleanup(&tmp);
    am_buf_cleanup(&svg);
    return bad;
}

/* Runs the significance test and the exposure count on the collected
 * statistics: *sig and *expo (new references, caller decrefs; NULL when
 * not asked). Returns 0, or 1 after printing an error. */
int am_cli_signif(const am_cli *c, json_t **sig, json_t **expo)
{
    *sig = *expo = NULL;
    if (!c->sigc)
        return 0;
    const char *names[AM_CLI_MAX_SYS];
    for (size_t i = 0; i < c->nhyp; i++)
        names[i] = c->hyp[i].name;
    int rc = 0;
    am_buf err;
    am_buf_init(&err);
    if (c->sig.test && !(*sig = am_sig_run(c->sigc, &c->sig, names, &err))) {
        fprintf(c->err, "adaptmon score: %s\n", am_buf_str(&err));
        rc = 1;
    }
    am_buf_cleanup(&err);
    if (rc == 0 && c->exposures)
        *expo = am_sig_exposures(c->sigc, names);
    return rc;
}
