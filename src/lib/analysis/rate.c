/* Figures of an open-loop cell (docs/metrics.md M-rate, M-sustained,
 * M-rate-limit): latencies from the due time beside the send time, the
 * send lateness, the achieved rate and goodput judged from the due time. */
#include "analysis/rate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One request due in the window. */
struct due_req {
	int64_t due;
	uint64_t order;	/* (slot, seq): ties of due time in a stated order */
	double late_ms, ttft_due_ms, ttft_sent_ms, e2e_due_ms; /* NaN: none */
};

struct tt__rate_acc {
	int64_t ws, we;
	struct due_req *v;
	size_t n, cap;
	long ended, unanswered;
	long tokens;
	struct tt_slo_judge *judge;
	long judged, met;
	int oom;
};

void tt__rate_blank(struct tt_rate_figures *f)
{
	struct tt_dist *d[] = {&f->lateness_ms, &f->ttft_due_ms, &f->ttft_sent_ms, &f->e2e_due_ms};

	memset(f, 0, sizeof *f);
	f->offered_req_s = f->scheduled_req_s = f->achieved_req_s = f->out_tok_s = NAN;
	f->ttft_due_growth_ms = f->slo_share = f->goodput_req_s = f->lateness_p99_ms = NAN;
	f->ttft_due_trend_ms_s = f->ttft_due_trend_se_ms_s = NAN;
	for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
		d[i]->n = 0;
		d[i]->min = d[i]->max = d[i]->mean = d[i]->p50 = NAN;
		for (size_t k = 0; k < TT_MAX_QUANTILES; k++)
			d[i]->q[k] = NAN;
	}
}

enum tt_code tt__rate_acc_create(const struct tt_slo *slo, int64_t ws, int64_t we,
				 struct tt__rate_acc **out, struct tt_error *err)
{
	struct tt__rate_acc *a = calloc(1, sizeof *a);

	if (!a)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	a->ws = ws;
	a->we = we;
	if (slo && tt_slo_active(slo)) {
		enum tt_code rc = tt_slo_judge_create(slo, &a->judge, err);
		if (tt_failed(rc)) {
			free(a);
			return rc;
		}
	}
	*out = a;
	return TT_OK;
}

