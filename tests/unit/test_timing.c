/* The capture's timing (issue 23.1): the trace's capture timing fields
 * (formats/run-v1.md 3.5, trace minor 2) written and read back, the
 * spec's example bytes read as the spec says, and M-timing's bounds and
 * the Client overloaded status on hand-built requests with a known
 * answer (docs/metrics.md M-timing). */
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

#include <zstd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "tokentrace/trace.h"

#include "testutil.h"

#define MS 1000000LL
#define S 1000000000LL

struct kept {
	int n, recorded[4];
	int64_t w1[4], wl[4], w[4];
	uint32_t steps[4];
	uint8_t flags[4][4];
	size_t n_chunks[4];
};

static int keep(void *ctx, const struct tt_request *r)
{
	struct kept *k = ctx;
	int i = k->n++;
	if (i >= 4)
		return 0;
	k->recorded[i] = r->timing_recorded;
	k->w1[i] = r->cpu_wait_first_ns;
	k->wl[i] = r->cpu_wait_last_ns;
	k->w[i] = r->cpu_wait_ns;
	k->steps[i] = r->clock_steps;
	k->n_chunks[i] = r->n_chunks;
	for (size_t j = 0; j < r->n_chunks && j < 4; j++)
		k->flags[i][j] = r->chunk_timing ? r->chunk_timing[j] : 0xEE;
	return 0;
}

/* Written and read back: the waits (one unknown), the steps, the chunk
 * bits (reserved bits dropped); a request without timing reads as not
 * recorded. */
static void test_roundtrip(void **state)
{
	char *dir = tu_tmpdir("timing-rt");
	char path[4096];
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {1000, 3, 1 << 20, 0};
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[3] = {{2 * MS, 1}, {3 * MS, 1}, {4 * MS, 2}};
	const uint8_t flags[3] = {TT_TIMING_SHARED, TT_TIMING_NOT_KERNEL | 0xF0, 0};
	struct kept k;
	struct tt_trace_visitor v = {&k, keep, NULL};
	size_t len;
	char *data;

	(void)state;
	snprintf(path, sizeof path, "%s/t.ttz", dir);
	assert_int_equal(tt_trace_writer_open(path, &o, &w, &err), TT_OK);
	memset(&r, 0, sizeof r);
	r.t_sched_ns = r.t_send_ns = 1 * MS;
	r.t_end_ns = 5 * MS;
	r.prompt_tokens = r.cached_tokens = -1;
	r.n_chunks = 3;
	r.chunks = ch;
	r.timing_recorded = 1;
	r.cpu_wait_first_ns = 2500000;
	r.cpu_wait_last_ns = -1;
	r.cpu_wait_ns = 3000000;
	r.clock_steps = 2;
	r.chunk_timing = flags;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	r.seq = 1;
	r.timing_recorded = 0;
	r.chunk_timing = NULL;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	memset(&k, 0, sizeof k);
	data = tu_read(path, &len);
	assert_non_null(data);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	free(data);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.recorded[0], 1);
	assert_int_equal(k.w1[0], 2500000);
	assert_int_equal(k.wl[0], -1);
	assert_int_equal(k.w[0], 3000000);
	assert_int_equal(k.steps[0], 2);
	assert_int_equal(k.flags[0][0], TT_TIMING_SHARED);
	assert_int_equal(k.flags[0][1], TT_TIMING_NOT_KERNEL);
	assert_int_equal(k.flags[0][2], 0);
	assert_int_equal(k.recorded[1], 0);
	assert_int_equal(k.flags[1][0], 0xEE); /* no column */
	tu_rmrf(dir);
	free(dir);
}

/* The example of formats/run-v1.md 3.5 "Capture timing", byte by byte, in
 * a hand-made frame: read as the spec says. */
