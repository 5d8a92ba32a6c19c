/*
 * lockck.c — the checked lock order (see lockck.h).
 */
#include "lockck.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif

/* Holds of each lock by this thread: per thread by construction, so the
 * check needs no lock of its own and shares nothing between threads. */
static _Thread_local int am_lk_holds[AM_LK__COUNT];

/* An acquisition out of order: the message and the stack (addresses for
 * addr2line -e adaptmon), then abort. Compiled out with NDEBUG, as the
 * assertions are. */
static void lk_fail(const char *what)
{
#ifndef NDEBUG
    fprintf(stderr, "adaptmon: lock order violated: %s (server/base/lockck.h)\n", what);
#if defined(__GLIBC__)
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
#endif
    abort();
#else
    (void)what;
#endif
}

void am_lk_take(enum am_lk k)
{
    switch (k) {
    case AM_LK_SESSION:
        /* one session at a time, and never under a snapshot or the
         * writer: their holders may wait for this session's writer */
        if (am_lk_holds[AM_LK_SESSION])
            lk_fail("a second session lock");
        if (am_lk_holds[AM_LK_READER])
            lk_fail("a session lock under a pooled reader");
        if (am_lk_holds[AM_LK_WRITER])
            lk_fail("a session lock under the writer");
        break;
    case AM_LK_READER:
        /* a second reader may be the one this thread holds (the pool
         * waits for a busy one), and the writer's holder must not wait
         * for the readers, whose holders may wait for the writer */
        if (am_lk_holds[AM_LK_READER])
            lk_fail("a second pooled reader");
        if (am_lk_holds[AM_LK_WRITER])
            lk_fail("a pooled reader under the writer");
        break;
    case AM_LK_WRITER: /* recursive: nested writes of one transaction */
    case AM_LK__COUNT: break;
    }
    if (k < AM_LK__COUNT)
        am_lk_holds[k]++;
}

void am_lk_drop(enum am_lk k)
{
    assert(k < AM_LK__COUNT && am_lk_holds[k] > 0 && "a release without its take");
    if (k < AM_LK__COUNT && am_lk_holds[k] > 0)
        am_lk_holds[k]--;
}

int am_lk_held(enum am_lk k)
{
    return k < AM_LK__COUNT ? am_lk_holds[k] : 0;
}
