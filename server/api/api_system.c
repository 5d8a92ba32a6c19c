/* api_system.c — /healthz, /readyz, /metrics, /openapi.yaml.
 *
 * /readyz is ready only while the database can really be served: the
 * configured path still names the file the server opened (not deleted,
 * not replaced), the file still starts with the SQLite header, and a read
 * query answers. All cheap (a stat, a 16-byte pread, one query); a full
 * PRAGMA quick_check would read the whole file. */
#include "api.h"

#include "dbfile.h"
#include "embedded.h"
#include "ingest.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

void am_api_healthz(am_req *req, am_resp *resp)
{
    (void)req;
    am_resp_json(resp, 200, json_pack("{ss}", "status", "ok"));
}

/* Why the server is not ready, as /readyz's status (reason, when there is
 * one, in *why), or NULL when it is: started and not stopping, the
 * configured path still names the opened file, and a read query answers.
 * /readyz and the adaptmon_ready gauge of /metrics share it. */
static const char *am_api_unready(am_server *srv, const char **why)
{
    *why = NULL;
    if (!srv->ready || srv->stopping)
        return srv->stopping ? "stopping" : "starting";
    if (srv->db_fd >= 0 && am_dbfile_still_ours(srv->db_fd, srv->cfg.db, why) != AM_OK)
        return "database unavailable";
    if (am_store_ping(srv->store) != AM_OK) {
        if (am_store_is_pg(srv->store))
            *why = "PostgreSQL does not answer (unreachable, shutting down, or no primary); "
                   "the log has its message";
        return "database unavailable";
    }
    return NULL;
}

/* What an operator must know of a PostgreSQL cluster that still serves
 * (DESIGN-postgres §2.9, issue 28 item 5), or NULL when nothing is amiss:
 * fewer standbys stream than expected (a rejoined old primary that never
 * streams, a standby whose WAL receiver stopped), or writes are refused
 * for want of a synchronous standby. Written into buf (cap bytes). */
static const char *am_api_pg_degraded(const am_store_pg_status *s, char *buf, size_t cap)
{
    if (!s->probed)
        return NULL;
    if (!s->reachable) {
        snprintf(buf, cap,
                 "the standby probe cannot read the primary's replication state (the role "
                 "needs pg_monitor); see deploy/postgres/RUNBOOK.md");
        return buf;
    }
    if (!s->degraded && s->writes_ok)
        return NULL;
    int n = 0;
    if (s->degraded)
        n = snprintf(buf, cap,
                     "%lld of %lld expected standbys stream%s%s: a standby that is down or "
                     "connected but not streaming (a rejoined old primary that never streams) "
                     "is no second copy; ",
                     (long long)s->streaming, (long long)s->expected,
                     s->missing[0] ? "; not streaming: " : "", s->missing);
    if (n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "%s see deploy/postgres/RUNBOOK.md",
                 s->writes_ok ? "writes are still acknowledged;"
                              : "no synchronous standby streams: writes answer 503 "
                                "(--pg-require-sync);");
    return buf;
}

/* The PostgreSQL part of /readyz's answer: the last probe's counts. */
static json_t *am_api_pg_json(const am_store_pg_status *s)
{
    json_t *o = json_pack("{sssIsIsI}", "writes", s->writes_ok ? "accepted" : "refused",
                          "standbys_streaming", (json_int_t)s->streaming, "standbys_expected",
                          (json_int_t)s->expected, "sync_standbys", (json_int_t)s->sync);
    if (s->lag_bytes >= 0)
        json_object_set_new(o, "replay_lag_bytes", json_integer((json_int_t)s->lag_bytes));
    json_t *miss = json_array();
    for (const char *p = s->missing; *p;) {
        size_t m = strcspn(p, ",");
        json_array_append_new(miss, json_stringn(p, m));
        p += m + (p[m] == ',');
    }
    json_object_set_new(o, "not_streaming", miss);
    return o;
}

