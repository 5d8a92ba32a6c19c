/*
 * cli_migrate.c — `adaptmon migrate --from FILE.db [--from SHARD2.db …]
 * --to postgresql://…`: one SQLite database (or the files of several
 * shards) copied into PostgreSQL (docs/migrate.md, DESIGN-postgres.md
 * §2.8).
 *
 * Each file is opened read-only and read from one read snapshot (a read
 * transaction held from the first read to the end), so a server may keep
 * running on it: what is copied is the database as of that instant. A file
 * whose schema version is not this binary's is refused (the server
 * upgrades it at its next start). Several files must not share a session
 * id (each id lives on one shard); their sids are renumbered into disjoint
 * ranges (every per-session row is keyed by sid), ids, seqs, generations
 * and incarnations are kept.
 *
 * The target: everything happens in one PostgreSQL transaction — the
 * schema when the target has none (schema/pg/, embedded), the refusal of
 * session ids the target holds already, the COPY of every table, the
 * identity and counter resets, and the checks (row counts per table,
 * per-session state, a replay of a sample of sessions compared with the
 * copied totals). Only when all pass is it committed; --dry-run rolls it
 * back instead, so it runs every step and writes nothing. A refusal or a
 * failure rolls back too: the target is as it was.
 *
 * Exit status: 0 migrated (or the dry run passed), 1 a failure (a file or
 * the server cannot be read, a copy or a check failed), 2 a usage error or
 * a refusal (old schema, clashing ids, a clashing vocabulary).
 * This file: the command, the sources and the target's schema; the copy
 * is cli_migrate_copy.c, the checks cli_migrate_check.c.
 */
#include "cli.h"
#include "cli_migrate.h"
#include "cli_migrate_sql.h"
#include "clock.h"
#include "dbfile.h"
#include "embedded.h"
#include "sql_pg.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define AM_MG_SAMPLE_DEFAULT 20

static void am_mg_usage(FILE *out)
{
    fputs("usage: adaptmon migrate --from FILE.db [--from FILE2.db …] --to postgresql://…\n"
          "                        [--dry-run] [--sample N]\n"
          "\n"
          "Copies adaptmon's SQLite database FILE.db (or the files of several shards,\n"
          "one --from each) into a PostgreSQL database, in one transaction: the schema\n"
          "when the target has none, every table (session ids, seqs and incarnations\n"
          "kept), then checks of the row counts, of every session's version and a\n"
          "replay of a sample of sessions against the copied totals. Any failure rolls\n"
          "everything back. Each file is read from one read snapshot: a server may keep\n"
          "running on it, but what it writes after the start is not copied.\n"
          "\n"
          "  --from FILE   an adaptmon database at this binary's schema version (open an\n"
          "                older one once with `adaptmon serve --db FILE` to upgrade it)\n"
          "  --to URL      postgresql://user@host:port/db or a libpq string 'host=… dbname=…'\n"
          "  --dry-run     do and check everything, then roll back: nothing is written\n"
          "  --sample N    sessions to replay (default 20, 0 = none)\n"
          "\n"
          "Refused (exit 2, nothing written): a file of another schema version, two files\n"
          "with the same session id, sessions the target holds already, a background\n"
          "vocabulary that differs from the target's of the same name. See docs/migrate.md.\n",
          out);
}

/* ---- SQLite sources ----------------------------------------------------------- */

/* One integer from sql (no parameters) on db into *v. */
static int am_mg_lite_int(sqlite3 *db, const char *path, const char *sql, int64_t *v, am_buf *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        int rc = am_mg_lite_fail(db, path, "reading it failed", err);
        sqlite3_finalize(s);
        return rc;
    }
    *v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return AM_OK;
}

/* The highest NNN of the embedded files whose path (after prefix) is
 * NNN_*.sql: the schema version this binary writes. */
static int64_t am_mg_known_version(const char *prefix)
{
    size_t n, plen = strlen(prefix);
    const am_embedded_file *f = am_embedded_files(&n);
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = f[i].path;
        if (strncmp(p, prefix, plen) != 0 || strchr(p + plen, '/'))
            continue;
        char *end;
        long long x = strtoll(p + plen, &end, 10);
        if (end != p + plen && *end == '_' && x > v)
            v = x;
    }
    return v;
}

