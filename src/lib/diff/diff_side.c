/* One side of a diff: its runs, each analysed once with the report's figures
 * (analysis.h) while a sample hook collects what the bootstrap needs, cell
 * by cell, so memory stays flat however long the traces (docs/diff.md
 * "Method"). */
#include "diff/diff_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"


#define MIN_REQUESTS 10 /* fewer requests: no bootstrap of a request figure */
#define MIN_SLICES 4    /* fewer slices with tokens: none of a token figure */

void tt_diff_opts_init(struct tt_diff_opts *o)
{
	memset(o, 0, sizeof *o);
	o->alpha = 0.05;
	o->replicates = 200;
	o->slices = 20;
	o->seed = 1;
	o->tail = 90;
	o->min_change = 1;
	/* The run-to-run allowance per figure, %: measured on 40 pairs of
	 * independent captures of the simulator on the shared test machine
	 * (tests/bench/diff_aa.sh; docs/diff.md "One run per side"), the
	 * largest estimate over the cells rounded up to 0.5 % (5 % above 10 %),
	 * at least 0.5 %; prefill as TTFT p50, of which it is the inverse. */
	o->run_allowance[TT_DIFF_TOTAL] = 3.5;
	o->run_allowance[TT_DIFF_PER_REQUEST] = 0.5;
	o->run_allowance[TT_DIFF_TTFT_P50] = 35;
	o->run_allowance[TT_DIFF_TTFT_TAIL] = 125;
	o->run_allowance[TT_DIFF_TBT_P50] = 0.5;
	o->run_allowance[TT_DIFF_TBT_TAIL] = 10;
	o->run_allowance[TT_DIFF_PREFILL] = 35;
}

static void fix_opts(struct tt_diff_opts *o)
{
	struct tt_diff_opts d;

	tt_diff_opts_init(&d);
	if (!(o->alpha > 0 && o->alpha < 1))
		o->alpha = d.alpha;
	if (o->replicates < 50)
		o->replicates = o->replicates ? 50 : d.replicates;
	if (o->slices < MIN_SLICES)
		o->slices = o->slices ? MIN_SLICES : d.slices;
	if (o->slices > 200)
		o->slices = 200;
	if (!(o->tail > 50 && o->tail < 100))
		o->tail = d.tail;
	if (!(o->min_change >= 0))
		o->min_change = 1;
	if (!(o->tolerance >= 0) || !isfinite(o->tolerance))
		o->tolerance = 0;
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		if (!(o->run_allowance[f] >= 0 && o->run_allowance[f] <= 1000))
			o->run_allowance[f] = d.run_allowance[f];
}

