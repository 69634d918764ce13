/* Running the matrix: every cell not finished yet (run_matrix.c). */
#ifndef TT_CAPTURE_RUN_MATRIX_H
#define TT_CAPTURE_RUN_MATRIX_H

#include "capture.h"

/* Run the cells that are pending, running or interrupted, until the end
 * or a stop.  reps: the runs of --repeat (n_reps of them, each the same
 * matrix), measured cell by cell with each cell's repeats in a row; c->run
 * is set to each in turn and back to reps[0] at the end.  n_reps 0: the
 * one run c->run.  Returns 0, or 1 when the run cannot go on (message
 * printed). */
int run_matrix(struct cap *c, struct tt_run_writer *const *reps, size_t n_reps);

#endif
