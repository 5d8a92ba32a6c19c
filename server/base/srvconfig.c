/*
 * srvconfig.c — the server's configuration (see srvconfig.h).
 *
 * One declarative table, AM_SRV_TABLE, lists every option once: name,
 * type, default, bounds, the am_srv_config field it fills and its help
 * text. The public option list (am_srv_options), the setter, the loader
 * (flag > environment > file > default), `adaptmon serve --help` and the
 * example configuration (deploy/adaptmon.conf.example) all derive from it.
 */
#include "srvconfig.h"

#include "score.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a value is and how it is parsed. */
enum am_srv_kind {
    AM_SRV_STR, /* non-empty string */
    AM_SRV_OPTSTR, /* string, may be empty */
    AM_SRV_ADDR, /* IPv4 or IPv6 literal ("[::1]" accepted, stored as "::1") */
    AM_SRV_INT, /* int in [min, max] */
    AM_SRV_SIZE, /* int64 byte count with an optional unit, in [min, max] */
    AM_SRV_ENUM, /* one of the '|'-separated values; stored as its index */
    AM_SRV_SECRET, /* bearer token: empty, or printable ASCII without spaces */
    AM_SRV_ORIGINS, /* comma-separated web origins (scheme://host[:port]); flag repeatable */
    AM_SRV_HOSTS /* comma-separated host names or IP literals; flag repeatable */
};

#define AM_FSIZE(f) sizeof(((am_srv_config *)0)->f)
#define AM_KIB 1024LL
#define AM_MIB (1024LL * 1024LL)
#define AM_GIB (1024LL * 1024LL * 1024LL)
#define AM_SRV_MIN_TOKEN 16 /* characters of a bearer token, at least */

/*
 * The option table. Columns: name, public type, default (as text), kind,
 * field, minimum, maximum, enum values, help.
 */
