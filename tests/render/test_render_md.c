/* Markdown: the seed report's layout and number style, escaping, order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_cmocka.h"

#include "render_fixture.h"

static void test_header(void **state)
{
	struct tt_report r;
	char *md;

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	assert_memory_equal(md, "# Speed test matrix\n\n", 21);
	fx_contains(md, "\n**LFM2.5-350M** on H200 NVL 141GB\n");
	fx_contains(md, "\nvllm \xc2\xb7 0.26.1rc1.dev638+g52be12cfa \xc2\xb7 BF16\n");
	fx_contains(md, "\n2 contexts (8K\xe2\x80\x93" "120K) \xc3\x97 5 concurrency levels "
			"(1\xe2\x80\x93" "64) \xc2\xb7 prefill at 8K, 120K\n");
	fx_contains(md, "## Hardware\n\n- **Type:** Discrete GPU\n- **GPU:** H200 NVL\n"
			"- **VRAM:** 141 GB\n- **OS:** linux\n\n");
	fx_contains(md, "## Engine\n\n- **Engine:** vllm\n");
	fx_contains(md, "- **Commit:** `52be12cfac0c`\n");
	fx_contains(md, "## Run\n\n- **Served model:** lfm\n");
	fx_contains(md, "- **Time per measurement:** 30 s\n");
	fx_contains(md, "- **Max output:** 4,096 tokens\n");
	fx_contains(md, "- **Decode test:** Fixed duration\n");
	fx_contains(md, "- **KV cache capacity:** 3,000,000 tokens (server-log)\n");
	free(md);
}

static void test_escaping(void **state)
{
	struct tt_report r;
	char *md;

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	/* the launch command stays verbatim inside its fence */
	fx_contains(md, "## Launch command\n\n```\nvllm serve LiquidAI/LFM2.5-350M --api-key "
			"<redacted> | tee `log`\n```\n");
	/* other run text is escaped */
	fx_contains(md, "- **rack:** row 3 \\| slot \\*7\\*\n");
	fx_contains(md, "\"max 3\" \\| threshold 5%");
	free(md);
}

static void test_fence_longer_than_backticks(void **state)
{
	struct tt_report r;
	struct tt_note n[1] = {{"launch_command", "run ```x``` `y`"}};
	char *md;

	(void)state;
	fx_report(&r);
	r.manifest.notes = n;
	r.manifest.n_notes = 1;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "\n````\nrun ```x``` `y`\n````\n");
	free(md);
}

static void test_prefill_and_matrix(void **state)
{
	struct tt_report r;
	char *md, line[512];

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## Prefill\n\nprompt tok/s by context length\n\n"
			"| Context | Prompt tok/s | TTFT |\n|---|---|---|\n"
			"| 8K | 143.1K | 57 ms |\n| 120K | 116.6K | 1,036 ms |\n");
	fx_contains(md, "## Sustained decode\n\ntotal tok/s \xc2\xb7 rows are context length, "
			"columns are simultaneous requests\n\n"
			"| Context | 1 | 2 | 16 | 32 | 64 |\n|---|---|---|---|---|---|\n");
	fx_contains(md, "| 8K | 959.9 \xc2\xb7 47 ms TTFT | 1,819.2 \xc2\xb7 48 ms TTFT | "
			"10.3K \xc2\xb7 60 ms TTFT | 15K \xc2\xb7 161 ms TTFT | "
			"1.5M \xc2\xb7 290 ms TTFT |\n");
	snprintf(line, sizeof line,
		 "| 120K | 2,886.0 \xc2\xb7 8,393 ms TTFT | 1,113.1 \xc2\xb7 Requests queued \xc2\xb7 "
		 "417 ms TTFT | 24.3K \xc2\xb7 %s \xc2\xb7 1,212 ms TTFT \xc2\xb7 2 errors | "
		 "Over capacity | \xe2\x80\x94 |\n",
		 tt_status_name(TT_STATUS_TOO_FEW));
	fx_contains(md, line);
	free(md);
}

