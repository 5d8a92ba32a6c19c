/*
 * signif.c — paired bootstrap and approximate randomization over summed
 * sufficient statistics (see signif.h). Operation order follows sacreBLEU
 * 2.6.0 with numpy 1.x so that BLEU, chrF and TER results are equal to its
 * results to the last bit: float32 divisions in resampled chrF and TER,
 * numpy's pairwise summation for means, the mean of the sorted scores.
 */
#include "signif.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SIG_HAVE_AVX2 1
#endif

size_t am_sig_nstats(const am_sig_metric *m)
{
    switch (m->kind) {
    case AM_SIG_BLEU: return 2 + 2 * (size_t)m->bleu.max_order;
    case AM_SIG_CHRF: return 3 * (size_t)(m->chrf.char_order + m->chrf.word_order);
    default: return 2;
    }
}

/* n_match / n as the float32 division numpy does on float32 statistics
 * (f32), or in double. */
static double sig_div(double num, double den, int f32)
{
    if (f32)
        return (double)((float)num / (float)den);
    return num / den;
}

/* CHRF._compute_f_score on stats (borrowed). The formula of chrf.c's
 * score, on purpose not shared: sacreBLEU's significance tests sum the
 * resampled statistics as float32 and divide in float32 (sig_div), which
 * chrf.c, reproducing the corpus score in double, must not. */
static double sig_chrf(const am_chrf_score_opts *o, const double *st, int f32)
{
    const double eps = 1e-16;
    const double factor = (double)(o->beta * o->beta);
    int order = o->char_order + o->word_order;
    double score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (int i = 0; i < order; i++) {
        double n_hyp = st[3 * i], n_ref = st[3 * i + 1], n_match = st[3 * i + 2];
        double prec = n_hyp > 0 ? sig_div(n_match, n_hyp, f32) : eps;
        double rec = n_ref > 0 ? sig_div(n_match, n_ref, f32) : eps;
        double denom = factor * prec + rec;
        score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective_order++;
        }
    }
    if (o->eps_smoothing)
        return 100 * score / order;
    if (effective_order == 0)
        return 0.0;
    avg_prec /= effective_order;
    avg_rec /= effective_order;
    if (avg_prec + avg_rec == 0)
        return 0.0;
    score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

double am_sig_score(const am_sig_metric *m, const double *st, int f32)
{
    switch (m->kind) {
    case AM_SIG_BLEU: {
        /* the counts are exact integers: BLEU is the same in both modes */
        am_bleu_stats b;
        am_bleu_stats_init(&b);
        int mo = m->bleu.max_order;
        b.sys_len = (int64_t)st[0];
        b.ref_len = (int64_t)st[1];
        for (int n = 0; n < mo; n++) {
            b.correct[n] = (int64_t)st[2 + n];
            b.total[n] = (int64_t)st[2 + mo + n];
        }
        am_bleu_result r;
        if (am_bleu_compute(&b, &m->bleu, &r) != AM_OK)
            return NAN;
        return r.score;
    }
    case AM_SIG_CHRF: return sig_chrf(&m->chrf, st, f32);
    case AM_SIG_TER:
        if (st[1] > 0)
            return 100 * sig_div(st[0], st[1], f32);
        return st[0] > 0 ? 100.0 : 0.0;
    case AM_SIG_RATIO: return st[1] > 0 ? st[0] / st[1] : NAN;
    case AM_SIG_ONE_MINUS: return st[1] > 0 ? 1.0 - st[0] / st[1] : NAN;
    }
    return NAN;
}

