/* tokentrace chart RUN KIND [-o FILE.png|.svg|.pdf] [--width W] [--height H]
 *                 [--dpi D] [--font-scale F] [--no-title]
 *                 [--preset column|page|slide] [--cell ID] [--concurrency C]
 * tokentrace chart RUN all [-o DIR] [--as svg|png|pdf]
 * (both also take report's --skip-first D and --window D)
 * Draws one chart of a run (the output format follows the file extension),
 * or every chart and both reports into a directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/chart.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tokentrace/units.h"

#include "cli_opts.h"
#include "commands.h"

static void print_head(FILE *f)
{
	fprintf(f,
		"usage: tokentrace chart RUN KIND [-o FILE] [options]\n"
		"       tokentrace chart RUN all [-o DIR] [--as svg|png|pdf]\n"
		"\n"
		"Draw one chart of a run.  The format follows FILE's extension:\n"
		".png, .svg or .pdf (default: KIND.png).  'all' writes every chart\n"
		"(as --as says, default svg) with report.html and report.pdf into DIR\n"
		"(default: charts), reading each raw trace once.\n"
		"\n"
		"kinds:\n");
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		fprintf(f, "  %-12s %s\n", tt_chart_kind_name((enum tt_chart_kind)k),
			tt_chart_kind_about((enum tt_chart_kind)k));
	for (int k = TT_CHART_RATE_LATENCY; k < TT_CHART_RATE_END_; k++)
		fprintf(f, "  %-12s %s\n", tt_chart_kind_name((enum tt_chart_kind)k),
			tt_chart_kind_about((enum tt_chart_kind)k));
	fprintf(f, "\noptions:\n");
}

enum { O_OUTPUT = 1, O_WIDTH, O_HEIGHT, O_DPI, O_CELL, O_CONCURRENCY, O_AS, O_SKIP_FIRST,
       O_WINDOW, O_SLO, O_FONT_SCALE, O_NO_TITLE, O_PRESET };

static const struct cli_opt options[] = {
	{O_OUTPUT, 'o', "output", "FILE", "where to write the chart (.png, .svg or .pdf)", 0},
	{O_WIDTH, 0, "width", "W", "width: PNG pixels, SVG/PDF CSS pixels (default 960)", 0},
	{O_HEIGHT, 0, "height", "H", "height, same units (default 600)", 0},
	{O_DPI, 0, "dpi", "D", "PNG pixel density: 192 draws twice as large (default 96)", 0},
	{O_FONT_SCALE, 0, "font-scale", "F", "every text F times as large, 0.5 to 4 (default 1)", 0},
	{O_NO_TITLE, 0, "no-title", NULL, "leave out the title and subtitle (a caption says them)", 0},
	{O_PRESET, 0, "preset", "NAME", "size for a use: column (480x320, no title), page\n"
				       "(960x600) or slide (1280x720, font scale 1.5);\n"
				       "--width, --height, --font-scale given too win", 0},
	{O_CELL, 0, "cell", "ID", "timeline: the cell to show, e.g. decode-8192x16\n"
				 "(default: the highest concurrency at the smallest context)", 0},
	{O_CONCURRENCY, 0, "concurrency", "C", "tbt-cdf: the concurrency level (default: the highest)", 0},
	{O_AS, 0, "as", "FORMAT", "all: chart format, svg, png or pdf (default svg)", 0},
	{O_SKIP_FIRST, 0, "skip-first", "D", "start each decode window D later (e.g. 5s), as report", 0},
	{O_WINDOW, 0, "window", "D", "measure at most D of each window (e.g. 10s), as report", 0},
	{O_SLO, 0, "slo", "LIST", "heatmap: outline the highest concurrency per context\n"
				 "meeting these SLOs; open-loop charts: SLOs for goodput\n"
				 "and the SLO limit (as report's --slo)", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd chart_cmd = {
	"chart", NULL, print_head,
	"\n"
	"exit status: 0 drawn; 1 the run or the chart failed; 2 wrong usage;\n"
	"3 drawn, but damaged parts of the run were skipped (or, for all,\n"
	"charts were left out)\n",
	22, options, sizeof options / sizeof *options};

/* What the command line asks for. */
struct chart_args {
	const char *run_path, *kind_name, *output, *cell_id, *as;
	int all;                 /* KIND is 'all' */
	double skip_first, window;
	struct tt_slo slo;       /* --slo; none set: tt_slo_init */
	struct tt_chart_opts o;
	char default_out[64];    /* KIND.png when there is no -o */
	const char *preset;      /* --preset, applied before the options below */
	double width, height, font_scale; /* given: > 0 */
	int no_title;
};

