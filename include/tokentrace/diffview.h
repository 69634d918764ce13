/* tokentrace: a diff (diff.h) as text tables, a page and charts.
 *
 * term, md: the status changes, the cells of one side only, a matrix of
 * changes and the figures changed; csv: one row per figure of a cell;
 * json: everything (formats/diff-json.md). */
#ifndef TOKENTRACE_DIFFVIEW_H
#define TOKENTRACE_DIFFVIEW_H

#include <stddef.h>

#include "tokentrace/buf.h"
#include "tokentrace/diff.h"
#include "tokentrace/render.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The release gate as the user set it (--fail-if-slower), for the output. */
struct tt_diff_gate_opts {
	int on;
	enum tt_diff_figure figure;
	double threshold_pct;
};

/* Render d in format f (term, md, csv, json) into out.  opts and gate may
 * be NULL.  html and pdf: see tt_diff_write. */
enum tt_code tt_diff_render(const struct tt_diff *d, enum tt_format f,
			    const struct tt_render_opts *opts, const struct tt_diff_gate_opts *gate,
			    struct tt_buf *out, struct tt_error *err);

/* One line for a CI log, without a newline: the counts of verdicts, status
 * changes, cells of one side only and, with a gate, its result. */
void tt_diff_summary(const struct tt_diff *d, const struct tt_diff_gate_opts *gate, char *buf,
		     size_t len);

/* "decode-8192x16" or "prefill-8192": the id a run gives the cell. */
void tt_diff_cell_id(const struct tt_diff_cell *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
