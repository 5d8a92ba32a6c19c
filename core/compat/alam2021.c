/*
 * alam2021.c — profile `alam2021`: evaluate_term_wmt.py without lemmatizer.
 *
 * Layout (in the order of docs/metrics.md §3, profile alam2021):
 *   1. the script's term searches: it builds them as regular expressions
 *      from the raw term strings ("(?= " + alternative + " )"), so
 *      "essoufflé ( e )" is a group there; a Python-`re` subset translated
 *      to PCRE2 (UTF + UCP), each pattern compiled once per call. No
 *      hand-written matcher is left: every golden value (tests/unit/
 *      test_alam2021.c, tests/cli/test_score.py) is the same with PCRE2;
 *   2. TERm: PyTER-style greedy shifts with the shared prefix-row cache;
 *   3. per-segment exact match and window overlap;
 *   4. corpus values.
 */
#include "compat/alam2021.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

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

/* A compiled search for one pattern: a memcmp for a literal term (the
 * common case), else PCRE2. Owned by its rx_set. */
typedef struct finder {
    char *pat; /* the Python pattern (owned) */
    size_t n;
    int literal;
    int bad; /* not in the subset: every search for it fails */
    pcre2_code *re; /* NULL when literal or bad */
} finder;

/* The patterns of one am_alam_score call, each compiled once (hashed by
 * text), and the match data and limits of that call (no global state). */
typedef struct rx_set {
    finder *v;
    size_t n, cap;
    size_t *slot; /* open addressing over v, (size_t)-1 = empty */
    size_t nslot;
    pcre2_match_data *md;
    pcre2_match_context *mc;
} rx_set;

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
static void rx_set_init(rx_set *s)
{
    memset(s, 0, sizeof *s);
    s->md = pcre2_match_data_create(1, NULL);
    s->mc = pcre2_match_context_create(NULL);
    if (!s->md || !s->mc)
        abort(); /* as the am_x allocation wrappers do */
    pcre2_set_match_limit(s->mc, AM_ALAM_RX_MATCH_LIMIT);
    pcre2_set_depth_limit(s->mc, AM_ALAM_RX_DEPTH_LIMIT);
}

static void rx_set_cleanup(rx_set *s)
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
static const finder *rx_find(rx_set *s, const char *pat, size_t n)
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
static int rx_next(const finder *f, rx_set *s, const char *t, size_t len, size_t from, size_t *at)
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
    rx_set_init(&s);
    int rc = pcre2_match(re, (PCRE2_SPTR)text, len, pos, PCRE2_ANCHORED, s.md, s.mc);
    pcre2_code_free(re);
    rx_set_cleanup(&s);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT)
        return AM_ERR_RANGE;
    return rc < 0 ? AM_ERR_INVALID : 1;
}

/* Next code-point start after pos. */
static size_t next_cp(const char *t, size_t len, size_t pos)
{
    pos++;
    while (pos < len && ((unsigned char)t[pos] & 0xC0) == 0x80)
        pos++;
    return pos;
}

/* ======================================================================
 * 2. TERm (notes-alam2021-terM.md)
 * ====================================================================== */

/* The prefix cache stores, for every prefix x[0..i) ever evaluated, the
 * edit-distance row of its first evaluation ("first writer wins": a row
 * written in term mode is reused by unit-mode calls and vice versa). A
 * row is a function of its parent's row, its token and the mode it was
 * written in, so the trie keeps the token and the mode of every node but
 * the rows of only every TER_CHECKPOINT-th depth; the others are
 * recomputed from the nearest stored ancestor when needed. Same rows,
 * about TER_CHECKPOINT times less memory. */
#define TER_CHECKPOINT 64

typedef struct ter_ctx {
    size_t m; /* reference length */
    const int *r; /* reference token ids */
    const unsigned char *term; /* per reference position, may be NULL */
    int cost; /* C */
    /* prefix trie: node 0 is the root */
    int *tok, *child, *sib, *rowix; /* rowix: index of the stored row or -1 */
    unsigned char *tmode; /* 1 = row written in term mode */
    size_t nnodes, capnodes;
    int *rows; /* stored rows, (m + 1) ints each; row 0 is the root's */
    size_t nrows, caprows;
    int *scratch; /* two rows */
    int *path; /* nodes of the current walk, by depth */
    size_t cappath;
    /* w(j) for j = 0..m (w(m) = 1): with term costs, and all ones */
    int *wterm, *wunit;
    uint64_t cells; /* edit-distance cells computed for this segment */
    int over; /* cells passed AM_ALAM_TER_MAX_CELLS: the run was abandoned */
} ter_ctx;

