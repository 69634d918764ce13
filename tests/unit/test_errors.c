/* Results that cannot mask a failure: severities are ordered apart from
 * kinds, combining keeps the worst and names every part, and a run read
 * where one cell runs out of memory and a later one is malformed reports a
 * failure (not "partly damaged") naming both.
 *
 * Allocation failures are injected for real: this program is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation the
 * library makes goes through the wrappers below, which fail while armed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static int fail_allocs;    /* armed: every allocation fails */
static unsigned n_failed;  /* allocations refused */
static int gate_ok(void);

void *__wrap_malloc(size_t n)
{
	if (fail_allocs || !gate_ok()) {
		if (fail_allocs)
			n_failed++;
		return NULL;
	}
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_allocs || !gate_ok()) {
		if (fail_allocs)
			n_failed++;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	if (fail_allocs || !gate_ok()) {
		if (fail_allocs)
			n_failed++;
		return NULL;
	}
	return __real_realloc(p, n);
}

static void test_severities_are_ordered_apart_from_kinds(void **state)
{
	struct tt_error e;
	(void)state;

	assert_true(TT_OK < TT_EOF && TT_EOF < TT_WARN && TT_WARN < TT_FAILED &&
		    TT_FAILED < TT_FATAL);
	/* the idiom returns the severity and keeps the kind on the object */
	assert_int_equal(tt_error_set(&e, TT_ENOMEM, "x"), TT_FAILED);
	assert_int_equal(e.code, TT_FAILED);
	assert_int_equal(e.kind, TT_ENOMEM);
	assert_int_equal(tt_error_setv(&e, TT_WARN, TT_EFORMAT, "y"), TT_WARN);
	assert_int_equal(e.kind, TT_EFORMAT);
	assert_int_equal(tt_error_set(NULL, TT_EIO, "z"), TT_FAILED);
	assert_int_equal(tt_code_worst(TT_WARN, TT_FAILED), TT_FAILED);
	assert_int_equal(tt_code_worst(TT_FATAL, TT_OK), TT_FATAL);
	assert_string_equal(tt_kind_str(TT_ENOMEM), "out of memory");
	assert_string_equal(tt_strerror(TT_WARN), "partial success: damaged data skipped");
	tt_error_clear(&e);
	assert_int_equal(e.code, TT_OK);
	assert_int_equal(e.kind, TT_KIND_NONE);
}

static void test_combine_keeps_the_worst_and_names_all(void **state)
{
	struct tt_error acc, a, b, c;
	(void)state;

	tt_error_clear(&acc);
	tt_error_set(&a, TT_ENOMEM, "cell 'one': out of memory");
	tt_error_setv(&b, TT_WARN, TT_EFORMAT, "cell 'two': malformed");
	tt_error_clear(&c);
	/* the failure first, then a milder warning: the failure stays */
	assert_int_equal(tt_error_combine(&acc, TT_FAILED, &a), TT_FAILED);
	assert_int_equal(tt_error_combine(&acc, TT_WARN, &b), TT_FAILED);
	assert_int_equal(tt_error_combine(&acc, TT_OK, &c), TT_FAILED);
	assert_int_equal(acc.kind, TT_ENOMEM);
	assert_string_equal(acc.msg, "cell 'one': out of memory; cell 'two': malformed");
	/* the other order gives the same severity and kind */
	tt_error_clear(&acc);
	tt_error_combine(&acc, TT_WARN, &b);
	assert_int_equal(tt_error_combine(&acc, TT_FAILED, &a), TT_FAILED);
	assert_int_equal(acc.kind, TT_ENOMEM);
}

