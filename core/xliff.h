/*
 * xliff.h — CAT-tool exchange files: XLIFF 1.2 / 2.x documents into
 * confirmed segments with their MT hypotheses (am_xliff_parse), and TMX
 * memories into background word counts (am_xliff_tmx_counts).
 *
 * Pure: parses from a memory buffer with libxml2 hardened as the TBX reader
 * (no network, no DTD loading, any entity declaration rejects the document,
 * libxml2's default depth limits, input validated as UTF-8 first).
 *
 * XLIFF 1.2: every <trans-unit> (segmented by <seg-source>'s
 * <mrk mtype="seg"> when present, as Trados and memoQ write it) is a
 * segment; <source>/<target> give the source and the confirmed translation.
 * A segment is confirmed when any of these holds:
 *   - <target state="final|signed-off|translated">;
 *   - <trans-unit approved="yes">;
 *   - Trados: the <sdl:seg id=MID conf="Translated|ApprovedTranslation|
 *     ApprovedSignOff"> of the segment (any namespace, local name seg-defs/seg);
 *   - memoQ: trans-unit attribute mq:status (any namespace, local name
 *     status) "ManuallyConfirmed|Reviewer1Confirmed|Reviewer2Confirmed|
 *     Proofread|Confirmed";
 *   - Phrase: trans-unit attribute m:confirmed (any namespace) "1|true|yes".
 * MT hypotheses are the <alt-trans> of the unit (alttranstype absent or
 * "proposal") in the target language that are machine translation: their
 * <target> has state-qualifier="mt-suggestion", or their phase-name names a
 * <phase> whose process-name says machine translation ("mt", "machine…"),
 * or origin/tool-id names MT ("mt", "MT-…", "…machine…") or an Okapi
 * okp:matchType="MT", or they carry origin/tool-id and no match-quality (a
 * TM match has one). The language of an alt-trans is its <target>'s
 * xml:lang, else its own xml:lang, else the file's target-language; one in
 * another language than the file's target-language (SAP's "reference
 * language" in the source language, a third language) is not a hypothesis.
 * Dropped candidates leave their reason in am_xliff_seg.dropped. The system
 * name is origin, else tool-id, else the phase's tool-id, else "mt".
 * XLIFF 2.x: each <segment> of a <unit> is a segment, confirmed when its
 * state is "translated", "reviewed" or "final"; MT hypotheses are the
 * unit's <mtc:match type="mt"> (the ref naming the segment, or any when the
 * unit has one segment) whose target's xml:lang, when given, is trgLang,
 * named by origin, else "mt".
 * Units with translate="no", without a target text or not confirmed are
 * skipped (reported with a reason), in document order.
 * Inline markup: the text of g, pc, mrk, sm/em spans and unknown elements is
 * kept; codes (x, bx, ex, ph, bpt, ept, it, sc, ec, cp, sub inside them) are
 * dropped. Whitespace runs collapse to one space; ends are trimmed.
 * Segment ids: the unit id ("u1"); "u1.S" when the unit has several
 * segments (S: mrk mid or segment id, else its 1-based index); prefixed by
 * "fN." (N: the 1-based <file> index) when the document has several
 * <file>s; then made API-safe: bytes outside [A-Za-z0-9._-] become '_',
 * and an id longer than 128 bytes is cut to 111 and suffixed with '.' and
 * 16 hex digits of a hash of the whole.
 */
#ifndef AM_XLIFF_H
#define AM_XLIFF_H

#include "am.h"
#include "config.h"
#include "recall.h"
#include "vocab.h"

#define AM_XLIFF_MAX_SYSTEMS 64

typedef struct am_xliff_seg {
    char *id; /* owned */
    char *source; /* owned; "" when absent */
    char *target; /* owned */
    size_t file; /* 0-based <file> index */
    size_t nhyp;
    size_t sys[AM_XLIFF_MAX_SYSTEMS]; /* index into am_xliff_doc.systems */
    char *hyp[AM_XLIFF_MAX_SYSTEMS]; /* owned */
    /* why an MT candidate of the unit was not taken (the first one dropped:
     * "alt-trans in the source language (de)", "alt-trans not marked as MT
     * (match-quality without an MT origin)", …); "" when none was dropped.
     * Lets a consumer say more than "no MT candidate" when nhyp is 0. */
    char dropped[112];
} am_xliff_seg;

typedef struct am_xliff_skip {
    char *id; /* owned */
    /* "unconfirmed", "no target", "translate=no", or (am_xliff_mt_each)
     * "pre-translated from tm, not MT (…)": borrowed for the callback's
     * duration; owned (a copy) in an am_xliff_doc of am_xliff_parse */
    const char *reason;
    size_t file; /* 0-based <file> index */
} am_xliff_skip;

typedef struct am_xliff_doc {
    int version; /* 12 or 20 (2.0, 2.1 and 2.2) */
    char *source_lang, *target_lang; /* owned or NULL */
    size_t nfiles;
    am_xliff_seg *segs; /* confirmed segments in document order */
    size_t nsegs;
    am_xliff_skip *skips;
    size_t nskips;
    char **systems; /* owned; MT system names in first-appearance order */
    size_t nsystems;
} am_xliff_doc;

/* Error report of a parse: the first problem's line (0: unknown) and a
 * message. */
typedef struct am_xliff_report {
    size_t line;
    char msg[240];
} am_xliff_report;

