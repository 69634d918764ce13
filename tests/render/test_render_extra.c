/* The tables beyond the seed's layout: tails (--quantiles, --stalls) and
 * goodput under SLOs (--slo), in every text format; absent by default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "render_fixture.h"

static void with_figures(struct tt_report *r)
{
	fx_report(r);
	for (size_t i = 0; i < r->n_cells; i++) {
		struct tt_cell_figures *c = &r->cells[i];
		c->longest_stall_ms = 12.5;
		c->gaps_over = 3;
		c->gaps_over_share = 0.0025;
		c->slo_judged = 10;
		c->slo_met = c->concurrency <= 16 ? 10 : 5;
		c->slo_share = (double)c->slo_met / 10;
		c->slo_ok = c->concurrency <= 16;
		c->goodput_req_s = c->slo_met / 30.0;
		c->goodput_tok_s = c->slo_met * 4096 / 30.0;
	}
}

static void test_default_has_no_extra_tables(void **state)
{
	struct tt_report r;
	char *md, *term;

	(void)state;
	with_figures(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_lacks(md, "## Tails");
	fx_lacks(md, "Goodput");
	fx_lacks(term, "Tails");
	fx_lacks(term, "Goodput");
	free(md);
	free(term);
}

static void test_tails_follow_quantiles(void **state)
{
	struct tt_report r;
	char *md, *term;

	(void)state;
	with_figures(&r);
	r.opts.show_tails = 1;
	r.opts.n_quantiles = 3;
	r.opts.quantiles[0] = 50;
	r.opts.quantiles[1] = 90;
	r.opts.quantiles[2] = 99.9;
	r.opts.stall_ms = 250;
	r.cells[FX_D8K_2].tbt_ms.q[2] = 7.26;
	r.cells[FX_D8K_2].tbt_ms.n = 1000; /* enough for p99.9 (M-pct) */
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Tails");
	fx_contains(md, "| Context | Requests at once | TTFT p50 | TTFT p90 | TTFT p99.9 | TBT p50 | "
			"TBT p90 | TBT p99.9 | Longest stall | Gaps > 250 ms |");
	fx_lacks(md, "TTFT p50 | TTFT p50"); /* 50 is the median column, once */
	fx_contains(md, "| 8K | 2 |");
	fx_contains(md, "7.3 ms");   /* the p99.9 TBT of 8K x 2 */
	fx_contains(md, "12.5 ms");  /* longest stall */
	fx_contains(md, "0.25%");    /* share of long gaps */
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "Tails");
	fx_contains(term, "TBT p99.9");
	fx_contains(term, "Gaps > 250 ms");
	free(md);
	free(term);
	/* columns in ascending order, the median in its place */
	r.opts.n_quantiles = 2;
	r.opts.quantiles[0] = 99;
	r.opts.quantiles[1] = 10;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "| TTFT p10 | TTFT p50 | TTFT p99 | TBT p10 | TBT p50 | TBT p99 |");
	free(md);
}

static void test_goodput_tables(void **state)
{
	struct tt_report r;
	char *md, *term, *csv, *json;
	cJSON *root, *slo, *cells, *c;
	int found = 0;

	(void)state;
	with_figures(&r);
	r.opts.slo.ttft_ms = 500;
	r.opts.slo.tbt_ms = 50;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Goodput under SLOs");
	fx_contains(md, "TTFT \xe2\x89\xa4 500 ms, time between tokens (p99 of each request) "
			"\xe2\x89\xa4 50 ms");
	fx_contains(md, "at least 90%");
	/* 8K: 16 meets, 32 does not; 120K: up to 16 meets, 32 was not run */
	fx_contains(md, "Highest concurrency meeting the SLOs: 8K: 16");
	fx_contains(md, "120K: 16");
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "Goodput under SLOs");
	fx_contains(term, "Highest concurrency meeting the SLOs: 8K: 16");
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, ",server_cache_hit_rate,slo_judged,slo_met,slo_share,"
			 "goodput_req_s,goodput_tok_s,slo_meets,slo_max_concurrency,"
			 "reasoning_tokens,answer_tokens,ttfr_ms_p50,ttfa_ms_p50\n");
	json = fx_render(&r, TT_FORMAT_JSON, 0, 0);
	root = cJSON_Parse(json);
	assert_non_null(root);
	slo = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "run"), "analysis"),
				  "slo");
	assert_true(cJSON_IsObject(slo));
	assert_true(cJSON_GetObjectItem(slo, "ttft_ms")->valuedouble == 500);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(slo, "e2e_ms")));
	assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(slo,
		"max_concurrency"), 0), "concurrency")->valuedouble == 16);
	cells = cJSON_GetObjectItem(root, "cells");
	cJSON_ArrayForEach(c, cells) {
		const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
		cJSON *s = cJSON_GetObjectItem(c, "slo");
		assert_non_null(s);
		if (strcmp(id, "decode-8192x32") == 0) {
			assert_true(cJSON_GetObjectItem(s, "met")->valuedouble == 5);
			assert_true(cJSON_IsFalse(cJSON_GetObjectItem(s, "meets")));
			assert_true(cJSON_GetObjectItem(c, "longest_stall_ms")->valuedouble == 12.5);
			found = 1;
		}
		if (strncmp(id, "prefill", 7) == 0)
			assert_true(cJSON_IsNull(s));
	}
	assert_true(found);
	cJSON_Delete(root);
	free(md);
	free(term);
	free(csv);
	free(json);
}

