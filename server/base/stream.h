/*
 * stream.h — the handle of a streamed (SSE) response, below live/: the
 * event hub (live/events.c) produces a stream's bytes and wakes it; the
 * HTTP layer (http/http_resp.c) makes and sends it (am_resp_stream,
 * http.h). Kept here, not in http.h, so that live/ needs no HTTP type.
 */
#ifndef AM_STREAM_H
#define AM_STREAM_H

#include <stddef.h>

/*
 * A handler that streams calls am_resp_stream: the body is produced by
 * read(cls, buf, max) whenever the client can take more, and sent chunked.
 * read returns the bytes written into buf (1..max), AM_STREAM_WAIT when it
 * has nothing now — http_resp.c then suspends the connection (libmicrohttpd
 * suspend/resume: no thread waits) until am_stream_wake —, AM_STREAM_END
 * (the body ends) or AM_STREAM_ABORT (the connection is closed). read runs
 * on a pool thread, never twice at once for one stream. free(cls) runs
 * once, when the response is done or dropped; after it returns nobody may
 * call am_stream_wake on the handle. */
typedef struct am_stream am_stream;
typedef long (*am_stream_read_fn)(void *cls, char *buf, size_t max);
typedef void (*am_stream_free_fn)(void *cls);
enum { AM_STREAM_WAIT = 0, AM_STREAM_END = -1, AM_STREAM_ABORT = -2 };
/* Thread-safe (http_resp.c): data is ready, call read again (resumes a suspended
 * connection; a no-op cost when it is not suspended). */
void am_stream_wake(am_stream *st);

#endif
