/* tokentrace trend: the change-point method on series with known answers
 * (docs/trend.md "Validation").
 *
 * Noise-only series (independent normal values, no change) measure how often
 * the method reports a change that is not there: the false-positive rate that
 * docs/trend.md states.  Series with one or two steps check that a change is
 * found where it is.  Histories of runs built from figures (no traces) check
 * the order, runs of different matrices and the gate. */
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

#include "tokentrace/trend.h"
#include "trend/trend_impl.h"

static uint64_t sm(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return ((double)(sm(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t *s)
{
	return sqrt(-2 * log(unif(s))) * cos(6.283185307179586 * unif(s));
}

/* Share of n_series noise-only series of length len (level 100, relative
 * spread sd %) in which the method reports at least one change point. */
static double noise_rate(size_t n_series, size_t len, double sd, const struct tt_trend_opts *o,
			 uint64_t seed, size_t *points)
{
	double *x = malloc(len * sizeof *x);
	size_t hit = 0;
	uint64_t s = seed;

	assert_non_null(x);
	*points = 0;
	for (size_t k = 0; k < n_series; k++) {
		size_t *idx = NULL, n = 0;
		struct tt_error err;

		for (size_t i = 0; i < len; i++)
			x[i] = 100 * (1 + sd / 100 * normal(&s));
		tt_error_clear(&err);
		assert_false(tt_failed(tt_trend_changes(x, len, o, k, &idx, NULL, &n, NULL, &err)));
		hit += n > 0;
		*points += n;
		free(idx);
	}
	free(x);
	return (double)hit / (double)n_series;
}

/* docs/trend.md "False positives": the rate per series at the default
 * alpha (0.01) and at 0.05, on lengths 12, 30 and 100, with 2000 series
 * each.  The binomial standard error of a 1 % rate over 2000 series is
 * 0.22 %, so a rate above alpha + 3 standard errors fails. */
static void test_noise_false_positives(void **state)
{
	static const size_t lens[] = {12, 30, 100};
	static const double alphas[] = {0.01, 0.05};
	(void)state;

	for (size_t a = 0; a < 2; a++)
		for (size_t l = 0; l < 3; l++) {
			struct tt_trend_opts o;
			size_t points, n = lens[l] == 100 ? 1000 : 2000;
			double rate, se;

			tt_trend_opts_init(&o);
			o.alpha = alphas[a];
			se = sqrt(o.alpha * (1 - o.alpha) / (double)n);
			rate = noise_rate(n, lens[l], 2, &o, 42 + l, &points);
			printf("noise: alpha %.2f, %zu series of %zu runs: %.2f %% with a change "
			       "point (%zu points)\n", o.alpha, n, lens[l], 100 * rate, points);
			assert_true(rate <= o.alpha + 3 * se);
			/* a test that never fires is no test: the rate is near alpha */
			assert_true(rate >= o.alpha - 3 * se);
		}
}

/* One 10 % step at run 20 of 32 with 2 % noise: found there in (nearly)
 * every one of 200 series.  Each of the two levels is then tested again at
 * alpha, so about 200 x 2 x 0.01 = 4 other points are expected (measured:
 * 7, before the min_change filter, which this call does not apply). */
static void test_step_found_where_it_is(void **state)
{
	struct tt_trend_opts o;
	uint64_t s = 7;
	size_t exact = 0, extra = 0;
	(void)state;

	tt_trend_opts_init(&o);
	for (size_t k = 0; k < 200; k++) {
		double x[32];
		size_t *idx = NULL, n = 0;
		double *p = NULL;
		struct tt_error err;

		for (size_t i = 0; i < 32; i++)
			x[i] = (i >= 20 ? 90 : 100) * (1 + 0.02 * normal(&s));
		tt_error_clear(&err);
		assert_false(tt_failed(tt_trend_changes(x, 32, &o, k, &idx, &p, &n, NULL, &err)));
		for (size_t j = 0; j < n; j++) {
			if (idx[j] == 20) {
				exact++;
				assert_true(p[j] <= o.alpha);
			} else {
				extra++;
			}
		}
		free(idx);
		free(p);
	}
	printf("step: found at run 20 in %zu of 200 series, %zu other points\n", exact, extra);
	/* a 5-sigma step: the split is exact in (nearly) every series */
	assert_true(exact >= 196);
	assert_true(extra <= 12); /* 4 standard deviations above 4 */
}

/* Two steps (up at 15, down at 35 of 50): both found, in order. */
static void test_two_steps(void **state)
{
	struct tt_trend_opts o;
	double x[50];
	uint64_t s = 11;
	size_t *idx = NULL, n = 0;
	struct tt_error err;
	(void)state;

	tt_trend_opts_init(&o);
	for (size_t i = 0; i < 50; i++)
		x[i] = (i >= 15 && i < 35 ? 110 : 100) * (1 + 0.01 * normal(&s));
	tt_error_clear(&err);
	assert_false(tt_failed(tt_trend_changes(x, 50, &o, 3, &idx, NULL, &n, NULL, &err)));
	assert_int_equal(n, 2);
	assert_int_equal(idx[0], 15);
	assert_int_equal(idx[1], 35);
	free(idx);
}

/* Same series, same stream: the same answer; constant or too short
 * series: none; a NaN: refused, naming the value. */
static void test_edges_and_determinism(void **state)
{
	struct tt_trend_opts o;
	double x[40], c[10];
	uint64_t s = 5;
	size_t *a = NULL, *b = NULL, na, nb;
	double *pa = NULL, *pb = NULL;
	struct tt_error err;
	(void)state;

	tt_trend_opts_init(&o);
	for (size_t i = 0; i < 40; i++)
		x[i] = (i >= 25 ? 104 : 100) * (1 + 0.02 * normal(&s));
	tt_error_clear(&err);
	assert_false(tt_failed(tt_trend_changes(x, 40, &o, 9, &a, &pa, &na, NULL, &err)));
	assert_false(tt_failed(tt_trend_changes(x, 40, &o, 9, &b, &pb, &nb, NULL, &err)));
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_int_equal(a[i], b[i]);
		assert_true(pa[i] == pb[i]);
	}
	free(a);
	free(b);
	free(pa);
	free(pb);
	for (size_t i = 0; i < 10; i++)
		c[i] = 5;
	assert_false(tt_failed(tt_trend_changes(c, 10, &o, 1, &a, NULL, &na, NULL, &err)));
	assert_int_equal(na, 0);
	free(a);
	assert_false(tt_failed(tt_trend_changes(x, 5, &o, 1, &a, NULL, &na, NULL, &err)));
	assert_int_equal(na, 0);
	free(a);
	c[4] = NAN;
	assert_true(tt_failed(tt_trend_changes(c, 10, &o, 1, &a, NULL, &na, NULL, &err)));
	assert_non_null(strstr(err.msg, "value 5 of 10"));
}

static void test_version_order(void **state)
{
	(void)state;
	assert_true(tt__trend_vercmp("0.9.2", "0.10.0") < 0);
	assert_true(tt__trend_vercmp("0.10.0", "0.9.2") > 0);
	assert_true(tt__trend_vercmp("1.0.9", "1.0.10") < 0);
	assert_true(tt__trend_vercmp("1.0", "1.0.1") < 0);
	assert_true(tt__trend_vercmp("v007", "v7") == 0);
	assert_true(tt__trend_vercmp("abc", "abd") < 0);
}

/* A history built from figures: 36 runs given out of order with a build
 * note; from build 1.0.24 decode-8192x4's total tok/s is 10 % lower, and
 * run 1.0.10 lacks that cell (another matrix).  Ordered by the key, the
 * change begins at build 1.0.24 and only there; the gate fails at 5 %. */
static void test_history_by_key(void **state)
{
	struct tt_trend_opts o;
	struct tt_trend *t = NULL;
	struct tt_trend_result *r = NULL;
	struct tt_error err;
	uint64_t s = 99;
	(void)state;

	tt_trend_opts_init(&o);
	o.order = TT_TREND_ORDER_KEY;
	snprintf(o.key, sizeof o.key, "build");
	tt_error_clear(&err);
	assert_false(tt_failed(tt_trend_create(&o, &t, &err)));
	for (size_t k = 0; k < 36; k++) {
		size_t b = (k * 7) % 36 + 1; /* 1..36, shuffled */
		struct tt_trend_cell cells[2];
		struct tt_trend_run run;
		char path[32], key[32];

		memset(&run, 0, sizeof run);
		memset(cells, 0, sizeof cells);
		snprintf(path, sizeof path, "runs/b%zu", b);
		snprintf(key, sizeof key, "1.0.%zu", b);
		run.path = path;
		run.key = key;
		run.start_unix_ns = 1000;
		snprintf(cells[0].id, sizeof cells[0].id, "decode-8192x4");
		snprintf(cells[1].id, sizeof cells[1].id, "decode-8192x1");
		for (int c = 0; c < 2; c++) {
			cells[c].phase = TT_PHASE_DECODE;
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
				cells[c].v[f] = f == TT_DIFF_PREFILL ? NAN : 100 * (1 + 0.01 * normal(&s));
		}
		if (b >= 24)
			cells[0].v[TT_DIFF_TOTAL] *= 0.9;
		run.cells = b == 10 ? cells + 1 : cells;
		run.n_cells = b == 10 ? 1 : 2;
		assert_false(tt_failed(tt_trend_add_figures(t, &run, &err)));
	}
	assert_false(tt_failed(tt_trend_analyze(t, &r, &err)));
	assert_int_equal(r->n_runs, 36);
	for (size_t i = 0; i < 36; i++) {
		char key[32];
		snprintf(key, sizeof key, "1.0.%zu", i + 1);
		assert_string_equal(r->runs[i].key, key);
	}
	assert_int_equal(r->n_series, 12);
	assert_int_equal(r->n_changes, 1);
	assert_string_equal(r->series[r->changes[0].series].cell, "decode-8192x4");
	assert_int_equal(r->series[r->changes[0].series].figure, TT_DIFF_TOTAL);
	assert_int_equal(r->series[r->changes[0].series].n, 35); /* 1.0.10 lacks it */
	assert_string_equal(r->runs[r->changes[0].run].key, "1.0.24");
	assert_true(r->changes[0].regression);
	assert_true(fabs(r->changes[0].change_pct + 10) < 1.5);
	assert_int_equal(tt_trend_gate(r, 5), 1);
	assert_int_equal(tt_trend_gate(r, 15), 0);
	tt_trend_result_free(r);
	tt_trend_free(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise_false_positives),
		cmocka_unit_test(test_step_found_where_it_is),
		cmocka_unit_test(test_two_steps),
		cmocka_unit_test(test_edges_and_determinism),
		cmocka_unit_test(test_version_order),
		cmocka_unit_test(test_history_by_key),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
