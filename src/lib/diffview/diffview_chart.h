/* Internal to lib/diffview: drawing a diff's charts into a canvas (the
 * chart module's), for one chart, the HTML page and the PDF document. */
#ifndef TT_DIFFVIEW_CHART_H
#define TT_DIFFVIEW_CHART_H

#include "chart/chart_impl.h"
#include "tokentrace/diffview.h"

/* Draw chart o->kind of d in the rectangle (x, y, w, h). */
enum tt_code tt__diff_chart_draw(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_diff *d, const struct tt_diff_chart_opts *o,
				 struct tt_error *err);
/* Title of a kind, and one sentence saying what it shows. */
const char *tt__diff_chart_title(enum tt_diff_chart_kind k);
const char *tt__diff_chart_about(enum tt_diff_chart_kind k);
/* Whether the diff has anything to draw for the kind (a heatmap needs decode
 * cells on both sides, the prefill chart prefill rows, ...). */
int tt__diff_chart_has_data(const struct tt_diff *d, enum tt_diff_chart_kind k,
			    const char *cell);

#endif
