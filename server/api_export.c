/* api_export.c — GET /v1/sessions/{id}/export?format=csv|json|tmx. */
#include "api.h"

#include "json.h"

#include <stdlib.h>
#include <string.h>

typedef struct am_exp_ctx {
    int fmt; /* 0 json, 1 csv, 2 tmx */
    am_buf out;
    json_t *arr;
    const char *srclang, *tgtlang;
} am_exp_ctx;

static void am_csv_field(am_buf *b, const char *s)
{
    if (!s) {
        return;
    }
    if (!strpbrk(s, ",\"\r\n")) {
        am_buf_appends(b, s);
        return;
    }
    am_buf_appendc(b, '"');
    for (; *s; s++) {
        if (*s == '"')
            am_buf_appendc(b, '"');
        am_buf_appendc(b, *s);
    }
    am_buf_appendc(b, '"');
}

static void am_csv_num(am_buf *b, json_t *v)
{
    if (json_is_integer(v))
        am_buf_printf(b, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        am_buf_printf(b, "%.17g", json_real_value(v));
}

static void am_xml_text(am_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': am_buf_appends(b, "&lt;"); break;
        case '>': am_buf_appends(b, "&gt;"); break;
        case '&': am_buf_appends(b, "&amp;"); break;
        case '"': am_buf_appends(b, "&quot;"); break;
        default: am_buf_appendc(b, *s);
        }
    }
}

static const char *am_hyp_of(json_t *rq, const char *sys)
{
    json_t *h = json_object_get(rq, "hypothesis");
    if (h && !strcmp(sys, "default"))
        return json_string_value(h);
    return json_string_value(json_object_get(json_object_get(rq, "hypotheses"), sys));
}

static int am_exp_row(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                      const char *result_json, int64_t created_at)
{
    am_exp_ctx *c = ctx;
    json_t *rq = json_loads(request_json, 0, NULL), *rs = json_loads(result_json, 0, NULL);
    if (c->fmt == 0) {
        json_t *o = json_pack("{sIsssososo}", "seq", (json_int_t)seq, "id", client_id, "created_at",
                              am_json_time(created_at), "request", rq ? rq : json_null(), "result",
                              rs ? rs : json_null());
        json_array_append_new(c->arr, o);
        return 0;
    }
    json_t *systems = json_object_get(json_object_get(rs, "scores"), "systems");
    if (c->fmt == 1) {
        const char *sys;
        json_t *s;
        json_object_foreach(systems, sys, s)
        {
            am_buf_printf(&c->out, "%lld,", (long long)seq);
            am_csv_field(&c->out, client_id);
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, sys);
            static const char *const counts[] = {"r0", "r1", "r01"};
            for (size_t i = 0; i < 3; i++) {
                json_t *x = json_object_get(s, counts[i]);
                am_buf_appendc(&c->out, ',');
                am_csv_num(&c->out, json_object_get(x, "hits"));
                am_buf_appendc(&c->out, ',');
                am_csv_num(&c->out, json_object_get(x, "total"));
            }
            json_t *terms = json_object_get(s, "terms");
            am_buf_appendc(&c->out, ',');
            am_csv_num(&c->out, json_object_get(terms, "exact"));
            am_buf_appendc(&c->out, ',');
            am_csv_num(&c->out, json_object_get(terms, "instances"));
            static const char *const reals[] = {"bleu", "chrf", "chrfpp", "ter", "one_minus_term"};
            for (size_t i = 0; i < 5; i++) {
                am_buf_appendc(&c->out, ',');
                am_csv_num(&c->out, json_object_get(s, reals[i]));
            }
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, json_string_value(json_object_get(rq, "source")));
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, am_hyp_of(rq, sys));
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, json_string_value(json_object_get(rq, "translation")));
            am_buf_appends(&c->out, "\r\n");
        }
    } else {
        am_buf_appends(&c->out, "    <tu tuid=\"");
        am_xml_text(&c->out, client_id);
        am_buf_appends(&c->out, "\">\n");
        am_buf_printf(&c->out, "      <prop type=\"x-adaptmon-seq\">%lld</prop>\n", (long long)seq);
        const char *sys;
        json_t *s;
        json_object_foreach(systems, sys, s)
        {
            static const char *const counts[] = {"r0", "r1", "r01"};
            for (size_t i = 0; i < 3; i++) {
                json_t *x = json_object_get(s, counts[i]);
                am_buf_printf(&c->out, "      <prop type=\"x-adaptmon-%s-", counts[i]);
                am_xml_text(&c->out, sys);
                am_buf_printf(&c->out, "\">%lld/%lld</prop>\n",
                              (long long)json_integer_value(json_object_get(x, "hits")),
                              (long long)json_integer_value(json_object_get(x, "total")));
            }
        }
        const char *src = json_string_value(json_object_get(rq, "source"));
        if (src) {
            am_buf_appends(&c->out, "      <tuv xml:lang=\"");
            am_xml_text(&c->out, c->srclang);
            am_buf_appends(&c->out, "\"><seg>");
            am_xml_text(&c->out, src);
            am_buf_appends(&c->out, "</seg></tuv>\n");
        }
        am_buf_appends(&c->out, "      <tuv xml:lang=\"");
        am_xml_text(&c->out, c->tgtlang);
        am_buf_appends(&c->out, "\"><seg>");
        am_xml_text(&c->out, json_string_value(json_object_get(rq, "translation")));
        am_buf_appends(&c->out, "</seg></tuv>\n    </tu>\n");
    }
    json_decref(rq);
    json_decref(rs);
    return 0;
}

