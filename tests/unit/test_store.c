/* test_store.c — the SQLite store: sessions, write transactions (commit and
 * rollback), segment reads, :memory:, errors, incarnations and glossary
 * versions, the reader pool and lock order. Vocabularies are tested in
 * test_store_vocab.c, the database files (backups, migrations, durability,
 * concurrency, the WAL) in test_store_files.c. Every test works in its own
 * temporary directory (store_fixture.h). */
#include "store_fixture.h"
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "embedded.h"
#include "store.h"

/* Read and write transactions are distinct types (checked at compile
 * time): a snapshot cannot be passed where a write function wants its
 * transaction, the reads take an am_store_rtx, and a write transaction's
 * reads are am_store_tx_reads(tx). */
_Static_assert(_Generic((am_store_rtx *)0, am_store_tx * : 0, default : 1),
               "a read transaction must not convert to a write transaction");
_Static_assert(_Generic(&am_store_rtx_begin, int (*)(am_store *, am_store_rtx **) : 1, default : 0),
               "am_store_rtx_begin gives an am_store_rtx");
_Static_assert(_Generic(&am_store_tx_vocab_get,
                        int (*)(am_store_rtx *, const char *, const char *, int64_t *) : 1,
                        default : 0),
               "reads take a read transaction");
_Static_assert(_Generic(&am_store_tx_vocab_incr,
                        int (*)(am_store_tx *, const char *, const char *, int64_t) : 1,
                        default : 0),
               "writes take a write transaction");
_Static_assert(_Generic(&am_store_tx_reads, am_store_rtx *(*)(am_store_tx *) : 1, default : 0),
               "a write transaction's reads");

/* ---- sessions ------------------------------------------------------------- */

static void test_sessions(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    assert_int_equal(am_store_schema_version(st), sf_embedded_schema_version());
    assert_true(am_store_schema_version(st) >= 1);
    assert_int_equal(am_store_ping(st), AM_OK);
    assert_true(am_store_size_bytes(st) > 0);

    char id[32];
    for (int i = 24; i >= 0; i--) { /* inserted out of order */
        snprintf(id, sizeof id, "s%02d", i);
        assert_int_equal(am_store_session_create(st, id, "{\"lang\":\"de\"}", "sig", NULL, 100 + i),
                         AM_OK);
    }
    assert_int_equal(am_store_session_create(st, "s07", "{}", "sig", NULL, 1), AM_ERR_CONFLICT);
    am_buf msg;
    am_buf_init(&msg);
    am_store_last_error(st, &msg);
    assert_non_null(strstr(am_buf_str(&msg), "UNIQUE"));
    am_buf_cleanup(&msg);
    assert_int_equal(am_store_session_create(st, "sx", "{}", "sig", "[\"der\",\"die\"]", 7), AM_OK);

    int64_t n = 0;
    assert_int_equal(am_store_session_count(st, &n), AM_OK);
    assert_int_equal(n, 26);

    am_store_session s;
    assert_int_equal(am_store_session_get(st, "s07", &s), AM_OK);
    assert_string_equal(s.id, "s07");
    assert_string_equal(s.options, "{\"lang\":\"de\"}");
    assert_string_equal(s.signature, "sig");
    assert_null(s.custom_stopwords);
    assert_null(s.glossary);
    assert_int_equal(s.glossary_version, 0);
    assert_int_equal(s.created_at, 107);
    assert_int_equal(s.updated_at, 107);
    assert_int_equal(s.segments, 0);
    int64_t v0 = s.version;
    am_store_session_clear(&s);
    assert_null(s.id);
    assert_int_equal(am_store_session_get(st, "sx", &s), AM_OK);
    assert_string_equal(s.custom_stopwords, "[\"der\",\"die\"]");
    am_store_session_clear(&s);
    assert_int_equal(am_store_session_get(st, "nope", &s), AM_ERR_NOTFOUND);

    /* Pagination: pages of 10 in id order. */
    char *after = NULL;
    size_t seen = 0, pages = 0;
    char prev[32] = "";
    for (;;) {
        am_store_session *v;
        size_t k;
        assert_int_equal(am_store_session_list(st, after, 10, &v, &k), AM_OK);
        free(after);
        after = NULL;
        if (k == 0) {
            free(v);
            break;
        }
        pages++;
        assert_true(k <= 10);
        for (size_t i = 0; i < k; i++) {
            assert_true(strcmp(prev, v[i].id) < 0);
            snprintf(prev, sizeof prev, "%s", v[i].id);
            seen++;
        }
        after = strdup(v[k - 1].id);
        for (size_t i = 0; i < k; i++)
            am_store_session_clear(&v[i]);
        free(v);
    }
    assert_int_equal(seen, 26);
    assert_int_equal(pages, 3);
    assert_string_equal(prev, "sx");

    /* Glossary: replace, bump versions, remove. */
    assert_int_equal(am_store_glossary_put(st, "s07", "[{\"source\":\"a\"}]", 500), AM_OK);
    assert_int_equal(am_store_session_get(st, "s07", &s), AM_OK);
    assert_string_equal(s.glossary, "[{\"source\":\"a\"}]");
    assert_int_equal(s.glossary_version, 1);
    assert_int_equal(s.version, v0 + 1);
    assert_int_equal(s.updated_at, 500);
    am_store_session_clear(&s);
    assert_int_equal(am_store_glossary_put(st, "s07", NULL, 600), AM_OK);
    assert_int_equal(am_store_session_get(st, "s07", &s), AM_OK);
    assert_null(s.glossary);
    assert_int_equal(s.glossary_version, 2);
    assert_int_equal(s.version, v0 + 2);
    am_store_session_clear(&s);
    assert_int_equal(am_store_glossary_put(st, "nope", "[]", 1), AM_ERR_NOTFOUND);

    /* Delete. */
    assert_int_equal(am_store_session_delete(st, "s07"), AM_OK);
    assert_int_equal(am_store_session_get(st, "s07", &s), AM_ERR_NOTFOUND);
    assert_int_equal(am_store_session_delete(st, "s07"), AM_ERR_NOTFOUND);
    assert_int_equal(am_store_session_count(st, &n), AM_OK);
    assert_int_equal(n, 25);
    am_store_close(st);
}

