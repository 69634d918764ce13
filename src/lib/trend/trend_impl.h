/* trend: what the files of the module share (not installed). */
#ifndef TT_TREND_IMPL_H
#define TT_TREND_IMPL_H

#include "tokentrace/trend.h"

struct tt_trend {
	struct tt_trend_opts o;
	struct tt_trend_run *runs; /* as added; tt_trend_analyze sorts them */
	size_t n_runs, cap;
};

/* "0.10.2" after "0.9.12": digits compared as numbers, the rest as bytes. */
int tt__trend_vercmp(const char *a, const char *b);

#endif