/* Issue 24.1: the figures people look for, without options, in every
 * human format; a narrow terminal drops the p90 columns before the p99
 * ones and keeps the medians. */
static void test_latency_table_by_default(void **state)
{
	struct tt_report r;
	struct tt_cell_figures *c;
	char *md, *narrow, *wide, *html;

	(void)state;
	with_figures(&r);
	c = &r.cells[FX_D8K_16];
	c->ttft_ms.p50 = 59.6;
	c->ttft_ms.q[0] = 61.2; /* p90 */
	c->ttft_ms.q[1] = 61.9; /* p99 */
	c->ttft_ms.n = 1000;
	c->tbt_ms.p50 = 1.5;
	c->tbt_ms.q[0] = 1.6;
	c->tbt_ms.q[1] = 1.8;
	c->tbt_ms.n = 100000;
	c->e2e_ms.p50 = 841.3;
	c->e2e_ms.q[0] = 844.1;
	c->e2e_ms.n = 50; /* too few for p99 (M-pct: 100) */
	c->completed_req_s = 20;
	c->errors = 2;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Latency and request rate\n");
	fx_contains(md, "| Context | Requests at once | Status | Req/s | TTFT p50 | TTFT p90 | "
			"TTFT p99 | TBT p50 | TBT p90 | TBT p99 | E2E p50 | E2E p90 | E2E p99 | "
			"Errors |\n");
	fx_contains(md, "| 8K | 16 | Valid | 20 | 59.6 ms | 61.2 ms | 61.9 ms | 1.5 ms | 1.6 ms | "
			"1.8 ms | 841.3 ms | 844.1 ms | needs n\xe2\x89\xa5" "100 | 2 |\n");
	fx_lacks(md, "\n| 120K | 32 |"); /* not run: no row */
	wide = fx_render(&r, TT_FORMAT_TERM, 0, 400);
	fx_contains(wide, "Latency (");
	fx_contains(wide, "E2E p99");
	narrow = fx_render(&r, TT_FORMAT_TERM, 0, 110);
	fx_contains(narrow, "TTFT p50");
	fx_contains(narrow, "E2E p50");
	fx_contains(narrow, "TTFT p99");
	fx_lacks(narrow, "TTFT p90");
	html = fx_render(&r, TT_FORMAT_HTML, 0, 0);
	fx_contains(html, "<h2>Latency and request rate</h2>");
	fx_contains(html, "<th class=\"r\">E2E p99</th>");
	free(md);
	free(wide);
	free(narrow);
	free(html);
}

/* Issue 24.1: the TTFT split adds up beside the TTFT it splits (the mean of
 * the requests the server's histograms count), and where it cannot, the
 * TTFT is M-ttft's mean and Rest unknown. */
static void test_ttft_split_adds_up(void **state)
{
	struct tt_report r;
	char *md;

	(void)state;
	with_figures(&r);
	for (size_t i = 0; i < r.n_cells; i++) {
		struct tt_cell_figures *c = &r.cells[i];
		c->queue_ms = c->prefill_ms = c->server_ttft_ms = c->ttft_rest_ms = NAN;
		c->spec_acceptance = c->spec_accepted_len = NAN;
		c->cached_share = c->server_cache_hit_rate = NAN;
	}
	r.cells[FX_D8K_16].ttft_ms.mean = 256.6; /* M-ttft's mean: other requests too */
	r.cells[FX_D8K_16].queue_ms = 41.3;
	r.cells[FX_D8K_16].prefill_ms = 179.4;
	r.cells[FX_D8K_16].ttft_rest_ms = 24.1;
	r.cells[FX_D8K_32].ttft_ms.mean = 300;
	r.cells[FX_D8K_32].queue_ms = 50;
	r.cells[FX_D8K_32].prefill_ms = 200; /* no request finished between the scrapes */
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "| 244.8 ms | 41.3 ms | 179.4 ms | 24.1 ms |");
	fx_lacks(md, "256.6 ms");
	fx_contains(md, "| 300.0 ms | 50.0 ms | 200.0 ms | \xe2\x80\x94 |");
	fx_contains(md, "which add up to the TTFT beside them");
	free(md);
}