static void test_legend_and_evidence(void **state)
{
	struct tt_report r;
	char *md, want[1024];

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	/* one paragraph, in status order, each sentence naming its status */
	snprintf(want, sizeof want, "\n%s %s %s\n", tt_status_legend(TT_STATUS_QUEUED),
		 tt_status_legend(TT_STATUS_OVER_CAPACITY), tt_status_legend(TT_STATUS_TOO_FEW));
	fx_contains(md, want);
	fx_contains(md, "Requests queued: the server could not run all requests at once");
	fx_lacks(md, "Requests queued: Requests queued");
	/* only statuses that occur */
	snprintf(want, sizeof want, "%s: ", tt_status_name(TT_STATUS_DAMAGED));
	fx_lacks(md, want);
	snprintf(want, sizeof want, "Valid: ");
	fx_lacks(md, want);
	fx_contains(md, "- 120K context \xc3\x97 2 requests: Requests queued \xc2\xb7 waiting > 0 in "
			"12% of scrapes, \"max 3\" \\| threshold 5%\n");
	fx_contains(md, "- 120K context \xc3\x97 16 requests: Too few samples \xc2\xb7 60 output "
			"tokens \\< 100\n");
	fx_contains(md, "- 120K context \xc3\x97 32 requests: Over capacity \xc2\xb7 32 x (122880 + "
			"4096) = 4063232 > 3000000 KV tokens\n");
	free(md);
}

/* A cell of one request reads "1 request", and Short outputs has its
 * legend sentence and its evidence line. */
static void test_short_outputs_one_request(void **state)
{
	struct tt_report r;
	struct tt_cell_figures *c = NULL;
	char *md;
	(void)state;

	fx_report(&r);
	for (size_t i = 0; i < r.n_cells && !c; i++)
		if (r.cells[i].phase == TT_PHASE_DECODE && r.cells[i].concurrency == 1 &&
		    r.cells[i].status == TT_STATUS_VALID)
			c = &r.cells[i];
	assert_non_null(c);
	c->status = TT_STATUS_SHORT;
	snprintf(c->reason, sizeof c->reason, "3 of 3 requests ended before the 4096 tokens asked "
		 "(finish length; at most 1000 tokens)");
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "context \xc3\x97 1 request: Short outputs \xc2\xb7 3 of 3 requests ended "
			"before the 4096 tokens asked (finish length; at most 1000 tokens)\n");
	fx_lacks(md, "1 requests");
	fx_contains(md, tt_status_legend(TT_STATUS_SHORT));
	free(md);
}

