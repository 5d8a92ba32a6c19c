/*
 * api_export.c — GET /v1/sessions/{id}/export?format=csv|json|tmx, and the
 * segment pager behind it and the timeline (GET …/segments, api_segments.c).
 *
 * Both are streamed (am_resp_stream): the pager reads the session's
 * segments a page of rows at a time (keyset pagination by seq, bounded above
 * by the session's segment count when the request started, so rows posted
 * later are not included) and renders each page into a buffer that the
 * client drains before the next page is read. Memory is therefore bounded
 * by one page (the page shrinks when its rendering passes
 * AM_PAGER_TARGET bytes), not by the session's size. A row replaced by a
 * concurrent PUT while the export runs is read as it is when its page is
 * read. A storage failure after the headers went out aborts the connection
 * (the chunked body then lacks its terminator, so clients see the error).
 */
#include "api.h"

#include "json.h"
#include "realfmt.h"
#include "jscan.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define AM_PAGER_MAX_ROWS 512 /* rows per page at most */
#define AM_PAGER_TARGET (1 << 20) /* bytes a page should render to, about */

enum am_pager_fmt { AM_PG_JSON = 0, AM_PG_CSV, AM_PG_TMX, AM_PG_TIMELINE };

/* The streaming producer (the cls of am_resp_stream). */
struct am_pager {
    am_server *srv; /* borrowed */
    char *session; /* owned */
    enum am_pager_fmt fmt;
    int64_t cursor; /* last seq rendered */
    int64_t upper; /* last seq to render */
    size_t page; /* rows per store read */
    int64_t stamp[2]; /* the session's (incarnation, rewrites) at the first page */
    am_buf out; /* rendered bytes not yet sent: out[off..len) */
    size_t off;
    size_t peak; /* largest page rendered (bytes) */
    size_t rows; /* rows rendered */
    char *footer; /* owned; sent after the last row */
    int footer_sent;
    char *srclang, *tgtlang; /* owned (TMX), may be NULL */
};

/* A CSV cell. A cell a spreadsheet would evaluate as a formula — one that
 * starts with '=', '+', '-', '@', TAB or CR (OWASP "CSV Injection") — is
 * neutralised as OWASP recommends: quoted and prefixed with a single quote,
 * which spreadsheets show as text and do not evaluate. Only text cells come
 * here (ids, names, segment text); numbers are written by am_csv_num. */
static void am_csv_field(am_buf *b, const char *s)
{
    if (!s) {
        return;
    }
    int formula = s[0] && strchr("=+-@\t\r", s[0]) != NULL;
    if (!formula && !strpbrk(s, ",\"\r\n")) {
        am_buf_appends(b, s);
        return;
    }
    am_buf_appendc(b, '"');
    if (formula)
        am_buf_appendc(b, '\'');
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
        am_realfmt_buf(b, json_real_value(v)); /* the shortest that reads back */
}

/* The code point of a character XML 1.0 does not allow (its Char
 * production: TAB, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000 up) that
 * starts at p, with its length in *n; -1 for any other character. The text
 * is valid UTF-8 (the API refuses anything else), so surrogates cannot
 * occur. */
static long am_xml_bad_char(const char *p, size_t *n)
{
    unsigned char c = (unsigned char)p[0];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
        *n = 1;
        return c;
    }
    if (c == 0xEF && (unsigned char)p[1] == 0xBF &&
        ((unsigned char)p[2] == 0xBE || (unsigned char)p[2] == 0xBF)) {
        *n = 3;
        return (unsigned char)p[2] == 0xBE ? 0xFFFE : 0xFFFF;
    }
    return -1;
}

/* XML text with the markup characters escaped (CR as a reference, which
 * parsers keep; a literal one they turn into LF) and the characters XML 1.0
 * does not allow made representable:
 *   - in segment text inside a TMX <seg> (seg != 0): U+000B, the soft line
 *     break of Word and Trados content, and the other C0 controls, U+FFFE
 *     and U+FFFF become a TMX 1.4 placeholder,
 *     <ph type="x-adaptmon-char">U+000B</ph>, whose content names the code
 *     point: the export stays well-formed, a reader that keeps inline codes
 *     can restore the character, one that drops them loses only it;
 *   - in attribute values and <prop>s (ids, names, languages), where markup
 *     cannot go: U+FFFD, the replacement character. */
