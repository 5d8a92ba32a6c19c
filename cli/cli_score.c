/*
 * cli_score.c — `adaptmon score`: the offline front end of the scoring core.
 * This file holds the command line (am_cli_args: every option into an
 * am_cli, checked before any input is read) and the command's entry
 * (am_cli_score); the run itself is four files, sharing score_int.h:
 *
 *   score_in.c    inputs: plain-text files (one segment per line), WMT21
 *                 SGML files (segments paired by id) or XLIFF, read into
 *                 segments and sessions (am_cli_read_*, am_cli_xliff), and
 *                 the glossary, background and stopword files;
 *   score_run.c   the scoring step (am_cli_score_run): the sessions in
 *                 order, on a thread pool when no per-segment output is
 *                 asked for;
 *   score_sess.c  one session scored segment by segment, for --per-segment,
 *                 --plot and per-segment JSON;
 *   score_out.c   the results printed, and the alam2021 profile's path.
 *
 * The files are one session in order; --by-doc makes one session per SGML
 * document and aggregates the totals (a row per document and the
 * aggregate). Systems are named NAME= on the command line, else by the
 * SGML sysid, else by the file name. Output (cli_report.c): a table,
 * markdown, LaTeX, CSV or TSV (--format), JSON (--json), the sacreBLEU
 * signatures, per-segment rows with the running totals, and the
 * learning-curve figure (--plot FILE.svg: never one of the inputs; a
 * link's target or a special file is written in place; a write error on
 * stdout or the figure exits 1). With --paired-bs, --paired-ar or
 * --exposures every scored segment also goes to a collector (sig.c) on
 * both scoring paths; its results are columns of the totals rows
 * (cli_report.c) or the JSON's significance and exposures.
 */
