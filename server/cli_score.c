/*
 * cli_score.c — `adaptmon score`: the offline front end of the scoring core.
 *
 * Inputs are plain-text files (one segment per line) or WMT21 SGML files
 * (segments paired by id). The files are one session in order; --by-doc
 * makes one session per SGML document and aggregates the totals. Output is
 * a table in the style of the papers, or JSON with --json.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "cli.h"
#include "cli_signif.h"
#include "json.h"

#include "compat/alam2021.h"
#include "glossary.h"
#include "score.h"
#include "sgml.h"
#include "text.h"
#include "vocab.h"
#include "xliff.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AM_CLI_MAX_FILE (1024L * 1024L * 1024L) /* 1 GiB per input file */
#define AM_CLI_MAX_SYS AM_SCORE_MAX_SYSTEMS

typedef struct am_cli_file {
    char *name; /* system name (hypotheses) */
    char *path;
    char *buf; /* whole file, NUL-terminated */
    size_t len;
} am_cli_file;

typedef struct am_cli {
    am_config cfg;
    am_cli_file ref, src, sgm_src, sgm_ref;
    am_cli_file hyp[AM_CLI_MAX_SYS];
    size_t nhyp;
    int sgml; /* SGML input mode */
    const char *glossary_path, *glossary_format, *background_path, *stopwords_path;
    int per_segment, json, by_doc, by_file;
    const char **xliff; /* --xliff paths (borrowed from argv; array owned) */
    size_t nxliff;
    am_sig_opts sig; /* --paired-bs / --paired-ar (cli_signif.c) */
    int exposures; /* --exposures */
    am_sig_collect *sigc; /* per-segment statistics (sig.test) and exposures */
} am_cli;

/* One segment of the session, as texts borrowed from the loaded files. */
typedef struct am_cli_seg {
    const char *id;
    const char *src;
    const char *ref;
    const char *hyp[AM_CLI_MAX_SYS];
    size_t doc;
    const am_sgml_seg *ref_seg; /* SGML mode: for term annotations */
} am_cli_seg;

