/* cli_report.c — rows, notes and figure of `adaptmon score` (see
 * cli_report.h). */
#include "cli_report.h"

#include "bleu.h"
#include "chrf.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sacreBLEU signatures ---------------------------------------------- */

void am_cli_sacrebleu_signature(const am_scorer *s, size_t nrefs, const char *metric, am_buf *out)
{
    const am_config *cfg = am_scorer_config(s);
    am_buf sig;
    am_buf_init(&sig);
    if (!strcmp(metric, "bleu")) {
        /* the scorer's BLEU options, its tokenizer resolved (score.c) */
        am_scorer_bleu_signature(s, nrefs, &sig);
    } else if (!strcmp(metric, "chrf") || !strcmp(metric, "chrf++")) {
        /* the session's chrF options (config.c) */
        am_config_chrf_signature(cfg, !strcmp(metric, "chrf++"), nrefs, NULL, &sig);
    } else {
        /* TER: the session's tercom tokenizer options (config.c) */
        am_config_ter_signature(cfg, nrefs, &sig);
    }
    am_buf_appends(out, am_buf_str(&sig));
    am_buf_cleanup(&sig);
}

void am_cli_sacrebleu_notes(const am_scorer *s, size_t nrefs, am_report *r)
{
    static const char *const metrics[] = {"bleu", "chrf", "chrf++", "ter"};
    am_buf b, key;
    am_buf_init(&b);
    am_buf_init(&key);
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
        am_buf_reset(&b);
        am_buf_reset(&key);
        am_cli_sacrebleu_signature(s, nrefs, metrics[i], &b);
        am_buf_printf(&key, "sacrebleu-%s", metrics[i]);
        am_report_note(r, am_buf_str(&key), am_buf_str(&b));
    }
    am_buf_cleanup(&b);
    am_buf_cleanup(&key);
}

/* ---- rows ------------------------------------------------------------------ */

void am_cli_report_totals(am_report *r, const am_config *cfg, const char *system, const char *doc,
                          const am_totals *t, int terms)
{
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    size_t row = am_report_row(r);
    am_report_text(r, row, am_report_col(r, "system", NULL), system);
    if (doc)
        am_report_text(r, row, am_report_col(r, "doc", NULL), doc);
    am_report_int(r, row, am_report_col(r, "segments", NULL), t->segments);
    for (int k = 0; k <= cfg->k; k++) {
        char key[16], label[16];
        snprintf(key, sizeof key, "r%d", k);
        snprintf(label, sizeof label, "R%d", k); /* R2 beside R0, R1 (not r2) */
        am_report_ratio(r, row, am_report_col(r, key, label), t->recall.r[k].hits,
                        t->recall.r[k].total);
    }
    am_report_ratio(r, row, am_report_col(r, "r01", "R0+1"), t->recall.r01.hits,
                    t->recall.r01.total);
    am_report_real(r, row, am_report_col(r, "bleu", "BLEU"), sc.bleu);
    am_report_real(r, row, am_report_col(r, "chrf2", "chrF2"), sc.chrf);
    am_report_real(r, row, am_report_col(r, "chrf2pp", "chrF2++"), sc.chrfpp);
    am_report_real(r, row, am_report_col(r, "ter", "TER"), sc.ter * 100);
    am_report_real(r, row, am_report_col(r, "one_minus_term", "1-TERm"), sc.one_minus_term);
    if (!terms)
        return;
    am_report_ratio(r, row, am_report_col(r, "term_em", "term-EM"), (int64_t)t->terms.exact,
                    (int64_t)t->terms.instances);
    for (size_t w = 0; w < cfg->nwindows; w++) {
        char key[24], label[24];
        snprintf(key, sizeof key, "wo%d", cfg->windows[w]);
        snprintf(label, sizeof label, "WO%d", cfg->windows[w]);
        am_report_real(r, row, am_report_col(r, key, label), sc.terms.window[w]);
    }
}

/* ---- -m/--metrics: the selected columns ------------------------------------ */

/* The metric group of a column key (AM_CLI_M_*), or -1 for the columns
 * every selection keeps (system, doc, segments, exposures, seq, id). */
