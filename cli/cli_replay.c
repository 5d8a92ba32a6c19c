/*
 * cli_replay.c — `adaptmon replay --server URL --session ID FILE`: posts
 * the confirmed segments of an XLIFF 1.2/2.x, TSV or JSONL file to a
 * running server, in file order, through libcurl.
 *
 * Resuming: segment ids are idempotent on the server, so a replay first
 * pages through GET /v1/sessions/ID/segments and skips every id already
 * stored; an interrupted replay run again continues where it stopped.
 * Progress goes to stderr: a bar redrawn in place when stderr is a TTY, a
 * plain line every 10% otherwise. Stops at the first refused item (4xx:
 * its id and the server's problem detail, exit 1), when the server cannot
 * be reached (exit 1) or on a bad file (exit 1); 2 for usage errors.
 * A 503 (busy, shutting down) is retried after its Retry-After (at most
 * 1..5 s, 5 tries).
 *
 * File formats (--format, else by extension, else by the first byte):
 *   xliff  CAT-tool XLIFF (core/xliff.h): confirmed units with their MT
 *          candidates; units without one are skipped (counted).
 *   jsonl  one segment POST body per line ({"id", "source", "hypothesis" or
 *          "hypotheses", "translation", …}); blank lines ignored.
 *   tsv    source, hypothesis, translation per line, or a header row
 *          naming the columns id, source, translation and hypothesis or
 *          hyp:SYSTEM (several); without an id column a row's id is
 *          "line-N" (its 1-based line number).
 * An id already stored is skipped only when its stored request equals the
 * item: a file changed since the last run (lines inserted, an item edited)
 * stops the replay (exit 1) instead of losing or duplicating segments.
 * --server must be http:// or https://; trailing slashes are dropped. A
 * request that takes longer than --timeout (300 s) ends the run (exit 1).
 */
#define _GNU_SOURCE /* strcasestr */
#include "cli.h"
#include "http.h"
#include "xliff.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define AM_REPLAY_MAX_FILE (1024L * 1024L * 1024L)

typedef struct replay_ctx {
    const char *server, *session, *path, *format, *token, *timeout;
    CURL *curl;
    struct curl_slist *headers;
    char errbuf[CURL_ERROR_SIZE];
    int tty;
} replay_ctx;

/* A response body (owned). */
typedef struct rbuf {
    char *p;
    size_t n;
} rbuf;

static void replay_usage(FILE *out)
{
    fputs("usage: adaptmon replay --server URL --session ID [OPTIONS] FILE\n"
          "\n"
          "Posts the confirmed segments of FILE to a running server, in order, with a\n"
          "progress bar on stderr; ids already stored are skipped, so running it again\n"
          "after an interruption resumes where it stopped (a stored id whose body differs\n"
          "from the file's item stops it: the file changed since).\n"
          "\n"
          "  --server URL     the server, http:// or https:// (http://127.0.0.1:8080)\n"
          "  --session ID     an existing session\n"
          "  --format F       xliff|tsv|jsonl (default: by extension, else by content)\n"
          "  --token TOKEN    bearer token (default: $ADAPTMON_TOKEN)\n"
          "  --timeout S      seconds one request may take (default 300; then exit 1)\n"
          "\n"
          "formats: xliff = XLIFF 1.2/2.x from CAT tools (confirmed units, MT candidates);\n"
          "  jsonl = one segment body per line as for POST /v1/sessions/ID/segments;\n"
          "  tsv = source<TAB>hypothesis<TAB>translation (id line-N), or a header naming\n"
          "  id, source, translation, hypothesis or hyp:SYSTEM columns.\n"
          "exit status: 0 done, 1 refused item / server unreachable / bad file, 2 usage\n",
          out);
}

/* libcurl's write callback: appends to the rbuf ctx (NUL-terminated;
 * the caller frees its p). */
