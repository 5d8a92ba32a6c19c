/* score.c — one confirmed segment, every metric (see score.h). */
#include "score.h"

#include "compat/simianer2019.h"
#include "mecab.h"
#include "stopwords.h"
#include "zhseg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct am_scorer {
    am_config cfg;
    am_sw *sw; /* owned; NULL = no stopwords */
    am_terms_lex *lex; /* owned; compiled glossary (may be empty) */
    am_recall_config rcfg; /* borrows sw and the background */
    char *signature; /* owned */
    am_bleu_opts bleu; /* BLEU statistics options (tokenizer resolved) */
    am_bleu_score_opts bleu_sent; /* sentence BLEU (effective order) */
    am_mecab *mecab; /* owned; the MeCab model when BLEU or recall runs ja-mecab */
    enum am_tok_kind terms_tok; /* the terms matcher's target tokenizer: recall's,
                                   or zh where recall runs ja-mecab or zh-friso */
    /* friso, when recall runs zh-friso: the process's shared model
     * (borrowed, am_scorer_models) or zhseg_own */
    const am_zhseg *zhseg;
    am_zhseg *zhseg_own; /* owned; loaded when no shared model was given */
};

struct am_score_ws {
    am_buf src, ref; /* tag-stripped source and translation */
    am_buf *hyp; /* tag-stripped hypotheses [cap_sys] */
    /* ref and hyp[] tokenized once by the target tokenizer (recall's and
     * the terms matcher's, the same except where recall runs ja-mecab:
     * am_config_terms_tokenizer) and shared by both; valid while tok_ok is
     * set for the current segment */
    am_buf ref_tk, *hyp_tk; /* [cap_sys] */
    /* their tokens normalized once for both (standard profile) */
    am_tok_words ref_w, *hyp_w; /* [cap_sys] */
    am_tok_text ref_tt, *hyp_tt; /* [cap_sys]; borrow the buffers above */
    int tok_ok;
    am_terms_ws **terms; /* one term workspace per system [cap_sys] */
    size_t cap_sys;
    am_recall_seg recall;
    am_sys_seg *sys; /* [cap_sys] */
    am_ter_ws *ter;
    am_toks ter_ref, ter_hyp;
    double *cost; /* per TER reference token */
    am_ter_spans ter_spans; /* byte ranges of the TER reference tokens */
    size_t cap_cost;
    am_bleu_ws *bleu;
    am_chrf_ws *chrf;
    const char **hyp_ptr; /* [cap_sys] */
    am_cancel *cancel; /* borrowed, NULL: never cancelled */
    /* the references after the translation, prepared, and all of them as
     * one array (refs[0] is the prepared translation) */
    am_buf xref[AM_SCORE_MAX_REFS - 1];
    const char *refs[AM_SCORE_MAX_REFS];
    size_t nrefs;
    am_toks ter_xref[AM_SCORE_MAX_REFS - 1]; /* their TER tokens */
    /* a MeCab tagger over mecab_for's model (made on first use) */
    am_mecab_ws *mecab;
    const am_mecab *mecab_for;
    /* a friso workspace over zhseg_for's model (made on first use) */
    am_zhseg_ws *zhseg;
    const am_zhseg *zhseg_for;
};

/* ---- scorer ---------------------------------------------------------- */

static int am_scorer_stopwords(const am_config *cfg, const am_mecab *mecab, const am_zhseg *zh,
                               const char *const *custom, size_t n_custom, am_sw **out, am_buf *err)
{
    int simianer = cfg->profile == AM_PROFILE_SIMIANER2019;
    enum am_norm norm = simianer ? AM_NORM_NONE : cfg->norm;
    int casefold = simianer ? 0 : !cfg->case_sensitive;
    char lang[8];
    int has_lang = am_sw_lang(cfg->target_lang, lang, sizeof lang) == AM_OK;
    const char *source;

    *out = NULL;
    switch (cfg->stopwords) {
    case AM_SW_NONE: return AM_OK;
    case AM_SW_CUSTOM: {
        int rc = am_sw_from_words(custom, n_custom, norm, casefold, out);
        if (rc != AM_OK && err)
            am_buf_printf(err, "custom stopword list: %s", am_strerror(rc));
        return rc;
    }
    case AM_SW_SNOWBALL:
    case AM_SW_ISO: source = am_config_sw_name(cfg->stopwords); break;
    default:
        if (!has_lang)
            return AM_OK;
        source = am_sw_default_source_for(lang, am_config_tokenizer(cfg));
        break;
    }
    if (!strcmp(source, "none"))
        return AM_OK;
    /* Only the words the tokenizer in use can produce (stopwords.h); for
     * ja-mecab and zh-friso, as the segmenter cuts each word alone. */
    am_mecab_ws *mws = NULL;
    am_zhseg_ws *zws = NULL;
    if (mecab && am_mecab_ws_new(mecab, &mws) != AM_OK)
        return AM_ERR_INTERNAL;
    if (zh && am_zhseg_ws_new(zh, &zws) != AM_OK) {
        am_mecab_ws_free(mws);
        return AM_ERR_INTERNAL;
    }
    am_tok_ctx ctx = {.ja_mecab = mws, .zh_friso = zws};
    int rc = am_sw_builtin_for(source, has_lang ? lang : cfg->target_lang, am_config_tokenizer(cfg),
                               &ctx, norm, casefold, out);
    am_mecab_ws_free(mws);
    am_zhseg_ws_free(zws);
    if (rc != AM_OK && err)
        am_buf_printf(err, "no %s stopword list for language '%s'", source, cfg->target_lang);
    return rc;
}