static int am_cli_key_group(const char *key)
{
    if (!strncmp(key, "run_", 4))
        key += 4;
    if (!strncmp(key, "bleu", 4))
        return AM_CLI_M_BLEU;
    if (!strncmp(key, "chrf2pp", 7))
        return AM_CLI_M_CHRFPP;
    if (!strncmp(key, "chrf2", 5))
        return AM_CLI_M_CHRF;
    if (!strcmp(key, "ter") || !strncmp(key, "ter_", 4))
        return AM_CLI_M_TER;
    if (key[0] == 'r' && key[1] >= '0' && key[1] <= '9')
        return AM_CLI_M_RECALL;
    if (!strncmp(key, "one_minus_term", 14))
        return AM_CLI_M_TERM;
    if (!strncmp(key, "term_em", 7) ||
        (key[0] == 'w' && key[1] == 'o' && key[2] >= '0' && key[2] <= '9'))
        return AM_CLI_M_TERMS;
    return -1;
}

/* Copies in's notes and rows into out (initialized, its columns added)
 * with the columns of in as map says: map[j] the column of out for column
 * j, (size_t)-1 to leave it out (map owned by the caller). */
static void am_cli_report_copy(const am_report *in, const size_t *map, am_report *out)
{
    for (size_t k = 0; k + 1 < 2 * in->nnotes; k += 2)
        am_report_note(out, in->notes[k], in->notes[k + 1]);
    for (size_t i = 0; i < in->nrows; i++) {
        size_t row = am_report_row(out);
        for (size_t j = 0; j < in->ncols; j++) {
            const am_rp_cell *x = am_report_cell(in, i, j);
            if (map[j] == (size_t)-1)
                continue;
            switch (x->kind) {
            case AM_RP_TEXT: am_report_text(out, row, map[j], x->text); break;
            case AM_RP_INT: am_report_int(out, row, map[j], x->i); break;
            case AM_RP_REAL: am_report_real(out, row, map[j], x->x); break;
            case AM_RP_RATIO: am_report_ratio(out, row, map[j], x->hits, x->total); break;
            case AM_RP_INTERVAL: am_report_interval(out, row, map[j], x->lo, x->hi); break;
            default: break;
            }
        }
    }
}

/* Adds column j of in to out; returns its index in out. */
static size_t am_cli_copy_col(const am_report *in, size_t j, am_report *out)
{
    return am_report_col_kind(out, in->cols[j].key, in->cols[j].label, in->cols[j].kind);
}

void am_cli_report_select(const am_report *in, unsigned groups, am_report *out)
{
    am_report_init(out);
    size_t *map = am_xcalloc(in->ncols ? in->ncols : 1, sizeof *map);
    for (size_t j = 0; j < in->ncols; j++) {
        int g = am_cli_key_group(in->cols[j].key);
        map[j] = g < 0 || (groups >> g & 1u) ? am_cli_copy_col(in, j, out) : (size_t)-1;
    }
    am_cli_report_copy(in, map, out);
    free(map);
}

/* Whether key ends in "_sig" (a compact significance column). */
static int am_cli_is_sig_key(const char *key)
{
    size_t n = strlen(key);
    return n > 4 && !strcmp(key + n - 4, "_sig");
}

/* In place: each column KEY that has a column KEY_sig is replaced by that
 * one, at KEY's place (the compact cells hold the score). */
static void am_cli_compact_columns(am_report *r)
{
    am_report out;
    am_report_init(&out);
    size_t *map = am_xcalloc(r->ncols ? r->ncols : 1, sizeof *map);
    for (size_t j = 0; j < r->ncols; j++)
        map[j] = (size_t)-1;
    for (size_t j = 0; j < r->ncols; j++) {
        if (am_cli_is_sig_key(r->cols[j].key))
            continue; /* placed with its metric's column */
        char sk[80];
        snprintf(sk, sizeof sk, "%s_sig", r->cols[j].key);
        size_t sj = 0;
        while (sj < r->ncols && strcmp(r->cols[sj].key, sk) != 0)
            sj++;
        if (sj < r->ncols)
            map[sj] = am_cli_copy_col(r, sj, &out);
        else
            map[j] = am_cli_copy_col(r, j, &out);
    }
    for (size_t j = 0; j < r->ncols; j++) /* a _sig column without its metric's */
        if (map[j] == (size_t)-1 && am_cli_is_sig_key(r->cols[j].key))
            map[j] = am_cli_copy_col(r, j, &out);
    am_cli_report_copy(r, map, &out);
    free(map);
    am_report_cleanup(r);
    *r = out;
}

