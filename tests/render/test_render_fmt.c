/* The seed report's number style, value by value. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tt_cmocka.h"

#include "tokentrace/render.h"

#define DASH "\xe2\x80\x94"

struct want {
	double v;
	const char *text;
};

static void check(void (*fmt)(double, char *, size_t), const struct want *w, size_t n)
{
	char buf[64];
	size_t i;

	for (i = 0; i < n; i++) {
		memset(buf, 'x', sizeof buf);
		fmt(w[i].v, buf, sizeof buf);
		if (strcmp(buf, w[i].text) != 0) {
			print_error("value %.17g: got '%s', want '%s'\n", w[i].v, buf, w[i].text);
			fail();
		}
	}
}

static void test_rate(void **state)
{
	static const struct want w[] = {
		{143100, "143.1K"}, {1819.2, "1,819.2"}, {15000, "15K"},   {10300, "10.3K"},
		{24300, "24.3K"},   {2886, "2,886.0"},   {959.94, "959.9"}, {972, "972.0"},
		{9999.94, "9,999.9"}, {9999.96, "10K"},  {10000, "10K"},    {999949, "999.9K"},
		{999960, "1M"},     {1.5e6, "1.5M"},     {2.25e7, "22.5M"}, {0, "0.0"},
		{-0.01, "0.0"},     {0.04, "0.0"},       {NAN, DASH},       {INFINITY, DASH},
	};
	(void)state;
	check(tt_fmt_rate, w, sizeof w / sizeof w[0]);
}

static void test_ms(void **state)
{
	static const struct want w[] = {
		{1036, "1,036 ms"}, {57, "57 ms"},       {56.6, "57 ms"}, {962.4, "962 ms"},
		{8393, "8,393 ms"}, {1234567, "1,234,567 ms"}, {0.2, "0 ms"}, {NAN, DASH},
	};
	(void)state;
	check(tt_fmt_ms, w, sizeof w / sizeof w[0]);
}

static void test_int(void **state)
{
	static const struct want w[] = {
		{28796, "28,796"}, {739238, "739,238"}, {1, "1"}, {0, "0"}, {999, "999"},
		{1000, "1,000"},   {-1234, "-1,234"},   {NAN, DASH},
	};
	(void)state;
	check(tt_fmt_int, w, sizeof w / sizeof w[0]);
}

static void test_fixed1(void **state)
{
	static const struct want w[] = {
		{1.04, "1.0"}, {0.9, "0.9"},    {126.2, "126.2"}, {30, "30.0"},
		{30.49, "30.5"}, {23.94, "23.9"}, {-0.01, "0.0"}, {4096, "4,096.0"},
		{NAN, DASH},
	};
	(void)state;
	check(tt_fmt_fixed1, w, sizeof w / sizeof w[0]);
}

static void test_small_buffer(void **state)
{
	char buf[4];

	(void)state;
	tt_fmt_rate(143100, buf, sizeof buf);
	assert_string_equal(buf, "143");
	tt_fmt_ms(1036, buf, sizeof buf);
	assert_string_equal(buf, "1,0");
	tt_fmt_int(28796, buf, 0); /* nothing written, no crash */
}

static void test_format_parse(void **state)
{
	(void)state;
	assert_int_equal(tt_format_parse("term"), TT_FORMAT_TERM);
	assert_int_equal(tt_format_parse("md"), TT_FORMAT_MD);
	assert_int_equal(tt_format_parse("csv"), TT_FORMAT_CSV);
	assert_int_equal(tt_format_parse("json"), TT_FORMAT_JSON);
	assert_int_equal(tt_format_parse("html"), TT_FORMAT_HTML);
	assert_int_equal(tt_format_parse("pdf"), TT_FORMAT_PDF);
	assert_int_equal(tt_format_parse("JSON"), -1);
	assert_int_equal(tt_format_parse("xml"), -1);
	assert_int_equal(tt_format_parse(""), -1);
	assert_int_equal(tt_format_parse(NULL), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),         cmocka_unit_test(test_ms),
		cmocka_unit_test(test_int),          cmocka_unit_test(test_fixed1),
		cmocka_unit_test(test_small_buffer), cmocka_unit_test(test_format_parse),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