void tt__rate_acc_request(struct tt__rate_acc *a, const struct tt_request *r)
{
	int64_t first = -1;
	int ended = r->finish == TT_FINISH_STOP || r->finish == TT_FINISH_LENGTH;
	struct due_req *q;

	if (a->ws < 0)
		return;
	for (size_t i = 0; i < r->n_chunks; i++) {
		if (r->chunks[i].tokens == 0)
			continue;
		if (first < 0)
			first = r->chunks[i].t_ns;
		if (r->chunks[i].t_ns >= a->ws && r->chunks[i].t_ns < a->we)
			a->tokens += r->chunks[i].tokens; /* M-rate out_tok_s: any role */
	}
	/* achieved: requests of any role that ended in the window */
	if (ended && r->t_end_ns >= a->ws && r->t_end_ns < a->we)
		a->ended++;
	if (r->role != TT_ROLE_MEASURED || r->t_sched_ns < a->ws || r->t_sched_ns >= a->we)
		return;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 256;
		struct due_req *nv = realloc(a->v, nc * sizeof *nv);
		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = nc;
	}
	q = &a->v[a->n++];
	q->due = r->t_sched_ns;
	q->order = ((uint64_t)(uint32_t)r->slot << 32) | r->seq;
	q->late_ms = (double)(r->t_send_ns - r->t_sched_ns) / 1e6;
	q->ttft_due_ms = q->ttft_sent_ms = q->e2e_due_ms = NAN;
	if (first >= 0) {
		q->ttft_due_ms = (double)(first - r->t_sched_ns) / 1e6;
		q->ttft_sent_ms = (double)(first - r->t_send_ns) / 1e6;
	} else if (r->finish == TT_FINISH_CUT) {
		/* Still waiting when cut: it waited at least this long. */
		q->ttft_due_ms = (double)(r->t_end_ns - r->t_sched_ns) / 1e6;
		a->unanswered++;
	}
	/* M-rate: e2e_due over every request of W, whatever its end (finished,
	 * cut, failed, aborted: the time from its due time to its end) */
	q->e2e_due_ms = (double)(r->t_end_ns - r->t_sched_ns) / 1e6;
	if (a->judge) {
		/* M-slo from the due time: the request as if sent when due.  A
		 * request cut after the drain did not end in time: judged, not met. */
		struct tt_request due = *r;
		struct tt_slo_verdict v;
		due.t_send_ns = r->t_sched_ns;
		if (r->finish == TT_FINISH_CUT || r->finish == TT_FINISH_ABORTED) {
			a->judged += r->finish == TT_FINISH_CUT;
		} else if (tt_slo_judge_request(a->judge, &due, &v)) {
			a->oom = 1;
		} else {
			a->judged++;
			a->met += v.meets;
		}
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Summary over every finite value (zeros kept: a send exactly on time is
 * a lateness of 0, not a missing sample). */
static void summarize(double *v, size_t n, const struct tt_analysis_opts *o, struct tt_dist *d)
{
	size_t k = 0;
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	if (!k)
		return;
	qsort(v, k, sizeof *v, cmp_double);
	for (size_t i = 0; i < k; i++)
		sum += v[i];
	d->n = k;
	d->min = v[0];
	d->max = v[k - 1];
	d->mean = sum / (double)k;
	d->p50 = tt_percentile_sorted(v, k, 50);
	for (size_t i = 0; i < o->n_quantiles && i < TT_MAX_QUANTILES; i++)
		d->q[i] = tt_percentile_sorted(v, k, o->quantiles[i]);
}

static int cmp_due(const void *x, const void *y)
{
	const struct due_req *a = x, *b = y;
	if (a->due != b->due)
		return (a->due > b->due) - (a->due < b->due);
	return (a->order > b->order) - (a->order < b->order);
}

/* p50 of ttft_due over v[lo, hi) (NaN none); scratch holds hi - lo values. */
static double quarter_p50(const struct due_req *v, size_t lo, size_t hi, double *scratch)
{
	size_t k = 0;
	for (size_t i = lo; i < hi; i++)
		if (isfinite(v[i].ttft_due_ms))
			scratch[k++] = v[i].ttft_due_ms;
	if (!k)
		return NAN;
	qsort(scratch, k, sizeof *scratch, cmp_double);
	return tt_percentile_sorted(scratch, k, 50);
}

/* M-sustained's trend: least-squares slope of ttft_due (ms) on the due
 * time (s from ws) over the window's requests that have one, and the
 * slope's standard error (residual variance over n - 2). */
static void trend(const struct due_req *v, size_t n, int64_t ws, double *slope, double *se)
{
	double sx = 0, sy = 0, mx, my, sxx = 0, sxy = 0, rss = 0, b, a0;
	size_t k = 0;

	*slope = *se = NAN;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i].ttft_due_ms)) {
			sx += (double)(v[i].due - ws) / 1e9;
			sy += v[i].ttft_due_ms;
			k++;
		}
	if (k < TT_RATE_TREND_MIN_N)
		return;
	mx = sx / (double)k;
	my = sy / (double)k;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i].ttft_due_ms)) {
			double dx = (double)(v[i].due - ws) / 1e9 - mx;
			sxx += dx * dx;
			sxy += dx * (v[i].ttft_due_ms - my);
		}
	if (!(sxx > 0))
		return; /* every request due at one instant: no time to trend over */
	b = sxy / sxx;
	a0 = my - b * mx;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i].ttft_due_ms)) {
			double r = v[i].ttft_due_ms - a0 - b * ((double)(v[i].due - ws) / 1e9);
			rss += r * r;
		}
	*slope = b;
	*se = sqrt(rss / (double)(k - 2) / sxx);
}