/* ---- significance and exposures columns --------------------------------- */

/* The row of system's totals: its only row, or with by_doc its aggregate
 * row (doc "all", after the documents' rows); (size_t)-1 when none. */
static size_t am_cli_sys_row(const am_report *r, const char *system, int by_doc)
{
    size_t row = am_report_find(r, "system", system);
    if (!by_doc || row == (size_t)-1)
        return row;
    size_t sc = (size_t)-1, dc = (size_t)-1;
    for (size_t j = 0; j < r->ncols; j++) {
        if (!strcmp(r->cols[j].key, "system"))
            sc = j;
        else if (!strcmp(r->cols[j].key, "doc"))
            dc = j;
    }
    if (dc == (size_t)-1)
        return row;
    for (; row < r->nrows; row++) {
        const am_rp_cell *s = am_report_cell(r, row, sc), *d = am_report_cell(r, row, dc);
        if (s->kind == AM_RP_TEXT && !strcmp(s->text, system) && d->kind == AM_RP_TEXT &&
            !strcmp(d->text, "all"))
            return row;
    }
    return (size_t)-1;
}

/* The report key of a significance metric name (sig.c: "BLEU",
 * "chrF2++", "R0+1", "1-TERm", "term-EM", "WO2", "R3" …) into key. */
static void am_cli_sig_key(const char *metric, char *key, size_t size)
{
    static const char *const named[][2] = {{"chrF2++", "chrf2pp"},
                                           {"R0+1", "r01"},
                                           {"1-TERm", "one_minus_term"},
                                           {"term-EM", "term_em"}};
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
        if (!strcmp(metric, named[k][0])) {
            snprintf(key, size, "%s", named[k][1]);
            return;
        }
    size_t i = 0;
    for (; metric[i] && i + 1 < size; i++)
        key[i] = (char)((metric[i] >= 'A' && metric[i] <= 'Z') ? metric[i] - 'A' + 'a' : metric[i]);
    key[i] = '\0';
}

