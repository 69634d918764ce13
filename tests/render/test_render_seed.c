/* The seed report, end to end: its figures (seed-matrix.csv) made into a
 * report must render as the seed shows them.  The markdown's all-
 * measurements rows equal the seed's line for line, its decode matrix rows
 * equal the seed's once the " · " separators (lost when the seed was copied
 * from a web page) are taken out, and the CSV's first twelve columns equal
 * seed-matrix.csv. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_cmocka.h"

#include "render_fixture.h"
#include "tokentrace/profile.h"

#define SEED_CSV TT_RENDER_SEED_DIR "/seed-matrix.csv"
#define SEED_TXT TT_RENDER_SEED_DIR "/speed-test-matrix-lfm2.5-350m-h200.txt"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long n;

	if (!f) {
		fprintf(stderr, "cannot open '%s'\n", path);
		fail();
	}
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void one(struct tt_dist *d, double v)
{
	size_t i;

	d->n = isnan(v) ? 0 : 1;
	d->p50 = d->min = d->max = d->mean = v;
	for (i = 0; i < TT_MAX_QUANTILES; i++)
		d->q[i] = v;
}

static enum tt_status status_named(const char *name)
{
	int s;

	for (s = 0; s < TT_STATUS_COUNT_; s++)
		if (strcmp(tt_status_name((enum tt_status)s), name) == 0)
			return (enum tt_status)s;
	fprintf(stderr, "unknown status '%s'\n", name);
	fail();
	return TT_STATUS_VALID;
}

static struct tt_note seed_notes[] = {
	{"hardware_type", "Discrete GPU"}, {"gpu", "H200 NVL"}, {"vram", "141 GB"},
	{"os", "linux"},                   {"quantization", "BF16"},
};

/* A report holding the seed's figures; cells must be freed by the caller. */
static void seed_report(struct tt_report *r)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	char *text = slurp(SEED_CSV);
	size_t i;

	memset(r, 0, sizeof *r);
	if (tt_profile_parse(text, SEED_CSV, &p, &err) != TT_OK) {
		fprintf(stderr, "%s\n", err.msg);
		fail();
	}
	free(text);
	r->manifest.engine = "vllm";
	r->manifest.engine_version = "0.26.1rc1.dev638+g52be12cfa";
	r->manifest.model = "LiquidAI/LFM2.5-350M";
	r->manifest.served_model = "lfm";
	r->manifest.notes = seed_notes;
	r->manifest.n_notes = sizeof seed_notes / sizeof seed_notes[0];
	r->manifest.kv_capacity_tokens = -1;
	r->manifest.max_model_len = -1;
	tt_analysis_opts_init(&r->opts);
	r->n_cells = tt_profile_count(p);
	r->cells = calloc(r->n_cells, sizeof *r->cells);
	assert_non_null(r->cells);
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_profile_point *pt = tt_profile_at(p, i);
		struct tt_cell_figures *c = &r->cells[i];

		c->cell = i;
		c->phase = pt->phase;
		c->context = pt->context;
		c->concurrency = pt->concurrency;
		c->status = status_named(pt->status);
		c->total_tok_s = pt->total_tok_s;
		one(&c->per_request_tok_s, pt->per_request_tok_s);
		one(&c->ttft_ms, pt->ttft_ms);
		one(&c->tbt_ms, pt->tbt_ms);
		c->avg_active = pt->avg_active;
		c->avg_active_source = "server";
		c->avg_in_flight = NAN;
		c->completed = pt->completed;
		c->output_tokens = pt->output_tokens;
		c->measured_s = pt->measured_s;
		c->prompt_tokens = -1;
		c->requests = pt->completed > 0 ? pt->completed : 0;
		c->kv_usage_max = NAN;
		c->preemptions = NAN;
	}
	tt_profile_free(p);
}

/* Lines of text starting with prefix, joined with '\n'. */
static char *lines_starting(const char *text, const char *prefix)
{
	size_t cap = strlen(text) + 1, o = 0, plen = strlen(prefix);
	char *out = malloc(cap);
	const char *p = text;

	assert_non_null(out);
	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len >= plen && memcmp(p, prefix, plen) == 0) {
			memcpy(out + o, p, len);
			o += len;
			out[o++] = '\n';
		}
		p += len + (end ? 1 : 0);
	}
	out[o] = '\0';
	return out;
}

