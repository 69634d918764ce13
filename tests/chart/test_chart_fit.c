/* Every chart kind at a paper column's 480x320 and at the default 960x600
 * (and with the size options: --font-scale, --no-title, the presets): the
 * library reports every text it draws (tt__chart_set_text_hook) and each
 * one's ink must lie inside the canvas, unelided.  The runs: the seed
 * report (closed-loop kinds), the small synthetic run (the kinds drawn from
 * raw traces) and the recorded open-loop run (the rate kinds, with an SLO);
 * and every chart of a diff (the sample run against itself).  Then what
 * issue 24 asked of the charts besides: the timeline's running and waiting
 * in two colours, legends of contexts with data only, the rate-latency
 * chart's TTFT SLO line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_fixture.h"
#include "chart/chart_impl.h"
#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"

struct rec {
	size_t n, bad;
	double min_size;
	char first_bad[400];
};

static void hook(const struct tt__text_record *t, void *arg)
{
	struct rec *r = arg;
	/* half a unit of slack: anti-aliasing rounds ink to the pixel */
	const double e = 0.5;
	int inside = t->x0 >= -e && t->y0 >= -e && t->x1 <= t->canvas_w + e &&
		     t->y1 <= t->canvas_h + e;
	r->n++;
	if (getenv("TT_FIT_TEXTS"))
		print_message("text '%s' size %.2f ink [%.1f, %.1f]-[%.1f, %.1f]\n", t->text,
			      t->size, t->x0, t->y0, t->x1, t->y1);
	if (t->size < r->min_size)
		r->min_size = t->size;
	if (!inside || t->elided) {
		if (r->bad++ == 0)
			snprintf(r->first_bad, sizeof r->first_bad,
				 "'%s' %s: ink [%.1f, %.1f]-[%.1f, %.1f] on %gx%g", t->text,
				 t->elided ? "elided" : "outside", t->x0, t->y0, t->x1, t->y1,
				 t->canvas_w, t->canvas_h);
	}
}

/* Charts with a text outside or elided, each named as it is found; a test
 * fails at its end when there was one. */
static int n_bad_charts;

/* Draw one chart with the hook on, counting it in n_bad_charts when a text
 * was outside or elided.  Returns how many texts were drawn. */
static size_t check(const struct tt_report *r, struct tt_run *run, const struct tt_chart_opts *o,
		    const char *what)
{
	struct rec rec;
	struct tt_buf b;
	struct tt_error err;
	enum tt_code rc;

	memset(&rec, 0, sizeof rec);
	rec.min_size = INFINITY;
	tt_buf_init(&b, 0);
	tt__chart_set_text_hook(hook, &rec);
	rc = tt_chart_render(r, run, o, &b, NULL, &err);
	tt__chart_set_text_hook(NULL, NULL);
	if (tt_failed(rc))
		fail_msg("%s %s %gx%g: %s", what, tt_chart_kind_name(o->kind), o->width, o->height,
			 err.msg);
	if (rec.bad) {
		n_bad_charts++;
		print_message("%s %s %gx%g (font scale %g%s): %zu of %zu texts clipped or elided, "
			 "first %s\n",
			 what, tt_chart_kind_name(o->kind), o->width, o->height, o->font_scale,
			 o->no_title ? ", no title" : "", rec.bad, rec.n, rec.first_bad);
	}
	if (getenv("TT_FIT_SIZES"))
		print_message("size %s %s %gx%g font scale %g: smallest %.2f\n", what,
			      tt_chart_kind_name(o->kind), o->width, o->height, o->font_scale,
			      rec.min_size);
	/* Nothing drawn below 6.5 units (5 pt in a PDF).  Measured: the
	 * smallest is the seed heatmap's values at 480x320 with font scale 1.5
	 * (9 columns in 300 units, values in the short form) at 6.94 units;
	 * at font scale 1 it is 7.70. */
	if (rec.n)
		assert_true(rec.min_size >= 6.5);
	tt_buf_release(&b);
	return rec.n;
}

