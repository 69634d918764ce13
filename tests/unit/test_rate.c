/* Open-loop cells without a clock (docs/metrics.md M-rate, M-sustained,
 * M-rate-limit; formats/run-v1.md 2.4): runs written record by record with
 * known due, send, token and end times, then read back through the
 * library.  Every figure is checked against the value its definition
 * gives for these records. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "testutil.h"
#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tt_cmocka.h"

#define MS 1000000LL
#define S 1000000000LL
#define WS (1 * S)  /* window [1 s, 11 s) */
#define WE (11 * S)

/* One request due at `due`, sent `late` ns later, first token `wait` ns
 * after the send, then 4 more tokens 10 ms apart; ended (length) or cut at
 * `cut` (> 0) before its tokens. */
static void put(struct tt_trace_writer *tw, uint32_t seq, enum tt_role role, int64_t due,
		int64_t late, int64_t wait, int64_t cut)
{
	struct tt_chunk ch[5];
	struct tt_request r;
	struct tt_error err;
	size_t n = 0;

	memset(&r, 0, sizeof r);
	r.seq = seq;
	r.role = role;
	r.t_sched_ns = due;
	r.t_send_ns = due + late;
	r.http_status = 200;
	r.prompt_tokens = 64;
	r.cached_tokens = -1;
	for (int k = 0; k < 5; k++) {
		int64_t t = r.t_send_ns + wait + k * 10 * MS;
		if (cut > 0 && t >= cut)
			break;
		ch[n].t_ns = t;
		ch[n++].tokens = 1;
	}
	r.finish = cut > 0 ? TT_FINISH_CUT : TT_FINISH_LENGTH;
	r.t_end_ns = cut > 0 ? cut : ch[n - 1].t_ns;
	r.n_chunks = n;
	r.chunks = ch;
	assert_int_equal(tt_trace_write_request(tw, &r, &err), TT_OK);
}

/* A run of two open-loop cells at context 64:
 *   10/s: 100 requests due in the window every 100 ms (and 10 of warm-up
 *         before it), sent 1 ms late (the one at k = 50: 30 ms), first token
 *         20 ms after the send: meets TTFT <= 30 ms from the due time,
 *         except k = 50 (51 ms);
 *   20/s: 200 due in the window every 50 ms; the server ends one every
 *         100 ms, so the k-th waits k x 50 ms; the ones whose end would fall
 *         after the window + 1 s drain are cut. */
static char *make_run(void)
{
	char *dir = tu_tmpdir("rate");
	struct tt_manifest m;
	struct tt_run_writer *w = NULL;
	struct tt_trace_writer *tw = NULL;
	struct tt_error err;
	size_t a, b;
	char path[1024];

	tt_manifest_init(&m);
	tt_manifest_set_str(&m.engine, "synthetic");
	m.duration_s = 10;
	m.max_tokens = 5;
	m.warmup_s = 1;
	m.drain_s = 1;
	tt_manifest_set_str(&m.arrivals, "constant");
	assert_int_equal(tt_manifest_add_rate_cell(&m, 64, 10, &a), TT_OK);
	assert_int_equal(tt_manifest_add_rate_cell(&m, 64, 20, &b), TT_OK);
	assert_string_equal(m.cells[a].id, "rate-64r10");
	snprintf(path, sizeof path, "%s/run", dir);
	assert_int_equal(tt_run_writer_create(path, &m, &w, &err), TT_OK);
	tt_manifest_release(&m);

	assert_int_equal(tt_run_writer_open_cell(w, a, NULL, &tw, &err), TT_OK);
	for (uint32_t k = 0; k < 10; k++)
		put(tw, k, TT_ROLE_WARMUP, k * 100 * MS, 1 * MS, 20 * MS, 0);
	for (uint32_t k = 0; k < 100; k++)
		put(tw, 10 + k, TT_ROLE_MEASURED, WS + k * 100 * MS, k == 50 ? 30 * MS : 1 * MS,
		    20 * MS, 0);
	assert_int_equal(tt_trace_writer_close(tw, &err), TT_OK);
	assert_int_equal(tt_run_writer_open_cell(w, b, NULL, &tw, &err), TT_OK);
	for (uint32_t k = 0; k < 200; k++) {
		int64_t due = WS + k * 50 * MS, first = WS + k * 100 * MS + 20 * MS;
		put(tw, k, TT_ROLE_MEASURED, due, 1 * MS, first - due - 1 * MS,
		    first + 40 * MS > WE + 1 * S ? WE + 1 * S : 0);
	}
	assert_int_equal(tt_trace_writer_close(tw, &err), TT_OK);
	{
		struct tt_manifest *wm = tt_run_writer_manifest(w);
		for (size_t i = 0; i < wm->n_cells; i++) {
			wm->cells[i].state = TT_CELL_DONE;
			wm->cells[i].start_ns = 0;
			wm->cells[i].window_start_ns = WS;
			wm->cells[i].window_end_ns = WE;
			wm->cells[i].end_ns = WE + 1 * S;
		}
	}
	assert_int_equal(tt_run_writer_commit(w, &err), TT_OK);
	tt_run_writer_free(w);
	free(dir);
	{
		char *p = strdup(path);
		assert_non_null(p);
		return p;
	}
}

