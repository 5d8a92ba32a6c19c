/*
 * textenc.c — XML documents decoded to UTF-8 by their BOM or declaration,
 * and the diagnosis of non-UTF-8 plain text (see textenc.h).
 */
#include "textenc.h"

#include <errno.h>
#include <iconv.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Byte order marks, longest first (UTF-32 LE starts like UTF-16 LE). */
static const struct {
    const char *bytes;
    size_t n;
    const char *name;
} te_boms[] = {
    {"\x00\x00\xFE\xFF", 4, "UTF-32BE"}, {"\xFF\xFE\x00\x00", 4, "UTF-32LE"},
    {"\xEF\xBB\xBF", 3, "UTF-8"},        {"\xFE\xFF", 2, "UTF-16BE"},
    {"\xFF\xFE", 2, "UTF-16LE"},
};

/* Index into te_boms of the BOM buf starts with, or -1. */
static int te_bom(const char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof te_boms / sizeof te_boms[0]; i++)
        if (len >= te_boms[i].n && memcmp(buf, te_boms[i].bytes, te_boms[i].n) == 0)
            return (int)i;
    return -1;
}

/* "<?xml" in UTF-16/32 without a BOM (XML 1.0 appendix F): the encoding's
 * name, or NULL. */
static const char *te_sniff_wide(const char *buf, size_t len)
{
    if (len >= 4 && !memcmp(buf, "\x3C\x00\x00\x00", 4))
        return "UTF-32LE";
    if (len >= 4 && !memcmp(buf, "\x00\x00\x00\x3C", 4))
        return "UTF-32BE";
    if (len >= 4 && !memcmp(buf, "\x3C\x00\x3F\x00", 4))
        return "UTF-16LE";
    if (len >= 4 && !memcmp(buf, "\x00\x3C\x00\x3F", 4))
        return "UTF-16BE";
    return NULL;
}

static int te_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The encoding="…" of an XML declaration at the start of buf (leading
 * whitespace tolerated) into name (size cap); 0 when there is none. Only
 * the declaration is looked at: it ends at the first "?>". */
static int te_declared(const char *buf, size_t len, char *name, size_t cap)
{
    size_t i = 0;
    while (i < len && te_space(buf[i]))
        i++;
    if (len - i < 6 || memcmp(buf + i, "<?xml", 5) || !te_space(buf[i + 5]))
        return 0;
    size_t end = i;
    while (end + 1 < len && !(buf[end] == '?' && buf[end + 1] == '>'))
        end++;
    for (size_t k = i + 5; k + 8 <= end; k++) {
        if (memcmp(buf + k, "encoding", 8) || !te_space(buf[k - 1]))
            continue;
        size_t p = k + 8;
        while (p < end && te_space(buf[p]))
            p++;
        if (p >= end || buf[p] != '=')
            return 0;
        p++;
        while (p < end && te_space(buf[p]))
            p++;
        if (p >= end || (buf[p] != '"' && buf[p] != '\''))
            return 0;
        char q = buf[p++];
        size_t s = p;
        while (p < end && buf[p] != q)
            p++;
        if (p >= end || p - s == 0 || p - s >= cap)
            return 0;
        memcpy(name, buf + s, p - s);
        name[p - s] = '\0';
        return 1;
    }
    return 0;
}

/* True for the names that mean "read the bytes as UTF-8": UTF-8 itself,
 * US-ASCII (a subset), and the UTF-16/32 labels on a document that has
 * neither a BOM nor wide "<?xml" bytes (a mislabelled UTF-8 file, which
 * libxml2 also reads as UTF-8). */