/* The scorer's BLEU options; loads the MeCab model when BLEU or recall
 * runs ja-mecab (a missing dictionary is an error, never another
 * tokenizer). */
static int am_scorer_bleu(am_scorer *s, am_buf *err)
{
    am_config_bleu_opts(&s->cfg, &s->bleu);
    am_config_bleu_score_opts(&s->cfg, 1, &s->bleu_sent);
    int bleu = s->bleu.tokenizer == AM_TOK_JA_MECAB;
    if (!bleu && am_config_tokenizer(&s->cfg) != AM_TOK_JA_MECAB)
        return AM_OK;
    am_buf why;
    am_buf_init(&why);
    int rc = am_mecab_new(NULL, &s->mecab, &why);
    if (rc != AM_OK && err)
        am_buf_printf(err, "%s tokenizer ja-mecab: %s", bleu ? "BLEU" : "recall", am_buf_str(&why));
    am_buf_cleanup(&why);
    return rc;
}

/* The friso model when recall runs zh-friso: the shared one, or one
 * loaded for this scorer (a missing dictionary is an error, never the
 * character rule). */
static int am_scorer_zhseg(am_scorer *s, const am_scorer_models *models, am_buf *err)
{
    if (am_config_tokenizer(&s->cfg) != AM_TOK_ZH_FRISO)
        return AM_OK;
    if (models && models->zhseg) {
        s->zhseg = models->zhseg;
        return AM_OK;
    }
    am_buf why;
    am_buf_init(&why);
    int rc = am_zhseg_new(NULL, &s->zhseg_own, &why);
    if (rc != AM_OK && err)
        am_buf_printf(err, "recall tokenizer zh-friso: %s", am_buf_str(&why));
    am_buf_cleanup(&why);
    s->zhseg = s->zhseg_own;
    return rc;
}

/* The signature sig with each tokenizer value "ja-mecab" (after "tok:" or
 * "bleu:") written as sacreBLEU names it, with MeCab's version and
 * dictionary ("ja-mecab-0.996-IPA", am_mecab_signature): the words MeCab
 * makes depend on both, so `score` and a live session name them alike.
 * mecab NULL: sig unchanged. Returns a malloc'd string (caller frees). */
static char *am_scorer_sig_mecab(const char *sig, const am_mecab *mecab)
{
    static const char name[] = "ja-mecab";
    am_buf b;
    am_buf_init(&b);
    const char *p = sig;
    for (const char *q; mecab && (q = strstr(p, name)) != NULL; p = q + sizeof name - 1) {
        char after = q[sizeof name - 1];
        int field = (q - sig >= 4 && !strncmp(q - 4, "tok:", 4)) ||
                    (q - sig >= 5 && !strncmp(q - 5, "bleu:", 5));
        am_buf_append(&b, p, (size_t)(q - p));
        am_buf_appends(&b, field && (after == '|' || after == ',' || after == '\0')
                               ? am_mecab_signature(mecab)
                               : name);
    }
    am_buf_appends(&b, p);
    return am_buf_detach(&b);
}

int am_scorer_new(const am_config *cfg, const char *const *custom_sw, size_t n_custom,
                  const am_gloss *gloss, const am_vocab *background, am_scorer **out, am_buf *err)
{
    return am_scorer_new_with(cfg, custom_sw, n_custom, gloss, background, NULL, out, err);
}

int am_scorer_new_with(const am_config *cfg, const char *const *custom_sw, size_t n_custom,
                       const am_gloss *gloss, const am_vocab *background,
                       const am_scorer_models *models, am_scorer **out, am_buf *err)
{
    *out = NULL;
    if (err)
        am_buf_reset(err);
    int rc = am_config_check(cfg, err);
    if (rc != AM_OK)
        return rc;
    if (cfg->stopwords == AM_SW_CUSTOM && n_custom > 0 && !custom_sw)
        return AM_ERR_INVALID;

    am_scorer *s = am_xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    am_config_apply_profile(&s->cfg); /* what the profile runs (config.h) */
    s->cfg.has_background = background != NULL;
    rc = am_scorer_bleu(s, err);
    if (rc != AM_OK)
        goto fail;
    rc = am_scorer_zhseg(s, models, err);
    if (rc != AM_OK)
        goto fail;
    rc = am_scorer_stopwords(&s->cfg, s->mecab, s->zhseg, custom_sw, n_custom, &s->sw, err);
    if (rc != AM_OK)
        goto fail;

    am_recall_config_init(&s->rcfg);
    s->rcfg.tokenizer = am_config_tokenizer(&s->cfg);
    s->rcfg.norm = s->cfg.norm;
    s->rcfg.casefold = !s->cfg.case_sensitive;
    s->rcfg.strip_tags = 0; /* am_score_segment strips once for every metric */
    s->rcfg.stopwords = s->sw;
    s->rcfg.k = s->cfg.k;
    /* a session created before issue 24 keeps the content-word rule its
     * history was counted with */
    s->rcfg.punct_only_rule = s->cfg.defaults == AM_DEFAULTS_V1;
    if (background) {
        s->rcfg.background = am_recall_vocab_background;
        /* The callback only reads the vocabulary. */
        s->rcfg.background_ctx = (void *)(uintptr_t)background;
        s->rcfg.rare_threshold = s->cfg.rare_threshold;
    }

    am_terms_cfg tc;
    am_terms_cfg_default(&tc);
    s->terms_tok = am_config_terms_tokenizer(&s->cfg);
    tc.tok_tgt = s->terms_tok;
    tc.tok_src =
        s->cfg.tokenizer_auto
            ? am_tok_default_for_lang(strcmp(s->cfg.source_lang, "und") ? s->cfg.source_lang : NULL)
            : s->cfg.tokenizer;
    if (tc.tok_src == AM_TOK_JA_MECAB || tc.tok_src == AM_TOK_ZH_FRISO) /* per character */
        tc.tok_src = AM_TOK_ZH;
    tc.norm = s->cfg.norm;
    tc.casefold = !s->cfg.case_sensitive;
    tc.sw = s->cfg.profile == AM_PROFILE_STANDARD ? s->sw : NULL;
    tc.stem_match = s->cfg.stem_match;
    tc.punct_only_rule = s->rcfg.punct_only_rule;
    tc.stem_lang = s->cfg.target_lang;
    tc.n_windows = s->cfg.nwindows;
    for (size_t i = 0; i < s->cfg.nwindows; i++)
        tc.windows[i] = (size_t)s->cfg.windows[i];
    am_gloss empty;
    am_gloss_init(&empty);
    rc = am_terms_lex_build(gloss ? gloss : &empty, &tc, &s->lex);
    if (rc != AM_OK) {
        if (err) {
            if (rc == AM_ERR_NOTFOUND)
                am_buf_printf(err, "no Snowball stemmer for language '%s'", s->cfg.target_lang);
            else if (rc == AM_ERR_RANGE)
                am_buf_printf(err, "glossary: a term has more than %d tokens (the limit)",
                              AM_TERMS_MAX_TERM_TOKENS);
            else
                am_buf_printf(err, "glossary: %s", am_strerror(rc));
        }
        goto fail;
    }

    am_buf sig;
    am_buf_init(&sig);
    am_config_signature(&s->cfg, &sig);
    s->signature = am_scorer_sig_mecab(am_buf_str(&sig), s->mecab);
    am_buf_cleanup(&sig);
    *out = s;
    return AM_OK;
fail:
    am_scorer_free(s);
    return rc;
}

