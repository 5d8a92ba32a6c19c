/*
 * gen_stopwords.c — build-time generator of the compiled-in stopword lists.
 *
 *   gen_stopwords DATA_DIR OUT.c
 *
 * Reads DATA_DIR/snowball/<language>.stop.txt (Snowball format: '|' starts a
 * comment, the stopword is the first word of a line) for the 13 Snowball
 * languages and DATA_DIR/stopwords-iso/stopwords-iso.json ({lang: [words]}),
 * and writes C source defining am_sw_lists[] / am_sw_nlists as declared in
 * core/stopwords_data.h. Words are kept exactly as listed (UTF-8), in file
 * order, with duplicates within one list removed. Every byte that is not
 * plain printable ASCII is written as a three-digit octal escape, so the
 * output is pure ASCII and free of trigraphs.
 *
 * The output is written to OUT.c.tmp and renamed, so a failed run never
 * leaves a partial file behind. Exit status 0 on success, 1 on any error
 * (with a message on stderr).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct list {
    const char *source; /* "iso" or "snowball" */
    char *lang;
    char **words;
    size_t n, cap;
} list;

typedef struct lists {
    list *v;
    size_t n, cap;
} lists;

static const struct {
    const char *file;
    const char *code;
} snowball_langs[] = {
    {"danish", "da"},    {"dutch", "nl"},      {"english", "en"},   {"finnish", "fi"},
    {"french", "fr"},    {"german", "de"},     {"hungarian", "hu"}, {"italian", "it"},
    {"norwegian", "no"}, {"portuguese", "pt"}, {"russian", "ru"},   {"spanish", "es"},
    {"swedish", "sv"},
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gen_stopwords: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *p = xrealloc(NULL, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* Strict UTF-8 check (no overlongs, surrogates, > U+10FFFF, or NUL). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned cp;
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += len;
    }
    return 1;
}

static list *lists_add(lists *ls, const char *source, const char *lang)
{
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? ls->cap * 2 : 64;
        ls->v = xrealloc(ls->v, ls->cap * sizeof *ls->v);
    }
    list *l = &ls->v[ls->n++];
    l->source = source;
    l->lang = xstrndup(lang, strlen(lang));
    l->words = NULL;
    l->n = l->cap = 0;
    return l;
}

/* Appends word[0..n) unless the list already holds it. */
static void list_push(list *l, const char *word, size_t n, const char *where)
{
    if (n == 0)
        return;
    if (!utf8_valid((const unsigned char *)word, n))
        die("%s: invalid UTF-8 in a word", where);
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->words[i]) == n && memcmp(l->words[i], word, n) == 0)
            return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 128;
        l->words = xrealloc(l->words, l->cap * sizeof *l->words);
    }
    l->words[l->n++] = xstrndup(word, n);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 15, n = 0, r;
    char *buf = xrealloc(NULL, cap);
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
    }
    if (ferror(f))
        die("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void read_snowball(const char *dir, lists *ls)
{
    for (size_t i = 0; i < sizeof snowball_langs / sizeof snowball_langs[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/snowball/%s.stop.txt", dir, snowball_langs[i].file);
        size_t len;
        char *buf = read_file(path, &len);
        if (memchr(buf, '\0', len))
            die("%s: NUL byte", path);
        list *l = lists_add(ls, "snowball", snowball_langs[i].code);
        const char *p = buf, *end = buf + len;
        while (p < end) {
            const char *eol = memchr(p, '\n', (size_t)(end - p));
            if (!eol)
                eol = end;
            const char *bar = memchr(p, '|', (size_t)(eol - p));
            const char *lend = bar ? bar : eol;
            const char *w = p;
            while (w < lend && is_ws(*w))
                w++;
            const char *we = w;
            while (we < lend && !is_ws(*we))
                we++;
            list_push(l, w, (size_t)(we - w), path);
            p = eol + (eol < end);
        }
        if (l->n == 0)
            die("%s: no words", path);
        free(buf);
    }
}

static void read_iso(const char *dir, lists *ls)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/stopwords-iso/stopwords-iso.json", dir);
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        die("%s: %s", path, err.text);
    if (!json_is_object(root))
        die("%s: top level is not an object", path);
    const char *lang;
    json_t *arr;
    json_object_foreach(root, lang, arr)
    {
        if (!json_is_array(arr))
            die("%s: value of \"%s\" is not an array", path, lang);
        for (const char *c = lang; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || *c == '-' || *c == '_'))
                die("%s: unexpected language key \"%s\"", path, lang);
        list *l = lists_add(ls, "iso", lang);
        size_t i;
        json_t *w;
        json_array_foreach(arr, i, w)
        {
            if (!json_is_string(w))
                die("%s: non-string word in \"%s\"", path, lang);
            list_push(l, json_string_value(w), json_string_length(w), path);
        }
    }
    json_decref(root);
}

