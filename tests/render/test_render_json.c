/* JSON: parses back with cJSON, has the documented schema, NaN is null,
 * numbers round-trip, strings are escaped. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include "render_fixture.h"

static cJSON *render_json(const struct tt_report *r)
{
	char *text = fx_render(r, TT_FORMAT_JSON, 0, 0);
	cJSON *root = cJSON_Parse(text);

	if (!root) {
		print_error("not JSON:\n%s\n", text);
		free(text);
		fail();
	}
	free(text);
	return root;
}

static cJSON *get(const cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		char *t = cJSON_Print(o);

		fprintf(stderr, "no member '%s' in:\n%s\n", key, t ? t : "?");
		free(t);
		fail();
	}
	return v;
}

static double num(const cJSON *o, const char *key)
{
	cJSON *v = get(o, key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	cJSON *v = get(o, key);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

static const cJSON *cell_by_id(const cJSON *root, const char *id)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, get(root, "cells"))
		if (strcmp(str(c, "id"), id) == 0)
			return c;
	print_error("no cell '%s'\n", id);
	fail();
	return NULL;
}

static void test_schema_and_run(void **state)
{
	struct tt_report r;
	cJSON *root, *run, *a;

	(void)state;
	fx_report(&r);
	root = render_json(&r);
	assert_string_equal(str(root, "schema"), "tokentrace-report");
	assert_string_equal(str(root, "version"), "1.5"); /* 1.5: e2e_ms, req_s */
	assert_string_equal(str(get(root, "generator"), "name"), "tokentrace");
	run = get(root, "run");
	assert_string_equal(str(run, "source"), "runs/lfm-h200");
	assert_string_equal(str(get(run, "tool"), "name"), "tokentrace-capture");
	assert_string_equal(str(run, "format_version"), "1.0");
	assert_string_equal(str(run, "created"), "2026-12-02T13:00:00Z");
	assert_string_equal(str(get(run, "server"), "url"), "http://127.0.0.1:8000");
	assert_string_equal(str(get(run, "server"), "engine"), "vllm");
	assert_string_equal(str(get(run, "server"), "engine_version"),
			    "0.26.1rc1.dev638+g52be12cfa");
	assert_string_equal(str(get(run, "model"), "id"), "LiquidAI/LFM2.5-350M");
	assert_string_equal(str(get(run, "model"), "served_name"), "lfm");
	assert_true(num(get(run, "model"), "max_model_len") == 128000);
	a = get(run, "notes");
	assert_int_equal(cJSON_GetArraySize(a), 10);
	assert_string_equal(str(cJSON_GetArrayItem(a, 1), "key"), "gpu");
	assert_string_equal(str(cJSON_GetArrayItem(a, 8), "value"),
			    "vllm serve LiquidAI/LFM2.5-350M --api-key <redacted> | tee `log`");
	assert_int_equal(cJSON_GetArraySize(get(get(run, "settings"), "contexts")), 2);
	assert_true(num(get(run, "settings"), "duration_s") == 30);
	assert_true(num(get(run, "settings"), "max_tokens") == 4096);
	assert_true(cJSON_IsNull(get(get(run, "settings"), "open_loop")));
	assert_true(num(get(run, "kv_capacity"), "tokens") == 3000000);
	assert_string_equal(str(get(run, "kv_capacity"), "source"), "server-log");
	a = get(get(run, "analysis"), "quantiles");
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_true(cJSON_GetArrayItem(a, 1)->valuedouble == 99);
	assert_true(num(get(run, "analysis"), "skip_first_s") == 0);
	assert_int_equal(cJSON_GetArraySize(get(root, "cells")), FX_N_CELLS);
	cJSON_Delete(root);
}

static void test_cell_members(void **state)
{
	static const char *const members[] = {
		"id", "phase", "context", "concurrency", "status", "status_key", "status_reason",
		"evidence", "total_tok_s", "per_request_tok_s", "ttft_ms", "tbt_ms", "avg_active",
		"avg_active_source", "completed", "output_tokens", "measured_s", "requests",
		"errors", "cut", "short_outputs", "chunks", "multi_token_chunks", "server", "damage",
		"longest_stall_ms", "gaps_over_share", "slo", "tokens_per_chunk",
		"chunks_by_tokens", "ttft_parts", "spec_decode", "prefix_cache",
	};
	static const char *const dist_keys[] = {"p50", "p90", "p99", "min", "max", "mean", "n"};
	struct tt_report r;
	cJSON *root;
	const cJSON *c;
	size_t i;

	(void)state;
	fx_report(&r);
	root = render_json(&r);
	cJSON_ArrayForEach(c, get(root, "cells")) {
		for (i = 0; i < sizeof members / sizeof members[0]; i++)
			get(c, members[i]);
		for (i = 0; i < sizeof dist_keys / sizeof dist_keys[0]; i++) {
			get(get(c, "ttft_ms"), dist_keys[i]);
			get(get(c, "tbt_ms"), dist_keys[i]);
		}
	}
	cJSON_Delete(root);
}