/* ---- transactions --------------------------------------------------------- */

typedef struct walk_ctx {
    am_store_tx *tx;
    int64_t seqs[16];
    size_t n;
    int stop_after;
    int nested_rows;
} walk_ctx;

static int count_rows(void *ctx, int64_t seq, const char *client_id, const char *request_json)
{
    (void)seq;
    (void)client_id;
    (void)request_json;
    ((walk_ctx *)ctx)->nested_rows++;
    return 0;
}

static int walk_cb(void *ctx, int64_t seq, const char *client_id, const char *request_json)
{
    walk_ctx *w = ctx;
    w->seqs[w->n++] = seq;
    char want[32];
    snprintf(want, sizeof want, "c%lld", (long long)seq);
    if (strcmp(client_id, want) != 0 || !strstr(request_json, want))
        return 99;
    /* The callback may use the transaction, even the walk itself. */
    int64_t s2 = 0;
    if (am_store_tx_segment_find(am_store_tx_reads(w->tx), "t", client_id, &s2, NULL, NULL) !=
            AM_OK ||
        s2 != seq)
        return 98;
    if (am_store_tx_segments_walk(am_store_tx_reads(w->tx), "t", 1, count_rows, w) != AM_OK)
        return 97;
    if (w->stop_after && (int)w->n == w->stop_after)
        return 42;
    return 0;
}

/* am_store_session_get on a thread of its own (joined): a read beside
 * a write transaction this thread holds. */
typedef struct get_job {
    am_store *st;
    const char *id;
    am_store_session *out;
    int rc;
} get_job;

static void *get_thread(void *arg)
{
    get_job *j = arg;
    j->rc = am_store_session_get(j->st, j->id, j->out);
    return NULL;
}

static int session_get_elsewhere(am_store *st, const char *id, am_store_session *out)
{
    get_job j = {st, id, out, AM_ERR_INTERNAL};
    pthread_t t;
    if (pthread_create(&t, NULL, get_thread, &j) != 0)
        return AM_ERR_INTERNAL;
    pthread_join(t, NULL);
    return j.rc;
}

