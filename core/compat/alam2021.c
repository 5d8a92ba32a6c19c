/*
 * alam2021.c — profile `alam2021`: evaluate_term_wmt.py without lemmatizer.
 *
 * Layout (in the order of docs/metrics.md §3, profile alam2021; private
 * declarations in alam2021_int.h):
 *   1. alam2021_re.c — the script's term searches: it builds them as regular expressions
 *      from the raw term strings ("(?= " + alternative + " )"), so
 *      "essoufflé ( e )" is a group there; a Python-`re` subset translated
 *      to PCRE2 (UTF + UCP), each pattern compiled once per call. No
 *      hand-written matcher is left: every golden value (tests/unit/
 *      test_alam2021.c, tests/cli/test_score.py) is the same with PCRE2;
 *   2. alam2021_ter.c — TERm: PyTER-style greedy shifts with the shared prefix-row cache;
 *   3. this file — per-segment exact match and window overlap;
 *   4. this file — corpus values.
 */
#include "compat/alam2021_int.h"

#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * 3. Per segment: term indices, exact match, window overlap
 * ====================================================================== */

int am_alam_term_indices(const char *const *toks, size_t ntoks, const char *const *words,
                         size_t nwords, size_t *idx, size_t cap, size_t *nidx)
{
    size_t s = 0, e = 0;
    int fs = 0, fe = 0;
    if (nwords == 0)
        return AM_ERR_INVALID;
    for (size_t i = 0; i < ntoks && !fs; i++)
        if (strcmp(toks[i], words[0]) == 0) {
            s = i;
            fs = 1;
        }
    for (size_t i = 0; i < ntoks && !fe; i++)
        if (strcmp(toks[i], words[nwords - 1]) == 0) {
            e = i;
            fe = 1;
        }
    if (!fs || !fe)
        return AM_ERR_NOTFOUND;
    size_t n = 0;
    for (size_t i = s; i + 1 < e; i++) { /* range(s, e - 1) */
        if (n < cap)
            idx[n] = i;
        n++;
    }
    if (n < cap)
        idx[n] = e;
    n++;
    *nidx = n;
    return AM_OK;
}

