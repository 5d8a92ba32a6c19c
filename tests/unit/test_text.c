/* test_text.c — validation, tag stripping, normalization, token classes. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "am.h"
#include "text.h"

/* ---- validation ----------------------------------------------------------- */

static void check_valid(const char *s, size_t len, int want_rc, size_t want_off)
{
    size_t off = (size_t)-1;
    int rc = am_text_validate(s, len, &off);
    assert_int_equal(rc, want_rc);
    if (want_rc != AM_OK)
        assert_int_equal(off, want_off);
    assert_int_equal(am_text_validate(s, len, NULL), want_rc);
}

#define CHECK_VALID(lit, rc, off) check_valid((lit), sizeof(lit) - 1, (rc), (off))

/* Python's str.split(): tokens and their count without copying. */
static void test_split_py_and_count(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
        const char *last;
    } cases[] = {
        {"", 0, NULL},
        {"   \t\n ", 0, NULL},
        {"a", 1, "a"},
        {"  the  dog\tbites ", 3, "bites"},
        {"caf\xc3\xa9\xc2\xa0"
         "au\xe2\x80\x83"
         "lait",
         3, "lait"}, /* U+00A0, U+2003 */
        {"x\xe3\x80\x80y\x1fz", 3, "z"}, /* U+3000, U+001F */
        {"\xe2\x80\x8b"
         "zero-width",
         1,
         "\xe2\x80\x8b"
         "zero-width"}, /* U+200B is no space */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        am_toks t;
        am_toks_init(&t);
        am_toks_split_py(&t, cases[i].s);
        assert_int_equal(t.n, cases[i].n);
        assert_int_equal(am_toks_count_py(cases[i].s), cases[i].n);
        if (cases[i].last)
            assert_string_equal(t.v[t.n - 1], cases[i].last);
        am_toks_cleanup(&t);
    }
}

static void test_validate_cases(void **state)
{
    (void)state;
    CHECK_VALID("", AM_OK, 0);
    CHECK_VALID("plain ASCII", AM_OK, 0);
    CHECK_VALID("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", AM_OK, 0);
    CHECK_VALID("\xed\x9f\xbf", AM_OK, 0); /* U+D7FF */
    CHECK_VALID("\xee\x80\x80", AM_OK, 0); /* U+E000 */
    CHECK_VALID("\xef\xbf\xbf", AM_OK, 0); /* U+FFFF */
    CHECK_VALID("\xf4\x8f\xbf\xbf", AM_OK, 0); /* U+10FFFF */
    CHECK_VALID("\xc2\x80", AM_OK, 0); /* U+0080 */
    CHECK_VALID("a\0b", AM_ERR_NUL, 1);
    CHECK_VALID("\xc3\xa9\0", AM_ERR_NUL, 2);
    CHECK_VALID("ab\xc0\xaf", AM_ERR_UTF8, 2); /* overlong '/' */
    CHECK_VALID("\xc1\xbf", AM_ERR_UTF8, 0); /* overlong */
    CHECK_VALID("x\xe0\x80\xaf", AM_ERR_UTF8, 1); /* overlong 3-byte */
    CHECK_VALID("\xe0\x9f\xbf", AM_ERR_UTF8, 0); /* overlong U+07FF */
    CHECK_VALID("\xf0\x80\x80\xaf", AM_ERR_UTF8, 0); /* overlong 4-byte */
    CHECK_VALID("\xf0\x8f\xbf\xbf", AM_ERR_UTF8, 0); /* overlong U+FFFF */
    CHECK_VALID("ok \xed\xa0\x80", AM_ERR_UTF8, 3); /* surrogate U+D800 */
    CHECK_VALID("\xed\xbf\xbf", AM_ERR_UTF8, 0); /* surrogate U+DFFF */
    CHECK_VALID("\xf4\x90\x80\x80", AM_ERR_UTF8, 0); /* U+110000 */
    CHECK_VALID("\xf5\x80\x80\x80", AM_ERR_UTF8, 0);
    CHECK_VALID("\xff", AM_ERR_UTF8, 0);
    CHECK_VALID("a\x80", AM_ERR_UTF8, 1); /* lone continuation */
    CHECK_VALID("ab\xe2\x82", AM_ERR_UTF8, 2); /* truncated at end */
    CHECK_VALID("\xe2\x82x", AM_ERR_UTF8, 0); /* truncated inside */
    CHECK_VALID("\xc3", AM_ERR_UTF8, 0);
    CHECK_VALID("\xf0\x9f\x98", AM_ERR_UTF8, 0);
    CHECK_VALID("\xc3\xa9\xc3", AM_ERR_UTF8, 2);
    /* the first offence wins */
    CHECK_VALID("a\xff\0", AM_ERR_UTF8, 1);
    CHECK_VALID("a\0\xff", AM_ERR_NUL, 1);
    /* len bounds the scan: a sequence cut by len is truncated */
    check_valid("\xc3\xa9", 1, AM_ERR_UTF8, 0);
}

