/*
 * ter.c — TER (sacreBLEU 2.6.0) and term-weighted TERm; see ter.h for the
 * exact semantics. The search mirrors sacreBLEU's lib_ter.py step by step:
 * translation_edit_rate → search(); _shift → one round in search();
 * _find_shifted_pairs → the three nested loops; BeamEditDistance → the
 * banded DP (fwd_rows); trace_to_alignment → trace().
 *
 * Speed: costs are 64-bit integers in units of 1/AM_TER_COST_SCALE (exact
 * for integer costs such as TER's 1 and the default C_term 2). A shift
 * candidate differs from the current hypothesis h only inside a window
 * [p, q) of positions; its edit distance is computed from h's forward rows
 * up to p, the candidate's own rows p+1..q, and h's backward (suffix) rows at
 * q: ED = min_j fwd[q][j] + bwd[q][j]. Both directions run over exactly the
 * cells of sacreBLEU's beam, so this is the same shortest path through the
 * same band as the plain forward computation (exact in integer arithmetic).
 * The tokenizer (am_ter_tokenize*) is in ter_tok.c.
 */
#include "ter.h"
#include "text.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define TER_MAX_TOKENS ((size_t)1 << 24)
#define TER_INF (INT64_MAX / 4)

typedef int64_t cost_t;

/* Trace operations, named as in sacreBLEU (hypothesis → reference view):
 * OP_DEL consumes a hypothesis word (extra word), OP_INS consumes a
 * reference word (missing word). */
enum { OP_UNDEF = 0, OP_NOP, OP_SUB, OP_DEL, OP_INS };

struct am_ter_ws {
    /* token interning */
    const char **slot_str;
    int *slot_id;
    size_t slot_cap;
    /* token ids: original and current hypothesis, candidate, reference */
    int *h0, *h, *cand;
    int *r;
    size_t n, m;
    /* reference positions of each token id, ascending: occ[occ_start[id] ..
     * occ_start[id + 1]) */
    int *occ, *occ_start;
    size_t nids, cap_ids;
    /* per-reference-position costs (scaled) */
    cost_t *unit, *rc;
    /* banded DP layout: cell (i, j) lives at [rowoff[i] + j] for
     * j in [rowlo[i], rowhi[i]); only j in [minj[i], maxj[i]) (the beam) is
     * ever computed, the other stored cells stay TER_INF. */
    size_t *minj, *maxj, *rowlo, *rowhi;
    ptrdiff_t *rowoff;
    size_t cells;
    cost_t *fwd, *bwd, *cfwd; /* h forward, h backward, candidate forward */
    /* rows shared by the candidates that move the block h[sh, sh + len)
     * (shift_cost), one set per len, valid for the round `stamp`; cells
     * outside a row's beam are set to TER_INF as the rows are computed */
    struct ter_memo {
        cost_t *tb, *tf; /* backward rows [tb_lo, sh + len), forward rows (sh, tf_hi] */
        size_t sh, tb_lo, tf_hi;
        unsigned long stamp;
    } memo[AM_TER_MAX_SHIFT_SIZE];
    unsigned long stamp; /* one per search round */
    int plain; /* 1: cost each candidate by cand_cost (tests compare) */
    /* trace and alignment */
    unsigned char *trace;
    long *align;
    int *herr_ps, *rerr_ps; /* prefix sums of the error flags */
    /* capacities */
    size_t cap_n, cap_m, cap_cells, cap_rows;
    am_cancel *cancel; /* borrowed, NULL: never cancelled */
};

am_ter_ws *am_ter_ws_new(void)
{
    return am_xcalloc(1, sizeof(am_ter_ws));
}

void am_ter_ws_free(am_ter_ws *ws)
{
    if (!ws)
        return;
    free(ws->slot_str);
    free(ws->slot_id);
    free(ws->h0);
    free(ws->h);
    free(ws->cand);
    free(ws->r);
    free(ws->occ);
    free(ws->occ_start);
    free(ws->unit);
    free(ws->rc);
    free(ws->minj);
    free(ws->maxj);
    free(ws->rowlo);
    free(ws->rowhi);
    free(ws->rowoff);
    free(ws->fwd);
    free(ws->bwd);
    free(ws->cfwd);
    for (size_t k = 0; k < AM_TER_MAX_SHIFT_SIZE; k++) {
        free(ws->memo[k].tb);
        free(ws->memo[k].tf);
    }
    free(ws->trace);
    free(ws->align);
    free(ws->herr_ps);
    free(ws->rerr_ps);
    free(ws);
}

/* ---- preparation ---------------------------------------------------------- */

/* Maps every token to a small integer id (equal strings, equal ids) into
 * ws->h0 and ws->r. */
