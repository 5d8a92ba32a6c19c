/*
 * ingest_ci.c — GET …/metrics?ci=LEVEL: the metrics answer plus a paired
 * bootstrap (sig.c, core/signif.c; docs/metrics.md §5) over the
 * session's segments. Each segment row written since schema/013 carries
 * every system's statistics as a record (ci_stats.h), decoded here with no
 * JSON and no scoring. A row without a valid record (stored before, its
 * result rewritten by a PUT, replay or rescore, or the record damaged or
 * made by another scorer) gives them as before: R0..Rk, R0+1, TER,
 * 1−TERm, term exact match and window overlap from the stored result (the
 * numbers the totals sum), BLEU and chrF n-gram statistics by scoring the
 * stored request again (am_score_segment_text, nothing else); the record
 * holds exactly those numbers, so the answer is the same either way. Such
 * rows are not written back (a GET writes nothing): a rescore or replay
 * leaves them to this path. The statistics are kept between requests
 * (ci_cache.h): a request reads and scores only the segments posted since
 * the last one, unless a rewrite (PUT, DELETE, replay, rescore) happened.
 */
#include "sig.h"
#include "ci_cache.h"
#include "ci_stats.h"
#include "ingest.h"
#include "ingest_ci.h"
#include "jscan.h" /* server/base: a text scanner with no dependency */
#include "server.h"
#include "sessions.h"
#include "store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AM_CI_TRIES 3
/* Rows read a page at a time: 4,096 rows without a record (request and
 * result, a few KB each) stay around 20 MB; with records, about 1 MB. */
#define AM_CI_PAGE 4096

typedef struct am_ci_ctx {
    am_sig_collect *col;
    const char *const *names;
    size_t nsys;
    am_sys_seg *sys; /* [nsys] scratch */
    int k;
    const am_config *cfg;
    am_server *srv;
    struct am_sess *sess; /* the runtime scoring the BLEU/chrF statistics */
    am_score_ws *ws;
    am_budget *bud; /* the request's CPU budget (ingest.h) */
    am_ci_entry *ent; /* the statistics being extended (ci_cache.h) */
    int rc;
    const char *session; /* borrowed */
    size_t rows; /* rows the current page handed over */
    uint64_t sig; /* am_cistats_sig of the session's scorer */
} am_ci_ctx;

