/* fuzz_sgml.c — the WMT21 SGML reader (core/sgml.h) on any bytes; on
 * success every segment is looked up by id. */
#include "fuzz.h"
#include "sgml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    am_sgml_doc doc;
    size_t line = 0;
    if (am_sgml_parse((const char *)data, size, &doc, &line) == AM_OK) {
        for (size_t i = 0; i < doc.nsegs && i < 64; i++)
            (void)am_sgml_find_seg(&doc, doc.segs[i].id);
    }
    am_sgml_free(&doc);
    return 0;
}
