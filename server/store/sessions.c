/*
 * store/sessions.c — sessions: create, get, list, count, state within a
 * transaction; deletion (hidden at once, purged in chunks) and shadow
 * copies (a rescore's hidden session swapped in).
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sessions ------------------------------------------------------------- */

void am_store_session_clear(am_store_session *s)
{
    if (!s)
        return;
    free(s->id);
    free(s->options);
    free(s->signature);
    free(s->custom_stopwords);
    free(s->glossary);
    memset(s, 0, sizeof *s);
}

static void session_row(am_row *s, am_store_session *out)
{
    out->id = row_str(s, 0);
    out->options = row_str(s, 1);
    out->signature = row_str(s, 2);
    out->custom_stopwords = row_str(s, 3);
    out->glossary = row_str(s, 4);
    out->glossary_version = row_int(s, 5);
    out->created_at = row_int(s, 6);
    out->updated_at = row_int(s, 7);
    out->segments = row_int(s, 8);
    out->version = row_int(s, 9);
    out->incarnation = row_int(s, 10);
    out->last_seq = row_int(s, 11);
}

/* store_each callbacks: the first row into ctx (an am_store_session) and
 * stop (1); every row appended to ctx (a session_vec). */
static int session_one(void *ctx, am_row *row)
{
    session_row(row, ctx);
    return 1;
}

typedef struct session_vec {
    am_store_session *v; /* malloc'd */
    size_t k, cap;
} session_vec;

static int session_push(void *ctx, am_row *row)
{
    session_vec *sv = ctx;
    sv->v = vec_grow(sv->v, &sv->cap, sv->k, sizeof *sv->v, 16);
    session_row(row, &sv->v[sv->k++]);
    return 0;
}

int am_store_session_create(am_store *st, const char *id, const char *options_json,
                            const char *signature, const char *custom_stopwords_json,
                            int64_t now_ms)
{
    return am_store_session_create_gl(st, id, options_json, signature, custom_stopwords_json, NULL,
                                      now_ms, NULL);
}

int am_store_session_create_gl(am_store *st, const char *id, const char *options_json,
                               const char *signature, const char *custom_stopwords_json,
                               const char *glossary_json, int64_t now_ms, int64_t *incarnation)
{
    if (!id || !options_json || !signature)
        return AM_ERR_INVALID;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_exec(st, &st->w, AM_S_INCARNATION_NEXT, "");
    if (rc == AM_OK && incarnation) {
        rc = store_get(st, &st->w, AM_S_INCARNATION_CUR, COLS(col_int(incarnation)), "");
        rc = rc == AM_ERR_NOTFOUND ? AM_ERR_INTERNAL : rc; /* the counter's row: schema/002 */
    }
    if (rc == AM_OK)
        rc = am_exec(st, &st->w, AM_S_SESSION_INSERT, "tttti", id, options_json, signature,
                     custom_stopwords_json, now_ms);
    if (rc == AM_OK && glossary_json) {
        rc = am_exec(st, &st->w, AM_S_GLOSSARY_PUT, "tii", id, now_ms, (int64_t)0);
        if (rc == AM_OK)
            rc = am_glossary_keep(st, id, glossary_json);
    }
    return am_w_end(st, rc);
}

int am_store_session_get(am_store *st, const char *id, am_store_session *out)
{
    memset(out, 0, sizeof *out);
    if (!id)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc = store_each(st, c, AM_S_SESSION_GET, session_one, out, "t", id);
    am_reader_put(c);
    return rc == 1 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
}

int am_store_tx_session_get(am_store_rtx *rtx, const char *id, am_store_session *out)
{
    memset(out, 0, sizeof *out);
    if (!id)
        return AM_ERR_INVALID;
    int rc = store_each(rtx->t.st, rtx->t.c, AM_S_SESSION_GET, session_one, out, "t", id);
    return rc == 1 ? AM_OK : rc == 0 ? AM_ERR_NOTFOUND : rc;
}

