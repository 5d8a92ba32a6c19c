/* test_sessions.c — the per-session runtime cache (server/live/sessions.c): its
 * hash index by id through inserts, least-recently-used evictions and
 * forgets, entries in use outliving their eviction, and the totals cache. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "lockck.h"
#include "sessions.h"
#include "store.h"

enum { NSESS = 200, MAX = 16 };

static am_store *mem_store(void)
{
    am_store *st = NULL;
    am_buf err;
    am_buf_init(&err);
    if (am_store_open(":memory:", AM_DURABLE_NORMAL, &st, &err) != AM_OK)
        fail_msg("am_store_open: %s", am_buf_str(&err));
    am_buf_cleanup(&err);
    char id[32];
    for (int i = 0; i < NSESS; i++) {
        snprintf(id, sizeof id, "s-%d", i);
        assert_int_equal(am_store_session_create(st, id, "{}", "sig", NULL, 1), AM_OK);
    }
    return st;
}

static am_sess *acquire(am_sessions *c, const char *id)
{
    am_sess *s = NULL;
    am_buf err;
    am_buf_init(&err);
    int rc = am_sessions_acquire(c, id, &s, &err);
    if (rc != AM_OK)
        fail_msg("acquire %s: %d %s", id, rc, am_buf_str(&err));
    am_buf_cleanup(&err);
    assert_non_null(s);
    assert_string_equal(s->id, id);
    return s;
}

/* Many ids through a small cache in a scrambled order, with forgets: every
 * acquire answers the right session, and a cached one is the same object
 * on the next acquire. */
static void test_index_through_evictions(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    char id[32];
    uint32_t x = 12345;
    for (int round = 0; round < 4000; round++) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 8) % NSESS);
        snprintf(id, sizeof id, "s-%d", k);
        am_sess *a = acquire(c, id);
        am_sess *b = acquire(c, id); /* just used: still cached */
        assert_ptr_equal(a, b);
        am_sessions_release(c, b);
        am_sessions_release(c, a);
        if (round % 7 == 0)
            am_sessions_forget(c, id);
        if (round % 11 == 0) { /* a forgotten id is rebuilt */
            am_sess *d = acquire(c, id);
            am_sessions_release(c, d);
        }
    }
    /* the MAX most recent ones stay cached */
    for (int k = 0; k < MAX; k++) {
        snprintf(id, sizeof id, "s-%d", k);
        am_sessions_release(c, acquire(c, id));
    }
    for (int k = 0; k < MAX; k++) {
        snprintf(id, sizeof id, "s-%d", k);
        am_sess *a = acquire(c, id);
        am_sess *b = acquire(c, id);
        assert_ptr_equal(a, b);
        am_sessions_release(c, b);
        am_sessions_release(c, a);
    }
    am_buf err;
    am_buf_init(&err);
    am_sess *none = NULL;
    assert_int_equal(am_sessions_acquire(c, "no-such", &none, &err), AM_ERR_NOTFOUND);
    assert_null(none);
    am_buf_cleanup(&err);
    am_sessions_free(c);
    am_store_close(st);
}

/* An entry in use when it is evicted stays valid until released. */
static void test_in_use_outlives_eviction(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *held = acquire(c, "s-0");
    char id[32];
    for (int k = 1; k <= 3 * MAX; k++) {
        snprintf(id, sizeof id, "s-%d", k);
        am_sessions_release(c, acquire(c, id));
    }
    assert_string_equal(held->id, "s-0"); /* evicted, not freed (ASan checks) */
    assert_non_null(held->scorer);
    am_sess *again = acquire(c, "s-0"); /* rebuilt */
    assert_ptr_not_equal(again, held);
    am_sessions_release(c, again);
    am_sessions_release(c, held);
    am_sessions_free(c);
    am_store_close(st);
}

/* The totals cache: an entry answers only for the seq it was current at;
 * systems not in a segment stay current; clear empties it. */