/* A real of the JSON result, NAN for null (borrowed). */
static double am_cli_jreal(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Adds one column of a metric: key "<k>_<suffix>", label "<pre><M><post>". */
static size_t am_cli_sig_col(am_report *r, const char *k, const char *suffix, const char *pre,
                             const char *metric, const char *post, enum am_rp_kind kind)
{
    char key[64], label[80];
    snprintf(key, sizeof key, "%s_%s", k, suffix);
    snprintf(label, sizeof label, "%s%s%s", pre, metric, post);
    return am_report_col_kind(r, key, label, kind);
}

/* The decimals of a p-value in a table: sacreBLEU's 4, or more when the
 * smallest p the test can give, 1/(n+1), needs them (never --precision's:
 * 2 decimals would print p = 0.001 as 0.00). */
static int am_cli_p_decimals(long long n)
{
    int d = 4;
    for (long long m = 10000; m < n + 1 && d < 9; m *= 10)
        d++;
    return d;
}

/* Whether p is the smallest p-value of n resamples, 1/(n+1), with Δ 0:
 * identical totals, where every resampled difference is 0 too and
 * sacreBLEU's p = (c+1)/(n+1) counts c = 0 (its rule, not a difference). */
static int am_cli_p_identical(double delta, double p, long long n)
{
    return delta == 0 && fabs(p - 1.0 / (double)(n + 1)) < 1e-12;
}

/* The compact cell of one metric of one system into b: the score, " (μ ± CI)" (paired
 * bootstrap, --confidence), then " (p = P)" and the mark: '*' for p < 0.05
 * against the baseline, '†' for Δ 0 at the smallest p (footnoted).
 * Returns 1 when it used '†', 2 for '*', else 0. */
static int am_cli_compact_cell(const json_t *m, const json_t *bm, int bs, int prec, long long n,
                               am_buf *b)
{
    int mark = 0;
    double score = am_cli_jreal(m, "score");
    if (isfinite(score))
        am_buf_printf(b, "%.*f", prec, score);
    else
        am_buf_appends(b, "null");
    if (bs && isfinite(am_cli_jreal(m, "mean")))
        am_buf_printf(b, " (%.*f ± %.*f)", prec, am_cli_jreal(m, "mean"), prec,
                      am_cli_jreal(m, "ci"));
    double p = am_cli_jreal(m, "p_value");
    if (bm && m != bm && isfinite(p)) {
        double delta = am_cli_jreal(m, "score") - am_cli_jreal(bm, "score");
        mark = am_cli_p_identical(delta, p, n) ? 1 : p < 0.05 ? 2 : 0;
        am_buf_printf(b, " (p = %.*f)%s", am_cli_p_decimals(n), p,
                      mark == 1   ? "†"
                      : mark == 2 ? "*"
                                  : "");
    }
    return mark;
}

/* The resampling units as one note: "segments" when every metric has the
 * same, else "segments (BLEU, …); sessions (R0, …)". */
static void am_cli_units_note(am_report *r, const json_t *units)
{
    am_buf b;
    am_buf_init(&b);
    static const char *const names[] = {"segments", "sessions"};
    int mixed = 0;
    const char *metric, *first = NULL;
    const json_t *unit;
    json_object_foreach((json_t *)(uintptr_t)units, metric, unit)
    {
        if (!first)
            first = json_string_value(unit);
        else if (strcmp(first, json_string_value(unit)) != 0)
            mixed = 1;
    }
    for (size_t k = 0; k < 2; k++) {
        size_t used = 0;
        json_object_foreach((json_t *)(uintptr_t)units, metric, unit)
        {
            if (strcmp(json_string_value(unit), names[k]) != 0)
                continue;
            if (!used++)
                am_buf_printf(&b, "%s%s%s", *am_buf_str(&b) ? "; " : "", names[k],
                              mixed ? " (" : "");
            if (mixed)
                am_buf_printf(&b, "%s%s", used > 1 ? ", " : "", metric);
        }
        if (used && mixed)
            am_buf_appendc(&b, ')');
    }
    am_report_note(r, "resampling", am_buf_str(&b));
    am_buf_cleanup(&b);
}

void am_cli_report_significance_compact(am_report *r, json_t *sig, int by_doc, int prec)
{
    const char *test = json_string_value(json_object_get(sig, "test"));
    int bs = test && !strcmp(test, "paired-bs");
    const json_t *bl = json_object_get(sig, "baseline");
    long long n = (long long)json_integer_value(json_object_get(sig, "n"));
    char t[64];
    am_report_note(r, "test", test ? test : "");
    am_report_note(r, "baseline", json_is_string(bl) ? json_string_value(bl) : "none");
    snprintf(t, sizeof t, "%lld", n);
    am_report_note(r, bs ? "resamples" : "trials", t);
    snprintf(t, sizeof t, "%lld", (long long)json_integer_value(json_object_get(sig, "seed")));
    am_report_note(r, "seed", t);
    am_cli_units_note(r, json_object_get(sig, "resampling"));
    const json_t *rows = json_object_get(sig, "systems"), *base = NULL, *row;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        if (json_is_true(json_object_get(row, "baseline")))
            base = row;
    }
    int marks = 0;
    char ci[32];
    snprintf(ci, sizeof ci, " (μ ± %g%% CI)", 100 * am_cli_jreal(sig, "confidence"));
    const char *metric;
    const json_t *unit;
    am_buf b;
    am_buf_init(&b);
    json_object_foreach(json_object_get(sig, "resampling"), metric, unit)
    {
        char k[40];
        am_cli_sig_key(metric, k, sizeof k);
        size_t col = am_cli_sig_col(r, k, "sig", "", metric, bs ? ci : " (p)", AM_RP_TEXT);
        json_array_foreach(rows, i, row)
        {
            size_t at =
                am_cli_sys_row(r, json_string_value(json_object_get(row, "system")), by_doc);
            const json_t *m = json_object_get(row, metric);
            if (at == (size_t)-1 || !m)
                continue;
            am_buf_reset(&b);
            marks |= 1 << am_cli_compact_cell(m, base ? json_object_get(base, metric) : NULL, bs,
                                              prec, n, &b);
            am_report_text(r, at, col, am_buf_str(&b));
        }
    }
    am_buf_cleanup(&b);
    am_cli_compact_columns(r);
    if (marks & 4)
        am_report_note(r, "*", "p < 0.05 against the baseline");
    if (marks & 2) {
        snprintf(t, sizeof t, "%.*f", am_cli_p_decimals(n), 1.0 / (double)(n + 1));
        am_buf_init(&b);
        am_buf_printf(&b,
                      "Δ 0 with p = %s = 1/(n+1): identical totals; sacreBLEU's rule counts no "
                      "resample beyond the observed difference, which is no evidence of one",
                      t);
        am_report_note(r, "†", am_buf_str(&b));
        am_buf_cleanup(&b);
    }
}

