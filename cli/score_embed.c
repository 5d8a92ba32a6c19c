/*
 * score_embed.c — `adaptmon score` for an embedding program (see
 * score_embed.h): a live session scored one segment at a time, and the
 * input readers alone.
 *
 * Neither repeats any of the command's work. A live session is an am_cli
 * parsed by the command's own parser and an am_cli_run whose scorer, word
 * history and totals persist between calls; each segment goes through
 * am_cli_session_seg, the step `adaptmon score --per-segment` runs for
 * every segment of a session, and the JSON is am_cli_print_json's. So a
 * session fed segment by segment prints, after its n-th segment, what the
 * command prints for those n segments (the per-segment array aside), at a
 * cost per segment that does not grow with the history (the history is a
 * hash of words: am_vocab). The reader runs the command's loading steps
 * (am_cli_xliff, am_cli_load_resources, am_cli_read_sgml,
 * am_cli_read_plain) in the command's order and prints their result.
 */
#include "score_embed.h"

#include "score_int.h"

#include <stdlib.h>
#include <string.h>

struct am_cli_live {
    am_cli c; /* the options; c.hyp[i].name the systems (owned) */
    am_cli_run r; /* scorer, workspace, totals[nhyp], glossary and background */
    am_vocab *hist; /* word → occurrences in the confirmed translations so far */
};

/* ---- the live session ------------------------------------------------------ */

/* 0 when c names no input and asks for nothing a session cannot give, else
 * 2 after a message on c->err. */
static int am_cli_live_check(const am_cli *c)
{
    const char *bad = NULL;
    if (c->ref.path || c->src.path || c->nhyp || c->nxref || c->sgml || c->nxliff)
        bad = "takes its texts from add(), not from input files (--ref, --hyp, --src, --sgm-*, "
              "--xliff)";
    else if (c->sig.test || c->exposures)
        bad = "has no significance test, confidence interval or exposures (score the whole "
              "session with --paired-bs, --paired-ar, --confidence or --exposures)";
    else if (c->plot_path || c->by_doc || c->by_file)
        bad = "has no --plot, --by-doc or --by-file";
    else if (c->cfg.profile == AM_PROFILE_ALAM2021)
        bad = "cannot run profile alam2021 (it scores whole WMT21 SGML documents)";
    if (bad)
        fprintf(c->err, "adaptmon score: a session %s\n", bad);
    return bad ? 2 : 0;
}

/* The system names into c->hyp (copied). Returns 0, or 2 after a message. */
static int am_cli_live_names(am_cli *c, const char *const *names, size_t n)
{
    if (n == 0 || n > AM_CLI_MAX_SYS) {
        fprintf(c->err, "adaptmon score: a session needs 1 to %d systems, not %zu\n",
                AM_CLI_MAX_SYS, n);
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < i; k++)
            if (!strcmp(names[k], names[i])) {
                fprintf(c->err, "adaptmon score: system '%s' named twice\n", names[i]);
                return 2;
            }
        if (!names[i][0]) {
            fprintf(c->err, "adaptmon score: a system name is empty\n");
            return 2;
        }
        c->hyp[i].name = am_xstrdup(names[i]);
        c->hyp[i].path = am_xstrdup(""); /* no file: am_cli_free frees both */
        c->nhyp = i + 1;
    }
    return 0;
}

void am_cli_live_free(am_cli_live *l)
{
    if (!l)
        return;
    am_vocab_free(l->hist);
    am_cli_run_free(&l->c, &l->r);
    am_cli_free(&l->c);
    free(l);
}

int am_cli_live_new(int argc, char **argv, const char *const *names, size_t nnames, FILE *err,
                    am_cli_live **out)
{
    *out = NULL;
    am_cli_live *l = am_xcalloc(1, sizeof *l);
    am_cli_init(&l->c, err, err); /* --help's usage goes to err, then refused */
    am_gloss_init(&l->r.gloss);
    am_toks_init(&l->r.custom_sw);
    int rc = am_cli_parse(argc, argv, &l->c);
    if (rc < 0) {
        fprintf(err, "adaptmon score: --help is not a session option\n");
        rc = 2;
    }
    if (rc == 0)
        rc = am_cli_live_check(&l->c);
    if (rc == 0)
        rc = am_cli_live_names(&l->c, names, nnames);
    if (rc == 0)
        rc = am_cli_load_resources(&l->c, &l->r.gloss, &l->r.background, &l->r.custom_sw);
    if (rc == 0)
        rc = am_cli_new_scorer(&l->c, &l->r);
    if (rc) {
        am_cli_live_free(l);
        return rc;
    }
    l->c.per_segment = 1;
    l->c.format = AM_RP_JSON;
    l->r.ws = am_score_ws_new();
    l->r.totals = am_xcalloc(l->c.nhyp, sizeof *l->r.totals);
    l->r.nsess = 1;
    l->hist = am_vocab_new();
    am_cli_live_reset(l);
    l->c.out = l->c.err = NULL; /* the caller's stream is not kept */
    *out = l;
    return 0;
}

