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

#include "sha256.h"

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

/* ---- backups, restores and the WAL's owner -------------------------------- */

static uint32_t am_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* path + suffix (caller frees). */
static char *am_dbfile_cat(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    char *s = am_xmalloc(n + m + 1);
    memcpy(s, path, n);
    memcpy(s + n, suffix, m + 1);
    return s;
}

int am_dbfile_sha256(const char *path, char hex[65], am_buf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        am_buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    am_sha256 c;
    am_sha256_init(&c);
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = am_xmalloc(CHUNK);
    ssize_t got;
    while ((got = read(fd, buf, CHUNK)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0)
            am_sha256_update(&c, buf, (size_t)got);
    int e = errno;
    free(buf);
    close(fd);
    if (got < 0) {
        am_buf_printf(err, "cannot read %s: %s", path, strerror(e));
        return AM_ERR_IO;
    }
    am_sha256_hex(&c, hex);
    return AM_OK;
}

int am_dbfile_sidecar_read(const char *path, char hex[65], am_buf *err)
{
    char *side = am_dbfile_cat(path, ".sha256");
    FILE *f = fopen(side, "r");
    if (!f) {
        int e = errno;
        if (e != ENOENT)
            am_buf_printf(err, "cannot read %s: %s", side, strerror(e));
        free(side);
        return e == ENOENT ? AM_ERR_NOTFOUND : AM_ERR_IO;
    }
    char line[80] = "";
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    for (int i = 0; ok && i < 64; i++) {
        char ch = line[i];
        if (ch >= 'A' && ch <= 'F')
            ch = (char)(ch - 'A' + 'a');
        ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
        hex[i] = ch;
    }
    ok = ok && (line[64] == ' ' || line[64] == '\n' || line[64] == '\0');
    hex[64] = '\0';
    if (!ok)
        am_buf_printf(err, "%s is not a checksum file (it must start with 64 hex digits)", side);
    free(side);
    return ok ? AM_OK : AM_ERR_PARSE;
}

int am_dbfile_sidecar_write(const char *path, const char *hex, am_buf *err)
{
    char *side = am_dbfile_cat(path, ".sha256");
    char *tmp = am_dbfile_cat(side, ".tmp");
    int rc = AM_OK;
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s  %s\n", hex, am_dbfile_base(path)) < 0 || fflush(f) != 0 ||
        fsync(fileno(f)) != 0) {
        am_buf_printf(err, "cannot write %s: %s", tmp, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (f && fclose(f) != 0 && rc == AM_OK) {
        am_buf_printf(err, "cannot write %s: %s", tmp, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && rename(tmp, side) != 0) {
        am_buf_printf(err, "cannot rename %s to %s: %s", tmp, side, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc != AM_OK) {
        unlink(tmp);
    } else {
        char *dir = am_dbfile_dir(path);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd); /* best effort: makes the rename durable */
            close(dfd);
        }
        free(dir);
    }
    free(tmp);
    free(side);
    return rc;
}

/* The first 100 bytes of the database (its header) into head. AM_OK,
 * AM_ERR_NOTFOUND (missing or shorter), AM_ERR_IO. */
static int am_dbfile_head(const char *path, unsigned char head[100], am_buf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return AM_ERR_NOTFOUND;
        am_buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    ssize_t got = pread(fd, head, 100, 0);
    close(fd);
    return got == 100 && !memcmp(head, am_sqlite_magic, sizeof am_sqlite_magic) ? AM_OK
                                                                                : AM_ERR_NOTFOUND;
}

int am_dbfile_ids(const char *path, uint32_t *life, uint32_t *prev, am_buf *err)
{
    unsigned char head[100];
    int rc = am_dbfile_head(path, head, err);
    if (rc == AM_OK) {
        *life = am_be32(head + 60);
        *prev = am_be32(head + 68);
    }
    return rc;
}

/* SQLite's WAL checksum (the WAL file format, "Checksum Algorithm"): over
 * n bytes (a multiple of 8) of 32-bit words, big-endian words when be,
 * continuing from s. */
static void am_wal_cksum(int be, const unsigned char *p, size_t n, uint32_t s[2])
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint32_t x0, x1;
        if (be) {
            x0 = am_be32(p + i);
            x1 = am_be32(p + i + 4);
        } else {
            x0 = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                 (uint32_t)p[i + 3] << 24;
            x1 = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 | (uint32_t)p[i + 6] << 16 |
                 (uint32_t)p[i + 7] << 24;
        }
        s[0] += x0 + s[1];
        s[1] += x1 + s[0];
    }
}

/* What the committed frames of a WAL say about its owner. */
typedef struct am_walscan {
    uint32_t page_size; /* the WAL header's */
    long committed; /* frames up to the last valid commit frame */
    int page1; /* a committed frame holds page 1 */
    int owner; /* ... and names the life `want` (see dbfile.h) */
} am_walscan;

/* Reads the WAL at path as SQLite's recovery would (header checksum, then
 * frames while their salts and running checksums hold; only whole
 * transactions count) and records whether its page-1 frames name the
 * database life want. AM_OK (an absent, short or invalid WAL has no
 * frames), AM_ERR_IO. */