/* Opens source s read-only and starts its read snapshot; refuses
 * (AM_ERR_INVALID) a file that is missing, no SQLite database, not an
 * adaptmon database or of another schema version. */
static int am_mg_src_open(am_mg_src *s, int64_t known, am_buf *err)
{
    struct stat sb;
    if (stat(s->path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        am_buf_printf(err, "%s: no such database file", s->path);
        return AM_ERR_INVALID;
    }
    if (am_dbfile_check_kind(s->path, err) != AM_OK)
        return AM_ERR_INVALID;
    if (sb.st_size == 0) {
        am_buf_printf(err, "%s: the file is empty, not an adaptmon database", s->path);
        return AM_ERR_INVALID;
    }
    if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "cannot open it", err);
    sqlite3_busy_timeout(s->db, 5000);
    int64_t has = 0;
    if (sqlite3_exec(s->db, AM_MGL_BEGIN, NULL, NULL, NULL) != SQLITE_OK)
        return am_mg_lite_fail(s->db, s->path, "cannot start a read transaction", err);
    int rc = am_mg_lite_int(s->db, s->path, AM_MGL_HAS_MIGRATIONS, &has, err);
    if (rc == AM_OK && !has) {
        am_buf_printf(err, "%s: not an adaptmon database (no schema_migrations table)", s->path);
        return AM_ERR_INVALID;
    }
    if (rc == AM_OK)
        rc = am_mg_lite_int(s->db, s->path, AM_MGL_VERSION, &s->version, err);
    if (rc == AM_OK && s->version < known) {
        am_buf_printf(err,
                      "%s has schema version %lld, this adaptmon writes %lld: start "
                      "`adaptmon serve --db %s` once (it upgrades the file), stop it, then "
                      "migrate",
                      s->path, (long long)s->version, (long long)known, s->path);
        return AM_ERR_INVALID;
    }
    if (rc == AM_OK && s->version > known) {
        am_buf_printf(err,
                      "%s has schema version %lld, newer than this adaptmon (%lld): use the "
                      "adaptmon that wrote it",
                      s->path, (long long)s->version, (long long)known);
        return AM_ERR_INVALID;
    }
    if (rc == AM_OK)
        rc = am_mg_lite_int(s->db, s->path, AM_MGL_MAX_SID, &s->max_sid, err);
    if (rc == AM_OK)
        rc = am_mg_lite_int(s->db, s->path, AM_MGL_MAX_VID, &s->max_vid, err);
    return rc;
}

/* ---- tables --------------------------------------------------------------------- */

static void am_mg_tables_free(am_mg *m)
{
    for (size_t i = 0; i < m->ntables; i++) {
        for (size_t k = 0; k < m->tables[i].ncols; k++)
            free(m->tables[i].cols[k]);
        free(m->tables[i].cols);
        free(m->tables[i].name);
    }
    free(m->tables);
    m->tables = NULL;
    m->ntables = 0;
}

/* The kind of table t (columns loaded); -1 for a table migrate does not
 * know how to copy. */
static int am_mg_kind_of(am_mg_table *t)
{
    int sid = -1, vid = -1;
    for (size_t k = 0; k < t->ncols; k++) {
        if (!strcmp(t->cols[k], "sid"))
            sid = (int)k;
        if (!strcmp(t->cols[k], "vid"))
            vid = (int)k;
    }
    if (!strcmp(t->name, "counters"))
        return (int)AM_MG_COUNTERS;
    if (!strcmp(t->name, "vocabularies") && vid >= 0) {
        t->key = vid;
        return (int)AM_MG_VOCABS;
    }
    if (!strcmp(t->name, "vocabulary_words") && vid >= 0) {
        t->key = vid;
        return (int)AM_MG_VOCAB_WORDS;
    }
    if (sid < 0)
        return -1;
    t->key = sid;
    return !strcmp(t->name, "sessions") ? (int)AM_MG_SESSIONS : (int)AM_MG_PER_SESSION;
}

