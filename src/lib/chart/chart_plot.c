/* Panels (axes, grid, series), chart headers, legends and footnotes: the
 * furniture every chart kind shares.  Legends sit outside the plot area so
 * they never cover data; point labels are placed where they collide with
 * nothing already drawn, or left out. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart/chart_impl.h"
#include "text/render_impl.h"

#define TICK_FONT 12.0
#define LABEL_FONT 13.0
#define POINT_FONT 10.5

static double ylabel_room(struct canvas *c, const struct panel *p)
{
	double wmax = 0;
	char buf[48];
	for (size_t i = 0; i < p->y.n_ticks; i++) {
		double w;
		tt__axis_format(p->y.unit, p->y.ticks[i], buf, sizeof buf);
		tt__cv_measure(c, buf, TICK_FONT, 0, &w, NULL);
		if (w > wmax)
			wmax = w;
	}
	return wmax;
}

void tt__panel_layout(struct canvas *c, struct panel *p, double x, double y, double w, double h)
{
	double th;
	double left = ylabel_room(c, p) + 10;
	double bottom = 6;
	tt__cv_measure(c, "0", TICK_FONT, 0, NULL, &th);
	if (p->ylabel)
		left += th + 8;
	if (p->show_xticks)
		bottom += th + 6;
	if (p->xlabel && p->show_xticks)
		bottom += th + 6;
	p->x.p0 = x + left;
	p->x.p1 = x + w - 12;
	p->y.p0 = y + h - bottom;
	p->y.p1 = y + 4;
}

static int overlaps(const double *r, const double (*placed)[4], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[0] < placed[i][2] && placed[i][0] < r[2] && r[1] < placed[i][3] &&
		    placed[i][1] < r[3])
			return 1;
	return 0;
}

static void draw_grid_and_ticks(struct canvas *c, const struct panel *p)
{
	char buf[48];
	double x0 = p->x.p0, x1 = p->x.p1, y0 = p->y.p0, y1 = p->y.p1;
	struct tstyle tick = tt__tstyle_make(TICK_FONT, 0, tt__chart_muted, 1, 0.5);

	for (size_t i = 0; i < p->y.n_minor; i++) {
		double yy = tt__axis_map(&p->y, p->y.minor[i]);
		tt__cv_line(c, x0, yy, x1, yy, 0.5, (struct rgb){0.95, 0.95, 0.96});
	}
	/* y labels: every k-th when a short panel would stack them on top of
	 * each other (grid lines for all) */
	{
		size_t k = 1;
		double th, spacing = 1e9;
		tt__cv_measure(c, "0", TICK_FONT, 0, NULL, &th);
		for (size_t i = 1; i < p->y.n_ticks; i++) {
			double d = fabs(tt__axis_map(&p->y, p->y.ticks[i]) -
					tt__axis_map(&p->y, p->y.ticks[i - 1]));
			if (d < spacing)
				spacing = d;
		}
		while (k < p->y.n_ticks && spacing * k < th * 0.8)
			k++;
		for (size_t i = 0; i < p->y.n_ticks; i++) {
			double yy = tt__axis_map(&p->y, p->y.ticks[i]);
			if (yy < y1 - 0.5 || yy > y0 + 0.5)
				continue;
			tt__cv_line(c, x0, yy, x1, yy, 1.0, tt__chart_grid);
			if (i % k != 0)
				continue;
			tt__axis_format(p->y.unit, p->y.ticks[i], buf, sizeof buf);
			tt__cv_text(c, x0 - 7, yy, buf, &tick);
		}
	}
	/* x labels: keep every k-th so neighbours never touch. */
	{
		size_t k = 1;
		double widest = 0, spacing = 1e9;
		for (size_t i = 0; i < p->x.n_ticks; i++) {
			double w;
			tt__axis_format(p->x.unit, p->x.ticks[i], buf, sizeof buf);
			tt__cv_measure(c, buf, TICK_FONT, 0, &w, NULL);
			if (w > widest)
				widest = w;
			if (i > 0) {
				double d = fabs(tt__axis_map(&p->x, p->x.ticks[i]) -
						tt__axis_map(&p->x, p->x.ticks[i - 1]));
				if (d < spacing)
					spacing = d;
			}
		}
		while (k < p->x.n_ticks && spacing * k < widest + 10)
			k++;
		tick.ax = 0.5;
		tick.ay = 0;
		for (size_t i = 0; i < p->x.n_ticks; i++) {
			double xx = tt__axis_map(&p->x, p->x.ticks[i]);
			if (xx < x0 - 0.5 || xx > x1 + 0.5)
				continue;
			tt__cv_line(c, xx, y0, xx, y1, 1.0, tt__chart_grid);
			tt__cv_line(c, xx, y0, xx, y0 + 4, 1.0, tt__chart_muted);
			if (p->show_xticks && i % k == 0) {
				/* the last label stays inside the panel's right edge */
				double tw;
				tt__axis_format(p->x.unit, p->x.ticks[i], buf, sizeof buf);
				tt__cv_measure(c, buf, TICK_FONT, 0, &tw, NULL);
				tt__cv_text(c, fmin(xx, x1 + 12 - tw / 2), y0 + 6, buf, &tick);
			}
		}
	}
	tt__cv_line(c, x0, y0, x1, y0, 1.2, tt__chart_muted);
	tt__cv_line(c, x0, y0, x0, y1, 1.2, tt__chart_muted);
}

