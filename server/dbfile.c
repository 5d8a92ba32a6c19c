/*
 * dbfile.c — the database as a file (see dbfile.h): identity checks that
 * keep `adaptmon backup` from writing over the live database, the SQLite
 * header test, the exclusive lock of `adaptmon serve` and its readiness
 * check.
 *
 * Why flock on the database file itself: SQLite (unix VFS) locks with
 * fcntl byte ranges on the database and its -shm file; on Linux local file
 * systems flock and fcntl locks never interact, so a whole-file flock held
 * by the server cannot break SQLite's protocol, and it follows the inode:
 * any path to the same file (symlink, "./", "//", hard link) meets the
 * same lock. It is released by the kernel when the process dies, so a
 * crash leaves nothing stale. (On NFS flock is emulated with fcntl; SQLite
 * in WAL mode does not work on NFS anyway.)
 */
#include "dbfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char am_sqlite_magic[16] = "SQLite format 3";

char *am_dbfile_dir(const char *path)
{
    char *d = am_xstrdup(path);
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(d, ".");
    return d;
}

/* The base name of path (borrowed from path). */
static const char *am_dbfile_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int am_dbfile_mkdir_parents(const char *path, am_buf *err)
{
    char *p = am_xstrdup(path);
    char *slash = strrchr(p, '/');
    int rc = AM_OK;
    if (slash && slash != p) {
        *slash = '\0';
        for (char *q = p + 1;; q++) {
            if (*q != '/' && *q != '\0')
                continue;
            char saved = *q;
            *q = '\0';
            struct stat sb;
            if (stat(p, &sb) != 0) {
                if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                    am_buf_printf(err, "cannot create directory %s: %s", p, strerror(errno));
                    rc = AM_ERR_IO;
                    break;
                }
            } else if (!S_ISDIR(sb.st_mode)) {
                am_buf_printf(err, "cannot create directory %s: not a directory", p);
                rc = AM_ERR_IO;
                break;
            }
            *q = saved;
            if (saved == '\0')
                break;
        }
    }
    free(p);
    return rc;
}

int am_dbfile_same(const char *path, const char *live)
{
    struct stat a, b;
    int ha = stat(path, &a) == 0, hb = stat(live, &b) == 0;
    if (ha && hb)
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    if (ha || hb)
        return 0;
    if (strcmp(am_dbfile_base(path), am_dbfile_base(live)))
        return 0;
    char *da = am_dbfile_dir(path), *db = am_dbfile_dir(live);
    int same =
        stat(da, &a) == 0 && stat(db, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    free(da);
    free(db);
    return same;
}

int am_dbfile_is_live(const char *path, const char *db, const char **which)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    static const char *const names[] = {"the live database", "the live database's WAL file",
                                        "the live database's shared-memory file",
                                        "the live database's rollback journal"};
    /* SQLite keeps the side files next to the real file (it resolves
     * symlinks of the database path) */
    char *real = realpath(db, NULL);
    const char *base = real ? real : db;
    size_t n = strlen(base);
    char *side = am_xmalloc(n + 16);
    int hit = 0;
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0] && !hit; i++) {
        memcpy(side, base, n);
        strcpy(side + n, suffix[i]);
        if (am_dbfile_same(path, side) || (i == 0 && am_dbfile_same(path, db))) {
            hit = 1;
            if (which)
                *which = names[i];
        }
    }
    free(side);
    free(real);
    return hit;
}

int am_dbfile_check_kind(const char *path, am_buf *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT ? AM_OK
                               : (am_buf_printf(err, "%s: %s", path, strerror(errno)), AM_ERR_IO);
    if (S_ISDIR(sb.st_mode)) {
        am_buf_printf(err, "%s is a directory, not a database file", path);
        return AM_ERR_IO;
    }
    if (!S_ISREG(sb.st_mode)) {
        am_buf_printf(err, "%s is not a regular file", path);
        return AM_ERR_IO;
    }
    if (sb.st_size == 0)
        return AM_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        am_buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    char head[16];
    ssize_t got = pread(fd, head, sizeof head, 0);
    close(fd);
    if (got != (ssize_t)sizeof head || memcmp(head, am_sqlite_magic, sizeof head)) {
        am_buf_printf(err,
                      "%s is not an SQLite database (its first bytes are not the SQLite "
                      "header); refusing to touch it",
                      path);
        return AM_ERR_PARSE;
    }
    return AM_OK;
}

int am_dbfile_lock(const char *path, int *fd, am_buf *err)
{
    *fd = -1;
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) {
        am_buf_printf(err, "cannot open %s: %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(f);
        if (e == EWOULDBLOCK) {
            am_buf_printf(err,
                          "%s is in use by another adaptmon serve (it holds the database's "
                          "lock); stop that server first, or give this one another --db",
                          path);
            return AM_ERR_CONFLICT;
        }
        am_buf_printf(err, "cannot lock %s: %s", path, strerror(e));
        return AM_ERR_IO;
    }
    *fd = f;
    return AM_OK;
}

int am_dbfile_in_use(const char *path)
{
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return 0;
    int busy = flock(f, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(f); /* releases the shared lock if it was taken */
    return busy;
}

void am_dbfile_unlock(int fd)
{
    if (fd < 0)
        return;
    flock(fd, LOCK_UN);
    close(fd);
}

int am_dbfile_still_ours(int fd, const char *path, const char **why)
{
    struct stat open_sb, path_sb;
    if (fd < 0 || fstat(fd, &open_sb) != 0) {
        *why = "the database file cannot be examined";
        return AM_ERR_IO;
    }
    if (open_sb.st_nlink == 0 || stat(path, &path_sb) != 0) {
        *why = "the database file was deleted";
        return AM_ERR_NOTFOUND;
    }
    if (path_sb.st_dev != open_sb.st_dev || path_sb.st_ino != open_sb.st_ino) {
        *why = "the database path now names another file";
        return AM_ERR_NOTFOUND;
    }
    char head[16];
    if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
        memcmp(head, am_sqlite_magic, sizeof head)) {
        *why = "the database file is damaged (no SQLite header)";
        return AM_ERR_PARSE;
    }
    return AM_OK;
}
