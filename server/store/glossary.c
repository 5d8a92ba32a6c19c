/*
 * store/glossary.c — glossary versions (put, kept immutable, read by
 * version, where they change along the segments) and term choices.
 */
#include "store_int.h"

#include <stdlib.h>

/* The glossary's new version row (GLOSSARY_KEEP: the only copy of its
 * text, glossary_json, borrowed, NULL for none) after GLOSSARY_PUT changed
 * the session; inside the caller's am_w_begin. */
int am_glossary_keep(am_store *st, const char *id, const char *glossary_json)
{
    return am_exec(st, &st->w, AM_S_GLOSSARY_KEEP, "tt", id, glossary_json);
}

int am_store_glossary_put(am_store *st, const char *id, const char *glossary_json, int64_t now_ms)
{
    return am_store_glossary_put_if(st, id, 0, glossary_json, now_ms, NULL);
}

int am_store_glossary_put_if(am_store *st, const char *id, int64_t incarnation,
                             const char *glossary_json, int64_t now_ms, int64_t *new_version)
{
    if (!id)
        return AM_ERR_INVALID;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = am_exec(st, &st->w, AM_S_GLOSSARY_PUT, "tii", id, now_ms, incarnation);
    if (rc == AM_OK && am_changes(&st->w) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_glossary_keep(st, id, glossary_json);
    if (rc == AM_OK && new_version)
        rc = store_get(st, &st->w, AM_S_GLOSSARY_CUR, COLS(col_int(new_version)), "t", id);
    return am_w_end(st, rc);
}

int am_store_tx_glossary_version(am_store_rtx *rtx, const char *session, int64_t version,
                                 char **entries_json)
{
    *entries_json = NULL;
    if (version == 0)
        return AM_OK; /* no glossary */
    am_store_tx *tx = &rtx->t;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = store_get(tx->st, tx->c, AM_S_GLOSSARY_VERSION, COLS(col_str(entries_json)), "ii", sid,
                       version);
    return rc;
}

int am_store_tx_choice_add(am_store_tx *tx, const char *session, const char *entry, const char *alt,
                           int64_t count)
{
    if (!entry || !alt)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_ADD, "itti", sid, entry, alt, count);
    if (rc == AM_OK && count < 0) /* a replay took choices away: none left, no row */
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_DROP_EMPTY, "itt", sid, entry, alt);
    return rc;
}

int am_store_tx_choice_incr(am_store_tx *tx, const char *session, const char *entry,
                            const char *alt)
{
    if (!entry || !alt)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_CHOICE_INCR, "itt", sid, entry, alt);
    return rc;
}

int am_store_choices_each(am_store *st, const char *session, const char *entry,
                          am_store_count_fn fn, void *ctx)
{
    if (!session || !entry)
        return AM_ERR_INVALID;
    store_rows rows = {.kinds = "ti"}; /* alt, count */
    am_store_rtx r;
    int64_t sid;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        rc = store_each(st, r.t.c, AM_S_CHOICE_EACH, store_collect, &rows, "it", sid, entry);
        rtx_close(&r);
    }
    for (size_t k = 0; k < rows.n && rc == AM_OK; k++)
        rc = fn(ctx, cell(&rows, k)[0].s, cell(&rows, k)[1].i);
    store_rows_free(&rows);
    return rc;
}

/* The rows of am_store_choices_each, in the snapshot rtx: fn runs on the
 * rows as they are stepped (it must not use the store). */
int am_store_tx_choices_each(am_store_rtx *rtx, const char *session, const char *entry,
                             am_store_count_fn fn, void *ctx)
{
    if (!session || !entry || !fn)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(&rtx->t, session, &sid);
    store_counts p = {fn, ctx};
    return rc ? rc
              : store_each(rtx->t.st, rtx->t.c, AM_S_CHOICE_EACH, store_count_row, &p, "it", sid,
                           entry);
}

/* The first segment scored with each glossary version (a skip scan of the
 * segments_glossary index: one seek per distinct version, no row read),
 * collected in one read snapshot, then fn(ctx, seq, version) in seq order,
 * leaving out the first segment's own version: the points where the
 * version changed. The versions below the session's rescore floor
 * (schema/015) count as the floor: a rescore scored those segments again
 * with it, so they are one version whose first segment is the first of
 * them (the rows come in seq order). */
int am_store_glossary_changes(am_store *st, const char *session, am_store_gchange_fn fn, void *ctx)
{
    if (!session || !fn)
        return AM_ERR_INVALID;
    store_rows rows = {.kinds = "ii"}; /* first seq, version */
    am_store_rtx r;
    int64_t sid, floor = 0;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        rc = store_get(st, r.t.c, AM_S_GV_FLOOR, COLS(col_int(&floor)), "i", sid);
        if (rc == AM_OK)
            rc = store_each(st, r.t.c, AM_S_SEG_GLOSSARY_CHANGES, store_collect, &rows, "i", sid);
        rtx_close(&r);
    }
    int floor_seen = 0;
    for (size_t k = 0, out = 0; k < rows.n && rc == AM_OK; k++) {
        int64_t v = cell(&rows, k)[1].i;
        if (v <= floor && floor_seen)
            continue; /* counted as the floor, which came first */
        floor_seen |= v <= floor;
        if (out++ > 0)
            rc = fn(ctx, cell(&rows, k)[0].i, v > floor ? v : floor);
    }
    store_rows_free(&rows);
    return rc;
}