void am_api_readyz(am_req *req, am_resp *resp)
{
    am_server *srv = req->srv;
    const char *why;
    const char *status = am_api_unready(srv, &why);
    if (status && why) {
        am_log_at(&srv->log, AM_LOG_ERROR, req->request_id, "not ready: %s (%s)", why,
                  srv->db_shown);
        am_resp_json(resp, 503, json_pack("{ssss}", "status", status, "reason", why));
        return;
    }
    if (status) {
        am_resp_json(resp, 503, json_pack("{ss}", "status", status));
        return;
    }
    json_t *body = json_pack("{sssi}", "status", "ready", "schema_version",
                             am_store_schema_version(srv->store));
    am_store_pg_status pg;
    if (am_store_pg_status_get(srv->store, &pg)) {
        /* ready while reads are served: every node sees the same cluster, so
         * a 503 here would take all of them, reads too, out of the balancer */
        char buf[768];
        const char *deg = am_api_pg_degraded(&pg, buf, sizeof buf);
        json_object_set_new(body, "postgres", am_api_pg_json(&pg));
        if (deg)
            json_object_set_new(body, "degraded", json_string(deg));
    }
    am_resp_json(resp, 200, body);
}

/* Free bytes for an unprivileged writer on the database's file system, or
 * -1 (":memory:", or statvfs failed). */
static long long am_api_disk_free(const am_server *srv)
{
    if (!strcmp(srv->cfg.db, ":memory:") || am_store_path_is_pg(srv->cfg.db))
        return -1;
    char *dir = am_dbfile_dir(srv->cfg.db);
    struct statvfs v;
    int rc = dir ? statvfs(dir, &v) : -1;
    free(dir);
    return rc == 0 ? (long long)v.f_bavail * (long long)v.f_frsize : -1;
}

/* Readiness (the /readyz checks, as 1 or 0), disk space, the database
 * size limit and the stream and connection limits, for alerts
 * (deploy/prometheus/adaptmon.rules.yml). */
static void am_api_prom_health(am_server *srv, am_buf *out)
{
    const char *why;
    am_buf_printf(out,
                  "# HELP adaptmon_ready 1 while /readyz answers 200 (started, not stopping, "
                  "database served), else 0.\n"
                  "# TYPE adaptmon_ready gauge\n"
                  "adaptmon_ready %d\n"
                  "# HELP adaptmon_database_max_bytes The max-db-size limit in bytes (0: none "
                  "but the disk's).\n"
                  "# TYPE adaptmon_database_max_bytes gauge\n"
                  "adaptmon_database_max_bytes %lld\n"
                  "# HELP adaptmon_event_streams_max The max-streams limit (0: streams off).\n"
                  "# TYPE adaptmon_event_streams_max gauge\n"
                  "adaptmon_event_streams_max %d\n"
                  "# HELP adaptmon_connections_max The max-connections limit.\n"
                  "# TYPE adaptmon_connections_max gauge\n"
                  "adaptmon_connections_max %d\n",
                  am_api_unready(srv, &why) ? 0 : 1, (long long)srv->cfg.max_db_size,
                  srv->cfg.max_streams, srv->cfg.max_connections);
    long long free_bytes = am_api_disk_free(srv);
    if (free_bytes >= 0)
        am_buf_printf(out,
                      "# HELP adaptmon_disk_free_bytes Free bytes on the database's file "
                      "system (for an unprivileged writer).\n"
                      "# TYPE adaptmon_disk_free_bytes gauge\n"
                      "adaptmon_disk_free_bytes %lld\n",
                      free_bytes);
}

/* The PostgreSQL cluster as the standby probe last saw it (issue 28 item
 * 5; deploy/prometheus/adaptmon.rules.yml alerts on them). Nothing for
 * SQLite. */
