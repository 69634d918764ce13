/* tokentrace-sim: how late the engine's steps complete against their
 * schedule, as a histogram (served by /sim/stats). */
#ifndef TT_SIM_LATENESS_H
#define TT_SIM_LATENESS_H

#include <stdint.h>

struct lateness_hist {
	uint64_t count, max_ns, sum_ns;
	uint64_t us[10001]; /* 1 us bins up to 10 ms, the last one is overflow */
};

/* Counts one step that completed late_ns after its scheduled end. */
void lateness_note(struct lateness_hist *h, uint64_t late_ns);
/* The q-quantile (0..1) in ns: a bin's middle, or the maximum past 10 ms. */
uint64_t lateness_quantile_ns(const struct lateness_hist *h, double q);

#endif
