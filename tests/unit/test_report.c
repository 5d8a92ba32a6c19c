/* test_report.c — the table model and its renderers (report.h: cells of
 * every kind in every format, columns added after rows, escaping) and the
 * SVG writer (plot.h: a series per system, confidence bands from a
 * per-point CI array given by the caller, gaps). */
#include "testutil.h"

#include "plot.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A report with one row per kind of cell. */
static void sample(am_report *r)
{
    am_report_init(r);
    size_t row = am_report_row(r);
    am_report_text(r, row, am_report_col(r, "system", NULL), "a,\"b\"");
    am_report_ratio(r, row, am_report_col(r, "r0", "R0"), 1, 3);
    am_report_real(r, row, am_report_col(r, "bleu", "BLEU"), 12.345678);
    am_report_int(r, row, am_report_col(r, "n", NULL), 7);
    row = am_report_row(r);
    am_report_text(r, row, 0, "b_c&d");
    am_report_ratio(r, row, 1, 0, 0); /* null */
    am_report_real(r, row, 2, NAN);
    /* a column added after the rows: a CI, as significance results come */
    am_report_interval(r, 0, am_report_col(r, "bleu_ci", "BLEU 95% CI"), 10.5, 14.25);
    am_report_note(r, "sacrebleu-bleu", "nrefs:1|case:mixed");
}

static char *render(const am_report *r, enum am_rp_format f, int prec)
{
    am_buf b;
    am_buf_init(&b);
    am_report_render(r, f, prec, &b);
    return am_buf_detach(&b);
}

/* CSV/TSV numbers are the shortest text that reads back (core/realfmt):
 * 12.345678, not %.17g's 12.345677999999999. */
static void test_csv_full_precision_and_spans(void **state)
{
    (void)state;
    am_report r;
    sample(&r);
    char *s = render(&r, AM_RP_CSV, 2);
    assert_string_equal(s, "system,r0,r0_hits,r0_total,bleu,n,bleu_ci_lo,bleu_ci_hi\n"
                           "\"a,\"\"b\"\"\",0.3333333333333333,1,3,12.345678,7,10.5,"
                           "14.25\n"
                           "b_c&d,,0,0,,,,\n");
    free(s);
    s = render(&r, AM_RP_TSV, 2);
    assert_non_null(strstr(s, "system\tr0\tr0_hits"));
    assert_non_null(strstr(s, "a,\"b\"\t0.3333333333333333\t1\t3"));
    free(s);
    am_report_cleanup(&r);
}

static void test_tables_one_precision(void **state)
{
    (void)state;
    am_report r;
    sample(&r);
    char *s = render(&r, AM_RP_TABLE, 2);
    assert_non_null(strstr(s, "sacrebleu-bleu: nrefs:1|case:mixed\n\n"));
    assert_non_null(strstr(s, "0.33 (1/3)"));
    assert_non_null(strstr(s, "12.35"));
    assert_non_null(strstr(s, "[10.50, 14.25]"));
    assert_non_null(strstr(s, "null (0/0)"));
    free(s);
    s = render(&r, AM_RP_MARKDOWN, 3);
    assert_non_null(strstr(s, "| system | R0 | BLEU | n | BLEU 95% CI |\n"
                              "| --- | ---: | ---: | ---: | ---: |\n"
                              "| a,\"b\" | 0.333 | 12.346 | 7 | [10.500, 14.250] |\n"));
    assert_non_null(strstr(s, "- `sacrebleu-bleu: nrefs:1|case:mixed`"));
    free(s);
    s = render(&r, AM_RP_LATEX, 1);
    assert_non_null(strstr(s, "% sacrebleu-bleu: nrefs:1|case:mixed\n\\begin{tabular}{lrrrr}"));
    assert_non_null(strstr(s, "system & R0 & BLEU & n & BLEU 95\\% CI \\\\"));
    assert_non_null(strstr(s, "b\\_c\\&d & null & null &  &  \\\\"));
    free(s);
    am_report_cleanup(&r);
}

static void test_json(void **state)
{
    (void)state;
    am_report r;
    sample(&r);
    char *s = render(&r, AM_RP_JSON, 2);
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    assert_non_null(j);
    json_t *row = json_array_get(json_object_get(j, "rows"), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(row, "r0"), "hits")), 1);
    assert_true(json_real_value(json_object_get(json_object_get(row, "r0"), "score")) == 1.0 / 3);
    assert_true(json_real_value(json_object_get(row, "bleu")) == 12.345678);
    assert_true(
        json_is_null(json_object_get(json_array_get(json_object_get(j, "rows"), 1), "bleu")));
    assert_int_equal(json_array_size(json_object_get(j, "columns")), 5);
    json_decref(j);
    free(s);
    enum am_rp_format f;
    assert_int_equal(am_report_format_parse("md", &f), AM_OK);
    assert_int_equal(f, AM_RP_MARKDOWN);
    assert_int_equal(am_report_format_parse("xml", &f), AM_ERR_INVALID);
    am_report_cleanup(&r);
}

