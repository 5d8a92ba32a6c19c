/*
 * sig.c — significance tests and confidence intervals for
 * `adaptmon score` and GET …/metrics?ci= (see sig.h). The caller
 * hands over every segment's per-system results; each is flattened into one
 * compact row (int32 counts, doubles for the fractional statistics) holding
 * the sufficient statistics of every metric (layout: the SIG_OFF_* offsets
 * and sig_cols), which the bootstrap reads in place (am_sig_view). Metrics that
 * depend on a session's history (R_k, R0+1) are resampled by session when
 * there are several sessions; the others by segment, as sacreBLEU does.
 */
#include "sig.h"
#include "exposure.h"
#include "signif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BLEU 10, chrF 24 (6 char + 2 word orders), TER 2, TERm 2, R0+1 2 */
#define SIG_OFF_BLEU 0
#define SIG_OFF_CHRF 10
#define SIG_OFF_TER 34
#define SIG_OFF_TERM 36
#define SIG_OFF_R01 38
#define SIG_OFF_RK 40
#define SIG_CHRF_LEN 24

/* A statistic of an integer column that does not fit int32 (never seen
 * in practice: a segment of 2^31 tokens) is stored as this marker in
 * irows and its value in `wide` (am_sig_collect). */
#define SIG_WIDE INT32_MIN

typedef struct sig_wide {
    size_t at; /* index into irows; increasing (rows are appended) */
    double v;
} sig_wide;

/* Rows are kept compact (a long session's statistics live in the server's
 * ?ci= cache): the integer statistics (counts) as int32, the fractional
 * ones (TER and TERm edits, TER's average reference length, window-overlap
 * sums) as doubles. */
struct am_sig_collect {
    const am_scorer *s;
    int k; /* the layout's R_k and windows (am_sig_collect_bind) */
    size_t nwin;
    size_t nsys, width; /* statistics per system and segment */
    size_t nint, nfrac; /* of which integer, fractional */
    unsigned char *frac; /* [width]: 1 = fractional column */
    size_t *slot; /* [width]: index among the integer or fractional columns */
    size_t nseg, cap;
    int32_t *irows; /* [nseg][nsys][nint] */
    double *frows; /* [nseg][nsys][nfrac] */
    sig_wide *wide;
    size_t nwide, capwide;
    size_t *sess; /* [nseg]: session of the segment */
    size_t nsess;
    int terms; /* a segment had term instances */
    int stats; /* keep rows */
    am_expo *expo; /* NULL: exposures not asked for */
};

typedef struct sig_col {
    char name[24];
    am_sig_metric m;
    size_t off; /* first statistic in a system's row */
    int block; /* depends on the session's history */
} sig_col;

void am_sig_opts_init(am_sig_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 12345;
    o->conf = 0.95;
    o->text_metrics = 1;
}

/* Statistics per system and segment for the scorer's settings. */
static size_t sig_width(const am_scorer *s)
{
    const am_config *cfg = am_scorer_config(s);
    return SIG_OFF_RK + 2 * ((size_t)cfg->k + 1) + 2 + 2 * cfg->nwindows + SIG_CHRF_LEN;
}

/* chrF++'s own statistics (several references: its best reference may not
 * be chrF's) are the last SIG_CHRF_LEN doubles of a row. */
static size_t sig_off_chrfpp(const am_sig_collect *c)
{
    return c->width - SIG_CHRF_LEN;
}

/* The column types of c's layout: fractional are TER's two statistics,
 * TERm's edits and every window-overlap sum (sig_row). */
static void sig_layout(am_sig_collect *c)
{
    const am_config *cfg = am_scorer_config(c->s);
    c->k = cfg->k;
    c->nwin = cfg->nwindows;
    c->frac = am_xcalloc(c->width, 1);
    c->slot = am_xcalloc(c->width, sizeof *c->slot);
    c->frac[SIG_OFF_TER] = c->frac[SIG_OFF_TER + 1] = c->frac[SIG_OFF_TERM] = 1;
    size_t o = SIG_OFF_RK + 2 * ((size_t)cfg->k + 1) + 2; /* after R_k and term exact */
    for (size_t w = 0; w < cfg->nwindows; w++)
        c->frac[o + 2 * w] = 1;
    for (size_t j = 0; j < c->width; j++)
        c->slot[j] = c->frac[j] ? c->nfrac++ : c->nint++;
}

