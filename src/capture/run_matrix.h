/* Running the matrix: every cell not finished yet (run_matrix.c). */
#ifndef TT_CAPTURE_RUN_MATRIX_H
#define TT_CAPTURE_RUN_MATRIX_H

#include "capture.h"

/* Run the cells that are pending, running or interrupted, until the end
 * or a stop.  Returns 0, or 1 when the run cannot go on (message printed). */
int run_matrix(struct cap *c);

#endif
