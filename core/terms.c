/* terms.c — terminology consistency, standard profile (see terms.h and
 * METRICS.md §3). The code follows the order of terms.h: text pipeline,
 * term sets (compiled glossary / annotations), instances, exact and stem
 * match, partial and reorder, windows, forbidden uses, totals, preview. */
#include "terms.h"

#include <assert.h>
#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) >= (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 16;                                                          \
            while ((cap) <= (n))                                                                   \
                (cap) *= 2;                                                                        \
            (arr) = am_xrealloc((arr), (cap) * sizeof *(arr));                                     \
        }                                                                                          \
    } while (0)

#define NOPOS ((size_t)-1)

/* ---- hashing ------------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

/* ---- tokenized, normalized text ----------------------------------------- */

/* One token of a text. Strings live in the owning ttext's pool (offsets,
 * because the pool may move). fold = normalize(norm, cfg.casefold);
 * cs = normalize(norm, 0) (same offset as fold when not needed);
 * stem = Snowball stem of the case-folded form (when computed). */
typedef struct ttok {
    uint32_t fold, cs, stem;
    uint32_t hfold, hcs, hstem;
    size_t b0, b1; /* byte range in the original text */
    unsigned char content;
} ttok;

typedef struct ttext {
    am_buf tk; /* tokenizer output, split in place */
    am_buf pool; /* normalized strings, NUL-separated */
    ttok *t;
    size_t n, cap;
    size_t *st; /* scratch: token starts in tk */
    size_t cap_st;
    int have_stem;
} ttext;

static void ttext_init(ttext *x)
{
    memset(x, 0, sizeof *x);
    am_buf_init(&x->tk);
    am_buf_init(&x->pool);
}

static void ttext_cleanup(ttext *x)
{
    am_buf_cleanup(&x->tk);
    am_buf_cleanup(&x->pool);
    free(x->t);
    free(x->st);
    ttext_init(x);
}

static const char *tstr(const ttext *x, uint32_t off)
{
    return x->pool.data + off;
}

/* Appends s (NUL-terminated) to the pool; returns its offset. */
static uint32_t pool_add(am_buf *pool, const char *s, size_t n)
{
    size_t off = pool->len;
    assert(off < UINT32_MAX);
    am_buf_append(pool, s, n);
    am_buf_append(pool, "", 1);
    return (uint32_t)off;
}

/* ---- term sets: a compiled glossary or a segment's annotations ----------- */

typedef struct ltok {
    uint32_t off, hash;
} ltok;

typedef struct lseq {
    uint32_t start, n; /* into tset.tk */
} lseq;

typedef struct talt {
    lseq norm; /* in the entry's case mode */
    lseq stem; /* stems of the case-folded tokens (n = 0 without stems) */
} talt;

typedef struct tentry {
    lseq src;
    uint32_t alt0, nalt;
    unsigned char cs, forbidden;
    uint32_t next_first; /* chain in the first-token index, entry+1 or 0 */
    size_t key; /* claim key: entries with equal keys share claims */
} tentry;

typedef struct tset {
    am_buf pool;
    ltok *tk;
    size_t ntk, captk;
    tentry *e;
    size_t ne, cape;
    talt *a;
    size_t na, capa;
    int any_cs;
} tset;

static void tset_init(tset *s)
{
    memset(s, 0, sizeof *s);
    am_buf_init(&s->pool);
}

static void tset_reset(tset *s)
{
    am_buf_reset(&s->pool);
    s->ntk = s->ne = s->na = 0;
    s->any_cs = 0;
}

static void tset_cleanup(tset *s)
{
    am_buf_cleanup(&s->pool);
    free(s->tk);
    free(s->e);
    free(s->a);
    tset_init(s);
}

/* first-token index slot */
typedef struct hslot {
    uint32_t off, hash, head; /* head = entry+1, 0 = empty slot */
} hslot;

struct am_terms_lex {
    am_terms_cfg cfg;
    char stem_alg[64];
    tset set;
    hslot *slots;
    size_t nslots; /* power of two */
};

struct am_terms_ws {
    struct sb_stemmer *stemmer;
    char stem_alg[64];
    am_buf scratch, scratch2;
    ttext src, hyp, ref, tmp;
    tset ann;
    /* results and scratch arrays */
    am_terms_inst *inst;
    size_t n_inst, cap_inst;
    size_t *inst_key; /* claim key per instance */
    size_t cap_key;
    const tset **inst_set;
    size_t cap_iset;
    am_terms_dev *dev;
    size_t n_dev, cap_dev;
    am_terms_forbid *forbid;
    size_t n_forbid, cap_forbid;
    am_terms_prev *prev;
    size_t n_prev, cap_prev;
    struct hit {
        size_t entry, start, len;
    } * hits;
    size_t n_hits, cap_hits;
    struct claim {
        const tset *set;
        size_t key, pos;
    } * claims;
    size_t n_claims, cap_claims;
    unsigned char *used;
    size_t cap_used;
    size_t *ctx;
    size_t cap_ctx;
    size_t *grp;
    size_t cap_grp;
    double *mat;
    size_t cap_mat;
    am_terms_seg seg;
};

/* ---- stemmer ------------------------------------------------------------- */

/* Creates a stemmer for alg: an algorithm name or a language code; for a
 * code like "fr-FR" the primary subtag is tried too. Returns NULL if none. */
static struct sb_stemmer *stemmer_open(const char *alg, char *resolved, size_t rsz)
{
    char low[64];
    size_t n = strlen(alg);
    if (n == 0 || n >= sizeof low)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        low[i] = (alg[i] >= 'A' && alg[i] <= 'Z') ? (char)(alg[i] - 'A' + 'a') : alg[i];
    struct sb_stemmer *st = sb_stemmer_new(low, "UTF_8");
    if (!st) {
        size_t k = strcspn(low, "-_");
        if (k < n) {
            low[k] = '\0';
            st = sb_stemmer_new(low, "UTF_8");
        }
    }
    if (st && resolved) {
        size_t m = strlen(low);
        if (m >= rsz)
            m = rsz - 1;
        memcpy(resolved, low, m);
        resolved[m] = '\0';
    }
    return st;
}

