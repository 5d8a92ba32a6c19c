/* terms_view.c — terminology, standard profile (terms.c names the files):
 * sequence matching, u64 maps, sorting, views of a text through a term set,
 * claims, and placing instances in the translation. */
#include "terms_int.h"
#include "recall.h"

#include <assert.h>
#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void terms_map_clear(u64map *m)
{
    if (m->n)
        memset(m->k, 0xff, m->cap * sizeof *m->k);
    m->n = 0;
}

/* The value slot of key (inserted with value dflt when missing). Borrowed:
 * valid until the next insertion. */
uint64_t *terms_map_at(u64map *m, uint64_t key, uint64_t dflt)
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
void terms_radix_sort(am_terms_ws *ws, uint64_t *v, size_t n)
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
size_t terms_lower_bound(const uint64_t *v, size_t n, uint64_t key)
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

void terms_views_drop(am_terms_ws *ws)
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
        v->ids[t] = terms_tid_find(set, x->pool.data + off, h);
    }
    ws->steps += x->n;
    return v;
}

/* The view with the occurrences of every alternative of set: a trie walk
 * from each position, at most AM_TERMS_MAX_TERM_TOKENS steps each. */
tview *terms_view_occ(am_terms_ws *ws, const tset *set, const ttext *x, int mode)
{
    tview *v = view_get(ws, set, x, mode);
    if (v->have_occ)
        return v;
    v->n_occ = 0;
    for (size_t p = 0; p < x->n; p++) {
        uint32_t node = 0;
        for (size_t k = p; k < x->n && v->ids[k] != NOID; k++) {
            ws->steps++;
            node = terms_edge_find(set, node, v->ids[k]);
            if (!node)
                break;
            if (set->nflag[node] & NODE_ALT) {
                AM_GROW(v->occ, v->cap_occ, v->n_occ + 1, 16);
                v->occ[v->n_occ++] = (uint64_t)node << 32 | p;
            }
        }
    }
    terms_radix_sort(ws, v->occ, v->n_occ);
    v->have_occ = 1;
    return v;
}

/* The view with the sorted (token id, position) pairs of x. */
tview *terms_view_pos(am_terms_ws *ws, const tset *set, const ttext *x, int mode)
{
    tview *v = view_get(ws, set, x, mode);
    if (v->have_pos)
        return v;
    v->n_pos = 0;
    AM_GROW(v->pos, v->cap_pos, x->n + 1, 16);
    for (size_t t = 0; t < x->n; t++)
        if (v->ids[t] != NOID)
            v->pos[v->n_pos++] = (uint64_t)v->ids[t] << 32 | t;
    terms_radix_sort(ws, v->pos, v->n_pos);
    v->have_pos = 1;
    return v;
}

/* First occurrence >= from of any alternative of e in view v (stem: the
 * stem sequences); the longest alternative wins at equal positions. Sets
 * *alt; returns NOPOS when none. */
size_t terms_next_alt(am_terms_ws *ws, const tset *set, const tentry *e, const tview *v,
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
        size_t i = terms_lower_bound(v->occ, v->n_occ, (uint64_t)q.node << 32 | from);
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

void terms_claim(am_terms_ws *ws, const tset *set, size_t key, size_t pos)
{
    *terms_map_at(&ws->claimset, claim_key(ws, set, key, pos), 0) = 1;
}

/* First position p in x not claimed for (set, key) where an alternative
 * of e occurs; sets *alt. Returns NOPOS when none. Positions before the
 * (set, text, stem, key) cursor are known to be claimed or without an
 * occurrence (claims are never taken back), so each key's scan resumes
 * where it stopped. */
size_t terms_find_unclaimed(am_terms_ws *ws, const tset *set, const tentry *e, size_t key,
                            const ttext *x, int stem, size_t *alt)
{
    int mode = stem ? MODE_STEM : e->cs ? MODE_CS : MODE_FOLD;
    const tview *v = terms_view_occ(ws, set, x, mode);
    uint64_t ck = (uint64_t)(set == &ws->ann) << 63 | (uint64_t)(x == &ws->hyp) << 62 |
                  (uint64_t)(stem != 0) << 61 | key;
    size_t from = (size_t)*terms_map_at(&ws->cursor, ck, 0);
    for (;;) {
        size_t p = terms_next_alt(ws, set, e, v, from, stem, alt);
        if (p == NOPOS || !claimed(ws, set, key, p)) {
            *terms_map_at(&ws->cursor, ck, 0) = p == NOPOS ? x->n : p;
            return p;
        }
        from = p + 1;
    }
}

am_terms_span terms_mkspan(const ttext *x, size_t s, size_t e)
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

size_t terms_ws_max_occ(const am_terms_ws *ws)
{
    return ws->max_occ ? ws->max_occ : AM_TERMS_MAX_OCCURRENCES;
}

/* Collects the glossary source occurrences (source position ascending,
 * then entry order) into ws->hits: a trie walk from each position in each
 * comparison mode, O(n × AM_TERMS_MAX_TERM_TOKENS + hits). More than
 * AM_TERMS_MAX_OCCURRENCES hits: AM_ERR_RANGE. */
int terms_find_hits(am_terms_ws *ws, const am_terms_lex *lex)
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
                node = terms_edge_find(set, node, v->ids[k]);
                if (!node)
                    break;
                for (uint32_t c = set->shead[node]; c; c = set->e[c - 1].next_src) {
                    if (set->e[c - 1].cs != cs)
                        continue;
                    if (nk >= terms_ws_max_occ(ws))
                        return AM_ERR_RANGE;
                    ws->steps++;
                    AM_GROW(ws->keys, ws->cap_keys, nk + 1, 16);
                    ws->keys[nk++] = (uint64_t)p << 32 | (c - 1);
                }
            }
        }
    }
    /* (start, entry) order: the two walks interleave */
    terms_radix_sort(ws, ws->keys, nk);
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
void terms_place(am_terms_ws *ws, const tset *set, size_t k, enum am_terms_origin o,
                 am_terms_span src)
{
    const tentry *e = &set->e[k];
    size_t alt;
    size_t p = terms_find_unclaimed(ws, set, e, e->key, &ws->ref, 0, &alt);
    if (p == NOPOS) {
        push_dev(ws, o, k, src);
        return;
    }
    terms_claim(ws, set, e->key, p);
    am_terms_inst in;
    inst_blank(&in);
    in.origin = o;
    in.entry = k;
    in.alt = alt;
    in.src = src;
    in.ref = terms_mkspan(&ws->ref, p, p + set->a[e->alt0 + alt].norm.n);
    push_inst(ws, set, e->key, &in);
}

/* Annotation k with a byte span: the tokens overlapping it. */
void terms_place_span(am_terms_ws *ws, const tset *set, size_t k, const am_terms_annot *an)
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
    in.ref = terms_mkspan(x, s, end);
    terms_claim(ws, set, e->key, s);
    push_inst(ws, set, e->key, &in);
}