static void test_server_parts_table(void **state)
{
	struct tt_report r;
	char *md, *term, *json;

	(void)state;
	with_figures(&r);
	for (size_t i = 0; i < r.n_cells; i++) {
		struct tt_cell_figures *c = &r.cells[i];
		c->tokens_per_chunk = 1.5;
		c->queue_ms = c->prefill_ms = c->server_ttft_ms = c->ttft_rest_ms = NAN;
		c->spec_acceptance = c->spec_accepted_len = NAN;
		c->spec_draft_tokens = c->spec_accepted_tokens = NAN;
		c->cached_share = c->server_cache_hit_rate = NAN;
	}
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_lacks(md, "Where TTFT goes"); /* no server timings, no tails asked */
	free(md);
	r.cells[FX_D8K_16].queue_ms = 12.26;
	r.cells[FX_D8K_16].prefill_ms = 30;
	r.cells[FX_D8K_16].ttft_rest_ms = 17.75;
	r.cells[FX_D8K_16].spec_acceptance = 0.626;
	r.cells[FX_D8K_16].spec_accepted_len = 2.875;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Where TTFT goes, and tokens per chunk");
	fx_contains(md, "| 8K | 16 | 1.5 |");
	fx_contains(md, "| 12.3 ms | 30.0 ms | 17.8 ms | 63% | 2.88 |");
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "Where TTFT goes");
	json = fx_render(&r, TT_FORMAT_JSON, 0, 0);
	fx_contains(json, "\"queue_ms\":\t12.26");
	fx_contains(json, "\"accepted_len\":\t2.875");
	free(md);
	free(term);
	free(json);
}

static void test_prefill_repeats_table(void **state)
{
	struct tt_report r;
	char *md, *term;

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_lacks(md, "Prefill repeats"); /* one scout per context: no table */
	free(md);
	r.cells[FX_PREFILL_8K].ttft_ms.n = 5;
	r.cells[FX_PREFILL_8K].ttft_ms.p50 = 57;
	r.cells[FX_PREFILL_8K].ttft_ms.min = 50;
	r.cells[FX_PREFILL_8K].ttft_ms.max = 78.5;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Prefill repeats");
	fx_contains(md, "| 8K | 5 | 143.1K | 57.0 ms | 50.0 ms | 78.5 ms | 50% |");
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "Prefill repeats");
	free(md);
	free(term);
}

/* Reasoning models (M-reasoning): a table only when some cell streamed
 * reasoning; CSV and JSON carry the figures, null where unknown. */
static void test_reasoning_table(void **state)
{
	struct tt_report r;
	char *md, *term, *json, *csv;
	struct tt_cell_figures *c;

	(void)state;
	fx_report(&r);
	for (size_t i = 0; i < r.n_cells; i++) {
		r.cells[i].reasoning_tokens = r.cells[i].answer_tokens = -1;
		r.cells[i].text_requests = 0;
		r.cells[i].ttfr_ms.p50 = r.cells[i].ttfa_ms.p50 = NAN;
	}
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_lacks(md, "Reasoning");
	free(md);
	md = fx_render(&r, TT_FORMAT_HTML, 0, 0);
	fx_lacks(md, "Reasoning tokens");
	free(md);
	json = fx_render(&r, TT_FORMAT_JSON, 0, 0);
	fx_contains(json, "\"reasoning\":\tnull");
	free(json);
	c = &r.cells[FX_D8K_16];
	c->text_requests = 96;
	c->reasoning_tokens = 100000;
	c->answer_tokens = 209008;
	c->ttfr_ms.n = c->ttfa_ms.n = 8;
	c->ttfr_ms.p50 = 60;
	c->ttfa_ms.p50 = 1234.56;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Reasoning");
	fx_contains(md, "| 8K | 16 | 100,000 | 209,008 | 32% | 60.0 ms | 60.0 ms | 1,234.6 ms |");
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "Reasoning (tokens streamed as reasoning vs answer");
	json = fx_render(&r, TT_FORMAT_JSON, 0, 0);
	fx_contains(json, "\"reasoning_tokens\":\t100000");
	fx_contains(json, "\"answer_tokens\":\t209008");
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, ",100000,209008,60,1234.56\n");
	free(md);
	md = fx_render(&r, TT_FORMAT_HTML, 0, 0); /* html and pdf share the tables */
	fx_contains(md, "Reasoning tokens");
	fx_contains(md, "209,008");
	free(md);
	free(term);
	free(json);
	free(csv);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_has_no_extra_tables),
		cmocka_unit_test(test_tails_follow_quantiles),
		cmocka_unit_test(test_goodput_tables),
		cmocka_unit_test(test_server_parts_table),
		cmocka_unit_test(test_latency_table_by_default),
		cmocka_unit_test(test_ttft_split_adds_up),
		cmocka_unit_test(test_prefill_repeats_table),
		cmocka_unit_test(test_reasoning_table),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
