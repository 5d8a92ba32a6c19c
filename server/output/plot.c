/* plot.c — the SVG writer of plot.h: panels in two columns, nice ticks,
 * one grey level + dash pattern + marker shape per system. */
#include "plot.h"
#include "realfmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define AM_PL_W 380.0 /* panel width incl. margins */
#define AM_PL_H 250.0 /* panel height incl. margins */
#define AM_PL_ML 52.0 /* left margin (y tick labels) */
#define AM_PL_MR 14.0
#define AM_PL_MT 28.0 /* panel title */
#define AM_PL_MB 40.0 /* x tick labels and label */
#define AM_PL_TOP 40.0 /* figure title */
#define AM_PL_LEGEND 22.0 /* per legend row */
#define AM_PL_MARKERS 10 /* markers per series, at most */

static const char *const am_pl_dash[] = {"none", "6,3", "2,2", "8,3,2,3", "1,3", "10,4"};
static const char *const am_pl_grey[] = {"#000000", "#555555", "#000000",
                                         "#333333", "#777777", "#222222"};
#define AM_PL_STYLES 6

/* The marker shape of system s: shifted by one every AM_PL_STYLES systems,
 * so that (line style, shape) pairs stay distinct up to 36 systems. */
static int am_pl_shape(size_t s)
{
    return (int)((s + s / AM_PL_STYLES) % AM_PL_STYLES);
}

/* Text with XML's special characters escaped. */
static void am_pl_text(am_buf *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': am_buf_appends(out, "&lt;"); break;
        case '>': am_buf_appends(out, "&gt;"); break;
        case '&': am_buf_appends(out, "&amp;"); break;
        case '"': am_buf_appends(out, "&quot;"); break;
        default: am_buf_appendc(out, *s);
        }
    }
}

/* A nice tick step for a range over about `want` intervals (1, 2, 5 × 10^k). */
static double am_pl_step(double range, int want)
{
    if (!(range > 0))
        return 1;
    double raw = range / want, mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* The y range of panel k: its own range widened to the data and bands. */
static void am_pl_yrange(const am_plot *p, size_t k, double *lo, double *hi)
{
    *lo = p->panels[k].ymin;
    *hi = p->panels[k].ymax;
    for (size_t s = 0; s < p->nsys; s++) {
        const am_plot_series *se = &p->series[k * p->nsys + s];
        for (size_t i = 0; i < p->n; i++) {
            double v[3] = {se->y[i], se->lo ? se->lo[i] : NAN, se->hi ? se->hi[i] : NAN};
            for (int j = 0; j < 3; j++)
                if (isfinite(v[j])) {
                    *lo = v[j] < *lo ? v[j] : *lo;
                    *hi = v[j] > *hi ? v[j] : *hi;
                }
        }
    }
    if (!(*hi > *lo))
        *hi = *lo + 1;
}

typedef struct am_pl_box {
    double x0, y0, w, h; /* plot area in pixels */
    double xa, xb, ya, yb; /* data ranges */
} am_pl_box;

static double am_pl_px(const am_pl_box *b, double x)
{
    return b->x0 + (b->xb > b->xa ? (x - b->xa) / (b->xb - b->xa) : 0.5) * b->w;
}

static double am_pl_py(const am_pl_box *b, double y)
{
    return b->y0 + b->h - (y - b->ya) / (b->yb - b->ya) * b->h;
}

/* Marker shape s at (x, y): circle, square, triangle, diamond, cross, plus. */
static void am_pl_marker(am_buf *out, int s, double x, double y, const char *grey)
{
    const double r = 3.5;
    switch (s % AM_PL_STYLES) {
    case 0:
        am_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>", x, y, r,
                      grey);
        break;
    case 1:
        am_buf_printf(out,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"white\" "
                      "stroke=\"%s\"/>",
                      x - r, y - r, 2 * r, 2 * r, grey);
        break;
    case 2:
        am_buf_printf(out, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\"/>", x, y - r,
                      x + r, y + r, x - r, y + r, grey);
        break;
    case 3:
        am_buf_printf(out,
                      "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"white\" "
                      "stroke=\"%s\"/>",
                      x, y - r, x + r, y, x, y + r, x - r, y, grey);
        break;
    case 4:
        am_buf_printf(out,
                      "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
                      "stroke-width=\"1.5\"/>",
                      x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r, grey);
        break;
    default:
        am_buf_printf(out,
                      "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" "
                      "stroke-width=\"1.5\"/>",
                      x - r, y, x + r, y, x, y - r, x, y + r, grey);
    }
}

