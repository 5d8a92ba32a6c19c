/* fuzz_tbx.c — the TBX glossary importer (am_gloss_parse_tbx, libxml2). The
 * first byte picks the languages (auto, en→fr, fr→en, en→en) and small or
 * default limits; the rest is the document. */
#include "fuzz.h"
#include "glossary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const src[] = {NULL, "en", "fr", "en"};
    static const char *const tgt[] = {NULL, "fr", "en", "en-GB"};
    unsigned sel = data[0] & 3;
    am_gloss_limits lim = am_gloss_limits_default();
    if (data[0] & 4) {
        lim.max_entries = 3;
        lim.max_field_bytes = 16;
        lim.max_targets = 2;
    }
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report rep;
    (void)am_gloss_parse_tbx((const char *)data + 1, size - 1, src[sel], tgt[sel], &lim, &g, &rep);
    am_gloss_cleanup(&g);
    return 0;
}