void am_cli_report_significance(am_report *r, json_t *sig, int by_doc)
{
    const char *test = json_string_value(json_object_get(sig, "test"));
    int bs = test && !strcmp(test, "paired-bs");
    const json_t *bl = json_object_get(sig, "baseline");
    char n[64];
    am_report_note(r, "test", test ? test : "");
    am_report_note(r, "baseline", json_is_string(bl) ? json_string_value(bl) : "none");
    snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(sig, "n")));
    am_report_note(r, bs ? "resamples" : "trials", n);
    snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(sig, "seed")));
    am_report_note(r, "seed", n);
    if (bs) {
        snprintf(n, sizeof n, "%g", am_cli_jreal(sig, "confidence"));
        am_report_note(r, "confidence", n);
    }
    const json_t *rows = json_object_get(sig, "systems");
    const json_t *base = NULL;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (json_is_true(json_object_get(row, "baseline")))
            base = row;
    }
    const char *metric;
    const json_t *unit;
    json_object_foreach(json_object_get(sig, "resampling"), metric, unit)
    {
        char k[40];
        am_cli_sig_key(metric, k, sizeof k);
        size_t cd = am_cli_sig_col(r, k, "delta", "Δ", metric, "", AM_RP_REAL);
        size_t cc = bs ? am_cli_sig_col(r, k, "ci", "", metric, " CI", AM_RP_INTERVAL) : 0;
        size_t cp = am_cli_sig_col(r, k, "p", "", metric, " p", AM_RP_REAL);
        size_t cu = am_cli_sig_col(r, k, "resampling", "", metric, " resampling", AM_RP_TEXT);
        json_array_foreach(rows, i, row)
        {
            size_t at =
                am_cli_sys_row(r, json_string_value(json_object_get(row, "system")), by_doc);
            const json_t *m = json_object_get(row, metric);
            if (at == (size_t)-1 || !m)
                continue;
            if (base && row != base)
                am_report_real(r, at, cd,
                               am_cli_jreal(m, "score") -
                                   am_cli_jreal(json_object_get(base, metric), "score"));
            if (bs)
                am_report_interval(r, at, cc, am_cli_jreal(m, "lo"), am_cli_jreal(m, "hi"));
            if (json_is_number(json_object_get(m, "p_value")))
                am_report_real(r, at, cp, am_cli_jreal(m, "p_value"));
            am_report_text(r, at, cu, json_string_value(unit));
        }
    }
}

