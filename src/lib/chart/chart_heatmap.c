/* The decode throughput heatmap: contexts (rows) x concurrency (columns),
 * each cell coloured by total tok/s on a log scale (viridis: colour-blind
 * safe and readable in grey), the value written in it, and its status
 * marked: Over capacity hatched, Requests queued with a corner triangle,
 * errors with a count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"

#define MAX_ROWS 24
#define MAX_COLS 32

static const struct rgb viridis[] = {
	RGB_HEX(0x440154), RGB_HEX(0x482475), RGB_HEX(0x414487), RGB_HEX(0x355F8D),
	RGB_HEX(0x2A788E), RGB_HEX(0x21918C), RGB_HEX(0x22A884), RGB_HEX(0x44BF70),
	RGB_HEX(0x7AD151), RGB_HEX(0xBDDF26), RGB_HEX(0xFDE725),
};

struct rgb tt__chart_viridis(double t)
{
	size_t n = sizeof viridis / sizeof viridis[0];
	double pos;
	size_t i;
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	pos = t * (double)(n - 1);
	i = (size_t)pos;
	if (i >= n - 1)
		return viridis[n - 1];
	pos -= (double)i;
	return (struct rgb){viridis[i].r + (viridis[i + 1].r - viridis[i].r) * pos,
			    viridis[i].g + (viridis[i + 1].g - viridis[i].g) * pos,
			    viridis[i].b + (viridis[i + 1].b - viridis[i].b) * pos};
}

static double luminance(struct rgb c)
{
	return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

static void queued_mark(struct canvas *c, double x, double y, double s)
{
	cairo_t *cr = c->cr;
	cairo_new_path(cr);
	cairo_move_to(cr, x - s, y);
	cairo_line_to(cr, x, y);
	cairo_line_to(cr, x, y + s);
	cairo_close_path(cr);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_fill_preserve(cr);
	cairo_set_line_width(cr, 1.2);
	tt__cv_set(c, tt__chart_ink, 1);
	cairo_stroke(cr);
}

/* The highest concurrency of a context that meets the SLOs (M-goodput):
 * a thick outline inside the cell. */
static void slo_mark(struct canvas *c, double x, double y, double w, double h)
{
	cairo_new_path(c->cr);
	cairo_rectangle(c->cr, x + 2.5, y + 2.5, w - 5, h - 5);
	cairo_set_source_rgb(c->cr, 1, 1, 1);
	cairo_set_line_width(c->cr, 5);
	cairo_stroke_preserve(c->cr);
	tt__cv_set(c, tt__chart_ink, 1);
	cairo_set_line_width(c->cr, 2.5);
	cairo_stroke(c->cr);
}

static void error_mark(struct canvas *c, double x, double y, double r)
{
	struct tstyle st = tt__tstyle_make(r * 1.7, 1, (struct rgb){1, 1, 1}, 0.5, 0.5);
	cairo_new_path(c->cr);
	cairo_arc(c->cr, x, y, r, 0, 2 * M_PI);
	tt__cv_set(c, tt__chart_palette[3], 1);
	cairo_fill_preserve(c->cr);
	cairo_set_source_rgb(c->cr, 1, 1, 1);
	cairo_set_line_width(c->cr, 1.2);
	cairo_stroke(c->cr);
	tt__cv_text(c, x, y, "!", &st);
}

static double colour_t(double v, double vmin, double vmax)
{
	if (!(vmax > vmin))
		return 0.5;
	return (log(v) - log(vmin)) / (log(vmax) - log(vmin));
}

/* A cell's value: "1,819.2", or "1.82K" when the cells are too narrow
 * for the full figure (si). */
static void cell_value(double v, int si, char *buf, size_t len)
{
	if (si)
		tt__fmt_si(v, buf, len);
	else
		tt_fmt_rate(v, buf, len);
}