/* Reference: utf8proc_iterate (strict: no overlongs, surrogates or values
 * above U+10FFFF). Returns AM_OK / AM_ERR_UTF8 / AM_ERR_NUL and the offset. */
static int ref_validate(const unsigned char *s, size_t len, size_t *off)
{
    size_t i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n < 0) {
            *off = i;
            return AM_ERR_UTF8;
        }
        if (cp == 0) {
            *off = i;
            return AM_ERR_NUL;
        }
        i += (size_t)n;
    }
    return AM_OK;
}

/* Exhaustive over all 1- and 2-byte strings, all 3-byte strings starting
 * with a lead byte >= 0xE0, and 4-byte strings with boundary trailing
 * bytes: am_text_validate agrees with utf8proc_iterate. */
static void test_validate_vs_utf8proc(void **state)
{
    (void)state;
    unsigned char b[4];
    size_t n_ok = 0, n_bad = 0;
    for (int x = 0; x < 256; x++) {
        for (int y = 0; y < 256; y++) {
            b[0] = (unsigned char)x;
            b[1] = (unsigned char)y;
            for (size_t len = 1; len <= 2; len++) {
                size_t o1 = 99, o2 = 98;
                int r1 = am_text_validate((const char *)b, len, &o1);
                int r2 = ref_validate(b, len, &o2);
                assert_int_equal(r1, r2);
                if (r1 != AM_OK)
                    assert_int_equal(o1, o2);
            }
        }
    }
    for (int x = 0xE0; x < 0x100; x++) {
        for (int y = 0; y < 256; y++) {
            for (int z = 0; z < 256; z++) {
                b[0] = (unsigned char)x;
                b[1] = (unsigned char)y;
                b[2] = (unsigned char)z;
                size_t o1 = 99, o2 = 98;
                int r1 = am_text_validate((const char *)b, 3, &o1);
                int r2 = ref_validate(b, 3, &o2);
                assert_int_equal(r1, r2);
                if (r1 != AM_OK)
                    assert_int_equal(o1, o2);
                if (r1 == AM_OK)
                    n_ok++;
                else
                    n_bad++;
            }
        }
    }
    static const unsigned char tails[] = {0x00, 0x41, 0x80, 0x8F, 0x90, 0xBF, 0xC0};
    for (int x = 0xF0; x < 0x100; x++) {
        for (int y = 0; y < 256; y++) {
            for (size_t z = 0; z < sizeof tails; z++) {
                for (size_t w = 0; w < sizeof tails; w++) {
                    b[0] = (unsigned char)x;
                    b[1] = (unsigned char)y;
                    b[2] = tails[z];
                    b[3] = tails[w];
                    size_t o1 = 99, o2 = 98;
                    int r1 = am_text_validate((const char *)b, 4, &o1);
                    int r2 = ref_validate(b, 4, &o2);
                    assert_int_equal(r1, r2);
                    if (r1 != AM_OK)
                        assert_int_equal(o1, o2);
                }
            }
        }
    }
    assert_true(n_ok > 0 && n_bad > 0);
}

