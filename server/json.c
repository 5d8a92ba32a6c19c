/* json.c — jansson encoding of core results (see json.h). */
#include "json.h"

#include <math.h>
#include <stdio.h>

json_t *am_json_real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *am_json_count(int64_t hits, int64_t total)
{
    return json_pack("{sIsIso}", "hits", (json_int_t)hits, "total", (json_int_t)total, "score",
                     total > 0 ? json_real((double)hits / (double)total) : json_null());
}

static json_t *am_json_recall(const am_recall_totals *r)
{
    json_t *o = json_object();
    for (int k = 0; k <= r->k; k++) {
        char key[8];
        snprintf(key, sizeof key, "r%d", k);
        json_object_set_new(o, key, am_json_count(r->r[k].hits, r->r[k].total));
    }
    json_object_set_new(o, "r01", am_json_count(r->r01.hits, r->r01.total));
    return o;
}

static json_t *am_json_windows(const am_terms_totals *t, const double *scores)
{
    json_t *o = json_object();
    for (size_t w = 0; w < t->n_windows; w++) {
        char key[16];
        snprintf(key, sizeof key, "%zu", t->windows[w]);
        json_object_set_new(o, key,
                            json_pack("{sosI}", "score", am_json_real(scores[w]), "instances",
                                      (json_int_t)t->win_count[w]));
    }
    return o;
}

static json_t *am_json_terms_totals(const am_terms_totals *t)
{
    am_terms_scores sc;
    am_terms_totals_scores(t, &sc);
    return json_pack("{sIsIsIsIsIsososososo}", "instances", (json_int_t)t->instances, "exact",
                     (json_int_t)t->exact, "stem", (json_int_t)t->stem, "deviations",
                     (json_int_t)t->deviations, "forbidden", (json_int_t)t->forbidden,
                     "exact_match", am_json_real(sc.exact), "exact_or_stem_match",
                     am_json_real(sc.exact_or_stem), "partial_match", am_json_real(sc.partial),
                     "reorder_match", am_json_real(sc.reorder), "window_overlap",
                     am_json_windows(t, sc.window));
}

static json_t *am_json_span(const am_terms_span *sp)
{
    return json_pack("{sIsIsIsI}", "token_start", (json_int_t)sp->tok_start, "token_end",
                     (json_int_t)sp->tok_end, "byte_start", (json_int_t)sp->byte_start, "byte_end",
                     (json_int_t)sp->byte_end);
}

static const char *am_match_name(enum am_terms_match m)
{
    return m == AM_TERMS_EXACT ? "exact" : m == AM_TERMS_STEM ? "stem" : "none";
}

static json_t *am_json_terms_seg(const am_terms_seg *ts, const am_terms_totals *tot)
{
    json_t *inst = json_array();
    for (size_t i = 0; i < ts->n_inst; i++) {
        const am_terms_inst *in = &ts->inst[i];
        json_t *o = json_pack("{sssIsoss}", "origin",
                              in->origin == AM_TERMS_GLOSSARY ? "glossary" : "annotation", "entry",
                              (json_int_t)in->entry, "reference", am_json_span(&in->ref), "match",
                              am_match_name(in->match));
        json_object_set_new(o, "partial", am_json_real(in->partial));
        json_object_set_new(o, "reorder", am_json_real(in->reorder));
        if (in->match != AM_TERMS_NONE)
            json_object_set_new(o, "hypothesis", am_json_span(&in->hyp));
        json_t *wo = json_object();
        for (size_t w = 0; w < tot->n_windows; w++) {
            char key[16];
            snprintf(key, sizeof key, "%zu", tot->windows[w]);
            json_object_set_new(wo, key, am_json_real(in->window[w]));
        }
        json_object_set_new(o, "window_overlap", wo);
        json_array_append_new(inst, o);
    }
    json_t *dev = json_array();
    for (size_t i = 0; i < ts->n_dev; i++)
        json_array_append_new(dev, json_pack("{sssI}", "origin",
                                             ts->dev[i].origin == AM_TERMS_GLOSSARY ? "glossary"
                                                                                    : "annotation",
                                             "entry", (json_int_t)ts->dev[i].entry));
    json_t *forb = json_array();
    for (size_t i = 0; i < ts->n_forbid; i++)
        json_array_append_new(forb, json_pack("{sIsIso}", "entry", (json_int_t)ts->forbid[i].entry,
                                              "alternative", (json_int_t)ts->forbid[i].alt,
                                              "hypothesis", am_json_span(&ts->forbid[i].hyp)));
    json_t *o = am_json_terms_totals(tot);
    json_object_set_new(o, "instances_found", inst);
    json_object_set_new(o, "glossary_deviations", dev);
    json_object_set_new(o, "forbidden_used", forb);
    return o;
}

