/* Figures on hand-made cells: each definition of docs/metrics.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <string.h>

#include "tokentrace/analysis.h"

#include "testutil.h"

#define MS 1000000LL
#define S 1000000000LL


/* A hand-made decode cell (testutil.h), the manifest's default max_tokens. */
static void cell_init(struct tu_cell *c, int C, struct tt_analysis_opts *o)
{
	tu_cell_init(c, C, 0, -1, o);
}

static void cell_done(struct tu_cell *c)
{
	tu_cell_done(c);
}

/* A request sent at `send`, first token after ttft, then n-1 tokens every gap. */
static void steady(struct tu_cell *c, uint32_t slot, int64_t send, int64_t ttft, int64_t gap, int n,
		   enum tt_finish fin, int64_t cut_at)
{
	static struct tt_chunk ch[20000];
	struct tt_request r;
	int k = 0;

	memset(&r, 0, sizeof r);
	r.slot = slot;
	r.role = TT_ROLE_MEASURED;
	r.t_sched_ns = send;
	r.t_send_ns = send;
	r.finish = fin;
	for (int i = 0; i < n; i++) {
		int64_t t = send + ttft + i * gap;
		if (cut_at > 0 && t >= cut_at)
			break;
		ch[k].t_ns = t;
		ch[k].tokens = 1;
		k++;
	}
	r.n_chunks = (size_t)k;
	r.chunks = ch;
	r.t_end_ns = cut_at > 0 ? cut_at : ch[k - 1].t_ns + MS;
	tt_cell_analyzer_request(c->a, &r);
}

static void test_steady_stream(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 1, NULL);
	/* 1000 tok/s for 30 s, starting before the window: cut at its end. */
	steady(&c, 0, 5 * S, 100 * MS, MS, 30000, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.output_tokens, 10000);
	assert_true(fabs(f.total_tok_s - 1000) < 1e-9);
	assert_true(fabs(f.measured_s - 10) < 1e-12);
	assert_true(fabs(f.tbt_ms.p50 - 1.0) < 0.001);
	assert_true(fabs(f.ttft_ms.p50 - 100) < 1e-9);
	assert_true(fabs(f.per_request_tok_s.p50 - 1000) < 0.01);
	assert_int_equal(f.completed, 0);
	assert_int_equal(f.cut, 1);
	/* No scrapes: active requests from the client side, 1 stream all window. */
	assert_string_equal(f.avg_active_source, "client");
	assert_true(fabs(f.avg_active - 1) < 1e-9);
	assert_int_equal(f.status, TT_STATUS_VALID);
	assert_non_null(strstr(f.reason, "no server metrics"));
	cell_done(&c);
}

static void test_multi_token_chunk_spreads_gap(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	struct tt_request r;
	struct tt_chunk ch[4] = {
		{11 * S, 1}, {11 * S + 2 * MS, 1}, {11 * S + 8 * MS, 3}, {11 * S + 10 * MS, 1}};

	(void)state;
	cell_init(&c, 1, NULL);
	memset(&r, 0, sizeof r);
	r.role = TT_ROLE_MEASURED;
	r.t_sched_ns = r.t_send_ns = 11 * S - 50 * MS;
	r.t_end_ns = 11 * S + 11 * MS;
	r.finish = TT_FINISH_LENGTH;
	r.n_chunks = 4;
	r.chunks = ch;
	tt_cell_analyzer_request(c.a, &r);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	/* Gaps per token: 2 ms; 6 ms over 3 tokens = 2,2,2; 2 ms: five samples of 2 ms. */
	assert_int_equal(f.tbt_ms.n, 5);
	assert_true(fabs(f.tbt_ms.p50 - 2.0) < 0.002);
	assert_true(fabs(f.tbt_ms.max - 2.0) < 0.002);
	assert_int_equal(f.output_tokens, 6);
	assert_int_equal(f.chunks, 4);
	assert_int_equal(f.multi_token_chunks, 1);
	assert_int_equal(f.completed, 1);
	/* per request: 5 tokens after the first chunk over 10 ms */
	assert_true(fabs(f.per_request_tok_s.p50 - 500) < 1e-6);
	cell_done(&c);
}