/* The sizes: 480x320 and the default as they are, then the presets and
 * the font scale on them (a column with its title, text 1.5 times as
 * large on a column, a slide). */
static void every_size(const struct tt_report *r, struct tt_run *run, enum tt_chart_kind k,
		       const char *what)
{
	static const enum tt_chart_format fmts[] = {TT_CHART_PNG, TT_CHART_SVG};
	static const struct {
		const char *preset;
		double w, h, font_scale;
		int no_title;
	} v[] = {
		{NULL, 480, 320, 1, 0},   {NULL, 960, 600, 1, 0}, {"column", 0, 0, 0, 0},
		{"slide", 0, 0, 0, 0},    {NULL, 480, 320, 1.5, 1}, {NULL, 960, 600, 2, 0},
	};
	for (size_t s = 0; s < sizeof v / sizeof v[0]; s++)
		for (size_t f = 0; f < 2; f++) {
			struct tt_chart_opts o;
			struct tt_error err;
			size_t n;
			tt_chart_opts_init(&o);
			o.kind = k;
			o.format = fmts[f];
			if (v[s].preset) {
				assert_int_equal(tt_chart_preset(v[s].preset, &o, &err), TT_OK);
			} else {
				o.width = v[s].w;
				o.height = v[s].h;
				o.font_scale = v[s].font_scale;
				o.no_title = v[s].no_title;
			}
			n = check(r, run, &o, what);
			/* the title, the axes: something is written */
			assert_true(n >= (o.no_title ? 1 : 3));
		}
}

static void test_seed_kinds_fit(void **state)
{
	struct tt_report *r = cf_seed_report("LiquidAI/LFM2.5-350M-a-long-model-name-Instruct");
	(void)state;
	n_bad_charts = 0;
	assert_non_null(r);
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		if (!tt_chart_kind_needs_run((enum tt_chart_kind)k))
			every_size(r, NULL, (enum tt_chart_kind)k, "seed");
	cf_report_free(r);
	assert_int_equal(n_bad_charts, 0);
}

static void test_run_kinds_fit(void **state)
{
	char *dir = NULL;
	struct tt_run *run = cf_small_run("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", &dir);
	struct tt_report *r;
	(void)state;
	n_bad_charts = 0;
	assert_non_null(run);
	r = cf_analyze(run);
	assert_non_null(r);
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		every_size(r, run, (enum tt_chart_kind)k, "small run");
	tt_report_free(r);
	tt_run_free(run);
	cf_rmrf(dir);
	free(dir);
	assert_int_equal(n_bad_charts, 0);
}

static struct tt_report *load_openloop(const char *slo)
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

static void test_rate_kinds_fit(void **state)
{
	struct tt_report *with = load_openloop("ttft=100ms,attain=90");
	struct tt_report *without = load_openloop(NULL);
	(void)state;
	n_bad_charts = 0;
	for (int k = TT_CHART_RATE_LATENCY; k < TT_CHART_RATE_END_; k++) {
		every_size(with, NULL, (enum tt_chart_kind)k, "open loop, SLO");
		every_size(without, NULL, (enum tt_chart_kind)k, "open loop");
	}
	tt_report_free(with);
	tt_report_free(without);
	assert_int_equal(n_bad_charts, 0);
}

/* The diff's charts draw through the same canvas: the sample run against
 * itself, every kind at both sizes. */