am_sig_collect *am_sig_collect_new(const am_scorer *s, size_t nsys, int stats, int exposures)
{
    am_sig_collect *c = am_xcalloc(1, sizeof *c);
    c->s = s;
    c->nsys = nsys;
    c->width = sig_width(s);
    c->stats = stats;
    c->expo = exposures ? am_expo_new(nsys) : NULL;
    sig_layout(c);
    return c;
}

int am_sig_collect_bind(am_sig_collect *c, const am_scorer *s)
{
    const am_config *cfg = am_scorer_config(s);
    if (sig_width(s) != c->width || cfg->k != c->k || cfg->nwindows != c->nwin)
        return AM_ERR_INVALID;
    c->s = s;
    return AM_OK;
}

size_t am_sig_collect_nseg(const am_sig_collect *c)
{
    return c->nseg;
}

size_t am_sig_collect_bytes(const am_sig_collect *c)
{
    return sizeof *c + c->width * (1 + sizeof *c->slot) +
           c->cap * (c->nsys * (c->nint * sizeof *c->irows + c->nfrac * sizeof *c->frows) +
                     sizeof *c->sess) +
           c->capwide * sizeof *c->wide;
}

void am_sig_collect_free(am_sig_collect *c)
{
    if (!c)
        return;
    free(c->irows);
    free(c->frows);
    free(c->wide);
    free(c->frac);
    free(c->slot);
    free(c->sess);
    am_expo_free(c->expo);
    free(c);
}

void am_sig_collect_session(am_sig_collect *c)
{
    if (c->expo)
        am_expo_session(c->expo); /* ends the previous one */
    c->nsess++;
}

/* A count that is not an int32 integer, kept exactly: the marker at ir[k]
 * and the value in c->wide (sorted by position: see sig_put). Out of line:
 * never seen in practice. */
static void sig_put_wide(am_sig_collect *c, int32_t *ir, size_t k, double v)
{
    ir[k] = SIG_WIDE;
    if (c->nwide == c->capwide) {
        c->capwide = c->capwide ? 2 * c->capwide : 16;
        c->wide = am_xrealloc(c->wide, c->capwide * sizeof *c->wide);
    }
    c->wide[c->nwide++] = (sig_wide){(size_t)(ir - c->irows) + k, v};
}

/* Statistic j of a system's row (ir, fr: its integer and fractional
 * parts in c's rows) set to v: a fractional column as it is, a count as
 * int32 when it is an integer that fits, else kept exactly (sig_put_wide;
 * callers set a row's statistics in increasing j, so c->wide stays
 * sorted). Inline: ~130 calls a segment. */
static inline void sig_put(am_sig_collect *c, int32_t *ir, double *fr, size_t j, double v)
{
    if (c->frac[j])
        fr[c->slot[j]] = v;
    else if (v > SIG_WIDE && v <= INT32_MAX && (double)(int32_t)v == v)
        /* (int32_t)v: in range here, exact for an integer; not floor(),
         * a libm call per value without SSE4.1 */
        ir[c->slot[j]] = (int32_t)v; /* counts: integers */
    else
        sig_put_wide(c, ir, c->slot[j], v);
}

/* A segment's chrF statistics st (NULL: zeros) as statistics
 * off..off + SIG_CHRF_LEN of a system's row: counts, in consecutive
 * integer slots (no fractional column among them), each stored as
 * sig_put would ((double)x is exact in int32's range). */
