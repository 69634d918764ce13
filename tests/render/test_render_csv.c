/* CSV: seed-matrix.csv's columns first, plain numbers, RFC 4180 quoting,
 * the same field count on every row. */
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

#define SEED_HEADER                                                                        \
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"   \
	"avg_active,completed,output_tokens,measured_s"

/* Split RFC 4180 text into records; returns the number of records and
 * stores each record's field count (up to max records). */
static size_t records(const char *text, size_t *fields, size_t max)
{
	size_t n = 0, f = 1;
	int quoted = 0;
	const char *p;

	for (p = text; *p; p++) {
		if (quoted) {
			if (*p == '"' && p[1] == '"')
				p++;
			else if (*p == '"')
				quoted = 0;
		} else if (*p == '"') {
			quoted = 1;
		} else if (*p == ',') {
			f++;
		} else if (*p == '\n') {
			if (n < max)
				fields[n] = f;
			n++;
			f = 1;
		}
	}
	assert_false(quoted);
	return n;
}

static void test_header_and_rows(void **state)
{
	struct tt_report r;
	char *csv;

	(void)state;
	fx_report(&r);
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	assert_memory_equal(csv, SEED_HEADER ",", strlen(SEED_HEADER) + 1);
	fx_contains(csv, ",ttft_ms_p90,ttft_ms_p99,");
	fx_contains(csv, ",errors,");
	fx_contains(csv, ",status_reason,longest_stall_ms,gaps_over_share,tokens_per_chunk,"); /* 1.1 */
	fx_contains(csv, ",spec_acceptance,spec_accepted_len,cached_share,server_cache_hit_rate,"
			 "reasoning_tokens,answer_tokens,ttfr_ms_p50,ttfa_ms_p50\n");
	fx_contains(csv, "\nprefill,8K,1,Valid,143100,,57,,,1,,,prefill-8192,8192,valid,143100,");
	fx_contains(csv, "\nprefill,120K,1,Valid,116600,,1036,,,1,,,");
	fx_contains(csv, "\ndecode,8K,1,Valid,959.9,972,47,1,0.9,7,28796,30,decode-8192x1,8192,"
			 "valid,959.94,0.9,30,");
	fx_contains(csv, "\ndecode,8K,16,Valid,10300,652.1,60,1.5,15.7,80,309008,30,");
	fx_contains(csv, "\ndecode,8K,32,Valid,15000,478.4,161,2.1,32,96,449512,30,");
	fx_contains(csv, "\ndecode,8K,64,Valid,1500000,318.1,290,3.1,62.8,128,596716,30.5,");
	fx_contains(csv, "\ndecode,120K,1,Valid,2886,745.9,8393,1.3,0.9,5,20637,30,");
	fx_contains(csv, "\ndecode,120K,2,Requests queued,1113.1,588.1,417,1.7,1.9,8,33392,30,");
	fx_contains(csv, "\ndecode,120K,32,Over capacity,,,,,,,,,decode-122880x32,");
	free(csv);
}

static void test_quoting(void **state)
{
	struct tt_report r;
	char *csv;

	(void)state;
	fx_report(&r);
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, ",\"waiting > 0 in 12% of scrapes, \"\"max 3\"\" | threshold 5%\",");
	snprintf(r.cells[FX_D8K_1].reason, sizeof r.cells[FX_D8K_1].reason, "two\nlines");
	free(csv);
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, ",\"two\nlines\",");
	free(csv);
}

static void test_same_field_count_everywhere(void **state)
{
	struct tt_report r;
	size_t fields[64] = {0}, n, i;
	char *csv;

	(void)state;
	fx_report(&r);
	snprintf(r.cells[FX_D8K_1].damage, sizeof r.cells[FX_D8K_1].damage,
		 "frame at byte 4096, \"bad checksum\"\nskipped");
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	n = records(csv, fields, 64);
	assert_int_equal(n, FX_N_CELLS + 1);
	/* 12 seed + 6 + 3 x (4 + 2 quantiles + n) + 17 + 2 tails + 14 chunks and
	 * server parts + 2 prefix cache (1.1) + 4 reasoning (1.2) */
	assert_int_equal(fields[0], 12 + 6 + 3 * 7 + 17 + 2 + 16 + 4);
	for (i = 1; i < n; i++)
		assert_int_equal(fields[i], fields[0]);
	free(csv);

	r.opts.n_quantiles = 3;
	r.opts.quantiles[2] = 99.9;
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, ",ttft_ms_p99.9,");
	n = records(csv, fields, 64);
	assert_int_equal(fields[0], 12 + 6 + 3 * 8 + 17 + 2 + 16 + 4);
	for (i = 1; i < n; i++)
		assert_int_equal(fields[i], fields[0]);
	free(csv);
}

static void test_full_precision_columns(void **state)
{
	struct tt_report r;
	char *csv;

	(void)state;
	fx_report(&r);
	r.cells[FX_D8K_2].total_tok_s = 0.1 + 0.2;
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	fx_contains(csv, "\ndecode,8K,2,Valid,0.3,919.9,48,1.1,2,14,54577,30,decode-8192x2,8192,"
			 "valid,0.30000000000000004,2,30,");
	free(csv);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_and_rows),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_same_field_count_everywhere),
		cmocka_unit_test(test_full_precision_columns),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
