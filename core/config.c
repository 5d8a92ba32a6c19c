/* config.c — session options, their table and the signature (see config.h).
 *
 * One table (am_options) documents every option and drives its parsing:
 * each row names a parser for its kind, the am_config field and the
 * bounds; am_config_init sets every option to its documented default
 * through the same parsers. */
#include "config.h"

#include "lang.h"
#include "stopwords.h"
#include "zhseg.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- option parsers: one per kind; o is the option's row -------------- */

/* The field of the row o in c. */
#define AM_FIELD(c, o, type) ((type *)(void *)((char *)(c) + (o)->offset))

/* Booleans: true/1/yes/on and false/0/no/off (int field). */
static int am_set_bool(am_config *c, const am_config_option *o, const char *v)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
            *AM_FIELD(c, o, int) = !strcmp(v, yes[i]);
            return AM_OK;
        }
    }
    return AM_ERR_INVALID;
}

/* Parses a whole decimal integer in [lo, hi]. */
static int am_int(const char *v, long long lo, long long hi, long long *out)
{
    if (!*v)
        return AM_ERR_INVALID;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return AM_ERR_INVALID;
    *out = x;
    return AM_OK;
}

/* An int field within o->lo..o->hi. */
static int am_set_int(am_config *c, const am_config_option *o, const char *v)
{
    long long x;
    if (am_int(v, (long long)o->lo, (long long)o->hi, &x))
        return AM_ERR_INVALID;
    *AM_FIELD(c, o, int) = (int)x;
    return AM_OK;
}

/* An int64_t field, at least o->lo (no upper bound but the type's). */
static int am_set_i64(am_config *c, const am_config_option *o, const char *v)
{
    long long x;
    if (am_int(v, (long long)o->lo, INT64_MAX, &x))
        return AM_ERR_INVALID;
    *AM_FIELD(c, o, int64_t) = x;
    return AM_OK;
}

/* A finite double field within o->lo..o->hi. */
static int am_set_number(am_config *c, const am_config_option *o, const char *v)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || errno || *end || !isfinite(d) || d < o->lo || d > o->hi)
        return AM_ERR_INVALID;
    *AM_FIELD(c, o, double) = d;
    return AM_OK;
}

/* An enum field: v's position among the '|'-separated o->values, which
 * list the enum's values in order (the field is an int-sized enum). */
static int am_set_enum(am_config *c, const am_config_option *o, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = o->values; *p; i++) {
        size_t len = strcspn(p, "|");
        if (len == n && !strncmp(p, v, n)) {
            *AM_FIELD(c, o, int) = i;
            return AM_OK;
        }
        p += len + (p[len] == '|');
    }
    return AM_ERR_INVALID;
}

/* Language codes: letters, digits, '-' and '_', starting with a letter. */
static int am_lang_ok(const char *v)
{
    size_t n = strlen(v);
    if (n < 2 || n >= AM_LANG_MAX)
        return 0;
    if (!((v[0] >= 'a' && v[0] <= 'z') || (v[0] >= 'A' && v[0] <= 'Z')))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = v[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_'))
            return 0;
    }
    return 1;
}

/* A language code, stored canonical (char[AM_LANG_MAX] field). */
static int am_set_lang(am_config *c, const am_config_option *o, const char *v)
{
    char canon[AM_LANG_MAX];
    if (!am_lang_ok(v) || am_lang_canonical(v, canon, sizeof canon, NULL) != AM_OK)
        return AM_ERR_INVALID;
    strcpy(AM_FIELD(c, o, char), canon);
    return AM_OK;
}

/* "auto" or a sacreBLEU tokenizer name. */
static int am_set_tokenizer(am_config *c, const am_config_option *o, const char *v)
{
    (void)o;
    enum am_tok_kind k = AM_TOK_INTL; /* what auto falls back to */
    if (strcmp(v, "auto") && am_tok_parse(v, &k) != AM_OK)
        return AM_ERR_INVALID;
    c->tokenizer_auto = !strcmp(v, "auto");
    c->tokenizer = k;
    return AM_OK;
}

/* "auto" or a sacreBLEU BLEU tokenizer name; the ones adaptmon does not
 * run (ko-mecab, flores…) are refused here, their reason by am_config_set. */
