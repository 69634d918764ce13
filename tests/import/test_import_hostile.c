/* Hostile values in foreign files (issue 20 points 2 and 3): huge and
 * negative times are refused naming the member and the limit (no signed
 * overflow, no cast of an out-of-range double: UBSan aborted on 1e300,
 * -1.7e18 and 9.3e18 before), values beyond the run reader's limits are
 * refused at import, and whatever imports, the reader reads (every seed of
 * the importers' fuzz corpora, the hostile ones of
 * tests/fuzz/corpus/make_hostile_seeds.py among them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/import.h"
#include "tokentrace/run.h"

static char tmp[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "/tmp/tt-test-hostile-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return system(cmd);
}

static void rm_run(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s/run'", tmp);
	assert_int_equal(system(cmd), 0);
}

/* Import doc as format f: the code, the message in err. */
static enum tt_code import_doc(enum tt_import_format f, const char *doc, size_t len,
			       struct tt_error *err)
{
	struct tt_import_opts o = {.from = f};
	char dir[96];

	snprintf(dir, sizeof dir, "%s/run", tmp);
	rm_run();
	tt_error_clear(err);
	return tt_import_memory(doc, len, "hostile", &o, dir, err);
}

static void expect_refused(enum tt_import_format f, const char *doc, const char *what)
{
	struct tt_error err;
	enum tt_code rc = import_doc(f, doc, strlen(doc), &err);

	if (rc != TT_FAILED || !strstr(err.msg, what))
		fail_msg("%s: %s\nwanted a failure naming '%s', got %d: %s", tt_import_format_name(f),
			 doc, what, rc, err.msg);
	assert_int_equal(err.kind, TT_EFORMAT);
}

static const char *const hostile[] = {"1e300", "-1.7e18", "9.3e18"};

#define AIPERF_REC(start, end, ttft, gap, isl) \
	"{\"metadata\":{\"request_start_ns\":" start ",\"request_end_ns\":" end "}," \
	"\"metrics\":{\"time_to_first_token\":{\"value\":" ttft ",\"unit\":\"ms\"}," \
	"\"inter_chunk_latency\":{\"value\":[10," gap "],\"unit\":\"ms\"}," \
	"\"output_sequence_length\":{\"value\":3,\"unit\":\"tokens\"}," \
	"\"input_sequence_length\":{\"value\":" isl ",\"unit\":\"tokens\"}}}\n"
#define T0 "1759522419000000000"
#define T1 "1759522419100000000"

/* Each hostile time in each importer's time members: refused, naming the
 * member and the range. */
