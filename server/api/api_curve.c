/* api_curve.c — GET …/curve: the dashboard's curves, computed on the
 * server from the stored timeline so that the page never downloads it.
 *
 * Per system, six series over the segment number: R0, R1, R0+1, term
 * exact-match accuracy, term window overlap (one width) and 1 − TERm. With
 * window=0 a point is the running value after that segment (the stored
 * totals); with window=W it is the value over the last W segments, summed
 * from the per-segment counts (hits/total, instances, TER edits). The
 * segment numbers are downsampled to at most `points` (always keeping the
 * first and the last); only the rows a sample needs are read (running: the
 * sampled segments alone; moving window: the W segments before each), so
 * the first view of a long session costs ~points rows, not the timeline.
 * Bounded metrics are clamped into [0, 1] (a sum of
 * floating-point fractions can end at 1.0000000000000002); 1 − TERm is
 * clamped above only (it is negative when the output needs more edits than
 * the reference has words). glossary_changes lists the first segment scored
 * with each new glossary version (store.c: a seek per version in an index,
 * not a scan), so the page marks them on load. The ETag follows the
 * session's incarnation and version.
 *
 * With ci=1 each system also carries ci[key] = {lo, hi} for the four count
 * ratios (r0, r1, r01, term_exact_match): the Wilson 95% interval of the
 * point's hits out of its words (running: the stored totals' counts;
 * window: the window's sums), null where there is no word. */
#include "api.h"

#include "ci_stats.h"
#include "jscan.h"
#include "peer.h"

#include "ingest.h"
#include "json.h"
#include "plot.h"
#include "sessions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { AM_CV_R0, AM_CV_R1, AM_CV_R01, AM_CV_TERM, AM_CV_WO, AM_CV_OMT, AM_CV_N };
static const char *const am_cv_keys[AM_CV_N] = {
    "r0", "r1", "r01", "term_exact_match", "window_overlap", "one_minus_term"};

#define AM_CV_MAX_SYSTEMS 64
#define AM_CV_NCI 4 /* the count ratios with a band: r0, r1, r01, term_exact_match */

typedef struct am_cv_sys {
    char *name;
    json_t *series[AM_CV_N]; /* arrays of numbers / null, one per sampled segment */
    double *ring; /* window × AM_CV_N × {num, den} */
    double last[AM_CV_N]; /* running values after the last segment with this system */
    double last_counts[AM_CV_NCI][2]; /* their {hits, words} (ci=1) */
    json_t *lo[AM_CV_NCI], *hi[AM_CV_NCI]; /* ci=1: band arrays like series */
} am_cv_sys;

typedef struct am_cv_ctx {
    int64_t n; /* segments considered (the session's count when read) */
    int64_t points; /* at most this many samples */
    int64_t window; /* 0: running */
    int ci; /* 1: Wilson bands of the count ratios */
    char wo[16]; /* window-overlap width as a JSON key */
    int64_t next_i; /* index of the next sample */
    int64_t seen; /* rows read */
    int64_t last; /* seq of the last row read */
    int64_t from; /* the row read next follows seq `from` in the log (seqs have gaps) */
    json_t *x; /* sampled seqs */
    am_cv_sys sys[AM_CV_MAX_SYSTEMS];
    size_t nsys;
    int rc;
    am_peer *peer; /* the client's connection (borrowed): stop when it has gone */
    /* window mode: the rows' ?ci= statistics records (ci_stats.h) hold
     * every per-segment count it sums, in ~300 bytes against the result's
     * ~2 KB of text to scan; rec NULL: results only */
    const am_scorer *scorer; /* the session's (borrowed, held by the request) */
    am_cistats_rec *rec; /* scratch of one record */
    size_t wo_index; /* wo's place in the scorer's windows */
    am_store *store; /* for a record that does not decode: its result alone */
    const char *session;
    int64_t with_rec, without_rec; /* rows read through the records' walk */
} am_cv_ctx;

/* The seq of sample i (0-based) of ctx's downsampling. */
static int64_t am_cv_sample_seq(const am_cv_ctx *c, int64_t i)
{
    if (c->n <= c->points)
        return i + 1;
    return 1 + (i * (c->n - 1)) / (c->points - 1);
}

/* value clamped into [lo, hi]; NAN stays NAN */
static double am_cv_clamp(double v, double lo, double hi)
{
    if (isnan(v))
        return v;
    return v < lo ? lo : v > hi ? hi : v;
}

/* A number from o[key] (or o[key].score when an object); NAN when absent or
 * null. o borrowed. */
static double am_cv_num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        v = json_object_get(v, "score");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The system named name, created with `backfill` nulls per series when new;
 * NULL when there are too many systems. Borrowed. */
