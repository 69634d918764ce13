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

struct tchunk {
	uint32_t first, n;
	uint64_t emit_ns;
};

struct treq {
	char id[64];
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

static int rd(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f) == n ? 0 : -1;
}

static uint64_t le(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static int load_truth(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char hdr[16], b[64];
	int type;

	if (!f) {
		fprintf(stderr, "error: cannot open '%s'\n", path);
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	if (rd(f, hdr, 16) || memcmp(hdr, "TTSIMTR1", 8) != 0) {
		fprintf(stderr, "error: '%s' is not a simulator truth log\n", path);
		fclose(f);
		return -1;
	}
	while ((type = getc(f)) != EOF) {
		if (type == 1) {
			uint64_t id;
			unsigned n;
			struct treq *r;
			if (rd(f, b, 8 + 8 + 4 + 4 + 2))
				break;
			id = le(b, 8);
			n = (unsigned)le(b + 24, 2);
			r = calloc(1, sizeof *r);
			if (!r)
				break;
			if (n >= sizeof r->id) {
				fseek(f, n, SEEK_CUR);
				n = 0;
			} else if (n && rd(f, r->id, n)) {
				break;
			}
			r->id[n] = '\0';
			r->next = buckets[hash_str(r->id) % NBUCKET];
			buckets[hash_str(r->id) % NBUCKET] = r;
			if (id >= n_by_sim_id) {
				size_t nn = (id + 1) * 2;
				struct treq **nb = realloc(by_sim_id, nn * sizeof *nb);
				if (!nb)
					break;
				memset(nb + n_by_sim_id, 0, (nn - n_by_sim_id) * sizeof *nb);
				by_sim_id = nb;
				n_by_sim_id = nn;
			}
			by_sim_id[id] = r;
		} else if (type == 2) {
			uint64_t id;
			uint32_t k;
			struct treq *r;
			if (rd(f, b, 8 + 8 + 4 + 4))
				break;
			id = le(b, 8);
			k = (uint32_t)le(b + 20, 4);
			r = id < n_by_sim_id ? by_sim_id[id] : NULL;
			if (r) {
				if (r->n == r->cap) {
					size_t nc = r->cap ? r->cap * 2 : 64;
					struct tchunk *c = realloc(r->chunks, nc * sizeof *c);
					if (!c)
						break;
					r->chunks = c;
					r->cap = nc;
				}
				r->chunks[r->n].emit_ns = le(b + 8, 8);
				r->chunks[r->n].first = (uint32_t)le(b + 16, 4);
				r->chunks[r->n].n = k;
				r->n++;
			}
			fseek(f, (long)k * 8, SEEK_CUR);
		} else if (type == 3) {
			if (rd(f, b, 8 + 8 + 4 + 4 + 4 + 1 + 2))
				break;
		} else {
			fprintf(stderr, "warning: unknown truth record %d; stopping there\n", type);
			break;
		}
	}
	fclose(f);
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
	char id[64];
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
