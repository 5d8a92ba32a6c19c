/* recall.c — R0/R1/…/Rk and R0+1 over a caller-held history (see recall.h). */
#include "recall.h"

#include "mecab.h"
#include "zhseg.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Whether a normalized token is no content word by its characters alone
 * (am_recall_config.punct_only_rule says which rule). */
static int recall_nonword(const am_recall_config *cfg, const char *w)
{
    return cfg->punct_only_rule ? am_text_is_punct_sym(w) : am_text_is_nonword(w);
}

void am_recall_config_init(am_recall_config *c)
{
    memset(c, 0, sizeof *c);
    c->tokenizer = AM_TOK_INTL;
    c->tok_ctx = NULL;
    c->norm = AM_NORM_NFKC;
    c->casefold = 1;
    c->strip_tags = 1;
    c->stopwords = NULL;
    c->k = 1;
    c->background = NULL;
    c->background_ctx = NULL;
    c->rare_threshold = 0;
}

/* ---- totals ---------------------------------------------------------- */

void am_recall_totals_init(am_recall_totals *t, int k)
{
    memset(t, 0, sizeof *t);
    if (k < 0)
        k = 0;
    if (k > AM_RECALL_MAX_K)
        k = AM_RECALL_MAX_K;
    t->k = k;
}

void am_recall_totals_add(am_recall_totals *t, int64_t shot, int hit)
{
    assert(t->k >= 0 && t->k <= AM_RECALL_MAX_K);
    if (shot < 0)
        return;
    if (shot <= t->k) {
        t->r[shot].total++;
        t->r[shot].hits += hit != 0;
    }
    if (shot <= 1) {
        t->r01.total++;
        t->r01.hits += hit != 0;
    }
}

int am_recall_totals_merge(am_recall_totals *dst, const am_recall_totals *src)
{
    if (dst->k != src->k)
        return AM_ERR_INVALID;
    for (int s = 0; s <= dst->k; s++) {
        dst->r[s].hits += src->r[s].hits;
        dst->r[s].total += src->r[s].total;
    }
    dst->r01.hits += src->r01.hits;
    dst->r01.total += src->r01.total;
    return AM_OK;
}

double am_recall_score(const am_recall_count *c)
{
    if (c->total <= 0)
        return AM_RECALL_NULL;
    return (double)c->hits / (double)c->total;
}

/* ---- segment result -------------------------------------------------- */

void am_recall_seg_init(am_recall_seg *r)
{
    r->k = 0;
    am_toks_init(&r->words);
    r->shot = NULL;
    r->nsys = 0;
    r->hit = NULL;
    r->sys = NULL;
}

void am_recall_seg_cleanup(am_recall_seg *r)
{
    am_toks_cleanup(&r->words);
    free(r->shot);
    free(r->hit);
    free(r->sys);
    am_recall_seg_init(r);
}

/* ---- content words (standard profile) -------------------------------- */

static int is_ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

/* Normalizes token w (wlen bytes) as recall does: *out points at w itself
 * or at norm's text, *out_len is its length. Returns AM_OK or the
 * normalization error. */
static int norm_token(const am_recall_config *cfg, const char *w, size_t wlen, am_buf *norm,
                      const char **out, size_t *out_len)
{
    if (is_ascii(w, wlen)) {
        /* Fast path: NFC/NFKC leave ASCII unchanged and case folding
         * maps only A-Z there, exactly as utf8proc would. */
        if (cfg->casefold) {
            am_buf_reset(norm);
            am_buf_append(norm, w, wlen);
            for (size_t c = 0; c < wlen; c++)
                if (norm->data[c] >= 'A' && norm->data[c] <= 'Z')
                    norm->data[c] = (char)(norm->data[c] - 'A' + 'a');
            w = am_buf_str(norm);
        }
    } else if (cfg->norm != AM_NORM_NONE || cfg->casefold) {
        int rc = am_text_normalize(w, cfg->norm, cfg->casefold, norm);
        if (rc != AM_OK)
            return rc;
        w = am_buf_str(norm);
        wlen = norm->len;
    }
    *out = w;
    *out_len = wlen;
    return AM_OK;
}

/* Appends the content words among the tokens of `tokens` (a tokenizer's
 * output: Python-whitespace separated) to out; out unchanged on error.
 * Borrows everything. */
