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

double tt_parse_duration(const char *s)
{
	char *end = NULL;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = tt__strtod_c(s, &end); /* "1.5s" in any locale */
	if (end == s || errno || v < 0 || !isfinite(v))
		return -1;
	if (*end == '\0' || strcmp(end, "s") == 0)
		return v;
	if (strcmp(end, "ms") == 0)
		return v / 1000;
	if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		return v * 60;
	if (strcmp(end, "h") == 0)
		return v * 3600;
	return -1;
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
