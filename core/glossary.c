/* glossary.c — in-memory glossary (the builder TBX reading goes through too) and its
 * CSV/TSV/JSON readers (see glossary.h); gloss_read.c detects the format and dispatches. */
#include "glossary.h"

#include "gloss_internal.h"
#include "lang.h"
#include "textenc.h"

#include <assert.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

am_gloss_limits am_gloss_limits_default(void)
{
    am_gloss_limits l;
    l.max_bytes = (size_t)64 << 20;
    l.max_entries = 1000000;
    l.max_field_bytes = (size_t)64 << 10;
    l.max_targets = 64;
    l.max_columns = 256;
    return l;
}

void am_gloss_init(am_gloss *g)
{
    g->v = NULL;
    g->n = 0;
    g->cap = 0;
    g->block = NULL;
    g->block_bytes = 0;
}

static void entry_free(am_gloss_entry *e)
{
    free(e->source);
    for (size_t i = 0; i < e->n_targets; i++)
        free(e->targets[i]);
    free(e->targets);
    free(e->id);
    memset(e, 0, sizeof *e);
}

void am_gloss_cleanup(am_gloss *g)
{
    if (g->block) { /* packed: the entries and strings are views of it */
        free(g->block);
        am_gloss_init(g);
        return;
    }
    for (size_t i = 0; i < g->n; i++)
        entry_free(&g->v[i]);
    free(g->v);
    am_gloss_init(g);
}

/* Copies string t (NULL: none) to *at, advancing it; returns the copy. */
static char *pack_str(char **at, const char *t)
{
    if (!t)
        return NULL;
    size_t n = strlen(t) + 1;
    char *d = memcpy(*at, t, n);
    *at += n;
    return d;
}

void am_gloss_pack(am_gloss *g)
{
    if (g->block || g->n == 0)
        return;
    /* the entries, then the targets arrays (both pointer-aligned), then
     * the string bytes */
    size_t nt = 0, chars = 0;
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        nt += e->n_targets;
        chars += strlen(e->source) + 1 + (e->id ? strlen(e->id) + 1 : 0);
        for (size_t k = 0; k < e->n_targets; k++)
            chars += strlen(e->targets[k]) + 1;
    }
    size_t bytes = g->n * sizeof *g->v + nt * sizeof(char *) + chars;
    char *block = am_xmalloc(bytes);
    am_gloss_entry *v = (am_gloss_entry *)(void *)block;
    char **tg = (char **)(void *)(block + g->n * sizeof *g->v);
    char *at = (char *)(tg + nt);
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        v[i] = *e;
        v[i].source = pack_str(&at, e->source);
        v[i].id = pack_str(&at, e->id);
        v[i].targets = tg;
        for (size_t k = 0; k < e->n_targets; k++)
            *tg++ = pack_str(&at, e->targets[k]);
    }
    size_t n = g->n;
    am_gloss_cleanup(g);
    g->v = v;
    g->n = g->cap = n;
    g->block = block;
    g->block_bytes = bytes;
}

/* p, a pointer into block from, moved to the same offset in block to. */
static char *reloc(const char *p, const char *from, char *to)
{
    return p ? to + (p - from) : NULL;
}

void am_gloss_copy_packed(const am_gloss *src, am_gloss *dst)
{
    am_gloss_init(dst);
    if (!src->block)
        return;
    const char *from = src->block;
    char *to = am_xmalloc(src->block_bytes);
    memcpy(to, from, src->block_bytes);
    am_gloss_entry *v = (am_gloss_entry *)(void *)reloc((const char *)src->v, from, to);
    for (size_t i = 0; i < src->n; i++) {
        am_gloss_entry *e = &v[i];
        e->source = reloc(e->source, from, to);
        e->id = reloc(e->id, from, to);
        e->targets = (char **)(void *)reloc((const char *)e->targets, from, to);
        for (size_t k = 0; k < e->n_targets; k++)
            e->targets[k] = reloc(e->targets[k], from, to);
    }
    dst->v = v;
    dst->n = dst->cap = src->n;
    dst->block = to;
    dst->block_bytes = src->block_bytes;
}

