/*
 * terms.h — terminology consistency, standard profile (docs/metrics.md §3; TER
 * and TERm are in ter.h, the alam2021 profile in compat/).
 *
 * Objects:
 *   am_terms_cfg   settings (tokenizers, normalization, stopwords, stems,
 *                  windows). Plain struct, filled by the caller.
 *   am_terms_lex   a glossary compiled for matching: every source string and
 *                  target alternative tokenized and normalized exactly as
 *                  the segment texts are. Immutable after build, so one lex
 *                  may be shared by many threads.
 *   am_terms_ws    a per-thread workspace (buffers, the Snowball stemmer).
 *                  Scoring reuses its memory, so a warm workspace allocates
 *                  (almost) nothing per segment. Never share one between
 *                  threads.
 *
 * Text pipeline (identical for source, hypothesis, translation, glossary
 * strings and annotations): am_tok_tokenize(kind) → split as Python's
 * str.split() → each token normalized with am_text_normalize(cfg.norm,
 * casefold). Entries (and annotations) flagged case-sensitive, or all terms
 * when cfg.casefold is 0, compare the case-kept form; the others the folded
 * form. Source texts use cfg.tok_src, hypothesis/translation cfg.tok_tgt.
 * Source-side matching never uses stems.
 *
 * Definitions (positions are 0-based token indices, |h| and |r| the token
 * counts of the hypothesis and the translation = reference):
 *
 *  Instances (glossary): for each entry (forbidden entries excluded) and
 *    each start position where its source token sequence occurs in the
 *    source (source positions ascending, then entry order), the first
 *    translation position p, left to right, not yet claimed by an instance
 *    of the same entry, where one of its alternatives occurs (the longest
 *    alternative wins at equal p). Claimed: p. No such p → a deviation
 *    (one per unmatched source occurrence; reported, not scored).
 *  Instances (annotations): each annotation is one instance. With a span
 *    (byte range in the translation) the instance covers the translation
 *    tokens overlapping the span and its reference words are those tokens;
 *    otherwise it is placed like a glossary instance (claims shared by
 *    annotations with identical targets); not found → a deviation.
 *    When annotations are given, they replace the glossary's instances for
 *    that segment (forbidden uses still come from the glossary).
 *  Exact match: instances in order; the first hypothesis start position
 *    not claimed by an instance of the same entry where any alternative
 *    occurs; claimed. Stem match (cfg.stem_match): afterwards, each still
 *    unmatched instance likewise on Snowball stems of the folded tokens.
 *  Partial: 1 for an exact match; otherwise the maximum over alternatives
 *    of (alternative words found in the hypothesis, each hypothesis token
 *    used once) / (alternative length). Presence only (not claims).
 *  Reorder: max over alternatives a of (1/|a|) Σ_k weight_k, where word k
 *    of a has reference position j_k = s + min(k, L−1) (s, L: the
 *    instance's translation span start and length) and weight_k =
 *    max over unused hypothesis positions i holding that word of
 *    1 − |i/|h| − j_k/|r||, 0 when absent (words taken in order, each
 *    hypothesis token used once). An exact match in the same relative
 *    place scores 1.
 *  Window overlap, for each window w in cfg.windows: exact-matched
 *    instances only. Context = up to w words left (nearest first) and up
 *    to w right of the span, skipping tokens made only of punctuation or
 *    symbols (Unicode P*, S*) and stopwords (cfg.sw; digits are kept);
 *    compared on folded tokens. overlap = |multiset ∩| / |reference
 *    context|; an instance with an empty reference context is left out.
 *    Several exact-matched instances of the same entry are paired with
 *    their claimed hypothesis occurrences greedily by best overlap (ties:
 *    lower instance, then lower occurrence index), per window; an entry
 *    with more than AM_TERMS_WINDOW_GROUP such instances is paired in
 *    consecutive blocks of that many (the greedy pairing is cubic in the
 *    block size).
 *  Forbidden uses: for a forbidden entry whose source occurs in the
 *    source, every occurrence of one of its targets in the hypothesis
 *    (non-overlapping per entry, left to right).
 *
 * Null scores: a ratio whose denominator is 0 is reported as NAN (test with
 * isnan(); encode as JSON null); the counts are always given.
 */
#ifndef AM_TERMS_H
#define AM_TERMS_H

#include "am.h"
#include "glossary.h"
#include "stopwords.h"
#include "text.h"
#include "tok.h"

#define AM_TERMS_MAX_WINDOWS 8 /* window sizes per configuration */
#define AM_TERMS_MAX_WINDOW 64 /* largest window size */
/* Limits that keep the cost of a segment linear in its size (issue 10):
 * a glossary term (source or target alternative, or an annotation target)
 * has at most this many tokens (am_terms_lex_build / am_terms_score return
 * AM_ERR_RANGE), so matching costs at most that many steps per position */