/* ---- random numbers: splitmix64, seeded per run and cell --------------- */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static size_t rng_below(struct rng *r, size_t n)
{
	return (size_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* The cell's own stream: its bootstrap does not depend on which cells came
 * before it, so a cell gives the same interval in any matrix. */
static void rng_seed(struct rng *r, uint64_t seed, size_t run, const struct tt_cell_info *c)
{
	r->s = seed;
	r->s ^= rng_next(r) + (uint64_t)run * 0x100000001B3ULL;
	r->s ^= rng_next(r) + (uint64_t)c->phase;
	r->s ^= rng_next(r) + (uint64_t)c->context;
	r->s ^= rng_next(r) + (uint64_t)c->concurrency;
}

/* ---- samples of the current cell ---------------------------------------- */

/* A slice's histogram of per-token gaps (ns): log-linear like the
 * analysis' (analysis/hist.h) but 128 buckets per octave instead of 1024, so
 * the slices of a cell (20 x 29 KiB) stay in cache while every chunk of the
 * trace lands in one of them.  It serves the bootstrap's spread, the rank
 * interval and the drawn distribution, never a figure: each bucket is at
 * most 0.8 % of its value wide, and values inside a bucket are spread evenly
 * as in tt__hist_percentile. */
#define SH_SUB 128
#define SH_BUCKETS (2 * SH_SUB + 56 * SH_SUB)

struct shist {
	uint32_t count[SH_BUCKETS];
	uint64_t n;
	int64_t min, max;
	int first, last;        /* the outer non-empty buckets (sh_extremes); -1: none */
};

/* Empty h; as new (all) the first time, else only the buckets its last
 * sh_extremes found filled (all, when it did not run). */
static void sh_reset(struct shist *h, int as_new)
{
	if (as_new || h->first < 0)
		memset(h->count, 0, sizeof h->count);
	else
		memset(h->count + h->first, 0,
		       (size_t)(h->last - h->first + 1) * sizeof *h->count);
	h->n = 0;
	h->min = INT64_MAX;
	h->max = INT64_MIN;
	h->first = h->last = -1;
}

static int sh_index(int64_t v)
{
	int e;
	if (v < 2 * SH_SUB)
		return (int)v;
	e = 63 - __builtin_clzll((unsigned long long)v); /* >= 8 */
	return 2 * SH_SUB + (e - 8) * SH_SUB + (int)((v >> (e - 7)) - SH_SUB);
}

static void sh_range(int idx, double *lo, double *hi)
{
	int e, j;
	if (idx < 2 * SH_SUB) {
		*lo = idx;
		*hi = idx + 1;
		return;
	}
	e = (idx - 2 * SH_SUB) / SH_SUB + 8;
	j = (idx - 2 * SH_SUB) % SH_SUB;
	*lo = ldexp((double)(SH_SUB + j), e - 7);
	*hi = ldexp((double)(SH_SUB + j + 1), e - 7);
}

/* n, and min and max as the edges of the outer non-empty buckets.  The
 * gaps of a slice fill a few octaves of the 58: the scan stops at the
 * first and last non-empty bucket, and only what lies between is summed. */
static void sh_extremes(struct shist *h)
{
	double lo, hi;
	int first = 0, last = SH_BUCKETS - 1;

	h->n = 0;
	h->first = h->last = -1;
	while (first < SH_BUCKETS && !h->count[first])
		first++;
	if (first == SH_BUCKETS)
		return;
	while (!h->count[last])
		last--;
	for (int i = first; i <= last; i++)
		h->n += h->count[i];
	h->first = first;
	h->last = last;
	sh_range(first, &lo, &hi);
	h->min = (int64_t)lo;
	sh_range(last, &lo, &hi);
	h->max = (int64_t)hi;
}

/* A request's value and the time slice it belongs to. */
struct sample {
	double v;
	unsigned slice;
};

struct svec {
	struct sample *v;
	size_t n, cap;
};

static int svec_push(struct svec *d, double x, unsigned slice)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct sample *v = realloc(d->v, cap * sizeof *v);
		if (!v)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n].v = x;
	d->v[d->n++].slice = slice;
	return 0;
}

struct collect {
	const struct tt_diff_opts *o;
	const struct tt_manifest *m;
	struct tt__run_boot *rb;
	size_t run;
	int oom;
	/* the cell being read */
	long cell;              /* -1: none */
	int64_t ws, we;
	struct shist *slice;    /* o->slices histograms of per-token gaps, ns */
	double slice_per_ns;    /* slices per ns of the window */
	int *slice_used;
	uint64_t *slice_tokens;  /* tokens arriving in each slice */
	int64_t *bound;         /* o->slices + 1: slice k holds [bound[k], bound[k+1]) as
				   slice_of assigns times; the outer ones are open */
	struct svec ttft, rate, prefill;
	/* scratch of the bootstrap */
	size_t *mult;
	size_t mult_cap;
	unsigned char mark[SH_BUCKETS]; /* buckets non-empty in some slice */
	int *g_index;           /* union of the slices' non-empty buckets */
	uint64_t *cum;          /* buckets x slices: cumulative counts, cum[g * K + k] */
	unsigned *nz;           /* the slices with gaps drawn in this replicate */
	unsigned n_nz;
	size_t g_cap;
};

static unsigned slice_of(const struct collect *c, int64_t t);

/* The first time slice_of puts in slice k or later (k = 1 .. K-1), found
 * from slice_of itself, so that walking the bounds gives exactly its
 * slices. */
static void slice_bounds(struct collect *c)
{
	unsigned K = c->o->slices;

	c->bound[0] = INT64_MIN;
	c->bound[K] = INT64_MAX;
	for (unsigned k = 1; k < K; k++) {
		int64_t t;
		if (c->ws < 0 || c->we <= c->ws) {
			c->bound[k] = INT64_MAX;
			continue;
		}
		t = c->ws + (int64_t)(((double)k / K) * (double)(c->we - c->ws));
		while (t > c->ws && slice_of(c, t - 1) >= k)
			t--;
		while (slice_of(c, t) < k && t < c->we)
			t++;
		c->bound[k] = t < c->bound[k - 1] ? c->bound[k - 1] : t;
	}
}

/* What the bootstrap keeps per cell, made when the first cell with a trace
 * begins: a run of reported figures only (an import) never needs it. */
