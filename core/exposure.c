/*
 * exposure.c — first production of each content word per system (see
 * exposure.h). Per system a set of the session's words already produced;
 * per session the set of all its words, so that the words never produced
 * are the difference of the two counts when the session ends.
 */
#include "exposure.h"
#include "vocab.h"

#include <math.h>
#include <stdlib.h>

struct am_expo {
    size_t nsys;
    am_vocab *seen; /* every word of the current session */
    am_vocab **produced; /* [nsys]: words the system produced in the session */
    am_expo_hist *hist; /* [nsys] */
};

am_expo *am_expo_new(size_t nsys)
{
    am_expo *e = am_xcalloc(1, sizeof *e);
    e->nsys = nsys;
    e->seen = am_vocab_new();
    e->produced = am_xcalloc(nsys ? nsys : 1, sizeof *e->produced);
    e->hist = am_xcalloc(nsys ? nsys : 1, sizeof *e->hist);
    for (size_t s = 0; s < nsys; s++)
        e->produced[s] = am_vocab_new();
    return e;
}

void am_expo_free(am_expo *e)
{
    if (!e)
        return;
    for (size_t s = 0; s < e->nsys; s++)
        am_vocab_free(e->produced[s]);
    free(e->produced);
    free(e->hist);
    am_vocab_free(e->seen);
    free(e);
}

void am_expo_add(am_expo *e, const am_recall_seg *r)
{
    size_t n = r->words.n;
    for (size_t i = 0; i < n; i++) {
        const char *w = r->words.v[i];
        am_vocab_insert(e->seen, w, 0);
        for (size_t s = 0; s < e->nsys && s < r->nsys; s++) {
            if (!r->hit[s * n + i] || !am_vocab_insert(e->produced[s], w, 0))
                continue;
            int64_t b = r->shot[i] < AM_EXPO_BINS - 1 ? r->shot[i] : AM_EXPO_BINS - 1;
            e->hist[s].bins[b]++;
        }
    }
}

void am_expo_session(am_expo *e)
{
    size_t seen = am_vocab_count(e->seen);
    for (size_t s = 0; s < e->nsys; s++) {
        e->hist[s].never += (int64_t)(seen - am_vocab_count(e->produced[s]));
        am_vocab_clear(e->produced[s]);
    }
    am_vocab_clear(e->seen);
}

const am_expo_hist *am_expo_get(const am_expo *e, size_t sys)
{
    return &e->hist[sys];
}

/* The value of rank k (0-based) among the words of bins >= lo. */
static int expo_rank(const am_expo_hist *h, int lo, int64_t k)
{
    for (int b = lo; b < AM_EXPO_BINS; b++) {
        if (k < h->bins[b])
            return b;
        k -= h->bins[b];
    }
    return AM_EXPO_BINS - 1;
}

double am_expo_median(const am_expo_hist *h, int min_exposures)
{
    int lo = min_exposures < 0 ? 0 : min_exposures;
    int64_t n = 0;
    for (int b = lo; b < AM_EXPO_BINS; b++)
        n += h->bins[b];
    if (n == 0)
        return NAN;
    if (n % 2)
        return expo_rank(h, lo, n / 2);
    return (expo_rank(h, lo, n / 2 - 1) + expo_rank(h, lo, n / 2)) / 2.0;
}
