/*
 * bleu.h — BLEU exactly as sacreBLEU 2.6.0 computes it
 * (sacrebleu/metrics/bleu.py, helpers.extract_all_word_ngrams), from
 * mergeable sufficient statistics, one or several references per segment.
 *
 * A segment's statistics: both sides are optionally lowercased (Python
 * str.lower()), right-stripped (str.rstrip()), tokenized with a sacreBLEU
 * tokenizer (core/tok.h; 13a by default) and split as str.split(); then
 * sys_len / ref_len are the token counts and, for n = 1..4, total[n-1] is
 * the number of hypothesis n-grams and correct[n-1] the clipped matches
 * (Counter intersection with the reference). Corpus statistics are the
 * element-wise sums (am_bleu_merge), as sacreBLEU's sum_of_lists; corpus
 * BLEU is sacreBLEU's compute_bleu on the sums, operation for operation.
 *
 * Several references (sacreBLEU's _extract_reference_info and
 * _compute_segment_statistics): a hypothesis n-gram is clipped by its
 * highest count in any one reference, and ref_len is the closest reference
 * length (ties: the shorter). An empty or whitespace-only reference is a
 * reference with no tokens (ref_len 0), as in sacreBLEU >= 2.2, so a
 * segment against it scores 0.0 and still adds its hypothesis n-grams to
 * the corpus totals. An empty hypothesis is fine (BLEU 0).
 *
 * ja-mecab needs a MeCab tagger: give the workspace a tokenizer context
 * (am_bleu_ws_set_tok_ctx); without one ja-mecab is refused.
 *
 * Lowercasing uses am_text_py_lower (text.h).
 */
#ifndef AM_BLEU_H
#define AM_BLEU_H

#include "am.h"
#include "tok.h"

#define AM_BLEU_MAX_ORDER 4

/* Sufficient statistics (plain data: copy freely, zero with
 * am_bleu_stats_init, nothing to free). */
typedef struct am_bleu_stats {
    int64_t sys_len; /* hypothesis tokens */
    int64_t ref_len; /* reference tokens (closest = the only reference) */
    int64_t correct[AM_BLEU_MAX_ORDER];
    int64_t total[AM_BLEU_MAX_ORDER];
} am_bleu_stats;

/* Options that change the statistics (statistics computed with different
 * options must not be merged). */
typedef struct am_bleu_opts {
    enum am_tok_kind tokenizer; /* default AM_TOK_13A (sacreBLEU's default) */
    int lowercase; /* sacreBLEU lowercase=True */
} am_bleu_opts;

enum am_bleu_smooth {
    AM_BLEU_SMOOTH_NONE = 0,
    AM_BLEU_SMOOTH_FLOOR, /* default value 0.1 */
    AM_BLEU_SMOOTH_ADD_K, /* default value 1 */
    AM_BLEU_SMOOTH_EXP /* sacreBLEU's default, corpus and sentence */
};

/* Options of the score formula (BLEU.compute_bleu's arguments). */
typedef struct am_bleu_score_opts {
    enum am_bleu_smooth smooth;
    double smooth_value; /* for floor / add-k; < 0 means sacreBLEU's default */
    int effective_order; /* 1: ignore orders with no hypothesis n-gram */
    int max_order; /* 1..AM_BLEU_MAX_ORDER; default 4 */
} am_bleu_score_opts;

/* A score with its parts, as sacreBLEU's BLEUScore. */
typedef struct am_bleu_result {
    double score; /* 0..100, never NaN */
    double bp; /* brevity penalty */
    double precisions[AM_BLEU_MAX_ORDER];
} am_bleu_result;

/* Opaque reusable workspace (buffers and hash tables); one per thread. */
typedef struct am_bleu_ws am_bleu_ws;

/* Most references per segment accepted by am_bleu_stats_add. */
#define AM_BLEU_MAX_REFS 64

/* Creates a workspace into *out. Caller frees with am_bleu_ws_free.
 * Returns AM_OK, or AM_ERR_INVALID when out is NULL. */
