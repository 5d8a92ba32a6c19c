/* terms.c — terminology consistency, standard profile (see terms.h and
 * docs/metrics.md §3). The code follows the order of terms.h over three
 * files (private declarations in terms_int.h): terms_set.c — stemmer, text
 * pipeline, term sets (compiled glossary / annotations); terms_view.c —
 * sequence matching, maps, sorting, views, instances and exact and stem
 * match; this file — partial and reorder, windows, forbidden uses, totals,
 * preview. */
#include "terms_int.h"
#include "recall.h"

#include <assert.h>
#include <libstemmer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    const tview *v = terms_view_pos(ws, set, h, e->cs ? MODE_CS : MODE_FOLD);
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
            for (size_t i = terms_lower_bound(v->pos, v->n_pos, id << 32);
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
            size_t lo = terms_lower_bound(v->pos, v->n_pos, id << 32);
            size_t hi = terms_lower_bound(v->pos, v->n_pos, (id + 1) << 32);
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
    terms_radix_sort(ws, ws->keys, ne);
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
    terms_map_clear(&ws->claimset);
    terms_map_clear(&ws->cursor);
    terms_views_drop(ws);
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
    terms_tset_reset(&ws->ann);
    AM_GROW(ws->keys, ws->cap_keys, n + 1 + 1, 16);
    for (size_t k = 0; k < n; k++) {
        if (!an[k].targets || an[k].n_targets == 0)
            return AM_ERR_INVALID;
        for (size_t t = 0; t < an[k].n_targets; t++)
            if (!an[k].targets[t])
                return AM_ERR_INVALID;
        int rc = terms_set_add_entry(ws, cfg, &ws->ann, NULL, an[k].targets, an[k].n_targets,
                                     an[k].case_sensitive, 0, cfg->stem_match);
        if (rc)
            return rc;
        assert(k <= UINT32_MAX);
        ws->keys[k] = (uint64_t)annot_hash(&an[k]) << 32 | k;
    }
    terms_radix_sort(ws, ws->keys, n);
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
    terms_tset_index(&ws->ann);
    return AM_OK;
}

/* Forbidden uses: entries of ws->hits that are forbidden, once per entry;
 * the hypothesis is walked from occurrence to occurrence. More than
 * AM_TERMS_MAX_OCCURRENCES uses: AM_ERR_RANGE. */
