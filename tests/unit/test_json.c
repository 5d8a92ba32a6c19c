/* test_json.c — server/base/json.c: the compact writer's reals, and the direct
 * writers of the stored totals (am_json_totals_text) and of a POST's answer
 * (am_json_answer), which must equal the jansson trees they replace
 * (am_json_totals_raw; am_json_segment + am_json_totals as ingest.c built
 * them) dumped by am_json_dump, byte for byte. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sgml.h"
#include "vocab.h"

/* am_json_dump of one real (caller frees). */
static char *dump_real(double x)
{
    json_t *j = json_real(x);
    char *s = am_json_dump(j);
    json_decref(j);
    return s;
}

static void test_reals(void **state)
{
    (void)state;
    static const struct {
        double x;
        const char *text;
    } cases[] = {
        {3.0, "3.0"},
        {-7.0, "-7.0"},
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {0.1, "0.1"},
        {0.8, "0.8"},
        {2.0 / 3.0, "0.6666666666666666"},
        {123456789012345.0, "123456789012345.0"},
        {999999999999999.0, "999999999999999.0"},
        {1e15, "1e15"},
        {9007199254740992.0, "9007199254740992.0"},
        {1e20, "1e20"},
        {1.5e-7, "1.5e-7"},
        {0.75, "0.75"},
        {0.05, "0.05"},
        {-12.5, "-12.5"},
        {0.0001, "0.0001"},
        {0.00012, "0.00012"},
        {0.000099, "9.9e-5"},
        {99999999999999.9, "99999999999999.9"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1234.000001, "1234.000001"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *s = dump_real(cases[i].x);
        assert_string_equal(s, cases[i].text);
        assert_true(strtod(s, NULL) == cases[i].x);
        free(s);
    }
}

/* Fills *t with distinct values of every field, reals of every kind. */
static void fill(am_totals *t, unsigned seed, int k, size_t windows)
{
    memset(t, 0, sizeof *t);
    srand(seed);
    t->segments = rand();
    t->bleu_segments = rand() % 1000;
    t->recall.k = k;
    for (int i = 0; i <= k; i++) {
        t->recall.r[i].hits = rand() % 100;
        t->recall.r[i].total = 100 + rand() % 100;
    }
    t->recall.r01.hits = 7;
    t->recall.r01.total = 9000000000LL; /* beyond 32 bits */
    t->terms.instances = 12;
    t->terms.exact = 5;
    t->terms.stem = 3;
    t->terms.deviations = 2;
    t->terms.forbidden = 1;
    t->terms.partial_sum = rand() / 7.0;
    t->terms.reorder_sum = seed & 1 ? 4.0 : 1e-9 * rand();
    t->terms.n_windows = windows;
    for (size_t w = 0; w < windows; w++) {
        t->terms.windows[w] = w + 2;
        t->terms.win_sum[w] = (double)rand() / 3.0;
        t->terms.win_count[w] = (uint64_t)rand();
    }
    t->ter.edits = rand() / 10.0;
    t->ter.ref_len = (double)rand();
    t->ter.n = (size_t)rand();
    t->term.edits = seed & 2 ? 1e16 : 0.25 * rand();
    t->term.ref_len = 33.0;
    t->term.n = 4;
    t->bleu.sys_len = rand();
    t->bleu.ref_len = rand();
    for (size_t i = 0; i < AM_BLEU_MAX_ORDER; i++) {
        t->bleu.correct[i] = rand() % 50;
        t->bleu.total[i] = 50 + rand() % 50;
    }
    for (size_t n = 0; n < AM_CHRF_MAX_CHAR_ORDER; n++)
        for (size_t i = 0; i < 3; i++)
            t->chrf.ch[n][i] = rand();
    for (size_t n = 0; n < AM_CHRF_MAX_WORD_ORDER; n++)
        for (size_t i = 0; i < 3; i++)
            t->chrf.wd[n][i] = -(int64_t)rand();
}

/* The reals' spelling before the decimal and integral fast paths: the
 * first of %.15g, %.16g, %.17g that reads back, in jansson's spelling;
 * subnormals (fewer than 53 bits: 5e-324 reads back) the first of %.1g to
 * %.17g, as core/realfmt.c prints them since it took over. */
static void old_real(double x, char *out, size_t n)
{
    char s[40];
    for (int p = x != 0 && fabs(x) < DBL_MIN ? 1 : 15; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*g", p, x);
        if (p == 17 || strtod(s, NULL) == x)
            break;
    }
    char *e = strchr(s, 'e');
    if (!e) {
        snprintf(out, n, "%s%s", s, strchr(s, '.') ? "" : ".0");
        return;
    }
    *e = '\0';
    const char *d = e + 1;
    int neg = *d == '-';
    if (*d == '-' || *d == '+')
        d++;
    while (*d == '0' && d[1])
        d++;
    snprintf(out, n, "%se%s%s", s, neg ? "-" : "", d);
}

/* Asserts that x is dumped as old_real spells it; returns the text's
 * length (the fast paths write the short ones). */
static size_t assert_as_before(double x)
{
    char want[64];
    old_real(x, want, sizeof want);
    char *got = dump_real(x);
    assert_string_equal(got, want);
    assert_true(strtod(got, NULL) == x);
    size_t len = strlen(got);
    free(got);
    return len;
}

/* Every ratio a / b of small integers, scaled by powers of ten, and
 * decimals of up to 7 places: spelled as before, and read back exactly. */
static void test_reals_as_before(void **state)
{
    (void)state;
    size_t fast = 0, n = 0;
    for (int a = -60; a <= 300; a++)
        for (int bb = 1; bb <= 64; bb++)
            for (int e = -6; e <= 16; e += 2) {
                fast += assert_as_before((double)a / bb * pow(10, e)) < 12;
                n++;
            }
    long step = 997 * (10 / tu_rounds(10)); /* every 997th, every 9,970th under valgrind */
    for (long v = -2000000; v <= 20000000; v += step)
        for (int places = 1; places <= 7; places++) {
            assert_as_before((double)v / pow(10, places));
            n++;
        }
    assert_true(n > 100000);
    assert_true(fast > 1000);
}

/* xorshift64: a deterministic stream of bits for the tests below. */
static uint64_t next_bits(uint64_t *st)
{
    uint64_t x = *st;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *st = x;
}

/* The one-printf shortest writer (am_real_shortest) against printing
 * %.15g, %.16g and %.17g in turn: every finite bit pattern kind (random
 * bits, so mostly far exponents; random mantissas at every decimal
 * exponent from 1e-30 to 1e30), decimals of 15 to 17 digits that end in 5
 * (the ties the 17-digit rounding cannot decide, and those next to them),
 * and runs of nines that carry into a new leading digit. */
static void test_reals_shortest_as_printf(void **state)
{
    (void)state;
    uint64_t st = 0x9e3779b97f4a7c15u;
    size_t n = 0;
    char text[64];
    for (long i = 0, rounds = tu_rounds(400000); i < rounds; i++) {
        uint64_t bits = next_bits(&st);
        double x;
        if (i % 2) { /* a random mantissa scaled to 10^[-30, 30] */
            bits = (bits & 0x000fffffffffffffu) | 0x3ff0000000000000u;
            memcpy(&x, &bits, sizeof x);
            x *= pow(10, (int)(next_bits(&st) % 61) - 30);
        } else {
            memcpy(&x, &bits, sizeof x);
        }
        if (!isfinite(x))
            continue;
        if (next_bits(&st) % 2)
            x = -x;
        assert_as_before(x);
        n++;
    }
    for (long i = 0, rounds = tu_rounds(200000); i < rounds; i++) {
        /* d.ddd…5 with 15 to 17 digits, or one unit either side */
        int digits = 15 + (int)(next_bits(&st) % 3);
        char m[32];
        uint64_t v = next_bits(&st);
        for (int k = 0; k < digits - 1; k++, v /= 10)
            m[k] = (char)('0' + (k == 0 ? 1 + v % 9 : v % 10));
        m[digits - 1] = "456"[next_bits(&st) % 3];
        m[digits] = '\0';
        snprintf(text, sizeof text, "%c.%se%d", m[0], m + 1, (int)(next_bits(&st) % 41) - 20);
        assert_as_before(strtod(text, NULL));
        n++;
    }
    for (int k = 4; k <= 25; k++) { /* exact ties of the 17-digit rounding */
        /* a / 2^k (a odd) has k places and ends in 5; in [10^(17-k),
         * 10^(18-k)) that is 18 significant digits: the 17-digit rounding
         * is exactly half-way, and printf rounds it to even */
        uint64_t lo = 1, hi;
        for (int j = 0; j < k; j++)
            lo *= 2;
        hi = lo;
        if (k <= 17) {
            for (int j = 0; j < 17 - k; j++)
                lo *= 10;
            hi = lo * 10;
        } else {
            uint64_t p = 1;
            for (int j = 0; j < k - 17; j++)
                p *= 10;
            lo = (lo + p - 1) / p;
            hi = hi * 10 / p;
        }
        for (int i = 0; i < 2000 && hi > lo + 1; i++) {
            uint64_t a = (lo + next_bits(&st) % (hi - lo)) | 1;
            if (a >= hi || a >= (UINT64_C(1) << 53))
                continue;
            double x = ldexp((double)a, -k);
            assert_as_before(x);
            n++;
        }
    }
    static const char *const nines[] = {"9.9999999999999995",    "9.99999999999999949",
                                        "0.99999999999999994",   "999999999999999.5",
                                        "99999.999999999995",    "9.999999999999995e-5",
                                        "9.9999999999999995e22", "1e-5",
                                        "9.9999999999999e-5",    "0.0001"};
    for (size_t i = 0; i < sizeof nines / sizeof *nines; i++) {
        double x = strtod(nines[i], NULL);
        for (int k = -3; k <= 3; k++) {
            double y = x; /* k representable doubles away from x */
            for (int j = 0; j < abs(k); j++)
                y = nextafter(y, k < 0 ? 0 : INFINITY);
            assert_as_before(y);
            n++;
        }
    }
    assert_true(n > (size_t)tu_rounds(540000));
}

static void test_totals_text_equals_tree(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 200; seed++) {
        am_totals t;
        fill(&t, seed, (int)(seed % (AM_RECALL_MAX_K + 1)), seed % (AM_TERMS_MAX_WINDOWS + 1));
        json_t *tree = am_json_totals_raw(&t);
        char *want = am_json_dump(tree);
        char *got = am_json_totals_text(&t);
        assert_string_equal(got, want);
        free(got);
        free(want);
        json_decref(tree);
    }
    am_totals z;
    memset(&z, 0, sizeof z);
    json_t *tree = am_json_totals_raw(&z);
    char *want = am_json_dump(tree);
    char *got = am_json_totals_text(&z);
    assert_string_equal(got, want);
    free(got);
    free(want);
    json_decref(tree);
}

