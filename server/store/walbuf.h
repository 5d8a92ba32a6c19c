/*
 * store/walbuf.h — the writer's VFS, which writes the WAL frames of a
 * commit in one write (walbuf.c).
 */
#ifndef AM_WALBUF_H
#define AM_WALBUF_H

#include <sqlite3.h>

typedef struct am_walbuf am_walbuf;

/* Registers a VFS over SQLite's default one (not made the default) under
 * a name of its own; NULL when the default VFS is too old to be wrapped.
 * Free with am_walbuf_free after every connection opened with it is
 * closed. */
am_walbuf *am_walbuf_new(void);
/* The name to open a connection with (sqlite3_open_v2's zVfs); NULL for
 * NULL. Borrowed from w. */
const char *am_walbuf_name(const am_walbuf *w);
/* How many writes to WAL files went to the real VFS so far. */
long long am_walbuf_writes(am_walbuf *w);
/* Unregisters and frees w; NULL is allowed. */
void am_walbuf_free(am_walbuf *w);

#endif