#define AM_SRV_TABLE(X)                                                                            \
    X("listen", "string", "127.0.0.1", AM_SRV_ADDR, listen, 0, 0, NULL,                            \
      "address to listen on: an IPv4 or IPv6 literal (127.0.0.1, 0.0.0.0, ::1, ::)")               \
    X("port", "int", "8080", AM_SRV_INT, port, 0, 65535, NULL,                                     \
      "TCP port (0 = any free port; the ready line shows the one chosen)")                         \
    X("db", "string", "./var/adaptmon.db", AM_SRV_STR, db, 0, 0, NULL,                             \
      "SQLite database file (created with its directory when missing)")                            \
    X("threads", "int", "16", AM_SRV_INT, threads, 1, 1024, NULL,                                  \
      "HTTP worker threads (each handles its connections' requests; a POST's thread waits for "    \
      "its group commit, so the threads bound how many POSTs share one; at most max-connections "  \
      "run)")                                                                                      \
    X("max-body", "size", "1MiB", AM_SRV_SIZE, max_body, AM_KIB, AM_GIB, NULL,                     \
      "largest request body; larger uploads get 413")                                              \
    X("max-glossary-body", "size", "64MiB", AM_SRV_SIZE, max_glossary_body, AM_KIB, AM_GIB, NULL,  \
      "largest glossary or background-vocabulary upload (PUT …/glossary, PUT /v1/vocabularies/…)") \
    X("max-connections", "int", "1024", AM_SRV_INT, max_connections, 1, 1000000, NULL,             \
      "simultaneous client connections; the soft open-files limit is raised to fit them, and if "  \
      "the hard limit is too low they are lowered at start with a warning")                        \
    X("conn-timeout", "int", "30", AM_SRV_INT, conn_timeout, 0, 86400, NULL,                       \
      "seconds a connection may stay idle before it is closed (0 = never)")                        \
    X("max-tokens", "int", "2500", AM_SRV_INT, max_tokens, 1, 10000000, NULL,                      \
      "most tokens per text of a segment; longer texts get 422 too-many-tokens (scoring is "       \
      "linear but costs about 25 us per token: 2500 keeps a segment near 0.1 s)")                  \
    X("max-segment-tokens", "int", "7500", AM_SRV_INT, max_segment_tokens, 1, 100000000, NULL,     \
      "most tokens in one segment, source + translation + every hypothesis; more get 422 "         \
      "too-many-tokens (each system's hypothesis is scored against the translation: this keeps a " \
      "segment near 0.1 s whatever the number of systems)")                                        \
    X("max-glossary-entries", "int", "100000", AM_SRV_INT, max_glossary_entries, 1, 10000000,      \
      NULL, "most entries in one session glossary")                                                \
    X("max-systems", "int", "16", AM_SRV_INT, max_systems, 1, AM_SCORE_MAX_SYSTEMS, NULL,          \
      "most hypotheses (systems) per segment")                                                     \
    X("max-batch", "int", "5000", AM_SRV_INT, max_batch, 1, 1000000, NULL,                         \
      "most segments in one batch POST (a JSON array or NDJSON body of POST …/segments); more "  \
      "get 422 too-many-items (the body is also bounded by max-body)")                             \
    X("max-term-occurrences", "int", "2000", AM_SRV_INT, max_term_occurrences, 1,                  \
      AM_TERMS_MAX_OCCURRENCES, NULL,                                                              \
      "most glossary term occurrences (instances, deviations, forbidden uses) in one segment "     \
      "or check; more get 422 too-many-term-occurrences (each is answered and stored, so this "    \
      "bounds a request's time)")                                                                  \
    X("write-token", "secret", "", AM_SRV_SECRET, write_token, 0, 0, NULL,                         \
      "bearer token for every request that changes state; empty = no authentication "              \
      "(prefer the environment variable to a file or flag)")                                       \
    X("read-token", "secret", "", AM_SRV_SECRET, read_token, 0, 0, NULL,                           \
      "read-only bearer token; when set, reads need it or the write token "                        \
      "(needs write-token)")                                                                       \
    X("durability", "enum", "normal", AM_SRV_ENUM, durability, 0, 0, "normal|full",                \
      "normal: an acknowledged segment survives a crash of the process; "                          \
      "full: it survives a power loss too (slower commits)")                                       \
    X("log-level", "enum", "info", AM_SRV_ENUM, log_level, 0, 0, "error|warn|info|debug",          \
      "least severe level logged to stderr: error, warn, info (one line per request) or debug")    \
    X("log-format", "enum", "plain", AM_SRV_ENUM, log_format, 0, 0, "plain|json|logfmt",           \
      "log line format on stderr: plain (human), json (one object per line) or logfmt "            \
      "(key=value); json and logfmt use the stable field names of docs/operations.md")             \
    X("shutdown-timeout-ms", "int", "10000", AM_SRV_INT, shutdown_timeout_ms, 0, 3600000, NULL,    \
      "on SIGTERM/SIGINT, how long in-flight requests may take to finish; computing requests "     \
      "are abandoned (503) shortly before it, and the process exits at it without waiting for "    \
      "any request still running (acknowledged segments are committed)")                           \
    X("request-timeout-ms", "int", "5000", AM_SRV_INT, request_timeout_ms, 0, 3600000, NULL,       \
      "CPU time one request may spend scoring (POST/PUT segments, replays, check, metrics?ci=); "  \
      "past it the request is abandoned with 503 and stores nothing (0 = no limit)")               \
    X("owner-map", "string", "", AM_SRV_OPTSTR, owner_map, 0, 0, NULL,                             \
      "shard map for 421 answers to requests for sessions that live on another "                   \
      "instance; empty = this instance owns every session")                                        \
    X("sse-heartbeat", "int", "15", AM_SRV_INT, sse_heartbeat, 1, 3600, NULL,                      \
      "seconds between heartbeat comments on event streams (GET …/events)")                        \
    X("cors-origin", "list", "", AM_SRV_ORIGINS, cors_origin, 0, 0, NULL,                          \
      "web origins (scheme://host[:port], comma-separated; the flag may be repeated) whose pages " \
      "may call the API from a browser (CORS: preflight, exposed headers, event streams); empty "  \
      "= none, and write requests from any other origin are refused with 403")                     \
    X("allowed-host", "list", "", AM_SRV_HOSTS, allowed_host, 0, 0, NULL,                          \
      "extra Host header names accepted on loopback connections (e.g. the name a "                 \
      "reverse proxy forwards), and on other connections while read-token is unset; localhost "    \
      "and loopback IPs always are (other IPs on other connections), others get 403 "              \
      "(DNS-rebinding protection); comma-separated, the flag may be repeated")                     \
    X("max-db-size", "size", "0", AM_SRV_SIZE, max_db_size, 0, 1024 * AM_GIB, NULL,                \
      "largest database file (SQLite max_page_count); a write that would grow it past answers "    \
      "507 insufficient-storage, as on a full disk; 0 = no limit but the disk's")                  \
    X("history-cache", "size", "64MiB", AM_SRV_SIZE, history_cache, 0, 64 * AM_GIB, NULL,          \
      "memory for the sessions' word counts kept in memory, so that a segment's recall "           \
      "lookups read no database page; a session whose history does not fit reads its settled "     \
      "counts from the database, with the same results; 0 = none kept")                            \
    X("max-streams", "int", "512", AM_SRV_INT, max_streams, 0, 1000000, NULL,                      \
      "open event streams (GET …/events) on the whole server; one more gets 503 with "           \
      "Retry-After (keep it below max-connections so streams never take every connection); "       \
      "0 = streams off")                                                                           \
    X("max-streams-per-client", "int", "32", AM_SRV_INT, max_streams_per_client, 0, 1000000, NULL, \
      "open event streams from one client address; one more gets 429 too-many-streams with "       \
      "Retry-After (behind a reverse proxy every client has the proxy's address: raise it); "      \
      "0 = no per-client cap")                                                                     \
    X("max-streams-per-session", "int", "64", AM_SRV_INT, max_streams_per_session, 0, 1000000,     \
      NULL,                                                                                        \
      "open event streams of one session; one more gets 429 too-many-streams with Retry-After; "   \
      "0 = no per-session cap")                                                                    \
    X("stream-max-age", "int", "600", AM_SRV_INT, stream_max_age, 0, 86400 * 7, NULL,              \
      "seconds an event stream stays open; then it ends with a reconnect event and the client "    \
      "resumes where it was (EventSource does so by itself, with Last-Event-ID), so a stream "     \
      "nobody reads any more gives its connection back; 0 = no limit")                             \
    X("reserved-connections", "int", "8", AM_SRV_INT, reserved_connections, 1, 1000, NULL,         \
      "connections beyond max-connections that serve only /healthz, /readyz and /metrics "         \
      "(anything else on them gets 503 and the connection closes), so probes answer when "         \
      "clients hold every other connection")                                                       \
    X("session-memory", "size", "512MiB", AM_SRV_SIZE, session_memory, 0, 1024 * AM_GIB, NULL,     \
      "memory for the sessions' compiled scorers (glossaries, background vocabularies) and the "   \
      "older glossary versions a replay builds; past it the least recently used idle sessions "    \
      "are dropped and rebuilt from the database on their next use (a 100,000-entry glossary "     \
      "takes about 60 MiB); 0 = no budget")                                                        \
    X("readers", "int", "4", AM_SRV_INT, readers, 1, 64, NULL,                                     \
      "read-only database connections: reads beyond them wait for one to be free")                 \
    X("scoring-threads", "int", "0", AM_SRV_INT, scoring_threads, 0, 1024, NULL,                   \
      "requests that score segments at once (POST, batch, replay); the others wait for a slot "    \
      "while their HTTP threads stay free for the group commit; 0 = the online CPUs")              \
    X("pg-require-sync", "enum", "on", AM_SRV_ENUM, pg_require_sync, 0, 0, "off|on",               \
      "PostgreSQL only (--db postgresql://…): on answers writes 503 while the cluster has no "   \
      "synchronous standby streaming (synchronous_standby_names empty, or no sync/quorum row in "  \
      "pg_stat_replication, checked every second; the role needs pg_monitor), so nothing is "      \
      "acknowledged with a single copy; off for a server without standbys")                        \
    X("pg-expect-standbys", "int", "-1", AM_SRV_INT, pg_expect_standbys, -1, 64, NULL,             \
      "PostgreSQL only: the standbys that should stream from the primary; fewer streaming shows "  \
      "as degraded on /readyz and /metrics (a rejoined old primary that never streams); -1 = as "  \
      "many as synchronous_standby_names names")                                                   \
    X("pg-committers", "int", "4", AM_SRV_INT, pg_committers, 1, 64, NULL,                         \
      "PostgreSQL only: group committers, each with its own writer connection; a POST goes to "    \
      "the one its session hashes to (a session's POSTs stay in order), so several batches wait "  \
      "for their synchronous commits at once (bench/README.md); SQLite keeps its single writer")   \
    X("settle-every", "int", "256", AM_SRV_INT, settle_every, 1, 4096, NULL,                       \
      "a session's POST of every settle-every-th seq moves the content words of the segments "     \
      "since the last such POST (kept in their rows until then) into the session's stored word "   \
      "history; fewer, larger moves cost less per POST (bench/README.md), more pending words "     \
      "cost a cold history load more (at most this many segments' words)")

