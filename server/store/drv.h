/*
 * store/drv.h — the driver seam of the store: what the domain files
 * (sessions.c, segments.c, totals.c, vocab.c, glossary.c, checkpoints.c)
 * may ask of the database besides the helpers of store_int.h. They name no
 * sqlite3_* function or type: a row is an am_row read through row_int,
 * row_text and row_str, the rows a statement touched are am_changes(conn), a stepped
 * statement's row is am_q_row(q),
 * a row's values are bound into another statement with am_q_bind_row, and
 * the work a statement did is am_q_steps. Today's SQLite code (conn.c,
 * tx.c, open.c, walbuf.c) is one driver; the PostgreSQL one (drv_pg.c,
 * statement texts in sql_pg.h) serves the same functions over libpq, so
 * the domain files and the statement names (sql.h, sql_pg.h) stay shared.
 *
 * Why functions and not a table of function pointers: one binary serves
 * both backends (serve --db FILE or --db postgresql://…), and each of
 * these functions branches once on its row's or connection's kind (conn.c
 * calls drv_pg.c for a PostgreSQL one). The SQLite path stays a direct
 * call plus one predictable branch, with no indirect call, and the
 * driver-specific state (prepared statements, a kept result) lives in the
 * same am_conn and am_q.
 */
#ifndef AM_STORE_DRV_H
#define AM_STORE_DRV_H

#include <stdint.h>

struct am_conn;
struct am_q;
struct am_store;

/* A result row, borrowed from its statement until the statement steps
 * again or is closed (the SQLite driver's row is its sqlite3_stmt). */
typedef struct am_row am_row;

/* Column i of row as an integer (0 for NULL). */
int64_t row_int(am_row *row, int i);
/* Column i as text, borrowed like the row; NULL for NULL. */
const char *row_text(am_row *row, int i);
/* Column i as a malloc'd copy (caller frees); NULL for NULL. */
char *row_str(am_row *row, int i);
/* The number of columns of row. */
int row_count(am_row *row);

/* Rows inserted, updated or deleted by the last statement run on conn. */
int64_t am_changes(struct am_conn *conn);

/* The current row of q after am_q_step returned 1 (borrowed as an am_row). */
am_row *am_q_row(struct am_q *q);
/* Binds every column of row, in order, to q's parameters first, first+1,
 * … (1-based), keeping each value's type. AM_OK or an am_err (recorded). */
int am_q_bind_row(struct am_store *st, struct am_q *q, int first, am_row *row);
/* The work q did since the last call (SQLite: virtual machine steps),
 * and starts counting again. */
int64_t am_q_steps(struct am_q *q);

#endif
