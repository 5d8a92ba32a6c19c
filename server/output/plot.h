/*
 * plot.h — a self-contained SVG figure of learning curves: one panel per
 * metric (R0, R1, R0+1, term metrics…) over the segment number, one series
 * per system, optionally with a confidence band per series.
 *
 * Made for print: black on white, no colours needed (each system has its
 * own grey level, dash pattern and marker shape), generic font family only
 * (no external fonts, scripts or links), a title, axes with ticks and a
 * legend. Shared by `adaptmon score --plot` and GET …/plot.svg.
 *
 * Machine-readable too: every series is a <g class="series"
 * data-system=… data-metric=…> carrying data-x and data-y (the values, %.17g,
 * "null" for a gap, space-separated) and a <polyline> through its finite
 * points; a band is a <polygon class="ci"> with data-lo / data-hi.
 */
#ifndef AM_PLOT_H
#define AM_PLOT_H

#include "am.h"

#include <stddef.h>

typedef struct am_plot_series {
    const char *name; /* the system (borrowed) */
    const double *y; /* n values; NAN: no value (a gap) (borrowed) */
    const double *lo, *hi; /* n confidence bounds, or NULL: no band (borrowed) */
} am_plot_series;

typedef struct am_plot_panel {
    const char *key; /* metric key, e.g. "r0" (data-metric) */
    const char *title; /* e.g. "R0" */
    double ymin, ymax; /* the axis spans at least this range */
} am_plot_panel;

typedef struct am_plot {
    const char *title;
    const char *xlabel;
    const double *x; /* n segment numbers, ascending (borrowed) */
    size_t n;
    const am_plot_panel *panels;
    size_t npanels;
    const am_plot_series *series; /* npanels × nsys, panel-major (borrowed) */
    size_t nsys;
} am_plot;

/* Appends the figure as an SVG document to out. */
void am_plot_svg(const am_plot *p, am_buf *out);

/* The Wilson score interval (95%) of hits out of total, clipped into
 * [0, 1]: the band of a ratio curve (docs/metrics.md §4). NAN, NAN when
 * total is 0. */
void am_plot_wilson(double hits, double total, double *lo, double *hi);

#endif