static void ter_reset(ter_ctx *c, size_t m, const int *r, const unsigned char *term, int cost)
{
    c->m = m;
    c->r = r;
    c->term = term;
    c->cost = cost;
    c->nnodes = 0;
    if (c->capnodes < 64) {
        c->capnodes = 64;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    if (c->caprows < 4)
        c->caprows = 4;
    c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    c->scratch = am_xrealloc(c->scratch, 2 * (m + 1) * sizeof *c->scratch);
    c->wterm = am_xrealloc(c->wterm, (m + 1) * sizeof *c->wterm);
    c->wunit = am_xrealloc(c->wunit, (m + 1) * sizeof *c->wunit);
    for (size_t j = 0; j <= m; j++) {
        c->wunit[j] = 1;
        c->wterm[j] = (j < m && term && term[j]) ? cost : 1;
    }
    /* root: row_0[j] = j, unit costs even for term words */
    c->tok[0] = -1;
    c->child[0] = -1;
    c->sib[0] = -1;
    c->rowix[0] = 0;
    c->tmode[0] = 0;
    for (size_t j = 0; j <= m; j++)
        c->rows[j] = (int)j;
    c->nrows = 1;
    c->nnodes = 1;
    c->cells = 0;
    c->over = 0;
}

static void ter_cleanup(ter_ctx *c)
{
    free(c->tok);
    free(c->child);
    free(c->sib);
    free(c->rowix);
    free(c->tmode);
    free(c->rows);
    free(c->scratch);
    free(c->path);
    free(c->wterm);
    free(c->wunit);
    memset(c, 0, sizeof *c);
}

static int ter_new_node(ter_ctx *c, int parent, int tok, int term_mode)
{
    if (c->nnodes == c->capnodes) {
        c->capnodes *= 2;
        c->tok = am_xrealloc(c->tok, c->capnodes * sizeof *c->tok);
        c->child = am_xrealloc(c->child, c->capnodes * sizeof *c->child);
        c->sib = am_xrealloc(c->sib, c->capnodes * sizeof *c->sib);
        c->rowix = am_xrealloc(c->rowix, c->capnodes * sizeof *c->rowix);
        c->tmode = am_xrealloc(c->tmode, c->capnodes);
    }
    int k = (int)c->nnodes++;
    c->tok[k] = tok;
    c->child[k] = -1;
    c->sib[k] = c->child[parent];
    c->child[parent] = k;
    c->rowix[k] = -1;
    c->tmode[k] = term_mode ? 1 : 0;
    return k;
}

/* Stores a copy of row as node k's row. */
static void ter_store_row(ter_ctx *c, int k, const int *row)
{
    size_t m = c->m;
    if (c->nrows == c->caprows) {
        c->caprows *= 2;
        c->rows = am_xrealloc(c->rows, c->caprows * (m + 1) * sizeof *c->rows);
    }
    memcpy(c->rows + c->nrows * (m + 1), row, (m + 1) * sizeof *row);
    c->rowix[k] = (int)c->nrows++;
}

/* row = the row after prev for token xi in the given mode. */
static void ter_row(ter_ctx *c, const int *prev, int *row, int xi, int term_mode)
{
    size_t m = c->m;
    const int *w = term_mode ? c->wterm : c->wunit;
    const int *r = c->r;
    int left = prev[0] + 1;
    c->cells += m + 1;
    row[0] = left;
    for (size_t j = 1; j <= m; j++) {
        int a = prev[j] + w[j];
        int b = left + w[j - 1];
        int d = prev[j - 1] + (xi == r[j - 1] ? 0 : w[j - 1]);
        int v = a < b ? a : b;
        left = v < d ? v : d;
        row[j] = left;
    }
}

/* ED(x, S): S = term positions when term_mode, else unit costs; walks and
 * extends the shared prefix cache (first writer wins). */
static int ter_ed(ter_ctx *c, const int *x, size_t n, int term_mode)
{
    size_t m = c->m;
    if (c->cappath < n + 1) {
        c->cappath = n + 1;
        c->path = am_xrealloc(c->path, c->cappath * sizeof *c->path);
    }
    int node = 0;
    size_t i = 0, ck = 0; /* ck: depth of the deepest stored row on the path */
    c->path[0] = 0;
    while (i < n) {
        int k = c->child[node];
        while (k >= 0 && c->tok[k] != x[i])
            k = c->sib[k];
        if (k < 0)
            break;
        node = k;
        c->path[++i] = k;
        if (c->rowix[k] >= 0)
            ck = i;
    }
    /* the row of the path's end: from the stored ancestor, each node in
     * the mode it was written in */
    const int *prev = c->rows + (size_t)c->rowix[c->path[ck]] * (m + 1);
    int *buf = c->scratch, flip = 0;
    for (size_t d = ck + 1; d <= i; d++) {
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[d - 1], c->tmode[c->path[d]]);
        prev = row;
        flip ^= 1;
    }
    for (; i < n; i++) {
        int k = ter_new_node(c, node, x[i], term_mode);
        int *row = buf + (size_t)flip * (m + 1);
        ter_row(c, prev, row, x[i], term_mode);
        if ((i + 1) % TER_CHECKPOINT == 0)
            ter_store_row(c, k, row);
        prev = row;
        flip ^= 1;
        node = k;
    }
    if (c->cells > AM_ALAM_TER_MAX_CELLS)
        c->over = 1;
    return prev[m];
}