/* The answer as ingest.c built it before am_json_answer (caller frees). */
static char *answer_tree(const am_scorer *sc, const am_seg_result *res, const char *const *names,
                         const am_totals *tot, int64_t seq)
{
    json_t *scores = am_json_segment(sc, res, names);
    json_t *totals = json_object();
    for (size_t k = 0; k < res->nsys; k++)
        json_object_set_new(totals, names[k], am_json_totals(sc, &tot[k]));
    json_t *r =
        json_pack("{sssssIsssoso}", "session", "s\"1", "id", "seg/é", "seq", (json_int_t)seq,
                  "signature", am_scorer_signature(sc), "scores", scores, "totals", totals);
    json_object_set_new(r, "created_ms", json_integer(1700000000123));
    json_object_set_new(r, "glossary_version", json_integer(3));
    char *txt = am_json_dump(r);
    json_decref(r);
    return txt;
}

/* Every TICO-19 dev segment scored with the TICO-19 glossary for three
 * systems names[0..3), recall k and windows as given: the direct answer
 * equals the tree's dump. */
static void answer_case(const char *k_opt, const char *windows, const char *const *names)
{
    am_sgml_doc ref, hyp, src;
    am_gloss g;
    tu_tico_docs(&ref, &hyp, &src, &g);
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "source_lang", "en", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "k", k_opt, NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "windows", windows, NULL), AM_OK);
    am_scorer *sc = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, &g, NULL, &sc, NULL), AM_OK);
    am_score_ws *ws = am_score_ws_new();
    am_vocab *hist = am_vocab_new();
    am_totals tot[3];
    for (size_t k = 0; k < 3; k++)
        am_totals_init(&tot[k], sc);
    size_t with_terms = 0, n = 0;
    for (size_t i = 0; i < ref.nsegs; i++) {
        size_t j = am_sgml_find_seg(&hyp, ref.segs[i].id);
        assert_true(j != (size_t)-1);
        /* the system output, the reference itself, and an empty hypothesis
         * every 7th segment (else the next segment's reference) */
        const char *h[3] = {hyp.segs[j].text, ref.segs[i].text,
                            i % 7 == 0 || i + 1 == ref.nsegs ? "" : ref.segs[i + 1].text};
        am_seg_input in = {.source = src.segs[i].text,
                           .translation = i % 50 == 0 ? "" : ref.segs[i].text,
                           .hyps = h,
                           .nsys = 3,
                           .max_term_occurrences = 1000};
        am_seg_result res;
        assert_int_equal(am_score_segment(sc, ws, &in, am_recall_vocab_lookup, hist, &res, NULL),
                         AM_OK);
        if (res.sys[0].terms && res.sys[0].terms->n_inst)
            with_terms++;
        for (size_t k = 0; k < 3; k++)
            am_totals_add(&tot[k], &res.sys[k]);
        char *want = answer_tree(sc, &res, names, tot, (int64_t)i + 1);
        char *got = am_json_answer(&res, names, tot, "s\"1", "seg/é", (int64_t)i + 1,
                                   am_scorer_signature(sc), 1700000000123, 3);
        assert_string_equal(got, want);
        free(got);
        free(want);
        am_recall_seg_commit(res.recall, hist);
        n++;
    }
    assert_true(n > 900);
    assert_true(with_terms > 100);
    am_vocab_free(hist);
    am_score_ws_free(ws);
    am_scorer_free(sc);
    am_gloss_cleanup(&g);
    am_sgml_free(&ref);
    am_sgml_free(&hyp);
    am_sgml_free(&src);
}

