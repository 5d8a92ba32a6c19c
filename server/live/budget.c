/* budget.c — a request's time budget, the scoring workspace pool and the
 * failures every write path answers with (see ingest.h). */
#include "ingest_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* ---- time budget ---------------------------------------------------------- */

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The am_cancel check of a budget (ctx: the am_budget, borrowed). */
static int budget_check(void *ctx)
{
    const am_budget *b = ctx;
    if (atomic_load(&b->srv->abandon))
        return 1;
    return b->limit_ns && thread_cpu_ns() >= b->limit_ns;
}

void am_budget_start(am_budget *b, am_server *srv)
{
    am_cancel_init(&b->cancel, budget_check, b);
    b->srv = srv;
    b->limit_ns = srv->cfg.request_timeout_ms > 0
                      ? thread_cpu_ns() + (int64_t)srv->cfg.request_timeout_ms * 1000000
                      : 0;
}

int am_budget_over(am_budget *b)
{
    return am_cancel_spend(&b->cancel, AM_CANCEL_QUANTUM);
}

/* ---- workspace pool ------------------------------------------------------ */

struct am_wspool {
    pthread_mutex_t mu;
    am_score_ws **free;
    size_t n, cap;
    /* the scoring gate: a counting semaphore of slots (own mutex, so that
     * the workspace list is never held up behind a waiter) */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int slots; /* callers allowed at once (>= 1) */
    int busy; /* callers between enter and leave */
    int64_t waits; /* enters that found every slot taken */
};

am_wspool *am_wspool_new(int slots)
{
    am_wspool *p = am_xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->gate_mu, NULL);
    pthread_cond_init(&p->gate_cv, NULL);
    if (slots <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        slots = cores > 0 ? (int)(cores < 1024 ? cores : 1024) : 1;
    }
    p->slots = slots;
    return p;
}

int am_wspool_slots(const am_wspool *p)
{
    return p->slots;
}

void am_wspool_enter(am_wspool *p)
{
    pthread_mutex_lock(&p->gate_mu);
    if (p->busy >= p->slots)
        p->waits++;
    while (p->busy >= p->slots)
        pthread_cond_wait(&p->gate_cv, &p->gate_mu);
    p->busy++;
    pthread_mutex_unlock(&p->gate_mu);
}

int64_t am_wspool_waits(am_wspool *p)
{
    pthread_mutex_lock(&p->gate_mu);
    int64_t n = p->waits;
    pthread_mutex_unlock(&p->gate_mu);
    return n;
}

void am_wspool_leave(am_wspool *p)
{
    pthread_mutex_lock(&p->gate_mu);
    p->busy--;
    pthread_mutex_unlock(&p->gate_mu);
    pthread_cond_signal(&p->gate_cv); /* one slot: one waiter */
}

void am_wspool_free(am_wspool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        am_score_ws_free(p->free[i]);
    free(p->free);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->gate_mu);
    pthread_cond_destroy(&p->gate_cv);
    free(p);
}

am_score_ws *am_wspool_get(am_wspool *p)
{
    pthread_mutex_lock(&p->mu);
    am_score_ws *ws = p->n ? p->free[--p->n] : NULL;
    pthread_mutex_unlock(&p->mu);
    return ws ? ws : am_score_ws_new();
}

void am_wspool_put(am_wspool *p, am_score_ws *ws)
{
    pthread_mutex_lock(&p->mu);
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->free = am_xrealloc(p->free, p->cap * sizeof *p->free);
    }
    p->free[p->n++] = ws;
    pthread_mutex_unlock(&p->mu);
}

/* ---- failures ------------------------------------------------------------ */

/* A failed write of a session's rows (rc from the store; nothing was
 * stored), by am_problem_of_store: the session gone is a 404; a session
 * that changed meanwhile (AM_ERR_CONFLICT) a 503 to retry (*retry set;
 * during says while what, e.g. "the segment was scored"); a full disk a 507;
 * anything else a 500. what names the rows ("the segment"). Strings are
 * borrowed. */
void am_fail_write(am_fail *f, int rc, const char *session, const char *what, const char *during,
                   int *retry)
{
    switch (am_problem_of_store(rc)) {
    case AM_P_NOT_FOUND: am_failp(f, AM_P_NOT_FOUND, NULL, "no session '%s'", session); break;
    case AM_P_CONFLICT:
        *retry = 1;
        am_failp(f, AM_P_UNAVAILABLE, NULL, "the session changed while %s; retry", during);
        break;
    case AM_P_INSUFFICIENT_STORAGE:
        am_failp(f, AM_P_INSUFFICIENT_STORAGE, NULL,
                 "%s could not be stored: " AM_PROBLEM_FULL_NOTE, what);
        break;
    case AM_P_UNAVAILABLE: /* PostgreSQL: unreachable, or the commit's outcome unknown */
        am_failp(f, AM_P_UNAVAILABLE, NULL,
                 "%s may not be stored: the database is unavailable or the commit's outcome "
                 "is unknown; retry (the same id gets the stored result)",
                 what);
        f->retry_after = 1;
        break;
    default: am_failp(f, AM_P_INTERNAL, NULL, "storage error: %s could not be stored", what);
    }
}

int am_fail_cancelled(am_fail *f, const am_server *srv, int shutdown)
{
    if (shutdown) {
        am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                 "the server is shutting down; the request was abandoned and nothing was "
                 "stored");
        f->retry_after = 1;
    } else {
        am_failp(f, AM_P_REQUEST_TIMEOUT, NULL,
                 "the request needed more than %d ms of computing (request-timeout-ms); it "
                 "was abandoned and nothing was stored",
                 srv->cfg.request_timeout_ms);
    }
    return AM_ERR_CANCELLED;
}

/* The 503 of a request abandoned by its budget b (borrowed). */
int am_budget_fail(am_fail *f, const am_budget *b)
{
    return am_fail_cancelled(f, b->srv, atomic_load(&b->srv->abandon));
}
