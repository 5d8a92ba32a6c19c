/*
 * store/pg_sync.c — --pg-require-sync (DESIGN-postgres §2.9): a probe
 * thread asks the PostgreSQL primary once a second whether a synchronous
 * standby is streaming, and while none is every write of the store fails
 * with AM_ERR_UNAVAILABLE (503 with Retry-After) instead of being
 * acknowledged with a single copy. The probe, not each request, asks: a
 * write only reads the last answer (an atomic).
 *
 * Why the store checks and not only the HA manager: pg_auto_failover's
 * wait_primary (and any operator) may empty synchronous_standby_names,
 * after which PostgreSQL commits locally without waiting. A standby that
 * is connected but never streams shows as "potential", not "sync" or
 * "quorum" (§3): that counts as none. The probe runs on a connection of
 * its own, so a busy writer or reader pool never delays it.
 *
 * The same probe is the operator's view of the cluster (issue 28 item 5,
 * the design's "rejoined primary that never streams"): how many standbys
 * stream, how many are synchronous, how many the cluster expects (the
 * names synchronous_standby_names lists, or --pg-expect-standbys) and which
 * of those are missing, and the largest replay lag. /readyz and /metrics
 * read its last answer (am_store_pg_status), never the server. A standby
 * counts as streaming only once its WAL sender has streamed for
 * AM_PG_STEADY_S seconds: an old primary whose timeline forked before its
 * own WAL end connects, shows 'streaming' for a moment, is told "end of WAL
 * reached" and reconnects every few seconds, so a plain count would flicker
 * and mostly report it as there. The probe runs in PostgreSQL mode whether
 * or not --pg-require-sync is on; only the refusal of writes depends on it.
 */
#include "store_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Seconds a WAL sender must have been streaming before its standby counts
 * as streaming (see above). */
#define AM_PG_STEADY_S "3"

/* One row: synchronous_standby_names, this server's cluster_name, the
 * synchronous standbys that stream now (what writes wait for), the
 * standbys streaming steadily, their names (comma separated), and the
 * largest replay lag in bytes of a streaming standby (-1: none). On a
 * server in recovery (a multi-host string without target_session_attrs
 * reached a standby) the lag is NULL: pg_current_wal_lsn() fails there. */
#define AM_PG_SQL_SYNC_PROBE                                                                       \
    "SELECT current_setting('synchronous_standby_names'), current_setting('cluster_name'), "       \
    "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') "            \
    "AND state = 'streaming'), "                                                                   \
    "(SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' "                         \
    "AND backend_start <= now() - interval '" AM_PG_STEADY_S " seconds'), "                        \
    "(SELECT coalesce(string_agg(application_name, ',' ORDER BY application_name), '') "           \
    "FROM pg_stat_replication WHERE state = 'streaming' "                                          \
    "AND backend_start <= now() - interval '" AM_PG_STEADY_S " seconds'), "                        \
    "CASE WHEN pg_is_in_recovery() THEN NULL ELSE (SELECT coalesce(max(pg_wal_lsn_diff("           \
    "pg_current_wal_lsn(), replay_lsn)), -1)::bigint FROM pg_stat_replication "                    \
    "WHERE state = 'streaming') END"

/* ---- synchronous_standby_names -------------------------------------------- */

static const char *ssn_blank(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Reads one standby name at p (double-quoted or bare, up to ',' or ')')
 * into name; returns the byte after it. */
static const char *ssn_name(const char *p, am_buf *name)
{
    am_buf_reset(name);
    p = ssn_blank(p);
    if (*p == '"') {
        for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
            if (*p == '"')
                p++; /* "" is one quote */
            am_buf_appendc(name, *p);
        }
        if (*p)
            p++;
    } else {
        const char *s = p;
        while (*p && *p != ',' && *p != ')')
            p++;
        const char *e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
            e--;
        am_buf_append(name, s, (size_t)(e - s));
    }
    return ssn_blank(p);
}

