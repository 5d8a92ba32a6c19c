/*
 * cli_serve.c — `adaptmon serve` (the HTTP service) and `adaptmon
 * config-example` (the commented example configuration).
 *
 * serve: load the configuration (flag > environment > file > default),
 * open the database (migrations run), build the runtime parts, start the
 * HTTP daemon, print one ready line on stdout, then wait for SIGTERM or
 * SIGINT. The signals are blocked in every thread and taken with sigwait
 * by the main thread, so no work ever runs in a signal handler. On a
 * signal: stop accepting, let in-flight requests finish (at most
 * shutdown-timeout-ms), close the database (WAL checkpoint), exit 0.
 */
#include "cli.h"
#include "ingest.h"
#include "server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void am_serve_usage(FILE *out)
{
    fputs("usage: adaptmon serve [--config FILE] [--NAME VALUE | --NAME=VALUE]...\n"
          "\n"
          "Runs the HTTP service. Every option can also be set in the environment\n"
          "(ADAPTMON_NAME, '-' written '_') or in a config file (name = value lines;\n"
          "`adaptmon config-example` prints one). Precedence: flag > environment >\n"
          "file > default.\n"
          "\n"
          "  --config FILE               config file (or ADAPTMON_CONFIG)\n",
          out);
    for (const am_srv_option *o = am_srv_options(); o->name; o++) {
        char flag[64];
        snprintf(flag, sizeof flag, "--%s %s", o->name,
                 !strcmp(o->type, "int")      ? "N"
                 : !strcmp(o->type, "size")   ? "SIZE"
                 : !strcmp(o->type, "secret") ? "TOKEN"
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

static int am_serve(int argc, char **argv, char **envp)
{
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

    /* Signals: SIGTERM/SIGINT are blocked before any thread exists (every
     * thread inherits the mask) and taken with sigwait below. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGTERM);
    sigaddset(&stop_set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (am_store_open(srv->cfg.db, (enum am_durability)srv->cfg.durability, &srv->store, &err) !=
        AM_OK) {
        am_log_at(&srv->log, AM_LOG_ERROR, NULL, "cannot open the database %s: %s", srv->cfg.db,
                  am_buf_str(&err));
        goto out;
    }
    srv->metrics = am_metrics_new();
    srv->sessions = am_sessions_new(srv->store, 10000);
    srv->wspool = am_wspool_new();
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
              AM_VERSION, url, srv->cfg.db, am_store_schema_version(srv->store),
              srv->cfg.durability ? "full" : "normal", srv->cfg.threads,
              srv->cfg.write_token[0] ? "on" : "off",
              srv->cfg.read_token[0] ? " (read token too)" : "",
              srv->cfg.config_file[0] ? srv->cfg.config_file : "none");
    printf("adaptmon listening on %s (database %s) — try: curl -s %s/healthz\n", url, srv->cfg.db,
           curl_url);
    fflush(stdout);
    srv->ready = 1;

    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0)
        ;
    srv->stopping = 1;
    am_log_at(&srv->log, AM_LOG_INFO, NULL, "%s received: finishing in-flight requests",
              sig == SIGINT ? "SIGINT" : "SIGTERM");
    am_http_stop(srv);
    rc = 0;

out:
    if (srv->daemon)
        am_http_stop(srv);
    am_sessions_free(srv->sessions);
    am_store_close(srv->store);
    am_wspool_free(srv->wspool);
    am_metrics_free(srv->metrics);
    if (rc == 0)
        am_log_at(&srv->log, AM_LOG_INFO, NULL, "stopped");
    am_buf_cleanup(&err);
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