double am_sig_np_sum(const double *x, size_t n)
{
    if (n < 8) {
        double r = 0.0;
        for (size_t i = 0; i < n; i++)
            r += x[i];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (size_t j = 0; j < 8; j++)
            r[j] = x[j];
        size_t i;
        for (i = 8; i < n - n % 8; i += 8)
            for (size_t j = 0; j < 8; j++)
                r[j] += x[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += x[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return am_sig_np_sum(x, n2) + am_sig_np_sum(x + n2, n - n2);
}

int am_sig_plan_new(am_sig_plan *p, int ar, size_t nunits, size_t n, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    if (!nunits || !n)
        return AM_ERR_INVALID;
    p->ar = ar;
    p->nunits = nunits;
    p->n = n;
    p->seed = seed;
    return AM_OK;
}

void am_sig_plan_free(am_sig_plan *p)
{
    memset(p, 0, sizeof *p);
}

static int sig_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sum of every unit of system s into acc[0..ns). */
static void sig_total(const am_sig_data *d, size_t s, size_t ns, double *acc)
{
    memset(acc, 0, ns * sizeof *acc);
    for (size_t u = 0; u < d->nunits; u++)
        for (size_t j = 0; j < ns; j++)
            acc[j] += d->stats[s][u * ns + j];
}

static int sig_check(const am_sig_data *d, size_t baseline, const am_sig_plan *plan)
{
    if (!d || !d->metric || !plan || (!d->stats && !d->views) || baseline >= d->nsys ||
        plan->nunits != d->nunits || !d->nunits)
        return AM_ERR_INVALID;
    return AM_OK;
}

/* sacreBLEU's estimate_ci on the defined scores v[0..n) (sorted in place):
 * mean of the sorted scores, interval from the conf quantiles. */
static void sig_ci(double *v, size_t n, double conf, am_sig_result *o)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    o->mean = o->ci = o->lo = o->hi = NAN;
    if (!k)
        return;
    qsort(v, k, sizeof *v, sig_cmp);
    size_t lower = (size_t)floor((double)k * (1 - conf) / 2 + 1e-9);
    if (lower >= k)
        lower = k - 1;
    size_t upper = k - lower - 1;
    if (upper < lower)
        upper = lower;
    o->lo = v[lower];
    o->hi = v[upper];
    o->ci = 0.5 * (o->hi - o->lo);
    o->mean = am_sig_np_sum(v, k) / (double)k;
}

/* Statistics exactly representable as float (integers below 2^24): their
 * resampled sums are then exact in double whatever the order of the
 * additions, so a resample can be summed unit by unit in index order,
 * each unit times its count of draws, instead of in the order of the draws
 * (sacreBLEU's order, which the double path keeps). */
#define SIG_FLOAT_EXACT 16777216.0

/* Unit u's value of column v (see am_sig_view). */
static inline double sig_get(const am_sig_view *v, size_t u)
{
    return v->i ? (double)v->i[u * v->stride] : 0.0 + v->f[u * v->stride];
}

/* One metric of a multi-metric bootstrap: its data and where its scores go. */
typedef struct sig_bs_col {
    const am_sig_data *d;
    size_t ns; /* statistics per unit */
    size_t off; /* first column in the packed rows; SIZE_MAX: not packed */
    const am_sig_view *v; /* [nsys][ns]: d->views, or own_v over d->stats */
    am_sig_view *own_v; /* made by sig_views; freed with the column */
    const double *const *st; /* d->stats, or own_st (sig_materialize) */
    double **own_st; /* [nsys]: the views copied into doubles; NULL: none */
    /* from sig_scan's one pass over the statistics: */
    double *tot; /* [nsys][ns]: every unit's sum (sig_total's additions) */
    uint64_t *dhash; /* [nsys][ns]: FNV-1a of each column minus its first value */
    double *first; /* [nsys][ns]: each column's first value (0 out of float range) */
    double maxabs; /* largest |statistic| */
    int packable; /* integers summable exactly as float (SIG_FLOAT_EXACT) */
} sig_bs_col;

/* col->v: d's views, or views over its arrays (ns a unit). */
static void sig_views(const am_sig_data *d, sig_bs_col *col)
{
    col->st = d->stats;
    col->own_st = NULL;
    col->own_v = d->stats ? am_xmalloc((d->nsys * col->ns + 1) * sizeof *col->own_v) : NULL;
    for (size_t i = 0; d->stats && i < d->nsys * col->ns; i++)
        col->own_v[i] = (am_sig_view){NULL, d->stats[i / col->ns] + i % col->ns, col->ns};
    col->v = d->stats ? col->own_v : d->views;
}

/* Rows of doubles for the float path (below) of the metrics given by views (freed by sig_col_free).
 */
static void sig_materialize(sig_bs_col *cols, size_t nd)
{
    for (size_t k = 0; k < nd; k++) {
        if (cols[k].st)
            continue;
        size_t nsys = cols[k].d->nsys, nu = cols[k].d->nunits, ns = cols[k].ns;
        cols[k].own_st = am_xmalloc(nsys * sizeof *cols[k].own_st);
        for (size_t s = 0; s < nsys; s++)
            cols[k].own_st[s] = am_xmalloc((nu * ns + 1) * sizeof(double));
        for (size_t s = 0; s < nsys; s++)
            for (size_t i = 0; i < nu * ns; i++)
                cols[k].own_st[s][i] = sig_get(&cols[k].v[s * ns + i % ns], i / ns);
        cols[k].st = (const double *const *)cols[k].own_st;
    }
}

static void sig_col_free(sig_bs_col *col)
{
    for (size_t s = 0; col->own_st && s < col->d->nsys; s++)
        free(col->own_st[s]);
    free(col->own_st);
    free(col->own_v);
    free(col->tot);
    free(col->dhash);
    free(col->first);
}

/* One pass over every metric's statistics, unit by unit across the metrics (views over rows kept
 * segment by segment are read once, in address order; a pass a metric, strided, was 3× slower):
 * each system's totals (sig_total's additions: the same bits), the FNV-1a hash of each column's
 * differences from its first value (sig_columns), the largest magnitude, and `packable`: every
 * statistic an integer below 2^24 and nunits of them summable exactly (< 2^53). */
static void sig_scan(sig_bs_col *cols, size_t nd)
{
    size_t nu = cols[0].d->nunits, nsys = cols[0].d->nsys;
    for (size_t k = 0; k < nd; k++) {
        size_t n = nsys * cols[k].ns;
        cols[k].tot = am_xcalloc(n ? n : 1, sizeof *cols[k].tot);
        cols[k].dhash = am_xmalloc((n ? n : 1) * sizeof *cols[k].dhash);
        cols[k].first = am_xcalloc(n ? n : 1, sizeof *cols[k].first);
        for (size_t i = 0; i < n; i++) {
            double x = nu ? sig_get(&cols[k].v[i], 0) : 0;
            cols[k].dhash[i] = 1469598103934665603ull;
            cols[k].first[i] = fabs(x) < SIG_FLOAT_EXACT ? x : 0;
        }
        cols[k].maxabs = 0;
        cols[k].packable = 1;
    }
    for (size_t u = 0; u < nu; u++)
        for (size_t k = 0; k < nd; k++) {
            const am_sig_view *v = cols[k].v;
            double *t = cols[k].tot, mx = cols[k].maxabs;
            const double *y0 = cols[k].first;
            uint64_t *dh = cols[k].dhash;
            int ok = cols[k].packable;
            for (size_t i = 0, n = nsys * cols[k].ns; i < n; i++) {
                double x = sig_get(&v[i], u), a = fabs(x);
                t[i] += x;
                /* (int32_t)y: exact below 2^24 (not floor(), a libm call per
                 * value without SSE4.1); y is 0 out of range or NaN */
                int in = a < SIG_FLOAT_EXACT;
                double y = in ? x : 0;
                ok &= in & ((double)(int32_t)y == y);
                mx = a > mx ? a : mx;
                dh[i] = (dh[i] ^ (uint64_t)(int64_t)(y - y0[i])) * 1099511628211ull;
            }
            cols[k].maxabs = mx;
            cols[k].packable = ok;
        }
    for (size_t k = 0; k < nd; k++)
        cols[k].packable &= (double)nu * SIG_FLOAT_EXACT < 9007199254740992.0;
}

/* The packed rows of system s: unit u's statistics of every packed
 * metric, side by side, as float (exact, see SIG_FLOAT_EXACT); caller
 * frees. */
static float *sig_pack(const sig_bs_col *cols, size_t nd, size_t s, size_t nu, size_t width)
{
    float *m = am_xcalloc((nu ? nu : 1) * (width ? width : 1), sizeof *m);
    for (size_t k = 0; k < nd; k++) {
        if (cols[k].off == SIZE_MAX)
            continue;
        const double *st = cols[k].st[s];
        for (size_t u = 0; u < nu; u++)
            for (size_t j = 0; j < cols[k].ns; j++)
                m[u * width + cols[k].off + j] = (float)st[u * cols[k].ns + j];
    }
    return m;
}

/* Sums of one resample of system s's packed rows m (width floats a unit):
 * acc[j] = Σ_u cnt[u] · m[u][j], exact (sig_packable). Eight columns at
 * a time in locals: the sums stay in registers across the units (this
 * loop is most of a bootstrap's time). */
static void sig_sum_packed(const float *m, size_t width, const uint32_t *cnt, size_t nu,
                           double *acc)
{
    size_t j0 = 0;
    for (; j0 + 8 <= width; j0 += 8) {
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
        for (size_t u = 0; u < nu; u++) {
            if (!cnt[u])
                continue;
            const double c = (double)cnt[u];
            const float *r = m + u * width + j0;
            a0 += c * (double)r[0];
            a1 += c * (double)r[1];
            a2 += c * (double)r[2];
            a3 += c * (double)r[3];
            a4 += c * (double)r[4];
            a5 += c * (double)r[5];
            a6 += c * (double)r[6];
            a7 += c * (double)r[7];
        }
        acc[j0] = a0, acc[j0 + 1] = a1, acc[j0 + 2] = a2, acc[j0 + 3] = a3;
        acc[j0 + 4] = a4, acc[j0 + 5] = a5, acc[j0 + 6] = a6, acc[j0 + 7] = a7;
    }
    for (; j0 < width; j0++) {
        double a = 0;
        for (size_t u = 0; u < nu; u++)
            a += (double)cnt[u] * (double)m[u * width + j0];
        acc[j0] = a;
    }
}

/* Sums of one resample (draws ix[0..nu)) of unit rows st (ns doubles a
 * unit) in the order of the draws, as sacreBLEU sums float32 rows. */
static void sig_sum_drawn(const double *st, size_t ns, const int64_t *ix, size_t nu, double *acc)
{
    memset(acc, 0, ns * sizeof *acc);
    for (size_t i = 0; i < nu; i++) {
        const double *row = st + (size_t)ix[i] * ns;
        for (size_t j = 0; j < ns; j++)
            acc[j] += row[j];
    }
}

/* Score, mean, interval and p-value of one metric from its resampled
 * scores (scores[s * n + b]; tmp: n doubles of scratch) into out. */
static void sig_bs_finish(const am_sig_data *d, const double *tot, size_t baseline, size_t n,
                          double conf, const double *scores, double *tmp, am_sig_result *out)
{
    size_t ns = am_sig_nstats(d->metric);
    for (size_t s = 0; s < d->nsys; s++) {
        out[s].score = am_sig_score(d->metric, tot + s * ns, 0);
        out[s].p_value = NAN;
        memcpy(tmp, scores + s * n, n * sizeof *tmp);
        sig_ci(tmp, n, conf, &out[s]);
    }
    const double *bl = scores + baseline * n;
    for (size_t s = 0; s < d->nsys; s++) {
        if (s == baseline)
            continue;
        const double *sy = scores + s * n;
        size_t k = 0;
        for (size_t b = 0; b < n; b++)
            if (!isnan(sy[b]) && !isnan(bl[b]))
                tmp[k++] = fabs(sy[b] - bl[b]);
        double diff = fabs(out[baseline].score - out[s].score);
        if (!k || isnan(diff))
            continue;
        double mean = am_sig_np_sum(tmp, k) / (double)k;
        size_t c = 0;
        for (size_t b = 0; b < k; b++)
            if (tmp[b] - mean > diff)
                c++;
        out[s].p_value = (double)(c + 1) / (double)(k + 1);
    }
}

/* ---- The int16 path: most sessions' statistics are small counts -------
 *
 * A resample's sums are Σ_u cnt[u] · row[u] over the units, for every
 * column. When every packed statistic fits int16 (counts of tokens and
 * n-grams of a segment do), two units' rows are stored interleaved as
 * int16 pairs and a pair of counts multiplies them in one
 * multiply-add of pairs (pmaddwd: 16 products a 256-bit instruction into
 * int32 lanes). Columns equal to an earlier one, or to an earlier one
 * plus a constant, are not stored (sig_columns). Resamples are summed SIG_RB at a time over blocks
 * of SIG_UB units so that a block's rows stay in the cache while each resample of the batch reads
 * them. Sums are exact integers in any order, so the scores are those of the float path to the last
 * bit. */

#define SIG_RB 16 /* resamples summed together */
#define SIG_UB 128 /* units a block: its rows stay in L1 */

typedef struct sig_i16 {
    size_t npair; /* unit pairs: (nunits + 1) / 2 */
    size_t nblk; /* 8-column blocks a pair (of the stored columns) */
    size_t ncol; /* columns (every source): the nkeep stored ones, then the derived ones */
    size_t nkeep;
    int16_t *rows; /* [npair][nblk][16]: column c of unit 2p+h at [p][c/8][2(c%8)+h] */
    size_t *map; /* [Σ_k nsys·ns_k]: (metric, system, statistic) → column */
    size_t *base; /* [nd]: first entry of metric k in map; SIZE_MAX: not packed */
    size_t *obase; /* [ncol − nkeep]: the stored column a derived one follows; SIZE_MAX: none */
    int64_t *off; /* [ncol − nkeep]: its offset from it */
    int64_t maxabs; /* largest |statistic| stored */
} sig_i16;

/* One source column: metric k, system s, statistic j. */
typedef struct sig_src {
    const am_sig_view *v; /* the column (borrowed) */
    uint64_t dhash; /* sig_bs_col's */
    double first;
} sig_src;

/* The columns the kernel sums, of the sources src[0..n): a source whose value in every unit is an
 * earlier one's plus a constant b is not summed — the same statistic (b = 0: the reference side
 * of every system, chrF2 inside chrF2++), chrF's n-gram counts of orders 2..6 (order 1's minus
 * n − 1 when every segment is long enough), BLEU's totals, a constant column: a resample draws
 * nunits units, so its sum is the earlier one's plus b · nunits, the same integer. ok[c]: c has
 * a candidate cand[c], the first source of the same difference hash (stored), or SIZE_MAX when
 * every difference is 0. Sets x->ncol, nkeep, obase, off, map (source → column, the stored
 * first, in source order) and rep (stored column → source). */
static void sig_columns(const sig_src *src, size_t n, const size_t *cand, const unsigned char *ok,
                        sig_i16 *x, size_t *rep)
{
    x->ncol = n;
    x->nkeep = 0;
    for (size_t c = 0; c < n; c++)
        if (!ok[c]) {
            rep[x->nkeep] = c;
            x->map[c] = x->nkeep++;
        }
    free(x->obase);
    free(x->off);
    x->obase = am_xmalloc((n - x->nkeep + 1) * sizeof *x->obase);
    x->off = am_xmalloc((n - x->nkeep + 1) * sizeof *x->off);
    for (size_t c = 0, d = 0; c < n; c++)
        if (ok[c]) {
            /* a candidate is never derived itself: it has no earlier one */
            size_t b = cand[c];
            x->map[c] = x->nkeep + d;
            x->obase[d] = b == SIZE_MAX ? SIZE_MAX : x->map[b];
            x->off[d++] = (int64_t)src[c].first - (b == SIZE_MAX ? 0 : (int64_t)src[b].first);
        }
}

/* The sums of a resample's derived columns from its stored ones (sums[0..ncol), nu draws). */
static void sig_i16_derive(const sig_i16 *x, size_t nu, int64_t *sums)
{
    for (size_t d = 0; d < x->ncol - x->nkeep; d++)
        sums[x->nkeep + d] =
            (x->obase[d] == SIZE_MAX ? 0 : sums[x->obase[d]]) + x->off[d] * (int64_t)nu;
}

/* One pass unit by unit (see sig_scan): x's rows of its stored columns, and each candidate
 * checked exactly (ok[c] cleared when it fails, a hash collision: then 0, made again). */
static int sig_i16_fill(const sig_src *src, size_t n, size_t nu, const size_t *cand,
                        unsigned char *ok, sig_i16 *x, const size_t *rep)
{
    int held = 1;
    x->maxabs = 0;
    x->rows = am_xcalloc((x->npair ? x->npair : 1) * (x->nblk ? x->nblk : 1) * 16, sizeof *x->rows);
    for (size_t u = 0; u < nu; u++) {
        int16_t *r = x->rows + (u / 2) * x->nblk * 16 + u % 2;
        for (size_t c = 0; c < x->nkeep; c++) {
            int64_t v = (int64_t)sig_get(src[rep[c]].v, u);
            x->maxabs = llabs(v) > x->maxabs ? llabs(v) : x->maxabs;
            r[(c / 8) * 16 + 2 * (c % 8)] = (int16_t)v;
        }
        for (size_t c = 0; c < n; c++)
            if (ok[c]) {
                const sig_src *a = &src[c], *b = cand[c] == SIZE_MAX ? NULL : &src[cand[c]];
                ok[c] = sig_get(a->v, u) - a->first == (b ? sig_get(b->v, u) - b->first : 0);
                held &= ok[c];
            }
    }
    return held;
}

/* The int16 rows of the packed metrics of cols (those with off != SIZE_MAX) into x; returns 0,
 * or -1 (nothing allocated) when a statistic does not fit int16. */
static int sig_i16_build(const sig_bs_col *cols, size_t nd, sig_i16 *x)
{
    memset(x, 0, sizeof *x);
    const am_sig_data *d0 = cols[0].d;
    size_t nu = d0->nunits, nsys = d0->nsys, n = 0, i = 0;
    for (size_t k = 0; k < nd; k++)
        if (cols[k].off != SIZE_MAX) {
            if (!(cols[k].maxabs <= 32767.0))
                return -1;
            n += nsys * cols[k].ns;
        }
    x->map = am_xmalloc((n + 1) * sizeof *x->map);
    x->base = am_xmalloc(nd * sizeof *x->base);
    sig_src *src = am_xmalloc((n + 1) * sizeof *src);
    size_t *rep = am_xmalloc((n + 1) * sizeof *rep), *cand = am_xmalloc((n + 1) * sizeof *cand);
    unsigned char *ok = am_xmalloc(n + 1);
    for (size_t k = 0; k < nd; k++) {
        x->base[k] = cols[k].off == SIZE_MAX ? SIZE_MAX : i;
        for (size_t j = 0; j < nsys * cols[k].ns && cols[k].off != SIZE_MAX; j++, i++)
            src[i] = (sig_src){cols[k].v + j, cols[k].dhash[j], cols[k].first[j]};
    }
    uint64_t zero = 1469598103934665603ull; /* the difference hash of a constant column */
    for (size_t u = 0; u < nu; u++)
        zero *= 1099511628211ull;
    for (size_t c = 0; c < n; c++) {
        cand[c] = SIZE_MAX;
        for (size_t e = 0; e < c && cand[c] == SIZE_MAX && src[c].dhash != zero; e++)
            cand[c] = src[e].dhash == src[c].dhash ? e : SIZE_MAX;
        ok[c] = src[c].dhash == zero || cand[c] != SIZE_MAX;
    }
    x->npair = (nu + 1) / 2;
    for (int held = 0; !held;) { /* again only after a hash collision */
        free(x->rows);
        sig_columns(src, n, cand, ok, x, rep);
        x->nblk = (x->nkeep + 7) / 8;
        held = sig_i16_fill(src, n, nu, cand, ok, x, rep);
    }
    free(ok);
    free(cand);
    free(rep);
    free(src);
    return 0;
}

static void sig_i16_free(sig_i16 *x)
{
    free(x->rows);
    free(x->map);
    free(x->base);
    free(x->obase);
    free(x->off);
    memset(x, 0, sizeof *x);
}

/* Column sums of pairs [p0, p1) of x->rows times the count pairs cnt
 * (uint16 a unit, two a pair) added to acc[0..nkeep), in int64. The
 * portable kernel; exact. */
static void sig_i16_block_scalar(const sig_i16 *x, const uint16_t *cnt, size_t p0, size_t p1,
                                 int64_t *acc)
{
    for (size_t p = p0; p < p1; p++) {
        int64_t c0 = cnt[2 * p], c1 = cnt[2 * p + 1];
        if (!c0 && !c1)
            continue;
        const int16_t *r = x->rows + p * x->nblk * 16;
        for (size_t c = 0; c < x->nkeep; c++)
            acc[c] += c0 * r[(c / 8) * 16 + 2 * (c % 8)] + c1 * r[(c / 8) * 16 + 2 * (c % 8) + 1];
    }
}

#ifdef SIG_HAVE_AVX2
/* The same with pmaddwd, four 8-column blocks at a time in registers.
 * Caller guarantees every count < 2^15 and Σ counts · maxabs < 2^31 over
 * the pairs (the int32 lanes cannot overflow). */
__attribute__((target("avx2"))) static void
sig_i16_block_avx2(const sig_i16 *x, const uint16_t *cnt, size_t p0, size_t p1, int64_t *acc)
{
    size_t nblk = x->nblk;
    int32_t lane[32];
    for (size_t b0 = 0; b0 < nblk; b0 += 4) {
        size_t nb = nblk - b0 < 4 ? nblk - b0 : 4;
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t p = p0; p < p1; p++) {
            uint32_t cc; /* a pair without draws (13.5 % of them at one draw a
                          * unit on average) is multiplied by 0 all the same:
                          * a test for it was a mispredicted branch each time */
            memcpy(&cc, cnt + 2 * p, sizeof cc);
            const __m256i cv = _mm256_set1_epi32((int)cc);
            const int16_t *r = x->rows + (p * nblk + b0) * 16;
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_loadu_si256((const void *)r), cv));
            if (nb > 1)
                a1 = _mm256_add_epi32(
                    a1, _mm256_madd_epi16(_mm256_loadu_si256((const void *)(r + 16)), cv));
            if (nb > 2)
                a2 = _mm256_add_epi32(
                    a2, _mm256_madd_epi16(_mm256_loadu_si256((const void *)(r + 32)), cv));
            if (nb > 3)
                a3 = _mm256_add_epi32(
                    a3, _mm256_madd_epi16(_mm256_loadu_si256((const void *)(r + 48)), cv));
        }
        _mm256_storeu_si256((void *)lane, a0);
        _mm256_storeu_si256((void *)(lane + 8), a1);
        _mm256_storeu_si256((void *)(lane + 16), a2);
        _mm256_storeu_si256((void *)(lane + 24), a3);
        for (size_t c = b0 * 8; c < x->nkeep && c < (b0 + nb) * 8; c++)
            acc[c] += lane[c - b0 * 8];
    }
}
#endif

