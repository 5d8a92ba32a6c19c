/*
 * cli_migrate_copy.c — the copy of `adaptmon migrate` (see cli_migrate.c):
 * each source's tables streamed from its read snapshot into the target
 * with COPY … FROM STDIN (text format), parents first, in the one open
 * transaction.
 *
 * Keys: every sid of source s becomes sid + s->sid_off, where sid_off is
 * the target's highest sid when s starts (0 for the first file into an
 * empty target: its sids are kept), so the sources land in disjoint,
 * ordered ranges; seqs, generations, versions and incarnations are copied
 * as they are. A background vocabulary (global, by name) that the target
 * already holds with the same words, counts and tokenizer is merged (the
 * shards of a fleet each got the same upload); one that differs is
 * refused. The counters take the highest value seen, and the identities
 * and the incarnation counter end above every copied row
 * (am_mg_sequences), so the next session a server creates collides with
 * nothing copied.
 */
#include "cli_migrate.h"
#include "cli_migrate_sql.h"
#include "clock.h"

#include <stdlib.h>
#include <string.h>

/* Bytes buffered before a PQputCopyData. */
#define AM_MG_COPY_CHUNK (1u << 20)

/* ---- COPY streams ------------------------------------------------------------ */

/* Starts `sql` (a COPY … FROM STDIN). */
static int am_mg_copy_begin(am_mg *m, const char *sql, am_buf *err)
{
    PGresult *r = PQexec(m->pg, sql);
    int ok = PQresultStatus(r) == PGRES_COPY_IN;
    if (!ok)
        am_buf_printf(err, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? AM_OK : AM_ERR_IO;
}

/* Sends b's bytes (then empties b) when it holds a chunk, or always when
 * final. */
static int am_mg_copy_flush(am_mg *m, am_buf *b, int final, am_buf *err)
{
    if (!b->len || (!final && b->len < AM_MG_COPY_CHUNK))
        return AM_OK;
    if (PQputCopyData(m->pg, b->data, (int)b->len) != 1) {
        am_buf_printf(err, "sending rows failed: %s", PQerrorMessage(m->pg));
        return AM_ERR_IO;
    }
    am_buf_reset(b);
    return AM_OK;
}

/* Ends the COPY: with ok, its result (the rows the server stored into
 * *rows); else aborted (the transaction is then failed, and rolled back
 * by the caller). */
static int am_mg_copy_end(am_mg *m, int ok, int64_t *rows, const char *table, am_buf *err)
{
    int rc = ok ? AM_OK : AM_ERR_IO;
    if (PQputCopyEnd(m->pg, ok ? NULL : "adaptmon migrate: aborted") != 1 && rc == AM_OK) {
        am_buf_printf(err, "copying %s failed: %s", table, PQerrorMessage(m->pg));
        rc = AM_ERR_IO;
    }
    PGresult *r;
    while ((r = PQgetResult(m->pg)) != NULL) {
        if (PQresultStatus(r) == PGRES_COMMAND_OK) {
            if (rows)
                *rows = strtoll(PQcmdTuples(r), NULL, 10);
        } else if (rc == AM_OK) {
            am_buf_printf(err, "copying %s failed: %s", table, PQresultErrorMessage(r));
            rc = AM_ERR_IO;
        }
        PQclear(r);
    }
    return rc;
}

/* Appends text t (n bytes) to b escaped for COPY's text format. */
static void am_mg_copy_text(am_buf *b, const char *t, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = NULL;
        switch (t[i]) {
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: continue;
        }
        am_buf_append(b, t + from, i - from);
        am_buf_appends(b, esc);
        from = i + 1;
    }
    am_buf_append(b, t + from, n - from);
}

/* ---- ids the target holds already ---------------------------------------------- */

