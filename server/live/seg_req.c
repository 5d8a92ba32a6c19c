/* seg_req.c — validation of a segment request body (see ingest.h). */
#include "ingest_internal.h"

#include "http.h" /* am_http_valid_id */
#include "json.h"

#include <stdlib.h>
#include <string.h>

/* ---- request validation --------------------------------------------------- */

/* A JSON string field without NUL bytes and within the token limit; its
 * token count is added to *total (the segment's budget, checked by the
 * caller). */
static int am_text_field(json_t *v, const char *name, const am_srv_config *cfg, const char **out,
                         size_t *total, am_fail *f)
{
    if (!json_is_string(v))
        return am_failp(f, AM_P_INVALID_VALUE, name, "'%s' must be a string", name);
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return am_failp(f, AM_P_INVALID_UTF8, name, "'%s' contains a NUL character", name);
    size_t n = am_toks_count_py(s);
    if (cfg && n > (size_t)cfg->max_tokens)
        return am_failp(f, AM_P_TOO_MANY_TOKENS, name, "'%s' has %zu tokens; the limit is %d", name,
                        n, cfg->max_tokens);
    *total += n;
    *out = s;
    return AM_OK;
}

/* The "references" of a body (references after the translation, for
 * BLEU, chrF and TER) into r: an array of 1..AM_SCORE_MAX_REFS - 1 texts,
 * each counted into the segment's token budget. */
static int am_seg_refs(json_t *v, const am_srv_config *cfg, am_seg_req *r, size_t *ntok, am_fail *f)
{
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > AM_SCORE_MAX_REFS - 1)
        return am_failp(f, AM_P_INVALID_VALUE, "references",
                        "'references' must be an array of 1 to %d texts (the references after "
                        "'translation')",
                        AM_SCORE_MAX_REFS - 1);
    for (size_t i = 0; i < n; i++)
        if (am_text_field(json_array_get(v, i), "references", cfg, &r->xrefs[i], ntok, f))
            return AM_ERR_INVALID;
    r->nxrefs = n;
    return AM_OK;
}

/* The "terms" annotations of a body into r. Complexity (issue 15): one
 * type or range check per field of an annotation, each refused with its
 * own problem. */
static int am_seg_terms(json_t *terms, am_seg_req *r, am_fail *f)
{
    if (!json_is_array(terms))
        return am_failp(f, AM_P_INVALID_VALUE, "terms",
                        "'terms' must be an array of {source, targets, span}");
    size_t n = json_array_size(terms), ntargets = 0;
    if (n > 1000)
        return am_failp(f, AM_P_INVALID_VALUE, "terms",
                        "at most 1000 term annotations per segment");
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(terms, i);
        if (!json_is_object(t))
            return am_failp(f, AM_P_INVALID_VALUE, "terms", "terms[%zu] must be an object", i);
        json_t *tg = json_object_get(t, "targets");
        ntargets += json_is_array(tg) ? json_array_size(tg) : 1;
    }
    r->annots = am_xcalloc(n ? n : 1, sizeof *r->annots);
    r->targets = am_xcalloc(ntargets ? ntargets : 1, sizeof *r->targets);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(terms, i);
        am_terms_annot *a = &r->annots[i];
        const char *key;
        json_t *v;
        json_object_foreach(t, key, v)
        {
            if (strcmp(key, "source") && strcmp(key, "targets") && strcmp(key, "target") &&
                strcmp(key, "case_sensitive") && strcmp(key, "span"))
                return am_failp(f, AM_P_UNKNOWN_FIELD, "terms", "terms[%zu]: unknown field '%s'", i,
                                key);
        }
        json_t *src = json_object_get(t, "source");
        if (src && !json_is_string(src))
            return am_failp(f, AM_P_INVALID_VALUE, "terms", "terms[%zu].source must be a string",
                            i);
        a->source = src ? json_string_value(src) : NULL;
        json_t *tg = json_object_get(t, "targets");
        json_t *one = json_object_get(t, "target");
        a->targets = r->targets + used;
        if (tg && json_is_array(tg) && json_array_size(tg) > 0 && !one) {
            for (size_t k = 0; k < json_array_size(tg); k++) {
                json_t *x = json_array_get(tg, k);
                if (!json_is_string(x) || !*json_string_value(x))
                    return am_failp(f, AM_P_INVALID_VALUE, "terms",
                                    "terms[%zu].targets must be non-empty strings", i);
                r->targets[used++] = json_string_value(x);
            }
            a->n_targets = json_array_size(tg);
        } else if (one && json_is_string(one) && *json_string_value(one) && !tg) {
            r->targets[used++] = json_string_value(one);
            a->n_targets = 1;
        } else {
            return am_failp(f, AM_P_MISSING_FIELD, "terms",
                            "terms[%zu] needs 'targets' (array of strings) or 'target'", i);
        }
        json_t *cs = json_object_get(t, "case_sensitive");
        if (cs && !json_is_boolean(cs))
            return am_failp(f, AM_P_INVALID_VALUE, "terms",
                            "terms[%zu].case_sensitive must be a boolean", i);
        a->case_sensitive = json_is_true(cs);
        json_t *span = json_object_get(t, "span");
        if (span) {
            json_t *s0 = json_array_get(span, 0), *s1 = json_array_get(span, 1);
            size_t tl = strlen(r->translation);
            if (!json_is_array(span) || json_array_size(span) != 2 || !json_is_integer(s0) ||
                !json_is_integer(s1) || json_integer_value(s0) < 0 ||
                json_integer_value(s1) <= json_integer_value(s0) ||
                (size_t)json_integer_value(s1) > tl)
                return am_failp(f, AM_P_INVALID_VALUE, "terms",
                                "terms[%zu].span must be [start, end) byte offsets within the "
                                "translation (%zu bytes)",
                                i, tl);
            a->has_span = 1;
            a->span_start = (size_t)json_integer_value(s0);
            a->span_end = (size_t)json_integer_value(s1);
        }
    }
    r->n_annots = n;
    return AM_OK;
}