/* Sums of one resample's counts cnt (2·npair of them, the padding 0,
 * each < 2^15) into acc[0..nkeep): block by block, the vector kernel where
 * its int32 lanes cannot overflow (always when nunits · maxabs < 2^31:
 * all, the whole resample's draws times the largest statistic; else
 * checked per block), the portable one elsewhere. */
static void sig_i16_sums(const sig_i16 *x, int avx2, int all, const uint16_t *cnt, size_t p0,
                         size_t p1, int64_t *acc)
{
    int fits = all;
    if (!fits) {
        uint64_t csum = 0;
        for (size_t u = 2 * p0; u < 2 * p1; u++)
            csum += cnt[u];
        fits = (int64_t)csum * x->maxabs < INT32_MAX;
    }
#ifdef SIG_HAVE_AVX2
    if (avx2 && fits) {
        sig_i16_block_avx2(x, cnt, p0, p1, acc);
        return;
    }
#endif
    (void)avx2, (void)fits;
    sig_i16_block_scalar(x, cnt, p0, p1, acc);
}

/* The statistics of the metrics summed in draw order (not packed), every
 * system's side by side: v[u · nf + f]; first[k · nsys + s] is where
 * metric k's system s starts (SIZE_MAX: packed). One pass over a
 * resample's draws then sums all of them, each column still in the order
 * of the draws from 0 (sig_sum_drawn's additions, so the same bits). */