static void draw_axis_titles(struct canvas *c, const struct panel *p)
{
	double th;
	tt__cv_measure(c, "0", TICK_FONT, 0, NULL, &th);
	if (p->xlabel && p->show_xticks) {
		/* centred under the plot, moved right when it would pass the
		 * panel's left edge; shrunk to the panel's width */
		struct tstyle st = tt__tstyle_make(LABEL_FONT, 0, tt__chart_ink, 0.5, 0);
		double left = p->x.p0 - (ylabel_room(c, p) + 10 + (p->ylabel ? th + 8 : 0));
		double tw, cx = (p->x.p0 + p->x.p1) / 2;
		st.max_w = p->x.p1 - left;
		st.fit = 1;
		tt__cv_text_size(c, p->xlabel, &st, &tw, NULL);
		if (cx - tw / 2 < left)
			cx = left + tw / 2;
		tt__cv_text(c, cx, p->y.p0 + th + 12, p->xlabel, &st);
	}
	if (p->ylabel) {
		struct tstyle st = tt__tstyle_make(LABEL_FONT, 0, tt__chart_ink, 0.5, 0);
		double left = ylabel_room(c, p) + 10 + th + 8;
		st.angle = -M_PI / 2;
		st.max_w = p->y.p0 - p->y.p1;
		st.fit = 1; /* shrinks, never elided */
		tt__cv_text(c, p->x.p0 - left, (p->y.p0 + p->y.p1) / 2, p->ylabel, &st);
	}
}

static void draw_band(struct canvas *c, const struct panel *p, const struct series *s)
{
	cairo_t *cr = c->cr;
	size_t i = 0;
	/* One filled polygon per run of points with both ends known. */
	while (i < s->n) {
		size_t a, b;
		while (i < s->n && !(isfinite(s->lo[i]) && isfinite(s->hi[i]) && isfinite(s->x[i])))
			i++;
		a = i;
		while (i < s->n && isfinite(s->lo[i]) && isfinite(s->hi[i]) && isfinite(s->x[i]))
			i++;
		b = i;
		if (b - a < 2)
			continue;
		cairo_new_path(cr);
		for (size_t j = a; j < b; j++)
			cairo_line_to(cr, tt__axis_map(&p->x, s->x[j]), tt__axis_map(&p->y, s->hi[j]));
		for (size_t j = b; j-- > a;)
			cairo_line_to(cr, tt__axis_map(&p->x, s->x[j]), tt__axis_map(&p->y, s->lo[j]));
		cairo_close_path(cr);
		tt__cv_set(c, tt__chart_palette[s->colour % CHART_N_COLOURS], 0.16);
		cairo_fill(cr);
	}
}