#define AM_TERMS_MAX_TERM_TOKENS 32
/* at most this many glossary occurrences in one source text, and as many
 * forbidden uses in one hypothesis (AM_ERR_RANGE beyond) */
#define AM_TERMS_MAX_OCCURRENCES 100000
/* window pairing is done in blocks of this many exact-matched instances of
 * one entry (see "Window overlap" above) */
#define AM_TERMS_WINDOW_GROUP 16

typedef struct am_terms_cfg {
    enum am_tok_kind tok_src; /* tokenizer for source texts */
    enum am_tok_kind tok_tgt; /* tokenizer for hypothesis and translation */
    enum am_norm norm; /* default AM_NORM_NFKC */
    int casefold; /* default 1 ("case: fold") */
    const am_sw *sw; /* target-language stopwords, normalized with
                        (norm, casefold); NULL = none. Borrowed: must
                        outlive every lex built with this cfg. */
    int stem_match; /* 0/1 */
    int punct_only_rule; /* as am_recall_config.punct_only_rule */
    const char *stem_lang; /* Snowball algorithm: name ("french") or code
                              ("fr", "fr-FR"); needed when stem_match */
    size_t windows[AM_TERMS_MAX_WINDOWS]; /* window sizes, 1..AM_TERMS_MAX_WINDOW */
    size_t n_windows;
} am_terms_cfg;

/* Defaults: intl/intl, NFKC, casefold, no stopwords, no stems, windows 2, 3. */
void am_terms_cfg_default(am_terms_cfg *cfg);

typedef struct am_terms_lex am_terms_lex;
typedef struct am_terms_ws am_terms_ws;

/* Compiles glossary g (which may be empty) with cfg (copied; cfg->sw is
 * borrowed). Returns AM_OK, AM_ERR_INVALID (bad cfg: n_windows too large,
 * a window of 0), AM_ERR_NOTFOUND (no Snowball stemmer for stem_lang) or
 * AM_ERR_UTF8. *out is owned by the caller (am_terms_lex_free). */
int am_terms_lex_build(const am_gloss *g, const am_terms_cfg *cfg, am_terms_lex **out);
void am_terms_lex_free(am_terms_lex *lex);
/* Number of entries (= the glossary's). */
size_t am_terms_lex_size(const am_terms_lex *lex);
/* Heap bytes the compiled glossary holds (its arrays' capacities): what a
 * cache of compiled scorers counts against its memory budget. */
size_t am_terms_lex_bytes(const am_terms_lex *lex);

/* A new empty workspace (caller frees with am_terms_ws_free). */
am_terms_ws *am_terms_ws_new(void);
void am_terms_ws_free(am_terms_ws *ws);
/* Cancellation check for scoring and previews with ws (borrowed, NULL:
 * none); a cancelled call returns AM_ERR_CANCELLED. */
void am_terms_ws_set_cancel(am_terms_ws *ws, am_cancel *cancel);

/* An explicit annotation of one segment. */
typedef struct am_terms_annot {
    const char *source; /* may be NULL */
    const char *const *targets; /* n_targets >= 1 alternatives */
    size_t n_targets;
    int case_sensitive;
    int has_span; /* span = byte range [span_start, span_end) */
    size_t span_start, span_end; /* of the translation text */
} am_terms_annot;

enum am_terms_origin { AM_TERMS_GLOSSARY = 0, AM_TERMS_ANNOTATION = 1 };
enum am_terms_match { AM_TERMS_NONE = 0, AM_TERMS_EXACT = 1, AM_TERMS_STEM = 2 };

/* Spans: tok_* are [start, end) token indices, byte_* [start, end) byte
 * offsets into the text passed in. A token's byte range is found by
 * locating the token in the text after the previous token; a token the
 * tokenizer rewrote (13a entity decoding) gets the empty range at the
 * current position. */
typedef struct am_terms_span {
    size_t tok_start, tok_end;
    size_t byte_start, byte_end;
} am_terms_span;

typedef struct am_terms_inst {
    enum am_terms_origin origin;
    size_t entry; /* glossary entry index or annotation index */
    size_t alt; /* alternative found in the translation (annotation
                   with span: the alternative equal to the span, or
                   (size_t)-1 when none is) */
    am_terms_span src; /* the source occurrence (glossary origin only) */
    am_terms_span ref; /* in the translation */
    enum am_terms_match match;
    size_t hyp_alt; /* alternative matched in the hypothesis */
    am_terms_span hyp; /* valid when match != AM_TERMS_NONE */
    double partial;
    double reorder;
    double window[AM_TERMS_MAX_WINDOWS]; /* NAN when not scored */
} am_terms_inst;

