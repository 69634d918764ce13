/* Charts and reports of a real (synthetic) run: the charts drawn from raw
 * traces, and the HTML and PDF reports with a hostile model name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_fixture.h"
#include "chart/chart_impl.h"

#define HOSTILE "<script>alert(\"x\")</script> & 'q'"
#define HOSTILE_ESCAPED "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"

struct fx {
	char *dir;
	struct tt_run *run;
	struct tt_report *rep;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	f->run = cf_small_run(HOSTILE, &f->dir);
	if (!f->run)
		return -1;
	f->rep = cf_analyze(f->run);
	if (!f->rep)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	tt_report_free(f->rep);
	tt_run_free(f->run);
	if (f->dir)
		cf_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static long count(const char *hay, const char *needle)
{
	long n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static long pdf_pages(const char *pdfinfo)
{
	const char *p = strstr(pdfinfo, "Pages:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

static void test_timeline_marks_the_window(void **state)
{
	struct fx *f = *state;
	const struct tt_manifest *m = tt_run_manifest(f->run);
	long cell = tt_manifest_find_cell(m, "decode-8192x16");
	struct tt_chart_opts o;
	struct tt_chart_info info;
	struct tt_error err;
	struct tt_buf b;
	struct cf_image img;
	double ws, we, mid_x, before_x;
	int band = 0, outside = 0, line = 0, R, G, B;

	assert_true(cell >= 0);
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_TIMELINE;
	o.cell = cell;
	tt_buf_init(&b, 0);
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, &info, &err), TT_OK);
	assert_int_equal(cf_png_decode(&b, &img), 0);
	ws = (double)(m->cells[cell].window_start_ns - m->cells[cell].start_ns) / 1e9;
	we = (double)(m->cells[cell].window_end_ns - m->cells[cell].start_ns) / 1e9;
	assert_true(we > ws && ws > 0);
	mid_x = cf_map_x(&info, (ws + we) / 2);
	before_x = cf_map_x(&info, ws / 3);
	/* the window is shaded (light blue) in the top panel; before it, white */
	for (int y = (int)info.plot_y + 20; y < (int)(info.plot_y + info.plot_h) - 4; y++) {
		int r, g, bb;
		cf_pixel(&img, (int)mid_x, y, &r, &g, &bb);
		band += abs(r - 237) <= 3 && abs(g - 242) <= 3 && abs(bb - 250) <= 3;
		cf_pixel(&img, (int)before_x, y, &r, &g, &bb);
		outside += abs(r - 237) <= 3 && abs(g - 242) <= 3 && abs(bb - 250) <= 3;
	}
	assert_true(band > 20);
	assert_int_equal(outside, 0);
	/* the tok/s line is drawn across the window: near 10.3K tok/s */
	R = (int)lround(tt__chart_palette[0].r * 255);
	G = (int)lround(tt__chart_palette[0].g * 255);
	B = (int)lround(tt__chart_palette[0].b * 255);
	for (int y = (int)info.plot_y; y < (int)(info.plot_y + info.plot_h); y++)
		line += cf_count_near(&img, (int)mid_x, y, 0, R, G, B, 40);
	assert_true(line >= 1);
	{
		double y_line = cf_map_y(&info, 10300);
		assert_true(cf_count_near(&img, (int)mid_x, (int)y_line, 12, R, G, B, 40) > 0);
	}
	cf_image_free(&img);
	tt_buf_release(&b);
}

