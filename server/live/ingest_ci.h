/*
 * ingest_ci.h — GET …/metrics?ci=LEVEL with a watch on the client
 * (ingest_ci.c; am_ingest_metrics_ci of ingest.h is this without one).
 */
#ifndef AM_INGEST_CI_H
#define AM_INGEST_CI_H

#include "ingest.h"
#include "peer.h"

/* am_ingest_metrics_ci, stopping also when peer (borrowed; NULL: not
 * watched) says the client has gone: then AM_ERR_CANCELLED with *f the
 * 503 of a request over its budget (nobody reads it). */
int am_ingest_metrics_ci_peer(am_server *srv, const char *session, double conf, json_t **out,
                              int64_t *incarnation, am_peer *peer, am_fail *f);

#endif