static void test_totals_cache(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *s = acquire(c, "s-1");
    am_totals t[2], got;
    memset(t, 0, sizeof t);
    t[0].segments = 1;
    t[1].segments = 10;
    const char *both[] = {"base", "adapt"};
    assert_int_equal(am_sess_tot_get(s, "base", 0, &got), 0);
    am_sess_tot_commit(s, 1, 2, both, t);
    assert_int_equal(am_sess_tot_get(s, "base", 1, &got), 1);
    assert_int_equal(got.segments, 1);
    assert_int_equal(am_sess_tot_get(s, "base", 0, &got), 0); /* another seq */
    t[0].segments = 2;
    am_sess_tot_commit(s, 2, 1, both, t); /* only "base" in segment 2 */
    assert_int_equal(am_sess_tot_get(s, "base", 2, &got), 1);
    assert_int_equal(got.segments, 2);
    assert_int_equal(am_sess_tot_get(s, "adapt", 2, &got), 1);
    assert_int_equal(got.segments, 10);
    /* am_sess_tot_has answers as am_sess_tot_get does */
    assert_int_equal(am_sess_tot_has(s, "adapt", 2), 1);
    assert_int_equal(am_sess_tot_has(s, "adapt", 1), 0);
    assert_int_equal(am_sess_tot_has(s, "other", 2), 0);
    /* a gap (seq 4 after 2): the entries not in the segment are dropped */
    const char *third[] = {"third"};
    am_sess_tot_commit(s, 4, 1, third, t);
    assert_int_equal(am_sess_tot_get(s, "adapt", 4, &got), 0);
    assert_int_equal(am_sess_tot_get(s, "third", 4, &got), 1);
    /* at most AM_SESS_TOT_MAX systems */
    char names[AM_SESS_TOT_MAX + 4][16];
    const char *many[AM_SESS_TOT_MAX + 4];
    am_totals mt[AM_SESS_TOT_MAX + 4];
    memset(mt, 0, sizeof mt);
    for (int i = 0; i < AM_SESS_TOT_MAX + 4; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        many[i] = names[i];
    }
    am_sess_tot_commit(s, 5, AM_SESS_TOT_MAX + 4, many, mt);
    assert_int_equal(am_sess_tot_get(s, "m0", 5, &got), 1);
    /* "third" (kept: not in segment 5, current at 4) and 15 of the new */
    assert_int_equal(am_sess_tot_get(s, "third", 5, &got), 1);
    assert_int_equal(am_sess_tot_get(s, names[AM_SESS_TOT_MAX - 2], 5, &got), 1);
    assert_int_equal(am_sess_tot_get(s, names[AM_SESS_TOT_MAX - 1], 5, &got), 0);
    assert_int_equal(am_sess_tot_get(s, names[AM_SESS_TOT_MAX + 3], 5, &got), 0);
    am_sess_tot_clear(s);
    assert_int_equal(am_sess_tot_get(s, "m0", 5, &got), 0);
    am_sessions_release(c, s);
    am_sessions_free(c);
    am_store_close(st);
}

/* The totals slots are counted in the budget as they are made (one for a
 * session scoring one system, more as more systems post) and uncounted
 * with the write state. Before, every runtime counted AM_SESS_TOT_MAX
 * slots (20 KB) when built and a commit counted nothing. */
static void test_totals_counted(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *s = acquire(c, "s-1");
    am_sess_mem m0, m1;
    am_sessions_memory(c, &m0);
    am_totals t[3];
    memset(t, 0, sizeof t);
    const char *one[] = {"base"};
    am_sess_tot_commit(s, 1, 1, one, t);
    am_sessions_memory(c, &m1);
    assert_int_equal(m1.used - m0.used, sizeof(am_sess_tot));
    const char *three[] = {"a", "b", "c"}; /* "base" stays current: four */
    am_sess_tot_commit(s, 2, 3, three, t);
    am_sessions_memory(c, &m1);
    assert_true(m1.used - m0.used >= 4 * sizeof(am_sess_tot));
    assert_true(m1.used - m0.used <= 8 * sizeof(am_sess_tot));
    am_sess_tot_clear(s); /* the slots stay (and stay counted) */
    am_sessions_memory(c, &m0);
    assert_int_equal(m0.used, m1.used);
    am_sessions_release(c, s);
    am_sessions_forget(c, "s-1");
    am_sessions_memory(c, &m1);
    assert_int_equal(m1.used, 0);
    am_sessions_free(c);
    am_store_close(st);
}

/* The pending-history cache answers only at the version it was recorded
 * for; a commit advances it only from that version (a settle empties it);
 * a commit from another version, or a clear, drops it; it is shared by a
 * rebuilt runtime like the totals. */