static size_t replay_sink(char *data, size_t size, size_t n, void *ctx)
{
    rbuf *b = ctx;
    size_t k = size * n;
    char *p = realloc(b->p, b->n + k + 1);
    if (!p)
        return 0;
    memcpy(p + b->n, data, k);
    b->p = p;
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

/* Seconds of a Retry-After header line (ctx: int *), clamped to 1..5. */
static size_t replay_header(char *data, size_t size, size_t n, void *ctx)
{
    int *retry = ctx;
    size_t k = size * n;
    if (k > 12 && !strncasecmp(data, "Retry-After:", 12)) {
        int s = atoi(data + 12);
        *retry = s < 1 ? 1 : s > 5 ? 5 : s;
    }
    return k;
}

/* One request: a POST of body, or a GET when body is NULL, of path
 * (appended to --server).
 * *status receives the HTTP status, *out the body (caller frees out->p).
 * Returns 0, or -1 when the server could not be reached (message printed). */
static int replay_http(replay_ctx *r, const char *path, const char *body, long *status, rbuf *out)
{
    char url[2048];
    snprintf(url, sizeof url, "%s%s", r->server, path);
    for (int attempt = 0;; attempt++) {
        int retry = 1;
        out->p = NULL;
        out->n = 0;
        curl_easy_setopt(r->curl, CURLOPT_URL, url);
        if (body)
            curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
        else
            curl_easy_setopt(r->curl, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, out);
        curl_easy_setopt(r->curl, CURLOPT_HEADERDATA, &retry);
        CURLcode cc = curl_easy_perform(r->curl);
        if (cc != CURLE_OK) {
            fprintf(stderr, "%sadaptmon replay: cannot reach %s: %s\n", r->tty ? "\n" : "",
                    r->server, r->errbuf[0] ? r->errbuf : curl_easy_strerror(cc));
            free(out->p);
            out->p = NULL;
            return -1;
        }
        curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, status);
        if (*status != 503 || attempt == 4)
            return 0;
        free(out->p);
        sleep((unsigned)retry);
    }
}

/* The problem detail of a problem+json body (borrowed from the parsed
 * body; "" when there is none), into buf. */
static void replay_detail(const rbuf *b, char *buf, size_t n)
{
    json_t *j = b->p ? json_loads(b->p, 0, NULL) : NULL;
    const char *d = json_string_value(json_object_get(j, "detail"));
    snprintf(buf, n, "%s", d ? d : (b->p ? b->p : ""));
    json_decref(j);
}

/* Ids already stored in the session into done: id -> the stored request
 * body (true when the server lists none). Returns 0, or 1 with a message. */
static int replay_stored(replay_ctx *r, json_t *done)
{
    long after = 0;
    for (;;) {
        char path[512];
        snprintf(path, sizeof path, "/v1/sessions/%s/segments?after=%ld&limit=1000", r->session,
                 after);
        long status = 0;
        rbuf b;
        if (replay_http(r, path, NULL, &status, &b))
            return 1;
        if (status != 200) {
            char d[400];
            replay_detail(&b, d, sizeof d);
            fprintf(stderr, "adaptmon replay: session '%s': %ld %s\n", r->session, status, d);
            free(b.p);
            return 1;
        }
        json_t *j = json_loads(b.p, 0, NULL);
        free(b.p);
        size_t i;
        json_t *seg;
        json_array_foreach(json_object_get(j, "segments"), i, seg)
        {
            const char *id = json_string_value(json_object_get(seg, "id"));
            json_t *rq = json_object_get(seg, "request");
            if (id)
                json_object_set(done, id, rq ? rq : json_true());
        }
        json_t *next = json_object_get(j, "next");
        int more = json_is_integer(next);
        after = more ? (long)json_integer_value(next) : 0;
        json_decref(j);
        if (!j) {
            fprintf(stderr, "adaptmon replay: the server's segment list is not JSON\n");
            return 1;
        }
        if (!more)
            return 0;
    }
}

