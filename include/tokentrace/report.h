/* tokentrace: the report in any format.  The one place that combines the
 * text tables (render.h) and the charts (chart.h): the HTML page and the
 * PDF document, and one entry point for every format. */
#ifndef TOKENTRACE_REPORT_H
#define TOKENTRACE_REPORT_H

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/chart.h"
#include "tokentrace/render.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Any format into out: term, md, csv and json tables, the html page and the
 * pdf document.  run is used for the charts drawn from raw traces (timeline,
 * CDF) in html and pdf; it may be NULL, and those charts are then left out.
 * opts may be NULL (no colour, 120 columns). */
enum tt_code tt_report_render(const struct tt_report *r, struct tt_run *run, enum tt_format f,
			      const struct tt_render_opts *opts, struct tt_buf *out,
			      struct tt_error *err);
/* Same, written to path (replaced). */
enum tt_code tt_report_write(const struct tt_report *r, struct tt_run *run, enum tt_format f,
			     const struct tt_render_opts *opts, const char *path,
			     struct tt_error *err);

/* Text formats (term, md, csv, json, html without the run's trace charts)
 * into out; pdf is refused with TT_EARG (use tt_report_render). */
enum tt_code tt_render(const struct tt_report *r, enum tt_format f,
		       const struct tt_render_opts *opts, struct tt_buf *out,
		       struct tt_error *err);

/* One self-contained HTML page (inline SVG charts, escaped strings).  run is
 * used for charts drawn from raw traces (timeline, CDF); it may be NULL. */
enum tt_code tt_render_html(const struct tt_report *r, struct tt_run *run, struct tt_buf *out,
			    struct tt_error *err);
/* Multi-page PDF report written to path: the header facts, every table,
 * every chart. */
enum tt_code tt_render_pdf(const struct tt_report *r, struct tt_run *run, const char *path,
			   struct tt_error *err);
/* Same into a buffer. */
enum tt_code tt_render_pdf_buf(const struct tt_report *r, struct tt_run *run,
			       struct tt_buf *out, struct tt_error *err);

/* Everything at once into directory dir (created if missing): every chart
 * the report can show as <kind>.png, .svg or .pdf (f), plus report.html and
 * report.pdf.  Each raw trace is read once for all of them, and with SVG
 * or PNG charts the HTML embeds the very same files.  A chart that cannot be drawn
 * (no trace for it) is left out: TT_WARN, and err names it. */
enum tt_code tt_render_all(const struct tt_report *r, struct tt_run *run, const char *dir,
			   enum tt_chart_format f, struct tt_error *err);
/* Same, with the chart files drawn at size's width, height, dpi, font_scale
 * and no_title (its kind and format are not read; f is the format).  The
 * reports' own pages keep their layout.  size NULL: as tt_render_all. */
enum tt_code tt_render_all_sized(const struct tt_report *r, struct tt_run *run, const char *dir,
				 enum tt_chart_format f, const struct tt_chart_opts *size,
				 struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