static void test_pending_cache(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *s = acquire(c, "s-1");
    int64_t n = 0;
    int full = -1;
    assert_null(am_sess_hist_get(s, 7, &full));
    am_vocab *v = am_vocab_new();
    am_vocab_add(v, "haus", 1);
    am_sess_hist_set(s, 7, v, 0);
    assert_ptr_equal(am_sess_hist_get(s, 7, &full), v);
    assert_int_equal(full, 0);
    assert_int_equal(am_sess_hist_room(s), 1 << 20); /* pending only: not counted */
    assert_null(am_sess_hist_get(s, 8, &full)); /* written meanwhile */
    am_sess_hist_commit(s, 7, 8, "haus\0neu", 2, 0);
    assert_null(am_sess_hist_get(s, 7, &full));
    const am_vocab *p = am_sess_hist_get(s, 8, &full);
    assert_non_null(p);
    assert_true(am_vocab_get(p, "haus", &n) && n == 2);
    assert_true(am_vocab_get(p, "neu", &n) && n == 1);
    am_sess *b = acquire(c, "s-1"); /* the same runtime, or one sharing its state */
    assert_ptr_equal(am_sess_hist_get(b, 8, &full), p);
    am_sessions_release(c, b);
    am_sess_hist_commit(s, 8, 9, "alt", 1, 1); /* settled: empty, current at 9 */
    p = am_sess_hist_get(s, 9, &full);
    assert_non_null(p);
    assert_int_equal(am_vocab_count(p), 0);
    am_sess_hist_commit(s, 5, 6, "x", 1, 0); /* not from 9: dropped */
    assert_null(am_sess_hist_get(s, 6, &full));
    assert_null(am_sess_hist_get(s, 9, &full));
    am_sess_hist_set(s, 10, am_vocab_new(), 0);
    am_sess_tot_clear(s);
    assert_null(am_sess_hist_get(s, 10, &full));
    am_sessions_release(c, s);
    am_sessions_free(c);
    am_store_close(st);
}

/* The state noted by a writer is offered (am_sess_known) only while the
 * history cache is full and current at its version: not before a note,
 * not with pending-only counts, not once the cache moved past the noted
 * version or was dropped, not for AM_SESS_REPEAT_PAUSE calls after a
 * repeated id; a rebuilt runtime sharing the state sees it. */
static void test_known_state(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *s = acquire(c, "s-1");
    int64_t version = -1, seq = -1;
    assert_null(am_sess_known(s, &version, &seq)); /* nothing noted */
    am_sess_hist_set(s, 7, am_vocab_new(), 0);
    am_sess_note(s, 7, 3);
    assert_null(am_sess_known(s, &version, &seq)); /* pending-only counts */
    am_vocab *v = am_vocab_new();
    am_vocab_add(v, "haus", 2);
    am_sess_hist_set(s, 7, v, 1);
    assert_ptr_equal(am_sess_known(s, &version, &seq), v);
    assert_int_equal(version, 7);
    assert_int_equal(seq, 3);
    am_sess *b = acquire(c, "s-1"); /* one sharing its write state */
    assert_ptr_equal(am_sess_known(b, &version, &seq), v);
    am_sessions_release(c, b);
    am_sess_hist_commit(s, 7, 8, "neu", 1, 0); /* committed, not noted yet */
    assert_null(am_sess_known(s, &version, &seq));
    am_sess_note(s, 8, 4);
    assert_ptr_equal(am_sess_known(s, &version, &seq), v);
    assert_int_equal(version, 8);
    assert_int_equal(seq, 4);
    am_sess_repeat(s); /* a repeated id: the snapshot path for a while */
    for (int i = 0; i < AM_SESS_REPEAT_PAUSE; i++)
        assert_null(am_sess_known(s, &version, &seq));
    assert_ptr_equal(am_sess_known(s, &version, &seq), v);
    am_sess_note(s, 9, 4); /* another write's state, not the cache's */
    assert_null(am_sess_known(s, &version, &seq));
    am_sess_note(s, 8, 4);
    am_sess_tot_clear(s); /* dropped with the totals */
    assert_null(am_sess_known(s, &version, &seq));
    am_sessions_release(c, s);
    am_sessions_free(c);
    am_store_close(st);
}

/* A full history cache keeps its counts over a settle (they are the whole
 * history's), is counted in the cache's budget while it is held, and is
 * dropped, giving its bytes back, when a commit grows it past the budget,
 * when it goes stale, or when it is cleared. */
