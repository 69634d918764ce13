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

/* Change points by size, largest first (caller frees); NULL: no memory. */
size_t *tt__trend_by_size(const struct tt_trend_result *r);
/* The paragraph that opens every format: runs, order, series, method. */
void tt__trend_method_sentence(const struct tt_trend_result *r, struct tt_buf *b);
enum tt_code tt__trend_render_html(const struct tt_trend_result *r, struct tt_buf *b,
				   struct tt_error *err);

#endif
