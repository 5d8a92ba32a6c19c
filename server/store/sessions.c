/*
 * store/sessions.c — sessions: create, get, list, count, state within a
 * transaction; deletion (hidden at once, purged in chunks), and the purge
 * at open of the hidden sessions a crash left (a deleted session's, or the
 * shadow copy a rescore of an older binary was filling).
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Adds q's work to purge_steps: the store's, for a rewrite's view too. */
static void purge_count(am_store *st, am_q *q)
{
    atomic_fetch_add(&(st->parent ? st->parent : st)->purge_steps, (long long)am_q_steps(q));
}

/* The key of the last of the first chunk rows of a WITHOUT ROWID table in
 * the session (its _TO statement) bound as ?2.. of the purge statement,
 * which deletes up to it by a key range: a chunk walks its own rows only
 * ("WHERE (sid, k) IN (SELECT … LIMIT n)" walked every remaining row of
 * the session per chunk: quadratic). Returns AM_OK or an error; *more 0
 * when nothing was left. Adds the VM steps to purge_steps. */
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
    if (rc == AM_OK && !nested && st->pg && !st->parent) /* under its rewrite lock: see below */
        rc = am_pg_purge_deleted(st, sid);
    else if (rc == AM_OK && !nested)
        rc = session_purge(st, sid);
    return rc;
}

