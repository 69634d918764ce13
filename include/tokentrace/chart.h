/* tokentrace: charts (cairo).  The HTML and PDF reports that combine them
 * with the tables are in tokentrace/report.h.
 *
 * docs/charts.md shows every chart kind.  Drawing is deterministic: the same
 * run gives the same bytes (fixed fonts, no time of now, PDF dates from the
 * run's manifest). */
#ifndef TOKENTRACE_CHART_H
#define TOKENTRACE_CHART_H

#include <stddef.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_chart_kind {
	TT_CHART_HEATMAP = 0,     /* "heatmap": decode total tok/s, contexts x concurrency */
	TT_CHART_THROUGHPUT = 1,  /* "throughput": total tok/s vs concurrency per context */
	TT_CHART_PER_REQUEST = 2, /* "per-request": per-request tok/s vs concurrency */
	TT_CHART_TRADEOFF = 3,    /* "tradeoff": per-request vs total tok/s */
	TT_CHART_TTFT = 4,        /* "ttft": TTFT median with p10-p90 band vs concurrency */
	TT_CHART_TBT = 5,         /* "tbt": time between tokens, same form */
	TT_CHART_PREFILL = 6,     /* "prefill": prefill tok/s and TTFT by context */
	TT_CHART_TIMELINE = 7,    /* "timeline": one cell over time, from the raw trace */
	TT_CHART_TBT_CDF = 8,     /* "tbt-cdf": CDF of time between tokens per context */
	TT_CHART_TTFT_PARTS = 9,  /* "ttft-parts": server queue, prefill and the rest of TTFT */
	TT_CHART_KIND_COUNT_ = 10,
	/* Open-loop kinds (docs/charts.md "Open-loop charts"): for runs with
	 * open-loop cells, drawn by name; not among the kinds below COUNT_ that
	 * every report draws. */
	TT_CHART_RATE_LATENCY = 32,    /* "rate-latency": TTFT from the due time vs offered
					* rate, median with p90-p99 band, SLO limit marked */
	TT_CHART_RATE_THROUGHPUT = 33, /* "rate-throughput": ended vs offered requests/s */
	TT_CHART_RATE_GOODPUT = 34,    /* "rate-goodput": goodput (SLOs from the due time) vs rate */
	TT_CHART_RATE_END_ = 35
};
/* "heatmap", ... ; NULL for an unknown kind. */
const char *tt_chart_kind_name(enum tt_chart_kind k);
/* One line for --help and docs. */
const char *tt_chart_kind_about(enum tt_chart_kind k);
/* Name -> kind; -1 if unknown. */
int tt_chart_kind_parse(const char *name);
/* The kinds drawn from raw traces (they need a run, not only a report). */
int tt_chart_kind_needs_run(enum tt_chart_kind k);
/* "heatmap, throughput, ..." for messages. */
const char *tt_chart_kind_list(void);

enum tt_chart_format { TT_CHART_PNG = 0, TT_CHART_SVG = 1, TT_CHART_PDF = 2 };
/* From a file name's extension (.png, .svg, .pdf, any case); -1 if none. */
int tt_chart_format_from_path(const char *path);

struct tt_chart_opts {
	enum tt_chart_kind kind;
	enum tt_chart_format format;
	/* Size: PNG in pixels; SVG and PDF in CSS pixels (1/96 in; a PDF page
	 * of 960 x 600 is 720 x 450 pt).  0: 960 x 600. */
	double width, height;
	/* PNG pixel density: 96 draws one pixel per unit; 192 draws text and
	 * lines twice as large on the same pixel size.  0: 96. */
	double dpi;
	long cell;        /* timeline: manifest cell index; -1: the decode cell
			   * with the highest concurrency at the smallest context */
	int concurrency;  /* tbt-cdf: level to show; 0: the highest with data */
	double font_scale; /* every text's size times this (1.5: half as large
			    * again); 0: 1.  Layout follows the measured text. */
	int no_title;      /* 1: no title or subtitle line (a paper's caption
			    * says them); the plot takes the room */
};
void tt_chart_opts_init(struct tt_chart_opts *o);
/* Size presets (docs/charts.md "Sizes"): "column" 480 x 320 without the
 * title, for one column of a two-column paper; "page" 960 x 600, the
 * default; "slide" 1280 x 720 with text 1.5 times as large.  Sets width,
 * height, font_scale and no_title of o; TT_EARG naming the presets for an
 * unknown name. */
enum tt_code tt_chart_preset(const char *name, struct tt_chart_opts *o, struct tt_error *err);
/* "column, page, slide" for messages and --help. */
const char *tt_chart_preset_list(void);

/* What was drawn, in output pixels (PNG) or units (SVG, PDF), so tests and
 * tools can find a data point in the image. */
struct tt_chart_info {
	double plot_x, plot_y, plot_w, plot_h; /* plot area (heatmap: the grid) */
	double x_lo, x_hi, y_lo, y_hi;         /* axis ranges (heatmap: x_lo, x_hi are
						* the colour scale's tok/s range) */
	int x_scale, y_scale;                  /* 0 linear, 2 log2, 10 log10 */
	size_t rows, cols;                     /* heatmap grid; 0 otherwise */
	size_t n_series;                       /* lines drawn (contexts) */
	double image_w, image_h;               /* whole image */
};

/* Analysis options for charts: adds quantiles 10 and 90 (the bands of the
 * ttft and tbt charts) to o, keeping those already there. */
void tt_chart_analysis_opts(struct tt_analysis_opts *o);

/* Draw one chart of a report into out (PNG, SVG or PDF bytes).  run may be
 * NULL except for kinds that tt_chart_kind_needs_run.  info may be NULL. */
enum tt_code tt_chart_render(const struct tt_report *r, struct tt_run *run,
			     const struct tt_chart_opts *o, struct tt_buf *out,
			     struct tt_chart_info *info, struct tt_error *err);
/* Same, written to path (replaced). */
enum tt_code tt_chart_write(const struct tt_report *r, struct tt_run *run,
			    const struct tt_chart_opts *o, const char *path,
			    struct tt_chart_info *info, struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