static void test_many_columns_and_rows(void **state)
{
    (void)state;
    am_report r;
    am_report_init(&r);
    for (int i = 0; i < 100; i++) {
        size_t row = am_report_row(&r);
        for (int k = 0; k < 40; k++) {
            char key[16];
            snprintf(key, sizeof key, "c%d", k);
            am_report_int(&r, row, am_report_col(&r, key, NULL), i * 100 + k);
        }
    }
    assert_int_equal(r.ncols, 40);
    /* a later producer finds a row by a text key and adds a column */
    size_t sys = am_report_col(&r, "system", NULL);
    am_report_text(&r, 42, sys, "adaptive");
    assert_int_equal(am_report_find(&r, "system", "adaptive"), 42);
    assert_int_equal(am_report_find(&r, "system", "none"), (size_t)-1);
    assert_int_equal(am_report_find(&r, "nokey", "adaptive"), (size_t)-1);
    am_report_real(&r, 42, am_report_col(&r, "p", "p-value"), 0.001);
    assert_true(am_report_cell(&r, 42, 41)->x == 0.001);
    assert_int_equal(am_report_cell(&r, 99, 39)->i, 9939);
    assert_int_equal(am_report_cell(&r, 3, 17)->i, 317);
    am_report_cleanup(&r);
}

static void test_declared_kinds_and_widening(void **state)
{
    (void)state;
    am_report r;
    am_report_init(&r);
    am_report_col_kind(&r, "r0", "R0", AM_RP_RATIO);
    am_report_col_kind(&r, "ci", NULL, AM_RP_INTERVAL);
    char *s = render(&r, AM_RP_CSV, 2);
    assert_string_equal(s, "r0,r0_hits,r0_total,ci_lo,ci_hi\n"); /* no rows, same header */
    free(s);
    /* a real first, a ratio later: the column takes the ratio's three fields */
    size_t x = am_report_col(&r, "x", NULL);
    am_report_real(&r, am_report_row(&r), x, 0.5);
    am_report_ratio(&r, am_report_row(&r), x, 1, 2);
    s = render(&r, AM_RP_CSV, 2);
    assert_string_equal(s, "r0,r0_hits,r0_total,ci_lo,ci_hi,x,x_hits,x_total\n"
                           ",,,,,0.5,,\n"
                           ",,,,,0.5,1,2\n");
    free(s);
    am_report_cleanup(&r);
}

/* Text between `after` and the next '"' of the n-th element that has
 * `after` in s (malloc'd), or NULL. */
static char *attr(const char *s, const char *after, int n)
{
    const char *p = s;
    for (int i = 0; i <= n; i++) {
        p = strstr(p, after);
        if (!p)
            return NULL;
        p += strlen(after);
    }
    const char *q = strchr(p, '"');
    return strndup(p, (size_t)(q - p));
}

static void test_plot_bands_from_given_ci(void **state)
{
    (void)state;
    double x[4] = {1, 2, 3, 4};
    double y0[4] = {0.5, 0.25, NAN, 0.75}, lo0[4] = {0.4, 0.125, NAN, 0.5},
           hi0[4] = {0.6, 0.5, NAN, 1};
    double y1[4] = {0.1, 0.2, 0.3, 0.4};
    am_plot_panel panel = {"r0", "R0 <&>", 0, 1};
    am_plot_series ser[2] = {{"base", y0, lo0, hi0}, {"a&b", y1, NULL, NULL}};
    am_plot p = {"title", "segment", x, 4, &panel, 1, ser, 2};
    am_buf b;
    am_buf_init(&b);
    am_plot_svg(&p, &b);
    const char *s = am_buf_str(&b);
    assert_non_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(s, "R0 &lt;&amp;&gt;"));
    assert_non_null(strstr(s, "data-system=\"a&amp;b\""));
    /* one band: the first series', with the given bounds; a gap stays a gap */
    assert_non_null(strstr(s, "<polygon class=\"ci\""));
    assert_null(strstr(strstr(s, "<polygon class=\"ci\"") + 1, "<polygon class=\"ci\""));
    char *lo = attr(s, "data-lo=\"", 0), *hi = attr(s, "data-hi=\"", 0);
    /* the shortest text that reads back (core/realfmt), not %.17g's */
    assert_string_equal(lo, "0.4 0.125 null 0.5");
    assert_string_equal(hi, "0.6 0.5 null 1");
    char *ys = attr(s, "data-y=\"", 0);
    assert_string_equal(ys, "0.5 0.25 null 0.75");
    /* the band's polygon has 2 × 3 finite points */
    char *pts = attr(strstr(s, "<polygon class=\"ci\""), "points=\"", 0);
    int commas = 0;
    for (const char *c = pts; *c; c++)
        commas += *c == ',';
    assert_int_equal(commas, 6);
    /* two styles: a dash pattern only for the second system */
    assert_non_null(strstr(s, "stroke-dasharray=\"6,3\""));
    free(lo);
    free(hi);
    free(ys);
    free(pts);
    am_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_full_precision_and_spans),
        cmocka_unit_test(test_tables_one_precision),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_many_columns_and_rows),
        cmocka_unit_test(test_declared_kinds_and_widening),
        cmocka_unit_test(test_plot_bands_from_given_ci),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
