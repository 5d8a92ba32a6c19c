/*
 * stopwords.h — stopword sets. The `snowball` and `iso` lists are compiled
 * in from data/stopwords/ at build time (tools/gen_stopwords.c generates
 * build/gen/stopwords_data.c); custom lists come from the caller.
 */
#ifndef AM_STOPWORDS_H
#define AM_STOPWORDS_H

#include "am.h"
#include "text.h"

typedef struct am_sw am_sw; /* an immutable set of words; thread-safe reads */

/* Primary language subtag, lower case, of codes like "fr", "fr-FR",
 * "fr_XX", "es-419": writes "fr"/"es" into out (size ≥ 8). Returns AM_OK or
 * AM_ERR_INVALID. */
int am_sw_lang(const char *code, char *out, size_t outsz);
/* Default list source for a language: "snowball" where Snowball has a list
 * (da de en es fi fr hu it nl no pt ru sv), else "iso" when stopwords-iso
 * has one, else "none". Returns a static string. */
const char *am_sw_default_source(const char *lang);

/* Builds the set of a built-in list: source "snowball" or "iso", lang a
 * language code (any form accepted by am_sw_lang). Each word is normalized
 * with am_text_normalize(norm, casefold) before insertion (AM_NORM_NONE and
 * casefold 0 keep the words as listed, as rk.rb does). source "none" gives
 * an empty set. On success *out is owned by the caller (am_sw_free).
 * Returns AM_OK, AM_ERR_NOTFOUND (no such list) or AM_ERR_INVALID. */
int am_sw_builtin(const char *source, const char *lang, enum am_norm norm, int casefold,
                  am_sw **out);
/* Builds a set from caller-supplied words (copied; normalized as above).
 * Returns AM_OK or AM_ERR_UTF8 for a word that is not valid UTF-8. */
int am_sw_from_words(const char *const *words, size_t n, enum am_norm norm, int casefold,
                     am_sw **out);
/* True when word (already normalized like the set) is in the set. */
int am_sw_contains(const am_sw *sw, const char *word);
size_t am_sw_size(const am_sw *sw);
void am_sw_free(am_sw *sw);

#endif
