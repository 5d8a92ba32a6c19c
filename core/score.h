/*
 * score.h — one entry point: score a confirmed segment for a session
 * (standard and simianer2019 profiles; alam2021 works on whole SGML
 * documents, see compat/alam2021.h).
 *
 * Objects:
 *   am_scorer      the session's compiled settings: config, stopword set,
 *                  compiled glossary, signature. Immutable after creation:
 *                  one scorer may serve many threads.
 *   am_score_ws    a per-thread workspace (TER, BLEU, chrF and term
 *                  buffers, the stemmer). Never share one between threads.
 *   am_seg_result  one segment's scores; lives in the workspace until its
 *                  next use (copy what you keep).
 *   am_totals      a system's running session totals: plain data, add and
 *                  merge freely; scores are computed from them on demand.
 *
 * The occurrence history (recall) is read through a callback, so the
 * caller keeps it where it wants (SQLite in the server, an am_vocab in the
 * CLI); after scoring, the caller increments occ[w] for every word of
 * result->recall.words (am_recall_seg_commit does it for an am_vocab).
 */
#ifndef AM_SCORE_H
#define AM_SCORE_H

#include "am.h"
#include "bleu.h"
#include "chrf.h"
#include "config.h"
#include "glossary.h"
#include "recall.h"
#include "ter.h"
#include "terms.h"

typedef struct am_scorer am_scorer;
typedef struct am_score_ws am_score_ws;

/* Builds a scorer. cfg is copied. custom_sw/n_custom: the words of a
 * custom stopword list (used when cfg->stopwords is AM_SW_CUSTOM; copied).
 * gloss may be NULL (no glossary); it is compiled, not kept. background
 * may be NULL; when given it is borrowed (it must outlive the scorer) and
 * enables the novel-word variant with cfg->rare_threshold. On error *out
 * is NULL and err (may be NULL) holds a message. Returns AM_OK,
 * AM_ERR_INVALID (inconsistent options), AM_ERR_NOTFOUND (no stopword
 * list or stemmer for the language) or AM_ERR_UTF8. Caller frees with
 * am_scorer_free. */
int am_scorer_new(const am_config *cfg, const char *const *custom_sw, size_t n_custom,
                  const am_gloss *gloss, const am_vocab *background, am_scorer **out, am_buf *err);
/* Models a process loads once and shares, read-only, between its scorers
 * and threads (every pointer borrowed: it must outlive each scorer made
 * with it). A NULL field, or no am_scorer_models at all (am_scorer_new),
 * makes a scorer that needs the model load its own. */
typedef struct am_scorer_models {
    const struct am_zhseg *zhseg; /* friso, for recall zh-friso (zhseg.h) */
} am_scorer_models;
/* am_scorer_new with shared models (may be NULL). Returns as
 * am_scorer_new, and AM_ERR_NOTFOUND when recall runs zh-friso, models
 * give no friso model and its dictionary cannot be loaded (err says
 * which package to install). */
int am_scorer_new_with(const am_config *cfg, const char *const *custom_sw, size_t n_custom,
                       const am_gloss *gloss, const am_vocab *background,
                       const am_scorer_models *models, am_scorer **out, am_buf *err);
void am_scorer_free(am_scorer *s);
/* The scorer's settings and signature (owned by the scorer). */
const am_config *am_scorer_config(const am_scorer *s);
const char *am_scorer_signature(const am_scorer *s);
/* The BLEU options in effect (tokenizer resolved from the target
 * language) and sacreBLEU's BLEU signature for nrefs references (0: a
 * variable number), e.g. "nrefs:1|case:mixed|eff:no|tok:ja-mecab-0.996-IPA|
 * smooth:exp|version:2.6.0", into out (reset first). */
const am_bleu_opts *am_scorer_bleu_opts(const am_scorer *s);
void am_scorer_bleu_signature(const am_scorer *s, size_t nrefs, am_buf *out);
/* Most references a segment may have (translation included). */
#define AM_SCORE_MAX_REFS AM_BLEU_MAX_REFS

