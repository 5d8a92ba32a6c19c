/*
 * ter.h — TER (sacreBLEU 2.6.0, default settings) and the term-weighted
 * TERm of docs/metrics.md §3 (standard profile).
 *
 * TER follows sacreBLEU's lib_ter.py exactly:
 *   * tokenizer: TercomTokenizer (tokenizer_ter.py) with all four options:
 *     the text is str.rstrip()ped; case_sensitive=False lower-cases it with
 *     Python's str.lower(); normalized applies the general and Western
 *     rules (line joins, four XML entities, punctuation split, possessive
 *     's, period/comma and digit-dash rules) and, with asian_support, puts
 *     spaces around CJK ideographs, CJK symbols and CJK/full-width
 *     punctuation; no_punct removes .,?:;!"() and, with asian_support, the
 *     CJK/full-width punctuation; then the text is split as Python's
 *     str.split() does. asian_support alone changes nothing (sacreBLEU
 *     applies it only inside the two other options). sacreBLEU's Hiragana
 *     and Katakana rules never match (their pattern anchors at the start of
 *     a string that normalization always begins with a space), so they are
 *     not reproduced;
 *   * several references: the fewest edits over the references and their
 *     average length (TER._compute_segment_statistics);
 *   * edit distance: Levenshtein restricted to a beam of 25 cells around the
 *     pseudo-diagonal (wider when |ref|/|hyp| > 50), with sacreBLEU's
 *     preference order of operations for the trace (match/substitution,
 *     then extra hypothesis word, then missing reference word);
 *   * shifts: tercom-style greedy search; spans of at most 10 words, moved at
 *     most 50 positions; candidates filtered and ranked exactly as sacreBLEU
 *     does (gain, then longer span, then earlier hypothesis start, then
 *     earlier target); at most 1000 candidates per sentence pair counted
 *     over all rounds — when the limit is reached the round's best shift is
 *     not applied (as in sacreBLEU);
 *   * sentence TER = edits / |ref|; empty reference: edits = |hyp| and
 *     length 0, score 1 when edits > 0 else 0; corpus TER = Σ edits / Σ |ref|.
 *   sacreBLEU's prefix-row cache is a pure memoization (rows depend only on
 *   the hypothesis prefix, and every hypothesis in one search has the same
 *   length, so the beam is the same); we reuse the forward (prefix) and
 *   backward (suffix) rows of the current hypothesis instead and recompute
 *   only the rows a shift changes, which gives the same numbers.
 *
 * TERm (standard profile): the same search with per-reference-position
 * costs ref_cost[j] >= 1 (C_term inside a term instance's span, else 1):
 *   * substituting reference word j, or leaving it out (the hypothesis lacks
 *     it), costs ref_cost[j]; an extra hypothesis word costs 1; the first DP
 *     row is the running sum of ref_cost;
 *   * a shift of a hypothesis span that matches reference words
 *     [r, r+len) costs max(ref_cost[r .. r+len-1]) (i.e. C_term when the span
 *     covers a term word, else 1); a shift is ranked by its net gain
 *     (edit-distance reduction − (shift cost − 1)) and applied when the net
 *     gain is > 0 — with unit costs this is exactly TER's rule;
 *   * TERm edits = Σ shift costs + final weighted edit distance, normalized
 *     by the UNWEIGHTED reference length.
 *   With ref_cost NULL or all 1 the computation is TER's, bit for bit.
 *   Guard (by construction TERm >= TER): the shift search is greedy, so under
 *   weighted costs it may in principle settle on a shift sequence whose cost
 *   is below the unit-cost TER value found by TER's own search. TERm edits
 *   are therefore reported as max(weighted edits, TER edits) for the same
 *   pair; adding a term can never lower the score below TER.
 *
 * Deviations (documented): lower-casing uses utf8proc's simple lowercase
 * mapping (Unicode version of the installed utf8proc) plus Python's two
 * special cases, U+0130 → "i̇" (U+0069 U+0307) and the context-dependent
 * final sigma (U+03A3 → U+03C2). For the final-sigma context, "cased" and
 * "case-ignorable" are derived from utf8proc data (Lu/Ll/Lt, a case
 * mapping, or a small Other_Lowercase/Other_Uppercase table; Mn/Me/Cf/Lm/Sk
 * plus the Word_Break MidLetter/MidNumLet/Single_Quote characters). Checked
 * against CPython 3.11 str.lower() (Unicode 14) on every code point alone,
 * on every code point next to a sigma and on 20,000 random strings: the only
 * differences are code points unassigned in Unicode 14 but assigned in the
 * Unicode 15 data of utf8proc 2.8.
 *
 * All functions are thread-safe on distinct objects; nothing does I/O.
 */
#ifndef AM_TER_H
#define AM_TER_H

#include <stddef.h>

#include "am.h"

/* Limits of the search (sacreBLEU's values). */
#define AM_TER_BEAM_WIDTH 25
#define AM_TER_MAX_SHIFT_SIZE 10
#define AM_TER_MAX_SHIFT_DIST 50
#define AM_TER_MAX_SHIFT_CANDIDATES 1000
/* Costs are computed in integers, in units of 1/AM_TER_COST_SCALE: exact for
 * TER and for integer (or binary-fraction) term costs; other ref_cost values
 * are rounded to the nearest 1/65536. ref_cost values must lie in
 * [1, AM_TER_MAX_COST]. */
#define AM_TER_COST_SCALE 65536
#define AM_TER_MAX_COST 10000.0

/* sacreBLEU's TercomTokenizer options (all off by default). */
typedef struct am_ter_opts {
    int case_sensitive;
    int normalized;
    int no_punct;
    int asian_support;
} am_ter_opts;