static void intern(am_ter_ws *ws, const am_toks *hyp, const am_toks *ref)
{
    size_t total = hyp->n + ref->n;
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    if (cap > ws->slot_cap) {
        free(ws->slot_str);
        free(ws->slot_id);
        ws->slot_str = am_xmalloc(cap * sizeof(*ws->slot_str));
        ws->slot_id = am_xmalloc(cap * sizeof(*ws->slot_id));
        ws->slot_cap = cap;
    }
    memset(ws->slot_str, 0, cap * sizeof(*ws->slot_str));
    int next = 0;
    for (size_t k = 0; k < total; k++) {
        const char *t = k < hyp->n ? hyp->v[k] : ref->v[k - hyp->n];
        size_t slot = (size_t)am_fnv1a(t) & (cap - 1);
        while (ws->slot_str[slot] && strcmp(ws->slot_str[slot], t) != 0)
            slot = (slot + 1) & (cap - 1);
        if (!ws->slot_str[slot]) {
            ws->slot_str[slot] = t;
            ws->slot_id[slot] = next++;
        }
        if (k < hyp->n)
            ws->h0[k] = ws->slot_id[slot];
        else
            ws->r[k - hyp->n] = ws->slot_id[slot];
    }
    size_t nids = (size_t)next;
    if (nids + 1 > ws->cap_ids) {
        ws->occ_start = am_xrealloc(ws->occ_start, (nids + 1) * sizeof(int));
        ws->cap_ids = nids + 1;
    }
    ws->nids = nids;
    memset(ws->occ_start, 0, (nids + 1) * sizeof(int));
    for (size_t j = 0; j < ref->n; j++)
        ws->occ_start[ws->r[j] + 1]++;
    for (size_t id = 0; id < nids; id++)
        ws->occ_start[id + 1] += ws->occ_start[id];
    /* occ_start[id + 1] is now the end of id's block; filling backwards
     * moves it to the start of id's block, then shift the array down */
    for (size_t j = ref->n; j-- > 0;) {
        int id = ws->r[j];
        ws->occ[--ws->occ_start[id + 1]] = (int)j;
    }
    for (size_t id = 0; id < nids; id++)
        ws->occ_start[id] = ws->occ_start[id + 1];
    ws->occ_start[nids] = (int)ref->n;
}

/* Grows the per-pair arrays for n hypothesis and m reference words. */
static void reserve(am_ter_ws *ws, size_t n, size_t m)
{
    if (n + 1 > ws->cap_n) {
        size_t c = ws->cap_n ? ws->cap_n : 32;
        while (c < n + 1)
            c *= 2;
        ws->h0 = am_xrealloc(ws->h0, c * sizeof(int));
        ws->h = am_xrealloc(ws->h, c * sizeof(int));
        ws->cand = am_xrealloc(ws->cand, c * sizeof(int));
        ws->herr_ps = am_xrealloc(ws->herr_ps, c * sizeof(int));
        ws->minj = am_xrealloc(ws->minj, c * sizeof(size_t));
        ws->maxj = am_xrealloc(ws->maxj, c * sizeof(size_t));
        ws->rowlo = am_xrealloc(ws->rowlo, c * sizeof(size_t));
        ws->rowhi = am_xrealloc(ws->rowhi, c * sizeof(size_t));
        ws->rowoff = am_xrealloc(ws->rowoff, c * sizeof(ptrdiff_t));
        ws->cap_n = c;
    }
    if (m + 1 > ws->cap_m) {
        size_t c = ws->cap_m ? ws->cap_m : 32;
        while (c < m + 1)
            c *= 2;
        ws->r = am_xrealloc(ws->r, c * sizeof(int));
        ws->occ = am_xrealloc(ws->occ, c * sizeof(int));
        ws->unit = am_xrealloc(ws->unit, c * sizeof(cost_t));
        ws->rc = am_xrealloc(ws->rc, c * sizeof(cost_t));
        ws->align = am_xrealloc(ws->align, c * sizeof(long));
        ws->rerr_ps = am_xrealloc(ws->rerr_ps, c * sizeof(int));
        ws->cap_m = c;
    }
    if (n + m + 1 > ws->cap_rows) {
        size_t c = ws->cap_rows ? ws->cap_rows : 64;
        while (c < n + m + 1)
            c *= 2;
        ws->trace = am_xrealloc(ws->trace, c);
        ws->cap_rows = c;
    }
}

/* Computes the beam of every row (BeamEditDistance._edit_distance: the
 * cells [minj, maxj) around the pseudo-diagonal floor(i * |ref|/|hyp|); the
 * last row is complete; row 0 is the complete initial row) and the banded
 * storage layout, and sets every stored cell to TER_INF. Each stored row i
 * also covers minj[i]-1 and the cells rows i-1 and i+1 read, so neither DP
 * direction needs bounds checks. */
