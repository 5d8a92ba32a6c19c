/*
 * gen_langs.c — build-time generator of the language-code table.
 *
 *   gen_langs ISO_CODES_JSON_DIR OUT.c
 *
 * Reads ISO_CODES_JSON_DIR/iso_639-3.json and iso_639-2.json of the Debian
 * package iso-codes (entries with alpha_3, optional alpha_2 and, for the
 * ISO 639-2/B codes, bibliographic) and writes C source defining
 * am_lang_codes[] / am_lang_ncodes as declared in core/lang_data.h: every
 * two-letter code, ISO 639-2/T and 639-3 code and ISO 639-2/B code, mapped
 * to its BCP 47 primary language subtag (the two-letter code where one
 * exists, else the three-letter 639-2/T or 639-3 code), sorted by code;
 * and am_lang_names[] / am_lang_nnames: the English names of the languages
 * that have a two-letter code (ISO 639-2 names split at "; ", ISO 639-3
 * names), ASCII lower-cased, each mapped to that code, sorted by name.
 *
 * iso-codes is LGPL-2.1-or-later (/usr/share/doc/iso-codes/copyright); the
 * generated file repeats that notice. Written to OUT.c.tmp and renamed, so a
 * failed run leaves nothing behind. Exit status 0, or 1 with a message.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
    char code[4];
    char canon[4];
} pair;

typedef struct named {
    char name[80];
    char canon[4];
} named;

typedef struct table {
    pair *v;
    size_t n, cap;
    named *names;
    size_t nn, capn;
} table;

static void die(const char *msg, const char *arg)
{
    fprintf(stderr, "gen_langs: %s%s\n", msg, arg ? arg : "");
    exit(1);
}

/* A code is 2 or 3 lower-case ASCII letters. */
static int code_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || n > 3)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'a' || s[i] > 'z')
            return 0;
    return 1;
}

static void add(table *t, const char *code, const char *canon)
{
    if (!code_ok(code) || !code_ok(canon))
        return;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        if (!t->v)
            die("out of memory", NULL);
    }
    snprintf(t->v[t->n].code, sizeof t->v[t->n].code, "%s", code);
    snprintf(t->v[t->n].canon, sizeof t->v[t->n].canon, "%s", canon);
    t->n++;
}

/* Adds name (its first len bytes, lower-cased ASCII) for two-letter code
 * canon; names too long for the table are left out. */
static void add_name(table *t, const char *name, size_t len, const char *canon)
{
    while (len && name[0] == ' ') {
        name++;
        len--;
    }
    if (!len || len >= sizeof t->names[0].name || strlen(canon) != 2)
        return;
    if (t->nn == t->capn) {
        t->capn = t->capn ? 2 * t->capn : 256;
        t->names = realloc(t->names, t->capn * sizeof *t->names);
        if (!t->names)
            die("out of memory", NULL);
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        t->names[t->nn].name[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    t->names[t->nn].name[len] = '\0';
    snprintf(t->names[t->nn].canon, sizeof t->names[t->nn].canon, "%s", canon);
    t->nn++;
}

/* Adds the "; "-separated names of a language with two-letter code a2,
 * each also without its ", qualifier" or " (qualifier)" part. */
static void add_names(table *t, const char *names, const char *a2)
{
    if (!names || !a2)
        return;
    for (const char *p = names; *p;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        add_name(t, p, len, a2);
        /* "Greek, Modern (1453-)" is also "Greek" */
        size_t cut = 0;
        while (cut < len && p[cut] != ',' && p[cut] != '(')
            cut++;
        while (cut < len && cut && p[cut - 1] == ' ')
            cut--;
        if (cut < len)
            add_name(t, p, cut, a2);
        p += len;
        if (*p)
            p++;
    }
}

/* Adds the codes of one iso-codes file ({"639-3": [{alpha_3, …}]}). */
static void read_file(table *t, const char *dir, const char *name, const char *key)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *arr = json_object_get(root, key);
    if (!json_is_array(arr))
        die("not an iso-codes file: ", path);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *a3 = json_string_value(json_object_get(e, "alpha_3"));
        const char *a2 = json_string_value(json_object_get(e, "alpha_2"));
        const char *b = json_string_value(json_object_get(e, "bibliographic"));
        const char *canon = a2 ? a2 : a3;
        add(t, a3, canon);
        if (a2)
            add(t, a2, a2);
        if (b)
            add(t, b, canon);
        add_names(t, json_string_value(json_object_get(e, "name")), a2);
    }
    json_decref(root);
}

static int by_code(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    int c = strcmp(x->code, y->code);
    /* for one code, a two-letter target first */
    return c ? c : (int)strlen(x->canon) - (int)strlen(y->canon);
}

static int by_name(const void *a, const void *b)
{
    const named *x = a, *y = b;
    return strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: gen_langs ISO_CODES_JSON_DIR OUT.c", NULL);
    table t = {0};
    read_file(&t, argv[1], "iso_639-3.json", "639-3");
    read_file(&t, argv[1], "iso_639-2.json", "639-2");
    qsort(t.v, t.n, sizeof *t.v, by_code);
    qsort(t.names, t.nn, sizeof *t.names, by_name);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "w");
    if (!f)
        die("cannot write ", tmp);
    fprintf(f, "/* Generated by tools/gen_langs.c from iso-codes (iso_639-3.json, "
               "iso_639-2.json);\n"
               " * do not edit. iso-codes: Copyright the iso-codes contributors, "
               "LGPL-2.1-or-later\n"
               " * (/usr/share/doc/iso-codes/copyright). */\n"
               "#include \"lang_data.h\"\n\nconst am_lang_code am_lang_codes[] = {\n");
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (i && !strcmp(t.v[i].code, t.v[i - 1].code))
            continue; /* one mapping per code (the first: two-letter target) */
        fprintf(f, "    {\"%s\", \"%s\"},\n", t.v[i].code, t.v[i].canon);
        n++;
    }
    fprintf(f, "};\nconst size_t am_lang_ncodes = %zu;\n\nconst am_lang_name am_lang_names[] = {\n",
            n);
    size_t nn = 0;
    for (size_t i = 0; i < t.nn; i++) {
        if ((i && !strcmp(t.names[i].name, t.names[i - 1].name)) || strchr(t.names[i].name, '"') ||
            strchr(t.names[i].name, '\\'))
            continue; /* one mapping per name */
        fprintf(f, "    {\"%s\", \"%s\"},\n", t.names[i].name, t.names[i].canon);
        nn++;
    }
    fprintf(f, "};\nconst size_t am_lang_nnames = %zu;\n", nn);
    if (fclose(f) != 0 || rename(tmp, argv[2]) != 0)
        die("cannot write ", argv[2]);
    free(t.v);
    free(t.names);
    return n > 1000 && nn > 100 ? 0 : 1;
}
