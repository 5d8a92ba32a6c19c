/*
 * alam2021_re.c — profile `alam2021`, part 1 (alam2021.c names the parts):
 * the script's term searches, a Python-`re` subset run by PCRE2.
 */
#include "compat/alam2021_int.h"

#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * 1. Regular expressions: the script's Python `re` subset, run by PCRE2
 * ====================================================================== */

/* The script searches "(?= " + alternative + " )" with re.finditer: a term
 * is a Python regular expression, not re.escape'd text. rx_translate reads
 * the subset of Python's syntax documented at am_alam_regex_match_at (and
 * refuses the rest, as before PCRE2) and writes the same expression in
 * PCRE2 syntax, compiled with PCRE2_UTF | PCRE2_UCP and LF newlines:
 *   - every literal other than an ASCII letter or digit is written \x{h}, so
 *     nothing PCRE2 reads differently ("[[:alpha:]]", "\Q", "#") leaks in;
 *   - groups become (?:…) (only existence is asked, never a capture);
 *   - {,n} becomes {0,n} (PCRE2 10.42 reads "{,n}" as a literal);
 *   - \Z becomes \z (PCRE2's \Z also matches before a final newline);
 *   - \s and \S name Python's str.isspace() set: PCRE2's UCP \s lacks
 *     U+001C..U+001F and has U+180E (Python: Cf, not a space).
 * \w \d \b follow PCRE2's Unicode tables (L, N and "_"; Nd), Python's rule;
 * they differ from utf8proc's newer tables only for scripts added after
 * PCRE2's Unicode version (tests/unit/test_alam2021.c pins the common cases).
 * Case is never folded: the script passes no flags. Matching is bounded by
 * AM_ALAM_RX_MATCH_LIMIT so a pathological term fails instead of hanging. */

#define RX_INF (-1)
#define RX_MAX_DEPTH 64
#define RX_MAX_REPEAT 1000
/* Python's whitespace: PCRE2's UCP \s plus U+001C..U+001F, minus U+180E. */
#define RX_SPACE "(?:(?!\\x{180e})[\\s\\x{1c}-\\x{1f}])"
#define RX_NSPACE "(?:\\x{180e}|[^\\s\\x{1c}-\\x{1f}])"

/* A pattern being translated: cursor over the Python text, PCRE2 output. */
typedef struct rx_tr {
    const char *p;
    const char *end;
    am_buf *out; /* borrowed */
} rx_tr;

static int32_t rx_peek(const rx_tr *r)
{
    int32_t cp;
    if (r->p >= r->end)
        return -1;
    am_utf8_decode(r->p, (size_t)(r->end - r->p), &cp);
    return cp;
}

static int32_t rx_get(rx_tr *r)
{
    int32_t cp;
    if (r->p >= r->end)
        return -1;
    r->p += am_utf8_decode(r->p, (size_t)(r->end - r->p), &cp);
    return cp;
}

/* Writes code point cp as a PCRE2 literal (inside or outside a class). */
static void rx_lit(am_buf *out, int32_t cp)
{
    if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) {
        am_buf_appendc(out, (char)cp);
    } else if (cp >= 128) {
        char enc[4];
        am_buf_append(out, enc, am_utf8_encode(cp, enc));
    } else {
        am_buf_printf(out, "\\x{%x}", (unsigned)cp);
    }
}

static int rx_hex(rx_tr *r, int ndigits, int32_t *out)
{
    int32_t v = 0;
    for (int i = 0; i < ndigits; i++) {
        int32_t c = rx_get(r);
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + d;
        if (v > 0x10FFFF)
            return 0;
    }
    if (v >= 0xD800 && v <= 0xDFFF)
        return 0; /* a surrogate: no UTF-8 text holds one */
    *out = v;
    return 1;
}