static void layout(am_ter_ws *ws)
{
    size_t n = ws->n, m = ws->m;
    double ratio = n ? (double)m / (double)n : 1.0;
    double bw_d = AM_TER_BEAM_WIDTH;
    if ((double)AM_TER_BEAM_WIDTH < ratio / 2)
        bw_d = ceil(ratio / 2 + AM_TER_BEAM_WIDTH);
    long bw = (long)bw_d;
    ws->minj[0] = 0;
    ws->maxj[0] = m + 1;
    for (size_t i = 1; i <= n; i++) {
        long pd = (long)floor((double)i * ratio);
        long lo = pd - bw, hi = pd + bw;
        ws->minj[i] = lo > 0 ? (size_t)lo : 0;
        ws->maxj[i] = hi < (long)(m + 1) ? (size_t)(hi > 0 ? hi : 0) : m + 1;
        if (i == n)
            ws->maxj[i] = m + 1;
        if (ws->maxj[i] < ws->minj[i])
            ws->maxj[i] = ws->minj[i];
    }
    size_t cells = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t lo = 0, hi = m + 1;
        if (i > 0) {
            /* forward reads of row i+1 and backward reads of row i-1 */
            lo = ws->minj[i] > 0 ? ws->minj[i] - 1 : 0;
            if (ws->minj[i - 1] < lo)
                lo = ws->minj[i - 1];
            hi = ws->maxj[i];
            if (i < n && ws->maxj[i + 1] > hi)
                hi = ws->maxj[i + 1];
            if (ws->maxj[i - 1] + 1 > hi)
                hi = ws->maxj[i - 1] + 1;
            if (hi > m + 1)
                hi = m + 1;
            if (hi < lo)
                hi = lo;
        }
        ws->rowlo[i] = lo;
        ws->rowhi[i] = hi;
        ws->rowoff[i] = (ptrdiff_t)cells - (ptrdiff_t)lo;
        cells += hi - lo;
    }
    ws->cells = cells;
    if (cells > ws->cap_cells) {
        size_t c = ws->cap_cells ? ws->cap_cells : 256;
        while (c < cells)
            c *= 2;
        ws->fwd = am_xrealloc(ws->fwd, c * sizeof(cost_t));
        ws->bwd = am_xrealloc(ws->bwd, c * sizeof(cost_t));
        ws->cfwd = am_xrealloc(ws->cfwd, c * sizeof(cost_t));
        for (size_t k = 0; k < AM_TER_MAX_SHIFT_SIZE; k++) {
            ws->memo[k].tb = am_xrealloc(ws->memo[k].tb, c * sizeof(cost_t));
            ws->memo[k].tf = am_xrealloc(ws->memo[k].tf, c * sizeof(cost_t));
        }
        ws->cap_cells = c;
    }
    for (size_t k = 0; k < cells; k++) {
        ws->fwd[k] = TER_INF;
        ws->bwd[k] = TER_INF;
        ws->cfwd[k] = TER_INF;
    }
}

/* ---- banded edit distance ------------------------------------------------- */

#define CELL(buf, i, j) ((buf)[ws->rowoff[i] + (ptrdiff_t)(j)])

/* Row 0 of the forward matrix: the running sum of reference costs. */
static void fwd_row0(am_ter_ws *ws, const cost_t *rc)
{
    cost_t *row = ws->fwd + ws->rowoff[0];
    row[0] = 0;
    for (size_t j = 1; j <= ws->m; j++)
        row[j] = row[j - 1] + rc[j - 1];
}

/* Computes forward rows from..to of hypothesis x into dst (ws->fwd or
 * ws->cfwd); row from-1 is read from src. Only the minimum is kept (the
 * trace derives its operations from these values, see trace_op); cells fed
 * only by cells outside the beam then hold TER_INF plus a few costs, which
 * stays above every real cost and far below overflow (costs are capped, see
 * check_args). */
static void fwd_rows_x(am_ter_ws *ws, const int *x, ptrdiff_t off, const cost_t *rc, size_t from,
                       size_t to, const cost_t *src, cost_t *dst)
{
    const int *r = ws->r;
    const cost_t one = AM_TER_COST_SCALE;
    const cost_t *pv = src + ws->rowoff[from - 1];
    for (size_t i = from; i <= to; i++) {
        cost_t *cu = dst + ws->rowoff[i];
        size_t j = ws->minj[i], hi = ws->maxj[i];
        int xw = x[(ptrdiff_t)i - 1 + off];
        if (j == 0 && j < hi) {
            cu[0] = pv[0] + one;
            j = 1;
        }
        cost_t left = j > 0 ? cu[j - 1] : TER_INF;
        for (; j < hi; j++) {
            cost_t best = pv[j - 1] + (xw == r[j - 1] ? 0 : rc[j - 1]);
            cost_t c = pv[j] + one;
            best = c < best ? c : best;
            c = left + rc[j - 1];
            best = c < best ? c : best;
            cu[j] = best;
            left = best;
        }
        pv = cu;
    }
}

/* fwd_rows_x for hypothesis x itself: row i reads token x[i - 1]. */
static void fwd_rows(am_ter_ws *ws, const int *x, const cost_t *rc, size_t from, size_t to,
                     const cost_t *src, cost_t *dst)
{
    fwd_rows_x(ws, x, 0, rc, from, to, src, dst);
}