static int ws_stemmer(am_terms_ws *ws, const char *alg)
{
    if (ws->stemmer && strcmp(ws->stem_alg, alg) == 0)
        return AM_OK;
    if (ws->stemmer)
        sb_stemmer_delete(ws->stemmer);
    ws->stemmer = stemmer_open(alg, NULL, 0);
    ws->stem_alg[0] = '\0';
    if (!ws->stemmer)
        return AM_ERR_NOTFOUND;
    size_t m = strlen(alg);
    if (m >= sizeof ws->stem_alg)
        m = sizeof ws->stem_alg - 1;
    memcpy(ws->stem_alg, alg, m);
    ws->stem_alg[m] = '\0';
    return AM_OK;
}

/* ---- text pipeline ------------------------------------------------------- */

/* Tokenizes and normalizes s into x. need_cs: compute the case-kept forms
 * (only when cfg->casefold, else they equal the folded ones). content:
 * compute the content-word flags (windows). Token byte ranges in s are
 * found by locating each token after the previous one. */
static int text_load(am_terms_ws *ws, const am_terms_cfg *cfg, enum am_tok_kind kind, const char *s,
                     ttext *x, int need_cs, int content)
{
    int rc = am_text_validate(s, strlen(s), NULL);
    if (rc)
        return rc;
    if ((rc = am_tok_tokenize(kind, s, &x->tk)))
        return rc;
    am_buf_reset(&x->pool);
    x->n = 0;
    x->have_stem = 0;
    /* split on Python whitespace */
    char *d = x->tk.data ? x->tk.data : (char *)(uintptr_t) "";
    size_t len = x->tk.len, i = 0, nst = 0;
    while (i < len) {
        int32_t cp;
        size_t k;
        while (i < len) {
            k = am_utf8_decode(d + i, len - i, &cp);
            if (!am_py_isspace(cp))
                break;
            i += k;
        }
        if (i >= len)
            break;
        size_t start = i;
        while (i < len) {
            k = am_utf8_decode(d + i, len - i, &cp);
            if (am_py_isspace(cp))
                break;
            i += k;
        }
        GROW(x->st, nst + 1, x->cap_st);
        x->st[nst++] = start;
        x->st[nst++] = i;
    }
    for (size_t t = 0; t < nst; t += 2)
        d[x->st[t + 1]] = '\0'; /* d has a NUL at len, so this is in bounds */
    size_t cursor = 0, slen = strlen(s);
    for (size_t t = 0; t < nst; t += 2) {
        const char *tok = d + x->st[t];
        size_t tl = x->st[t + 1] - x->st[t];
        GROW(x->t, x->n, x->cap);
        ttok *o = &x->t[x->n++];
        memset(o, 0, sizeof *o);
        /* byte range */
        size_t c = cursor;
        while (c < slen) {
            int32_t cp;
            size_t k = am_utf8_decode(s + c, slen - c, &cp);
            if (!am_py_isspace(cp))
                break;
            c += k;
        }
        if (c + tl <= slen && memcmp(s + c, tok, tl) == 0) {
            o->b0 = c;
        } else {
            const char *f = strstr(s + cursor, tok);
            o->b0 = f ? (size_t)(f - s) : cursor;
            if (!f)
                tl = 0;
        }
        o->b1 = o->b0 + tl;
        cursor = o->b1;
        /* normalized forms */
        if ((rc = am_text_normalize(tok, cfg->norm, cfg->casefold, &ws->scratch)))
            return rc;
        o->fold = pool_add(&x->pool, am_buf_str(&ws->scratch), ws->scratch.len);
        o->hfold = hash_str(am_buf_str(&ws->scratch));
        if (need_cs && cfg->casefold) {
            if ((rc = am_text_normalize(tok, cfg->norm, 0, &ws->scratch)))
                return rc;
            o->cs = pool_add(&x->pool, am_buf_str(&ws->scratch), ws->scratch.len);
            o->hcs = hash_str(am_buf_str(&ws->scratch));
        } else {
            o->cs = o->fold;
            o->hcs = o->hfold;
        }
    }
    if (content) {
        for (size_t t = 0; t < x->n; t++) {
            const char *w = tstr(x, x->t[t].fold);
            x->t[t].content = w[0] && !am_text_is_punct_sym(w) && !am_sw_contains(cfg->sw, w);
        }
    }
    return AM_OK;
}

/* Computes the stems of x's tokens with ws's stemmer (already opened). */
static int text_stems(am_terms_ws *ws, const am_terms_cfg *cfg, ttext *x)
{
    if (x->have_stem)
        return AM_OK;
    for (size_t t = 0; t < x->n; t++) {
        const char *w = tstr(x, x->t[t].fold);
        if (!cfg->casefold) {
            int rc = am_text_normalize(w, AM_NORM_NONE, 1, &ws->scratch2);
            if (rc)
                return rc;
            w = am_buf_str(&ws->scratch2);
        } else {
            am_buf_reset(&ws->scratch2);
            am_buf_appends(&ws->scratch2, w);
            w = am_buf_str(&ws->scratch2); /* the pool may move below */
        }
        const sb_symbol *r = sb_stemmer_stem(ws->stemmer, (const sb_symbol *)w, (int)strlen(w));
        if (!r)
            return AM_ERR_NOMEM;
        int rl = sb_stemmer_length(ws->stemmer);
        x->t[t].stem = pool_add(&x->pool, (const char *)r, (size_t)rl);
        x->t[t].hstem = hash_str(tstr(x, x->t[t].stem));
    }
    x->have_stem = 1;
    return AM_OK;
}

/* ---- building term sets -------------------------------------------------- */

enum { MODE_FOLD = 0, MODE_CS = 1, MODE_STEM = 2 };

