/*
 * store/segments.c — segments: find, insert, update, delete, walks and
 * paged reads; results and the staged results of replays (schema/006).
 */
#include "store_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int am_store_tx_segment_find(am_store_tx *tx, const char *session, const char *client_id,
                             int64_t *seq, char **body_hash, char **result_json)
{
    if (body_hash)
        *body_hash = NULL;
    if (result_json)
        *result_json = NULL;
    if (!client_id)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_SEG_FIND, &q, "it", sid, client_id);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        if (seq)
            *seq = sqlite3_column_int64(q.s, 0);
        if (body_hash)
            *body_hash = am_col_str(q.s, 1);
        if (result_json)
            *result_json = am_col_str(q.s, 2);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_segment_insert(am_store_tx *tx, const char *session, int64_t seq,
                               const char *client_id, const char *body_hash,
                               const char *request_json, const char *result_json, int64_t now_ms)
{
    return am_store_tx_segment_insert_gv(tx, session, seq, client_id, body_hash, request_json,
                                         result_json, 0, now_ms);
}

int am_store_tx_segment_insert_gv(am_store_tx *tx, const char *session, int64_t seq,
                                  const char *client_id, const char *body_hash,
                                  const char *request_json, const char *result_json,
                                  int64_t glossary_version, int64_t now_ms)
{
    if (seq < 1 || !body_hash || !request_json || !result_json)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_INSERT, "iittttii", sid, seq, client_id, body_hash,
                     request_json, result_json, now_ms, glossary_version);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, seq, now_ms);
    return rc;
}

int am_store_tx_segment_update(am_store_tx *tx, const char *session, int64_t seq,
                               const char *body_hash, const char *request_json,
                               const char *result_json, int64_t now_ms)
{
    if (!result_json || (!body_hash) != (!request_json))
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SEG_UPDATE, "iittti", sid, seq, body_hash, request_json,
                     result_json, now_ms);
    if (rc == AM_OK && sqlite3_changes(tx->c->db) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_TOUCH, "iii", sid, (int64_t)0, now_ms);
    return rc;
}

/* Adapts an am_store_segment_fn to the walk with glossary versions. */
typedef struct am_walk_plain {
    am_store_segment_fn fn;
    void *ctx;
} am_walk_plain;

static int am_walk_plain_cb(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                            int64_t glossary_version)
{
    (void)glossary_version;
    am_walk_plain *w = ctx;
    return w->fn(w->ctx, seq, client_id, request_json);
}

int am_store_tx_segments_walk(am_store_tx *tx, const char *session, int64_t from,
                              am_store_segment_fn fn, void *ctx)
{
    am_walk_plain w = {fn, ctx};
    return am_store_tx_segments_walk_gv(tx, session, from, am_walk_plain_cb, &w);
}

int am_store_tx_segments_walk_gv(am_store_tx *tx, const char *session, int64_t from,
                                 am_store_segment_gv_fn fn, void *ctx)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_SEG_WALK, &q, "ii", sid, from);
    if (rc)
        return rc;
    while ((rc = am_q_step(tx->st, &q)) > 0) {
        int r = fn(ctx, sqlite3_column_int64(q.s, 0), (const char *)sqlite3_column_text(q.s, 1),
                   (const char *)sqlite3_column_text(q.s, 2), sqlite3_column_int64(q.s, 3));
        if (r != 0) {
            rc = r;
            break;
        }
    }
    am_q_close(&q);
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
    if (rc == AM_OK && sqlite3_changes(tx->c->db) == 0)
        return AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_SHRINK, "ii", sid, now_ms);
    return rc;
}

typedef struct am_segrow {
    int64_t seq, created_at;
    char *client_id, *request, *result;
} am_segrow;

int am_store_segments_each(am_store *st, const char *session, int64_t after, size_t limit,
                           am_store_segrow_fn fn, void *ctx)
{
    return am_store_segments_each_at(st, session, after, limit, NULL, fn, ctx);
}