static int64_t am_ci_int(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

/* One system's stored segment scores (borrowed) as the statistics the
 * bootstrap needs; a system without a hypothesis on the segment adds 0. */
static void am_ci_sys(const am_ci_ctx *c, const json_t *o, am_sys_seg *g)
{
    memset(g, 0, sizeof *g);
    am_recall_totals_init(&g->recall, c->k);
    if (!o)
        return;
    char key[8];
    for (int k = 0; k <= c->k; k++) {
        snprintf(key, sizeof key, "r%d", k);
        const json_t *r = json_object_get(o, key);
        g->recall.r[k].hits = am_ci_int(r, "hits");
        g->recall.r[k].total = am_ci_int(r, "total");
    }
    const json_t *r01 = json_object_get(o, "r01");
    g->recall.r01.hits = am_ci_int(r01, "hits");
    g->recall.r01.total = am_ci_int(r01, "total");
    g->ter_edits = json_number_value(json_object_get(o, "ter_edits"));
    g->term_edits = json_number_value(json_object_get(o, "term_edits"));
    g->ter_ref_len = (size_t)am_ci_int(o, "ter_ref_len");
    const json_t *t = json_object_get(o, "terms");
    g->terms_totals.instances = (uint64_t)am_ci_int(t, "instances");
    g->terms_totals.exact = (uint64_t)am_ci_int(t, "exact");
    const json_t *wo = json_object_get(t, "window_overlap");
    g->terms_totals.n_windows = c->cfg->nwindows;
    for (size_t w = 0; w < c->cfg->nwindows; w++) {
        snprintf(key, sizeof key, "%d", c->cfg->windows[w]);
        const json_t *x = json_object_get(wo, key);
        uint64_t n = (uint64_t)am_ci_int(x, "instances");
        g->terms_totals.windows[w] = (size_t)c->cfg->windows[w];
        g->terms_totals.win_count[w] = n;
        g->terms_totals.win_sum[w] = n ? json_number_value(json_object_get(x, "score")) * n : 0;
    }
}

/* The BLEU and chrF statistics of a stored request (borrowed) into
 * c->sys. Returns AM_OK or an error (an unreadable request). */
static int am_ci_text_stats(am_ci_ctx *c, const char *request_json)
{
    json_t *body = json_loads(request_json, 0, NULL);
    am_seg_req q;
    am_fail pf;
    am_fail_init(&pf);
    /* stored requests were valid when posted: no limits now */
    int rc = body ? am_seg_req_parse(body, NULL, NULL, &q, &pf) : AM_ERR_INTERNAL;
    if (rc == AM_OK) {
        (void)am_seg_systems(c->sess, &q, 0, &pf); /* named as when posted */
        am_seg_input in = am_seg_req_input(&q);
        am_seg_result res;
        const char *field = NULL;
        rc = am_score_segment_text(c->sess->scorer, c->ws, &in, &res, &field);
        for (size_t k = 0; rc == AM_OK && k < q.nsys; k++)
            for (size_t i = 0; i < c->nsys; i++)
                if (!strcmp(q.sys[k], c->names[i])) {
                    c->sys[i].bleu = res.sys[k].bleu;
                    c->sys[i].chrf = res.sys[k].chrf;
                    c->sys[i].has_bleu = res.sys[k].has_bleu;
                    /* several references: chrF++'s own best reference and
                     * TER's average reference length (not in the stored
                     * result) */
                    c->sys[i].chrfpp = res.sys[k].chrfpp;
                    c->sys[i].chrfpp_own = res.sys[k].chrfpp_own;
                    c->sys[i].ter_avg_ref_len = res.sys[k].ter_avg_ref_len;
                }
        am_seg_req_cleanup(&q);
    }
    am_fail_cleanup(&pf);
    json_decref(body);
    return rc;
}

/* The "scores"."systems" object of a stored result (new reference), or
 * NULL when the text is not JSON. Only that member is parsed when the text
 * is compact (jscan.h): the per-word data and the running totals, most of
 * a result's bytes, are skipped; otherwise the whole result. */
static json_t *am_ci_systems(const char *result_json)
{
    const char *e1 = NULL, *e2 = NULL;
    const char *sc = am_js_member(result_json, "scores", &e1);
    const char *sy = sc ? am_js_member(sc, "systems", &e2) : NULL;
    if (sy && e2 <= e1)
        return json_loadb(sy, (size_t)(e2 - sy), 0, NULL);
    json_t *r = json_loads(result_json, 0, NULL);
    json_t *out = r ? json_object_get(json_object_get(r, "scores"), "systems") : NULL;
    out = out ? json_incref(out) : r ? json_object() : NULL;
    json_decref(r);
    return out;
}

/* The statistics of a row without a usable record, from its stored
 * request and result (borrowed) into c->sys. AM_OK or an error. */
static int am_ci_parse_row(am_ci_ctx *c, const char *request_json, const char *result_json)
{
    json_t *r = am_ci_systems(result_json);
    if (!r)
        return AM_ERR_INTERNAL;
    for (size_t i = 0; i < c->nsys; i++)
        am_ci_sys(c, json_object_get(r, c->names[i]), &c->sys[i]);
    json_decref(r);
    return am_ci_text_stats(c, request_json);
}

/* A row whose record did not decode (damaged, or written by another
 * scorer): its request and result read on their own, then parsed. */
static int am_ci_reread_row(am_ci_ctx *c, int64_t seq)
{
    char *client_id = NULL, *result = NULL, *request = NULL;
    int64_t at = 0;
    int rc = am_store_segment_result(c->srv->store, c->session, seq, &client_id, &result);
    if (rc == AM_OK)
        rc = am_store_segment_get(c->srv->store, c->session, client_id, &at, &request, NULL);
    if (rc == AM_OK && (at != seq || !request || !result))
        rc = AM_ERR_CONFLICT; /* rewritten meanwhile: the stamp check decides */
    if (rc == AM_OK)
        rc = am_ci_parse_row(c, request, result);
    free(client_id);
    free(result);
    free(request);
    return rc;
}

/* One row of the walk (am_store_stats_each_at): its record when it has a
 * valid one, else its request and result as before schema/013. */
static int am_ci_seg(void *ctx, int64_t seq, const char *stats, const char *request_json,
                     const char *result_json)
{
    am_ci_ctx *c = ctx;
    c->rows++;
    if (c->srv->stopping || am_budget_over(c->bud)) {
        c->rc = AM_ERR_CANCELLED;
        return 1;
    }
    int rc = AM_ERR_INVALID;
    if (stats)
        rc = am_cistats_decode_sig(c->sess->scorer, c->sig, stats, c->names, c->nsys, c->sys);
    if (rc != AM_OK)
        rc = request_json && result_json ? am_ci_parse_row(c, request_json, result_json)
                                         : am_ci_reread_row(c, seq);
    if (rc != AM_OK) {
        c->rc = rc;
        return 1;
    }
    am_sig_collect_seg(c->col, c->sys, NULL);
    c->ent->last_seq = seq; /* a whole row added: the entry is a prefix up to seq */
    return 0;
}

int am_ingest_metrics_ci(am_server *srv, const char *session, double conf, json_t **out,
                         int64_t *incarnation, am_fail *f)
{
    return am_ingest_metrics_ci_peer(srv, session, conf, out, incarnation, NULL, f);
}

/* The session's stored options text (caller frees), or NULL. */
static char *am_ci_options(am_server *srv, const char *session)
{
    am_store_session row;
    memset(&row, 0, sizeof row);
    char *o = NULL;
    if (am_store_session_get(srv->store, session, &row) == AM_OK && row.options)
        o = am_xstrdup(row.options);
    am_store_session_clear(&row);
    return o;
}

/* Extends c->ent with the segments after its last seq (all of them for a
 * new entry); a rewrite since the entry was made (the stamp's conflict)
 * empties it first. Returns AM_OK or the walk's error (c->rc: the
 * callback's). */
static int am_ci_extend(am_ci_ctx *c, const char *session, int64_t inc, const char *options)
{
    for (int pass = 0; pass < 2; pass++) {
        int rc = AM_OK;
        do { /* a page at a time: the rows of old segments are large */
            c->rc = AM_OK;
            c->rows = 0;
            c->col = c->ent->col;
            rc = am_store_stats_each_at(c->srv->store, session, c->ent->last_seq, AM_CI_PAGE,
                                        c->ent->stamp, am_ci_seg, c);
            if (c->rc != AM_OK) /* the callback stopped the walk */
                rc = c->rc;
        } while (rc == AM_OK && c->rows == AM_CI_PAGE);
        if (rc != AM_ERR_CONFLICT || pass)
            return rc;
        /* rewritten since the entry was made: start again from nothing */
        am_ci_entry *e = am_ci_entry_new(session, inc, options, c->names, c->nsys, c->sess->scorer);
        am_ci_entry_free(c->ent);
        c->ent = e;
    }
    return AM_ERR_CONFLICT;
}

/* The bootstrap of c->ent's rows for the metrics answer base (borrowed):
 * the "confidence" object, or JSON null (no segment); NULL when cancelled. */
static json_t *am_ci_run(am_ci_ctx *c, json_t *base, double conf)
{
    am_sig_opts o;
    am_sig_opts_init(&o);
    o.conf = conf;
    o.baseline = json_string_value(json_object_get(base, "baseline_system"));
    o.no_p = !o.baseline || !json_object_get(json_object_get(base, "systems"), o.baseline);
    if (o.no_p)
        o.baseline = NULL;
    o.cancel = &c->bud->cancel;
    json_t *s = am_sig_run(c->ent->col, &o, c->names, NULL);
    if (s)
        return s;
    return c->bud->cancel.hit ? NULL : json_null();
}

/* Complexity: one attempt per pass of the loop (the session may change
 * between the totals and the walk); the failure answers at its end. */
int am_ingest_metrics_ci_peer(am_server *srv, const char *session, double conf, json_t **out,
                              int64_t *incarnation, am_peer *peer, am_fail *f)
{
    *out = NULL;
    for (int attempt = 0; attempt < AM_CI_TRIES; attempt++) {
        json_t *base = NULL;
        int64_t inc = 0;
        int rc = am_ingest_metrics(srv, session, &base, &inc, f);
        if (rc != AM_OK)
            return rc;
        am_sess *sess = NULL;
        rc = am_ingest_acquire(srv, session, &sess, f);
        if (rc != AM_OK) {
            json_decref(base);
            return rc;
        }
        const char *names[AM_SCORE_MAX_SYSTEMS];
        size_t nsys = 0;
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(base, "systems"), name, v)
        {
            if (nsys < AM_SCORE_MAX_SYSTEMS)
                names[nsys++] = name;
        }
        am_budget bud;
        am_budget_start(&bud, srv);
        if (peer)
            am_peer_chain(peer, &bud.cancel); /* stops too when the client has gone */
        am_ci_ctx c = {NULL,    names, nsys, NULL, 0,    am_scorer_config(sess->scorer),
                       srv,     sess,  NULL, &bud, NULL, AM_OK,
                       session, 0,     0};
        c.k = c.cfg->k;
        c.sig = am_cistats_sig(sess->scorer);
        c.ws = am_score_ws_new();
        am_score_ws_set_cancel(c.ws, &bud.cancel);
        c.sys = am_xcalloc(nsys ? nsys : 1, sizeof *c.sys);
        char *options = am_ci_options(srv, session);
        c.ent = am_cicache_take(srv->cicache, session);
        if (c.ent && !am_ci_entry_fits(c.ent, inc, options, names, nsys, sess->scorer)) {
            am_ci_entry_free(c.ent);
            c.ent = NULL;
        }
        if (!c.ent)
            c.ent = am_ci_entry_new(session, inc, options, names, nsys, sess->scorer);
        rc = nsys ? am_ci_extend(&c, session, inc, options) : AM_OK;
        /* the segments must be those of the totals' version */
        am_store_session row;
        memset(&row, 0, sizeof row);
        int same = rc == AM_OK && am_store_session_get(srv->store, session, &row) == AM_OK &&
                   row.incarnation == inc &&
                   row.version == (int64_t)json_integer_value(json_object_get(base, "version"));
        am_store_session_clear(&row);
        json_t *ci = json_null();
        if (same && nsys) {
            json_decref(ci);
            ci = am_ci_run(&c, base, conf);
            if (!ci) {
                rc = AM_ERR_CANCELLED;
                ci = json_null();
            }
        }
        if (same)
            json_object_set_new(base, "confidence", ci);
        else
            json_decref(ci);
        /* what was read stays valid after a stop or a change: a prefix of
         * the session's segments at the entry's stamp */
        if (rc == AM_OK || rc == AM_ERR_CANCELLED)
            am_cicache_put(srv->cicache, c.ent);
        else
            am_ci_entry_free(c.ent);
        free(options);
        free(c.sys);
        am_score_ws_free(c.ws);
        am_sessions_release(srv->sessions, sess);
        if (rc == AM_ERR_CANCELLED && peer && peer->gone) {
            /* nobody reads this answer; the access log says why it ended */
            json_decref(base);
            am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                     "the client closed its connection: the computation was abandoned and "
                     "nothing was stored");
            return AM_ERR_CANCELLED;
        }
        if (rc == AM_ERR_CANCELLED) {
            /* as every request over its budget */
            json_decref(base);
            return am_fail_cancelled(f, srv, srv->stopping || atomic_load(&srv->abandon));
        }
        if (rc != AM_OK) {
            json_decref(base);
            am_failp(f, AM_P_INTERNAL, NULL,
                     "storage error: reading or scoring the stored segments failed");
            return AM_ERR_INTERNAL;
        }
        if (same) {
            *out = base;
            if (incarnation)
                *incarnation = inc;
            return AM_OK;
        }
        json_decref(base);
    }
    f->retry_after = 1;
    am_failp(f, AM_P_UNAVAILABLE, NULL, "the session kept changing; retry");
    return AM_ERR_CONFLICT;
}