/* Tokenizes s and appends its tokens in the given mode to set; *out = seq. */
static int set_add_seq(am_terms_ws *ws, const am_terms_cfg *cfg, tset *set, enum am_tok_kind kind,
                       const char *s, int mode, lseq *out)
{
    ttext *x = &ws->tmp;
    int rc = text_load(ws, cfg, kind, s, x, mode == MODE_CS, 0);
    if (rc)
        return rc;
    if (mode == MODE_STEM && (rc = text_stems(ws, cfg, x)))
        return rc;
    assert(set->ntk < UINT32_MAX);
    out->start = (uint32_t)set->ntk;
    out->n = (uint32_t)x->n;
    for (size_t t = 0; t < x->n; t++) {
        uint32_t off = mode == MODE_CS     ? x->t[t].cs
                       : mode == MODE_STEM ? x->t[t].stem
                                           : x->t[t].fold;
        const char *w = tstr(x, off);
        GROW(set->tk, set->ntk, set->captk);
        set->tk[set->ntk].off = pool_add(&set->pool, w, strlen(w));
        set->tk[set->ntk].hash = hash_str(w);
        set->ntk++;
    }
    return AM_OK;
}

/* Adds one entry (source may be NULL: no source sequence). */
static int set_add_entry(am_terms_ws *ws, const am_terms_cfg *cfg, tset *set, const char *source,
                         const char *const *targets, size_t n_targets, int cs, int forbidden,
                         int stems)
{
    int rc;
    tentry e;
    memset(&e, 0, sizeof e);
    e.cs = (cs || !cfg->casefold) ? 1 : 0;
    e.forbidden = forbidden ? 1 : 0;
    int mode = (cs && cfg->casefold) ? MODE_CS : MODE_FOLD;
    if (source && (rc = set_add_seq(ws, cfg, set, cfg->tok_src, source, mode, &e.src)))
        return rc;
    e.alt0 = (uint32_t)set->na;
    for (size_t i = 0; i < n_targets; i++) {
        talt a;
        memset(&a, 0, sizeof a);
        if ((rc = set_add_seq(ws, cfg, set, cfg->tok_tgt, targets[i], mode, &a.norm)))
            return rc;
        if (stems && (rc = set_add_seq(ws, cfg, set, cfg->tok_tgt, targets[i], MODE_STEM, &a.stem)))
            return rc;
        GROW(set->a, set->na, set->capa);
        set->a[set->na++] = a;
    }
    e.nalt = (uint32_t)n_targets;
    e.key = set->ne;
    if (mode == MODE_CS)
        set->any_cs = 1;
    GROW(set->e, set->ne, set->cape);
    set->e[set->ne++] = e;
    return AM_OK;
}

void am_terms_cfg_default(am_terms_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->tok_src = AM_TOK_INTL;
    cfg->tok_tgt = AM_TOK_INTL;
    cfg->norm = AM_NORM_NFKC;
    cfg->casefold = 1;
    cfg->sw = NULL;
    cfg->stem_match = 0;
    cfg->stem_lang = NULL;
    cfg->windows[0] = 2;
    cfg->windows[1] = 3;
    cfg->n_windows = 2;
}

static int cfg_check(const am_terms_cfg *cfg)
{
    if (!cfg || cfg->n_windows > AM_TERMS_MAX_WINDOWS)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < cfg->n_windows; i++)
        if (cfg->windows[i] == 0 || cfg->windows[i] > AM_TERMS_MAX_WINDOW)
            return AM_ERR_INVALID;
    if (cfg->stem_match && !cfg->stem_lang)
        return AM_ERR_INVALID;
    if ((unsigned)cfg->tok_src > AM_TOK_NONE || (unsigned)cfg->tok_tgt > AM_TOK_NONE)
        return AM_ERR_INVALID;
    if ((unsigned)cfg->norm > AM_NORM_NONE)
        return AM_ERR_INVALID;
    return AM_OK;
}

static void lex_index(am_terms_lex *lex)
{
    tset *s = &lex->set;
    size_t n = 16;
    while (n < 2 * s->ne + 1)
        n *= 2;
    lex->nslots = n;
    lex->slots = am_xcalloc(n, sizeof *lex->slots);
    /* reverse entry order + prepend = chains in ascending entry order */
    for (size_t k = s->ne; k-- > 0;) {
        tentry *e = &s->e[k];
        if (e->src.n == 0)
            continue;
        const ltok *f = &s->tk[e->src.start];
        size_t i = f->hash & (n - 1);
        for (;;) {
            hslot *h = &lex->slots[i];
            if (!h->head) {
                h->off = f->off;
                h->hash = f->hash;
                h->head = (uint32_t)k + 1;
                e->next_first = 0;
                break;
            }
            if (h->hash == f->hash && strcmp(s->pool.data + h->off, s->pool.data + f->off) == 0) {
                e->next_first = h->head;
                h->head = (uint32_t)k + 1;
                break;
            }
            i = (i + 1) & (n - 1);
        }
    }
}

/* Returns the first entry (+1) of the chain for word, or 0. */
static uint32_t lex_lookup(const am_terms_lex *lex, const char *w, uint32_t h)
{
    size_t n = lex->nslots, i = h & (n - 1);
    for (;;) {
        const hslot *sl = &lex->slots[i];
        if (!sl->head)
            return 0;
        if (sl->hash == h && strcmp(lex->set.pool.data + sl->off, w) == 0)
            return sl->head;
        i = (i + 1) & (n - 1);
    }
}

int am_terms_lex_build(const am_gloss *g, const am_terms_cfg *cfg, am_terms_lex **out)
{
    if (!g || !out)
        return AM_ERR_INVALID;
    int rc = cfg_check(cfg);
    if (rc)
        return rc;
    am_terms_lex *lex = am_xcalloc(1, sizeof *lex);
    lex->cfg = *cfg;
    tset_init(&lex->set);
    am_terms_ws *ws = am_terms_ws_new();
    if (cfg->stem_match) {
        struct sb_stemmer *st = stemmer_open(cfg->stem_lang, lex->stem_alg, sizeof lex->stem_alg);
        if (!st) {
            rc = AM_ERR_NOTFOUND;
            goto done;
        }
        sb_stemmer_delete(st);
        if ((rc = ws_stemmer(ws, lex->stem_alg)))
            goto done;
    }
    lex->cfg.stem_lang = lex->stem_alg;
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        rc = set_add_entry(ws, &lex->cfg, &lex->set, e->source, (const char *const *)e->targets,
                           e->n_targets, e->case_sensitive, e->forbidden, cfg->stem_match);
        if (rc)
            goto done;
    }
    lex_index(lex);
