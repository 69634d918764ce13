/* Internal to the chart and report code: the canvas (a cairo surface with a
 * pango layout), axes, panels and the chart kinds.  Not installed. */
#ifndef TT_CHART_IMPL_H
#define TT_CHART_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cairo.h>
#include <pango/pangocairo.h>

#include "tokentrace/chart.h"

/* Layout unit: one CSS pixel (1/96 in).  A PNG at 96 dpi has one pixel per
 * unit; vector output keeps the same proportions. */

struct rgb {
	double r, g, b;
};

#define RGB_HEX(h) {((h) >> 16 & 0xff) / 255.0, ((h) >> 8 & 0xff) / 255.0, ((h) & 0xff) / 255.0}

/* Okabe-Ito, reordered so the first colours have the best contrast on white;
 * the palette's yellow comes last because it is faint on white. */
#define CHART_N_COLOURS 8
extern const struct rgb tt__chart_palette[CHART_N_COLOURS];
extern const struct rgb tt__chart_ink;   /* text */
extern const struct rgb tt__chart_muted; /* secondary text, axes */
extern const struct rgb tt__chart_grid;

struct canvas {
	cairo_surface_t *surface;
	cairo_t *cr;
	PangoLayout *layout;
	PangoFontDescription *font;
	enum tt_chart_format format;
	double w, h;        /* layout units of one page */
	double scale;       /* output pixels (or points) per layout unit */
	struct tt_buf *out; /* where the output goes */
	size_t out_start;   /* out->len when the canvas opened */
	int stream_failed;
	double font_scale;  /* every text size times this; 0 means 1 */
	int no_title;       /* charts leave out their title and subtitle */
};

/* Open a canvas of w x h layout units.  PNG: dpi/96 pixels per unit.
 * PDF and SVG write to out as they go (PDF: the pages of a report). */
enum tt_code tt__canvas_open(struct canvas *c, enum tt_chart_format f, double w, double h, double dpi,
			 struct tt_buf *out, struct tt_error *err);
/* A canvas like page that records into memory instead, never reaching
 * page: a chart drawn there first shows whether it can be drawn, and a
 * cairo error (a chart that cannot be drawn) stays there instead of
 * failing the page's whole document.  Release it with tt__canvas_release. */
enum tt_code tt__canvas_isolate(const struct canvas *page, struct canvas *sub,
				struct tt_error *err);
/* End the current page (PDF) and start another of the same size. */
void tt__canvas_next_page(struct canvas *c);
/* Finish the surface: PNG is encoded into out, PDF and SVG flushed. */
enum tt_code tt__canvas_finish(struct canvas *c, struct tt_error *err);
void tt__canvas_release(struct canvas *c);
/* Encode an RGB24 image surface as PNG (fast: zlib level 1, Sub/Up). */
enum tt_code tt__chart_png_encode(cairo_surface_t *s, struct tt_buf *out, struct tt_error *err);
/* PDF dates and title (ignored for PNG and SVG); NULL date keeps the fixed
 * default so output never depends on the time of now. */
void tt__canvas_set_date(struct canvas *c, const char *iso8601);
void tt__canvas_set_title(struct canvas *c, const char *title);
/* The manifest's created time if it is RFC 3339, else NULL. */
const char *tt__chart_pdf_date(const struct tt_manifest *m);
const char *tt__chart_kind_title(enum tt_chart_kind k);
/* TT_EDRAW with cairo's message when the context is in error. */
enum tt_code tt__canvas_check(struct canvas *c, const char *what, struct tt_error *err);

struct tstyle {
	double size;      /* font size in units */
	int bold;
	struct rgb col;
	double ax, ay;    /* anchor: 0 left/top, 0.5 centre, 1 right/bottom */
	double angle;     /* radians, counter-clockwise turn is negative (cairo) */
	double max_w;     /* > 0: ellipsize to this width (fit: see below) */
	int mono;         /* DejaVu Sans Mono (command lines) */
	int fit;          /* with max_w: 1 shrinks the text to fit max_w, down
			   * to TT__TEXT_MIN_SHRINK of its size, then wraps it
			   * at word boundaries; never elides.  0 ellipsizes. */
};
/* The smallest share of its size that fitted text is shrunk to before it
 * wraps.  0.7 keeps an 18-unit title at 12.6 and a 13-unit axis title at
 * 9.1 units or more.  Measured with test_chart_fit over every kind at
 * 480x320, font scale 1: only the open-loop charts' y axis titles ('TTFT
 * from the due time', 'Goodput (requests/s meeting SLOs)') reach the floor,
 * and wrap at words there; every title fits on its line shrunk.  The
 * smallest text of all is the heatmap's values (7.70, sized by the heatmap
 * to its cells). */