static void am_cli_usage(FILE *out)
{
    fputs("usage: adaptmon score [OPTIONS]\n"
          "\n"
          "input (plain text, one segment per line, same order in every file):\n"
          "  --ref FILE              confirmed translations (the references)\n"
          "  --hyp [NAME=]FILE       a system's hypotheses (repeatable; NAME defaults to hyp1, …)\n"
          "  --src FILE              source segments (needed for glossary terms)\n"
          "input (WMT21 SGML, segments paired by id, reference order):\n"
          "  --sgm-src FILE  --sgm-ref FILE  --sgm-hyp [NAME=]FILE (repeatable)\n"
          "  --by-doc                one session per document, totals aggregated\n"
          "input (XLIFF 1.2/2.x from CAT tools: confirmed units, MT from alt-trans/mtc:match):\n"
          "  --xliff FILE            one session per file (repeatable)\n"
          "  --by-file               one session per <file> element instead\n"
          "resources:\n"
          "  --glossary FILE         TICO-19 CSV, CSV/TSV or JSON glossary\n"
          "  --glossary-format F     auto|csv|tsv|json (default auto)\n"
          "  --background FILE       'count word' lines or a TMX memory (novel-word variant;\n"
          "                          TMX: the --target-lang side, else the non-srclang one)\n"
          "  --stopwords-file FILE   custom stopword list, one word per line\n"
          "output:\n"
          "  --per-segment           scores of every segment as well\n"
          "  --json                  JSON instead of a table\n"
          "significance (sacreBLEU 2.6.0's tests; also R_k, 1-TERm and term metrics):\n"
          "  --paired-bs             paired bootstrap resampling: p-values and CIs\n"
          "  --paired-ar             paired approximate randomization: p-values\n"
          "  --baseline NAME         the system compared against (default: the first)\n"
          "  --n-bootstrap N         resamples (default 1000) or AR trials (default 10000);\n"
          "                          sacreBLEU's --paired-bs-n / --paired-ar-n are accepted\n"
          "  --seed N                seed of numpy's default_rng (default 12345)\n"
          "  --ci LEVEL              confidence level of the intervals (default 0.95)\n"
          "  --k-max K               report R0..RK (same as --k K)\n"
          "  --exposures             per system: exposures before it first produced a word\n"
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
    fputs("  --stem-match, --ter-case-sensitive, --no-strip-tags: boolean shortcuts\n", out);
}

/* Reads a whole file. Returns 0 or prints an error and returns 1. */
static int am_cli_load(am_cli_file *f)
{
    FILE *fp = fopen(f->path, "rb");
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
    fprintf(stderr, "adaptmon score: %s:%zu:%zu: %s\n", f->path, line, col,
            rc == AM_ERR_NUL ? "NUL byte in text" : "invalid UTF-8");
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
    return 0;
}

/* Splits "NAME=PATH" (NAME without '/' and non-empty) or "PATH". */
static void am_cli_named(const char *arg, size_t index, am_cli_file *f)
{
    const char *eq = strchr(arg, '=');
    const char *slash = strchr(arg, '/');
    if (eq && eq > arg && (!slash || slash > eq)) {
        f->name = am_xstrndup(arg, (size_t)(eq - arg));
        f->path = am_xstrdup(eq + 1);
    } else {
        char nm[32];
        snprintf(nm, sizeof nm, "hyp%zu", index + 1);
        f->name = am_xstrdup(nm);
        f->path = am_xstrdup(arg);
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
    free(c->xliff);
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
            return 0;
        }
        fprintf(stderr, "adaptmon score: --ci must be a level between 0 and 1, e.g. 0.95\n");
        return 2;
    }
    unsigned long long x = strtoull(val, &end, 10);
    int is_n = !strcmp(name, "n-bootstrap") || !strcmp(name, "paired-bs-n") ||
               !strcmp(name, "paired-ar-n"); /* sacreBLEU's names */
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

static int am_cli_args(int argc, char **argv, am_cli *c)
{
    am_buf err;
    am_buf_init(&err);
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        char name[64];
        const char *val = NULL;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "adaptmon score: unexpected argument '%s'\n", a);
            rc = 2;
            break;
        }
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nl >= sizeof name) {
            fprintf(stderr, "adaptmon score: unknown option '%s'\n", a);
            rc = 2;
            break;
        }
        memcpy(name, a + 2, nl);
        name[nl] = '\0';
        if (eq)
            val = eq + 1;

        /* flags without a value */
        static const char *const flags[] = {"help",          "per-segment", "json",
                                            "by-doc",        "stem-match",  "ter-case-sensitive",
                                            "no-strip-tags", "by-file",     "paired-bs",
                                            "paired-ar",     "exposures"};
        int is_flag = 0;
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            if (!strcmp(name, flags[k]))
                is_flag = 1;
        if (is_flag && !val) {
            if (!strcmp(name, "help")) {
                am_cli_usage(stdout);
                rc = -1;
            } else if (!strcmp(name, "per-segment")) {
                c->per_segment = 1;
            } else if (!strcmp(name, "json")) {
                c->json = 1;
            } else if (!strcmp(name, "by-doc")) {
                c->by_doc = 1;
            } else if (!strcmp(name, "by-file")) {
                c->by_file = 1;
            } else if (!strcmp(name, "paired-bs") || !strcmp(name, "paired-ar")) {
                c->sig.test = name[7] == 'b' ? 1 : 2;
            } else if (!strcmp(name, "exposures")) {
                c->exposures = 1;
            } else if (!strcmp(name, "no-strip-tags")) {
                c->cfg.strip_tags = 0;
            } else {
                am_config_set(&c->cfg, name, "true", NULL);
            }
            continue;
        }
        if (!val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "adaptmon score: option --%s needs a value\n", name);
                rc = 2;
                break;
            }
            val = argv[++i];
        }
        if (!strcmp(name, "ref")) {
            free(c->ref.path);
            c->ref.path = am_xstrdup(val);
        } else if (!strcmp(name, "src")) {
            free(c->src.path);
            c->src.path = am_xstrdup(val);
        } else if (!strcmp(name, "hyp") || !strcmp(name, "sgm-hyp")) {
            if (c->nhyp == AM_CLI_MAX_SYS) {
                fprintf(stderr, "adaptmon score: at most %d hypotheses\n", AM_CLI_MAX_SYS);
                rc = 2;
                break;
            }
            if (!strcmp(name, "sgm-hyp"))
                c->sgml = 1;
            am_cli_named(val, c->nhyp, &c->hyp[c->nhyp]);
            for (size_t k = 0; k < c->nhyp; k++)
                if (!strcmp(c->hyp[k].name, c->hyp[c->nhyp].name)) {
                    fprintf(stderr, "adaptmon score: two hypotheses named '%s'\n", c->hyp[k].name);
                    rc = 2;
                }
            c->nhyp++;
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
        } else if (!strcmp(name, "glossary")) {
            c->glossary_path = val;
        } else if (!strcmp(name, "glossary-format")) {
            c->glossary_format = val;
        } else if (!strcmp(name, "background")) {
            c->background_path = val;
        } else if (!strcmp(name, "baseline") || !strcmp(name, "n-bootstrap") ||
                   !strcmp(name, "paired-bs-n") || !strcmp(name, "paired-ar-n") ||
                   !strcmp(name, "seed") || !strcmp(name, "ci") || !strcmp(name, "k-max")) {
            rc = am_cli_sig_arg(c, name, val, &err);
        } else if (!strcmp(name, "stopwords-file")) {
            c->stopwords_path = val;
            c->cfg.stopwords = AM_SW_CUSTOM;
        } else {
            int r = am_config_set(&c->cfg, name, val, &err);
            if (r != AM_OK) {
                fprintf(stderr, "adaptmon score: %s\n", am_buf_str(&err));
                rc = 2;
            }
        }
    }
    am_buf_cleanup(&err);
    if (rc)
        return rc;

    /* consistency of the inputs */
    if (c->by_file && !c->nxliff) {
        fprintf(stderr, "adaptmon score: --by-file needs --xliff input\n");
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
    }
    if (c->cfg.stopwords == AM_SW_CUSTOM && !c->stopwords_path) {
        fprintf(stderr, "adaptmon score: --stopwords custom needs --stopwords-file FILE\n");
        return 2;
    }
    return 0;
}