static int lex_cmp(const int *a, const int *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* TERm for interned tokens h[0..n), c->r[0..m). m > 0. */
/* Complexity (issue 15): the greedy shift loop of the reference script's
 * TER (edit distance, best shift, apply, repeat), kept in one piece so it
 * reads against the original. */
static double ter_run(ter_ctx *c, const int *h, size_t n)
{
    size_t m = c->m;
    int *cur = am_xmalloc((n ? n : 1) * sizeof *cur);
    int *best = am_xmalloc((n ? n : 1) * sizeof *best);
    int *cand = am_xmalloc((n ? n : 1) * sizeof *cand);
    int shifts = 0;
    if (n)
        memcpy(cur, h, n * sizeof *cur);
    for (;;) {
        int pre = ter_ed(c, cur, n, 1);
        int have = 0, best_gain = 0;
        for (size_t i1 = 0; i1 < n && !c->over; i1++) {
            for (size_t i2 = 0; i2 < m && !c->over; i2++) {
                if (i1 == i2 || cur[i1] != c->r[i2])
                    continue;
                size_t len = 1;
                while (i1 + len < n && i2 + len < m && cur[i1 + len] == c->r[i2 + len])
                    len++;
                /* remove [i1, i1+len), insert at i2 of the shortened list */
                size_t rest = n - len;
                size_t ins = i2 < rest ? i2 : rest;
                size_t o = 0;
                for (size_t q = 0; q < n && o < ins; q++)
                    if (q < i1 || q >= i1 + len)
                        cand[o++] = cur[q];
                memcpy(cand + o, cur + i1, len * sizeof *cand);
                o += len;
                size_t skipped = 0;
                for (size_t q = 0; q < n; q++) {
                    if (q >= i1 && q < i1 + len)
                        continue;
                    if (skipped++ < ins)
                        continue;
                    cand[o++] = cur[q];
                }
                assert(o == n);
                int gain = pre - ter_ed(c, cand, n, 0);
                if (!have || gain > best_gain ||
                    (gain == best_gain && lex_cmp(cand, best, n) > 0)) {
                    memcpy(best, cand, n * sizeof *best);
                    best_gain = gain;
                    have = 1;
                }
            }
        }
        if (c->over || !have || best_gain <= 0)
            break;
        shifts++;
        int *t = cur;
        cur = best;
        best = t;
    }
    int ed = ter_ed(c, cur, n, 0);
    free(cur);
    free(best);
    free(cand);
    return (double)(shifts + ed) / (double)m;
}

typedef struct tok_ref {
    const char *s;
    size_t idx; /* position in the combined array */
} tok_ref;

static int tok_ref_cmp(const void *a, const void *b)
{
    const tok_ref *x = a, *y = b;
    return strcmp(x->s, y->s);
}

/* Interns hyp and ref tokens to ids ranked by strcmp (= code-point order for
 * valid UTF-8), so that id order is Python's str order. ids[0..nh+nr). */
static void intern(const char *const *hyp, size_t nh, const char *const *ref, size_t nr, int *ids)
{
    size_t n = nh + nr;
    if (n == 0)
        return;
    tok_ref *v = am_xmalloc(n * sizeof *v);
    for (size_t i = 0; i < nh; i++) {
        v[i].s = hyp[i];
        v[i].idx = i;
    }
    for (size_t i = 0; i < nr; i++) {
        v[nh + i].s = ref[i];
        v[nh + i].idx = nh + i;
    }
    qsort(v, n, sizeof *v, tok_ref_cmp);
    int rank = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(v[i - 1].s, v[i].s) != 0)
            rank++;
        ids[v[i].idx] = rank;
    }
    free(v);
}