/* ---- tag stripping -------------------------------------------------------- */

static void check_strip(const char *in, const char *want)
{
    am_buf out;
    am_buf_init(&out);
    assert_int_equal(am_text_strip_tags(in, &out), AM_OK);
    assert_string_equal(am_buf_str(&out), want);
    am_buf_cleanup(&out);
}

static void test_strip_tags(void **state)
{
    (void)state;
    check_strip("<g id=\"1\">tagged</g> text <x id=\"2\"/> &lt;b&gt; &amp; &quot;q&quot;",
                "tagged text  <b> & \"q\"");
    check_strip("a < b", "a < b");
    check_strip("a <b", "a <b"); /* no closing '>' */
    check_strip("x<3 and y>2", "x<3 and y>2"); /* '<' + digit is no tag */
    check_strip("<", "<");
    check_strip("a <> b", "a <> b");
    check_strip("", "");
    check_strip("no markup", "no markup");
    check_strip("foo<x id=\"1\"/>bar", "foobar");
    check_strip("<term id=\"t1\" tgt=\"a|b\">toux s\xc3\xa8"
                "che</term>.",
                "toux s\xc3\xa8"
                "che.");
    check_strip("<x a=\"1>2\"/>y", "y"); /* '>' inside a quoted value */
    check_strip("<a <b>c", "<a c"); /* the first '<' is text */
    check_strip("&apos;s &amp;lt; AT&T &foo; &#38;", "'s &lt; AT&T &foo; &#38;");
    check_strip("a<!-- note -->b", "ab");
    check_strip("<bpt id=\"1\">&lt;b&gt;</bpt>bold<ept id=\"1\">&lt;/b&gt;</ept> text",
                "bold text");
    check_strip("x<ph id=\"2\">&lt;br/&gt;</ph>y <ph id=\"3\"/>z", "xy z");
    check_strip("<bpt id=\"1\">unclosed", "unclosed");
    check_strip("<seg id=\"1\">Hello</seg>\n", "Hello\n");
}

/* ---- normalization -------------------------------------------------------- */

static void check_norm(const char *in, enum am_norm norm, int fold, const char *want)
{
    am_buf out;
    am_buf_init(&out);
    assert_int_equal(am_text_normalize(in, norm, fold, &out), AM_OK);
    assert_string_equal(am_buf_str(&out), want);
    am_buf_cleanup(&out);
}

static void test_normalize(void **state)
{
    (void)state;
    check_norm("Stra\xc3\x9f"
               "e",
               AM_NORM_NFKC, 1, "strasse");
    check_norm("Stra\xc3\x9f"
               "e",
               AM_NORM_NFKC, 0,
               "Stra\xc3\x9f"
               "e");
    check_norm("Stra\xc3\x9f"
               "e",
               AM_NORM_NONE, 1, "strasse");
    check_norm("\xef\xac\x81", AM_NORM_NFKC, 0, "fi"); /* U+FB01 ligature */
    check_norm("\xef\xac\x81", AM_NORM_NFKC, 1, "fi");
    check_norm("\xef\xac\x81", AM_NORM_NFC, 0, "\xef\xac\x81");
    check_norm("\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93", AM_NORM_NFKC, 1, "123"); /* full width */
    check_norm("\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93", AM_NORM_NFC, 1,
               "\xef\xbc\x91\xef\xbc\x92\xef\xbc\x93");
    check_norm("\xc3\x89"
               "COLE",
               AM_NORM_NFKC, 1,
               "\xc3\xa9"
               "cole");
    check_norm("HeLLo", AM_NORM_NFKC, 1, "hello");
    check_norm("HeLLo", AM_NORM_NFKC, 0, "HeLLo");
    check_norm("HeLLo", AM_NORM_NONE, 0, "HeLLo");
    check_norm("", AM_NORM_NFKC, 1, "");
    check_norm("\xe2\x84\xaa", AM_NORM_NFC, 0, "K"); /* KELVIN SIGN: canonical singleton */
    check_norm("x\xc2\xb2", AM_NORM_NFKC, 0, "x2");

    /* NFD and NFC café are equal after NFC (and NFKC), different with none */
    const char *nfd = "cafe\xcc\x81", *nfc = "caf\xc3\xa9";
    am_buf a, b;
    am_buf_init(&a);
    am_buf_init(&b);
    for (int n = AM_NORM_NFKC; n <= AM_NORM_NFC; n++) {
        assert_int_equal(am_text_normalize(nfd, (enum am_norm)n, 0, &a), AM_OK);
        assert_int_equal(am_text_normalize(nfc, (enum am_norm)n, 0, &b), AM_OK);
        assert_string_equal(am_buf_str(&a), am_buf_str(&b));
        assert_string_equal(am_buf_str(&a), nfc);
    }
    assert_int_equal(am_text_normalize(nfd, AM_NORM_NONE, 1, &a), AM_OK);
    assert_int_equal(am_text_normalize(nfc, AM_NORM_NONE, 1, &b), AM_OK);
    assert_string_not_equal(am_buf_str(&a), am_buf_str(&b));

    /* invalid input */
    for (int n = AM_NORM_NFKC; n <= AM_NORM_NONE; n++) {
        assert_int_equal(am_text_normalize("a\xc0\xaf", (enum am_norm)n, 0, &a), AM_ERR_UTF8);
        assert_int_equal(am_text_normalize("a\xed\xa0\x80", (enum am_norm)n, 1, &a), AM_ERR_UTF8);
    }
    am_buf_cleanup(&a);
    am_buf_cleanup(&b);
}

