/* The summary at the end of a capture (run_summary.c). */
#ifndef TT_CAPTURE_RUN_SUMMARY_H
#define TT_CAPTURE_RUN_SUMMARY_H

#include "capture.h"

/* Final capture-info.json and the summary line; returns the exit status
 * (0, or 130 when the user stopped the run). */
int run_summary(struct cap *c);

#endif