static am_cv_sys *am_cv_system(am_cv_ctx *c, const char *name, size_t backfill)
{
    for (size_t i = 0; i < c->nsys; i++)
        if (!strcmp(c->sys[i].name, name))
            return &c->sys[i];
    if (c->nsys == AM_CV_MAX_SYSTEMS)
        return NULL;
    am_cv_sys *s = &c->sys[c->nsys];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    if (c->window)
        s->ring = calloc((size_t)c->window * AM_CV_N * 2, sizeof(double));
    if (!s->name || (c->window && !s->ring)) {
        free(s->name);
        free(s->ring);
        return NULL;
    }
    for (int k = 0; k < AM_CV_N; k++) {
        s->last[k] = NAN;
        s->series[k] = json_array();
        for (size_t j = 0; j < backfill; j++)
            json_array_append_new(s->series[k], json_null());
    }
    for (int k = 0; c->ci && k < AM_CV_NCI; k++) {
        s->lo[k] = json_array();
        s->hi[k] = json_array();
        for (size_t j = 0; j < backfill; j++) {
            json_array_append_new(s->lo[k], json_null());
            json_array_append_new(s->hi[k], json_null());
        }
    }
    c->nsys++;
    return s;
}

/* One segment's {num, den} per series for a system (scores borrowed; NULL:
 * the system has no output for this segment → zeros). */
static void am_cv_counts(json_t *scores, const char *wo, double out[AM_CV_N][2])
{
    memset(out, 0, sizeof(double) * AM_CV_N * 2);
    if (!scores)
        return;
    static const char *const rk[3] = {"r0", "r1", "r01"};
    for (int k = 0; k < 3; k++) {
        json_t *r = json_object_get(scores, rk[k]);
        out[k][0] = (double)json_integer_value(json_object_get(r, "hits"));
        out[k][1] = (double)json_integer_value(json_object_get(r, "total"));
    }
    json_t *t = json_object_get(scores, "terms"); /* absent without a glossary */
    out[AM_CV_TERM][0] = (double)json_integer_value(json_object_get(t, "exact"));
    out[AM_CV_TERM][1] = (double)json_integer_value(json_object_get(t, "instances"));
    json_t *w = json_object_get(json_object_get(t, "window_overlap"), wo);
    double inst = (double)json_integer_value(json_object_get(w, "instances"));
    double sc = am_cv_num(w, "score");
    if (inst > 0 && isfinite(sc)) {
        out[AM_CV_WO][0] = sc * inst;
        out[AM_CV_WO][1] = inst;
    }
    double len = am_cv_num(scores, "ter_ref_len"), ed = am_cv_num(scores, "term_edits");
    if (isfinite(len) && isfinite(ed) && len > 0) {
        out[AM_CV_OMT][0] = len - ed;
        out[AM_CV_OMT][1] = len;
    }
}

/* The running values after a segment from its stored totals (borrowed). */
static void am_cv_running(json_t *tot, const char *wo, double v[AM_CV_N])
{
    json_t *terms = json_object_get(tot, "terms");
    v[AM_CV_R0] = am_cv_num(tot, "r0");
    v[AM_CV_R1] = am_cv_num(tot, "r1");
    v[AM_CV_R01] = am_cv_num(tot, "r01");
    v[AM_CV_TERM] = am_cv_num(terms, "exact_match");
    v[AM_CV_WO] = am_cv_num(json_object_get(terms, "window_overlap"), wo);
    v[AM_CV_OMT] = am_cv_num(tot, "one_minus_term");
}

/* The {hits, words} of the count ratios in stored totals (borrowed). */
static void am_cv_running_counts(json_t *tot, double out[AM_CV_NCI][2])
{
    static const char *const rk[3] = {"r0", "r1", "r01"};
    for (int k = 0; k < 3; k++) {
        json_t *r = json_object_get(tot, rk[k]);
        out[k][0] = (double)json_integer_value(json_object_get(r, "hits"));
        out[k][1] = (double)json_integer_value(json_object_get(r, "total"));
    }
    json_t *t = json_object_get(tot, "terms");
    out[AM_CV_TERM][0] = (double)json_integer_value(json_object_get(t, "exact"));
    out[AM_CV_TERM][1] = (double)json_integer_value(json_object_get(t, "instances"));
}

/* Appends a band point (Wilson interval of counts) to a system's arrays. */
static void am_cv_band(am_cv_sys *s, const double counts[AM_CV_NCI][2])
{
    for (int k = 0; k < AM_CV_NCI; k++) {
        double lo, hi;
        am_plot_wilson(counts[k][0], counts[k][1], &lo, &hi);
        json_array_append_new(s->lo[k], isfinite(lo) ? json_real(lo) : json_null());
        json_array_append_new(s->hi[k], isfinite(hi) ? json_real(hi) : json_null());
    }
}

/* What one row contributes to one system: its per-segment counts (window
 * mode) or its stored running values and their counts (running mode;
 * has_tot 0: no totals for the system yet → it keeps its last values). */
typedef struct am_cv_in {
    double cur[AM_CV_N][2];
    int has_tot;
    double run[AM_CV_N];
    double runc[AM_CV_NCI][2];
} am_cv_in;