static int forbidden_uses(am_terms_ws *ws, const am_terms_lex *lex)
{
    const tset *set = &lex->set;
    terms_map_clear(&ws->seen);
    for (size_t i = 0; i < ws->n_hits; i++) {
        size_t k = ws->hits[i].entry;
        if (!set->e[k].forbidden)
            continue;
        uint64_t *seen = terms_map_at(&ws->seen, k, 0);
        if (*seen)
            continue;
        *seen = 1;
        const tentry *e = &set->e[k];
        const tview *v = terms_view_occ(ws, set, &ws->hyp, e->cs ? MODE_CS : MODE_FOLD);
        size_t a, p = 0;
        while ((p = terms_next_alt(ws, set, e, v, p, 0, &a)) != NOPOS) {
            if (ws->n_forbid >= terms_ws_max_occ(ws))
                return AM_ERR_RANGE;
            size_t len = set->a[e->alt0 + a].norm.n;
            AM_GROW(ws->forbid, ws->cap_forbid, ws->n_forbid + 1, 16);
            ws->forbid[ws->n_forbid].entry = k;
            ws->forbid[ws->n_forbid].alt = a;
            ws->forbid[ws->n_forbid].hyp = terms_mkspan(&ws->hyp, p, p + len);
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
    if (cfg->stem_match && (rc = terms_ws_stemmer(ws, lex->stem_alg)))
        return rc;
    if (n_annots && (rc = load_annots(ws, cfg, annots, n_annots)))
        return rc;
    int cs = need_cs(lex, n_annots ? &ws->ann : NULL);
    if ((rc = terms_text_load(ws, cfg, cfg->tok_src, src, NULL, NULL, &ws->src,
                              lex->set.any_cs && cfg->casefold, 0)))
        return rc;
    if ((rc = terms_text_load(ws, cfg, cfg->tok_tgt, ref, ref_t->tokens, ref_t->words, &ws->ref, cs,
                              1)))
        return rc;
    if ((rc = terms_text_load(ws, cfg, cfg->tok_tgt, hyp, hyp_t->tokens, hyp_t->words, &ws->hyp, cs,
                              1)))
        return rc;

    /* instances */
    if ((rc = terms_find_hits(ws, lex)))
        return rc;
    if (n_annots) {
        am_terms_span none;
        memset(&none, 0, sizeof none);
        for (size_t k = 0; k < n_annots; k++)
            if (annots[k].has_span)
                terms_place_span(ws, &ws->ann, k, &annots[k]);
        for (size_t k = 0; k < n_annots; k++)
            if (!annots[k].has_span)
                terms_place(ws, &ws->ann, k, AM_TERMS_ANNOTATION, none);
    } else {
        for (size_t i = 0; i < ws->n_hits; i++) {
            size_t k = ws->hits[i].entry;
            if (lex->set.e[k].forbidden)
                continue;
            if (terms_cancelled(ws))
                return AM_ERR_CANCELLED;
            terms_place(
                ws, &lex->set, k, AM_TERMS_GLOSSARY,
                terms_mkspan(&ws->src, ws->hits[i].start, ws->hits[i].start + ws->hits[i].len));
        }
    }

    /* exact match, then stem match; hypothesis claims are separate from the
     * translation's (different text) */
    terms_map_clear(&ws->claimset);
    for (int stem = 0; stem < 2; stem++) {
        if (stem && !cfg->stem_match)
            break;
        if (stem && (rc = terms_text_stems(ws, cfg, &ws->hyp)))
            return rc;
        for (size_t i = 0; i < ws->n_inst; i++) {
            am_terms_inst *in = &ws->inst[i];
            if (in->match != AM_TERMS_NONE)
                continue;
            if (terms_cancelled(ws))
                return AM_ERR_CANCELLED;
            const tset *set = ws->inst_set[i];
            const tentry *e = &set->e[in->entry];
            size_t alt;
            size_t p = terms_find_unclaimed(ws, set, e, ws->inst_key[i], &ws->hyp, stem, &alt);
            if (p == NOPOS)
                continue;
            terms_claim(ws, set, ws->inst_key[i], p);
            const talt *al = &set->a[e->alt0 + alt];
            in->match = stem ? AM_TERMS_STEM : AM_TERMS_EXACT;
            in->hyp_alt = alt;
            in->hyp = terms_mkspan(&ws->hyp, p, p + (stem ? al->stem.n : al->norm.n));
        }
    }
    for (size_t i = 0; i < ws->n_inst; i++) {
        const tset *set = ws->inst_set[i];
        if (terms_cancelled(ws))
            return AM_ERR_CANCELLED;
        partial_reorder(ws, set, &set->e[ws->inst[i].entry], &ws->inst[i], ws->ref.n);
    }
    windows(ws, cfg);
    if (terms_cancelled(ws))
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
    if (cfg->stem_match && (rc = terms_ws_stemmer(ws, lex->stem_alg)))
        return rc;
    int cs = need_cs(lex, NULL);
    if ((rc = terms_text_load(ws, cfg, cfg->tok_src, src, NULL, NULL, &ws->src, cs, 0)))
        return rc;
    if ((rc = terms_text_load(ws, cfg, cfg->tok_tgt, hyp, NULL, NULL, &ws->hyp, cs, 0)))
        return rc;
    if ((rc = terms_find_hits(ws, lex)))
        return rc;
    const tset *set = &lex->set;
    for (int stem = 0; stem < 2; stem++) {
        if (stem && !cfg->stem_match)
            break;
        if (stem && (rc = terms_text_stems(ws, cfg, &ws->hyp)))
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
                pv->src =
                    terms_mkspan(&ws->src, ws->hits[i].start, ws->hits[i].start + ws->hits[i].len);
                pv->used = AM_TERMS_NONE;
                pv->alt = NOPOS;
            }
            am_terms_prev *pv = &ws->prev[i];
            if (pv->used != AM_TERMS_NONE || (stem && e->forbidden))
                continue;
            if (terms_cancelled(ws))
                return AM_ERR_CANCELLED;
            size_t alt;
            size_t p = terms_find_unclaimed(ws, set, e, e->key, &ws->hyp, stem, &alt);
            if (p == NOPOS)
                continue;
            terms_claim(ws, set, e->key, p);
            const talt *al = &set->a[e->alt0 + alt];
            pv->used = stem ? AM_TERMS_STEM : AM_TERMS_EXACT;
            pv->alt = alt;
            pv->hyp = terms_mkspan(&ws->hyp, p, p + (stem ? al->stem.n : al->norm.n));
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
