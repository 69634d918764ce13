/* The end of a cell (cell_end.c). */
#ifndef TT_CAPTURE_CELL_END_H
#define TT_CAPTURE_CELL_END_H

#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Commit the manifest (a failure is reported and the capture goes on). */
void cell_commit(struct cap *c);
/* Close cell i's trace tw and set its final state (and reason). */
enum tt_code cell_finish(struct cap *c, size_t i, struct tt_trace_writer *tw,
			 enum tt_cell_state st, const char *reason, struct tt_error *err);

#endif