/* Adds one segment to a system's window and, when sampled, its point. */
static void am_cv_add(am_cv_ctx *c, am_cv_sys *s, const am_cv_in *in, int sampled)
{
    double v[AM_CV_N];
    if (c->window) {
        double *slot = s->ring + (size_t)(c->seen % c->window) * AM_CV_N * 2;
        for (int k = 0; k < AM_CV_N; k++) {
            slot[2 * k] = in->cur[k][0];
            slot[2 * k + 1] = in->cur[k][1];
        }
        if (!sampled)
            return;
        /* summed oldest first at each sample (no drift from running
         * subtractions: the value does not depend on which rows were read) */
        int64_t have = c->seen + 1 < c->window ? c->seen + 1 : c->window;
        for (int k = 0; k < AM_CV_N; k++) {
            double num = 0, den = 0;
            for (int64_t j = c->seen + 1 - have; j <= c->seen; j++) {
                const double *sl = s->ring + (size_t)(j % c->window) * AM_CV_N * 2;
                num += sl[2 * k];
                den += sl[2 * k + 1];
            }
            v[k] = den > 0 ? num / den : NAN;
            if (k < AM_CV_NCI) {
                s->last_counts[k][0] = num;
                s->last_counts[k][1] = den;
            }
        }
    } else {
        /* a system without output in this segment keeps its running values */
        if (in->has_tot) {
            memcpy(s->last, in->run, sizeof s->last);
            memcpy(s->last_counts, in->runc, sizeof s->last_counts);
        }
        memcpy(v, s->last, sizeof v);
    }
    if (!sampled)
        return;
    for (int k = 0; k < AM_CV_N; k++) {
        double y = am_cv_clamp(v[k], k == AM_CV_OMT ? -INFINITY : 0.0, 1.0);
        json_array_append_new(s->series[k], isfinite(y) ? json_real(y) : json_null());
    }
    if (c->ci)
        am_cv_band(s, (const double(*)[2])s->last_counts);
}

/* The row's input for a system from parsed scores and totals (borrowed;
 * either may be NULL). */
static void am_cv_in_json(const am_cv_ctx *c, json_t *scores, json_t *tot, am_cv_in *in)
{
    if (c->window) {
        am_cv_counts(scores, c->wo, in->cur);
        return;
    }
    in->has_tot = tot != NULL;
    if (tot) {
        am_cv_running(tot, c->wo, in->run);
        am_cv_running_counts(tot, in->runc);
    }
}

/*
 * The same numbers read from the stored text itself, without jansson (the
 * curve's cost was parsing ~12,000 results' totals and systems into trees
 * to read a dozen numbers of each: jansson + malloc ≈ 85 % of its CPU at
 * window=50). A number is converted exactly as jansson converts it (strtod
 * / strtoll on the same token; jansson's json_integer_value of a real is 0),
 * so the points are bit-identical to the parsed path, which stays for text
 * that is not compact or names that need escapes (tests/api/test_curve.py
 * compares both on the same timeline).
 */

/* The token [v, e) of a value; is it a JSON number? is it an integer? */
static int am_cv_tok_number(const char *v, const char *e, int *integer)
{
    if (!v || v == e || !(*v == '-' || (*v >= '0' && *v <= '9')))
        return 0;
    *integer = 1;
    for (const char *p = v; p < e; p++)
        if (*p == '.' || *p == 'e' || *p == 'E')
            *integer = 0;
    return 1;
}

/* am_cv_num on a value's text [v, e): the number, or its "score" member
 * when an object; NAN when v is NULL or not a number. */
static double am_cv_vnum(const char *v, const char *e)
{
    if (v && *v == '{')
        v = am_js_member(v, "score", &e);
    int integer;
    if (!am_cv_tok_number(v, e, &integer))
        return NAN;
    return integer ? (double)strtoll(v, NULL, 10) : strtod(v, NULL);
}

/* json_integer_value on a value's text, as a double: 0 when v is NULL or
 * not an integer (a real included). */
static double am_cv_vint(const char *v, const char *e)
{
    int integer;
    if (!am_cv_tok_number(v, e, &integer) || !integer)
        return 0;
    return (double)strtoll(v, NULL, 10);
}

/* {hits, total} of a recall object's text (NULL or not an object: 0, 0). */
static void am_cv_thits(const char *r, double out[2])
{
    static const char *const k[2] = {"hits", "total"};
    const char *v[2], *e[2];
    am_js_members(r, k, 2, v, e);
    out[0] = am_cv_vint(v[0], e[0]);
    out[1] = am_cv_vint(v[1], e[1]);
}

/* am_cv_counts on text (scores: the system's value). Each object is read
 * in one pass for all of its wanted members; *end gets the end of scores
 * (NULL when it is not a compact object). */