static void draw_line(struct canvas *c, const struct panel *p, const struct series *s)
{
	cairo_t *cr = c->cr;
	int pen = 0;
	cairo_new_path(cr);
	for (size_t i = 0; i < s->n; i++) {
		double xx, yy;
		if (!isfinite(s->x[i]) || !isfinite(s->y[i])) {
			pen = 0;
			continue;
		}
		xx = tt__axis_map(&p->x, s->x[i]);
		yy = tt__axis_map(&p->y, s->y[i]);
		if (!isfinite(xx) || !isfinite(yy)) {
			pen = 0;
			continue;
		}
		if (pen && s->step) {
			double prev_y;
			cairo_get_current_point(cr, NULL, &prev_y);
			cairo_line_to(cr, xx, prev_y);
		}
		if (pen)
			cairo_line_to(cr, xx, yy);
		else
			cairo_move_to(cr, xx, yy);
		pen = 1;
	}
	cairo_set_line_width(cr, s->line_w > 0 ? s->line_w : 2.2);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	cairo_set_line_cap(cr, s->dash ? CAIRO_LINE_CAP_BUTT : CAIRO_LINE_CAP_ROUND);
	if (s->dash) {
		static const double dash[] = {6, 3.5};
		cairo_set_dash(cr, dash, 2, 0);
	}
	tt__cv_set(c, tt__chart_palette[s->colour % CHART_N_COLOURS], 1);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
}

void tt__panel_draw(struct canvas *c, const struct panel *p)
{
	cairo_t *cr = c->cr;
	double (*placed)[4] = NULL;
	size_t n_placed = 0, cap = 0;

	if (p->band) {
		double a = tt__axis_map(&p->x, p->band->x0), b = tt__axis_map(&p->x, p->band->x1);
		if (a < p->x.p0)
			a = p->x.p0;
		if (b > p->x.p1)
			b = p->x.p1;
		if (b > a) {
			tt__cv_rect(c, a, p->y.p1, b - a, p->y.p0 - p->y.p1, (struct rgb){0.93, 0.95, 0.98});
		}
	}
	draw_grid_and_ticks(c, p);
	draw_axis_titles(c, p);
	if (p->band) {
		double a = tt__axis_map(&p->x, p->band->x0), b = tt__axis_map(&p->x, p->band->x1);
		cairo_save(cr);
		{
			static const double dash[] = {4, 3};
			cairo_set_dash(cr, dash, 2, 0);
		}
		if (a >= p->x.p0 && a <= p->x.p1)
			tt__cv_line(c, a, p->y.p0, a, p->y.p1, 1.2, tt__chart_muted);
		if (b >= p->x.p0 && b <= p->x.p1)
			tt__cv_line(c, b, p->y.p0, b, p->y.p1, 1.2, tt__chart_muted);
		cairo_restore(cr);
		if (p->band->label && b > a) {
			struct tstyle st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
			st.max_w = b - a - 8;
			st.fit = 1; /* a narrow band shrinks or wraps its label */
			if (st.max_w > 20)
				tt__cv_text(c, a + 4, p->y.p1 + 2, p->band->label, &st);
		}
	}

	cairo_save(cr);
	/* Markers may poke out of the plot a little; lines and bands may not. */
	cairo_rectangle(cr, p->x.p0 - 8, p->y.p1 - 8, p->x.p1 - p->x.p0 + 16,
			p->y.p0 - p->y.p1 + 16);
	cairo_clip(cr);
	for (size_t k = 0; k < p->n_series; k++)
		if (p->series[k].lo && p->series[k].hi)
			draw_band(c, p, &p->series[k]);
	for (size_t k = 0; k < p->n_series; k++)
		draw_line(c, p, &p->series[k]);

	for (size_t k = 0; k < p->n_series; k++) {
		const struct series *s = &p->series[k];
		struct rgb col = tt__chart_palette[s->colour % CHART_N_COLOURS];
		if (s->shape < 0)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			double xx = tt__axis_map(&p->x, s->x[i]), yy = tt__axis_map(&p->y, s->y[i]);
			if (!isfinite(xx) || !isfinite(yy))
				continue;
			if (s->flag && s->flag[i]) {
				cairo_new_path(cr);
				cairo_arc(cr, xx, yy, 8.5, 0, 2 * M_PI);
				cairo_set_line_width(cr, 1.6);
				tt__cv_set(c, tt__chart_ink, 1);
				cairo_stroke(cr);
			}
			tt__cv_marker(c, s->shape, xx, yy, 4.2, col, !(s->hollow && s->hollow[i]));
			if (n_placed == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				void *np = g_try_realloc(placed, ncap * sizeof *placed);
				if (!np)
					continue;
				placed = np;
				cap = ncap;
			}
			placed[n_placed][0] = xx - 5;
			placed[n_placed][1] = yy - 5;
			placed[n_placed][2] = xx + 5;
			placed[n_placed][3] = yy + 5;
			n_placed++;
		}
	}
	cairo_restore(cr);

	/* Point labels last, so they can avoid every marker. */
	for (size_t k = 0; k < p->n_series; k++) {
		const struct series *s = &p->series[k];
		if (!s->labels)
			continue;
		for (size_t i = 0; i < s->n; i++) {
			static const double off[4][4] = {
				{6, -6, 0, 1}, {6, 6, 0, 0}, {-6, -6, 1, 1}, {-6, 6, 1, 0}};
			double xx = tt__axis_map(&p->x, s->x[i]), yy = tt__axis_map(&p->y, s->y[i]);
			double tw, th;
			if (!s->labels[i] || !isfinite(xx) || !isfinite(yy))
				continue;
			tt__cv_measure(c, s->labels[i], POINT_FONT, 0, &tw, &th);
			for (int j = 0; j < 4; j++) {
				double r[4];
				r[0] = xx + off[j][0] - off[j][2] * tw;
				r[1] = yy + off[j][1] - off[j][3] * th;
				r[2] = r[0] + tw;
				r[3] = r[1] + th;
				if (r[0] < p->x.p0 || r[2] > p->x.p1 || r[1] < p->y.p1 ||
				    r[3] > p->y.p0 || overlaps(r, (const double(*)[4])placed, n_placed))
					continue;
				{
					struct tstyle st = tt__tstyle_make(POINT_FONT, 0, tt__chart_muted,
								       0, 0);
					tt__cv_text(c, r[0], r[1], s->labels[i], &st);
				}
				if (n_placed == cap) {
					size_t ncap = cap ? cap * 2 : 64;
					void *np = g_try_realloc(placed, ncap * sizeof *placed);
					if (!np)
						break;
					placed = np;
					cap = ncap;
				}
				memcpy(placed[n_placed++], r, sizeof r);
				break;
			}
		}
	}
	g_free(placed);
}

