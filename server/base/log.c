/*
 * log.c — the leveled logger (see log.h): one line per event on stderr,
 *   2026-11-21T09:00:00.123Z INFO  [req 3f2a…] message
 * Each line is formatted completely first and written with one fputs, so
 * lines from concurrent threads never interleave. Control characters in
 * the message (a newline in a logged path, say) are written as \xNN so an
 * event is always exactly one line.
 */
#include "log.h"

#include "am.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const am_log_names[] = {"ERROR", "WARN ", "INFO ", "DEBUG"};

/* Appends s, escaping control bytes as \xNN. */
static void am_log_escaped(am_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c && c >= 0x20 && c != 0x7f)
            continue;
        am_buf_append(b, run, (size_t)(p - run));
        if (!c)
            break;
        char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
        am_buf_append(b, esc, 4);
        run = p + 1;
    }
}

void am_log_write(const am_log *lg, int level, const char *request_id, const char *fmt, ...)
{
    (void)lg;
    if (level < AM_LOG_ERROR)
        level = AM_LOG_ERROR;
    if (level > AM_LOG_DEBUG)
        level = AM_LOG_DEBUG;

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);

    char msg[1024];
    char *heap = NULL;
    const char *text = msg;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0) {
        text = "(unformattable log message)";
    } else if ((size_t)n >= sizeof msg) {
        heap = am_xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(heap, (size_t)n + 1, fmt, ap);
        va_end(ap);
        text = heap;
    }

    am_buf line;
    am_buf_init(&line);
    am_buf_printf(&line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  (int)(ts.tv_nsec / 1000000), am_log_names[level]);
    if (request_id && *request_id) {
        am_buf_appends(&line, "[req ");
        am_log_escaped(&line, request_id);
        am_buf_appends(&line, "] ");
    }
    am_log_escaped(&line, text);
    am_buf_appendc(&line, '\n');
    fputs(am_buf_str(&line), stderr);
    am_buf_cleanup(&line);
    free(heap);
}