static void test_transactions(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    assert_int_equal(am_store_session_create(st, "t", "{}", "sig", NULL, 1), AM_OK);
    am_store_session s;
    assert_int_equal(am_store_session_get(st, "t", &s), AM_OK);
    int64_t v0 = s.version;
    am_store_session_clear(&s);

    const char *w1[] = {"haus", "katze", "baum"};
    sf_post_segment(st, "t", "c1", w1, 3, "{\"n\":1}");
    assert_int_equal(am_store_session_get(st, "t", &s), AM_OK);
    assert_int_equal(s.segments, 1);
    assert_int_equal(s.version, v0 + 1);
    assert_int_equal(s.updated_at, 1001);
    am_store_session_clear(&s);

    /* Rollback: nothing of the transaction remains. */
    am_store_tx *tx;
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    assert_int_equal(am_store_tx_segment_insert(tx, "t", 2, "c2", "h", "{}", "{}", 2), AM_OK);
    assert_int_equal(am_store_tx_vocab_incr(tx, "t", "haus", 2), AM_OK);
    assert_int_equal(am_store_tx_vocab_incr(tx, "t", "neu", 2), AM_OK);
    assert_int_equal(am_store_tx_totals_put(tx, "t", "sysA", "{\"n\":2}"), AM_OK);
    assert_int_equal(am_store_session_create(st, "inner", "{}", "sig", NULL, 1), AM_OK);
    /* Readers see committed data only, and are not blocked by the writer
     * (read on another thread: the writer's holder takes no reader, lockck.h) */
    assert_int_equal(session_get_elsewhere(st, "t", &s), AM_OK);
    assert_int_equal(s.segments, 1);
    am_store_session_clear(&s);
    /* A second transaction in the same thread is refused. */
    am_store_tx *tx2 = NULL;
    assert_int_equal(am_store_tx_begin(st, &tx2), AM_ERR_INVALID);
    am_store_tx_rollback(tx);

    assert_int_equal(am_store_session_get(st, "t", &s), AM_OK);
    assert_int_equal(s.segments, 1);
    assert_int_equal(s.version, v0 + 1);
    am_store_session_clear(&s);
    assert_int_equal(am_store_session_get(st, "inner", &s), AM_ERR_NOTFOUND);
    int64_t seq = 0;
    char *req = NULL, *res = NULL;
    assert_int_equal(am_store_segment_get(st, "t", "c2", &seq, &req, &res), AM_ERR_NOTFOUND);
    int64_t occ = -1;
    assert_int_equal(am_store_word_history(st, "t", "neu", &occ, NULL, NULL), AM_ERR_NOTFOUND);
    sf_seqs hs = {.n = 0};
    assert_int_equal(am_store_word_history(st, "t", "haus", &occ, sf_collect_seq, &hs), AM_OK);
    assert_int_equal(occ, 1);
    assert_int_equal(hs.n, 1);
    assert_int_equal(hs.v[0], 1);

    /* Find, vocab, totals, walk, update, conflict inside a transaction. */
    const char *w2[] = {"haus", "maus"};
    sf_post_segment(st, "t", "c2", w2, 2, NULL);
    sf_post_segment(st, "t", "c3", w1, 3, NULL);
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    int64_t last = 0, version = 0;
    assert_int_equal(am_store_tx_session_state(am_store_tx_reads(tx), "t", &last, &version), AM_OK);
    assert_int_equal(last, 3);
    assert_int_equal(version, v0 + 3);
    assert_int_equal(am_store_tx_session_state(am_store_tx_reads(tx), "nope", &last, &version),
                     AM_ERR_NOTFOUND);
    char *hash = NULL;
    assert_int_equal(am_store_tx_segment_find(am_store_tx_reads(tx), "t", "c2", &seq, &hash, &res),
                     AM_OK);
    assert_int_equal(seq, 2);
    assert_string_equal(hash, "h-c2");
    assert_string_equal(res, "{\"result\":2}");
    free(hash);
    free(res);
    assert_int_equal(am_store_tx_segment_find(am_store_tx_reads(tx), "t", "c9", &seq, &hash, &res),
                     AM_ERR_NOTFOUND);
    assert_int_equal(
        am_store_tx_segment_find(am_store_tx_reads(tx), "nope", "c1", &seq, NULL, NULL),
        AM_ERR_NOTFOUND);
    assert_int_equal(am_store_tx_vocab_get(am_store_tx_reads(tx), "t", "haus", &occ), AM_OK);
    assert_int_equal(occ, 3);
    assert_int_equal(am_store_tx_vocab_get(am_store_tx_reads(tx), "t", "maus", &occ), AM_OK);
    assert_int_equal(occ, 1);
    assert_int_equal(am_store_tx_vocab_get(am_store_tx_reads(tx), "t", "zebra", &occ), AM_OK);
    assert_int_equal(occ, 0);
    char *stats = NULL;
    assert_int_equal(am_store_tx_totals_get(am_store_tx_reads(tx), "t", "sysA", &stats), AM_OK);
    assert_string_equal(stats, "{\"n\":1}");
    free(stats);
    assert_int_equal(am_store_tx_totals_get(am_store_tx_reads(tx), "t", "other", &stats),
                     AM_ERR_NOTFOUND);
    assert_null(stats);
    /* Duplicate client id and duplicate seq. */
    assert_int_equal(am_store_tx_segment_insert(tx, "t", 4, "c1", "h", "{}", "{}", 4),
                     AM_ERR_CONFLICT);
    assert_int_equal(am_store_tx_segment_insert(tx, "t", 3, "c4", "h", "{}", "{}", 4),
                     AM_ERR_CONFLICT);
    assert_int_equal(am_store_tx_segment_insert(tx, "nope", 1, "c1", "h", "{}", "{}", 4),
                     AM_ERR_NOTFOUND);
    /* The same word twice in one segment is a conflict too. */
    assert_int_equal(am_store_tx_vocab_incr(tx, "t", "haus", 3), AM_ERR_CONFLICT);

    walk_ctx w = {.tx = tx};
    assert_int_equal(am_store_tx_segments_walk(am_store_tx_reads(tx), "t", 2, walk_cb, &w), AM_OK);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.seqs[0], 2);
    assert_int_equal(w.seqs[1], 3);
    assert_int_equal(w.nested_rows, 6);
    walk_ctx w2c = {.tx = tx, .stop_after = 1};
    assert_int_equal(am_store_tx_segments_walk(am_store_tx_reads(tx), "t", 1, walk_cb, &w2c), 42);
    assert_int_equal(w2c.n, 1);

    assert_int_equal(
        am_store_tx_segment_update(tx, "t", 2, "h2", "{\"new\":1}", "{\"r\":\"new\"}", 77), AM_OK);
    assert_int_equal(am_store_tx_segment_update(tx, "t", 9, "h", "{}", "{}", 77), AM_ERR_NOTFOUND);
    int64_t before = -1;
    assert_int_equal(am_store_tx_vocab_bump(tx, "t", "maus", 3, &before), AM_OK);
    assert_int_equal(before, 1);
    assert_int_equal(am_store_tx_vocab_get(am_store_tx_reads(tx), "t", "maus", &occ), AM_OK);
    assert_int_equal(occ, 2);
    assert_int_equal(am_store_tx_commit(tx), AM_OK);

    assert_int_equal(am_store_segment_get(st, "t", "c2", &seq, &req, &res), AM_OK);
    assert_int_equal(seq, 2);
    assert_string_equal(req, "{\"new\":1}");
    assert_string_equal(res, "{\"r\":\"new\"}");
    free(req);
    free(res);
    char *cid = NULL;
    assert_int_equal(am_store_segment_result(st, "t", 3, &cid, &res), AM_OK);
    assert_string_equal(cid, "c3");
    assert_string_equal(res, "{\"result\":3}");
    free(cid);
    free(res);
    assert_int_equal(am_store_segment_result(st, "t", 4, &cid, &res), AM_ERR_NOTFOUND);
    hs.n = 0;
    assert_int_equal(am_store_word_history(st, "t", "maus", &occ, sf_collect_seq, &hs), AM_OK);
    assert_int_equal(occ, 2);
    assert_int_equal(hs.n, 2);
    assert_int_equal(hs.v[0], 2);
    assert_int_equal(hs.v[1], 3);
    assert_int_equal(am_store_session_get(st, "t", &s), AM_OK);
    assert_int_equal(s.version, v0 + 4); /* the update bumped it */
    assert_int_equal(s.segments, 3);
    am_store_session_clear(&s);

    /* history_clear: vocab and totals gone, segments kept. */
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    assert_int_equal(am_store_tx_history_clear(tx, "t"), AM_OK);
    assert_int_equal(am_store_tx_vocab_get(am_store_tx_reads(tx), "t", "haus", &occ), AM_OK);
    assert_int_equal(occ, 0);
    assert_int_equal(am_store_tx_totals_get(am_store_tx_reads(tx), "t", "sysA", &stats),
                     AM_ERR_NOTFOUND);
    assert_int_equal(am_store_tx_commit(tx), AM_OK);
    assert_int_equal(am_store_word_history(st, "t", "haus", &occ, NULL, NULL), AM_ERR_NOTFOUND);
    assert_int_equal(am_store_segment_result(st, "t", 3, NULL, NULL), AM_OK);
    am_store_close(st);
}