int am_bleu_ws_new(am_bleu_ws **out);
/* Frees a workspace (NULL is a no-op). */
void am_bleu_ws_free(am_bleu_ws *ws);
/* Gives the workspace the models that model-backed tokenizers use
 * (tok.h; ctx is copied, its pointers borrowed: they must outlive their use
 * by this workspace). NULL clears it. */
void am_bleu_ws_set_tok_ctx(am_bleu_ws *ws, const am_tok_ctx *ctx);

/* Sets *o to sacreBLEU's defaults: 13a, case-sensitive. */
void am_bleu_opts_init(am_bleu_opts *o);
/* Sets *o to sacreBLEU's defaults for corpus_bleu (sentence == 0: exp
 * smoothing, no effective order, order 4) or sentence_bleu (sentence != 0:
 * exp smoothing, effective order). */
void am_bleu_score_opts_init(am_bleu_score_opts *o, int sentence);
/* Zeroes the statistics. */
void am_bleu_stats_init(am_bleu_stats *s);

/* Computes one segment's statistics (hypothesis hyp against the nrefs
 * references refs[0..nrefs); valid UTF-8, NUL-terminated, borrowed) and
 * adds them to *stats (zero *stats first to get the segment's own
 * statistics). ws may be NULL (a temporary workspace without tokenizer
 * context is used), opts may be NULL (defaults). Returns AM_OK;
 * AM_ERR_INVALID (stats unchanged) when stats/hyp/refs or a reference is
 * NULL, nrefs is 0 or above AM_BLEU_MAX_REFS, the tokenizer is unknown or
 * needs a model the workspace lacks; AM_ERR_RANGE when a sum would
 * overflow or a side is longer than 2^26 bytes; AM_ERR_INTERNAL when MeCab
 * fails. */
int am_bleu_stats_add(am_bleu_stats *stats, am_bleu_ws *ws, const am_bleu_opts *opts,
                      const char *hyp, const char *const *refs, size_t nrefs);

/* dst += src, element-wise. Returns AM_OK, or AM_ERR_RANGE (dst unchanged)
 * when a sum would overflow. */
int am_bleu_merge(am_bleu_stats *dst, const am_bleu_stats *src);

/* sacreBLEU's BLEU.compute_bleu on the statistics (which are not changed).
 * opts may be NULL (corpus defaults). Returns AM_OK, or AM_ERR_INVALID for
 * NULL stats/out or options out of range. */
int am_bleu_compute(const am_bleu_stats *stats, const am_bleu_score_opts *opts,
                    am_bleu_result *out);

/* Parses a sacreBLEU smoothing name ("exp", "none", "floor", "add-k").
 * Returns AM_OK or AM_ERR_INVALID. */
int am_bleu_smooth_parse(const char *name, enum am_bleu_smooth *out);
/* The sacreBLEU name of a smoothing method (static). */
const char *am_bleu_smooth_name(enum am_bleu_smooth m);

/* Appends sacreBLEU 2.6.0's BLEU signature for these options to out:
 * "nrefs:N|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0", with
 * floor/add-k as "smooth:floor[0.10]", tok_sig the tokenizer's signature
 * (NULL: am_tok_name of opts->tokenizer; for ja-mecab pass
 * am_mecab_signature) and nrefs 0 written "var" (a variable number).
 * sacreBLEU's signature has no n-gram order (its CLI cannot change it): an
 * order other than 4 is written "|ngram:N" before the version, so that it
 * is never hidden. */
void am_bleu_signature(const am_bleu_opts *opts, const am_bleu_score_opts *so, size_t nrefs,
                       const char *tok_sig, am_buf *out);

/* Corpus BLEU (sacreBLEU corpus_bleu / BLEU() defaults) of summed
 * statistics into *out. Returns AM_OK or AM_ERR_INVALID. */
int am_bleu_score(const am_bleu_stats *stats, double *out);

/* Sentence BLEU (sacreBLEU sentence_bleu defaults: exp smoothing,
 * effective order) of one segment's statistics into *out. Returns AM_OK
 * or AM_ERR_INVALID. */
int am_bleu_sentence_score(const am_bleu_stats *seg, double *out);

#endif
