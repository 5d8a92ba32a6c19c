/*
 * http_check.c — a request's context before its handler runs: the request
 * id, the target parsed and routed, authentication, host/origin/framing
 * checks and the body limit (steps 1-2 of the life of a request, http.c).
 */
#include "http_int.h"

/* ---- request context ----------------------------------------------------- */

void am_http_ctx_free(am_http_ctx *x)
{
    if (!x)
        return;
    free(x->target);
    free(x->path);
    free(x->raw_path);
    for (size_t i = 0; i < x->nsegs; i++)
        free(x->segs[i]);
    for (size_t i = 0; i < x->nq; i++) {
        free(x->qk[i]);
        free(x->qv[i]);
    }
    free(x->qtoken);
    free(x->problem_type);
    free(x->problem_detail);
    for (size_t i = 0; i < AM_HTTP_MAX_PARAMS; i++)
        free((char *)(uintptr_t)x->req.params[i]);
    am_buf_cleanup(&x->body);
    am_resp_cleanup(&x->early);
    am_resp_cleanup(&x->work);
    free(x);
}

static uint64_t am_http_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* X-Request-Id when it is 1..64 of [A-Za-z0-9._-], else a new one. */
static void am_http_request_id(am_http_ctx *x)
{
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "X-Request-Id");
    size_t n = 0;
    int ok = h != NULL;
    for (; ok && h[n]; n++) {
        unsigned char c = (unsigned char)h[n];
        if (n >= 64 || !(isalnum(c) || c == '.' || c == '_' || c == '-') || c > 0x7f)
            ok = 0;
    }
    if (ok && n >= 1) {
        memcpy(x->req.request_id, h, n + 1);
        return;
    }
    uint64_t k = atomic_fetch_add(&x->http->ids, 1);
    uint64_t v = am_http_mix(x->http->seed ^ am_http_mix(k));
    snprintf(x->req.request_id, sizeof x->req.request_id, "%016llx", (unsigned long long)v);
}

/* Parses the raw target into path, segments and query. Returns 0, or -1
 * for malformed encoding or a target that is not a path. */
static int am_http_parse_target(am_http_ctx *x)
{
    const char *t = x->target;
    if (!strncasecmp(t, "http://", 7) || !strncasecmp(t, "https://", 8)) {
        t = strchr(strstr(t, "//") + 2, '/'); /* absolute form */
        if (!t)
            t = "/";
    }
    if (t[0] != '/')
        return -1;
    const char *q = strchr(t, '?');
    size_t plen = q ? (size_t)(q - t) : strlen(t);
    const char *hash = memchr(t, '#', plen);
    if (hash)
        plen = (size_t)(hash - t);
    if (am_http_decode(t, plen, 0, &x->path) < 0)
        return -1;
    /* segments of the raw path, each decoded on its own */
    const char *p = t + 1, *end = t + plen;
    for (;;) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        if (x->nsegs == AM_HTTP_MAX_SEGS) {
            x->too_many_segs = 1;
            break;
        }
        if (am_http_decode(p, (size_t)(stop - p), 0, &x->segs[x->nsegs]) < 0)
            return -1;
        x->nsegs++;
        if (!slash)
            break;
        p = slash + 1;
    }
    /* query: k=v pairs separated by '&' */
    if (q) {
        const char *s = q + 1;
        const char *qend = strchr(s, '#');
        if (!qend)
            qend = s + strlen(s);
        while (s < qend && x->nq < AM_HTTP_MAX_QUERY) {
            const char *amp = memchr(s, '&', (size_t)(qend - s));
            const char *stop = amp ? amp : qend;
            if (stop > s) {
                const char *eq = memchr(s, '=', (size_t)(stop - s));
                const char *kend = eq ? eq : stop;
                char *k = NULL, *v = NULL;
                if (am_http_decode(s, (size_t)(kend - s), 1, &k) < 0)
                    return -1;
                if (am_http_decode(eq ? eq + 1 : stop, eq ? (size_t)(stop - eq - 1) : 0, 1, &v) <
                    0) {
                    free(k);
                    return -1;
                }
                x->qk[x->nq] = k;
                x->qv[x->nq] = v;
                x->nq++;
                if (am_text_validate(k, strlen(k), NULL) != AM_OK ||
                    am_text_validate(v, strlen(v), NULL) != AM_OK)
                    return -1; /* handlers only ever see UTF-8 text */
            }
            s = amp ? amp + 1 : qend;
        }
    }
    return 0;
}

