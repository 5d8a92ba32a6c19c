/*
 * recall.h — immediate adaptation recall R0, R1, …, Rk and R0+1
 * (docs/metrics.md §2; Simianer, Wuebker & DeNero, NAACL 2019).
 *
 * The occurrence history occ[w] (number of confirmed segments so far whose
 * confirmed translation contains content word w) lives with the caller — in
 * SQLite for the server, in an am_vocab for the CLI — and is read through a
 * lookup callback. Scoring a segment does not modify the history: the result
 * lists the words whose count the caller must then increment by one
 * (am_recall_seg_commit does so for an am_vocab history).
 *
 * Flow per confirmed segment i:
 *   1. content words of the confirmed translation and of each hypothesis
 *      (am_recall_content_words for the standard profile; the simianer2019
 *      profile has its own extraction in compat/simianer2019.h);
 *   2. am_recall_segment: the deduplicated types T_i (first-appearance order,
 *      after the optional novel-word filter), each with its shot number
 *      shot = occ_before[w], and per system whether w occurs among the
 *      hypothesis's content words;
 *   3. the caller persists occ[w] += 1 for every word of the result and adds
 *      each system's segment totals to its session totals
 *      (am_recall_totals_merge).
 *
 * A word with shot s enters R_s (when s <= k) and R0+1 (when s <= 1). The
 * occurrence history depends only on the confirmed translations, so every
 * system scored on the segment shares the words and shots.
 */
#ifndef AM_RECALL_H
#define AM_RECALL_H

#include "am.h"
#include "stopwords.h"
#include "text.h"
#include "tok.h"
#include "vocab.h"

/* Highest supported k (same bound as AM_MAX_K in config.h). */
#define AM_RECALL_MAX_K 16

/* The value am_recall_score returns for an empty denominator (JSON null). */
#define AM_RECALL_NULL (-1.0)

/* Reads the history: stores in *occ_before the number of confirmed segments
 * before this one whose translation contained word (0 when never seen).
 * Returns AM_OK, or a negative am_err that aborts the scoring and is
 * returned to the caller unchanged. */
typedef int (*am_recall_lookup_fn)(void *ctx, const char *word, int64_t *occ_before);

/* Reads a background vocabulary (novel-word variant): stores in *count the
 * word's count in the MT training data, 0 when the word is absent. Returns
 * AM_OK or a negative am_err (aborts the scoring). */
typedef int (*am_recall_background_fn)(void *ctx, const char *word, int64_t *count);

typedef struct am_recall_config {
    enum am_tok_kind tokenizer; /* standard profile tokenizer (default intl) */
    const am_tok_ctx *tok_ctx; /* borrowed; the models a tokenizer needs (a
                                  MeCab tagger for ja-mecab, a friso
                                  workspace for zh-friso); NULL: none */
    enum am_norm norm; /* token normalization (default NFKC) */
    int casefold; /* 1: Unicode case folding (default) */
    int strip_tags; /* 1: remove inline markup first (default) */
    const am_sw *stopwords; /* not owned; normalized like the tokens;
                               NULL = no stopwords */
    int k; /* highest shot reported, 0..AM_RECALL_MAX_K
              (default 1) */
    am_recall_background_fn background; /* NULL: no novel-word filter */
    void *background_ctx;
    int64_t rare_threshold; /* with a background: count only words whose
                               background count is <= this (default 0) */
    int punct_only_rule; /* 1: only a token made wholly of punctuation and
                            symbols is no content word (the rule before
                            issue 24, kept for sessions with defaults 1);
                            0 (default): no token without a letter or a
                            number is a content word (am_text_is_nonword) */
    /* Content-word extraction of a text for am_recall_score_texts; NULL =
     * the standard profile's (am_recall_content_words). A reference
     * profile plugs in its own (compat/simianer2019.c). */
    int (*extract)(const struct am_recall_config *cfg, const char *text, am_toks *out);
} am_recall_config;

/* Fills *c with the standard profile's defaults: intl, NFKC, casefold,
 * strip_tags, no stopwords, k = 1, no background, rare_threshold 0. */
void am_recall_config_init(am_recall_config *c);

