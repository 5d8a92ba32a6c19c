/*
 * cli_migrate_check.c — the checks of `adaptmon migrate` (see
 * cli_migrate.c), run inside the target's open transaction before its
 * commit, on what the target holds:
 *
 *   * row counts: each table's rows in the source's key range of the
 *     target equal the source's visible rows (read again from its
 *     snapshot, independently of the copy's own count);
 *   * every session's state (id, version, incarnation, seqs given out and
 *     removed, glossary version, result generation, settled seq) equals
 *     its source row, and every counter is at least the source's;
 *   * a replay of a sample of sessions: their rows, read back from the
 *     target, go into a scratch SQLite store, where the server's own
 *     replay (am_ingest_replace of the first segment with its stored body:
 *     every later segment scored again in seq order, each with the
 *     glossary version it was first scored with) recomputes the totals,
 *     which must equal the totals rows copied. The sample is the sessions
 *     with the smallest FNV-1a of their ids: the same sessions every run.
 */
#include "cli_migrate.h"
#include "cli_migrate_sql.h"
#include "events.h"
#include "ingest.h"
#include "prom.h"
#include "sessions.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- counts and states ---------------------------------------------------------- */

/* The source rows of table t that the copy was to store: its visible rows,
 * less those of vocabularies merged into the target's. */
static int am_mg_src_count(const am_mg_src *s, const am_mg_table *t, int64_t *n, am_buf *err)
{
    am_buf sql;
    am_buf_init(&sql);
    am_buf_printf(&sql, AM_MGL_COUNT_FMT, t->name, am_mg_filter(t));
    if (t->kind == AM_MG_VOCABS || t->kind == AM_MG_VOCAB_WORDS) {
        am_buf_appends(&sql, " AND vid NOT IN (-1");
        for (size_t i = 0; i < s->nvmap; i++)
            if (s->vmap[i].merged)
                am_buf_printf(&sql, ", %lld", (long long)s->vmap[i].src);
        am_buf_appendc(&sql, ')');
    }
    sqlite3_stmt *q = NULL;
    int rc = AM_OK;
    if (sqlite3_prepare_v2(s->db, am_buf_str(&sql), -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW)
        rc = am_mg_lite_fail(s->db, s->path, "counting its rows failed", err);
    else
        *n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    am_buf_cleanup(&sql);
    return rc;
}

/* The target's rows of table t in source s's key range into *n. */
static int am_mg_pg_count(am_mg *m, const am_mg_src *s, const am_mg_table *t, int64_t *n,
                          am_buf *err)
{
    int by_sid = t->kind == AM_MG_SESSIONS || t->kind == AM_MG_PER_SESSION;
    const char *key = by_sid ? "sid" : "vid";
    char lo[24], hi[24];
    snprintf(lo, sizeof lo, "%lld", (long long)(by_sid ? s->sid_off : s->vid_off));
    snprintf(hi, sizeof hi, "%lld",
             (long long)(by_sid ? s->sid_off + s->max_sid : s->vid_off + s->max_vid));
    am_buf sql;
    am_buf_init(&sql);
    am_buf_printf(&sql, AM_MGP_COUNT_RANGE_FMT, t->name, key, key);
    const char *p[2] = {lo, hi};
    int rc = am_mg_pq_int(m, am_buf_str(&sql), 2, p, n, "counting the target's rows", err);
    am_buf_cleanup(&sql);
    return rc;
}

/* Every session's state in s equals the target's row (AM_MG_STATE_COLS:
 * sid shifted by sid_off, the rest the same). */
static int am_mg_check_states(am_mg *m, const am_mg_src *s, am_buf *err)
{
    char lo[24], hi[24];
    snprintf(lo, sizeof lo, "%lld", (long long)s->sid_off);
    snprintf(hi, sizeof hi, "%lld", (long long)(s->sid_off + s->max_sid));
    const char *p[2] = {lo, hi};
    PGresult *r = NULL;
    int rc = am_mg_pq(m, AM_MGP_STATES, 2, p, &r, "reading the target's sessions", err);
    if (rc != AM_OK)
        return rc;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, AM_MGL_STATES, -1, &q, NULL) != SQLITE_OK) {
        PQclear(r);
        return am_mg_lite_fail(s->db, s->path, "reading its sessions failed", err);
    }
    int row = 0, ncol = PQnfields(r);
    while (rc == AM_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(q, 1);
        if (row >= PQntuples(r)) {
            am_buf_printf(err, "session '%s' of %s is missing in the target", id, s->path);
            rc = AM_ERR_INTERNAL;
            break;
        }
        for (int k = 0; k < ncol && rc == AM_OK; k++) {
            const char *want = (const char *)sqlite3_column_text(q, k);
            char shifted[24];
            if (k == 0) {
                snprintf(shifted, sizeof shifted, "%lld",
                         (long long)(sqlite3_column_int64(q, 0) + s->sid_off));
                want = shifted;
            }
            const char *got = PQgetvalue(r, row, k);
            if (strcmp(want ? want : "", got) != 0) {
                am_buf_printf(err, "session '%s' of %s: %s is %s there, %s in the target", id,
                              s->path, PQfname(r, k), want ? want : "NULL", got);
                rc = AM_ERR_INTERNAL;
            }
        }
        row++;
    }
    if (rc == AM_OK && row != PQntuples(r)) {
        am_buf_printf(err, "the target holds %d sessions in the range of %s, which has %d",
                      PQntuples(r), s->path, row);
        rc = AM_ERR_INTERNAL;
    }
    sqlite3_finalize(q);
    PQclear(r);
    return rc;
}

