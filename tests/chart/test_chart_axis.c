/* Axis ticks and labels, kind names, format from extension. */
#include <math.h>
#include <string.h>

#include "chart_fixture.h"
#include "chart/chart_impl.h"

static void test_si_labels(void **state)
{
	static const struct {
		double v;
		const char *s;
	} cases[] = {{8000, "8K"},   {1500000, "1.5M"}, {24300, "24.3K"}, {250, "250"},
		     {0.5, "0.5"},   {0, "0"},          {2500, "2.5K"},   {1e9, "1G"},
		     {15000, "15K"}, {-2000, "-2K"},    {12.5, "12.5"}};
	char buf[32];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tt__fmt_si(cases[i].v, buf, sizeof buf);
		assert_string_equal(buf, cases[i].s);
	}
	tt__fmt_si(NAN, buf, sizeof buf);
	assert_string_equal(buf, "—");
}

static void test_token_labels(void **state)
{
	char buf[32];
	(void)state;
	tt__fmt_tokens(8192, buf, sizeof buf);
	assert_string_equal(buf, "8K");
	tt__fmt_tokens(128000, buf, sizeof buf);
	assert_string_equal(buf, "125K");
	tt__fmt_tokens(122880, buf, sizeof buf);
	assert_string_equal(buf, "120K");
	tt__fmt_tokens(1048576, buf, sizeof buf);
	assert_string_equal(buf, "1M");
	tt__fmt_tokens(1000, buf, sizeof buf);
	assert_string_equal(buf, "1000");
}

static void test_unit_labels(void **state)
{
	char buf[32];
	(void)state;
	tt__axis_format(UNIT_MS, 1500, buf, sizeof buf);
	assert_string_equal(buf, "1.5 s");
	tt__axis_format(UNIT_MS, 50, buf, sizeof buf);
	assert_string_equal(buf, "50 ms");
	tt__axis_format(UNIT_MS, 0.5, buf, sizeof buf);
	assert_string_equal(buf, "0.5 ms");
	tt__axis_format(UNIT_PERCENT, 0.25, buf, sizeof buf);
	assert_string_equal(buf, "25 %");
	tt__axis_format(UNIT_PLAIN, 128, buf, sizeof buf);
	assert_string_equal(buf, "128");
	tt__axis_format(UNIT_SECONDS, 30, buf, sizeof buf);
	assert_string_equal(buf, "30 s");
}

static int is_round(double v)
{
	/* 1, 2, 2.5 or 5 times a power of ten */
	double m;
	if (v == 0)
		return 1;
	m = fabs(v) / pow(10, floor(log10(fabs(v)) + 1e-12));
	return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 2.5) < 1e-9 ||
	       fabs(m - 5) < 1e-9 || fabs(m - 10) < 1e-9;
}

static void test_linear_ticks_round(void **state)
{
	struct axis a;
	(void)state;
	memset(&a, 0, sizeof a);
	tt__axis_fit(&a, AXIS_LINEAR, UNIT_SI, 687.9, 24300, 1);
	assert_true(a.n_ticks >= 4 && a.n_ticks <= 8);
	assert_true(a.lo == 0);
	assert_true(a.hi >= 24300);
	assert_true(is_round(a.ticks[1] - a.ticks[0]));
	for (size_t i = 0; i < a.n_ticks; i++) {
		double k = a.ticks[i] / (a.ticks[1] - a.ticks[0]);
		assert_true(fabs(k - round(k)) < 1e-9); /* multiples of a round step */
		assert_true(a.ticks[i] >= a.lo && a.ticks[i] <= a.hi);
		if (i)
			assert_true(fabs((a.ticks[i] - a.ticks[i - 1]) - (a.ticks[1] - a.ticks[0])) <
				    1e-6);
	}
	/* a flat series still gets an axis */
	tt__axis_fit(&a, AXIS_LINEAR, UNIT_SI, 5, 5, 0);
	assert_true(a.hi > a.lo && a.n_ticks >= 2);
}

