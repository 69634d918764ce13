/* /metrics: Prometheus text under the names each flavor's server uses
 * (docs/engines.md describes how vLLM, SGLang and llama.cpp report metrics;
 * docs/sim.md, "Metrics", which of them the simulator serves), and the
 * latency histograms behind it. */
#include "metrics.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "sim_config.h"

/* vLLM's bucket bounds */
static const double ttft_bounds[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
				     0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
				     640.0, 2560.0};
static const double itl_bounds[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
				    0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
static const double e2e_bounds[] = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
				    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
				    7680.0};

/* SGLang's sglang:queue_time_seconds (its metrics collector) */
static const double sglang_queue_bounds[] = {
	0.0,   0.001, 0.005, 0.01,  0.05,  0.1,   0.2,   0.5,   1.0,   2.0,   3.0,   4.0,
	5.0,   10.0,  15.0,  20.0,  30.0,  40.0,  50.0,  60.0,  70.0,  80.0,  90.0,  100.0,
	200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0,
	1600.0, 1800.0, 2000.0, 2500.0, 3000.0};

#define HIST_INIT(h, b) hist_init(h, b, sizeof b / sizeof b[0])

static void hist_init(struct histogram *h, const double *b, size_t n)
{
	h->bounds = b;
	h->nb = n;
	h->counts = calloc(n + 1, sizeof *h->counts);
	h->sum = 0;
	h->count = 0;
}

void metrics_init(struct sim_metrics *m, enum sim_flavor f)
{
	memset(m, 0, sizeof *m);
	m->flavor = f;
	HIST_INIT(&m->ttft, ttft_bounds);
	HIST_INIT(&m->itl, itl_bounds);
	HIST_INIT(&m->e2e, e2e_bounds);
	/* vLLM V1 gives its queue and prefill histograms the request-latency
	 * buckets of e2e_request_latency_seconds */
	if (f == FLAVOR_VLLM)
		HIST_INIT(&m->queue, e2e_bounds);
	else if (f == FLAVOR_SGLANG)
		HIST_INIT(&m->queue, sglang_queue_bounds);
	else
		HIST_INIT(&m->queue, ttft_bounds);
	HIST_INIT(&m->prefill, e2e_bounds);
}

void metrics_release(struct sim_metrics *m)
{
	free(m->ttft.counts);
	free(m->itl.counts);
	free(m->e2e.counts);
	free(m->queue.counts);
	free(m->prefill.counts);
}

void metrics_observe(struct histogram *h, double v)
{
	size_t i = 0;
	if (!h->counts)
		return;
	while (i < h->nb && v > h->bounds[i])
		i++;
	h->counts[i]++;
	h->sum += v;
	h->count++;
}

void metrics_admitted(struct sim_metrics *m, uint64_t arrival_ns, uint64_t admit_ns)
{
	/* SGLang's scheduler and TGI's router observe the wait when the
	 * request joins its first batch */
	if (m->flavor != FLAVOR_VLLM)
		metrics_observe(&m->queue, (double)(admit_ns - arrival_ns) / 1e9);
}

void metrics_ended(struct sim_metrics *m, uint64_t arrival_ns, uint64_t admit_ns,
		   uint64_t first_ns)
{
	/* vLLM V1 observes queued_time (scheduled - queued) and prefill_time
	 * (first token - scheduled) from a finished request's stats */
	if (m->flavor != FLAVOR_VLLM || !admit_ns || !first_ns || first_ns < admit_ns)
		return;
	metrics_observe(&m->queue, (double)(admit_ns - arrival_ns) / 1e9);
	metrics_observe(&m->prefill, (double)(first_ns - admit_ns) / 1e9);
}

void metrics_finished(struct sim_metrics *m, uint64_t n, uint64_t first_ns, uint64_t last_ns)
{
	m->finished_tokens += n;
	/* llama-server: the time from the first token to the last, per
	 * request, added in whole ms */
	if (first_ns && last_ns > first_ns)
		m->predicted_ms += (last_ns - first_ns) / 1000000u;
}

