/*
 * store/segments.c — segments: find, insert, update, delete, walks and
 * paged reads; results and the staged results of replays (schema/006).
 */
#include "store_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int am_store_tx_segment_find(am_store_rtx *rtx, const char *session, const char *client_id,
                             int64_t *seq, char **body_hash, char **result_json)
{
    if (body_hash)
        *body_hash = NULL;
    if (result_json)
        *result_json = NULL;
    if (!client_id)
        return AM_ERR_INVALID;
    am_store_tx *tx = &rtx->t;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = store_get(tx->st, tx->c, AM_S_SEG_FIND,
                       COLS(col_int(seq), col_str(body_hash), col_str(result_json)), "it", sid,
                       client_id);
    return rc;
}

int am_store_tx_segment_insert(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json, int64_t now_ms)
{
    return am_store_tx_segment_insert_gv(tx, session, seq, client_id, body_hash, request_json,
                                         result_json, 0, NULL, 0, now_ms);
}

int am_store_tx_segment_insert_gv(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, const char *words, size_t nwords,
                                  int64_t now_ms)
{
    return am_store_tx_segment_insert_st(tx, session, seq, client_id, body_hash, request_json,
                                         result_json, glossary_version, words, nwords, NULL,
                                         now_ms);
}

int am_store_tx_segment_append(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json,
                               int64_t glossary_version, const char *words, size_t nwords,
                               const char *stats, int64_t now_ms)
{
    if (seq < 1 || !body_hash || !request_json || !result_json || (!words && nwords))
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    am_buf arr; /* the pending words (schema/010) */
    am_buf_init(&arr);
    if (words)
        store_words_json(&arr, words, nwords);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_INSERT, "iittttiitt", sid, seq, client_id, body_hash,
                     request_json, result_json, now_ms, glossary_version,
                     words ? am_buf_str(&arr) : NULL, stats);
    am_buf_cleanup(&arr);
    return rc;
}

int am_store_tx_session_touch(am_store_tx *tx, const char *session, int64_t seq, int64_t n,
                              int64_t now_ms)
{
    if (seq < 1 || n < 1)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH_N, "iiii", sid, seq, now_ms, n);
    return rc;
}

int am_store_tx_segment_insert_st(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, const char *words, size_t nwords,
                                  const char *stats, int64_t now_ms)
{
    int rc =
        am_store_tx_segment_append(tx, session, seq, client_id, body_hash, request_json,
                                   result_json, glossary_version, words, nwords, stats, now_ms);
    int64_t sid;
    if (rc == AM_OK)
        rc = am_tx_sid(tx, session, &sid); /* cached by the append */
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, seq, now_ms);
    return rc;
}

int am_store_tx_segments_known(am_store_rtx *rtx, const char *session, const char *ids, size_t n,
                               am_store_count_fn fn, void *ctx)
{
    if (!ids && n)
        return AM_ERR_INVALID;
    am_store_tx *tx = &rtx->t;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc != AM_OK || n == 0)
        return rc;
    am_buf arr; /* the ids as a JSON array: one parameter for all */
    am_buf_init(&arr);
    store_words_json(&arr, ids, n);
    store_counts p = {fn, ctx};
    rc =
        store_each(tx->st, tx->c, AM_S_SEG_KNOWN, store_count_row, &p, "it", sid, am_buf_str(&arr));
    am_buf_cleanup(&arr);
    return rc;
}

int am_store_tx_segment_update(am_store_tx *tx, const char *session, int64_t seq,
                               const char *body_hash, const char *request_json,
                               const char *result_json, int64_t now_ms)
{
    return am_store_tx_segment_update_st(tx, session, seq, body_hash, request_json, result_json,
                                         NULL, now_ms);
}

int am_store_tx_segment_update_st(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *body_hash, const char *request_json,
                                  const char *result_json, const char *stats, int64_t now_ms)
{
    if (!result_json || (!body_hash) != (!request_json))
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_UPDATE, "iitttit", sid, seq, body_hash, request_json,
                     result_json, now_ms, stats);
    if (rc == AM_OK && am_changes(tx->c) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, (int64_t)0, now_ms);
    return rc;
}

/* Adapts an am_store_segment_fn to the walk with glossary versions. */
typedef struct walk_plain {
    am_store_segment_fn fn;
    void *ctx;
} walk_plain;