/* Copy order: parents before the tables whose foreign keys name them. */
static int am_mg_table_cmp(const void *a, const void *b)
{
    const am_mg_table *x = a, *y = b;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    return strcmp(x->name, y->name);
}

/* The tables of the first source (every source has the same schema
 * version, so the same tables) with their columns, checked against the
 * target's: the same columns must exist there. */
static int am_mg_tables_load(am_mg *m, am_buf *err)
{
    sqlite3 *db = m->src[0].db;
    const char *path = m->src[0].path;
    sqlite3_stmt *s = NULL, *c = NULL;
    if (sqlite3_prepare_v2(db, AM_MGL_TABLES, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, AM_MGL_COLUMNS, -1, &c, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return am_mg_lite_fail(db, path, "reading its tables failed", err);
    }
    int rc = AM_OK, step;
    while (rc == AM_OK && (step = sqlite3_step(s)) == SQLITE_ROW) {
        m->tables = am_xrealloc(m->tables, (m->ntables + 1) * sizeof *m->tables);
        am_mg_table *t = &m->tables[m->ntables++];
        memset(t, 0, sizeof *t);
        t->key = -1;
        t->name = am_xstrdup((const char *)sqlite3_column_text(s, 0));
        sqlite3_reset(c);
        sqlite3_bind_text(c, 1, t->name, -1, SQLITE_STATIC);
        while (sqlite3_step(c) == SQLITE_ROW) {
            t->cols = am_xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
            t->cols[t->ncols++] = am_xstrdup((const char *)sqlite3_column_text(c, 0));
        }
        int kind = am_mg_kind_of(t);
        if (kind < 0) {
            am_buf_printf(err, "%s: table %s has no sid column: this adaptmon cannot copy it", path,
                          t->name);
            rc = AM_ERR_INTERNAL;
        }
        t->kind = (am_mg_kind)kind;
    }
    sqlite3_finalize(c);
    sqlite3_finalize(s);
    if (rc != AM_OK)
        return rc;
    qsort(m->tables, m->ntables, sizeof *m->tables, am_mg_table_cmp);
    /* the target's columns: the same set (PostgreSQL may order them otherwise) */
    for (size_t i = 0; i < m->ntables && rc == AM_OK; i++) {
        am_mg_table *t = &m->tables[i];
        PGresult *r = NULL;
        const char *p[1] = {t->name};
        rc = am_mg_pq(m, AM_MGP_COLUMNS, 1, p, &r, "reading the target's columns", err);
        if (rc != AM_OK)
            break;
        int same = PQntuples(r) == (int)t->ncols;
        for (size_t k = 0; k < t->ncols && same; k++) {
            int found = 0;
            for (int j = 0; j < PQntuples(r) && !found; j++)
                found = !strcmp(PQgetvalue(r, j, 0), t->cols[k]);
            same = found;
        }
        PQclear(r);
        if (!same) {
            am_buf_printf(err,
                          "table %s has other columns in the target than in %s: the target's "
                          "schema is not the one this adaptmon writes",
                          t->name, path);
            rc = AM_ERR_INVALID;
        }
    }
    return rc;
}

/* ---- the target --------------------------------------------------------------- */

/* Connects to url; a string libpq cannot parse is a usage error
 * (AM_ERR_INVALID), a server that cannot be reached AM_ERR_IO. */
static int am_mg_connect(am_mg *m, const char *url, am_buf *err)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &perr);
    if (!opts) {
        am_buf_printf(err, "--to: not a PostgreSQL connection string: %s",
                      perr ? perr : "out of memory");
        PQfreemem(perr);
        while (err->len && err->data[err->len - 1] == '\n')
            err->data[--err->len] = '\0';
        return AM_ERR_INVALID;
    }
    PQconninfoFree(opts);
    m->pg = PQconnectdb(url);
    if (PQstatus(m->pg) != CONNECTION_OK) {
        am_buf_printf(err, "cannot connect to the target: %s", PQerrorMessage(m->pg));
        while (err->len && err->data[err->len - 1] == '\n')
            err->data[--err->len] = '\0';
        return AM_ERR_IO;
    }
    return am_mg_pq(m, AM_MGP_SETUP, 0, NULL, NULL, "setting up the connection", err);
}

