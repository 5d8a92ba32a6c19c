/* simianer2019.c — rk.rb's content words on the shared recall core. */
#include "compat/simianer2019.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

int am_simianer_content_words(const am_sw *sw, const char *text, am_toks *out)
{
    if (!text || !out)
        return AM_ERR_INVALID;
    int rc = am_text_validate(text, strlen(text), NULL);
    if (rc != AM_OK)
        return rc;
    /* Split straight into out, then drop the non-content tokens in place. */
    size_t n0 = out->n, keep = out->n;
    am_toks_split_ascii(out, text);
    for (size_t i = n0; i < out->n; i++) {
        char *w = out->v[i];
        if (!(am_sw_contains(sw, w) || am_text_is_rk_punct(w) || am_text_is_digits(w)))
            out->v[keep++] = w; /* dropped tokens stay in out's storage */
    }
    out->n = keep;
    return AM_OK;
}

/* am_recall_config.extract adapter: rk.rb's content words. */
static int am_simianer_extract(const am_recall_config *cfg, const char *text, am_toks *out)
{
    return am_simianer_content_words(cfg->stopwords, text, out);
}

int am_simianer_segment(const am_recall_config *cfg, const char *translation,
                        const char *const *hyps, size_t nsys, am_recall_lookup_fn lookup,
                        void *lookup_ctx, am_recall_seg *out)
{
    if (!cfg) {
        if (out)
            am_recall_seg_cleanup(out);
        return AM_ERR_INVALID;
    }
    am_recall_config c = *cfg;
    c.extract = am_simianer_extract;
    return am_recall_score_texts(&c, translation, hyps, nsys, lookup, lookup_ctx, out);
}