/* M-reasoning, M-ttfr, M-ttfa: phases by the text each chunk carried. */
static void test_reasoning_phases(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	struct tt_request r;
	/* sent at 11 s - 50 ms: role-only chunk has no tokens (not recorded);
	 * reasoning 1, no-text 2 (keeps reasoning), reasoning 1, both 3
	 * (answer), answer 1, no-text 4 (keeps answer) */
	struct tt_chunk ch[6] = {{11 * S, 1},          {11 * S + 2 * MS, 2}, {11 * S + 4 * MS, 1},
				 {11 * S + 6 * MS, 3}, {11 * S + 8 * MS, 1}, {11 * S + 9 * MS, 4}};
	const uint8_t text[6] = {TT_TEXT_REASONING, 0, TT_TEXT_REASONING,
				 TT_TEXT_REASONING | TT_TEXT_ANSWER, TT_TEXT_ANSWER, 0};
	/* a plain model: answers at once */
	struct tt_chunk ch2[2] = {{12 * S, 1}, {12 * S + MS, 1}};
	const uint8_t text2[2] = {TT_TEXT_ANSWER, TT_TEXT_ANSWER};

	(void)state;
	cell_init(&c, 2, NULL);
	memset(&r, 0, sizeof r);
	r.role = TT_ROLE_MEASURED;
	r.t_sched_ns = r.t_send_ns = 11 * S - 50 * MS;
	r.t_end_ns = 11 * S + 10 * MS;
	r.finish = TT_FINISH_LENGTH;
	r.n_chunks = 6;
	r.chunks = ch;
	r.chunk_text = text;
	tt_cell_analyzer_request(c.a, &r);
	r.slot = 1;
	r.t_sched_ns = r.t_send_ns = 12 * S - 20 * MS;
	r.t_end_ns = 12 * S + 2 * MS;
	r.n_chunks = 2;
	r.chunks = ch2;
	r.chunk_text = text2;
	tt_cell_analyzer_request(c.a, &r);
	/* a request whose text was not recorded counts in neither */
	r.seq = 1;
	r.chunk_text = NULL;
	tt_cell_analyzer_request(c.a, &r);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.text_requests, 2);
	assert_int_equal(f.reasoning_tokens, 4);
	assert_int_equal(f.answer_tokens, 8 + 2);
	assert_int_equal(f.output_tokens, 12 + 2 + 2);
	assert_int_equal(f.ttfr_ms.n, 1);
	assert_true(fabs(f.ttfr_ms.p50 - 50) < 1e-9);
	assert_int_equal(f.ttfa_ms.n, 2);
	assert_true(fabs(f.ttfa_ms.min - 20) < 1e-9);
	assert_true(fabs(f.ttfa_ms.max - 56) < 1e-9);
	cell_done(&c);

	/* no request recorded its text: unknown, not 0 */
	cell_init(&c, 1, NULL);
	steady(&c, 0, 11 * S, 10 * MS, MS, 100, TT_FINISH_LENGTH, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.text_requests, 0);
	assert_int_equal(f.reasoning_tokens, -1);
	assert_int_equal(f.answer_tokens, -1);
	assert_int_equal(f.ttfr_ms.n, 0);
	assert_true(isnan(f.ttfa_ms.p50));
	cell_done(&c);
}

static void test_skip_first_and_window(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	struct tt_analysis_opts o;

	(void)state;
	tt_analysis_opts_init(&o);
	o.skip_first_s = 2;
	o.window_s = 5;
	cell_init(&c, 1, &o);
	steady(&c, 0, 5 * S, 100 * MS, MS, 30000, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.measured_s - 5) < 1e-12);
	assert_int_equal(f.output_tokens, 5000);
	/* a window chosen at report time is not a capture cut short (M-status) */
	assert_int_equal(f.status, TT_STATUS_VALID);
	cell_done(&c);
}

static void scrape(struct tu_cell *c, int64_t t, double running, double waiting)
{
	struct tt_sample s[3] = {{"vllm:num_requests_running", "model_name=\"a\"", running / 2},
				 {"vllm:num_requests_running", "model_name=\"b\"", running / 2},
				 {"vllm:num_requests_waiting", "", waiting}};
	struct tt_scrape sc = {t, 3, s};
	tt_cell_analyzer_scrape(c->a, &sc);
}

