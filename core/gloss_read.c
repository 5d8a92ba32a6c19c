/* gloss_read.c — reading a glossary document: format detection (AM_GLOSS_AUTO)
 * and the dispatch to the CSV/TSV/JSON readers of glossary.c or the TBX
 * reader of tbx.c (see glossary.h). Sits above both, so that neither of
 * them calls the other: tbx.c builds through glossary.c's public builder
 * (am_gloss_add) and the shared helpers of gloss_internal.h, and
 * glossary.c knows nothing of TBX. */
#include "glossary.h"

#include "gloss_internal.h"
#include "textenc.h"

#include <string.h>

static int starts_with(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

int am_gloss_parse(const char *buf, size_t len, enum am_gloss_format format,
                   const am_gloss_limits *limits, am_gloss *out, am_gloss_report *report)
{
    return am_gloss_parse_langs(buf, len, format, NULL, NULL, limits, out, report);
}

/* True when buf[0..len) is an XML document: "<?xml", "<martif" or "<tbx"
 * after a UTF-8 BOM and whitespace, or any '<' start in UTF-16/32 (whose
 * bytes are not UTF-8 at all). */
static int gloss_is_xml(const char *buf, size_t len)
{
    size_t i = len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < len && am_gloss_is_space(buf[i]))
        i++;
    if (starts_with(buf + i, len - i, "<?xml") || starts_with(buf + i, len - i, "<martif") ||
        starts_with(buf + i, len - i, "<tbx"))
        return 1;
    return am_textenc_looks_xml(buf, len) && len >= 2 &&
           (!buf[0] || !buf[1] || (unsigned char)buf[0] >= 0xFE);
}

/* Complexity (issue 15): argument checks, the BOM, format detection for
 * AM_GLOSS_AUTO (TBX, JSON, CSV or TSV) and the dispatch to each reader. */
int am_gloss_parse_langs(const char *buf, size_t len, enum am_gloss_format format,
                         const char *source_lang, const char *target_lang,
                         const am_gloss_limits *limits, am_gloss *out, am_gloss_report *report)
{
    am_gloss_report dummy = {0};
    am_gloss_report *rep = report ? report : &dummy;
    memset(rep, 0, sizeof *rep);
    am_gloss_limits lim = limits ? *limits : am_gloss_limits_default();
    if ((!buf && len) || !out || out->n != 0)
        return am_gloss_rep_err(rep, AM_ERR_INVALID, 0, 0, "invalid argument");
    if (format < AM_GLOSS_AUTO || format > AM_GLOSS_TBX)
        return am_gloss_rep_err(rep, AM_ERR_INVALID, 0, 0, "unknown glossary format");
    if (len > lim.max_bytes)
        return am_gloss_rep_err(rep, AM_ERR_RANGE, 0, 0, "glossary larger than %zu bytes",
                                lim.max_bytes);
    if (!buf)
        buf = "";
    /* an XML document (TBX) may be in UTF-16 or declare another encoding:
     * tbx.c decodes it, so it goes there before the UTF-8 check */
    if (format == AM_GLOSS_TBX || (format == AM_GLOSS_AUTO && gloss_is_xml(buf, len))) {
        rep->format = AM_GLOSS_TBX;
        return am_gloss_parse_tbx(buf, len, source_lang, target_lang, &lim, out, rep);
    }
    int rc = am_gloss_check_utf8(buf, len, rep);
    if (rc)
        return rc;
    /* UTF-8 byte order mark */
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        buf += 3;
        len -= 3;
    }
    if (format == AM_GLOSS_AUTO) {
        size_t i = 0;
        while (i < len && am_gloss_is_space(buf[i]))
            i++;
        if (starts_with(buf + i, len - i, "<?xml") || starts_with(buf + i, len - i, "<martif") ||
            starts_with(buf + i, len - i, "<tbx")) {
            format = AM_GLOSS_TBX;
        } else if (i < len && (buf[i] == '[' || buf[i] == '{')) {
            format = AM_GLOSS_JSON;
        } else {
            format = AM_GLOSS_CSV;
            for (size_t j = 0; j < len && buf[j] != '\n'; j++)
                if (buf[j] == '\t') {
                    format = AM_GLOSS_TSV;
                    break;
                }
        }
    }
    rep->format = format;
    if (format == AM_GLOSS_TBX) {
        /* validated and BOM-stripped above; tbx.c re-checks (cheap) and
         * fills the report itself */
        rc = am_gloss_parse_tbx(buf, len, NULL, NULL, &lim, out, rep);
    } else if (format == AM_GLOSS_JSON) {
        rc = am_gloss_read_json(buf, len, &lim, out, rep);
    } else {
        rc = am_gloss_read_csv(buf, len, format == AM_GLOSS_TSV ? '\t' : ',', &lim, source_lang,
                               target_lang, out, rep);
    }
    if (rc)
        am_gloss_cleanup(out);
    return rc;
}
