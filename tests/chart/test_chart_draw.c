/* Charts of a report built by hand from the seed matrix: what is drawn,
 * where, in which colour; sizes; determinism; vector output; bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_fixture.h"
#include "chart/chart_impl.h"

static const enum tt_chart_kind report_kinds[] = {
	TT_CHART_HEATMAP, TT_CHART_THROUGHPUT, TT_CHART_PER_REQUEST, TT_CHART_TRADEOFF,
	TT_CHART_TTFT,    TT_CHART_TBT,        TT_CHART_PREFILL};

static enum tt_code render(const struct tt_report *r, enum tt_chart_kind k,
			   enum tt_chart_format f, double w, double h, double dpi, struct tt_buf *out,
			   struct tt_chart_info *info)
{
	struct tt_chart_opts o;
	struct tt_error err;
	enum tt_code rc;
	tt_chart_opts_init(&o);
	o.kind = k;
	o.format = f;
	o.width = w;
	o.height = h;
	o.dpi = dpi;
	rc = tt_chart_render(r, NULL, &o, out, info, &err);
	if (rc != TT_OK)
		fprintf(stderr, "render %s: %s\n", tt_chart_kind_name(k), err.msg);
	return rc;
}

static long pdf_pages(const char *pdfinfo)
{
	const char *p = strstr(pdfinfo, "Pages:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static void rgb_of(struct rgb c, int *r, int *g, int *b)
{
	*r = (int)lround(c.r * 255);
	*g = (int)lround(c.g * 255);
	*b = (int)lround(c.b * 255);
}

static void test_every_kind_png_size_and_ink(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof report_kinds / sizeof report_kinds[0]; i++) {
		struct tt_buf b;
		struct tt_chart_info info;
		struct cf_image img;
		long ink;
		tt_buf_init(&b, 0);
		assert_int_equal(render(r, report_kinds[i], TT_CHART_PNG, 960, 600, 96, &b, &info),
				 TT_OK);
		assert_int_equal(cf_png_decode(&b, &img), 0);
		assert_int_equal(img.w, 960);
		assert_int_equal(img.h, 600);
		assert_true(info.image_w == 960 && info.image_h == 600);
		/* not blank, not a flood */
		ink = cf_count_ink(&img);
		assert_true(ink > 960 * 600 / 50);
		assert_true(ink < 960 * 600 * 3 / 4);
		/* the plot area lies inside the image */
		assert_true(info.plot_x > 0 && info.plot_y > 0);
		assert_true(info.plot_x + info.plot_w < 960 && info.plot_y + info.plot_h < 600);
		cf_image_free(&img);
		tt_buf_release(&b);
	}
	cf_report_free(r);
}

static void test_throughput_points_where_the_data_says(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	struct tt_chart_info info;
	struct cf_image img;
	int R, G, B;
	(void)state;
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_THROUGHPUT, TT_CHART_PNG, 960, 600, 96, &b, &info),
			 TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(info.n_series, 5);
	assert_int_equal(info.x_scale, 2);
	/* 8K x 128: 24.3K tok/s, first colour (Okabe-Ito blue) */
	rgb_of(tt__chart_palette[0], &R, &G, &B);
	assert_true(cf_count_near(&img, (int)lround(cf_map_x(&info, 128)),
				  (int)lround(cf_map_y(&info, 24300)), 2, R, G, B, 40) >= 5);
	/* 64K x 128: 5,317.8 tok/s, fourth colour (vermillion) */
	rgb_of(tt__chart_palette[3], &R, &G, &B);
	assert_true(cf_count_near(&img, (int)lround(cf_map_x(&info, 128)),
				  (int)lround(cf_map_y(&info, 5317.8)), 2, R, G, B, 40) >= 5);
	/* 120K x 128 is Over capacity: nothing of its colour drawn there */
	rgb_of(tt__chart_palette[4], &R, &G, &B);
	assert_int_equal(cf_count_near(&img, (int)lround(cf_map_x(&info, 128)),
				       (int)lround(cf_map_y(&info, 2886)), 3, R, G, B, 30),
			 0);
	/* and 120K x 64 is there */
	assert_true(cf_count_near(&img, (int)lround(cf_map_x(&info, 64)),
				  (int)lround(cf_map_y(&info, 2886)), 2, R, G, B, 40) >= 3);
	cf_image_free(&img);
	tt_buf_release(&b);
	cf_report_free(r);
}