/* Reads the session's (incarnation, rewrites) in the open read transaction
 * of c: fills stamp when stamp[0] < 0, else AM_ERR_CONFLICT when they
 * differ from it. */
static int am_stamp_check(am_store *st, am_conn *c, int64_t sid, int64_t stamp[2])
{
    am_q q;
    int rc = am_q_open(st, c, AM_S_SESSION_STAMP, &q, "i", sid);
    if (rc != AM_OK)
        return rc;
    rc = am_q_step(st, &q);
    if (rc > 0) {
        int64_t inc = sqlite3_column_int64(q.s, 0), rw = sqlite3_column_int64(q.s, 1);
        if (stamp[0] < 0) {
            stamp[0] = inc;
            stamp[1] = rw;
            rc = AM_OK;
        } else {
            rc = (stamp[0] == inc && stamp[1] == rw) ? AM_OK : AM_ERR_CONFLICT;
        }
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_segments_each_at(am_store *st, const char *session, int64_t after, size_t limit,
                              int64_t stamp[2], am_store_segrow_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    int64_t lim = limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
    am_segrow *v = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        if (rc == AM_OK && stamp)
            rc = am_stamp_check(st, c, sid, stamp);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_EACH, &q, "iii", sid, after, lim);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 16;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k].seq = sqlite3_column_int64(q.s, 0);
                v[k].client_id = am_col_str(q.s, 1);
                v[k].request = am_col_str(q.s, 2);
                v[k].result = am_col_str(q.s, 3);
                v[k].created_at = sqlite3_column_int64(q.s, 4);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].seq, v[i].client_id, v[i].request, v[i].result, v[i].created_at);
            if (r != 0)
                rc = r;
        }
        free(v[i].client_id);
        free(v[i].request);
        free(v[i].result);
    }
    free(v);
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
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_GET, &q, "it", sid, client_id);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                if (seq)
                    *seq = sqlite3_column_int64(q.s, 0);
                if (request_json)
                    *request_json = am_col_str(q.s, 1);
                if (result_json)
                    *result_json = am_col_str(q.s, 2);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
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
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_RESULT, &q, "ii", sid, seq);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                if (client_id)
                    *client_id = am_col_str(q.s, 0);
                if (result_json)
                    *result_json = am_col_str(q.s, 1);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    return rc;
}

/* ---- staged results (schema/006) ----------------------------------------- */

#define AM_RESULT_CHUNK 128 /* rows per short write transaction */

/* The session's sid and current result generation, on the writer (locked
 * by the caller). */
static int result_gen(am_store *st, const char *session, int64_t *sid, int64_t *gen)
{
    int rc = am_sid(st, &st->w, session, sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(st, &st->w, AM_S_RESULT_GEN, &q, "i", *sid);
    if (rc)
        return rc;
    rc = am_q_step(st, &q);
    *gen = rc > 0 ? sqlite3_column_int64(q.s, 0) : 0;
    rc = rc > 0 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
    am_q_close(&q);
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
    am_q q;
    if (rc == AM_OK)
        rc = am_q_open(st, &st->w, AM_S_RESULT_MAX_SEQ, &q, "i", sid);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        if (rc > 0)
            top = sqlite3_column_int64(q.s, 0);
        rc = rc < 0 ? rc : AM_OK;
        am_q_close(&q);
    }
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
    int rc = result_gen(st, session, &sid, &gen);
    am_q q;
    if (rc == AM_OK)
        rc = am_q_open(st, &st->w, AM_S_RESULT_ABANDONED, &q, "ii", sid, gen);
    if (rc == AM_OK) {
        rc = am_q_step(st, &q);
        *any = rc > 0;
        rc = rc < 0 ? rc : AM_OK;
        am_q_close(&q);
    }
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
            rc = am_exec(st, &st->w, AM_S_RESULT_REUSE, "iiiti", sid, *gen, seq[i], result[i], cur);
            if (rc == AM_OK && sqlite3_changes(st->w.db) == 0)
                rc = am_exec(st, &st->w, AM_S_RESULT_STAGE, "iiit", sid, *gen, seq[i], result[i]);
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
