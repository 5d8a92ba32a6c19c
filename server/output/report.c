/* report.c — the table model of report.h and its six renderers. */
#include "report.h"
#include "realfmt.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void am_report_init(am_report *r)
{
    memset(r, 0, sizeof *r);
}

static void am_rp_cell_clear(am_rp_cell *c)
{
    free(c->text);
    memset(c, 0, sizeof *c);
}

void am_report_cleanup(am_report *r)
{
    for (size_t i = 0; i < r->nrows * r->capcols; i++)
        free(r->cells[i].text);
    for (size_t i = 0; i < r->ncols; i++) {
        free(r->cols[i].key);
        free(r->cols[i].label);
    }
    for (size_t i = 0; i < 2 * r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r->cols);
    free(r->cells);
    memset(r, 0, sizeof *r);
}

/* Grows the column capacity, re-laying out the cells (row-major). */
static void am_rp_grow_cols(am_report *r)
{
    size_t cap = r->capcols ? r->capcols * 2 : 16;
    r->cols = am_xrealloc(r->cols, cap * sizeof *r->cols);
    am_rp_cell *cells = am_xcalloc(r->caprows ? r->caprows * cap : 1, sizeof *cells);
    for (size_t i = 0; i < r->nrows; i++)
        for (size_t j = 0; j < r->ncols; j++)
            cells[i * cap + j] = r->cells[i * r->capcols + j];
    free(r->cells);
    r->cells = cells;
    r->capcols = cap;
}

size_t am_report_col(am_report *r, const char *key, const char *label)
{
    for (size_t i = 0; i < r->ncols; i++)
        if (!strcmp(r->cols[i].key, key))
            return i;
    if (r->ncols == r->capcols)
        am_rp_grow_cols(r);
    r->cols[r->ncols].key = am_xstrdup(key);
    r->cols[r->ncols].label = am_xstrdup(label ? label : key);
    r->cols[r->ncols].kind = AM_RP_EMPTY;
    return r->ncols++;
}

size_t am_report_row(am_report *r)
{
    if (r->capcols == 0)
        am_rp_grow_cols(r);
    if (r->nrows == r->caprows) {
        size_t cap = r->caprows ? r->caprows * 2 : 16;
        r->cells = am_xrealloc(r->cells, cap * r->capcols * sizeof *r->cells);
        memset(r->cells + r->caprows * r->capcols, 0,
               (cap - r->caprows) * r->capcols * sizeof *r->cells);
        r->caprows = cap;
    }
    return r->nrows++;
}

size_t am_report_col_kind(am_report *r, const char *key, const char *label, enum am_rp_kind kind)
{
    size_t i = am_report_col(r, key, label);
    r->cols[i].kind = kind;
    return i;
}

/* The cell to set as kind, cleared (borrowed); the column takes the kind
 * when it has none yet, or a wider one. */
static am_rp_cell *am_rp_at(am_report *r, size_t row, size_t col, enum am_rp_kind kind)
{
    am_rp_cell *c = &r->cells[row * r->capcols + col];
    am_rp_cell_clear(c);
    c->kind = kind;
    /* a ratio or interval widens a column of plain numbers (more CSV fields) */
    enum am_rp_kind *ck = &r->cols[col].kind;
    if (*ck == AM_RP_EMPTY || (kind >= AM_RP_RATIO && *ck != AM_RP_TEXT && *ck < kind))
        *ck = kind;
    return c;
}

size_t am_report_find(const am_report *r, const char *key, const char *text)
{
    for (size_t j = 0; j < r->ncols; j++) {
        if (strcmp(r->cols[j].key, key))
            continue;
        for (size_t i = 0; i < r->nrows; i++) {
            const am_rp_cell *c = am_report_cell(r, i, j);
            if (c->kind == AM_RP_TEXT && !strcmp(c->text, text))
                return i;
        }
    }
    return (size_t)-1;
}

const am_rp_cell *am_report_cell(const am_report *r, size_t row, size_t col)
{
    return &r->cells[row * r->capcols + col];
}

void am_report_text(am_report *r, size_t row, size_t col, const char *text)
{
    am_rp_cell *c = am_rp_at(r, row, col, AM_RP_TEXT);
    c->text = am_xstrdup(text ? text : "");
}

