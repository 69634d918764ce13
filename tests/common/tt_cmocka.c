/* See tt_cmocka.h. */
#include "tt_cmocka.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

int tt_cmocka_run(const char *group, const struct CMUnitTest *tests, size_t n,
		  CMFixtureFunction setup, CMFixtureFunction teardown, int n_names,
		  char *const *names)
{
	struct CMUnitTest *sel;
	size_t k = 0;
	int rc, missing = 0;

	if (n_names <= 0)
		return _cmocka_run_group_tests(group, tests, n, setup, teardown);
	for (int a = 0; a < n_names; a++) {
		size_t hits = 0;
		for (size_t i = 0; i < n; i++)
			hits += fnmatch(names[a], tests[i].name, 0) == 0;
		if (hits == 0) {
			fprintf(stderr, "error: no test case '%s' in %s (cases:", names[a], group);
			for (size_t i = 0; i < n; i++)
				fprintf(stderr, " %s", tests[i].name);
			fprintf(stderr, ")\n");
			missing = 1;
		}
	}
	if (missing)
		return 2;
	sel = calloc(n, sizeof *sel);
	if (!sel) {
		fprintf(stderr, "error: out of memory\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		int want = 0;
		for (int a = 0; a < n_names && !want; a++)
			want = fnmatch(names[a], tests[i].name, 0) == 0;
		if (want)
			sel[k++] = tests[i];
	}
	rc = _cmocka_run_group_tests(group, sel, k, setup, teardown);
	free(sel);
	return rc;
}
