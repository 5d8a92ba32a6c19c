/*
 * cli_xliff.h — what `adaptmon score --xliff` does besides parsing: the
 * languages a file declares reconciled with the command line's, the final
 * file paired with its pre-translated MT file (--xliff-mt), and the skipped
 * units counted per reason for the summary.
 */
#ifndef AM_CLI_XLIFF_H
#define AM_CLI_XLIFF_H

#include "config.h"
#include "xliff.h"

#include <jansson.h>
#include <stdio.h>

/* Where a language of the run came from: the command line (from NULL and
 * given 1), a file (from its path), or nowhere yet (given 0). */
typedef struct am_cli_xlang {
    int given;
    const char *from; /* borrowed path; NULL: the command line */
} am_cli_xlang;

/* Reconciles the source (target 0) or target (target 1) language file_lang
 * (NULL: the file declares none) that XLIFF file path declares with cfg:
 * none known yet -> cfg takes it (stopwords and tokenizer follow); the same
 * primary language -> nothing; another -> a message naming both on err
 * (borrowed) and 2. *st tracks where the current value came from. Returns
 * 0 or 2. */
int am_cli_xliff_lang(am_config *cfg, am_cli_xlang *st, int target, const char *file_lang,
                      const char *path, int version, FILE *err);

/* Replaces the MT hypotheses of final's segments with the target of the
 * unit of the same id in pre (a file read with am_xliff_parse_mt): final's
 * systems become pre's. A final segment without a partner keeps no
 * hypothesis and gets dropped = "no unit with this id in the MT file", or
 * the reason pre's unit was skipped ("pre-translated from tm, …").
 * pre is left empty of hypotheses (moved). */
void am_cli_xliff_pair(am_xliff_doc *final, am_xliff_doc *pre);

/* Skipped units counted per reason (all of them). */
typedef struct am_cli_skips {
    json_t *reasons; /* owned: {reason: count} */
    size_t total;
} am_cli_skips;

void am_cli_skips_init(am_cli_skips *k);
void am_cli_skips_cleanup(am_cli_skips *k);
void am_cli_skips_add(am_cli_skips *k, const char *reason);
/* "N segments scored, M skipped: a unconfirmed, b no target, …" on out,
 * prefixed "adaptmon score: ". */
void am_cli_skips_print(const am_cli_skips *k, size_t scored, FILE *out);
/* {"total": M, "reasons": {…}} (a new reference). */
json_t *am_cli_skips_json(const am_cli_skips *k);

#endif
