/* The chart kinds drawn from a report's figures (one line per context
 * against concurrency, the trade-off curve, prefill by context), the kind
 * table and the entry points that put one chart into a PNG, SVG or PDF. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"

static const struct {
	const char *name;
	const char *about;
	const char *title;
} kinds[TT_CHART_KIND_COUNT_] = {
	{"heatmap", "decode total tok/s, contexts x concurrency, status marked",
	 "Decode throughput by context and concurrency"},
	{"throughput", "total tok/s against concurrency, one line per context",
	 "Total decode throughput vs concurrency"},
	{"per-request", "per-request tok/s against concurrency",
	 "Per-request decode speed vs concurrency"},
	{"tradeoff", "per-request tok/s against total tok/s (the trade-off curve)",
	 "Per-request speed vs total throughput"},
	{"ttft", "time to first token against concurrency: median, p10-p90 band",
	 "Time to first token vs concurrency"},
	{"tbt", "time between tokens against concurrency: median, p10-p90 band",
	 "Time between tokens vs concurrency"},
	{"prefill", "prefill tok/s and TTFT by context", "Prefill speed by context"},
	{"timeline", "one cell over time: tok/s, active requests, server gauges, KV usage",
	 "Cell timeline"},
	{"tbt-cdf", "distribution (CDF) of time between tokens per context at one concurrency",
	 "Distribution of time between tokens"},
	{"ttft-parts", "where decode TTFT goes: server queue, prefill and the rest, per cell",
	 "Where time to first token goes"},
};

const char *tt_chart_kind_name(enum tt_chart_kind k)
{
	return (unsigned)k < TT_CHART_KIND_COUNT_ ? kinds[k].name : tt__chart_rate_name(k);
}

const char *tt_chart_kind_about(enum tt_chart_kind k)
{
	return (unsigned)k < TT_CHART_KIND_COUNT_ ? kinds[k].about : tt__chart_rate_about(k);
}

const char *tt__chart_kind_title(enum tt_chart_kind k)
{
	return (unsigned)k < TT_CHART_KIND_COUNT_ ? kinds[k].title
		: tt__chart_rate_title(k) ? tt__chart_rate_title(k) : "";
}

int tt__chart_kind_slot(enum tt_chart_kind k)
{
	if ((unsigned)k < TT_CHART_KIND_COUNT_)
		return (int)k;
	if (k >= TT_CHART_RATE_LATENCY && k < TT_CHART_RATE_END_)
		return TT_CHART_KIND_COUNT_ + (int)(k - TT_CHART_RATE_LATENCY);
	return -1;
}

int tt_chart_kind_parse(const char *name)
{
	for (int i = 0; name && i < TT_CHART_KIND_COUNT_; i++)
		if (strcmp(name, kinds[i].name) == 0)
			return i;
	return tt__chart_rate_parse(name);
}

int tt_chart_kind_needs_run(enum tt_chart_kind k)
{
	return k == TT_CHART_TIMELINE || k == TT_CHART_TBT_CDF;
}

const char *tt_chart_kind_list(void)
{
	return "heatmap, throughput, per-request, tradeoff, ttft, tbt, prefill, timeline, "
	       "tbt-cdf, ttft-parts, rate-latency, rate-throughput, rate-goodput";
}

int tt_chart_format_from_path(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	if (!dot || strchr(dot, '/'))
		return -1;
	if (strcasecmp(dot, ".png") == 0)
		return TT_CHART_PNG;
	if (strcasecmp(dot, ".svg") == 0)
		return TT_CHART_SVG;
	if (strcasecmp(dot, ".pdf") == 0)
		return TT_CHART_PDF;
	return -1;
}

void tt_chart_opts_init(struct tt_chart_opts *o)
{
	memset(o, 0, sizeof *o);
	o->kind = TT_CHART_HEATMAP;
	o->format = TT_CHART_PNG;
	o->width = 960;
	o->height = 600;
	o->dpi = 96;
	o->cell = -1;
	o->concurrency = 0;
	o->font_scale = 1;
	o->no_title = 0;
}

static const struct {
	const char *name;
	double w, h, font_scale;
	int no_title;
} presets[] = {
	{"column", 480, 320, 1.0, 1},
	{"page", 960, 600, 1.0, 0},
	{"slide", 1280, 720, 1.5, 0},
};

const char *tt_chart_preset_list(void)
{
	return "column, page, slide";
}

enum tt_code tt_chart_preset(const char *name, struct tt_chart_opts *o, struct tt_error *err)
{
	for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++) {
		if (strcmp(name, presets[i].name) == 0) {
			o->width = presets[i].w;
			o->height = presets[i].h;
			o->font_scale = presets[i].font_scale;
			o->no_title = presets[i].no_title;
			return TT_OK;
		}
	}
	return tt_error_set(err, TT_EARG, "unknown chart preset '%s' (known: %s)",
			    name ? name : "", tt_chart_preset_list());
}

void tt_chart_analysis_opts(struct tt_analysis_opts *o)
{
	static const double want[] = {10, 90};
	if (o->n_quantiles == 0) {
		/* the analysis default, kept */
		o->quantiles[0] = 90;
		o->quantiles[1] = 99;
		o->n_quantiles = 2;
	}
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		size_t i;
		for (i = 0; i < o->n_quantiles; i++)
			if (fabs(o->quantiles[i] - want[k]) < 1e-9)
				break;
		if (i == o->n_quantiles && o->n_quantiles < TT_MAX_QUANTILES)
			o->quantiles[o->n_quantiles++] = want[k];
	}
}