/* ---- reads: segments_each, word history, totals_each ----------------------- */

typedef struct totrows {
    char names[8][16];
    size_t n;
    am_store *st;
} totrows;

static int collect_totals(void *ctx, const char *system, const char *stats_json)
{
    totrows *t = ctx;
    snprintf(t->names[t->n++], 16, "%s", system);
    /* Callbacks may call the store. */
    int64_t n;
    if (strcmp(stats_json, "{\"n\":5}") != 0 || am_store_session_count(t->st, &n) != AM_OK)
        return 7;
    return 0;
}

static void test_reads(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    assert_int_equal(am_store_session_create(st, "r", "{}", "sig", NULL, 1), AM_OK);
    /* Segment k contains word "w<d>" for every divisor d of k (d <= 5). */
    const char *names[] = {"w1", "w2", "w3", "w4", "w5"};
    for (int k = 1; k <= 20; k++) {
        const char *words[5];
        size_t nw = 0;
        for (int d = 1; d <= 5; d++)
            if (k % d == 0)
                words[nw++] = names[d - 1];
        char cid[16], stats[32];
        snprintf(cid, sizeof cid, "c%d", k);
        snprintf(stats, sizeof stats, "{\"n\":%d}", k <= 5 ? k : 5);
        sf_post_segment(st, "r", cid, words, nw, stats);
    }
    for (int d = 1; d <= 5; d++) {
        sf_seqs hs = {.n = 0};
        int64_t occ = 0;
        assert_int_equal(am_store_word_history(st, "r", names[d - 1], &occ, sf_collect_seq, &hs),
                         AM_OK);
        assert_int_equal(occ, 20 / d);
        assert_int_equal(hs.n, (size_t)(20 / d));
        for (size_t i = 0; i < hs.n; i++)
            assert_int_equal(hs.v[i], (int64_t)(i + 1) * d);
    }
    sf_segrows r = {.n = 0};
    assert_int_equal(am_store_segments_each(st, "r", 5, 10, sf_collect_segrow, &r), AM_OK);
    assert_int_equal(r.n, 10);
    assert_int_equal(r.bad, 0);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.seq[i], (int64_t)(6 + i));
        assert_int_equal(r.created[i], 1000 + r.seq[i]);
    }
    r.n = 0;
    assert_int_equal(am_store_segments_each(st, "r", 15, 100, sf_collect_segrow, &r), AM_OK);
    assert_int_equal(r.n, 5);
    assert_int_equal(am_store_segments_each(st, "nope", 0, 100, sf_collect_segrow, &r),
                     AM_ERR_NOTFOUND);

    /* one answer read a page at a time: appends between pages are fine, a
     * rewrite of the stored results (replay, rescore) ends it with a
     * conflict instead of mixing old and new results */
    assert_int_equal(am_store_session_create(st, "p", "{}", "sig", NULL, 1), AM_OK);
    for (int k = 1; k <= 12; k++) {
        char cid[16];
        snprintf(cid, sizeof cid, "p%d", k);
        sf_post_segment(st, "p", cid, names, 1, "{\"n\":1}");
    }
    int64_t stamp[2] = {-1, -1};
    r.n = 0;
    assert_int_equal(am_store_segments_each_at(st, "p", 0, 5, stamp, sf_collect_segrow, &r), AM_OK);
    assert_int_equal(r.n, 5);
    assert_true(stamp[0] > 0);
    sf_post_segment(st, "p", "p13", names, 1, "{\"n\":1}");
    assert_int_equal(am_store_segments_each_at(st, "p", 5, 5, stamp, sf_collect_segrow, &r), AM_OK);
    assert_int_equal(r.n, 10);
    am_store_tx *rw;
    assert_int_equal(am_store_tx_begin(st, &rw), AM_OK);
    assert_int_equal(am_store_tx_history_clear(rw, "p"), AM_OK);
    assert_int_equal(am_store_tx_commit(rw), AM_OK);
    assert_int_equal(am_store_segments_each_at(st, "p", 10, 5, stamp, sf_collect_segrow, &r),
                     AM_ERR_CONFLICT);
    assert_int_equal(r.n, 10); /* no rows of the rewritten log */

    totrows t = {.n = 0, .st = st};
    assert_int_equal(am_store_totals_each(st, "r", collect_totals, &t), AM_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.names[0], "base"); /* system name order */
    assert_string_equal(t.names[1], "sysA");

    /* Deleting the session removes everything that belongs to it. */
    assert_int_equal(am_store_session_delete(st, "r"), AM_OK);
    assert_int_equal(am_store_session_delete(st, "p"), AM_OK);
    am_store_close(st);
    assert_int_equal(sf_raw_int(f->path, "SELECT count(*) FROM segments"), 0);
    assert_int_equal(sf_raw_int(f->path, "SELECT count(*) FROM vocab"), 0);
    assert_int_equal(sf_raw_int(f->path, "SELECT count(*) FROM occurrences"), 0);
    assert_int_equal(sf_raw_int(f->path, "SELECT count(*) FROM totals"), 0);
}