/* Names out of order, one needing escapes, k = 11 (keys r10, r11 sort
 * before r2), windows 10 and 2 (sorted as strings): objects the writer
 * rewrites in key order (json_answer.c am_jw_sort). */
static void test_answer_equals_tree(void **state)
{
    (void)state;
    const char *names[3] = {"zeta", "alpha", "q\"uote\\d"};
    answer_case("11", "10,2", names);
}

/* Names in order, a one-digit k, windows in string order: every object
 * comes in key order and is written once (no rewrite); the same bytes. */
static void test_answer_in_order_equals_tree(void **state)
{
    (void)state;
    const char *names[3] = {"alpha", "base", "good"};
    answer_case("4", "2,5", names);
}

/* am_buf_appendc's fast path and am_buf_reserve keep the buffer a
 * NUL-terminated copy of what was appended, across growth. */
static void test_buf_appendc_reserve(void **state)
{
    (void)state;
    am_buf b;
    am_buf_init(&b);
    char want[5000];
    for (size_t i = 0; i < sizeof want - 1; i++) {
        want[i] = (char)('a' + i % 26);
        am_buf_appendc(&b, want[i]);
        assert_int_equal(b.len, i + 1);
        assert_int_equal(b.data[b.len], '\0');
        if (i == 100)
            am_buf_reserve(&b, 3000);
        if (i == 100)
            assert_true(b.cap > 3000);
    }
    want[sizeof want - 1] = '\0';
    assert_string_equal(am_buf_str(&b), want);
    am_buf_reserve(&b, 10); /* smaller than the length: nothing changes */
    assert_string_equal(am_buf_str(&b), want);
    am_buf_cleanup(&b);
}

