/* Open-loop charts (docs/charts.md "Open-loop charts") from the recorded
 * open-loop run (fixtures/runs/openloop.tar.zst: 30/s Valid, 120/s past
 * the simulator's 80/s): names, axes, the SLO limit's interval inside the
 * x range, goodput that needs SLOs, every format drawn. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chart_fixture.h"
#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/chart.h"
#include "tokentrace/run.h"
#include "tt_cmocka.h"

static struct tt_report *load(const char *slo)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts o;
	struct tt_error err;

	tt_analysis_opts_init(&o);
	tt_chart_analysis_opts(&o);
	if (slo)
		assert_int_equal(tt_slo_parse(slo, &o.slo, &err), TT_OK);
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/openloop.tar.zst", &run, &err), TT_OK);
	assert_int_equal(tt_analyze(run, &o, &rep, &err), TT_OK);
	tt_run_free(run);
	return rep;
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(tt_chart_kind_parse("rate-latency"), TT_CHART_RATE_LATENCY);
	assert_int_equal(tt_chart_kind_parse("rate-goodput"), TT_CHART_RATE_GOODPUT);
	assert_string_equal(tt_chart_kind_name(TT_CHART_RATE_THROUGHPUT), "rate-throughput");
	assert_non_null(strstr(tt_chart_kind_list(), "rate-latency"));
	assert_false(tt_chart_kind_needs_run(TT_CHART_RATE_LATENCY));
}

static void test_axes_and_limit(void **state)
{
	struct tt_report *rep = load("ttft=100ms,attain=90");
	struct tt_chart_opts o;
	struct tt_chart_info info;
	struct tt_buf b;
	struct tt_error err;
	static const enum tt_chart_kind kinds[] = {TT_CHART_RATE_LATENCY, TT_CHART_RATE_THROUGHPUT,
						   TT_CHART_RATE_GOODPUT};
	static const enum tt_chart_format fmts[] = {TT_CHART_PNG, TT_CHART_SVG, TT_CHART_PDF};

	(void)state;
	for (size_t k = 0; k < 3; k++)
		for (size_t f = 0; f < 3; f++) {
			tt_chart_opts_init(&o);
			o.kind = kinds[k];
			o.format = fmts[f];
			tt_buf_init(&b, 0);
			assert_int_equal(tt_chart_render(rep, NULL, &o, &b, &info, &err), TT_OK);
			assert_true(b.len > 1000);
			assert_int_equal(info.n_series, 1);
			/* x: offered rate, linear from 0, covering the limit [30, 120) */
			assert_int_equal(info.x_scale, 0);
			assert_true(info.x_lo <= 30 && info.x_hi >= 120);
			if (kinds[k] == TT_CHART_RATE_LATENCY)
				assert_int_equal(info.y_scale, 10);
			if (kinds[k] == TT_CHART_RATE_THROUGHPUT)
				/* the offered = ended line reaches 120 */
				assert_true(info.y_hi >= 120);
			tt_buf_release(&b);
		}
	tt_report_free(rep);
}

static void test_goodput_needs_slo(void **state)
{
	struct tt_report *rep = load(NULL);
	struct tt_chart_opts o;
	struct tt_chart_info info;
	struct tt_buf b;
	struct tt_error err;

	(void)state;
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_RATE_GOODPUT;
	o.format = TT_CHART_SVG;
	tt_buf_init(&b, 0);
	assert_int_equal(tt_chart_render(rep, NULL, &o, &b, &info, &err), TT_OK);
	/* nothing plotted: no series, the message instead */
	assert_int_equal(info.n_series, 0);
	tt_buf_release(&b);
	tt_report_free(rep);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_axes_and_limit),
		cmocka_unit_test(test_goodput_needs_slo),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
