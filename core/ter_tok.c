/*
 * ter_tok.c — TER's tokenizer (sacreBLEU 2.6.0's tercom normalization, see
 * ter.h: am_ter_tokenize, am_ter_tokenize_opts, the span helpers). Moved out
 * of ter.c, whose search and edit distance use only its public entry points.
 */
#include "ter.h"
#include "text.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- tokenizer ------------------------------------------------------------ */

void am_ter_opts_init(am_ter_opts *o)
{
    o->case_sensitive = 0;
    o->normalized = 0;
    o->no_punct = 0;
    o->asian_support = 0;
}

void am_ter_spans_init(am_ter_spans *sp)
{
    memset(sp, 0, sizeof *sp);
}

void am_ter_spans_cleanup(am_ter_spans *sp)
{
    free(sp->start);
    free(sp->end);
    memset(sp, 0, sizeof *sp);
}

static void spans_push(am_ter_spans *sp, size_t a, size_t b)
{
    if (sp->n == sp->cap) {
        sp->cap = sp->cap ? 2 * sp->cap : 32;
        sp->start = am_xrealloc(sp->start, sp->cap * sizeof *sp->start);
        sp->end = am_xrealloc(sp->end, sp->cap * sizeof *sp->end);
    }
    sp->start[sp->n] = a;
    sp->end[sp->n] = b;
    sp->n++;
}

/* A string under rewriting that remembers, for every byte, the byte range
 * [st, en) of the input text it came from (inserted spaces get an empty
 * range; they never end up inside a token). */
typedef struct trk {
    char *s;
    size_t *st, *en;
    size_t n, cap;
} trk;

static void trk_reserve(trk *t, size_t more)
{
    if (t->n + more + 1 <= t->cap)
        return;
    size_t c = t->cap ? t->cap : 64;
    while (c < t->n + more + 1)
        c *= 2;
    t->s = am_xrealloc(t->s, c);
    t->st = am_xrealloc(t->st, c * sizeof *t->st);
    t->en = am_xrealloc(t->en, c * sizeof *t->en);
    t->cap = c;
}

static void trk_free(trk *t)
{
    free(t->s);
    free(t->st);
    free(t->en);
}

/* Appends byte b with origin [a, e). */
static void trk_byte(trk *t, char b, size_t a, size_t e)
{
    trk_reserve(t, 1);
    t->s[t->n] = b;
    t->st[t->n] = a;
    t->en[t->n] = e;
    t->n++;
}

static void trk_space(trk *t)
{
    trk_byte(t, ' ', 0, 0);
}