static int content_of_tokens(const am_recall_config *cfg, const char *tokens, am_toks *out)
{
    am_buf norm;
    am_toks toks;
    am_buf_init(&norm);
    am_toks_init(&toks);
    am_toks_split_py(&toks, tokens);
    int rc = AM_OK;
    size_t n0 = out->n;
    for (size_t i = 0; i < toks.n && rc == AM_OK; i++) {
        const char *w;
        size_t wlen;
        rc = norm_token(cfg, toks.v[i], strlen(toks.v[i]), &norm, &w, &wlen);
        if (rc != AM_OK)
            break;
        if (wlen == 0 || am_sw_contains(cfg->stopwords, w) || recall_nonword(cfg, w) ||
            am_text_is_digits(w))
            continue;
        am_toks_push(out, w, wlen);
    }
    if (rc != AM_OK) {
        /* Leave out as it was. */
        out->n = n0; /* the tokens stay in out's storage until its reset */
    }
    am_toks_cleanup(&toks);
    am_buf_cleanup(&norm);
    return rc;
}

int am_recall_content_words(const am_recall_config *cfg, const char *text, am_toks *out)
{
    if (!cfg || !text || !out)
        return AM_ERR_INVALID;
    int rc = am_text_validate(text, strlen(text), NULL);
    if (rc != AM_OK)
        return rc;
    am_buf stripped, tk;
    am_buf_init(&stripped);
    am_buf_init(&tk);
    const char *src = text;
    if (cfg->strip_tags) {
        am_text_strip_tags(text, &stripped);
        src = am_buf_str(&stripped);
    }
    rc = am_tok_tokenize_ctx(cfg->tokenizer, cfg->tok_ctx, src, &tk);
    if (rc == AM_OK)
        rc = content_of_tokens(cfg, am_buf_str(&tk), out);
    am_buf_cleanup(&tk);
    am_buf_cleanup(&stripped);
    return rc;
}

int am_recall_models_open(am_recall_config *cfg, am_recall_models *m, am_buf *err)
{
    memset(m, 0, sizeof *m);
    if (err)
        am_buf_reset(err);
    int rc = AM_OK;
    if (cfg->tokenizer == AM_TOK_JA_MECAB) {
        rc = am_mecab_new(NULL, &m->mecab, err);
        if (rc == AM_OK)
            rc = am_mecab_ws_new(m->mecab, &m->tagger);
    } else if (cfg->tokenizer == AM_TOK_ZH_FRISO) {
        rc = am_zhseg_new(NULL, &m->zhseg, err);
        if (rc == AM_OK)
            rc = am_zhseg_ws_new(m->zhseg, &m->zhws);
    } else {
        return AM_OK;
    }
    if (rc != AM_OK) {
        am_recall_models_close(m);
        return rc;
    }
    m->ctx.ja_mecab = m->tagger;
    m->ctx.zh_friso = m->zhws;
    cfg->tok_ctx = &m->ctx;
    return AM_OK;
}

void am_recall_models_close(am_recall_models *m)
{
    am_mecab_ws_free(m->tagger);
    am_mecab_free(m->mecab);
    am_zhseg_ws_free(m->zhws);
    am_zhseg_free(m->zhseg);
    memset(m, 0, sizeof *m);
}

/* Checks that t can stand for am_recall_content_words(cfg, t->text): the
 * same tokenizer, no tag stripping or other extraction in between. */
static int tok_text_fits(const am_recall_config *cfg, const am_tok_text *t)
{
    if (!t || !t->text || !t->tokens || t->kind != cfg->tokenizer || cfg->strip_tags ||
        cfg->extract)
        return AM_ERR_INVALID;
    return am_text_validate(t->text, strlen(t->text), NULL);
}

void am_tok_words_init(am_tok_words *w)
{
    memset(w, 0, sizeof *w);
    am_toks_init(&w->fold);
}

void am_tok_words_cleanup(am_tok_words *w)
{
    am_toks_cleanup(&w->fold);
    free(w->content);
    am_tok_words_init(w);
}

int am_recall_tok_words(const am_recall_config *cfg, const char *tokens, am_tok_words *out)
{
    if (!cfg || !tokens || !out)
        return AM_ERR_INVALID;
    am_toks_reset(&out->fold);
    out->norm = cfg->norm;
    out->casefold = cfg->casefold;
    out->sw = cfg->stopwords;
    am_buf norm;
    am_buf_init(&norm);
    am_toks_split_py(&out->fold, tokens); /* the raw tokens, replaced in place below */
    size_t n = out->fold.n;
    AM_GROW(out->content, out->cap, n ? n : 1, 16);
    int rc = AM_OK;
    for (size_t i = 0; i < n && rc == AM_OK; i++) {
        const char *w;
        size_t wlen;
        char *raw = out->fold.v[i];
        rc = norm_token(cfg, raw, strlen(raw), &norm, &w, &wlen);
        if (rc != AM_OK)
            break;
        if (w != raw) { /* normalized: store the new form */
            if (wlen <= strlen(raw)) {
                memcpy(raw, w, wlen + 1);
            } else {
                am_toks_push(&out->fold, w, wlen);
                out->fold.v[i] = out->fold.v[--out->fold.n];
            }
        }
        out->content[i] = wlen > 0 && !am_sw_contains(cfg->stopwords, out->fold.v[i]) &&
                          !recall_nonword(cfg, out->fold.v[i]);
    }
    am_buf_cleanup(&norm);
    if (rc != AM_OK)
        am_toks_reset(&out->fold);
    return rc;
}

