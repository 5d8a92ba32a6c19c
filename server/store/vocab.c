/*
 * store/vocab.c — a session's vocabulary history (vocab and
 * occurrences: bump, remove, insert, clear, a word's history) and
 * background vocabularies (uploaded and dropped in chunks).
 */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* occ of word in the session (0 when absent), on tx's connection. */
static int occ_get(am_store_tx *tx, int64_t sid, const char *word, int64_t *occ)
{
    *occ = 0;
    int rc = store_get(tx->st, tx->c, AM_S_VOCAB_GET, COLS(col_int(occ)), "it", sid, word);
    return rc == AM_ERR_NOTFOUND ? AM_OK : rc;
}

int am_store_tx_vocab_get(am_store_rtx *rtx, const char *session, const char *word, int64_t *occ)
{
    *occ = 0;
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(&rtx->t, session, &sid);
    return rc ? rc : occ_get(&rtx->t, sid, word, occ);
}

int am_store_tx_vocab_bump(am_store_tx *tx, const char *session, const char *word, int64_t seq,
                           int64_t *occ_before)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    if (occ_before) {
        /* A separate lookup (the page is then hot for the upsert): an
         * upsert with RETURNING would need a statement journal (a 64 KiB
         * allocation per statement). */
        rc = occ_get(tx, sid, word, occ_before);
        if (rc)
            return rc;
    }
    rc = am_exec(tx->st, tx->c, AM_S_VOCAB_UPSERT, "iti", sid, word, seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT, "iti", sid, word, seq);
    return rc;
}

int am_store_tx_vocab_incr(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    return am_store_tx_vocab_bump(tx, session, word, seq, NULL);
}

int am_store_tx_vocab_put(am_store_tx *tx, const char *session, const char *word, int64_t occ,
                          int64_t first_seq, int64_t last_seq)
{
    if (!word || occ < 1 || first_seq > last_seq)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    return rc ? rc
              : am_exec(tx->st, tx->c, AM_S_VOCAB_PUT, "itiii", sid, word, occ, first_seq,
                        last_seq);
}

int am_store_tx_occ_put(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    return rc ? rc : am_exec(tx->st, tx->c, AM_S_OCC_INSERT, "iti", sid, word, seq);
}

int am_store_tx_occ_drop(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    return rc ? rc : am_exec(tx->st, tx->c, AM_S_OCC_DELETE, "iti", sid, word, seq);
}

int am_store_tx_vocab_set(am_store_tx *tx, const char *session, const char *word, int64_t occ,
                          int64_t first_seq, int64_t last_seq)
{
    if (!word || occ < 0 || (occ > 0 && first_seq > last_seq))
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK && occ == 0)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_DEL, "it", sid, word);
    else if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_SET, "itiii", sid, word, occ, first_seq, last_seq);
    return rc;
}

/* Appends s as a JSON string ('"', '\\' and control characters escaped;
 * UTF-8 passes through). */
static void json_str_append(am_buf *b, const char *s)
{
    am_buf_appendc(b, '"');
    const char *run = s; /* the bytes since the last escape, appended at once */
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        am_buf_append(b, run, (size_t)(s - run));
        run = s + 1;
        if (c < 0x20) {
            am_buf_printf(b, "\\u%04x", (unsigned)c);
        } else {
            am_buf_appendc(b, '\\');
            am_buf_appendc(b, (char)c);
        }
    }
    am_buf_append(b, run, (size_t)(s - run));
    am_buf_appendc(b, '"');
}

/* The n NUL-separated words as a JSON array into arr (initialized by the
 * caller, who cleans it up), which json_each() turns into rows. */
void store_words_json(am_buf *arr, const char *words, size_t n)
{
    am_buf_appendc(arr, '[');
    const char *w = words;
    for (size_t i = 0; i < n; i++) {
        if (i)
            am_buf_appendc(arr, ',');
        json_str_append(arr, w);
        w += strlen(w) + 1;
    }
    am_buf_appendc(arr, ']');
}

int am_store_tx_vocab_incr_all(am_store_tx *tx, const char *session, const char *words, size_t n,
                               int64_t seq)
{
    if (n == 0)
        return AM_OK;
    if (!words)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc)
        return rc;
    am_buf arr;
    am_buf_init(&arr);
    store_words_json(&arr, words, n);
    rc = am_exec(tx->st, tx->c, AM_S_VOCAB_UPSERT_ALL, "iti", sid, am_buf_str(&arr), seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT_ALL, "iti", sid, am_buf_str(&arr), seq);
    am_buf_cleanup(&arr);
    return rc;
}

