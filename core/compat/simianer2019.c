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
        if (am_sw_contains(sw, w) || am_text_is_rk_punct(w) || am_text_is_digits(w))
            free(w);
        else
            out->v[keep++] = w;
    }
    out->n = keep;
    return AM_OK;
}

int am_simianer_segment(const am_recall_config *cfg, const char *translation,
                        const char *const *hyps, size_t nsys, am_recall_lookup_fn lookup,
                        void *lookup_ctx, am_recall_seg *out)
{
    if (!out)
        return AM_ERR_INVALID;
    am_recall_seg_cleanup(out);
    if (!cfg || !translation || (nsys > 0 && !hyps))
        return AM_ERR_INVALID;
    am_toks ref;
    am_toks_init(&ref);
    am_toks *h = am_xmalloc((nsys ? nsys : 1) * sizeof *h);
    for (size_t s = 0; s < nsys; s++)
        am_toks_init(&h[s]);
    int rc = am_simianer_content_words(cfg->stopwords, translation, &ref);
    for (size_t s = 0; s < nsys && rc == AM_OK; s++)
        rc = hyps[s] ? am_simianer_content_words(cfg->stopwords, hyps[s], &h[s]) : AM_ERR_INVALID;
    if (rc == AM_OK)
        rc = am_recall_segment(cfg, &ref, h, nsys, lookup, lookup_ctx, out);
    for (size_t s = 0; s < nsys; s++)
        am_toks_cleanup(&h[s]);
    free(h);
    am_toks_cleanup(&ref);
    return rc;
}