/* The timeline's title counts requests in the singular for one. */
static void test_timeline_title_plural(void **state)
{
	struct fx *f = *state;
	const struct tt_manifest *m = tt_run_manifest(f->run);
	const char *ids[] = {"decode-8192x1", "decode-8192x16"};
	const char *want[] = {"× 1 request\n", "× 16 requests\n"};
	char path[512], cmd[600];
	struct tt_error err;

	for (int k = 0; k < 2; k++) {
		struct tt_chart_opts o;
		struct tt_buf b;
		char *text;
		long cell = tt_manifest_find_cell(m, ids[k]);
		assert_true(cell >= 0);
		tt_chart_opts_init(&o);
		o.kind = TT_CHART_TIMELINE;
		o.format = TT_CHART_PDF;
		o.cell = cell;
		tt_buf_init(&b, 0);
		assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_OK);
		snprintf(path, sizeof path, "%s/title%d.pdf", f->dir, k);
		assert_int_equal(cf_write(path, b.data, b.len), 0);
		tt_buf_release(&b);
		snprintf(cmd, sizeof cmd, "pdftotext '%s' -", path);
		text = cf_run_cmd(cmd); /* needs poppler-utils */
		assert_non_null(text);
		if (!strstr(text, want[k]) || strstr(text, "× 1 requests"))
			fail_msg("%s: no '%s' in the chart's text:\n%s", ids[k], want[k], text);
		free(text);
	}
}

static void test_timeline_errors(void **state)
{
	struct fx *f = *state;
	struct tt_chart_opts o;
	struct tt_error err;
	struct tt_buf b;
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_TIMELINE;
	o.cell = 9999;
	tt_buf_init(&b, 0);
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ENOTFOUND);
	/* the default cell exists and draws */
	o.cell = -1;
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_OK);
	tt_buf_release(&b);
}

static void test_tbt_cdf_per_context(void **state)
{
	struct fx *f = *state;
	struct tt_chart_opts o;
	struct tt_chart_info info;
	struct tt_error err;
	struct tt_buf b;
	struct cf_image img;
	tt_chart_opts_init(&o);
	o.kind = TT_CHART_TBT_CDF;
	o.concurrency = 4;
	tt_buf_init(&b, 0);
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, &info, &err), TT_OK);
	assert_int_equal(info.n_series, 2); /* 8K and 16K */
	assert_int_equal(info.x_scale, 10);
	assert_true(info.y_lo == 0 && info.y_hi > 1);
	/* the 8K curve passes its median: at 50 %, near the cell's p50 */
	assert_int_equal(cf_png_decode(&b, &img), 0);
	{
		const struct tt_cell_figures *c = tt__chart_find_cell(f->rep, TT_PHASE_DECODE, 8192, 4);
		int R = (int)lround(tt__chart_palette[0].r * 255), G = (int)lround(tt__chart_palette[0].g * 255),
		    B = (int)lround(tt__chart_palette[0].b * 255);
		assert_non_null(c);
		assert_true(cf_count_near(&img, (int)lround(cf_map_x(&info, c->tbt_ms.p50)),
					  (int)lround(cf_map_y(&info, 0.5)), 6, R, G, B, 40) > 0);
	}
	cf_image_free(&img);
	/* at 16 the 16K cell is Over capacity: one curve */
	o.concurrency = 16;
	tt_buf_reset(&b);
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, &info, &err), TT_OK);
	assert_int_equal(info.n_series, 1);
	/* no such level */
	o.concurrency = 3;
	assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "concurrency 3"));
	tt_buf_release(&b);
}

static void test_html_report_self_contained(void **state)
{
	struct fx *f = *state;
	struct tt_buf h;
	struct tt_error err;
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(f->rep, f->run, &h, &err), TT_OK);
	assert_non_null(strstr(h.data, "<!DOCTYPE html>"));
	assert_true(count(h.data, "<table") >= 4); /* prefill, matrix, all, not valid */
	assert_int_equal(count(h.data, "data:image/svg+xml;base64,"), TT_CHART_KIND_COUNT_);
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++) {
		char id[64];
		snprintf(id, sizeof id, "id=\"chart-%s\"", tt_chart_kind_name((enum tt_chart_kind)k));
		assert_non_null(strstr(h.data, id));
	}
	/* nothing is fetched, nothing runs */
	assert_non_null(strstr(h.data, "Content-Security-Policy"));
	assert_null(strstr(h.data, "src=\"http"));
	assert_null(strstr(h.data, "href=\"http"));
	assert_null(strstr(h.data, "url("));
	assert_null(strstr(h.data, "<script"));
	assert_non_null(strstr(h.data, "All measurements"));
	assert_non_null(strstr(h.data, "Requests queued"));
	tt_buf_release(&h);
}