void am_cli_report_exposures(am_report *r, json_t *expo, int by_doc)
{
    size_t ck = am_report_col_kind(r, "exp_known", "known at 0", AM_RP_INT);
    size_t cl = am_report_col_kind(r, "exp_learned", "learned", AM_RP_INT);
    size_t cn = am_report_col_kind(r, "exp_never", "never", AM_RP_INT);
    size_t cm = am_report_col_kind(r, "exp_median", "median exposures", AM_RP_REAL);
    size_t ch = am_report_col_kind(r, "exp_histogram", "exposures histogram", AM_RP_TEXT);
    const char *name;
    const json_t *o;
    json_object_foreach(expo, name, o)
    {
        size_t at = am_cli_sys_row(r, name, by_doc);
        if (at == (size_t)-1)
            continue;
        am_report_int(r, at, ck, json_integer_value(json_object_get(o, "known")));
        am_report_int(r, at, cl, json_integer_value(json_object_get(o, "learned")));
        am_report_int(r, at, cn, json_integer_value(json_object_get(o, "never")));
        if (json_is_number(json_object_get(o, "median_exposures_to_learn")))
            am_report_real(r, at, cm, am_cli_jreal(o, "median_exposures_to_learn"));
        am_buf h;
        am_buf_init(&h);
        size_t i;
        const json_t *v;
        json_array_foreach(json_object_get(o, "histogram"), i, v)
        {
            am_buf_printf(&h, "%s%lld", i ? " " : "", (long long)json_integer_value(v));
        }
        am_report_text(r, at, ch, am_buf_str(&h));
        am_buf_cleanup(&h);
    }
}

void am_cli_report_segment_columns(am_report *r)
{
    static const struct {
        const char *key, *label;
        enum am_rp_kind kind;
    } cols[] = {{"seq", NULL, AM_RP_INT},
                {"id", NULL, AM_RP_TEXT},
                {"doc", NULL, AM_RP_TEXT},
                {"system", NULL, AM_RP_TEXT},
                {"r0", "R0", AM_RP_RATIO},
                {"r1", "R1", AM_RP_RATIO},
                {"r01", "R0+1", AM_RP_RATIO},
                {"bleu", "BLEU", AM_RP_REAL},
                {"chrf2", "chrF2", AM_RP_REAL},
                {"ter", "TER", AM_RP_REAL},
                {"term_em", "term-EM", AM_RP_RATIO},
                {"run_r0", "R0 (run)", AM_RP_RATIO},
                {"run_r1", "R1 (run)", AM_RP_RATIO},
                {"run_r01", "R0+1 (run)", AM_RP_RATIO},
                {"run_term_em", "term-EM (run)", AM_RP_RATIO},
                {"run_one_minus_term", "1-TERm (run)", AM_RP_REAL},
                {"run_bleu", "BLEU (run)", AM_RP_REAL},
                {"run_chrf2", "chrF2 (run)", AM_RP_REAL},
                {"run_ter", "TER (run)", AM_RP_REAL}};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        am_report_col_kind(r, cols[i].key, cols[i].label, cols[i].kind);
}

void am_cli_report_segment(am_report *r, int64_t seq, const char *id, const char *doc,
                           const char *system, const am_sys_seg *seg, const am_totals *running)
{
    size_t row = am_report_row(r);
    am_report_int(r, row, am_report_col(r, "seq", NULL), seq);
    am_report_text(r, row, am_report_col(r, "id", NULL), id);
    size_t dc = am_report_col(r, "doc", NULL);
    if (doc)
        am_report_text(r, row, dc, doc);
    am_report_text(r, row, am_report_col(r, "system", NULL), system);
    const am_recall_totals *rc = &seg->recall;
    am_report_ratio(r, row, am_report_col(r, "r0", "R0"), rc->r[0].hits, rc->r[0].total);
    size_t c1 = am_report_col(r, "r1", "R1");
    if (rc->k >= 1)
        am_report_ratio(r, row, c1, rc->r[1].hits, rc->r[1].total);
    am_report_ratio(r, row, am_report_col(r, "r01", "R0+1"), rc->r01.hits, rc->r01.total);
    am_report_real(r, row, am_report_col(r, "bleu", "BLEU"), seg->sent_bleu);
    am_report_real(r, row, am_report_col(r, "chrf2", "chrF2"), seg->sent_chrf);
    am_report_real(r, row, am_report_col(r, "ter", "TER"), seg->sent_ter * 100);
    am_report_ratio(r, row, am_report_col(r, "term_em", "term-EM"),
                    (int64_t)seg->terms_totals.exact, (int64_t)seg->terms_totals.instances);
    /* the running values: the data of the learning curve */
    am_totals_scores sc;
    am_totals_scores_compute(running, &sc);
    const am_recall_totals *rt = &running->recall;
    am_report_ratio(r, row, am_report_col(r, "run_r0", "R0 (run)"), rt->r[0].hits, rt->r[0].total);
    size_t rc1 = am_report_col(r, "run_r1", "R1 (run)");
    if (rt->k >= 1)
        am_report_ratio(r, row, rc1, rt->r[1].hits, rt->r[1].total);
    am_report_ratio(r, row, am_report_col(r, "run_r01", "R0+1 (run)"), rt->r01.hits, rt->r01.total);
    am_report_ratio(r, row, am_report_col(r, "run_term_em", "term-EM (run)"),
                    (int64_t)running->terms.exact, (int64_t)running->terms.instances);
    am_report_real(r, row, am_report_col(r, "run_one_minus_term", "1-TERm (run)"),
                   sc.one_minus_term);
    am_report_real(r, row, am_report_col(r, "run_bleu", "BLEU (run)"), sc.bleu);
    am_report_real(r, row, am_report_col(r, "run_chrf2", "chrF2 (run)"), sc.chrf);
    am_report_real(r, row, am_report_col(r, "run_ter", "TER (run)"), sc.ter * 100);
}

