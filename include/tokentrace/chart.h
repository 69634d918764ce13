/* tokentrace: charts (cairo) and the HTML and PDF reports. */
#ifndef TOKENTRACE_CHART_H
#define TOKENTRACE_CHART_H

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One self-contained HTML page (inline SVG charts, escaped strings).  run is
 * used for charts drawn from raw traces (timeline, CDF); it may be NULL. */
enum tt_code tt_render_html(const struct tt_report *r, struct tt_run *run, struct tt_buf *out,
			    struct tt_error *err);
/* Multi-page PDF report written to path. */
enum tt_code tt_render_pdf(const struct tt_report *r, struct tt_run *run, const char *path,
			   struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