size_t am_gloss_bytes(const am_gloss *g, size_t overhead)
{
    if (g->block)
        return g->block_bytes + overhead;
    size_t b = g->cap * sizeof *g->v + (g->v ? overhead : 0);
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        b += strlen(e->source) + 1 + overhead + (e->id ? strlen(e->id) + 1 + overhead : 0) +
             e->n_targets * sizeof *e->targets + overhead;
        for (size_t k = 0; k < e->n_targets; k++)
            b += strlen(e->targets[k]) + 1 + overhead;
    }
    return b;
}

/* ---- UTF-8 validation (self-contained: no dependency on text.c) ---------- */

/* Returns the length (1..4) of the valid UTF-8 sequence at s[0..len), or 0
 * when it is invalid (overlong, surrogate, > U+10FFFF, truncated). */
static size_t utf8_seq_len(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (len >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (len < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (len < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

/* Validates buf; on failure returns AM_ERR_UTF8/AM_ERR_NUL with the 1-based
 * line and column of the offending byte. */
static int validate(const char *buf, size_t len, size_t *line, size_t *col)
{
    const unsigned char *u = (const unsigned char *)buf;
    size_t ln = 1, linestart = 0;
    size_t i = 0;
    while (i < len) {
        if (u[i] == 0) {
            *line = ln;
            *col = i - linestart + 1;
            return AM_ERR_NUL;
        }
        if (u[i] == '\n') {
            ln++;
            linestart = i + 1;
            i++;
            continue;
        }
        size_t n = utf8_seq_len(u + i, len - i);
        if (n == 0) {
            *line = ln;
            *col = i - linestart + 1;
            return AM_ERR_UTF8;
        }
        i += n;
    }
    return AM_OK;
}

int am_gloss_check_utf8(const char *buf, size_t len, am_gloss_report *r)
{
    size_t line = 0, col = 0;
    int rc = validate(buf, len, &line, &col);
    if (rc) {
        /* name the encoding it looks like and the command that converts it */
        am_buf why;
        am_buf_init(&why);
        am_textenc_diagnose(buf, len, NULL, &why);
        rc = am_gloss_rep_err(r, rc, line, col, "%s: %s",
                              rc == AM_ERR_NUL ? "NUL byte" : "invalid UTF-8", am_buf_str(&why));
        am_buf_cleanup(&why);
    }
    return rc;
}

static int str_valid(const char *s)
{
    size_t len = strlen(s), line, col;
    return validate(s, len, &line, &col);
}

/* ---- entries ------------------------------------------------------------- */

/* Appends e, taking ownership of its strings. */
static void push_entry(am_gloss *g, am_gloss_entry *e)
{
    AM_GROW(g->v, g->cap, g->n + 1, 16);
    g->v[g->n++] = *e;
    memset(e, 0, sizeof *e);
}

int am_gloss_add(am_gloss *g, const char *source, const char *const *targets, size_t n_targets,
                 int case_sensitive, int forbidden, const char *id)
{
    if (!g || !source || !targets || n_targets == 0 || !*source)
        return AM_ERR_INVALID;
    int rc = str_valid(source);
    if (rc)
        return rc == AM_ERR_NUL ? AM_ERR_INVALID : rc;
    for (size_t i = 0; i < n_targets; i++) {
        if (!targets[i] || !*targets[i])
            return AM_ERR_INVALID;
        if (str_valid(targets[i]))
            return AM_ERR_UTF8;
    }
    if (id && str_valid(id))
        return AM_ERR_UTF8;
    am_gloss_entry e;
    memset(&e, 0, sizeof e);
    e.source = am_xstrdup(source);
    e.targets = am_xmalloc(n_targets * sizeof *e.targets);
    for (size_t i = 0; i < n_targets; i++)
        e.targets[i] = am_xstrdup(targets[i]);
    e.n_targets = n_targets;
    e.case_sensitive = case_sensitive ? 1 : 0;
    e.forbidden = forbidden ? 1 : 0;
    e.id = id ? am_xstrdup(id) : NULL;
    push_entry(g, &e);
    return AM_OK;
}

int am_gloss_format_parse(const char *name, enum am_gloss_format *out)
{
    static const char *const names[] = {"auto", "csv", "tsv", "json", "tbx"};
    if (!name || !out)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (enum am_gloss_format)i;
            return AM_OK;
        }
    }
    return AM_ERR_INVALID;
}

const char *am_gloss_format_name(enum am_gloss_format f)
{
    switch (f) {
    case AM_GLOSS_AUTO: return "auto";
    case AM_GLOSS_CSV: return "csv";
    case AM_GLOSS_TSV: return "tsv";
    case AM_GLOSS_JSON: return "json";
    case AM_GLOSS_TBX: return "tbx";
    }
    return "unknown";
}

/* ---- shared helpers (also used by tbx.c: gloss_internal.h) -------------- */

int am_gloss_rep_err(am_gloss_report *r, int rc, size_t line, size_t col, const char *fmt, ...)
{
    char tmp[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    r->line = line;
    r->column = col;
    if (line && col)
        snprintf(r->msg, sizeof r->msg, "line %zu, column %zu: %s", line, col, tmp);
    else if (line)
        snprintf(r->msg, sizeof r->msg, "line %zu: %s", line, tmp);
    else if (r->entry)
        snprintf(r->msg, sizeof r->msg, "entry %zu: %s", r->entry, tmp);
    else
        snprintf(r->msg, sizeof r->msg, "%s", tmp);
    return rc;
}

int am_gloss_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

const char *am_gloss_trim(const char *s, size_t *len)
{
    size_t n = *len;
    while (n && am_gloss_is_space(*s)) {
        s++;
        n--;
    }
    while (n && am_gloss_is_space(s[n - 1]))
        n--;
    *len = n;
    return s;
}

/* Copies s[0..n) trimmed of ASCII whitespace (caller frees). */
static char *dup_trim(const char *s, size_t n)
{
    s = am_gloss_trim(s, &n);
    return am_xstrndup(s, n);
}

/* Splits t at '|' into trimmed non-empty alternatives appended to e.
 * Returns the number of alternatives, or (size_t)-1 when more than max. */
static size_t split_targets(am_gloss_entry *e, const char *t, size_t max)
{
    const char *p = t;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        char *alt = dup_trim(p, n);
        if (*alt) {
            if (e->n_targets == max) {
                free(alt);
                return (size_t)-1;
            }
            e->targets = am_xrealloc(e->targets, (e->n_targets + 1) * sizeof *e->targets);
            e->targets[e->n_targets++] = alt;
        } else {
            free(alt);
        }
        if (!bar)
            break;
        p = bar + 1;
    }
    return e->n_targets;
}

/* ---- CSV / TSV ----------------------------------------------------------- */

typedef struct csv_row {
    am_buf data; /* fields, each NUL-terminated */
    size_t *off; /* field offsets into data */
    size_t n, cap; /* field count */
    size_t line; /* line the record starts on */
} csv_row;

typedef struct csv_reader {
    const char *s;
    size_t len, pos, line;
    char delim;
    const am_gloss_limits *lim;
    am_gloss_report *rep;
} csv_reader;

static void row_field_start(csv_row *r)
{
    AM_GROW(r->off, r->cap, r->n + 1, 16);
    r->off[r->n++] = r->data.len;
}

static void row_field_end(csv_row *r)
{
    am_buf_append(&r->data, "", 1); /* keep the NUL inside len */
}

static const char *row_field(const csv_row *r, size_t i)
{
    return r->data.data + r->off[i];
}

/* Reads one record into row. Returns 1 when a record was read, 0 at end of
 * input, or a negative am_err (report filled). */
static int csv_next(csv_reader *c, csv_row *row)
{
    am_buf_reset(&row->data);
    row->n = 0;
    if (c->pos >= c->len)
        return 0;
    row->line = c->line;
    for (;;) {
        if (row->n == c->lim->max_columns)
            return am_gloss_rep_err(c->rep, AM_ERR_RANGE, c->line, 0, "more than %zu columns",
                                    c->lim->max_columns);
        row_field_start(row);
        size_t fstart = row->data.len;
        if (c->pos < c->len && c->s[c->pos] == '"') {
            size_t qline = c->line;
            c->pos++;
            for (;;) {
                if (c->pos >= c->len)
                    return am_gloss_rep_err(c->rep, AM_ERR_PARSE, qline, 0,
                                            "unterminated quoted field (opened on this line)");
                char ch = c->s[c->pos];
                if (ch == '"') {
                    if (c->pos + 1 < c->len && c->s[c->pos + 1] == '"') {
                        am_buf_appendc(&row->data, '"');
                        c->pos += 2;
                        continue;
                    }
                    c->pos++;
                    break;
                }
                if (ch == '\n')
                    c->line++;
                am_buf_appendc(&row->data, ch);
                c->pos++;
            }
            if (c->pos < c->len) {
                char ch = c->s[c->pos];
                if (ch != c->delim && ch != '\n' && ch != '\r')
                    return am_gloss_rep_err(c->rep, AM_ERR_PARSE, c->line, 0,
                                            "unexpected character after closing quote");
            }
        } else {
            size_t st = c->pos;
            while (c->pos < c->len) {
                char ch = c->s[c->pos];
                if (ch == c->delim || ch == '\n' || ch == '\r')
                    break;
                c->pos++;
            }
            am_buf_append(&row->data, c->s + st, c->pos - st);
        }
        if (row->data.len - fstart > c->lim->max_field_bytes)
            return am_gloss_rep_err(c->rep, AM_ERR_RANGE, c->line, 0, "field longer than %zu bytes",
                                    c->lim->max_field_bytes);
        row_field_end(row);
        if (c->pos >= c->len)
            return 1;
        char ch = c->s[c->pos];
        if (ch == c->delim) {
            c->pos++;
            continue;
        }
        /* end of record: \r\n, \n or a lone \r */
        if (ch == '\r') {
            c->pos++;
            if (c->pos < c->len && c->s[c->pos] == '\n')
                c->pos++;
        } else {
            c->pos++;
        }
        c->line++;
        return 1;
    }
}

enum { COL_SRC, COL_TGT, COL_ID, COL_CASE, COL_FORB, COL_N };

static int header_kind(const char *name)
{
    static const struct {
        const char *name;
        int kind;
    } tab[] = {
        {"source", COL_SRC},         {"src", COL_SRC},         {"sourcestring", COL_SRC},
        {"source_term", COL_SRC},    {"term", COL_SRC},        {"target", COL_TGT},
        {"targets", COL_TGT},        {"tgt", COL_TGT},         {"targetstring", COL_TGT},
        {"target_term", COL_TGT},    {"translation", COL_TGT}, {"id", COL_ID},
        {"stringid", COL_ID},        {"entry_id", COL_ID},     {"case_sensitive", COL_CASE},
        {"casesensitive", COL_CASE}, {"case", COL_CASE},       {"forbidden", COL_FORB},
        {"do_not_use", COL_FORB},
    };
    char low[32];
    char *t = dup_trim(name, strlen(name));
    size_t n = strlen(t);
    int kind = -1;
    if (n < sizeof low) {
        for (size_t i = 0; i <= n; i++)
            low[i] = (t[i] >= 'A' && t[i] <= 'Z') ? (char)(t[i] - 'A' + 'a') : t[i];
        for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
            if (strcmp(low, tab[i].name) == 0)
                kind = tab[i].kind;
    }
    free(t);
    return kind;
}

/* Parses a boolean cell: 1/0 in *out, or -1 when not a boolean. */
static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "1", "yes", "y"};
    static const char *const no[] = {"false", "0", "no", "n", ""};
    char low[8];
    char *t = dup_trim(s, strlen(s));
    size_t n = strlen(t);
    int ok = -1;
    if (n < sizeof low) {
        for (size_t i = 0; i <= n; i++)
            low[i] = (t[i] >= 'A' && t[i] <= 'Z') ? (char)(t[i] - 'A' + 'a') : t[i];
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
            if (strcmp(low, yes[i]) == 0) {
                *out = 1;
                ok = 0;
            }
        for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
            if (strcmp(low, no[i]) == 0) {
                *out = 0;
                ok = 0;
            }
    }
    free(t);
    return ok;
}

