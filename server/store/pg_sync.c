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
 */
#include "store_int.h"

#include <stdlib.h>
#include <time.h>

/* Synchronous standbys that stream now, when any is configured. */
#define AM_PG_SQL_SYNC_PROBE                                                                       \
    "SELECT CASE WHEN current_setting('synchronous_standby_names') = '' THEN 0 ELSE "              \
    "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum') "            \
    "AND state = 'streaming') END"

/* One probe: 1 when a synchronous standby streams, 0 when none does or the
 * server does not answer (then nothing can be acknowledged anyway). */
static int pg_sync_probe(am_store *st)
{
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
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
             strtoll(PQgetvalue(r, 0, 0), NULL, 10) > 0;
    PQclear(r);
    return ok;
}

static void *pg_sync_main(void *arg)
{
    am_store *st = arg;
    pthread_mutex_lock(&st->sync_mu);
    while (!st->sync_stop) {
        pthread_mutex_unlock(&st->sync_mu);
        int ok = pg_sync_probe(st);
        int was = atomic_exchange(&st->pg_sync_ok, ok);
        if (was != ok)
            am_store_note(st, ok ? AM_OK : AM_ERR_UNAVAILABLE,
                          ok ? "PostgreSQL: a synchronous standby streams again; writes resume"
                             : "PostgreSQL: no synchronous standby streams; writes answer 503 "
                               "(--pg-require-sync)");
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

int am_store_pg_require_sync(am_store *st, int on, am_buf *err)
{
    if (!st->pg || !on || st->sync_running)
        return AM_OK;
    atomic_store(&st->pg_sync_ok, pg_sync_probe(st)); /* the first answer before any write */
    atomic_store(&st->pg_require, 1);
    if (pthread_create(&st->sync_thread, NULL, pg_sync_main, st) != 0) {
        am_buf_printf(err, "cannot start the synchronous-standby probe");
        return AM_ERR_IO;
    }
    st->sync_running = 1;
    return AM_OK;
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