static void am_xml_esc(am_buf *b, const char *s, int seg)
{
    for (; s && *s; s++) {
        size_t n;
        long cp = am_xml_bad_char(s, &n);
        if (cp >= 0) {
            if (seg)
                am_buf_printf(b, "<ph type=\"x-adaptmon-char\">U+%04lX</ph>", cp);
            else
                am_buf_appends(b, "\xEF\xBF\xBD");
            s += n - 1;
            continue;
        }
        switch (*s) {
        case '<': am_buf_appends(b, "&lt;"); break;
        case '>': am_buf_appends(b, "&gt;"); break;
        case '&': am_buf_appends(b, "&amp;"); break;
        case '"': am_buf_appends(b, "&quot;"); break;
        case '\r': am_buf_appends(b, "&#13;"); break;
        default: am_buf_appendc(b, *s);
        }
    }
}

static void am_xml_text(am_buf *b, const char *s)
{
    am_xml_esc(b, s, 0);
}

static void am_xml_seg(am_buf *b, const char *s)
{
    am_xml_esc(b, s, 1);
}

static const char *am_hyp_of(json_t *rq, const char *sys)
{
    json_t *h = json_object_get(rq, "hypothesis");
    if (h && !strcmp(sys, "default"))
        return json_string_value(h);
    return json_string_value(json_object_get(json_object_get(rq, "hypotheses"), sys));
}

/* Appends j (borrowed) compactly with exact reals, after a comma unless it
 * is the first row. */
static void am_pager_json(am_pager *c, const json_t *j)
{
    char *txt = am_json_dumps(j, 0);
    if (c->rows)
        am_buf_appendc(&c->out, ',');
    am_buf_appends(&c->out, txt ? txt : "null");
    free(txt);
}

/* A timeline row: the stored result with seq, id, created_at and the
 * request. */
