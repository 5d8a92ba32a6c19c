/* api_sessions.c — POST/GET/DELETE /v1/sessions[/{id}], GET /v1/sessions. */
#include "api.h"
#include "answer_cache.h"

#include "events.h"
#include "jscan.h"
#include "json.h"
#include "sessions.h"

#include <stdlib.h>
#include <string.h>

/* The session's warnings: what cannot fit its languages (config.h,
 * am_config_warnings), as sentences. Returns a new array. */
static json_t *am_session_warnings(const am_config *c)
{
    json_t *w = json_array();
    unsigned bits = am_config_warnings(c);
    char msg[400];
    if (bits & AM_WARN_NO_STOPWORDS) {
        snprintf(msg, sizeof msg,
                 "no stopword list for target_lang '%s': every word counts as a content word "
                 "(give stopword_list, or options.stopwords none to make it a choice)",
                 c->target_lang);
        json_array_append_new(w, json_string(msg));
    }
    if (bits & AM_WARN_TARGET_LANG) {
        snprintf(msg, sizeof msg,
                 "target_lang '%s' is not an ISO 639 language code: the tokenizer (%s) is a "
                 "guess and no stopword list applies",
                 c->target_lang, am_tok_name(am_config_tokenizer(c)));
        json_array_append_new(w, json_string(msg));
    }
    if (bits & AM_WARN_NO_TARGET_LANG) {
        json_array_append_new(w, json_string("target_lang 'und': no language given, so no "
                                             "stopword list applies and the tokenizer is intl "
                                             "(give target_lang)"));
    }
    if (bits & AM_WARN_SOURCE_LANG) {
        snprintf(msg, sizeof msg,
                 "source_lang '%s' is not an ISO 639 language code: glossary terms in the "
                 "source are tokenized by a guess",
                 c->source_lang);
        json_array_append_new(w, json_string(msg));
    }
    return w;
}

/* What a session shows of its compiled scorer: the effective options
 * (eff, "auto" resolved), its warnings and how many stopwords are in use;
 * eff and warnings NULL when the scorer cannot be built. key (owned) names
 * the inputs they are a function of (am_session_view_key). */
typedef struct am_session_view {
    char *key;
    uint64_t hash; /* of key (am_session_view_hash) */
    json_t *eff, *warnings;
    json_int_t nsw;
} am_session_view;

/* The views one listing computed (am_api_session_list): sessions with the
 * same scoring options share one, so a page of 1,000 sessions compiles a
 * scorer per distinct option set instead of one per session (its builtin
 * stopword list, tokenized word by word, was 0.1 ms of CPU a session). */
typedef struct am_session_views {
    am_session_view *v;
    size_t n, cap;
} am_session_views;

static void am_session_views_clear(am_session_views *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].key);
        json_decref(m->v[i].eff);
        json_decref(m->v[i].warnings);
    }
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}

/* Options that sess_build.c (am_opts_config) leaves out of the scorer's
 * configuration: they cannot change the view. Leaving one of them in the
 * key would only share less; leaving out a scoring option would not be
 * safe, hence this list names only what the build skips. */
static int am_session_service_key(const char *key)
{
    static const char *const svc[] = {
        "baseline_system", "background_vocabulary", "name", "metadata", "systems", "paired_totals"};
    for (size_t i = 0; i < sizeof svc / sizeof svc[0]; i++)
        if (!strcmp(key, svc[i]))
            return 1;
    return 0;
}

/* The text the view of a session is a function of: its parsed options
 * (borrowed) without the service options, compact and in stored order
 * (am_opts_config applies them in that order), then its stored custom
 * stopwords (NULL and text told apart). The build reads nothing else: no
 * glossary, no background vocabulary. NULL when opts is not an object
 * (the build reports it; nothing to share). Caller frees. */
static char *am_session_view_key(json_t *opts, const char *custom_sw)
{
    if (!json_is_object(opts))
        return NULL;
    json_t *k = json_object();
    const char *name;
    json_t *v;
    json_object_foreach(opts, name, v)
    {
        if (!am_session_service_key(name))
            json_object_set(k, name, v);
    }
    char *txt = json_dumps(k, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_decref(k);
    if (!txt)
        return NULL;
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, txt);
    am_buf_appends(&b, custom_sw ? "\nS" : "\nN");
    if (custom_sw)
        am_buf_appends(&b, custom_sw);
    free(txt);
    return am_buf_detach(&b);
}