static void test_cell_values(void **state)
{
	struct tt_report r;
	cJSON *root;
	const cJSON *c, *e;

	(void)state;
	fx_report(&r);
	r.cells[FX_D8K_1].ttft_ms.n = 100; /* enough for p99 (M-pct) */
	root = render_json(&r);

	c = cell_by_id(root, "decode-8192x1");
	assert_string_equal(str(c, "phase"), "decode");
	assert_true(num(c, "context") == 8192);
	assert_true(num(c, "concurrency") == 1);
	assert_string_equal(str(c, "status"), "Valid");
	assert_true(num(c, "total_tok_s") == 959.94); /* exact round trip */
	assert_true(num(c, "per_request_tok_s") == 972.0);
	assert_true(num(get(c, "ttft_ms"), "p50") == 47);
	assert_true(num(get(c, "ttft_ms"), "p90") == 47 * 1.5);
	assert_true(num(get(c, "ttft_ms"), "p99") == 47 * 1.9);
	assert_true(num(get(c, "tbt_ms"), "p50") == 1.04);
	assert_true(num(get(c, "tbt_ms"), "mean") == 1.04 * 1.1);
	assert_true(num(c, "avg_active") == 0.9);
	assert_string_equal(str(c, "avg_active_source"), "server");
	assert_true(num(c, "completed") == 7);
	assert_true(num(c, "output_tokens") == 28796);
	assert_true(num(c, "measured_s") == 30);
	assert_true(cJSON_IsTrue(get(get(c, "server"), "available")));
	assert_true(num(get(c, "server"), "kv_usage_max") == 0.25);
	assert_true(cJSON_IsNull(get(c, "damage")));

	c = cell_by_id(root, "prefill-8192");
	assert_string_equal(str(c, "phase"), "prefill");
	assert_true(num(c, "total_tok_s") == 143100);
	assert_true(cJSON_IsNull(get(c, "per_request_tok_s")));
	assert_true(cJSON_IsNull(get(get(c, "tbt_ms"), "p50")));
	assert_true(num(get(c, "tbt_ms"), "n") == 0);
	assert_true(cJSON_IsNull(get(c, "measured_s")));

	c = cell_by_id(root, "decode-122880x2");
	assert_string_equal(str(c, "status"), "Requests queued");
	assert_string_equal(str(c, "status_key"), tt_status_key(TT_STATUS_QUEUED));
	assert_string_equal(str(c, "status_reason"),
			    "waiting > 0 in 12% of scrapes, \"max 3\" | threshold 5%");
	assert_int_equal(cJSON_GetArraySize(get(c, "evidence")), 1);
	e = cJSON_GetArrayItem(get(c, "evidence"), 0);
	assert_string_equal(str(e, "signal"), "vllm:num_requests_waiting>0 share");
	assert_true(num(e, "value") == 0.12);
	assert_string_equal(str(e, "op"), ">=");
	assert_true(num(e, "threshold") == 0.05);
	assert_true(cJSON_IsTrue(get(e, "triggered")));
	assert_string_equal(str(e, "status"), tt_status_key(TT_STATUS_QUEUED));
	assert_true(num(get(c, "server"), "waiting_share") == 0.12);

	c = cell_by_id(root, "decode-122880x16");
	assert_true(cJSON_IsNull(get(get(c, "tbt_ms"), "p50")));
	assert_true(cJSON_IsNull(get(get(c, "tbt_ms"), "p99")));
	assert_true(num(c, "errors") == 2);

	c = cell_by_id(root, "decode-122880x32");
	assert_string_equal(str(c, "status"), "Over capacity");
	assert_true(cJSON_IsNull(get(c, "total_tok_s")));
	assert_true(cJSON_IsNull(get(c, "completed")));
	assert_true(cJSON_IsNull(get(c, "output_tokens")));
	assert_true(cJSON_IsNull(get(get(c, "ttft_ms"), "p50")));
	assert_true(cJSON_IsFalse(get(get(c, "server"), "available")));
	assert_true(cJSON_IsNull(get(get(c, "server"), "waiting_mean")));
	cJSON_Delete(root);
}

