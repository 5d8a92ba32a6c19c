/*
 * lockck.h — the lock order of the server, checked (docs/architecture.md,
 * "Locks"). A thread takes, in this order and never back:
 *
 *   1. at most one session write lock (am_sess_lock),
 *   2. at most one pooled reader (am_reader_get: a read snapshot),
 *   3. the writer (am_w_lock, recursive; the group commit's leader).
 *
 * The session cache's mutex, the group-commit queue, the event hub and the
 * error/log mutexes are leaves: held for a few instructions, nothing is
 * taken under them. A thread that waits may hold only locks above the one
 * it waits for, so no wait closes a circle: a reader is never awaited by
 * its own holder (issue 25: a replay held a reader and asked for a second
 * one, and with the other readers busy it waited on itself for good), and
 * the writer's holder never waits for a reader or a session.
 *
 * Each thread counts what it holds (thread-local: no state is shared) and
 * an acquisition out of order fails an assertion at once, in every build
 * with assertions (all of ours, the tests' included), instead of a hang
 * that shows only when the pool happens to be busy.
 */
#ifndef AM_LOCKCK_H
#define AM_LOCKCK_H

enum am_lk {
    AM_LK_SESSION, /* a session's write lock */
    AM_LK_READER, /* a pooled reader */
    AM_LK_WRITER, /* the writer (recursive) */
    AM_LK__COUNT
};

/* Records that the calling thread is about to wait for lock k: asserts
 * that it holds nothing k may not be taken under. Call before blocking. */
void am_lk_take(enum am_lk k);
/* Records that the calling thread released one hold of k. */
void am_lk_drop(enum am_lk k);
/* How many holds of k the calling thread has (tests). */
int am_lk_held(enum am_lk k);

#endif
