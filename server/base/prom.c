/*
 * prom.c — the Prometheus registry of /metrics (see prom.h).
 *
 * Routes are a small fixed set (the route table plus "other"), so the
 * series live in two small arrays under one mutex: request counters keyed
 * by (method, route, code) and latency histograms keyed by route. Methods
 * outside the HTTP set are counted as "OTHER" and the number of series is
 * capped, so no client can grow the registry without bound.
 */
#include "prom.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define AM_MET_BUCKETS 12
#define AM_MET_MAX_SERIES 1024 /* request counters; beyond, counted as route "other" */
#define AM_MET_MAX_ROUTES 128 /* histograms; beyond, counted as route "other" */

static const double am_met_bounds[AM_MET_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1,    2.5};
static const char *const am_met_bound_text[AM_MET_BUCKETS] = {"0.0005", "0.001", "0.0025", "0.005",
                                                              "0.01",   "0.025", "0.05",   "0.1",
                                                              "0.25",   "0.5",   "1",      "2.5"};

typedef struct am_met_counter {
    const char *method; /* static */
    char *route; /* owned */
    int code;
    int64_t n;
} am_met_counter;

typedef struct am_met_hist {
    char *route; /* owned */
    int64_t buckets[AM_MET_BUCKETS]; /* not cumulative: counts per bucket */
    int64_t count;
    double sum;
} am_met_hist;

struct am_prom {
    pthread_mutex_t lock;
    am_met_counter *counters;
    size_t ncounters, capcounters;
    am_met_hist *hists;
    size_t nhists, caphists;
    int64_t segments;
    int64_t replayed; /* segments re-scored by edit replays */
    int64_t from_memory; /* POSTs scored without a read snapshot */
    int64_t conns_open; /* connections (http.c) */
    int64_t reserved_refused; /* requests refused on a reserved connection */
    int64_t streams_open; /* event streams */
    int64_t streams_refused[3]; /* by am_met_stream_limits */
    int64_t streams_ended[2]; /* by am_met_stream_reasons */
    int64_t abandoned[1]; /* requests stopped before their answer, by am_met_abandon_reasons */
};

static const char *const am_met_stream_limits[3] = {"server", "client", "session"};
static const char *const am_met_stream_reasons[2] = {"max_age", "backlog"};
static const char *const am_met_abandon_reasons[1] = {"client_gone"};

am_prom *am_prom_new(void)
{
    am_prom *m = am_xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

void am_prom_free(am_prom *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ncounters; i++)
        free(m->counters[i].route);
    for (size_t i = 0; i < m->nhists; i++)
        free(m->hists[i].route);
    free(m->counters);
    free(m->hists);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* The static label value for a method: the standard ones, else "OTHER". */
static const char *am_met_method(const char *method)
{
    static const char *const known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; method && i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(method, known[i]))
            return known[i];
    return "OTHER";
}

/* Finds or adds the histogram of route (lock held). */
static am_met_hist *am_met_hist_for(am_prom *m, const char *route)
{
    for (size_t i = 0; i < m->nhists; i++)
        if (!strcmp(m->hists[i].route, route))
            return &m->hists[i];
    if (m->nhists >= AM_MET_MAX_ROUTES && strcmp(route, "other"))
        return am_met_hist_for(m, "other");
    AM_GROW(m->hists, m->caphists, m->nhists + 1, 16);
    am_met_hist *h = &m->hists[m->nhists++];
    memset(h, 0, sizeof *h);
    h->route = am_xstrdup(route);
    return h;
}

/* Finds or adds the counter of (method, route, code) (lock held). */
static am_met_counter *am_met_counter_for(am_prom *m, const char *method, const char *route,
                                          int code)
{
    for (size_t i = 0; i < m->ncounters; i++) {
        am_met_counter *c = &m->counters[i];
        if (c->code == code && c->method == method && !strcmp(c->route, route))
            return c;
    }
    if (m->ncounters >= AM_MET_MAX_SERIES && strcmp(route, "other"))
        return am_met_counter_for(m, method, "other", code);
    AM_GROW(m->counters, m->capcounters, m->ncounters + 1, 32);
    am_met_counter *c = &m->counters[m->ncounters++];
    c->method = method;
    c->route = am_xstrdup(route);
    c->code = code;
    c->n = 0;
    return c;
}

