/*
 * sess_build.c — compiling a session's scorer (sessions.h): its options
 * read into a configuration, its scorer compiled with the glossary and
 * stopwords stored with it, what a scorer and a build count in the
 * memory budget, and the budget's counter (mem_count), the bottom the
 * cache and the shared scorers both count through. Assembling a runtime from the store
 * (am_sess_build) is in sessions.c, beside the budget it reserves from.
 */
#include "sess_internal.h"

#include "glossary.h"
#include "lang.h"
#include "vocab.h"
#include "zhseg.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Text of a JSON option value for am_config_set, checking the JSON type
 * against the option table's type (a number is not a string, a boolean is
 * not the string "true"). */
static int am_opt_text(const char *key, json_t *v, char *buf, size_t n)
{
    const char *type = NULL;
    for (const am_config_option *o = am_config_options(); o->name; o++)
        if (!strcmp(o->name, key))
            type = o->type;
    if (!type)
        return AM_ERR_NOTFOUND;
    if (!strcmp(type, "enum") || !strcmp(type, "string")) {
        if (!json_is_string(v))
            return AM_ERR_INVALID;
        snprintf(buf, n, "%s", json_string_value(v));
    } else if (!strcmp(type, "bool")) {
        if (!json_is_boolean(v))
            return AM_ERR_INVALID;
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    } else if (!strcmp(type, "int")) {
        if (!json_is_integer(v))
            return AM_ERR_INVALID;
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    } else if (!strcmp(type, "number")) {
        if (!json_is_number(v))
            return AM_ERR_INVALID;
        snprintf(buf, n, "%.17g", json_number_value(v));
    } else if (json_is_string(v)) { /* list: "2,3" */
        snprintf(buf, n, "%s", json_string_value(v));
    } else if (json_is_array(v) && json_array_size(v) > 0) {
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_integer(x))
                return AM_ERR_INVALID;
            int w = snprintf(buf + off, n - off, "%s%lld", i ? "," : "",
                             (long long)json_integer_value(x));
            if (w < 0 || (size_t)w >= n - off)
                return AM_ERR_INVALID;
            off += (size_t)w;
        }
    } else {
        return AM_ERR_INVALID;
    }
    return AM_OK;
}

/* Options handled by the service, not by am_config. */
static int am_service_option(const char *key)
{
    return !strcmp(key, "baseline_system") || !strcmp(key, "background_vocabulary") ||
           !strcmp(key, "name") || !strcmp(key, "metadata") || !strcmp(key, "systems") ||
           !strcmp(key, "paired_totals");
}

int am_sessions_build_scorer(const char *options_json, const char *custom_sw_json,
                             const char *glossary_json, const am_vocab *background, am_scorer **out,
                             am_buf *err)
{
    return am_sessions_build(options_json, custom_sw_json, glossary_json, background, out, NULL,
                             err);
}

/* The process's friso model, loaded by the first caller (NULL when it
 * cannot be: the scorer then tries itself and reports why). */
static const am_zhseg *am_sessions_zhseg(am_sessions *c)
{
    pthread_mutex_lock(&c->zh_mu);
    if (!c->zhseg)
        (void)am_zhseg_new(NULL, &c->zhseg, NULL);
    const am_zhseg *m = c->zhseg;
    pthread_mutex_unlock(&c->zh_mu);
    return m;
}

int am_sessions_scorer_in(am_sessions *c, const char *options_json, const char *custom_sw_json,
                          const char *glossary_json, const am_vocab *background, am_scorer **out,
                          am_buf *err)
{
    return am_sessions_build_in(c, options_json, custom_sw_json, glossary_json, background, out,
                                NULL, err);
}

/* Fills *cfg from an options JSON text (service options skipped). Returns
 * AM_OK or AM_ERR_INVALID with a message in err. */
static int am_opts_config(const char *options_json, am_config *cfg, am_buf *err)
{
    json_error_t je;
    json_t *opts = json_loads(options_json, 0, &je);
    if (!json_is_object(opts)) {
        json_decref(opts);
        am_buf_printf(err, "stored options are not a JSON object");
        return AM_ERR_INVALID;
    }
    am_config_init(cfg);
    const char *key;
    json_t *val;
    int rc = AM_OK;
    json_object_foreach(opts, key, val)
    {
        if (am_service_option(key))
            continue;
        char text[512];
        rc = am_opt_text(key, val, text, sizeof text);
        if (rc == AM_ERR_NOTFOUND) {
            am_buf_printf(err, "unknown option '%s'", key);
            rc = AM_ERR_INVALID;
            break;
        }
        if (rc != AM_OK) {
            const am_config_option *o = am_config_options();
            while (o->name && strcmp(o->name, key))
                o++;
            am_buf_printf(err, "option '%s' must be %s (%s)", key,
                          !strcmp(o->type, "bool")     ? "a boolean"
                          : !strcmp(o->type, "int")    ? "an integer"
                          : !strcmp(o->type, "number") ? "a number"
                          : !strcmp(o->type, "list")   ? "an array of integers"
                                                       : "a string",
                          o->values);
            break;
        }
        rc = am_config_set(cfg, key, text, err);
        if (rc != AM_OK) {
            rc = AM_ERR_INVALID;
            break;
        }
    }
    json_decref(opts);
    return rc;
}

