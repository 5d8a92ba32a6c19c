/* fuzz_seg_req.c — a segment request body as the service reads it
 * (server/http/http.c: UTF-8/NUL check, json_loadb with JSON_REJECT_DUPLICATES,
 * an object required), then am_seg_req_parse (server/live/ingest.h) with the
 * default configuration, once as a POST and once as a PUT to id "s1"; a
 * request that parses is scored (am_score_segment: tokenizers, recall,
 * glossary terms, TER, BLEU, chrF) by a scorer with a two-entry glossary. */
#include <jansson.h>
#include <string.h>

#include "fuzz.h"
#include "ingest.h"
#include "score.h"
#include "sessions.h"
#include "srvconfig.h"
#include "text.h"

/* The history: a word was seen before in (its length mod 3) segments. */
static int fz_lookup(void *ctx, const char *word, int64_t *occ_before)
{
    (void)ctx;
    *occ_before = (int64_t)(strlen(word) % 3);
    return AM_OK;
}

/* Scores a parsed request. The scorer and workspace are built on first use
 * and kept for the life of the process (reachable, never freed). */
static void fz_score(const am_seg_req *r)
{
    static am_scorer *sc;
    static am_score_ws *ws;
    if (!sc) {
        am_buf err;
        am_buf_init(&err);
        if (am_sessions_build_scorer(
                "{\"source_lang\":\"en\",\"target_lang\":\"fr\"}", NULL,
                "[{\"source\":\"virus\",\"targets\":[\"virus\"]},"
                "{\"source\":\"social distancing\",\"targets\":[\"distanciation sociale\"],"
                "\"forbidden\":false}]",
                NULL, &sc, &err) != AM_OK)
            sc = NULL;
        am_buf_cleanup(&err);
        if (!sc)
            return;
        ws = am_score_ws_new();
    }
    am_seg_input in = {r->source, r->translation, r->hyp, r->nsys, r->annots, r->n_annots,
                       0,         NULL,           0};
    am_seg_result res;
    const char *field = NULL;
    (void)am_score_segment(sc, ws, &in, fz_lookup, NULL, &res, &field);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (am_text_validate((const char *)data, size, NULL) != AM_OK)
        return 0;
    json_error_t jerr;
    json_t *j =
        json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!j)
        return 0;
    if (json_is_object(j)) {
        am_srv_config cfg;
        am_srv_config_init(&cfg);
        cfg.max_systems = 4;
        for (int put = 0; put < 2; put++) {
            am_seg_req r;
            am_fail f;
            am_fail_init(&f);
            if (am_seg_req_parse(j, put ? "s1" : NULL, &cfg, &r, &f) == AM_OK && !put)
                fz_score(&r);
            am_seg_req_cleanup(&r);
            am_fail_cleanup(&f);
        }
    }
    json_decref(j);
    return 0;
}
