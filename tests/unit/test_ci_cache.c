/* test_ci_cache.c — the ?ci= statistics kept between requests
 * (server/live/ci_cache.c) and the compact rows of sig.c's collector
 * they hold. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ci_cache.h"
#include "config.h"
#include "sig.h"

static am_scorer *make_scorer(void)
{
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "source_lang", "en", NULL), AM_OK);
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, NULL), AM_OK);
    return s;
}

/* One system's segment with R0 hits/total and TER edits/length. */
static void seg(const am_scorer *s, am_sys_seg *g, double hits, double total, double edits)
{
    memset(g, 0, sizeof *g);
    am_recall_totals_init(&g->recall, am_scorer_config(s)->k);
    g->recall.r[0].hits = (int64_t)hits;
    g->recall.r[0].total = (int64_t)total;
    g->ter_edits = edits;
    g->ter_ref_len = 10;
}

/* Counts past int32 (stored aside, not truncated) and fractional TER
 * edits (doubles) come back exactly: the scores on all segments are the
 * sums' ratios to the last bit. */
static void test_compact_rows_are_exact(void **state)
{
    (void)state;
    am_scorer *s = make_scorer();
    am_sig_collect *c = am_sig_collect_new(s, 1, 1, 0);
    am_sig_collect_session(c);
    am_sys_seg g;
    const double hits[] = {3e9, 7, 5e9 + 1, 2};
    const double total[] = {4e9, 9, 6e9, 3};
    const double edits[] = {1.25, 2.5, 0.125, 3};
    for (int i = 0; i < 4; i++) {
        seg(s, &g, hits[i], total[i], edits[i]);
        am_sig_collect_seg(c, &g, NULL);
    }
    assert_int_equal(am_sig_collect_nseg(c), 4);
    am_sig_opts o;
    am_sig_opts_init(&o);
    o.text_metrics = 0;
    o.n = 20;
    const char *names[] = {"a"};
    json_t *r = am_sig_run(c, &o, names, NULL);
    assert_non_null(r);
    json_t *row = json_array_get(json_object_get(r, "systems"), 0);
    double r0 = json_real_value(json_object_get(json_object_get(row, "R0"), "score"));
    double ter = json_real_value(json_object_get(json_object_get(row, "TER"), "score"));
    assert_true(r0 == (3e9 + 7 + (5e9 + 1) + 2) / (4e9 + 9 + 6e9 + 3));
    assert_true(ter == 100 * (1.25 + 2.5 + 0.125 + 3) / 40);
    json_decref(r);
    am_sig_collect_free(c);
    am_scorer_free(s);
}

static am_ci_entry *entry(const am_scorer *s, const char *id, int64_t inc, int nseg)
{
    const char *names[] = {"a", "b"};
    am_ci_entry *e = am_ci_entry_new(id, inc, "{}", names, 2, s);
    am_sys_seg g[2];
    for (int i = 0; i < nseg; i++) {
        seg(s, &g[0], 1, 2, 1);
        seg(s, &g[1], 2, 2, 0);
        am_sig_collect_seg(e->col, g, NULL);
    }
    e->last_seq = nseg;
    return e;
}

/* Take gives the entry put (once); an entry of the same id holding fewer
 * segments does not replace a fuller one, one of another incarnation
 * does; fits checks incarnation, options and systems. */
static void test_take_put_and_fits(void **state)
{
    (void)state;
    am_scorer *s = make_scorer();
    am_cicache *c = am_cicache_new((size_t)64 << 20, NULL);
    assert_null(am_cicache_take(c, "x"));
    am_cicache_put(c, entry(s, "x", 1, 10));
    am_cicache_put(c, entry(s, "x", 1, 5)); /* fewer: dropped */
    am_ci_entry *e = am_cicache_take(c, "x");
    assert_non_null(e);
    assert_int_equal(am_sig_collect_nseg(e->col), 10);
    assert_null(am_cicache_take(c, "x")); /* taken: gone */
    const char *names[] = {"a", "b"}, *other[] = {"a", "c"};
    assert_true(am_ci_entry_fits(e, 1, "{}", names, 2, s));
    assert_false(am_ci_entry_fits(e, 2, "{}", names, 2, s));
    assert_false(am_ci_entry_fits(e, 1, "{\"k\":2}", names, 2, s));
    assert_false(am_ci_entry_fits(e, 1, "{}", other, 2, s));
    assert_false(am_ci_entry_fits(e, 1, "{}", names, 1, s));
    am_cicache_put(c, e);
    am_cicache_put(c, entry(s, "x", 2, 3)); /* re-created session: replaces */
    e = am_cicache_take(c, "x");
    assert_int_equal(e->incarnation, 2);
    am_ci_entry_free(e);
    am_cicache_free(c);
    am_scorer_free(s);
}

/* The byte bound evicts the least recently used; an entry larger than
 * the bound is not kept; what is held is charged to the sessions' budget
 * and returned when taken or freed. */
static void test_bytes_bound_and_charge(void **state)
{
    (void)state;
    am_scorer *s = make_scorer();
    am_ci_entry *probe = entry(s, "p", 1, 2000);
    size_t one = am_sig_collect_bytes(probe->col);
    am_ci_entry_free(probe);
    am_store *st = NULL;
    am_buf err;
    am_buf_init(&err);
    assert_int_equal(am_store_open(":memory:", AM_DURABLE_NORMAL, &st, &err), AM_OK);
    am_buf_cleanup(&err);
    am_sessions *ss = am_sessions_new(st, 10, 0);
    am_sess_mem m0, m1;
    am_sessions_memory(ss, &m0);
    am_cicache *c = am_cicache_new(2 * one + one / 2, ss); /* room for two */
    am_cicache_put(c, entry(s, "a", 1, 2000));
    am_cicache_put(c, entry(s, "b", 1, 2000));
    size_t n, bytes;
    am_cicache_usage(c, &n, &bytes);
    assert_int_equal(n, 2);
    am_sessions_memory(ss, &m1);
    assert_int_equal(m1.used - m0.used, bytes);
    am_ci_entry *a = am_cicache_take(c, "a"); /* a is now the most recent once put back */
    am_cicache_put(c, a);
    am_cicache_put(c, entry(s, "c", 1, 2000)); /* evicts b */
    am_ci_entry *b = am_cicache_take(c, "b");
    assert_null(b);
    am_cicache_put(c, entry(s, "big", 1, 8000)); /* larger than the bound */
    assert_null(am_cicache_take(c, "big"));
    am_cicache_usage(c, &n, &bytes);
    assert_int_equal(n, 2);
    am_cicache_free(c);
    am_sessions_memory(ss, &m1);
    assert_int_equal(m1.used, m0.used); /* every charge returned */
    am_sessions_free(ss);
    am_store_close(st);
    am_scorer_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_rows_are_exact),
        cmocka_unit_test(test_take_put_and_fits),
        cmocka_unit_test(test_bytes_bound_and_charge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