#include "cli.h"
#include "score_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void am_cli_usage(FILE *out)
{
    fputs("usage: adaptmon score [OPTIONS]\n"
          "\n"
          "input (plain text, one segment per line, same order in every file):\n"
          "  --ref FILE              confirmed translations (the references); repeat it (or\n"
          "                          -r FILE FILE ..., sacreBLEU style) for more references:\n"
          "                          BLEU, chrF and TER use them all, R0/R1 and the terms use\n"
          "                          the first (the confirmed translation) only\n"
          "  --hyp [NAME=]FILE       a system's hypotheses (repeatable; NAME defaults to the\n"
          "                          file name without extension, or the SGML sysid);\n"
          "                          FILE - reads stdin (system 'stdin'), as sacreBLEU\n"
          "  -i, --input FILE ...    sacreBLEU's form: every following argument up to the\n"
          "                          next option is a --hyp ('-': stdin)\n"
          "  --src FILE              source segments (needed for glossary terms)\n"
          "input (WMT21 SGML, segments paired by id, reference order):\n"
          "  --sgm-src FILE  --sgm-ref FILE  --sgm-hyp [NAME=]FILE (repeatable)\n"
          "  --by-doc                one session per document, totals aggregated\n"
          "input (XLIFF 1.2/2.x from CAT tools: confirmed units, MT from alt-trans/mtc:match):\n"
          "  --xliff FILE            one session per file (repeatable)\n"
          "  --xliff-mt FILE         the same project's file as pre-translated by MT: its\n"
          "                          targets are the hypotheses of --xliff's units of the\n"
          "                          same id (repeatable; the i-th pairs with the i-th)\n"
          "  --by-file               one session per <file> element instead\n"
          "resources:\n"
          "  --glossary FILE         TICO-19 CSV, CSV/TSV or JSON glossary\n"
          "  --glossary-format F     auto|csv|tsv|json (default auto)\n"
          "  --background FILE       'count word' lines or a TMX memory (novel-word variant;\n"
          "                          TMX: the --target-lang side, else the non-srclang one)\n"
          "  --stopwords-file FILE   custom stopword list, one word per line\n"
          "output:\n"
          "  --per-segment           scores of every segment as well, with the running totals\n"
          "  --format F              table|json|csv|tsv|markdown|latex (default table)\n"
          "  --precision N           decimals in table, markdown and LaTeX (default 4; CSV,\n"
          "                          TSV and JSON: the shortest text that reads back;\n"
          "                          p-values: 4 decimals, more when 1/(n+1) needs them)\n"
          "  -m, --metrics NAME ...  only these metrics' columns (table, markdown, LaTeX,\n"
          "                          CSV, TSV; --json keeps all): bleu chrf chrf++ ter\n"
          "                          recall (R0..Rk, R0+1) 1-term terms (term-EM, WO)\n"
          "  --json                  the same as --format json\n"
          "  --plot FILE.svg         learning curves (R0, R1, R0+1, terms) per system as SVG\n"
          "  --plot-window W         moving window of W segments (default 0: running values)\n"
          "  --plot-points N         at most N points per curve (default 500)\n"
          "  --plot-ci               Wilson 95% bands of the ratio curves\n"
          "significance (sacreBLEU 2.6.0's tests; also R_k, 1-TERm and term metrics):\n"
          "  --paired-bs             paired bootstrap resampling: p-values and CIs (tables:\n"
          "                          'score (mean ± CI) (p = P)*' per metric, * p < 0.05, † Δ 0\n"
          "                          at p = 1/(n+1), footnoted; CSV/TSV/JSON: every number)\n"
          "  --confidence            bootstrap CI of each system alone (sacreBLEU's\n"
          "                          --confidence: no baseline, no p-values)\n"
          "  --paired-ar             paired approximate randomization: p-values\n"
          "  --baseline NAME         the system compared against (default: the first)\n"
          "  --n-bootstrap N         resamples (default 1000) or AR trials (default 10000);\n"
          "                          sacreBLEU's --paired-bs-n / --paired-ar-n /\n"
          "                          --confidence-n are accepted (a test is needed)\n"
          "  --seed N                seed of numpy's default_rng (default 12345)\n"
          "  --ci LEVEL              confidence level of the intervals (default 0.95; needs\n"
          "                          --paired-bs or --confidence)\n"
          "  --k-max K               report R0..RK (same as --k K)\n"
          "  --exposures             per system: exposures before it first produced a word\n"
          "BLEU as sacreBLEU's CLI (session options bleu_* below):\n"
          "  -l, --language-pair SRC-TGT  source and target language; the BLEU tokenizer\n"
          "                          follows the target as in sacreBLEU (zh: zh, ja: ja-mecab,\n"
          "                          ko: refused, pass --tokenize; else 13a)\n"
          "  -tok, --tokenize T      13a|intl|zh|char|none|ja-mecab (ko-mecab, flores101,\n"
          "                          flores200, spm: refused, their models are not packaged)\n"
          "  -lc, --lowercase        lowercased BLEU\n"
          "  -s, --smooth-method M   exp|none|floor|add-k;  -sv, --smooth-value V\n"
          "  -cc N, -cw N            sacreBLEU's short --chrf-char-order, --chrf-word-order\n"
          "  --bleu-effective-order, --bleu-max-ngram-order N (sacreBLEU's API; the per-segment\n"
          "                          BLEU always uses the effective order, as --sentence-level)\n"
          "an option given twice is an error (except --ref, --hyp, --sgm-hyp, --xliff)\n"
          "session options (also --name=value):\n",
          out);
    for (const am_config_option *o = am_config_options(); o->name; o++) {
        char flag[40];
        snprintf(flag, sizeof flag, "--%s", o->name);
        for (char *p = flag + 2; *p; p++)
            if (*p == '_')
                *p = '-';
        fprintf(out, "  %-22s  %s [%s; default %s]\n", flag, o->help, o->values, o->def);
    }
    fputs("  --stem-match, --ter-case-sensitive, --no-strip-tags: boolean shortcuts\n"
          "  --chrf-whitespace, --chrf-lowercase, --chrf-eps-smoothing, --ter-normalized,\n"
          "  --ter-no-punct, --ter-asian-support: boolean shortcuts (sacreBLEU's flags; score\n"
          "                          keeps sacreBLEU's defaults for every target language)\n",
          out);
}

/* Splits "NAME=PATH" (NAME without '/' and non-empty) or "PATH" (the name
 * stays NULL: am_cli_default_names gives one after loading). */
static void am_cli_named(const char *arg, am_cli_file *f)
{
    const char *eq = strchr(arg, '=');
    const char *slash = strchr(arg, '/');
    if (eq && eq > arg && (!slash || slash > eq)) {
        f->name = am_xstrndup(arg, (size_t)(eq - arg));
        f->path = am_xstrdup(eq + 1);
    } else {
        f->path = am_xstrdup(arg);
    }
}

void am_cli_free(am_cli *c)
{
    am_cli_file *all[] = {&c->ref, &c->src, &c->sgm_src, &c->sgm_ref};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(all[i]->name);
        free(all[i]->path);
        free(all[i]->buf);
    }
    for (size_t i = 0; i < c->nhyp; i++) {
        free(c->hyp[i].name);
        free(c->hyp[i].path);
        free(c->hyp[i].buf);
    }
    for (size_t i = 0; i < c->nxref; i++) {
        free(c->xref[i].path);
        free(c->xref[i].buf);
    }
    free(c->xliff);
    free(c->xliff_mt);
    am_cli_skips_cleanup(&c->skips);
}