typedef struct sig_frac {
    size_t nf;
    double *v;
    size_t *first;
} sig_frac;

static void sig_frac_build(const sig_bs_col *cols, size_t nd, sig_frac *f)
{
    size_t nsys = cols[0].d->nsys, nu = cols[0].d->nunits;
    f->nf = 0;
    f->first = am_xmalloc(nd * nsys * sizeof *f->first);
    for (size_t k = 0; k < nd; k++)
        for (size_t s = 0; s < nsys; s++) {
            f->first[k * nsys + s] = cols[k].off == SIZE_MAX ? f->nf : SIZE_MAX;
            if (cols[k].off == SIZE_MAX)
                f->nf += cols[k].ns;
        }
    f->nf = (f->nf + 3) / 4 * 4; /* zero columns up to sig_frac_score's blocks of 4 */
    f->v = am_xcalloc((nu ? nu : 1) * (f->nf ? f->nf : 1), sizeof *f->v);
    /* unit by unit across the metrics (see sig_scan); a metric's systems
     * are side by side from first[k · nsys], as are its views */
    for (size_t u = 0; u < nu; u++)
        for (size_t k = 0; k < nd; k++) {
            if (cols[k].off != SIZE_MAX)
                continue;
            double *o = f->v + u * f->nf + f->first[k * nsys];
            for (size_t i = 0; i < nsys * cols[k].ns; i++)
                o[i] = sig_get(&cols[k].v[i], u);
        }
}

