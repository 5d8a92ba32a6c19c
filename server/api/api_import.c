/* api_import.c — POST /v1/sessions/{id}/import: an XLIFF 1.2/2.x file's
 * confirmed units replayed into a session in document order through the
 * segment POST path (am_seg_req_parse + am_ingest_post), so every guarantee
 * of a POST holds per unit. Unit ids are the segment ids (see xliff.h), so
 * a re-import counts nothing twice and answers the same summary with the
 * units as "already_present". The file is streamed (am_xliff_each): it is
 * validated whole first (bad input stores nothing), then each unit is
 * posted as it is read; no tree and no list of units is kept.
 *
 * Two-file import (multipart/form-data, parts "xliff" and "xliff_mt"): the
 * final file's confirmed units get as hypotheses the targets of the units
 * of the same id in the pre-translated MT file (am_xliff_parse_mt). The MT
 * file is read first into an id -> unit map (its texts are held: memory
 * grows with that part, bounded by the body limit); the final file is
 * streamed as above.
 *
 * The languages the files declare must match the session's (422 naming
 * both); skips are counted per reason (all of them), the first 100 listed. */
#include "api.h"

#include "ingest.h"
#include "json.h"
#include "lang.h"
#include "vocab.h"
#include "xliff.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AM_IMPORT_MAX_SKIPS 100 /* skip reasons listed in an answer */

static int am_import_media(const char *ct)
{
    return ct && (!strcmp(ct, "application/xliff+xml") || !strcmp(ct, "application/x-xliff+xml") ||
                  !strcmp(ct, "application/x-xliff"));
}

/* ---- multipart/form-data (RFC 7578), the two-file import ------------------ */

/* The boundary parameter of Content-Type ct into out (size n); 0 when
 * there is none or it is longer than RFC 2046's 70 characters. */
static int am_import_boundary(const char *ct, char *out, size_t n)
{
    for (const char *p = ct ? strchr(ct, ';') : NULL; p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncasecmp(q, "boundary=", 9))
            continue;
        q += 9;
        int quoted = *q == '"';
        q += quoted;
        size_t k = 0;
        while (*q && k + 1 < n && (quoted ? *q != '"' : (*q != ';' && *q != ' ')))
            out[k++] = *q++;
        out[k] = '\0';
        return k > 0 && k <= 70;
    }
    return 0;
}

/* First occurrence of needle[0..nn) in hay[0..hn), or NULL. */
static const char *am_import_find(const char *hay, size_t hn, const char *needle, size_t nn)
{
    while (hn >= nn) {
        const char *p = memchr(hay, needle[0], hn - nn + 1);
        if (!p)
            return NULL;
        if (!memcmp(p, needle, nn))
            return p;
        hn -= (size_t)(p - hay) + 1;
        hay = p + 1;
    }
    return NULL;
}

/* A part of a multipart body: its form field name and content (borrowed
 * slices of the body). */
typedef struct am_import_part {
    char name[32];
    const char *data;
    size_t len;
} am_import_part;

/* The form field name of a part's headers h[0..n) (Content-Disposition:
 * form-data; name="…") into out (size cap); "" when there is none. */
static void am_import_part_name(const char *h, size_t n, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = am_import_find(h, n, "name=\"", 6);
    while (p && p > h && p[-1] != ' ' && p[-1] != ';') /* not filename= */
        p = am_import_find(p + 1, n - (size_t)(p + 1 - h), "name=\"", 6);
    if (!p)
        return;
    p += 6;
    size_t k = 0;
    while (p < h + n && *p != '"' && k + 1 < cap)
        out[k++] = *p++;
    out[k] = '\0';
}

/* Splits body[0..len) at "--boundary" lines into at most max parts.
 * Returns the number of parts, or -1 when the body is not multipart with
 * that boundary (no closing delimiter, a part without headers). */