static void test_all_measurements(void **state)
{
	struct tt_report r;
	char *md, *table, *p, want[512];
	int rows = 0;

	(void)state;
	fx_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "## All measurements\n\nLatencies are medians.");
	table = strstr(md, "| Phase | Context | Requests at once | Status | Total tok/s | "
			   "Per request tok/s | TTFT | Time between tokens | Average active "
			   "requests | Completed requests | Output tokens | Measured for |\n"
			   "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	assert_non_null(table);
	fx_contains(table, "| Prefill | 8K | 1 | Valid | 143.1K | \xe2\x80\x94 | 57 ms | "
			   "\xe2\x80\x94 | \xe2\x80\x94 | 1 | \xe2\x80\x94 | \xe2\x80\x94 |\n");
	fx_contains(table, "| Prefill | 120K | 1 | Valid | 116.6K | \xe2\x80\x94 | 1,036 ms |");
	fx_contains(table, "| Sustained decode | 8K | 1 | Valid | 959.9 | 972.0 | 47 ms | 1.0 ms | "
			   "0.9 | 7 | 28,796 | 30.0 s |\n");
	fx_contains(table, "| Sustained decode | 8K | 64 | Valid | 1.5M | 318.1 | 290 ms | 3.1 ms | "
			   "62.8 | 128 | 596,716 | 30.5 s |\n");
	fx_contains(table, "| Sustained decode | 120K | 2 | Requests queued | 1,113.1 | 588.1 | "
			   "417 ms | 1.7 ms | 1.9 | 8 | 33,392 | 30.0 s |\n");
	snprintf(want, sizeof want,
		 "| Sustained decode | 120K | 16 | %s | 24.3K | 154.1 | 1,212 ms | \xe2\x80\x94 | "
		 "15.6 | 0 | 60 | 30.0 s |\n",
		 tt_status_name(TT_STATUS_TOO_FEW));
	fx_contains(table, want);
	fx_contains(table, "| Sustained decode | 120K | 32 | Over capacity | \xe2\x80\x94 | "
			   "\xe2\x80\x94 | \xe2\x80\x94 | \xe2\x80\x94 | \xe2\x80\x94 | "
			   "\xe2\x80\x94 | \xe2\x80\x94 | \xe2\x80\x94 |\n");
	/* every row has 12 cells: 13 unescaped pipes */
	p = strchr(table, '\n') + 1;
	p = strchr(p, '\n') + 1;
	while (*p == '|') {
		int pipes = 0;
		const char *q;

		for (q = p; *q && *q != '\n'; q++)
			if (*q == '|' && (q == p || q[-1] != '\\'))
				pipes++;
		assert_int_equal(pipes, 13);
		rows++;
		p = strchr(p, '\n') + 1;
	}
	assert_int_equal(rows, FX_N_CELLS);
	/* prefill rows come first, decode by context then concurrency */
	assert_true(strstr(table, "| Prefill | 120K") < strstr(table, "| Sustained decode | 8K | 1 |"));
	assert_true(strstr(table, "| Sustained decode | 8K | 64 |") <
		    strstr(table, "| Sustained decode | 120K | 1 |"));
	free(md);
}

static void test_order_does_not_depend_on_report_order(void **state)
{
	struct tt_report r;
	struct tt_cell_figures rev[FX_N_CELLS];
	char *a, *b;
	size_t i;

	(void)state;
	fx_report(&r);
	a = fx_render(&r, TT_FORMAT_MD, 0, 0);
	for (i = 0; i < FX_N_CELLS; i++)
		rev[i] = r.cells[FX_N_CELLS - 1 - i];
	r.cells = rev;
	b = fx_render(&r, TT_FORMAT_MD, 0, 0);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

static void test_empty_report_and_bad_args(void **state)
{
	struct tt_report r;
	struct tt_buf b;
	struct tt_error err;
	char *md;

	(void)state;
	fx_report(&r);
	r.n_cells = 0;
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "# Speed test matrix");
	fx_lacks(md, "## All measurements");
	free(md);

	tt_buf_init(&b, 0);
	assert_int_equal(tt_render(NULL, TT_FORMAT_MD, NULL, &b, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	assert_int_equal(tt_render(&r, TT_FORMAT_PDF, NULL, &b, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	fx_contains(err.msg, "tt_render_pdf");
	/* html is delegated to the chart module's page */
	assert_int_equal(tt_render(&r, TT_FORMAT_HTML, NULL, &b, &err), TT_OK);
	fx_contains(b.data, "<html");
	assert_int_equal(tt_render(&r, (enum tt_format)42, NULL, &b, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	tt_buf_release(&b);
}

static void test_output_ceiling(void **state)
{
	struct tt_report r;
	struct tt_buf b;
	struct tt_error err;

	(void)state;
	fx_report(&r);
	tt_buf_init(&b, 256);
	assert_int_equal(tt_render(&r, TT_FORMAT_MD, NULL, &b, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ENOMEM);
	tt_buf_release(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_fence_longer_than_backticks),
		cmocka_unit_test(test_prefill_and_matrix),
		cmocka_unit_test(test_legend_and_evidence),
		cmocka_unit_test(test_all_measurements),
		cmocka_unit_test(test_short_outputs_one_request),
		cmocka_unit_test(test_order_does_not_depend_on_report_order),
		cmocka_unit_test(test_empty_report_and_bad_args),
		cmocka_unit_test(test_output_ceiling),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
