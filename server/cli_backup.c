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
 * The database must exist (the command never creates one). DEST is written
 * as DEST.tmp and renamed at the end, so a crash leaves no half copy under
 * the final name. Exit status: 0 ok, 1 failure, 2 usage error.
 */
#include "cli.h"
#include "srvconfig.h"
#include "store.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void am_backup_usage(FILE *out)
{
    fputs("usage: adaptmon backup [--db PATH] DEST\n"
          "\n"
          "Writes a consistent copy of the database at PATH (default: ADAPTMON_DB, or\n"
          "./var/adaptmon.db) to DEST while the server keeps running (SQLite online\n"
          "backup of one read snapshot). Start a server on the copy to restore:\n"
          "  adaptmon serve --db DEST\n",
          out);
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            am_backup_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--db") && i + 1 < argc) {
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
    if (!strcmp(db, dest)) {
        fprintf(stderr, "adaptmon backup: the destination is the database itself\n");
        return 2;
    }

    am_buf err;
    am_buf_init(&err);
    am_store *st = NULL;
    int rc = am_store_open(db, AM_DURABLE_NORMAL, &st, &err);
    if (rc != AM_OK) {
        fprintf(stderr, "adaptmon backup: cannot open %s: %s\n", db, am_buf_str(&err));
        am_buf_cleanup(&err);
        return 1;
    }
    rc = am_store_backup(st, dest, &err);
    am_store_close(st);
    if (rc != AM_OK) {
        fprintf(stderr, "adaptmon backup: %s\n", am_buf_str(&err));
        am_buf_cleanup(&err);
        return 1;
    }
    am_buf_cleanup(&err);
    if (stat(dest, &sb) == 0)
        printf("adaptmon backup: %s -> %s (%lld bytes)\n", db, dest, (long long)sb.st_size);
    return 0;
}
