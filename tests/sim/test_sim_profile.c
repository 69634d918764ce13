/* Profile CSV parsing and the interpolated speed model (src/lib/profile.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tokentrace/profile.h"

#define SEED TT_FIXTURES "/profiles/seed-matrix.csv"

static void test_tokens(void **state)
{
	char buf[32];
	(void)state;
	assert_int_equal(tt_parse_tokens("8K"), 8192);
	assert_int_equal(tt_parse_tokens("125K"), 128000);
	assert_int_equal(tt_parse_tokens("120k"), 122880);
	assert_int_equal(tt_parse_tokens("1M"), 1048576);
	assert_int_equal(tt_parse_tokens(" 4096 "), 4096);
	assert_int_equal(tt_parse_tokens("8Q"), -1);
	assert_int_equal(tt_parse_tokens(""), -1);
	assert_int_equal(tt_parse_tokens("K"), -1);
	assert_int_equal(tt_parse_tokens("-8"), -1);
	assert_int_equal(tt_parse_tokens("99999999999999999999"), -1);
	tt_format_tokens(8192, buf, sizeof buf);
	assert_string_equal(buf, "8K");
	tt_format_tokens(128000, buf, sizeof buf);
	assert_string_equal(buf, "125K");
	tt_format_tokens(1000, buf, sizeof buf);
	assert_string_equal(buf, "1000");
	tt_format_tokens(1048576, buf, sizeof buf);
	assert_string_equal(buf, "1M");
}

static void test_seed_loads(void **state)
{
	struct tt_profile *p;
	struct tt_error err;
	(void)state;
	assert_int_equal(tt_profile_load(SEED, &p, &err), TT_OK);
	assert_int_equal(tt_profile_count(p), 46);
	const struct tt_profile_point *q = tt_profile_find(p, TT_PHASE_PREFILL, 128000, 1);
	assert_non_null(q);
	assert_true(q->total_tok_s == 130800);
	assert_true(isnan(q->tbt_ms));
	assert_int_equal(q->output_tokens, -1);
	q = tt_profile_find(p, TT_PHASE_DECODE, 122880, 2);
	assert_string_equal(q->status, "Requests queued");
	assert_int_equal(q->completed, 8);
	q = tt_profile_find(p, TT_PHASE_DECODE, 122880, 128);
	assert_string_equal(q->status, "Over capacity");
	assert_true(isnan(q->total_tok_s));
	assert_null(tt_profile_find(p, TT_PHASE_DECODE, 8192, 3));
	tt_profile_free(p);
}

/* The model reproduces every measured cell: time between tokens to the
 * per-request rate's precision, prefill rates exactly. */
static void test_model_hits_measured_points(void **state)
{
	struct tt_profile *p;
	(void)state;
	assert_int_equal(tt_profile_load(SEED, &p, NULL), TT_OK);
	for (size_t i = 0; i < tt_profile_count(p); i++) {
		const struct tt_profile_point *q = tt_profile_at(p, i);
		if (q->phase == TT_PHASE_PREFILL) {
			assert_true(fabs(tt_profile_prefill_tok_s(p, q->context) / q->total_tok_s - 1) <
				    1e-9);
		} else if (q->per_request_tok_s > 0) {
			double t = tt_profile_tbt_ms(p, q->context, q->concurrency);
			assert_true(fabs(t - 1000.0 / q->per_request_tok_s) < 1e-6);
			assert_true(fabs(t / q->tbt_ms - 1) < 0.05);
		}
	}
	/* the unmeasured cell (over capacity) is extrapolated, not missing */
	double t = tt_profile_tbt_ms(p, 122880, 128);
	assert_true(t > tt_profile_tbt_ms(p, 122880, 64));
	assert_true(t < 2 * tt_profile_tbt_ms(p, 122880, 64));
	tt_profile_free(p);
}