/* Reads path whole (caller frees *buf; NUL-terminated). Returns 0 or 1. */
static int replay_read(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "adaptmon replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    size_t k;
    while (p && (k = fread(p + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap) {
            if (cap > (size_t)AM_REPLAY_MAX_FILE) {
                free(p);
                p = NULL;
                break;
            }
            char *q = realloc(p, cap *= 2);
            if (!q) {
                free(p);
                p = NULL;
            }
            p = q;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!p || err) {
        free(p);
        fprintf(stderr, "adaptmon replay: cannot read %s\n", path);
        return 1;
    }
    p[n] = '\0';
    *buf = p;
    *len = n;
    return 0;
}

/* Splits line[0..len) at tabs into f (at most max fields, pointing into a
 * copy the caller frees via *copy). Returns the number of fields. */
static size_t replay_fields(const char *line, size_t len, char **f, size_t max, char **copy)
{
    char *c = malloc(len + 1);
    if (!c)
        return 0;
    memcpy(c, line, len);
    c[len] = '\0';
    if (len && c[len - 1] == '\r')
        c[len - 1] = '\0';
    size_t n = 0;
    char *p = c;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    *copy = c;
    return n;
}

/* The next line of buf[*at, len) without its '\n': its start and length
 * in *start and *n; *at moves past it. Returns 0 at the end of buf. */
static int next_line(const char *buf, size_t len, size_t *at, size_t *start, size_t *n)
{
    if (*at >= len)
        return 0;
    size_t j = *at;
    while (j < len && buf[j] != '\n')
        j++;
    *start = *at;
    *n = j - *at;
    *at = j + 1;
    return 1;
}

/* The segment bodies of a TSV file into items (see the file comment).
 * Returns 0, or 1 with a message. */
static int replay_tsv(const char *buf, size_t len, json_t *items)
{
    enum { MAXF = 70 };
    long idc = -1, src = 0, hyp = 1, tr = 2;
    long hc[MAXF];
    const char *hname[MAXF];
    size_t nh = 0;
    char *head_copy = NULL;
    size_t lineno = 0, at = 0, a, len1;
    while (next_line(buf, len, &at, &a, &len1)) {
        lineno++;
        char *f[MAXF], *copy = NULL;
        size_t n = len1 ? replay_fields(buf + a, len1, f, MAXF, &copy) : 0;
        if (n == 0 || (n == 1 && !*f[0])) {
            free(copy);
            continue;
        }
        if (lineno == 1) {
            int header = 0;
            for (size_t k = 0; k < n; k++)
                header |= !strcmp(f[k], "translation");
            if (header) {
                src = tr = hyp = -1;
                for (size_t k = 0; k < n; k++) {
                    if (!strcmp(f[k], "id"))
                        idc = (long)k;
                    else if (!strcmp(f[k], "source"))
                        src = (long)k;
                    else if (!strcmp(f[k], "translation"))
                        tr = (long)k;
                    else if (!strcmp(f[k], "hypothesis"))
                        hyp = (long)k;
                    else if (!strncmp(f[k], "hyp:", 4) && nh < MAXF) {
                        hc[nh] = (long)k;
                        hname[nh++] = f[k] + 4;
                    }
                }
                head_copy = copy;
                if (hyp < 0 && nh == 0) {
                    fprintf(stderr, "adaptmon replay: line 1: the header names no hypothesis "
                                    "or hyp:SYSTEM column\n");
                    free(head_copy);
                    return 1;
                }
                continue;
            }
        }
        long need = tr > src ? tr : src;
        need = hyp > need ? hyp : need;
        need = idc > need ? idc : need;
        for (size_t k = 0; k < nh; k++)
            need = hc[k] > need ? hc[k] : need;
        if ((long)n <= need) {
            fprintf(stderr, "adaptmon replay: line %zu: expected %ld tab-separated columns\n",
                    lineno, need + 1);
            free(copy);
            free(head_copy);
            return 1;
        }
        char id[32];
        snprintf(id, sizeof id, "line-%zu", lineno);
        json_t *o = json_pack("{ssss}", "id", idc >= 0 ? f[idc] : id, "translation", f[tr]);
        if (src >= 0)
            json_object_set_new(o, "source", json_string(f[src]));
        if (hyp >= 0) {
            json_object_set_new(o, "hypothesis", json_string(f[hyp]));
        } else {
            json_t *hs = json_object();
            for (size_t k = 0; k < nh; k++)
                json_object_set_new(hs, hname[k], json_string(f[hc[k]]));
            json_object_set_new(o, "hypotheses", hs);
        }
        free(copy);
        if (!json_string_value(json_object_get(o, "translation"))) {
            fprintf(stderr, "adaptmon replay: line %zu: invalid UTF-8\n", lineno);
            json_decref(o);
            free(head_copy);
            return 1;
        }
        json_array_append_new(items, o);
    }
    free(head_copy);
    return 0;
}

/* The segment bodies of a JSONL file into items. Returns 0 or 1. */
static int replay_jsonl(const char *buf, size_t len, json_t *items)
{
    size_t lineno = 0, at = 0, a, n;
    while (next_line(buf, len, &at, &a, &n)) {
        lineno++;
        size_t j = a + n;
        while (a < j && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r'))
            a++;
        if (a == j)
            continue;
        json_error_t e;
        json_t *o = json_loadb(buf + a, j - a, 0, &e);
        if (!json_is_object(o) || !json_is_string(json_object_get(o, "id"))) {
            fprintf(stderr, "adaptmon replay: line %zu: %s\n", lineno,
                    o ? "not an object with a string \"id\"" : e.text);
            json_decref(o);
            return 1;
        }
        json_array_append_new(items, o);
    }
    return 0;
}

/* Counts one skipped unit under its reason (reasons: {reason: count}). */
static void replay_skip(json_t *reasons, size_t *skipped, const char *reason)
{
    json_t *n = json_object_get(reasons, reason);
    json_object_set_new(reasons, reason, json_integer(n ? json_integer_value(n) + 1 : 1));
    (*skipped)++;
}

/* The segment bodies of an XLIFF file into items; *skipped counts units
 * without an MT candidate or not confirmed, reasons counts them per reason.
 * A file that gives nothing to post is refused with the reasons (nothing
 * scored must not look like success). Returns 0 or 1. */
static int replay_xliff(const char *buf, size_t len, json_t *items, size_t *skipped,
                        json_t *reasons)
{
    am_xliff_doc d;
    am_xliff_report rep;
    if (am_xliff_parse(buf, len, &d, &rep) != AM_OK) {
        fprintf(stderr, "adaptmon replay: invalid XLIFF (line %zu): %s\n", rep.line, rep.msg);
        am_xliff_free(&d);
        return 1;
    }
    for (size_t i = 0; i < d.nskips; i++)
        replay_skip(reasons, skipped, d.skips[i].reason);
    for (size_t i = 0; i < d.nsegs; i++) {
        const am_xliff_seg *s = &d.segs[i];
        if (s->nhyp == 0) {
            char why[sizeof s->dropped + 32];
            snprintf(why, sizeof why, "no MT candidate%s%s", s->dropped[0] ? ": " : "", s->dropped);
            replay_skip(reasons, skipped, why);
            continue;
        }
        json_t *hs = json_object();
        for (size_t k = 0; k < s->nhyp; k++)
            json_object_set_new(hs, d.systems[s->sys[k]], json_string(s->hyp[k]));
        json_array_append_new(items, json_pack("{sssssssO}", "id", s->id, "source", s->source,
                                               "translation", s->target, "hypotheses", hs));
        json_decref(hs);
    }
    am_xliff_free(&d);
    if (json_array_size(items) == 0) {
        fprintf(stderr, "adaptmon replay: nothing to replay: %zu unit%s skipped", *skipped,
                *skipped == 1 ? "" : "s");
        const char *reason;
        json_t *n;
        const char *sep = ": ";
        json_object_foreach(reasons, reason, n)
        {
            fprintf(stderr, "%s%lld %s", sep, (long long)json_integer_value(n), reason);
            sep = "; ";
        }
        fputc('\n', stderr);
        return 1;
    }
    return 0;
}

/* The format of path: --format, else its extension, else its first byte. */
static const char *replay_guess(const char *path, const char *buf, size_t len)
{
    const char *dot = strrchr(path, '.');
    if (dot && (!strcasecmp(dot, ".tsv") || !strcasecmp(dot, ".tab")))
        return "tsv";
    if (dot && (!strcasecmp(dot, ".jsonl") || !strcasecmp(dot, ".ndjson")))
        return "jsonl";
    if (dot && (strcasestr(dot, "xlf") || strcasestr(dot, "xliff")))
        return "xliff";
    if (am_xliff_looks_xml(buf, len))
        return "xliff";
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t'))
        i++;
    return i < len && buf[i] == '{' ? "jsonl" : "tsv";
}

/* Draws the progress: a bar in place on a TTY, else a line per 10%. */
static void replay_progress(const replay_ctx *r, size_t done, size_t total, size_t posted,
                            size_t present, int *last_decile)
{
    if (r->tty) {
        int w = 30, fill = total ? (int)(w * done / total) : w;
        fprintf(stderr, "\r[%.*s%*s] %zu/%zu  posted %zu, already stored %zu", fill,
                "##############################", w - fill, "", done, total, posted, present);
        if (done == total)
            fputc('\n', stderr);
        return;
    }
    int decile = total ? (int)(10 * done / total) : 10;
    if (decile != *last_decile || done == total) {
        *last_decile = decile;
        fprintf(stderr, "replay: %zu/%zu segments (posted %zu, already stored %zu)\n", done, total,
                posted, present);
    }
}

/* Posts items in order, skipping ids in done. Returns the exit status. */
static int replay_post(replay_ctx *r, json_t *items, json_t *done, size_t skipped, json_t *reasons)
{
    size_t total = json_array_size(items), posted = 0, present = 0;
    int last = -1;
    char path[512];
    snprintf(path, sizeof path, "/v1/sessions/%s/segments", r->session);
    for (size_t i = 0; i < total; i++) {
        json_t *it = json_array_get(items, i);
        const char *id = json_string_value(json_object_get(it, "id"));
        const json_t *stored = id ? json_object_get(done, id) : NULL;
        if (stored && json_is_object(stored) && !json_equal(stored, it)) {
            /* "line-N" ids shift when lines are inserted; an edited item
             * keeps its id: skipping either would lose or duplicate data */
            fprintf(stderr,
                    "%sadaptmon replay: segment '%s' (item %zu of %zu) is stored with a "
                    "different body: %s changed since it was replayed; nothing more posted\n",
                    r->tty ? "\n" : "", id, i + 1, total, r->path);
            return 1;
        }
        if (stored) {
            present++;
        } else {
            char *body = json_dumps(it, JSON_COMPACT);
            long status = 0;
            rbuf b;
            int rc = replay_http(r, path, body, &status, &b);
            free(body);
            if (rc)
                return 1;
            if (status == 201) {
                posted++;
            } else if (status == 200) {
                present++;
            } else {
                char d[600];
                replay_detail(&b, d, sizeof d);
                fprintf(stderr,
                        "%sadaptmon replay: segment '%s' (item %zu of %zu) refused: %ld %s\n"
                        "adaptmon replay: %zu posted before it; fix the item and run again to "
                        "resume\n",
                        r->tty ? "\n" : "", id ? id : "?", i + 1, total, status, d, posted);
                free(b.p);
                return 1;
            }
            free(b.p);
        }
        replay_progress(r, i + 1, total, posted, present, &last);
    }
    if (total == 0)
        replay_progress(r, 0, 0, 0, 0, &last);
    char *why = json_dumps(reasons, JSON_COMPACT);
    printf("{\"session\":\"%s\",\"items\":%zu,\"posted\":%zu,\"already_stored\":%zu,"
           "\"skipped\":%zu,\"skip_reasons\":%s}\n",
           r->session, total, posted, present, skipped, why ? why : "{}");
    free(why);
    return 0;
}

/* Complexity (issue 15): the command's steps in order (arguments, the
 * file and its format, the resume state, the posting loop with its
 * retries, the summary), each refusal with its own message. */
int am_cli_replay(int argc, char **argv)
{
    replay_ctx r;
    memset(&r, 0, sizeof r);
    r.token = getenv("ADAPTMON_TOKEN");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = !strcmp(a, "--server")    ? &r.server
                           : !strcmp(a, "--session") ? &r.session
                           : !strcmp(a, "--format")  ? &r.format
                           : !strcmp(a, "--token")   ? &r.token
                           : !strcmp(a, "--timeout") ? &r.timeout
                                                     : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            replay_usage(stdout);
            return 0;
        } else if (dst && i + 1 < argc) {
            *dst = argv[++i];
        } else if (a[0] != '-' && !r.path) {
            r.path = a;
        } else {
            fprintf(stderr, "adaptmon replay: bad argument '%s'\n", a);
            replay_usage(stderr);
            return 2;
        }
    }
    if (!r.server || !r.session || !r.path ||
        (r.format && strcmp(r.format, "xliff") && strcmp(r.format, "tsv") &&
         strcmp(r.format, "jsonl"))) {
        replay_usage(stderr);
        return 2;
    }
    long timeout_s = 300;
    if (r.timeout) {
        char *end;
        timeout_s = strtol(r.timeout, &end, 10);
        if (end == r.timeout || *end || timeout_s < 1 || timeout_s > 86400) {
            fprintf(stderr, "adaptmon replay: --timeout must be seconds from 1 to 86400\n");
            return 2;
        }
    }
    if (strncmp(r.server, "http://", 7) && strncmp(r.server, "https://", 8)) {
        fprintf(stderr,
                "adaptmon replay: --server must start with http:// or https:// (got '%s')\n",
                r.server);
        return 2;
    }
    char server[1024];
    size_t sl = strlen(r.server);
    if (sl >= sizeof server) {
        fprintf(stderr, "adaptmon replay: --server is too long\n");
        return 2;
    }
    while (sl > 0 && r.server[sl - 1] == '/')
        sl--; /* "http://h:8080/" is the same server */
    memcpy(server, r.server, sl);
    server[sl] = '\0';
    r.server = server;
    if (!am_http_valid_id(r.session)) {
        fprintf(stderr, "adaptmon replay: bad session id '%s'\n", r.session);
        return 2;
    }
    char *buf;
    size_t len;
    if (replay_read(r.path, &buf, &len))
        return 1;
    const char *fmt = r.format ? r.format : replay_guess(r.path, buf, len);
    json_t *items = json_array();
    size_t skipped = 0;
    json_t *reasons = json_object(); /* XLIFF skips per reason */
    int bad = !strcmp(fmt, "xliff")   ? replay_xliff(buf, len, items, &skipped, reasons)
              : !strcmp(fmt, "jsonl") ? replay_jsonl(buf, len, items)
                                      : replay_tsv(buf, len, items);
    free(buf);
    if (bad) {
        json_decref(items);
        json_decref(reasons);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    r.curl = curl_easy_init();
    r.tty = isatty(2);
    r.headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (r.token) {
        char h[600];
        snprintf(h, sizeof h, "Authorization: Bearer %s", r.token);
        r.headers = curl_slist_append(r.headers, h);
    }
    curl_easy_setopt(r.curl, CURLOPT_HTTPHEADER, r.headers);
    curl_easy_setopt(r.curl, CURLOPT_ERRORBUFFER, r.errbuf);
    curl_easy_setopt(r.curl, CURLOPT_WRITEFUNCTION, replay_sink);
    curl_easy_setopt(r.curl, CURLOPT_HEADERFUNCTION, replay_header);
    curl_easy_setopt(r.curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(r.curl, CURLOPT_TIMEOUT, timeout_s); /* a silent server ends the run */
    curl_easy_setopt(r.curl, CURLOPT_NOSIGNAL, 1L);
    json_t *done = json_object();
    int rc = replay_stored(&r, done);
    if (rc == 0)
        rc = replay_post(&r, items, done, skipped, reasons);
    json_decref(reasons);
    json_decref(done);
    json_decref(items);
    curl_slist_free_all(r.headers);
    curl_easy_cleanup(r.curl);
    curl_global_cleanup();
    return rc;
}