void am_prom_request(am_prom *m, const char *method, const char *route, int status, double seconds)
{
    if (!m)
        return;
    const char *meth = am_met_method(method);
    if (!route || !*route)
        route = "other";
    if (!(seconds >= 0)) /* also catches NaN */
        seconds = 0;
    size_t b = 0;
    while (b < AM_MET_BUCKETS && seconds > am_met_bounds[b])
        b++;
    pthread_mutex_lock(&m->lock);
    am_met_counter_for(m, meth, route, status)->n++;
    am_met_hist *h = am_met_hist_for(m, route);
    if (b < AM_MET_BUCKETS)
        h->buckets[b]++;
    h->count++;
    h->sum += seconds;
    pthread_mutex_unlock(&m->lock);
}

void am_prom_replayed(am_prom *m, int64_t n)
{
    if (!m || n <= 0)
        return;
    pthread_mutex_lock(&m->lock);
    m->replayed += n;
    pthread_mutex_unlock(&m->lock);
}

void am_prom_from_memory(am_prom *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->from_memory++;
    pthread_mutex_unlock(&m->lock);
}

void am_prom_segments(am_prom *m, int64_t n)
{
    if (!m || n <= 0)
        return;
    pthread_mutex_lock(&m->lock);
    m->segments += n;
    pthread_mutex_unlock(&m->lock);
}

/* Adds delta to *field under the lock (m may be NULL). */
static void am_met_add(am_prom *m, int64_t *field, int64_t delta)
{
    pthread_mutex_lock(&m->lock);
    *field += delta;
    pthread_mutex_unlock(&m->lock);
}

void am_prom_connections(am_prom *m, int delta)
{
    if (m)
        am_met_add(m, &m->conns_open, delta);
}

void am_prom_reserved_refused(am_prom *m)
{
    if (m)
        am_met_add(m, &m->reserved_refused, 1);
}

void am_prom_stream_open(am_prom *m, int delta)
{
    if (m)
        am_met_add(m, &m->streams_open, delta);
}

/* Index of s in the n names of v, or -1. */
static int am_met_index(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(v[i], s))
            return (int)i;
    return -1;
}

void am_prom_stream_refused(am_prom *m, const char *limit)
{
    int i = am_met_index(am_met_stream_limits, 3, limit);
    if (m && i >= 0)
        am_met_add(m, &m->streams_refused[i], 1);
}

void am_prom_stream_ended(am_prom *m, const char *reason)
{
    int i = am_met_index(am_met_stream_reasons, 2, reason);
    if (m && i >= 0)
        am_met_add(m, &m->streams_ended[i], 1);
}

void am_prom_abandoned(am_prom *m, const char *reason)
{
    int i = am_met_index(am_met_abandon_reasons, 1, reason);
    if (m && i >= 0)
        am_met_add(m, &m->abandoned[i], 1);
}

/* Appends the connection and event-stream series (lock held). */
static void am_met_render_streams(const am_prom *m, am_buf *out)
{
    am_buf_printf(out,
                  "# HELP adaptmon_connections_open Client connections open (at most "
                  "max-connections plus reserved-connections).\n"
                  "# TYPE adaptmon_connections_open gauge\n"
                  "adaptmon_connections_open %lld\n"
                  "# HELP adaptmon_reserved_connection_refusals_total Requests other than "
                  "/healthz, /readyz and /metrics refused with 503 on a connection beyond "
                  "max-connections.\n"
                  "# TYPE adaptmon_reserved_connection_refusals_total counter\n"
                  "adaptmon_reserved_connection_refusals_total %lld\n"
                  "# HELP adaptmon_event_streams_open Event streams (GET …/events) open.\n"
                  "# TYPE adaptmon_event_streams_open gauge\n"
                  "adaptmon_event_streams_open %lld\n"
                  "# HELP adaptmon_event_streams_refused_total Event streams refused, by the "
                  "cap that refused them (max-streams, -per-client, -per-session).\n"
                  "# TYPE adaptmon_event_streams_refused_total counter\n",
                  (long long)m->conns_open, (long long)m->reserved_refused,
                  (long long)m->streams_open);
    for (size_t i = 0; i < 3; i++)
        am_buf_printf(out, "adaptmon_event_streams_refused_total{limit=\"%s\"} %lld\n",
                      am_met_stream_limits[i], (long long)m->streams_refused[i]);
    am_buf_appends(out, "# HELP adaptmon_event_streams_ended_total Event streams ended by the "
                        "server: max_age (stream-max-age, with a reconnect event), backlog "
                        "(the client fell too far behind).\n"
                        "# TYPE adaptmon_event_streams_ended_total counter\n");
    for (size_t i = 0; i < 2; i++)
        am_buf_printf(out, "adaptmon_event_streams_ended_total{reason=\"%s\"} %lld\n",
                      am_met_stream_reasons[i], (long long)m->streams_ended[i]);
    am_buf_appends(out, "# HELP adaptmon_requests_abandoned_total CPU-heavy requests stopped "
                        "before their answer: client_gone (the client closed its connection).\n"
                        "# TYPE adaptmon_requests_abandoned_total counter\n");
    for (size_t i = 0; i < 1; i++)
        am_buf_printf(out, "adaptmon_requests_abandoned_total{reason=\"%s\"} %lld\n",
                      am_met_abandon_reasons[i], (long long)m->abandoned[i]);
}