int am_store_pg_ssn_expected(const char *ssn, const char *self, am_buf *names)
{
    am_buf_reset(names);
    const char *p = ssn_blank(ssn ? ssn : "");
    if (!*p)
        return 0;
    long num = 1;
    /* "FIRST n (…)", "ANY n (…)", "n (…)" or a bare list "a, b" (FIRST 1) */
    if (!strncasecmp(p, "FIRST", 5) || !strncasecmp(p, "ANY", 3)) {
        const char *k = p + (toupper((unsigned char)*p) == 'F' ? 5 : 3);
        if (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r')
            p = ssn_blank(k);
    }
    if (*p >= '0' && *p <= '9') {
        char *e;
        long n = strtol(p, &e, 10);
        const char *q = ssn_blank(e);
        if (*q == '(') {
            num = n;
            p = q;
        }
    }
    if (*p == '(')
        p++;
    int count = 0, wildcard = 0;
    am_buf name;
    am_buf_init(&name);
    while (*p && *p != ')') {
        p = ssn_name(p, &name);
        const char *nm = name.data ? name.data : "";
        if (!strcmp(nm, "*")) {
            wildcard = 1;
        } else if (*nm && !(self && !strcasecmp(nm, self))) {
            if (names->len)
                am_buf_appendc(names, ',');
            am_buf_appends(names, nm);
            count++;
        }
        if (*p == ',')
            p++;
        else if (*p && *p != ')')
            break;
    }
    am_buf_cleanup(&name);
    /* "*" matches any standby: the cluster expects as many as it waits for */
    return wildcard && count < num ? (int)num : count;
}

/* ---- the probe ------------------------------------------------------------- */

void am_pg_sync_log(am_store *st, const char *msg)
{
    pthread_mutex_lock(&st->errmu);
    if (st->logfn)
        st->logfn(st->logctx, msg);
    pthread_mutex_unlock(&st->errmu);
}

/* Whether name is in the comma-separated list. */
static int in_list(const char *list, const char *name, size_t n)
{
    for (const char *p = list; *p;) {
        size_t m = strcspn(p, ",");
        if (m == n && !strncasecmp(p, name, n))
            return 1;
        p += m + (p[m] == ',');
    }
    return 0;
}

/* The expected standbys that do not stream, comma separated, into out. */
static void pg_missing(const char *expected, const char *streaming, char *out, size_t cap)
{
    am_buf b;
    am_buf_init(&b);
    for (const char *p = expected; *p;) {
        size_t m = strcspn(p, ",");
        if (!in_list(streaming, p, m)) {
            if (b.len)
                am_buf_appendc(&b, ',');
            am_buf_append(&b, p, m);
        }
        p += m + (p[m] == ',');
    }
    snprintf(out, cap, "%s", b.data ? b.data : "");
    am_buf_cleanup(&b);
}

/* Reads the probe's row into s. */
static void pg_status_read(am_store *st, PGresult *r, am_store_pg_status *s)
{
    am_buf names;
    am_buf_init(&names);
    int expect = am_store_pg_ssn_expected(PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), &names);
    s->configured = *PQgetvalue(r, 0, 0) != '\0';
    s->sync = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
    s->streaming = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
    int opt = atomic_load(&st->pg_expect); /* n + 1, 0: none */
    s->expected = opt > 0 ? opt - 1 : expect;
    pg_missing(names.data ? names.data : "", PQgetvalue(r, 0, 4), s->missing, sizeof s->missing);
    s->lag_bytes = PQgetisnull(r, 0, 5) ? -1 : strtoll(PQgetvalue(r, 0, 5), NULL, 10);
    am_buf_cleanup(&names);
}

/* One probe: fills s (reachable 0 when the server does not answer) and
 * returns 1 when a synchronous standby streams, 0 when none does or the
 * server does not answer (then nothing can be acknowledged anyway). */
static int pg_sync_probe(am_store *st, am_store_pg_status *s)
{
    memset(s, 0, sizeof *s);
    s->lag_bytes = -1;
    am_conn *c = &st->sync_conn;
    if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
        PQfinish(c->pg);
        /* a conninfo's own connect_timeout (expanded after ours) wins; without
         * one a dead host would hold the probe, and the store's close, for
         * minutes */
        const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
        const char *vals[] = {"5", "adaptmon-sync-probe", st->path, NULL};
        c->pg = PQconnectdbParams(keys, vals, 1);
        if (PQstatus(c->pg) != CONNECTION_OK)
            return 0;
    }
    PGresult *r = PQexec(c->pg, AM_PG_SQL_SYNC_PROBE);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 6) {
        s->reachable = 1;
        pg_status_read(st, r, s);
    }
    PQclear(r);
    return s->reachable && s->configured && s->sync > 0;
}

/* Whether s shows fewer standbys streaming than the cluster expects. */
static int pg_degraded(const am_store_pg_status *s)
{
    return s->reachable && s->streaming < s->expected;
}

/* Records one probe's answer; logs the changes of the write gate and of
 * the degraded state (once each, not every second). */
