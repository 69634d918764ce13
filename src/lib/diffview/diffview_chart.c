/* A diff's charts, drawn with the chart module's canvas, axes and panels:
 * the heatmap of change (a diverging palette, muted where nothing
 * significant changed, status changes marked), both sides' curves overlaid,
 * prefill side by side, and one cell's time between tokens overlaid. */
#include "diffview/diffview_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "diff/diff_impl.h"
#include "tokentrace/units.h"

#define MAX_CTX 24
#define MAX_CONC 32

static const struct {
	const char *name, *title, *about;
} kinds[TT_DIFF_CHART_KIND_COUNT_] = {
	{"heatmap", "Change by cell",
	 "change of one figure per context and concurrency: faster purple, slower orange, pale "
	 "where no significant change"},
	{"throughput", "Total output tok/s, base and candidate",
	 "total tok/s against concurrency per context, both sides overlaid"},
	{"per-request", "Per-request tok/s, base and candidate",
	 "median per request tok/s against concurrency, both sides overlaid"},
	{"tradeoff", "Per-request speed against total throughput, base and candidate",
	 "per request tok/s against total tok/s, both sides overlaid"},
	{"ttft", "Time to first token, base and candidate",
	 "median TTFT against concurrency, both sides overlaid"},
	{"prefill", "Prefill prompt tok/s, base and candidate",
	 "prompt tok/s of the prefill rows by context, side by side"},
	{"tbt-cdf", "Time between tokens of one cell, base and candidate",
	 "the distribution of time between tokens of one cell, both sides overlaid"},
};

const char *tt_diff_chart_kind_name(enum tt_diff_chart_kind k)
{
	return (unsigned)k < TT_DIFF_CHART_KIND_COUNT_ ? kinds[k].name : NULL;
}

int tt_diff_chart_kind_parse(const char *name)
{
	for (int k = 0; k < TT_DIFF_CHART_KIND_COUNT_; k++)
		if (!strcmp(name, kinds[k].name))
			return k;
	return -1;
}

const char *tt__diff_chart_title(enum tt_diff_chart_kind k)
{
	return (unsigned)k < TT_DIFF_CHART_KIND_COUNT_ ? kinds[k].title : "";
}

const char *tt__diff_chart_about(enum tt_diff_chart_kind k)
{
	return (unsigned)k < TT_DIFF_CHART_KIND_COUNT_ ? kinds[k].about : "";
}

void tt_diff_chart_opts_init(struct tt_diff_chart_opts *o)
{
	memset(o, 0, sizeof *o);
	o->kind = TT_DIFF_CHART_HEATMAP;
	o->format = TT_CHART_SVG;
	o->figure = TT_DIFF_TOTAL;
}

/* ---- shared ------------------------------------------------------------- */

static void subtitle(const struct tt_diff *d, char *buf, size_t len)
{
	const struct tt_report *b = tt_diff_side_report(d->base, 0);
	const struct tt_report *c = tt_diff_side_report(d->cand, 0);
	const struct tt_manifest *mb = &b->manifest, *mc = &c->manifest;
	size_t nb = tt_diff_side_runs(d->base), nc = tt_diff_side_runs(d->cand);
	char rb[32] = "", rc[32] = "";

	if (nb > 1)
		snprintf(rb, sizeof rb, " (%zu runs)", nb);
	if (nc > 1)
		snprintf(rc, sizeof rc, " (%zu runs)", nc);
	snprintf(buf, len, "base: %s %s%s \xc2\xb7 candidate: %s %s%s",
		 mb->engine ? mb->engine : "?", mb->engine_version ? mb->engine_version : "", rb,
		 mc->engine ? mc->engine : "?", mc->engine_version ? mc->engine_version : "", rc);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Distinct contexts and concurrency levels of the decode cells (both
 * sides, or only those on both when both_only). */
static void decode_grid(const struct tt_diff *d, int both_only, int64_t *ctx, size_t *n_ctx,
			int64_t *conc, size_t *n_conc)
{
	*n_ctx = *n_conc = 0;
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *c = &d->cells[i];
		size_t k;
		if (c->phase != TT_PHASE_DECODE || (both_only && c->presence != TT_DIFF_BOTH))
			continue;
		for (k = 0; k < *n_ctx && ctx[k] != c->context; k++)
			;
		if (k == *n_ctx && *n_ctx < MAX_CTX)
			ctx[(*n_ctx)++] = c->context;
		for (k = 0; k < *n_conc && conc[k] != c->concurrency; k++)
			;
		if (k == *n_conc && *n_conc < MAX_CONC)
			conc[(*n_conc)++] = c->concurrency;
	}
	qsort(ctx, *n_ctx, sizeof *ctx, cmp_i64);
	qsort(conc, *n_conc, sizeof *conc, cmp_i64);
}

