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

#include <sqlite3.h>
#include <string.h>

void am_api_healthz(am_req *req, am_resp *resp)
{
    (void)req;
    am_resp_json(resp, 200, json_pack("{ss}", "status", "ok"));
}

void am_api_readyz(am_req *req, am_resp *resp)
{
    am_server *srv = req->srv;
    if (!srv->ready || srv->stopping) {
        am_resp_json(resp, 503,
                     json_pack("{ss}", "status", srv->stopping ? "stopping" : "starting"));
        return;
    }
    const char *why = NULL;
    if (srv->db_fd >= 0 && am_dbfile_still_ours(srv->db_fd, srv->cfg.db, &why) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, req->request_id, "not ready: %s (%s)", why, srv->cfg.db);
        am_resp_json(resp, 503,
                     json_pack("{ssss}", "status", "database unavailable", "reason", why));
        return;
    }
    if (am_store_ping(srv->store) != AM_OK) {
        am_resp_json(resp, 503, json_pack("{ss}", "status", "database unavailable"));
        return;
    }
    am_resp_json(resp, 200,
                 json_pack("{sssi}", "status", "ready", "schema_version",
                           am_store_schema_version(srv->store)));
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