/* Sets *o to sacreBLEU's defaults (everything off). */
void am_ter_opts_init(am_ter_opts *o);

/* Byte ranges of tokens in the text they came from: token k covers
 * [start[k], end[k]) of the input (a token made of several input pieces,
 * e.g. after no_punct removal, covers all of them). Zero-initialize (or
 * am_ter_spans_init); caller cleans up with am_ter_spans_cleanup. */
typedef struct am_ter_spans {
    size_t *start, *end;
    size_t n, cap;
} am_ter_spans;
void am_ter_spans_init(am_ter_spans *sp);
void am_ter_spans_cleanup(am_ter_spans *sp);

/* Tokenizes text as sacreBLEU's TER does (TER._preprocess_segment, i.e.
 * str.rstrip() and TercomTokenizer with options o, then str.split()); o
 * NULL: the defaults. out is reset first and receives the tokens (owned by
 * out; caller cleans it up); spans, when not NULL, is reset and receives
 * each token's byte range in text. Returns AM_OK, AM_ERR_INVALID for NULL
 * text/out, or AM_ERR_UTF8 when text is not valid UTF-8 (out is then left
 * empty). */
int am_ter_tokenize_opts(const char *text, const am_ter_opts *o, am_toks *out, am_ter_spans *spans);

/* am_ter_tokenize_opts with the default options except case_sensitive. */
int am_ter_tokenize(const char *text, int case_sensitive, am_toks *out);

/* Reusable workspace: holds every buffer the search needs so that scoring
 * many segments allocates nothing once the buffers have grown. Not shared
 * between threads. */
typedef struct am_ter_ws am_ter_ws;

/* Creates a workspace (caller frees with am_ter_ws_free). Never NULL. */
am_ter_ws *am_ter_ws_new(void);
/* Frees a workspace and its buffers; NULL is allowed. */
void am_ter_ws_free(am_ter_ws *ws);
/* Cancellation check for the shift search (borrowed, NULL: none); a
 * cancelled am_ter_pair/am_ter_edits returns AM_ERR_CANCELLED. */
void am_ter_ws_set_cancel(am_ter_ws *ws, am_cancel *cancel);
/* Tests only: plain != 0 costs every shift candidate by the dynamic
 * programme over its whole changed window, as before the shared rows of
 * the default (the results are identical; tests compare the two). */
void am_ter_ws_set_plain(am_ter_ws *ws, int plain);

/* Number of edits of hyp against ref (tokens from am_ter_tokenize).
 * ref_cost NULL: plain TER edits. Otherwise ref_cost[0..ref->n) gives the
 * cost of editing each reference position (each in [1, AM_TER_MAX_COST]) and the
 * result is the TERm edits (guarded: never below the TER edits, see above).
 * ws may be NULL (a temporary workspace is used). Returns AM_OK,
 * AM_ERR_INVALID (NULL hyp/ref/edits, bad ref_cost), AM_ERR_RANGE (more
 * than 2^24 tokens on a side) or AM_ERR_INTERNAL (broken invariant). */
int am_ter_edits(am_ter_ws *ws, const am_toks *hyp, const am_toks *ref, const double *ref_cost,
                 double *edits);

/* TER and TERm edits of one pair at once (shares tokenisation work and the
 * unit-cost search). ref_cost as for am_ter_edits (NULL: term_edits equals
 * ter_edits). Either output may be NULL. Same return values. */
int am_ter_pair(am_ter_ws *ws, const am_toks *hyp, const am_toks *ref, const double *ref_cost,
                double *ter_edits, double *term_edits);

/* sacreBLEU's TER statistics of a hypothesis against several references
 * refs[0..nrefs) (nrefs >= 1): *edits receives the fewest edits over the
 * references and *ref_len their average length (sacreBLEU's
 * avg_ref_len = Σ lengths / nrefs). Same return values as am_ter_edits
 * (AM_ERR_INVALID also for nrefs 0 or a NULL reference). */
int am_ter_multi(am_ter_ws *ws, const am_toks *hyp, const am_toks *const *refs, size_t nrefs,
                 double *edits, double *ref_len);

/* The same from texts, tokenized with options o (NULL: defaults): the TER
 * statistics of hyp against refs[0..nrefs). AM_ERR_UTF8 for invalid text;
 * otherwise as am_ter_multi. */
int am_ter_segment(am_ter_ws *ws, const am_ter_opts *o, const char *hyp, const char *const *refs,
                   size_t nrefs, double *edits, double *ref_len);

/* Sentence score from edits and the (unweighted) reference length, as a
 * fraction: edits/ref_len; when ref_len is 0: 1 if edits > 0, else 0.
 * (sacreBLEU reports 100 times this.) */
double am_ter_score(double edits, double ref_len);

/* Corpus accumulation: Σ edits and Σ reference lengths. Zero-initialize
 * (or am_ter_stats_init) before use. */
typedef struct am_ter_stats {
    double edits; /* Σ edits (TER or TERm) */
    double ref_len; /* Σ unweighted (average, with several references) reference lengths */
    size_t n; /* number of segments added */
} am_ter_stats;

void am_ter_stats_init(am_ter_stats *s);
/* Adds one segment's edits and reference length (the average length with
 * several references, am_ter_multi). */
void am_ter_stats_add(am_ter_stats *s, double edits, double ref_len);
/* Adds every segment of from into into. */
void am_ter_stats_merge(am_ter_stats *into, const am_ter_stats *from);
/* Corpus score as a fraction, same rule as am_ter_score. */
double am_ter_stats_score(const am_ter_stats *s);

#endif
