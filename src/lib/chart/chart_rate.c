/* Open-loop charts (docs/charts.md "Open-loop charts"): one line per
 * context against the offered rate, from the figures of docs/metrics.md
 * M-rate; the SLO limit (M-rate-limit) of the first context that has one
 * is shaded as the interval [lo, hi) it lies in.
 *
 *   rate-latency     TTFT from the due time: median line, p90-p99 band
 *   rate-throughput  requests/s ended in the window, with the offered rate
 *                    as a thin reference (a cell on it kept up)
 *   rate-goodput     requests/s meeting the SLOs from the due time */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"

#define MAX_CTX 24
#define MAX_RATES 64

static const struct {
	enum tt_chart_kind kind;
	const char *name, *about, *title;
} rate_kinds[] = {
	{TT_CHART_RATE_LATENCY, "rate-latency",
	 "open loop: TTFT from the due time against offered rate, p50 line, p90-p99 band",
	 "Time to first token vs offered rate (from the due time)"},
	{TT_CHART_RATE_THROUGHPUT, "rate-throughput",
	 "open loop: requests/s ended against requests/s offered",
	 "Throughput vs offered rate"},
	{TT_CHART_RATE_GOODPUT, "rate-goodput",
	 "open loop: requests/s meeting the SLOs (needs --slo) against offered rate",
	 "Goodput vs offered rate"},
};
#define N_RATE_KINDS (sizeof rate_kinds / sizeof *rate_kinds)

static int idx_of(enum tt_chart_kind k)
{
	for (size_t i = 0; i < N_RATE_KINDS; i++)
		if (rate_kinds[i].kind == k)
			return (int)i;
	return -1;
}

const char *tt__chart_rate_name(enum tt_chart_kind k)
{
	int i = idx_of(k);
	return i < 0 ? NULL : rate_kinds[i].name;
}

const char *tt__chart_rate_about(enum tt_chart_kind k)
{
	int i = idx_of(k);
	return i < 0 ? NULL : rate_kinds[i].about;
}

const char *tt__chart_rate_title(enum tt_chart_kind k)
{
	int i = idx_of(k);
	return i < 0 ? NULL : rate_kinds[i].title;
}

int tt__chart_rate_parse(const char *name)
{
	for (size_t i = 0; name && i < N_RATE_KINDS; i++)
		if (strcmp(name, rate_kinds[i].name) == 0)
			return (int)rate_kinds[i].kind;
	return -1;
}

struct rate_data {
	int64_t ctx[MAX_CTX];
	size_t n_ctx, n[MAX_CTX];
	double x[MAX_CTX][MAX_RATES], y[MAX_CTX][MAX_RATES];
	double lo[MAX_CTX][MAX_RATES], hi[MAX_CTX][MAX_RATES];
	unsigned char hollow[MAX_CTX][MAX_RATES];
	double ref_x[2], ref_y[2];
	char names[MAX_CTX][24];
	struct series s[MAX_CTX + 1];
	struct legend_item items[MAX_CTX + 4];
	size_t n_items, n_series;
	double xmin, xmax, ymin, ymax;
	int bands;
};

static void grow(double v, double *mn, double *mx)
{
	if (isfinite(v)) {
		*mn = fmin(*mn, v);
		*mx = fmax(*mx, v);
	}
}

static int cmp_rate(const void *a, const void *b)
{
	const struct tt_cell_figures *x = *(const struct tt_cell_figures *const *)a;
	const struct tt_cell_figures *y = *(const struct tt_cell_figures *const *)b;
	return (x->rate > y->rate) - (x->rate < y->rate);
}

