/* Open-loop arrival schedules (formats/run-v1.md 2.4, docs/capture.md
 * "Open-loop load"): the gaps between requests and their output lengths,
 * drawn from generators seeded by the run's seed and the cell's id, so a
 * rerun sends the same schedule. */
#ifndef TT_CAPTURE_SCHEDULE_H
#define TT_CAPTURE_SCHEDULE_H

#include <stdint.h>

enum arrivals { ARR_CONSTANT, ARR_POISSON, ARR_GAMMA };

struct schedule {
	uint64_t gap_s[4];   /* xoshiro256** state of the gaps */
	uint64_t out_s[4];   /* ... and of the output lengths */
	enum arrivals kind;
	double rate;         /* requests/s */
	double shape;        /* gamma shape (burstiness) */
	int64_t out_min, out_max;
};

/* "constant", "poisson", "gamma" (NULL: constant); -1 for anything else. */
int arrivals_parse(const char *s);
void schedule_init(struct schedule *s, uint64_t seed, const char *cell_id, double rate,
		   enum arrivals kind, double burstiness, int64_t out_min, int64_t out_max);
/* The gap before the next request, ns (mean 1e9 / rate). */
int64_t schedule_gap_ns(struct schedule *s);
/* The next request's max_tokens, uniform in [out_min, out_max]; 0 when no
 * range is set (every request asks the run's max_tokens). */
int64_t schedule_output(struct schedule *s);

#endif
