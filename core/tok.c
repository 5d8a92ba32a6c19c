/*
 * tok.c — sacreBLEU 2.6.0 tokenizers (see tok.h).
 *
 * sacreBLEU applies a list of regular-expression substitutions one after the
 * other (Python re.sub: leftmost, non-overlapping matches) and finally joins
 * line.split() with single spaces. Each rule below is one hand-written pass
 * over the output of the previous one, with exactly re.sub's scanning
 * semantics, so the result is byte-for-byte sacreBLEU's:
 *
 *   TokenizerRegexp (used by 13a and zh), ASCII patterns:
 *     R1  ([\{-\~\[-\` -\&\(-\+\:-\@\/])  ->  " \1 "
 *     R2  ([^0-9])([\.,])                  ->  "\1 \2 "
 *     R3  ([\.,])([^0-9])                  ->  " \1 \2"
 *     R4  ([0-9])(-)                       ->  "\1 \2 "
 *   13a first removes "<skipped>", "-\n", maps "\n" to " ", decodes &quot;
 *   &amp; &lt; &gt; (in that order, each over the whole line) and pads the
 *   line with one space on each side.
 *   zh strips the line, surrounds every "Chinese" character (sacreBLEU's
 *   _UCODE_RANGES, as Python evaluates them) with spaces, then runs R1..R4.
 *
 *   intl (Python `regex` module, Unicode properties via utf8proc):
 *     I1  (\P{N})(\p{P})  ->  "\1 \2 "
 *     I2  (\p{P})(\P{N})  ->  " \1 \2"
 *     I3  (\p{S})         ->  " \1 "
 *
 * R1..R4 work on bytes: their patterns are ASCII, and a negated class such
 * as [^0-9] matching a whole multi-byte code point is equivalent to matching
 * its last byte (continuation bytes never equal '.', ',' or '-', so the
 * match decisions and the resume positions are the same).
 *
 * Scratch space lives on the stack for ordinary segments; longer lines use
 * the heap. No global mutable state.
 */
#include "tok.h"

#include "mecab.h"
#include "zhseg.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- scratch buffers ----------------------------------------------------- */

#define TOK_STACK 2048

typedef struct tok_sbuf {
    char *p;
    size_t len;
    size_t cap;
    int heap;
} tok_sbuf;

static void sb_init(tok_sbuf *b, char *stack, size_t cap)
{
    b->p = stack;
    b->len = 0;
    b->cap = cap;
    b->heap = 0;
}

static void sb_cleanup(tok_sbuf *b)
{
    if (b->heap)
        free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->heap = 0;
}

/* Makes room for n bytes (plus a NUL); discards the content. */
static void sb_reserve(tok_sbuf *b, size_t n)
{
    b->len = 0;
    if (n + 1 <= b->cap)
        return;
    if (b->heap)
        free(b->p);
    b->cap = n + 1;
    b->p = am_xmalloc(b->cap);
    b->heap = 1;
}

static void sb_swap(tok_sbuf *a, tok_sbuf *b)
{
    tok_sbuf t = *a;
    *a = *b;
    *b = t;
}

/* ---- names ---------------------------------------------------------------- */

static const char *const tok_names[] = {"13a",  "intl",     "zh",      "char",
                                        "none", "ja-mecab", "zh-friso"};
_Static_assert(sizeof tok_names / sizeof tok_names[0] == AM_TOK_KIND_COUNT, "a name per kind");

/* sacreBLEU 2.6.0's other tokenizers (BLEU._TOKENIZERS) and why adaptmon
 * does not run them: each needs something Debian does not package. */
static const struct {
    const char *name;
    const char *reason;
} tok_unsupported[] = {
    {"ko-mecab", "ko-mecab needs MeCab's Korean dictionary (mecab-ko-dic), which Debian does "
                 "not package"},
    {"flores101", "flores101 needs the FLORES-101 SentencePiece model that sacreBLEU downloads "
                  "at first use; no Debian package provides it"},
    {"flores200", "flores200 needs the FLORES-200 SentencePiece model that sacreBLEU downloads "
                  "at first use; no Debian package provides it"},
    {"spm", "spm (an alias of flores101) needs the FLORES-101 SentencePiece model that sacreBLEU "
            "downloads at first use; no Debian package provides it"},
    {"spBLEU-1K", "spBLEU-1K needs a SentencePiece model that sacreBLEU downloads at first use; "
                  "no Debian package provides it"},
};

