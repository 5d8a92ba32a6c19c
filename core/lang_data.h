/*
 * lang_data.h — internal interface between core/lang.c and the build-time
 * generated $(BUILD)/gen/lang_data.c (tools/gen_langs.c, from the iso-codes
 * package's ISO 639 tables). Only lang.c includes it.
 */
#ifndef AM_LANG_DATA_H
#define AM_LANG_DATA_H

#include <stddef.h>

/* One language code and its BCP 47 primary language subtag. */
typedef struct am_lang_code {
    const char *code; /* ISO 639-1, 639-2/T, 639-2/B or 639-3, lower case */
    const char *canon; /* the 639-1 code where one exists, else the 3-letter code */
} am_lang_code;

/* Every code, sorted by code (strcmp), each once. */
extern const am_lang_code am_lang_codes[];
extern const size_t am_lang_ncodes;

/* An English language name (ASCII lower case) and its two-letter code. */
typedef struct am_lang_name {
    const char *name;
    const char *canon;
} am_lang_name;

/* Every name of a language with a two-letter code, sorted by name, each once. */
extern const am_lang_name am_lang_names[];
extern const size_t am_lang_nnames;

#endif