static void am_pager_timeline_row(am_pager *c, int64_t seq, const char *client_id,
                                  const char *request_json, const char *result_json,
                                  int64_t created_at)
{
    /* A stored result (am_apply: compact, key-sorted, with this seq and id,
     * no created_at or request) gets its two members appended as text, the
     * bytes the parse and dump below would give; anything else is parsed. */
    char seqkey[40];
    snprintf(seqkey, sizeof seqkey, "\"seq\":%lld,", (long long)seq);
    json_t *idj = json_string(client_id);
    char *idtxt = json_dumps(idj, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(idj);
    am_buf idkey;
    am_buf_init(&idkey);
    am_buf_printf(&idkey, "\"id\":%s,", idtxt ? idtxt : "null");
    free(idtxt);
    size_t n = result_json ? strlen(result_json) : 0;
    int plain = n > 2 && result_json[0] == '{' && result_json[n - 1] == '}' &&
                strstr(result_json, seqkey) && strstr(result_json, am_buf_str(&idkey)) &&
                !strstr(result_json, "\"created_at\":") && !strstr(result_json, "\"request\":") &&
                request_json && *request_json;
    am_buf_cleanup(&idkey);
    if (plain) {
        json_t *t = am_json_time(created_at);
        char *ttxt = json_dumps(t, JSON_ENCODE_ANY | JSON_COMPACT);
        json_decref(t);
        if (c->rows)
            am_buf_appendc(&c->out, ',');
        am_buf_append(&c->out, result_json, n - 1);
        am_buf_appends(&c->out, ",\"created_at\":");
        am_buf_appends(&c->out, ttxt ? ttxt : "null");
        am_buf_appends(&c->out, ",\"request\":");
        am_buf_appends(&c->out, request_json);
        am_buf_appendc(&c->out, '}');
        free(ttxt);
        return;
    }
    json_t *o = json_loads(result_json, 0, NULL);
    if (!o)
        o = json_object();
    json_object_set_new(o, "seq", json_integer((json_int_t)seq));
    json_object_set_new(o, "id", json_string(client_id));
    json_object_set_new(o, "created_at", am_json_time(created_at));
    json_t *rq = json_loads(request_json, 0, NULL);
    if (rq)
        json_object_set_new(o, "request", rq);
    am_pager_json(c, o);
    json_decref(o);
}

/* A JSON export row {seq, id, created_at, request, result}. The stored
 * request and result are compact key-sorted jansson dumps (am_json_dump),
 * which parsing and dumping again turns into the same bytes, so they are
 * copied as they are: a 1 MB row costs 1 MB here, not a parsed tree and a
 * second dump. */
static void am_pager_export_row(am_pager *c, int64_t seq, const char *client_id,
                                const char *request_json, const char *result_json,
                                int64_t created_at)
{
    json_t *head = json_pack("{sIssso}", "seq", (json_int_t)seq, "id", client_id, "created_at",
                             am_json_time(created_at));
    char *h = am_json_dumps(head, 0);
    json_decref(head);
    size_t n = h ? strlen(h) : 0;
    if (c->rows)
        am_buf_appendc(&c->out, ',');
    if (n >= 2 && h[n - 1] == '}') { /* {"seq":…,"id":…,"created_at":…} without its brace */
        am_buf_append(&c->out, h, n - 1);
        am_buf_appendc(&c->out, ',');
    } else {
        am_buf_appendc(&c->out, '{');
    }
    free(h);
    am_buf_appends(&c->out, "\"request\":");
    am_buf_appends(&c->out, request_json && *request_json ? request_json : "null");
    am_buf_appends(&c->out, ",\"result\":");
    am_buf_appends(&c->out, result_json && *result_json ? result_json : "null");
    am_buf_appendc(&c->out, '}');
}

/* result.scores.systems of a stored result (new reference, NULL when
 * absent). Only that object is parsed: the result's words and running
 * totals, most of its bytes, are skipped as text (a CSV or TMX row needs
 * the systems' numbers alone). Text that is not compact JSON is parsed
 * whole. */
static json_t *am_exp_systems(const char *result_json)
{
    const char *e2;
    const char *scores = am_js_find(result_json, "scores");
    const char *sys = scores ? am_js_member(scores, "systems", &e2) : NULL;
    if (sys && *sys == '{')
        return json_loadb(sys, (size_t)(e2 - sys), 0, NULL);
    json_t *rs = json_loads(result_json ? result_json : "", 0, NULL);
    json_t *out = json_incref(json_object_get(json_object_get(rs, "scores"), "systems"));
    json_decref(rs);
    return out;
}

/*
 * CSV and TMX rows from the stored text itself. A row needs the request's
 * strings (source, translation, translator, the system's hypothesis) and a
 * dozen numbers of each system: parsing the request and the systems into
 * jansson trees was most of these exports' CPU (jansson + malloc ≈ 65 % at
 * 16,000 segments). Numbers are converted as jansson converts them (strtoll
 * / strtod of the same token, so the same %lld / shortest real), strings
 * decoded by am_js_string; text this cannot read exactly (not compact, a
 * name with escapes, an escape am_js_string leaves to jansson) takes the
 * parsed path, so the bytes are those of the parsed path either way
 * (tests/api/test_export_safety.py compares both).
 */

/* The strings of a stored request a CSV/TMX row uses (decoded; has_*: the
 * member is a string, as json_string_value would be non-NULL). */
typedef struct am_exp_rq {
    const char *text; /* the request's compact text (borrowed) */
    const char *hyps, *hyps_end; /* its "hypotheses" value, or NULL */
    const char *hyp, *hyp_end; /* its "hypothesis" value, or NULL */
    am_buf translator, source, translation, tmp;
    int has_translator, has_source, has_translation;
} am_exp_rq;

/* A member's decoded string into b: 1 (has = whether it is a string); 0
 * when the text needs the parsed path. */
static int am_exp_str(const char *v, const char *e, am_buf *b, int *has)
{
    *has = 0;
    am_buf_reset(b);
    am_buf_append(b, "", 0);
    if (!v || *v != '"')
        return 1; /* absent or not a string: json_string_value is NULL */
    if (!am_js_string(v, e, b))
        return 0;
    *has = 1;
    return 1;
}

/* Reads the request's members; 0 when the parsed path is needed. */
static int am_exp_rq_read(am_exp_rq *r, const char *request_json)
{
    static const char *const k[5] = {"translator", "source", "translation", "hypotheses",
                                     "hypothesis"};
    const char *v[5], *e[5];
    r->text = request_json;
    if (am_js_members(request_json, k, 5, v, e) < 0)
        return 0;
    r->hyps = v[3];
    r->hyps_end = e[3];
    r->hyp = v[4];
    r->hyp_end = e[4];
    return am_exp_str(v[0], e[0], &r->translator, &r->has_translator) &&
           am_exp_str(v[1], e[1], &r->source, &r->has_source) &&
           am_exp_str(v[2], e[2], &r->translation, &r->has_translation);
}

/* am_hyp_of on text: the system's hypothesis decoded into r->tmp; *out
 * NULL when absent. 0 when the parsed path is needed. */
static int am_exp_rq_hyp(am_exp_rq *r, const char *sys, const char **out)
{
    const char *v, *e;
    int has;
    if (r->hyp && !strcmp(sys, "default")) {
        v = r->hyp;
        e = r->hyp_end;
    } else {
        v = am_js_member(r->hyps, sys, &e);
    }
    if (!am_exp_str(v, e, &r->tmp, &has))
        return 0;
    *out = has ? r->tmp.data : NULL;
    return 1;
}

/* Is the token [v, e) a JSON number? *integer: without '.', 'e', 'E'. */
static int am_exp_tok_number(const char *v, const char *e, int *integer)
{
    if (!v || v == e || !(*v == '-' || (*v >= '0' && *v <= '9')))
        return 0;
    *integer = 1;
    for (const char *p = v; p < e; p++)
        if (*p == '.' || *p == 'e' || *p == 'E')
            *integer = 0;
    return 1;
}

/* am_csv_num on a value's text [v, e) (v may be NULL). An integer token
 * in canonical form (JSON has no leading zeros or '+'; "-0" and tokens
 * long enough to overflow are converted) is what "%lld" would print. */
static void am_exp_vnum(am_buf *b, const char *v, const char *e)
{
    int integer;
    if (!am_exp_tok_number(v, e, &integer))
        return;
    if (integer && e - v < 19 && !(v[0] == '-' && v[1] == '0'))
        am_buf_append(b, v, (size_t)(e - v));
    else if (integer)
        am_buf_printf(b, "%lld", strtoll(v, NULL, 10));
    else
        am_realfmt_buf(b, strtod(v, NULL));
}

/* json_integer_value of obj[key] on text (0 when absent or a real). */
static long long am_exp_tint(const char *obj, const char *key)
{
    const char *e, *v = am_js_member(obj, key, &e);
    int integer;
    if (!am_exp_tok_number(v, e, &integer) || !integer)
        return 0;
    return strtoll(v, NULL, 10);
}

/* Can a system name be used byte for byte (nothing jansson escapes, so the
 * key's text is the name)? */
static int am_exp_plain(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == '"' || p[i] == '\\')
            return 0;
    return 1;
}