double tt__chart_header(struct canvas *c, double x, double y, double w, const char *title,
		    const char *subtitle)
{
	double h1 = 0, h2 = 0;
	struct tstyle st = tt__tstyle_make(18, 1, tt__chart_ink, 0, 0);
	if (c->no_title)
		return 0;
	/* titles shrink, then wrap: never elided */
	st.max_w = w;
	st.fit = 1;
	tt__cv_text_size(c, title, &st, NULL, &h1);
	tt__cv_text(c, x, y, title, &st);
	if (subtitle && *subtitle) {
		st = tt__tstyle_make(13, 0, tt__chart_muted, 0, 0);
		st.max_w = w;
		st.fit = 1;
		tt__cv_text_size(c, subtitle, &st, NULL, &h2);
		tt__cv_text(c, x, y + h1 + 2, subtitle, &st);
		h2 += 2;
	}
	return h1 + h2 + 20;
}

/* One item's swatch, 26 units wide, centred on cy. */
static void legend_swatch(struct canvas *c, double x, double cy, const struct legend_item *it)
{
	struct rgb col = it->colour >= 0 ? tt__chart_palette[it->colour % CHART_N_COLOURS]
					 : tt__chart_ink;
	switch (it->kind) {
	case 1:
		tt__cv_set(c, col, 0.16);
		cairo_rectangle(c->cr, x, cy - 6, 26, 12);
		cairo_fill(c->cr);
		tt__cv_line(c, x, cy, x + 26, cy, 2.2, col);
		break;
	case 2:
		tt__cv_marker(c, it->shape < 0 ? 0 : it->shape, x + 13, cy, 4.2, col, 0);
		break;
	case 3:
		cairo_new_path(c->cr);
		cairo_arc(c->cr, x + 13, cy, 8, 0, 2 * M_PI);
		cairo_set_line_width(c->cr, 1.6);
		tt__cv_set(c, tt__chart_ink, 1);
		cairo_stroke(c->cr);
		tt__cv_marker(c, 0, x + 13, cy, 4.2, tt__chart_muted, 1);
		break;
	case 4: {
		static const double dash[] = {6, 3.5};
		cairo_save(c->cr);
		cairo_set_dash(c->cr, dash, 2, 0);
		cairo_set_line_cap(c->cr, CAIRO_LINE_CAP_BUTT);
		tt__cv_line(c, x, cy, x + 26, cy, 2.2, col);
		cairo_restore(c->cr);
		if (it->shape >= 0)
			tt__cv_marker(c, it->shape, x + 13, cy, 4.2, col, 1);
		break;
	}
	default:
		tt__cv_line(c, x, cy, x + 26, cy, 2.2, col);
		if (it->shape >= 0)
			tt__cv_marker(c, it->shape, x + 13, cy, 4.2, col, 1);
		break;
	}
}

