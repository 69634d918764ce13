/* Request traces (formats/workload-trace-v1.md): Mooncake JSONL and Azure
 * CSV read, sliced and timed; every malformed file refused with its file,
 * line and reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokentrace/run.h"
#include "tokentrace/trace.h"
#include "tokentrace/workload.h"

static enum tt_code parse(const char *text, enum tt_workload_format f,
			  const struct tt_workload_opts *o, struct tt_workload **w,
			  struct tt_error *err)
{
	return tt_workload_parse(text, strlen(text), "t.jsonl", f, o, w, err);
}

static void test_mooncake(void **state)
{
	static const char text[] =
		"{\"timestamp\": 0, \"input_length\": 1200, \"output_length\": 20, \"hash_ids\": [7, 8, 9]}\n"
		"\n"
		"{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [7, 10]}\r\n"
		"{\"timestamp\": 27.5, \"input_length\": 100, \"output_length\": 1.0, \"session_id\": \"x\"}\n"
		"{\"timestamp\": 1000, \"input_length\": 512, \"output_length\": 900, \"hash_ids\": [4294967295]}";
	struct tt_workload *w = NULL;
	struct tt_error err;
	const uint32_t *ids;
	size_t n;

	(void)state;
	assert_int_equal(parse(text, TT_WORKLOAD_AUTO, NULL, &w, &err), TT_OK);
	assert_int_equal(w->format, TT_WORKLOAD_MOONCAKE);
	assert_int_equal(w->n, 4);
	assert_int_equal(w->rows, 4);
	assert_int_equal(w->reqs[0].t_ns, 0);
	assert_int_equal(w->reqs[1].t_ns, 0);
	assert_int_equal(w->reqs[2].t_ns, 27500000);
	assert_int_equal(w->reqs[3].t_ns, 1000000000);
	assert_int_equal(w->reqs[1].line, 3);
	assert_int_equal(w->reqs[2].output, 1);
	ids = tt_workload_blocks(w, 1, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 7);
	assert_int_equal(ids[1], 10);
	tt_workload_blocks(w, 2, &n);
	assert_int_equal(n, 0);
	ids = tt_workload_blocks(w, 3, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 4294967295u);
	assert_int_equal(w->input_total, 2412);
	assert_int_equal(w->span_ns, 1000000000);
	tt_workload_free(w);

	/* a slice, sped up, its output capped */
	{
		struct tt_workload_opts o = {.start_s = 0.01, .duration_s = 2, .speedup = 2,
					     .output_cap = 100};
		assert_int_equal(parse(text, TT_WORKLOAD_MOONCAKE, &o, &w, &err), TT_OK);
		assert_int_equal(w->n, 2);
		assert_int_equal(w->rows, 4);
		assert_int_equal(w->reqs[0].line, 4);
		assert_int_equal(w->reqs[0].t_ns, 0);
		assert_int_equal(w->reqs[1].t_ns, (1000000000 - 27500000) / 2);
		assert_int_equal(w->reqs[1].output, 100);
		assert_int_equal(w->output_capped, 1);
		ids = tt_workload_blocks(w, 1, &n);
		assert_int_equal(n, 1);
		assert_int_equal(ids[0], 4294967295u);
		tt_workload_free(w);
	}
}

static void test_azure(void **state)
{
	static const char text[] =
		"TIMESTAMP,ContextTokens,GeneratedTokens\n"
		"2023-11-16 18:15:46.6805900,374,44\n"
		"2023-11-16 18:15:46.6805900,396,109\n"
		"\"2023-11-16 18:15:50.9951690\",879,  20\n"
		"2023-11-16T18:16:00Z,31,1\n"
		"2023-11-16 19:16:00.5+01:00,31,1\n";
	struct tt_workload *w = NULL;
	struct tt_error err;

	(void)state;
	assert_int_equal(parse(text, TT_WORKLOAD_AUTO, NULL, &w, &err), TT_OK);
	assert_int_equal(w->format, TT_WORKLOAD_AZURE);
	assert_int_equal(w->n, 5);
	assert_int_equal(w->reqs[1].t_ns, 0);
	assert_int_equal(w->reqs[2].t_ns, 4314579000);
	assert_int_equal(w->reqs[3].t_ns, 13319410000);
	assert_int_equal(w->reqs[4].t_ns, 13819410000);
	assert_int_equal(w->reqs[2].input, 879);
	assert_int_equal(w->reqs[2].output, 20);
	assert_int_equal(w->n_blocks, 0);
	tt_workload_free(w);

	/* columns in another order, others beside them */
	assert_int_equal(parse("GeneratedTokens,Extra,ContextTokens,TIMESTAMP\n"
			       "5,a,9,2024-05-10 00:00:00.009930+00:00\n",
			       TT_WORKLOAD_AUTO, NULL, &w, &err),
			 TT_OK);
	assert_int_equal(w->reqs[0].input, 9);
	assert_int_equal(w->reqs[0].output, 5);
	tt_workload_free(w);
}