/* ---- lines against concurrency -------------------------------------- */

#define MAX_CTX 24
#define MAX_CONC 32

struct line_data {
	int64_t ctx[MAX_CTX];
	int conc[MAX_CONC];
	size_t n_ctx, n_conc;
	double x[MAX_CTX][MAX_CONC], y[MAX_CTX][MAX_CONC];
	double lo[MAX_CTX][MAX_CONC], hi[MAX_CTX][MAX_CONC];
	unsigned char hollow[MAX_CTX][MAX_CONC], flag[MAX_CTX][MAX_CONC];
	char label_buf[MAX_CTX][MAX_CONC][12];
	const char *labels[MAX_CTX][MAX_CONC];
	char names[MAX_CTX][24];
	struct series s[MAX_CTX];
	struct legend_item items[MAX_CTX + 3];
	size_t n_items;
	double xmin, xmax, ymin, ymax; /* over the points shown, bands included */
	int bands;                     /* some point has a p10-p90 band */
};

static double dist_q(const struct tt_dist *d, int qi)
{
	if (d->n == 0)
		return NAN;
	if (qi < 0)
		return d->p50;
	return d->q[qi];
}

static void metric(const struct tt_cell_figures *f, enum tt_chart_kind k, int q10, int q90,
		   double *x, double *y, double *lo, double *hi)
{
	*lo = *hi = NAN;
	*x = f->concurrency;
	switch (k) {
	case TT_CHART_THROUGHPUT:
		*y = f->total_tok_s;
		break;
	case TT_CHART_PER_REQUEST:
		*y = dist_q(&f->per_request_tok_s, -1);
		break;
	case TT_CHART_TRADEOFF:
		*x = f->total_tok_s;
		*y = dist_q(&f->per_request_tok_s, -1);
		break;
	case TT_CHART_TTFT:
		*y = dist_q(&f->ttft_ms, -1);
		if (q10 >= 0 && q90 >= 0) {
			*lo = dist_q(&f->ttft_ms, q10);
			*hi = dist_q(&f->ttft_ms, q90);
		}
		break;
	case TT_CHART_TBT:
	default:
		*y = dist_q(&f->tbt_ms, -1);
		if (q10 >= 0 && q90 >= 0) {
			*lo = dist_q(&f->tbt_ms, q10);
			*hi = dist_q(&f->tbt_ms, q90);
		}
		break;
	}
}

static void range_add(double v, double *mn, double *mx)
{
	if (!isfinite(v))
		return;
	if (v < *mn)
		*mn = v;
	if (v > *mx)
		*mx = v;
}

/* One point per context and concurrency, a series per context, and the
 * legend's items (the marks only when some point shows them). */
static void lines_collect(const struct tt_report *r, enum tt_chart_kind kind,
			  struct line_data *d)
{
	int q10 = tt__chart_quantile_index(r, 10), q90 = tt__chart_quantile_index(r, 90);
	int any_hollow = 0, any_flag = 0, n_shown = 0;