/* The session's sid in *sid, for a rewrite of its word history in tx. In
 * PostgreSQL the session's row is locked first (drv_pg.c): with several
 * nodes, two settles (a replay's, another node's POST's every settle-every-th seq)
 * would otherwise both add the same pending words to vocab, and a clear
 * could interleave with a settle; SQLite's one writer serializes them
 * already. */
static int locked_sid(am_store_tx *tx, const char *session, int64_t *sid)
{
    if (!tx->st->pg)
        return am_tx_sid(tx, session, sid);
    am_store_state now;
    int rc = am_store_tx_session_info(am_store_tx_reads(tx), session, &now);
    *sid = tx->sid;
    return rc;
}

/* SETTLE_VOCAB upserts each occurrence: grouping them first (GROUP BY, a
 * sorter with its temporary file) cost more than the upserts it saved
 * (bench/README.md, eighth session). */
int am_store_tx_history_settle(am_store_tx *tx, const char *session)
{
    static const enum am_stmt_id steps[] = {AM_S_SETTLE_VOCAB, AM_S_SETTLE_OCC, AM_S_PENDING_CLEAR};
    int64_t sid;
    int rc = locked_sid(tx, session, &sid);
    return rc ? rc : store_exec_sid(tx, sid, steps, sizeof steps / sizeof steps[0]);
}

/* Passes each (text, count) row of statement id for the session's sid to
 * fn (store_count_row). */
static int counts_each(am_store_rtx *rtx, const char *session, enum am_stmt_id id,
                       am_store_count_fn fn, void *ctx)
{
    int64_t sid;
    int rc = am_tx_sid(&rtx->t, session, &sid);
    if (rc != AM_OK)
        return rc;
    store_counts p = {fn, ctx};
    return store_each(rtx->t.st, rtx->t.c, id, store_count_row, &p, "i", sid);
}

int am_store_tx_pending_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn,
                             void *ctx)
{
    return counts_each(rtx, session, AM_S_PENDING_EACH, fn, ctx);
}

int am_store_tx_vocab_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn, void *ctx)
{
    return counts_each(rtx, session, AM_S_VOCAB_EACH, fn, ctx);
}

int am_store_tx_occ_each(am_store_rtx *rtx, const char *session, am_store_count_fn fn, void *ctx)
{
    return counts_each(rtx, session, AM_S_OCC_EACH, fn, ctx);
}

int am_store_tx_history_clear(am_store_tx *tx, const char *session)
{
    /* RESULT_CLEAR: every result is rewritten into segments.result */
    static const enum am_stmt_id steps[] = {
        AM_S_VOCAB_CLEAR,  AM_S_OCC_CLEAR,  AM_S_PENDING_CLEAR, AM_S_TOTALS_CLEAR,
        AM_S_CHOICE_CLEAR, AM_S_CKPT_CLEAR, AM_S_RESULT_CLEAR,  AM_S_SESSION_BUMP};
    int64_t sid;
    int rc = locked_sid(tx, session, &sid);
    return rc ? rc : store_exec_sid(tx, sid, steps, sizeof steps / sizeof steps[0]);
}

int am_store_tx_vocab_remove(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_DELETE, "iti", sid, word, seq);
    if (rc == AM_OK && am_changes(tx->c) == 0)
        return AM_ERR_NOTFOUND;
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_SHRINK, "it", sid, word);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_DROP_EMPTY, "it", sid, word);
    return rc;
}

int am_store_tx_vocab_insert(am_store_tx *tx, const char *session, const char *word, int64_t seq)
{
    if (!word)
        return AM_ERR_INVALID;
    int64_t sid;
    int rc = am_tx_sid(tx, session, &sid);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_VOCAB_WIDEN, "iti", sid, word, seq);
    if (rc == AM_OK)
        rc = am_exec(tx->st, tx->c, AM_S_OCC_INSERT, "iti", sid, word, seq);
    return rc;
}

int am_store_tx_background_get(am_store_rtx *rtx, const char *name, const char *word,
                               int64_t *count)
{
    *count = 0;
    if (!name || !word)
        return AM_ERR_INVALID;
    int rc = store_get(rtx->t.st, rtx->t.c, AM_S_BG_GET, COLS(col_int(count)), "tt", name, word);
    return rc == AM_ERR_NOTFOUND ? AM_OK : rc;
}