static void test_spec_example_bytes(void **state)
{
	/* slot seq role finish fail http prompt cached sched send end errlen
	 * nchunks, gaps x3, tokens x3, text_flag 0 */
	static const uint8_t body[] = {0, 0, 0, 1, 0, 200, 1, 0, 0, 0, 20, 0, 3, 5, 1, 1, 1, 1, 1, 0};
	static const uint8_t timing[] = {0x01, 0xA1, 0xCB, 0x98, 0x01, 0x01, 0xC1, 0x8D, 0xB7,
					 0x01, 0x00, 0x01, 0x00, 0x00};
	uint8_t raw[128];
	size_t n = 0;
	struct kept k;
	struct tt_trace_visitor v = {&k, keep, NULL};
	struct tt_error err;

	(void)state;
	raw[n++] = 1;
	raw[n++] = 8;
	memcpy(raw + n, "TTRC", 4);
	n += 4;
	raw[n++] = 1; /* major */
	raw[n++] = 2; /* minor 2 */
	raw[n++] = 1; /* unit 1 ns */
	raw[n++] = 0; /* base */
	raw[n++] = 2;
	raw[n++] = (uint8_t)(sizeof body + sizeof timing);
	memcpy(raw + n, body, sizeof body);
	n += sizeof body;
	memcpy(raw + n, timing, sizeof timing);
	n += sizeof timing;
	{
		size_t cap = ZSTD_compressBound(n), zn;
		void *z = malloc(cap);
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		zn = ZSTD_compress2(cc, z, cap, raw, n);
		assert_false(ZSTD_isError(zn));
		ZSTD_freeCCtx(cc);
		memset(&k, 0, sizeof k);
		assert_int_equal(tt_trace_decode(z, zn, "hand", &v, &err), TT_OK);
		free(z);
	}
	assert_int_equal(k.n, 1);
	assert_int_equal(k.recorded[0], 1);
	assert_int_equal(k.w1[0], 2500000);
	assert_int_equal(k.wl[0], 0);
	assert_int_equal(k.w[0], 3000000);
	assert_int_equal(k.steps[0], 0);
	assert_int_equal(k.flags[0][0], TT_TIMING_SHARED);
	assert_int_equal(k.flags[0][1], 0);
	assert_int_equal(k.flags[0][2], 0);
}

struct cell {
	struct tt_manifest m;
	struct tt_cell_analyzer *a;
	size_t idx;
};

static void cell_init(struct cell *c)
{
	struct tt_error err;

	tt_manifest_init(&c->m);
	c->m.duration_s = 10;
	c->m.max_tokens = 0;
	assert_int_equal(tt_manifest_add_cell(&c->m, TT_PHASE_DECODE, 1024, 1, &c->idx), TT_OK);
	c->m.cells[c->idx].state = TT_CELL_DONE;
	tt_manifest_set_str(&c->m.cells[c->idx].trace, "cells/x.ttz");
	c->m.cells[c->idx].window_start_ns = 0;
	c->m.cells[c->idx].window_end_ns = 10 * S;
	assert_int_equal(tt_cell_analyzer_create(&c->m, c->idx, NULL, &c->a, &err), TT_OK);
}

/* Request k of a closed loop of one: sent at k s, first token ttft ns
 * later, then 99 tokens 10 ms apart (per-request rate 100 tok/s), with the
 * given waits (timing < 0: not recorded). */
static void request_ttft(struct cell *c, int k, int timing, int64_t ttft, int64_t w1, int64_t wl)
{
	struct tt_chunk ch[100];
	uint8_t flags[100];
	struct tt_request r;
	int64_t send = (int64_t)k * S;

	memset(&r, 0, sizeof r);
	r.seq = (uint32_t)k;
	r.t_sched_ns = r.t_send_ns = send;
	r.prompt_tokens = r.cached_tokens = -1;
	for (int i = 0; i < 100; i++) {
		ch[i] = (struct tt_chunk){send + ttft + (int64_t)i * 10 * MS, 1};
		flags[i] = 0;
	}
	r.t_end_ns = ch[99].t_ns + MS;
	r.finish = TT_FINISH_LENGTH;
	r.n_chunks = 100;
	r.chunks = ch;
	if (timing >= 0) {
		r.timing_recorded = 1;
		r.cpu_wait_first_ns = w1;
		r.cpu_wait_last_ns = wl;
		r.cpu_wait_ns = w1 + wl;
		flags[0] = w1 > 0 ? TT_TIMING_SHARED : 0;
		r.chunk_timing = flags;
	}
	tt_cell_analyzer_request(c->a, &r);
}

/* ... with the first token 20 ms after the send */
static void request(struct cell *c, int k, int timing, int64_t w1, int64_t wl)
{
	request_ttft(c, k, timing, 20 * MS, w1, wl);
}

static int has_evidence(const struct tt_cell_figures *f, enum tt_status s)
{
	for (size_t i = 0; i < f->n_evidence; i++)
		if (f->evidence[i].status == s)
			return 1;
	return 0;
}