/* 1 when paths a and b (borrowed; NULL: none) name one existing file. */
static int am_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* 0, or 2 after a usage error when --plot names one of the input files
 * (the figure would replace it). */
static int am_cli_plot_not_input(const am_cli *c)
{
    if (!c->plot_path)
        return 0;
    const char *in[] = {c->ref.path,      c->src.path,        c->sgm_src.path,  c->sgm_ref.path,
                        c->glossary_path, c->background_path, c->stopwords_path};
    int hit = 0;
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        hit |= am_cli_same_file(c->plot_path, in[i]);
    for (size_t i = 0; i < c->nhyp; i++)
        hit |= am_cli_same_file(c->plot_path, c->hyp[i].path);
    for (size_t i = 0; i < c->nxliff; i++)
        hit |= am_cli_same_file(c->plot_path, c->xliff[i]);
    if (hit) {
        fprintf(c->err, "adaptmon score: --plot '%s' is one of the input files; name a new .svg\n",
                c->plot_path);
        return 2;
    }
    return 0;
}

/* An integer option value in [lo, hi] into *out; 0, or 2 after printing a
 * usage error. */
static int am_cli_int_option(FILE *err, const char *name, const char *val, long lo, long hi,
                             int *out)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi) {
        fprintf(err, "adaptmon score: --%s must be an integer from %ld to %ld, not '%s'\n", name,
                lo, hi, val);
        return 2;
    }
    *out = (int)v;
    return 0;
}

/* The output options --format, --precision, --plot, --plot-window and
 * --plot-points. Returns 0, or 2 after printing a usage error. */
static int am_cli_output_option(am_cli *c, const char *name, const char *val)
{
    if (!strcmp(name, "format")) {
        if (am_report_format_parse(val, &c->format) != AM_OK) {
            fprintf(c->err,
                    "adaptmon score: --format must be table, json, csv, tsv, markdown or "
                    "latex, not '%s'\n",
                    val);
            return 2;
        }
        return 0;
    }
    if (!strcmp(name, "plot")) {
        c->plot_path = val;
        return 0;
    }
    if (!strcmp(name, "precision"))
        return am_cli_int_option(c->err, name, val, 0, 17, &c->precision);
    if (!strcmp(name, "plot-window"))
        return am_cli_int_option(c->err, name, val, 0, 100000, &c->plot_window);
    return am_cli_int_option(c->err, name, val, 2, 100000, &c->plot_points);
}

/* Parses the command line. Returns 0, or 2 after printing a usage error
 * (or -1 after printing --help). */
/* A significance option (--baseline, --n-bootstrap, --seed, --ci, --k-max).
 * val is borrowed from argv. Returns 0 or prints an error and returns 2. */
static int am_cli_sig_arg(am_cli *c, const char *name, const char *val, am_buf *err)
{
    char *end = NULL;
    errno = 0;
    if (!strcmp(name, "baseline")) {
        c->sig.baseline = val;
        return 0;
    }
    if (!strcmp(name, "k-max")) {
        if (am_config_set(&c->cfg, "k", val, err) == AM_OK)
            return 0;
        fprintf(c->err, "adaptmon score: --k-max: %s\n", am_buf_str(err));
        return 2;
    }
    if (!strcmp(name, "ci")) {
        double x = strtod(val, &end);
        if (end != val && !*end && x > 0 && x < 1) {
            c->sig.conf = x;
            c->ci_given = 1;
            return 0;
        }
        fprintf(c->err, "adaptmon score: --ci must be a level between 0 and 1, e.g. 0.95\n");
        return 2;
    }
    unsigned long long x = strtoull(val, &end, 10);
    int is_n = !strcmp(name, "n-bootstrap") || !strcmp(name, "paired-bs-n") ||
               !strcmp(name, "paired-ar-n") ||
               !strcmp(name, "confidence-n"); /* sacreBLEU's names */
    if (end == val || *end || errno || *val == '-' || (is_n && (x == 0 || x > 1000000))) {
        fprintf(c->err, "adaptmon score: --%s needs %s\n", name,
                is_n ? "a number of resamples from 1 to 1000000" : "a non-negative integer");
        return 2;
    }
    if (is_n)
        c->sig.n = (size_t)x;
    else
        c->sig.seed = (uint64_t)x;
    return 0;
}

/* The flags without a value (--help, --json, ...): 1 when name is one
 * (applied to c; --help prints the usage and sets *rc to -1), else 0. */
