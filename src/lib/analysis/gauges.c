/* Server gauges of a scrape, one name per quantity ("M-gauges" in
 * docs/metrics.md). */
#include "tokentrace/gauges.h"

#include <math.h>
#include <string.h>

enum { E_VLLM, E_SGLANG, E_LLAMACPP, E_TGI, E_COUNT };

static const char *const engine_keys[E_COUNT] = {"vllm", "sglang", "llamacpp", "tgi"};

/* [engine][gauge]: names most preferred first, NULL-terminated. */
static const char *const names[E_COUNT][TT_GAUGE_COUNT_][3] = {
	[E_VLLM] = {{"vllm:num_requests_running", NULL},
		    {"vllm:num_requests_waiting", NULL},
		    {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", NULL},
		    {"vllm:num_preemptions_total", "vllm:num_preemptions", NULL}},
	[E_SGLANG] = {{"sglang:num_running_reqs", NULL},
		      {"sglang:num_queue_reqs", NULL},
		      {"sglang:token_usage", NULL},
		      {NULL}},
	[E_LLAMACPP] = {{"llamacpp:requests_processing", NULL},
			{"llamacpp:requests_deferred", NULL},
			{NULL},
			{NULL}},
	[E_TGI] = {{"tgi_batch_current_size", NULL}, {"tgi_queue_size", NULL}, {NULL}, {NULL}},
};

/* Every engine's names, engines in order: for runs of an unnamed engine. */
static const char *const any_names[TT_GAUGE_COUNT_][7] = {
	{"vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing",
	 "tgi_batch_current_size", NULL},
	{"vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred",
	 "tgi_queue_size", NULL},
	{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage", NULL},
	{"vllm:num_preemptions_total", "vllm:num_preemptions", NULL},
};

static int engine_index(const char *engine)
{
	for (int e = 0; engine && e < E_COUNT; e++)
		if (strcmp(engine, engine_keys[e]) == 0)
			return e;
	return -1;
}

const char *const *tt_gauge_names(const char *engine, enum tt_gauge g)
{
	int e = engine_index(engine);

	if ((unsigned)g >= TT_GAUGE_COUNT_)
		g = TT_GAUGE_RUNNING;
	return e >= 0 ? names[e][g] : any_names[g];
}

/* The value of one name in the scrape: summed or max over label sets; NaN
 * when no finite sample has the name. */
static double value_of(const struct tt_scrape *s, const char *name, int take_max)
{
	double v = NAN;

	for (size_t i = 0; i < s->n_samples; i++) {
		const struct tt_sample *m = &s->samples[i];
		if (!m->name || !isfinite(m->value) || strcmp(m->name, name) != 0)
			continue;
		if (isnan(v))
			v = m->value;
		else if (take_max)
			v = m->value > v ? m->value : v;
		else
			v += m->value;
	}
	return v;
}

/* The engine whose names a scrape of an unnamed engine holds: the first
 * with any gauge present, -1 when none. */
static int engine_in_scrape(const struct tt_scrape *s)
{
	for (int e = 0; e < E_COUNT; e++)
		for (int g = 0; g < TT_GAUGE_COUNT_; g++)
			for (int k = 0; names[e][g][k]; k++)
				if (!isnan(value_of(s, names[e][g][k], 0)))
					return e;
	return -1;
}

unsigned tt_scrape_gauges(const struct tt_scrape *s, const char *engine,
			  double v[TT_GAUGE_COUNT_])
{
	int e = engine_index(engine);
	unsigned found = 0;

	for (int g = 0; g < TT_GAUGE_COUNT_; g++)
		v[g] = NAN;
	if (e < 0)
		e = engine_in_scrape(s);
	if (e < 0)
		return 0;
	for (int g = 0; g < TT_GAUGE_COUNT_; g++)
		for (int k = 0; names[e][g][k]; k++) {
			double x = value_of(s, names[e][g][k], g == TT_GAUGE_KV);
			if (!isnan(x)) {
				v[g] = x;
				found |= 1u << g;
				break;
			}
		}
	return found;
}
