/* terms.c — terminology consistency, standard profile (see terms.h and
 * docs/metrics.md §3). The code follows the order of terms.h: text pipeline,
 * term sets (compiled glossary / annotations), instances, exact and stem
 * match, partial and reorder, windows, forbidden uses, totals, preview. */
#include "terms.h"
#include "recall.h"

#include <assert.h>
#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOPOS ((size_t)-1)

/* ---- hashing ------------------------------------------------------------- */

/* 32-bit FNV-1a of the NUL-terminated s */
static uint32_t hash_str(const char *s)
{
    return am_fnv1a32_n(AM_FNV32_BASIS, s, strlen(s));
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
    uint32_t node; /* the sequence's node in the set's trie (0 when n = 0) */
} lseq;

typedef struct talt {
    lseq norm; /* in the entry's case mode */
    lseq stem; /* stems of the case-folded tokens (n = 0 without stems) */
} talt;

typedef struct tentry {
    lseq src;
    uint32_t alt0, nalt;
    unsigned char cs, forbidden;
    uint32_t next_src; /* chain of entries with the same source node, entry+1 or 0 */
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
    /* token trie over every sequence of the set (tset_index): tokens are
     * interned by string (tkid: token id of each tk), edges (node, token
     * id) → child live in one open-addressing table; node 0 is the root */
    uint32_t *tid; /* string slots: index into tk + 1, 0 = empty */
    size_t ntid_slots, cap_tid_slots;
    uint32_t *tkid; /* per tk: token id (= index of its first equal tk) */
    size_t cap_tkid;
    struct tedge {
        uint32_t node, tok, child; /* child 0 = empty slot */
    } * edge;
    size_t nedge_slots, cap_edge_slots;
    uint32_t *shead; /* per node: first entry (+1) whose source ends here */
    unsigned char *nflag; /* per node: NODE_ALT when an alternative ends here */
    size_t nnodes, cap_nodes;
    int fold_src, cs_src; /* some entry has a source compared folded / case-kept */
} tset;

enum { NODE_ALT = 1 };
#define NOID ((uint32_t)-1)

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
    s->ntid_slots = s->nedge_slots = s->nnodes = 0;
    s->fold_src = s->cs_src = 0;
}

static void tset_cleanup(tset *s)
{
    am_buf_cleanup(&s->pool);
    free(s->tk);
    free(s->e);
    free(s->a);
    free(s->tid);
    free(s->tkid);
    free(s->edge);
    free(s->shead);
    free(s->nflag);
    tset_init(s);
}

struct am_terms_lex {
    am_terms_cfg cfg;
    char stem_alg[64];
    tset set;
};

/* u64 → u64 open-addressing map (claims, cursors); EMPTY keys are free. */
#define MAP_EMPTY UINT64_MAX
typedef struct u64map {
    uint64_t *k, *v;
    size_t cap, n; /* cap: power of two or 0 */
} u64map;

/* A text seen through one term set in one comparison mode: the token ids
 * (NOID: not in the set), the occurrences of the set's alternatives
 * (node << 32 | start, sorted) and the token positions (id << 32 | index,
 * sorted). Built on demand, dropped at the next call. */
typedef struct tview {
    const tset *set;
    const ttext *x;
    int mode, live, have_occ, have_pos;
    uint32_t *ids;
    size_t cap_ids;
    uint64_t *occ;
    size_t n_occ, cap_occ;
    uint64_t *pos;
    size_t n_pos, cap_pos;
} tview;
#define NVIEWS 20 /* 2 sets × 3 texts × 3 modes, and spare */

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
    unsigned char *used;
    size_t cap_used;
    size_t *ctx;
    size_t cap_ctx;
    size_t *grp;
    size_t cap_grp;
    double *mat;
    size_t cap_mat;
    am_terms_seg seg;
    uint64_t steps; /* work counter (see am_terms_ws_steps) */
    size_t max_occ; /* occurrence limit, 0 = AM_TERMS_MAX_OCCURRENCES */
    u64map claimset; /* claimed (set, key, pos) */
    u64map cursor; /* (set, text, stem, key) → first position not yet passed */
    u64map seen; /* forbidden entries already scanned */
    tview view[NVIEWS];
    uint64_t *rs; /* radix sort scratch */
    size_t cap_rs;
    uint64_t *keys; /* sort keys (hits, window groups) */
    size_t cap_keys;
    am_cancel *cancel; /* borrowed, NULL: never cancelled */
    uint64_t cancel_mark; /* steps already reported to cancel */
};

void am_terms_ws_set_cancel(am_terms_ws *ws, am_cancel *cancel)
{
    ws->cancel = cancel;
}

/* Reports the steps done since the last report to the cancellation check;
 * non-zero when the work must stop. */
static int cancelled(am_terms_ws *ws)
{
    uint64_t d = ws->steps - ws->cancel_mark;
    ws->cancel_mark = ws->steps;
    return am_cancel_spend(ws->cancel, 16 * d + 1);
}

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

/* Whether the code point at s[i] (i < len) is Python whitespace; its byte
 * length in *n (am_utf8_decode's). ASCII without a call. */
static int py_space_at(const char *s, size_t len, size_t i, size_t *n)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *n = 1;
        return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    }
    int32_t cp;
    *n = am_utf8_decode(s + i, len - i, &cp);
    return am_py_isspace(cp);
}