static int cmp_list(const void *a, const void *b)
{
    const list *x = a, *y = b;
    int c = strcmp(x->source, y->source);
    return c ? c : strcmp(x->lang, y->lang);
}

static void put_cstring(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '?')
            fputc((int)c, f);
        else
            fprintf(f, "\\%03o", c);
    }
    fputc('"', f);
}

static void write_output(const char *out, const lists *ls)
{
    size_t n = strlen(out) + 5;
    char *tmp = xrealloc(NULL, n);
    snprintf(tmp, n, "%s.tmp", out);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        die("cannot create %s: %s", tmp, strerror(errno));
    fprintf(f, "/* Generated by tools/gen_stopwords.c from data/stopwords/ - do not edit. */\n"
               "#include \"stopwords_data.h\"\n\n");
    for (size_t i = 0; i < ls->n; i++) {
        const list *l = &ls->v[i];
        fprintf(f, "/* %s %s: %zu words */\nstatic const char *const am_sw_w%zu[] = {\n", l->source,
                l->lang, l->n, i);
        for (size_t j = 0; j < l->n; j++) {
            fputs("    ", f);
            put_cstring(f, l->words[j]);
            fputs(",\n", f);
        }
        if (l->n == 0)
            fputs("    NULL,\n", f);
        fputs("};\n\n", f);
    }
    fputs("const am_sw_list am_sw_lists[] = {\n", f);
    for (size_t i = 0; i < ls->n; i++) {
        const list *l = &ls->v[i];
        fprintf(f, "    {\"%s\", ", l->source);
        put_cstring(f, l->lang);
        fprintf(f, ", am_sw_w%zu, %zu},\n", i, l->n);
    }
    fprintf(f, "};\n\nconst size_t am_sw_nlists = %zu;\n", ls->n);
    if (fflush(f) != 0 || ferror(f) || fclose(f) != 0)
        die("cannot write %s", tmp);
    if (rename(tmp, out) != 0)
        die("cannot rename to %s: %s", out, strerror(errno));
    free(tmp);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_stopwords DATA_DIR OUT.c\n");
        return 1;
    }
    lists ls = {NULL, 0, 0};
    read_snowball(argv[1], &ls);
    read_iso(argv[1], &ls);
    if (ls.n == 0)
        die("no lists found");
    qsort(ls.v, ls.n, sizeof *ls.v, cmp_list);
    for (size_t i = 1; i < ls.n; i++)
        if (cmp_list(&ls.v[i - 1], &ls.v[i]) == 0)
            die("duplicate list %s %s", ls.v[i].source, ls.v[i].lang);
    write_output(argv[2], &ls);
    for (size_t i = 0; i < ls.n; i++) {
        for (size_t j = 0; j < ls.v[i].n; j++)
            free(ls.v[i].words[j]);
        free(ls.v[i].words);
        free(ls.v[i].lang);
    }
    free(ls.v);
    return 0;
}