int am_mg_ids_free(am_mg *m, am_buf *err)
{
    int rc = am_mg_pq(m, AM_MGP_IDS_TEMP, 0, NULL, NULL, "creating a temporary table", err);
    if (rc == AM_OK)
        rc = am_mg_copy_begin(m, AM_MGP_IDS_COPY, err);
    if (rc != AM_OK)
        return rc;
    am_buf b;
    am_buf_init(&b);
    for (size_t i = 0; i < m->nsrc && rc == AM_OK; i++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(m->src[i].db, AM_MGL_SESSION_IDS, -1, &s, NULL) != SQLITE_OK) {
            rc = am_mg_lite_fail(m->src[i].db, m->src[i].path, "reading its sessions failed", err);
            break;
        }
        while (rc == AM_OK && sqlite3_step(s) == SQLITE_ROW) {
            am_mg_copy_text(&b, (const char *)sqlite3_column_text(s, 0),
                            (size_t)sqlite3_column_bytes(s, 0));
            am_buf_appendc(&b, '\n');
            rc = am_mg_copy_flush(m, &b, 0, err);
        }
        sqlite3_finalize(s);
    }
    if (rc == AM_OK)
        rc = am_mg_copy_flush(m, &b, 1, err);
    am_buf_cleanup(&b);
    rc = am_mg_copy_end(m, rc == AM_OK, NULL, "the session ids", err);
    int64_t taken = 0;
    if (rc == AM_OK)
        rc = am_mg_pq_int(m, AM_MGP_IDS_TAKEN_N, 0, NULL, &taken, "looking up the ids", err);
    if (rc != AM_OK || taken == 0)
        return rc;
    PGresult *r = NULL;
    rc = am_mg_pq(m, AM_MGP_IDS_TAKEN, 0, NULL, &r, "looking up the ids", err);
    if (rc != AM_OK)
        return rc;
    am_buf_printf(err, "the target holds %lld session%s with the ids of sessions to copy (",
                  (long long)taken, taken == 1 ? "" : "s");
    for (int i = 0; i < PQntuples(r) && i < 5; i++)
        am_buf_printf(err, "%s'%s'", i ? ", " : "", PQgetvalue(r, i, 0));
    am_buf_printf(err,
                  "%s): was it migrated already? Delete them there or migrate into "
                  "another database",
                  taken > 5 ? ", …" : "");
    PQclear(r);
    return AM_ERR_CONFLICT;
}

/* ---- background vocabularies ---------------------------------------------------- */

/* FNV-1a of a vocabulary's (word, count) rows in word order, read by the
 * SQLite statement s (stepped to the end) or the PostgreSQL result r. */
static uint64_t am_mg_words_hash_lite(sqlite3_stmt *s, int64_t *n)
{
    uint64_t h = AM_FNV64_BASIS;
    *n = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        h = am_fnv1a_n(h, sqlite3_column_text(s, 0), (size_t)sqlite3_column_bytes(s, 0) + 1);
        int64_t c = sqlite3_column_int64(s, 1);
        h = am_fnv1a_n(h, &c, sizeof c);
        ++*n;
    }
    return h;
}

static uint64_t am_mg_words_hash_pg(PGresult *r)
{
    uint64_t h = AM_FNV64_BASIS;
    for (int i = 0; i < PQntuples(r); i++) {
        const char *w = PQgetvalue(r, i, 0);
        h = am_fnv1a_n(h, w, strlen(w) + 1);
        int64_t c = strtoll(PQgetvalue(r, i, 1), NULL, 10);
        h = am_fnv1a_n(h, &c, sizeof c);
    }
    return h;
}

/* Are two nullable texts equal? */
static int am_mg_same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Is the source vocabulary of row v (AM_MGL_VOCABS) equal to the
 * target's row r (AM_MGP_VOCAB_FIND): same size, tokenizer, languages and
 * the same words with the same counts? */