done:
    am_terms_ws_free(ws);
    if (rc) {
        am_terms_lex_free(lex);
        return rc;
    }
    *out = lex;
    return AM_OK;
}

void am_terms_lex_free(am_terms_lex *lex)
{
    if (!lex)
        return;
    tset_cleanup(&lex->set);
    free(lex->slots);
    free(lex);
}

size_t am_terms_lex_size(const am_terms_lex *lex)
{
    return lex ? lex->set.ne : 0;
}

am_terms_ws *am_terms_ws_new(void)
{
    am_terms_ws *ws = am_xcalloc(1, sizeof *ws);
    am_buf_init(&ws->scratch);
    am_buf_init(&ws->scratch2);
    ttext_init(&ws->src);
    ttext_init(&ws->hyp);
    ttext_init(&ws->ref);
    ttext_init(&ws->tmp);
    tset_init(&ws->ann);
    return ws;
}

void am_terms_ws_free(am_terms_ws *ws)
{
    if (!ws)
        return;
    if (ws->stemmer)
        sb_stemmer_delete(ws->stemmer);
    am_buf_cleanup(&ws->scratch);
    am_buf_cleanup(&ws->scratch2);
    ttext_cleanup(&ws->src);
    ttext_cleanup(&ws->hyp);
    ttext_cleanup(&ws->ref);
    ttext_cleanup(&ws->tmp);
    tset_cleanup(&ws->ann);
    free(ws->inst);
    free(ws->inst_key);
    free(ws->inst_set);
    free(ws->dev);
    free(ws->forbid);
    free(ws->prev);
    free(ws->hits);
    free(ws->claims);
    free(ws->used);
    free(ws->ctx);
    free(ws->grp);
    free(ws->mat);
    free(ws);
}

/* ---- sequence matching --------------------------------------------------- */

/* Does seq (of set) occur in x at position p, comparing the given mode? */
static int seq_at(const tset *set, lseq q, const ttext *x, size_t p, int mode)
{
    if (q.n == 0 || p + q.n > x->n)
        return 0;
    for (uint32_t k = 0; k < q.n; k++) {
        const ltok *l = &set->tk[q.start + k];
        const ttok *t = &x->t[p + k];
        uint32_t off = mode == MODE_CS ? t->cs : mode == MODE_STEM ? t->stem : t->fold;
        uint32_t h = mode == MODE_CS ? t->hcs : mode == MODE_STEM ? t->hstem : t->hfold;
        if (h != l->hash || strcmp(x->pool.data + off, set->pool.data + l->off) != 0)
            return 0;
    }
    return 1;
}

/* The longest alternative of entry e occurring at p (index within the
 * entry), or NOPOS. Stem mode compares the stem sequences. */
static size_t alt_at(const tset *set, const tentry *e, const ttext *x, size_t p, int stem)
{
    size_t best = NOPOS;
    uint32_t blen = 0;
    for (uint32_t a = 0; a < e->nalt; a++) {
        const talt *al = &set->a[e->alt0 + a];
        lseq q = stem ? al->stem : al->norm;
        int mode = stem ? MODE_STEM : e->cs ? MODE_CS : MODE_FOLD;
        if (q.n > blen && seq_at(set, q, x, p, mode)) {
            best = a;
            blen = q.n;
        }
    }
    return best;
}

static int claimed(const am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    for (size_t i = 0; i < ws->n_claims; i++)
        if (ws->claims[i].set == set && ws->claims[i].key == key && ws->claims[i].pos == pos)
            return 1;
    return 0;
}

static void claim(am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    GROW(ws->claims, ws->n_claims, ws->cap_claims);
    ws->claims[ws->n_claims].set = set;
    ws->claims[ws->n_claims].key = key;
    ws->claims[ws->n_claims].pos = pos;
    ws->n_claims++;
}

/* First position p >= 0 in x not claimed for (set, key) where an
 * alternative of e occurs; sets *alt. Returns NOPOS when none. */
static size_t find_unclaimed(const am_terms_ws *ws, const tset *set, const tentry *e, size_t key,
                             const ttext *x, int stem, size_t *alt)
{
    for (size_t p = 0; p < x->n; p++) {
        size_t a = alt_at(set, e, x, p, stem);
        if (a != NOPOS && !claimed(ws, set, key, p)) {
            *alt = a;
            return p;
        }
    }
    return NOPOS;
}

static am_terms_span mkspan(const ttext *x, size_t s, size_t e)
{
    am_terms_span sp;
    sp.tok_start = s;
    sp.tok_end = e;
    if (e > s) {
        sp.byte_start = x->t[s].b0;
        sp.byte_end = x->t[e - 1].b1;
    } else {
        sp.byte_start = sp.byte_end = 0;
    }
    return sp;
}

/* Collects the glossary source occurrences (source position ascending,
 * then entry order) into ws->hits. */