static int am_set_bleu_tokenize(am_config *c, const am_config_option *o, const char *v)
{
    (void)o;
    enum am_tok_kind k = AM_TOK_13A;
    /* zh-friso segments recall's words; BLEU keeps sacreBLEU's tokenizers */
    if (strcmp(v, "auto") && (am_tok_parse(v, &k) != AM_OK || am_tok_recall_only(k)))
        return AM_ERR_INVALID;
    c->bleu_tokenize_auto = !strcmp(v, "auto");
    c->bleu_tokenize = k;
    return AM_OK;
}

/* sacreBLEU's smoothing methods (their names are not in enum order). */
static int am_set_bleu_smooth(am_config *c, const am_config_option *o, const char *v)
{
    (void)o;
    return am_bleu_smooth_parse(v, &c->bleu_smooth);
}

/* "auto" (the method's default: floor 0.1, add-k 1) or a number in
 * o->lo..o->hi. */
static int am_set_smooth_value(am_config *c, const am_config_option *o, const char *v)
{
    if (!strcmp(v, "auto")) {
        c->bleu_smooth_value = -1;
        return AM_OK;
    }
    return am_set_number(c, o, v);
}

static int am_set_normalize(am_config *c, const am_config_option *o, const char *v)
{
    (void)o;
    enum am_norm nm;
    if (am_text_norm_parse(v, &nm) != AM_OK)
        return AM_ERR_INVALID;
    c->norm = nm;
    return AM_OK;
}

/* Comma-separated distinct window sizes within o->lo..o->hi, at most
 * AM_MAX_WINDOWS. */
static int am_set_windows(am_config *c, const am_config_option *o, const char *v)
{
    int w[AM_MAX_WINDOWS];
    size_t n = 0;
    const char *p = v;
    if (!*p)
        return AM_ERR_INVALID;
    while (*p) {
        if (n == AM_MAX_WINDOWS)
            return AM_ERR_INVALID;
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (errno || end == p || x < (long)o->lo || x > (long)o->hi)
            return AM_ERR_INVALID;
        for (size_t i = 0; i < n; i++)
            if (w[i] == (int)x)
                return AM_ERR_INVALID;
        w[n++] = (int)x;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',') {
            p++;
            while (*p == ' ')
                p++;
            if (!*p)
                return AM_ERR_INVALID;
        } else if (*p) {
            return AM_ERR_INVALID;
        }
    }
    memcpy(c->windows, w, n * sizeof w[0]);
    c->nwindows = n;
    return AM_OK;
}

/* ---- the table ---------------------------------------------------------- */

_Static_assert(sizeof(enum am_profile) == sizeof(int) && sizeof(enum am_sw_choice) == sizeof(int),
               "am_set_enum writes enums as int");

#define AM_STR_(x) #x
#define AM_STR(x) AM_STR_(x)
#define AM_OFF(field) offsetof(am_config, field)

