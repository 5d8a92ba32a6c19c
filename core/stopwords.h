/*
 * stopwords.h — stopword sets. The `snowball` and `iso` lists are compiled
 * in from data/stopwords/ at build time (tools/gen_stopwords.c generates
 * build/gen/stopwords_data.c); custom lists come from the caller.
 */
#ifndef AM_STOPWORDS_H
#define AM_STOPWORDS_H

#include "am.h"
#include "text.h"
#include "tok.h"

typedef struct am_sw am_sw; /* an immutable set of words; thread-safe reads */

/* Primary language subtag, lower case, of codes like "fr", "fr-FR",
 * "fr_XX", "es-419": writes "fr"/"es" into out (size ≥ 8). Returns AM_OK or
 * AM_ERR_INVALID. */
int am_sw_lang(const char *code, char *out, size_t outsz);
/* Default list source for a language: "snowball" where Snowball has a list
 * (da de en es fi fr hu it nl no pt ru sv), else "iso" when stopwords-iso
 * has one, else "none". Returns a static string. */
const char *am_sw_default_source(const char *lang);
/* am_sw_default_source for a text tokenized by kind: a list none of whose
 * words kind produces as a token (stopwords-iso Thai under char) counts as
 * absent. Kinds that need a model (ja-mecab, zh-friso) are not checked here. */
const char *am_sw_default_source_for(const char *lang, enum am_tok_kind kind);

/* Builds the set of a built-in list: source "snowball" or "iso", lang a
 * language code (any form accepted by am_sw_lang). Each word is normalized
 * with am_text_normalize(norm, casefold) before insertion (AM_NORM_NONE and
 * casefold 0 keep the words as listed, as rk.rb does). source "none" gives
 * an empty set. On success *out is owned by the caller (am_sw_free).
 * Returns AM_OK, AM_ERR_NOTFOUND (no such list) or AM_ERR_INVALID. */
int am_sw_builtin(const char *source, const char *lang, enum am_norm norm, int casefold,
                  am_sw **out);

/* Whether a listed stopword can match a token: called with the word as
 * listed (before normalization); returns 1 to keep it. ctx is the caller's. */
typedef int (*am_sw_keep_fn)(void *ctx, const char *word);

/* am_sw_builtin keeping only the words keep accepts. A stopword that the
 * tokenizer in use never produces as a token can never match, and would
 * silently count as a content word (issue 24: with the zh tokenizer, one
 * token per CJK character, 512 of the 794 stopwords-iso Chinese words
 * could not match). The shipped files stay as published; this is the one
 * filter, applied when a scorer builds its set for its tokenizer. */
int am_sw_builtin_keep(const char *source, const char *lang, enum am_norm norm, int casefold,
                       am_sw_keep_fn keep, void *keep_ctx, am_sw **out);

/* am_sw_builtin_keep with the rule for a tokenizer kind: a word is kept
 * when am_tok_split_ctx(kind, ctx, word) gives back exactly the word (one
 * token, unchanged). ctx (borrowed, may be NULL) carries the models the
 * kind needs (a MeCab tagger for ja-mecab, a friso workspace for zh-friso);
 * without them no word is kept
 * (the scorer refuses such a kind before). */
int am_sw_builtin_for(const char *source, const char *lang, enum am_tok_kind kind,
                      const am_tok_ctx *ctx, enum am_norm norm, int casefold, am_sw **out);
/* The rule above for one word (valid UTF-8): 1 when kind keeps it whole. */
int am_sw_one_token(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *word);
/* Builds a set from caller-supplied words (copied; normalized as above).
 * Returns AM_OK or AM_ERR_UTF8 for a word that is not valid UTF-8. */
int am_sw_from_words(const char *const *words, size_t n, enum am_norm norm, int casefold,
                     am_sw **out);
/* True when word (already normalized like the set) is in the set. */
int am_sw_contains(const am_sw *sw, const char *word);
size_t am_sw_size(const am_sw *sw);
void am_sw_free(am_sw *sw);

#endif