static void find_hits(am_terms_ws *ws, const am_terms_lex *lex)
{
    const tset *set = &lex->set;
    const ttext *x = &ws->src;
    ws->n_hits = 0;
    if (set->ne == 0)
        return;
    for (size_t p = 0; p < x->n; p++) {
        const ttok *t = &x->t[p];
        /* pass 0 looks the folded token up: folded entries, and
         * case-sensitive ones when the case-kept form is the same string;
         * pass 1 looks the case-kept form up (case-sensitive entries) */
        int same = t->cs == t->fold || strcmp(tstr(x, t->cs), tstr(x, t->fold)) == 0;
        for (int pass = 0; pass < (same ? 1 : 2); pass++) {
            uint32_t off = pass ? t->cs : t->fold, h = pass ? t->hcs : t->hfold;
            for (uint32_t c = lex_lookup(lex, tstr(x, off), h); c; c = set->e[c - 1].next_first) {
                const tentry *e = &set->e[c - 1];
                int mode = e->cs ? MODE_CS : MODE_FOLD;
                if ((pass == 0 && mode == MODE_CS && !same) || (pass == 1 && mode != MODE_CS))
                    continue;
                if (!seq_at(set, e->src, x, p, mode))
                    continue;
                GROW(ws->hits, ws->n_hits, ws->cap_hits);
                ws->hits[ws->n_hits].entry = c - 1;
                ws->hits[ws->n_hits].start = p;
                ws->hits[ws->n_hits].len = e->src.n;
                ws->n_hits++;
            }
        }
    }
    /* entry order within one source position: chains from two passes may
     * interleave; a stable insertion sort by (start, entry) */
    for (size_t i = 1; i < ws->n_hits; i++) {
        struct hit h = ws->hits[i];
        size_t j = i;
        while (j > 0 && (ws->hits[j - 1].start > h.start ||
                         (ws->hits[j - 1].start == h.start && ws->hits[j - 1].entry > h.entry))) {
            ws->hits[j] = ws->hits[j - 1];
            j--;
        }
        ws->hits[j] = h;
    }
}

static void push_inst(am_terms_ws *ws, const tset *set, size_t key, const am_terms_inst *in)
{
    GROW(ws->inst, ws->n_inst, ws->cap_inst);
    GROW(ws->inst_key, ws->n_inst, ws->cap_key);
    GROW(ws->inst_set, ws->n_inst, ws->cap_iset);
    ws->inst[ws->n_inst] = *in;
    ws->inst_key[ws->n_inst] = key;
    ws->inst_set[ws->n_inst] = set;
    ws->n_inst++;
}

static void push_dev(am_terms_ws *ws, enum am_terms_origin o, size_t entry, am_terms_span src)
{
    GROW(ws->dev, ws->n_dev, ws->cap_dev);
    ws->dev[ws->n_dev].origin = o;
    ws->dev[ws->n_dev].entry = entry;
    ws->dev[ws->n_dev].src = src;
    ws->n_dev++;
}

static void inst_blank(am_terms_inst *in)
{
    memset(in, 0, sizeof *in);
    in->alt = NOPOS;
    in->hyp_alt = NOPOS;
    for (size_t w = 0; w < AM_TERMS_MAX_WINDOWS; w++)
        in->window[w] = NAN;
}

/* Places an instance of entry k of set in the translation (first unclaimed
 * occurrence); a deviation when none. */
static void place(am_terms_ws *ws, const tset *set, size_t k, enum am_terms_origin o,
                  am_terms_span src)
{
    const tentry *e = &set->e[k];
    size_t alt;
    size_t p = find_unclaimed(ws, set, e, e->key, &ws->ref, 0, &alt);
    if (p == NOPOS) {
        push_dev(ws, o, k, src);
        return;
    }
    claim(ws, set, e->key, p);
    am_terms_inst in;
    inst_blank(&in);
    in.origin = o;
    in.entry = k;
    in.alt = alt;
    in.src = src;
    in.ref = mkspan(&ws->ref, p, p + set->a[e->alt0 + alt].norm.n);
    push_inst(ws, set, e->key, &in);
}

/* Annotation k with a byte span: the tokens overlapping it. */
static void place_span(am_terms_ws *ws, const tset *set, size_t k, const am_terms_annot *an)
{
    const ttext *x = &ws->ref;
    size_t s = NOPOS, end = 0;
    for (size_t t = 0; t < x->n; t++) {
        size_t b0 = x->t[t].b0, b1 = x->t[t].b1;
        int ov = b1 > b0 ? (b0 < an->span_end && b1 > an->span_start)
                         : (b0 >= an->span_start && b0 < an->span_end);
        if (ov) {
            if (s == NOPOS)
                s = t;
            end = t + 1;
        }
    }
    am_terms_span none;
    memset(&none, 0, sizeof none);
    if (s == NOPOS) {
        push_dev(ws, AM_TERMS_ANNOTATION, k, none);
        return;
    }
    const tentry *e = &set->e[k];
    am_terms_inst in;
    inst_blank(&in);
    in.origin = AM_TERMS_ANNOTATION;
    in.entry = k;
    for (uint32_t a = 0; a < e->nalt; a++) {
        lseq q = set->a[e->alt0 + a].norm;
        if (q.n == end - s && seq_at(set, q, x, s, e->cs ? MODE_CS : MODE_FOLD)) {
            in.alt = a;
            break;
        }
    }
    in.ref = mkspan(x, s, end);
    claim(ws, set, e->key, s);
    push_inst(ws, set, e->key, &in);
}

/* ---- partial and reorder ------------------------------------------------- */

static void used_reset(am_terms_ws *ws, size_t n)
{
    GROW(ws->used, n, ws->cap_used);
    memset(ws->used, 0, n ? n : 1);
}

static int tok_eq(const tset *set, const ltok *l, const ttext *x, size_t i, int cs)
{
    const ttok *t = &x->t[i];
    uint32_t off = cs ? t->cs : t->fold, h = cs ? t->hcs : t->hfold;
    return h == l->hash && strcmp(x->pool.data + off, set->pool.data + l->off) == 0;
}

