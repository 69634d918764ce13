/* Manifest JSON: round trip, unknown members, versions, secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/run.h"

static void test_round_trip(void **state)
{
	struct tt_manifest m, back;
	struct tt_error err;
	char *json = NULL;
	size_t idx;

	(void)state;
	tt_manifest_init(&m);
	tt_manifest_set_str(&m.engine, "vllm");
	tt_manifest_set_str(&m.model, "LiquidAI/LFM2.5-350M");
	tt_manifest_set_note(&m, "gpu", "H200 NVL");
	tt_manifest_set_note(&m, "gpu", "H100"); /* replaces */
	tt_manifest_set_note(&m, "launch_command", "vllm serve x --api-key sk-live-1 --port 1");
	m.origin_unix_ns = 1764680000123456789LL;
	m.kv_capacity_tokens = 12345678;
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 16, &idx), TT_OK);
	m.cells[idx].window_start_ns = 5000000000LL;
	m.cells[idx].window_end_ns = 35000000000LL;
	m.cells[idx].ready_timed_out = 1;
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_PREFILL, 128000, 1, NULL), TT_OK);
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_int_equal(tt_manifest_from_json(json, strlen(json), "m.json", &back, &err), TT_OK);
	assert_string_equal(back.engine, "vllm");
	assert_string_equal(tt_manifest_note(&back, "gpu"), "H100");
	assert_int_equal(back.n_notes, 2);
	assert_string_equal(tt_manifest_note(&back, "launch_command"),
			    "vllm serve x --api-key <redacted> --port 1");
	assert_int_equal(back.origin_unix_ns, 1764680000123456789LL); /* exact past 2^53 */
	assert_int_equal(back.kv_capacity_tokens, 12345678);
	assert_int_equal(back.n_cells, 2);
	assert_string_equal(back.cells[0].id, "decode-8192x16");
	assert_string_equal(back.cells[1].id, "prefill-128000");
	assert_int_equal(back.cells[0].window_end_ns, 35000000000LL);
	assert_int_equal(back.cells[0].ready_timed_out, 1);
	assert_int_equal(back.cells[1].start_ns, -1);
	assert_int_equal(tt_manifest_find_cell(&back, "prefill-128000"), 1);
	free(json);
	tt_manifest_release(&m);
	tt_manifest_release(&back);
}

/* settings.workload (formats/run-v1.md 2.5): written as 1.5, read back,
 * and a wrong type refused naming the member. */
static void test_workload_member(void **state)
{
	struct tt_manifest m, back;
	struct tt_workload_info *w;
	struct tt_error err;
	char *json = NULL;
	const char *bad = "{\"format\":\"tokentrace-run\",\"format_version\":\"1.5\","
			  "\"settings\":{\"workload\":{\"kind\":\"trace\",\"speedup\":\"2\"}},"
			  "\"cells\":[]}";

	(void)state;
	tt_manifest_init(&m);
	w = tt_manifest_set_workload(&m, "trace");
	assert_non_null(w);
	tt_manifest_set_str(&w->format, "azure");
	tt_manifest_set_str(&w->file, "AzureLLMInferenceTrace_conv.csv");
	w->start_s = 600;
	w->duration_s = 300;
	w->speedup = 2;
	w->output_cap = 512;
	w->requests = 4321;
	w->rows = 19366;
	w->span_s = 149.5;
	w->block_tokens = 512;
	w->bytes = 1234567;
	assert_int_equal(tt_manifest_add_rate_cell(&m, 1643, 28.9, NULL), TT_OK);
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_non_null(strstr(json, "\"format_version\":\t\"1.5\""));
	assert_int_equal(tt_manifest_from_json(json, strlen(json), "m.json", &back, &err), TT_OK);
	assert_non_null(back.workload);
	assert_string_equal(back.workload->kind, "trace");
	assert_string_equal(back.workload->format, "azure");
	assert_string_equal(back.workload->file, "AzureLLMInferenceTrace_conv.csv");
	assert_true(back.workload->start_s == 600 && back.workload->duration_s == 300);
	assert_true(back.workload->speedup == 2 && back.workload->span_s == 149.5);
	assert_int_equal(back.workload->output_cap, 512);
	assert_int_equal(back.workload->requests, 4321);
	assert_int_equal(back.workload->rows, 19366);
	assert_int_equal(back.workload->block_tokens, 512);
	assert_int_equal(back.workload->bytes, 1234567);
	free(json);
	tt_manifest_release(&m);
	tt_manifest_release(&back);
	assert_int_equal(tt_manifest_from_json(bad, strlen(bad), "bad.json", &back, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "settings.workload.speedup"));
}

