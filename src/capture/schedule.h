/* Open-loop arrival schedules (formats/run-v1.md 2.4, docs/capture.md
 * "Open-loop load"): the gaps between requests and their output lengths,
 * drawn from generators seeded by the run's seed and the cell's id, so a
 * rerun sends the same schedule. */
#ifndef TT_CAPTURE_SCHEDULE_H
#define TT_CAPTURE_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

enum arrivals { ARR_CONSTANT, ARR_POISSON, ARR_GAMMA };

/* A bin of an output-length histogram (formats/length-hist-v1.md): lengths
 * min..max, cum the sum of the weights of this bin and those before it. */
struct schedule_bin {
	int64_t min, max;
	double cum;
};

struct schedule {
	uint64_t gap_s[4];   /* xoshiro256** state of the gaps */
	uint64_t out_s[4];   /* ... and of the output lengths */
	enum arrivals kind;
	double rate;         /* requests/s */
	double shape;        /* gamma shape (burstiness) */
	int64_t out_min, out_max;
	const struct schedule_bin *bins; /* not owned; NULL: uniform out_min..out_max */
	size_t n_bins;
};

/* "constant", "poisson", "gamma" (NULL: constant); -1 for anything else. */
int arrivals_parse(const char *s);
void schedule_init(struct schedule *s, uint64_t seed, const char *cell_id, double rate,
		   enum arrivals kind, double burstiness, int64_t out_min, int64_t out_max);
/* Draw output lengths from these n >= 1 bins (the caller keeps them; the
 * last cum > 0) instead of uniformly. */
void schedule_set_bins(struct schedule *s, const struct schedule_bin *bins, size_t n);
/* The gap before the next request, ns (mean 1e9 / rate). */
int64_t schedule_gap_ns(struct schedule *s);
/* The next request's max_tokens: from the bins when set
 * (formats/length-hist-v1.md "Drawing a length"), else uniform in
 * [out_min, out_max]; 0 when neither is set (every request asks the run's
 * max_tokens). */
int64_t schedule_output(struct schedule *s);

#endif