static void am_api_prom_pg(am_server *srv, am_buf *out)
{
    am_store_pg_status s;
    if (!am_store_pg_status_get(srv->store, &s))
        return;
    am_buf_printf(out,
                  "# HELP adaptmon_pg_probe_ok 1 when the last standby probe read the "
                  "primary's replication state, else 0.\n"
                  "# TYPE adaptmon_pg_probe_ok gauge\n"
                  "adaptmon_pg_probe_ok %d\n"
                  "# HELP adaptmon_pg_standbys_streaming Standbys streaming from the primary "
                  "(for 3 s or more: one that reconnects in a loop does not count).\n"
                  "# TYPE adaptmon_pg_standbys_streaming gauge\n"
                  "adaptmon_pg_standbys_streaming %lld\n"
                  "# HELP adaptmon_pg_standbys_expected Standbys that should stream "
                  "(--pg-expect-standbys, else those synchronous_standby_names names).\n"
                  "# TYPE adaptmon_pg_standbys_expected gauge\n"
                  "adaptmon_pg_standbys_expected %lld\n"
                  "# HELP adaptmon_pg_sync_standbys Synchronous (sync or quorum) standbys "
                  "streaming: commits wait for them.\n"
                  "# TYPE adaptmon_pg_sync_standbys gauge\n"
                  "adaptmon_pg_sync_standbys %lld\n"
                  "# HELP adaptmon_pg_degraded 1 while fewer standbys stream than expected "
                  "(/readyz says which), else 0.\n"
                  "# TYPE adaptmon_pg_degraded gauge\n"
                  "adaptmon_pg_degraded %d\n"
                  "# HELP adaptmon_pg_writes_accepted 0 while writes answer 503 for want of a "
                  "synchronous standby (--pg-require-sync), else 1.\n"
                  "# TYPE adaptmon_pg_writes_accepted gauge\n"
                  "adaptmon_pg_writes_accepted %d\n"
                  "# HELP adaptmon_pg_committers Group committers, each on a connection of "
                  "its own (--pg-committers).\n"
                  "# TYPE adaptmon_pg_committers gauge\n"
                  "adaptmon_pg_committers %lld\n",
                  s.reachable, (long long)s.streaming, (long long)s.expected, (long long)s.sync,
                  s.degraded, s.writes_ok, (long long)s.committers);
    if (s.lag_bytes >= 0)
        am_buf_printf(out,
                      "# HELP adaptmon_pg_replay_lag_bytes The largest replay lag of a "
                      "streaming standby, in bytes of WAL.\n"
                      "# TYPE adaptmon_pg_replay_lag_bytes gauge\n"
                      "adaptmon_pg_replay_lag_bytes %lld\n",
                      (long long)s.lag_bytes);
}

