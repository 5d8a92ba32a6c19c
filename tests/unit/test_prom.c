/* test_prom.c — the Prometheus registry: text format, counters,
 * histogram cumulativity, label escaping, concurrency. */
#include "testutil.h"

#include "prom.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Renders m into a malloc'd string (caller frees). */
static char *render(am_prom *m, int64_t sessions, int64_t db_bytes, double uptime)
{
    am_buf b;
    am_buf_init(&b);
    am_prom_render(m, &b, sessions, db_bytes, uptime);
    return am_buf_detach(&b);
}

/* The value of the sample line that starts with "series " exactly; fails
 * the test when there is none. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    const char *p = text;
    while (p && *p) {
        if (!strncmp(p, series, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    fail_msg("no sample '%s' in:\n%s", series, text);
    return -1;
}

static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
            return 1;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

static void test_help_and_type(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    am_prom_request(m, "GET", "/healthz", 200, 0.001);
    char *t = render(m, 3, 4096, 12.5);
    static const char *const fam[][2] = {{"adaptmon_http_requests_total", "counter"},
                                         {"adaptmon_http_request_duration_seconds", "histogram"},
                                         {"adaptmon_segments_scored_total", "counter"},
                                         {"adaptmon_replay_segments_total", "counter"},
                                         {"adaptmon_posts_from_memory_total", "counter"},
                                         {"adaptmon_sessions", "gauge"},
                                         {"adaptmon_database_bytes", "gauge"},
                                         {"adaptmon_uptime_seconds", "gauge"}};
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        char type[160], help[160];
        snprintf(type, sizeof type, "# TYPE %s %s", fam[i][0], fam[i][1]);
        snprintf(help, sizeof help, "# HELP %s ", fam[i][0]);
        assert_true(has_line(t, type));
        const char *h = strstr(t, help);
        assert_non_null(h);
        /* HELP comes before TYPE, TYPE before the first sample of the family */
        const char *ty = strstr(t, type);
        assert_true(h < ty);
        char first[160];
        snprintf(first, sizeof first, "\n%s", fam[i][0]);
        const char *s = strstr(ty, first);
        assert_non_null(s);
    }
    assert_int_equal(sample(t, "adaptmon_sessions"), 3);
    assert_int_equal(sample(t, "adaptmon_database_bytes"), 4096);
    tu_assert_close(sample(t, "adaptmon_uptime_seconds"), 12.5, 1e-9);
    assert_int_equal(sample(t, "adaptmon_segments_scored_total"), 0);
    assert_int_equal(sample(t, "adaptmon_replay_segments_total"), 0);
    assert_int_equal(sample(t, "adaptmon_posts_from_memory_total"), 0);
    /* every non-comment line is "name[{labels}] value" with a number */
    char *copy = strdup(t);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        char *end = NULL;
        strtod(sp + 1, &end);
        assert_true(end && *end == '\0' && end > sp + 1);
        assert_true(strncmp(line, "adaptmon_", 9) == 0);
    }
    free(copy);
    assert_int_equal(t[strlen(t) - 1], '\n');
    free(t);
    am_prom_free(m);
}

