/* testutil.c — helpers shared by the cmocka unit tests (see testutil.h). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AM_SRCDIR
#define AM_SRCDIR "."
#endif

char *tu_path(const char *rel)
{
    const char *dir = getenv("AM_SRCDIR");
    if (!dir || !*dir)
        dir = AM_SRCDIR;
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

char *tu_read(const char *rel, size_t *len)
{
    char *path = tu_path(rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    free(path);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

json_t *tu_json(const char *rel)
{
    char *path = tu_path(rel);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        fail_msg("cannot load %s: %s (line %d)", path, err.text, err.line);
    free(path);
    return j;
}

void tu_assert_close_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol))
        { print_error("%s:%d: %.17g != %.17g (tol %g)\n", file, line, a, b, tol); _fail(file, line); }
}