static void test_full_history_cache(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_vocab *probe = am_vocab_new();
    am_vocab_add(probe, "haus", 3);
    size_t small = am_vocab_bytes(probe);
    am_vocab_free(probe);
    size_t budget = small + 512; /* room for "haus", not for 100 more words */
    am_sessions *c = am_sessions_new(st, MAX, budget);
    am_sess *s = acquire(c, "s-1");
    int64_t n = 0;
    int full = 0;
    am_vocab *v = am_vocab_new();
    am_vocab_add(v, "haus", 3); /* settled 2 + pending 1 */
    am_sess_hist_set(s, 7, v, 1);
    assert_int_equal(am_sess_hist_room(s), budget - am_vocab_bytes(v));
    am_sess_hist_commit(s, 7, 8, "haus\0neu", 2, 1); /* settled: counts kept, not emptied */
    const am_vocab *p = am_sess_hist_get(s, 8, &full);
    assert_non_null(p);
    assert_int_equal(full, 1);
    assert_true(am_vocab_get(p, "haus", &n) && n == 4);
    assert_true(am_vocab_get(p, "neu", &n) && n == 1);
    assert_int_equal(am_sess_hist_room(s), budget - am_vocab_bytes(p));
    /* a commit that grows it past the budget drops it and frees its bytes */
    am_buf words;
    am_buf_init(&words);
    for (int i = 0; i < 100; i++) {
        char w[16];
        snprintf(w, sizeof w, "wort%d", i);
        am_buf_append(&words, w, strlen(w) + 1);
    }
    am_sess_hist_commit(s, 8, 9, am_buf_str(&words), 100, 0);
    assert_null(am_sess_hist_get(s, 9, &full));
    assert_int_equal(am_sess_hist_room(s), budget);
    /* stale (another version) and cleared caches give their bytes back */
    am_sess_hist_set(s, 9, am_vocab_new(), 1);
    assert_true(am_sess_hist_room(s) < budget);
    am_sess_hist_commit(s, 3, 4, "x", 1, 0);
    assert_int_equal(am_sess_hist_room(s), budget);
    am_sess_hist_set(s, 9, am_vocab_new(), 1);
    am_sess_tot_clear(s);
    assert_int_equal(am_sess_hist_room(s), budget);
    /* a load that did not fit is not tried again until the room doubles */
    am_sess_hist_over(s, budget / 2);
    assert_int_equal(am_sess_hist_room(s), 0);
    am_sess_hist_over(s, budget / 2 - 1);
    assert_int_equal(am_sess_hist_room(s), budget);
    /* a runtime freed with a full cache gives its bytes back too */
    am_sess_hist_set(s, 9, am_vocab_new(), 1);
    am_sessions_forget(c, "s-1");
    am_sessions_release(c, s);
    s = acquire(c, "s-1");
    assert_int_equal(am_sess_hist_room(s), budget);
    am_sessions_release(c, s);
    am_buf_cleanup(&words);
    am_sessions_free(c);
    am_store_close(st);
}

typedef struct {
    am_sess *s;
    volatile int locked;
} locker;

static void *lock_it(void *arg)
{
    locker *l = arg;
    am_sess_lock(l->s);
    l->locked = 1;
    am_sess_unlock(l->s);
    return NULL;
}

/* A runtime rebuilt while a dropped one is still held (a glossary PUT
 * forgets the runtime; an eviction drops it) shares the held one's write
 * lock and totals cache: a writer of the new runtime waits for the writer
 * of the old one (the CI run of 63a96fa: a glossary PUT on a fresh runtime
 * changed the session under a segment replay holding the old runtime's
 * lock, 32 times in a row, and the PUT answered 503). */
static void test_rebuilt_runtime_shares_the_write_lock(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *a = acquire(c, "s-1");
    am_sess_lock(a);
    am_sessions_forget(c, "s-1"); /* as a glossary PUT does */
    am_sess *b = acquire(c, "s-1");
    assert_ptr_not_equal(a, b);
    locker l = {b, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, lock_it, &l), 0);
    struct timespec ms50 = {0, 50 * 1000 * 1000};
    nanosleep(&ms50, NULL);
    assert_int_equal(l.locked, 0); /* b's writer waits for a's */
    am_totals t1, got;
    memset(&t1, 0, sizeof t1);
    t1.segments = 7;
    const char *sys[] = {"default"};
    am_sess_tot_commit(a, 3, 1, sys, &t1);
    am_sess_unlock(a);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(l.locked, 1);
    /* one totals cache: what a's writer committed or cleared is b's */
    assert_int_equal(am_sess_tot_get(b, "default", 3, &got), 1);
    assert_int_equal(got.segments, 7);
    am_sess_tot_clear(a);
    assert_int_equal(am_sess_tot_get(b, "default", 3, &got), 0);
    am_sess_tot_commit(a, 3, 1, sys, &t1);
    /* evicted while held: the rebuilt runtime shares it as well */
    am_sessions_release(c, a);
    char id[32];
    for (int k = 2; k <= 3 * MAX; k++) {
        snprintf(id, sizeof id, "s-%d", k);
        am_sessions_release(c, acquire(c, id));
    }
    am_sess *d = acquire(c, "s-1");
    assert_ptr_not_equal(d, b);
    assert_int_equal(am_sess_tot_get(d, "default", 3, &got), 1);
    am_sessions_release(c, b);
    am_sessions_release(c, d);
    am_sessions_free(c);
    am_store_close(st);
}

/* The runtime of a re-created session (a new incarnation) does not share
 * the write lock of the deleted one still held: its writers need not wait
 * for a long write of the deleted session (a rescore), which fails its own
 * incarnation check. */
