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

/* Returns a malloc'd absolute path "<srcdir>/<rel>" (caller frees). */
char *tu_path(const char *rel);
/* Reads a whole file under the source tree; returns a malloc'd NUL-terminated
 * buffer (caller frees) and its length in *len (may be NULL). Fails the test
 * when the file cannot be read. */
char *tu_read(const char *rel, size_t *len);
/* Loads a JSON file under the source tree (caller json_decref's). Fails the
 * test on error. */
json_t *tu_json(const char *rel);
/* Asserts |a-b| <= tol, printing both values on failure. */
#define tu_assert_close(a, b, tol) tu_assert_close_((a), (b), (tol), __FILE__, __LINE__)
void tu_assert_close_(double a, double b, double tol, const char *file, int line);

#endif
