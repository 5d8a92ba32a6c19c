/* jscan.c — members of compact stored JSON without parsing it (see jscan.h). */
#include "jscan.h"

#include <string.h>

/* Byte classes of the scan: a scalar ends at a delimiter (or NUL); inside
 * a bracketed value only quotes and brackets matter. One table lookup a
 * byte keeps the loops tight (a strchr per byte was a fifth of the curve's
 * CPU once jansson was gone). */
enum { JS_PLAIN, JS_DELIM, JS_QUOTE, JS_OPEN, JS_CLOSE, JS_NUL };

/* The class of each byte (JS_DELIM: blank or comma, outside strings). */
static const unsigned char js_class[256] = {
    ['\0'] = JS_NUL,   ['"'] = JS_QUOTE,  ['{'] = JS_OPEN,   ['['] = JS_OPEN,
    ['}'] = JS_CLOSE,  [']'] = JS_CLOSE,  [','] = JS_DELIM,  [' '] = JS_DELIM,
    ['\t'] = JS_DELIM, ['\r'] = JS_DELIM, ['\n'] = JS_DELIM,
};

/* The byte after the closing quote of the string whose opening quote is
 * at p, or NULL when the text ends first. Escapes are skipped pairwise. */
static const char *js_string_end(const char *p)
{
    for (p++; *p != '"'; p++) {
        if (!*p)
            return NULL;
        if (*p == '\\' && !*++p)
            return NULL; /* a backslash at the end */
    }
    return p + 1;
}

/* The end of the JSON value that starts at p in compact text (no blanks
 * between tokens, as stored results are: am_json_dump), or NULL when the
 * text is not such a value. Strings are skipped with their escapes. */
const char *am_js_skip(const char *p)
{
    unsigned char k = js_class[(unsigned char)*p];
    if (k == JS_QUOTE)
        return js_string_end(p);
    if (k == JS_OPEN) {
        int depth = 0;
        for (;;) {
            while (js_class[(unsigned char)*p] <= JS_DELIM)
                p++; /* to the next byte that matters */
            switch (js_class[(unsigned char)*p]) {
            case JS_NUL: return NULL;
            case JS_QUOTE:
                if (!(p = js_string_end(p)))
                    return NULL;
                continue;
            case JS_OPEN: depth++; break;
            case JS_CLOSE:
                if (--depth == 0)
                    return p + 1;
                break;
            default: break;
            }
            p++;
        }
    }
    const char *q = p;
    /* a scalar ends at a delimiter, a closing bracket or the end */
    while (js_class[(unsigned char)*q] != JS_DELIM && js_class[(unsigned char)*q] < JS_CLOSE)
        q++;
    return q > p ? q : NULL;
}

/* The elements of the compact array p (the whole text), each skipped as
 * a value; -1 at a blank, a missing comma or anything after the ']'. */
ptrdiff_t am_js_array_count(const char *p)
{
    if (!p || *p != '[')
        return -1;
    if (*++p == ']')
        return p[1] ? -1 : 0;
    ptrdiff_t n = 0;
    for (;;) {
        if (!(p = am_js_skip(p)))
            return -1;
        n++;
        if (*p == ']')
            return p[1] ? -1 : n;
        if (*p++ != ',')
            return -1;
    }
}

/* The text of member key (plain ASCII, no escapes) of the compact JSON
 * object at obj: its start, its end in *end; NULL when absent or when obj
 * is not compact JSON. */
const char *am_js_member(const char *obj, const char *key, const char **end)
{
    if (!obj || *obj != '{')
        return NULL;
    size_t kl = strlen(key);
    const char *p = obj + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p);
        if (!ke || *ke != ':')
            return NULL;
        const char *v = ke + 1, *ve = am_js_skip(v);
        if (!ve)
            return NULL;
        if ((size_t)(ke - p) == kl + 2 && !memcmp(p + 1, key, kl)) {
            *end = ve;
            return v;
        }
        p = *ve == ',' ? ve + 1 : ve;
    }
    return NULL;
}

/* am_js_member without the value's end: the members before key are
 * skipped, key's value is not (a result's scores hold its per-word data,
 * most of its bytes: finding scores.systems skipped all of it twice). */
const char *am_js_find(const char *obj, const char *key)
{
    if (!obj || *obj != '{')
        return NULL;
    size_t kl = strlen(key);
    const char *p = obj + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p);
        if (!ke || *ke != ':')
            return NULL;
        if ((size_t)(ke - p) == kl + 2 && !memcmp(p + 1, key, kl))
            return ke + 1;
        const char *ve = am_js_skip(ke + 1);
        if (!ve)
            return NULL;
        p = *ve == ',' ? ve + 1 : ve;
    }
    return NULL;
}

