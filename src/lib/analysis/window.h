/* M-window (docs/metrics.md): the part of a cell's recorded window the
 * figures use, shared by the analysis and the charts that read traces.
 * Internal to analysis/ and the modules above it. */
#ifndef TT_ANALYSIS_WINDOW_H
#define TT_ANALYSIS_WINDOW_H

#include <stdint.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"

/* The recorded window moved by skip_first_s and capped by window_s, in
 * trace ns ("Durations": the options' seconds to the nearest ns, the exact
 * ns of the text tt_parse_duration_ns read); -1, -1 when there is none. */
void tt__measured_window(const struct tt_analysis_opts *o, const struct tt_cell_info *c,
			 int64_t *ws, int64_t *we);

#endif