static void test_recreated_session_has_its_own_write_lock(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 1 << 20);
    am_sess *a = acquire(c, "s-2");
    am_sess_lock(a);
    assert_int_equal(am_store_session_delete(st, "s-2"), AM_OK);
    am_sessions_forget(c, "s-2");
    assert_int_equal(am_store_session_create(st, "s-2", "{}", "sig", NULL, 2), AM_OK);
    am_sess *b = acquire(c, "s-2");
    assert_true(b->incarnation > a->incarnation);
    locker l = {b, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, lock_it, &l), 0);
    assert_int_equal(pthread_join(t, NULL), 0); /* not blocked by a's lock */
    assert_int_equal(l.locked, 1);
    /* nor answered from the totals the deleted incarnation cached */
    am_totals t1, got;
    memset(&t1, 0, sizeof t1);
    const char *sys[] = {"default"};
    am_sess_tot_commit(a, 3, 1, sys, &t1);
    assert_int_equal(am_sess_tot_get(b, "default", 3, &got), 0);
    am_sess_unlock(a);
    am_sessions_release(c, a);
    am_sessions_release(c, b);
    am_sessions_free(c);
    am_store_close(st);
}

/* A glossary of n entries "term<k>-<salt>" -> "terme<k>" (JSON, caller frees). */
static char *big_glossary(int n, int salt)
{
    am_buf b;
    am_buf_init(&b);
    am_buf_appends(&b, "[");
    for (int k = 0; k < n; k++)
        am_buf_printf(&b, "%s{\"source\":\"term%d x%d\",\"targets\":[\"terme%d\"]}", k ? "," : "",
                      k, salt, k);
    am_buf_appends(&b, "]");
    return am_buf_detach(&b);
}

/* Runtimes built from the same options and glossary share one compiled
 * scorer (sess_share.c), counted once in the budget; a different glossary
 * or scoring option compiles its own; service options (name, metadata)
 * do not split a part; the part goes (bytes uncounted) with its last
 * runtime. Before: every runtime compiled and counted its own copy. */
static void test_shared_parts(void **state)
{
    (void)state;
    am_store *st = mem_store();
    char *ga = big_glossary(500, 1), *gb = big_glossary(500, 2);
    const char *opts[] = {"{}", "{\"name\":\"x\",\"metadata\":{\"k\":1}}", "{}",
                          "{\"case\":\"sensitive\"}"};
    const char *gls[] = {ga, ga, gb, ga};
    char id[32];
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "p-%d", i);
        assert_int_equal(am_store_session_create_gl(st, id, opts[i], "sig", NULL, gls[i], 1, NULL),
                         AM_OK);
    }
    am_sessions *c = am_sessions_new(st, 100, 0);
    am_sess *a = acquire(c, "p-0");
    am_sess_mem m0, m1;
    am_sessions_memory(c, &m0);
    am_sess *b = acquire(c, "p-1");
    am_sessions_memory(c, &m1);
    assert_ptr_equal(a->scorer, b->scorer); /* one compiled scorer */
    assert_ptr_equal(a->gloss.v, b->gloss.v);
    assert_int_equal(a->gloss.n, 500);
    assert_int_equal(am_sessions_parts(c), 1);
    /* the second runtime counts only its own bytes */
    assert_int_equal(m1.used - m0.used, b->bytes);
    assert_true(b->bytes * 4 < m0.used);
    am_sess *d = acquire(c, "p-2"); /* another glossary */
    am_sess *e = acquire(c, "p-3"); /* another scoring option */
    assert_ptr_not_equal(d->scorer, a->scorer);
    assert_ptr_not_equal(e->scorer, a->scorer);
    assert_int_equal(am_sessions_parts(c), 3);
    am_sessions_release(c, a);
    am_sessions_release(c, b);
    am_sessions_release(c, d);
    am_sessions_release(c, e);
    /* the part stays while one runtime borrows it, goes with the last */
    am_sessions_forget(c, "p-0");
    assert_int_equal(am_sessions_parts(c), 3);
    am_sessions_forget(c, "p-1");
    am_sessions_forget(c, "p-2");
    am_sessions_forget(c, "p-3");
    assert_int_equal(am_sessions_parts(c), 0);
    am_sess_mem m;
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, 0);
    /* a forgotten runtime in use keeps its part; a rebuild borrows it */
    a = acquire(c, "p-0");
    am_sessions_forget(c, "p-0");
    b = acquire(c, "p-1");
    assert_ptr_equal(a->scorer, b->scorer);
    am_sessions_release(c, a);
    am_sessions_release(c, b);
    am_sessions_free(c);
    am_store_close(st);
    free(ga);
    free(gb);
}