/* ---- output ------------------------------------------------------------ */

static void am_cli_fmt_count(char *out, size_t n, int64_t hits, int64_t total)
{
    if (total > 0)
        snprintf(out, n, "%.4f (%lld/%lld)", (double)hits / (double)total, (long long)hits,
                 (long long)total);
    else
        snprintf(out, n, "null (0/0)");
}

static void am_cli_fmt_real(char *out, size_t n, double x, double scale)
{
    if (isfinite(x))
        snprintf(out, n, "%.4f", x * scale);
    else
        snprintf(out, n, "null");
}

static void am_cli_table(const am_cli *c, const am_scorer *s, const am_totals *tot,
                         int64_t sessions)
{
    const am_config *cfg = am_scorer_config(s);
    printf("signature: %s\n", am_scorer_signature(s));
    printf("sessions: %lld, segments: %lld\n\n", (long long)sessions,
           (long long)(c->nhyp ? tot[0].segments : 0));
    printf("%-12s", "system");
    for (int k = 0; k <= cfg->k; k++)
        printf(" %-22s", k == 0 ? "R0" : k == 1 ? "R1" : "Rk");
    printf(" %-22s %-8s %-8s %-8s %-8s %-8s", "R0+1", "BLEU", "chrF2", "chrF2++", "TER", "1-TERm");
    int terms = am_scorer_glossary_size(s) > 0 || c->sgml;
    if (terms) {
        printf(" %-22s", "term-EM");
        for (size_t w = 0; w < cfg->nwindows; w++)
            printf(" WO%-5d", cfg->windows[w]);
    }
    printf("\n");
    for (size_t i = 0; i < c->nhyp; i++) {
        am_totals_scores sc;
        am_totals_scores_compute(&tot[i], &sc);
        char b[64];
        printf("%-12s", c->hyp[i].name);
        for (int k = 0; k <= cfg->k; k++) {
            am_cli_fmt_count(b, sizeof b, tot[i].recall.r[k].hits, tot[i].recall.r[k].total);
            printf(" %-22s", b);
        }
        am_cli_fmt_count(b, sizeof b, tot[i].recall.r01.hits, tot[i].recall.r01.total);
        printf(" %-22s", b);
        am_cli_fmt_real(b, sizeof b, sc.bleu, 1);
        printf(" %-8s", b);
        am_cli_fmt_real(b, sizeof b, sc.chrf, 1);
        printf(" %-8s", b);
        am_cli_fmt_real(b, sizeof b, sc.chrfpp, 1);
        printf(" %-8s", b);
        am_cli_fmt_real(b, sizeof b, sc.ter, 100);
        printf(" %-8s", b);
        am_cli_fmt_real(b, sizeof b, sc.one_minus_term, 1);
        printf(" %-8s", b);
        if (terms) {
            am_cli_fmt_count(b, sizeof b, (int64_t)tot[i].terms.exact,
                             (int64_t)tot[i].terms.instances);
            printf(" %-22s", b);
            for (size_t w = 0; w < cfg->nwindows; w++) {
                am_cli_fmt_real(b, sizeof b, sc.terms.window[w], 1);
                printf(" %-7s", b);
            }
        }
        printf("\n");
    }
}

