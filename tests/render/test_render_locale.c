/* Reports and our own files under a comma-decimal locale.
 *
 * A program that embeds the library may call setlocale(LC_ALL, ""); in
 * Germany printf then writes "1,5" and strtod stops at "1.5"'s dot.  Our
 * formats (formats/) have '.' whatever the locale, so: the seed report
 * rendered as CSV, JSON and markdown is the same bytes in the "C" locale and
 * under LC_NUMERIC=de_DE.UTF-8, and a run (profile CSV, manifest JSON,
 * traces) read under de_DE gives the same numbers as in "C".
 *
 * Needs the de_DE.UTF-8 locale (.ci/setup generates it); exits 77 (ctest:
 * skipped) when it is not installed. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_cmocka.h"

#include "render_fixture.h"
#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"
#include "tokentrace/units.h"

#define SEED_CSV TT_RENDER_SEED_DIR "/seed-matrix.csv"
#define COMMA_LOCALE "de_DE.UTF-8"
#define SKIP_CODE 77

struct world {
	char base[256], dir[300];
	struct tt_report *report; /* the seed run, read in the "C" locale */
};

/* Switch LC_NUMERIC; under de_DE also prove the switch took effect, so the
 * comparisons below cannot pass because nothing changed. */
static void numeric_locale(const char *name)
{
	char num[16];

	if (!setlocale(LC_NUMERIC, name))
		fail_msg("cannot set LC_NUMERIC to '%s'", name);
	snprintf(num, sizeof num, "%.1f", 1.5);
	if (strcmp(name, "C") == 0)
		assert_string_equal(num, "1.5");
	else
		assert_string_equal(num, "1,5");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static struct tt_report *analyze(const char *dir)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts ao;
	struct tt_error err;
	enum tt_code rc;

	if (tt_run_open(dir, &run, &err) != TT_OK)
		fail_msg("open: %s", err.msg);
	tt_analysis_opts_init(&ao);
	rc = tt_analyze(run, &ao, &rep, &err);
	tt_run_free(run);
	if (rc != TT_OK && rc != TT_WARN)
		fail_msg("analyze: %s", err.msg);
	return rep;
}

