/* Capture timing benchmark: how late does tokentrace-capture record a token?
 *
 * usage: capture_latency RUN TRUTH    (TRUTH "-": only the token rate)
 *
 * Matches every recorded chunk with the simulator's ground-truth emission
 * of the same tokens (formats/sim-truth-log.md; requests matched by the
 * X-Request-Id the capture sends, tokens by their index in the response)
 * and prints the distribution of (recorded arrival - emission time), plus
 * the recorded token rate.  Both clocks are this machine's CLOCK_MONOTONIC:
 * RUN/capture-info.json's origin_monotonic_ns maps trace times back onto
 * it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "sim_client.h" /* truth_read */

struct tchunk {
	uint32_t first, n;
	uint64_t emit_ns;
};

struct treq {
	char id[96]; /* as struct truth_req.client_id */
	struct tchunk *chunks;
	size_t n, cap;
	struct treq *next; /* hash chain */
};

#define NBUCKET 65536
static struct treq *buckets[NBUCKET];
static struct treq **by_sim_id; /* sim id -> request */
static size_t n_by_sim_id;

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct treq *find(const char *id)
{
	for (struct treq *r = buckets[hash_str(id) % NBUCKET]; r; r = r->next)
		if (strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

/* The truth log, read by the sim tests' reader (truth_read), indexed by
 * client id (the X-Request-Id the capture sent) and by simulator id. */
static int load_truth(const char *path)
{
	static struct truth tr;

	if (truth_read(path, &tr) != 0) {
		fprintf(stderr, "error: cannot read '%s' as a simulator truth log\n", path);
		return -1;
	}
	truth_sort_chunks(&tr); /* each request's chunks in token order */
	for (size_t i = 0; i < tr.nreqs; i++) {
		uint64_t id = tr.reqs[i].id;
		struct treq *r = calloc(1, sizeof *r);
		if (!r)
			return -1;
		snprintf(r->id, sizeof r->id, "%s", tr.reqs[i].client_id);
		r->next = buckets[hash_str(r->id) % NBUCKET];
		buckets[hash_str(r->id) % NBUCKET] = r;
		if (id >= n_by_sim_id) {
			size_t nn = (id + 1) * 2;
			struct treq **nb = realloc(by_sim_id, nn * sizeof *nb);
			if (!nb)
				return -1;
			memset(nb + n_by_sim_id, 0, (nn - n_by_sim_id) * sizeof *nb);
			by_sim_id = nb;
			n_by_sim_id = nn;
		}
		by_sim_id[id] = r;
	}
	for (size_t i = 0; i < tr.nchunks; i++) {
		const struct truth_chunk *tc = &tr.chunks[i];
		struct treq *r = tc->id < n_by_sim_id ? by_sim_id[tc->id] : NULL;
		if (!r)
			continue;
		if (r->n == r->cap) {
			size_t nc = r->cap ? r->cap * 2 : 64;
			struct tchunk *c = realloc(r->chunks, nc * sizeof *c);
			if (!c)
				return -1;
			r->chunks = c;
			r->cap = nc;
		}
		r->chunks[r->n].emit_ns = tc->emit_ns;
		r->chunks[r->n].first = tc->first;
		r->chunks[r->n].n = tc->count;
		r->n++;
	}
	truth_free(&tr);
	return 0;
}

struct acc {
	double *lat_us;
	size_t n, cap;
	long unmatched_req, unmatched_chunk;
	int64_t origin_mono;
	size_t cell;
	uint64_t tokens;
	int64_t t_min, t_max;
	int64_t win_start, win_end; /* window of the cell being read */
	uint64_t win_tokens;        /* measured tokens arriving in windows */
	double win_s;
	FILE *dump; /* CAPTURE_LATENCY_CSV: one line per matched chunk */
};

static int on_request(void *ctx, const struct tt_request *r)
{
	struct acc *a = ctx;
	char id[96]; /* as struct truth_req.client_id */
	struct treq *t;
	uint64_t tok = 0;
	size_t j = 0;

	snprintf(id, sizeof id, "tt-%zu-%u-%u-%d", a->cell, r->slot, r->seq, (int)r->role);
	t = find(id);
	for (size_t i = 0; i < r->n_chunks; i++) {
		const struct tt_chunk *c = &r->chunks[i];
		if (r->role == TT_ROLE_MEASURED) {
			a->tokens += c->tokens;
			if (a->win_end > a->win_start && c->t_ns >= a->win_start && c->t_ns < a->win_end)
				a->win_tokens += c->tokens;
			if (a->t_min < 0 || c->t_ns < a->t_min)
				a->t_min = c->t_ns;
			if (c->t_ns > a->t_max)
				a->t_max = c->t_ns;
		}
		if (!t) {
			tok += c->tokens;
			continue;
		}
		/* the truth chunk that emitted this chunk's last token */
		{
			uint64_t last = tok + c->tokens - 1;
			while (j < t->n && (uint64_t)t->chunks[j].first + t->chunks[j].n <= last)
				j++;
			if (j < t->n && t->chunks[j].first <= last) {
				double lat = ((double)(c->t_ns + a->origin_mono) -
					      (double)t->chunks[j].emit_ns) / 1000.0;
				if (a->n == a->cap) {
					size_t nc = a->cap ? a->cap * 2 : 4096;
					double *nl = realloc(a->lat_us, nc * sizeof *nl);
					if (!nl)
						return 1;
					a->lat_us = nl;
					a->cap = nc;
				}
				a->lat_us[a->n++] = lat;
				if (a->dump)
					fprintf(a->dump, "%s,%d,%" PRIu64 ",%u,%.1f,%lld\n", id, (int)r->role,
						last, c->tokens, lat, (long long)c->t_ns);
			} else {
				a->unmatched_chunk++;
			}
		}
		tok += c->tokens;
	}
	if (!t && r->n_chunks)
		a->unmatched_req++;
	return 0;
}

static const struct tt_manifest *manifest;

static void begin_cell(void *ctx, size_t cell)
{
	struct acc *a = ctx;
	const struct tt_cell_info *ci = &manifest->cells[cell];

	a->cell = cell;
	a->win_start = ci->window_start_ns;
	a->win_end = ci->window_end_ns;
	if (a->win_end > a->win_start)
		a->win_s += (double)(a->win_end - a->win_start) / 1e9;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	struct tt_run *run = NULL;
	struct tt_error err;
	struct acc a;
	struct tt_run_visitor v;
	const char *mono;

	if (argc != 3) {
		fprintf(stderr, "usage: capture_latency RUN TRUTH\n");
		return 2;
	}
	if (strcmp(argv[2], "-") != 0 && load_truth(argv[2]))
		return 1;
	if (tt_run_open(argv[1], &run, &err) != TT_OK) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	manifest = tt_run_manifest(run);
	{
		char path[4200];
		FILE *f;
		snprintf(path, sizeof path, "%s/capture-info.json", argv[1]);
		f = fopen(path, "r");
		mono = NULL;
		if (f) {
			static char buf[4096];
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			buf[n] = '\0';
			fclose(f);
			mono = strstr(buf, "\"origin_monotonic_ns\":");
			if (mono)
				mono += strlen("\"origin_monotonic_ns\":");
		}
	}
	if (!mono) {
		fprintf(stderr, "error: run '%s' has no capture-info.json with origin_monotonic_ns\n",
			argv[1]);
		return 1;
	}
	memset(&a, 0, sizeof a);
	a.origin_mono = strtoll(mono, NULL, 10);
	a.t_min = -1;
	if (getenv("CAPTURE_LATENCY_CSV"))
		a.dump = fopen(getenv("CAPTURE_LATENCY_CSV"), "w");
	memset(&v, 0, sizeof v);
	v.ctx = &a;
	v.trace.on_request = on_request;
	v.begin_cell = begin_cell;
	if (tt_run_read_all(run, &v, &err) > TT_WARN) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	if (!a.n && strcmp(argv[2], "-") != 0) {
		fprintf(stderr, "error: no chunk matched the truth log\n");
		return 1;
	}
	if (a.n) {
		qsort(a.lat_us, a.n, sizeof *a.lat_us, cmp_d);
		printf("chunks matched      %zu (unmatched: %ld requests, %ld chunks)\n", a.n,
		       a.unmatched_req, a.unmatched_chunk);
		printf("arrival - emission  min %.1f us  p50 %.1f us  p90 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us\n",
	       a.lat_us[0], tt_percentile_sorted(a.lat_us, a.n, 50),
	       tt_percentile_sorted(a.lat_us, a.n, 90), tt_percentile_sorted(a.lat_us, a.n, 99),
	       tt_percentile_sorted(a.lat_us, a.n, 99.9), a.lat_us[a.n - 1]);
	}
	if (a.win_s > 0)
		printf("in the window       %" PRIu64 " tokens in %.2f s: %.0f tok/s recorded\n",
		       a.win_tokens, a.win_s, (double)a.win_tokens / a.win_s);
	tt_run_free(run);
	return 0;
}
