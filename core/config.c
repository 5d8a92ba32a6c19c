/* config.c — session options, their table and the signature (see config.h). */
#include "config.h"

#include "lang.h"
#include "stopwords.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const am_config_option am_options[] = {
    {"profile", "enum", "standard|simianer2019|alam2021", "standard",
     "metric definitions: standard, or a reference script reproduced bit for bit"},
    {"source_lang", "string", "BCP-47 or ISO code", "und", "language of the source segments"},
    {"target_lang", "string", "BCP-47 or ISO code", "und",
     "language of hypotheses and translations; picks the default tokenizer and stopwords"},
    {"tokenizer", "enum", "auto|13a|intl|zh|char|none", "auto",
     "sacreBLEU tokenizer for recall and terms (auto: zh for zh/ja, char for th/lo/km/my, else "
     "intl)"},
    {"case", "enum", "fold|sensitive", "fold", "case folding for recall and term matching"},
    {"normalize", "enum", "nfkc|nfc|none", "nfkc", "Unicode normalization for recall and terms"},
    {"strip_tags", "bool", "true|false", "true", "remove inline markup (<g>, <x/>, <bpt>…) first"},
    {"stopwords", "enum", "auto|snowball|iso|none|custom", "auto",
     "stopword list (auto: snowball where available, else stopwords-iso)"},
    {"k", "int", "0..16", "1", "highest shot reported: R0..Rk"},
    {"windows", "list", "1..50, at most 8", "2,3", "window sizes of the window-overlap metric"},
    {"term_cost", "number", "1..100", "2", "cost of editing a term word in TERm"},
    {"stem_match", "bool", "true|false", "false", "allow Snowball-stem matches of terms"},
    {"ter_case_sensitive", "bool", "true|false", "false", "TER and TERm keep case (sacreBLEU -c)"},
    {"rare_threshold", "int", ">= 0", "0",
     "novel-word variant: count only words seen at most this often in the background vocabulary"},
    {NULL, NULL, NULL, NULL, NULL}};

const am_config_option *am_config_options(void)
{
    return am_options;
}

