/*
 * rng.c — SeedSequence + PCG64 + bounded integers as numpy computes them
 * (see rng.h). The constants are numpy's published ones (the SeedSequence
 * hash constants of Melissa O'Neill's seed_seq_fe, PCG's 128-bit
 * multiplier).
 */
#include "rng.h"

__extension__ typedef unsigned __int128 am_u128;

/* SeedSequence hashing constants */
#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_MULT_L 0xca01f9ddu
#define SS_MIX_MULT_R 0x4973f715u
#define SS_XSHIFT 16
#define SS_POOL 4

/* PCG 128-bit multiplier */
#define PCG_MULT_HI 2549297995355413924ULL
#define PCG_MULT_LO 4865540595714422341ULL

static uint32_t ss_hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= SS_MULT_A;
    value *= *hash_const;
    value ^= value >> SS_XSHIFT;
    return value;
}

static uint32_t ss_mix(uint32_t x, uint32_t y)
{
    uint32_t result = SS_MIX_MULT_L * x - SS_MIX_MULT_R * y;
    result ^= result >> SS_XSHIFT;
    return result;
}

/* SeedSequence(seed).generate_state(4, uint64) into out[0..4). */
static void ss_state(uint64_t seed, uint64_t out[4])
{
    /* the entropy as little-endian 32-bit words; 0 is one word */
    uint32_t ent[2];
    size_t nent = 0;
    do {
        ent[nent++] = (uint32_t)seed;
        seed >>= 32;
    } while (seed);

    uint32_t pool[SS_POOL];
    uint32_t hc = SS_INIT_A;
    for (size_t i = 0; i < SS_POOL; i++)
        pool[i] = ss_hashmix(i < nent ? ent[i] : 0, &hc);
    for (size_t s = 0; s < SS_POOL; s++)
        for (size_t d = 0; d < SS_POOL; d++)
            if (s != d)
                pool[d] = ss_mix(pool[d], ss_hashmix(pool[s], &hc));
    /* entropy words beyond the pool (never: at most 2 words) */

    uint32_t words[8];
    uint32_t hb = SS_INIT_B;
    for (size_t i = 0; i < 8; i++) {
        uint32_t v = pool[i % SS_POOL];
        v ^= hb;
        hb *= SS_MULT_B;
        v *= hb;
        v ^= v >> SS_XSHIFT;
        words[i] = v;
    }
    for (size_t i = 0; i < 4; i++)
        out[i] = (uint64_t)words[2 * i] | (uint64_t)words[2 * i + 1] << 32;
}

static am_u128 u128(uint64_t hi, uint64_t lo)
{
    return (am_u128)hi << 64 | lo;
}

static void pcg_step(am_rng *r)
{
    am_u128 s = u128(r->state_hi, r->state_lo) * u128(PCG_MULT_HI, PCG_MULT_LO) +
                u128(r->inc_hi, r->inc_lo);
    r->state_hi = (uint64_t)(s >> 64);
    r->state_lo = (uint64_t)s;
}

void am_rng_seed(am_rng *r, uint64_t seed)
{
    uint64_t v[4];
    ss_state(seed, v);
    am_u128 initstate = u128(v[0], v[1]);
    am_u128 inc = u128(v[2], v[3]) << 1 | 1;
    r->state_hi = r->state_lo = 0;
    r->inc_hi = (uint64_t)(inc >> 64);
    r->inc_lo = (uint64_t)inc;
    pcg_step(r);
    am_u128 s = u128(r->state_hi, r->state_lo) + initstate;
    r->state_hi = (uint64_t)(s >> 64);
    r->state_lo = (uint64_t)s;
    pcg_step(r);
    r->has32 = 0;
    r->buf32 = 0;
}

uint64_t am_rng_next64(am_rng *r)
{
    pcg_step(r);
    uint64_t x = r->state_hi ^ r->state_lo;
    unsigned rot = (unsigned)(r->state_hi >> 58);
    return (x >> rot) | (x << ((64 - rot) & 63));
}

uint32_t am_rng_next32(am_rng *r)
{
    if (r->has32) {
        r->has32 = 0;
        return r->buf32;
    }
    uint64_t x = am_rng_next64(r);
    r->has32 = 1;
    r->buf32 = (uint32_t)(x >> 32);
    return (uint32_t)x;
}

