/*
 * store/totals.c — a session's running totals per system: get and put
 * within a transaction, every system's in one snapshot, and the clearing
 * of derived state (totals and term choices).
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

int am_store_tx_derived_clear(am_store_tx *tx, const char *session)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_BUMP, "i", sid);
    return rc;
}

int am_store_tx_totals_get(am_store_tx *tx, const char *session, const char *system,
                           char **stats_json)
{
    *stats_json = NULL;
    if (!system)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_TOTALS_GET, &q, "it", sid, system);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        *stats_json = am_col_str(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
    return rc;
}

int am_store_tx_totals_put(am_store_tx *tx, const char *session, const char *system,
                           const char *stats_json)
{
    if (!system || !stats_json)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_PUT, "itt", sid, system, stats_json);
    return rc;
}

/* ---- reads ---------------------------------------------------------------- */

int am_store_totals_each(am_store *st, const char *session, am_store_totals_fn fn, void *ctx)
{
    return am_store_totals_snapshot(st, session, NULL, fn, ctx);
}

int am_store_totals_snapshot(am_store *st, const char *session, am_store_state *state,
                             am_store_totals_fn fn, void *ctx)
{
    if (!session)
        return AM_ERR_INVALID;
    am_kv *v = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid = 0;
        am_q q;
        if (state) { /* the session's state in the same snapshot */
            am_store_tx t;
            memset(&t, 0, sizeof t);
            t.st = st;
            t.c = c;
            am_buf_init(&t.sess);
            rc = am_store_tx_session_info(&t, session, state);
            sid = t.sid;
            am_buf_cleanup(&t.sess);
        } else {
            rc = am_sid(st, c, session, &sid);
        }
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_TOTALS_EACH, &q, "i", sid);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k].a = am_col_str(q.s, 0);
                v[k].b = am_col_str(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].a, v[i].b);
            if (r != 0)
                rc = r;
        }
        free(v[i].a);
        free(v[i].b);
    }
    free(v);
    return rc;
}