/* Python str.strip() (Unicode whitespace): returns the start and length. */
static void py_strip(const char *s, size_t *start, size_t *len)
{
    size_t n = strlen(s);
    size_t a = 0;
    while (a < n) {
        int32_t cp;
        size_t k = am_utf8_decode(s + a, n - a, &cp);
        if (!am_py_isspace(cp))
            break;
        a += k;
    }
    size_t b = n;
    while (b > a) {
        size_t k = b - 1;
        while (k > a && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        int32_t cp;
        am_utf8_decode(s + k, b - k, &cp);
        if (!am_py_isspace(cp))
            break;
        b = k;
    }
    *start = a;
    *len = b - a;
}

/* Python's string.punctuation substring test: `tok in string.punctuation`. */
static int in_py_punctuation(const char *tok)
{
    static const char punct[] = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    return strstr(punct, tok) != NULL;
}

/* Splits a collapsed text (single spaces, trimmed) into tokens in place of a
 * copy. Returns the copy (caller frees); tokens point into it. */
static char *split_spaces(const char *text, const char ***toks, size_t *n)
{
    char *copy = am_xstrdup(text);
    size_t cnt = 0, cap = 16;
    const char **v = am_xmalloc(cap * sizeof *v);
    char *p = copy;
    while (*p) {
        if (cnt == cap) {
            cap *= 2;
            v = am_xrealloc(v, cap * sizeof *v);
        }
        v[cnt++] = p;
        char *sp = strchr(p, ' ');
        if (!sp)
            break;
        *sp = '\0';
        p = sp + 1;
    }
    *toks = v;
    *n = cnt;
    return copy;
}

/* One term of the reference, prepared. */
typedef struct pterm {
    char *alts; /* "|"-separated alternatives (tgt [+ "|" + text.strip()]) */
    int tgt_original; /* type contains "tgt_original" */
    size_t imin, imax; /* min and max of the script's index list */
    char *desired; /* " " + text.strip() + " " */
    size_t ndesired_toks;
    size_t group; /* window-overlap group (index of first term with same desired) */
} pterm;

/* Scratch shared by all segments. */
typedef struct seg_scratch {
    rx_set rx; /* the call's compiled term patterns */
    ter_ctx ter;
    am_buf hyp; /* " " + hyp text + " " */
    size_t *claimed;
    size_t nclaimed, capclaimed;
} seg_scratch;

static int has_separator(const char *s)
{
    return s && (strstr(s, " ||| ") || strstr(s, " --> "));
}

/* Exact match of one segment (compare_EXACT without lemmas). */
static int seg_exact(seg_scratch *sc, const pterm *terms, size_t nterms, size_t *correct)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    am_buf pat;
    am_buf_init(&pat);
    sc->nclaimed = 0;
    *correct = 0;
    int rc = AM_OK;
    for (size_t t = 0; t < nterms && rc == AM_OK; t++) {
        int flag = 0;
        const char *a = terms[t].alts;
        for (;;) {
            const char *bar = strchr(a, '|');
            size_t alen = bar ? (size_t)(bar - a) : strlen(a);
            am_buf_reset(&pat);
            am_buf_appendc(&pat, ' ');
            am_buf_append(&pat, a, alen);
            am_buf_appendc(&pat, ' ');
            const finder *f = alam_rx_find(&sc->rx, pat.data, pat.len);
            if (!f) {
                rc = AM_ERR_INVALID;
                break;
            }
            size_t p = 0;
            int m;
            while ((m = alam_rx_next(f, &sc->rx, h, hl, p, &p)) == 1) {
                int taken = 0;
                for (size_t q = 0; q < sc->nclaimed && !taken; q++)
                    taken = sc->claimed[q] == p;
                if (!taken) {
                    AM_GROW(sc->claimed, sc->capclaimed, sc->nclaimed + 1, 16);
                    sc->claimed[sc->nclaimed++] = p;
                    flag = 1;
                    break;
                }
                p = alam_next_cp(h, hl, p);
            }
            if (m < 0) {
                rc = m;
                break;
            }
            if (!bar)
                break;
            a = bar + 1;
        }
        if (flag)
            (*correct)++;
    }
    am_buf_cleanup(&pat);
    return rc;
}

/* Context words: up to w tokens left of lo (nearest first), then up to w
 * right of hi, skipping string.punctuation substrings. Appends pointers. */
static size_t context(const char *const *toks, size_t n, size_t lo, size_t hi, size_t w,
                      const char **out)
{
    size_t k = 0, got = 0;
    for (size_t i = lo; i > 0 && got < w; i--) {
        if (!in_py_punctuation(toks[i - 1])) {
            out[k++] = toks[i - 1];
            got++;
        }
    }
    got = 0;
    for (size_t i = hi + 1; i < n && got < w; i++) {
        if (!in_py_punctuation(toks[i])) {
            out[k++] = toks[i];
            got++;
        }
    }
    return k;
}

typedef struct wo_entry {
    size_t j, k;
    double v;
} wo_entry;

/* Window overlap of one segment for window w (compare_exact_window_overlap). */
/* Length/complexity (issue 15): a line-for-line port of the reference
 * script's compare_exact_window_overlap, kept in its shape so the two can be
 * read side by side (its results are checked bit for bit). */