/* A uniform integer in [0, rng] (rng < 2^32 - 1) by Lemire's method on
 * 32-bit draws. */
static uint32_t lemire32(am_rng *r, uint32_t rng)
{
    uint32_t excl = rng + 1;
    uint64_t m = (uint64_t)am_rng_next32(r) * excl;
    uint32_t left = (uint32_t)m;
    if (left < excl) {
        uint32_t threshold = (UINT32_MAX - rng) % excl;
        while (left < threshold) {
            m = (uint64_t)am_rng_next32(r) * excl;
            left = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* A uniform integer in [0, rng] (rng < 2^64 - 1) by Lemire's method on
 * 64-bit draws. */
static uint64_t lemire64(am_rng *r, uint64_t rng)
{
    uint64_t excl = rng + 1;
    am_u128 m = (am_u128)am_rng_next64(r) * excl;
    uint64_t left = (uint64_t)m;
    if (left < excl) {
        uint64_t threshold = (UINT64_MAX - rng) % excl;
        while (left < threshold) {
            m = (am_u128)am_rng_next64(r) * excl;
            left = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* am_rng_choice for 0 < rng < 2^32 - 1 (lemire32's draws) with the
 * generator in a local copy: through r, every store to out (int64_t, which
 * may alias the state's uint64_t) made the compiler reload and store the
 * state per draw. The threshold is computed once; a draw below it is below
 * excl too, so redrawing while below it is lemire32's loop. */
static void choice32(am_rng *r, uint32_t rng, size_t count, int64_t *out)
{
    am_rng g = *r;
    uint32_t excl = rng + 1, threshold = (UINT32_MAX - rng) % excl;
    for (size_t i = 0; i < count; i++) {
        uint64_t m = (uint64_t)am_rng_next32(&g) * excl;
        while ((uint32_t)m < threshold)
            m = (uint64_t)am_rng_next32(&g) * excl;
        out[i] = (int64_t)(m >> 32);
    }
    *r = g;
}

unsigned am_rng_choice_count(am_rng *r, uint64_t n, size_t count, uint16_t *cnt)
{
    unsigned seen = 0;
    uint64_t rng = n - 1;
    if (rng > 0 && rng < UINT32_MAX) { /* choice32's loop, counting instead of storing */
        am_rng g = *r;
        uint32_t excl = (uint32_t)rng + 1, threshold = (UINT32_MAX - (uint32_t)rng) % excl;
        for (size_t i = 0; i < count; i++) {
            uint64_t m = (uint64_t)am_rng_next32(&g) * excl;
            while ((uint32_t)m < threshold)
                m = (uint64_t)am_rng_next32(&g) * excl;
            seen |= ++cnt[m >> 32];
        }
        *r = g;
        return seen;
    }
    for (size_t i = 0; i < count; i++) {
        int64_t x;
        am_rng_choice(r, n, 1, &x);
        seen |= ++cnt[x];
    }
    return seen;
}

void am_rng_choice(am_rng *r, uint64_t n, size_t count, int64_t *out)
{
    uint64_t rng = n - 1;
    if (rng > 0 && rng < UINT32_MAX) {
        choice32(r, (uint32_t)rng, count, out);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        if (rng == 0)
            out[i] = 0;
        else if (rng == UINT32_MAX)
            out[i] = (int64_t)am_rng_next32(r);
        else if (rng < UINT32_MAX)
            out[i] = (int64_t)lemire32(r, (uint32_t)rng);
        else if (rng == UINT64_MAX)
            out[i] = (int64_t)am_rng_next64(r);
        else
            out[i] = (int64_t)lemire64(r, rng);
    }
}

void am_rng_bools_part(am_rng *r, uint32_t *buf, int *bcnt, size_t count, unsigned char *out)
{
    for (size_t i = 0; i < count; i++) {
        if (!*bcnt) {
            *buf = am_rng_next32(r);
            *bcnt = 31;
        } else {
            *buf >>= 1;
            (*bcnt)--;
        }
        out[i] = (unsigned char)(*buf & 1u);
    }
}

void am_rng_bools(am_rng *r, size_t count, unsigned char *out)
{
    uint32_t buf = 0;
    int bcnt = 0;
    am_rng_bools_part(r, &buf, &bcnt, count, out);
}