/* Appends in's bytes [i, i + len) with their origins. */
static void trk_copy(trk *t, const trk *in, size_t i, size_t len)
{
    trk_reserve(t, len);
    memcpy(t->s + t->n, in->s + i, len);
    memcpy(t->st + t->n, in->st + i, len * sizeof *t->st);
    memcpy(t->en + t->n, in->en + i, len * sizeof *t->en);
    t->n += len;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* tokenizer_ter.py's punctuation class [{-~[-` -&(-+:-@/] (ASCII). */
static int ter_punct_class(unsigned char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* TercomTokenizer.ASIAN_PUNCT and FULL_WIDTH_PUNCT. */
static int ter_asian_punct(int32_t c)
{
    return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) ||
           (c >= 0x3014 && c <= 0x301f) || (c >= 0xff61 && c <= 0xff65) || c == 0x30fb ||
           c == 0xff0e || c == 0xff0c || c == 0xff1f || c == 0xff1a || c == 0xff1b || c == 0xff01 ||
           c == 0xff02 || c == 0xff08 || c == 0xff09;
}

/* The code points _normalize_asian puts spaces around: CJK ideographs and
 * extension A, strokes, radicals, compatibility blocks and forms, the wide
 * range 3200–3F22, and the punctuation above. */
static int ter_asian_split(int32_t c)
{
    return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
           (c >= 0x31c0 && c <= 0x31ef) || (c >= 0x2e80 && c <= 0x2eff) ||
           (c >= 0x3300 && c <= 0x33ff) || (c >= 0xf900 && c <= 0xfaff) ||
           (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0x3200 && c <= 0x3f22) || ter_asian_punct(c);
}

/* One rewriting pass of in into out (reset first). Each pass is one re.sub
 * of tokenizer_ter.py; they scan left to right and never re-read what they
 * wrote, as re.sub does. Byte-wise scanning is exact here: every pattern
 * is ASCII except the Asian ones, which decode code points. */
enum ter_pass {
    P_HYPHEN_JOIN, /* \n- → "" */
    P_NEWLINE, /* \n → " " */
    P_QUOT,
    P_AMP,
    P_LT,
    P_GT, /* the four XML entities, in this order */
    P_PAD, /* f" {sent} " */
    P_PUNCT, /* ([{-~[-` -&(-+:-@/]) → " \1 " */
    P_POSS, /* 's  → " 's " */
    P_POSS_END, /* 's$ → " 's" */
    P_PERIOD_AFTER, /* ([^0-9])([\.,]) → "\1 \2 " */
    P_PERIOD_BEFORE, /* ([\.,])([^0-9]) → " \1 \2" */
    P_DIGIT_DASH, /* ([0-9])(-) → "\1 \2 " */
    P_ASIAN, /* spaces around ter_asian_split code points */
    P_NO_PUNCT, /* [\.,\?:;!\"\(\)] → "" */
    P_NO_ASIAN_PUNCT /* ter_asian_punct code points → "" */
};

static void ter_entity(trk *out, const trk *in, const char *ent, char repl)
{
    size_t len = strlen(ent);
    for (size_t i = 0; i < in->n;) {
        if (in->n - i >= len && !memcmp(in->s + i, ent, len)) {
            trk_byte(out, repl, in->st[i], in->en[i + len - 1]);
            i += len;
        } else {
            trk_copy(out, in, i++, 1);
        }
    }
}

/* Complexity (issue 15): one case per re.sub of tokenizer_ter.py, in its
 * order, so each can be checked against the Python line it mirrors. */
static void ter_pass(trk *out, const trk *in, enum ter_pass p)
{
    out->n = 0;
    const char *s = in->s;
    size_t n = in->n;
    switch (p) {
    case P_QUOT: ter_entity(out, in, "&quot;", '"'); return;
    case P_AMP: ter_entity(out, in, "&amp;", '&'); return;
    case P_LT: ter_entity(out, in, "&lt;", '<'); return;
    case P_GT: ter_entity(out, in, "&gt;", '>'); return;
    case P_PAD:
        trk_space(out);
        trk_copy(out, in, 0, n);
        trk_space(out);
        return;
    case P_POSS_END:
        trk_copy(out, in, 0, n);
        if (n >= 2 && s[n - 2] == '\'' && s[n - 1] == 's') {
            out->n -= 2;
            trk_space(out);
            trk_copy(out, in, n - 2, 2);
        }
        return;
    default: break;
    }
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        char nx = i + 1 < n ? s[i + 1] : '\0';
        int has_nx = i + 1 < n;
        switch (p) {
        case P_HYPHEN_JOIN:
            if (c == '\n' && nx == '-') {
                i += 2;
                continue;
            }
            break;
        case P_NEWLINE:
            if (c == '\n') {
                trk_byte(out, ' ', in->st[i], in->en[i]);
                i++;
                continue;
            }
            break;
        case P_PUNCT:
            if (ter_punct_class(c)) {
                trk_space(out);
                trk_copy(out, in, i++, 1);
                trk_space(out);
                continue;
            }
            break;
        case P_POSS:
            if (c == '\'' && nx == 's' && i + 2 < n && s[i + 2] == ' ') {
                trk_space(out);
                trk_copy(out, in, i, 3);
                i += 3;
                continue;
            }
            break;
        case P_PERIOD_AFTER:
            if (has_nx && !is_digit((char)c) && (nx == '.' || nx == ',')) {
                trk_copy(out, in, i, 1);
                trk_space(out);
                trk_copy(out, in, i + 1, 1);
                trk_space(out);
                i += 2;
                continue;
            }
            break;
        case P_PERIOD_BEFORE:
            if ((c == '.' || c == ',') && has_nx && !is_digit(nx)) {
                trk_space(out);
                trk_copy(out, in, i, 1);
                trk_space(out);
                trk_copy(out, in, i + 1, 1);
                i += 2;
                continue;
            }
            break;
        case P_DIGIT_DASH:
            if (is_digit((char)c) && nx == '-') {
                trk_copy(out, in, i, 1);
                trk_space(out);
                trk_copy(out, in, i + 1, 1);
                trk_space(out);
                i += 2;
                continue;
            }
            break;
        case P_NO_PUNCT:
            if (c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' ||
                c == '(' || c == ')') {
                i++;
                continue;
            }
            break;
        case P_ASIAN:
        case P_NO_ASIAN_PUNCT:
            if (c >= 0x80) {
                int32_t cp;
                size_t k = am_utf8_decode(s + i, n - i, &cp);
                if (p == P_ASIAN && ter_asian_split(cp)) {
                    trk_space(out);
                    trk_copy(out, in, i, k);
                    trk_space(out);
                } else if (!(p == P_NO_ASIAN_PUNCT && ter_asian_punct(cp))) {
                    trk_copy(out, in, i, k);
                }
                i += k;
                continue;
            }
            break;
        default: break;
        }
        trk_copy(out, in, i++, 1);
    }
}

/* 1 when s[0..len) is valid UTF-8 (what am_utf8_decode needs). */
static int ter_valid_utf8(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t k = 0; k < len;) {
        if (s[k] < 0x80) {
            k++;
            continue;
        }
        utf8proc_int32_t c;
        utf8proc_ssize_t b = utf8proc_iterate(s + k, (utf8proc_ssize_t)(len - k), &c);
        if (b <= 0)
            return 0;
        k += (size_t)b;
    }
    return 1;
}

/* Length of text without its trailing Python whitespace (str.rstrip()). */
static size_t ter_rstrip_len(const char *text, size_t len)
{
    size_t end = 0;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = am_utf8_decode(text + i, len - i, &cp);
        i += k;
        if (!am_py_isspace(cp))
            end = i;
    }
    return end;
}

