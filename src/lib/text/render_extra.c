/* Tables beyond the seed's layout, shared by the term and markdown reports
 * (and the html/pdf tables): tails at the chosen quantiles with the
 * longest stall and the share of long gaps (docs/metrics.md M-stall), and
 * goodput under SLOs (M-goodput). */
#include "text/render_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"

#define MIDDOT " \xc2\xb7 "

static void xset(struct tt__table *t, size_t row, size_t col, const char *s)
{
	tt__table_set(t, row, col, s, TT__TONE_NONE);
}

/* The two key columns every decode table opens its row with: context and
 * concurrency. */
static void row_key(struct tt__table *t, size_t row, const struct tt_cell_figures *c)
{
	char s[32];

	tt__render_context(c->context, s, sizeof s);
	xset(t, row, 0, s);
	snprintf(s, sizeof s, "%d", c->concurrency);
	xset(t, row, 1, s);
}

static void fmt_ms1(double v, char *buf, size_t len)
{
	tt_fmt_fixed1(v, buf, len);
	if (isfinite(v))
		strncat(buf, " ms", len - strlen(buf) - 1);
}

/* A share as a percentage: "12%", "0.25%" (two significant decimals below 1 %). */
static void fmt_share(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, TT_DASH);
	else if (v * 100 >= 1 || v == 0)
		tt__snprintf_c(buf, len, "%.0f%%", v * 100);
	else
		tt__snprintf_c(buf, len, "%.2f%%", v * 100);
}

void tt__render_stall_head(const struct tt_report *r, char *buf, size_t len)
{
	char num[32];

	tt__fmt_plain(r->opts.stall_ms > 0 ? r->opts.stall_ms : 100, 3, num, sizeof num);
	snprintf(buf, len, "Gaps > %s ms", num);
}

static int shows_decode(const struct tt_cell_figures *c)
{
	return tt__render_has_decode_figures(c);
}

int tt__render_tails_table(const struct tt_report *r, const size_t *order, struct tt__table *t)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs), i, k, col, qi[TT_MAX_QUANTILES];
	char s[64], qkey[32];

	/* columns in ascending percentile order (html and pdf append 10 and 90
	 * for the charts' bands) */
	for (k = 0; k < nq && k < TT_MAX_QUANTILES; k++) {
		size_t j = k;
		for (; j > 0 && qs[qi[j - 1]] > qs[k]; j--)
			qi[j] = qi[j - 1];
		qi[j] = k;
	}
	if (nq > TT_MAX_QUANTILES)
		nq = TT_MAX_QUANTILES;
	if (tt__table_init(t, 2 + 2 * (nq + 1) + 2))
		return -1;
	xset(t, 0, 0, "Context");
	xset(t, 0, 1, "Requests at once");
	col = 2;
	for (int d = 0; d < 2; d++) {
		int med = 0;
		for (k = 0; k <= nq; k++) {
			double q = k < nq ? qs[qi[k]] : 101;
			if (!med && q >= 50) { /* the median in its place */
				xset(t, 0, col++, d == 0 ? "TTFT p50" : "TBT p50");
				med = 1;
			}
			if (k == nq || q == 50)
				continue;
			tt__render_qkey(q, qkey, sizeof qkey);
			snprintf(s, sizeof s, "%s %s", d == 0 ? "TTFT" : "TBT", qkey);
			xset(t, 0, col++, s);
		}
	}
	xset(t, 0, col++, "Longest stall");
	tt__render_stall_head(r, s, sizeof s);
	xset(t, 0, col++, s);
	t->ncols = col < t->ncols ? col : t->ncols;
	for (k = 1; k < t->ncols; k++)
		t->align[k] = TT__ALIGN_RIGHT;
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_DECODE || !shows_decode(c))
			continue;
		row_key(t, row, c);
		col = 2;
		for (int d = 0; d < 2; d++) {
			const struct tt_dist *dist = d == 0 ? &c->ttft_ms : &c->tbt_ms;
			int med = 0;
			for (k = 0; k <= nq; k++) {
				double q = k < nq ? qs[qi[k]] : 101;
				if (!med && q >= 50) {
					fmt_ms1(dist->p50, s, sizeof s);
					xset(t, row, col++, s);
					med = 1;
				}
				if (k == nq || q == 50)
					continue;
				if (!tt__render_q_short(dist, q, s, sizeof s))
					fmt_ms1(dist->n ? dist->q[qi[k]] : NAN, s, sizeof s);
				xset(t, row, col++, s);
			}
		}
		fmt_ms1(c->longest_stall_ms, s, sizeof s);
		xset(t, row, col++, s);
		fmt_share(c->gaps_over_share, s, sizeof s);
		xset(t, row, col++, s);
		t->nrows++;
	}
	return 0;
}