/* FNV-1a of a key: a listing of many distinct option sets compares
 * hashes, not texts. */
static uint64_t am_session_view_hash(const char *key)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

/* Computes the view of a session with options (stored text, borrowed)
 * and custom stopwords (NULL) into *out (eff and warnings new references,
 * NULL when the scorer cannot be built; key untouched). */
static void am_session_view_build(am_server *srv, const char *options, const char *custom_sw,
                                  am_session_view *out)
{
    am_scorer *sc = NULL;
    am_buf err;
    am_buf_init(&err);
    out->eff = out->warnings = NULL;
    out->nsw = 0;
    if (am_sessions_scorer_in(srv->sessions, options, custom_sw, NULL, NULL, &sc, &err) == AM_OK) {
        /* the scorer's config: what runs (a profile's fixed settings included),
         * with "auto" resolved: the tokenizer and stopword list that run
         * (issue 24: never "auto") and how many stopwords are in use */
        const am_config *c = am_scorer_config(sc);
        out->eff = am_json_config(c);
        json_object_set_new(out->eff, "tokenizer",
                            json_string(am_tok_name(am_config_tokenizer(c))));
        json_object_set_new(out->eff, "stopwords", json_string(am_config_stopwords(c)));
        out->warnings = am_session_warnings(c);
        out->nsw = (json_int_t)am_scorer_stopword_count(sc);
        am_scorer_free(sc);
    }
    am_buf_cleanup(&err);
}

/* Sets *eff, *warnings (new values the caller owns) and *nsw for a
 * session: from memo (NULL: none) when a session of the same key was
 * shown already, else built (and added to memo). */
static void am_session_view_get(am_server *srv, const am_store_session *row, json_t *opts,
                                am_session_views *memo, json_t **eff, json_t **warnings,
                                json_int_t *nsw)
{
    am_session_view one = {NULL, 0, NULL, NULL, 0}, *v = &one;
    char *key = memo ? am_session_view_key(opts, row->custom_stopwords) : NULL;
    uint64_t h = key ? am_session_view_hash(key) : 0;
    size_t i = 0;
    while (key && i < memo->n && (memo->v[i].hash != h || strcmp(memo->v[i].key, key)))
        i++;
    if (key && i < memo->n) {
        free(key);
        v = &memo->v[i];
    } else {
        am_session_view_build(srv, row->options, row->custom_stopwords, &one);
        if (key) {
            if (memo->n == memo->cap) {
                memo->cap = memo->cap ? 2 * memo->cap : 8;
                memo->v = am_xrealloc(memo->v, memo->cap * sizeof *memo->v);
            }
            one.key = key;
            one.hash = h;
            memo->v[memo->n++] = one;
            v = &memo->v[memo->n - 1];
        }
    }
    /* copies: the answer's tree is changed below (languages moved out) */
    *eff = v->eff ? json_deep_copy(v->eff) : json_object();
    *warnings = v->warnings ? json_deep_copy(v->warnings) : json_array();
    *nsw = v->nsw;
    if (v == &one) {
        json_decref(one.eff);
        json_decref(one.warnings);
    }
}

