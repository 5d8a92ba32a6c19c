/* test_pg_ops.c — what adaptmon shows of a PostgreSQL --db value and of a
 * cluster's standby rule (issue 28): the password never shown, whatever
 * form the string takes (server/store/pg_redact.c), and the standbys a
 * synchronous_standby_names value expects (server/store/pg_sync.c). The
 * running probe is tested against real servers by
 * tests/store/test_pg_ops.py. */
#include "testutil.h"

#include <string.h>

#include "store.h"

static void shown_is(const char *db, const char *want)
{
    am_buf b;
    am_buf_init(&b);
    am_store_db_shown(db, &b);
    assert_string_equal(am_buf_str(&b), want);
    am_buf_cleanup(&b);
}

static void test_uri_password_hidden(void **state)
{
    (void)state;
    shown_is("postgresql://am:s3cret@db1/adaptmon", "postgresql://am:***@db1/adaptmon");
    shown_is("postgres://am:s3cret@db1:5432,db2:5432/x?target_session_attrs=read-write",
             "postgres://am:***@db1:5432,db2:5432/x?target_session_attrs=read-write");
    /* in the query, and sslpassword too; other parameters kept */
    shown_is("postgresql://db1/x?user=am&password=s3cret&sslpassword=k3y&application_name=a",
             "postgresql://db1/x?user=am&password=***&sslpassword=***&application_name=a");
    /* an unencoded '@' in the password: hidden whole */
    shown_is("postgresql://am:p@ss@db1/x", "postgresql://am:***@db1/x");
    /* no password: unchanged */
    shown_is("postgresql://am@db1/x", "postgresql://am@db1/x");
    shown_is("postgresql://db1", "postgresql://db1");
}

static void test_keyword_password_hidden(void **state)
{
    (void)state;
    shown_is("host=db1 user=am password=s3cret dbname=x", "host=db1 user=am password=*** dbname=x");
    shown_is("host=db1 password = 'it\\'s a secret' dbname=x", "host=db1 password = *** dbname=x");
    shown_is("host=a,b port=5432,5432 sslpassword=k3y", "host=a,b port=5432,5432 sslpassword=***");
    shown_is("host=db1 password=esc\\ aped dbname=x", "host=db1 password=*** dbname=x");
    /* unreadable from a key without '=': the rest hidden */
    shown_is("host=db1 password s3cret", "host=db1 ***");
    /* an unclosed quote: the rest hidden */
    shown_is("host=db1 password='s3cret", "host=db1 ***");
    /* passfile names a file, not a secret */
    shown_is("host=db1 passfile=/etc/pgpass", "host=db1 passfile=/etc/pgpass");
}

static void test_sqlite_path_unchanged(void **state)
{
    (void)state;
    shown_is("./var/password=x.db", "./var/password=x.db");
    shown_is(":memory:", ":memory:");
}

static void scrub_is(const char *db, const char *msg, const char *want)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, msg);
    am_store_db_scrub(db, &b);
    assert_string_equal(am_buf_str(&b), want);
    am_buf_cleanup(&b);
}

static void test_scrub_messages(void **state)
{
    (void)state;
    scrub_is("postgresql://am:s3cret@db1/x", "invalid percent-encoded token: \"s3cret\"",
             "invalid percent-encoded token: \"***\"");
    scrub_is("host=db1 password='top secret'", "near top secret and 'top secret'",
             "near *** and ***");
    scrub_is("host=db1 password s3cret!", "missing \"=\" after \"s3cret!\"",
             "missing \"=\" after \"***\"");
    /* short values are left (they would garble the message) */
    scrub_is("host=db1 password=ab", "a bad host", "a bad host");
    /* SQLite: nothing to hide */
    scrub_is("./a.db", "cannot open ./a.db", "cannot open ./a.db");
}

static void expected_is(const char *ssn, const char *self, int n, const char *names)
{
    am_buf b;
    am_buf_init(&b);
    assert_int_equal(am_store_pg_ssn_expected(ssn, self, &b), n);
    assert_string_equal(am_buf_str(&b), names);
    am_buf_cleanup(&b);
}

static void test_ssn_expected(void **state)
{
    (void)state;
    expected_is("", NULL, 0, "");
    expected_is("  ", "n0", 0, "");
    /* pg_auto_failover's form */
    expected_is("ANY 1 (pgautofailover_standby_2, pgautofailover_standby_3)", "x", 2,
                "pgautofailover_standby_2,pgautofailover_standby_3");
    /* every node names all nodes, the primary itself too: itself left out */
    expected_is("ANY 1 (n0, n1, n2)", "n0", 2, "n1,n2");
    expected_is("first 1 (N0,n1)", "n0", 1, "n1");
    expected_is("2 (a, \"B c\", \"q\"\"x\")", NULL, 3, "a,B c,q\"x");
    /* the old form: a bare list, FIRST 1 */
    expected_is("s1, s2", NULL, 2, "s1,s2");
    expected_is("s1", "s1", 0, "");
    /* "*": as many as the rule waits for */
    expected_is("*", NULL, 1, "");
    expected_is("ANY 2 (*)", NULL, 2, "");
    expected_is("FIRST 1 (s1, *)", NULL, 1, "s1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uri_password_hidden),
        cmocka_unit_test(test_keyword_password_hidden),
        cmocka_unit_test(test_sqlite_path_unchanged),
        cmocka_unit_test(test_scrub_messages),
        cmocka_unit_test(test_ssn_expected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