/* ---- :memory: ------------------------------------------------------------- */

static void test_memory(void **state)
{
    (void)state;
    am_store *st = sf_open_store(":memory:", AM_DURABLE_NORMAL);
    assert_int_equal(am_store_session_create(st, "m", "{}", "sig", NULL, 1), AM_OK);
    const char *w[] = {"a"};
    sf_post_segment(st, "m", "c1", w, 1, "{\"n\":5}");
    am_store_tx *tx;
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    /* Reads from the transaction's thread do not deadlock. */
    am_store_session s;
    assert_int_equal(am_store_session_get(st, "m", &s), AM_OK);
    assert_int_equal(s.segments, 1);
    am_store_session_clear(&s);
    sf_segrows r = {.n = 0};
    assert_int_equal(am_store_segments_each(st, "m", 0, 10, sf_collect_segrow, &r), AM_OK);
    assert_int_equal(r.n, 1);
    am_store_tx_rollback(tx);
    assert_true(am_store_size_bytes(st) > 0);
    am_store_close(st);
    am_store_close(NULL);
}

/* ---- errors --------------------------------------------------------------- */

typedef struct logged {
    int calls;
    char last[512];
} logged;

static void log_hook(void *ctx, const char *msg)
{
    logged *l = ctx;
    l->calls++;
    snprintf(l->last, sizeof l->last, "%s", msg);
}

