/*
 * store/open.c — opening and closing the store: pragmas, migrations,
 * the checkpointer thread, size and page caps, the ping, and online
 * backups (store_int.h: Checkpoints, Migrations, Durability).
 */
#include "store_int.h"

#include "clock.h"
#include "dbfile.h"
#include "embedded.h"
#include "sql_pg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- open / close --------------------------------------------------------- */

typedef struct am_migration {
    int version;
    const am_embedded_file *file;
} am_migration;

static int am_migration_cmp(const void *a, const void *b)
{
    const am_migration *x = a, *y = b;
    return (x->version > y->version) - (x->version < y->version);
}

/* Collects the migrations among files (prefix + "NNN_name.sql": SQLite's
 * "schema/", PostgreSQL's "schema/pg/", whose files the first skips as
 * being in a directory of their own) in version order into a malloc'd
 * array. */
static int am_migrations_collect(const am_embedded_file *files, size_t nfiles, const char *prefix,
                                 am_migration **out, size_t *n, am_buf *err)
{
    am_migration *v = am_xcalloc(nfiles ? nfiles : 1, sizeof *v);
    size_t k = 0, np = strlen(prefix);
    for (size_t i = 0; i < nfiles; i++) {
        const char *p = files[i].path;
        size_t len = strlen(p);
        if (strncmp(p, prefix, np) != 0 || len < np + 4 || strcmp(p + len - 4, ".sql") != 0 ||
            strchr(p + np, '/'))
            continue;
        const char *d = p + np;
        long ver = 0;
        size_t nd = 0;
        while (d[nd] >= '0' && d[nd] <= '9' && nd < 9)
            ver = ver * 10 + (d[nd++] - '0');
        if (nd == 0 || ver <= 0 || (d[nd] != '_' && d[nd] != '.')) {
            am_buf_printf(err, "migration %s: name must be %sNNN_name.sql", p, prefix);
            free(v);
            return AM_ERR_INVALID;
        }
        v[k].version = (int)ver;
        v[k].file = &files[i];
        k++;
    }
    qsort(v, k, sizeof *v, am_migration_cmp);
    for (size_t i = 1; i < k; i++)
        if (v[i].version == v[i - 1].version) {
            am_buf_printf(err, "migrations %s and %s have the same version", v[i - 1].file->path,
                          v[i].file->path);
            free(v);
            return AM_ERR_INVALID;
        }
    *out = v;
    *n = k;
    return AM_OK;
}

/* Current recorded schema version (inside the caller's transaction). */
static int migrated_version(am_store *st, int64_t *v)
{
    int rc = store_get(st, &st->w, AM_S_MIG_MAX, COLS(col_int(v)), "");
    return rc == AM_ERR_NOTFOUND ? AM_ERR_INTERNAL : rc; /* an aggregate: one row */
}

static int am_migrate(am_store *st, const am_embedded_file *files, size_t nfiles, am_buf *err)
{
    am_migration *m;
    size_t nm;
    int rc = am_migrations_collect(files, nfiles, "schema/", &m, &nm, err);
    if (rc)
        return rc;
    int known = nm ? m[nm - 1].version : 0;
    rc = am_conn_exec(&st->w, AM_SQL_MIGRATIONS_TABLE, err, "cannot create schema_migrations");
    int64_t cur = 0;
    for (size_t i = 0; rc == AM_OK; i++) {
        /* Each step re-reads the version inside its own transaction, so
         * two processes opening the same database cannot both apply a
         * migration. */
        rc = am_exec(st, &st->w, AM_S_BEGIN_IMM, "");
        if (rc == AM_OK)
            rc = migrated_version(st, &cur);
        if (rc == AM_OK && i == 0)
            st->mig_from = st->mig_to = cur; /* the version found at open */
        if (rc) {
            am_buf err2;
            am_buf_init(&err2);
            am_store_last_error(st, &err2);
            am_buf_printf(err, "cannot read the schema version: %s", am_buf_str(&err2));
            am_buf_cleanup(&err2);
            break;
        }
        if (cur > known) {
            am_buf_printf(err,
                          "database schema version %lld is newer than this adaptmon supports "
                          "(%d); use a newer adaptmon or restore a backup",
                          (long long)cur, known);
            rc = AM_ERR_RANGE;
            break;
        }
        while (i < nm && m[i].version <= cur)
            i++;
        if (i >= nm)
            break;
        char what[256];
        snprintf(what, sizeof what, "migration %s failed", m[i].file->path);
        rc = am_conn_exec(&st->w, (const char *)m[i].file->data, err, what);
        if (rc == AM_OK) {
            rc = am_exec(st, &st->w, AM_S_MIG_INSERT, "iti", (int64_t)m[i].version, m[i].file->path,
                         am_now_ms());
            if (rc == AM_OK)
                rc = am_exec(st, &st->w, AM_S_COMMIT, "");
            if (rc == AM_OK)
                st->mig_to = m[i].version;
            if (rc) {
                am_buf err2;
                am_buf_init(&err2);
                am_store_last_error(st, &err2);
                am_buf_printf(err, "%s: %s", what, am_buf_str(&err2));
                am_buf_cleanup(&err2);
            }
        }
        cur = m[i].version;
    }
    if (!sqlite3_get_autocommit(st->w.db)) {
        /* Read-only check finished (nothing to apply) or a failure. */
        if (rc == AM_OK)
            rc = am_exec(st, &st->w, AM_S_COMMIT, "");
        if (!sqlite3_get_autocommit(st->w.db))
            sqlite3_exec(st->w.db, AM_SQL_ROLLBACK, NULL, NULL, NULL);
    }
    if (rc == AM_OK)
        st->schema_version = (int)cur;
    free(m);
    return rc;
}