static int am_import_split(const char *body, size_t len, const char *boundary,
                           am_import_part *parts, int max)
{
    char delim[80];
    int dn = snprintf(delim, sizeof delim, "--%s", boundary);
    const char *end = body + len;
    const char *p = am_import_find(body, len, delim, (size_t)dn);
    int n = 0;
    while (p) {
        p += dn;
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return n; /* the closing delimiter */
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            p += 2;
        else if (p < end && p[0] == '\n')
            p += 1;
        else
            return -1;
        const char *hend = am_import_find(p, (size_t)(end - p), "\r\n\r\n", 4);
        size_t hskip = 4;
        if (!hend) {
            hend = am_import_find(p, (size_t)(end - p), "\n\n", 2);
            hskip = 2;
        }
        if (!hend)
            return -1;
        const char *data = hend + hskip;
        char crlf_delim[84];
        int cn = snprintf(crlf_delim, sizeof crlf_delim, "\n%s", delim);
        const char *next = am_import_find(data, (size_t)(end - data), crlf_delim, (size_t)cn);
        if (!next)
            return -1;
        size_t dl = (size_t)(next - data);
        if (dl && data[dl - 1] == '\r')
            dl--;
        if (n < max) {
            am_import_part_name(p, (size_t)(hend - p), parts[n].name, sizeof parts[n].name);
            parts[n].data = data;
            parts[n].len = dl;
        }
        n++;
        p = next + 1;
    }
    return -1;
}

/* ---- the import --------------------------------------------------------------- */

/* The MT file of a two-file import: its units by id. */
typedef struct import_mt {
    am_xliff_doc doc; /* owned (am_xliff_parse_mt) */
    am_vocab *ids; /* owned: id -> 1 + index into doc.segs, or -(1 + index
                      into doc.skips) for a unit skipped there */
} import_mt;

/* The state of one import, carried through am_xliff_each's callback. */
typedef struct import_state {
    am_req *req; /* borrowed */
    am_resp *resp; /* borrowed */
    json_t *skips; /* owned: the first AM_IMPORT_MAX_SKIPS */
    json_t *reasons; /* owned: {reason: count} of all skips */
    int64_t imported, present, skipped;
    int failed; /* a problem was answered; the reading stopped */
    int langs_checked;
    const char *sess_sl, *sess_tl; /* the session's languages (borrowed; NULL: none) */
    const import_mt *mt; /* two-file import, else NULL */
} import_state;

/* Records a skipped unit into skips (listed up to AM_IMPORT_MAX_SKIPS) and
 * counts it under its reason. reason is copied. */
static void am_import_skip(import_state *im, const char *id, const char *reason)
{
    if (json_array_size(im->skips) < AM_IMPORT_MAX_SKIPS)
        json_array_append_new(im->skips, json_pack("{ssss}", "id", id, "reason", reason));
    json_t *n = json_object_get(im->reasons, reason);
    json_object_set_new(im->reasons, reason, json_integer(n ? json_integer_value(n) + 1 : 1));
    im->skipped++;
}

/* The segment body of confirmed unit s (caller decrefs); the hypotheses
 * come from hd/hs (the final file or the MT file's unit). */
static json_t *am_import_body(const am_xliff_doc *hd, const am_xliff_seg *hs, const am_xliff_seg *s)
{
    json_t *hyps = json_object();
    for (size_t k = 0; k < hs->nhyp; k++)
        json_object_set_new(hyps, hd->systems[hs->sys[k]], json_string(hs->hyp[k]));
    json_t *b = json_pack("{ssssssso}", "id", s->id, "translation", s->target, "source", s->source,
                          "hypotheses", hyps);
    return b;
}

/* The languages document d (the file named what) declares against the
 * session's: a mismatch is answered 422 naming both. Returns 0 or 1 (the
 * problem answered). */
static int am_import_check_langs(import_state *im, const am_xliff_doc *d, const char *what)
{
    const char *pairs[2][3] = {{im->sess_sl, d->source_lang, "source"},
                               {im->sess_tl, d->target_lang, "target"}};
    for (int k = 0; k < 2; k++) {
        const char *sess = pairs[k][0], *file = pairs[k][1];
        if (!sess || !file || am_lang_same_canonical(sess, file))
            continue;
        am_resp_problem(im->resp, im->req, AM_P_INVALID_VALUE,
                        "the %s declares %s language %s but the session's %s_lang is %s: import "
                        "it into a session of that language pair",
                        what, pairs[k][2], file, pairs[k][2], sess);
        am_resp_problem_set(im->resp, "field", json_string(k ? "target_lang" : "source_lang"));
        im->failed = 1;
        return 1;
    }
    return 0;
}

/* One unit of the file (am_xliff_unit_fn): a skip is recorded, a confirmed
 * segment goes through the segment POST path. Returns 1 to stop after a
 * store failure or a language mismatch (the problem is answered), else 0. */