/* Sessions on differing glossaries through a budget that holds three
 * runtimes: an evicted runtime's glossary is kept as a compact form, and
 * its rebuild takes the form back (form_builds; the form goes) and holds
 * the same entries and the same compiled term set as its first build; a
 * forgotten session's forms go. Before: every rebuild parsed the stored
 * JSON (no forms). */
static void test_glossary_forms(void **state)
{
    (void)state;
    am_store *st = mem_store();
    enum { NG = 6 };
    char id[32];
    size_t n0[NG], lex0[NG];
    char *src0[NG];
    for (int i = 0; i < NG; i++) {
        snprintf(id, sizeof id, "f-%d", i);
        char *gl = big_glossary(300 + 20 * i, 40 + i);
        assert_int_equal(am_store_session_create_gl(st, id, "{}", "sig", NULL, gl, 1, NULL), AM_OK);
        free(gl);
    }
    am_sessions *c = am_sessions_new(st, 1000, 0);
    am_sess *one = acquire(c, "f-0");
    am_sess_mem m;
    am_sessions_memory(c, &m);
    am_sessions_release(c, one);
    /* a few runtimes, a build's reservation (its JSON estimate) and the
     * forms (a quarter): six runtimes' bytes (4.5 before the totals slots
     * were counted as made, when a runtime counted 20 KB more) */
    am_sessions_set_memory(c, 6 * m.used);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < NG; i++) {
            snprintf(id, sizeof id, "f-%d", i);
            am_sess *s = acquire(c, id);
            size_t lex = am_terms_lex_size(am_scorer_lex(s->scorer));
            if (round == 0) {
                n0[i] = s->gloss.n;
                lex0[i] = lex;
                src0[i] = strdup(s->gloss.v[s->gloss.n - 1].source);
            } else {
                assert_int_equal(s->gloss.n, n0[i]);
                assert_int_equal(lex, lex0[i]);
                assert_string_equal(s->gloss.v[s->gloss.n - 1].source, src0[i]);
            }
            am_sessions_release(c, s);
        }
    am_sessions_memory(c, &m);
    assert_true(m.evictions >= NG);
    assert_true(m.form_builds >= NG - 2); /* the second round's rebuilds */
    assert_true(m.forms >= 1);
    assert_true(m.form_bytes <= m.budget / 4);
    for (int i = 0; i < NG; i++) {
        snprintf(id, sizeof id, "f-%d", i);
        am_sessions_forget(c, id);
        free(src0[i]);
    }
    am_sessions_memory(c, &m);
    assert_int_equal(m.forms, 0);
    assert_int_equal(m.used, 0);
    am_sessions_free(c);
    am_store_close(st);
}

typedef struct share_race {
    am_sessions *c;
    unsigned seed;
    int mixed; /* a runtime with another scorer */
} share_race;

static void *share_race_run(void *arg)
{
    share_race *r = arg;
    char id[32];
    for (int k = 0; k < 300; k++) {
        r->seed = r->seed * 1103515245u + 12345u;
        snprintf(id, sizeof id, "q-%u", (r->seed >> 8) % 24);
        am_sess *s = acquire(r->c, id);
        r->mixed |= s->gloss.n != 300;
        am_sessions_release(r->c, s);
    }
    return NULL;
}

/* Threads building and evicting runtimes of 24 sessions on one glossary
 * through a cache of 4: parts are built, borrowed and freed concurrently
 * (ASan, make valgrind), and at rest at most one part lives and nothing
 * stays counted once every runtime is forgotten. */
static void test_shared_parts_threads(void **state)
{
    (void)state;
    am_store *st = mem_store();
    char *g = big_glossary(300, 7);
    char id[32];
    for (int i = 0; i < 24; i++) {
        snprintf(id, sizeof id, "q-%d", i);
        assert_int_equal(am_store_session_create_gl(st, id, "{}", "sig", NULL, g, 1, NULL), AM_OK);
    }
    am_sessions *c = am_sessions_new(st, 4, 0);
    pthread_t t[4];
    share_race r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (share_race){c, 77u + (unsigned)i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, share_race_run, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_false(r[i].mixed);
    }
    assert_true(am_sessions_parts(c) <= 1);
    for (int i = 0; i < 24; i++) {
        snprintf(id, sizeof id, "q-%d", i);
        am_sessions_forget(c, id);
    }
    am_sess_mem m;
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, 0);
    assert_int_equal(am_sessions_parts(c), 0);
    am_sessions_free(c);
    am_store_close(st);
    free(g);
}

/* The memory budget: runtimes count their compiled glossaries' bytes; past
 * the budget the least recently used idle ones are freed (and counted as
 * evictions), at rest the total stays within it, a runtime in use is never
 * freed under its user, one over the budget alone is freed at its
 * release, and charges (a replay's older versions) count until uncharged. */
