/* tokentrace diff BASE CANDIDATE [options]
 * tokentrace diff --base R1 R2.. --candidate S1 S2.. [options]
 *
 * Compares two engine versions cell by cell (docs/diff.md); exits 1 when
 * the release gate (--fail-if-slower) fails, 2 on any error. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"
#include "tokentrace/run.h"
#include "tokentrace/units.h"

#include "cli_opts.h"
#include "commands.h"

enum {
	O_BASE = 1, O_CANDIDATE, O_FORMAT, O_OUTPUT, O_FAIL_IF_SLOWER, O_ALLOW_SINGLE_RUN,
	O_FIGURE, O_FAIL_ON_STATUS_CHANGE, O_TOLERANCE, O_TAIL, O_CELL, O_CHARTS,
	O_CHART_FORMAT, O_ALPHA, O_MIN_CHANGE, O_RUN_ALLOWANCE, O_REPLICATES, O_SEED,
	O_SKIP_FIRST, O_WINDOW, O_SLO, O_NO_COLOR, O_QUIET
};

static const struct cli_opt options[] = {
	{O_BASE, 0, "base", "RUN...", "several runs of the base setup (replicates)", CLI_LIST},
	{O_CANDIDATE, 0, "candidate", "RUN...", "several runs of the candidate setup\n"
						"(a directory of repeats from tokentrace-capture\n"
						"--repeat N counts as its N runs)", CLI_LIST},
	{O_FORMAT, 'f', "format", "F", "term (default on a terminal), md (default otherwise),\n"
				       "csv, json, html, pdf (pdf needs -o)", 0},
	{O_OUTPUT, 'o', "output", "FILE", "write to FILE instead of standard output", 0},
	{O_FAIL_IF_SLOWER, 0, "fail-if-slower", "PCT",
	 "exit 1 when a cell is significantly slower by more\n"
	 "than PCT (e.g. 5%) in the gate's figure; refused\n"
	 "with one run per side (exit 2)", 0},
	{O_ALLOW_SINGLE_RUN, 0, "allow-single-run", NULL,
	 "gate on one run per side anyway (the verdicts cannot\n"
	 "tell a version change from run-to-run drift)", 0},
	{O_FIGURE, 0, "figure", "NAME", "the gate's figure: total (default), per-request,\n"
				       "ttft, ttft-tail, tbt, tbt-tail, prefill", 0},
	{O_FAIL_ON_STATUS_CHANGE, 0, "fail-on-status-change", NULL,
	 "exit 1 when a Valid cell of the base is Requests\n"
	 "queued or Over capacity in the candidate", 0},
	{O_TOLERANCE, 0, "tolerance", "PCT", "compare two single reported figures (imported runs\n"
					    "without samples): within or beyond +-PCT (e.g. 5%);\n"
					    "no significance is claimed (default: not compared)", 0},
	{O_TAIL, 0, "tail", "P", "tail percentile of TTFT and TBT (default 90)", 0},
	{O_CELL, 0, "cell", "ID", "the cell whose time between tokens the html and pdf\n"
				 "overlay (e.g. decode-8192x16; default: the largest change)", 0},
	{O_CHARTS, 0, "charts", "DIR", "also write every chart as DIR/diff-KIND.svg (or .png\n"
				      "with --chart-format png)", 0},
	{O_CHART_FORMAT, 0, "chart-format", "F", "svg (default), png or pdf for --charts", 0},
	{O_ALPHA, 0, "alpha", "A", "false-positive rate of the whole diff (default 0.05)", 0},
	{O_MIN_CHANGE, 0, "min-change", "PCT",
	 "report significant changes under PCT as none (default 1%)", 0},
	{O_RUN_ALLOWANCE, 0, "run-allowance", "PCT",
	 "run-to-run allowance of a side of one run, every\n"
	 "figure (default: measured per figure; 0 turns it off)", 0},
	{O_REPLICATES, 0, "replicates", "N", "bootstrap replicates per run and cell (default 200)", 0},
	{O_SEED, 0, "seed", "N", "bootstrap seed (default 1)", 0},
	{O_SKIP_FIRST, 0, "skip-first", "D", "start each decode window D later (e.g. 5s)", 0},
	{O_WINDOW, 0, "window", "D", "measure at most D of each window (e.g. 10s)", 0},
	{O_SLO, 0, "slo", "LIST", "open-loop curves: each side's SLO limit (M-rate-limit)", 0},
	{O_NO_COLOR, 0, "no-color", NULL, "no colour in term output (NO_COLOR is respected too)", 0},
	{O_QUIET, 'q', "quiet", NULL, "no summary line on standard error", 0},
	{CLI_OPT_HELP, 'h', "help", NULL, "show this help", 0},
};

static const struct cli_cmd diff_cmd = {
	"diff",
	"usage: tokentrace diff BASE CANDIDATE [options]\n"
	"       tokentrace diff --base RUN... --candidate RUN... [options]\n"
	"\n"
	"Compare two runs (engine versions, settings) cell by cell: each figure's\n"
	"change, a confidence interval from the raw traces, and a verdict (faster,\n"
	"slower, no significant change).  Method and assumptions: docs/diff.md.\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 no gate or the gates passed; 1 a gate failed; 2 error\n"
	"(usage, a run that cannot be read, --fail-if-slower on one run per side\n"
	"without --allow-single-run).  Damaged cells are warned about and\n"
	"compared on their intact part.\n",
	25, options, sizeof options / sizeof *options};

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end || errno || !isfinite(*out) ? -1 : 0;
}

/* Every chart of the diff into dir (created if missing). */
static int write_charts(const struct tt_diff *d, const char *dir, enum tt_chart_format cf,
			const char *cell, const struct tt_diff_gate_opts *gate)
{
	static const char *const ext[] = {"png", "svg", "pdf"};

	if (mkdir(dir, 0777) && errno != EEXIST) {
		cli_error("cannot create '%s': %s", dir, strerror(errno));
		return -1;
	}
	for (int k = 0; k < TT_DIFF_CHART_KIND_COUNT_; k++) {
		struct tt_diff_chart_opts o;
		struct tt_error err;
		struct tt_buf b;
		char path[4096];
		int bad;

		tt_diff_chart_opts_init(&o);
		o.kind = (enum tt_diff_chart_kind)k;
		o.format = cf;
		o.cell = cell;
		if (gate->on) /* the heatmap shows the figure the gate judges */
			o.figure = gate->figure;
		snprintf(path, sizeof path, "%s/diff-%s.%s", dir, tt_diff_chart_kind_name(o.kind),
			 ext[cf]);
		tt_buf_init(&b, 0);
		tt_error_clear(&err);
		bad = tt_diff_chart_render(d, &o, &b, &err) || tt_buf_write_file(&b, path, &err);
		tt_buf_release(&b);
		if (bad) {
			cli_error("%s: %s", path, err.msg);
			return -1;
		}
	}
	return 0;
}