static int term_ter_ctx(ter_ctx *c, const char *const *hyp, size_t nhyp, const char *const *ref,
                        size_t nref, const unsigned char *is_term, int term_cost, double *out)
{
    if (nref == 0)
        return AM_ERR_RANGE;
    if (term_cost < 1)
        return AM_ERR_INVALID;
    int *ids = am_xmalloc((nhyp + nref) * sizeof *ids);
    intern(hyp, nhyp, ref, nref, ids);
    ter_reset(c, nref, ids + nhyp, is_term, term_cost);
    *out = ter_run(c, ids, nhyp);
    free(ids);
    return c->over ? AM_ERR_RANGE : AM_OK;
}

int am_alam_term_ter(const char *const *hyp, size_t nhyp, const char *const *ref, size_t nref,
                     const unsigned char *is_term, int term_cost, double *out)
{
    ter_ctx c;
    memset(&c, 0, sizeof c);
    int rc = term_ter_ctx(&c, hyp, nhyp, ref, nref, is_term, term_cost, out);
    ter_cleanup(&c);
    return rc;
}

/* ======================================================================
 * 3. Per segment: term indices, exact match, window overlap
 * ====================================================================== */

int am_alam_term_indices(const char *const *toks, size_t ntoks, const char *const *words,
                         size_t nwords, size_t *idx, size_t cap, size_t *nidx)
{
    size_t s = 0, e = 0;
    int fs = 0, fe = 0;
    if (nwords == 0)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < ntoks && !fs; i++)
        if (strcmp(toks[i], words[0]) == 0) {
            s = i;
            fs = 1;
        }
    for (size_t i = 0; i < ntoks && !fe; i++)
        if (strcmp(toks[i], words[nwords - 1]) == 0) {
            e = i;
            fe = 1;
        }
    if (!fs || !fe)
        return AM_ERR_NOTFOUND;
    size_t n = 0;
    for (size_t i = s; i + 1 < e; i++) { /* range(s, e - 1) */
        if (n < cap)
            idx[n] = i;
        n++;
    }
    if (n < cap)
        idx[n] = e;
    n++;
    *nidx = n;
    return AM_OK;
}

