/* Open-loop charts (docs/charts.md "Open-loop charts") from the recorded
 * open-loop run (fixtures/runs/openloop.tar.zst: 30/s Valid, 120/s past
 * the simulator's 80/s): names, axes, the SLO limit's interval inside the
 * x range, goodput that needs SLOs, every format drawn; the HTML and PDF
 * reports and tt_render_all with the open-loop table and the three charts,
 * and a closed-loop report's chart list as it was. */
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
#include "tokentrace/diff.h"
#include "tokentrace/diffview.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"
#include "tt_cmocka.h"

#include "chart/chart_impl.h"
#include "text/render_rate.h"

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

static const enum tt_chart_kind rate_kinds[] = {TT_CHART_RATE_LATENCY, TT_CHART_RATE_THROUGHPUT,
						 TT_CHART_RATE_GOODPUT};

/* The run and its report (the run kept: the reports take it). */
static struct tt_report *load_run(const char *slo, struct tt_run **run)
{
	struct tt_report *rep = NULL;
	struct tt_analysis_opts o;
	struct tt_error err;

	tt_analysis_opts_init(&o);
	if (slo)
		assert_int_equal(tt_slo_parse(slo, &o.slo, &err), TT_OK);
	assert_int_equal(tt_run_open(TT_FIXTURES "/runs/openloop.tar.zst", run, &err), TT_OK);
	assert_int_equal(tt_analyze(*run, &o, &rep, &err), TT_OK);
	return rep;
}