/* A directory of repeats (tokentrace-capture --repeat N, formats/
 * run-set-v1.md): no manifest of its own, runs rep-1 .. rep-N.  Their
 * count, 0 when path is not one. */
static size_t run_set_size(const char *path)
{
	char p[4200];
	struct stat st;
	size_t n = 0;

	snprintf(p, sizeof p, "%s/manifest.json", path);
	if (stat(p, &st) == 0)
		return 0;
	for (;;) {
		snprintf(p, sizeof p, "%s/rep-%zu/manifest.json", path, n + 1);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			return n;
		n++;
	}
}

/* The runs of a side, each run set expanded into its repeats (strings
 * owned by *out, freed by free_runs). */
static int expand_runs(const char *const *paths, size_t n, char ***out, size_t *n_out)
{
	char **v = NULL;
	size_t k = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		size_t m = run_set_size(paths[i]), parts = m ? m : 1;
		for (size_t j = 0; j < parts; j++) {
			char buf[4200];
			if (k == cap) {
				size_t nc = cap ? cap * 2 : 8;
				char **g = realloc(v, nc * sizeof *g);
				if (!g)
					goto oom;
				v = g;
				cap = nc;
			}
			if (m)
				snprintf(buf, sizeof buf, "%s/rep-%zu", paths[i], j + 1);
			else
				snprintf(buf, sizeof buf, "%s", paths[i]);
			if (!(v[k] = strdup(buf)))
				goto oom;
			k++;
		}
	}
	*out = v;
	*n_out = k;
	return 0;
