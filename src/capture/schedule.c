/* Open-loop arrival schedules: xoshiro256** seeded through SplitMix64 from
 * the run's seed XOR the FNV-1a hash of the cell id (formats/run-v1.md
 * 2.4).  Gaps: constant 1/rate; Poisson: -ln(1 - U) / rate; gamma of shape
 * k and mean 1/rate: Marsaglia and Tsang's method (k < 1 through
 * G(k) = G(k + 1) * U^(1/k)), normals by Box-Muller.  U = (x >> 11) * 2^-53
 * of the next 64-bit draw.  Output lengths come from a second generator
 * (seeded with the first's seed XOR 0x6f7574707574 "output"), so drawing
 * them never moves the schedule.  From a length histogram, a draw takes
 * U for the bin (the first whose cumulative weight exceeds U x total),
 * then the next 64-bit number modulo the bin's width
 * (formats/length-hist-v1.md). */
#include "schedule.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t next(uint64_t *s)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static double uniform(uint64_t *s)
{
	return (double)(next(s) >> 11) * 0x1.0p-53;
}

static void seed4(uint64_t *s, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		s[i] = splitmix(&seed);
}

int arrivals_parse(const char *s)
{
	if (!s || !strcmp(s, "constant"))
		return ARR_CONSTANT;
	if (!strcmp(s, "poisson"))
		return ARR_POISSON;
	if (!strcmp(s, "gamma"))
		return ARR_GAMMA;
	return -1;
}

void schedule_init(struct schedule *s, uint64_t seed, const char *cell_id, double rate,
		   enum arrivals kind, double burstiness, int64_t out_min, int64_t out_max)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *p = (const unsigned char *)cell_id; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	memset(s, 0, sizeof *s);
	seed4(s->gap_s, seed ^ h);
	seed4(s->out_s, seed ^ h ^ 0x6f7574707574ULL);
	s->kind = kind;
	s->rate = rate;
	s->shape = burstiness > 0 ? burstiness : 1;
	s->out_min = out_min;
	s->out_max = out_max;
}

static double normal(uint64_t *s)
{
	double u1 = uniform(s), u2 = uniform(s);
	return sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
}

/* Gamma(k, 1) (Marsaglia and Tsang 2000). */
static double gamma1(uint64_t *s, double k)
{
	double boost = 1, d, c;

	if (k < 1) {
		boost = pow(1 - uniform(s), 1 / k);
		k += 1;
	}
	d = k - 1.0 / 3;
	c = 1 / sqrt(9 * d);
	for (;;) {
		double x = normal(s), v = 1 + c * x, u;
		if (v <= 0)
			continue;
		v = v * v * v;
		u = 1 - uniform(s);
		if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
			return boost * d * v;
	}
}

int64_t schedule_gap_ns(struct schedule *s)
{
	double mean = 1e9 / s->rate;

	switch (s->kind) {
	case ARR_POISSON:
		return (int64_t)llround(-log(1 - uniform(s->gap_s)) * mean);
	case ARR_GAMMA:
		return (int64_t)llround(gamma1(s->gap_s, s->shape) / s->shape * mean);
	case ARR_CONSTANT:
		break;
	}
	return (int64_t)llround(mean);
}

void schedule_set_bins(struct schedule *s, const struct schedule_bin *bins, size_t n)
{
	s->bins = bins;
	s->n_bins = n;
}

/* The first bin whose cumulative weight exceeds u x total (binary search:
 * cum never decreases). */
static const struct schedule_bin *pick_bin(const struct schedule *s, double u)
{
	double target = u * s->bins[s->n_bins - 1].cum;
	size_t lo = 0, hi = s->n_bins - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->bins[mid].cum > target)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &s->bins[lo];
}

int64_t schedule_output(struct schedule *s)
{
	int64_t lo = s->out_min, hi = s->out_max;

	if (s->n_bins) {
		const struct schedule_bin *b = pick_bin(s, uniform(s->out_s));
		lo = b->min;
		hi = b->max;
	} else if (s->out_max <= 0) {
		return 0;
	}
	return lo + (int64_t)(next(s->out_s) % ((uint64_t)(hi - lo) + 1));
}
