#include "render_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct tt_note notes[] = {
	{"hardware_type", "Discrete GPU"},
	{"gpu", "H200 NVL"},
	{"vram", "141 GB"},
	{"os", "linux"},
	{"quantization", "BF16"},
	{"backend", "cuda"},
	{"repository", "github.com/vllm-project/vllm"},
	{"commit", "52be12cfac0c"},
	{"launch_command", "vllm serve LiquidAI/LFM2.5-350M --api-key <redacted> | tee `log`"},
	{"rack", "row 3 | slot *7*"},
};
static int64_t contexts[] = {8192, 122880};
static int concurrency[] = {1, 2, 16, 32, 64};
static struct tt_cell_figures cells[FX_N_CELLS];

static void dist(struct tt_dist *d, double p50, size_t n)
{
	d->n = n;
	d->p50 = p50;
	d->min = n ? p50 * 0.5 : NAN;
	d->max = n ? p50 * 2 : NAN;
	d->mean = n ? p50 * 1.1 : NAN;
	d->q[0] = n ? p50 * 1.5 : NAN; /* p90 */
	d->q[1] = n ? p50 * 1.9 : NAN; /* p99 */
}

static void prefill(size_t i, int64_t ctx, double rate, double ttft)
{
	struct tt_cell_figures *c = &cells[i];

	c->cell = i;
	c->phase = TT_PHASE_PREFILL;
	c->context = ctx;
	c->concurrency = 1;
	c->status = TT_STATUS_VALID;
	c->total_tok_s = rate;
	dist(&c->per_request_tok_s, NAN, 0);
	dist(&c->ttft_ms, ttft, 1);
	dist(&c->tbt_ms, NAN, 0);
	c->avg_active = NAN;
	c->avg_active_source = "client";
	c->avg_in_flight = NAN;
	c->completed = 1;
	c->output_tokens = 1;
	c->measured_s = NAN;
	c->prompt_tokens = ctx;
	c->requests = 1;
	c->kv_usage_max = NAN;
	c->preemptions = NAN;
}

static void decode(size_t i, int64_t ctx, int conc, double rate, double per, double ttft,
		   double tbt, double active, long done, long tokens, double secs)
{
	struct tt_cell_figures *c = &cells[i];

	c->cell = i;
	c->phase = TT_PHASE_DECODE;
	c->context = ctx;
	c->concurrency = conc;
	c->status = TT_STATUS_VALID;
	c->total_tok_s = rate;
	dist(&c->per_request_tok_s, per, 8);
	dist(&c->ttft_ms, ttft, 8);
	dist(&c->tbt_ms, tbt, isnan(tbt) ? 0 : 8);
	c->avg_active = active;
	c->avg_active_source = "server";
	c->avg_in_flight = active;
	c->completed = done;
	c->output_tokens = tokens;
	c->measured_s = secs;
	c->prompt_tokens = -1;
	c->requests = done + conc;
	c->errors = 0;
	c->cut = conc;
	c->chunks = tokens;
	c->multi_token_chunks = 0;
	c->has_server_metrics = 1;
	c->waiting_mean = 0;
	c->waiting_max = 0;
	c->waiting_share = 0;
	c->running_mean = active;
	c->kv_usage_max = 0.25;
	c->preemptions = 0;
	c->scrapes = 120;
}