static void am_cv_tcounts(const char *scores, const char *wo, double out[AM_CV_N][2],
                          const char **end)
{
    memset(out, 0, sizeof(double) * AM_CV_N * 2);
    static const char *const sk[6] = {"r0", "r1", "r01", "terms", "ter_ref_len", "term_edits"};
    const char *sv[6], *se[6];
    if (am_js_members_end(scores, sk, 6, sv, se, end) < 0)
        return;
    for (int k = 0; k < 3; k++)
        am_cv_thits(sv[k], out[k]);
    static const char *const tk[3] = {"exact", "instances", "window_overlap"};
    const char *tv[3], *te[3];
    am_js_members(sv[3], tk, 3, tv, te);
    out[AM_CV_TERM][0] = am_cv_vint(tv[0], te[0]);
    out[AM_CV_TERM][1] = am_cv_vint(tv[1], te[1]);
    const char *we, *w = am_js_member(tv[2], wo, &we);
    static const char *const wk[2] = {"instances", "score"};
    const char *wv[2], *wend[2];
    am_js_members(w, wk, 2, wv, wend);
    double inst = am_cv_vint(wv[0], wend[0]);
    double sc = am_cv_vnum(wv[1], wend[1]);
    if (inst > 0 && isfinite(sc)) {
        out[AM_CV_WO][0] = sc * inst;
        out[AM_CV_WO][1] = inst;
    }
    double len = am_cv_vnum(sv[4], se[4]), ed = am_cv_vnum(sv[5], se[5]);
    if (isfinite(len) && isfinite(ed) && len > 0) {
        out[AM_CV_OMT][0] = len - ed;
        out[AM_CV_OMT][1] = len;
    }
}

/* am_cv_running and am_cv_running_counts on text (tot: the system's value). */
static void am_cv_trunning(const char *tot, const char *wo, am_cv_in *in)
{
    static const char *const sk[5] = {"r0", "r1", "r01", "terms", "one_minus_term"};
    const char *sv[5], *se[5];
    am_js_members(tot, sk, 5, sv, se);
    for (int k = 0; k < 3; k++) {
        in->run[k] = am_cv_vnum(sv[k], se[k]);
        am_cv_thits(sv[k], in->runc[k]);
    }
    in->run[AM_CV_OMT] = am_cv_vnum(sv[4], se[4]);
    static const char *const tk[4] = {"exact_match", "window_overlap", "exact", "instances"};
    const char *tv[4], *te[4];
    am_js_members(sv[3], tk, 4, tv, te);
    in->run[AM_CV_TERM] = am_cv_vnum(tv[0], te[0]);
    const char *we, *w = am_js_member(tv[1], wo, &we);
    in->run[AM_CV_WO] = am_cv_vnum(w, we);
    in->runc[AM_CV_TERM][0] = am_cv_vint(tv[2], te[2]);
    in->runc[AM_CV_TERM][1] = am_cv_vint(tv[3], te[3]);
}

/* Can name be matched as a key in the stored text byte for byte (nothing
 * jansson would escape)? */
static int am_cv_plain(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch < 0x20 || ch == '"' || ch == '\\' || ch == '/' || ch >= 0x7f)
            return 0;
    }
    return 1;
}

#define AM_CV_NAME_MAX 256 /* longer system names take the parsed path */

/* Adds one row to every system registered so far: cur[i] for those the row
 * has (here[i]), zeros for the others (a system absent from a row counts as
 * nothing there). */
static void am_cv_add_row(am_cv_ctx *c, const unsigned char *here, double cur[][AM_CV_N][2],
                          int sampled)
{
    for (size_t i = 0; i < c->nsys; i++) {
        am_cv_in in;
        memset(&in, 0, sizeof in);
        if (here[i])
            memcpy(in.cur, cur[i], sizeof in.cur);
        am_cv_add(c, &c->sys[i], &in, sampled);
    }
}

/* Window mode, one row from its text: the systems of scores.systems (the
 * same names as the row's totals, in the same order: a result's scores and
 * totals are written from one list of names, json_answer.c) and each one's
 * per-segment counts. Only result.scores.systems is read: not the per-word
 * data after it, nor the running totals (≈ 1 KB a system) after that,
 * which the running mode needs and this one did not (60 % of the curve's
 * text scanning at window=50). 1, 0 or -1 as am_cv_row_text. */
static int am_cv_row_window(am_cv_ctx *c, const char *result_json, int sampled)
{
    const char *sc = am_js_find(result_json, "scores");
    const char *sy = sc && *sc == '{' ? am_js_find(sc, "systems") : NULL;
    if (!sy || *sy != '{')
        return 0;
    for (size_t i = 0; i < c->nsys; i++)
        if (!am_cv_plain(c->sys[i].name, strlen(c->sys[i].name)))
            return 0;
    double cur[AM_CV_MAX_SYSTEMS][AM_CV_N][2];
    unsigned char here[AM_CV_MAX_SYSTEMS] = {0}; /* not here: zeros (no 6 KB memset a row) */
    size_t before = json_array_size(c->x);
    const char *p = sy + 1;
    while (*p == '"') {
        const char *ke = am_js_skip(p), *ve = NULL;
        size_t len = ke ? (size_t)(ke - p - 2) : 0;
        if (!ke || *ke != ':' || len >= AM_CV_NAME_MAX || !am_cv_plain(p + 1, len))
            return 0;
        char name[AM_CV_NAME_MAX];
        memcpy(name, p + 1, len);
        name[len] = '\0';
        am_cv_sys *s = am_cv_system(c, name, before);
        if (!s) {
            c->rc = AM_ERR_NOMEM;
            return -1;
        }
        here[s - c->sys] = 1;
        am_cv_tcounts(ke + 1, c->wo, cur[s - c->sys], &ve);
        if (!ve)
            return 0; /* the systems registered so far are found again there */
        p = *ve == ',' ? ve + 1 : ve;
    }
    if (*p != '}')
        return 0;
    am_cv_add_row(c, here, cur, sampled);
    return 1;
}