/* Appends a label value with the escapes of the text format. */
static void am_met_label(am_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            am_buf_appends(out, "\\\\");
        else if (*s == '"')
            am_buf_appends(out, "\\\"");
        else if (*s == '\n')
            am_buf_appends(out, "\\n");
        else
            am_buf_appendc(out, *s);
    }
}

static int am_met_cmp_counter(const void *a, const void *b)
{
    const am_met_counter *x = a, *y = b;
    int c = strcmp(x->route, y->route);
    if (!c)
        c = strcmp(x->method, y->method);
    if (!c)
        c = (x->code > y->code) - (x->code < y->code);
    return c;
}

static int am_met_cmp_hist(const void *a, const void *b)
{
    const am_met_hist *x = a, *y = b;
    return strcmp(x->route, y->route);
}

void am_prom_render(am_prom *m, am_buf *out, int64_t sessions, int64_t db_bytes,
                    double uptime_seconds)
{
    pthread_mutex_lock(&m->lock);
    /* sorted in place: the order of the arrays carries no meaning */
    if (m->ncounters)
        qsort(m->counters, m->ncounters, sizeof *m->counters, am_met_cmp_counter);
    if (m->nhists)
        qsort(m->hists, m->nhists, sizeof *m->hists, am_met_cmp_hist);

    am_buf_appends(out, "# HELP adaptmon_http_requests_total HTTP requests answered, by method, "
                        "route pattern and status code.\n"
                        "# TYPE adaptmon_http_requests_total counter\n");
    for (size_t i = 0; i < m->ncounters; i++) {
        const am_met_counter *c = &m->counters[i];
        am_buf_printf(out, "adaptmon_http_requests_total{method=\"%s\",route=\"", c->method);
        am_met_label(out, c->route);
        am_buf_printf(out, "\",code=\"%d\"} %lld\n", c->code, (long long)c->n);
    }

    am_buf_appends(out, "# HELP adaptmon_http_request_duration_seconds Time from the request "
                        "line to the response sent, by route pattern.\n"
                        "# TYPE adaptmon_http_request_duration_seconds histogram\n");
    for (size_t i = 0; i < m->nhists; i++) {
        const am_met_hist *h = &m->hists[i];
        int64_t cum = 0;
        for (size_t b = 0; b <= AM_MET_BUCKETS; b++) {
            cum += b < AM_MET_BUCKETS ? h->buckets[b] : 0;
            am_buf_appends(out, "adaptmon_http_request_duration_seconds_bucket{route=\"");
            am_met_label(out, h->route);
            am_buf_printf(out, "\",le=\"%s\"} %lld\n",
                          b < AM_MET_BUCKETS ? am_met_bound_text[b] : "+Inf",
                          (long long)(b < AM_MET_BUCKETS ? cum : h->count));
        }
        am_buf_appends(out, "adaptmon_http_request_duration_seconds_sum{route=\"");
        am_met_label(out, h->route);
        am_buf_printf(out, "\"} %.9g\n", h->sum);
        am_buf_appends(out, "adaptmon_http_request_duration_seconds_count{route=\"");
        am_met_label(out, h->route);
        am_buf_printf(out, "\"} %lld\n", (long long)h->count);
    }
    int64_t segments = m->segments, replayed = m->replayed, from_memory = m->from_memory;
    am_met_render_streams(m, out);
    pthread_mutex_unlock(&m->lock);

    am_buf_printf(out,
                  "# HELP adaptmon_segments_scored_total Segments scored (one per system and "
                  "segment).\n"
                  "# TYPE adaptmon_segments_scored_total counter\n"
                  "adaptmon_segments_scored_total %lld\n"
                  "# HELP adaptmon_replay_segments_total Segments re-scored by the replays "
                  "after segment edits (PUT, DELETE).\n"
                  "# TYPE adaptmon_replay_segments_total counter\n"
                  "adaptmon_replay_segments_total %lld\n"
                  "# HELP adaptmon_posts_from_memory_total Segment POSTs scored from the "
                  "session's state in memory, without a read of the database.\n"
                  "# TYPE adaptmon_posts_from_memory_total counter\n"
                  "adaptmon_posts_from_memory_total %lld\n"
                  "# HELP adaptmon_sessions Sessions in the database.\n"
                  "# TYPE adaptmon_sessions gauge\n"
                  "adaptmon_sessions %lld\n"
                  "# HELP adaptmon_database_bytes Size of the database (main file and WAL) in "
                  "bytes.\n"
                  "# TYPE adaptmon_database_bytes gauge\n"
                  "adaptmon_database_bytes %lld\n"
                  "# HELP adaptmon_uptime_seconds Seconds since the server started.\n"
                  "# TYPE adaptmon_uptime_seconds gauge\n"
                  "adaptmon_uptime_seconds %.3f\n",
                  (long long)segments, (long long)replayed, (long long)from_memory,
                  (long long)sessions, (long long)db_bytes, uptime_seconds);
}

