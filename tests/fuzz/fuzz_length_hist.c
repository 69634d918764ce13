/* Fuzz entry: arbitrary bytes as an output-length histogram
 * (formats/length-hist-v1.md), the file `tokentrace-capture --output-tokens
 * @FILE` reads from outside.  What parses must hold the spec's promises:
 * 1..10000 bins, 1 <= min <= max <= 9999999999, weights >= 0 summing to > 0. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tokentrace/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tt_length_bin *b = NULL;
	struct tt_error err;
	size_t n = 0;
	double total = 0;

	if (tt_length_hist_parse((const char *)data, size, "fuzz.csv", &b, &n, &err) != TT_OK)
		return 0;
	if (n < 1 || n > 10000)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (b[i].min < 1 || b[i].max < b[i].min || b[i].max > 9999999999LL ||
		    !(b[i].weight >= 0) || b[i].weight > 1e12)
			abort();
		total += b[i].weight;
	}
	if (!(total > 0) || !isfinite(total))
		abort();
	free(b);
	return 0;
}