static const struct tt_diff_cell *find(const struct tt_diff *d, enum tt_phase ph, int64_t ctx,
				       int conc)
{
	for (size_t i = 0; i < d->n_cells; i++)
		if (d->cells[i].phase == ph && d->cells[i].context == ctx &&
		    (ph == TT_PHASE_PREFILL || d->cells[i].concurrency == conc))
			return &d->cells[i];
	return NULL;
}

static void no_data(struct canvas *c, double x, double y, double w, double h, const char *what)
{
	struct tstyle st = tt__tstyle_make(15, 0, tt__chart_muted, 0.5, 0.5);
	tt__cv_text(c, x + w / 2, y + h / 2, what, &st);
}

/* ---- heatmap of change -------------------------------------------------- */

/* PuOr, colour-blind safe: purple is faster, orange slower, white none. */
static const struct rgb faster_col = RGB_HEX(0x5E3C99), slower_col = RGB_HEX(0xE66101);
static const struct rgb pale = RGB_HEX(0xF2F2F2);

static struct rgb mix(struct rgb a, struct rgb b, double t)
{
	return (struct rgb){a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

/* Colour of a change toward "better" in % (positive faster), at scale s. */
static struct rgb diverging(double better_pct, double s)
{
	double t = fabs(better_pct) / s;
	if (t > 1)
		t = 1;
	return mix((struct rgb){1, 1, 1}, better_pct >= 0 ? faster_col : slower_col, 0.15 + 0.85 * t);
}

static void corner_mark(struct canvas *c, double x, double y, double s)
{
	cairo_t *cr = c->cr;
	cairo_new_path(cr);
	cairo_move_to(cr, x, y);
	cairo_line_to(cr, x + s, y);
	cairo_line_to(cr, x, y + s);
	cairo_close_path(cr);
	tt__cv_set(c, tt__chart_ink, 1);
	cairo_fill(cr);
}

static enum tt_code draw_heatmap(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_diff *d, enum tt_diff_figure fig,
				 struct tt_error *err)
{
	int64_t ctx[MAX_CTX], conc[MAX_CONC];
	size_t nx, ny;
	double top, gx, gy, gw, gh, cw, ch, scale = 5, foot_h, bar_w = 70;
	char sub[400], title[160], foot[600];
	int hb = tt_diff_figure_higher_better(fig);
	struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);

	decode_grid(d, 0, ctx, &ny, conc, &nx);
	snprintf(title, sizeof title, "Change of %s by cell, candidate against base",
		 tt_diff_figure_name(fig));
	subtitle(d, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, title, sub);
	snprintf(foot, sizeof foot,
		 "Purple: faster, orange: slower (%s), strong where the change is significant "
		 "(docs/diff.md); pale with grey text: no significant change. Black corner: the "
		 "cell's status changed. Hatched: the cell is in one run only. \xe2\x80\x94: no "
		 "figure.",
		 hb ? "higher is better" : "lower is better");
	foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	if (nx == 0 || ny == 0) {
		no_data(c, x, y, w, h, "No decode cells to compare.");
		return tt__canvas_check(c, "heatmap", err);
	}
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_value *v = &d->cells[i].v[fig];
		if ((v->verdict == TT_VERDICT_FASTER || v->verdict == TT_VERDICT_SLOWER) &&
		    fabs(v->change_pct) > scale)
			scale = fabs(v->change_pct);
	}
	if (scale > 50)
		scale = 50;
	gx = x + 20 + 70;
	gy = y + top + 30;
	gw = w - 40 - 70 - bar_w - 30;
	gh = h - top - 30 - foot_h - 40;
	cw = gw / (double)nx;
	ch = gh / (double)ny;
	{
		struct tstyle ax = tt__tstyle_make(12, 0, tt__chart_muted, 0.5, 1);
		struct tstyle ay = tt__tstyle_make(12, 0, tt__chart_muted, 1, 0.5);
		char b[32];
		tt__cv_text(c, gx + gw / 2, gy - 18, "Requests at once (concurrency)", &ax);
		for (size_t j = 0; j < nx; j++) {
			snprintf(b, sizeof b, "%lld", (long long)conc[j]);
			tt__cv_text(c, gx + cw * ((double)j + 0.5), gy - 3, b, &ax);
		}
		for (size_t i = 0; i < ny; i++) {
			tt_format_tokens(ctx[i], b, sizeof b);
			tt__cv_text(c, gx - 8, gy + ch * ((double)i + 0.5), b, &ay);
		}
	}
	for (size_t i = 0; i < ny; i++)
		for (size_t j = 0; j < nx; j++) {
			const struct tt_diff_cell *dc = find(d, TT_PHASE_DECODE, ctx[i], (int)conc[j]);
			double cx = gx + cw * (double)j, cy = gy + ch * (double)i;
			char t1[48] = "", t2[48] = "";
			struct rgb fill = {1, 1, 1}, ink = tt__chart_ink;
			if (!dc)
				continue;
			if (dc->presence != TT_DIFF_BOTH) {
				tt__cv_rect(c, cx + 1, cy + 1, cw - 2, ch - 2, pale);
				tt__cv_hatch(c, cx + 1, cy + 1, cw - 2, ch - 2, 8, tt__chart_grid);
				snprintf(t1, sizeof t1, "%s only",
					 dc->presence == TT_DIFF_BASE_ONLY ? "base" : "candidate");
				ink = tt__chart_muted;
			} else {
				const struct tt_diff_value *v = &dc->v[fig];
				double better = hb ? v->change_pct : -v->change_pct;
				int sig = v->verdict == TT_VERDICT_FASTER ||
					  v->verdict == TT_VERDICT_SLOWER;
				if (!isfinite(v->change_pct)) {
					fill = pale;
					snprintf(t1, sizeof t1, "\xe2\x80\x94");
					ink = tt__chart_muted;
				} else if (sig) {
					fill = diverging(better, scale);
					tt__snprintf_c(t1, sizeof t1, "%+.1f%%", v->change_pct);
					snprintf(t2, sizeof t2, "%s", tt_verdict_name(v->verdict));
					if (fabs(better) / scale > 0.45)
						ink = (struct rgb){1, 1, 1};
				} else {
					fill = mix(pale, diverging(better, scale), 0.25);
					tt__snprintf_c(t1, sizeof t1, "%+.1f%%", v->change_pct);
					ink = tt__chart_muted;
				}
				tt__cv_rect(c, cx + 1, cy + 1, cw - 2, ch - 2, fill);
				if (dc->status_changed)
					corner_mark(c, cx + 1, cy + 1, fmin(cw, ch) * 0.28);
			}
			{
				struct tstyle st = tt__tstyle_make(fmin(13, ch * 0.3), t2[0] != 0, ink,
								   0.5, 0.5);
				st.max_w = cw - 6;
				tt__cv_text(c, cx + cw / 2, cy + ch / 2 - (t2[0] ? ch * 0.14 : 0), t1,
					    &st);
				if (t2[0]) {
					st.size = fmin(11, ch * 0.24);
					st.bold = 0;
					tt__cv_text(c, cx + cw / 2, cy + ch / 2 + ch * 0.2, t2, &st);
				}
			}
		}
	/* The colour scale: slower at the bottom, faster at the top. */
	{
		double bx = gx + gw + 30, by = gy, bh = gh, steps = 40;
		struct tstyle st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0.5);
		char b[32];
		for (int k = 0; k < (int)steps; k++) {
			double better = scale * (1 - 2 * (k + 0.5) / steps);
			tt__cv_rect(c, bx, by + bh * k / steps, 16, bh / steps + 0.5,
				    diverging(better, scale));
		}
		tt__snprintf_c(b, sizeof b, "%.0f%% faster", scale);
		tt__cv_text(c, bx + 20, by + 6, b, &st);
		tt__cv_text(c, bx + 20, by + bh / 2, "none", &st);
		tt__snprintf_c(b, sizeof b, "%.0f%% slower", scale);
		tt__cv_text(c, bx + 20, by + bh - 6, b, &st);
	}
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	return tt__canvas_check(c, "heatmap of change", err);
}