static void test_ttft_band_from_quantiles(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	struct tt_chart_info info;
	struct cf_image img;
	/* the 120K colour at 16 % over white: the band's fill */
	int R = (int)lround(255 * 0.84 + tt__chart_palette[4].r * 255 * 0.16);
	int G = (int)lround(255 * 0.84 + tt__chart_palette[4].g * 255 * 0.16);
	int B = (int)lround(255 * 0.84 + tt__chart_palette[4].b * 255 * 0.16);
	int x, y_in, y_out;
	(void)state;
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_TTFT, TT_CHART_PNG, 960, 600, 96, &b, &info), TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(info.y_scale, 10);
	/* 120K x 64: median 8,393 ms, band 0.8x to 1.4x (6,714 to 11,750 ms) */
	x = (int)lround(cf_map_x(&info, 64)) - 6;
	y_in = (int)lround(cf_map_y(&info, 8393 * 1.25));
	y_out = (int)lround(cf_map_y(&info, 8393 * 1.6));
	assert_true(cf_count_near(&img, x, y_in, 2, R, G, B, 6) >= 5);
	assert_int_equal(cf_count_near(&img, x, y_out, 2, R, G, B, 6), 0);
	cf_image_free(&img);
	/* without quantiles 10 and 90 there is no band, and the chart says so */
	r->opts.quantiles[0] = 50;
	r->opts.quantiles[1] = 99;
	tt_buf_reset(&b);
	assert_int_equal(render(r, TT_CHART_TTFT, TT_CHART_PNG, 960, 600, 96, &b, &info), TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(cf_count_near(&img, x, y_in, 2, R, G, B, 6), 0);
	cf_image_free(&img);
	tt_buf_reset(&b);
	assert_int_equal(render(r, TT_CHART_TTFT, TT_CHART_SVG, 960, 600, 96, &b, NULL), TT_OK);
	tt_buf_release(&b);
	cf_report_free(r);
}

static void cell_origin(const struct tt_chart_info *in, size_t row, size_t col, int *x, int *y,
			int *w, int *h)
{
	double cw = in->plot_w / (double)in->cols, ch = in->plot_h / (double)in->rows;
	*x = (int)lround(in->plot_x + cw * (double)col);
	*y = (int)lround(in->plot_y + ch * (double)row);
	*w = (int)cw;
	*h = (int)ch;
}