/* One system's per-segment counts from its statistics record g: the
 * numbers am_cv_tcounts reads from the result's text (ci_stats.c writes the
 * values the stored result gives back: a window's sum is its JSON score
 * times its instances), so the curve is the same to the last bit. */
static void am_cv_rec_counts(const am_cv_ctx *c, const am_sys_seg *g, double out[AM_CV_N][2])
{
    memset(out, 0, sizeof(double) * AM_CV_N * 2);
    out[AM_CV_R0][0] = (double)g->recall.r[0].hits;
    out[AM_CV_R0][1] = (double)g->recall.r[0].total;
    out[AM_CV_R1][0] = (double)g->recall.r[1].hits;
    out[AM_CV_R1][1] = (double)g->recall.r[1].total;
    out[AM_CV_R01][0] = (double)g->recall.r01.hits;
    out[AM_CV_R01][1] = (double)g->recall.r01.total;
    out[AM_CV_TERM][0] = (double)g->terms_totals.exact;
    out[AM_CV_TERM][1] = (double)g->terms_totals.instances;
    double inst = (double)g->terms_totals.win_count[c->wo_index];
    double sum = g->terms_totals.win_sum[c->wo_index];
    if (inst > 0 && isfinite(sum)) {
        out[AM_CV_WO][0] = sum;
        out[AM_CV_WO][1] = inst;
    }
    double len = (double)g->ter_ref_len, ed = g->term_edits;
    if (isfinite(ed) && len > 0) {
        out[AM_CV_OMT][0] = len - ed;
        out[AM_CV_OMT][1] = len;
    }
}

/* One row (window mode) from its ?ci= record stats (borrowed): its systems
 * registered in the record's order (the result's scores.systems order)
 * and each one's counts added. 1 done; 0 when there is no record or it
 * does not decode for the session's scorer (the caller reads the result
 * instead); -1 out of memory (c->rc set). */
static int am_cv_row_rec(am_cv_ctx *c, const char *stats, int sampled)
{
    if (!c->rec || !stats || am_cistats_read(c->scorer, stats, c->rec) != AM_OK)
        return 0;
    double cur[AM_CV_MAX_SYSTEMS][AM_CV_N][2];
    unsigned char here[AM_CV_MAX_SYSTEMS] = {0}; /* not here: zeros */
    size_t before = json_array_size(c->x);
    for (size_t k = 0; k < c->rec->nsys; k++) {
        am_cv_sys *s = am_cv_system(c, c->rec->name[k], before);
        if (!s) {
            c->rc = AM_ERR_NOMEM;
            return -1;
        }
        here[s - c->sys] = 1;
        am_cv_rec_counts(c, &c->rec->sys[k], cur[s - c->sys]);
    }
    am_cv_add_row(c, here, cur, sampled);
    return 1;
}

/* One row from its text: registers the systems of its totals (in their
 * order) and adds each system's input. 1 done; 0 when the text is not
 * compact or a name needs escapes (the caller parses it instead); -1 out
 * of memory (c->rc set). */
static int am_cv_row_text(am_cv_ctx *c, const char *result_json, int sampled)
{
    if (c->window)
        return am_cv_row_window(c, result_json, sampled);
    /* running: the totals alone (found by their start: their end is not
     * needed, nor scores.systems) */
    const char *t = am_js_find(result_json, "totals");
    if (!t || *t != '{')
        return 0;
    for (size_t i = 0; i < c->nsys; i++)
        if (!am_cv_plain(c->sys[i].name, strlen(c->sys[i].name)))
            return 0;
    /* the systems of totals, in their order; a name that needs escapes
     * sends the row to the parsed path (the systems added so far are
     * found there again: the same backfill) */
    size_t before = json_array_size(c->x);
    for (const char *p = t + 1; *p == '"';) {
        const char *ke = am_js_skip(p), *ve = ke && *ke == ':' ? am_js_skip(ke + 1) : NULL;
        size_t len = ke ? (size_t)(ke - p - 2) : 0;
        if (!ve || len >= AM_CV_NAME_MAX || !am_cv_plain(p + 1, len))
            return 0;
        char name[AM_CV_NAME_MAX];
        memcpy(name, p + 1, len);
        name[len] = '\0';
        if (!am_cv_system(c, name, before)) {
            c->rc = AM_ERR_NOMEM;
            return -1;
        }
        p = *ve == ',' ? ve + 1 : ve;
    }
    for (size_t i = 0; i < c->nsys; i++) {
        am_cv_in in;
        memset(&in, 0, sizeof in);
        /* any value counts as totals, as a parsed one does */
        const char *e, *tot = am_js_member(t, c->sys[i].name, &e);
        in.has_tot = tot != NULL;
        if (tot)
            am_cv_trunning(tot, c->wo, &in);
        am_cv_add(c, &c->sys[i], &in, sampled);
    }
    return 1;
}