/* Scores of resample b of the metrics in f from the draws ix[0..nu)
 * (acc: f->nf doubles of scratch). */
static void sig_frac_score(const sig_bs_col *cols, size_t nd, const sig_frac *f, const int64_t *ix,
                           size_t nu, size_t n, size_t b, double *acc, double **scores)
{
    size_t nsys = cols[0].d->nsys, nf = f->nf;
    if (!nf)
        return;
    /* four columns at a time in locals: four independent chains of
     * additions (a store per addition through acc was the bottleneck) */
    for (size_t j = 0; j < nf; j += 4) {
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (size_t t = 0; t < nu; t++) {
            const double *row = f->v + (size_t)ix[t] * nf + j;
            a0 += row[0];
            a1 += row[1];
            a2 += row[2];
            a3 += row[3];
        }
        acc[j] = a0, acc[j + 1] = a1, acc[j + 2] = a2, acc[j + 3] = a3;
    }
    for (size_t k = 0; k < nd; k++)
        for (size_t s = 0; s < nsys; s++)
            if (f->first[k * nsys + s] != SIZE_MAX)
                scores[k][s * n + b] =
                    am_sig_score(cols[k].d->metric, acc + f->first[k * nsys + s], 1);
}

/* The scores of resamples [b0, b0 + nb) of the packed metrics from their
 * sums (sums[r][ncol]). */