/* Every counter of s is at most the target's. */
static int am_mg_check_counters(am_mg *m, const am_mg_src *s, am_buf *err)
{
    sqlite3_stmt *c = NULL;
    if (sqlite3_prepare_v2(s->db, AM_MGL_COUNTERS, -1, &c, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "reading its counters failed", err);
    int rc = AM_OK;
    while (rc == AM_OK && sqlite3_step(c) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(c, 0);
        const char *p[1] = {name};
        int64_t v = 0;
        rc = am_mg_pq_int(m, AM_MGP_COUNTER_GET, 1, p, &v, "reading a counter", err);
        if (rc == AM_OK && v < sqlite3_column_int64(c, 1)) {
            am_buf_printf(err, "counter %s is %lld in the target, %lld in %s", name, (long long)v,
                          (long long)sqlite3_column_int64(c, 1), s->path);
            rc = AM_ERR_INTERNAL;
        }
    }
    sqlite3_finalize(c);
    return rc;
}

int am_mg_check_src(am_mg *m, am_mg_src *s, am_buf *err)
{
    int rc = AM_OK;
    for (size_t i = 0; i < m->ntables && rc == AM_OK; i++) {
        const am_mg_table *t = &m->tables[i];
        if (t->kind == AM_MG_COUNTERS)
            continue;
        int64_t want = 0, got = 0;
        rc = am_mg_src_count(s, t, &want, err);
        if (rc == AM_OK)
            rc = am_mg_pg_count(m, s, t, &got, err);
        if (rc == AM_OK && want != got) {
            am_buf_printf(err, "table %s: %lld rows in %s, %lld in the target", t->name,
                          (long long)want, s->path, (long long)got);
            rc = AM_ERR_INTERNAL;
        }
    }
    if (rc == AM_OK)
        rc = am_mg_check_states(m, s, err);
    if (rc == AM_OK)
        rc = am_mg_check_counters(m, s, err);
    if (rc == AM_OK)
        am_mg_say(m, "%s: checked: row counts of %zu tables, every session's version and state",
                  s->path, m->ntables);
    return rc;
}

/* ---- the sample replay ----------------------------------------------------------- */

typedef struct am_mg_pick {
    uint64_t h; /* am_fnv1a(id) */
    int64_t sid; /* in the target */
    char *id; /* owned */
    char *request; /* the first segment's stored body (owned), once read */
} am_mg_pick;

static int am_mg_pick_cmp(const void *a, const void *b)
{
    const am_mg_pick *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The sample: up to m->sample sessions with segments, copied by this run,
 * with the smallest hashes of their ids. */
static int am_mg_pick_sample(am_mg *m, am_mg_pick **out, size_t *n, am_buf *err)
{
    PGresult *r = NULL;
    int rc = am_mg_pq(m, AM_MGP_SAMPLE_CANDIDATES, 0, NULL, &r, "choosing the sample", err);
    if (rc != AM_OK)
        return rc;
    am_mg_pick *v = am_xcalloc((size_t)PQntuples(r) + 1, sizeof *v);
    size_t k = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t sid = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        int ours = 0;
        for (size_t j = 0; j < m->nsrc && !ours; j++)
            ours = sid > m->src[j].sid_off && sid <= m->src[j].sid_off + m->src[j].max_sid;
        if (!ours)
            continue;
        v[k].sid = sid;
        v[k].id = am_xstrdup(PQgetvalue(r, i, 1));
        v[k].h = am_fnv1a(v[k].id);
        k++;
    }
    PQclear(r);
    qsort(v, k, sizeof *v, am_mg_pick_cmp);
    for (size_t i = (size_t)m->sample; i < k; i++)
        free(v[i].id);
    *n = k < (size_t)m->sample ? k : (size_t)m->sample;
    *out = v;
    return AM_OK;
}

/* "{1,2,3}": the sids of the picks, a bigint[] parameter, into b. */
static void am_mg_sid_array(const am_mg_pick *v, size_t n, am_buf *b)
{
    am_buf_appendc(b, '{');
    for (size_t i = 0; i < n; i++)
        am_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i].sid);
    am_buf_appendc(b, '}');
}