static void test_server_gauges_and_queue(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 4, NULL);
	for (int s = 0; s < 4; s++)
		steady(&c, (uint32_t)s, 5 * S, 100 * MS, 5 * MS, 4000, TT_FINISH_CUT, 20 * S);
	/* 40 scrapes in the window: running 4 (summed over label sets), 3 with waiting. */
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, i % 10 == 0 ? 3 : 4, i % 10 == 0 ? 1 : 0);
	scrape(&c, 30 * S, 0, 9); /* outside the window: ignored */
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_string_equal(f.avg_active_source, "server");
	assert_true(fabs(f.avg_active - 3.9) < 1e-9);
	assert_true(fabs(f.waiting_share - 0.1) < 1e-9);
	assert_true(fabs(f.waiting_max - 1) < 1e-9);
	/* waiting in 10 % of scrapes does not persist: not queued (M-status;
	 * tests/unit/test_status.c has the rules) */
	assert_int_equal(f.status, TT_STATUS_VALID);
	{
		int found = 0;
		for (size_t i = 0; i < f.n_evidence; i++)
			if (f.evidence[i].status == TT_STATUS_QUEUED && !f.evidence[i].triggered &&
			    fabs(f.evidence[i].threshold - 0.5) < 1e-12)
				found = 1;
		assert_true(found);
	}
	cell_done(&c);
}

/* A readiness check that timed out: the reason says what readiness needs,
 * for one stream and for several (docs/capture.md, Readiness). */
static void test_readiness_reason(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 1, NULL);
	c.m.cells[0].ready_timed_out = 1;
	steady(&c, 0, 5 * S, 100 * MS, MS, 30000, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	assert_string_equal(f.reason, "the readiness check timed out: the stream never produced "
				      "tokens steadily, with nothing waiting on the server, for the "
				      "readiness time");
	cell_done(&c);
	cell_init(&c, 4, NULL);
	c.m.cells[0].ready_timed_out = 1;
	for (int s = 0; s < 4; s++)
		steady(&c, (uint32_t)s, 5 * S, 100 * MS, 5 * MS, 4000, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	assert_string_equal(f.reason, "the readiness check timed out: the 4 streams never all "
				      "produced tokens, with nothing waiting on the server, for the "
				      "readiness time");
	cell_done(&c);
}

static void test_errors_status(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	struct tt_request r;

	(void)state;
	cell_init(&c, 1, NULL);
	steady(&c, 0, 5 * S, 100 * MS, MS, 30000, TT_FINISH_CUT, 20 * S);
	memset(&r, 0, sizeof r);
	r.role = TT_ROLE_MEASURED;
	r.t_send_ns = 12 * S;
	r.t_end_ns = 12 * S + MS;
	r.finish = TT_FINISH_ERROR;
	r.fail = TT_FAIL_HTTP;
	r.http_status = 500;
	tt_cell_analyzer_request(c.a, &r);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.errors, 1);
	assert_int_equal(f.status, TT_STATUS_ERRORS);
	assert_int_equal(f.output_tokens, 10000); /* figures still computed */
	cell_done(&c);
}

/* M-short: requests the server ended (length or stop) before max_tokens;
 * a request cut at the window's end or one that got all its tokens is not
 * short; the reason carries the count, the finish reasons, the most tokens
 * and the capture's arithmetic. */
static void asking(struct tu_cell *c, int64_t max_tokens)
{
	struct tt_error err;
	c->m.max_tokens = max_tokens;
	tt_cell_analyzer_free(c->a);
	assert_int_equal(tt_cell_analyzer_create(&c->m, 0, NULL, &c->a, &err), TT_OK);
}