/* A random JSON value of depth at most depth (new reference): objects with
 * keys in random order (some sharing prefixes), arrays, strings with
 * control characters, quotes, backslashes, slashes and multi-byte UTF-8,
 * integers of every size, booleans and null; reals only with reals set. */
static json_t *random_value(uint64_t *st, int depth, int reals)
{
    static const char *const pieces[] = {"a",    "ab",   "Z", "\"", "\\",   "/", "\n", "\t", "\x01",
                                         "\x1f", "\x7f", "é", "€",  "日本", "𝄞", " ",  "id", "0"};
    int kind = (int)(next_bits(st) % (depth > 0 ? 8 : 6));
    char text[256];
    size_t len = 0;
    switch (kind) {
    case 0: return json_null();
    case 1: return json_boolean(next_bits(st) % 2);
    case 2: return json_integer((json_int_t)next_bits(st) >> (next_bits(st) % 64));
    case 3: return json_integer(-(json_int_t)(next_bits(st) % 100000));
    case 4:
        if (reals) {
            uint64_t bits = next_bits(st) & 0x7fefffffffffffffu;
            double x;
            memcpy(&x, &bits, sizeof x);
            return json_real(next_bits(st) % 2 ? x : (double)(next_bits(st) % 1000) / 7);
        }
        /* fall through */
    case 5:
        for (int k = (int)(next_bits(st) % 8); k > 0; k--) {
            const char *p = pieces[next_bits(st) % (sizeof pieces / sizeof *pieces)];
            if (len + strlen(p) < sizeof text) {
                memcpy(text + len, p, strlen(p));
                len += strlen(p);
            }
        }
        return json_stringn(text, len);
    case 6: {
        json_t *a = json_array();
        for (int k = (int)(next_bits(st) % 5); k > 0; k--)
            json_array_append_new(a, random_value(st, depth - 1, reals));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (int k = (int)(next_bits(st) % 7); k > 0; k--) {
            char key[32];
            snprintf(key, sizeof key, "%s%u", pieces[next_bits(st) % 6],
                     (unsigned)(next_bits(st) % 12));
            json_object_set_new(o, key, random_value(st, depth - 1, reals));
        }
        return o;
    }
    }
}