/* Python str.strip() (Unicode whitespace): returns the start and length. */
static void py_strip(const char *s, size_t *start, size_t *len)
{
    size_t n = strlen(s);
    size_t a = 0;
    while (a < n) {
        int32_t cp;
        size_t k = am_utf8_decode(s + a, n - a, &cp);
        if (!am_py_isspace(cp))
            break;
        a += k;
    }
    size_t b = n;
    while (b > a) {
        size_t k = b - 1;
        while (k > a && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        int32_t cp;
        am_utf8_decode(s + k, b - k, &cp);
        if (!am_py_isspace(cp))
            break;
        b = k;
    }
    *start = a;
    *len = b - a;
}

/* Python's string.punctuation substring test: `tok in string.punctuation`. */
static int in_py_punctuation(const char *tok)
{
    static const char punct[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    return strstr(punct, tok) != NULL;
}

/* Splits a collapsed text (single spaces, trimmed) into tokens in place of a
 * copy. Returns the copy (caller frees); tokens point into it. */
static char *split_spaces(const char *text, const char ***toks, size_t *n)
{
    char *copy = am_xstrdup(text);
    size_t cnt = 0, cap = 16;
    const char **v = am_xmalloc(cap * sizeof *v);
    char *p = copy;
    while (*p) {
        if (cnt == cap) {
            cap *= 2;
            v = am_xrealloc(v, cap * sizeof *v);
        }
        v[cnt++] = p;
        char *sp = strchr(p, ' ');
        if (!sp)
            break;
        *sp = '\0';
        p = sp + 1;
    }
    *toks = v;
    *n = cnt;
    return copy;
}

/* One term of the reference, prepared. */
typedef struct pterm {
    char *alts; /* "|"-separated alternatives (tgt [+ "|" + text.strip()]) */
    int tgt_original; /* type contains "tgt_original" */
    size_t imin, imax; /* min and max of the script's index list */
    char *desired; /* " " + text.strip() + " " */
    size_t ndesired_toks;
    size_t group; /* window-overlap group (index of first term with same desired) */
} pterm;

/* Scratch shared by all segments. */
typedef struct seg_scratch {
    rx_set rx; /* the call's compiled term patterns */
    ter_ctx ter;
    am_buf hyp; /* " " + hyp text + " " */
    size_t *claimed;
    size_t nclaimed, capclaimed;
} seg_scratch;

static int has_separator(const char *s)
{
    return s && (strstr(s, " ||| ") || strstr(s, " --> "));
}

/* Exact match of one segment (compare_EXACT without lemmas). */
static int seg_exact(seg_scratch *sc, const pterm *terms, size_t nterms, size_t *correct)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    am_buf pat;
    am_buf_init(&pat);
    sc->nclaimed = 0;
    *correct = 0;
    int rc = AM_OK;
    for (size_t t = 0; t < nterms && rc == AM_OK; t++) {
        int flag = 0;
        const char *a = terms[t].alts;
        for (;;) {
            const char *bar = strchr(a, '|');
            size_t alen = bar ? (size_t)(bar - a) : strlen(a);
            am_buf_reset(&pat);
            am_buf_appendc(&pat, ' ');
            am_buf_append(&pat, a, alen);
            am_buf_appendc(&pat, ' ');
            const finder *f = rx_find(&sc->rx, pat.data, pat.len);
            if (!f) {
                rc = AM_ERR_INVALID;
                break;
            }
            size_t p = 0;
            int m;
            while ((m = rx_next(f, &sc->rx, h, hl, p, &p)) == 1) {
                int taken = 0;
                for (size_t q = 0; q < sc->nclaimed && !taken; q++)
                    taken = sc->claimed[q] == p;
                if (!taken) {
                    AM_GROW(sc->claimed, sc->capclaimed, sc->nclaimed + 1, 16);
                    sc->claimed[sc->nclaimed++] = p;
                    flag = 1;
                    break;
                }
                p = next_cp(h, hl, p);
            }
            if (m < 0) {
                rc = m;
                break;
            }
            if (!bar)
                break;
            a = bar + 1;
        }
        if (flag)
            (*correct)++;
    }
    am_buf_cleanup(&pat);
    return rc;
}

/* Context words: up to w tokens left of lo (nearest first), then up to w
 * right of hi, skipping string.punctuation substrings. Appends pointers. */
static size_t context(const char *const *toks, size_t n, size_t lo, size_t hi, size_t w,
                      const char **out)
{
    size_t k = 0, got = 0;
    for (size_t i = lo; i > 0 && got < w; i--) {
        if (!in_py_punctuation(toks[i - 1])) {
            out[k++] = toks[i - 1];
            got++;
        }
    }
    got = 0;
    for (size_t i = hi + 1; i < n && got < w; i++) {
        if (!in_py_punctuation(toks[i])) {
            out[k++] = toks[i];
            got++;
        }
    }
    return k;
}

typedef struct wo_entry {
    size_t j, k;
    double v;
} wo_entry;

/* Window overlap of one segment for window w (compare_exact_window_overlap). */
/* Length/complexity (issue 15): a line-for-line port of the reference
 * script's compare_exact_window_overlap, kept in its shape so the two can be
 * read side by side (its results are checked bit for bit). */
static int seg_window(seg_scratch *sc, const pterm *terms, size_t nterms, const char *const *rtoks,
                      size_t nr, const char *const *htoks, size_t nh, size_t w, double *out)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    double accuracy = 0.0;
    size_t matched = 0;
    int rc = AM_OK;
    size_t cw = nr + nh;
    if (w <= cw / 2)
        cw = 2 * w;
    const char **rw = am_xmalloc((cw + 1) * sizeof *rw);
    const char **hw = am_xmalloc((cw + 1) * sizeof *hw);
    unsigned char *used = am_xmalloc(cw + 1);
    size_t *fts = NULL, nfts = 0, capfts = 0;
    size_t *inst = am_xmalloc((nterms + 1) * sizeof *inst);
    wo_entry *acc = NULL;
    size_t capacc = 0;

    for (size_t g = 0; g < nterms && rc == AM_OK; g++) {
        if (!terms[g].tgt_original || terms[g].group != g)
            continue;
        /* instances of this desired, in order */
        size_t ni = 0;
        for (size_t t = g; t < nterms; t++)
            if (terms[t].tgt_original && terms[t].group == g)
                inst[ni++] = t;
        const finder *f = rx_find(&sc->rx, terms[g].desired, strlen(terms[g].desired));
        if (!f) {
            rc = AM_ERR_INVALID;
            break;
        }
        nfts = 0;
        size_t p = 0;
        int m;
        while ((m = rx_next(f, &sc->rx, h, hl, p, &p)) == 1) {
            AM_GROW(fts, capfts, nfts + 1, 8);
            fts[nfts++] = p;
            p = next_cp(h, hl, p);
        }
        if (m < 0) {
            rc = m;
            break;
        }
        if (nfts == 0)
            continue;
        size_t nacc = ni * nfts;
        if (nacc > capacc) {
            capacc = nacc;
            acc = am_xrealloc(acc, capacc * sizeof *acc);
        }
        size_t e = 0;
        for (size_t j = 0; j < ni && rc == AM_OK; j++) {
            const pterm *pt = &terms[inst[j]];
            size_t nrw = context(rtoks, nr, pt->imin, pt->imax, w, rw);
            for (size_t k = 0; k < nfts; k++) {
                size_t cnt_sp = 0;
                for (size_t q = 0; q < fts[k]; q++)
                    cnt_sp += h[q] == ' ';
                if (cnt_sp > nh) { /* the script would raise IndexError */
                    rc = AM_ERR_INVALID;
                    break;
                }
                size_t lo = cnt_sp, hi = cnt_sp + pt->ndesired_toks - 1;
                size_t nhw = context(htoks, nh, lo, hi, w, hw);
                memset(used, 0, nhw);
                size_t cnt = 0;
                for (size_t a = 0; a < nrw; a++) {
                    for (size_t b = 0; b < nhw; b++) {
                        if (!used[b] && strcmp(rw[a], hw[b]) == 0) {
                            used[b] = 1;
                            cnt++;
                            break;
                        }
                    }
                }
                acc[e].j = j;
                acc[e].k = k;
                acc[e].v = nrw ? (double)cnt / (double)nrw : 0.0;
                e++;
            }
        }
        if (rc != AM_OK)
            break;
        /* stable sort, descending by value (insertion sort keeps order) */
        for (size_t a = 1; a < e; a++) {
            wo_entry x = acc[a];
            size_t b = a;
            while (b > 0 && acc[b - 1].v < x.v) {
                acc[b] = acc[b - 1];
                b--;
            }
            acc[b] = x;
        }
        unsigned char *mref = am_xcalloc(ni, 1);
        unsigned char *mhyp = am_xcalloc(nfts, 1);
        for (size_t a = 0; a < e; a++) {
            if (mref[acc[a].j] || mhyp[acc[a].k])
                continue;
            mref[acc[a].j] = 1;
            mhyp[acc[a].k] = 1;
            matched++;
            accuracy += acc[a].v;
        }
        free(mref);
        free(mhyp);
    }
    *out = matched > 0 ? accuracy / (double)matched : 0.0;
    free(rw);
    free(hw);
    free(used);
    free(fts);
    free(inst);
    free(acc);
    return rc;
}