	d->xmin = d->ymin = INFINITY;
	d->xmax = d->ymax = -INFINITY;
	d->n_ctx = tt__chart_decode_contexts(r, d->ctx, MAX_CTX);
	d->n_conc = tt__chart_decode_concurrency(r, d->conc, MAX_CONC);
	for (size_t i = 0; i < d->n_ctx; i++) {
		int has_data = 0, colour;
		for (size_t j = 0; j < d->n_conc; j++) {
			const struct tt_cell_figures *f =
				tt__chart_find_cell(r, TT_PHASE_DECODE, d->ctx[i], d->conc[j]);
			double vx = NAN, vy = NAN, vl = NAN, vh = NAN;
			if (f && tt__chart_cell_has_value(f))
				metric(f, kind, q10, q90, &vx, &vy, &vl, &vh);
			/* log axes cannot show zero */
			if ((kind == TT_CHART_TTFT || kind == TT_CHART_TBT) && !(vy > 0))
				vy = NAN;
			d->x[i][j] = vx;
			d->y[i][j] = vy;
			d->lo[i][j] = vl > 0 ? vl : NAN;
			d->hi[i][j] = vh > 0 ? vh : NAN;
			d->hollow[i][j] = f && isfinite(vy) && f->status != TT_STATUS_VALID;
			d->flag[i][j] = f && isfinite(vy) && f->errors > 0;
			any_hollow |= d->hollow[i][j];
			any_flag |= d->flag[i][j];
			if (isfinite(vy) && isfinite(vx)) {
				has_data = 1;
				range_add(vx, &d->xmin, &d->xmax);
				range_add(vy, &d->ymin, &d->ymax);
				range_add(d->lo[i][j], &d->ymin, &d->ymax);
				range_add(d->hi[i][j], &d->ymin, &d->ymax);
				if (isfinite(d->lo[i][j]))
					d->bands = 1;
			}
			d->labels[i][j] = NULL;
			if (kind == TT_CHART_TRADEOFF && f) {
				snprintf(d->label_buf[i][j], sizeof d->label_buf[i][j], "%d",
					 d->conc[j]);
				d->labels[i][j] = d->label_buf[i][j];
			}
		}
		tt__fmt_tokens(d->ctx[i], d->names[i], sizeof d->names[i]);
		/* colours and shapes in the order of the contexts drawn: a context
		 * without a point takes neither, nor a legend line */
		colour = has_data ? n_shown++ : 0;
		d->s[i] = (struct series){.name = d->names[i], .n = d->n_conc, .x = d->x[i],
					  .y = d->y[i], .hollow = d->hollow[i],
					  .flag = d->flag[i], .colour = colour,
					  .shape = colour, .line_w = 2.2};
		if (kind == TT_CHART_TTFT || kind == TT_CHART_TBT) {
			d->s[i].lo = d->lo[i];
			d->s[i].hi = d->hi[i];
		}
		if (kind == TT_CHART_TRADEOFF)
			d->s[i].labels = d->labels[i];
		if (has_data)
			d->items[d->n_items++] =
				(struct legend_item){d->names[i], colour, colour, 0};
	}
	if (d->bands)
		d->items[d->n_items++] = (struct legend_item){"p10–p90 band", 6, -1, 1};
	if (any_hollow)
		d->items[d->n_items++] = (struct legend_item){"not Valid (queued, …)", 6, 0, 2};
	if (any_flag)
		d->items[d->n_items++] = (struct legend_item){"requests failed", -1, 0, 3};
}

/* The sentence under the chart: how to read it. */
static void lines_footnote(enum tt_chart_kind kind, int bands, char *foot, size_t len)
{
	switch (kind) {
	case TT_CHART_TRADEOFF:
		snprintf(foot, len,
			 "Numbers at the points: requests at once. Up and right is better. "
			 "Medians; cells Over capacity or not run are left out.");
		break;
	case TT_CHART_TTFT:
	case TT_CHART_TBT:
		snprintf(foot, len, "%s",
			 bands ? "Line: median over requests; band: 10th to 90th percentile. "
				 "Log scales on both axes."
			       : "Line: median over requests (the report has no p10/p90: "
				 "analyse with quantiles 10 and 90 for the band). Log scales.");
		break;
	default:
		snprintf(foot, len,
			 "%s Concurrency on a log2 scale. Cells Over capacity or not run are "
			 "left out.",
			 kind == TT_CHART_THROUGHPUT
				 ? "Output tokens per second across all requests in the window."
				 : "Median over requests of each request's output tok/s.");
		break;
	}
}

