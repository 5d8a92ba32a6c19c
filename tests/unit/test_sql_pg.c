/* test_sql_pg.c — the PostgreSQL statement table (server/store/sql_pg.h)
 * against SQLite's (sql.h): the same names in the same order, the same
 * parameters (?N and $N, each of 1..n used, PostgreSQL cannot type an
 * unused one), and no SQLite dialect left in the PostgreSQL texts. A
 * statement appended to sql.h without its PostgreSQL text fails here. */
#include "testutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql.h"
#include "sql_pg.h"

#define NAME(name, sql) #name,
#define TEXT(name, sql) sql,
static const char *const lite_name[] = {AM_STMTS(NAME)};
static const char *const lite_sql[] = {AM_STMTS(TEXT)};
static const char *const pg_name[] = {AM_PG_STMTS(NAME)};
static const char *const pg_sql[] = {AM_PG_STMTS(TEXT)};
#undef NAME
#undef TEXT

#define NLITE (sizeof lite_name / sizeof lite_name[0])
#define NPG (sizeof pg_name / sizeof pg_name[0])
#define MAXP 32

/* The parameters of sql written with mark ('?' or '$'): sets used[k] for
 * each k it names (1..MAXP-1) and returns the highest; -1 for a mark
 * without a number or above the range. Quoted text is skipped. */
static int params(const char *sql, char mark, int used[MAXP])
{
    int hi = 0;
    memset(used, 0, MAXP * sizeof used[0]);
    for (const char *p = sql; *p; p++) {
        if (*p == '\'') {
            for (p++; *p && *p != '\''; p++)
                ;
            if (!*p)
                break;
            continue;
        }
        if (*p != mark)
            continue;
        if (!isdigit((unsigned char)p[1]))
            return -1;
        long k = strtol(p + 1, NULL, 10);
        if (k < 1 || k >= MAXP)
            return -1;
        used[k] = 1;
        hi = (int)k > hi ? (int)k : hi;
    }
    return hi;
}

static void test_same_names_in_order(void **state)
{
    (void)state;
    size_t n = NPG < NLITE ? NPG : NLITE;
    for (size_t i = 0; i < n; i++)
        if (strcmp(lite_name[i], pg_name[i]) != 0)
            fail_msg("statement %zu: sql.h %s, sql_pg.h %s", i, lite_name[i], pg_name[i]);
    if (NPG != NLITE)
        fail_msg("%zu statements in sql.h, %zu in sql_pg.h (first one missing: %s)", NLITE, NPG,
                 NLITE > NPG ? lite_name[n] : pg_name[n]);
}

static void test_same_parameters(void **state)
{
    (void)state;
    size_t n = NPG < NLITE ? NPG : NLITE;
    for (size_t i = 0; i < n; i++) {
        int ul[MAXP], up[MAXP];
        int hl = params(lite_sql[i], '?', ul);
        int hp = params(pg_sql[i], '$', up);
        if (hl < 0 || hp < 0)
            fail_msg("%s: a parameter without a number", pg_name[i]);
        if (hl != hp)
            fail_msg("%s: %d parameters in sql.h, %d in sql_pg.h", pg_name[i], hl, hp);
        for (int k = 1; k <= hp; k++)
            if (!up[k] || !ul[k])
                fail_msg("%s: parameter %d unused (sql.h %d, sql_pg.h %d)", pg_name[i], k, ul[k],
                         up[k]);
        int q[MAXP];
        if (params(pg_sql[i], '?', q) != 0)
            fail_msg("%s: a SQLite ?N parameter in sql_pg.h", pg_name[i]);
    }
}

/* Lower-case copy of s (caller frees). */
static char *lower(const char *s)
{
    char *t = strdup(s);
    assert_non_null(t);
    for (char *p = t; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return t;
}

static void test_no_sqlite_dialect(void **state)
{
    (void)state;
    static const char *const sqlite_only[] = {
        "pragma", "rowid", "insert or", "json_each", "immediate", " max(segments", "min(first_seq"};
    for (size_t i = 0; i < NPG; i++) {
        char *t = lower(pg_sql[i]);
        for (size_t j = 0; j < sizeof sqlite_only / sizeof sqlite_only[0]; j++)
            if (strstr(t, sqlite_only[j]))
                fail_msg("%s: SQLite's \"%s\" in sql_pg.h", pg_name[i], sqlite_only[j]);
        free(t);
    }
}

/* The check itself: a table with a renamed statement or a parameter more
 * is seen (params counts what the tests compare). */
static void test_params_counts(void **state)
{
    (void)state;
    int u[MAXP];
    assert_int_equal(params("SELECT ?2, ?1 WHERE x = '?9'", '?', u), 2);
    assert_int_equal(params("SELECT $3", '$', u), 3);
    assert_int_equal(u[1], 0);
    assert_int_equal(params("SELECT ?", '?', u), -1);
    assert_int_equal(params("SELECT 1", '$', u), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_names_in_order),
        cmocka_unit_test(test_same_parameters),
        cmocka_unit_test(test_no_sqlite_dialect),
        cmocka_unit_test(test_params_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
