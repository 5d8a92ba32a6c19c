/* api_vocab.c — PUT/GET/DELETE /v1/vocabularies/{name}: background
 * vocabularies ("count word" lines, or a TMX memory whose target-language
 * side is counted) for the novel-word variant. */
#include "api.h"

#include "json.h"
#include "lang.h"
#include "recall.h"
#include "vocab.h"
#include "xliff.h"

#include <stdlib.h>
#include <string.h>

/* am_xliff_tmx_counts_src over the request body with the models rcfg's
 * tokenizer needs (MeCab for a ja side, friso for zh, loaded for this count only: the
 * words must be the ones recall makes). */
static int am_vocab_tmx_counts(const am_req *req, const char *src, const char *lang,
                               am_recall_config *rcfg, am_vocab *v, char **chosen,
                               am_xliff_report *rep)
{
    am_recall_models models;
    am_buf why;
    am_buf_init(&why);
    int rc = am_recall_models_open(rcfg, &models, &why);
    if (rc == AM_OK) {
        rc = am_xliff_tmx_counts_src(req->body, req->body_len, src, lang, rcfg, v, chosen, NULL,
                                     rep);
    } else {
        rep->line = 0;
        snprintf(rep->msg, sizeof rep->msg, "tokenizer %s: %s", am_tok_name(rcfg->tokenizer),
                 am_buf_str(&why));
    }
    rcfg->tok_ctx = NULL;
    am_recall_models_close(&models);
    am_buf_cleanup(&why);
    return rc;
}

/* Sets option key of cfg from query parameter q (absent or empty:
 * untouched). Returns 0, or -1 with the 422 answered. */
static int am_vocab_query_opt(am_req *req, am_resp *resp, am_config *cfg, const char *q,
                              const char *key, const char *what)
{
    const char *v = am_req_query(req, q);
    if (!v || !*v)
        return 0;
    am_buf err;
    am_buf_init(&err);
    if (am_config_set(cfg, key, v, &err) == AM_OK) {
        am_buf_cleanup(&err);
        return 0;
    }
    am_resp_problem(resp, req, AM_P_INVALID_VALUE, "'%s' must be %s%s%s", q, what,
                    err.len ? ": " : "", am_buf_str(&err));
    am_resp_problem_set(resp, "field", json_string(q));
    am_buf_cleanup(&err);
    return -1;
}

/* Counts the TMX body into v as a session with default options in the
 * counted language would (or with ?tokenizer=), checking ?source_lang=
 * against the memory; meta gets the tokenizer and languages (owned).
 * Returns AM_OK or an error with rep filled; *answered is set when a query
 * parameter was refused (the 422 is answered). */
static int am_vocab_tmx(am_req *req, am_resp *resp, am_vocab *v, am_store_vocab_meta *meta,
                        am_xliff_report *rep, int *answered)
{
    *answered = 0;
    am_config cfg;
    am_config_init(&cfg);
    const char *ql = am_req_query(req, "lang");
    const char *qs = am_req_query(req, "source_lang");
    if (am_vocab_query_opt(req, resp, &cfg, "lang", "target_lang",
                           "a language code such as \"fr\" or \"fr-FR\"") ||
        am_vocab_query_opt(req, resp, &cfg, "source_lang", "source_lang",
                           "a language code such as \"en\"") ||
        am_vocab_query_opt(req, resp, &cfg, "tokenizer", "tokenizer", "a recall tokenizer")) {
        *answered = 1;
        return AM_ERR_INVALID;
    }
    am_recall_config rcfg;
    am_xliff_tmx_rcfg(&cfg, &rcfg);
    const char *src = qs && *qs ? qs : NULL;
    char *lang = NULL;
    int rc = am_vocab_tmx_counts(req, src, ql, &rcfg, v, &lang, rep);
    if (rc == AM_OK && !(ql && *ql) && am_config_set(&cfg, "target_lang", lang, NULL) == AM_OK) {
        /* the side was chosen from the memory: count again tokenized for
         * that language */
        am_xliff_tmx_rcfg(&cfg, &rcfg);
        am_vocab_clear(v);
        rc = am_vocab_tmx_counts(req, src, lang, &rcfg, v, NULL, rep);
    }
    if (rc == AM_OK) {
        meta->tokenizer = am_xstrdup(am_tok_name(rcfg.tokenizer));
        meta->lang = lang;
        meta->source_lang = src ? am_xstrdup(src) : NULL;
    } else {
        free(lang);
    }
    return rc;
}