/* The panel's series, and its axes: scale, unit and title per kind. */
static void lines_axes(struct panel *p, enum tt_chart_kind kind, const struct line_data *d)
{
	p->show_xticks = 1;
	p->series = d->s;
	p->n_series = d->n_ctx;
	if (kind == TT_CHART_TRADEOFF) {
		tt__axis_fit(&p->x, AXIS_LINEAR, UNIT_SI, d->xmin, d->xmax, 1);
		p->xlabel = "Total output tok/s";
	} else {
		tt__axis_fit(&p->x, AXIS_LOG2, UNIT_PLAIN, d->xmin, d->xmax, 0);
		p->xlabel = "Requests at once (concurrency)";
		/* Ticks at the levels measured, so 3 or 48 are named too. */
		if (d->n_conc > 0 && d->n_conc <= AXIS_MAX_TICKS) {
			p->x.n_ticks = 0;
			for (size_t j = 0; j < d->n_conc; j++)
				if (d->conc[j] >= p->x.lo && d->conc[j] <= p->x.hi)
					p->x.ticks[p->x.n_ticks++] = d->conc[j];
		}
	}
	switch (kind) {
	case TT_CHART_THROUGHPUT:
		tt__axis_fit(&p->y, AXIS_LINEAR, UNIT_SI, d->ymin, d->ymax, 1);
		p->ylabel = "Total output tok/s";
		break;
	case TT_CHART_PER_REQUEST:
	case TT_CHART_TRADEOFF:
		tt__axis_fit(&p->y, AXIS_LINEAR, UNIT_SI, d->ymin, d->ymax, 1);
		p->ylabel = "Per-request tok/s (median)";
		break;
	case TT_CHART_TTFT:
		tt__axis_fit(&p->y, AXIS_LOG10, UNIT_MS, d->ymin, d->ymax, 0);
		p->ylabel = "Time to first token";
		break;
	default:
		tt__axis_fit(&p->y, AXIS_LOG10, UNIT_MS, d->ymin, d->ymax, 0);
		p->ylabel = "Time between tokens";
		break;
	}
}

static enum tt_code draw_lines(struct canvas *c, double x, double y, double w, double h,
			       const struct tt_report *r, enum tt_chart_kind kind,
			       struct tt_chart_info *info, struct tt_error *err)
{
	struct line_data *d = calloc(1, sizeof *d);
	struct panel p;
	double top, legend_w, flow_h, foot_h;
	char sub[600], foot[600];
	enum tt_code rc = TT_OK;

	if (!d)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
	memset(&p, 0, sizeof p);
	lines_collect(r, kind, d);

	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, tt__chart_kind_title(kind), sub);
	lines_footnote(kind, d->bands, foot, sizeof foot);
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	tt__legend_place(c, w, "Context", d->items, d->n_items, &legend_w, &flow_h);

	lines_axes(&p, kind, d);
	if (d->n_ctx == 0 || !isfinite(d->ymin)) {
		struct tstyle st = tt__tstyle_make(15, 0, tt__chart_muted, 0.5, 0.5);
		tt__cv_text(c, x + w / 2, y + h / 2, "No decode cells with figures in this run.", &st);
		goto cleanup;
	}
	tt__panel_layout(c, &p, x + 20, y + top + flow_h + 16, w - 40 - legend_w - 24,
		     h - top - flow_h - 16 - foot_h - 20);
	tt__panel_draw(c, &p);
	if (flow_h > 0)
		tt__legend_flow(c, x + 20, y + top, w - 40, "Context", d->items, d->n_items, 1);
	else
		tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Context", d->items,
				d->n_items, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	if (info) {
		tt__chart_info_from_panel(info, c, &p);
		info->n_series = d->n_ctx;
	}
cleanup:
	free(d);
	if (rc == TT_OK)
		rc = tt__canvas_check(c, tt__chart_kind_title(kind), err);
	return rc;
}

/* ---- prefill by context --------------------------------------------- */

static int cmp_cell_ctx(const void *a, const void *b)
{
	const struct tt_cell_figures *x = *(const struct tt_cell_figures *const *)a;
	const struct tt_cell_figures *y = *(const struct tt_cell_figures *const *)b;
	return (x->context > y->context) - (x->context < y->context);
}

