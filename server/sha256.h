/*
 * sha256.h — SHA-256 (FIPS 180-4), for the checksums that backups carry
 * (`adaptmon backup` writes BACKUP.sha256; `adaptmon restore` and the
 * server's start-up verify it). No state outside the context.
 */
#ifndef AM_SHA256_H
#define AM_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct am_sha256 {
    uint32_t h[8];
    uint64_t len; /* bytes hashed so far */
    unsigned char blk[64];
    size_t nblk; /* bytes waiting in blk */
} am_sha256;

void am_sha256_init(am_sha256 *c);
/* Hashes n bytes at p (borrowed). */
void am_sha256_update(am_sha256 *c, const void *p, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex. */
void am_sha256_hex(am_sha256 *c, char hex[65]);

#endif