void am_report_int(am_report *r, size_t row, size_t col, int64_t v)
{
    am_rp_cell *c = am_rp_at(r, row, col, AM_RP_INT);
    c->i = v;
}

void am_report_real(am_report *r, size_t row, size_t col, double v)
{
    am_rp_cell *c = am_rp_at(r, row, col, AM_RP_REAL);
    c->x = v;
}

void am_report_ratio(am_report *r, size_t row, size_t col, int64_t hits, int64_t total)
{
    am_rp_cell *c = am_rp_at(r, row, col, AM_RP_RATIO);
    c->hits = hits;
    c->total = total;
    c->x = total > 0 ? (double)hits / (double)total : NAN;
}

void am_report_interval(am_report *r, size_t row, size_t col, double lo, double hi)
{
    am_rp_cell *c = am_rp_at(r, row, col, AM_RP_INTERVAL);
    c->lo = lo;
    c->hi = hi;
}

void am_report_note(am_report *r, const char *key, const char *value)
{
    r->notes = am_xrealloc(r->notes, 2 * (r->nnotes + 1) * sizeof *r->notes);
    r->notes[2 * r->nnotes] = am_xstrdup(key);
    r->notes[2 * r->nnotes + 1] = am_xstrdup(value);
    r->nnotes++;
}

int am_report_format_parse(const char *s, enum am_rp_format *out)
{
    static const struct {
        const char *name;
        enum am_rp_format f;
    } names[] = {{"table", AM_RP_TABLE}, {"json", AM_RP_JSON},         {"csv", AM_RP_CSV},
                 {"tsv", AM_RP_TSV},     {"markdown", AM_RP_MARKDOWN}, {"md", AM_RP_MARKDOWN},
                 {"latex", AM_RP_LATEX}, {"tex", AM_RP_LATEX}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *out = names[i].f;
            return AM_OK;
        }
    return AM_ERR_INVALID;
}

/* ---- text of a cell ------------------------------------------------------ */

/* A number at a fixed precision, or "null". */
static void am_rp_fixed(am_buf *b, double x, int prec)
{
    if (isfinite(x))
        am_buf_printf(b, "%.*f", prec, x);
    else
        am_buf_appends(b, "null");
}

/* A number as the shortest text that reads back (am_realfmt_g), or nothing. */
static void am_rp_full(am_buf *b, double x)
{
    char t[AM_REALFMT_MAX];
    if (isfinite(x)) {
        am_realfmt_g(x, t);
        am_buf_appends(b, t);
    }
}

/* The display text of a cell for table/markdown/LaTeX into b (reset first). */
static void am_rp_display(const am_rp_cell *c, int prec, int counts, am_buf *b)
{
    am_buf_reset(b);
    switch (c->kind) {
    case AM_RP_EMPTY: break;
    case AM_RP_TEXT: am_buf_appends(b, c->text); break;
    case AM_RP_INT: am_buf_printf(b, "%lld", (long long)c->i); break;
    case AM_RP_REAL: am_rp_fixed(b, c->x, prec); break;
    case AM_RP_RATIO:
        am_rp_fixed(b, c->x, prec);
        if (counts)
            am_buf_printf(b, " (%lld/%lld)", (long long)c->hits, (long long)c->total);
        break;
    case AM_RP_INTERVAL:
        am_buf_appendc(b, '[');
        am_rp_fixed(b, c->lo, prec);
        am_buf_appends(b, ", ");
        am_rp_fixed(b, c->hi, prec);
        am_buf_appendc(b, ']');
        break;
    }
}

/* Display width of UTF-8 text: code points (continuation bytes skipped). */
static size_t am_rp_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

/* Is column col numeric (its kind is no text)? */
static int am_rp_numeric(const am_report *r, size_t col)
{
    return r->cols[col].kind != AM_RP_TEXT && r->cols[col].kind != AM_RP_EMPTY;
}

/* ---- table ----------------------------------------------------------------- */

