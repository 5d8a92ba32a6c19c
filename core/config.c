/* config.c — session options, their table and the signature (see config.h).
 *
 * One table (am_options) documents every option and drives its parsing:
 * each row names a parser for its kind, the am_config field and the
 * bounds; am_config_init sets every option to its documented default
 * through the same parsers. */
#include "config.h"

#include "lang.h"
#include "stopwords.h"

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
    /* ja-mecab needs a MeCab model that recall and terms are not given. */
    if (k == AM_TOK_JA_MECAB)
        return AM_ERR_INVALID;
    c->tokenizer_auto = !strcmp(v, "auto");
    c->tokenizer = k;
    return AM_OK;
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
    {"tokenizer", "enum", "auto|13a|intl|zh|char|none", "auto",
     "sacreBLEU tokenizer for recall and terms (auto: zh for zh/ja, char for th/lo/km/my, else "
     "intl)",
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
        if (err) {
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

enum am_tok_kind am_config_tokenizer(const am_config *c)
{
    if (c->tokenizer_auto)
        return am_tok_default_for_lang(strcmp(c->target_lang, "und") ? c->target_lang : NULL);
    return c->tokenizer;
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
        am_buf_printf(out, "|tok:%s|case:%s|norm:%s", am_tok_name(am_config_tokenizer(c)),
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
    if (c->ter_case_sensitive)
        am_buf_appends(out, "|ter:cs");
    unsigned w = am_config_warnings(c);
    if (w) {
        static const char *const names[] = {"no-stopwords", "unknown-target-lang",
                                            "unknown-source-lang", "no-target-lang"};
        const char *sep = "|warn:";
        for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
            if (w & (1u << i)) {
                am_buf_printf(out, "%s%s", sep, names[i]);
                sep = ",";
            }
    }
}