static int alloc_rows(struct collect *c)
{
	size_t n = c->m->n_cells ? c->m->n_cells : 1;
	struct tt__run_boot *rb = c->rb;

	rb->boot = calloc(n, sizeof *rb->boot);
	rb->tbt_cdf = malloc(n * sizeof *rb->tbt_cdf);
	if (!rb->boot || !rb->tbt_cdf) {
		free(rb->boot);
		free(rb->tbt_cdf);
		rb->boot = NULL;
		rb->tbt_cdf = NULL;
		return -1;
	}
	for (size_t i = 0; i < c->m->n_cells; i++) {
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
			rb->boot[i][f].se = NAN;
		for (int k = 0; k < TT__CDF_POINTS; k++)
			rb->tbt_cdf[i][k] = NAN;
	}
	return 0;
}

static void on_begin(void *ctx, size_t cell, int64_t ws, int64_t we)
{
	struct collect *c = ctx;
	/* A cell whose end was not seen left its slices unscanned: clear all. */
	int full = c->cell >= 0;

	if (cell < c->m->n_cells && !c->m->cells[cell].trace) {
		c->cell = -1; /* reported figures only: nothing to resample */
		return;
	}
	if (!c->rb->boot && (c->oom || alloc_rows(c))) {
		c->oom = 1;
		c->cell = -1; /* nothing is collected */
		return;
	}

	c->cell = (long)cell;
	c->ws = ws;
	c->we = we;
	c->slice_per_ns = we > ws ? c->o->slices / (double)(we - ws) : 0;
	slice_bounds(c);
	c->ttft.n = c->rate.n = c->prefill.n = 0;
	for (unsigned k = 0; k < c->o->slices; k++) {
		if (c->slice_used[k] || c->slice_tokens[k])
			sh_reset(&c->slice[k], full);
		c->slice_used[k] = 0;
		c->slice_tokens[k] = 0;
	}
}

/* The slice of the window holding time t; times outside go to the nearest. */
static unsigned slice_of(const struct collect *c, int64_t t)
{
	double x;

	if (c->ws < 0 || t <= c->ws)
		return 0;
	x = (double)(t - c->ws) * c->slice_per_ns;
	return x >= c->o->slices ? c->o->slices - 1 : (unsigned)x;
}

static void on_chunks(void *ctx, size_t cell, const struct tt_sample_chunk *ch, size_t n)
{
	struct collect *c = ctx;

	if ((long)cell != c->cell || c->ws < 0)
		return;
	/* Every chunk of the trace passes here: counts only, a gap in its
	 * bucket and the tokens of its slice (the extremes are read from the
	 * buckets when the cell ends, sh_extremes).  A batch is one request's chunks in time
	 * order: the slice is walked forward from the bounds, and found anew
	 * (slice_of) only when a time steps back. */
	{
		unsigned s = n ? slice_of(c, ch[0].t_ns) : 0;
		int64_t lo = c->bound[s], hi = c->bound[s + 1];
		uint32_t *count = c->slice[s].count;
		uint64_t tokens = 0; /* of slice s, stored when it changes */
		for (size_t i = 0; i < n; i++) {
			int64_t t = ch[i].t_ns, v = ch[i].gap_ns;
			if (t >= hi || t < lo) {
				c->slice_tokens[s] += tokens;
				tokens = 0;
				if (t < lo)
					s = slice_of(c, t);
				else
					while (t >= c->bound[s + 1])
						s++;
				lo = c->bound[s];
				hi = c->bound[s + 1];
				count = c->slice[s].count;
			}
			tokens += ch[i].k;
			if (v > 0)
				count[sh_index(v)] += ch[i].k;
		}
		c->slice_tokens[s] += tokens;
	}
}

static void on_ttft(void *ctx, size_t cell, int64_t t, double ms)
{
	struct collect *c = ctx;
	c->rb->have_samples = 1;
	/* The figure drops values <= 0 (analysis: dist_of): so does its bootstrap. */
	if ((long)cell == c->cell && ms > 0 && svec_push(&c->ttft, ms, slice_of(c, t)))
		c->oom = 1;
}

static void on_rate(void *ctx, size_t cell, int64_t t, double tok_s)
{
	struct collect *c = ctx;
	if ((long)cell == c->cell && tok_s > 0 && svec_push(&c->rate, tok_s, slice_of(c, t)))
		c->oom = 1;
}

static void on_prefill(void *ctx, size_t cell, double tok_s)
{
	struct collect *c = ctx;
	c->rb->have_samples = 1;
	/* Scouts are sequential and alone on the server: each is a unit. */
	if ((long)cell == c->cell && tok_s > 0 && svec_push(&c->prefill, tok_s, (unsigned)c->prefill.n))
		c->oom = 1;
}

/* ---- the bootstrap -------------------------------------------------------- */

/* Standard deviation of log(x) over the replicates that gave a value; NaN
 * when fewer than half did. */
struct sdacc {
	double sum, sum2;
	size_t n, tried;
};

