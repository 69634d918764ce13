/* Goodput under SLOs and tails (docs/metrics.md M-slo, M-goodput, M-stall)
 * on hand-built requests with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/slo.h"

#define MS 1000000LL
#define S 1000000000LL

static void test_parse(void **state)
{
	struct tt_slo s;
	struct tt_error err;
	char text[128];

	(void)state;
	tt_slo_init(&s);
	assert_false(tt_slo_active(&s));
	assert_int_equal(tt_slo_parse("ttft=500ms,tbt=50ms", &s, &err), TT_OK);
	assert_true(s.ttft_ms == 500 && s.tbt_ms == 50 && s.e2e_ms <= 0);
	assert_true(s.tbt_pct == 99 && s.attain == 0.9);
	assert_int_equal(tt_slo_parse("tbt=0.05s@p90,e2e=20s,attain=95", &s, &err), TT_OK);
	assert_true(s.tbt_ms == 50 && s.tbt_pct == 90 && s.e2e_ms == 20000 && s.attain == 0.95);
	assert_true(s.ttft_ms <= 0);
	tt_slo_format(&s, text, sizeof text);
	assert_string_equal(text, "tbt=50ms@p90,e2e=20000ms,attain=95");
	assert_int_equal(tt_slo_parse("ttft=250", &s, &err), TT_OK); /* plain number: ms */
	assert_true(s.ttft_ms == 250);
	/* errors name the part and leave s alone */
	assert_int_equal(tt_slo_parse("ttft=soon", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "'ttft=soon'"));
	assert_true(s.ttft_ms == 250);
	assert_int_equal(tt_slo_parse("tpot=5ms", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "unknown key"));
	assert_int_equal(tt_slo_parse("ttft=1s,ttft=2s", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "twice"));
	assert_int_equal(tt_slo_parse("attain=90", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "no bound"));
	assert_int_equal(tt_slo_parse("tbt=5ms@p0", &s, &err), TT_FAILED);
	assert_int_equal(tt_slo_parse("attain=0", &s, &err), TT_FAILED);
	assert_int_equal(tt_slo_parse("ttft=-1ms", &s, &err), TT_FAILED);
	assert_int_equal(tt_slo_parse("", &s, &err), TT_FAILED);
}

/* A request sent at 0: first token at ttft, then 99 gaps of 10 ms and one
 * of 60 ms (the 50th gap). */
static struct tt_chunk chunks[128];
static void make_request(struct tt_request *r, int64_t send, int64_t ttft, enum tt_finish fin)
{
	int64_t t = send + ttft;

	memset(r, 0, sizeof *r);
	r->role = TT_ROLE_MEASURED;
	r->t_sched_ns = r->t_send_ns = send;
	r->finish = fin;
	r->prompt_tokens = r->cached_tokens = -1;
	chunks[0] = (struct tt_chunk){t, 1};
	for (int i = 1; i <= 100; i++) {
		t += i == 50 ? 60 * MS : 10 * MS;
		chunks[i] = (struct tt_chunk){t, 1};
	}
	r->n_chunks = 101;
	r->chunks = chunks;
	r->t_end_ns = t + MS;
}

/* Issue 24.5: "ttft=100ms@p99" (the way vLLM and GuideLLM users write a
 * tail bound) is the per-request bound with attain=99, not "not a positive
 * duration"; two quantiles, or a quantile against attain=, are refused
 * naming attain=. */
static void test_parse_at_quantile(void **state)
{
	struct tt_slo s;
	struct tt_error err;
	char text[128];

	(void)state;
	assert_int_equal(tt_slo_parse("ttft=100ms@p99", &s, &err), TT_OK);
	assert_true(s.ttft_ms == 100);
	assert_true(fabs(s.attain - 0.99) < 1e-12);
	tt_slo_format(&s, text, sizeof text);
	assert_string_equal(text, "ttft=100ms,attain=99");
	assert_int_equal(tt_slo_parse("ttft=1s@95,e2e=20s@p95,tbt=50ms@p90", &s, &err), TT_OK);
	assert_true(fabs(s.attain - 0.95) < 1e-12 && s.tbt_pct == 90 && s.e2e_ms == 20000);
	assert_int_equal(tt_slo_parse("ttft=1s@p99,attain=99", &s, &err), TT_OK);
	assert_int_equal(tt_slo_parse("ttft=1s@p99,e2e=2s@p90", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "attain="));
	assert_int_equal(tt_slo_parse("ttft=1s@p99,attain=90", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "attain"));
	assert_int_equal(tt_slo_parse("ttft=1s@p0", &s, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "attain=99"));
}