static void draw_cell(struct canvas *c, const struct tt_cell_figures *f, double cx, double cy,
		      double cw, double ch, double vmin, double vmax, double fs, int line2_ok,
		      int si)
{
	char v[48], line2[96];
	struct tstyle st;
	double th1, th2 = 0;
	int two_lines = ch >= 40;

	if (!f) {
		tt__cv_rect(c, cx, cy, cw, ch, (struct rgb){0.97, 0.97, 0.97});
		return;
	}
	if (!tt__chart_cell_has_value(f)) {
		const char *name = tt_status_name(f->status);
		tt__cv_rect(c, cx, cy, cw, ch, (struct rgb){0.95, 0.95, 0.95});
		if (f->status == TT_STATUS_OVER_CAPACITY)
			tt__cv_hatch(c, cx, cy, cw, ch, 7, (struct rgb){0.78, 0.78, 0.80});
		st = tt__tstyle_make(11, 0, tt__chart_muted, 0.5, 0.5);
		/* "Over capacity" shrinks, then takes two lines when the cell is
		 * narrow: never elided */
		st.max_w = cw - 6;
		st.fit = 1;
		tt__cv_text(c, cx + cw / 2, cy + ch / 2, name, &st);
		return;
	}
	{
		struct rgb fill = tt__chart_viridis(colour_t(f->total_tok_s, vmin, vmax));
		struct rgb ink = luminance(fill) > 0.45 ? tt__chart_ink : (struct rgb){1, 1, 1};
		tt__cv_rect(c, cx, cy, cw, ch, fill);
		cell_value(f->total_tok_s, si, v, sizeof v);
		line2[0] = '\0';
		if (f->errors > 0)
			snprintf(line2, sizeof line2, "%ld error%s", f->errors,
				 f->errors == 1 ? "" : "s");
		else if (f->status != TT_STATUS_VALID && f->status != TT_STATUS_QUEUED)
			snprintf(line2, sizeof line2, "%s", tt_status_name(f->status));
		else if (f->ttft_ms.n > 0 && isfinite(f->ttft_ms.p50)) {
			char ms[32];
			tt_fmt_ms(f->ttft_ms.p50, ms, sizeof ms);
			snprintf(line2, sizeof line2, "%s TTFT", ms);
		}
		if (!line2_ok)
			two_lines = 0;
		tt__cv_measure(c, v, fs, 1, NULL, &th1);
		if (two_lines && line2[0])
			tt__cv_measure(c, line2, fs * 0.75, 0, NULL, &th2);
		/* heat_font chose fs so that the value fits */
		st = tt__tstyle_make(fs, 1, ink, 0.5, 0);
		tt__cv_text(c, cx + cw / 2, cy + (ch - th1 - th2) / 2, v, &st);
		if (two_lines && line2[0]) {
			st = tt__tstyle_make(fs * 0.75, 0, ink, 0.5, 0);
			st.max_w = cw - 6;
			st.fit = 1;
			tt__cv_text(c, cx + cw / 2, cy + (ch - th1 - th2) / 2 + th1, line2, &st);
		}
		if (f->status == TT_STATUS_QUEUED)
			queued_mark(c, cx + cw - 1, cy + 1, fmin(18, ch * 0.4));
		if (f->errors > 0)
			error_mark(c, cx + 9, cy + 9, 7);
	}
}

/* What the parts of the heatmap share: the rows and columns, the colour
 * scale, which status marks appear, and where the grid lies. */
struct heat {
	int64_t ctx[MAX_ROWS];
	int conc[MAX_COLS];
	size_t nr, nc;
	double vmin, vmax;             /* total tok/s of the cells with a value */
	int any_queued, any_over, any_err;
	int any_slo;                   /* some context has a cell meeting the SLOs */
	double gx, gy, gw, gh, cw, ch; /* the grid, and one cell of it */
	double bar_x;                  /* the colour bar's left edge */
	double fs;                     /* font size of the values in the cells */
	int line2_ok;                  /* 0: too small for the TTFT line */
	int si;                        /* values as 1.82K: cells too narrow for 1,819.2 */
	double legend_h;               /* the status legend's height under the grid */
};

/* The colour scale's range and the status marks the legend will need. */
static void heat_scan(const struct tt_report *r, struct heat *hm)
{
	hm->vmin = INFINITY;
	hm->vmax = -INFINITY;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *f = &r->cells[i];
		if (f->phase != TT_PHASE_DECODE)
			continue;
		hm->any_over |= f->status == TT_STATUS_OVER_CAPACITY;
		if (!tt__chart_cell_has_value(f) || !(f->total_tok_s > 0))
			continue;
		hm->any_queued |= f->status == TT_STATUS_QUEUED;
		hm->any_err |= f->errors > 0;
		if (f->total_tok_s < hm->vmin)
			hm->vmin = f->total_tok_s;
		if (f->total_tok_s > hm->vmax)
			hm->vmax = f->total_tok_s;
	}
}

