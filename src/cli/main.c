/* tokentrace: the offline analyzer.  Subcommands are dispatched from a table
 * (git's habit); each lives in its own cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "tokentrace/error.h"
#include "tokentrace/run.h"

#include "commands.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"report", cmd_report, "compute every figure of a run and print the report"},
	{"synth", cmd_synth, "write a synthetic run that reproduces a profile CSV"},
	{"chart", cmd_chart, "draw one chart of a run (PNG, SVG or PDF)"},
	{"dump", cmd_dump, "print a run's raw records as JSON lines"},
	{"diff", cmd_diff, "compare two runs cell by cell: changes, intervals, verdicts"},
	{"import", cmd_import, "import other tools' result files as a run"},
	{"export", cmd_export, "write requests, chunks, scrapes or cells as CSV or JSON lines"},
	{"trend", cmd_trend, "a history of many runs: change points, pinned to the run and version"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tokentrace <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\noptions:\n"
		   "  -h, --help     show this help\n"
		   "  --version      print the version and the run format version\n"
		   "\n'tokentrace <command> --help' describes a command's options;\n"
		   "'man tokentrace-<command>' too.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("tokentrace %s (run format %d.%d; reads %d.x)\n", tt_version(),
		       TT_RUN_FORMAT_MAJOR, TT_RUN_FORMAT_MINOR_NEWEST, TT_RUN_FORMAT_MAJOR);
		return 0;
	}
	/* Every command may import (an archive of another tool's file opens
	 * as a private run): a signal removes what imports hold, once. */
	cli_import_signals();
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "tokentrace: error: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
