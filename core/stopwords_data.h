/*
 * stopwords_data.h — internal interface between core/stopwords.c and the
 * build-time generated $(BUILD)/gen/stopwords_data.c (tools/gen_stopwords.c).
 * Not part of the public API; only stopwords.c includes it.
 */
#ifndef AM_STOPWORDS_DATA_H
#define AM_STOPWORDS_DATA_H

#include <stddef.h>

/* One built-in list: words exactly as in the data file (UTF-8, in file
 * order, duplicates removed by the generator). */
typedef struct am_sw_list {
    const char *source; /* "snowball" or "iso" */
    const char *lang; /* primary language code, lower case ("fr") */
    const char *const *words; /* words[0..n) */
    size_t n;
} am_sw_list;

/* The table of every built-in list, sorted by (source, lang). */
extern const am_sw_list am_sw_lists[];
extern const size_t am_sw_nlists;

#endif
