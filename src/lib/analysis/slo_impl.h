/* Internal to the analysis: the judge's fast path for the figures. */
#ifndef TT_SLO_IMPL_H
#define TT_SLO_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/slo.h"

/* Whether r meets every SLO of s (M-slo), exactly as tt_slo_judge_request
 * decides it, in one pass over its chunks without allocating; *tokens gets
 * its output tokens. */
int tt__slo_meets(const struct tt_slo *s, const struct tt_request *r, long *tokens);

/* The same in parts, for a loop that already walks the chunks: init, one
 * acc_gap per spread per-token gap (g ns, k tokens), then decide with the
 * first token's time (-1: none). */
struct tt__slo_acc {
	int64_t bound, max_le, min_gt;
	size_t n, c;
};
void tt__slo_acc_init(const struct tt_slo *s, struct tt__slo_acc *a);
static inline void tt__slo_acc_gap(struct tt__slo_acc *a, int64_t g, uint32_t k)
{
	if (g <= 0) /* as M-tbt: samples <= 0 are dropped */
		return;
	a->n += k;
	if (g > a->bound) {
		a->c += k;
		if (g < a->min_gt)
			a->min_gt = g;
	} else if (g > a->max_le) {
		a->max_le = g;
	}
}
int tt__slo_decide(const struct tt_slo *s, const struct tt_request *r, int64_t first,
		   const struct tt__slo_acc *a);

#endif
