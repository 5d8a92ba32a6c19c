/* api_plot.c — GET …/plot.svg: the session's learning curves as a
 * self-contained SVG figure (plot.h), drawn from exactly the data of
 * GET …/curve (api_curve.c; same query parameters points, window, wo):
 * one panel per series (R0, R1, R0+1, term exact match, term window
 * overlap, 1 − TERm), one curve per system. Bands are drawn where a curve
 * carries confidence bounds (systems[s].ci[key] = {"lo": [...], "hi":
 * [...]}: with ci=1, the Wilson intervals of the count ratios). Its ETag
 * is the curve's with "-svg". */
#include "api.h"

#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const am_pl_keys[] = {
    "r0", "r1", "r01", "term_exact_match", "window_overlap", "one_minus_term"};
#define AM_PL_NKEYS (sizeof am_pl_keys / sizeof am_pl_keys[0])

/* arr (borrowed) as n doubles into v (null/absent: NAN). */
static void am_pl_array(json_t *arr, size_t n, double *v)
{
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(arr, i);
        v[i] = json_is_number(x) ? json_number_value(x) : NAN;
    }
}

/* The figure of a curve body (borrowed) into out. */
static void am_pl_from_curve(json_t *curve, am_buf *out)
{
    json_t *xs = json_object_get(curve, "x"), *systems = json_object_get(curve, "systems");
    size_t n = json_array_size(xs), nsys = json_object_size(systems);
    int64_t window = json_integer_value(json_object_get(curve, "window"));
    int64_t wo = json_integer_value(json_object_get(curve, "window_overlap_width"));
    char title[160], wo_title[48];
    if (window)
        snprintf(title, sizeof title, "Session %s: moving window of %lld segments",
                 json_string_value(json_object_get(curve, "session")), (long long)window);
    else
        snprintf(title, sizeof title, "Session %s: running values",
                 json_string_value(json_object_get(curve, "session")));
    snprintf(wo_title, sizeof wo_title, "term window overlap (%lld)", (long long)wo);
    am_plot_panel panels[AM_PL_NKEYS] = {{"r0", "R0", 0, 1},
                                         {"r1", "R1", 0, 1},
                                         {"r01", "R0+1", 0, 1},
                                         {"term_exact_match", "term exact match", 0, 1},
                                         {"window_overlap", wo_title, 0, 1},
                                         {"one_minus_term", "1 − TERm", 0, 1}};
    double *x = am_xcalloc(n + 1, sizeof *x);
    am_pl_array(xs, n, x);
    am_plot_series *ser = am_xcalloc(AM_PL_NKEYS * nsys + 1, sizeof *ser);
    double *buf = am_xcalloc(3 * AM_PL_NKEYS * nsys * (n + 1) + 1, sizeof *buf);
    size_t s = 0;
    const char *name;
    json_t *sys;
    json_object_foreach(systems, name, sys)
    {
        json_t *ci = json_object_get(sys, "ci");
        for (size_t k = 0; k < AM_PL_NKEYS; k++) {
            size_t q = k * nsys + s;
            double *y = buf + 3 * q * (n + 1), *lo = y + n + 1, *hi = lo + n + 1;
            am_pl_array(json_object_get(sys, am_pl_keys[k]), n, y);
            json_t *band = json_object_get(ci, am_pl_keys[k]);
            ser[q].name = name;
            ser[q].y = y;
            if (band) {
                am_pl_array(json_object_get(band, "lo"), n, lo);
                am_pl_array(json_object_get(band, "hi"), n, hi);
                ser[q].lo = lo;
                ser[q].hi = hi;
            }
        }
        s++;
    }
    am_plot plot = {title, "segment", x, n, panels, AM_PL_NKEYS, ser, nsys};
    am_plot_svg(&plot, out);
    free(buf);
    free(ser);
    free(x);
}

void am_api_plot(am_req *req, am_resp *resp)
{
    json_t *curve;
    if (!am_api_curve_data(req, resp, "-svg", &curve))
        return;
    am_buf svg;
    am_buf_init(&svg);
    am_pl_from_curve(curve, &svg);
    json_decref(curve);
    size_t len = svg.len;
    am_resp_take(resp, 200, "image/svg+xml", am_buf_detach(&svg), len);
}