int am_tok_parse(const char *name, enum am_tok_kind *out)
{
    if (!name)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < sizeof tok_names / sizeof tok_names[0]; i++) {
        if (strcmp(name, tok_names[i]) == 0) {
            *out = (enum am_tok_kind)i;
            return AM_OK;
        }
    }
    return AM_ERR_INVALID;
}

const char *am_tok_unsupported_reason(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof tok_unsupported / sizeof tok_unsupported[0]; i++)
        if (strcmp(name, tok_unsupported[i].name) == 0)
            return tok_unsupported[i].reason;
    return NULL;
}

int am_tok_recall_only(enum am_tok_kind kind)
{
    return kind == AM_TOK_ZH_FRISO;
}

const char *am_tok_name(enum am_tok_kind kind)
{
    if ((unsigned)kind < sizeof tok_names / sizeof tok_names[0])
        return tok_names[kind];
    return "?";
}

/* True when lang's primary subtag (before '-' or '_') equals code, ASCII
 * case-insensitively. */
static int lang_is(const char *lang, const char *code)
{
    size_t i = 0;
    for (; code[i]; i++) {
        char c = lang[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != code[i])
            return 0;
    }
    return lang[i] == '\0' || lang[i] == '-' || lang[i] == '_';
}

enum am_tok_kind am_tok_default_for_lang(const char *lang)
{
    if (!lang)
        return AM_TOK_INTL;
    /* Chinese (and its ISO 639-3 varieties without a two-letter code),
     * Japanese: no spaces between words */
    if (lang_is(lang, "zh") || lang_is(lang, "ja") || lang_is(lang, "cmn") ||
        lang_is(lang, "yue") || lang_is(lang, "wuu") || lang_is(lang, "lzh") ||
        lang_is(lang, "hak") || lang_is(lang, "nan") || lang_is(lang, "gan") ||
        lang_is(lang, "hsn"))
        return AM_TOK_ZH;
    if (lang_is(lang, "th") || lang_is(lang, "lo") || lang_is(lang, "km") || lang_is(lang, "my"))
        return AM_TOK_CHAR;
    return AM_TOK_INTL;
}

int am_tok_bleu_default(const char *lang, enum am_tok_kind *out, const char **name)
{
    enum am_tok_kind k = AM_TOK_13A;
    if (lang && lang_is(lang, "ko")) {
        if (name)
            *name = "ko-mecab";
        return AM_ERR_NOTFOUND;
    }
    if (lang && lang_is(lang, "zh"))
        k = AM_TOK_ZH;
    else if (lang && lang_is(lang, "ja"))
        k = AM_TOK_JA_MECAB;
    if (out)
        *out = k;
    if (name)
        *name = am_tok_name(k);
    return AM_OK;
}

/* ---- whitespace ----------------------------------------------------------- */

/* 1 for the bytes that are, or may start, a Python whitespace code point:
 * the ASCII ones and the lead bytes of U+0085/U+00A0 (C2), U+1680 (E1),
 * U+2000..U+205F (E2) and U+3000 (E3). */