/* The profile and stopwords values are in enum order (am_set_enum). */
static const am_config_option am_options[] = {
    {"profile", "enum", "standard|simianer2019|alam2021", "standard",
     "metric definitions: standard, or a reference script reproduced bit for bit", am_set_enum,
     AM_OFF(profile), 0, 0},
    {"source_lang", "string", "BCP-47 or ISO code", "und", "language of the source segments",
     am_set_lang, AM_OFF(source_lang), 0, 0},
    {"target_lang", "string", "BCP-47 or ISO code", "und",
     "language of hypotheses and translations; picks the default tokenizer and stopwords",
     am_set_lang, AM_OFF(target_lang), 0, 0},
    {"tokenizer", "enum", "auto|13a|intl|zh|char|none|ja-mecab|zh-friso", "auto",
     "sacreBLEU tokenizer for recall and terms, or zh-friso (Chinese words, recall only) "
     "(auto: ja-mecab for ja, zh-friso for zh, zh for other Chinese codes, char for "
     "th/lo/km/my, else intl; terms split ja-mecab and zh-friso text per character as zh does)",
     am_set_tokenizer, 0, 0, 0},
    {"case", "enum", "fold|sensitive", "fold", "case folding for recall and term matching",
     am_set_enum, AM_OFF(case_sensitive), 0, 0},
    {"normalize", "enum", "nfkc|nfc|none", "nfkc", "Unicode normalization for recall and terms",
     am_set_normalize, 0, 0, 0},
    {"strip_tags", "bool", "true|false", "true", "remove inline markup (<g>, <x/>, <bpt>…) first",
     am_set_bool, AM_OFF(strip_tags), 0, 0},
    {"stopwords", "enum", "auto|snowball|iso|none|custom", "auto",
     "stopword list (auto: snowball where available, else stopwords-iso)", am_set_enum,
     AM_OFF(stopwords), 0, 0},
    {"k", "int", "0.." AM_STR(AM_MAX_K), "1", "highest shot reported: R0..Rk", am_set_int,
     AM_OFF(k), 0, AM_MAX_K},
    {"windows", "list", "1..50, at most " AM_STR(AM_MAX_WINDOWS), "2,3",
     "window sizes of the window-overlap metric", am_set_windows, 0, 1, 50},
    {"term_cost", "number", "1..100", "2", "cost of editing a term word in TERm", am_set_number,
     AM_OFF(term_cost), 1, 100},
    {"stem_match", "bool", "true|false", "false", "allow Snowball-stem matches of terms",
     am_set_bool, AM_OFF(stem_match), 0, 0},
    {"ter_case_sensitive", "bool", "true|false", "false", "TER and TERm keep case (sacreBLEU -c)",
     am_set_bool, AM_OFF(ter_case_sensitive), 0, 0},
    {"rare_threshold", "int", ">= 0", "0",
     "novel-word variant: count only words seen at most this often in the background vocabulary",
     am_set_i64, AM_OFF(rare_threshold), 0, 0},
    {"bleu_tokenize", "enum", "auto|13a|intl|zh|char|none|ja-mecab", "auto",
     "sacreBLEU tokenizer for BLEU (auto: as sacreBLEU -l, zh for zh, ja-mecab for ja, 13a "
     "otherwise; ko needs an explicit choice)",
     am_set_bleu_tokenize, 0, 0, 0},
    {"bleu_lowercase", "bool", "true|false", "false", "lowercased BLEU (sacreBLEU -lc)",
     am_set_bool, AM_OFF(bleu_lowercase), 0, 0},
    {"bleu_smooth_method", "enum", "exp|none|floor|add-k", "exp",
     "BLEU smoothing (sacreBLEU --smooth-method)", am_set_bleu_smooth, 0, 0, 0},
    {"bleu_smooth_value", "number", "auto or 0..1000000", "auto",
     "value of floor / add-k smoothing (sacreBLEU --smooth-value; auto: 0.1 / 1)",
     am_set_smooth_value, AM_OFF(bleu_smooth_value), 0, 1000000},
    {"bleu_effective_order", "bool", "true|false", "false",
     "corpus BLEU over the n-gram orders the hypotheses have (sentence BLEU always is)",
     am_set_bool, AM_OFF(bleu_effective_order), 0, 0},
    {"bleu_max_ngram_order", "int", "1..4", "4", "highest BLEU n-gram order (sacreBLEU's API)",
     am_set_int, AM_OFF(bleu_max_ngram_order), 1, 4},
    {"ter_normalized", "bool", "true|false", "false",
     "TER and TERm: sacreBLEU's tercom normalization (punctuation split, XML entities); "
     "sessions with a zh/ja/ko target: true",
     am_set_bool, AM_OFF(ter_normalized), 0, 0},
    {"ter_no_punct", "bool", "true|false", "false", "TER and TERm: remove punctuation first",
     am_set_bool, AM_OFF(ter_no_punct), 0, 0},
    {"ter_asian_support", "bool", "true|false", "false",
     "TER and TERm: split CJK characters (with ter_normalized) and drop CJK punctuation (with "
     "ter_no_punct); sessions with a zh/ja/ko target: true",
     am_set_bool, AM_OFF(ter_asian_support), 0, 0},
    {"chrf_char_order", "int", "0.." AM_STR(AM_CHRF_MAX_CHAR_ORDER), "6",
     "chrF and chrF++: character n-gram order", am_set_int, AM_OFF(chrf_char_order), 0,
     AM_CHRF_MAX_CHAR_ORDER},
    {"chrf_word_order", "int", "0.." AM_STR(AM_CHRF_MAX_WORD_ORDER), "0",
     "word n-gram order of the chrf column (2: chrF++; the chrfpp column is always 2)", am_set_int,
     AM_OFF(chrf_word_order), 0, AM_CHRF_MAX_WORD_ORDER},
    {"chrf_beta", "int", "0.." AM_STR(AM_CHRF_MAX_BETA), "2",
     "chrF and chrF++: weight of recall against precision", am_set_int, AM_OFF(chrf_beta), 0,
     AM_CHRF_MAX_BETA},
    {"chrf_whitespace", "bool", "true|false", "false",
     "chrF and chrF++: keep whitespace in character n-grams", am_set_bool, AM_OFF(chrf_whitespace),
     0, 0},
    {"chrf_lowercase", "bool", "true|false", "false", "chrF and chrF++: lowercase both sides",
     am_set_bool, AM_OFF(chrf_lowercase), 0, 0},
    {"chrf_eps_smoothing", "bool", "true|false", "false",
     "chrF and chrF++: epsilon smoothing (chrF++.py, NLTK, Moses) instead of effective order",
     am_set_bool, AM_OFF(chrf_eps_smoothing), 0, 0},
    {"defaults", "int", "1..3", "3",
     "which release's auto defaults apply (1: recall tokenizer zh for ja, BLEU 13a for every "
     "language; 2: ja-mecab for ja, BLEU as sacreBLEU -l; 3: as 2 and recall zh-friso for zh); "
     "sessions store the version they were created with",
     am_set_int, AM_OFF(defaults), AM_DEFAULTS_V1, AM_DEFAULTS_CURRENT},
    {NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0}};