/* ---- totals ---------------------------------------------------------- */

typedef struct am_recall_count {
    int64_t hits;
    int64_t total;
} am_recall_count;

typedef struct am_recall_totals {
    int k; /* r[0..k] are in use */
    am_recall_count r[AM_RECALL_MAX_K + 1]; /* r[s]: R_s (s-shot) */
    am_recall_count r01; /* R0+1: shots 0 and 1 */
} am_recall_totals;

/* Zeroes *t for shots 0..k (k is clamped to 0..AM_RECALL_MAX_K). */
void am_recall_totals_init(am_recall_totals *t, int k);
/* Adds one word with the given shot and hit flag: it enters R_shot when
 * shot <= k and R0+1 when shot <= 1; other shots change nothing. */
void am_recall_totals_add(am_recall_totals *t, int64_t shot, int hit);
/* dst += src. Returns AM_OK, or AM_ERR_INVALID when the k differ (dst is
 * then unchanged). */
int am_recall_totals_merge(am_recall_totals *dst, const am_recall_totals *src);
/* hits/total, or AM_RECALL_NULL (-1.0, "null") when total is 0. Scores are
 * otherwise in [0, 1], so a negative value always means null. */
double am_recall_score(const am_recall_count *c);

/* ---- segment scoring ------------------------------------------------- */

typedef struct am_recall_seg {
    int k;
    am_toks words; /* T_i: content-word types of the confirmed
                      translation, deduplicated, first-appearance
                      order, after the novel-word filter. The caller
                      increments occ[w] by one for EVERY word here
                      (also those with shot > k). */
    int64_t *shot; /* shot[i] = occ[words.v[i]] before this segment;
                      word i is counted in R_shot when shot <= k */
    size_t nsys;
    unsigned char *hit; /* hit[s * words.n + i]: 1 when word i occurs among
                           system s's hypothesis content words */
    am_recall_totals *sys; /* sys[s]: system s's totals for this segment */
} am_recall_seg;

/* Initializes an empty result (no allocation). Pair with am_recall_seg_cleanup. */
void am_recall_seg_init(am_recall_seg *r);
/* Frees everything the result owns; it is empty and reusable after. */
void am_recall_seg_cleanup(am_recall_seg *r);

/* Standard-profile content words of text (docs/metrics.md §1): strip tags (when
 * cfg->strip_tags) → tokenize with cfg->tokenizer → normalize each token
 * (cfg->norm, cfg->casefold) → drop stopwords (cfg->stopwords), tokens
 * without a letter or number (am_text_is_nonword: punctuation, symbols,
 * combining marks, modifier letters) and tokens made only of decimal digits.
 * Appends the remaining normalized tokens to out in text order (duplicates
 * kept; out is not reset). Returns AM_OK, AM_ERR_NUL / AM_ERR_UTF8 for
 * invalid input (out unchanged) or AM_ERR_INVALID. */
int am_recall_content_words(const am_recall_config *cfg, const char *text, am_toks *out);

/* The models a recall tokenizer needs, for a caller that tokenizes raw
 * text with am_recall_content_words outside a scorer (a TMX background
 * vocabulary): a MeCab model and tagger for ja-mecab, a friso model and
 * workspace for zh-friso. */
typedef struct am_recall_models {
    struct am_mecab *mecab; /* owned */
    struct am_mecab_ws *tagger; /* owned */
    struct am_zhseg *zhseg; /* owned; friso for zh-friso */
    struct am_zhseg_ws *zhws; /* owned */
    am_tok_ctx ctx; /* borrows tagger and zhws */
} am_recall_models;

/* Loads what cfg->tokenizer needs into *m (nothing for the tokenizers
 * without a model) and points cfg->tok_ctx at it; m must outlive every use
 * of cfg. Returns AM_OK, or the error of am_mecab_new (am_zhseg_new) with err (may be
 * NULL) saying why; *m is then empty. Release with am_recall_models_close. */
int am_recall_models_open(am_recall_config *cfg, am_recall_models *m, am_buf *err);
/* Frees what am_recall_models_open loaded (an empty m is a no-op). */
void am_recall_models_close(am_recall_models *m);

