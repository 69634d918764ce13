/* The seed report's number style (include/tokentrace/render.h), and the
 * plain forms CSV and JSON use.  Every figure goes through snprintf's "%.Nf"
 * once, so what a table shows and what the CSV writes round the same way.
 * Numbers are printed and read back in the "C" locale (core/c_locale.h):
 * reports are the same bytes whatever locale the program set. */
#include "text/render_impl.h"
#include "core/c_locale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(char *buf, size_t len, const char *s)
{
	if (!buf || !len)
		return;
	snprintf(buf, len, "%s", s);
}

/* "-0.0" and "-0" are zero: a figure that rounds to nothing has no sign. */
static void drop_negative_zero(char *s)
{
	const char *p;

	if (s[0] != '-')
		return;
	for (p = s + 1; *p; p++)
		if (*p != '0' && *p != '.')
			return;
	memmove(s, s + 1, strlen(s));
}

/* Fixed-point text of v with `decimals` decimals. */
static void fixed(double v, int decimals, char *out, size_t len)
{
	tt__snprintf_c(out, len, "%.*f", decimals, v);
	drop_negative_zero(out);
}

/* Insert thousands commas into the integer part of a plain number. */
static void group(const char *num, char *buf, size_t len)
{
	char tmp[96];
	const char *p = num, *dot;
	size_t o = 0, digits, i;

	if (*p == '-')
		tmp[o++] = *p++;
	dot = strchr(p, '.');
	digits = dot ? (size_t)(dot - p) : strlen(p);
	for (i = 0; i < digits && o + 2 < sizeof tmp; i++) {
		if (i > 0 && (digits - i) % 3 == 0)
			tmp[o++] = ',';
		tmp[o++] = p[i];
	}
	tmp[o] = '\0';
	if (dot)
		snprintf(buf, len, "%s%s", tmp, dot);
	else
		put(buf, len, tmp);
}

/* Drop trailing zeros of a fraction, and the dot when nothing is left. */
static void strip_zeros(char *s)
{
	char *dot = strchr(s, '.'), *end;

	if (!dot)
		return;
	end = s + strlen(s);
	while (end > dot + 1 && end[-1] == '0')
		*--end = '\0';
	if (end == dot + 1)
		*dot = '\0';
}

/* Rate scaling shared by tt_fmt_rate and tt__fmt_rate_plain: the one-decimal
 * text of v in its unit ("" , "K", "M") and the unit's size. */
static void rate_parts(double v, char *num, size_t len, const char **unit, double *scale)
{
	fixed(v, 1, num, len);
	*unit = "";
	*scale = 1;
	if (fabs(tt__strtod_c(num, NULL)) < 10000)
		return;
	fixed(v / 1e3, 1, num, len);
	*unit = "K";
	*scale = 1e3;
	if (fabs(tt__strtod_c(num, NULL)) < 1000)
		return;
	fixed(v / 1e6, 1, num, len);
	*unit = "M";
	*scale = 1e6;
}

void tt_fmt_rate(double v, char *buf, size_t len)
{
	char num[64], grouped[96];
	const char *unit;
	double scale;

	if (!isfinite(v)) {
		put(buf, len, TT_DASH);
		return;
	}
	rate_parts(v, num, sizeof num, &unit, &scale);
	if (*unit)
		strip_zeros(num);
	group(num, grouped, sizeof grouped);
	if (buf && len)
		snprintf(buf, len, "%s%s", grouped, unit);
}

void tt__fmt_rate_plain(double v, char *buf, size_t len)
{
	char num[64];
	const char *unit;
	double scale;

	if (!isfinite(v)) {
		put(buf, len, "");
		return;
	}
	rate_parts(v, num, sizeof num, &unit, &scale);
	/* 143.1 K is 143100 exactly as a decimal; print it with the decimals the
	 * scaled text had, so no binary noise appears. */
	tt__fmt_plain(tt__strtod_c(num, NULL) * scale, scale > 1 ? 0 : 1, buf, len);
}

void tt_fmt_ms(double v, char *buf, size_t len)
{
	char num[64], grouped[96];

	if (!isfinite(v)) {
		put(buf, len, TT_DASH);
		return;
	}
	fixed(v, 0, num, sizeof num);
	group(num, grouped, sizeof grouped);
	if (buf && len)
		snprintf(buf, len, "%s ms", grouped);
}

void tt_fmt_int(double v, char *buf, size_t len)
{
	char num[64];

	if (!isfinite(v)) {
		put(buf, len, TT_DASH);
		return;
	}
	fixed(v, 0, num, sizeof num);
	group(num, buf, len);
}

void tt_fmt_fixed1(double v, char *buf, size_t len)
{
	char num[64];

	if (!isfinite(v)) {
		put(buf, len, TT_DASH);
		return;
	}
	fixed(v, 1, num, sizeof num);
	group(num, buf, len);
}

void tt__fmt_plain(double v, int decimals, char *buf, size_t len)
{
	char num[64];

	if (!isfinite(v)) {
		put(buf, len, "");
		return;
	}
	fixed(v, decimals, num, sizeof num);
	strip_zeros(num);
	drop_negative_zero(num);
	put(buf, len, num);
}

void tt__fmt_exact(double v, char *buf, size_t len)
{
	char num[40];
	int prec;

	if (!isfinite(v)) {
		put(buf, len, "");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		tt__snprintf_c(num, sizeof num, "%.*g", prec, v);
		/* "9e+01" reads back as 90 but is no way to write 90 */
		if (strchr(num, 'e') && fabs(v) >= 1e-5 && fabs(v) < 1e15)
			continue;
		if (tt__strtod_c(num, NULL) == v)
			break;
	}
	if (prec == 17)
		tt__snprintf_c(num, sizeof num, "%.17g", v);
	put(buf, len, num);
}