static struct tt_report *analyze(const char *path, const char *slo)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts o;
	struct tt_error err;

	tt_analysis_opts_init(&o);
	if (slo)
		assert_int_equal(tt_slo_parse(slo, &o.slo, &err), TT_OK);
	assert_int_equal(tt_run_open(path, &run, &err), TT_OK);
	assert_int_equal(tt_analyze(run, &o, &rep, &err), TT_OK);
	tt_run_free(run);
	return rep;
}

static const struct tt_cell_figures *cell(const struct tt_report *r, double rate)
{
	for (size_t i = 0; i < r->n_cells; i++)
		if (r->cells[i].phase == TT_PHASE_RATE && r->cells[i].rate == rate)
			return &r->cells[i];
	fail();
	return NULL;
}

static void test_manifest_12(void **state)
{
	char *path = make_run(), mpath[1100], *json;
	struct tt_manifest m;
	struct tt_error err;
	size_t len;

	(void)state;
	snprintf(mpath, sizeof mpath, "%s/manifest.json", path);
	json = tu_read(mpath, &len);
	assert_non_null(json);
	/* 1.2, and the rate cells apart from cells (a 1.1 reader ignores them) */
	assert_non_null(strstr(json, "\"format_version\":\t\"1.2\""));
	assert_non_null(strstr(json, "\"rate_cells\""));
	assert_non_null(strstr(json, "\"warmup_s\":\t1"));
	assert_int_equal(tt_manifest_from_json(json, len, "m", &m, &err), TT_OK);
	assert_int_equal(m.n_cells, 2);
	assert_int_equal(m.cells[1].phase, TT_PHASE_RATE);
	assert_true(m.cells[1].rate == 20);
	assert_int_equal(m.cells[1].window_end_ns, WE);
	assert_true(m.drain_s == 1 && m.burstiness == 1);
	tt_manifest_release(&m);
	/* an id that does not say its rate is refused, naming the cell */
	{
		char *bad = strdup(json), *p = strstr(bad, "rate-64r20");
		assert_non_null(p);
		p[9] = '1'; /* rate-64r21 */
		assert_int_not_equal(tt_manifest_from_json(bad, len, "m", &m, &err), TT_OK);
		assert_non_null(strstr(err.msg, "rate cell 1"));
		free(bad);
	}
	{
		char id[64];
		tt_rate_cell_id(8192, 0.5, id, sizeof id);
		assert_string_equal(id, "rate-8192r0p5");
	}
	free(json);
	tu_rmrf(path);
	free(path);
}

/* Format 1.3: the sweep, the SLO search and the length histogram round
 * trip; 1.2 is kept when none is set; a 1.2 reader's view (min/max) holds
 * every length; bad bins are refused naming the member. */