static const unsigned char space_lead[256] = {
    [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1, [0x1C] = 1, [0x1D] = 1,
    [0x1E] = 1, [0x1F] = 1, [0x20] = 1, [0xC2] = 1, [0xE1] = 1, [0xE2] = 1, [0xE3] = 1,
};

/* Byte length of the Python whitespace code point at s[0..len), or 0. */
static size_t py_space_len(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    if (!space_lead[c])
        return 0;
    if (c < 0x80)
        return 1;
    int32_t cp;
    size_t n = am_utf8_decode((const char *)s, len, &cp);
    return am_py_isspace(cp) ? n : 0;
}

/* Writes ' '.join(s[0..len).split()) (Python semantics) into out (reset).
 * The result is never longer than s: it is written in place of one
 * reservation. */
static void collapse_into(const char *s, size_t len, am_buf *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    am_buf_reserve(out, len);
    char *o = out->data;
    while (i < len) {
        size_t n;
        while (i < len && (n = py_space_len(u + i, len - i)) > 0)
            i += n;
        size_t start = i;
        while (i < len && (!space_lead[u[i]] || py_space_len(u + i, len - i) == 0))
            i++;
        if (i > start) {
            if (o != out->data)
                *o++ = ' ';
            memcpy(o, s + start, i - start);
            o += i - start;
        }
    }
    *o = '\0';
    out->len = (size_t)(o - out->data);
}

/* ---- TokenizerRegexp (13a, zh) -------------------------------------------- */

/* R1's class: { | } ~  [ \ ] ^ _ `  space ! " # $ % &  ( ) * +  : ; < = > ? @  / */
static int re1_class(unsigned char c)
{
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int is_dotcomma(unsigned char c)
{
    return c == '.' || c == ',';
}

/* Runs R1..R4 on a (which holds the input) using b as scratch; the result is
 * left in a. */
static void regexp_rules(tok_sbuf *a, tok_sbuf *b)
{
    const unsigned char *s;
    char *o;
    size_t n, i;

    /* R1: " \1 " around each class character. */
    n = a->len;
    s = (const unsigned char *)a->p;
    sb_reserve(b, 3 * n);
    o = b->p;
    for (i = 0; i < n; i++) {
        if (re1_class(s[i])) {
            *o++ = ' ';
            *o++ = (char)s[i];
            *o++ = ' ';
        } else {
            *o++ = (char)s[i];
        }
    }
    b->len = (size_t)(o - b->p);
    sb_swap(a, b);

    /* R2: ([^0-9])([\.,]) -> "\1 \2 " (a match needs [.,] second: the
     * bytes before the one preceding the next [.,] are copied as a run) */
    n = a->len;
    s = (const unsigned char *)a->p;
    sb_reserve(b, 2 * n);
    o = b->p;
    for (i = 0; i < n;) {
        size_t k = i + 1;
        while (k < n && !is_dotcomma(s[k]))
            k++;
        if (k - 1 > i) {
            memcpy(o, s + i, k - 1 - i);
            o += k - 1 - i;
            i = k - 1;
        }
        if (i + 1 < n && !is_digit(s[i]) && is_dotcomma(s[i + 1])) {
            *o++ = (char)s[i];
            *o++ = ' ';
            *o++ = (char)s[i + 1];
            *o++ = ' ';
            i += 2;
        } else {
            *o++ = (char)s[i++];
        }
    }
    b->len = (size_t)(o - b->p);
    sb_swap(a, b);

    /* R3: ([\.,])([^0-9]) -> " \1 \2" (a match needs [.,] first: the bytes
     * before the next one are copied as a run) */
    n = a->len;
    s = (const unsigned char *)a->p;
    sb_reserve(b, 2 * n);
    o = b->p;
    for (i = 0; i < n;) {
        size_t k = i;
        while (k < n && !is_dotcomma(s[k]))
            k++;
        if (k > i) {
            memcpy(o, s + i, k - i);
            o += k - i;
            i = k;
            if (i >= n)
                break;
        }
        if (i + 1 < n && is_dotcomma(s[i]) && !is_digit(s[i + 1])) {
            *o++ = ' ';
            *o++ = (char)s[i];
            *o++ = ' ';
            *o++ = (char)s[i + 1];
            i += 2;
        } else {
            *o++ = (char)s[i++];
        }
    }
    b->len = (size_t)(o - b->p);
    sb_swap(a, b);

    /* R4: ([0-9])(-) -> "\1 \2 " (as R2, with - second) */
    n = a->len;
    s = (const unsigned char *)a->p;
    sb_reserve(b, 2 * n);
    o = b->p;
    for (i = 0; i < n;) {
        size_t k = i + 1;
        while (k < n && s[k] != '-')
            k++;
        if (k - 1 > i) {
            memcpy(o, s + i, k - 1 - i);
            o += k - 1 - i;
            i = k - 1;
        }
        if (i + 1 < n && is_digit(s[i]) && s[i + 1] == '-') {
            *o++ = (char)s[i];
            *o++ = ' ';
            *o++ = '-';
            *o++ = ' ';
            i += 2;
        } else {
            *o++ = (char)s[i++];
        }
    }
    b->len = (size_t)(o - b->p);
    sb_swap(a, b);
}

/* Python str.replace(pat, rep) on a (len(rep) <= len(pat)), in place. */
static void replace_shrink(tok_sbuf *a, const char *pat, const char *rep)
{
    size_t pl = strlen(pat), rl = strlen(rep);
    assert(rl <= pl && pl > 0);
    char *s = a->p;
    size_t n = a->len, r = 0, w = 0;
    while (r < n) {
        if (s[r] == pat[0] && n - r >= pl && memcmp(s + r, pat, pl) == 0) {
            memcpy(s + w, rep, rl);
            w += rl;
            r += pl;
        } else {
            s[w++] = s[r++];
        }
    }
    a->len = w;
}

static void tok_13a(const char *s, size_t len, tok_sbuf *a, tok_sbuf *b, am_buf *out)
{
    sb_reserve(a, len + 2);
    a->p[0] = ' ';
    memcpy(a->p + 1, s, len);
    a->len = len + 1;
    /* Replacements on the unpadded line (a->p + 1): pad afterwards. They
     * only shrink, so do them in place on the body. */
    tok_sbuf body = {a->p + 1, len, a->cap - 1, 0};
    if (memchr(s, '<', len))
        replace_shrink(&body, "<skipped>", "");
    if (memchr(s, '\n', len)) {
        replace_shrink(&body, "-\n", "");
        replace_shrink(&body, "\n", " ");
    }
    if (memchr(body.p, '&', body.len)) {
        replace_shrink(&body, "&quot;", "\"");
        replace_shrink(&body, "&amp;", "&");
        replace_shrink(&body, "&lt;", "<");
        replace_shrink(&body, "&gt;", ">");
    }
    a->p[1 + body.len] = ' ';
    a->len = body.len + 2;
    regexp_rules(a, b);
    collapse_into(a->p, a->len, out);
}

/* sacreBLEU's TokenizerZh._is_chinese_char. Python compares the one-char
 * string with the range bounds as strings; the bounds '\u20000'..'\u2a6d6'
 * and '\u2f800'..'\u2fa1d' are two-character strings ("\u2000" "0" ...), so
 * those two ranges mean U+2001..U+2A6D and U+2F81..U+2FA1 (a code point c
 * satisfies "\u2000" "0" <= c iff c > U+2000, and c <= "\u2a6d" "6" iff
 * c <= U+2A6D). No supplementary-plane character is "Chinese". */
static int zh_is_chinese(int32_t c)
{
    static const int32_t ranges[][2] = {
        {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
        {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF},
        {0x3000, 0x303F}, {0x31C0, 0x31EF}, {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F},
        {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
        {0x3200, 0x32FF}, {0x3300, 0x33FF},
    };
    if (c < 0x2001 || c > 0xFFEF)
        return 0;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (c >= ranges[i][0] && c <= ranges[i][1])
            return 1;
    return 0;
}

static void tok_zh(const char *s, size_t len, tok_sbuf *a, tok_sbuf *b, am_buf *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n;
    /* line.strip() */
    while (len > 0 && (n = py_space_len(u, len)) > 0) {
        u += n;
        len -= n;
    }
    while (len > 0) {
        /* find the start of the last code point */
        size_t k = len - 1;
        while (k > 0 && (u[k] & 0xC0) == 0x80)
            k--;
        if (py_space_len(u + k, len - k) == 0)
            break;
        len = k;
    }
    sb_reserve(a, 3 * len);
    char *o = a->p;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        if (u[i] < 0x80) {
            *o++ = (char)u[i++];
            continue;
        }
        n = am_utf8_decode((const char *)u + i, len - i, &cp);
        if (zh_is_chinese(cp)) {
            *o++ = ' ';
            memcpy(o, u + i, n);
            o += n;
            *o++ = ' ';
        } else {
            memcpy(o, u + i, n);
            o += n;
        }
        i += n;
    }
    a->len = (size_t)(o - a->p);
    regexp_rules(a, b);
    collapse_into(a->p, a->len, out);
}

/* ---- intl ----------------------------------------------------------------- */

enum { C_N = 1, C_P = 2, C_S = 4 };

/* Classes of the ASCII code points (checked against utf8proc by the tests
 * through am_tok_tokenize): digits are N; $ + < = > ^ ` | ~ are S; the
 * other printable non-alphanumerics are P. */
static const unsigned char ascii_cls[128] = {
    ['0'] = C_N, ['1'] = C_N, ['2'] = C_N,  ['3'] = C_N,  ['4'] = C_N, ['5'] = C_N, ['6'] = C_N,
    ['7'] = C_N, ['8'] = C_N, ['9'] = C_N,  ['$'] = C_S,  ['+'] = C_S, ['<'] = C_S, ['='] = C_S,
    ['>'] = C_S, ['^'] = C_S, ['`'] = C_S,  ['|'] = C_S,  ['~'] = C_S, ['!'] = C_P, ['"'] = C_P,
    ['#'] = C_P, ['%'] = C_P, ['&'] = C_P,  ['\''] = C_P, ['('] = C_P, [')'] = C_P, ['*'] = C_P,
    [','] = C_P, ['-'] = C_P, ['.'] = C_P,  ['/'] = C_P,  [':'] = C_P, [';'] = C_P, ['?'] = C_P,
    ['@'] = C_P, ['['] = C_P, ['\\'] = C_P, [']'] = C_P,  ['_'] = C_P, ['{'] = C_P, ['}'] = C_P,
};

static unsigned char ascii_class(unsigned char c)
{
    return ascii_cls[c & 0x7F];
}

static unsigned cp_class(int32_t cp)
{
    if (cp < 0x80)
        return ascii_class((unsigned char)cp);
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return C_N;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return C_P;
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO: return C_S;
    default: return 0;
    }
}

/* Decodes the code point at s[i] (i < n): returns its byte length, its class
 * in *cls. */
static size_t next_cp(const char *s, size_t i, size_t n, unsigned *cls)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *cls = ascii_class(c);
        return 1;
    }
    int32_t cp;
    size_t k = am_utf8_decode(s + i, n - i, &cp);
    *cls = cp_class(cp);
    return k;
}