/* am_api_session_json with the views of a listing (memo, NULL: none). */
static json_t *am_session_json_in(am_server *srv, const am_store_session *row,
                                  am_session_views *memo)
{
    json_t *opts = json_loads(row->options, 0, NULL);
    json_t *eff = NULL, *warnings = NULL;
    json_int_t nsw = 0;
    am_session_view_get(srv, row, opts, memo, &eff, &warnings, &nsw);
    /* the languages are top-level fields of a session, not options */
    json_t *src_lang = json_incref(json_object_get(eff, "source_lang"));
    json_t *tgt_lang = json_incref(json_object_get(eff, "target_lang"));
    json_object_del(eff, "source_lang");
    json_object_del(eff, "target_lang");
    /* service options appear when set (Options has no nulls) */
    const char *keys[] = {"baseline_system", "background_vocabulary"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(opts, keys[i]);
        if (json_is_string(v))
            json_object_set(eff, keys[i], v);
    }
    /* the entry count alone: a scan of the compact stored text, not a parse
     * of up to max-glossary-entries entries (0.36 s CPU for 100,000) for
     * each session a listing shows; other text is parsed as before */
    size_t gl = 0;
    ptrdiff_t count = row->glossary ? am_js_array_count(row->glossary) : 0;
    if (count >= 0) {
        gl = (size_t)count;
    } else {
        json_t *g = json_loads(row->glossary, 0, NULL);
        gl = json_array_size(g);
        json_decref(g);
    }
    char base[300];
    snprintf(base, sizeof base, "/v1/sessions/%s", row->id);
    json_t *links = json_object();
    const char *rel[] = {"self", "segments", "metrics", "glossary", "export", "events"};
    const char *suf[] = {"", "/segments", "/metrics", "/glossary", "/export", "/events"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char l[340];
        snprintf(l, sizeof l, "%s%s", base, suf[i]);
        json_object_set_new(links, rel[i], json_string(l));
    }
    json_t *o = json_pack(
        "{sssosososssIs{sIsI}sososo}", "id", row->id, "name",
        json_incref(json_object_get(opts, "name") ? json_object_get(opts, "name") : json_null()),
        "source_lang", src_lang ? src_lang : json_string("und"), "target_lang",
        tgt_lang ? tgt_lang : json_string("und"), "signature", row->signature, "segments",
        (json_int_t)row->segments, "glossary", "entries", (json_int_t)gl, "version",
        (json_int_t)row->glossary_version, "options", eff, "created_at",
        am_json_time(row->created_at), "updated_at", am_json_time(row->updated_at));
    /* the highest seq (> segments once segments were deleted: schema/007) */
    json_object_set_new(o, "last_seq", json_integer((json_int_t)row->last_seq));
    json_t *sw = row->custom_stopwords ? json_loads(row->custom_stopwords, 0, NULL) : NULL;
    if (sw)
        json_object_set_new(o, "stopword_list", sw);
    json_t *md = json_object_get(opts, "metadata");
    json_object_set(o, "metadata", md ? md : json_null());
    json_t *systems = json_object_get(opts, "systems");
    if (json_is_array(systems))
        json_object_set(o, "systems", systems);
    json_object_set_new(o, "stopword_count", json_integer(nsw));
    json_object_set_new(o, "warnings", warnings);
    json_object_set_new(o, "links", links);
    /* unique per creation: a deleted and re-created id gets a new one */
    json_object_set_new(o, "incarnation", json_integer((json_int_t)row->incarnation));
    json_decref(opts);
    return o;
}

json_t *am_api_session_json(am_server *srv, const am_store_session *row)
{
    return am_session_json_in(srv, row, NULL);
}

/* Validates the optional top-level "systems" of a create body (borrowed)
 * and copies it into opts: 1 to max_systems distinct system names, which
 * include options.baseline_system when that is set. Returns NULL, or a
 * static message with *field set. */
static const char *am_session_systems(am_req *req, json_t *body, json_t *opts, const char **field)
{
    json_t *sys = json_object_get(body, "systems");
    json_t *bs = json_object_get(opts, "baseline_system");
    *field = "systems";
    if (!sys)
        return NULL;
    size_t max = (size_t)req->srv->cfg.max_systems;
    if (max > AM_SCORE_MAX_SYSTEMS)
        max = AM_SCORE_MAX_SYSTEMS;
    if (!json_is_array(sys) || json_array_size(sys) == 0 || json_array_size(sys) > max)
        return "'systems' must be an array of 1 to max-systems system names";
    int has_baseline = 0;
    for (size_t i = 0; i < json_array_size(sys); i++) {
        const char *a = json_string_value(json_array_get(sys, i));
        if (!a || !am_http_valid_id(a))
            return "system names match [A-Za-z0-9._-]{1,128}";
        for (size_t j = 0; j < i; j++)
            if (!strcmp(a, json_string_value(json_array_get(sys, j))))
                return "'systems' names a system twice";
        if (json_is_string(bs) && !strcmp(a, json_string_value(bs)))
            has_baseline = 1;
    }
    if (bs && !has_baseline) {
        *field = "options.baseline_system";
        return "the baseline_system must be one of the declared systems";
    }
    json_object_set(opts, "systems", sys);
    return NULL;
}

