/* api_import.c — POST /v1/sessions/{id}/import: an XLIFF 1.2/2.x file's
 * confirmed units replayed into a session in document order through the
 * segment POST path (am_seg_req_parse + am_ingest_post), so every guarantee
 * of a POST holds per unit. Unit ids are the segment ids (see xliff.h), so
 * a re-import counts nothing twice and answers the same summary with the
 * units as "already_present". The file is streamed (am_xliff_each): it is
 * validated whole first (bad input stores nothing), then each unit is
 * posted as it is read; no tree and no list of units is kept. */
#include "api.h"

#include "ingest.h"
#include "json.h"
#include "xliff.h"

#include <stdlib.h>
#include <string.h>

#define AM_IMPORT_MAX_SKIPS 100 /* skip reasons listed in an answer */

static int am_import_media(const char *ct)
{
    return ct && (!strcmp(ct, "application/xliff+xml") || !strcmp(ct, "application/x-xliff+xml") ||
                  !strcmp(ct, "application/x-xliff"));
}

/* Records a skipped unit into skips (listed up to AM_IMPORT_MAX_SKIPS) and
 * counts it. reason is copied. */
static void am_import_skip(json_t *skips, int64_t *nskipped, const char *id, const char *reason)
{
    if (json_array_size(skips) < AM_IMPORT_MAX_SKIPS)
        json_array_append_new(skips, json_pack("{ssss}", "id", id, "reason", reason));
    (*nskipped)++;
}

/* The segment body of confirmed unit s of doc d (caller decrefs). */
static json_t *am_import_body(const am_xliff_doc *d, const am_xliff_seg *s)
{
    json_t *hyps = json_object();
    for (size_t k = 0; k < s->nhyp; k++)
        json_object_set_new(hyps, d->systems[s->sys[k]], json_string(s->hyp[k]));
    json_t *b = json_pack("{ssssssso}", "id", s->id, "translation", s->target, "source", s->source,
                          "hypotheses", hyps);
    return b;
}

/* The state of one import, carried through am_xliff_each's callback. */
typedef struct import_state {
    am_req *req; /* borrowed */
    am_resp *resp; /* borrowed */
    json_t *skips; /* owned */
    int64_t imported, present, skipped;
    int failed; /* a problem was answered; the reading stopped */
} import_state;

/* One unit of the file (am_xliff_unit_fn): a skip is recorded, a confirmed
 * segment goes through the segment POST path. Returns 1 to stop after a
 * store failure (the problem is answered), else 0. */
static int import_unit(void *ctx, const am_xliff_doc *d, const am_xliff_seg *s,
                       const am_xliff_skip *k)
{
    import_state *im = ctx;
    am_req *req = im->req;
    if (k) {
        am_import_skip(im->skips, &im->skipped, k->id, k->reason);
        return 0;
    }
    if (s->nhyp == 0) {
        am_import_skip(im->skips, &im->skipped, s->id, "no MT candidate");
        return 0;
    }
    json_t *body = am_import_body(d, s);
    am_fail f;
    am_fail_init(&f);
    am_seg_req sr;
    memset(&sr, 0, sizeof sr);
    char *result = NULL;
    int status = 0;
    int r = am_seg_req_parse(body, NULL, &req->srv->cfg, &sr, &f);
    if (r == AM_OK)
        r = am_ingest_post(req->srv, req->params[0], &sr, &result, &status, &f);
    if (r == AM_OK) {
        if (status == 201)
            im->imported++;
        else
            im->present++;
    } else if (am_fail_status(&f) >= 500 || am_fail_status(&f) == 404 || !f.failed) {
        /* the store failed or the session went away: stop here; the
         * units before this one are committed, a retry resumes */
        am_resp_problem(im->resp, req, f.type, "unit '%s': %s", s->id, am_buf_str(&f.detail));
        am_resp_problem_set(im->resp, "imported", json_integer((json_int_t)im->imported));
        am_resp_problem_set(im->resp, "already_present", json_integer((json_int_t)im->present));
        im->failed = 1;
    } else {
        char reason[300];
        snprintf(reason, sizeof reason, "%s (%d %s)", am_buf_str(&f.detail), am_fail_status(&f),
                 am_problem_get(f.type)->slug);
        am_import_skip(im->skips, &im->skipped, s->id, reason);
    }
    free(result);
    am_seg_req_cleanup(&sr);
    am_fail_cleanup(&f);
    json_decref(body);
    return im->failed;
}

void am_api_import(am_req *req, am_resp *resp)
{
    if (!am_import_media(req->content_type)) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "an import is an XLIFF 1.2 or 2.x file: application/xliff+xml");
        return;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    am_store_session_clear(&row);
    am_xliff_doc doc;
    am_xliff_report rep;
    import_state im = {req, resp, json_array(), 0, 0, 0, 0};
    int rc = am_xliff_each(req->body, req->body_len, import_unit, &im, &doc, &rep);
    if (rc != AM_OK && !im.failed) {
        am_api_body_problem(req, resp, rc, rep.msg, rep.line);
    } else if (!im.failed) {
        json_t *systems = json_array();
        for (size_t k = 0; k < doc.nsystems; k++)
            json_array_append_new(systems, json_string(doc.systems[k]));
        am_resp_json(resp, 200,
                     json_pack("{sssssIsIsIsOso}", "session", req->params[0], "xliff_version",
                               doc.version == 12 ? "1.2" : "2", "imported", (json_int_t)im.imported,
                               "already_present", (json_int_t)im.present, "skipped",
                               (json_int_t)im.skipped, "skips", im.skips, "systems", systems));
    }
    json_decref(im.skips);
    am_xliff_free(&doc);
}
