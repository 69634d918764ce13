/* The one table model (src/lib/text/table.h, issue 21.2) and its term, md
 * and csv writers, on tables built by hand: drop priority on narrow
 * terminals, tones as colour, the two term styles, markdown escaping and
 * alignment, CSV quoting, rows that grow, UTF-8 widths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/table.h"

/* Context | Rate | Tail | Note: Tail dropped first, then Note, never the keys. */
static void build(struct tt__table *t)
{
	static const char *const head[] = {"Context", "Rate", "Tail", "Note"};

	assert_int_equal(tt__table_init(t, 4), 0);
	for (size_t k = 0; k < 4; k++)
		tt__table_set(t, 0, k, head[k], TT__TONE_NONE);
	t->align[1] = t->align[2] = TT__ALIGN_RIGHT;
	t->prio[2] = 9;
	t->prio[3] = 5;
	for (int i = 0; i < 3; i++) {
		size_t row = tt__table_add_row(t);
		char s[32];

		assert_int_equal(row, (size_t)i + 1);
		snprintf(s, sizeof s, "%dK", 8 << i);
		tt__table_set(t, row, 0, s, TT__TONE_NONE);
		snprintf(s, sizeof s, "%d.5", 100 * (i + 1));
		tt__table_set(t, row, 1, s, i == 2 ? TT__TONE_BAD : TT__TONE_NONE);
		tt__table_set(t, row, 2, "12,345.6 ms", TT__TONE_NONE);
		tt__table_set(t, row, 3, i == 0 ? "a|b_c" : "\xe2\x80\x94", TT__TONE_NONE);
	}
}

static char *term(const struct tt__table *t, const struct tt__term_style *st, size_t avail,
		  int color, int *shown)
{
	struct tt_buf b;

	tt_buf_init(&b, 0);
	tt__table_term(t, st, avail, color, &b, shown);
	assert_false(b.failed);
	return tt_buf_steal(&b, NULL);
}

static void test_term_fits_by_priority(void **state)
{
	struct tt__table t;
	int shown[4];
	char *s;

	(void)state;
	build(&t);
	s = term(&t, &tt__term_report, 200, 0, shown);
	assert_string_equal(s, "  Context   Rate         Tail  Note\n"
			       "  8K       100.5  12,345.6 ms  a|b_c\n"
			       "  16K      200.5  12,345.6 ms  \xe2\x80\x94\n"
			       "  32K      300.5  12,345.6 ms  \xe2\x80\x94\n\n");
	free(s);
	/* 2 + 7 + 2 + 5 + 2 + 11 + 2 + 5 = 36 columns: at 35 the Tail goes */
	s = term(&t, &tt__term_report, 35, 0, shown);
	assert_int_equal(shown[0] + shown[1] + shown[3], 3);
	assert_int_equal(shown[2], 0);
	assert_null(strstr(s, "12,345.6"));
	free(s);
	/* at 10 both droppable columns go, the keys stay (the terminal wraps) */
	s = term(&t, &tt__term_report, 10, 0, shown);
	assert_int_equal(shown[2] + shown[3], 0);
	assert_int_equal(shown[0] + shown[1], 2);
	free(s);
	tt__table_free(&t);
}

static void test_term_tones_and_styles(void **state)
{
	struct tt__table t;
	char *s;

	(void)state;
	build(&t);
	s = term(&t, &tt__term_report, 200, 1, NULL);
	assert_non_null(strstr(s, "\x1b[1mContext\x1b[0m")); /* the header in bold */
	assert_non_null(strstr(s, "\x1b[31m300.5\x1b[0m"));  /* a BAD tone in red */
	assert_null(strstr(s, "\x1b[31m200.5"));
	free(s);
	/* the diff's style: flush left, dashes under the header, nothing dropped */
	s = term(&t, &tt__term_plain, 10, 0, NULL);
	assert_string_equal(s, "Context   Rate         Tail  Note\n"
			       "-------  -----  -----------  -----\n"
			       "8K       100.5  12,345.6 ms  a|b_c\n"
			       "16K      200.5  12,345.6 ms  \xe2\x80\x94\n"
			       "32K      300.5  12,345.6 ms  \xe2\x80\x94\n\n");
	free(s);
	assert_int_equal(tt__status_tone(TT_STATUS_VALID), TT__TONE_GOOD);
	assert_int_equal(tt__status_tone(TT_STATUS_ERRORS), TT__TONE_BAD);
	assert_int_equal(tt__status_tone(TT_STATUS_OVER_CAPACITY), TT__TONE_DIM);
	tt__table_free(&t);
}

static void test_md_and_csv(void **state)
{
	struct tt__table t;
	struct tt_buf b;

	(void)state;
	build(&t);
	tt_buf_init(&b, 0);
	tt__table_md(&t, 1, &b);
	assert_non_null(strstr(b.data, "| Context | Rate | Tail | Note |\n|---|---:|---:|---|\n"));
	assert_non_null(strstr(b.data, "| 8K | 100.5 | 12,345.6 ms | a\\|b\\_c |\n"));
	tt_buf_reset(&b);
	tt__table_md(&t, 0, &b); /* the diff's cells are its own text: not escaped */
	assert_non_null(strstr(b.data, "| a|b_c |"));
	tt_buf_reset(&b);
	tt__table_set(&t, 3, 3, "=cmd()", TT__TONE_NONE);
	tt__table_csv(&t, &b);
	assert_non_null(strstr(b.data, "Context,Rate,Tail,Note\n"));
	assert_non_null(strstr(b.data, "8K,100.5,\"12,345.6 ms\",a|b_c\n"));
	assert_non_null(strstr(b.data, "32K,300.5,\"12,345.6 ms\",\"'=cmd()\"\n"));
	tt_buf_release(&b);
	tt__table_free(&t);
}

static void test_rows_grow(void **state)
{
	struct tt__table t;
	char s[32];

	(void)state;
	assert_int_equal(tt__table_init(&t, 2), 0);
	assert_int_equal(tt__table_text(&t, "Title", NULL, "note"), 0);
	for (int i = 0; i < 10000; i++) {
		size_t row = tt__table_add_row(&t);
		snprintf(s, sizeof s, "%d", i);
		tt__table_set(&t, row, 0, s, TT__TONE_NONE);
		t.row_status[row] = i % 3;
	}
	assert_int_equal(t.nrows, 10001);
	assert_string_equal(tt__table_get(&t, 10000, 0), "9999");
	assert_string_equal(tt__table_get(&t, 10000, 1), ""); /* never set */
	assert_string_equal(tt__table_get(&t, 20000, 0), ""); /* past the end */
	assert_int_equal(t.row_status[9999], 9998 % 3);
	assert_string_equal(t.title, "Title");
	assert_null(t.caption);
	assert_false(tt__table_failed(&t));
	assert_int_equal(tt__display_width("\xe2\x89\xa5" "100"), 4);
	tt__table_free(&t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_fits_by_priority),
		cmocka_unit_test(test_term_tones_and_styles),
		cmocka_unit_test(test_md_and_csv),
		cmocka_unit_test(test_rows_grow),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
