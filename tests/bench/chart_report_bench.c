/* Chart and report benchmark: what do all the charts and the HTML and PDF
 * reports of a run cost, against the table report of the same run?
 *
 * usage: chart_report_bench [RUN] [REPS]
 *
 * Without RUN, a seed-scale synthetic run (fixtures/profiles/seed-matrix.csv,
 * about 7 million tokens) is written to a temporary directory first.  Each
 * step is timed REPS times (default 3) and the fastest time is printed.
 * Times are CPU seconds of this process (see now()).
 * Target (issue #5): all charts + HTML + PDF <= 3x the table report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokentrace/analysis.h"
#include "tokentrace/chart.h"
#include "tokentrace/profile.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

/* CPU time of this process: the cost, and steadier than wall time on a
 * machine that is busy with other work (all the work here is on one
 * thread, so it is also the wall time of an idle machine). */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char scratch[] = "/tmp/tt-chart-bench-out-XXXXXX";

static const char *tmpdir(void)
{
	static int made;
	if (!made && !mkdtemp(scratch)) {
		perror("mkdtemp");
		exit(1);
	}
	made = 1;
	return scratch;
}

static void die(const char *what, const struct tt_error *err)
{
	fprintf(stderr, "chart_report_bench: %s: %s\n", what, err->msg);
	exit(1);
}