void am_cli_live_reset(am_cli_live *l)
{
    am_vocab_clear(l->hist);
    for (size_t i = 0; i < l->c.nhyp; i++)
        am_totals_init(&l->r.totals[i], l->r.scorer);
    l->r.nseg = 0;
}

size_t am_cli_live_count(const am_cli_live *l)
{
    return l->r.nseg;
}

int am_cli_live_add(am_cli_live *l, const char *source, const char *translation,
                    const char *const *hyps, FILE *out, FILE *err)
{
    char id[24];
    snprintf(id, sizeof id, "%zu", l->r.nseg + 1); /* plain input's ids: line numbers */
    am_cli_seg sg;
    memset(&sg, 0, sizeof sg);
    sg.id = id;
    sg.src = source;
    sg.ref = translation;
    for (size_t i = 0; i < l->c.nhyp; i++)
        sg.hyp[i] = hyps[i];
    am_cli_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.jsegs = json_array();
    sink.seq = (int64_t)l->r.nseg;
    l->c.out = out;
    l->c.err = err;
    int rc = am_cli_session_seg(&l->c, l->r.scorer, l->r.ws, l->hist, &sg, l->r.totals, &sink);
    if (rc == 0) {
        l->r.nseg++;
        am_cli_print_json(&l->c, &l->r, sink.jsegs, NULL, NULL);
    }
    json_decref(sink.jsegs);
    l->c.out = l->c.err = NULL; /* the caller's streams are not kept */
    return rc;
}

/* ---- the readers ------------------------------------------------------------- */

/* 0 when c names at most one kind of segment input (hypotheses optional),
 * else 2 after a message. */
static int am_cli_read_check(const am_cli *c)
{
    int kinds = (c->ref.path != NULL) + (c->sgml != 0) + (c->nxliff != 0);
    if (kinds > 1 || (!c->ref.path && (c->src.path || c->nxref)) ||
        (c->nhyp && !c->ref.path && !c->sgml)) {
        fprintf(c->err, "adaptmon score: read one input: plain (--ref with --src, --hyp), WMT "
                        "SGML (--sgm-ref with --sgm-src, --sgm-hyp) or --xliff\n");
        return 2;
    }
    if (c->sgml && !c->sgm_ref.path) {
        fprintf(c->err, "adaptmon score: SGML input needs --sgm-ref\n");
        return 2;
    }
    if (c->nxliff_mt && c->nxliff_mt != c->nxliff) {
        fprintf(c->err,
                "adaptmon score: %zu --xliff-mt for %zu --xliff: give one pre-translated file "
                "per final file, in the same order\n",
                c->nxliff_mt, c->nxliff);
        return 2;
    }
    return 0;
}

static json_t *am_cli_str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The <term> tags of an SGML reference segment as JSON (a new reference):
 * what the standard profile takes as the segment's term annotations. */
static json_t *am_cli_read_terms(const am_sgml_seg *seg)
{
    json_t *a = json_array();
    for (size_t i = 0; i < seg->nterms; i++) {
        const am_sgml_term *t = &seg->terms[i];
        json_array_append_new(a, json_pack("{sosososssIsI}", "id", am_cli_str_or_null(t->id),
                                           "source", am_cli_str_or_null(t->src), "target",
                                           am_cli_str_or_null(t->tgt), "text", t->text, "tok_start",
                                           (json_int_t)t->tok_start, "tok_count",
                                           (json_int_t)t->tok_count));
    }
    return a;
}

