/*
 * textenc.h — character encodings of input files: XML documents decoded
 * to UTF-8 as their byte order mark or XML declaration says
 * (am_textenc_xml), and a diagnosis of plain text that is not UTF-8
 * (am_textenc_diagnose) so a refusal can name the encoding found and the
 * command that converts it.
 *
 * Pure: no I/O, no globals. Decoding uses the C library's iconv (glibc
 * knows every encoding a CAT tool writes: UTF-16/32 LE/BE,
 * windows-125x, ISO-8859-x, Shift_JIS, GB18030, Big5, KOI8-R, …); each
 * call opens and closes its own conversion descriptor, so concurrent
 * calls do not interfere.
 */
#ifndef AM_TEXTENC_H
#define AM_TEXTENC_H

#include "am.h"

/* The result of am_textenc_xml. */
typedef struct am_textenc_doc {
    char *utf8; /* owned (caller frees): the converted document, or NULL
                   when the input is UTF-8 already (use it as it is) */
    size_t len; /* bytes of utf8 */
    char encoding[48]; /* the encoding found: "UTF-8" (default),
                          "UTF-16LE", "windows-1252", … */
    int from_bom; /* the encoding came from a byte order mark */
} am_textenc_doc;

/* Decides the encoding of XML document buf[0..len) (borrowed) as XML 1.0
 * appendix F does: a byte order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE),
 * else the first bytes of "<?xml" in UTF-16/32 without a BOM, else the
 * encoding="…" of the XML declaration, else UTF-8. A document in another
 * encoding than UTF-8 (US-ASCII counts as UTF-8) is converted to UTF-8
 * into out->utf8, BOM dropped; newlines are kept, so line numbers stay
 * the same. The converted text is what the caller validates and parses
 * (with the parser told "UTF-8"): the XML hardening sees the decoded text.
 * Returns AM_OK; AM_ERR_INVALID with msg filled (msg may be NULL) for an
 * encoding iconv does not know, AM_ERR_UTF8 for bytes that are not valid
 * in the declared encoding (msg names the byte, its line and the
 * encoding), AM_ERR_RANGE when the result would exceed INT_MAX bytes. */
int am_textenc_xml(const char *buf, size_t len, am_textenc_doc *out, am_buf *msg);

/* Describes why text buf[0..len) (borrowed) that failed UTF-8 validation is
 * likely in another encoding, and what to do, into msg (appended):
 * "the file is UTF-16 LE (byte order mark FF FE); convert it to UTF-8:
 * iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8", or "it looks like
 * windows-1252 (byte 0x92 at line 3, a typographic quote in that
 * encoding) …", or "ISO-8859-1 (latin-1)". path names FILE in the command
 * (NULL: "FILE"). Always appends something. */
void am_textenc_diagnose(const char *buf, size_t len, const char *path, am_buf *msg);

/* True when buf[0..len) (borrowed), after a byte order mark and
 * whitespace, starts with '<' in UTF-8 or UTF-16/32 (BOM or not): an XML
 * document rather than plain text. */
int am_textenc_looks_xml(const char *buf, size_t len);

#endif