/* Generates an id "s-" + 16 hex digits from the clock and a counter-free
 * source (the address of a stack object mixes in the thread). */
static void am_new_id(char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t x = (uint64_t)am_now_ms() * 6364136223846793005ULL;
    int local;
    x ^= (uint64_t)(uintptr_t)&local * 1442695040888963407ULL;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        uint64_t r = 0;
        if (fread(&r, sizeof r, 1, f) == 1)
            x ^= r;
        fclose(f);
    }
    char buf[19] = "s-";
    for (int i = 0; i < 16; i++)
        buf[2 + i] = hex[(x >> (4 * i)) & 15];
    buf[18] = '\0';
    snprintf(out, n, "%s", buf);
}

/* ---- POST /v1/sessions, one step per part of the body -------------------
 * Each step either succeeds or fills resp with its problem and returns an
 * error; nothing is stored before the last step. */

/* A 422 invalid-value problem naming field (NULL: none). */
static int am_session_invalid(am_req *req, am_resp *resp, const char *field, const char *msg)
{
    am_resp_problem(resp, req, AM_P_INVALID_VALUE, "%s", msg);
    if (field)
        am_resp_problem_set(resp, "field", json_string(field));
    return AM_ERR_INVALID;
}

/* Refuses a top-level field the API does not know (body borrowed). */
static int am_session_known_fields(am_req *req, am_resp *resp, json_t *body)
{
    static const char *const known[] = {"id",      "name",     "source_lang",   "target_lang",
                                        "options", "glossary", "stopword_list", "metadata",
                                        "systems"};
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(key, known[k]))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            am_resp_problem(resp, req, AM_P_UNKNOWN_FIELD,
                            "unknown field '%.64s' (allowed: id, name, source_lang, target_lang, "
                            "options, glossary, stopword_list, metadata, systems)",
                            key);
            am_resp_problem_set(resp, "field", json_string(key));
            return AM_ERR_INVALID;
        }
    }
    return AM_OK;
}

/* The session id: the body's "id", or a generated one, into id[0..n). */
static int am_session_id(am_req *req, am_resp *resp, json_t *body, char *id, size_t n)
{
    json_t *jid = json_object_get(body, "id");
    if (!jid) {
        am_new_id(id, n);
        return AM_OK;
    }
    if (!json_is_string(jid) || !am_http_valid_id(json_string_value(jid)))
        return am_session_invalid(req, resp, "id",
                                  "'id' must be 1-128 characters from [A-Za-z0-9._-]");
    snprintf(id, n, "%s", json_string_value(jid));
    return AM_OK;
}

/* The stored options object (*out, a new reference, NULL on error): the
 * languages, the body's options, name, metadata, systems and
 * paired_totals. */
static int am_session_options(am_req *req, am_resp *resp, json_t *body, json_t **out)
{
    *out = NULL;
    json_t *in = json_object_get(body, "options");
    if (in && !json_is_object(in))
        return am_session_invalid(req, resp, "options", "'options' must be an object");
    json_t *opts = json_object();
    static const char *const langs[] = {"source_lang", "target_lang"};
    for (size_t i = 0; i < 2; i++) {
        json_t *l = json_object_get(body, langs[i]);
        if (!l) {
            am_resp_problem(resp, req, AM_P_MISSING_FIELD, "'%s' is required", langs[i]);
            am_resp_problem_set(resp, "field", json_string(langs[i]));
            json_decref(opts);
            return AM_ERR_INVALID;
        }
        if (!json_is_string(l)) {
            json_decref(opts);
            return am_session_invalid(req, resp, langs[i],
                                      "language codes are strings such as \"en\" or \"fr-FR\"");
        }
        json_object_set(opts, langs[i], l);
    }
    const char *key;
    json_t *v;
    json_object_foreach(in, key, v)
    {
        if (!strcmp(key, "source_lang") || !strcmp(key, "target_lang") || !strcmp(key, "systems") ||
            !strcmp(key, "paired_totals")) {
            json_decref(opts);
            return am_session_invalid(req, resp, key,
                                      "languages and systems are top-level fields, not options");
        }
        json_object_set(opts, key, v);
    }
    json_t *name = json_object_get(body, "name"), *md = json_object_get(body, "metadata");
    const char *field = NULL, *msg = NULL;
    if (name && !json_is_string(name)) {
        field = "name";
        msg = "'name' must be a string";
    } else if (md && !json_is_object(md)) {
        field = "metadata";
        msg = "'metadata' must be an object";
    } else {
        msg = am_session_systems(req, body, opts, &field);
    }
    if (msg) {
        json_decref(opts);
        return am_session_invalid(req, resp, field, msg);
    }
    if (name)
        json_object_set(opts, "name", name);
    if (md)
        json_object_set(opts, "metadata", md);
    /* pair totals (ingest.c) are kept from this session's first segment on */
    json_object_set_new(opts, "paired_totals", json_true());
    *out = opts;
    return AM_OK;
}