static void refused(const char *text, enum tt_workload_format f, const char *want)
{
	struct tt_workload *w = NULL;
	struct tt_error err;

	err.msg[0] = '\0';
	if (parse(text, f, NULL, &w, &err) != TT_FAILED || err.kind != TT_EFORMAT ||
	    !strstr(err.msg, want)) {
		print_error("text '%s': got '%s', wanted '%s'\n", text, err.msg, want);
		fail();
	}
	assert_null(w);
}

static void test_refused(void **state)
{
	(void)state;
	refused("", TT_WORKLOAD_AUTO, "t.jsonl:1: no request");
	refused("hello\n", TT_WORKLOAD_AUTO, "t.jsonl:1: 'hello' is neither a Mooncake");
	refused("{\"timestamp\":0,\"input_length\":5,\"output_length\":5}\n{\"timestamp\":",
		TT_WORKLOAD_AUTO, "t.jsonl:2: not a JSON object");
	refused("{\"timestamp\":0,\"input_length\":5}\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: output_length missing");
	refused("{\"input_length\":5,\"output_length\":5}\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: missing 'timestamp'");
	refused("{\"timestamp\":-1,\"input_length\":5,\"output_length\":5}\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: timestamp -1 is negative");
	refused("{\"timestamp\":5,\"input_length\":5,\"output_length\":5}\n"
		"{\"timestamp\":4,\"input_length\":5,\"output_length\":5}\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: time goes back");
	refused("{\"timestamp\":0,\"input_length\":99999999,\"output_length\":5}\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: input_length 99999999 is huge");
	refused("{\"timestamp\":0,\"input_length\":5.5,\"output_length\":5}\n", TT_WORKLOAD_AUTO,
		"input_length 5.5: expected a whole number");
	refused("{\"timestamp\":0,\"input_length\":0,\"output_length\":5}\n", TT_WORKLOAD_AUTO,
		"input_length 0: expected");
	refused("{\"timestamp\":0,\"input_length\":600,\"output_length\":5,\"hash_ids\":[1,2,3]}\n",
		TT_WORKLOAD_AUTO, "t.jsonl:1: hash_ids has more ids than the 2 blocks");
	refused("{\"timestamp\":0,\"input_length\":600,\"output_length\":5,\"hash_ids\":[-1]}\n",
		TT_WORKLOAD_AUTO, "hash_ids[0] is not a whole number");
	refused("{\"timestamp\":0,\"input_length\":6,\"output_length\":5,\"hash_ids\":\"a\"}\n",
		TT_WORKLOAD_AUTO, "hash_ids is not an array");
	/* a line of another format in a Mooncake file */
	refused("{\"timestamp\":0,\"input_length\":6,\"output_length\":5}\n"
		"2023-11-16 18:15:46.6805900,374,44\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: not a JSON object ('2023-11-16 18:15:46.6805900,374,44')");
	refused("[1]\n", TT_WORKLOAD_MOONCAKE, "t.jsonl:1: not a JSON object");
	/* Azure */
	refused("TIMESTAMP,ContextTokens\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: missing column GeneratedTokens");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n", TT_WORKLOAD_AUTO,
		"t.jsonl:1: no request in the file (only the CSV header)");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,374\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: 2 fields where the header has 3");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,374,-4\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: GeneratedTokens '-4' is not a whole number");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,9999999,4\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: ContextTokens '9999999' is huge");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023 18:15,3,4\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2: TIMESTAMP '16/11/2023 18:15' is not");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:47,3,4\n"
		"2023-11-16 18:15:46.9,3,4\n",
		TT_WORKLOAD_AUTO, "t.jsonl:3: time goes back (100.000 ms");
	refused("TIMESTAMP,ContextTokens,GeneratedTokens\n"
		"{\"timestamp\":0,\"input_length\":6,\"output_length\":5}\n",
		TT_WORKLOAD_AUTO, "t.jsonl:2:");
	{
		static const char nul[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 "
					  "18:15:47,3\0,4\n";
		struct tt_workload *w = NULL;
		struct tt_error err;
		assert_int_equal(tt_workload_parse(nul, sizeof nul - 1, "n.csv", TT_WORKLOAD_AUTO,
						   NULL, &w, &err), TT_FAILED);
		assert_non_null(strstr(err.msg, "n.csv:2: a NUL byte"));
	}
	/* a slice that holds nothing */
	{
		struct tt_workload_opts o = {.start_s = 10};
		struct tt_workload *w = NULL;
		struct tt_error err;
		assert_int_equal(parse("{\"timestamp\":0,\"input_length\":6,\"output_length\":5}\n",
				       TT_WORKLOAD_AUTO, &o, &w, &err), TT_FAILED);
		assert_non_null(strstr(err.msg, "no request in the slice"));
	}
}