int am_store_session_purge(am_store *st, int64_t handle)
{
    return session_purge(st, handle);
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

/* ---- rewrites across nodes (DESIGN-postgres §2.5 item 2) ------------------ */

/* A rewrite (store.h am_store_rewrite_begin) runs on a view of the store
 * (drv_pg.c am_pg_view_open): an am_store of its own whose writer is a
 * connection opened for the rewrite and pinned to it, and whose errors,
 * write gate and counters are its parent's. Every store function works on
 * a view unchanged (its writes take the view's writer; it has no readers,
 * so its reads use that writer too), which is how every staging
 * transaction of the rewrite runs on the connection that holds the
 * session's lock.
 *
 * The lock. pg_try_advisory_lock(AM_PG_RW_KEY, sid), session-level, on
 * the pinned connection; polled (every AM_PG_RW_POLL_MS, up to
 * AM_PG_RW_WAIT_MS) rather than waited for in PostgreSQL, so that the wait
 * is bounded without a lock_timeout that would also bound the row-lock
 * waits of the rewrite's switch transaction. Keyed by the session's sid
 * (the two-int form: objid is the sid's low 31 bits, so two sessions may
 * share a lock, which only makes one wait), not by its public id, because
 * a hidden copy names the sid it belongs to: '~new~<sid>~<tag>' (a
 * rescore's shadow) and '~del~<sid>' (a deleted session, or a rescore's
 * replaced rows) are each owned by whoever holds the lock of that sid,
 * which is what the start-up purge asks (am_pg_purge_hidden). A rescore
 * of a release before schema/015 swapped a new sid in under the lock of
 * the old one (a node of such a release may share the database during an
 * upgrade), so the lock taker re-reads the sid once it holds the lock and
 * starts again on a change.
 *
 * Fencing. The pinned connection is never reopened (pg_pin_broken): when
 * the node dies or is cut off, PostgreSQL ends its session, the lock goes,
 * and nothing of that rewrite can be written any more. What it had staged
 * stays invisible (a generation above the session's, or a hidden shadow)
 * and is deleted by the next holder: results_settle before its staging,
 * the abandoned shadows here. POSTs take no rewrite lock: they bump the
 * session's version under its row lock, so the rewrite's switch, which
 * checks that version under the same row lock, fails and is retried. */
#define AM_PG_RW_KEY 1634562679 /* "amrw": the first key of every rewrite lock */
#define AM_PG_RW_WAIT_MS 2000
#define AM_PG_RW_POLL_MS 20
#define AM_PG_SQL_RW_TRY "SELECT pg_try_advisory_lock($1::int4, $2::int4)"
#define AM_PG_SQL_RW_UNLOCK "SELECT pg_advisory_unlock($1::int4, $2::int4)"
/* the shadows of sid a dead holder left (only the lock holder makes them) */
#define AM_PG_SQL_RW_ABANDONED                                                                     \
    "SELECT sid FROM sessions WHERE id LIKE '~new~' || $1::text || '~%' ORDER BY sid"
#define AM_PG_SQL_RW_HIDDEN "SELECT sid, id FROM sessions WHERE id >= '~' ORDER BY sid"

/* Tries (lock 1) or releases (lock 0) the rewrite lock of sid on v's
 * connection; *got: whether the call answered true. */
/* A rewrite's view (am_pg_view_open) with its one committer set up, as
 * every store has one (tx.c; unused: a rewrite writes through am_w_begin);
 * NULL when it cannot connect. Close with rw_view_close. */
static am_store *rw_view_open(am_store *st)
{
    am_store *v = am_pg_view_open(st);
    if (v)
        am_group_init(v);
    return v;
}

/* Frees view v's committer and closes it (its connection, and its lock). */
static void rw_view_close(am_store *v)
{
    am_group_free(v);
    am_pg_view_close(v);
}

static int pg_rw_call(am_store *v, int lock, int64_t sid, int *got)
{
    char key[16], obj[16];
    snprintf(key, sizeof key, "%d", AM_PG_RW_KEY);
    snprintf(obj, sizeof obj, "%d", (int)(sid & 0x7fffffff));
    const char *p[2] = {key, obj};
    PGresult *r = NULL;
    int rc = am_pg_view_query(v, lock ? AM_PG_SQL_RW_TRY : AM_PG_SQL_RW_UNLOCK, 2, p, &r,
                              lock ? "taking the rewrite lock" : "releasing the rewrite lock");
    *got = rc == AM_OK && PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return rc;
}

/* One try at session's rewrite lock on v: *got when it holds the lock of
 * the session's current sid (*sid). */
static int pg_rw_try(am_store *v, const char *session, int64_t *sid, int *got)
{
    *got = 0;
    am_w_lock(v);
    int rc = am_sid(v, &v->w, session, sid);
    if (rc == AM_OK)
        rc = pg_rw_call(v, 1, *sid, got);
    int64_t now = 0;
    if (rc == AM_OK && *got)
        rc = am_sid(v, &v->w, session, &now);
    if (rc == AM_OK && *got && now != *sid) { /* swapped in by a rescore meanwhile: again */
        int released;
        rc = pg_rw_call(v, 0, *sid, &released);
        *got = 0;
    }
    am_w_unlock(v);
    return rc;
}

/* Waits (polling, up to wait_ms) for session's rewrite lock on v. */
static int pg_rw_lock(am_store *v, const char *session, int wait_ms, int64_t *sid)
{
    for (int waited = 0;; waited += AM_PG_RW_POLL_MS) {
        int got = 0;
        int rc = pg_rw_try(v, session, sid, &got);
        if (rc != AM_OK || got)
            return rc;
        if (waited >= wait_ms) {
            am_store_note(v, AM_ERR_CONFLICT,
                          "a rewrite of the session runs on another node (its lock is held)");
            return AM_ERR_CONFLICT;
        }
        struct timespec ts = {0, AM_PG_RW_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Purges the shadows of sid that an earlier holder of its lock left (v
 * holds the lock now). */
static int pg_rw_abandoned(am_store *v, int64_t sid)
{
    char s[24];
    snprintf(s, sizeof s, "%lld", (long long)sid);
    const char *p[1] = {s};
    PGresult *r = NULL;
    am_w_lock(v);
    int rc = am_pg_view_query(v, AM_PG_SQL_RW_ABANDONED, 1, p, &r, "finding abandoned shadows");
    am_w_unlock(v);
    for (int i = 0; rc == AM_OK && i < PQntuples(r); i++)
        rc = am_store_session_purge(v, strtoll(PQgetvalue(r, i, 0), NULL, 10));
    PQclear(r);
    return rc;
}

int am_store_rewrite_begin(am_store *st, const char *session, am_store **on)
{
    *on = st;
    if (!st->pg) /* SQLite: one process, am_sess_lock is enough */
        return AM_OK;
    if (!session)
        return AM_ERR_INVALID;
    am_store *v = rw_view_open(st);
    if (!v)
        return AM_ERR_UNAVAILABLE;
    int64_t sid = 0;
    int rc = pg_rw_lock(v, session, AM_PG_RW_WAIT_MS, &sid);
    if (rc == AM_OK)
        rc = pg_rw_abandoned(v, sid);
    if (rc != AM_OK) {
        rw_view_close(v);
        return rc;
    }
    *on = v;
    return AM_OK;
}

void am_store_rewrite_end(am_store *st, am_store *on)
{
    if (on && on != st)
        rw_view_close(on); /* the session ends, and its lock with it */
}

/* The sid whose rewrite lock owns hidden session id (see above): the
 * number after '~del~' or '~new~'; the row's own sid for any other. */
static int64_t pg_hidden_owner(const char *id, int64_t sid)
{
    if (!strncmp(id, "~del~", 5) || !strncmp(id, "~new~", 5)) {
        char *end = NULL;
        long long n = strtoll(id + 5, &end, 10);
        if (end != id + 5)
            return n;
    }
    return sid;
}

/* Purges hidden session sid on v when the lock of owner is free (or
 * freed within wait_ms); else leaves it to the lock's holder. */
static int pg_purge_if_free(am_store *v, int64_t owner, int64_t sid, int wait_ms)
{
    for (int waited = 0;; waited += AM_PG_RW_POLL_MS) {
        int got = 0;
        am_w_lock(v);
        int rc = pg_rw_call(v, 1, owner, &got);
        am_w_unlock(v);
        if (rc != AM_OK)
            return rc;
        if (got) {
            rc = am_store_session_purge(v, sid);
            am_w_lock(v);
            int r2 = pg_rw_call(v, 0, owner, &got);
            am_w_unlock(v);
            return rc != AM_OK ? rc : r2;
        }
        if (waited >= wait_ms)
            return AM_OK;
        struct timespec ts = {0, AM_PG_RW_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int am_pg_purge_hidden(am_store *st)
{
    am_store *v = rw_view_open(st);
    if (!v)
        return AM_ERR_UNAVAILABLE;
    PGresult *r = NULL;
    am_w_lock(v);
    int rc = am_pg_view_query(v, AM_PG_SQL_RW_HIDDEN, 0, NULL, &r, "listing hidden sessions");
    am_w_unlock(v);
    for (int i = 0; rc == AM_OK && i < PQntuples(r); i++) {
        int64_t sid = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        rc = pg_purge_if_free(v, pg_hidden_owner(PQgetvalue(r, i, 1), sid), sid, 0);
    }
    PQclear(r);
    rw_view_close(v);
    return rc;
}

int am_pg_purge_deleted(am_store *st, int64_t sid)
{
    am_store *v = rw_view_open(st);
    if (!v)
        return AM_ERR_UNAVAILABLE;
    int rc = pg_purge_if_free(v, sid, sid, AM_PG_RW_WAIT_MS);
    rw_view_close(v);
    return rc;
}
