/*
 * alam2021.h — reference profile `alam2021` (docs/metrics.md §3): reproduces, bit
 * for bit, the WMT21 terminology scorer evaluate_term_wmt.py of Alam et al.
 * (2021) without its Stanza lemmatizer pass: exact-match accuracy, window
 * overlap and 1 − TERm (notes-alam2021-terM.md) on WMT21 SGML documents.
 *
 * Inputs are documents read by am_sgml_parse. Reference segments are scored
 * in reference order; each pairs with the hypothesis segment of the same id.
 * Corpus sums are accumulated in hypothesis order, as the script does, so the
 * floating-point results are identical to the script's.
 */
#ifndef AM_ALAM2021_H
#define AM_ALAM2021_H

#include "am.h"
#include "sgml.h"

/* The script's term cost (the `lc` argument of TER_modified.ter). */
#define AM_ALAM_TERM_COST 2

typedef struct am_alam_seg {
    const char *id; /* the reference segment's id (borrowed from ref) */
    size_t hyp; /* index of the paired hypothesis segment, (size_t)-1 if none */
    size_t em_correct; /* terms matched exactly (all term types) */
    size_t em_terms; /* number of <term> tags of the reference segment */
    double *wo; /* [nwindows] window overlap of the segment (0 when unpaired) */
    int term_ter_valid; /* 0 when the reference is empty (the script divides by 0) or unpaired */
    double term_ter; /* TERm of the segment (can exceed 1) */
} am_alam_seg;

typedef struct am_alam_result {
    size_t nwindows;
    size_t *windows; /* copy of the requested window sizes */
    am_alam_seg *segs; /* one per reference segment, reference order */
    size_t nsegs;
    size_t nhyp; /* hypothesis segments scored */
    size_t em_correct; /* Σ over paired segments */
    size_t em_terms;
    int exact_match_valid; /* 0 when em_terms == 0 (script: ZeroDivisionError) */
    double exact_match; /* em_correct / em_terms */
    double *window_overlap; /* [nwindows]: Σ segment WO / number of reference segments */
    int term_ter_valid; /* 0 when some segment's TERm is invalid or nhyp == 0 */
    double one_minus_term_ter; /* 1 − (Σ segment TERm) / nhyp */
    size_t err_seg; /* after AM_ERR_RANGE: the reference segment over the limit */
} am_alam_result;

/* Work limit of one segment's TERm, in edit-distance cells (about 1 to 3
 * seconds). The script's greedy shift search evaluates every (position,
 * reference position) pair of equal tokens in every round, each by an edit
 * distance over the reference, and caches a row for every prefix it ever
 * evaluated: its time and memory grow like n^4 and more (a 240-token
 * repetitive segment: 50 s and 10 GB before the checkpointed cache). A
 * segment that needs more than this is refused with AM_ERR_RANGE instead of
 * running for hours. */
#define AM_ALAM_TER_MAX_CELLS 1000000000ULL

/* Limits of one regular-expression search of a term in a hypothesis
 * (PCRE2's match and backtracking-depth limits; docs/metrics.md §3): a
 * term such as "(a|a)*b" backtracks exponentially (Python would run for
 * hours); past the limit the term is refused with AM_ERR_INVALID. The
 * script's literal terms and simple groups use a few hundred steps. */
#define AM_ALAM_RX_MATCH_LIMIT 1000000u
#define AM_ALAM_RX_DEPTH_LIMIT 10000u

/* Scores hypothesis `hyp` against reference `ref` (its <term> tags carry the
 * terminology) with window sizes windows[0..nwindows) (each >= 1; the script
 * uses 2 and 3). `src` may be NULL; when given it must have the reference's
 * segment ids in the same order and at least as many <term> tags per segment
 * (the script reads it in parallel and would fail otherwise); it does not
 * change any number. Fills *out (caller frees with am_alam_result_free, also
 * after an error).
 * Returns AM_OK; AM_ERR_INVALID when nwindows == 0 or a window is 0, when
 * reference ids repeat, when a hypothesis id repeats, or on input the script
 * cannot process (a term without `tgt` or `type`, an empty term text, a term
 * word that is not a whole token of the segment, a term field containing the
 * script's record separators " ||| " or " --> ", a term that is not a valid
 * regular expression in the Python subset this module implements, a term
 * whose search passes AM_ALAM_RX_MATCH_LIMIT or AM_ALAM_RX_DEPTH_LIMIT);
 * AM_ERR_NOTFOUND when a hypothesis id is not in the reference;
 * AM_ERR_RANGE when a segment's TERm needs more than AM_ALAM_TER_MAX_CELLS
 * (out->err_seg says which). */
int am_alam_score(const am_sgml_doc *src, const am_sgml_doc *ref, const am_sgml_doc *hyp,
                  const size_t *windows, size_t nwindows, am_alam_result *out);

/* Frees everything owned by r and leaves it empty. NULL-safe. */
void am_alam_result_free(am_alam_result *r);

/* TERm of one segment, the script's algorithm (notes-alam2021-terM.md):
 * hypothesis tokens hyp[0..nhyp), reference tokens ref[0..nref), is_term[j]
 * non-zero when reference position j is a term position (NULL: none),
 * term_cost the cost C of term positions (the script: 2). Stores the value in
 * *out. Returns AM_OK, or AM_ERR_RANGE when nref == 0 (the script divides by
 * zero) or the work passes AM_ALAM_TER_MAX_CELLS, AM_ERR_INVALID for term_cost < 1. Thread-safe;
 * allocates internally. */
int am_alam_term_ter(const char *const *hyp, size_t nhyp, const char *const *ref, size_t nref,
                     const unsigned char *is_term, int term_cost, double *out);

/* Reference term indices by the script's rule for a term whose text has the
 * whitespace tokens words[0..nwords) in a segment with tokens toks[0..ntoks):
 * s = first index of words[0], e = first index of words[nwords-1], indices =
 * s, s+1, …, e−2, then e. Writes up to cap indices into idx and their number
 * into *nidx (the count may exceed cap; call again with more room).
 * Returns AM_OK, or AM_ERR_NOTFOUND when a word is not a token (the script
 * raises ValueError), AM_ERR_INVALID when nwords == 0. */
int am_alam_term_indices(const char *const *toks, size_t ntoks, const char *const *words,
                         size_t nwords, size_t *idx, size_t cap, size_t *nidx);

/* True when the Python regular expression `pattern` (the subset this module
 * implements: literals, ., [] classes, groups, (?:), |, ? * + {m,n}, lazy
 * forms, \d \w \s \D \W \S \b \B \A \Z and escapes, ^ $; run by PCRE2)
 * matches a prefix of text[pos..len). Returns 1 or 0, AM_ERR_INVALID when
 * the pattern is not valid or not supported (or text is not UTF-8),
 * AM_ERR_RANGE when the match passes the limits above. Exposed for tests. */
int am_alam_regex_match_at(const char *pattern, const char *text, size_t len, size_t pos);

#endif
