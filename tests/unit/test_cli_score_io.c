/* test_cli_score_io.c — cli/cli_score.c's am_cli_score_io: `adaptmon score`
 * printing on the streams it is given (the result on out, every message on
 * err, nothing on the process's stdout or stderr), and several calls at
 * once on threads giving each the bytes a lone call gives (the Python
 * extension runs it so; a shared parser index, stream or buffer would
 * mix or garble the outputs, and ASan/valgrind would see the race). */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One call's captured output (owned: out_free). */
typedef struct {
    int rc;
    char *out, *err;
    size_t nout, nerr;
} out_t;

static void out_free(out_t *o)
{
    free(o->out);
    free(o->err);
}

/* Runs `adaptmon score` with argv[1..argc) = args (borrowed) into *o. */
static void run(int argc, const char *const *args, out_t *o)
{
    char *argv[16];
    assert_true(argc < 16);
    for (int i = 0; i < argc; i++) /* argv is char **: copies of the texts */
        argv[i] = strdup(i ? args[i] : "score");
    memset(o, 0, sizeof *o);
    FILE *out = open_memstream(&o->out, &o->nout);
    FILE *err = open_memstream(&o->err, &o->nerr);
    assert_non_null(out);
    assert_non_null(err);
    o->rc = am_cli_score_io(argc, argv, out, err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(fclose(err), 0);
}

/* Writes text to a new temporary file; returns its path (caller frees and
 * unlinks). */
static char *tmp_text(const char *text)
{
    char *path = strdup("/tmp/am_score_io_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

typedef struct {
    char *ref, *hyp, *src;
} files_t;

static void files_make(files_t *f)
{
    f->ref = tmp_text("the small black cat sleeps on the bed\nit is raining in Paris today\n"
                      "the vaccine protects against the virus\n");
    f->hyp = tmp_text("the little black cat sleeps on a bed\nit rains in Paris today\n"
                      "a vaccine protects against that virus\n");
    f->src = tmp_text("le petit chat noir dort sur le lit\nil pleut à Paris aujourd'hui\n"
                      "le vaccin protège contre le virus\n");
}

static void files_free(files_t *f)
{
    unlink(f->ref);
    unlink(f->hyp);
    unlink(f->src);
    free(f->ref);
    free(f->hyp);
    free(f->src);
}

static void test_streams(void **state)
{
    (void)state;
    files_t f;
    files_make(&f);
    out_t o;
    const char *ok[] = {NULL,    "--ref", f.ref,           "--hyp", f.hyp,
                        "--src", f.src,   "--target-lang", "en",    "--json"};
    run(10, ok, &o);
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.nerr, 0);
    json_error_t je;
    json_t *j = json_loadb(o.out, o.nout, 0, &je);
    assert_non_null(j);
    assert_non_null(json_object_get(j, "signature"));
    json_decref(j);
    out_free(&o);

    const char *bogus[] = {NULL, "--bogus"};
    run(2, bogus, &o);
    assert_int_equal(o.rc, 2);
    assert_int_equal(o.nout, 0);
    assert_non_null(strstr(o.err, "adaptmon score: option --bogus needs a value"));
    out_free(&o);

    const char *help[] = {NULL, "--help"};
    run(2, help, &o);
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.nerr, 0);
    assert_int_equal(strncmp(o.out, "usage: adaptmon score", 21), 0);
    out_free(&o);

    const char *missing[] = {NULL, "--ref", "/nonexistent/ref.txt", "--hyp", f.hyp};
    run(5, missing, &o);
    assert_int_equal(o.rc, 1);
    assert_int_equal(o.nout, 0);
    assert_non_null(strstr(o.err, "cannot open '/nonexistent/ref.txt'"));
    out_free(&o);
    files_free(&f);
}

/* A thread's work: rounds calls of args, each compared with *want. */
typedef struct {
    int argc;
    const char *const *args;
    const out_t *want;
    long rounds;
    int mismatches;
} job_t;

static void *job_run(void *p)
{
    job_t *j = p;
    for (long r = 0; r < j->rounds; r++) {
        out_t o;
        run(j->argc, j->args, &o);
        if (o.rc != j->want->rc || o.nout != j->want->nout || o.nerr != j->want->nerr ||
            memcmp(o.out, j->want->out, o.nout) != 0 || memcmp(o.err, j->want->err, o.nerr) != 0)
            j->mismatches++;
        out_free(&o);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    files_t f;
    files_make(&f);
    const char *score[] = {NULL,    "--ref", f.ref,    "--hyp",        f.hyp,
                           "--src", f.src,   "--json", "--per-segment"};
    const char *table[] = {NULL, "--ref", f.ref, "--hyp", f.hyp, "--precision", "6"};
    const char *bad[] = {NULL, "--ref", f.ref, "--hyp", f.hyp, "--precision", "99"};
    out_t want[3]; /* the last two warn (no --target-lang) or fail on err */
    run(9, score, &want[0]);
    run(7, table, &want[1]);
    run(7, bad, &want[2]);
    assert_int_equal(want[0].rc, 0);
    assert_int_equal(want[1].rc, 0);
    assert_int_equal(want[2].rc, 2);
    job_t jobs[4] = {
        {9, score, &want[0], tu_rounds(40), 0},
        {9, score, &want[0], tu_rounds(40), 0},
        {7, table, &want[1], tu_rounds(40), 0},
        {7, bad, &want[2], tu_rounds(40), 0},
    };
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, job_run, &jobs[i]), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(jobs[i].mismatches, 0);
    }
    for (int i = 0; i < 3; i++)
        out_free(&want[i]);
    files_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streams),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
