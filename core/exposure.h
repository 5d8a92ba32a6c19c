/*
 * exposure.h — how fast a system learns: for every content word of a
 * session (recall.h's words, after the novel-word filter) the number of
 * exposures — earlier confirmed segments of the session containing the
 * word, i.e. its shot — at the segment where the system first produced it.
 * Words the system never produced in the session are counted apart.
 * Definitions: docs/metrics.md §5 ("How fast does it learn?").
 *
 * Pure: no I/O, no globals. One am_expo per run; not thread-safe.
 */
#ifndef AM_EXPOSURE_H
#define AM_EXPOSURE_H

#include "recall.h"

#define AM_EXPO_BINS 32 /* exposures 0..30; the last bin holds 31 or more */

typedef struct am_expo_hist {
    int64_t bins[AM_EXPO_BINS]; /* words first produced after b exposures */
    int64_t never; /* words seen in a session, never produced by the system there */
} am_expo_hist;

typedef struct am_expo am_expo;

/* A tracker for nsys systems (caller frees with am_expo_free). */
am_expo *am_expo_new(size_t nsys);
void am_expo_free(am_expo *e);
/* Adds one confirmed segment's recall result (borrowed; r->nsys must be
 * the tracker's nsys), in session order. */
void am_expo_add(am_expo *e, const am_recall_seg *r);
/* Ends the current session: its words never produced go to `never`. Call
 * it after the last segment of every session, before reading results. */
void am_expo_session(am_expo *e);
/* System sys's histogram (owned by e). */
const am_expo_hist *am_expo_get(const am_expo *e, size_t sys);
/* Median exposures over the words first produced after at least
 * min_exposures exposures (the mean of the two middle values for an even
 * number, bins ≥ 31 counted as 31); NAN when there is none. Words counted
 * in `never` are not part of it. */
double am_expo_median(const am_expo_hist *h, int min_exposures);

#endif
