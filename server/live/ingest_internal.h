/*
 * ingest_internal.h — what the files of the write path share; private to
 * server/live/ (the public API is ingest.h). The path by file:
 *   budget.c   a request's CPU budget, the scoring workspace pool, the
 *              answers of a failed or abandoned write;
 *   seg_req.c  a segment body validated into an am_seg_req;
 *   post.c     one POST: the history counts it is scored with, its plan
 *              (am_apply), the fast path, the group-commit job, the retries;
 *   replay.c   PUT and DELETE: the replay from the last checkpoint, staged
 *              result generations and the switch;
 *   batch.c    a batch, in chunks of one group commit each;
 *   check.c    the totals (metrics) and the next-hypothesis check.
 */
#ifndef AM_INGEST_INTERNAL_H
#define AM_INGEST_INTERNAL_H

#include "ingest.h"
#include "peer.h"
#include "sessions.h"
#include "vocab.h"

/* The history counts a POST or batch is scored with (am_sess_hist_get,
 * borrowed): of the whole history (full), or of the pending words only, to
 * be added to the store's settled counts. */
typedef struct am_hist {
    const am_vocab *counts;
    int full;
} am_hist;

/* Totals entries one segment writes: its systems, and for each system other
 * than the baseline two pair entries, "pair:<system>:baseline" and
 * "pair:<system>:system": the baseline's and the system's totals over the
 * segments that carried both (':' is not allowed in system names); and for
 * a segment with a translator, "tr:<translator>:<system>" for each system:
 * the totals over that translator's segments (docs/metrics.md). */
#define AM_PLAN_MAX (4 * AM_SCORE_MAX_SYSTEMS)

/* Every segment whose seq is a multiple of this leaves a checkpoint: the
 * raw totals of every entry after it (schema/008), where a replay after an
 * edit starts (am_edit_once): it re-scores at most this many segments
 * before the edited one. */
#define AM_CKPT_EVERY 32

/* The default of --settle-every: the POST (or batch item) of every seq
 * that is a multiple of it moves the pending words of the segments since
 * the last settle into vocab and occurrences (am_store_tx_history_settle).
 * A settle costs a fixed part (the leaves of two word-ordered tables it
 * touches, each a WAL frame and a checkpoint copy, most of them touched
 * by any settle) and a part per word, so fewer, larger settles cost less
 * per POST: bench/README.md, "A POST near its floor". Independent of
 * AM_CKPT_EVERY: a replay settles every pending word first (edit_settle). */
#define AM_SETTLE_EVERY 256

/* The writes of one scored segment, computed outside the write
 * transaction (am_apply) and applied inside it (am_plan_exec). */
typedef struct am_plan {
    const char *session;
    int64_t seq;
    am_buf words; /* NUL-separated content words of the translation */
    size_t nwords;
    size_t nsys; /* systems, then pair totals (metrics: paired comparisons) */
    const char *sys[AM_PLAN_MAX];
    char *totals[AM_PLAN_MAX]; /* raw totals JSON after this segment (owned) */
    am_totals *tot; /* the same totals, nsys of them (owned) */
    char *pair_names[AM_PLAN_MAX]; /* owned names behind the pair entries of sys */
    const char **choices; /* (entry source, target) pairs, borrowed from the session */
    size_t nchoices;
    /* the segment row (POST); client_id NULL: no insert */
    const char *client_id, *canonical;
    char hash[17];
    char *result_txt; /* owned */
    char *stats_txt; /* the ?ci= statistics record (ci_stats.h), owned; NULL: none */
    int64_t now;
    /* what the segment was scored with: the job checks that the session
     * is still this incarnation with this glossary version */
    int64_t incarnation, glossary_version;
    am_hist hist; /* the history counts it was scored with (POST; borrowed) */
    int stale; /* set by the job: the session changed (retry) */
    /* a POST scored from the runtime's state alone (am_post_fast): the job
     * also checks that the session is still at version; dup: the segment
     * insert found the id stored; exact: the store is shared with other
     * nodes (PostgreSQL), where am_sess_lock does not keep a rewrite on
     * another node from changing the history the POST was scored with, so
     * the job checks version too (under the session's row lock) */
    int fast, dup, exact;
    int64_t version;
    /* the settle interval (--settle-every; am_plan_init: AM_SETTLE_EVERY) */
    int64_t settle_every;
} am_plan;