static void test_manifest_13(void **state)
{
	struct tt_manifest m, back;
	struct tt_error err;
	char *json = NULL;
	size_t idx;
	static const struct tt_length_bin bins[] = {{5, 5, 1}, {20, 24, 2.5}, {40, 40, 0}};

	(void)state;
	tt_manifest_init(&m);
	assert_int_equal(tt_manifest_add_rate_cell(&m, 64, 20, &idx), TT_OK);
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_non_null(strstr(json, "\"format_version\":\t\"1.2\""));
	assert_null(strstr(json, "rate_sweep"));
	assert_null(strstr(json, "\"slo\""));
	assert_int_equal(tt_manifest_from_json(json, strlen(json), "m", &back, &err), TT_OK);
	assert_false(back.rate_sweep);
	assert_null(back.slo);
	assert_int_equal(back.n_output_bins, 0);
	tt_manifest_release(&back);
	free(json);

	m.rate_sweep = 1;
	assert_int_equal(tt_manifest_set_str(&m.slo, "ttft=100ms,attain=90"), TT_OK);
	m.output_bins = malloc(sizeof bins);
	assert_non_null(m.output_bins);
	memcpy(m.output_bins, bins, sizeof bins);
	m.n_output_bins = 3;
	m.output_min = 5;
	m.output_max = 40;
	assert_int_equal(tt_manifest_set_str(&m.output_hist_file, "lengths.csv"), TT_OK);
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_non_null(strstr(json, "\"format_version\":\t\"1.3\""));
	assert_int_equal(tt_manifest_from_json(json, strlen(json), "m", &back, &err), TT_OK);
	assert_true(back.rate_sweep);
	assert_string_equal(back.slo, "ttft=100ms,attain=90");
	assert_int_equal(back.n_output_bins, 3);
	assert_int_equal(back.output_bins[1].min, 20);
	assert_int_equal(back.output_bins[1].max, 24);
	assert_true(back.output_bins[1].weight == 2.5 && back.output_bins[2].weight == 0);
	assert_string_equal(back.output_hist_file, "lengths.csv");
	/* what a 1.2 reader reads of it: the range of every bin */
	assert_int_equal(back.output_min, 5);
	assert_int_equal(back.output_max, 40);
	tt_manifest_release(&back);
	/* and a copy (reports and run writers copy manifests) keeps them */
	assert_int_equal(tt_manifest_copy(&back, &m, &err), TT_OK);
	assert_true(back.rate_sweep && back.n_output_bins == 3);
	tt_manifest_release(&back);
	{
		static const struct {
			const char *from, *to, *msg;
		} bad[] = {
			{"\"rate_sweep\":\ttrue", "\"rate_sweep\":\t1", "rate_sweep is not a boolean"},
			{"\"slo\":\t\"ttft=100ms,attain=90\"", "\"slo\":\t7", "slo is not"},
			{"\"weight\":\t2.5", "\"weight\":\t-2.5", "output_tokens.bins[1]"},
			{"\"max\":\t24", "\"max\":\t41", "output_tokens.bins[1]"},
		};
		for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
			char *p = strstr(json, bad[i].from), *b;
			size_t n = strlen(json) + 16;
			assert_non_null(p);
			b = malloc(n);
			assert_non_null(b);
			snprintf(b, n, "%.*s%s%s", (int)(p - json), json, bad[i].to,
				 p + strlen(bad[i].from));
			assert_int_equal(tt_manifest_from_json(b, strlen(b), "m", &back, &err),
					 TT_FAILED);
			if (!strstr(err.msg, bad[i].msg))
				fail_msg("case %zu: '%s'", i, err.msg);
			free(b);
		}
	}
	free(json);
	tt_manifest_release(&m);
}