/* The options only the service reads: baseline_system and
 * background_vocabulary (*bg borrowed from opts, NULL: none), the
 * rare_threshold they enable, and the profiles a live session can run. */
static int am_session_service_options(am_req *req, am_resp *resp, json_t *opts, const char **bg)
{
    json_t *bgv = json_object_get(opts, "background_vocabulary");
    json_t *bs = json_object_get(opts, "baseline_system");
    if ((bgv && !json_is_string(bgv)) ||
        (bs && (!json_is_string(bs) || !am_http_valid_id(json_string_value(bs)))))
        return am_session_invalid(
            req, resp, NULL,
            "baseline_system and background_vocabulary are names ([A-Za-z0-9._-])");
    *bg = bgv ? json_string_value(bgv) : NULL;
    json_t *rt = json_object_get(opts, "rare_threshold");
    if (!*bg && json_is_integer(rt) && json_integer_value(rt) != 0) {
        /* the novel-word variant needs the background vocabulary's counts */
        return am_session_invalid(req, resp, "options.rare_threshold",
                                  "options.rare_threshold needs options.background_vocabulary");
    }
    json_t *prof = json_object_get(opts, "profile");
    if (json_is_string(prof) && !strcmp(json_string_value(prof), "alam2021")) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "profile alam2021 reproduces a script on WMT21 SGML files; use `adaptmon "
                        "score --profile alam2021` offline (live sessions: standard or "
                        "simianer2019)");
        am_resp_problem_set(resp, "field", json_string("options.profile"));
        return AM_ERR_INVALID;
    }
    return AM_OK;
}

/* The custom stopword list as stored JSON text (*sw_txt, caller frees; NULL:
 * none); sets options.stopwords to custom when it was not given. */
static int am_session_stopwords(am_req *req, am_resp *resp, json_t *body, json_t *opts,
                                char **sw_txt)
{
    *sw_txt = NULL;
    json_t *swl = json_object_get(body, "stopword_list");
    if (!swl)
        return AM_OK;
    int ok = json_is_array(swl) && json_array_size(swl) <= 100000;
    for (size_t i = 0; ok && i < json_array_size(swl); i++)
        ok = json_is_string(json_array_get(swl, i)) &&
             json_string_length(json_array_get(swl, i)) > 0;
    if (!ok)
        return am_session_invalid(req, resp, "stopword_list",
                                  "'stopword_list' must be an array of non-empty strings");
    json_t *swc = json_object_get(opts, "stopwords");
    if (swc && !(json_is_string(swc) && !strcmp(json_string_value(swc), "custom"))) {
        /* the list would be stored and never used */
        return am_session_invalid(req, resp, "stopword_list",
                                  "'stopword_list' is used with options.stopwords custom (or "
                                  "without options.stopwords), not with another stopwords choice");
    }
    if (!swc)
        json_object_set_new(opts, "stopwords", json_string("custom"));
    *sw_txt = am_json_dump(swl);
    return AM_OK;
}

/* The inline glossary as stored JSON text (*gl_txt, caller frees; NULL:
 * none), checked as PUT …/glossary checks it: a limit is 413, malformed
 * content 422. */