static int walk_plain_cb(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                         int64_t glossary_version)
{
    (void)glossary_version;
    walk_plain *w = ctx;
    return w->fn(w->ctx, seq, client_id, request_json);
}

int am_store_tx_segments_walk(am_store_rtx *rtx, const char *session, int64_t from,
                              am_store_segment_fn fn, void *ctx)
{
    walk_plain w = {fn, ctx};
    return am_store_tx_segments_walk_gv(rtx, session, from, walk_plain_cb, &w);
}

/* A SEG_WALK row to the walk's callback (ctx: a walk_gv), its glossary
 * version raised to the session's rescore floor (schema/015: the rows a
 * rescore scored again keep the version they were posted with). */
typedef struct walk_gv {
    am_store_segment_gv_fn fn;
    void *ctx;
    int64_t floor; /* sessions.gv_floor */
} walk_gv;

static int walk_gv_row(void *ctx, am_row *row)
{
    walk_gv *w = ctx;
    int64_t gv = row_int(row, 3);
    return w->fn(w->ctx, row_int(row, 0), row_text(row, 1), row_text(row, 2),
                 gv > w->floor ? gv : w->floor);
}

int am_store_tx_segments_walk_gv(am_store_rtx *rtx, const char *session, int64_t from,
                                 am_store_segment_gv_fn fn, void *ctx)
{
    am_store_tx *tx = &rtx->t;
    walk_gv w = {fn, ctx, 0};
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK) /* a rescore's version (schema/015), in the same snapshot */
        rc = store_get(tx->st, tx->c, AM_S_GV_FLOOR, COLS(col_int(&w.floor)), "i", sid);
    if (rc == AM_OK)
        rc = store_each(tx->st, tx->c, AM_S_SEG_WALK, walk_gv_row, &w, "ii", sid, from);
    return rc;
}

/* See store.h. The later segments keep their seqs (schema/007): nothing
 * here grows with the session. */
int am_store_tx_segment_delete(am_store_tx *tx, const char *session, int64_t seq, int64_t now_ms)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_DELETE, "ii", sid, seq);
    if (rc == AM_OK && am_changes(tx->c) == 0)
        return AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_SHRINK, "ii", sid, now_ms);
    return rc;
}

static int segments_each(am_store *st, enum am_stmt_id id, const char *session, int64_t after,
                         size_t limit, int64_t stamp[2], am_store_segrow_fn fn, void *ctx);

int am_store_segments_each(am_store *st, const char *session, int64_t after, size_t limit,
                           am_store_segrow_fn fn, void *ctx)
{
    return segments_each(st, AM_S_SEG_EACH, session, after, limit, NULL, fn, ctx);
}

int am_store_results_each(am_store *st, const char *session, int64_t after, size_t limit,
                          am_store_segrow_fn fn, void *ctx)
{
    return segments_each(st, AM_S_SEG_RESULTS_EACH, session, after, limit, NULL, fn, ctx);
}

/* Reads the session's (incarnation, rewrites) in the open read transaction
 * of c: fills stamp when stamp[0] < 0, else AM_ERR_CONFLICT when they
 * differ from it. */
static int stamp_check(am_store *st, am_conn *c, int64_t sid, int64_t stamp[2])
{
    int64_t inc = 0, rw = 0;
    int rc = store_get(st, c, AM_S_SESSION_STAMP, COLS(col_int(&inc), col_int(&rw)), "i", sid);
    if (rc == AM_OK && stamp[0] < 0) {
        stamp[0] = inc;
        stamp[1] = rw;
    } else if (rc == AM_OK && (stamp[0] != inc || stamp[1] != rw)) {
        rc = AM_ERR_CONFLICT;
    }
    return rc;
}

int am_store_segments_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                              int64_t stamp[2], am_store_segrow_fn fn, void *ctx)
{
    return segments_each(st, AM_S_SEG_EACH, session, after, limit, stamp, fn, ctx);
}

/* Collects into rows (kinds set by the caller, who frees them) the rows of
 * statement id for session's segments after seq `after`, at most limit, in
 * one read snapshot; with stamp, only if the session is still at that
 * incarnation and version (stamp_check). */
