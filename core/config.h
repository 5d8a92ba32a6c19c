/*
 * config.h — session options (docs/metrics.md): one declarative table that the
 * CLI flags, the HTTP API's JSON and the signature string all derive from.
 *
 * An am_config is a plain value (no pointers): copy it freely. Resources
 * derived from it (stopword sets, stemmers) live in am_scorer (score.h).
 */
#ifndef AM_CONFIG_H
#define AM_CONFIG_H

#include "am.h"
#include "bleu.h"
#include "chrf.h"
#include "ter.h"
#include "text.h"
#include "tok.h"

#define AM_SIGNATURE_VERSION 1
/* The sacreBLEU version whose signatures and numbers we reproduce. */
#ifndef AM_SACREBLEU_VERSION
#define AM_SACREBLEU_VERSION "2.6.0"
#endif
#define AM_MAX_WINDOWS 8
#define AM_MAX_K 16
#define AM_LANG_MAX 36

enum am_profile { AM_PROFILE_STANDARD = 0, AM_PROFILE_SIMIANER2019, AM_PROFILE_ALAM2021 };

enum am_sw_choice {
    AM_SW_AUTO = 0, /* snowball where it has the language, else iso, else none */
    AM_SW_SNOWBALL,
    AM_SW_ISO,
    AM_SW_NONE,
    AM_SW_CUSTOM /* words supplied with the session (am_scorer_new) */
};

/* Versions of what "auto" resolves to (option "defaults"). A stored
 * session keeps the version it was created with, so that an upgrade that
 * changes a default can never mix two tokenizations in one session's
 * history and running totals (am_sessions_pin_defaults, schema/011).
 *   1: before issue 24: recall ja -> zh, BLEU always 13a;
 *   2: recall ja -> ja-mecab, BLEU as sacreBLEU -l (zh -> zh, ja -> ja-mecab);
 *   3: as 2, and recall zh -> zh-friso (Chinese words, not characters). */
#define AM_DEFAULTS_V1 1
#define AM_DEFAULTS_V2 2
#define AM_DEFAULTS_CURRENT 3

typedef struct am_config {
    enum am_profile profile;
    char source_lang[AM_LANG_MAX];
    char target_lang[AM_LANG_MAX];
    int tokenizer_auto; /* 1: chosen from target_lang */
    enum am_tok_kind tokenizer; /* used when tokenizer_auto is 0 */
    int case_sensitive; /* recall/terms: 0 = case folding */
    enum am_norm norm; /* recall/terms normalization */
    int strip_tags; /* remove inline markup before scoring */
    enum am_sw_choice stopwords;
    int k; /* highest shot reported (R0..Rk) */
    int windows[AM_MAX_WINDOWS]; /* window-overlap sizes */
    size_t nwindows;
    double term_cost; /* C_term of TERm */
    int stem_match; /* stem fallback for term matching */
    int ter_case_sensitive; /* TER/TERm: sacreBLEU's case_sensitive */
    int ter_normalized; /* TER/TERm: sacreBLEU's TercomTokenizer normalized */
    int ter_no_punct; /* TER/TERm: no_punct */
    int ter_asian_support; /* TER/TERm: asian_support (acts with the two above) */
    int chrf_char_order; /* chrF: character n-gram order (sacreBLEU 6) */
    int chrf_word_order; /* chrF column's word n-gram order (0: chrF; chrF++ is 2) */
    int chrf_beta; /* chrF: recall weight beta (2) */
    int chrf_whitespace; /* chrF: keep whitespace in character n-grams */
    int chrf_lowercase; /* chrF: lowercase both sides */
    int chrf_eps_smoothing; /* chrF: eps smoothing instead of effective order */
    int64_t rare_threshold; /* novel-word variant (with a background) */
    int has_background; /* a background vocabulary is attached */
    /* BLEU (sacreBLEU's BLEU arguments) */
    int bleu_tokenize_auto; /* 1: sacreBLEU's default for target_lang */
    enum am_tok_kind bleu_tokenize; /* used when bleu_tokenize_auto is 0 */
    int bleu_lowercase; /* sacreBLEU -lc */
    enum am_bleu_smooth bleu_smooth; /* --smooth-method */
    double bleu_smooth_value; /* --smooth-value; < 0: the method's default */
    int bleu_effective_order; /* corpus BLEU; sentence BLEU always uses it */
    int bleu_max_ngram_order; /* 1..4 */
    int defaults; /* which release's "auto" resolution (AM_DEFAULTS_*) */
    unsigned explicit_set; /* bit i: option i of am_config_options() was set */
} am_config;