static void partial_reorder(am_terms_ws *ws, const tset *set, const tentry *e, am_terms_inst *in,
                            size_t nref)
{
    const ttext *h = &ws->hyp;
    double best_p = 0, best_r = 0;
    size_t s = in->ref.tok_start, L = in->ref.tok_end - in->ref.tok_start;
    for (uint32_t a = 0; a < e->nalt; a++) {
        lseq q = set->a[e->alt0 + a].norm;
        if (q.n == 0)
            continue;
        /* partial: words found, each hypothesis token used once */
        used_reset(ws, h->n);
        size_t found = 0;
        for (uint32_t k = 0; k < q.n; k++) {
            for (size_t i = 0; i < h->n; i++) {
                if (!ws->used[i] && tok_eq(set, &set->tk[q.start + k], h, i, e->cs)) {
                    ws->used[i] = 1;
                    found++;
                    break;
                }
            }
        }
        double pv = (double)found / q.n;
        if (pv > best_p)
            best_p = pv;
        /* reorder: best-weighted unused position per word */
        used_reset(ws, h->n);
        double sum = 0;
        for (uint32_t k = 0; k < q.n; k++) {
            size_t j = s + (k < L ? k : L - 1);
            double rj = (double)j / (double)nref;
            size_t bi = NOPOS;
            double bw = -1;
            for (size_t i = 0; i < h->n; i++) {
                if (ws->used[i] || !tok_eq(set, &set->tk[q.start + k], h, i, e->cs))
                    continue;
                double wgt = 1.0 - fabs((double)i / (double)h->n - rj);
                if (wgt > bw) {
                    bw = wgt;
                    bi = i;
                }
            }
            if (bi != NOPOS) {
                ws->used[bi] = 1;
                sum += bw;
            }
        }
        double rv = sum / q.n;
        if (rv > best_r)
            best_r = rv;
    }
    in->partial = in->match == AM_TERMS_EXACT ? 1.0 : best_p;
    in->reorder = best_r;
}

/* ---- window overlap ------------------------------------------------------ */

/* Writes the context token indices of span [a, b) of x into ws->ctx from
 * offset `at`; returns their count (<= 2w). */
static size_t context(am_terms_ws *ws, const ttext *x, size_t a, size_t b, size_t w, size_t at)
{
    GROW(ws->ctx, at + 2 * w, ws->cap_ctx);
    size_t n = 0;
    for (size_t i = a; i-- > 0 && n < w;)
        if (x->t[i].content)
            ws->ctx[at + n++] = i;
    size_t r = 0;
    for (size_t i = b; i < x->n && r < w; i++)
        if (x->t[i].content) {
            ws->ctx[at + n + r] = i;
            r++;
        }
    return n + r;
}

/* |multiset ∩| / |reference context|; the contexts are in ws->ctx. */
static double overlap(am_terms_ws *ws, size_t r0, size_t rn, size_t h0, size_t hn)
{
    const ttext *r = &ws->ref, *h = &ws->hyp;
    unsigned char used[2 * AM_TERMS_MAX_WINDOW];
    assert(rn > 0);
    memset(used, 0, sizeof used);
    size_t common = 0;
    for (size_t i = 0; i < rn; i++) {
        const ttok *rt = &r->t[ws->ctx[r0 + i]];
        for (size_t j = 0; j < hn && j < sizeof used; j++) {
            const ttok *ht = &h->t[ws->ctx[h0 + j]];
            if (!used[j] && ht->hfold == rt->hfold &&
                strcmp(tstr(h, ht->fold), tstr(r, rt->fold)) == 0) {
                used[j] = 1;
                common++;
                break;
            }
        }
    }
    return (double)common / (double)rn;
}

static void windows(am_terms_ws *ws, const am_terms_cfg *cfg)
{
    size_t n = ws->n_inst;
    GROW(ws->grp, 2 * n + 1, ws->cap_grp);
    for (size_t wi = 0; wi < cfg->n_windows; wi++) {
        size_t w = cfg->windows[wi];
        assert(w <= AM_TERMS_MAX_WINDOW);
        /* group exact-matched instances by claim key */
        used_reset(ws, n);
        unsigned char *done = ws->used;
        for (size_t i = 0; i < n; i++) {
            if (done[i] || ws->inst[i].match != AM_TERMS_EXACT)
                continue;
            size_t *g = ws->grp, ng = 0;
            for (size_t j = i; j < n; j++) {
                if (!done[j] && ws->inst[j].match == AM_TERMS_EXACT &&
                    ws->inst_set[j] == ws->inst_set[i] && ws->inst_key[j] == ws->inst_key[i]) {
                    g[ng++] = j;
                    done[j] = 1;
                }
            }
            /* contexts: reference of each instance, hypothesis of each
             * claimed occurrence; ws->ctx layout: [ref_0 … ref_ng-1][hyp_0 …] */
            size_t per = 2 * w;
            GROW(ws->ctx, 2 * ng * per + 1, ws->cap_ctx);
            size_t *rn = g + ng; /* grp's upper half: reference context sizes */
            GROW(ws->mat, ng * ng + 2 * ng + 1, ws->cap_mat);
            double *hn = ws->mat + ng * ng; /* hypothesis context sizes */
            for (size_t k = 0; k < ng; k++) {
                const am_terms_inst *in = &ws->inst[g[k]];
                rn[k] = context(ws, &ws->ref, in->ref.tok_start, in->ref.tok_end, w, k * per);
                hn[k] = (double)context(ws, &ws->hyp, in->hyp.tok_start, in->hyp.tok_end, w,
                                        (ng + k) * per);
            }
            double *m = ws->mat;
            for (size_t a = 0; a < ng; a++)
                for (size_t b = 0; b < ng; b++)
                    m[a * ng + b] =
                        rn[a] ? overlap(ws, a * per, rn[a], (ng + b) * per, (size_t)hn[b]) : -1.0;
            /* greedy pairing by best overlap; instances with an empty
             * reference context are left out */
            double *taken = hn + ng; /* 1 = occurrence taken */
            for (size_t k = 0; k < ng; k++)
                taken[k] = 0;
            for (;;) {
                size_t ba = NOPOS, bb = NOPOS;
                double bv = -1;
                for (size_t a = 0; a < ng; a++) {
                    if (!rn[a] || !isnan(ws->inst[g[a]].window[wi]))
                        continue;
                    for (size_t b = 0; b < ng; b++)
                        if (taken[b] == 0 && m[a * ng + b] > bv) {
                            bv = m[a * ng + b];
                            ba = a;
                            bb = b;
                        }
                }
                if (ba == NOPOS)
                    break;
                ws->inst[g[ba]].window[wi] = bv;
                taken[bb] = 1;
            }
        }
    }
}