/* Applies the embedded schema/pg/ files above the target's recorded
 * version, as the server's runner does (inside the open transaction).
 * *created set when the target had no schema. A target newer or older than
 * this binary is refused (AM_ERR_INVALID). */
static int am_mg_schema(am_mg *m, int64_t known, int *created, am_buf *err)
{
    int64_t cur = 0;
    int rc = am_mg_pq(m, AM_PG_SQL_MIGRATIONS_TABLE, 0, NULL, NULL,
                      "creating schema_migrations in the target", err);
    if (rc == AM_OK)
        rc = am_mg_pq_int(m, AM_MGP_MIG_MAX, 0, NULL, &cur, "reading the target's version", err);
    if (rc != AM_OK)
        return rc;
    *created = cur == 0;
    if (cur > known) {
        am_buf_printf(err,
                      "the target has schema version %lld, newer than this adaptmon (%lld): "
                      "use the adaptmon that wrote it",
                      (long long)cur, (long long)known);
        return AM_ERR_INVALID;
    }
    if (cur > 0 && cur < known) {
        am_buf_printf(err,
                      "the target has schema version %lld, this adaptmon writes %lld: start "
                      "`adaptmon serve` on it once (it upgrades it), then migrate",
                      (long long)cur, (long long)known);
        return AM_ERR_INVALID;
    }
    size_t n;
    const am_embedded_file *f = am_embedded_files(&n);
    static const char prefix[] = "schema/pg/";
    for (size_t i = 0; i < n && rc == AM_OK && cur < known; i++) {
        const char *p = f[i].path;
        if (strncmp(p, prefix, sizeof prefix - 1) != 0)
            continue;
        long long v = strtoll(p + sizeof prefix - 1, NULL, 10);
        if (v <= cur)
            continue;
        PGresult *r = PQexec(m->pg, (const char *)f[i].data); /* several statements */
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            am_buf_printf(err, "creating the schema (%s) failed: %s", p, PQresultErrorMessage(r));
            rc = AM_ERR_IO;
        }
        PQclear(r);
        char ver[24], at[24];
        snprintf(ver, sizeof ver, "%lld", v);
        snprintf(at, sizeof at, "%lld", (long long)am_now_ms());
        const char *params[3] = {ver, p, at}; /* the name as the runner records it */
        if (rc == AM_OK)
            rc = am_mg_pq(m, AM_MGP_MIG_INSERT, 3, params, NULL, "recording the schema", err);
    }
    return rc;
}

/* ---- the command ---------------------------------------------------------------- */

/* Parses argv into m and *url. Returns 0, or the exit status of a usage
 * error (message printed) or of --help (0 with *done). */
static int am_mg_args(int argc, char **argv, am_mg *m, const char **url, int *done)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            am_mg_usage(stdout);
            *done = 1;
            return 0;
        } else if (!strcmp(a, "--dry-run")) {
            m->dry_run = 1;
        } else if ((!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--sample")) &&
                   i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(a, "--from")) {
                m->src = am_xrealloc(m->src, (m->nsrc + 1) * sizeof *m->src);
                memset(&m->src[m->nsrc], 0, sizeof *m->src);
                m->src[m->nsrc++].path = v;
            } else if (!strcmp(a, "--to")) {
                *url = v;
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                if (!*v || *end || n < 0 || n > 100000) {
                    fprintf(stderr, "adaptmon migrate: --sample: a number from 0 to 100000\n");
                    return 2;
                }
                m->sample = n;
            }
        } else {
            fprintf(stderr, "adaptmon migrate: unknown or incomplete option '%s'\n", a);
            am_mg_usage(stderr);
            return 2;
        }
    }
    if (!m->nsrc || !*url) {
        fprintf(stderr, "adaptmon migrate: --from and --to are required\n");
        am_mg_usage(stderr);
        return 2;
    }
    for (size_t i = 0; i < m->nsrc; i++) /* by file identity: "./a.db", links, … */
        for (size_t j = i + 1; j < m->nsrc; j++)
            if (am_dbfile_same(m->src[i].path, m->src[j].path)) {
                fprintf(stderr, "adaptmon migrate: %s and %s are the same file\n", m->src[i].path,
                        m->src[j].path);
                return 2;
            }
    return 0;
}

