/*
 * realfmt.c — reals as the shortest decimal text that reads back (see
 * realfmt.h). Moved here from server/base/json.c's writer so that the CLI
 * and the server print the same text for the same double.
 */
#include "realfmt.h"

#include "am.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* When x is the double nearest to a decimal D with at most 6 places and 15
 * significant digits, 1e-4 <= |D| < 1e15 (0.75, 12.5, 0.05), appends D as
 * %.15g prints it into out (AM_REALFMT_MAX bytes) and returns 1, without printf: the division below
 * is correctly rounded, so it equals x exactly when strtod(D) does; at most one such D exists (two
 * of 15 digits lie further apart than x's rounding interval), so it is what %.15g prints; the first
 * places count that works leaves no trailing zero, as %g strips them; and %g writes this range
 * without an exponent. Returns 0 (nothing appended) otherwise. */
static int am_realfmt_decimal(double x, char *out)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    double a = fabs(x);
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    for (int k = 1; k <= 6; k++) {
        double y = nearbyint(a * p10[k]);
        if (y >= 1e15)
            return 0;
        if (y / p10[k] != a)
            continue;
        long long v = (long long)y, ip = v / (long long)p10[k], fp = v % (long long)p10[k];
        char s[40], *q = s + sizeof s;
        for (int d = 0; d < k; d++, fp /= 10)
            *--q = (char)('0' + fp % 10);
        *--q = '.';
        do {
            *--q = (char)('0' + ip % 10);
            ip /= 10;
        } while (ip);
        if (x < 0)
            *--q = '-';
        size_t n = (size_t)(s + sizeof s - q);
        memcpy(out, q, n);
        out[n] = '\0';
        return 1;
    }
    return 0;
}

/* Where the exact value lies against its 17 rounded digits
 * (am_realfmt_digits17): on them, above, below, or not known (printf's). */
enum {
    AM_REALFMT_SIDE_ON = 0,
    AM_REALFMT_SIDE_ABOVE = 1,
    AM_REALFMT_SIDE_BELOW = -1,
    AM_REALFMT_SIDE_UNKNOWN = 2
};

/* %.*g of x with precision p (15, 16 or 17) into s (40 bytes), derived from
 * d[0..17) and exponent ex, the 17 significant digits of %.16e of x
 * (the exact value correctly rounded), and side, where the exact value
 * lies against them: rounded to p digits, which is the exact value's
 * rounding whenever the dropped digits are not exactly 5 followed by zeros
 * (they are within half a unit of the 17th digit of the exact ones); when
 * they are, side decides (above: up, below: down, on: a tie, to even, as
 * printf rounds), and with side unknown it returns 0 and the caller asks
 * snprintf. %g's layout: an exponent below -4 or from p on is written
 * %e-style, else fixed; trailing zeros of the fraction and a bare '.' are
 * dropped; the exponent has a sign and at least two digits. */
static int am_realfmt_round(const char *d, int ex, int side, int neg, int p, double ax, char *s,
                            int *back)
{
    char r[18];
    memcpy(r, d, 17);
    r[17] = '0'; /* p = 17: nothing dropped */
    int half = r[p] == '5';
    for (int i = p + 1; i < 17 && half; i++)
        half = r[i] == '0';
    if (half && side == AM_REALFMT_SIDE_UNKNOWN)
        return 0;
    int up =
        half ? side == AM_REALFMT_SIDE_ABOVE || (side == AM_REALFMT_SIDE_ON && (r[p - 1] - '0') % 2)
             : r[p] >= '5';
    if (up) {
        int i = p - 1;
        while (i >= 0 && r[i] == '9')
            r[i--] = '0';
        if (i < 0) { /* 99…9 + 1: one more digit before the point */
            r[0] = '1';
            ex++;
        } else {
            r[i]++;
        }
    }
    /* Does the text read back as ax? D * 10^k (D the p digits, k the
     * exponent of the last) is one correctly rounded operation on two
     * exact doubles when D <= 2^53 and |k| <= 22, so it is what strtod
     * reads; else unknown (-1). */
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t dv = 0;
    for (int i = 0; i < p; i++)
        dv = dv * 10 + (uint64_t)(r[i] - '0');
    int k = ex - (p - 1);
    *back = -1;
    if (dv <= (UINT64_C(1) << 53) && k >= -22 && k <= 22)
        *back = (k >= 0 ? (double)dv * p10[k] : (double)dv / p10[-k]) == ax;
    int last = p - 1; /* the last digit kept: no trailing zeros */
    while (last > 0 && r[last] == '0')
        last--;
    char *q = s;
    if (neg)
        *q++ = '-';
    if (ex < -4 || ex >= p) {
        *q++ = r[0];
        if (last > 0) {
            *q++ = '.';
            for (int i = 1; i <= last; i++)
                *q++ = r[i];
        }
        *q++ = 'e';
        *q++ = ex < 0 ? '-' : '+';
        int a = ex < 0 ? -ex : ex;
        if (a >= 100)
            *q++ = (char)('0' + a / 100);
        *q++ = (char)('0' + a / 10 % 10);
        *q++ = (char)('0' + a % 10);
        *q = '\0';
        return 1;
    }
    if (ex < 0) {
        *q++ = '0';
        *q++ = '.';
        for (int i = ex + 1; i < 0; i++)
            *q++ = '0';
        for (int i = 0; i <= last; i++)
            *q++ = r[i];
    } else {
        for (int i = 0; i <= ex; i++)
            *q++ = r[i];
        if (last > ex) {
            *q++ = '.';
            for (int i = ex + 1; i <= last; i++)
                *q++ = r[i];
        }
    }
    *q = '\0';
    return 1;
}