/* {totals, systems} of a stored result (new reference): only those two
 * members are parsed (jscan.h), not the per-word data; a result that is not
 * compact JSON is parsed whole. */
static json_t *am_cv_parts(const char *result_json)
{
    const char *e1, *e2, *e3;
    const char *t = am_js_member(result_json, "totals", &e1);
    const char *sc = am_js_member(result_json, "scores", &e2);
    const char *sy = sc ? am_js_member(sc, "systems", &e3) : NULL;
    json_t *o = json_object();
    if (t && sy) {
        json_object_set_new(o, "totals", json_loadb(t, (size_t)(e1 - t), 0, NULL));
        json_object_set_new(o, "systems", json_loadb(sy, (size_t)(e3 - sy), 0, NULL));
        return o;
    }
    json_t *r = json_loads(result_json ? result_json : "", 0, NULL);
    json_object_set(o, "totals", json_object_get(r, "totals"));
    json_object_set(o, "systems", json_object_get(json_object_get(r, "scores"), "systems"));
    json_decref(r);
    return o;
}

/* One row parsed with jansson (text that am_cv_row_text cannot read):
 * AM_OK, or AM_ERR_NOMEM (c->rc set). */
static int am_cv_row_json(am_cv_ctx *c, const char *result_json, int sampled)
{
    json_t *o = am_cv_parts(result_json);
    json_t *totals = json_object_get(o, "totals");
    json_t *systems = json_object_get(o, "systems");
    size_t before = json_array_size(c->x);
    const char *name;
    json_t *tot;
    json_object_foreach(totals, name, tot)
    {
        if (!am_cv_system(c, name, before)) {
            c->rc = AM_ERR_NOMEM;
            json_decref(o);
            return c->rc;
        }
    }
    for (size_t i = 0; i < c->nsys; i++) {
        am_cv_in in;
        memset(&in, 0, sizeof in);
        am_cv_in_json(c, json_object_get(systems, c->sys[i].name),
                      json_object_get(totals, c->sys[i].name), &in);
        am_cv_add(c, &c->sys[i], &in, sampled);
    }
    json_decref(o);
    return AM_OK;
}

/* One row: its record (stats, window mode) or its result (borrowed; NULL
 * with a record that did not decode: then read on its own). */
static int am_cv_row_any(am_cv_ctx *c, int64_t seq, const char *stats, const char *result_json)
{
    if (seq > c->n)
        return 0; /* posted after the session was read */
    while (c->next_i < c->points && am_cv_sample_seq(c, c->next_i) < seq)
        c->next_i++; /* a sampled row that is not stored */
    int sampled = c->next_i < c->points && am_cv_sample_seq(c, c->next_i) == seq;
    if (c->window && c->seen && c->from != c->last) {
        /* rows were skipped (outside every window): the window restarts; a
         * seq gap alone (a deleted segment) does not */
        for (size_t i = 0; i < c->nsys; i++) {
            memset(c->sys[i].ring, 0, (size_t)c->window * AM_CV_N * 2 * sizeof(double));
        }
        c->seen = 0;
    }
    if (c->peer && am_peer_gone(c->peer)) {
        c->rc = AM_ERR_CANCELLED;
        return 1;
    }
    int done = am_cv_row_rec(c, stats, sampled);
    char *own = NULL;
    if (!done && !result_json) { /* a record of another scorer, or damaged */
        char *cid = NULL;
        if (am_store_segment_result(c->store, c->session, seq, &cid, &own) != AM_OK || !own) {
            free(cid);
            free(own);
            c->rc = AM_ERR_INTERNAL;
            return 1;
        }
        free(cid);
        result_json = own;
    }
    if (!done)
        done = am_cv_row_text(c, result_json, sampled);
    if (!done && am_cv_row_json(c, result_json, sampled) != AM_OK)
        done = -1;
    free(own);
    if (done < 0)
        return 1;
    if (sampled) {
        json_array_append_new(c->x, json_integer((json_int_t)seq));
        c->next_i++;
    }
    c->seen++;
    c->last = seq;
    c->from = seq;
    return 0;
}

static int am_cv_row(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                     const char *result_json, int64_t created_at)
{
    (void)client_id;
    (void)request_json;
    (void)created_at;
    return am_cv_row_any(ctx, seq, NULL, result_json);
}

