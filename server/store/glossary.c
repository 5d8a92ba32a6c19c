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
    if (rc == AM_OK && sqlite3_changes(st->w.db) == 0)
        rc = AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_glossary_keep(st, id, glossary_json);
    if (rc == AM_OK && new_version) {
        am_q q;
        rc = am_q_open(st, &st->w, AM_S_GLOSSARY_CUR, &q, "t", id);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            if (rc > 0) {
                *new_version = sqlite3_column_int64(q.s, 0);
                rc = AM_OK;
            } else if (rc == 0) {
                rc = AM_ERR_NOTFOUND;
            }
            am_q_close(&q);
        }
    }
    return am_w_end(st, rc);
}

int am_store_tx_glossary_version(am_store_tx *tx, const char *session, int64_t version,
                                 char **entries_json)
{
    *entries_json = NULL;
    if (version == 0)
        return AM_OK; /* no glossary */
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_q q;
    rc = am_q_open(tx->st, tx->c, AM_S_GLOSSARY_VERSION, &q, "ii", sid, version);
    if (rc)
        return rc;
    rc = am_q_step(tx->st, &q);
    if (rc > 0) {
        *entries_json = am_col_str(q.s, 0);
        rc = AM_OK;
    } else if (rc == 0) {
        rc = AM_ERR_NOTFOUND;
    }
    am_q_close(&q);
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
    am_kv *v = NULL;
    int64_t *counts = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_CHOICE_EACH, &q, "it", sid, entry);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                    counts = am_xrealloc(counts, cap * sizeof *counts);
                }
                v[k].a = am_col_str(q.s, 0);
                v[k].b = NULL;
                counts[k] = sqlite3_column_int64(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 0; i < k; i++) {
        if (rc == AM_OK) {
            int r = fn(ctx, v[i].a, counts[i]);
            if (r != 0)
                rc = r;
        }
        free(v[i].a);
    }
    free(v);
    free(counts);
    return rc;
}

/* The first segment scored with each glossary version (a skip scan of the
 * segments_glossary index: one seek per distinct version, no row read),
 * collected in one read snapshot, then fn(ctx, seq, version) in seq order,
 * leaving out the first segment's own version: the points where the
 * version changed. */
int am_store_glossary_changes(am_store *st, const char *session, am_store_gchange_fn fn, void *ctx)
{
    if (!session || !fn)
        return AM_ERR_INVALID;
    int64_t(*v)[2] = NULL;
    size_t k = 0, cap = 0;
    am_conn *c = am_reader_get(st);
    int rc = am_read_begin(st, c);
    if (rc == AM_OK) {
        int64_t sid;
        rc = am_sid(st, c, session, &sid);
        am_q q;
        if (rc == AM_OK)
            rc = am_q_open(st, c, AM_S_SEG_GLOSSARY_CHANGES, &q, "i", sid);
        if (rc == AM_OK) {
            while ((rc = am_q_step(st, &q)) > 0) {
                if (k == cap) {
                    cap = cap ? 2 * cap : 8;
                    v = am_xrealloc(v, cap * sizeof *v);
                }
                v[k][0] = sqlite3_column_int64(q.s, 0);
                v[k][1] = sqlite3_column_int64(q.s, 1);
                k++;
            }
            am_q_close(&q);
        }
        am_read_end(st, c);
    }
    am_reader_put(c);
    for (size_t i = 1; i < k && rc == AM_OK; i++) {
        int r = fn(ctx, v[i][0], v[i][1]);
        if (r != 0)
            rc = r;
    }
    free(v);
    return rc;
}