/* explicit_set has one bit per row */
_Static_assert(sizeof am_options / sizeof am_options[0] - 1 <= 32, "explicit_set is 32 bits");

const am_config_option *am_config_options(void)
{
    return am_options;
}

/* The row of option name (borrowed), or NULL. */
static const am_config_option *am_option(const char *name)
{
    for (const am_config_option *o = am_options; o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

/* Every option at its documented default. */
void am_config_init(am_config *c)
{
    memset(c, 0, sizeof *c);
    for (const am_config_option *o = am_options; o->name; o++) {
        int rc = o->set(c, o, o->def);
        assert(rc == AM_OK); /* the table's defaults parse (test_score) */
        (void)rc;
    }
}

const char *am_config_profile_name(enum am_profile p)
{
    switch (p) {
    case AM_PROFILE_SIMIANER2019: return "simianer2019";
    case AM_PROFILE_ALAM2021: return "alam2021";
    default: return "standard";
    }
}

const char *am_config_sw_name(enum am_sw_choice s)
{
    switch (s) {
    case AM_SW_SNOWBALL: return "snowball";
    case AM_SW_ISO: return "iso";
    case AM_SW_NONE: return "none";
    case AM_SW_CUSTOM: return "custom";
    default: return "auto";
    }
}

int am_config_set(am_config *c, const char *name_in, const char *value, am_buf *err)
{
    char name[32];
    size_t n = strlen(name_in);
    const am_config_option *o = NULL;
    if (n < sizeof name) {
        for (size_t i = 0; i <= n; i++)
            name[i] = name_in[i] == '-' ? '_' : name_in[i];
        o = am_option(name);
    }
    if (!o) {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err, "unknown option '%.40s'", name_in);
        }
        return AM_ERR_NOTFOUND;
    }
    /* parse into a copy: a refused value changes nothing */
    am_config tmp = *c;
    if (o->set(&tmp, o, value) != AM_OK) {
        const char *why = !strcmp(o->name, "bleu_tokenize") || !strcmp(o->name, "tokenizer")
                              ? am_tok_unsupported_reason(value)
                              : NULL;
        if (err && why) {
            am_buf_reset(err);
            am_buf_printf(err, "tokenizer '%s' for option '%s' is not supported: %s", value,
                          o->name, why);
        } else if (err) {
            am_buf_reset(err);
            am_buf_printf(err, "invalid value '%.64s' for option '%s' (expected %s)", value,
                          o->name, o->values);
        }
        return AM_ERR_INVALID;
    }
    *c = tmp;
    c->explicit_set |= 1u << (o - am_options);
    return AM_OK;
}