#define TT__TEXT_MIN_SHRINK 0.7
struct tstyle tt__tstyle_make(double size, int bold, struct rgb col, double ax, double ay);
/* Draw s (plain text, never markup; invalid UTF-8 shown as U+FFFD). */
void tt__cv_text(struct canvas *c, double x, double y, const char *s, const struct tstyle *st);
void tt__cv_measure(struct canvas *c, const char *s, double size, int bold, double *w, double *h);
/* The size s takes when drawn with st (fit, shrink and wrap applied):
 * before a rotation, w along the text. */
void tt__cv_text_size(struct canvas *c, const char *s, const struct tstyle *st, double *w,
		      double *h);

/* Test hook: every text the charts draw (tt__cv_text, tt__cv_paragraph)
 * is reported with its ink extent in device units (output pixels or
 * points), the canvas size in the same units, and whether pango elided
 * it.  NULL turns it off.  Not thread-safe: for tests. */
struct tt__text_record {
	const char *text;
	double x0, y0, x1, y1;  /* ink extent, rotation applied */
	double canvas_w, canvas_h;
	int elided;
	double size;            /* font size drawn, units */
};
typedef void (*tt__text_hook_fn)(const struct tt__text_record *t, void *arg);
void tt__chart_set_text_hook(tt__text_hook_fn fn, void *arg);
/* Wrap s into width w; returns the height used (draws only when draw). */
double tt__cv_paragraph(struct canvas *c, double x, double y, double w, const char *s,
		    const struct tstyle *st, int draw);

void tt__cv_set(struct canvas *c, struct rgb col, double alpha);
void tt__cv_rect(struct canvas *c, double x, double y, double w, double h, struct rgb col);
void tt__cv_line(struct canvas *c, double x0, double y0, double x1, double y1, double width,
	     struct rgb col);
/* Marker shape i (circle, square, triangle, diamond, ...) at x,y.  filled 0
 * draws a white centre: the sign of a point whose cell was not Valid. */
void tt__cv_marker(struct canvas *c, int shape, double x, double y, double r, struct rgb col,
	       int filled);
/* Diagonal hatching over a rectangle (Over capacity). */
void tt__cv_hatch(struct canvas *c, double x, double y, double w, double h, double step,
	      struct rgb col);

/* ---- axes ---------------------------------------------------------- */

enum axis_scale { AXIS_LINEAR = 0, AXIS_LOG2 = 2, AXIS_LOG10 = 10 };
enum axis_unit {
	UNIT_SI = 0,     /* 8K, 1.5M (K = 1000) */
	UNIT_MS = 1,     /* 5 ms, 1.5 s */
	UNIT_TOKENS = 2, /* contexts: 8K = 8192 */
	UNIT_PERCENT = 3,/* value 0..1 shown as 0 %..100 % */
	UNIT_SECONDS = 4,/* 0 s, 30 s */
	UNIT_PLAIN = 5   /* integers as they are: concurrency 1, 2, 128 */
};

#define AXIS_MAX_TICKS 24
struct axis {
	enum axis_scale scale;
	enum axis_unit unit;
	double lo, hi;            /* range shown */
	double p0, p1;            /* screen positions of lo and hi */
	size_t n_ticks;
	double ticks[AXIS_MAX_TICKS];
	size_t n_minor;
	double minor[AXIS_MAX_TICKS * 4];
};

/* Choose a range and round ticks covering [dmin, dmax] (NaN-free). */
void tt__axis_fit(struct axis *a, enum axis_scale s, enum axis_unit u, double dmin, double dmax,
	      int from_zero);
double tt__axis_map(const struct axis *a, double v);
void tt__axis_format(enum axis_unit u, double v, char *buf, size_t len);
/* Value formatting with SI suffixes for tick labels: 8K, 1.5M, 250, 0.5. */
void tt__fmt_si(double v, char *buf, size_t len);
void tt__fmt_tokens(int64_t v, char *buf, size_t len);