static void test_unknown_members_and_minor(void **state)
{
	const char *j = "{\"format\":\"tokentrace-run\",\"format_version\":\"1.9\","
			"\"shiny_new\":{\"x\":[1,2]},\"server\":{\"engine\":\"sglang\",\"extra\":1},"
			"\"cells\":[{\"id\":\"decode-1024x2\",\"phase\":\"decode\",\"context\":1024,"
			"\"concurrency\":2,\"state\":\"done\",\"future\":true}]}";
	struct tt_manifest m;
	struct tt_error err;

	(void)state;
	assert_int_equal(tt_manifest_from_json(j, strlen(j), "x", &m, &err), TT_OK);
	assert_int_equal(m.format_minor, 9);
	assert_string_equal(m.engine, "sglang");
	assert_int_equal(m.n_cells, 1);
	assert_int_equal(m.cells[0].state, TT_CELL_DONE);
	tt_manifest_release(&m);
}

static void test_newer_major_refused(void **state)
{
	const char *j = "{\"format\":\"tokentrace-run\",\"format_version\":\"2.1\"}";
	struct tt_manifest m;
	struct tt_error err;

	(void)state;
	assert_int_equal(tt_manifest_from_json(j, strlen(j), "run/manifest.json", &m, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EVERSION);
	assert_non_null(strstr(err.msg, "run/manifest.json"));
	assert_non_null(strstr(err.msg, "2.1 found"));
	assert_non_null(strstr(err.msg, "1.x"));
}

static void test_bad_manifests(void **state)
{
	struct tt_manifest m;
	struct tt_error err;
	const char *bad[] = {
		"{",
		"[]",
		"{\"format\":\"other\"}",
		"{\"format\":\"tokentrace-run\"}",
		"{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"cells\":{}}",
		"{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"cells\":[{\"id\":\"x\"}]}",
		"{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"cells\":[{\"id\":\"d\","
		"\"phase\":\"decode\",\"context\":1,\"concurrency\":1,\"state\":\"done\","
		"\"trace\":\"../../etc/passwd\"}]}",
		"{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"settings\":{\"contexts\":[\"a\"]}}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		enum tt_code rc = tt_manifest_from_json(bad[i], strlen(bad[i]), "bad.json", &m, &err);
		assert_int_equal(rc, TT_FAILED);
		assert_non_null(strstr(err.msg, "bad.json"));
	}
}

/* Issue 14: a version too large for an int is named as written (it was
 * "-1.1"); ids outside the spec's pattern are refused; a note key given
 * twice keeps its first place and its last value; a duplicate cell id is
 * found by sorting (the 100k-cell case lives in tests/cli/test_hostile.sh). */
static void test_hostile_manifests(void **state)
{
	struct tt_manifest m;
	struct tt_error err;
	const char *big = "{\"format\":\"tokentrace-run\",\"format_version\":\"99999999999.1\"}";
	const char *ids[] = {"=HYPERLINK(\\\"x\\\")", "+cmd|' /C calc'!A0", "decode-1x", "-1", "prefill-",
			     "decode-1x2x3", "Decode-1", "prefill-1\\u001b[2J"};
	const char *notes = "{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"notes\":["
			    "{\"key\":\"a\",\"value\":\"1\"},{\"key\":\"b\",\"value\":\"2\"},"
			    "{\"key\":\"a\",\"value\":\"3\"},{\"key\":\"c\",\"value\":\"4\"},"
			    "{\"key\":\"a\",\"value\":\"5\"}]}";
	const char *dup = "{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"cells\":["
			  "{\"id\":\"decode-1x1\",\"phase\":\"decode\",\"context\":1,\"concurrency\":1,\"state\":\"done\"},"
			  "{\"id\":\"decode-2x1\",\"phase\":\"decode\",\"context\":2,\"concurrency\":1,\"state\":\"done\"},"
			  "{\"id\":\"decode-1x1\",\"phase\":\"decode\",\"context\":1,\"concurrency\":1,\"state\":\"done\"}]}";
	char j[512];

	(void)state;
	assert_int_equal(tt_manifest_from_json(big, strlen(big), "m", &m, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EVERSION);
	assert_non_null(strstr(err.msg, "99999999999.1 found"));
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		snprintf(j, sizeof j, "{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",\"cells\":["
			 "{\"id\":\"%s\",\"phase\":\"decode\",\"context\":1,\"concurrency\":1,"
			 "\"state\":\"done\"}]}", ids[i]);
		assert_int_equal(tt_manifest_from_json(j, strlen(j), "m", &m, &err), TT_FAILED);
		assert_non_null(strstr(err.msg, "id is not of the form"));
		assert_null(strchr(err.msg, 0x1b));
	}
	assert_int_equal(tt_manifest_from_json(notes, strlen(notes), "m", &m, &err), TT_OK);
	assert_int_equal(m.n_notes, 3);
	assert_string_equal(m.notes[0].key, "a");
	assert_string_equal(m.notes[0].value, "5");
	assert_string_equal(m.notes[1].key, "b");
	assert_string_equal(m.notes[2].key, "c");
	tt_manifest_release(&m);
	assert_int_equal(tt_manifest_from_json(dup, strlen(dup), "m", &m, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "cell id 'decode-1x1' appears twice"));
}

/* Issue 14 points 6-8: every string read from a manifest is valid UTF-8
 * without control characters and at most 4 KB (+ "..."), whatever the
 * file held; good UTF-8 (accents, CJK, emoji) and a launch command's line
 * breaks pass unchanged. */
static void test_strings_made_safe(void **state)
{
	static const char head[] = "{\"format\":\"tokentrace-run\",\"format_version\":\"1.0\",";
	struct tt_manifest m;
	struct tt_error err;
	char *j = malloc(64 << 10), *big = malloc(20001);
	const char *repl = "\xEF\xBF\xBD";

	(void)state;
	/* bytes: overlong '/', a lone surrogate, ESC, a C1 CSI, DEL, then good text */
	snprintf(j, 64 << 10, "%s\"model\":{\"id\":\"a\xC0\xAF" "b\xED\xA0\x80" "c\x1b[2Jd\xC2\x9B" "e\x7F"
		 "f\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"},\"notes\":[{\"key\":\"launch_command\","
		 "\"value\":\"vllm serve m \\\\\\n  --port 1\"},{\"key\":\"k\\u0000x\",\"value\":\"v\"}]}", head);
	assert_int_equal(tt_manifest_from_json(j, strlen(j), "m", &m, &err), TT_OK);
	assert_null(strchr(m.model, 0x1b));
	assert_null(strchr(m.model, 0x7f));
	assert_null(strstr(m.model, "\xC2\x9B"));
	assert_non_null(strstr(m.model, "f\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"));
	assert_non_null(strstr(m.model, repl));
	assert_int_equal(m.model[0], 'a');
	assert_non_null(strstr(m.notes[0].value, "m \\\n  --port 1"));
	assert_string_equal(m.notes[1].key, "k");   /* cJSON ends the string at \u0000 */
	tt_manifest_release(&m);
	memset(big, 'M', 20000);
	big[20000] = '\0';
	snprintf(j, 64 << 10, "%s\"model\":{\"id\":\"%s\"}}", head, big);
	assert_int_equal(tt_manifest_from_json(j, strlen(j), "m", &m, &err), TT_OK);
	assert_int_equal(strlen(m.model), 4096 + 3);
	assert_string_equal(m.model + 4096, "...");
	tt_manifest_release(&m);
	free(big);
	free(j);
}