/* Space-separated values (the shortest text that reads back, core/realfmt;
 * "null" for non-finite) as an attribute. */
static void am_pl_values(am_buf *out, const char *attr, const double *v, size_t n)
{
    am_buf_printf(out, " %s=\"", attr);
    for (size_t i = 0; i < n; i++) {
        if (i)
            am_buf_appendc(out, ' ');
        if (isfinite(v[i]))
            am_realfmt_buf(out, v[i]);
        else
            am_buf_appends(out, "null");
    }
    am_buf_appendc(out, '"');
}

/* Axes, grid and tick labels of a panel. */
static void am_pl_axes(am_buf *out, const am_plot *p, const am_pl_box *b, const char *title)
{
    am_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">",
                  b->x0 + b->w / 2, b->y0 - 10);
    am_pl_text(out, title);
    am_buf_appends(out, "</text>\n");
    double ys = am_pl_step(b->yb - b->ya, 5);
    for (double t = ceil(b->ya / ys) * ys; t <= b->yb + ys * 1e-9; t += ys) {
        double y = am_pl_py(b, t);
        am_buf_printf(
            out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">%.*f</text>\n",
            b->x0, y, b->x0 + b->w, y, b->x0 - 5, y + 3.5, ys < 0.1 ? 2 : 1,
            fabs(t) < ys * 1e-9 ? 0.0 : t);
    }
    double xs = am_pl_step(b->xb - b->xa, 5);
    if (xs < 1)
        xs = 1;
    for (double t = ceil(b->xa / xs) * xs; t <= b->xb + xs * 1e-9; t += xs) {
        double x = am_pl_px(b, t);
        am_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">%.0f"
                      "</text>\n",
                      x, b->y0 + b->h, x, b->y0 + b->h + 4, x, b->y0 + b->h + 15, t);
    }
    am_buf_printf(out,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"#000000\"/>\n",
                  b->x0, b->y0, b->w, b->h);
    am_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">",
                  b->x0 + b->w / 2, b->y0 + b->h + 30);
    am_pl_text(out, p->xlabel ? p->xlabel : "segment");
    am_buf_appends(out, "</text>\n");
}

/* The confidence band of a series (finite points only). */
static void am_pl_band(am_buf *out, const am_plot *p, const am_pl_box *b, const am_plot_series *se)
{
    am_buf_appends(out, "<polygon class=\"ci\" fill=\"#000000\" fill-opacity=\"0.12\" "
                        "stroke=\"none\"");
    am_pl_values(out, "data-lo", se->lo, p->n);
    am_pl_values(out, "data-hi", se->hi, p->n);
    am_buf_appends(out, " points=\"");
    for (size_t i = 0; i < p->n; i++)
        if (isfinite(se->lo[i]) && isfinite(se->hi[i]))
            am_buf_printf(out, "%.1f,%.1f ", am_pl_px(b, p->x[i]), am_pl_py(b, se->hi[i]));
    for (size_t i = p->n; i-- > 0;)
        if (isfinite(se->lo[i]) && isfinite(se->hi[i]))
            am_buf_printf(out, "%.1f,%.1f ", am_pl_px(b, p->x[i]), am_pl_py(b, se->lo[i]));
    am_buf_appends(out, "\"/>\n");
}

/* One series: its group with the data, the line and the markers. */
static void am_pl_series(am_buf *out, const am_plot *p, const am_pl_box *b, size_t k, size_t s)
{
    const am_plot_series *se = &p->series[k * p->nsys + s];
    const char *grey = am_pl_grey[s % AM_PL_STYLES];
    am_buf_appends(out, "<g class=\"series\" data-system=\"");
    am_pl_text(out, se->name);
    am_buf_appends(out, "\" data-metric=\"");
    am_pl_text(out, p->panels[k].key);
    am_buf_appendc(out, '"');
    am_pl_values(out, "data-x", p->x, p->n);
    am_pl_values(out, "data-y", se->y, p->n);
    am_buf_appends(out, ">\n");
    if (se->lo && se->hi)
        am_pl_band(out, p, b, se);
    am_buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.4\"", grey);
    if (strcmp(am_pl_dash[s % AM_PL_STYLES], "none"))
        am_buf_printf(out, " stroke-dasharray=\"%s\"", am_pl_dash[s % AM_PL_STYLES]);
    am_buf_appends(out, " points=\"");
    for (size_t i = 0; i < p->n; i++)
        if (isfinite(se->y[i]))
            am_buf_printf(out, "%.1f,%.1f ", am_pl_px(b, p->x[i]), am_pl_py(b, se->y[i]));
    am_buf_appends(out, "\"/>\n");
    size_t every = p->n > AM_PL_MARKERS ? (p->n + AM_PL_MARKERS - 1) / AM_PL_MARKERS : 1;
    /* staggered per system so that markers of equal curves stay apart */
    for (size_t i = (s * every) / (p->nsys ? p->nsys : 1) % every; i < p->n; i += every)
        if (isfinite(se->y[i]))
            am_pl_marker(out, am_pl_shape(s), am_pl_px(b, p->x[i]), am_pl_py(b, se->y[i]), grey);
    am_buf_appends(out, "\n</g>\n");
}

