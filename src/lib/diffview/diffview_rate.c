/* Two runs' open-loop curves side by side (docs/diff.md "Open-loop
 * curves"): per context, each rate either run measured with the requests
 * ended per second, TTFT from the due time (median and 99th percentile)
 * and the status on each side, then each side's capacity and SLO limit
 * (docs/metrics.md M-rate, M-rate-limit).  Rates are matched exactly; a
 * rate only one side measured shows a dash on the other.  These are the
 * sides' figures, not tested changes: an open-loop cell's change is its
 * curve moving, which these rows show. */
#include "diffview/diffview_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "tokentrace/render.h"
#include "tokentrace/units.h"

static const struct tt_cell_figures *at(const struct tt_report *r, int64_t ctx, double rate)
{
	for (size_t i = 0; r && i < r->n_cells; i++)
		if (r->cells[i].phase == TT_PHASE_RATE && r->cells[i].context == ctx &&
		    r->cells[i].rate == rate)
			return &r->cells[i];
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Distinct values of the two reports' open-loop cells: contexts (rates 0)
 * or the rates of one context. */
static size_t distinct(const struct tt_report *const *rs, int rates, int64_t ctx, double *v,
		       size_t cap)
{
	size_t n = 0;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; rs[s] && i < rs[s]->n_cells; i++) {
			const struct tt_cell_figures *c = &rs[s]->cells[i];
			double x;
			size_t k;
			if (c->phase != TT_PHASE_RATE || (rates && c->context != ctx))
				continue;
			x = rates ? c->rate : (double)c->context;
			for (k = 0; k < n && v[k] != x; k++)
				;
			if (k == n && n < cap)
				v[n++] = x;
		}
	qsort(v, n, sizeof *v, cmp_d);
	return n;
}

static void cell_text(char *buf, size_t len, double v, int ms)
{
	if (!isfinite(v))
		snprintf(buf, len, "\xe2\x80\x94");
	else if (ms)
		tt_fmt_ms(v, buf, len);
	else
		tt__snprintf_c(buf, len, "%.1f", v);
}

static void limit_text(const struct tt_report *r, int64_t ctx, char *buf, size_t len)
{
	double lo, hi;
	if (!r || !tt_report_rate_limit(r, ctx, &lo, &hi))
		snprintf(buf, len, "\xe2\x80\x94");
	else if (isnan(lo))
		snprintf(buf, len, "none met");
	else if (isnan(hi))
		tt__snprintf_c(buf, len, ">= %g/s", lo);
	else
		tt__snprintf_c(buf, len, "[%g, %g)/s", lo, hi);
}

int tt__diff_render_rate(const struct tt_diff *d, int md, struct tt_buf *out)
{
	const struct tt_report *rs[2] = {
		d->base && tt_diff_side_runs(d->base) ? tt_diff_side_report(d->base, 0) : NULL,
		d->cand && tt_diff_side_runs(d->cand) ? tt_diff_side_report(d->cand, 0) : NULL};
	double ctxs[64], rates[256];
	size_t nctx = distinct(rs, 0, 0, ctxs, 64);
	const char *sep = md ? " | " : "  ";
	char line[1024];

	if (!nctx)
		return 0;
	tt_buf_puts(out, md ? "\n## Open-loop curves\n\n" : "\nOpen-loop curves (base / candidate)\n");
	for (size_t i = 0; i < nctx; i++) {
		int64_t ctx = (int64_t)ctxs[i];
		size_t nr = distinct(rs, 1, ctx, rates, 256);
		char t[8][48], cb[48], cc[48], lb[64], lc[64];

		tt_format_tokens(ctx, t[0], sizeof t[0]);
		snprintf(line, sizeof line, md ? "Context %s:\n\n" : "  context %s\n", t[0]);
		tt_buf_puts(out, line);
		if (md)
			tt_buf_puts(out, "| Rate | Ended/s base | cand | TTFT p50 due base | cand | "
					 "TTFT p99 due base | cand | Status base | cand |\n"
					 "|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
		else
			tt_buf_puts(out, "      Rate  Ended/s base / cand   TTFT p50 due base / cand   "
					 "TTFT p99 due base / cand   Status base / cand\n");
		for (size_t k = 0; k < nr; k++) {
			const struct tt_cell_figures *b = at(rs[0], ctx, rates[k]);
			const struct tt_cell_figures *c = at(rs[1], ctx, rates[k]);
			const double *qb = NULL, *qc = NULL;
			double b99 = NAN, c99 = NAN;
			/* p99 as the analysis computed it: the quantile closest to 99 */
			if (rs[0])
				for (size_t q = 0; q < rs[0]->opts.n_quantiles; q++)
					if (fabs(rs[0]->opts.quantiles[q] - 99) < 1e-9 && b &&
					    b->open_loop.ttft_due_ms.n)
						qb = &b->open_loop.ttft_due_ms.q[q];
			if (rs[1])
				for (size_t q = 0; q < rs[1]->opts.n_quantiles; q++)
					if (fabs(rs[1]->opts.quantiles[q] - 99) < 1e-9 && c &&
					    c->open_loop.ttft_due_ms.n)
						qc = &c->open_loop.ttft_due_ms.q[q];
			b99 = qb ? *qb : NAN;
			c99 = qc ? *qc : NAN;
			tt__snprintf_c(t[0], sizeof t[0], "%g/s", rates[k]);
			cell_text(t[1], sizeof t[1], b ? b->open_loop.achieved_req_s : NAN, 0);
			cell_text(t[2], sizeof t[2], c ? c->open_loop.achieved_req_s : NAN, 0);
			cell_text(t[3], sizeof t[3], b ? b->open_loop.ttft_due_ms.p50 : NAN, 1);
			cell_text(t[4], sizeof t[4], c ? c->open_loop.ttft_due_ms.p50 : NAN, 1);
			cell_text(t[5], sizeof t[5], b99, 1);
			cell_text(t[6], sizeof t[6], c99, 1);
			if (md)
				snprintf(line, sizeof line, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					 t[0], t[1], t[2], t[3], t[4], t[5], t[6],
					 b ? tt_status_name(b->status) : "\xe2\x80\x94",
					 c ? tt_status_name(c->status) : "\xe2\x80\x94");
			else
				snprintf(line, sizeof line, "  %8s  %8s / %-8s  %12s / %-12s %12s / %-12s %s / %s\n",
					 t[0], t[1], t[2], t[3], t[4], t[5], t[6],
					 b ? tt_status_name(b->status) : "\xe2\x80\x94",
					 c ? tt_status_name(c->status) : "\xe2\x80\x94");
			tt_buf_puts(out, line);
		}
		cell_text(cb, sizeof cb, rs[0] ? tt_report_rate_capacity(rs[0], ctx) : NAN, 0);
		cell_text(cc, sizeof cc, rs[1] ? tt_report_rate_capacity(rs[1], ctx) : NAN, 0);
		limit_text(rs[0], ctx, lb, sizeof lb);
		limit_text(rs[1], ctx, lc, sizeof lc);
		snprintf(line, sizeof line, "%scapacity (requests/s ended, highest): %s / %s%sSLO limit: %s / %s\n%s",
			 md ? "\n" : "  ", cb, cc, sep, lb, lc, md ? "\n" : "");
		tt_buf_puts(out, line);
	}
	return out->failed ? -1 : 0;
}