/* Matches route r against the path segments. On a match and when params
 * is non-NULL, fills params with decoded copies (caller owns). */
static int am_http_match(const am_http_ctx *x, const am_route *r, char **params, size_t *nparams)
{
    if (x->too_many_segs || r->pattern[0] != '/')
        return 0;
    const char *p = r->pattern + 1;
    size_t i = 0, np = 0;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (i >= x->nsegs)
            return 0;
        const char *seg = x->segs[i];
        if (len >= 2 && p[0] == '{' && p[len - 1] == '}') {
            if (!seg[0])
                return 0; /* an empty segment matches no parameter */
            if (params) {
                assert(np < AM_HTTP_MAX_PARAMS);
                params[np] = am_xstrdup(seg);
            }
            np++;
        } else if (strlen(seg) != len || strncmp(seg, p, len)) {
            goto nomatch;
        }
        i++;
        if (!slash)
            break;
        p = slash + 1;
    }
    if (i != x->nsegs)
        goto nomatch;
    if (nparams)
        *nparams = np;
    return 1;
nomatch:
    if (params)
        for (size_t k = 0; k < np; k++) {
            free(params[k]);
            params[k] = NULL;
        }
    return 0;
}

/* The name of parameter k of pattern ("id", "word", …) copied into out. */
static void am_http_param_name(const char *pattern, size_t k, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = pattern;
    for (size_t i = 0; (p = strchr(p, '{')); i++, p++) {
        const char *close = strchr(p, '}');
        if (!close)
            return;
        if (i == k) {
            size_t len = (size_t)(close - p - 1);
            if (len >= n)
                len = n - 1;
            memcpy(out, p + 1, len);
            out[len] = '\0';
            return;
        }
    }
}

/* Constant-time comparison of a presented token with a configured one;
 * the time depends on neither token's content or length (tokens are at
 * most 255 bytes). */
static int am_http_token_eq(const char *given, size_t glen, const char *token)
{
    size_t tlen = strlen(token);
    unsigned diff = glen != tlen;
    for (size_t i = 0; i < 256; i++) {
        unsigned char a = i < glen ? (unsigned char)given[i] : 0;
        unsigned char b = i < tlen ? (unsigned char)token[i] : 0;
        diff |= (unsigned)(a ^ b);
    }
    return diff == 0;
}

/* Sets the early response to a problem. */
void am_http_early(am_http_ctx *x, am_ptype type, const char *detail)
{
    am_resp_problem(&x->early, &x->req, type, "%s", detail);
    x->has_early = 1;
}

/* RFC 6750 §2.3: on GET (and HEAD) the token may come as the query
 * parameter access_token (browsers' EventSource cannot send headers). It
 * is moved out of the query list (handlers never see it) into x->qtoken;
 * the completion log line never shows the query string. */
static void am_http_take_token(am_http_ctx *x)
{
    if (strcmp(x->method, "GET") && strcmp(x->method, "HEAD"))
        return;
    for (size_t i = 0; i < x->nq; i++) {
        if (strcmp(x->qk[i], "access_token"))
            continue;
        free(x->qtoken);
        x->qtoken = x->qv[i];
        free(x->qk[i]);
        memmove(&x->qk[i], &x->qk[i + 1], (x->nq - i - 1) * sizeof x->qk[0]);
        memmove(&x->qv[i], &x->qv[i + 1], (x->nq - i - 1) * sizeof x->qv[0]);
        x->nq--;
        i--;
    }
}

/* Checks the bearer token for the matched route; sets the early response
 * on failure. */
