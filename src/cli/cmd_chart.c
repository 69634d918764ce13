/* tokentrace chart RUN KIND [-o FILE.png|.svg|.pdf] [--width W] [--height H]
 *                 [--dpi D] [--cell ID] [--concurrency C]
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

#include "commands.h"

static void usage(FILE *f)
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
	fprintf(f,
		"\n"
		"options:\n"
		"  -o, --output FILE   where to write the chart (.png, .svg or .pdf)\n"
		"  --width W           width: PNG pixels, SVG/PDF CSS pixels (default 960)\n"
		"  --height H          height, same units (default 600)\n"
		"  --dpi D             PNG pixel density: 192 draws twice as large (default 96)\n"
		"  --cell ID           timeline: the cell to show, e.g. decode-8192x16\n"
		"                      (default: the highest concurrency at the smallest context)\n"
		"  --concurrency C     tbt-cdf: the concurrency level (default: the highest)\n"
		"  --as FORMAT         all: chart format, svg, png or pdf (default svg)\n"
		"  --skip-first D      start each decode window D later (e.g. 5s), as report\n"
		"  --window D          measure at most D of each window (e.g. 10s), as report\n"
		"  -h, --help          show this help\n"
		"\n"
		"exit status: 0 drawn; 1 the run or the chart failed; 2 wrong usage;\n"
		"3 drawn, but damaged parts of the run were skipped (or, for all,\n"
		"charts were left out)\n");
}

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;
	if (!s) {
		cli_error("option '%s' needs a value", opt);
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !(v >= lo && v <= hi)) {
		cli_error("option '%s': '%s' is not a number from %g to %g", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cmd_chart(int argc, char **argv)
{
	const char *run_path = NULL, *kind_name = NULL, *output = NULL, *cell_id = NULL;
	const char *as = NULL;
	int all = 0;
	char default_out[64];
	struct tt_chart_opts o;
	struct tt_analysis_opts ao;
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_error err;
	enum tt_code rc;
	int kind, fmt, status = 1, warned = 0;
	double v, skip_first = 0, window = 0;

	tt_chart_opts_init(&o);
	tt_error_clear(&err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			status = 0;
			goto cleanup;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if (++i >= argc) {
				cli_error("option '%s' needs a file name", a);
				status = 2;
				goto cleanup;
			}
			output = argv[i];
		} else if (strcmp(a, "--width") == 0 || strcmp(a, "--height") == 0 ||
			   strcmp(a, "--dpi") == 0 || strcmp(a, "--concurrency") == 0) {
			double lo = strcmp(a, "--concurrency") == 0 ? 1 : 16;
			double hi = strcmp(a, "--dpi") == 0 ? 2400 : 20000;
			if (strcmp(a, "--dpi") == 0)
				lo = 24;
			if (parse_num(a, i + 1 < argc ? argv[i + 1] : NULL, lo, hi, &v) != 0) {
				status = 2;
				goto cleanup;
			}
			i++;
			if (strcmp(a, "--width") == 0)
				o.width = v;
			else if (strcmp(a, "--height") == 0)
				o.height = v;
			else if (strcmp(a, "--dpi") == 0)
				o.dpi = v;
			else
				o.concurrency = (int)v;
		} else if (strcmp(a, "--skip-first") == 0 || strcmp(a, "--window") == 0) {
			int skip = strcmp(a, "--skip-first") == 0;
			double d = i + 1 < argc ? tt_parse_duration(argv[i + 1]) : -1;
			if (d < 0 || (!skip && d == 0)) {
				cli_error("%s: '%s' is not a%s duration (e.g. %s)", a,
					  i + 1 < argc ? argv[i + 1] : "", skip ? "" : " positive",
					  skip ? "5s" : "10s");
				status = 2;
				goto cleanup;
			}
			i++;
			if (skip)
				skip_first = d;
			else
				window = d;
		} else if (strcmp(a, "--as") == 0) {
			if (++i >= argc) {
				cli_error("option '--as' needs a format: svg, png or pdf");
				status = 2;
				goto cleanup;
			}
			as = argv[i];
		} else if (strcmp(a, "--cell") == 0) {
			if (++i >= argc) {
				cli_error("option '--cell' needs a cell id, e.g. decode-8192x16");
				status = 2;
				goto cleanup;
			}
			cell_id = argv[i];
		} else if (a[0] == '-' && a[1] != '\0') {
			cli_error("unknown option '%s' (see 'tokentrace chart --help')", a);
			status = 2;
			goto cleanup;
		} else if (!run_path) {
			run_path = a;
		} else if (!kind_name) {
			kind_name = a;
		} else {
			cli_error("unexpected argument '%s'", a);
			status = 2;
			goto cleanup;
		}
	}
	if (!run_path || !kind_name) {
		cli_error("%s", !run_path ? "no run given" : "no chart kind given");
		usage(stderr);
		status = 2;
		goto cleanup;
	}
	all = strcmp(kind_name, "all") == 0;
	kind = all ? 0 : tt_chart_kind_parse(kind_name);
	if (kind < 0) {
		cli_error("unknown chart kind '%s' (valid: %s, or all)", kind_name,
			  tt_chart_kind_list());
		status = 2;
		goto cleanup;
	}
	o.kind = (enum tt_chart_kind)kind;
	if (as && !all) {
		cli_error("'--as' is for 'all'; one chart takes its format from -o FILE's "
			  "extension");
		status = 2;
		goto cleanup;
	}
	if (all) {
		char probe[32];
		snprintf(probe, sizeof probe, "x.%s", as ? as : "svg");
		fmt = strlen(as ? as : "svg") < 5 ? tt_chart_format_from_path(probe) : -1;
		if (fmt < 0) {
			cli_error("unknown format '%s' for '--as' (valid: svg, png, pdf)", as);
			status = 2;
			goto cleanup;
		}
		if (!output)
			output = "charts";
	} else {
		if (!output) {
			snprintf(default_out, sizeof default_out, "%s.png", kind_name);
			output = default_out;
		}
		fmt = tt_chart_format_from_path(output);
		if (fmt < 0) {
			cli_error("cannot tell the format of '%s' (valid extensions: .png, .svg, "
				  ".pdf)",
				  output);
			status = 2;
			goto cleanup;
		}
	}
	o.format = (enum tt_chart_format)fmt;

	rc = tt_run_open(run_path, &run, &err);
	if (rc > TT_WARN) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (cell_id) {
		long idx = tt_manifest_find_cell(tt_run_manifest(run), cell_id);
		if (idx < 0) {
			cli_error("no cell '%s' in '%s'", cell_id, run_path);
			goto cleanup;
		}
		o.cell = idx;
	}
	tt_analysis_opts_init(&ao);
	tt_chart_analysis_opts(&ao);
	ao.skip_first_s = skip_first;
	ao.window_s = window;
	rc = tt_analyze(run, &ao, &rep, &err);
	warned = rc == TT_WARN;
	if (rc == TT_WARN)
		fprintf(stderr, "tokentrace: warning: %s\n", err.msg);
	else if (rc != TT_OK) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	tt_error_clear(&err);
	if (all) {
		rc = tt_render_all(rep, run, output, o.format, &err);
		if (rc == TT_WARN) {
			fprintf(stderr, "tokentrace: warning: %s\n", err.msg);
			warned = 1;
		}
	} else {
		rc = tt_chart_write(rep, run, &o, output, NULL, &err);
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