int am_store_word_history(am_store *st, const char *session, const char *word, int64_t *occ,
                          am_store_seq_fn fn, void *ctx)
{
    if (occ)
        *occ = 0;
    if (!session || !word)
        return AM_ERR_INVALID;
    store_rows rows = {.kinds = "i"}; /* seq */
    am_store_rtx r;
    int64_t sid;
    int rc = rtx_open_sid(st, &r, session, &sid);
    if (rc == AM_OK) {
        /* the settled history (vocab, occurrences), then the pending
         * segments after it (schema/009) */
        int64_t settled = 0;
        rc = store_get(st, r.t.c, AM_S_VOCAB_GET, COLS(col_int(&settled)), "it", sid, word);
        int found = rc == AM_OK;
        if (found && fn)
            rc = store_each(st, r.t.c, AM_S_OCC_SEQS, store_collect, &rows, "it", sid, word);
        else if (rc == AM_ERR_NOTFOUND)
            rc = AM_OK;
        size_t n_settled = rows.n;
        if (rc == AM_OK)
            rc = store_each(st, r.t.c, AM_S_PENDING_SEQS, store_collect, &rows, "it", sid, word);
        if (rc == AM_OK && !found && rows.n == 0)
            rc = AM_ERR_NOTFOUND;
        if (rc == AM_OK && occ)
            *occ = settled + (int64_t)(rows.n - n_settled);
        rtx_close(&r);
    }
    for (size_t k = 0; k < rows.n && rc == AM_OK && fn; k++)
        rc = fn(ctx, cell(&rows, k)[0].i);
    store_rows_free(&rows);
    return rc;
}

/* ---- background vocabularies ---------------------------------------------- */

/* Background vocabularies are written and dropped in chunks of
 * AM_VOCAB_CHUNK rows, one short write transaction each, so that an upload
 * of millions of words never holds the writer for long: the words go into a
 * hidden vocabulary (a name starting with '~', which no vocabulary id can
 * have), which one short transaction then renames to the real name while
 * the previous one is renamed away; that one is then deleted chunk by
 * chunk. Hidden vocabularies left by a crash are deleted at open. */
#define AM_VOCAB_CHUNK 4096

/* A fresh hidden name "~kind~name~n" into out. */
static void vocab_hidden_name(am_store *st, const char *kind, const char *name, char *out, size_t n)
{
    unsigned long long k = (unsigned long long)atomic_fetch_add(&st->hidden_seq, 1);
    snprintf(out, n, "~%s~%.200s~%llu~%lld", kind, name, k, (long long)time(NULL));
}

/* Deletes vocabulary vid: its words a chunk per write transaction, then its
 * row. A chunk is deleted as a key range up to its last word
 * (VOCABULARY_WORDS_CHUNK): "word IN (SELECT … LIMIT n)" built the list of
 * words and then looked each one up, 30% more CPU (2.9 µs a word). */
static int vocab_drop(am_store *st, int64_t vid)
{
    for (;;) {
        int rc = am_w_begin(st);
        if (rc)
            return rc;
        am_q q;
        int more = 0;
        rc = am_q_open(st, &st->w, AM_S_VOCABULARY_WORDS_CHUNK, &q, "ii", vid,
                       (int64_t)AM_VOCAB_CHUNK);
        if (rc == AM_OK) {
            rc = am_q_step(st, &q);
            rc = rc > 0 ? AM_OK : rc;
            more = rc == AM_OK && am_changes(&st->w) > 0;
            /* counted with the session purges (am_store_purge_steps) */
            atomic_fetch_add(&(st->parent ? st->parent : st)->purge_steps,
                             (long long)am_q_steps(&q));
            am_q_close(&q);
        }
        if (rc == AM_OK && !more)
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_DROP_VID, "i", vid);
        rc = am_w_end(st, rc);
        if (rc || !more)
            return rc;
        am_w_handoff(st);
    }
}

/* The vid of vocabulary name (AM_ERR_NOTFOUND), on the writer (locked by
 * the caller). */
static int vocab_vid(am_store *st, const char *name, int64_t *vid)
{
    return store_get(st, &st->w, AM_S_VOCABULARY_VID, COLS(col_int(vid)), "t", name);
}

/* Deletes the hidden vocabularies a crash left behind (at open). */
int vocab_cleanup(am_store *st)
{
    store_ids ids = {.n = 0};
    am_w_lock(st);
    int rc = store_each(st, &st->w, AM_S_VOCABULARY_HIDDEN, store_ids_push, &ids, "");
    am_w_unlock(st);
    rc = rc > 0 ? AM_OK : rc; /* the first 64; the others at the next open */
    for (size_t i = 0; i < ids.n && rc == AM_OK; i++)
        rc = vocab_drop(st, ids.v[i]);
    return rc;
}

void am_store_vocab_meta_clear(am_store_vocab_meta *m)
{
    free(m->tokenizer);
    free(m->lang);
    free(m->source_lang);
    memset(m, 0, sizeof *m);
}

int am_store_vocabulary_put(am_store *st, const char *name, const char *const *words,
                            const int64_t *counts, size_t n, int64_t now_ms)
{
    return am_store_vocabulary_put_meta(st, name, words, counts, n, now_ms, NULL);
}