/* Copies the l bytes of one code point to o; returns the end. */
static char *put_cp(char *o, const char *s, size_t l)
{
    if (l == 1) {
        *o = *s;
        return o + 1;
    }
    memcpy(o, s, l);
    return o + l;
}

/* Whether byte c can be, or start, a P code point: the ASCII P ones and
 * every non-ASCII byte. Pairs with no such code point where the rule needs
 * one are copied as a run. */
static int maybe_p(unsigned char c)
{
    return c >= 0x80 || (ascii_cls[c] & C_P);
}

/* I1 (first = C_P required second, not-N first) or I2 (P first, not-N
 * second): two-code-point rules. */
static void intl_pair_rule(tok_sbuf *a, tok_sbuf *b, int rule2)
{
    const char *s = a->p;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = a->len, i = 0;
    sb_reserve(b, 2 * n);
    char *o = b->p;
    unsigned c1 = 0, c2 = 0;
    size_t l1 = 0, l2 = 0;
    if (n > 0)
        l1 = next_cp(s, 0, n, &c1);
    while (i < n) {
        /* Runs where no pair can match, copied at once: I1 needs a P
         * second, so the pairs (k, k + 1) up to a j whose successors are
         * not P go (s[i] ASCII, so the state at j is its ASCII class);
         * I2 needs a P first, so the code points before the next possible
         * P go. */
        if (!rule2 && l1 == 1) {
            size_t j = i;
            while (j + 1 < n && !maybe_p(u[j + 1]))
                j++;
            if (j > i) {
                memcpy(o, s + i, j - i);
                o += j - i;
                i = j;
                c1 = ascii_class(u[j]);
            }
        } else if (rule2 && !maybe_p(u[i])) {
            size_t j = i;
            while (j < n && !maybe_p(u[j]))
                j++;
            memcpy(o, s + i, j - i);
            o += j - i;
            i = j;
            if (i >= n)
                break;
            l1 = next_cp(s, i, n, &c1);
        }
        if (i + l1 < n) {
            l2 = next_cp(s, i + l1, n, &c2);
            int match = rule2 ? ((c1 & C_P) && !(c2 & C_N)) : (!(c1 & C_N) && (c2 & C_P));
            if (match) {
                if (rule2)
                    *o++ = ' ';
                o = put_cp(o, s + i, l1);
                *o++ = ' ';
                o = put_cp(o, s + i + l1, l2);
                if (!rule2)
                    *o++ = ' ';
                i += l1 + l2;
                if (i < n)
                    l1 = next_cp(s, i, n, &c1);
                continue;
            }
            o = put_cp(o, s + i, l1);
            i += l1;
            l1 = l2;
            c1 = c2;
        } else {
            o = put_cp(o, s + i, l1);
            i += l1;
        }
    }
    b->len = (size_t)(o - b->p);
    sb_swap(a, b);
}

