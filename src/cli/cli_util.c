/* Helpers shared by the tokentrace subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/error.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"

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

enum tt_code cli_open_run(const char *path, struct tt_run **out, struct tt_error *err)
{
	return tt_import_open(path, NULL, out, err);
}