static void test_figures_exact(void **state)
{
	char *path = make_run();
	struct tt_report *rep = analyze(path, "ttft=30ms,attain=95");
	const struct tt_cell_figures *a = cell(rep, 10), *b = cell(rep, 20);
	double lo, hi;

	(void)state;
	/* 10/s: M-rate over the window's 100 requests */
	assert_int_equal(a->status, TT_STATUS_VALID);
	assert_int_equal(a->open_loop.due, 100);
	assert_true(fabs(a->open_loop.scheduled_req_s - 10) < 1e-9);
	/* ended in [1 s, 11 s): the last window request ends at 10.9 + 0.061 */
	assert_true(fabs(a->open_loop.achieved_req_s - 10) < 1e-9);
	assert_true(fabs(a->open_loop.lateness_ms.p50 - 1) < 1e-9);
	assert_true(fabs(a->open_loop.lateness_ms.max - 30) < 1e-9);
	assert_true(fabs(a->open_loop.ttft_sent_ms.p50 - 20) < 1e-9);
	assert_true(fabs(a->open_loop.ttft_due_ms.p50 - 21) < 1e-9);
	assert_true(fabs(a->open_loop.ttft_due_ms.max - 50) < 1e-9);
	assert_true(fabs(a->open_loop.e2e_due_ms.p50 - 61) < 1e-9);
	assert_true(fabs(a->open_loop.ttft_due_growth_ms) < 1e-9);
	/* out tok/s: 5 tokens a request, any role, chunks in the window */
	assert_true(fabs(a->open_loop.out_tok_s - 50) < 0.2);
	/* SLOs from the due time: all but k = 50 (50 ms) meet 30 ms */
	assert_int_equal(a->open_loop.slo_judged, 100);
	assert_int_equal(a->open_loop.slo_met, 99);
	assert_true(a->open_loop.slo_ok);
	assert_true(fabs(a->open_loop.goodput_req_s - 9.9) < 1e-9);

	/* 20/s: the server ends 10/s; the k-th waits k x 50 ms */
	assert_int_equal(b->status, TT_STATUS_NOT_SUSTAINED);
	assert_int_equal(b->open_loop.due, 200);
	assert_true(fabs(b->open_loop.scheduled_req_s - 20) < 1e-9);
	assert_true(b->open_loop.achieved_req_s < 0.9 * 20);
	assert_true(fabs(b->open_loop.achieved_req_s - 10) < 0.2);
	assert_true(b->open_loop.unanswered > 0);
	/* quarters of 50 requests: the first k in [0, 50), TTFT from the due
	 * time 50 k + 20 ms, median 1245 ms; the last k in [150, 200), all cut
	 * at 12 s without a token (k >= 110 are), entering as the lower bound
	 * 12 s - due = 11000 - 50 k ms, median 2275 ms.  Growth 1030 ms: the
	 * bound understates it (without the cut it would be 7500 ms). */
	assert_int_equal(b->open_loop.unanswered, 90);
	assert_true(fabs(b->open_loop.ttft_due_growth_ms - 1030) < 1e-6);
	assert_false(b->open_loop.slo_ok);
	assert_non_null(strstr(b->reason, "20 requests/s due"));
	{
		int found = 0;
		for (size_t i = 0; i < b->n_evidence; i++)
			found |= b->evidence[i].status == TT_STATUS_NOT_SUSTAINED &&
				 b->evidence[i].triggered &&
				 !strcmp(b->evidence[i].signal, "achieved / scheduled requests");
		assert_true(found);
	}
	/* M-rate-limit: 10 meets, 20 does not */
	assert_int_equal(tt_report_rate_limit(rep, 64, &lo, &hi), 2);
	assert_true(lo == 10 && hi == 20);
	assert_true(fabs(tt_report_rate_capacity(rep, 64) - 10) < 0.2);
	assert_string_equal(tt_status_key(TT_STATUS_NOT_SUSTAINED), "rate_not_sustained");
	tt_report_free(rep);
	tu_rmrf(path);
	free(path);
}

