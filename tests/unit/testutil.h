/*
 * testutil.h — helpers shared by the cmocka unit tests.
 *
 * Tests locate the repository's data/ through AM_SRCDIR (set by the
 * Makefile), or the environment variable AM_SRCDIR when given.
 */
#ifndef AM_TESTUTIL_H
#define AM_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>

#include "glossary.h"
#include "sgml.h"

/* CMOCKA_FILTER=<pattern> in the environment runs only the tests whose
 * names match (cmocka's * and ? wildcards), e.g. one test by its name:
 * every test binary's main() calls cmocka_run_group_tests, which this
 * wraps. */
void tu_filter_from_env(void);
/* n, or n / 10 (at least 1) when the binary runs under valgrind
 * (tests/run.sh sets VALGRIND=1): randomized rounds whose count only buys
 * confidence, not coverage of another path, run 50x slower there. */
long tu_rounds(long n);
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown)                           \
    (tu_filter_from_env(), _cmocka_run_group_tests(#group_tests, group_tests,                      \
                                                   sizeof(group_tests) / sizeof((group_tests)[0]), \
                                                   group_setup, group_teardown))

/* Returns a malloc'd absolute path "<srcdir>/<rel>" (caller frees). */
char *tu_path(const char *rel);
/* Reads a whole file under the source tree; returns a malloc'd NUL-terminated
 * buffer (caller frees) and its length in *len (may be NULL). Fails the test
 * when the file cannot be read. */
char *tu_read(const char *rel, size_t *len);
/* Loads a JSON file under the source tree (caller json_decref's). Fails the
 * test on error. */
json_t *tu_json(const char *rel);
/* Parses the WMT SGML file rel (under the source tree) with am_sgml_parse
 * into *doc (caller releases it with am_sgml_free). Fails the test, naming
 * the file and line, when it cannot be read or parsed. */
void tu_sgml_load(const char *rel, am_sgml_doc *doc);

/* Parses the glossary file rel (format by extension, am_gloss_parse AUTO)
 * into *g, which it initializes (caller cleans it up). Fails the test on
 * error. */
void tu_gloss_load(const char *rel, am_gloss *g);
/* The three TICO-19 dev files (TU_TICO_*, each parsed with tu_sgml_load;
 * caller frees them) and the TICO-19 En-Fr glossary into *g
 * (tu_gloss_load). */
void tu_tico_docs(am_sgml_doc *ref, am_sgml_doc *hyp, am_sgml_doc *src, am_gloss *g);

/* The TICO-19 En-Fr dev set of data/tico19-enfr-dev, segments paired by id. */
#define TU_TICO_SRC "data/tico19-enfr-dev/dev.en-fr.en.sgm"
#define TU_TICO_REF "data/tico19-enfr-dev/dev.en-fr.fr.sgm"
#define TU_TICO_HYP "data/tico19-enfr-dev/en-fr.dev.txt.truecased.sgm"

/* One reference segment with the source and hypothesis segments of the same
 * id. Texts are am_sgml_seg.text (data/README.md: tags removed, entities
 * decoded, whitespace collapsed); the *_seg pointers give the rest (raw
 * content, term tags). src/hyp and their *_seg are NULL when that file has
 * no segment of this id. Everything points into the owning tu_tico. */
typedef struct tu_tico_seg {
    const char *id;
    const char *src, *ref, *hyp;
    const am_sgml_seg *src_seg, *ref_seg, *hyp_seg;
} tu_tico_seg;

typedef struct tu_tico {
    am_sgml_doc src, ref, hyp; /* the three parsed files */
    tu_tico_seg *segs; /* one per reference segment, in reference order */
    size_t n;
} tu_tico;

/* Loads the three dev files into *t (caller releases with tu_tico_free).
 * Fails the test when a file cannot be read or parsed. */
void tu_tico_load(tu_tico *t);
/* Frees everything t owns. */
void tu_tico_free(tu_tico *t);

/* Asserts |a-b| <= tol, printing both values on failure. */
#define tu_assert_close(a, b, tol) tu_assert_close_((a), (b), (tol), __FILE__, __LINE__)
void tu_assert_close_(double a, double b, double tol, const char *file, int line);

/* ---- the multilingual golden cases (data/golden/multilingual.json) ----- */

/* One golden case's command "sacrebleu REF... -i HYP -m M FLAGS...", parsed:
 * reference and hypothesis file names (borrowed from words) and flags. */
typedef struct tu_ml_cmd {
    char *words; /* copy of the command, split in place */
    const char *refs[4];
    size_t nrefs;
    const char *hyp;
    const char *flags[12]; /* "--x" or "--x N" pairs as two entries */
    size_t nflags;
} tu_ml_cmd;

/* The files of a golden case: hypotheses and references[0..nrefs) (each
 * nseg lines). */
typedef struct tu_ml_files {
    char *hbuf, **hyp;
    char *rbuf[4], **ref[4];
    size_t nseg, nrefs;
} tu_ml_files;

/* The lines of the data file rel (split at '\n', no final empty line) into
 * *lines (malloc'd, pointing into *buf, which the caller frees with it). */
size_t tu_ml_lines(const char *rel, char **buf, char ***lines);
/* Parses a golden case's sacreBLEU command into *c (free c->words). */
void tu_ml_cmd_parse(const char *command, tu_ml_cmd *c);
/* 1 when the case has flag f; *val receives the next word when not NULL. */
int tu_ml_has(const tu_ml_cmd *c, const char *f, const char **val);
/* Loads a case's hypothesis and reference files into *f (tu_ml_files_free). */
void tu_ml_files_load(json_t *golden, const json_t *cs, const tu_ml_cmd *c, tu_ml_files *f);
void tu_ml_files_free(tu_ml_files *f);

#endif