static long count(const char *hay, const char *needle)
{
	long n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The base64 payload of the image in <figure id="chart-NAME">, decoded. */
static int embedded_image(const char *html, const char *name, struct tt_buf *out)
{
	char id[96];
	const char *p, *end;
	unsigned v = 0;
	int bits = 0;

	snprintf(id, sizeof id, "<figure id=\"chart-%s\"><img", name);
	p = strstr(html, id);
	if (!p || !(p = strstr(p, ";base64,")))
		return -1;
	p += 8;
	end = strchr(p, '"');
	if (!end)
		return -1;
	for (; p < end && *p != '='; p++) {
		const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *k = strchr(tab, *p);
		if (!k)
			return -1;
		v = v << 6 | (unsigned)(k - tab);
		bits += 6;
		if (bits >= 8) {
			unsigned char c = (unsigned char)(v >> (bits - 8));
			bits -= 8;
			tt_buf_append(out, &c, 1);
		}
	}
	return 0;
}

/* Every cell of the open-loop table the term and md reports print
 * (tt__render_rate_table) appears in text; headers too when heads (a PDF
 * wraps them over lines). */
static void rate_table_in(const struct tt_report *rep, const char *text, int heads,
			  const char *what)
{
	size_t *order = tt__render_order(rep);
	struct tt__table x;

	assert_non_null(order);
	assert_int_equal(tt__render_rate_table(rep, order, &x), 0);
	assert_int_equal(x.nrows, 3); /* the header, 30/s, 120/s */
	for (size_t i = heads ? 0 : 1; i < x.nrows; i++)
		for (size_t j = 0; j < x.ncols; j++)
			if (!strstr(text, tt__table_get(&x, i, j)))
				fail_msg("%s: no '%s' (open-loop table row %zu column %zu)", what,
					 tt__table_get(&x, i, j), i, j);
	tt__table_free(&x);
	free(order);
}

static void test_html_report_open_loop(void **state)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = load_run("ttft=100ms,attain=90", &run);
	struct tt_report *plain;
	struct tt_run *run2 = NULL;
	struct tt_buf h, img, svg, svg_plain;
	struct tt_error err;

	(void)state;
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(rep, run, &h, &err), TT_OK);
	/* the open-loop table: latency from the due time and from the send,
	 * send lateness, achieved vs offered, goodput, the statuses */
	assert_non_null(strstr(h.data, "<h2>Open-loop cells</h2>"));
	assert_non_null(strstr(h.data, "href=\"#table-"));
	for (const char *const *col = (const char *const[]){"TTFT p50 sent", "TTFT p50 due",
		"TTFT p99 due", "E2E p99 due", "Late p50", "Late p99", "Due/s", "Ended/s",
		"Goodput/s", "SLO met", "TTFT growth", "Unanswered", NULL}; *col; col++)
		if (!strstr(h.data, *col))
			fail_msg("no column '%s' in the HTML report", *col);
	rate_table_in(rep, h.data, 1, "html");
	assert_non_null(strstr(h.data, "<td class=\"r\">120/s</td>"));
	/* marked in All measurements, Cells that are not Valid, Open-loop cells */
	assert_int_equal(count(h.data, "<span class=\"st s9\">Rate not sustained</span>"), 3);
	assert_non_null(strstr(h.data, ".s9{background:"));
	assert_non_null(strstr(h.data, "highest rate meeting the SLOs 30/s"));
	assert_non_null(strstr(h.data, "<td>Open loop</td>"));
	/* the three charts, and no decode chart: the run has no decode cell */
	assert_int_equal(count(h.data, "data:image/svg+xml;base64,"), 4); /* prefill + 3 */
	assert_null(strstr(h.data, "id=\"chart-heatmap\""));
	assert_null(strstr(h.data, "id=\"chart-timeline\""));
	assert_null(strstr(h.data, "not drawn"));
	tt_buf_init(&img, 0);
	tt_buf_init(&svg, 0);
	tt_buf_init(&svg_plain, 0);
	plain = load_run(NULL, &run2);
	for (size_t k = 0; k < 3; k++) {
		struct tt_chart_opts o;
		const char *name = tt_chart_kind_name(rate_kinds[k]);
		tt_buf_reset(&img);
		tt_buf_reset(&svg);
		tt_buf_reset(&svg_plain);
		if (embedded_image(h.data, name, &img))
			fail_msg("no embedded image for %s", name);
		/* the very chart `tokentrace chart --kind` draws, with the SLOs */
		tt_chart_opts_init(&o);
		o.kind = rate_kinds[k];
		o.format = TT_CHART_SVG;
		assert_int_equal(tt_chart_render(rep, run, &o, &svg, NULL, &err), TT_OK);
		assert_int_equal(img.len, svg.len);
		assert_memory_equal(img.data, svg.data, svg.len);
		/* the SLO limit changes the picture (shaded, axis covers it) */
		assert_int_equal(tt_chart_render(plain, run2, &o, &svg_plain, NULL, &err), TT_OK);
		assert_true(svg_plain.len != svg.len ||
			    memcmp(svg_plain.data, svg.data, svg.len) != 0);
	}
	/* without SLOs: no goodput column, and the page still has the charts */
	tt_buf_reset(&h);
	assert_int_equal(tt_render_html(plain, run2, &h, &err), TT_OK);
	assert_null(strstr(h.data, "Goodput/s"));
	assert_int_equal(count(h.data, "data:image/svg+xml;base64,"), 4);
	tt_buf_release(&img);
	tt_buf_release(&svg);
	tt_buf_release(&svg_plain);
	tt_buf_release(&h);
	tt_report_free(plain);
	tt_run_free(run2);
	tt_report_free(rep);
	tt_run_free(run);
}