/* ---- build info and process metrics (issue 29) ------------------------------
 * The standard process_* names of the Prometheus client libraries, read from
 * /proc at scrape time: a metric whose source cannot be read is left out
 * rather than given a made-up value. */

/* Fields 14 (utime), 15 (stime), 22 (starttime, clock ticks after boot) and
 * 24 (rss, pages) of /proc/self/stat; field 2 (comm) may hold spaces and
 * parentheses, so parsing starts after its last ')'. Returns 0 on success. */
static int am_met_proc_stat(unsigned long long *ticks, unsigned long long *start,
                            long long *rss_pages, unsigned long long *vsize)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    unsigned long long ut, st;
    /* after ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime cutime cstime priority nice num_threads
     * itrealvalue starttime(22) vsize rss(24) */
    if (sscanf(p + 1,
               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d "
               "%llu %llu %lld",
               &ut, &st, start, vsize, rss_pages) != 5)
        return -1;
    *ticks = ut + st;
    return 0;
}

/* The boot time (btime of /proc/stat, Unix seconds), or -1. */
static long long am_met_boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[256];
    long long bt = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lld", &bt) == 1)
            break;
    fclose(f);
    return bt;
}

/* Open descriptors: the entries of /proc/self/fd, less the one the
 * listing itself holds. -1 when it cannot be read. */
static long long am_met_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long long n = 0;
    const struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

void am_prom_render_process(am_buf *out, const char *version, const char *sqlite_version)
{
    am_buf_appends(out, "# HELP adaptmon_build_info Build of the running server (value 1).\n"
                        "# TYPE adaptmon_build_info gauge\n"
                        "adaptmon_build_info{version=\"");
    am_met_label(out, version);
    am_buf_appends(out, "\",sqlite_version=\"");
    am_met_label(out, sqlite_version);
    am_buf_appends(out, "\"} 1\n");

    unsigned long long ticks, start, vsize;
    long long rss;
    long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    if (hz > 0 && page > 0 && am_met_proc_stat(&ticks, &start, &rss, &vsize) == 0) {
        am_buf_printf(out,
                      "# HELP process_cpu_seconds_total Total user and system CPU time spent "
                      "in seconds.\n"
                      "# TYPE process_cpu_seconds_total counter\n"
                      "process_cpu_seconds_total %.2f\n"
                      "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                      "# TYPE process_resident_memory_bytes gauge\n"
                      "process_resident_memory_bytes %lld\n"
                      "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
                      "# TYPE process_virtual_memory_bytes gauge\n"
                      "process_virtual_memory_bytes %llu\n",
                      (double)ticks / (double)hz, rss * (long long)page, vsize);
        long long boot = am_met_boot_time();
        if (boot >= 0)
            am_buf_printf(out,
                          "# HELP process_start_time_seconds Start time of the process since "
                          "unix epoch in seconds.\n"
                          "# TYPE process_start_time_seconds gauge\n"
                          "process_start_time_seconds %.2f\n",
                          (double)boot + (double)start / (double)hz);
    }
    long long fds = am_met_open_fds();
    if (fds >= 0)
        am_buf_printf(out,
                      "# HELP process_open_fds Number of open file descriptors.\n"
                      "# TYPE process_open_fds gauge\n"
                      "process_open_fds %lld\n",
                      fds);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        am_buf_printf(out,
                      "# HELP process_max_fds Maximum number of open file descriptors.\n"
                      "# TYPE process_max_fds gauge\n"
                      "process_max_fds %llu\n",
                      (unsigned long long)rl.rlim_cur);
}