static void test_heatmap_colours_and_marks(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	struct tt_chart_info info;
	struct cf_image img;
	int x, y, w, h, R, G, B;
	(void)state;
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_HEATMAP, TT_CHART_PNG, 960, 600, 96, &b, &info),
			 TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(info.rows, 5);
	assert_int_equal(info.cols, 8);
	/* the fastest cell (8K x 128) is the top of viridis, the slowest
	 * (120K x 1) its bottom: sampled away from the text */
	cell_origin(&info, 0, 7, &x, &y, &w, &h);
	assert_true(cf_count_near(&img, x + w - 8, y + h - 8, 3, 0xFD, 0xE7, 0x25, 12) >= 40);
	cell_origin(&info, 4, 0, &x, &y, &w, &h);
	assert_true(cf_count_near(&img, x + w - 8, y + h - 8, 3, 0x44, 0x01, 0x54, 12) >= 40);
	/* Over capacity (120K x 128): grey with hatching, no viridis */
	cell_origin(&info, 4, 7, &x, &y, &w, &h);
	{
		int grey = 0, dark = 0;
		for (int yy = y + 4; yy < y + h - 4; yy++)
			for (int xx = x + 4; xx < x + w - 4; xx++) {
				int rr, gg, bb;
				cf_pixel(&img, xx, yy, &rr, &gg, &bb);
				grey += abs(rr - gg) < 8 && abs(gg - bb) < 10 && rr > 180;
				dark += rr < 120 && gg < 120;
			}
		assert_true(grey > (w - 8) * (h - 8) * 9 / 10);
		assert_true(dark < (w - 8) * (h - 8) / 10); /* only its label */
		/* hatching: both the fill and the darker lines occur */
		assert_true(cf_count_near(&img, x + w / 2, y + 6, 8, 242, 242, 242, 3) > 0);
		assert_true(cf_count_near(&img, x + w / 2, y + 6, 8, 199, 199, 204, 16) > 0);
	}
	/* Requests queued (120K x 2): white corner triangle top right */
	cell_origin(&info, 4, 1, &x, &y, &w, &h);
	assert_true(cf_count_near(&img, x + w - 6, y + 4, 2, 255, 255, 255, 10) >= 5);
	/* while a Valid neighbour (120K x 4) has none */
	cell_origin(&info, 4, 2, &x, &y, &w, &h);
	assert_int_equal(cf_count_near(&img, x + w - 6, y + 4, 2, 255, 255, 255, 10), 0);
	/* Errors (16K x 64): the vermillion badge top left */
	cell_origin(&info, 1, 6, &x, &y, &w, &h);
	rgb_of(tt__chart_palette[3], &R, &G, &B);
	assert_true(cf_count_near(&img, x + 9, y + 9, 3, R, G, B, 30) >= 10);
	cell_origin(&info, 1, 5, &x, &y, &w, &h);
	assert_int_equal(cf_count_near(&img, x + 9, y + 9, 3, R, G, B, 30), 0);
	cf_image_free(&img);
	tt_buf_release(&b);
	cf_report_free(r);
}

/* M-goodput: the highest concurrency of a context meeting the SLOs is
 * outlined in ink; without SLOs nothing is. */
static void test_heatmap_slo_outline(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	struct tt_chart_info info;
	struct cf_image img;
	int x, y, w, h, R, G, B;
	(void)state;
	for (size_t i = 0; i < r->n_cells; i++)
		r->cells[i].slo_ok = r->cells[i].phase == TT_PHASE_DECODE &&
				     r->cells[i].context == 8192 && r->cells[i].concurrency <= 64;
	rgb_of(tt__chart_ink, &R, &G, &B);
	for (int with = 0; with < 2; with++) {
		int inked;
		r->opts.slo.ttft_ms = with ? 500 : 0;
		tt_buf_init(&b, 0);
		assert_int_equal(render(r, TT_CHART_HEATMAP, TT_CHART_PNG, 960, 600, 96, &b, &info),
				 TT_OK);
		assert_int_equal(cf_png_decode(&b, &img), 0);
		/* 8K x 64: the left edge of the outline, halfway down */
		cell_origin(&info, 0, 6, &x, &y, &w, &h);
		inked = cf_count_near(&img, x + 3, y + h / 2, 1, R, G, B, 40);
		if (with)
			assert_true(inked >= 3);
		else
			assert_int_equal(inked, 0);
		/* 8K x 32 meets too but is not the highest: no outline */
		cell_origin(&info, 0, 5, &x, &y, &w, &h);
		assert_int_equal(cf_count_near(&img, x + 3, y + h / 2, 1, R, G, B, 40), 0);
		cf_image_free(&img);
		tt_buf_release(&b);
	}
	cf_report_free(r);
}

/* M-ttft-parts: the stacked bars in the three colours, tallest where the
 * parts add up most; a run without server timings gets the message only. */
