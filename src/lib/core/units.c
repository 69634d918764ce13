/* Command-line units: see include/tokentrace/units.h. */
#include "tokentrace/units.h"
#include "core/c_locale.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128; /* GCC and Clang */

/* M-window "Durations": the text DIGITS[.DIGITS][UNIT] (or .DIGITS) read
 * as a decimal number, exactly, in integers, and cut to whole nanoseconds
 * (truncation toward zero of the exact value: "1.001s" is 1 001 000 000 ns,
 * "1.0000000009s" is 1 000 000 000 ns).  No floating point is involved, so
 * no decimal lands one nanosecond short of itself. */
int tt_parse_duration_ns(const char *s, int64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {{"", 1000000000ull}, {"s", 1000000000ull}, {"ms", 1000000ull},
		     {"m", 60000000000ull}, {"min", 60000000000ull}, {"h", 3600000000000ull}};
	const char *p = s;
	u128 ip = 0, fp = 0, scale = 1, v;
	int idigits = 0, fdigits = 0;
	uint64_t unit = 0;

	if (!s || !*s)
		return -1;
	while (*p >= '0' && *p <= '9') {
		ip = ip * 10 + (unsigned)(*p++ - '0');
		if (ip > (u128)INT64_MAX)
			return -1;
		idigits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			/* 18 decimals are kept exactly; later digits are below
			 * 3.6e-6 ns even in hours and are refused, not guessed */
			if (fdigits == 18)
				return -1;
			fp = fp * 10 + (unsigned)(*p++ - '0');
			scale *= 10;
			fdigits++;
		}
	}
	if (!idigits && !fdigits)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (strcmp(p, units[i].suffix) == 0)
			unit = units[i].ns;
	if (!unit)
		return -1;
	v = ip * unit + fp * unit / scale; /* < 2^63 * 3.6e12 + 3.6e12 < 2^128 */
	if (v > (u128)INT64_MAX)
		return -1;
	if (ns)
		*ns = (int64_t)v;
	return 0;
}

double tt_parse_duration(const char *s)
{
	int64_t ns;

	if (tt_parse_duration_ns(s, &ns) != 0)
		return -1;
	return (double)ns / 1e9;
}

int64_t tt_duration_ns_of_s(double s)
{
	if (!(s > 0))
		return 0;
	if (s >= 9.2e9)
		return INT64_MAX;
	return llround(s * 1e9);
}

int64_t tt_parse_tokens(const char *s)
{
	const char *p = s;
	int64_t v = 0, mul = 1;
	int digits = 0;

	if (!s)
		return -1;
	while (isspace((unsigned char)*p))
		p++;
	while (isdigit((unsigned char)*p)) {
		if (v > (INT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (*p - '0');
		p++;
		digits++;
	}
	if (!digits)
		return -1;
	if (*p == 'k' || *p == 'K') {
		mul = 1024;
		p++;
	} else if (*p == 'm' || *p == 'M') {
		mul = 1024 * 1024;
		p++;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return -1;
	if (v > INT64_MAX / mul)
		return -1;
	return v * mul;
}

void tt_format_tokens(int64_t tokens, char *buf, size_t len)
{
	if (!buf || !len)
		return;
	if (tokens > 0 && tokens % (1024 * 1024) == 0)
		snprintf(buf, len, "%lldM", (long long)(tokens / (1024 * 1024)));
	else if (tokens > 0 && tokens % 1024 == 0)
		snprintf(buf, len, "%lldK", (long long)(tokens / 1024));
	else
		snprintf(buf, len, "%lld", (long long)tokens);
}
