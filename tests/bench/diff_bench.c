/* Diff benchmark (issue #10): a diff of two seed-scale runs with all its
 * charts, against reporting one of them; and the diff's peak memory as the
 * runs grow.
 *
 * usage: diff_bench [REPS]
 *
 * Writes synthetic runs of fixtures/profiles/seed-matrix.csv (about 7
 * million tokens each at scale 1; two seeds) and the same at scale 2 and 4
 * (twice and four times the tokens per cell) to a temporary directory.
 * Times: CPU seconds of this process, the fastest of REPS (default 5).
 * Memory: peak resident set (VmHWM) of a fresh process that does only the
 * diff (this program again, --measure-diff A B), at each scale.
 * Targets: a diff with all its charts <= 3x reporting one run; memory flat
 * as the runs grow.  "Reporting one run" is measured two ways: the table
 * report alone, and the report with all its charts (HTML + PDF).  The diff
 * analyses two runs, so twice the table report is its floor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/chart.h"
#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"
#include "tokentrace/profile.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const struct tt_error *err)
{
	fprintf(stderr, "diff_bench: %s: %s\n", what, err->msg);
	exit(1);
}

static void synth(const struct tt_profile *p, const char *dir, uint64_t seed, double scale)
{
	struct tt_synth_opts so;
	struct tt_error err;

	tt_synth_opts_init(&so);
	so.seed = seed;
	so.scale = scale;
	if (tt_synth_run(p, dir, &so, NULL, &err) != TT_OK)
		die("synth", &err);
}

/* The table report of one run: open, analyse, render the terminal table. */
static double report_one(const char *path, long *tokens)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_error err;
	struct tt_buf b;
	struct tt_render_opts ro;
	double t0 = now(), t;

	if (tt_run_open(path, &run, &err) > TT_WARN)
		die("open", &err);
	if (tt_analyze(run, NULL, &rep, &err) > TT_WARN)
		die("analyze", &err);
	tt_buf_init(&b, 0);
	memset(&ro, 0, sizeof ro);
	if (tt_render(rep, TT_FORMAT_TERM, &ro, &b, &err) != TT_OK)
		die("render", &err);
	t = now() - t0;
	*tokens = 0;
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_DECODE && rep->cells[i].output_tokens > 0)
			*tokens += rep->cells[i].output_tokens;
	tt_buf_release(&b);
	tt_report_free(rep);
	tt_run_free(run);
	return t;
}

/* The report of one run with everything: analysis with the charts'
 * quantiles, the HTML page and the PDF document (every chart in each). */
static double report_all(const char *path)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts ao;
	struct tt_error err;
	struct tt_buf b;
	double t0 = now(), t;

	if (tt_run_open(path, &run, &err) > TT_WARN)
		die("open", &err);
	tt_analysis_opts_init(&ao);
	tt_chart_analysis_opts(&ao);
	if (tt_analyze(run, &ao, &rep, &err) > TT_WARN)
		die("analyze", &err);
	tt_buf_init(&b, 0);
	if (tt_render_html(rep, run, &b, &err) != TT_OK)
		die("html", &err);
	if (tt_render_pdf_buf(rep, run, &b, &err) != TT_OK)
		die("pdf", &err);
	t = now() - t0;
	tt_buf_release(&b);
	tt_report_free(rep);
	tt_run_free(run);
	return t;
}

/* The diff with everything: both sides analysed and resampled, compared,
 * rendered as the term table, the HTML page (every chart, SVG) and the PDF
 * document (every chart).  Returns CPU seconds; *analysis the part spent
 * opening, analysing and resampling. */
static double diff_all(const char *a, const char *b, double *analysis, size_t *bytes)
{
	struct tt_diff_side *sa, *sb;
	struct tt_diff *d;
	struct tt_error err;
	struct tt_buf out;
	struct tt_render_opts ro;
	double t0 = now();
	const char *paths[2] = {a, b};
	struct tt_diff_side **sides[2] = {&sa, &sb};

	for (int i = 0; i < 2; i++) {
		struct tt_run *run;
		if (tt_diff_side_create(NULL, sides[i], &err) != TT_OK)
			die("side", &err);
		if (tt_run_open(paths[i], &run, &err) > TT_WARN)
			die("open", &err);
		if (tt_diff_side_add(*sides[i], run, NULL, &err) > TT_WARN)
			die("side add", &err);
		tt_run_free(run);
	}
	if (tt_diff_compare(sa, sb, &d, &err) != TT_OK)
		die("compare", &err);
	*analysis = now() - t0;
	tt_buf_init(&out, 0);
	memset(&ro, 0, sizeof ro);
	if (tt_diff_render(d, TT_FORMAT_TERM, &ro, NULL, &out, &err) != TT_OK)
		die("term", &err);
	if (tt_diff_render_html(d, NULL, NULL, &out, &err) != TT_OK)
		die("html", &err);
	if (tt_diff_render_pdf(d, NULL, NULL, &out, &err) != TT_OK)
		die("pdf", &err);
	*bytes = out.len;
	tt_buf_release(&out);
	tt_diff_free(d);
	tt_diff_side_free(sa);
	tt_diff_side_free(sb);
	return now() - t0;
}