static void test_ttft_parts(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	struct tt_chart_info info;
	struct cf_image img;
	long found[3] = {0, 0, 0}, found_empty[3] = {0, 0, 0};
	(void)state;
	for (int with = 1; with >= 0; with--) {
		for (size_t i = 0; i < r->n_cells; i++) {
			struct tt_cell_figures *c = &r->cells[i];
			c->queue_ms = with && c->phase == TT_PHASE_DECODE ? 5.0 * c->concurrency : NAN;
			c->prefill_ms = with && c->phase == TT_PHASE_DECODE ? 20 : NAN;
			c->ttft_rest_ms = with && c->phase == TT_PHASE_DECODE ? 3 : NAN;
		}
		tt_buf_init(&b, 0);
		assert_int_equal(render(r, TT_CHART_TTFT_PARTS, TT_CHART_PNG, 960, 600, 96, &b,
					&info),
				 TT_OK);
		assert_int_equal(cf_png_decode(&b, &img), 0);
		for (int k = 0; k < 3; k++) {
			int R, G, B;
			rgb_of(tt__chart_palette[k], &R, &G, &B);
			(with ? found : found_empty)[k] =
				cf_count_near(&img, img.w / 2, img.h / 2, img.w / 2, R, G, B, 6);
		}
		if (with)
			assert_true(info.cols > 10 && info.n_series == 3);
		cf_image_free(&img);
		tt_buf_release(&b);
	}
	for (int k = 0; k < 3; k++) {
		assert_true(found[k] > 50);
		assert_true(found_empty[k] < 5);
	}
	cf_report_free(r);
}

static void test_size_and_dpi(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf a, b;
	struct tt_chart_info ia, ib;
	struct cf_image img;
	(void)state;
	tt_buf_init(&a, 0);
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_THROUGHPUT, TT_CHART_PNG, 960, 600, 96, &a, &ia),
			 TT_OK);
	assert_int_equal(render(r, TT_CHART_THROUGHPUT, TT_CHART_PNG, 1920, 1200, 192, &b, &ib),
			 TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(img.w, 1920);
	assert_int_equal(img.h, 1200);
	/* same layout, twice the pixels */
	assert_true(fabs(ib.plot_w - 2 * ia.plot_w) < 1);
	assert_true(fabs(ib.plot_x - 2 * ia.plot_x) < 1);
	cf_image_free(&img);
	tt_buf_reset(&b);
	/* a bigger canvas at 96 dpi gets a bigger plot, same text size */
	assert_int_equal(render(r, TT_CHART_THROUGHPUT, TT_CHART_PNG, 1600, 900, 96, &b, &ib),
			 TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	assert_int_equal(img.w, 1600);
	assert_int_equal(img.h, 900);
	assert_true(ib.plot_w > ia.plot_w + 500);
	cf_image_free(&img);
	tt_buf_release(&a);
	tt_buf_release(&b);
	cf_report_free(r);
}

static void test_deterministic(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	(void)state;
	for (int f = TT_CHART_PNG; f <= TT_CHART_PDF; f++) {
		for (size_t i = 0; i < sizeof report_kinds / sizeof report_kinds[0]; i++) {
			struct tt_buf a, b;
			tt_buf_init(&a, 0);
			tt_buf_init(&b, 0);
			assert_int_equal(render(r, report_kinds[i], (enum tt_chart_format)f, 960,
						600, 96, &a, NULL),
					 TT_OK);
			assert_int_equal(render(r, report_kinds[i], (enum tt_chart_format)f, 960,
						600, 96, &b, NULL),
					 TT_OK);
			assert_int_equal(a.len, b.len);
			assert_memory_equal(a.data, b.data, a.len);
			tt_buf_release(&a);
			tt_buf_release(&b);
		}
	}
	cf_report_free(r);
}

static void test_svg_is_vector(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	(void)state;
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_TTFT, TT_CHART_SVG, 960, 600, 96, &b, NULL), TT_OK);
	assert_non_null(strstr(b.data, "<svg"));
	assert_non_null(strstr(b.data, "width=\"960px\""));
	assert_non_null(strstr(b.data, "<path"));
	assert_null(strstr(b.data, "<image")); /* no raster inside */
	tt_buf_release(&b);
	cf_report_free(r);
}

