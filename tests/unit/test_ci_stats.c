/* test_ci_stats.c — the per-segment ?ci= statistics record
 * (server/live/ci_stats.c): what a POST stores decodes to the statistics
 * it scored, by system name; a damaged, truncated or foreign record is
 * rejected and never yields other numbers. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ci_stats.h"
#include "config.h"
#include "vocab.h"

static am_scorer *make_scorer(int k)
{
    am_config c;
    am_config_init(&c);
    assert_int_equal(am_config_set(&c, "target_lang", "fr", NULL), AM_OK);
    assert_int_equal(am_config_set(&c, "source_lang", "en", NULL), AM_OK);
    if (k >= 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", k);
        assert_int_equal(am_config_set(&c, "k", v, NULL), AM_OK);
    }
    am_scorer *s = NULL;
    assert_int_equal(am_scorer_new(&c, NULL, 0, NULL, NULL, &s, NULL), AM_OK);
    return s;
}

/* Scores one two-system segment with two references (chrF++ may pick its
 * own) against a history in which "chat" was seen once; encodes it. */
static void scored(const am_scorer *s, am_score_ws *ws, am_seg_result *res, am_buf *rec)
{
    am_vocab *hist = am_vocab_new();
    am_vocab_set(hist, "chat", 1);
    const char *hyps[] = {"le chat est assis sur le tapis rouge", "un chien dort sous la table"};
    const char *more[] = {"le chat s'assoit sur le tapis"};
    am_seg_input in = {"the cat sits on the red mat",
                       "le chat est assis sur le tapis",
                       hyps,
                       2,
                       NULL,
                       0,
                       0,
                       more,
                       1};
    assert_int_equal(am_score_segment(s, ws, &in, am_recall_vocab_lookup, hist, res, NULL), AM_OK);
    const char *names[] = {"base", "good"};
    am_buf_init(rec);
    am_cistats_encode(s, res, names, rec);
    am_vocab_free(hist);
}

/* What every record test starts from: the scorer (k -1), a workspace, the
 * segment of scored() and its record. fx_close frees them. */
typedef struct rec_fx {
    am_scorer *s;
    am_score_ws *ws;
    am_seg_result res;
    am_buf rec;
} rec_fx;

static void fx_open(rec_fx *f)
{
    f->s = make_scorer(-1);
    f->ws = am_score_ws_new();
    scored(f->s, f->ws, &f->res, &f->rec);
}

static void fx_close(rec_fx *f)
{
    am_buf_cleanup(&f->rec);
    am_score_ws_free(f->ws);
    am_scorer_free(f->s);
}

static void assert_same_sys(const am_config *cfg, const am_sys_seg *a, const am_sys_seg *b)
{
    for (int k = 0; k <= cfg->k; k++) {
        assert_int_equal(a->recall.r[k].hits, b->recall.r[k].hits);
        assert_int_equal(a->recall.r[k].total, b->recall.r[k].total);
    }
    assert_int_equal(a->recall.r01.hits, b->recall.r01.hits);
    assert_int_equal(a->recall.r01.total, b->recall.r01.total);
    assert_true(a->ter_edits == b->ter_edits);
    assert_true(a->term_edits == b->term_edits);
    assert_int_equal(a->ter_ref_len, b->ter_ref_len);
    assert_true(a->ter_avg_ref_len == b->ter_avg_ref_len);
    assert_int_equal(a->has_bleu, b->has_bleu);
    assert_int_equal(a->chrfpp_own, b->chrfpp_own);
    assert_memory_equal(&a->bleu, &b->bleu, sizeof a->bleu);
    assert_memory_equal(&a->chrf, &b->chrf, sizeof a->chrf);
    if (a->chrfpp_own)
        assert_memory_equal(&a->chrfpp, &b->chrfpp, sizeof a->chrfpp);
}

/* Decoded by name, in another order and with a column the segment lacks:
 * each system's statistics as scored, the missing one zero. */
static void test_round_trip_by_name(void **state)
{
    (void)state;
    rec_fx f;
    fx_open(&f);
    am_scorer *s = f.s;
    assert_true(f.res.sys[0].has_bleu && f.res.sys[0].bleu.sys_len > 0);
    assert_true(f.res.sys[0].recall.r[1].hits + f.res.sys[0].recall.r[1].total > 0);
    const char *cols[] = {"good", "other", "base"};
    am_sys_seg out[3];
    assert_int_equal(am_cistats_decode(s, am_buf_str(&f.rec), cols, 3, out), AM_OK);
    const am_config *cfg = am_scorer_config(s);
    assert_same_sys(cfg, &f.res.sys[1], &out[0]);
    assert_same_sys(cfg, &f.res.sys[0], &out[2]);
    assert_int_equal(out[1].has_bleu, 0);
    assert_int_equal(out[1].recall.k, cfg->k);
    assert_int_equal(out[1].recall.r[0].total, 0);
    assert_int_equal(out[2].terms_totals.n_windows, cfg->nwindows);
    fx_close(&f);
}