__extension__ typedef unsigned __int128 am_realfmt_u128;

/* The 17 significant digits of ax (finite, > 0) correctly rounded (ties to
 * even, as printf rounds), into d, the decimal exponent of the first into
 * *ex, and into *side where ax lies against them: what %.16e prints,
 * without printf. Exact for 1e-6 <= ax < 1e17 (every ratio and score the
 * answers hold): ax = m * 2^q with m < 2^53, and D = ax * 10^k (k = 16 -
 * ex <= 22) is m * 10^k < 2^128 shifted right by -q, whose remainder
 * decides the rounding exactly. Returns 0 (nothing written) outside that
 * range. */
static int am_realfmt_digits17(double ax, char *d, int *ex, int *side)
{
    static const uint64_t p10[] = {1u,
                                   10u,
                                   100u,
                                   1000u,
                                   10000u,
                                   100000u,
                                   1000000u,
                                   10000000u,
                                   100000000u,
                                   1000000000u,
                                   10000000000u,
                                   100000000000u,
                                   1000000000000u,
                                   10000000000000u,
                                   100000000000000u,
                                   1000000000000000u,
                                   10000000000000000u,
                                   100000000000000000u,
                                   1000000000000000000u,
                                   10000000000000000000u};
    if (!(ax >= 1e-6 && ax < 1e17))
        return 0;
    int q;
    double fr = frexp(ax, &q); /* ax = fr * 2^q, 0.5 <= fr < 1 */
    uint64_t m = (uint64_t)ldexp(fr, 53); /* exact: 53 bits */
    q -= 53;
    int e10 = (int)floor(log10(ax)); /* may be one off near powers of ten */
    for (int tries = 0; tries < 3; tries++) {
        int k = 16 - e10;
        if (k < 0 || k > 22)
            return 0;
        am_realfmt_u128 pk =
            k <= 19 ? (am_realfmt_u128)p10[k] : (am_realfmt_u128)p10[19] * p10[k - 19];
        am_realfmt_u128 n = (am_realfmt_u128)m * pk, dv;
        int at = AM_REALFMT_SIDE_ON;
        if (q >= 0) {
            if (q > 10)
                return 0; /* not reached in the range above */
            dv = n << q;
        } else {
            int sh = -q;
            if (sh >= 127)
                return 0;
            am_realfmt_u128 half = (am_realfmt_u128)1 << (sh - 1), rem = n & ((half << 1) - 1);
            dv = n >> sh;
            if (rem > half || (rem == half && (dv & 1))) {
                dv++;
                at = AM_REALFMT_SIDE_BELOW;
            } else if (rem) {
                at = AM_REALFMT_SIDE_ABOVE;
            }
        }
        if (dv < (am_realfmt_u128)p10[16]) {
            e10--;
            continue;
        }
        if (dv >= (am_realfmt_u128)p10[17]) {
            e10++;
            continue;
        }
        uint64_t v = (uint64_t)dv;
        for (int i = 16; i >= 0; i--, v /= 10)
            d[i] = (char)('0' + v % 10);
        *ex = e10;
        *side = at;
        return 1;
    }
    return 0;
}

/* The first of %.15g, %.16g, %.17g of x (finite) that reads back as x,
 * into s (size n >= 40), with the 17 digits of %.16e (am_realfmt_digits17, or
 * one printf) rounded by am_real_g where that is exact: the same text as
 * printing each in turn. */
