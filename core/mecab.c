/*
 * mecab.c — sacreBLEU's ja-mecab tokenizer over the MeCab C API (see
 * mecab.h).
 *
 * The model is created with "-r /dev/null -d DICDIR -Owakati": /dev/null as
 * the settings file keeps /etc/mecabrc (whose dicdir is a Debian
 * alternative that may point at UniDic, and which may name a user
 * dictionary) out of the result; -Owakati makes the lattice's text the
 * surface forms each followed by one space and a final newline, exactly the
 * string sacreBLEU's tagger.parse() returns.
 */
#include "mecab.h"

/* MeCab's own header is also called mecab.h, and -Icore would find ours
 * first under <mecab.h>: the Makefile passes its full path (mecab-config
 * --inc-dir), Debian's location being the fallback. */
#ifndef AM_MECAB_SYS_H
#define AM_MECAB_SYS_H "/usr/include/mecab.h"
#endif
/* It declares mecab_version() and mecab_lattice_new() without (void). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include AM_MECAB_SYS_H
#pragma GCC diagnostic pop
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct am_mecab {
    mecab_model_t *model;
    unsigned size;
    char signature[64];
};

struct am_mecab_ws {
    const am_mecab *m;
    mecab_t *tagger;
    mecab_lattice_t *lattice;
};

/* ---- model ------------------------------------------------------------------ */

/* True when charset names UTF-8 ("utf-8", "UTF8", …). */
static int charset_is_utf8(const char *cs)
{
    return cs && (am_ascii_ieq(cs, "utf-8") || am_ascii_ieq(cs, "utf8"));
}

/* Checks that the loaded dictionary is a UTF-8 IPA system dictionary with
 * no user dictionary after it, as sacreBLEU asserts. Returns AM_OK or
 * AM_ERR_INVALID with a message in err. */
static int check_dictionary(const mecab_dictionary_info_t *d, const char *dir, am_buf *err)
{
    if (!d) {
        am_buf_printf(err, "MeCab dictionary in %s: no dictionary information", dir);
        return AM_ERR_INVALID;
    }
    if (d->next) {
        am_buf_printf(err,
                      "MeCab dictionary in %s: a user dictionary is loaded; ja-mecab "
                      "needs the IPA system dictionary alone",
                      dir);
        return AM_ERR_INVALID;
    }
    if (!charset_is_utf8(d->charset)) {
        am_buf_printf(err,
                      "MeCab dictionary in %s is in %s, not UTF-8: install "
                      "mecab-ipadic-utf8 (not mecab-ipadic)",
                      dir, d->charset ? d->charset : "an unknown charset");
        return AM_ERR_INVALID;
    }
    if (d->size != AM_MECAB_IPADIC_SIZE && d->size != AM_MECAB_IPADIC_DEBIAN_SIZE) {
        am_buf_printf(err,
                      "MeCab dictionary in %s has %u entries: not the IPA dictionary "
                      "(%u entries, or %u in Debian's mecab-ipadic-utf8) that ja-mecab "
                      "requires",
                      dir, d->size, AM_MECAB_IPADIC_SIZE, AM_MECAB_IPADIC_DEBIAN_SIZE);
        return AM_ERR_INVALID;
    }
    return AM_OK;
}

int am_mecab_new(const char *dicdir, am_mecab **out, am_buf *err)
{
    am_buf scratch;
    am_buf_init(&scratch);
    if (!err)
        err = &scratch;
    am_buf_reset(err);
    if (!out) {
        am_buf_cleanup(&scratch);
        return AM_ERR_INVALID;
    }
    *out = NULL;
    if (!dicdir)
        dicdir = AM_MECAB_IPADIC_DIR;

    /* mecab_model_new takes char ** (it does not write through it). */
    char a0[] = "adaptmon", a1[] = "-r", a2[] = "/dev/null", a3[] = "-d", a5[] = "-Owakati";
    char *dir = am_xmalloc(strlen(dicdir) + 1);
    memcpy(dir, dicdir, strlen(dicdir) + 1);
    char *argv[] = {a0, a1, a2, a3, dir, a5, NULL};
    mecab_model_t *model = mecab_model_new(6, argv);
    free(dir);
    if (!model) {
        const char *why = mecab_strerror(NULL);
        am_buf_printf(err,
                      "cannot load the MeCab IPA dictionary from %s (%s): install the "
                      "Debian packages libmecab2 and mecab-ipadic-utf8",
                      dicdir, why && *why ? why : "MeCab gave no reason");
        am_buf_cleanup(&scratch);
        return AM_ERR_NOTFOUND;
    }
    const mecab_dictionary_info_t *d = mecab_model_dictionary_info(model);
    int rc = check_dictionary(d, dicdir, err);
    if (rc != AM_OK) {
        mecab_model_destroy(model);
        am_buf_cleanup(&scratch);
        return rc;
    }
    am_mecab *m = am_xcalloc(1, sizeof *m);
    m->model = model;
    m->size = d->size;
    snprintf(m->signature, sizeof m->signature, "ja-mecab-%s-IPA", mecab_version());
    *out = m;
    am_buf_cleanup(&scratch);
    return AM_OK;
}

