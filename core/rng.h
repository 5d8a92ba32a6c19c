/*
 * rng.h — numpy's default random generator, bit for bit: SeedSequence
 * (entropy pool hashing) feeding PCG64 (128-bit LCG, XSL-RR output), and
 * the two draws sacreBLEU's significance tests make through it:
 * Generator.integers(0, n) for int64 (what choice(n, replace=True) uses:
 * 32-bit Lemire rejection on buffered 32-bit halves when n-1 < 2^32) and
 * Generator.integers(2, dtype=bool) (one bit per draw from buffered 32-bit
 * words). Pure: no I/O, no globals; the state is a plain value.
 */
#ifndef AM_RNG_H
#define AM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct am_rng {
    uint64_t state_hi, state_lo; /* 128-bit LCG state */
    uint64_t inc_hi, inc_lo; /* 128-bit increment (odd) */
    int has32; /* a buffered upper 32-bit half is in buf32 */
    uint32_t buf32;
} am_rng;

/* numpy.random.default_rng(seed) for a non-negative integer seed. */
void am_rng_seed(am_rng *r, uint64_t seed);
/* The next 64 bits (bit_generator.random_raw()). */
uint64_t am_rng_next64(am_rng *r);
/* The next 32 bits: the low half of a fresh 64-bit draw, then its high half. */
uint32_t am_rng_next32(am_rng *r);
/* out[0..count) = Generator.integers(0, n, size=count) with dtype int64,
 * equivalently Generator.choice(n, size=count, replace=True); n >= 1. */
void am_rng_choice(am_rng *r, uint64_t n, size_t count, int64_t *out);
/* The same draws counted instead of stored: cnt[x]++ for each (cnt:
 * n counters, wrapping at 2^16). Returns the OR of every counter just
 * after its increment (bit 15 set: a counter reached 2^15). */
unsigned am_rng_choice_count(am_rng *r, uint64_t n, size_t count, uint16_t *cnt);
/* out[0..count) = Generator.integers(2, size=count, dtype=bool) (0 or 1).
 * numpy keeps the bit buffer per call, so split draws differ from one call. */
void am_rng_bools(am_rng *r, size_t count, unsigned char *out);
/* The same draw in pieces: consecutive calls sharing *buf and *bcnt (both 0
 * before the first) give the bits one call for the total count gives. */
void am_rng_bools_part(am_rng *r, uint32_t *buf, int *bcnt, size_t count, unsigned char *out);

#endif
