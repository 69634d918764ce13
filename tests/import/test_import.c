/* Importing: the run format's import members (1.1), figures reported by a
 * source, detection, and tt_import_open's private run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"

#define FX TT_FIXTURES "/foreign/"

static void test_manifest_11_round_trip(void **state)
{
	struct tt_manifest m, back;
	struct tt_import_source src = {.format = "vllm-bench", .tool = "vllm bench serve",
				       .tool_version = NULL, .file = "a.json",
				       .sha256 = "00ff", .bytes = 42};
	struct tt_error err;
	char *json = NULL;
	size_t idx;
	double v;

	(void)state;
	tt_manifest_init(&m);
	/* Every manifest written now is 1.1 (server.slots, model.slot_context
	 * and the import members of run-v1 2.3 all came with 1.1). */
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_non_null(strstr(json, "\"1.1\""));
	free(json);
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 4, &idx), TT_OK);
	assert_int_equal(tt_cell_set_reported(&m.cells[idx], "total_tok_s", 959.9), TT_OK);
	assert_int_equal(tt_cell_set_reported(&m.cells[idx], "ttft_ms_p99.9", 12.5), TT_OK);
	assert_int_equal(tt_cell_set_reported(&m.cells[idx], "total_tok_s", 960), TT_OK); /* replaces */
	assert_int_equal(tt_manifest_set_str(&m.cells[idx].reported_status, "requests_queued"), TT_OK);
	assert_int_equal(tt_manifest_add_source(&m, &src), TT_OK);
	assert_int_equal(tt_manifest_add_unavailable(&m, "tbt_ms_p50"), TT_OK);
	assert_int_equal(tt_manifest_add_unavailable(&m, "tbt_ms_p50"), TT_OK); /* once */
	assert_int_equal(tt_manifest_to_json(&m, &json, &err), TT_OK);
	assert_non_null(strstr(json, "\"1.1\""));
	assert_int_equal(tt_manifest_from_json(json, strlen(json), "m.json", &back, &err), TT_OK);
	assert_int_equal(back.format_minor, 1);
	assert_int_equal(back.cells[0].n_reported, 2);
	assert_true(tt_cell_reported(&back.cells[0], "total_tok_s", &v));
	assert_true(v == 960);
	assert_true(tt_cell_reported(&back.cells[0], "ttft_ms_p99.9", &v));
	assert_true(v == 12.5);
	assert_false(tt_cell_reported(&back.cells[0], "tbt_ms_p50", NULL));
	assert_string_equal(back.cells[0].reported_status, "requests_queued");
	assert_int_equal(back.n_sources, 1);
	assert_string_equal(back.sources[0].format, "vllm-bench");
	assert_null(back.sources[0].tool_version);
	assert_int_equal(back.sources[0].bytes, 42);
	assert_int_equal(back.n_unavailable, 1);
	assert_true(tt_manifest_unavailable(&back, "tbt_ms_p50"));
	free(json);
	tt_manifest_release(&back);
	tt_manifest_release(&m);
}