static int row_is_blank(const csv_row *r)
{
    return r->n == 1 && row_field(r, 0)[0] == '\0';
}

/* A first row whose first two fields name two different languages
 * (am_lang_from_header) is a language header: its columns are mapped by
 * language to src_lang / tgt_lang (either may be NULL: then the first
 * column is the source, the second the target) into col. Returns 1 when
 * row is such a header and col was set, 0 when it is not one (a term
 * pair), or AM_ERR_INVALID (reported) when it names languages other than
 * the session's. */
static int lang_header(const csv_row *row, const char *src_lang, const char *tgt_lang, long *col,
                       am_gloss_report *rep)
{
    char l0[3], l1[3];
    if (row->n < 2 || am_lang_from_header(row_field(row, 0), l0, sizeof l0) != AM_OK ||
        am_lang_from_header(row_field(row, 1), l1, sizeof l1) != AM_OK || !strcmp(l0, l1))
        return 0;
    if (!src_lang || !tgt_lang || !*src_lang || !*tgt_lang) {
        col[COL_SRC] = 0;
        col[COL_TGT] = 1;
        return 1;
    }
    long s = -1, t = -1;
    for (size_t i = 0; i < row->n; i++) {
        char li[3];
        if (am_lang_from_header(row_field(row, i), li, sizeof li) != AM_OK)
            continue;
        if (s < 0 && am_lang_same(li, src_lang))
            s = (long)i;
        else if (t < 0 && am_lang_same(li, tgt_lang))
            t = (long)i;
    }
    if (s < 0 || t < 0)
        return am_gloss_rep_err(rep, AM_ERR_INVALID, row->line, 0,
                                "the header names the languages '%.40s' and '%.40s', not the "
                                "source language %.40s and the target language %.40s",
                                row_field(row, 0), row_field(row, 1), src_lang, tgt_lang);
    col[COL_SRC] = s;
    col[COL_TGT] = t;
    return 1;
}

