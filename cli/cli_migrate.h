/*
 * cli_migrate.h — the parts of `adaptmon migrate` (cli_migrate.c: the
 * command, the sources and the target's schema; cli_migrate_copy.c: the
 * copy; cli_migrate_check.c: the checks and the sample replay;
 * cli_migrate_db.c: the helpers all of them use), sharing one am_mg state.
 * Internal to those files.
 */
#ifndef AM_CLI_MIGRATE_H
#define AM_CLI_MIGRATE_H

#include "am.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* How a table's rows are copied (cli_migrate.c am_mg_tables_load). */
typedef enum am_mg_kind {
    AM_MG_SESSIONS, /* sessions: visible rows; sid renumbered */
    AM_MG_PER_SESSION, /* a table with a sid column: rows of visible sessions */
    AM_MG_VOCABS, /* vocabularies: visible rows; vid renumbered, equal ones merged */
    AM_MG_VOCAB_WORDS, /* vocabulary_words: rows of the copied vocabularies */
    AM_MG_COUNTERS /* counters: the highest value of every source and the target */
} am_mg_kind;

typedef struct am_mg_table {
    char *name; /* owned */
    am_mg_kind kind;
    char **cols; /* owned, ncols names in the source's order */
    size_t ncols;
    int key; /* index of the sid (or vid) column, -1 for none */
} am_mg_table;

/* A background vocabulary of a source: its vid in the target, or merged
 * into an equal one the target holds (its words then not copied). */
typedef struct am_mg_vmap {
    int64_t src, dst;
    int merged;
} am_mg_vmap;

/* One --from file. */
typedef struct am_mg_src {
    const char *path; /* borrowed (argv) */
    sqlite3 *db; /* read-only, one read transaction open from am_mg_src_open to the end */
    int64_t version; /* its schema version */
    int64_t max_sid, max_vid; /* highest visible ones */
    int64_t sid_off, vid_off; /* added to its sids and new vids in the target */
    int64_t *rows; /* rows copied per table (m->tables order); owned */
    int64_t merged_vocabs; /* vocabularies equal to one the target held */
    am_mg_vmap *vmap; /* owned, nvmap entries sorted by src */
    size_t nvmap;
} am_mg_src;

typedef struct am_mg {
    am_mg_src *src; /* owned array of nsrc */
    size_t nsrc;
    am_mg_table *tables; /* in copy order (parents first); owned */
    size_t ntables;
    PGconn *pg; /* owned; a transaction is open from the schema step to the end */
    int dry_run;
    int ambiguous; /* the connection broke during COMMIT: the outcome is unknown */
    long sample; /* sessions to replay, 0 = none */
    int64_t t0; /* monotonic ns at the start */
} am_mg;

/* Exit status of a refusal (bad input, nothing written) and of a failure
 * (the copy or a check failed; rolled back). */
#define AM_MG_REFUSED 2
#define AM_MG_FAILED 1

/* Progress and messages on stderr, prefixed "adaptmon migrate: ". */
void am_mg_say(const am_mg *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- PostgreSQL helpers (cli_migrate_db.c) ------------------------------------ */

/* Runs sql with nparams text parameters (NULL entries are SQL NULL);
 * *out gets the result (caller PQclear) when out is not NULL. Returns AM_OK
 * for a command or tuples result, else AM_ERR_IO with the server's message
 * in err after what. */
int am_mg_pq(am_mg *m, const char *sql, int nparams, const char *const *params, PGresult **out,
             const char *what, am_buf *err);
/* am_mg_pq of a query returning one bigint into *v. */
int am_mg_pq_int(am_mg *m, const char *sql, int nparams, const char *const *params, int64_t *v,
                 const char *what, am_buf *err);
/* The first SQLite error of db after what, into err. Returns AM_ERR_IO. */
int am_mg_lite_fail(sqlite3 *db, const char *path, const char *what, am_buf *err);

/* ---- the copy (cli_migrate_copy.c) ----------------------------------------- */

/* Refuses (AM_ERR_CONFLICT, err says which) a target holding sessions with
 * the ids of the sources' sessions. */
int am_mg_ids_free(am_mg *m, am_buf *err);
/* Copies source s into the target's open transaction: every table in
 * order, the counters, its vocabularies merged. AM_ERR_CONFLICT for a
 * vocabulary that differs from the target's of the same name; else
 * AM_ERR_IO with err filled on a failure. */
int am_mg_copy(am_mg *m, am_mg_src *s, am_buf *err);
/* The WHERE clause of table t's visible rows (static text). */
const char *am_mg_filter(const am_mg_table *t);
/* After every source: the identity columns and the incarnation counter
 * (and sequence) set above every copied row. */
int am_mg_sequences(am_mg *m, am_buf *err);

/* ---- the checks (cli_migrate_check.c) --------------------------------------- */

/* Row counts per table and per-session state of source s against the
 * target's (inside the transaction). AM_ERR_INTERNAL with err on a
 * difference. */
int am_mg_check_src(am_mg *m, am_mg_src *s, am_buf *err);
/* Replays up to m->sample sessions (chosen by a hash of their ids) from
 * the target's rows in a scratch store and compares the totals.
 * *replayed receives the number replayed. */
int am_mg_check_replay(am_mg *m, size_t *replayed, am_buf *err);

#endif
