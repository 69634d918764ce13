/* Status rules on hand-made cells (docs/metrics.md M-status, M-queue):
 * Requests queued from persistent evidence, never from one scrape or from
 * turnover; from the client's requests in flight when the server's slots
 * are known, with or without server metrics; Window cut short only for
 * the window the capture recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tokentrace/analysis.h"

#include "testutil.h"

#define MS 1000000LL
#define S 1000000000LL

/* A hand-made decode cell (testutil.h); slots > 0: the run recorded the
 * server's slot count; outputs of any length (M-short: not judged). */
static void cell_init(struct tu_cell *c, int C, int slots, const struct tt_analysis_opts *o)
{
	tu_cell_init(c, C, slots, 0, o);
}

static void cell_done(struct tu_cell *c)
{
	tu_cell_done(c);
}

/* One request: sent at send, first token ttft later, n tokens gap apart,
 * ended 1 ms after its last token (or cut at cut_at). */
static int64_t request(struct tu_cell *c, uint32_t slot, int64_t send, int64_t ttft, int64_t gap,
		       int n, int64_t cut_at)
{
	static struct tt_chunk ch[4096];
	struct tt_request r;
	int k = 0;

	memset(&r, 0, sizeof r);
	r.slot = slot;
	r.role = TT_ROLE_MEASURED;
	r.t_sched_ns = r.t_send_ns = send;
	r.finish = TT_FINISH_LENGTH;
	for (int i = 0; i < n; i++) {
		int64_t t = send + ttft + i * gap;
		if (cut_at > 0 && t >= cut_at) {
			r.finish = TT_FINISH_CUT;
			break;
		}
		ch[k].t_ns = t;
		ch[k++].tokens = 1;
	}
	r.n_chunks = (size_t)k;
	r.chunks = ch;
	r.t_end_ns = r.finish == TT_FINISH_CUT ? cut_at : ch[k - 1].t_ns + MS;
	tt_cell_analyzer_request(c->a, &r);
	return r.t_end_ns;
}

/* A closed loop of C workers from 5 s to the window's end: each request
 * waits `wait` (0 for none) before its first token, then n tokens. */
static void closed_loop(struct tu_cell *c, int C, int64_t wait, int64_t gap, int n)
{
	for (int w = 0; w < C; w++) {
		int64_t t = 5 * S + w * MS;
		while (t < 20 * S)
			t = request(c, (uint32_t)w, t, wait + gap, gap, n, 20 * S);
	}
}

static void scrape(struct tu_cell *c, int64_t t, double running, double waiting)
{
	struct tt_sample s[2] = {{"vllm:num_requests_running", "", running},
				 {"vllm:num_requests_waiting", "", waiting}};
	struct tt_scrape sc = {t, 2, s};
	tt_cell_analyzer_scrape(c->a, &sc);
}

static int evidence_of(const struct tt_cell_figures *f, const char *signal, double *value)
{
	for (size_t i = 0; i < f->n_evidence; i++)
		if (strcmp(f->evidence[i].signal, signal) == 0) {
			*value = f->evidence[i].value;
			return f->evidence[i].triggered;
		}
	fail_msg("no evidence '%s'", signal);
	return 0;
}

/* The seed's 8K x 64 at 1024 tokens: one scrape of 40 caught a finished
 * request's replacement waiting for the next step.  It was "Requests
 * queued: waiting in 5% of scrapes"; one scrape never decides. */
static void test_one_scrape_is_not_a_queue(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 4, -1, NULL);
	closed_loop(&c, 4, 0, 5 * MS, 100);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, i == 7 ? 1 : 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.waiting_share - 0.025) < 1e-9);
	assert_int_equal(f.waiting_scrapes, 1);
	assert_int_equal(f.status, TT_STATUS_VALID);
	cell_done(&c);
	/* two scrapes of 20 (10 %): still not persistent */
	cell_init(&c, 4, -1, NULL);
	closed_loop(&c, 4, 0, 5 * MS, 100);
	for (int i = 0; i < 20; i++)
		scrape(&c, 10 * S + i * 500 * MS, 4, i == 3 || i == 11 ? 1 : 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_VALID);
	cell_done(&c);
}

/* A queue that lasts: waiting 1 in every scrape while 4 of 5 workers run. */
static void test_persistent_waiting_is_queued(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	double v = NAN;

	(void)state;
	cell_init(&c, 5, -1, NULL);
	/* each request waits 125 ms (a fifth of a 4-slot turn of 0.5 s) */
	closed_loop(&c, 5, 125 * MS, 5 * MS, 100);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, 1);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	assert_true(fabs(f.waiting_share - 1) < 1e-9);
	/* Little: 1 waiting / (5 / 0.63 s sent per s) = 126 ms = 25 steps of 5 ms */
	assert_true(f.queue_wait_steps > 20 && f.queue_wait_steps < 30);
	assert_true(evidence_of(&f, "mean wait per request, decode steps", &v));
	assert_non_null(strstr(f.reason, "waiting requests in 100% of scrapes"));
	assert_non_null(strstr(f.reason, "decode steps on average"));
	cell_done(&c);
}

/* Turnover: many short requests keep the waiting gauge above 0 in most
 * scrapes, but each waits less than a decode step: not a queue. */