/* ---- the database's id (dbfile.h "Database identity") --------------------- */

/* A fresh database id: random, never 0 (a database that never had one) nor
 * the backup mark. */
static uint32_t am_id_random(void)
{
    uint32_t v = 0;
    while (v == 0 || v == AM_DBFILE_BACKUP_MARK)
        sqlite3_randomness(sizeof v, &v);
    return v;
}

/* v as the signed 32-bit value PRAGMA user_version/application_id take. */
static int am_id_sql(uint32_t v)
{
    int32_t x;
    memcpy(&x, &v, sizeof x);
    return (int)x;
}

/* Runs sql (page-1 writes) on db; rolls back what it left open on failure.
 * Returns AM_OK, or AM_ERR_IO with a message in err (when err). */
static int am_ids_exec(sqlite3 *db, const char *sql, am_buf *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return AM_OK;
    if (err)
        am_buf_printf(err, "cannot write the database id: %s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, AM_SQL_ROLLBACK, NULL, NULL, NULL);
    return AM_ERR_IO;
}

/* Writes prev (application_id) and life (user_version) in one transaction. */
static int am_ids_write(sqlite3 *db, uint32_t prev, uint32_t life, am_buf *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, AM_SQL_IDS_FMT, am_id_sql(prev), am_id_sql(life));
    return am_ids_exec(db, sql, err);
}

/* The WAL header's checkpoint sequence and salts (its bytes 12..23), which
 * change exactly when SQLite restarts the WAL, into id. 0 when the WAL
 * cannot be read (none yet). */
static int am_wal_id(sqlite3 *db, unsigned char id[12])
{
    sqlite3_file *f = NULL;
    unsigned char h[24];
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) != SQLITE_OK || !f ||
        !f->pMethods || f->pMethods->xRead(f, h, sizeof h, 0) != SQLITE_OK)
        return 0;
    memcpy(id, h + 12, 12);
    return 1;
}

/* After a commit of the writer (w.mu held): when that commit restarted the
 * WAL, writes the database id into page 1 at once, so that every WAL
 * generation carries a page-1 frame naming the database it belongs to
 * (am_dbfile_check_wal reads it at the next open). A commit that restarts
 * the WAL need not touch page 1 itself; the id follows it immediately.
 * Called from the WAL hook, which SQLite allows to write. A failure (a
 * full disk) is retried after the next commit. */
static void am_wal_mark(am_store *st, sqlite3 *db)
{
    unsigned char id[12];
    if (st->wal_marking || !am_wal_id(db, id) || !memcmp(id, st->wal_id, sizeof id))
        return;
    st->wal_marking = 1;
    char sql[64];
    snprintf(sql, sizeof sql, AM_SQL_LIFE_FMT, am_id_sql(st->life));
    /* the mark may itself restart the WAL (a checkpoint finished in
     * between): the id read after it is the one it went into */
    if (am_ids_exec(db, sql, NULL) == AM_OK && am_wal_id(db, id))
        memcpy(st->wal_id, id, sizeof id);
    st->wal_marking = 0;
}

/* At open (writer set up, hook installed): a new id for this life of the
 * database, the old one kept as its previous id, and the WAL generation
 * noted. A failure (a full disk) keeps the old id: the WAL check then
 * still tells other databases apart, only not two lives of this one. */
