/*
 * text.c — validation, inline-markup stripping, Unicode normalization and
 * token classes (see text.h and docs/metrics.md §1).
 */
#include "text.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- validation ----------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at u[0..n) (n > 0, u[0] >= 0x80), or 0
 * when it is invalid (bad lead byte, overlong, surrogate, > U+10FFFF,
 * truncated). Follows the Unicode well-formed byte sequence table. */
static size_t utf8_seq_len(const unsigned char *u, size_t n)
{
    unsigned char c = u[0];
    unsigned char lo = 0x80, hi = 0xBF;
    size_t need;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* > U+10FFFF */
    } else {
        return 0; /* continuation byte, C0/C1 overlong lead, F5..FF */
    }
    if (n < need)
        return 0;
    if (u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((u[i] & 0xC0) != 0x80)
            return 0;
    return need;
}

int am_text_validate(const char *s, size_t len, size_t *err_offset)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned char c = u[i];
        if (c >= 0x01 && c < 0x80) {
            i++;
            continue;
        }
        if (c == 0) {
            if (err_offset)
                *err_offset = i;
            return AM_ERR_NUL;
        }
        size_t n = utf8_seq_len(u + i, len - i);
        if (n == 0) {
            if (err_offset)
                *err_offset = i;
            return AM_ERR_UTF8;
        }
        i += n;
    }
    return AM_OK;
}

/* ---- tag stripping -------------------------------------------------------- */

static int is_name_start(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80;
}

static int is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static int is_xml_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* When s (at a '<') starts a tag — "<name attrs…>", "</name>", "<name …/>",
 * "<!--…-->" — returns its byte length; else 0. Attribute values in quotes
 * may hold '>'. */
static size_t tag_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 1;
    assert(u[0] == '<');
    if (strncmp(s, "<!--", 4) == 0) {
        const char *e = strstr(s + 4, "-->");
        return e ? (size_t)(e - s) + 3 : 0;
    }
    if (u[i] == '/')
        i++;
    if (!is_name_start(u[i]))
        return 0;
    while (is_name_char(u[i]))
        i++;
    /* after the name: '>', "/>" or whitespace then attributes */
    if (u[i] != '>' && u[i] != '/' && !is_xml_space(u[i]))
        return 0;
    while (u[i] && u[i] != '>') {
        if (u[i] == '"' || u[i] == '\'') {
            unsigned char q = u[i++];
            while (u[i] && u[i] != q)
                i++;
            if (!u[i])
                return 0;
            i++;
        } else if (u[i] == '<') {
            return 0; /* "<a <b>": the first '<' is text */
        } else {
            i++;
        }
    }
    return u[i] == '>' ? i + 1 : 0;
}

static const struct {
    const char *name;
    size_t len;
    char c;
} text_entities[] = {
    {"&lt;", 4, '<'}, {"&gt;", 4, '>'}, {"&amp;", 5, '&'}, {"&quot;", 6, '"'}, {"&apos;", 6, '\''},
};

/* XLIFF 1.2 inline elements whose content is native code, not text. */
static const char *const native_code_tags[] = {"bpt", "ept", "ph", "it"};

/* When the tag t[0..n) is a start tag (not "/>") of a native-code element,
 * returns the length from t to the end of its matching end tag; else 0. */
static size_t native_code_len(const char *t, size_t n)
{
    if (t[1] == '/' || t[n - 2] == '/')
        return 0;
    for (size_t k = 0; k < sizeof native_code_tags / sizeof native_code_tags[0]; k++) {
        const char *name = native_code_tags[k];
        size_t nl = strlen(name);
        if (strncmp(t + 1, name, nl) != 0 || is_name_char((unsigned char)t[1 + nl]))
            continue;
        for (const char *e = strstr(t + n, "</"); e; e = strstr(e + 2, "</")) {
            if (strncmp(e + 2, name, nl) == 0 && !is_name_char((unsigned char)e[2 + nl])) {
                size_t m = tag_len(e);
                if (m)
                    return (size_t)(e - t) + m;
            }
        }
        return 0;
    }
    return 0;
}