/* Whether words w were computed with cfg's normalization and stopwords. */
static int words_fit(const am_recall_config *cfg, const am_tok_words *w)
{
    return w && w->norm == cfg->norm && w->casefold == cfg->casefold && w->sw == cfg->stopwords;
}

int am_recall_content_words_tok(const am_recall_config *cfg, const am_tok_text *t, am_toks *out)
{
    if (!cfg || !out)
        return AM_ERR_INVALID;
    int rc = tok_text_fits(cfg, t);
    if (rc != AM_OK)
        return rc;
    if (!words_fit(cfg, t->words))
        return content_of_tokens(cfg, t->tokens, out);
    const am_tok_words *w = t->words;
    for (size_t i = 0; i < w->fold.n; i++)
        if (w->content[i] && !am_text_is_digits(w->fold.v[i]))
            am_toks_pushs(out, w->fold.v[i]);
    return AM_OK;
}

/* ---- segment scoring ------------------------------------------------- */

/* Open-addressing set of indices into a string array (no copies). */
typedef struct idxset {
    uint32_t *slot; /* 0 = empty, else index + 1 */
    size_t mask;
    char *const *keys;
} idxset;

static void idxset_init(idxset *s, char *const *keys, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    s->slot = am_xcalloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    s->keys = keys;
}

/* Returns the index stored for key, or inserts idx (when idx != SIZE_MAX)
 * and returns SIZE_MAX when the key is absent. */
static size_t idxset_find_or_add(idxset *s, const char *key, size_t idx)
{
    size_t len = strlen(key);
    size_t i = (size_t)am_vocab_hash(key, len) & s->mask;
    for (;;) {
        uint32_t v = s->slot[i];
        if (v == 0) {
            if (idx != SIZE_MAX)
                s->slot[i] = (uint32_t)(idx + 1);
            return SIZE_MAX;
        }
        if (strcmp(s->keys[v - 1], key) == 0)
            return v - 1;
        i = (i + 1) & s->mask;
    }
}

/* Complexity (issue 15): argument checks, then the three passes of
 * docs/metrics.md (distinct words with the background filter, shots from the
 * history, hits per system) sharing the first-occurrence map word_of. */
int am_recall_segment(const am_recall_config *cfg, const am_toks *ref, const am_toks *hyps,
                      size_t nsys, am_recall_lookup_fn lookup, void *lookup_ctx, am_recall_seg *out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_recall_seg_cleanup(out);
    if (!cfg || !ref || !lookup || (nsys > 0 && !hyps) || cfg->k < 0 || cfg->k > AM_RECALL_MAX_K ||
        ref->n >= UINT32_MAX)
        return AM_ERR_INVALID;
    out->k = cfg->k;
    out->nsys = nsys;
    out->sys = am_xmalloc((nsys ? nsys : 1) * sizeof *out->sys);
    for (size_t s = 0; s < nsys; s++)
        am_recall_totals_init(&out->sys[s], cfg->k);

    /* T_i: distinct ref tokens in first-appearance order; word_of[j] maps a
     * first occurrence j to its index in out->words (SIZE_MAX: filtered). */
    idxset set;
    idxset_init(&set, ref->v, ref->n);
    size_t *word_of = am_xmalloc((ref->n ? ref->n : 1) * sizeof *word_of);
    int rc = AM_OK;
    for (size_t j = 0; j < ref->n && rc == AM_OK; j++) {
        if (idxset_find_or_add(&set, ref->v[j], j) != SIZE_MAX)
            continue; /* repeated token */
        word_of[j] = SIZE_MAX;
        if (cfg->background) {
            int64_t count = 0;
            rc = cfg->background(cfg->background_ctx, ref->v[j], &count);
            if (rc != AM_OK || count > cfg->rare_threshold)
                continue;
        }
        word_of[j] = out->words.n;
        am_toks_pushs(&out->words, ref->v[j]);
    }
    size_t n = out->words.n;
    if (rc == AM_OK) {
        out->shot = am_xmalloc((n ? n : 1) * sizeof *out->shot);
        for (size_t i = 0; i < n && rc == AM_OK; i++) {
            int64_t occ = 0;
            rc = lookup(lookup_ctx, out->words.v[i], &occ);
            if (rc == AM_OK && occ < 0)
                rc = AM_ERR_INTERNAL; /* a history count cannot be negative */
            out->shot[i] = occ;
        }
    }
    if (rc == AM_OK) {
        out->hit = am_xcalloc((n && nsys) ? n * nsys : 1, 1);
        for (size_t s = 0; s < nsys; s++) {
            unsigned char *hit = out->hit + s * n;
            for (size_t t = 0; t < hyps[s].n; t++) {
                size_t j = idxset_find_or_add(&set, hyps[s].v[t], SIZE_MAX);
                if (j != SIZE_MAX && word_of[j] != SIZE_MAX)
                    hit[word_of[j]] = 1;
            }
            for (size_t i = 0; i < n; i++)
                am_recall_totals_add(&out->sys[s], out->shot[i], hit[i]);
        }
    }
    free(word_of);
    free(set.slot);
    if (rc != AM_OK) {
        am_recall_seg_cleanup(out);
        return rc;
    }
    return AM_OK;
}