void am_scorer_free(am_scorer *s)
{
    if (!s)
        return;
    am_sw_free(s->sw);
    am_terms_lex_free(s->lex);
    free(s->signature);
    am_mecab_free(s->mecab);
    am_zhseg_free(s->zhseg_own);
    free(s);
}

const am_bleu_opts *am_scorer_bleu_opts(const am_scorer *s)
{
    return &s->bleu;
}

void am_scorer_bleu_signature(const am_scorer *s, size_t nrefs, am_buf *out)
{
    am_bleu_score_opts so;
    am_config_bleu_score_opts(&s->cfg, 0, &so);
    am_buf_reset(out);
    am_bleu_signature(
        &s->bleu, &so, nrefs,
        s->bleu.tokenizer == AM_TOK_JA_MECAB && s->mecab ? am_mecab_signature(s->mecab) : NULL,
        out);
}

const am_config *am_scorer_config(const am_scorer *s)
{
    return &s->cfg;
}

const char *am_scorer_signature(const am_scorer *s)
{
    return s->signature;
}

size_t am_scorer_glossary_size(const am_scorer *s)
{
    return am_terms_lex_size(s->lex);
}

const am_terms_lex *am_scorer_lex(const am_scorer *s)
{
    return s->lex;
}

size_t am_scorer_stopword_count(const am_scorer *s)
{
    return am_sw_size(s->sw);
}

/* ---- workspace ------------------------------------------------------- */

am_score_ws *am_score_ws_new(void)
{
    am_score_ws *ws = am_xcalloc(1, sizeof *ws);
    am_buf_init(&ws->src);
    am_buf_init(&ws->ref);
    am_buf_init(&ws->ref_tk);
    am_tok_words_init(&ws->ref_w);
    am_recall_seg_init(&ws->recall);
    ws->ter = am_ter_ws_new();
    am_toks_init(&ws->ter_ref);
    am_toks_init(&ws->ter_hyp);
    for (size_t i = 0; i < AM_SCORE_MAX_REFS - 1; i++) {
        am_buf_init(&ws->xref[i]);
        am_toks_init(&ws->ter_xref[i]);
    }
    /* These only fail for a NULL argument. */
    if (am_bleu_ws_new(&ws->bleu) != AM_OK || am_chrf_ws_new(&ws->chrf) != AM_OK)
        abort();
    return ws;
}

void am_score_ws_free(am_score_ws *ws)
{
    if (!ws)
        return;
    am_buf_cleanup(&ws->src);
    am_buf_cleanup(&ws->ref);
    am_buf_cleanup(&ws->ref_tk);
    am_tok_words_cleanup(&ws->ref_w);
    for (size_t i = 0; i < ws->cap_sys; i++) {
        am_buf_cleanup(&ws->hyp[i]);
        am_buf_cleanup(&ws->hyp_tk[i]);
        am_tok_words_cleanup(&ws->hyp_w[i]);
        am_terms_ws_free(ws->terms[i]);
    }
    free(ws->hyp);
    free(ws->hyp_tk);
    free(ws->hyp_w);
    free(ws->hyp_tt);
    free(ws->terms);
    free(ws->sys);
    free(ws->hyp_ptr);
    am_recall_seg_cleanup(&ws->recall);
    am_ter_ws_free(ws->ter);
    am_toks_cleanup(&ws->ter_ref);
    am_toks_cleanup(&ws->ter_hyp);
    free(ws->cost);
    am_ter_spans_cleanup(&ws->ter_spans);
    am_bleu_ws_free(ws->bleu);
    am_chrf_ws_free(ws->chrf);
    for (size_t i = 0; i < AM_SCORE_MAX_REFS - 1; i++) {
        am_buf_cleanup(&ws->xref[i]);
        am_toks_cleanup(&ws->ter_xref[i]);
    }
    am_mecab_ws_free(ws->mecab);
    am_zhseg_ws_free(ws->zhseg);
    free(ws);
}