/* ---- curves, both sides -------------------------------------------------- */

struct curves {
	struct series s[2 * MAX_CTX];
	double xs[2 * MAX_CTX][MAX_CONC], ys[2 * MAX_CTX][MAX_CONC];
	double lo[2 * MAX_CTX][MAX_CONC], hi[2 * MAX_CTX][MAX_CONC]; /* D-side-interval */
	char names[2 * MAX_CTX][48];
	struct legend_item items[MAX_CTX + 3];
	size_t n_series, n_items;
	double xmin, xmax, ymin, ymax;
	int bands;
};

/* A side's figure with its interval (docs/diff.md D-side-interval): the
 * figure times exp(+-critical x the side's standard error of the log
 * figure); NaN ends when the side has no standard error. */
static void side_interval(const struct tt_diff_value *v, int side, double *lo, double *hi)
{
	double f = side ? v->cand : v->base, se = side ? v->se_cand : v->se_base;
	*lo = *hi = NAN;
	if (!(f > 0) || !isfinite(se) || !(se >= 0) || !isfinite(v->crit))
		return;
	*lo = f * exp(-v->crit * se);
	*hi = f * exp(v->crit * se);
}

static void grow(double v, double *mn, double *mx)
{
	if (!isfinite(v) || !(v > 0))
		return;
	if (v < *mn)
		*mn = v;
	if (v > *mx)
		*mx = v;
}

