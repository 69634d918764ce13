/* Benchmark (run on demand, prints figures; never a timed test):
 *   bench_analyze RUN_DIR
 * In one process, on the same trace files:
 *   1. decompress only: every zstd frame of every cell, nothing parsed;
 *   2. decode: frames parsed into records, visitor does nothing;
 *   3. analyse: tt_run_open + tt_analyze (every figure of every cell);
 * then prints times, the ratios to (1), bytes per output token, and the
 * peak RSS (run 1x and 10x runs in separate processes to compare memory). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <zstd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "testutil.h" /* tu_read */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the process: on a shared machine, wall time also counts
 * the time other processes held the CPU; the CPU ratios are steadier. */
static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int noop_req(void *ctx, const struct tt_request *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

int main(int argc, char **argv)
{
	char cells[4096];
	DIR *d;
	struct dirent *e;
	char **files = NULL;
	size_t nfiles = 0, raw_total = 0, comp_total = 0;
	double t0, t_dec, t_parse, t_an;
	struct tt_run *run;
	struct tt_report *rep;
	struct tt_analysis_opts ao;
	double t_an0;
	double c0, c_dec, c_parse, c_an, c_an0;
	struct tt_error err;
	struct rusage ru;
	long tokens = 0;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	void *scratch = malloc(64 << 20);

	if (argc != 2) {
		fprintf(stderr, "usage: bench_analyze RUN_DIR\n");
		return 2;
	}
	snprintf(cells, sizeof cells, "%s/cells", argv[1]);
	d = opendir(cells);
	if (!d) {
		fprintf(stderr, "bench_analyze: cannot open '%s'\n", cells);
		return 1;
	}
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".ttz"))
			continue;
		files = realloc(files, (nfiles + 1) * sizeof *files);
		files[nfiles] = malloc(strlen(cells) + strlen(e->d_name) + 2);
		sprintf(files[nfiles++], "%s/%s", cells, e->d_name);
	}
	closedir(d);

	/* Warm the page cache so all three passes read from memory alike. */
	for (size_t i = 0; i < nfiles; i++) {
		size_t len;
		free(tu_read(files[i], &len));
	}
	/* 1. decompress only (reading the file is part of it, as for analysis) */
	c0 = cpu();
	t0 = now();
	for (size_t i = 0; i < nfiles; i++) {
		size_t len, pos = 0;
		char *data = tu_read(files[i], &len);
		comp_total += len;
		while (pos < len) {
			size_t fs = ZSTD_findFrameCompressedSize(data + pos, len - pos);
			size_t got;
			if (ZSTD_isError(fs))
				break;
			got = ZSTD_decompressDCtx(dctx, scratch, 64 << 20, data + pos, fs);
			if (!ZSTD_isError(got))
				raw_total += got;
			pos += fs;
		}
		free(data);
	}
	t_dec = now() - t0;
	c_dec = cpu() - c0;
	/* 2. decode records */
	c0 = cpu();
	t0 = now();
	for (size_t i = 0; i < nfiles; i++) {
		size_t len;
		char *data = tu_read(files[i], &len);
		struct tt_trace_visitor v = {NULL, noop_req, NULL};
		tt_trace_decode(data, len, files[i], &v, &err);
		free(data);
	}
	t_parse = now() - t0;
	c_parse = cpu() - c0;
	/* 3. analyse, with every figure the report can compute: the tails and
	 * goodput under SLOs (each request judged, its p99 gap exact) too */
	tt_analysis_opts_init(&ao);
	ao.show_tails = 1;
	if (tt_slo_parse("ttft=500ms,tbt=50ms@p99,e2e=60s", &ao.slo, &err)) {
		fprintf(stderr, "bench_analyze: %s\n", err.msg);
		return 1;
	}
	c0 = cpu();
	t0 = now();
	if (tt_run_open(argv[1], &run, &err) || tt_analyze(run, &ao, &rep, &err) > TT_WARN) {
		fprintf(stderr, "bench_analyze: %s\n", err.msg);
		return 1;
	}
	t_an = now() - t0;
	c_an = cpu() - c0;
	/* 4. the same without SLOs (the default report) */
	{
		struct tt_report *r0 = NULL;
		double c1 = cpu(), t1 = now();
		if (tt_analyze(run, NULL, &r0, &err) > TT_WARN) {
			fprintf(stderr, "bench_analyze: %s\n", err.msg);
			return 1;
		}
		t_an0 = now() - t1;
		c_an0 = cpu() - c1;
		tt_report_free(r0);
	}
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].output_tokens > 0)
			tokens += rep->cells[i].output_tokens;
	getrusage(RUSAGE_SELF, &ru);
	printf("run                 %s\n", argv[1]);
	printf("cells               %zu trace files\n", nfiles);
	printf("output tokens       %ld (in windows)\n", tokens);
	printf("on disk             %.1f MB compressed, %.1f MB raw records\n", comp_total / 1e6,
	       raw_total / 1e6);
	printf("bytes per token     %.3f on disk (target <= 2), %.3f raw\n",
	       (double)comp_total / (double)tokens, (double)raw_total / (double)tokens);
	printf("decompress only     %.3f s (%.0f MB/s raw)\n", t_dec, raw_total / 1e6 / t_dec);
	printf("decode records      %.3f s = %.2fx decompress\n", t_parse, t_parse / t_dec);
	printf("analyse (report)    %.3f s = %.2fx decompress (target <= 3x; with --slo and "
	       "tails); %.1f ns/token\n", t_an,
	       t_an / t_dec, t_an * 1e9 / (double)tokens);
	printf("analyse (default)   %.3f s = %.2fx decompress (no --slo)\n", t_an0, t_an0 / t_dec);
	printf("cpu time            decompress %.3f s; decode %.2fx, analyse (report) %.2fx, "
	       "analyse (default) %.2fx decompress\n",
	       c_dec, c_parse / c_dec, c_an / c_dec, c_an0 / c_dec);
	printf("peak RSS            %.1f MB\n", ru.ru_maxrss / 1024.0);
	tt_report_free(rep);
	tt_run_free(run);
	ZSTD_freeDCtx(dctx);
	free(scratch);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	return 0;
}
