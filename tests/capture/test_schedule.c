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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_seeded),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