void fx_report(struct tt_report *r)
{
	struct tt_manifest *m = &r->manifest;
	struct tt_cell_figures *q, *f, *o;

	memset(r, 0, sizeof *r);
	memset(cells, 0, sizeof cells);
	m->format_major = 1;
	m->format_minor = 0;
	m->tool_name = "tokentrace-capture";
	m->tool_version = "0.1.0";
	m->created = "2026-12-02T13:00:00Z";
	m->server_url = "http://127.0.0.1:8000";
	m->engine = "vllm";
	m->engine_version = "0.26.1rc1.dev638+g52be12cfa";
	m->model = "LiquidAI/LFM2.5-350M";
	m->served_model = "lfm";
	m->max_model_len = 128000;
	m->notes = notes;
	m->n_notes = sizeof notes / sizeof notes[0];
	m->endpoint = "chat";
	m->contexts = contexts;
	m->n_contexts = 2;
	m->concurrency = concurrency;
	m->n_concurrency = 5;
	m->duration_s = 30;
	m->max_tokens = 4096;
	m->prompt_kind = "token_ids";
	m->scrape_interval_s = 0.25;
	m->readiness_s = 3;
	m->readiness_timeout_s = 60;
	m->kv_capacity_tokens = 3000000;
	m->kv_capacity_source = "server-log";

	prefill(FX_PREFILL_8K, 8192, 143100, 57.3);
	prefill(FX_PREFILL_120K, 122880, 116600, 1036.2);
	decode(FX_D8K_1, 8192, 1, 959.94, 972.0, 47, 1.04, 0.9, 7, 28796, 30.0);
	decode(FX_D8K_2, 8192, 2, 1819.2, 919.9, 48, 1.1, 2.0, 14, 54577, 30.0);
	decode(FX_D8K_16, 8192, 16, 10300, 652.1, 60, 1.5, 15.7, 80, 309008, 30.0);
	decode(FX_D8K_32, 8192, 32, 15000, 478.4, 161, 2.1, 32.0, 96, 449512, 30.0);
	decode(FX_D8K_64, 8192, 64, 1.5e6, 318.1, 290, 3.1, 62.8, 128, 596716, 30.5);
	decode(FX_D120K_1, 122880, 1, 2886, 745.9, 8393, 1.3, 0.9, 5, 20637, 30.0);
	decode(FX_D120K_2, 122880, 2, 1113.1, 588.1, 417, 1.7, 1.9, 8, 33392, 30.0);
	q = &cells[FX_D120K_2];
	q->status = TT_STATUS_QUEUED;
	snprintf(q->reason, sizeof q->reason,
		 "waiting > 0 in 12%% of scrapes, \"max 3\" | threshold 5%%");
	q->waiting_share = 0.12;
	q->waiting_max = 3;
	q->n_evidence = 1;
	q->evidence[0].status = TT_STATUS_QUEUED;
	snprintf(q->evidence[0].signal, sizeof q->evidence[0].signal,
		 "vllm:num_requests_waiting>0 share");
	q->evidence[0].value = 0.12;
	snprintf(q->evidence[0].op, sizeof q->evidence[0].op, ">=");
	q->evidence[0].threshold = 0.05;
	q->evidence[0].triggered = 1;
	decode(FX_D120K_16, 122880, 16, 24300, 154.1, 1212, NAN, 15.6, 0, 60, 30.0);
	f = &cells[FX_D120K_16];
	f->status = TT_STATUS_TOO_FEW;
	snprintf(f->reason, sizeof f->reason, "60 output tokens < 100");
	f->errors = 2;
	decode(FX_D120K_32, 122880, 32, NAN, NAN, NAN, NAN, NAN, 0, 0, NAN);
	o = &cells[FX_D120K_32];
	o->status = TT_STATUS_OVER_CAPACITY;
	dist(&o->per_request_tok_s, NAN, 0);
	dist(&o->ttft_ms, NAN, 0);
	o->requests = 0;
	o->has_server_metrics = 0;
	snprintf(o->reason, sizeof o->reason, "32 x (122880 + 4096) = 4063232 > 3000000 KV tokens");

	tt_analysis_opts_init(&r->opts);
	r->opts.n_quantiles = 2;
	r->opts.quantiles[0] = 90;
	r->opts.quantiles[1] = 99;
	r->cells = cells;
	r->n_cells = FX_N_CELLS;
	snprintf(r->source, sizeof r->source, "runs/lfm-h200");
}

char *fx_render(const struct tt_report *r, enum tt_format f, int color, int width)
{
	struct tt_render_opts opts = {color, width};
	struct tt_error err = {TT_OK, TT_KIND_NONE, ""};
	struct tt_buf b;
	enum tt_code rc;
	char *text;

	tt_buf_init(&b, 0);
	rc = tt_render(r, f, &opts, &b, &err);
	if (rc != TT_OK) {
		print_error("tt_render(%d) = %d: %s\n", (int)f, (int)rc, err.msg);
		tt_buf_release(&b);
		fail();
	}
	text = tt_buf_steal(&b, NULL);
	assert_non_null(text);
	return text;
}

void fx_contains(const char *text, const char *needle)
{
	if (!strstr(text, needle)) {
		fprintf(stderr, "expected to find:\n%s\nin:\n%s\n", needle, text);
		fail();
	}
}

void fx_lacks(const char *text, const char *needle)
{
	if (strstr(text, needle)) {
		fprintf(stderr, "did not expect:\n%s\nin:\n%s\n", needle, text);
		fail();
	}
}