static void sig_i16_score(const sig_bs_col *cols, size_t nd, const sig_i16 *x, size_t n, size_t b0,
                          size_t nb, const int64_t *sums, double *acc, double **scores)
{
    size_t nsys = cols[0].d->nsys;
    for (size_t r = 0; r < nb; r++)
        for (size_t k = 0; k < nd; k++) {
            if (x->base[k] == SIZE_MAX)
                continue;
            for (size_t s = 0; s < nsys; s++) {
                const size_t *m = x->map + x->base[k] + s * cols[k].ns;
                for (size_t j = 0; j < cols[k].ns; j++)
                    acc[j] = (double)sums[r * x->ncol + m[j]];
                scores[k][s * n + b0 + r] = am_sig_score(cols[k].d->metric, acc, 1);
            }
        }
}

/* sig_bs_resample on the int16 rows x: the draws of SIG_RB resamples are
 * made in order (the metrics summed in draw order are scored as each is
 * drawn), then the batch's packed sums block by block. */
static int sig_bs_resample_i16(const sig_bs_col *cols, size_t nd, const am_sig_plan *plan,
                               const sig_i16 *x, size_t maxns, uint64_t work, double **scores)
{
    const am_sig_data *d0 = cols[0].d;
    size_t nu = d0->nunits, n = plan->n, npair = x->npair;
    int avx2 = 0;
#ifdef SIG_HAVE_AVX2
    avx2 = __builtin_cpu_supports("avx2");
#endif
    int all = (int64_t)nu * x->maxabs < INT32_MAX; /* no block check needed */
    sig_frac fr;
    sig_frac_build(cols, nd, &fr);
    uint16_t *cnt = am_xmalloc(SIG_RB * 2 * npair * sizeof *cnt);
    int64_t *sums = am_xmalloc(SIG_RB * (x->ncol ? x->ncol : 1) * sizeof *sums);
    size_t nacc = maxns > fr.nf ? maxns : fr.nf;
    double *acc = am_xcalloc(nacc ? nacc : 1, sizeof *acc);
    int64_t *ix = am_xmalloc(nu * sizeof *ix);
    am_rng r;
    am_rng_seed(&r, plan->seed);
    int rc = AM_OK;
    for (size_t b0 = 0; b0 < n && rc == AM_OK; b0 += SIG_RB) {
        size_t nb = n - b0 < SIG_RB ? n - b0 : SIG_RB;
        memset(sums, 0, nb * x->ncol * sizeof *sums);
        unsigned char wide[SIG_RB] = {0}; /* a count reached 2^15: summed from the draws */
        for (size_t i = 0; i < nb; i++) {
            if (am_cancel_spend(d0->cancel, work)) {
                rc = AM_ERR_CANCELLED;
                break;
            }
            uint16_t *c = cnt + i * 2 * npair;
            /* cleared just before its draws land in it: the batch's 16
             * counters (2 MB at 64,000 units) cleared at once had left
             * this one's lines in L3 or memory by the time it was counted,
             * a miss on the first draw into each line */
            memset(c, 0, 2 * npair * sizeof *c);
            unsigned hi = 0;
            if (fr.nf) { /* the draws themselves are needed */
                am_rng_choice(&r, nu, nu, ix);
                for (size_t t = 0; t < nu; t++)
                    hi |= ++c[ix[t]];
            } else { /* counted as drawn; drawn again below in the rare wide case */
                am_rng again = r;
                hi = am_rng_choice_count(&r, nu, nu, c);
                if (hi & 0x8000u)
                    am_rng_choice(&again, nu, nu, ix);
            }
            /* bit 15: a count reached 2^15 (int16 then cannot hold it) */
            wide[i] = (hi & 0x8000u) != 0;
            if (wide[i]) /* exact int64 sums in the order of the draws */
                for (size_t t = 0; t < nu; t++)
                    for (size_t col = 0; col < x->nkeep; col++) {
                        size_t u = (size_t)ix[t];
                        sums[i * x->ncol + col] +=
                            x->rows[((u / 2) * x->nblk + col / 8) * 16 + 2 * (col % 8) + u % 2];
                    }
            sig_frac_score(cols, nd, &fr, ix, nu, n, b0 + i, acc, scores);
        }
        if (rc != AM_OK)
            break;
        for (size_t p0 = 0; p0 < npair && x->nkeep; p0 += SIG_UB / 2) {
            size_t p1 = npair - p0 < SIG_UB / 2 ? npair : p0 + SIG_UB / 2;
            for (size_t i = 0; i < nb; i++)
                if (!wide[i])
                    sig_i16_sums(x, avx2, all, cnt + i * 2 * npair, p0, p1, sums + i * x->ncol);
        }
        for (size_t i = 0; i < nb; i++)
            sig_i16_derive(x, nu, sums + i * x->ncol);
        sig_i16_score(cols, nd, x, n, b0, nb, sums, acc, scores);
    }
    free(ix);
    free(acc);
    free(sums);
    free(cnt);
    free(fr.v);
    free(fr.first);
    return rc;
}

