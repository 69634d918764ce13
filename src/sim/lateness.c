/* Step lateness: a fixed 1 us histogram up to 10 ms, cheap enough to note
 * every step. */
#include "lateness.h"

#include <stddef.h>

void lateness_note(struct lateness_hist *h, uint64_t late_ns)
{
	uint64_t us = late_ns / 1000;
	h->us[us < 10000 ? us : 10000]++;
	h->count++;
	h->sum_ns += late_ns;
	if (late_ns > h->max_ns)
		h->max_ns = late_ns;
}

uint64_t lateness_quantile_ns(const struct lateness_hist *h, double q)
{
	uint64_t want = (uint64_t)(q * (double)h->count), seen = 0;
	if (!h->count)
		return 0;
	for (size_t i = 0; i <= 10000; i++) {
		seen += h->us[i];
		if (seen > want || seen == h->count)
			return i == 10000 ? h->max_ns : (uint64_t)i * 1000 + 500;
	}
	return h->max_ns;
}