static void test_errors(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    logged lg = {0};
    am_store_set_logger(st, log_hook, &lg);
    assert_int_equal(am_store_session_create(st, "e", "{}", "sig", NULL, 1), AM_OK);
    assert_int_equal(am_store_session_create(st, "e", "{}", "sig", NULL, 1), AM_ERR_CONFLICT);
    assert_int_equal(lg.calls, 0); /* conflicts are not I/O failures */
    assert_int_equal(am_store_session_create(st, NULL, "{}", "sig", NULL, 1), AM_ERR_INVALID);
    am_store_tx *tx;
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    assert_int_equal(am_store_tx_vocab_incr(tx, "nope", "w", 1), AM_ERR_NOTFOUND);
    assert_int_equal(am_store_tx_totals_put(tx, "nope", "s", "{}"), AM_ERR_NOTFOUND);
    am_store_tx_rollback(tx);

    /* A damaged schema: the failure is an I/O error with SQLite's message,
     * reported to the logger and kept for am_store_last_error. */
    sf_raw_exec(f->path, "DROP TABLE totals");
    assert_int_equal(am_store_totals_each(st, "e", NULL, NULL), AM_ERR_IO);
    assert_int_equal(lg.calls, 1);
    assert_non_null(strstr(lg.last, "no such table"));
    am_buf msg;
    am_buf_init(&msg);
    am_store_last_error(st, &msg);
    assert_string_equal(am_buf_str(&msg), lg.last);
    am_buf_cleanup(&msg);
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    assert_int_equal(am_store_tx_totals_put(tx, "e", "s", "{}"), AM_ERR_IO);
    assert_int_equal(lg.calls, 2);
    assert_int_equal(am_store_tx_commit(tx), AM_OK);
    am_store_close(st);

    /* Not a database. */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/garbage.db", f->dir);
    FILE *fp = fopen(bad, "wb");
    assert_non_null(fp);
    for (int i = 0; i < 512; i++)
        fputs("this is not an SQLite database. ", fp);
    fclose(fp);
    am_buf err;
    am_buf_init(&err);
    st = (am_store *)1;
    assert_int_not_equal(am_store_open(bad, AM_DURABLE_NORMAL, &st, &err), AM_OK);
    assert_null(st);
    assert_true(err.len > 0);
    am_buf_cleanup(&err);
}

