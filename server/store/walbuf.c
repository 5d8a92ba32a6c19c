/*
 * store/walbuf.c — the writer's VFS: one write() per commit to the WAL
 * (issue 12).
 *
 * SQLite appends each WAL frame with two writes, its 24-byte header and then
 * its page, so a frame of 4,120 bytes costs two system calls and three page
 * cache pages' bookkeeping in the kernel (the header's page, and the two
 * its page straddles); with ~8 frames a POST that was 10 % of the server's
 * CPU. This shim sits between the writer connection and SQLite's own VFS and
 * gathers the consecutive writes to the WAL into one buffer, written out in
 * one pwrite:
 *
 *   - right after the page of a commit frame (a frame header whose "database
 *     size after commit" field is not 0): SQLite updates the WAL index, which
 *     makes the frames visible to the other connections, only after that
 *     write has returned, and answers COMMIT after that, so every
 *     committed frame is in the file (the page cache) before any reader can
 *     look for it or any client is answered: a SIGKILL loses nothing it
 *     would not have lost without the shim;
 *   - and, in case a SQLite version wrote frames otherwise, before any barrier
 *     or lock of the shared-memory WAL index (through any file of this VFS):
 *     SQLite publishes new frames in the index only after such a barrier;
 *   - before a write that does not continue the buffer, before any read,
 *     sync, truncate, size query, lock change or file control of the WAL,
 *     at close, and when the buffer reaches AM_WALBUF_MAX bytes.
 *
 * Nothing else changes: every other file (the database, journals) and every
 * other method is passed through, and an error of the deferred write is
 * returned by the call that wrote it out (at the latest the commit frame's
 * page, so the commit fails as it would have).
 */
#include "walbuf.h"

#include "am.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AM_WALBUF_MAX (1 << 20) /* bytes gathered at most before a write */
/* bytes per call of the real xWrite: SQLite's unix VFS writes at most
 * 0x1ffff bytes a system call and takes a larger amount modulo 0x20000,
 * so that a write of a multiple of 128 KiB would come back as SQLITE_FULL */
#define AM_WALBUF_CALL 0x1f000
#define AM_WAL_FRAME_HDR 24 /* bytes of a WAL frame header */

struct am_walbuf {
    sqlite3_vfs base; /* first: SQLite passes &base */
    sqlite3_vfs *real; /* borrowed: the default VFS */
    char name[64];
    int registered;
    atomic_llong writes; /* calls of the real xWrite on WAL files */
    struct wb_file *wals; /* the open WAL files (one connection uses the VFS) */
};

/* An open file: the real one follows this struct (szOsFile). */
typedef struct wb_file {
    sqlite3_file base; /* first: pMethods = &wb_io */
    sqlite3_file *real;
    am_walbuf *vfs; /* borrowed: its counter */
    int wal; /* the WAL: writes are gathered */
    char *buf; /* owned; len bytes gathered for offset off */
    size_t len, cap;
    sqlite3_int64 off;
    int commit; /* the last write was a commit frame's header */
    struct wb_file *next; /* in vfs->wals */
} wb_file;

static sqlite3_vfs *wb_real(sqlite3_vfs *v)
{
    return ((am_walbuf *)v)->real;
}

/* Writes out the gathered bytes; the buffer is empty afterwards whatever
 * the result. */
static int wb_flush(wb_file *f)
{
    f->commit = 0;
    if (!f->len)
        return SQLITE_OK;
    int rc = SQLITE_OK;
    for (size_t at = 0; at < f->len && rc == SQLITE_OK; at += AM_WALBUF_CALL) {
        size_t n = f->len - at < AM_WALBUF_CALL ? f->len - at : AM_WALBUF_CALL;
        rc = f->real->pMethods->xWrite(f->real, f->buf + at, (int)n, f->off + (sqlite3_int64)at);
        atomic_fetch_add(&f->vfs->writes, 1);
    }
    f->len = 0;
    return rc;
}

/* Writes out every open WAL of the VFS (before the WAL index changes). */
static int wb_flush_wals(am_walbuf *v)
{
    int rc = SQLITE_OK;
    for (wb_file *w = v->wals; w; w = w->next) {
        int r = wb_flush(w);
        if (rc == SQLITE_OK)
            rc = r;
    }
    return rc;
}