static int am_session_glossary(am_req *req, am_resp *resp, json_t *body, char **gl_txt)
{
    *gl_txt = NULL;
    json_t *gl = json_object_get(body, "glossary");
    if (!gl)
        return AM_OK;
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report rep;
    char *raw = am_json_dump(gl);
    am_gloss_limits lim = am_gloss_limits_default();
    lim.max_entries = (size_t)req->srv->cfg.max_glossary_entries;
    int rc = am_gloss_parse(raw, strlen(raw), AM_GLOSS_JSON, &lim, &g, &rep);
    free(raw);
    if (rc != AM_OK) {
        am_resp_problem(resp, req, am_problem_of_input(rc), "%s", rep.msg);
        am_resp_problem_set(resp, "field", json_string("glossary"));
    } else {
        *gl_txt = am_api_gloss_json(&g);
    }
    am_gloss_cleanup(&g);
    return rc;
}

/* Builds the scorer (the options must make one, and the background
 * vocabulary bg must exist), stores the session with its first glossary
 * version in one transaction (am_store_session_create_gl) and answers 201.
 * Everything is borrowed. */
static void am_session_store(am_req *req, am_resp *resp, char *id, json_t *opts, const char *bg,
                             char *sw_txt, char *gl_txt)
{
    am_buf err;
    am_buf_init(&err);
    am_sessions_pin_defaults(opts); /* zh/ja/ko: TER options stored explicitly */
    char *opts_txt = am_json_dump(opts);
    am_scorer *sc = NULL;
    int rc = AM_OK;
    am_store_vocab_meta bgm;
    memset(&bgm, 0, sizeof bgm);
    const char *field = NULL;
    if (bg) {
        rc = am_store_vocabulary_meta(req->srv->store, bg, &bgm);
        if (rc != AM_OK)
            am_buf_printf(&err,
                          "background vocabulary '%s' does not exist (PUT "
                          "/v1/vocabularies/%s first)",
                          bg, bg);
    }
    if (rc == AM_OK)
        rc = am_sessions_check_options(opts_txt, &err);
    if (rc == AM_OK)
        rc = am_sessions_scorer_in(req->srv->sessions, opts_txt, sw_txt, gl_txt, NULL, &sc, &err);
    /* the vocabulary must be counted as this session tokenizes (schema/012) */
    if (rc == AM_OK && bg)
        rc = am_sessions_vocab_check(bg, &bgm, am_scorer_config(sc), &err, &field);
    am_store_vocab_meta_clear(&bgm);
    if (rc != AM_OK) {
        am_resp_problem(resp, req,
                        strstr(am_buf_str(&err), "unknown option") ? AM_P_UNKNOWN_FIELD
                                                                   : AM_P_INVALID_VALUE,
                        "%s", err.len ? am_buf_str(&err) : am_strerror(rc));
        if (field)
            am_resp_problem_set(resp, "field", json_string(field));
        goto done;
    }
    int64_t now = am_now_ms(), incarnation = 0;
    rc = am_store_session_create_gl(req->srv->store, id, opts_txt, am_scorer_signature(sc), sw_txt,
                                    gl_txt, now, &incarnation);
    if (rc == AM_ERR_CONFLICT) {
        am_resp_problem(resp, req, AM_P_CONFLICT, "a session '%s' exists", id);
        goto done;
    } else if (rc != AM_OK) {
        am_api_store_fail(req, resp, rc, "the session was not stored");
        goto done;
    }
    /* the answer describes what was created (not re-read: a concurrent
     * DELETE may already have removed it) */
    am_store_session row = {.id = id,
                            .options = opts_txt,
                            .signature = am_xstrdup(am_scorer_signature(sc)),
                            .custom_stopwords = sw_txt,
                            .glossary = gl_txt,
                            .glossary_version = gl_txt ? 1 : 0,
                            .created_at = now,
                            .updated_at = now,
                            .segments = 0,
                            .version = gl_txt ? 2 : 1,
                            .incarnation = incarnation};
    char loc[200];
    snprintf(loc, sizeof loc, "/v1/sessions/%s", id);
    am_resp_header(resp, "Location", loc);
    am_resp_json(resp, 201, am_api_session_json(req->srv, &row));
    free(row.signature);
done:
    am_scorer_free(sc);
    am_buf_cleanup(&err);
    free(opts_txt);
}