/* A row of am_store_stats_each_at: the record, or (none) the result. */
static int am_cv_stat_row(void *ctx, int64_t seq, const char *stats, const char *request_json,
                          const char *result_json)
{
    (void)request_json;
    am_cv_ctx *c = ctx;
    if (stats)
        c->with_rec++;
    else
        c->without_rec++;
    return am_cv_row_any(ctx, seq, stats, result_json);
}

/* The rows (after, after + limit] of the curve's session into c: their
 * records in window mode (c->rec), else their results. */
static int am_cv_read(am_cv_ctx *c, int64_t after, size_t limit)
{
    /* rows without records (stored before schema/013, or rewritten by a
     * rescore or replay) come through that walk with their requests too:
     * once they are most of what was read, the results alone */
    if (!c->rec || c->without_rec > c->with_rec)
        return am_store_results_each(c->store, c->session, after, limit, am_cv_row, c);
    int64_t stamp[2] = {-1, 0}; /* each read on its own, as the results are */
    return am_store_stats_each_at(c->store, c->session, after, limit, stamp, am_cv_stat_row, c);
}

/* Collects a glossary change {seq, version} into the JSON array ctx, up
 * to the segment count the curve was read at (am_store_gchange_fn). */
typedef struct am_cv_gctx {
    json_t *changes;
    int64_t n;
} am_cv_gctx;

static int am_cv_gchange(void *ctx, int64_t seq, int64_t version)
{
    am_cv_gctx *g = ctx;
    if (seq <= g->n)
        json_array_append_new(g->changes, json_pack("{sIsI}", "seq", (json_int_t)seq, "version",
                                                    (json_int_t)version));
    return 0;
}

/* Is w one of the session's window-overlap widths? *first gets the first
 * (the default). A runtime of the current incarnation (am_ingest_acquire);
 * 404 / 409 / 500 problem in resp when the session is unavailable. */
static int am_cv_window_known(am_req *req, am_resp *resp, int64_t w, int64_t *first, int *known)
{
    am_sess *sess = NULL;
    int rc = am_api_acquire(req, resp, &sess);
    if (rc != AM_OK)
        return rc;
    const am_config *cfg = am_scorer_config(sess->scorer);
    *first = cfg->nwindows ? cfg->windows[0] : 0;
    *known = 0;
    for (size_t i = 0; i < cfg->nwindows; i++)
        if (cfg->windows[i] == w)
            *known = 1;
    am_sessions_release(req->srv->sessions, sess);
    return AM_OK;
}

/* The curve of the request's session into *out (caller releases): 1; or
 * 0 when resp holds the answer already (a problem, or 304 when the ETag
 * matches). tag makes the ETag of each representation its own ("" for
 * the JSON). */
/* Length/complexity (issue 15): the query parameters (each refused with its
 * own problem), the ETag check, then one pass over the stored results
 * into the point series. */