static void collect(const struct tt_report *r, enum tt_chart_kind kind, struct rate_data *d)
{
	int q90 = tt__chart_quantile_index(r, 90), q99 = tt__chart_quantile_index(r, 99);
	const struct tt_cell_figures *cells[MAX_RATES];
	int any_hollow = 0, n_shown = 0;

	d->xmin = d->ymin = INFINITY;
	d->xmax = d->ymax = -INFINITY;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *f = &r->cells[i];
		size_t k;
		if (f->phase != TT_PHASE_RATE)
			continue;
		for (k = 0; k < d->n_ctx && d->ctx[k] != f->context; k++)
			;
		if (k == d->n_ctx && d->n_ctx < MAX_CTX)
			d->ctx[d->n_ctx++] = f->context;
	}
	for (size_t i = 0; i < d->n_ctx; i++) {
		size_t n = 0;
		int has_data = 0, colour;
		for (size_t j = 0; j < r->n_cells && n < MAX_RATES; j++)
			if (r->cells[j].phase == TT_PHASE_RATE && r->cells[j].context == d->ctx[i] &&
			    r->cells[j].open_loop.due > 0)
				cells[n++] = &r->cells[j];
		qsort(cells, n, sizeof *cells, cmp_rate);
		for (size_t j = 0; j < n; j++) {
			const struct tt_rate_figures *o = &cells[j]->open_loop;
			double y = NAN, lo = NAN, hi = NAN;
			switch (kind) {
			case TT_CHART_RATE_LATENCY:
				y = o->ttft_due_ms.p50 > 0 ? o->ttft_due_ms.p50 : NAN;
				if (q90 >= 0 && q99 >= 0 && o->ttft_due_ms.n) {
					lo = o->ttft_due_ms.q[q90] > 0 ? o->ttft_due_ms.q[q90] : NAN;
					hi = o->ttft_due_ms.q[q99] > 0 ? o->ttft_due_ms.q[q99] : NAN;
				}
				break;
			case TT_CHART_RATE_THROUGHPUT:
				y = o->achieved_req_s;
				break;
			default:
				y = o->goodput_req_s;
				break;
			}
			d->x[i][j] = cells[j]->rate;
			d->y[i][j] = y;
			d->lo[i][j] = lo;
			d->hi[i][j] = hi;
			d->hollow[i][j] = isfinite(y) && cells[j]->status != TT_STATUS_VALID;
			any_hollow |= d->hollow[i][j];
			if (isfinite(y)) {
				has_data = 1;
				grow(cells[j]->rate, &d->xmin, &d->xmax);
				grow(y, &d->ymin, &d->ymax);
				grow(lo, &d->ymin, &d->ymax);
				grow(hi, &d->ymin, &d->ymax);
				d->bands |= isfinite(lo) && isfinite(hi);
			}
		}
		d->n[i] = n;
		tt__fmt_tokens(d->ctx[i], d->names[i], sizeof d->names[i]);
		/* colours in the order of the contexts drawn; one without a
		 * point has no legend line */
		colour = has_data ? n_shown++ : 0;
		d->s[i] = (struct series){.name = d->names[i], .n = n, .x = d->x[i], .y = d->y[i],
					  .hollow = d->hollow[i], .colour = colour,
					  .shape = colour, .line_w = 2.2};
		if (kind == TT_CHART_RATE_LATENCY) {
			d->s[i].lo = d->lo[i];
			d->s[i].hi = d->hi[i];
		}
		if (has_data)
			d->items[d->n_items++] =
				(struct legend_item){d->names[i], colour, colour, 0};
	}
	d->n_series = d->n_ctx;
	if (kind == TT_CHART_RATE_THROUGHPUT && isfinite(d->xmin)) {
		/* offered = ended: the line a server that keeps up stays on */
		d->ref_x[0] = d->ref_y[0] = 0;
		d->ref_x[1] = d->ref_y[1] = d->xmax;
		grow(d->xmax, &d->ymin, &d->ymax);
		d->s[d->n_series++] = (struct series){.name = "offered", .n = 2, .x = d->ref_x,
						      .y = d->ref_y, .colour = 6, .shape = -1,
						      .line_w = 1};
		d->items[d->n_items++] = (struct legend_item){"offered = ended", 6, -1, 0};
	}
	if (d->bands)
		d->items[d->n_items++] = (struct legend_item){"p90–p99 band", 6, -1, 1};
	if (kind == TT_CHART_RATE_LATENCY && r->opts.slo.ttft_ms > 0 && isfinite(d->xmin)) {
		/* the TTFT SLO as a dashed line; the axis reaches it */
		grow(r->opts.slo.ttft_ms, &d->ymin, &d->ymax);
		d->items[d->n_items++] = (struct legend_item){"TTFT SLO", 3, -1, 4};
	}
	if (any_hollow)
		d->items[d->n_items++] = (struct legend_item){"not Valid (not sustained, …)", 6, 0, 2};
}

