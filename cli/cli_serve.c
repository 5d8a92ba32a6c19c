/*
 * cli_serve.c — `adaptmon serve` (the HTTP service) and `adaptmon
 * config-example` (the commented example configuration).
 *
 * serve: load the configuration (flag > environment > file > default),
 * refuse a --db that is not an SQLite file, take the database's exclusive
 * lock (dbfile.h: a second server on the same file would write with its
 * own stale caches, so it refuses to start), open the database
 * (migrations run), build the runtime parts, start the
 * HTTP daemon (with max-connections fitted to the open-files limit, see
 * am_serve_fd_budget), print one ready line on stdout, then wait for SIGTERM or
 * SIGINT. The signals are blocked in every thread and taken with sigwait
 * by the main thread, so no work ever runs in a signal handler. On a
 * signal: stop accepting, let in-flight requests finish (at most
 * shutdown-timeout-ms; computing ones are abandoned shortly before it),
 * close the database (WAL checkpoint), exit 0. When a request is still
 * running at the timeout the process exits (_exit, status 0) without the
 * clean close: committed (so acknowledged) data is in the WAL already.
 */
#include "cli.h"
#include "answer_cache.h"
#include "ci_cache.h"
#include "dbfile.h"
#include "events.h"
#include "ingest.h"
#include "server.h"
#include "shard.h" /* fleet */

#include <errno.h> /* fleet */
#include <malloc.h>
#include <pthread.h> /* fleet */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h> /* fleet */
#include <time.h> /* fleet */
#include <unistd.h>

static void am_serve_usage(FILE *out)
{
    fputs("usage: adaptmon serve [--config FILE] [--NAME VALUE | --NAME=VALUE]...\n"
          "\n"
          "Runs the HTTP service. Every option can also be set in the environment\n"
          "(ADAPTMON_NAME, '-' written '_') or in a config file (name = value lines;\n"
          "`adaptmon config-example` prints one). Precedence: flag > environment >\n"
          "file > default.\n"
          "\n"
          "  --config FILE               config file (or ADAPTMON_CONFIG; without either,\n"
          "                              " AM_SRV_DEFAULT_CONFIG " when it exists;\n"
          "                              ADAPTMON_CONFIG= empty reads none)\n",
          out);
    for (const am_srv_option *o = am_srv_options(); o->name; o++) {
        char flag[64];
        snprintf(flag, sizeof flag, "--%s %s", o->name,
                 !strcmp(o->type, "int")      ? "N"
                 : !strcmp(o->type, "size")   ? "SIZE"
                 : !strcmp(o->type, "secret") ? "TOKEN"
                 : !strcmp(o->type, "list")   ? "LIST"
                 : !strcmp(o->type, "enum")   ? "WORD"
                                              : "TEXT");
        char text[512];
        snprintf(text, sizeof text, "%s [default:\x01%s]", o->help, *o->def ? o->def : "empty");
        /* the help wrapped at 100 columns, continuation lines indented */
        const char *p = text;
        fprintf(out, "  %-28s", flag);
        while (*p) {
            size_t n = strlen(p), cut = n;
            if (n > 70) {
                cut = 70;
                while (cut > 0 && p[cut] != ' ')
                    cut--;
                if (!cut)
                    cut = 70;
            }
            for (size_t k = 0; k < cut; k++) /* \x01: a space that does not break */
                fputc(p[k] == '\x01' ? ' ' : p[k], out);
            fputc('\n', out);
            p += cut;
            while (*p == ' ')
                p++;
            if (*p)
                fprintf(out, "%30s", "");
        }
    }
}

/* The URL of addr:port for humans ("[::1]" for IPv6); wildcard addresses
 * become the loopback one of their family when for_curl is set. */
