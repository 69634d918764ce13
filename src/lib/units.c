/* Command-line units: see include/tokentrace/units.h. */
#include "tokentrace/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double tt_parse_duration(const char *s)
{
	char *end = NULL;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
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