/* Backward row i (beam cells only) from row i + 1 (nx) into cu, for the
 * hypothesis token hw of row i: the recurrence of bwd_rows and bwd_rows_x.
 * Cells of row i + 1 outside its beam are stored TER_INF. */
static inline void bwd_row(const am_ter_ws *ws, size_t i, int hw, const cost_t *rc,
                           const cost_t *nx, cost_t *cu)
{
    size_t m = ws->m;
    const int *r = ws->r;
    const cost_t one = AM_TER_COST_SCALE;
    size_t lo = ws->minj[i], hi = ws->maxj[i];
    size_t j = hi;
    if (j == m + 1) { /* last column: only the extra-word move */
        j--;
        cu[m] = nx[m] + one;
    }
    cost_t right = hi == m + 1 ? cu[m] : TER_INF; /* (i, hi) is outside the beam */
    while (j-- > lo) {
        cost_t best = nx[j + 1] + (hw == r[j] ? 0 : rc[j]);
        cost_t c = nx[j] + one;
        best = c < best ? c : best;
        c = right + rc[j];
        best = c < best ? c : best;
        cu[j] = best;
        right = best;
    }
}

/* Backward rows top-1 down to lo_row (lo_row < top <= n) of a hypothesis
 * whose row i reads token x[i + off]: row top is read from src, the others
 * from dst, where they are written (beam cells only). The recurrence of
 * bwd_rows for the rows below the last. */
static void bwd_rows_x(am_ter_ws *ws, const int *x, ptrdiff_t off, const cost_t *rc, size_t top,
                       size_t lo_row, const cost_t *src, cost_t *dst)
{
    const cost_t *nx = src + ws->rowoff[top];
    for (size_t i = top; i-- > lo_row;) {
        cost_t *cu = dst + ws->rowoff[i];
        bwd_row(ws, i, x[(ptrdiff_t)i + off], rc, nx, cu);
        nx = cu;
    }
}

/* Sets the stored cells of rows from..to of buf outside their beams to
 * TER_INF (what the DP rows read there). */
static void guard_rows(am_ter_ws *ws, cost_t *buf, size_t from, size_t to)
{
    for (size_t i = from; i <= to; i++) {
        cost_t *row = buf + ws->rowoff[i];
        for (size_t j = ws->rowlo[i]; j < ws->minj[i]; j++)
            row[j] = TER_INF;
        for (size_t j = ws->maxj[i]; j < ws->rowhi[i]; j++)
            row[j] = TER_INF;
    }
}

/* min over the beam of row i of a[i][j] + b[i][j]: the cheapest path
 * through row i, from forward rows a and backward rows b. */
static cost_t through_row(const am_ter_ws *ws, const cost_t *a, const cost_t *b, size_t i)
{
    const cost_t *f = a + ws->rowoff[i], *g = b + ws->rowoff[i];
    cost_t best = TER_INF;
    for (size_t j = ws->minj[i]; j < ws->maxj[i]; j++) {
        cost_t c = f[j] + g[j];
        best = c < best ? c : best;
    }
    return best;
}

/* Backward (suffix) rows of the current hypothesis h: bwd[i][j] = cheapest
 * way from cell (i, j) to (n, m) through beam cells only. Rows to..0. */
static void bwd_rows(am_ter_ws *ws, const int *h, const cost_t *rc, size_t to)
{
    size_t n = ws->n, m = ws->m;
    if (to >= n) {
        cost_t *row = ws->bwd + ws->rowoff[n];
        row[m] = 0;
        for (size_t j = m; j-- > ws->minj[n];)
            row[j] = row[j + 1] + rc[j];
        to = n - 1;
        if (n == 0)
            return;
    }
    for (size_t i = to + 1; i-- > 0;) {
        cost_t *cu = ws->bwd + ws->rowoff[i];
        const cost_t *nx = ws->bwd + ws->rowoff[i + 1];
        bwd_row(ws, i, h[i], rc, nx, cu);
    }
}

/* Edit distance of candidate x, equal to h outside [p, q) (p < q <= n). */
static cost_t cand_cost(am_ter_ws *ws, const int *x, const cost_t *rc, size_t p, size_t q)
{
    fwd_rows(ws, x, rc, p + 1, q, ws->fwd, ws->cfwd);
    const cost_t *f = ws->cfwd + ws->rowoff[q];
    const cost_t *b = ws->bwd + ws->rowoff[q];
    cost_t best = TER_INF;
    for (size_t j = ws->minj[q]; j < ws->maxj[q]; j++) {
        cost_t c = f[j] + b[j];
        best = c < best ? c : best;
    }
    return best;
}