json_t *am_json_segment(const am_scorer *s, const am_seg_result *res, const char *const *names)
{
    (void)s;
    const am_recall_seg *rs = res->recall;
    json_t *words = json_array();
    for (size_t i = 0; i < rs->words.n; i++) {
        json_t *hits = json_object();
        for (size_t k = 0; k < res->nsys; k++)
            json_object_set_new(hits, names[k], json_boolean(rs->hit[k * rs->words.n + i]));
        json_array_append_new(words, json_pack("{sssIsbso}", "word", rs->words.v[i], "shot",
                                               (json_int_t)rs->shot[i], "counted",
                                               rs->shot[i] <= rs->k, "hits", hits));
    }
    json_t *systems = json_object();
    for (size_t k = 0; k < res->nsys; k++) {
        const am_sys_seg *r = &res->sys[k];
        json_t *o = am_json_recall(&r->recall);
        if (r->terms)
            json_object_set_new(o, "terms", am_json_terms_seg(r->terms, &r->terms_totals));
        json_object_set_new(o, "ter", am_json_real(100.0 * r->sent_ter));
        json_object_set_new(o, "one_minus_term", am_json_real(1.0 - r->sent_term));
        json_object_set_new(o, "ter_edits", json_real(r->ter_edits));
        json_object_set_new(o, "term_edits", json_real(r->term_edits));
        json_object_set_new(o, "ter_ref_len", json_integer((json_int_t)r->ter_ref_len));
        json_object_set_new(o, "bleu", am_json_real(r->sent_bleu));
        json_object_set_new(o, "chrf", am_json_real(r->sent_chrf));
        json_object_set_new(o, "chrfpp", am_json_real(r->sent_chrfpp));
        json_object_set_new(systems, names[k], o);
    }
    return json_pack("{soso}", "words", words, "systems", systems);
}

json_t *am_json_totals(const am_scorer *s, const am_totals *t)
{
    (void)s;
    am_totals_scores sc;
    am_totals_scores_compute(t, &sc);
    json_t *o = am_json_recall(&t->recall);
    json_object_set_new(o, "segments", json_integer((json_int_t)t->segments));
    json_object_set_new(o, "terms", am_json_terms_totals(&t->terms));
    json_object_set_new(o, "ter", am_json_real(100.0 * sc.ter));
    json_object_set_new(o, "one_minus_term", am_json_real(sc.one_minus_term));
    json_object_set_new(o, "bleu", am_json_real(sc.bleu));
    json_object_set_new(o, "chrf", am_json_real(sc.chrf));
    json_object_set_new(o, "chrfpp", am_json_real(sc.chrfpp));
    return o;
}

json_t *am_json_alam(const am_alam_result *r, int per_segment)
{
    json_t *wo = json_object();
    for (size_t w = 0; w < r->nwindows; w++) {
        char key[16];
        snprintf(key, sizeof key, "%zu", r->windows[w]);
        json_object_set_new(wo, key, json_real(r->window_overlap[w]));
    }
    json_t *o = json_pack("{sIsIsososo}", "exact_match_correct", (json_int_t)r->em_correct,
                          "exact_match_terms", (json_int_t)r->em_terms, "exact_match",
                          r->exact_match_valid ? json_real(r->exact_match) : json_null(),
                          "window_overlap", wo, "one_minus_term",
                          r->term_ter_valid ? json_real(r->one_minus_term_ter) : json_null());
    if (per_segment) {
        json_t *segs = json_array();
        for (size_t i = 0; i < r->nsegs; i++) {
            const am_alam_seg *sg = &r->segs[i];
            json_t *w = json_object();
            for (size_t k = 0; k < r->nwindows; k++) {
                char key[16];
                snprintf(key, sizeof key, "%zu", r->windows[k]);
                json_object_set_new(w, key, json_real(sg->wo[k]));
            }
            json_array_append_new(segs, json_pack("{sssIsIsoso}", "id", sg->id,
                                                  "exact_match_correct",
                                                  (json_int_t)sg->em_correct, "exact_match_terms",
                                                  (json_int_t)sg->em_terms, "window_overlap", w,
                                                  "term_ter",
                                                  sg->term_ter_valid ? json_real(sg->term_ter)
                                                                     : json_null()));
        }
        json_object_set_new(o, "segments", segs);
    }
    return o;
}
