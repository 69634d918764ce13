/* Fuzz entry: arbitrary bytes as a request trace (formats/workload-trace-v1.md),
 * the file `tokentrace-capture --trace FILE` reads from outside, in each
 * format and detected.  What parses must hold the spec's promises: 1 or
 * more requests, lengths in range, times from 0 never decreasing, ids
 * within the blocks of the prompt. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tokentrace/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct tt_workload *w)
{
	int64_t prev = 0;

	if (w->n < 1 || w->rows < w->n || w->reqs[0].t_ns != 0)
		abort();
	for (size_t i = 0; i < w->n; i++) {
		const struct tt_workload_req *r = &w->reqs[i];
		size_t n;
		tt_workload_blocks(w, i, &n);
		if (r->t_ns < prev || r->input < 1 || r->input > 2097152 || r->output < 1 ||
		    r->output > 1048576 || r->line < 1 ||
		    n > (r->input + TT_WORKLOAD_BLOCK_TOKENS - 1) / TT_WORKLOAD_BLOCK_TOKENS)
			abort();
		prev = r->t_ns;
	}
	if (w->span_ns != prev || w->reqs[w->n - 1].block_end != w->n_blocks)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum tt_workload_format f[3] = {TT_WORKLOAD_AUTO, TT_WORKLOAD_MOONCAKE,
						     TT_WORKLOAD_AZURE};
	struct tt_workload_opts o = {.start_s = 0.5, .duration_s = 10, .speedup = 3,
				     .output_cap = 7};

	for (int i = 0; i < 3; i++) {
		struct tt_workload *w = NULL;
		struct tt_error err;
		if (!tt_failed(tt_workload_parse((const char *)data, size, "fuzz", f[i],
						 i == 2 ? &o : NULL, &w, &err)))
			check(w);
		tt_workload_free(w);
	}
	return 0;
}