void am_api_export(am_req *req, am_resp *resp)
{
    const char *format = am_req_query(req, "format");
    int fmt;
    if (!format || !strcmp(format, "json"))
        fmt = 0;
    else if (!strcmp(format, "csv"))
        fmt = 1;
    else if (!strcmp(format, "tmx"))
        fmt = 2;
    else {
        am_resp_problem(resp, req, 400, "bad-request", "Unknown format",
                        "format must be csv, json or tmx");
        return;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    json_t *opts = json_loads(row.options, 0, NULL);
    am_exp_ctx c = {fmt,
                    {0},
                    fmt == 0 ? json_array() : NULL,
                    json_string_value(json_object_get(opts, "source_lang")),
                    json_string_value(json_object_get(opts, "target_lang"))};
    am_buf_init(&c.out);
    if (fmt == 1)
        am_buf_appends(&c.out, "seq,id,system,r0_hits,r0_total,r1_hits,r1_total,r01_hits,"
                               "r01_total,term_exact,term_instances,bleu,chrf,chrfpp,ter,"
                               "one_minus_term,source,hypothesis,translation\r\n");
    if (fmt == 2) {
        am_buf_appends(&c.out,
                       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<tmx version=\"1.4\">\n  <header creationtool=\"adaptmon\" "
                       "creationtoolversion=\"1\" datatype=\"plaintext\" "
                       "segtype=\"sentence\" adminlang=\"en\" o-tmf=\"adaptmon\" srclang=\"");
        am_xml_text(&c.out, c.srclang);
        am_buf_appends(&c.out, "\">\n    <prop type=\"x-adaptmon-session\">");
        am_xml_text(&c.out, row.id);
        am_buf_appends(&c.out, "</prop>\n    <prop type=\"x-adaptmon-signature\">");
        am_xml_text(&c.out, row.signature);
        am_buf_appends(&c.out, "</prop>\n  </header>\n  <body>\n");
    }
    /* page through the log (seqs are 1..segments without gaps) */
    int rc = AM_OK;
    for (int64_t after = 0; rc == AM_OK && after < row.segments; after += 1000)
        rc = am_store_segments_each(req->srv->store, row.id, after, 1000, am_exp_row, &c);
    if (rc != AM_OK) {
        am_resp_problem(resp, req, 500, "internal", "Storage error", "reading segments failed");
        json_decref(c.arr);
        am_buf_cleanup(&c.out);
        json_decref(opts);
        am_store_session_clear(&row);
        return;
    }
    char disp[300];
    if (fmt == 0) {
        json_t *o = json_pack("{sosssIso}", "session", am_api_session_json(req->srv, &row),
                              "signature", row.signature, "count",
                              (json_int_t)json_array_size(c.arr), "segments", c.arr);
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.json\"", row.id);
        am_resp_json(resp, 200, o);
    } else if (fmt == 1) {
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.csv\"", row.id);
        size_t n = c.out.len;
        am_resp_take(resp, 200, "text/csv; charset=utf-8", am_buf_detach(&c.out), n);
    } else {
        am_buf_appends(&c.out, "  </body>\n</tmx>\n");
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.tmx\"", row.id);
        size_t n = c.out.len;
        am_resp_take(resp, 200, "application/x-tmx+xml; charset=utf-8", am_buf_detach(&c.out), n);
    }
    am_resp_header(resp, "Content-Disposition", disp);
    am_buf_cleanup(&c.out);
    json_decref(opts);
    am_store_session_clear(&row);
}