/* ---- totals -------------------------------------------------------------- */

void am_terms_totals_init(am_terms_totals *t, const am_terms_cfg *cfg)
{
    memset(t, 0, sizeof *t);
    if (cfg) {
        t->n_windows =
            cfg->n_windows <= AM_TERMS_MAX_WINDOWS ? cfg->n_windows : AM_TERMS_MAX_WINDOWS;
        for (size_t i = 0; i < t->n_windows; i++)
            t->windows[i] = cfg->windows[i];
    }
}

int am_terms_totals_add(am_terms_totals *dst, const am_terms_totals *src)
{
    if (dst->n_windows != src->n_windows)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < dst->n_windows; i++)
        if (dst->windows[i] != src->windows[i])
            return AM_ERR_INVALID;
    dst->instances += src->instances;
    dst->exact += src->exact;
    dst->stem += src->stem;
    dst->deviations += src->deviations;
    dst->forbidden += src->forbidden;
    dst->partial_sum += src->partial_sum;
    dst->reorder_sum += src->reorder_sum;
    for (size_t i = 0; i < dst->n_windows; i++) {
        dst->win_sum[i] += src->win_sum[i];
        dst->win_count[i] += src->win_count[i];
    }
    return AM_OK;
}

void am_terms_totals_scores(const am_terms_totals *t, am_terms_scores *out)
{
    double n = (double)t->instances;
    out->exact = t->instances ? (double)t->exact / n : NAN;
    out->exact_or_stem = t->instances ? (double)(t->exact + t->stem) / n : NAN;
    out->partial = t->instances ? t->partial_sum / n : NAN;
    out->reorder = t->instances ? t->reorder_sum / n : NAN;
    for (size_t i = 0; i < AM_TERMS_MAX_WINDOWS; i++)
        out->window[i] =
            (i < t->n_windows && t->win_count[i]) ? t->win_sum[i] / (double)t->win_count[i] : NAN;
}

/* ---- scoring ------------------------------------------------------------- */

static void reset_results(am_terms_ws *ws)
{
    ws->n_inst = ws->n_dev = ws->n_forbid = ws->n_claims = ws->n_hits = ws->n_prev = 0;
}

/* Annotations → ws->ann (claim keys shared by identical target lists). */
static int load_annots(am_terms_ws *ws, const am_terms_cfg *cfg, const am_terms_annot *an, size_t n)
{
    tset_reset(&ws->ann);
    for (size_t k = 0; k < n; k++) {
        if (!an[k].targets || an[k].n_targets == 0)
            return AM_ERR_INVALID;
        for (size_t t = 0; t < an[k].n_targets; t++)
            if (!an[k].targets[t])
                return AM_ERR_INVALID;
        int rc = set_add_entry(ws, cfg, &ws->ann, NULL, an[k].targets, an[k].n_targets,
                               an[k].case_sensitive, 0, cfg->stem_match);
        if (rc)
            return rc;
        for (size_t j = 0; j < k; j++) {
            if (an[j].n_targets != an[k].n_targets ||
                !an[j].case_sensitive != !an[k].case_sensitive)
                continue;
            size_t t = 0;
            while (t < an[k].n_targets && strcmp(an[j].targets[t], an[k].targets[t]) == 0)
                t++;
            if (t == an[k].n_targets) {
                ws->ann.e[k].key = ws->ann.e[j].key;
                break;
            }
        }
    }
    return AM_OK;
}

/* Forbidden uses: entries of ws->hits that are forbidden, once per entry. */
static void forbidden_uses(am_terms_ws *ws, const am_terms_lex *lex)
{
    const tset *set = &lex->set;
    for (size_t i = 0; i < ws->n_hits; i++) {
        size_t k = ws->hits[i].entry;
        if (!set->e[k].forbidden)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            if (ws->hits[j].entry == k)
                seen = 1;
        if (seen)
            continue;
        const tentry *e = &set->e[k];
        for (size_t p = 0; p < ws->hyp.n;) {
            size_t a = alt_at(set, e, &ws->hyp, p, 0);
            if (a == NOPOS) {
                p++;
                continue;
            }
            size_t len = set->a[e->alt0 + a].norm.n;
            GROW(ws->forbid, ws->n_forbid, ws->cap_forbid);
            ws->forbid[ws->n_forbid].entry = k;
            ws->forbid[ws->n_forbid].alt = a;
            ws->forbid[ws->n_forbid].hyp = mkspan(&ws->hyp, p, p + len);
            ws->n_forbid++;
            p += len;
        }
    }
}

static int need_cs(const am_terms_lex *lex, const tset *ann)
{
    return lex->cfg.casefold && (lex->set.any_cs || (ann && ann->any_cs));
}