static void pg_sync_record(am_store *st, int ok, const am_store_pg_status *s)
{
    pthread_mutex_lock(&st->sync_mu);
    int was_degraded = st->pg_status.probed && pg_degraded(&st->pg_status);
    st->pg_status = *s;
    st->pg_status.probed = 1;
    pthread_mutex_unlock(&st->sync_mu);
    int was = atomic_exchange(&st->pg_sync_ok, ok);
    if (was != ok && atomic_load(&st->pg_require))
        am_store_note(st, ok ? AM_OK : AM_ERR_UNAVAILABLE,
                      ok ? "PostgreSQL: a synchronous standby streams again; writes resume"
                         : "PostgreSQL: no synchronous standby streams; writes answer 503 "
                           "(--pg-require-sync)");
    if (pg_degraded(s) != was_degraded) {
        char msg[512];
        if (pg_degraded(s))
            snprintf(msg, sizeof msg,
                     "PostgreSQL degraded: %lld of %lld expected standbys stream%s%s "
                     "(deploy/postgres/RUNBOOK.md, \"A standby that does not stream\")",
                     (long long)s->streaming, (long long)s->expected,
                     s->missing[0] ? "; not streaming: " : "", s->missing);
        else
            snprintf(msg, sizeof msg, "PostgreSQL: %lld of %lld expected standbys stream again",
                     (long long)s->streaming, (long long)s->expected);
        am_pg_sync_log(st, msg);
    }
}

static void *pg_sync_main(void *arg)
{
    am_store *st = arg;
    pthread_mutex_lock(&st->sync_mu);
    while (!st->sync_stop) {
        pthread_mutex_unlock(&st->sync_mu);
        am_store_pg_status s;
        int ok = pg_sync_probe(st, &s);
        pg_sync_record(st, ok, &s);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_mutex_lock(&st->sync_mu);
        while (!st->sync_stop && pthread_cond_timedwait(&st->sync_cv, &st->sync_mu, &ts) == 0) {
        }
    }
    pthread_mutex_unlock(&st->sync_mu);
    return NULL;
}

void am_store_pg_expect_standbys(am_store *st, int n)
{
    atomic_store(&st->pg_expect, n < 0 ? 0 : n + 1);
}

int am_pg_sync_start(am_store *st, int on, am_buf *err)
{
    if (!st->pg || st->sync_running)
        return AM_OK;
    am_store_pg_status s;
    int ok = pg_sync_probe(st, &s); /* the first answer before any write */
    atomic_store(&st->pg_require, on ? 1 : 0);
    pg_sync_record(st, ok, &s);
    if (pthread_create(&st->sync_thread, NULL, pg_sync_main, st) != 0) {
        am_buf_printf(err, "cannot start the synchronous-standby probe");
        return AM_ERR_IO;
    }
    st->sync_running = 1;
    return AM_OK;
}

int am_store_pg_status_get(am_store *st, am_store_pg_status *out)
{
    memset(out, 0, sizeof *out);
    out->lag_bytes = -1;
    if (!st->pg)
        return 0;
    pthread_mutex_lock(&st->sync_mu);
    *out = st->pg_status;
    pthread_mutex_unlock(&st->sync_mu);
    out->require = atomic_load(&st->pg_require);
    out->writes_ok = am_store_pg_sync_ok(st);
    out->degraded = pg_degraded(out);
    out->committers = (int64_t)st->ngc;
    return out->probed;
}

int am_store_pg_sync_ok(am_store *st)
{
    if (st->parent) /* a rewrite's pinned view asks its store's probe */
        st = st->parent;
    return !st->pg || !atomic_load(&st->pg_require) || atomic_load(&st->pg_sync_ok);
}

int am_pg_write_gate(am_store *st)
{
    if (am_store_pg_sync_ok(st))
        return AM_OK;
    am_store_note(st, AM_ERR_UNAVAILABLE,
                  "refused: no synchronous standby streams (--pg-require-sync)");
    return AM_ERR_UNAVAILABLE;
}

void am_pg_sync_stop(am_store *st)
{
    if (st->sync_running) {
        pthread_mutex_lock(&st->sync_mu);
        st->sync_stop = 1;
        pthread_cond_signal(&st->sync_cv);
        pthread_mutex_unlock(&st->sync_mu);
        pthread_join(st->sync_thread, NULL);
        st->sync_running = 0;
    }
    PQfinish(st->sync_conn.pg);
    st->sync_conn.pg = NULL;
}