static void am_life_begin(am_store *st)
{
    int64_t old = 0;
    uint32_t prev = 0, life = am_id_random();
    am_w_lock(st);
    if (am_conn_int(&st->w, AM_SQL_USER_VERSION, &old) == AM_OK)
        prev = (uint32_t)old;
    st->wal_marking = 1;
    st->life = am_ids_write(st->w.db, prev, life, NULL) == AM_OK ? life : prev;
    if (!am_wal_id(st->w.db, st->wal_id))
        memset(st->wal_id, 0, sizeof st->wal_id);
    st->wal_marking = 0;
    am_w_unlock(st);
}

/* ---- checkpoints ------------------------------------------------------------ */

/* The writer's WAL hook: runs after each commit with the WAL's size. When
 * the checkpointer falls behind (a writer committing faster than it copies),
 * the writer checkpoints itself, as SQLite's automatic checkpoint would:
 * the back pressure that bounds the WAL. */
static int am_wal_hook(void *ctx, sqlite3 *db, const char *name, int pages)
{
    am_store *st = ctx;
    am_wal_mark(st, db);
    if (pages >= AM_CKPT_HARD_PAGES)
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    pthread_mutex_lock(&st->ckmu);
    st->ck_pages = pages;
    if (pages >= AM_CKPT_PAGES)
        pthread_cond_signal(&st->ckcv);
    pthread_mutex_unlock(&st->ckmu);
    return SQLITE_OK;
}

static void *am_ckpt_main(void *arg)
{
    am_store *st = arg;
    pthread_mutex_lock(&st->ckmu);
    for (;;) {
        while (!st->ck_stop && st->ck_pages < AM_CKPT_PAGES)
            pthread_cond_wait(&st->ckcv, &st->ckmu);
        if (st->ck_stop)
            break;
        st->ck_pages = 0; /* the next commit reports the WAL's size again */
        pthread_mutex_unlock(&st->ckmu);
        /* the bulk of the copy runs beside the writer; then, with the
         * writer held between two transactions, the frames committed
         * meanwhile: the WAL is then wholly in the database and the next
         * write transaction can restart it (otherwise it would only grow) */
        int rc = sqlite3_wal_checkpoint_v2(st->ck.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        if (rc == SQLITE_OK) {
            am_w_lock(st);
            rc = sqlite3_wal_checkpoint_v2(st->ck.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
            am_w_unlock(st);
        }
        if (rc != SQLITE_OK && rc != SQLITE_BUSY)
            am_db_fail(st, st->ck.db, "checkpoint"); /* logged; the next one retries */
        /* a WAL that readers keep from restarting stays above the
         * threshold: pace the retries */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += AM_CKPT_GAP_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&st->ckmu);
        while (!st->ck_stop && pthread_cond_timedwait(&st->ckcv, &st->ckmu, &ts) == 0) {
        }
    }
    pthread_mutex_unlock(&st->ckmu);
    return NULL;
}

/* Opens the checkpointer's connection and starts its thread, and turns the
 * writer's automatic checkpoints off. */
static int am_ckpt_start(am_store *st, am_buf *err)
{
    int rc = am_conn_open(&st->ck, st->path, SQLITE_OPEN_READWRITE, 0, err);
    st->ck_opened = 1; /* its mutex exists even if the open failed */
    if (rc == AM_OK)
        rc = am_conn_exec(&st->ck,
                          st->durability == AM_DURABLE_FULL ? AM_SQL_SYNC_FULL : AM_SQL_SYNC_NORMAL,
                          err, "cannot set synchronous");
    if (rc != AM_OK)
        return rc;
    if (pthread_create(&st->ck_thread, NULL, am_ckpt_main, st) != 0) {
        am_buf_printf(err, "cannot start the checkpoint thread");
        return AM_ERR_IO;
    }
    st->ck_running = 1;
    sqlite3_wal_hook(st->w.db, am_wal_hook, st);
    return AM_OK;
}

static void am_ckpt_stop(am_store *st)
{
    if (st->ck_running) {
        if (st->w.db)
            sqlite3_wal_hook(st->w.db, NULL, NULL);
        pthread_mutex_lock(&st->ckmu);
        st->ck_stop = 1;
        pthread_cond_signal(&st->ckcv);
        pthread_mutex_unlock(&st->ckmu);
        pthread_join(st->ck_thread, NULL);
        st->ck_running = 0;
    }
    am_conn_close(&st->ck);
}

static void am_store_free(am_store *st)
{
    am_pg_sync_stop(st);
    pthread_mutex_destroy(&st->sync_mu);
    pthread_cond_destroy(&st->sync_cv);
    am_ckpt_stop(st);
    if (st->ck_opened)
        pthread_mutex_destroy(&st->ck.mu);
    pthread_mutex_destroy(&st->ckmu);
    pthread_cond_destroy(&st->ckcv);
    am_pool_free(st);
    am_group_free(st); /* its connections before the writer's */
    am_conn_close(&st->w);
    am_walbuf_free(st->walbuf); /* after its last connection */
    pthread_mutex_destroy(&st->w.mu);
    pthread_mutex_destroy(&st->errmu);
    am_buf_cleanup(&st->errmsg);
    am_buf_cleanup(&st->rtx.t.sess);
    free(st->path);
    free(st);
}

/* The writer's pragmas: WAL (file databases), synchronous per the
 * durability, foreign keys on (and checked: a SQLite built without them
 * would ignore the pragma). */
static int writer_pragmas(am_store *st, am_buf *err)
{
    int rc = AM_OK;
    if (!st->memory) {
        char *mode = NULL;
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(st->w.db, AM_SQL_WAL, -1, &s, NULL) == SQLITE_OK &&
            sqlite3_step(s) == SQLITE_ROW)
            mode = am_col_str(s, 0);
        if (!mode || strcmp(mode, "wal") != 0) {
            am_buf_printf(err, "cannot switch %s to WAL mode: %s", st->path,
                          mode ? mode : sqlite3_errmsg(st->w.db));
            rc = AM_ERR_IO;
        }
        free(mode);
        sqlite3_finalize(s);
    }
    if (rc == AM_OK)
        rc = am_conn_exec(&st->w,
                          st->durability == AM_DURABLE_FULL ? AM_SQL_SYNC_FULL : AM_SQL_SYNC_NORMAL,
                          err, "cannot set synchronous");
    if (rc == AM_OK)
        rc = am_conn_exec(&st->w, AM_SQL_FK_ON, err, "cannot enable foreign keys");
    if (rc == AM_OK) {
        int64_t fk = 0;
        if (am_conn_int(&st->w, AM_SQL_FK, &fk) != AM_OK || fk != 1) {
            am_buf_printf(err, "this SQLite does not enforce foreign keys");
            rc = AM_ERR_IO;
        }
    }
    return rc;
}

