/*
 * text.h — the text pipeline of docs/metrics.md §1: validation, inline-markup
 * stripping, Unicode normalization (utf8proc) and the token classes that
 * decide which tokens are content words.
 */
#ifndef AM_TEXT_H
#define AM_TEXT_H

#include "am.h"

enum am_norm {
    AM_NORM_NFKC = 0, /* default */
    AM_NORM_NFC,
    AM_NORM_NONE
};

/* Returns AM_OK when s[0..len) is valid UTF-8 (no overlongs, no surrogates,
 * nothing above U+10FFFF) with no NUL byte; AM_ERR_NUL when it holds a NUL
 * byte; AM_ERR_UTF8 otherwise. When err_offset is non-NULL it receives the
 * byte offset of the first offending byte. */
int am_text_validate(const char *s, size_t len, size_t *err_offset);

/* Removes XML-like inline tags (<x id="1"/>, <g id="2">, </g>, <bpt …>,
 * <term …>…</term> keeps the content) and decodes the entities &lt; &gt;
 * &amp; &quot; &apos;. A '<' that does not start a tag ("a < b") is kept.
 * The XLIFF native-code elements <bpt> <ept> <ph> <it> are removed with
 * their content (<bpt id="1">&lt;b&gt;</bpt> is markup, not text); comments
 * <!--…--> are removed. Entities are decoded once ("&amp;lt;" → "&lt;").
 * Writes into out (reset first). Returns AM_OK. */
int am_text_strip_tags(const char *s, am_buf *out);

/* Normalizes one valid UTF-8 string: the normalization form (NFKC, NFC or
 * none) and, when casefold is non-zero, Unicode case folding (utf8proc
 * CASEFOLD), as one utf8proc pass. Writes into out (reset first). Returns
 * AM_OK, or AM_ERR_UTF8 when utf8proc rejects the input. */
int am_text_normalize(const char *s, enum am_norm norm, int casefold, am_buf *out);
/* Parses "nfkc", "nfc", "none". Returns AM_OK or AM_ERR_INVALID. */
int am_text_norm_parse(const char *name, enum am_norm *out);
const char *am_text_norm_name(enum am_norm norm);

/* True when every code point of the non-empty token is Unicode punctuation
 * (P*) or symbol (S*) — the standard profile's non-content class. */
int am_text_is_punct_sym(const char *tok);
/* True when every code point of the non-empty token is a decimal digit (Nd). */
int am_text_is_digits(const char *tok);
/* True when no code point of the non-empty token is a letter (Lu Ll Lt Lo;
 * not the modifier letters Lm) or a number (Nd Nl No): a token made only of
 * punctuation, symbols, combining marks, modifier letters, spaces, format
 * or private-use characters. The standard profile's non-content class
 * (docs/metrics.md): it holds every am_text_is_punct_sym token, and also
 * the " \u0301" that NFKC makes of a spacing acute U+00B4. */
int am_text_is_nonword(const char *tok);
/* rk.rb's class (profile simianer2019): the token fully matches Ruby/Onigmo
 * [[:punct:]<>\[\]{}()]+ — ASCII punctuation and symbols, plus Unicode P*,
 * but not non-ASCII S* (€ ° ©). */
int am_text_is_rk_punct(const char *tok);

/* Lower-cases valid UTF-8 text as Python's str.lower() does (full case
 * mapping: İ → i̇, and the context-dependent final sigma), which sacreBLEU
 * applies for its lowercase options (BLEU, chrF, TER). Writes into out
 * (reset first). Returns AM_OK. */
int am_text_py_lower(const char *text, am_buf *out);

#endif