/* The chosen quantiles' indices in ascending percentile order; returns
 * how many (at most TT_MAX_QUANTILES). */
static size_t sorted_quantiles(const struct tt_report *r, const double **qs, size_t *qi)
{
	size_t nq = tt__render_quantiles(r, qs), k;

	if (nq > TT_MAX_QUANTILES)
		nq = TT_MAX_QUANTILES;
	for (k = 0; k < nq; k++) {
		size_t j = k;
		for (; j > 0 && (*qs)[qi[j - 1]] > (*qs)[k]; j--)
			qi[j] = qi[j - 1];
		qi[j] = k;
	}
	return nq;
}

/* The median and the chosen quantiles of one figure, in ascending order,
 * from column col: the header ("E2E p90") when d is NULL, else the values
 * ("needs n>=N" when too few samples support one, M-pct).  Returns the
 * next column. */
static size_t quantile_cols(struct tt__table *t, size_t row, size_t col, const char *name,
			    const struct tt_dist *d, const double *qs, const size_t *qi, size_t nq)
{
	char s[64], qkey[32];
	int med = 0;

	for (size_t k = 0; k <= nq; k++) {
		double q = k < nq ? qs[qi[k]] : 101;
		if (!med && q >= 50) { /* the median in its place */
			if (d)
				fmt_ms1(d->p50, s, sizeof s);
			else
				snprintf(s, sizeof s, "%s p50", name);
			if (!d)
				t->prio[col] = 0; /* medians stay on narrow terminals */
			xset(t, row, col++, s);
			med = 1;
		}
		if (k == nq || q == 50)
			continue;
		if (d) {
			if (!tt__render_q_short(d, q, s, sizeof s))
				fmt_ms1(d->n ? d->q[qi[k]] : NAN, s, sizeof s);
		} else {
			tt__render_qkey(q, qkey, sizeof qkey);
			snprintf(s, sizeof s, "%s %s", name, qkey);
			/* narrow terminals drop the tails nearest the median first */
			t->prio[col] = (q >= 99 ? 100 : 200) + (int)col;
		}
		xset(t, row, col++, s);
	}
	return col;
}