/* ---- figure -------------------------------------------------------------- */

void am_cli_plot_init(am_cli_plot *p, size_t nsys, size_t window, int ci)
{
    memset(p, 0, sizeof *p);
    p->nsys = nsys;
    p->window = window;
    p->ci = ci;
    if (window)
        p->ring = am_xcalloc(window * nsys * AM_CP_N * 2, sizeof *p->ring);
}

void am_cli_plot_cleanup(am_cli_plot *p)
{
    free(p->v);
    free(p->lo);
    free(p->hi);
    free(p->ring);
    memset(p, 0, sizeof *p);
}

/* The recall and term {num, den} pairs from recall and term counts. */
static void am_cli_plot_rt(const am_recall_totals *r, const am_terms_totals *tt, int wo,
                           double out[AM_CP_N][2])
{
    out[AM_CP_R0][0] = (double)r->r[0].hits;
    out[AM_CP_R0][1] = (double)r->r[0].total;
    out[AM_CP_R1][0] = r->k >= 1 ? (double)r->r[1].hits : 0;
    out[AM_CP_R1][1] = r->k >= 1 ? (double)r->r[1].total : 0;
    out[AM_CP_R01][0] = (double)r->r01.hits;
    out[AM_CP_R01][1] = (double)r->r01.total;
    out[AM_CP_TERM][0] = (double)tt->exact;
    out[AM_CP_TERM][1] = (double)tt->instances;
    int has_wo = (size_t)wo < tt->n_windows;
    out[AM_CP_WO][0] = has_wo ? tt->win_sum[wo] : 0;
    out[AM_CP_WO][1] = has_wo ? (double)tt->win_count[wo] : 0;
}

/* One segment's {num, den} per metric of one system (as api_curve.c). */
static void am_cli_plot_counts(const am_sys_seg *s, int wo, double out[AM_CP_N][2])
{
    am_cli_plot_rt(&s->recall, &s->terms_totals, wo, out);
    double len = (double)s->ter_ref_len;
    out[AM_CP_OMT][0] = len > 0 ? len - s->term_edits : 0;
    out[AM_CP_OMT][1] = len;
}

/* Running counts {num, den} per metric from a totals record. */
static void am_cli_plot_running(const am_totals *t, int wo, double out[AM_CP_N][2])
{
    am_cli_plot_rt(&t->recall, &t->terms, wo, out);
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    out[AM_CP_OMT][0] = isfinite(sc.one_minus_term) ? sc.one_minus_term : 0;
    out[AM_CP_OMT][1] = isfinite(sc.one_minus_term) ? 1 : 0;
}