static void am_serve_url(const char *addr, int port, int for_curl, char *out, size_t n)
{
    int v6 = strchr(addr, ':') != NULL;
    if (for_curl && !strcmp(addr, "0.0.0.0"))
        addr = "127.0.0.1";
    if (for_curl && !strcmp(addr, "::"))
        addr = "::1";
    snprintf(out, n, "http://%s%s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

/* ---- fleet: systemd notification (sd_notify) ------------------------------
 * Under systemd (Type=notify) NOTIFY_SOCKET is set: READY=1 and STATUS= once
 * the socket listens, WATCHDOG=1 from a thread at half of WatchdogSec while
 * the database answers, STOPPING=1 when SIGTERM/SIGINT arrives. Without
 * NOTIFY_SOCKET every sd_notify call is a no-op. */
typedef struct am_serve_wd {
    am_server *srv;
    uint64_t usec; /* the watchdog interval systemd asked for */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int quit;
    int running;
    pthread_t th;
} am_serve_wd;

/* The watchdog thread: pings at half the interval until quit is set. */
static void *am_serve_wd_run(void *arg)
{
    am_serve_wd *wd = arg;
    pthread_mutex_lock(&wd->mu);
    while (!wd->quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + wd->usec / 2 * 1000;
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        int rc = pthread_cond_timedwait(&wd->cv, &wd->mu, &ts);
        if (wd->quit || rc != ETIMEDOUT)
            continue;
        pthread_mutex_unlock(&wd->mu);
        if (am_store_ping(wd->srv->store) == AM_OK) /* a stuck database misses pings */
            sd_notify(0, "WATCHDOG=1");
        pthread_mutex_lock(&wd->mu);
    }
    pthread_mutex_unlock(&wd->mu);
    return NULL;
}

/* Starts the watchdog thread when systemd enabled the watchdog for us. */
static void am_serve_wd_start(am_serve_wd *wd, am_server *srv)
{
    memset(wd, 0, sizeof *wd);
    wd->srv = srv;
    pthread_mutex_init(&wd->mu, NULL);
    pthread_cond_init(&wd->cv, NULL);
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
        wd->usec = usec;
        wd->running = pthread_create(&wd->th, NULL, am_serve_wd_run, wd) == 0;
    }
}

/* Stops and joins the watchdog thread (no-op when it never ran). */
static void am_serve_wd_stop(am_serve_wd *wd)
{
    if (wd->running) {
        pthread_mutex_lock(&wd->mu);
        wd->quit = 1;
        pthread_cond_signal(&wd->cv);
        pthread_mutex_unlock(&wd->mu);
        pthread_join(wd->th, NULL);
        wd->running = 0;
    }
    pthread_cond_destroy(&wd->cv);
    pthread_mutex_destroy(&wd->mu);
}
/* ---- end fleet ------------------------------------------------------------ */

/* glibc's allocator, tuned for a server that allocates and frees the same
 * few hundred KiB per request on several threads: by default it hands the
 * top of each thread's heap back to the kernel (madvise) after nearly every
 * request and maps buffers above a moving threshold with mmap, which made
 * malloc/free and those system calls ~10 % of a POST's CPU (bench/README.md).
 * Fixed thresholds keep up to 32 MiB free per heap instead (the RSS targets
 * are measured with them). Fast bins are off: with small chunks parked in
 * them, every allocation of 1 KiB or more (a JSON dump's buffer, a SQLite
 * page) first runs malloc_consolidate over the whole heap — ~3 % of a
 * POST's CPU by itself; the per-thread tcache still serves small sizes. */
/* Arenas: glibc gives each thread that meets a locked arena a new one, up
 * to 8 per core (16 on 2 cores), and each keeps up to the trim threshold
 * free after a large request (a 100,000-entry glossary's PUT or rebuild
 * frees ~100 MiB of small blocks), which malloc_trim did not return: with
 * 16 arenas RSS stayed ~24 MiB per arena above the session cache's budget
 * after 10 large glossaries (issue 25). One arena per core bounds what is
 * kept free to cores x 32 MiB, and more threads than cores cannot run at
 * once anyway. MALLOC_ARENA_MAX in the environment wins. */
static void am_serve_malloc_tuning(void)
{
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_MXFAST, 0);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, cores > 2 ? (int)cores : 2);
    /* SQLite's memory statistics (unused here) take a process-wide mutex
     * on every allocation of every connection; must precede any SQLite use */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* SQLite's error log (SQLITE_CONFIG_LOG): every error SQLite reports —
 * a full disk, an I/O error, a corrupt page, a WAL recovery — becomes one
 * log line. Constraint violations are expected answers (409 and the
 * like) and go to DEBUG; notices to INFO; warnings to WARN. ctx is the
 * server's am_log (it lives until the process exits). */
