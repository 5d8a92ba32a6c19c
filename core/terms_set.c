/* terms_set.c — terminology, standard profile (terms.c names the files):
 * the stemmer, the text pipeline (tokenized, normalized texts) and building
 * term sets (a compiled glossary or a segment's annotations). */
#include "terms_int.h"
#include "recall.h"

#include <assert.h>
#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Appends s (NUL-terminated) to the pool; returns its offset. */
static uint32_t pool_add(am_buf *pool, const char *s, size_t n)
{
    size_t off = pool->len;
    assert(off < UINT32_MAX);
    am_buf_append(pool, s, n);
    am_buf_append(pool, "", 1);
    return (uint32_t)off;
}

static void tset_init(tset *s)
{
    memset(s, 0, sizeof *s);
    am_buf_init(&s->pool);
}

void terms_tset_reset(tset *s)
{
    am_buf_reset(&s->pool);
    s->ntk = s->ne = s->na = 0;
    s->any_cs = 0;
    s->ntid_slots = s->nedge_slots = s->nnodes = 0;
    s->fold_src = s->cs_src = 0;
}

static void tset_cleanup(tset *s)
{
    if (s->block) { /* packed: the arrays are views of the block */
        free(s->block);
        tset_init(s);
        return;
    }
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

void am_terms_ws_set_cancel(am_terms_ws *ws, am_cancel *cancel)
{
    ws->cancel = cancel;
}

/* Reports the steps done since the last report to the cancellation check;
 * non-zero when the work must stop. */
int terms_cancelled(am_terms_ws *ws)
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

int terms_ws_stemmer(am_terms_ws *ws, const char *alg)
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
int terms_text_load(am_terms_ws *ws, const am_terms_cfg *cfg, enum am_tok_kind kind, const char *s,
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
int terms_text_stems(am_terms_ws *ws, const am_terms_cfg *cfg, ttext *x)
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

/* Tokenizes s and appends its tokens in the given mode to set; *out = seq. */
static int set_add_seq(am_terms_ws *ws, const am_terms_cfg *cfg, tset *set, enum am_tok_kind kind,
                       const char *s, int mode, lseq *out)
{
    ttext *x = &ws->tmp;
    int rc = terms_text_load(ws, cfg, kind, s, NULL, NULL, x, mode == MODE_CS, 0);
    if (rc)
        return rc;
    if (mode == MODE_STEM && (rc = terms_text_stems(ws, cfg, x)))
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
int terms_set_add_entry(am_terms_ws *ws, const am_terms_cfg *cfg, tset *set, const char *source,
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
    e.key = (uint32_t)set->ne;
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

/* The home slot of hash h in a table of n slots (any n, not only powers
 * of two: a compiled set's tables are sized exactly, tset_pack), and the
 * slot after i (linear probing, wrapping). */
static size_t slot_of(uint32_t h, size_t n)
{
    return (size_t)(((uint64_t)h * n) >> 32);
}

static size_t slot_next(size_t i, size_t n)
{
    return i + 1 < n ? i + 1 : 0;
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
uint32_t terms_tid_find(const tset *s, const char *w, uint32_t h)
{
    if (!s->ntid_slots)
        return NOID;
    size_t n = s->ntid_slots, i = slot_of(h, n);
    for (;;) {
        uint32_t v = s->tid[i];
        if (!v)
            return NOID;
        const ltok *l = &s->tk[v - 1];
        if (l->hash == h && strcmp(s->pool.data + l->off, w) == 0)
            return v - 1;
        i = slot_next(i, n);
    }
}

/* Child of node along token id tok, or 0. */
uint32_t terms_edge_find(const tset *s, uint32_t node, uint32_t tok)
{
    size_t n = s->nedge_slots, i = slot_of(mix32(node, tok), n);
    for (;;) {
        const struct tedge *e = &s->edge[i];
        if (!e->child)
            return 0;
        if (e->node == node && e->tok == tok)
            return e->child;
        i = slot_next(i, n);
    }
}

/* Inserts sequence q of s into the trie; returns its node. */
static uint32_t trie_insert(tset *s, lseq q)
{
    uint32_t node = 0;
    for (uint32_t k = 0; k < q.n; k++) {
        uint32_t tok = s->tkid[q.start + k];
        size_t n = s->nedge_slots, i = slot_of(mix32(node, tok), n);
        while (s->edge[i].child && !(s->edge[i].node == node && s->edge[i].tok == tok))
            i = slot_next(i, n);
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
void terms_tset_index(tset *s)
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
        size_t n = s->ntid_slots, i = slot_of(l->hash, n);
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
            i = slot_next(i, n);
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

/* Bytes of n elements of size sz, rounded up to 8 so that the next array
 * in a packed block stays aligned for any member (size_t in tentry). */
static size_t pack_size(size_t n, size_t sz)
{
    return (n * sz + 7) & ~(size_t)7;
}

/* Copies n elements of size sz at src to *at and advances it; returns
 * where they now are. */
static void *pack_put(char **at, const void *src, size_t n, size_t sz)
{
    void *dst = *at;
    if (n)
        memcpy(dst, src, n * sz);
    *at += pack_size(n, sz);
    return dst;
}

/* Moves the arrays of built set s (terms_tset_index done) into one
 * allocation sized exactly: a compiled glossary is kept for as long as its
 * sessions live, thousands of them at once (issue 27), and its arrays grew
 * by doubling, each a block of its own (a third of its bytes were slack and
 * malloc headers). The hash tables are rebuilt smaller and each token
 * string is kept once (a repeated token's offset is its first's): the
 * lookups find the same values, so matching is unchanged. The set is
 * read-only afterwards: tset_cleanup frees the block. */
static void tset_pack(tset *s)
{
    /* the two hash tables, sized by what they hold: terms_tset_index sized
     * both by the count of tokens with their repeats (every alternative's
     * norm and stem tokens, every source's), several times the distinct
     * tokens and the trie's edges, and to a power of two. Here exactly
     * (slot_of takes any size): the token table at most half full (a text
     * looks up every one of its tokens, most of them absent, so its misses
     * must stay short), the edge table at most two thirds (a walk looks an
     * edge up only from a token of the set). The edge table was 12 or 24 KB
     * of a 110-entry glossary's 31–49 KB (issue 27). */
    size_t ndist = 0;
    for (size_t t = 0; t < s->ntk; t++)
        ndist += s->tkid[t] == t;
    size_t tid_slots = 2 * ndist + 1, edge_slots = s->nnodes + s->nnodes / 2 + 1;
    if (tid_slots < s->ntid_slots || edge_slots < s->nedge_slots) {
        uint32_t *tid = am_xcalloc(tid_slots, sizeof *tid);
        for (size_t t = 0; t < s->ntk; t++) {
            if (s->tkid[t] != t)
                continue;
            size_t i = slot_of(s->tk[t].hash, tid_slots);
            while (tid[i])
                i = slot_next(i, tid_slots);
            tid[i] = (uint32_t)t + 1;
        }
        struct tedge *edge = am_xcalloc(edge_slots, sizeof *edge);
        for (size_t k = 0; k < s->nedge_slots; k++) {
            const struct tedge *e = &s->edge[k];
            if (!e->child)
                continue;
            size_t i = slot_of(mix32(e->node, e->tok), edge_slots);
            while (edge[i].child)
                i = slot_next(i, edge_slots);
            edge[i] = *e;
        }
        free(s->tid);
        free(s->edge);
        s->tid = tid;
        s->ntid_slots = s->cap_tid_slots = tid_slots;
        s->edge = edge;
        s->nedge_slots = s->cap_edge_slots = edge_slots;
    }
    /* the strings of the distinct tokens: a glossary repeats its common
     * words in every entry ("word", "mot", their stems) */
    size_t plen = 0;
    for (size_t t = 0; t < s->ntk; t++)
        if (s->tkid[t] == t)
            plen += strlen(s->pool.data + s->tk[t].off) + 1;
    size_t bytes = pack_size(s->ne, sizeof *s->e) + pack_size(s->nedge_slots, sizeof *s->edge) +
                   pack_size(s->ntk, sizeof *s->tk) + pack_size(s->na, sizeof *s->a) +
                   pack_size(s->ntid_slots, sizeof *s->tid) + pack_size(s->ntk, sizeof *s->tkid) +
                   pack_size(s->nnodes, sizeof *s->shead) + pack_size(plen + 1, 1) +
                   pack_size(s->nnodes, sizeof *s->nflag);
    char *block = am_xmalloc(bytes), *at = block;
    tset p = *s;
    p.e = pack_put(&at, s->e, s->ne, sizeof *s->e);
    p.edge = pack_put(&at, s->edge, s->nedge_slots, sizeof *s->edge);
    p.tk = pack_put(&at, s->tk, s->ntk, sizeof *s->tk);
    p.a = pack_put(&at, s->a, s->na, sizeof *s->a);
    p.tid = pack_put(&at, s->tid, s->ntid_slots, sizeof *s->tid);
    p.tkid = pack_put(&at, s->tkid, s->ntk, sizeof *s->tkid);
    p.shead = pack_put(&at, s->shead, s->nnodes, sizeof *s->shead);
    p.pool.data = at;
    at += pack_size(plen + 1, 1);
    size_t off = 0;
    for (size_t t = 0; t < s->ntk; t++) {
        if (s->tkid[t] != t) { /* tkid[t] < t: placed already */
            p.tk[t].off = p.tk[s->tkid[t]].off;
            continue;
        }
        const char *w = s->pool.data + s->tk[t].off;
        size_t n = strlen(w) + 1;
        memcpy(p.pool.data + off, w, n);
        p.tk[t].off = (uint32_t)off;
        off += n;
    }
    p.pool.data[off] = '\0';
    assert(off == plen);
    p.pool.len = plen;
    p.nflag = pack_put(&at, s->nflag, s->nnodes, sizeof *s->nflag);
    assert((size_t)(at - block) == bytes);
    p.pool.cap = plen + 1;
    p.cape = s->ne;
    p.cap_edge_slots = s->nedge_slots;
    p.captk = s->ntk;
    p.capa = s->na;
    p.cap_tid_slots = s->ntid_slots;
    p.cap_tkid = s->ntk;
    p.cap_nodes = s->nnodes;
    p.block = block;
    p.block_bytes = bytes;
    tset_cleanup(s);
    *s = p;
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
        if ((rc = terms_ws_stemmer(ws, lex->stem_alg)))
            goto done;
    }
    lex->cfg.stem_lang = lex->stem_alg;
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        rc = terms_set_add_entry(ws, &lex->cfg, &lex->set, e->source,
                                 (const char *const *)e->targets, e->n_targets, e->case_sensitive,
                                 e->forbidden, cfg->stem_match);
        if (rc)
            goto done;
    }
    terms_tset_index(&lex->set);
    tset_pack(&lex->set);
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
    if (s->block)
        return s->block_bytes;
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