static void test_model_monotone(void **state)
{
	struct tt_profile *p;
	(void)state;
	assert_int_equal(tt_profile_load(SEED, &p, NULL), TT_OK);
	for (double c = 100; c < 4e6; c *= 1.3) {
		double prev_t = 0, prev_total = 0;
		for (double b = 0.5; b < 3000; b *= 1.17) {
			double t = tt_profile_tbt_ms(p, (int64_t)c, b);
			double total = (b < 1 ? 1 : b) / t;
			assert_true(t > 0 && isfinite(t));
			assert_true(t >= prev_t * (1 - 1e-9));          /* slower per stream */
			assert_true(total >= prev_total * (1 - 1e-9));  /* never slower in total */
			/* never faster for more context */
			assert_true(tt_profile_tbt_ms(p, (int64_t)(c * 1.3), b) >= t * (1 - 1e-9));
			prev_t = t;
			prev_total = total;
		}
	}
	/* between measured points: strictly between their values */
	double lo = tt_profile_tbt_ms(p, 8192, 16), hi = tt_profile_tbt_ms(p, 16384, 16);
	double mid = tt_profile_tbt_ms(p, 12000, 16);
	assert_true(mid > lo && mid < hi);
	double r = tt_profile_prefill_tok_s(p, 24000);
	assert_true(r > 140100 && r < 164500);
	assert_true(tt_profile_prefill_tok_s(p, 1000) == 143100);
	assert_true(tt_profile_prefill_tok_s(p, 1000000) == 130800);
	tt_profile_free(p);
}

static void expect_bad(const char *text, const char *needle)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	enum tt_code rc = tt_profile_parse(text, "bad.csv", &p, &err);
	assert_int_equal(rc, TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_null(p);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

/* The turnover model: measured decode TTFTs come back exactly; between them
 * a log-space interpolation; outside, the nearest measured row. */
static void test_ttft_model(void **state)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	double mid;

	(void)state;
	assert_int_equal(tt_profile_load(SEED, &p, &err), TT_OK);
	assert_true(fabs(tt_profile_ttft_ms(p, 8192, 1) - 47) < 1e-9);
	assert_true(fabs(tt_profile_ttft_ms(p, 122880, 64) - 8393) < 1e-9);
	assert_true(fabs(tt_profile_ttft_ms(p, 65536, 32) - 668) < 1e-9);
	mid = tt_profile_ttft_ms(p, 8192, 2.8284271247461903); /* between 2 and 4 */
	assert_true(fabs(mid - sqrt(48.0 * 54.0)) < 1e-6);
	mid = tt_profile_ttft_ms(p, 11585, 1); /* between 8K and 16K */
	assert_true(mid > 47 && mid < 70);
	/* 120K x 128 was not run: the nearest measured batch at 120K */
	assert_true(fabs(tt_profile_ttft_ms(p, 122880, 128) - 8393) < 1e-9);
	assert_true(fabs(tt_profile_ttft_ms(p, 1024, 1) - 47) < 1e-9);
	tt_profile_free(p);
}