/* Length/complexity (issue 15): one pass over the rows (header detection,
 * quoting via the row reader, the column roles, one refusal with its line
 * per limit); the cell and header work is in its helpers. */
int am_gloss_read_csv(const char *buf, size_t len, char delim, const am_gloss_limits *lim,
                      const char *src_lang, const char *tgt_lang, am_gloss *out,
                      am_gloss_report *rep)
{
    csv_reader c = {buf, len, 0, 1, delim, lim, rep};
    csv_row row;
    memset(&row, 0, sizeof row);
    am_buf_init(&row.data);
    long col[COL_N];
    for (int k = 0; k < COL_N; k++)
        col[k] = -1;
    int first = 1, rc = AM_OK;
    am_gloss_entry e;
    memset(&e, 0, sizeof e);

    for (;;) {
        int got = csv_next(&c, &row);
        if (got < 0) {
            rc = got;
            break;
        }
        if (got == 0)
            break;
        if (row_is_blank(&row))
            continue;
        if (first) {
            first = 0;
            long tmp[COL_N];
            for (int k = 0; k < COL_N; k++)
                tmp[k] = -1;
            for (size_t i = 0; i < row.n; i++) {
                int kind = header_kind(row_field(&row, i));
                if (kind >= 0 && tmp[kind] < 0)
                    tmp[kind] = (long)i;
            }
            if (tmp[COL_SRC] >= 0 && tmp[COL_TGT] >= 0) {
                memcpy(col, tmp, sizeof col);
                rep->has_header = 1;
                continue;
            }
            int lh = lang_header(&row, src_lang, tgt_lang, col, rep);
            if (lh < 0) {
                rc = lh;
                break;
            }
            if (lh) {
                rep->has_header = 1;
                rep->lang_header = 1;
                continue;
            }
            col[COL_SRC] = 0;
            col[COL_TGT] = 1;
        }
        rep->rows++;
        size_t need = 0;
        for (int k = 0; k < COL_N; k++)
            if (col[k] >= 0 && (size_t)col[k] + 1 > need)
                need = (size_t)col[k] + 1;
        if (row.n < need) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, row.line, 0, "expected %zu columns, found %zu",
                                  need, row.n);
            break;
        }
        char *src = dup_trim(row_field(&row, (size_t)col[COL_SRC]),
                             strlen(row_field(&row, (size_t)col[COL_SRC])));
        const char *tgt = row_field(&row, (size_t)col[COL_TGT]);
        char *tgt_trim = dup_trim(tgt, strlen(tgt));
        if (!*src && !*tgt_trim) {
            free(src);
            free(tgt_trim);
            rep->skipped++;
            continue;
        }
        free(tgt_trim);
        if (!*src) {
            free(src);
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, row.line, 0, "empty source term");
            break;
        }
        if (out->n == lim->max_entries) {
            free(src);
            rc = am_gloss_rep_err(rep, AM_ERR_RANGE, row.line, 0, "more than %zu entries",
                                  lim->max_entries);
            break;
        }
        e.source = src;
        size_t nt = split_targets(&e, tgt, lim->max_targets);
        if (nt == (size_t)-1) {
            rc = am_gloss_rep_err(rep, AM_ERR_RANGE, row.line, 0,
                                  "more than %zu target alternatives", lim->max_targets);
            break;
        }
        if (nt == 0) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, row.line, 0, "empty target term");
            break;
        }
        if (col[COL_CASE] >= 0 &&
            parse_bool(row_field(&row, (size_t)col[COL_CASE]), &e.case_sensitive) < 0) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, row.line, 0,
                                  "case_sensitive is not a boolean (true/false/1/0/yes/no)");
            break;
        }
        if (col[COL_FORB] >= 0 &&
            parse_bool(row_field(&row, (size_t)col[COL_FORB]), &e.forbidden) < 0) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, row.line, 0,
                                  "forbidden is not a boolean (true/false/1/0/yes/no)");
            break;
        }
        if (col[COL_ID] >= 0) {
            const char *id = row_field(&row, (size_t)col[COL_ID]);
            char *t = dup_trim(id, strlen(id));
            if (*t)
                e.id = t;
            else
                free(t);
        }
        push_entry(out, &e);
    }
    entry_free(&e); /* an entry left half-built by an error */
    am_buf_cleanup(&row.data);
    free(row.off);
    return rc;
}

