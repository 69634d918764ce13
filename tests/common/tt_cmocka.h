/* The one main() of every cmocka test program: run the cases named on the
 * command line, and fail when a name matches no case.
 *
 * ctest registers each case as its own test (tt_cmocka_test in
 * tests/CMakeLists.txt reads the names from the source) and runs
 * `PROG CASE`.  cmocka's own filter runs zero cases for a name that does not
 * exist and reports success; a renamed case would then pass forever without
 * running.  Here a name that matches nothing is an error (exit 2). */
#ifndef TT_TEST_CMOCKA_H
#define TT_TEST_CMOCKA_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Run the cases of tests[0..n) whose names match names[0..n_names) (exact,
 * or a cmocka pattern with '*' and '?'), in the order of `tests`; with no
 * names, every case.  Returns the number of failed cases (0: all passed),
 * or 2 after a message on stderr when a name matches no case. */
int tt_cmocka_run(const char *group, const struct CMUnitTest *tests, size_t n,
		  CMFixtureFunction setup, CMFixtureFunction teardown, int n_names,
		  char *const *names);

/* In main(int argc, char **argv): the case names are argv[1..]. */
#define tt_cmocka_main(argc, argv, tests, setup, teardown)                                    \
	tt_cmocka_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown,      \
		      (argc) - 1, (argv) + 1)

#endif
