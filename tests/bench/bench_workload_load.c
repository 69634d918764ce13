/* Reading a request trace (formats/workload-trace-v1.md) of N requests
 * (default 100,000): writes a Mooncake file and an Azure file of N
 * requests (prompts of 200 to 8,000 tokens, a shared prefix group on most,
 * bursts), loads each with tt_workload_load, and prints the time to load,
 * the table's bytes per request and the process's peak memory growth
 * (docs/workloads.md "Scale").
 * usage: bench_workload_load [N] [DIR] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tokentrace/workload.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void write_files(const char *jl, const char *csv, long n)
{
	FILE *a = fopen(jl, "w"), *b = fopen(csv, "w");
	unsigned long x = 88172645463325252ul;
	double t = 0;
	unsigned next = 100000;

	if (!a || !b) {
		perror("bench_workload_load: cannot write the traces");
		exit(1);
	}
	fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", b);
	for (long i = 0; i < n; i++) {
		unsigned in, out, nb, shared;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		in = 200 + (unsigned)(x % 7800);
		out = 1 + (unsigned)((x >> 20) % 1000);
		nb = (in + 511) / 512;
		shared = (x >> 40) % 4 ? 1 + (unsigned)((x >> 44) % nb) : 0;
		if ((x >> 50) % 3 == 0)
			t += (double)((x >> 30) % 100); /* bursts: a third advance the clock */
		fprintf(a, "{\"timestamp\": %.0f, \"input_length\": %u, \"output_length\": %u, "
			   "\"hash_ids\": [", t, in, out);
		for (unsigned k = 0; k < nb; k++)
			fprintf(a, "%s%u", k ? ", " : "", k < shared ? (unsigned)((x >> 56) % 16) * 64 + k
								     : next++);
		fputs("]}\n", a);
		{
			long ms = (long)t;
			fprintf(b, "2024-05-10 %02ld:%02ld:%02ld.%03ld0000,%u,%u\n", (ms / 3600000) % 24,
				(ms / 60000) % 60, (ms / 1000) % 60, ms % 1000, in, out);
		}
	}
	fclose(a);
	fclose(b);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	char jl[4096], csv[4096];
	const char *paths[2] = {jl, csv};

	snprintf(jl, sizeof jl, "%s/bench_trace.jsonl", dir);
	snprintf(csv, sizeof csv, "%s/bench_trace.csv", dir);
	write_files(jl, csv, n);
	for (int f = 0; f < 2; f++) {
		struct tt_workload *w = NULL;
		struct tt_error err;
		long kb0 = peak_kb();
		double t0 = now_s(), t1;
		if (tt_failed(tt_workload_load(paths[f], TT_WORKLOAD_AUTO, NULL, &w, &err))) {
			fprintf(stderr, "bench_workload_load: %s\n", err.msg);
			return 1;
		}
		t1 = now_s();
		printf("%s: %zu requests, %zu block ids, %llu bytes of file; loaded in %.3f s "
		       "(%.2f us a request); table %.1f bytes a request (%zu a request + 4 a "
		       "block id); peak memory grew %.1f MB\n",
		       tt_workload_format_name(w->format), w->n, w->n_blocks,
		       (unsigned long long)w->bytes, t1 - t0, (t1 - t0) / (double)w->n * 1e6,
		       (double)(w->n * sizeof *w->reqs + w->n_blocks * 4) / (double)w->n,
		       sizeof *w->reqs, (double)(peak_kb() - kb0) / 1024);
		tt_workload_free(w);
	}
	remove(jl);
	remove(csv);
	return 0;
}
