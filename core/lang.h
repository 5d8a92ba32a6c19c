/*
 * lang.h — language tags as CAT tools write them, in BCP 47 canonical form.
 *
 * memoQ writes ISO 639-2/B codes ("fre-FR", "ger-DE"), others ISO 639-3
 * ("fra", "zho"). The primary language subtag is mapped to the ISO 639-1
 * code where one exists (BCP 47 prefers it), from a table generated at build
 * time from the iso-codes package (tools/gen_langs.c); the rest of the tag is
 * kept, with '_' written '-'. Also the checks the TBX and XLIFF/TMX
 * readers make on tags (am_lang_tag_ok, am_lang_same). Pure functions, no
 * allocation.
 */
#ifndef AM_LANG_H
#define AM_LANG_H

#include "am.h"

/* Writes the canonical form of tag into out (size n): primary subtag lower
 * case and mapped as above, the subtags after it unchanged except '_' → '-'
 * ("fre-FR" → "fr-FR", "zho" → "zh", "EN_us" → "en-us"). *known (may be
 * NULL) is set to 1 when the primary subtag is an ISO 639 code, else 0 (the
 * tag is still written, lower-cased). Returns AM_OK, or AM_ERR_INVALID when
 * tag has no 2-8 letter primary subtag or out is too small. */
int am_lang_canonical(const char *tag, char *out, size_t n, int *known);

/* True when s (borrowed) is a plausible caller-supplied tag: 1..35 ASCII
 * letters, digits, '-' or '_', starting with a letter. */
int am_lang_tag_ok(const char *s);

/* True when tags a and b (borrowed) share their primary subtag, ASCII
 * case-insensitive: "en" ~ "en-US" ~ "EN_gb". An empty primary subtag
 * matches nothing. */
int am_lang_same(const char *a, const char *b);
/* am_lang_same on the canonical forms of a and b ("fre-FR" as memoQ writes
 * it ~ "fr"), or on the raw tags when either does not canonicalize. */
int am_lang_same_canonical(const char *a, const char *b);

/* The language a column header names, as its two-letter ISO 639-1 code in
 * out (size n >= 3): a two-letter code ("en"), a three-letter ISO 639-2/3
 * code of a language that has a two-letter one ("eng", "fre"), a BCP 47
 * tag with further subtags whose primary subtag is one of those ("en-US",
 * "fr_FR"), or the English name of such a language, ASCII
 * case-insensitive ("English", "French", "Spanish; Castilian" names each).
 * s is trimmed of ASCII blanks first. Returns AM_OK, or AM_ERR_NOTFOUND
 * when s names no language (also for an empty or oversized s). */
int am_lang_from_header(const char *s, char *out, size_t n);

#endif