/* One system's CSV line from text (s: its object; *s_end gets its end).
 * 0 when the parsed path is needed. */
static int am_exp_csv_sys(am_pager *c, int64_t seq, const char *client_id, am_exp_rq *r,
                          const char *sys, const char *s, const char **s_end)
{
    am_buf_printf(&c->out, "%lld,", (long long)seq);
    am_csv_field(&c->out, client_id);
    am_buf_appendc(&c->out, ',');
    am_csv_field(&c->out, sys);
    am_buf_appendc(&c->out, ',');
    am_csv_field(&c->out, r->has_translator ? r->translator.data : NULL);
    /* the system's members in one pass over its object */
    static const char *const k[9] = {"r0",   "r1",     "r01", "terms",         "bleu",
                                     "chrf", "chrfpp", "ter", "one_minus_term"};
    const char *v[9], *e[9];
    if (am_js_members_end(s, k, 9, v, e, s_end) < 0)
        return 0;
    static const char *const he[2] = {"hits", "total"};
    const char *hv[2], *hend[2];
    for (size_t i = 0; i < 3; i++) {
        am_js_members(v[i], he, 2, hv, hend);
        am_buf_appendc(&c->out, ',');
        am_exp_vnum(&c->out, hv[0], hend[0]);
        am_buf_appendc(&c->out, ',');
        am_exp_vnum(&c->out, hv[1], hend[1]);
    }
    static const char *const tk[2] = {"exact", "instances"};
    am_js_members(v[3], tk, 2, hv, hend);
    am_buf_appendc(&c->out, ',');
    am_exp_vnum(&c->out, hv[0], hend[0]);
    am_buf_appendc(&c->out, ',');
    am_exp_vnum(&c->out, hv[1], hend[1]);
    for (size_t i = 4; i < 9; i++) {
        am_buf_appendc(&c->out, ',');
        am_exp_vnum(&c->out, v[i], e[i]);
    }
    am_buf_appendc(&c->out, ',');
    am_csv_field(&c->out, r->has_source ? r->source.data : NULL);
    am_buf_appendc(&c->out, ',');
    const char *hyp;
    if (!am_exp_rq_hyp(r, sys, &hyp))
        return 0;
    am_csv_field(&c->out, hyp);
    am_buf_appendc(&c->out, ',');
    am_csv_field(&c->out, r->has_translation ? r->translation.data : NULL);
    am_buf_appends(&c->out, "\r\n");
    return 1;
}

