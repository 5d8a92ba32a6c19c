/* fuzz_tok.c — the five tokenizers of core/tok.h on any valid UTF-8 input
 * (the tokenizers' contract: valid UTF-8 without NUL), plus am_tok_parse and
 * am_tok_default_for_lang on the raw text. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "text.h"
#include "tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    enum am_tok_kind k;
    (void)am_tok_parse(s, &k);
    (void)am_tok_default_for_lang(s);
    if (am_text_validate(s, size, NULL) == AM_OK) {
        static const enum am_tok_kind kinds[] = {AM_TOK_13A, AM_TOK_INTL, AM_TOK_ZH, AM_TOK_CHAR,
                                                 AM_TOK_NONE};
        am_buf out;
        am_buf_init(&out);
        am_toks toks;
        am_toks_init(&toks);
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            (void)am_tok_tokenize(kinds[i], s, &out);
            am_toks_reset(&toks);
            (void)am_tok_split(kinds[i], s, &toks);
        }
        am_toks_cleanup(&toks);
        am_buf_cleanup(&out);
    }
    free(s);
    return 0;
}
