/* M-timing: how far the capture's own times can be trusted, from the
 * timing its trace recorded (formats/run-v1.md 3.5, "Capture timing").
 *
 * A chunk time is the kernel's receive stamp of the newest bytes of the
 * read that completed the chunk.  While the capture's thread waits for a
 * CPU, events pile up in the socket and the read that finally comes gives
 * them all the newest one's stamp; a time taken when the capture looked
 * (no kernel stamp) or at the send carries the wait itself.  Neither can be
 * late by more than the time the thread spent waiting for a CPU meanwhile
 * (docs/metrics.md M-timing gives the argument), so each request's TTFT and
 * per-request rate get bounds, and the cell's medians are recomputed at
 * those bounds: a median that could move by more than 1 % and by at least
 * 0.1 ms makes the cell Client overloaded (status.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyzer.h"

struct tt__timing_acc {
	struct dvec ttft, ttft_lo;        /* ms: M-ttft as taken, and its lower bound */
	struct dvec rate, rate_lo, rate_hi; /* tok/s: M-per-request and its bounds */
	struct dvec span;                   /* ms: the decode spans behind the rates */
	long requests, timed_ttft, doubtful, chunks, shared, not_kernel, steps;
	double wait_max, wait_sum, dur_sum; /* ns */
};

#define WAIT_DOUBTFUL_NS 1000000 /* M-timing: 1 ms */
#define UNBOUNDED 1e300

