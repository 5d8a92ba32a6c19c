/*
 * log.c — the leveled logger (see log.h): one line per event on stderr,
 * plain, JSON or logfmt. Each line is formatted completely first and
 * written with one fputs, so lines from concurrent threads never
 * interleave. Control characters (a newline in a logged path, say) are
 * escaped in every format so an event is always exactly one line; in JSON
 * a byte that is not part of valid UTF-8 becomes U+FFFD, so every line
 * parses.
 */
#include "log.h"

#include "am.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <utf8proc.h>

static const char *const am_log_names[] = {"ERROR", "WARN ", "INFO ", "DEBUG"};
static const char *const am_log_lower[] = {"error", "warn", "info", "debug"};
static const char am_log_hex[] = "0123456789abcdef";

/* Appends s, escaping control bytes as \xNN (plain and logfmt). When
 * quoted, '"' and '\\' are escaped too (a logfmt quoted value). */
static void am_log_escaped(am_buf *b, const char *s, int quoted)
{
    const char *run = s;
    for (const char *p = s;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c && c >= 0x20 && c != 0x7f && !(quoted && (c == '"' || c == '\\')))
            continue;
        am_buf_append(b, run, (size_t)(p - run));
        if (!c)
            break;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            am_buf_append(b, esc, 2);
        } else {
            char esc[4] = {'\\', 'x', am_log_hex[c >> 4], am_log_hex[c & 15]};
            am_buf_append(b, esc, 4);
        }
        run = p + 1;
    }
}

/* Appends s as a JSON string literal (quotes included). */
static void am_log_json_string(am_buf *b, const char *s)
{
    am_buf_appendc(b, '"');
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    while (*p) {
        if (*p < 0x80) {
            unsigned char c = *p++;
            if (c == '"' || c == '\\') {
                char esc[2] = {'\\', (char)c};
                am_buf_append(b, esc, 2);
            } else if (c < 0x20 || c == 0x7f) {
                char esc[6] = {'\\', 'u', '0', '0', am_log_hex[c >> 4], am_log_hex[c & 15]};
                am_buf_append(b, esc, 6);
            } else {
                am_buf_appendc(b, (char)c);
            }
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(p, -1, &cp);
        if (n <= 0) { /* not UTF-8: one replacement character per bad byte */
            am_buf_appends(b, "\\ufffd");
            p++;
            continue;
        }
        am_buf_append(b, (const char *)p, (size_t)n);
        p += n;
    }
    am_buf_appendc(b, '"');
}

/* Appends " key=value" in logfmt, quoting the value when it is empty or
 * holds a space, '=' or '"'. */
static void am_log_logfmt_pair(am_buf *b, const char *key, const char *value)
{
    am_buf_appendc(b, ' ');
    am_buf_appends(b, key);
    am_buf_appendc(b, '=');
    int quote = !*value || strpbrk(value, " =\"\\") != NULL;
    if (quote)
        am_buf_appendc(b, '"');
    am_log_escaped(b, value, quote);
    if (quote)
        am_buf_appendc(b, '"');
}

/* Formats the whole line of one event into line. */
static void am_log_format_line(am_buf *line, int format, int level, const char *request_id,
                               const char *text, const am_log_field *f, size_t nf)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[64];
    snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ts.tv_nsec / 1000000));
    int has_id = request_id && *request_id;

    if (format == AM_LOG_JSON) {
        am_buf_printf(line, "{\"ts\":\"%s\",\"level\":\"%s\"", stamp, am_log_lower[level]);
        if (has_id) {
            am_buf_appends(line, ",\"request_id\":");
            am_log_json_string(line, request_id);
        }
        am_buf_appends(line, ",\"msg\":");
        am_log_json_string(line, text);
        for (size_t i = 0; i < nf; i++) {
            if (!f[i].value)
                continue;
            am_buf_appendc(line, ',');
            am_log_json_string(line, f[i].key);
            am_buf_appendc(line, ':');
            if (f[i].flags & AM_LOG_F_NUM)
                am_buf_appends(line, f[i].value); /* the caller printed a number */
            else
                am_log_json_string(line, f[i].value);
        }
        am_buf_appends(line, "}\n");
        return;
    }
    if (format == AM_LOG_LOGFMT) {
        am_buf_printf(line, "ts=%s level=%s", stamp, am_log_lower[level]);
        if (has_id)
            am_log_logfmt_pair(line, "request_id", request_id);
        am_log_logfmt_pair(line, "msg", text);
        for (size_t i = 0; i < nf; i++)
            if (f[i].value)
                am_log_logfmt_pair(line, f[i].key, f[i].value);
        am_buf_appendc(line, '\n');
        return;
    }
    am_buf_printf(line, "%s %s ", stamp, am_log_names[level]);
    if (has_id) {
        am_buf_appends(line, "[req ");
        am_log_escaped(line, request_id, 0);
        am_buf_appends(line, "] ");
    }
    am_log_escaped(line, text, 0);
    for (size_t i = 0; i < nf; i++)
        if (f[i].value && (f[i].flags & AM_LOG_F_PLAIN))
            am_log_logfmt_pair(line, f[i].key, f[i].value);
    am_buf_appendc(line, '\n');
}

/* Formats and writes one event; ap is the message's arguments. */
static void am_log_vevent(const am_log *lg, int level, const char *request_id,
                          const am_log_field *f, size_t nf, const char *fmt, va_list ap)
{
    if (level < AM_LOG_ERROR)
        level = AM_LOG_ERROR;
    if (level > AM_LOG_DEBUG)
        level = AM_LOG_DEBUG;

    char msg[1024];
    char *heap = NULL;
    const char *text = msg;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0) {
        text = "(unformattable log message)";
    } else if ((size_t)n >= sizeof msg) {
        heap = am_xmalloc((size_t)n + 1);
        vsnprintf(heap, (size_t)n + 1, fmt, ap2);
        text = heap;
    }
    va_end(ap2);

    am_buf line;
    am_buf_init(&line);
    int format = lg && lg->format >= AM_LOG_PLAIN && lg->format <= AM_LOG_LOGFMT ? lg->format : 0;
    am_log_format_line(&line, format, level, request_id, text, f, nf);
    fputs(am_buf_str(&line), stderr);
    am_buf_cleanup(&line);
    free(heap);
}

void am_log_write(const am_log *lg, int level, const char *request_id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    am_log_vevent(lg, level, request_id, NULL, 0, fmt, ap);
    va_end(ap);
}

void am_log_event(const am_log *lg, int level, const char *request_id, const am_log_field *f,
                  size_t nf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    am_log_vevent(lg, level, request_id, f, nf, fmt, ap);
    va_end(ap);
}
