/*
 * cli_restore.c — `adaptmon restore BACKUP [--db PATH]`: puts a backup in
 * place of a stopped server's database, safely.
 *
 * Copying a backup over the database by hand goes wrong in two quiet ways
 * (issue 25 §4): a WAL file left by a server that crashed is recovered
 * into the copy at the next start, mixing two databases; and a damaged
 * copy starts as if it were whole. So this command
 *   1. refuses while a server holds the database (its lock, dbfile.h), and
 *      a PATH that is a directory or not a regular file (a PATH that is no
 *      longer an SQLite file — a damaged database — is what a restore is
 *      for: it is replaced, and kept aside like any other);
 *   2. verifies the backup before it writes anything: its SHA-256 against
 *      BACKUP.sha256 (written by `adaptmon backup`; --no-checksum skips this
 *      for a backup made otherwise), then SQLite's integrity_check;
 *   3. copies it to PATH.restore.tmp in the database's directory, syncs it,
 *      and checks that the bytes it copied have the verified checksum;
 *   4. keeps the old database: hard-links it as PATH.pre-restore-TIME, then
 *      renames the copy over PATH (atomic), then moves PATH-wal, PATH-shm
 *      and PATH-journal to PATH.pre-restore-TIME-wal, … — so the old
 *      database and its WAL stay a pair a server can be started on — and
 *      syncs the directory.
 * A crash between the rename and the moves leaves the old WAL beside the
 * new database; the server refuses to start on that pair
 * (am_dbfile_check_wal), and running the restore again finishes it.
 * Exit status: 0 restored, 1 verification or I/O failure, 2 usage error or
 * refused (nothing changed).
 */
#include "cli.h"
#include "dbfile.h"
#include "sha256.h"
#include "srvconfig.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void am_restore_usage(FILE *out)
{
    fputs("usage: adaptmon restore [--db PATH] [--no-checksum] BACKUP\n"
          "\n"
          "Replaces the database at PATH (default: ADAPTMON_DB, or ./var/adaptmon.db) with\n"
          "BACKUP, a copy made by `adaptmon backup`. Stop the server first.\n"
          "\n"
          "BACKUP is verified before anything is written: its SHA-256 against\n"
          "BACKUP.sha256 (--no-checksum skips that for a backup made otherwise) and\n"
          "SQLite's integrity check. The old database and its -wal/-shm files are kept\n"
          "as PATH.pre-restore-TIME (and -wal, -shm): never deleted, and never mixed\n"
          "into the restored copy.\n",
          out);
}

/* path + suffix (caller frees). */
static char *am_restore_cat(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    char *s = malloc(n + m + 1);
    if (!s)
        abort();
    memcpy(s, path, n);
    memcpy(s + n, suffix, m + 1);
    return s;
}

/* Copies src to the new file dst (borrowed), syncs it, and hashes the
 * bytes copied into hex. AM_OK or AM_ERR_IO (err). */
