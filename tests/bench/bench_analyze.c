/* Benchmark (run on demand, prints figures; never a timed test):
 *   bench_analyze RUN_DIR [REPS]
 * In one process, on the same trace files:
 *   1. decompress only: every zstd frame of every cell, nothing parsed;
 *   2. decode: frames parsed into records, visitor does nothing;
 *   3. analyse: tt_run_open + tt_analyze with every figure (tails, goodput
 *      under SLOs);
 *   4. analyse: tt_analyze as the default report does it (no SLOs);
 * then prints times, the ratios to (1), bytes per output token, and the
 * peak RSS (run 1x and 10x runs in separate processes to compare memory).
 * With REPS > 1 the four passes run REPS times in turn and each time is the
 * fastest of its REPS: on a shared machine the other processes only ever
 * make a pass slower, so the fastest is the one they disturbed least.  Wall
 * and CPU time are both printed; the CPU ratios are the steadier. */
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
 * the time other processes held the CPU. */
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

enum { P_DEC, P_PARSE, P_AN, P_AN0, P_COUNT };

struct bench {
	char **files;
	size_t nfiles, raw_total, comp_total;
	ZSTD_DCtx *dctx;
	void *scratch;
	struct tt_analysis_opts ao;
	const char *run_dir;
	struct tt_report *rep; /* of the first analysis with SLOs */
};

static void decompress_all(struct bench *b)
{
	b->raw_total = b->comp_total = 0;
	for (size_t i = 0; i < b->nfiles; i++) {
		size_t len, pos = 0;
		char *data = tu_read(b->files[i], &len);
		b->comp_total += len;
		while (pos < len) {
			size_t fs = ZSTD_findFrameCompressedSize(data + pos, len - pos);
			size_t got;
			if (ZSTD_isError(fs))
				break;
			got = ZSTD_decompressDCtx(b->dctx, b->scratch, 64 << 20, data + pos, fs);
			if (!ZSTD_isError(got))
				b->raw_total += got;
			pos += fs;
		}
		free(data);
	}
}

static void decode_all(struct bench *b)
{
	struct tt_error err;

	for (size_t i = 0; i < b->nfiles; i++) {
		size_t len;
		char *data = tu_read(b->files[i], &len);
		struct tt_trace_visitor v = {NULL, noop_req, NULL};
		tt_trace_decode(data, len, b->files[i], &v, &err);
		free(data);
	}
}

/* Open and analyse the run; 0 on success. */
static int analyse(struct bench *b, const struct tt_analysis_opts *o)
{
	struct tt_error err;
	struct tt_run *run;
	struct tt_report *rep;

	if (tt_run_open(b->run_dir, &run, &err) || tt_analyze(run, o, &rep, &err) > TT_WARN) {
		fprintf(stderr, "bench_analyze: %s\n", err.msg);
		return -1;
	}
	if (o && !b->rep)
		b->rep = rep;
	else
		tt_report_free(rep);
	tt_run_free(run);
	return 0;
}