static void sd_add(struct sdacc *a, double x)
{
	a->tried++;
	if (!(x > 0) || !isfinite(x))
		return;
	x = log(x);
	a->sum += x;
	a->sum2 += x * x;
	a->n++;
}

static double sd_of(const struct sdacc *a)
{
	double mean, var;

	if (a->n < 2 || a->n * 2 < a->tried)
		return NAN;
	mean = a->sum / (double)a->n;
	var = (a->sum2 - (double)a->n * mean * mean) / (double)(a->n - 1);
	return var > 0 ? sqrt(var) : 0;
}

static int cmp_sample(const void *x, const void *y)
{
	double a = ((const struct sample *)x)->v, b = ((const struct sample *)y)->v;
	return (a > b) - (a < b);
}

static int ensure_mult(struct collect *c, size_t n)
{
	if (n <= c->mult_cap)
		return 0;
	size_t *m = realloc(c->mult, n * sizeof *m);
	if (!m)
		return -1;
	c->mult = m;
	c->mult_cap = n;
	return 0;
}

/* Value at 0-based rank r of the sorted samples, sample i repeated
 * w[slice of i] times. */
static double rank_value(const struct sample *v, size_t n, const size_t *w, size_t r)
{
	size_t seen = 0;
	for (size_t i = 0; i < n; i++) {
		seen += w[v[i].slice];
		if (r < seen)
			return v[i].v;
	}
	return v[n - 1].v;
}

/* Percentile p of a resample, interpolated as tt_percentile_sorted (M-pct). */
static double resample_pct(const struct sample *v, size_t n, const size_t *w, size_t total,
			   double p)
{
	double rank = p / 100.0 * (double)(total - 1), frac;
	size_t lo = (size_t)rank;
	double a, b;

	frac = rank - (double)lo;
	a = rank_value(v, n, w, lo);
	if (frac == 0 || lo + 1 >= total)
		return a;
	b = rank_value(v, n, w, lo + 1);
	return a + (b - a) * frac;
}

/* The rank interval of a percentile, distribution-free: the values at
 * p -/+ k binomial standard deviations of its rank, sqrt(p (1 - p) / n).
 * Where the values have a gap near p (two clusters of token gaps, p at the
 * edge between them) a percentile jumps between the clusters from run to
 * run; a bootstrap, whose resamples keep each cluster's share, hardly sees
 * it, the rank interval does.  The comparison uses it as a second test
 * (docs/diff.md "Percentiles near a gap"). */
static void rank_table(double p, double n, double (*value)(const void *, double),
		       const void *ctx, struct tt__boot *b)
{
	double sd = 100 * sqrt(p / 100 * (1 - p / 100) / n);

	b->has_rank = 0;
	if (n < 2)
		return;
	for (int i = 0; i < TT__RANK_STEPS; i++) {
		double d = 0.5 * (i + 1) * sd;
		double lo = value(ctx, p - d < 0 ? 0 : p - d), hi = value(ctx, p + d > 100 ? 100 : p + d);
		if (!(lo > 0) || !(hi > 0))
			return;
		b->rank_lo[i] = log(lo);
		b->rank_hi[i] = log(hi);
	}
	b->has_rank = 1;
}

int tt__boot_rank_interval(const struct tt__boot *b, double k, double *lo, double *hi)
{
	double x;
	int i;

	if (!b || !b->has_rank)
		return 0;
	x = k / 0.5 - 1;
	if (x < 0)
		x = 0;
	if (x > TT__RANK_STEPS - 1)
		x = TT__RANK_STEPS - 1;
	i = (int)x;
	if (i >= TT__RANK_STEPS - 1) {
		*lo = b->rank_lo[TT__RANK_STEPS - 1];
		*hi = b->rank_hi[TT__RANK_STEPS - 1];
		return 1;
	}
	x -= i;
	*lo = b->rank_lo[i] + (b->rank_lo[i + 1] - b->rank_lo[i]) * x;
	*hi = b->rank_hi[i] + (b->rank_hi[i + 1] - b->rank_hi[i]) * x;
	return 1;
}

struct req_ctx {
	const struct sample *v;
	size_t n;
	const size_t *w;
};

static double req_value(const void *ctx, double p)
{
	const struct req_ctx *q = ctx;
	return resample_pct(q->v, q->n, q->w, q->n, p);
}

/* Bootstrap of the percentiles ps of request values, resampling the units
 * they belong to (n_units: time slices of the window, or each request for
 * prefill scouts), so requests sent together (the streams of a closed loop
 * fall into step) stay together.  out[i]->se: spread of log percentile i. */
