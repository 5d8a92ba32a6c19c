/*
 * text.c — validation, inline-markup stripping, Unicode normalization and
 * token classes (see text.h and METRICS.md §1).
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

int am_text_normalize(const char *s, enum am_norm norm, int casefold, am_buf *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    int ascii = 1;
    for (size_t i = 0; i < len; i++) {
        if (u[i] >= 0x80) {
            ascii = 0;
            break;
        }
    }
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    /* ASCII is invariant under NFC and NFKC; its case folding is tolower. */
    if (ascii || (norm == AM_NORM_NONE && !casefold)) {
        if (!ascii && am_text_validate(s, len, NULL) != AM_OK)
            return AM_ERR_UTF8;
        am_buf_append(out, s, len);
        if (casefold) {
            for (size_t i = 0; i < out->len; i++)
                if (out->data[i] >= 'A' && out->data[i] <= 'Z')
                    out->data[i] = (char)(out->data[i] - 'A' + 'a');
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

enum { CLS_PUNCT_SYM, CLS_DIGITS, CLS_RK_PUNCT };

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
