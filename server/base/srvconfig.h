/*
 * srvconfig.h — the server's configuration: one declarative table (name,
 * type, bounds, default, help) from which the command-line flags, the
 * environment variables (ADAPTMON_<NAME>), the config file (name = value
 * lines, '#' comments) and deploy/adaptmon.conf.example all derive.
 * Precedence: flag > environment > file > default.
 */
#ifndef AM_SRVCONFIG_H
#define AM_SRVCONFIG_H

#include "am.h"

#include <stdint.h>

typedef struct am_srv_config {
    char listen[64]; /* address, default 127.0.0.1 */
    int port; /* default 8080 */
    char db[512]; /* default ./var/adaptmon.db */
    int threads; /* libmicrohttpd pool threads, default 16, at most max_connections */
    int64_t max_body; /* bytes, default 1 MiB */
    int64_t max_glossary_body; /* bytes for glossary/vocabulary uploads, default 64 MiB */
    int max_connections; /* default 1024 */
    int conn_timeout; /* seconds idle before a connection is closed, default 30 */
    int max_tokens; /* per text of a segment, default 2500 */
    int max_segment_tokens; /* all texts of a segment together, default 7500 */
    int max_glossary_entries; /* default 100000 */
    int max_systems; /* hypotheses per segment, default 16 */
    int max_batch; /* segments per batch POST, default 5000 */
    int max_term_occurrences; /* glossary term occurrences per segment/check, default 2000 */
    char write_token[256]; /* bearer token for writes ("" = no auth) */
    char read_token[256]; /* read-only bearer token ("" = reads open) */
    int durability; /* 0 normal, 1 full (enum am_durability) */
    int log_level; /* 0 error, 1 warn, 2 info, 3 debug */
    int log_format; /* 0 plain, 1 json, 2 logfmt (enum am_log_format) */
    int shutdown_timeout_ms; /* default 10000 */
    int request_timeout_ms; /* CPU budget of one scoring request, default 5000, 0 = none */
    char config_file[512]; /* the file read, "" = none */
    char owner_map[1024]; /* optional shard map for 421 answers, "" = none */
    int sse_heartbeat; /* seconds between ": ping" comments on event streams, default 15 */
    int64_t max_db_size; /* bytes, 0 = no limit (PRAGMA max_page_count) */
    int64_t history_cache; /* bytes of in-memory history counts (am_sessions_new), 0 = none */
    char cors_origin[1024]; /* comma-separated allowed web origins, "" = none */
    char allowed_host[512]; /* comma-separated extra Host names accepted (see http.c) */
    int max_streams; /* open event streams on the server, default 512, 0 = streams off */
    int max_streams_per_client; /* per client address, default 32, 0 = no cap */
    int max_streams_per_session; /* per session, default 64, 0 = no cap */
    int stream_max_age; /* seconds before a stream ends with a reconnect hint, 0 = never */
    int reserved_connections; /* extra connections for /healthz, /readyz, /metrics only */
    int64_t session_memory; /* bytes of the session cache's scorers (am_sessions_set_memory), 0 =
                               none */
    int readers; /* pooled read-only connections (am_store_set_readers), default 4 */
    int scoring_threads; /* segments scored at once (am_wspool_enter); 0 = online CPUs */
    int settle_every; /* a session's pending words settle every settle_every-th seq
                         (am_plan_settles); default 256 (AM_SETTLE_EVERY) */
    int pg_require_sync; /* PostgreSQL: 1 (on, default) writes answer 503 while no synchronous
                            standby streams (am_store_pg_require_sync), 0 off */
    int pg_expect_standbys; /* PostgreSQL: standbys expected to stream (/readyz "degraded"
                               below it); -1 (default) = synchronous_standby_names' count */
    int pg_committers; /* PostgreSQL: group committers, each with its own connection
                          (am_store_set_committers), default 4 */
} am_srv_config;

typedef struct am_srv_option {
    const char *name; /* flag --name, env ADAPTMON_NAME (upper, '-' → '_') */
    const char *type; /* "string", "int", "size", "enum", "secret", "list" */
    const char *def; /* default as text */
    const char *help;
} am_srv_option;

/* The option table, NULL-name terminated. */
const am_srv_option *am_srv_options(void);
/* Defaults. */
void am_srv_config_init(am_srv_config *c);
/* Sets one option from text. AM_ERR_NOTFOUND (unknown) or AM_ERR_INVALID
 * with a message in err. */
int am_srv_config_set(am_srv_config *c, const char *name, const char *value, am_buf *err);
/* Resolves the whole configuration: defaults, then the config file (from
 * --config FILE, or ADAPTMON_CONFIG, else AM_SRV_DEFAULT_CONFIG when it
 * exists; ADAPTMON_CONFIG= (empty) reads none), then the environment, then argv
 * (argv[0] is the command name; flags --name value or --name=value).
 * threads is lowered to max-connections when it is larger. Returns AM_OK, or
 * AM_ERR_INVALID/AM_ERR_IO with a message in err. */
int am_srv_config_load(am_srv_config *c, int argc, char **argv, char **envp, am_buf *err);
/* The file am_srv_config_load reads when neither --config nor
 * ADAPTMON_CONFIG names one and it exists (deploy/systemd/adaptmon.service
 * and the Docker image rely on it). */
#define AM_SRV_DEFAULT_CONFIG "/etc/adaptmon/adaptmon.conf"
/* am_srv_config_load with another default file (NULL = none); tests use
 * it so that the host's /etc does not matter. */
int am_srv_config_load_from(am_srv_config *c, int argc, char **argv, char **envp,
                            const char *default_file, am_buf *err);
/* Writes a commented example configuration (every option with its default
 * and help) into out. */
void am_srv_config_example(am_buf *out);

/* Applies config-file text (name = value lines, '#' comment lines, values
 * optionally in double quotes; each option at most once) to c; origin
 * names the file in messages
 * ("origin:LINE: …"). Returns AM_OK or AM_ERR_INVALID with a message. */
int am_srv_config_parse(am_srv_config *c, const char *text, size_t len, const char *origin,
                        am_buf *err);
/* Cross-option checks done at the end of am_srv_config_load (read-token
 * needs write-token and must differ from it; max-glossary-body >=
 * max-body). Returns AM_OK or AM_ERR_INVALID with a message in err. */
int am_srv_config_check(const am_srv_config *c, am_buf *err);

#endif
