/*
 * store/totals.c — a session's running totals per system: get and put
 * within a transaction and every system's in one snapshot (checkpoints.c
 * keeps their copies a replay starts from).
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

int am_store_tx_totals_get(am_store_rtx *rtx, const char *session, const char *system,
                           char **stats_json)
{
    *stats_json = NULL;
    if (!system)
        return AM_ERR_INVALID;
    am_store_tx *tx = &rtx->t;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc =
            store_get(tx->st, tx->c, AM_S_TOTALS_GET, COLS(col_str(stats_json)), "it", sid, system);
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
    store_rows rows = {.kinds = "tt"}; /* system, stats */
    am_store_rtx r;
    int rc = rtx_open(st, &r);
    if (rc == AM_OK) {
        int64_t sid = 0;
        if (state) /* the session's state in the same snapshot */
            rc = am_store_tx_session_info(&r, session, state);
        if (rc == AM_OK)
            rc = am_tx_sid(&r.t, session, &sid);
        if (rc == AM_OK)
            rc = store_each(st, r.t.c, AM_S_TOTALS_EACH, store_collect, &rows, "i", sid);
        rtx_close(&r);
    }
    for (size_t k = 0; k < rows.n && rc == AM_OK; k++)
        rc = fn(ctx, cell(&rows, k)[0].s, cell(&rows, k)[1].s);
    store_rows_free(&rows);
    return rc;
}