static enum tt_code draw_curves(struct canvas *c, double x, double y, double w, double h,
				const struct tt_diff *d, enum tt_diff_chart_kind kind,
				struct tt_error *err)
{
	struct curves *cv = calloc(1, sizeof *cv);
	int64_t ctx[MAX_CTX], conc[MAX_CONC];
	size_t nctx, nconc;
	struct panel p;
	double top, legend_w, foot_h;
	char sub[400], foot[400];
	enum tt_diff_figure fy = kind == TT_DIFF_CHART_THROUGHPUT ? TT_DIFF_TOTAL :
				 kind == TT_DIFF_CHART_TTFT ? TT_DIFF_TTFT_P50 :
							      TT_DIFF_PER_REQUEST;
	struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);

	if (!cv)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
	memset(&p, 0, sizeof p);
	cv->xmin = cv->ymin = INFINITY;
	cv->xmax = cv->ymax = -INFINITY;
	decode_grid(d, 0, ctx, &nctx, conc, &nconc);
	for (size_t i = 0; i < nctx; i++)
		for (int side = 0; side < 2; side++) {
			size_t k = cv->n_series, n = 0;
			struct series *s = &cv->s[k];
			for (size_t j = 0; j < nconc; j++) {
				const struct tt_diff_cell *dc = find(d, TT_PHASE_DECODE, ctx[i],
								     (int)conc[j]);
				double xv, yv;
				if (!dc)
					continue;
				yv = side ? dc->v[fy].cand : dc->v[fy].base;
				xv = kind == TT_DIFF_CHART_TRADEOFF ?
					     (side ? dc->v[TT_DIFF_TOTAL].cand : dc->v[TT_DIFF_TOTAL].base) :
					     (double)conc[j];
				if (!isfinite(xv) || !isfinite(yv))
					continue;
				cv->xs[k][n] = xv;
				cv->ys[k][n] = yv;
				cv->lo[k][n] = cv->hi[k][n] = NAN;
				if (kind != TT_DIFF_CHART_TRADEOFF) {
					side_interval(&dc->v[fy], side, &cv->lo[k][n],
						      &cv->hi[k][n]);
					grow(cv->lo[k][n], &cv->ymin, &cv->ymax);
					grow(cv->hi[k][n], &cv->ymin, &cv->ymax);
					cv->bands |= isfinite(cv->lo[k][n]);
				}
				grow(xv, &cv->xmin, &cv->xmax);
				grow(yv, &cv->ymin, &cv->ymax);
				n++;
			}
			tt_format_tokens(ctx[i], cv->names[k], sizeof cv->names[k]);
			s->name = cv->names[k];
			s->n = n;
			s->x = cv->xs[k];
			s->y = cv->ys[k];
			/* each context its colour; the base dashed without markers,
			 * the candidate solid with them: told apart without colour
			 * and without comparing widths (they differed only by width) */
			s->colour = (int)i;
			s->shape = side ? (int)i % 6 : -1;
			s->line_w = side ? 2.4 : 1.8;
			s->dash = !side;
			s->lo = cv->lo[k];
			s->hi = cv->hi[k];
			cv->n_series++;
			if (side) {
				cv->items[cv->n_items].text = cv->names[k];
				cv->items[cv->n_items].colour = (int)i;
				cv->items[cv->n_items].shape = (int)i % 6;
				cv->n_items++;
			}
		}
	cv->items[cv->n_items++] = (struct legend_item){"base", -1, -1, 4};
	cv->items[cv->n_items++] = (struct legend_item){"candidate", -1, 0, 0};
	if (cv->bands)
		cv->items[cv->n_items++] =
			(struct legend_item){"interval of each side", 6, -1, 1};
	subtitle(d, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, tt__diff_chart_title(kind), sub);
	snprintf(foot, sizeof foot,
		 "Dashed lines: the base; solid lines with markers: the candidate; one colour "
		 "per context.%s %s",
		 cv->bands ? " Bands: each side's interval at the diff's level (D-side-interval)."
			   : "",
		 kind == TT_DIFF_CHART_TRADEOFF ? "Up and right is better." :
		 kind == TT_DIFF_CHART_TTFT ? "Lower is better; log scales." :
					      "Higher is better; concurrency on a log2 scale.");
	foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	legend_w = tt__legend_draw(c, 0, 0, "Context", cv->items, cv->n_items, 0);
	if (!isfinite(cv->ymin) || !isfinite(cv->xmin)) {
		no_data(c, x, y, w, h, "No decode cells with figures on either side.");
		free(cv);
		return tt__canvas_check(c, tt__diff_chart_title(kind), err);
	}
	p.show_xticks = 1;
	p.series = cv->s;
	p.n_series = cv->n_series;
	if (kind == TT_DIFF_CHART_TRADEOFF) {
		tt__axis_fit(&p.x, AXIS_LINEAR, UNIT_SI, cv->xmin, cv->xmax, 1);
		p.xlabel = "Total output tok/s";
	} else {
		tt__axis_fit(&p.x, AXIS_LOG2, UNIT_PLAIN, cv->xmin, cv->xmax, 0);
		p.xlabel = "Requests at once (concurrency)";
		if (nconc <= AXIS_MAX_TICKS) {
			p.x.n_ticks = 0;
			for (size_t j = 0; j < nconc; j++)
				if ((double)conc[j] >= p.x.lo && (double)conc[j] <= p.x.hi)
					p.x.ticks[p.x.n_ticks++] = (double)conc[j];
		}
	}
	if (kind == TT_DIFF_CHART_TTFT) {
		tt__axis_fit(&p.y, AXIS_LOG10, UNIT_MS, cv->ymin, cv->ymax, 0);
		p.ylabel = "Time to first token (median)";
	} else {
		tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_SI, cv->ymin, cv->ymax, 1);
		p.ylabel = kind == TT_DIFF_CHART_THROUGHPUT ? "Total output tok/s" :
							      "Per-request tok/s (median)";
	}
	tt__panel_layout(c, &p, x + 20, y + top + 16, w - 40 - legend_w - 24,
			 h - top - 16 - foot_h - 20);
	tt__panel_draw(c, &p);
	tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Context", cv->items, cv->n_items, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	free(cv);
	return tt__canvas_check(c, tt__diff_chart_title(kind), err);
}

