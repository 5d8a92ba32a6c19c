/*
 * score_sess.c — one session of `adaptmon score`, scored in order.
 *
 * A session's segments must be scored one after another: each segment's
 * recall is counted against the words the confirmed translations before it
 * have taught the history. This is the path whenever a consumer wants every
 * segment (--per-segment, --plot, the JSON's segment objects): each result
 * goes to the sink with the running totals. It is also the path on one
 * core. Otherwise score_run.c scores the same sessions on several threads,
 * reusing am_cli_seg_input and am_cli_history_lookup from here so that both
 * paths feed the core the same input.
 */
#include "score_int.h"

#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- sessions ------------------------------------------------------------ */

void am_cli_annots_free(am_cli_annots *a)
{
    for (size_t i = 0; i < a->ntargets; i++)
        free(a->targets[i]);
    free(a->targets);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* Byte range of tokens [t0, t0+count) of whitespace-separated text. */
static int am_cli_tok_bytes(const char *text, size_t t0, size_t count, size_t *b0, size_t *b1)
{
    size_t i = 0, tok = 0, len = strlen(text);
    int found = 0;
    while (i < len) {
        while (i < len && text[i] == ' ')
            i++;
        if (i >= len)
            break;
        size_t s = i;
        while (i < len && text[i] != ' ')
            i++;
        if (tok == t0) {
            *b0 = s;
            found = 1;
        }
        if (found && tok == t0 + count - 1) {
            *b1 = i;
            return 1;
        }
        tok++;
    }
    return 0;
}

static void am_cli_annots_build(const am_sgml_seg *seg, am_cli_annots *a)
{
    memset(a, 0, sizeof *a);
    if (!seg || seg->nterms == 0)
        return;
    a->v = am_xcalloc(seg->nterms, sizeof *a->v);
    size_t cap = 0;
    for (size_t i = 0; i < seg->nterms; i++) {
        const am_sgml_term *t = &seg->terms[i];
        if (!t->tgt || !*t->tgt || t->tok_count == 0)
            continue;
        size_t first = a->ntargets;
        const char *p = t->tgt;
        while (1) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (n > 0) {
                if (a->ntargets == cap) {
                    cap = cap ? cap * 2 : 8;
                    a->targets = am_xrealloc(a->targets, cap * sizeof *a->targets);
                }
                a->targets[a->ntargets++] = am_xstrndup(p, n);
            }
            if (!bar)
                break;
            p = bar + 1;
        }
        if (a->ntargets == first)
            continue;
        am_terms_annot *an = &a->v[a->n++];
        an->source = t->src;
        an->n_targets = a->ntargets - first;
        an->targets = (const char *const *)(uintptr_t)first; /* fixed up below */
        size_t b0 = 0, b1 = 0;
        if (am_cli_tok_bytes(seg->text, t->tok_start, t->tok_count, &b0, &b1)) {
            an->has_span = 1;
            an->span_start = b0;
            an->span_end = b1;
        }
    }
    for (size_t i = 0; i < a->n; i++)
        a->v[i].targets = (const char *const *)(a->targets + (uintptr_t)a->v[i].targets);
}

/* The scoring input of segment sg; its annotations go into *an (the
 * standard profile takes them from the SGML term tags). */
am_seg_input am_cli_seg_input(const am_cli *c, const am_cli_seg *sg, am_cli_annots *an)
{
    am_cli_annots_build(c->cfg.profile == AM_PROFILE_STANDARD ? sg->ref_seg : NULL, an);
    am_seg_input in = {.source = sg->src,
                       .translation = sg->ref,
                       .hyps = sg->hyp,
                       .nsys = c->nhyp,
                       .annots = an->v,
                       .n_annots = an->n,
                       .more_refs = sg->xrefs,
                       .n_more_refs = sg->xrefs ? c->nxref : 0};
    return in;
}

int am_cli_history_lookup(void *ctx, const char *word, int64_t *occ)
{
    return am_recall_vocab_lookup(ctx, word, occ);
}