static void tok_intl(const char *s, size_t len, tok_sbuf *a, tok_sbuf *b, am_buf *out)
{
    sb_reserve(a, len);
    memcpy(a->p, s, len);
    a->len = len;
    intl_pair_rule(a, b, 0);
    intl_pair_rule(a, b, 1);
    /* I3: " \1 " around symbols. */
    size_t n = a->len;
    sb_reserve(b, 3 * n);
    char *o = b->p;
    for (size_t i = 0; i < n;) {
        unsigned c;
        size_t l = next_cp(a->p, i, n, &c);
        if (c & C_S)
            *o++ = ' ';
        o = put_cp(o, a->p + i, l);
        if (c & C_S)
            *o++ = ' ';
        i += l;
    }
    b->len = (size_t)(o - b->p);
    collapse_into(b->p, b->len, out);
}

/* ---- char, none ----------------------------------------------------------- */

static void tok_char(const char *s, size_t len, am_buf *out)
{
    const unsigned char *u = (const unsigned char *)s;
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    for (size_t i = 0; i < len;) {
        size_t n = 1;
        if (u[i] >= 0x80) {
            int32_t cp;
            n = am_utf8_decode(s + i, len - i, &cp);
        }
        if (i > 0)
            am_buf_appendc(out, ' ');
        am_buf_append(out, s + i, n);
        i += n;
    }
}

