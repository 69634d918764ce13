/* Calibration: with the seed profile, short fixed-concurrency decode loads
 * land within 5 % of the profile's time between tokens and total tok/s, and
 * a cold prefill within 5 % of its prompt tok/s.  Figures are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_client.h"
#include "tokentrace/profile.h"

#define SEED TT_FIXTURES "/profiles/seed-matrix.csv"
#define WARM_S 0.5
#define WINDOW_S 2.0

static struct tt_profile *prof;

static int setup(void **state)
{
	struct tt_error err;
	(void)state;
	if (tt_profile_load(SEED, &prof, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tt_profile_free(prof);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* completion_tokens of the last event at or before t */
static long cum_at(const struct stream_result *r, uint64_t t)
{
	long c = 0;
	for (size_t i = 0; i < r->n && r->ev[i].t_ns <= t; i++)
		if (r->ev[i].completion_tokens >= 0)
			c = r->ev[i].completion_tokens;
	return c;
}

struct window {
	const struct stream_result *r;
	int n;
};

/* Ends the load once every stream has been producing for WARM_S + WINDOW_S. */
static int window_done(void *arg, double elapsed)
{
	const struct window *w = arg;
	uint64_t last_start = 0;
	(void)elapsed;
	for (int i = 0; i < w->n; i++) {
		if (!w->r[i].n)
			return 0;
		if (w->r[i].ev[0].t_ns > last_start)
			last_start = w->r[i].ev[0].t_ns;
	}
	return now_ns() > last_start + (uint64_t)((WARM_S + WINDOW_S + 0.05) * 1e9);
}

/* Runs the load; returns the median time between tokens (ms) and the
 * total tok/s over the window. */
static void run_load(int64_t ctx, int conc, double *tbt_ms, double *total_tok_s);

static void decode_point(const char *ctx_s, int conc)
{
	int64_t ctx = tt_parse_tokens(ctx_s);
	const struct tt_profile_point *pt = tt_profile_find(prof, TT_PHASE_DECODE, ctx, conc);
	assert_non_null(pt);
	double med, total;
	run_load(ctx, conc, &med, &total);
	double e_tbt = med / pt->tbt_ms - 1, e_tot = total / pt->total_tok_s - 1;
	printf("calibration decode %5s x %3d: tbt %.3f ms (profile %.1f, %+.1f%%)  "
	       "total %.0f tok/s (profile %.0f, %+.1f%%)\n", ctx_s, conc, med, pt->tbt_ms,
	       100 * e_tbt, total, pt->total_tok_s, 100 * e_tot);
	assert_true(fabs(e_tbt) <= 0.05);
	assert_true(fabs(e_tot) <= 0.05);
}

static void run_load(int64_t ctx, int conc, double *tbt_ms, double *total_tok_s)
{
	const char *args[] = {"--profile", SEED, "--model", "sim", NULL};
	struct sim_proc p;
	assert_int_equal(sim_spawn(&p, args), 0);

	/* a scout fills the prefix cache, as the reference tool does */
	char *scout = body_token_prompt((long)ctx, conc, 1, 0, "\"ignore_eos\":true");
	struct http_reply hr;
	assert_int_equal(http_do(&p, "/v1/completions", scout, NULL, &hr), 0);
	assert_int_equal(hr.status, 200);
	http_reply_free(&hr);
	free(scout);

	char *body = body_token_prompt((long)ctx, conc, 4096, 1,
		"\"ignore_eos\":true,\"stream_options\":{\"include_usage\":true,"
		"\"continuous_usage_stats\":true}");
	const char **bodies = calloc((size_t)conc, sizeof *bodies);
	struct stream_result *r = calloc((size_t)conc, sizeof *r);
	for (int i = 0; i < conc; i++)
		bodies[i] = body;
	struct window w = {r, conc};
	stream_many(&p, "/v1/completions", bodies, (size_t)conc, 0, 20, window_done, &w, r);
	assert_int_equal(sim_terminate(&p), 0);

	uint64_t all_started = 0;
	for (int i = 0; i < conc; i++) {
		assert_int_equal(r[i].status, 200);
		assert_true(r[i].n > 0);
		if (r[i].ev[0].t_ns > all_started)
			all_started = r[i].ev[0].t_ns;
	}
	uint64_t t0 = all_started + (uint64_t)(WARM_S * 1e9);
	uint64_t t1 = t0 + (uint64_t)(WINDOW_S * 1e9);
	long tokens = 0;
	double *tbt = calloc((size_t)conc, sizeof *tbt);
	for (int i = 0; i < conc; i++) {
		tokens += cum_at(&r[i], t1) - cum_at(&r[i], t0);
		size_t a = 0, b = 0;
		int have = 0;
		for (size_t k = 0; k < r[i].n; k++) {
			if (r[i].ev[k].t_ns < t0 || r[i].ev[k].t_ns > t1 ||
			    r[i].ev[k].completion_tokens < 0)
				continue;
			if (!have)
				a = k;
			b = k;
			have = 1;
		}
		assert_true(have && r[i].ev[b].completion_tokens > r[i].ev[a].completion_tokens);
		tbt[i] = (double)(r[i].ev[b].t_ns - r[i].ev[a].t_ns) / 1e6 /
			 (double)(r[i].ev[b].completion_tokens - r[i].ev[a].completion_tokens);
	}
	qsort(tbt, (size_t)conc, sizeof *tbt, cmp_double);
	double med = conc % 2 ? tbt[conc / 2] : (tbt[conc / 2 - 1] + tbt[conc / 2]) / 2;
	*tbt_ms = med;
	*total_tok_s = (double)tokens / WINDOW_S;
	for (int i = 0; i < conc; i++)
		stream_result_free(&r[i]);
	free(r);
	free(bodies);
	free(body);
	free(tbt);
}