static int seg_window(seg_scratch *sc, const pterm *terms, size_t nterms, const char *const *rtoks,
                      size_t nr, const char *const *htoks, size_t nh, size_t w, double *out)
{
    const char *h = sc->hyp.data;
    size_t hl = sc->hyp.len;
    double accuracy = 0.0;
    size_t matched = 0;
    int rc = AM_OK;
    size_t cw = nr + nh;
    if (w <= cw / 2)
        cw = 2 * w;
    const char **rw = am_xmalloc((cw + 1) * sizeof *rw);
    const char **hw = am_xmalloc((cw + 1) * sizeof *hw);
    unsigned char *used = am_xmalloc(cw + 1);
    size_t *fts = NULL, nfts = 0, capfts = 0;
    size_t *inst = am_xmalloc((nterms + 1) * sizeof *inst);
    wo_entry *acc = NULL;
    size_t capacc = 0;

    for (size_t g = 0; g < nterms && rc == AM_OK; g++) {
        if (!terms[g].tgt_original || terms[g].group != g)
            continue;
        /* instances of this desired, in order */
        size_t ni = 0;
        for (size_t t = g; t < nterms; t++)
            if (terms[t].tgt_original && terms[t].group == g)
                inst[ni++] = t;
        const finder *f = alam_rx_find(&sc->rx, terms[g].desired, strlen(terms[g].desired));
        if (!f) {
            rc = AM_ERR_INVALID;
            break;
        }
        nfts = 0;
        size_t p = 0;
        int m;
        while ((m = alam_rx_next(f, &sc->rx, h, hl, p, &p)) == 1) {
            AM_GROW(fts, capfts, nfts + 1, 8);
            fts[nfts++] = p;
            p = alam_next_cp(h, hl, p);
        }
        if (m < 0) {
            rc = m;
            break;
        }
        if (nfts == 0)
            continue;
        size_t nacc = ni * nfts;
        if (nacc > capacc) {
            capacc = nacc;
            acc = am_xrealloc(acc, capacc * sizeof *acc);
        }
        size_t e = 0;
        for (size_t j = 0; j < ni && rc == AM_OK; j++) {
            const pterm *pt = &terms[inst[j]];
            size_t nrw = context(rtoks, nr, pt->imin, pt->imax, w, rw);
            for (size_t k = 0; k < nfts; k++) {
                size_t cnt_sp = 0;
                for (size_t q = 0; q < fts[k]; q++)
                    cnt_sp += h[q] == ' ';
                if (cnt_sp > nh) { /* the script would raise IndexError */
                    rc = AM_ERR_INVALID;
                    break;
                }
                size_t lo = cnt_sp, hi = cnt_sp + pt->ndesired_toks - 1;
                size_t nhw = context(htoks, nh, lo, hi, w, hw);
                memset(used, 0, nhw);
                size_t cnt = 0;
                for (size_t a = 0; a < nrw; a++) {
                    for (size_t b = 0; b < nhw; b++) {
                        if (!used[b] && strcmp(rw[a], hw[b]) == 0) {
                            used[b] = 1;
                            cnt++;
                            break;
                        }
                    }
                }
                acc[e].j = j;
                acc[e].k = k;
                acc[e].v = nrw ? (double)cnt / (double)nrw : 0.0;
                e++;
            }
        }
        if (rc != AM_OK)
            break;
        /* stable sort, descending by value (insertion sort keeps order) */
        for (size_t a = 1; a < e; a++) {
            wo_entry x = acc[a];
            size_t b = a;
            while (b > 0 && acc[b - 1].v < x.v) {
                acc[b] = acc[b - 1];
                b--;
            }
            acc[b] = x;
        }
        unsigned char *mref = am_xcalloc(ni, 1);
        unsigned char *mhyp = am_xcalloc(nfts, 1);
        for (size_t a = 0; a < e; a++) {
            if (mref[acc[a].j] || mhyp[acc[a].k])
                continue;
            mref[acc[a].j] = 1;
            mhyp[acc[a].k] = 1;
            matched++;
            accuracy += acc[a].v;
        }
        free(mref);
        free(mhyp);
    }
    *out = matched > 0 ? accuracy / (double)matched : 0.0;
    free(rw);
    free(hw);
    free(used);
    free(fts);
    free(inst);
    free(acc);
    return rc;
}

