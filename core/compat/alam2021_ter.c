/*
 * alam2021_ter.c — profile `alam2021`, part 2 (alam2021.c names the parts):
 * TERm, the script's greedy shift search.
 */
#include "compat/alam2021_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * 2. TERm (notes-alam2021-terM.md)
 * ====================================================================== */

/* The prefix cache stores, for every prefix x[0..i) ever evaluated, the
 * edit-distance row of its first evaluation ("first writer wins": a row
 * written in term mode is reused by unit-mode calls and vice versa). A
 * row is a function of its parent's row, its token and the mode it was
 * written in, so the trie keeps the token and the mode of every node but
 * the rows of only every TER_CHECKPOINT-th depth; the others are
 * recomputed from the nearest stored ancestor when needed. Same rows,
 * about TER_CHECKPOINT times less memory. */
#define TER_CHECKPOINT 64

static void ter_reset(ter_ctx *c, size_t m, const int *r, const unsigned char *term, int cost)
{
    c->m = m;
    c->r = r;
    c->term = term;
    c->cost = cost;
    c->nnodes = 0;
    if (c->capnodes < 64) {
        c->capnodes = 64;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    if (c->caprows < 4)
        c->caprows = 4;
    c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    c->scratch = am_xrealloc(c->scratch, 2 * (m + 1) * sizeof *c->scratch);
    c->wterm = am_xrealloc(c->wterm, (m + 1) * sizeof *c->wterm);
    c->wunit = am_xrealloc(c->wunit, (m + 1) * sizeof *c->wunit);
    for (size_t j = 0; j <= m; j++) {
        c->wunit[j] = 1;
        c->wterm[j] = (j < m && term && term[j]) ? cost : 1;
    }
    /* root: row_0[j] = j, unit costs even for term words */
    c->tok[0] = -1;
    c->child[0] = -1;
    c->sib[0] = -1;
    c->rowix[0] = 0;
    c->tmode[0] = 0;
    for (size_t j = 0; j <= m; j++)
        c->rows[j] = (int)j;
    c->nrows = 1;
    c->nnodes = 1;
    c->cells = 0;
    c->over = 0;
}

void alam_ter_cleanup(ter_ctx *c)
{
    free(c->tok);
    free(c->child);
    free(c->sib);
    free(c->rowix);
    free(c->tmode);
    free(c->rows);
    free(c->scratch);
    free(c->path);
    free(c->wterm);
    free(c->wunit);
    memset(c, 0, sizeof *c);
}

static int ter_new_node(ter_ctx *c, int parent, int tok, int term_mode)
{
    if (c->nnodes == c->capnodes) {
        c->capnodes *= 2;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    int k = (int)c->nnodes++;
    c->tok[k] = tok;
    c->child[k] = -1;
    c->sib[k] = c->child[parent];
    c->child[parent] = k;
    c->rowix[k] = -1;
    c->tmode[k] = term_mode ? 1 : 0;
    return k;
}

/* Stores a copy of row as node k's row. */
static void ter_store_row(ter_ctx *c, int k, const int *row)
{
    size_t m = c->m;
    if (c->nrows == c->caprows) {
        c->caprows *= 2;
        c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    }
    memcpy(c->rows + c->nrows * (m + 1), row, (m + 1) * sizeof *row);
    c->rowix[k] = (int)c->nrows++;
}

/* row = the row after prev for token xi in the given mode. */
static void ter_row(ter_ctx *c, const int *prev, int *row, int xi, int term_mode)
{
    size_t m = c->m;
    const int *w = term_mode ? c->wterm : c->wunit;
    const int *r = c->r;
    int left = prev[0] + 1;
    c->cells += m + 1;
    row[0] = left;
    for (size_t j = 1; j <= m; j++) {
        int a = prev[j] + w[j];
        int b = left + w[j - 1];
        int d = prev[j - 1] + (xi == r[j - 1] ? 0 : w[j - 1]);
        int v = a < b ? a : b;
        left = v < d ? v : d;
        row[j] = left;
    }
}

/* ED(x, S): S = term positions when term_mode, else unit costs; walks and
 * extends the shared prefix cache (first writer wins). */
static int ter_ed(ter_ctx *c, const int *x, size_t n, int term_mode)
{
    size_t m = c->m;
    if (c->cappath < n + 1) {
        c->cappath = n + 1;
        c->path = am_xrealloc(c->path, c->cappath * sizeof *c->path);
    }
    int node = 0;
    size_t i = 0, ck = 0; /* ck: depth of the deepest stored row on the path */
    c->path[0] = 0;
    while (i < n) {
        int k = c->child[node];
        while (k >= 0 && c->tok[k] != x[i])
            k = c->sib[k];
        if (k < 0)
            break;
        node = k;
        c->path[++i] = k;
        if (c->rowix[k] >= 0)
            ck = i;
    }
    /* the row of the path's end: from the stored ancestor, each node in
     * the mode it was written in */
    const int *prev = c->rows + (size_t)c->rowix[c->path[ck]] * (m + 1);
    int *buf = c->scratch, flip = 0;
    for (size_t d = ck + 1; d <= i; d++) {
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[d - 1], c->tmode[c->path[d]]);
        prev = row;
        flip ^= 1;
    }
    for (; i < n; i++) {
        int k = ter_new_node(c, node, x[i], term_mode);
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[i], term_mode);
        if ((i + 1) % TER_CHECKPOINT == 0)
            ter_store_row(c, k, row);
        prev = row;
        flip ^= 1;
        node = k;
    }
    if (c->cells > AM_ALAM_TER_MAX_CELLS)
        c->over = 1;
    return prev[m];
}