/* qsort order of the "id\0<source index>" strings: by id. */
static int am_mg_id_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Two sources with one session id are refused: each id must live on one
 * shard (AM_ERR_CONFLICT, err names the first ids). */
static int am_mg_shard_ids(am_mg *m, am_buf *err)
{
    if (m->nsrc < 2)
        return AM_OK;
    size_t cap = 1024, n = 0;
    char **ids = am_xmalloc(cap * sizeof *ids);
    int rc = AM_OK;
    /* the ids with their source, then sorted: a clash is two neighbours */
    for (size_t i = 0; i < m->nsrc && rc == AM_OK; i++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(m->src[i].db, AM_MGL_SESSION_IDS, -1, &s, NULL) != SQLITE_OK) {
            rc = am_mg_lite_fail(m->src[i].db, m->src[i].path, "reading its sessions failed", err);
            break;
        }
        while (sqlite3_step(s) == SQLITE_ROW) {
            if (n == cap) {
                cap *= 2;
                ids = am_xrealloc(ids, cap * sizeof *ids);
            }
            /* "id\0" + source index, so that sorting keeps the pair */
            const char *id = (const char *)sqlite3_column_text(s, 0);
            size_t len = strlen(id);
            ids[n] = am_xmalloc(len + 1 + sizeof(size_t));
            memcpy(ids[n], id, len + 1);
            memcpy(ids[n] + len + 1, &i, sizeof i);
            n++;
        }
        sqlite3_finalize(s);
    }
    qsort(ids, n, sizeof *ids, am_mg_id_cmp);
    size_t clashes = 0;
    for (size_t i = 1; i < n && rc == AM_OK; i++) {
        if (strcmp(ids[i - 1], ids[i]) != 0)
            continue;
        size_t a, b;
        memcpy(&a, ids[i - 1] + strlen(ids[i - 1]) + 1, sizeof a);
        memcpy(&b, ids[i] + strlen(ids[i]) + 1, sizeof b);
        if (clashes++ == 0)
            am_buf_printf(err, "session '%s' is in both %s and %s", ids[i], m->src[a].path,
                          m->src[b].path);
    }
    if (clashes) {
        am_buf_printf(err,
                      " (%zu ids in more than one file): shards of one fleet never share an "
                      "id; migrate such files into separate databases",
                      clashes);
        rc = AM_ERR_CONFLICT;
    }
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    return rc;
}

/* The steps after the connection, inside one transaction. Returns AM_OK
 * (checked; committed unless a dry run), or an error (rolled back). */