static void am_rp_pad(am_buf *out, const char *s, size_t width, int right)
{
    size_t w = am_rp_width(s);
    if (right)
        for (size_t k = w; k < width; k++)
            am_buf_appendc(out, ' ');
    am_buf_appends(out, s);
    if (!right)
        for (size_t k = w; k < width; k++)
            am_buf_appendc(out, ' ');
}

static void am_rp_table(const am_report *r, int prec, am_buf *out)
{
    for (size_t i = 0; i < r->nnotes; i++)
        am_buf_printf(out, "%s: %s\n", r->notes[2 * i], r->notes[2 * i + 1]);
    if (r->nnotes)
        am_buf_appendc(out, '\n');
    size_t *width = am_xcalloc(r->ncols + 1, sizeof *width);
    am_buf b;
    am_buf_init(&b);
    for (size_t j = 0; j < r->ncols; j++) {
        width[j] = am_rp_width(r->cols[j].label);
        for (size_t i = 0; i < r->nrows; i++) {
            am_rp_display(am_report_cell(r, i, j), prec, 1, &b);
            size_t w = am_rp_width(am_buf_str(&b));
            if (w > width[j])
                width[j] = w;
        }
    }
    for (size_t j = 0; j < r->ncols; j++) {
        if (j)
            am_buf_appends(out, "  ");
        am_rp_pad(out, r->cols[j].label, j + 1 < r->ncols ? width[j] : 0, 0);
    }
    am_buf_appendc(out, '\n');
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t j = 0; j < r->ncols; j++) {
            if (j)
                am_buf_appends(out, "  ");
            am_rp_display(am_report_cell(r, i, j), prec, 1, &b);
            am_rp_pad(out, am_buf_str(&b), j + 1 < r->ncols ? width[j] : 0, 0);
        }
        am_buf_appendc(out, '\n');
    }
    am_buf_cleanup(&b);
    free(width);
}

/* ---- markdown ------------------------------------------------------------ */

static void am_rp_md_text(am_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            am_buf_appendc(out, '\\');
        am_buf_appendc(out, *s == '\n' ? ' ' : *s);
    }
}

static void am_rp_markdown(const am_report *r, int prec, am_buf *out)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_appendc(out, '|');
    for (size_t j = 0; j < r->ncols; j++) {
        am_buf_appendc(out, ' ');
        am_rp_md_text(out, r->cols[j].label);
        am_buf_appends(out, " |");
    }
    am_buf_appends(out, "\n|");
    for (size_t j = 0; j < r->ncols; j++)
        am_buf_appends(out, am_rp_numeric(r, j) ? " ---: |" : " --- |");
    am_buf_appendc(out, '\n');
    for (size_t i = 0; i < r->nrows; i++) {
        am_buf_appendc(out, '|');
        for (size_t j = 0; j < r->ncols; j++) {
            am_rp_display(am_report_cell(r, i, j), prec, 0, &b);
            am_buf_appendc(out, ' ');
            am_rp_md_text(out, am_buf_str(&b));
            am_buf_appends(out, " |");
        }
        am_buf_appendc(out, '\n');
    }
    if (r->nnotes)
        am_buf_appendc(out, '\n');
    for (size_t i = 0; i < r->nnotes; i++)
        am_buf_printf(out, "- `%s: %s`\n", r->notes[2 * i], r->notes[2 * i + 1]);
    am_buf_cleanup(&b);
}

/* ---- LaTeX --------------------------------------------------------------- */

/* Text escaped for LaTeX; Δ, μ, ± and † (the significance's labels and
 * cells) become $\Delta$, $\mu$, $\pm$ and \dag{}, which need no Greek
 * or symbol font. */
