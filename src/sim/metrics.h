/* tokentrace-sim: the request-latency histograms and request counters the
 * API layer keeps, and /metrics: both with the engine's state and counters
 * in Prometheus text under each flavor's names (docs/engines.md). */
#ifndef TT_SIM_METRICS_H
#define TT_SIM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "sim_config.h"

struct evbuffer;

struct histogram {
	const double *bounds;
	size_t nb;
	uint64_t *counts; /* nb + 1 (the last one is +Inf) */
	double sum;
	uint64_t count;
};

struct sim_metrics {
	uint64_t requests_ok, requests_err, chunks, emitted_tokens;
	uint64_t finished_tokens; /* tokens of requests that ended normally
				   * (llama-server counts only those) */
	uint64_t predicted_ms;    /* of those requests, first to last token's
				   * model time, whole ms per request (as
				   * llamacpp:tokens_predicted_seconds_total) */
	struct histogram ttft, itl, e2e;
	struct histogram queue;   /* first wait in the queue: arrival to the step
				   * that first takes the request (vLLM's,
				   * SGLang's and TGI's queue histograms) */
	struct histogram prefill; /* that step's start to the first token's
				   * model time (vLLM's prefill histogram) */
	enum sim_flavor flavor;   /* whose buckets, and when queue is observed */
};

/* Sets up the histograms with flavor f's buckets. */
void metrics_init(struct sim_metrics *m, enum sim_flavor f);
void metrics_release(struct sim_metrics *m);
/* Counts value v (seconds) in h. */
void metrics_observe(struct histogram *h, double v);
/* A request that arrived at model time arrival_ns first left the queue at
 * admit_ns: SGLang and TGI observe the wait then (vLLM when the request
 * ends, metrics_ended). */
void metrics_admitted(struct sim_metrics *m, uint64_t arrival_ns, uint64_t admit_ns);
/* A request's reply ended; it was admitted at admit_ns and made its first
 * token at first_ns (0: never).  vLLM observes the queue and prefill
 * histograms of a request when it ends. */
void metrics_ended(struct sim_metrics *m, uint64_t arrival_ns, uint64_t admit_ns,
		   uint64_t first_ns);
/* Counts a request that ended normally with n tokens, the first and the
 * last at model times first_ns and last_ns (llama-server's tokens_predicted
 * counters). */
void metrics_finished(struct sim_metrics *m, uint64_t n, uint64_t first_ns, uint64_t last_ns);
/* Appends the /metrics page of flavor cfg->flavor to out; start_unix is
 * when the server started, for the _created samples. */
void metrics_render(const struct sim_metrics *m, const struct engine *e,
		    const struct sim_config *cfg, double start_unix, struct evbuffer *out);

#endif