static void test_manifest_11_bad_types(void **state)
{
	static const char *const bad[][2] = {
		{"{\"format\":\"tokentrace-run\",\"format_version\":\"1.1\",\"cells\":[{\"id\":\"decode-1x1\","
		 "\"phase\":\"decode\",\"context\":1,\"concurrency\":1,\"state\":\"done\","
		 "\"reported\":{\"total_tok_s\":\"fast\"}}]}",
		 "cell 'decode-1x1': reported.total_tok_s is not a finite number"},
		{"{\"format\":\"tokentrace-run\",\"format_version\":\"1.1\",\"imported_from\":{}}",
		 "imported_from is not an array"},
		{"{\"format\":\"tokentrace-run\",\"format_version\":\"1.1\",\"unavailable\":[1]}",
		 "unavailable[0] is not a string"},
		{"{\"format\":\"tokentrace-run\",\"format_version\":\"1.1\",\"imported_from\":"
		 "[{\"sha256\":7}]}",
		 "imported_from[0].sha256 is not a string"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct tt_manifest m;
		struct tt_error err;
		tt_error_clear(&err);
		assert_int_equal(tt_manifest_from_json(bad[i][0], strlen(bad[i][0]), "m.json", &m, &err),
				 TT_FAILED);
		assert_int_equal(err.kind, TT_EFORMAT);
		assert_non_null(strstr(err.msg, bad[i][1]));
	}
}

/* A cell with reported figures and no trace is reported as the source said. */
static void test_reported_figures(void **state)
{
	char dir[] = "/tmp/tt-test-import-XXXXXX", run_dir[64];
	struct tt_manifest m;
	struct tt_run_writer *w;
	struct tt_run *run;
	struct tt_report *rep;
	struct tt_error err;
	struct tt_analysis_opts o;
	size_t a, b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	tt_manifest_init(&m);
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 2, &a), TT_OK);
	m.cells[a].state = TT_CELL_DONE;
	tt_cell_set_reported(&m.cells[a], "total_tok_s", 1113.1);
	tt_cell_set_reported(&m.cells[a], "tbt_ms_p50", 1.7);
	tt_cell_set_reported(&m.cells[a], "ttft_ms_p99", 600);
	tt_cell_set_reported(&m.cells[a], "completed", 8);
	tt_manifest_set_str(&m.cells[a].reported_status, "requests_queued");
	assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, 8192, 4, &b), TT_OK);
	m.cells[b].state = TT_CELL_PENDING; /* reported figures only count for measured cells */
	tt_cell_set_reported(&m.cells[b], "total_tok_s", 1);
	assert_int_equal(tt_run_writer_create(run_dir, &m, &w, &err), TT_OK);
	tt_run_writer_free(w);
	tt_manifest_release(&m);
	assert_int_equal(tt_run_open(run_dir, &run, &err), TT_OK);
	tt_analysis_opts_init(&o); /* quantiles 90, 99 */
	assert_int_equal(tt_analyze(run, &o, &rep, &err), TT_OK);
	assert_int_equal(rep->cells[0].status, TT_STATUS_QUEUED);
	assert_true(rep->cells[0].total_tok_s == 1113.1);
	assert_true(rep->cells[0].tbt_ms.p50 == 1.7);
	assert_true(isnan(rep->cells[0].ttft_ms.p50)); /* not reported: unknown */
	assert_true(isnan(rep->cells[0].ttft_ms.q[0]));
	assert_true(rep->cells[0].ttft_ms.q[1] == 600);
	assert_int_equal(rep->cells[0].completed, 8);
	assert_int_equal(rep->cells[0].output_tokens, -1);
	assert_string_equal(rep->cells[0].avg_active_source, "reported");
	assert_int_equal(rep->cells[1].status, TT_STATUS_NOT_RUN);
	tt_report_free(rep);
	tt_run_free(run);
	unlink(strcat(run_dir, "/manifest.json"));
	snprintf(run_dir, sizeof run_dir, "%s/run/cells", dir);
	rmdir(run_dir);
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	rmdir(run_dir);
	assert_int_equal(rmdir(dir), 0);
}

