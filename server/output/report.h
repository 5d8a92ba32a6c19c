/*
 * report.h — a small table model (rows × columns of typed cells) and its
 * renderers, for output a paper can use (adaptmon score --format).
 *
 * A report has columns (a machine key and a human label), rows of cells and
 * notes (key: value lines such as the metric signatures). A cell is empty,
 * text, an integer, a real number, a ratio (hits/total: the value is
 * hits/total, null when total is 0) or an interval [lo, hi] (a confidence
 * interval). Producers add columns freely: significance results (Δ to a
 * baseline, a CI, a p-value) are just more columns.
 *
 * Rendering (am_report_render) writes into an am_buf, no I/O:
 *   table     aligned columns, every number with `precision` decimals,
 *             ratios followed by (hits/total), notes above the table;
 *   markdown  a GitHub pipe table with `precision` decimals, notes below
 *             as a list of `key: value` code spans;
 *   latex     a booktabs tabular with `precision` decimals (text escaped),
 *             notes as % comments above;
 *   csv/tsv   one header line of keys then the rows, numbers at full
 *             precision (the shortest text that reads back, core/realfmt), a
 *             ratio as three columns KEY, KEY_hits,
 *             KEY_total, an interval as KEY_lo, KEY_hi; null is an empty
 *             field; notes are not written (they are no rows);
 *   json      {"notes": {...}, "columns": [...], "rows": [{key: value}]}
 *             with full precision; a ratio is {"score", "hits", "total"},
 *             an interval [lo, hi]; null is null.
 * Non-finite reals render as "null" in tables, empty in CSV, null in JSON.
 */
#ifndef AM_REPORT_H
#define AM_REPORT_H

#include "am.h"

#include <stdint.h>

enum am_rp_kind { AM_RP_EMPTY = 0, AM_RP_TEXT, AM_RP_INT, AM_RP_REAL, AM_RP_RATIO, AM_RP_INTERVAL };

enum am_rp_format {
    AM_RP_TABLE = 0,
    AM_RP_JSON,
    AM_RP_CSV,
    AM_RP_TSV,
    AM_RP_MARKDOWN,
    AM_RP_LATEX
};

typedef struct am_rp_cell {
    enum am_rp_kind kind;
    char *text; /* AM_RP_TEXT, owned */
    int64_t i, hits, total; /* AM_RP_INT; AM_RP_RATIO */
    double x, lo, hi; /* AM_RP_REAL; AM_RP_INTERVAL */
} am_rp_cell;

typedef struct am_rp_col {
    char *key; /* machine name: CSV header, JSON key (owned) */
    char *label; /* human name: table, markdown, LaTeX header (owned) */
    enum am_rp_kind kind; /* declared, else the kind of its first cell set */
} am_rp_col;

typedef struct am_report {
    am_rp_col *cols;
    size_t ncols, capcols;
    am_rp_cell *cells; /* nrows × capcols, row-major; grows with columns */
    size_t nrows, caprows;
    char **notes; /* pairs key, value (owned) */
    size_t nnotes;
} am_report;

void am_report_init(am_report *r);
void am_report_cleanup(am_report *r);
/* The index of column key, added (with label; NULL: the key) when new. */
size_t am_report_col(am_report *r, const char *key, const char *label);
/* am_report_col that also declares the column's kind (its CSV fields and
 * alignment do not then depend on the rows: a report without rows has the
 * same header). */
size_t am_report_col_kind(am_report *r, const char *key, const char *label, enum am_rp_kind kind);
/* Appends an empty row; returns its index. */
size_t am_report_row(am_report *r);
/* Cell setters (row and column must exist; text is copied). */
void am_report_text(am_report *r, size_t row, size_t col, const char *text);
void am_report_int(am_report *r, size_t row, size_t col, int64_t v);
void am_report_real(am_report *r, size_t row, size_t col, double v);
void am_report_ratio(am_report *r, size_t row, size_t col, int64_t hits, int64_t total);
void am_report_interval(am_report *r, size_t row, size_t col, double lo, double hi);
/* Adds a note (key and value copied). */
void am_report_note(am_report *r, const char *key, const char *value);
/* The first row whose text cell in column key equals text, or (size_t)-1:
 * how a later producer (significance: Δ, CI, p) finds a system's row to
 * add its columns to. */
size_t am_report_find(const am_report *r, const char *key, const char *text);
/* The cell at row, col (borrowed). */
const am_rp_cell *am_report_cell(const am_report *r, size_t row, size_t col);

/* Parses "table", "json", "csv", "tsv", "markdown" (or "md"), "latex"
 * (or "tex"). Returns AM_OK or AM_ERR_INVALID. */
int am_report_format_parse(const char *s, enum am_rp_format *out);
/* Appends the report in format fmt to out; precision (0..17) is the number
 * of decimals of table, markdown and LaTeX numbers. */
void am_report_render(const am_report *r, enum am_rp_format fmt, int precision, am_buf *out);

#endif
