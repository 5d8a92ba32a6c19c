/* jscan.c — members of compact stored JSON without parsing it (see jscan.h). */
#include "jscan.h"

#include <string.h>

/* The end of the JSON value that starts at p in compact text (no blanks
 * between tokens, as stored results are: am_json_dump), or NULL when the
 * text is not such a value. Strings are skipped with their escapes. */
const char *am_js_skip(const char *p)
{
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1])
                p++;
        return *p ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') {
                if (!(p = am_js_skip(p)))
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if ((*p == '}' || *p == ']') && --depth == 0)
                return p + 1;
            p++;
        }
        return NULL;
    }
    const char *q = p;
    while (*q && !strchr(",}] \t\r\n", *q))
        q++;
    return q > p ? q : NULL;
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