/* Reads an escape after '\'. Returns 1 for a literal (in *lit), 2 for a
 * class shorthand (its letter in *kind: d D w W s S), 3 for an assertion
 * (its letter in *kind: b B A Z), 0 for what the subset refuses
 * (backreferences, octal, \N{…}, unknown ASCII-letter escapes). */
static int rx_escape(rx_tr *r, int in_class, int32_t *lit, int *kind)
{
    int32_t c = rx_get(r);
    switch (c) {
    case -1: return 0;
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S': *kind = (int)c; return 2;
    case 'a': *lit = 7; return 1;
    case 'f': *lit = 12; return 1;
    case 'n': *lit = 10; return 1;
    case 'r': *lit = 13; return 1;
    case 't': *lit = 9; return 1;
    case 'v': *lit = 11; return 1;
    case 'x': return rx_hex(r, 2, lit);
    case 'u': return rx_hex(r, 4, lit);
    case 'U': return rx_hex(r, 8, lit);
    case 'b':
        if (in_class) {
            *lit = 8;
            return 1;
        }
        *kind = 'b';
        return 3;
    case 'B':
    case 'A':
    case 'Z': *kind = (int)c; return in_class ? 0 : 3;
    default: break;
    }
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 0;
    *lit = c;
    return 1;
}

/* Writes class shorthand `kind` outside a class. */
static void rx_shorthand(am_buf *out, int kind)
{
    if (kind == 's')
        am_buf_appends(out, RX_SPACE);
    else if (kind == 'S')
        am_buf_appends(out, RX_NSPACE);
    else
        am_buf_printf(out, "\\%c", kind);
}

/* Translates a class after '['. A class holding \s or \S becomes an
 * alternation of a plain class and the two space atoms (negated: a
 * lookahead refusing all of them, then any character). Returns 0 on
 * error. */
static int rx_class(rx_tr *r)
{
    am_buf items;
    int neg = 0, spc = 0, nspc = 0, first = 1, ok = 0;
    am_buf_init(&items);
    if (rx_peek(r) == '^') {
        rx_get(r);
        neg = 1;
    }
    for (;;) {
        int32_t c = rx_get(r), lo, hi;
        int kind = 0;
        if (c == -1)
            goto out;
        if (c == ']' && !first)
            break;
        first = 0;
        if (c == '\\') {
            int k = rx_escape(r, 1, &lo, &kind);
            if (k == 0)
                goto out;
            if (k == 2) {
                if (kind == 's' || kind == 'S')
                    *(kind == 's' ? &spc : &nspc) = 1;
                else
                    am_buf_printf(&items, "\\%c", kind);
                continue;
            }
        } else {
            lo = c;
        }
        if (rx_peek(r) == '-' && r->p + 1 < r->end && r->p[1] != ']') { /* a range */
            rx_get(r);
            int32_t c2 = rx_get(r);
            if (c2 == '\\') {
                if (rx_escape(r, 1, &hi, &kind) != 1)
                    goto out;
            } else {
                hi = c2;
            }
            if (hi < lo)
                goto out;
            rx_lit(&items, lo);
            am_buf_appendc(&items, '-');
            rx_lit(&items, hi);
        } else {
            rx_lit(&items, lo);
        }
    }
    ok = 1;
    if (!spc && !nspc) {
        am_buf_appends(r->out, neg ? "[^" : "[");
        am_buf_append(r->out, items.data, items.len);
        am_buf_appendc(r->out, ']');
        goto out;
    }
    am_buf_appends(r->out, neg ? "(?:(?!" : "(?:");
    const char *sep = "";
    if (items.len > 0) {
        am_buf_printf(r->out, "[%.*s]", (int)items.len, items.data);
        sep = "|";
    }
    if (spc) {
        am_buf_printf(r->out, "%s%s", sep, RX_SPACE);
        sep = "|";
    }
    if (nspc)
        am_buf_printf(r->out, "%s%s", sep, RX_NSPACE);
    am_buf_appends(r->out, neg ? ")(?s:.))" : ")");
out:
    am_buf_cleanup(&items);
    return ok;
}

