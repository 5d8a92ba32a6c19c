/*
 * score_run.c — the scoring step of `adaptmon score`: the scorer, the
 * sessions in order, and the thread pool.
 *
 * am_cli_score_run builds the scorer, scores every session (on several
 * threads when no per-segment output is asked for, else through
 * score_sess.c), runs the significance tests and writes the results through
 * score_out.c. The threaded path splits each segment's work into the part
 * that needs no history (done by the pool) and the recall pass (done in
 * order by the calling thread), so its totals are bit-identical to the
 * sequential path's.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "score_int.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- multi-threaded scoring ------------------------------------------------
 * Without per-segment output a session is scored in chunks: a pool of
 * threads (one per core) runs the order-independent part of every segment
 * of a chunk (am_score_segment_rest: terms, TER/TERm, BLEU, chrF), then
 * the calling thread runs the recall pass of the chunk's segments in
 * order against the history and adds each segment to the totals in order,
 * so the totals are bit-identical to am_cli_session's. */

#define AM_CLI_CHUNK 2048
#define AM_CLI_MAX_THREADS 64

typedef struct am_cli_par {
    const am_cli *c;
    const am_scorer *s;
    const am_cli_seg *segs; /* the chunk */
    size_t n;
    am_sys_seg *out; /* [n * nhyp] */
    int *err; /* [n]: am_err of the segment */
    const char **field; /* [n] */
    pthread_mutex_t mu;
    size_t next; /* guarded by mu: next segment to take */
} am_cli_par;

typedef struct am_cli_worker {
    am_cli_par *p;
    am_score_ws *ws; /* owned by the worker's slot, reused across chunks */
} am_cli_worker;

static void *am_cli_work(void *arg)
{
    am_cli_worker *w = arg;
    am_cli_par *p = w->p;
    const am_cli *c = p->c;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next;
        p->next += 16;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            break;
        size_t end = i + 16 < p->n ? i + 16 : p->n;
        for (; i < end; i++) {
            const am_cli_seg *sg = &p->segs[i];
            am_cli_annots an;
            am_seg_input in = am_cli_seg_input(c, sg, &an);
            am_seg_result res;
            p->field[i] = NULL;
            p->err[i] = am_score_segment_rest(p->s, w->ws, &in, &res, &p->field[i]);
            am_cli_annots_free(&an);
            if (p->err[i] == AM_OK)
                for (size_t k = 0; k < c->nhyp; k++) {
                    p->out[i * c->nhyp + k] = res.sys[k];
                    p->out[i * c->nhyp + k].terms = NULL; /* points into ws */
                }
        }
    }
    return NULL;
}

/* Number of scoring threads: the cores this process may run on (its CPU
 * affinity, so `taskset -c 0` scores on one thread), at most
 * AM_CLI_MAX_THREADS. */
static size_t am_cli_nthreads(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > AM_CLI_MAX_THREADS ? AM_CLI_MAX_THREADS : (size_t)n;
}

/* Starts the workers on chunk p (threads 1..nthreads-1); returns how many
 * were started. */
static size_t am_cli_start(am_cli_par *p, am_cli_worker *w, pthread_t *tid, size_t nthreads)
{
    size_t started = 0;
    for (size_t t = 1; t < nthreads; t++) {
        w[t].p = p;
        if (pthread_create(&tid[t], NULL, am_cli_work, &w[t]) != 0)
            break;
        started++;
    }
    return started;
}

/* am_cli_session without per-segment output, on nthreads threads (the
 * calling thread included). Pipelined: while the workers score chunk k+1,
 * the calling thread runs chunk k's recall pass, then joins them. */
