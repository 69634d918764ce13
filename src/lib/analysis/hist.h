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
/* The bucket of v > 0: v itself below 2048; above, with e = floor(log2 v),
 * 2048 + (e - 11) * 1024 + (v >> (e - 10)) - 1024, which is s * 1024 +
 * (v >> s) with s = e - 10; and with s held at 0 that covers v < 2048 too,
 * so there is no branch (this runs once per token gap of a run). */
static inline int tt_hist_index(int64_t v)
{
	int s = 63 - 10 - __builtin_clzll((unsigned long long)v | 1); /* 10: log2 TT_HIST_SUB */
	s = s > 0 ? s : 0;
	return s * TT_HIST_SUB + (int)(v >> s);
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