oom:
	for (size_t i = 0; i < k; i++)
		free(v[i]);
	free(v);
	return -1;
}

static void free_runs(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Open and analyse every run of a side. */
static int load_side(const char *name, char *const *paths, size_t n,
		     const struct tt_analysis_opts *ao, struct tt_diff_side *side)
{
	for (size_t i = 0; i < n; i++) {
		struct tt_run *run = NULL;
		struct tt_error err;
		enum tt_code rc;

		char what[32];

		snprintf(what, sizeof what, "diff: %s run", name);
		if (cli_open_run(paths[i], what, &run, NULL))
			return -1;
		tt_error_clear(&err);
		rc = tt_diff_side_add(side, run, ao, &err);
		tt_run_free(run);
		if (rc > TT_WARN) {
			cli_error("diff: %s run '%s': %s", name, paths[i], err.msg);
			return -1;
		}
		if (rc == TT_WARN)
			fprintf(stderr, "tokentrace: warning: %s run '%s': %s\n", name, paths[i],
				err.msg);
	}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	const char **base = NULL, **cand = NULL, *out = NULL, *fmt = NULL, *figure = NULL;
	const char *cell = NULL, *charts = NULL;
	char cell_canon[96];
	enum tt_chart_format chart_format = TT_CHART_SVG;
	size_t n_base = 0, n_cand = 0;
	struct tt_analysis_opts ao;
	struct tt_diff_opts dopts;
	struct tt_diff_gate_opts gate;
	struct tt_render_opts ro;
	struct tt_diff_side *sb = NULL, *sc = NULL;
	struct tt_diff *d = NULL;
	struct tt_error err;
	struct tt_buf buf;
	int f, status = 2, no_color = 0, quiet = 0, list = 0; /* 1 base, 2 candidate */
	int positional = 0, listed = 0, chart_format_set = 0, allow_single = 0;
	char **runs_b = NULL, **runs_c = NULL;
	size_t nrb = 0, nrc = 0;
	enum tt_code rc;
	struct cli_iter it;
	const char *v;
	int id;

	tt_analysis_opts_init(&ao);
	tt_diff_opts_init(&dopts);
	memset(&gate, 0, sizeof gate);
	gate.figure = TT_DIFF_TOTAL;
	tt_buf_init(&buf, 0);
	base = calloc((size_t)argc, sizeof *base);
	cand = calloc((size_t)argc, sizeof *cand);
	if (!base || !cand) {
		cli_error("out of memory");
		goto cleanup;
	}
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&diff_cmd, &it, &v)) != CLI_END) {
		double x;

		switch (id) {
		case CLI_HELP:
			status = 0;
			goto cleanup;
		case CLI_BAD:
			goto cleanup;
		case O_BASE:
		case O_CANDIDATE:
			list = id == O_BASE ? 1 : 2;
			listed = 1;
			continue;
		case O_NO_COLOR:
			no_color = 1;
			continue;
		case O_QUIET:
			quiet = 1;
			continue;
		case O_FAIL_ON_STATUS_CHANGE:
			gate.status_change = 1;
			continue;
		case O_ALLOW_SINGLE_RUN:
			allow_single = 1;
			list = 0;
			continue;
		case CLI_ARG:
			if (list == 1) {
				base[n_base++] = v;
			} else if (list == 2) {
				cand[n_cand++] = v;
			} else if (listed) {
				cli_error("diff: '%s': runs go after --base or --candidate, not on their "
					  "own", v);
				goto cleanup;
			} else if (positional == 0) {
				base[n_base++] = v;
				positional++;
			} else if (positional == 1) {
				cand[n_cand++] = v;
				positional++;
			} else {
				cli_error("diff takes two runs (BASE CANDIDATE), got a third: '%s'; "
					  "several runs of a side go after --base or --candidate", v);
				goto cleanup;
			}
			continue;
		default:
			break;
		}
		/* an option with a value ends a list of runs */
		list = 0;
		switch (id) {
		case O_FORMAT:
			fmt = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_FAIL_IF_SLOWER:
			if ((gate.threshold_pct = cli_pct(v)) < 0) {
				cli_error("--fail-if-slower: '%s' is not a percentage (e.g. 5%%)", v);
				goto cleanup;
			}
			gate.on = 1;
			break;
		case O_SLO:
			if (cli_slo(v, &ao.slo))
				goto cleanup;
			break;
		case O_FIGURE:
			figure = v;
			break;
		case O_CELL:
			/* one cell-id syntax: decode-8Kx64 as the capture takes it */
			tt_cell_id_canonical(v, cell_canon, sizeof cell_canon);
			cell = cell_canon;
			break;
		case O_CHARTS:
			charts = v;
			break;
		case O_CHART_FORMAT:
			chart_format_set = 1;
			if (!strcmp(v, "svg"))
				chart_format = TT_CHART_SVG;
			else if (!strcmp(v, "png"))
				chart_format = TT_CHART_PNG;
			else if (!strcmp(v, "pdf"))
				chart_format = TT_CHART_PDF;
			else {
				cli_error("--chart-format: '%s' is not svg, png or pdf", v);
				goto cleanup;
			}
			break;
		case O_TAIL:
			if (parse_num(v, &x) || !(x > 50 && x < 100)) {
				cli_error("--tail: '%s' is not a percentile in (50, 100), e.g. 90", v);
				goto cleanup;
			}
			dopts.tail = x;
			break;
		case O_ALPHA:
			if (parse_num(v, &x) || !(x > 0 && x < 0.5)) {
				cli_error("--alpha: '%s' is not a rate in (0, 0.5), e.g. 0.05", v);
				goto cleanup;
			}
			dopts.alpha = x;
			break;
		case O_MIN_CHANGE:
			if ((dopts.min_change = cli_pct(v)) < 0) {
				cli_error("--min-change: '%s' is not a percentage (e.g. 2%%)", v);
				goto cleanup;
			}
			break;
		case O_RUN_ALLOWANCE:
			if ((x = cli_pct(v)) < 0 || x > 100) {
				cli_error("--run-allowance: '%s' is not a percentage in 0..100 "
					  "(e.g. 2%%; 0 turns it off)", v);
				goto cleanup;
			}
			for (int k = 0; k < TT_DIFF_FIGURE_COUNT_; k++)
				dopts.run_allowance[k] = x;
			break;
		case O_TOLERANCE:
			if ((dopts.tolerance = cli_pct(v)) < 0) {
				cli_error("--tolerance: '%s' is not a percentage (e.g. 5%%)", v);
				goto cleanup;
			}
			break;
		case O_REPLICATES:
			if (parse_num(v, &x) || x < 50 || x > 100000 || x != floor(x)) {
				cli_error("--replicates: '%s' is not a whole number in 50..100000", v);
				goto cleanup;
			}
			dopts.replicates = (unsigned)x;
			break;
		case O_SEED: {
			char *end;
			errno = 0;
			dopts.seed = strtoull(v, &end, 10);
			if (end == v || *end || errno || v[0] == '-') {
				cli_error("--seed: '%s' is not a whole number", v);
				goto cleanup;
			}
			break;
		}
		case O_SKIP_FIRST:
			if (cli_duration("--skip-first", v, "5s", &ao.skip_first_s))
				goto cleanup;
			break;
		case O_WINDOW:
			if ((ao.window_s = tt_parse_duration(v)) <= 0) {
				cli_error("--window: '%s' is not a positive duration (e.g. 10s)", v);
				goto cleanup;
			}
			break;
		}
	}
	if (listed && positional) {
		cli_error("diff: give the runs either as BASE CANDIDATE or with --base and --candidate");
		goto cleanup;
	}
	if (!n_base || !n_cand) {
		cli_error("diff needs a base and a candidate run (see 'tokentrace diff --help')");
		goto cleanup;
	}
	if (expand_runs(base, n_base, &runs_b, &nrb) || expand_runs(cand, n_cand, &runs_c, &nrc)) {
		cli_error("out of memory");
		goto cleanup;
	}
	if (nrb > TT_DIFF_MAX_RUNS || nrc > TT_DIFF_MAX_RUNS) {
		cli_error("diff: at most %d runs on a side", TT_DIFF_MAX_RUNS);
		goto cleanup;
	}
	if (figure) {
		int g = tt_diff_figure_parse(figure);
		if (g < 0) {
			cli_error("--figure: unknown figure '%s' (total, per-request, ttft, ttft-tail, "
				  "tbt, tbt-tail, prefill)", figure);
			goto cleanup;
		}
		if (!gate.on) {
			cli_error("--figure chooses the gate's figure: it needs --fail-if-slower");
			goto cleanup;
		}
		gate.figure = (enum tt_diff_figure)g;
	}
	if (!fmt)
		fmt = !out && isatty(STDOUT_FILENO) ? "term" : "md";
	f = tt_format_parse(fmt);
	if (f < 0) {
		cli_error("unknown format '%s' for diff (term, md, csv, json, html, pdf)", fmt);
		goto cleanup;
	}
	if (f == TT_FORMAT_PDF && !out) {
		cli_error("--format pdf needs -o FILE.pdf");
		goto cleanup;
	}
	if (cell && f != TT_FORMAT_HTML && f != TT_FORMAT_PDF && !charts) {
		cli_error("--cell chooses the cell of the time-between-tokens chart: it needs "
			  "--format html or pdf, or --charts DIR");
		goto cleanup;
	}
	if (chart_format_set && !charts) {
		cli_error("--chart-format is the format of --charts DIR: it needs --charts");
		goto cleanup;
	}

	/* docs/diff.md "One run per side": a gate on two single runs would
	 * fail or pass on run-to-run drift as much as on the version. */
	if (gate.on && nrb == 1 && nrc == 1 && !allow_single) {
		cli_error("diff: --fail-if-slower refuses to gate on one run per side: a single "
			  "run cannot tell a version change from run-to-run drift.  Measure "
			  "replicates (tokentrace-capture --repeat 3) and give them with --base "
			  "and --candidate, or accept single runs with --allow-single-run");
		goto cleanup;
	}
	if (allow_single && !gate.on) {
		cli_error("--allow-single-run lets --fail-if-slower gate on one run per side: it "
			  "needs --fail-if-slower");
		goto cleanup;
	}
	tt_error_clear(&err);
	if (tt_failed(tt_diff_side_create(&dopts, &sb, &err)) ||
	    tt_failed(tt_diff_side_create(&dopts, &sc, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (load_side("base", runs_b, nrb, &ao, sb) || load_side("candidate", runs_c, nrc, &ao, sc))
		goto cleanup;
	if (tt_failed(tt_diff_compare(sb, sc, &d, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	memset(&ro, 0, sizeof ro);
	ro.color = f == TT_FORMAT_TERM && !out && !no_color && isatty(STDOUT_FILENO) &&
		   !getenv("NO_COLOR");
	if (f == TT_FORMAT_HTML)
		rc = tt_diff_render_html(d, &gate, cell, &buf, &err);
	else if (f == TT_FORMAT_PDF)
		rc = tt_diff_render_pdf(d, &gate, cell, &buf, &err);
	else
		rc = tt_diff_render(d, (enum tt_format)f, &ro, &gate, &buf, &err);
	if (tt_failed(rc)) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (charts && write_charts(d, charts, chart_format, cell, &gate))
		goto cleanup;
	if (cli_write_out(out, buf.data ? buf.data : "", buf.len))
		goto cleanup;
	if (!quiet) {
		char line[600];
		tt_diff_summary(d, &gate, line, sizeof line);
		fprintf(stderr, "%s\n", line);
	}
	status = (gate.on && tt_diff_gate(d, gate.figure, gate.threshold_pct)) ||
			 (gate.status_change && tt_diff_status_gate(d)) ? 1 : 0;
cleanup:
	tt_buf_release(&buf);
	tt_diff_free(d);
	tt_diff_side_free(sb);
	tt_diff_side_free(sc);
	free(base);
	free(cand);
	free_runs(runs_b, nrb);
	free_runs(runs_c, nrc);
	return status;
}