/* ---- entry points --------------------------------------------------------- */

int am_tok_tokenize(enum am_tok_kind kind, const char *s, am_buf *out)
{
    return am_tok_tokenize_ctx(kind, NULL, s, out);
}

int am_tok_tokenize_ctx(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *s, am_buf *out)
{
    char st1[TOK_STACK], st2[TOK_STACK];
    tok_sbuf a, b;
    size_t len = strlen(s);

    switch (kind) {
    case AM_TOK_JA_MECAB:
        if (!ctx || !ctx->ja_mecab)
            return AM_ERR_INVALID;
        return am_mecab_tokenize(ctx->ja_mecab, s, out);
    case AM_TOK_ZH_FRISO:
        if (!ctx || !ctx->zh_friso)
            return AM_ERR_INVALID;
        return am_zhseg_tokenize(ctx->zh_friso, s, out);
    case AM_TOK_CHAR: tok_char(s, len, out); return AM_OK;
    case AM_TOK_NONE:
        am_buf_reset(out);
        am_buf_append(out, s, len);
        return AM_OK;
    case AM_TOK_13A:
    case AM_TOK_INTL:
    case AM_TOK_ZH: break;
    default: return AM_ERR_INVALID;
    }
    sb_init(&a, st1, sizeof st1);
    sb_init(&b, st2, sizeof st2);
    if (kind == AM_TOK_13A)
        tok_13a(s, len, &a, &b, out);
    else if (kind == AM_TOK_INTL)
        tok_intl(s, len, &a, &b, out);
    else
        tok_zh(s, len, &a, &b, out);
    sb_cleanup(&a);
    sb_cleanup(&b);
    return AM_OK;
}

int am_tok_split(enum am_tok_kind kind, const char *s, am_toks *toks)
{
    return am_tok_split_ctx(kind, NULL, s, toks);
}

int am_tok_split_ctx(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *s, am_toks *toks)
{
    am_buf b;
    am_buf_init(&b);
    int rc = am_tok_tokenize_ctx(kind, ctx, s, &b);
    if (rc == AM_OK)
        am_toks_split_py(toks, am_buf_str(&b));
    am_buf_cleanup(&b);
    return rc;
}