int main(int argc, char **argv)
{
	char cells[4096];
	DIR *d;
	struct dirent *e;
	struct bench b;
	double wall[P_COUNT], cput[P_COUNT];
	struct tt_error err;
	struct rusage ru;
	long tokens = 0;
	int reps = 1;

	if (argc < 2 || argc > 3 || (argc == 3 && (reps = atoi(argv[2])) < 1)) {
		fprintf(stderr, "usage: bench_analyze RUN_DIR [REPS]\n");
		return 2;
	}
	memset(&b, 0, sizeof b);
	b.run_dir = argv[1];
	b.dctx = ZSTD_createDCtx();
	b.scratch = malloc(64 << 20);
	snprintf(cells, sizeof cells, "%s/cells", argv[1]);
	d = opendir(cells);
	if (!d) {
		fprintf(stderr, "bench_analyze: cannot open '%s'\n", cells);
		return 1;
	}
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, ".ttz"))
			continue;
		b.files = realloc(b.files, (b.nfiles + 1) * sizeof *b.files);
		b.files[b.nfiles] = malloc(strlen(cells) + strlen(e->d_name) + 2);
		sprintf(b.files[b.nfiles++], "%s/%s", cells, e->d_name);
	}
	closedir(d);
	/* every figure the report can compute: the tails and goodput under
	 * SLOs (each request judged, its p99 gap exact) too */
	tt_analysis_opts_init(&b.ao);
	b.ao.show_tails = 1;
	if (tt_slo_parse("ttft=500ms,tbt=50ms@p99,e2e=60s", &b.ao.slo, &err)) {
		fprintf(stderr, "bench_analyze: %s\n", err.msg);
		return 1;
	}

	/* Warm the page cache so all passes read from memory alike. */
	for (size_t i = 0; i < b.nfiles; i++) {
		size_t len;
		free(tu_read(b.files[i], &len));
	}
	for (int p = 0; p < P_COUNT; p++)
		wall[p] = cput[p] = 1e300;
	for (int rep = 0; rep < reps; rep++) {
		for (int p = 0; p < P_COUNT; p++) {
			double c0 = cpu(), t0 = now(), t, c;
			switch (p) {
			case P_DEC: /* reading the file is part of it, as for analysis */
				decompress_all(&b);
				break;
			case P_PARSE:
				decode_all(&b);
				break;
			case P_AN:
				if (analyse(&b, &b.ao))
					return 1;
				break;
			default: /* the default report: no SLOs */
				if (analyse(&b, NULL))
					return 1;
				break;
			}
			t = now() - t0;
			c = cpu() - c0;
			if (t < wall[p])
				wall[p] = t;
			if (c < cput[p])
				cput[p] = c;
		}
	}
	for (size_t i = 0; i < b.rep->n_cells; i++)
		if (b.rep->cells[i].output_tokens > 0)
			tokens += b.rep->cells[i].output_tokens;
	getrusage(RUSAGE_SELF, &ru);
	printf("run                 %s\n", argv[1]);
	printf("cells               %zu trace files\n", b.nfiles);
	printf("output tokens       %ld (in windows)\n", tokens);
	printf("on disk             %.1f MB compressed, %.1f MB raw records\n", b.comp_total / 1e6,
	       b.raw_total / 1e6);
	printf("bytes per token     %.3f on disk (target <= 2), %.3f raw\n",
	       (double)b.comp_total / (double)tokens, (double)b.raw_total / (double)tokens);
	if (reps > 1)
		printf("repeats             %d, each time the fastest of them\n", reps);
	printf("decompress only     %.3f s (%.0f MB/s raw)\n", wall[P_DEC],
	       b.raw_total / 1e6 / wall[P_DEC]);
	printf("decode records      %.3f s = %.2fx decompress\n", wall[P_PARSE],
	       wall[P_PARSE] / wall[P_DEC]);
	printf("analyse (report)    %.3f s = %.2fx decompress (target <= 3x; with --slo and "
	       "tails); %.1f ns/token\n",
	       wall[P_AN], wall[P_AN] / wall[P_DEC], wall[P_AN] * 1e9 / (double)tokens);
	printf("analyse (default)   %.3f s = %.2fx decompress (no --slo)\n", wall[P_AN0],
	       wall[P_AN0] / wall[P_DEC]);
	printf("cpu time            decompress %.3f s; decode %.2fx, analyse (report) %.2fx, "
	       "analyse (default) %.2fx decompress\n",
	       cput[P_DEC], cput[P_PARSE] / cput[P_DEC], cput[P_AN] / cput[P_DEC],
	       cput[P_AN0] / cput[P_DEC]);
	printf("peak RSS            %.1f MB\n", ru.ru_maxrss / 1024.0);
	tt_report_free(b.rep);
	ZSTD_freeDCtx(b.dctx);
	free(b.scratch);
	for (size_t i = 0; i < b.nfiles; i++)
		free(b.files[i]);
	free(b.files);
	return 0;
}