/* ---- PostgreSQL (drv_pg.c) ------------------------------------------------- */

/* The key of the migrations' advisory lock ("adaptmon" in ASCII). */
#define AM_PG_MIGRATE_LOCK "SELECT pg_advisory_xact_lock(7019838376024043374)"

/* Whether a commit on the writer would wait for ever for a synchronous
 * standby: synchronous_standby_names is set and pg_stat_replication shows
 * no standby streaming as sync or quorum. Rows whose state the role may
 * not read (no pg_monitor: NULL) count as "cannot tell", and then the
 * answer is no: the commit may wait, as before. */
#define AM_PG_SQL_SYNC_MISSING                                                                     \
    "SELECT current_setting('synchronous_standby_names') <> '' "                                   \
    "AND NOT EXISTS (SELECT 1 FROM pg_stat_replication WHERE state IS NULL "                       \
    "OR (state = 'streaming' AND sync_state IN ('sync', 'quorum')))"

static int pg_sync_missing(am_store *st)
{
    PGresult *r = PQexec(st->w.pg, AM_PG_SQL_SYNC_MISSING);
    int missing = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
                  !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return missing;
}

/* Migrations (DESIGN-postgres §2.7): schema/pg/NNN_name.sql, embedded
 * like the SQLite ones, those newer than the recorded version all applied
 * in one transaction that first takes a transaction-level advisory lock:
 * two nodes starting at once serialize there, and the second re-reads the
 * version the first recorded. DDL is transactional, so a failed migration
 * leaves nothing behind. */
