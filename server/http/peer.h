/*
 * peer.h — is a request's client still there? A CPU-heavy handler (GET
 * …/metrics?ci=, …) asks between units of work, through its budget's
 * am_cancel, and stops once the client has closed its connection: the
 * answer would go nowhere. The look is a non-blocking peek at the socket
 * (EOF or an error: gone), made at most every AM_PEER_PERIOD_MS, so
 * asking often costs a clock read.
 */
#ifndef AM_PEER_H
#define AM_PEER_H

#include "am.h"
#include "http.h"
#include "prom.h"

#include <stdint.h>

#define AM_PEER_PERIOD_MS 20

typedef struct am_peer {
    int fd; /* the client's socket (borrowed from libmicrohttpd); -1: not watched */
    int64_t next_ns; /* CLOCK_MONOTONIC time of the next look */
    int gone; /* sticky: the client closed its connection */
    am_prom *prom; /* borrowed; counts the abandonment (NULL: not counted) */
    int (*inner_fn)(void *ctx); /* the check am_peer_chain wrapped (may be NULL) */
    void *inner_ctx;
} am_peer;

/* The socket of req's connection, or -1 (no connection: tests, internal
 * requests). Defined in http_req.c, beside the other request accessors. */
int am_req_socket(const am_req *req);

/* Watches socket fd (-1: never gone); prom (borrowed, may be NULL) gets
 * adaptmon_requests_abandoned_total{reason="client_gone"} once when the
 * watch stops work. */
void am_peer_init(am_peer *p, int fd, am_prom *prom);
/* Non-zero once the client has closed its connection (looks at most every
 * AM_PEER_PERIOD_MS; sticky). */
int am_peer_gone(am_peer *p);
/* Makes c (borrowed; p must outlive its use) stop also when the client is
 * gone: c's own check is asked first, then the peer. */
void am_peer_chain(am_peer *p, am_cancel *c);

#endif