static void prefill_point(const char *ctx_s)
{
	int64_t ctx = tt_parse_tokens(ctx_s);
	const struct tt_profile_point *pt = tt_profile_find(prof, TT_PHASE_PREFILL, ctx, 1);
	assert_non_null(pt);
	const char *args[] = {"--profile", SEED, NULL};
	struct sim_proc p;
	assert_int_equal(sim_spawn(&p, args), 0);
	/* a warm-up request first, as against a real server: the first request
	 * of a fresh process pays page faults the model knows nothing of */
	char *warm = body_token_prompt(2048, 98, 1, 0, "\"ignore_eos\":true");
	struct http_reply hr;
	assert_int_equal(http_do(&p, "/v1/completions", warm, NULL, &hr), 0);
	http_reply_free(&hr);
	free(warm);
	/* three cold prompts, the median TTFT: one cold prefill is a single
	 * sample of ~60 ms, and a busy machine can add milliseconds to it */
	double ttfts[3];
	for (int k = 0; k < 3; k++) {
		char *body = body_token_prompt((long)ctx, 99 + k, 1, 1, "\"ignore_eos\":true");
		const char *bodies[] = {body};
		struct stream_result r;
		stream_many(&p, "/v1/completions", bodies, 1, 0, 20, NULL, NULL, &r);
		assert_int_equal(r.status, 200);
		assert_true(r.n >= 1);
		ttfts[k] = (double)(r.ev[0].t_ns - r.t_start) / 1e9;
		stream_result_free(&r);
		free(body);
	}
	assert_int_equal(sim_terminate(&p), 0);
	qsort(ttfts, 3, sizeof ttfts[0], cmp_double);
	double ttft = ttfts[1];
	double rate = (double)ctx / ttft, e = rate / pt->total_tok_s - 1;
	printf("calibration prefill %5s: %.0f tok/s, TTFT %.1f ms (profile %.0f, %+.1f%%)\n", ctx_s,
	       rate, ttft * 1e3, pt->total_tok_s, 100 * e);
	assert_true(fabs(e) <= 0.05);
}

/* Between measured cells the load follows the interpolated model, which
 * lies between its neighbours. */
static void test_decode_between_cells(void **state)
{
	(void)state;
	double med, total, model = tt_profile_tbt_ms(prof, 12288, 24);
	run_load(12288, 24, &med, &total);
	printf("calibration decode   12K x  24: tbt %.3f ms (model %.3f, %+.1f%%), total %.0f tok/s\n",
	       med, model, 100 * (med / model - 1), total);
	assert_true(model > tt_profile_tbt_ms(prof, 8192, 16));
	assert_true(model < tt_profile_tbt_ms(prof, 16384, 32));
	assert_true(fabs(med / model - 1) <= 0.05);
	assert_true(fabs(total / (24 * 1000.0 / model) - 1) <= 0.05);
}

static void test_decode_8k_1(void **state) { (void)state; decode_point("8K", 1); }
static void test_decode_8k_16(void **state) { (void)state; decode_point("8K", 16); }
static void test_decode_8k_128(void **state) { (void)state; decode_point("8K", 128); }
static void test_decode_16k_64(void **state) { (void)state; decode_point("16K", 64); }
static void test_decode_32k_8(void **state) { (void)state; decode_point("32K", 8); }
static void test_decode_64k_4(void **state) { (void)state; decode_point("64K", 4); }
static void test_prefill_8k(void **state) { (void)state; prefill_point("8K"); }
static void test_prefill_64k(void **state) { (void)state; prefill_point("64K"); }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_8k_1),
		cmocka_unit_test(test_decode_8k_16),
		cmocka_unit_test(test_decode_8k_128),
		cmocka_unit_test(test_decode_16k_64),
		cmocka_unit_test(test_decode_32k_8),
		cmocka_unit_test(test_decode_64k_4),
		cmocka_unit_test(test_decode_between_cells),
		cmocka_unit_test(test_prefill_8k),
		cmocka_unit_test(test_prefill_64k),
	};
	return tt_cmocka_main(argc, argv, tests, setup, teardown);
}