/* Receives one unit of am_xliff_each in document order: a confirmed
 * segment s (skip NULL) or a skipped one (s NULL). Both are borrowed for
 * the call only; info has the version, languages and the systems that
 * s->sys indexes. A non-zero return stops the reading and is returned by
 * am_xliff_each. */
typedef int (*am_xliff_unit_fn)(void *ctx, const am_xliff_doc *info, const am_xliff_seg *s,
                                const am_xliff_skip *skip);

/* Streams buf[0..len) (at most INT_MAX bytes): a first pass validates the
 * whole document (every error am_xliff_parse reports, before fn sees
 * anything), a second calls fn for every segment and skip. Memory stays
 * bounded by the largest unit, whatever the document's size: no tree, no
 * list of units. *info (zeroed first; segs and skips stay empty) receives
 * version, languages, nfiles and systems; the caller frees it with
 * am_xliff_free, also after an error. fn NULL: validation only. Returns
 * as am_xliff_parse, or fn's non-zero return. */
int am_xliff_each(const char *buf, size_t len, am_xliff_unit_fn fn, void *ctx, am_xliff_doc *info,
                  am_xliff_report *report);

/* Parses buf[0..len) (at most INT_MAX bytes) into *out (zeroed first;
 * caller frees with am_xliff_free, also after an error). report may be
 * NULL. Returns AM_OK; AM_ERR_UTF8/AM_ERR_NUL for bad bytes; AM_ERR_PARSE
 * for malformed or hostile XML, a document that is not XLIFF, a unit
 * without id, or more than AM_XLIFF_MAX_SYSTEMS systems; AM_ERR_RANGE for
 * an oversized input. */
int am_xliff_parse(const char *buf, size_t len, am_xliff_doc *out, am_xliff_report *report);
void am_xliff_free(am_xliff_doc *d);

/* The pre-translated file of a project (the MT pass, before post-editing),
 * for two-file scoring: as am_xliff_each, but every unit or segment with a
 * target text is handed over whatever its state, its target as the one
 * hypothesis (s->target and s->hyp[0] hold the same text), unless a CAT
 * tool's marker says the target came from elsewhere, which is a skip with
 * that reason:
 *   - Trados: <sdl:seg origin="mt|nmt|adaptive-mt"> of the segment is MT
 *     (system: origin-system), any other origin (tm, interactive,
 *     document-match, auto-propagated, …) is not;
 *   - Phrase: trans-unit m:trans-origin="mt" is MT, another value but
 *     "null" is not;
 *   - memoQ: trans-unit mq:status="MachineTranslated" is MT,
 *     "PreTranslated" (a TM match) is not;
 *   - XLIFF 1.2 <target state-qualifier> of a TM leverage (exact-match,
 *     fuzzy-match, id-match, leveraged-tm, …) is not;
 *   - no marker: the target is taken as MT (the file is the MT pass),
 *     system "mt". XLIFF 2.x targets carry no origin: all are taken.
 * Segment ids are made as for am_xliff_each, so a unit pairs with the same
 * unit of the final file. */
int am_xliff_mt_each(const char *buf, size_t len, am_xliff_unit_fn fn, void *ctx,
                     am_xliff_doc *info, am_xliff_report *report);
/* am_xliff_parse for a pre-translated file (am_xliff_mt_each's rules). */
int am_xliff_parse_mt(const char *buf, size_t len, am_xliff_doc *out, am_xliff_report *report);

/* Reads a TMX memory buf[0..len): for every <tu>, the <seg> of the <tuv>
 * whose xml:lang (or lang) shares its primary subtag with lang is split
 * into content words with rcfg (am_recall_content_words; its stopwords and
 * background are ignored) and each word's occurrences are added to out.
 * lang NULL or "": the language that is not the header's srclang when the
 * memory has exactly two languages, else an error. *chosen (may be NULL)
 * receives the language used (caller frees). Inline markup in seg is handled
 * as in XLIFF. Returns AM_OK or an error as am_xliff_parse (AM_ERR_INVALID
 * for a bad lang tag or when no side can be chosen). */
int am_xliff_tmx_counts(const char *buf, size_t len, const char *lang, const am_recall_config *rcfg,
                        am_vocab *out, char **chosen, size_t *nsegs, am_xliff_report *report);
/* am_xliff_tmx_counts with the run's source language src (NULL, "" or
 * "und": none), checked against the memory as XLIFF languages are
 * (issue 24 §3): a header srclang that is a language tag other than src,
 * or a memory whose <tuv>s have languages but none is src, is
 * AM_ERR_INVALID with a message naming both. Without lang, the side
 * counted is then the memory's language other than src (when it has
 * exactly two), whatever the header says. */
int am_xliff_tmx_counts_src(const char *buf, size_t len, const char *src, const char *lang,
                            const am_recall_config *rcfg, am_vocab *out, char **chosen,
                            size_t *nsegs, am_xliff_report *report);

/* The content-word settings a session with options cfg uses for its
 * background lookups (tokenizer, normalization, case folding, tag
 * stripping), for am_xliff_tmx_counts. */
void am_xliff_tmx_rcfg(const am_config *cfg, am_recall_config *out);

/* True when buf[0..len), after a BOM and whitespace, starts with '<' in
 * UTF-8 or UTF-16/32 (an XML document rather than "count word" lines). */
int am_xliff_looks_xml(const char *buf, size_t len);

#endif