/* Prepares the reference terms of segment rs. Returns AM_OK or
 * AM_ERR_INVALID; *is_term (length ntoks) gets the TERm positions. */
static int prep_terms(const am_sgml_seg *rs, const char *const *toks, size_t ntoks, pterm *pt,
                      unsigned char *is_term)
{
    am_toks words;
    am_toks_init(&words);
    int rc = AM_OK;
    size_t *idx = NULL, capidx = 0;
    for (size_t t = 0; t < rs->nterms && rc == AM_OK; t++) {
        const am_sgml_term *st = &rs->terms[t];
        if (!st->tgt || !st->type || has_separator(st->tgt) || has_separator(st->text)) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&words);
        am_toks_split_py(&words, st->text);
        if (words.n == 0) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t nidx = 0;
        rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx, capidx,
                                  &nidx);
        if (rc == AM_OK && nidx > capidx) {
            capidx = nidx;
            idx = am_xrealloc(idx, capidx * sizeof *idx);
            rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx,
                                      capidx, &nidx);
        }
        if (rc != AM_OK) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t a, n;
        py_strip(st->text, &a, &n);
        /* alternatives: tgt, plus the stripped text when not a substring of tgt */
        am_buf b;
        am_buf_init(&b);
        am_buf_appends(&b, st->tgt);
        char *stripped = am_xstrndup(st->text + a, n);
        if (!strstr(st->tgt, stripped)) {
            am_buf_appendc(&b, '|');
            am_buf_appends(&b, stripped);
        }
        pt[t].alts = am_buf_detach(&b);
        am_buf_init(&b);
        am_buf_appendc(&b, ' ');
        am_buf_appends(&b, stripped);
        am_buf_appendc(&b, ' ');
        pt[t].desired = am_buf_detach(&b);
        free(stripped);
        pt[t].ndesired_toks = words.n;
        pt[t].tgt_original = strstr(st->type, "tgt_original") != NULL;
        size_t mn = idx[0], mx = idx[0];
        for (size_t i = 1; i < nidx; i++) {
            if (idx[i] < mn)
                mn = idx[i];
            if (idx[i] > mx)
                mx = idx[i];
        }
        pt[t].imin = mn;
        pt[t].imax = mx;
        pt[t].group = t;
        if (pt[t].tgt_original) {
            for (size_t i = 0; i < nidx; i++)
                is_term[idx[i]] = 1;
            for (size_t q = 0; q < t; q++) {
                if (pt[q].tgt_original && strcmp(pt[q].desired, pt[t].desired) == 0) {
                    pt[t].group = pt[q].group;
                    break;
                }
            }
        }
    }
    free(idx);
    am_toks_cleanup(&words);
    return rc;
}