double tt__legend_draw(struct canvas *c, double x, double y, const char *title,
		   const struct legend_item *items, size_t n, int draw)
{
	double wmax = 0, th, line, yy = y;
	tt__cv_measure(c, "0", 12, 0, NULL, &th);
	line = fmax(20, th + 6); /* 20 at font scale 1 */
	if (title) {
		tt__cv_measure(c, title, 12.5, 1, &wmax, &th);
		if (draw) {
			struct tstyle st = tt__tstyle_make(12.5, 1, tt__chart_ink, 0, 0);
			tt__cv_text(c, x, yy, title, &st);
		}
		yy += th + 6;
	}
	for (size_t i = 0; i < n; i++) {
		double tw;
		tt__cv_measure(c, items[i].text, 12, 0, &tw, &th);
		if (tw + 34 > wmax)
			wmax = tw + 34;
		if (draw) {
			struct tstyle st = tt__tstyle_make(12, 0, tt__chart_ink, 0, 0.5);
			double cy = yy + line / 2;
			legend_swatch(c, x, cy, &items[i]);
			tt__cv_text(c, x + 34, cy, items[i].text, &st);
		}
		yy += line;
	}
	return wmax;
}

double tt__legend_flow(struct canvas *c, double x, double y, double w, const char *title,
		       const struct legend_item *items, size_t n, int draw)
{
	double th, line, lx = x, yy = y;
	tt__cv_measure(c, "0", 12, 0, NULL, &th);
	line = fmax(20, th + 6);
	if (title) {
		double tw;
		struct tstyle st = tt__tstyle_make(12.5, 1, tt__chart_ink, 0, 0.5);
		tt__cv_measure(c, title, 12.5, 1, &tw, NULL);
		if (draw)
			tt__cv_text(c, lx, yy + line / 2, title, &st);
		lx += tw + 12;
	}
	for (size_t i = 0; i < n; i++) {
		double tw, iw;
		struct tstyle st = tt__tstyle_make(12, 0, tt__chart_ink, 0, 0.5);
		tt__cv_measure(c, items[i].text, 12, 0, &tw, NULL);
		iw = 34 + tw;
		if (lx > x && lx + iw > x + w) {
			lx = x;
			yy += line;
		}
		/* an item wider than the whole width shrinks or wraps */
		st.max_w = x + w - lx - 34;
		st.fit = 1;
		if (draw) {
			legend_swatch(c, lx, yy + line / 2, &items[i]);
			tt__cv_text(c, lx + 34, yy + line / 2, items[i].text, &st);
		}
		lx += iw + 16;
	}
	return n ? yy - y + line : 0;
}

void tt__legend_place(struct canvas *c, double w, const char *title,
		      const struct legend_item *items, size_t n, double *col_w, double *row_h)
{
	*col_w = tt__legend_draw(c, 0, 0, title, items, n, 0);
	*row_h = 0;
	/* at 480 units a 150-unit column left the plot 250 */
	if (*col_w > 0.28 * w) {
		*row_h = tt__legend_flow(c, 0, 0, w - 40, title, items, n, 0) + 8;
		*col_w = -24;
	}
}