static int am_mg_vocab_same(am_mg *m, am_mg_src *s, sqlite3_stmt *v, PGresult *r, int *same,
                            am_buf *err)
{
    const char *meta[3];
    for (int k = 0; k < 3; k++)
        meta[k] = PQgetisnull(r, 0, 2 + k) ? NULL : PQgetvalue(r, 0, 2 + k);
    *same = sqlite3_column_int64(v, 2) == strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    for (int k = 0; k < 3 && *same; k++)
        *same = am_mg_same_text((const char *)sqlite3_column_text(v, 3 + k), meta[k]);
    if (!*same)
        return AM_OK;
    sqlite3_stmt *w = NULL;
    if (sqlite3_prepare_v2(s->db, AM_MGL_VOCAB_WORDS, -1, &w, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "reading a vocabulary failed", err);
    sqlite3_bind_int64(w, 1, sqlite3_column_int64(v, 0));
    int64_t n = 0;
    uint64_t h = am_mg_words_hash_lite(w, &n);
    sqlite3_finalize(w);
    const char *p[1] = {PQgetvalue(r, 0, 0)};
    PGresult *words = NULL;
    int rc = am_mg_pq(m, AM_MGP_VOCAB_WORDS, 1, p, &words, "reading a vocabulary", err);
    if (rc != AM_OK)
        return rc;
    *same = PQntuples(words) == n && am_mg_words_hash_pg(words) == h;
    PQclear(words);
    return AM_OK;
}

static int am_mg_vmap_cmp(const void *a, const void *b)
{
    const am_mg_vmap *x = a, *y = b;
    return (x->src > y->src) - (x->src < y->src);
}

/* s->vmap: where each visible vocabulary of s goes (s->vid_off set). */
static int am_mg_vocab_plan(am_mg *m, am_mg_src *s, am_buf *err)
{
    sqlite3_stmt *v = NULL;
    if (sqlite3_prepare_v2(s->db, AM_MGL_VOCABS, -1, &v, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "reading its vocabularies failed", err);
    int rc = AM_OK;
    while (rc == AM_OK && sqlite3_step(v) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(v, 1);
        s->vmap = am_xrealloc(s->vmap, (s->nvmap + 1) * sizeof *s->vmap);
        am_mg_vmap *e = &s->vmap[s->nvmap++];
        e->src = sqlite3_column_int64(v, 0);
        e->dst = e->src + s->vid_off;
        e->merged = 0;
        PGresult *r = NULL;
        const char *p[1] = {name};
        rc = am_mg_pq(m, AM_MGP_VOCAB_FIND, 1, p, &r, "looking up a vocabulary", err);
        if (rc != AM_OK || PQntuples(r) == 0) {
            PQclear(r);
            continue;
        }
        int same = 0;
        rc = am_mg_vocab_same(m, s, v, r, &same, err);
        if (rc == AM_OK && !same) {
            am_buf_printf(err,
                          "background vocabulary '%s' of %s differs from the one of that name "
                          "in the target (or an earlier --from): rename or delete one of them",
                          name, s->path);
            rc = AM_ERR_CONFLICT;
        }
        e->dst = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        e->merged = 1;
        s->merged_vocabs++;
        PQclear(r);
    }
    sqlite3_finalize(v);
    qsort(s->vmap, s->nvmap, sizeof *s->vmap, am_mg_vmap_cmp);
    return rc;
}

/* The map entry of source vid, or NULL (a hidden vocabulary's). */
static const am_mg_vmap *am_mg_vmap_find(const am_mg_src *s, int64_t vid)
{
    am_mg_vmap key = {vid, 0, 0};
    return s->nvmap ? bsearch(&key, s->vmap, s->nvmap, sizeof key, am_mg_vmap_cmp) : NULL;
}

/* ---- tables ------------------------------------------------------------------------ */

/* The counters: each source's value, or the target's when higher. */
static int am_mg_copy_counters(am_mg *m, am_mg_src *s, int64_t *rows, am_buf *err)
{
    sqlite3_stmt *c = NULL;
    if (sqlite3_prepare_v2(s->db, AM_MGL_COUNTERS, -1, &c, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "reading its counters failed", err);
    int rc = AM_OK;
    while (rc == AM_OK && sqlite3_step(c) == SQLITE_ROW) {
        char v[24];
        snprintf(v, sizeof v, "%lld", (long long)sqlite3_column_int64(c, 1));
        const char *p[2] = {(const char *)sqlite3_column_text(c, 0), v};
        rc = am_mg_pq(m, AM_MGP_COUNTER_MAX, 2, p, NULL, "copying the counters", err);
        ++*rows;
    }
    sqlite3_finalize(c);
    return rc;
}

/* One row of statement q (table t of source s) as a COPY line into b;
 * *skip set for a row of a merged vocabulary. */
static int am_mg_copy_row(const am_mg_src *s, const am_mg_table *t, sqlite3_stmt *q, am_buf *b,
                          int *skip, am_buf *err)
{
    *skip = 0;
    size_t start = b->len;
    for (size_t k = 0; k < t->ncols; k++) {
        if (k)
            am_buf_appendc(b, '\t');
        int type = sqlite3_column_type(q, (int)k);
        if (type == SQLITE_NULL) {
            am_buf_appends(b, "\\N");
        } else if (type == SQLITE_INTEGER) {
            int64_t v = sqlite3_column_int64(q, (int)k);
            if ((int)k == t->key && (t->kind == AM_MG_SESSIONS || t->kind == AM_MG_PER_SESSION)) {
                v += s->sid_off;
            } else if ((int)k == t->key) {
                const am_mg_vmap *e = am_mg_vmap_find(s, v);
                if (!e || e->merged) {
                    *skip = 1;
                    break;
                }
                v = e->dst;
            }
            am_buf_printf(b, "%lld", (long long)v);
        } else if (type == SQLITE_FLOAT) {
            am_buf_printf(b, "%.17g", sqlite3_column_double(q, (int)k));
        } else if (type == SQLITE_TEXT) {
            const char *txt = (const char *)sqlite3_column_text(q, (int)k);
            size_t n = (size_t)sqlite3_column_bytes(q, (int)k);
            if (memchr(txt, '\0', n)) {
                am_buf_printf(err,
                              "%s: a text of table %s holds a NUL byte, which PostgreSQL "
                              "cannot store",
                              s->path, t->name);
                return AM_ERR_INVALID;
            }
            am_mg_copy_text(b, txt, n);
        } else {
            am_buf_printf(err,
                          "%s: table %s holds a blob in column %s, which adaptmon never "
                          "writes",
                          s->path, t->name, t->cols[k]);
            return AM_ERR_INVALID;
        }
    }
    if (*skip) {
        b->len = start;
        if (b->data) /* an empty am_buf has no storage yet */
            b->data[start] = '\0';
    } else {
        am_buf_appendc(b, '\n');
    }
    return AM_OK;
}

/* Copies the visible rows of table t of source s; *rows receives the
 * number stored. */
static int am_mg_copy_table(am_mg *m, am_mg_src *s, const am_mg_table *t, int64_t *rows,
                            am_buf *err)
{
    am_buf cols, sql;
    am_buf_init(&cols);
    am_buf_init(&sql);
    for (size_t k = 0; k < t->ncols; k++)
        am_buf_printf(&cols, "%s\"%s\"", k ? ", " : "", t->cols[k]);
    am_buf_printf(&sql, "SELECT %s FROM \"%s\" WHERE %s", am_buf_str(&cols), t->name,
                  am_mg_filter(t));
    sqlite3_stmt *q = NULL;
    int rc = AM_OK;
    if (sqlite3_prepare_v2(s->db, am_buf_str(&sql), -1, &q, NULL) != SQLITE_OK)
        rc = am_mg_lite_fail(s->db, s->path, "reading a table failed", err);
    am_buf_reset(&sql);
    am_buf_printf(&sql, "COPY \"%s\" (%s) FROM STDIN", t->name, am_buf_str(&cols));
    if (rc == AM_OK)
        rc = am_mg_copy_begin(m, am_buf_str(&sql), err);
    if (rc != AM_OK) {
        sqlite3_finalize(q);
        am_buf_cleanup(&cols);
        am_buf_cleanup(&sql);
        return rc;
    }
    am_buf b;
    am_buf_init(&b);
    int step, skip;
    int64_t sent = 0;
    while (rc == AM_OK && (step = sqlite3_step(q)) == SQLITE_ROW) {
        rc = am_mg_copy_row(s, t, q, &b, &skip, err);
        sent += !skip;
        if (rc == AM_OK)
            rc = am_mg_copy_flush(m, &b, 0, err);
    }
    if (rc == AM_OK && step != SQLITE_DONE)
        rc = am_mg_lite_fail(s->db, s->path, "reading a table failed", err);
    if (rc == AM_OK)
        rc = am_mg_copy_flush(m, &b, 1, err);
    am_buf_cleanup(&b);
    sqlite3_finalize(q);
    rc = am_mg_copy_end(m, rc == AM_OK, rows, t->name, err);
    if (rc == AM_OK && *rows != sent) {
        am_buf_printf(err, "copying %s: %lld rows sent, the target stored %lld", t->name,
                      (long long)sent, (long long)*rows);
        rc = AM_ERR_IO;
    }
    am_buf_cleanup(&cols);
    am_buf_cleanup(&sql);
    return rc;
}

int am_mg_copy(am_mg *m, am_mg_src *s, am_buf *err)
{
    int64_t t0 = am_mono_ns();
    s->rows = am_xcalloc(m->ntables, sizeof *s->rows);
    int rc = am_mg_pq_int(m, AM_MGP_MAX_SID, 0, NULL, &s->sid_off, "reading the target", err);
    if (rc == AM_OK)
        rc = am_mg_pq_int(m, AM_MGP_MAX_VID, 0, NULL, &s->vid_off, "reading the target", err);
    if (rc == AM_OK)
        rc = am_mg_vocab_plan(m, s, err);
    for (size_t i = 0; i < m->ntables && rc == AM_OK; i++) {
        const am_mg_table *t = &m->tables[i];
        int64_t t1 = am_mono_ns();
        rc = t->kind == AM_MG_COUNTERS ? am_mg_copy_counters(m, s, &s->rows[i], err)
                                       : am_mg_copy_table(m, s, t, &s->rows[i], err);
        if (rc == AM_OK && s->rows[i] > 0)
            am_mg_say(m, "%s: %s: %lld rows (%.2f s)", s->path, t->name, (long long)s->rows[i],
                      (double)(am_mono_ns() - t1) / 1e9);
    }
    if (rc == AM_OK)
        am_mg_say(m, "%s: copied in %.1f s; sids %lld..%lld became %lld..%lld%s", s->path,
                  (double)(am_mono_ns() - t0) / 1e9, s->max_sid ? 1LL : 0LL, (long long)s->max_sid,
                  s->max_sid ? 1 + (long long)s->sid_off : 0LL,
                  (long long)(s->max_sid + (s->max_sid ? s->sid_off : 0)),
                  s->merged_vocabs ? "; equal vocabularies merged" : "");
    return rc;
}

int am_mg_sequences(am_mg *m, am_buf *err)
{
    int64_t has_seq = 0;
    int rc = am_mg_pq(m, AM_MGP_INCARNATION_FLOOR, 0, NULL, NULL, "setting the incarnations", err);
    if (rc == AM_OK)
        rc = am_mg_pq_int(m, AM_MGP_HAS_INCARNATION_SEQ, 0, NULL, &has_seq,
                          "looking up the incarnation sequence", err);
    if (rc == AM_OK && has_seq)
        rc = am_mg_pq(m, AM_MGP_INCARNATION_SEQ, 0, NULL, NULL, "setting the incarnations", err);
    PGresult *r = NULL;
    if (rc == AM_OK)
        rc = am_mg_pq(m, AM_MGP_IDENTITIES, 0, NULL, &r, "reading the identity columns", err);
    for (int i = 0; rc == AM_OK && i < PQntuples(r); i++) {
        const char *t = PQgetvalue(r, i, 0), *c = PQgetvalue(r, i, 1);
        am_buf sql;
        am_buf_init(&sql);
        am_buf_printf(&sql, AM_MGP_IDENTITY_RESET_FMT, t, c, c, t);
        rc = am_mg_pq(m, am_buf_str(&sql), 0, NULL, NULL, "resetting an identity", err);
        am_buf_cleanup(&sql);
    }
    PQclear(r);
    return rc;
}