/* Edit distance of the candidate that moves block h[sh, sh + len) to idx
 * (perform_shift; idx != sh, the candidate differs from h). The same value
 * as cand_cost, through another row: the cheapest path through any row is
 * the edit distance (every path crosses every row; exact integers).
 *   idx < sh: candidate h[0, idx) B h[idx, sh) h[sh + len, n), B the
 *   block. Through row idx: h's forward row idx and the candidate's
 *   backward rows, which read h[k] at row k + len for idx <= k < sh (the
 *   same rows for every idx: memo tb, extended downwards as needed) and B
 *   at rows idx .. idx + len - 1 (computed per candidate).
 *   idx > sh: the candidate is h[0, sh) h[sh + len, t) B h[t, n) with
 *   t = idx beyond the block, else t = min(idx + len, n). Through row t:
 *   h's backward row t and the candidate's forward rows, which read
 *   h[k + len] at row k + 1 for sh <= k < t - len (memo tf, extended
 *   upwards) and B at rows t - len + 1 .. t.
 * So a candidate costs len rows plus the shared rows it is the first to
 * need, instead of every row of its window. */
static cost_t shift_cost(am_ter_ws *ws, const cost_t *rc, size_t sh, size_t len, size_t idx)
{
    size_t n = ws->n;
    const int *h = ws->h;
    struct ter_memo *mo = &ws->memo[len - 1];
    if (mo->stamp != ws->stamp || mo->sh != sh) {
        mo->stamp = ws->stamp;
        mo->sh = sh;
        mo->tb_lo = sh + len;
        mo->tf_hi = sh;
    }
    if (idx < sh) {
        size_t top = sh + len, need = idx + len;
        if (need < mo->tb_lo) {
            guard_rows(ws, mo->tb, need, mo->tb_lo - 1);
            bwd_rows_x(ws, h, -(ptrdiff_t)len, rc, mo->tb_lo, need,
                       mo->tb_lo == top ? ws->bwd : mo->tb, mo->tb);
            mo->tb_lo = need;
        }
        bwd_rows_x(ws, h, (ptrdiff_t)sh - (ptrdiff_t)idx, rc, need, idx, mo->tb, ws->cfwd);
        return through_row(ws, ws->fwd, ws->cfwd, idx);
    }
    size_t t = idx > sh + len ? idx : (idx + len < n ? idx + len : n);
    size_t need = t - len; /* > sh: the candidate differs from h */
    if (need > mo->tf_hi) {
        guard_rows(ws, mo->tf, mo->tf_hi + 1, need);
        fwd_rows_x(ws, h, (ptrdiff_t)len, rc, mo->tf_hi + 1, need,
                   mo->tf_hi == sh ? ws->fwd : mo->tf, mo->tf);
        mo->tf_hi = need;
    }
    fwd_rows_x(ws, h, (ptrdiff_t)sh - (ptrdiff_t)need, rc, need + 1, t, mo->tf, ws->cfwd);
    return through_row(ws, ws->cfwd, ws->bwd, t);
}

/* The operation sacreBLEU's trace records at forward cell (i, j), i > 0,
 * j in row i's beam, of hypothesis h under costs rc: the cell starts at
 * TER_INF and an operation replaces the value only when strictly cheaper,
 * in sacreBLEU's order: diagonal (match/substitution), extra hypothesis
 * word (cost 1), missing reference word; column 0 is always the extra
 * word. Derived from the stored rows (cells outside a beam hold TER_INF,
 * cells fed only from outside hold more, and neither can beat a real cost;
 * real costs are the same whether or not operations are recorded), so the
 * rows themselves are computed without recording operations. OP_UNDEF when
 * no real predecessor. */
static unsigned char trace_op(const am_ter_ws *ws, const int *h, const cost_t *rc, size_t i,
                              size_t j)
{
    const cost_t *pv = ws->fwd + ws->rowoff[i - 1], *cu = ws->fwd + ws->rowoff[i];
    if (j == 0)
        return OP_DEL;
    cost_t best = TER_INF, c;
    unsigned char bop = OP_UNDEF;
    int eq = h[i - 1] == ws->r[j - 1];
    c = pv[j - 1] + (eq ? 0 : rc[j - 1]);
    if (best > c) {
        best = c;
        bop = eq ? OP_NOP : OP_SUB;
    }
    c = pv[j] + AM_TER_COST_SCALE;
    if (best > c) {
        best = c;
        bop = OP_DEL;
    }
    c = cu[j - 1] + rc[j - 1];
    if (best > c)
        bop = OP_INS;
    return bop;
}

/* Backtracks the trace of the current hypothesis h (forward rows of ws->fwd
 * under costs rc) and derives sacreBLEU's alignment (trace_to_alignment of
 * the flipped trace): align[k] = hypothesis position aligned to reference
 * word k (-1 before the start), and prefix sums of the hypothesis/reference
 * error flags. Returns AM_OK or AM_ERR_INTERNAL when the trace meets an
 * undefined cell. */