static void am_pl_legend(am_buf *out, const am_plot *p, double y0, double width)
{
    double x = 20, y = y0;
    for (size_t s = 0; s < p->nsys; s++) {
        const char *name = p->series[s].name;
        double w = 60 + 7.0 * (double)strlen(name ? name : "");
        if (x + w > width - 10 && x > 20) {
            x = 20;
            y += AM_PL_LEGEND;
        }
        const char *grey = am_pl_grey[s % AM_PL_STYLES];
        am_buf_printf(out,
                      "<g class=\"legend\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"%s\" stroke-width=\"1.4\"",
                      x, y, x + 36, y, grey);
        if (strcmp(am_pl_dash[s % AM_PL_STYLES], "none"))
            am_buf_printf(out, " stroke-dasharray=\"%s\"", am_pl_dash[s % AM_PL_STYLES]);
        am_buf_appends(out, "/>");
        am_pl_marker(out, am_pl_shape(s), x + 18, y, grey);
        am_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", x + 42, y + 4);
        am_pl_text(out, name);
        am_buf_appends(out, "</text></g>\n");
        x += w;
    }
}

void am_plot_svg(const am_plot *p, am_buf *out)
{
    size_t cols = p->npanels > 1 ? 2 : 1, rows = (p->npanels + cols - 1) / cols;
    double width = AM_PL_W * (double)cols;
    /* legend rows: estimated as am_pl_legend wraps */
    double lx = 20, lrows = 1;
    for (size_t s = 0; s < p->nsys; s++) {
        double w = 60 + 7.0 * (double)strlen(p->series[s].name ? p->series[s].name : "");
        if (lx + w > width - 10 && lx > 20) {
            lx = 20;
            lrows++;
        }
        lx += w;
    }
    double top = AM_PL_TOP + lrows * AM_PL_LEGEND;
    double height = top + AM_PL_H * (double)rows;
    am_buf_printf(out,
                  "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n<title>",
                  width, height, width, height);
    am_pl_text(out, p->title);
    am_buf_printf(out,
                  "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                  "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" "
                  "font-weight=\"bold\">",
                  width / 2);
    am_pl_text(out, p->title);
    am_buf_appends(out, "</text>\n");
    am_pl_legend(out, p, AM_PL_TOP, width);
    double xa = p->n ? p->x[0] : 0, xb = p->n ? p->x[p->n - 1] : 1;
    for (size_t k = 0; k < p->npanels; k++) {
        am_pl_box b;
        b.x0 = AM_PL_W * (double)(k % cols) + AM_PL_ML;
        b.y0 = top + AM_PL_H * (double)(k / cols) + AM_PL_MT;
        b.w = AM_PL_W - AM_PL_ML - AM_PL_MR;
        b.h = AM_PL_H - AM_PL_MT - AM_PL_MB;
        b.xa = xa;
        b.xb = xb > xa ? xb : xa + 1;
        am_pl_yrange(p, k, &b.ya, &b.yb);
        am_buf_printf(out, "<g class=\"panel\" data-metric=\"");
        am_pl_text(out, p->panels[k].key);
        am_buf_appends(out, "\">\n");
        am_pl_axes(out, p, &b, p->panels[k].title);
        for (size_t s = 0; s < p->nsys; s++)
            am_pl_series(out, p, &b, k, s);
        am_buf_appends(out, "</g>\n");
    }
    am_buf_appends(out, "</svg>\n");
}

void am_plot_wilson(double hits, double total, double *lo, double *hi)
{
    if (!(total > 0)) {
        *lo = *hi = NAN;
        return;
    }
    const double z = 1.959963984540054, z2 = z * z;
    double p = hits / total, den = 1 + z2 / total;
    double mid = (p + z2 / (2 * total)) / den;
    double half = z * sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / den;
    /* the interval holds p; rounding must not put it outside at 0 or 1 */
    *lo = hits <= 0 ? 0 : mid - half < p ? mid - half : p;
    *hi = hits >= total ? 1 : mid + half > p ? mid + half : p;
}