static int am_cli_flag(am_cli *c, const char *name, int *rc)
{
    static const char *const flags[] = {
        "help", "per-segment", "json", "by-doc", "stem-match", "ter-case-sensitive",
        "no-strip-tags", "by-file", "plot-ci", "paired-bs", "paired-ar", "exposures", "confidence",
        /* sacreBLEU's BLEU flag and the boolean BLEU session options */
        "lowercase", "bleu-lowercase", "bleu-effective-order",
        /* sacreBLEU's store_true flags of chrF and TER (session options) */
        "chrf-whitespace", "chrf-lowercase", "chrf-eps-smoothing", "ter-normalized", "ter-no-punct",
        "ter-asian-support"};
    int is_flag = 0;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
        if (!strcmp(name, flags[k]))
            is_flag = 1;
    if (!is_flag)
        return 0;
    if (!strcmp(name, "help")) {
        am_cli_usage(c->out);
        *rc = -1;
    } else if (!strcmp(name, "per-segment")) {
        c->per_segment = 1;
    } else if (!strcmp(name, "json")) {
        c->format = AM_RP_JSON;
    } else if (!strcmp(name, "plot-ci")) {
        c->plot_ci = 1;
    } else if (!strcmp(name, "by-doc")) {
        c->by_doc = 1;
    } else if (!strcmp(name, "by-file")) {
        c->by_file = 1;
    } else if (!strcmp(name, "paired-bs") || !strcmp(name, "paired-ar")) {
        c->sig.test = name[7] == 'b' ? 1 : 2;
    } else if (!strcmp(name, "exposures")) {
        c->exposures = 1;
    } else if (!strcmp(name, "confidence")) {
        c->confidence = 1;
    } else if (!strcmp(name, "no-strip-tags")) {
        c->cfg.strip_tags = 0;
    } else if (!strcmp(name, "lowercase")) {
        am_config_set(&c->cfg, "bleu_lowercase", "true", NULL);
    } else {
        am_config_set(&c->cfg, name, "true", NULL);
    }
    return 1;
}

/* A session option by name. Returns 0, or 2 after a message on stderr. */
static int am_cli_config(am_cli *c, const char *name, const char *val, am_buf *err)
{
    if (am_config_set(&c->cfg, name, val, err) == AM_OK)
        return 0;
    fprintf(c->err, "adaptmon score: %s\n", am_buf_str(err));
    return 2;
}

/* One more --ref: the first is the confirmed translation, the next ones
 * are further references. Returns 0, or 2 after a message. */
static int am_cli_add_ref(am_cli *c, const char *path)
{
    if (!c->ref.path) {
        c->ref.path = am_xstrdup(path);
        return 0;
    }
    if (c->nxref == AM_CLI_MAX_XREF) {
        fprintf(c->err, "adaptmon score: at most %d references\n", AM_SCORE_MAX_REFS);
        return 2;
    }
    c->xref[c->nxref++].path = am_xstrdup(path);
    return 0;
}

/* One more hypothesis file ([NAME=]PATH; "-": stdin). Returns 0, or 2
 * after a message. */
static int am_cli_add_hyp(am_cli *c, const char *val)
{
    if (c->nhyp == AM_CLI_MAX_SYS) {
        fprintf(c->err, "adaptmon score: at most %d hypotheses\n", AM_CLI_MAX_SYS);
        return 2;
    }
    am_cli_named(val, &c->hyp[c->nhyp]);
    int rc = 0;
    for (size_t k = 0; k < c->nhyp; k++)
        if (c->hyp[k].name && c->hyp[c->nhyp].name &&
            !strcmp(c->hyp[k].name, c->hyp[c->nhyp].name)) {
            fprintf(c->err, "adaptmon score: two hypotheses named '%s'\n", c->hyp[k].name);
            rc = 2;
        }
    c->nhyp++;
    return rc;
}

/* The metric groups -m/--metrics selects (bit i: am_cli_metric_names[i]). */
static const char *const am_cli_metric_names[] = {"bleu",   "chrf",   "chrf++", "ter",
                                                  "recall", "1-term", "terms"};

/* One -m/--metrics name into c->metrics. Returns 0, or 2 after a message. */
static int am_cli_add_metric(am_cli *c, const char *val)
{
    size_t n = sizeof am_cli_metric_names / sizeof am_cli_metric_names[0];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(val, am_cli_metric_names[i])) {
            c->metrics |= 1u << i;
            return 0;
        }
    fprintf(c->err,
            "adaptmon score: -m/--metrics takes bleu, chrf, chrf++, ter, recall (R0..Rk, R0+1), "
            "1-term or terms (term-EM, WO), not '%s'\n",
            val);
    return 2;
}

/* sacreBLEU's -l SRC-TGT: source_lang and target_lang. Returns 0, or 2
 * after a message. */