static int rx_alt(rx_tr *r, int depth);

/* Reads "{m}", "{m,}", "{,n}", "{m,n}" at r->p (just after '{'), Python's
 * rule. Returns 1 and the bounds, 0 when it is not a quantifier (r->p
 * unchanged: the '{' is a literal), -1 on error (max < min, too large). */
static int rx_braces(rx_tr *r, int *min, int *max)
{
    const char *save = r->p;
    long lo = -1, hi = -1;
    int have_comma = 0;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        lo = (lo < 0 ? 0 : lo) * 10 + (*r->p - '0');
        if (lo > 100000)
            lo = 100000;
        r->p++;
    }
    if (r->p < r->end && *r->p == ',') {
        have_comma = 1;
        r->p++;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
            hi = (hi < 0 ? 0 : hi) * 10 + (*r->p - '0');
            if (hi > 100000)
                hi = 100000;
            r->p++;
        }
    } else {
        hi = lo;
    }
    if (r->p >= r->end || *r->p != '}' || (lo < 0 && !have_comma)) {
        r->p = save;
        return 0;
    }
    r->p++;
    *min = lo < 0 ? 0 : (int)lo;
    *max = hi < 0 ? RX_INF : (int)hi;
    if (*max != RX_INF && *max < *min)
        return -1;
    if (*min > RX_MAX_REPEAT || (*max != RX_INF && *max > RX_MAX_REPEAT))
        return -1;
    return 1;
}

/* Translates one atom whose first character c was read. Returns 1 for an
 * atom that may be repeated, 2 for an assertion, 0 on error. */
static int rx_atom(rx_tr *r, int32_t c, int depth)
{
    int32_t lit = 0;
    int kind = 0, k, mn, mx;
    switch (c) {
    case '(':
        if (rx_peek(r) == '?') {
            if (r->end - r->p < 2 || r->p[1] != ':')
                return 0; /* lookarounds, flags, named groups: outside the subset */
            r->p += 2;
        }
        am_buf_appends(r->out, "(?:");
        if (!rx_alt(r, depth + 1) || rx_get(r) != ')')
            return 0;
        am_buf_appendc(r->out, ')');
        return 1;
    case '[': return rx_class(r);
    case '.': am_buf_appendc(r->out, '.'); return 1;
    case '^': am_buf_appendc(r->out, '^'); return 2;
    case '$': am_buf_appendc(r->out, '$'); return 2;
    case '*':
    case '+':
    case '?': return 0; /* nothing to repeat */
    case '{':
        if (rx_braces(r, &mn, &mx) != 0)
            return 0; /* a quantifier with nothing to repeat */
        rx_lit(r->out, '{');
        return 1;
    case '\\':
        k = rx_escape(r, 0, &lit, &kind);
        if (k == 1)
            rx_lit(r->out, lit);
        else if (k == 2)
            rx_shorthand(r->out, kind);
        else if (k == 3)
            am_buf_appends(r->out, kind == 'Z'   ? "\\z"
                                   : kind == 'A' ? "\\A"
                                   : kind == 'b' ? "\\b"
                                                 : "\\B");
        return k == 3 ? 2 : k != 0;
    default: rx_lit(r->out, c); return 1;
    }
}

/* Translates a quantifier after an atom of kind `atom` (rx_atom's result),
 * if one follows. Returns 1, or 0 on error (an assertion repeated, a
 * multiple repeat). */