static void test_judge_request(void **state)
{
	struct tt_slo s;
	struct tt_slo_judge *j;
	struct tt_slo_verdict v;
	struct tt_request r;
	struct tt_error err;

	(void)state;
	tt_slo_init(&s);
	s.ttft_ms = 200;
	s.tbt_ms = 11;
	assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
	make_request(&r, 0, 200 * MS, TT_FINISH_STOP);
	assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
	/* p99 of 99 x 10 ms and 1 x 60 ms: rank 98.01 -> 10 + 0.01 x 50 = 10.5 ms */
	assert_true(fabs(v.tbt_ms - 10.5) < 1e-9);
	assert_true(v.ttft_ms == 200); /* the bound is inclusive */
	assert_int_equal(v.tokens, 101);
	assert_true(fabs(v.e2e_ms - (200 + 99 * 10 + 60 + 1)) < 1e-9);
	assert_true(v.meets);
	make_request(&r, 0, 201 * MS, TT_FINISH_STOP);
	assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
	assert_false(v.meets); /* TTFT 201 ms > 200 ms */
	make_request(&r, 0, 100 * MS, TT_FINISH_ERROR);
	assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
	assert_false(v.meets); /* a failed request never meets */
	tt_slo_judge_free(j);

	/* p100 (the maximum) sees the 60 ms gap */
	s.tbt_ms = 50;
	s.tbt_pct = 100;
	assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
	make_request(&r, 0, 100 * MS, TT_FINISH_LENGTH);
	assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
	assert_true(fabs(v.tbt_ms - 60) < 1e-9);
	assert_false(v.meets);
	/* a 3-token chunk 30 ms after the last spreads to three 10 ms gaps */
	{
		struct tt_chunk ch[2] = {{100 * MS, 1}, {130 * MS, 3}};
		r.chunks = ch;
		r.n_chunks = 2;
		r.t_end_ns = 131 * MS;
		s.tbt_pct = 50;
		tt_slo_judge_free(j);
		assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
		assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
		assert_true(fabs(v.tbt_ms - 10) < 1e-9);
		assert_int_equal(v.tokens, 4);
		assert_true(v.meets);
	}
	/* no token at all: a TTFT bound is missed */
	r.n_chunks = 0;
	s.ttft_ms = 1000;
	s.tbt_ms = 0;
	tt_slo_judge_free(j);
	assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
	assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
	assert_true(isnan(v.ttft_ms));
	assert_false(v.meets);
	tt_slo_judge_free(j);
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The per-request quantile (selected, not sorted) equals M-pct over the
 * sorted gaps, on random requests with repeated values, any length. */
static void test_judge_quantile_matches_sorted(void **state)
{
	static struct tt_chunk ch[700];
	static double sorted[700];
	static const double pcts[] = {0.5, 10, 50, 90, 99, 99.9, 100};
	unsigned seed = 12345;

	(void)state;
	for (int trial = 0; trial < 300; trial++) {
		size_t n = 2 + (size_t)(trial * 7 % 600);
		struct tt_request r;
		int64_t t = 0;
		memset(&r, 0, sizeof r);
		r.finish = TT_FINISH_STOP;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			t += 1000 * (1 + (int64_t)((seed >> 16) % (trial % 3 ? 50 : 4)));
			ch[i] = (struct tt_chunk){t, 1};
			if (i)
				sorted[i - 1] = (double)(ch[i].t_ns - ch[i - 1].t_ns);
		}
		r.chunks = ch;
		r.n_chunks = n;
		r.t_end_ns = t;
		qsort(sorted, n - 1, sizeof *sorted, cmp_d);
		for (size_t k = 0; k < sizeof pcts / sizeof *pcts; k++) {
			struct tt_slo s;
			struct tt_slo_judge *j;
			struct tt_slo_verdict v;
			struct tt_error err;
			double want = tt_percentile_sorted(sorted, n - 1, pcts[k]) / 1e6;
			tt_slo_init(&s);
			s.tbt_ms = 1000;
			s.tbt_pct = pcts[k];
			assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
			assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
			if (fabs(v.tbt_ms - want) > 1e-12 * want)
				fail_msg("n %zu p%g: got %.15g want %.15g", n, pcts[k], v.tbt_ms, want);
			tt_slo_judge_free(j);
			/* the one-pass decision agrees at the boundary: equal meets,
			 * a hair less does not */
			s.tbt_ms = want;
			assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
			assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
			if (!v.meets)
				fail_msg("n %zu p%g: bound %.15g equal to the quantile missed", n,
					 pcts[k], want);
			tt_slo_judge_free(j);
			s.tbt_ms = want - 1e-7; /* 0.1 ns less */
			assert_int_equal(tt_slo_judge_create(&s, &j, &err), TT_OK);
			assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
			if (v.meets)
				fail_msg("n %zu p%g: bound below the quantile %.15g met", n, pcts[k],
					 want);
			tt_slo_judge_free(j);
		}
	}
}

