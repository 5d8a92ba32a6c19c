/* test_walbuf.c — the writer's VFS (server/store/walbuf.c): the WAL frames
 * of a commit reach the file in a few writes, every commit is readable by
 * another connection as soon as COMMIT returns, and large transactions,
 * cache spills, savepoint and whole rollbacks leave a database whose
 * contents and integrity check are right. Raw SQLite connections on a
 * temporary file; the readers use SQLite's default VFS. */
#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "walbuf.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    am_walbuf *vfs;
    sqlite3 *w; /* through the walbuf VFS */
    sqlite3 *r; /* the default VFS */
} fixture;

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
}

static long long one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    long long v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static const char *text(sqlite3 *db, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return out;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    strcpy(f->dir, "/tmp/amwalbuf-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/t.db", f->dir);
    f->vfs = am_walbuf_new();
    if (!f->vfs || sqlite3_open_v2(f->path, &f->w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                   am_walbuf_name(f->vfs)) != SQLITE_OK)
        return -1;
    exec(f->w, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
               "PRAGMA wal_autocheckpoint=0; CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)");
    if (sqlite3_open_v2(f->path, &f->r, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sqlite3_close(f->r);
    sqlite3_close(f->w);
    am_walbuf_free(f->vfs);
    char p[192];
    const char *suffix[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", f->path, suffix[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Frames in the WAL now (a passive checkpoint's log count, which copies
 * nothing back while a reader may be at an older snapshot, and is only
 * read here). */
static long long wal_frames(sqlite3 *db)
{
    int log = 0, done = 0;
    if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK)
        fail_msg("checkpoint: %s", sqlite3_errmsg(db));
    return log;
}

/* Many rows of 3,000 bytes in one transaction: ~700 frames (2.9 MB: past
 * the 1 MiB buffer and many 124 KiB write calls) reach the file in far
 * fewer writes than frames, and all of it reads back. */
static void test_one_commit_few_writes(void **state)
{
    fixture *f = *state;
    exec(f->w, "PRAGMA wal_checkpoint(TRUNCATE)");
    long long w0 = am_walbuf_writes(f->vfs);
    exec(f->w, "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
               "WHERE i < 700) INSERT INTO t (v) SELECT randomblob(3000) FROM n; COMMIT");
    long long writes = am_walbuf_writes(f->vfs) - w0;
    long long frames = wal_frames(f->w);
    assert_true(frames >= 700);
    /* the default VFS: two writes a frame; gathered: ~4,120 * frames / 124 KiB */
    if (writes * 10 > frames)
        fail_msg("%lld writes for %lld frames", writes, frames);
    assert_int_equal(one(f->r, "SELECT count(*) FROM t"), 700);
    assert_int_equal(one(f->r, "SELECT sum(length(v)) FROM t"), 700 * 3000);
    char buf[64];
    assert_string_equal(text(f->r, "PRAGMA integrity_check", buf, sizeof buf), "ok");
}

/* Each small commit is visible to another connection as soon as COMMIT
 * returns: the frames are in the file before the WAL index names them. */
static void test_every_commit_visible_at_once(void **state)
{
    fixture *f = *state;
    long long w0 = am_walbuf_writes(f->vfs);
    sqlite3_stmt *ins = NULL;
    assert_int_equal(sqlite3_prepare_v2(f->w, "INSERT INTO t (v) VALUES (?1)", -1, &ins, NULL),
                     SQLITE_OK);
    for (int i = 1; i <= 300; i++) {
        char v[64];
        int n = snprintf(v, sizeof v, "value %d", i);
        sqlite3_bind_blob(ins, 1, v, n, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
        assert_int_equal(one(f->r, "SELECT count(*) FROM t"), i);
        char got[64];
        assert_string_equal(
            text(f->r, "SELECT CAST(v AS TEXT) FROM t ORDER BY k DESC LIMIT 1", got, sizeof got),
            v);
    }
    sqlite3_finalize(ins);
    /* a one-frame commit is one write, not two */
    assert_true(am_walbuf_writes(f->vfs) - w0 <= 300 + 2);
}

/* A transaction larger than the page cache writes frames before COMMIT
 * (a spill), and reads them back; a savepoint rolled back and a whole
 * transaction rolled back after a spill leave their stale frames in the
 * file, which the next commits overwrite: contents and integrity stay
 * right, for this connection and for another. */
static void test_spills_and_rollbacks(void **state)
{
    fixture *f = *state;
    exec(f->w, "PRAGMA cache_size=20");
    exec(f->w, "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
               "WHERE i < 200) INSERT INTO t (v) SELECT randomblob(2000) FROM n; "
               "SAVEPOINT a; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
               "WHERE i < 300) INSERT INTO t (v) SELECT zeroblob(2500) FROM n; "
               "UPDATE t SET v = randomblob(100) WHERE k % 3 = 0; ROLLBACK TO a; RELEASE a; "
               "UPDATE t SET v = x'01' WHERE k = 1; COMMIT");
    assert_int_equal(one(f->w, "SELECT count(*) FROM t"), 200);
    assert_int_equal(one(f->r, "SELECT count(*) FROM t"), 200);
    assert_int_equal(one(f->r, "SELECT length(v) FROM t WHERE k = 1"), 1);
    exec(f->w, "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
               "WHERE i < 400) INSERT INTO t (v) SELECT randomblob(3000) FROM n; ROLLBACK");
    assert_int_equal(one(f->r, "SELECT count(*) FROM t"), 200);
    exec(f->w, "INSERT INTO t (v) VALUES (x'0203'); DELETE FROM t WHERE k = 2");
    assert_int_equal(one(f->r, "SELECT count(*) FROM t"), 200);
    assert_int_equal(one(f->r, "SELECT length(v) FROM t ORDER BY k DESC LIMIT 1"), 2);
    char buf[64];
    assert_string_equal(text(f->r, "PRAGMA integrity_check", buf, sizeof buf), "ok");
    /* a checkpoint copies it all back, and a new WAL starts from its header */
    exec(f->w, "PRAGMA wal_checkpoint(TRUNCATE)");
    exec(f->w, "INSERT INTO t (v) VALUES (x'04')");
    assert_int_equal(one(f->r, "SELECT count(*) FROM t"), 201);
    assert_string_equal(text(f->r, "PRAGMA integrity_check", buf, sizeof buf), "ok");
}

/* Reopened with the default VFS (what a restart after a SIGKILL sees: the
 * WAL as written), the database holds every commit. */
static void test_reopened_holds_every_commit(void **state)
{
    fixture *f = *state;
    exec(f->w, "INSERT INTO t (v) VALUES (x'05'); INSERT INTO t (v) VALUES (x'06')");
    sqlite3 *again = NULL;
    assert_int_equal(sqlite3_open_v2(f->path, &again, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(one(again, "SELECT count(*) FROM t"), 2);
    sqlite3_close(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_commit_few_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_commit_visible_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spills_and_rollbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopened_holds_every_commit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
