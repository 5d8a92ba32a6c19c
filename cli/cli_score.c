/*
 * cli_score.c — `adaptmon score`: the offline front end of the scoring core.
 *
 * Inputs are plain-text files (one segment per line), WMT21 SGML files
 * (segments paired by id) or XLIFF (am_cli_xliff). Reading (am_cli_read_*)
 * makes segments and sessions; am_cli_score_sessions scores the sessions in
 * order; the output goes through cli_report.c. The files are one session
 * in order; --by-doc
 * makes one session per SGML document and aggregates the totals (a row per
 * document and the aggregate). Systems are named NAME= on the command line,
 * else by the SGML sysid, else by the file name. Output (cli_report.c): a
 * table, markdown, LaTeX, CSV or TSV (--format), JSON (--json), the
 * sacreBLEU signatures, per-segment rows with the running totals, and the
 * learning-curve figure (--plot FILE.svg: never one of the inputs; a link's
 * target or a special file is written in place; a write error on stdout or
 * the figure exits 1). With --paired-bs, --paired-ar
 * or --exposures every scored segment also goes to a collector
 * (sig.c) on both scoring paths; its results are columns of the
 * totals rows (cli_report.c) or the JSON's significance and exposures.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cli.h"
#include "sig.h"
#include "cli_report.h"
#include "json.h"

#include "compat/alam2021.h"
#include "glossary.h"
#include "realfmt.h"
#include "score.h"
#include "sgml.h"
#include "text.h"
#include "vocab.h"
#include "cli_xliff.h"
#include "textenc.h"
#include "xliff.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Prints root (borrowed) indented, keys in insertion order, every real as
 * the shortest text that reads back (am_realfmt_json_text: jansson prints
 * 17 digits, 0.64352818371607512 for 0.6435281837160751). */
static void am_cli_put_json(const json_t *root)
{
    char *dumped = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    char *out = am_realfmt_json_text(dumped ? dumped : "null");
    puts(out);
    free(out);
    free(dumped);
}