static void drop_all(char *s, const char *what)
{
	size_t n = strlen(what);
	char *p;

	while ((p = strstr(s, what)))
		memmove(p, p + n, strlen(p + n) + 1);
}

static void assert_same(const char *got, const char *want)
{
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
		fail();
	}
}

static void test_md_rows_match_seed(void **state)
{
	struct tt_report r;
	char *seed = slurp(SEED_TXT), *md, *got, *want;

	(void)state;
	seed_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);

	got = lines_starting(md, "| Prefill |");
	want = lines_starting(seed, "| Prefill |");
	assert_int_equal(strlen(want) > 0, 1);
	assert_same(got, want);
	free(got);
	free(want);

	got = lines_starting(md, "| Sustained decode |");
	want = lines_starting(seed, "| Sustained decode |");
	assert_same(got, want);
	free(got);
	free(want);

	/* decode matrix: header and rows */
	fx_contains(md, "| Context | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 |\n");
	drop_all(md, " \xc2\xb7 ");
	{
		static const char *const rows[] = {"| 8K |", "| 16K |", "| 32K |", "| 64K |",
						   "| 120K |"};
		size_t i;

		for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
			/* our prefill table rows start alike; the seed shows prefill
			 * as cards, so its lines are the matrix row alone */
			got = lines_starting(md, rows[i]);
			want = lines_starting(seed, rows[i]);
			assert_int_equal(strlen(want) > 0, 1);
			fx_contains(got, want);
			free(got);
			free(want);
		}
	}
	free(md);
	free(seed);
	free(r.cells);
}

static void test_md_header_and_legend_match_seed(void **state)
{
	struct tt_report r;
	char *md;

	(void)state;
	seed_report(&r);
	md = fx_render(&r, TT_FORMAT_MD, 0, 0);
	fx_contains(md, "**LFM2.5-350M** on H200 NVL 141GB\n");
	fx_contains(md, "vllm \xc2\xb7 0.26.1rc1.dev638+g52be12cfa \xc2\xb7 BF16\n");
	fx_contains(md, "5 contexts (8K\xe2\x80\x93" "120K) \xc3\x97 8 concurrency levels "
			"(1\xe2\x80\x93" "128) \xc2\xb7 prefill at 8K, 16K, 32K, 64K, 120K, 125K\n");
	fx_contains(md, "\nRequests queued: the server could not run all requests at once, so "
			"some waited in a queue. Over capacity: not run because this many "
			"requests at this context would exceed the server's KV cache.\n");
	fx_contains(md, "| 125K | 130.8K | 962 ms |\n");
	free(md);
	free(r.cells);
}

static void test_csv_matches_seed_matrix(void **state)
{
	struct tt_report r;
	char *seed = slurp(SEED_CSV), *csv, *p, *q;

	(void)state;
	seed_report(&r);
	csv = fx_render(&r, TT_FORMAT_CSV, 0, 0);
	/* cut every line after its 12th field (no field of the first 12 is quoted) */
	for (p = csv, q = csv; *p;) {
		int commas = 0;

		while (*p && *p != '\n') {
			if (*p == ',' && ++commas == 12) {
				while (*p && *p != '\n')
					p++;
				break;
			}
			*q++ = *p++;
		}
		if (*p == '\n')
			*q++ = *p++;
	}
	*q = '\0';
	assert_same(csv, seed);
	free(csv);
	free(seed);
	free(r.cells);
}

static void test_json_of_seed_parses(void **state)
{
	struct tt_report r;
	char *json;

	(void)state;
	seed_report(&r);
	json = fx_render(&r, TT_FORMAT_JSON, 0, 0);
	fx_contains(json, "\"id\":\t\"decode-122880x2\"");
	fx_contains(json, "\"status_key\":\t\"requests_queued\"");
	free(json);
	free(r.cells);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md_rows_match_seed),
		cmocka_unit_test(test_md_header_and_legend_match_seed),
		cmocka_unit_test(test_csv_matches_seed_matrix),
		cmocka_unit_test(test_json_of_seed_parses),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