static int import_unit(void *ctx, const am_xliff_doc *d, const am_xliff_seg *s,
                       const am_xliff_skip *k)
{
    import_state *im = ctx;
    am_req *req = im->req;
    if (!im->langs_checked) {
        im->langs_checked = 1;
        if (am_import_check_langs(im, d, im->mt ? "final file (xliff)" : "file"))
            return 1;
    }
    if (k) {
        am_import_skip(im, k->id, k->reason);
        return 0;
    }
    const am_xliff_doc *hd = d;
    const am_xliff_seg *hs = s;
    if (im->mt) { /* the hypotheses come from the MT file's unit of this id */
        int64_t at = 0;
        char why[200];
        if (!am_vocab_get(im->mt->ids, s->id, &at)) {
            am_import_skip(im, s->id, "no MT candidate: no unit with this id in the MT file");
            return 0;
        }
        if (at < 0) { /* the MT file's unit was skipped: say why */
            snprintf(why, sizeof why, "no MT candidate: %s", im->mt->doc.skips[-at - 1].reason);
            am_import_skip(im, s->id, why);
            return 0;
        }
        hd = &im->mt->doc;
        hs = &im->mt->doc.segs[at - 1];
    }
    if (hs->nhyp == 0) {
        char why[sizeof s->dropped + 32];
        snprintf(why, sizeof why, "no MT candidate%s%s", s->dropped[0] ? ": " : "", s->dropped);
        am_import_skip(im, s->id, why);
        return 0;
    }
    json_t *body = am_import_body(hd, hs, s);
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
        if (f.retry_after > 0) { /* a 503 (no synchronous standby, …): when to retry */
            char v[16];
            snprintf(v, sizeof v, "%d", f.retry_after);
            am_resp_header(im->resp, "Retry-After", v);
        }
        im->failed = 1;
    } else {
        char reason[300];
        snprintf(reason, sizeof reason, "%s (%d %s)", am_buf_str(&f.detail), am_fail_status(&f),
                 am_problem_get(f.type)->slug);
        am_import_skip(im, s->id, reason);
    }
    free(result);
    am_seg_req_cleanup(&sr);
    am_fail_cleanup(&f);
    json_decref(body);
    return im->failed;
}

/* The two parts of a multipart/form-data import ("xliff", "xliff_mt") into
 * *final and *pre. Returns 0, or 1 after answering a problem. */
static int am_import_parts(am_req *req, am_resp *resp, am_import_part *final, am_import_part *pre)
{
    char boundary[80];
    am_import_part parts[4];
    int n = -1;
    if (am_import_boundary(am_req_header(req, "Content-Type"), boundary, sizeof boundary))
        n = am_import_split(req->body ? req->body : "", req->body_len, boundary, parts, 4);
    if (n < 0) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "malformed multipart/form-data body (a boundary parameter and parts "
                        "ending with the closing delimiter are expected)");
        return 1;
    }
    memset(final, 0, sizeof *final);
    memset(pre, 0, sizeof *pre);
    for (int i = 0; i < n && i < 4; i++) {
        am_import_part *to = !strcmp(parts[i].name, "xliff")      ? final
                             : !strcmp(parts[i].name, "xliff_mt") ? pre
                                                                  : NULL;
        if (!to || to->data) {
            am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                            "a two-file import has exactly the parts \"xliff\" (the final file) "
                            "and \"xliff_mt\" (the file as pre-translated by MT); part %d is "
                            "\"%s\"",
                            i + 1, parts[i].name);
            return 1;
        }
        *to = parts[i];
    }
    if (!final->data || !pre->data || n > 4) {
        am_resp_problem(resp, req, AM_P_INVALID_VALUE,
                        "a two-file import needs the parts \"xliff\" and \"xliff_mt\"");
        return 1;
    }
    return 0;
}

/* Reads the MT part into mt (caller frees with am_import_mt_free). Returns
 * 0, or 1 after answering a problem. */