static void test_bad_input(void **state)
{
	(void)state;
	expect_bad("", "header");
	expect_bad("context,concurrency\n8K,1\n", "'phase'");
	expect_bad("phase,context,concurrency\nprefill,8Q,1\n", "bad.csv:2: field 'context': '8Q'");
	expect_bad("phase,context,concurrency\ndecode,8K,1\nwarmup,8K,1\n", "bad.csv:3: field 'phase'");
	expect_bad("phase,context,concurrency\ndecode,8K,0\n", "field 'concurrency'");
	expect_bad("phase,context,concurrency,tbt_ms\ndecode,8K,1,fast\n", "bad.csv:2: field 'tbt_ms': 'fast'");
	expect_bad("phase,context,concurrency,completed\ndecode,8K,1,2.5\n", "field 'completed'");
	expect_bad("phase,context,concurrency,status\ndecode,8K,1,\"Valid\n", "unterminated quote");
	expect_bad("phase,context,concurrency\ndecode,8K,1\n", "no usable time between tokens");

	struct tt_profile *p = NULL;
	struct tt_error err;
	assert_int_equal(tt_profile_load("/nonexistent/p.csv", &p, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent/p.csv"));
}

static void test_tolerant_input(void **state)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	(void)state;
	/* BOM, CRLF, other column order, extra column, quotes with a thousands
	 * separator, blank and comment lines, spaces */
	const char *text = "\xEF\xBB\xBFtbt_ms , concurrency,phase,extra,context,total_tok_s\r\n"
			   "\r\n"
			   "# a comment\r\n"
			   "2.0, 4 ,decode,x,16K,\"1,950.5\"\r\n"
			   "1.0,1,Decode,y,16K,990\r\n"
			   ",1,prefill,,16K,100000";
	assert_int_equal(tt_profile_parse(text, "ok.csv", &p, &err), TT_OK);
	assert_int_equal(tt_profile_count(p), 3);
	const struct tt_profile_point *q = tt_profile_find(p, TT_PHASE_DECODE, 16384, 4);
	assert_non_null(q);
	assert_true(q->total_tok_s == 1950.5);
	assert_true(q->tbt_ms == 2.0);
	assert_true(isnan(q->per_request_tok_s));
	assert_int_equal(q->completed, -1);
	assert_true(fabs(tt_profile_tbt_ms(p, 16384, 4) - 2.0) < 1e-9);
	assert_true(fabs(tt_profile_tbt_ms(p, 16384, 2) - exp(0.5 * log(2.0))) < 1e-9);
	assert_true(tt_profile_prefill_tok_s(p, 16384) == 100000);
	tt_profile_free(p);
}

/* Thousands of damaged copies of the seed (bytes flipped, cut, duplicated,
 * deleted): each parses or fails with a message naming the input, never
 * crashes (run under ASan/UBSan in CI), and a parsed one gives a finite,
 * positive model. */
static void test_damaged_inputs(void **state)
{
	(void)state;
	FILE *f = fopen(SEED, "rb");
	assert_non_null(f);
	static char seed[8192], buf[16384];
	size_t n = fread(seed, 1, sizeof seed - 1, f);
	fclose(f);
	uint64_t x = 88172645463325252ull;
	const char junk[] = ",\"\n\r K9.-e#";
	int ok = 0, bad = 0;
	for (int it = 0; it < 3000; it++) {
		size_t len = n;
		memcpy(buf, seed, n);
		int edits = 1 + it % 8;
		for (int e = 0; e < edits; e++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t at = len ? (size_t)(x % len) : 0;
			switch ((x >> 32) % 4) {
			case 0: /* overwrite */
				if (len)
					buf[at] = junk[(x >> 40) % (sizeof junk - 1)];
				break;
			case 1: /* cut */
				len = at;
				break;
			case 2: /* delete a run */
				if (len) {
					size_t k = 1 + (x >> 40) % 40;
					if (at + k > len)
						k = len - at;
					memmove(buf + at, buf + at + k, len - at - k);
					len -= k;
				}
				break;
			default: /* duplicate a run */
				if (len && len + 64 < sizeof buf) {
					size_t k = 1 + (x >> 40) % 60;
					if (at + k > len)
						k = len - at;
					memmove(buf + at + k, buf + at, len - at);
					len += k;
				}
				break;
			}
		}
		buf[len] = '\0';
		struct tt_profile *p = NULL;
		struct tt_error err;
		enum tt_code rc = tt_profile_parse(buf, "damaged.csv", &p, &err);
		if (rc == TT_OK) {
			ok++;
			double t = tt_profile_tbt_ms(p, 20000, 10);
			assert_true(isnan(t) || (t > 0 && isfinite(t)));
			double r = tt_profile_prefill_tok_s(p, 20000);
			assert_true(isnan(r) || (r > 0 && isfinite(r)));
			tt_profile_free(p);
		} else {
			bad++;
			assert_int_equal(rc, TT_FAILED);
			assert_null(p);
			assert_non_null(strstr(err.msg, "damaged.csv"));
		}
	}
	assert_true(ok > 0 && bad > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_seed_loads),
		cmocka_unit_test(test_model_hits_measured_points),
		cmocka_unit_test(test_model_monotone),
		cmocka_unit_test(test_ttft_model),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_tolerant_input),
		cmocka_unit_test(test_damaged_inputs),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