/* The running values of a --json per-segment object (new reference). */
static json_t *am_cli_json_running(const am_totals *t)
{
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    double v[] = {sc.r[0],
                  t->recall.k >= 1 ? sc.r[1] : NAN,
                  sc.r01,
                  sc.terms.exact,
                  sc.one_minus_term,
                  sc.bleu,
                  sc.chrf,
                  sc.ter * 100};
    static const char *const keys[] = {"r0",   "r1",    "r01", "term_exact_match", "one_minus_term",
                                       "bleu", "chrf2", "ter"};
    json_t *o = json_object();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        json_object_set_new(o, keys[k], isfinite(v[k]) ? json_real(v[k]) : json_null());
    return o;
}

/* Hands one scored segment to the sink: totals[0..nhyp) are the session's
 * totals after it, added to sink->base for the running values. */
static void am_cli_sink_segment(const am_cli *c, const am_scorer *s, am_cli_sink *k,
                                const am_cli_seg *sg, const am_seg_result *res,
                                const am_totals *totals)
{
    k->seq++;
    if (!k->jsegs && !k->segrep && !k->plot)
        return;
    am_totals running[AM_CLI_MAX_SYS];
    for (size_t i = 0; i < c->nhyp; i++) {
        running[i] = totals[i];
        if (k->base)
            am_totals_merge(&running[i], &k->base[i]);
    }
    if (k->plot)
        am_cli_plot_add(k->plot, res->sys, running);
    if (k->segrep)
        for (size_t i = 0; i < c->nhyp; i++)
            am_cli_report_segment(k->segrep, k->seq, sg->id, sg->docid, c->hyp[i].name,
                                  &res->sys[i], &running[i]);
    if (k->jsegs) {
        const char *names[AM_CLI_MAX_SYS];
        for (size_t i = 0; i < c->nhyp; i++)
            names[i] = c->hyp[i].name;
        json_t *o = am_json_segment(s, res, names);
        json_object_set_new(o, "id", json_string(sg->id));
        if (sg->docid)
            json_object_set_new(o, "doc", json_string(sg->docid));
        json_t *run = json_object();
        for (size_t i = 0; i < c->nhyp; i++)
            json_object_set_new(run, names[i], am_cli_json_running(&running[i]));
        json_object_set_new(o, "running", run);
        json_array_append_new(k->jsegs, o);
    }
}

/* Scores segment sg against the history hist, commits its words to hist,
 * adds it to totals[0..nhyp) and hands it to the sink. On an error nothing
 * is changed (the scoring fails before the history is touched) and 1 is
 * returned after a message on c->err; else 0. */
int am_cli_session_seg(const am_cli *c, const am_scorer *s, am_score_ws *ws, am_vocab *hist,
                       const am_cli_seg *sg, am_totals *totals, am_cli_sink *sink)
{
    am_cli_annots an;
    am_seg_input in = am_cli_seg_input(c, sg, &an);
    am_seg_result res;
    const char *field = NULL;
    int r = am_score_segment(s, ws, &in, am_cli_history_lookup, hist, &res, &field);
    am_cli_annots_free(&an);
    if (r != AM_OK) {
        fprintf(c->err, "adaptmon score: segment %s: %s%s%s\n", sg->id, am_strerror(r),
                field ? " in " : "", field ? field : "");
        return 1;
    }
    am_recall_seg_commit(res.recall, hist);
    for (size_t k = 0; k < c->nhyp; k++)
        am_totals_add(&totals[k], &res.sys[k]);
    if (c->sigc)
        am_sig_collect_seg(c->sigc, res.sys, res.recall);
    am_cli_sink_segment(c, s, sink, sg, &res, totals);
    return 0;
}

/* Scores segments[0..n) as one session, adding to totals[0..nhyp) and
 * handing every segment to the sink. */
int am_cli_session(const am_cli *c, const am_scorer *s, am_score_ws *ws, const am_cli_seg *segs,
                   size_t n, am_totals *totals, am_cli_sink *sink)
{
    am_vocab *hist = am_vocab_new();
    if (c->sigc)
        am_sig_collect_session(c->sigc);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = am_cli_session_seg(c, s, ws, hist, &segs[i], totals, sink);
    am_vocab_free(hist);
    return rc;
}
