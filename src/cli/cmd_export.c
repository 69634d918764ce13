/* tokentrace export RUN... --what requests|chunks|scrapes|cells
 *                         [--format csv|jsonl] [-o FILE]: flat rows for
 * DuckDB, pandas or Spark (formats/export-v1.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/export.h"
#include "tokentrace/run.h"
#include "tokentrace/units.h"

#include "cli_opts.h"
#include "commands.h"

enum { O_WHAT = 1, O_FORMAT, O_OUTPUT, O_SKIP_FIRST, O_WINDOW, O_SLO };

static const struct cli_opt options[] = {
	{O_WHAT, 0, "what", "WHAT", "requests, chunks, scrapes or cells (required)", 0},
	{O_FORMAT, 'f', "format", "F", "csv (default) or jsonl (one JSON object a line)", 0},
	{O_OUTPUT, 'o', "output", "FILE", "write to FILE instead of standard output", 0},
	{O_SKIP_FIRST, 0, "skip-first", "D", "cells: start each decode window D later, as report", 0},
	{O_WINDOW, 0, "window", "D", "cells: measure at most D of each window, as report", 0},
	{O_SLO, 0, "slo", "LIST", "cells: goodput under these SLOs, as report", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd export_cmd = {
	"export",
	"usage: tokentrace export RUN... --what WHAT [options]\n"
	"\n"
	"Write the records or figures of one or more runs as flat rows, one per\n"
	"item, with the run and the cell as keys (formats/export-v1.md).\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 every run read; 3 damaged cells skipped in part (their\n"
	"intact records exported); 1 a run could not be read or the output not\n"
	"written; 2 usage error.\n",
	22, options, sizeof options / sizeof *options};

static int write_fn(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : -1;
}

int cmd_export(int argc, char **argv)
{
	const char *what = NULL, *fmt = "csv", *out = NULL;
	const char **runs = calloc((size_t)argc, sizeof *runs);
	struct tt_analysis_opts ao;
	struct tt_exporter *x = NULL;
	struct tt_error err;
	FILE *f = NULL;
	size_t n_runs = 0;
	int w, fo, status = 1, damaged = 0, id;
	struct cli_iter it;
	const char *v;

	if (!runs) {
		cli_error("out of memory");
		return 1;
	}
	tt_analysis_opts_init(&ao);
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&export_cmd, &it, &v)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			free(runs);
			return 0;
		case CLI_BAD:
			goto usage;
		case CLI_ARG:
			runs[n_runs++] = v;
			break;
		case O_WHAT:
			what = v;
			break;
		case O_FORMAT:
			fmt = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_SKIP_FIRST:
			if (cli_duration("--skip-first", v, "5s", &ao.skip_first_s))
				goto usage;
			break;
		case O_SLO:
			if (cli_slo(v, &ao.slo))
				goto usage;
			break;
		case O_WINDOW:
			if (cli_duration("--window", v, "10s", &ao.window_s))
				goto usage;
			break;
		}
	}
	if (!n_runs) {
		cli_error("export needs at least one run (see 'tokentrace export --help')");
		goto usage;
	}
	if (!what) {
		cli_error("export needs --what: requests, chunks, scrapes or cells");
		goto usage;
	}
	if ((w = tt_export_what_parse(what)) < 0) {
		cli_error("--what: unknown '%s' (requests, chunks, scrapes, cells)", what);
		goto usage;
	}
	if ((fo = tt_export_format_parse(fmt)) < 0) {
		cli_error("--format: unknown '%s' (csv, jsonl)", fmt);
		goto usage;
	}
	f = out ? fopen(out, "wb") : stdout;
	if (!f) {
		cli_error("cannot create '%s': %s", out, strerror(errno));
		goto cleanup;
	}
	tt_error_clear(&err);
	if (tt_failed(tt_exporter_create((enum tt_export_what)w, (enum tt_export_format)fo,
					 write_fn, f, &x, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	for (size_t i = 0; i < n_runs; i++) {
		struct tt_run *run = NULL;
		enum tt_code rc;

		tt_error_clear(&err);
		if (cli_open_run(runs[i], NULL, &run, &damaged))
			goto cleanup;
		rc = tt_exporter_run(x, run, runs[i], &ao, &err);
		tt_run_free(run);
		if (rc > TT_WARN) {
			cli_error("%s", err.msg);
			goto cleanup;
		}
		if (rc == TT_WARN) {
			fprintf(stderr, "tokentrace: warning: %s: %s\n", runs[i], err.msg);
			damaged = 1;
		}
	}
	if (tt_failed(tt_exporter_finish(x, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (out ? fclose(f) != 0 : fflush(f) != 0) {
		f = NULL;
		cli_error("cannot write '%s'", out ? out : "standard output");
		goto cleanup;
	}
	f = NULL;
	status = damaged ? 3 : 0;
cleanup:
	if (f && out)
		fclose(f);
	tt_exporter_free(x);
	free(runs);
	return status;
usage:
	free(runs);
	return 2;
}
