/* Terminal: aligned tables, colour only when asked, fits the width. */
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

static size_t widest_line(const char *text)
{
	size_t best = 0, w = 0;
	const char *p;
	int esc = 0;

	for (p = text; *p; p++) {
		if (*p == '\n') {
			if (w > best)
				best = w;
			w = 0;
		} else if (*p == '\x1b') {
			esc = 1;
		} else if (esc) {
			esc = *p != 'm';
		} else if (((unsigned char)*p & 0xC0) != 0x80) {
			w++;
		}
	}
	return w > best ? w : best;
}

static void test_plain(void **state)
{
	struct tt_report r;
	char *t;

	(void)state;
	fx_report(&r);
	t = fx_render(&r, TT_FORMAT_TERM, 0, 200);
	fx_lacks(t, "\x1b[");
	fx_contains(t, "Speed test matrix");
	fx_contains(t, "LiquidAI/LFM2.5-350M on H200 NVL 141 GB");
	fx_contains(t, "143.1K");
	fx_contains(t, "1,036 ms");
	fx_contains(t, "1,113.1 Q");
	fx_contains(t, "over cap");
	fx_contains(t, "28,796");
	fx_contains(t, "30.0 s");
	fx_contains(t, tt_status_legend(TT_STATUS_QUEUED));
	fx_contains(t, "120K x 2: Requests queued");
	/* aligned: the header's right-aligned column ends where its values end */
	fx_contains(t, "  Context  Prompt tok/s      TTFT  Status\n"
		       "  8K             143.1K     57 ms  Valid\n"
		       "  120K           116.6K  1,036 ms  Valid\n");
	free(t);
}

static void test_color(void **state)
{
	struct tt_report r;
	char *t;

	(void)state;
	fx_report(&r);
	t = fx_render(&r, TT_FORMAT_TERM, 1, 200);
	fx_contains(t, "\x1b[32mValid\x1b[0m");
	fx_contains(t, "\x1b[33mRequests queued\x1b[0m");
	fx_contains(t, "\x1b[2mOver capacity\x1b[0m");
	free(t);
}

static void test_fits_width(void **state)
{
	static const int widths[] = {72, 80, 100, 120};
	struct tt_report r;
	size_t i;

	(void)state;
	fx_report(&r);
	for (i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		char *t = fx_render(&r, TT_FORMAT_TERM, i % 2, widths[i]);
		size_t w = widest_line(t);
		/* the header lines carry run facts; tables must fit */
		const char *tables = strstr(t, "Prefill");

		assert_non_null(tables);
		if (widest_line(tables) > (size_t)widths[i]) {
			fprintf(stderr, "width %d: widest table line %zu (all %zu)\n%s\n", widths[i],
				widest_line(tables), w, t);
			fail();
		}
		/* every cell is still somewhere: the matrix splits, it does not drop */
		fx_contains(t, "1.5M");
		fx_contains(t, "over cap");
		free(t);
	}
}

static void test_narrower_than_possible(void **state)
{
	struct tt_report r;
	char *t;

	(void)state;
	fx_report(&r);
	/* too narrow for any table: still renders everything, never loops */
	t = fx_render(&r, TT_FORMAT_TERM, 0, 10);
	fx_contains(t, "143.1K");
	fx_contains(t, "1.5M");
	free(t);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_color),
		cmocka_unit_test(test_fits_width),
		cmocka_unit_test(test_narrower_than_possible),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