static void test_log2_ticks(void **state)
{
	struct axis a;
	(void)state;
	memset(&a, 0, sizeof a);
	tt__axis_fit(&a, AXIS_LOG2, UNIT_PLAIN, 1, 128, 0);
	assert_int_equal(a.n_ticks, 8);
	for (size_t i = 0; i < a.n_ticks; i++)
		assert_true(a.ticks[i] == ldexp(1, (int)i));
	assert_true(a.lo < 1 && a.hi > 128);
	a.p0 = 0;
	a.p1 = 700;
	/* equal spacing per doubling */
	assert_true(fabs((tt__axis_map(&a, 4) - tt__axis_map(&a, 2)) - (tt__axis_map(&a, 128) - tt__axis_map(&a, 64))) <
		    1e-9);
}

static void test_log10_ticks(void **state)
{
	struct axis a;
	int has50 = 0, has1000 = 0;
	(void)state;
	memset(&a, 0, sizeof a);
	tt__axis_fit(&a, AXIS_LOG10, UNIT_MS, 47, 8393, 0);
	assert_true(a.lo <= 47 && a.hi >= 8393);
	assert_true(a.hi < 20000); /* tight: no extra decade */
	for (size_t i = 0; i < a.n_ticks; i++) {
		double m = a.ticks[i] / pow(10, floor(log10(a.ticks[i]) + 1e-12));
		assert_true(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9);
		has50 |= fabs(a.ticks[i] - 50) < 1e-9;
		has1000 |= fabs(a.ticks[i] - 1000) < 1e-9;
	}
	assert_true(has50 && has1000);
}

static void test_kind_names(void **state)
{
	(void)state;
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++) {
		const char *n = tt_chart_kind_name((enum tt_chart_kind)k);
		assert_non_null(n);
		assert_int_equal(tt_chart_kind_parse(n), k);
		assert_non_null(strstr(tt_chart_kind_list(), n));
		assert_non_null(tt_chart_kind_about((enum tt_chart_kind)k));
	}
	assert_int_equal(tt_chart_kind_parse("pie"), -1);
	assert_int_equal(tt_chart_kind_parse(NULL), -1);
	assert_null(tt_chart_kind_name(TT_CHART_KIND_COUNT_));
	assert_true(tt_chart_kind_needs_run(TT_CHART_TIMELINE));
	assert_true(tt_chart_kind_needs_run(TT_CHART_TBT_CDF));
	assert_false(tt_chart_kind_needs_run(TT_CHART_HEATMAP));
}

static void test_format_from_path(void **state)
{
	(void)state;
	assert_int_equal(tt_chart_format_from_path("a.png"), TT_CHART_PNG);
	assert_int_equal(tt_chart_format_from_path("dir/A.PNG"), TT_CHART_PNG);
	assert_int_equal(tt_chart_format_from_path("x.svg"), TT_CHART_SVG);
	assert_int_equal(tt_chart_format_from_path("x.pdf"), TT_CHART_PDF);
	assert_int_equal(tt_chart_format_from_path("x.jpg"), -1);
	assert_int_equal(tt_chart_format_from_path("png"), -1);
	assert_int_equal(tt_chart_format_from_path("dir.png/x"), -1);
}

static void test_analysis_opts_add_band_quantiles(void **state)
{
	struct tt_analysis_opts o;
	int has10 = 0, has90 = 0, has99 = 0;
	(void)state;
	tt_analysis_opts_init(&o);
	tt_chart_analysis_opts(&o);
	for (size_t i = 0; i < o.n_quantiles; i++) {
		has10 |= o.quantiles[i] == 10;
		has90 |= o.quantiles[i] == 90;
		has99 |= o.quantiles[i] == 99;
	}
	assert_true(has10 && has90 && has99);
	/* idempotent */
	{
		size_t n = o.n_quantiles;
		tt_chart_analysis_opts(&o);
		assert_int_equal(o.n_quantiles, n);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_si_labels),
		cmocka_unit_test(test_token_labels),
		cmocka_unit_test(test_unit_labels),
		cmocka_unit_test(test_linear_ticks_round),
		cmocka_unit_test(test_log2_ticks),
		cmocka_unit_test(test_log10_ticks),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_format_from_path),
		cmocka_unit_test(test_analysis_opts_add_band_quantiles),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