static void bars(struct canvas *c, struct panel *p, const struct tt_cell_figures **cells,
		 size_t n, int which)
{
	double slot = (p->x.p1 - p->x.p0) / (double)n;
	struct rgb col = tt__chart_palette[which ? 1 : 0];
	char buf[48];
	for (size_t i = 0; i < n; i++) {
		const struct tt_cell_figures *f = cells[i];
		double v = which ? f->ttft_ms.p50 : f->total_tok_s;
		double cx = p->x.p0 + slot * (i + 0.5), bw = slot * 0.62;
		struct tstyle st = tt__tstyle_make(12, 0, tt__chart_ink, 0.5, 0);
		tt__fmt_tokens(f->context, buf, sizeof buf);
		tt__cv_text(c, cx, p->y.p0 + 6, buf, &st);
		if (!tt__chart_cell_has_value(f) || !isfinite(v) || (which && f->ttft_ms.n == 0)) {
			st = tt__tstyle_make(11, 0, tt__chart_muted, 0.5, 1);
			tt__cv_hatch(c, cx - bw / 2, p->y.p0 - 40, bw, 40, 6, tt__chart_grid);
			tt__cv_text(c, cx, p->y.p0 - 44, tt_status_name(f->status), &st);
			continue;
		}
		{
			double top = tt__axis_map(&p->y, v);
			tt__cv_rect(c, cx - bw / 2, top, bw, p->y.p0 - top, col);
			if (f->status != TT_STATUS_VALID)
				tt__cv_hatch(c, cx - bw / 2, top, bw, p->y.p0 - top, 7,
					 (struct rgb){1, 1, 1});
			if (which)
				tt_fmt_ms(v, buf, sizeof buf);
			else
				tt_fmt_rate(v, buf, sizeof buf);
			st = tt__tstyle_make(slot < 70 ? 10.5 : 12, 1, tt__chart_ink, 0.5, 1);
			tt__cv_text(c, cx, top - 3, buf, &st);
		}
	}
}

static enum tt_code draw_prefill(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_report *r, struct tt_chart_info *info,
				 struct tt_error *err)
{
	const struct tt_cell_figures **cells = NULL;
	size_t n = 0;
	double vmax = 0, tmax = 0, top, foot_h, pw;
	char sub[600];
	const char *foot = "Each bar is one cold request per context (max_tokens 1): prompt "
			   "tokens divided by its time to first token. Hatched: not Valid.";
	struct panel a, b;
	enum tt_code rc = TT_OK;

	cells = calloc(r->n_cells ? r->n_cells : 1, sizeof *cells);
	if (!cells)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
	for (size_t i = 0; i < r->n_cells; i++) {
		if (r->cells[i].phase != TT_PHASE_PREFILL)
			continue;
		cells[n++] = &r->cells[i];
		if (tt__chart_cell_has_value(&r->cells[i])) {
			if (r->cells[i].total_tok_s > vmax)
				vmax = r->cells[i].total_tok_s;
			if (r->cells[i].ttft_ms.n && r->cells[i].ttft_ms.p50 > tmax)
				tmax = r->cells[i].ttft_ms.p50;
		}
	}
	qsort(cells, n, sizeof *cells, cmp_cell_ctx);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, tt__chart_kind_title(TT_CHART_PREFILL), sub);
	if (n == 0) {
		struct tstyle st = tt__tstyle_make(15, 0, tt__chart_muted, 0.5, 0.5);
		tt__cv_text(c, x + w / 2, y + h / 2, "No prefill cells in this run.", &st);
		goto cleanup;
	}
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.show_xticks = b.show_xticks = 1;
	a.xlabel = b.xlabel = "Context";
	a.ylabel = "Prompt tok/s";
	b.ylabel = "Time to first token";
	tt__axis_fit(&a.x, AXIS_LINEAR, UNIT_PLAIN, 0, 1, 0);
	tt__axis_fit(&b.x, AXIS_LINEAR, UNIT_PLAIN, 0, 1, 0);
	a.x.n_ticks = b.x.n_ticks = 0; /* categories are labelled by the bars */
	tt__axis_fit(&a.y, AXIS_LINEAR, UNIT_SI, 0, vmax * 1.08, 1);
	tt__axis_fit(&b.y, AXIS_LINEAR, UNIT_MS, 0, tmax * 1.08, 1);
	pw = (w - 40 - 30) / 2;
	tt__panel_layout(c, &a, x + 20, y + top + 14, pw, h - top - 14 - foot_h - 20);
	tt__panel_layout(c, &b, x + 20 + pw + 30, y + top + 14, pw, h - top - 14 - foot_h - 20);
	tt__panel_draw(c, &a);
	tt__panel_draw(c, &b);
	bars(c, &a, cells, n, 0);
	bars(c, &b, cells, n, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	if (info) {
		tt__chart_info_from_panel(info, c, &a);
		info->cols = n;
		info->n_series = 2;
	}
cleanup:
	free(cells);
	if (rc == TT_OK)
		rc = tt__canvas_check(c, "the prefill chart", err);
	return rc;
}

/* ---- dispatch and output -------------------------------------------- */