static void test_huge_times(void **state)
{
	char doc[2048];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		const char *h = hostile[i];
		/* AIPerf: start, end, TTFT, a gap; the start is also an origin */
		snprintf(doc, sizeof doc, AIPERF_REC("%s", T1, "50", "10", "512"), h);
		if (i != 1)
			expect_refused(TT_IMPORT_AIPERF, doc, "metadata.request_start_ns: ");
		snprintf(doc, sizeof doc, AIPERF_REC(T0, "%s", "50", "10", "512"), h);
		if (i != 1)
			expect_refused(TT_IMPORT_AIPERF, doc, "metadata.request_end_ns: ");
		snprintf(doc, sizeof doc, AIPERF_REC(T0, T1, "%s", "10", "512"), h);
		expect_refused(TT_IMPORT_AIPERF, doc, "metrics.time_to_first_token.value: ");
		snprintf(doc, sizeof doc, AIPERF_REC(T0, T1, "50", "%s", "512"), h[0] == '-' ? h + 1 : h);
		expect_refused(TT_IMPORT_AIPERF, doc, "metrics.inter_chunk_latency.value[1]: ");
		snprintf(doc, sizeof doc, AIPERF_REC(T0, T1, "50", "10", "%s"), h);
		expect_refused(TT_IMPORT_AIPERF, doc, "metrics.input_sequence_length.value: ");
		/* a raw export's response time, far from start_perf_ns */
		snprintf(doc, sizeof doc, "{\"metadata\":{\"request_start_ns\":" T0 "},"
			 "\"start_perf_ns\":0,\"responses\":[{\"perf_ns\":%s,\"text\":\"x\"}]}\n", h);
		expect_refused(TT_IMPORT_AIPERF, doc, "responses[0].perf_ns: ");
		/* vLLM: a send time, a TTFT, a gap, an input length */
		snprintf(doc, sizeof doc, "{\"completed\":2,\"max_concurrency\":1,"
			 "\"start_times\":[1,%s],\"ttfts\":[0.1,0.1],\"itls\":[[0.1],[0.1]],"
			 "\"output_lens\":[2,2]}", h);
		expect_refused(TT_IMPORT_VLLM, doc, "start_times[1]");
		snprintf(doc, sizeof doc, "{\"completed\":2,\"max_concurrency\":1,"
			 "\"start_times\":[1,2],\"ttfts\":[0.1,%s],\"itls\":[[0.1],[0.1]],"
			 "\"output_lens\":[2,2]}", h[0] == '-' ? h + 1 : h);
		expect_refused(TT_IMPORT_VLLM, doc, "ttfts[1]: ");
		snprintf(doc, sizeof doc, "{\"completed\":2,\"max_concurrency\":1,"
			 "\"start_times\":[1,2],\"ttfts\":[0.1,0.1],\"itls\":[[0.1],[%s]],"
			 "\"output_lens\":[2,2]}", h[0] == '-' ? h + 1 : h);
		expect_refused(TT_IMPORT_VLLM, doc, "itls[1]: ");
		snprintf(doc, sizeof doc, "{\"completed\":1,\"max_concurrency\":1,"
			 "\"total_input_tokens\":%s}", h);
		expect_refused(TT_IMPORT_VLLM, doc, "context: ");
		/* GenAI-Perf: a request's timestamp, a response's, a window */
		snprintf(doc, sizeof doc, "{\"experiments\":[{\"experiment\":{\"mode\":\"concurrency\","
			 "\"value\":1},\"requests\":[{\"timestamp\":%s,\"response_timestamps\":[],"
			 "\"response_outputs\":[]}]}]}", h);
		expect_refused(TT_IMPORT_GENAI_PERF, doc, "requests[0]");
		snprintf(doc, sizeof doc, "{\"experiments\":[{\"experiment\":{\"mode\":\"concurrency\","
			 "\"value\":1},\"requests\":[{\"timestamp\":" T0 ",\"response_timestamps\":[%s],"
			 "\"response_outputs\":[\"x\"]}]}]}", h);
		expect_refused(TT_IMPORT_GENAI_PERF, doc, "requests[0]");
		/* GuideLLM: a request's start and end, Unix seconds */
		snprintf(doc, sizeof doc, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":"
			 "\"synchronous\"}},\"requests\":{\"successful\":[{\"output_tokens\":1,"
			 "\"info\":{\"timings\":{\"request_start\":%s,\"request_end\":1759522420}}}]}}]}", h);
		expect_refused(TT_IMPORT_GUIDELLM, doc, "request_start: ");
		snprintf(doc, sizeof doc, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":"
			 "\"synchronous\"}},\"requests\":{\"successful\":[{\"output_tokens\":1,"
			 "\"info\":{\"timings\":{\"request_start\":1759522419,\"request_end\":%s}}}]}}]}", h);
		expect_refused(TT_IMPORT_GUIDELLM, doc, "request_end: ");
		snprintf(doc, sizeof doc, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":"
			 "\"synchronous\"}},\"requests\":{\"successful\":[{\"prompt_tokens\":%s,"
			 "\"info\":{\"timings\":{\"request_start\":1759522419}}}]}}]}", h);
		expect_refused(TT_IMPORT_GUIDELLM, doc, "prompt_tokens: ");
		/* llm-inference-bench: max_tokens (C x (context + max_tokens)) */
		snprintf(doc, sizeof doc, "{\"metadata\":{\"max_tokens\":%s,\"context_lengths\":[0],"
			 "\"concurrency_levels\":[1]},\"results\":[]}", h);
		expect_refused(TT_IMPORT_LIB_JSON, doc, "metadata.max_tokens: ");
		snprintf(doc, sizeof doc, "# Speed test matrix\n\nm on g\n\n| Phase | Context | Status |\n"
			 "|---|---|---|\n| Prefill | %s | Valid |\n", h);
		expect_refused(TT_IMPORT_LIB_REPORT, doc, "line 7: column 'Context'");
	}
	/* Two AIPerf records each in range, 7.8e18 ns apart: no trace holds it. */
	expect_refused(TT_IMPORT_AIPERF, AIPERF_REC("-3.9e18", "-3.9e18", "1", "1", "1")
			       AIPERF_REC("3.9e18", "3.9e18", "1", "1", "1"),
		       "line 2: its schedule is 7800000000000000000 ns from the run's origin");
	rm_run();
}

/* Values the run reader refuses or skips (formats/run-v1.md 2.1, 2.2, 3.5):
 * refused at import, naming the member and the limit. */