static void sig_put_chrf(am_sig_collect *c, int32_t *ir, size_t off, const am_chrf_stats *st)
{
    size_t k0 = c->slot[off];
    if (!st) {
        memset(ir + k0, 0, SIG_CHRF_LEN * sizeof *ir);
        return;
    }
    int64_t v[SIG_CHRF_LEN];
    for (int n = 0; n < 6; n++)
        for (int j = 0; j < 3; j++)
            v[3 * n + j] = st->ch[n][j];
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 3; j++)
            v[18 + 3 * n + j] = st->wd[n][j];
    for (size_t i = 0; i < SIG_CHRF_LEN; i++) {
        if (v[i] > SIG_WIDE && v[i] <= INT32_MAX)
            ir[k0 + i] = (int32_t)v[i];
        else
            sig_put_wide(c, ir, k0 + i, (double)v[i]);
    }
}

/* One system's segment g as segment gi's system i, statistic by
 * statistic in increasing order (sig_put) straight into the compact rows
 * (a row of doubles copied in was ≈ a third of a cold 64,000-segment
 * read's collecting). */
static void sig_put_sys(am_sig_collect *c, size_t gi, size_t i, const am_sys_seg *g)
{
    const am_config *cfg = am_scorer_config(c->s);
    int32_t *ir = c->irows + (gi * c->nsys + i) * c->nint;
    double *fr = c->frows + (gi * c->nsys + i) * c->nfrac;
    /* BLEU: am_sig_score's layout, correct[mo], total[mo] for the
     * session's max_order mo (signif.h), zeros past it */
    int mo = cfg->bleu_max_ngram_order, hb = g->has_bleu;
    sig_put(c, ir, fr, SIG_OFF_BLEU, hb ? (double)g->bleu.sys_len : 0);
    sig_put(c, ir, fr, SIG_OFF_BLEU + 1, hb ? (double)g->bleu.ref_len : 0);
    for (int n = 0; n < 8; n++) {
        double v = !hb || n >= 2 * mo ? 0
                   : n < mo           ? (double)g->bleu.correct[n]
                                      : (double)g->bleu.total[n - mo];
        sig_put(c, ir, fr, SIG_OFF_BLEU + 2 + (size_t)n, v);
    }
    sig_put_chrf(c, ir, SIG_OFF_CHRF, hb ? &g->chrf : NULL);
    /* TER: the average reference length with several references */
    sig_put(c, ir, fr, SIG_OFF_TER, g->ter_edits);
    sig_put(c, ir, fr, SIG_OFF_TER + 1,
            g->ter_avg_ref_len > 0 ? g->ter_avg_ref_len : (double)g->ter_ref_len);
    sig_put(c, ir, fr, SIG_OFF_TERM, g->term_edits);
    sig_put(c, ir, fr, SIG_OFF_TERM + 1, (double)g->ter_ref_len);
    sig_put(c, ir, fr, SIG_OFF_R01, (double)g->recall.r01.hits);
    sig_put(c, ir, fr, SIG_OFF_R01 + 1, (double)g->recall.r01.total);
    size_t o = SIG_OFF_RK;
    for (int k = 0; k <= cfg->k; k++, o += 2) {
        sig_put(c, ir, fr, o, (double)g->recall.r[k].hits);
        sig_put(c, ir, fr, o + 1, (double)g->recall.r[k].total);
    }
    sig_put(c, ir, fr, o++, (double)g->terms_totals.exact);
    sig_put(c, ir, fr, o++, (double)g->terms_totals.instances);
    for (size_t w = 0; w < cfg->nwindows; w++, o += 2) {
        size_t n = g->terms_totals.n_windows;
        sig_put(c, ir, fr, o, w < n ? g->terms_totals.win_sum[w] : 0);
        sig_put(c, ir, fr, o + 1, w < n ? (double)g->terms_totals.win_count[w] : 0);
    }
    sig_put_chrf(c, ir, sig_off_chrfpp(c), !hb ? NULL : g->chrfpp_own ? &g->chrfpp : &g->chrf);
}

