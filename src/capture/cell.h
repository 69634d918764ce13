/* One cell of the matrix (cell.c). */
#ifndef TT_CAPTURE_CELL_H
#define TT_CAPTURE_CELL_H

#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Run cell i of the manifest.  Returns TT_OK when the cell ended (done,
 * over capacity, failed) and TT_EOF when the user stopped the run. */
enum tt_code cell_run(struct cap *c, size_t i, struct tt_error *err);

/* Commit the manifest (a failure is reported and the capture goes on). */
void cell_commit(struct cap *c);
/* Close cell i's trace tw and set its final state (and reason). */
enum tt_code cell_finish(struct cap *c, size_t i, struct tt_trace_writer *tw,
			 enum tt_cell_state st, const char *reason, struct tt_error *err);
/* An open-loop cell (cell_rate.c); tw is its open trace, set on the sink. */
enum tt_code cell_run_rate(struct cap *c, size_t i, struct tt_trace_writer *tw,
			   struct tt_error *err);

#endif
