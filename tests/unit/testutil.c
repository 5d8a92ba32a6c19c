/* testutil.c — helpers shared by the cmocka unit tests (see testutil.h). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AM_SRCDIR
#define AM_SRCDIR "."
#endif

char *tu_path(const char *rel)
{
    const char *dir = getenv("AM_SRCDIR");
    if (!dir || !*dir)
        dir = AM_SRCDIR;
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

char *tu_read(const char *rel, size_t *len)
{
    char *path = tu_path(rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    free(path);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

json_t *tu_json(const char *rel)
{
    char *path = tu_path(rel);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        fail_msg("cannot load %s: %s (line %d)", path, err.text, err.line);
    free(path);
    return j;
}

void tu_sgml_load(const char *rel, am_sgml_doc *doc)
{
    size_t len, line;
    char *buf = tu_read(rel, &len);
    int rc = am_sgml_parse(buf, len, doc, &line);
    free(buf);
    if (rc != AM_OK)
        fail_msg("%s: parse error %d at line %zu", rel, rc, line);
}

void tu_gloss_load(const char *rel, am_gloss *g)
{
    size_t len;
    char *buf = tu_read(rel, &len);
    am_gloss_init(g);
    int rc = am_gloss_parse(buf, len, AM_GLOSS_AUTO, NULL, g, NULL);
    free(buf);
    if (rc != AM_OK)
        fail_msg("%s: glossary parse error %d", rel, rc);
}

void tu_tico_docs(am_sgml_doc *ref, am_sgml_doc *hyp, am_sgml_doc *src, am_gloss *g)
{
    tu_sgml_load(TU_TICO_REF, ref);
    tu_sgml_load(TU_TICO_HYP, hyp);
    tu_sgml_load(TU_TICO_SRC, src);
    tu_gloss_load("data/glossaries/tico19/f_en-fr_XX.csv", g);
}

/* The segment of doc with this id, or NULL. */
static const am_sgml_seg *seg_by_id(const am_sgml_doc *doc, const char *id)
{
    size_t k = am_sgml_find_seg(doc, id);
    return k == (size_t)-1 ? NULL : &doc->segs[k];
}

void tu_tico_load(tu_tico *t)
{
    memset(t, 0, sizeof *t);
    tu_sgml_load(TU_TICO_SRC, &t->src);
    tu_sgml_load(TU_TICO_REF, &t->ref);
    tu_sgml_load(TU_TICO_HYP, &t->hyp);
    t->n = t->ref.nsegs;
    t->segs = calloc(t->n ? t->n : 1, sizeof *t->segs);
    assert_non_null(t->segs);
    for (size_t i = 0; i < t->n; i++) {
        tu_tico_seg *s = &t->segs[i];
        s->ref_seg = &t->ref.segs[i];
        s->id = s->ref_seg->id;
        s->ref = s->ref_seg->text;
        s->src_seg = seg_by_id(&t->src, s->id);
        s->hyp_seg = seg_by_id(&t->hyp, s->id);
        s->src = s->src_seg ? s->src_seg->text : NULL;
        s->hyp = s->hyp_seg ? s->hyp_seg->text : NULL;
    }
}

void tu_tico_free(tu_tico *t)
{
    free(t->segs);
    am_sgml_free(&t->src);
    am_sgml_free(&t->ref);
    am_sgml_free(&t->hyp);
    memset(t, 0, sizeof *t);
}

void tu_assert_close_(double a, double b, double tol, const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        print_error("%s:%d: %.17g != %.17g (tol %g)\n", file, line, a, b, tol);
        _fail(file, line);
    }
}

long tu_rounds(long n)
{
    const char *vg = getenv("VALGRIND");
    if (vg && !strcmp(vg, "1"))
        return n / 10 > 0 ? n / 10 : 1;
    return n;
}

void tu_filter_from_env(void)
{
    const char *p = getenv("CMOCKA_FILTER");
    if (p && *p)
        cmocka_set_test_filter(p);
}

size_t tu_ml_lines(const char *rel, char **buf, char ***lines)
{
    size_t len = 0;
    char *b = tu_read(rel, &len);
    size_t n = 0, cap = 64;
    char **v = malloc(cap * sizeof *v);
    assert_non_null(v);
    char *p = b, *end = b + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl)
            *nl = '\0';
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[n++] = p;
        p = nl ? nl + 1 : end;
    }
    *buf = b;
    *lines = v;
    return n;
}

void tu_ml_cmd_parse(const char *command, tu_ml_cmd *c)
{
    memset(c, 0, sizeof *c);
    c->words = strdup(command);
    assert_non_null(c->words);
    char *save = NULL;
    char *w = strtok_r(c->words, " ", &save); /* "sacrebleu" */
    while ((w = strtok_r(NULL, " ", &save))) {
        if (!strcmp(w, "-i")) {
            c->hyp = strtok_r(NULL, " ", &save);
        } else if (!strcmp(w, "-m")) {
            strtok_r(NULL, " ", &save);
        } else if (w[0] == '-') {
            assert_true(c->nflags < 12);
            c->flags[c->nflags++] = w;
        } else if (c->nflags > 0 && c->flags[c->nflags - 1][0] == '-' &&
                   strstr(c->flags[c->nflags - 1], "-order")) {
            c->flags[c->nflags++] = w; /* the value of --chrf-word-order */
        } else {
            assert_true(c->nrefs < 4);
            c->refs[c->nrefs++] = w;
        }
    }
    assert_non_null(c->hyp);
}

/* 1 when the case has flag f; *val receives the next word when not NULL. */
int tu_ml_has(const tu_ml_cmd *c, const char *f, const char **val)
{
    for (size_t i = 0; i < c->nflags; i++)
        if (!strcmp(c->flags[i], f)) {
            if (val)
                *val = i + 1 < c->nflags ? c->flags[i + 1] : NULL;
            return 1;
        }
    return 0;
}

void tu_ml_files_load(json_t *golden, const json_t *cs, const tu_ml_cmd *c, tu_ml_files *f)
{
    const char *set = json_string_value(json_object_get(cs, "set"));
    json_t *st = json_object_get(json_object_get(golden, "sets"), set);
    const char *dir = json_string_value(json_object_get(st, "dir"));
    char rel[256];
    snprintf(rel, sizeof rel, "data/multilingual/%s/%s", dir, c->hyp);
    f->nseg = tu_ml_lines(rel, &f->hbuf, &f->hyp);
    f->nrefs = c->nrefs;
    for (size_t k = 0; k < c->nrefs; k++) {
        snprintf(rel, sizeof rel, "data/multilingual/%s/%s", dir, c->refs[k]);
        assert_int_equal(tu_ml_lines(rel, &f->rbuf[k], &f->ref[k]), f->nseg);
    }
}

void tu_ml_files_free(tu_ml_files *f)
{
    free(f->hbuf);
    free(f->hyp);
    for (size_t k = 0; k < f->nrefs; k++) {
        free(f->rbuf[k]);
        free(f->ref[k]);
    }
}
