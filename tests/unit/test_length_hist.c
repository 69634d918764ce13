/* Output-length histograms (formats/length-hist-v1.md): what parses, and
 * every refusal naming the file and the line. */
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
#include <unistd.h>

#include "tokentrace/run.h"

static enum tt_code parse(const char *text, size_t len, struct tt_length_bin **b, size_t *n,
			  struct tt_error *err)
{
	return tt_length_hist_parse(text, len, "h.csv", b, n, err);
}

static void test_good(void **state)
{
	static const char text[] = "tokentrace-length-hist 1\n"
				   "# output lengths\n"
				   "\n"
				   "  \t\n"
				   "128,10\n"
				   "256:511,25.5\r\n"
				   "   # indented comment, with bytes \xc3\xa9 and ,:\n"
				   " 512 : 1023 ,\t40.0 \n"
				   "0007,0\n"
				   "9999999999,1000000000000"; /* no final LF */
	struct tt_length_bin *b = NULL;
	struct tt_error err;
	size_t n = 0;

	(void)state;
	assert_int_equal(parse(text, sizeof text - 1, &b, &n, &err), TT_OK);
	assert_int_equal(n, 5);
	assert_int_equal(b[0].min, 128);
	assert_int_equal(b[0].max, 128);
	assert_true(b[0].weight == 10);
	assert_int_equal(b[1].min, 256);
	assert_int_equal(b[1].max, 511);
	assert_true(b[1].weight == 25.5);
	assert_int_equal(b[2].min, 512);
	assert_int_equal(b[2].max, 1023);
	assert_true(b[2].weight == 40);
	assert_int_equal(b[3].min, 7);
	assert_true(b[3].weight == 0);
	assert_int_equal(b[4].min, 9999999999LL);
	assert_true(b[4].weight == 1e12);
	free(b);
	/* the version line with tabs and trailing blanks, CRLF */
	{
		static const char t2[] = "tokentrace-length-hist\t 1 \r\n5,1\r\n";
		assert_int_equal(parse(t2, sizeof t2 - 1, &b, &n, &err), TT_OK);
		assert_int_equal(n, 1);
		free(b);
	}
}

/* Each bad file: refused, the message naming file:line and the fault. */
static void test_refused(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"", "h.csv: the file is empty"},
		{"tokens,weight\n5,1\n", "h.csv:1: not an output-length histogram"},
		{"tokentrace-length-hist1\n5,1\n", "h.csv:1: not an output-length histogram"},
		{"tokentrace-length-hist 2\n5,1\n", "h.csv:1: histogram version 2 is not known"},
		{"tokentrace-length-hist 1.0\n5,1\n", "h.csv:1: bad version line"},
		{"tokentrace-length-hist 1\n", "h.csv: no bin"},
		{"tokentrace-length-hist 1\n# only a comment\n\n", "h.csv: no bin"},
		{"tokentrace-length-hist 1\n5,1\n6,-2\n", "h.csv:3: weight '-2' is not a number >= 0"},
		{"tokentrace-length-hist 1\n5,0\n6:9,0.0\n", "h.csv: the weights sum to 0"},
		{"tokentrace-length-hist 1\n5,1\n\nx,1\n", "h.csv:4: length 'x' is not a whole number"},
		{"tokentrace-length-hist 1\n0,1\n", "h.csv:2: length '0' is not a whole number"},
		{"tokentrace-length-hist 1\n12345678901,1\n", "h.csv:2: length '12345678901'"},
		{"tokentrace-length-hist 1\n,1\n", "h.csv:2: length '' is not"},
		{"tokentrace-length-hist 1\n9:3,1\n", "h.csv:2: bin '9:3' has MAX below MIN"},
		{"tokentrace-length-hist 1\n3:,1\n", "h.csv:2: bin '3:' is not MIN:MAX"},
		{"tokentrace-length-hist 1\n3:4:5,1\n", "h.csv:2: bin '3:4:5' is not MIN:MAX"},
		{"tokentrace-length-hist 1\n5\n", "h.csv:2: expected LENGTH,WEIGHT"},
		{"tokentrace-length-hist 1\n5,1,2\n", "h.csv:2: more than two fields"},
		{"tokentrace-length-hist 1\n5,\n", "h.csv:2: weight '' is not a number >= 0"},
		{"tokentrace-length-hist 1\n5,3.\n", "h.csv:2: weight '3.' is not"},
		{"tokentrace-length-hist 1\n5,.5\n", "h.csv:2: weight '.5' is not"},
		{"tokentrace-length-hist 1\n5,1.2.3\n", "h.csv:2: weight '1.2.3' is not"},
		{"tokentrace-length-hist 1\n5,1000000000001\n", "h.csv:2: weight '1000000000001'"},
		{"tokentrace-length-hist 1\n5,1 2\n", "h.csv:2: weight '1 2' is not"},
		{"tokentrace-length-hist 1\n5,1e3\n", "h.csv:2: weight '1e3' is not"},
		{"tokentrace-length-hist 1\n-5,1\n", "h.csv:2: length '-5' is not"},
		{"tokentrace-length-hist 1\n+5,1\n", "h.csv:2: length '+5' is not"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tt_length_bin *b = (struct tt_length_bin *)&cases; /* must stay */
		size_t n = 77;
		struct tt_error err;
		enum tt_code rc = parse(cases[i].text, strlen(cases[i].text), &b, &n, &err);
		if (rc == TT_OK || !strstr(err.msg, cases[i].msg))
			fail_msg("case %zu '%s': rc %d, message '%s' (want '%s')", i, cases[i].text,
				 rc, rc == TT_OK ? "" : err.msg, cases[i].msg);
		assert_ptr_equal(b, (struct tt_length_bin *)&cases);
		assert_int_equal(n, 77);
	}
}