/* ---- panels: axes, grid and series in a rectangle ------------------- */

struct series {
	const char *name;
	size_t n;
	const double *x, *y;
	const double *lo, *hi;        /* band (NaN where unknown); NULL: none */
	const unsigned char *hollow;  /* per point: 1 = not a Valid cell; NULL: all valid */
	const unsigned char *flag;    /* per point: 1 = had errors; NULL: none */
	const char *const *labels;    /* per point text (concurrency); NULL: none */
	int colour;                   /* palette index */
	int shape;                    /* marker shape; -1: no markers */
	double line_w;
	int step;                     /* draw as steps (CDF) */
	int dash;                     /* 1: dashed line (told apart without colour) */
};

struct vband {
	double x0, x1;      /* data coordinates */
	const char *label;
};

struct panel {
	struct axis x, y;
	const char *xlabel, *ylabel;
	int show_xticks;              /* 0 for stacked panels above the last */
	const struct series *series;
	size_t n_series;
	const struct vband *band;     /* e.g. the measurement window; may be NULL */
};

/* Draw axes, grid and series into the rectangle; x.p0.. are set from it.
 * Leaves room on the left and bottom for tick labels and titles. */
void tt__panel_layout(struct canvas *c, struct panel *p, double x, double y, double w, double h);
void tt__panel_draw(struct canvas *c, const struct panel *p);

/* Title and subtitle at the top of a chart; returns the height used. */
double tt__chart_header(struct canvas *c, double x, double y, double w, const char *title,
		    const char *subtitle);
/* Legend as a column at the right (never over data); returns the width it
 * needs (draws only when draw). */
struct legend_item {
	const char *text;
	int colour;          /* palette index; -1: ink */
	int shape;           /* -1: line only */
	int kind;            /* 0 line+marker, 1 band swatch, 2 hollow marker, 3 flag,
			      * 4 dashed line (+marker) */
};
double tt__legend_draw(struct canvas *c, double x, double y, const char *title,
		   const struct legend_item *items, size_t n, int draw);
/* The same items in rows across width w (for charts too narrow for a
 * column at the right); returns the height it needs (draws only when
 * draw). */
double tt__legend_flow(struct canvas *c, double x, double y, double w, const char *title,
		       const struct legend_item *items, size_t n, int draw);
/* Where a chart's legend goes: a column at the right (*col_w its width,
 * *row_h 0), or, when that column would take more than 28 % of width w, in
 * rows across the top (*col_w -24, so the usual 'w - col_w - 24' is the
 * whole width, and *row_h their height). */
void tt__legend_place(struct canvas *c, double w, const char *title,
		      const struct legend_item *items, size_t n, double *col_w, double *row_h);
void tt__chart_footnote(struct canvas *c, double x, double y, double w, const char *s);

/* The chart's title facts: "LFM2.5-350M on H200 NVL · vllm 0.26.1". */
void tt__chart_subtitle(const struct tt_manifest *m, char *buf, size_t len);
double tt__chart_dpi_scale(double dpi);

/* Status helpers shared by the kinds. */
int tt__chart_cell_has_value(const struct tt_cell_figures *f);
/* Index in r->opts.quantiles of quantile p, or -1. */
int tt__chart_quantile_index(const struct tt_report *r, double p);

/* Sorted distinct decode contexts and concurrency levels seen in the cells. */
size_t tt__chart_decode_contexts(const struct tt_report *r, int64_t *out, size_t cap);
size_t tt__chart_decode_concurrency(const struct tt_report *r, int *out, size_t cap);
const struct tt_cell_figures *tt__chart_find_cell(const struct tt_report *r, enum tt_phase ph,
					      int64_t context, int concurrency);

struct rgb tt__chart_viridis(double t); /* 0..1 -> colour */

/* What the charts read from raw traces (the timeline's cell, the binned
 * gaps of each cell), kept so that every output of one report reads each
 * trace once.  Bound to one run. */
struct chart_cache;
struct chart_cache *tt__chart_cache_create(struct tt_run *run, size_t n_cells);
void tt__chart_cache_free(struct chart_cache *c);