/* Reads a whole file. Returns 0 or prints an error and returns 1. */
static int am_cli_load(am_cli_file *f)
{
    int in = !strcmp(f->path, "-"); /* sacreBLEU's stdin (--hyp -, -i -) */
    FILE *fp = in ? stdin : fopen(f->path, "rb");
    if (!fp) {
        fprintf(stderr, "adaptmon score: cannot open '%s': %s\n", f->path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0, r;
    char *buf = am_xmalloc(cap);
    while ((r = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
        n += r;
        if (n > (size_t)AM_CLI_MAX_FILE) {
            fprintf(stderr, "adaptmon score: '%s' is larger than 1 GiB\n", f->path);
            if (!in)
                fclose(fp);
            free(buf);
            return 1;
        }
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = am_xrealloc(buf, cap);
        }
    }
    int bad = ferror(fp);
    if (!in)
        fclose(fp);
    if (bad) {
        fprintf(stderr, "adaptmon score: cannot read '%s'\n", f->path);
        free(buf);
        return 1;
    }
    buf[n] = '\0';
    f->buf = buf;
    f->len = n;
    return 0;
}

/* Validates a loaded file as UTF-8 without NUL; reports line and column. */
static int am_cli_validate(const am_cli_file *f)
{
    size_t off = 0;
    int rc = am_text_validate(f->buf, f->len, &off);
    if (rc == AM_OK)
        return 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (f->buf[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    /* name the encoding it looks like (UTF-16, windows-1252, …) and the
     * command that converts it */
    am_buf why;
    am_buf_init(&why);
    am_textenc_diagnose(f->buf, f->len, f->path, &why);
    fprintf(stderr, "adaptmon score: %s:%zu:%zu: %s; %s\n", f->path, line, col,
            rc == AM_ERR_NUL ? "NUL byte in text" : "invalid UTF-8", am_buf_str(&why));
    am_buf_cleanup(&why);
    return 1;
}

/* Splits a plain-text file into lines in place ('\n', a trailing '\r' is
 * dropped; a final newline ends the last line). *lines is malloc'd. */
static size_t am_cli_lines(am_cli_file *f, char ***lines)
{
    size_t n = 0, cap = 1024;
    char **v = am_xmalloc(cap * sizeof *v);
    char *p = f->buf, *end = f->buf + f->len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl ? nl : end;
        if (stop > p && stop[-1] == '\r')
            stop[-1] = '\0';
        *stop = '\0';
        if (n == cap) {
            cap *= 2;
            v = am_xrealloc(v, cap * sizeof *v);
        }
        v[n++] = p;
        p = nl ? nl + 1 : end;
    }
    *lines = v;
    return n;
}

static int am_cli_sgml(am_cli_file *f, am_sgml_doc *doc)
{
    size_t line = 0;
    int rc = am_sgml_parse(f->buf, f->len, doc, &line);
    if (rc != AM_OK) {
        fprintf(stderr, "adaptmon score: %s:%zu: %s (%s)\n", f->path, line,
                rc == AM_ERR_PARSE ? "malformed SGML" : am_strerror(rc), "WMT21 SGML expected");
        return 1;
    }
    if (doc->unclosed_doc_line)
        fprintf(stderr,
                "adaptmon score: warning: %s:%zu: this <doc> is not closed (no </doc> before %s); "
                "read as sacreBLEU reads it, its segments up to there\n",
                f->path, doc->unclosed_doc_line,
                doc->unclosed_set ? "the end of the file" : "the set's end tag");
    return 0;
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

/* Names the unnamed hypotheses: the SGML sysid of the first document
 * (sysids[i], NULL when none), else the file name without its extension;
 * a name taken already becomes hyp<N>. */
static void am_cli_default_names(am_cli *c, const char *const *sysids)
{
    for (size_t i = 0; i < c->nhyp; i++) {
        if (c->hyp[i].name)
            continue;
        char *nm;
        if (sysids && sysids[i] && *sysids[i]) {
            nm = am_xstrdup(sysids[i]);
        } else if (!strcmp(c->hyp[i].path, "-")) {
            nm = am_xstrdup("stdin");
        } else {
            const char *base = strrchr(c->hyp[i].path, '/');
            base = base ? base + 1 : c->hyp[i].path;
            const char *dot = strchr(base, '.');
            nm = am_xstrndup(base, dot && dot > base ? (size_t)(dot - base) : strlen(base));
        }
        for (size_t k = 0; k < c->nhyp; k++)
            if (k != i && c->hyp[k].name && !strcmp(c->hyp[k].name, nm)) {
                free(nm);
                nm = am_xmalloc(32);
                snprintf(nm, 32, "hyp%zu", i + 1);
                break;
            }
        c->hyp[i].name = nm;
    }
}

static void am_cli_free(am_cli *c)
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
        fprintf(stderr, "adaptmon score: --plot '%s' is one of the input files; name a new .svg\n",
                c->plot_path);
        return 2;
    }
    return 0;
}

/* An integer option value in [lo, hi] into *out; 0, or 2 after printing a
 * usage error. */
static int am_cli_int_option(const char *name, const char *val, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < lo || v > hi) {
        fprintf(stderr, "adaptmon score: --%s must be an integer from %ld to %ld, not '%s'\n", name,
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
            fprintf(stderr,
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
        return am_cli_int_option(name, val, 0, 17, &c->precision);
    if (!strcmp(name, "plot-window"))
        return am_cli_int_option(name, val, 0, 100000, &c->plot_window);
    return am_cli_int_option(name, val, 2, 100000, &c->plot_points);
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
        fprintf(stderr, "adaptmon score: --k-max: %s\n", am_buf_str(err));
        return 2;
    }
    if (!strcmp(name, "ci")) {
        double x = strtod(val, &end);
        if (end != val && !*end && x > 0 && x < 1) {
            c->sig.conf = x;
            c->ci_given = 1;
            return 0;
        }
        fprintf(stderr, "adaptmon score: --ci must be a level between 0 and 1, e.g. 0.95\n");
        return 2;
    }
    unsigned long long x = strtoull(val, &end, 10);
    int is_n = !strcmp(name, "n-bootstrap") || !strcmp(name, "paired-bs-n") ||
               !strcmp(name, "paired-ar-n") ||
               !strcmp(name, "confidence-n"); /* sacreBLEU's names */
    if (end == val || *end || errno || *val == '-' || (is_n && (x == 0 || x > 1000000))) {
        fprintf(stderr, "adaptmon score: --%s needs %s\n", name,
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
        am_cli_usage(stdout);
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
    fprintf(stderr, "adaptmon score: %s\n", am_buf_str(err));
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
        fprintf(stderr, "adaptmon score: at most %d references\n", AM_SCORE_MAX_REFS);
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
        fprintf(stderr, "adaptmon score: at most %d hypotheses\n", AM_CLI_MAX_SYS);
        return 2;
    }
    am_cli_named(val, &c->hyp[c->nhyp]);
    int rc = 0;
    for (size_t k = 0; k < c->nhyp; k++)
        if (c->hyp[k].name && c->hyp[c->nhyp].name &&
            !strcmp(c->hyp[k].name, c->hyp[c->nhyp].name)) {
            fprintf(stderr, "adaptmon score: two hypotheses named '%s'\n", c->hyp[k].name);
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
    fprintf(stderr,
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
        fprintf(stderr, "adaptmon score: -l/--language-pair takes SRC-TGT, e.g. en-de, not '%s'\n",
                val);
        return 2;
    }
    char src[AM_LANG_MAX];
    size_t n = (size_t)(dash - val);
    if (n >= sizeof src) {
        fprintf(stderr, "adaptmon score: -l: source language '%.*s' is too long\n", (int)n, val);
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
        fprintf(stderr, "adaptmon score: --confidence is for systems alone; --paired-bs already "
                        "gives each system's CI (and --paired-ar gives p-values only)\n");
        return 2;
    }
    if (c->confidence) {
        c->sig.test = 1;
        c->sig.no_p = 1;
    }
    if (c->ci_given && c->sig.test != 1) {
        fprintf(stderr, "adaptmon score: --ci sets the level of the bootstrap intervals: give "
                        "--paired-bs or --confidence with it (--plot-ci bands are 95%% Wilson)\n");
        return 2;
    }
    if (c->sig.n && !c->sig.test) {
        fprintf(stderr, "adaptmon score: the number of resamples needs --paired-bs, --paired-ar "
                        "or --confidence\n");
        return 2;
    }
    size_t nstdin = c->ref.path && !strcmp(c->ref.path, "-");
    for (size_t i = 0; i < c->nhyp; i++)
        nstdin += !strcmp(c->hyp[i].path, "-");
    if (nstdin > 1) {
        fprintf(stderr, "adaptmon score: only one input can be read from stdin ('-')\n");
        return 2;
    }
    return 0;
}

/* The inputs and options of c, checked together. Returns 0, or 2 after a
 * message on stderr. */
static int am_cli_check_inputs(const am_cli *c)
{
    if (c->by_file && !c->nxliff) {
        fprintf(stderr, "adaptmon score: --by-file needs --xliff input\n");
        return 2;
    }
    if (c->nxliff_mt && c->nxliff_mt != c->nxliff) {
        fprintf(stderr,
                "adaptmon score: %zu --xliff-mt for %zu --xliff: give one pre-translated file "
                "per final file, in the same order\n",
                c->nxliff_mt, c->nxliff);
        return 2;
    }
    if (c->nxliff) {
        if (c->sgml || c->ref.path || c->src.path || c->nhyp) {
            fprintf(stderr, "adaptmon score: use either --xliff or the other inputs\n");
            return 2;
        }
        if (c->by_doc) {
            fprintf(stderr, "adaptmon score: --by-doc needs SGML input (XLIFF: --by-file)\n");
            return 2;
        }
        if (c->cfg.profile == AM_PROFILE_ALAM2021) {
            fprintf(stderr, "adaptmon score: profile alam2021 needs WMT21 SGML input\n");
            return 2;
        }
    } else if (c->sgml) {
        if (c->ref.path || c->src.path) {
            fprintf(stderr,
                    "adaptmon score: use either --ref/--hyp/--src or the --sgm-* options\n");
            return 2;
        }
        if (!c->sgm_ref.path || c->nhyp == 0) {
            fprintf(stderr, "adaptmon score: SGML input needs --sgm-ref and --sgm-hyp\n");
            return 2;
        }
    } else {
        if (!c->ref.path || c->nhyp == 0) {
            fprintf(stderr, "adaptmon score: need --ref FILE and at least one --hyp FILE "
                            "(or --sgm-ref/--sgm-hyp); see --help\n");
            return 2;
        }
        if (c->by_doc) {
            fprintf(stderr, "adaptmon score: --by-doc needs SGML input\n");
            return 2;
        }
    }
    if ((c->sig.test || c->exposures) && c->cfg.profile == AM_PROFILE_ALAM2021) {
        fprintf(stderr, "adaptmon score: --paired-bs/--paired-ar/--exposures need the standard or "
                        "simianer2019 profile\n");
        return 2;
    }
    if (c->cfg.profile == AM_PROFILE_ALAM2021) {
        if (!c->sgml) {
            fprintf(stderr, "adaptmon score: profile alam2021 needs WMT21 SGML input "
                            "(--sgm-ref, --sgm-hyp, optionally --sgm-src)\n");
            return 2;
        }
        if (c->glossary_path) {
            fprintf(stderr, "adaptmon score: profile alam2021 takes its terms from the "
                            "reference's <term> tags, not from --glossary\n");
            return 2;
        }
        if (c->plot_path) {
            fprintf(stderr, "adaptmon score: --plot needs the standard or simianer2019 "
                            "profile (alam2021 scores whole documents, no curve)\n");
            return 2;
        }
    }
    if (c->nxref && (c->sgml || c->nxliff)) {
        fprintf(stderr, "adaptmon score: several references need plain-text input (--ref FILE "
                        "repeated, or -r FILE FILE ...)\n");
        return 2;
    }
    if (c->stopwords_path && c->cfg.stopwords != AM_SW_CUSTOM) {
        fprintf(stderr,
                "adaptmon score: --stopwords-file needs --stopwords custom (or no "
                "--stopwords), not '%s'\n",
                am_config_sw_name(c->cfg.stopwords));
        return 2;
    }
    if (c->cfg.stopwords == AM_SW_CUSTOM && !c->stopwords_path) {
        fprintf(stderr, "adaptmon score: --stopwords custom needs --stopwords-file FILE\n");
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

static int am_cli_once(am_cli_seen *seen, const char *name)
{
    char keys[2][40];
    size_t nk = am_cli_keys(name, keys);
    for (size_t i = 0; i < nk; i++) {
        for (size_t j = 0; j < seen->n; j++)
            if (!strcmp(seen->key[j], keys[i])) {
                fprintf(stderr,
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
        fprintf(stderr, "adaptmon score: %s needs at least one %s\n", opt,
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
static int am_cli_split_arg(const char *a, char name[64], const char **val)
{
    *val = NULL;
    const char *longname = am_cli_short(a);
    if (longname) {
        snprintf(name, 64, "%s", longname);
        return 0;
    }
    if (strncmp(a, "--", 2) != 0) {
        fprintf(stderr, "adaptmon score: unexpected argument '%s'\n", a);
        return 2;
    }
    const char *eq = strchr(a, '=');
    size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (nl >= 64) {
        fprintf(stderr, "adaptmon score: unknown option '%s'\n", a);
        return 2;
    }
    memcpy(name, a + 2, nl);
    name[nl] = '\0';
    if (eq)
        *val = eq + 1;
    return 0;
}

/* The command line into c (see am_cli_usage). Returns 0, -1 after --help,
 * or 2 after a message on stderr. */
static int am_cli_args(int argc, char **argv, am_cli *c)
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
                rc = am_cli_once(seen, "metrics");
            if (rc == 0)
                rc = am_cli_list(c, argc, argv, &i);
            continue;
        }
        if ((rc = am_cli_split_arg(argv[i], name, &val)) != 0)
            break;
        if ((rc = am_cli_once(seen, name)) != 0)
            break;
        if (!val && am_cli_flag(c, name, &rc))
            continue;
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "adaptmon score: option --%s needs a value\n", name);
                rc = 2;
                break;
            }
            val = argv[++i];
        }
        rc = am_cli_value_option(c, name, val, &err);
    }
    free(seen);
    am_buf_cleanup(&err);
    if (rc == 0)
        rc = am_cli_check_stats(c);
    return rc ? rc : am_cli_check_inputs(c);
}

/* ---- sessions ------------------------------------------------------------ */

/* Term annotations of an SGML reference segment: each <term> tag's targets
 * (tgt split on '|') and its span in the plain text. */
typedef struct am_cli_annots {
    am_terms_annot *v;
    char **targets; /* all split targets, owned */
    size_t n, ntargets;
} am_cli_annots;

static void am_cli_annots_free(am_cli_annots *a)
{
    for (size_t i = 0; i < a->ntargets; i++)
        free(a->targets[i]);
    free(a->targets);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* Byte range of tokens [t0, t0+count) of whitespace-separated text. */
static int am_cli_tok_bytes(const char *text, size_t t0, size_t count, size_t *b0, size_t *b1)
{
    size_t i = 0, tok = 0, len = strlen(text);
    int found = 0;
    while (i < len) {
        while (i < len && text[i] == ' ')
            i++;
        if (i >= len)
            break;
        size_t s = i;
        while (i < len && text[i] != ' ')
            i++;
        if (tok == t0) {
            *b0 = s;
            found = 1;
        }
        if (found && tok == t0 + count - 1) {
            *b1 = i;
            return 1;
        }
        tok++;
    }
    return 0;
}

static void am_cli_annots_build(const am_sgml_seg *seg, am_cli_annots *a)
{
    memset(a, 0, sizeof *a);
    if (!seg || seg->nterms == 0)
        return;
    a->v = am_xcalloc(seg->nterms, sizeof *a->v);
    size_t cap = 0;
    for (size_t i = 0; i < seg->nterms; i++) {
        const am_sgml_term *t = &seg->terms[i];
        if (!t->tgt || !*t->tgt || t->tok_count == 0)
            continue;
        size_t first = a->ntargets;
        const char *p = t->tgt;
        while (1) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (n > 0) {
                if (a->ntargets == cap) {
                    cap = cap ? cap * 2 : 8;
                    a->targets = am_xrealloc(a->targets, cap * sizeof *a->targets);
                }
                a->targets[a->ntargets++] = am_xstrndup(p, n);
            }
            if (!bar)
                break;
            p = bar + 1;
        }
        if (a->ntargets == first)
            continue;
        am_terms_annot *an = &a->v[a->n++];
        an->source = t->src;
        an->n_targets = a->ntargets - first;
        an->targets = (const char *const *)(uintptr_t)first; /* fixed up below */
        size_t b0 = 0, b1 = 0;
        if (am_cli_tok_bytes(seg->text, t->tok_start, t->tok_count, &b0, &b1)) {
            an->has_span = 1;
            an->span_start = b0;
            an->span_end = b1;
        }
    }
    for (size_t i = 0; i < a->n; i++)
        a->v[i].targets = (const char *const *)(a->targets + (uintptr_t)a->v[i].targets);
}

/* The scoring input of segment sg; its annotations go into *an (the
 * standard profile takes them from the SGML term tags). */
static am_seg_input am_cli_seg_input(const am_cli *c, const am_cli_seg *sg, am_cli_annots *an)
{
    am_cli_annots_build(c->cfg.profile == AM_PROFILE_STANDARD ? sg->ref_seg : NULL, an);
    am_seg_input in = {.source = sg->src,
                       .translation = sg->ref,
                       .hyps = sg->hyp,
                       .nsys = c->nhyp,
                       .annots = an->v,
                       .n_annots = an->n,
                       .more_refs = sg->xrefs,
                       .n_more_refs = sg->xrefs ? c->nxref : 0};
    return in;
}

static int am_cli_history_lookup(void *ctx, const char *word, int64_t *occ)
{
    return am_recall_vocab_lookup(ctx, word, occ);
}

/* Where per-segment results go besides the totals (each part optional). */
typedef struct am_cli_sink {
    json_t *jsegs; /* --json --per-segment: one object per segment (borrowed) */
    am_report *segrep; /* --per-segment in another format: rows (borrowed) */
    am_cli_plot *plot; /* --plot: the points (borrowed) */
    const am_totals *base; /* [nhyp] totals of the earlier sessions, or NULL */
    int64_t seq; /* segments scored before, over the whole run */
} am_cli_sink;

/* The running values of a --json per-segment object (new reference). */
static json_t *am_cli_json_running(const am_totals *t)
{
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    double v[] = {sc.r[0],
                  t->recall.k >= 1 ? sc.r[1] : NAN,
                  sc.r01,
                  sc.terms.exact,
                  sc.one_minus_term,
                  sc.bleu,
                  sc.chrf,
                  sc.ter * 100};
    static const char *const keys[] = {"r0",   "r1",    "r01", "term_exact_match", "one_minus_term",
                                       "bleu", "chrf2", "ter"};
    json_t *o = json_object();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        json_object_set_new(o, keys[k], isfinite(v[k]) ? json_real(v[k]) : json_null());
    return o;
}

/* Hands one scored segment to the sink: totals[0..nhyp) are the session's
 * totals after it, added to sink->base for the running values. */
static void am_cli_sink_segment(const am_cli *c, const am_scorer *s, am_cli_sink *k,
                                const am_cli_seg *sg, const am_seg_result *res,
                                const am_totals *totals)
{
    k->seq++;
    if (!k->jsegs && !k->segrep && !k->plot)
        return;
    am_totals running[AM_CLI_MAX_SYS];
    for (size_t i = 0; i < c->nhyp; i++) {
        running[i] = totals[i];
        if (k->base)
            am_totals_merge(&running[i], &k->base[i]);
    }
    if (k->plot)
        am_cli_plot_add(k->plot, res->sys, running);
    if (k->segrep)
        for (size_t i = 0; i < c->nhyp; i++)
            am_cli_report_segment(k->segrep, k->seq, sg->id, sg->docid, c->hyp[i].name,
                                  &res->sys[i], &running[i]);
    if (k->jsegs) {
        const char *names[AM_CLI_MAX_SYS];
        for (size_t i = 0; i < c->nhyp; i++)
            names[i] = c->hyp[i].name;
        json_t *o = am_json_segment(s, res, names);
        json_object_set_new(o, "id", json_string(sg->id));
        if (sg->docid)
            json_object_set_new(o, "doc", json_string(sg->docid));
        json_t *run = json_object();
        for (size_t i = 0; i < c->nhyp; i++)
            json_object_set_new(run, names[i], am_cli_json_running(&running[i]));
        json_object_set_new(o, "running", run);
        json_array_append_new(k->jsegs, o);
    }
}

/* Scores segments[0..n) as one session, adding to totals[0..nhyp) and
 * handing every segment to the sink. */
static int am_cli_session(const am_cli *c, const am_scorer *s, am_score_ws *ws,
                          const am_cli_seg *segs, size_t n, am_totals *totals, am_cli_sink *sink)
{
    am_vocab *hist = am_vocab_new();
    if (c->sigc)
        am_sig_collect_session(c->sigc);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const am_cli_seg *sg = &segs[i];
        am_cli_annots an;
        am_seg_input in = am_cli_seg_input(c, sg, &an);
        am_seg_result res;
        const char *field = NULL;
        int r = am_score_segment(s, ws, &in, am_cli_history_lookup, hist, &res, &field);
        am_cli_annots_free(&an);
        if (r != AM_OK) {
            fprintf(stderr, "adaptmon score: segment %s: %s%s%s\n", sg->id, am_strerror(r),
                    field ? " in " : "", field ? field : "");
            rc = 1;
            break;
        }
        am_recall_seg_commit(res.recall, hist);
        for (size_t k = 0; k < c->nhyp; k++)
            am_totals_add(&totals[k], &res.sys[k]);
        if (c->sigc)
            am_sig_collect_seg(c->sigc, res.sys, res.recall);
        am_cli_sink_segment(c, s, sink, sg, &res, totals);
    }
    am_vocab_free(hist);
    return rc;
}

/* ---- multi-threaded scoring ------------------------------------------------
 * Without per-segment output a session is scored in chunks: a pool of
 * threads (one per core) runs the order-independent part of every segment
 * of a chunk (am_score_segment_rest: terms, TER/TERm, BLEU, chrF), then
 * the calling thread runs the recall pass of the chunk's segments in
 * order against the history and adds each segment to the totals in order,
 * so the totals are bit-identical to am_cli_session's. */

#define AM_CLI_CHUNK 2048
#define AM_CLI_MAX_THREADS 64

typedef struct am_cli_par {
    const am_cli *c;
    const am_scorer *s;
    const am_cli_seg *segs; /* the chunk */
    size_t n;
    am_sys_seg *out; /* [n * nhyp] */
    int *err; /* [n]: am_err of the segment */
    const char **field; /* [n] */
    pthread_mutex_t mu;
    size_t next; /* guarded by mu: next segment to take */
} am_cli_par;

typedef struct am_cli_worker {
    am_cli_par *p;
    am_score_ws *ws; /* owned by the worker's slot, reused across chunks */
} am_cli_worker;

static void *am_cli_work(void *arg)
{
    am_cli_worker *w = arg;
    am_cli_par *p = w->p;
    const am_cli *c = p->c;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next;
        p->next += 16;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            break;
        size_t end = i + 16 < p->n ? i + 16 : p->n;
        for (; i < end; i++) {
            const am_cli_seg *sg = &p->segs[i];
            am_cli_annots an;
            am_seg_input in = am_cli_seg_input(c, sg, &an);
            am_seg_result res;
            p->field[i] = NULL;
            p->err[i] = am_score_segment_rest(p->s, w->ws, &in, &res, &p->field[i]);
            am_cli_annots_free(&an);
            if (p->err[i] == AM_OK)
                for (size_t k = 0; k < c->nhyp; k++) {
                    p->out[i * c->nhyp + k] = res.sys[k];
                    p->out[i * c->nhyp + k].terms = NULL; /* points into ws */
                }
        }
    }
    return NULL;
}

/* Number of scoring threads: the cores this process may run on (its CPU
 * affinity, so `taskset -c 0` scores on one thread), at most
 * AM_CLI_MAX_THREADS. */
static size_t am_cli_nthreads(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > AM_CLI_MAX_THREADS ? AM_CLI_MAX_THREADS : (size_t)n;
}

/* Starts the workers on chunk p (threads 1..nthreads-1); returns how many
 * were started. */
static size_t am_cli_start(am_cli_par *p, am_cli_worker *w, pthread_t *tid, size_t nthreads)
{
    size_t started = 0;
    for (size_t t = 1; t < nthreads; t++) {
        w[t].p = p;
        if (pthread_create(&tid[t], NULL, am_cli_work, &w[t]) != 0)
            break;
        started++;
    }
    return started;
}

/* am_cli_session without per-segment output, on nthreads threads (the
 * calling thread included). Pipelined: while the workers score chunk k+1,
 * the calling thread runs chunk k's recall pass, then joins them. */
static int am_cli_session_par(const am_cli *c, const am_scorer *s, am_score_ws *ws,
                              const am_cli_seg *segs, size_t n, am_totals *totals, size_t nthreads)
{
    am_vocab *hist = am_vocab_new();
    if (c->sigc)
        am_sig_collect_session(c->sigc);
    size_t cap = n == 0 ? 1 : n < AM_CLI_CHUNK ? n : AM_CLI_CHUNK;
    am_cli_par p[2];
    for (int b = 0; b < 2; b++) {
        memset(&p[b], 0, sizeof p[b]);
        p[b].c = c;
        p[b].s = s;
        p[b].out = am_xcalloc(cap * c->nhyp + 1, sizeof *p[b].out);
        p[b].err = am_xcalloc(cap + 1, sizeof *p[b].err);
        p[b].field = am_xcalloc(cap + 1, sizeof *p[b].field);
        pthread_mutex_init(&p[b].mu, NULL);
    }
    am_cli_worker w[AM_CLI_MAX_THREADS];
    pthread_t tid[AM_CLI_MAX_THREADS];
    am_cli_worker self = {NULL, am_score_ws_new()};
    for (size_t t = 1; t < nthreads; t++)
        w[t].ws = am_score_ws_new();
    size_t nchunks = (n + cap - 1) / cap;
    int rc = 0;
    /* chunk 0: everyone scores it */
    size_t started = 0;
    if (nchunks > 0) {
        p[0].segs = segs;
        p[0].n = n < cap ? n : cap;
        started = am_cli_start(&p[0], w, tid, nthreads);
        self.p = &p[0];
        am_cli_work(&self);
        for (size_t t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
    }
    for (size_t k = 0; k < nchunks; k++) {
        am_cli_par *cur = &p[k % 2], *nx = &p[(k + 1) % 2];
        started = 0;
        if (k + 1 < nchunks && rc == 0) {
            size_t first = (k + 1) * cap;
            nx->segs = segs + first;
            nx->n = n - first < cap ? n - first : cap;
            nx->next = 0;
            started = am_cli_start(nx, w, tid, nthreads);
        }
        /* in order: recall against the history, then the totals */
        for (size_t i = 0; i < cur->n && rc == 0; i++) {
            const am_cli_seg *sg = &cur->segs[i];
            am_seg_input in = {
                .source = sg->src, .translation = sg->ref, .hyps = sg->hyp, .nsys = c->nhyp};
            const am_recall_seg *rec = NULL;
            const char *field = cur->field[i];
            int r = cur->err[i];
            if (r == AM_OK)
                r = am_score_segment_recall(s, ws, &in, am_cli_history_lookup, hist, &rec, &field);
            if (r != AM_OK) {
                fprintf(stderr, "adaptmon score: segment %s: %s%s%s\n", sg->id, am_strerror(r),
                        field ? " in " : "", field ? field : "");
                rc = 1;
                break;
            }
            am_recall_seg_commit(rec, hist);
            for (size_t j = 0; j < c->nhyp; j++) {
                am_sys_seg *sy = &cur->out[i * c->nhyp + j];
                sy->recall = rec->sys[j];
                am_totals_add(&totals[j], sy);
            }
            if (c->sigc)
                am_sig_collect_seg(c->sigc, &cur->out[i * c->nhyp], rec);
        }
        if (k + 1 < nchunks && rc == 0) {
            self.p = nx;
            am_cli_work(&self);
        }
        for (size_t t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
    }
    for (size_t t = 1; t < nthreads; t++)
        am_score_ws_free(w[t].ws);
    am_score_ws_free(self.ws);
    for (int b = 0; b < 2; b++) {
        pthread_mutex_destroy(&p[b].mu);
        free(p[b].out);
        free(p[b].err);
        free(p[b].field);
    }
    am_vocab_free(hist);
    return rc;
}

static int am_cli_load_resources(am_cli *c, am_gloss *gloss, am_vocab **background,
                                 am_toks *custom_sw)
{
    if (c->glossary_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->glossary_path};
        if (am_cli_load(&f))
            return 1;
        enum am_gloss_format fmt = AM_GLOSS_AUTO;
        if (c->glossary_format && am_gloss_format_parse(c->glossary_format, &fmt) != AM_OK) {
            fprintf(stderr, "adaptmon score: unknown glossary format '%s'\n", c->glossary_format);
            free(f.buf);
            return 2;
        }
        am_gloss_report rep;
        /* a CSV/TSV header naming languages maps to --source-lang/--target-lang */
        const char *sl =
            c->cfg.source_lang[0] && strcmp(c->cfg.source_lang, "und") ? c->cfg.source_lang : NULL;
        const char *tl =
            c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und") ? c->cfg.target_lang : NULL;
        int rc = am_gloss_parse_langs(f.buf, f.len, fmt, sl, tl, NULL, gloss, &rep);
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(stderr, "adaptmon score: %s: %s\n", c->glossary_path,
                    rep.msg[0] ? rep.msg : am_strerror(rc));
            /* 2: a TBX with no side in the run's languages (a CSV header naming
             * other languages stays 1, as tests/cli/test_score.py pins) */
            return rc == AM_ERR_INVALID && rep.format == AM_GLOSS_TBX ? 2 : 1;
        }
    }
    if (c->background_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->background_path};
        if (am_cli_load(&f))
            return 1;
        *background = am_vocab_new();
        size_t line = 0;
        const char *msg = NULL;
        int rc;
        am_xliff_report rep = {0}; /* msg points into it until the message is printed */
        if (am_xliff_looks_xml(f.buf, f.len)) {
            am_recall_config rc_tmx;
            am_xliff_tmx_rcfg(&c->cfg, &rc_tmx);
            am_recall_models models; /* MeCab for a ja target: words as recall's */
            am_buf why;
            am_buf_init(&why);
            rc = am_recall_models_open(&rc_tmx, &models, &why);
            if (rc == AM_OK)
                rc = am_xliff_tmx_counts_src(
                    f.buf, f.len, c->cfg.source_lang, /* checked against the memory */
                    c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und") ? c->cfg.target_lang
                                                                               : NULL,
                    &rc_tmx, *background, NULL, NULL, &rep);
            else
                snprintf(rep.msg, sizeof rep.msg, "tokenizer %s: %s", am_tok_name(rc_tmx.tokenizer),
                         am_buf_str(&why));
            am_recall_models_close(&models);
            am_buf_cleanup(&why);
            line = rep.line;
            msg = rc ? rep.msg : NULL;
        } else {
            rc = am_vocab_parse_counts(f.buf, f.len, *background, &line, &msg);
        }
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(stderr, "adaptmon score: %s:%zu: %s\n", c->background_path, line,
                    msg ? msg : am_strerror(rc));
            return rc == AM_ERR_INVALID ? 2 : 1; /* 2: no side in the run's languages */
        }
        c->cfg.has_background = 1;
    }
    if (c->stopwords_path) {
        am_cli_file f = {.path = (char *)(uintptr_t)c->stopwords_path};
        if (am_cli_load(&f) || am_cli_validate(&f)) {
            free(f.buf);
            return 1;
        }
        char **lines;
        size_t n = am_cli_lines(&f, &lines);
        for (size_t i = 0; i < n; i++) {
            am_toks words;
            am_toks_init(&words);
            am_toks_split_py(&words, lines[i]);
            for (size_t k = 0; k < words.n; k++)
                am_toks_pushs(custom_sw, words.v[k]);
            am_toks_cleanup(&words);
        }
        free(lines);
        free(f.buf);
    }
    return 0;
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
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
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
static int am_cli_alam(const am_cli *c, const am_sgml_doc *src, const am_sgml_doc *ref,
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
            fprintf(stderr,
                    "adaptmon score: %s: segment %s: TERm needs more than %llu edit-distance "
                    "cells, the alam2021 limit (its shift search grows like n^4; shorten the "
                    "segment)\n",
                    c->hyp[i].path, r.err_seg < ref->nsegs ? ref->segs[r.err_seg].id : "?",
                    (unsigned long long)AM_ALAM_TER_MAX_CELLS);
            rc = 1;
        } else if (e != AM_OK) {
            fprintf(stderr, "adaptmon score: %s: %s\n", c->hyp[i].path,
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
        am_cli_put_json(root);
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

/* XLIFF input: parses every --xliff file into docs[0..nxliff) (caller
 * frees each with am_xliff_free, and the arrays), names the systems (the
 * union of the files' MT systems, first appearance first) into c->hyp, and
 * builds the segments (texts borrowed from docs; a system missing from a
 * unit scores ""), and the sessions: one per file, or per <file> element
 * with --by-file, as [first, first+n) ranges of segs. Returns 0 or 1 after
 * printing an error. */
/* Reads the i-th --xliff file (and its --xliff-mt partner) into *doc:
 * languages reconciled with the command line, MT hypotheses paired from
 * the pre-translated file. Returns 0, or 1/2 after printing an error. */
static int am_cli_xliff_read(am_cli *c, size_t f, am_xliff_doc *doc, am_cli_xlang *langs)
{
    const char *paths[2] = {c->xliff[f], c->nxliff_mt ? c->xliff_mt[f] : NULL};
    am_xliff_doc pre;
    memset(&pre, 0, sizeof pre);
    for (int k = 0; k < 2 && paths[k]; k++) {
        am_cli_file in = {.path = (char *)(uintptr_t)paths[k]};
        if (am_cli_load(&in))
            return 1;
        am_xliff_report rep;
        int rc = k == 0 ? am_xliff_parse(in.buf, in.len, doc, &rep)
                        : am_xliff_parse_mt(in.buf, in.len, &pre, &rep);
        free(in.buf);
        if (rc != AM_OK) {
            if (rep.line)
                fprintf(stderr, "adaptmon score: %s:%zu: %s\n", paths[k], rep.line, rep.msg);
            else
                fprintf(stderr, "adaptmon score: %s: %s\n", paths[k], rep.msg);
            return 1;
        }
        am_xliff_doc *d = k == 0 ? doc : &pre;
        rc = am_cli_xliff_lang(&c->cfg, &langs[0], 0, d->source_lang, paths[k], d->version);
        if (rc == 0)
            rc = am_cli_xliff_lang(&c->cfg, &langs[1], 1, d->target_lang, paths[k], d->version);
        if (rc) {
            am_xliff_free(&pre);
            return rc;
        }
    }
    if (paths[1]) {
        am_cli_xliff_pair(doc, &pre);
        am_xliff_free(&pre);
    }
    return 0;
}

/* Counts doc's skips and its segments without an MT candidate (moved to
 * the end of doc->segs and cut: they are not scored) into c->skips. */
static void am_cli_xliff_skips(am_cli *c, am_xliff_doc *doc)
{
    for (size_t i = 0; i < doc->nskips; i++)
        am_cli_skips_add(&c->skips, doc->skips[i].reason);
    size_t keep = 0;
    for (size_t i = 0; i < doc->nsegs; i++) {
        am_xliff_seg *x = &doc->segs[i];
        if (x->nhyp) {
            am_xliff_seg t = doc->segs[keep];
            doc->segs[keep++] = *x;
            *x = t;
            continue;
        }
        char why[sizeof x->dropped + 32];
        snprintf(why, sizeof why, "no MT candidate%s%s", x->dropped[0] ? ": " : "", x->dropped);
        am_cli_skips_add(&c->skips, why);
    }
    /* the cut segments stay allocated past nsegs until am_xliff_free */
    for (size_t i = keep; i < doc->nsegs; i++) {
        free(doc->segs[i].id);
        free(doc->segs[i].source);
        free(doc->segs[i].target);
        memset(&doc->segs[i], 0, sizeof doc->segs[i]);
    }
    doc->nsegs = keep;
}

/* XLIFF input: parses every --xliff file (paired with its --xliff-mt file)
 * into docs[0..nxliff) (caller frees each with am_xliff_free, and the
 * arrays), takes the files' languages when the command line gives none
 * (refusing a mismatch), counts the units not scored per reason (printed
 * on stderr), names the systems (the union of the files' MT systems, first
 * appearance first) into c->hyp, and builds the segments of the units with
 * an MT candidate (texts borrowed from docs; a system missing from a unit
 * scores ""), and the sessions: one per file, or per <file> element with
 * --by-file, as [first, first+n) ranges of segs. Returns 0, or 1 (2 for a
 * language mismatch) after printing an error; 1 when nothing is scored. */
static int am_cli_xliff(am_cli *c, am_xliff_doc *docs, am_cli_seg **segs, size_t *nseg,
                        size_t **sess_first, size_t **sess_n, size_t *nsess)
{
    size_t total = 0, files = 0;
    am_cli_xlang langs[2] = {{c->cfg.source_lang[0] && strcmp(c->cfg.source_lang, "und"), NULL},
                             {c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und"), NULL}};
    am_cli_skips_init(&c->skips);
    for (size_t f = 0; f < c->nxliff; f++) {
        int rc = am_cli_xliff_read(c, f, &docs[f], langs);
        if (rc)
            return rc;
        am_cli_xliff_skips(c, &docs[f]);
        for (size_t k = 0; k < docs[f].nsystems; k++) {
            size_t i = 0;
            while (i < c->nhyp && strcmp(c->hyp[i].name, docs[f].systems[k]))
                i++;
            if (i < c->nhyp)
                continue;
            if (c->nhyp == AM_CLI_MAX_SYS) {
                fprintf(stderr, "adaptmon score: more than %d MT systems\n", AM_CLI_MAX_SYS);
                return 1;
            }
            c->hyp[c->nhyp].name = am_xstrdup(docs[f].systems[k]);
            c->hyp[c->nhyp++].path = am_xstrdup(c->xliff[f]);
        }
        total += docs[f].nsegs;
        files += docs[f].nfiles ? docs[f].nfiles : 1;
    }
    am_cli_skips_print(&c->skips, total, stderr);
    if (total == 0 || c->nhyp == 0) {
        fprintf(stderr,
                "adaptmon score: nothing to score: no confirmed unit with an MT candidate "
                "(alt-trans, mtc:match type=\"mt\"%s) in the XLIFF input\n",
                c->nxliff_mt ? ", or the --xliff-mt file's unit of the same id" : "");
        return 1;
    }
    *segs = am_xcalloc(total ? total : 1, sizeof **segs);
    *sess_first = am_xcalloc(files + c->nxliff, sizeof **sess_first);
    *sess_n = am_xcalloc(files + c->nxliff, sizeof **sess_n);
    size_t k = 0;
    *nsess = 0;
    for (size_t f = 0; f < c->nxliff; f++) {
        size_t map[AM_XLIFF_MAX_SYSTEMS] = {0};
        for (size_t d = 0; d < docs[f].nsystems; d++)
            for (size_t i = 0; i < c->nhyp; i++)
                if (!strcmp(c->hyp[i].name, docs[f].systems[d]))
                    map[d] = i;
        for (size_t i = 0; i < docs[f].nsegs; i++, k++) {
            const am_xliff_seg *x = &docs[f].segs[i];
            if (*nsess == 0 || (c->by_file ? x->file != (*segs)[k - 1].doc || i == 0 : i == 0)) {
                (*sess_first)[*nsess] = k;
                (*nsess)++;
            }
            (*sess_n)[*nsess - 1]++;
            am_cli_seg *sg = &(*segs)[k];
            sg->id = x->id;
            sg->src = x->source;
            sg->ref = x->target;
            sg->doc = x->file;
            for (size_t h = 0; h < c->nhyp; h++)
                sg->hyp[h] = "";
            for (size_t h = 0; h < x->nhyp; h++)
                sg->hyp[map[x->sys[h]]] = x->hyp[h];
        }
    }
    *nseg = total;
    return 0;
}

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

static void am_cli_run_free(const am_cli *c, am_cli_run *r)
{
    for (size_t f = 0; f < c->nxliff; f++)
        am_xliff_free(&r->xdocs[f]);
    free(r->xdocs);
    free(r->sess_first);
    free(r->sess_n);
    free(r->sess_doc);
    free(r->totals);
    free(r->doc_totals);
    am_score_ws_free(r->ws);
    am_scorer_free(r->scorer);
    free(r->segs);
    free(r->line_ids);
    free(r->ref_lines);
    free(r->src_lines);
    for (size_t i = 0; i < AM_CLI_MAX_XREF; i++)
        free(r->xref_lines[i]);
    free(r->xref_flat);
    for (size_t i = 0; i < AM_CLI_MAX_SYS; i++) {
        free(r->hyp_lines[i]);
        am_sgml_free(&r->shyp[i]);
    }
    am_sgml_free(&r->sref);
    am_sgml_free(&r->ssrc);
    am_gloss_cleanup(&r->gloss);
    am_vocab_free(r->background);
    am_toks_cleanup(&r->custom_sw);
}

/* One session over segs[0..n) (no --by-doc). */
static void am_cli_one_session(am_cli_run *r)
{
    r->sess_first = am_xcalloc(1, sizeof *r->sess_first);
    r->sess_n = am_xcalloc(1, sizeof *r->sess_n);
    r->sess_n[0] = r->nseg;
    r->nsess = 1;
}

/* SGML input: loads the files, pairs the segments by id in reference order
 * and makes the sessions (one, or one per document with --by-doc). Names
 * the unnamed systems by their sysid. Returns 0 or 1 after an error. */
static int am_cli_read_sgml(am_cli *c, am_cli_run *r)
{
    if (am_cli_load(&c->sgm_ref) || am_cli_sgml(&c->sgm_ref, &r->sref) ||
        (c->sgm_src.path && (am_cli_load(&c->sgm_src) || am_cli_sgml(&c->sgm_src, &r->ssrc))))
        return 1;
    const char *sysids[AM_CLI_MAX_SYS] = {0};
    for (size_t i = 0; i < c->nhyp; i++) {
        if (am_cli_load(&c->hyp[i]) || am_cli_sgml(&c->hyp[i], &r->shyp[i]))
            return 1;
        sysids[i] = r->shyp[i].ndocs ? r->shyp[i].docs[0].sysid : NULL;
    }
    am_cli_default_names(c, sysids);
    if (c->cfg.profile == AM_PROFILE_ALAM2021)
        return 0;
    r->nseg = r->sref.nsegs;
    r->segs = am_xcalloc(r->nseg ? r->nseg : 1, sizeof *r->segs);
    for (size_t k = 0; k < r->nseg; k++) {
        const am_sgml_seg *rs = &r->sref.segs[k];
        am_cli_seg *sg = &r->segs[k];
        sg->id = rs->id;
        sg->ref = rs->text;
        sg->doc = rs->doc;
        sg->docid = r->sref.docs[rs->doc].docid;
        sg->ref_seg = rs;
        if (c->sgm_src.path) {
            size_t j = am_sgml_find_seg(&r->ssrc, rs->id);
            if (j == (size_t)-1) {
                fprintf(stderr, "adaptmon score: %s: no segment with id '%s'\n", c->sgm_src.path,
                        rs->id);
                return 1;
            }
            sg->src = r->ssrc.segs[j].text;
        }
        for (size_t i = 0; i < c->nhyp; i++) {
            size_t j = am_sgml_find_seg(&r->shyp[i], rs->id);
            sg->hyp[i] = j == (size_t)-1 ? "" : r->shyp[i].segs[j].text;
        }
    }
    for (size_t i = 0; i < c->nhyp; i++)
        for (size_t j = 0; j < r->shyp[i].nsegs; j++)
            if (am_sgml_find_seg(&r->sref, r->shyp[i].segs[j].id) == (size_t)-1) {
                fprintf(stderr, "adaptmon score: %s: segment id '%s' is not in the reference\n",
                        c->hyp[i].path, r->shyp[i].segs[j].id);
                return 1;
            }
    if (!c->by_doc) {
        am_cli_one_session(r);
        return 0;
    }
    size_t nd = r->sref.ndocs;
    r->sess_first = am_xcalloc(nd + 1, sizeof *r->sess_first);
    r->sess_n = am_xcalloc(nd + 1, sizeof *r->sess_n);
    r->sess_doc = am_xcalloc(nd + 1, sizeof *r->sess_doc);
    for (size_t d = 0; d < nd; d++) {
        r->sess_first[d] = r->sref.docs[d].first_seg;
        r->sess_n[d] = r->sref.docs[d].nsegs;
        r->sess_doc[d] = r->sref.docs[d].docid ? r->sref.docs[d].docid : "";
    }
    r->nsess = nd;
    return 0;
}

/* The references after the first: every file must have the reference's
 * nseg lines (sacreBLEU refuses files of different lengths too). Fills
 * r->xref_flat. Returns 0 or 1 after an error. */
static int am_cli_read_xrefs(am_cli *c, am_cli_run *r, size_t nseg)
{
    for (size_t j = 0; j < c->nxref; j++) {
        if (am_cli_load(&c->xref[j]) || am_cli_validate(&c->xref[j]))
            return 1;
        size_t n = am_cli_lines(&c->xref[j], &r->xref_lines[j]);
        if (n != nseg) {
            fprintf(stderr, "adaptmon score: reference %s has %zu lines but %s has %zu\n",
                    c->xref[j].path, n, c->ref.path, nseg);
            return 1;
        }
    }
    if (c->nxref == 0)
        return 0;
    r->xref_flat = am_xcalloc(nseg * c->nxref + 1, sizeof *r->xref_flat);
    for (size_t k = 0; k < nseg; k++)
        for (size_t j = 0; j < c->nxref; j++)
            r->xref_flat[k * c->nxref + j] = r->xref_lines[j][k];
    return 0;
}

/* Plain-text input: one segment per line, equal line counts; segment ids
 * are the line numbers. Returns 0 or 1 after an error. */
static int am_cli_read_plain(am_cli *c, am_cli_run *r)
{
    if (am_cli_load(&c->ref) || am_cli_validate(&c->ref) ||
        (c->src.path && (am_cli_load(&c->src) || am_cli_validate(&c->src))))
        return 1;
    size_t nseg = am_cli_lines(&c->ref, &r->ref_lines);
    size_t nsrc = c->src.path ? am_cli_lines(&c->src, &r->src_lines) : nseg;
    if (nsrc != nseg) {
        fprintf(stderr, "adaptmon score: %s has %zu lines but %s has %zu\n", c->src.path, nsrc,
                c->ref.path, nseg);
        return 1;
    }
    for (size_t i = 0; i < c->nhyp; i++) {
        if (am_cli_load(&c->hyp[i]) || am_cli_validate(&c->hyp[i]))
            return 1;
        size_t nh = am_cli_lines(&c->hyp[i], &r->hyp_lines[i]);
        if (nh != nseg) {
            fprintf(stderr, "adaptmon score: %s has %zu lines but %s has %zu\n", c->hyp[i].path, nh,
                    c->ref.path, nseg);
            return 1;
        }
    }
    if (am_cli_read_xrefs(c, r, nseg))
        return 1;
    am_cli_default_names(c, NULL);
    r->nseg = nseg;
    r->segs = am_xcalloc(nseg ? nseg : 1, sizeof *r->segs);
    r->line_ids = am_xcalloc(nseg ? nseg : 1, sizeof *r->line_ids);
    for (size_t k = 0; k < nseg; k++) {
        snprintf(r->line_ids[k], sizeof r->line_ids[k], "%zu", k + 1);
        r->segs[k].id = r->line_ids[k];
        r->segs[k].ref = r->ref_lines[k];
        r->segs[k].xrefs = c->nxref ? r->xref_flat + k * c->nxref : NULL;
        r->segs[k].src = r->src_lines ? r->src_lines[k] : NULL;
        for (size_t i = 0; i < c->nhyp; i++)
            r->segs[k].hyp[i] = r->hyp_lines[i][k];
    }
    am_cli_one_session(r);
    return 0;
}

/* The scorer of the run (as session creation: an option the profile cannot
 * honour is an error). Returns 0, 1 or 2 after printing an error. */
static int am_cli_new_scorer(const am_cli *c, am_cli_run *r)
{
    am_buf err;
    am_buf_init(&err);
    const char *const *cw = (const char *const *)r->custom_sw.v;
    int e = am_config_check_profile(&c->cfg, &err);
    if (e == AM_OK)
        e = am_scorer_new(&c->cfg, cw, r->custom_sw.n, c->glossary_path ? &r->gloss : NULL,
                          r->background, &r->scorer, &err);
    if (e != AM_OK)
        fprintf(stderr, "adaptmon score: %s\n", err.len ? am_buf_str(&err) : am_strerror(e));
    else if (am_config_warnings(am_scorer_config(r->scorer)) & AM_WARN_NO_TARGET_LANG)
        /* issue 24: never a silent language */
        fprintf(stderr, "adaptmon score: warning: no --target-lang: recall and terms use no "
                        "stopwords (every word is a content word) and the intl tokenizer; "
                        "give --target-lang (the signature says |warn:no-target-lang)\n");
    am_buf_cleanup(&err);
    return e == AM_OK ? 0 : e == AM_ERR_INVALID ? 2 : 1;
}

/* Scores every session in order into r->totals (and r->doc_totals with
 * --by-doc). Segments go to the sink; without any per-segment consumer a
 * session is scored on several threads. Returns 0 or 1. */
static int am_cli_score_sessions(const am_cli *c, am_cli_run *r, am_cli_sink *sink)
{
    r->ws = am_score_ws_new();
    r->totals = am_xcalloc(c->nhyp, sizeof *r->totals);
    for (size_t i = 0; i < c->nhyp; i++)
        am_totals_init(&r->totals[i], r->scorer);
    if (c->by_doc)
        r->doc_totals = am_xcalloc(r->nsess * c->nhyp + 1, sizeof *r->doc_totals);
    int seq = !sink->jsegs && !sink->segrep && !sink->plot && am_cli_nthreads() >= 2;
    am_totals *dt = am_xcalloc(c->nhyp, sizeof *dt);
    int rc = 0;
    for (size_t d = 0; d < r->nsess && rc == 0; d++) {
        for (size_t i = 0; i < c->nhyp; i++)
            am_totals_init(&dt[i], r->scorer);
        const am_cli_seg *segs = r->segs + r->sess_first[d];
        sink->base = r->totals;
        rc =
            seq ? am_cli_session_par(c, r->scorer, r->ws, segs, r->sess_n[d], dt, am_cli_nthreads())
                : am_cli_session(c, r->scorer, r->ws, segs, r->sess_n[d], dt, sink);
        for (size_t i = 0; i < c->nhyp && rc == 0; i++)
            am_totals_merge(&r->totals[i], &dt[i]);
        if (r->doc_totals && rc == 0)
            memcpy(&r->doc_totals[d * c->nhyp], dt, c->nhyp * sizeof *dt);
    }
    free(dt);
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
static void am_cli_print_json(const am_cli *c, const am_cli_run *r, json_t *jsegs, json_t *sig,
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
    am_cli_put_json(root);
    json_decref(root);
}

/* The totals table (a row per document and system first with --by-doc,
 * then the aggregate) with the signatures as notes, the significance and
 * exposures (borrowed; NULL: none) as columns of the aggregate rows, after
 * the per-segment rows when any. */
static void am_cli_print_table(const am_cli *c, const am_cli_run *r, const am_report *segrep,
                               json_t *sig, json_t *expo)
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
static int am_cli_write_special(const char *path, am_buf *svg)
{
    FILE *fp = fopen(path, "wb");
    int bad = !fp || fwrite(svg->data, 1, svg->len, fp) != svg->len;
    if (fp && fclose(fp) != 0)
        bad = 1;
    if (bad)
        fprintf(stderr, "adaptmon score: cannot write '%s': %s\n", path, strerror(errno));
    am_buf_cleanup(svg);
    return bad;
}

/* Writes the learning-curve figure to c->plot_path. Returns 0 or 1. */
static int am_cli_write_plot(const am_cli *c, const am_cli_run *r, const am_cli_plot *plot)
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
        return am_cli_write_special(c->plot_path, &svg);
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
        fprintf(stderr, "adaptmon score: cannot write '%s': %s\n", c->plot_path, strerror(errno));
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
static int am_cli_signif(const am_cli *c, json_t **sig, json_t **expo)
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
        fprintf(stderr, "adaptmon score: %s\n", am_buf_str(&err));
        rc = 1;
    }
    am_buf_cleanup(&err);
    if (rc == 0 && c->exposures)
        *expo = am_sig_exposures(c->sigc, names);
    return rc;
}

/* Scores the loaded input and prints the results. Returns the exit status. */
static int am_cli_score_run(am_cli *c, am_cli_run *r)
{
    int rc = am_cli_new_scorer(c, r);
    if (rc)
        return rc;
    am_cli_sink sink;
    memset(&sink, 0, sizeof sink);
    am_report segrep;
    am_report_init(&segrep);
    am_cli_plot plot;
    am_cli_plot_init(&plot, c->nhyp, (size_t)c->plot_window, c->plot_ci);
    if (c->per_segment && c->format == AM_RP_JSON)
        sink.jsegs = json_array();
    else if (c->per_segment)
        sink.segrep = &segrep;
    if (sink.segrep)
        am_cli_report_segment_columns(sink.segrep);
    if (c->plot_path)
        sink.plot = &plot;
    /* the collector borrows the scorer: freed here, before am_cli_run_free */
    if (c->sig.test || c->exposures)
        c->sigc = am_sig_collect_new(r->scorer, c->nhyp, c->sig.test, c->exposures);
    rc = am_cli_score_sessions(c, r, &sink);
    json_t *sig = NULL, *expo = NULL;
    if (rc == 0)
        rc = am_cli_signif(c, &sig, &expo);
    if (rc == 0 && c->plot_path)
        rc = am_cli_write_plot(c, r, &plot);
    if (rc == 0 && c->format == AM_RP_JSON)
        am_cli_print_json(c, r, sink.jsegs, sig, expo);
    else if (rc == 0)
        am_cli_print_table(c, r, sink.segrep, sig, expo);
    json_decref(sig);
    json_decref(expo);
    am_sig_collect_free(c->sigc);
    c->sigc = NULL;
    json_decref(sink.jsegs);
    am_report_cleanup(&segrep);
    am_cli_plot_cleanup(&plot);
    return rc;
}

int am_cli_score(int argc, char **argv)
{
    am_cli c;
    memset(&c, 0, sizeof c);
    am_config_init(&c.cfg);
    am_sig_opts_init(&c.sig);
    c.precision = 4;
    int rc = am_cli_args(argc, argv, &c);
    if (rc) {
        am_cli_free(&c);
        return rc < 0 ? 0 : rc;
    }
    am_cli_run *r = am_xcalloc(1, sizeof *r);
    am_gloss_init(&r->gloss);
    am_toks_init(&r->custom_sw);
    r->xdocs = c.nxliff ? am_xcalloc(c.nxliff, sizeof *r->xdocs) : NULL;
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
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) { /* e.g. a full disk */
        fprintf(stderr, "adaptmon score: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    am_cli_run_free(&c, r);
    free(r);
    am_cli_free(&c);
    return rc;
}