/* Prepares the reference terms of segment rs. Returns AM_OK or
 * AM_ERR_INVALID; *is_term (length ntoks) gets the TERm positions. */
static int prep_terms(const am_sgml_seg *rs, const char *const *toks, size_t ntoks, pterm *pt,
                      unsigned char *is_term)
{
    am_toks words;
    am_toks_init(&words);
    int rc = AM_OK;
    size_t *idx = NULL, capidx = 0;
    for (size_t t = 0; t < rs->nterms && rc == AM_OK; t++) {
        const am_sgml_term *st = &rs->terms[t];
        if (!st->tgt || !st->type || has_separator(st->tgt) || has_separator(st->text)) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&words);
        am_toks_split_py(&words, st->text);
        if (words.n == 0) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t nidx = 0;
        rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx, capidx,
                                  &nidx);
        if (rc == AM_OK && nidx > capidx) {
            capidx = nidx;
            idx = am_xrealloc(idx, capidx * sizeof *idx);
            rc = am_alam_term_indices(toks, ntoks, (const char *const *)words.v, words.n, idx,
                                      capidx, &nidx);
        }
        if (rc != AM_OK) {
            rc = AM_ERR_INVALID;
            break;
        }
        size_t a, n;
        py_strip(st->text, &a, &n);
        /* alternatives: tgt, plus the stripped text when not a substring of tgt */
        am_buf b;
        am_buf_init(&b);
        am_buf_appends(&b, st->tgt);
        char *stripped = am_xstrndup(st->text + a, n);
        if (!strstr(st->tgt, stripped)) {
            am_buf_appendc(&b, '|');
            am_buf_appends(&b, stripped);
        }
        pt[t].alts = am_buf_detach(&b);
        am_buf_init(&b);
        am_buf_appendc(&b, ' ');
        am_buf_appends(&b, stripped);
        am_buf_appendc(&b, ' ');
        pt[t].desired = am_buf_detach(&b);
        free(stripped);
        pt[t].ndesired_toks = words.n;
        pt[t].tgt_original = strstr(st->type, "tgt_original") != NULL;
        size_t mn = idx[0], mx = idx[0];
        for (size_t i = 1; i < nidx; i++) {
            if (idx[i] < mn)
                mn = idx[i];
            if (idx[i] > mx)
                mx = idx[i];
        }
        pt[t].imin = mn;
        pt[t].imax = mx;
        pt[t].group = t;
        if (pt[t].tgt_original) {
            for (size_t i = 0; i < nidx; i++)
                is_term[idx[i]] = 1;
            for (size_t q = 0; q < t; q++) {
                if (pt[q].tgt_original && strcmp(pt[q].desired, pt[t].desired) == 0) {
                    pt[t].group = pt[q].group;
                    break;
                }
            }
        }
    }
    free(idx);
    am_toks_cleanup(&words);
    return rc;
}

/* Checks the source document the way the script reads it in parallel. */
static int check_source(const am_sgml_doc *src, const am_sgml_doc *ref)
{
    am_toks toks, words;
    int rc = AM_OK;
    if (src->nsegs != ref->nsegs)
        return AM_ERR_INVALID;
    am_toks_init(&toks);
    am_toks_init(&words);
    for (size_t i = 0; i < src->nsegs && rc == AM_OK; i++) {
        const am_sgml_seg *s = &src->segs[i];
        if (strcmp(s->id, ref->segs[i].id) != 0 || s->nterms < ref->segs[i].nterms) {
            rc = AM_ERR_INVALID;
            break;
        }
        am_toks_reset(&toks);
        am_toks_split_py(&toks, s->text);
        for (size_t t = 0; t < ref->segs[i].nterms; t++) {
            am_toks_reset(&words);
            am_toks_split_py(&words, s->terms[t].text);
            size_t nidx;
            if (has_separator(s->terms[t].text) ||
                am_alam_term_indices((const char *const *)toks.v, toks.n,
                                     (const char *const *)words.v, words.n, NULL, 0,
                                     &nidx) != AM_OK) {
                rc = AM_ERR_INVALID;
                break;
            }
        }
    }
    am_toks_cleanup(&toks);
    am_toks_cleanup(&words);
    return rc;
}

