/*
 * clock.h — the service's clocks, below every other server module (the
 * store stamps rows with it, http.c times requests). The scoring core
 * never reads a clock (core/am.h, am_cancel).
 */
#ifndef AM_CLOCK_H
#define AM_CLOCK_H

#include <stdint.h>

/* Unix time in milliseconds (CLOCK_REALTIME). */
int64_t am_now_ms(void);
/* A monotonic time in nanoseconds (CLOCK_MONOTONIC), for durations. */
int64_t am_mono_ns(void);

#endif