static int wb_close(sqlite3_file *p)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    if (f->wal)
        for (wb_file **at = &f->vfs->wals; *at; at = &(*at)->next)
            if (*at == f) {
                *at = f->next;
                break;
            }
    int rc2 = f->real->pMethods->xClose(f->real);
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
    return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *p, void *z, int n, sqlite3_int64 off)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, z, n, off);
}

static uint32_t wb_be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static int wb_write(sqlite3_file *p, const void *z, int n, sqlite3_int64 off)
{
    wb_file *f = (wb_file *)p;
    if (!f->wal || n <= 0)
        return f->real->pMethods->xWrite(f->real, z, n, off);
    int rc = SQLITE_OK;
    int commit = f->commit; /* this write is the page of a commit frame */
    if (f->len && (off != f->off + (sqlite3_int64)f->len || f->len + (size_t)n > AM_WALBUF_MAX))
        rc = wb_flush(f);
    if (rc != SQLITE_OK)
        return rc;
    if ((size_t)n > AM_WALBUF_CALL) {
        atomic_fetch_add(&f->vfs->writes, 1);
        return f->real->pMethods->xWrite(f->real, z, n, off); /* SQLite's own size */
    }
    if (!f->len)
        f->off = off;
    if (f->len + (size_t)n > f->cap) {
        size_t cap = f->cap ? f->cap : 64 * 1024;
        while (cap < f->len + (size_t)n)
            cap *= 2;
        f->buf = am_xrealloc(f->buf, cap);
        f->cap = cap;
    }
    memcpy(f->buf + f->len, z, (size_t)n);
    f->len += (size_t)n;
    if (commit)
        return wb_flush(f);
    f->commit = n == AM_WAL_FRAME_HDR && wb_be32((const unsigned char *)z + 4) != 0;
    return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *p, sqlite3_int64 size)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wb_sync(sqlite3_file *p, int flags)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wb_size(sqlite3_file *p, sqlite3_int64 *size)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int wb_lock(sqlite3_file *p, int level)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xLock(f->real, level);
}

static int wb_unlock(sqlite3_file *p, int level)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xUnlock(f->real, level);
}