static void am_realfmt_shortest(double x, char *s, size_t n)
{
    int neg = signbit(x) != 0;
    char d[17];
    int ex, side;
    if (!am_realfmt_digits17(fabs(x), d, &ex, &side)) {
        side = AM_REALFMT_SIDE_UNKNOWN;
        char e[40];
        snprintf(e, sizeof e, "%.16e", x); /* [-]d.dddddddddddddddde[+-]dd */
        const char *m = e + neg;
        d[0] = m[0];
        memcpy(d + 1, m + 2, 16);
        ex = atoi(m + 19);
    }
    for (int p = 15; p <= 16; p++) {
        int back = -1;
        if (!am_realfmt_round(d, ex, side, neg, p, fabs(x), s, &back))
            snprintf(s, n, "%.*g", p, x);
        if (back < 0)
            back = strtod(s, NULL) == x;
        if (back)
            return;
    }
    int back;
    (void)am_realfmt_round(d, ex, side, neg, 17, fabs(x), s,
                           &back); /* all 17 digits: never a tie */
}

void am_realfmt_g(double x, char *out)
{
    if (!isfinite(x)) {
        snprintf(out, AM_REALFMT_MAX, "%g", x);
        return;
    }
    if (x != trunc(x) && am_realfmt_decimal(x, out)) /* integral: no ".0" here */
        return;
    if (x != 0 && fabs(x) < DBL_MIN) {
        /* subnormal: fewer than 53 bits, so fewer than 15 digits may be
         * the shortest (5e-324) and %.15g is not; try each precision */
        for (int p = 1; p <= 17; p++) {
            snprintf(out, AM_REALFMT_MAX, "%.*g", p, x);
            if (strtod(out, NULL) == x)
                return;
        }
    }
    am_realfmt_shortest(x, out, AM_REALFMT_MAX);
}

void am_realfmt_buf(am_buf *b, double x)
{
    char s[AM_REALFMT_MAX];
    am_realfmt_g(x, s);
    am_buf_appends(b, s);
}

size_t am_realfmt_json(double x, char *out)
{
    if (!isfinite(x)) {
        memcpy(out, "null", 5);
        return 4;
    }
    if (fabs(x) < 1e15 && x == (double)(int64_t)x && (x != 0 || !signbit(x))) {
        /* integral (a count kept as a real): %.15g prints it whole, and
         * it reads back exactly; its digits written here, as "%lld.0"
         * would (snprintf was 2 % of a rescore's instructions) */
        int64_t v = (int64_t)x;
        uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
        char d[20];
        size_t nd = 0, n = 0;
        do
            d[nd++] = (char)('0' + u % 10);
        while ((u /= 10) > 0);
        if (v < 0)
            out[n++] = '-';
        while (nd > 0)
            out[n++] = d[--nd];
        memcpy(out + n, ".0", 3);
        return n + 2;
    }
    char s[AM_REALFMT_MAX];
    am_realfmt_g(x, s);
    char *e = strchr(s, 'e'), *o = out;
    if (!e) {
        size_t n = strlen(s);
        memcpy(o, s, n + 1);
        if (!strchr(s, '.')) /* -0 */
            memcpy(o + n, ".0", 3), n += 2;
        return n;
    }
    size_t n = (size_t)(e - s) + 1;
    memcpy(o, s, n);
    o += n;
    const char *d = e + 1;
    if (*d == '-')
        *o++ = *d++;
    else if (*d == '+')
        d++;
    while (*d == '0' && d[1])
        d++;
    n = strlen(d);
    memcpy(o, d, n + 1);
    return (size_t)(o - out) + n;
}

/* Is c a character of a JSON number token? */
static int am_realfmt_numchar(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

char *am_realfmt_json_text(const char *json)
{
    am_buf b;
    am_buf_init(&b);
    const char *p = json;
    while (*p) {
        if (*p == '"') { /* a string, copied through (escapes skipped) */
            const char *q = p + 1;
            while (*q && *q != '"')
                q += (*q == '\\' && q[1]) ? 2 : 1;
            if (*q)
                q++;
            am_buf_append(&b, p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (*p == '-' || (*p >= '0' && *p <= '9')) {
            const char *q = p;
            int real = 0;
            while (am_realfmt_numchar(*q)) {
                real |= *q == '.' || *q == 'e' || *q == 'E';
                q++;
            }
            if (real) {
                /* the writer's text reads back as the double it printed
                 * (17 digits do), so this prints that double again */
                char s[AM_REALFMT_MAX];
                size_t n = am_realfmt_json(strtod(p, NULL), s);
                am_buf_append(&b, s, n);
            } else {
                am_buf_append(&b, p, (size_t)(q - p));
            }
            p = q;
            continue;
        }
        am_buf_appendc(&b, *p++);
    }
    return am_buf_detach(&b);
}