/* ---- prefill, side by side ------------------------------------------------ */

static enum tt_code draw_prefill(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_diff *d, struct tt_error *err)
{
	double xs[2][MAX_CTX], ys[2][MAX_CTX], xmin = INFINITY, xmax = -INFINITY,
		ymin = INFINITY, ymax = -INFINITY, top, legend_w, foot_h;
	size_t n[2] = {0, 0};
	struct series s[2];
	struct legend_item items[2] = {{"base", 0, 0, 0}, {"candidate", 1, 1, 0}};
	struct panel p;
	char sub[400];
	const char *foot = "Prompt tokens per second of one cold request per context (higher "
			   "is better).  Context on a log2 scale.";
	struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);

	memset(s, 0, sizeof s);
	memset(&p, 0, sizeof p);
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		if (dc->phase != TT_PHASE_PREFILL)
			continue;
		for (int side = 0; side < 2; side++) {
			double v = side ? dc->v[TT_DIFF_PREFILL].cand : dc->v[TT_DIFF_PREFILL].base;
			if (!isfinite(v) || n[side] >= MAX_CTX)
				continue;
			xs[side][n[side]] = (double)dc->context;
			ys[side][n[side]++] = v;
			grow((double)dc->context, &xmin, &xmax);
			grow(v, &ymin, &ymax);
		}
	}
	subtitle(d, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, kinds[TT_DIFF_CHART_PREFILL].title, sub);
	foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	legend_w = tt__legend_draw(c, 0, 0, "Side", items, 2, 0);
	if (!isfinite(ymin)) {
		no_data(c, x, y, w, h, "No prefill rows on either side.");
		return tt__canvas_check(c, "prefill", err);
	}
	for (int side = 0; side < 2; side++) {
		s[side].name = side ? "candidate" : "base";
		s[side].n = n[side];
		s[side].x = xs[side];
		s[side].y = ys[side];
		s[side].colour = side;
		s[side].shape = side;
		s[side].line_w = side ? 2.4 : 1.4;
	}
	p.show_xticks = 1;
	p.series = s;
	p.n_series = 2;
	tt__axis_fit(&p.x, AXIS_LOG2, UNIT_TOKENS, xmin, xmax, 0);
	p.xlabel = "Context (prompt tokens)";
	tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_SI, ymin, ymax, 1);
	p.ylabel = "Prompt tok/s";
	tt__panel_layout(c, &p, x + 20, y + top + 16, w - 40 - legend_w - 24,
			 h - top - 16 - foot_h - 20);
	tt__panel_draw(c, &p);
	tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Side", items, 2, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	return tt__canvas_check(c, "prefill", err);
}