static int pg_migrate(am_store *st, const am_embedded_file *files, size_t nfiles, am_buf *err)
{
    am_migration *m;
    size_t nm;
    int rc = am_migrations_collect(files, nfiles, "schema/pg/", &m, &nm, err);
    if (rc)
        return rc;
    int known = nm ? m[nm - 1].version : 0;
    am_conn *w = &st->w;
    rc = am_exec(st, w, AM_S_BEGIN_IMM, "");
    if (rc == AM_OK)
        rc = am_pg_exec_const(st, w, AM_PG_MIGRATE_LOCK, "migration lock");
    if (rc == AM_OK)
        rc = am_pg_exec_const(st, w, AM_PG_SQL_MIGRATIONS_TABLE, "schema_migrations");
    int64_t cur = 0;
    if (rc == AM_OK) {
        rc = store_get(st, w, AM_S_MIG_MAX, COLS(col_int(&cur)), "");
        rc = rc == AM_ERR_NOTFOUND ? AM_ERR_INTERNAL : rc;
    }
    if (rc) {
        am_buf e;
        am_buf_init(&e);
        am_store_last_error(st, &e);
        am_buf_printf(err, "cannot read the schema version: %s", am_buf_str(&e));
        am_buf_cleanup(&e);
    }
    st->mig_from = st->mig_to = cur;
    if (rc == AM_OK && cur > known) {
        am_buf_printf(err,
                      "database schema version %lld is newer than this adaptmon supports "
                      "(%d); use a newer adaptmon",
                      (long long)cur, known);
        rc = AM_ERR_RANGE;
    }
    /* Migrations write, and their commit waits for a synchronous standby
     * (synchronous_commit=on): with none streaming the start would hang
     * without a word. It fails instead, saying why (systemd's restart, or
     * the operator, tries again once a standby streams). */
    if (rc == AM_OK && cur < known && pg_sync_missing(st)) {
        am_buf_printf(err,
                      "schema version %lld needs migrating to %d, but no synchronous standby "
                      "streams (synchronous_standby_names is set): the migration's commit would "
                      "wait until one does; start a standby, then adaptmon again",
                      (long long)cur, known);
        rc = AM_ERR_UNAVAILABLE;
    }
    for (size_t i = 0; rc == AM_OK && i < nm; i++) {
        if (m[i].version <= cur)
            continue;
        char what[256];
        snprintf(what, sizeof what, "migration %s failed", m[i].file->path);
        rc = am_pg_exec_const(st, w, (const char *)m[i].file->data, what);
        if (rc == AM_OK)
            rc = am_exec(st, w, AM_S_MIG_INSERT, "iti", (int64_t)m[i].version, m[i].file->path,
                         am_now_ms());
        if (rc) {
            am_buf e;
            am_buf_init(&e);
            am_store_last_error(st, &e);
            am_buf_printf(err, "%s", am_buf_str(&e));
            am_buf_cleanup(&e);
        } else {
            st->mig_to = m[i].version;
        }
    }
    if (rc == AM_OK) {
        rc = am_exec(st, w, AM_S_COMMIT, "");
        if (rc)
            am_buf_printf(err, "cannot commit the migrations");
    } else if (w->pg_intx) {
        am_exec(st, w, AM_S_ROLLBACK, "");
    }
    if (rc == AM_OK)
        st->schema_version = (int)(st->mig_to > cur ? st->mig_to : cur);
    else
        st->mig_to = st->mig_from;
    free(m);
    return rc;
}

int am_store_path_is_pg(const char *db)
{
    return db && (!strncmp(db, "postgresql://", 13) || !strncmp(db, "postgres://", 11) ||
                  !strncmp(db, "host=", 5));
}

int am_store_is_pg(const am_store *st)
{
    return st->pg;
}

/* What a store does once open and migrated, either backend: unfinished
 * background vocabularies deleted and deleted sessions' rows purged (work
 * left by a process that stopped in the middle). AM_OK or AM_ERR_IO, err
 * set. */
static int open_cleanup(am_store *st, am_buf *err)
{
    if (vocab_cleanup(st) != AM_OK) {
        am_buf_printf(err, "deleting unfinished background vocabularies failed");
        return AM_ERR_IO;
    }
    if (sessions_purge_hidden(st) != AM_OK) {
        am_buf_printf(err, "purging the rows of deleted sessions failed");
        return AM_ERR_IO;
    }
    return AM_OK;
}

int am_store_pg_require_sync(am_store *st, int on, am_buf *err)
{
    int rc = am_pg_sync_start(st, on, err);
    if (rc != AM_OK || !st->pg_cleanup_due)
        return rc;
    /* the open's purge writes too: refused like any other write, it waits
     * for a start that has a synchronous standby (the rows are hidden
     * meanwhile; they only take space). Before the probe it would commit a
     * single copy, or wait for ever on a standby that is not there. */
    st->pg_cleanup_due = 0;
    if (am_store_pg_sync_ok(st))
        return open_cleanup(st, err);
    am_pg_sync_log(st, "PostgreSQL: no synchronous standby streams: the rows of deleted sessions "
                       "and unfinished vocabulary uploads a crash left are purged at a later "
                       "start (--pg-require-sync)");
    return AM_OK;
}

/* The PostgreSQL side of am_store_open_ex (st set up but for connections):
 * the writer and migrations (drv_pg.c), the cleanups of open, the readers.
 * No file, WAL, checkpointer or database id: those are the cluster's. */