static int boot_requests(struct collect *c, struct rng *r, struct svec *v, size_t n_units,
			 const double *ps, size_t np, struct tt__boot *out[])
{
	struct sdacc acc[2];
	size_t n = v->n, used = 0, *count;

	if (ensure_mult(c, 2 * n_units + 1))
		return -1;
	count = c->mult + n_units;
	memset(count, 0, n_units * sizeof *count);
	for (size_t i = 0; i < n; i++)
		if (count[v->v[i].slice]++ == 0)
			used++;
	for (size_t i = 0; i < np; i++) {
		out[i]->units = used;
		out[i]->per_slice = v != &c->prefill;
		out[i]->se = NAN;
	}
	if (n < MIN_REQUESTS || used < MIN_SLICES)
		return 0;
	qsort(v->v, n, sizeof *v->v, cmp_sample);
	memset(acc, 0, sizeof acc);
	for (unsigned b = 0; b < c->o->replicates; b++) {
		size_t total = 0;
		memset(c->mult, 0, n_units * sizeof *c->mult);
		for (size_t i = 0; i < n_units; i++)
			c->mult[rng_below(r, n_units)]++;
		for (size_t k = 0; k < n_units; k++)
			total += c->mult[k] * count[k];
		if (total < 2) {
			for (size_t i = 0; i < np; i++)
				acc[i].tried++;
			continue;
		}
		for (size_t i = 0; i < np; i++)
			sd_add(&acc[i], resample_pct(v->v, n, c->mult, total, ps[i]));
	}
	{
		/* every sample once: unit weights */
		struct req_ctx q = {v->v, n, c->mult};
		for (size_t k = 0; k < n_units; k++)
			c->mult[k] = 1;
		for (size_t i = 0; i < np; i++) {
			out[i]->se = sd_of(&acc[i]);
			rank_table(ps[i], (double)n, req_value, &q, out[i]);
		}
	}
	return 0;
}

/* The slices with gaps that the current weights (c->mult) draw. */
static void set_nz(struct collect *c)
{
	c->n_nz = 0;
	for (unsigned k = 0; k < c->o->slices; k++)
		if (c->mult[k] && c->slice_used[k])
			c->nz[c->n_nz++] = k;
}

/* Weighted cumulative count up to union bucket g (the slices of one bucket
 * are contiguous in c->cum). */
static uint64_t wcum(const struct collect *c, size_t g)
{
	const uint64_t *row = c->cum + g * c->o->slices;
	uint64_t s = 0;
	for (unsigned i = 0; i < c->n_nz; i++)
		s += c->mult[c->nz[i]] * row[c->nz[i]];
	return s;
}

/* The union bucket holding rank r of the weighted sum of the slice
 * histograms: *before ranks lie below it, *here in it. */
static size_t hist_find(const struct collect *c, size_t ng, uint64_t r, uint64_t *before,
			uint64_t *here)
{
	size_t lo = 0, hi = ng - 1;

	while (lo < hi) { /* first g with wcum(g) > r */
		size_t mid = lo + (hi - lo) / 2;
		if (wcum(c, mid) > r)
			hi = mid;
		else
			lo = mid + 1;
	}
	*before = lo ? wcum(c, lo - 1) : 0;
	*here = wcum(c, lo) - *before;
	return lo;
}

/* Value of rank r in bucket g (before ranks below it, here in it), as
 * tt__hist_percentile reads one (analysis/hist.c). */
static double hist_bucket_value(const struct collect *c, size_t g, uint64_t before,
				uint64_t here, uint64_t r, double vmin, double vmax)
{
	double blo, bhi, v;

	sh_range(c->g_index[g], &blo, &bhi);
	if (c->g_index[g] < 2 * SH_SUB)
		return blo;
	v = blo + ((double)(r - before) + 0.5) * (bhi - blo) / (double)here;
	return v < vmin ? vmin : v > vmax ? vmax : v;
}

static double hist_resample_pct(const struct collect *c, size_t ng, uint64_t total, double p,
				double vmin, double vmax)
{
	double rank = p / 100.0 * (double)(total - 1), frac;
	uint64_t lo = (uint64_t)rank, before, here;
	size_t g;
	double a, b;

	frac = rank - (double)lo;
	g = hist_find(c, ng, lo, &before, &here);
	a = hist_bucket_value(c, g, before, here, lo, vmin, vmax);
	if (frac == 0 || lo + 1 >= total)
		return a;
	/* The next rank is most often in the same bucket. */
	if (lo + 1 >= before + here)
		g = hist_find(c, ng, lo + 1, &before, &here);
	b = hist_bucket_value(c, g, before, here, lo + 1, vmin, vmax);
	return a + (b - a) * frac;
}