/* ---- one cell's time between tokens ---------------------------------------- */

/* The cell to show: the one named, else the decode cell on both sides with
 * the largest |change| of TBT p50 among those judged, else the first. */
static const struct tt_diff_cell *tbt_cell(const struct tt_diff *d, const char *id)
{
	const struct tt_diff_cell *best = NULL;
	double best_z = -1;

	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		char b[64];
		if (dc->phase != TT_PHASE_DECODE || dc->presence != TT_DIFF_BOTH)
			continue;
		if (id) {
			tt_diff_cell_id(dc, b, sizeof b);
			if (!strcmp(b, id))
				return dc;
			continue;
		}
		{
			double z = fabs(dc->v[TT_DIFF_TBT_P50].change_pct);
			if (!isfinite(z))
				z = 0;
			if (dc->v[TT_DIFF_TBT_P50].verdict == TT_VERDICT_UNJUDGED)
				z = 0;
			if (z > best_z) {
				best_z = z;
				best = dc;
			}
		}
	}
	return best;
}

/* The side's first run that has the cell, and its cdf row. */
static const double *cell_cdf(const struct tt_diff_side *s, const struct tt_diff_cell *dc)
{
	for (size_t r = 0; r < s->n_runs; r++) {
		const struct tt_report *rep = s->runs[r].rep;
		for (size_t i = 0; i < rep->n_cells; i++)
			if (rep->cells[i].phase == dc->phase && rep->cells[i].context == dc->context &&
			    rep->cells[i].concurrency == dc->concurrency)
				return s->runs[r].tbt_cdf && isfinite(s->runs[r].tbt_cdf[i][50])
					       ? s->runs[r].tbt_cdf[i] : NULL;
	}
	return NULL;
}

static enum tt_code draw_tbt_cdf(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_diff *d, const char *id, struct tt_error *err)
{
	const struct tt_diff_cell *dc = tbt_cell(d, id);
	double xs[2][TT__CDF_POINTS], ys[2][TT__CDF_POINTS], xmin = INFINITY, xmax = -INFINITY,
		top, legend_w, foot_h;
	struct series s[2];
	struct legend_item items[2] = {{"base", 0, -1, 0}, {"candidate", 1, -1, 0}};
	struct panel p;
	char title[200], sub[400], cid[64];
	const char *foot = "Share of the cell's tokens whose gap to the previous token is at "
			   "most x (M-tbt); x on a log scale.  The first run of each side.";
	struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
	int have = 0;