/* Loads text[0..len) into t, lower-cased unless case_sensitive, every byte
 * remembering the input code point it came from. Lower-casing is Python's
 * str.lower() of the whole text (am_text_py_lower); a code point's lower
 * form is that of the code point alone except for the final sigma, whose
 * two forms have the same length, so the whole text's bytes are walked in
 * step with the per-code-point lengths. */
static void ter_load(trk *t, const char *text, size_t len, int case_sensitive)
{
    t->n = 0;
    am_buf low, one;
    am_buf_init(&low);
    am_buf_init(&one);
    const char *src = text;
    if (!case_sensitive) {
        char *tmp = am_xstrndup(text, len);
        am_text_py_lower(tmp, &low);
        free(tmp);
        src = am_buf_str(&low);
    }
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        int32_t cp;
        size_t k = am_utf8_decode(text + i, len - i, &cp);
        size_t olen = k;
        if (!case_sensitive && cp >= 0x80) {
            char ch[8];
            size_t cl = am_utf8_encode(cp, ch);
            ch[cl] = '\0';
            am_text_py_lower(ch, &one);
            olen = one.len;
        }
        for (size_t b = 0; b < olen; b++)
            trk_byte(t, src[o + b], i, i + k);
        o += olen;
        i += k;
    }
    am_buf_cleanup(&low);
    am_buf_cleanup(&one);
}

/* Splits t at Python whitespace into out (and spans). */
static void ter_split(const trk *t, am_toks *out, am_ter_spans *spans)
{
    size_t i = 0, n = t->n;
    while (i < n) {
        int32_t cp;
        size_t k;
        while (i < n && (k = am_utf8_decode(t->s + i, n - i, &cp)) && am_py_isspace(cp))
            i += k;
        if (i >= n)
            break;
        size_t b = i;
        while (i < n && (k = am_utf8_decode(t->s + i, n - i, &cp)) && !am_py_isspace(cp))
            i += k;
        am_toks_push(out, t->s + b, i - b);
        if (spans) {
            size_t a = t->st[b], e = t->en[b];
            for (size_t q = b + 1; q < i; q++) {
                a = t->st[q] < a ? t->st[q] : a;
                e = t->en[q] > e ? t->en[q] : e;
            }
            spans_push(spans, a, e);
        }
    }
}

int am_ter_tokenize_opts(const char *text, const am_ter_opts *o, am_toks *out, am_ter_spans *spans)
{
    if (!text || !out)
        return AM_ERR_INVALID;
    am_ter_opts def;
    if (!o) {
        am_ter_opts_init(&def);
        o = &def;
    }
    am_toks_reset(out);
    if (spans)
        spans->n = 0;
    size_t len = strlen(text);
    if (!ter_valid_utf8(text, len))
        return AM_ERR_UTF8;
    len = ter_rstrip_len(text, len);
    trk a = {0}, b = {0};
    ter_load(&a, text, len, o->case_sensitive);
    static const enum ter_pass norm[] = {P_HYPHEN_JOIN, P_NEWLINE,  P_QUOT,         P_AMP,
                                         P_LT,          P_GT,       P_PAD,          P_PUNCT,
                                         P_POSS,        P_POSS_END, P_PERIOD_AFTER, P_PERIOD_BEFORE,
                                         P_DIGIT_DASH};
    enum ter_pass passes[sizeof norm / sizeof norm[0] + 3];
    size_t nt = 0;
    if (len > 0 && o->normalized) {
        for (size_t k = 0; k < sizeof norm / sizeof norm[0]; k++)
            passes[nt++] = norm[k];
        if (o->asian_support)
            passes[nt++] = P_ASIAN;
    }
    if (len > 0 && o->no_punct) {
        passes[nt++] = P_NO_PUNCT;
        if (o->asian_support)
            passes[nt++] = P_NO_ASIAN_PUNCT;
    }
    trk *cur = &a, *nxt = &b;
    for (size_t k = 0; k < nt; k++) {
        ter_pass(nxt, cur, passes[k]);
        trk *t = cur;
        cur = nxt;
        nxt = t;
    }
    ter_split(cur, out, spans);
    trk_free(&a);
    trk_free(&b);
    return AM_OK;
}

int am_ter_tokenize(const char *text, int case_sensitive, am_toks *out)
{
    if (!text || !out)
        return AM_ERR_INVALID;
    /* the default options only change case: the fast path of
     * am_ter_tokenize_opts without offsets (str.split() ignores what
     * str.rstrip() removes) */
    am_toks_reset(out);
    if (!ter_valid_utf8(text, strlen(text)))
        return AM_ERR_UTF8;
    if (case_sensitive) {
        am_toks_split_py(out, text);
        return AM_OK;
    }
    am_buf b;
    am_buf_init(&b);
    am_text_py_lower(text, &b);
    am_toks_split_py(out, am_buf_str(&b));
    am_buf_cleanup(&b);
    return AM_OK;
}
