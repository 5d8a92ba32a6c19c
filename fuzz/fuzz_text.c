/* fuzz_text.c — the text pipeline of core/text.h: validation of any bytes,
 * then (valid input only) tag stripping, every normalization form with and
 * without case folding, tokenization (intl) and the token classes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "text.h"
#include "tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    int rc = am_text_validate((const char *)data, size, &off);
    if (rc != AM_OK)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    am_buf stripped, norm;
    am_buf_init(&stripped);
    am_buf_init(&norm);
    am_toks toks;
    am_toks_init(&toks);
    enum am_norm n;
    (void)am_text_norm_parse(s, &n);
    (void)am_text_strip_tags(s, &stripped);
    static const enum am_norm norms[] = {AM_NORM_NFKC, AM_NORM_NFC, AM_NORM_NONE};
    for (size_t i = 0; i < 3; i++) {
        for (int cf = 0; cf < 2; cf++) {
            if (am_text_normalize(am_buf_str(&stripped), norms[i], cf, &norm) != AM_OK)
                continue;
            am_toks_reset(&toks);
            (void)am_tok_split(AM_TOK_INTL, am_buf_str(&norm), &toks);
            for (size_t t = 0; t < toks.n; t++) {
                (void)am_text_is_punct_sym(toks.v[t]);
                (void)am_text_is_digits(toks.v[t]);
                (void)am_text_is_rk_punct(toks.v[t]);
            }
        }
    }
    am_toks_cleanup(&toks);
    am_buf_cleanup(&norm);
    am_buf_cleanup(&stripped);
    free(s);
    return 0;
}
