/* tokentrace import FILE... -o RUN [--from NAME]: other tools' result files
 * as one run (formats/import-*.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/import.h"

#include "cli_opts.h"
#include "commands.h"

enum { O_OUTPUT = 1, O_FROM, O_QUIET };

static const struct cli_opt options[] = {
	{O_OUTPUT, 'o', "output", "RUN", "the run directory to write (must not exist, or be empty)",
	 0},
	{O_FROM, 0, "from", "NAME", "the files' format, instead of detecting it", 0},
	{O_QUIET, 'q', "quiet", NULL, "print nothing on success", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd import_cmd = {
	"import",
	"usage: tokentrace import FILE... -o RUN [--from NAME] [-q]\n"
	"\n"
	"Import other benchmark tools' result files into a new run, which report,\n"
	"chart, dump and diff then read like a captured one.  Each file's format is\n"
	"detected from its content.  Formats: llm-inference-bench (its result JSON),\n"
	"llm-inference-bench-report (its printed \"Speed test matrix\"), vllm-bench,\n"
	"genai-perf, aiperf, guidellm.  report, chart and dump also read such a\n"
	"file directly.\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 imported; 3 imported, but a file was of a newer schema than\n"
	"known and only the fields we know were read; 1 a file could not be imported\n"
	"(nothing is written); 2 usage error.\n",
	22, options, sizeof options / sizeof *options};

int cmd_import(int argc, char **argv)
{
	const char *out = NULL, *val;
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t n = 0;
	int quiet = 0, status = 0, id;
	struct tt_import_opts opts = {.from = TT_IMPORT_AUTO};
	struct tt_error err;
	struct cli_iter it;
	enum tt_code rc;

	if (!files) {
		cli_error("out of memory");
		return 1;
	}
	tt_error_clear(&err);
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&import_cmd, &it, &val)) != CLI_END) {
		if (id == CLI_HELP || id == CLI_BAD) {
			free(files);
			return id == CLI_HELP ? 0 : 2;
		}
		if (id == O_OUTPUT) {
			out = val;
		} else if (id == O_FROM) {
			if (tt_failed(tt_import_format_parse(val, &opts.from, &err))) {
				cli_error("%s", err.msg);
				free(files);
				return 2;
			}
		} else if (id == O_QUIET) {
			quiet = 1;
		} else {
			files[n++] = val;
		}
	}
	if (!out || n == 0) {
		cli_error(!out ? "no output run given (-o RUN; see 'tokentrace import --help')"
			       : "no file to import (see 'tokentrace import --help')");
		free(files);
		return 2;
	}
	rc = tt_import_files(files, n, &opts, out, &err);
	if (rc > TT_WARN) {
		cli_error("%s", err.msg);
		status = 1;
	} else {
		if (rc == TT_WARN) {
			fprintf(stderr, "tokentrace: warning: %s\n", err.msg);
			status = 3;
		}
		if (!quiet)
			printf("imported %zu file%s into %s\n", n, n == 1 ? "" : "s", out);
	}
	free(files);
	return status;
}