void am_sessions_pin_defaults(json_t *opts)
{
    /* The version of the "auto" resolution (tokenizers) this session was
     * created with: a later release that changes a default cannot then
     * shift it (sessions stored before there was one have defaults 1,
     * schema/011). */
    if (!json_object_get(opts, "defaults"))
        json_object_set_new(opts, "defaults", json_integer(AM_DEFAULTS_CURRENT));
    if (json_object_get(opts, "ter_normalized") || json_object_get(opts, "ter_asian_support"))
        return; /* an explicit choice */
    const char *tl = json_string_value(json_object_get(opts, "target_lang"));
    am_config c;
    am_config_init(&c);
    if (!tl || am_config_set(&c, "target_lang", tl, NULL) != AM_OK)
        return; /* refused later with its message */
    /* defaults 1 (as before issue 24) pins nothing; a bad value is refused
     * later with its message */
    char dv[64];
    json_t *d = json_object_get(opts, "defaults");
    if (d && am_opt_text("defaults", d, dv, sizeof dv) == AM_OK)
        (void)am_config_set(&c, "defaults", dv, NULL);
    am_config_session_defaults(&c);
    if (c.ter_normalized)
        json_object_set_new(opts, "ter_normalized", json_true());
    if (c.ter_asian_support)
        json_object_set_new(opts, "ter_asian_support", json_true());
}

int am_sessions_check_options(const char *options_json, am_buf *err)
{
    am_config cfg;
    int rc = am_opts_config(options_json, &cfg, err);
    return rc == AM_OK ? am_config_check_profile(&cfg, err) : rc;
}

/* Builds a scorer from options, custom stopwords (JSON texts, the latter
 * NULL) and the parsed glossary g (borrowed, NULL: none); as
 * am_sessions_build. */
static int build_from(am_sessions *c, const char *options_json, const char *custom_sw_json,
                      const am_gloss *g, const am_vocab *background, am_scorer **out, am_buf *err)
{
    *out = NULL;
    json_error_t je;
    am_config cfg;
    int rc = am_opts_config(options_json, &cfg, err);
    if (rc != AM_OK)
        return rc;
    json_t *sw = NULL;
    const char **words = NULL;
    size_t nwords = 0;
    if (custom_sw_json) {
        sw = json_loads(custom_sw_json, 0, &je);
        if (!json_is_array(sw)) {
            json_decref(sw);
            am_buf_printf(err, "stored stopwords are not a JSON array");
            return AM_ERR_INVALID;
        }
        nwords = json_array_size(sw);
        words = am_xcalloc(nwords ? nwords : 1, sizeof *words);
        for (size_t i = 0; i < nwords; i++)
            words[i] = json_string_value(json_array_get(sw, i));
    }
    /* the shared friso model when recall runs zh-friso (without a cache,
     * the scorer loads its own) */
    am_scorer_models models = {NULL};
    if (c && am_config_tokenizer(&cfg) == AM_TOK_ZH_FRISO)
        models.zhseg = am_sessions_zhseg(c);
    rc = am_scorer_new_with(&cfg, words, nwords, g, background, &models, out, err);
    free(words);
    json_decref(sw);
    return rc;
}

int am_sessions_build_gloss(am_sessions *c, const char *options_json, const char *custom_sw_json,
                            const am_gloss *g, am_scorer **out, am_buf *err)
{
    return build_from(c, options_json, custom_sw_json, g, NULL, out, err);
}

int am_sessions_build(const char *options_json, const char *custom_sw_json,
                      const char *glossary_json, const am_vocab *background, am_scorer **out,
                      am_gloss *keep, am_buf *err)
{
    return am_sessions_build_in(NULL, options_json, custom_sw_json, glossary_json, background, out,
                                keep, err);
}

int am_sessions_build_in(am_sessions *c, const char *options_json, const char *custom_sw_json,
                         const char *glossary_json, const am_vocab *background, am_scorer **out,
                         am_gloss *keep, am_buf *err)
{
    *out = NULL;
    am_gloss g;
    am_gloss_init(&g);
    if (glossary_json) {
        am_gloss_report rep;
        int rc =
            am_gloss_parse(glossary_json, strlen(glossary_json), AM_GLOSS_JSON, NULL, &g, &rep);
        if (rc != AM_OK) {
            am_buf_printf(err, "stored glossary: %s", rep.msg);
            return rc;
        }
    }
    int rc = build_from(c, options_json, custom_sw_json, glossary_json ? &g : NULL, background, out,
                        err);
    if (rc == AM_OK && keep) {
        *keep = g; /* hand the entries over */
        am_gloss_init(&g);
    }
    am_gloss_cleanup(&g);
    return rc;
}

