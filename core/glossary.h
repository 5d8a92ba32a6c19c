/*
 * glossary.h — an in-memory terminology glossary and its parsers.
 *
 * A glossary is a list of entries: a source string, one or more target
 * alternatives, a case-sensitive flag, a forbidden flag (the targets must
 * NOT be used; uses are reported) and an optional id. Parsers read memory
 * buffers (no I/O):
 *
 *   CSV/TSV  RFC 4180 quoting ("a, b" and "5 gestes ""barrière""" work), CRLF
 *            or LF records, an optional UTF-8 BOM. A header row is recognised
 *            by column NAME (case-insensitive):
 *              source:  source, src, sourcestring, source_term, term
 *              target:  target, targets, tgt, targetstring, target_term, translation
 *              id:      id, stringid, entry_id
 *              flags:   case_sensitive (or casesensitive, case),
 *                       forbidden (or do_not_use)
 *            values true/false, 1/0, yes/no, y/n, empty = false.
 *            Other columns (sourceLang, targetLang, pos, description, …)
 *            are ignored, so the TICO-19 files (f_*.csv and g_*.csv) load
 *            as they are. A first row whose first two fields name two
 *            different languages (ISO 639 codes, BCP 47 tags or English
 *            names: "en,fr", "English,French", "en-US,fr-FR"; see
 *            am_lang_from_header) is a language header: its columns are
 *            mapped by language to the source and target languages given
 *            to am_gloss_parse_langs (so "fr,en" is read swapped; a header
 *            without both languages is an AM_ERR_INVALID error), or read as
 *            source, target without them. Without a header (first row
 *            names no source AND target column, nor two languages) every
 *            row needs 2+ columns: source, target; further columns are
 *            ignored.
 *            Targets holding '|' are split into alternatives ("a|b").
 *            Source and targets are trimmed of ASCII whitespace. Blank
 *            lines are ignored; rows whose source and target are both empty
 *            (the TICO-19 es file has 306 such padding rows) are skipped and
 *            counted in report.skipped. A row with only one of them empty is
 *            an error. An empty input is an empty glossary.
 *   JSON     (jansson) [{"source":"…","targets":["…"],"case_sensitive":false,
 *            "forbidden":false,"id":"…"}] or {"entries":[…]}; "target":"…"
 *            (one string, not split) is accepted instead of "targets"; id
 *            may be a string or an integer; unknown keys are ignored.
 *
 *   TBX      (libxml2) TermBase eXchange, see am_gloss_parse_tbx.
 *
 * Errors carry a 1-based line number (and column where known); JSON errors
 * about an entry's content carry the 1-based entry number instead (jansson
 * keeps no positions for values). Parsers never crash on garbage and
 * respect the size limits of am_gloss_limits.
 *
 * Matching (tokenization, normalization, stems) is done on a compiled form
 * built by terms.h (am_terms_lex_build), not here: this module has no
 * dependency on the text pipeline.
 */
#ifndef AM_GLOSSARY_H
#define AM_GLOSSARY_H

#include "am.h"

typedef struct am_gloss_entry {
    char *source; /* owned, non-empty, valid UTF-8 */
    char **targets; /* owned array of n_targets owned non-empty strings */
    size_t n_targets; /* >= 1 */
    int case_sensitive;
    int forbidden;
    char *id; /* owned; NULL when the entry has no id */
} am_gloss_entry;

typedef struct am_gloss {
    am_gloss_entry *v; /* v[0..n-1] */
    size_t n;
    size_t cap;
    /* packed (am_gloss_pack): v, the targets arrays and every string are
     * in this one allocation of block_bytes and the glossary is read-only;
     * NULL: each is its own allocation */
    void *block;
    size_t block_bytes;
} am_gloss;

enum am_gloss_format {
    AM_GLOSS_AUTO = 0, /* TBX when the input (after an optional BOM and ASCII
                          whitespace) starts with "<?xml", "<martif" or "<tbx";
                          JSON when the first non-space byte is '[' or '{';
                          TSV when the first line holds a tab; else CSV */
    AM_GLOSS_CSV,
    AM_GLOSS_TSV,
    AM_GLOSS_JSON,
    AM_GLOSS_TBX /* languages picked from the document (am_gloss_parse_tbx) */
};

typedef struct am_gloss_limits {
    size_t max_bytes; /* input size (default 64 MiB) */
    size_t max_entries; /* entries in one glossary (default 1,000,000) */
    size_t max_field_bytes; /* one CSV field / JSON string (default 64 KiB) */
    size_t max_targets; /* alternatives per entry (default 64) */
    size_t max_columns; /* CSV columns per row (default 256) */
} am_gloss_limits;

typedef struct am_gloss_report {
    enum am_gloss_format format; /* the format actually parsed */
    int has_header; /* CSV/TSV: a header row was recognised */
    int lang_header; /* ... and it named languages (column mapping by language) */
    size_t rows; /* data rows (skipped ones included) / JSON entries read */
    size_t skipped; /* empty rows skipped (CSV/TSV) */
    /* On error: */
    size_t line; /* 1-based line of the error, 0 when unknown */
    size_t column; /* 1-based byte column, 0 when unknown */
    size_t entry; /* JSON: 1-based entry number of a content error, else 0 */
    char msg[256]; /* "line 12: unterminated quoted field", "" on success */
} am_gloss_report;

/* Returns the default limits. */
am_gloss_limits am_gloss_limits_default(void);