/* Statistic j of system i in segment g. */
static double sig_val(const am_sig_collect *c, size_t g, size_t i, size_t j)
{
    size_t r = g * c->nsys + i;
    if (c->frac[j])
        return c->frows[r * c->nfrac + c->slot[j]];
    size_t at = r * c->nint + c->slot[j];
    if (c->irows[at] != SIG_WIDE)
        return (double)c->irows[at];
    size_t lo = 0, hi = c->nwide; /* wide is sorted by at */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->wide[mid].at < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return c->wide[lo].v;
}

void am_sig_collect_seg(am_sig_collect *c, const am_sys_seg *sys, const am_recall_seg *rec)
{
    if (c->expo && rec)
        am_expo_add(c->expo, rec);
    if (!c->stats)
        return;
    if (c->nseg == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->irows =
            am_xrealloc(c->irows, c->cap * c->nsys * (c->nint ? c->nint : 1) * sizeof *c->irows);
        c->frows =
            am_xrealloc(c->frows, c->cap * c->nsys * (c->nfrac ? c->nfrac : 1) * sizeof *c->frows);
        c->sess = am_xrealloc(c->sess, c->cap * sizeof *c->sess);
    }
    for (size_t i = 0; i < c->nsys; i++) {
        sig_put_sys(c, c->nseg, i, &sys[i]);
        if (sys[i].terms_totals.instances)
            c->terms = 1;
    }
    c->sess[c->nseg++] = c->nsess ? c->nsess - 1 : 0;
}

/* The metrics of a run into cols (room for 8 + AM_MAX_K + windows);
 * returns their number. */
static size_t sig_cols(const am_sig_collect *c, int text_metrics, sig_col *cols)
{
    const am_config *cfg = am_scorer_config(c->s);
    size_t n = 0;
    sig_col *x;
    if (text_metrics) {
        x = &cols[n++];
        *x = (sig_col){.name = "BLEU", .m.kind = AM_SIG_BLEU, .off = SIG_OFF_BLEU};
        am_config_bleu_score_opts(cfg, 0, &x->m.bleu); /* the session's smoothing, order */
        /* the session's chrF options (config.h), as the totals use them;
         * the names stay the metrics' keys */
        am_chrf_opts co;
        x = &cols[n++];
        *x = (sig_col){.name = "chrF2", .m.kind = AM_SIG_CHRF, .off = SIG_OFF_CHRF};
        am_config_chrf_opts(cfg, 0, &co, &x->m.chrf);
        x = &cols[n++];
        *x = (sig_col){.name = "chrF2++", .m.kind = AM_SIG_CHRF, .off = sig_off_chrfpp(c)};
        am_config_chrf_opts(cfg, 1, &co, &x->m.chrf);
    }
    cols[n++] = (sig_col){.name = "TER", .m.kind = AM_SIG_TER, .off = SIG_OFF_TER};
    size_t o = SIG_OFF_RK;
    for (int k = 0; k <= cfg->k; k++, o += 2) {
        x = &cols[n++];
        *x = (sig_col){.m.kind = AM_SIG_RATIO, .off = o, .block = 1};
        snprintf(x->name, sizeof x->name, "R%d", k);
    }
    cols[n++] = (sig_col){.name = "R0+1", .m.kind = AM_SIG_RATIO, .off = SIG_OFF_R01, .block = 1};
    cols[n++] = (sig_col){.name = "1-TERm", .m.kind = AM_SIG_ONE_MINUS, .off = SIG_OFF_TERM};
    if (c->terms) {
        cols[n++] = (sig_col){.name = "term-EM", .m.kind = AM_SIG_RATIO, .off = o};
        o += 2;
        for (size_t w = 0; w < cfg->nwindows; w++, o += 2) {
            x = &cols[n++];
            *x = (sig_col){.m.kind = AM_SIG_RATIO, .off = o};
            snprintf(x->name, sizeof x->name, "WO%d", (int)cfg->windows[w]);
        }
    }
    return n;
}

