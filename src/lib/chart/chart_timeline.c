/* The timeline chart: one cell over time (tokens per second, requests in
 * flight, the server's gauges, KV usage, with the measurement window
 * marked), from the bins chart_trace.c reads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/chart_impl.h"
#include "chart/chart_trace.h"
#include "analysis/window.h"
#include "tokentrace/gauges.h"

static long default_timeline_cell(const struct tt_manifest *m)
{
	long best = -1;
	for (size_t i = 0; i < m->n_cells; i++) {
		const struct tt_cell_info *c = &m->cells[i];
		const struct tt_cell_info *b = best >= 0 ? &m->cells[best] : NULL;
		if (c->phase != TT_PHASE_DECODE || !c->trace)
			continue;
		if (!b || c->context < b->context ||
		    (c->context == b->context && c->concurrency > b->concurrency))
			best = (long)i;
	}
	return best;
}

/* The timeline's series, in seconds since the cell started (t0): output
 * tok/s and requests in flight per bin, the server's gauges per scrape;
 * and the series and legend items drawn from them. */
struct tl_plot {
	int64_t t0;
	double span_s, bin_s;
	size_t nb, ns;                   /* bins, scrapes */
	double *xs, *tok, *act;          /* nb: bin middles, tok/s, in flight */
	double *sx, *srun, *swait, *skv; /* ns + 1: scrape times, gauges (NaN: none) */
	int have_run, have_wait, have_kv;
	struct series sa[1], sb[3], sc[1];
	size_t nsb;
	struct legend_item items[6];
	size_t n_items;
};

static void tl_plot_release(struct tl_plot *tp)
{
	free(tp->xs);
	free(tp->tok);
	free(tp->act);
	free(tp->sx);
	free(tp->srun);
	free(tp->swait);
	free(tp->skv);
}

/* The binned records of d, copied into the plot's series. */
static enum tt_code tl_plot_fill(struct tl_plot *tp, const struct tl_data *d,
				 struct tt_error *err)
{
	size_t nb = d->nb, ns = d->n_scrapes;

	tp->t0 = d->t0;
	tp->span_s = d->span_s;
	tp->bin_s = d->bin_s;
	tp->nb = nb;
	tp->ns = ns;
	tp->xs = calloc(nb, sizeof *tp->xs);
	tp->tok = calloc(nb, sizeof *tp->tok);
	tp->act = calloc(nb, sizeof *tp->act);
	tp->sx = calloc(ns + 1, sizeof *tp->sx);
	tp->srun = calloc(ns + 1, sizeof *tp->srun);
	tp->swait = calloc(ns + 1, sizeof *tp->swait);
	tp->skv = calloc(ns + 1, sizeof *tp->skv);
	if (!tp->xs || !tp->tok || !tp->act || !tp->sx || !tp->srun || !tp->swait || !tp->skv)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing the timeline");
	for (size_t b = 0; b < nb; b++) {
		tp->xs[b] = ((double)b + 0.5) * d->bin_s;
		tp->tok[b] = d->tok[b] / d->bin_s;
		tp->act[b] = d->act[b];
	}
	for (size_t i = 0; i < ns; i++) {
		const struct tl_scrape *sc = &d->scrapes[i];
		tp->sx[i] = (double)(sc->t - tp->t0) / 1e9;
		tp->srun[i] = sc->has_running ? sc->running : NAN;
		tp->swait[i] = sc->has_waiting ? sc->waiting : NAN;
		tp->skv[i] = sc->has_kv ? sc->kv : NAN;
		tp->have_run |= sc->has_running;
		tp->have_wait |= sc->has_waiting;
		tp->have_kv |= sc->has_kv;
	}
	return TT_OK;
}

/* Title and subtitle drawn; the footnote written into foot.  Returns the
 * header's height. */
static double tl_header(struct canvas *c, double x, double y, double w,
			const struct tt_manifest *m, const struct tt_cell_info *ci,
			const struct tl_plot *tp, enum tt_code read_rc, const char *damage,
			char *foot, size_t foot_len)
{
	char title[256], sub[600], ctxs[32];
	double top;

	tt__fmt_tokens(ci->context, ctxs, sizeof ctxs);
	snprintf(title, sizeof title, "Cell timeline: decode %s context × %d request%s", ctxs,
		 ci->concurrency, ci->concurrency == 1 ? "" : "s");
	if (ci->phase == TT_PHASE_PREFILL)
		snprintf(title, sizeof title, "Cell timeline: prefill %s context", ctxs);
	tt__chart_subtitle(m, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, title, sub);
	snprintf(foot, foot_len,
		 "Time from the cell's start; bins of %g s. Shaded: the measurement window "
		 "(figures use only it).%s%s%.600s",
		 tp->bin_s, tp->ns ? "" : " No /metrics scrapes in this cell.",
		 read_rc == TT_WARN ? " Damaged parts of the trace were skipped: " : "",
		 read_rc == TT_WARN ? damage : "");
	/* (the damage text is cut to fit; the CLI prints it in full) */
	return top;
}

