/*
 * test_restore.c — backups carry a checksum, and a WAL is recovered only
 * into the database it belongs to (server/sha256.c, server/dbfile.c
 * am_dbfile_check_wal, the WAL owner mark of server/store/open.c).
 */
#include "testutil.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dbfile.h"
#include "sha256.h"
#include "store.h"

static void hex_of(const char *s, size_t n, size_t chunk, char hex[65])
{
    am_sha256 c;
    am_sha256_init(&c);
    for (size_t i = 0; i < n; i += chunk)
        am_sha256_update(&c, s + i, n - i < chunk ? n - i : chunk);
    am_sha256_hex(&c, hex);
}

/* FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values"). */
static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    hex_of("", 0, 1, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    /* 56 bytes: the padding needs a second block; any split gives the same */
    for (size_t chunk = 1; chunk <= 64; chunk++) {
        hex_of(m, strlen(m), chunk, hex);
        assert_string_equal(hex,
                            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    hex_of(a, 1000000, 4093, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static off_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

static int check_wal(const char *db)
{
    am_buf err;
    am_buf_init(&err);
    int rc = am_dbfile_check_wal(db, &err);
    if (rc != AM_OK)
        assert_non_null(strstr(am_buf_str(&err), "adaptmon restore"));
    am_buf_cleanup(&err);
    return rc;
}

/* A crashed server's files (copied while its store is open) are a pair the
 * check accepts; its WAL beside a backup is refused — also when the WAL
 * was restarted by a commit that does not touch page 1, which only the
 * owner mark written after each restart makes recognisable. */
static void test_wal_owner(void **state)
{
    (void)state;
    char dir[] = "/tmp/amrestore-XXXXXX", x[256], y[256], b[256], s[300], t[300];
    assert_non_null(mkdtemp(dir));
    snprintf(x, sizeof x, "%s/x.db", dir);
    snprintf(y, sizeof y, "%s/y.db", dir);
    snprintf(b, sizeof b, "%s/b.db", dir);
    am_store *st = NULL;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_store_open(x, AM_DURABLE_NORMAL, &st, &err), AM_OK);
    assert_int_equal(am_store_session_create(st, "s0", "{}", "sig", NULL, 1), AM_OK);
    /* the backup: its checksum file matches */
    assert_int_equal(am_store_backup(st, b, &err), AM_OK);
    char want[65], got[65];
    assert_int_equal(am_dbfile_sidecar_read(b, want, &err), AM_OK);
    assert_int_equal(am_dbfile_sha256(b, got, &err), AM_OK);
    assert_string_equal(want, got);
    uint32_t life = 0, prev = 0;
    assert_int_equal(am_dbfile_ids(b, &life, &prev, &err), AM_OK);
    assert_int_equal(prev, AM_DBFILE_BACKUP_MARK);
    assert_int_equal(am_store_check_file(b, &err), AM_OK);
    /* another connection copies the WAL back and truncates it: the
     * store's next commit restarts it with a frame that is not page 1 */
    raw_exec(x, "PRAGMA wal_checkpoint(TRUNCATE)");
    assert_true(file_size(strcat(strcpy(s, x), "-wal")) == 0);
    assert_int_equal(am_store_session_create(st, "s1", "{}", "sig", NULL, 2), AM_OK);
    assert_true(file_size(s) > 0);
    /* the crashed server's pair */
    copy_file(x, y);
    copy_file(s, strcat(strcpy(t, y), "-wal"));
    assert_int_equal(check_wal(y), AM_OK);
    /* its WAL beside the backup */
    copy_file(s, strcat(strcpy(t, b), "-wal"));
    assert_int_equal(check_wal(b), AM_ERR_CONFLICT);
    /* ... beside no database at all, and beside one of another page size */
    char z[300], zw[310];
    snprintf(z, sizeof z, "%s/z.db", dir);
    copy_file(s, strcat(strcpy(zw, z), "-wal"));
    assert_int_equal(check_wal(z), AM_ERR_CONFLICT);
    unlink(zw);
    /* (with the id of x's life: only the page size tells them apart) */
    uint32_t xlife = 0, xprev = 0;
    assert_int_equal(am_dbfile_ids(x, &xlife, &xprev, &err), AM_OK);
    char sql[200];
    snprintf(sql, sizeof sql,
             "PRAGMA page_size=8192; PRAGMA journal_mode=WAL; CREATE TABLE t(x); "
             "PRAGMA user_version=%d",
             (int)(int32_t)xlife);
    raw_exec(z, sql);
    raw_exec(z, "PRAGMA wal_checkpoint(TRUNCATE)");
    copy_file(s, zw);
    assert_int_equal(check_wal(z), AM_ERR_CONFLICT);
    am_store_close(st);
    am_buf_cleanup(&err);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* An untouched backup is checked against a checksum file beside it; a
 * damaged one is refused, and once the server wrote to it, the (stale)
 * checksum file no longer applies. */
static void test_backup_checksum_at_open(void **state)
{
    (void)state;
    char dir[] = "/tmp/amrestore-XXXXXX", x[256], b[256];
    assert_non_null(mkdtemp(dir));
    snprintf(x, sizeof x, "%s/x.db", dir);
    snprintf(b, sizeof b, "%s/b.db", dir);
    am_store *st = NULL;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_store_open(x, AM_DURABLE_NORMAL, &st, &err), AM_OK);
    assert_int_equal(am_store_session_create(st, "s0", "{}", "sig", NULL, 1), AM_OK);
    assert_int_equal(am_store_backup(st, b, &err), AM_OK);
    am_store_close(st);
    assert_int_equal(check_wal(b), AM_OK);
    /* a flipped bit */
    FILE *f = fopen(b, "r+b");
    assert_non_null(f);
    fseek(f, -10, SEEK_END);
    int ch = fgetc(f);
    fseek(f, -10, SEEK_END);
    fputc(ch ^ 4, f);
    fclose(f);
    am_buf_reset(&err);
    assert_int_equal(am_dbfile_check_wal(b, &err), AM_ERR_PARSE);
    assert_non_null(strstr(am_buf_str(&err), "does not match its checksum"));
    assert_int_equal(am_store_open(b, AM_DURABLE_NORMAL, &st, &err), AM_ERR_PARSE);
    /* flipped back: it opens, and the open gives it a new id */
    f = fopen(b, "r+b");
    fseek(f, -10, SEEK_END);
    fputc(ch, f);
    fclose(f);
    am_buf_reset(&err);
    assert_int_equal(am_store_open(b, AM_DURABLE_NORMAL, &st, &err), AM_OK);
    am_store_close(st);
    uint32_t life = 0, prev = 0;
    assert_int_equal(am_dbfile_ids(b, &life, &prev, &err), AM_OK);
    assert_int_not_equal(prev, AM_DBFILE_BACKUP_MARK);
    assert_int_equal(check_wal(b), AM_OK); /* the stale .sha256 is ignored */
    am_buf_cleanup(&err);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_wal_owner),
        cmocka_unit_test(test_backup_checksum_at_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
