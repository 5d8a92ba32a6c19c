/*
 * log.h — one leveled logger, one line per event on stderr, in one of
 * three formats (serve --log-format):
 *   plain  (default)  2026-11-21T09:00:00.123Z INFO  [req 3f2a…] message
 *   json              {"ts":"2026-11-21T09:00:00.123Z","level":"info",
 *                      "request_id":"3f2a…","msg":"message"}
 *   logfmt            ts=2026-11-21T09:00:00.123Z level=info request_id=3f2a… msg=message
 * An event may carry fields (am_log_event): key/value pairs written as
 * JSON members or logfmt pairs after msg; in the plain format only the
 * fields flagged AM_LOG_F_PLAIN are appended (" key=value"), the others
 * being already part of the human message. The field names are stable
 * (docs/operations.md lists them). The level test happens before any
 * formatting.
 */
#ifndef AM_LOG_H
#define AM_LOG_H

#include <stddef.h>

enum am_log_level { AM_LOG_ERROR = 0, AM_LOG_WARN = 1, AM_LOG_INFO = 2, AM_LOG_DEBUG = 3 };

/* The values of serve's log-format option, in its order. */
enum am_log_format { AM_LOG_PLAIN = 0, AM_LOG_JSON = 1, AM_LOG_LOGFMT = 2 };

typedef struct am_log {
    int level;
    int format; /* enum am_log_format */
} am_log;

/* Field flags. */
#define AM_LOG_F_NUM 1 /* value is a number: unquoted in JSON */
#define AM_LOG_F_PLAIN 2 /* also appended to the plain format's line */

/* One field of an event; a NULL value leaves the field out. Both strings
 * are borrowed for the call. */
typedef struct am_log_field {
    const char *key;
    const char *value;
    int flags;
} am_log_field;

#define am_log_at(lg, lvl, reqid, ...)                                                             \
    do {                                                                                           \
        if ((lg)->level >= (lvl))                                                                  \
            am_log_write((lg), (lvl), (reqid), __VA_ARGS__);                                       \
    } while (0)

/* Writes one event without fields. */
void am_log_write(const am_log *lg, int level, const char *request_id, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Writes one event with nf fields (callers test the level first). */
void am_log_event(const am_log *lg, int level, const char *request_id, const am_log_field *f,
                  size_t nf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#endif