int am_terms_score(am_terms_ws *ws, const am_terms_lex *lex, const char *src, const char *hyp,
                   const char *ref, const am_terms_annot *annots, size_t n_annots,
                   const am_terms_seg **out)
{
    if (!ws || !lex || !src || !hyp || !ref || !out || (n_annots && !annots))
        return AM_ERR_INVALID;
    const am_terms_cfg *cfg = &lex->cfg;
    int rc;
    reset_results(ws);
    if (cfg->stem_match && (rc = ws_stemmer(ws, lex->stem_alg)))
        return rc;
    if (n_annots && (rc = load_annots(ws, cfg, annots, n_annots)))
        return rc;
    int cs = need_cs(lex, n_annots ? &ws->ann : NULL);
    if ((rc = text_load(ws, cfg, cfg->tok_src, src, &ws->src, lex->set.any_cs && cfg->casefold, 0)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, ref, &ws->ref, cs, 1)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, hyp, &ws->hyp, cs, 1)))
        return rc;

    /* instances */
    find_hits(ws, lex);
    if (n_annots) {
        am_terms_span none;
        memset(&none, 0, sizeof none);
        for (size_t k = 0; k < n_annots; k++)
            if (annots[k].has_span)
                place_span(ws, &ws->ann, k, &annots[k]);
        for (size_t k = 0; k < n_annots; k++)
            if (!annots[k].has_span)
                place(ws, &ws->ann, k, AM_TERMS_ANNOTATION, none);
    } else {
        for (size_t i = 0; i < ws->n_hits; i++) {
            size_t k = ws->hits[i].entry;
            if (lex->set.e[k].forbidden)
                continue;
            place(ws, &lex->set, k, AM_TERMS_GLOSSARY,
                  mkspan(&ws->src, ws->hits[i].start, ws->hits[i].start + ws->hits[i].len));
        }
    }

    /* exact match, then stem match; hypothesis claims are separate from the
     * translation's (different text) */
    size_t ref_claims = ws->n_claims;
    ws->n_claims = 0;
    (void)ref_claims;
    for (int stem = 0; stem < 2; stem++) {
        if (stem && !cfg->stem_match)
            break;
        if (stem && (rc = text_stems(ws, cfg, &ws->hyp)))
            return rc;
        for (size_t i = 0; i < ws->n_inst; i++) {
            am_terms_inst *in = &ws->inst[i];
            if (in->match != AM_TERMS_NONE)
                continue;
            const tset *set = ws->inst_set[i];
            const tentry *e = &set->e[in->entry];
            size_t alt;
            size_t p = find_unclaimed(ws, set, e, ws->inst_key[i], &ws->hyp, stem, &alt);
            if (p == NOPOS)
                continue;
            claim(ws, set, ws->inst_key[i], p);
            const talt *al = &set->a[e->alt0 + alt];
            in->match = stem ? AM_TERMS_STEM : AM_TERMS_EXACT;
            in->hyp_alt = alt;
            in->hyp = mkspan(&ws->hyp, p, p + (stem ? al->stem.n : al->norm.n));
        }
    }
    for (size_t i = 0; i < ws->n_inst; i++) {
        const tset *set = ws->inst_set[i];
        partial_reorder(ws, set, &set->e[ws->inst[i].entry], &ws->inst[i], ws->ref.n);
    }
    windows(ws, cfg);
    forbidden_uses(ws, lex);

    /* totals */
    am_terms_seg *sg = &ws->seg;
    memset(sg, 0, sizeof *sg);
    am_terms_totals_init(&sg->totals, cfg);
    am_terms_totals *t = &sg->totals;
    for (size_t i = 0; i < ws->n_inst; i++) {
        const am_terms_inst *in = &ws->inst[i];
        t->instances++;
        t->exact += in->match == AM_TERMS_EXACT;
        t->stem += in->match == AM_TERMS_STEM;
        t->partial_sum += in->partial;
        t->reorder_sum += in->reorder;
        for (size_t w = 0; w < t->n_windows; w++)
            if (!isnan(in->window[w])) {
                t->win_sum[w] += in->window[w];
                t->win_count[w]++;
            }
    }
    t->deviations = ws->n_dev;
    t->forbidden = ws->n_forbid;
    am_terms_totals_scores(t, &sg->scores);
    sg->inst = ws->inst;
    sg->n_inst = ws->n_inst;
    sg->dev = ws->dev;
    sg->n_dev = ws->n_dev;
    sg->forbid = ws->forbid;
    sg->n_forbid = ws->n_forbid;
    sg->n_hyp_tokens = ws->hyp.n;
    sg->n_ref_tokens = ws->ref.n;
    *out = sg;
    return AM_OK;
}

int am_terms_preview(am_terms_ws *ws, const am_terms_lex *lex, const char *src, const char *hyp,
                     const am_terms_prev **out, size_t *n)
{
    if (!ws || !lex || !src || !hyp || !out || !n)
        return AM_ERR_INVALID;
    const am_terms_cfg *cfg = &lex->cfg;
    int rc;
    reset_results(ws);
    if (cfg->stem_match && (rc = ws_stemmer(ws, lex->stem_alg)))
        return rc;
    int cs = need_cs(lex, NULL);
    if ((rc = text_load(ws, cfg, cfg->tok_src, src, &ws->src, cs, 0)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, hyp, &ws->hyp, cs, 0)))
        return rc;
    find_hits(ws, lex);
    const tset *set = &lex->set;
    for (int stem = 0; stem < 2; stem++) {
        if (stem && !cfg->stem_match)
            break;
        if (stem && (rc = text_stems(ws, cfg, &ws->hyp)))
            return rc;
        for (size_t i = 0; i < ws->n_hits; i++) {
            size_t k = ws->hits[i].entry;
            const tentry *e = &set->e[k];
            if (!stem) {
                GROW(ws->prev, ws->n_prev, ws->cap_prev);
                am_terms_prev *pv = &ws->prev[ws->n_prev++];
                memset(pv, 0, sizeof *pv);
                pv->entry = k;
                pv->forbidden = e->forbidden;
                pv->src = mkspan(&ws->src, ws->hits[i].start, ws->hits[i].start + ws->hits[i].len);
                pv->used = AM_TERMS_NONE;
                pv->alt = NOPOS;
            }
            am_terms_prev *pv = &ws->prev[i];
            if (pv->used != AM_TERMS_NONE || (stem && e->forbidden))
                continue;
            size_t alt;
            size_t p = find_unclaimed(ws, set, e, e->key, &ws->hyp, stem, &alt);
            if (p == NOPOS)
                continue;
            claim(ws, set, e->key, p);
            const talt *al = &set->a[e->alt0 + alt];
            pv->used = stem ? AM_TERMS_STEM : AM_TERMS_EXACT;
            pv->alt = alt;
            pv->hyp = mkspan(&ws->hyp, p, p + (stem ? al->stem.n : al->norm.n));
        }
    }
    *out = ws->prev;
    *n = ws->n_prev;
    return AM_OK;
}