void am_mecab_free(am_mecab *m)
{
    if (!m)
        return;
    mecab_model_destroy(m->model);
    free(m);
}

const char *am_mecab_signature(const am_mecab *m)
{
    return m ? m->signature : "ja-mecab";
}

unsigned am_mecab_dict_size(const am_mecab *m)
{
    return m ? m->size : 0;
}

/* ---- workspace -------------------------------------------------------------- */

int am_mecab_ws_new(const am_mecab *m, am_mecab_ws **out)
{
    if (!m || !out)
        return AM_ERR_INVALID;
    *out = NULL;
    /* MeCab's model functions take a non-const model; creating taggers and
     * lattices from several threads at once is what MeCab's model is for. */
    mecab_model_t *model = m->model;
    mecab_t *tagger = mecab_model_new_tagger(model);
    mecab_lattice_t *lattice = tagger ? mecab_model_new_lattice(model) : NULL;
    if (!lattice) {
        if (tagger)
            mecab_destroy(tagger);
        return AM_ERR_INTERNAL;
    }
    am_mecab_ws *ws = am_xcalloc(1, sizeof *ws);
    ws->m = m;
    ws->tagger = tagger;
    ws->lattice = lattice;
    *out = ws;
    return AM_OK;
}

void am_mecab_ws_free(am_mecab_ws *ws)
{
    if (!ws)
        return;
    mecab_lattice_destroy(ws->lattice);
    mecab_destroy(ws->tagger);
    free(ws);
}

const am_mecab *am_mecab_ws_model(const am_mecab_ws *ws)
{
    return ws ? ws->m : NULL;
}

/* ---- tokenize --------------------------------------------------------------- */

/* Narrows [*b, *e) of s to Python's str.strip(): no leading or trailing
 * str.isspace() code point. */
static void py_strip(const char *s, size_t *b, size_t *e)
{
    while (*b < *e) {
        int32_t cp;
        size_t n = am_utf8_decode(s + *b, *e - *b, &cp);
        if (n == 0 || !am_py_isspace(cp))
            break;
        *b += n;
    }
    while (*e > *b) {
        size_t start = *e - 1;
        while (start > *b && ((unsigned char)s[start] & 0xC0) == 0x80)
            start--;
        int32_t cp;
        size_t n = am_utf8_decode(s + start, *e - start, &cp);
        if (n == 0 || !am_py_isspace(cp))
            break;
        *e = start;
    }
}

int am_mecab_tokenize(am_mecab_ws *ws, const char *s, am_buf *out)
{
    if (!ws || !s || !out)
        return AM_ERR_INVALID;
    am_buf_reset(out);
    am_buf_append(out, "", 0);
    size_t b = 0, e = strlen(s);
    py_strip(s, &b, &e);
    mecab_lattice_set_sentence2(ws->lattice, s + b, e - b);
    if (!mecab_parse_lattice(ws->tagger, ws->lattice))
        return AM_ERR_INTERNAL;
    const char *r = mecab_lattice_tostr(ws->lattice);
    if (!r) {
        mecab_lattice_clear(ws->lattice);
        return AM_ERR_INTERNAL;
    }
    size_t rb = 0, re = strlen(r);
    py_strip(r, &rb, &re);
    am_buf_append(out, r + rb, re - rb);
    mecab_lattice_clear(ws->lattice);
    return AM_OK;
}
