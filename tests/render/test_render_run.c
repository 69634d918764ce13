/* End to end: a synthetic run of the seed profile, analysed by the library,
 * rendered in every text format.  The figures are the analysis's, so this
 * checks the renderers against real reports: every cell present in the
 * seed's order with the seed's status, totals close to the seed's, JSON
 * numbers equal to the report's bit for bit. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include "render_fixture.h"
#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

#define SEED_CSV TT_RENDER_SEED_DIR "/seed-matrix.csv"

struct world {
	char dir[256];
	struct tt_profile *profile;
	struct tt_run *run;
	struct tt_report *report;
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof *w);
	struct tt_synth_opts so;
	struct tt_analysis_opts ao;
	struct tt_error err;
	enum tt_code rc;
	char base[200];

	if (!w)
		return -1;
	*state = w;
	snprintf(base, sizeof base, "%s/tt-render-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(base))
		return -1;
	snprintf(w->dir, sizeof w->dir, "%s/run", base);
	if (tt_profile_load(SEED_CSV, &w->profile, &err) != TT_OK) {
		fprintf(stderr, "profile: %s\n", err.msg);
		return -1;
	}
	tt_synth_opts_init(&so);
	so.scale = 0.2; /* shorter windows: the test stays fast under sanitizers */
	so.model = "LiquidAI/LFM2.5-350M";
	rc = tt_synth_run(w->profile, w->dir, &so, NULL, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "synth: %s\n", err.msg);
		return -1;
	}
	if (tt_run_open(w->dir, &w->run, &err) != TT_OK) {
		fprintf(stderr, "open: %s\n", err.msg);
		return -1;
	}
	tt_analysis_opts_init(&ao);
	rc = tt_analyze(w->run, &ao, &w->report, &err);
	if (rc != TT_OK && rc != TT_WARN) {
		fprintf(stderr, "analyze: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	char *slash;

	if (!w)
		return 0;
	tt_report_free(w->report);
	tt_run_free(w->run);
	tt_profile_free(w->profile);
	slash = strrchr(w->dir, '/');
	if (slash) {
		*slash = '\0';
		nftw(w->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	free(w);
	return 0;
}

/* Split one CSV line (no quoted fields in the first n) into n fields. */
static void fields(const char *line, char f[][64], size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; *line && *line != ',' && *line != '\n' && k < 63; k++)
			f[i][k] = *line++;
		f[i][k] = '\0';
		if (*line == ',')
			line++;
	}
}

static void test_csv_follows_the_seed(void **state)
{
	struct world *w = *state;
	char *csv = fx_render(w->report, TT_FORMAT_CSV, 0, 0), *line;
	size_t row = 0;

	line = strchr(csv, '\n') + 1;
	while (*line) {
		const struct tt_profile_point *pt = tt_profile_at(w->profile, row);
		char f[12][64], ctx[32];
		double total;

		assert_non_null(pt);
		fields(line, f, 12);
		tt_format_tokens(pt->context, ctx, sizeof ctx);
		assert_string_equal(f[0], pt->phase == TT_PHASE_PREFILL ? "prefill" : "decode");
		assert_string_equal(f[1], ctx);
		assert_int_equal(atoi(f[2]), pt->concurrency);
		assert_string_equal(f[3], pt->status);
		if (isnan(pt->total_tok_s)) {
			assert_string_equal(f[4], "");
		} else {
			total = atof(f[4]);
			if (fabs(total - pt->total_tok_s) > 0.02 * pt->total_tok_s) {
				fprintf(stderr, "row %zu: total %s, seed %g\n", row, f[4],
					pt->total_tok_s);
				fail();
			}
		}
		row++;
		line = strchr(line, '\n') + 1;
	}
	assert_int_equal(row, tt_profile_count(w->profile));
	free(csv);
}

static void test_md_has_every_cell(void **state)
{
	struct world *w = *state;
	char *md = fx_render(w->report, TT_FORMAT_MD, 0, 0);
	const char *p;
	size_t rows = 0;

	for (p = md; (p = strstr(p, "\n| ")); p++)
		if (!strncmp(p, "\n| Prefill |", 12) || !strncmp(p, "\n| Sustained decode |", 21))
			rows++;
	assert_int_equal(rows, tt_profile_count(w->profile));
	fx_contains(md, "\n**LFM2.5-350M**");
	fx_contains(md, "| 120K | ");
	fx_contains(md, "| Sustained decode | 120K | 128 | Over capacity | \xe2\x80\x94 |");
	fx_contains(md, "Requests queued: the server could not run all requests at once");
	free(md);
}

static void test_json_numbers_are_the_reports(void **state)
{
	struct world *w = *state;
	char *text = fx_render(w->report, TT_FORMAT_JSON, 0, 0);
	cJSON *root = cJSON_Parse(text), *c;
	size_t i, n = 0;

	assert_non_null(root);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cells")) {
		const struct tt_cell_figures *f = NULL;
		const cJSON *v, *t;
		long id_ctx = (long)cJSON_GetObjectItem(c, "context")->valuedouble;
		int conc = (int)cJSON_GetObjectItem(c, "concurrency")->valuedouble;
		int pre = !strcmp(cJSON_GetObjectItem(c, "phase")->valuestring, "prefill");

		for (i = 0; i < w->report->n_cells; i++) {
			const struct tt_cell_figures *x = &w->report->cells[i];

			if (x->context == id_ctx && x->concurrency == conc &&
			    (x->phase == TT_PHASE_PREFILL) == pre)
				f = x;
		}
		assert_non_null(f);
		v = cJSON_GetObjectItem(c, "total_tok_s");
		if (isfinite(f->total_tok_s))
			assert_true(v->valuedouble == f->total_tok_s);
		else
			assert_true(cJSON_IsNull(v));
		t = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "tbt_ms"), "p99");
		if (f->tbt_ms.n && isfinite(f->tbt_ms.q[1]))
			assert_true(t->valuedouble == f->tbt_ms.q[1]);
		else
			assert_true(cJSON_IsNull(t));
		assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring,
				    tt_status_name(f->status));
		n++;
	}
	assert_int_equal(n, w->report->n_cells);
	cJSON_Delete(root);
	free(text);
}

static void test_term_renders(void **state)
{
	struct world *w = *state;
	char *t = fx_render(w->report, TT_FORMAT_TERM, 1, 100);

	fx_contains(t, "Sustained decode");
	fx_contains(t, "over cap");
	free(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_follows_the_seed),
		cmocka_unit_test(test_md_has_every_cell),
		cmocka_unit_test(test_json_numbers_are_the_reports),
		cmocka_unit_test(test_term_renders),
	};
	return tt_cmocka_main(argc, argv, tests, setup, teardown);
}