/* am_text_normalize (stack path and heap path) equals utf8proc_map with the
 * documented options, on varied strings and on a long one. */
static void test_normalize_vs_utf8proc_map(void **state)
{
    (void)state;
    const char *samples[] = {
        "Stra\xc3\x9f"
        "e",
        "\xef\xac\x81"
        "ne \xef\xbc\xa1\xef\xbd\x82\xef\xbd\x83",
        "\xce\x8a\xce\xa3\xce\xa3 \xce\xb0", /* Greek with tonos/dialytika */
        "\xe1\xba\x9e \xc7\xb0 \xe2\x84\xab \xe2\x91\xa0",
        "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab",
        "e\xcc\x81\xcc\xa3 q\xcc\x87\xcc\xa3",
        "\xe4\xb8\xad\xe6\x96\x87 \xef\xbe\x8a\xef\xbe\x9e",
    };
    am_buf big, out;
    am_buf_init(&big);
    am_buf_init(&out);
    for (int r = 0; r < 60; r++)
        for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
            am_buf_appends(&big, samples[i]);
    for (size_t i = 0; i <= sizeof samples / sizeof samples[0]; i++) {
        const char *s = i < sizeof samples / sizeof samples[0] ? samples[i] : am_buf_str(&big);
        for (int n = AM_NORM_NFKC; n <= AM_NORM_NONE; n++) {
            for (int fold = 0; fold <= 1; fold++) {
                utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_NULLTERM;
                if (n == AM_NORM_NFKC)
                    opt |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
                if (n == AM_NORM_NFC)
                    opt |= UTF8PROC_COMPOSE;
                if (fold)
                    opt |= UTF8PROC_CASEFOLD;
                utf8proc_uint8_t *want = NULL;
                assert_true(utf8proc_map((const utf8proc_uint8_t *)s, 0, &want, opt) >= 0);
                assert_int_equal(am_text_normalize(s, (enum am_norm)n, fold, &out), AM_OK);
                assert_string_equal(am_buf_str(&out), (const char *)want);
                free(want);
            }
        }
    }
    assert_true(big.len > 4 * 256);
    am_buf_cleanup(&big);
    am_buf_cleanup(&out);
}

