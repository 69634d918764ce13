/* Internal: log-linear histogram of positive int64 values (ns), for
 * per-token latencies where a cell can hold millions of samples: memory is
 * fixed (~440 KiB) and every bucket is at most 1/1024 of its value wide, so
 * a percentile read from it is within 0.1 % of the exact one
 * (docs/metrics.md, "Precision"). */
#ifndef TT_HIST_H
#define TT_HIST_H

#include <stdint.h>

#define TT_HIST_SUB 1024
#define TT_HIST_BUCKETS (2 * TT_HIST_SUB + 53 * TT_HIST_SUB)

struct tt_hist {
	uint64_t count[TT_HIST_BUCKETS];
	uint64_t n;
	double sum;
	int64_t min, max;
};

void tt__hist_reset(struct tt_hist *h);
/* Add `weight` samples of value v (v <= 0 is ignored). */
static inline int tt_hist_index(int64_t v)
{
	int e;
	if (v < 2 * TT_HIST_SUB)
		return (int)v;
	e = 63 - __builtin_clzll((unsigned long long)v); /* >= 11 */
	return 2 * TT_HIST_SUB + (e - 11) * TT_HIST_SUB +
	       (int)((v >> (e - 10)) - TT_HIST_SUB);
}

static inline void tt_hist_add(struct tt_hist *h, int64_t v, uint64_t weight)
{
	if (v <= 0 || weight == 0)
		return;
	h->count[tt_hist_index(v)] += weight;
	h->n += weight;
	h->sum += (double)v * (double)weight;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* Percentile p in [0,100] with linear interpolation between closest ranks,
 * samples spread evenly inside their bucket.  NaN if empty. */
double tt__hist_percentile(const struct tt_hist *h, double p);

#endif
