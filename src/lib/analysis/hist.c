/* Log-linear histogram: see hist.h. */
#include "analysis/hist.h"

#include <math.h>
#include <string.h>

void tt__hist_reset(struct tt_hist *h)
{
	memset(h->count, 0, sizeof h->count);
	h->n = 0;
	h->sum = 0;
	h->min = INT64_MAX;
	h->max = INT64_MIN;
}

static void bucket_range(int idx, double *lo, double *hi)
{
	int e, j;

	if (idx < 2 * TT_HIST_SUB) {
		*lo = idx;
		*hi = idx + 1;
		return;
	}
	e = (idx - 2 * TT_HIST_SUB) / TT_HIST_SUB + 11;
	j = (idx - 2 * TT_HIST_SUB) % TT_HIST_SUB;
	*lo = ldexp((double)(TT_HIST_SUB + j), e - 10);
	*hi = ldexp((double)(TT_HIST_SUB + j + 1), e - 10);
}

/* Value of the sample with 0-based rank r (fractional ranks are handled by
 * the caller's interpolation). */
static double value_at(const struct tt_hist *h, uint64_t r)
{
	uint64_t seen = 0;

	for (int i = 0; i < TT_HIST_BUCKETS; i++) {
		uint64_t c = h->count[i];
		if (!c)
			continue;
		if (r < seen + c) {
			double lo, hi, v;
			bucket_range(i, &lo, &hi);
			if (i < 2 * TT_HIST_SUB)
				return lo; /* exact integer buckets */
			v = lo + ((double)(r - seen) + 0.5) * (hi - lo) / (double)c;
			/* Keep within the observed extremes. */
			if (v < (double)h->min)
				v = (double)h->min;
			if (v > (double)h->max)
				v = (double)h->max;
			return v;
		}
		seen += c;
	}
	return (double)h->max;
}

double tt__hist_percentile(const struct tt_hist *h, double p)
{
	double rank, frac, a, b;
	uint64_t lo;

	if (h->n == 0)
		return NAN;
	if (p <= 0)
		return (double)h->min;
	if (p >= 100)
		return (double)h->max;
	rank = p / 100.0 * (double)(h->n - 1);
	lo = (uint64_t)rank;
	frac = rank - (double)lo;
	a = value_at(h, lo);
	if (frac == 0 || lo + 1 >= h->n)
		return a;
	b = value_at(h, lo + 1);
	return a + (b - a) * frac;
}
