/*
 * zhseg.c — Chinese word segmentation with friso (see zhseg.h).
 *
 * friso's own test program shares one friso_t between threads, each with
 * its friso_task_t, and says the configuration may be shared too. That is
 * not quite so: next_mmseg_token() stores a word's offset in the text into
 * the dictionary's own entry (lex->offset = task->idx - lex->rlen) and
 * reads it back into the task's token, so two threads segmenting the same
 * word at once could each get the other's offset. The segmenting is
 * therefore serialized per model (mu); it costs about 0.2 ms per segment,
 * small beside scoring it. The configuration is copied into every
 * workspace, so nothing else a task touches is shared.
 */
#include "zhseg.h"

#include <friso.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* friso's lexicon path buffer is 160 bytes (friso_init_from_ifile); its
 * directory argument must end with '/' */
#define AM_ZHSEG_MAX_DIR 150

struct am_zhseg {
    friso_t friso; /* owned; the dictionary, read-only after loading */
    friso_config_entry cfg; /* the settings every workspace copies */
    unsigned size;
    /* owned; held while friso segments (see above). A pointer, so that a
     * model shared as const can still be locked. */
    pthread_mutex_t *mu;
};

struct am_zhseg_ws {
    const am_zhseg *m;
    friso_config_entry cfg; /* this workspace's copy of m->cfg */
    friso_task_t task; /* owned */
    am_buf text; /* the text given to friso (friso takes a char *) */
};

/* ---- model ------------------------------------------------------------------ */

/* The fixed settings (zhseg.h): Debian's friso.ini without synonyms, with
 * unknown words kept and no secondary split of Latin words, so that
 * tokens never overlap. */
static void am_zhseg_settings(friso_config_t c)
{
    friso_init_config(c);
    c->max_len = 5;
    c->r_name = 1;
    c->mix_len = 2;
    c->lna_len = 1;
    c->add_syn = 0;
    c->clr_stw = 0;
    c->keep_urec = 1;
    c->spx_out = 0;
    c->en_sseg = 0;
    c->st_minl = 2;
    c->nthreshold = 2000000;
    memcpy(c->kpuncs, "@%.#&+", sizeof "@%.#&+");
    friso_set_mode(c, __FRISO_COMPLEX_MODE__);
}

int am_zhseg_new(const char *dicdir, am_zhseg **out, am_buf *err)
{
    if (err)
        am_buf_reset(err);
    if (!out)
        return AM_ERR_INVALID;
    *out = NULL;
    const char *dir = dicdir ? dicdir : AM_ZHSEG_DICT_DIR;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n > AM_ZHSEG_MAX_DIR) {
        if (err)
            am_buf_printf(err, "friso dictionary directory name is empty or longer than %d bytes",
                          AM_ZHSEG_MAX_DIR);
        return AM_ERR_INVALID;
    }
    char path[AM_ZHSEG_MAX_DIR + 32];
    /* friso reports a missing index on stderr only: look first */
    snprintf(path, sizeof path, "%.*s/friso.lex.ini", (int)n, dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err)
            am_buf_printf(err, "friso dictionary %s cannot be read: install friso-dict", path);
        return AM_ERR_NOTFOUND;
    }
    fclose(f);

    am_zhseg *m = am_xcalloc(1, sizeof *m);
    m->mu = am_xmalloc(sizeof *m->mu);
    pthread_mutex_init(m->mu, NULL);
    am_zhseg_settings(&m->cfg);
    m->friso = friso_new();
    m->friso->charset = FRISO_UTF8;
    m->friso->dic = friso_dic_new();
    snprintf(path, sizeof path, "%.*s/", (int)n, dir);
    /* longest word in bytes: max_len characters of 3 UTF-8 bytes each, as
     * friso_init_from_ifile computes it */
    friso_dic_load_from_ifile(m->friso, &m->cfg, path, m->cfg.max_len * 3u);
    m->size = friso_all_dic_size(m->friso->dic);
    if (m->size == 0) {
        if (err)
            am_buf_printf(err, "friso dictionary in %.*s has no word: install friso-dict", (int)n,
                          dir);
        am_zhseg_free(m);
        return AM_ERR_NOTFOUND;
    }
    *out = m;
    return AM_OK;
}