/* Inserts the rows of result r (the columns of t, as text) into the
 * scratch database db. */
static int am_mg_scratch_rows(sqlite3 *db, const am_mg_table *t, PGresult *r, am_buf *err)
{
    am_buf cols, marks, sql;
    am_buf_init(&cols);
    am_buf_init(&marks);
    am_buf_init(&sql);
    for (size_t k = 0; k < t->ncols; k++) {
        am_buf_printf(&cols, "%s\"%s\"", k ? ", " : "", t->cols[k]);
        am_buf_printf(&marks, "%s?", k ? ", " : "");
    }
    am_buf_printf(&sql, AM_MGS_INSERT_FMT, t->name, am_buf_str(&cols), am_buf_str(&marks));
    sqlite3_stmt *s = NULL;
    int rc = AM_OK;
    if (sqlite3_prepare_v2(db, am_buf_str(&sql), -1, &s, NULL) != SQLITE_OK)
        rc = am_mg_lite_fail(db, "the scratch store", "preparing an insert failed", err);
    for (int i = 0; rc == AM_OK && i < PQntuples(r); i++) {
        sqlite3_reset(s);
        for (size_t k = 0; k < t->ncols; k++) {
            if (PQgetisnull(r, i, (int)k))
                sqlite3_bind_null(s, (int)k + 1);
            else /* an INTEGER column's affinity stores "12" as 12 */
                sqlite3_bind_text(s, (int)k + 1, PQgetvalue(r, i, (int)k),
                                  PQgetlength(r, i, (int)k), SQLITE_STATIC);
        }
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = am_mg_lite_fail(db, "the scratch store", "an insert failed", err);
    }
    sqlite3_finalize(s);
    am_buf_cleanup(&cols);
    am_buf_cleanup(&marks);
    am_buf_cleanup(&sql);
    return rc;
}

/* Copies table t's rows of the sampled sessions (or of the vocabularies
 * they may use: vids) from the target into the scratch database. */
static int am_mg_scratch_table(am_mg *m, sqlite3 *db, const am_mg_table *t, const char *sids,
                               const char *vids, am_buf *err)
{
    am_buf cols, sql;
    am_buf_init(&cols);
    am_buf_init(&sql);
    for (size_t k = 0; k < t->ncols; k++)
        am_buf_printf(&cols, "%s\"%s\"", k ? ", " : "", t->cols[k]);
    int by_vid = t->kind == AM_MG_VOCABS || t->kind == AM_MG_VOCAB_WORDS;
    if (t->kind == AM_MG_COUNTERS)
        am_buf_printf(&sql, "SELECT %s FROM \"%s\"", am_buf_str(&cols), t->name);
    else
        am_buf_printf(&sql, by_vid ? AM_MGP_VOCAB_ROWS_FMT : AM_MGP_ROWS_OF_FMT, am_buf_str(&cols),
                      t->name);
    const char *p[1] = {by_vid ? vids : sids};
    PGresult *r = NULL;
    int rc = am_mg_pq(m, am_buf_str(&sql), t->kind == AM_MG_COUNTERS ? 0 : 1, p, &r,
                      "reading the sampled sessions", err);
    if (rc == AM_OK)
        rc = am_mg_scratch_rows(db, t, r, err);
    PQclear(r);
    am_buf_cleanup(&cols);
    am_buf_cleanup(&sql);
    return rc;
}