/* No wait: Valid, the bounds equal the figures, could_move 0. */
static void test_no_wait_valid(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request(&c, k, 1, 0, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_VALID);
	assert_int_equal(f.timing.requests, 8);
	assert_int_equal(f.timing.doubtful_ttft, 0);
	assert_true(fabs(f.timing.ttft_p50_low_ms - 20) < 1e-9);
	assert_true(fabs(f.timing.per_request_p50_low - f.per_request_tok_s.p50) < 1e-9);
	assert_true(fabs(f.timing.per_request_p50_high - f.per_request_tok_s.p50) < 1e-9);
	assert_true(f.timing.could_move == 0);
	assert_true(has_evidence(&f, TT_STATUS_CLIENT_OVERLOADED));
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* A 5 ms wait before every first token: TTFT 20 ms may be 15 ms (25 %):
 * Client overloaded, each TTFT doubtful, the bounds exact, the reason
 * naming the wait; the rate bounds: 99 tokens over 990 ms + 5 ms. */
static void test_wait_overloaded(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request(&c, k, 1, 5 * MS, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_CLIENT_OVERLOADED);
	assert_string_equal(tt_status_key(f.status), "client_overloaded");
	assert_string_equal(tt_status_name(f.status), "Client overloaded");
	assert_int_equal(f.timing.doubtful_ttft, 8);
	assert_int_equal(f.timing.chunks_shared, 8);
	assert_true(fabs(f.timing.ttft_p50_low_ms - 15) < 1e-9);
	assert_true(fabs(f.timing.per_request_p50_low - 99 / 0.995) < 1e-6);
	assert_true(fabs(f.timing.could_move - 0.25) < 1e-9);
	assert_true(fabs(f.timing.could_move_ms - 5) < 1e-9);
	assert_non_null(strstr(f.reason, "waited for a CPU"));
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* Waits under the 1 % a median may move: 0.1 ms before the first token
 * (TTFT 20 ms: 0.5 %) and 1 ms before the last read (rate: 0.1 %): Valid,
 * and no TTFT doubtful (under 1 ms). */
static void test_small_wait_valid(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request(&c, k, 1, MS / 10, MS);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_VALID);
	assert_int_equal(f.timing.doubtful_ttft, 0);
	assert_true(f.timing.could_move > 0.004 && f.timing.could_move < 0.01);
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* The floor: a 1 ms TTFT (a loopback server) after a 0.05 ms wait could be
 * 5 % lower, but by 0.05 ms, under TT_TIMING_MOVE_FLOOR_MS: Valid, the
 * relative evidence triggered and the time evidence not.  A 0.3 ms wait
 * moves it by 0.3 ms: Client overloaded. */
static void test_floor(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request_ttft(&c, k, 1, MS, MS / 20, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.timing.could_move - 0.05) < 1e-9);
	assert_true(fabs(f.timing.could_move_ms - 0.05) < 1e-9);
	assert_int_equal(f.status, TT_STATUS_VALID);
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);

	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request_ttft(&c, k, 1, MS, 3 * MS / 10, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_true(fabs(f.timing.could_move_ms - 0.3) < 1e-9);
	assert_int_equal(f.status, TT_STATUS_CLIENT_OVERLOADED);
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* A trace without the capture's timing (before run format 1.4): nothing
 * judged, no evidence added, the status as before. */
static void test_not_recorded(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request(&c, k, -1, 0, 0);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_VALID);
	assert_int_equal(f.timing.requests, 0);
	assert_false(has_evidence(&f, TT_STATUS_CLIENT_OVERLOADED));
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* An unknown wait bounds nothing: TTFT could be ~0. */
static void test_unknown_wait(void **state)
{
	struct cell c;
	struct tt_cell_figures f;

	(void)state;
	cell_init(&c);
	for (int k = 0; k < 8; k++)
		request(&c, k, 1, -1, -1);
	tt_cell_analyzer_finish(c.a, NULL, &f);
	assert_int_equal(f.status, TT_STATUS_CLIENT_OVERLOADED);
	assert_int_equal(f.timing.doubtful_ttft, 8);
	tt_cell_analyzer_free(c.a);
	tt_manifest_release(&c.m);
}

/* A starved capture of run format 1.4 (fixtures/runs/README.md): its
 * timing read back, both decode cells Client overloaded, every TTFT of
 * the measured requests doubtful, some stamps shared. */
static void test_fixture_starved(void **state)
{
	struct tt_report *rep = NULL;
	struct tt_run *run = NULL;
	struct tt_error err;
	int decode = 0;

	(void)state;
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/starved14.tar.zst", &run, &err), TT_OK);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++) {
		const struct tt_cell_figures *f = &rep->cells[i];
		if (f->phase != TT_PHASE_DECODE)
			continue;
		decode++;
		assert_int_equal(f->status, TT_STATUS_CLIENT_OVERLOADED);
		assert_true(f->timing.requests > 0);
		assert_int_equal(f->timing.doubtful_ttft, f->timing.ttft_requests);
		assert_true(f->timing.chunks_shared > 0);
		assert_true(f->timing.could_move > 0.5);
	}
	assert_int_equal(decode, 2);
	tt_report_free(rep);
	tt_run_free(run);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_spec_example_bytes),
		cmocka_unit_test(test_no_wait_valid),
		cmocka_unit_test(test_wait_overloaded),
		cmocka_unit_test(test_small_wait_valid),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_not_recorded),
		cmocka_unit_test(test_unknown_wait),
		cmocka_unit_test(test_fixture_starved),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
