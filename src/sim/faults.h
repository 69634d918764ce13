/* tokentrace-sim: fault specifications, `--fault KIND[:SECONDS]@WHEN[,after=N]`,
 * and which request each one hits (docs/sim.md). */
#ifndef TT_SIM_FAULTS_H
#define TT_SIM_FAULTS_H

#include <stddef.h>
#include <stdint.h>

enum fault_kind {
	FAULT_NONE = 0,
	FAULT_HTTP500,
	FAULT_HTTP429,
	FAULT_HTTP503,
	FAULT_RESET,       /* TCP reset mid-stream */
	FAULT_STALL,       /* no bytes for `seconds` mid-stream */
	FAULT_MALFORMED,   /* one broken SSE event mid-stream */
	FAULT_ERROR_EVENT, /* data: {"error":...} then [DONE] */
	FAULT_SLOW_HEADERS,/* response headers `seconds` late */
	FAULT_NO_DONE      /* stream ends without usage chunk and [DONE] */
};

struct fault_spec {
	enum fault_kind kind;
	double seconds;   /* stall and slowheaders */
	double rate;      /* probability per request, or 0 */
	uint64_t req;     /* request number (1-based), or 0 */
	uint64_t every;   /* every Nth request, or 0 */
	int64_t after;    /* tokens sent before a mid-stream fault */
};

/* Parses one --fault value into *out; 0, or -1 with a message in err. */
int fault_parse(const char *spec, struct fault_spec *out, char *err, size_t errlen);
/* The fault request number req_no gets: the first of faults[0..n) that hits
 * it, or kind FAULT_NONE.  Draws from *rng for every rate fault on every
 * request, so the victims depend only on the seed and the arrival order. */
struct fault_spec fault_pick(const struct fault_spec *faults, int n, uint64_t *rng,
			     uint64_t req_no);

#endif
