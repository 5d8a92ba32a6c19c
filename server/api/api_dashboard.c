/* api_dashboard.c — GET / and GET /dashboard/{file}: the live dashboard,
 * static files compiled into the binary (server/dashboard/, see embedded.h).
 * Each answer carries a strong ETag (a hash of the content) and
 * Cache-Control: no-cache, so browsers revalidate and get 304 while the
 * binary is the same. */
#include "api.h"

#include "embedded.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define AM_DASH_DIR "server/dashboard/"

/* Media type of a file name by its extension (static string). */
static const char *am_dash_type(const char *name)
{
    static const struct {
        const char *ext;
        const char *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".json", "application/json"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    if (dot)
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (!strcmp(dot, types[i].ext))
                return types[i].type;
    return "application/octet-stream";
}

/* Writes the strong ETag of data (64-bit FNV-1a, quoted) into out. */
static void am_dash_etag(const unsigned char *data, size_t len, char *out, size_t n)
{
    uint64_t h = am_fnv1a_n(AM_FNV64_BASIS, data, len);
    snprintf(out, n, "\"d-%016llx-%zu\"", (unsigned long long)h, len);
}

/* Answers with the embedded dashboard file name (e.g. "index.html"), or a
 * 404 problem when there is none. resp owns what it is given. */
static void am_dash_serve(am_req *req, am_resp *resp, const char *name)
{
    char path[256];
    const am_embedded_file *f = NULL;
    if (strlen(name) + sizeof AM_DASH_DIR < sizeof path) {
        snprintf(path, sizeof path, AM_DASH_DIR "%s", name);
        f = am_embedded_find(path);
    }
    if (!f) {
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "the dashboard has no file '%.140s'", name);
        return;
    }
    char etag[64];
    am_dash_etag(f->data, f->len, etag, sizeof etag);
    am_resp_header(resp, "ETag", etag);
    am_resp_header(resp, "Cache-Control", "no-cache");
    am_resp_header(resp, "X-Content-Type-Options", "nosniff");
    if (!strcmp(name, "index.html"))
        am_resp_header(resp, "Content-Security-Policy",
                       "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                       "base-uri 'none'; frame-ancestors 'none'");
    if (am_api_etag_matches(am_req_header(req, "If-None-Match"), etag)) {
        resp->status = 304;
        return;
    }
    am_resp_data(resp, 200, am_dash_type(name), (const char *)f->data, f->len);
}

void am_api_dashboard_index(am_req *req, am_resp *resp)
{
    am_dash_serve(req, resp, "index.html");
}

void am_api_dashboard_file(am_req *req, am_resp *resp)
{
    am_dash_serve(req, resp, req->params[0]);
}
