/*
 * http_ceiling.c — the HTTP ceiling for `make bench`: a minimal
 * libmicrohttpd server with the flags of server/http/http.c (internal polling
 * thread, thread pool, epoll, ITC) that reads a POST body and answers a
 * fixed small JSON object. Nothing else: no parsing, no storage.
 *   usage: http_ceiling PORT THREADS   (runs until SIGTERM/SIGINT)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t bc_stop;

static void bc_on_signal(int sig)
{
    (void)sig;
    bc_stop = 1;
}

/* Per-request marker: the body is consumed chunk by chunk (as http.c does)
 * and the answer queued once it has all arrived. */
static enum MHD_Result bc_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *size, void **state)
{
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)data;
    static int marker;
    if (!*state) {
        *state = &marker;
        return MHD_YES;
    }
    if (*size) {
        *size = 0;
        return MHD_YES;
    }
    static const char body[] = "{\"ok\":true,\"seq\":1}";
    struct MHD_Response *r = MHD_create_response_from_buffer(
        sizeof body - 1, (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(c, 201, r);
    MHD_destroy_response(r);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: http_ceiling PORT THREADS\n");
        return 2;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        flags |= MHD_USE_EPOLL;
    else
        flags |= MHD_USE_POLL;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)atoi(argv[1]), NULL, NULL, &bc_access, NULL, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)atoi(argv[2]), MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_CONNECTION_TIMEOUT,
        30u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "http_ceiling: cannot listen on port %s\n", argv[1]);
        return 1;
    }
    signal(SIGTERM, bc_on_signal);
    signal(SIGINT, bc_on_signal);
    /* PORT 0: the kernel's free port, which the ready line names */
    const union MHD_DaemonInfo *bi = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("http_ceiling listening on 127.0.0.1:%u\n", bi ? (unsigned)bi->port : 0u);
    fflush(stdout);
    while (!bc_stop)
        pause();
    MHD_stop_daemon(d);
    return 0;
}