static void test_limits(void **state)
{
	struct tt_length_bin *b = NULL;
	struct tt_error err;
	size_t n = 0, len;
	char *text = malloc(2 * 1048576);
	static const char nul[] = "tokentrace-length-hist 1\n5,1\n\0\n";

	(void)state;
	assert_non_null(text);
	/* a NUL byte: not text */
	assert_int_equal(parse(nul, sizeof nul - 1, &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "NUL"));
	/* 10,000 bins read, 10,001 refused at the line that is one too many */
	len = (size_t)sprintf(text, "tokentrace-length-hist 1\n");
	for (int i = 1; i <= 10000; i++)
		len += (size_t)sprintf(text + len, "%d,1\n", i);
	assert_int_equal(parse(text, len, &b, &n, &err), TT_OK);
	assert_int_equal(n, 10000);
	assert_int_equal(b[9999].min, 10000);
	free(b);
	len += (size_t)sprintf(text + len, "1,1\n");
	assert_int_equal(parse(text, len, &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "h.csv:10002: more than 10000 bins"));
	/* a line of 1,025 bytes, and a file over 1 MiB */
	len = (size_t)sprintf(text, "tokentrace-length-hist 1\n# ");
	memset(text + len, 'x', 1023);
	len += 1023;
	text[len++] = '\n';
	assert_int_equal(parse(text, len, &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "h.csv:2: line longer than 1024 bytes"));
	memset(text, '\n', 1048577);
	memcpy(text, "tokentrace-length-hist 1\n5,1\n", 29);
	assert_int_equal(parse(text, 1048576, &b, &n, &err), TT_OK);
	free(b);
	assert_int_equal(parse(text, 1048577, &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "larger than 1048576 bytes"));
	free(text);
}

static void test_load(void **state)
{
	char path[] = "/tmp/tt-length-hist-XXXXXX";
	int fd = mkstemp(path);
	struct tt_length_bin *b = NULL;
	struct tt_error err;
	size_t n = 0;
	static const char text[] = "tokentrace-length-hist 1\n20:24,2\n5,-1\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	assert_int_equal(tt_length_hist_load(path, &b, &n, &err), TT_FAILED);
	/* the path as given, the line */
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, ":3: "));
	unlink(path);
	assert_int_equal(tt_length_hist_load(path, &b, &n, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cannot open"));
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(tt_length_hist_load("/", &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "'/'"));
	/* Issue 20.10: a FIFO with no writer is refused at once (fopen waited
	 * for a writer forever: --output-tokens @FIFO hung). */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(tt_length_hist_load(path, &b, &n, &err), TT_FAILED);
	assert_non_null(strstr(err.msg, "is a FIFO, not a regular file"));
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_load),
	};
	return tt_cmocka_run("test_length_hist", tests, sizeof tests / sizeof tests[0], NULL, NULL,
			     argc - 1, argv + 1);
}
