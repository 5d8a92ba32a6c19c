/*
 * store/errs.c — the statements' names and SQLite texts by id, and the
 * store's last error and logger: what both drivers (conn.c, drv_pg.c)
 * use, below them both.
 */
#include "store_int.h"

const char *const am_stmt_sql[AM_S__COUNT] = {
#define AM_STMT_SQL(name, sql) sql,
    AM_STMTS(AM_STMT_SQL)
#undef AM_STMT_SQL
};

const char *const am_stmt_name[AM_S__COUNT] = {
#define AM_STMT_NAME(name, sql) #name,
    AM_STMTS(AM_STMT_NAME)
#undef AM_STMT_NAME
};

void am_store_note(am_store *st, int code, const char *msg)
{
    if (st->parent) /* a rewrite's pinned view: its store keeps the error */
        st = st->parent;
    pthread_mutex_lock(&st->errmu);
    am_buf_reset(&st->errmsg);
    am_buf_appends(&st->errmsg, msg);
    am_store_log_fn fn = st->logfn;
    void *ctx = st->logctx;
    if (fn && (code == AM_ERR_IO || code == AM_ERR_FULL || code == AM_ERR_UNAVAILABLE))
        fn(ctx, msg);
    pthread_mutex_unlock(&st->errmu);
}

void am_store_last_error(am_store *st, am_buf *out)
{
    am_buf_reset(out);
    if (!st)
        return;
    pthread_mutex_lock(&st->errmu);
    am_buf_append(out, am_buf_str(&st->errmsg), st->errmsg.len);
    pthread_mutex_unlock(&st->errmu);
}

void am_store_set_logger(am_store *st, am_store_log_fn fn, void *ctx)
{
    pthread_mutex_lock(&st->errmu);
    st->logfn = fn;
    st->logctx = ctx;
    pthread_mutex_unlock(&st->errmu);
}
