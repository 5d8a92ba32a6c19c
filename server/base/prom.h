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
/* ---- connections and event streams (issue 25) ------------------------------
 * Counted by http.c and live/events.c, rendered by am_prom_render:
 *   adaptmon_connections_open                      gauge
 *   adaptmon_reserved_connection_refusals_total    counter: requests other
 *       than /healthz, /readyz, /metrics refused on a reserved connection
 *   adaptmon_event_streams_open                    gauge
 *   adaptmon_event_streams_refused_total{limit}    counter: server, client,
 *       session (the cap that refused a GET …/events)
 *   adaptmon_event_streams_ended_total{reason}     counter: max_age (ended
 *       with a reconnect event), backlog (dropped: fell too far behind)
 * Every function is NULL-safe (m NULL: nothing counted). */
void am_prom_connections(am_prom *m, int delta);
void am_prom_reserved_refused(am_prom *m);
void am_prom_stream_open(am_prom *m, int delta);
/* limit: "server", "client" or "session"; reason: "max_age" or "backlog"
 * (other values are ignored). */
void am_prom_stream_refused(am_prom *m, const char *limit);
void am_prom_stream_ended(am_prom *m, const char *reason);
/* A CPU-heavy request stopped before its answer; reason "client_gone"
 * (peer.c; other values are ignored). */
void am_prom_abandoned(am_prom *m, const char *reason);

/* Appends adaptmon_build_info{version,sqlite_version} 1 and the standard
 * process metrics read from /proc (process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_start_time_seconds, process_open_fds, process_max_fds; one that
 * cannot be read is left out). Both strings are borrowed. */
void am_prom_render_process(am_buf *out, const char *version, const char *sqlite_version);
/* Appends the text exposition format (version 0.0.4) to out, with the
 * gauges given by the caller. */
void am_prom_render(am_prom *m, am_buf *out, int64_t sessions, int64_t db_bytes,
                    double uptime_seconds);

#endif