void am_config_apply_profile(am_config *c)
{
    if (c->profile != AM_PROFILE_SIMIANER2019)
        return;
    c->tokenizer_auto = 0;
    c->tokenizer = AM_TOK_NONE;
    c->case_sensitive = 1;
    c->norm = AM_NORM_NONE;
    c->strip_tags = 0;
    c->stem_match = 0;
}

/* 1 when option name was set explicitly. */
static int am_config_explicit(const am_config *c, const char *name)
{
    const am_config_option *o = am_option(name);
    return o && ((c->explicit_set >> (o - am_options)) & 1u);
}

int am_config_check_profile(const am_config *c, am_buf *err)
{
    am_config fixed = *c;
    am_config_apply_profile(&fixed);
    const char *bad = NULL;
    if (am_config_explicit(c, "tokenizer") && !c->tokenizer_auto && c->tokenizer != fixed.tokenizer)
        bad = "tokenizer";
    else if (am_config_explicit(c, "case") && c->case_sensitive != fixed.case_sensitive)
        bad = "case";
    else if (am_config_explicit(c, "normalize") && c->norm != fixed.norm)
        bad = "normalize";
    else if (am_config_explicit(c, "strip_tags") && c->strip_tags != fixed.strip_tags)
        bad = "strip_tags";
    else if (am_config_explicit(c, "stem_match") && c->stem_match != fixed.stem_match)
        bad = "stem_match";
    if (!bad)
        return AM_OK;
    if (err) {
        am_buf_reset(err);
        am_buf_printf(err,
                      "profile %s cannot honour option '%s': it runs tokenizer none "
                      "(whitespace), case sensitive, normalize none, strip_tags false, "
                      "stem_match false; leave '%s' out or use profile standard",
                      am_config_profile_name(c->profile), bad, bad);
    }
    return AM_ERR_INVALID;
}

/* 1 when the primary subtag of lang is an ISO 639 code. */
static int am_lang_known(const char *lang)
{
    char canon[AM_LANG_MAX];
    int known = 0;
    return am_lang_canonical(lang, canon, sizeof canon, &known) == AM_OK && known;
}

unsigned am_config_warnings(const am_config *c)
{
    unsigned w = 0;
    char lang[8];
    if (c->profile != AM_PROFILE_ALAM2021 && c->stopwords == AM_SW_AUTO &&
        strcmp(c->target_lang, "und") &&
        (am_sw_lang(c->target_lang, lang, sizeof lang) != AM_OK ||
         !strcmp(am_sw_default_source_for(lang, am_config_tokenizer(c)), "none")))
        w |= AM_WARN_NO_STOPWORDS;
    if (!am_lang_known(c->target_lang))
        w |= AM_WARN_TARGET_LANG;
    if (!am_lang_known(c->source_lang))
        w |= AM_WARN_SOURCE_LANG;
    if (c->profile != AM_PROFILE_ALAM2021 && !strcmp(c->target_lang, "und"))
        w |= AM_WARN_NO_TARGET_LANG;
    return w;
}

int am_config_check(const am_config *c, am_buf *err)
{
    enum am_tok_kind bk;
    if (am_config_bleu_tokenizer(c, &bk) != AM_OK) {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err,
                          "BLEU for target language '%s': sacreBLEU would use its ko-mecab "
                          "tokenizer, which adaptmon does not run (%s); choose one with "
                          "bleu_tokenize (score: --tokenize), e.g. char or intl",
                          c->target_lang, am_tok_unsupported_reason("ko-mecab"));
        }
        return AM_ERR_INVALID;
    }
    if (c->bleu_smooth_value >= 0 && c->bleu_smooth != AM_BLEU_SMOOTH_FLOOR &&
        c->bleu_smooth != AM_BLEU_SMOOTH_ADD_K) {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err,
                          "bleu_smooth_value applies to floor and add-k smoothing only, "
                          "not to '%s'",
                          am_bleu_smooth_name(c->bleu_smooth));
        }
        return AM_ERR_INVALID;
    }
    if (c->chrf_char_order + c->chrf_word_order == 0) {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err, "chrf_char_order and chrf_word_order are both 0: chrF would "
                               "count nothing; set one of them above 0");
        }
        return AM_ERR_INVALID;
    }
    if (c->stopwords == AM_SW_SNOWBALL || c->stopwords == AM_SW_ISO) {
        char lang[8];
        if (am_sw_lang(c->target_lang, lang, sizeof lang) != AM_OK) {
            if (err) {
                am_buf_reset(err);
                am_buf_printf(err, "stopwords '%s' need a target_lang",
                              am_config_sw_name(c->stopwords));
            }
            return AM_ERR_INVALID;
        }
    }
    return AM_OK;
}

