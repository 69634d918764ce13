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

static void sides(const struct tt_diff *d, const struct tt_report *rs[2])
{
	rs[0] = d->base && tt_diff_side_runs(d->base) ? tt_diff_side_report(d->base, 0) : NULL;
	rs[1] = d->cand && tt_diff_side_runs(d->cand) ? tt_diff_side_report(d->cand, 0) : NULL;
}

/* TTFT from the due time at the quantile 99 the side's analysis computed;
 * NaN when it computed none. */
static double due_p99(const struct tt_report *r, const struct tt_cell_figures *c)
{
	for (size_t q = 0; r && c && q < r->opts.n_quantiles; q++)
		if (fabs(r->opts.quantiles[q] - 99) < 1e-9 && c->open_loop.ttft_due_ms.n)
			return c->open_loop.ttft_due_ms.q[q];
	return NAN;
}

size_t tt__diff_rate_contexts(const struct tt_diff *d, int64_t *ctx, size_t cap)
{
	const struct tt_report *rs[2];
	double v[64];
	size_t n;

	sides(d, rs);
	n = distinct(rs, 0, 0, v, cap < 64 ? cap : 64);
	for (size_t i = 0; i < n; i++)
		ctx[i] = (int64_t)v[i];
	return n;
}

size_t tt__diff_rate_rows(const struct tt_diff *d, int64_t ctx,
			  char (*rows)[TT__DIFF_RATE_COLS][48], size_t cap)
{
	const struct tt_report *rs[2];
	double rates[256];
	size_t n;

	sides(d, rs);
	n = distinct(rs, 1, ctx, rates, cap < 256 ? cap : 256);
	for (size_t k = 0; k < n; k++) {
		const struct tt_cell_figures *b = at(rs[0], ctx, rates[k]);
		const struct tt_cell_figures *c = at(rs[1], ctx, rates[k]);
		char(*t)[48] = rows[k];
		tt__snprintf_c(t[0], sizeof t[0], "%g/s", rates[k]);
		cell_text(t[1], sizeof t[1], b ? b->open_loop.achieved_req_s : NAN, 0);
		cell_text(t[2], sizeof t[2], c ? c->open_loop.achieved_req_s : NAN, 0);
		cell_text(t[3], sizeof t[3], b ? b->open_loop.ttft_due_ms.p50 : NAN, 1);
		cell_text(t[4], sizeof t[4], c ? c->open_loop.ttft_due_ms.p50 : NAN, 1);
		cell_text(t[5], sizeof t[5], due_p99(rs[0], b), 1);
		cell_text(t[6], sizeof t[6], due_p99(rs[1], c), 1);
		snprintf(t[7], sizeof t[7], "%s", b ? tt_status_name(b->status) : "\xe2\x80\x94");
		snprintf(t[8], sizeof t[8], "%s", c ? tt_status_name(c->status) : "\xe2\x80\x94");
	}
	return n;
}

void tt__diff_rate_summary(const struct tt_diff *d, int64_t ctx, char capacity[2][48],
			   char limit[2][64])
{
	const struct tt_report *rs[2];

	sides(d, rs);
	for (int s = 0; s < 2; s++) {
		cell_text(capacity[s], sizeof capacity[s],
			  rs[s] ? tt_report_rate_capacity(rs[s], ctx) : NAN, 0);
		limit_text(rs[s], ctx, limit[s], sizeof limit[s]);
	}
}

int tt__diff_render_rate(const struct tt_diff *d, int md, struct tt_buf *out)
{
	int64_t ctxs[64];
	size_t nctx = tt__diff_rate_contexts(d, ctxs, 64);
	char(*rows)[TT__DIFF_RATE_COLS][48];
	const char *sep = md ? " | " : "  ";
	char line[1024];

	if (!nctx)
		return 0;
	rows = calloc(256, sizeof *rows);
	if (!rows)
		return -1;
	tt_buf_puts(out, md ? "\n## Open-loop curves\n\n" : "\nOpen-loop curves (base / candidate)\n");
	for (size_t i = 0; i < nctx; i++) {
		size_t nr = tt__diff_rate_rows(d, ctxs[i], rows, 256);
		char ctx[48], cap[2][48], lim[2][64];

		tt_format_tokens(ctxs[i], ctx, sizeof ctx);
		snprintf(line, sizeof line, md ? "Context %s:\n\n" : "  context %s\n", ctx);
		tt_buf_puts(out, line);
		if (md)
			tt_buf_puts(out, "| Rate | Ended/s base | cand | TTFT p50 due base | cand | "
					 "TTFT p99 due base | cand | Status base | cand |\n"
					 "|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
		else
			tt_buf_puts(out, "      Rate  Ended/s base / cand   TTFT p50 due base / cand   "
					 "TTFT p99 due base / cand   Status base / cand\n");
		for (size_t k = 0; k < nr; k++) {
			char(*t)[48] = rows[k];
			if (md)
				snprintf(line, sizeof line, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					 t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
			else
				snprintf(line, sizeof line, "  %8s  %8s / %-8s  %12s / %-12s %12s / %-12s %s / %s\n",
					 t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
			tt_buf_puts(out, line);
		}
		tt__diff_rate_summary(d, ctxs[i], cap, lim);
		snprintf(line, sizeof line, "%scapacity (requests/s ended, highest): %s / %s%sSLO limit: %s / %s\n%s",
			 md ? "\n" : "  ", cap[0], cap[1], sep, lim[0], lim[1], md ? "\n" : "");
		tt_buf_puts(out, line);
	}
	free(rows);
	return out->failed ? -1 : 0;
}