/* Fills the scratch database at path (schema created, no rows but the
 * counters) with the sampled sessions' rows read from the target, and
 * reads each one's first stored request. */
static int am_mg_scratch_fill(am_mg *m, const char *path, am_mg_pick *v, size_t n, am_buf *err)
{
    am_buf sids, vids;
    am_buf_init(&sids);
    am_buf_init(&vids);
    am_mg_sid_array(v, n, &sids);
    PGresult *r = NULL;
    const char *p[1] = {am_buf_str(&sids)};
    int rc = am_mg_pq(m, AM_MGP_VOCABS_OF, 1, p, &r, "reading the sampled sessions", err);
    if (rc == AM_OK) {
        am_buf_appendc(&vids, '{');
        for (int i = 0; i < PQntuples(r); i++)
            am_buf_printf(&vids, "%s%s", i ? "," : "", PQgetvalue(r, i, 0));
        am_buf_appendc(&vids, '}');
    }
    PQclear(r);
    sqlite3 *db = NULL;
    if (rc == AM_OK && sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        rc = am_mg_lite_fail(db, path, "cannot open the scratch store", err);
    if (rc == AM_OK && (sqlite3_exec(db, AM_MGS_BEGIN, NULL, NULL, NULL) != SQLITE_OK ||
                        sqlite3_exec(db, AM_MGS_COUNTERS_CLEAR, NULL, NULL, NULL) != SQLITE_OK))
        rc = am_mg_lite_fail(db, path, "writing the scratch store failed", err);
    for (size_t i = 0; i < m->ntables && rc == AM_OK; i++)
        rc = am_mg_scratch_table(m, db, &m->tables[i], am_buf_str(&sids), am_buf_str(&vids), err);
    if (rc == AM_OK && sqlite3_exec(db, AM_MGS_COMMIT, NULL, NULL, NULL) != SQLITE_OK)
        rc = am_mg_lite_fail(db, path, "writing the scratch store failed", err);
    sqlite3_stmt *q = NULL;
    if (rc == AM_OK && sqlite3_prepare_v2(db, AM_MGS_FIRST_SEGMENT, -1, &q, NULL) != SQLITE_OK)
        rc = am_mg_lite_fail(db, path, "reading the scratch store failed", err);
    for (size_t i = 0; i < n && rc == AM_OK; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, v[i].sid);
        if (sqlite3_step(q) != SQLITE_ROW)
            rc = am_mg_lite_fail(db, path, "a sampled session has no segment", err);
        else
            v[i].request = am_xstrdup((const char *)sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    am_buf_cleanup(&sids);
    am_buf_cleanup(&vids);
    return rc;
}

/* A server without HTTP on the scratch store (borrowed), for the replay. */
static am_server *am_mg_server_new(am_store *st)
{
    am_server *srv = am_xcalloc(1, sizeof *srv);
    am_srv_config_init(&srv->cfg);
    srv->cfg.request_timeout_ms = 0; /* a long session's replay has no budget here */
    srv->log.level = AM_LOG_ERROR;
    srv->store = st;
    srv->db_fd = -1;
    srv->prom = am_prom_new();
    srv->sessions = am_sessions_new(st, 64, (size_t)srv->cfg.history_cache);
    am_sessions_set_memory(srv->sessions, (size_t)srv->cfg.session_memory);
    srv->wspool = am_wspool_new(1); /* one replay at a time: one slot */
    srv->events = am_events_new(st, srv->cfg.sse_heartbeat);
    return srv;
}

static void am_mg_server_free(am_server *srv)
{
    if (srv->events)
        am_events_free(srv->events);
    am_sessions_free(srv->sessions);
    am_wspool_free(srv->wspool);
    am_prom_free(srv->prom);
    free(srv);
}

/* The totals rows of a session as {system: stats} (am_store_totals_fn). */
static int am_mg_totals_add(void *ctx, const char *system, const char *stats_json)
{
    json_t *o = ctx, *j = json_loads(stats_json, 0, NULL);
    json_object_set_new(o, system, j ? j : json_string(stats_json));
    return 0;
}

/* Replays session p in srv and compares its totals with the target's. */
static int am_mg_replay_one(am_mg *m, am_server *srv, const am_mg_pick *p, am_buf *err)
{
    json_t *body = json_loads(p->request, 0, NULL);
    am_fail f;
    am_fail_init(&f);
    am_seg_req req;
    int rc = body ? am_seg_req_parse(body, NULL, NULL, &req, &f) : AM_ERR_PARSE;
    if (rc != AM_OK) {
        am_buf_printf(err, "session '%s': its first stored segment cannot be read", p->id);
        json_decref(body);
        am_fail_cleanup(&f);
        return AM_ERR_INTERNAL;
    }
    char *result = NULL;
    int status = 0;
    rc = am_ingest_replace(srv, p->id, &req, &result, &status, NULL, &f);
    if (rc != AM_OK || status != 200) {
        am_buf_printf(err, "session '%s': the replay failed: %s", p->id,
                      f.failed ? am_buf_str(&f.detail) : "no detail");
        rc = AM_ERR_INTERNAL;
    }
    free(result);
    am_seg_req_cleanup(&req);
    json_decref(body);
    am_fail_cleanup(&f);
    json_t *replayed = json_object(), *copied = json_object();
    if (rc == AM_OK && am_store_totals_each(srv->store, p->id, am_mg_totals_add, replayed) < 0) {
        am_buf_printf(err, "session '%s': reading the replayed totals failed", p->id);
        rc = AM_ERR_INTERNAL;
    }
    char sid[24];
    snprintf(sid, sizeof sid, "%lld", (long long)p->sid);
    const char *params[1] = {sid};
    PGresult *r = NULL;
    if (rc == AM_OK)
        rc = am_mg_pq(m, AM_MGP_TOTALS, 1, params, &r, "reading the copied totals", err);
    for (int i = 0; rc == AM_OK && i < PQntuples(r); i++)
        am_mg_totals_add(copied, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1));
    PQclear(r);
    if (rc == AM_OK && !json_equal(replayed, copied)) {
        const char *key;
        json_t *val;
        const char *diff = "?";
        json_object_foreach(copied, key, val)
        {
            if (!json_equal(val, json_object_get(replayed, key))) {
                diff = key;
                break;
            }
        }
        json_object_foreach(replayed, key, val)
        {
            if (!strcmp(diff, "?") && !json_object_get(copied, key))
                diff = key;
        }
        am_buf_printf(err,
                      "session '%s': a replay of its log gives other totals than the copied "
                      "ones (system '%s')",
                      p->id, diff);
        rc = AM_ERR_INTERNAL;
    }
    json_decref(replayed);
    json_decref(copied);
    return rc;
}

/* Removes the scratch database and its directory. */
static void am_mg_scratch_remove(const char *dir, const char *path)
{
    static const char *const side[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, side[i]);
        unlink(p);
    }
    rmdir(dir);
}

