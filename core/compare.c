/*
 * compare.c — relative differences of two systems' session totals
 * (compare.h). Every score of am_totals_scores takes part, so a metric
 * added there is compared once it is listed in am_scores_relative.
 */
#include "compare.h"

#include <assert.h>
#include <math.h>

double am_relative_diff(double b, double x)
{
    if (!isfinite(b) || !isfinite(x) || b == 0)
        return NAN;
    return (x - b) / b;
}

/* out = (x − b) / b field by field; b, x and out borrowed. */
static void am_scores_relative(const am_totals_scores *b, const am_totals_scores *x,
                               am_totals_scores *out)
{
    for (size_t i = 0; i <= AM_MAX_K; i++)
        out->r[i] = am_relative_diff(b->r[i], x->r[i]);
    out->r01 = am_relative_diff(b->r01, x->r01);
    out->terms.exact = am_relative_diff(b->terms.exact, x->terms.exact);
    out->terms.exact_or_stem = am_relative_diff(b->terms.exact_or_stem, x->terms.exact_or_stem);
    out->terms.partial = am_relative_diff(b->terms.partial, x->terms.partial);
    out->terms.reorder = am_relative_diff(b->terms.reorder, x->terms.reorder);
    for (size_t w = 0; w < AM_TERMS_MAX_WINDOWS; w++)
        out->terms.window[w] = am_relative_diff(b->terms.window[w], x->terms.window[w]);
    out->ter = am_relative_diff(b->ter, x->ter);
    out->term = am_relative_diff(b->term, x->term);
    out->one_minus_term = am_relative_diff(b->one_minus_term, x->one_minus_term);
    out->bleu = am_relative_diff(b->bleu, x->bleu);
    out->chrf = am_relative_diff(b->chrf, x->chrf);
    out->chrfpp = am_relative_diff(b->chrfpp, x->chrfpp);
}

void am_totals_relative(const am_totals *b, const am_totals *x, am_totals_rel *out)
{
    /* missing totals score as totals of no segment: every score null */
    const am_totals none = {0};
    am_totals_scores bs, xs;
    am_totals_scores_compute(b && x ? b : &none, &bs);
    am_totals_scores_compute(b && x ? x : &none, &xs);
    am_scores_relative(&bs, &xs, &out->rel);
    assert(!b || !x || (b->recall.k <= AM_MAX_K && x->recall.k <= AM_MAX_K));
    out->k = b && x ? (b->recall.k < x->recall.k ? b->recall.k : x->recall.k) : 0;
    for (int i = out->k + 1; i <= AM_MAX_K; i++)
        out->rel.r[i] = NAN;
}
