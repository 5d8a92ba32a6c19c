/* test_wspool.c — the scoring workspaces' pool and its gate
 * (server/live/budget.c, ingest.h): at most slots callers between
 * am_wspool_enter and am_wspool_leave, every slot used when callers wait,
 * 0 slots meaning the online CPUs, and workspaces handed back reused. */
#include "testutil.h"

#include "ingest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define GATE_THREADS 8
#define GATE_ROUNDS 25

typedef struct gate_run {
    am_wspool *pool; /* borrowed */
    atomic_int inside; /* callers between enter and leave now */
    atomic_int most; /* the most seen at once */
} gate_run;

/* One caller: GATE_ROUNDS times enter, stay ~1 ms (the others pile up at
 * the gate meanwhile), leave; records how many were inside at once. */
static void *gate_caller(void *arg)
{
    gate_run *r = arg;
    for (int i = 0; i < GATE_ROUNDS; i++) {
        am_wspool_enter(r->pool);
        int now = atomic_fetch_add(&r->inside, 1) + 1;
        int most = atomic_load(&r->most);
        while (now > most && !atomic_compare_exchange_weak(&r->most, &most, now)) {
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        atomic_fetch_sub(&r->inside, 1);
        am_wspool_leave(r->pool);
    }
    return NULL;
}

/* Eight callers through a gate of slots: never more than slots inside, and
 * (the callers outnumbering the slots and each staying 1 ms) all of the
 * slots used at some point, not one caller at a time. */
static void gate_bounds(int slots)
{
    gate_run r;
    r.pool = am_wspool_new(slots);
    atomic_init(&r.inside, 0);
    atomic_init(&r.most, 0);
    assert_int_equal(am_wspool_slots(r.pool), slots);
    pthread_t t[GATE_THREADS];
    for (int i = 0; i < GATE_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, gate_caller, &r), 0);
    for (int i = 0; i < GATE_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&r.inside), 0);
    assert_int_equal(atomic_load(&r.most), slots);
    /* eight callers through fewer slots: some found them all taken */
    int64_t waits = am_wspool_waits(r.pool);
    assert_true(waits > 0 && waits <= GATE_THREADS * GATE_ROUNDS);
    am_wspool_free(r.pool);
}

static void test_gate_bounds_concurrent_callers(void **state)
{
    (void)state;
    gate_bounds(1);
    gate_bounds(2);
    gate_bounds(3);
}

/* --scoring-threads 0 (the default) is the online CPUs. */
static void test_gate_default_is_online_cpus(void **state)
{
    (void)state;
    am_wspool *p = am_wspool_new(0);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(cores >= 1);
    assert_int_equal(am_wspool_slots(p), (int)cores);
    /* a lone caller passes at once and may come back */
    am_wspool_enter(p);
    am_wspool_leave(p);
    am_wspool_enter(p);
    am_wspool_leave(p);
    assert_int_equal(am_wspool_waits(p), 0);
    am_wspool_free(p);
}

/* A workspace handed back is the next one handed out. */
static void test_pool_reuses_workspaces(void **state)
{
    (void)state;
    am_wspool *p = am_wspool_new(2);
    am_score_ws *a = am_wspool_get(p);
    am_score_ws *b = am_wspool_get(p);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
    am_wspool_put(p, a);
    assert_ptr_equal(am_wspool_get(p), a);
    am_wspool_put(p, a);
    am_wspool_put(p, b);
    am_wspool_free(p); /* frees both (ASan: no leak) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_bounds_concurrent_callers),
        cmocka_unit_test(test_gate_default_is_online_cpus),
        cmocka_unit_test(test_pool_reuses_workspaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