static void test_html_escapes_run_strings(void **state)
{
	struct fx *f = *state;
	struct tt_buf h;
	struct tt_error err;
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(f->rep, f->run, &h, &err), TT_OK);
	assert_null(strstr(h.data, "<script>"));
	assert_null(strstr(h.data, "alert(\"x\")"));
	assert_true(count(h.data, HOSTILE_ESCAPED) >= 3); /* title, subtitle, facts */
	tt_buf_release(&h);
}

static void test_pdf_report_pages_and_text(void **state)
{
	struct fx *f = *state;
	struct tt_error err;
	char path[4200], cmd[4400], *info, *text;
	long pages;
	snprintf(path, sizeof path, "%s/report.pdf", f->dir);
	assert_int_equal(tt_render_pdf(f->rep, f->run, path, &err), TT_OK);
	snprintf(cmd, sizeof cmd, "pdfinfo '%s'", path);
	info = cf_run_cmd(cmd);
	assert_non_null(info); /* needs poppler-utils */
	pages = pdf_pages(info);
	/* facts and tables (at least one page), then one page per chart */
	assert_true(pages >= 1 + TT_CHART_KIND_COUNT_);
	assert_non_null(strstr(info, "841.89 x 595.28 pts (A4)")); /* A4 landscape */
	assert_non_null(strstr(info, "Title:"));
	snprintf(cmd, sizeof cmd, "pdftotext -layout '%s' -", path);
	text = cf_run_cmd(cmd);
	assert_non_null(text);
	assert_non_null(strstr(text, "Speed test matrix"));
	assert_non_null(strstr(text, HOSTILE)); /* intact, not escaped */
	assert_null(strstr(text, "&lt;"));
	assert_non_null(strstr(text, "Prefill"));
	assert_non_null(strstr(text, "Sustained decode"));
	assert_non_null(strstr(text, "All measurements"));
	assert_non_null(strstr(text, "Requests queued"));
	assert_non_null(strstr(text, "Over capacity"));
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++)
		if (k != TT_CHART_TIMELINE && k != TT_CHART_TBT_CDF)
			assert_non_null(strstr(text, tt__chart_kind_title((enum tt_chart_kind)k)));
	assert_non_null(strstr(text, "Cell timeline"));
	assert_non_null(strstr(text, "Time between tokens at 16 requests at once"));
	assert_non_null(strstr(text, "page 2"));
	free(info);
	free(text);
	/* true vector: not one raster image on any page (the listing is its
	 * two header lines) */
	snprintf(cmd, sizeof cmd, "pdfimages -list '%s'", path);
	text = cf_run_cmd(cmd);
	assert_non_null(text);
	assert_int_equal(count(text, "\n"), 2);
	free(text);
}

static void test_reports_deterministic(void **state)
{
	struct fx *f = *state;
	struct tt_buf a, b;
	struct tt_error err;
	tt_buf_init(&a, 0);
	tt_buf_init(&b, 0);
	assert_int_equal(tt_render_html(f->rep, f->run, &a, &err), TT_OK);
	assert_int_equal(tt_render_html(f->rep, f->run, &b, &err), TT_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	tt_buf_reset(&a);
	tt_buf_reset(&b);
	assert_int_equal(tt_render_pdf_buf(f->rep, f->run, &a, &err), TT_OK);
	assert_int_equal(tt_render_pdf_buf(f->rep, f->run, &b, &err), TT_OK);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	tt_buf_release(&a);
	tt_buf_release(&b);
}

static void test_reports_without_run(void **state)
{
	/* The report command may have no run at hand: charts from traces are
	 * left out, the rest is there. */
	struct fx *f = *state;
	struct tt_buf h;
	struct tt_error err;
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(f->rep, NULL, &h, &err), TT_OK);
	assert_int_equal(count(h.data, "data:image/svg+xml;base64,"), TT_CHART_KIND_COUNT_ - 2);
	tt_buf_reset(&h);
	assert_int_equal(tt_render_pdf_buf(f->rep, NULL, &h, &err), TT_OK);
	assert_memory_equal(h.data, "%PDF-", 5);
	tt_buf_release(&h);
}