static int rx_quant(rx_tr *r, int atom)
{
    int mn = -2, mx = 0;
    int32_t q = rx_peek(r);
    if (q == '*' || q == '+' || q == '?') {
        rx_get(r);
        mn = q == '+' ? 1 : 0;
        mx = q == '?' ? 1 : RX_INF;
    } else if (q == '{') {
        rx_get(r);
        int k = rx_braces(r, &mn, &mx);
        if (k < 0)
            return 0;
        if (k == 0) {
            r->p--; /* '{' is a literal, read as the next atom */
            return 1;
        }
    }
    if (mn == -2)
        return 1;
    if (atom == 2)
        return 0; /* nothing to repeat */
    if (mx == RX_INF)
        am_buf_printf(r->out, "{%d,}", mn);
    else
        am_buf_printf(r->out, "{%d,%d}", mn, mx);
    if (rx_peek(r) == '?') {
        rx_get(r);
        am_buf_appendc(r->out, '?'); /* lazy: the same existence */
    }
    int32_t q2 = rx_peek(r);
    if (q2 == '*' || q2 == '+' || q2 == '?')
        return 0; /* multiple repeat / possessive */
    if (q2 == '{') {
        const char *save = r->p;
        rx_get(r);
        int a, b;
        int k = rx_braces(r, &a, &b);
        r->p = save;
        if (k != 0)
            return 0;
    }
    return 1;
}

/* Translates alternatives of quantified atoms up to ')' or the end. */
static int rx_alt(rx_tr *r, int depth)
{
    if (depth > RX_MAX_DEPTH)
        return 0;
    while (r->p < r->end && *r->p != ')') {
        int32_t c = rx_get(r);
        if (c == '|') {
            am_buf_appendc(r->out, '|');
            continue;
        }
        int atom = rx_atom(r, c, depth);
        if (atom == 0 || !rx_quant(r, atom))
            return 0;
    }
    return 1;
}

/* Compiles Python pattern pattern[0..n) (valid UTF-8) into *out (caller
 * frees with pcre2_code_free). Returns AM_OK or AM_ERR_INVALID. */
static int rx_compile(const char *pattern, size_t n, pcre2_code **out)
{
    am_buf pc;
    rx_tr r = {pattern, pattern + n, &pc};
    *out = NULL;
    am_buf_init(&pc);
    int ok = rx_alt(&r, 0) && r.p == r.end; /* an unbalanced ')' stops early */
    if (ok) {
        pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
        if (!cc)
            abort(); /* as the am_x allocation wrappers do */
        pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
        int err;
        PCRE2_SIZE off;
        *out = pcre2_compile((PCRE2_SPTR)am_buf_str(&pc), pc.len,
                             PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C, &err, &off, cc);
        pcre2_compile_context_free(cc);
    }
    am_buf_cleanup(&pc);
    return *out ? AM_OK : AM_ERR_INVALID;
}

/* An empty set with its match data and limits; pair with rx_set_cleanup. */
void alam_rx_set_init(rx_set *s)
{
    memset(s, 0, sizeof *s);
    s->md = pcre2_match_data_create(1, NULL);
    s->mc = pcre2_match_context_create(NULL);
    if (!s->md || !s->mc)
        abort(); /* as the am_x allocation wrappers do */
    pcre2_set_match_limit(s->mc, AM_ALAM_RX_MATCH_LIMIT);
    pcre2_set_depth_limit(s->mc, AM_ALAM_RX_DEPTH_LIMIT);
}

void alam_rx_set_cleanup(rx_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].pat);
        pcre2_code_free(s->v[i].re);
    }
    free(s->v);
    free(s->slot);
    pcre2_match_data_free(s->md);
    pcre2_match_context_free(s->mc);
    memset(s, 0, sizeof *s);
}

/* Characters that make a term string a regular expression in Python. */
static int is_literal_pattern(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strchr(".^$*+?{}[]\\|()", s[i]) && s[i] != '\0')
            return 0;
    return 1;
}

static size_t rx_hash(const char *pat, size_t n)
{
    return (size_t)am_mix64(am_fnv1a_n(AM_FNV64_BASIS, pat, n));
}

