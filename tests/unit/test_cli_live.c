/* test_cli_live.c — cli/score_embed.c: a live session (am_cli_live) fed
 * segment by segment prints what `adaptmon score --json --per-segment`
 * prints for the same segments (its per-segment array aside, which holds
 * the new segment alone), a bad segment changes nothing, reset forgets
 * everything; am_cli_read_io prints the segments a plain file holds.
 * Python's Session and readers (python/adaptmon/_core.c) stand on these;
 * under ASan/valgrind this also checks the session's ownership. */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "score_embed.h"

static const char *const SRC[] = {"the cat sleeps", "the dog sleeps", "a cat and a dog"};
static const char *const REF[] = {"le chat dort", "le chien dort bien", "un chat et un chien"};
static const char *const HYP[] = {"le chat dort", "le chien dort", "un chat et le chien"};

/* A stream into memory (caller: stream_text). */
typedef struct {
    char *buf;
    size_t n;
    FILE *f;
} mem_t;

static void mem_open(mem_t *m)
{
    memset(m, 0, sizeof *m);
    m->f = open_memstream(&m->buf, &m->n);
    assert_non_null(m->f);
}

/* Closes the stream; returns its text (caller frees). */
static char *mem_text(mem_t *m)
{
    assert_int_equal(fclose(m->f), 0);
    return m->buf;
}

/* Writes lines[0..n) one a line to a new temporary file (caller frees the
 * path and unlinks). */
static char *tmp_lines(const char *const *lines, size_t n)
{
    char *path = strdup("/tmp/am_cli_live_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* `adaptmon score --json --per-segment` of the first n segments, parsed. */
static json_t *cli_json(size_t n)
{
    char *src = tmp_lines(SRC, n), *ref = tmp_lines(REF, n), *hyp = tmp_lines(HYP, n);
    char hyparg[64];
    snprintf(hyparg, sizeof hyparg, "mt=%s", hyp);
    char *argv[] = {"score", "--target-lang", "fr", "--json", "--per-segment", "--src",
                    src,     "--ref",         ref,  "--hyp",  hyparg};
    mem_t out, err;
    mem_open(&out);
    mem_open(&err);
    assert_int_equal(am_cli_score_io((int)(sizeof argv / sizeof argv[0]), argv, out.f, err.f), 0);
    char *o = mem_text(&out);
    free(mem_text(&err));
    json_t *j = json_loads(o, 0, NULL);
    assert_non_null(j);
    free(o);
    unlink(src);
    unlink(ref);
    unlink(hyp);
    free(src);
    free(ref);
    free(hyp);
    return j;
}

/* Adds segment i; returns the printed JSON parsed (NULL when the add
 * failed with status *rc). */
static json_t *add(am_cli_live *l, const char *src, const char *ref, const char *hyp, int *rc)
{
    mem_t out, err;
    mem_open(&out);
    mem_open(&err);
    const char *hyps[] = {hyp};
    *rc = am_cli_live_add(l, src, ref, hyps, out.f, err.f);
    char *o = mem_text(&out), *e = mem_text(&err);
    json_t *j = *rc == 0 ? json_loads(o, 0, NULL) : NULL;
    if (*rc != 0) {
        assert_int_equal(strlen(o), 0); /* nothing printed on an error */
        assert_non_null(strstr(e, "adaptmon score: segment"));
    }
    free(o);
    free(e);
    return j;
}

static am_cli_live *open_live(void)
{
    char *argv[] = {"score", "--target-lang", "fr"};
    const char *names[] = {"mt"};
    mem_t err;
    mem_open(&err);
    am_cli_live *l = NULL;
    assert_int_equal(am_cli_live_new(3, argv, names, 1, err.f, &l), 0);
    free(mem_text(&err));
    assert_non_null(l);
    return l;
}

/* Asserts that got (an add's JSON) is want (the CLI's) with per_segment
 * holding want's last segment alone. */
static void assert_same(json_t *got, json_t *want)
{
    json_t *segs = json_object_get(want, "per_segment");
    json_t *last = json_array_get(segs, json_array_size(segs) - 1);
    json_t *one = json_array();
    json_array_append(one, last);
    json_t *w = json_deep_copy(want);
    json_object_set_new(w, "per_segment", one);
    assert_true(json_equal(got, w));
    json_decref(w);
}

static void test_adds_equal_the_cli(void **state)
{
    (void)state;
    am_cli_live *l = open_live();
    for (size_t i = 0; i < 3; i++) {
        int rc;
        json_t *got = add(l, SRC[i], REF[i], HYP[i], &rc);
        assert_int_equal(rc, 0);
        json_t *want = cli_json(i + 1);
        assert_same(got, want);
        json_decref(got);
        json_decref(want);
        assert_int_equal(am_cli_live_count(l), i + 1);
    }
    am_cli_live_free(l);
}

static void test_bad_segment_changes_nothing_and_reset(void **state)
{
    (void)state;
    am_cli_live *l = open_live();
    int rc;
    json_decref(add(l, SRC[0], REF[0], HYP[0], &rc));
    assert_null(add(l, SRC[1], "bad \xff utf-8", HYP[1], &rc));
    assert_int_equal(rc, 1);
    assert_int_equal(am_cli_live_count(l), 1);
    json_t *got = add(l, SRC[1], REF[1], HYP[1], &rc); /* as if the bad one never came */
    json_t *want = cli_json(2);
    assert_same(got, want);
    json_decref(got);
    json_decref(want);
    am_cli_live_reset(l);
    assert_int_equal(am_cli_live_count(l), 0);
    got = add(l, SRC[0], REF[0], HYP[0], &rc);
    want = cli_json(1);
    assert_same(got, want);
    json_decref(got);
    json_decref(want);
    am_cli_live_free(l);
}

static void test_options_refused(void **state)
{
    (void)state;
    char *argv[] = {"score", "--paired-bs"};
    char *argv2[] = {"score", "--k-max", "x"};
    const char *names[] = {"a", "a"};
    mem_t err;
    mem_open(&err);
    am_cli_live *l = (am_cli_live *)1;
    assert_int_equal(am_cli_live_new(2, argv, names, 1, err.f, &l), 2);
    assert_null(l);
    assert_int_equal(am_cli_live_new(3, argv2, names, 1, err.f, &l), 2);
    assert_int_equal(am_cli_live_new(1, argv, names, 2, err.f, &l), 2); /* a name twice */
    assert_int_equal(am_cli_live_new(1, argv, names, 0, err.f, &l), 2); /* no system */
    char *e = mem_text(&err);
    assert_non_null(strstr(e, "significance"));
    assert_non_null(strstr(e, "named twice"));
    free(e);
}

static void test_read_plain(void **state)
{
    (void)state;
    char *ref = tmp_lines(REF, 3);
    char *argv[] = {"score", "--ref", ref};
    mem_t out, err;
    mem_open(&out);
    mem_open(&err);
    assert_int_equal(am_cli_read_io(3, argv, out.f, err.f), 0);
    char *o = mem_text(&out);
    free(mem_text(&err));
    json_t *j = json_loads(o, 0, NULL);
    assert_non_null(j);
    json_t *segs = json_object_get(j, "segments");
    assert_int_equal(json_array_size(segs), 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(segs, i), "target")),
                            REF[i]);
    assert_string_equal(json_string_value(json_object_get(json_array_get(segs, 2), "id")), "3");
    json_decref(j);
    free(o);
    unlink(ref);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adds_equal_the_cli),
        cmocka_unit_test(test_bad_segment_changes_nothing_and_reset),
        cmocka_unit_test(test_options_refused),
        cmocka_unit_test(test_read_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