static char *b64(const unsigned char *d, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc((n + 2) / 3 * 4 + 1), *p = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);
		*p++ = tab[v >> 18 & 63];
		*p++ = tab[v >> 12 & 63];
		*p++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*p++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*p = '\0';
	return o;
}

static void test_render_all_writes_everything(void **state)
{
	struct fx *f = *state;
	struct tt_error err;
	char dir[4200], path[4300], *html, *svg, *enc;
	size_t len;
	snprintf(dir, sizeof dir, "%s/all", f->dir);
	assert_int_equal(tt_render_all(f->rep, f->run, dir, TT_CHART_SVG, &err), TT_OK);
	for (int k = 0; k < TT_CHART_KIND_COUNT_; k++) {
		snprintf(path, sizeof path, "%s/%s.svg", dir, tt_chart_kind_name((enum tt_chart_kind)k));
		svg = cf_read(path, &len);
		assert_non_null(svg);
		assert_non_null(strstr(svg, "<svg"));
		free(svg);
	}
	snprintf(path, sizeof path, "%s/report.html", dir);
	html = cf_read(path, NULL);
	assert_non_null(html);
	/* the HTML embeds the very SVG files, and they equal tt_chart_render's */
	snprintf(path, sizeof path, "%s/timeline.svg", dir);
	svg = cf_read(path, &len);
	assert_non_null(svg);
	enc = b64((const unsigned char *)svg, len);
	assert_non_null(strstr(html, enc));
	{
		struct tt_chart_opts o;
		struct tt_buf b;
		tt_chart_opts_init(&o);
		o.kind = TT_CHART_TIMELINE;
		o.format = TT_CHART_SVG;
		tt_buf_init(&b, 0);
		assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_OK);
		assert_int_equal(b.len, len);
		assert_memory_equal(b.data, svg, len);
		tt_buf_release(&b);
	}
	free(enc);
	free(svg);
	free(html);
	/* the CDF drawn from the cache (its 16-request cells partly read along
	 * with the timeline's) equals one drawn from fresh reads */
	snprintf(path, sizeof path, "%s/tbt-cdf.svg", dir);
	svg = cf_read(path, &len);
	assert_non_null(svg);
	{
		struct tt_chart_opts o;
		struct tt_buf b;
		tt_chart_opts_init(&o);
		o.kind = TT_CHART_TBT_CDF;
		o.format = TT_CHART_SVG;
		tt_buf_init(&b, 0);
		assert_int_equal(tt_chart_render(f->rep, f->run, &o, &b, NULL, &err), TT_OK);
		assert_int_equal(b.len, len);
		assert_memory_equal(b.data, svg, len);
		tt_buf_release(&b);
	}
	free(svg);
	/* the PDF report is there and whole */
	snprintf(path, sizeof path, "%s/report.pdf", dir);
	svg = cf_read(path, &len);
	assert_non_null(svg);
	assert_memory_equal(svg, "%PDF-", 5);
	assert_non_null(strstr(svg + len - 16, "%%EOF"));
	free(svg);
	/* PNG charts, into an existing directory */
	assert_int_equal(tt_render_all(f->rep, f->run, dir, TT_CHART_PNG, &err), TT_OK);
	snprintf(path, sizeof path, "%s/heatmap.png", dir);
	{
		struct cf_image img;
		assert_int_equal(cf_png_load(path, &img), 0);
		assert_int_equal(img.w, 960);
		cf_image_free(&img);
	}
	/* a directory that cannot be made */
	assert_int_equal(tt_render_all(f->rep, f->run, "/proc/no/such/dir", TT_CHART_SVG, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EIO);
	assert_non_null(strstr(err.msg, "/proc/no/such/dir"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_timeline_marks_the_window, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_title_plural, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tbt_cdf_per_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_report_self_contained, setup, teardown),
		cmocka_unit_test_setup_teardown(test_html_escapes_run_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pdf_report_pages_and_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reports_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reports_without_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_render_all_writes_everything, setup, teardown),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