typedef struct am_srv_impl {
    enum am_srv_kind kind;
    size_t offset; /* of the field in am_srv_config */
    size_t size; /* of the field (char arrays: capacity with the NUL) */
    long long min, max;
    const char *values; /* AM_SRV_ENUM: "a|b|c" */
} am_srv_impl;

#define AM_SRV_PUB(name, type, def, kind, field, min, max, values, help) {name, type, def, help},
#define AM_SRV_IMPL(name, type, def, kind, field, min, max, values, help)                          \
    {kind, offsetof(am_srv_config, field), AM_FSIZE(field), min, max, values},

static const am_srv_option am_srv_opts[] = {AM_SRV_TABLE(AM_SRV_PUB){NULL, NULL, NULL, NULL}};
static const am_srv_impl am_srv_impls[] = {AM_SRV_TABLE(AM_SRV_IMPL)};

#define AM_SRV_NOPTS (sizeof am_srv_impls / sizeof am_srv_impls[0])
_Static_assert(sizeof am_srv_opts / sizeof am_srv_opts[0] == AM_SRV_NOPTS + 1,
               "option tables out of step");

/* Largest config file read. */
#define AM_SRV_MAX_FILE (1024 * 1024)

const am_srv_option *am_srv_options(void)
{
    return am_srv_opts;
}