static void am_serve_sqlite_log(void *ctx, int code, const char *msg)
{
    const am_log *lg = ctx;
    int level = AM_LOG_ERROR;
    switch (code & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_SCHEMA: level = AM_LOG_DEBUG; break;
    case SQLITE_NOTICE: level = AM_LOG_INFO; break;
    case SQLITE_WARNING: level = AM_LOG_WARN; break;
    default: break;
    }
    am_log_at(lg, level, NULL, "sqlite (%d): %s", code, msg ? msg : "");
}

/* The store's own failures (I/O, full), with what it was doing. */
static void am_serve_store_log(void *ctx, const char *msg)
{
    const am_server *srv = ctx;
    am_buf m; /* libpq's messages may quote a piece of --db: no password logged */
    am_buf_init(&m);
    am_buf_appends(&m, msg);
    am_store_db_scrub(srv->cfg.db, &m);
    am_log_at(&srv->log, AM_LOG_ERROR, NULL, "database: %s", am_buf_str(&m));
    am_buf_cleanup(&m);
}

/* Descriptors the server needs besides one per connection: SQLite's
 * connections (writer, checkpointer, readers: database file and -wal each,
 * the shared -shm), the database lock, stdio, and short-lived files (backup,
 * /readyz's check, /dev/urandom, SQLite temp files); plus, per pool thread,
 * libmicrohttpd's epoll and wake-up descriptors. */
#define AM_SERVE_FD_FIXED 48
#define AM_SERVE_FD_PER_THREAD 3
#define AM_SERVE_MIN_CONNECTIONS 8

/* Fits cfg->max_connections to the open-files limit (RLIMIT_NOFILE). Idle
 * connections up to max-connections must never take the descriptors SQLite
 * opens on demand (a -wal file): that made valid writes answer 500. Raises
 * the soft limit towards the hard one; if that is still too low, lowers
 * max-connections with a warning (the rest wait in the kernel's backlog),
 * or fails when fewer than AM_SERVE_MIN_CONNECTIONS would remain. cfg is
 * borrowed and changed; lg borrowed. Returns AM_OK or AM_ERR_INVALID with a
 * message in err. */