int tt__render_latency_table(const struct tt_report *r, const size_t *order, struct tt__table *t)
{
	static const char *const names[] = {"TTFT", "TBT", "E2E"};
	const double *qs;
	size_t qi[TT_MAX_QUANTILES], nq = sorted_quantiles(r, &qs, qi), i, k, col;
	char s[64];

	if (tt__table_init(t, 4 + 3 * (nq + 1) + 1))
		return -1;
	xset(t, 0, 0, "Context");
	xset(t, 0, 1, "Requests at once");
	xset(t, 0, 2, "Status");
	xset(t, 0, 3, "Req/s");
	col = 4;
	for (k = 0; k < 3; k++)
		col = quantile_cols(t, 0, col, names[k], NULL, qs, qi, nq);
	xset(t, 0, col++, "Errors");
	t->ncols = col; /* the median counted once when it is also chosen */
	for (k = 0; k < t->ncols; k++)
		t->align[k] = k == 0 || k == 2 ? TT__ALIGN_LEFT : TT__ALIGN_RIGHT;
	/* narrow terminals drop the tails (quantile_cols), then the errors,
	 * then the status (the tables above show it), never the keys, the
	 * rate or the medians: the table fits 72 columns */
	t->prio[t->ncols - 1] = 50;
	t->prio[2] = 40;
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		const struct tt_dist *d[3] = {&c->ttft_ms, &c->tbt_ms, &c->e2e_ms};
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_DECODE || !shows_decode(c))
			continue;
		row_key(t, row, c);
		tt__table_set(t, row, 2, tt_status_name(c->status), tt__status_tone(c->status));
		if (row < t->cap)
			t->row_status[row] = (int)c->status;
		tt__fmt_plain(c->completed_req_s, 2, s, sizeof s); /* M-req-rate */
		xset(t, row, 3, s[0] ? s : TT_DASH);
		col = 4;
		for (k = 0; k < 3; k++)
			col = quantile_cols(t, row, col, NULL, d[k], qs, qi, nq);
		tt_fmt_int(c->errors >= 0 ? (double)c->errors : NAN, s, sizeof s);
		tt__table_set(t, row, col, s, c->errors > 0 ? TT__TONE_BAD : TT__TONE_NONE);
		t->nrows++;
	}
	return 0;
}

/* One matrix entry's lines: the rate, the status when not Valid, the
 * median TTFT, the errors; a cell not run shows its status alone. */
static void matrix_entry(const struct tt_cell_figures *c, char *buf, size_t len)
{
	char rate[64], ttft[64], errs[64] = "", st[96] = "";

	if (!c) {
		snprintf(buf, len, TT_DASH);
		return;
	}
	if (!tt__render_has_counts(c)) {
		snprintf(buf, len, "%s", tt_status_name(c->status));
		return;
	}
	tt_fmt_rate(c->total_tok_s, rate, sizeof rate);
	tt_fmt_ms(c->ttft_ms.p50, ttft, sizeof ttft);
	if (c->errors > 0)
		snprintf(errs, sizeof errs, "\n%ld error%s", c->errors, c->errors == 1 ? "" : "s");
	if (c->status != TT_STATUS_VALID)
		snprintf(st, sizeof st, "\n%s", tt_status_name(c->status));
	snprintf(buf, len, "%s%s\n%s TTFT%s", rate, st, ttft, errs);
}

int tt__render_matrix_table(const struct tt_report *r, struct tt__table *t, size_t *nctx_out,
			    size_t *nconc_out)
{
	int64_t *ctxs = malloc((r->n_cells ? r->n_cells : 1) * sizeof *ctxs);
	int64_t *concs = malloc((r->n_cells ? r->n_cells : 1) * sizeof *concs);
	const struct tt_cell_figures **grid = NULL;
	size_t nctx = 0, nconc = 0;
	int rc = -1;
	char s[256];

	memset(t, 0, sizeof *t);
	if (!ctxs || !concs)
		goto done;
	nctx = tt__render_distinct(r, TT_PHASE_DECODE, 0, ctxs, r->n_cells);
	nconc = tt__render_distinct(r, TT_PHASE_DECODE, 1, concs, r->n_cells);
	if (!nctx || !nconc) {
		rc = 0;
		goto done;
	}
	grid = tt__render_grid(r, ctxs, nctx, concs, nconc);
	if (!grid) {
		rc = nctx * nconc > TT__RENDER_MAX_GRID ? 1 : -1;
		goto done;
	}
	if (tt__table_init(t, nconc + 1))
		goto done;
	xset(t, 0, 0, "Context");
	for (size_t j = 0; j < nconc; j++) {
		snprintf(s, sizeof s, "%lld", (long long)concs[j]);
		xset(t, 0, j + 1, s);
		t->align[j + 1] = TT__ALIGN_RIGHT;
	}
	for (size_t i = 0; i < nctx; i++) {
		size_t row = tt__table_add_row(t);

		if (row == (size_t)-1)
			break;
		tt__render_context(ctxs[i], s, sizeof s);
		xset(t, row, 0, s);
		for (size_t j = 0; j < nconc; j++) {
			const struct tt_cell_figures *c = grid[i * nconc + j];

			matrix_entry(c, s, sizeof s);
			tt__table_set(t, row, j + 1, s,
				      c && c->status != TT_STATUS_VALID ? tt__status_tone(c->status)
									 : TT__TONE_NONE);
		}
	}
	rc = tt__table_failed(t) ? -1 : 0;
	if (rc)
		tt__table_free(t);
done:
	if (nctx_out)
		*nctx_out = nctx;
	if (nconc_out)
		*nconc_out = nconc;
	free(grid);
	free(ctxs);
	free(concs);
	return rc;
}

