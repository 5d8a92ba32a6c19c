/* store_fixture.h — the fixture shared by the store's unit tests
 * (test_store.c, test_store_vocab.c, test_store_files.c; defined in
 * store_fixture.c). */
#ifndef AM_STORE_FIXTURE_H
#define AM_STORE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct sf_fixture {
    char dir[64];
    char path[256];
} sf_fixture;

typedef struct sf_seqs {
    int64_t v[1024];
    size_t n;
    int stop_at; /* stop the walk after this many (0 = never) */
} sf_seqs;

typedef struct sf_segrows {
    int64_t seq[64];
    int64_t created[64];
    size_t n;
    int bad;
} sf_segrows;

/* Removes path and, for a directory, everything under it. */
void sf_rm_rf(const char *path);

/* cmocka setup: a new temporary directory and a store path two missing
 * directories below it in a fixture (*state, owned by sf_teardown). */
int sf_setup(void **state);

/* cmocka teardown: removes the fixture's directory and frees it. */
int sf_teardown(void **state);

/* Opens the store at path or fails the test; caller closes. */
am_store *sf_open_store(const char *path, enum am_durability d);

/* Highest NNN among the embedded schema/NNN_*.sql files. */
int sf_embedded_schema_version(void);

/* One integer from a raw SQLite query on the database file (the tests look
 * at the file independently of the store). */
int64_t sf_raw_int(const char *path, const char *sql);

/* Runs sql on the database file directly (fails the test on an error). */
void sf_raw_exec(const char *path, const char *sql);

/* Inserts segment seq of session with the given words in one transaction. */
void sf_post_segment(am_store *st, const char *session, const char *client_id,
                     const char *const *words, size_t nwords, const char *stats);

/* A seq callback appending seq to the seqs ctx. */
int sf_collect_seq(void *ctx, int64_t seq);

/* A segments_each callback recording seq and created_at into the
 * sf_segrows ctx; bad counts rows without a client id or request, or whose
 * result is not {"result":seq}. */
int sf_collect_segrow(void *ctx, int64_t seq, const char *client_id, const char *request_json,
                      const char *result_json, int64_t created_at);

#endif
