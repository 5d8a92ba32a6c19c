/* peer.c — is a request's client still there? (see peer.h) */
#include "peer.h"

#include <errno.h>
#include <sys/socket.h>
#include <time.h>

static int64_t am_peer_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void am_peer_init(am_peer *p, int fd, am_prom *prom)
{
    p->fd = fd;
    p->next_ns = 0;
    p->gone = 0;
    p->prom = prom;
    p->inner_fn = NULL;
    p->inner_ctx = NULL;
}

/* One look at the socket: a peek of one byte without waiting. 0 is the
 * client's FIN (it closed, or shut down its sending side, which an HTTP/1.1
 * client does not do while it awaits an answer); an error other than "no
 * data yet" is a reset. Data (a pipelined request) or nothing: still there. */
static int am_peer_look(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0)
        return 1;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return 1;
    return 0;
}

int am_peer_gone(am_peer *p)
{
    if (p->gone)
        return 1;
    if (p->fd < 0)
        return 0;
    int64_t now = am_peer_now_ns();
    if (now < p->next_ns)
        return 0;
    p->next_ns = now + (int64_t)AM_PEER_PERIOD_MS * 1000000;
    p->gone = am_peer_look(p->fd);
    return p->gone;
}

/* The am_cancel check installed by am_peer_chain (ctx: the am_peer). */
static int am_peer_check(void *ctx)
{
    am_peer *p = ctx;
    if (p->inner_fn && p->inner_fn(p->inner_ctx))
        return 1;
    if (p->gone || !am_peer_gone(p))
        return p->gone;
    am_prom_abandoned(p->prom, "client_gone"); /* once: gone is sticky */
    return 1;
}

void am_peer_chain(am_peer *p, am_cancel *c)
{
    p->inner_fn = c->fn;
    p->inner_ctx = c->ctx;
    c->fn = am_peer_check;
    c->ctx = p;
}