/* --width, --height, --font-scale, --dpi or --concurrency (id; a as
 * written) with its value val. */
static int parse_number_opt(int id, const char *a, const char *val, struct tt_chart_opts *o)
{
	double lo = id == O_CONCURRENCY ? 1 : id == O_DPI ? 24 : id == O_FONT_SCALE ? 0.5 : 16;
	double hi = id == O_DPI ? 2400 : id == O_FONT_SCALE ? 4 : 20000;
	double v;

	if (cli_number(a, val, lo, hi, &v) != 0)
		return -1;
	if (id == O_WIDTH)
		o->width = v;
	else if (id == O_HEIGHT)
		o->height = v;
	else if (id == O_FONT_SCALE)
		o->font_scale = v;
	else if (id == O_DPI)
		o->dpi = v;
	else
		o->concurrency = (int)v;
	return 0;
}

/* Read the options and arguments into ca.  Returns -1 to go on, or the
 * exit status: 0 after --help, 2 on wrong usage. */
static int parse_args(int argc, char **argv, struct chart_args *ca)
{
	struct cli_iter it;
	const char *v;
	int id;

	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&chart_cmd, &it, &v)) != CLI_END) {
		const char *a = it.opt;

		switch (id) {
		case CLI_HELP:
			return 0;
		case CLI_BAD:
			return 2;
		case CLI_ARG:
			if (!ca->run_path) {
				ca->run_path = v;
			} else if (!ca->kind_name) {
				ca->kind_name = v;
			} else {
				cli_error("unexpected argument '%s'", v);
				return 2;
			}
			break;
		case O_OUTPUT:
			ca->output = v;
			break;
		case O_WIDTH:
		case O_HEIGHT:
		case O_FONT_SCALE: {
			/* kept aside: a --preset anywhere on the line must not undo them */
			struct tt_chart_opts given;
			memset(&given, 0, sizeof given);
			if (parse_number_opt(id, a, v, &given) != 0)
				return 2;
			if (id == O_WIDTH)
				ca->width = given.width;
			else if (id == O_HEIGHT)
				ca->height = given.height;
			else
				ca->font_scale = given.font_scale;
			break;
		}
		case O_DPI:
		case O_CONCURRENCY:
			if (parse_number_opt(id, a, v, &ca->o) != 0)
				return 2;
			break;
		case O_NO_TITLE:
			ca->no_title = 1;
			break;
		case O_PRESET: {
			struct tt_chart_opts probe;
			struct tt_error err;
			tt_chart_opts_init(&probe);
			if (tt_failed(tt_chart_preset(v, &probe, &err))) {
				cli_error("%s: %s", a, err.msg);
				return 2;
			}
			ca->preset = v;
			break;
		}
		case O_SKIP_FIRST:
			if (cli_duration(a, v, "5s", &ca->skip_first))
				return 2;
			break;
		case O_WINDOW:
			/* --window 0: to the recorded window end, as report takes it */
			if (cli_duration(a, v, "10s", &ca->window))
				return 2;
			break;
		case O_SLO:
			if (cli_slo(v, &ca->slo))
				return 2;
			break;
		case O_AS:
			ca->as = v;
			break;
		case O_CELL:
			ca->cell_id = v;
			break;
		}
	}
	if (!ca->run_path || !ca->kind_name) {
		cli_error("%s", !ca->run_path ? "no run given" : "no chart kind given");
		cli_print_help(&chart_cmd, stderr);
		return 2;
	}
	/* the preset first, then what was given one by one */
	if (ca->preset) {
		struct tt_error err;
		(void)tt_chart_preset(ca->preset, &ca->o, &err); /* checked above */
	}
	if (ca->width > 0)
		ca->o.width = ca->width;
	if (ca->height > 0)
		ca->o.height = ca->height;
	if (ca->font_scale > 0)
		ca->o.font_scale = ca->font_scale;
	if (ca->no_title)
		ca->o.no_title = 1;
	return -1;
}

