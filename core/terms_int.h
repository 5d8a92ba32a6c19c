/*
 * terms_int.h — private declarations shared by the files of the standard
 * terminology profile (terms.h is the interface): terms_set.c builds term
 * sets and loads texts, terms_view.c matches them (maps, sorting, views,
 * claims, placing), terms.c scores (partial/reorder, windows, totals).
 * Not a public interface.
 */
#ifndef AM_TERMS_INT_H
#define AM_TERMS_INT_H

#include "recall.h"
#include "terms.h"

#include <string.h>

#define NOPOS ((size_t)-1)

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
    uint32_t key; /* claim key: entries with equal keys share claims (32 bytes an
                     entry: a compiled glossary is kept per session, issue 27) */
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
    /* a compiled glossary's set once built (tset_pack): every array above
     * lives in this one allocation of block_bytes, sized exactly, and the
     * set is read-only; NULL: each array is its own, growable */
    void *block;
    size_t block_bytes;
} tset;

enum { NODE_ALT = 1 };

#define NOID ((uint32_t)-1)

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

enum { MODE_FOLD = 0, MODE_CS = 1, MODE_STEM = 2 };

/* 32-bit FNV-1a of the NUL-terminated s */
static inline uint32_t hash_str(const char *s)
{
    return am_fnv1a32_n(AM_FNV32_BASIS, s, strlen(s));
}

static inline const char *tstr(const ttext *x, uint32_t off)
{
    return x->pool.data + off;
}

void terms_tset_reset(tset *s);

/* Reports the steps done since the last report to the cancellation check;
 * non-zero when the work must stop. */
int terms_cancelled(am_terms_ws *ws);

int terms_ws_stemmer(am_terms_ws *ws, const char *alg);

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
                    int content);

/* Computes the stems of x's tokens with ws's stemmer (already opened). */
int terms_text_stems(am_terms_ws *ws, const am_terms_cfg *cfg, ttext *x);

/* Adds one entry (source may be NULL: no source sequence). */
int terms_set_add_entry(am_terms_ws *ws, const am_terms_cfg *cfg, tset *set, const char *source,
                        const char *const *targets, size_t n_targets, int cs, int forbidden,
                        int stems);

/* Token id of string w (hash h) in set s, or NOID. */
uint32_t terms_tid_find(const tset *s, const char *w, uint32_t h);

/* Child of node along token id tok, or 0. */
uint32_t terms_edge_find(const tset *s, uint32_t node, uint32_t tok);

/* Builds the token trie of s (after all entries are added): every source
 * and alternative sequence gets its node; entries are chained by source
 * node in ascending order. O(tokens of the set). */
void terms_tset_index(tset *s);

void terms_map_clear(u64map *m);

/* The value slot of key (inserted with value dflt when missing). Borrowed:
 * valid until the next insertion. */
uint64_t *terms_map_at(u64map *m, uint64_t key, uint64_t dflt);

/* Sorts v[0..n) ascending (LSD radix, bytes that are equal in every key
 * are skipped). O(n). */
void terms_radix_sort(am_terms_ws *ws, uint64_t *v, size_t n);

/* First index i with v[i] >= key (n when none). */
size_t terms_lower_bound(const uint64_t *v, size_t n, uint64_t key);

void terms_views_drop(am_terms_ws *ws);

/* The view with the occurrences of every alternative of set: a trie walk
 * from each position, at most AM_TERMS_MAX_TERM_TOKENS steps each. */
tview *terms_view_occ(am_terms_ws *ws, const tset *set, const ttext *x, int mode);

/* The view with the sorted (token id, position) pairs of x. */
tview *terms_view_pos(am_terms_ws *ws, const tset *set, const ttext *x, int mode);

/* First occurrence >= from of any alternative of e in view v (stem: the
 * stem sequences); the longest alternative wins at equal positions. Sets
 * *alt; returns NOPOS when none. */
size_t terms_next_alt(am_terms_ws *ws, const tset *set, const tentry *e, const tview *v,
                      size_t from, int stem, size_t *alt);

void terms_claim(am_terms_ws *ws, const tset *set, size_t key, size_t pos);

/* First position p in x not claimed for (set, key) where an alternative
 * of e occurs; sets *alt. Returns NOPOS when none. Positions before the
 * (set, text, stem, key) cursor are known to be claimed or without an
 * occurrence (claims are never taken back), so each key's scan resumes
 * where it stopped. */
size_t terms_find_unclaimed(am_terms_ws *ws, const tset *set, const tentry *e, size_t key,
                            const ttext *x, int stem, size_t *alt);

am_terms_span terms_mkspan(const ttext *x, size_t s, size_t e);

size_t terms_ws_max_occ(const am_terms_ws *ws);

/* Collects the glossary source occurrences (source position ascending,
 * then entry order) into ws->hits: a trie walk from each position in each
 * comparison mode, O(n × AM_TERMS_MAX_TERM_TOKENS + hits). More than
 * AM_TERMS_MAX_OCCURRENCES hits: AM_ERR_RANGE. */
int terms_find_hits(am_terms_ws *ws, const am_terms_lex *lex);

/* Places an instance of entry k of set in the translation (first unclaimed
 * occurrence); a deviation when none. */
void terms_place(am_terms_ws *ws, const tset *set, size_t k, enum am_terms_origin o,
                 am_terms_span src);

/* Annotation k with a byte span: the tokens overlapping it. */
void terms_place_span(am_terms_ws *ws, const tset *set, size_t k, const am_terms_annot *an);

#endif