static int am_serve_fd_budget(am_srv_config *cfg, const am_log *lg, am_buf *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return AM_OK; /* nothing known: keep the configured value */
    rlim_t reserve = AM_SERVE_FD_FIXED + AM_SERVE_FD_PER_THREAD * (rlim_t)cfg->threads;
    /* the probes' connections (reserved-connections) come on top */
    rlim_t need = (rlim_t)cfg->max_connections + (rlim_t)cfg->reserved_connections + reserve;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        struct rlimit up = rl;
        up.rlim_cur = (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need) ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl.rlim_cur = up.rlim_cur;
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return AM_OK;
    if (rl.rlim_cur < reserve + AM_SERVE_MIN_CONNECTIONS) {
        am_buf_printf(err,
                      "the open files limit (%llu, hard %llu) is too low for %d threads: it needs "
                      "at least %llu (raise it with ulimit -n or LimitNOFILE=)",
                      (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
                      cfg->threads, (unsigned long long)(reserve + AM_SERVE_MIN_CONNECTIONS));
        return AM_ERR_INVALID;
    }
    int avail = (int)(rl.rlim_cur - reserve); /* >= AM_SERVE_MIN_CONNECTIONS */
    if (avail - cfg->reserved_connections < AM_SERVE_MIN_CONNECTIONS)
        cfg->reserved_connections = avail - AM_SERVE_MIN_CONNECTIONS; /* the probes' room shrinks */
    int fit = avail - cfg->reserved_connections;
    am_log_at(lg, AM_LOG_WARN, NULL,
              "max-connections %d lowered to %d (and %d reserved for the probes): the open "
              "files limit is %llu (hard %llu) and %llu descriptors are kept for the database "
              "and the threads (raise the limit with ulimit -n or LimitNOFILE=)",
              cfg->max_connections, fit, cfg->reserved_connections, (unsigned long long)rl.rlim_cur,
              (unsigned long long)rl.rlim_max, (unsigned long long)reserve);
    cfg->max_connections = fit;
    return AM_OK;
}

/* A schema migration run by the open is logged with its versions (0: a
 * new database), so that an upgrade's change to the file is on record. */
static void am_serve_log_migration(const am_server *srv)
{
    int64_t from, to;
    if (!am_store_migrated(srv->store, &from, &to) || srv->log.level < AM_LOG_INFO)
        return;
    char f[24], t[24];
    snprintf(f, sizeof f, "%lld", (long long)from);
    snprintf(t, sizeof t, "%lld", (long long)to);
    const am_log_field fields[] = {{"event", "migration", 0},
                                   {"from_version", f, AM_LOG_F_NUM},
                                   {"to_version", t, AM_LOG_F_NUM},
                                   {"db", srv->db_shown, 0}};
    am_log_event(&srv->log, AM_LOG_INFO, NULL, fields, sizeof fields / sizeof fields[0],
                 "migrated the database schema of %s from version %s to %s%s", srv->db_shown, f, t,
                 from ? "" : " (new database)");
}

/* srv->db_shown: --db with its password hidden, for every log line and
 * answer (a PostgreSQL URI may carry one; issue 28). */
static void am_serve_db_shown(am_server *srv)
{
    am_buf b;
    am_buf_init(&b);
    am_store_db_shown(srv->cfg.db, &b);
    snprintf(srv->db_shown, sizeof srv->db_shown, "%s", am_buf_str(&b));
    am_buf_cleanup(&b);
}

/* Length (issue 15): start-up and shutdown in order (configuration, shard
 * map, signals, checks before anything changes, store, caches, events,
 * HTTP, systemd readiness and watchdog, then the shutdown in reverse),
 * each step commented where it stands; read top to bottom. */
static int am_serve(int argc, char **argv, char **envp)
{
    am_serve_malloc_tuning();
    am_server *srv = am_xcalloc(1, sizeof *srv);
    am_buf err;
    am_buf_init(&err);
    int rc = 1;

    if (am_srv_config_load(&srv->cfg, argc, argv, envp, &err) != AM_OK) {
        fprintf(stderr, "adaptmon serve: %s\n", am_buf_str(&err));
        am_buf_cleanup(&err);
        free(srv);
        return 2;
    }
    srv->log.level = srv->cfg.log_level;
    srv->log.format = srv->cfg.log_format;
    srv->version = AM_VERSION;
    am_serve_db_shown(srv);
    /* before any other SQLite call (sqlite3_initialize); srv->log outlives
     * every connection */
    sqlite3_config(SQLITE_CONFIG_LOG, am_serve_sqlite_log, &srv->log);
    /* fleet: the owner map (421 answers), checked before anything starts */
    if (am_shard_parse(srv->cfg.owner_map, &srv->shard, &err) != AM_OK) {
        fprintf(stderr, "adaptmon serve: %s\n", am_buf_str(&err));
        am_buf_cleanup(&err);
        free(srv);
        return 2;
    }
    if (am_serve_fd_budget(&srv->cfg, &srv->log, &err) != AM_OK) {
        fprintf(stderr, "adaptmon serve: %s\n", am_buf_str(&err));
        am_buf_cleanup(&err);
        am_shard_free(srv->shard);
        free(srv);
        return 2;
    }
    am_serve_wd wd; /* fleet */
    int wd_started = 0; /* fleet */

    /* Signals: SIGTERM/SIGINT are blocked before any thread exists (every
     * thread inherits the mask) and taken with sigwait below. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
    signal(SIGPIPE, SIG_IGN);

    srv->db_fd = -1;
    /* a PostgreSQL conninfo names no file: no file checks, no lock (the
     * database serializes its writers, DESIGN-postgres §2.5) */
    if (strcmp(srv->cfg.db, ":memory:") != 0 && !am_store_path_is_pg(srv->cfg.db)) {
        /* nothing is created or changed before these checks pass */
        if (am_dbfile_check_kind(srv->cfg.db, &err) != AM_OK ||
            am_dbfile_mkdir_parents(srv->cfg.db, &err) != AM_OK ||
            am_dbfile_lock(srv->cfg.db, &srv->db_fd, &err) != AM_OK) {
            am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot serve the database %s: %s",
                      srv->cfg.db, am_buf_str(&err));
            goto out;
        }
    }
    if (am_store_open(srv->cfg.db, (enum am_durability)srv->cfg.durability, &srv->store, &err) !=
        AM_OK) {
        am_store_db_scrub(srv->cfg.db, &err);
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot open the database %s: %s", srv->db_shown,
                  am_buf_str(&err));
        goto out;
    }
    am_store_set_logger(srv->store, am_serve_store_log, srv);
    am_store_pg_expect_standbys(srv->store, srv->cfg.pg_expect_standbys);
    if (am_store_pg_require_sync(srv->store, srv->cfg.pg_require_sync, &err) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot start --pg-require-sync: %s",
                  am_buf_str(&err));
        goto out;
    }
    if (am_store_is_pg(srv->store) && srv->cfg.pg_require_sync && !am_store_pg_sync_ok(srv->store))
        am_log_at(&srv->log, AM_LOG_WARN, NULL,
                  "PostgreSQL has no synchronous standby streaming: writes answer 503 until one "
                  "does (--pg-require-sync off serves a server without standbys)");
    if (am_store_set_readers(srv->store, (size_t)srv->cfg.readers, &err) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot open the database's readers: %s",
                  am_buf_str(&err));
        goto out;
    }
    if (am_store_set_committers(srv->store, (size_t)srv->cfg.pg_committers, &err) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot open the database's committers: %s",
                  am_buf_str(&err));
        goto out;
    }
    am_serve_log_migration(srv);
    if (am_store_set_max_bytes(srv->store, srv->cfg.max_db_size) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot apply max-db-size to %s", srv->db_shown);
        goto out;
    }
    srv->prom = am_prom_new();
    srv->sessions = am_sessions_new(srv->store, 10000, (size_t)srv->cfg.history_cache);
    am_sessions_set_memory(srv->sessions, (size_t)srv->cfg.session_memory);
    srv->wspool = am_wspool_new(srv->cfg.scoring_threads); /* the scoring gate's slots */
    srv->acache = am_acache_new(AM_ACACHE_MAX_ENTRIES, AM_ACACHE_MAX_BYTES); /* metrics answers */
    /* ?ci= statistics: a quarter of the session memory (ci_cache.h) */
    size_t ci_bytes = (size_t)srv->cfg.session_memory / 4;
    srv->cicache = am_cicache_new(ci_bytes ? ci_bytes : (size_t)128 << 20, srv->sessions);
    srv->events = am_events_new(srv->store, srv->cfg.sse_heartbeat); /* SSE hub */
    srv->started_ms = am_now_ms();

    am_buf_reset(&err);
    if (am_http_start(srv, &err) != AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "%s", am_buf_str(&err));
        goto out;
    }
    int port = am_http_port(srv);
    if (!port)
        port = srv->cfg.port;
    char url[128], curl_url[128];
    am_serve_url(srv->cfg.listen, port, 0, url, sizeof url);
    am_serve_url(srv->cfg.listen, port, 1, curl_url, sizeof curl_url);
    am_log_at(&srv->log, AM_LOG_INFO, NULL,
              "adaptmon %s serving %s: database %s (schema %d, durability %s), %d threads, "
              "auth %s%s, config %s",
              AM_VERSION, url, srv->db_shown, am_store_schema_version(srv->store),
              am_store_is_pg(srv->store) ? "the PostgreSQL cluster's"
              : srv->cfg.durability      ? "full"
                                         : "normal",
              srv->cfg.threads, srv->cfg.write_token[0] ? "on" : "off",
              srv->cfg.read_token[0] ? " (read token too)" : "",
              srv->cfg.config_file[0] ? srv->cfg.config_file : "none");
    printf("adaptmon listening on %s (database %s) — try: curl -s %s/healthz\n", url, srv->db_shown,
           curl_url);
    fflush(stdout);
    srv->ready = 1;
    /* fleet: tell systemd (Type=notify) we are ready; start the watchdog */
    sd_notifyf(0, "READY=1\nSTATUS=serving %s, database %s%s%s", url, srv->db_shown,
               srv->shard ? ", shard " : "",
               srv->shard ? am_shard_name(srv->shard, am_shard_self(srv->shard)) : "");
    am_serve_wd_start(&wd, srv);
    wd_started = 1;

    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0)
        ;
    srv->stopping = 1;
    sd_notify(0, "STOPPING=1\nSTATUS=finishing in-flight requests"); /* fleet */
    am_log_at(&srv->log, AM_LOG_INFO, NULL, "%s received: finishing in-flight requests",
              sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (am_http_stop(srv)) {
        /* requests still running at the shutdown timeout: exit without
         * joining them. Nothing acknowledged is lost: a reply is sent only
         * after its commit, and SQLite's WAL recovers at the next open as
         * after a crash (uncommitted work of those requests is dropped). */
        am_log_at(&srv->log, AM_LOG_WARN, NULL,
                  "stopped without a clean close (in-flight requests were abandoned)");
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    rc = 0;

out:
    if (srv->http)
        am_http_stop(srv);
    if (wd_started) /* fleet */
        am_serve_wd_stop(&wd);
    am_events_free(srv->events); /* after the daemon: its streams are gone */
    am_cicache_free(srv->cicache); /* before the sessions its bytes are charged to */
    am_sessions_free(srv->sessions);
    am_store_close(srv->store);
    am_dbfile_unlock(srv->db_fd); /* after SQLite closed the file */
    am_wspool_free(srv->wspool);
    am_acache_free(srv->acache);
    am_prom_free(srv->prom);
    if (rc == 0)
        am_log_at(&srv->log, AM_LOG_INFO, NULL, "stopped");
    am_buf_cleanup(&err);
    am_shard_free(srv->shard); /* fleet */
    free(srv);
    return rc;
}

int am_cli_serve(int argc, char **argv, char **envp)
{
    if (argc >= 1 && !strcmp(argv[0], "config-example")) {
        if (argc > 1) {
            fputs("usage: adaptmon config-example > adaptmon.conf\n", stderr);
            return 2;
        }
        am_buf out;
        am_buf_init(&out);
        am_srv_config_example(&out);
        fputs(am_buf_str(&out), stdout);
        am_buf_cleanup(&out);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            am_serve_usage(stdout);
            return 0;
        }
    }
    return am_serve(argc, argv, envp);
}