static int am_import_mt_read(import_state *im, const am_import_part *pre, import_mt *mt)
{
    am_xliff_report rep;
    int rc = am_xliff_parse_mt(pre->data, pre->len, &mt->doc, &rep);
    if (rc != AM_OK) {
        char msg[300];
        snprintf(msg, sizeof msg, "xliff_mt: %s", rep.msg);
        am_api_body_problem(im->req, im->resp, rc, msg, rep.line);
        return 1;
    }
    if (am_import_check_langs(im, &mt->doc, "MT file (xliff_mt)"))
        return 1;
    mt->ids = am_vocab_new();
    for (size_t i = 0; i < mt->doc.nsegs; i++)
        if (!am_vocab_get(mt->ids, mt->doc.segs[i].id, NULL))
            am_vocab_add(mt->ids, mt->doc.segs[i].id, (int64_t)i + 1);
    for (size_t i = 0; i < mt->doc.nskips; i++) /* negative: a skipped unit */
        if (!am_vocab_get(mt->ids, mt->doc.skips[i].id, NULL))
            am_vocab_add(mt->ids, mt->doc.skips[i].id, -(int64_t)i - 1);
    return 0;
}

/* The session's language option key of options (JSON text), or NULL when
 * unset or "und"; borrowed from opts. */
static const char *am_import_lang(json_t *opts, const char *key)
{
    const char *v = json_string_value(json_object_get(opts, key));
    return v && *v && strcmp(v, "und") ? v : NULL;
}

void am_api_import(am_req *req, am_resp *resp)
{
    int multipart = req->content_type && !strcmp(req->content_type, "multipart/form-data");
    if (!am_import_media(req->content_type) && !multipart) {
        am_resp_problem(resp, req, AM_P_UNSUPPORTED_MEDIA_TYPE,
                        "an import is an XLIFF 1.2 or 2.x file (application/xliff+xml), or "
                        "multipart/form-data with the parts \"xliff\" and \"xliff_mt\"");
        return;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    json_t *opts = json_loads(row.options, 0, NULL);
    am_store_session_clear(&row);
    am_import_part final = {"xliff", req->body, req->body_len}, pre = {"", NULL, 0};
    if (multipart && am_import_parts(req, resp, &final, &pre)) {
        json_decref(opts);
        return;
    }
    am_xliff_doc doc;
    memset(&doc, 0, sizeof doc);
    am_xliff_report rep;
    import_mt mt;
    memset(&mt, 0, sizeof mt);
    import_state im = {req,
                       resp,
                       json_array(),
                       json_object(),
                       0,
                       0,
                       0,
                       0,
                       0,
                       am_import_lang(opts, "source_lang"),
                       am_import_lang(opts, "target_lang"),
                       NULL};
    if (pre.data && am_import_mt_read(&im, &pre, &mt) == 0)
        im.mt = &mt;
    if (!im.failed) {
        int rc = am_xliff_each(final.data, final.len, import_unit, &im, &doc, &rep);
        if (rc == AM_OK && !im.langs_checked) /* a file without units */
            am_import_check_langs(&im, &doc, "file");
        if (rc != AM_OK && !im.failed) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s%s", multipart ? "xliff: " : "", rep.msg);
            am_api_body_problem(req, resp, rc, msg, rep.line);
        } else if (!im.failed) {
            const am_xliff_doc *sd = im.mt ? &mt.doc : &doc;
            json_t *systems = json_array();
            for (size_t k = 0; k < sd->nsystems; k++)
                json_array_append_new(systems, json_string(sd->systems[k]));
            json_t *out = json_pack(
                "{sssssIsIsIsOsOso}", "session", req->params[0], "xliff_version",
                doc.version == 12 ? "1.2" : "2", "imported", (json_int_t)im.imported,
                "already_present", (json_int_t)im.present, "skipped", (json_int_t)im.skipped,
                "skips", im.skips, "skip_reasons", im.reasons, "systems", systems);
            if (doc.source_lang)
                json_object_set_new(out, "source_lang", json_string(doc.source_lang));
            if (doc.target_lang)
                json_object_set_new(out, "target_lang", json_string(doc.target_lang));
            if (doc.target_lang && !im.sess_tl) /* a session's options are fixed */
                json_object_set_new(
                    out, "warnings",
                    json_pack("[s+++]", "the session has no target_lang but the file declares ",
                              doc.target_lang,
                              ": the units were scored without its stopwords; create the session "
                              "with target_lang ",
                              doc.target_lang));
            am_resp_json(resp, 200, out);
        }
    }
    json_decref(im.skips);
    json_decref(im.reasons);
    json_decref(opts);
    am_xliff_free(&doc);
    am_xliff_free(&mt.doc);
    am_vocab_free(mt.ids);
}