void am_config_init(am_config *c)
{
    memset(c, 0, sizeof *c);
    c->profile = AM_PROFILE_STANDARD;
    strcpy(c->source_lang, "und");
    strcpy(c->target_lang, "und");
    c->tokenizer_auto = 1;
    c->tokenizer = AM_TOK_INTL;
    c->case_sensitive = 0;
    c->norm = AM_NORM_NFKC;
    c->strip_tags = 1;
    c->stopwords = AM_SW_AUTO;
    c->k = 1;
    c->windows[0] = 2;
    c->windows[1] = 3;
    c->nwindows = 2;
    c->term_cost = 2.0;
    c->stem_match = 0;
    c->ter_case_sensitive = 0;
    c->rare_threshold = 0;
    c->has_background = 0;
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

static int am_bool(const char *v, int *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcmp(v, yes[i])) {
            *out = 1;
            return AM_OK;
        }
        if (!strcmp(v, no[i])) {
            *out = 0;
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

static int am_windows(const char *v, am_config *c)
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
        if (errno || end == p || x < 1 || x > 50)
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

static int am_bad(am_buf *err, const char *name, const char *value)
{
    if (err) {
        const am_config_option *o = am_options;
        while (o->name && strcmp(o->name, name))
            o++;
        am_buf_reset(err);
        am_buf_printf(err, "invalid value '%.64s' for option '%s'", value, name);
        if (o->name)
            am_buf_printf(err, " (expected %s)", o->values);
    }
    return AM_ERR_INVALID;
}

int am_config_set(am_config *c, const char *name_in, const char *value, am_buf *err)
{
    char name[32];
    size_t n = strlen(name_in);
    if (n >= sizeof name) {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err, "unknown option '%.40s'", name_in);
        }
        return AM_ERR_NOTFOUND;
    }
    for (size_t i = 0; i <= n; i++)
        name[i] = name_in[i] == '-' ? '_' : name_in[i];
    long long x;
    int b;

    if (!strcmp(name, "profile")) {
        if (!strcmp(value, "standard"))
            c->profile = AM_PROFILE_STANDARD;
        else if (!strcmp(value, "simianer2019"))
            c->profile = AM_PROFILE_SIMIANER2019;
        else if (!strcmp(value, "alam2021"))
            c->profile = AM_PROFILE_ALAM2021;
        else
            return am_bad(err, name, value);
    } else if (!strcmp(name, "source_lang") || !strcmp(name, "target_lang")) {
        char canon[AM_LANG_MAX];
        if (!am_lang_ok(value) || am_lang_canonical(value, canon, sizeof canon, NULL) != AM_OK)
            return am_bad(err, name, value);
        strcpy(name[0] == 's' ? c->source_lang : c->target_lang, canon);
    } else if (!strcmp(name, "tokenizer")) {
        if (!strcmp(value, "auto")) {
            c->tokenizer_auto = 1;
        } else {
            enum am_tok_kind k;
            if (am_tok_parse(value, &k) != AM_OK)
                return am_bad(err, name, value);
            c->tokenizer = k;
            c->tokenizer_auto = 0;
        }
    } else if (!strcmp(name, "case")) {
        if (!strcmp(value, "fold"))
            c->case_sensitive = 0;
        else if (!strcmp(value, "sensitive"))
            c->case_sensitive = 1;
        else
            return am_bad(err, name, value);
    } else if (!strcmp(name, "normalize")) {
        enum am_norm nm;
        if (am_text_norm_parse(value, &nm) != AM_OK)
            return am_bad(err, name, value);
        c->norm = nm;
    } else if (!strcmp(name, "strip_tags")) {
        if (am_bool(value, &b))
            return am_bad(err, name, value);
        c->strip_tags = b;
    } else if (!strcmp(name, "stopwords")) {
        static const enum am_sw_choice all[] = {AM_SW_AUTO, AM_SW_SNOWBALL, AM_SW_ISO, AM_SW_NONE,
                                                AM_SW_CUSTOM};
        size_t i;
        for (i = 0; i < sizeof all / sizeof all[0]; i++)
            if (!strcmp(value, am_config_sw_name(all[i])))
                break;
        if (i == sizeof all / sizeof all[0])
            return am_bad(err, name, value);
        c->stopwords = all[i];
    } else if (!strcmp(name, "k")) {
        if (am_int(value, 0, AM_MAX_K, &x))
            return am_bad(err, name, value);
        c->k = (int)x;
    } else if (!strcmp(name, "windows")) {
        if (am_windows(value, c))
            return am_bad(err, name, value);
    } else if (!strcmp(name, "term_cost")) {
        char *end;
        errno = 0;
        double d = strtod(value, &end);
        if (!*value || errno || *end || !isfinite(d) || d < 1.0 || d > 100.0)
            return am_bad(err, name, value);
        c->term_cost = d;
    } else if (!strcmp(name, "stem_match")) {
        if (am_bool(value, &b))
            return am_bad(err, name, value);
        c->stem_match = b;
    } else if (!strcmp(name, "ter_case_sensitive")) {
        if (am_bool(value, &b))
            return am_bad(err, name, value);
        c->ter_case_sensitive = b;
    } else if (!strcmp(name, "rare_threshold")) {
        if (am_int(value, 0, INT64_MAX, &x))
            return am_bad(err, name, value);
        c->rare_threshold = x;
    } else {
        if (err) {
            am_buf_reset(err);
            am_buf_printf(err, "unknown option '%s'", name_in);
        }
        return AM_ERR_NOTFOUND;
    }
    for (unsigned i = 0; am_options[i].name; i++)
        if (!strcmp(am_options[i].name, name))
            c->explicit_set |= 1u << i;
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
    for (unsigned i = 0; am_options[i].name; i++)
        if (!strcmp(am_options[i].name, name))
            return (c->explicit_set >> i) & 1u;
    return 0;
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
         !strcmp(am_sw_default_source(lang), "none")))
        w |= AM_WARN_NO_STOPWORDS;
    if (!am_lang_known(c->target_lang))
        w |= AM_WARN_TARGET_LANG;
    if (!am_lang_known(c->source_lang))
        w |= AM_WARN_SOURCE_LANG;
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

/* The stopword source actually used (auto resolved). */
static const char *am_config_sw_effective(const am_config *c)
{
    if (c->stopwords != AM_SW_AUTO)
        return am_config_sw_name(c->stopwords);
    char lang[8];
    if (am_sw_lang(c->target_lang, lang, sizeof lang) != AM_OK)
        return "none";
    return am_sw_default_source(lang);
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
        am_buf_printf(out, "|sw:%s|k:%d", am_config_sw_effective(c), c->k);
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
                                            "unknown-source-lang"};
        const char *sep = "|warn:";
        for (unsigned i = 0; i < 3; i++)
            if (w & (1u << i)) {
                am_buf_printf(out, "%s%s", sep, names[i]);
                sep = ",";
            }
    }
}