static int am_cli_langpair(am_cli *c, const char *val, am_buf *err)
{
    const char *dash = strchr(val, '-');
    if (!dash || dash == val || !dash[1] || strchr(dash + 1, '-')) {
        fprintf(c->err, "adaptmon score: -l/--language-pair takes SRC-TGT, e.g. en-de, not '%s'\n",
                val);
        return 2;
    }
    char src[AM_LANG_MAX];
    size_t n = (size_t)(dash - val);
    if (n >= sizeof src) {
        fprintf(c->err, "adaptmon score: -l: source language '%.*s' is too long\n", (int)n, val);
        return 2;
    }
    memcpy(src, val, n);
    src[n] = '\0';
    if (am_cli_config(c, "source_lang", src, err) || am_cli_config(c, "target_lang", dash + 1, err))
        return 2;
    return 0;
}

/* An option with its value (val borrowed from argv: kept by pointer for
 * the paths). Returns 0, or 2 after a message on stderr. */
/* Complexity (issue 15): one branch per option, as the usage lists them. */
static int am_cli_value_option(am_cli *c, const char *name, const char *val, am_buf *err)
{
    int rc = 0;
    if (!strcmp(name, "ref")) {
        rc = am_cli_add_ref(c, val);
    } else if (!strcmp(name, "language-pair")) {
        rc = am_cli_langpair(c, val, err);
    } else if (!strcmp(name, "tokenize") || !strcmp(name, "smooth-method") ||
               !strcmp(name, "smooth-value")) {
        /* sacreBLEU's names of the BLEU session options */
        const char *opt = !strcmp(name, "tokenize")        ? "bleu_tokenize"
                          : !strcmp(name, "smooth-method") ? "bleu_smooth_method"
                                                           : "bleu_smooth_value";
        rc = am_cli_config(c, opt, val, err);
    } else if (!strcmp(name, "src")) {
        free(c->src.path);
        c->src.path = am_xstrdup(val);
    } else if (!strcmp(name, "hyp") || !strcmp(name, "sgm-hyp") || !strcmp(name, "input")) {
        if (!strcmp(name, "sgm-hyp"))
            c->sgml = 1;
        rc = am_cli_add_hyp(c, val);
    } else if (!strcmp(name, "metrics")) {
        rc = am_cli_add_metric(c, val);
    } else if (!strcmp(name, "sgm-src")) {
        free(c->sgm_src.path);
        c->sgm_src.path = am_xstrdup(val);
        c->sgml = 1;
    } else if (!strcmp(name, "sgm-ref")) {
        free(c->sgm_ref.path);
        c->sgm_ref.path = am_xstrdup(val);
        c->sgml = 1;
    } else if (!strcmp(name, "xliff")) {
        c->xliff = am_xrealloc(c->xliff, (c->nxliff + 1) * sizeof *c->xliff);
        c->xliff[c->nxliff++] = val;
    } else if (!strcmp(name, "xliff-mt")) {
        c->xliff_mt = am_xrealloc(c->xliff_mt, (c->nxliff_mt + 1) * sizeof *c->xliff_mt);
        c->xliff_mt[c->nxliff_mt++] = val;
    } else if (!strcmp(name, "format") || !strcmp(name, "precision") || !strcmp(name, "plot") ||
               !strcmp(name, "plot-window") || !strcmp(name, "plot-points")) {
        rc = am_cli_output_option(c, name, val);
    } else if (!strcmp(name, "glossary")) {
        c->glossary_path = val;
    } else if (!strcmp(name, "glossary-format")) {
        c->glossary_format = val;
    } else if (!strcmp(name, "background")) {
        c->background_path = val;
    } else if (!strcmp(name, "baseline") || !strcmp(name, "n-bootstrap") ||
               !strcmp(name, "paired-bs-n") || !strcmp(name, "paired-ar-n") ||
               !strcmp(name, "confidence-n") || !strcmp(name, "seed") || !strcmp(name, "ci") ||
               !strcmp(name, "k-max")) {
        rc = am_cli_sig_arg(c, name, val, err);
    } else if (!strcmp(name, "stopwords-file")) {
        c->stopwords_path = val;
        c->cfg.stopwords = AM_SW_CUSTOM;
    } else {
        rc = am_cli_config(c, name, val, err);
    }
    return rc;
}

/* --confidence, --ci and stdin, checked against the other options; turns
 * --confidence into the bootstrap without a baseline (sig.c no_p: each
 * system's resampled CI, as sacreBLEU's --confidence resamples each system
 * alone with the same seed). Returns 0, or 2 after a message on stderr. */
