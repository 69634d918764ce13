/* Open-loop sweeps (sweep.c, docs/capture.md "Sweeps and the SLO limit"). */
#ifndef TT_CAPTURE_SWEEP_H
#define TT_CAPTURE_SWEEP_H

#include "capture.h"

/* After the matrix: --rate-sweep (find the saturation rate, then a spread
 * below it) and --slo (a bounded search for the highest rate meeting the
 * SLOs), per context, adding rate cells as it goes.  Returns 0, or the
 * exit status (message printed). */
int run_sweep(struct cap *c);

#endif
