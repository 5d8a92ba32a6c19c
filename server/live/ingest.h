/*
 * ingest.h — confirmed segments into a session: request validation, the
 * one-transaction post (score, update the vocabulary history and the
 * per-system totals, store the request and result, commit, then answer),
 * idempotent re-posts, batches (in order, a group commit per chunk),
 * replacement (or append: an upsert) and deletion with a replay of the
 * history, per-translator totals, and the next-hypothesis check. Handlers
 * (api_segments.c) only parse and encode.
 */
#ifndef AM_INGEST_H
#define AM_INGEST_H

#include "problem.h"
#include "score.h"
#include "server.h"

#include <jansson.h>

/* A pool of scoring workspaces shared by the handler threads, and the
 * gate that lets at most slots of them score at once (--scoring-threads;
 * 0: the online CPUs). The HTTP threads outnumber the cores (16 by
 * default: a POST's thread also waits for its group commit), and more
 * scorers than cores would only time-share them (issue 27). At a POST
 * load the gate is seldom full (bench/README.md, scoring-gate): it bounds
 * the long scorings (big segments, batches, replays) next to POSTs.
 * am_wspool_new's pool is owned by the caller (am_wspool_free). */
typedef struct am_wspool am_wspool;
am_wspool *am_wspool_new(int slots);
void am_wspool_free(am_wspool *p);
am_score_ws *am_wspool_get(am_wspool *p);
void am_wspool_put(am_wspool *p, am_score_ws *ws);
/* The number of callers that may score at once (>= 1). */
int am_wspool_slots(const am_wspool *p);
/* Waits for a scoring slot; every enter is paired with one leave on the
 * same thread, with nothing between them that waits on another request
 * (no lock, no commit): a holder always gets to its leave. */
void am_wspool_enter(am_wspool *p);
void am_wspool_leave(am_wspool *p);
/* How many enters found every slot taken and waited, since the start
 * (adaptmon_scoring_waits_total: a count that grows with the POSTs says
 * that more requests wanted to score than the slots let in). */
int64_t am_wspool_waits(am_wspool *p);

/* A request's time budget: the CPU time of the calling thread against
 * cfg.request_timeout_ms, and the server's shutdown (srv->abandon). Its
 * cancel member is what the scoring workspaces check (am_cancel). */
typedef struct am_budget {
    am_cancel cancel;
    am_server *srv; /* borrowed */
    int64_t limit_ns; /* thread CPU time at which the budget ends (0: none) */
} am_budget;
/* Starts a budget now for srv's configuration. */
void am_budget_start(am_budget *b, am_server *srv);
/* Non-zero when the budget is spent or the server abandons requests
 * (checks now; sticky like am_cancel_spend). */
int am_budget_over(am_budget *b);
/* Fills *f with the 503 request-timeout of a request abandoned by its time
 * budget, or at the server's shutdown when shutdown is set (then with
 * Retry-After: 1); nothing was stored. Returns AM_ERR_CANCELLED. */
int am_fail_cancelled(am_fail *f, const am_server *srv, int shutdown);

/* A validated segment request. Strings point into the JSON it was parsed
 * from (keep that alive); canonical is owned. */
typedef struct am_seg_req {
    const char *id;
    const char *source; /* NULL when absent */
    const char *translation;
    /* 'references': more references for BLEU, chrF and TER (borrowed) */
    const char *xrefs[AM_SCORE_MAX_REFS - 1];
    size_t nxrefs;
    size_t nsys;
    int single; /* the body gave 'hypothesis' (system "default"), not 'hypotheses' */
    const char *sys[AM_SCORE_MAX_SYSTEMS];
    const char *hyp[AM_SCORE_MAX_SYSTEMS];
    am_terms_annot *annots; /* owned array */
    const char **targets; /* owned storage behind annots[i].targets */
    size_t n_annots;
    const char *translator; /* NULL when absent */
    char *canonical; /* canonical JSON text of the request (owned) */
} am_seg_req;

/* Validates a segment body (id, source, hypothesis|hypotheses, translation,
 * terms, metadata; nothing else). path_id, when not NULL, is the id from
 * the URL (PUT), which the body's id must equal when present. Returns
 * AM_OK or AM_ERR_INVALID with *fail filled. */
int am_seg_req_parse(json_t *body, const char *path_id, const am_srv_config *cfg, am_seg_req *out,
                     am_fail *fail);
void am_seg_req_cleanup(am_seg_req *r);
/* The scoring input of a parsed request (its texts and annotations
 * borrowed; no term-occurrence limit). */
am_seg_input am_seg_req_input(const am_seg_req *r);

/* Applies a session's systems (sess: an am_sess of sessions.h, borrowed)
 * to a parsed request r (modified; names borrowed from sess): a session
 * that declared `systems` takes exactly those in `hypotheses`, or
 * `hypothesis` when it declared one (which then names it); a session with a
 * baseline_system refuses `hypothesis`. With strict 0 (stored requests,
 * valid when posted) only the naming is done. Returns AM_OK or
 * AM_ERR_INVALID with a 422 in *fail. */