static int am_cli_check_stats(am_cli *c)
{
    if (c->confidence && c->sig.test) {
        fprintf(c->err, "adaptmon score: --confidence is for systems alone; --paired-bs already "
                        "gives each system's CI (and --paired-ar gives p-values only)\n");
        return 2;
    }
    if (c->confidence) {
        c->sig.test = 1;
        c->sig.no_p = 1;
    }
    if (c->ci_given && c->sig.test != 1) {
        fprintf(c->err, "adaptmon score: --ci sets the level of the bootstrap intervals: give "
                        "--paired-bs or --confidence with it (--plot-ci bands are 95%% Wilson)\n");
        return 2;
    }
    if (c->sig.n && !c->sig.test) {
        fprintf(c->err, "adaptmon score: the number of resamples needs --paired-bs, --paired-ar "
                        "or --confidence\n");
        return 2;
    }
    size_t nstdin = c->ref.path && !strcmp(c->ref.path, "-");
    for (size_t i = 0; i < c->nhyp; i++)
        nstdin += !strcmp(c->hyp[i].path, "-");
    if (nstdin > 1) {
        fprintf(c->err, "adaptmon score: only one input can be read from stdin ('-')\n");
        return 2;
    }
    return 0;
}

/* The inputs and options of c, checked together. Returns 0, or 2 after a
 * message on stderr. */
static int am_cli_check_inputs(const am_cli *c)
{
    if (c->by_file && !c->nxliff) {
        fprintf(c->err, "adaptmon score: --by-file needs --xliff input\n");
        return 2;
    }
    if (c->nxliff_mt && c->nxliff_mt != c->nxliff) {
        fprintf(c->err,
                "adaptmon score: %zu --xliff-mt for %zu --xliff: give one pre-translated file "
                "per final file, in the same order\n",
                c->nxliff_mt, c->nxliff);
        return 2;
    }
    if (c->nxliff) {
        if (c->sgml || c->ref.path || c->src.path || c->nhyp) {
            fprintf(c->err, "adaptmon score: use either --xliff or the other inputs\n");
            return 2;
        }
        if (c->by_doc) {
            fprintf(c->err, "adaptmon score: --by-doc needs SGML input (XLIFF: --by-file)\n");
            return 2;
        }
        if (c->cfg.profile == AM_PROFILE_ALAM2021) {
            fprintf(c->err, "adaptmon score: profile alam2021 needs WMT21 SGML input\n");
            return 2;
        }
    } else if (c->sgml) {
        if (c->ref.path || c->src.path) {
            fprintf(c->err,
                    "adaptmon score: use either --ref/--hyp/--src or the --sgm-* options\n");
            return 2;
        }
        if (!c->sgm_ref.path || c->nhyp == 0) {
            fprintf(c->err, "adaptmon score: SGML input needs --sgm-ref and --sgm-hyp\n");
            return 2;
        }
    } else {
        if (!c->ref.path || c->nhyp == 0) {
            fprintf(c->err, "adaptmon score: need --ref FILE and at least one --hyp FILE "
                            "(or --sgm-ref/--sgm-hyp); see --help\n");
            return 2;
        }
        if (c->by_doc) {
            fprintf(c->err, "adaptmon score: --by-doc needs SGML input\n");
            return 2;
        }
    }
    if ((c->sig.test || c->exposures) && c->cfg.profile == AM_PROFILE_ALAM2021) {
        fprintf(c->err, "adaptmon score: --paired-bs/--paired-ar/--exposures need the standard or "
                        "simianer2019 profile\n");
        return 2;
    }
    if (c->cfg.profile == AM_PROFILE_ALAM2021) {
        if (!c->sgml) {
            fprintf(c->err, "adaptmon score: profile alam2021 needs WMT21 SGML input "
                            "(--sgm-ref, --sgm-hyp, optionally --sgm-src)\n");
            return 2;
        }
        if (c->glossary_path) {
            fprintf(c->err, "adaptmon score: profile alam2021 takes its terms from the "
                            "reference's <term> tags, not from --glossary\n");
            return 2;
        }
        if (c->plot_path) {
            fprintf(c->err, "adaptmon score: --plot needs the standard or simianer2019 "
                            "profile (alam2021 scores whole documents, no curve)\n");
            return 2;
        }
    }
    if (c->nxref && (c->sgml || c->nxliff)) {
        fprintf(c->err, "adaptmon score: several references need plain-text input (--ref FILE "
                        "repeated, or -r FILE FILE ...)\n");
        return 2;
    }
    if (c->stopwords_path && c->cfg.stopwords != AM_SW_CUSTOM) {
        fprintf(c->err,
                "adaptmon score: --stopwords-file needs --stopwords custom (or no "
                "--stopwords), not '%s'\n",
                am_config_sw_name(c->cfg.stopwords));
        return 2;
    }
    if (c->cfg.stopwords == AM_SW_CUSTOM && !c->stopwords_path) {
        fprintf(c->err, "adaptmon score: --stopwords custom needs --stopwords-file FILE\n");
        return 2;
    }
    return am_cli_plot_not_input(c);
}

