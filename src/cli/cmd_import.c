/* tokentrace import FILE... -o RUN [--from NAME]: other tools' result files
 * as one run (formats/import-*.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/import.h"

#include "commands.h"

static const char usage_text[] =
	"usage: tokentrace import FILE... -o RUN [--from NAME] [-q]\n"
	"\n"
	"Import other benchmark tools' result files into a new run, which report,\n"
	"chart, dump and diff then read like a captured one.  Each file's format is\n"
	"detected from its content.  Formats: llm-inference-bench (its result JSON),\n"
	"llm-inference-bench-report (its printed \"Speed test matrix\"), vllm-bench,\n"
	"genai-perf, aiperf, guidellm.  report, chart and dump also read such a\n"
	"file directly.\n"
	"\n"
	"  -o, --output RUN    the run directory to write (must not exist, or be empty)\n"
	"  --from NAME         the files' format, instead of detecting it\n"
	"  -q, --quiet         print nothing on success\n"
	"  -h, --help          show this help\n"
	"\n"
	"Exit status: 0 imported; 3 imported, but a file was of a newer schema than\n"
	"known and only the fields we know were read; 1 a file could not be imported\n"
	"(nothing is written); 2 usage error.\n";

int cmd_import(int argc, char **argv)
{
	const char *out = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t n = 0;
	int quiet = 0, status = 0;
	struct tt_import_opts opts = {.from = TT_IMPORT_AUTO};
	struct tt_error err;
	enum tt_code rc;

	if (!files) {
		cli_error("out of memory");
		return 1;
	}
	tt_error_clear(&err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			free(files);
			return 0;
		} else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(a, "--from") == 0 && i + 1 < argc) {
			if (tt_failed(tt_import_format_parse(argv[++i], &opts.from, &err))) {
				cli_error("%s", err.msg);
				free(files);
				return 2;
			}
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = 1;
		} else if (a[0] == '-' && a[1]) {
			cli_error("unknown or incomplete option '%s'", a);
			fputs(usage_text, stderr);
			free(files);
			return 2;
		} else {
			files[n++] = a;
		}
	}
	if (!out || n == 0) {
		cli_error(!out ? "no output run given (-o RUN)" : "no file to import");
		fputs(usage_text, stderr);
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