static void am_http_auth(am_http_ctx *x)
{
    const am_srv_config *cfg = &x->http->srv->cfg;
    enum am_auth need = x->route->auth;
    if (need == AM_AUTH_NONE)
        return;
    if (need == AM_AUTH_WRITE && !cfg->write_token[0])
        return;
    if (need == AM_AUTH_READ && !cfg->write_token[0] && !cfg->read_token[0])
        return;
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Authorization");
    const char *tok = NULL;
    if (h && !strncasecmp(h, "Bearer", 6) && (h[6] == ' ' || h[6] == '\t')) {
        tok = h + 7;
        while (*tok == ' ' || *tok == '\t')
            tok++;
    }
    if ((!tok || !*tok) && x->qtoken) /* ?access_token= (GET only), see am_http_take_token */
        tok = x->qtoken;
    if (!tok || !*tok) {
        am_http_early(x, AM_P_UNAUTHORIZED,
                      "this server needs a bearer token: Authorization: Bearer <token>");
        am_resp_header(&x->early, "WWW-Authenticate", "Bearer realm=\"adaptmon\"");
        return;
    }
    size_t n = strlen(tok);
    while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        n--;
    int is_write = cfg->write_token[0] && am_http_token_eq(tok, n, cfg->write_token);
    int is_read = cfg->read_token[0] && am_http_token_eq(tok, n, cfg->read_token);
    if (is_write || (need == AM_AUTH_READ && is_read))
        return;
    am_http_early(x, AM_P_FORBIDDEN,
                  is_read ? "the read-only token cannot change state; use the write token"
                          : "the bearer token is not valid for this server");
}

/* True when the request announces a body. */
int am_http_has_body(am_http_ctx *x)
{
    const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strcmp(cl, "0"))
        return 1;
    return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Transfer-Encoding") != NULL;
}

/* Body limit of the matched route. */
static int64_t am_http_limit(const am_http_ctx *x)
{
    const am_srv_config *cfg = &x->http->srv->cfg;
    if (x->route && !strcmp(x->route->method, "PUT")) {
        const char *pat = x->route->pattern;
        size_t n = strlen(pat);
        if ((n >= 9 && !strcmp(pat + n - 9, "/glossary")) || !strncmp(pat, "/v1/vocabularies/", 17))
            return cfg->max_glossary_body;
    }
    /* XLIFF imports are files like glossaries */
    if (x->route && !strcmp(x->route->method, "POST") &&
        !strcmp(x->route->pattern, "/v1/sessions/{id}/import"))
        return cfg->max_glossary_body;
    return cfg->max_body;
}

/* Appends the methods allowed on the path to allow ("GET, HEAD, …"). */
static void am_http_allow(const am_http_ctx *x, char *allow, size_t n)
{
    allow[0] = '\0';
    int get = 0, head = 0;
    for (const am_route *r = am_routes(); r->method; r++) {
        if (!am_http_match(x, r, NULL, NULL))
            continue;
        if (!strcmp(r->method, "GET"))
            get = 1;
        if (!strcmp(r->method, "HEAD"))
            head = 1;
        if (strstr(allow, r->method)) /* methods are distinct words: no false hits */
            continue;
        size_t len = strlen(allow);
        snprintf(allow + len, n - len, "%s%s", len ? ", " : "", r->method);
    }
    size_t len = strlen(allow);
    if (get && !head)
        snprintf(allow + len, n - len, ", HEAD");
    len = strlen(allow);
    snprintf(allow + len, n - len, "%sOPTIONS", len ? ", " : "");
}

/* Everything that can be decided from the request line and headers. */
/* Is s[0..n) one of the comma-separated entries of list (blanks around
 * entries ignored, ASCII case-insensitive)? */
static int am_http_in_list(const char *list, const char *s, size_t n)
{
    const char *p = list;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ')
            e++;
        if ((size_t)(e - p) == n && n && !strncasecmp(p, s, n))
            return 1;
        p = e;
    }
    return 0;
}

/* Did the connection come from a loopback address (127.0.0.0/8, ::1, or
 * 127.x mapped into IPv6)? */
static int am_http_peer_loopback(const am_http_ctx *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) ==
               127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return 0;
}

/* Is the Host header acceptable (DNS-rebinding protection)? A page of
 * evil.example whose name is made to resolve to this server's address
 * reaches it with Host: evil.example, so a Host that is a DNS name must
 * be one the operator named:
 *   - localhost, *.localhost, 127.0.0.0/8 and [::1] always pass;
 *   - on a loopback connection nothing else but an allowed-host does;
 *   - on a connection from another machine an IP literal passes too (a
 *     rebinding page always has a name), and when read-token is set every
 *     Host passes: then every route but the probes needs a token, which a
 *     rebinding page cannot send (no cookies are involved);
 * A request without Host (HTTP/1.0; no browser sends one) passes. */