static void test_diff_kinds_fit(void **state)
{
	struct tt_analysis_opts ao;
	struct tt_diff_side *sb = NULL, *sc = NULL;
	struct tt_diff *d = NULL;
	struct tt_error err;

	(void)state;
	n_bad_charts = 0;
	tt_analysis_opts_init(&ao);
	assert_int_equal(tt_diff_side_create(NULL, &sb, &err), TT_OK);
	assert_int_equal(tt_diff_side_create(NULL, &sc, &err), TT_OK);
	for (int s = 0; s < 2; s++) {
		struct tt_run *run = NULL;
		assert_int_equal(tt_run_open(TT_FIXTURES "/runs/sample.tar.zst", &run, &err), TT_OK);
		assert_true(tt_diff_side_add(s ? sc : sb, run, &ao, &err) <= TT_WARN);
		tt_run_free(run);
	}
	assert_int_equal(tt_diff_compare(sb, sc, &d, &err), TT_OK);
	for (int k = 0; k < TT_DIFF_CHART_KIND_COUNT_; k++)
		for (int z = 0; z < 2; z++) {
			struct tt_diff_chart_opts o;
			struct rec rec;
			struct tt_buf b;
			tt_diff_chart_opts_init(&o);
			o.kind = (enum tt_diff_chart_kind)k;
			o.format = TT_CHART_PNG;
			o.width = z ? 960 : 480;
			o.height = z ? 600 : 320;
			memset(&rec, 0, sizeof rec);
			rec.min_size = INFINITY;
			tt_buf_init(&b, 0);
			tt__chart_set_text_hook(hook, &rec);
			assert_int_equal(tt_diff_chart_render(d, &o, &b, &err), TT_OK);
			tt__chart_set_text_hook(NULL, NULL);
			assert_true(rec.n >= 3);
			if (rec.bad) {
				n_bad_charts++;
				print_message("diff %s %gx%g: %zu of %zu texts clipped or elided, "
					      "first %s\n",
					      tt_diff_chart_kind_name(o.kind), o.width, o.height,
					      rec.bad, rec.n, rec.first_bad);
			}
			tt_buf_release(&b);
		}
	tt_diff_free(d);
	tt_diff_side_free(sb);
	tt_diff_side_free(sc);
	assert_int_equal(n_bad_charts, 0);
}

/* Every text drawn, joined by newlines, for looking texts up. */
struct texts {
	char buf[32768];
	size_t len;
};

static void collect_hook(const struct tt__text_record *t, void *arg)
{
	struct texts *x = arg;
	int n = snprintf(x->buf + x->len, sizeof x->buf - x->len, "%s\n", t->text);
	if (n > 0 && (size_t)n < sizeof x->buf - x->len)
		x->len += (size_t)n;
}

static int drew_line(const struct texts *x, const char *line)
{
	char want[256];
	snprintf(want, sizeof want, "\n%s\n", line);
	return strstr(x->buf, want) != NULL || strncmp(x->buf, want + 1, strlen(want + 1)) == 0;
}

static void draw_texts(const struct tt_report *r, struct tt_run *run, struct tt_chart_opts *o,
		       struct texts *x, struct tt_buf *b)
{
	struct tt_error err;
	memset(x, 0, sizeof *x);
	tt__chart_set_text_hook(collect_hook, x);
	assert_int_equal(tt_chart_render(r, run, o, b, NULL, &err), TT_OK);
	tt__chart_set_text_hook(NULL, NULL);
}

static void rgb255(struct rgb c, int *r, int *g, int *b)
{
	*r = (int)lround(c.r * 255);
	*g = (int)lround(c.g * 255);
	*b = (int)lround(c.b * 255);
}

/* The sample run's timeline has the server's running and waiting gauges:
 * waiting is reddish purple, and no vermillion (the orange it had beside
 * running's orange) is drawn. */