int am_text_strip_tags(const char *s, am_buf *out)
{
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    const char *run = s, *p = s;
    while (*p) {
        if (*p == '<') {
            size_t n = tag_len(p);
            if (n) {
                size_t whole = native_code_len(p, n);
                am_buf_append(out, run, (size_t)(p - run));
                p += whole ? whole : n;
                run = p;
                continue;
            }
        } else if (*p == '&') {
            size_t k;
            for (k = 0; k < sizeof text_entities / sizeof text_entities[0]; k++)
                if (strncmp(p, text_entities[k].name, text_entities[k].len) == 0)
                    break;
            if (k < sizeof text_entities / sizeof text_entities[0]) {
                am_buf_append(out, run, (size_t)(p - run));
                am_buf_appendc(out, text_entities[k].c);
                p += text_entities[k].len;
                run = p;
                continue;
            }
        }
        p++;
    }
    am_buf_append(out, run, (size_t)(p - run));
    return AM_OK;
}

/* ---- normalization -------------------------------------------------------- */

#define NORM_STACK 256

/* Whether every code point of u[0..len) is ASCII or a Latin-1 letter
 * U+00C0..U+00FF other than U+00D7, U+00DF and U+00F7 (UTF-8 C3 80..C3 BF).
 * *ascii tells whether all are ASCII. */
static int latin1_letters(const unsigned char *u, size_t len, int *ascii)
{
    *ascii = 1;
    for (size_t i = 0; i < len; i++) {
        if (u[i] < 0x80)
            continue;
        *ascii = 0;
        if (u[i] != 0xC3 || i + 1 >= len || u[i + 1] < 0x80 || u[i + 1] > 0xBF ||
            u[i + 1] == 0x97 || u[i + 1] == 0x9F || u[i + 1] == 0xB7)
            return 0;
        i++;
    }
    return 1;
}

int am_text_normalize(const char *s, enum am_norm norm, int casefold, am_buf *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    int ascii;
    int latin1 = latin1_letters(u, len, &ascii);
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    /* ASCII is invariant under NFC and NFKC; its case folding is tolower.
     * So are the Latin-1 letters of latin1_letters (precomposed, no
     * compatibility mapping, never the second of a composition pair), whose
     * case folding adds 0x20 to the upper case ones (U+00C0..U+00DE, the
     * UTF-8 byte after C3 is 80..9E), as utf8proc does (test_text
     * test_normalize_latin1 checks every one against it). */
    if (latin1 || (norm == AM_NORM_NONE && !casefold)) {
        if (!latin1 && am_text_validate(s, len, NULL) != AM_OK)
            return AM_ERR_UTF8;
        am_buf_append(out, s, len);
        if (casefold) {
            char *d = out->data;
            for (size_t i = 0; i < out->len; i++) {
                if (d[i] >= 'A' && d[i] <= 'Z')
                    d[i] = (char)(d[i] - 'A' + 'a');
                else if (!ascii && (unsigned char)d[i] == 0xC3 && i + 1 < out->len &&
                         (unsigned char)d[i + 1] <= 0x9E)
                    d[++i] += 0x20;
            }
        }
        return AM_OK;
    }

    utf8proc_option_t opt = UTF8PROC_STABLE;
    if (norm == AM_NORM_NFKC)
        opt = (utf8proc_option_t)(opt | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    else if (norm == AM_NORM_NFC)
        opt = (utf8proc_option_t)(opt | UTF8PROC_COMPOSE);
    if (casefold)
        opt = (utf8proc_option_t)(opt | UTF8PROC_CASEFOLD);

    /* utf8proc_map without its malloc for ordinary tokens: decompose into a
     * code point buffer, normalize, re-encode in place. */
    utf8proc_int32_t stackbuf[NORM_STACK];
    utf8proc_int32_t *buf = stackbuf;
    utf8proc_ssize_t cap = NORM_STACK - 1;
    utf8proc_ssize_t n = utf8proc_decompose(u, (utf8proc_ssize_t)len, buf, cap, opt);
    if (n < 0)
        return AM_ERR_UTF8;
    if (n > cap) {
        cap = n;
        buf = am_xmalloc(((size_t)cap + 1) * sizeof *buf);
        n = utf8proc_decompose(u, (utf8proc_ssize_t)len, buf, cap, opt);
        if (n < 0 || n > cap) {
            free(buf);
            return AM_ERR_UTF8;
        }
    }
    n = utf8proc_reencode(buf, n, opt);
    if (n < 0) {
        if (buf != stackbuf)
            free(buf);
        return AM_ERR_UTF8;
    }
    am_buf_append(out, (const char *)buf, (size_t)n);
    if (buf != stackbuf)
        free(buf);
    return AM_OK;
}

static const char *const norm_names[] = {"nfkc", "nfc", "none"};

int am_text_norm_parse(const char *name, enum am_norm *out)
{
    if (!name)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < sizeof norm_names / sizeof norm_names[0]; i++) {
        if (strcmp(name, norm_names[i]) == 0) {
            *out = (enum am_norm)i;
            return AM_OK;
        }
    }
    return AM_ERR_INVALID;
}