enum tt_code tt__chart_draw(struct canvas *c, double x, double y, double w, double h,
			const struct tt_report *r, struct tt_run *run,
			const struct tt_chart_opts *o, struct chart_cache *cache,
			struct tt_chart_info *info, struct tt_error *err)
{
	if (info)
		memset(info, 0, sizeof *info);
	switch (o->kind) {
	case TT_CHART_HEATMAP:
		return tt__chart_draw_heatmap(c, x, y, w, h, r, info, err);
	case TT_CHART_THROUGHPUT:
	case TT_CHART_PER_REQUEST:
	case TT_CHART_TRADEOFF:
	case TT_CHART_TTFT:
	case TT_CHART_TBT:
		return draw_lines(c, x, y, w, h, r, o->kind, info, err);
	case TT_CHART_PREFILL:
		return draw_prefill(c, x, y, w, h, r, info, err);
	case TT_CHART_TIMELINE:
		return tt__chart_draw_timeline(c, x, y, w, h, r, run, o->cell, cache, info, err);
	case TT_CHART_TBT_CDF:
		return tt__chart_draw_tbt_cdf(c, x, y, w, h, r, run, o->concurrency, cache, info,
					  err);
	case TT_CHART_TTFT_PARTS:
		return tt__chart_draw_ttft_parts(c, x, y, w, h, r, info, err);
	case TT_CHART_RATE_LATENCY:
	case TT_CHART_RATE_THROUGHPUT:
	case TT_CHART_RATE_GOODPUT:
		return tt__chart_draw_rate(c, x, y, w, h, r, o->kind, info, err);
	default:
		return tt_error_set(err, TT_EARG, "unknown chart kind %d (known: %s)",
				    (int)o->kind, tt_chart_kind_list());
	}
}

/* RFC 3339 as cairo reads it, or NULL: a damaged manifest must not reach
 * the PDF's date fields. */
const char *tt__chart_pdf_date(const struct tt_manifest *m)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd";
	const char *s = m->created;
	if (!s || strlen(s) < sizeof pat - 1)
		return NULL;
	for (size_t i = 0; i < sizeof pat - 1; i++) {
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return NULL;
	}
	return s;
}

enum tt_code tt_chart_render(const struct tt_report *r, struct tt_run *run,
			     const struct tt_chart_opts *o, struct tt_buf *out,
			     struct tt_chart_info *info, struct tt_error *err)
{
	return tt__chart_render(r, run, o, NULL, out, info, err);
}

enum tt_code tt__chart_render(const struct tt_report *r, struct tt_run *run,
			  const struct tt_chart_opts *o, struct chart_cache *cache,
			  struct tt_buf *out, struct tt_chart_info *info, struct tt_error *err)
{
	struct canvas c;
	struct tt_chart_opts def;
	enum tt_code rc;
	size_t start = out->len;

	if (!r || !o || !out)
		return tt_error_set(err, TT_EARG, "no report, options or output to chart");
	def = *o;
	if (!(def.width > 0))
		def.width = 960;
	if (!(def.height > 0))
		def.height = 600;
	if (tt_chart_kind_needs_run(def.kind) && !run)
		return tt_error_set(err, TT_EARG,
				    "the %s chart is drawn from raw traces: it needs the run",
				    tt_chart_kind_name(def.kind));
	if (!(def.font_scale > 0))
		def.font_scale = 1;
	if (!(def.font_scale >= 0.5 && def.font_scale <= 4))
		return tt_error_set(err, TT_EARG, "chart font scale %g is out of range (0.5..4)",
				    def.font_scale);
	rc = tt__canvas_open(&c, def.format, def.width, def.height, def.dpi, out, err);
	if (rc != TT_OK)
		return rc;
	c.font_scale = def.font_scale;
	c.no_title = def.no_title;
	tt__canvas_set_date(&c, tt__chart_pdf_date(&r->manifest));
	rc = tt__chart_draw(&c, 0, 0, c.w, c.h, r, run, &def, cache, info, err);
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

enum tt_code tt_chart_write(const struct tt_report *r, struct tt_run *run,
			    const struct tt_chart_opts *o, const char *path,
			    struct tt_chart_info *info, struct tt_error *err)
{
	struct tt_buf b;
	enum tt_code rc;

	tt_buf_init(&b, 0);
	rc = tt_chart_render(r, run, o, &b, info, err);
	if (rc == TT_OK)
		rc = tt_buf_write_file(&b, path, err);
	tt_buf_release(&b);
	return rc;
}