struct hist_ctx {
	const struct collect *c;
	size_t ng;
	uint64_t n;
	double vmin, vmax;
};

static double hist_value(const void *ctx, double p)
{
	const struct hist_ctx *h = ctx;
	return hist_resample_pct(h->c, h->ng, h->n, p, h->vmin, h->vmax);
}

/* Block bootstrap over the window's time slices: total tok/s from the
 * tokens of each slice, time between tokens from each slice's gaps.  Tokens
 * of concurrent streams share batch steps; a slice keeps them together. */
static int boot_slices(struct collect *c, struct rng *r, struct tt__boot *total,
		       struct tt__boot *tbt50, struct tt__boot *tbtq)
{
	unsigned K = c->o->slices, with_tokens = 0, with_gaps = 0;
	size_t ng = 0;
	struct sdacc at, a50, aq;

	for (unsigned k = 0; k < K; k++) {
		if (c->slice_tokens[k]) {
			sh_extremes(&c->slice[k]);
			c->slice_used[k] = c->slice[k].n > 0;
			c->rb->have_samples = 1;
		}
		with_tokens += c->slice_tokens[k] > 0;
		with_gaps += c->slice_used[k];
	}
	total->units = tbt50->units = tbtq->units = K;
	total->per_slice = tbt50->per_slice = tbtq->per_slice = 1;
	total->se = tbt50->se = tbtq->se = NAN;
	if (c->ws < 0 || with_tokens < MIN_SLICES)
		return 0;
	if (ensure_mult(c, K))
		return -1;
	/* The union of non-empty buckets, with each slice's cumulative counts. */
	if (with_gaps >= MIN_SLICES) {
		/* Slice by slice (each a contiguous array), then the union. */
		int from = SH_BUCKETS, to = -1;
		memset(c->mark, 0, SH_BUCKETS);
		for (unsigned k = 0; k < K; k++)
			if (c->slice_used[k]) {
				const struct shist *h = &c->slice[k];
				for (int i = h->first; i <= h->last; i++)
					c->mark[i] |= h->count[i] != 0;
				from = h->first < from ? h->first : from;
				to = h->last > to ? h->last : to;
			}
		for (int i = from; i <= to; i++) {
			if (!c->mark[i])
				continue;
			if (ng == c->g_cap) {
				size_t cap = c->g_cap ? c->g_cap * 2 : 1024;
				int *gi = realloc(c->g_index, cap * sizeof *gi);
				if (!gi)
					return -1;
				c->g_index = gi;
				c->g_cap = cap;
			}
			c->g_index[ng++] = i;
		}
		free(c->cum);
		c->cum = malloc((size_t)K * (ng ? ng : 1) * sizeof *c->cum);
		if (!c->nz)
			c->nz = malloc(K * sizeof *c->nz);
		if (!c->cum || !c->nz)
			return -1;
		for (unsigned k = 0; k < K; k++) {
			uint64_t s = 0;
			for (size_t g = 0; g < ng; g++) {
				if (c->slice_used[k])
					s += c->slice[k].count[c->g_index[g]];
				c->cum[g * K + k] = s;
			}
		}
	}
	memset(&at, 0, sizeof at);
	memset(&a50, 0, sizeof a50);
	memset(&aq, 0, sizeof aq);
	for (unsigned b = 0; b < c->o->replicates; b++) {
		double tokens = 0, vmin = INFINITY, vmax = -INFINITY;
		uint64_t n = 0;
		memset(c->mult, 0, K * sizeof *c->mult);
		for (unsigned k = 0; k < K; k++)
			c->mult[rng_below(r, K)]++;
		for (unsigned k = 0; k < K; k++) {
			if (!c->mult[k])
				continue;
			tokens += (double)c->mult[k] * (double)c->slice_tokens[k];
			if (c->slice_used[k]) {
				n += c->mult[k] * c->slice[k].n;
				if ((double)c->slice[k].min < vmin)
					vmin = (double)c->slice[k].min;
				if ((double)c->slice[k].max > vmax)
					vmax = (double)c->slice[k].max;
			}
		}
		sd_add(&at, tokens); /* the window's length cancels in log */
		if (ng && n >= 2) {
			set_nz(c);
			sd_add(&a50, hist_resample_pct(c, ng, n, 50, vmin, vmax));
			sd_add(&aq, hist_resample_pct(c, ng, n, c->o->tail, vmin, vmax));
		} else if (ng) {
			a50.tried++;
			aq.tried++;
		}
	}
	total->se = sd_of(&at);
	if (ng) {
		struct hist_ctx h = {c, ng, 0, INFINITY, -INFINITY};
		for (unsigned k = 0; k < K; k++) { /* every slice once */
			c->mult[k] = 1;
			if (!c->slice_used[k])
				continue;
			h.n += c->slice[k].n;
			if ((double)c->slice[k].min < h.vmin)
				h.vmin = (double)c->slice[k].min;
			if ((double)c->slice[k].max > h.vmax)
				h.vmax = (double)c->slice[k].max;
		}
		tbt50->se = sd_of(&a50);
		tbtq->se = sd_of(&aq);
		set_nz(c);
		if (h.n >= 2) {
			rank_table(50, (double)h.n, hist_value, &h, tbt50);
			rank_table(c->o->tail, (double)h.n, hist_value, &h, tbtq);
			for (int i = 0; i < TT__CDF_POINTS; i++) {
				double p = 100.0 * i / (TT__CDF_POINTS - 1);
				c->rb->tbt_cdf[c->cell][i] = hist_value(&h, p) * 1e-6;
			}
		}
	}
	return 0;
}