int am_mg_check_replay(am_mg *m, size_t *replayed, am_buf *err)
{
    *replayed = 0;
    am_mg_pick *v = NULL;
    size_t n = 0;
    int rc = am_mg_pick_sample(m, &v, &n, err);
    if (rc != AM_OK || n == 0) {
        free(v);
        return rc;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/adaptmon-migrate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        am_buf_printf(err, "cannot create a scratch directory under %s", tmp ? tmp : "/tmp");
        rc = AM_ERR_IO;
    }
    snprintf(path, sizeof path, "%s/replay.db", dir);
    am_store *st = NULL;
    if (rc == AM_OK) { /* the schema, then the rows, then the store that replays them */
        rc = am_store_open(path, AM_DURABLE_NORMAL, &st, err);
        am_store_close(st);
        st = NULL;
    }
    if (rc == AM_OK)
        rc = am_mg_scratch_fill(m, path, v, n, err);
    if (rc == AM_OK)
        rc = am_store_open(path, AM_DURABLE_NORMAL, &st, err);
    if (rc == AM_OK) {
        am_server *srv = am_mg_server_new(st);
        for (size_t i = 0; i < n && rc == AM_OK; i++) {
            rc = am_mg_replay_one(m, srv, &v[i], err);
            *replayed += rc == AM_OK;
        }
        am_mg_server_free(srv);
        am_store_close(st);
    }
    if (strncmp(dir + strlen(dir) - 6, "XXXXXX", 6) != 0)
        am_mg_scratch_remove(dir, path);
    for (size_t i = 0; i < n; i++) {
        free(v[i].id);
        free(v[i].request);
    }
    free(v);
    return rc;
}