static long pdf_pages(const char *pdfinfo)
{
	const char *p = strstr(pdfinfo, "Pages:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

/* The PDF's text (pdftotext) and page count; *dir removed by the caller. */
static char *pdf_text(struct tt_report *rep, struct tt_run *run, char **dir, long *pages)
{
	char path[4200], cmd[4400], *info, *text;
	struct tt_error err;

	*dir = cf_tmpdir("rate-pdf");
	assert_non_null(*dir);
	snprintf(path, sizeof path, "%s/report.pdf", *dir);
	assert_int_equal(tt_render_pdf(rep, run, path, &err), TT_OK);
	snprintf(cmd, sizeof cmd, "pdfinfo '%s'", path);
	info = cf_run_cmd(cmd); /* needs poppler-utils */
	assert_non_null(info);
	*pages = pdf_pages(info);
	free(info);
	snprintf(cmd, sizeof cmd, "pdftotext '%s' -", path);
	text = cf_run_cmd(cmd);
	assert_non_null(text);
	return text;
}

static void test_pdf_report_open_loop(void **state)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = load_run("ttft=100ms,attain=90", &run);
	char *dir = NULL, *text;
	long pages;

	(void)state;
	text = pdf_text(rep, run, &dir, &pages);
	/* the tables (at least a page), then one page per chart: prefill and
	 * the three open-loop charts, no decode chart */
	assert_true(pages >= 1 + 4);
	assert_non_null(strstr(text, "Open-loop cells"));
	assert_non_null(strstr(text, "Rate not sustained"));
	assert_non_null(strstr(text, "Goodput/s"));
	assert_non_null(strstr(text, "highest rate meeting the SLOs 30/s"));
	rate_table_in(rep, text, 0, "pdf");
	for (size_t k = 0; k < 3; k++)
		if (!strstr(text, tt__chart_kind_title(rate_kinds[k])))
			fail_msg("no page '%s' in the PDF", tt__chart_kind_title(rate_kinds[k]));
	assert_null(strstr(text, tt__chart_kind_title(TT_CHART_HEATMAP)));
	assert_null(strstr(text, "Not drawn"));
	/* the SLO limit [30, 120) marked on each of the three charts */
	assert_int_equal(count(text, "SLO limit 30\xe2\x80\x93" "120/s"), 3);
	free(text);
	cf_rmrf(dir);
	free(dir);
	tt_report_free(rep);
	tt_run_free(run);

	/* without SLOs: nothing marked, goodput says what it needs */
	rep = load_run(NULL, &run);
	text = pdf_text(rep, run, &dir, &pages);
	assert_true(pages >= 1 + 4);
	assert_null(strstr(text, "SLO limit"));
	assert_non_null(strstr(text, "Goodput needs SLOs (--slo)."));
	free(text);
	cf_rmrf(dir);
	free(dir);
	tt_report_free(rep);
	tt_run_free(run);
}

/* chart all: the open-loop kinds among the files, the HTML embedding the
 * very files (kept per kind beyond the closed-loop kinds' count). */
static void test_render_all_open_loop(void **state)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = load_run("ttft=100ms,attain=90", &run);
	char *dir = cf_tmpdir("rate-all"), path[4200], *html;
	struct tt_error err;
	size_t len;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(tt_render_all(rep, run, dir, TT_CHART_PNG, &err), TT_OK);
	snprintf(path, sizeof path, "%s/report.html", dir);
	html = cf_read(path, &len);
	assert_non_null(html);
	assert_int_equal(count(html, "data:image/png;base64,"), 4);
	for (size_t k = 0; k < 3; k++) {
		const char *name = tt_chart_kind_name(rate_kinds[k]);
		struct tt_buf img;
		char *file;
		size_t flen;
		snprintf(path, sizeof path, "%s/%s.png", dir, name);
		file = cf_read(path, &flen);
		if (!file)
			fail_msg("no %s written", path);
		tt_buf_init(&img, 0);
		assert_int_equal(embedded_image(html, name, &img), 0);
		assert_int_equal(img.len, flen);
		assert_memory_equal(img.data, file, flen);
		tt_buf_release(&img);
		free(file);
	}
	snprintf(path, sizeof path, "%s/heatmap.png", dir);
	assert_null(cf_read(path, &len));
	free(html);
	cf_rmrf(dir);
	free(dir);
	tt_report_free(rep);
	tt_run_free(run);
}

/* Kinds keep distinct slots below TT__CHART_SLOTS; a closed-loop report
 * lists the closed-loop charts as before, never an open-loop one. */
