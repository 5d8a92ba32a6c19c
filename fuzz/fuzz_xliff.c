/* fuzz_xliff.c — the streaming XLIFF reader (am_xliff_each, libxml2's
 * xmlTextReader) and its collector am_xliff_parse. The first byte picks
 * the entry point and whether the callback stops early; the rest is the
 * document. */
#include "fuzz.h"
#include "xliff.h"

/* Counts units and stops after the first when ctx says so. */
static int unit(void *ctx, const am_xliff_doc *info, const am_xliff_seg *s,
                const am_xliff_skip *skip)
{
    int *stop = ctx;
    (void)info;
    (void)skip;
    if (s && s->nhyp && !s->id[0])
        return 2; /* never: ids are never empty */
    return *stop;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *doc = (const char *)data + 1;
    am_xliff_doc d;
    am_xliff_report rep;
    if (data[0] & 1) {
        (void)am_xliff_parse(doc, size - 1, &d, &rep);
    } else {
        int stop = (data[0] & 2) ? 1 : 0;
        (void)am_xliff_each(doc, size - 1, unit, &stop, &d, &rep);
    }
    am_xliff_free(&d);
    return 0;
}
