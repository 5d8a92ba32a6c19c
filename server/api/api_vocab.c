/* api_vocab.c — PUT/GET/DELETE /v1/vocabularies/{name}: background
 * vocabularies ("count word" lines, or a TMX memory whose target-language
 * side is counted) for the novel-word variant. */
#include "api.h"

#include "json.h"
#include "recall.h"
#include "vocab.h"
#include "xliff.h"

#include <stdlib.h>
#include <string.h>

/* am_xliff_tmx_counts over the request body with the models rcfg's
 * tokenizer needs (MeCab for a ja side, friso for zh, loaded for this count only: the
 * words must be the ones recall makes). */
static int am_vocab_tmx_counts(const am_req *req, const char *lang, am_recall_config *rcfg,
                               am_vocab *v, char **chosen, am_xliff_report *rep)
{
    am_recall_models models;
    am_buf why;
    am_buf_init(&why);
    int rc = am_recall_models_open(rcfg, &models, &why);
    if (rc == AM_OK) {
        rc = am_xliff_tmx_counts(req->body, req->body_len, lang, rcfg, v, chosen, NULL, rep);
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
    size_t line = 0;
    const char *msg = NULL;
    char *lang = NULL;
    am_xliff_report rep;
    int rc;
    if (tmx) {
        /* counted as a session with default options in that language would */
        am_config cfg;
        am_config_init(&cfg);
        const char *ql = am_req_query(req, "lang");
        if (ql && *ql && am_config_set(&cfg, "target_lang", ql, NULL) != AM_OK) {
            am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                            "'lang' must be a language code such as \"fr\" or \"fr-FR\"");
            am_resp_problem_set(resp, "field", json_string("lang"));
            am_vocab_free(v);
            return;
        }
        am_recall_config rcfg;
        am_xliff_tmx_rcfg(&cfg, &rcfg);
        rc = am_vocab_tmx_counts(req, ql, &rcfg, v, &lang, &rep);
        if (rc == AM_OK && !(ql && *ql)) {
            /* the side was chosen from the memory: count again tokenized
             * for that language */
            if (am_config_set(&cfg, "target_lang", lang, NULL) == AM_OK) {
                am_xliff_tmx_rcfg(&cfg, &rcfg);
                am_vocab_clear(v);
                rc = am_vocab_tmx_counts(req, lang, &rcfg, v, NULL, &rep);
            }
        }
        line = rep.line;
        msg = rep.msg;
    } else {
        rc = am_vocab_parse_counts(req->body, req->body_len, v, &line, &msg);
    }
    if (rc != AM_OK) {
        am_resp_problem(resp, req, am_problem_of_input(rc), "line %zu: %s", line,
                        msg ? msg : am_strerror(rc));
        am_resp_problem_set(resp, "line", json_integer((json_int_t)line));
        am_vocab_free(v);
        free(lang);
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
    rc = am_store_vocabulary_put(req->srv->store, req->params[0], words, counts, i, am_now_ms());
    free(words);
    free(counts);
    am_vocab_free(v);
    if (rc != AM_OK) {
        am_api_store_fail(req, resp, rc, "the vocabulary was not stored");
        return;
    }
    json_t *out = json_pack("{sssI}", "name", req->params[0], "words", (json_int_t)i);
    if (lang)
        json_object_set_new(out, "lang", json_string(lang));
    free(lang);
    am_resp_json(resp, existed ? 200 : 201, out);
}

void am_api_vocab_get(am_req *req, am_resp *resp)
{
    int64_t words, created;
    int rc = am_store_vocabulary_info(req->srv->store, req->params[0], &words, &created);
    if (rc == AM_ERR_NOTFOUND) {
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no vocabulary '%s'", req->params[0]);
        return;
    }
    if (rc != AM_OK) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading failed");
        return;
    }
    am_resp_json(resp, 200,
                 json_pack("{sssIso}", "name", req->params[0], "words", (json_int_t)words,
                           "created_at", am_json_time(created)));
}

void am_api_vocab_delete(am_req *req, am_resp *resp)
{
    int rc = am_store_vocabulary_delete(req->srv->store, req->params[0]);
    if (rc == AM_ERR_NOTFOUND)
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "no vocabulary '%s'", req->params[0]);
    else if (rc != AM_OK)
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: deleting failed");
    else
        resp->status = 204;
}