/* ---- incarnations and glossary versions --------------------------------- */

static int walk_gv(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                   int64_t glossary_version)
{
    (void)client_id;
    (void)request_json;
    int64_t *v = ctx;
    v[seq] = glossary_version;
    return 0;
}

static void test_incarnations_and_glossary_versions(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    am_store_session s;
    int64_t inc1 = 0, inc2 = 0, gv = 0;
    assert_int_equal(
        am_store_session_create_gl(st, "g", "{}", "sig", NULL, "[{\"source\":\"a\"}]", 1, &inc1),
        AM_OK);
    assert_true(inc1 > 0);
    assert_int_equal(am_store_session_get(st, "g", &s), AM_OK);
    assert_int_equal(s.incarnation, inc1);
    assert_int_equal(s.glossary_version, 1);
    am_store_session_clear(&s);
    /* a glossary change of another incarnation changes nothing */
    assert_int_equal(am_store_glossary_put_if(st, "g", inc1 + 1, "[]", 2, &gv), AM_ERR_NOTFOUND);
    assert_int_equal(am_store_glossary_put_if(st, "g", inc1, "[{\"source\":\"b\"}]", 3, &gv),
                     AM_OK);
    assert_int_equal(gv, 2);

    /* segments record their glossary version; versions stay readable */
    am_store_tx *tx;
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    am_store_state ss;
    assert_int_equal(am_store_tx_session_info(am_store_tx_reads(tx), "g", &ss), AM_OK);
    assert_int_equal(ss.incarnation, inc1);
    assert_int_equal(ss.glossary_version, 2);
    assert_int_equal(ss.last_seq, 0);
    assert_int_equal(
        am_store_tx_segment_insert_gv(tx, "g", 1, "c1", "h", "{}", "{}", 1, NULL, 0, 4), AM_OK);
    assert_int_equal(
        am_store_tx_segment_insert_gv(tx, "g", 2, "c2", "h", "{}", "{}", 2, NULL, 0, 4), AM_OK);
    int64_t seen[3] = {-1, -1, -1};
    assert_int_equal(am_store_tx_segments_walk_gv(am_store_tx_reads(tx), "g", 1, walk_gv, seen),
                     AM_OK);
    assert_int_equal(seen[1], 1);
    assert_int_equal(seen[2], 2);
    char *e = NULL;
    assert_int_equal(am_store_tx_glossary_version(am_store_tx_reads(tx), "g", 1, &e), AM_OK);
    assert_string_equal(e, "[{\"source\":\"a\"}]");
    free(e);
    assert_int_equal(am_store_tx_glossary_version(am_store_tx_reads(tx), "g", 2, &e), AM_OK);
    assert_string_equal(e, "[{\"source\":\"b\"}]");
    free(e);
    assert_int_equal(am_store_tx_glossary_version(am_store_tx_reads(tx), "g", 0, &e), AM_OK);
    assert_null(e);
    assert_int_equal(am_store_tx_glossary_version(am_store_tx_reads(tx), "g", 7, &e),
                     AM_ERR_NOTFOUND);
    assert_int_equal(am_store_tx_commit(tx), AM_OK);

    /* delete + re-create: a new incarnation, versions start again */
    assert_int_equal(am_store_session_delete(st, "g"), AM_OK);
    assert_int_equal(sf_raw_int(f->path, "SELECT count(*) FROM glossaries"), 0);
    assert_int_equal(am_store_session_create_gl(st, "g", "{}", "sig", NULL, NULL, 5, &inc2), AM_OK);
    assert_true(inc2 > inc1);
    assert_int_equal(am_store_session_get(st, "g", &s), AM_OK);
    assert_int_equal(s.incarnation, inc2);
    assert_int_equal(s.glossary_version, 0);
    am_store_session_clear(&s);
    assert_int_equal(am_store_glossary_put_if(st, "g", inc1, "[]", 6, NULL), AM_ERR_NOTFOUND);
    /* the state and the totals from one snapshot */
    assert_int_equal(am_store_totals_snapshot(st, "g", &ss, NULL, NULL), AM_OK);
    assert_int_equal(ss.incarnation, inc2);
    assert_int_equal(am_store_totals_snapshot(st, "nope", &ss, NULL, NULL), AM_ERR_NOTFOUND);
    am_store_close(st);
}