/* What a segment is scored with: a compiled scorer, its glossary (entry
 * order, for the translator's choices) and that glossary's version. All
 * borrowed. */
typedef struct am_scoring {
    const am_scorer *sc;
    const am_gloss *gloss;
    int64_t glossary_version;
} am_scoring;

/* A replay's history in memory (am_ingest_replace): occ per word and the
 * running totals per system, as the store would hold them. With base set
 * (a batch, am_ingest_batch), hist and tot hold only what the batch's
 * uncommitted items added on top of the store read through base: occ is
 * the store's plus hist's, and an entry not in tot is read from the store. */
typedef struct am_mem {
    am_vocab *hist; /* word -> occ (owned) */
    size_t n, cap;
    char **sys; /* [cap] owned names (systems, pair and translator entries) */
    am_totals *tot; /* [cap], owned (too large for a thread's stack) */
    am_store_rtx *base; /* borrowed read transaction, or NULL */
    const char *session; /* borrowed, with base */
    am_hist stored; /* with base: the history counts at base (borrowed) */
} am_mem;

/* How often a write is retried when the session changed under it (a
 * concurrent write moved its seq on, it was deleted and re-created, or its
 * glossary changed) before it answers 503. */
#define AM_WRITE_TRIES 32

/* One attempt of a segment write (am_post_once, am_upsert_once, am_delete_once). */
typedef int (*am_write_once_fn)(am_server *srv, const char *session, const am_seg_req *req,
                                char **result, int *status, am_fail *f, int *retry, am_budget *bud);

/* budget.c: a failed write's problem (store rc); the 503 of a request
 * abandoned by its budget. */
void am_fail_write(am_fail *f, int rc, const char *session, const char *what, const char *during,
                   int *retry);
int am_budget_fail(am_fail *f, const am_budget *b);

/* post.c: the history counts, the plan, the scoring of one segment, the
 * session's runtime and snapshot, one POST attempt and the retry loop.
 * Ownership is stated at each definition. */
int am_hist_lookup(am_store_rtx *rtx, const char *session, const am_hist *h, const char *word,
                   int64_t *occ);
int am_hist_ensure(am_sess *sess, am_store_rtx *rtx, const char *session, int64_t version,
                   am_hist *out, am_fail *f);
am_scoring am_scoring_of(const am_sess *sess);
void am_plan_init(am_plan *p, const char *session, int64_t seq);
void am_plan_cleanup(am_plan *p);
int am_plan_ckpt(const am_plan *p);
int am_plan_settles(const am_plan *p);
int am_post_job(am_store_tx *tx, void *ctx);
/* The state check of am_post_job alone (a batch job's, before its own
 * writes): AM_ERR_CONFLICT, with p->stale when the runtime is of another
 * incarnation or glossary, when the session moved on from p's plan. */
int am_post_job_check(am_store_tx *tx, am_plan *p);
void am_mem_init(am_mem *m);
am_totals *am_mem_totals(am_mem *m, const char *system);
int am_apply(am_server *srv, am_sess *sess, const am_scoring *use, am_store_rtx *rtx, am_mem *mem,
             const char *session, int64_t seq, const am_seg_req *req, int64_t now, int cached,
             am_budget *bud, json_t **result, am_plan *plan, am_fail *f);
int am_acquire(am_server *srv, const char *session, am_sess **out, am_fail *f);
int am_snapshot_state(am_server *srv, am_sess *sess, am_store_rtx *rtx, const char *session,
                      const char *what, am_store_state *st, int *retry, am_fail *f);
int am_post_once(am_server *srv, const char *session, const am_seg_req *req_in, char **result,
                 int *status, am_fail *f, int *retry, am_budget *bud);
int am_write_with_retries(am_server *srv, const char *session, const am_seg_req *req, char **result,
                          int *status, am_fail *f, am_write_once_fn once);
int am_write_watched(am_server *srv, const char *session, const am_seg_req *req, char **result,
                     int *status, am_fail *f, am_write_once_fn once, am_peer *peer);

/* replay.c: the start of a session's rewrite (a replay, a rescore) with
 * its rewrite lock and the store view *ws its writes go through (store.h
 * am_store_rewrite_begin); the failure answered in *f. */
int am_rewrite_begin(am_server *srv, const char *session, am_store **ws, am_fail *f, int *retry);

/* replay.c: a plan applied to an in-memory history; its release. */
void am_mem_apply(am_mem *m, const am_plan *p);
void am_mem_cleanup(am_mem *m);

#endif
