/* Arrival schedules (src/capture/schedule.c, formats/run-v1.md 2.4): each
 * kind has mean gap 1/rate and its own spread, the same seed and cell give
 * the same draws, another cell or seed others, output lengths stay in
 * range and do not move the schedule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule.h"
#include "tt_cmocka.h"

#define N 200000

static void moments(struct schedule *s, double *mean, double *cv)
{
	double sum = 0, sq = 0;
	for (int i = 0; i < N; i++) {
		double g = (double)schedule_gap_ns(s) / 1e9;
		sum += g;
		sq += g * g;
	}
	*mean = sum / N;
	*cv = sqrt(sq / N - *mean * *mean) / *mean;
}

static void test_kinds(void **state)
{
	struct schedule s;
	double mean, cv;

	(void)state;
	schedule_init(&s, 1, "rate-64r100", 100, ARR_CONSTANT, 1, 0, 0);
	moments(&s, &mean, &cv);
	assert_true(fabs(mean - 0.01) < 1e-9 && cv < 1e-6);
	schedule_init(&s, 1, "rate-64r100", 100, ARR_POISSON, 1, 0, 0);
	moments(&s, &mean, &cv);
	assert_true(fabs(mean / 0.01 - 1) < 0.01 && fabs(cv - 1) < 0.02);
	/* gamma of shape k: cv = 1 / sqrt(k) */
	schedule_init(&s, 1, "rate-64r100", 100, ARR_GAMMA, 0.25, 0, 0);
	moments(&s, &mean, &cv);
	assert_true(fabs(mean / 0.01 - 1) < 0.02 && fabs(cv - 2) < 0.08);
	schedule_init(&s, 1, "rate-64r100", 100, ARR_GAMMA, 4, 0, 0);
	moments(&s, &mean, &cv);
	assert_true(fabs(mean / 0.01 - 1) < 0.01 && fabs(cv - 0.5) < 0.02);
}

static void test_seeded(void **state)
{
	struct schedule a, b, c, d;
	int same_c = 0, same_d = 0;

	(void)state;
	schedule_init(&a, 42, "rate-64r10", 10, ARR_POISSON, 1, 5, 9);
	schedule_init(&b, 42, "rate-64r10", 10, ARR_POISSON, 1, 0, 0);
	schedule_init(&c, 42, "rate-64r20", 10, ARR_POISSON, 1, 0, 0);
	schedule_init(&d, 43, "rate-64r10", 10, ARR_POISSON, 1, 0, 0);
	for (int i = 0; i < 1000; i++) {
		int64_t ga = schedule_gap_ns(&a), out = schedule_output(&a);
		/* drawing output lengths (a) does not move the gaps (b) */
		assert_int_equal(ga, schedule_gap_ns(&b));
		assert_true(out >= 5 && out <= 9);
		same_c += ga == schedule_gap_ns(&c);
		same_d += ga == schedule_gap_ns(&d);
	}
	assert_true(same_c < 5 && same_d < 5);
	assert_int_equal(schedule_output(&b), 0); /* no range: max_tokens */
	assert_int_equal(arrivals_parse("gamma"), ARR_GAMMA);
	assert_int_equal(arrivals_parse(NULL), ARR_CONSTANT);
	assert_int_equal(arrivals_parse("burst"), -1);
}

/* Lengths from a histogram (formats/length-hist-v1.md): 5 (weight 1),
 * 20..24 (weight 2, each length 1/5 of it), 40 (weight 0: never), 60
 * (weight 1).  Over 200,000 draws of a fixed seed the counts pass a
 * chi-square test against the histogram (7 lengths, 6 degrees of freedom:
 * 22.46 is the 0.1 % point), the zero-weight length never comes, and the
 * same seed draws the same lengths without moving the gaps. */
static void test_histogram(void **state)
{
	static const struct schedule_bin bins[] = {{5, 5, 1}, {20, 24, 3}, {40, 40, 3}, {60, 60, 4}};
	static const int64_t len[] = {5, 20, 21, 22, 23, 24, 60};
	static const double p[] = {0.25, 0.1, 0.1, 0.1, 0.1, 0.1, 0.25};
	long count[7] = {0};
	struct schedule a, b, g;
	double chi2 = 0;

	(void)state;
	schedule_init(&a, 9, "rate-64r40", 40, ARR_POISSON, 1, 5, 60);
	schedule_init(&b, 9, "rate-64r40", 40, ARR_POISSON, 1, 5, 60);
	schedule_init(&g, 9, "rate-64r40", 40, ARR_POISSON, 1, 0, 0);
	schedule_set_bins(&a, bins, 4);
	schedule_set_bins(&b, bins, 4);
	for (int i = 0; i < N; i++) {
		int64_t out = schedule_output(&a);
		int k = -1;
		assert_int_equal(out, schedule_output(&b));
		for (int j = 0; j < 7; j++)
			if (len[j] == out)
				k = j;
		if (k < 0)
			fail_msg("draw %d: length %lld is in no bin of weight > 0", i, (long long)out);
		count[k]++;
		if (i < 1000)
			assert_int_equal(schedule_gap_ns(&a), schedule_gap_ns(&g));
	}
	for (int j = 0; j < 7; j++) {
		double e = p[j] * N;
		chi2 += (count[j] - e) * (count[j] - e) / e;
	}
	print_message("histogram: chi-square %.2f over 6 degrees of freedom\n", chi2);
	assert_true(chi2 < 22.46);
	/* a single bin is the uniform range it spans */
	{
		static const struct schedule_bin one[] = {{7, 9, 0.5}};
		schedule_init(&a, 1, "x", 1, ARR_CONSTANT, 1, 7, 9);
		schedule_set_bins(&a, one, 1);
		for (int i = 0; i < 1000; i++) {
			int64_t out = schedule_output(&a);
			assert_true(out >= 7 && out <= 9);
		}
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_seeded),
		cmocka_unit_test(test_histogram),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