/* The seed profile made into a run (synth) and analysed, all in "C". */
static int setup(void **state)
{
	struct world *w = calloc(1, sizeof *w);
	struct tt_profile *p = NULL;
	struct tt_synth_opts so;
	struct tt_error err;

	if (!w)
		return -1;
	*state = w;
	setlocale(LC_NUMERIC, "C");
	snprintf(w->base, sizeof w->base, "%s/tt-locale-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(w->base))
		return -1;
	snprintf(w->dir, sizeof w->dir, "%s/run", w->base);
	if (tt_profile_load(SEED_CSV, &p, &err) != TT_OK) {
		fprintf(stderr, "profile: %s\n", err.msg);
		return -1;
	}
	tt_synth_opts_init(&so);
	so.scale = 0.2; /* shorter windows: fast under sanitizers */
	so.model = "LiquidAI/LFM2.5-350M";
	if (tt_synth_run(p, w->dir, &so, NULL, &err) != TT_OK) {
		fprintf(stderr, "synth: %s\n", err.msg);
		tt_profile_free(p);
		return -1;
	}
	tt_profile_free(p);
	w->report = analyze(w->dir);
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	setlocale(LC_NUMERIC, "C");
	if (!w)
		return 0;
	tt_report_free(w->report);
	if (w->base[0])
		nftw(w->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(w);
	return 0;
}

static void same_text(const char *what, const char *c_text, const char *de_text)
{
	if (strcmp(c_text, de_text) != 0) {
		size_t i = 0;
		while (c_text[i] && c_text[i] == de_text[i])
			i++;
		fail_msg("%s differs under " COMMA_LOCALE " at byte %zu:\n  C:     %.60s\n  de_DE: %.60s",
			 what, i, c_text + i, de_text + i);
	}
}

static void test_report_bytes_same_under_comma_locale(void **state)
{
	struct world *w = *state;
	const enum tt_format formats[] = {TT_FORMAT_CSV, TT_FORMAT_JSON, TT_FORMAT_MD};
	const char *names[] = {"CSV", "JSON", "markdown"};

	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		char *c_text, *de_text;

		numeric_locale("C");
		c_text = fx_render(w->report, formats[i], 0, 0);
		numeric_locale(COMMA_LOCALE);
		de_text = fx_render(w->report, formats[i], 0, 0);
		numeric_locale("C");
		/* the seed has fractional figures: a comma would show */
		assert_non_null(strchr(c_text, '.'));
		same_text(names[i], c_text, de_text);
		free(c_text);
		free(de_text);
	}
}

/* A run read and analysed under de_DE: the same figures, bit for bit (the
 * JSON report prints every double exactly), and the same CSV. */
static void test_run_read_same_under_comma_locale(void **state)
{
	struct world *w = *state;
	struct tt_report *de_rep;
	char *c_csv, *c_json, *de_csv, *de_json;

	numeric_locale(COMMA_LOCALE);
	de_rep = analyze(w->dir);
	assert_int_equal(de_rep->n_cells, w->report->n_cells);
	assert_true(de_rep->manifest.duration_s == w->report->manifest.duration_s);
	assert_true(de_rep->manifest.readiness_s == w->report->manifest.readiness_s);
	numeric_locale("C");
	c_csv = fx_render(w->report, TT_FORMAT_CSV, 0, 0);
	c_json = fx_render(w->report, TT_FORMAT_JSON, 0, 0);
	de_csv = fx_render(de_rep, TT_FORMAT_CSV, 0, 0);
	de_json = fx_render(de_rep, TT_FORMAT_JSON, 0, 0);
	same_text("CSV of the run read", c_csv, de_csv);
	same_text("JSON of the run read", c_json, de_json);
	free(c_csv);
	free(c_json);
	free(de_csv);
	free(de_json);
	tt_report_free(de_rep);
}

static int same_double(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* The profile CSV (strtod) gives the same numbers under de_DE. */
static void test_profile_same_under_comma_locale(void **state)
{
	struct tt_profile *c_p = NULL, *de_p = NULL;
	struct tt_error err;
	size_t fractional = 0;
	(void)state;

	numeric_locale("C");
	assert_int_equal(tt_profile_load(SEED_CSV, &c_p, &err), TT_OK);
	numeric_locale(COMMA_LOCALE);
	if (tt_profile_load(SEED_CSV, &de_p, &err) != TT_OK)
		fail_msg("the seed profile does not load under " COMMA_LOCALE ": %s", err.msg);
	numeric_locale("C");
	assert_int_equal(tt_profile_count(de_p), tt_profile_count(c_p));
	for (size_t i = 0; i < tt_profile_count(c_p); i++) {
		const struct tt_profile_point *a = tt_profile_at(c_p, i), *b = tt_profile_at(de_p, i);
		assert_int_equal(a->context, b->context);
		assert_int_equal(a->concurrency, b->concurrency);
		assert_int_equal(a->completed, b->completed);
		assert_int_equal(a->output_tokens, b->output_tokens);
		assert_true(same_double(a->total_tok_s, b->total_tok_s));
		assert_true(same_double(a->per_request_tok_s, b->per_request_tok_s));
		assert_true(same_double(a->ttft_ms, b->ttft_ms));
		assert_true(same_double(a->tbt_ms, b->tbt_ms));
		assert_true(same_double(a->avg_active, b->avg_active));
		assert_true(same_double(a->measured_s, b->measured_s));
		fractional += a->tbt_ms != floor(a->tbt_ms);
	}
	assert_true(fractional > 0); /* the seed has decimals to misread */
	tt_profile_free(c_p);
	tt_profile_free(de_p);
}

/* The manifest (cJSON, which swaps the locale's decimal point itself) and
 * the command-line units: written and read the same under de_DE. */
static void test_manifest_and_units_under_comma_locale(void **state)
{
	struct tt_manifest m, back;
	struct tt_error err;
	char *c_json = NULL, *de_json = NULL;
	(void)state;

	tt_manifest_init(&m);
	assert_int_equal(tt_manifest_set_str(&m.tool_name, "test"), TT_OK);
	m.duration_s = 1.5;
	m.readiness_s = 0.25;
	m.readiness_timeout_s = 12.75;
	m.scrape_interval_s = 0.5;
	numeric_locale("C");
	assert_int_equal(tt_manifest_to_json(&m, &c_json, &err), TT_OK);
	numeric_locale(COMMA_LOCALE);
	assert_int_equal(tt_manifest_to_json(&m, &de_json, &err), TT_OK);
	assert_non_null(strstr(de_json, "1.5"));
	same_text("manifest.json", c_json, de_json);
	tt_manifest_init(&back);
	if (tt_manifest_from_json(de_json, strlen(de_json), "manifest.json", &back, &err) != TT_OK)
		fail_msg("manifest read under " COMMA_LOCALE ": %s", err.msg);
	assert_true(back.duration_s == 1.5);
	assert_true(back.readiness_s == 0.25);
	assert_true(back.readiness_timeout_s == 12.75);
	assert_true(back.scrape_interval_s == 0.5);
	assert_true(tt_parse_duration("1.5s") == 1.5);
	assert_true(tt_parse_duration("250ms") == 0.25);
	numeric_locale("C");
	tt_manifest_release(&back);
	tt_manifest_release(&m);
	free(c_json);
	free(de_json);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_bytes_same_under_comma_locale),
		cmocka_unit_test(test_run_read_same_under_comma_locale),
		cmocka_unit_test(test_profile_same_under_comma_locale),
		cmocka_unit_test(test_manifest_and_units_under_comma_locale),
	};

	if (!setlocale(LC_NUMERIC, COMMA_LOCALE)) {
		fprintf(stderr, "SKIP: the locale " COMMA_LOCALE " is not installed (.ci/setup "
				"generates it: package 'locales', de_DE.UTF-8 in /etc/locale.gen, "
				"locale-gen): reports were not checked under a comma decimal point\n");
		return SKIP_CODE;
	}
	setlocale(LC_NUMERIC, "C");
	return tt_cmocka_main(argc, argv, tests, setup, teardown);
}