/* Whether v is a string holding a NUL character (am_json_any: the body is
 * parsed with JSON_ALLOW_NUL, so that a text field's NUL gets its own
 * answer; jansson refuses one in a key). */
static int string_has_nul(const json_t *v)
{
    return json_is_string(v) && memchr(json_string_value(v), 0, json_string_length(v));
}

/* Length/complexity (issue 15): one check per field of the segment body
 * (types, unknown fields, the id, the texts and their token limits, the
 * hypotheses, the translator), each with its own problem; the texts,
 * annotations and terms have their helpers above. */
int am_seg_req_parse(json_t *body, const char *path_id, const am_srv_config *cfg, am_seg_req *r,
                     am_fail *f)
{
    memset(r, 0, sizeof *r);
    size_t ntok = 0; /* tokens of every text, against max-segment-tokens */
    static const char *const known[] = {"id",         "source",      "hypothesis",
                                        "hypotheses", "translation", "terms",
                                        "metadata",   "translator",  "references"};
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        size_t k;
        for (k = 0; k < sizeof known / sizeof known[0]; k++)
            if (!strcmp(key, known[k]))
                break;
        if (k == sizeof known / sizeof known[0])
            return am_failp(f, AM_P_UNKNOWN_FIELD, key,
                            "unknown field '%.64s' (allowed: id, source, hypothesis, hypotheses, "
                            "translation, references, terms, metadata, translator)",
                            key);
    }
    json_t *id = json_object_get(body, "id");
    if (!id && path_id) {
        r->id = path_id;
    } else if (!id) {
        return am_failp(f, AM_P_MISSING_FIELD, "id", "'id' (the client's segment id) is required");
    } else if (!json_is_string(id) || !am_http_valid_id(json_string_value(id))) {
        return am_failp(f, AM_P_INVALID_VALUE, "id",
                        "'id' must be a string of 1-128 characters from [A-Za-z0-9._-]");
    } else {
        r->id = json_string_value(id);
        if (path_id && strcmp(path_id, r->id))
            return am_failp(f, AM_P_INVALID_VALUE, "id", "body id '%s' differs from the URL's '%s'",
                            r->id, path_id);
    }
    json_t *who = json_object_get(body, "translator");
    if (who && !json_is_null(who) &&
        (!json_is_string(who) || !am_http_valid_id(json_string_value(who))))
        return am_failp(f, AM_P_INVALID_VALUE, "translator",
                        "'translator' must be a string of 1-128 characters from [A-Za-z0-9._-]");
    r->translator = json_is_string(who) ? json_string_value(who) : NULL;
    json_t *tr = json_object_get(body, "translation");
    if (!tr)
        return am_failp(f, AM_P_MISSING_FIELD, "translation",
                        "'translation' (the confirmed translation) is required");
    if (am_text_field(tr, "translation", cfg, &r->translation, &ntok, f))
        return AM_ERR_INVALID;
    json_t *xr = json_object_get(body, "references");
    if (xr && am_seg_refs(xr, cfg, r, &ntok, f))
        return AM_ERR_INVALID;
    json_t *src = json_object_get(body, "source");
    if (src && !json_is_null(src) && am_text_field(src, "source", cfg, &r->source, &ntok, f))
        return AM_ERR_INVALID;
    json_t *h = json_object_get(body, "hypothesis"), *hs = json_object_get(body, "hypotheses");
    if (h && hs)
        return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                        "give either 'hypothesis' or 'hypotheses', not both");
    if (h) {
        if (am_text_field(h, "hypothesis", cfg, &r->hyp[0], &ntok, f))
            return AM_ERR_INVALID;
        r->sys[0] = "default";
        r->nsys = 1;
        r->single = 1;
    } else if (hs) {
        if (!json_is_object(hs) || json_object_size(hs) == 0)
            return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                            "'hypotheses' must be a non-empty object {system: text}");
        size_t max = cfg ? (size_t)cfg->max_systems : AM_SCORE_MAX_SYSTEMS;
        if (max > AM_SCORE_MAX_SYSTEMS)
            max = AM_SCORE_MAX_SYSTEMS;
        if (json_object_size(hs) > max)
            return am_failp(f, AM_P_INVALID_VALUE, "hypotheses", "at most %zu systems per segment",
                            max);
        /* systems in name order, so results do not depend on key order */
        const char *names[AM_SCORE_MAX_SYSTEMS];
        size_t n = 0;
        json_object_foreach(hs, key, v)
        {
            if (!am_http_valid_id(key))
                return am_failp(f, AM_P_INVALID_VALUE, "hypotheses",
                                "system names must match [A-Za-z0-9._-]{1,128}");
            names[n++] = key;
        }
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                const char *t = names[j];
                names[j] = names[j - 1];
                names[j - 1] = t;
            }
        for (size_t i = 0; i < n; i++) {
            r->sys[i] = names[i];
            if (am_text_field(json_object_get(hs, names[i]), "hypotheses", cfg, &r->hyp[i], &ntok,
                              f))
                return AM_ERR_INVALID;
        }
        r->nsys = n;
    } else {
        return am_failp(f, AM_P_MISSING_FIELD, "hypothesis",
                        "'hypothesis' (text) or 'hypotheses' ({system: text}) is required");
    }
    /* the segment's whole budget: scoring cost grows with every system's
     * hypothesis, so max-tokens per text alone would let 16 systems cost 16x */
    if (cfg && ntok > (size_t)cfg->max_segment_tokens)
        return am_failp(f, AM_P_TOO_MANY_TOKENS, "hypotheses",
                        "the segment has %zu tokens in its source, translation and hypotheses; "
                        "the limit is %d (max-segment-tokens)",
                        ntok, cfg->max_segment_tokens);
    json_t *md = json_object_get(body, "metadata");
    if (md && !json_is_object(md))
        return am_failp(f, AM_P_INVALID_VALUE, "metadata", "'metadata' must be an object");
    json_t *terms = json_object_get(body, "terms");
    if (terms && am_seg_terms(terms, r, f))
        return AM_ERR_INVALID;
    /* a NUL anywhere else (an id, a translator's name, the metadata,
     * the terms): the checks above saw the text up to it, and the stored
     * request could not be read back */
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (am_json_any(json_object_get(body, known[k]), string_has_nul))
            return am_failp(f, AM_P_INVALID_UTF8, known[k],
                            "'%s' contains a NUL character (\\u0000)", known[k]);
    /* the canonical form is the body with the id made explicit, in
     * jansson's spelling (17-digit reals, as every stored request was
     * written): a re-post compares it byte for byte with the stored one */
    if (id) { /* the body names its id: it is its own canonical form */
        r->canonical = am_json_canonical(body);
    } else { /* the id from the path, added to a copy (body is borrowed) */
        json_t *canon = json_deep_copy(body);
        json_object_set_new(canon, "id", json_string(r->id));
        r->canonical = am_json_canonical(canon);
        json_decref(canon);
    }
    if (!r->canonical)
        r->canonical = am_xstrdup("null");
    return AM_OK;
}

am_seg_input am_seg_req_input(const am_seg_req *r)
{
    am_seg_input in = {.source = r->source,
                       .translation = r->translation,
                       .hyps = r->hyp,
                       .nsys = r->nsys,
                       .annots = r->annots,
                       .n_annots = r->n_annots,
                       .more_refs = r->xrefs,
                       .n_more_refs = r->nxrefs};
    return in;
}

void am_seg_req_cleanup(am_seg_req *r)
{
    free(r->annots);
    free(r->targets);
    free(r->canonical);
    memset(r, 0, sizeof *r);
}