static void test_outputs(void **state)
{
	char *path = make_run();
	struct tt_report *rep = analyze(path, "ttft=30ms,attain=95");
	struct tt_render_opts ro;
	struct tt_buf b;
	struct tt_error err;

	(void)state;
	memset(&ro, 0, sizeof ro);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_TERM, &ro, &b, &err), TT_OK);
	assert_non_null(strstr(b.data, "Open-loop cells"));
	assert_non_null(strstr(b.data, "Rate not sustained"));
	assert_non_null(strstr(b.data, "limit in [10, 20)/s"));
	tt_buf_release(&b);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_MD, &ro, &b, &err), TT_OK);
	assert_non_null(strstr(b.data, "## Open-loop cells"));
	tt_buf_release(&b);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_CSV, &ro, &b, &err), TT_OK);
	assert_non_null(strstr(b.data, ",rate_req_s,scheduled_req_s,"));
	assert_non_null(strstr(b.data, "rate_limit_lo,rate_limit_hi\n"));
	assert_non_null(strstr(b.data, "\nrate,64,0,Valid,"));
	tt_buf_release(&b);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_JSON, &ro, &b, &err), TT_OK);
	assert_non_null(strstr(b.data, "\"open_loop\""));
	assert_non_null(strstr(b.data, "\"rate\""));
	assert_non_null(strstr(b.data, "\"limit_lo_req_s\""));
	tt_buf_release(&b);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_HTML, &ro, &b, &err), TT_OK);
	assert_non_null(strstr(b.data, "Open-loop cells"));
	tt_buf_release(&b);
	tt_report_free(rep);

	/* diff: the curves of both sides, side by side */
	{
		struct tt_diff_side *sb = NULL, *sc = NULL;
		struct tt_diff *d = NULL;
		struct tt_analysis_opts ao;
		struct tt_run *run = NULL;

		tt_analysis_opts_init(&ao);
		assert_int_equal(tt_slo_parse("ttft=30ms", &ao.slo, &err), TT_OK);
		assert_int_equal(tt_diff_side_create(NULL, &sb, &err), TT_OK);
		assert_int_equal(tt_diff_side_create(NULL, &sc, &err), TT_OK);
		assert_int_equal(tt_run_open(path, &run, &err), TT_OK);
		assert_true(tt_diff_side_add(sb, run, &ao, &err) <= TT_WARN);
		assert_true(tt_diff_side_add(sc, run, &ao, &err) <= TT_WARN);
		tt_run_free(run);
		assert_int_equal(tt_diff_compare(sb, sc, &d, &err), TT_OK);
		tt_buf_init(&b, 0);
		assert_int_equal(tt_diff_render(d, TT_FORMAT_TERM, &ro, NULL, &b, &err), TT_OK);
		assert_non_null(strstr(b.data, "Open-loop curves"));
		assert_non_null(strstr(b.data, "SLO limit: [10, 20)/s / [10, 20)/s"));
		tt_buf_release(&b);
		tt_diff_free(d);
		tt_diff_side_free(sb);
		tt_diff_side_free(sc);
	}
	tu_rmrf(path);
	free(path);
}

/* The recorded open-loop run (fixtures/runs/README.md): every future
 * reader reads it, and its cells say what the simulator did. */
static void test_fixture(void **state)
{
	struct tt_report *rep = analyze(TT_FIXTURES "/runs/openloop.tar.zst", "ttft=100ms");
	const struct tt_cell_figures *a = cell(rep, 30), *b = cell(rep, 120);
	double lo, hi;

	(void)state;
	assert_string_equal(rep->manifest.arrivals, "constant");
	assert_int_equal(a->status, TT_STATUS_VALID);
	assert_int_equal(a->open_loop.due, 60);
	assert_int_equal(b->status, TT_STATUS_NOT_SUSTAINED);
	assert_int_equal(b->open_loop.due, 240);
	/* the simulator's capacity, 80 requests/s, within 5 % */
	assert_true(fabs(b->open_loop.achieved_req_s - 80) < 4);
	assert_true(b->open_loop.ttft_due_growth_ms > 300);
	assert_int_equal(tt_report_rate_limit(rep, 64, &lo, &hi), 2);
	assert_true(lo == 30 && hi == 120);
	tt_report_free(rep);
}