static int trace(am_ter_ws *ws, const int *h, const cost_t *rc)
{
    size_t i = ws->n, j = ws->m, t = 0;
    while (i > 0 || j > 0) {
        unsigned char op;
        if (i == 0)
            op = OP_INS;
        else if (j < ws->minj[i] || j >= ws->maxj[i])
            return AM_ERR_INTERNAL;
        else
            op = trace_op(ws, h, rc, i, j);
        ws->trace[t++] = op;
        if (op == OP_NOP || op == OP_SUB) {
            i--;
            j--;
        } else if (op == OP_INS) {
            j--;
        } else if (op == OP_DEL) {
            i--;
        } else {
            return AM_ERR_INTERNAL;
        }
    }
    long ph = -1, pr = -1;
    ws->herr_ps[0] = 0;
    ws->rerr_ps[0] = 0;
    while (t > 0) {
        unsigned char op = ws->trace[--t];
        if (op == OP_NOP || op == OP_SUB) {
            int e = op == OP_SUB;
            ph++;
            pr++;
            ws->align[pr] = ph;
            ws->herr_ps[ph + 1] = ws->herr_ps[ph] + e;
            ws->rerr_ps[pr + 1] = ws->rerr_ps[pr] + e;
        } else if (op == OP_DEL) { /* flipped: insertion of a hypothesis word */
            ph++;
            ws->herr_ps[ph + 1] = ws->herr_ps[ph] + 1;
        } else { /* OP_INS, flipped: deletion of a reference word */
            pr++;
            ws->align[pr] = ph;
            ws->rerr_ps[pr + 1] = ws->rerr_ps[pr] + 1;
        }
    }
    assert(ph + 1 == (long)ws->n && pr + 1 == (long)ws->m);
    return AM_OK;
}

/* _perform_shift: moves words[start, start+len) to target, into out. */
static void perform_shift(const int *w, size_t n, size_t start, size_t len, size_t target, int *out)
{
    size_t k = 0;
#define CPY(a, b)                                                                                  \
    do {                                                                                           \
        for (size_t q_ = (a); q_ < (b); q_++)                                                      \
            out[k++] = w[q_];                                                                      \
    } while (0)
    if (target < start) {
        CPY(0, target);
        CPY(start, start + len);
        CPY(target, start);
        CPY(start + len, n);
    } else if (target > start + len) {
        CPY(0, start);
        CPY(start + len, target);
        CPY(start, start + len);
        CPY(target, n);
    } else {
        size_t e = len + target < n ? len + target : n;
        CPY(0, start);
        CPY(start + len, e);
        CPY(start, start + len);
        CPY(e, n);
    }
#undef CPY
    assert(k == n);
}

/* First and one-past-last positions where a and b differ; returns 0 when
 * they are identical. */
static int diff_window(const int *a, const int *b, size_t n, size_t from, size_t *p, size_t *q)
{
    size_t lo = from;
    while (lo < n && a[lo] == b[lo])
        lo++;
    if (lo == n)
        return 0;
    size_t hi = n;
    while (hi > lo && a[hi - 1] == b[hi - 1])
        hi--;
    *p = lo;
    *q = hi;
    return 1;
}

void am_ter_ws_set_cancel(am_ter_ws *ws, am_cancel *cancel)
{
    ws->cancel = cancel;
}

void am_ter_ws_set_plain(am_ter_ws *ws, int plain)
{
    ws->plain = plain != 0;
}

/* translation_edit_rate for the prepared pair with reference costs rc.
 * Stores the edits (scaled) in *out. Returns AM_OK or AM_ERR_INTERNAL. */
/* Length (issue 15): the shift-search rounds of sacreBLEU's TER follow the
 * reference algorithm step for step (DP rows, trace, candidate shifts, the
 * best shift applied) with their state in locals across rounds; keeping
 * the loop in one piece keeps that correspondence checkable. */
