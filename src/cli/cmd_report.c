/* tokentrace report RUN [--format F] [-o FILE] [--skip-first D] [--window D]
 *                       [--quantiles LIST] [--stalls D] [--slo LIST] [--no-color] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/chart.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tokentrace/slo.h"
#include "tokentrace/units.h"

#include "cli_opts.h"
#include "commands.h"

enum {
	O_FORMAT = 1, O_OUTPUT, O_SKIP_FIRST, O_WINDOW, O_QUANTILES, O_STALLS, O_SLO, O_NO_COLOR
};

static const struct cli_opt options[] = {
	{O_FORMAT, 'f', "format", "F", "term (default on a terminal), md (default otherwise),\n"
				       "csv, json, html, pdf (pdf needs -o)", 0},
	{O_OUTPUT, 'o', "output", "FILE", "write to FILE instead of standard output", 0},
	{O_SKIP_FIRST, 0, "skip-first", "D", "start each decode window D later (e.g. 5s)", 0},
	{O_WINDOW, 0, "window", "D", "measure at most D of each window (e.g. 10s; 0: all of it)", 0},
	{O_QUANTILES, 0, "quantiles", "LIST", "percentiles besides the median (default 90,99); the\n"
					    "term and md reports then add a Tails table", 0},
	{O_STALLS, 0, "stalls", "D", "per-token gaps longer than D count as stalls (default\n"
				    "100ms); term and md add the Tails table", 0},
	{O_SLO, 0, "slo", "LIST", "goodput under SLOs, e.g. ttft=500ms,tbt=50ms@p99,e2e=30s,\n"
				 "attain=90 (docs/metrics.md M-goodput)", 0},
	{O_NO_COLOR, 0, "no-color", NULL, "no colour in term output (NO_COLOR is respected too)", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd report_cmd = {
	"report",
	"usage: tokentrace report RUN [options]\n"
	"\n"
	"Compute every figure of a run (a run directory or an archive of one) and\n"
	"print the report.  Figures are defined in docs/metrics.md.\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 all cells read; 3 some cells damaged (report still printed,\n"
	"damaged cells marked); 1 the run could not be read; 2 usage error.\n",
	22, options, sizeof options / sizeof *options};

static int parse_quantiles(const char *s, struct tt_analysis_opts *o)
{
	char *copy = strdup(s), *tok, *save = NULL;
	size_t n = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double q = strtod(tok, &end);
		if (end == tok || *end || q <= 0 || q >= 100 || n >= TT_MAX_QUANTILES) {
			free(copy);
			return -1;
		}
		o->quantiles[n++] = q;
	}
	free(copy);
	if (n == 0)
		return -1;
	o->n_quantiles = n;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	const char *run_path = NULL, *out = NULL, *fmt = NULL;
	struct tt_analysis_opts ao;
	struct tt_render_opts ro;
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_error err;
	struct tt_buf buf;
	int f, status = 1, no_color = 0, warned = 0, id;
	struct cli_iter it;
	const char *v;
	enum tt_code rc, arc;

	tt_analysis_opts_init(&ao);
	tt_buf_init(&buf, 0);
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&report_cmd, &it, &v)) != CLI_END) {
		switch (id) {
		case CLI_HELP:
			return 0;
		case CLI_BAD:
			return 2;
		case CLI_ARG:
			if (run_path) {
				cli_error("report takes one run, got '%s' and '%s'", run_path, v);
				return 2;
			}
			run_path = v;
			break;
		case O_NO_COLOR:
			no_color = 1;
			break;
		case O_FORMAT:
			fmt = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_SKIP_FIRST:
			if (cli_duration("--skip-first", v, "5s", &ao.skip_first_s))
				return 2;
			break;
		case O_WINDOW:
			/* 0: to the recorded window end (report-json run.analysis) */
			if (cli_duration("--window", v, "10s; 0 for the recorded window", &ao.window_s))
				return 2;
			break;
		case O_QUANTILES:
			if (parse_quantiles(v, &ao)) {
				cli_error("--quantiles: '%s' is not a list of up to %d percentiles "
					  "in (0, 100), e.g. 90,99,99.9", v, TT_MAX_QUANTILES);
				return 2;
			}
			ao.show_tails = 1;
			break;
		case O_STALLS: {
			double d = tt_parse_duration(v);
			if (d <= 0) {
				cli_error("--stalls: '%s' is not a positive duration (e.g. 100ms)", v);
				return 2;
			}
			ao.stall_ms = d * 1e3;
			ao.show_tails = 1;
			break;
		}
		case O_SLO:
			if (cli_slo(v, &ao.slo))
				return 2;
			break;
		}
	}
	if (!run_path) {
		cli_error("report needs a run (see 'tokentrace report --help')");
		return 2;
	}
	if (!fmt)
		fmt = !out && isatty(STDOUT_FILENO) ? "term" : "md";
	f = tt_format_parse(fmt);
	if (f < 0) {
		cli_error("unknown format '%s' (term, md, csv, json, html, pdf)", fmt);
		return 2;
	}
	if (f == TT_FORMAT_PDF && !out) {
		cli_error("--format pdf needs -o FILE.pdf");
		return 2;
	}
	/* The charts' p10-p90 bands need those quantiles besides the user's. */
	if (f == TT_FORMAT_HTML || f == TT_FORMAT_PDF)
		tt_chart_analysis_opts(&ao);
	tt_error_clear(&err);
	if (cli_open_run(run_path, NULL, &run, &warned))
		return 1;
	arc = tt_analyze(run, &ao, &rep, &err);
	if (arc != TT_OK && arc != TT_WARN) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (arc == TT_WARN)
		cli_warn("%s", err.msg);
	memset(&ro, 0, sizeof ro);
	ro.color = f == TT_FORMAT_TERM && !out && !no_color && isatty(STDOUT_FILENO) &&
		   !getenv("NO_COLOR");
	ro.width = 0;
	{
		struct tt_error rerr;
		tt_error_clear(&rerr);
		if (f == TT_FORMAT_PDF)
			rc = tt_report_write(rep, run, TT_FORMAT_PDF, &ro, out, &rerr);
		else
			rc = tt_report_render(rep, run, (enum tt_format)f, &ro, &buf, &rerr);
		if (tt_failed(rc)) {
			cli_error("%s", rerr.msg[0] ? rerr.msg : tt_strerror(rc));
			goto cleanup;
		}
		if (rc == TT_WARN) {
			cli_warn("%s", rerr.msg);
			warned = 1;
		}
	}
	if (f != TT_FORMAT_PDF && cli_write_out(out, buf.data ? buf.data : "", buf.len))
		goto cleanup;
	status = arc == TT_WARN || warned ? 3 : 0;
cleanup:
	tt_buf_release(&buf);
	tt_report_free(rep);
	tt_run_free(run);
	return status;
}