/* The settings an option name sets, as keys (at most two) into keys; 0
 * for the options that may be repeated (inputs given one per use). Aliases
 * share a key, so that e.g. --json with --format, --tokenize with
 * --bleu-tokenize or --paired-bs with --paired-ar is caught as one setting
 * given twice. */
static size_t am_cli_keys(const char *name, char keys[2][40])
{
    static const char *const repeatable[] = {"ref", "hyp", "sgm-hyp", "xliff", "help", "input"};
    static const char *const alias[][2] = {
        {"json", "format"},
        {"paired-bs", "test"},
        {"paired-ar", "test"},
        {"n-bootstrap", "n"},
        {"paired-bs-n", "n"},
        {"paired-ar-n", "n"},
        {"confidence-n", "n"},
        {"k-max", "k"},
        {"tokenize", "bleu_tokenize"},
        {"smooth-method", "bleu_smooth_method"},
        {"smooth-value", "bleu_smooth_value"},
        {"lowercase", "bleu_lowercase"},
        {"no-strip-tags", "strip_tags"},
        {"stopwords-file", "stopwords_file"},
    };
    for (size_t i = 0; i < sizeof repeatable / sizeof repeatable[0]; i++)
        if (!strcmp(name, repeatable[i]))
            return 0;
    if (!strcmp(name, "language-pair")) {
        snprintf(keys[0], sizeof keys[0], "source_lang");
        snprintf(keys[1], sizeof keys[1], "target_lang");
        return 2;
    }
    const char *k = name;
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcmp(name, alias[i][0]))
            k = alias[i][1];
    size_t j = 0;
    for (; k[j] && j + 1 < sizeof keys[0]; j++)
        keys[0][j] = k[j] == '-' ? '_' : k[j];
    keys[0][j] = '\0';
    return 1;
}

/* Records that option name (as given, without dashes) was used; 0, or 2
 * after a usage error when one of its settings was given before. */
typedef struct am_cli_seen {
    char key[96][40];
    size_t n;
} am_cli_seen;

static int am_cli_once(FILE *err, am_cli_seen *seen, const char *name)
{
    char keys[2][40];
    size_t nk = am_cli_keys(name, keys);
    for (size_t i = 0; i < nk; i++) {
        for (size_t j = 0; j < seen->n; j++)
            if (!strcmp(seen->key[j], keys[i])) {
                fprintf(err,
                        "adaptmon score: --%s: '%s' was already given (an option given twice "
                        "cannot be honoured; give it once)\n",
                        name, keys[i]);
                return 2;
            }
        if (seen->n < sizeof seen->key / sizeof seen->key[0])
            memcpy(seen->key[seen->n++], keys[i], sizeof keys[i]);
    }
    return 0;
}