/* One system's TMX props from text (s: its object; *s_end gets its end).
 * 0 when the parsed path is needed. */
static int am_exp_tmx_sys(am_pager *c, const char *sys, const char *s, const char **s_end)
{
    static const char *const counts[] = {"r0", "r1", "r01"};
    const char *v[3], *e[3];
    if (am_js_members_end(s, counts, 3, v, e, s_end) < 0)
        return 0;
    for (size_t i = 0; i < 3; i++) {
        const char *x = v[i];
        am_buf_printf(&c->out, "      <prop type=\"x-adaptmon-%s-", counts[i]);
        am_xml_text(&c->out, sys);
        am_buf_printf(&c->out, "\">%lld/%lld</prop>\n", am_exp_tint(x, "hits"),
                      am_exp_tint(x, "total"));
    }
    return 1;
}

/* The TMX unit's text after its systems (source and translation). */
static void am_exp_tmx_tail(am_pager *c, const char *src, const char *tgt)
{
    if (src) {
        am_buf_appends(&c->out, "      <tuv xml:lang=\"");
        am_xml_text(&c->out, c->srclang);
        am_buf_appends(&c->out, "\"><seg>");
        am_xml_seg(&c->out, src);
        am_buf_appends(&c->out, "</seg></tuv>\n");
    }
    am_buf_appends(&c->out, "      <tuv xml:lang=\"");
    am_xml_text(&c->out, c->tgtlang);
    am_buf_appends(&c->out, "\"><seg>");
    am_xml_seg(&c->out, tgt);
    am_buf_appends(&c->out, "</seg></tuv>\n    </tu>\n");
}

/* A CSV or TMX row from the stored text onto c->out: 1; 0 (c->out as it
 * was) when the text needs the parsed path. */