static int wb_reserved(sqlite3_file *p, int *out)
{
    wb_file *f = (wb_file *)p;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wb_fcntl(sqlite3_file *p, int op, void *arg)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wb_sector(sqlite3_file *p)
{
    wb_file *f = (wb_file *)p;
    return f->real->pMethods->xSectorSize(f->real);
}

static int wb_devchar(sqlite3_file *p)
{
    wb_file *f = (wb_file *)p;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int wb_shm_map(sqlite3_file *p, int pg, int pgsz, int extend, void volatile **pp)
{
    wb_file *f = (wb_file *)p;
    if (f->real->pMethods->iVersion < 2)
        return SQLITE_IOERR_SHMMAP;
    int rc = wb_flush_wals(f->vfs);
    if (rc != SQLITE_OK)
        return rc;
    return f->real->pMethods->xShmMap(f->real, pg, pgsz, extend, pp);
}

static int wb_shm_lock(sqlite3_file *p, int offset, int n, int flags)
{
    wb_file *f = (wb_file *)p;
    int rc = wb_flush_wals(f->vfs);
    if (rc != SQLITE_OK)
        return rc;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void wb_shm_barrier(sqlite3_file *p)
{
    wb_file *f = (wb_file *)p;
    wb_flush_wals(f->vfs); /* an error comes back from the WAL's next call */
    f->real->pMethods->xShmBarrier(f->real);
}

static int wb_shm_unmap(sqlite3_file *p, int del)
{
    wb_file *f = (wb_file *)p;
    return f->real->pMethods->xShmUnmap(f->real, del);
}

static int wb_fetch(sqlite3_file *p, sqlite3_int64 off, int n, void **pp)
{
    wb_file *f = (wb_file *)p;
    *pp = NULL; /* no mapping: SQLite reads */
    int rc = wb_flush(f);
    if (rc != SQLITE_OK || f->real->pMethods->iVersion < 3)
        return rc;
    return f->real->pMethods->xFetch(f->real, off, n, pp);
}

static int wb_unfetch(sqlite3_file *p, sqlite3_int64 off, void *pg)
{
    wb_file *f = (wb_file *)p;
    if (f->real->pMethods->iVersion < 3)
        return SQLITE_OK;
    return f->real->pMethods->xUnfetch(f->real, off, pg);
}

static const sqlite3_io_methods wb_io = {
    3,           wb_close,       wb_read,      wb_write, wb_truncate, wb_sync,    wb_size,
    wb_lock,     wb_unlock,      wb_reserved,  wb_fcntl, wb_sector,   wb_devchar, wb_shm_map,
    wb_shm_lock, wb_shm_barrier, wb_shm_unmap, wb_fetch, wb_unfetch,
};

static int wb_open(sqlite3_vfs *v, const char *name, sqlite3_file *p, int flags, int *out)
{
    wb_file *f = (wb_file *)p;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    f->vfs = (am_walbuf *)v;
    f->wal = (flags & SQLITE_OPEN_WAL) != 0;
    sqlite3_vfs *real = wb_real(v);
    int rc = real->xOpen(real, name, f->real, flags, out);
    /* xClose is called when pMethods is set, even after a failed open */
    p->pMethods = f->real->pMethods ? &wb_io : NULL;
    if (p->pMethods && f->wal) {
        f->next = f->vfs->wals;
        f->vfs->wals = f;
    }
    return rc;
}

static int wb_delete(sqlite3_vfs *v, const char *name, int sync)
{
    return wb_real(v)->xDelete(wb_real(v), name, sync);
}

static int wb_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    return wb_real(v)->xAccess(wb_real(v), name, flags, out);
}

static int wb_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
    return wb_real(v)->xFullPathname(wb_real(v), name, n, out);
}

static void *wb_dlopen(sqlite3_vfs *v, const char *name)
{
    return wb_real(v)->xDlOpen(wb_real(v), name);
}

static void wb_dlerror(sqlite3_vfs *v, int n, char *msg)
{
    wb_real(v)->xDlError(wb_real(v), n, msg);
}

static void (*wb_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    return wb_real(v)->xDlSym(wb_real(v), h, sym);
}

static void wb_dlclose(sqlite3_vfs *v, void *h)
{
    wb_real(v)->xDlClose(wb_real(v), h);
}

static int wb_random(sqlite3_vfs *v, int n, char *out)
{
    return wb_real(v)->xRandomness(wb_real(v), n, out);
}

static int wb_sleep(sqlite3_vfs *v, int us)
{
    return wb_real(v)->xSleep(wb_real(v), us);
}

static int wb_time(sqlite3_vfs *v, double *out)
{
    return wb_real(v)->xCurrentTime(wb_real(v), out);
}

static int wb_lasterr(sqlite3_vfs *v, int n, char *out)
{
    return wb_real(v)->xGetLastError(wb_real(v), n, out);
}

static int wb_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    return wb_real(v)->xCurrentTimeInt64(wb_real(v), out);
}

am_walbuf *am_walbuf_new(void)
{
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2 || !real->xCurrentTimeInt64)
        return NULL;
    am_walbuf *w = am_xcalloc(1, sizeof *w);
    w->real = real;
    atomic_init(&w->writes, 0);
    snprintf(w->name, sizeof w->name, "adaptmon-walbuf-%p", (void *)w);
    sqlite3_vfs *b = &w->base;
    b->iVersion = 2;
    b->szOsFile = (int)sizeof(wb_file) + real->szOsFile;
    b->mxPathname = real->mxPathname;
    b->zName = w->name;
    b->xOpen = wb_open;
    b->xDelete = wb_delete;
    b->xAccess = wb_access;
    b->xFullPathname = wb_fullpath;
    b->xDlOpen = wb_dlopen;
    b->xDlError = wb_dlerror;
    b->xDlSym = wb_dlsym;
    b->xDlClose = wb_dlclose;
    b->xRandomness = wb_random;
    b->xSleep = wb_sleep;
    b->xCurrentTime = wb_time;
    b->xGetLastError = wb_lasterr;
    b->xCurrentTimeInt64 = wb_time64;
    if (sqlite3_vfs_register(b, 0) != SQLITE_OK) {
        free(w);
        return NULL;
    }
    w->registered = 1;
    return w;
}

long long am_walbuf_writes(am_walbuf *w)
{
    return atomic_load(&w->writes);
}

const char *am_walbuf_name(const am_walbuf *w)
{
    return w ? w->name : NULL;
}

void am_walbuf_free(am_walbuf *w)
{
    if (!w)
        return;
    if (w->registered)
        sqlite3_vfs_unregister(&w->base);
    free(w);
}