/* The TTFT SLO across the plot, dashed, named at its right end. */
static void slo_line(struct canvas *c, const struct panel *p, double ttft_ms)
{
	double yy = tt__axis_map(&p->y, ttft_ms), th;
	char ms[32], label[64];
	struct tstyle st = tt__tstyle_make(11, 1, tt__chart_palette[3], 1, 1);
	static const double dash[] = {6, 3.5};

	if (!(yy >= p->y.p1 - 0.5 && yy <= p->y.p0 + 0.5))
		return;
	cairo_save(c->cr);
	cairo_set_dash(c->cr, dash, 2, 0);
	tt__cv_line(c, p->x.p0, yy, p->x.p1, yy, 2.0, tt__chart_palette[3]);
	cairo_restore(c->cr);
	tt_fmt_ms(ttft_ms, ms, sizeof ms);
	snprintf(label, sizeof label, "SLO %s", ms);
	tt__cv_measure(c, label, 11, 1, NULL, &th);
	/* above the line, or below it when the line is at the top */
	if (yy - th - 2 < p->y.p1)
		st.ay = 0;
	{
		/* named when the plot is wide enough; the legend names it too */
		double tw;
		tt__cv_measure(c, label, 11, 1, &tw, NULL);
		if (tw <= p->x.p1 - p->x.p0 - 8)
			tt__cv_text(c, p->x.p1 - 4, st.ay > 0 ? yy - 2 : yy + 2, label, &st);
	}
}

enum tt_code tt__chart_draw_rate(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_report *r, enum tt_chart_kind kind,
				 struct tt_chart_info *info, struct tt_error *err)
{
	struct rate_data *d = calloc(1, sizeof *d);
	struct panel p;
	struct vband band;
	double top, legend_w, flow_h, foot_h, lo = NAN, hi = NAN;
	char sub[600], foot[600], label[96];
	const char *title = tt__chart_rate_title(kind);

	if (!d)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
	memset(&p, 0, sizeof p);
	collect(r, kind, d);
	for (size_t i = 0; i < d->n_ctx && isnan(lo); i++)
		tt_report_rate_limit(r, d->ctx[i], &lo, &hi);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, title ? title : "", sub);
	snprintf(foot, sizeof foot, "%s%s",
		 kind == TT_CHART_RATE_LATENCY
			 ? "Time from each request's due time to its first token (what a user "
			   "waited; a late send counts). Line: median; band: 90th to 99th "
			   "percentile. Log scale."
		 : kind == TT_CHART_RATE_THROUGHPUT
			 ? "Requests ended in the window per second; the thin line is the "
			   "offered rate: a server that keeps up stays on it."
			 : "Requests per second meeting every SLO, judged from the due time.",
		 isfinite(lo) ? " Shaded: the SLO limit lies in this interval." : "");
	if (kind == TT_CHART_RATE_LATENCY && r->opts.slo.ttft_ms > 0) {
		size_t l = strlen(foot);
		snprintf(foot + l, sizeof foot - l,
			 " Dashed: the TTFT SLO, to be met by %g %% of requests.",
			 r->opts.slo.attain * 100);
	}
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	tt__legend_place(c, w, "Context", d->items, d->n_items, &legend_w, &flow_h);
	if (d->n_ctx == 0 || !isfinite(d->ymin)) {
		struct tstyle st = tt__tstyle_make(15, 0, tt__chart_muted, 0.5, 0.5);
		tt__cv_text(c, x + w / 2, y + h / 2,
			    kind == TT_CHART_RATE_GOODPUT && !tt_slo_active(&r->opts.slo)
				    ? "Goodput needs SLOs (--slo)."
				    : "No open-loop cells with figures in this run.",
			    &st);
		goto cleanup;
	}
	p.show_xticks = 1;
	p.series = d->s;
	p.n_series = d->n_series;
	tt__axis_fit(&p.x, AXIS_LINEAR, UNIT_SI, isfinite(hi) ? fmin(d->xmin, lo) : d->xmin,
		     isfinite(hi) ? fmax(d->xmax, hi) : d->xmax, 1);
	p.xlabel = "Offered rate (requests/s)";
	if (kind == TT_CHART_RATE_LATENCY) {
		tt__axis_fit(&p.y, AXIS_LOG10, UNIT_MS, d->ymin, d->ymax, 0);
		p.ylabel = "TTFT from the due time";
	} else {
		tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_SI, d->ymin, d->ymax, 1);
		p.ylabel = kind == TT_CHART_RATE_THROUGHPUT ? "Requests/s ended"
							    : "Goodput (requests/s meeting SLOs)";
	}
	if (isfinite(lo) && isfinite(hi)) {
		snprintf(label, sizeof label, "SLO limit %g–%g/s", lo, hi);
		band = (struct vband){lo, hi, label};
		p.band = &band;
	}
	tt__panel_layout(c, &p, x + 20, y + top + flow_h + 16, w - 40 - legend_w - 24,
			 h - top - flow_h - 16 - foot_h - 20);
	tt__panel_draw(c, &p);
	if (kind == TT_CHART_RATE_LATENCY && r->opts.slo.ttft_ms > 0)
		slo_line(c, &p, r->opts.slo.ttft_ms);
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
	return tt__canvas_check(c, title ? title : "chart", err);
}