void tt__chart_footnote(struct canvas *c, double x, double y, double w, const char *s)
{
	struct tstyle st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
	tt__cv_paragraph(c, x, y, w, s, &st, 1);
}

void tt__chart_info_from_panel(struct tt_chart_info *info, const struct canvas *c,
			   const struct panel *p)
{
	if (!info)
		return;
	info->plot_x = p->x.p0 * c->scale;
	info->plot_y = p->y.p1 * c->scale;
	info->plot_w = (p->x.p1 - p->x.p0) * c->scale;
	info->plot_h = (p->y.p0 - p->y.p1) * c->scale;
	info->x_lo = p->x.lo;
	info->x_hi = p->x.hi;
	info->y_lo = p->y.lo;
	info->y_hi = p->y.hi;
	info->x_scale = (int)p->x.scale;
	info->y_scale = (int)p->y.scale;
	info->image_w = c->w * c->scale;
	info->image_h = c->h * c->scale;
}

static const char *note_of(const struct tt_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n_notes; i++)
		if (m->notes[i].key && m->notes[i].value && strcmp(m->notes[i].key, key) == 0 &&
		    *m->notes[i].value)
			return m->notes[i].value;
	return NULL;
}

/* "LiquidAI/LFM2.5-350M" reads "LFM2.5-350M" in a title, as in the seed
 * report; anything that is not a plain org/name id is shown whole. */
static const char *short_model(const char *model)
{
	const char *slash = strchr(model, '/');
	if (!slash || !slash[1] || strchr(slash + 1, '/') || strpbrk(model, " \t<>\"'"))
		return model;
	return slash + 1;
}

void tt__chart_subtitle(const struct tt_manifest *m, char *buf, size_t len)
{
	const char *model = note_of(m, "model_name");
	if (!model)
		model = m->model && *m->model ? m->model
			: m->served_model && *m->served_model ? m->served_model
							      : "unknown model";
	model = short_model(model);
	const char *gpu = note_of(m, "gpu");
	const char *quant = note_of(m, "quantization");
	size_t n;
	n = (size_t)snprintf(buf, len, "%s", model);
	if (gpu && n < len)
		n += (size_t)snprintf(buf + n, len - n, " on %s", gpu);
	if (m->engine && *m->engine && n < len)
		n += (size_t)snprintf(buf + n, len - n, " · %s", m->engine);
	if (m->engine_version && *m->engine_version && n < len)
		n += (size_t)snprintf(buf + n, len - n, " %s", m->engine_version);
	if (quant && n < len)
		snprintf(buf + n, len - n, " · %s", quant);
}

int tt__chart_cell_has_value(const struct tt_cell_figures *f)
{
	return f->status != TT_STATUS_OVER_CAPACITY && f->status != TT_STATUS_NOT_RUN &&
	       isfinite(f->total_tok_s);
}

int tt__chart_quantile_index(const struct tt_report *r, double p)
{
	size_t n = r->opts.n_quantiles;
	if (n > TT_MAX_QUANTILES)
		n = TT_MAX_QUANTILES;
	for (size_t i = 0; i < n; i++)
		if (fabs(r->opts.quantiles[i] - p) < 1e-9)
			return (int)i;
	return -1;
}

size_t tt__chart_decode_contexts(const struct tt_report *r, int64_t *out, size_t cap)
{
	return tt__render_distinct(r, TT_PHASE_DECODE, 0, out, cap);
}

size_t tt__chart_decode_concurrency(const struct tt_report *r, int *out, size_t cap)
{
	int64_t v[256];
	size_t n = tt__render_distinct(r, TT_PHASE_DECODE, 1, v, cap < 256 ? cap : 256);

	for (size_t i = 0; i < n; i++)
		out[i] = (int)v[i];
	return n;
}

const struct tt_cell_figures *tt__chart_find_cell(const struct tt_report *r, enum tt_phase ph,
					      int64_t context, int concurrency)
{
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *f = &r->cells[i];
		if (f->phase == ph && f->context == context &&
		    (ph == TT_PHASE_PREFILL || f->concurrency == concurrency))
			return f;
	}
	return NULL;
}