static void test_memory_budget(void **state)
{
    (void)state;
    am_store *st = mem_store();
    enum { NG = 12, ENTRIES = 2000 };
    char id[32];
    for (int i = 0; i < NG; i++) {
        snprintf(id, sizeof id, "g-%d", i);
        char *gl = big_glossary(ENTRIES, i);
        assert_int_equal(am_store_session_create_gl(st, id, "{}", "sig", NULL, gl, 1, NULL), AM_OK);
        free(gl);
    }
    am_sessions *c = am_sessions_new(st, 1000, 0);
    /* one runtime's bytes: a 2,000-entry glossary is far above the base;
     * its compiled scorer is a shared part (sess_share.c) counted once,
     * beside the runtime's own few KiB */
    am_sess *one = acquire(c, "g-0");
    am_sess_mem m;
    am_sessions_memory(c, &m);
    size_t each = m.used;
    assert_true(each > 200 * 1024);
    assert_true(one->bytes < 100 * 1024);
    assert_int_equal(am_sessions_parts(c), 1);
    assert_int_equal(m.budget, 0);
    am_sessions_release(c, one);

    size_t budget = 4 * each + each / 2; /* room for 4 */
    am_sessions_set_memory(c, budget);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NG; i++) {
            snprintf(id, sizeof id, "g-%d", i);
            am_sessions_release(c, acquire(c, id));
            am_sessions_memory(c, &m);
            assert_true(m.used <= budget);
        }
    am_sessions_memory(c, &m);
    assert_int_equal(m.budget, budget);
    /* the build's reservation made room before it: 2 to 4 stay cached,
     * beside the compact glossaries of evicted ones (sess_share.c), at most
     * a quarter of the budget (before: 3 or 4 cached, no forms) */
    size_t fbytes = 0;
    size_t nforms = am_sessions_forms(c, &fbytes);
    assert_true(m.cached >= 2 && m.cached <= 4);
    assert_true(nforms >= 1 && nforms <= NG - m.cached);
    assert_true(fbytes <= budget / 4);
    assert_true(m.evictions >= 3 * NG - 4 - 1);
    /* the build is reserved before the idle ones make room: the budget
     * holds at every moment (before: the budget plus one runtime) */
    assert_true(m.peak <= budget);

    /* in use: never freed under its user; a new runtime that does not fit
     * beside those in use waits for room, then is refused (before: built
     * over the budget, one runtime per request in flight) */
    am_sessions_set_wait(c, 50);
    am_sess *held[6];
    int n_held = 0;
    am_buf err;
    am_buf_init(&err);
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "g-%d", i);
        am_sess *s = NULL;
        int rc = am_sessions_acquire(c, id, &s, &err);
        if (rc == AM_ERR_FULL) {
            assert_null(s);
            assert_non_null(strstr(am_buf_str(&err), "session-memory budget"));
            break;
        }
        assert_int_equal(rc, AM_OK);
        held[n_held++] = s;
        am_sessions_memory(c, &m);
        assert_true(m.used <= budget);
    }
    assert_true(n_held >= 2 && n_held <= 4);
    am_sessions_memory(c, &m);
    assert_int_equal(m.refused, 1);
    for (int i = 0; i < n_held; i++) {
        snprintf(id, sizeof id, "g-%d", i);
        assert_string_equal(held[i]->id, id);
        assert_non_null(held[i]->scorer);
    }
    am_sessions_release(c, held[--n_held]); /* room again: the refused one is served */
    snprintf(id, sizeof id, "g-%d", n_held + 1);
    held[n_held++] = acquire(c, id);
    for (int i = 0; i < n_held; i++)
        am_sessions_release(c, held[i]);
    am_buf_cleanup(&err);
    am_sessions_memory(c, &m); /* at rest: within the budget */
    assert_true(m.used <= budget);

    /* a charge frees idle runtimes to make room, and is given back */
    am_sessions_charge(c, 3 * each);
    am_sessions_memory(c, &m);
    assert_true(m.used <= budget);
    assert_true(m.cached <= 1);
    am_sessions_uncharge(c, 3 * each);

    /* a budget below one runtime: it is served, then freed at release */
    am_sessions_set_memory(c, each / 2);
    am_sess *big = acquire(c, "g-7");
    assert_non_null(big->scorer);
    am_sessions_release(c, big);
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, 0);
    assert_int_equal(m.cached, 0);
    am_sessions_free(c);
    am_store_close(st);
}

typedef struct {
    am_sessions *c;
    size_t bytes;
    int rc;
} reserver;

static void *reserve_it(void *arg)
{
    reserver *r = arg;
    r->rc = am_sessions_reserve(r->c, r->bytes, 0);
    return NULL;
}