int am_http_host_ok(const am_http_ctx *x)
{
    int loopback = am_http_peer_loopback(x);
    if (!loopback && x->http->srv->cfg.read_token[0])
        return 1;
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Host");
    if (!h || !*h)
        return 1;
    size_t n = strlen(h), nl = n;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return 0;
        nl = (size_t)(close + 1 - h);
    } else {
        const char *colon = strchr(h, ':');
        if (colon)
            nl = (size_t)(colon - h);
    }
    char name[256];
    if (!nl || nl >= sizeof name)
        return 0;
    for (size_t i = 0; i < nl; i++)
        name[i] = (char)tolower((unsigned char)h[i]);
    name[nl] = '\0';
    if (nl > 0 && name[nl - 1] == '.') /* "localhost." is localhost */
        name[--nl] = '\0';
    struct in_addr a4;
    struct in6_addr a6;
    int v4 = inet_pton(AF_INET, name, &a4) == 1;
    if (!strcmp(name, "localhost") || (nl > 10 && !strcmp(name + nl - 10, ".localhost")) ||
        !strcmp(name, "[::1]") || (v4 && (ntohl(a4.s_addr) >> 24) == 127))
        return 1;
    if (!loopback && name[0] == '[' && nl > 2) { /* "[v6]" */
        name[nl - 1] = '\0';
        if (inet_pton(AF_INET6, name + 1, &a6) == 1)
            return 1;
        name[nl - 1] = ']';
    }
    if (!loopback && v4)
        return 1;
    const char *allowed = x->http->srv->cfg.allowed_host;
    return am_http_in_list(allowed, name, nl) || am_http_in_list(allowed, h, n);
}

/* Is origin (the Origin header) the server's own, i.e. http:// or https://
 * followed by the Host header? */
static int am_http_same_origin(const am_http_ctx *x, const char *origin)
{
    const char *h = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Host");
    if (!h || !*h)
        return 0;
    const char *rest = !strncasecmp(origin, "http://", 7)    ? origin + 7
                       : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                             : NULL;
    return rest && !strcasecmp(rest, h);
}

/* The request's Origin when it is one of cors-origin, else NULL. */
const char *am_http_cors_origin(const am_http_ctx *x)
{
    const char *list = x->http->srv->cfg.cors_origin;
    if (!list[0] || !x->conn)
        return NULL;
    const char *o = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Origin");
    return o && am_http_in_list(list, o, strlen(o)) ? o : NULL;
}

/* Refuses an unsafe method from a foreign origin (see the file comment). */
static void am_http_origin_check(am_http_ctx *x)
{
    const char *m = x->method;
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD") || !strcmp(m, "OPTIONS"))
        return;
    const char *o = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Origin");
    if (!o || am_http_same_origin(x, o) || am_http_cors_origin(x))
        return;
    char detail[512];
    snprintf(detail, sizeof detail,
             "%s requests from the web origin '%.200s' are refused: it is not this server's "
             "origin nor one of its cors-origin values",
             m, am_text_validate(o, strlen(o), NULL) == AM_OK ? o : "?");
    am_http_early(x, AM_P_FORBIDDEN_ORIGIN, detail);
}

/* The request's media type, lower case without parameters, into x->ctype. */
static void am_http_content_type(am_http_ctx *x)
{
    const char *ct = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Type");
    if (!ct)
        return;
    size_t k = 0;
    while (*ct == ' ')
        ct++;
    for (; ct[k] && ct[k] != ';' && ct[k] != ' ' && k + 1 < sizeof x->ctype; k++)
        x->ctype[k] = (char)tolower((unsigned char)ct[k]);
    x->ctype[k] = '\0';
    x->req.content_type = x->ctype;
}

/* Finds x->route: the method's route, or HEAD on a GET route. Answers 404
 * (no route at the path), OPTIONS (204 with Allow) and 405 early. */