/* 1 when the primary subtag of lang is a Chinese, Japanese or Korean
 * language (text written without spaces between words, mostly). */
static int am_lang_cjk(const char *lang)
{
    static const char *const cjk[] = {"zh", "ja", "ko", "cmn", "yue", "wuu", "nan", "hak"};
    size_t n = strcspn(lang, "-_");
    for (size_t i = 0; i < sizeof cjk / sizeof cjk[0]; i++)
        if (strlen(cjk[i]) == n && !strncmp(lang, cjk[i], n))
            return 1;
    return 0;
}

void am_config_session_defaults(am_config *c)
{
    /* defaults 1: as before issue 24, TER with sacreBLEU's own defaults */
    if (!am_lang_cjk(c->target_lang) || c->defaults == AM_DEFAULTS_V1)
        return;
    if (!am_config_explicit(c, "ter_normalized") && !am_config_explicit(c, "ter_asian_support")) {
        c->ter_normalized = 1;
        c->ter_asian_support = 1;
    }
}

enum am_tok_kind am_config_tokenizer(const am_config *c)
{
    if (!c->tokenizer_auto)
        return c->tokenizer;
    const char *lang = strcmp(c->target_lang, "und") ? c->target_lang : NULL;
    /* Japanese content words are MeCab's words, not characters and kana
     * runs (issue 24; the measurement is in docs/metrics.md §1). Sessions
     * created before that (defaults 1) keep zh, as their history was
     * counted with it. */
    if (lang && am_lang_same(lang, "ja") && c->defaults != AM_DEFAULTS_V1)
        return AM_TOK_JA_MECAB;
    /* Chinese content words likewise are friso's words (defaults 3; the
     * measurement is in docs/metrics.md §1); sessions stored with 1 or 2
     * keep one token per character. friso's dictionary is Mandarin in
     * simplified characters: the other Chinese codes (yue, wuu, lzh…)
     * keep the character rule. */
    if (lang && (am_lang_same(lang, "zh") || am_lang_same(lang, "cmn")) &&
        c->defaults >= AM_DEFAULTS_CURRENT)
        return AM_TOK_ZH_FRISO;
    return am_tok_default_for_lang(lang);
}

enum am_tok_kind am_config_terms_tokenizer(const am_config *c)
{
    enum am_tok_kind k = am_config_tokenizer(c);
    return k == AM_TOK_JA_MECAB || k == AM_TOK_ZH_FRISO ? AM_TOK_ZH : k;
}

int am_config_bleu_tokenizer(const am_config *c, enum am_tok_kind *out)
{
    if (!c->bleu_tokenize_auto) {
        *out = c->bleu_tokenize;
        return AM_OK;
    }
    *out = AM_TOK_13A;
    if (c->defaults == AM_DEFAULTS_V1)
        return AM_OK; /* before issue 24 BLEU was 13a whatever the language */
    return am_tok_bleu_default(strcmp(c->target_lang, "und") ? c->target_lang : NULL, out, NULL);
}

void am_config_bleu_opts(const am_config *c, am_bleu_opts *o)
{
    am_bleu_opts_init(o);
    enum am_tok_kind k;
    if (am_config_bleu_tokenizer(c, &k) == AM_OK)
        o->tokenizer = k;
    o->lowercase = c->bleu_lowercase;
}

void am_config_bleu_score_opts(const am_config *c, int sentence, am_bleu_score_opts *o)
{
    am_bleu_score_opts_init(o, sentence);
    o->smooth = c->bleu_smooth;
    o->smooth_value = c->bleu_smooth_value;
    o->effective_order = sentence ? 1 : c->bleu_effective_order;
    o->max_order = c->bleu_max_ngram_order;
}