static void test_counters(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    for (int i = 0; i < 3; i++)
        am_prom_request(m, "GET", "/v1/sessions/{id}", 200, 0.002);
    am_prom_request(m, "POST", "/v1/sessions", 201, 0.004);
    am_prom_request(m, "GET", "/v1/sessions/{id}", 404, 0.001);
    am_prom_request(m, "BREW", NULL, 405, 0.001);
    am_prom_segments(m, 5);
    am_prom_segments(m, 2);
    am_prom_replayed(m, 3);
    am_prom_replayed(m, 0); /* nothing re-scored: no change */
    am_prom_from_memory(m);
    am_prom_from_memory(m);
    char *t = render(m, 0, 0, 0);
    assert_int_equal(sample(t, "adaptmon_http_requests_total{method=\"GET\",route=\"/v1/sessions/"
                               "{id}\",code=\"200\"}"),
                     3);
    assert_int_equal(
        sample(t,
               "adaptmon_http_requests_total{method=\"POST\",route=\"/v1/sessions\",code=\"201\"}"),
        1);
    assert_int_equal(sample(t, "adaptmon_http_requests_total{method=\"GET\",route=\"/v1/sessions/"
                               "{id}\",code=\"404\"}"),
                     1);
    /* unknown methods and missing routes are folded into fixed labels */
    assert_int_equal(
        sample(t, "adaptmon_http_requests_total{method=\"OTHER\",route=\"other\",code=\"405\"}"),
        1);
    assert_null(strstr(t, "BREW"));
    assert_int_equal(sample(t, "adaptmon_segments_scored_total"), 7);
    assert_int_equal(sample(t, "adaptmon_replay_segments_total"), 3);
    assert_int_equal(sample(t, "adaptmon_posts_from_memory_total"), 2);
    free(t);

    am_prom_request(m, "GET", "/v1/sessions/{id}", 200, 0.002);
    t = render(m, 0, 0, 0);
    assert_int_equal(sample(t, "adaptmon_http_requests_total{method=\"GET\",route=\"/v1/sessions/"
                               "{id}\",code=\"200\"}"),
                     4);
    free(t);
    am_prom_free(m);
}

static void test_histogram(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    const double d[] = {0.0003, 0.0005, 0.002, 0.002, 0.7, 5.0, 0.03};
    double sum = 0;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        am_prom_request(m, "GET", "/metrics", 200, d[i]);
        sum += d[i];
    }
    am_prom_request(m, "GET", "/healthz", 200, 0.0001);
    char *t = render(m, 0, 0, 0);
    static const char *const le[] = {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05",
                                     "0.1",    "0.25",  "0.5",    "1",     "2.5",  "+Inf"};
    double prev = 0;
    for (size_t b = 0; b < sizeof le / sizeof le[0]; b++) {
        char series[200];
        snprintf(series, sizeof series,
                 "adaptmon_http_request_duration_seconds_bucket{route=\"/metrics\",le=\"%s\"}",
                 le[b]);
        double v = sample(t, series);
        /* expected: how many durations are <= the bound (upper bounds inclusive) */
        double bound = b + 1 < sizeof le / sizeof le[0] ? strtod(le[b], NULL) : 1e300;
        int want = 0;
        for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
            want += d[i] <= bound;
        assert_int_equal((int)v, want);
        assert_true(v >= prev); /* cumulative */
        prev = v;
    }
    double count = sample(t, "adaptmon_http_request_duration_seconds_count{route=\"/metrics\"}");
    assert_int_equal((int)count, (int)(sizeof d / sizeof d[0]));
    assert_int_equal((int)prev, (int)count); /* +Inf == count */
    tu_assert_close(sample(t, "adaptmon_http_request_duration_seconds_sum{route=\"/metrics\"}"),
                    sum, 1e-6);
    /* the other route has its own histogram */
    assert_int_equal(sample(t, "adaptmon_http_request_duration_seconds_count{route=\"/healthz\"}"),
                     1);
    assert_int_equal(sample(t, "adaptmon_http_request_duration_seconds_bucket{route=\"/healthz\","
                               "le=\"0.0005\"}"),
                     1);
    free(t);
    am_prom_free(m);
}

static void test_label_escaping(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    am_prom_request(m, "GET", "/a\"b\\c\nd", 200, 0.001);
    char *t = render(m, 0, 0, 0);
    assert_non_null(strstr(t, "route=\"/a\\\"b\\\\c\\nd\""));
    free(t);
    am_prom_free(m);
}

#define NTHREADS 8
#define NPER 5000