/* Place the grid below a header of height top. */
static void heat_layout(struct canvas *c, double x, double y, double w, double h, double top,
			struct heat *hm)
{
	double left_w = 0, th;
	char buf[64];
	for (size_t i = 0; i < hm->nr; i++) {
		double tw;
		tt__fmt_tokens(hm->ctx[i], buf, sizeof buf);
		tt__cv_measure(c, buf, 13, 1, &tw, NULL);
		if (tw > left_w)
			left_w = tw;
	}
	tt__cv_measure(c, "0", 13, 0, NULL, &th);

	/* Grid with room: row labels and axis title left, column labels and
	 * axis title above, colour bar right, status legend below. */
	hm->gx = x + 20 + th + 10 + left_w + 10;
	hm->gy = y + top + 6 + th + 6 + th + 8;
	hm->bar_x = x + w - 20 - 70;
	hm->gw = hm->bar_x - 24 - hm->gx;
	hm->gh = y + h - 30 - hm->legend_h - hm->gy;
	hm->cw = hm->gw / (double)hm->nc;
	/* the rows fill the height: a grid of few contexts left half the
	 * canvas empty when rows stopped at 90 units */
	hm->ch = hm->gh / (double)hm->nr;
}

/* One font size for every cell, small enough that the widest value
 * and its TTFT line fit: many columns shrink the text, never overlap. */
static void heat_font(struct canvas *c, const struct tt_report *r, struct heat *hm)
{
	double fs = 14, fs2 = 14, cw = hm->cw;
	char buf[64];
	hm->si = 0;
again:
	fs = fs2 = 14;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *f = &r->cells[i];
		double tw;
		if (f->phase != TT_PHASE_DECODE || !tt__chart_cell_has_value(f))
			continue;
		cell_value(f->total_tok_s, hm->si, buf, sizeof buf);
		tt__cv_measure(c, buf, 14, 1, &tw, NULL);
		if (tw > cw - 8)
			fs = fmin(fs, 14 * (cw - 8) / tw);
		if (f->ttft_ms.n > 0 && isfinite(f->ttft_ms.p50)) {
			char ms[32], l2[64];
			tt_fmt_ms(f->ttft_ms.p50, ms, sizeof ms);
			snprintf(l2, sizeof l2, "%s TTFT", ms);
			tt__cv_measure(c, l2, 10.5, 0, &tw, NULL);
			if (tw > cw - 8)
				fs2 = fmin(fs2, 14 * (cw - 8) / tw);
		}
	}
	/* too narrow for the full figure at 8 units: the short form */
	if (fs < 8 && !hm->si) {
		hm->si = 1;
		goto again;
	}
	hm->line2_ok = 1;
	/* the TTFT line goes when it would be too small to read */
	if (fmin(fs, fs2) * 0.75 >= 8)
		fs = fmin(fs, fs2);
	else
		hm->line2_ok = 0;
	hm->fs = fs;
}

