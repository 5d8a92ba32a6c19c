/*
 * tok.h — tokenizers identical to sacreBLEU 2.6.0's of the same name.
 *
 * am_tok_tokenize() returns the tokenized string exactly as sacreBLEU's
 * tokenizer object returns it (tokens separated by single spaces, except
 * `char`, which like sacreBLEU separates every character, spaces included);
 * callers split it with am_toks_split_py() to get the token list.
 */
#ifndef AM_TOK_H
#define AM_TOK_H

#include "am.h"

enum am_tok_kind {
    AM_TOK_13A = 0, /* sacreBLEU "13a" (mteval-v13a) */
    AM_TOK_INTL, /* sacreBLEU "intl" (mteval-v14 international) */
    AM_TOK_ZH, /* sacreBLEU "zh" (CJK characters become tokens, then 13a) */
    AM_TOK_CHAR, /* sacreBLEU "char" */
    AM_TOK_NONE /* sacreBLEU "none" (text unchanged; split on whitespace) */
};

/* Parses a tokenizer name ("13a", "intl", "zh", "char", "none") into *out.
 * Returns AM_OK or AM_ERR_INVALID. */
int am_tok_parse(const char *name, enum am_tok_kind *out);
/* Returns the static name of a tokenizer kind. */
const char *am_tok_name(enum am_tok_kind kind);
/* Default tokenizer for a target language code (e.g. "fr", "zh-CN", "ja",
 * "th"): zh for zh/ja, char for th/lo/km/my, else intl. NULL lang → intl. */
enum am_tok_kind am_tok_default_for_lang(const char *lang);

/* Tokenizes the valid UTF-8 string s with the given tokenizer. Writes the
 * result into out (reset first). Returns AM_OK. */
int am_tok_tokenize(enum am_tok_kind kind, const char *s, am_buf *out);
/* Convenience: tokenizes s and appends the resulting tokens (split as
 * Python's str.split()) to toks. Returns AM_OK. */
int am_tok_split(enum am_tok_kind kind, const char *s, am_toks *toks);

struct am_tok_words; /* recall.h */

/* A text with its tokenization, computed once and shared by the metrics that
 * tokenize it with the same tokenizer (recall, terms): tokens is exactly
 * am_tok_tokenize(kind, text). words, when not NULL, holds the normalized
 * form of each of those tokens with its content flag (am_recall_tok_words),
 * used by a metric whose normalization and stopwords are the ones recorded
 * there. Every pointer is borrowed. A metric given an am_tok_text of another
 * kind than its own tokenizer refuses it (AM_ERR_INVALID) rather than score
 * other tokens. */
typedef struct am_tok_text {
    const char *text;
    const char *tokens;
    enum am_tok_kind kind;
    const struct am_tok_words *words; /* optional (NULL) */
} am_tok_text;

#endif