void am_score_ws_set_cancel(am_score_ws *ws, am_cancel *cancel)
{
    ws->cancel = cancel;
    am_ter_ws_set_cancel(ws->ter, cancel);
    for (size_t i = 0; i < ws->cap_sys; i++)
        am_terms_ws_set_cancel(ws->terms[i], cancel);
}

am_terms_ws *am_score_ws_terms(am_score_ws *ws)
{
    if (ws->cap_sys == 0) {
        ws->cap_sys = 1;
        ws->hyp = am_xcalloc(1, sizeof *ws->hyp);
        ws->hyp_tk = am_xcalloc(1, sizeof *ws->hyp_tk);
        ws->hyp_w = am_xcalloc(1, sizeof *ws->hyp_w);
        ws->hyp_tt = am_xcalloc(1, sizeof *ws->hyp_tt);
        ws->terms = am_xcalloc(1, sizeof *ws->terms);
        ws->sys = am_xcalloc(1, sizeof *ws->sys);
        ws->hyp_ptr = am_xcalloc(1, sizeof *ws->hyp_ptr);
        am_buf_init(&ws->hyp[0]);
        am_buf_init(&ws->hyp_tk[0]);
        am_tok_words_init(&ws->hyp_w[0]);
        ws->terms[0] = am_terms_ws_new();
        am_terms_ws_set_cancel(ws->terms[0], ws->cancel);
    }
    return ws->terms[0];
}

static void am_score_ws_reserve(am_score_ws *ws, size_t nsys)
{
    if (nsys <= ws->cap_sys)
        return;
    ws->hyp = am_xrealloc(ws->hyp, nsys * sizeof *ws->hyp);
    ws->hyp_tk = am_xrealloc(ws->hyp_tk, nsys * sizeof *ws->hyp_tk);
    ws->hyp_w = am_xrealloc(ws->hyp_w, nsys * sizeof *ws->hyp_w);
    ws->hyp_tt = am_xrealloc(ws->hyp_tt, nsys * sizeof *ws->hyp_tt);
    ws->terms = am_xrealloc(ws->terms, nsys * sizeof *ws->terms);
    ws->sys = am_xrealloc(ws->sys, nsys * sizeof *ws->sys);
    ws->hyp_ptr = am_xrealloc((void *)ws->hyp_ptr, nsys * sizeof *ws->hyp_ptr);
    for (size_t i = ws->cap_sys; i < nsys; i++) {
        am_buf_init(&ws->hyp[i]);
        am_buf_init(&ws->hyp_tk[i]);
        am_tok_words_init(&ws->hyp_w[i]);
        ws->terms[i] = am_terms_ws_new();
        am_terms_ws_set_cancel(ws->terms[i], ws->cancel);
    }
    ws->cap_sys = nsys;
}

/* ---- scoring --------------------------------------------------------- */

static int am_check_text(const char *s, const char *field, const char **err_field)
{
    int rc = am_text_validate(s, strlen(s), NULL);
    if (rc != AM_OK && err_field)
        *err_field = field;
    return rc;
}

/* Checks the references after the translation (count, text). */
static int am_check_more_refs(const am_seg_input *in, const char **err_field)
{
    if (in->n_more_refs > AM_SCORE_MAX_REFS - 1)
        return AM_ERR_RANGE;
    if (in->n_more_refs && !in->more_refs)
        return AM_ERR_INVALID;
    for (size_t r = 0; r < in->n_more_refs; r++) {
        if (!in->more_refs[r])
            return AM_ERR_INVALID;
        int rc = am_check_text(in->more_refs[r], "references", err_field);
        if (rc != AM_OK)
            return rc;
    }
    return AM_OK;
}

/* Gives the BLEU workspace a MeCab tagger over the scorer's model when
 * BLEU runs ja-mecab (made once per workspace and model). */
static int am_bleu_ctx(const am_scorer *s, am_score_ws *ws)
{
    if (!s->mecab)
        return AM_OK;
    if (ws->mecab_for != s->mecab) {
        am_mecab_ws_free(ws->mecab);
        ws->mecab = NULL;
        ws->mecab_for = NULL;
        int rc = am_mecab_ws_new(s->mecab, &ws->mecab);
        if (rc != AM_OK)
            return rc;
        ws->mecab_for = s->mecab;
    }
    am_tok_ctx ctx = {.ja_mecab = ws->mecab};
    am_bleu_ws_set_tok_ctx(ws->bleu, &ctx);
    return AM_OK;
}

/* Gives the workspace a friso workspace over the scorer's model when
 * recall runs zh-friso (made once per workspace and model). */
static int am_zhseg_ctx(const am_scorer *s, am_score_ws *ws)
{
    if (!s->zhseg || ws->zhseg_for == s->zhseg)
        return AM_OK;
    am_zhseg_ws_free(ws->zhseg);
    ws->zhseg = NULL;
    ws->zhseg_for = NULL;
    int rc = am_zhseg_ws_new(s->zhseg, &ws->zhseg);
    if (rc != AM_OK)
        return rc;
    ws->zhseg_for = s->zhseg;
    return AM_OK;
}