static void test_reader_limits(void **state)
{
	static const struct {
		enum tt_import_format f;
		const char *doc, *what;
	} cases[] = {
		{TT_IMPORT_VLLM, "{\"completed\":1,\"max_concurrency\":1e9}",
		 "max_concurrency: 1e+09 is outside 1..1e+06"},
		{TT_IMPORT_GENAI_PERF, "{\"experiments\":[{\"experiment\":{\"mode\":\"concurrency\","
				       "\"value\":1e9},\"requests\":[]}]}",
		 "experiment.value: 1e+09 is outside 1..1e+06"},
		{TT_IMPORT_LIB_JSON, "{\"metadata\":{\"context_lengths\":[0],\"concurrency_levels\":"
				     "[1000000000]},\"results\":[]}",
		 "metadata.concurrency_levels[0]: an integer in 1..1000000 expected"},
		{TT_IMPORT_LIB_JSON, "{\"metadata\":{\"context_lengths\":[-1],\"concurrency_levels\":"
				     "[1]},\"results\":[]}",
		 "metadata.context_lengths[0]: an integer in 0..1000000000 expected"},
		{TT_IMPORT_LIB_JSON, "{\"metadata\":{\"context_lengths\":[0],\"concurrency_levels\":"
				     "[1]},\"results\":[],\"prefill\":{\"2000000000000000\":{}}}",
		 "prefill.2000000000000000: a context length (integer in 0..1e15)"},
		{TT_IMPORT_LIB_JSON, "{\"metadata\":{\"context_lengths\":[0],\"concurrency_levels\":"
				     "[1]},\"results\":[{\"concurrency\":1,\"context_tokens\":0,"
				     "\"aggregate_tps\":1,\"ttft_p50\":1e308}]}",
		 "reported ttft_ms_p50 is not a finite number"},
		{TT_IMPORT_LIB_REPORT, "# Speed test matrix\n\nm on g\n\n| Phase | Context | Requests at once | "
				       "Status |\n|---|---|---|---|\n| Sustained decode | 1K | "
				       "1000000000 | Valid |\n",
		 "column 'Requests at once': '1000000000' is not a count in 1..1000000"},
		/* a chunk of more than 2^20 tokens: two chunks, 5 M tokens */
		{TT_IMPORT_VLLM, "{\"completed\":1,\"max_concurrency\":1,\"start_times\":[1],"
				 "\"ttfts\":[0.1],\"itls\":[[0.1]],\"output_lens\":[5000000]}",
		 "request 0: a chunk of 4999999 tokens: more than the 2^20"},
		{TT_IMPORT_GUIDELLM, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":"
				     "\"synchronous\"}},\"requests\":{\"successful\":[{\"output_tokens\":"
				     "5000000,\"info\":{\"timings\":{\"request_start\":1759522419,"
				     "\"first_token_iteration\":1759522419.1,\"last_token_iteration\":"
				     "1759522420}}}]}}]}",
		 "successful[0]: a chunk of 4999999 tokens: more than the 2^20"},
		{TT_IMPORT_AIPERF, AIPERF_REC(T0, T1, "50", "10", "1e300"),
		 "metrics.input_sequence_length.value: 1e+300 is outside 0..1e+12 tokens"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_refused(cases[i].f, cases[i].doc, cases[i].what);
	/* 2^20 + 1 chunks in one AIPerf record (the reader skips a request of
	 * more than 2^20; import took up to 1e7). */
	{
		size_t n = ((size_t)1 << 20), len = 0;
		char *doc = malloc(n * 2 + 512);
		len += (size_t)sprintf(doc, "{\"metadata\":{\"request_start_ns\":" T0 "},\"metrics\":"
				       "{\"time_to_first_token\":{\"value\":1},"
				       "\"inter_chunk_latency\":{\"value\":[");
		for (size_t k = 0; k < n; k++)
			doc[len++] = '1', doc[len++] = ',';
		len += (size_t)sprintf(doc + len - 1, "]}}}\n") - 1;
		expect_refused(TT_IMPORT_AIPERF, doc, "line 1: 1048577 chunks or nan tokens: more than "
			       "the 2^20 chunks");
		free(doc);
	}
	rm_run();
}

/* Issue 25.3: values a run could hold but no benchmark gives stop the
 * import (docs/import.md "Limits"), naming the member: before, a last token
 * a year late gave a Valid cell at 0.0 tok/s over 31.5 million s, and an
 * output_throughput of 1e308 a Valid cell printed with 48 digits. */
static void test_implausible(void **state)
{
	static const struct {
		enum tt_import_format f;
		const char *doc, *what;
	} cases[] = {
		/* GuideLLM: a last token and end a year (31,536,000 s) late */
		{TT_IMPORT_GUIDELLM, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":"
				     "\"synchronous\"}},\"requests\":{\"successful\":[{\"output_tokens\":"
				     "64,\"info\":{\"timings\":{\"request_start\":1759522419,"
				     "\"first_token_iteration\":1759522419.1,\"last_token_iteration\":"
				     "1791058420,\"request_end\":1791058420}}}]}}]}",
		 "successful[0]: the request runs 31536001 s from its send to its end, more than "
		 "the 24 h"},
		/* vLLM: a TTFT of 1e9 s (within 2^60 ns), a gap of 25 h */
		{TT_IMPORT_VLLM, "{\"completed\":1,\"max_concurrency\":1,\"start_times\":[1],"
				 "\"ttfts\":[1e8],\"itls\":[[0.1]],\"output_lens\":[2]}",
		 "request 0: the request runs 100000000 s from its send to its end"},
		{TT_IMPORT_VLLM, "{\"completed\":1,\"max_concurrency\":1,\"start_times\":[1],"
				 "\"ttfts\":[0.1],\"itls\":[[90000]],\"output_lens\":[2]}",
		 "more than the 24 h"},
		/* GenAI-Perf: a response a year after its request (ns) */
		{TT_IMPORT_GENAI_PERF, "{\"experiments\":[{\"experiment\":{\"mode\":\"concurrency\","
				       "\"value\":1},\"requests\":[{\"timestamp\":1730397254668862606,"
				       "\"response_timestamps\":[1730397254695171102,"
				       "1761933254695171102],\"response_outputs\":[\"a\",\"b\"]}]}]}",
		 "requests[0]: the request runs 31536000 s"},
		/* AIPerf: an end a year after the start */
		{TT_IMPORT_AIPERF, AIPERF_REC(T0, "1791058419000000000", "50", "10", "512"),
		 "line 1: the request runs 31536000 s"},
		/* aggregates */
		{TT_IMPORT_VLLM, "{\"completed\":8,\"max_concurrency\":2,\"mean_ttft_ms\":5,"
				 "\"output_throughput\":1e308}",
		 "output_throughput (total_tok_s): 1e+308 is outside 0..1e+09 tok/s"},
		{TT_IMPORT_VLLM, "{\"completed\":8,\"max_concurrency\":2,\"mean_ttft_ms\":-5}",
		 "mean_ttft_ms (ttft_ms_mean): -5 is outside 0..8.64e+07 ms"},
		{TT_IMPORT_VLLM, "{\"completed\":1e300,\"max_concurrency\":2,\"mean_ttft_ms\":5}",
		 "completed (completed): 1e+300 is outside 0..1e+12"},
		{TT_IMPORT_LIB_JSON, "{\"metadata\":{\"context_lengths\":[0],\"concurrency_levels\":"
				     "[1]},\"results\":[{\"concurrency\":1,\"context_tokens\":0,"
				     "\"aggregate_tps\":1,\"queue_fraction\":7}]}",
		 "results[0].queue_fraction (waiting_share): 7 is outside 0..1"},
		{TT_IMPORT_LIB_REPORT, "# Speed test matrix\n\nm on g\n\n| Phase | Context | "
				       "Requests at once | Status | Total tok/s |\n|---|---|---|---|---|\n"
				       "| Sustained decode | 1K | 1 | Valid | 1e300 |\n",
		 "total_tok_s: 1e+300 is outside 0..1e+09 tok/s"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		expect_refused(cases[i].f, cases[i].doc, cases[i].what);
	rm_run();
}

/* Issue 25.4: messages that say what is wrong.  Before: NaN was "not valid
 * JSON" alone, and a pretty-printed record under --from aiperf "truncated
 * at line 1, column 2". */
static void test_messages(void **state)
{
	(void)state;
	expect_refused(TT_IMPORT_VLLM, "{\"completed\": NaN, \"mean_ttft_ms\": 5}",
		       "line 1, column 15 (byte 14): NaN, which JSON has no number for");
	expect_refused(TT_IMPORT_VLLM, "{\"completed\": 1, \"mean_ttft_ms\": -Infinity}",
		       "-Infinity, which JSON has no number for");
	expect_refused(TT_IMPORT_AIPERF, "{\n  \"metadata\": {\"request_start_ns\": 1},\n"
		       "  \"metrics\": {}\n}\n", "one JSON value over several lines (pretty-printed)");
	/* a summary without a figure read */
	expect_refused(TT_IMPORT_AIPERF, "{\"records\": {}, \"input_config\": {}}",
		       "records: a summary with none of the figures read");
	rm_run();
}

static const struct {
	const char *dir;
	enum tt_import_format f;
} corpora[] = {
	{"import-lib_json", TT_IMPORT_LIB_JSON}, {"import-lib_report", TT_IMPORT_LIB_REPORT},
	{"import-vllm", TT_IMPORT_VLLM},         {"import-genai_perf", TT_IMPORT_GENAI_PERF},
	{"import-aiperf", TT_IMPORT_AIPERF},     {"import-guidellm", TT_IMPORT_GUIDELLM},
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *d;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	d = malloc((size_t)n + 1);
	assert_int_equal(fread(d, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return d;
}

/* Whatever imports, report reads: every seed of the importers' corpora,
 * imported, then opened and analysed with no damage found. */
static void test_whatever_imports_reads(void **state)
{
	size_t accepted = 0, refused = 0;

	(void)state;
	for (size_t c = 0; c < sizeof corpora / sizeof *corpora; c++) {
		char path[4096];
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof path, "%s/%s", TT_CORPUS, corpora[c].dir);
		assert_non_null(d = opendir(path));
		while ((e = readdir(d))) {
			struct tt_error err;
			struct tt_run *run;
			struct tt_report *rep = NULL;
			char dir[96];
			size_t len;
			char *doc;
			enum tt_code rc;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s/%s", TT_CORPUS, corpora[c].dir, e->d_name);
			doc = slurp(path, &len);
			rc = import_doc(corpora[c].f, doc, len, &err);
			free(doc);
			if (rc > TT_WARN) {
				refused++;
				continue;
			}
			accepted++;
			snprintf(dir, sizeof dir, "%s/run", tmp);
			rc = tt_run_open(dir, &run, &err);
			if (rc != TT_OK)
				fail_msg("%s imported but does not open: %s", path, err.msg);
			rc = tt_analyze(run, NULL, &rep, &err);
			if (rc > TT_WARN)
				fail_msg("%s imported but does not analyse: %s", path, err.msg);
			for (size_t i = 0; i < rep->n_cells; i++)
				if (rep->cells[i].status == TT_STATUS_DAMAGED)
					fail_msg("%s imported but its cell %zu reads as damaged", path, i);
			tt_report_free(rep);
			tt_run_free(run);
		}
		closedir(d);
	}
	print_message("%zu seeds imported and read, %zu refused\n", accepted, refused);
	assert_true(accepted >= 20);
	assert_true(refused >= 80);
	rm_run();
}

#if defined(__SANITIZE_ADDRESS__)
#define TT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_ASAN 1
#endif
#endif

/* Issue 20.5: a file cJSON cannot hold in the memory there is is reported
 * as out of memory (TT_ENOMEM), not as "not valid JSON".  A child process
 * limited to 300 MB more address space imports 10 M array elements (20 MB
 * of text, some 700 MB of cJSON tree).  Not under ASan (its shadow memory
 * needs the address space). */
static void test_oom_says_so(void **state)
{
	size_t n = 10000000, len = 0;
	char *doc, msg[1100] = "";
	int fds[2], status;
	pid_t pid;
	ssize_t got;

	(void)state;
#ifdef TT_ASAN
	skip();
#endif
	doc = malloc(2 * n + 64);
	assert_non_null(doc);
	len += (size_t)sprintf(doc, "{\"metadata\":{},\"results\":[");
	for (size_t i = 0; i < n; i++)
		doc[len++] = '0', doc[len++] = ',';
	len--;
	len += (size_t)sprintf(doc + len, "]}");
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tt_error err;
		struct rlimit rl;
		long pages = 0;
		FILE *f = fopen("/proc/self/statm", "r");
		if (!f || fscanf(f, "%ld", &pages) != 1)
			_exit(2);
		fclose(f);
		rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
					    ((rlim_t)300 << 20);
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(2);
		import_doc(TT_IMPORT_LIB_JSON, doc, len, &err);
		snprintf(msg, sizeof msg, "%d %s", (int)err.kind, err.msg);
		if (write(fds[1], msg, strlen(msg)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], msg, sizeof msg - 1);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	free(doc);
	assert_true(got > 0);
	msg[got] = '\0';
	if (atoi(msg) != TT_ENOMEM || !strstr(msg, "out of memory parsing 'hostile'"))
		fail_msg("wanted out of memory, got: %s", msg);
	rm_run();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_says_so),
		cmocka_unit_test(test_huge_times),
		cmocka_unit_test(test_reader_limits),
		cmocka_unit_test(test_implausible),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_whatever_imports_reads),
	};
	return tt_cmocka_main(argc, argv, tests, setup, teardown);
}
