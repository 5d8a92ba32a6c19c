/*
 * realfmt.h — reals as the shortest decimal text that reads back.
 *
 * A double printed with 17 significant digits always reads back (strtod)
 * as itself, but most need fewer: 0.6435281837160751 reads back as the
 * double %.17g prints as 0.64352818371607512. Readers, diff tools and
 * sacreBLEU's JSON (Python's repr) show the shortest text, so every real
 * the CLI and the server print goes through here: the fewest significant
 * digits that read back as x, and of those the nearest to x (the first of
 * %.15g, %.16g, %.17g that reads back is that one: fewer than 16 digits
 * leave at most one candidate in x's rounding interval of 53 bits;
 * subnormals have fewer bits, so there every precision from 1 is tried:
 * 5e-324, not 4.94065645841247e-324), laid out as %.{max(p,15)}g lays
 * out p digits (100, not 1e+02). Pure: no globals,
 * no locale (the '.' is written, not printf's decimal point, on the fast
 * paths; the slow path is printf's in the C locale the program runs in).
 */
#ifndef AM_REALFMT_H
#define AM_REALFMT_H

#include "am.h"

#include <stddef.h>

/* Room for any text below, with its NUL. */
#define AM_REALFMT_MAX 40

/* x in %g's layout (exponent with a sign and at least two digits, as
 * printf), the shortest that reads back; non-finite as %g ("inf", "nan").
 * out: AM_REALFMT_MAX bytes, owned by the caller. */
void am_realfmt_g(double x, char *out);

/* Appends am_realfmt_g(x) to b (caller's). */
void am_realfmt_buf(am_buf *b, double x);

/* x as jansson spells reals: the shortest that reads back, ".0" added when
 * the text would read as an integer, no '+' and no leading zeros in the
 * exponent ("1e-5", "1e+22" as "1e22"); non-finite: "null". out:
 * AM_REALFMT_MAX bytes, owned by the caller. Returns strlen(out). */
size_t am_realfmt_json(double x, char *out);

/* A copy of JSON text (jansson's output, any layout) with every real
 * number token (one with '.', 'e' or 'E') rewritten by am_realfmt_json;
 * strings, integers and layout unchanged. For writers that print reals
 * with 17 digits (json_dumps with JSON_REAL_PRECISION(17)). The caller
 * frees the result. */
char *am_realfmt_json_text(const char *json);

#endif