static int search(am_ter_ws *ws, const cost_t *rc, cost_t *out)
{
    size_t n = ws->n, m = ws->m;
    assert(m > 0);
    int *h = ws->h;
    const int *r = ws->r;
    const cost_t one = AM_TER_COST_SCALE;
    memcpy(h, ws->h0, n * sizeof(int));
    fwd_row0(ws, rc);
    if (n > 0)
        fwd_rows(ws, h, rc, 1, n, ws->fwd, ws->fwd);
    bwd_rows(ws, h, rc, n);
    cost_t shift_costs = 0;
    long checked = 0;
    for (;;) {
        /* one round: a trace plus DP rows over the band */
        ws->stamp++; /* h changed: the shared candidate rows are stale */
        if (am_cancel_spend(ws->cancel, (uint64_t)(n + 1) * (m + 1) / 8 + n + m))
            return AM_ERR_CANCELLED;
        cost_t pre = CELL(ws->fwd, n, m);
        int rv = trace(ws, h, rc);
        if (rv != AM_OK)
            return rv;
        int have = 0;
        cost_t b_gain = 0, b_cost = 0;
        size_t b_len = 0, b_sh = 0, b_idx = 0;
        int stop = 0;
        for (size_t sh = 0; sh < n && !stop; sh++) {
            size_t sr0 = sh > AM_TER_MAX_SHIFT_DIST ? sh - AM_TER_MAX_SHIFT_DIST : 0;
            size_t sr1 = sh + AM_TER_MAX_SHIFT_DIST + 1 < m ? sh + AM_TER_MAX_SHIFT_DIST + 1 : m;
            /* the reference positions holding h[sh], ascending (the pairs
             * whose first words differ yield nothing) */
            const int *o = ws->occ + ws->occ_start[h[sh]];
            const int *oend = ws->occ + ws->occ_start[h[sh] + 1];
            while (o < oend && (size_t)*o < sr0)
                o++;
            for (; o < oend && (size_t)*o < sr1 && !stop; o++) {
                size_t sr = (size_t)*o;
                size_t len = 0;
                cost_t span_cost = one;
                while (h[sh + len] == r[sr + len] && len < AM_TER_MAX_SHIFT_SIZE) {
                    if (rc[sr + len] > span_cost)
                        span_cost = rc[sr + len];
                    len++;
                    /* one (sh, sr, len) candidate from _find_shifted_pairs */
                    if (ws->herr_ps[sh + len] - ws->herr_ps[sh] != 0 &&
                        ws->rerr_ps[sr + len] - ws->rerr_ps[sr] != 0 &&
                        !((long)sh <= ws->align[sr] && ws->align[sr] < (long)(sh + len))) {
                        long prev_idx = -1;
                        for (long off = -1; off < (long)len; off++) {
                            long idx = (long)sr + off == -1 ? 0 : ws->align[(long)sr + off] + 1;
                            if (idx == prev_idx)
                                continue;
                            prev_idx = idx;
                            perform_shift(h, n, sh, len, (size_t)idx, ws->cand);
                            size_t p = 0, q = 0;
                            size_t from = sh < (size_t)idx ? sh : (size_t)idx;
                            cost_t ed = pre;
                            if (diff_window(h, ws->cand, n, from, &p, &q))
                                ed = ws->plain ? cand_cost(ws, ws->cand, rc, p, q)
                                               : shift_cost(ws, rc, sh, len, (size_t)idx);
                            if (am_cancel_spend(ws->cancel, n + 64 * (uint64_t)(q - p + 1)))
                                return AM_ERR_CANCELLED;
                            cost_t gain = pre - ed - (span_cost - one);
                            checked++;
                            /* sacreBLEU's ranking tuple (gain, len, -sh, -idx) */
                            int better;
                            if (!have)
                                better = 1;
                            else if (gain != b_gain)
                                better = gain > b_gain;
                            else if (len != b_len)
                                better = len > b_len;
                            else if (sh != b_sh)
                                better = sh < b_sh;
                            else
                                better = (size_t)idx < b_idx;
                            if (better) {
                                have = 1;
                                b_gain = gain;
                                b_len = len;
                                b_sh = sh;
                                b_idx = (size_t)idx;
                                b_cost = span_cost;
                            }
                        }
                        if (checked >= AM_TER_MAX_SHIFT_CANDIDATES) {
                            stop = 1;
                            break;
                        }
                    }
                    if (n == sh + len || m == sr + len)
                        break;
                }
            }
        }
        /* sacreBLEU stops without applying the round's best shift once the
         * candidate limit is reached */
        if (checked >= AM_TER_MAX_SHIFT_CANDIDATES || !have || b_gain <= 0) {
            *out = shift_costs + pre;
            return AM_OK;
        }
        shift_costs += b_cost;
        perform_shift(h, n, b_sh, b_len, b_idx, ws->cand);
        size_t p, q;
        int changed = diff_window(h, ws->cand, n, 0, &p, &q);
        assert(changed);
        (void)changed;
        memcpy(h, ws->cand, n * sizeof(int));
        fwd_rows(ws, h, rc, p + 1, n, ws->fwd, ws->fwd);
        bwd_rows(ws, h, rc, q - 1);
    }
}

/* ---- public entry points -------------------------------------------------- */

/* Validates the arguments; *all_unit tells whether ref_cost is NULL or all 1. */
static int check_args(const am_toks *hyp, const am_toks *ref, const double *ref_cost, int *all_unit)
{
    if (!hyp || !ref)
        return AM_ERR_INVALID;
    if (hyp->n > TER_MAX_TOKENS || ref->n > TER_MAX_TOKENS)
        return AM_ERR_RANGE;
    *all_unit = 1;
    if (ref_cost) {
        for (size_t j = 0; j < ref->n; j++) {
            if (!(ref_cost[j] >= 1.0 && ref_cost[j] <= AM_TER_MAX_COST))
                return AM_ERR_INVALID;
            if (ref_cost[j] != 1.0)
                *all_unit = 0;
        }
    }
    return AM_OK;
}