void am_api_prometheus(am_req *req, am_resp *resp)
{
    am_server *srv = req->srv;
    int64_t sessions = 0;
    am_store_session_count(srv->store, &sessions);
    am_buf out;
    am_buf_init(&out);
    am_prom_render(srv->prom, &out, sessions, am_store_size_bytes(srv->store),
                   (double)(am_now_ms() - srv->started_ms) / 1000.0);
    am_buf_printf(&out,
                  "# HELP adaptmon_store_write_pages_max The most database pages one write "
                  "transaction wrote since start (a write holds the single writer for a time "
                  "that grows with it).\n"
                  "# TYPE adaptmon_store_write_pages_max gauge\n"
                  "adaptmon_store_write_pages_max %lld\n"
                  "# HELP adaptmon_history_cache_bytes Memory held by the sessions' word counts "
                  "kept in memory (at most about --history-cache).\n"
                  "# TYPE adaptmon_history_cache_bytes gauge\n"
                  "adaptmon_history_cache_bytes %zu\n",
                  (long long)am_store_write_pages_max(srv->store),
                  am_sessions_hist_bytes(srv->sessions));
    am_sess_mem mem;
    am_sessions_memory(srv->sessions, &mem);
    am_buf_printf(&out,
                  "# HELP adaptmon_session_memory_bytes Memory the session cache counts: compiled "
                  "scorers of the sessions in use or cached and of the glossary versions replays "
                  "built (at most --session-memory but for requests in flight).\n"
                  "# TYPE adaptmon_session_memory_bytes gauge\n"
                  "adaptmon_session_memory_bytes %zu\n"
                  "# HELP adaptmon_session_memory_budget_bytes The session cache's budget "
                  "(--session-memory; 0 = none).\n"
                  "# TYPE adaptmon_session_memory_budget_bytes gauge\n"
                  "adaptmon_session_memory_budget_bytes %zu\n"
                  "# HELP adaptmon_session_memory_peak_bytes The most the session cache counted "
                  "since start.\n"
                  "# TYPE adaptmon_session_memory_peak_bytes gauge\n"
                  "adaptmon_session_memory_peak_bytes %zu\n"
                  "# HELP adaptmon_session_evictions_total Session runtimes dropped from the cache "
                  "to fit its budget or its count (rebuilt on their next use).\n"
                  "# TYPE adaptmon_session_evictions_total counter\n"
                  "adaptmon_session_evictions_total %lld\n"
                  "# HELP adaptmon_sessions_cached Session runtimes in the cache.\n"
                  "# TYPE adaptmon_sessions_cached gauge\n"
                  "adaptmon_sessions_cached %zu\n"
                  "# HELP adaptmon_store_reader_waits_total Reads that found every pooled "
                  "database reader busy and waited (--readers).\n"
                  "# TYPE adaptmon_store_reader_waits_total counter\n"
                  "adaptmon_store_reader_waits_total %lld\n",
                  mem.used, mem.budget, mem.peak, (long long)mem.evictions, mem.cached,
                  (long long)am_store_reader_waits(srv->store));
    am_buf_printf(&out,
                  "# HELP adaptmon_scoring_slots Requests that may score a segment at once "
                  "(--scoring-threads; 0 there = the online CPUs).\n"
                  "# TYPE adaptmon_scoring_slots gauge\n"
                  "adaptmon_scoring_slots %d\n"
                  "# HELP adaptmon_scoring_waits_total Segment scorings that found every "
                  "scoring slot taken and waited for one.\n"
                  "# TYPE adaptmon_scoring_waits_total counter\n"
                  "adaptmon_scoring_waits_total %lld\n",
                  am_wspool_slots(srv->wspool), (long long)am_wspool_waits(srv->wspool));
    am_buf_printf(&out,
                  "# HELP adaptmon_session_memory_refusals_total Glossary uploads and session "
                  "runtime builds refused (503) because requests in flight held the "
                  "--session-memory budget longer than the server waits for room.\n"
                  "# TYPE adaptmon_session_memory_refusals_total counter\n"
                  "adaptmon_session_memory_refusals_total %lld\n",
                  (long long)mem.refused);
    am_buf_printf(&out,
                  "# HELP adaptmon_session_glossary_forms Compact glossaries kept for evicted "
                  "session runtimes, so that their rebuild parses no JSON.\n"
                  "# TYPE adaptmon_session_glossary_forms gauge\n"
                  "adaptmon_session_glossary_forms %zu\n"
                  "# HELP adaptmon_session_glossary_form_bytes Bytes of those compact glossaries "
                  "(part of adaptmon_session_memory_bytes).\n"
                  "# TYPE adaptmon_session_glossary_form_bytes gauge\n"
                  "adaptmon_session_glossary_form_bytes %zu\n"
                  "# HELP adaptmon_session_glossary_form_builds_total Session runtimes built "
                  "from a compact glossary instead of the stored glossary JSON.\n"
                  "# TYPE adaptmon_session_glossary_form_builds_total counter\n"
                  "adaptmon_session_glossary_form_builds_total %lld\n",
                  mem.forms, mem.form_bytes, (long long)mem.form_builds);
    am_api_prom_health(srv, &out);
    am_api_prom_pg(srv, &out);
    am_prom_render_process(&out, srv->version ? srv->version : "unknown", sqlite3_libversion());
    size_t n = out.len;
    am_resp_take(resp, 200, "text/plain; version=0.0.4; charset=utf-8", am_buf_detach(&out), n);
}

void am_api_openapi(am_req *req, am_resp *resp)
{
    const am_embedded_file *f = am_embedded_find("openapi.yaml");
    if (!f) {
        am_resp_problem(resp, req, AM_P_INTERNAL, "openapi.yaml was not embedded at build time");
        return;
    }
    am_resp_data(resp, 200, "application/yaml", (const char *)f->data, f->len);
}
