/*
 * server.h — the running service: one struct am_server passed explicitly to
 * every part (no global mutable state outside main.c).
 */
#ifndef AM_SERVER_H
#define AM_SERVER_H

#include "clock.h"
#include "log.h"
#include "prom.h"
#include "sessions.h"
#include "srvconfig.h"
#include "store.h"

#include <stdatomic.h>

typedef struct am_server {
    am_srv_config cfg; /* effective configuration */
    am_log log; /* leveled logger */
    am_store *store; /* the database */
    am_sessions *sessions; /* per-session runtime cache (scorers, locks) */
    am_prom *prom; /* Prometheus registry of /metrics (prom.h) */
    struct am_wspool *wspool; /* scoring workspaces (ingest.h) */
    struct am_events *events; /* live event streams (events.h) */
    int64_t started_ms; /* Unix ms at start */
    volatile int ready; /* 1 once migrations ran and the socket listens */
    volatile int stopping; /* 1 once SIGTERM/SIGINT arrived */
    atomic_int abandon; /* 1 near the shutdown timeout: computing requests give up (503) */
    struct am_http *http; /* the HTTP front end: MHD daemon and request state (http.c) */
    struct am_shard *shard; /* owner map for 421 answers (shard.h), NULL = owns all */
    struct am_acache *acache; /* GET …/metrics answer bodies (answer_cache.h), NULL = off */
    struct am_cicache *cicache; /* ?ci= per-segment statistics (ci_cache.h), NULL = off */
    int db_fd; /* the database file, flock'ed for the process's life (dbfile.h); -1 = none */
    const char *version; /* program version for adaptmon_build_info (static; NULL: "unknown") */
    char db_shown[640]; /* cfg.db as logs and answers show it: passwords as "***"
                           (am_store_db_shown); set once at start */
} am_server;

/* Starts the HTTP daemon on cfg.listen:cfg.port (http.c). Returns AM_OK or
 * AM_ERR_IO with a message in err. */
int am_http_start(am_server *srv, am_buf *err);
/* Stops accepting, waits for in-flight requests (at most
 * cfg.shutdown_timeout_ms; computing ones are told to give up shortly
 * before, through srv->abandon), stops the daemon (http.c). Returns 0, or 1
 * when requests were still running at the timeout: the daemon was then
 * left running (stopping it would join the busy threads) and the caller
 * must exit the process without waiting for them. */
int am_http_stop(am_server *srv);

/* The TCP port the daemon listens on (the chosen one when cfg.port is 0),
 * or 0 when it is not running (http.c). */
int am_http_port(const am_server *srv);

#endif