static void test_pdf_chart_is_text_and_vector(void **state)
{
	struct tt_report *r = cf_seed_report("Org/Model-X");
	struct tt_buf b;
	char *dir = cf_tmpdir("pdf"), path[4200], cmd[4400], *out;
	(void)state;
	assert_non_null(dir);
	tt_buf_init(&b, 0);
	assert_int_equal(render(r, TT_CHART_THROUGHPUT, TT_CHART_PDF, 960, 600, 96, &b, NULL),
			 TT_OK);
	assert_memory_equal(b.data, "%PDF-", 5);
	snprintf(path, sizeof path, "%s/c.pdf", dir);
	assert_int_equal(cf_write(path, b.data, b.len), 0);
	snprintf(cmd, sizeof cmd, "pdfinfo '%s'", path);
	out = cf_run_cmd(cmd);
	assert_non_null(out); /* poppler-utils must be installed */
	assert_int_equal(pdf_pages(out), 1);
	assert_non_null(strstr(out, "720 x 450 pts"));
	free(out);
	snprintf(cmd, sizeof cmd, "pdftotext '%s' -", path);
	out = cf_run_cmd(cmd);
	assert_non_null(out);
	assert_non_null(strstr(out, "Total decode throughput vs concurrency"));
	/* the title names the model without its organisation, as the seed does */
	assert_non_null(strstr(out, "Model-X on H200 NVL · vllm 0.26.1rc1 · BF16"));
	assert_null(strstr(out, "Org/"));
	assert_non_null(strstr(out, "Requests at once"));
	assert_non_null(strstr(out, "25K")); /* SI tick label */
	free(out);
	cf_rmrf(dir);
	free(dir);
	tt_buf_release(&b);
	cf_report_free(r);
}

/* A negative rest (client TTFT below queue + prefill) is drawn as none
 * and the footnote says so, with the most negative value; without one the
 * footnote has no such sentence. */
static void test_ttft_parts_negative_rest(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_buf b;
	char *dir = cf_tmpdir("pdfneg"), path[4200], cmd[4400], *out;
	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof path, "%s/c.pdf", dir);
	snprintf(cmd, sizeof cmd, "pdftotext -raw '%s' -", path);
	for (int neg = 1; neg >= 0; neg--) {
		int k = 0;
		for (size_t i = 0; i < r->n_cells; i++) {
			struct tt_cell_figures *c = &r->cells[i];
			int d = c->phase == TT_PHASE_DECODE;
			c->queue_ms = d ? 5.0 * c->concurrency : NAN;
			c->prefill_ms = d ? 20 : NAN;
			c->ttft_rest_ms = d ? (neg && k < 2 ? -1.25 - k : 3) : NAN;
			k += d;
		}
		tt_buf_init(&b, 0);
		assert_int_equal(render(r, TT_CHART_TTFT_PARTS, TT_CHART_PDF, 960, 600, 96, &b,
					NULL),
				 TT_OK);
		assert_int_equal(cf_write(path, b.data, b.len), 0);
		tt_buf_release(&b);
		out = cf_run_cmd(cmd);
		assert_non_null(out);
		for (char *q = out; *q; q++)
			if (*q == '\n')
				*q = ' ';
		if (neg)
			assert_non_null(strstr(out, "In 2 cells the client's TTFT was below queue + "
						    "prefill (rest down to -2.25 ms), drawn as no rest."));
		else
			assert_null(strstr(out, "drawn as no rest"));
		free(out);
	}
	cf_rmrf(dir);
	free(dir);
	cf_report_free(r);
}