static void test_short_outputs(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 2, NULL);
	asking(&c, 1536);
	tt_manifest_set_str(&c.m.cells[0].reason, "1024 prompt + 1536 output tokens = 2560 > "
				"slot context 2048: at most 1024 output tokens per request");
	/* slot 0: three requests stopped at 1024 by a full slot, one by EOS at 700 */
	steady(&c, 0, 9 * S, 50 * MS, 2 * MS, 1024, TT_FINISH_LENGTH, 0);
	steady(&c, 0, 11 * S + 100 * MS, 50 * MS, 2 * MS, 1024, TT_FINISH_LENGTH, 0);
	steady(&c, 0, 13 * S + 200 * MS, 50 * MS, 2 * MS, 1024, TT_FINISH_LENGTH, 0);
	steady(&c, 0, 15 * S + 300 * MS, 50 * MS, 2 * MS, 700, TT_FINISH_STOP, 0);
	/* slot 1: all 1536 tokens, then one cut at the window's end */
	steady(&c, 1, 9 * S, 50 * MS, 2 * MS, 1536, TT_FINISH_LENGTH, 0);
	steady(&c, 1, 12 * S + 200 * MS, 50 * MS, 2 * MS, 1536, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.ended, 5);
	assert_int_equal(f.short_outputs, 4);
	assert_int_equal(f.short_length, 3);
	assert_int_equal(f.short_stop, 1);
	assert_int_equal(f.short_max_tokens, 1024);
	assert_int_equal(f.status, TT_STATUS_SHORT);
	assert_string_equal(tt_status_name(f.status), "Short outputs");
	assert_string_equal(tt_status_key(f.status), "short_outputs");
	assert_string_equal(f.reason, "4 of 5 requests ended before the 1536 tokens asked "
				      "(finish length: 3, stop: 1; at most 1024 tokens): 1024 prompt + "
				      "1536 output tokens = 2560 > slot context 2048: at most 1024 "
				      "output tokens per request");
	cell_done(&c);

	/* every request got its tokens: Valid, the check listed untriggered */
	cell_init(&c, 1, NULL);
	asking(&c, 1536);
	steady(&c, 0, 9 * S, 50 * MS, 2 * MS, 1536, TT_FINISH_LENGTH, 0);
	steady(&c, 0, 12 * S + 200 * MS, 50 * MS, 2 * MS, 1536, TT_FINISH_LENGTH, 0);
	steady(&c, 0, 15 * S + 400 * MS, 50 * MS, 2 * MS, 1536, TT_FINISH_CUT, 20 * S);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.short_outputs, 0);
	assert_int_equal(f.status, TT_STATUS_VALID);
	{
		int listed = 0;
		for (size_t i = 0; i < f.n_evidence; i++)
			listed |= f.evidence[i].status == TT_STATUS_SHORT && !f.evidence[i].triggered;
		assert_true(listed);
	}
	cell_done(&c);
}

static void test_over_capacity_and_not_run(void **state)
{
	struct tt_manifest m;
	struct tt_cell_analyzer *a;
	struct tt_cell_figures f;
	struct tt_error err;
	size_t i0, i1;

	(void)state;
	tt_manifest_init(&m);
	tt_manifest_add_cell(&m, TT_PHASE_DECODE, 122880, 128, &i0);
	m.cells[i0].state = TT_CELL_OVER_CAPACITY;
	tt_manifest_set_str(&m.cells[i0].reason, "128 x (122880 + 4096) = 16252928 > 1000 KV tokens");
	tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 1, &i1);
	m.cells[i1].state = TT_CELL_RUNNING;
	assert_int_equal(tt_cell_analyzer_create(&m, i0, NULL, &a, &err), TT_OK);
	tt_cell_analyzer_finish(a, NULL, &f);
	tt_cell_analyzer_free(a);
	assert_int_equal(f.status, TT_STATUS_OVER_CAPACITY);
	assert_non_null(strstr(f.reason, "16252928"));
	assert_true(isnan(f.total_tok_s));
	assert_int_equal(tt_cell_analyzer_create(&m, i1, NULL, &a, &err), TT_OK);
	tt_cell_analyzer_finish(a, NULL, &f);
	tt_cell_analyzer_free(a);
	assert_int_equal(f.status, TT_STATUS_NOT_RUN);
	assert_string_equal(tt_status_name(TT_STATUS_QUEUED), "Requests queued");
	tt_manifest_release(&m);
}

static void test_percentile_interpolation(void **state)
{
	double v[] = {1, 2, 3, 4};
	(void)state;
	assert_true(fabs(tt_percentile_sorted(v, 4, 50) - 2.5) < 1e-12);
	assert_true(fabs(tt_percentile_sorted(v, 4, 90) - 3.7) < 1e-12);
	assert_true(fabs(tt_percentile_sorted(v, 4, 0) - 1) < 1e-12);
	assert_true(fabs(tt_percentile_sorted(v, 1, 99) - 1) < 1e-12);
	assert_true(isnan(tt_percentile_sorted(v, 0, 50)));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steady_stream),
		cmocka_unit_test(test_multi_token_chunk_spreads_gap),
		cmocka_unit_test(test_skip_first_and_window),
		cmocka_unit_test(test_server_gauges_and_queue),
		cmocka_unit_test(test_readiness_reason),
		cmocka_unit_test(test_errors_status),
		cmocka_unit_test(test_short_outputs),
		cmocka_unit_test(test_over_capacity_and_not_run),
		cmocka_unit_test(test_percentile_interpolation),
		cmocka_unit_test(test_reasoning_phases),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