/* The BLEU part of the signature, "|bleu:" and the settings that differ
 * from sacreBLEU's defaults (13a, mixed case, exp, no effective order,
 * order 4), the tokenizer always among them; nothing when all are the
 * defaults, so that existing signatures stay as they were. */
static void am_config_bleu_signature(const am_config *c, am_buf *out)
{
    enum am_tok_kind k = AM_TOK_13A;
    (void)am_config_bleu_tokenizer(c, &k);
    if (k == AM_TOK_13A && !c->bleu_lowercase && c->bleu_smooth == AM_BLEU_SMOOTH_EXP &&
        !c->bleu_effective_order && c->bleu_max_ngram_order == AM_BLEU_MAX_ORDER)
        return;
    am_buf_printf(out, "|bleu:%s", am_tok_name(k));
    if (c->bleu_lowercase)
        am_buf_appends(out, ",lc");
    if (c->bleu_smooth != AM_BLEU_SMOOTH_EXP) {
        am_buf_printf(out, ",smooth:%s", am_bleu_smooth_name(c->bleu_smooth));
        if (c->bleu_smooth == AM_BLEU_SMOOTH_FLOOR || c->bleu_smooth == AM_BLEU_SMOOTH_ADD_K)
            am_buf_printf(out, "[%.2f]",
                          c->bleu_smooth_value >= 0                ? c->bleu_smooth_value
                          : c->bleu_smooth == AM_BLEU_SMOOTH_FLOOR ? 0.1
                                                                   : 1.0);
    }
    if (c->bleu_effective_order)
        am_buf_appends(out, ",eff");
    if (c->bleu_max_ngram_order != AM_BLEU_MAX_ORDER)
        am_buf_printf(out, ",ngram:%d", c->bleu_max_ngram_order);
}

const char *am_config_stopwords(const am_config *c)
{
    if (c->stopwords != AM_SW_AUTO)
        return am_config_sw_name(c->stopwords);
    char lang[8];
    if (am_sw_lang(c->target_lang, lang, sizeof lang) != AM_OK)
        return "none";
    return am_sw_default_source_for(lang, am_config_tokenizer(c));
}

static void am_sig_number(am_buf *out, double d)
{
    if (d == floor(d) && fabs(d) < 1e15)
        am_buf_printf(out, "%lld", (long long)d);
    else
        am_buf_printf(out, "%g", d);
}