/* am_cistats_read (GET …/curve's reader): every system in the record's
 * order with its statistics as scored; a damaged record or one of another
 * scorer rejected with no system. */
static void test_read_in_stored_order(void **state)
{
    (void)state;
    rec_fx f;
    fx_open(&f);
    am_scorer *s = f.s, *s2 = make_scorer(2);
    am_cistats_rec *out = calloc(1, sizeof *out);
    assert_non_null(out);
    assert_int_equal(am_cistats_read(s, am_buf_str(&f.rec), out), AM_OK);
    assert_int_equal(am_cistats_read(s, am_buf_str(&f.rec), out), AM_OK); /* sig kept */
    const am_config *cfg = am_scorer_config(s);
    assert_int_equal(out->nsys, 2);
    assert_string_equal(out->name[0], "base");
    assert_string_equal(out->name[1], "good");
    assert_same_sys(cfg, &f.res.sys[0], &out->sys[0]);
    assert_same_sys(cfg, &f.res.sys[1], &out->sys[1]);
    assert_int_equal(out->sys[1].terms_totals.n_windows, cfg->nwindows);
    char *t = am_xstrdup(am_buf_str(&f.rec));
    t[20] = t[20] == 'A' ? 'B' : 'A';
    assert_int_equal(am_cistats_read(s, t, out), AM_ERR_INVALID);
    assert_int_equal(out->nsys, 0);
    assert_int_equal(am_cistats_read(s2, am_buf_str(&f.rec), out), AM_ERR_INVALID);
    assert_int_equal(am_cistats_read(s, NULL, out), AM_ERR_INVALID);
    free(t);
    free(out);
    am_scorer_free(s2);
    fx_close(&f);
}

/* Every one-character change and every truncation: rejected, or (a change
 * in the unused bits of the last base64 digit) the very same numbers. */
static void test_damage_rejected(void **state)
{
    (void)state;
    rec_fx f;
    fx_open(&f);
    am_scorer *s = f.s;
    const char *cols[] = {"base", "good"};
    am_sys_seg want[2], got[2];
    assert_int_equal(am_cistats_decode(s, am_buf_str(&f.rec), cols, 2, want), AM_OK);
    char *t = am_xstrdup(am_buf_str(&f.rec));
    size_t n = strlen(t);
    const char subst[] = {'A', 'B', '/', '=', '*', 'z'};
    size_t accepted = 0;
    for (size_t i = 0; i < n; i++) {
        char was = t[i];
        for (size_t j = 0; j < sizeof subst; j++) {
            if (subst[j] == was)
                continue;
            t[i] = subst[j];
            if (am_cistats_decode(s, t, cols, 2, got) == AM_OK) {
                accepted++;
                assert_same_sys(am_scorer_config(s), &want[0], &got[0]);
                assert_same_sys(am_scorer_config(s), &want[1], &got[1]);
            }
        }
        t[i] = was;
    }
    assert_true(accepted <= 2 * sizeof subst); /* only the last digits' spare bits */
    for (size_t len = 0; len < n; len++) {
        t[len] = '\0';
        assert_int_equal(am_cistats_decode(s, t, cols, 2, got), AM_ERR_INVALID);
        strcpy(t, am_buf_str(&f.rec));
    }
    assert_int_equal(am_cistats_decode(s, NULL, cols, 2, got), AM_ERR_INVALID);
    free(t);
    fx_close(&f);
}

/* A record made by another scorer (another k: another signature and
 * layout) is not used. */
static void test_other_scorer_rejected(void **state)
{
    (void)state;
    rec_fx f;
    fx_open(&f);
    am_scorer *s2 = make_scorer(3);
    const char *cols[] = {"base", "good"};
    am_sys_seg got[2];
    assert_int_equal(am_cistats_decode(s2, am_buf_str(&f.rec), cols, 2, got), AM_ERR_INVALID);
    am_scorer_free(s2);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_by_name),
        cmocka_unit_test(test_damage_rejected),
        cmocka_unit_test(test_read_in_stored_order),
        cmocka_unit_test(test_other_scorer_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