int tt__render_goodput_table(const struct tt_report *r, const size_t *order,
			     struct tt__table *t)
{
	static const char *const heads[] = {"Context", "Requests at once", "Status",
					    "Requests judged", "Met SLOs", "Share",
					    "Goodput req/s", "Goodput tok/s", "Meets SLOs"};
	size_t i, k;
	char s[64];

	if (tt__table_init(t, sizeof heads / sizeof *heads))
		return -1;
	for (k = 0; k < t->ncols; k++) {
		xset(t, 0, k, heads[k]);
		t->align[k] = (k != 0 && k != 2 && k != 8) ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_DECODE)
			continue;
		row_key(t, row, c);
		xset(t, row, 2, tt_status_name(c->status));
		if (!shows_decode(c)) {
			for (k = 3; k < t->ncols; k++)
				xset(t, row, k, TT_DASH);
			t->nrows++;
			continue;
		}
		tt_fmt_int((double)c->slo_judged, s, sizeof s);
		xset(t, row, 3, s);
		tt_fmt_int((double)c->slo_met, s, sizeof s);
		xset(t, row, 4, s);
		fmt_share(c->slo_share, s, sizeof s);
		xset(t, row, 5, s);
		tt__fmt_plain(c->goodput_req_s, 2, s, sizeof s);
		xset(t, row, 6, s[0] ? s : TT_DASH);
		tt_fmt_rate(c->goodput_tok_s, s, sizeof s);
		xset(t, row, 7, s);
		xset(t, row, 8, c->slo_judged == 0 ? TT_DASH : c->slo_ok ? "yes" : "no");
		t->nrows++;
	}
	return 0;
}

/* The table is shown for the server's timings or speculative decoding
 * counters (real engines), and with the tails (--quantiles, --stalls) for
 * tokens per chunk alone: a synthetic run's default report keeps the
 * seed's layout. */
static int has_server_parts(const struct tt_report *r, const struct tt_cell_figures *c)
{
	return c->phase == TT_PHASE_DECODE && shows_decode(c) &&
	       (isfinite(c->queue_ms) || isfinite(c->prefill_ms) || isfinite(c->spec_acceptance) ||
		c->cached_share < 0.5 || c->server_cache_hit_rate < 0.5 ||
		(r->opts.show_tails && c->chunks > 0));
}

int tt__render_server_parts_table(const struct tt_report *r, const size_t *order,
				  struct tt__table *t)
{
	static const char *const heads[] = {
		"Context", "Requests at once", "Tokens per chunk", "Chunks > 1 token", "TTFT (mean)",
		"Queue", "Prefill", "Rest", "Spec acceptance", "Accepted length", "Prompt cached",
		"Server cache hits"};
	size_t i, k, any = 0;
	char s[64];

