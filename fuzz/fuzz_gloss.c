/* fuzz_gloss.c — the CSV/TSV/JSON glossary importers (am_gloss_parse). The
 * first byte picks the format (auto, csv, tsv, json) and whether small
 * limits apply (so the limit paths are reached too); the rest is the file. */
#include "fuzz.h"
#include "glossary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const enum am_gloss_format fmts[] = {AM_GLOSS_AUTO, AM_GLOSS_CSV, AM_GLOSS_TSV,
                                                AM_GLOSS_JSON};
    enum am_gloss_format f = fmts[data[0] & 3];
    am_gloss_limits lim = am_gloss_limits_default();
    if (data[0] & 4) {
        lim.max_entries = 3;
        lim.max_field_bytes = 16;
        lim.max_targets = 2;
        lim.max_columns = 4;
    }
    am_gloss g;
    am_gloss_init(&g);
    am_gloss_report rep;
    (void)am_gloss_parse((const char *)data + 1, size - 1, f, &lim, &g, &rep);
    am_gloss_cleanup(&g);
    return 0;
}
