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
    AM_TOK_NONE, /* sacreBLEU "none" (text unchanged; split on whitespace) */
    AM_TOK_JA_MECAB, /* sacreBLEU "ja-mecab" (MeCab + IPA dictionary, mecab.h);
                        needs a tokenizer context (am_tok_ctx) */
    AM_TOK_ZH_FRISO /* not sacreBLEU's: Chinese words by friso (zhseg.h), for
                       recall only (BLEU refuses it); needs a context */
};
#define AM_TOK_KIND_COUNT ((int)AM_TOK_ZH_FRISO + 1)

struct am_mecab_ws; /* mecab.h */
struct am_zhseg_ws; /* zhseg.h */

/* What a tokenizer backed by a model needs, borrowed from the caller for
 * one call: the kinds without a model ignore it (NULL is fine for them). */
typedef struct am_tok_ctx {
    struct am_mecab_ws *ja_mecab; /* a MeCab tagger, for AM_TOK_JA_MECAB */
    struct am_zhseg_ws *zh_friso; /* a friso workspace, for AM_TOK_ZH_FRISO */
} am_tok_ctx;

/* Parses a tokenizer name ("13a", "intl", "zh", "char", "none",
 * "ja-mecab", "zh-friso") into *out. Returns AM_OK or AM_ERR_INVALID. */
int am_tok_parse(const char *name, enum am_tok_kind *out);
/* For a sacreBLEU 2.6.0 tokenizer name that adaptmon does not run
 * ("ko-mecab", "flores101", "flores200", "spm", "spBLEU-1K"): a static
 * sentence saying why. NULL for any other name. */
const char *am_tok_unsupported_reason(const char *name);
/* True for the kinds that are not sacreBLEU tokenizers (zh-friso): BLEU
 * and the BLEU tokenizer option refuse them. */
int am_tok_recall_only(enum am_tok_kind kind);
/* Returns the static name of a tokenizer kind. */
const char *am_tok_name(enum am_tok_kind kind);
/* Default tokenizer for a target language code (e.g. "fr", "zh-CN", "ja",
 * "th"): zh for zh/ja, char for th/lo/km/my, else intl. NULL lang → intl. */
enum am_tok_kind am_tok_default_for_lang(const char *lang);

/* Tokenizes the valid UTF-8 string s with the given tokenizer. Writes the
 * result into out (reset first). Returns AM_OK; AM_ERR_INVALID for an
 * unknown kind or for AM_TOK_JA_MECAB and AM_TOK_ZH_FRISO, which need
 * am_tok_tokenize_ctx. */
int am_tok_tokenize(enum am_tok_kind kind, const char *s, am_buf *out);
/* As am_tok_tokenize, with the models of ctx (borrowed; may be NULL for the
 * kinds that need none). Returns AM_OK; AM_ERR_INVALID for an unknown kind,
 * AM_TOK_JA_MECAB without ctx->ja_mecab or AM_TOK_ZH_FRISO without
 * ctx->zh_friso; AM_ERR_INTERNAL if MeCab fails. */
int am_tok_tokenize_ctx(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *s, am_buf *out);
/* Convenience: tokenizes s and appends the resulting tokens (split as
 * Python's str.split()) to toks. Returns as am_tok_tokenize. */
int am_tok_split(enum am_tok_kind kind, const char *s, am_toks *toks);
/* am_tok_split with the models of ctx (as am_tok_tokenize_ctx). */
int am_tok_split_ctx(enum am_tok_kind kind, const am_tok_ctx *ctx, const char *s, am_toks *toks);
/* sacreBLEU's default BLEU tokenizer for a target language, as its CLI
 * picks it (BLEU._TOKENIZER_MAP): "zh" -> zh, "ja" -> ja-mecab, "ko" ->
 * ko-mecab, else 13a. Unlike sacreBLEU, which compares the whole code,
 * the primary subtag decides ("zh-CN", "ja_JP" too), so that a regional
 * code does not silently fall back to 13a. Writes the sacreBLEU name into
 * *name (static) and returns AM_OK with the kind in *out, or
 * AM_ERR_NOTFOUND for ko (ko-mecab is not supported: *name is "ko-mecab").
 * NULL lang -> 13a. */
int am_tok_bleu_default(const char *lang, enum am_tok_kind *out, const char **name);

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