static void am_rp_tex_text(am_buf *out, const char *s)
{
    static const char *const sym[][2] = {{"\xce\x94", "$\\Delta$"}, /* U+0394 Δ */
                                         {"\xce\xbc", "$\\mu$"}, /* U+03BC μ */
                                         {"\xc2\xb1", "$\\pm$"}, /* U+00B1 ± */
                                         {"\xe2\x80\xa0", "\\dag{}"}}; /* U+2020 † */
    for (; *s; s++) {
        size_t k = 0, n = sizeof sym / sizeof sym[0];
        while (k < n && strncmp(s, sym[k][0], strlen(sym[k][0])) != 0)
            k++;
        if (k < n) {
            am_buf_appends(out, sym[k][1]);
            s += strlen(sym[k][0]) - 1;
            continue;
        }
        switch (*s) {
        case '&':
        case '%':
        case '$':
        case '#':
        case '_':
        case '{':
        case '}':
            am_buf_appendc(out, '\\');
            am_buf_appendc(out, *s);
            break;
        case '~': am_buf_appends(out, "\\textasciitilde{}"); break;
        case '^': am_buf_appends(out, "\\textasciicircum{}"); break;
        case '\\': am_buf_appends(out, "\\textbackslash{}"); break;
        case '\n': am_buf_appendc(out, ' '); break;
        default: am_buf_appendc(out, *s);
        }
    }
}

static void am_rp_latex(const am_report *r, int prec, am_buf *out)
{
    for (size_t i = 0; i < r->nnotes; i++) {
        am_buf_printf(out, "%% %s: %s\n", r->notes[2 * i], r->notes[2 * i + 1]);
    }
    am_buf_appends(out, "\\begin{tabular}{");
    for (size_t j = 0; j < r->ncols; j++)
        am_buf_appendc(out, am_rp_numeric(r, j) ? 'r' : 'l');
    am_buf_appends(out, "}\n\\toprule\n");
    am_buf b;
    am_buf_init(&b);
    for (size_t j = 0; j < r->ncols; j++) {
        am_buf_appends(out, j ? " & " : "");
        am_rp_tex_text(out, r->cols[j].label);
    }
    am_buf_appends(out, " \\\\\n\\midrule\n");
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t j = 0; j < r->ncols; j++) {
            am_rp_display(am_report_cell(r, i, j), prec, 0, &b);
            am_buf_appends(out, j ? " & " : "");
            am_rp_tex_text(out, am_buf_str(&b));
        }
        am_buf_appends(out, " \\\\\n");
    }
    am_buf_appends(out, "\\bottomrule\n\\end{tabular}\n");
    am_buf_cleanup(&b);
}

/* ---- CSV / TSV ------------------------------------------------------------- */

/* One field: CSV quotes when needed (RFC 4180); TSV turns tabs and line
 * breaks into spaces. */