/* Writes a message into err (when non-NULL), replacing what it held. */
static void am_srv_err(am_buf *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void am_srv_err(am_buf *err, const char *fmt, ...)
{
    if (!err)
        return;
    am_buf_reset(err);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    am_buf_appends(err, msg);
}

/* Prefixes err's message with prefix (e.g. "file:3: "). */
static void am_srv_err_prefix(am_buf *err, const char *prefix)
{
    if (!err)
        return;
    char *old = am_buf_detach(err);
    am_buf_appends(err, prefix);
    am_buf_appends(err, old);
    free(old);
}

/* Index of the option called name ('-' or '_' between words), or -1. */
static int am_srv_find(const char *name, size_t len)
{
    for (size_t i = 0; i < AM_SRV_NOPTS; i++) {
        const char *o = am_srv_opts[i].name;
        if (strlen(o) != len)
            continue;
        size_t j = 0;
        while (j < len && (name[j] == o[j] || (name[j] == '_' && o[j] == '-')))
            j++;
        if (j == len)
            return (int)i;
    }
    return -1;
}

/* Parses a whole decimal integer (optional leading '-'). */
static int am_srv_parse_ll(const char *s, long long *out)
{
    if (!*s || isspace((unsigned char)*s))
        return AM_ERR_INVALID;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return AM_ERR_INVALID;
    *out = v;
    return AM_OK;
}

/* Parses a byte count: digits, optional blanks, optional unit (case
 * insensitive): b; k, ki, kib (1024); kb (1000); m, mi, mib; mb; g, gi,
 * gib; gb. */
static int am_srv_parse_size(const char *s, long long *out)
{
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return AM_ERR_INVALID;
    unsigned long long v = 0;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (unsigned long long)(INT64_MAX - d) / 10)
            return AM_ERR_RANGE;
        v = v * 10 + d;
        p++;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    char unit[8];
    size_t n = strlen(p);
    if (n >= sizeof unit)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < n && i + 1 < sizeof unit; i++)
        unit[i] = (char)tolower((unsigned char)p[i]);
    unit[n] = '\0';
    static const struct {
        const char *unit;
        long long mult;
    } units[] = {
        {"", 1},        {"b", 1},       {"k", AM_KIB},   {"ki", AM_KIB},      {"kib", AM_KIB},
        {"kb", 1000LL}, {"m", AM_MIB},  {"mi", AM_MIB},  {"mib", AM_MIB},     {"mb", 1000000LL},
        {"g", AM_GIB},  {"gi", AM_GIB}, {"gib", AM_GIB}, {"gb", 1000000000LL}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].unit))
            continue;
        if (v > (unsigned long long)(INT64_MAX / units[i].mult))
            return AM_ERR_RANGE;
        *out = (long long)v * units[i].mult;
        return AM_OK;
    }
    return AM_ERR_INVALID;
}

/* Formats a byte count for messages: "1MiB" when exact, else bytes. */
static void am_srv_fmt_size(long long v, char *out, size_t n)
{
    if (v >= AM_GIB && v % AM_GIB == 0)
        snprintf(out, n, "%lldGiB", v / AM_GIB);
    else if (v >= AM_MIB && v % AM_MIB == 0)
        snprintf(out, n, "%lldMiB", v / AM_MIB);
    else if (v >= AM_KIB && v % AM_KIB == 0)
        snprintf(out, n, "%lldKiB", v / AM_KIB);
    else
        snprintf(out, n, "%lld", v);
}

/* Index of value among the '|'-separated values, or -1. */
static int am_srv_enum_index(const char *values, const char *value)
{
    size_t vlen = strlen(value);
    int idx = 0;
    const char *p = values;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vlen && !strncmp(p, value, len))
            return idx;
        if (!bar)
            return -1;
        p = bar + 1;
        idx++;
    }
}

/* Checks one host name or IP literal (with an optional :port): letters,
 * digits, '.', '-', or a bracketed IPv6 literal. */
static int am_srv_valid_host(const char *h, size_t n)
{
    size_t k = 0;
    if (n && h[0] == '[') {
        const char *close = memchr(h, ']', n);
        if (!close || close == h + 1)
            return 0;
        for (const char *p = h + 1; p < close; p++)
            if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
                return 0;
        k = (size_t)(close + 1 - h);
        if (k < n && h[k] != ':')
            return 0;
    } else {
        for (; k < n && h[k] != ':'; k++)
            if (!isalnum((unsigned char)h[k]) && h[k] != '.' && h[k] != '-')
                return 0;
        if (!k)
            return 0;
    }
    if (k < n) { /* :port */
        if (k + 1 == n)
            return 0;
        for (size_t j = k + 1; j < n; j++)
            if (!isdigit((unsigned char)h[j]))
                return 0;
    }
    return 1;
}