static void test_turnover_is_not_a_queue(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	double v = NAN;

	(void)state;
	cell_init(&c, 4, -1, NULL);
	/* the same turnover kept the capture's readiness check from passing
	 * (it needs the gauge at 0): the window's gauge judges, not readiness */
	c.m.cells[0].ready_timed_out = 1;
	/* 4-token requests of 5 ms steps: 21 ms each, 190 sent per second */
	closed_loop(&c, 4, 0, 5 * MS, 4);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, i % 5 < 3 ? 1 : 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.waiting_share - 0.6) < 1e-9);
	/* 0.6 waiting / 190 per s = 3.2 ms = 0.63 of a step */
	assert_false(evidence_of(&f, "mean wait per request, decode steps", &v));
	assert_true(v > 0.55 && v < 0.7);
	assert_true(evidence_of(&f, "share of scrapes with waiting > 0", &v));
	assert_int_equal(f.status, TT_STATUS_VALID);
	cell_done(&c);
	/* four times the waiting: each waits 2.5 steps, a queue */
	cell_init(&c, 4, -1, NULL);
	closed_loop(&c, 4, 0, 5 * MS, 4);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, i % 5 < 3 ? 4 : 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	cell_done(&c);
}

/* llama-server without --metrics, 8 streams on 4 slots: was Valid. */
static void test_slots_without_metrics(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 8, 4, NULL);
	/* each request waits a whole request's time for a slot */
	closed_loop(&c, 8, 505 * MS, 5 * MS, 100);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_false(f.has_server_metrics);
	assert_int_equal(f.slots, 4);
	assert_true(f.over_slots_share > 0.99);
	assert_true(f.over_slots_requests > 20);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	assert_non_null(strstr(f.reason, "8 requests in flight on the server's 4 slots"));
	assert_non_null(strstr(f.reason, "no server metrics: judged from the client"));
	cell_done(&c);
	/* 4 on 4: Valid, and the reason says what judged it */
	cell_init(&c, 4, 4, NULL);
	closed_loop(&c, 4, 0, 5 * MS, 100);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(f.over_slots_share == 0);
	assert_int_equal(f.over_slots_requests, 0);
	assert_int_equal(f.status, TT_STATUS_VALID);
	assert_string_equal(f.reason, "no server metrics: queueing judged from the client's requests "
				      "in flight against the server's 4 slots, and the readiness check");
	cell_done(&c);
}

/* With metrics, the slots still decide when the gauge does not say so. */
static void test_slots_with_metrics(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 8, 4, NULL);
	closed_loop(&c, 8, 505 * MS, 5 * MS, 100);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, 4);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_QUEUED);
	assert_null(strstr(f.reason, "no server metrics"));
	/* every check of the cell fits its 12 evidence entries, with room */
	{
		double v;
		assert_true(f.n_evidence < sizeof f.evidence / sizeof *f.evidence);
		assert_false(evidence_of(&f, "requests with a first token", &v));
	}
	cell_done(&c);
}

/* --skip-first / --window at report time cut requests (M-window) but do
 * not make the capture's window short. */
static void test_report_window_is_not_cut_short(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;
	struct tt_analysis_opts o;

	(void)state;
	tt_analysis_opts_init(&o);
	o.skip_first_s = 2;
	o.window_s = 5;
	cell_init(&c, 1, -1, &o);
	closed_loop(&c, 1, 0, MS, 4000);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.measured_s - 5) < 1e-12);
	assert_int_equal(f.status, TT_STATUS_VALID);
	cell_done(&c);
	/* a capture that stopped after 6 s of 10: cut short, with or without
	 * a report-time window */
	for (int pass = 0; pass < 2; pass++) {
		tt_manifest_init(&c.m);
		c.m.duration_s = 10;
		c.m.slots = -1;
		c.m.max_tokens = 0;
		{
			size_t idx;
			struct tt_error err;
			assert_int_equal(tt_manifest_add_cell(&c.m, TT_PHASE_DECODE, 8192, 1, &idx),
					 TT_OK);
			c.m.cells[idx].state = TT_CELL_DONE;
			tt_manifest_set_str(&c.m.cells[idx].trace, "cells/x.ttz");
			c.m.cells[idx].window_start_ns = 10 * S;
			c.m.cells[idx].window_end_ns = 16 * S;
			assert_int_equal(tt_cell_analyzer_create(&c.m, idx, pass ? &o : NULL, &c.a, &err),
					 TT_OK);
		}
		closed_loop(&c, 1, 0, MS, 4000);
		tt_cell_analyzer_finish(c.a, NULL, &f);
		assert_int_equal(f.status, TT_STATUS_CUT_SHORT);
		assert_string_equal(f.reason, "the capture measured 6.0 s of 10.0 s planned");
		cell_done(&c);
	}
}

/* Issue 24.4: a cell stopped with Ctrl-C is shown as interrupted, not by
 * what its cut window happened to look like (it read "Requests queued"):
 * Window cut short, the reason saying it was interrupted; one stopped
 * before its window is Not run, interrupted. */
static void test_interrupted_is_not_queued(void **state)
{
	struct tu_cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c, 5, -1, NULL);
	c.m.cells[0].state = TT_CELL_INTERRUPTED;
	tt_manifest_set_str(&c.m.cells[0].reason, "stopped by the user");
	closed_loop(&c, 5, 125 * MS, 5 * MS, 100);
	for (int i = 0; i < 40; i++)
		scrape(&c, 10 * S + i * 250 * MS, 4, 1);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_CUT_SHORT);
	assert_non_null(strstr(f.reason, "interrupted"));
	assert_non_null(strstr(f.reason, "stopped by the user"));
	cell_done(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_scrape_is_not_a_queue),
		cmocka_unit_test(test_persistent_waiting_is_queued),
		cmocka_unit_test(test_turnover_is_not_a_queue),
		cmocka_unit_test(test_slots_without_metrics),
		cmocka_unit_test(test_slots_with_metrics),
		cmocka_unit_test(test_report_window_is_not_cut_short),
		cmocka_unit_test(test_interrupted_is_not_queued),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