/* The vocabulary's JSON (name, words, what it was counted with). */
static json_t *am_vocab_json(const char *name, int64_t words, const am_store_vocab_meta *m)
{
    json_t *out = json_pack("{sssI}", "name", name, "words", (json_int_t)words);
    if (m->tokenizer)
        json_object_set_new(out, "tokenizer", json_string(m->tokenizer));
    if (m->lang)
        json_object_set_new(out, "lang", json_string(m->lang));
    if (m->source_lang)
        json_object_set_new(out, "source_lang", json_string(m->source_lang));
    return out;
}

void am_api_vocab_put(am_req *req, am_resp *resp)
{
    const char *ct = req->content_type;
    int tmx = ct && (!strcmp(ct, "application/x-tmx+xml") || !strcmp(ct, "application/tmx+xml"));
    if (!ct || (strcmp(ct, "text/plain") && !tmx)) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "a vocabulary is text/plain (one 'count word' line per word) or a TMX "
                        "memory (application/x-tmx+xml)");
        return;
    }
    am_vocab *v = am_vocab_new();
    am_store_vocab_meta meta;
    memset(&meta, 0, sizeof meta);
    size_t line = 0;
    const char *msg = NULL;
    am_xliff_report rep;
    int rc;
    if (tmx) {
        int answered;
        rc = am_vocab_tmx(req, resp, v, &meta, &rep, &answered);
        if (answered) {
            am_vocab_free(v);
            return;
        }
        line = rep.line;
        msg = rep.msg;
    } else {
        /* a count list: the uploader's words, no tokenizer recorded */
        rc = am_vocab_parse_counts(req->body, req->body_len, v, &line, &msg);
    }
    if (rc != AM_OK) {
        am_resp_problem(resp, req, am_problem_of_input(rc), "line %zu: %s", line,
                        msg ? msg : am_strerror(rc));
        am_resp_problem_set(resp, "line", json_integer((json_int_t)line));
        am_vocab_free(v);
        am_store_vocab_meta_clear(&meta);
        return;
    }
    size_t n = am_vocab_count(v);
    const char **words = am_xcalloc(n ? n : 1, sizeof *words);
    int64_t *counts = am_xcalloc(n ? n : 1, sizeof *counts);
    size_t it = 0, i = 0;
    const char *k;
    int64_t c;
    while (am_vocab_next(v, &it, &k, &c) && i < n) {
        words[i] = k;
        counts[i++] = c;
    }
    int64_t w0, created;
    int existed = am_store_vocabulary_info(req->srv->store, req->params[0], &w0, &created) == AM_OK;
    rc = am_store_vocabulary_put_meta(req->srv->store, req->params[0], words, counts, i,
                                      am_now_ms(), &meta);
    free(words);
    free(counts);
    am_vocab_free(v);
    if (rc != AM_OK) {
        am_api_store_fail(req, resp, rc, "the vocabulary was not stored");
    } else {
        am_resp_json(resp, existed ? 200 : 201, am_vocab_json(req->params[0], (int64_t)i, &meta));
    }
    am_store_vocab_meta_clear(&meta);
}

void am_api_vocab_get(am_req *req, am_resp *resp)
{
    am_store_vocab_meta m;
    int rc = am_store_vocabulary_meta(req->srv->store, req->params[0], &m);
    if (rc == AM_ERR_NOTFOUND) {
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no vocabulary '%s'", req->params[0]);
    } else if (rc != AM_OK) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading failed");
    } else {
        json_t *out = am_vocab_json(req->params[0], m.words, &m);
        json_object_set_new(out, "created_at", am_json_time(m.created_at));
        am_resp_json(resp, 200, out);
    }
    am_store_vocab_meta_clear(&m);
}

void am_api_vocab_delete(am_req *req, am_resp *resp)
{
    int rc = am_store_vocabulary_delete(req->srv->store, req->params[0]);
    if (rc == AM_ERR_NOTFOUND)
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no vocabulary '%s'", req->params[0]);
    else if (rc != AM_OK) /* 503 + Retry-After without a synchronous standby */
        am_api_store_fail(req, resp, rc, "deleting failed");
    else
        resp->status = 204;
}