/* Validates a comma-separated list (blanks around items allowed; empty
 * list allowed): origins are http:// or https:// + host[:port] without a
 * path; hosts are host names or IP literals. */
static int am_srv_check_list(const char *v, int origins, const char *name, am_buf *err)
{
    const char *p = v;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        size_t n = (size_t)(e - p);
        const char *h = p;
        size_t hn = n;
        int ok = 1;
        if (origins) {
            size_t skip = !strncmp(p, "http://", 7) ? 7 : !strncmp(p, "https://", 8) ? 8 : 0;
            ok = skip > 0;
            h += skip;
            hn -= skip;
        }
        if (!ok || !am_srv_valid_host(h, hn) || memchr(h, '/', hn)) {
            am_srv_err(err,
                       origins ? "%s: '%.*s' is not a web origin (http://host[:port] or "
                                 "https://host[:port], no path, no '*')"
                               : "%s: '%.*s' is not a host name or IP literal",
                       name, (int)n, p);
            return AM_ERR_INVALID;
        }
        p = e;
    }
    return AM_OK;
}

/* Sets option i from value. */
/* Complexity (issue 15): one case per option kind of the declarative table
 * (the table-driven parser's switch), not per option. */
static int am_srv_set_index(am_srv_config *c, size_t i, const char *value, am_buf *err)
{
    const am_srv_impl *im = &am_srv_impls[i];
    const char *name = am_srv_opts[i].name;
    char *field = (char *)c + im->offset;
    long long v = 0;
    int rc;

    switch (im->kind) {
    case AM_SRV_STR:
    case AM_SRV_OPTSTR:
    case AM_SRV_SECRET:
    case AM_SRV_ORIGINS:
    case AM_SRV_HOSTS:
    case AM_SRV_ADDR: {
        size_t len = strlen(value);
        if (im->kind == AM_SRV_ADDR && len >= 2 && value[0] == '[' && value[len - 1] == ']') {
            value++;
            len -= 2;
        }
        if (!len && (im->kind == AM_SRV_STR || im->kind == AM_SRV_ADDR)) {
            am_srv_err(err, "%s: a value is required", name);
            return AM_ERR_INVALID;
        }
        if (len >= im->size) {
            am_srv_err(err, "%s: the value is longer than %zu bytes", name, im->size - 1);
            return AM_ERR_INVALID;
        }
        for (size_t k = 0; k < len; k++) {
            unsigned char ch = (unsigned char)value[k];
            if (ch < 0x20 || ch == 0x7f ||
                (im->kind == AM_SRV_SECRET && (ch == ' ' || ch > 0x7e))) {
                am_srv_err(err, "%s: %s", name,
                           im->kind == AM_SRV_SECRET
                               ? "a token may hold only printable ASCII characters without spaces"
                               : "control characters are not allowed");
                return AM_ERR_INVALID;
            }
        }
        /* Refused, not warned: nothing limits the rate of guesses, so a
         * short token is found by trying (a 1-character one in at most 94
         * requests) and a warning in a log gives false assurance; 16
         * characters of a random token are out of reach. */
        if (im->kind == AM_SRV_SECRET && len && len < AM_SRV_MIN_TOKEN) {
            am_srv_err(err,
                       "%s: a token must be at least %d characters (it is %zu): a short one "
                       "can be guessed; generate one, e.g. openssl rand -hex 16",
                       name, AM_SRV_MIN_TOKEN, len);
            return AM_ERR_INVALID;
        }
        char tmp[1024];
        assert(len < sizeof tmp); /* every string field is smaller */
        memcpy(tmp, value, len);
        tmp[len] = '\0';
        if ((im->kind == AM_SRV_ORIGINS || im->kind == AM_SRV_HOSTS) &&
            am_srv_check_list(tmp, im->kind == AM_SRV_ORIGINS, name, err) != AM_OK)
            return AM_ERR_INVALID;
        if (im->kind == AM_SRV_ADDR) {
            unsigned char addr[16];
            if (inet_pton(AF_INET, tmp, addr) != 1 && inet_pton(AF_INET6, tmp, addr) != 1) {
                am_srv_err(err, "%s: '%s' is not an IPv4 or IPv6 address literal", name, tmp);
                return AM_ERR_INVALID;
            }
        }
        memcpy(field, tmp, len + 1);
        return AM_OK;
    }
    case AM_SRV_INT:
        rc = am_srv_parse_ll(value, &v);
        if (rc != AM_OK || v < im->min || v > im->max) {
            am_srv_err(err, "%s: '%s' is not an integer in %lld..%lld", name, value, im->min,
                       im->max);
            return AM_ERR_INVALID;
        }
        *(int *)(void *)field = (int)v;
        return AM_OK;
    case AM_SRV_SIZE: {
        rc = am_srv_parse_size(value, &v);
        char lo[32], hi[32];
        am_srv_fmt_size(im->min, lo, sizeof lo);
        am_srv_fmt_size(im->max, hi, sizeof hi);
        if (rc == AM_ERR_INVALID) {
            am_srv_err(err,
                       "%s: '%s' is not a size (bytes, or a number with a unit such as "
                       "64KiB, 1MiB, 1GiB)",
                       name, value);
            return AM_ERR_INVALID;
        }
        if (rc != AM_OK || v < im->min || v > im->max) {
            am_srv_err(err, "%s: '%s' is outside %s..%s", name, value, lo, hi);
            return AM_ERR_INVALID;
        }
        *(int64_t *)(void *)field = (int64_t)v;
        return AM_OK;
    }
    case AM_SRV_ENUM: {
        int idx = am_srv_enum_index(im->values, value);
        if (idx < 0) {
            am_srv_err(err, "%s: '%s' is not one of %s", name, value, im->values);
            return AM_ERR_INVALID;
        }
        *(int *)(void *)field = idx;
        return AM_OK;
    }
    }
    return AM_ERR_INTERNAL;
}

