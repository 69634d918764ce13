/* tokentrace: a diff (diff.h) as text tables, a page and charts.
 *
 * term, md: the status changes, the cells of one side only, a matrix of
 * changes and the figures changed; csv: one row per figure of a cell;
 * json: everything (formats/diff-json.md). */
#ifndef TOKENTRACE_DIFFVIEW_H
#define TOKENTRACE_DIFFVIEW_H

#include <stddef.h>

#include "tokentrace/buf.h"
#include "tokentrace/chart.h"
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
	int status_change; /* also fail on a Valid cell that queues or is over capacity
			      (tt_diff_status_gate) */
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

/* ---- charts (docs/diff.md "Charts") ------------------------------------ */

enum tt_diff_chart_kind {
	TT_DIFF_CHART_HEATMAP = 0,     /* "heatmap": change of a figure, contexts x concurrency */
	TT_DIFF_CHART_THROUGHPUT = 1,  /* "throughput": total tok/s curves, both sides */
	TT_DIFF_CHART_PER_REQUEST = 2, /* "per-request": per request tok/s curves */
	TT_DIFF_CHART_TRADEOFF = 3,    /* "tradeoff": per request vs total tok/s */
	TT_DIFF_CHART_TTFT = 4,        /* "ttft": TTFT median curves */
	TT_DIFF_CHART_PREFILL = 5,     /* "prefill": prompt tok/s by context, both sides */
	TT_DIFF_CHART_TBT_CDF = 6,     /* "tbt-cdf": time between tokens of one cell, overlaid */
	TT_DIFF_CHART_KIND_COUNT_ = 7
};
const char *tt_diff_chart_kind_name(enum tt_diff_chart_kind k); /* NULL if unknown */
int tt_diff_chart_kind_parse(const char *name);                 /* -1 if unknown */

struct tt_diff_chart_opts {
	enum tt_diff_chart_kind kind;
	enum tt_chart_format format;
	double width, height;        /* 0: 960 x 600 */
	enum tt_diff_figure figure;  /* heatmap: the figure (total tok/s by default) */
	const char *cell;            /* tbt-cdf: cell id ("decode-8192x16"); NULL: the
					decode cell with the largest TBT change judged */
};
void tt_diff_chart_opts_init(struct tt_diff_chart_opts *o);

/* Draw one chart of a diff into out (PNG, SVG or PDF bytes). */
enum tt_code tt_diff_chart_render(const struct tt_diff *d, const struct tt_diff_chart_opts *o,
				  struct tt_buf *out, struct tt_error *err);

/* ---- the page and the document ----------------------------------------- */

/* One self-contained HTML page: the runs' facts side by side (differences
 * highlighted), the summary, every table and every chart (inline).  cell:
 * the tbt-cdf cell (NULL: default). */
enum tt_code tt_diff_render_html(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				 const char *cell, struct tt_buf *out, struct tt_error *err);
/* The same as a PDF document (A4 landscape pages). */
enum tt_code tt_diff_render_pdf(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				const char *cell, struct tt_buf *out, struct tt_error *err);

/* "decode-8192x16" or "prefill-8192": the id a run gives the cell. */
void tt_diff_cell_id(const struct tt_diff_cell *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
