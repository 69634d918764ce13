/* The HTML report in a real browser: headless Chromium renders it with no
 * console errors (a CSP violation, a failed fetch or a script error would
 * show there), and the screenshot shows the tables and the charts.
 * Without chromium the test is skipped (exit 77), loudly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_fixture.h"
#include "chart/chart_impl.h"

#define SKIP_CODE 77

static const char *find_chromium(void)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome",
					    NULL};
	const char *env = getenv("TT_CHROMIUM");
	if (env && *env)
		return env;
	for (size_t i = 0; names[i]; i++)
		if (cf_have_program(names[i]))
			return names[i];
	return NULL;
}

static const char *chromium;
static char *dir;

/* Run chromium on file with extra flags; stderr goes to err_path. */
static char *browse(const char *file, const char *flags, const char *err_path, int profile)
{
	char cmd[20000];
	snprintf(cmd, sizeof cmd,
		 "timeout 120 %s --headless --no-sandbox --disable-gpu --disable-quic "
		 "--no-first-run --disable-background-networking --disable-component-update "
		 "--disable-sync --user-data-dir='%s/profile%d' --enable-logging=stderr --v=0 "
		 "%s 'file://%s' 2>'%s'",
		 chromium, dir, profile, flags, file, err_path);
	return cf_run_cmd(cmd);
}

static long count(const char *hay, const char *needle)
{
	long n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void test_control_page_shows_console_errors(void **state)
{
	/* The console check below means something only if a console message
	 * of a page does reach us. */
	char page[4200], err_path[4200], *out, *err;
	(void)state;
	snprintf(page, sizeof page, "%s/control.html", dir);
	snprintf(err_path, sizeof err_path, "%s/control.err", dir);
	{
		static const char html[] = "<!DOCTYPE html><html><body><p>control</p><script>"
					   "console.error('tt-control-message')</script></body></html>";
		assert_int_equal(cf_write(page, html, sizeof html - 1), 0);
	}
	out = browse(page, "--dump-dom", err_path, 1);
	assert_non_null(out);
	err = cf_read(err_path, NULL);
	assert_non_null(err);
	assert_non_null(strstr(err, "CONSOLE"));
	assert_non_null(strstr(err, "tt-control-message"));
	free(out);
	free(err);
}

static void test_report_renders_without_console_errors(void **state)
{
	struct tt_run *run;
	struct tt_report *rep;
	struct tt_buf h;
	struct tt_error e;
	char *rundir = NULL, page[4200], shot[4200], err_path[4200], flags[4400], *out, *err;
	struct cf_image img;
	long blue, yellow, head_bg;
	(void)state;

	run = cf_small_run("<script>alert(1)</script> \"model\"", &rundir);
	assert_non_null(run);
	rep = cf_analyze(run);
	assert_non_null(rep);
	tt_buf_init(&h, 0);
	assert_int_equal(tt_render_html(rep, run, &h, &e), TT_OK);
	snprintf(page, sizeof page, "%s/report.html", dir);
	assert_int_equal(cf_write(page, h.data, h.len), 0);

	/* the DOM: tables and the chart images, no script element */
	snprintf(err_path, sizeof err_path, "%s/dom.err", dir);
	out = browse(page, "--dump-dom", err_path, 2);
	assert_non_null(out);
	assert_true(count(out, "<table") >= 4);
	assert_int_equal(count(out, "<img"), TT_CHART_KIND_COUNT_);
	assert_null(strstr(out, "<script"));
	assert_non_null(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	err = cf_read(err_path, NULL);
	assert_non_null(err);
	if (strstr(err, "CONSOLE") || strstr(err, "Refused to") || strstr(err, "Uncaught"))
		fail_msg("console output from the report:\n%s", err);
	free(out);
	free(err);

	/* the picture: the page is long; a tall window shows all of it */
	snprintf(shot, sizeof shot, "%s/shot.png", dir);
	snprintf(err_path, sizeof err_path, "%s/shot.err", dir);
	snprintf(flags, sizeof flags, "--hide-scrollbars --window-size=1280,9000 --screenshot='%s'",
		 shot);
	out = browse(page, flags, err_path, 3);
	assert_non_null(out);
	free(out);
	err = cf_read(err_path, NULL);
	assert_non_null(err);
	if (strstr(err, "CONSOLE") || strstr(err, "Refused to") || strstr(err, "Uncaught"))
		fail_msg("console output from the report:\n%s", err);
	free(err);
	assert_int_equal(cf_png_load(shot, &img), 0);
	assert_int_equal(img.w, 1280);
	assert_int_equal(img.h, 9000);
	/* tables: their header rows' grey */
	head_bg = cf_count_colour(&img, 0xF0, 0xF2, 0xF5, 1);
	/* charts: the first palette colour (lines, markers, bars) and the
	 * heatmap's brightest viridis */
	blue = cf_count_colour(&img, 0x00, 0x72, 0xB2, 24);
	yellow = cf_count_colour(&img, 0xFD, 0xE7, 0x25, 40);
	if (head_bg < 5000 || blue < 2000 || yellow < 500)
		fail_msg("screenshot lacks tables or charts: header grey %ld, blue %ld, yellow %ld",
			 head_bg, blue, yellow);
	cf_image_free(&img);
	tt_buf_release(&h);
	tt_report_free(rep);
	tt_run_free(run);
	cf_rmrf(rundir);
	free(rundir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_page_shows_console_errors),
		cmocka_unit_test(test_report_renders_without_console_errors),
	};
	int rc;
	chromium = find_chromium();
	if (!chromium) {
		fprintf(stderr, "SKIP: chromium not found (install the 'chromium' package, or set "
				"TT_CHROMIUM): the HTML report was not checked in a browser\n");
		return SKIP_CODE;
	}
	dir = cf_tmpdir("browser");
	if (!dir)
		return 1;
	rc = tt_cmocka_main(argc, argv, tests, NULL, NULL);
	cf_rmrf(dir);
	free(dir);
	return rc;
}