	if (tt__table_init(t, sizeof heads / sizeof *heads))
		return -1;
	for (i = 0; i < r->n_cells; i++)
		any += has_server_parts(r, &r->cells[i]);
	if (!any)
		return 0;
	for (k = 0; k < t->ncols; k++) {
		xset(t, 0, k, heads[k]);
		t->align[k] = (k != 0) ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_DECODE || !shows_decode(c))
			continue;
		row_key(t, row, c);
		tt__fmt_plain(c->tokens_per_chunk, 2, s, sizeof s);
		xset(t, row, 2, s[0] ? s : TT_DASH);
		fmt_share(c->chunks > 0 ? (double)c->multi_token_chunks / (double)c->chunks : NAN, s,
			  sizeof s);
		xset(t, row, 3, s);
		/* M-ttft-parts: the split is of the mean TTFT of the requests the
		 * server's histograms count, so beside it that mean, which the
		 * parts add up to; M-ttft's mean (other requests) only where the
		 * split is unknown */
		if (isfinite(c->queue_ms) && isfinite(c->prefill_ms) && isfinite(c->ttft_rest_ms))
			fmt_ms1(c->queue_ms + c->prefill_ms + c->ttft_rest_ms, s, sizeof s);
		else
			fmt_ms1(c->ttft_ms.mean, s, sizeof s);
		xset(t, row, 4, s);
		fmt_ms1(c->queue_ms, s, sizeof s);
		xset(t, row, 5, s);
		fmt_ms1(c->prefill_ms, s, sizeof s);
		xset(t, row, 6, s);
		fmt_ms1(c->ttft_rest_ms, s, sizeof s);
		xset(t, row, 7, s);
		fmt_share(c->spec_acceptance, s, sizeof s);
		xset(t, row, 8, s);
		tt__fmt_plain(c->spec_accepted_len, 2, s, sizeof s);
		xset(t, row, 9, s[0] ? s : TT_DASH);
		fmt_share(c->cached_share, s, sizeof s);
		xset(t, row, 10, s);
		fmt_share(c->server_cache_hit_rate, s, sizeof s);
		xset(t, row, 11, s);
		t->nrows++;
	}
	return 0;
}

int tt__render_prefill_repeats_table(const struct tt_report *r, const size_t *order,
				     struct tt__table *t)
{
	static const char *const heads[] = {"Context", "Scouts", "Prompt tok/s (median)",
					    "TTFT (median)", "TTFT min", "TTFT max", "Spread"};
	size_t i, k, any = 0;
	char s[64];

	if (tt__table_init(t, sizeof heads / sizeof *heads))
		return -1;
	for (i = 0; i < r->n_cells; i++)
		any += r->cells[i].phase == TT_PHASE_PREFILL && r->cells[i].ttft_ms.n > 1;
	if (!any)
		return 0;
	for (k = 0; k < t->ncols; k++) {
		xset(t, 0, k, heads[k]);
		t->align[k] = (k != 0) ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		const struct tt_dist *d = &c->ttft_ms;
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_PREFILL || !tt__render_has_counts(c))
			continue;
		tt__render_context(c->context, s, sizeof s);
		xset(t, row, 0, s);
		tt_fmt_int((double)d->n, s, sizeof s);
		xset(t, row, 1, s);
		tt_fmt_rate(c->total_tok_s, s, sizeof s);
		xset(t, row, 2, s);
		fmt_ms1(d->p50, s, sizeof s);
		xset(t, row, 3, s);
		fmt_ms1(d->min, s, sizeof s);
		xset(t, row, 4, s);
		fmt_ms1(d->max, s, sizeof s);
		xset(t, row, 5, s);
		/* (max - min) / median: how far one sample could be off */
		fmt_share(d->n > 1 && d->p50 > 0 ? (d->max - d->min) / d->p50 : NAN, s, sizeof s);
		xset(t, row, 6, s);
		t->nrows++;
	}
	return 0;
}