/* TER of one system against the references after the translation, when
 * there are any: sacreBLEU's fewest edits over all references and their
 * average length (the translation's edits, ter_edits, are one candidate).
 * TERm stays against the translation, whose terms it weights. */
static int am_ter_more_refs(am_score_ws *ws, const am_ter_opts *topts, am_sys_seg *r)
{
    r->ter_avg_ref_len = (double)r->ter_ref_len;
    if (ws->nrefs == 1)
        return AM_OK;
    double len_sum = (double)ws->ter_ref.n;
    for (size_t k = 1; k < ws->nrefs; k++) {
        am_toks *t = &ws->ter_xref[k - 1];
        am_toks_reset(t);
        int rc = am_ter_tokenize_opts(ws->refs[k], topts, t, NULL);
        double e;
        if (rc == AM_OK)
            rc = am_ter_edits(ws->ter, &ws->ter_hyp, t, NULL, &e);
        if (rc != AM_OK)
            return rc;
        if (e < r->ter_edits)
            r->ter_edits = e;
        len_sum += (double)t->n;
    }
    r->ter_avg_ref_len = len_sum / (double)ws->nrefs;
    return AM_OK;
}

/* BLEU of statistics under options so into *out (NAN if so is invalid,
 * which am_config_check prevents). */
static void am_bleu_value(const am_bleu_stats *st, const am_bleu_score_opts *so, double *out)
{
    am_bleu_result r;
    *out = am_bleu_compute(st, so, &r) == AM_OK ? r.score : NAN;
}

/* BLEU and chrF of one system against every reference. chrF++ gets its own
 * statistics with several references (sacreBLEU picks the best reference
 * by each metric's score). */
static int am_bleu_chrf(const am_scorer *s, am_score_ws *ws, const char *hyp,
                        const am_chrf_opts *copts, const am_chrf_score_opts *cso,
                        const am_chrf_score_opts *csopp, am_sys_seg *r)
{
    int rc = am_bleu_stats_add(&r->bleu, ws->bleu, &s->bleu, hyp, ws->refs, ws->nrefs);
    if (rc == AM_OK)
        rc = am_chrf_stats_add(&r->chrf, ws->chrf, copts, cso, hyp, ws->refs, ws->nrefs);
    if (rc == AM_OK && ws->nrefs > 1) {
        r->chrfpp_own = 1;
        rc = am_chrf_stats_add(&r->chrfpp, ws->chrf, copts, csopp, hyp, ws->refs, ws->nrefs);
    }
    if (rc != AM_OK)
        return rc;
    r->has_bleu = 1;
    am_bleu_value(&r->bleu, &s->bleu_sent, &r->sent_bleu);
    am_chrf_sentence_score(&r->chrf, cso, &r->sent_chrf);
    am_chrf_sentence_score(r->chrfpp_own ? &r->chrfpp : &r->chrf, csopp, &r->sent_chrfpp);
    return AM_OK;
}

/* Copies (or tag-strips) text into b. */
static void am_prepare(const am_scorer *s, const char *text, am_buf *b)
{
    if (s->cfg.profile == AM_PROFILE_STANDARD && s->cfg.strip_tags) {
        am_text_strip_tags(text, b);
    } else {
        am_buf_reset(b);
        am_buf_append(b, text, strlen(text));
    }
}

/* Per-reference-token TERm costs from the term instances' byte ranges.
 * Returns 1 when some token lies in a term span (costs are needed). */
static int am_term_costs(am_score_ws *ws, const am_scorer *s, const am_terms_seg *terms)
{
    size_t n = ws->ter_ref.n;
    if (!terms || terms->n_inst == 0 || n == 0)
        return 0;
    if (ws->cap_cost < n) {
        ws->cost = am_xrealloc(ws->cost, n * sizeof *ws->cost);
        ws->cap_cost = n;
    }
    /* the tokens' byte ranges in the prepared translation (am_ter_spans:
     * exact under every tokenizer option, also where normalization splits
     * or joins the text's words) */
    const size_t *tok_start = ws->ter_spans.start, *tok_end = ws->ter_spans.end;
    if (ws->ter_spans.n != n)
        return 0; /* cannot happen: one span per token */
    int any = 0;
    for (size_t j = 0; j < n; j++)
        ws->cost[j] = 1.0;
    /* token j costs term_cost when some instance's span overlaps it; the
     * token ranges ascend, so each span visits only its own tokens */
    for (size_t i = 0; i < terms->n_inst; i++) {
        const am_terms_span *sp = &terms->inst[i].ref;
        if (sp->byte_end <= sp->byte_start)
            continue;
        size_t lo = 0, hi = n; /* first j with tok_end[j] > byte_start */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (tok_end[mid] <= sp->byte_start)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < n && tok_start[j] < sp->byte_end; j++) {
            ws->cost[j] = s->cfg.term_cost;
            any = 1;
        }
    }
    return any;
}

/* Tokenizes the prepared translation and hypotheses once with the target
 * tokenizer for recall and terms (ws->ref_tt, ws->hyp_tt[0..nsys)); in the
 * standard profile, where recall's normalization and stopwords are the
 * terms matcher's, their tokens are normalized once for both as well
 * (ws->ref_w, ws->hyp_w). */
