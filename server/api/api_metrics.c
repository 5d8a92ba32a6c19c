/* api_metrics.c — GET …/metrics (with a strong ETag "<id>-<incarnation>-<version>":
 * a deleted and re-created session never matches an old one; with ?ci=LEVEL
 * the ETag ends "-ci<LEVEL>" and the answer carries "confidence") and
 * GET …/vocabulary/{word}. */
#include "api.h"

#include "answer_cache.h"
#include "ingest.h"
#include "ingest_ci.h"
#include "json.h"
#include "sessions.h"
#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ?ci=LEVEL: 0 < LEVEL < 1, at most 6 characters ("0.95"). Returns 0 (none
 * or valid: *conf, *suffix "-ci<LEVEL>") or answers 400 and returns -1. */
static int am_metrics_ci(am_req *req, am_resp *resp, double *conf, char *suffix, size_t n)
{
    const char *v = am_req_query(req, "ci");
    *conf = 0;
    suffix[0] = '\0';
    if (!v)
        return 0;
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !(x > 0 && x < 1) || strlen(v) > 6 ||
        strspn(v, "0123456789.") != strlen(v)) {
        am_resp_problem(resp, req, AM_P_BAD_REQUEST,
                        "'ci' must be a confidence level between 0 and 1, e.g. 0.95");
        return -1;
    }
    *conf = x;
    /* one spelling per level (".95", "0.950" are 0.95): one ETag, one cache entry */
    snprintf(suffix, n, "-ci%.6g", x);
    return 0;
}

void am_api_metrics(am_req *req, am_resp *resp)
{
    double conf;
    char sfx[16];
    if (am_metrics_ci(req, resp, &conf, sfx, sizeof sfx))
        return;
    char ckey[300]; /* the answer cache's key: the id, and the level */
    snprintf(ckey, sizeof ckey, "%s%s", req->params[0], sfx);
    am_acache *cache = req->srv->acache;
    uint64_t ticket = cache ? am_acache_ticket(cache) : 0; /* before the session is read */
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    char etag[200];
    int64_t version = row.version, incarnation = row.incarnation;
    snprintf(etag, sizeof etag, "\"%s-%lld-%lld%s\"", row.id, (long long)incarnation,
             (long long)version, sfx);
    am_store_session_clear(&row);
    am_resp_header(resp, "ETag", etag);
    am_resp_header(resp, "Cache-Control", "no-cache");
    if (am_api_etag_matches(am_req_header(req, "If-None-Match"), etag)) {
        resp->status = 304;
        return;
    }
    /* the finished body for exactly this version, if cached (answer_cache.h) */
    char *cached = NULL;
    size_t clen = 0;
    if (cache && am_acache_get(cache, ckey, incarnation, version, &cached, &clen) == AM_OK) {
        am_resp_take(resp, 200, "application/json", cached, clen);
        return;
    }
    am_fail f;
    am_fail_init(&f);
    json_t *out = NULL;
    int64_t inc2 = 0;
    /* the bootstrap (seconds on a long session) stops when its client has gone */
    am_peer peer;
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    int rc = conf > 0
                 ? am_ingest_metrics_ci_peer(req->srv, req->params[0], conf, &out, &inc2, &peer, &f)
                 : am_ingest_metrics(req->srv, req->params[0], &out, &inc2, &f);
    if (rc == AM_OK) {
        /* the version and incarnation read with the totals decide the ETag */
        json_int_t v = json_integer_value(json_object_get(out, "version"));
        char et2[200];
        snprintf(et2, sizeof et2, "\"%s-%lld-%lld%s\"", req->params[0], (long long)inc2,
                 (long long)v, sfx);
        if (strcmp(et2, etag))
            am_resp_header(resp, "ETag", et2); /* replaces the first one */
        am_resp_json(resp, 200, out);
        if (cache && resp->status == 200 && resp->body)
            (void)am_acache_put(cache, ticket, ckey, inc2, (int64_t)v, resp->body, resp->body_len);
    } else {
        am_resp_headers_clear(resp);
        am_api_fail(req, resp, &f);
    }
    am_fail_cleanup(&f);
}

typedef struct am_word_ctx {
    am_server *srv;
    const char *session;
    const char *word;
    json_t *arr;
} am_word_ctx;

static int am_word_seq(void *ctx, int64_t seq)
{
    am_word_ctx *c = ctx;
    char *cid = NULL, *res = NULL;
    if (am_store_segment_result(c->srv->store, c->session, seq, &cid, &res) != AM_OK)
        return 0;
    json_t *r = json_loads(res, 0, NULL);
    json_t *words = json_object_get(json_object_get(r, "scores"), "words");
    json_t *item = json_pack("{sIss}", "seq", (json_int_t)seq, "id", cid);
    for (size_t i = 0; i < json_array_size(words); i++) {
        json_t *w = json_array_get(words, i);
        if (!strcmp(json_string_value(json_object_get(w, "word"))
                        ? json_string_value(json_object_get(w, "word"))
                        : "",
                    c->word)) {
            json_object_set(item, "shot", json_object_get(w, "shot"));
            json_object_set(item, "hits", json_object_get(w, "hits"));
            break;
        }
    }
    json_array_append_new(c->arr, item);
    json_decref(r);
    free(cid);
    free(res);
    return 0;
}

void am_api_word(am_req *req, am_resp *resp)
{
    am_sess *sess = NULL;
    /* a runtime of the current incarnation (its normalization options) */
    int rc = am_api_acquire(req, resp, &sess);
    if (rc != AM_OK)
        return;
    am_buf err;
    am_buf_init(&err);
    /* the word is normalized as the session normalizes content words */
    const am_config *cfg = am_scorer_config(sess->scorer);
    am_buf norm;
    am_buf_init(&norm);
    if (cfg->profile == AM_PROFILE_STANDARD)
        rc = am_text_normalize(req->params[1], cfg->norm, !cfg->case_sensitive, &norm);
    else
        am_buf_appends(&norm, req->params[1]);
    am_sessions_release(req->srv->sessions, sess);
    if (rc != AM_OK) {
        am_resp_problem(resp, req, AM_P_NOT_FOUND, "not a valid word");
        goto done;
    }
    am_word_ctx c = {req->srv, req->params[0], am_buf_str(&norm), json_array()};
    int64_t occ = 0;
    rc = am_store_word_history(req->srv->store, req->params[0], c.word, &occ, am_word_seq, &c);
    if (rc == AM_ERR_NOTFOUND) {
        json_decref(c.arr);
        am_resp_problem(resp, req, AM_P_NOT_FOUND,
                        "'%s' (normalized '%s') does not occur in a confirmed translation of '%s'",
                        req->params[1], c.word, req->params[0]);
    } else if (rc != AM_OK) {
        json_decref(c.arr);
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading the history failed");
    } else {
        am_resp_json(resp, 200,
                     json_pack("{sssssssIso}", "session", req->params[0], "word", req->params[1],
                               "normalized", c.word, "occurrences", (json_int_t)occ, "history",
                               c.arr));
    }
done:
    am_buf_cleanup(&norm);
    am_buf_cleanup(&err);
}