void am_config_signature(const am_config *c, am_buf *out)
{
    am_buf_reset(out);
    am_buf_printf(out, "adaptmon:%d|profile:%s", AM_SIGNATURE_VERSION,
                  am_config_profile_name(c->profile));
    if (c->profile == AM_PROFILE_STANDARD) {
        enum am_tok_kind tk = am_config_tokenizer(c);
        /* zh-friso is named with friso's version: another friso may cut
         * other words */
        am_buf_printf(out, "|tok:%s|case:%s|norm:%s",
                      tk == AM_TOK_ZH_FRISO ? am_zhseg_signature(NULL) : am_tok_name(tk),
                      c->case_sensitive ? "sensitive" : "fold", am_text_norm_name(c->norm));
        if (!c->strip_tags)
            am_buf_appends(out, "|tags:keep");
    } else if (c->profile == AM_PROFILE_SIMIANER2019) {
        am_buf_appends(out, "|tok:ws|case:sensitive|norm:none");
    } else {
        am_buf_appends(out, "|tok:ws|case:sensitive|norm:none");
    }
    if (c->profile != AM_PROFILE_ALAM2021)
        am_buf_printf(out, "|sw:%s|k:%d", am_config_stopwords(c), c->k);
    if (c->has_background)
        am_buf_printf(out, "|novel:%lld", (long long)c->rare_threshold);
    am_buf_appends(out, "|wo:");
    for (size_t i = 0; i < c->nwindows; i++)
        am_buf_printf(out, i ? ",%d" : "%d", c->windows[i]);
    am_buf_appends(out, "|cterm:");
    am_sig_number(out, c->term_cost);
    if (c->profile == AM_PROFILE_STANDARD && c->stem_match)
        am_buf_appends(out, "|stem:yes");
    /* TER tokenizer options that differ from sacreBLEU's defaults */
    const char *sep = "|ter:";
    const int ter_on[] = {c->ter_case_sensitive, c->ter_normalized, c->ter_no_punct,
                          c->ter_asian_support};
    static const char *const ter_names[] = {"cs", "norm", "nopunct", "asian"};
    for (size_t i = 0; i < 4; i++)
        if (ter_on[i]) {
            am_buf_printf(out, "%s%s", sep, ter_names[i]);
            sep = ",";
        }
    /* chrF options that differ from sacreBLEU's defaults */
    sep = "|chrf:";
    if (c->chrf_char_order != 6) {
        am_buf_printf(out, "%snc%d", sep, c->chrf_char_order);
        sep = ",";
    }
    if (c->chrf_word_order != 0) {
        am_buf_printf(out, "%snw%d", sep, c->chrf_word_order);
        sep = ",";
    }
    if (c->chrf_beta != 2) {
        am_buf_printf(out, "%sbeta%d", sep, c->chrf_beta);
        sep = ",";
    }
    const int chrf_on[] = {c->chrf_whitespace, c->chrf_lowercase, c->chrf_eps_smoothing};
    static const char *const chrf_names[] = {"space", "lc", "eps"};
    for (size_t i = 0; i < 3; i++)
        if (chrf_on[i]) {
            am_buf_printf(out, "%s%s", sep, chrf_names[i]);
            sep = ",";
        }
    am_config_bleu_signature(c, out);
    unsigned w = am_config_warnings(c);
    if (w) {
        static const char *const names[] = {"no-stopwords", "unknown-target-lang",
                                            "unknown-source-lang", "no-target-lang"};
        sep = "|warn:";
        for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
            if (w & (1u << i)) {
                am_buf_printf(out, "%s%s", sep, names[i]);
                sep = ",";
            }
    }
}

void am_config_chrf_signature(const am_config *c, int plusplus, size_t nrefs, am_buf *name,
                              am_buf *out)
{
    int nw = plusplus ? 2 : c->chrf_word_order;
    am_buf_reset(out);
    am_buf_printf(out, "nrefs:%zu|case:%s|eff:%s|nc:%d|nw:%d|space:%s|version:%s", nrefs,
                  c->chrf_lowercase ? "lc" : "mixed", c->chrf_eps_smoothing ? "no" : "yes",
                  c->chrf_char_order, nw, c->chrf_whitespace ? "yes" : "no", AM_SACREBLEU_VERSION);
    if (name) {
        /* CHRFScore: f"chrF{beta}" + "+" * word_order */
        am_buf_reset(name);
        am_buf_printf(name, "chrF%d", c->chrf_beta);
        for (int i = 0; i < nw; i++)
            am_buf_appends(name, "+");
    }
}

void am_config_ter_signature(const am_config *c, size_t nrefs, am_buf *out)
{
    am_buf_reset(out);
    am_buf_printf(out, "nrefs:%zu|case:%s|tok:tercom|norm:%s|punct:%s|asian:%s|version:%s", nrefs,
                  c->ter_case_sensitive ? "mixed" : "lc", c->ter_normalized ? "yes" : "no",
                  c->ter_no_punct ? "no" : "yes", c->ter_asian_support ? "yes" : "no",
                  AM_SACREBLEU_VERSION);
}

void am_config_chrf_opts(const am_config *c, int plusplus, am_chrf_opts *o, am_chrf_score_opts *so)
{
    am_chrf_opts_init(o);
    o->lowercase = c->chrf_lowercase;
    o->whitespace = c->chrf_whitespace;
    am_chrf_score_opts_init(so, plusplus ? 2 : c->chrf_word_order);
    so->char_order = c->chrf_char_order;
    so->beta = c->chrf_beta;
    so->eps_smoothing = c->chrf_eps_smoothing;
}

void am_config_ter_opts(const am_config *c, am_ter_opts *o)
{
    am_ter_opts_init(o);
    o->case_sensitive = c->ter_case_sensitive;
    o->normalized = c->ter_normalized;
    o->no_punct = c->ter_no_punct;
    o->asian_support = c->ter_asian_support;
}