/* The resampling of am_sig_paired_bs_many: for each resample b the draws
 * once, turned into counts per unit for the packed metrics, then every
 * metric and system; scores[k][s * n + b]. Returns AM_OK or
 * AM_ERR_CANCELLED (cancel: the first metric's). */
static int sig_bs_resample(sig_bs_col *cols, size_t nd, const am_sig_plan *plan, size_t width,
                           double **scores)
{
    const am_sig_data *d0 = cols[0].d;
    size_t nu = d0->nunits, n = plan->n, nsys = d0->nsys, maxns = width;
    uint64_t work = 0;
    for (size_t k = 0; k < nd; k++) {
        work += (uint64_t)nu * nsys * (cols[k].ns + 1);
        if (cols[k].ns > maxns)
            maxns = cols[k].ns;
    }
    sig_i16 x;
    if (width && sig_i16_build(cols, nd, &x) == 0) {
        int rc = sig_bs_resample_i16(cols, nd, plan, &x, maxns, work, scores);
        sig_i16_free(&x);
        return rc;
    }
    sig_materialize(cols, nd);
    float **packed = am_xcalloc(nsys, sizeof *packed);
    for (size_t s = 0; width && s < nsys; s++)
        packed[s] = sig_pack(cols, nd, s, nu, width);
    double *acc = am_xcalloc(maxns ? maxns : 1, sizeof *acc);
    int64_t *ix = am_xmalloc(nu * sizeof *ix);
    uint32_t *cnt = am_xmalloc(nu * sizeof *cnt);
    am_rng r;
    am_rng_seed(&r, plan->seed);
    int rc = AM_OK;
    for (size_t b = 0; b < n; b++) {
        if (am_cancel_spend(d0->cancel, work)) {
            rc = AM_ERR_CANCELLED;
            break;
        }
        /* resample b: the next nunits draws of choice(nunits, (n, nunits)) */
        am_rng_choice(&r, nu, nu, ix);
        if (width) {
            memset(cnt, 0, nu * sizeof *cnt);
            for (size_t i = 0; i < nu; i++)
                cnt[ix[i]]++;
        }
        for (size_t s = 0; s < nsys; s++) {
            if (width)
                sig_sum_packed(packed[s], width, cnt, nu, acc);
            for (size_t k = 0; k < nd; k++) {
                const double *st = acc + cols[k].off;
                if (cols[k].off == SIZE_MAX) {
                    /* the double path below overwrites acc: the packed
                     * metrics of this system were scored first */
                    continue;
                }
                scores[k][s * n + b] = am_sig_score(cols[k].d->metric, st, 1);
            }
            for (size_t k = 0; k < nd; k++) {
                if (cols[k].off != SIZE_MAX)
                    continue;
                sig_sum_drawn(cols[k].st[s], cols[k].ns, ix, nu, acc);
                scores[k][s * n + b] = am_sig_score(cols[k].d->metric, acc, 1);
            }
        }
    }
    free(cnt);
    free(ix);
    free(acc);
    for (size_t s = 0; s < nsys; s++)
        free(packed[s]);
    free(packed);
    return rc;
}