/* Re-indexes the entries into a slot table of twice their capacity. */
static void rx_rehash(rx_set *s)
{
    free(s->slot);
    s->nslot = s->nslot ? 2 * s->nslot : 64;
    s->slot = am_xmalloc(s->nslot * sizeof *s->slot);
    for (size_t i = 0; i < s->nslot; i++)
        s->slot[i] = (size_t)-1;
    for (size_t i = 0; i < s->n; i++) {
        size_t h = rx_hash(s->v[i].pat, s->v[i].n) & (s->nslot - 1);
        while (s->slot[h] != (size_t)-1)
            h = (h + 1) & (s->nslot - 1);
        s->slot[h] = i;
    }
}

/* The compiled finder of pattern pat[0..n) (borrowed; copied), compiled on
 * first use. Returns NULL when the pattern is outside the subset. */
const finder *alam_rx_find(rx_set *s, const char *pat, size_t n)
{
    if (2 * (s->n + 1) > s->nslot)
        rx_rehash(s);
    size_t h = rx_hash(pat, n) & (s->nslot - 1);
    for (; s->slot[h] != (size_t)-1; h = (h + 1) & (s->nslot - 1)) {
        const finder *f = &s->v[s->slot[h]];
        if (f->n == n && memcmp(f->pat, pat, n) == 0)
            return f->bad ? NULL : f;
    }
    AM_GROW(s->v, s->cap, s->n + 1, 16);
    finder *f = &s->v[s->n];
    f->pat = am_xstrndup(pat, n);
    f->n = n;
    f->literal = is_literal_pattern(pat, n);
    f->re = NULL;
    f->bad = !f->literal && rx_compile(pat, n, &f->re) != AM_OK;
    s->slot[h] = s->n++;
    return f->bad ? NULL : f;
}

/* Finds the first position at or after code point start `from` of
 * t[0..len) where f matches (re.finditer's "(?=…)" positions, in bytes:
 * the callers compare and count them, never index characters). Returns 1
 * and *at, 0 when there is none, AM_ERR_INVALID when a limit stopped the
 * match. */
int alam_rx_next(const finder *f, rx_set *s, const char *t, size_t len, size_t from, size_t *at)
{
    if (from >= len)
        return 0;
    if (f->literal) {
        if (f->n == 0) {
            *at = from;
            return 1;
        }
        for (size_t p = from; p + f->n <= len; p++) { /* memmem is not C11/POSIX */
            const char *c = memchr(t + p, f->pat[0], len - f->n + 1 - p);
            if (!c)
                return 0;
            p = (size_t)(c - t);
            if (memcmp(c, f->pat, f->n) == 0) {
                *at = p;
                return 1;
            }
        }
        return 0;
    }
    /* The subject is valid UTF-8 (am_sgml_parse checked it). */
    int rc = pcre2_match(f->re, (PCRE2_SPTR)t, len, from, PCRE2_NO_UTF_CHECK, s->md, s->mc);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0) /* over a limit: a term the scorer cannot process (AM_ERR_RANGE
                 * would report it as a TERm limit) */
        return AM_ERR_INVALID;
    *at = (size_t)pcre2_get_ovector_pointer(s->md)[0];
    return *at < len; /* a match starts at a code point of t[from..len) */
}

int am_alam_regex_match_at(const char *pattern, const char *text, size_t len, size_t pos)
{
    pcre2_code *re;
    if (!pattern || !text || pos > len)
        return AM_ERR_INVALID;
    if (rx_compile(pattern, strlen(pattern), &re) != AM_OK)
        return AM_ERR_INVALID;
    rx_set s;
    alam_rx_set_init(&s);
    int rc = pcre2_match(re, (PCRE2_SPTR)text, len, pos, PCRE2_ANCHORED, s.md, s.mc);
    pcre2_code_free(re);
    alam_rx_set_cleanup(&s);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT)
        return AM_ERR_RANGE;
    return rc < 0 ? AM_ERR_INVALID : 1;
}

/* Next code-point start after pos. */
size_t alam_next_cp(const char *t, size_t len, size_t pos)
{
    pos++;
    while (pos < len && ((unsigned char)t[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}
