/*
 * prom.h — the Prometheus registry of /metrics: request counts by route
 * and status class, latency histograms by route, segments scored and
 * re-scored by edit replays, and
 * gauges filled at scrape time (sessions, database size). No per-session
 * labels. Thread-safe (atomics / a mutex).
 */
#ifndef AM_PROM_H
#define AM_PROM_H

#include "am.h"

#include <stdint.h>

typedef struct am_prom am_prom;

am_prom *am_prom_new(void);
void am_prom_free(am_prom *m);
/* Records one request: route pattern (e.g. "/v1/sessions/{id}"; "other"
 * for unmatched), method, HTTP status and duration in seconds. */
void am_prom_request(am_prom *m, const char *method, const char *route, int status, double seconds);
/* Counts n segments scored (one per system and segment). */
void am_prom_segments(am_prom *m, int64_t n);
/* Counts n segments re-scored by an edit's replay (am_ingest_replace,
 * am_ingest_delete): one per segment, whatever its systems. */
void am_prom_replayed(am_prom *m, int64_t n);
/* Counts one segment POST scored from the session's state in memory,
 * without a read snapshot (server/live/ingest.c, am_post_fast). */
void am_prom_from_memory(am_prom *m);
/* Appends the text exposition format (version 0.0.4) to out, with the
 * gauges given by the caller. */
void am_prom_render(am_prom *m, am_buf *out, int64_t sessions, int64_t db_bytes,
                    double uptime_seconds);

#endif