static int lex_cmp(const int *a, const int *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* TERm for interned tokens h[0..n), c->r[0..m). m > 0. */
/* Complexity (issue 15): the greedy shift loop of the reference script's
 * TER (edit distance, best shift, apply, repeat), kept in one piece so it
 * reads against the original. */
static double ter_run(ter_ctx *c, const int *h, size_t n)
{
    size_t m = c->m;
    int *cur = am_xmalloc((n ? n : 1) * sizeof *cur);
    int *best = am_xmalloc((n ? n : 1) * sizeof *best);
    int *cand = am_xmalloc((n ? n : 1) * sizeof *cand);
    int shifts = 0;
    if (n)
        memcpy(cur, h, n * sizeof *cur);
    for (;;) {
        int pre = ter_ed(c, cur, n, 1);
        int have = 0, best_gain = 0;
        for (size_t i1 = 0; i1 < n && !c->over; i1++) {
            for (size_t i2 = 0; i2 < m && !c->over; i2++) {
                if (i1 == i2 || cur[i1] != c->r[i2])
                    continue;
                size_t len = 1;
                while (i1 + len < n && i2 + len < m && cur[i1 + len] == c->r[i2 + len])
                    len++;
                /* remove [i1, i1+len), insert at i2 of the shortened list */
                size_t rest = n - len;
                size_t ins = i2 < rest ? i2 : rest;
                size_t o = 0;
                for (size_t q = 0; q < n && o < ins; q++)
                    if (q < i1 || q >= i1 + len)
                        cand[o++] = cur[q];
                memcpy(cand + o, cur + i1, len * sizeof *cand);
                o += len;
                size_t skipped = 0;
                for (size_t q = 0; q < n; q++) {
                    if (q >= i1 && q < i1 + len)
                        continue;
                    if (skipped++ < ins)
                        continue;
                    cand[o++] = cur[q];
                }
                assert(o == n);
                int gain = pre - ter_ed(c, cand, n, 0);
                if (!have || gain > best_gain ||
                    (gain == best_gain && lex_cmp(cand, best, n) > 0)) {
                    memcpy(best, cand, n * sizeof *best);
                    best_gain = gain;
                    have = 1;
                }
            }
        }
        if (c->over || !have || best_gain <= 0)
            break;
        shifts++;
        int *t = cur;
        cur = best;
        best = t;
    }
    int ed = ter_ed(c, cur, n, 0);
    free(cur);
    free(best);
    free(cand);
    return (double)(shifts + ed) / (double)m;
}

typedef struct tok_ref {
    const char *s;
    size_t idx; /* position in the combined array */
} tok_ref;

static int tok_ref_cmp(const void *a, const void *b)
{
    const tok_ref *x = a, *y = b;
    return strcmp(x->s, y->s);
}

/* Interns hyp and ref tokens to ids ranked by strcmp (= code-point order for
 * valid UTF-8), so that id order is Python's str order. ids[0..nh+nr). */
static void intern(const char *const *hyp, size_t nh, const char *const *ref, size_t nr, int *ids)
{
    size_t n = nh + nr;
    if (n == 0)
        return;
    tok_ref *v = am_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < nh; i++) {
        v[i].s = hyp[i];
        v[i].idx = i;
    }
    for (size_t i = 0; i < nr; i++) {
        v[nh + i].s = ref[i];
        v[nh + i].idx = nh + i;
    }
    qsort(v, n, sizeof *v, tok_ref_cmp);
    int rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(v[i - 1].s, v[i].s) != 0)
            rank++;
        ids[v[i].idx] = rank;
    }
    free(v);
}

int alam_term_ter_ctx(ter_ctx *c, const char *const *hyp, size_t nhyp, const char *const *ref,
                      size_t nref, const unsigned char *is_term, int term_cost, double *out)
{
    if (nref == 0)
        return AM_ERR_RANGE;
    if (term_cost < 1)
        return AM_ERR_INVALID;
    int *ids = am_xmalloc((nhyp + nref) * sizeof *ids);
    intern(hyp, nhyp, ref, nref, ids);
    ter_reset(c, nref, ids + nhyp, is_term, term_cost);
    *out = ter_run(c, ids, nhyp);
    free(ids);
    return c->over ? AM_ERR_RANGE : AM_OK;
}

int am_alam_term_ter(const char *const *hyp, size_t nhyp, const char *const *ref, size_t nref,
                     const unsigned char *is_term, int term_cost, double *out)
{
    ter_ctx c;
    memset(&c, 0, sizeof c);
    int rc = alam_term_ter_ctx(&c, hyp, nhyp, ref, nref, is_term, term_cost, out);
    alam_ter_cleanup(&c);
    return rc;
}