static int am_exp_row_text(am_pager *c, int64_t seq, const char *client_id,
                           const char *request_json, const char *result_json)
{
    /* the starts of scores and systems only: their ends would be found by
     * skipping the whole of them (the per-word data included) */
    const char *scores = am_js_find(result_json, "scores");
    const char *systems = scores ? am_js_find(scores, "systems") : NULL;
    if (!systems || *systems != '{')
        return 0;
    size_t mark = c->out.len;
    am_exp_rq r;
    memset(&r, 0, sizeof r);
    am_buf_init(&r.translator);
    am_buf_init(&r.source);
    am_buf_init(&r.translation);
    am_buf_init(&r.tmp);
    am_buf name;
    am_buf_init(&name);
    int ok = am_exp_rq_read(&r, request_json);
    if (ok && c->fmt != AM_PG_CSV) {
        am_buf_appends(&c->out, "    <tu tuid=\"");
        am_xml_text(&c->out, client_id);
        if (r.has_translator) { /* TMX: the user who last changed the unit */
            am_buf_appends(&c->out, "\" changeid=\"");
            am_xml_text(&c->out, r.translator.data);
        }
        am_buf_appends(&c->out, "\">\n");
        am_buf_printf(&c->out, "      <prop type=\"x-adaptmon-seq\">%lld</prop>\n", (long long)seq);
    }
    /* each system's object is read once, by its writer, which returns
     * where it ends */
    const char *p = systems + 1;
    while (ok && *p == '"') {
        const char *ke = am_js_skip(p), *ve = NULL;
        if (!ke || *ke != ':' || !am_exp_plain(p + 1, (size_t)(ke - p - 2))) {
            ok = 0;
            break;
        }
        am_buf_reset(&name);
        am_buf_append(&name, p + 1, (size_t)(ke - p - 2));
        if (c->fmt == AM_PG_CSV)
            ok = am_exp_csv_sys(c, seq, client_id, &r, name.data, ke + 1, &ve);
        else
            ok = am_exp_tmx_sys(c, name.data, ke + 1, &ve);
        if (ok && !ve)
            ok = 0;
        if (ok)
            p = *ve == ',' ? ve + 1 : ve;
    }
    if (ok && *p != '}') /* systems' members end where systems does */
        ok = 0;
    if (ok && c->fmt != AM_PG_CSV)
        am_exp_tmx_tail(c, r.has_source ? r.source.data : NULL,
                        r.has_translation ? r.translation.data : NULL);
    if (!ok) {
        c->out.len = mark;
        if (c->out.data)
            c->out.data[mark] = '\0';
    }
    am_buf_cleanup(&r.translator);
    am_buf_cleanup(&r.source);
    am_buf_cleanup(&r.translation);
    am_buf_cleanup(&r.tmp);
    am_buf_cleanup(&name);
    return ok;
}

/* Renders one row into c->out (am_store_segrow_fn; ctx: the pager). */
static int am_exp_row(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                      const char *result_json, int64_t created_at)
{
    am_pager *c = ctx;
    if (seq > c->upper) { /* past the last seq (a page counts rows; seqs have gaps) */
        c->cursor = c->upper;
        return 0;
    }
    c->cursor = seq;
    if (c->fmt == AM_PG_TIMELINE || c->fmt == AM_PG_JSON) {
        if (c->fmt == AM_PG_TIMELINE)
            am_pager_timeline_row(c, seq, client_id, request_json, result_json, created_at);
        else
            am_pager_export_row(c, seq, client_id, request_json, result_json, created_at);
        c->rows++;
        return 0;
    }
    if (am_exp_row_text(c, seq, client_id, request_json, result_json)) {
        c->rows++;
        return 0;
    }
    json_t *rq = json_loads(request_json, 0, NULL), *systems = am_exp_systems(result_json);
    if (c->fmt == AM_PG_CSV) {
        const char *sys;
        json_t *s;
        json_object_foreach(systems, sys, s)
        {
            am_buf_printf(&c->out, "%lld,", (long long)seq);
            am_csv_field(&c->out, client_id);
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, sys);
            am_buf_appendc(&c->out, ',');
            am_csv_field(&c->out, json_string_value(json_object_get(rq, "translator")));
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
        const char *who = json_string_value(json_object_get(rq, "translator"));
        if (who) { /* TMX: the user who last changed the unit */
            am_buf_appends(&c->out, "\" changeid=\"");
            am_xml_text(&c->out, who);
        }
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
        am_exp_tmx_tail(c, json_string_value(json_object_get(rq, "source")),
                        json_string_value(json_object_get(rq, "translation")));
    }
    json_decref(rq);
    json_decref(systems);
    c->rows++;
    return 0;
}

/* Frees the pager (am_stream_free_fn). A page that was very large leaves
 * freed memory in the allocator's arenas: it is handed back. */
static void am_pager_free(void *cls)
{
    am_pager *c = cls;
    if (!c)
        return;
    int trim = c->peak > 32u << 20;
    am_buf_cleanup(&c->out);
    free(c->session);
    free(c->footer);
    free(c->srclang);
    free(c->tgtlang);
    free(c);
    if (trim)
        malloc_trim(0);
}