/* Tokenizes and normalizes s into x. need_cs: compute the case-kept forms
 * (only when cfg->casefold, else they equal the folded ones). content:
 * compute the content-word flags (windows). Token byte ranges in s are
 * found by locating each token after the previous one. words (borrowed,
 * may be NULL): the tokens' folded forms and content flags computed once
 * for recall, taken instead of computing them when they were made with
 * cfg's normalization and stopwords (the same forms and flags:
 * am_tok_words). */
static int text_load(am_terms_ws *ws, const am_terms_cfg *cfg, enum am_tok_kind kind, const char *s,
                     const char *tokens, const am_tok_words *words, ttext *x, int need_cs,
                     int content)
{
    int rc = am_text_validate(s, strlen(s), NULL);
    if (rc)
        return rc;
    if (tokens) { /* am_tok_tokenize(kind, s), done by the caller */
        am_buf_reset(&x->tk);
        am_buf_append(&x->tk, tokens, strlen(tokens));
    } else if ((rc = am_tok_tokenize(kind, s, &x->tk))) {
        return rc;
    }
    am_buf_reset(&x->pool);
    x->n = 0;
    x->have_stem = 0;
    /* split on Python whitespace */
    char *d = x->tk.data ? x->tk.data : (char *)(uintptr_t) "";
    size_t len = x->tk.len, i = 0, nst = 0;
    while (i < len) {
        size_t k;
        while (i < len && py_space_at(d, len, i, &k))
            i += k;
        if (i >= len)
            break;
        size_t start = i;
        i = am_py_token_end(d, len, i);
        AM_GROW(x->st, x->cap_st, nst + 2, 16);
        x->st[nst++] = start;
        x->st[nst++] = i;
    }
    for (size_t t = 0; t < nst; t += 2)
        d[x->st[t + 1]] = '\0'; /* d has a NUL at len, so this is in bounds */
    if (words && !(words->norm == cfg->norm && words->casefold == cfg->casefold &&
                   words->sw == cfg->sw && words->fold.n == nst / 2))
        words = NULL;
    size_t cursor = 0, slen = strlen(s);
    for (size_t t = 0; t < nst; t += 2) {
        const char *tok = d + x->st[t];
        size_t tl = x->st[t + 1] - x->st[t];
        AM_GROW(x->t, x->cap, x->n + 1, 16);
        ttok *o = &x->t[x->n++];
        memset(o, 0, sizeof *o);
        /* byte range */
        size_t c = cursor, k;
        while (c < slen && py_space_at(s, slen, c, &k))
            c += k;
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
        if (words) {
            const char *f = words->fold.v[t / 2];
            o->fold = pool_add(&x->pool, f, strlen(f));
            o->hfold = hash_str(f);
        } else {
            if ((rc = am_text_normalize(tok, cfg->norm, cfg->casefold, &ws->scratch)))
                return rc;
            o->fold = pool_add(&x->pool, am_buf_str(&ws->scratch), ws->scratch.len);
            o->hfold = hash_str(am_buf_str(&ws->scratch));
        }
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
    if (content && words) {
        for (size_t t = 0; t < x->n; t++)
            x->t[t].content = words->content[t];
    } else if (content) {
        for (size_t t = 0; t < x->n; t++) {
            const char *w = tstr(x, x->t[t].fold);
            x->t[t].content =
                w[0] && !(cfg->punct_only_rule ? am_text_is_punct_sym(w) : am_text_is_nonword(w)) &&
                !am_sw_contains(cfg->sw, w);
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
    int rc = text_load(ws, cfg, kind, s, NULL, NULL, x, mode == MODE_CS, 0);
    if (rc)
        return rc;
    if (mode == MODE_STEM && (rc = text_stems(ws, cfg, x)))
        return rc;
    if (x->n > AM_TERMS_MAX_TERM_TOKENS)
        return AM_ERR_RANGE;
    assert(set->ntk < UINT32_MAX);
    out->start = (uint32_t)set->ntk;
    out->n = (uint32_t)x->n;
    out->node = 0;
    for (size_t t = 0; t < x->n; t++) {
        uint32_t off = mode == MODE_CS     ? x->t[t].cs
                       : mode == MODE_STEM ? x->t[t].stem
                                           : x->t[t].fold;
        const char *w = tstr(x, off);
        AM_GROW(set->tk, set->captk, set->ntk + 1, 16);
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
        AM_GROW(set->a, set->capa, set->na + 1, 16);
        set->a[set->na++] = a;
    }
    e.nalt = (uint32_t)n_targets;
    e.key = set->ne;
    if (mode == MODE_CS)
        set->any_cs = 1;
    AM_GROW(set->e, set->cape, set->ne + 1, 16);
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

/* Power of two >= 2n + 16. */
static size_t slots_for(size_t n)
{
    size_t c = 16;
    while (c < 2 * n + 16)
        c *= 2;
    return c;
}

static uint32_t mix32(uint32_t a, uint32_t b)
{
    uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

/* Token id of string w (hash h) in set s, or NOID. */
static uint32_t tid_find(const tset *s, const char *w, uint32_t h)
{
    if (!s->ntid_slots)
        return NOID;
    size_t m = s->ntid_slots - 1, i = h & m;
    for (;;) {
        uint32_t v = s->tid[i];
        if (!v)
            return NOID;
        const ltok *l = &s->tk[v - 1];
        if (l->hash == h && strcmp(s->pool.data + l->off, w) == 0)
            return v - 1;
        i = (i + 1) & m;
    }
}

/* Child of node along token id tok, or 0. */
static uint32_t edge_find(const tset *s, uint32_t node, uint32_t tok)
{
    size_t m = s->nedge_slots - 1, i = mix32(node, tok) & m;
    for (;;) {
        const struct tedge *e = &s->edge[i];
        if (!e->child)
            return 0;
        if (e->node == node && e->tok == tok)
            return e->child;
        i = (i + 1) & m;
    }
}

/* Inserts sequence q of s into the trie; returns its node. */
static uint32_t trie_insert(tset *s, lseq q)
{
    uint32_t node = 0;
    for (uint32_t k = 0; k < q.n; k++) {
        uint32_t tok = s->tkid[q.start + k];
        size_t m = s->nedge_slots - 1, i = mix32(node, tok) & m;
        while (s->edge[i].child && !(s->edge[i].node == node && s->edge[i].tok == tok))
            i = (i + 1) & m;
        if (!s->edge[i].child) {
            assert(s->nnodes < UINT32_MAX);
            s->edge[i].node = node;
            s->edge[i].tok = tok;
            s->edge[i].child = (uint32_t)s->nnodes;
            s->shead[s->nnodes] = 0;
            s->nflag[s->nnodes] = 0;
            s->nnodes++;
        }
        node = s->edge[i].child;
    }
    return node;
}

/* Builds the token trie of s (after all entries are added): every source
 * and alternative sequence gets its node; entries are chained by source
 * node in ascending order. O(tokens of the set). */
static void tset_index(tset *s)
{
    s->ntid_slots = slots_for(s->ntk);
    if (s->ntid_slots > s->cap_tid_slots) {
        free(s->tid);
        s->tid = am_xmalloc(s->ntid_slots * sizeof *s->tid);
        s->cap_tid_slots = s->ntid_slots;
    }
    memset(s->tid, 0, s->ntid_slots * sizeof *s->tid);
    AM_GROW(s->tkid, s->cap_tkid, s->ntk + 1, 16);
    for (size_t t = 0; t < s->ntk; t++) {
        const ltok *l = &s->tk[t];
        size_t m = s->ntid_slots - 1, i = l->hash & m;
        for (;;) {
            uint32_t v = s->tid[i];
            if (!v) {
                s->tid[i] = (uint32_t)t + 1;
                s->tkid[t] = (uint32_t)t;
                break;
            }
            const ltok *o = &s->tk[v - 1];
            if (o->hash == l->hash && strcmp(s->pool.data + o->off, s->pool.data + l->off) == 0) {
                s->tkid[t] = v - 1;
                break;
            }
            i = (i + 1) & m;
        }
    }
    s->nedge_slots = slots_for(s->ntk + 1);
    if (s->nedge_slots > s->cap_edge_slots) {
        free(s->edge);
        s->edge = am_xmalloc(s->nedge_slots * sizeof *s->edge);
        s->cap_edge_slots = s->nedge_slots;
    }
    memset(s->edge, 0, s->nedge_slots * sizeof *s->edge);
    if (s->ntk + 1 > s->cap_nodes) {
        s->cap_nodes = s->ntk + 1;
        s->shead = am_xrealloc(s->shead, s->cap_nodes * sizeof *s->shead);
        s->nflag = am_xrealloc(s->nflag, s->cap_nodes);
    }
    s->nnodes = 1;
    s->shead[0] = 0;
    s->nflag[0] = 0;
    for (size_t a = 0; a < s->na; a++) {
        talt *al = &s->a[a];
        al->norm.node = trie_insert(s, al->norm);
        al->stem.node = trie_insert(s, al->stem);
        if (al->norm.n)
            s->nflag[al->norm.node] |= NODE_ALT;
        if (al->stem.n)
            s->nflag[al->stem.node] |= NODE_ALT;
    }
    for (size_t k = s->ne; k-- > 0;) {
        tentry *e = &s->e[k];
        e->src.node = trie_insert(s, e->src);
        e->next_src = 0;
        if (e->src.n == 0)
            continue;
        e->next_src = s->shead[e->src.node];
        s->shead[e->src.node] = (uint32_t)k + 1;
        if (e->cs)
            s->cs_src = 1;
        else
            s->fold_src = 1;
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
    tset_index(&lex->set);
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
    free(lex);
}

size_t am_terms_lex_size(const am_terms_lex *lex)
{
    return lex ? lex->set.ne : 0;
}

/* The heap bytes of set s's arrays, by their capacities (what was
 * allocated, not what is used). */
static size_t tset_bytes(const tset *s)
{
    return s->pool.cap + s->captk * sizeof *s->tk + s->cape * sizeof *s->e +
           s->capa * sizeof *s->a + s->cap_tid_slots * sizeof *s->tid +
           s->cap_tkid * sizeof *s->tkid + s->cap_edge_slots * sizeof *s->edge +
           s->cap_nodes * (sizeof *s->shead + sizeof *s->nflag);
}

size_t am_terms_lex_bytes(const am_terms_lex *lex)
{
    return lex ? sizeof *lex + tset_bytes(&lex->set) : 0;
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
    free(ws->claimset.k);
    free(ws->claimset.v);
    free(ws->cursor.k);
    free(ws->cursor.v);
    free(ws->seen.k);
    free(ws->seen.v);
    for (size_t i = 0; i < NVIEWS; i++) {
        free(ws->view[i].ids);
        free(ws->view[i].occ);
        free(ws->view[i].pos);
    }
    free(ws->rs);
    free(ws->keys);
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

/* ---- u64 maps ----------------------------------------------------------- */

static void map_clear(u64map *m)
{
    if (m->n)
        memset(m->k, 0xff, m->cap * sizeof *m->k);
    m->n = 0;
}

/* The value slot of key (inserted with value dflt when missing). Borrowed:
 * valid until the next insertion. */
static uint64_t *map_at(u64map *m, uint64_t key, uint64_t dflt)
{
    assert(key != MAP_EMPTY);
    if (2 * (m->n + 1) > m->cap) {
        size_t oc = m->cap, nc = oc ? 2 * oc : 64;
        uint64_t *ok = m->k, *ov = m->v;
        m->k = am_xmalloc(nc * sizeof *m->k);
        m->v = am_xmalloc(nc * sizeof *m->v);
        memset(m->k, 0xff, nc * sizeof *m->k);
        m->cap = nc;
        for (size_t i = 0; i < oc && m->n; i++) {
            if (ok[i] == MAP_EMPTY)
                continue;
            size_t j = am_mix64(ok[i]) & (nc - 1);
            while (m->k[j] != MAP_EMPTY)
                j = (j + 1) & (nc - 1);
            m->k[j] = ok[i];
            m->v[j] = ov[i];
        }
        free(ok);
        free(ov);
    }
    size_t j = am_mix64(key) & (m->cap - 1);
    while (m->k[j] != MAP_EMPTY && m->k[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (m->k[j] == MAP_EMPTY) {
        m->k[j] = key;
        m->v[j] = dflt;
        m->n++;
    }
    return &m->v[j];
}

static int map_has(const u64map *m, uint64_t key)
{
    if (!m->n)
        return 0;
    size_t j = am_mix64(key) & (m->cap - 1);
    while (m->k[j] != MAP_EMPTY) {
        if (m->k[j] == key)
            return 1;
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

/* ---- sorting and searching u64 keys -------------------------------------- */

/* Sorts v[0..n) ascending (LSD radix, bytes that are equal in every key
 * are skipped). O(n). */
static void radix_sort(am_terms_ws *ws, uint64_t *v, size_t n)
{
    if (n < 2)
        return;
    AM_GROW(ws->rs, ws->cap_rs, n + 1, 16);
    uint64_t *a = v, *b = ws->rs;
    for (int sh = 0; sh < 64; sh += 8) {
        size_t cnt[256];
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(a[i] >> sh) & 0xff]++;
        if (cnt[(a[0] >> sh) & 0xff] == n)
            continue;
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[cnt[(a[i] >> sh) & 0xff]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
        ws->steps += n;
    }
    if (a != v)
        memcpy(v, a, n * sizeof *v);
}

/* First index i with v[i] >= key (n when none). */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- views: a text through a term set ------------------------------------ */

static void views_drop(am_terms_ws *ws)
{
    for (size_t i = 0; i < NVIEWS; i++)
        ws->view[i].live = 0;
}

/* The view of x through set in mode (token ids computed). Borrowed from
 * ws until the next call. */
static tview *view_get(am_terms_ws *ws, const tset *set, const ttext *x, int mode)
{
    tview *v = NULL;
    for (size_t i = 0; i < NVIEWS; i++) {
        tview *c = &ws->view[i];
        if (c->live && c->set == set && c->x == x && c->mode == mode)
            return c;
        if (!c->live && !v)
            v = c;
    }
    assert(v); /* NVIEWS covers every (set, text, mode) */
    v->set = set;
    v->x = x;
    v->mode = mode;
    v->live = 1;
    v->have_occ = v->have_pos = 0;
    AM_GROW(v->ids, v->cap_ids, x->n + 1, 16);
    for (size_t t = 0; t < x->n; t++) {
        const ttok *k = &x->t[t];
        uint32_t off = mode == MODE_CS ? k->cs : mode == MODE_STEM ? k->stem : k->fold;
        uint32_t h = mode == MODE_CS ? k->hcs : mode == MODE_STEM ? k->hstem : k->hfold;
        v->ids[t] = tid_find(set, x->pool.data + off, h);
    }
    ws->steps += x->n;
    return v;
}

/* The view with the occurrences of every alternative of set: a trie walk
 * from each position, at most AM_TERMS_MAX_TERM_TOKENS steps each. */
static tview *view_occ(am_terms_ws *ws, const tset *set, const ttext *x, int mode)
{
    tview *v = view_get(ws, set, x, mode);
    if (v->have_occ)
        return v;
    v->n_occ = 0;
    for (size_t p = 0; p < x->n; p++) {
        uint32_t node = 0;
        for (size_t k = p; k < x->n && v->ids[k] != NOID; k++) {
            ws->steps++;
            node = edge_find(set, node, v->ids[k]);
            if (!node)
                break;
            if (set->nflag[node] & NODE_ALT) {
                AM_GROW(v->occ, v->cap_occ, v->n_occ + 1, 16);
                v->occ[v->n_occ++] = (uint64_t)node << 32 | p;
            }
        }
    }
    radix_sort(ws, v->occ, v->n_occ);
    v->have_occ = 1;
    return v;
}

/* The view with the sorted (token id, position) pairs of x. */
static tview *view_pos(am_terms_ws *ws, const tset *set, const ttext *x, int mode)
{
    tview *v = view_get(ws, set, x, mode);
    if (v->have_pos)
        return v;
    v->n_pos = 0;
    AM_GROW(v->pos, v->cap_pos, x->n + 1, 16);
    for (size_t t = 0; t < x->n; t++)
        if (v->ids[t] != NOID)
            v->pos[v->n_pos++] = (uint64_t)v->ids[t] << 32 | t;
    radix_sort(ws, v->pos, v->n_pos);
    v->have_pos = 1;
    return v;
}

/* First occurrence >= from of any alternative of e in view v (stem: the
 * stem sequences); the longest alternative wins at equal positions. Sets
 * *alt; returns NOPOS when none. */
static size_t next_alt(am_terms_ws *ws, const tset *set, const tentry *e, const tview *v,
                       size_t from, int stem, size_t *alt)
{
    size_t best = NOPOS;
    uint32_t blen = 0;
    for (uint32_t a = 0; a < e->nalt; a++) {
        const talt *al = &set->a[e->alt0 + a];
        lseq q = stem ? al->stem : al->norm;
        if (q.n == 0)
            continue;
        ws->steps++;
        size_t i = lower_bound(v->occ, v->n_occ, (uint64_t)q.node << 32 | from);
        if (i == v->n_occ || (v->occ[i] >> 32) != q.node)
            continue;
        size_t p = (uint32_t)v->occ[i];
        if (p < best || (p == best && q.n > blen)) {
            best = p;
            blen = q.n;
            *alt = a;
        }
    }
    return best;
}

/* Claim keys: (set, key, position). ann: the set is the annotations'. */
static uint64_t claim_key(const am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    assert(key < (1u << 31) && pos <= UINT32_MAX);
    return (uint64_t)(set == &ws->ann) << 63 | (uint64_t)key << 32 | pos;
}

static int claimed(am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    ws->steps++;
    return map_has(&ws->claimset, claim_key(ws, set, key, pos));
}

static void claim(am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    *map_at(&ws->claimset, claim_key(ws, set, key, pos), 0) = 1;
}

/* First position p in x not claimed for (set, key) where an alternative
 * of e occurs; sets *alt. Returns NOPOS when none. Positions before the
 * (set, text, stem, key) cursor are known to be claimed or without an
 * occurrence (claims are never taken back), so each key's scan resumes
 * where it stopped. */
static size_t find_unclaimed(am_terms_ws *ws, const tset *set, const tentry *e, size_t key,
                             const ttext *x, int stem, size_t *alt)
{
    int mode = stem ? MODE_STEM : e->cs ? MODE_CS : MODE_FOLD;
    const tview *v = view_occ(ws, set, x, mode);
    uint64_t ck = (uint64_t)(set == &ws->ann) << 63 | (uint64_t)(x == &ws->hyp) << 62 |
                  (uint64_t)(stem != 0) << 61 | key;
    size_t from = (size_t)*map_at(&ws->cursor, ck, 0);
    for (;;) {
        size_t p = next_alt(ws, set, e, v, from, stem, alt);
        if (p == NOPOS || !claimed(ws, set, key, p)) {
            *map_at(&ws->cursor, ck, 0) = p == NOPOS ? x->n : p;
            return p;
        }
        from = p + 1;
    }
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

static size_t ws_max_occ(const am_terms_ws *ws)
{
    return ws->max_occ ? ws->max_occ : AM_TERMS_MAX_OCCURRENCES;
}

/* Collects the glossary source occurrences (source position ascending,
 * then entry order) into ws->hits: a trie walk from each position in each
 * comparison mode, O(n × AM_TERMS_MAX_TERM_TOKENS + hits). More than
 * AM_TERMS_MAX_OCCURRENCES hits: AM_ERR_RANGE. */
static int find_hits(am_terms_ws *ws, const am_terms_lex *lex)
{
    const tset *set = &lex->set;
    const ttext *x = &ws->src;
    ws->n_hits = 0;
    if (set->ne == 0)
        return AM_OK;
    size_t nk = 0;
    for (int cs = 0; cs < 2; cs++) {
        if (!(cs ? set->cs_src : set->fold_src))
            continue;
        const tview *v = view_get(ws, set, x, cs ? MODE_CS : MODE_FOLD);
        for (size_t p = 0; p < x->n; p++) {
            uint32_t node = 0;
            for (size_t k = p; k < x->n && v->ids[k] != NOID; k++) {
                ws->steps++;
                node = edge_find(set, node, v->ids[k]);
                if (!node)
                    break;
                for (uint32_t c = set->shead[node]; c; c = set->e[c - 1].next_src) {
                    if (set->e[c - 1].cs != cs)
                        continue;
                    if (nk >= ws_max_occ(ws))
                        return AM_ERR_RANGE;
                    ws->steps++;
                    AM_GROW(ws->keys, ws->cap_keys, nk + 1, 16);
                    ws->keys[nk++] = (uint64_t)p << 32 | (c - 1);
                }
            }
        }
    }
    /* (start, entry) order: the two walks interleave */
    radix_sort(ws, ws->keys, nk);
    AM_GROW(ws->hits, ws->cap_hits, nk + 1, 16);
    for (size_t i = 0; i < nk; i++) {
        size_t k = (uint32_t)ws->keys[i];
        ws->hits[i].entry = k;
        ws->hits[i].start = (size_t)(ws->keys[i] >> 32);
        ws->hits[i].len = set->e[k].src.n;
    }
    ws->n_hits = nk;
    return AM_OK;
}

static void push_inst(am_terms_ws *ws, const tset *set, size_t key, const am_terms_inst *in)
{
    AM_GROW(ws->inst, ws->cap_inst, ws->n_inst + 1, 16);
    AM_GROW(ws->inst_key, ws->cap_key, ws->n_inst + 1, 16);
    AM_GROW(ws->inst_set, ws->cap_iset, ws->n_inst + 1, 16);
    ws->inst[ws->n_inst] = *in;
    ws->inst_key[ws->n_inst] = key;
    ws->inst_set[ws->n_inst] = set;
    ws->n_inst++;
}

static void push_dev(am_terms_ws *ws, enum am_terms_origin o, size_t entry, am_terms_span src)
{
    AM_GROW(ws->dev, ws->cap_dev, ws->n_dev + 1, 16);
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
    /* token byte ranges are non-decreasing: every overlapping token lies in
     * [first with b1 >= span_start, first with b0 >= span_end) */
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->t[mid].b1 < an->span_start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo;
    hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->t[mid].b0 < an->span_end)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t t = first; t < lo; t++) {
        ws->steps++;
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

static int in_list(const size_t *v, size_t n, size_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* Partial and reorder from the hypothesis positions of each word (view
 * pos: sorted (token id, position)); the positions used so far by the
 * alternative (at most AM_TERMS_MAX_TERM_TOKENS) are kept in a list. */
static void partial_reorder(am_terms_ws *ws, const tset *set, const tentry *e, am_terms_inst *in,
                            size_t nref)
{
    const ttext *h = &ws->hyp;
    const tview *v = view_pos(ws, set, h, e->cs ? MODE_CS : MODE_FOLD);
    double best_p = 0, best_r = 0;
    size_t s = in->ref.tok_start, L = in->ref.tok_end - in->ref.tok_start;
    size_t used[AM_TERMS_MAX_TERM_TOKENS];
    for (uint32_t a = 0; a < e->nalt; a++) {
        lseq q = set->a[e->alt0 + a].norm;
        if (q.n == 0)
            continue;
        assert(q.n <= AM_TERMS_MAX_TERM_TOKENS);
        /* partial: words found, each hypothesis token used once (the
         * first unused position of the word) */
        size_t nu = 0;
        for (uint32_t k = 0; k < q.n; k++) {
            uint64_t id = set->tkid[q.start + k];
            for (size_t i = lower_bound(v->pos, v->n_pos, id << 32);
                 i < v->n_pos && (v->pos[i] >> 32) == id; i++) {
                ws->steps++;
                size_t pi = (uint32_t)v->pos[i];
                if (!in_list(used, nu, pi)) {
                    used[nu++] = pi;
                    break;
                }
            }
        }
        double pv = (double)nu / q.n;
        if (pv > best_p)
            best_p = pv;
        /* reorder: best-weighted unused position per word. The weight
         * 1 − |i/|h| − rj| grows with i up to rj·|h| and falls after, so the
         * best unused position is next to that point: the two nearest
         * unused positions on each side are weighed (lowest i wins ties). */
        nu = 0;
        double sum = 0;
        for (uint32_t k = 0; k < q.n; k++) {
            size_t j = s + (k < L ? k : L - 1);
            double rj = (double)j / (double)nref;
            uint64_t id = set->tkid[q.start + k];
            size_t lo = lower_bound(v->pos, v->n_pos, id << 32);
            size_t hi = lower_bound(v->pos, v->n_pos, (id + 1) << 32);
            size_t a0 = lo, a1 = hi; /* split: first with i/|h| >= rj */
            while (a0 < a1) {
                size_t mid = a0 + (a1 - a0) / 2;
                ws->steps++;
                if ((double)(uint32_t)v->pos[mid] / (double)h->n < rj)
                    a0 = mid + 1;
                else
                    a1 = mid;
            }
            size_t cand[4], nc = 0;
            for (size_t i = a0, got = 0; i-- > lo && got < 2;) {
                ws->steps++;
                size_t pi = (uint32_t)v->pos[i];
                if (!in_list(used, nu, pi)) {
                    cand[nc++] = pi;
                    got++;
                }
            }
            for (size_t i = a0, got = 0; i < hi && got < 2; i++) {
                ws->steps++;
                size_t pi = (uint32_t)v->pos[i];
                if (!in_list(used, nu, pi)) {
                    cand[nc++] = pi;
                    got++;
                }
            }
            size_t bi = NOPOS;
            double bw = -1;
            for (size_t c = 0; c < nc; c++) {
                size_t i = cand[c];
                double wgt = 1.0 - fabs((double)i / (double)h->n - rj);
                if (wgt > bw || (wgt == bw && i < bi)) {
                    bw = wgt;
                    bi = i;
                }
            }
            if (bi != NOPOS) {
                used[nu++] = bi;
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
    AM_GROW(ws->ctx, ws->cap_ctx, at + 2 * w + 1, 16);
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

/* Pairs the exact-matched instances g[0..ng) (one claim key, ascending)
 * with their claimed hypothesis occurrences for window wi: greedy by best
 * overlap (ties: lower instance, then lower occurrence). ng is at most
 * AM_TERMS_WINDOW_GROUP, so the ng × ng matrix stays small. */
static void window_group(am_terms_ws *ws, const size_t *g, size_t ng, size_t wi, size_t w)
{
    size_t rn[AM_TERMS_WINDOW_GROUP];
    double hn[AM_TERMS_WINDOW_GROUP], m[AM_TERMS_WINDOW_GROUP * AM_TERMS_WINDOW_GROUP];
    unsigned char taken[AM_TERMS_WINDOW_GROUP];
    assert(ng <= AM_TERMS_WINDOW_GROUP);
    /* contexts: reference of each instance, hypothesis of each claimed
     * occurrence; ws->ctx layout: [ref_0 … ref_ng-1][hyp_0 …] */
    size_t per = 2 * w;
    AM_GROW(ws->ctx, ws->cap_ctx, 2 * ng * per + 1 + 1, 16);
    for (size_t k = 0; k < ng; k++) {
        const am_terms_inst *in = &ws->inst[g[k]];
        rn[k] = context(ws, &ws->ref, in->ref.tok_start, in->ref.tok_end, w, k * per);
        hn[k] =
            (double)context(ws, &ws->hyp, in->hyp.tok_start, in->hyp.tok_end, w, (ng + k) * per);
    }
    for (size_t a = 0; a < ng; a++)
        for (size_t b = 0; b < ng; b++, ws->steps++)
            m[a * ng + b] =
                rn[a] ? overlap(ws, a * per, rn[a], (ng + b) * per, (size_t)hn[b]) : -1.0;
    /* greedy pairing by best overlap; instances with an empty reference
     * context are left out */
    memset(taken, 0, sizeof taken);
    for (;;) {
        size_t ba = NOPOS, bb = NOPOS;
        double bv = -1;
        for (size_t a = 0; a < ng; a++) {
            if (!rn[a] || !isnan(ws->inst[g[a]].window[wi]))
                continue;
            for (size_t b = 0; b < ng; b++, ws->steps++)
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

/* Window overlaps: exact-matched instances grouped by (set, claim key)
 * with one sort; each group is paired in consecutive blocks of at most
 * AM_TERMS_WINDOW_GROUP instances. */
static void windows(am_terms_ws *ws, const am_terms_cfg *cfg)
{
    size_t n = ws->n_inst, ne = 0;
    AM_GROW(ws->keys, ws->cap_keys, n + 1 + 1, 16);
    for (size_t i = 0; i < n; i++)
        if (ws->inst[i].match == AM_TERMS_EXACT) {
            assert(i <= UINT32_MAX && ws->inst_key[i] < (1u << 31));
            ws->keys[ne++] =
                (uint64_t)(ws->inst_set[i] == &ws->ann) << 63 | (uint64_t)ws->inst_key[i] << 32 | i;
        }
    radix_sort(ws, ws->keys, ne);
    AM_GROW(ws->grp, ws->cap_grp, ne + 1 + 1, 16);
    for (size_t i = 0; i < ne; i++)
        ws->grp[i] = (uint32_t)ws->keys[i];
    for (size_t wi = 0; wi < cfg->n_windows; wi++) {
        size_t w = cfg->windows[wi];
        assert(w <= AM_TERMS_MAX_WINDOW);
        for (size_t i = 0; i < ne;) {
            size_t j = i + 1;
            while (j < ne && j - i < AM_TERMS_WINDOW_GROUP &&
                   (ws->keys[j] >> 32) == (ws->keys[i] >> 32))
                j++;
            window_group(ws, ws->grp + i, j - i, wi, w);
            i = j;
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
    ws->n_inst = ws->n_dev = ws->n_forbid = ws->n_hits = ws->n_prev = 0;
    map_clear(&ws->claimset);
    map_clear(&ws->cursor);
    views_drop(ws);
}

/* FNV-1a of an annotation's target list and case flag. */
static uint32_t annot_hash(const am_terms_annot *a)
{
    uint32_t h = AM_FNV32_BASIS ^ (a->case_sensitive ? 1u : 0u);
    for (size_t t = 0; t < a->n_targets; t++) {
        h = (h ^ hash_str(a->targets[t])) * 16777619u;
        h = (h ^ 0xffu) * 16777619u;
    }
    return h;
}

static int annot_same(const am_terms_annot *a, const am_terms_annot *b)
{
    if (a->n_targets != b->n_targets || !a->case_sensitive != !b->case_sensitive)
        return 0;
    for (size_t t = 0; t < a->n_targets; t++)
        if (strcmp(a->targets[t], b->targets[t]) != 0)
            return 0;
    return 1;
}

/* Annotations → ws->ann (claim keys shared by identical target lists: the
 * key of the first annotation with the same list). Annotations are sorted
 * by (list hash, index), so only equal hashes are compared. */
static int load_annots(am_terms_ws *ws, const am_terms_cfg *cfg, const am_terms_annot *an, size_t n)
{
    tset_reset(&ws->ann);
    AM_GROW(ws->keys, ws->cap_keys, n + 1 + 1, 16);
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
        assert(k <= UINT32_MAX);
        ws->keys[k] = (uint64_t)annot_hash(&an[k]) << 32 | k;
    }
    radix_sort(ws, ws->keys, n);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && (ws->keys[j] >> 32) == (ws->keys[i] >> 32))
            j++;
        /* run [i, j): each member takes the key of the first equal list */
        for (size_t b = i + 1; b < j; b++) {
            size_t k = (uint32_t)ws->keys[b];
            for (size_t c = i; c < b; c++) {
                size_t f = (uint32_t)ws->keys[c];
                ws->steps++;
                if (ws->ann.e[f].key == f && annot_same(&an[f], &an[k])) {
                    ws->ann.e[k].key = f;
                    break;
                }
            }
        }
        i = j;
    }
    tset_index(&ws->ann);
    return AM_OK;
}

/* Forbidden uses: entries of ws->hits that are forbidden, once per entry;
 * the hypothesis is walked from occurrence to occurrence. More than
 * AM_TERMS_MAX_OCCURRENCES uses: AM_ERR_RANGE. */
static int forbidden_uses(am_terms_ws *ws, const am_terms_lex *lex)
{
    const tset *set = &lex->set;
    map_clear(&ws->seen);
    for (size_t i = 0; i < ws->n_hits; i++) {
        size_t k = ws->hits[i].entry;
        if (!set->e[k].forbidden)
            continue;
        uint64_t *seen = map_at(&ws->seen, k, 0);
        if (*seen)
            continue;
        *seen = 1;
        const tentry *e = &set->e[k];
        const tview *v = view_occ(ws, set, &ws->hyp, e->cs ? MODE_CS : MODE_FOLD);
        size_t a, p = 0;
        while ((p = next_alt(ws, set, e, v, p, 0, &a)) != NOPOS) {
            if (ws->n_forbid >= ws_max_occ(ws))
                return AM_ERR_RANGE;
            size_t len = set->a[e->alt0 + a].norm.n;
            AM_GROW(ws->forbid, ws->cap_forbid, ws->n_forbid + 1, 16);
            ws->forbid[ws->n_forbid].entry = k;
            ws->forbid[ws->n_forbid].alt = a;
            ws->forbid[ws->n_forbid].hyp = mkspan(&ws->hyp, p, p + len);
            ws->n_forbid++;
            p += len;
        }
    }
    return AM_OK;
}

static int need_cs(const am_terms_lex *lex, const tset *ann)
{
    return lex->cfg.casefold && (lex->set.any_cs || (ann && ann->any_cs));
}

int am_terms_score(am_terms_ws *ws, const am_terms_lex *lex, const char *src, const char *hyp,
                   const char *ref, const am_terms_annot *annots, size_t n_annots,
                   const am_terms_seg **out)
{
    if (!lex || !hyp || !ref)
        return AM_ERR_INVALID;
    am_tok_text h = {hyp, NULL, lex->cfg.tok_tgt, NULL}, r = {ref, NULL, lex->cfg.tok_tgt, NULL};
    return am_terms_score_tok(ws, lex, src, &h, &r, annots, n_annots, out);
}

/* Length/complexity (issue 15): kept whole on purpose: instances, exact then
 * stem matching with separate hypothesis claims, and the totals share the
 * workspace's cursors and claim sets stage to stage (each stage commented
 * below); split, every helper would take the same dozen arguments. */
int am_terms_score_tok(am_terms_ws *ws, const am_terms_lex *lex, const char *src,
                       const am_tok_text *hyp_t, const am_tok_text *ref_t,
                       const am_terms_annot *annots, size_t n_annots, const am_terms_seg **out)
{
    if (!ws || !lex || !src || !hyp_t || !ref_t || !hyp_t->text || !ref_t->text || !out ||
        (n_annots && !annots))
        return AM_ERR_INVALID;
    const am_terms_cfg *cfg = &lex->cfg;
    if (hyp_t->kind != cfg->tok_tgt || ref_t->kind != cfg->tok_tgt)
        return AM_ERR_INVALID; /* tokens of another tokenizer */
    const char *hyp = hyp_t->text, *ref = ref_t->text;
    int rc;
    reset_results(ws);
    if (cfg->stem_match && (rc = ws_stemmer(ws, lex->stem_alg)))
        return rc;
    if (n_annots && (rc = load_annots(ws, cfg, annots, n_annots)))
        return rc;
    int cs = need_cs(lex, n_annots ? &ws->ann : NULL);
    if ((rc = text_load(ws, cfg, cfg->tok_src, src, NULL, NULL, &ws->src,
                        lex->set.any_cs && cfg->casefold, 0)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, ref, ref_t->tokens, ref_t->words, &ws->ref, cs, 1)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, hyp, hyp_t->tokens, hyp_t->words, &ws->hyp, cs, 1)))
        return rc;

    /* instances */
    if ((rc = find_hits(ws, lex)))
        return rc;
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
            if (cancelled(ws))
                return AM_ERR_CANCELLED;
            place(ws, &lex->set, k, AM_TERMS_GLOSSARY,
                  mkspan(&ws->src, ws->hits[i].start, ws->hits[i].start + ws->hits[i].len));
        }
    }

    /* exact match, then stem match; hypothesis claims are separate from the
     * translation's (different text) */
    map_clear(&ws->claimset);
    for (int stem = 0; stem < 2; stem++) {
        if (stem && !cfg->stem_match)
            break;
        if (stem && (rc = text_stems(ws, cfg, &ws->hyp)))
            return rc;
        for (size_t i = 0; i < ws->n_inst; i++) {
            am_terms_inst *in = &ws->inst[i];
            if (in->match != AM_TERMS_NONE)
                continue;
            if (cancelled(ws))
                return AM_ERR_CANCELLED;
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
        if (cancelled(ws))
            return AM_ERR_CANCELLED;
        partial_reorder(ws, set, &set->e[ws->inst[i].entry], &ws->inst[i], ws->ref.n);
    }
    windows(ws, cfg);
    if (cancelled(ws))
        return AM_ERR_CANCELLED;
    if ((rc = forbidden_uses(ws, lex)))
        return rc;

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
    if ((rc = text_load(ws, cfg, cfg->tok_src, src, NULL, NULL, &ws->src, cs, 0)))
        return rc;
    if ((rc = text_load(ws, cfg, cfg->tok_tgt, hyp, NULL, NULL, &ws->hyp, cs, 0)))
        return rc;
    if ((rc = find_hits(ws, lex)))
        return rc;
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
                AM_GROW(ws->prev, ws->cap_prev, ws->n_prev + 1, 16);
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
            if (cancelled(ws))
                return AM_ERR_CANCELLED;
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

uint64_t am_terms_ws_steps(const am_terms_ws *ws)
{
    return ws ? ws->steps : 0;
}

void am_terms_ws_set_max_occurrences(am_terms_ws *ws, size_t max)
{
    if (ws)
        ws->max_occ = max > AM_TERMS_MAX_OCCURRENCES ? 0 : max;
}