static void test_detect(void **state)
{
	static const struct {
		const char *file;
		enum tt_import_format f;
	} cases[] = {
		{"llm-inference-bench/rtx6kpro-vllm_awq_mtp.json", TT_IMPORT_LIB_JSON},
		{"llm-inference-bench/glm51-dcp1-mtp0-decode-matrix.json", TT_IMPORT_LIB_JSON},
		{"llm-inference-bench-report/speed-test-matrix-lfm2.5-350m-h200.txt",
		 TT_IMPORT_LIB_REPORT},
		{"vllm-bench/bench_serve_v0.25.1.json", TT_IMPORT_VLLM},
		{"vllm-bench/detailed-c4.json", TT_IMPORT_VLLM},
		{"genai-perf/llama3-8b-concurrency1-profile_export.json", TT_IMPORT_GENAI_PERF},
		{"aiperf/run1-profile_export.jsonl", TT_IMPORT_AIPERF},
		{"guidellm/qwen3-4b-sanity-benchmarks.json", TT_IMPORT_GUIDELLM},
		/* issue 25.6: the tools' summaries alone */
		{"genai-perf/llama3-8b-concurrency1-profile_export_genai_perf.json",
		 TT_IMPORT_GENAI_PERF},
		{"aiperf/run1-profile_export_aiperf.json", TT_IMPORT_AIPERF},
	};
	enum tt_import_format f;
	struct tt_error err;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char path[512];
		snprintf(path, sizeof path, FX "%s", cases[i].file);
		assert_int_equal(tt_import_detect(path, &f, &err), TT_OK);
		assert_int_equal(f, cases[i].f);
	}
	/* A run is a run; a text of no tool is nothing we import. */
	assert_int_equal(tt_import_detect(TT_FIXTURES "/runs/sample.tar.zst", &f, &err), TT_OK);
	assert_int_equal(f, TT_IMPORT_AUTO);
	assert_int_equal(tt_import_detect(FX "README.md", &f, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "README.md"));
	assert_int_equal(tt_import_format_parse("genai-perf", &f, &err), TT_OK);
	assert_int_equal(f, TT_IMPORT_GENAI_PERF);
	assert_string_equal(tt_import_format_name(f), "genai-perf");
	assert_int_equal(tt_import_format_parse("nope", &f, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* A foreign file opens as a run whose private directory goes with it. */
static void test_import_open(void **state)
{
	char tmp[] = "/tmp/tt-test-import-open-XXXXXX";
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	struct tt_run *run;
	struct tt_error err;
	const char *path = FX "genai-perf/llama3-8b-concurrency1-profile_export.json";

	(void)state;
	assert_non_null(mkdtemp(tmp));
	setenv("TMPDIR", tmp, 1);
	assert_int_equal(tt_import_open(path, NULL, &run, &err), TT_OK);
	assert_string_equal(tt_run_path(run), path);
	assert_int_equal(tt_run_manifest(run)->n_sources, 1);
	assert_string_equal(tt_run_manifest(run)->sources[0].format, "genai-perf");
	assert_int_equal(count_entries(tmp), 1); /* the private run */
	tt_run_free(run);
	assert_int_equal(count_entries(tmp), 0);
	/* A run opens as tt_run_open opens it. */
	assert_int_equal(tt_import_open(TT_FIXTURES "/runs/sample.tar.zst", NULL, &run, &err), TT_OK);
	assert_int_equal(tt_run_manifest(run)->n_sources, 0);
	tt_run_free(run);
	/* A bad foreign file fails and leaves nothing. */
	assert_int_equal(tt_import_memory("{\"experiments\": [{}]}", 21, "x.json", NULL,
					  "/nonexistent-dir/run", &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "cannot create"));
	if (saved) {
		setenv("TMPDIR", saved, 1);
		free(saved);
	} else {
		unsetenv("TMPDIR");
	}
	assert_int_equal(rmdir(tmp), 0);
}

/* Issue 20.1: each record's error text must survive the record array's
 * growth.  Seven copies of the AIPerf export (700 records, 77 cancelled)
 * passed 256 records, where the array moved and left the error pointers in
 * freed memory (garbage error text from 257 records, a crash near 700). */
struct err_count {
	size_t requests, failed, cancelled;
};

static int count_errors(void *ctx, const struct tt_request *r)
{
	struct err_count *c = ctx;

	c->requests++;
	if (r->error) {
		c->failed++;
		c->cancelled += strcmp(r->error, "cancelled by AIPerf") == 0;
	}
	return 0;
}

static void test_aiperf_many_records(void **state)
{
	char dir[] = "/tmp/tt-test-import-many-XXXXXX", run_dir[64];
	FILE *f = fopen(FX "aiperf/run1-profile_export.jsonl", "rb");
	char *one, *many;
	long len;
	struct tt_error err;
	struct tt_run *run;
	struct err_count c = {0, 0, 0};
	struct tt_trace_visitor v = {.ctx = &c, .on_request = count_errors};

	(void)state;
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	one = malloc((size_t)len);
	many = malloc((size_t)len * 7);
	assert_int_equal(fread(one, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	for (int i = 0; i < 7; i++)
		memcpy(many + (size_t)len * (size_t)i, one, (size_t)len);
	assert_non_null(mkdtemp(dir));
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	assert_int_equal(tt_import_memory(many, (size_t)len * 7, "many.jsonl", NULL, run_dir, &err),
			 TT_OK);
	assert_int_equal(tt_run_open(run_dir, &run, &err), TT_OK);
	assert_int_equal(tt_run_read_cell(run, 0, &v, &err), TT_OK);
	assert_int_equal(c.requests, 700);
	assert_int_equal(c.failed, 77);
	assert_int_equal(c.cancelled, 77);
	tt_run_free(run);
	free(one);
	free(many);
	snprintf(run_dir, sizeof run_dir, "rm -rf '%s'", dir);
	assert_int_equal(system(run_dir), 0);
}

/* A newer schema than known: imported, with a warning that says so. */
static void test_newer_schema_warns(void **state)
{
	static const char doc[] =
		"{\"metadata\": {\"version\": \"0.5.1\", \"context_lengths\": [0], "
		"\"concurrency_levels\": [1], \"some_new_member\": {\"x\": 1}}, "
		"\"results\": [{\"concurrency\": 1, \"context_tokens\": 0, \"aggregate_tps\": 50.5}]}";
	char dir[] = "/tmp/tt-test-import-new-XXXXXX", run_dir[64], p[128];
	struct tt_error err;
	struct tt_run *run;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	assert_int_equal(tt_import_memory(doc, sizeof doc - 1, "new.json", NULL, run_dir, &err),
			 TT_WARN);
	assert_int_equal(err.kind, TT_EVERSION);
	assert_non_null(strstr(err.msg, "0.5.1 is newer than 0.4.29"));
	assert_int_equal(tt_run_open(run_dir, &run, &err), TT_OK);
	assert_string_equal(tt_run_manifest(run)->sources[0].tool_version, "0.5.1");
	tt_run_free(run);
	snprintf(p, sizeof p, "%s/manifest.json", run_dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/cells", run_dir);
	rmdir(p);
	rmdir(run_dir);
	assert_int_equal(rmdir(dir), 0);
}

/* The tool's running rule (formats/import-llm-inference-bench.md "Status"):
 * 0.9 running at C = 1 is Valid, as the seed prints 120K x 1; 1.8 at C = 2
 * is Requests queued, as the seed prints 120K x 2. */
static void test_running_rule_not_at_one(void **state)
{
	static const char doc[] =
		"{\"metadata\": {\"version\": \"0.4.17\", \"context_lengths\": [0], "
		"\"concurrency_levels\": [1, 2]}, \"results\": ["
		"{\"concurrency\": 1, \"context_tokens\": 0, \"aggregate_tps\": 50.5, \"avg_running_reqs\": 0.9},"
		"{\"concurrency\": 2, \"context_tokens\": 0, \"aggregate_tps\": 90.5, \"avg_running_reqs\": 1.8}]}";
	char dir[] = "/tmp/tt-test-import-rule-XXXXXX", run_dir[64], cmd[160];
	struct tt_error err;
	struct tt_run *run;
	struct tt_report *rep = NULL;
	int seen = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(run_dir, sizeof run_dir, "%s/run", dir);
	assert_true(tt_import_memory(doc, sizeof doc - 1, "rule.json", NULL, run_dir, &err) <= TT_WARN);
	assert_int_equal(tt_run_open(run_dir, &run, &err), TT_OK);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++) {
		const struct tt_cell_figures *f = &rep->cells[i];
		if (f->phase != TT_PHASE_DECODE)
			continue;
		if (f->concurrency == 1)
			assert_int_equal(f->status, TT_STATUS_VALID);
		else
			assert_int_equal(f->status, TT_STATUS_QUEUED);
		seen++;
	}
	assert_int_equal(seen, 2);
	tt_report_free(rep);
	tt_run_free(run);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Issue 25.2: the endpoint is the file's.  Before, the run writer's copy of
 * the manifest had the default "completions" already, and no file could
 * set "chat". */
static void test_endpoint_from_file(void **state)
{
	static const struct {
		const char *doc, *endpoint;
	} cases[] = {
		{"{\"endpoint\":\"v1/chat/completions\",\"experiments\":[{\"experiment\":"
		 "{\"mode\":\"concurrency\",\"value\":1},\"requests\":[]}]}", "chat"},
		{"{\"args\":{\"request_format\":\"/v1/chat/completions\"},\"benchmarks\":[{"
		 "\"config\":{\"strategy\":{\"type_\":\"synchronous\"}},\"requests\":{"
		 "\"successful\":[{\"prompt_tokens\":8,\"output_tokens\":4,\"info\":{\"timings\":{"
		 "\"request_start\":100.0,\"first_token_iteration\":100.05,"
		 "\"last_token_iteration\":100.1,\"request_end\":100.1}}}]}}]}",
		 "chat"},
		{"{\"backend\":\"openai-chat\",\"mean_ttft_ms\":5,\"completed\":1,\"max_concurrency\":1}", "chat"},
		{"{\"backend\":\"vllm\",\"mean_ttft_ms\":5,\"completed\":1,\"max_concurrency\":1}", "completions"},
		{"{\"metadata\":{\"context_lengths\":[0],\"concurrency_levels\":[1]},"
		 "\"results\":[]}", "chat"},
	};
	char dir[] = "/tmp/tt-test-import-ep-XXXXXX", run_dir[64], cmd[160];
	struct tt_error err;
	struct tt_run *run;

	(void)state;
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(run_dir, sizeof run_dir, "%s/run%zu", dir, i);
		if (tt_import_memory(cases[i].doc, strlen(cases[i].doc), "ep.json", NULL, run_dir,
				     &err) > TT_WARN)
			fail_msg("%s: %s", cases[i].doc, err.msg);
		assert_int_equal(tt_run_open(run_dir, &run, &err), TT_OK);
		if (strcmp(tt_run_manifest(run)->endpoint, cases[i].endpoint) != 0)
			fail_msg("%s: endpoint %s, wanted %s", cases[i].doc,
				 tt_run_manifest(run)->endpoint, cases[i].endpoint);
		tt_run_free(run);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_11_round_trip),
		cmocka_unit_test(test_manifest_11_bad_types),
		cmocka_unit_test(test_reported_figures),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_import_open),
		cmocka_unit_test(test_newer_schema_warns),
		cmocka_unit_test(test_aiperf_many_records),
		cmocka_unit_test(test_running_rule_not_at_one),
		cmocka_unit_test(test_endpoint_from_file),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