const char *am_text_norm_name(enum am_norm norm)
{
    if ((unsigned)norm < sizeof norm_names / sizeof norm_names[0])
        return norm_names[norm];
    return "?";
}

/* ---- token classes -------------------------------------------------------- */

static int is_ascii_punct(unsigned char c)
{
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
}

static int cat_is_p(utf8proc_category_t c)
{
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

static int cat_is_s(utf8proc_category_t c)
{
    return c >= UTF8PROC_CATEGORY_SM && c <= UTF8PROC_CATEGORY_SO;
}

static int cat_is_word(utf8proc_category_t c)
{
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LT) || c == UTF8PROC_CATEGORY_LO ||
           (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

enum { CLS_PUNCT_SYM, CLS_DIGITS, CLS_RK_PUNCT, CLS_NONWORD };

/* True when tok is non-empty and every code point is in the class. */
static int all_in_class(const char *tok, int cls)
{
    size_t len = strlen(tok), i = 0;
    if (len == 0)
        return 0;
    while (i < len) {
        int32_t cp;
        size_t n = am_utf8_decode(tok + i, len - i, &cp);
        i += n;
        if (cls == CLS_RK_PUNCT && cp < 0x80) {
            if (!is_ascii_punct((unsigned char)cp))
                return 0;
            continue;
        }
        utf8proc_category_t c = utf8proc_category(cp);
        int ok;
        switch (cls) {
        case CLS_PUNCT_SYM: ok = cat_is_p(c) || cat_is_s(c); break;
        case CLS_DIGITS: ok = c == UTF8PROC_CATEGORY_ND; break;
        case CLS_NONWORD: ok = !cat_is_word(c); break;
        default: ok = cat_is_p(c); break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

int am_text_is_punct_sym(const char *tok)
{
    return all_in_class(tok, CLS_PUNCT_SYM);
}

int am_text_is_digits(const char *tok)
{
    return all_in_class(tok, CLS_DIGITS);
}

int am_text_is_rk_punct(const char *tok)
{
    return all_in_class(tok, CLS_RK_PUNCT);
}

int am_text_is_nonword(const char *tok)
{
    return all_in_class(tok, CLS_NONWORD);
}

/* ---- Python str.lower() ------------------------------------------------- */

/* Other_Lowercase / Other_Uppercase ranges (Unicode 15 PropList.txt) that
 * carry no case mapping and so are not caught by the category test below. */
static const utf8proc_int32_t other_cased[][2] = {
    {0x00AA, 0x00AA},   {0x00BA, 0x00BA},   {0x02B0, 0x02B8},   {0x02C0, 0x02C1},
    {0x02E0, 0x02E4},   {0x0345, 0x0345},   {0x037A, 0x037A},   {0x10FC, 0x10FC},
    {0x1D2C, 0x1D6A},   {0x1D78, 0x1D78},   {0x1D9B, 0x1DBF},   {0x2071, 0x2071},
    {0x207F, 0x207F},   {0x2090, 0x209C},   {0x2160, 0x217F},   {0x24B6, 0x24E9},
    {0x2C7C, 0x2C7D},   {0xA69C, 0xA69D},   {0xA770, 0xA770},   {0xA7F2, 0xA7F4},
    {0xA7F8, 0xA7F9},   {0xAB5C, 0xAB5F},   {0xAB69, 0xAB69},   {0x10780, 0x10780},
    {0x10783, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x1E030, 0x1E06D},
    {0x1F130, 0x1F149}, {0x1F150, 0x1F169}, {0x1F170, 0x1F189},
};

/* Python's _PyUnicode_IsCased (Unicode "Cased": Lowercase, Uppercase or
 * Lt), from utf8proc data plus the table above. */
static int py_is_cased(utf8proc_int32_t c)
{
    utf8proc_category_t cat = utf8proc_category(c);
    if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT)
        return 1;
    if (utf8proc_tolower(c) != c || utf8proc_toupper(c) != c)
        return 1;
    for (size_t k = 0; k < sizeof other_cased / sizeof other_cased[0]; k++)
        if (c >= other_cased[k][0] && c <= other_cased[k][1])
            return 1;
    return 0;
}

/* Python's _PyUnicode_IsCaseIgnorable, approximated: Mn Me Cf Lm Sk and the
 * Word_Break MidLetter, MidNumLet and Single_Quote characters. */
static int py_is_case_ignorable(utf8proc_int32_t c)
{
    switch (c) {
    case 0x0027:
    case 0x002E:
    case 0x003A:
    case 0x00B7:
    case 0x0387:
    case 0x055F:
    case 0x05F4:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFE13:
    case 0xFE52:
    case 0xFE55:
    case 0xFF07:
    case 0xFF0E:
    case 0xFF1A: return 1;
    default: break;
    }
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_MN || cat == UTF8PROC_CATEGORY_ME ||
           cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_LM ||
           cat == UTF8PROC_CATEGORY_SK;
}

/* Final_Sigma context (Python's handle_capital_sigma) for the capital sigma
 * at s[at .. after): the nearest code point before it that is not
 * case-ignorable exists and is cased, and the nearest one after it that is
 * not case-ignorable, if any, is not cased. s is valid UTF-8. */
static int final_sigma(const unsigned char *s, size_t len, size_t at, size_t after)
{
    size_t k = at;
    utf8proc_int32_t c = -1;
    while (k > 0) {
        size_t b = k - 1;
        while (b > 0 && (s[b] & 0xC0) == 0x80)
            b--;
        utf8proc_iterate(s + b, (utf8proc_ssize_t)(k - b), &c);
        k = b;
        if (!py_is_case_ignorable(c))
            break;
        c = -1;
    }
    if (c < 0 || !py_is_cased(c))
        return 0;
    k = after;
    while (k < len) {
        utf8proc_ssize_t b = utf8proc_iterate(s + k, (utf8proc_ssize_t)(len - k), &c);
        assert(b > 0);
        if (!py_is_case_ignorable(c))
            return !py_is_cased(c);
        k += (size_t)b;
    }
    return 1;
}

int am_text_py_lower(const char *text, am_buf *out)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len = strlen(text);
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    size_t k = 0;
    while (k < len) {
        size_t a = k;
        while (k < len && s[k] < 0x80)
            k++;
        if (k > a) { /* ASCII run */
            size_t base = out->len;
            am_buf_append(out, (const char *)s + a, k - a);
            for (size_t q = base; q < out->len; q++)
                if (out->data[q] >= 'A' && out->data[q] <= 'Z')
                    out->data[q] = (char)(out->data[q] + 32);
            continue;
        }
        utf8proc_int32_t c;
        utf8proc_ssize_t b = utf8proc_iterate(s + k, (utf8proc_ssize_t)(len - k), &c);
        assert(b > 0);
        char enc[8];
        size_t el;
        if (c == 0x0130) { /* LATIN CAPITAL LETTER I WITH DOT ABOVE → i + U+0307 */
            el = am_utf8_encode(0x69, enc);
            el += am_utf8_encode(0x307, enc + el);
        } else if (c == 0x03A3) {
            el = am_utf8_encode(final_sigma(s, len, k, k + (size_t)b) ? 0x03C2 : 0x03C3, enc);
        } else {
            el = am_utf8_encode(utf8proc_tolower(c), enc);
        }
        am_buf_append(out, enc, el);
        k += (size_t)b;
    }
    return AM_OK;
}
