/*
 * config.h — session options (METRICS.md): one declarative table that the
 * CLI flags, the HTTP API's JSON and the signature string all derive from.
 *
 * An am_config is a plain value (no pointers): copy it freely. Resources
 * derived from it (stopword sets, stemmers) live in am_scorer (score.h).
 */
#ifndef AM_CONFIG_H
#define AM_CONFIG_H

#include "am.h"
#include "text.h"
#include "tok.h"

#define AM_SIGNATURE_VERSION 1
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
    int64_t rare_threshold; /* novel-word variant (with a background) */
    int has_background; /* a background vocabulary is attached */
} am_config;

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

/* The tokenizer in effect (resolving "auto" from target_lang). */
enum am_tok_kind am_config_tokenizer(const am_config *c);

/* Writes the signature string of the settings into out (reset first), e.g.
 * adaptmon:1|profile:standard|tok:intl|case:fold|norm:nfkc|sw:snowball|k:1|wo:2,3|cterm:2 */
void am_config_signature(const am_config *c, am_buf *out);

/* One row of the option table, for help texts and API documentation. */
typedef struct am_config_option {
    const char *name;
    const char *type; /* "enum", "bool", "int", "number", "list", "string" */
    const char *values; /* allowed values or range, human-readable */
    const char *def; /* default, human-readable */
    const char *help;
} am_config_option;

/* The option table (static, NULL-name terminated). */
const am_config_option *am_config_options(void);

const char *am_config_profile_name(enum am_profile p);
const char *am_config_sw_name(enum am_sw_choice s);

#endif