/* Number of glossary entries compiled into the scorer. */
size_t am_scorer_glossary_size(const am_scorer *s);
/* Number of distinct stopwords recall and terms use: the list in effect
 * (am_config_stopwords), normalized, less the words the tokenizer cannot
 * produce (stopwords.h); 0 without stopwords. */
size_t am_scorer_stopword_count(const am_scorer *s);
/* The compiled glossary (for previews, am_terms_preview). */
const am_terms_lex *am_scorer_lex(const am_scorer *s);

/* A new workspace (caller frees). Never NULL. */
am_score_ws *am_score_ws_new(void);
void am_score_ws_free(am_score_ws *ws);
/* Gives the workspace a cancellation check (borrowed, NULL: none) used by
 * every later scoring call on it until changed: TER/TERm shift search,
 * term placement and matching, BLEU and chrF, between systems. A scoring
 * call stopped by it returns AM_ERR_CANCELLED with nothing valid in *out. */
void am_score_ws_set_cancel(am_score_ws *ws, am_cancel *cancel);
/* The workspace's term workspace (for am_terms_preview). */
am_terms_ws *am_score_ws_terms(am_score_ws *ws);

/* One confirmed segment. Texts are NUL-terminated and validated by the
 * scorer (invalid UTF-8 or NUL → error, nothing scored). */
typedef struct am_seg_input {
    const char *source; /* may be NULL or "" (no glossary terms) */
    const char *translation; /* the confirmed translation: the first reference,
                                and the only one recall and terms use */
    const char *const *hyps; /* hyps[0..nsys): each system's hypothesis */
    size_t nsys;
    const am_terms_annot *annots; /* explicit term annotations, may be NULL */
    size_t n_annots;
    size_t max_term_occurrences; /* 0 = AM_TERMS_MAX_OCCURRENCES; more: AM_ERR_RANGE */
    /* more references for BLEU, chrF and TER (sacreBLEU's several
     * references), more_refs[0..n_more_refs), at most AM_SCORE_MAX_REFS - 1;
     * may be NULL/0 (last, so that positional initializers stay valid) */
    const char *const *more_refs;
    size_t n_more_refs;
} am_seg_input;

/* One system's scores on one segment. Sentence scores are NAN when not
 * defined (JSON null): e.g. BLEU against an empty translation. */
typedef struct am_sys_seg {
    am_recall_totals recall; /* this segment's R_k counts */
    const am_terms_seg *terms; /* term instances and matches (points into ws) */
    am_terms_totals terms_totals;
    double ter_edits; /* sacreBLEU TER edits */
    double term_edits; /* TERm (term-weighted) edits */
    size_t ter_ref_len; /* unweighted reference length (TER tokens) */
    double ter_avg_ref_len; /* TER's reference length: with several
                               references their average (sacreBLEU), else
                               ter_ref_len; 0 in a record made before this
                               field: ter_ref_len is then used (TERm always
                               uses ter_ref_len, the translation's) */
    am_bleu_stats bleu;
    am_chrf_stats chrf; /* char orders 1..6 and word orders 1..2 */
    /* chrF++'s statistics when they differ from chrf's: with several
     * references sacreBLEU picks the best one by each metric's own score */
    am_chrf_stats chrfpp;
    int chrfpp_own; /* 1: chrfpp holds them; 0: chrF++ uses chrf */
    int has_bleu; /* BLEU and chrF statistics present (always, since an
                     empty reference scores 0.0 as in sacreBLEU >= 2.2;
                     0 only in records made before) */
    double sent_bleu, sent_chrf, sent_chrfpp, sent_ter, sent_term;
} am_sys_seg;

typedef struct am_seg_result {
    const am_recall_seg *recall; /* words, shots, hits (points into ws) */
    am_sys_seg *sys; /* sys[0..nsys) (points into ws) */
    size_t nsys;
} am_seg_result;