/* A decode cell, window [10 s, 20 s): ten requests end in it (8 meet, one
 * too slow to its first token, one failed), one is cut, one ended before. */
static void run_cell(double attain, struct tt_cell_figures *f)
{
	struct tt_manifest m;
	struct tt_cell_analyzer *a;
	struct tt_analysis_opts o;
	struct tt_request r;
	struct tt_error err;
	size_t idx;

	tt_manifest_init(&m);
	m.duration_s = 10;
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 4, &idx), TT_OK);
	m.cells[idx].state = TT_CELL_DONE;
	tt_manifest_set_str(&m.cells[idx].trace, "cells/x.ttz");
	m.cells[idx].window_start_ns = 10 * S;
	m.cells[idx].window_end_ns = 20 * S;
	tt_analysis_opts_init(&o);
	assert_int_equal(tt_slo_parse("ttft=200ms,tbt=20ms", &o.slo, &err), TT_OK);
	o.slo.attain = attain;
	assert_int_equal(tt_cell_analyzer_create(&m, idx, &o, &a, &err), TT_OK);
	for (int i = 0; i < 8; i++) {
		make_request(&r, 10 * S + i * 500 * MS, 100 * MS, TT_FINISH_LENGTH);
		tt_cell_analyzer_request(a, &r);
	}
	make_request(&r, 12 * S, 300 * MS, TT_FINISH_STOP); /* TTFT 300 ms */
	tt_cell_analyzer_request(a, &r);
	make_request(&r, 13 * S, 100 * MS, TT_FINISH_ERROR); /* failed */
	tt_cell_analyzer_request(a, &r);
	make_request(&r, 19 * S, 100 * MS, TT_FINISH_CUT);   /* cut: not judged */
	r.t_end_ns = 20 * S;
	tt_cell_analyzer_request(a, &r);
	make_request(&r, 8 * S, 100 * MS, TT_FINISH_STOP);   /* ended at 9.2 s: not judged */
	tt_cell_analyzer_request(a, &r);
	tt_cell_analyzer_finish(a, NULL, f);
	tt_cell_analyzer_free(a);
	tt_manifest_release(&m);
}

static void test_cell_goodput(void **state)
{
	struct tt_cell_figures f;

	(void)state;
	run_cell(0.8, &f);
	assert_int_equal(f.slo_judged, 10);
	assert_int_equal(f.slo_met, 8);
	assert_true(fabs(f.slo_share - 0.8) < 1e-12);
	assert_true(fabs(f.goodput_req_s - 0.8) < 1e-12);       /* 8 / 10 s */
	assert_true(fabs(f.goodput_tok_s - 8 * 101 / 10.0) < 1e-9);
	assert_true(f.slo_ok); /* 8 of 10 meets 80 % */
	run_cell(0.9, &f);
	assert_false(f.slo_ok);
}

/* The analysis decides in its own chunk loop: on random requests (merged
 * chunks, failures, requests without tokens) it counts exactly the
 * requests the public judge says meet. */
static void test_analysis_agrees_with_judge(void **state)
{
	static struct tt_chunk ch[400];
	unsigned seed = 99;
	(void)state;
	for (int round = 0; round < 6; round++) {
		struct tt_manifest m;
		struct tt_cell_analyzer *a;
		struct tt_analysis_opts o;
		struct tt_slo_judge *j;
		struct tt_cell_figures f;
		struct tt_error err;
		size_t idx;
		long met = 0, judged = 0;

		tt_manifest_init(&m);
		m.duration_s = 100;
		tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 4, &idx);
		m.cells[idx].state = TT_CELL_DONE;
		tt_manifest_set_str(&m.cells[idx].trace, "cells/x.ttz");
		m.cells[idx].window_start_ns = 0;
		m.cells[idx].window_end_ns = 1000 * S;
		tt_analysis_opts_init(&o);
		o.slo.ttft_ms = 20 + round * 5;
		o.slo.tbt_ms = 2 + round * 0.5;
		o.slo.tbt_pct = round % 2 ? 90 : 99.5;
		o.slo.e2e_ms = round > 3 ? 400 : 0;
		assert_int_equal(tt_cell_analyzer_create(&m, idx, &o, &a, &err), TT_OK);
		assert_int_equal(tt_slo_judge_create(&o.slo, &j, &err), TT_OK);
		for (int q = 0; q < 150; q++) {
			struct tt_request r;
			struct tt_slo_verdict v;
			size_t n;
			int64_t t;
			memset(&r, 0, sizeof r);
			r.role = TT_ROLE_MEASURED;
			seed = seed * 1103515245u + 12345u;
			n = (seed >> 8) % 300;
			r.t_sched_ns = r.t_send_ns = q * S;
			t = r.t_send_ns + (int64_t)((seed >> 4) % 40) * MS;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				ch[i].t_ns = t;
				ch[i].tokens = (seed >> 20) % 7 == 0 ? 1 + (seed >> 12) % 4 : 1;
				t += (int64_t)(500 + (seed >> 10) % 3000) * 1000;
			}
			r.chunks = ch;
			r.n_chunks = n;
			r.t_end_ns = t;
			r.finish = (seed >> 16) % 13 == 0 ? TT_FINISH_ERROR : TT_FINISH_LENGTH;
			tt_cell_analyzer_request(a, &r);
			assert_int_equal(tt_slo_judge_request(j, &r, &v), TT_OK);
			judged++;
			met += v.meets;
		}
		tt_cell_analyzer_finish(a, NULL, &f);
		assert_int_equal(f.slo_judged, judged);
		assert_int_equal(f.slo_met, met);
		assert_true(met > 0 && met < judged); /* the bounds cut through */
		tt_slo_judge_free(j);
		tt_cell_analyzer_free(a);
		tt_manifest_release(&m);
	}
}