int am_store_session_list(am_store *st, const char *after, size_t limit, am_store_session **out,
                          size_t *n)
{
    *out = NULL;
    *n = 0;
    if (limit == 0)
        return AM_OK;
    int64_t lim = limit > (size_t)INT64_MAX ? -1 : (int64_t)limit;
    session_vec sv = {NULL, 0, 0};
    am_conn *c = am_reader_get(st);
    int rc = after ? store_each(st, c, AM_S_SESSION_LIST_AFTER, session_push, &sv, "ti", after, lim)
                   : store_each(st, c, AM_S_SESSION_LIST_FIRST, session_push, &sv, "i", lim);
    am_reader_put(c);
    if (rc < 0) {
        for (size_t i = 0; i < sv.k; i++)
            am_store_session_clear(&sv.v[i]);
        free(sv.v);
        return rc;
    }
    *out = sv.v;
    *n = sv.k;
    return AM_OK;
}

int am_store_session_count(am_store *st, int64_t *n)
{
    am_conn *c = am_reader_get(st);
    int rc = store_get(st, c, AM_S_SESSION_COUNT, COLS(col_int(n)), "");
    am_reader_put(c);
    return rc;
}

/* Deleting a session: one short transaction renames it to a hidden id
 * ("~del~<sid>": no valid id starts with '~', and every listing and count
 * stops below '~'), so it is gone for every reader and writer, and its id
 * is free, at once. Its rows are then purged AM_PURGE_CHUNK at a time per
 * short transaction, the writer handed over in between, and the sessions
 * row last: one cascading DELETE of a 30,000-segment session held the
 * writer, and every other session's POST, for 1.3 s. Hidden sessions left
 * by a crash are purged at open. */
#define AM_PURGE_CHUNK 512

/* The key of the last of the first chunk rows of a WITHOUT ROWID table in
 * the session (its _TO statement) bound as ?2.. of the purge statement,
 * which deletes up to it by a key range: a chunk walks its own rows only
 * ("WHERE (sid, k) IN (SELECT … LIMIT n)" walked every remaining row of
 * the session per chunk: quadratic). Returns AM_OK or an error; *more 0
 * when nothing was left. Adds the VM steps to purge_steps. */
/* Adds q's work to purge_steps: the store's, for a rewrite's view too. */
static void purge_count(am_store *st, am_q *q)
{
    atomic_fetch_add(&(st->parent ? st->parent : st)->purge_steps, (long long)am_q_steps(q));
}

static int purge_chunk_keyed(am_store *st, enum am_stmt_id to, enum am_stmt_id del, int64_t sid,
                             int64_t chunk, int *more)
{
    *more = 0;
    am_q b;
    int rc = am_q_open(st, &st->w, to, &b, "ii", sid, chunk);
    if (rc)
        return rc;
    rc = am_q_step(st, &b);
    if (rc > 0) {
        am_q d;
        rc = am_q_open(st, &st->w, del, &d, "i", sid);
        if (rc == AM_OK)
            rc = am_q_bind_row(st, &d, 2, am_q_row(&b));
        if (rc == AM_OK) {
            rc = am_q_step(st, &d);
            rc = rc > 0 ? AM_OK : rc;
            *more = rc == AM_OK && am_changes(&st->w) > 0;
            purge_count(st, &d);
        }
        am_q_close(&d); /* a failed open left nothing to close */
    }
    rc = rc > 0 ? AM_OK : rc;
    purge_count(st, &b);
    am_q_close(&b);
    return rc;
}

