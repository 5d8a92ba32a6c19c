/* lang.c — canonical language tags from the ISO 639 table (see lang.h). */
#include "lang.h"

#include "lang_data.h"

#include <string.h>

/* The table row of a lower-case code, or NULL (binary search). */
static const am_lang_code *am_lang_find(const char *code)
{
    size_t lo = 0, hi = am_lang_ncodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(am_lang_codes[mid].code, code);
        if (c == 0)
            return &am_lang_codes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int am_lang_canonical(const char *tag, char *out, size_t n, int *known)
{
    if (known)
        *known = 0;
    if (!tag || !out || n == 0)
        return AM_ERR_INVALID;
    char primary[9];
    size_t p = 0;
    while (tag[p] && tag[p] != '-' && tag[p] != '_') {
        char c = tag[p];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c < 'a' || c > 'z' || p == 8)
            return AM_ERR_INVALID;
        primary[p++] = c;
    }
    if (p < 2)
        return AM_ERR_INVALID;
    primary[p] = '\0';
    const am_lang_code *row = p <= 3 ? am_lang_find(primary) : NULL;
    const char *canon = row ? row->canon : primary;
    size_t len = strlen(canon), rest = strlen(tag + p);
    if (len + rest + 1 > n)
        return AM_ERR_INVALID;
    memcpy(out, canon, len);
    for (size_t i = 0; i <= rest; i++)
        out[len + i] = tag[p + i] == '_' ? '-' : tag[p + i];
    if (known)
        *known = row != NULL;
    return AM_OK;
}

/* The two-letter code of a lower-case English name, or NULL. */
static const char *lang_name_find(const char *name)
{
    size_t lo = 0, hi = am_lang_nnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(am_lang_names[mid].name, name);
        if (c == 0)
            return am_lang_names[mid].canon;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The two-letter code of a language tag (low: lower case, "pt-br",
 * "fra", "en_us"): its primary subtag of 2 or 3 letters when the rest is
 * letters, digits, '-' or '_' and the subtag has a two-letter code; else
 * NULL. low is cut at the subtag's end. */
static const char *lang_tag_canon(char *low)
{
    size_t p = 0;
    while (low[p] >= 'a' && low[p] <= 'z')
        p++;
    int tag_ok = p >= 2 && p <= 3 && (low[p] == '\0' || low[p] == '-' || low[p] == '_');
    for (size_t i = p; tag_ok && low[i]; i++)
        tag_ok = (low[i] >= 'a' && low[i] <= 'z') || (low[i] >= '0' && low[i] <= '9') ||
                 low[i] == '-' || low[i] == '_';
    if (!tag_ok)
        return NULL;
    low[p] = '\0';
    const am_lang_code *row = am_lang_find(low);
    return row && strlen(row->canon) == 2 ? row->canon : NULL;
}

int am_lang_from_header(const char *s, char *out, size_t n)
{
    char low[80];
    if (!s || !out || n < 3)
        return AM_ERR_NOTFOUND;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    if (!len || len >= sizeof low)
        return AM_ERR_NOTFOUND;
    for (size_t i = 0; i < len; i++)
        low[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
    low[len] = '\0';
    const char *canon = lang_name_find(low);
    if (!canon)
        canon = lang_tag_canon(low);
    if (!canon)
        return AM_ERR_NOTFOUND;
    memcpy(out, canon, 3);
    return AM_OK;
}

static int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Length of the primary subtag of a language tag ("en" of "en-US"). */
static size_t primary_len(const char *tag)
{
    size_t n = 0;
    while (tag[n] && tag[n] != '-' && tag[n] != '_')
        n++;
    return n;
}

int am_lang_same(const char *a, const char *b)
{
    size_t na = primary_len(a), nb = primary_len(b);
    if (na != nb || na == 0)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (ascii_lower((unsigned char)a[i]) != ascii_lower((unsigned char)b[i]))
            return 0;
    return 1;
}

int am_lang_same_canonical(const char *a, const char *b)
{
    char ca[64], cb[64];
    if (am_lang_canonical(a, ca, sizeof ca, NULL) != AM_OK ||
        am_lang_canonical(b, cb, sizeof cb, NULL) != AM_OK)
        return am_lang_same(a, b);
    return am_lang_same(ca, cb);
}

int am_lang_tag_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 35 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return 0;
    }
    return 1;
}
