/* test_srvconfig.c — the server configuration: defaults, precedence
 * (flag > environment > file > default), config-file errors with line
 * numbers, sizes, bad values, and the example file kept identical to
 * am_srv_config_example. */
#include "testutil.h"

#include "srvconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a new temporary file; returns its malloc'd path. */
static char *tmpfile_with(const char *text)
{
    char tmpl[] = "/tmp/am_srvconfig_XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return strdup(tmpl);
}

/* Loads with argv (NULL-terminated list after "serve") and envp. */
static int load(am_srv_config *c, const char *const *args, char **envp, am_buf *err)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)(uintptr_t) "serve";
    for (; args && *args; args++)
        argv[argc++] = (char *)(uintptr_t)*args;
    argv[argc] = NULL;
    am_buf_reset(err);
    /* no default file: the host's /etc/adaptmon must not matter */
    return am_srv_config_load_from(c, argc, argv, envp, NULL, err);
}

/* The default file (AM_SRV_DEFAULT_CONFIG, here a temporary one) is read
 * when present and nothing else names a file; --config and ADAPTMON_CONFIG
 * beat it, ADAPTMON_CONFIG= (empty) skips it, and a missing default file is
 * no error. --log-format is an enum: plain (default), json, logfmt. */
static void test_default_file(void **state)
{
    (void)state;
    char *def = tmpfile_with("port = 5555\nlog-format = json\n");
    char *other = tmpfile_with("port = 6666\n");
    char *argv[4] = {(char *)(uintptr_t) "serve", NULL, NULL, NULL};
    char *noenv[] = {(char *)(uintptr_t) "HOME=/root", NULL};
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);

    assert_int_equal(am_srv_config_load_from(&c, 1, argv, noenv, def, &err), AM_OK);
    assert_int_equal(c.port, 5555);
    assert_int_equal(c.log_format, 1);
    assert_string_equal(c.config_file, def);

    char cfgenv[600];
    snprintf(cfgenv, sizeof cfgenv, "ADAPTMON_CONFIG=%s", other);
    char *env_other[] = {cfgenv, NULL};
    assert_int_equal(am_srv_config_load_from(&c, 1, argv, env_other, def, &err), AM_OK);
    assert_int_equal(c.port, 6666);
    assert_int_equal(c.log_format, 0);

    char *env_none[] = {(char *)(uintptr_t) "ADAPTMON_CONFIG=", NULL};
    assert_int_equal(am_srv_config_load_from(&c, 1, argv, env_none, def, &err), AM_OK);
    assert_int_equal(c.port, 8080);
    assert_string_equal(c.config_file, "");

    argv[1] = (char *)(uintptr_t) "--config";
    argv[2] = other;
    assert_int_equal(am_srv_config_load_from(&c, 3, argv, noenv, def, &err), AM_OK);
    assert_int_equal(c.port, 6666);

    assert_int_equal(
        am_srv_config_load_from(&c, 1, argv, noenv, "/nonexistent/adaptmon.conf", &err), AM_OK);
    assert_int_equal(c.port, 8080);
    assert_string_equal(c.config_file, "");

    argv[1] = (char *)(uintptr_t) "--log-format=logfmt";
    assert_int_equal(am_srv_config_load_from(&c, 2, argv, noenv, NULL, &err), AM_OK);
    assert_int_equal(c.log_format, 2);
    argv[1] = (char *)(uintptr_t) "--log-format=yaml";
    assert_int_equal(am_srv_config_load_from(&c, 2, argv, noenv, NULL, &err), AM_ERR_INVALID);

    unlink(def);
    unlink(other);
    free(def);
    free(other);
    am_buf_cleanup(&err);
}