static int session_purge(am_store *st, int64_t sid)
{
    static const enum am_stmt_id steps[] = {
        AM_S_PURGE_RESULTS, AM_S_PURGE_SEGMENTS, AM_S_PURGE_OCC,         AM_S_PURGE_VOCAB,
        AM_S_PURGE_CHOICES, AM_S_PURGE_TOTALS,   AM_S_PURGE_CHECKPOINTS, AM_S_PURGE_GLOSSARIES};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0];) {
        int rc = am_w_begin(st);
        if (rc)
            return rc;
        /* segment rows are large (request and result texts): fewer a time */
        int64_t chunk = steps[i] == AM_S_PURGE_RESULTS || steps[i] == AM_S_PURGE_SEGMENTS
                            ? AM_PURGE_CHUNK / 4
                            : AM_PURGE_CHUNK;
        enum am_stmt_id to = steps[i] == AM_S_PURGE_OCC       ? AM_S_PURGE_OCC_TO
                             : steps[i] == AM_S_PURGE_VOCAB   ? AM_S_PURGE_VOCAB_TO
                             : steps[i] == AM_S_PURGE_CHOICES ? AM_S_PURGE_CHOICES_TO
                             : steps[i] == AM_S_PURGE_TOTALS  ? AM_S_PURGE_TOTALS_TO
                                                              : steps[i];
        int more = 0;
        if (to != steps[i]) {
            rc = purge_chunk_keyed(st, to, steps[i], sid, chunk, &more);
        } else {
            am_q q;
            rc = am_q_open(st, &st->w, steps[i], &q, "ii", sid, chunk);
            if (rc == AM_OK) {
                rc = am_q_step(st, &q);
                rc = rc > 0 ? AM_OK : rc;
                more = rc == AM_OK && am_changes(&st->w) > 0;
                purge_count(st, &q);
                am_q_close(&q);
            }
        }
        rc = am_w_end(st, rc);
        if (rc)
            return rc;
        if (!more)
            i++;
        am_w_handoff(st);
    }
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    return am_w_end(st, am_exec(st, &st->w, AM_S_PURGE_SESSION, "i", sid));
}

int am_store_session_delete(am_store *st, const char *id)
{
    if (!id)
        return AM_ERR_INVALID;
    int64_t sid = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = store_get(st, &st->w, AM_S_SESSION_HIDE, COLS(col_int(&sid)), "t", id);
    int nested = st->in_tx;
    if (nested) {
        st->rtx.t.has_sid = 0; /* the transaction's cached sid is gone */
        if (rc == AM_OK) /* inside the caller's transaction: all at once */
            rc = am_exec(st, &st->w, AM_S_PURGE_SESSION, "i", sid);
    }
    rc = am_w_end(st, rc);
    if (rc == AM_OK && !nested && st->pg && !st->parent) /* under its rewrite lock: see drv_pg.c */
        rc = am_pg_purge_deleted(st, sid);
    else if (rc == AM_OK && !nested)
        rc = session_purge(st, sid);
    return rc;
}

int am_store_session_purge(am_store *st, int64_t handle)
{
    return session_purge(st, handle);
}

void am_store_handoff(am_store *st)
{
    am_w_handoff(st);
}

/* ---- shadow copies (a rescore) ------------------------------------------- */

int am_store_shadow_begin(am_store *st, const char *session, char **shadow_id)
{
    *shadow_id = NULL;
    if (!session)
        return AM_ERR_INVALID;
    char tag[32];
    snprintf(tag, sizeof tag, "%llu", (unsigned long long)atomic_fetch_add(&st->hidden_seq, 1));
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    int64_t sid = 0, shadow = 0;
    rc = am_sid(st, &st->w, session, &sid);
    if (rc == AM_OK)
        rc = store_get(st, &st->w, AM_S_SHADOW_NEW, COLS(col_str(shadow_id)), "tt", session, tag);
    if (rc == AM_OK)
        rc = am_sid(st, &st->w, *shadow_id, &shadow);
    if (rc == AM_OK)
        rc = am_exec(st, &st->w, AM_S_SHADOW_GLOSSARIES, "ii", sid, shadow);
    rc = am_w_end(st, rc);
    if (rc) {
        free(*shadow_id);
        *shadow_id = NULL;
    }
    return rc;
}