/* The content words of the translation (k == nsys) or of hypothesis k,
 * from the inputs of am_recall_score_texts or am_recall_score_tok. */
typedef struct recall_inputs {
    const char *translation;
    const char *const *hyps;
    const am_tok_text *tok_translation;
    const am_tok_text *tok_hyps;
    size_t nsys;
} recall_inputs;

static int recall_extract(const am_recall_config *cfg, const recall_inputs *in, size_t k,
                          am_toks *out)
{
    if (in->tok_translation) /* tokenized once by the caller */
        return am_recall_content_words_tok(
            cfg, k == in->nsys ? in->tok_translation : &in->tok_hyps[k], out);
    const char *text = k == in->nsys ? in->translation : in->hyps[k];
    if (!text)
        return AM_ERR_INVALID;
    return cfg->extract ? cfg->extract(cfg, text, out) : am_recall_content_words(cfg, text, out);
}

/* am_recall_segment over the content words of in's texts (one of the two
 * forms given); out is emptied first. */
static int recall_score(const am_recall_config *cfg, const recall_inputs *in,
                        am_recall_lookup_fn lookup, void *lookup_ctx, am_recall_seg *out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_recall_seg_cleanup(out);
    size_t nsys = in->nsys;
    if (!cfg || !(in->translation || in->tok_translation) ||
        (nsys > 0 && !(in->hyps || in->tok_hyps)))
        return AM_ERR_INVALID;
    am_toks ref;
    am_toks_init(&ref);
    am_toks *h = am_xmalloc((nsys ? nsys : 1) * sizeof *h);
    for (size_t s = 0; s < nsys; s++)
        am_toks_init(&h[s]);
    int rc = recall_extract(cfg, in, nsys, &ref);
    for (size_t s = 0; s < nsys && rc == AM_OK; s++)
        rc = recall_extract(cfg, in, s, &h[s]);
    if (rc == AM_OK)
        rc = am_recall_segment(cfg, &ref, h, nsys, lookup, lookup_ctx, out);
    for (size_t s = 0; s < nsys; s++)
        am_toks_cleanup(&h[s]);
    free(h);
    am_toks_cleanup(&ref);
    return rc;
}

int am_recall_score_texts(const am_recall_config *cfg, const char *translation,
                          const char *const *hyps, size_t nsys, am_recall_lookup_fn lookup,
                          void *lookup_ctx, am_recall_seg *out)
{
    recall_inputs in = {translation, hyps, NULL, NULL, nsys};
    return recall_score(cfg, &in, lookup, lookup_ctx, out);
}

int am_recall_score_tok(const am_recall_config *cfg, const am_tok_text *translation,
                        const am_tok_text *hyps, size_t nsys, am_recall_lookup_fn lookup,
                        void *lookup_ctx, am_recall_seg *out)
{
    recall_inputs in = {NULL, NULL, translation, hyps, nsys};
    return recall_score(cfg, &in, lookup, lookup_ctx, out);
}

/* ---- in-memory history ----------------------------------------------- */

int am_recall_vocab_lookup(void *ctx, const char *word, int64_t *occ_before)
{
    const am_vocab *v = ctx;
    int64_t c = 0;
    if (!am_vocab_get(v, word, &c))
        c = 0;
    *occ_before = c;
    return AM_OK;
}

int am_recall_vocab_background(void *ctx, const char *word, int64_t *count)
{
    return am_recall_vocab_lookup(ctx, word, count);
}

void am_recall_seg_commit(const am_recall_seg *r, am_vocab *hist)
{
    for (size_t i = 0; i < r->words.n; i++)
        am_vocab_add(hist, r->words.v[i], 1);
}
