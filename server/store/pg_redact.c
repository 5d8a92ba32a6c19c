/*
 * store/pg_redact.c — the --db value as it may be shown: a PostgreSQL
 * URI's or key=value string's password (and sslpassword) replaced by
 * "***", for every log line, /readyz and error message (issue 28).
 *
 * Why a parser and not a search for "password=": a URI carries the
 * password in its user information ("postgresql://am:secret@host/db"), in
 * its query ("?password=secret") or both, and a key=value string may
 * quote it ("password = 'it''s'") or escape blanks in it; each form is
 * read by libpq's own rules (libpq's conninfo_parse and conninfo_uri_parse)
 * so that what is hidden is exactly what libpq would send. Where the
 * string cannot be read (a key without '='), everything from there on is
 * hidden: libpq refuses such a string anyway, and the rest may be a
 * password.
 *
 * The scrub (am_store_db_scrub) is the second line: libpq's own messages
 * sometimes quote a piece of the string ('missing "=" after "…"',
 * 'invalid percent-encoded token: "…"'), so a message about the database
 * has every password value of the --db string replaced before it is
 * logged or answered.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#define AM_REDACTED "***"
/* Shorter password values are not scrubbed from messages: replacing every
 * "ab" of a message would garble it and hide little. */
#define AM_SCRUB_MIN 4

/* Whether a key names a secret libpq setting. */
static int redact_key(const char *k, size_t n)
{
    return (n == 8 && !strncmp(k, "password", 8)) || (n == 11 && !strncmp(k, "sslpassword", 11));
}

/* The URI's scheme length ("postgresql://" or "postgres://"), or 0. */
static size_t uri_scheme(const char *db)
{
    if (!strncmp(db, "postgresql://", 13))
        return 13;
    if (!strncmp(db, "postgres://", 11))
        return 11;
    return 0;
}

/* A URI: "scheme://[user[:password]@]hosts[/db][?k=v&…]". The user
 * information ends at the last '@' before the path or query (a password
 * with an unencoded '@' is then hidden whole rather than in part). When
 * vals is set, the password values are appended to it, each NUL-ended,
 * instead of out being written. */
static void redact_uri(const char *db, size_t scheme, am_buf *out, am_buf *vals)
{
    const char *auth = db + scheme;
    size_t alen = strcspn(auth, "/?");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@')
            at = p;
    am_buf_append(out, db, scheme);
    const char *p = auth;
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        if (colon) {
            am_buf_append(out, auth, (size_t)(colon - auth) + 1);
            am_buf_appends(out, AM_REDACTED);
            if (vals) {
                am_buf_append(vals, colon + 1, (size_t)(at - colon - 1));
                am_buf_appendc(vals, '\0');
            }
            p = at;
        }
    }
    const char *q = strchr(p, '?');
    am_buf_append(out, p, q ? (size_t)(q - p) : strlen(p));
    while (q && *q) { /* q at '?' or '&': one parameter after it */
        am_buf_appendc(out, *q++);
        size_t n = strcspn(q, "&");
        const char *eq = memchr(q, '=', n);
        if (eq && redact_key(q, (size_t)(eq - q))) {
            am_buf_append(out, q, (size_t)(eq - q) + 1);
            am_buf_appends(out, AM_REDACTED);
            if (vals) {
                am_buf_append(vals, eq + 1, n - (size_t)(eq - q) - 1);
                am_buf_appendc(vals, '\0');
            }
        } else {
            am_buf_append(out, q, n);
        }
        q += n;
    }
}

static const char *skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
        p++;
    return p;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* The end of the value at p: a quoted one ends after its closing quote, an
 * unquoted one at a blank; a backslash escapes the next byte in both (as
 * libpq reads them). NULL for a quote never closed. */
static const char *kv_value_end(const char *p)
{
    if (*p == '\'') {
        for (p++; *p && *p != '\''; p++)
            if (*p == '\\' && p[1])
                p++;
        return *p ? p + 1 : NULL;
    }
    for (; *p && !is_blank(*p); p++)
        if (*p == '\\' && p[1])
            p++;
    return p;
}

/* A key=value string, blanks and all kept as written but for the secret
 * values. */
static void redact_kv(const char *db, am_buf *out, am_buf *vals)
{
    const char *p = db;
    while (*p) {
        const char *s = skip_blank(p);
        am_buf_append(out, p, (size_t)(s - p));
        if (!*s)
            return;
        const char *k = s;
        while (*s && *s != '=' && !is_blank(*s))
            s++;
        size_t klen = (size_t)(s - k);
        const char *eq = skip_blank(s);
        if (*eq != '=' || klen == 0)
            break; /* unreadable from here on: hide the rest */
        const char *v = skip_blank(eq + 1);
        const char *end = kv_value_end(v);
        if (!end)
            break;
        am_buf_append(out, k, (size_t)(v - k));
        if (redact_key(k, klen)) {
            am_buf_appends(out, AM_REDACTED);
            if (vals) {
                am_buf_append(vals, v, (size_t)(end - v));
                am_buf_appendc(vals, '\0');
            }
        } else {
            am_buf_append(out, v, (size_t)(end - v));
        }
        p = end;
    }
    if (!*p)
        return;
    am_buf_appends(out, AM_REDACTED);
    /* the unreadable rest may hold a password: each of its words is one
     * (a message may quote any of them) */
    for (p = skip_blank(p); vals && *p; p = skip_blank(p)) {
        const char *w = p;
        while (*p && !is_blank(*p))
            p++;
        am_buf_append(vals, w, (size_t)(p - w));
        am_buf_appendc(vals, '\0');
    }
}

static void redact(const char *db, am_buf *out, am_buf *vals)
{
    size_t scheme = uri_scheme(db);
    if (scheme)
        redact_uri(db, scheme, out, vals);
    else if (am_store_path_is_pg(db))
        redact_kv(db, out, vals);
    else
        am_buf_appends(out, db); /* a SQLite file or ":memory:" */
}

void am_store_db_shown(const char *db, am_buf *out)
{
    am_buf_reset(out);
    redact(db, out, NULL);
}

/* Replaces every occurrence of needle (n bytes) in msg by "***". */
static void scrub_one(am_buf *msg, const char *needle, size_t n)
{
    am_buf res;
    am_buf_init(&res);
    const char *p = msg->data;
    const char *hit;
    while ((hit = strstr(p, needle)) != NULL) {
        am_buf_append(&res, p, (size_t)(hit - p));
        am_buf_appends(&res, AM_REDACTED);
        p = hit + n;
    }
    am_buf_appends(&res, p);
    am_buf_reset(msg);
    am_buf_append(msg, res.data, res.len);
    am_buf_cleanup(&res);
}

void am_store_db_scrub(const char *db, am_buf *msg)
{
    if (!msg->data || !am_store_path_is_pg(db))
        return;
    am_buf out, vals;
    am_buf_init(&out);
    am_buf_init(&vals);
    redact(db, &out, &vals);
    for (size_t i = 0; i < vals.len;) {
        const char *v = vals.data + i;
        size_t n = strlen(v);
        if (n >= AM_SCRUB_MIN)
            scrub_one(msg, v, n);
        /* a quoted value may be quoted in a message without its quotes */
        if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'' && n - 2 >= AM_SCRUB_MIN) {
            char *inner = am_xstrdup(v + 1);
            inner[n - 2] = '\0';
            scrub_one(msg, inner, n - 2);
            free(inner);
        }
        i += n + 1;
    }
    am_buf_cleanup(&out);
    am_buf_cleanup(&vals);
}