static void on_end(void *ctx, size_t cell)
{
	struct collect *c = ctx;
	struct tt__boot *row;
	const struct tt_cell_info *ci;
	struct rng r;

	if ((long)cell != c->cell || cell >= c->m->n_cells || !c->rb->boot)
		return;
	ci = &c->m->cells[cell];
	row = c->rb->boot[cell];
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		row[f].se = NAN;
		row[f].units = 0;
		row[f].per_slice = 0;
		row[f].has_rank = 0;
	}
	rng_seed(&r, c->o->seed, c->run, ci);
	if (ci->phase == TT_PHASE_PREFILL) {
		const double p50[] = {50};
		struct tt__boot *o1[] = {&row[TT_DIFF_PREFILL]};
		if (boot_requests(c, &r, &c->prefill, c->prefill.n, p50, 1, o1))
			c->oom = 1;
	} else {
		const double pt[] = {50, c->o->tail};
		struct tt__boot *ot[] = {&row[TT_DIFF_TTFT_P50], &row[TT_DIFF_TTFT_TAIL]};
		struct tt__boot *orate[] = {&row[TT_DIFF_PER_REQUEST]};
		if (boot_requests(c, &r, &c->ttft, c->o->slices, pt, 2, ot) ||
		    boot_requests(c, &r, &c->rate, c->o->slices, pt, 1, orate) ||
		    boot_slices(c, &r, &row[TT_DIFF_TOTAL], &row[TT_DIFF_TBT_P50],
				&row[TT_DIFF_TBT_TAIL]))
			c->oom = 1;
	}
	c->cell = -1;
}

/* ---- the side ------------------------------------------------------------ */

enum tt_code tt_diff_side_create(const struct tt_diff_opts *opts, struct tt_diff_side **out,
				 struct tt_error *err)
{
	struct tt_diff_side *s = calloc(1, sizeof *s);

	if (!s)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	if (opts)
		s->o = *opts;
	else
		tt_diff_opts_init(&s->o);
	fix_opts(&s->o);
	*out = s;
	return TT_OK;
}

size_t tt_diff_side_runs(const struct tt_diff_side *s)
{
	return s ? s->n_runs : 0;
}

const struct tt_report *tt_diff_side_report(const struct tt_diff_side *s, size_t i)
{
	return s && i < s->n_runs ? s->runs[i].rep : NULL;
}

/* The analysis options with the tail among the quantiles; its index. */
static size_t with_tail(struct tt_analysis_opts *ao, double tail)
{
	if (ao->n_quantiles == 0) {
		ao->n_quantiles = 2;
		ao->quantiles[0] = 90;
		ao->quantiles[1] = 99;
	}
	if (ao->n_quantiles > TT_MAX_QUANTILES)
		ao->n_quantiles = TT_MAX_QUANTILES;
	for (size_t i = 0; i < ao->n_quantiles; i++)
		if (ao->quantiles[i] == tail)
			return i;
	if (ao->n_quantiles == TT_MAX_QUANTILES)
		ao->n_quantiles--;
	ao->quantiles[ao->n_quantiles] = tail;
	return ao->n_quantiles++;
}

static void collect_release(struct collect *c)
{
	free(c->slice);
	free(c->slice_used);
	free(c->slice_tokens);
	free(c->bound);
	free(c->ttft.v);
	free(c->rate.v);
	free(c->prefill.v);
	free(c->mult);
	free(c->g_index);
	free(c->cum);
	free(c->nz);
}

/* The printed precision of a cell's reported figures (KEY_res, formats/
 * run-v1.md 2.3): a figure without one is taken as exact. */
