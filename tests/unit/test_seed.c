/* The foundation's acceptance check: a synthetic run of the seed profile
 * reports every seed figure within 1 % and every status as the seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

#include "testutil.h"

static int within(double got, double want, double tol)
{
	if (isnan(want))
		return 1;
	return fabs(got - want) <= tol * fabs(want) + 1e-9;
}

static void test_seed_reproduced(void **state)
{
	char *dir = tu_tmpdir("seed");
	char run[4200];
	struct tt_profile *p;
	struct tt_error err;
	struct tt_run *r;
	struct tt_report *rep;
	uint64_t bytes = 0, tokens = 0;
	int bad = 0;

	(void)state;
	snprintf(run, sizeof run, "%s/run", dir);
	assert_int_equal(tt_profile_load(TT_FIXTURES "/profiles/seed-matrix.csv", &p, &err), TT_OK);
	assert_int_equal(tt_synth_run(p, run, NULL, &bytes, &err), TT_OK);
	assert_int_equal(tt_run_open(run, &r, &err), TT_OK);
	assert_int_equal(tt_analyze(r, NULL, &rep, &err), TT_OK);
	assert_int_equal(rep->n_cells, tt_profile_count(p));
	for (size_t i = 0; i < tt_profile_count(p); i++) {
		const struct tt_profile_point *pt = tt_profile_at(p, i);
		const struct tt_cell_figures *f = NULL;
		for (size_t j = 0; j < rep->n_cells; j++)
			if (rep->cells[j].phase == pt->phase && rep->cells[j].context == pt->context &&
			    rep->cells[j].concurrency == pt->concurrency)
				f = &rep->cells[j];
		assert_non_null(f);
		tokens += f->output_tokens > 0 ? (uint64_t)f->output_tokens : 0;
		if (strcmp(tt_status_name(f->status), pt->status) != 0) {
			printf("status %lld x %d: want %s got %s (%s)\n", (long long)pt->context,
			       pt->concurrency, pt->status, tt_status_name(f->status), f->reason);
			bad++;
		}
		if (f->status == TT_STATUS_OVER_CAPACITY)
			continue;
#define CHECK(name, got, want)                                                               \
	if (!within(got, want, 0.01)) {                                                      \
		printf("%s %lld x %d: want %g got %g\n", name, (long long)pt->context,      \
		       pt->concurrency, (double)(want), (double)(got));                     \
		bad++;                                                                        \
	}
		CHECK("total_tok_s", f->total_tok_s, pt->total_tok_s);
		CHECK("ttft_ms", f->ttft_ms.p50, pt->ttft_ms);
		if (pt->phase == TT_PHASE_DECODE) {
			CHECK("per_request_tok_s", f->per_request_tok_s.p50, pt->per_request_tok_s);
			CHECK("tbt_ms", f->tbt_ms.p50, pt->tbt_ms);
			CHECK("avg_active", f->avg_active, pt->avg_active);
			CHECK("measured_s", f->measured_s, pt->measured_s);
			CHECK("output_tokens", (double)f->output_tokens, (double)pt->output_tokens);
			if (pt->completed >= 0)
				CHECK("completed", (double)f->completed, (double)pt->completed);
		}
	}
	printf("seed: %llu output tokens, %llu trace bytes, %.3f bytes/token\n",
	       (unsigned long long)tokens, (unsigned long long)bytes, (double)bytes / (double)tokens);
	assert_int_equal(bad, 0);
	/* Issue: at most 2 bytes per output token on disk. */
	assert_true((double)bytes / (double)tokens <= 2.0);
	tt_report_free(rep);
	tt_run_free(r);
	tt_profile_free(p);
	tu_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_reproduced),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