/* The kind, the output and its format: for all, a directory and --as; for
 * one chart, -o FILE's extension.  Returns 0, or 2 on wrong usage. */
static int resolve_output(struct chart_args *ca)
{
	const char *as = ca->as;
	int kind, fmt;

	ca->all = strcmp(ca->kind_name, "all") == 0;
	kind = ca->all ? 0 : tt_chart_kind_parse(ca->kind_name);
	if (kind < 0) {
		cli_error("unknown chart kind '%s' (valid: %s, or all)", ca->kind_name,
			  tt_chart_kind_list());
		return 2;
	}
	ca->o.kind = (enum tt_chart_kind)kind;
	if (as && !ca->all) {
		cli_error("'--as' is for 'all'; one chart takes its format from -o FILE's "
			  "extension");
		return 2;
	}
	if (ca->all) {
		char probe[32];
		snprintf(probe, sizeof probe, "x.%s", as ? as : "svg");
		fmt = strlen(as ? as : "svg") < 5 ? tt_chart_format_from_path(probe) : -1;
		if (fmt < 0) {
			cli_error("unknown format '%s' for '--as' (valid: svg, png, pdf)", as);
			return 2;
		}
		if (!ca->output)
			ca->output = "charts";
	} else {
		if (!ca->output) {
			snprintf(ca->default_out, sizeof ca->default_out, "%s.png", ca->kind_name);
			ca->output = ca->default_out;
		}
		fmt = tt_chart_format_from_path(ca->output);
		if (fmt < 0) {
			cli_error("cannot tell the format of '%s' (valid extensions: .png, .svg, "
				  ".pdf)",
				  ca->output);
			return 2;
		}
	}
	ca->o.format = (enum tt_chart_format)fmt;
	return 0;
}

/* Open the run, analyse it and write the chart (or all of them).  Returns
 * the exit status: 0 drawn, 1 failed, 3 drawn from a damaged run. */
static int draw(struct chart_args *ca)
{
	struct tt_analysis_opts ao;
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_error err;
	enum tt_code rc;
	int status = 1, warned = 0;

	if (cli_open_run(ca->run_path, NULL, &run, &warned))
		goto cleanup;
	if (ca->cell_id) {
		long idx = tt_manifest_find_cell(tt_run_manifest(run), ca->cell_id);
		if (idx < 0) {
			cli_error("no cell '%s' in '%s'", ca->cell_id, ca->run_path);
			goto cleanup;
		}
		ca->o.cell = idx;
	}
	tt_analysis_opts_init(&ao);
	tt_chart_analysis_opts(&ao);
	ao.skip_first_s = ca->skip_first;
	ao.window_s = ca->window;
	ao.slo = ca->slo;
	rc = tt_analyze(run, &ao, &rep, &err);
	if (rc == TT_WARN)
		warned = 1;
	if (rc == TT_WARN)
		cli_warn("%s", err.msg);
	else if (rc != TT_OK) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	tt_error_clear(&err);
	if (ca->all) {
		rc = tt_render_all_sized(rep, run, ca->output, ca->o.format, &ca->o, &err);
		if (rc == TT_WARN) {
			cli_warn("%s", err.msg);
			warned = 1;
		}
	} else {
		rc = tt_chart_write(rep, run, &ca->o, ca->output, NULL, &err);
	}
	if (rc > TT_WARN) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	/* as `report` does: 3 when parts of the run were damaged or left out */
	status = warned ? 3 : 0;
cleanup:
	tt_report_free(rep);
	tt_run_free(run);
	return status;
}

int cmd_chart(int argc, char **argv)
{
	struct chart_args ca;
	int status;

	memset(&ca, 0, sizeof ca);
	tt_chart_opts_init(&ca.o);
	status = parse_args(argc, argv, &ca);
	if (status >= 0)
		return status;
	if (resolve_output(&ca) != 0)
		return 2;
	return draw(&ca);
}
