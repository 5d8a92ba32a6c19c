/*
 * simianer2019.h — profile `simianer2019`: R0/R1/R0+1 exactly as the
 * authors' script rk.rb (github.com/lilt/r01) computes them on tokenized,
 * truecased input (docs/metrics.md §2).
 *
 * Differences from the standard profile are all in the content-word
 * extraction: tokens are the text split on ASCII whitespace (no tag
 * stripping, no normalization); a token is dropped when it is in the
 * stopword set (exact, case-sensitive lookup — build the set with
 * AM_NORM_NONE and casefold 0), when it fully matches rk.rb's punctuation
 * class (am_text_is_rk_punct) or when it is made only of decimal digits
 * (am_text_is_digits). Scoring then uses the same core as the standard
 * profile (am_recall_segment), so the totals, the novel-word filter
 * (rk.rb's --vocab/--rare_threshold) and the history interface are shared.
 *
 * rk.rb prints 0.0 for a segment without counted words; we report null
 * (AM_RECALL_NULL from am_recall_score) with the counts.
 */
#ifndef AM_SIMIANER2019_H
#define AM_SIMIANER2019_H

#include "recall.h"

/* Appends to out the content tokens of text under rk.rb's rules (text
 * order, duplicates kept; out is not reset). sw may be NULL (no stopwords).
 * text must be valid UTF-8. Returns AM_OK, AM_ERR_NUL / AM_ERR_UTF8 (out
 * unchanged) or AM_ERR_INVALID. */
int am_simianer_content_words(const am_sw *sw, const char *text, am_toks *out);

/* Scores one confirmed segment under rk.rb's rules: content words of
 * translation and of hyps[0..nsys) by am_simianer_content_words with
 * cfg->stopwords, then am_recall_segment (cfg->k, cfg->background,
 * cfg->background_ctx, cfg->rare_threshold; the tokenizer, normalization
 * and tag options of cfg are ignored). *out as in am_recall_segment.
 * Returns AM_OK or an error as am_recall_segment. */
int am_simianer_segment(const am_recall_config *cfg, const char *translation,
                        const char *const *hyps, size_t nsys, am_recall_lookup_fn lookup,
                        void *lookup_ctx, am_recall_seg *out);

#endif
