/*
 * embedded.h — files compiled into the binary at build time by
 * tools/embed.c (the schema migrations, openapi.yaml, the dashboard): the
 * program needs no file beside it at run time.
 */
#ifndef AM_EMBEDDED_H
#define AM_EMBEDDED_H

#include <stddef.h>

typedef struct am_embedded_file {
    const char *path; /* repository path, e.g. "schema/001_init.sql" */
    const unsigned char *data; /* contents, followed by a NUL byte */
    size_t len; /* length without the NUL */
} am_embedded_file;

/* The embedded files in path order; *n receives their number. */
const am_embedded_file *am_embedded_files(size_t *n);
/* The file with this path, or NULL. */
const am_embedded_file *am_embedded_find(const char *path);

#endif