void am_zhseg_free(am_zhseg *m)
{
    if (!m)
        return;
    if (m->friso)
        friso_free(m->friso);
    pthread_mutex_destroy(m->mu);
    free(m->mu);
    free(m);
}

const char *am_zhseg_signature(const am_zhseg *m)
{
    (void)m;
    return "zh-friso-" FRISO_VERSION;
}

unsigned am_zhseg_dict_size(const am_zhseg *m)
{
    return m ? m->size : 0;
}

/* ---- workspace -------------------------------------------------------------- */

int am_zhseg_ws_new(const am_zhseg *m, am_zhseg_ws **out)
{
    if (!m || !out)
        return AM_ERR_INVALID;
    am_zhseg_ws *ws = am_xcalloc(1, sizeof *ws);
    ws->m = m;
    ws->cfg = m->cfg;
    ws->task = friso_new_task();
    am_buf_init(&ws->text);
    *out = ws;
    return AM_OK;
}

void am_zhseg_ws_free(am_zhseg_ws *ws)
{
    if (!ws)
        return;
    friso_free_task(ws->task);
    am_buf_cleanup(&ws->text);
    free(ws);
}

const am_zhseg *am_zhseg_ws_model(const am_zhseg_ws *ws)
{
    return ws ? ws->m : NULL;
}

/* ---- segmentation ----------------------------------------------------------- */

/* Appends s[a..b) to out as one token, a space before it unless first. */
static void am_zhseg_emit(am_buf *out, const char *s, size_t a, size_t b)
{
    if (out->len)
        am_buf_appendc(out, ' ');
    am_buf_append(out, s + a, b - a);
}

/* Appends the text friso left out, s[a..b), split at whitespace (Python's
 * str.isspace(), as every tokenizer of tok.h splits). */
static void am_zhseg_gap(am_buf *out, const char *s, size_t a, size_t b)
{
    while (a < b) {
        int32_t cp;
        size_t n = am_utf8_decode(s + a, b - a, &cp);
        if (am_py_isspace(cp)) {
            a += n;
            continue;
        }
        size_t e = am_py_token_end(s, b, a);
        am_zhseg_emit(out, s, a, e);
        a = e;
    }
}

/* True when byte i of s (length len) starts a UTF-8 character or is the
 * end. */
static int am_zhseg_boundary(const char *s, size_t len, size_t i)
{
    return i == len || ((unsigned char)s[i] & 0xC0) != 0x80;
}

int am_zhseg_tokenize(am_zhseg_ws *ws, const char *s, am_buf *out)
{
    if (!ws || !s || !out)
        return AM_ERR_INVALID;
    am_buf_reset(out);
    size_t len = strlen(s);
    if (len == 0)
        return AM_OK;
    am_buf_reset(&ws->text);
    am_buf_append(&ws->text, s, len);
    /* friso only reads the text and the dictionary; it takes both
     * without const. */
    friso_t friso = ws->m->friso;
    friso_set_text(ws->task, ws->text.data);
    size_t done = 0; /* end of the last token taken */
    pthread_mutex_lock(ws->m->mu);
    while (ws->cfg.next_token(friso, &ws->cfg, ws->task)) {
        const friso_token_entry *t = ws->task->token;
        /* The offsets are bytes of the text. friso 1.6.4 leaves the
         * previous word's length in a punctuation token's rlen (measured:
         * "！" after "python" has rlen 6), so punctuation is left to the
         * gap rule, as is any span that does not fit (a word longer than
         * friso's 8-bit length, a token out of order). */
        if (t->type == __LEX_PUNC_WORDS__ || t->offset < 0 || (size_t)t->offset < done ||
            t->rlen == 0)
            continue;
        size_t a = (size_t)t->offset, b = a + t->rlen;
        if (b > len || !am_zhseg_boundary(s, len, a) || !am_zhseg_boundary(s, len, b))
            continue;
        am_zhseg_gap(out, s, done, a);
        am_zhseg_emit(out, s, a, b);
        done = b;
    }
    pthread_mutex_unlock(ws->m->mu);
    am_zhseg_gap(out, s, done, len);
    return AM_OK;
}
