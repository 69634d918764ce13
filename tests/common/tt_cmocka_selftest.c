/* Two trivial cases for tests/common/selftest.sh, which checks that
 * tt_cmocka_run fails on a case name it does not know. */
#include "tt_cmocka.h"

static void test_one(void **state)
{
	(void)state;
	assert_true(1);
}

static void test_two(void **state)
{
	(void)state;
	assert_true(1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_two),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
