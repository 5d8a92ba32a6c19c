/*
 * bench_core.c — scoring-core benchmark (make bench-core).
 *
 * Measures on the TICO-19 dev set (971 segments), one thread:
 *   baseline   13a tokenization of hypothesis and reference (a floor: the
 *              least work any metric here does), in segments/s;
 *   standard   every metric of the standard profile (recall, glossary
 *              terms with f_en-fr_XX.csv, TER, TERm, BLEU, chrF, chrF++),
 *              in segments/s, and its ratio to the baseline;
 *   alam2021   the whole dev set through the reference profile, parse
 *              included, in seconds;
 * and the peak resident memory of the process. Each figure is the median
 * of --runs runs (default 7). Prints a Markdown table. --cpu times the
 * process's CPU time instead of the wall clock (for A/B runs on a loaded
 * machine).
 */
#include "compat/alam2021.h"
#include "score.h"
#include "sgml.h"
#include "tok.h"
#include "vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Seconds on clk: CLOCK_MONOTONIC, or with --cpu the process's CPU time
 * (less sensitive to other processes on a shared machine; the benchmark is
 * single-threaded). */
static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_core: cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = am_xmalloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "bench_core: cannot read %s\n", path);
        exit(1);
    }
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void parse(const char *path, am_sgml_doc *doc)
{
    size_t len;
    char *b = slurp(path, &len);
    if (am_sgml_parse(b, len, doc, NULL) != AM_OK) {
        fprintf(stderr, "bench_core: cannot parse %s\n", path);
        exit(1);
    }
    free(b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    const char *dir = "data";
    int runs = 7, reps = 5;
    clockid_t clk = CLOCK_MONOTONIC;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu"))
            clk = CLOCK_PROCESS_CPUTIME_ID;
    }
    if (runs < 1 || runs > 100 || reps < 1)
        return 2;
    char p[3][512];
    snprintf(p[0], sizeof p[0], "%s/tico19-enfr-dev/dev.en-fr.en.sgm", dir);
    snprintf(p[1], sizeof p[1], "%s/tico19-enfr-dev/dev.en-fr.fr.sgm", dir);
    snprintf(p[2], sizeof p[2], "%s/tico19-enfr-dev/en-fr.dev.txt.truecased.sgm", dir);
    am_sgml_doc src, ref, hyp;
    parse(p[0], &src);
    parse(p[1], &ref);
    parse(p[2], &hyp);
    const char **h = am_xcalloc(ref.nsegs, sizeof *h);
    for (size_t i = 0; i < ref.nsegs; i++)
        h[i] = hyp.segs[am_sgml_find_seg(&hyp, ref.segs[i].id)].text;

    char gp[512];
    snprintf(gp, sizeof gp, "%s/glossaries/tico19/f_en-fr_XX.csv", dir);
    size_t glen;
    char *gbuf = slurp(gp, &glen);
    am_gloss g;
    am_gloss_init(&g);
    if (am_gloss_parse(gbuf, glen, AM_GLOSS_AUTO, NULL, &g, NULL) != AM_OK)
        return 1;
    free(gbuf);

    am_config cfg;
    am_config_init(&cfg);
    am_config_set(&cfg, "source_lang", "en", NULL);
    am_config_set(&cfg, "target_lang", "fr", NULL);
    am_scorer *s;
    if (am_scorer_new(&cfg, NULL, 0, &g, NULL, &s, NULL) != AM_OK)
        return 1;
    am_score_ws *ws = am_score_ws_new();

    double *base = am_xcalloc((size_t)runs, sizeof *base);
    double *std = am_xcalloc((size_t)runs, sizeof *std);
    double *alam = am_xcalloc((size_t)runs, sizeof *alam);
    double n_seg = (double)ref.nsegs * reps;
    am_buf tb;
    am_buf_init(&tb);
    double sink = 0;
    for (int r = 0; r < runs; r++) {
        /* baseline: tokenize both sides with 13a */
        double t0 = now(clk);
        for (int k = 0; k < reps; k++)
            for (size_t i = 0; i < ref.nsegs; i++) {
                am_tok_tokenize(AM_TOK_13A, h[i], &tb);
                sink += (double)tb.len;
                am_tok_tokenize(AM_TOK_13A, ref.segs[i].text, &tb);
                sink += (double)tb.len;
            }
        base[r] = n_seg / (now(clk) - t0);

        /* standard profile, every metric, a fresh session per repetition */
        t0 = now(clk);
        for (int k = 0; k < reps; k++) {
            am_vocab *hist = am_vocab_new();
            am_totals tot;
            am_totals_init(&tot, s);
            for (size_t i = 0; i < ref.nsegs; i++) {
                am_seg_input in = {.source = src.segs[i].text,
                                   .translation = ref.segs[i].text,
                                   .hyps = &h[i],
                                   .nsys = 1};
                am_seg_result res;
                if (am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, &res, NULL))
                    return 1;
                am_recall_seg_commit(res.recall, hist);
                am_totals_add(&tot, &res.sys[0]);
            }
            sink += (double)tot.recall.r01.hits;
            am_vocab_free(hist);
        }
        std[r] = n_seg / (now(clk) - t0);

        /* alam2021: parse the three files and score, as the CLI does */
        t0 = now(clk);
        am_sgml_doc a, b, c;
        parse(p[0], &a);
        parse(p[1], &b);
        parse(p[2], &c);
        size_t win[2] = {2, 3};
        am_alam_result ar;
        memset(&ar, 0, sizeof ar);
        if (am_alam_score(&a, &b, &c, win, 2, &ar) != AM_OK)
            return 1;
        alam[r] = now(clk) - t0;
        sink += ar.one_minus_term_ter;
        am_alam_result_free(&ar);
        am_sgml_free(&a);
        am_sgml_free(&b);
        am_sgml_free(&c);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mb = base[0], ms = std[0];
    double b_med = median(base, runs), s_med = median(std, runs), a_med = median(alam, runs);
    (void)mb;
    (void)ms;
    printf("| measure (TICO-19 dev, 971 segments, 1 thread) | median of %d runs |\n", runs);
    printf("|---|---|\n");
    printf("| baseline: 13a tokenization of both sides | %.0f segments/s |\n", b_med);
    printf("| standard profile, all metrics (recall, terms, TER, TERm, BLEU, chrF, chrF++) | "
           "%.0f segments/s |\n",
           s_med);
    printf("| standard / baseline | %.3f |\n", s_med / b_med);
    printf("| alam2021 profile, whole dev set incl. parsing | %.3f s |\n", a_med);
    printf("| peak resident memory (whole benchmark) | %.1f MiB |\n",
           (double)ru.ru_maxrss / 1024.0);
    printf("| target: standard >= 5000 segments/s | %s |\n", s_med >= 5000 ? "met" : "NOT met");
    printf("| target: alam2021 < 0.5 s | %s |\n", a_med < 0.5 ? "met" : "NOT met");
    if (sink == 42.4242)
        puts("");
    am_buf_cleanup(&tb);
    free(base);
    free(std);
    free(alam);
    free(h);
    am_score_ws_free(ws);
    am_scorer_free(s);
    am_gloss_cleanup(&g);
    am_sgml_free(&src);
    am_sgml_free(&ref);
    am_sgml_free(&hyp);
    return 0;
}
