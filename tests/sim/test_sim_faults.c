/* Fault tests: one per fault kind, and the rate / request-number / every
 * selectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_client.h"

#define STREAM_USAGE "\"ignore_eos\":true,\"stream_options\":" \
		     "{\"include_usage\":true,\"continuous_usage_stats\":true}"

static void one_stream(const struct sim_proc *p, long max_tokens, struct stream_result *r)
{
	char *b = body_token_prompt(40, 3, max_tokens, 1, STREAM_USAGE);
	const char *bodies[] = {b};
	stream_many(p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, r);
	free(b);
}

static long last_tokens(const struct stream_result *r)
{
	long last = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].completion_tokens > last)
			last = r->ev[i].completion_tokens;
	return last;
}

static int has_done(const struct stream_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].data && !strcmp(r->ev[i].data, "[DONE]"))
			return 1;
	return 0;
}

static long post_status(const struct sim_proc *p, char **headers)
{
	struct http_reply r;
	assert_int_equal(http_do(p, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":1}", NULL,
				 &r), 0);
	long st = r.status;
	if (st != 200) {
		cJSON *j = cJSON_Parse(r.body);
		assert_non_null(cJSON_GetObjectItem(j, "error"));
		cJSON_Delete(j);
	}
	if (headers)
		*headers = strdup(r.headers);
	http_reply_free(&r);
	return st;
}

static void test_fault_http_status(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "500@req=1", "--fault", "429@req=2", "--fault", "503@req=3",
			      NULL};
	struct sim_proc p = sim_start_ok(args);
	char *h = NULL;
	assert_int_equal(post_status(&p, NULL), 500);
	assert_int_equal(post_status(&p, &h), 429);
	assert_non_null(strstr(h, "Retry-After:"));
	free(h);
	assert_int_equal(post_status(&p, NULL), 503);
	assert_int_equal(post_status(&p, NULL), 200);
	sim_stop_ok(&p);
}

static void pattern(const char *seed, char *out, size_t n)
{
	const char *args[] = {"--fault", "500@rate=0.5", "--seed", seed, NULL};
	struct sim_proc p = sim_start_ok(args);
	for (size_t i = 0; i < n; i++)
		out[i] = post_status(&p, NULL) == 500 ? 'x' : '.';
	out[n] = '\0';
	sim_stop_ok(&p);
}

static void test_fault_rate_and_every(void **state)
{
	(void)state;
	char a[41], b[41], c[41];
	pattern("7", a, 40);
	pattern("7", b, 40);
	pattern("8", c, 40);
	size_t hits = 0;
	for (size_t i = 0; i < 40; i++)
		hits += a[i] == 'x';
	assert_true(hits >= 8 && hits <= 32);
	assert_string_equal(a, b);        /* same seed, same victims */
	assert_string_not_equal(a, c);

	const char *args[] = {"--fault", "503@every=3", NULL};
	struct sim_proc p = sim_start_ok(args);
	for (int i = 1; i <= 6; i++)
		assert_int_equal(post_status(&p, NULL), i % 3 ? 200 : 503);
	sim_stop_ok(&p);
}

static void test_fault_reset(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "reset@req=1,after=5", "--step-base-ms", "2", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 50, &r);
	assert_int_not_equal(r.curl_code, 0);
	assert_false(has_done(&r));
	assert_true(last_tokens(&r) <= 5);
	stream_result_free(&r);
	/* the server carries on */
	one_stream(&p, 5, &r);
	assert_int_equal(r.curl_code, 0);
	assert_int_equal(last_tokens(&r), 5);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_fault_stall(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "stall:0.4@req=1,after=3", "--step-base-ms", "1", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 60, &r);
	assert_int_equal(r.curl_code, 0);
	assert_true(has_done(&r));
	assert_int_equal(last_tokens(&r), 60);
	uint64_t gap = 0;
	size_t at = 0;
	for (size_t i = 1; i < r.n; i++)
		if (r.ev[i].t_ns - r.ev[i - 1].t_ns > gap) {
			gap = r.ev[i].t_ns - r.ev[i - 1].t_ns;
			at = i;
		}
	assert_true(gap >= 350000000u);
	assert_int_equal(r.ev[at - 1].completion_tokens, 3);
	/* what was produced during the stall arrives merged */
	assert_true(r.ev[at].completion_tokens - r.ev[at - 1].completion_tokens > 10);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_fault_malformed(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "malformed@req=1,after=2", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 8, &r);
	int bad = 0;
	for (size_t i = 0; i < r.n; i++) {
		if (!strcmp(r.ev[i].data, "[DONE]"))
			continue;
		cJSON *j = cJSON_Parse(r.ev[i].data);
		if (!j)
			bad++;
		cJSON_Delete(j);
	}
	assert_int_equal(bad, 1);
	assert_true(has_done(&r));
	assert_int_equal(last_tokens(&r), 8);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_fault_error_event(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "error@req=1,after=3", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 20, &r);
	assert_int_equal(r.status, 200);
	assert_true(r.n >= 2);
	assert_string_equal(r.ev[r.n - 1].data, "[DONE]");
	cJSON *j = cJSON_Parse(r.ev[r.n - 2].data);
	cJSON *e = cJSON_GetObjectItem(j, "error");
	assert_non_null(e);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(e, "message")));
	cJSON_Delete(j);
	assert_int_equal(last_tokens(&r), 3);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_fault_slow_headers(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "slowheaders:0.4@req=1", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 3, &r);
	assert_true(r.t_first_byte - r.t_start >= 350000000u);
	assert_int_equal(last_tokens(&r), 3);
	stream_result_free(&r);
	one_stream(&p, 3, &r);
	assert_true(r.t_first_byte - r.t_start < 200000000u);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_fault_no_done(void **state)
{
	(void)state;
	const char *args[] = {"--fault", "nodone@req=1", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct stream_result r;
	one_stream(&p, 6, &r);
	assert_int_equal(r.curl_code, 0);
	assert_int_equal(r.status, 200);
	assert_false(has_done(&r));
	assert_int_equal(last_tokens(&r), 6);
	stream_result_free(&r);
	one_stream(&p, 6, &r);
	assert_true(has_done(&r));
	stream_result_free(&r);
	sim_stop_ok(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fault_http_status),
		cmocka_unit_test(test_fault_rate_and_every),
		cmocka_unit_test(test_fault_reset),
		cmocka_unit_test(test_fault_stall),
		cmocka_unit_test(test_fault_malformed),
		cmocka_unit_test(test_fault_error_event),
		cmocka_unit_test(test_fault_slow_headers),
		cmocka_unit_test(test_fault_no_done),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