static json_t *sig_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* Units of one metric: stats[s] = [nunits][ns] (caller frees each). A
 * unit that is a segment, with no wide statistic anywhere (the usual
 * case), is copied from the compact rows with each column's kind and slot
 * looked up once, not per value (sig_val per value was ~13 ns of a 64,000
 * segment run's ~9 M values). 0.0 + v: what the sum from zero gives
 * (−0.0 becomes +0.0), so both ways make the same bits. */
static void sig_units(const am_sig_collect *c, const sig_col *col, int by_sess, double **stats)
{
    size_t ns = am_sig_nstats(&col->m);
    size_t nu = by_sess ? c->nsess : c->nseg;
    const unsigned char *fr = c->frac + col->off;
    const size_t *sl = c->slot + col->off;
    for (size_t s = 0; s < c->nsys; s++) {
        if (by_sess || c->nwide) {
            stats[s] = am_xcalloc(nu * ns, sizeof *stats[s]);
            for (size_t g = 0; g < c->nseg; g++) {
                double *u = stats[s] + (by_sess ? c->sess[g] : g) * ns;
                for (size_t j = 0; j < ns; j++)
                    u[j] += sig_val(c, g, s, col->off + j);
            }
            continue;
        }
        stats[s] = am_xmalloc((nu ? nu : 1) * ns * sizeof *stats[s]);
        for (size_t g = 0; g < nu; g++) {
            const int32_t *ir = c->irows + (g * c->nsys + s) * c->nint;
            const double *fq = c->frows + (g * c->nsys + s) * c->nfrac;
            double *u = stats[s] + g * ns;
            for (size_t j = 0; j < ns; j++)
                u[j] = fr[j] ? 0.0 + fq[sl[j]] : (double)ir[sl[j]];
        }
    }
}

/* The columns of one metric read in place from the compact rows:
 * v[s * ns + j] is statistic j of system s, segment by segment (caller
 * frees). What sig_units would copy, without the copy: the int16 rows
 * of the bootstrap are built from these (64,000 segments × 66 statistics
 * × 2 systems were ≈ 70 MB of doubles written, then read three times). */
static am_sig_view *sig_views(const am_sig_collect *c, const sig_col *col)
{
    size_t ns = am_sig_nstats(&col->m);
    am_sig_view *v = am_xmalloc((c->nsys * ns > 0 ? c->nsys * ns : 1) * sizeof *v);
    for (size_t s = 0; s < c->nsys; s++)
        for (size_t j = 0; j < ns; j++) {
            size_t at = col->off + j, sl = c->slot[at];
            v[s * ns + j] =
                c->frac[at] ? (am_sig_view){NULL, c->frows + s * c->nfrac + sl, c->nsys * c->nfrac}
                            : (am_sig_view){c->irows + s * c->nint + sl, NULL, c->nsys * c->nint};
        }
    return v;
}

/* The bootstrap of the columns resampled by session (by_sess) or by
 * segment, all at once (am_sig_paired_bs_many: one draw per resample):
 * res[k] and rcs[k] set for those columns. Segments without a wide
 * statistic (the usual case) are read in place (sig_views); sessions, or
 * rows with a wide statistic, are summed into stats[k] (sig_units),
 * freed here. */
static void sig_run_bs(const am_sig_collect *c, const sig_col *cols, size_t ncol, size_t bl,
                       int by_sess, const am_sig_plan *p, const am_sig_opts *o, double ***stats,
                       am_sig_result **res, int *rcs)
{
    size_t nsess = c->nsess ? c->nsess : 1;
    int in_place = !by_sess && !c->nwide;
    am_sig_data *d = am_xcalloc(ncol, sizeof *d);
    am_sig_result **out = am_xcalloc(ncol, sizeof *out);
    size_t *which = am_xcalloc(ncol, sizeof *which);
    am_sig_view **views = am_xcalloc(ncol, sizeof *views);
    size_t nd = 0;
    for (size_t k = 0; k < ncol; k++) {
        if ((cols[k].block && nsess > 1) != by_sess)
            continue;
        if (in_place)
            views[nd] = sig_views(c, &cols[k]);
        else
            sig_units(c, &cols[k], by_sess, stats[k]);
        d[nd] = (am_sig_data){&cols[k].m,
                              c->nsys,
                              by_sess ? nsess : c->nseg,
                              in_place ? NULL : (const double *const *)stats[k],
                              o->cancel,
                              views[nd]};
        out[nd] = res[k];
        which[nd++] = k;
    }
    int r = nd ? am_sig_paired_bs_many(d, nd, bl, p, o->conf, out) : AM_OK;
    for (size_t i = 0; i < nd; i++) {
        rcs[which[i]] = r;
        free(views[i]);
        for (size_t s = 0; s < c->nsys; s++) {
            free(stats[which[i]][s]);
            stats[which[i]][s] = NULL;
        }
    }
    free(views);
    free(which);
    free(out);
    free(d);
}

/* Approximate randomization, column by column (each its own trials, as
 * before: AR's draws are bits, cheap next to its scoring); stops at the
 * first cancelled column. */
static void sig_run_ar(const am_sig_collect *c, const sig_col *cols, size_t ncol, size_t bl,
                       size_t nsess, const am_sig_plan *seg_plan, const am_sig_plan *sess_plan,
                       const am_sig_opts *o, double ***stats, am_sig_result **res, int *rcs)
{
    for (size_t k = 0; k < ncol; k++) {
        int by_sess = cols[k].block && nsess > 1;
        sig_units(c, &cols[k], by_sess, stats[k]);
        am_sig_data d = {
            &cols[k].m, c->nsys, by_sess ? nsess : c->nseg, (const double *const *)stats[k],
            o->cancel,  NULL};
        rcs[k] = am_sig_paired_ar(&d, bl, by_sess ? sess_plan : seg_plan, res[k]);
        for (size_t s = 0; s < c->nsys; s++) {
            free(stats[k][s]);
            stats[k][s] = NULL;
        }
        if (rcs[k] == AM_ERR_CANCELLED)
            for (size_t j = k + 1; j < ncol; j++)
                rcs[j] = AM_ERR_CANCELLED;
        if (rcs[k] == AM_ERR_CANCELLED)
            return;
    }
}

/* Complexity (issue 15): argument checks, the two resampling plans
 * (segments and sessions), then one loop over the metrics, each resampled
 * as its column says; the statistics are in the helpers above. */
json_t *am_sig_run(const am_sig_collect *c, const am_sig_opts *o, const char *const *names,
                   am_buf *err)
{
    size_t bl = 0;
    if (o->baseline) {
        for (bl = 0; bl < c->nsys && strcmp(names[bl], o->baseline); bl++)
            ;
        if (bl == c->nsys) {
            if (err)
                am_buf_printf(err, "--baseline %s is not a system name", o->baseline);
            return NULL;
        }
    }
    if (!c->nseg) {
        if (err)
            am_buf_appends(err, "no segment to resample");
        return NULL;
    }
    int ar = o->test == 2;
    size_t n = o->n ? o->n : ar ? 10000 : 1000;
    size_t nsess = c->nsess ? c->nsess : 1;
    am_sig_plan seg_plan, sess_plan;
    if (am_sig_plan_new(&seg_plan, ar, c->nseg, n, o->seed) != AM_OK) {
        if (err)
            am_buf_appends(err, "too many resamples");
        return NULL;
    }
    memset(&sess_plan, 0, sizeof sess_plan);
    if (nsess > 1 && am_sig_plan_new(&sess_plan, ar, nsess, n, o->seed) != AM_OK) {
        am_sig_plan_free(&seg_plan);
        if (err)
            am_buf_appends(err, "too many resamples");
        return NULL;
    }
    sig_col cols[16 + AM_MAX_K + AM_TERMS_MAX_WINDOWS];
    size_t ncol = sig_cols(c, o->text_metrics, cols);
    json_t *rows = json_array(), *units = json_object();
    for (size_t s = 0; s < c->nsys; s++)
        json_array_append_new(
            rows, json_pack("{sssb}", "system", names[s], "baseline", !o->no_p && s == bl));
    /* stats[k][s]: column k's units of system s; res[k][s] its results */
    double ***stats = am_xcalloc(ncol, sizeof *stats);
    am_sig_result **res = am_xcalloc(ncol, sizeof *res);
    int *rcs = am_xcalloc(ncol, sizeof *rcs);
    for (size_t k = 0; k < ncol; k++) {
        stats[k] = am_xcalloc(c->nsys, sizeof **stats);
        res[k] = am_xcalloc(c->nsys, sizeof **res);
    }
    if (ar)
        sig_run_ar(c, cols, ncol, bl, nsess, &seg_plan, &sess_plan, o, stats, res, rcs);
    else
        for (int by_sess = 0; by_sess < (nsess > 1 ? 2 : 1); by_sess++)
            sig_run_bs(c, cols, ncol, bl, by_sess, by_sess ? &sess_plan : &seg_plan, o, stats, res,
                       rcs);
    for (size_t k = 0; k < ncol; k++) {
        int by_sess = cols[k].block && nsess > 1;
        for (size_t s = 0; s < c->nsys && rcs[k] == AM_OK; s++) {
            json_t *m = json_pack("{soso}", "score", sig_real(res[k][s].score), "p_value",
                                  sig_real(o->no_p ? NAN : res[k][s].p_value));
            if (!ar) {
                json_object_set_new(m, "mean", sig_real(res[k][s].mean));
                json_object_set_new(m, "ci", sig_real(res[k][s].ci));
                json_object_set_new(m, "lo", sig_real(res[k][s].lo));
                json_object_set_new(m, "hi", sig_real(res[k][s].hi));
            }
            json_object_set_new(json_array_get(rows, s), cols[k].name, m);
        }
        json_object_set_new(units, cols[k].name, json_string(by_sess ? "sessions" : "segments"));
        free(res[k]);
        free(stats[k]);
    }
    free(rcs);
    free(res);
    free(stats);
    am_sig_plan_free(&seg_plan);
    am_sig_plan_free(&sess_plan);
    if (o->cancel && o->cancel->hit) {
        json_decref(rows);
        json_decref(units);
        if (err)
            am_buf_appends(err, "cancelled");
        return NULL;
    }
    json_t *out =
        json_pack("{sssosIsIsIsIsoso}", "test", ar ? "paired-ar" : "paired-bs", "baseline",
                  o->no_p ? json_null() : json_string(names[bl]), "n", (json_int_t)n, "seed",
                  (json_int_t)o->seed, "segments", (json_int_t)c->nseg, "sessions",
                  (json_int_t)nsess, "resampling", units, "systems", rows);
    if (!ar)
        json_object_set_new(out, "confidence", json_real(o->conf));
    return out;
}

json_t *am_sig_exposures(am_sig_collect *c, const char *const *names)
{
    json_t *out = json_object();
    if (!c->expo)
        return out;
    am_expo_session(c->expo);
    for (size_t s = 0; s < c->nsys; s++) {
        const am_expo_hist *h = am_expo_get(c->expo, s);
        int last = AM_EXPO_BINS - 1;
        while (last >= 0 && !h->bins[last])
            last--;
        json_t *hist = json_array();
        int64_t learned = 0;
        for (int b = 0; b <= last; b++) {
            json_array_append_new(hist, json_integer((json_int_t)h->bins[b]));
            if (b > 0)
                learned += h->bins[b];
        }
        json_object_set_new(out, names[s],
                            json_pack("{sosIsIsIso}", "histogram", hist, "never",
                                      (json_int_t)h->never, "known", (json_int_t)h->bins[0],
                                      "learned", (json_int_t)learned, "median_exposures_to_learn",
                                      sig_real(am_expo_median(h, 1))));
    }
    return out;
}
