/* Engine tests: queueing on a full KV cache, preemption, prefix-cache hits,
 * multi-token chunks (stream interval, merge, a late loop) and the absolute
 * step schedule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_client.h"

#define STREAM_USAGE "\"ignore_eos\":true,\"return_token_ids\":true,\"stream_options\":" \
		     "{\"include_usage\":true,\"continuous_usage_stats\":true}"

/* Final completion_tokens of a stream, -1 if none. */
static long final_tokens(const struct stream_result *r)
{
	long last = -1;
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].completion_tokens >= 0)
			last = r->ev[i].completion_tokens;
	return last;
}

static int ends_done(const struct stream_result *r)
{
	return r->n && r->ev[r->n - 1].data && !strcmp(r->ev[r->n - 1].data, "[DONE]");
}

/* Tokens per content chunk (usage deltas), checked against token_ids. */
static size_t chunk_sizes(const struct stream_result *r, long *sizes, size_t max)
{
	long prev = 0;
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		const char *d = r->ev[i].data;
		if (!d || !strcmp(d, "[DONE]") || strstr(d, "\"choices\":[]"))
			continue;
		long c = r->ev[i].completion_tokens;
		assert_true(c >= prev);
		cJSON *j = cJSON_Parse(d);
		assert_non_null(j);
		cJSON *ids = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0),
						 "token_ids");
		assert_int_equal(cJSON_GetArraySize(ids), c - prev);
		cJSON_Delete(j);
		if (k < max)
			sizes[k++] = c - prev;
		prev = c;
	}
	return k;
}

struct gauges {
	const struct sim_proc *p;
	double max_waiting, max_running, max_kv;
	int two_run_one_waits;
};

static int sample_gauges(void *arg, double t)
{
	struct gauges *g = arg;
	(void)t;
	double w = metric_now(g->p, "vllm:num_requests_waiting");
	double r = metric_now(g->p, "vllm:num_requests_running");
	double kv = metric_now(g->p, "vllm:kv_cache_usage_perc");
	if (w > g->max_waiting)
		g->max_waiting = w;
	if (r > g->max_running)
		g->max_running = r;
	if (kv > g->max_kv)
		g->max_kv = kv;
	/* a request just arrived waits for the next step even with room; what
	 * the test wants is the steady state: two running, one held back */
	if (r == 2.0 && w == 1.0)
		g->two_run_one_waits = 1;
	return 0;
}

static void test_queue_when_kv_full(void **state)
{
	(void)state;
	/* 2048 tokens of KV: two 800-token prompts fit (100 blocks), a third
	 * (50 more blocks) does not until one finishes */
	const char *args[] = {"--kv-capacity", "2048", "--max-model-len", "2048", "--step-base-ms", "4",
			      "--per-seq-ms", "0", "--per-ctx-token-ns", "0", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b[3];
	struct stream_result r[3];
	for (int i = 0; i < 3; i++)
		b[i] = body_token_prompt(800, 10 + i, 100, 1, STREAM_USAGE);
	struct gauges g = {&p, 0, 0, 0, 0};
	stream_many(&p, "/v1/completions", (const char *const *)b, 3, 1, 30, sample_gauges, &g, r);
	if (!g.two_run_one_waits || g.max_running != 2.0 || !(g.max_kv > 0.7 && g.max_kv <= 1.0))
		fail_msg("running %g (max), kv %g, two running with one waiting seen: %d",
			 g.max_running, g.max_kv, g.two_run_one_waits);
	uint64_t first_end = r[0].t_end < r[1].t_end ? r[0].t_end : r[1].t_end;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r[i].status, 200);
		assert_int_equal(final_tokens(&r[i]), 100);
		assert_true(ends_done(&r[i]));
	}
	/* the queued one starts only when a running one has finished */
	struct stream_result *q = NULL;
	for (int i = 0; i < 3; i++)
		if (!q || r[i].ev[0].t_ns > q->ev[0].t_ns)
			q = &r[i];
	assert_true(q->ev[0].t_ns + 5000000u >= first_end);
	assert_true(metric_now(&p, "vllm:num_preemptions_total") == 0.0);
	for (int i = 0; i < 3; i++) {
		stream_result_free(&r[i]);
		free(b[i]);
	}
	sim_stop_ok(&p);
}