int am_api_curve_data(am_req *req, am_resp *resp, const char *tag, json_t **out)
{
    *out = NULL;
    int64_t points = 240, window = 0, wo = -1, ci = 0;
    if (am_api_query_int(req, resp, "points", 2, 5000, &points) != AM_OK ||
        am_api_query_int(req, resp, "window", 0, 1000, &window) != AM_OK ||
        am_api_query_int(req, resp, "wo", 1, 100, &wo) != AM_OK ||
        am_api_query_int(req, resp, "ci", 0, 1, &ci) != AM_OK)
        return 0;
    int64_t first_wo;
    int known;
    if (am_cv_window_known(req, resp, wo, &first_wo, &known) != AM_OK)
        return 0;
    if (wo < 0) {
        wo = first_wo;
    } else if (!known) {
        am_resp_problem(
            resp, req, AM_P_BAD_REQUEST,
            "'wo' must be one of the session's window-overlap widths (options.windows)");
        return 0;
    }
    am_store_session row;
    if (am_api_load_session(req, resp, &row) != AM_OK)
        return 0;
    char etag[256];
    snprintf(etag, sizeof etag, "\"%s-%lld-%lld-c%lld-%lld-%lld%s%s\"", row.id,
             (long long)row.incarnation, (long long)row.version, (long long)points,
             (long long)window, (long long)wo, ci ? "-ci" : "", tag);
    am_resp_header(resp, "ETag", etag);
    am_resp_header(resp, "Cache-Control", "no-cache");
    if (am_api_etag_matches(am_req_header(req, "If-None-Match"), etag)) {
        resp->status = 304;
        am_store_session_clear(&row);
        return 0;
    }
    am_cv_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "out of memory: building the curve failed");
        am_store_session_clear(&row);
        return 0;
    }
    c->n = row.last_seq; /* the x axis is seq; deleted seqs are gaps (schema/007) */
    c->points = points;
    c->window = window;
    c->ci = (int)ci;
    am_peer peer; /* a long session's curve stops when its client has gone */
    am_peer_init(&peer, am_req_socket(req), req->srv->prom);
    c->peer = &peer;
    snprintf(c->wo, sizeof c->wo, "%lld", (long long)wo);
    c->x = json_array();
    c->store = req->srv->store;
    c->session = row.id;
    /* window mode reads the rows' records with the session's scorer (held
     * to the end: the records are checked against its signature); without
     * it (it could not be built now), the results as before */
    am_sess *sess = NULL;
    am_fail af;
    am_fail_init(&af);
    if (window && am_ingest_acquire(req->srv, row.id, &sess, &af) == AM_OK) {
        const am_config *cfg = am_scorer_config(sess->scorer);
        for (size_t i = 0; i < cfg->nwindows && !c->rec; i++)
            if (cfg->windows[i] == wo) {
                c->wo_index = i;
                c->rec = malloc(sizeof *c->rec); /* NULL: the results */
                if (c->rec)
                    c->rec->sig_of = NULL;
            }
        c->scorer = sess->scorer;
    }
    am_fail_cleanup(&af);
    int rc = AM_OK;
    /* only the rows a sample needs: the sampled segment itself (running
     * values are its stored totals) or the window ending there; when those
     * cover much of the timeline, one pass over it in chunks is cheaper */
    int64_t span = window ? window : 1;
    int64_t npts = c->n < points ? c->n : points;
    if (span * npts >= c->n / 2) {
        while (rc == AM_OK && c->rc == AM_OK && c->last < c->n) {
            int64_t before = c->last;
            c->from = c->last;
            rc = am_cv_read(c, c->last, 1000);
            if (c->last == before)
                break; /* no more stored rows */
        }
    }
    for (int64_t i = 0; i < npts && rc == AM_OK && c->rc == AM_OK && c->last < c->n; i++) {
        int64_t seq = am_cv_sample_seq(c, i);
        int64_t after = seq - span > c->last ? seq - span : c->last;
        c->from = after;
        if (after < seq)
            rc = am_cv_read(c, after, (size_t)(seq - after));
    }
    am_cv_gctx gc = {json_array(), c->n};
    if (rc == AM_OK && c->rc == AM_OK)
        rc = am_store_glossary_changes(req->srv->store, row.id, am_cv_gchange, &gc);
    if (c->rc == AM_ERR_CANCELLED) {
        json_decref(gc.changes);
        am_resp_headers_clear(resp);
        am_prom_abandoned(req->srv->prom, "client_gone");
        am_resp_problem(resp, req, AM_P_REQUEST_TIMEOUT,
                        "the client closed its connection: the curve was abandoned");
        json_decref(c->x);
    } else if (rc != AM_OK || c->rc != AM_OK) {
        json_decref(gc.changes);
        am_resp_headers_clear(resp);
        am_resp_problem(resp, req, AM_P_INTERNAL, "storage error: reading segments failed");
        json_decref(c->x);
    } else {
        json_t *systems = json_object();
        for (size_t i = 0; i < c->nsys; i++) {
            json_t *o = json_object();
            for (int k = 0; k < AM_CV_N; k++) {
                json_object_set_new(o, am_cv_keys[k], c->sys[i].series[k]);
                c->sys[i].series[k] = NULL;
            }
            if (c->ci) {
                json_t *band = json_object();
                for (int k = 0; k < AM_CV_NCI; k++) {
                    json_object_set_new(
                        band, am_cv_keys[k],
                        json_pack("{soso}", "lo", c->sys[i].lo[k], "hi", c->sys[i].hi[k]));
                    c->sys[i].lo[k] = c->sys[i].hi[k] = NULL;
                }
                json_object_set_new(o, "ci", band);
            }
            json_object_set_new(systems, c->sys[i].name, o);
        }
        *out = json_pack("{sssIsIsIsIsIsososo}", "session", row.id, "segments",
                         (json_int_t)row.segments, "version", (json_int_t)row.version, "window",
                         (json_int_t)window, "window_overlap_width", (json_int_t)wo, "points",
                         (json_int_t)json_array_size(c->x), "x", c->x, "systems", systems,
                         "glossary_changes", gc.changes);
        json_object_set_new(*out, "last_seq", json_integer((json_int_t)c->n));
    }
    for (size_t i = 0; i < c->nsys; i++) {
        for (int k = 0; k < AM_CV_N; k++)
            json_decref(c->sys[i].series[k]);
        for (int k = 0; k < AM_CV_NCI; k++) {
            json_decref(c->sys[i].lo[k]);
            json_decref(c->sys[i].hi[k]);
        }
        free(c->sys[i].name);
        free(c->sys[i].ring);
    }
    free(c->rec);
    if (sess)
        am_sessions_release(req->srv->sessions, sess);
    free(c);
    am_store_session_clear(&row);
    return *out != NULL;
}

void am_api_curve(am_req *req, am_resp *resp)
{
    json_t *body;
    if (am_api_curve_data(req, resp, "", &body))
        am_resp_json(resp, 200, body);
}
