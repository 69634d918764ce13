/* tokentrace: synthetic runs that reproduce a profile (formats/profile-csv.md).
 *
 * A synthetic run is a real run directory (formats/run-v1.md) whose traces
 * are generated, not measured: for every cell of the profile, requests with
 * jittered TTFT and token gaps, multi-token chunks, and server metric scrapes
 * whose gauges explain each status.  The generator calibrates its parameters
 * by analysing its own traces with the library's figures (analysis.h), so a
 * report of the run reproduces the profile under our definitions. */
#ifndef TOKENTRACE_SYNTH_H
#define TOKENTRACE_SYNTH_H

#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tt_synth_opts {
	uint64_t seed;          /* jitter and prompt ids */
	double multi_rate;      /* share of chunks that carry 2 tokens (default 0.05; <0: none) */
	double error_rate;      /* share of measured requests that fail mid-stream (0) */
	double scale;           /* window length multiplier: more tokens per cell (1) */
	int64_t max_tokens;     /* output tokens per request (4096) */
	uint32_t time_unit_ns;  /* trace time resolution (0: format default) */
	int level;              /* zstd level (0: default) */
	const char *model;      /* manifest model name (default "synthetic-model") */
	const char *const *notes; /* n_notes "key=value" strings for the manifest */
	size_t n_notes;
};
void tt_synth_opts_init(struct tt_synth_opts *o);

/* Write a synthetic run of profile p to directory dir (created; must not
 * exist or be empty).  On success *bytes (may be NULL) is the size of all
 * trace files written. */
enum tt_code tt_synth_run(const struct tt_profile *p, const char *dir,
			  const struct tt_synth_opts *o, uint64_t *bytes, struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