/* A glossary in the body is parsed and compiled within the session-memory
 * budget, like a glossary PUT (api_glossary.c): *held bytes reserved
 * (0 without a glossary), or 413/503 answered. */
static int am_session_gloss_reserve(am_req *req, am_resp *resp, json_t *body, size_t *held)
{
    *held = 0;
    if (!json_object_get(body, "glossary"))
        return AM_OK;
    size_t est = am_api_gloss_estimate(AM_GLOSS_JSON, req->body_len);
    int rc = am_api_gloss_reserve(req, resp, est);
    if (rc == AM_OK)
        *held = est;
    return rc;
}

void am_api_session_create(am_req *req, am_resp *resp)
{
    json_t *body, *opts = NULL;
    if (am_req_json(req, resp, &body) != AM_OK)
        return;
    char id[130];
    const char *bg = NULL;
    char *sw_txt = NULL, *gl_txt = NULL;
    size_t held = 0;
    if (am_session_known_fields(req, resp, body) == AM_OK &&
        am_session_id(req, resp, body, id, sizeof id) == AM_OK &&
        am_session_options(req, resp, body, &opts) == AM_OK &&
        am_session_service_options(req, resp, opts, &bg) == AM_OK &&
        am_session_stopwords(req, resp, body, opts, &sw_txt) == AM_OK &&
        am_session_gloss_reserve(req, resp, body, &held) == AM_OK &&
        am_session_glossary(req, resp, body, &gl_txt) == AM_OK)
        am_session_store(req, resp, id, opts, bg, sw_txt, gl_txt);
    if (held)
        am_sessions_unreserve(req->srv->sessions, held);
    free(sw_txt);
    free(gl_txt);
    json_decref(opts);
    json_decref(body);
}

void am_api_session_get(am_req *req, am_resp *resp)
{
    am_store_session row;
    memset(&row, 0, sizeof row);
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    am_resp_json(resp, 200, am_api_session_json(req->srv, &row));
    am_store_session_clear(&row);
}

void am_api_session_list(am_req *req, am_resp *resp)
{
    int64_t limit = 50;
    if (am_api_query_int(req, resp, "limit", 1, 1000, &limit) != AM_OK)
        return;
    const char *after = am_req_query(req, "after");
    if (after && !am_http_valid_id(after)) {
        am_resp_problem(resp, req, AM_P_BAD_REQUEST, "'after' must be a session id");
        return;
    }
    am_store_session *rows = NULL;
    size_t n = 0;
    if (am_store_session_list(req->srv->store, after, (size_t)limit + 1, &rows, &n) != AM_OK) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: listing sessions failed");
        return;
    }
    json_t *arr = json_array();
    size_t shown = n > (size_t)limit ? (size_t)limit : n;
    am_session_views memo = {NULL, 0, 0};
    for (size_t i = 0; i < shown; i++)
        json_array_append_new(arr, am_session_json_in(req->srv, &rows[i], &memo));
    am_session_views_clear(&memo);
    json_t *next = n > (size_t)limit ? json_string(rows[shown - 1].id) : json_null();
    for (size_t i = 0; i < n; i++)
        am_store_session_clear(&rows[i]);
    free(rows);
    int64_t total = 0;
    am_store_session_count(req->srv->store, &total);
    am_resp_json(resp, 200,
                 json_pack("{sososI}", "sessions", arr, "next", next, "total", (json_int_t)total));
}

void am_api_session_delete(am_req *req, am_resp *resp)
{
    const char *id = req->params[0];
    int rc = am_store_session_delete(req->srv->store, id);
    if (rc == AM_ERR_NOTFOUND) {
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no session '%s'", id);
        return;
    }
    if (rc != AM_OK) { /* 503 + Retry-After without a synchronous standby */
        am_api_store_fail(req, resp, rc, "deleting failed");
        return;
    }
    am_sessions_forget(req->srv->sessions, id);
    am_acache_drop(req->srv->acache, id); /* no cached answer survives (answer_cache.h) */
    am_events_deleted(req->srv->events, id); /* open event streams end (events.h) */
    resp->status = 204;
}
