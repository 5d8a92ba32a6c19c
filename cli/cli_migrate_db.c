/*
 * cli_migrate_db.c — the helpers under the parts of `adaptmon migrate`
 * (cli_migrate.h): messages, PostgreSQL statements with their errors, SQLite
 * errors and the filter of the rows copied. The other cli_migrate*.c files
 * use these and nothing of each other's but what cli_migrate.c calls.
 */
#include "cli_migrate.h"
#include "cli_migrate_sql.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void am_mg_say(const am_mg *m, const char *fmt, ...)
{
    (void)m;
    va_list ap;
    va_start(ap, fmt);
    fputs("adaptmon migrate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- PostgreSQL helpers ----------------------------------------------------- */

int am_mg_pq(am_mg *m, const char *sql, int nparams, const char *const *params, PGresult **out,
             const char *what, am_buf *err)
{
    /* without parameters, PQexec: sql may hold several statements */
    PGresult *r = nparams ? PQexecParams(m->pg, sql, nparams, NULL, params, NULL, NULL, 0)
                          : PQexec(m->pg, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        const char *msg = PQresultErrorMessage(r);
        am_buf_printf(err, "%s: %s", what, msg && *msg ? msg : PQerrorMessage(m->pg));
        /* libpq's messages end with a newline */
        while (err->len && err->data[err->len - 1] == '\n')
            err->data[--err->len] = '\0';
        PQclear(r);
        return AM_ERR_IO;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return AM_OK;
}

int am_mg_pq_int(am_mg *m, const char *sql, int nparams, const char *const *params, int64_t *v,
                 const char *what, am_buf *err)
{
    PGresult *r = NULL;
    int rc = am_mg_pq(m, sql, nparams, params, &r, what, err);
    if (rc != AM_OK)
        return rc;
    if (PQntuples(r) < 1 || PQgetisnull(r, 0, 0)) {
        am_buf_printf(err, "%s: no value", what);
        rc = AM_ERR_IO;
    } else {
        *v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    }
    PQclear(r);
    return rc;
}

int am_mg_lite_fail(sqlite3 *db, const char *path, const char *what, am_buf *err)
{
    am_buf_printf(err, "%s: %s: %s", path, what, db ? sqlite3_errmsg(db) : "out of memory");
    return AM_ERR_IO;
}

const char *am_mg_filter(const am_mg_table *t)
{
    switch (t->kind) {
    case AM_MG_SESSIONS: return AM_MGL_WHERE_SESSIONS;
    case AM_MG_PER_SESSION: return AM_MGL_WHERE_PER_SESSION;
    case AM_MG_VOCABS: return AM_MGL_WHERE_VOCABS;
    case AM_MG_VOCAB_WORDS: return AM_MGL_WHERE_VOCAB_WORDS;
    case AM_MG_COUNTERS: break;
    }
    return "1";
}