/* am_js_members over the whole object: *obj_end gets its end (after the
 * '}'), NULL when it is not compact JSON; each value is skipped once, so
 * a caller walking an object's objects (a row's systems) reads each byte
 * once instead of once to find the next member and again for its own. */
int am_js_members_end(const char *obj, const char *const *keys, size_t n, const char **val,
                      const char **end, const char **obj_end)
{
    *obj_end = NULL;
    size_t klen[AM_JS_KEYS_MAX];
    for (size_t i = 0; i < n; i++) {
        val[i] = end[i] = NULL;
        if (i < AM_JS_KEYS_MAX)
            klen[i] = strlen(keys[i]); /* once, not once per member */
    }
    if (!obj || *obj != '{' || n > AM_JS_KEYS_MAX)
        return -1;
    int found = 0;
    const char *p = obj + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p), *v = ke && *ke == ':' ? ke + 1 : NULL;
        const char *ve = v ? am_js_skip(v) : NULL;
        if (!ve)
            break; /* not compact JSON: refused below */
        size_t kl = (size_t)(ke - p - 2);
        for (size_t i = 0; i < n; i++)
            if (!val[i] && klen[i] == kl && !memcmp(p + 1, keys[i], kl)) {
                val[i] = v;
                end[i] = ve;
                found++;
                break;
            }
        p = *ve == ',' ? ve + 1 : ve;
    }
    if (*p != '}') { /* not an object after all: nothing found */
        for (size_t i = 0; i < n; i++)
            val[i] = end[i] = NULL;
        return -1;
    }
    *obj_end = p + 1;
    return found;
}

/* One pass over the members of the compact JSON object at obj: for each
 * keys[i] found, val[i] and end[i] get its value's extent (others NULL).
 * The number of keys found; -1 when obj is not compact JSON (or NULL). */
int am_js_members(const char *obj, const char *const *keys, size_t n, const char **val,
                  const char **end)
{
    size_t klen[AM_JS_KEYS_MAX];
    for (size_t i = 0; i < n; i++) {
        val[i] = end[i] = NULL;
        if (i < AM_JS_KEYS_MAX)
            klen[i] = strlen(keys[i]); /* once, not once per member */
    }
    if (!obj || *obj != '{' || n > AM_JS_KEYS_MAX)
        return -1;
    int found = 0;
    const char *p = obj + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p);
        if (!ke || *ke != ':')
            return -1;
        const char *v = ke + 1, *ve = am_js_skip(v);
        if (!ve)
            return -1;
        size_t kl = (size_t)(ke - p - 2);
        for (size_t i = 0; i < n; i++)
            if (!val[i] && klen[i] == kl && !memcmp(p + 1, keys[i], kl)) {
                val[i] = v;
                end[i] = ve;
                found++;
                break;
            }
        if ((size_t)found == n)
            break;
        p = *ve == ',' ? ve + 1 : ve;
    }
    return found;
}

/* The UTF-8 bytes of code point cp (below U+10000, not a surrogate) onto b. */
static void js_utf8(am_buf *b, unsigned cp)
{
    if (cp < 0x80) {
        am_buf_appendc(b, (char)cp);
    } else if (cp < 0x800) {
        am_buf_appendc(b, (char)(0xC0 | (cp >> 6)));
        am_buf_appendc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        am_buf_appendc(b, (char)(0xE0 | (cp >> 12)));
        am_buf_appendc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        am_buf_appendc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* The value of the four hex digits at p, or -1. */
static long js_hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

int am_js_string(const char *v, const char *e, am_buf *out)
{
    am_buf_reset(out);
    am_buf_append(out, "", 0); /* "" has data too */
    if (!v || e - v < 2 || *v != '"' || e[-1] != '"')
        return 0;
    const char *p = v + 1, *end = e - 1;
    while (p < end) {
        const char *q = p;
        for (; q < end && *q != '\\'; q++)
            if ((unsigned char)*q < 0x20)
                return 0; /* jansson refuses a raw control character */
        am_buf_append(out, p, (size_t)(q - p));
        if (q == end)
            break;
        if (q + 1 >= end)
            return 0;
        static const char simple[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *s = NULL;
        for (size_t i = 0; simple[i]; i += 2)
            if (simple[i] == q[1])
                s = &simple[i + 1];
        if (s) {
            am_buf_appendc(out, *s);
            p = q + 2;
            continue;
        }
        if (q[1] != 'u' || end - q < 6)
            return 0;
        long cp = js_hex4(q + 2);
        if (cp <= 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0; /* NUL and surrogate pairs: the caller parses instead */
        js_utf8(out, (unsigned)cp);
        p = q + 6;
    }
    return 1;
}