typedef struct am_terms_dev {
    enum am_terms_origin origin;
    size_t entry;
    am_terms_span src; /* glossary origin only */
} am_terms_dev;

typedef struct am_terms_forbid {
    size_t entry; /* glossary entry (forbidden) */
    size_t alt;
    am_terms_span hyp;
} am_terms_forbid;

/* Sums; mergeable across segments and sessions with am_terms_totals_add. */
typedef struct am_terms_totals {
    uint64_t instances, exact, stem, deviations, forbidden;
    double partial_sum, reorder_sum;
    size_t n_windows;
    size_t windows[AM_TERMS_MAX_WINDOWS];
    double win_sum[AM_TERMS_MAX_WINDOWS];
    uint64_t win_count[AM_TERMS_MAX_WINDOWS];
} am_terms_totals;

/* Ratios of a totals record; NAN when the denominator is 0. */
typedef struct am_terms_scores {
    double exact; /* exact / instances */
    double exact_or_stem; /* (exact + stem) / instances */
    double partial; /* partial_sum / instances */
    double reorder; /* reorder_sum / instances */
    double window[AM_TERMS_MAX_WINDOWS]; /* win_sum / win_count */
} am_terms_scores;

typedef struct am_terms_seg {
    const am_terms_inst *inst;
    size_t n_inst;
    const am_terms_dev *dev;
    size_t n_dev;
    const am_terms_forbid *forbid;
    size_t n_forbid;
    am_terms_totals totals;
    am_terms_scores scores;
    size_t n_hyp_tokens, n_ref_tokens; /* |h|, |r| */
} am_terms_seg;

/* Scores one segment. src, hyp, ref: valid UTF-8 plain text (tags already
 * stripped), hyp may be ""; annots may be NULL when n_annots is 0.
 * *out points into ws and stays valid until the next call with ws.
 * Returns AM_OK, AM_ERR_INVALID, AM_ERR_UTF8 / AM_ERR_NUL (a text is not
 * valid UTF-8) or AM_ERR_NOTFOUND (stemmer). */
int am_terms_score(am_terms_ws *ws, const am_terms_lex *lex, const char *src, const char *hyp,
                   const char *ref, const am_terms_annot *annots, size_t n_annots,
                   const am_terms_seg **out);

/* am_terms_score with the hypothesis and the translation given with their
 * tokenization (shared with recall: am_tok_text); hyp->text and ref->text
 * are what am_terms_score takes, a NULL tokens member means "tokenize here".
 * AM_ERR_INVALID when a text's kind is not the lex's target tokenizer. */
int am_terms_score_tok(am_terms_ws *ws, const am_terms_lex *lex, const char *src,
                       const am_tok_text *hyp, const am_tok_text *ref, const am_terms_annot *annots,
                       size_t n_annots, const am_terms_seg **out);

/* Totals: init to zero with the windows of cfg; add src into dst (the
 * window lists must be equal, else AM_ERR_INVALID and dst unchanged). */
void am_terms_totals_init(am_terms_totals *t, const am_terms_cfg *cfg);
int am_terms_totals_add(am_terms_totals *dst, const am_terms_totals *src);
void am_terms_totals_scores(const am_terms_totals *t, am_terms_scores *out);

/* Preview ("check" endpoint): glossary terms in the source and whether the
 * hypothesis uses them. One item per source occurrence (forbidden entries
 * included, flagged). */
typedef struct am_terms_prev {
    size_t entry;
    int forbidden; /* entry is forbidden: used = a violation */
    am_terms_span src;
    enum am_terms_match used; /* NONE, EXACT or STEM (stem only for allowed entries) */
    size_t alt; /* target used, when used */
    am_terms_span hyp; /* where, when used (claims per entry as for exact match) */
} am_terms_prev;

/* *out (n items) points into ws until its next use. Returns as
 * am_terms_score. */
int am_terms_preview(am_terms_ws *ws, const am_terms_lex *lex, const char *src, const char *hyp,
                     const am_terms_prev **out, size_t *n);

/* Work done by ws so far: a count of inner-loop steps (index probes,
 * positions scanned, pairs compared), for tests that bound the cost of
 * adversarial inputs without timing them. Never reset. */
uint64_t am_terms_ws_steps(const am_terms_ws *ws);

/* Lowers the occurrence limit of ws's next calls: more than max source
 * occurrences (or forbidden uses) → AM_ERR_RANGE, found before the costly
 * parts. 0 or more than AM_TERMS_MAX_OCCURRENCES = AM_TERMS_MAX_OCCURRENCES. */
void am_terms_ws_set_max_occurrences(am_terms_ws *ws, size_t max);

#endif