/* One series per panel line, and a legend item for each line shown. */
static void tl_series(struct tl_plot *tp)
{
	size_t nb = tp->nb, ns = tp->ns;

	tp->sa[0] = (struct series){.name = "output tok/s", .n = nb, .x = tp->xs, .y = tp->tok,
				    .colour = 0, .shape = -1, .line_w = 1.8};
	tp->items[tp->n_items++] = (struct legend_item){"output tok/s", 0, -1, 0};
	tp->sb[tp->nsb++] = (struct series){.name = "in flight (client)", .n = nb, .x = tp->xs,
					    .y = tp->act, .colour = 6, .shape = -1,
					    .line_w = 1.6};
	tp->items[tp->n_items++] = (struct legend_item){"in flight (client)", 6, -1, 0};
	if (tp->have_run) {
		tp->sb[tp->nsb++] = (struct series){.name = "running (server)", .n = ns,
						    .x = tp->sx, .y = tp->srun, .colour = 1,
						    .shape = -1, .line_w = 1.8, .step = 1};
		tp->items[tp->n_items++] = (struct legend_item){"running (server)", 1, -1, 0};
	}
	if (tp->have_wait) {
		/* reddish purple and dashed: the orange of running and the
		 * vermillion it had were one colour to red-green colour blindness */
		tp->sb[tp->nsb++] = (struct series){.name = "waiting (server)", .n = ns,
						    .x = tp->sx, .y = tp->swait, .colour = 4,
						    .shape = -1, .line_w = 1.8, .step = 1,
						    .dash = 1};
		tp->items[tp->n_items++] = (struct legend_item){"waiting (server)", 4, -1, 4};
	}
	tp->sc[0] = (struct series){.name = "KV cache usage", .n = ns, .x = tp->sx, .y = tp->skv,
				    .colour = 2, .shape = -1, .line_w = 1.8, .step = 1};
	if (tp->have_kv)
		tp->items[tp->n_items++] = (struct legend_item){"KV cache usage", 2, -1, 0};
	tp->items[tp->n_items++] = (struct legend_item){"measurement window", 5, -1, 1};
}

/* The timeline's stacked panels: tok/s on top, requests below, KV cache
 * usage at the bottom when the server reports it. */
struct tl_panels {
	struct panel a, b, c;
	int three;
};

/* Axes, titles and series of the panels; the band when there is one. */
static void tl_axes(struct tl_panels *pn, const struct tl_plot *tp, const struct vband *band)
{
	struct panel *pa = &pn->a, *pb = &pn->b, *pc = &pn->c;
	double ymax = 0, amax = 0, span_s = tp->span_s;

	memset(pn, 0, sizeof *pn);
	pn->three = tp->have_kv;
	for (size_t b = 0; b < tp->nb; b++) {
		ymax = fmax(ymax, tp->tok[b]);
		amax = fmax(amax, tp->act[b]);
	}
	for (size_t i = 0; i < tp->ns; i++) {
		if (isfinite(tp->srun[i]))
			amax = fmax(amax, tp->srun[i]);
		if (isfinite(tp->swait[i]))
			amax = fmax(amax, tp->swait[i]);
	}
	tt__axis_fit(&pa->x, AXIS_LINEAR, UNIT_SECONDS, 0, span_s, 1);
	pa->x.hi = span_s;
	while (pa->x.n_ticks > 0 && pa->x.ticks[pa->x.n_ticks - 1] > span_s + 1e-9)
		pa->x.n_ticks--;
	pb->x = pc->x = pa->x;
	tt__axis_fit(&pa->y, AXIS_LINEAR, UNIT_SI, 0, ymax > 0 ? ymax : 1, 1);
	tt__axis_fit(&pb->y, AXIS_LINEAR, UNIT_PLAIN, 0, amax > 0 ? amax : 1, 1);
	tt__axis_fit(&pc->y, AXIS_LINEAR, UNIT_PERCENT, 0, 1, 1);
	pc->y.hi = 1.05;
	while (pc->y.n_ticks > 0 && pc->y.ticks[pc->y.n_ticks - 1] > 1.0001)
		pc->y.n_ticks--;
	pa->ylabel = "Output tok/s";
	pb->ylabel = "Requests";
	pc->ylabel = "KV cache";
	pa->series = tp->sa;
	pa->n_series = 1;
	pb->series = tp->sb;
	pb->n_series = tp->nsb;
	pc->series = tp->sc;
	pc->n_series = 1;
	if (isfinite(band->x0) && isfinite(band->x1))
		pa->band = pb->band = pc->band = band;
	pa->show_xticks = 0;
	pb->show_xticks = !pn->three;
	pc->show_xticks = 1;
	pb->xlabel = pc->xlabel = "Seconds since the cell started";
}