static void test_defaults(void **state)
{
    (void)state;
    am_srv_config c;
    am_srv_config_init(&c);
    assert_string_equal(c.listen, "127.0.0.1");
    assert_int_equal(c.port, 8080);
    assert_string_equal(c.db, "./var/adaptmon.db");
    assert_int_equal(c.threads, 16);
    assert_int_equal(c.max_body, 1024 * 1024);
    assert_int_equal(c.max_glossary_body, 64 * 1024 * 1024);
    assert_int_equal(c.max_connections, 1024);
    assert_int_equal(c.conn_timeout, 30);
    assert_int_equal(c.max_tokens, 2500);
    assert_int_equal(c.max_segment_tokens, 7500);
    assert_int_equal(c.max_glossary_entries, 100000);
    assert_int_equal(c.max_systems, 16);
    assert_string_equal(c.write_token, "");
    assert_string_equal(c.read_token, "");
    assert_int_equal(c.durability, 0);
    assert_int_equal(c.log_level, 2);
    assert_int_equal(c.log_format, 0); /* plain */
    assert_int_equal(c.shutdown_timeout_ms, 10000);
    assert_string_equal(c.config_file, "");
    assert_string_equal(c.owner_map, "");
    assert_int_equal(c.sse_heartbeat, 15);
    assert_int_equal(c.max_db_size, 0);
    assert_int_equal(c.history_cache, 64 * 1024 * 1024);
    assert_int_equal(c.request_timeout_ms, 5000);
    assert_int_equal(c.session_memory, 512 * 1024 * 1024);
    assert_int_equal(c.readers, 4);
    assert_int_equal(c.scoring_threads, 0); /* the online CPUs */
    assert_int_equal(c.pg_require_sync, 1);
    assert_int_equal(c.pg_expect_standbys, -1); /* synchronous_standby_names' count */
    assert_int_equal(c.settle_every, 256); /* AM_SETTLE_EVERY */

    /* loading with nothing given is the defaults */
    am_srv_config d;
    am_buf err;
    am_buf_init(&err);
    char *envp[] = {NULL};
    assert_int_equal(load(&d, NULL, envp, &err), AM_OK);
    assert_memory_equal(&c, &d, sizeof c);
    am_buf_cleanup(&err);

    /* every table row has a name, a type, a default and a help text */
    size_t n = 0;
    for (const am_srv_option *o = am_srv_options(); o->name; o++, n++) {
        assert_non_null(o->type);
        assert_non_null(o->def);
        assert_true(strlen(o->help) > 10);
    }
    /* 26 + the five connection budgets + session-memory, readers (issue 25) + log-format
     * + scoring-threads (issue 27) + pg-require-sync, pg-expect-standbys, pg-committers
     * (issue 28) + settle-every (issue 27) */
    assert_int_equal(n, 39);
    assert_string_equal(c.cors_origin, "");
    assert_string_equal(c.allowed_host, "");
}

/* cors-origin and allowed-host: comma-separated in the environment and
 * the file; the flag may be repeated (the values add up, and replace the
 * environment's); anything but scheme://host[:port] is refused. */
static void test_lists(void **state)
{
    (void)state;
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);
    char env1[] = "ADAPTMON_CORS_ORIGIN=https://a.example, http://127.0.0.1:5001";
    char *envp[] = {env1, NULL};
    assert_int_equal(load(&c, NULL, envp, &err), AM_OK);
    assert_string_equal(c.cors_origin, "https://a.example, http://127.0.0.1:5001");
    const char *flags[] = {"--cors-origin",
                           "https://b.example",
                           "--cors-origin=http://[::1]:8000",
                           "--allowed-host",
                           "proxy.lan",
                           "--allowed-host",
                           "x.internal:8443",
                           NULL};
    assert_int_equal(load(&c, flags, envp, &err), AM_OK);
    assert_string_equal(c.cors_origin, "https://b.example,http://[::1]:8000");
    assert_string_equal(c.allowed_host, "proxy.lan,x.internal:8443");
    const char *bad[][3] = {{"--cors-origin", "*", NULL},
                            {"--cors-origin", "https://a.example/", NULL},
                            {"--cors-origin", "ftp://a.example", NULL},
                            {"--cors-origin", "a.example", NULL},
                            {"--cors-origin", "http://a.example:80x", NULL},
                            {"--allowed-host", "evil/x", NULL}};
    char *none[] = {NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(load(&c, bad[i], none, &err), AM_ERR_INVALID);
        assert_non_null(strstr(am_buf_str(&err), bad[i][0] + 2));
    }
    am_buf_cleanup(&err);
}