static void test_bad_arguments(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_chart_opts o;
	struct tt_error err;
	struct tt_buf b;
	(void)state;
	tt_buf_init(&b, 0);
	tt_chart_opts_init(&o);
	o.kind = (enum tt_chart_kind)42;
	assert_int_equal(tt_chart_render(r, NULL, &o, &b, NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	assert_non_null(strstr(err.msg, "heatmap, throughput"));
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_TIMELINE;
	assert_int_equal(tt_chart_render(r, NULL, &o, &b, NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	assert_non_null(strstr(err.msg, "needs the run"));
	tt_chart_opts_init(&o);
	o.width = 5;
	assert_int_equal(tt_chart_render(r, NULL, &o, &b, NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	assert_non_null(strstr(err.msg, "out of range"));
	assert_int_equal(b.len, 0); /* nothing half-written */
	tt_chart_opts_init(&o);
	assert_int_equal(tt_chart_write(r, NULL, &o, "/nonexistent-dir/x.png", NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent-dir/x.png"));
	tt_buf_release(&b);
	cf_report_free(r);
}

static void test_empty_report(void **state)
{
	struct tt_report *r = calloc(1, sizeof *r);
	(void)state;
	assert_non_null(r);
	tt_manifest_init(&r->manifest);
	tt_analysis_opts_init(&r->opts);
	for (size_t i = 0; i < sizeof report_kinds / sizeof report_kinds[0]; i++) {
		struct tt_buf b;
		struct cf_image img;
		tt_buf_init(&b, 0);
		assert_int_equal(render(r, report_kinds[i], TT_CHART_PNG, 640, 400, 96, &b, NULL),
				 TT_OK);
		assert_int_equal(cf_png_decode(&b, &img), 0);
		assert_true(cf_count_ink(&img) > 100); /* says why it is empty */
		cf_image_free(&img);
		tt_buf_release(&b);
	}
	cf_report_free(r);
}

static void test_hostile_strings(void **state)
{
	/* invalid UTF-8, markup and quotes in the model name */
	struct tt_report *r = cf_seed_report("<b>bad\xff\xfe</b> \"q\" & <script>");
	struct tt_buf b;
	(void)state;
	tt_buf_init(&b, 0);
	for (int f = TT_CHART_PNG; f <= TT_CHART_PDF; f++) {
		tt_buf_reset(&b);
		assert_int_equal(render(r, TT_CHART_HEATMAP, (enum tt_chart_format)f, 960, 600, 96,
					&b, NULL),
				 TT_OK);
		assert_true(b.len > 1000);
	}
	tt_buf_release(&b);
	cf_report_free(r);
}

static void test_buffer_ceiling(void **state)
{
	struct tt_report *r = cf_seed_report(NULL);
	struct tt_chart_opts o;
	struct tt_error err;
	struct tt_buf b;
	(void)state;
	tt_buf_init(&b, 1000); /* far too small for a PNG */
	tt_chart_opts_init(&o);
	assert_int_not_equal(tt_chart_render(r, NULL, &o, &b, NULL, &err), TT_OK);
	assert_true(err.msg[0] != '\0');
	tt_buf_release(&b);
	cf_report_free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_png_size_and_ink),
		cmocka_unit_test(test_throughput_points_where_the_data_says),
		cmocka_unit_test(test_heatmap_colours_and_marks),
		cmocka_unit_test(test_heatmap_slo_outline),
		cmocka_unit_test(test_ttft_parts),
		cmocka_unit_test(test_ttft_parts_negative_rest),
		cmocka_unit_test(test_ttft_band_from_quantiles),
		cmocka_unit_test(test_size_and_dpi),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_svg_is_vector),
		cmocka_unit_test(test_pdf_chart_is_text_and_vector),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_empty_report),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_buffer_ceiling),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