static void am_rp_field(am_buf *out, const char *s, char sep)
{
    if (sep == '\t') {
        for (; *s; s++)
            am_buf_appendc(out, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
        return;
    }
    if (!strpbrk(s, ",\"\n\r")) {
        am_buf_appends(out, s);
        return;
    }
    am_buf_appendc(out, '"');
    for (; *s; s++) {
        if (*s == '"')
            am_buf_appendc(out, '"');
        am_buf_appendc(out, *s);
    }
    am_buf_appendc(out, '"');
}

/* How many CSV fields column col takes (ratio 3, interval 2, else 1). */
static int am_rp_span(const am_report *r, size_t col)
{
    return r->cols[col].kind == AM_RP_RATIO ? 3 : r->cols[col].kind == AM_RP_INTERVAL ? 2 : 1;
}

static void am_rp_header(const am_report *r, const int *span, char sep, am_buf *out)
{
    am_buf b;
    am_buf_init(&b);
    for (size_t j = 0; j < r->ncols; j++) {
        static const char *const sfx[4][3] = {{""}, {""}, {"_lo", "_hi"}, {"", "_hits", "_total"}};
        for (int k = 0; k < span[j]; k++) {
            if (j || k)
                am_buf_appendc(out, sep);
            am_buf_reset(&b);
            am_buf_printf(&b, "%s%s", r->cols[j].key, sfx[span[j]][k]);
            am_rp_field(out, am_buf_str(&b), sep);
        }
    }
    am_buf_appendc(out, '\n');
    am_buf_cleanup(&b);
}

/* The fields of one cell at full precision (span of them). */
static void am_rp_fields(const am_rp_cell *c, int span, char sep, am_buf *b, am_buf *out)
{
    am_buf_reset(b);
    switch (c->kind) {
    case AM_RP_TEXT: am_rp_field(out, c->text, sep); break;
    case AM_RP_INT: am_buf_printf(out, "%lld", (long long)c->i); break;
    case AM_RP_REAL:
    case AM_RP_RATIO:
        am_rp_full(out, c->x);
        if (c->kind == AM_RP_RATIO && span == 3)
            am_buf_printf(out, "%c%lld%c%lld", sep, (long long)c->hits, sep, (long long)c->total);
        break;
    case AM_RP_INTERVAL:
        am_rp_full(out, c->lo);
        am_buf_appendc(out, sep);
        am_rp_full(out, c->hi);
        break;
    case AM_RP_EMPTY: break;
    }
    int used = c->kind == AM_RP_RATIO ? 3 : c->kind == AM_RP_INTERVAL ? 2 : 1;
    for (int k = c->kind == AM_RP_EMPTY ? 1 : used; k < span; k++)
        am_buf_appendc(out, sep);
}

static void am_rp_sv(const am_report *r, char sep, am_buf *out)
{
    int *span = am_xcalloc(r->ncols + 1, sizeof *span);
    for (size_t j = 0; j < r->ncols; j++)
        span[j] = am_rp_span(r, j);
    am_rp_header(r, span, sep, out);
    am_buf b;
    am_buf_init(&b);
    for (size_t i = 0; i < r->nrows; i++) {
        for (size_t j = 0; j < r->ncols; j++) {
            if (j)
                am_buf_appendc(out, sep);
            am_rp_fields(am_report_cell(r, i, j), span[j], sep, &b, out);
        }
        am_buf_appendc(out, '\n');
    }
    am_buf_cleanup(&b);
    free(span);
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *am_rp_jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* A cell as JSON (new reference). */
static json_t *am_rp_jcell(const am_rp_cell *c)
{
    switch (c->kind) {
    case AM_RP_TEXT: return json_string(c->text);
    case AM_RP_INT: return json_integer((json_int_t)c->i);
    case AM_RP_REAL: return am_rp_jnum(c->x);
    case AM_RP_RATIO:
        return json_pack("{sosIsI}", "score", am_rp_jnum(c->x), "hits", (json_int_t)c->hits,
                         "total", (json_int_t)c->total);
    case AM_RP_INTERVAL: return json_pack("[oo]", am_rp_jnum(c->lo), am_rp_jnum(c->hi));
    case AM_RP_EMPTY: break;
    }
    return json_null();
}

static void am_rp_json(const am_report *r, am_buf *out)
{
    json_t *notes = json_object(), *cols = json_array(), *rows = json_array();
    for (size_t i = 0; i < r->nnotes; i++)
        json_object_set_new(notes, r->notes[2 * i], json_string(r->notes[2 * i + 1]));
    for (size_t j = 0; j < r->ncols; j++)
        json_array_append_new(
            cols, json_pack("{ssss}", "key", r->cols[j].key, "label", r->cols[j].label));
    for (size_t i = 0; i < r->nrows; i++) {
        json_t *o = json_object();
        for (size_t j = 0; j < r->ncols; j++)
            json_object_set_new(o, r->cols[j].key, am_rp_jcell(am_report_cell(r, i, j)));
        json_array_append_new(rows, o);
    }
    json_t *root = json_pack("{sososo}", "notes", notes, "columns", cols, "rows", rows);
    char *d = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER);
    char *s = d ? am_realfmt_json_text(d) : NULL; /* shortest reals */
    free(d);
    if (s) {
        am_buf_appends(out, s);
        am_buf_appendc(out, '\n');
    }
    free(s);
    json_decref(root);
}

void am_report_render(const am_report *r, enum am_rp_format fmt, int precision, am_buf *out)
{
    int prec = precision < 0 ? 0 : precision > 17 ? 17 : precision;
    switch (fmt) {
    case AM_RP_TABLE: am_rp_table(r, prec, out); break;
    case AM_RP_MARKDOWN: am_rp_markdown(r, prec, out); break;
    case AM_RP_LATEX: am_rp_latex(r, prec, out); break;
    case AM_RP_CSV: am_rp_sv(r, ',', out); break;
    case AM_RP_TSV: am_rp_sv(r, '\t', out); break;
    case AM_RP_JSON: am_rp_json(r, out); break;
    }
}