static void test_timeline_running_waiting_differ(void **state)
{
	struct tt_run *run = NULL;
	struct tt_report *r = NULL;
	struct tt_analysis_opts ao;
	struct tt_chart_opts o;
	struct tt_error err;
	struct tt_buf b;
	struct texts *x = calloc(1, sizeof *x);
	struct cf_image img;
	int pr, pg, pb, vr, vg, vb, orr, og, ob;

	(void)state;
	assert_non_null(x);
	tt_analysis_opts_init(&ao);
	tt_chart_analysis_opts(&ao);
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/sample.tar.zst", &run, &err), TT_OK);
	assert_int_equal(tt_analyze(run, &ao, &r, &err), TT_OK);
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_TIMELINE;
	tt_buf_init(&b, 0);
	draw_texts(r, run, &o, x, &b);
	assert_true(drew_line(x, "running (server)"));
	assert_true(drew_line(x, "waiting (server)"));
	assert_int_equal(cf_png_decode(&b, &img), 0);
	rgb255(tt__chart_palette[4], &pr, &pg, &pb);
	rgb255(tt__chart_palette[3], &vr, &vg, &vb);
	rgb255(tt__chart_palette[1], &orr, &og, &ob);
	assert_true(cf_count_colour(&img, orr, og, ob, 8) > 50);  /* running */
	assert_true(cf_count_colour(&img, pr, pg, pb, 8) > 20);   /* waiting */
	assert_int_equal(cf_count_colour(&img, vr, vg, vb, 8), 0); /* no second orange */
	cf_image_free(&img);
	tt_buf_release(&b);
	tt_report_free(r);
	tt_run_free(run);
	free(x);
}

/* A context whose every cell is Over capacity has no point: it is not in
 * the legend, and the first context with data keeps the first colour. */
static void test_legend_lists_contexts_with_data(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_chart_opts o;
	struct tt_buf b;
	struct texts *x = calloc(1, sizeof *x);
	int64_t ctx[32];
	size_t n;
	char first[32], last[32];

	(void)state;
	assert_non_null(r);
	assert_non_null(x);
	n = tt__chart_decode_contexts(r, ctx, 32);
	assert_true(n >= 3);
	tt__fmt_tokens(ctx[0], first, sizeof first);
	tt__fmt_tokens(ctx[n - 1], last, sizeof last);
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_THROUGHPUT;
	tt_buf_init(&b, 0);
	draw_texts(r, NULL, &o, x, &b);
	assert_true(drew_line(x, first));
	assert_true(drew_line(x, last));
	tt_buf_release(&b);
	/* the smallest context's cells all Over capacity: gone from the legend */
	for (size_t i = 0; i < r->n_cells; i++)
		if (r->cells[i].phase == TT_PHASE_DECODE && r->cells[i].context == ctx[0])
			r->cells[i].status = TT_STATUS_OVER_CAPACITY;
	tt_buf_init(&b, 0);
	draw_texts(r, NULL, &o, x, &b);
	assert_false(drew_line(x, first));
	assert_true(drew_line(x, last));
	tt_buf_release(&b);
	cf_report_free(r);
	free(x);
}

/* The rate-latency chart draws the TTFT SLO when there is one: its label
 * and its legend line; none without an SLO. */
static void test_rate_latency_slo_line(void **state)
{
	struct tt_report *with = load_openloop("ttft=100ms,attain=90");
	struct tt_report *without = load_openloop(NULL);
	struct tt_chart_opts o;
	struct tt_buf b;
	struct texts *x = calloc(1, sizeof *x);

	(void)state;
	assert_non_null(x);
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_RATE_LATENCY;
	tt_buf_init(&b, 0);
	draw_texts(with, NULL, &o, x, &b);
	assert_true(drew_line(x, "SLO 100 ms"));
	assert_true(drew_line(x, "TTFT SLO"));
	assert_non_null(strstr(x->buf, "Dashed: the TTFT SLO, to be met by 90 % of requests."));
	tt_buf_release(&b);
	tt_buf_init(&b, 0);
	draw_texts(without, NULL, &o, x, &b);
	assert_false(drew_line(x, "TTFT SLO"));
	assert_null(strstr(x->buf, "SLO 100 ms"));
	tt_buf_release(&b);
	tt_report_free(with);
	tt_report_free(without);
	free(x);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_kinds_fit),
		cmocka_unit_test(test_run_kinds_fit),
		cmocka_unit_test(test_rate_kinds_fit),
		cmocka_unit_test(test_diff_kinds_fit),
		cmocka_unit_test(test_timeline_running_waiting_differ),
		cmocka_unit_test(test_legend_lists_contexts_with_data),
		cmocka_unit_test(test_rate_latency_slo_line),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