void am_srv_config_init(am_srv_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < AM_SRV_NOPTS; i++) {
        int rc = am_srv_set_index(c, i, am_srv_opts[i].def, NULL);
        (void)rc;
        assert(rc == AM_OK);
    }
}

int am_srv_config_set(am_srv_config *c, const char *name, const char *value, am_buf *err)
{
    int i = am_srv_find(name, strlen(name));
    if (i < 0) {
        am_srv_err(err, "unknown option '%s'", name);
        return AM_ERR_NOTFOUND;
    }
    return am_srv_set_index(c, (size_t)i, value, err);
}

int am_srv_config_check(const am_srv_config *c, am_buf *err)
{
    if (c->read_token[0] && !c->write_token[0]) {
        am_srv_err(err, "read-token is set but write-token is not: writes would be open "
                        "while reads need a token; set write-token too");
        return AM_ERR_INVALID;
    }
    if (c->read_token[0] && !strcmp(c->read_token, c->write_token)) {
        am_srv_err(err, "read-token and write-token must differ");
        return AM_ERR_INVALID;
    }
    if (c->max_glossary_body < c->max_body) {
        am_srv_err(err, "max-glossary-body (%lld) is smaller than max-body (%lld)",
                   (long long)c->max_glossary_body, (long long)c->max_body);
        return AM_ERR_INVALID;
    }
    return AM_OK;
}

/* Trims ASCII blanks at both ends of s[0..*len) in place; returns the start. */
static char *am_srv_trim(char *s, size_t *len)
{
    size_t a = 0, b = *len;
    while (a < b && (s[a] == ' ' || s[a] == '\t'))
        a++;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
        b--;
    s[b] = '\0';
    *len = b - a;
    return s + a;
}

int am_srv_config_parse(am_srv_config *c, const char *text, size_t len, const char *origin,
                        am_buf *err)
{
    char *copy = am_xstrndup(text, len);
    char *p = copy, *end = copy + strlen(copy);
    int rc = AM_OK;
    size_t lineno = 0;
    size_t set_on[AM_SRV_NOPTS] = {0}; /* line that set option i, 0 = none yet */
    if (strlen(copy) != len) {
        am_srv_err(err, "%s: NUL byte in the file", origin);
        free(copy);
        return AM_ERR_INVALID;
    }
    while (p < end && rc == AM_OK) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl ? nl : end;
        lineno++;
        if (stop > p && stop[-1] == '\r')
            stop--;
        size_t llen = (size_t)(stop - p);
        char *line = am_srv_trim(p, &llen);
        p = nl ? nl + 1 : end;
        if (!llen || line[0] == '#')
            continue;
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s:%zu: ", origin, lineno);
        char *eq = strchr(line, '=');
        if (!eq) {
            am_srv_err(err, "expected 'name = value', got '%.80s'", line);
            am_srv_err_prefix(err, prefix);
            rc = AM_ERR_INVALID;
            break;
        }
        size_t nlen = (size_t)(eq - line);
        char *name = am_srv_trim(line, &nlen);
        size_t vlen = strlen(eq + 1);
        char *value = am_srv_trim(eq + 1, &vlen);
        if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
            value[vlen - 1] = '\0';
            value++;
        }
        int i = am_srv_find(name, nlen);
        if (i < 0) {
            if (!strcmp(name, "config"))
                am_srv_err(err, "'config' cannot be set inside a config file");
            else
                am_srv_err(err, "unknown option '%.80s'", name);
            am_srv_err_prefix(err, prefix);
            rc = AM_ERR_INVALID;
            break;
        }
        if (set_on[i]) {
            /* last-one-wins would silently drop the first value (an origin,
             * a limit the operator believes is in force) */
            am_srv_err(err,
                       "option '%s' is set twice (lines %zu and %zu); set it once (lists are "
                       "comma-separated)",
                       am_srv_opts[i].name, set_on[i], lineno);
            am_srv_err_prefix(err, prefix);
            rc = AM_ERR_INVALID;
            break;
        }
        set_on[i] = lineno;
        rc = am_srv_set_index(c, (size_t)i, value, err);
        if (rc != AM_OK)
            am_srv_err_prefix(err, prefix);
    }
    free(copy);
    return rc;
}