/* Checks the source document the way the script reads it in parallel. */
static int check_source(const am_sgml_doc *src, const am_sgml_doc *ref)
{
    am_toks toks, words;
    int rc = AM_OK;
    if (src->nsegs != ref->nsegs)
        return AM_ERR_INVALID;
    am_toks_init(&toks);
    am_toks_init(&words);
    for (size_t i = 0; i < src->nsegs && rc == AM_OK; i++) {
        const am_sgml_seg *s = &src->segs[i];
        if (strcmp(s->id, ref->segs[i].id) != 0 || s->nterms < ref->segs[i].nterms) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&toks);
        am_toks_split_py(&toks, s->text);
        for (size_t t = 0; t < ref->segs[i].nterms; t++) {
            am_toks_reset(&words);
            am_toks_split_py(&words, s->terms[t].text);
            size_t nidx;
            if (has_separator(s->terms[t].text) ||
                am_alam_term_indices((const char *const *)toks.v, toks.n,
                                     (const char *const *)words.v, words.n, NULL, 0,
                                     &nidx) != AM_OK) {
                rc = AM_ERR_INVALID;
                break;
            }
        }
    }
    am_toks_cleanup(&toks);
    am_toks_cleanup(&words);
    return rc;
}

static int seg_id_cmp(const void *a, const void *b, const am_sgml_doc *ref)
{
    return strcmp(ref->segs[*(const size_t *)a].id, ref->segs[*(const size_t *)b].id);
}

/* Sorted index of the reference ids (qsort has no context: insertion into a
 * sorted array by binary search instead). Returns AM_ERR_INVALID on a
 * duplicate id. */
static int sort_ids(const am_sgml_doc *ref, size_t *order)
{
    for (size_t i = 0; i < ref->nsegs; i++) {
        size_t lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = seg_id_cmp(&order[mid], &i, ref);
            if (c == 0)
                return AM_ERR_INVALID;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(order + lo + 1, order + lo, (i - lo) * sizeof *order);
        order[lo] = i;
    }
    return AM_OK;
}

static size_t find_id(const am_sgml_doc *ref, const size_t *order, const char *id)
{
    size_t lo = 0, hi = ref->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ref->segs[order[mid]].id, id);
        if (c == 0)
            return order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

/* Scores reference segment rs against hypothesis segment hs into *res. */
static int score_seg(seg_scratch *sc, const am_sgml_seg *rs, const am_sgml_seg *hs,
                     const size_t *windows, size_t nwindows, am_alam_seg *res)
{
    const char **rtoks = NULL, **htoks = NULL;
    size_t nr = 0, nh = 0;
    char *rcopy = split_spaces(rs->text, &rtoks, &nr);
    char *hcopy = split_spaces(hs->text, &htoks, &nh);
    pterm *pt = am_xcalloc(rs->nterms + 1, sizeof *pt);
    unsigned char *is_term = am_xcalloc(nr + 1, 1);
    int rc = prep_terms(rs, rtoks, nr, pt, is_term);

    if (rc == AM_OK) {
        am_buf_reset(&sc->hyp);
        am_buf_appendc(&sc->hyp, ' ');
        am_buf_appends(&sc->hyp, hs->text);
        am_buf_appendc(&sc->hyp, ' ');
        res->em_terms = rs->nterms;
        rc = seg_exact(sc, pt, rs->nterms, &res->em_correct);
    }
    for (size_t w = 0; w < nwindows && rc == AM_OK; w++)
        rc = seg_window(sc, pt, rs->nterms, rtoks, nr, htoks, nh, windows[w], &res->wo[w]);
    if (rc == AM_OK) {
        int trc = term_ter_ctx(&sc->ter, htoks, nh, rtoks, nr, is_term, AM_ALAM_TERM_COST,
                               &res->term_ter);
        res->term_ter_valid = trc == AM_OK;
        if (sc->ter.over)
            rc = AM_ERR_RANGE; /* over the work limit: an error, not a null */
    }
    for (size_t t = 0; t < rs->nterms; t++) {
        free(pt[t].alts);
        free(pt[t].desired);
    }
    free(pt);
    free(is_term);
    free(rtoks);
    free(htoks);
    free(rcopy);
    free(hcopy);
    return rc;
}