static void test_norm_names(void **state)
{
    (void)state;
    static const enum am_norm all[] = {AM_NORM_NFKC, AM_NORM_NFC, AM_NORM_NONE};
    for (size_t i = 0; i < 3; i++) {
        enum am_norm got = AM_NORM_NONE;
        assert_int_equal(am_text_norm_parse(am_text_norm_name(all[i]), &got), AM_OK);
        assert_int_equal(got, all[i]);
    }
    assert_string_equal(am_text_norm_name(AM_NORM_NFKC), "nfkc");
    assert_string_equal(am_text_norm_name(AM_NORM_NFC), "nfc");
    assert_string_equal(am_text_norm_name(AM_NORM_NONE), "none");
    enum am_norm x = AM_NORM_NFKC;
    assert_int_equal(am_text_norm_parse("nfd", &x), AM_ERR_INVALID);
    assert_int_equal(am_text_norm_parse("", &x), AM_ERR_INVALID);
    assert_int_equal(am_text_norm_parse(NULL, &x), AM_ERR_INVALID);
    assert_int_equal(x, AM_NORM_NFKC);
}

/* ---- token classes -------------------------------------------------------- */

static void test_punct_sym(void **state)
{
    (void)state;
    const char *yes[] = {".",        "...", ",",  "\xc2\xab",     "\xc2\xbb",     "\xe2\x82\xac",
                         "\xc2\xb0", "+",   "$",  "\xe2\x80\x94", "\xe2\x80\xa6", "\xc2\xa9",
                         "?!",       "()",  "<>", "\xe3\x80\x82"};
    const char *no[] = {"",
                        "a",
                        "a.",
                        "1",
                        "\xe2\x82\xac"
                        "5",
                        "'s",
                        " ",
                        ".\xc2\xa0",
                        "\xc3\xa9"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(am_text_is_punct_sym(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(am_text_is_punct_sym(no[i]));
}

static void test_digits(void **state)
{
    (void)state;
    const char *yes[] = {"0", "123", "\xd9\xa3\xd9\xa4\xd9\xa5" /* ٣٤٥ */,
                         "\xef\xbc\x91\xef\xbc\x92" /* full width */,
                         "\xe0\xa5\xa7" /* ० Devanagari 1 */};
    const char *no[] = {"",
                        "12a",
                        "1.5",
                        "-1",
                        "\xc2\xbd" /* ½ No */,
                        "\xc2\xb2" /* ² No */,
                        "\xe2\x85\xab" /* Ⅻ Nl */,
                        " 1"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(am_text_is_digits(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(am_text_is_digits(no[i]));
}

static void test_rk_punct(void **state)
{
    (void)state;
    const char *yes[] = {"...",
                         ".",
                         "'",
                         "\"",
                         "<>",
                         "[]{}()",
                         "$",
                         "+",
                         "|",
                         "~",
                         "^",
                         "`",
                         "\xc2\xab" /* « */,
                         "\xc2\xbb",
                         "\xe2\x80\x94" /* — */,
                         "\xe2\x80\xa6" /* … */,
                         "\xc2\xbf" /* ¿ */,
                         "\xe3\x80\x82" /* 。 */};
    const char *no[] = {"",
                        "\xe2\x82\xac" /* € */,
                        "\xc2\xb0" /* ° */,
                        "\xc2\xa9" /* © */,
                        "a",
                        "\xc2\xab\xe2\x82\xac",
                        "1",
                        ". ",
                        "\xe2\x88\x92" /* − Sm */};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(am_text_is_rk_punct(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(am_text_is_rk_punct(no[i]));
    /* every printable ASCII non-alphanumeric is rk punctuation */
    for (int c = 0x21; c < 0x7F; c++) {
        char t[2] = {(char)c, 0};
        int alnum = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        assert_int_equal(am_text_is_rk_punct(t), !alnum);
        assert_int_equal(am_text_is_punct_sym(t), !alnum);
    }
}

/* am.h's FNV-1a (the published test vectors): hash tables, stored body
 * hashes, dashboard ETags and the shard map all rest on these values. */
static void test_fnv1a_vectors(void **state)
{
    (void)state;
    assert_true(am_fnv1a("") == AM_FNV64_BASIS);
    assert_true(am_fnv1a("a") == 0xaf63dc4c8601ec8cULL);
    assert_true(am_fnv1a("foobar") == 0x85944171f73967e8ULL);
    assert_true(am_fnv1a_n(AM_FNV64_BASIS, "foobar", 6) == 0x85944171f73967e8ULL);
    assert_true(am_fnv1a_n(am_fnv1a_n(AM_FNV64_BASIS, "foo", 3), "bar", 3) ==
                0x85944171f73967e8ULL);
    assert_true(am_fnv1a32_n(AM_FNV32_BASIS, "a", 1) == 0xe40c292cu);
    assert_true(am_fnv1a32_n(AM_FNV32_BASIS, "foobar", 6) == 0xbf9cf968u);
}

/* utf8proc_map with am_text_normalize's options: the reference. */
static char *norm_ref(const char *s, enum am_norm norm, int casefold)
{
    utf8proc_option_t opt = UTF8PROC_STABLE;
    if (norm == AM_NORM_NFKC)
        opt = (utf8proc_option_t)(opt | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    else if (norm == AM_NORM_NFC)
        opt = (utf8proc_option_t)(opt | UTF8PROC_COMPOSE);
    if (casefold)
        opt = (utf8proc_option_t)(opt | UTF8PROC_CASEFOLD);
    utf8proc_uint8_t *r = NULL;
    assert_true(utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)strlen(s), &r, opt) >=
                0);
    return (char *)r;
}

/* The Latin-1 letters' shortcut of am_text_normalize (no utf8proc call for
 * ASCII and U+00C0..U+00FF letters) against utf8proc itself: every code
 * point U+0080..U+036F alone, after an ASCII letter, before a combining
 * accent and next to every Latin-1 code point, in every mode. */
static void test_normalize_latin1(void **state)
{
    (void)state;
    const enum am_norm norms[] = {AM_NORM_NFKC, AM_NORM_NFC, AM_NORM_NONE};
    am_buf out;
    am_buf_init(&out);
    size_t checked = 0;
    for (int32_t a = 0x80; a < 0x370; a++) {
        for (int32_t b = 0x40; b < 0x100; b++) {
            if (b > 0x5A && b < 0xC0 && b != 0x61)
                continue; /* A-Z, 'a' and U+00C0..U+00FF */
            utf8proc_uint8_t t[16];
            size_t k = 0;
            k += (size_t)utf8proc_encode_char(a, t + k);
            k += (size_t)utf8proc_encode_char(b, t + k);
            if (b == 0x61) /* then a combining acute: composes with 'a' */
                k += (size_t)utf8proc_encode_char(0x301, t + k);
            t[k] = 0;
            for (int rev = 0; rev < 2; rev++) {
                char in[16];
                if (rev) { /* b first */
                    size_t lb = (size_t)utf8proc_encode_char(b, (utf8proc_uint8_t *)in);
                    size_t la = (size_t)utf8proc_encode_char(a, (utf8proc_uint8_t *)in + lb);
                    in[lb + la] = 0;
                } else {
                    memcpy(in, t, k + 1);
                }
                for (size_t nm = 0; nm < 3; nm++) {
                    for (int cf = 0; cf < 2; cf++) {
                        char *want = norm_ref(in, norms[nm], cf);
                        assert_int_equal(am_text_normalize(in, norms[nm], cf, &out), AM_OK);
                        assert_string_equal(am_buf_str(&out), want);
                        free(want);
                        checked++;
                    }
                }
            }
        }
    }
    assert_true(checked > 100000);
    am_buf_cleanup(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_py_and_count),
        cmocka_unit_test(test_validate_cases),
        cmocka_unit_test(test_validate_vs_utf8proc),
        cmocka_unit_test(test_strip_tags),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_normalize_vs_utf8proc_map),
        cmocka_unit_test(test_norm_names),
        cmocka_unit_test(test_punct_sym),
        cmocka_unit_test(test_digits),
        cmocka_unit_test(test_rk_punct),
        cmocka_unit_test(test_fnv1a_vectors),
        cmocka_unit_test(test_normalize_latin1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
