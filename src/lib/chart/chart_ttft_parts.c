/* Where decode TTFT goes (docs/metrics.md M-ttft-parts): per decode cell
 * with the server's queue and prefill histograms, a stacked bar of the
 * server's mean queue time, mean prefill time, and the rest of the client's
 * mean TTFT (network, client, HTTP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/chart_impl.h"
#include "core/c_locale.h"

static int has_parts(const struct tt_cell_figures *f)
{
	return f->phase == TT_PHASE_DECODE && isfinite(f->queue_ms) && isfinite(f->prefill_ms) &&
	       isfinite(f->ttft_rest_ms);
}

static int cmp_cell(const void *x, const void *y)
{
	const struct tt_cell_figures *a = *(const struct tt_cell_figures *const *)x;
	const struct tt_cell_figures *b = *(const struct tt_cell_figures *const *)y;
	if (a->context != b->context)
		return a->context < b->context ? -1 : 1;
	return (a->concurrency > b->concurrency) - (a->concurrency < b->concurrency);
}

/* The stacked bars, concurrency under each, context under each group. */
static void stacks(struct canvas *c, const struct panel *p, const struct tt_cell_figures **cells,
		   size_t n)
{
	double slot = (p->x.p1 - p->x.p0) / (double)n;
	size_t g0 = 0;
	char buf[48];

	for (size_t i = 0; i < n; i++) {
		const struct tt_cell_figures *f = cells[i];
		double part[3] = {f->queue_ms, f->prefill_ms, fmax(0, f->ttft_rest_ms)};
		double cx = p->x.p0 + slot * ((double)i + 0.5), bw = slot * 0.66, base = 0;
		struct tstyle st = tt__tstyle_make(slot < 24 ? 9 : 11, 0, tt__chart_ink, 0.5, 0);

		for (int k = 0; k < 3; k++) {
			double y0 = tt__axis_map(&p->y, base), y1 = tt__axis_map(&p->y, base + part[k]);
			if (part[k] > 0)
				tt__cv_rect(c, cx - bw / 2, y1, bw, y0 - y1, tt__chart_palette[k]);
			base += part[k];
		}
		snprintf(buf, sizeof buf, "%d", f->concurrency);
		tt__cv_text(c, cx, p->y.p0 + 5, buf, &st);
		/* a context's group ends here: its label under the group */
		if (i + 1 == n || cells[i + 1]->context != f->context) {
			double gx0 = p->x.p0 + slot * (double)g0, gx1 = p->x.p0 + slot * (double)(i + 1);
			st = tt__tstyle_make(12, 1, tt__chart_ink, 0.5, 0);
			tt__fmt_tokens(f->context, buf, sizeof buf);
			tt__cv_text(c, (gx0 + gx1) / 2, p->y.p0 + 22, buf, &st);
			if (i + 1 < n)
				tt__cv_line(c, gx1, p->y.p1, gx1, p->y.p0 + 34, 1, tt__chart_grid);
			g0 = i + 1;
		}
	}
}

enum tt_code tt__chart_draw_ttft_parts(struct canvas *c, double x, double y, double w, double h,
				       const struct tt_report *r, struct tt_chart_info *info,
				       struct tt_error *err)
{
	static const struct legend_item items[] = {
		{"server queue", 0, -1, 1}, {"server prefill", 1, -1, 1}, {"rest (network, client)", 2, -1, 1}};
	const struct tt_cell_figures **cells;
	const char *foot0 = "Per decode cell (numbers: requests at once): the server's mean queue "
			    "and prefill times over the window (vLLM's histograms) and the rest of "
			    "the client's mean time to first token.";
	char foot[600];
	size_t n = 0, n_neg = 0;
	double rest_min = 0;
	double vmax = 0, top, foot_h, legend_w;
	char sub[600];
	struct panel p;

	cells = calloc(r->n_cells ? r->n_cells : 1, sizeof *cells);
	if (!cells)
		return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
	for (size_t i = 0; i < r->n_cells; i++)
		if (has_parts(&r->cells[i])) {
			const struct tt_cell_figures *f = &r->cells[i];
			double sum = f->queue_ms + f->prefill_ms + fmax(0, f->ttft_rest_ms);
			cells[n++] = f;
			vmax = sum > vmax ? sum : vmax;
			if (f->ttft_rest_ms < 0) {
				n_neg++;
				rest_min = fmin(rest_min, f->ttft_rest_ms);
			}
		}
	/* a negative rest is drawn as none: say so rather than hide it */
	if (n_neg)
		tt__snprintf_c(foot, sizeof foot, "%s In %zu cell%s the client's TTFT was below queue "
			       "+ prefill (rest down to %.2f ms), drawn as no rest.", foot0, n_neg,
			       n_neg == 1 ? "" : "s", rest_min);
	else
		snprintf(foot, sizeof foot, "%s", foot0);
	qsort(cells, n, sizeof *cells, cmp_cell);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, tt__chart_kind_title(TT_CHART_TTFT_PARTS),
			       sub);
	if (n == 0) {
		struct tstyle st = tt__tstyle_make(14, 0, tt__chart_muted, 0.5, 0.5);
		st.max_w = w - 60;
		st.fit = 1;
		tt__cv_text(c, x + w / 2, y + h / 2,
			    "No server queue and prefill timings in this run (vLLM's "
			    "request_queue_time_seconds and request_prefill_time_seconds).",
			    &st);
		free(cells);
		return tt__canvas_check(c, "the ttft-parts chart", err);
	}
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	legend_w = tt__legend_draw(c, 0, 0, "Time to first token", items, 3, 0);
	memset(&p, 0, sizeof p);
	p.ylabel = "Mean time to first token";
	tt__axis_fit(&p.x, AXIS_LINEAR, UNIT_PLAIN, 0, 1, 0);
	p.x.n_ticks = 0; /* categories are labelled by the bars */
	tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_MS, 0, vmax * 1.08, 1);
	tt__panel_layout(c, &p, x + 20, y + top + 16, w - 40 - legend_w - 24,
			 h - top - 16 - foot_h - 56);
	tt__panel_draw(c, &p);
	stacks(c, &p, cells, n);
	tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Time to first token", items, 3, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	if (info) {
		tt__chart_info_from_panel(info, c, &p);
		info->cols = n;
		info->n_series = 3;
	}
	free(cells);
	return tt__canvas_check(c, "the ttft-parts chart", err);
}
