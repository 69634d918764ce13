/* Helpers shared by the tokentrace subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/error.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"

#include "commands.h"

/* Messages quote names from runs and archives: a control character (an
 * escape sequence retitling or clearing the terminal, C1 controls as
 * UTF-8) is shown as '?', never sent to the terminal. */
static void put_clean(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7F)
			fputc('?', f);
		else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) {
			fputc('?', f);
			p++;
		} else
			fputc(*p, f);
	}
}

static void report_line(const char *level, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof msg, fmt, ap);
	fprintf(stderr, "tokentrace: %s: ", level);
	put_clean(msg, stderr);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line("error", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line("warning", fmt, ap);
	va_end(ap);
}

int cli_open_run(const char *path, const char *what, struct tt_run **out, int *warned)
{
	struct tt_error err;
	enum tt_code rc;

	tt_error_clear(&err);
	*out = NULL;
	rc = tt_import_open(path, NULL, out, &err);
	if (tt_failed(rc)) {
		if (what)
			cli_error("%s '%s': %s", what, path, err.msg);
		else
			cli_error("%s", err.msg);
		return -1;
	}
	if (rc == TT_WARN) {
		if (what)
			cli_warn("%s '%s': %s", what, path, err.msg);
		else
			cli_warn("%s", err.msg);
		if (warned)
			*warned = 1;
	}
	return 0;
}