/* A child process that opens the store at path with one reader and runs
 * what (1: a read call while holding a read snapshot; 2: a read call
 * inside a write transaction); the exit status waitpid gives, or -1 when
 * it had to be killed (a hang). */
static int order_child(const char *path, int what)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(10); /* a hang dies of SIGALRM, not SIGABRT */
        am_store *st = NULL;
        am_buf err;
        am_buf_init(&err);
        if (am_store_open(path, AM_DURABLE_NORMAL, &st, &err) != AM_OK ||
            am_store_set_readers(st, 1, &err) != AM_OK)
            _exit(3);
        am_store_session s;
        if (what == 1) {
            am_store_rtx *rtx = NULL;
            if (am_store_rtx_begin(st, &rtx) != AM_OK)
                _exit(3);
            am_store_session_get(st, "t", &s); /* the second reader: the one it holds */
        } else {
            am_store_tx *tx = NULL;
            if (am_store_tx_begin(st, &tx) != AM_OK)
                _exit(3);
            am_store_session_get(st, "t", &s); /* a reader under the writer */
        }
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

typedef struct hold_job {
    am_store *st;
    am_store_rtx *rtx;
    atomic_int held;
} hold_job;

static void *hold_thread(void *arg)
{
    hold_job *j = arg;
    if (am_store_rtx_begin(j->st, &j->rtx) != AM_OK)
        return NULL;
    atomic_store(&j->held, 1);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    am_store_rtx_end(j->rtx);
    return NULL;
}

/* The reader pool: its size is an option (1 to AM_STORE_READERS_MAX);
 * with every reader busy a read waits for one to be put back (and is
 * counted); and the lock order is checked: a second reader taken while
 * holding one, or a reader under the writer, aborts at once with its stack
 * instead of waiting on itself (issue 25: a replay hung for good). */
static void test_reader_pool_and_lock_order(void **state)
{
    sf_fixture *f = *state;
    am_store *st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    assert_int_equal(am_store_session_create(st, "t", "{}", "sig", NULL, 1), AM_OK);
    am_store_close(st);
    for (int what = 1; what <= 2; what++) {
        int status = order_child(f->path, what);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGABRT);
    }

    st = sf_open_store(f->path, AM_DURABLE_NORMAL);
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_store_set_readers(st, 0, &err), AM_ERR_INVALID);
    assert_int_equal(am_store_set_readers(st, AM_STORE_READERS_MAX + 1, &err), AM_ERR_INVALID);
    assert_int_equal(am_store_set_readers(st, 1, &err), AM_OK);
    am_buf_cleanup(&err);
    int64_t waits = am_store_reader_waits(st);
    hold_job j = {st, NULL, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_thread, &j), 0);
    while (!atomic_load(&j.held))
        sched_yield();
    am_store_session s;
    assert_int_equal(am_store_session_get(st, "t", &s), AM_OK); /* waits for the one reader */
    am_store_session_clear(&s);
    pthread_join(t, NULL);
    assert_true(am_store_reader_waits(st) > waits);
    am_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_incarnations_and_glossary_versions, sf_setup,
                                        sf_teardown),
        cmocka_unit_test_setup_teardown(test_sessions, sf_setup, sf_teardown),
        cmocka_unit_test_setup_teardown(test_transactions, sf_setup, sf_teardown),
        cmocka_unit_test_setup_teardown(test_reads, sf_setup, sf_teardown),
        cmocka_unit_test(test_memory),
        cmocka_unit_test_setup_teardown(test_errors, sf_setup, sf_teardown),
        cmocka_unit_test_setup_teardown(test_reader_pool_and_lock_order, sf_setup, sf_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