/* Initializes an empty glossary (no allocation). Pair with am_gloss_cleanup. */
void am_gloss_init(am_gloss *g);
/* Frees every entry; g is empty and reusable afterwards. */
void am_gloss_cleanup(am_gloss *g);
/* Moves the entries of g into one allocation sized exactly (strings,
 * targets arrays and entries; g->block), in place: equal entries in the
 * same order, a fraction of the bytes (no per-string malloc headers or
 * array slack) for a glossary kept as long as its sessions live. g must
 * not be added to afterwards; am_gloss_cleanup frees it. A packed or
 * empty g is left as it is. */
void am_gloss_pack(am_gloss *g);
/* Copies packed glossary src into dst (empty, am_gloss_init): one
 * allocation of the same bytes, its pointers moved to the copy (a packed
 * glossary is relocatable: every pointer in it points into its block).
 * dst is packed and owned by the caller (am_gloss_cleanup). */
void am_gloss_copy_packed(const am_gloss *src, am_gloss *dst);
/* Heap bytes g holds: its block when packed, else its entries array and
 * each string, counted with the allocator's per-block overhead
 * (overhead bytes each). */
size_t am_gloss_bytes(const am_gloss *g, size_t overhead);

/* Appends an entry, copying every string (the caller keeps its own).
 * source and each target must be non-empty valid UTF-8 without NUL bytes
 * (empty → AM_ERR_INVALID, invalid → AM_ERR_UTF8); id may be NULL.
 * n_targets must be >= 1 (else AM_ERR_INVALID). On error g is unchanged. */
int am_gloss_add(am_gloss *g, const char *source, const char *const *targets, size_t n_targets,
                 int case_sensitive, int forbidden, const char *id);

/* Parses buf[0..len) in the given format and appends its entries to out,
 * which must be empty (am_gloss_init). limits NULL → defaults. report may
 * be NULL. Returns AM_OK; AM_ERR_PARSE (malformed), AM_ERR_UTF8 (invalid
 * UTF-8), AM_ERR_NUL (NUL byte), AM_ERR_RANGE (a limit exceeded) or
 * AM_ERR_INVALID (bad argument), with report->line/msg set. On error out is
 * left empty. The entries are owned by out (am_gloss_cleanup). */
int am_gloss_parse(const char *buf, size_t len, enum am_gloss_format format,
                   const am_gloss_limits *limits, am_gloss *out, am_gloss_report *report);
/* am_gloss_parse with the session's languages (either may be NULL) for a
 * CSV/TSV language header (see above); other formats ignore them. */
int am_gloss_parse_langs(const char *buf, size_t len, enum am_gloss_format format,
                         const char *source_lang, const char *target_lang,
                         const am_gloss_limits *limits, am_gloss *out, am_gloss_report *report);

/* Parses a TBX glossary (ISO 30042: TBX-Basic / TBX v2 <martif> with
 * termEntry/langSet/tig|ntig, and TBX v3 <tbx> with conceptEntry/langSec/
 * termSec; element names are matched by local name, any namespace) from
 * buf[0..len) and appends its entries to out, which must be empty.
 * Implemented in tbx.c with libxml2.
 *
 * Languages: source_lang / target_lang (e.g. "en", "fr-FR") match the
 * xml:lang of langSet/langSec by primary subtag, ASCII case-insensitively
 * ("en" matches "en-US" and "EN_gb"). NULL source_lang → the language of the
 * first langSet/langSec of the first entry; NULL target_lang → the first
 * language in document order whose primary subtag differs from the source.
 * Both given with the same primary subtag → AM_ERR_INVALID.
 *
 * Each concept entry (termEntry/conceptEntry) gives, for every distinct
 * source term, one entry whose alternatives are the distinct target terms
 * in document order, and — when some target terms have administrativeStatus
 * (termNote type="administrativeStatus" or "normativeAuthorization", or an
 * <administrativeStatus> element) deprecatedTerm-admn-sts,
 * supersededTerm-admn-sts, deprecated(Term) or superseded(Term) — a second
 * entry with forbidden = 1 holding those. id = the entry's id attribute
 * (NULL when absent); case_sensitive = 0. Term text is trimmed and inner
 * ASCII whitespace runs are collapsed to one space. Entries without a
 * source term or without a target term are skipped (report->skipped);
 * report->rows counts the concept entries read.
 *
 * Security: no entity expansion, no DTD or network access; a DOCTYPE that
 * declares any entity, or a reference to an undeclared entity, is rejected
 * (AM_ERR_PARSE). Limits: max_bytes (input), max_entries, max_field_bytes
 * (a term or id), max_targets (target alternatives of one entry, and also
 * distinct source terms of one concept entry).
 * Returns AM_OK; AM_ERR_PARSE (malformed XML with libxml2's message and
 * line/column, empty input, root not <martif>/<tbx>), AM_ERR_UTF8 /
 * AM_ERR_NUL (with line/column), AM_ERR_RANGE (a limit) or AM_ERR_INVALID
 * (bad argument or language tag). On error out is left empty. report may
 * be NULL. The entries are owned by out (am_gloss_cleanup). Thread-safe
 * (no global handler is installed; see tbx.c about xmlInitParser). */
int am_gloss_parse_tbx(const char *buf, size_t len, const char *source_lang,
                       const char *target_lang, const am_gloss_limits *limits, am_gloss *out,
                       am_gloss_report *report);

/* Parses "csv", "tsv", "json", "tbx", "auto". Returns AM_OK or AM_ERR_INVALID. */
int am_gloss_format_parse(const char *name, enum am_gloss_format *out);
const char *am_gloss_format_name(enum am_gloss_format f);

#endif