static void *hammer(void *arg)
{
    am_prom *m = arg;
    for (int i = 0; i < NPER; i++) {
        am_prom_request(m, i % 2 ? "GET" : "POST", i % 3 ? "/v1/sessions" : "/healthz",
                        i % 5 ? 200 : 500, (double)(i % 7) * 0.001);
        am_prom_segments(m, 1);
    }
    return NULL;
}

/* The connection and event-stream series (issue 25): the gauges follow
 * the deltas, refusals and ends are counted by their label, unknown labels
 * and a NULL registry are ignored. */
static void test_streams(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    am_prom_connections(m, 3);
    am_prom_connections(m, -1);
    am_prom_stream_open(m, 2);
    am_prom_stream_open(m, 1);
    am_prom_stream_open(m, -1);
    am_prom_stream_refused(m, "client");
    am_prom_stream_refused(m, "client");
    am_prom_stream_refused(m, "session");
    am_prom_stream_refused(m, "nope");
    am_prom_stream_ended(m, "max_age");
    am_prom_stream_ended(m, "other");
    am_prom_reserved_refused(m);
    am_prom_stream_open(NULL, 1); /* NULL-safe */
    am_prom_stream_refused(NULL, "client");
    char *t = render(m, 0, 0, 0);
    assert_true(sample(t, "adaptmon_connections_open") == 2);
    assert_true(sample(t, "adaptmon_event_streams_open") == 2);
    assert_true(sample(t, "adaptmon_event_streams_refused_total{limit=\"client\"}") == 2);
    assert_true(sample(t, "adaptmon_event_streams_refused_total{limit=\"session\"}") == 1);
    assert_true(sample(t, "adaptmon_event_streams_refused_total{limit=\"server\"}") == 0);
    assert_true(sample(t, "adaptmon_event_streams_ended_total{reason=\"max_age\"}") == 1);
    assert_true(sample(t, "adaptmon_event_streams_ended_total{reason=\"backlog\"}") == 0);
    assert_true(sample(t, "adaptmon_reserved_connection_refusals_total") == 1);
    assert_non_null(strstr(t, "# TYPE adaptmon_event_streams_open gauge\n"));
    assert_non_null(strstr(t, "# TYPE adaptmon_event_streams_refused_total counter\n"));
    assert_null(strstr(t, "nope"));
    free(t);
    am_prom_free(m);
}

static void test_concurrent(void **state)
{
    (void)state;
    am_prom *m = am_prom_new();
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer, m), 0);
    /* renders race with the writers */
    for (int i = 0; i < 20; i++) {
        char *t = render(m, 0, 0, 0);
        free(t);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    char *t = render(m, 0, 0, 0);
    int per_sessions = 0, per_healthz = 0;
    for (int i = 0; i < NPER; i++) {
        if (i % 3)
            per_sessions++;
        else
            per_healthz++;
    }
    assert_int_equal(
        (int)sample(t, "adaptmon_http_request_duration_seconds_count{route=\"/v1/sessions\"}"),
        NTHREADS * per_sessions);
    assert_int_equal(
        (int)sample(
            t, "adaptmon_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"+Inf\"}"),
        NTHREADS * per_healthz);
    assert_int_equal((int)sample(t, "adaptmon_segments_scored_total"), NTHREADS * NPER);
    /* the counters of one route add up to its histogram count */
    double total = 0;
    const char *methods[] = {"GET", "POST"};
    const int codes[] = {200, 500};
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 2; c++) {
            char series[200];
            snprintf(
                series, sizeof series,
                "adaptmon_http_requests_total{method=\"%s\",route=\"/v1/sessions\",code=\"%d\"}",
                methods[a], codes[c]);
            total += sample(t, series);
        }
    assert_int_equal((int)total, NTHREADS * per_sessions);
    free(t);
    am_prom_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_type), cmocka_unit_test(test_counters),
        cmocka_unit_test(test_histogram),     cmocka_unit_test(test_label_escaping),
        cmocka_unit_test(test_concurrent),    cmocka_unit_test(test_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