/* Axis titles, row and column labels, the cells, and the gaps between. */
static void heat_grid(struct canvas *c, double x, double y, double top,
		      const struct tt_report *r, const struct heat *hm)
{
	double gx = hm->gx, gy = hm->gy, gw = hm->gw, gh = hm->gh, cw = hm->cw, ch = hm->ch;
	struct tstyle st;
	char buf[64];

	st = tt__tstyle_make(13, 0, tt__chart_ink, 0.5, 0);
	tt__cv_text(c, gx + gw / 2, y + top + 6, "Requests at once (concurrency)", &st);
	for (size_t j = 0; j < hm->nc; j++) {
		snprintf(buf, sizeof buf, "%d", hm->conc[j]);
		st = tt__tstyle_make(13, 1, tt__chart_ink, 0.5, 1);
		tt__cv_text(c, gx + cw * ((double)j + 0.5), gy - 5, buf, &st);
	}
	st = tt__tstyle_make(13, 0, tt__chart_ink, 0.5, 0);
	st.angle = -M_PI / 2;
	tt__cv_text(c, x + 20, gy + gh / 2, "Context", &st);
	for (size_t i = 0; i < hm->nr; i++) {
		tt__fmt_tokens(hm->ctx[i], buf, sizeof buf);
		st = tt__tstyle_make(13, 1, tt__chart_ink, 1, 0.5);
		tt__cv_text(c, gx - 8, gy + ch * ((double)i + 0.5), buf, &st);
		for (size_t j = 0; j < hm->nc; j++) {
			const struct tt_cell_figures *f =
				tt__chart_find_cell(r, TT_PHASE_DECODE, hm->ctx[i], hm->conc[j]);
			draw_cell(c, f, gx + cw * (double)j, gy + ch * (double)i, cw, ch, hm->vmin,
				  hm->vmax, hm->fs, hm->line2_ok, hm->si);
		}
	}
	/* White gaps between cells drawn over the fills keep cells apart
	 * without shrinking them by rounding. */
	for (size_t j = 1; j < hm->nc; j++)
		tt__cv_line(c, gx + cw * (double)j, gy, gx + cw * (double)j, gy + gh, 2,
			(struct rgb){1, 1, 1});
	for (size_t i = 1; i < hm->nr; i++)
		tt__cv_line(c, gx, gy + ch * (double)i, gx + gw, gy + ch * (double)i, 2,
			(struct rgb){1, 1, 1});
	for (size_t i = 0; i < hm->nr; i++) {
		int best = tt_report_slo_max_concurrency(r, hm->ctx[i]);
		for (size_t j = 0; best > 0 && j < hm->nc; j++)
			if (hm->conc[j] == best)
				slo_mark(c, gx + cw * (double)j, gy + ch * (double)i, cw, ch);
	}
}

/* Colour bar: the log scale of the fills, ticks at 1-2-5 values. */
static void heat_colour_bar(struct canvas *c, const struct heat *hm)
{
	struct axis a;
	double bh = hm->gh, by = hm->gy, bar_x = hm->bar_x, vmin = hm->vmin, vmax = hm->vmax;
	int steps = 64;
	struct tstyle st;
	char buf[64];
	memset(&a, 0, sizeof a);
	for (int k = 0; k < steps; k++) {
		double t0 = (double)k / steps;
		tt__cv_rect(c, bar_x, by + bh * (1 - t0 - 1.0 / steps), 14, bh / steps + 0.6,
			tt__chart_viridis(t0 + 0.5 / steps));
	}
	a.p0 = by + bh;
	a.p1 = by;
	tt__axis_fit(&a, AXIS_LOG10, UNIT_SI, vmin, vmax, 0);
	a.lo = vmin;
	a.hi = vmax > vmin ? vmax : vmin * 1.0001;
	st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0.5);
	for (size_t k = 0; k < a.n_ticks; k++) {
		double yy;
		if (a.ticks[k] < vmin || a.ticks[k] > vmax)
			continue;
		yy = tt__axis_map(&a, a.ticks[k]);
		tt__cv_line(c, bar_x + 14, yy, bar_x + 18, yy, 1, tt__chart_muted);
		tt__fmt_si(a.ticks[k], buf, sizeof buf);
		tt__cv_text(c, bar_x + 21, yy, buf, &st);
	}
	st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 1);
	tt__cv_text(c, bar_x, by - 4, "tok/s", &st);
}

/* Status legend under the grid: only the marks that appear.  Items flow
 * left to right and wrap, never past the right edge (right).  Returns the
 * height of its lines below ly; draws only when draw. */