/* Scores one confirmed segment from extracted content words: ref = content
 * tokens of the confirmed translation (duplicates allowed), hyps[0..nsys) =
 * content tokens of each system's hypothesis (nsys may be 0). Uses cfg->k,
 * cfg->background, cfg->background_ctx and cfg->rare_threshold only. The
 * lookup is called once per type. *out must have been initialized
 * (am_recall_seg_init); it is reset first and stays owned by the caller
 * (am_recall_seg_cleanup), also on error (then it is empty). Returns AM_OK,
 * AM_ERR_INVALID (bad k, NULL lookup), or an error from a callback. */
int am_recall_segment(const am_recall_config *cfg, const am_toks *ref, const am_toks *hyps,
                      size_t nsys, am_recall_lookup_fn lookup, void *lookup_ctx,
                      am_recall_seg *out);

/* Standard profile, whole segment: am_recall_content_words on translation
 * and on each hyps[s] (s < nsys), then am_recall_segment. Returns as those. */
int am_recall_score_texts(const am_recall_config *cfg, const char *translation,
                          const char *const *hyps, size_t nsys, am_recall_lookup_fn lookup,
                          void *lookup_ctx, am_recall_seg *out);

/* The same as am_recall_content_words(cfg, t->text, out) and
 * am_recall_score_texts(cfg, translation->text, ...), from texts already
 * tokenized (am_tok_text, shared with other metrics): the tokenizer is not
 * run again. Refused with AM_ERR_INVALID (out unchanged, resp. empty)
 * unless every text's kind is cfg->tokenizer and cfg has neither
 * strip_tags nor an extract function (whose input is not the text). */
int am_recall_content_words_tok(const am_recall_config *cfg, const am_tok_text *t, am_toks *out);

/* The tokens of one tokenized text normalized once, shared by recall and
 * the terms matcher through am_tok_text.words: fold.v[t] is token t
 * normalized as am_recall_content_words normalizes it (cfg->norm,
 * cfg->casefold), content[t] is 1 when that form is not empty, holds a
 * letter or number (not am_text_is_nonword) and is not in sw. A content
 * word of recall is a content[t] form that is not all digits. The words
 * of a text stand for its own computation in a metric whose norm, casefold
 * and stopword list (the same pointer) are the ones recorded here. */
typedef struct am_tok_words {
    enum am_norm norm;
    int casefold;
    const am_sw *sw; /* borrowed */
    am_toks fold; /* owned */
    unsigned char *content; /* owned, [fold.n] */
    size_t cap;
} am_tok_words;

/* Initializes an empty record (no allocation); pair with
 * am_tok_words_cleanup, which frees what it owns. */
void am_tok_words_init(am_tok_words *w);
void am_tok_words_cleanup(am_tok_words *w);
/* Fills out (emptied first) from tokens (am_tok_tokenize output, borrowed)
 * with cfg's normalization and stopwords. Returns AM_OK, AM_ERR_INVALID
 * (NULL argument) or a normalization error (out is then empty). */
int am_recall_tok_words(const am_recall_config *cfg, const char *tokens, am_tok_words *out);
int am_recall_score_tok(const am_recall_config *cfg, const am_tok_text *translation,
                        const am_tok_text *hyps, size_t nsys, am_recall_lookup_fn lookup,
                        void *lookup_ctx, am_recall_seg *out);

/* ---- in-memory history (CLI, tests) ---------------------------------- */

/* An am_recall_lookup_fn over an am_vocab history (ctx is the am_vocab *;
 * absent words have occ 0). Always AM_OK. */
int am_recall_vocab_lookup(void *ctx, const char *word, int64_t *occ_before);
/* An am_recall_background_fn over an am_vocab of background counts (ctx is
 * the am_vocab *, e.g. from am_vocab_parse_counts). Always AM_OK. */
int am_recall_vocab_background(void *ctx, const char *word, int64_t *count);
/* Applies a scored segment to an am_vocab history: occ[w] += 1 for every
 * word of r. */
void am_recall_seg_commit(const am_recall_seg *r, am_vocab *hist);

#endif