	if (id && !dc)
		return tt_error_set(err, TT_EARG, "tbt-cdf: no decode cell '%s' on both sides", id);
	memset(s, 0, sizeof s);
	memset(&p, 0, sizeof p);
	if (dc) {
		tt_diff_cell_id(dc, cid, sizeof cid);
		for (int side = 0; side < 2; side++) {
			const double *q = cell_cdf(side ? d->cand : d->base, dc);
			size_t n = 0;
			if (q)
				for (int i = 0; i < TT__CDF_POINTS; i++) {
					if (!(q[i] > 0))
						continue;
					xs[side][n] = q[i];
					ys[side][n++] = (double)i / (TT__CDF_POINTS - 1);
					grow(q[i], &xmin, &xmax);
				}
			s[side].name = side ? "candidate" : "base";
			s[side].n = n;
			s[side].x = xs[side];
			s[side].y = ys[side];
			s[side].colour = side;
			s[side].shape = -1;
			s[side].line_w = 2;
			s[side].step = 1;
			have |= n > 0;
		}
	}
	snprintf(title, sizeof title, "Time between tokens, %s, base and candidate",
		 dc ? cid : "no cell");
	subtitle(d, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, title, sub);
	foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	legend_w = tt__legend_draw(c, 0, 0, "Side", items, 2, 0);
	if (!have) {
		no_data(c, x, y, w, h, "No raw token gaps for this cell on either side.");
		return tt__canvas_check(c, "tbt-cdf", err);
	}
	p.show_xticks = 1;
	p.series = s;
	p.n_series = 2;
	tt__axis_fit(&p.x, AXIS_LOG10, UNIT_MS, xmin, xmax, 0);
	p.xlabel = "Time between tokens";
	tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_PERCENT, 0, 1, 1);
	if (p.y.hi > 1) { /* a share ends at 100 % */
		size_t k = 0;
		p.y.hi = 1;
		for (size_t i = 0; i < p.y.n_ticks; i++)
			if (p.y.ticks[i] <= 1 + 1e-9)
				p.y.ticks[k++] = p.y.ticks[i];
		p.y.n_ticks = k;
	}
	p.ylabel = "Share of tokens";
	tt__panel_layout(c, &p, x + 20, y + top + 16, w - 40 - legend_w - 24,
			 h - top - 16 - foot_h - 20);
	tt__panel_draw(c, &p);
	tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Side", items, 2, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	return tt__canvas_check(c, "tbt-cdf", err);
}

/* ---- entry points --------------------------------------------------------- */

int tt__diff_chart_has_data(const struct tt_diff *d, enum tt_diff_chart_kind k, const char *cell)
{
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		if (k == TT_DIFF_CHART_PREFILL ? dc->phase == TT_PHASE_PREFILL :
						 dc->phase == TT_PHASE_DECODE) {
			if (k != TT_DIFF_CHART_TBT_CDF)
				return 1;
			dc = tbt_cell(d, cell);
			if (cell && !dc)
				return 1; /* drawing it says why not */
			return dc && (cell_cdf(d->base, dc) || cell_cdf(d->cand, dc));
		}
	}
	return 0;
}

enum tt_code tt__diff_chart_draw(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_diff *d, const struct tt_diff_chart_opts *o,
				 struct tt_error *err)
{
	tt__cv_rect(c, x, y, w, h, (struct rgb){1, 1, 1});
	switch (o->kind) {
	case TT_DIFF_CHART_HEATMAP:
		return draw_heatmap(c, x, y, w, h, d, o->figure, err);
	case TT_DIFF_CHART_THROUGHPUT:
	case TT_DIFF_CHART_PER_REQUEST:
	case TT_DIFF_CHART_TRADEOFF:
	case TT_DIFF_CHART_TTFT:
		return draw_curves(c, x, y, w, h, d, o->kind, err);
	case TT_DIFF_CHART_PREFILL:
		return draw_prefill(c, x, y, w, h, d, err);
	case TT_DIFF_CHART_TBT_CDF:
		return draw_tbt_cdf(c, x, y, w, h, d, o->cell, err);
	default:
		return tt_error_set(err, TT_EARG, "no diff chart kind %d", (int)o->kind);
	}
}

enum tt_code tt_diff_chart_render(const struct tt_diff *d, const struct tt_diff_chart_opts *o,
				  struct tt_buf *out, struct tt_error *err)
{
	struct canvas c;
	enum tt_code rc;
	size_t start = out->len;
	double w = o->width > 0 ? o->width : 960, h = o->height > 0 ? o->height : 600;

	rc = tt__canvas_open(&c, o->format, w, h, 96, out, err);
	if (rc != TT_OK)
		return rc;
	tt__canvas_set_date(&c, tt__chart_pdf_date(&tt_diff_side_report(d->cand, 0)->manifest));
	rc = tt__diff_chart_draw(&c, 0, 0, c.w, c.h, d, o, err);
	if (rc == TT_OK)
		rc = tt__canvas_finish(&c, err);
	tt__canvas_release(&c);
	if (rc != TT_OK) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return rc;
}