static double heat_legend(struct canvas *c, double right, double ly, const struct heat *hm,
			  int draw)
{
	static const char *const texts[] = {
		"Total output tok/s (median TTFT below).", "Requests queued",
		"requests failed", "Over capacity: not run (KV cache too small)",
		"Highest concurrency meeting the SLOs"};
	int shown[5];
	double gx = hm->gx, lx = gx, y0 = ly, th;
	int line2_ok = hm->line2_ok;
	struct tstyle st;
	shown[0] = 1;
	shown[1] = hm->any_queued;
	shown[2] = hm->any_err;
	shown[3] = hm->any_over;
	shown[4] = hm->any_slo;
	st = tt__tstyle_make(11.5, 0, tt__chart_muted, 0, 0.5);
	tt__cv_measure(c, "0", 11.5, 0, NULL, &th);
	th = fmax(th, 14);
	for (int k = 0; k < 5; k++) {
		double tw, iw, tx;
		const char *text = k == 0 && !line2_ok ? "Total output tok/s." : texts[k];
		if (!shown[k])
			continue;
		tt__cv_measure(c, text, 11.5, 0, &tw, NULL);
		iw = (k == 0 ? 0 : 24) + tw;
		if (lx > gx && lx + iw > right) {
			lx = gx;
			ly += th + 4;
		}
		tx = lx + (k == 0 ? 0 : 24);
		/* an item wider than the line wraps within it */
		st.max_w = right - tx;
		st.fit = 1;
		if (draw) {
			if (k == 1)
				queued_mark(c, lx + 14, ly, 12);
			else if (k == 2)
				error_mark(c, lx + 8, ly + 6, 6);
			else if (k == 3) {
				tt__cv_rect(c, lx, ly, 18, 12, (struct rgb){0.95, 0.95, 0.95});
				tt__cv_hatch(c, lx, ly, 18, 12, 5, (struct rgb){0.7, 0.7, 0.72});
			} else if (k == 4) {
				tt__cv_rect(c, lx, ly - 1, 18, 14, (struct rgb){0.8, 0.85, 0.6});
				slo_mark(c, lx - 2, ly - 3, 22, 18);
			}
		}
		{
			double ih;
			tt__cv_text_size(c, text, &st, &tw, &ih);
			if (draw) {
				st.ay = 0;
				tt__cv_text(c, tx, ly + 6 - fmin(ih, th) / 2, text, &st);
				st.ay = 0.5;
			}
			if (ih > th + 1)
				ly += ih - th;
			iw = (k == 0 ? 0 : 24) + tw;
		}
		lx += iw + 20;
	}
	return ly - y0 + th;
}

enum tt_code tt__chart_draw_heatmap(struct canvas *c, double x, double y, double w, double h,
				const struct tt_report *r, struct tt_chart_info *info,
				struct tt_error *err)
{
	struct heat hm;
	double top;
	char sub[600];

	memset(&hm, 0, sizeof hm);
	hm.nr = tt__chart_decode_contexts(r, hm.ctx, MAX_ROWS);
	hm.nc = tt__chart_decode_concurrency(r, hm.conc, MAX_COLS);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, tt__chart_kind_title(TT_CHART_HEATMAP), sub);
	if (hm.nr == 0 || hm.nc == 0) {
		struct tstyle st = tt__tstyle_make(15, 0, tt__chart_muted, 0.5, 0.5);
		tt__cv_text(c, x + w / 2, y + h / 2, "No decode cells in this run.", &st);
		return tt__canvas_check(c, "the heatmap", err);
	}
	heat_scan(r, &hm);
	for (size_t i = 0; i < hm.nr; i++)
		hm.any_slo |= tt_report_slo_max_concurrency(r, hm.ctx[i]) > 0;
	/* the legend's lines first (its width is the grid's), then the grid
	 * above it; the TTFT line is assumed, as heat_font usually keeps it */
	hm.line2_ok = 1;
	heat_layout(c, x, y, w, h, top, &hm);
	hm.legend_h = heat_legend(c, x + w - 20, 0, &hm, 0);
	heat_layout(c, x, y, w, h, top, &hm);
	heat_font(c, r, &hm);
	heat_grid(c, x, y, top, r, &hm);
	if (isfinite(hm.vmin))
		heat_colour_bar(c, &hm);
	heat_legend(c, x + w - 20, hm.gy + hm.gh + 14, &hm, 1);
	if (info) {
		info->plot_x = hm.gx * c->scale;
		info->plot_y = hm.gy * c->scale;
		info->plot_w = hm.gw * c->scale;
		info->plot_h = hm.gh * c->scale;
		info->rows = hm.nr;
		info->cols = hm.nc;
		info->x_lo = hm.vmin;
		info->x_hi = hm.vmax;
		info->image_w = c->w * c->scale;
		info->image_h = c->h * c->scale;
	}
	return tt__canvas_check(c, "the heatmap", err);
}