/* Reads and renders the next page; adapts the page size to the bytes it
 * rendered. Returns AM_OK or the store's error. */
static int am_pager_fill(am_pager *c)
{
    int64_t want = c->upper - c->cursor;
    if ((int64_t)c->page < want)
        want = (int64_t)c->page;
    int64_t before = c->cursor;
    am_buf_reset(&c->out);
    c->off = 0;
    /* a page in its own snapshot; a rewrite since the first page ends the
     * stream with an error rather than mixing old and new results */
    int rc = am_store_segments_each_at(c->srv->store, c->session, c->cursor, (size_t)want, c->stamp,
                                       am_exp_row, c);
    if (rc != AM_OK)
        return rc;
    if (c->cursor == before) /* the session lost its rows (deleted): end */
        c->cursor = c->upper;
    if (c->out.len > c->peak)
        c->peak = c->out.len;
    if (c->out.len > 2 * AM_PAGER_TARGET && c->page > 1)
        c->page /= 2;
    else if (c->out.len < AM_PAGER_TARGET / 2 && c->page < AM_PAGER_MAX_ROWS)
        c->page *= 2;
    return AM_OK;
}

/* The stream's reader (am_stream_read_fn): pending bytes, else the next
 * page, else the footer, else the end. */
static long am_pager_read(void *cls, char *buf, size_t max)
{
    am_pager *c = cls;
    for (;;) {
        if (c->off < c->out.len) {
            size_t n = c->out.len - c->off;
            if (n > max)
                n = max;
            memcpy(buf, c->out.data + c->off, n);
            c->off += n;
            return (long)n;
        }
        if (atomic_load(&c->srv->abandon))
            return AM_STREAM_ABORT; /* shutting down: the export is cut */
        if (c->cursor < c->upper) {
            if (am_pager_fill(c) != AM_OK)
                return AM_STREAM_ABORT;
            continue;
        }
        if (c->footer_sent)
            return AM_STREAM_END;
        am_buf_reset(&c->out);
        c->off = 0;
        am_buf_appends(&c->out, c->footer);
        c->footer_sent = 1;
    }
}

am_pager *am_pager_new(am_server *srv, const char *session, int fmt, int64_t after, int64_t upper)
{
    am_pager *c = am_xcalloc(1, sizeof *c);
    c->srv = srv;
    c->session = am_xstrdup(session);
    c->fmt = (enum am_pager_fmt)fmt;
    c->cursor = after;
    c->upper = upper;
    /* an answer of up to 32 seqs (the dashboard asks for 20) is read as one
     * page, in one snapshot, so a concurrent edit cannot cut it; longer
     * ones start at one row and adapt the page to the bytes rows render to
     * (rows can be large: an export's memory stays bounded) */
    c->page = upper - after <= 32 && upper > after ? (size_t)(upper - after) : 1;
    c->stamp[0] = c->stamp[1] = -1;
    am_buf_init(&c->out);
    return c;
}

void am_pager_stream(am_pager *c, am_resp *resp, const char *content_type, const char *header,
                     const char *footer)
{
    am_buf_appends(&c->out, header);
    c->footer = am_xstrdup(footer);
    am_resp_stream(resp, 200, content_type, am_pager_read, am_pager_free, c);
}

/* The compact JSON text of o (stolen) without its closing brace, for a
 * header that continues with more members. Caller frees. */
static char *am_json_open(json_t *o)
{
    char *txt = am_json_dumps(o, 0);
    json_decref(o);
    if (!txt)
        return am_xstrdup("{");
    size_t n = strlen(txt);
    if (n && txt[n - 1] == '}')
        txt[n - 1] = '\0';
    return txt;
}