static int am_mg_run(am_mg *m, int64_t known, am_buf *err)
{
    int created = 0;
    int rc = am_mg_pq(m, AM_MGP_BEGIN, 0, NULL, NULL, "starting the transaction", err);
    if (rc == AM_OK)
        rc = am_mg_pq(m, AM_MGP_LOCK, 0, NULL, NULL, "locking the target", err);
    if (rc == AM_OK)
        rc = am_mg_schema(m, known, &created, err);
    if (rc == AM_OK)
        am_mg_say(m, "target: database %s on %s:%s, schema version %lld %s", PQdb(m->pg),
                  PQhost(m->pg), PQport(m->pg), (long long)known, created ? "created" : "found");
    if (rc == AM_OK)
        rc = am_mg_tables_load(m, err);
    if (rc == AM_OK)
        rc = am_mg_ids_free(m, err);
    for (size_t i = 0; i < m->nsrc && rc == AM_OK; i++)
        rc = am_mg_copy(m, &m->src[i], err);
    if (rc == AM_OK)
        rc = am_mg_sequences(m, err);
    for (size_t i = 0; i < m->nsrc && rc == AM_OK; i++)
        rc = am_mg_check_src(m, &m->src[i], err);
    size_t replayed = 0;
    if (rc == AM_OK && m->sample > 0)
        rc = am_mg_check_replay(m, &replayed, err);
    if (rc == AM_OK && m->sample > 0)
        am_mg_say(m, "checked: a replay of %zu sampled sessions gives the copied totals", replayed);
    if (rc == AM_OK && !m->dry_run) {
        PGresult *r = PQexec(m->pg, "COMMIT");
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            m->ambiguous = PQstatus(m->pg) != CONNECTION_OK;
            am_buf_printf(err,
                          "COMMIT failed: %s (if the connection broke, the outcome is unknown: "
                          "look at the target before running again)",
                          PQresultErrorMessage(r));
            rc = AM_ERR_IO;
        }
        PQclear(r);
        return rc;
    }
    PQclear(PQexec(m->pg, "ROLLBACK"));
    return rc;
}

/* The summary line of the rows copied (stderr). */
static void am_mg_summary(const am_mg *m)
{
    am_buf b;
    am_buf_init(&b);
    for (size_t t = 0; t < m->ntables; t++) {
        int64_t n = 0;
        for (size_t i = 0; i < m->nsrc; i++)
            n += m->src[i].rows[t];
        am_buf_printf(&b, "%s%s %lld", t ? ", " : "", m->tables[t].name, (long long)n);
    }
    am_mg_say(m, "%s %zu file%s in %.1f s: %s",
              m->dry_run ? "dry run passed (rolled back):" : "migrated", m->nsrc,
              m->nsrc == 1 ? "" : "s", (double)(am_mono_ns() - m->t0) / 1e9, am_buf_str(&b));
    am_buf_cleanup(&b);
}

int am_cli_migrate(int argc, char **argv)
{
    am_mg m;
    memset(&m, 0, sizeof m);
    m.sample = AM_MG_SAMPLE_DEFAULT;
    m.t0 = am_mono_ns();
    const char *url = NULL;
    int done = 0;
    int status = am_mg_args(argc, argv, &m, &url, &done);
    if (status || done) {
        free(m.src);
        return status;
    }
    am_buf err;
    am_buf_init(&err);
    int64_t known = am_mg_known_version("schema/");
    int rc = AM_OK;
    if (am_mg_known_version("schema/pg/") != known) {
        am_buf_printf(&err, "this adaptmon's PostgreSQL schema is not at version %lld",
                      (long long)known);
        rc = AM_ERR_INTERNAL;
    }
    for (size_t i = 0; i < m.nsrc && rc == AM_OK; i++) {
        rc = am_mg_src_open(&m.src[i], known, &err);
        if (rc == AM_OK)
            am_mg_say(&m, "%s: schema version %lld, read snapshot taken", m.src[i].path,
                      (long long)m.src[i].version);
    }
    if (rc == AM_OK)
        rc = am_mg_shard_ids(&m, &err);
    if (rc == AM_OK)
        rc = am_mg_connect(&m, url, &err);
    if (rc == AM_OK)
        rc = am_mg_run(&m, known, &err);
    if (rc == AM_OK) {
        am_mg_summary(&m);
        status = 0;
    } else {
        am_mg_say(&m, "%s", am_buf_str(&err));
        int refused = rc == AM_ERR_INVALID || rc == AM_ERR_CONFLICT;
        if (!m.ambiguous)
            am_mg_say(&m, "nothing was written to the target");
        status = refused ? AM_MG_REFUSED : AM_MG_FAILED;
    }
    PQfinish(m.pg);
    for (size_t i = 0; i < m.nsrc; i++) {
        sqlite3_close(m.src[i].db); /* ends its read transaction */
        free(m.src[i].rows);
        free(m.src[i].vmap);
    }
    free(m.src);
    am_mg_tables_free(&m);
    am_buf_cleanup(&err);
    return status;
}