static int am_cli_session_par(const am_cli *c, const am_scorer *s, am_score_ws *ws,
                              const am_cli_seg *segs, size_t n, am_totals *totals, size_t nthreads)
{
    am_vocab *hist = am_vocab_new();
    if (c->sigc)
        am_sig_collect_session(c->sigc);
    size_t cap = n == 0 ? 1 : n < AM_CLI_CHUNK ? n : AM_CLI_CHUNK;
    am_cli_par p[2];
    for (int b = 0; b < 2; b++) {
        memset(&p[b], 0, sizeof p[b]);
        p[b].c = c;
        p[b].s = s;
        p[b].out = am_xcalloc(cap * c->nhyp + 1, sizeof *p[b].out);
        p[b].err = am_xcalloc(cap + 1, sizeof *p[b].err);
        p[b].field = am_xcalloc(cap + 1, sizeof *p[b].field);
        pthread_mutex_init(&p[b].mu, NULL);
    }
    am_cli_worker w[AM_CLI_MAX_THREADS];
    pthread_t tid[AM_CLI_MAX_THREADS];
    am_cli_worker self = {NULL, am_score_ws_new()};
    for (size_t t = 1; t < nthreads; t++)
        w[t].ws = am_score_ws_new();
    size_t nchunks = (n + cap - 1) / cap;
    int rc = 0;
    /* chunk 0: everyone scores it */
    size_t started = 0;
    if (nchunks > 0) {
        p[0].segs = segs;
        p[0].n = n < cap ? n : cap;
        started = am_cli_start(&p[0], w, tid, nthreads);
        self.p = &p[0];
        am_cli_work(&self);
        for (size_t t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
    }
    for (size_t k = 0; k < nchunks; k++) {
        am_cli_par *cur = &p[k % 2], *nx = &p[(k + 1) % 2];
        started = 0;
        if (k + 1 < nchunks && rc == 0) {
            size_t first = (k + 1) * cap;
            nx->segs = segs + first;
            nx->n = n - first < cap ? n - first : cap;
            nx->next = 0;
            started = am_cli_start(nx, w, tid, nthreads);
        }
        /* in order: recall against the history, then the totals */
        for (size_t i = 0; i < cur->n && rc == 0; i++) {
            const am_cli_seg *sg = &cur->segs[i];
            am_seg_input in = {
                .source = sg->src, .translation = sg->ref, .hyps = sg->hyp, .nsys = c->nhyp};
            const am_recall_seg *rec = NULL;
            const char *field = cur->field[i];
            int r = cur->err[i];
            if (r == AM_OK)
                r = am_score_segment_recall(s, ws, &in, am_cli_history_lookup, hist, &rec, &field);
            if (r != AM_OK) {
                fprintf(c->err, "adaptmon score: segment %s: %s%s%s\n", sg->id, am_strerror(r),
                        field ? " in " : "", field ? field : "");
                rc = 1;
                break;
            }
            am_recall_seg_commit(rec, hist);
            for (size_t j = 0; j < c->nhyp; j++) {
                am_sys_seg *sy = &cur->out[i * c->nhyp + j];
                sy->recall = rec->sys[j];
                am_totals_add(&totals[j], sy);
            }
            if (c->sigc)
                am_sig_collect_seg(c->sigc, &cur->out[i * c->nhyp], rec);
        }
        if (k + 1 < nchunks && rc == 0) {
            self.p = nx;
            am_cli_work(&self);
        }
        for (size_t t = 1; t <= started; t++)
            pthread_join(tid[t], NULL);
    }
    for (size_t t = 1; t < nthreads; t++)
        am_score_ws_free(w[t].ws);
    am_score_ws_free(self.ws);
    for (int b = 0; b < 2; b++) {
        pthread_mutex_destroy(&p[b].mu);
        free(p[b].out);
        free(p[b].err);
        free(p[b].field);
    }
    am_vocab_free(hist);
    return rc;
}

/* Prints on err what the languages given cannot fit (am_config_warnings),
 * as session creation answers them: never a silent language (issue 24). */
static void am_cli_lang_warnings(FILE *err, const am_config *cfg)
{
    unsigned bits = am_config_warnings(cfg);
    if (bits & AM_WARN_NO_TARGET_LANG)
        fprintf(err, "adaptmon score: warning: no --target-lang: recall and terms use no "
                     "stopwords (every word is a content word) and the intl tokenizer; "
                     "give --target-lang (the signature says |warn:no-target-lang)\n");
    if (bits & AM_WARN_TARGET_LANG)
        fprintf(err,
                "adaptmon score: warning: --target-lang '%s' is not an ISO 639 language code: "
                "the tokenizer (%s) is a guess and no stopword list applies (the signature says "
                "|warn:…unknown-target-lang)\n",
                cfg->target_lang, am_tok_name(am_config_tokenizer(cfg)));
    else if (bits & AM_WARN_NO_STOPWORDS)
        fprintf(err,
                "adaptmon score: warning: no stopword list for --target-lang '%s': every word "
                "counts as a content word (give --stopwords-file, or --stopwords none to make it "
                "a choice)\n",
                cfg->target_lang);
    if (bits & AM_WARN_SOURCE_LANG)
        fprintf(err,
                "adaptmon score: warning: --source-lang '%s' is not an ISO 639 language code: "
                "glossary terms in the source are tokenized by a guess\n",
                cfg->source_lang);
}

/* The scorer of the run (as session creation: an option the profile cannot
 * honour is an error). Returns 0, 1 or 2 after printing an error. */
int am_cli_new_scorer(const am_cli *c, am_cli_run *r)
{
    am_buf err;
    am_buf_init(&err);
    const char *const *cw = (const char *const *)r->custom_sw.v;
    int e = am_config_check_profile(&c->cfg, &err);
    if (e == AM_OK)
        e = am_scorer_new(&c->cfg, cw, r->custom_sw.n, c->glossary_path ? &r->gloss : NULL,
                          r->background, &r->scorer, &err);
    if (e != AM_OK)
        fprintf(c->err, "adaptmon score: %s\n", err.len ? am_buf_str(&err) : am_strerror(e));
    else
        am_cli_lang_warnings(c->err, am_scorer_config(r->scorer));
    am_buf_cleanup(&err);
    return e == AM_OK ? 0 : e == AM_ERR_INVALID ? 2 : 1;
}

/* Scores every session in order into r->totals (and r->doc_totals with
 * --by-doc). Segments go to the sink; without any per-segment consumer a
 * session is scored on several threads. Returns 0 or 1. */
static int am_cli_score_sessions(const am_cli *c, am_cli_run *r, am_cli_sink *sink)
{
    r->ws = am_score_ws_new();
    r->totals = am_xcalloc(c->nhyp, sizeof *r->totals);
    for (size_t i = 0; i < c->nhyp; i++)
        am_totals_init(&r->totals[i], r->scorer);
    if (c->by_doc)
        r->doc_totals = am_xcalloc(r->nsess * c->nhyp + 1, sizeof *r->doc_totals);
    int seq = !sink->jsegs && !sink->segrep && !sink->plot && am_cli_nthreads() >= 2;
    am_totals *dt = am_xcalloc(c->nhyp, sizeof *dt);
    int rc = 0;
    for (size_t d = 0; d < r->nsess && rc == 0; d++) {
        for (size_t i = 0; i < c->nhyp; i++)
            am_totals_init(&dt[i], r->scorer);
        const am_cli_seg *segs = r->segs + r->sess_first[d];
        sink->base = r->totals;
        rc =
            seq ? am_cli_session_par(c, r->scorer, r->ws, segs, r->sess_n[d], dt, am_cli_nthreads())
                : am_cli_session(c, r->scorer, r->ws, segs, r->sess_n[d], dt, sink);
        for (size_t i = 0; i < c->nhyp && rc == 0; i++)
            am_totals_merge(&r->totals[i], &dt[i]);
        if (r->doc_totals && rc == 0)
            memcpy(&r->doc_totals[d * c->nhyp], dt, c->nhyp * sizeof *dt);
    }
    free(dt);
    return rc;
}

/* Scores the loaded input and prints the results. Returns the exit status. */
int am_cli_score_run(am_cli *c, am_cli_run *r)
{
    int rc = am_cli_new_scorer(c, r);
    if (rc)
        return rc;
    am_cli_sink sink;
    memset(&sink, 0, sizeof sink);
    am_report segrep;
    am_report_init(&segrep);
    am_cli_plot plot;
    am_cli_plot_init(&plot, c->nhyp, (size_t)c->plot_window, c->plot_ci);
    if (c->per_segment && c->format == AM_RP_JSON)
        sink.jsegs = json_array();
    else if (c->per_segment)
        sink.segrep = &segrep;
    if (sink.segrep)
        am_cli_report_segment_columns(sink.segrep);
    if (c->plot_path)
        sink.plot = &plot;
    /* the collector borrows the scorer: freed here, before am_cli_run_free */
    if (c->sig.test || c->exposures)
        c->sigc = am_sig_collect_new(r->scorer, c->nhyp, c->sig.test, c->exposures);
    rc = am_cli_score_sessions(c, r, &sink);
    json_t *sig = NULL, *expo = NULL;
    if (rc == 0)
        rc = am_cli_signif(c, &sig, &expo);
    if (rc == 0 && c->plot_path)
        rc = am_cli_write_plot(c, r, &plot);
    if (rc == 0 && c->format == AM_RP_JSON)
        am_cli_print_json(c, r, sink.jsegs, sig, expo);
    else if (rc == 0)
        am_cli_print_table(c, r, sink.segrep, sig, expo);
    json_decref(sig);
    json_decref(expo);
    am_sig_collect_free(c->sigc);
    c->sigc = NULL;
    json_decref(sink.jsegs);
    am_report_cleanup(&segrep);
    am_cli_plot_cleanup(&plot);
    return rc;
}