static void test_load(void **state)
{
	char path[] = "/tmp/tt_workload_XXXXXX";
	int fd = mkstemp(path);
	struct tt_workload *w = NULL;
	struct tt_error err;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "{\"timestamp\": %d, \"input_length\": 1024, \"output_length\": 8, "
			   "\"hash_ids\": [1, %d]}\n", i / 3, i + 2);
	fprintf(f, "{\"timestamp\": 2000, \"input_length\": 1024}\n");
	fclose(f);
	assert_int_equal(tt_workload_load(path, TT_WORKLOAD_AUTO, NULL, &w, &err), TT_FAILED);
	if (!strstr(err.msg, ":3001: output_length missing"))
		fail_msg("%s", err.msg);
	truncate(path, 0);
	f = fopen(path, "w");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "{\"timestamp\": %d, \"input_length\": 1024, \"output_length\": 8, "
			   "\"hash_ids\": [1, %d]}\n", i / 3, i + 2);
	fclose(f);
	assert_int_equal(tt_workload_load(path, TT_WORKLOAD_AUTO, NULL, &w, &err), TT_OK);
	assert_int_equal(w->n, 3000);
	assert_int_equal(w->n_blocks, 6000);
	assert_int_equal(w->reqs[2999].t_ns, 999000000);
	tt_workload_free(w);
	unlink(path);
	assert_int_equal(tt_workload_load(path, TT_WORKLOAD_AUTO, NULL, &w, &err), TT_FAILED);
}

/* The recorded 1.5 run (fixtures/runs/workload15.tar.zst, made from
 * workload15.trace.jsonl): its settings.workload, and every request's
 * workload group equal to its line of the trace, read with the parser. */
struct fixture_check {
	const struct tt_workload *w;
	int n, bad;
	uint8_t seen[64];
};

static int check_record(void *ctx, const struct tt_request *r)
{
	struct fixture_check *fc = ctx;
	size_t n_ids;
	const uint32_t *ids;
	size_t i;

	fc->n++;
	for (i = 0; i < fc->w->n && fc->w->reqs[i].line != r->wl_line; i++)
		;
	if (!r->workload_recorded || i == fc->w->n || i >= 64 || fc->seen[i]++) {
		fc->bad++;
		return 0;
	}
	ids = tt_workload_blocks(fc->w, i, &n_ids);
	if (r->prompt_asked != fc->w->reqs[i].input || r->prompt_tokens != fc->w->reqs[i].input ||
	    r->output_asked != fc->w->reqs[i].output || r->n_blocks != n_ids ||
	    (n_ids && memcmp(r->blocks, ids, n_ids * sizeof *ids)))
		fc->bad++;
	return 0;
}

static void test_fixture_15(void **state)
{
	struct tt_run *run = NULL;
	struct tt_workload *w = NULL;
	struct tt_error err;
	const struct tt_manifest *m;
	struct fixture_check fc;
	struct tt_trace_visitor v = {&fc, check_record, NULL};

	(void)state;
	assert_int_equal(tt_workload_load(TT_FIXTURES "/runs/workload15.trace.jsonl",
					  TT_WORKLOAD_AUTO, NULL, &w, &err), TT_OK);
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/workload15.tar.zst", &run, &err), TT_OK);
	m = tt_run_manifest(run);
	assert_int_equal(m->format_minor, 5);
	assert_non_null(m->workload);
	assert_string_equal(m->workload->format, "mooncake");
	assert_string_equal(m->workload->file, "trace.jsonl");
	assert_int_equal(m->workload->requests, 40);
	assert_int_equal(m->workload->bytes, (int64_t)w->bytes);
	assert_int_equal(m->n_cells, 1);
	memset(&fc, 0, sizeof fc);
	fc.w = w;
	assert_int_equal(tt_run_read_cell(run, 0, &v, &err), TT_OK);
	assert_int_equal(fc.n, 40);
	assert_int_equal(fc.bad, 0);
	tt_run_free(run);
	tt_workload_free(w);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mooncake),
		cmocka_unit_test(test_azure),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_fixture_15),
	};
	return tt_cmocka_run("test_workload", tests, sizeof tests / sizeof tests[0], NULL, NULL,
			     argc - 1, argv + 1);
}