void am_cli_plot_add(am_cli_plot *p, const am_sys_seg *seg, const am_totals *running)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        size_t sz = p->cap * p->nsys * AM_CP_N * sizeof(double);
        p->v = am_xrealloc(p->v, sz);
        if (p->ci) {
            p->lo = am_xrealloc(p->lo, sz);
            p->hi = am_xrealloc(p->hi, sz);
        }
    }
    for (size_t s = 0; s < p->nsys; s++) {
        double c[AM_CP_N][2];
        if (p->window) {
            double *slot = p->ring + ((p->n % p->window) * p->nsys + s) * AM_CP_N * 2;
            am_cli_plot_counts(&seg[s], p->wo_index, (double(*)[2])slot);
            size_t have = p->n + 1 < p->window ? p->n + 1 : p->window;
            memset(c, 0, sizeof c);
            for (size_t j = p->n + 1 - have; j <= p->n; j++) {
                const double *sl = p->ring + ((j % p->window) * p->nsys + s) * AM_CP_N * 2;
                for (int k = 0; k < AM_CP_N; k++) {
                    c[k][0] += sl[2 * k];
                    c[k][1] += sl[2 * k + 1];
                }
            }
        } else {
            am_cli_plot_running(&running[s], p->wo_index, c);
        }
        size_t at = (p->n * p->nsys + s) * AM_CP_N;
        for (int k = 0; k < AM_CP_N; k++) {
            double y = c[k][1] > 0 ? c[k][0] / c[k][1] : NAN;
            if (k != AM_CP_OMT && isfinite(y))
                y = y < 0 ? 0 : y > 1 ? 1 : y;
            p->v[at + k] = y;
            if (p->ci) {
                /* Wilson bands for the ratios of counts only */
                if (k <= AM_CP_TERM)
                    am_plot_wilson(c[k][0], c[k][1], &p->lo[at + k], &p->hi[at + k]);
                else
                    p->lo[at + k] = p->hi[at + k] = NAN;
            }
        }
    }
    p->n++;
}

void am_cli_plot_svg(const am_cli_plot *p, const char *const *names, int wo, size_t points,
                     const char *title, am_buf *out)
{
    size_t m = p->n <= points || points < 2 ? p->n : points;
    double *x = am_xcalloc(m + 1, sizeof *x);
    size_t *idx = am_xcalloc(m + 1, sizeof *idx);
    for (size_t i = 0; i < m; i++) {
        idx[i] = p->n <= points ? i : (i * (p->n - 1)) / (points - 1);
        x[i] = (double)(idx[i] + 1);
    }
    char wo_title[32];
    snprintf(wo_title, sizeof wo_title, "term window overlap (%d)", wo);
    am_plot_panel panels[AM_CP_N] = {{"r0", "R0", 0, 1},
                                     {"r1", "R1", 0, 1},
                                     {"r01", "R0+1", 0, 1},
                                     {"term_exact_match", "term exact match", 0, 1},
                                     {"window_overlap", wo_title, 0, 1},
                                     {"one_minus_term", "1 − TERm", 0, 1}};
    size_t nser = AM_CP_N * p->nsys;
    am_plot_series *ser = am_xcalloc(nser + 1, sizeof *ser);
    double *buf = am_xcalloc(3 * nser * (m + 1), sizeof *buf);
    for (size_t k = 0; k < AM_CP_N; k++)
        for (size_t s = 0; s < p->nsys; s++) {
            size_t q = k * p->nsys + s;
            double *y = buf + 3 * q * (m + 1), *lo = y + m + 1, *hi = lo + m + 1;
            int band = 0;
            for (size_t i = 0; i < m; i++) {
                size_t at = (idx[i] * p->nsys + s) * AM_CP_N + k;
                y[i] = p->v[at];
                lo[i] = p->ci ? p->lo[at] : NAN;
                hi[i] = p->ci ? p->hi[at] : NAN;
                band |= isfinite(lo[i]);
            }
            ser[q].name = names[s];
            ser[q].y = y;
            ser[q].lo = band ? lo : NULL;
            ser[q].hi = band ? hi : NULL;
        }
    am_plot plot = {title, "segment", x, m, panels, AM_CP_N, ser, p->nsys};
    am_plot_svg(&plot, out);
    free(buf);
    free(ser);
    free(idx);
    free(x);
}