static void test_slots_and_closed_loop_list(void **state)
{
	static const enum tt_chart_kind before[] = {
		TT_CHART_HEATMAP, TT_CHART_THROUGHPUT, TT_CHART_PER_REQUEST, TT_CHART_TRADEOFF,
		TT_CHART_TTFT,    TT_CHART_TBT,        TT_CHART_PREFILL,     TT_CHART_TTFT_PARTS,
		TT_CHART_TIMELINE, TT_CHART_TBT_CDF};
	int seen[TT__CHART_SLOTS] = {0};
	char *dir = NULL;
	struct tt_run *run = cf_small_run("closed", &dir);
	struct tt_report *rep;
	struct tt_chart_opts list[16];
	struct tt_buf h;
	struct tt_error err;
	size_t n;

	(void)state;
	for (int k = 0; k < TT_CHART_RATE_END_; k++) {
		int s = tt__chart_kind_slot((enum tt_chart_kind)k);
		if (!tt_chart_kind_name((enum tt_chart_kind)k)) {
			assert_int_equal(s, -1);
			continue;
		}
		assert_true(s >= 0 && s < TT__CHART_SLOTS);
		assert_int_equal(seen[s], 0);
		seen[s] = 1;
	}
	for (int s = 0; s < TT__CHART_SLOTS; s++)
		assert_int_equal(seen[s], 1);
	assert_int_equal(tt__chart_kind_slot(TT_CHART_RATE_END_), -1);
	assert_int_equal(tt__chart_kind_slot((enum tt_chart_kind)-1), -1);

	assert_non_null(run);
	rep = cf_analyze(run);
	assert_non_null(rep);
	/* with the run the trace charts come too (last); without it, not */
	n = tt__report_chart_list(rep, run, list, 16);
	assert_int_equal(n, sizeof before / sizeof before[0]);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(list[i].kind, before[i]);
	n = tt__report_chart_list(rep, NULL, list, 16);
	assert_int_equal(n, sizeof before / sizeof before[0] - 2);
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(rep, run, &h, &err), TT_OK);
	assert_int_equal(count(h.data, "data:image/svg+xml;base64,"), TT_CHART_KIND_COUNT_);
	assert_null(strstr(h.data, "chart-rate-"));
	assert_null(strstr(h.data, "Open-loop"));
	assert_null(strstr(h.data, "Open loop"));
	assert_null(strstr(h.data, ".s9{"));
	tt_buf_release(&h);
	tt_report_free(rep);
	tt_run_free(run);
	cf_rmrf(dir);
	free(dir);
}

/* The openloop run against itself (or a closed-loop run against itself). */
static struct tt_diff *diff_of(const char *path, const char *slo, struct tt_diff_side **sb,
			       struct tt_diff_side **sc)
{
	struct tt_analysis_opts ao;
	struct tt_diff *d = NULL;
	struct tt_error err;

	tt_analysis_opts_init(&ao);
	if (slo)
		assert_int_equal(tt_slo_parse(slo, &ao.slo, &err), TT_OK);
	assert_int_equal(tt_diff_side_create(NULL, sb, &err), TT_OK);
	assert_int_equal(tt_diff_side_create(NULL, sc, &err), TT_OK);
	for (int s = 0; s < 2; s++) {
		struct tt_run *run = NULL;
		assert_int_equal(tt_run_open(path, &run, &err), TT_OK);
		assert_true(tt_diff_side_add(s ? *sc : *sb, run, &ao, &err) <= TT_WARN);
		tt_run_free(run);
	}
	assert_int_equal(tt_diff_compare(*sb, *sc, &d, &err), TT_OK);
	return d;
}

/* The diff page and document show the open-loop curves the md diff
 * prints: every cell of its rows, and each side's capacity and limit. */