static void test_redact(void **state)
{
	char *r;
	(void)state;
	r = tt_redact_secrets("vllm serve m --api-key sk-123 --port 8000 HF_TOKEN=hf_abc "
			      "--hf-token=xyz -H 'Authorization: Bearer abc'");
	assert_null(strstr(r, "sk-123"));
	assert_null(strstr(r, "hf_abc"));
	assert_null(strstr(r, "xyz"));
	assert_null(strstr(r, "abc'"));
	assert_non_null(strstr(r, "--api-key <redacted>"));
	assert_non_null(strstr(r, "--port 8000"));
	assert_non_null(strstr(r, "HF_TOKEN=<redacted>"));
	free(r);
	/* Issue 20.10: -k KEY, and quoted keys with a space: nothing of the
	 * key is left (it was '--api-key <redacted> q4"'). */
	r = tt_redact_secrets("serve -k KEYONE --api-key \"SEKRET q4\" --token='two words' "
			      "--port 1");
	assert_string_equal(r, "serve -k <redacted> --api-key <redacted> --token=<redacted> "
			    "--port 1");
	free(r);
	/* Issue 20.6: URLs with credentials or a key in the query, as the
	 * capture shows them. */
	r = tt_redact_secrets("http://user:pa55@host:8000/v1?x=1&api_key=SEKRET&token=T2#f "
			      "https://h/p?access_token=T3");
	assert_string_equal(r, "http://<redacted>@host:8000/v1?x=1&api_key=<redacted>&"
			    "token=<redacted>#f https://h/p?access_token=<redacted>");
	free(r);
}