/* Complexity: argument checks, the packing plan, then the resampling
 * (sig_bs_resample) and each metric's summary (sig_bs_finish). */
int am_sig_paired_bs_many(const am_sig_data *d, size_t nd, size_t baseline, const am_sig_plan *plan,
                          double conf, am_sig_result *const *out)
{
    if (!nd || !plan || plan->ar || !(conf > 0 && conf < 1))
        return AM_ERR_INVALID;
    for (size_t k = 0; k < nd; k++)
        if (sig_check(&d[k], baseline, plan) != AM_OK || d[k].nsys != d[0].nsys)
            return AM_ERR_INVALID;
    size_t n = plan->n;
    if (n > SIZE_MAX / sizeof(double) / d[0].nsys)
        return AM_ERR_INVALID;
    sig_bs_col *cols = am_xmalloc(nd * sizeof *cols);
    size_t width = 0;
    for (size_t k = 0; k < nd; k++) {
        cols[k].d = &d[k];
        cols[k].ns = am_sig_nstats(d[k].metric);
        sig_views(&d[k], &cols[k]);
    }
    sig_scan(cols, nd);
    for (size_t k = 0; k < nd; k++) {
        cols[k].off = cols[k].packable ? width : SIZE_MAX;
        if (cols[k].off != SIZE_MAX)
            width += cols[k].ns;
    }
    /* zero columns up to a multiple of 8: sig_sum_packed's blocks, no
     * column summed alone */
    width = (width + 7) / 8 * 8;
    double **scores = am_xmalloc(nd * sizeof *scores);
    for (size_t k = 0; k < nd; k++)
        scores[k] = am_xmalloc(d[0].nsys * n * sizeof **scores);
    int rc = sig_bs_resample(cols, nd, plan, width, scores);
    double *tmp = am_xmalloc(n * sizeof *tmp);
    for (size_t k = 0; k < nd && rc == AM_OK; k++)
        sig_bs_finish(&d[k], cols[k].tot, baseline, n, conf, scores[k], tmp, out[k]);
    free(tmp);
    for (size_t k = 0; k < nd; k++) {
        free(scores[k]);
        sig_col_free(&cols[k]);
    }
    free(scores);
    free(cols);
    return rc;
}

int am_sig_paired_bs(const am_sig_data *d, size_t baseline, const am_sig_plan *plan, double conf,
                     am_sig_result *out)
{
    return am_sig_paired_bs_many(d, 1, baseline, plan, conf, &out);
}

int am_sig_paired_ar(const am_sig_data *d, size_t baseline, const am_sig_plan *plan,
                     am_sig_result *out)
{
    if (sig_check(d, baseline, plan) != AM_OK || !plan->ar || !d->stats)
        return AM_ERR_INVALID;
    size_t ns = am_sig_nstats(d->metric), n = plan->n, nu = d->nunits, nsys = d->nsys;
    double *tb = am_xmalloc(ns * sizeof *tb);
    double *ts = am_xmalloc(nsys * ns * sizeof *ts); /* each system's sums */
    double *a = am_xmalloc(ns * sizeof *a);
    double *bb = am_xmalloc(ns * sizeof *bb);
    double *delta = am_xmalloc(nsys * nu * ns * sizeof *delta); /* baseline − system */
    size_t *count = am_xcalloc(nsys, sizeof *count);
    double *diff = am_xmalloc(nsys * sizeof *diff);
    unsigned char *sw = am_xmalloc(nu);
    sig_total(d, baseline, ns, tb);
    for (size_t s = 0; s < nsys; s++) {
        sig_total(d, s, ns, ts + s * ns);
        out[s].score = am_sig_score(d->metric, ts + s * ns, 0);
        out[s].p_value = out[s].mean = out[s].ci = out[s].lo = out[s].hi = NAN;
        for (size_t i = 0; i < nu * ns; i++)
            delta[s * nu * ns + i] = d->stats[baseline][i] - d->stats[s][i];
    }
    for (size_t s = 0; s < nsys; s++)
        diff[s] = fabs(out[baseline].score - out[s].score);
    am_rng r;
    am_rng_seed(&r, plan->seed);
    uint32_t buf = 0;
    int bcnt = 0;
    int rc = AM_OK;
    for (size_t t = 0; t < n; t++) {
        if (am_cancel_spend(d->cancel, (uint64_t)nu * nsys * (ns + 1))) {
            rc = AM_ERR_CANCELLED;
            break;
        }
        /* trial t: the next nunits bits of integers(2, (n, nunits), bool);
         * shuffled a = Σ system + Σ_swapped (baseline − system),
         * b = (Σ baseline + Σ system) − a */
        am_rng_bools_part(&r, &buf, &bcnt, nu, sw);
        for (size_t s = 0; s < nsys; s++) {
            if (s == baseline)
                continue;
            const double *dl = delta + s * nu * ns, *sum = ts + s * ns;
            memcpy(a, sum, ns * sizeof *a);
            for (size_t u = 0; u < nu; u++)
                if (sw[u])
                    for (size_t j = 0; j < ns; j++)
                        a[j] += dl[u * ns + j];
            for (size_t j = 0; j < ns; j++)
                bb[j] = tb[j] + sum[j] - a[j];
            double x = fabs(am_sig_score(d->metric, a, 0) - am_sig_score(d->metric, bb, 0));
            if (x > diff[s])
                count[s]++;
        }
    }
    for (size_t s = 0; s < nsys && rc == AM_OK; s++)
        if (s != baseline)
            out[s].p_value = (double)(count[s] + 1) / (double)(n + 1);
    free(sw);
    free(diff);
    free(count);
    free(delta);
    free(bb);
    free(a);
    free(ts);
    free(tb);
    return rc;
}
