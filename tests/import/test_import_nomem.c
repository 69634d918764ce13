/* An import that runs out of memory says so: refusing every allocation of
 * an import in turn (through wrappers of the C library's allocator, as
 * tests/unit/test_errors.c does), each import either succeeds or fails as
 * TT_ENOMEM, never as a malformed file, and leaves no run behind.  (Under
 * the sanitizers, also no leak on any of those paths.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tokentrace/import.h"

#include "testutil.h"

#include "alloc_fail.h"

/* Import the corpus file at every allocation k; returns how many k failed. */
static long sweep(const char *file, enum tt_import_format f)
{
	char path[512], *dir = tu_tmpdir("import-nomem"), run[4096];
	size_t len;
	char *data;
	struct tt_import_opts o = {.from = f};
	long k, failed = 0;

	snprintf(path, sizeof path, TT_CORPUS "/%s", file);
	data = tu_read(path, &len);
	assert_non_null(data);
	snprintf(run, sizeof run, "%s/run", dir);
	for (k = 0;; k++) {
		struct tt_error err;
		struct stat st;
		enum tt_code rc;

		tt_error_clear(&err);
		tt_alloc_failed = 0;
		tt_alloc_allow = k;
		rc = tt_import_memory(data, len, file, &o, run, &err);
		tt_alloc_allow = -1;
		if (tt_alloc_failed == 0) { /* every allocation was allowed: done */
			assert_true(rc <= TT_WARN);
			tu_rmrf(run);
			break;
		}
		failed++;
		if (rc <= TT_WARN) {
			tu_rmrf(run); /* the refused allocation was not needed */
			continue;
		}
		if (rc != TT_FAILED || err.kind != TT_ENOMEM)
			fail_msg("%s: allocation %ld refused: %s (kind %s): '%s'", file, k,
				 tt_strerror(rc), tt_kind_str(err.kind), err.msg);
		assert_int_not_equal(stat(run, &st), 0); /* nothing half-written */
		assert_true(k < 1000000);
	}
	free(data);
	tu_rmrf(dir);
	free(dir);
	return failed;
}

static void test_every_importer_reports_oom(void **state)
{
	static const struct {
		const char *file;
		enum tt_import_format f;
	} cases[] = {
		{"import-lib_json/valid.json", TT_IMPORT_LIB_JSON},
		{"import-lib_report/seed.txt", TT_IMPORT_LIB_REPORT},
		{"import-vllm/valid.json", TT_IMPORT_VLLM},
		{"import-vllm/aggregate.json", TT_IMPORT_VLLM},
		{"import-genai_perf/valid.json", TT_IMPORT_GENAI_PERF},
		{"import-aiperf/valid.jsonl", TT_IMPORT_AIPERF},
		{"import-aiperf/raw-valid.jsonl", TT_IMPORT_AIPERF},
		{"import-guidellm/valid.json", TT_IMPORT_GUIDELLM},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		assert_true(sweep(cases[i].file, cases[i].f) > 3);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_importer_reports_oom),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