static const char *self;

/* This process's peak resident set in KiB (VmHWM: of this program image
 * only, unlike getrusage's, which a forked child inherits). */
static long vm_hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* Peak resident set (MiB) of a fresh process (this program run again in
 * its measuring mode) that runs the diff of a and b, or the table report
 * of a when b is NULL. */
static double peak_mib(const char *a, const char *b)
{
	char cmd[512];
	FILE *p;
	long kib = -1;

	snprintf(cmd, sizeof cmd, "'%s' %s '%s' %s%s%s", self,
		 b ? "--measure-diff" : "--measure-report", a, b ? "'" : "", b ? b : "", b ? "'" : "");
	p = popen(cmd, "r");
	if (!p || fscanf(p, "%ld", &kib) != 1 || pclose(p) != 0 || kib < 0) {
		fprintf(stderr, "diff_bench: the measuring process failed: %s\n", cmd);
		exit(1);
	}
	return (double)kib / 1024.0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	char tmp[] = "/tmp/tt-diff-bench-XXXXXX", path[3][2][96], cmd[160];
	static const double scales[3] = {1, 2, 4};
	double best_report = INFINITY, best_diff = INFINITY, best_an = INFINITY;
	double best_report_all = INFINITY;
	size_t bytes = 0;
	long tokens[3] = {0, 0, 0};
	struct tt_profile *p = NULL;
	struct tt_error err;

	self = argv[0];
	if (argc == 4 && !strcmp(argv[1], "--measure-diff")) {
		double an;
		diff_all(argv[2], argv[3], &an, &bytes);
		printf("%ld\n", vm_hwm_kib());
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--measure-report")) {
		report_one(argv[2], &tokens[0]);
		printf("%ld\n", vm_hwm_kib());
		return 0;
	}
	if (reps < 1)
		reps = 1;
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	if (tt_profile_load(TT_FIXTURES "/profiles/seed-matrix.csv", &p, &err) != TT_OK)
		die("profile", &err);
	for (int s = 0; s < 3; s++)
		for (int k = 0; k < 2; k++) {
			snprintf(path[s][k], sizeof path[s][k], "%s/x%g-%c", tmp, scales[s], "ab"[k]);
			printf("writing %s (seed-matrix, scale %g, seed %d) ...\n", path[s][k], scales[s],
			       k + 1);
			fflush(stdout);
			synth(p, path[s][k], (uint64_t)k + 1, scales[s]);
		}
	tt_profile_free(p);

	for (int r = 0; r < reps; r++) {
		double an, t;
		best_report = fmin(best_report, report_one(path[0][0], &tokens[0]));
		best_report_all = fmin(best_report_all, report_all(path[0][0]));
		t = diff_all(path[0][0], path[0][1], &an, &bytes);
		if (t < best_diff) {
			best_diff = t;
			best_an = an;
		}
	}
	for (int s = 1; s < 3; s++)
		report_one(path[s][0], &tokens[s]);

	printf("\nseed scale: %.2f M output tokens per run in decode windows; %d rep(s), fastest, "
	       "CPU seconds\n",
	       (double)tokens[0] / 1e6, reps);
	printf("table report of one run (open + analyse + term):   %7.3f s\n", best_report);
	printf("diff of two runs, all charts (term + HTML + PDF):  %7.3f s = %.2fx the report "
	       "(target <= 3x: %s)\n",
	       best_diff, best_diff / best_report, best_diff / best_report <= 3 ? "met" : "NOT met");
	printf("  of which open + analyse + resample both runs:   %7.3f s\n", best_an);
	printf("report of one run with all charts (HTML + PDF):    %7.3f s; the diff is %.2fx it "
	       "(target <= 3x: %s)\n",
	       best_report_all, best_diff / best_report_all,
	       best_diff / best_report_all <= 3 ? "met" : "NOT met");
	printf("  output: %.2f MB\n", (double)bytes / 1e6);
	printf("peak memory (a fresh process doing only this, VmHWM):\n");
	printf("  table report, scale 1:                         %7.1f MiB\n",
	       peak_mib(path[0][0], NULL));
	for (int s = 0; s < 3; s++)
		printf("  diff with all charts, scale %g (%5.2f M tokens/run): %7.1f MiB\n", scales[s],
		       (double)tokens[s] / 1e6, peak_mib(path[s][0], path[s][1]));
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmp);
	return 0;
}