/* The recall tokenizer name that counted vocabulary meta m for a session
 * in cfg's target language: m's own, or for a row stored before it was
 * recorded ("auto:1", schema/012) the auto tokenizer of defaults 1 in
 * that language, which counted every TMX memory then. */
static const char *am_sessions_vocab_tok(const am_store_vocab_meta *m, const am_config *cfg)
{
    if (strcmp(m->tokenizer, "auto:1"))
        return m->tokenizer;
    am_config old;
    am_config_init(&old);
    (void)am_config_set(&old, "target_lang", cfg->target_lang, NULL);
    (void)am_config_set(&old, "defaults", "1", NULL);
    return am_tok_name(am_config_tokenizer(&old));
}

int am_sessions_vocab_check(const char *name, const am_store_vocab_meta *m, const am_config *cfg,
                            am_buf *err, const char **field)
{
    const char *tl = strcmp(cfg->target_lang, "und") ? cfg->target_lang : NULL;
    const char *sl = strcmp(cfg->source_lang, "und") ? cfg->source_lang : NULL;
    *field = "options.background_vocabulary";
    if (m->lang && tl && !am_lang_same_canonical(m->lang, tl)) {
        am_buf_printf(err,
                      "background vocabulary '%s' counts the %s side of its memory but the "
                      "session's target_lang is %s: PUT /v1/vocabularies/%s?lang=%s again",
                      name, m->lang, tl, name, tl);
        *field = "target_lang";
        return AM_ERR_INVALID;
    }
    if (m->source_lang && sl && !am_lang_same_canonical(m->source_lang, sl)) {
        am_buf_printf(err,
                      "background vocabulary '%s' was counted from a memory with source "
                      "language %s but the session's source_lang is %s: count a memory of the "
                      "session's language pair",
                      name, m->source_lang, sl);
        *field = "source_lang";
        return AM_ERR_INVALID;
    }
    if (!m->tokenizer)
        return AM_OK; /* a count list: the uploader's words */
    const char *vt = am_sessions_vocab_tok(m, cfg);
    const char *st = am_tok_name(am_config_tokenizer(cfg));
    if (!strcmp(vt, st))
        return AM_OK;
    am_buf_printf(err,
                  "background vocabulary '%s' was counted with the %s tokenizer%s but this "
                  "session's recall tokenizer is %s, so its novel words would be wrong: "
                  "re-import the memory counted with %s (PUT /v1/vocabularies/%s?tokenizer=%s%s%s)",
                  name, vt, strcmp(m->tokenizer, "auto:1") ? "" : " (stored before issue 24)", st,
                  st, name, st, tl ? "&lang=" : "", tl ? tl : "");
    return AM_ERR_INVALID;
}

/* Bytes a runtime's build holds at its peak per byte of its stored
 * glossary JSON: the text, jansson's tree of it, the parsed entries and the
 * compiled glossary (bench/README.md, "Memory budget": 11.8 for 100,000
 * entries, 10.3 MB stored, a 121.5 MB peak; the runtime then keeps 57 MB). */
#define AM_SESS_JSON_FACTOR 12

size_t am_vocab_bytes_or0(const am_vocab *v)
{
    return v ? am_vocab_bytes(v) : 0;
}

/* Bytes malloc adds to each block (glibc: a size word, 16-byte rounding). */
#define AM_SESS_MALLOC_OVERHEAD 16
/* What a scorer holds besides its compiled glossary: the stopword set
 * (~14 KiB for the built-in lists), the configuration and signature;
 * an estimate (core does not count these), small beside a glossary. */
#define AM_SESS_SCORER_BASE ((size_t)16 << 10)

size_t am_sessions_scorer_bytes(const am_scorer *sc, const am_gloss *g)
{
    size_t b = sc ? AM_SESS_SCORER_BASE + am_terms_lex_bytes(am_scorer_lex(sc)) : 0;
    if (g)
        b += am_gloss_bytes(g, AM_SESS_MALLOC_OVERHEAD);
    return b;
}

size_t am_sessions_build_estimate(size_t glossary_json_bytes)
{
    return AM_SESS_SCORER_BASE * 4 + glossary_json_bytes * AM_SESS_JSON_FACTOR;
}

/* Counts bytes more (sign > 0) or fewer in the budget. Under the lock. */
void mem_count(am_sessions *c, size_t bytes, int sign)
{
    if (sign > 0) {
        c->mem_used += bytes;
        if (c->mem_used > c->mem_peak)
            c->mem_peak = c->mem_used;
    } else {
        assert(c->mem_used >= bytes);
        c->mem_used -= bytes;
        if (bytes)
            pthread_cond_broadcast(&c->room); /* am_sessions_reserve's waiters */
    }
}