/* `--quantiles 99.9` on 4 requests: p99.9 needs 1000 samples, p99 100,
 * p90 10 (docs/metrics.md M-pct, "Quantiles from few samples"): null in
 * JSON, empty in CSV, "needs n>=N" in the human tables; supported ones print. */
static void test_unsupported_quantiles(void **state)
{
	struct tt_report r;
	cJSON *root;
	const cJSON *t;
	char *csv, *md, *term, *line;

	(void)state;
	fx_report(&r);
	r.opts.n_quantiles = 3;
	r.opts.quantiles[2] = 99.9;
	r.opts.show_tails = 1;
	r.cells[FX_D8K_1].ttft_ms.n = 4;
	r.cells[FX_D8K_1].ttft_ms.q[2] = 123.456;
	r.cells[FX_D8K_1].tbt_ms.n = 5000;
	r.cells[FX_D8K_1].tbt_ms.q[2] = 7.25;
	root = render_json(&r);
	t = get(cell_by_id(root, "decode-8192x1"), "ttft_ms");
	assert_true(cJSON_IsNull(get(t, "p99.9")));
	assert_true(cJSON_IsNull(get(t, "p99")));
	assert_true(cJSON_IsNull(get(t, "p90")));
	assert_true(num(t, "p50") == 47);
	assert_true(num(t, "max") == 94);
	t = get(cell_by_id(root, "decode-8192x1"), "tbt_ms");
	assert_true(num(t, "p99.9") == 7.25);
	cJSON_Delete(root);
	/* CSV: the columns p90, p99, p99.9 of TTFT empty */
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	line = strstr(csv, "\ndecode,8K,1,");
	assert_non_null(line);
	/* TTFT p50 min max mean, p90 p99 p99.9 empty, n; then TBT, p99.9 printed */
	assert_non_null(strstr(line, ",47,23.5,94,51.7,,,,4,1.04,"));
	assert_non_null(strstr(line, ",7.25,5000,"));
	free(csv);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "| 8K | 1 | 47.0 ms | needs n\xe2\x89\xa5" "10 | needs n\xe2\x89\xa5" "100 | "
			"needs n\xe2\x89\xa5" "1000 | 1.0 ms |");
	free(md);
	term = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_contains(term, "needs n\xe2\x89\xa5" "1000");
	free(term);
}

static void test_quantile_keys_follow_options(void **state)
{
	struct tt_report r;
	cJSON *root;
	const cJSON *t;

	(void)state;
	fx_report(&r);
	r.opts.n_quantiles = 3;
	r.opts.quantiles[2] = 99.9;
	r.cells[FX_D8K_1].ttft_ms.q[2] = 123.456;
	r.cells[FX_D8K_1].ttft_ms.n = 1000; /* enough for p99.9 (M-pct) */
	root = render_json(&r);
	t = get(cell_by_id(root, "decode-8192x1"), "ttft_ms");
	assert_true(num(t, "p99.9") == 123.456);
	assert_true(num(t, "p50") == 47);
	assert_int_equal(cJSON_GetArraySize(get(get(get(root, "run"), "analysis"), "quantiles")), 3);
	cJSON_Delete(root);
}

static void test_round_trip_and_escapes(void **state)
{
	struct tt_report r;
	struct tt_note n[2] = {{"weird", "tab\there \"quoted\" \\ back\nline \x01"},
			       {"gpu", "H200"}};
	cJSON *root;
	const cJSON *c;

	(void)state;
	fx_report(&r);
	r.manifest.notes = n;
	r.manifest.n_notes = 2;
	r.cells[FX_D8K_2].total_tok_s = 0.1 + 0.2;
	r.cells[FX_D8K_2].measured_s = 1.0 / 3.0;
	r.cells[FX_D8K_2].avg_active = 1e-300;
	r.cells[FX_D8K_2].ttft_ms.mean = INFINITY;
	root = render_json(&r);
	assert_string_equal(str(cJSON_GetArrayItem(get(get(root, "run"), "notes"), 0), "value"),
			    "tab\there \"quoted\" \\ back\nline \x01");
	c = cell_by_id(root, "decode-8192x2");
	assert_true(num(c, "total_tok_s") == 0.1 + 0.2);
	assert_true(num(c, "measured_s") == 1.0 / 3.0);
	assert_true(num(c, "avg_active") == 1e-300);
	assert_true(cJSON_IsNull(get(get(c, "ttft_ms"), "mean")));
	cJSON_Delete(root);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema_and_run),
		cmocka_unit_test(test_cell_members),
		cmocka_unit_test(test_cell_values),
		cmocka_unit_test(test_quantile_keys_follow_options),
		cmocka_unit_test(test_unsupported_quantiles),
		cmocka_unit_test(test_round_trip_and_escapes),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
