/* An open-loop cell (cell_rate.c). */
#ifndef TT_CAPTURE_CELL_RATE_H
#define TT_CAPTURE_CELL_RATE_H

#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Run open-loop cell i; tw is its open trace, already set on the sink.
 * Returns as cell_run. */
enum tt_code cell_run_rate(struct cap *c, size_t i, struct tt_trace_writer *tw,
			   struct tt_error *err);

#endif
