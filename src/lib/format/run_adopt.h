/* For modules above format that open a run they made themselves (an imported
 * file written to a private directory): the run owns that directory. */
#ifndef TT_FORMAT_RUN_ADOPT_H
#define TT_FORMAT_RUN_ADOPT_H

#include "tokentrace/run.h"

/* On tt_run_free, call fn(ctx) after everything else is released; and give
 * display (copied) as the run's path from tt_run_path.  0, or -1 when out
 * of memory (nothing changed). */
int tt__run_adopt(struct tt_run *run, const char *display, void (*fn)(void *), void *ctx);

#endif
