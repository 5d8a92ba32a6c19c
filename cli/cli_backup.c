/*
 * cli_backup.c — `adaptmon backup --db PATH DEST`: a consistent online copy
 * of a server's database while the server keeps running.
 *
 * The command opens the same SQLite file as a second process (WAL mode lets
 * a reader take a snapshot while the server writes) and copies every page
 * of one read snapshot with SQLite's online backup API (am_store_backup).
 * The copy holds every segment committed — that is, acknowledged — before
 * the snapshot was taken, and nothing half-written: it is a database the
 * server can be started on as is (`adaptmon serve --db DEST`).
 *
 * The database must exist and be an SQLite file (the command never creates
 * one). DEST is written as DEST.tmp and renamed at the end, so a crash
 * leaves no half copy under the final name. The copy is opened through one
 * plain connection that only reads (never a store: that would migrate,
 * clean up and checkpoint the running server's database). The copy gets a
 * database id of its own and the mark of an untouched backup (dbfile.h),
 * and its SHA-256 goes to DEST.sha256 (sha256sum format), which
 * `adaptmon restore` and the server's start-up verify.
 *
 * Operator mistakes are refused before anything is written (message on
 * stderr, nothing changed): a DEST (or its DEST.tmp side files) that is
 * the database or its -wal/-shm/-journal file under any spelling (compared
 * by file identity: "./", "//", symlinks, relative paths), a DEST that is
 * a directory or sits in a directory that does not exist (no directory is
 * created: a mistyped mount point would silently fill the wrong disk), and
 * an existing DEST unless --force is given, and never one that a running
 * adaptmon serve holds (its database lock, dbfile.h), --force or not.
 * Exit status: 0 ok, 1 failure, 2 usage error or refused destination.
 */
#include "cli.h"
#include "dbfile.h"
#include "srvconfig.h"
#include "store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void am_backup_usage(FILE *out)
{
    fputs("usage: adaptmon backup [--db PATH] [--force] DEST\n"
          "\n"
          "Writes a consistent copy of the database at PATH (default: ADAPTMON_DB, or\n"
          "./var/adaptmon.db) to DEST while the server keeps running (SQLite online\n"
          "backup of one read snapshot), and its SHA-256 to DEST.sha256. To restore it:\n"
          "  adaptmon restore DEST --db PATH   (stop the server first)\n"
          "\n"
          "DEST must not be the database (or its -wal/-shm/-journal file) under any\n"
          "name, must not be a directory, and its directory must exist. An existing\n"
          "DEST is replaced only with --force.\n",
          out);
}

/* Refuses a destination that would destroy data or land somewhere the
 * operator did not mean (see the file comment). db and dest borrowed.
 * Returns 0 when dest is fine, else the exit status (message printed). */
static int am_backup_check_dest(const char *db, const char *dest, int force)
{
    static const char *const side[] = {
        "", ".tmp", ".tmp-wal", ".tmp-shm", ".tmp-journal", ".sha256", ".sha256.tmp"};
    size_t n = strlen(dest);
    char *p = am_xmalloc(n + 16);
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        memcpy(p, dest, n);
        strcpy(p + n, side[i]);
        const char *which = NULL;
        if (am_dbfile_is_live(p, db, &which)) {
            fprintf(stderr,
                    "adaptmon backup: refusing: %s%s is %s (%s) — a backup must go to "
                    "another file\n",
                    p, i ? " (the temporary copy)" : "", which, db);
            free(p);
            return 2;
        }
    }
    free(p);
    struct stat sb;
    if (n && dest[n - 1] == '/') {
        fprintf(stderr,
                "adaptmon backup: %s is a directory; give a file name (e.g. %sadaptmon.db)\n", dest,
                dest);
        return 2;
    }
    if (stat(dest, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            fprintf(stderr,
                    "adaptmon backup: %s is a directory; give a file name (e.g. %s/adaptmon.db)\n",
                    dest, dest);
            return 2;
        }
        if (!S_ISREG(sb.st_mode)) {
            fprintf(stderr, "adaptmon backup: %s exists and is not a regular file\n", dest);
            return 2;
        }
        if (am_dbfile_in_use(dest)) {
            fprintf(stderr,
                    "adaptmon backup: refusing: %s is the database of a running adaptmon "
                    "serve; stop it first (even --force does not replace it)\n",
                    dest);
            return 2;
        }
        if (!force) {
            fprintf(stderr,
                    "adaptmon backup: %s already exists; refusing to replace it (add --force "
                    "to replace it)\n",
                    dest);
            return 2;
        }
    } else if (errno != ENOENT) {
        fprintf(stderr, "adaptmon backup: %s: %s\n", dest, strerror(errno));
        return 1;
    }
    char *dir = am_dbfile_dir(dest);
    int rc = 0;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr,
                "adaptmon backup: the directory %s does not exist (it is not created: create it "
                "first)\n",
                dir);
        rc = 2;
    }
    free(dir);
    return rc;
}

int am_cli_backup(int argc, char **argv, char **envp)
{
    /* defaults and ADAPTMON_DB come from the server's configuration table */
    am_srv_config cfg;
    am_srv_config_init(&cfg);
    for (char **e = envp; e && *e; e++)
        if (!strncmp(*e, "ADAPTMON_DB=", 12) && (*e)[12])
            snprintf(cfg.db, sizeof cfg.db, "%s", *e + 12);
    const char *db = cfg.db, *dest = NULL;
    int force = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            am_backup_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--force")) {
            force = 1;
        } else if (!strcmp(a, "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strncmp(a, "--db=", 5)) {
            db = a + 5;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "adaptmon backup: unknown or incomplete option '%s'\n", a);
            am_backup_usage(stderr);
            return 2;
        } else if (!dest) {
            dest = a;
        } else {
            fprintf(stderr, "adaptmon backup: one destination only\n");
            am_backup_usage(stderr);
            return 2;
        }
    }
    if (!dest || !*db) {
        am_backup_usage(stderr);
        return 2;
    }
    struct stat sb;
    if (stat(db, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "adaptmon backup: no database file at %s\n", db);
        return 1;
    }
    am_buf err;
    am_buf_init(&err);
    if (am_dbfile_check_kind(db, &err) != AM_OK || sb.st_size == 0) {
        fprintf(stderr, "adaptmon backup: %s\n",
                err.len ? am_buf_str(&err) : "the database file is empty");
        am_buf_cleanup(&err);
        return 1;
    }
    am_buf_cleanup(&err);
    int rc = am_backup_check_dest(db, dest, force);
    if (rc)
        return rc;

    am_buf_init(&err);
    rc = am_store_backup_path(db, dest, &err);
    if (rc != AM_OK) {
        fprintf(stderr, "adaptmon backup: %s\n", am_buf_str(&err));
        am_buf_cleanup(&err);
        return 1;
    }
    am_buf_cleanup(&err);
    if (stat(dest, &sb) == 0)
        printf("adaptmon backup: %s -> %s (%lld bytes; checksum in %s.sha256)\n", db, dest,
               (long long)sb.st_size, dest);
    return 0;
}