static struct tt_report *analyze(const char *path, int chart_quantiles, double *secs)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts ao;
	struct tt_error err;
	double t0 = now();
	if (tt_run_open(path, &run, &err) > TT_WARN)
		die("open", &err);
	tt_analysis_opts_init(&ao);
	if (chart_quantiles)
		tt_chart_analysis_opts(&ao);
	if (tt_analyze(run, &ao, &rep, &err) > TT_WARN)
		die("analyze", &err);
	*secs = now() - t0;
	tt_run_free(run);
	return rep;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	char tmp[] = "/tmp/tt-chart-bench-XXXXXX", runpath[64], cmd[128];
	double best_table = INFINITY, best_an = INFINITY, best_render = INFINITY;
	double best_chart[TT_CHART_KIND_COUNT_], best_html = INFINITY, best_pdf = INFINITY;
	double best_charts_an = INFINITY, best_all[2] = {INFINITY, INFINITY};
	size_t html_bytes = 0, pdf_bytes = 0, png_bytes = 0;
	long tokens = 0;
	struct tt_error err;

	if (reps < 1)
		reps = 1;
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		best_chart[k] = INFINITY;
	if (!path) {
		struct tt_profile *p = NULL;
		struct tt_synth_opts so;
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
		snprintf(runpath, sizeof runpath, "%s/run", tmp);
		if (tt_profile_load(TT_FIXTURES "/profiles/seed-matrix.csv", &p, &err) != TT_OK)
			die("profile", &err);
		tt_synth_opts_init(&so);
		printf("writing a seed-scale synthetic run to %s ...\n", runpath);
		if (tt_synth_run(p, runpath, &so, NULL, &err) != TT_OK)
			die("synth", &err);
		tt_profile_free(p);
		path = runpath;
	}

	for (int rep = 0; rep < reps; rep++) {
		struct tt_report *r;
		struct tt_run *run = NULL;
		struct tt_buf b;
		struct tt_render_opts ro;
		double an, t0, t_charts = 0;

		/* the table report: open + analyse + render the terminal table */
		r = analyze(path, 0, &an);
		tt_buf_init(&b, 0);
		memset(&ro, 0, sizeof ro);
		t0 = now();
		if (tt_render(r, TT_FORMAT_TERM, &ro, &b, &err) != TT_OK)
			die("render", &err);
		best_render = fmin(best_render, now() - t0);
		best_table = fmin(best_table, an + (now() - t0));
		tokens = 0;
		for (size_t i = 0; i < r->n_cells; i++)
			if (r->cells[i].phase == TT_PHASE_DECODE && r->cells[i].output_tokens > 0)
				tokens += r->cells[i].output_tokens;
		tt_buf_release(&b);
		tt_report_free(r);

		/* charts and reports: one analysis (with the band quantiles), then
		 * every chart as PNG, the HTML and the PDF report */
		r = analyze(path, 1, &an);
		best_an = fmin(best_an, an);
		if (tt_run_open(path, &run, &err) > TT_WARN)
			die("open", &err);
		png_bytes = 0;
		for (int k = 0; k < TT_CHART_KIND_COUNT_; k++) {
			struct tt_chart_opts o;
			tt_chart_opts_init(&o);
			o.kind = (enum tt_chart_kind)k;
			tt_buf_init(&b, 0);
			t0 = now();
			if (tt_chart_render(r, run, &o, &b, NULL, &err) != TT_OK)
				die(tt_chart_kind_name(o.kind), &err);
			best_chart[k] = fmin(best_chart[k], now() - t0);
			t_charts += now() - t0;
			png_bytes += b.len;
			tt_buf_release(&b);
		}
		tt_buf_init(&b, 0);
		t0 = now();
		if (tt_render_html(r, run, &b, &err) != TT_OK)
			die("html", &err);
		best_html = fmin(best_html, now() - t0);
		t_charts += now() - t0;
		html_bytes = b.len;
		tt_buf_release(&b);
		tt_buf_init(&b, 0);
		t0 = now();
		if (tt_render_pdf_buf(r, run, &b, &err) != TT_OK)
			die("pdf", &err);
		best_pdf = fmin(best_pdf, now() - t0);
		t_charts += now() - t0;
		pdf_bytes = b.len;
		tt_buf_release(&b);
		best_charts_an = fmin(best_charts_an, an + t_charts);
		/* everything at once, sharing the trace reads (tt_render_all) */
		for (int f = 0; f < 2; f++) {
			char out[128];
			enum tt_code arc;
			snprintf(out, sizeof out, "%s/all-%s", tmpdir(), f ? "png" : "svg");
			t0 = now();
			arc = tt_render_all(r, run, out, f ? TT_CHART_PNG : TT_CHART_SVG, &err);
			if (arc > TT_WARN)
				die("render all", &err);
			best_all[f] = fmin(best_all[f], an + (now() - t0));
		}
		tt_run_free(run);
		tt_report_free(r);
	}

	printf("run: %s, %.2f M output tokens in decode windows, %d rep(s), fastest shown,\n"
	       "CPU seconds\n",
	       path, (double)tokens / 1e6, reps);
	printf("table report (open + analyse + term table): %8.3f s  (render alone %.3f s)\n",
	       best_table, best_render);
	printf("analysis with band quantiles:                %8.3f s\n", best_an);
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		printf("  chart %-12s (PNG 960x600)          %8.3f s\n",
		       tt_chart_kind_name((enum tt_chart_kind)k), best_chart[k]);
	printf("  HTML report (%6.2f MB)                   %8.3f s\n", (double)html_bytes / 1e6,
	       best_html);
	printf("  PDF report  (%6.2f MB)                   %8.3f s\n", (double)pdf_bytes / 1e6,
	       best_pdf);
	printf("  (all PNGs: %.2f MB)\n", (double)png_bytes / 1e6);
	printf("each output on its own (9 PNG + HTML + PDF, one analysis):\n"
	       "                                              %7.3f s = %.2fx the table report\n",
	       best_charts_an, best_charts_an / best_table);
	for (int f = 0; f < 2; f++)
		printf("tt_render_all, %s charts + HTML + PDF, with the analysis:\n"
		       "                                              %7.3f s = %.2fx the table report "
		       "(target <= 3x: %s)\n",
		       f ? "PNG" : "SVG", best_all[f], best_all[f] / best_table,
		       best_all[f] / best_table <= 3 ? "met" : "NOT met");
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir());
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir());
	if (path == runpath) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	}
	return 0;
}