int am_ter_pair(am_ter_ws *ws, const am_toks *hyp, const am_toks *ref, const double *ref_cost,
                double *ter_edits, double *term_edits)
{
    int all_unit;
    int rv = check_args(hyp, ref, ref_cost, &all_unit);
    if (rv != AM_OK)
        return rv;
    if (ref->n == 0) { /* sacreBLEU: every hypothesis word is an edit, length 0 */
        if (ter_edits)
            *ter_edits = (double)hyp->n;
        if (term_edits)
            *term_edits = (double)hyp->n;
        return AM_OK;
    }
    am_ter_ws *own = NULL;
    if (!ws)
        ws = own = am_ter_ws_new();
    ws->n = hyp->n;
    ws->m = ref->n;
    reserve(ws, ws->n, ws->m);
    intern(ws, hyp, ref);
    layout(ws);
    for (size_t j = 0; j < ws->m; j++)
        ws->unit[j] = AM_TER_COST_SCALE;
    cost_t ter = 0, term = 0;
    rv = search(ws, ws->unit, &ter);
    if (rv == AM_OK) {
        term = ter;
        if (!all_unit && term_edits) {
            for (size_t j = 0; j < ws->m; j++)
                ws->rc[j] = (cost_t)llround(ref_cost[j] * AM_TER_COST_SCALE);
            rv = search(ws, ws->rc, &term);
            if (term < ter) /* guard: TERm never below TER (see ter.h) */
                term = ter;
        }
    }
    am_ter_ws_free(own);
    if (rv != AM_OK)
        return rv;
    if (ter_edits)
        *ter_edits = (double)ter / AM_TER_COST_SCALE;
    if (term_edits)
        *term_edits = (double)term / AM_TER_COST_SCALE;
    return AM_OK;
}

int am_ter_edits(am_ter_ws *ws, const am_toks *hyp, const am_toks *ref, const double *ref_cost,
                 double *edits)
{
    if (!edits)
        return AM_ERR_INVALID;
    return am_ter_pair(ws, hyp, ref, ref_cost, NULL, edits);
}

int am_ter_multi(am_ter_ws *ws, const am_toks *hyp, const am_toks *const *refs, size_t nrefs,
                 double *edits, double *ref_len)
{
    if (!hyp || !refs || nrefs == 0 || !edits || !ref_len)
        return AM_ERR_INVALID;
    for (size_t k = 0; k < nrefs; k++)
        if (!refs[k])
            return AM_ERR_INVALID;
    am_ter_ws *own = NULL;
    if (!ws)
        ws = own = am_ter_ws_new();
    /* TER._compute_segment_statistics: best_num_edits starts at 1e16 and
     * a strictly smaller count replaces it; the lengths are summed */
    double best = 1e16, lens = 0.0;
    int rv = AM_OK;
    for (size_t k = 0; k < nrefs && rv == AM_OK; k++) {
        double e = 0.0;
        rv = am_ter_pair(ws, hyp, refs[k], NULL, &e, NULL);
        lens += (double)refs[k]->n;
        if (rv == AM_OK && e < best)
            best = e;
    }
    am_ter_ws_free(own);
    if (rv != AM_OK)
        return rv;
    *edits = best;
    *ref_len = lens / (double)nrefs;
    return AM_OK;
}

int am_ter_segment(am_ter_ws *ws, const am_ter_opts *o, const char *hyp, const char *const *refs,
                   size_t nrefs, double *edits, double *ref_len)
{
    if (!hyp || !refs || nrefs == 0 || nrefs > TER_MAX_TOKENS)
        return AM_ERR_INVALID;
    am_toks h;
    am_toks_init(&h);
    am_toks *r = am_xcalloc(nrefs, sizeof *r);
    const am_toks **rp = am_xcalloc(nrefs, sizeof *rp);
    int rv = am_ter_tokenize_opts(hyp, o, &h, NULL);
    for (size_t k = 0; k < nrefs; k++) {
        am_toks_init(&r[k]);
        rp[k] = &r[k];
        if (rv == AM_OK)
            rv = refs[k] ? am_ter_tokenize_opts(refs[k], o, &r[k], NULL) : AM_ERR_INVALID;
    }
    if (rv == AM_OK)
        rv = am_ter_multi(ws, &h, rp, nrefs, edits, ref_len);
    for (size_t k = 0; k < nrefs; k++)
        am_toks_cleanup(&r[k]);
    free(r);
    free((void *)rp);
    am_toks_cleanup(&h);
    return rv;
}

double am_ter_score(double edits, double ref_len)
{
    if (ref_len > 0)
        return edits / ref_len;
    return edits > 0 ? 1.0 : 0.0;
}

void am_ter_stats_init(am_ter_stats *s)
{
    s->edits = 0.0;
    s->ref_len = 0.0;
    s->n = 0;
}

void am_ter_stats_add(am_ter_stats *s, double edits, double ref_len)
{
    s->edits += edits;
    s->ref_len += ref_len;
    s->n++;
}

void am_ter_stats_merge(am_ter_stats *into, const am_ter_stats *from)
{
    into->edits += from->edits;
    into->ref_len += from->ref_len;
    into->n += from->n;
}

double am_ter_stats_score(const am_ter_stats *s)
{
    return am_ter_score(s->edits, s->ref_len);
}
