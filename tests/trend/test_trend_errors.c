/* tokentrace trend under allocation failure: every allocation of reading,
 * analysing and writing a trend refused in turn must end as TT_ENOMEM,
 * never as a success with less, nor as another kind of failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"
#include "tokentrace/trend.h"
#include "alloc_fail.h"
#include "testutil.h"

static const char profile[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n";

#define RUNS 8

/* Everything a trend does, from the paths to every format; the history's
 * figures are doubled with a 10 % step so that change points are written. */
static enum tt_code trend_everything(char paths[RUNS][4096], struct tt_error *err)
{
	static const enum tt_format fmts[] = {TT_FORMAT_TERM, TT_FORMAT_MD, TT_FORMAT_CSV,
					      TT_FORMAT_JSON, TT_FORMAT_HTML};
	struct tt_trend_opts o;
	struct tt_trend *t = NULL;
	struct tt_trend_result *res = NULL;
	struct tt_buf out;
	enum tt_code rc;

	tt_buf_init(&out, 0);
	tt_trend_opts_init(&o);
	o.order = TT_TREND_ORDER_GIVEN;
	rc = tt_trend_create(&o, &t, err);
	for (int i = 0; i < RUNS && rc == TT_OK; i++) {
		struct tt_run *run = NULL;
		rc = tt_run_open(paths[i], &run, err);
		if (rc == TT_OK)
			rc = tt_trend_add_run(t, run, paths[i], NULL, err);
		tt_run_free(run);
	}
	for (int i = 0; i < 8 && rc == TT_OK; i++) { /* a step after 8 more runs */
		struct tt_trend_cell c;
		struct tt_trend_run r;
		char path[32];
		memset(&c, 0, sizeof c);
		memset(&r, 0, sizeof r);
		snprintf(c.id, sizeof c.id, "decode-8192x1");
		c.phase = TT_PHASE_DECODE;
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
			c.v[f] = 100 + (i % 3) * 0.1;
		snprintf(path, sizeof path, "step-%d", i);
		r.path = path;
		r.cells = &c;
		r.n_cells = 1;
		rc = tt_trend_add_figures(t, &r, err);
	}
	if (rc == TT_OK)
		rc = tt_trend_analyze(t, &res, err);
	for (size_t k = 0; k < sizeof fmts / sizeof *fmts && rc == TT_OK; k++)
		rc = tt_trend_render(res, fmts[k], NULL, &out, err);
	tt_buf_release(&out);
	tt_trend_result_free(res);
	tt_trend_free(t);
	return rc;
}

static void test_trend_never_masks_oom(void **state)
{
	char *dir = tu_tmpdir("trend-errors"), paths[RUNS][4096];
	struct tt_profile *p;
	struct tt_synth_opts o;
	struct tt_error err;
	long k, refused = 0;

	(void)state;
	assert_int_equal(tt_profile_parse(profile, "p.csv", &p, &err), TT_OK);
	tt_synth_opts_init(&o);
	o.max_tokens = 64;
	for (int i = 0; i < RUNS; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/r%d", dir, i);
		o.seed = (uint64_t)i + 1;
		assert_int_equal(tt_synth_run(p, paths[i], &o, NULL, &err), TT_OK);
	}
	tt_profile_free(p);
	tt_error_clear(&err);
	assert_int_equal(trend_everything(paths, &err), TT_OK);
	for (k = 0;; k++) {
		enum tt_code rc;
		tt_alloc_failed = 0;
		tt_alloc_allow = k;
		tt_error_clear(&err);
		rc = trend_everything(paths, &err);
		tt_alloc_allow = -1;
		if (tt_alloc_failed == 0) { /* every allocation was allowed: done */
			assert_int_equal(rc, TT_OK);
			break;
		}
		refused++;
		if (rc != TT_FAILED || err.kind != TT_ENOMEM)
			fail_msg("allocation %ld refused: %s (kind %s): '%s'", k, tt_strerror(rc),
				 tt_kind_str(err.kind), err.msg);
		assert_true(k < 1000000);
	}
	printf("refused each of %ld allocations in turn: every one failed as out of memory\n",
	       refused);
	assert_true(refused > 20);
	tu_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trend_never_masks_oom),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