/* Reads and applies the config file at path. */
static int am_srv_config_file(am_srv_config *c, const char *path, am_buf *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        am_srv_err(err, "cannot open config file '%s': %s", path, strerror(errno));
        return AM_ERR_IO;
    }
    char *buf = am_xmalloc(AM_SRV_MAX_FILE + 1);
    size_t n = fread(buf, 1, AM_SRV_MAX_FILE + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        am_srv_err(err, "cannot read config file '%s'", path);
        free(buf);
        return AM_ERR_IO;
    }
    if (n > AM_SRV_MAX_FILE) {
        am_srv_err(err, "config file '%s' is larger than 1 MiB", path);
        free(buf);
        return AM_ERR_INVALID;
    }
    int rc = am_srv_config_parse(c, buf, n, path, err);
    free(buf);
    return rc;
}

/* The value of environment variable name in envp, or NULL. */
static const char *am_srv_getenv(char **envp, const char *name)
{
    if (!envp)
        return NULL;
    size_t n = strlen(name);
    for (char **e = envp; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* "ADAPTMON_" + upper-case name with '-' → '_'. */
static void am_srv_envname(const char *name, char *out, size_t n)
{
    snprintf(out, n, "ADAPTMON_%s", name);
    for (char *p = out; *p; p++)
        *p = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
}

/* Splits argv[*k] ("--name=value" or "--name value") into name and value.
 * Advances *k past a separate value. */
static int am_srv_flag(int argc, char **argv, int *k, const char **name, size_t *nlen,
                       const char **value, am_buf *err)
{
    const char *a = argv[*k];
    if (strncmp(a, "--", 2) || !a[2]) {
        am_srv_err(err, "unexpected argument '%s' (options are --name value or --name=value)", a);
        return AM_ERR_INVALID;
    }
    *name = a + 2;
    const char *eq = strchr(*name, '=');
    if (eq) {
        *nlen = (size_t)(eq - *name);
        *value = eq + 1;
        return AM_OK;
    }
    *nlen = strlen(*name);
    if (*k + 1 >= argc) {
        am_srv_err(err, "option '%s' needs a value", a);
        return AM_ERR_INVALID;
    }
    *value = argv[++*k];
    return AM_OK;
}

int am_srv_config_load(am_srv_config *c, int argc, char **argv, char **envp, am_buf *err)
{
    return am_srv_config_load_from(c, argc, argv, envp, AM_SRV_DEFAULT_CONFIG, err);
}

int am_srv_config_load_from(am_srv_config *c, int argc, char **argv, char **envp,
                            const char *default_file, am_buf *err)
{
    am_srv_config_init(c);

    /* 1. Which file: --config FILE beats ADAPTMON_CONFIG. Also checks that
     * every flag is well formed and known before anything is read. */
    const char *file = NULL;
    for (int k = 1; k < argc; k++) {
        const char *name, *value;
        size_t nlen;
        if (am_srv_flag(argc, argv, &k, &name, &nlen, &value, err) != AM_OK)
            return AM_ERR_INVALID;
        if (nlen == 6 && !strncmp(name, "config", 6)) {
            file = value;
            continue;
        }
        if (am_srv_find(name, nlen) < 0) {
            am_srv_err(err, "unknown option '--%.*s' (adaptmon serve --help lists them)", (int)nlen,
                       name);
            return AM_ERR_INVALID;
        }
    }
    if (!file) {
        /* ADAPTMON_CONFIG set but empty: no file at all, not even the
         * default one */
        file = am_srv_getenv(envp, "ADAPTMON_CONFIG");
        if (!file && default_file && access(default_file, F_OK) == 0)
            file = default_file; /* the packaged default, read when present */
        if (file && !*file)
            file = NULL;
    }

    /* 2. The file. */
    if (file) {
        if (strlen(file) >= sizeof c->config_file) {
            am_srv_err(err, "config file path is too long");
            return AM_ERR_INVALID;
        }
        int rc = am_srv_config_file(c, file, err);
        if (rc != AM_OK)
            return rc;
        snprintf(c->config_file, sizeof c->config_file, "%s", file);
    }

    /* 3. The environment. */
    for (size_t i = 0; i < AM_SRV_NOPTS; i++) {
        char env[80];
        am_srv_envname(am_srv_opts[i].name, env, sizeof env);
        const char *v = am_srv_getenv(envp, env);
        if (!v)
            continue;
        if (am_srv_set_index(c, i, v, err) != AM_OK) {
            char prefix[100];
            snprintf(prefix, sizeof prefix, "environment %s: ", env);
            am_srv_err_prefix(err, prefix);
            return AM_ERR_INVALID;
        }
    }

    /* 4. The flags. A list option given twice or more (--cors-origin A
     * --cors-origin B) collects every value; its first flag replaces the
     * file's and the environment's value. */
    unsigned char seen[AM_SRV_NOPTS] = {0};
    for (int k = 1; k < argc; k++) {
        const char *name, *value;
        size_t nlen;
        if (am_srv_flag(argc, argv, &k, &name, &nlen, &value, err) != AM_OK)
            return AM_ERR_INVALID;
        if (nlen == 6 && !strncmp(name, "config", 6))
            continue;
        int i = am_srv_find(name, nlen);
        assert(i >= 0);
        enum am_srv_kind kind = am_srv_impls[i].kind;
        char joined[2048];
        if ((kind == AM_SRV_ORIGINS || kind == AM_SRV_HOSTS) && seen[i]) {
            snprintf(joined, sizeof joined, "%s,%s", (char *)c + am_srv_impls[i].offset, value);
            value = joined;
        }
        seen[i] = 1;
        if (am_srv_set_index(c, (size_t)i, value, err) != AM_OK) {
            char prefix[100];
            snprintf(prefix, sizeof prefix, "--%s: ", am_srv_opts[i].name);
            /* the message already starts with the option name */
            char *old = err ? am_buf_detach(err) : NULL;
            if (err) {
                const char *msg = old;
                size_t on = strlen(am_srv_opts[i].name);
                if (!strncmp(msg, am_srv_opts[i].name, on) && !strncmp(msg + on, ": ", 2))
                    msg += on + 2;
                am_buf_appends(err, prefix);
                am_buf_appends(err, msg);
            }
            free(old);
            return AM_ERR_INVALID;
        }
    }

    /* A pool thread serves at least one connection: more threads than
     * max-connections would never accept one. */
    if (c->threads > c->max_connections)
        c->threads = c->max_connections;
    return am_srv_config_check(c, err);
}

/* Appends text as '#' comment lines wrapped at about 78 columns. */
static void am_srv_comment(am_buf *out, const char *text)
{
    const size_t width = 76;
    const char *p = text;
    while (*p) {
        size_t n = strlen(p), cut = n;
        if (n > width) {
            cut = width;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (!cut)
                cut = width;
        }
        am_buf_appends(out, "# ");
        am_buf_append(out, p, cut);
        am_buf_appendc(out, '\n');
        p += cut;
        while (*p == ' ')
            p++;
    }
}

void am_srv_config_example(am_buf *out)
{
    am_buf_appends(out, "# adaptmon.conf — example configuration of `adaptmon serve`\n"
                        "#\n"
                        "# Generated by `adaptmon config-example`: every option with its default.\n"
                        "# Install it as /etc/adaptmon/adaptmon.conf (read by default when it\n"
                        "# exists), or name it with `adaptmon serve --config FILE` or\n"
                        "# ADAPTMON_CONFIG=FILE (ADAPTMON_CONFIG= empty: read no file).\n"
                        "# Lines are `name = value`; a line starting with '#' is a comment (a '#'\n"
                        "# elsewhere is part of the value). A value may be put in double quotes.\n"
                        "# Precedence: command-line flag (--name) > environment variable\n"
                        "# (ADAPTMON_NAME, '-' written '_') > this file > built-in default.\n"
                        "# Sizes are bytes or a number with a unit: 65536, 64KiB, 1MiB, 1GiB.\n");
    for (size_t i = 0; i < AM_SRV_NOPTS; i++) {
        const am_srv_option *o = &am_srv_opts[i];
        const am_srv_impl *im = &am_srv_impls[i];
        char env[80];
        am_srv_envname(o->name, env, sizeof env);
        am_buf_appendc(out, '\n');
        am_srv_comment(out, o->help);
        switch (im->kind) {
        case AM_SRV_INT:
            am_buf_printf(out, "# %s, %lld..%lld; environment %s\n", o->type, im->min, im->max,
                          env);
            break;
        case AM_SRV_SIZE: {
            char lo[32], hi[32];
            am_srv_fmt_size(im->min, lo, sizeof lo);
            am_srv_fmt_size(im->max, hi, sizeof hi);
            am_buf_printf(out, "# %s, %s..%s; environment %s\n", o->type, lo, hi, env);
            break;
        }
        case AM_SRV_ENUM:
            am_buf_printf(out, "# one of %s; environment %s\n", im->values, env);
            break;
        default: am_buf_printf(out, "# %s; environment %s\n", o->type, env); break;
        }
        /* secrets stay commented out: the environment is the better place */
        am_buf_printf(out, "%s%s =%s%s\n", im->kind == AM_SRV_SECRET ? "# " : "", o->name,
                      *o->def ? " " : "", o->def);
    }
}
