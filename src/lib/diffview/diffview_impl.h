/* Internal to lib/diffview: one entry per format. */
#ifndef TT_DIFFVIEW_IMPL_H
#define TT_DIFFVIEW_IMPL_H

#include "tokentrace/diffview.h"

/* JSON, schema "tokentrace-diff" (formats/diff-json.md). */
enum tt_code tt__diff_render_json(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				 struct tt_buf *out, struct tt_error *err);

/* A figure's verdict, with its basis when a side is not its own samples'
 * bootstrap ("no significant change [point/samples]"). */
void tt__diff_verdict_text(const struct tt_diff_value *v, char *buf, size_t len);

/* The method in one paragraph, for every format. */
void tt__diff_method_text(const struct tt_diff *d, char *line, size_t len);

#endif