/* A pool thread needs a connection slot: threads above max-connections are
 * lowered to it, whichever of the two was set; below it they are kept. */
static void test_threads_at_most_max_connections(void **state)
{
    (void)state;
    char *envp[] = {NULL};
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);
    const char *a1[] = {"--max-connections", "4", NULL};
    assert_int_equal(load(&c, a1, envp, &err), AM_OK);
    assert_int_equal(c.threads, 4);
    assert_int_equal(c.max_connections, 4);
    const char *a2[] = {"--threads", "32", "--max-connections", "20", NULL};
    assert_int_equal(load(&c, a2, envp, &err), AM_OK);
    assert_int_equal(c.threads, 20);
    const char *a3[] = {"--threads", "2", "--max-connections", "4", NULL};
    assert_int_equal(load(&c, a3, envp, &err), AM_OK);
    assert_int_equal(c.threads, 2);
    const char *a4[] = {NULL};
    assert_int_equal(load(&c, a4, envp, &err), AM_OK);
    assert_int_equal(c.threads, 16);
    am_buf_cleanup(&err);
}

static void test_precedence(void **state)
{
    (void)state;
    /* the file sets port, threads, log-level and db; the environment
     * overrides port and threads; the flag overrides port only */
    char *path = tmpfile_with("# test config\n"
                              "port = 1111\n"
                              "threads = 3\n"
                              "log-level = debug\n"
                              "db = /tmp/from-file.db\n");
    char cfgenv[600];
    snprintf(cfgenv, sizeof cfgenv, "ADAPTMON_CONFIG=%s", path);
    char *envp[] = {cfgenv,
                    (char *)(uintptr_t) "ADAPTMON_PORT=2222",
                    (char *)(uintptr_t) "ADAPTMON_THREADS=5",
                    (char *)(uintptr_t) "HOME=/root",
                    (char *)(uintptr_t) "ADAPTMON_UNRELATED=1",
                    NULL};
    const char *args[] = {"--port", "3333", NULL};
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(load(&c, args, envp, &err), AM_OK);
    assert_int_equal(c.port, 3333); /* flag */
    assert_int_equal(c.threads, 5); /* environment */
    assert_int_equal(c.log_level, 3); /* file */
    assert_string_equal(c.db, "/tmp/from-file.db");
    assert_int_equal(c.max_connections, 1024); /* default */
    assert_string_equal(c.config_file, path);

    /* without the flag the environment wins over the file */
    assert_int_equal(load(&c, NULL, envp, &err), AM_OK);
    assert_int_equal(c.port, 2222);

    /* without the environment the file wins over the default */
    char *envp2[] = {cfgenv, NULL};
    assert_int_equal(load(&c, NULL, envp2, &err), AM_OK);
    assert_int_equal(c.port, 1111);
    assert_int_equal(c.threads, 3);

    /* --config beats ADAPTMON_CONFIG; --name=value form */
    char *other = tmpfile_with("port = 4444\n");
    const char *args2[] = {"--config", other, "--threads=7", NULL};
    assert_int_equal(load(&c, args2, envp2, &err), AM_OK);
    assert_int_equal(c.port, 4444);
    assert_int_equal(c.threads, 7);
    assert_int_equal(c.log_level, 2); /* the other file does not set it */
    assert_string_equal(c.config_file, other);

    /* a missing file is an I/O error naming it */
    const char *args3[] = {"--config=/nonexistent/adaptmon.conf", NULL};
    assert_int_equal(load(&c, args3, NULL, &err), AM_ERR_IO);
    assert_non_null(strstr(am_buf_str(&err), "/nonexistent/adaptmon.conf"));

    unlink(path);
    unlink(other);
    free(path);
    free(other);
    am_buf_cleanup(&err);
}