static int am_wal_scan(const char *path, uint32_t want, am_walscan *ws, am_buf *err)
{
    memset(ws, 0, sizeof *ws);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return AM_OK;
        am_buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    unsigned char h[32];
    uint32_t magic = 0, ps = 0;
    if (pread(fd, h, 32, 0) == 32) {
        magic = am_be32(h);
        ps = am_be32(h + 8);
    }
    uint32_t s[2] = {0, 0};
    int be = (int)(magic & 1);
    if ((magic & ~1u) != 0x377f0682u || am_be32(h + 4) != 3007000u || ps < 512 || ps > 65536 ||
        (ps & (ps - 1))) {
        close(fd);
        return AM_OK;
    }
    am_wal_cksum(be, h, 24, s);
    if (s[0] != am_be32(h + 24) || s[1] != am_be32(h + 28)) {
        close(fd);
        return AM_OK;
    }
    ws->page_size = ps;
    unsigned char *fr = am_xmalloc(24 + (size_t)ps);
    int pend_p1 = 0, pend_own = 0, seen_p1 = 0;
    long n = 0;
    for (off_t off = 32;; off += 24 + (off_t)ps) {
        if (pread(fd, fr, 24 + (size_t)ps, off) != (ssize_t)(24 + ps))
            break;
        if (memcmp(fr + 8, h + 16, 8) != 0 || am_be32(fr) == 0)
            break;
        am_wal_cksum(be, fr, 8, s);
        am_wal_cksum(be, fr + 24, ps, s);
        if (s[0] != am_be32(fr + 16) || s[1] != am_be32(fr + 20))
            break;
        n++;
        if (am_be32(fr) == 1) {
            const unsigned char *pg = fr + 24;
            /* the first page-1 frame's previous id is the life the
             * database had when the WAL started */
            if (!seen_p1 && !pend_p1 && am_be32(pg + 68) == want)
                pend_own = 1;
            if (am_be32(pg + 60) == want)
                pend_own = 1;
            pend_p1 = 1;
        }
        if (am_be32(fr + 4) != 0) { /* a commit frame */
            ws->committed = n;
            ws->page1 |= pend_p1;
            ws->owner |= pend_own;
            seen_p1 |= pend_p1;
            pend_p1 = pend_own = 0;
        }
    }
    free(fr);
    close(fd);
    return AM_OK;
}

/* An untouched backup with a checksum file must match it. */
static int am_dbfile_check_backup(const char *db, am_buf *err)
{
    char want[65], got[65];
    int rc = am_dbfile_sidecar_read(db, want, err);
    if (rc == AM_ERR_NOTFOUND)
        return AM_OK;
    if (rc == AM_OK)
        rc = am_dbfile_sha256(db, got, err);
    if (rc == AM_OK && strcmp(want, got) != 0) {
        am_buf_printf(err,
                      "%s is a restored backup that does not match its checksum file %s.sha256 "
                      "(sha256 %s, expected %s): the copy is damaged. Restore again from a good "
                      "copy (`adaptmon restore BACKUP --db %s` verifies before it writes), or, "
                      "if the .sha256 file belongs to another backup, remove it",
                      db, db, got, want, db);
        rc = AM_ERR_PARSE;
    }
    return rc;
}

int am_dbfile_check_wal(const char *db, am_buf *err)
{
    unsigned char head[100];
    int have_db = am_dbfile_head(db, head, err);
    if (have_db == AM_ERR_IO)
        return AM_ERR_IO;
    uint32_t life = have_db == AM_OK ? am_be32(head + 60) : 0;
    char *wal = am_dbfile_cat(db, "-wal");
    am_walscan ws;
    int rc = am_wal_scan(wal, life, &ws, err);
    if (rc == AM_OK && ws.committed > 0) {
        uint32_t dbps = have_db == AM_OK ? (uint32_t)head[16] << 8 | head[17] : 0;
        if (dbps == 1)
            dbps = 65536;
        const char *why = NULL;
        if (have_db != AM_OK)
            why = "the database file is missing or empty";
        else if (dbps != ws.page_size)
            why = "its page size differs from the database's";
        else if (ws.page1 && !ws.owner)
            why = "it was written by another copy of the database (its pages name another "
                  "database id)";
        if (why) {
            am_buf_printf(err,
                          "the WAL file %s does not belong to %s: %s. Recovering it would mix "
                          "two databases (a server that stopped without closing the database "
                          "left it, and the database file was replaced since, e.g. by a "
                          "backup). If %s is the copy you want, move %s and %s-shm aside and "
                          "start again (`adaptmon restore BACKUP --db %s` does this); if not, "
                          "put back the database file that goes with the WAL",
                          wal, db, why, db, wal, db, db);
            rc = AM_ERR_CONFLICT;
        }
    }
    if (rc == AM_OK && ws.committed == 0 && have_db == AM_OK &&
        am_be32(head + 68) == AM_DBFILE_BACKUP_MARK)
        rc = am_dbfile_check_backup(db, err);
    free(wal);
    return rc;
}
