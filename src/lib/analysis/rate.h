/* Open-loop cells' figures (docs/metrics.md M-rate), accumulated beside
 * the decode figures of figures.c. */
#ifndef TT_ANALYSIS_RATE_H
#define TT_ANALYSIS_RATE_H

#include "tokentrace/analysis.h"

struct tt__rate_acc;

/* For a cell with window [ws, we) (ns); slo may be inactive. */
enum tt_code tt__rate_acc_create(const struct tt_slo *slo, int64_t ws, int64_t we,
				 struct tt__rate_acc **out, struct tt_error *err);
/* Every request of the cell, any role. */
void tt__rate_acc_request(struct tt__rate_acc *a, const struct tt_request *r);
/* The figures; 1 when memory ran out on the way (figures then partial). */
int tt__rate_acc_finish(struct tt__rate_acc *a, const struct tt_analysis_opts *o,
			double offered, struct tt_rate_figures *f);
void tt__rate_acc_free(struct tt__rate_acc *a);
/* Every figure unknown (NaN, counts 0). */
void tt__rate_blank(struct tt_rate_figures *f);

/* M-sustained thresholds (docs/metrics.md, with the measurements behind
 * them). */
#define TT_RATE_LATE_P99_MS 50.0
#define TT_RATE_ACHIEVED_SHARE 0.95
#define TT_RATE_TREND_MS_S 20.0     /* backlog: TTFT from the due time grows faster */
#define TT_RATE_TREND_SE_MS_S 10.0  /* too short to tell: the trend's standard error */
#define TT_RATE_TREND_MIN_N 8       /* requests with a ttft_due for a trend */

#endif