/* Warnings about settings that cannot fit the languages (am_config_warnings). */
#define AM_WARN_NO_STOPWORDS 1u /* stopwords auto: no list for target_lang */
#define AM_WARN_TARGET_LANG 2u /* target_lang is no ISO 639 language: tokenizer guessed */
#define AM_WARN_SOURCE_LANG 4u /* source_lang is no ISO 639 language: tokenizer guessed */
#define AM_WARN_NO_TARGET_LANG 8u /* no target_lang ("und"): no stopwords, tokenizer intl */

/* Fills *c with the defaults of the standard profile. */
void am_config_init(am_config *c);

/* Sets one option by name from its text form, as given on the command line
 * ("tokenizer", "intl"), in JSON (the server converts scalars to text) or in
 * a config file. Names use underscores; '-' is accepted for '_'. Lists
 * ("windows") are comma-separated. Booleans accept true/false/1/0/yes/no/on/off.
 * Returns AM_OK; AM_ERR_NOTFOUND for an unknown option name; AM_ERR_INVALID
 * for a bad value, with a message in err (may be NULL) in both cases. */
int am_config_set(am_config *c, const char *name, const char *value, am_buf *err);

/* Checks cross-option consistency (e.g. language codes) after all sets.
 * Returns AM_OK or AM_ERR_INVALID with a message in err. */
int am_config_check(const am_config *c, am_buf *err);

/* The settings a profile fixes: simianer2019 (rk.rb) splits on whitespace,
 * keeps case, does not normalize, keeps tags and has no stem matching, for
 * recall and for terms alike. am_config_apply_profile writes them into *c
 * (am_scorer_new does, so the scorer's config shows what runs).
 * am_config_check_profile refuses an option that was set explicitly
 * (explicit_set) to a value the profile does not run: AM_ERR_INVALID with a
 * message naming the option in err, else AM_OK. */
void am_config_apply_profile(am_config *c);
int am_config_check_profile(const am_config *c, am_buf *err);

/* AM_WARN_* bits of what cannot fit the languages: no stopword list for
 * target_lang under stopwords auto ("und" excepted: no language given), a
 * language code that is no ISO 639 code (the tokenizer is a guess), no
 * target language at all ("und", profiles standard and simianer2019: the
 * stopwords and the tokenizer cannot follow the language, issue 24). */
unsigned am_config_warnings(const am_config *c);

/* Live-session defaults that depend on the target language (sacreBLEU's
 * own defaults stay those of `adaptmon score`): for a zh, ja or ko target,
 * TER and TERm tokenize with ter_normalized and ter_asian_support on unless
 * either was set explicitly, because sacreBLEU applies its Asian splitting
 * only inside normalization and unsegmented CJK text otherwise scores a
 * TER of about 100 whatever the quality; not with defaults 1 (sessions of
 * the releases before, which stored no TER options). Call after every
 * am_config_set. */
void am_config_session_defaults(am_config *c);

/* The recall tokenizer in effect (resolving "auto" from target_lang:
 * ja-mecab for Japanese, zh-friso for zh/cmn from defaults 3 on, else
 * am_tok_default_for_lang). */