static void am_http_route(am_http_ctx *x, const char *method)
{
    const am_route *path_hit = NULL;
    const char *m = method;
    int is_head = !strcmp(method, "HEAD");
    for (int pass = 0; pass < 2 && !x->route; pass++) {
        for (const am_route *r = am_routes(); r->method; r++) {
            if (!am_http_match(x, r, NULL, NULL))
                continue;
            if (!path_hit)
                path_hit = r;
            if (!strcmp(r->method, m)) {
                x->route = r;
                break;
            }
        }
        if (!is_head)
            break;
        m = "GET";
    }
    if (!path_hit) {
        am_http_early(x, AM_P_NOT_FOUND, "no resource at this path");
        return;
    }
    x->route_label = path_hit->pattern;
    char allow[128];
    if (!strcmp(method, "OPTIONS")) {
        am_http_allow(x, allow, sizeof allow);
        am_resp_data(&x->early, 204, NULL, NULL, 0);
        am_resp_header(&x->early, "Allow", allow);
        x->has_early = 1;
        return;
    }
    if (!x->route) {
        am_http_allow(x, allow, sizeof allow);
        char detail[256];
        snprintf(detail, sizeof detail, "%s is not allowed here; allowed: %s", method, allow);
        am_http_early(x, AM_P_METHOD_NOT_ALLOWED, detail);
        am_resp_header(&x->early, "Allow", allow);
        return;
    }
    x->route_label = x->route->pattern;
    x->req.route = x->route->pattern;
}

/* Sets the path parameters of x->route and validates them: an invalid one
 * names no resource (404 early). */
static void am_http_params(am_http_ctx *x)
{
    char *params[AM_HTTP_MAX_PARAMS] = {0};
    size_t np = 0;
    am_http_match(x, x->route, params, &np);
    for (size_t k = 0; k < np; k++)
        x->req.params[k] = params[k];
    x->req.nparams = np;
    for (size_t k = 0; k < np; k++) {
        char name[32];
        am_http_param_name(x->route->pattern, k, name, sizeof name);
        int word = !strcmp(name, "word");
        if (word ? am_http_valid_word(params[k]) : am_http_valid_id(params[k]))
            continue;
        char detail[512];
        if (word)
            snprintf(detail, sizeof detail,
                     "the {word} path parameter must be 1..256 bytes of UTF-8, so no such "
                     "resource exists");
        else
            snprintf(detail, sizeof detail,
                     "'%.140s' is not a valid {%s}: ids are 1..128 of [A-Za-z0-9._-] (not '.' or "
                     "'..'), so no such resource exists",
                     am_text_validate(params[k], strlen(params[k]), NULL) == AM_OK ? params[k]
                                                                                   : "?",
                     name);
        am_http_early(x, AM_P_NOT_FOUND, detail);
        return;
    }
}

/* The route's body limit, and 413 early when Content-Length exceeds it. */
static void am_http_length_check(am_http_ctx *x)
{
    x->limit = am_http_limit(x);
    const char *cl = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl)
        return;
    char *end = NULL;
    unsigned long long v = strtoull(cl, &end, 10);
    if (end != cl && (v > (unsigned long long)x->limit)) {
        char detail[160];
        snprintf(detail, sizeof detail, "the body (%llu bytes) is larger than %lld bytes", v,
                 (long long)x->limit);
        am_http_early(x, AM_P_PAYLOAD_TOO_LARGE, detail);
        am_resp_problem_set(&x->early, "limit", json_integer(x->limit));
        x->close_conn = 1;
    }
}

/* A byte range of the request head that libmicrohttpd parsed into a
 * string (method, target, version, a header name or value). */
typedef struct am_http_span {
    const char *p;
    size_t n;
} am_http_span;

/* What am_http_hdr_scan collects from the request's headers. */
typedef struct am_http_hdrs {
    int host, length, coding; /* Host, Content-Length, Transfer-Encoding headers */
    am_http_span *spans; /* names and values (owned) */
    size_t nspans, cap;
} am_http_hdrs;

static void am_http_span_add(am_http_hdrs *c, const char *p, size_t n)
{
    AM_GROW(c->spans, c->cap, c->nspans + 1, 32);
    c->spans[c->nspans].p = p;
    c->spans[c->nspans].n = n;
    c->nspans++;
}