int tt__rate_acc_finish(struct tt__rate_acc *a, const struct tt_analysis_opts *o,
			double offered, struct tt_rate_figures *f)
{
	double w_s, *tmp;
	double *cols[4];

	tt__rate_blank(f);
	f->offered_req_s = offered;
	if (a->ws < 0 || a->we <= a->ws)
		return a->oom;
	w_s = (double)(a->we - a->ws) / 1e9;
	f->due = (long)a->n;
	f->unanswered = a->unanswered;
	f->scheduled_req_s = (double)a->n / w_s;
	f->achieved_req_s = (double)a->ended / w_s;
	f->ended = a->ended;
	f->out_tok_s = (double)a->tokens / w_s;
	if (a->judge) {
		f->slo_judged = a->judged;
		f->slo_met = a->met;
		f->goodput_req_s = (double)a->met / w_s;
		if (a->judged > 0) {
			f->slo_share = (double)a->met / (double)a->judged;
			f->slo_ok = (double)a->met >= o->slo.attain * (double)a->judged - 1e-9;
		}
	}
	if (!a->n)
		return a->oom;
	tmp = malloc(4 * a->n * sizeof *tmp);
	if (!tmp)
		return 1;
	for (int c = 0; c < 4; c++)
		cols[c] = tmp + (size_t)c * a->n;
	for (size_t i = 0; i < a->n; i++) {
		cols[0][i] = a->v[i].late_ms;
		cols[1][i] = a->v[i].ttft_due_ms;
		cols[2][i] = a->v[i].ttft_sent_ms;
		cols[3][i] = a->v[i].e2e_due_ms;
	}
	summarize(cols[0], a->n, o, &f->lateness_ms);
	if (f->lateness_ms.n)
		f->lateness_p99_ms = tt_percentile_sorted(cols[0], f->lateness_ms.n, 99);
	summarize(cols[1], a->n, o, &f->ttft_due_ms);
	summarize(cols[2], a->n, o, &f->ttft_sent_ms);
	summarize(cols[3], a->n, o, &f->e2e_due_ms);
	trend(a->v, a->n, a->ws, &f->ttft_due_trend_ms_s, &f->ttft_due_trend_se_ms_s);
	/* M-rate growth: the window's requests in due order, quarters. */
	qsort(a->v, a->n, sizeof *a->v, cmp_due);
	if (a->n >= 8) {
		size_t qn = a->n / 4;
		double first = quarter_p50(a->v, 0, qn, tmp);
		double last = quarter_p50(a->v, a->n - qn, a->n, tmp);
		f->ttft_due_growth_ms = last - first;
	}
	free(tmp);
	return a->oom;
}

void tt__rate_acc_free(struct tt__rate_acc *a)
{
	if (!a)
		return;
	tt_slo_judge_free(a->judge);
	free(a->v);
	free(a);
}

/* ---- per context, over the rate cells (M-rate-limit) --------------------- */

static int cmp_rate(const void *x, const void *y)
{
	const struct tt_cell_figures *a = *(const struct tt_cell_figures *const *)x;
	const struct tt_cell_figures *b = *(const struct tt_cell_figures *const *)y;
	return (a->rate > b->rate) - (a->rate < b->rate);
}

/* The context's open-loop cells that were measured, by rate (caller frees). */
static size_t rate_cells(const struct tt_report *r, int64_t context,
			 const struct tt_cell_figures ***out)
{
	const struct tt_cell_figures **v = malloc((r->n_cells + 1) * sizeof *v);
	size_t n = 0;

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[i];
		if (c->phase == TT_PHASE_RATE && c->context == context &&
		    c->status != TT_STATUS_NOT_RUN && c->status != TT_STATUS_DAMAGED &&
		    c->open_loop.due > 0)
			v[n++] = c;
	}
	qsort(v, n, sizeof *v, cmp_rate);
	return n;
}

size_t tt_report_rate_limit(const struct tt_report *r, int64_t context, double *lo, double *hi)
{
	const struct tt_cell_figures **v;
	size_t n = rate_cells(r, context, &v), i;

	*lo = *hi = NAN;
	if (!tt_slo_active(&r->opts.slo)) {
		free(v);
		return 0;
	}
	/* M-rate-limit: the first rate that fails ends the search up the rates;
	 * a cell whose server fell behind (M-sustained) fails the SLOs: what
	 * it met were the first minutes of a queue growing without bound. */
	for (i = 0; i < n; i++) {
		if (!v[i]->open_loop.slo_ok || tt_rate_server_behind(&v[i]->open_loop))
			break;
		*lo = v[i]->rate;
	}
	if (i < n)
		*hi = v[i]->rate;
	free(v);
	return n;
}

double tt_report_rate_capacity(const struct tt_report *r, int64_t context)
{
	const struct tt_cell_figures **v;
	size_t n = rate_cells(r, context, &v);
	double best = NAN;

	for (size_t i = 0; i < n; i++)
		if (isnan(best) || v[i]->open_loop.achieved_req_s > best)
			best = v[i]->open_loop.achieved_req_s;
	free(v);
	return best;
}

int tt_rate_server_behind(const struct tt_rate_figures *f)
{
	double share = f->scheduled_req_s > 0 ? f->achieved_req_s / f->scheduled_req_s : 1;

	return share < TT_RATE_ACHIEVED_SHARE || f->ttft_due_trend_ms_s > TT_RATE_TREND_MS_S;
}

int tt_report_rate_limit_above_capacity(const struct tt_report *r, int64_t context)
{
	double lo, hi, cap = tt_report_rate_capacity(r, context);

	if (!tt_report_rate_limit(r, context, &lo, &hi))
		return 0;
	return isfinite(lo) && isfinite(cap) && lo > cap;
}