static int am_restore_copy(const char *src, const char *dst, char hex[65], am_buf *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        am_buf_printf(err, "cannot read %s: %s", src, strerror(errno));
        return AM_ERR_IO;
    }
    unlink(dst); /* a temporary file a crashed restore left */
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        am_buf_printf(err, "cannot create %s: %s", dst, strerror(errno));
        close(in);
        return AM_ERR_IO;
    }
    am_sha256 c;
    am_sha256_init(&c);
    enum { CHUNK = 1 << 16 };
    char *buf = malloc(CHUNK);
    if (!buf)
        abort();
    int rc = AM_OK;
    for (;;) {
        ssize_t got = read(in, buf, CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            am_buf_printf(err, "cannot read %s: %s", src, strerror(errno));
            rc = AM_ERR_IO;
        }
        if (got <= 0)
            break;
        am_sha256_update(&c, buf, (size_t)got);
        for (ssize_t off = 0; off < got && rc == AM_OK;) {
            ssize_t put = write(out, buf + off, (size_t)(got - off));
            if (put < 0 && errno == EINTR)
                continue;
            if (put < 0) {
                am_buf_printf(err, "cannot write %s: %s", dst, strerror(errno));
                rc = AM_ERR_IO;
            } else {
                off += put;
            }
        }
        if (rc != AM_OK)
            break;
    }
    free(buf);
    if (rc == AM_OK && fsync(out) != 0) {
        am_buf_printf(err, "cannot sync %s: %s", dst, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (close(out) != 0 && rc == AM_OK) {
        am_buf_printf(err, "cannot write %s: %s", dst, strerror(errno));
        rc = AM_ERR_IO;
    }
    close(in);
    if (rc == AM_OK)
        am_sha256_hex(&c, hex);
    else
        unlink(dst);
    return rc;
}

static void am_restore_sync_dir(const char *path)
{
    char *dir = am_dbfile_dir(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* best effort: makes the renames durable */
        close(fd);
    }
    free(dir);
}

/* The name the old database is kept under: db.pre-restore-YYYYmmddTHHMMSSZ,
 * with -N added while that exists (caller frees). */
static char *am_restore_aside_name(const char *db)
{
    char stamp[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, ".pre-restore-%Y%m%dT%H%M%SZ", &tm);
    char *base = am_restore_cat(db, stamp);
    char *name = am_restore_cat(base, "");
    for (int i = 2; i < 1000; i++) {
        struct stat sb;
        char *wal = am_restore_cat(name, "-wal");
        int taken = lstat(name, &sb) == 0 || lstat(wal, &sb) == 0;
        free(wal);
        if (!taken)
            break;
        free(name);
        char suffix[16];
        snprintf(suffix, sizeof suffix, "-%d", i);
        name = am_restore_cat(base, suffix);
    }
    free(base);
    return name;
}

/* Keeps the old database as aside (a hard link), renames tmp over db, then
 * moves db's side files next to aside. Prints what it moved. */
static int am_restore_swap(const char *db, const char *tmp, am_buf *err)
{
    static const char *const side[] = {"-wal", "-shm", "-journal"};
    char *aside = am_restore_aside_name(db);
    struct stat sb;
    int had_db = lstat(db, &sb) == 0, moved = 0, rc = AM_OK;
    if (had_db && link(db, aside) != 0) {
        am_buf_printf(err, "cannot keep the old database as %s: %s", aside, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && rename(tmp, db) != 0) {
        am_buf_printf(err, "cannot rename %s to %s: %s", tmp, db, strerror(errno));
        if (had_db)
            unlink(aside);
        rc = AM_ERR_IO;
    }
    for (size_t i = 0; rc == AM_OK && i < sizeof side / sizeof side[0]; i++) {
        char *from = am_restore_cat(db, side[i]), *to = am_restore_cat(aside, side[i]);
        if (lstat(from, &sb) == 0) {
            if (rename(from, to) != 0) {
                am_buf_printf(err,
                              "restored, but cannot move %s aside (%s): move it away before "
                              "starting the server (it would refuse to start)",
                              from, strerror(errno));
                rc = AM_ERR_IO;
            } else {
                moved++;
            }
        }
        free(from);
        free(to);
    }
    am_restore_sync_dir(db);
    if (rc == AM_OK && (had_db || moved))
        printf("adaptmon restore: the previous database%s kept as %s%s\n",
               had_db ? " is" : "'s side files are", aside,
               moved ? " (its -wal/-shm files beside it with the same name)" : "");
    free(aside);
    return rc;
}

/* Refusals that need no reading of the backup's content. Returns 0 or the
 * exit status (message printed). */
static int am_restore_check_places(const char *backup, const char *db)
{
    struct stat sb;
    if (stat(backup, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) {
        fprintf(stderr,
                "adaptmon restore: %s is not a backup file (missing, empty or not a file)\n",
                backup);
        return 2;
    }
    am_buf err;
    am_buf_init(&err);
    int rc = 0;
    if (am_dbfile_check_kind(backup, &err) != AM_OK) {
        fprintf(stderr, "adaptmon restore: %s\n", am_buf_str(&err));
        rc = 2;
    } else if (am_dbfile_check_kind(db, &err) == AM_ERR_IO) {
        /* a directory or a device; a damaged database (no SQLite header)
         * is what a restore is for, and it is kept aside, not deleted */
        fprintf(stderr, "adaptmon restore: refusing to replace %s: %s\n", db, am_buf_str(&err));
        rc = 2;
    }
    am_buf_cleanup(&err);
    if (rc)
        return rc;
    const char *which = NULL;
    if (stat(db, &sb) == 0 && am_dbfile_is_live(backup, db, &which)) {
        fprintf(stderr, "adaptmon restore: refusing: %s is %s (%s)\n", backup, which, db);
        return 2;
    }
    if (am_dbfile_in_use(db)) {
        fprintf(stderr,
                "adaptmon restore: refusing: %s is the database of a running adaptmon serve; "
                "stop it first\n",
                db);
        return 2;
    }
    char *bwal = am_restore_cat(backup, "-wal");
    int has_wal = stat(bwal, &sb) == 0 && sb.st_size > 0;
    free(bwal);
    if (has_wal) {
        fprintf(stderr,
                "adaptmon restore: refusing: %s has a WAL file beside it, so it is not a closed "
                "copy (make backups with `adaptmon backup`)\n",
                backup);
        return 2;
    }
    char *dir = am_dbfile_dir(db);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "adaptmon restore: the directory %s does not exist\n", dir);
        rc = 2;
    }
    free(dir);
    return rc;
}

/* Verifies the backup (see the file comment) and gives the checksum it
 * has. Returns 0 or the exit status (message printed). */
static int am_restore_verify(const char *backup, int checksum, char want[65])
{
    am_buf err;
    am_buf_init(&err);
    int rc = AM_OK;
    char got[65];
    if (checksum) {
        rc = am_dbfile_sidecar_read(backup, want, &err);
        if (rc == AM_ERR_NOTFOUND)
            am_buf_printf(&err,
                          "%s.sha256 is missing: the backup cannot be verified (`adaptmon "
                          "backup` writes it; add --no-checksum to restore a backup made "
                          "otherwise — SQLite's integrity check still runs)",
                          backup);
        if (rc == AM_OK)
            rc = am_dbfile_sha256(backup, got, &err);
        if (rc == AM_OK && strcmp(got, want) != 0) {
            am_buf_printf(&err,
                          "%s does not match its checksum (sha256 %s, %s.sha256 says %s): the "
                          "copy is damaged; nothing was changed",
                          backup, got, backup, want);
            rc = AM_ERR_PARSE;
        }
    } else {
        rc = am_dbfile_sha256(backup, want, &err);
    }
    if (rc == AM_OK)
        rc = am_store_check_file(backup, &err);
    if (rc != AM_OK)
        fprintf(stderr, "adaptmon restore: %s\n", am_buf_str(&err));
    am_buf_cleanup(&err);
    return rc == AM_OK ? 0 : 1;
}

int am_cli_restore(int argc, char **argv, char **envp)
{
    am_srv_config cfg;
    am_srv_config_init(&cfg);
    for (char **e = envp; e && *e; e++)
        if (!strncmp(*e, "ADAPTMON_DB=", 12) && (*e)[12])
            snprintf(cfg.db, sizeof cfg.db, "%s", *e + 12);
    const char *db = cfg.db, *backup = NULL;
    int checksum = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            am_restore_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-checksum")) {
            checksum = 0;
        } else if (!strcmp(a, "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strncmp(a, "--db=", 5)) {
            db = a + 5;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "adaptmon restore: unknown or incomplete option '%s'\n", a);
            am_restore_usage(stderr);
            return 2;
        } else if (!backup) {
            backup = a;
        } else {
            fprintf(stderr, "adaptmon restore: one backup only\n");
            am_restore_usage(stderr);
            return 2;
        }
    }
    if (!backup || !*db || !strcmp(db, ":memory:")) {
        am_restore_usage(stderr);
        return 2;
    }
    int rc = am_restore_check_places(backup, db);
    char want[65], got[65];
    if (rc == 0)
        rc = am_restore_verify(backup, checksum, want);
    if (rc)
        return rc;
    char *tmp = am_restore_cat(db, ".restore.tmp");
    am_buf err;
    am_buf_init(&err);
    int r = am_restore_copy(backup, tmp, got, &err);
    if (r == AM_OK && strcmp(got, want) != 0) {
        am_buf_printf(&err,
                      "%s changed while it was copied (sha256 %s, verified %s); nothing "
                      "was changed",
                      backup, got, want);
        unlink(tmp);
        r = AM_ERR_PARSE;
    }
    if (r == AM_OK)
        r = am_restore_swap(db, tmp, &err);
    if (r != AM_OK)
        fprintf(stderr, "adaptmon restore: %s\n", am_buf_str(&err));
    else
        printf("adaptmon restore: %s -> %s (sha256 %s verified)\n", backup, db, want);
    am_buf_cleanup(&err);
    free(tmp);
    return r == AM_OK ? 0 : 1;
}