static void point_figures(const struct tt_manifest *m, const struct tt_analysis_opts *o,
			  struct tt__run_boot *rb)
{
	static const char *const keys[TT_DIFF_FIGURE_COUNT_] = {
		"total_tok_s", "per_request_tok_s_p50", "ttft_ms_p50", "ttft_ms",
		"tbt_ms_p50", "tbt_ms", "total_tok_s"};
	double tail = rb->tail_q < o->n_quantiles ? o->quantiles[rb->tail_q] : NAN;

	for (size_t i = 0; i < m->n_cells; i++) {
		const struct tt_cell_info *c = &m->cells[i];
		rb->point[i] = !c->trace && c->n_reported > 0;
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			char key[64], rkey[72];
			double v;
			rb->res[i][f] = 0;
			if (!rb->point[i])
				continue;
			if (f == TT_DIFF_TTFT_TAIL || f == TT_DIFF_TBT_TAIL)
				tt__snprintf_c(key, sizeof key, "%s_p%g", keys[f], tail);
			else
				snprintf(key, sizeof key, "%s", keys[f]);
			snprintf(rkey, sizeof rkey, "%s_res", key);
			if (tt_cell_reported(c, rkey, &v) && v > 0 && isfinite(v))
				rb->res[i][f] = v;
		}
	}
}

enum tt_code tt_diff_side_add(struct tt_diff_side *s, struct tt_run *run,
			      const struct tt_analysis_opts *ao, struct tt_error *err)
{
	struct tt_analysis_opts opts;
	struct tt_sample_hook hook;
	struct collect c;
	struct tt__run_boot rb, *grown;
	const struct tt_manifest *m = tt_run_manifest(run);
	enum tt_code rc;

	memset(&rb, 0, sizeof rb);
	memset(&c, 0, sizeof c);
	if (s->n_runs >= TT_DIFF_MAX_RUNS)
		return tt_error_set(err, TT_EARG, "at most %d runs on a side", TT_DIFF_MAX_RUNS);
	if (ao)
		opts = *ao;
	else
		tt_analysis_opts_init(&opts);
	rb.tail_q = with_tail(&opts, s->o.tail);
	rb.point = calloc(m->n_cells ? m->n_cells : 1, sizeof *rb.point);
	rb.res = calloc(m->n_cells ? m->n_cells : 1, sizeof *rb.res);
	c.slice = malloc(s->o.slices * sizeof *c.slice);
	c.slice_used = calloc(s->o.slices, sizeof *c.slice_used);
	c.slice_tokens = calloc(s->o.slices, sizeof *c.slice_tokens);
	c.bound = calloc(s->o.slices + 1, sizeof *c.bound);
	grown = realloc(s->runs, (s->n_runs + 1) * sizeof *s->runs);
	if (grown)
		s->runs = grown;
	if (!rb.point || !rb.res || !c.slice || !c.slice_used ||
	    !c.slice_tokens || !c.bound || !grown) {
		free(rb.boot);
		free(rb.tbt_cdf);
		free(rb.point);
		free(rb.res);
		collect_release(&c);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	for (unsigned k = 0; k < s->o.slices; k++)
		sh_reset(&c.slice[k], 1);
	c.o = &s->o;
	c.m = m;
	c.rb = &rb;
	c.run = s->n_runs;
	c.cell = -1;
	memset(&hook, 0, sizeof hook);
	hook.ctx = &c;
	hook.begin = on_begin;
	hook.end = on_end;
	hook.chunks = on_chunks;
	hook.ttft = on_ttft;
	hook.rate = on_rate;
	hook.prefill = on_prefill;
	opts.hook = &hook;
	rc = tt_analyze(run, &opts, &rb.rep, err);
	collect_release(&c);
	if (rc > TT_WARN) {
		free(rb.boot);
		free(rb.tbt_cdf);
		free(rb.point);
		free(rb.res);
		return rc;
	}
	rb.rep->opts.hook = NULL; /* it pointed into this frame */
	if (c.oom) {
		tt_report_free(rb.rep);
		free(rb.boot);
		free(rb.tbt_cdf);
		free(rb.point);
		free(rb.res);
		return tt_error_set(err, TT_ENOMEM, "out of memory while resampling '%s'",
				    tt_run_path(run));
	}
	point_figures(m, &opts, &rb);
	s->runs[s->n_runs++] = rb;
	return rc;
}

void tt_diff_side_free(struct tt_diff_side *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_runs; i++) {
		tt_report_free(s->runs[i].rep);
		free(s->runs[i].boot);
		free(s->runs[i].tbt_cdf);
		free(s->runs[i].point);
		free(s->runs[i].res);
	}
	free(s->runs);
	free(s);
}