/* Lay the panels out one above the other in (x, area_y, pw, area_h) and
 * draw them; only the top one labels the band. */
static void tl_stack(struct canvas *c, struct tl_panels *pn, double x, double area_y, double pw,
		     double area_h, const struct vband *band)
{
	struct panel *pa = &pn->a, *pb = &pn->b, *pc = &pn->c;
	int three = pn->three;
	double hb = three ? area_h * 0.27 : area_h * 0.4;

	if (three) {
		double ha = area_h - 2 * hb - 36;
		tt__panel_layout(c, pa, x, area_y, pw, ha);
		tt__panel_layout(c, pb, x, area_y + ha + 12, pw, hb);
		tt__panel_layout(c, pc, x, area_y + ha + 12 + hb + 12, pw, hb + 12);
	} else {
		double ha = area_h - hb - 12;
		tt__panel_layout(c, pa, x, area_y, pw, ha);
		tt__panel_layout(c, pb, x, area_y + ha + 12, pw, hb);
	}
	/* Stacked panels share one left edge: the widest label decides. */
	{
		double left = fmax(pa->x.p0, fmax(pb->x.p0, three ? pc->x.p0 : 0));
		pa->x.p0 = pb->x.p0 = pc->x.p0 = left;
	}
	pb->band = pa->band ? band : NULL;
	if (pa->band) {
		struct vband nolabel = *band;
		nolabel.label = NULL;
		tt__panel_draw(c, pa);
		pb->band = &nolabel;
		pc->band = &nolabel;
		tt__panel_draw(c, pb);
		if (three)
			tt__panel_draw(c, pc);
	} else {
		tt__panel_draw(c, pa);
		tt__panel_draw(c, pb);
		if (three)
			tt__panel_draw(c, pc);
	}
}

enum tt_code tt__chart_draw_timeline(struct canvas *c, double x, double y, double w, double h,
				 const struct tt_report *r, struct tt_run *run, long cell,
				 struct chart_cache *cache, struct tt_chart_info *info,
				 struct tt_error *err)
{
	const struct tt_manifest *m = &r->manifest;
	const struct tt_cell_info *ci;
	struct tl_read local, *tr;
	struct tl_plot tp;
	struct tl_panels pn;
	struct vband band;
	enum tt_code rc, read_rc;
	double top, foot_h, legend_w, flow_h = 0;
	int flow;
	char foot[1024];

	memset(&local, 0, sizeof local);
	memset(&tp, 0, sizeof tp);
	local.cell = -1;
	if (cell < 0)
		cell = default_timeline_cell(m);
	if (cell < 0 || (size_t)cell >= m->n_cells)
		return tt_error_set(err, TT_ENOTFOUND, "%s",
				    cell < 0 ? "the run has no decode cell with a trace to show"
					     : "no such cell for the timeline");
	ci = &m->cells[cell];
	tr = cache && cache->run == run ? &cache->tl : &local;
	if (tr->cell != cell) {
		rc = tt__tl_load(run, &r->opts, ci, cell, tr,
			     tr == &local || (size_t)cell >= cache->n_cells ? NULL : &cache->gaps[cell],
			     err);
		if (rc != TT_OK)
			goto cleanup;
	}
	read_rc = tr->rc;
	rc = tl_plot_fill(&tp, &tr->d, err);
	if (rc != TT_OK)
		goto cleanup;

	top = tl_header(c, x, y, w, m, ci, &tp, read_rc, tr->msg, foot, sizeof foot);
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	tl_series(&tp);
	tt__legend_place(c, w, NULL, tp.items, tp.n_items, &legend_w, &flow_h);
	flow = flow_h > 0;

	{
		/* the window the figures used (moved or capped by the options) */
		int64_t ws, we;
		tt__measured_window(&r->opts, ci, &ws, &we);
		band.x0 = ws >= 0 ? (double)(ws - tp.t0) / 1e9 : NAN;
		band.x1 = we >= 0 ? (double)(we - tp.t0) / 1e9 : NAN;
	}
	band.label = "measurement window";

	tl_axes(&pn, &tp, &band);
	tl_stack(c, &pn, x + 20, y + top + flow_h + 14, w - 40 - legend_w - 24,
		 h - top - flow_h - 14 - foot_h - 20, &band);
	if (flow)
		tt__legend_flow(c, x + 20, y + top, w - 40, NULL, tp.items, tp.n_items, 1);
	else
		tt__legend_draw(c, x + w - 20 - legend_w, pn.a.y.p1, NULL, tp.items, tp.n_items,
				1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	if (info) {
		tt__chart_info_from_panel(info, c, &pn.a);
		info->n_series = tp.n_items;
	}
	rc = tt__canvas_check(c, "the timeline", err);
cleanup:
	tt__tl_release(&local);
	tl_plot_release(&tp);
	return rc;
}