/* Output lengths per request of a run (tokens of every finished request). */
static int tally_len(void *ctx, const struct tt_request *r)
{
	long *per_len = ctx, tokens = 0;

	if (r->finish != TT_FINISH_LENGTH && r->finish != TT_FINISH_STOP)
		return 0;
	for (size_t i = 0; i < r->n_chunks; i++)
		tokens += r->chunks[i].tokens;
	per_len[tokens >= 0 && tokens <= 64 ? tokens : 64]++;
	return 0;
}

/* A recorded 1.3 run (fixtures/runs/openloop13.tar.zst): its histogram read
 * back, and every request's length one the histogram can draw. */
static void test_fixture_13(void **state)
{
	struct tt_run *run = NULL;
	struct tt_error err;
	const struct tt_manifest *m;
	long per_len[65] = {0}, n = 0;
	long i;
	struct tt_trace_visitor v = {per_len, tally_len, NULL};

	(void)state;
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/openloop13.tar.zst", &run, &err), TT_OK);
	m = tt_run_manifest(run);
	assert_int_equal(m->format_minor, 3);
	assert_int_equal(m->n_output_bins, 4);
	assert_string_equal(m->output_hist_file, "lengths.csv");
	assert_int_equal(m->output_min, 5);
	assert_int_equal(m->output_max, 60);
	assert_true(m->output_bins[2].min == 40 && m->output_bins[2].weight == 0);
	i = tt_manifest_find_cell(m, "rate-64r40");
	assert_true(i >= 0);
	assert_int_equal(tt_run_read_cell(run, (size_t)i, &v, &err), TT_OK);
	for (int k = 0; k <= 64; k++) {
		n += per_len[k];
		if (per_len[k] && !(k == 5 || (k >= 20 && k <= 24) || k == 60))
			fail_msg("%ld requests of %d tokens: no bin holds it", per_len[k], k);
	}
	assert_true(n > 40);
	assert_true(per_len[5] > 0 && per_len[60] > 0);
	tt_run_free(run);
}

/* The report JSON says what the open-loop capture was asked
 * (formats/report-json.md 4.2), from the manifest. */
static void test_report_json_settings(void **state)
{
	struct tt_report *rep = analyze(TT_FIXTURES "/runs/openloop13.tar.zst", NULL);
	struct tt_render_opts ro;
	struct tt_buf b;
	struct tt_error err;
	cJSON *root, *ol, *ot, *bins, *bin;

	(void)state;
	memset(&ro, 0, sizeof ro);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(rep, TT_FORMAT_JSON, &ro, &b, &err), TT_OK);
	root = cJSON_ParseWithLength(b.data, b.len);
	assert_non_null(root);
	assert_string_equal(cJSON_GetObjectItem(root, "version")->valuestring, "1.5"); /* 1.5: e2e_ms, req_s */
	ol = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "run"), "settings"),
				 "open_loop");
	assert_true(cJSON_IsObject(ol));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(ol, "rates")),
			 (int)rep->manifest.n_rates);
	assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(ol, "rates"), 0)->valuedouble ==
		    rep->manifest.rates[0]);
	assert_non_null(cJSON_GetObjectItem(ol, "arrivals")->valuestring);
	ot = cJSON_GetObjectItem(ol, "output_tokens");
	assert_true(cJSON_GetObjectItem(ot, "min")->valuedouble == 5);
	assert_true(cJSON_GetObjectItem(ot, "max")->valuedouble == 60);
	assert_string_equal(cJSON_GetObjectItem(ot, "file")->valuestring, "lengths.csv");
	bins = cJSON_GetObjectItem(ot, "bins");
	assert_int_equal(cJSON_GetArraySize(bins), 4);
	bin = cJSON_GetArrayItem(bins, 2);
	assert_true(cJSON_GetObjectItem(bin, "min")->valuedouble == 40);
	assert_true(cJSON_GetObjectItem(bin, "weight")->valuedouble == 0);
	cJSON_Delete(root);
	tt_buf_release(&b);
	tt_report_free(rep);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_12),
		cmocka_unit_test(test_manifest_13),
		cmocka_unit_test(test_figures_exact),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_fixture_13),
		cmocka_unit_test(test_report_json_settings),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