static void am_cli_seg_row(const am_cli *c, const am_cli_seg *sg, const am_seg_result *res)
{
    for (size_t i = 0; i < res->nsys; i++) {
        const am_sys_seg *r = &res->sys[i];
        char r0[48], r1[48], r01[48], b[32], ch[32], t[32];
        am_cli_fmt_count(r0, sizeof r0, r->recall.r[0].hits, r->recall.r[0].total);
        if (r->recall.k >= 1)
            am_cli_fmt_count(r1, sizeof r1, r->recall.r[1].hits, r->recall.r[1].total);
        else
            snprintf(r1, sizeof r1, "-");
        am_cli_fmt_count(r01, sizeof r01, r->recall.r01.hits, r->recall.r01.total);
        am_cli_fmt_real(b, sizeof b, r->sent_bleu, 1);
        am_cli_fmt_real(ch, sizeof ch, r->sent_chrf, 1);
        am_cli_fmt_real(t, sizeof t, r->sent_ter, 100);
        printf("%-8s %-12s R0 %-20s R1 %-20s R01 %-20s BLEU %-8s chrF2 %-8s TER %-8s", sg->id,
               c->hyp[i].name, r0, r1, r01, b, ch, t);
        if (r->terms)
            printf(" terms %llu/%llu", (unsigned long long)r->terms_totals.exact,
                   (unsigned long long)r->terms_totals.instances);
        printf("\n");
    }
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
                       .n_annots = an->n};
    return in;
}

static int am_cli_history_lookup(void *ctx, const char *word, int64_t *occ)
{
    return am_recall_vocab_lookup(ctx, word, occ);
}