/* Draw one chart kind into the rectangle (x, y, w, h) of the canvas.
 * cache may be NULL. */
enum tt_code tt__chart_draw(struct canvas *c, double x, double y, double w, double h,
			const struct tt_report *r, struct tt_run *run,
			const struct tt_chart_opts *o, struct chart_cache *cache,
			struct tt_chart_info *info, struct tt_error *err);
/* tt_chart_render with a cache. */
enum tt_code tt__chart_render(const struct tt_report *r, struct tt_run *run,
			  const struct tt_chart_opts *o, struct chart_cache *cache,
			  struct tt_buf *out, struct tt_chart_info *info, struct tt_error *err);
/* The reports with a cache; imgs (may be NULL) holds TT__CHART_SLOTS
 * buffers, at tt__chart_kind_slot of each kind a chart already drawn, in
 * format img_format, SVG or PNG (empty buffer: draw an SVG). */
enum tt_code tt__report_html(const struct tt_report *r, struct tt_run *run,
			 struct chart_cache *cache, const struct tt_buf *imgs,
			 enum tt_chart_format img_format, struct tt_buf *out,
			 struct tt_error *err);
enum tt_code tt__report_pdf(const struct tt_report *r, struct tt_run *run,
			struct chart_cache *cache, struct tt_buf *out, struct tt_error *err);

/* Where decode TTFT goes (chart_ttft_parts.c). */
enum tt_code tt__chart_draw_ttft_parts(struct canvas *c, double x, double y, double w, double h,
				       const struct tt_report *r, struct tt_chart_info *info,
				       struct tt_error *err);
enum tt_code tt__chart_draw_heatmap(struct canvas *c, double x, double y, double w, double h,
				const struct tt_report *r, struct tt_chart_info *info,
				struct tt_error *err);
enum tt_code tt__chart_draw_timeline(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_report *r, struct tt_run *run, long cell,
				 struct chart_cache *cache, struct tt_chart_info *info,
				 struct tt_error *err);
enum tt_code tt__chart_draw_tbt_cdf(struct canvas *c, double x, double y, double w, double h,
				const struct tt_report *r, struct tt_run *run, int concurrency,
				struct chart_cache *cache, struct tt_chart_info *info,
				struct tt_error *err);

/* A dense index for every chart kind: the closed-loop kinds keep theirs
 * (0 .. TT_CHART_KIND_COUNT_ - 1), the open-loop kinds (numbered from 32 in
 * the public enum) follow them.  Arrays held per kind (the report bundle's
 * charts) have TT__CHART_SLOTS entries and are indexed by slot, never by
 * kind.  -1 for a value that is no kind. */
#define TT__CHART_SLOTS (TT_CHART_KIND_COUNT_ + (TT_CHART_RATE_END_ - TT_CHART_RATE_LATENCY))
int tt__chart_kind_slot(enum tt_chart_kind k);

/* Open-loop kinds (chart_rate.c): names, and the drawing. */
const char *tt__chart_rate_name(enum tt_chart_kind k);
const char *tt__chart_rate_about(enum tt_chart_kind k);
const char *tt__chart_rate_title(enum tt_chart_kind k);
int tt__chart_rate_parse(const char *name);
enum tt_code tt__chart_draw_rate(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_report *r, enum tt_chart_kind kind,
				 struct tt_chart_info *info, struct tt_error *err);
/* Fill info from a panel (rectangle and axes in output pixels). */
void tt__chart_info_from_panel(struct tt_chart_info *info, const struct canvas *c,
			   const struct panel *p);

/* ---- report tables, shared by the HTML and PDF reports ---------------- */


/* The report's header facts as key/value pairs (title first). */
struct fact {
	const char *group; /* "Hardware", "Engine", "Run" */
	const char *key;
	char *value;       /* owned */
};
enum tt_code tt__report_facts(const struct tt_report *r, struct fact **out, size_t *n,
			  struct tt_error *err);
void tt__facts_free(struct fact *f, size_t n);
/* The report's title: "Speed test matrix: MODEL on GPU". */
void tt__report_title(const struct tt_report *r, char *buf, size_t len);

/* The charts a report shows, in order, with the options for each. */
size_t tt__report_chart_list(const struct tt_report *r, struct tt_run *run,
			 struct tt_chart_opts *out, size_t cap);

#endif