static void test_preemption(void **state)
{
	(void)state;
	char path[] = "/tmp/tt-sim-pre-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	/* two 800-token prompts fit, but not both grown to 800 + 400 */
	const char *args[] = {"--kv-capacity", "2048", "--max-model-len", "2048", "--step-base-ms", "1",
			      "--per-seq-ms", "0", "--per-ctx-token-ns", "0", "--truth", path, NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b[2];
	struct stream_result r[2];
	for (int i = 0; i < 2; i++)
		b[i] = body_token_prompt(800, 20 + i, 400, 1, STREAM_USAGE);
	stream_many(&p, "/v1/completions", (const char *const *)b, 2, 1, 30, NULL, NULL, r);
	for (int i = 0; i < 2; i++) {
		long sizes[512];
		size_t n = chunk_sizes(&r[i], sizes, 512);
		long sum = 0;
		for (size_t k = 0; k < n; k++)
			sum += sizes[k];
		assert_int_equal(sum, 400);
		assert_int_equal(final_tokens(&r[i]), 400);
		assert_true(ends_done(&r[i]));
	}
	assert_true(metric_now(&p, "vllm:num_preemptions_total") >= 1.0);
	sim_stop_ok(&p);
	struct truth t;
	assert_int_equal(truth_read(path, &t), 0);
	uint32_t pre = 0;
	for (size_t i = 0; i < t.nreqs; i++) {
		pre += t.reqs[i].preemptions;
		assert_int_equal(t.reqs[i].completion, 400);
		/* a preempted request recomputes its prompt from the prefix cache */
		if (t.reqs[i].preemptions)
			assert_true(t.reqs[i].cached > 0);
	}
	assert_true(pre >= 1);
	truth_free(&t);
	unlink(path);
	for (int i = 0; i < 2; i++) {
		stream_result_free(&r[i]);
		free(b[i]);
	}
}

static double ttft_of(const struct sim_proc *p, const char *body)
{
	const char *bodies[] = {body};
	struct stream_result r;
	stream_many(p, "/v1/completions", bodies, 1, 0, 20, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(r.n >= 1);
	double t = (double)(r.ev[0].t_ns - r.t_start) / 1e9;
	stream_result_free(&r);
	return t;
}

static void test_prefix_cache(void **state)
{
	(void)state;
	const char *args[] = {"--prefill-tok-s", "20000", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *a = body_token_prompt(1000, 5, 2, 1, "\"ignore_eos\":true");
	char *other = body_token_prompt(1000, 6, 2, 1, "\"ignore_eos\":true");

	double cold = ttft_of(&p, a);
	double h0 = metric_now(&p, "vllm:prefix_cache_hits_total");
	double q0 = metric_now(&p, "vllm:prefix_cache_queries_total");
	double warm = ttft_of(&p, a);
	double h1 = metric_now(&p, "vllm:prefix_cache_hits_total");
	double q1 = metric_now(&p, "vllm:prefix_cache_queries_total");
	/* all but the last block: floor(999 / 16) * 16 */
	assert_true(h1 - h0 == 992.0);
	assert_true(q1 - q0 == 1000.0);
	assert_true(cold > 0.045); /* 1000 tokens at 20000 tok/s */
	assert_true(warm < cold / 4);
	ttft_of(&p, other);
	assert_true(metric_now(&p, "vllm:prefix_cache_hits_total") == h1);

	/* the same text hits too */
	const char *text = "{\"prompt\":\"The quick brown fox jumps over the lazy dog, again and "
			   "again, until the prefix cache has a full block or two of it.\","
			   "\"max_tokens\":1,\"stream\":true}";
	ttft_of(&p, text);
	double h2 = metric_now(&p, "vllm:prefix_cache_hits_total");
	ttft_of(&p, text);
	assert_true(metric_now(&p, "vllm:prefix_cache_hits_total") > h2);
	free(a);
	free(other);
	sim_stop_ok(&p);

	const char *off[] = {"--no-prefix-caching", NULL};
	p = sim_start_ok(off);
	a = body_token_prompt(1000, 5, 2, 1, "\"ignore_eos\":true");
	ttft_of(&p, a);
	ttft_of(&p, a);
	assert_true(metric_now(&p, "vllm:prefix_cache_hits_total") == 0.0);
	free(a);
	sim_stop_ok(&p);
}

static void test_stream_interval(void **state)
{
	(void)state;
	const char *args[] = {"--stream-interval", "4", "--step-base-ms", "20", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b = body_token_prompt(64, 1, 10, 1, STREAM_USAGE);
	const char *bodies[] = {b};
	struct stream_result r;
	long sizes[64];
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	size_t n = chunk_sizes(&r, sizes, 64);
	/* first token at once, then every 4, the rest at the end */
	assert_int_equal(n, 4);
	assert_int_equal(sizes[0], 1);
	assert_int_equal(sizes[1], 4);
	assert_int_equal(sizes[2], 4);
	assert_int_equal(sizes[3], 1);
	stream_result_free(&r);
	free(b);
	sim_stop_ok(&p);
}

/* --spec-draft: one request's counters, run twice with one seed: the same
 * draws; every token is the prefill's, a step's own or an accepted draft. */
static void spec_counters(const char *seed, double *drafts, double *draft_tokens, double *accepted)
{
	const char *args[] = {"--spec-draft", "3", "--spec-accept", "0.6", "--seed", seed, NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b = body_token_prompt(64, 1, 100, 1, STREAM_USAGE);
	const char *bodies[] = {b};
	struct stream_result r;
	long sizes[128], sum = 0;
	size_t n;

	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	n = chunk_sizes(&r, sizes, 128);
	for (size_t i = 0; i < n; i++)
		sum += sizes[i];
	assert_int_equal(sum, 100);
	*drafts = metric_now(&p, "vllm:spec_decode_num_drafts_total");
	*draft_tokens = metric_now(&p, "vllm:spec_decode_num_draft_tokens_total");
	*accepted = metric_now(&p, "vllm:spec_decode_num_accepted_tokens_total");
	stream_result_free(&r);
	free(b);
	sim_stop_ok(&p);
}

static void test_spec_decode_seeded(void **state)
{
	double d1, t1, a1, d2, t2, a2;
	(void)state;

	spec_counters("3", &d1, &t1, &a1);
	spec_counters("3", &d2, &t2, &a2);
	assert_true(d1 == d2 && t1 == t2 && a1 == a2);
	assert_true(d1 > 0 && a1 > 0 && a1 <= t1 && t1 <= 3 * d1);
	/* 100 tokens = 1 (prefill) + one per step + accepted drafts; only a
	 * request's last step (nothing left to draft) drafts nothing */
	assert_true(100 - 1 - a1 - d1 == 0 || 100 - 1 - a1 - d1 == 1);
	{
		/* no speculative config: no spec_decode series at all */
		const char *args[] = {NULL};
		struct sim_proc p = sim_start_ok(args);
		assert_true(isnan(metric_now(&p, "vllm:spec_decode_num_drafts_total")));
		sim_stop_ok(&p);
	}
}

static void test_merge(void **state)
{
	(void)state;
	const char *args[] = {"--merge", "5", "--step-base-ms", "1", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b = body_token_prompt(64, 1, 40, 1, STREAM_USAGE);
	const char *bodies[] = {b};
	struct stream_result r;
	long sizes[64], sum = 0, multi = 0; /* multi: short chunks */
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	size_t n = chunk_sizes(&r, sizes, 64);
	for (size_t i = 0; i < n; i++) {
		sum += sizes[i];
		/* every chunk but the last carries at least the 5 steps' tokens */
		multi += i + 1 < n && sizes[i] < 5;
	}
	assert_int_equal(sum, 40);
	assert_true(n >= 2 && n <= 8);
	assert_int_equal(multi, 0);
	assert_true(ends_done(&r));
	stream_result_free(&r);
	free(b);
	sim_stop_ok(&p);
}

struct pauser {
	pid_t pid;
	int done;
};

static int pause_once(void *arg, double t)
{
	struct pauser *ps = arg;
	if (ps->done || t < 0.2)
		return 0;
	ps->done = 1;
	kill(ps->pid, SIGSTOP);
	usleep(150000);
	kill(ps->pid, SIGCONT);
	return 0;
}

/* A loop that falls behind (here: the process is stopped for 150 ms) sends
 * the steps it missed as one merged chunk, and the schedule does not move. */
static void test_late_loop_merges_without_drift(void **state)
{
	(void)state;
	char path[] = "/tmp/tt-sim-late-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	const char *args[] = {"--step-base-ms", "2", "--per-seq-ms", "0", "--per-ctx-token-ns", "0",
			      "--truth", path, NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b = body_token_prompt(32, 1, 300, 1, STREAM_USAGE);
	const char *bodies[] = {b};
	struct stream_result r;
	long sizes[512], biggest = 0;
	struct pauser ps = {p.pid, 0};
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, pause_once, &ps, &r);
	size_t n = chunk_sizes(&r, sizes, 512);
	for (size_t i = 0; i < n; i++)
		if (sizes[i] > biggest)
			biggest = sizes[i];
	assert_true(ps.done);
	assert_true(biggest >= 50); /* ~75 steps of 2 ms in 150 ms */
	assert_int_equal(final_tokens(&r), 300);
	sim_stop_ok(&p);

	struct truth t;
	assert_int_equal(truth_read(path, &t), 0);
	uint64_t prev = 0, decode_steps = 0;
	int big_chunk = 0;
	for (size_t i = 0; i < t.nchunks; i++) {
		big_chunk |= t.chunks[i].count >= 50;
		for (uint32_t k = 0; k < t.chunks[i].count; k++) {
			uint64_t m = t.chunks[i].model_ns[k];
			if (prev) {
				/* every decode step is exactly 2 ms after the last */
				assert_int_equal(m - prev, 2000000u);
				decode_steps++;
			}
			prev = m;
		}
	}
	assert_true(big_chunk);
	assert_int_equal(decode_steps, 299);
	truth_free(&t);
	unlink(path);
	stream_result_free(&r);
	free(b);
}

static void test_max_num_seqs(void **state)
{
	(void)state;
	char path[] = "/tmp/tt-sim-seqs-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	const char *args[] = {"--max-num-seqs", "2", "--step-base-ms", "3", "--truth", path, NULL};
	struct sim_proc p = sim_start_ok(args);
	char *b[4];
	struct stream_result r[4];
	for (int i = 0; i < 4; i++)
		b[i] = body_token_prompt(64, i, 40, 1, STREAM_USAGE);
	struct gauges g = {&p, 0, 0, 0, 0};
	stream_many(&p, "/v1/completions", (const char *const *)b, 4, 1, 30, sample_gauges, &g, r);
	assert_true(g.max_running == 2.0);
	assert_true(g.max_waiting >= 1.0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(final_tokens(&r[i]), 40);
		stream_result_free(&r[i]);
		free(b[i]);
	}
	sim_stop_ok(&p);
	/* the truth log's QUEUE records (version 2): two requests were admitted
	 * by the first step that could take them, two waited for a slot */
	struct truth t;
	int waited = 0, direct = 0;
	assert_int_equal(truth_read(path, &t), 0);
	assert_int_equal(t.nreqs, 4);
	for (size_t i = 0; i < t.nreqs; i++) {
		assert_true(t.reqs[i].admit_ns >= t.reqs[i].arrival_ns);
		if (t.reqs[i].passed_steps >= 30) /* a 40-token request's turn */
			waited++;
		else if (t.reqs[i].passed_steps == 0)
			direct++;
	}
	assert_int_equal(waited, 2);
	assert_int_equal(direct, 2);
	truth_free(&t);
	unlink(path);
}

/* The capacity rule of docs/sim.md 4.4 at small scale: C * (context +
 * max_tokens) <= capacity runs all C at once without preemption; a longer
 * context makes requests wait, for the same reason as the seed's cells. */
static void capacity_case(long context, int conc, double *max_running, double *max_waiting,
			  double *preemptions)
{
	/* 4 x (1024 + 64) = 4352 tokens = 272 blocks */
	const char *args[] = {"--kv-capacity", "4352", "--max-model-len", "2048", "--step-base-ms",
			      "3", "--per-seq-ms", "0", "--per-ctx-token-ns", "0", NULL};
	struct sim_proc p = sim_start_ok(args);
	char **b = calloc((size_t)conc, sizeof *b);
	struct stream_result *r = calloc((size_t)conc, sizeof *r);
	for (int i = 0; i < conc; i++)
		b[i] = body_token_prompt(context, 40 + i, 64, 1, STREAM_USAGE);
	struct gauges g = {&p, 0, 0, 0, 0};
	stream_many(&p, "/v1/completions", (const char *const *)b, (size_t)conc, 1, 30,
		    sample_gauges, &g, r);
	for (int i = 0; i < conc; i++) {
		assert_int_equal(final_tokens(&r[i]), 64);
		stream_result_free(&r[i]);
		free(b[i]);
	}
	free(b);
	free(r);
	*max_running = g.max_running;
	*max_waiting = g.max_waiting;
	*preemptions = metric_now(&p, "vllm:num_preemptions_total");
	sim_stop_ok(&p);
}

static void test_capacity_rule(void **state)
{
	(void)state;
	double run, wait, pre;
	capacity_case(1024, 4, &run, &wait, &pre);   /* 4 x 1088 = 4352: fits */
	assert_true(run == 4.0);
	assert_true(pre == 0.0);
	capacity_case(1100, 4, &run, &wait, &pre);   /* 4 x 1164 > 4352: queued */
	assert_true(run == 3.0);
	assert_true(wait >= 1.0);
	assert_true(pre == 0.0);
}

/* With a profile, a repeated prompt's turnover hold (its measured TTFT)
 * is spent outside the running gauge, as on the seed's real server, whose
 * mean running count sits below C by about TTFT / request time (0.9 at
 * 120K x 1, 1.9 at 120K x 2): the held request has its KV (kv usage > 0)
 * but is neither running nor waiting; once it decodes it is running. */
struct hold_gauges {
	const struct sim_proc *p;
	int held_outside, running_after;
};

static int sample_hold(void *arg, double t)
{
	struct hold_gauges *g = arg;
	(void)t;
	double gen = metric_now(g->p, "vllm:generation_tokens_total");
	double r = metric_now(g->p, "vllm:num_requests_running");
	double w = metric_now(g->p, "vllm:num_requests_waiting");
	double kv = metric_now(g->p, "vllm:kv_cache_usage_perc");
	double gen2 = metric_now(g->p, "vllm:generation_tokens_total");
	/* gen == 1: only the warm-up's token so far, so the request is held */
	if (gen == 1.0 && gen2 == 1.0 && r == 0.0 && w == 0.0 && kv > 0.0)
		g->held_outside = 1;
	if (gen > 1.0 && r == 1.0)
		g->running_after = 1;
	return 0;
}

static void test_turnover_outside_running(void **state)
{
	(void)state;
	const char *args[] = {"--profile", TT_FIXTURES "/profiles/seed-matrix.csv", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *warm = body_token_prompt(122880, 9, 1, 1, STREAM_USAGE);
	char *again = body_token_prompt(122880, 9, 600, 1, STREAM_USAGE);
	const char *b1[] = {warm}, *b2[] = {again};
	struct stream_result r1, r2;
	struct hold_gauges g = {&p, 0, 0};

	assert_int_equal(stream_many(&p, "/v1/completions", b1, 1, 0, 30, NULL, NULL, &r1), 0);
	assert_true(final_tokens(&r1) == 1);
	assert_true(metric_now(&p, "vllm:generation_tokens_total") == 1.0);
	/* the profile's 120K x 1 TTFT is 443 ms: the hold is about 440 ms */
	assert_int_equal(stream_many(&p, "/v1/completions", b2, 1, 0, 30, sample_hold, &g, &r2), 0);
	assert_true(final_tokens(&r2) == 600);
	if (!g.held_outside || !g.running_after)
		fail_msg("held outside the running gauge seen: %d; running while decoding: %d",
			 g.held_outside, g.running_after);
	stream_result_free(&r1);
	stream_result_free(&r2);
	free(warm);
	free(again);
	sim_stop_ok(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_when_kv_full),
		cmocka_unit_test(test_preemption),
		cmocka_unit_test(test_prefix_cache),
		cmocka_unit_test(test_stream_interval),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_spec_decode_seeded),
		cmocka_unit_test(test_late_loop_merges_without_drift),
		cmocka_unit_test(test_max_num_seqs),
		cmocka_unit_test(test_capacity_rule),
		cmocka_unit_test(test_turnover_outside_running),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