static int rows_at(am_store *st, enum am_stmt_id id, const char *session, int64_t after,
                   size_t limit, int64_t stamp[2], store_rows *rows)
{
    int64_t lim = limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
    am_store_rtx r;
    int64_t sid;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        if (stamp)
            rc = stamp_check(st, r.t.c, sid, stamp);
        if (rc == AM_OK)
            rc = store_each(st, r.t.c, id, store_collect, rows, "iii", sid, after, lim);
        rtx_close(&r);
    }
    return rc;
}

/* The walk of statement id (SEG_EACH, or SEG_RESULTS_EACH: no request). */
static int segments_each(am_store *st, enum am_stmt_id id, const char *session, int64_t after,
                         size_t limit, int64_t stamp[2], am_store_segrow_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    store_rows rows = {.kinds = "ittti"}; /* seq, client id, request, result, created_at */
    int rc = rows_at(st, id, session, after, limit, stamp, &rows);
    for (size_t k = 0; k < rows.n && rc == AM_OK; k++) {
        const store_cell *v = cell(&rows, k);
        rc = fn(ctx, v[0].i, v[1].s, v[2].s, v[3].s, v[4].i);
    }
    store_rows_free(&rows);
    return rc;
}

int am_store_stats_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                           int64_t stamp[2], am_store_statrow_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    store_rows rows = {.kinds = "ittt"}; /* seq, stats, request, result */
    int rc = rows_at(st, AM_S_SEG_STATS_EACH, session, after, limit, stamp, &rows);
    for (size_t k = 0; k < rows.n && rc == AM_OK; k++) {
        const store_cell *v = cell(&rows, k);
        rc = fn(ctx, v[0].i, v[1].s, v[2].s, v[3].s);
    }
    store_rows_free(&rows);
    return rc;
}

int am_store_segment_get(am_store *st, const char *session, const char *client_id, int64_t *seq,
                         char **request_json, char **result_json)
{
    if (request_json)
        *request_json = NULL;
    if (result_json)
        *result_json = NULL;
    if (!session || !client_id)
        return AM_ERR_INVALID;
    am_store_rtx r;
    int64_t sid;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        rc = store_get(st, r.t.c, AM_S_SEG_GET,
                       COLS(col_int(seq), col_str(request_json), col_str(result_json)), "it", sid,
                       client_id);
        rtx_close(&r);
    }
    return rc;
}

int am_store_tx_segment_get(am_store_rtx *rtx, const char *session, const char *client_id,
                            int64_t *seq, char **request_json, char **result_json)
{
    if (request_json)
        *request_json = NULL;
    if (result_json)
        *result_json = NULL;
    if (!session || !client_id)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(&rtx->t, session, &sid);
    if (rc == AM_OK)
        rc = store_get(rtx->t.st, rtx->t.c, AM_S_SEG_GET,
                       COLS(col_int(seq), col_str(request_json), col_str(result_json)), "it", sid,
                       client_id);
    return rc;
}

int am_store_segment_result(am_store *st, const char *session, int64_t seq, char **client_id,
                            char **result_json)
{
    if (client_id)
        *client_id = NULL;
    if (result_json)
        *result_json = NULL;
    if (!session)
        return AM_ERR_INVALID;
    am_store_rtx r;
    int64_t sid;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        rc = store_get(st, r.t.c, AM_S_SEG_RESULT, COLS(col_str(client_id), col_str(result_json)),
                       "ii", sid, seq);
        rtx_close(&r);
    }
    return rc;
}

/* ---- staged results (schema/006) ----------------------------------------- */

#define AM_RESULT_CHUNK 128 /* rows per short write transaction */

/* The session's sid and current result generation, on the writer (locked
 * by the caller). */
static int result_gen(am_store *st, const char *session, int64_t *sid, int64_t *gen)
{
    *gen = 0;
    int rc = am_sid(st, &st->w, session, sid);
    if (rc == AM_OK)
        rc = store_get(st, &st->w, AM_S_RESULT_GEN, COLS(col_int(gen)), "i", *sid);
    return rc;
}

/* One chunk of am_store_results_settle: deletes the rows at seqs
 * [*from, *from + AM_RESULT_CHUNK) that no reader can see and no replay
 * will reuse: rows of a generation above the current one (an interrupted
 * replay's) and, of each segment's older rows, all but the newest spare;
 * advances *from. *more = 0 past the highest staged seq. One window per
 * transaction, so each looks at about a chunk of rows. */