void am_api_export(am_req *req, am_resp *resp)
{
    const char *format = am_req_query(req, "format");
    int fmt;
    if (!format || !strcmp(format, "json"))
        fmt = AM_PG_JSON;
    else if (!strcmp(format, "csv"))
        fmt = AM_PG_CSV;
    else if (!strcmp(format, "tmx"))
        fmt = AM_PG_TMX;
    else {
        am_resp_problem(resp, req, AM_P_BAD_REQUEST, "format must be csv, json or tmx");
        return;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return;
    json_t *opts = json_loads(row.options, 0, NULL);
    const char *srclang = json_string_value(json_object_get(opts, "source_lang"));
    const char *tgtlang = json_string_value(json_object_get(opts, "target_lang"));
    /* the rows are the seqs up to the highest, read as of now (with gaps
     * where segments were deleted: schema/007) */
    am_pager *c = am_pager_new(req->srv, row.id, fmt, 0, row.last_seq);
    c->srclang = srclang ? am_xstrdup(srclang) : NULL;
    c->tgtlang = tgtlang ? am_xstrdup(tgtlang) : NULL;
    am_buf head;
    am_buf_init(&head);
    char disp[300];
    const char *ctype;
    const char *footer;
    if (fmt == AM_PG_JSON) {
        char *open =
            am_json_open(json_pack("{sosssI}", "session", am_api_session_json(req->srv, &row),
                                   "signature", row.signature, "count", (json_int_t)row.segments));
        am_buf_appends(&head, open);
        am_buf_appends(&head, ",\"segments\":[");
        free(open);
        footer = "]}\n";
        ctype = "application/json";
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.json\"", row.id);
    } else if (fmt == AM_PG_CSV) {
        am_buf_appends(&head, "seq,id,system,translator,r0_hits,r0_total,r1_hits,r1_total,r01_hits,"
                              "r01_total,term_exact,term_instances,bleu,chrf,chrfpp,ter,"
                              "one_minus_term,source,hypothesis,translation\r\n");
        footer = "";
        ctype = "text/csv; charset=utf-8";
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.csv\"", row.id);
    } else {
        am_buf_appends(&head,
                       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<tmx version=\"1.4\">\n  <header creationtool=\"adaptmon\" "
                       "creationtoolversion=\"1\" datatype=\"plaintext\" "
                       "segtype=\"sentence\" adminlang=\"en\" o-tmf=\"adaptmon\" srclang=\"");
        am_xml_text(&head, srclang);
        am_buf_appends(&head, "\">\n    <prop type=\"x-adaptmon-session\">");
        am_xml_text(&head, row.id);
        am_buf_appends(&head, "</prop>\n    <prop type=\"x-adaptmon-signature\">");
        am_xml_text(&head, row.signature);
        am_buf_appends(&head, "</prop>\n  </header>\n  <body>\n");
        footer = "  </body>\n</tmx>\n";
        ctype = "application/x-tmx+xml; charset=utf-8";
        snprintf(disp, sizeof disp, "attachment; filename=\"%s.tmx\"", row.id);
    }
    am_pager_stream(c, resp, ctype, am_buf_str(&head), footer);
    am_resp_header(resp, "Content-Disposition", disp);
    am_buf_cleanup(&head);
    json_decref(opts);
    am_store_session_clear(&row);
}

void am_api_timeline(am_req *req, am_resp *resp, const am_store_session *row, int64_t after,
                     int64_t limit)
{
    /* pages are seq ranges (after, after + limit]: one holds fewer rows
     * where segments were deleted (seq gaps: schema/007) */
    int64_t upper = after + limit < row->last_seq ? after + limit : row->last_seq;
    if (upper < after)
        upper = after;
    char *open = am_json_open(json_pack("{ss}", "session", row->id));
    char footer[96];
    if (after + limit < row->last_seq)
        snprintf(footer, sizeof footer, "],\"next\":%lld,\"total\":%lld}\n",
                 (long long)(after + limit), (long long)row->segments);
    else
        snprintf(footer, sizeof footer, "],\"next\":null,\"total\":%lld}\n",
                 (long long)row->segments);
    am_buf head;
    am_buf_init(&head);
    am_buf_appends(&head, open);
    am_buf_appends(&head, ",\"segments\":[");
    free(open);
    am_pager *c = am_pager_new(req->srv, row->id, AM_PG_TIMELINE, after, upper);
    am_pager_stream(c, resp, "application/json", am_buf_str(&head), footer);
    am_buf_cleanup(&head);
}