/* Reservations (a glossary PUT's parse and compile): one larger than the
 * budget is refused at once (AM_ERR_RANGE, 413), one that does not fit
 * beside those held waits and is refused when no room comes (AM_ERR_FULL,
 * 503), and a waiter is served as soon as room comes; nothing is counted
 * for a refusal, and idle runtimes make room. */
static void test_reservations(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 0);
    size_t budget = (size_t)8 << 20;
    am_sessions_set_memory(c, budget);
    am_sessions_set_wait(c, 50);
    am_sess_mem m;
    assert_int_equal(am_sessions_reserve(c, budget + 1, 0), AM_ERR_RANGE);
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, 0);
    am_sessions_release(c, acquire(c, "s-1")); /* idle: freed for room */
    assert_int_equal(am_sessions_reserve(c, budget - 1024, 0), AM_OK);
    am_sessions_memory(c, &m);
    assert_int_equal(m.cached, 0);
    assert_int_equal(m.used, budget - 1024);
    assert_int_equal(am_sessions_reserve(c, 4096, 0), AM_ERR_FULL);
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, budget - 1024);
    assert_int_equal(m.refused, 1);
    /* a waiter gets the room when it comes */
    am_sessions_set_wait(c, 20000);
    reserver r = {c, budget / 2, 99};
    pthread_t t;
    struct timespec t0, t1, pause = {0, 100 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(pthread_create(&t, NULL, reserve_it, &r), 0);
    nanosleep(&pause, NULL);
    am_sessions_unreserve(c, budget - 1024);
    assert_int_equal(pthread_join(t, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(r.rc, AM_OK);
    assert_true(t1.tv_sec - t0.tv_sec < 10); /* woken, not timed out */
    am_sessions_memory(c, &m);
    assert_int_equal(m.used, budget / 2);
    am_sessions_unreserve(c, budget / 2);
    /* a thread holding a session lock does not wait: counted at once */
    am_sess *s = acquire(c, "s-2");
    size_t most = budget - ((size_t)1 << 20);
    assert_int_equal(am_sessions_reserve(c, most, 0), AM_OK);
    am_sessions_release(c, acquire(c, "s-3")); /* idle */
    am_sess_lock(s);
    assert_int_equal(am_sessions_reserve(c, budget / 2, 0), AM_OK);
    am_sess_unlock(s);
    am_sessions_memory(c, &m);
    assert_true(m.used > budget);
    assert_int_equal(m.cached, 1); /* the idle one was freed to make room all the same */
    assert_int_equal(m.refused, 1);
    am_sessions_unreserve(c, budget / 2);
    am_sessions_unreserve(c, most);
    am_sessions_release(c, s);
    am_sessions_free(c);
    am_store_close(st);
}

/* A session lock counts as held by the locking thread only, for the
 * lock-order check (server/base/lockck.h): another thread may take its
 * own session's lock meanwhile. */
static void *other_session_lock(void *arg)
{
    am_sess *s = arg;
    assert_int_equal(am_lk_held(AM_LK_SESSION), 0);
    am_sess_lock(s);
    assert_int_equal(am_lk_held(AM_LK_SESSION), 1);
    am_sess_unlock(s);
    return NULL;
}

static void test_lock_holds_counted_per_thread(void **state)
{
    (void)state;
    am_store *st = mem_store();
    am_sessions *c = am_sessions_new(st, MAX, 0);
    am_sess *a = acquire(c, "s-1"), *b = acquire(c, "s-2");
    assert_int_equal(am_lk_held(AM_LK_SESSION), 0);
    am_sess_lock(a);
    assert_int_equal(am_lk_held(AM_LK_SESSION), 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_session_lock, b), 0);
    pthread_join(t, NULL);
    am_sess_unlock(a);
    assert_int_equal(am_lk_held(AM_LK_SESSION), 0);
    am_sessions_release(c, b);
    am_sessions_release(c, a);
    am_sessions_free(c);
    am_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_through_evictions),
        cmocka_unit_test(test_in_use_outlives_eviction),
        cmocka_unit_test(test_totals_cache),
        cmocka_unit_test(test_totals_counted),
        cmocka_unit_test(test_pending_cache),
        cmocka_unit_test(test_full_history_cache),
        cmocka_unit_test(test_known_state),
        cmocka_unit_test(test_rebuilt_runtime_shares_the_write_lock),
        cmocka_unit_test(test_recreated_session_has_its_own_write_lock),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_shared_parts),
        cmocka_unit_test(test_glossary_forms),
        cmocka_unit_test(test_shared_parts_threads),
        cmocka_unit_test(test_reservations),
        cmocka_unit_test(test_lock_holds_counted_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
