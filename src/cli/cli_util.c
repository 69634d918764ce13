/* Helpers shared by the tokentrace subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tokentrace: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

double cli_parse_seconds(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (end == s || v < 0)
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