void tt__render_slo_sentence(const struct tt_report *r, char *buf, size_t len)
{
	const struct tt_slo *s = &r->opts.slo;
	char parts[3][128], num[32], q[32];
	size_t n = 0;

	buf[0] = '\0';
	if (!tt_slo_active(s))
		return;
	if (s->ttft_ms > 0) {
		tt__fmt_plain(s->ttft_ms, 3, num, sizeof num);
		snprintf(parts[n++], sizeof parts[0], "TTFT \xe2\x89\xa4 %s ms", num);
	}
	if (s->tbt_ms > 0) {
		tt__fmt_plain(s->tbt_ms, 3, num, sizeof num);
		tt__fmt_plain(s->tbt_pct, 3, q, sizeof q);
		snprintf(parts[n++], sizeof parts[0],
			 "time between tokens (p%s of each request) \xe2\x89\xa4 %s ms", q, num);
	}
	if (s->e2e_ms > 0) {
		tt__fmt_plain(s->e2e_ms, 3, num, sizeof num);
		snprintf(parts[n++], sizeof parts[0], "end-to-end latency \xe2\x89\xa4 %s ms", num);
	}
	tt__fmt_plain(s->attain * 100, 3, q, sizeof q);
	snprintf(buf, len,
		 "SLOs: %s%s%s%s%s; a request meets them when every bound holds, and a cell when "
		 "at least %s%% of its measured requests that ended in the window did.",
		 parts[0], n > 1 ? ", " : "", n > 1 ? parts[1] : "", n > 2 ? ", " : "",
		 n > 2 ? parts[2] : "", q);
}

void tt__render_slo_max_line(const struct tt_report *r, char *buf, size_t len)
{
	int64_t *ctx;
	size_t n, i, used = 0;

	buf[0] = '\0';
	if (!tt_slo_active(&r->opts.slo) || !r->n_cells)
		return;
	ctx = malloc(r->n_cells * sizeof *ctx);
	if (!ctx)
		return;
	n = tt__render_distinct(r, TT_PHASE_DECODE, 0, ctx, r->n_cells);
	for (i = 0; i < n && used + 1 < len; i++) {
		char c[32], v[32];
		int best = tt_report_slo_max_concurrency(r, ctx[i]);
		tt__render_context(ctx[i], c, sizeof c);
		if (best > 0)
			snprintf(v, sizeof v, "%d", best);
		else
			snprintf(v, sizeof v, "none");
		used += (size_t)snprintf(buf + used, len - used, "%s%s: %s", i ? MIDDOT : "", c, v);
		if (used >= len)
			used = len - 1;
	}
	free(ctx);
}

/* Reasoning models (docs/metrics.md M-reasoning): shown only when some
 * decode cell streamed reasoning, so every other run keeps the seed's layout. */
int tt__render_reasoning_table(const struct tt_report *r, const size_t *order,
			       struct tt__table *t)
{
	static const char *const heads[] = {
		"Context", "Requests at once", "Reasoning tokens", "Answer tokens",
		"Reasoning share", "TTFT (median)", "First reasoning (median)",
		"First answer (median)"};
	size_t i, k, any = 0;
	char s[64];

	if (tt__table_init(t, sizeof heads / sizeof *heads))
		return -1;
	for (i = 0; i < r->n_cells; i++)
		any += r->cells[i].phase == TT_PHASE_DECODE && shows_decode(&r->cells[i]) &&
		       r->cells[i].reasoning_tokens > 0;
	if (!any)
		return 0;
	for (k = 0; k < t->ncols; k++) {
		xset(t, 0, k, heads[k]);
		t->align[k] = (k != 0) ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		size_t row = t->nrows;
		long rt = c->reasoning_tokens, at = c->answer_tokens;

		if (c->phase != TT_PHASE_DECODE || !shows_decode(c))
			continue;
		row_key(t, row, c);
		if (rt >= 0)
			tt_fmt_int((double)rt, s, sizeof s);
		xset(t, row, 2, rt >= 0 ? s : TT_DASH);
		if (at >= 0)
			tt_fmt_int((double)at, s, sizeof s);
		xset(t, row, 3, at >= 0 ? s : TT_DASH);
		fmt_share(rt >= 0 && at >= 0 && rt + at > 0 ? (double)rt / (double)(rt + at) : NAN,
			  s, sizeof s);
		xset(t, row, 4, s);
		fmt_ms1(c->ttft_ms.p50, s, sizeof s);
		xset(t, row, 5, s);
		fmt_ms1(c->ttfr_ms.p50, s, sizeof s);
		xset(t, row, 6, s);
		fmt_ms1(c->ttfa_ms.p50, s, sizeof s);
		xset(t, row, 7, s);
		t->nrows++;
	}
	return 0;
}
