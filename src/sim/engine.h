/* tokentrace-sim: the engine model (docs/sim.md, "Engine model"): requests
 * queue, run in continuous-batching steps on an absolute CLOCK_MONOTONIC
 * timeline, hold paged KV blocks and are preempted when they run out.
 *
 * The engine knows nothing of HTTP: each token it produces, and the end of
 * each run of steps, is handed to the hooks its owner sets. */
#ifndef TT_SIM_ENGINE_H
#define TT_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "lateness.h"
#include "prefix_cache.h"
#include "sim_config.h"
#include "sim_req.h"

struct event_base;
struct event;

struct engine_hooks {
	/* r produced a token at model time model_ns (the end of its step);
	 * r->generated already counts it */
	void (*token)(void *ctx, struct sim_req *r, uint64_t model_ns);
	/* one timer wake ran `steps` steps (maybe 0); finished: a request
	 * reached its length in one of them */
	void (*stepped)(void *ctx, int finished, unsigned steps);
	void *ctx;
	/* optional: r left the queue for the batch for the first time, at
	 * model time model_ns (the start of the step that took it) */
	void (*admitted)(void *ctx, struct sim_req *r, uint64_t model_ns);
};

/* What the engine has done, for /metrics and /sim/stats. */
struct engine_stats {
	uint64_t prompt_tokens, generation_tokens, prefix_queries, prefix_hits;
	uint64_t preemptions, steps;
	/* llamacpp:prompt_seconds_total as llama-server counts it: per
	 * request whose prefill completed, the time from its admission to its
	 * first token after the prefill, in whole ms (llama-server adds each
	 * request's double ms to a uint64_t) */
	uint64_t prompt_ms;
	double busy_slot_sum;      /* sum over steps of running count */
	/* recent generation throughput (sglang:gen_throughput): the rate over
	 * the last window of at least 1 s */
	uint64_t gen_window_start_ns, gen_window_tokens;
	double gen_throughput;
	/* --spec-draft: vLLM's spec_decode counters (docs/sim.md) */
	uint64_t spec_drafts, spec_draft_tokens, spec_accepted_tokens;
};

struct engine {
	const struct sim_config *cfg;
	struct event_base *base;
	struct engine_hooks hooks;
	struct sim_req **running;
	size_t nrunning, running_cap;
	struct sim_req *whead, *wtail;
	size_t nwaiting;
	int64_t kv_blocks_total, kv_blocks_used;
	struct prefix_cache pc;
	int busy;
	int hold_step;             /* the step is empty: every running request
				    * is in its turnover hold */
	uint64_t step_start_ns, step_end_ns;
	struct event *step_ev;
	struct lateness_hist late;
	struct engine_stats stats;
	uint64_t spec_rng;         /* --spec-accept draws, seeded by --seed */
};

/* An idle engine for cfg whose step timer runs on base; both must outlive
 * it.  0, or -1 with a message in err; engine_release either way. */
int engine_init(struct engine *e, const struct sim_config *cfg, struct event_base *base,
		char *err, size_t errlen);
void engine_release(struct engine *e);
/* Sets the hooks; before the first engine_submit. */
void engine_set_hooks(struct engine *e, const struct engine_hooks *hooks);
/* Queues r (prompt fields and arrival_ns set); its tokens come through the
 * token hook until r->state is REQ_FINISHED. */
void engine_submit(struct engine *e, struct sim_req *r);
/* Takes r out of the queue or the batch and frees its KV blocks. */
void engine_abort(struct engine *e, struct sim_req *r);
/* KV blocks in use, 0..1. */
double engine_kv_usage(const struct engine *e);
/* The running gauge now: running requests less those still in their
 * turnover hold, which a real server has not yet put in its running set
 * (docs/sim.md 4.4, "The running gauge"). */
size_t engine_running_gauge(const struct engine *e);

#endif