/* Parses text as a config file and returns the result code and message. */
static int parse(am_srv_config *c, const char *text, am_buf *err)
{
    am_srv_config_init(c);
    am_buf_reset(err);
    return am_srv_config_parse(c, text, strlen(text), "test.conf", err);
}

/* An option set twice in one file is refused with both line numbers
 * ("max_body" and "max-body" are the same option); nothing of the file's
 * later lines is applied. */
static void test_file_duplicate(void **state)
{
    (void)state;
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(
        parse(&c, "threads = 2\n# x\nmax-body = 2MiB\nmax_body = 3MiB\nport = 1\n", &err),
        AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:4: "));
    assert_non_null(strstr(am_buf_str(&err), "'max-body' is set twice (lines 3 and 4)"));
    assert_int_not_equal(c.port, 1);
    /* list options too: a second line would have dropped the first origin */
    assert_int_equal(parse(&c, "cors-origin = http://a.test\ncors-origin = http://b.test\n", &err),
                     AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "comma-separated"));
    am_buf_cleanup(&err);
}

static void test_file_syntax(void **state)
{
    (void)state;
    am_srv_config c;
    am_buf err;
    am_buf_init(&err);

    /* comments, blank lines, CRLF, spaces, quotes, '_' for '-', '#' in values */
    assert_int_equal(parse(&c,
                           "  # comment\r\n"
                           "\n"
                           "\tport=9000\r\n"
                           "max_body =  2MiB  \n"
                           "write-token = \"s3cr#t-token-0123\"\n"
                           "owner-map =\n"
                           "durability = full",
                           &err),
                     AM_OK);
    assert_int_equal(c.port, 9000);
    assert_int_equal(c.max_body, 2 * 1024 * 1024);
    assert_string_equal(c.write_token, "s3cr#t-token-0123");
    assert_string_equal(c.owner_map, "");
    assert_int_equal(c.durability, 1);

    /* unknown name: error with the line number */
    assert_int_equal(parse(&c, "port = 1\n\n# x\nbogus = 2\nthreads = 2\n", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:4:"));
    assert_non_null(strstr(am_buf_str(&err), "bogus"));
    assert_int_equal(c.threads, 16); /* nothing after the error is applied */

    /* bad value: the line and the option */
    assert_int_equal(parse(&c, "port = 1\nthreads = zero\n", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:2:"));
    assert_non_null(strstr(am_buf_str(&err), "threads"));

    /* no '=' */
    assert_int_equal(parse(&c, "port 8080\n", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:1:"));
    assert_non_null(strstr(am_buf_str(&err), "name = value"));

    /* a required value left empty */
    assert_int_equal(parse(&c, "\n\ndb =\n", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:3:"));

    /* config inside a config file */
    assert_int_equal(parse(&c, "config = other.conf\n", &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "test.conf:1:"));

    /* through the loader the file name is in the message */
    char *path = tmpfile_with("port = 80\nlog-level = loud\n");
    const char *args[] = {"--config", path, NULL};
    assert_int_equal(load(&c, args, NULL, &err), AM_ERR_INVALID);
    char want[600];
    snprintf(want, sizeof want, "%s:2:", path);
    assert_non_null(strstr(am_buf_str(&err), want));
    assert_non_null(strstr(am_buf_str(&err), "error|warn|info|debug"));
    unlink(path);
    free(path);
    am_buf_cleanup(&err);
}

static void test_sizes(void **state)
{
    (void)state;
    am_srv_config c;
    am_srv_config_init(&c);
    am_buf err;
    am_buf_init(&err);
    static const struct {
        const char *text;
        int64_t bytes; /* -1: rejected */
    } cases[] = {
        {"1048576", 1048576},
        {"1MiB", 1048576},
        {"1mib", 1048576},
        {"1M", 1048576},
        {"64KiB", 65536},
        {"64k", 65536},
        {"10KB", 10000},
        {"2 MiB", 2097152},
        {"1GiB", 1073741824},
        {"1024", 1024},
        {"1023", -1},
        {"2GiB", -1},
        {"1.5MiB", -1},
        {"", -1},
        {"MiB", -1},
        {"-1MiB", -1},
        {"5 parsecs", -1},
        {"99999999999999999999", -1},
        {"9223372036854775807G", -1},
        {"1kb", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c.max_body = 12345;
        int rc = am_srv_config_set(&c, "max-body", cases[i].text, &err);
        if (cases[i].bytes < 0) {
            if (rc != AM_ERR_INVALID)
                fail_msg("'%s' accepted as %lld", cases[i].text, (long long)c.max_body);
            assert_int_equal(c.max_body, 12345); /* unchanged */
            assert_non_null(strstr(am_buf_str(&err), "max-body"));
        } else {
            if (rc != AM_OK)
                fail_msg("'%s' rejected: %s", cases[i].text, am_buf_str(&err));
            assert_int_equal(c.max_body, cases[i].bytes);
        }
    }
    am_buf_cleanup(&err);
}

static void test_bad_values(void **state)
{
    (void)state;
    am_srv_config c;
    am_srv_config_init(&c);
    am_buf err;
    am_buf_init(&err);
    static const char *const bad[][2] = {
        {"port", "70000"},
        {"port", "-1"},
        {"port", "80x"},
        {"port", ""},
        {"port", " 80"},
        {"threads", "0"},
        {"log-level", "loud"},
        {"log-level", "INFO"},
        {"durability", "extra"},
        {"listen", "localhost"},
        {"listen", "1.2.3"},
        {"listen", ""},
        {"write-token", "a b"},
        {"write-token", "tok\n"},
        {"max-systems", "1000"},
        {"conn-timeout", "1e3"},
        /* tokens under 16 characters can be guessed: refused (issue 25) */
        {"write-token", "x"},
        {"write-token", "fifteen-chars-1"},
        {"read-token", "r"},
        {"max-streams", "-1"},
        {"reserved-connections", "0"},
        /* a settle every 0th seq is none; past 4,096 the pending words a
         * cold history load reads grow without a useful saving */
        {"settle-every", "0"},
        {"settle-every", "4097"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = am_srv_config_set(&c, bad[i][0], bad[i][1], &err);
        if (rc != AM_ERR_INVALID)
            fail_msg("%s = '%s' accepted", bad[i][0], bad[i][1]);
        assert_non_null(strstr(am_buf_str(&err), bad[i][0]));
    }
    am_srv_config d;
    am_srv_config_init(&d);
    assert_memory_equal(&c, &d, sizeof c); /* nothing changed */

    assert_int_equal(am_srv_config_set(&c, "nope", "1", &err), AM_ERR_NOTFOUND);
    assert_int_equal(am_srv_config_set(&c, "listen", "::1", &err), AM_OK);
    assert_string_equal(c.listen, "::1");
    assert_int_equal(am_srv_config_set(&c, "listen", "[::]", &err), AM_OK);
    assert_string_equal(c.listen, "::");
    assert_int_equal(am_srv_config_set(&c, "log_level", "warn", &err), AM_OK);
    assert_int_equal(c.log_level, 1);
    char longtok[300];
    memset(longtok, 'x', sizeof longtok - 1);
    longtok[sizeof longtok - 1] = '\0';
    assert_int_equal(am_srv_config_set(&c, "write-token", longtok, &err), AM_ERR_INVALID);
    assert_int_equal(am_srv_config_set(&c, "write-token", "sixteen-chars-16", &err), AM_OK);
    assert_string_equal(c.write_token, "sixteen-chars-16");
    /* the connection budgets and their defaults */
    am_srv_config e;
    am_srv_config_init(&e);
    assert_int_equal(e.max_streams, 512);
    assert_int_equal(e.max_streams_per_client, 32);
    assert_int_equal(e.max_streams_per_session, 64);
    assert_int_equal(e.stream_max_age, 600);
    assert_int_equal(e.reserved_connections, 8);

    /* flags: unknown, missing value, positional; environment: bad value */
    const char *a1[] = {"--nope", "1", NULL};
    assert_int_equal(load(&c, a1, NULL, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "--nope"));
    const char *a2[] = {"--port", NULL};
    assert_int_equal(load(&c, a2, NULL, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "needs a value"));
    const char *a3[] = {"stray", NULL};
    assert_int_equal(load(&c, a3, NULL, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "stray"));
    const char *a4[] = {"--port=99999", NULL};
    assert_int_equal(load(&c, a4, NULL, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "--port"));
    char *envp[] = {(char *)(uintptr_t) "ADAPTMON_MAX_BODY=lots", NULL};
    assert_int_equal(load(&c, NULL, envp, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "ADAPTMON_MAX_BODY"));

    /* cross-option checks */
    /* tokens are at least 16 characters (r-token-01234567: 16) */
    char *envp2[] = {(char *)(uintptr_t) "ADAPTMON_READ_TOKEN=r-token-01234567", NULL};
    assert_int_equal(load(&c, NULL, envp2, &err), AM_ERR_INVALID);
    assert_non_null(strstr(am_buf_str(&err), "write-token"));
    char *envp3[] = {(char *)(uintptr_t) "ADAPTMON_READ_TOKEN=r-token-01234567",
                     (char *)(uintptr_t) "ADAPTMON_WRITE_TOKEN=w-token-01234567", NULL};
    assert_int_equal(load(&c, NULL, envp3, &err), AM_OK);
    assert_string_equal(c.read_token, "r-token-01234567");
    assert_string_equal(c.write_token, "w-token-01234567");
    const char *a5[] = {"--write-token", "r-token-01234567", NULL};
    assert_int_equal(load(&c, a5, envp3, &err), AM_ERR_INVALID);
    const char *a6[] = {"--max-glossary-body", "64KiB", NULL};
    assert_int_equal(load(&c, a6, NULL, &err), AM_ERR_INVALID);
    am_buf_cleanup(&err);
}

static void test_example_file(void **state)
{
    (void)state;
    am_buf ex;
    am_buf_init(&ex);
    am_srv_config_example(&ex);
    size_t len = 0;
    char *file = tu_read("deploy/adaptmon.conf.example", &len);
    if (len != ex.len || memcmp(file, ex.data, len))
        fail_msg("deploy/adaptmon.conf.example differs from `adaptmon config-example`; "
                 "regenerate it with: ./adaptmon config-example > deploy/adaptmon.conf.example");
    /* every option is documented in it, with its environment variable */
    for (const am_srv_option *o = am_srv_options(); o->name; o++) {
        char want[120];
        snprintf(want, sizeof want, "\n%s%s =", strcmp(o->type, "secret") ? "" : "# ", o->name);
        assert_non_null(strstr(file, want));
    }
    assert_non_null(strstr(file, "ADAPTMON_MAX_GLOSSARY_BODY"));
    /* loading the example gives the defaults */
    am_srv_config c, d;
    am_buf err;
    am_buf_init(&err);
    am_srv_config_init(&c);
    am_srv_config_init(&d);
    assert_int_equal(am_srv_config_parse(&c, file, len, "example", &err), AM_OK);
    assert_memory_equal(&c, &d, sizeof c);
    free(file);
    am_buf_cleanup(&ex);
    am_buf_cleanup(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_threads_at_most_max_connections),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_file_syntax),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_example_file),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_file_duplicate),
        cmocka_unit_test(test_default_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