/* Python's float repr, as prometheus_client writes: 3 -> "3.0". */
static void num(struct evbuffer *o, double v)
{
	char b[64];
	if (v == (double)(long long)v && v < 1e15 && v > -1e15)
		snprintf(b, sizeof b, "%lld.0", (long long)v);
	else
		snprintf(b, sizeof b, "%.15g", v);
	evbuffer_add(o, b, strlen(b));
}

struct names {
	const char *prefix;  /* "vllm:" */
	const char *labels;  /* "model_name=\"m\"" or "" */
};

static void head(struct evbuffer *o, const struct names *n, const char *name, const char *type,
		 const char *help)
{
	evbuffer_add_printf(o, "# HELP %s%s %s\n# TYPE %s%s %s\n", n->prefix, name, help,
			    n->prefix, name, type);
}

static void sample(struct evbuffer *o, const struct names *n, const char *name,
		   const char *extra, double v)
{
	evbuffer_add_printf(o, "%s%s", n->prefix, name);
	if (*n->labels || (extra && *extra))
		evbuffer_add_printf(o, "{%s%s%s}", extra && *extra ? extra : "",
				    extra && *extra && *n->labels ? "," : "", n->labels);
	evbuffer_add(o, " ", 1);
	num(o, v);
	evbuffer_add(o, "\n", 1);
}

static void gauge(struct evbuffer *o, const struct names *n, const char *name, const char *help,
		  double v)
{
	head(o, n, name, "gauge", help);
	sample(o, n, name, NULL, v);
}

/* prometheus_client's layout: the _total family typed counter, then its
 * _created samples as a gauge family of their own. */
static void counter(struct evbuffer *o, const struct names *n, const char *name,
		    const char *help, double v, double created)
{
	char full[128];
	snprintf(full, sizeof full, "%s_total", name);
	head(o, n, full, "counter", help);
	sample(o, n, full, NULL, v);
	if (created > 0) {
		snprintf(full, sizeof full, "%s_created", name);
		head(o, n, full, "gauge", help);
		sample(o, n, full, NULL, created);
	}
}

static void histogram(struct evbuffer *o, const struct names *n, const char *name,
		      const char *help, const struct histogram *h)
{
	char full[128], le[64];
	uint64_t cum = 0;
	head(o, n, name, "histogram", help);
	snprintf(full, sizeof full, "%s_bucket", name);
	for (size_t i = 0; i <= h->nb; i++) {
		cum += h->counts[i];
		if (i < h->nb)
			snprintf(le, sizeof le, "le=\"%g%s\"", h->bounds[i],
				 h->bounds[i] == (double)(long long)h->bounds[i] ? ".0" : "");
		else
			snprintf(le, sizeof le, "le=\"+Inf\"");
		sample(o, n, full, le, (double)cum);
	}
	snprintf(full, sizeof full, "%s_count", name);
	sample(o, n, full, NULL, (double)h->count);
	snprintf(full, sizeof full, "%s_sum", name);
	sample(o, n, full, NULL, h->sum);
}

