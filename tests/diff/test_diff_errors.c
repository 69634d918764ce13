/* A diff never masks a lack of memory: allocations are refused for real
 * (linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc), at every
 * allocation of opening, analysing and resampling both runs, comparing and
 * rendering (md, csv, json) in turn; each must either succeed untouched or
 * fail as TT_ENOMEM, and leak nothing (under the sanitizers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"
#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"
#include "testutil.h"

#include "alloc_fail.h"

static const char profile[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n"
	"decode,8K,4,Valid,3419.6,866.9,54,1.2,4,,,4\n";

/* Everything a diff does, from the paths to the text. */
static enum tt_code diff_everything(const char *a, const char *b, struct tt_error *err)
{
	struct tt_diff_side *side[2] = {NULL, NULL};
	struct tt_diff *d = NULL;
	struct tt_buf out;
	enum tt_code rc = TT_OK;
	const char *paths[2] = {a, b};

	tt_buf_init(&out, 0);
	for (int i = 0; i < 2 && rc == TT_OK; i++) {
		struct tt_run *run = NULL;
		rc = tt_diff_side_create(NULL, &side[i], err);
		if (rc == TT_OK)
			rc = tt_run_open(paths[i], &run, err);
		if (rc == TT_OK)
			rc = tt_diff_side_add(side[i], run, NULL, err);
		tt_run_free(run);
	}
	if (rc == TT_OK)
		rc = tt_diff_compare(side[0], side[1], &d, err);
	if (rc == TT_OK)
		rc = tt_diff_render(d, TT_FORMAT_MD, NULL, NULL, &out, err);
	if (rc == TT_OK)
		rc = tt_diff_render(d, TT_FORMAT_CSV, NULL, NULL, &out, err);
	if (rc == TT_OK)
		rc = tt_diff_render(d, TT_FORMAT_JSON, NULL, NULL, &out, err);
	tt_buf_release(&out);
	tt_diff_free(d);
	tt_diff_side_free(side[0]);
	tt_diff_side_free(side[1]);
	return rc;
}

static void test_diff_never_masks_oom(void **state)
{
	char *dir = tu_tmpdir("diff-errors"), a[4096], b[4096];
	struct tt_profile *p;
	struct tt_synth_opts o;
	struct tt_error err;
	long k, refused = 0;

	(void)state;
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	assert_int_equal(tt_profile_parse(profile, "p.csv", &p, &err), TT_OK);
	tt_synth_opts_init(&o);
	o.max_tokens = 64;
	assert_int_equal(tt_synth_run(p, a, &o, NULL, &err), TT_OK);
	o.seed = 2;
	assert_int_equal(tt_synth_run(p, b, &o, NULL, &err), TT_OK);
	tt_profile_free(p);
	for (k = 0;; k++) {
		enum tt_code rc;
		tt_alloc_failed = 0;
		tt_alloc_allow = k;
		tt_error_clear(&err);
		rc = diff_everything(a, b, &err);
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
		cmocka_unit_test(test_diff_never_masks_oom),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