static int seg_id_cmp(const void *a, const void *b, const am_sgml_doc *ref)
{
    return strcmp(ref->segs[*(const size_t *)a].id, ref->segs[*(const size_t *)b].id);
}

/* Sorted index of the reference ids (qsort has no context: insertion into a
 * sorted array by binary search instead). Returns AM_ERR_INVALID on a
 * duplicate id. */
static int sort_ids(const am_sgml_doc *ref, size_t *order)
{
    for (size_t i = 0; i < ref->nsegs; i++) {
        size_t lo = 0, hi = i;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = seg_id_cmp(&order[mid], &i, ref);
            if (c == 0)
                return AM_ERR_INVALID;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(order + lo + 1, order + lo, (i - lo) * sizeof *order);
        order[lo] = i;
    }
    return AM_OK;
}

static size_t find_id(const am_sgml_doc *ref, const size_t *order, const char *id)
{
    size_t lo = 0, hi = ref->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ref->segs[order[mid]].id, id);
        if (c == 0)
            return order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

/* Scores reference segment rs against hypothesis segment hs into *res. */
static int score_seg(seg_scratch *sc, const am_sgml_seg *rs, const am_sgml_seg *hs,
                     const size_t *windows, size_t nwindows, am_alam_seg *res)
{
    const char **rtoks = NULL, **htoks = NULL;
    size_t nr = 0, nh = 0;
    char *rcopy = split_spaces(rs->text, &rtoks, &nr);
    char *hcopy = split_spaces(hs->text, &htoks, &nh);
    pterm *pt = am_xcalloc(rs->nterms + 1, sizeof *pt);
    unsigned char *is_term = am_xcalloc(nr + 1, 1);
    int rc = prep_terms(rs, rtoks, nr, pt, is_term);

    if (rc == AM_OK) {
        am_buf_reset(&sc->hyp);
        am_buf_appendc(&sc->hyp, ' ');
        am_buf_appends(&sc->hyp, hs->text);
        am_buf_appendc(&sc->hyp, ' ');
        res->em_terms = rs->nterms;
        rc = seg_exact(sc, pt, rs->nterms, &res->em_correct);
    }
    for (size_t w = 0; w < nwindows && rc == AM_OK; w++)
        rc = seg_window(sc, pt, rs->nterms, rtoks, nr, htoks, nh, windows[w], &res->wo[w]);
    if (rc == AM_OK) {
        int trc = alam_term_ter_ctx(&sc->ter, htoks, nh, rtoks, nr, is_term, AM_ALAM_TERM_COST,
                                    &res->term_ter);
        res->term_ter_valid = trc == AM_OK;
        if (sc->ter.over)
            rc = AM_ERR_RANGE; /* over the work limit: an error, not a null */
    }
    for (size_t t = 0; t < rs->nterms; t++) {
        free(pt[t].alts);
        free(pt[t].desired);
    }
    free(pt);
    free(is_term);
    free(rtoks);
    free(htoks);
    free(rcopy);
    free(hcopy);
    return rc;
}

/* ======================================================================
 * 4. Corpus
 * ====================================================================== */