int am_store_tx_shadow_segment(am_store_tx *tx, const char *session, const char *shadow_id,
                               int64_t seq, const char *result_json, int64_t glossary_version,
                               int64_t now_ms)
{
    if (!result_json)
        return AM_ERR_INVALID;
    int64_t sid, shadow;
    int rc = am_sid(tx->st, tx->c, session, &sid);
    if (rc == AM_OK)
        rc = am_tx_sid(tx, shadow_id, &shadow);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SHADOW_SEGMENT, "iiitii", sid, shadow, seq, result_json,
                     now_ms, glossary_version);
    if (rc == AM_OK && am_changes(tx->c) != 1)
        rc = AM_ERR_NOTFOUND;
    return rc;
}

int am_store_tx_shadow_swap(am_store_tx *tx, const char *session, const char *shadow_id,
                            int64_t now_ms, int64_t *old)
{
    am_store *st = tx->st;
    int64_t version = 0, rewrites = 0, segments = 0;
    int rc =
        store_get(st, tx->c, AM_S_SHADOW_HIDE_OLD,
                  COLS(col_int(old), col_int(&version), col_int(&rewrites), col_int(&segments)),
                  "t", session);
    tx->has_sid = 0; /* the cached sid of session is now the old one's */
    if (rc == AM_OK)
        rc = am_exec(st, tx->c, AM_S_SHADOW_TAKE_OVER, "ttiiii", shadow_id, session, version + 1,
                     rewrites + 1, segments, now_ms);
    if (rc == AM_OK && am_changes(tx->c) != 1)
        rc = AM_ERR_NOTFOUND;
    return rc;
}

int am_store_shadow_drop(am_store *st, const char *shadow_id)
{
    int64_t sid;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_w_end(st, am_sid(st, &st->w, shadow_id, &sid));
    return rc == AM_OK ? session_purge(st, sid) : rc == AM_ERR_NOTFOUND ? AM_OK : rc;
}

/* Purges the hidden sessions a crash left half-purged (at open). With
 * PostgreSQL another node may be filling one (a rescore's shadow) or
 * purging one right now: am_pg_purge_hidden purges those whose rewrite
 * lock is free only. */
int sessions_purge_hidden(am_store *st)
{
    if (st->pg) /* several nodes: only the copies no live node owns */
        return am_pg_purge_hidden(st);
    for (;;) {
        store_ids ids = {.n = 0};
        am_w_lock(st);
        int rc = store_each(st, &st->w, AM_S_SESSION_HIDDEN, store_ids_push, &ids, "");
        am_w_unlock(st);
        rc = rc > 0 ? AM_OK : rc;
        for (size_t i = 0; i < ids.n && rc == AM_OK; i++)
            rc = session_purge(st, ids.v[i]);
        if (rc || ids.n == 0)
            return rc;
    }
}

int am_store_tx_session_state(am_store_rtx *rtx, const char *session, int64_t *last_seq,
                              int64_t *version)
{
    am_store_state s;
    int rc = am_store_tx_session_info(rtx, session, &s);
    if (rc == AM_OK && last_seq)
        *last_seq = s.last_seq;
    if (rc == AM_OK && version)
        *version = s.version;
    return rc;
}

int am_store_tx_session_info(am_store_rtx *rtx, const char *session, am_store_state *out)
{
    memset(out, 0, sizeof *out);
    if (!session)
        return AM_ERR_INVALID;
    am_store_tx *tx = &rtx->t;
    int rc = store_get(tx->st, tx->c, AM_S_SESSION_STATE,
                       COLS(col_int(&tx->sid), col_int(&out->last_seq), col_int(&out->version),
                            col_int(&out->incarnation), col_int(&out->glossary_version),
                            col_int(&out->count)),
                       "t", session);
    if (rc == AM_OK) { /* the sid is cached for the transaction */
        tx->has_sid = 1;
        am_buf_reset(&tx->sess);
        am_buf_appends(&tx->sess, session);
    }
    return rc;
}