static int results_settle_chunk(am_store *st, const char *session, int64_t *from, int *more)
{
    int64_t sid, gen, top = 0;
    *more = 0;
    int rc = result_gen(st, session, &sid, &gen);
    if (rc == AM_OK) /* an aggregate: always one row */
        rc = store_get(st, &st->w, AM_S_RESULT_MAX_SEQ, COLS(col_int(&top)), "i", sid);
    if (rc == AM_OK && *from <= top) {
        rc = am_exec(st, &st->w, AM_S_RESULT_STALE_DEL, "iiii", sid, gen, *from,
                     *from + AM_RESULT_CHUNK);
        *from += AM_RESULT_CHUNK;
        *more = rc == AM_OK && *from <= top;
    }
    return rc;
}

/* Whether the session has rows above its current generation (on the
 * writer, locked by the caller). */
static int results_abandoned(am_store *st, const char *session, int *any)
{
    int64_t sid, gen;
    *any = 0;
    int64_t one = 0;
    int rc = result_gen(st, session, &sid, &gen);
    if (rc == AM_OK)
        rc = store_get(st, &st->w, AM_S_RESULT_ABANDONED, COLS(col_int(&one)), "ii", sid, gen);
    *any = rc == AM_OK;
    rc = rc == AM_ERR_NOTFOUND ? AM_OK : rc;
    return rc;
}

int am_store_results_settle(am_store *st, const char *session, int64_t from)
{
    int any = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, results_abandoned(st, session, &any));
    while (rc == AM_OK && any) {
        int more = 0;
        rc = am_w_begin(st);
        if (rc)
            return rc;
        rc = am_w_end(st, results_settle_chunk(st, session, &from, &more));
        if (rc || !more)
            return rc;
        am_w_handoff(st);
    }
    return rc;
}

int am_store_results_stage(am_store *st, const char *session, int64_t *gen, size_t n,
                           const int64_t *seq, char *const *result)
{
    return am_store_results_stage_st(st, session, gen, n, seq, result, NULL);
}

int am_store_results_stage_st(am_store *st, const char *session, int64_t *gen, size_t n,
                              const int64_t *seq, char *const *result, char *const *stats)
{
    int64_t sid, cur;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, result_gen(st, session, &sid, &cur));
    if (rc)
        return rc;
    *gen = cur + 1;
    for (size_t i = 0; i < n;) {
        am_w_handoff(st);
        rc = am_w_begin(st);
        if (rc)
            return rc;
        for (size_t k = 0; k < AM_RESULT_CHUNK && i < n && rc == AM_OK; k++, i++) {
            /* the segment's spare row (one no reader can see) is rewritten in
             * place: no row is ever deleted, and a segment has two at most */
            const char *rec = stats ? stats[i] : NULL;
            rc = am_exec(st, &st->w, AM_S_RESULT_REUSE, "iiitit", sid, *gen, seq[i], result[i], cur,
                         rec);
            if (rc == AM_OK && am_changes(&st->w) == 0)
                rc = am_exec(st, &st->w, AM_S_RESULT_STAGE, "iiitt", sid, *gen, seq[i], result[i],
                             rec);
        }
        rc = am_w_end(st, rc);
        if (rc)
            return rc;
    }
    return AM_OK;
}

int am_store_tx_results_switch(am_store_tx *tx, const char *session, int64_t gen)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_RESULT_SWITCH, "ii", sid, gen);
    return rc;
}

/* ---- a rescore's switch (schema/015) ------------------------------------- */

int am_store_tx_rescore_switch(am_store_tx *tx, const char *session, int64_t gen,
                               int64_t glossary_version, int64_t now_ms, int history)
{
    /* the pending words of the later rows settled into vocab and
     * occurrences, where the caller repairs them */
    static const enum am_stmt_id hist[] = {AM_S_SETTLE_VOCAB, AM_S_SETTLE_OCC, AM_S_PENDING_CLEAR};
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    /* the totals cleared, every checkpoint below gen stale, version and
     * rewrites bumped: as a replay from the first segment */
    if (rc == AM_OK)
        rc = am_store_tx_replay_reset(tx, session, 0, gen);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_CLEAR, "i", sid);
    if (rc == AM_OK && history)
        rc = store_exec_sid(tx, sid, hist, sizeof hist / sizeof hist[0]);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_RESCORE_MARK, "iii", sid, glossary_version, now_ms);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_RESULT_SWITCH, "ii", sid, gen);
    return rc;
}