void tt__timing_request(struct tt_cell_analyzer *a, const struct tt_request *r, int64_t first,
			int64_t last, long first_tokens, long total_tokens)
{
	struct tt__timing_acc *t = a->timing;
	int64_t ws = a->ws, we = a->we;
	/* a wait not known bounds nothing: the whole span */
	double w1, w2;
	int in_ttft = first >= 0 && first < we && first > r->t_send_ns;
	int in_rate = first >= 0 && last > first && first < we && last >= ws &&
		      total_tokens - first_tokens > 0;
	int meets = r->t_send_ns < we && r->t_end_ns >= ws;

	if ((!in_ttft && !in_rate && !meets) || (!t && !r->timing_recorded))
		return; /* nothing to judge: older runs cost nothing here */
	if (!t) {
		t = a->timing = calloc(1, sizeof *t);
		if (!t) {
			a->oom = 1;
			return;
		}
	}
	if (!r->timing_recorded) {
		/* a request of an older capture in the same cell: as taken */
		if ((in_ttft && (tt__dvec_push(&t->ttft, (double)(first - r->t_send_ns) / 1e6) ||
				 tt__dvec_push(&t->ttft_lo, (double)(first - r->t_send_ns) / 1e6))))
			a->oom = 1;
		if (in_rate) {
			double x = (double)(total_tokens - first_tokens) / ((double)(last - first) / 1e9);
			if (tt__dvec_push(&t->rate, x) || tt__dvec_push(&t->rate_lo, x) || tt__dvec_push(&t->rate_hi, x) ||
			    tt__dvec_push(&t->span, (double)(last - first) / 1e6))
				a->oom = 1;
		}
		return;
	}
	w1 = r->cpu_wait_first_ns >= 0 ? (double)r->cpu_wait_first_ns : (double)(first - r->t_send_ns);
	w2 = r->cpu_wait_last_ns >= 0 ? (double)r->cpu_wait_last_ns : (double)(last - first);
	if (meets) {
		t->requests++;
		if (r->clock_steps)
			t->steps++;
		if (r->cpu_wait_ns >= 0) {
			if ((double)r->cpu_wait_ns > t->wait_max)
				t->wait_max = (double)r->cpu_wait_ns;
			t->wait_sum += (double)r->cpu_wait_ns;
		}
		if (r->t_end_ns > r->t_send_ns)
			t->dur_sum += (double)(r->t_end_ns - r->t_send_ns);
		/* the window's token-bearing chunks, as M-total counts them */
		for (size_t i = 0; r->chunk_timing && i < r->n_chunks; i++)
			if (r->chunks[i].tokens > 0 && r->chunks[i].t_ns >= ws && r->chunks[i].t_ns < we) {
				t->chunks++;
				t->shared += (r->chunk_timing[i] & TT_TIMING_SHARED) != 0;
				t->not_kernel += (r->chunk_timing[i] & TT_TIMING_NOT_KERNEL) != 0;
			}
	}
	if (in_ttft) {
		double ttft = (double)(first - r->t_send_ns);
		/* the send may have gone out late and the first chunk's time may
		 * be late: together by no more than the wait between them */
		double lo = ttft - w1 > 1 ? ttft - w1 : 1;
		t->timed_ttft++;
		if (r->cpu_wait_first_ns < 0 || r->cpu_wait_first_ns >= WAIT_DOUBTFUL_NS)
			t->doubtful++;
		if (tt__dvec_push(&t->ttft, ttft / 1e6) || tt__dvec_push(&t->ttft_lo, lo / 1e6))
			a->oom = 1;
	}
	if (in_rate) {
		double tok = (double)(total_tokens - first_tokens);
		double span = (double)(last - first);
		/* the first chunk may have come up to w1 earlier (a longer
		 * span), the last up to w2 earlier (a shorter one): w2 is the
		 * wait since the read before the last chunk's */
		double lo = tok / ((span + w1) / 1e9);
		double hi = span - w2 > 0 ? tok / ((span - w2) / 1e9) : UNBOUNDED;
		if (tt__dvec_push(&t->rate, tok / (span / 1e9)) || tt__dvec_push(&t->rate_lo, lo) ||
		    tt__dvec_push(&t->rate_hi, hi) || tt__dvec_push(&t->span, span / 1e6))
			a->oom = 1;
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static double median(struct dvec *v)
{
	if (!v->n)
		return NAN;
	qsort(v->v, v->n, sizeof *v->v, cmp_double);
	return tt_percentile_sorted(v->v, v->n, 50);
}

static double change(double bound, double taken)
{
	if (!isfinite(bound) || !isfinite(taken) || taken <= 0)
		return 0;
	return fabs(bound - taken) / taken;
}

void tt__timing_figures(struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	struct tt__timing_acc *t = a->timing;
	struct tt_timing_quality *q = &f->timing;
	double ttft, rate, span, ms;

	memset(q, 0, sizeof *q);
	q->cpu_wait_max_ms = q->cpu_wait_share = q->could_move_ms = NAN;
	q->ttft_p50_low_ms = q->per_request_p50_low = q->per_request_p50_high = NAN;
	if (!t || !t->requests)
		return;
	q->requests = t->requests;
	q->ttft_requests = t->timed_ttft;
	q->doubtful_ttft = t->doubtful;
	q->chunks = t->chunks;
	q->chunks_shared = t->shared;
	q->chunks_not_kernel = t->not_kernel;
	q->clock_steps = t->steps;
	q->cpu_wait_max_ms = t->wait_max / 1e6;
	q->cpu_wait_share = t->dur_sum > 0 ? t->wait_sum / t->dur_sum : NAN;
	ttft = median(&t->ttft);
	rate = median(&t->rate);
	span = median(&t->span);
	q->ttft_p50_low_ms = median(&t->ttft_lo);
	q->per_request_p50_low = median(&t->rate_lo);
	q->per_request_p50_high = median(&t->rate_hi);
	if (q->per_request_p50_high >= UNBOUNDED)
		q->per_request_p50_high = INFINITY;
	q->could_move = change(q->ttft_p50_low_ms, ttft);
	if (change(q->per_request_p50_low, rate) > q->could_move)
		q->could_move = change(q->per_request_p50_low, rate);
	if (isinf(q->per_request_p50_high))
		q->could_move = 1e6; /* unbounded: "at least" this */
	else if (change(q->per_request_p50_high, rate) > q->could_move)
		q->could_move = change(q->per_request_p50_high, rate);
	/* the same moves in time: the TTFT median's own, and the rate's as
	 * the change of the median decode span that gives it (rate = tok /
	 * span: a rate r' for r is the span times r / r') */
	ms = isfinite(ttft) && isfinite(q->ttft_p50_low_ms) ? ttft - q->ttft_p50_low_ms : 0;
	if (isfinite(span) && isfinite(rate) && rate > 0) {
		double lo = q->per_request_p50_low, hi = q->per_request_p50_high;
		if (isfinite(lo) && lo > 0 && span * (rate / lo - 1) > ms)
			ms = span * (rate / lo - 1);
		if (isinf(hi))
			ms = span > ms ? span : ms; /* unbounded: the whole span */
		else if (isfinite(hi) && hi > 0 && span * (1 - rate / hi) > ms)
			ms = span * (1 - rate / hi);
	}
	q->could_move_ms = ms;
}

void tt__timing_free(struct tt_cell_analyzer *a)
{
	struct tt__timing_acc *t = a->timing;
	if (!t)
		return;
	free(t->ttft.v);
	free(t->ttft_lo.v);
	free(t->rate.v);
	free(t->rate_lo.v);
	free(t->rate_hi.v);
	free(t->span.v);
	free(t);
	a->timing = NULL;
}
