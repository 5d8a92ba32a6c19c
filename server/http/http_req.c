/*
 * http_req.c — path-parameter validation, percent-decoding and the request
 * accessors handlers use (query, headers, peer, JSON bodies). See http.c
 * for the life of a request.
 */
#include "http_int.h"
#include "peer.h" /* am_req_socket */

/* ---- validation and decoding --------------------------------------------- */

int am_http_valid_id(const char *s)
{
    if (!s)
        return 0;
    size_t n = 0;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-') || c > 0x7f)
            return 0;
        if (n >= AM_HTTP_MAX_ID)
            return 0;
    }
    if (!n || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    return 1;
}

/* Valid {word} parameter: 1..256 bytes of UTF-8 without NUL. */
int am_http_valid_word(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= AM_HTTP_MAX_WORD && am_text_validate(s, n, NULL) == AM_OK;
}

static int am_http_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into a malloc'd string (*out, caller frees);
 * plus_space: '+' means ' ' (query strings). Returns -1 (and *out NULL)
 * for a malformed escape or an encoded NUL. */
int am_http_decode(const char *s, size_t n, int plus_space, char **out)
{
    char *d = am_xmalloc(n + 1), *w = d;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 1 < n ? am_http_hex(s[i + 1]) : -1;
            int lo = i + 2 < n ? am_http_hex(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(d);
                *out = NULL;
                return -1;
            }
            *w++ = (char)(hi * 16 + lo);
            i += 2;
        } else if (plus_space && s[i] == '+') {
            *w++ = ' ';
        } else {
            *w++ = s[i];
        }
    }
    *w = '\0';
    *out = d;
    return 0;
}

/* ---- requests ------------------------------------------------------------ */

const char *am_req_query(const am_req *req, const char *key)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    if (!x)
        return NULL;
    for (size_t i = 0; i < x->nq; i++)
        if (!strcmp(x->qk[i], key))
            return x->qv[i];
    return NULL;
}

const char *am_req_header(const am_req *req, const char *name)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    if (!x || !x->conn)
        return NULL;
    return MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

void am_req_peer(const am_req *req, char *buf, size_t n)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    buf[0] = '\0';
    const union MHD_ConnectionInfo *ci =
        x && x->conn ? MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa)
        return;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;
        if (!inet_ntop(AF_INET, &s4->sin_addr, buf, (socklen_t)n))
            buf[0] = '\0';
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        int mapped = IN6_IS_ADDR_V4MAPPED(a); /* one client, whichever socket it came on */
        if (!inet_ntop(mapped ? AF_INET : AF_INET6, mapped ? (const void *)&a->s6_addr[12] : a, buf,
                       (socklen_t)n))
            buf[0] = '\0';
    }
}

/* The charset parameter of a Content-Type header value, copied into out
 * (lower case, quotes removed); "" when absent. */
static void am_http_charset(const char *ct, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *p = ct ? strchr(ct, ';') : NULL; p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncasecmp(q, "charset=", 8))
            continue;
        q += 8;
        if (*q == '"')
            q++;
        size_t k = 0;
        while (*q && *q != ';' && *q != '"' && *q != ' ' && k + 1 < n)
            out[k++] = (char)tolower((unsigned char)*q++);
        out[k] = '\0';
        return;
    }
}

static int am_http_is_json_type(const char *ct)
{
    if (!strcmp(ct, "application/json"))
        return 1;
    size_t n = strlen(ct);
    return n > 5 && !strcmp(ct + n - 5, "+json") && strchr(ct, '/');
}

/* A body must declare a JSON type: no Content-Type at all is 415 too (a
 * web page can send a body without one to any site, and it used to be read
 * as JSON); a declared non-JSON type is 415 (curl -d sends
 * application/x-www-form-urlencoded: the detail names the type), as is a
 * charset other than UTF-8 (or its subset US-ASCII). */
int am_req_json_ready(const am_req *req, am_resp *resp)
{
    if (!req->content_type) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "the body must be JSON and say so: Content-Type: application/json");
        return AM_ERR_INVALID;
    }
    if (!am_http_is_json_type(req->content_type)) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "the body must be JSON (Content-Type: application/json), not %s",
                        req->content_type);
        return AM_ERR_INVALID;
    }
    char cs[32];
    am_http_charset(am_req_header(req, "Content-Type"), cs, sizeof cs);
    if (cs[0] && strcmp(cs, "utf-8") && strcmp(cs, "utf8") && strcmp(cs, "us-ascii")) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "JSON bodies must be UTF-8, not charset=%s", cs);
        return AM_ERR_INVALID;
    }
    if (!req->body || !req->body_len) {
        am_resp_problem(resp, req, AM_P_BAD_JSON,
                        "the request body is empty; a JSON object is expected");
        return AM_ERR_PARSE;
    }
    size_t off = 0;
    int rc = am_text_validate(req->body, req->body_len, &off);
    if (rc == AM_ERR_UTF8) {
        am_resp_problem(resp, req, AM_P_INVALID_UTF8,
                        "the body is not valid UTF-8 (first bad byte at offset %zu)", off);
        am_resp_problem_set(resp, "offset", json_integer((json_int_t)off));
        return AM_ERR_UTF8;
    }
    if (rc == AM_ERR_NUL) {
        am_resp_problem(resp, req, AM_P_BAD_JSON, "the body holds a NUL byte at offset %zu", off);
        am_resp_problem_set(resp, "offset", json_integer((json_int_t)off));
        return AM_ERR_PARSE;
    }
    return AM_OK;
}

/* am_req_json, or with any an array top level too (am_req_json_any). */
static int am_req_json_ex(const am_req *req, am_resp *resp, json_t **out, int any)
{
    *out = NULL;
    int rc = am_req_json_ready(req, resp);
    if (rc != AM_OK)
        return rc;
    json_error_t jerr;
    json_t *j =
        json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!j) {
        am_resp_problem(resp, req, AM_P_BAD_JSON, "line %d, column %d: %s", jerr.line, jerr.column,
                        jerr.text);
        am_resp_problem_set(resp, "line", json_integer(jerr.line));
        am_resp_problem_set(resp, "column", json_integer(jerr.column));
        return AM_ERR_PARSE;
    }
    if (!json_is_object(j) && !(any && json_is_array(j))) {
        json_decref(j);
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        any ? "the body must be a JSON object or array"
                            : "the body must be a JSON object");
        return AM_ERR_INVALID;
    }
    *out = j;
    return AM_OK;
}

int am_req_json(const am_req *req, am_resp *resp, json_t **out)
{
    return am_req_json_ex(req, resp, out, 0);
}

int am_req_json_any(const am_req *req, am_resp *resp, json_t **out)
{
    return am_req_json_ex(req, resp, out, 1);
}

/* peer.h: the socket of req's connection, for peer.c's look at whether the
 * client is still there (-1 without a connection). */
int am_req_socket(const am_req *req)
{
    const am_http_ctx *x = req ? req->conn : NULL;
    const union MHD_ConnectionInfo *ci =
        x && x->conn ? MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;
    return ci ? (int)ci->connect_fd : -1;
}