/* The segments of r as JSON (a new reference). */
static json_t *am_cli_read_segments(const am_cli *c, const am_cli_run *r)
{
    json_t *segs = json_array();
    for (size_t k = 0; k < r->nseg; k++) {
        const am_cli_seg *sg = &r->segs[k];
        json_t *refs = json_array(), *hyps = json_object();
        for (size_t j = 0; sg->xrefs && j < c->nxref; j++)
            json_array_append_new(refs, json_string(sg->xrefs[j]));
        for (size_t i = 0; i < c->nhyp; i++)
            json_object_set_new(hyps, c->hyp[i].name, json_string(sg->hyp[i]));
        json_t *o = json_object();
        json_object_set_new(o, "id", am_cli_str_or_null(sg->id));
        json_object_set_new(o, "doc",
                            sg->docid   ? json_string(sg->docid)
                            : c->nxliff ? json_integer((json_int_t)sg->doc)
                                        : json_null());
        json_object_set_new(o, "source", am_cli_str_or_null(sg->src));
        json_object_set_new(o, "target", am_cli_str_or_null(sg->ref));
        json_object_set_new(o, "references", refs);
        json_object_set_new(o, "hypotheses", hyps);
        if (sg->ref_seg)
            json_object_set_new(o, "terms", am_cli_read_terms(sg->ref_seg));
        json_array_append_new(segs, o);
    }
    return segs;
}

/* The glossary entries as JSON (a new reference). */
static json_t *am_cli_read_glossary(const am_gloss *g)
{
    json_t *a = json_array();
    for (size_t i = 0; i < g->n; i++) {
        const am_gloss_entry *e = &g->v[i];
        json_t *t = json_array();
        for (size_t k = 0; k < e->n_targets; k++)
            json_array_append_new(t, json_string(e->targets[k]));
        json_array_append_new(a, json_pack("{sssosbsbso}", "source", e->source, "targets", t,
                                           "case_sensitive", e->case_sensitive, "forbidden",
                                           e->forbidden, "id", am_cli_str_or_null(e->id)));
    }
    return a;
}

/* What was read (r and c's resources) as the JSON of am_cli_read_io. */
static json_t *am_cli_read_json(const am_cli *c, const am_cli_run *r)
{
    json_t *root = json_object();
    json_object_set_new(root, "source_lang", json_string(c->cfg.source_lang));
    json_object_set_new(root, "target_lang", json_string(c->cfg.target_lang));
    if (c->ref.path || c->sgml || c->nxliff) {
        json_t *sys = json_array(), *sess = json_array();
        for (size_t i = 0; i < c->nhyp; i++)
            json_array_append_new(sys, json_string(c->hyp[i].name));
        for (size_t d = 0; d < r->nsess; d++)
            json_array_append_new(
                sess, json_pack("{sIsIso}", "first", (json_int_t)r->sess_first[d], "n",
                                (json_int_t)r->sess_n[d], "doc",
                                am_cli_str_or_null(r->sess_doc ? r->sess_doc[d] : NULL)));
        json_object_set_new(root, "systems", sys);
        json_object_set_new(root, "sessions", sess);
        json_object_set_new(root, "segments", am_cli_read_segments(c, r));
    }
    if (c->nxliff)
        json_object_set_new(root, "skipped", am_cli_skips_json(&c->skips));
    if (c->glossary_path)
        json_object_set_new(root, "glossary", am_cli_read_glossary(&r->gloss));
    if (r->background) {
        json_t *bg = json_object();
        size_t it = 0;
        const char *w;
        int64_t n;
        while (am_vocab_next(r->background, &it, &w, &n))
            json_object_set_new(bg, w, json_integer((json_int_t)n));
        json_object_set_new(root, "background", bg);
    }
    return root;
}

int am_cli_read_io(int argc, char **argv, FILE *out, FILE *err)
{
    am_cli c;
    am_cli_init(&c, out, err);
    int rc = am_cli_parse(argc, argv, &c);
    if (rc == 0)
        rc = am_cli_read_check(&c);
    if (rc) { /* -1: --help printed the usage, exit status 0 */
        am_cli_free(&c);
        return rc < 0 ? 0 : rc;
    }
    am_cli_run *r = am_cli_run_new(&c);
    /* the order of am_cli_score_io: XLIFF's languages apply to the rest */
    if (c.nxliff)
        rc = am_cli_xliff(&c, r->xdocs, &r->segs, &r->nseg, &r->sess_first, &r->sess_n, &r->nsess);
    if (rc == 0)
        rc = am_cli_load_resources(&c, &r->gloss, &r->background, &r->custom_sw);
    if (rc == 0 && c.sgml)
        rc = am_cli_read_sgml(&c, r);
    else if (rc == 0 && c.ref.path)
        rc = am_cli_read_plain(&c, r);
    if (rc == 0) {
        json_t *root = am_cli_read_json(&c, r);
        am_cli_put_json(c.out, root);
        json_decref(root);
    }
    am_cli_run_free(&c, r);
    free(r);
    am_cli_free(&c);
    return rc;
}