static int am_tokenize_shared(const am_scorer *s, am_score_ws *ws, size_t nsys)
{
    if (ws->tok_ok)
        return AM_OK;
    enum am_tok_kind kind = s->rcfg.tokenizer;
    int words = s->cfg.profile == AM_PROFILE_STANDARD;
    int rc = am_bleu_ctx(s, ws); /* the workspace's MeCab tagger, if any */
    if (rc == AM_OK)
        rc = am_zhseg_ctx(s, ws); /* its friso workspace, if any */
    if (rc != AM_OK)
        return rc;
    am_tok_ctx ctx = {.ja_mecab = ws->mecab, .zh_friso = ws->zhseg};
    rc = am_tok_tokenize_ctx(kind, &ctx, am_buf_str(&ws->ref), &ws->ref_tk);
    if (rc == AM_OK && words)
        rc = am_recall_tok_words(&s->rcfg, am_buf_str(&ws->ref_tk), &ws->ref_w);
    if (rc != AM_OK)
        return rc;
    ws->ref_tt = (am_tok_text){am_buf_str(&ws->ref), am_buf_str(&ws->ref_tk), kind,
                               words ? &ws->ref_w : NULL};
    for (size_t i = 0; i < nsys; i++) {
        if ((rc = am_tok_tokenize_ctx(kind, &ctx, ws->hyp_ptr[i], &ws->hyp_tk[i])) != AM_OK)
            return rc;
        if (words && (rc = am_recall_tok_words(&s->rcfg, am_buf_str(&ws->hyp_tk[i]),
                                               &ws->hyp_w[i])) != AM_OK)
            return rc;
        ws->hyp_tt[i] = (am_tok_text){ws->hyp_ptr[i], am_buf_str(&ws->hyp_tk[i]), kind,
                                      words ? &ws->hyp_w[i] : NULL};
    }
    ws->tok_ok = 1;
    return AM_OK;
}

#define AM_PART_RECALL 1 /* recall against the history (order-dependent) */
#define AM_PART_REST 2 /* terms, TER/TERm, BLEU, chrF (order-independent) */
#define AM_PART_TEXT 4 /* BLEU and chrF alone (am_score_segment_text) */

/* am_score_segment_text's part, after am_score_parts prepared the texts:
 * BLEU and chrF of each system, and TER's average reference length with
 * several references (tokenizing them; no edit distance). */
static int am_score_text(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                         am_seg_result *out)
{
    am_ter_opts topts;
    am_config_ter_opts(&s->cfg, &topts);
    am_chrf_opts copts;
    am_chrf_score_opts cso, csopp;
    am_config_chrf_opts(&s->cfg, 0, &copts, &cso);
    am_config_chrf_opts(&s->cfg, 1, &copts, &csopp);
    int rc = am_bleu_ctx(s, ws);
    double len_sum = 0;
    for (size_t k = 0; rc == AM_OK && ws->nrefs > 1 && k < ws->nrefs; k++) {
        am_toks *t = k ? &ws->ter_xref[k - 1] : &ws->ter_ref;
        am_toks_reset(t);
        rc = am_ter_tokenize_opts(ws->refs[k], &topts, t, NULL);
        len_sum += (double)t->n;
    }
    for (size_t i = 0; rc == AM_OK && i < in->nsys; i++) {
        am_sys_seg *r = &ws->sys[i];
        const char *hyp = ws->hyp_ptr[i];
        memset(r, 0, sizeof *r);
        if (am_cancel_spend(ws->cancel, 64 * (uint64_t)(strlen(hyp) + ws->ref.len + 1)))
            return AM_ERR_CANCELLED;
        r->ter_avg_ref_len = ws->nrefs > 1 ? len_sum / (double)ws->nrefs : 0;
        am_bleu_stats_init(&r->bleu);
        am_chrf_stats_init(&r->chrf);
        am_chrf_stats_init(&r->chrfpp);
        rc = am_bleu_chrf(s, ws, hyp, &copts, &cso, &csopp, r);
    }
    if (rc != AM_OK)
        return rc;
    out->sys = ws->sys;
    out->nsys = in->nsys;
    return AM_OK;
}

/* am_score_segment's work, the parts selected by `parts`. */
/* Length (issue 15): the fixed order of docs/metrics.md per segment (validate,
 * prepare, recall, terms, then TER/TERm, BLEU and chrF per system), with
 * the parts flags selecting passes; each pass is one call. */