struct am_sess;
int am_seg_systems(const struct am_sess *sess, am_seg_req *r, int strict, am_fail *fail);

/* Posts a segment, after checking its systems against the session's (a
 * declared `systems` list must be matched exactly; a session with a
 * baseline_system refuses `hypothesis`: 422). On success *result is the stored result, compact JSON
 * text (owned by the caller, free()), and *status 201 (new) or 200
 * (identical re-post). A different body for a known id fails with 409. */
int am_ingest_post(am_server *srv, const char *session, const am_seg_req *req, char **result,
                   int *status, am_fail *fail);
/* Replaces a known segment (PUT) and replays the session's history so
 * that the totals equal a fresh replay (*status 200); an unknown segment
 * is appended as by am_ingest_post (*status 201: an upsert). *result as
 * for am_ingest_post. peer (borrowed, peer.h; NULL: not watched): the
 * replay stops, writing nothing, once the client has closed its
 * connection, as it does past its budget. */
struct am_peer;
int am_ingest_replace(am_server *srv, const char *session, const am_seg_req *req, char **result,
                      int *status, struct am_peer *peer, am_fail *fail);
/* Deletes segment id (DELETE) and replays what follows: the later
 * segments keep their seqs (its seq stays unused: schema/007), and the
 * totals and their stored results equal a fresh replay of the log without it. *status 204; 404 for
 * an unknown session or segment. peer as for am_ingest_replace. */
int am_ingest_delete(am_server *srv, const char *session, const char *id, int *status,
                     struct am_peer *peer, am_fail *fail);

/* One item of a batch: its HTTP-like status (201 stored, 200 the same
 * body was stored before, else the failure's, 0 not attempted), result
 * (compact JSON text, owned, free()) or failure. */
typedef struct am_batch_item {
    int status;
    char *result;
    am_fail fail;
} am_batch_item;

/* Items per group commit of a batch, at most (batch.c says why; the
 * handler parses a batch body this many items at a time, api_segments.c). */
#define AM_BATCH_CHUNK 100

/* Posts reqs[0..n) in order, as n single POSTs would be (each item's
 * scoring sees the earlier ones; ids idempotent), in group commits of up
 * to AM_BATCH_CHUNK items, and stops at the first item that fails: items
 * (n of them, zeroed by the caller, am_fail_init'ed) get each attempted
 * item's outcome. The CPU budget (request-timeout-ms) is per item.
 * Returns how many items were attempted (the last of them failed when
 * fewer than n, or when items[n-1] did). */
size_t am_ingest_batch(am_server *srv, const char *session, const am_seg_req *reqs, size_t n,
                       am_batch_item *items);

/* Totals of every system of a session as a JSON object {system: totals},
 * plus relative differences to the baseline system when it has totals,
 * computed over the paired segments only (those carrying both systems;
 * docs/metrics.md), with their number in "segments"; "version" and the
 * session's incarnation (*incarnation, may be NULL)
 * are those of the snapshot the totals were read from. */
int am_ingest_metrics(am_server *srv, const char *session, json_t **out, int64_t *incarnation,
                      am_fail *fail);
/* The same answer with "confidence": a paired bootstrap at level conf
 * (0 < conf < 1) over the session's segments (ingest_ci.c), null before
 * the first segment. */
int am_ingest_metrics_ci(am_server *srv, const char *session, double conf, json_t **out,
                         int64_t *incarnation, am_fail *fail);

/* The session's runtime (release with am_sessions_release), checked
 * against the store's current incarnation and glossary version: a cached
 * runtime of a deleted incarnation or an older glossary is dropped and
 * rebuilt. 404 / 409 (background vocabulary deleted) / 500 in *fail. */
struct am_sess;
int am_ingest_acquire(am_server *srv, const char *session, struct am_sess **out, am_fail *fail);

/* A new glossary (JSON text, borrowed; NULL removes it) for incarnation of
 * session, stored under the session's lock like every other write of the
 * session, so a replay in progress (each segment scored with its own
 * glossary version) is not invalidated by it; the runtime is dropped after.
 * *version (may be NULL) the new glossary version. Returns
 * am_store_glossary_put_if's code. */
int am_ingest_glossary_put(am_server *srv, const char *session, int64_t incarnation,
                           const char *glossary_json, int64_t *version);

/* The check endpoint: glossary terms of source and their use in hyps[0]
 * ("" when nsys is 0), with the translator's established choice for each
 * entry, and for each system sys[s] (hyps[s], s < nsys) the adaptation
 * signal (docs/metrics.md §2): its content words with their counts in the
 * session's history and its term use. Reads only. *out: new object. It
 * stops at the request budget (503 request-timeout) and, when peer
 * (borrowed, peer.h; NULL: not watched) says the client has closed its
 * connection, with AM_ERR_CANCELLED and *fail saying so (nobody reads it). */
struct am_peer;
int am_ingest_check(am_server *srv, const char *session, const char *source, const char *const *sys,
                    const char *const *hyps, size_t nsys, struct am_peer *peer, json_t **out,
                    am_fail *fail);

#endif