static void test_diff_page_open_loop(void **state)
{
	struct tt_diff_side *sb = NULL, *sc = NULL;
	struct tt_diff *d = diff_of(TT_FIXTURES "/runs/openloop.tar.zst", "ttft=100ms,attain=90",
				    &sb, &sc);
	struct tt_buf md, h, pdf;
	struct tt_error err;
	char *dir, path[4200], cmd[4400], *text;
	size_t rows = 0;

	(void)state;
	tt_buf_init(&md, 0);
	tt_buf_init(&h, 0);
	tt_buf_init(&pdf, 0);
	assert_int_equal(tt_diff_render(d, TT_FORMAT_MD, NULL, NULL, &md, &err), TT_OK);
	assert_int_equal(tt_diff_render_html(d, NULL, NULL, &h, &err), TT_OK);
	assert_non_null(strstr(h.data, "<h2 id=\"open-loop\">Open-loop curves</h2>"));
	assert_non_null(strstr(h.data, "<h3>Context 64</h3>"));
	/* each md row "| 30/s | 30.0 | ... |" is an HTML row of the same cells */
	for (const char *p = strstr(md.data, "## Open-loop curves"); p && (p = strstr(p, "\n| "));) {
		char want[1024] = "<tr>", cellv[128];
		const char *q = p + 3, *eol = strchr(q, '\n');
		size_t col = 0;
		p = eol;
		if (!eol || !strchr("0123456789", *q))
			continue; /* the header and the rule */
		while (q < eol) {
			const char *bar = strstr(q, " |");
			if (!bar || bar > eol)
				break;
			snprintf(cellv, sizeof cellv, "%.*s", (int)(bar - q), q);
			snprintf(want + strlen(want), sizeof want - strlen(want), "<td%s>%s</td>",
				 col >= 7 ? " class=\"l\"" : "", cellv);
			col++;
			q = bar + 3;
		}
		assert_int_equal(col, 9);
		if (!strstr(h.data, want))
			fail_msg("the diff page has no row %s", want);
		rows++;
	}
	assert_int_equal(rows, 2); /* 30/s and 120/s */
	assert_non_null(strstr(h.data, "Rate not sustained"));
	assert_non_null(strstr(h.data, "Capacity (requests/s ended, highest): base 80.0, "
					"candidate 80.0. SLO limit: base [30, 120)/s, candidate "
					"[30, 120)/s."));
	assert_non_null(strstr(md.data, "SLO limit: [30, 120)/s / [30, 120)/s"));

	assert_int_equal(tt_diff_render_pdf(d, NULL, NULL, &pdf, &err), TT_OK);
	dir = cf_tmpdir("rate-diff");
	assert_non_null(dir);
	snprintf(path, sizeof path, "%s/diff.pdf", dir);
	assert_int_equal(cf_write(path, pdf.data, pdf.len), 0);
	snprintf(cmd, sizeof cmd, "pdftotext '%s' -", path);
	text = cf_run_cmd(cmd); /* needs poppler-utils */
	assert_non_null(text);
	assert_non_null(strstr(text, "Open-loop curves (base / candidate)"));
	assert_non_null(strstr(text, "Rate not sustained"));
	assert_non_null(strstr(text, "SLO limit: [30, 120)/s / [30, 120)/s."));
	free(text);
	cf_rmrf(dir);
	free(dir);
	tt_buf_release(&md);
	tt_buf_release(&h);
	tt_buf_release(&pdf);
	tt_diff_free(d);
	tt_diff_side_free(sb);
	tt_diff_side_free(sc);
}

/* A diff of closed-loop runs has no open-loop section. */
static void test_diff_page_closed_loop(void **state)
{
	char *dir = NULL, path[4200];
	struct tt_run *run = cf_small_run("closed", &dir);
	struct tt_diff_side *sb = NULL, *sc = NULL;
	struct tt_diff *d;
	struct tt_buf h;
	struct tt_error err;

	(void)state;
	assert_non_null(run);
	tt_run_free(run);
	snprintf(path, sizeof path, "%s/run", dir); /* where cf_small_run writes it */
	d = diff_of(path, NULL, &sb, &sc);
	tt_buf_init(&h, 0);
	if (tt_diff_render_html(d, NULL, NULL, &h, &err) != TT_OK)
		fail_msg("diff page: %s", err.msg);
	assert_non_null(strstr(h.data, "<h2>Every figure</h2>"));
	assert_null(strstr(h.data, "Open-loop"));
	tt_buf_release(&h);
	tt_diff_free(d);
	tt_diff_side_free(sb);
	tt_diff_side_free(sc);
	cf_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_axes_and_limit),
		cmocka_unit_test(test_goodput_needs_slo),
		cmocka_unit_test(test_html_report_open_loop),
		cmocka_unit_test(test_pdf_report_open_loop),
		cmocka_unit_test(test_render_all_open_loop),
		cmocka_unit_test(test_slots_and_closed_loop_list),
		cmocka_unit_test(test_diff_page_open_loop),
		cmocka_unit_test(test_diff_page_closed_loop),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