static int am_score_parts(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                          am_recall_lookup_fn lookup, void *lookup_ctx, am_seg_result *out,
                          const char **err_field, int parts)
{
    int rc;
    memset(out, 0, sizeof *out);
    if (in->nsys > AM_SCORE_MAX_SYSTEMS)
        return AM_ERR_RANGE;
    if (!in->translation)
        return AM_ERR_INVALID;
    if (in->source && (rc = am_check_text(in->source, "source", err_field)) != AM_OK)
        return rc;
    if ((rc = am_check_text(in->translation, "translation", err_field)) != AM_OK)
        return rc;
    for (size_t i = 0; i < in->nsys; i++) {
        if (!in->hyps[i])
            return AM_ERR_INVALID;
        if ((rc = am_check_text(in->hyps[i], "hypothesis", err_field)) != AM_OK)
            return rc;
    }
    if ((rc = am_check_more_refs(in, err_field)) != AM_OK)
        return rc;
    am_score_ws_reserve(ws, in->nsys ? in->nsys : 1);

    am_prepare(s, in->source ? in->source : "", &ws->src);
    am_prepare(s, in->translation, &ws->ref);
    for (size_t i = 0; i < in->nsys; i++) {
        am_prepare(s, in->hyps[i], &ws->hyp[i]);
        ws->hyp_ptr[i] = am_buf_str(&ws->hyp[i]);
    }
    const char *ref = am_buf_str(&ws->ref);
    ws->refs[0] = ref;
    for (size_t r = 0; r < in->n_more_refs; r++) {
        am_prepare(s, in->more_refs[r], &ws->xref[r]);
        ws->refs[r + 1] = am_buf_str(&ws->xref[r]);
    }
    ws->nrefs = 1 + in->n_more_refs;
    ws->tok_ok = 0;
    if (parts & AM_PART_TEXT)
        return am_score_text(s, ws, in, out);

    /* Recall: one pass for every system (shared words and shots). */
    if (parts & AM_PART_RECALL) {
        if (s->cfg.profile == AM_PROFILE_SIMIANER2019) {
            rc = am_simianer_segment(&s->rcfg, ref, ws->hyp_ptr, in->nsys, lookup, lookup_ctx,
                                     &ws->recall);
        } else {
            rc = am_tokenize_shared(s, ws, in->nsys);
            if (rc == AM_OK)
                rc = am_recall_score_tok(&s->rcfg, &ws->ref_tt, ws->hyp_tt, in->nsys, lookup,
                                         lookup_ctx, &ws->recall);
        }
        if (rc != AM_OK)
            return rc;
        out->recall = &ws->recall;
        if (!(parts & AM_PART_REST))
            return AM_OK;
    }

    am_ter_opts topts;
    am_config_ter_opts(&s->cfg, &topts);
    rc = am_ter_tokenize_opts(ref, &topts, &ws->ter_ref, &ws->ter_spans);
    if (rc != AM_OK)
        return rc;
    int use_terms = am_terms_lex_size(s->lex) > 0 || in->n_annots > 0;
    if (use_terms && (rc = am_tokenize_shared(s, ws, in->nsys)) != AM_OK)
        return rc;

    am_chrf_opts copts;
    am_chrf_score_opts cso, csopp;
    am_config_chrf_opts(&s->cfg, 0, &copts, &cso);
    am_config_chrf_opts(&s->cfg, 1, &copts, &csopp);
    if ((rc = am_bleu_ctx(s, ws)) != AM_OK)
        return rc;

    for (size_t i = 0; i < in->nsys; i++) {
        am_sys_seg *r = &ws->sys[i];
        const char *hyp = ws->hyp_ptr[i];
        memset(r, 0, sizeof *r);
        /* BLEU and chrF are linear in the text: their work is accounted
         * here, once per system, by the bytes they read */
        if (am_cancel_spend(ws->cancel, 64 * (uint64_t)(strlen(hyp) + ws->ref.len + 1)))
            return AM_ERR_CANCELLED;
        if (parts & AM_PART_RECALL)
            r->recall = ws->recall.sys[i];

        am_terms_cfg tc; /* only the windows matter for the totals */
        am_terms_cfg_default(&tc);
        tc.n_windows = s->cfg.nwindows;
        for (size_t w = 0; w < s->cfg.nwindows; w++)
            tc.windows[w] = (size_t)s->cfg.windows[w];
        am_terms_totals_init(&r->terms_totals, &tc);
        if (use_terms) {
            am_terms_ws_set_max_occurrences(ws->terms[i], in->max_term_occurrences);
            /* recall's tokens, unless terms run another tokenizer (zh
             * where recall runs ja-mecab or zh-friso): then the matcher
             * tokenizes */
            am_tok_text th = {ws->hyp_ptr[i], NULL, s->terms_tok, NULL};
            am_tok_text tr = {am_buf_str(&ws->ref), NULL, s->terms_tok, NULL};
            int own = s->terms_tok != s->rcfg.tokenizer;
            rc = am_terms_score_tok(ws->terms[i], s->lex, am_buf_str(&ws->src),
                                    own ? &th : &ws->hyp_tt[i], own ? &tr : &ws->ref_tt, in->annots,
                                    in->n_annots, &r->terms);
            if (rc != AM_OK)
                return rc;
            rc = am_terms_totals_add(&r->terms_totals, &r->terms->totals);
            if (rc != AM_OK)
                return rc;
        }

        am_toks_reset(&ws->ter_hyp);
        if ((rc = am_ter_tokenize_opts(hyp, &topts, &ws->ter_hyp, NULL)) != AM_OK)
            return rc;
        int weighted = am_term_costs(ws, s, r->terms);
        rc = am_ter_pair(ws->ter, &ws->ter_hyp, &ws->ter_ref, weighted ? ws->cost : NULL,
                         &r->ter_edits, &r->term_edits);
        if (rc != AM_OK)
            return rc;
        r->ter_ref_len = ws->ter_ref.n;
        if ((rc = am_ter_more_refs(ws, &topts, r)) != AM_OK)
            return rc;
        r->sent_ter = am_ter_score(r->ter_edits, r->ter_avg_ref_len);
        r->sent_term = am_ter_score(r->term_edits, (double)r->ter_ref_len);

        /* An empty reference scores 0.0 (sacreBLEU >= 2.2), never null. */
        am_bleu_stats_init(&r->bleu);
        am_chrf_stats_init(&r->chrf);
        am_chrf_stats_init(&r->chrfpp);
        if ((rc = am_bleu_chrf(s, ws, hyp, &copts, &cso, &csopp, r)) != AM_OK)
            return rc;
    }
    out->sys = ws->sys;
    out->nsys = in->nsys;
    return AM_OK;
}

int am_score_segment(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                     am_recall_lookup_fn lookup, void *lookup_ctx, am_seg_result *out,
                     const char **err_field)
{
    return am_score_parts(s, ws, in, lookup, lookup_ctx, out, err_field,
                          AM_PART_RECALL | AM_PART_REST);
}

int am_score_segment_rest(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                          am_seg_result *out, const char **err_field)
{
    return am_score_parts(s, ws, in, NULL, NULL, out, err_field, AM_PART_REST);
}

