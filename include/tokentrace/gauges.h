/* tokentrace: the server gauges the figures read from a /metrics scrape.
 *
 * One metric name per quantity, chosen by engine in a stated order of
 * preference (docs/metrics.md "M-gauges"): a vLLM that exports both the
 * current and the deprecated KV usage name, or a scrape holding names of
 * two engines, is read once, never summed across names. */
#ifndef TOKENTRACE_GAUGES_H
#define TOKENTRACE_GAUGES_H

#include <stddef.h>

#include "tokentrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_gauge {
	TT_GAUGE_RUNNING = 0,     /* requests in the running batch */
	TT_GAUGE_WAITING = 1,     /* requests queued */
	TT_GAUGE_KV = 2,          /* KV cache usage, 0..1 */
	TT_GAUGE_PREEMPTIONS = 3, /* preemption counter (cumulative) */
	TT_GAUGE_COUNT_ = 4
};

/* The metric names read for gauge g of an engine ("vllm", "sglang",
 * "llamacpp", "tgi"), most preferred first, NULL-terminated; for any other
 * engine (unknown, synthetic, NULL) every engine's list, engines in the
 * order vllm, sglang, llamacpp, tgi.  Static; never NULL. */
const char *const *tt_gauge_names(const char *engine, enum tt_gauge g);

/* Read the gauges of one scrape.  For each gauge, the first name of
 * tt_gauge_names that has a finite value in the scrape is used, alone;
 * its label sets are summed (running, waiting, preemptions: one series
 * per engine instance) or their maximum taken (KV usage: the fullest
 * instance).  v[g] is NaN when the scrape has no finite value for g.
 * With an engine not in the list, the engine is chosen per scrape: the
 * first of vllm, sglang, llamacpp, tgi with any gauge name present, and
 * only its names are read.  Returns a bit mask (1 << g) of the gauges found. */
unsigned tt_scrape_gauges(const struct tt_scrape *s, const char *engine,
			  double v[TT_GAUGE_COUNT_]);

#ifdef __cplusplus
}
#endif
#endif
