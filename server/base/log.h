/*
 * log.h — one leveled logger, one line per event on stderr:
 *   2026-11-21T09:00:00.123Z INFO  [req 3f2a…] message
 * The level test happens before any formatting.
 */
#ifndef AM_LOG_H
#define AM_LOG_H

enum am_log_level { AM_LOG_ERROR = 0, AM_LOG_WARN = 1, AM_LOG_INFO = 2, AM_LOG_DEBUG = 3 };

typedef struct am_log {
    int level;
} am_log;

#define am_log_at(lg, lvl, reqid, ...)                                                             \
    do {                                                                                           \
        if ((lg)->level >= (lvl))                                                                  \
            am_log_write((lg), (lvl), (reqid), __VA_ARGS__);                                       \
    } while (0)

void am_log_write(const am_log *lg, int level, const char *request_id, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