int am_score_segment_text(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                          am_seg_result *out, const char **err_field)
{
    return am_score_parts(s, ws, in, NULL, NULL, out, err_field, AM_PART_TEXT);
}

int am_score_segment_recall(const am_scorer *s, am_score_ws *ws, const am_seg_input *in,
                            am_recall_lookup_fn lookup, void *lookup_ctx, const am_recall_seg **out,
                            const char **err_field)
{
    am_seg_result res;
    int rc = am_score_parts(s, ws, in, lookup, lookup_ctx, &res, err_field, AM_PART_RECALL);
    *out = rc == AM_OK ? res.recall : NULL;
    return rc;
}

/* ---- totals ---------------------------------------------------------- */

void am_totals_init(am_totals *t, const am_scorer *s)
{
    memset(t, 0, sizeof *t);
    am_recall_totals_init(&t->recall, s->cfg.k);
    am_terms_cfg tc;
    am_terms_cfg_default(&tc);
    tc.n_windows = s->cfg.nwindows;
    for (size_t w = 0; w < s->cfg.nwindows; w++)
        tc.windows[w] = (size_t)s->cfg.windows[w];
    am_terms_totals_init(&t->terms, &tc);
    am_ter_stats_init(&t->ter);
    am_ter_stats_init(&t->term);
    am_bleu_stats_init(&t->bleu);
    am_chrf_stats_init(&t->chrf);
    am_chrf_opts co;
    am_config_chrf_opts(&s->cfg, 0, &co, &t->chrf_so);
    am_config_chrf_opts(&s->cfg, 1, &co, &t->chrfpp_so);
    am_chrf_stats_init(&t->chrfpp);
    am_config_bleu_score_opts(&s->cfg, 0, &t->bleu_so);
}

void am_totals_add(am_totals *t, const am_sys_seg *seg)
{
    t->segments++;
    am_recall_totals_merge(&t->recall, &seg->recall);
    am_terms_totals_add(&t->terms, &seg->terms_totals);
    double ter_len = seg->ter_avg_ref_len > 0 ? seg->ter_avg_ref_len : (double)seg->ter_ref_len;
    am_ter_stats_add(&t->ter, seg->ter_edits, ter_len);
    am_ter_stats_add(&t->term, seg->term_edits, seg->ter_ref_len);
    if (seg->has_bleu) {
        am_bleu_merge(&t->bleu, &seg->bleu);
        am_chrf_merge(&t->chrf, &seg->chrf);
        am_chrf_merge(&t->chrfpp, seg->chrfpp_own ? &seg->chrfpp : &seg->chrf);
        t->bleu_segments++;
        t->chrfpp_segments++;
    }
}

int am_totals_merge(am_totals *dst, const am_totals *src)
{
    am_totals tmp = *dst;
    if (am_recall_totals_merge(&tmp.recall, &src->recall) != AM_OK ||
        am_terms_totals_add(&tmp.terms, &src->terms) != AM_OK ||
        am_bleu_merge(&tmp.bleu, &src->bleu) != AM_OK ||
        am_chrf_merge(&tmp.chrf, &src->chrf) != AM_OK ||
        am_chrf_merge(&tmp.chrfpp, &src->chrfpp) != AM_OK)
        return AM_ERR_INVALID;
    tmp.segments += src->segments;
    tmp.bleu_segments += src->bleu_segments;
    tmp.chrfpp_segments += src->chrfpp_segments;
    am_ter_stats_merge(&tmp.ter, &src->ter);
    am_ter_stats_merge(&tmp.term, &src->term);
    *dst = tmp;
    return AM_OK;
}

static double am_null_if_neg(double x)
{
    return x < 0 ? NAN : x;
}

void am_totals_scores_compute(const am_totals *t, am_totals_scores *out)
{
    for (size_t i = 0; i <= AM_MAX_K; i++)
        out->r[i] = NAN;
    for (int i = 0; i <= t->recall.k; i++)
        out->r[i] = am_null_if_neg(am_recall_score(&t->recall.r[i]));
    out->r01 = am_null_if_neg(am_recall_score(&t->recall.r01));
    am_terms_totals_scores(&t->terms, &out->terms);
    if (t->segments > 0) {
        out->ter = am_ter_stats_score(&t->ter);
        out->term = am_ter_stats_score(&t->term);
        out->one_minus_term = 1.0 - out->term;
    } else {
        out->ter = out->term = out->one_minus_term = NAN;
    }
    out->bleu = NAN;
    if (t->bleu_segments > 0) {
        am_bleu_score_opts bso = t->bleu_so;
        if (bso.max_order == 0) /* not from am_totals_init */
            am_bleu_score_opts_init(&bso, 0);
        am_bleu_value(&t->bleu, &bso, &out->bleu);
    }
    out->chrf = out->chrfpp = NAN;
    if (t->bleu_segments > 0) {
        am_chrf_score_opts so[2] = {t->chrf_so, t->chrfpp_so};
        for (int k = 0; k < 2; k++)
            if (so[k].char_order + so[k].word_order == 0) /* not from am_totals_init */
                am_chrf_score_opts_init(&so[k], k ? 2 : 0);
        am_chrf_score(&t->chrf, &so[0], &out->chrf);
        /* chrF++'s own statistics when every segment added them (a record
         * read back from the store has none: they equal chrf's there) */
        int own = t->chrfpp_segments == t->bleu_segments;
        am_chrf_score(own ? &t->chrfpp : &t->chrf, &so[1], &out->chrfpp);
    }
}