static void render_vllm(const struct sim_metrics *m, const struct engine *e,
			const struct sim_config *c, double created, struct evbuffer *o,
			const struct names *n)
{
	const struct engine_stats *s = &e->stats;

	gauge(o, n, "num_requests_running", "Number of requests in model execution batches.",
	      (double)engine_running_gauge(e));
	gauge(o, n, "num_requests_waiting", "Number of requests waiting to be processed.",
	      (double)e->nwaiting);
	gauge(o, n, "kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
	      engine_kv_usage(e));
	counter(o, n, "prefix_cache_queries",
		"Prefix cache queries, in terms of number of queried tokens.",
		(double)s->prefix_queries, created);
	counter(o, n, "prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
		(double)s->prefix_hits, created);
	counter(o, n, "num_preemptions", "Cumulative number of preemption from the engine.",
		(double)s->preemptions, created);
	counter(o, n, "prompt_tokens", "Number of prefill tokens processed.",
		(double)s->prompt_tokens, created);
	counter(o, n, "generation_tokens", "Number of generation tokens processed.",
		(double)s->generation_tokens, created);
	if (c->spec_draft > 0) {
		/* vLLM V1 with a speculative config (SpecDecodingProm) */
		counter(o, n, "spec_decode_num_drafts", "Number of spec decoding drafts.",
			(double)s->spec_drafts, created);
		counter(o, n, "spec_decode_num_draft_tokens", "Number of draft tokens.",
			(double)s->spec_draft_tokens, created);
		counter(o, n, "spec_decode_num_accepted_tokens", "Number of accepted tokens.",
			(double)s->spec_accepted_tokens, created);
	}
	head(o, n, "cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
	evbuffer_add_printf(o, "%scache_config_info{block_size=\"%d\",cache_dtype=\"auto\","
			    "enable_prefix_caching=\"%s\",gpu_memory_utilization=\"0.9\","
			    "num_cpu_blocks=\"None\",num_gpu_blocks=\"%lld\","
			    "num_gpu_blocks_override=\"None\",sliding_window=\"None\","
			    "swap_space_bytes=\"4294967296\"} 1.0\n",
			    n->prefix, c->block_size,
			    c->prefix_caching ? "True" : "False",
			    (long long)e->kv_blocks_total);
	histogram(o, n, "time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		  &m->ttft);
	histogram(o, n, "inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		  &m->itl);
	histogram(o, n, "e2e_request_latency_seconds",
		  "Histogram of e2e request latency in seconds.", &m->e2e);
	/* the report's queue_ms and prefill_ms (M-ttft-parts) */
	histogram(o, n, "request_queue_time_seconds",
		  "Histogram of time spent in WAITING phase for request.", &m->queue);
	histogram(o, n, "request_prefill_time_seconds",
		  "Histogram of time spent in PREFILL phase for request.", &m->prefill);
}

static void render_sglang(const struct sim_metrics *m, const struct engine *e,
			  const struct sim_config *c, struct evbuffer *o, const struct names *n)
{
	const struct engine_stats *s = &e->stats;

	gauge(o, n, "num_running_reqs", "The number of running requests.",
	      (double)engine_running_gauge(e));
	gauge(o, n, "num_queue_reqs", "The number of requests in the waiting queue.",
	      (double)e->nwaiting);
	gauge(o, n, "token_usage", "The token usage.", engine_kv_usage(e));
	gauge(o, n, "max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.",
	      (double)(e->kv_blocks_total * c->block_size));
	gauge(o, n, "gen_throughput", "The generation throughput (token/s).", s->gen_throughput);
	gauge(o, n, "cache_hit_rate", "The prefix cache hit rate.",
	      s->prefix_queries ? (double)s->prefix_hits / (double)s->prefix_queries : 0.0);
	counter(o, n, "prompt_tokens", "Number of prefill tokens processed.",
		(double)s->prompt_tokens, 0);
	counter(o, n, "generation_tokens", "Number of generation tokens processed.",
		(double)s->generation_tokens, 0);
	counter(o, n, "num_requests", "Number of requests processed.",
		(double)(m->requests_ok + m->requests_err), 0);
	histogram(o, n, "time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		  &m->ttft);
	histogram(o, n, "inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		  &m->itl);
	histogram(o, n, "e2e_request_latency_seconds",
		  "Histogram of End-to-end request latency in seconds", &m->e2e);
	/* the report's queue_ms (M-ttft-parts) */
	histogram(o, n, "queue_time_seconds", "Histogram of queueing time in seconds.", &m->queue);
}

static void render_llamacpp(const struct sim_metrics *m, const struct engine *e,
			    struct evbuffer *o)
{
	const struct engine_stats *s = &e->stats;

	/* llama.cpp writes plain integers and no labels; its tokens_predicted
	 * counts the tokens of requests that finished (checked: a request
	 * the client cut is not counted) */
	evbuffer_add_printf(o,
		"# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
		"# TYPE llamacpp:prompt_tokens_total counter\n"
		"llamacpp:prompt_tokens_total %llu\n"
		"# HELP llamacpp:prompt_seconds_total Prompt process time\n"
		"# TYPE llamacpp:prompt_seconds_total counter\n"
		"llamacpp:prompt_seconds_total %.3f\n"
		"# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.\n"
		"# TYPE llamacpp:tokens_predicted_total counter\n"
		"llamacpp:tokens_predicted_total %llu\n"
		"# HELP llamacpp:tokens_predicted_seconds_total Predict process time\n"
		"# TYPE llamacpp:tokens_predicted_seconds_total counter\n"
		"llamacpp:tokens_predicted_seconds_total %.3f\n"
		"# HELP llamacpp:n_decode_total Total number of llama_decode() calls\n"
		"# TYPE llamacpp:n_decode_total counter\n"
		"llamacpp:n_decode_total %llu\n"
		"# HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call\n"
		"# TYPE llamacpp:n_busy_slots_per_decode counter\n"
		"llamacpp:n_busy_slots_per_decode %.3f\n"
		"# HELP llamacpp:requests_processing Number of requests processing.\n"
		"# TYPE llamacpp:requests_processing gauge\n"
		"llamacpp:requests_processing %zu\n"
		"# HELP llamacpp:requests_deferred Number of requests deferred.\n"
		"# TYPE llamacpp:requests_deferred gauge\n"
		"llamacpp:requests_deferred %zu\n",
		(unsigned long long)s->prompt_tokens, (double)s->prompt_ms / 1e3,
		(unsigned long long)m->finished_tokens, (double)m->predicted_ms / 1e3,
		(unsigned long long)s->steps,
		s->steps ? s->busy_slot_sum / (double)s->steps : 0.0, engine_running_gauge(e),
		e->nwaiting);
}

/* TGI's names (its docs' metrics reference): written by Rust's
 * metrics-exporter-prometheus, so counters keep their names (no _total)
 * and nothing has labels except the batch series' method. */
static void render_tgi(const struct sim_metrics *m, const struct engine *e,
		       const struct sim_config *c, struct evbuffer *o)
{
	const struct engine_stats *s = &e->stats;
	struct names n = {"tgi_", ""};
	uint64_t requests = m->requests_ok + m->requests_err;

	evbuffer_add_printf(o, "# TYPE tgi_queue_size gauge\ntgi_queue_size %zu\n"
			    "# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size %zu\n"
			    "# TYPE tgi_batch_current_max_tokens gauge\n"
			    "tgi_batch_current_max_tokens %lld\n"
			    "# TYPE tgi_request_count counter\ntgi_request_count %llu\n"
			    "# TYPE tgi_request_success counter\ntgi_request_success %llu\n"
			    "# TYPE tgi_batch_inference_count counter\n"
			    "tgi_batch_inference_count{method=\"decode\"} %llu\n",
			    e->nwaiting, engine_running_gauge(e),
			    (long long)(e->kv_blocks_used * c->block_size),
			    (unsigned long long)requests, (unsigned long long)m->requests_ok,
			    (unsigned long long)s->steps);
	/* (the simulator keeps per-token gaps, not TGI's per-request means) */
	histogram(o, &n, "request_mean_time_per_token_duration",
		  "Mean time per token per request (inter-token latency)", &m->itl);
	histogram(o, &n, "request_duration",
		  "Total time spent processing the request (e2e latency)", &m->e2e);
	/* from the arrival to the step that first took the request (the
	 * report's queue_ms, M-ttft-parts) */
	histogram(o, &n, "request_queue_duration", "Time spent in the queue per request",
		  &m->queue);
}

void metrics_render(const struct sim_metrics *m, const struct engine *e,
		    const struct sim_config *c, double start_unix, struct evbuffer *out)
{
	char labels[256];
	struct names n;

	snprintf(labels, sizeof labels, "engine=\"0\",model_name=\"%s\"", c->model);
	switch (c->flavor) {
	case FLAVOR_SGLANG:
		snprintf(labels, sizeof labels, "model_name=\"%s\"", c->model);
		n.prefix = "sglang:";
		n.labels = labels;
		render_sglang(m, e, c, out, &n);
		break;
	case FLAVOR_LLAMACPP:
		render_llamacpp(m, e, out);
		break;
	case FLAVOR_TGI:
		render_tgi(m, e, c, out);
		break;
	case FLAVOR_VLLM:
	default:
		n.prefix = "vllm:";
		n.labels = labels;
		render_vllm(m, e, c, start_unix, out, &n);
		break;
	}
}