/* Scores one segment: recall against the history read through lookup (see
 * recall.h), terms, TER/TERm, BLEU and chrF for each system. *out points
 * into ws and is valid until ws is used again. The history is not changed.
 * Returns AM_OK, AM_ERR_UTF8/AM_ERR_NUL (invalid text; err_field, when not
 * NULL, receives "source", "translation" or "hypothesis"), AM_ERR_RANGE
 * (more than AM_SCORE_MAX_SYSTEMS systems), or an error from lookup. */
#define AM_SCORE_MAX_SYSTEMS 64
int am_score_segment(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                     am_recall_lookup_fn lookup, void *lookup_ctx, am_seg_result *out,
                     const char **err_field);
/* The same work in two parts, for scoring many segments on several threads
 * (adaptmon score): am_score_segment_rest does everything that does not
 * depend on the history (terms, TER/TERm, BLEU, chrF; out->recall is NULL
 * and sys[i].recall zeroed) and may run for any segment in any order, each
 * thread with its own ws; am_score_segment_recall does the recall pass
 * alone and must run in session order (*out points into ws). Together they
 * give exactly am_score_segment's results (the caller sets
 * sys[i].recall = (*out)->sys[i]). Same errors as am_score_segment. */
int am_score_segment_rest(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                          am_seg_result *out, const char **err_field);
/* BLEU and chrF alone (bleu, chrf, chrfpp, chrfpp_own, has_bleu and the
 * sentence scores of each sys[i], the rest zeroed), and with several
 * references TER's average reference length (ter_avg_ref_len; 0 with one
 * reference, which is ter_ref_len): what a bootstrap needs beyond the
 * stored results (GET …/metrics?ci=), a fraction of am_score_segment_rest's
 * cost (no terms, no edit distances). Same errors. */
int am_score_segment_text(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                          am_seg_result *out, const char **err_field);
int am_score_segment_recall(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                            am_recall_lookup_fn lookup, void *lookup_ctx, const am_recall_seg **out,
                            const char **err_field);

/* ---- running totals of one system ------------------------------------ */
typedef struct am_totals {
    int64_t segments;
    am_recall_totals recall;
    am_terms_totals terms;
    am_ter_stats ter;
    am_ter_stats term;
    am_bleu_stats bleu;
    am_chrf_stats chrf;
    int64_t bleu_segments; /* segments whose BLEU/chrF statistics were added */
    /* chrF++ statistics of the segments with their own (chrfpp_own); when
     * chrfpp_segments is 0 chrF++ is computed from chrf */
    am_chrf_stats chrfpp;
    int64_t chrfpp_segments;
    /* the session's BLEU score options (am_totals_init; all 0 in a record
     * not made by it: sacreBLEU's corpus defaults then) */
    am_bleu_score_opts bleu_so;
    /* the session's chrF and chrF++ score options (am_totals_init; all 0 in
     * a record not made by it: sacreBLEU's chrF2 and chrF2++ then) */
    am_chrf_score_opts chrf_so, chrfpp_so;
} am_totals;

/* Zeroes *t for the scorer's settings (k, windows). */
void am_totals_init(am_totals *t, const am_scorer *s);
/* Adds one system's segment scores. */
void am_totals_add(am_totals *t, const am_sys_seg *seg);
/* dst += src (same settings). Returns AM_OK or AM_ERR_INVALID (dst unchanged). */
int am_totals_merge(am_totals *dst, const am_totals *src);

/* Session scores of a totals record; NAN = null. */
typedef struct am_totals_scores {
    double r[AM_MAX_K + 1]; /* r[0..k] */
    double r01;
    am_terms_scores terms;
    double ter, term, one_minus_term;
    double bleu, chrf, chrfpp;
} am_totals_scores;
void am_totals_scores_compute(const am_totals *t, am_totals_scores *out);

#endif
