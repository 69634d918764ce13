/* Figures of a cell that has no trace but figures its source tool reported
 * (an imported run: formats/run-v1.md 2.3, docs/metrics.md "Reported figures"). */
#ifndef TT_ANALYSIS_REPORTED_H
#define TT_ANALYSIS_REPORTED_H

#include "tokentrace/analysis.h"

/* 1 when cell c is to be reported from its reported figures (it has some,
 * no trace, and was measured); then tt__figures_reported fills f (already
 * initialised with every figure unknown) and its status. */
int tt__cell_is_reported(const struct tt_cell_info *c);
void tt__figures_reported(const struct tt_cell_info *c, const struct tt_analysis_opts *o,
			  struct tt_cell_figures *f);

#endif