int am_store_vocabulary_put_meta(am_store *st, const char *name, const char *const *words,
                                 const int64_t *counts, size_t n, int64_t now_ms,
                                 const am_store_vocab_meta *meta)
{
    if (!name || (n && (!words || !counts)))
        return AM_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!words[i])
            return AM_ERR_INVALID;
    char stage[300];
    vocab_hidden_name(st, "new", name, stage, sizeof stage);
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    int64_t vid = 0;
    rc = store_get(st, &st->w, AM_S_VOCABULARY_INSERT, COLS(col_int(&vid)), "tittt", stage, now_ms,
                   meta ? meta->tokenizer : NULL, meta ? meta->lang : NULL,
                   meta ? meta->source_lang : NULL);
    rc = am_w_end(st, rc == AM_ERR_NOTFOUND ? AM_ERR_INTERNAL : rc); /* RETURNING: one row */
    if (rc)
        return rc;
    /* the words, a chunk per transaction, into the hidden vocabulary */
    for (size_t i = 0; i < n && rc == AM_OK; i += AM_VOCAB_CHUNK) {
        rc = am_w_begin(st);
        if (rc)
            break;
        for (size_t k = i; k < n && k < i + AM_VOCAB_CHUNK && rc == AM_OK; k++)
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_WORD, "iti", vid, words[k], counts[k]);
        rc = am_w_end(st, rc);
        am_w_handoff(st);
    }
    /* the switch: the old one (if any) renamed away, the new one named */
    int64_t old = 0;
    if (rc == AM_OK) {
        rc = am_w_begin(st);
        if (rc == AM_OK) {
            rc = am_exec(st, &st->w, AM_S_VOCABULARY_SIZE, "i", vid);
            int r = rc == AM_OK ? vocab_vid(st, name, &old) : rc;
            if (r == AM_OK) {
                char away[300];
                vocab_hidden_name(st, "old", name, away, sizeof away);
                rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", old, away);
            } else if (r != AM_ERR_NOTFOUND) {
                rc = r;
            }
            if (rc == AM_OK)
                rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", vid, name);
            rc = am_w_end(st, rc);
        }
    }
    if (rc != AM_OK) {
        vocab_drop(st, vid); /* what remains is deleted at the next open */
        return rc;
    }
    if (old)
        vocab_drop(st, old); /* idem */
    return AM_OK;
}

int am_store_vocabulary_info(am_store *st, const char *name, int64_t *words, int64_t *created_at)
{
    if (!name)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc = store_get(st, c, AM_S_VOCABULARY_INFO, COLS(col_int(words), col_int(created_at)), "t",
                       name);
    am_reader_put(c);
    return rc;
}

int am_store_vocabulary_meta(am_store *st, const char *name, am_store_vocab_meta *out)
{
    memset(out, 0, sizeof *out);
    if (!name)
        return AM_ERR_INVALID;
    am_conn *c = am_reader_get(st);
    int rc =
        store_get(st, c, AM_S_VOCABULARY_META,
                  COLS(col_int(&out->words), col_int(&out->created_at), col_str(&out->tokenizer),
                       col_str(&out->lang), col_str(&out->source_lang)),
                  "t", name);
    am_reader_put(c);
    return rc;
}

int am_store_vocabulary_delete(am_store *st, const char *name)
{
    if (!name)
        return AM_ERR_INVALID;
    /* renamed away at once (the name is free when this returns), then
     * deleted in chunks */
    int64_t vid = 0;
    int rc = am_w_begin(st);
    if (rc)
        return rc;
    rc = vocab_vid(st, name, &vid);
    if (rc == AM_OK) {
        char away[300];
        vocab_hidden_name(st, "del", name, away, sizeof away);
        rc = am_exec(st, &st->w, AM_S_VOCABULARY_RENAME, "it", vid, away);
    }
    rc = am_w_end(st, rc);
    if (rc == AM_OK)
        vocab_drop(st, vid); /* what remains is deleted at the next open */
    return rc;
}

int am_store_vocabulary_each(am_store *st, const char *name, am_store_count_fn fn, void *ctx)
{
    if (!name)
        return AM_ERR_INVALID;
    store_counts e = {fn, ctx};
    am_store_rtx r;
    int rc = rtx_open(st, &r);
    if (rc == AM_OK) {
        int64_t vid = 0;
        rc = store_get(st, r.t.c, AM_S_VOCABULARY_VID, COLS(col_int(&vid)), "t", name);
        if (rc == AM_OK)
            rc = store_each(st, r.t.c, AM_S_VOCABULARY_EACH, store_count_row, &e, "i", vid);
        rtx_close(&r);
    }
    return rc;
}
