/* One cell of the matrix (cell.c). */
#ifndef TT_CAPTURE_CELL_H
#define TT_CAPTURE_CELL_H

#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"

/* Run cell i of the manifest.  Returns TT_OK when the cell ended (done,
 * over capacity, failed) and TT_EOF when the user stopped the run. */
enum tt_code cell_run(struct cap *c, size_t i, struct tt_error *err);

#endif