/* A run of three traced cells: prefill-8K, decode 8Kx1, decode 8Kx4. */
static const char profile[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n"
	"decode,8K,4,Valid,3419.6,866.9,54,1.2,4,,,4\n";

struct read_ctx {
	size_t fail_cell;  /* allocations fail while this cell is read */
	unsigned cells_ended;
	enum tt_code codes[8];
};

static int on_request(void *ctx, const struct tt_request *r)
{
	(void)ctx;
	(void)r;
	return 0;
}

static void begin_cell(void *ctx, size_t cell)
{
	struct read_ctx *c = ctx;
	fail_allocs = cell == c->fail_cell;
}

static void end_cell(void *ctx, size_t cell, enum tt_code code, const struct tt_error *err)
{
	struct read_ctx *c = ctx;
	(void)err;
	fail_allocs = 0;
	if (cell < 8)
		c->codes[cell] = code;
	c->cells_ended++;
}

static void test_oom_then_malformed_is_a_failure_naming_both(void **state)
{
	char *dir = tu_tmpdir("errors"), run[4096], bad[4200];
	struct tt_profile *p;
	struct tt_synth_opts o;
	struct tt_error err;
	struct tt_run *r;
	const struct tt_manifest *m;
	struct tt_run_visitor v;
	struct read_ctx ctx;
	size_t first = (size_t)-1, last = 0;
	enum tt_code rc;
	(void)state;

	tt_synth_opts_init(&o);
	o.max_tokens = 256;
	snprintf(run, sizeof run, "%s/run", dir);
	assert_int_equal(tt_profile_parse(profile, "p.csv", &p, &err), TT_OK);
	assert_int_equal(tt_synth_run(p, run, &o, NULL, &err), TT_OK);
	tt_profile_free(p);
	assert_int_equal(tt_run_open(run, &r, &err), TT_OK);
	m = tt_run_manifest(r);
	for (size_t i = 0; i < m->n_cells; i++) {
		if (!m->cells[i].trace)
			continue;
		if (first == (size_t)-1)
			first = i;
		last = i;
	}
	assert_true(first != (size_t)-1 && last > first);
	/* the later cell: not a trace at all */
	snprintf(bad, sizeof bad, "%s/%s", run, m->cells[last].trace);
	assert_int_equal(tu_write(bad, "this is not a zstd frame, nor any trace at all", 46), 0);

	memset(&ctx, 0, sizeof ctx);
	ctx.fail_cell = first;
	memset(&v, 0, sizeof v);
	v.ctx = &ctx;
	v.trace.on_request = on_request;
	v.begin_cell = begin_cell;
	v.end_cell = end_cell;
	tt_error_clear(&err);
	n_failed = 0;
	rc = tt_run_read_all(r, &v, &err);
	fail_allocs = 0;

	assert_true(n_failed > 0); /* the injection really happened */
	assert_int_equal(ctx.codes[first], TT_FAILED);
	assert_int_equal(ctx.codes[last], TT_FAILED);
	/* an allocation failure is a failure, not "partly damaged" */
	assert_int_equal(rc, TT_FAILED);
	assert_int_equal(err.code, TT_FAILED);
	assert_int_equal(err.kind, TT_ENOMEM);
	if (!strstr(err.msg, "out of memory") || !strstr(err.msg, m->cells[first].id) ||
	    !strstr(err.msg, "unreadable") || !strstr(err.msg, m->cells[last].id))
		fail_msg("the error does not name both cells: '%s'", err.msg);

	/* without the injection the same run is only partly damaged */
	memset(&ctx, 0, sizeof ctx);
	ctx.fail_cell = (size_t)-1;
	tt_error_clear(&err);
	rc = tt_run_read_all(r, &v, &err);
	assert_int_equal(rc, TT_WARN);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, m->cells[last].id));
	assert_null(strstr(err.msg, m->cells[first].id));

	tt_run_free(r);
	tu_rmrf(dir);
	free(dir);
}

/* The same through tt_analyze, at every allocation: let the first k
 * allocations succeed and fail all after; for every k the analysis either
 * succeeds untouched or fails with TT_ENOMEM, never a report of cells
 * "damaged" by a lack of memory.  (Under the sanitizers, also no leak on
 * any of those paths.) */
static long allow_allocs = -1; /* >= 0: that many more succeed, then all fail */

static int gate_ok(void)
{
	if (allow_allocs < 0)
		return 1;
	if (allow_allocs == 0) {
		n_failed++;
		return 0;
	}
	allow_allocs--;
	return 1;
}

/* Open and analyse path at every allocation k; returns how many k failed. */
static long sweep(const char *path)
{
	long k, failed_runs = 0;

	for (k = 0;; k++) {
		struct tt_report *rep = NULL;
		struct tt_run *r = NULL;
		struct tt_error err;
		enum tt_code rc;
		n_failed = 0;
		allow_allocs = k;
		tt_error_clear(&err);
		rc = tt_run_open(path, &r, &err);
		if (rc == TT_OK)
			rc = tt_analyze(r, NULL, &rep, &err);
		allow_allocs = -1;
		if (n_failed == 0) { /* every allocation was allowed: done */
			assert_int_equal(rc, TT_OK);
			tt_report_free(rep);
			tt_run_free(r);
			break;
		}
		failed_runs++;
		if (rc != TT_FAILED || err.kind != TT_ENOMEM)
			fail_msg("%s: allocation %ld refused: %s (kind %s): '%s'", path, k,
				 tt_strerror(rc), tt_kind_str(err.kind), err.msg);
		assert_null(rep);
		tt_run_free(r);
		assert_true(k < 1000000);
	}
	return failed_runs;
}

static void test_analyze_never_masks_oom(void **state)
{
	char *dir = tu_tmpdir("errors"), run[4096];
	struct tt_profile *p;
	struct tt_synth_opts o;
	struct tt_error err;
	(void)state;

	tt_synth_opts_init(&o);
	o.max_tokens = 64;
	snprintf(run, sizeof run, "%s/run", dir);
	assert_int_equal(tt_profile_parse(profile, "p.csv", &p, &err), TT_OK);
	assert_int_equal(tt_synth_run(p, run, &o, NULL, &err), TT_OK);
	tt_profile_free(p);
	assert_true(sweep(run) > 3);
	/* a real capture, read from its archive */
	assert_true(sweep(TT_FIXTURES "/runs/sample.tar.zst") > 3);
	tu_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_severities_are_ordered_apart_from_kinds),
		cmocka_unit_test(test_combine_keeps_the_worst_and_names_all),
		cmocka_unit_test(test_oom_then_malformed_is_a_failure_naming_both),
		cmocka_unit_test(test_analyze_never_masks_oom),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