static int am_store_open_pg(am_store *st, const struct am_embedded_file *migrations, size_t n,
                            am_buf *err)
{
    st->pg = 1;
    int rc = am_pg_conn_open(st, &st->w, 1, err);
    if (rc == AM_OK)
        rc = pg_migrate(st, migrations, n, err);
    /* open_cleanup writes: am_store_pg_require_sync runs it once it knows
     * whether writes may commit (pg_sync.c) */
    st->pg_cleanup_due = 1;
    if (rc == AM_OK)
        rc = am_store_set_readers(st, AM_STORE_READERS, err);
    return rc;
}

int am_store_open_ex(const char *path, enum am_durability durability,
                     const struct am_embedded_file *migrations, size_t n, am_store **out,
                     am_buf *err)
{
    *out = NULL;
    if (!path || !*path || (durability != AM_DURABLE_NORMAL && durability != AM_DURABLE_FULL)) {
        am_buf_printf(err, "invalid database path or durability");
        return AM_ERR_INVALID;
    }
    am_store *st = am_xcalloc(1, sizeof *st);
    st->path = am_xstrdup(path);
    st->memory = strcmp(path, ":memory:") == 0;
    st->durability = durability;
    st->rtx.t.st = st;
    st->rtx.t.c = &st->w;
    am_group_init(st);
    pthread_mutex_init(&st->ckmu, NULL);
    pthread_cond_init(&st->ckcv, NULL);
    pthread_mutex_init(&st->sync_mu, NULL);
    pthread_cond_init(&st->sync_cv, NULL);
    am_buf_init(&st->errmsg);
    am_buf_init(&st->rtx.t.sess);
    pthread_mutex_init(&st->errmu, NULL);
    am_pool_init(st);

    if (am_store_path_is_pg(path)) {
        int rc = am_store_open_pg(st, migrations, n, err);
        if (rc != AM_OK)
            am_store_free(st);
        else
            *out = st;
        return rc;
    }
    int rc = st->memory ? AM_OK : am_dbfile_mkdir_parents(path, err);
    /* before SQLite sees the files: it would recover any WAL it finds */
    if (rc == AM_OK && !st->memory)
        rc = am_dbfile_check_wal(path, err);
    if (rc == AM_OK && !st->memory)
        st->walbuf = am_walbuf_new(); /* NULL: the default VFS, one write per frame half */
    if (rc == AM_OK)
        rc = am_conn_open_vfs(&st->w, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1,
                              am_walbuf_name(st->walbuf), err);
    else
        pthread_mutex_init(&st->w.mu, NULL);
    if (rc == AM_OK)
        rc = writer_pragmas(st, err);
    if (rc == AM_OK)
        rc = am_migrate(st, migrations, n, err);
    if (rc == AM_OK)
        rc = open_cleanup(st, err);
    if (rc == AM_OK && !st->memory)
        rc = am_ckpt_start(st, err);
    if (rc == AM_OK && !st->memory)
        am_life_begin(st);
    if (rc == AM_OK && !st->memory)
        rc = am_store_set_readers(st, AM_STORE_READERS, err);
    if (rc != AM_OK) {
        am_store_free(st);
        return rc;
    }
    *out = st;
    return AM_OK;
}

int am_store_migrated(const am_store *st, int64_t *from, int64_t *to)
{
    *from = st->mig_from;
    *to = st->mig_to;
    return st->mig_to != st->mig_from;
}

int am_store_open(const char *path, enum am_durability durability, am_store **out, am_buf *err)
{
    size_t n;
    const am_embedded_file *files = am_embedded_files(&n);
    return am_store_open_ex(path, durability, files, n, out, err);
}

void am_store_close(am_store *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nr; i++)
        am_conn_close(&st->r[i]);
    am_ckpt_stop(st);
    if (st->w.db && !st->memory && !st->pg)
        sqlite3_wal_checkpoint_v2(st->w.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    am_store_free(st);
}

int am_store_schema_version(am_store *st)
{
    return st->schema_version;
}

int64_t am_store_size_bytes(am_store *st)
{
    if (st->pg) { /* the database's size on the server */
        int64_t pages = 0;
        am_conn *c = am_reader_get(st);
        int rc = store_get(st, c, AM_S_PAGE_COUNT, COLS(col_int(&pages)), "");
        am_reader_put(c);
        return rc == AM_OK ? pages * 8192 : 0;
    }
    if (st->memory) {
        int64_t pages = 0, size = 0;
        am_w_lock(st);
        int rc = am_conn_int(&st->w, AM_SQL_PAGE_COUNT, &pages);
        if (rc == AM_OK)
            rc = am_conn_int(&st->w, AM_SQL_PAGE_SIZE, &size);
        am_w_unlock(st);
        return rc == AM_OK ? pages * size : 0;
    }
    int64_t total = 0;
    struct stat sb;
    if (stat(st->path, &sb) == 0)
        total += (int64_t)sb.st_size;
    size_t len = strlen(st->path);
    char *wal = am_xmalloc(len + 5);
    memcpy(wal, st->path, len);
    memcpy(wal + len, "-wal", 5);
    if (stat(wal, &sb) == 0)
        total += (int64_t)sb.st_size;
    free(wal);
    return total;
}