/* Scores segments[0..n) as one session, adding to totals[0..nhyp). */
static int am_cli_session(const am_cli *c, const am_scorer *s, am_score_ws *ws,
                          const am_cli_seg *segs, size_t n, am_totals *totals, json_t *jsegs)
{
    am_vocab *hist = am_vocab_new();
    if (c->sigc)
        am_sig_collect_session(c->sigc);
    const char *names[AM_CLI_MAX_SYS];
    for (size_t i = 0; i < c->nhyp; i++)
        names[i] = c->hyp[i].name;
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
        if (c->per_segment) {
            if (jsegs) {
                json_t *o = am_json_segment(s, &res, names);
                json_object_set_new(o, "id", json_string(sg->id));
                json_array_append_new(jsegs, o);
            } else {
                am_cli_seg_row(c, sg, &res);
            }
        }
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
        int rc = am_gloss_parse(f.buf, f.len, fmt, NULL, gloss, &rep);
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(stderr, "adaptmon score: %s: %s\n", c->glossary_path,
                    rep.msg[0] ? rep.msg : am_strerror(rc));
            return 1;
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
        if (am_xliff_looks_xml(f.buf, f.len)) {
            am_recall_config rc_tmx;
            am_xliff_tmx_rcfg(&c->cfg, &rc_tmx);
            am_xliff_report rep;
            rc = am_xliff_tmx_counts(f.buf, f.len,
                                     c->cfg.target_lang[0] && strcmp(c->cfg.target_lang, "und")
                                         ? c->cfg.target_lang
                                         : NULL,
                                     &rc_tmx, *background, NULL, NULL, &rep);
            line = rep.line;
            msg = rc ? rep.msg : NULL;
        } else {
            rc = am_vocab_parse_counts(f.buf, f.len, *background, &line, &msg);
        }
        free(f.buf);
        if (rc != AM_OK) {
            fprintf(stderr, "adaptmon score: %s:%zu: %s\n", c->background_path, line,
                    msg ? msg : am_strerror(rc));
            return 1;
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
        } else if (c->json) {
            json_object_set_new(systems, c->hyp[i].name, am_json_alam(&r, c->per_segment));
        } else {
            if (i == 0)
                printf("signature: %s\n\n%-12s %-22s", am_buf_str(&sig), "system", "term-EM");
            if (i == 0) {
                for (size_t w = 0; w < r.nwindows; w++)
                    printf(" WO%-17zu", r.windows[w]);
                printf(" %-20s\n", "1-TERm");
            }
            char b[64];
            am_cli_fmt_count(b, sizeof b, (int64_t)r.em_correct, (int64_t)r.em_terms);
            printf("%-12s %-22s", c->hyp[i].name, b);
            for (size_t w = 0; w < r.nwindows; w++)
                printf(" %-19.17g", r.window_overlap[w]);
            if (r.term_ter_valid)
                printf(" %.17g\n", r.one_minus_term_ter);
            else
                printf(" null\n");
            if (c->per_segment)
                for (size_t k = 0; k < r.nsegs; k++) {
                    const am_alam_seg *sg = &r.segs[k];
                    printf("  %-8s EM %zu/%zu", sg->id, sg->em_correct, sg->em_terms);
                    for (size_t w = 0; w < r.nwindows; w++)
                        printf(" WO%zu %.6f", r.windows[w], sg->wo[w]);
                    if (sg->term_ter_valid)
                        printf(" TERm %.6f\n", sg->term_ter);
                    else
                        printf(" TERm null\n");
                }
        }
        am_alam_result_free(&r);
    }
    json_object_set_new(root, "systems", systems);
    if (c->json && rc == 0) {
        char *out = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
        puts(out);
        free(out);
    }
    json_decref(root);
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
static int am_cli_xliff(am_cli *c, am_xliff_doc *docs, am_cli_seg **segs, size_t *nseg,
                        size_t **sess_first, size_t **sess_n, size_t *nsess)
{
    size_t total = 0, files = 0;
    for (size_t f = 0; f < c->nxliff; f++) {
        am_cli_file in = {.path = (char *)(uintptr_t)c->xliff[f]};
        if (am_cli_load(&in))
            return 1;
        am_xliff_report rep;
        int rc = am_xliff_parse(in.buf, in.len, &docs[f], &rep);
        free(in.buf);
        if (rc != AM_OK) {
            if (rep.line)
                fprintf(stderr, "adaptmon score: %s:%zu: %s\n", c->xliff[f], rep.line, rep.msg);
            else
                fprintf(stderr, "adaptmon score: %s: %s\n", c->xliff[f], rep.msg);
            return 1;
        }
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
    if (c->nhyp == 0) {
        fprintf(stderr, "adaptmon score: no MT candidate (alt-trans, mtc:match type=\"mt\") in "
                        "the XLIFF input\n");
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

int am_cli_score(int argc, char **argv)
{
    am_cli c;
    memset(&c, 0, sizeof c);
    am_config_init(&c.cfg);
    am_sig_opts_init(&c.sig);
    int rc = am_cli_args(argc, argv, &c);
    if (rc) {
        am_cli_free(&c);
        return rc < 0 ? 0 : rc;
    }

    am_gloss gloss;
    am_gloss_init(&gloss);
    am_vocab *background = NULL;
    am_toks custom_sw;
    am_toks_init(&custom_sw);
    am_sgml_doc sref, ssrc, shyp[AM_CLI_MAX_SYS];
    memset(&sref, 0, sizeof sref);
    memset(&ssrc, 0, sizeof ssrc);
    memset(shyp, 0, sizeof shyp);
    am_cli_seg *segs = NULL;
    size_t nseg = 0;
    char **ref_lines = NULL, **src_lines = NULL, **hyp_lines[AM_CLI_MAX_SYS] = {0};
    am_scorer *scorer = NULL;
    am_score_ws *ws = NULL;
    am_totals *totals = NULL;
    json_t *jsegs = NULL;
    am_xliff_doc *xdocs = c.nxliff ? am_xcalloc(c.nxliff, sizeof *xdocs) : NULL;
    size_t *sess_first = NULL, *sess_n = NULL, nsess = 0;

    rc = am_cli_load_resources(&c, &gloss, &background, &custom_sw);
    if (rc)
        goto done;

    if (c.nxliff) {
        if (am_cli_xliff(&c, xdocs, &segs, &nseg, &sess_first, &sess_n, &nsess)) {
            rc = 1;
            goto done;
        }
    } else if (c.sgml) {
        if (am_cli_load(&c.sgm_ref) || am_cli_sgml(&c.sgm_ref, &sref) ||
            (c.sgm_src.path && (am_cli_load(&c.sgm_src) || am_cli_sgml(&c.sgm_src, &ssrc)))) {
            rc = 1;
            goto done;
        }
        for (size_t i = 0; i < c.nhyp; i++)
            if (am_cli_load(&c.hyp[i]) || am_cli_sgml(&c.hyp[i], &shyp[i])) {
                rc = 1;
                goto done;
            }
        if (c.cfg.profile == AM_PROFILE_ALAM2021) {
            rc = am_cli_alam(&c, c.sgm_src.path ? &ssrc : NULL, &sref, shyp);
            goto done;
        }
        nseg = sref.nsegs;
        segs = am_xcalloc(nseg ? nseg : 1, sizeof *segs);
        for (size_t k = 0; k < nseg; k++) {
            const am_sgml_seg *rs = &sref.segs[k];
            segs[k].id = rs->id;
            segs[k].ref = rs->text;
            segs[k].doc = rs->doc;
            segs[k].ref_seg = rs;
            if (c.sgm_src.path) {
                size_t j = am_sgml_find_seg(&ssrc, rs->id);
                if (j == (size_t)-1) {
                    fprintf(stderr, "adaptmon score: %s: no segment with id '%s'\n", c.sgm_src.path,
                            rs->id);
                    rc = 1;
                    goto done;
                }
                segs[k].src = ssrc.segs[j].text;
            }
            for (size_t i = 0; i < c.nhyp; i++) {
                size_t j = am_sgml_find_seg(&shyp[i], rs->id);
                segs[k].hyp[i] = j == (size_t)-1 ? "" : shyp[i].segs[j].text;
            }
        }
        for (size_t i = 0; i < c.nhyp; i++)
            for (size_t j = 0; j < shyp[i].nsegs; j++)
                if (am_sgml_find_seg(&sref, shyp[i].segs[j].id) == (size_t)-1) {
                    fprintf(stderr, "adaptmon score: %s: segment id '%s' is not in the reference\n",
                            c.hyp[i].path, shyp[i].segs[j].id);
                    rc = 1;
                    goto done;
                }
    } else {
        if (am_cli_load(&c.ref) || am_cli_validate(&c.ref) ||
            (c.src.path && (am_cli_load(&c.src) || am_cli_validate(&c.src)))) {
            rc = 1;
            goto done;
        }
        nseg = am_cli_lines(&c.ref, &ref_lines);
        size_t nsrc = c.src.path ? am_cli_lines(&c.src, &src_lines) : nseg;
        if (nsrc != nseg) {
            fprintf(stderr, "adaptmon score: %s has %zu lines but %s has %zu\n", c.src.path, nsrc,
                    c.ref.path, nseg);
            rc = 1;
            goto done;
        }
        for (size_t i = 0; i < c.nhyp; i++) {
            if (am_cli_load(&c.hyp[i]) || am_cli_validate(&c.hyp[i])) {
                rc = 1;
                goto done;
            }
            size_t nh = am_cli_lines(&c.hyp[i], &hyp_lines[i]);
            if (nh != nseg) {
                fprintf(stderr, "adaptmon score: %s has %zu lines but %s has %zu\n", c.hyp[i].path,
                        nh, c.ref.path, nseg);
                rc = 1;
                goto done;
            }
        }
        segs = am_xcalloc(nseg ? nseg : 1, sizeof *segs);
        static char ids[1][1];
        (void)ids;
        for (size_t k = 0; k < nseg; k++) {
            segs[k].ref = ref_lines[k];
            segs[k].src = src_lines ? src_lines[k] : NULL;
            for (size_t i = 0; i < c.nhyp; i++)
                segs[k].hyp[i] = hyp_lines[i][k];
        }
    }

    am_buf err;
    am_buf_init(&err);
    const char *const *cw = (const char *const *)custom_sw.v;
    /* as session creation: an option the profile cannot honour is an error */
    int e = am_config_check_profile(&c.cfg, &err);
    if (e == AM_OK)
        e = am_scorer_new(&c.cfg, cw, custom_sw.n, c.glossary_path ? &gloss : NULL, background,
                          &scorer, &err);
    if (e != AM_OK) {
        fprintf(stderr, "adaptmon score: %s\n", err.len ? am_buf_str(&err) : am_strerror(e));
        am_buf_cleanup(&err);
        rc = e == AM_ERR_INVALID ? 2 : 1;
        goto done;
    }
    am_buf_cleanup(&err);

    /* Line numbers as segment ids in plain-text mode. */
    char(*line_ids)[24] = NULL;
    if (!c.sgml && !c.nxliff) {
        line_ids = am_xcalloc(nseg ? nseg : 1, sizeof *line_ids);
        for (size_t k = 0; k < nseg; k++) {
            snprintf(line_ids[k], sizeof line_ids[k], "%zu", k + 1);
            segs[k].id = line_ids[k];
        }
    }

    ws = am_score_ws_new();
    if (c.sig.test || c.exposures)
        c.sigc = am_sig_collect_new(scorer, c.nhyp, c.sig.test, c.exposures);
    totals = am_xcalloc(c.nhyp, sizeof *totals);
    for (size_t i = 0; i < c.nhyp; i++)
        am_totals_init(&totals[i], scorer);
    if (c.json && c.per_segment)
        jsegs = json_array();

    int64_t sessions = 0;
    if (c.nxliff) {
        for (size_t d = 0; d < nsess && rc == 0; d++) {
            am_totals *dt = am_xcalloc(c.nhyp, sizeof *dt);
            for (size_t i = 0; i < c.nhyp; i++)
                am_totals_init(&dt[i], scorer);
            rc = c.per_segment || am_cli_nthreads() < 2
                     ? am_cli_session(&c, scorer, ws, segs + sess_first[d], sess_n[d], dt, jsegs)
                     : am_cli_session_par(&c, scorer, ws, segs + sess_first[d], sess_n[d], dt,
                                          am_cli_nthreads());
            for (size_t i = 0; i < c.nhyp && rc == 0; i++)
                am_totals_merge(&totals[i], &dt[i]);
            free(dt);
            sessions++;
        }
    } else if (c.by_doc) {
        for (size_t d = 0; d < sref.ndocs && rc == 0; d++) {
            am_totals *dt = am_xcalloc(c.nhyp, sizeof *dt);
            for (size_t i = 0; i < c.nhyp; i++)
                am_totals_init(&dt[i], scorer);
            rc = am_cli_session(&c, scorer, ws, segs + sref.docs[d].first_seg, sref.docs[d].nsegs,
                                dt, jsegs);
            for (size_t i = 0; i < c.nhyp && rc == 0; i++)
                am_totals_merge(&totals[i], &dt[i]);
            free(dt);
            sessions++;
        }
    } else {
        rc = c.per_segment || am_cli_nthreads() < 2
                 ? am_cli_session(&c, scorer, ws, segs, nseg, totals, jsegs)
                 : am_cli_session_par(&c, scorer, ws, segs, nseg, totals, am_cli_nthreads());
        sessions = 1;
    }
    free(line_ids);
    json_t *sig = NULL, *expo = NULL;
    if (rc == 0 && c.sigc) {
        const char *names[AM_CLI_MAX_SYS];
        for (size_t i = 0; i < c.nhyp; i++)
            names[i] = c.hyp[i].name;
        am_buf serr;
        am_buf_init(&serr);
        if (c.sig.test && !(sig = am_sig_run(c.sigc, &c.sig, names, &serr))) {
            fprintf(stderr, "adaptmon score: %s\n", am_buf_str(&serr));
            rc = 1;
        }
        am_buf_cleanup(&serr);
        if (c.exposures)
            expo = am_sig_exposures(c.sigc, names);
    }
    if (rc == 0) {
        if (c.json) {
            json_t *systems = json_object();
            for (size_t i = 0; i < c.nhyp; i++)
                json_object_set_new(systems, c.hyp[i].name, am_json_totals(scorer, &totals[i]));
            json_t *root =
                json_pack("{sssIsIso}", "signature", am_scorer_signature(scorer), "sessions",
                          (json_int_t)sessions, "segments", (json_int_t)nseg, "systems", systems);
            if (jsegs)
                json_object_set(root, "per_segment", jsegs);
            if (sig)
                json_object_set(root, "significance", sig);
            if (expo)
                json_object_set(root, "exposures", expo);
            char *out = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
            puts(out);
            free(out);
            json_decref(root);
        } else {
            if (c.per_segment)
                printf("\n");
            am_cli_table(&c, scorer, totals, sessions);
            if (sig)
                am_sig_print(stdout, sig);
            if (expo)
                am_sig_print_exposures(stdout, expo);
        }
    }
    json_decref(sig);
    json_decref(expo);

done:
    am_sig_collect_free(c.sigc);
    for (size_t f = 0; f < c.nxliff; f++)
        am_xliff_free(&xdocs[f]);
    free(xdocs);
    free(sess_first);
    free(sess_n);
    json_decref(jsegs);
    free(totals);
    am_score_ws_free(ws);
    am_scorer_free(scorer);
    free(segs);
    free(ref_lines);
    free(src_lines);
    for (size_t i = 0; i < AM_CLI_MAX_SYS; i++) {
        free(hyp_lines[i]);
        am_sgml_free(&shyp[i]);
    }
    am_sgml_free(&sref);
    am_sgml_free(&ssrc);
    am_gloss_cleanup(&gloss);
    am_vocab_free(background);
    am_toks_cleanup(&custom_sw);
    am_cli_free(&c);
    return rc;
}