static enum MHD_Result am_http_hdr_scan(void *cls, enum MHD_ValueKind kind, const char *key,
                                        size_t key_size, const char *value, size_t value_size)
{
    am_http_hdrs *c = cls;
    (void)kind;
    if (key)
        am_http_span_add(c, key, key_size);
    if (value)
        am_http_span_add(c, value, value_size);
    if (key && !strcasecmp(key, "Host"))
        c->host++;
    if (key && !strcasecmp(key, "Content-Length"))
        c->length++;
    if (key && !strcasecmp(key, "Transfer-Encoding"))
        c->coding++;
    return MHD_YES;
}

/* Is the Transfer-Encoding value exactly "chunked" (blanks around it and
 * the case ignored)? */
static int am_http_is_chunked(const char *te)
{
    while (*te == ' ' || *te == '\t')
        te++;
    size_t n = strlen(te);
    while (n && (te[n - 1] == ' ' || te[n - 1] == '\t'))
        n--;
    return n == 7 && !strncasecmp(te, "chunked", 7);
}

/* Does the request head hide bytes behind a NUL? libmicrohttpd 0.9.75
 * parses the head in place, writing NULs over the line ends and the
 * separators, and keeps a header value only up to a NUL byte in it: the
 * rest of the line ("X-A: a<NUL>b") is silently dropped, so this server
 * and a proxy in front of it would read two different values. The head
 * (MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes from the method) is
 * walked: every byte must lie inside a string the parser produced (method,
 * target, version, names, values) or be a separator or blank; anything
 * else was hidden by a NUL. When a parsed string lies outside that range
 * (another layout than 0.9.75's), nothing can be concluded: returns 0. */
static int am_http_hidden_bytes(const am_http_ctx *x, const char *method, const char *version,
                                const am_http_hdrs *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!ci || !method || !version || !x->raw_uri || !ci->header_size)
        return 0;
    const char *lo = method;
    size_t size = ci->header_size;
    unsigned char *known = am_xcalloc(size, 1);
    am_http_span fixed[3] = {
        {method, strlen(method)}, {x->raw_uri, x->raw_uri_len}, {version, strlen(version)}};
    int hidden = 0, layout_ok = 1;
    for (size_t i = 0; i < 3 + c->nspans && layout_ok; i++) {
        const am_http_span *s = i < 3 ? &fixed[i] : &c->spans[i - 3];
        /* address comparisons only: the spans point into the one read buffer */
        if ((uintptr_t)s->p < (uintptr_t)lo || (uintptr_t)s->p + s->n > (uintptr_t)lo + size)
            layout_ok = 0;
        else
            memset(known + ((uintptr_t)s->p - (uintptr_t)lo), 1, s->n);
    }
    for (size_t i = 0; layout_ok && i < size && !hidden; i++) {
        char ch = lo[i];
        hidden = !known[i] && ch != '\0' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' &&
                 ch != ':';
    }
    free(known);
    return hidden;
}

/* Header-level framing the HTTP parser lets through, refused before
 * anything else (400, or 501 for a transfer coding other than chunked),
 * with the connection closed (its framing cannot be trusted):
 *   - a NUL byte in a header (RFC 9110 §5.5 forbids it; libmicrohttpd
 *     0.9.75 keeps the value up to the NUL, so two parsers would see two
 *     values);
 *   - two Host headers (it uses the first; a proxy that uses the last
 *     would disagree with the DNS-rebinding check);
 *   - two Content-Length or Transfer-Encoding headers, or both at once
 *     (request smuggling through a proxy that reads the other one);
 *   - a Transfer-Encoding other than chunked: libmicrohttpd then waits for
 *     a body it cannot delimit until the idle timeout; RFC 9112 §6.1 says
 *     501.
 * Returns 1 when x->early is set. */