/* The canonical form of a request (am_json_canonical) is jansson's
 * json_dumps with sorted keys and 17-digit reals, byte for byte, with and
 * without reals in the value: stored requests were written that way, and
 * a re-post is compared with them. */
static void test_canonical_is_janssons(void **state)
{
    (void)state;
    uint64_t st = 0x2545f4914f6cdd1du;
    size_t n = 0, with_reals = 0;
    for (int i = 0; i < 20000; i++) {
        int reals = i % 4 == 0;
        json_t *j = json_object(); /* a body: an object */
        for (int k = (int)(next_bits(&st) % 6); k >= 0; k--) {
            char key[16];
            snprintf(key, sizeof key, "k%u", (unsigned)(next_bits(&st) % 9));
            json_object_set_new(j, key, random_value(&st, 4, reals));
        }
        char *want = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
        char *got = am_json_canonical(j);
        assert_non_null(got);
        assert_string_equal(got, want);
        with_reals += strchr(want, '.') || strchr(want, 'e');
        n++;
        free(want);
        free(got);
        json_decref(j);
    }
    assert_null(am_json_canonical(NULL));
    assert_true(n == 20000 && with_reals > 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_appendc_reserve),
        cmocka_unit_test(test_reals),
        cmocka_unit_test(test_reals_as_before),
        cmocka_unit_test(test_reals_shortest_as_printf),
        cmocka_unit_test(test_totals_text_equals_tree),
        cmocka_unit_test(test_answer_equals_tree),
        cmocka_unit_test(test_answer_in_order_equals_tree),
        cmocka_unit_test(test_canonical_is_janssons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