enum am_tok_kind am_config_tokenizer(const am_config *c);
/* The tokenizer of glossary terms in the target language: the recall
 * tokenizer, except zh where recall runs ja-mecab or zh-friso (a term is
 * matched character by character, whatever the segmenter makes of its
 * context). */
enum am_tok_kind am_config_terms_tokenizer(const am_config *c);
/* The stopword list in effect (resolving "auto" from target_lang):
 * "snowball", "iso", "none" or "custom" (static). */
const char *am_config_stopwords(const am_config *c);

/* BLEU's tokenizer in effect: bleu_tokenize, or with "auto" sacreBLEU's
 * CLI default for target_lang (am_tok_bleu_default: zh, ja-mecab, else
 * 13a). Returns AM_OK, or AM_ERR_NOTFOUND for a Korean target under auto
 * (sacreBLEU would pick ko-mecab, which adaptmon does not run; *out is
 * then 13a and am_config_check refuses the configuration). */
int am_config_bleu_tokenizer(const am_config *c, enum am_tok_kind *out);
/* The BLEU options of c: statistics (tokenizer in effect, lowercase) and
 * the corpus score formula (sentence != 0: sentence BLEU, which like
 * sacreBLEU's --sentence-level always uses the effective order). */
void am_config_bleu_opts(const am_config *c, am_bleu_opts *o);
void am_config_bleu_score_opts(const am_config *c, int sentence, am_bleu_score_opts *o);

/* Writes the signature string of the settings into out (reset first), e.g.
 * adaptmon:1|profile:standard|tok:intl|case:fold|norm:nfkc|sw:snowball|k:1|wo:2,3|cterm:2
 * ending with |warn:no-stopwords,unknown-target-lang,unknown-source-lang
 * (those that apply) when am_config_warnings has any. */
void am_config_signature(const am_config *c, am_buf *out);

/* One row of the option table: the help texts and API documentation, and
 * at once how am_config_set parses the option and am_config_init defaults
 * it (config.c), so the two cannot drift apart. */
typedef struct am_config_option {
    const char *name;
    const char *type; /* "enum", "bool", "int", "number", "list", "string" */
    const char *values; /* allowed values ("a|b|c": an enum's, in enum order)
                           or range ("lo..hi"), human-readable */
    const char *def; /* default, in the form am_config_set takes */
    const char *help;
    /* parsing (config.c): set parses value into the field at offset,
     * within lo..hi for numbers; AM_OK or AM_ERR_INVALID */
    int (*set)(am_config *c, const struct am_config_option *o, const char *value);
    size_t offset;
    double lo, hi;
} am_config_option;

/* The option table (static, NULL-name terminated). */
const am_config_option *am_config_options(void);

const char *am_config_profile_name(enum am_profile p);
const char *am_config_sw_name(enum am_sw_choice s);

/* The session's chrF options: statistics options into *o and the score
 * options of the chrf column (plusplus 0: word order chrf_word_order) or
 * of the chrfpp column (plusplus 1: word order 2) into *so. */
void am_config_chrf_opts(const am_config *c, int plusplus, am_chrf_opts *o, am_chrf_score_opts *so);
/* The session's TER/TERm tokenizer options into *o. */
void am_config_ter_opts(const am_config *c, am_ter_opts *o);

/* sacreBLEU-style signatures of the session's chrF (plusplus 0: the chrF
 * column, word order chrf_word_order) or chrF++ (plusplus 1: word order 2)
 * and TER settings, e.g. "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
 * and "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0",
 * into out (reset first); nrefs is the number of references. The metric
 * name sacreBLEU prints with it ("chrF2", "chrF2++", "TER") goes into name
 * when not NULL. */
void am_config_chrf_signature(const am_config *c, int plusplus, size_t nrefs, am_buf *name,
                              am_buf *out);
void am_config_ter_signature(const am_config *c, size_t nrefs, am_buf *out);

#endif