int am_http_framing_check(am_http_ctx *x, const char *method, const char *version)
{
    am_http_hdrs c = {0};
    MHD_get_connection_values_n(x->conn, MHD_HEADER_KIND, am_http_hdr_scan, &c);
    int nul = am_http_hidden_bytes(x, method, version, &c);
    free(c.spans);
    const char *te = MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, "Transfer-Encoding");
    const char *why = nul            ? "a header holds a NUL byte"
                      : c.host > 1   ? "the request has more than one Host header"
                      : c.length > 1 ? "the request has more than one Content-Length header"
                      : c.coding > 1 ? "the request has more than one Transfer-Encoding header"
                      : c.coding && c.length ? "the request has both Transfer-Encoding and "
                                               "Content-Length"
                                             : NULL;
    x->req.path = x->target; /* the problem's instance: nothing is decoded yet */
    if (why) {
        am_http_early(x, AM_P_BAD_REQUEST, why);
    } else if (te && !am_http_is_chunked(te)) {
        char detail[200];
        snprintf(detail, sizeof detail,
                 "Transfer-Encoding '%.60s' is not supported: send the body with "
                 "Content-Length or Transfer-Encoding: chunked",
                 am_text_validate(te, strlen(te), NULL) == AM_OK ? te : "?");
        am_http_early(x, AM_P_NOT_IMPLEMENTED, detail);
    } else {
        x->req.path = NULL;
        return 0;
    }
    x->close_conn = 1;
    return 1;
}

/* On a connection opened beyond max-connections (the reserved ones, see
 * am_http_conn_cb), a request for anything but the probes is refused
 * while the count is still above max-connections. */
int am_http_reserved_refuse(const am_http_ctx *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (!ci || ci->socket_context != &x->http->reserved_mark)
        return 0;
    if (atomic_load(&x->http->conns) <= x->http->srv->cfg.max_connections)
        return 0; /* others closed meanwhile: it is an ordinary connection now */
    return strcmp(x->path, "/healthz") && strcmp(x->path, "/readyz") && strcmp(x->path, "/metrics");
}

/* Everything decided before the body: request id, target, host, route,
 * origin, authentication, path parameters, shard owner, body limit; the
 * first refusal becomes x->early (x->has_early). */
void am_http_prepare(am_http_ctx *x, const char *method, const char *version)
{
    am_server *srv = x->http->srv;
    snprintf(x->method, sizeof x->method, "%s", method);
    x->req.srv = srv;
    x->req.method = method;
    x->req.conn = x;
    x->req.body = "";
    x->route_label = "other";
    x->limit = srv->cfg.max_body;
    am_http_request_id(x);
    am_http_content_type(x);

    if (am_http_framing_check(x, method, version))
        return;
    if (am_http_parse_target(x) < 0) {
        x->req.path = x->path ? x->path : x->target;
        am_http_early(x, AM_P_BAD_REQUEST,
                      "the request target is not a path, or holds a malformed percent-encoding, "
                      "an encoded NUL byte or a query that is not UTF-8");
        return;
    }
    x->req.path = x->path;
    if (am_text_validate(x->path, strlen(x->path), NULL) != AM_OK) {
        /* problem "instance" must be text: show the path as sent */
        const char *q = strchr(x->target, '?');
        x->raw_path = am_xstrndup(x->target, q ? (size_t)(q - x->target) : strlen(x->target));
        x->req.path = x->raw_path;
    }
    if (am_http_reserved_refuse(x)) {
        am_http_early(x, AM_P_UNAVAILABLE,
                      "every connection is taken (max-connections); this one is reserved for "
                      "/healthz, /readyz and /metrics");
        am_resp_header(&x->early, "Retry-After", "1");
        x->close_conn = 1;
        am_prom_reserved_refused(srv->prom);
        return;
    }
    if (!am_http_host_ok(x)) {
        am_http_early(x, AM_P_FORBIDDEN_HOST,
                      am_http_peer_loopback(x)
                          ? "on a loopback connection this server answers only requests for "
                            "localhost, a loopback IP or an allowed-host (DNS-rebinding "
                            "protection)"
                          : "without read-token this server answers only requests for "
                            "localhost, an IP address or an allowed-host (DNS-rebinding "
                            "protection)");
        return;
    }
    am_http_route(x, method);
    if (x->has_early)
        return;
    am_http_origin_check(x);
    if (x->has_early)
        return;
    am_http_take_token(x);
    am_http_auth(x);
    if (x->has_early)
        return;
    am_http_params(x);
    if (x->has_early)
        return;
    if (am_shard_check(srv->shard, &x->req, &x->early)) { /* 421: another instance owns it */
        x->has_early = 1;
        return;
    }
    am_http_length_check(x);
}
