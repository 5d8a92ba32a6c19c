/* fuzz_session_opts.c — a session-creation body (POST /v1/sessions):
 * "options" (an object), "stopword_list" (array of non-empty strings) and an
 * inline "glossary", checked as server/api/api_sessions.c does, then built into a
 * scorer with am_sessions_build_scorer (server/live/sessions.h), which parses
 * every option and the glossary; when that works, one segment is scored. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "json.h"
#include "score.h"
#include "sessions.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (am_text_validate((const char *)data, size, NULL) != AM_OK)
        return 0;
    json_error_t jerr;
    json_t *body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(body)) {
        json_decref(body);
        return 0;
    }
    json_t *opts = json_object_get(body, "options");
    char *opts_txt = am_json_dump(json_is_object(opts) ? opts : json_object_get(body, "x"));
    if (!json_is_object(opts)) {
        free(opts_txt);
        opts_txt = strdup("{}");
    }
    char *sw_txt = NULL, *gl_txt = NULL;
    json_t *swl = json_object_get(body, "stopword_list");
    int ok = 1;
    if (swl) {
        ok = json_is_array(swl);
        for (size_t i = 0; ok && i < json_array_size(swl); i++)
            ok = json_is_string(json_array_get(swl, i)) &&
                 json_string_length(json_array_get(swl, i)) > 0;
        if (ok)
            sw_txt = am_json_dump(swl);
    }
    json_t *gl = json_object_get(body, "glossary");
    if (ok && gl)
        gl_txt = am_json_dump(gl);
    if (ok && opts_txt) {
        am_scorer *sc = NULL;
        am_buf err;
        am_buf_init(&err);
        if (am_sessions_build_scorer(opts_txt, sw_txt, gl_txt, NULL, &sc, &err) == AM_OK && sc) {
            (void)am_scorer_signature(sc);
            am_scorer_free(sc);
        }
        am_buf_cleanup(&err);
    }
    free(gl_txt);
    free(sw_txt);
    free(opts_txt);
    json_decref(body);
    return 0;
}
