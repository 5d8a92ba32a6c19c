/*
 * score_embed.h — `adaptmon score` for a program that embeds it
 * (python/adaptmon/_core.c): a live session scored one segment at a time,
 * and the CLI's input readers on their own.
 *
 * Both take the command line's own options (argv[0] "score", then options
 * as `adaptmon score` takes them) and print what they produce as the CLI's
 * JSON on the stream given; messages go to the err stream given, with the
 * CLI's wording. Nothing here touches process-wide state: any number of
 * threads may use different objects at once (one object is not
 * thread-safe: its caller serializes the calls on it).
 */
#ifndef AM_SCORE_EMBED_H
#define AM_SCORE_EMBED_H

#include <stddef.h>
#include <stdio.h>

/* A session of `adaptmon score --json --per-segment` kept open: the
 * scorer, the word history of the confirmed translations (in memory) and
 * the systems' running totals. Each am_cli_live_add scores only the new
 * segment against that history, so n segments cost O(n), and prints
 * exactly what `adaptmon score --json --per-segment` prints for the
 * segments added so far, except that "per_segment" holds the new segment
 * alone. */
typedef struct am_cli_live am_cli_live;

/* Opens a session: argv[0..argc) the options (argv[0] "score"; no input
 * option: the texts come through am_cli_live_add), names[0..nnames) the
 * systems (copied; non-empty, distinct, at most 64). The glossary,
 * background memory and stopword file named by the options are read now.
 * Warnings (e.g. no --target-lang) and errors go to err. Returns 0 with
 * *out a new session (am_cli_live_free frees it), else the CLI's exit
 * status (1 bad input, 2 usage) with *out NULL. */
int am_cli_live_new(int argc, char **argv, const char *const *names, size_t nnames, FILE *err,
                    am_cli_live **out);
/* Scores one segment (texts borrowed, NUL-terminated; source may be NULL:
 * no glossary terms; hyps[0..nsys) in the order of the names) against the
 * history, adds it, and prints the JSON on out. Returns 0, or 1 after a
 * message on err (invalid UTF-8, a NUL, too many term occurrences): then
 * the session is unchanged. */
int am_cli_live_add(am_cli_live *l, const char *source, const char *translation,
                    const char *const *hyps, FILE *out, FILE *err);
/* Number of segments added since the session was opened or reset. */
size_t am_cli_live_count(const am_cli_live *l);
/* Forgets every segment: an empty history and zero totals (the scorer and
 * its glossary stay). */
void am_cli_live_reset(am_cli_live *l);
void am_cli_live_free(am_cli_live *l);

/* Reads the inputs named by argv (argv[0] "score", then the CLI's input
 * and option arguments: --ref/--src/--hyp/-r plain files, --sgm-ref/
 * --sgm-src/--sgm-hyp WMT SGML, --xliff/--xliff-mt, --glossary with
 * --glossary-format, --background, the languages) exactly as `adaptmon
 * score` reads them, and prints on out what was read as JSON:
 *   {"source_lang", "target_lang", "systems": [names],
 *    "sessions": [{"first", "n", "doc"}],
 *    "segments": [{"id", "doc", "source", "target", "references": [more],
 *                  "hypotheses": {name: text},
 *                  "terms": [{"id", "source", "target", "text", "tok_start",
 *                             "tok_count"}] (SGML: the reference's <term> tags)}],
 *    "skipped": {"total", "reasons"} (XLIFF),
 *    "glossary": [{"source", "targets", "case_sensitive", "forbidden", "id"}],
 *    "background": {word: count}}
 * (each part present when its input was given). Hypotheses are optional
 * here (the CLI needs one to score). Returns 0, or the CLI's exit status
 * after its message on err. */
int am_cli_read_io(int argc, char **argv, FILE *out, FILE *err);

#endif