/* ---- JSON ---------------------------------------------------------------- */

static int json_str_field(json_t *v, const am_gloss_limits *lim, am_gloss_report *rep,
                          const char *what, char **out)
{
    if (!json_is_string(v))
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "%s must be a string", what);
    size_t n = json_string_length(v);
    if (n > lim->max_field_bytes)
        return am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "%s longer than %zu bytes", what,
                                lim->max_field_bytes);
    *out = dup_trim(json_string_value(v), n);
    if (!**out) {
        free(*out);
        *out = NULL;
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "empty %s", what);
    }
    return AM_OK;
}

static int json_bool_field(json_t *o, const char *key, int *out, am_gloss_report *rep)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = 0;
        return AM_OK;
    }
    if (!json_is_boolean(v))
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "\"%s\" must be true or false", key);
    *out = json_is_true(v) ? 1 : 0;
    return AM_OK;
}

static int json_entry(json_t *o, const am_gloss_limits *lim, am_gloss *out, am_gloss_report *rep)
{
    am_gloss_entry e;
    memset(&e, 0, sizeof e);
    int rc;
    if (!json_is_object(o))
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "an entry must be an object");
    json_t *src = json_object_get(o, "source");
    if (!src)
        return am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "missing \"source\"");
    if ((rc = json_str_field(src, lim, rep, "source", &e.source)))
        goto fail;
    json_t *tg = json_object_get(o, "targets");
    if (tg) {
        if (!json_is_array(tg)) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0,
                                  "\"targets\" must be an array of strings");
            goto fail;
        }
        size_t n = json_array_size(tg);
        if (n == 0) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "\"targets\" is empty");
            goto fail;
        }
        if (n > lim->max_targets) {
            rc = am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "more than %zu target alternatives",
                                  lim->max_targets);
            goto fail;
        }
        e.targets = am_xcalloc(n, sizeof *e.targets);
        for (size_t i = 0; i < n; i++) {
            if ((rc = json_str_field(json_array_get(tg, i), lim, rep, "target", &e.targets[i])))
                goto fail;
            e.n_targets++;
        }
    } else {
        json_t *t1 = json_object_get(o, "target");
        if (!t1) {
            rc = am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "missing \"targets\"");
            goto fail;
        }
        e.targets = am_xcalloc(1, sizeof *e.targets);
        if ((rc = json_str_field(t1, lim, rep, "target", &e.targets[0])))
            goto fail;
        e.n_targets = 1;
    }
    if ((rc = json_bool_field(o, "case_sensitive", &e.case_sensitive, rep)))
        goto fail;
    if ((rc = json_bool_field(o, "forbidden", &e.forbidden, rep)))
        goto fail;
    json_t *id = json_object_get(o, "id");
    if (id && json_is_integer(id)) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
        e.id = am_xstrdup(tmp);
    } else if (id && json_is_string(id)) {
        if ((rc = json_str_field(id, lim, rep, "id", &e.id)))
            goto fail;
    } else if (id && !json_is_null(id)) {
        rc = am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0, "\"id\" must be a string or an integer");
        goto fail;
    }
    push_entry(out, &e);
    return AM_OK;