int am_store_set_max_bytes(am_store *st, int64_t bytes)
{
    if (bytes <= 0 || st->memory || st->pg) /* PostgreSQL: the server's quotas */
        return AM_OK;
    am_w_lock(st);
    int64_t page = 0, got = 0;
    int rc = am_conn_int(&st->w, AM_SQL_PAGE_SIZE, &page);
    if (rc == AM_OK && page > 0) {
        char sql[64];
        int64_t pages = bytes / page > 0 ? bytes / page : 1;
        snprintf(sql, sizeof sql, AM_SQL_MAX_PAGES_FMT, (long long)pages);
        rc = am_conn_int(&st->w, sql, &got);
    }
    am_w_unlock(st);
    return rc;
}

int am_store_ping(am_store *st)
{
    am_conn *c = am_reader_get(st);
    int rc = am_exec(st, c, AM_S_PING, "");
    am_reader_put(c);
    return rc;
}

int am_store_synchronous(am_store *st, int *level)
{
    int64_t v = 0;
    am_w_lock(st);
    int rc = store_get(st, &st->w, AM_S_SYNCHRONOUS, COLS(col_int(&v)), "");
    am_w_unlock(st);
    if (rc == AM_OK)
        *level = (int)v;
    return rc == AM_ERR_NOTFOUND ? AM_ERR_INTERNAL : rc;
}

/* ---- backups -------------------------------------------------------------- */