/* Issue 24.4: one cell-id syntax everywhere: the capture's K notation
 * finds the cell its run writes in tokens. */
static void test_cell_id_syntax(void **state)
{
	struct tt_manifest m;
	char buf[96];

	(void)state;
	tt_manifest_init(&m);
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 64, NULL), TT_OK);
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_PREFILL, 128000, 1, NULL), TT_OK);
	assert_int_equal(tt_manifest_add_rate_cell(&m, 8192, 0.5, NULL), TT_OK);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8192x64"), 0);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8Kx64"), 0);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8kx64"), 0);
	assert_int_equal(tt_manifest_find_cell(&m, "prefill-125K"), 1);
	assert_int_equal(tt_manifest_find_cell(&m, "rate-8Kr0p5"), 2);
	assert_int_equal(tt_manifest_find_cell(&m, "rate-8192r0.5"), 2);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8Kx65"), -1);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8K"), -1);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8Kx"), -1);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-x64"), -1);
	assert_int_equal(tt_manifest_find_cell(&m, "decode-8Kx64z"), -1);
	assert_int_equal(tt_manifest_find_cell(&m, "bogus"), -1);
	assert_int_equal(tt_cell_id_canonical("decode-8Kx64", buf, sizeof buf), 0);
	assert_string_equal(buf, "decode-8192x64");
	assert_int_equal(tt_cell_id_canonical("nonsense-1", buf, sizeof buf), -1);
	assert_string_equal(buf, "nonsense-1");
	tt_manifest_release(&m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_workload_member),
		cmocka_unit_test(test_unknown_members_and_minor),
		cmocka_unit_test(test_newer_major_refused),
		cmocka_unit_test(test_bad_manifests),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_hostile_manifests),
		cmocka_unit_test(test_strings_made_safe),
		cmocka_unit_test(test_cell_id_syntax),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