/* ======================================================================
 * 4. Corpus
 * ====================================================================== */

int am_alam_score(const am_sgml_doc *src, const am_sgml_doc *ref, const am_sgml_doc *hyp,
                  const size_t *windows, size_t nwindows, am_alam_result *out)
{
    memset(out, 0, sizeof *out);
    if (!ref || !hyp || nwindows == 0 || !windows)
        return AM_ERR_INVALID;
    for (size_t w = 0; w < nwindows; w++)
        if (windows[w] == 0)
            return AM_ERR_INVALID;
    if (src) {
        int rc = check_source(src, ref);
        if (rc != AM_OK)
            return rc;
    }
    size_t *order = am_xmalloc((ref->nsegs + 1) * sizeof *order);
    size_t *pair = am_xmalloc((hyp->nsegs + 1) * sizeof *pair);
    int rc = sort_ids(ref, order);

    out->nwindows = nwindows;
    out->windows = am_xmalloc(nwindows * sizeof *out->windows);
    memcpy(out->windows, windows, nwindows * sizeof *windows);
    out->window_overlap = am_xcalloc(nwindows, sizeof *out->window_overlap);
    out->nsegs = ref->nsegs;
    out->segs = am_xcalloc(ref->nsegs + 1, sizeof *out->segs);
    for (size_t i = 0; i < ref->nsegs; i++) {
        out->segs[i].id = ref->segs[i].id;
        out->segs[i].hyp = (size_t)-1;
        out->segs[i].wo = am_xcalloc(nwindows, sizeof *out->segs[i].wo);
    }
    for (size_t j = 0; j < hyp->nsegs && rc == AM_OK; j++) {
        size_t r = (j < ref->nsegs && strcmp(ref->segs[j].id, hyp->segs[j].id) == 0)
                       ? j
                       : find_id(ref, order, hyp->segs[j].id);
        if (r == (size_t)-1)
            rc = AM_ERR_NOTFOUND;
        else if (out->segs[r].hyp != (size_t)-1)
            rc = AM_ERR_INVALID;
        else {
            out->segs[r].hyp = j;
            pair[j] = r;
        }
    }

    seg_scratch sc;
    memset(&sc, 0, sizeof sc);
    rx_set_init(&sc.rx);
    am_buf_init(&sc.hyp);
    for (size_t i = 0; i < ref->nsegs && rc == AM_OK; i++) {
        am_alam_seg *s = &out->segs[i];
        if (s->hyp == (size_t)-1)
            continue;
        rc = score_seg(&sc, &ref->segs[i], &hyp->segs[s->hyp], windows, nwindows, s);
        if (rc == AM_ERR_RANGE)
            out->err_seg = i;
    }
    rx_set_cleanup(&sc.rx);
    ter_cleanup(&sc.ter);
    am_buf_cleanup(&sc.hyp);
    free(sc.claimed);

    if (rc == AM_OK) {
        /* corpus sums in hypothesis order, as the script accumulates them */
        double ter_sum = 0.0;
        int ter_ok = hyp->nsegs > 0;
        double *wo_sum = am_xcalloc(nwindows, sizeof *wo_sum);
        for (size_t j = 0; j < hyp->nsegs; j++) {
            const am_alam_seg *s = &out->segs[pair[j]];
            out->em_correct += s->em_correct;
            out->em_terms += s->em_terms;
            for (size_t w = 0; w < nwindows; w++)
                wo_sum[w] += s->wo[w];
            if (!s->term_ter_valid)
                ter_ok = 0;
            else
                ter_sum += s->term_ter;
        }
        out->nhyp = hyp->nsegs;
        out->exact_match_valid = out->em_terms > 0;
        if (out->exact_match_valid)
            out->exact_match = (double)out->em_correct / (double)out->em_terms;
        for (size_t w = 0; w < nwindows; w++)
            out->window_overlap[w] = ref->nsegs ? wo_sum[w] / (double)ref->nsegs : 0.0;
        out->term_ter_valid = ter_ok;
        if (ter_ok)
            out->one_minus_term_ter = 1.0 - ter_sum / (double)hyp->nsegs;
        free(wo_sum);
    }
    free(order);
    free(pair);
    return rc;
}

void am_alam_result_free(am_alam_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nsegs; i++)
        free(r->segs[i].wo);
    free(r->segs);
    free(r->windows);
    free(r->window_overlap);
    memset(r, 0, sizeof *r);
}