static int am_fsync_path(const char *path, int dir)
{
    int fd = open(path, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Removes path and its -wal/-shm side files (a failed copy). */
static void am_backup_discard(const char *path)
{
    unlink(path);
    size_t n = strlen(path);
    char *side = am_xmalloc(n + 5);
    memcpy(side, path, n);
    memcpy(side + n, "-wal", 5);
    unlink(side);
    memcpy(side + n, "-shm", 5);
    unlink(side);
    free(side);
}

/* Copies the database open as src (one read snapshot, SQLite's backup
 * API) into dest_path: written as dest_path.tmp, given an id of its own
 * and the untouched-backup mark (dbfile.h), checkpointed into one file,
 * synced, renamed, and its checksum written to dest_path.sha256. src
 * borrowed; the caller holds it for the call. */
static int am_backup_from(sqlite3 *src, const char *dest_path, am_buf *err)
{
    int rc = am_dbfile_mkdir_parents(dest_path, err);
    if (rc)
        return rc;
    size_t len = strlen(dest_path);
    char *tmp = am_xmalloc(len + 5);
    memcpy(tmp, dest_path, len);
    memcpy(tmp + len, ".tmp", 5);
    am_backup_discard(tmp);

    sqlite3 *dst = NULL;
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        am_buf_printf(err, "cannot create %s: %s", tmp,
                      dst ? sqlite3_errmsg(dst) : "out of memory");
        sqlite3_close(dst);
        free(tmp);
        return AM_ERR_IO;
    }
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        am_buf_printf(err, "backup failed: %s", sqlite3_errmsg(dst));
        rc = AM_ERR_IO;
    } else {
        int s, tries = 0;
        /* Busy only while another process holds a lock: retry for about
         * the busy timeout. */
        while (((s = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || s == SQLITE_LOCKED) &&
               tries++ < AM_STORE_BUSY_MS / 10)
            sqlite3_sleep(10);
        if (s != SQLITE_DONE) {
            am_buf_printf(err, "backup failed: %s", sqlite3_errstr(s));
            rc = AM_ERR_IO;
        }
        if (sqlite3_backup_finish(b) != SQLITE_OK && rc == AM_OK) {
            am_buf_printf(err, "backup failed: %s", sqlite3_errmsg(dst));
            rc = AM_ERR_IO;
        }
    }
    /* the copy's own id: a WAL the source's server leaves behind can
     * never be taken for the copy's (am_dbfile_check_wal) */
    if (rc == AM_OK)
        rc = am_ids_write(dst, AM_DBFILE_BACKUP_MARK, am_id_random(), err);
    if (rc == AM_OK &&
        sqlite3_wal_checkpoint_v2(dst, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK) {
        am_buf_printf(err, "backup checkpoint failed: %s", sqlite3_errmsg(dst));
        rc = AM_ERR_IO;
    }
    if (sqlite3_close(dst) != SQLITE_OK && rc == AM_OK) {
        am_buf_printf(err, "cannot close %s", tmp);
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK && am_fsync_path(tmp, 0) != 0) {
        am_buf_printf(err, "cannot sync %s: %s", tmp, strerror(errno));
        rc = AM_ERR_IO;
    }
    char hex[65];
    if (rc == AM_OK)
        rc = am_dbfile_sha256(tmp, hex, err);
    if (rc == AM_OK && rename(tmp, dest_path) != 0) {
        am_buf_printf(err, "cannot rename %s to %s: %s", tmp, dest_path, strerror(errno));
        rc = AM_ERR_IO;
    }
    if (rc == AM_OK) {
        char *dir = am_dbfile_dir(dest_path);
        am_fsync_path(dir, 1); /* best effort: makes the rename durable */
        free(dir);
        rc = am_dbfile_sidecar_write(dest_path, hex, err);
    } else {
        am_backup_discard(tmp);
    }
    free(tmp);
    return rc;
}

int am_store_backup(am_store *st, const char *dest_path, am_buf *err)
{
    if (!dest_path || !*dest_path || strcmp(dest_path, ":memory:") == 0) {
        am_buf_printf(err, "invalid backup path");
        return AM_ERR_INVALID;
    }
    if (st->pg) {
        am_buf_printf(err, "adaptmon backup copies SQLite files; back a PostgreSQL database up "
                           "with pg_dump -Fc or pg_basebackup");
        return AM_ERR_INVALID;
    }
    /* A reader's snapshot: one step copies every page under one read
     * transaction, which in WAL mode does not stop the writer. */
    am_conn *c = am_reader_get(st);
    int rc = am_backup_from(c->db, dest_path, err);
    am_reader_put(c);
    if (rc != AM_OK)
        am_store_note(st, rc, am_buf_str(err));
    return rc;
}

int am_store_backup_path(const char *db_path, const char *dest_path, am_buf *err)
{
    if (!dest_path || !*dest_path || strcmp(dest_path, ":memory:") == 0) {
        am_buf_printf(err, "invalid backup path");
        return AM_ERR_INVALID;
    }
    /* no server holds it: do not let SQLite recover a WAL that is not the
     * database's into the copy */
    if (!am_dbfile_in_use(db_path)) {
        int rc = am_dbfile_check_wal(db_path, err);
        if (rc != AM_OK)
            return rc;
    }
    sqlite3 *src = NULL;
    if (sqlite3_open_v2(db_path, &src, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        am_buf_printf(err, "cannot open %s: %s", db_path,
                      src ? sqlite3_errmsg(src) : "out of memory");
        sqlite3_close(src);
        return AM_ERR_IO;
    }
    sqlite3_busy_timeout(src, AM_STORE_BUSY_MS);
    int rc = am_backup_from(src, dest_path, err);
    sqlite3_close(src);
    return rc;
}

int am_store_check_file(const char *path, am_buf *err)
{
    /* a URI, for immutable=1: the characters that end or escape a path
     * in a URI are percent-encoded */
    am_buf uri;
    am_buf_init(&uri);
    am_buf_appends(&uri, "file:");
    for (const char *p = path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#')
            am_buf_printf(&uri, "%%%02X", (unsigned)(unsigned char)*p);
        else
            am_buf_appendc(&uri, *p);
    }
    am_buf_appends(&uri, "?immutable=1");
    sqlite3 *db = NULL;
    int rc = AM_OK;
    if (sqlite3_open_v2(am_buf_str(&uri), &db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        am_buf_printf(err, "cannot open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        rc = AM_ERR_IO;
    }
    sqlite3_stmt *s = NULL;
    if (rc == AM_OK && sqlite3_prepare_v2(db, AM_SQL_INTEGRITY, -1, &s, NULL) != SQLITE_OK) {
        am_buf_printf(err, "%s: %s", path, sqlite3_errmsg(db));
        rc = AM_ERR_PARSE;
    }
    if (rc == AM_OK) {
        int step = sqlite3_step(s);
        const unsigned char *msg = step == SQLITE_ROW ? sqlite3_column_text(s, 0) : NULL;
        if (!msg || strcmp((const char *)msg, "ok") != 0) {
            am_buf_printf(err, "%s fails SQLite's integrity check: %s", path,
                          msg ? (const char *)msg : sqlite3_errmsg(db));
            rc = AM_ERR_PARSE;
        }
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    am_buf_cleanup(&uri);
    return rc;
}
