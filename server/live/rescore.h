/*
 * rescore.h — POST /v1/sessions/{id}/rescore: every segment of a session
 * scored again, in seq order, with the session's current glossary and
 * options, as one atomic step.
 *
 * The scoring runs from a read snapshot into memory (the vocabulary
 * history and the per-system totals are rebuilt in memory), outside the
 * store's write lock. The new results, each with its ?ci= record, are
 * staged as a new result generation (segment_results, schema/006) and the
 * new checkpoints with them, in short write transactions, so other
 * sessions' writes go on; nobody reads them yet. Then one short
 * transaction checks that the session is still the incarnation, glossary
 * version and version the snapshot was read at and switches them in with
 * the totals and term choices, every segment counted as scored with the
 * current glossary version (sessions.gv_floor, schema/015); the history's
 * rows are written there only when the recomputed history differs from
 * the stored one (the content words do not depend on the glossary), and
 * then only the difference. No
 * segment row is copied or deleted. Readers see the old state until that
 * commit and all of the new one after it; a crash before it leaves the
 * staged rows invisible (a generation above the session's), deleted by
 * the next rewrite of the session.
 *
 * Concurrency: the rescore holds the session's lock (sessions.h) from the
 * snapshot to the commit, so POSTs and PUTs of the same session queue
 * behind it and are scored after it, on top of the rescored history. A
 * write that still got in (a glossary PUT, a writer through another
 * runtime of the session) changes the version: the commit notices, rolls
 * back and the rescore starts again (at most AM_RESCORE_TRIES times, then
 * 503). Nothing is lost or counted twice.
 */
#ifndef AM_RESCORE_H
#define AM_RESCORE_H

#include "peer.h"
#include "http.h"
#include "ingest.h"

#define AM_RESCORE_TRIES 8

/* Rescores session. On success *summary (new reference, caller releases)
 * is {session, segments, glossary_version, version, incarnation, attempts,
 * metrics (link), systems: {system: totals}}. Errors in *fail: 404 (no
 * session), 409 (background vocabulary deleted), 503 (kept changing, or
 * the server stops, or the client closed its connection while the
 * segments were scored: peer, borrowed, NULL = not watched; nothing is
 * changed then), 500. */
int am_ingest_rescore(am_server *srv, const char *session, am_peer *peer, json_t **summary,
                      am_fail *fail);

/* The handler of POST /v1/sessions/{id}/rescore. */
void am_api_rescore(am_req *req, am_resp *resp);

#endif
