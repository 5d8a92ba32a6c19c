/* store_fixture.c — the fixture shared by the store's unit tests
 * (test_store*.c): a temporary directory per test, opening a store, raw
 * SQL on its file and posting a segment (store_fixture.h). */
#include "testutil.h"
#include "store_fixture.h"

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

void sf_rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                sf_rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

int sf_setup(void **state)
{
    sf_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    strcpy(f->dir, "/tmp/amstore-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    /* Nested missing directories: the store creates them. */
    snprintf(f->path, sizeof f->path, "%s/a/b/adaptmon.db", f->dir);
    *state = f;
    return 0;
}

int sf_teardown(void **state)
{
    sf_fixture *f = *state;
    sf_rm_rf(f->dir);
    free(f);
    return 0;
}

am_store *sf_open_store(const char *path, enum am_durability d)
{
    am_store *st = NULL;
    am_buf err;
    am_buf_init(&err);
    int rc = am_store_open(path, d, &st, &err);
    if (rc != AM_OK)
        fail_msg("am_store_open(%s): %s", path, am_buf_str(&err));
    am_buf_cleanup(&err);
    assert_non_null(st);
    return st;
}

/* Highest NNN among the embedded schema/NNN_*.sql files. */
int sf_embedded_schema_version(void)
{
    size_t n;
    const am_embedded_file *files = am_embedded_files(&n);
    int best = 0;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(files[i].path, "schema/", 7)) {
            int v = atoi(files[i].path + 7);
            if (v > best)
                best = v;
        }
    return best;
}

/* One integer from a raw SQLite query on the database file (the tests look
 * at the file independently of the store). */
int64_t sf_raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

void sf_raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* Inserts segment seq of session with the given words in one transaction. */
void sf_post_segment(am_store *st, const char *session, const char *client_id,
                     const char *const *words, size_t nwords, const char *stats)
{
    am_store_tx *tx;
    assert_int_equal(am_store_tx_begin(st, &tx), AM_OK);
    int64_t last = -1, version = -1;
    assert_int_equal(am_store_tx_session_state(am_store_tx_reads(tx), session, &last, &version),
                     AM_OK);
    int64_t seq = last + 1;
    char req[128], res[128], hash[64];
    snprintf(req, sizeof req, "{\"id\":\"%s\",\"seq\":%lld}", client_id, (long long)seq);
    snprintf(res, sizeof res, "{\"result\":%lld}", (long long)seq);
    snprintf(hash, sizeof hash, "h-%s", client_id);
    assert_int_equal(
        am_store_tx_segment_insert(tx, session, seq, client_id, hash, req, res, 1000 + seq), AM_OK);
    for (size_t i = 0; i < nwords; i++)
        assert_int_equal(am_store_tx_vocab_incr(tx, session, words[i], seq), AM_OK);
    if (stats) {
        assert_int_equal(am_store_tx_totals_put(tx, session, "sysA", stats), AM_OK);
        assert_int_equal(am_store_tx_totals_put(tx, session, "base", stats), AM_OK);
    }
    assert_int_equal(am_store_tx_commit(tx), AM_OK);
}

int sf_collect_seq(void *ctx, int64_t seq)
{
    sf_seqs *s = ctx;
    s->v[s->n++] = seq;
    return 0;
}

int sf_collect_segrow(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                      const char *result_json, int64_t created_at)
{
    sf_segrows *r = ctx;
    char want[32];
    snprintf(want, sizeof want, "\"result\":%lld", (long long)seq);
    if (!client_id || !request_json || !strstr(result_json, want))
        r->bad++;
    r->seq[r->n] = seq;
    r->created[r->n++] = created_at;
    return 0;
}