/* sacreBLEU's short options: the long option each stands for. */
static const char *am_cli_short(const char *a)
{
    static const char *const map[][2] = {{"-l", "language-pair"},   {"-lc", "lowercase"},
                                         {"-tok", "tokenize"},      {"-s", "smooth-method"},
                                         {"-sv", "smooth-value"},   {"-cc", "chrf-char-order"},
                                         {"-cw", "chrf-word-order"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(a, map[i][0]))
            return map[i][1];
    return NULL;
}

/* sacreBLEU's list options: -r FILE FILE ..., -i FILE FILE ... (or -i -:
 * stdin), -m NAME NAME ...: every following argument up to the next option
 * is one value. Returns 0, or 2 after a message; *i is left at the last
 * argument used. */
static int am_cli_list(am_cli *c, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    int n = 0, rc = 0, ref = !strcmp(opt, "-r"),
        hyp = !strcmp(opt, "-i") || !strcmp(opt, "--input");
    while (rc == 0 && *i + 1 < argc &&
           (argv[*i + 1][0] != '-' || (hyp && !strcmp(argv[*i + 1], "-")))) {
        const char *v = argv[++*i];
        rc = ref ? am_cli_add_ref(c, v) : hyp ? am_cli_add_hyp(c, v) : am_cli_add_metric(c, v);
        n++;
    }
    if (rc == 0 && n == 0) {
        fprintf(c->err, "adaptmon score: %s needs at least one %s\n", opt,
                ref   ? "reference file"
                : hyp ? "hypothesis file (or - for stdin)"
                      : "metric name");
        rc = 2;
    }
    return rc;
}

/* Splits argument a ("--name", "--name=value" or a short option) into
 * name (size 64) and *val (NULL when none). Returns 0, or 2 after a
 * message. */
static int am_cli_split_arg(FILE *err, const char *a, char name[64], const char **val)
{
    *val = NULL;
    const char *longname = am_cli_short(a);
    if (longname) {
        snprintf(name, 64, "%s", longname);
        return 0;
    }
    if (strncmp(a, "--", 2) != 0) {
        fprintf(err, "adaptmon score: unexpected argument '%s'\n", a);
        return 2;
    }
    const char *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (nl >= 64) {
        fprintf(err, "adaptmon score: unknown option '%s'\n", a);
        return 2;
    }
    memcpy(name, a + 2, nl);
    name[nl] = '\0';
    if (eq)
        *val = eq + 1;
    return 0;
}

/* The options of the command line into c, checked among themselves but
 * not against the inputs (score_embed.c takes its inputs elsewhere).
 * Returns 0, -1 after --help, or 2 after a message on c->err. */
int am_cli_parse(int argc, char **argv, am_cli *c)
{
    am_buf err;
    am_buf_init(&err);
    am_cli_seen *seen = am_xcalloc(1, sizeof *seen);
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        char name[64];
        const char *val = NULL;
        if (!strcmp(argv[i], "-r") || !strcmp(argv[i], "-i") || !strcmp(argv[i], "--input") ||
            !strcmp(argv[i], "-m") || !strcmp(argv[i], "--metrics")) {
            if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--metrics"))
                rc = am_cli_once(c->err, seen, "metrics");
            if (rc == 0)
                rc = am_cli_list(c, argc, argv, &i);
            continue;
        }
        if ((rc = am_cli_split_arg(c->err, argv[i], name, &val)) != 0)
            break;
        if ((rc = am_cli_once(c->err, seen, name)) != 0)
            break;
        if (!val && am_cli_flag(c, name, &rc))
            continue;
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(c->err, "adaptmon score: option --%s needs a value\n", name);
                rc = 2;
                break;
            }
            val = argv[++i];
        }
        rc = am_cli_value_option(c, name, val, &err);
    }
    free(seen);
    am_buf_cleanup(&err);
    return rc == 0 ? am_cli_check_stats(c) : rc;
}

/* The command line into c (see am_cli_usage). Returns 0, -1 after --help,
 * or 2 after a message on stderr. */
static int am_cli_args(int argc, char **argv, am_cli *c)
{
    int rc = am_cli_parse(argc, argv, c);
    return rc ? rc : am_cli_check_inputs(c);
}

void am_cli_init(am_cli *c, FILE *out, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->out = out;
    c->err = err;
    am_config_init(&c->cfg);
    am_sig_opts_init(&c->sig);
    c->precision = 4;
}

/* Runs `adaptmon score` with the result printed on out and the messages on
 * err (both borrowed: the caller's streams, flushed but never closed). Two
 * calls may run at once on different threads: the run's state, streams
 * included, lives in its am_cli and am_cli_run, the argument parser keeps
 * its index in a local, and nothing on the path writes to process-wide
 * state (no getopt, setlocale, srand or static buffers). */
int am_cli_score_io(int argc, char **argv, FILE *out, FILE *err)
{
    am_cli c;
    am_cli_init(&c, out, err);
    int rc = am_cli_args(argc, argv, &c);
    if (rc) {
        am_cli_free(&c);
        return rc < 0 ? 0 : rc;
    }
    am_cli_run *r = am_cli_run_new(&c);
    /* XLIFF first: the languages its files declare apply to the glossary,
     * the background memory and the scorer */
    if (c.nxliff)
        rc = am_cli_xliff(&c, r->xdocs, &r->segs, &r->nseg, &r->sess_first, &r->sess_n, &r->nsess);
    if (rc == 0)
        rc = am_cli_load_resources(&c, &r->gloss, &r->background, &r->custom_sw);
    if (rc == 0 && !c.nxliff && c.sgml)
        rc = am_cli_read_sgml(&c, r);
    else if (rc == 0 && !c.nxliff)
        rc = am_cli_read_plain(&c, r);
    if (rc == 0 && c.cfg.profile == AM_PROFILE_ALAM2021)
        rc = am_cli_alam(&c, c.sgm_src.path ? &r->ssrc : NULL, &r->sref, r->shyp);
    else if (rc == 0)
        rc = am_cli_score_run(&c, r);
    if (rc == 0 && (fflush(c.out) != 0 || ferror(c.out))) { /* e.g. a full disk */
        fprintf(c.err, "adaptmon score: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    am_cli_run_free(&c, r);
    free(r);
    am_cli_free(&c);
    return rc;
}

int am_cli_score(int argc, char **argv)
{
    return am_cli_score_io(argc, argv, stdout, stderr);
}