int am_alam_score(const am_sgml_doc *src, const am_sgml_doc *ref, const am_sgml_doc *hyp,
                  const size_t *windows, size_t nwindows, am_alam_result *out)
{
    memset(out, 0, sizeof *out);
    if (!ref || !hyp || nwindows == 0 || !windows)
        return AM_ERR_INVALID;
    for (size_t w = 0; w < nwindows; w++)
        if (windows[w] == 0)
            return AM_ERR_INVALID;
    if (src) {
        int rc = check_source(src, ref);
        if (rc != AM_OK)
            return rc;
    }
    size_t *order = am_xmalloc((ref->nsegs + 1) * sizeof *order);
    size_t *pair = am_xmalloc((hyp->nsegs + 1) * sizeof *pair);
    int rc = sort_ids(ref, order);

    out->nwindows = nwindows;
    out->windows = am_xmalloc(nwindows * sizeof *out->windows);
    memcpy(out->windows, windows, nwindows * sizeof *windows);
    out->window_overlap = am_xcalloc(nwindows, sizeof *out->window_overlap);
    out->nsegs = ref->nsegs;
    out->segs = am_xcalloc(ref->nsegs + 1, sizeof *out->segs);
    for (size_t i = 0; i < ref->nsegs; i++) {
        out->segs[i].id = ref->segs[i].id;
        out->segs[i].hyp = (size_t)-1;
        out->segs[i].wo = am_xcalloc(nwindows, sizeof *out->segs[i].wo);
    }
    for (size_t j = 0; j < hyp->nsegs && rc == AM_OK; j++) {
        size_t r = (j < ref->nsegs && strcmp(ref->segs[j].id, hyp->segs[j].id) == 0)
                       ? j
                       : find_id(ref, order, hyp->segs[j].id);
        if (r == (size_t)-1)
            rc = AM_ERR_NOTFOUND;
        else if (out->segs[r].hyp != (size_t)-1)
            rc = AM_ERR_INVALID;
        else {
            out->segs[r].hyp = j;
            pair[j] = r;
        }
    }

    seg_scratch sc;
    memset(&sc, 0, sizeof sc);
    alam_rx_set_init(&sc.rx);
    am_buf_init(&sc.hyp);
    for (size_t i = 0; i < ref->nsegs && rc == AM_OK; i++) {
        am_alam_seg *s = &out->segs[i];
        if (s->hyp == (size_t)-1)
            continue;
        rc = score_seg(&sc, &ref->segs[i], &hyp->segs[s->hyp], windows, nwindows, s);
        if (rc == AM_ERR_RANGE)
            out->err_seg = i;
    }
    alam_rx_set_cleanup(&sc.rx);
    alam_ter_cleanup(&sc.ter);
    am_buf_cleanup(&sc.hyp);
    free(sc.claimed);

    if (rc == AM_OK) {
        /* corpus sums in hypothesis order, as the script accumulates them */
        double ter_sum = 0.0;
        int ter_ok = hyp->nsegs > 0;
        double *wo_sum = am_xcalloc(nwindows, sizeof *wo_sum);
        for (size_t j = 0; j < hyp->nsegs; j++) {
            const am_alam_seg *s = &out->segs[pair[j]];
            out->em_correct += s->em_correct;
            out->em_terms += s->em_terms;
            for (size_t w = 0; w < nwindows; w++)
                wo_sum[w] += s->wo[w];
            if (!s->term_ter_valid)
                ter_ok = 0;
            else
                ter_sum += s->term_ter;
        }
        out->nhyp = hyp->nsegs;
        out->exact_match_valid = out->em_terms > 0;
        if (out->exact_match_valid)
            out->exact_match = (double)out->em_correct / (double)out->em_terms;
        for (size_t w = 0; w < nwindows; w++)
            out->window_overlap[w] = ref->nsegs ? wo_sum[w] / (double)ref->nsegs : 0.0;
        out->term_ter_valid = ter_ok;
        if (ter_ok)
            out->one_minus_term_ter = 1.0 - ter_sum / (double)hyp->nsegs;
        free(wo_sum);
    }
    free(order);
    free(pair);
    return rc;
}

void am_alam_result_free(am_alam_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nsegs; i++)
        free(r->segs[i].wo);
    free(r->segs);
    free(r->windows);
    free(r->window_overlap);
    memset(r, 0, sizeof *r);
}