/* M-stall: the longest chunk gap, and per-token gaps over the threshold. */
static void test_stalls(void **state)
{
	struct tt_manifest m;
	struct tt_cell_analyzer *a;
	struct tt_cell_figures f;
	struct tt_request r;
	struct tt_error err;
	struct tt_chunk ch[12];
	size_t idx, n = 0;
	int64_t t = 11 * S;

	(void)state;
	tt_manifest_init(&m);
	m.duration_s = 10;
	tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 1, &idx);
	m.cells[idx].state = TT_CELL_DONE;
	tt_manifest_set_str(&m.cells[idx].trace, "cells/x.ttz");
	m.cells[idx].window_start_ns = 10 * S;
	m.cells[idx].window_end_ns = 20 * S;
	assert_int_equal(tt_cell_analyzer_create(&m, idx, NULL, &a, &err), TT_OK);
	ch[n++] = (struct tt_chunk){t, 1};
	for (int i = 0; i < 8; i++)
		ch[n++] = (struct tt_chunk){t += MS, 1};   /* 8 gaps of 1 ms */
	ch[n++] = (struct tt_chunk){t += 150 * MS, 1}; /* one of 150 ms */
	ch[n++] = (struct tt_chunk){t += 330 * MS, 3}; /* 3 x 110 ms, a 330 ms wait */
	memset(&r, 0, sizeof r);
	r.role = TT_ROLE_MEASURED;
	r.t_send_ns = r.t_sched_ns = 10 * S + 500 * MS;
	r.t_end_ns = t + MS;
	r.finish = TT_FINISH_STOP;
	r.n_chunks = n;
	r.chunks = ch;
	tt_cell_analyzer_request(a, &r);
	tt_cell_analyzer_finish(a, NULL, &f);
	assert_true(fabs(f.longest_stall_ms - 330) < 1e-9);
	assert_int_equal(f.tbt_ms.n, 12);
	assert_int_equal(f.gaps_over, 4); /* the 150 ms gap and three 110 ms */
	assert_true(fabs(f.gaps_over_share - 4.0 / 12.0) < 1e-12);
	assert_int_equal(f.slo_judged, 0); /* no SLO set */
	assert_true(isnan(f.slo_share));
	tt_cell_analyzer_free(a);
	tt_manifest_release(&m);
}

static void test_max_concurrency(void **state)
{
	struct tt_report r;
	struct tt_cell_figures cells[5];
	static const int conc[5] = {1, 4, 8, 1, 2};
	static const int ok[5] = {1, 1, 0, 0, 0};

	(void)state;
	memset(&r, 0, sizeof r);
	memset(cells, 0, sizeof cells);
	tt_analysis_opts_init(&r.opts);
	for (int i = 0; i < 5; i++) {
		cells[i].phase = TT_PHASE_DECODE;
		cells[i].context = i < 3 ? 8192 : 16384;
		cells[i].concurrency = conc[i];
		cells[i].slo_ok = ok[i];
	}
	r.cells = cells;
	r.n_cells = 5;
	assert_int_equal(tt_report_slo_max_concurrency(&r, 8192), -1); /* no SLO set */
	r.opts.slo.ttft_ms = 100;
	assert_int_equal(tt_report_slo_max_concurrency(&r, 8192), 4);
	assert_int_equal(tt_report_slo_max_concurrency(&r, 16384), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_judge_request),
		cmocka_unit_test(test_judge_quantile_matches_sorted),
		cmocka_unit_test(test_cell_goodput),
		cmocka_unit_test(test_analysis_agrees_with_judge),
		cmocka_unit_test(test_stalls),
		cmocka_unit_test(test_max_concurrency),
		cmocka_unit_test(test_parse_at_quantile),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
