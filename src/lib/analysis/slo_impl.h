/* Internal to the analysis: the judge's fast path for the figures. */
#ifndef TT_SLO_IMPL_H
#define TT_SLO_IMPL_H

#include "tokentrace/slo.h"

/* Whether r meets every SLO of s (M-slo), exactly as tt_slo_judge_request
 * decides it, in one pass over its chunks without allocating; *tokens gets
 * its output tokens. */
int tt__slo_meets(const struct tt_slo *s, const struct tt_request *r, long *tokens);

#endif
