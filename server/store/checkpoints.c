/*
 * store/checkpoints.c — where a replay starts (schema/008): the session's
 * totals copied after every 32nd seq by POST and batch (checkpoint_take),
 * a replay's new checkpoints staged in short transactions
 * (checkpoints_stage) and made current by its switch (replay_reset cuts
 * the stale ones), and the two reads a replay from seq k starts with: the
 * last valid checkpoint before k and the word history up to it.
 */
#include "store_int.h"

#define AM_CKPT_CHUNK 128 /* rows per short write transaction */

int am_store_tx_checkpoint_take(am_store_tx *tx, const char *session, int64_t seq)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CKPT_TAKE, "ii", sid, seq);
    return rc;
}

/* One short write transaction deleting up to AM_CKPT_CHUNK checkpoint rows
 * of session no replay may start from; *more is set when it deleted any. */
static int ckpt_settle_chunk(am_store *st, const char *session, int *more)
{
    int64_t sid;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_sid(st, &st->w, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(st, &st->w, AM_S_CKPT_SETTLE, "ii", sid, (int64_t)AM_CKPT_CHUNK);
    *more = rc == AM_OK && am_changes(&st->w) > 0;
    rc = am_w_end(st, rc);
    am_w_handoff(st);
    return rc;
}

/* One short write transaction writing the checkpoint rows [*i, n) of
 * session, at most AM_CKPT_CHUNK; *i moves past them. */
static int ckpt_stage_chunk(am_store *st, const char *session, int64_t gen, size_t n, size_t *i,
                            const int64_t *seq, char *const *system, char *const *stats)
{
    int64_t sid;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_sid(st, &st->w, session, &sid);
    for (size_t k = 0; k < AM_CKPT_CHUNK && *i < n && rc == AM_OK; k++, (*i)++)
        rc =
            am_exec(st, &st->w, AM_S_CKPT_STAGE, "iiitt", sid, seq[*i], gen, system[*i], stats[*i]);
    rc = am_w_end(st, rc);
    am_w_handoff(st);
    return rc;
}

int am_store_checkpoints_stage(am_store *st, const char *session, int64_t gen, size_t n,
                               const int64_t *seq, char *const *system, char *const *stats)
{
    int more = 1, rc = AM_OK;
    size_t i = 0;
    /* what an interrupted replay left, what the last cut made stale */
    while (rc == AM_OK && more)
        rc = ckpt_settle_chunk(st, session, &more);
    while (rc == AM_OK && i < n)
        rc = ckpt_stage_chunk(st, session, gen, n, &i, seq, system, stats);
    return rc;
}

int am_store_tx_replay_reset(am_store_tx *tx, const char *session, int64_t after, int64_t gen)
{
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_TOTALS_CLEAR, "i", sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CKPT_CUT, "iii", sid, after, gen);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_SESSION_BUMP, "i", sid);
    return rc;
}

/* store_each callback handing a CKPT_EACH row to the public callback. */
typedef struct ckpt_pass {
    am_store_totals_fn totals;
    void *ctx;
} ckpt_pass;

static int ckpt_totals_row(void *ctx, am_row *row)
{
    const ckpt_pass *p = ctx;
    return p->totals(p->ctx, row_text(row, 0), row_text(row, 1));
}

int am_store_tx_checkpoint_last(am_store_rtx *rtx, const char *session, int64_t before,
                                int64_t *seq, am_store_totals_fn fn, void *ctx)
{
    am_store_tx *tx = &rtx->t;
    *seq = 0;
    int64_t sid, at = 0, gen = 0;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = store_get(tx->st, tx->c, AM_S_CKPT_LAST, COLS(col_int(&at), col_int(&gen)), "ii", sid,
                       before);
    if (rc == AM_ERR_NOTFOUND)
        return AM_OK; /* none: a full replay */
    if (rc != AM_OK)
        return rc;
    *seq = at;
    ckpt_pass p = {fn, ctx};
    return store_each(tx->st, tx->c, AM_S_CKPT_EACH, ckpt_totals_row, &p, "iii", sid, at, gen);
}

int am_store_tx_history_upto(am_store_rtx *rtx, const char *session, int64_t seq,
                             am_store_count_fn fn, void *ctx)
{
    am_store_tx *tx = &rtx->t;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc != AM_OK)
        return rc;
    store_counts p = {fn, ctx};
    return store_each(tx->st, tx->c, AM_S_OCC_UPTO, store_count_row, &p, "ii", sid, seq);
}