static int te_is_utf8_name(const char *n)
{
    static const char *const same[] = {"UTF-8",    "UTF8",     "US-ASCII", "ASCII",
                                       "UTF-16",   "UTF-16LE", "UTF-16BE", "UTF-32",
                                       "UTF-32LE", "UTF-32BE", "UCS-2",    "ISO-10646-UCS-2"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (am_ascii_ieq(n, same[i]))
            return 1;
    return 0;
}

/* 1-based line of the byte at offset off of text in encoding enc (the
 * newlines counted as that encoding's code units). */
static size_t te_line(const char *buf, size_t off, const char *enc)
{
    size_t unit = strstr(enc, "32") ? 4 : strstr(enc, "16") ? 2 : 1;
    int le = strstr(enc, "LE") != NULL;
    size_t line = 1;
    for (size_t i = 0; i + unit <= off; i += unit) {
        const unsigned char *u = (const unsigned char *)buf + i;
        if (unit == 1)
            line += u[0] == '\n';
        else if (le)
            line += u[0] == '\n' && (unit == 2 ? u[1] == 0 : !u[1] && !u[2] && !u[3]);
        else
            line += u[unit - 1] == '\n' && (unit == 2 ? u[0] == 0 : !u[0] && !u[1] && !u[2]);
    }
    return line;
}

/* Converts buf[0..len) from enc to UTF-8 into out. */
static int te_convert(const char *buf, size_t len, const char *enc, am_textenc_doc *out,
                      am_buf *msg)
{
    iconv_t cd = iconv_open("UTF-8", enc);
    if (cd == (iconv_t)-1) {
        if (msg)
            am_buf_printf(msg,
                          "the document's encoding '%s' is not supported (convert it to UTF-8, "
                          "e.g. iconv -f %s -t UTF-8)",
                          enc, enc);
        return AM_ERR_INVALID;
    }
    am_buf b;
    am_buf_init(&b);
    am_buf_reserve(&b, len + len / 2 + 16);
    char *in = (char *)(uintptr_t)buf;
    size_t inleft = len;
    int rc = AM_OK;
    while (inleft > 0) {
        char chunk[8192];
        char *o = chunk;
        size_t oleft = sizeof chunk;
        size_t r = iconv(cd, &in, &inleft, &o, &oleft);
        am_buf_append(&b, chunk, sizeof chunk - oleft);
        if (b.len > (size_t)INT_MAX) {
            rc = AM_ERR_RANGE;
            if (msg)
                am_buf_printf(msg, "the document is larger than %d bytes in UTF-8", INT_MAX);
            break;
        }
        if (r == (size_t)-1 && errno != E2BIG) {
            size_t off = len - inleft;
            rc = AM_ERR_UTF8;
            if (msg)
                am_buf_printf(msg,
                              "line %zu: byte 0x%02X (offset %zu) is not valid %s, the encoding "
                              "the document declares%s",
                              te_line(buf, off, enc), (unsigned)(unsigned char)buf[off], off, enc,
                              errno == EINVAL ? " (the text ends inside a character)" : "");
            break;
        }
    }
    iconv_close(cd);
    if (rc) {
        am_buf_cleanup(&b);
        return rc;
    }
    out->len = b.len;
    out->utf8 = am_buf_detach(&b);
    return AM_OK;
}

int am_textenc_xml(const char *buf, size_t len, am_textenc_doc *out, am_buf *msg)
{
    memset(out, 0, sizeof *out);
    snprintf(out->encoding, sizeof out->encoding, "UTF-8");
    if (!buf || !len)
        return AM_OK;
    int bom = te_bom(buf, len);
    const char *enc = NULL;
    size_t skip = 0;
    if (bom >= 0) {
        enc = te_boms[bom].name;
        skip = te_boms[bom].n;
        out->from_bom = 1;
    } else {
        enc = te_sniff_wide(buf, len);
    }
    char declared[40];
    if (!enc && te_declared(buf, len, declared, sizeof declared) && !te_is_utf8_name(declared))
        enc = declared;
    if (!enc || !strcmp(enc, "UTF-8")) {
        if (enc)
            out->from_bom = 1;
        return AM_OK;
    }
    snprintf(out->encoding, sizeof out->encoding, "%s", enc);
    return te_convert(buf + skip, len - skip, enc, out, msg);
}

int am_textenc_looks_xml(const char *buf, size_t len)
{
    if (!buf)
        return 0;
    int bom = te_bom(buf, len);
    const char *enc = bom >= 0 ? te_boms[bom].name : te_sniff_wide(buf, len);
    size_t i = bom >= 0 ? te_boms[bom].n : 0;
    size_t unit = !enc ? 1 : strstr(enc, "32") ? 4 : strstr(enc, "16") ? 2 : 1;
    int le = enc && strstr(enc, "LE") != NULL;
    for (; i + unit <= len; i += unit) {
        /* the code unit's low byte; the others must be zero */
        size_t lo = le || unit == 1 ? i : i + unit - 1;
        for (size_t k = i; k < i + unit; k++)
            if (k != lo && buf[k])
                return 0;
        if (!te_space(buf[lo]))
            return buf[lo] == '<';
    }
    return 0;
}

/* ---- plain text ----------------------------------------------------------- */

/* Share of NUL bytes at even (*even) and odd (*odd) offsets of the first
 * 4096 bytes, in per mille. */
static void te_nul_share(const unsigned char *u, size_t len, unsigned *even, unsigned *odd)
{
    size_t n = len < 4096 ? len : 4096, e = 0, o = 0;
    for (size_t i = 0; i < n; i++)
        if (!u[i] && i % 2)
            o++;
        else if (!u[i])
            e++;
    *even = n ? (unsigned)(e * 2000 / n) : 0;
    *odd = n ? (unsigned)(o * 2000 / n) : 0;
}

/* Length of the valid UTF-8 sequence at u[0..n), or 0. */
static size_t te_utf8_len(const unsigned char *u, size_t n)
{
    unsigned c = u[0];
    size_t k = c < 0x80                 ? 1
               : c >= 0xC2 && c <= 0xDF ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((u[i] & 0xC0) != 0x80)
            return 0;
    return k;
}

void am_textenc_diagnose(const char *buf, size_t len, const char *path, am_buf *msg)
{
    const char *file = path ? path : "FILE";
    const unsigned char *u = (const unsigned char *)buf;
    int bom = buf ? te_bom(buf, len) : -1;
    const char *wide = bom > 0 && strcmp(te_boms[bom].name, "UTF-8") ? te_boms[bom].name : NULL;
    unsigned even = 0, odd = 0;
    if (!wide && buf)
        te_nul_share(u, len, &even, &odd);
    if (!wide && odd > 300 && even < 50)
        wide = "UTF-16LE";
    else if (!wide && even > 300 && odd < 50)
        wide = "UTF-16BE";
    if (wide) {
        /* with a BOM, iconv's "UTF-16"/"UTF-32" read it and drop it */
        am_buf_printf(msg,
                      "the file is %s (%s), not UTF-8; convert it: iconv -f %.*s -t UTF-8 %s > "
                      "%s.utf8",
                      wide, bom > 0 ? "byte order mark" : "NUL bytes between the characters",
                      bom > 0 ? 6 : (int)strlen(wide), wide, file, file);
        return;
    }
    /* the first byte that is not UTF-8, and whether C1-range bytes (0x80–
     * 0x9F: punctuation in windows-1252, control codes in ISO-8859-x) occur
     * outside valid UTF-8 sequences */
    size_t first = len, c1 = 0, high = 0;
    for (size_t i = 0; i < len;) {
        size_t k = te_utf8_len(u + i, len - i);
        if (k) {
            i += k;
            continue;
        }
        if (first == len)
            first = i;
        high++;
        c1 += u[i] >= 0x80 && u[i] <= 0x9F;
        i++;
    }
    if (first == len) {
        am_buf_appends(msg, "the text holds a NUL byte (binary data, or UTF-16/32 text)");
        return;
    }
    size_t line = 1;
    for (size_t i = 0; i < first; i++)
        line += u[i] == '\n';
    const char *enc = c1 ? "windows-1252" : "ISO-8859-1 (latin-1) or windows-1252";
    am_buf_printf(msg,
                  "not UTF-8 (byte 0x%02X at line %zu; %zu such byte%s): it looks like %s%s; if "
                  "so, convert it: iconv -f %s -t UTF-8 %s > %s.utf8",
                  (unsigned)u[first], line, high, high == 1 ? "" : "s", enc,
                  c1 ? " (bytes 0x80-0x9F are its quotes, dashes and euro sign)" : "",
                  c1 ? "WINDOWS-1252" : "LATIN1", file, file);
}