fail:
    entry_free(&e);
    return rc;
}

int am_gloss_read_json(const char *buf, size_t len, const am_gloss_limits *lim, am_gloss *out,
                       am_gloss_report *rep)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        int rc = json_error_code(&jerr) == json_error_invalid_utf8 ? AM_ERR_UTF8 : AM_ERR_PARSE;
        return am_gloss_rep_err(rep, rc, jerr.line > 0 ? (size_t)jerr.line : 0,
                                jerr.column > 0 ? (size_t)jerr.column : 0, "%s", jerr.text);
    }
    json_t *arr = root;
    if (json_is_object(root))
        arr = json_object_get(root, "entries");
    int rc = AM_OK;
    if (!arr || !json_is_array(arr)) {
        rc = am_gloss_rep_err(rep, AM_ERR_PARSE, 0, 0,
                              "expected an array of entries or an object with \"entries\"");
    } else if (json_array_size(arr) > lim->max_entries) {
        rc = am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "more than %zu entries", lim->max_entries);
    } else {
        for (size_t i = 0; i < json_array_size(arr); i++) {
            rep->entry = i + 1;
            rep->rows++;
            if ((rc = json_entry(json_array_get(arr, i), lim, out, rep)))
                break;
        }
        if (!rc)
            rep->entry = 0;
    }
    json_decref(root);
    return rc;
}

/* ---- entry point --------------------------------------------------------- */
