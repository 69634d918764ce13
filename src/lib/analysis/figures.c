/* The figures of a speed-test matrix, computed from raw traces.  Every
 * figure names its definition in docs/metrics.md ("M-..." anchors). */
#include "tokentrace/analysis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyzer.h"
#include "analysis/window.h"
#include "analysis/hist.h"
#include "analysis/slo_impl.h"
#include "tokentrace/gauges.h"
#include "tokentrace/units.h"
#include "analysis/reported.h"
#include "analysis/rate.h"
#include "core/c_locale.h"

void tt_analysis_opts_init(struct tt_analysis_opts *o)
{
	memset(o, 0, sizeof *o);
	o->n_quantiles = 2;
	o->quantiles[0] = 90;
	o->quantiles[1] = 99;
	o->queued_share = TT_QUEUE_SHARE_DEFAULT;
	o->min_tokens = 100;
	o->cut_short_ratio = 0.9;
	o->stall_ms = 100;
	tt_slo_init(&o->slo);
}


/* Linear interpolation between closest ranks (numpy's default, "M-pct"). */
double tt_percentile_sorted(const double *v, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (n == 0)
		return NAN;
	if (p <= 0)
		return v[0];
	if (p >= 100)
		return v[n - 1];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	frac = rank - (double)lo;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

/* ---- per-cell analyzer -------------------------------------------------- */

int tt__dvec_push(struct dvec *d, double x)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		double *v = realloc(d->v, cap * sizeof *v);
		if (!v)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = x;
	return 0;
}

/* Counters' names, in enum counter order (analysis/analyzer.h). */
static const char *const counter_names[C_COUNT] = {
	"vllm:request_queue_time_seconds_sum", "vllm:request_queue_time_seconds_count",
	"vllm:request_prefill_time_seconds_sum", "vllm:request_prefill_time_seconds_count",
	"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count",
	"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_drafts_total", "vllm:prefix_cache_hits_total",
	"vllm:prefix_cache_queries_total",
	/* SGLang: queue and TTFT histograms (no per-request prefill one) */
	"sglang:queue_time_seconds_sum", "sglang:queue_time_seconds_count",
	"sglang:time_to_first_token_seconds_sum", "sglang:time_to_first_token_seconds_count",
	/* TGI: the queue histogram (no per-request prefill or TTFT one) */
	"tgi_request_queue_duration_sum", "tgi_request_queue_duration_count"};

void tt__measured_window(const struct tt_analysis_opts *o, const struct tt_cell_info *c,
			 int64_t *ws, int64_t *we)
{
	int64_t win;

	*ws = *we = -1;
	if (c->window_start_ns < 0 || c->window_end_ns <= c->window_start_ns)
		return;
	win = tt_duration_ns_of_s(o->window_s);
	*ws = c->window_start_ns + tt_duration_ns_of_s(o->skip_first_s);
	*we = c->window_end_ns;
	if (win > 0 && *ws + win < *we)
		*we = *ws + win;
	if (*ws >= *we)
		*ws = *we = -1;
}

enum tt_code tt_cell_analyzer_create(const struct tt_manifest *m, size_t cell,
				     const struct tt_analysis_opts *opts,
				     struct tt_cell_analyzer **out, struct tt_error *err)
{
	struct tt_cell_analyzer *a;
	const struct tt_cell_info *c;

	if (cell >= m->n_cells)
		return tt_error_set(err, TT_EARG, "no cell %zu", cell);
	c = &m->cells[cell];
	a = calloc(1, sizeof *a);
	if (!a)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	a->tbt = malloc(sizeof *a->tbt);
	if (!a->tbt) {
		free(a);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	tt__hist_reset(a->tbt);
	a->cell = c;
	a->index = cell;
	if (opts)
		a->opts = *opts;
	else
		tt_analysis_opts_init(&a->opts);
	if (a->opts.queued_share <= 0)
		a->opts.queued_share = TT_QUEUE_SHARE_DEFAULT;
	if (a->opts.min_tokens <= 0)
		a->opts.min_tokens = 100;
	if (a->opts.cut_short_ratio <= 0)
		a->opts.cut_short_ratio = 0.9;
	if (a->opts.stall_ms <= 0)
		a->opts.stall_ms = 100;
	a->stall_ns = (int64_t)(a->opts.stall_ms * 1e6);
	a->longest_gap = -1;
	a->judge = tt_slo_active(&a->opts.slo) && c->phase == TT_PHASE_DECODE;
	a->duration_s = m->duration_s;
	if (m->n_sources > 0 && m->sources)
		a->imported_tool = m->sources[0].tool ? m->sources[0].tool : m->sources[0].format;
	copy_text(a->engine, sizeof a->engine, m->engine ? m->engine : "");
	a->max_tokens = m->max_tokens;
	a->short_max = -1;
	a->slots = m->slots > 0 ? m->slots : -1;
	/* M-window: the recorded window, moved by --skip-first, capped by --window. */
	tt__measured_window(&a->opts, c, &a->ws, &a->we);
	if (c->phase == TT_PHASE_RATE) {
		enum tt_code rc = tt__rate_acc_create(&a->opts.slo, a->ws, a->we, &a->open_loop, err);
		if (tt_failed(rc)) {
			free(a->tbt);
			free(a);
			return rc;
		}
		a->offered = c->rate;
		if (m->output_max > 0)
			a->max_tokens = 0; /* drawn per request: not known here (M-short) */
	}
	if (a->opts.hook && a->opts.hook->begin)
		a->opts.hook->begin(a->opts.hook->ctx, cell, a->ws, a->we);
	*out = a;
	return TT_OK;
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

static void scout_request(struct tt_cell_analyzer *a, const struct tt_request *r)
{
	/* M-prefill: prompt tok/s = prompt tokens / TTFT of the cold scout. */
	for (size_t i = 0; i < r->n_chunks; i++) {
		if (r->chunks[i].tokens == 0)
			continue;
		double ttft_s = (double)(r->chunks[i].t_ns - r->t_send_ns) / 1e9;
		int64_t prompt = r->prompt_tokens >= 0 ? r->prompt_tokens : a->cell->context;
		if (ttft_s <= 0)
			return;
		if (tt__dvec_push(&a->scout_ttft, ttft_s * 1e3) ||
		    tt__dvec_push(&a->scout_rate, (double)prompt / ttft_s) ||
		    tt__dvec_push(&a->scout_prompt, (double)prompt))
			a->oom = 1;
		if (a->opts.hook && a->opts.hook->prefill)
			a->opts.hook->prefill(a->opts.hook->ctx, a->index, (double)prompt / ttft_s);
		return;
	}
}

/* M-reasoning, M-ttfr, M-ttfa: a chunk's phase is reasoning when it
 * carried reasoning text and no answer text, answer when it carried answer
 * text; a chunk with no text keeps the phase of the chunk before it
 * (answer for a request's first chunks). */
static void reasoning_request(struct tt_cell_analyzer *a, const struct tt_request *r)
{
	int64_t ws = a->ws, we = a->we;
	int64_t fr = -1, fa = -1;
	int reasoning = 0;

	if (!r->chunk_text)
		return;
	if (r->t_send_ns < we && r->t_end_ns >= ws)
		a->text_requests++; /* M-requests */
	for (size_t i = 0; i < r->n_chunks; i++) {
		int64_t t = r->chunks[i].t_ns;
		uint32_t k = r->chunks[i].tokens;
		uint8_t x = r->chunk_text[i];

		if (k == 0)
			continue;
		if (x & TT_TEXT_ANSWER)
			reasoning = 0;
		else if (x & TT_TEXT_REASONING)
			reasoning = 1;
		if (reasoning && fr < 0)
			fr = t;
		if (!reasoning && fa < 0)
			fa = t;
		if (t >= ws && t < we) {
			if (reasoning)
				a->reasoning_tokens += k;
			else
				a->answer_tokens += k;
		}
	}
	/* the population of M-ttft: first token before the window ended */
	if (fr >= 0 && fr < we && fr > r->t_send_ns &&
	    tt__dvec_push(&a->ttfr, (double)(fr - r->t_send_ns) / 1e6))
		a->oom = 1;
	if (fa >= 0 && fa < we && fa > r->t_send_ns &&
	    tt__dvec_push(&a->ttfa, (double)(fa - r->t_send_ns) / 1e6))
		a->oom = 1;
}

#if defined(__GNUC__)
#define WALK_INLINE __attribute__((always_inline)) inline
/* the common chunk's path: told to the compiler so that its running
 * values, not the other paths', get the registers */
#define WALK_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define WALK_INLINE inline
#define WALK_LIKELY(x) (x)
#endif

/* What one request's chunk walk tells the rest of the request's figures. */
struct walk {
	int64_t first, prev;
	long first_tokens, total_tokens;
};

/* Hand a chunk to the hook, a batch at a time. */
static WALK_INLINE void hook_push(const struct tt_sample_hook *hook, size_t cell,
				  struct tt_sample_chunk *hb, size_t *hbn, int64_t t, int64_t gap,
				  uint32_t k)
{
	hb[*hbn].t_ns = t;
	hb[*hbn].gap_ns = gap;
	hb[(*hbn)++].k = k;
	if (*hbn == TT_SAMPLE_BATCH) {
		hook->chunks(hook->ctx, cell, hb, *hbn);
		*hbn = 0;
	}
}

/* The per-chunk figures of one request (M-total, M-tbt, M-stall,
 * M-chunks, the hook's samples, the SLO judge's gaps) in one pass.  This
 * loop runs once per chunk of the run, so:
 * - every running figure lives in a local for the walk (stores through
 *   `a` would otherwise be reloaded each chunk: they may alias the
 *   histogram's counts);
 * - it is inlined with hook and acc constant (NULL or not), so each caller
 *   gets a loop without the branches it does not need;
 * - the common chunk (one token, in the window, a gap > 0) has a path of
 *   its own that keeps as few running values as it can, so they stay in
 *   registers: its counts (tokens, chunks, histogram samples, judged gaps)
 *   are worked out after the loop from the counts of the other chunks,
 *   and its largest and smallest gaps are merged into the histogram's and
 *   the longest stall after the loop.
 * Sums and extremes do not depend on the order they are taken in; the one
 * floating-point sum, h->sum, is still added to in chunk order with the
 * same terms ((double)g * 1 is (double)g), so every figure is bit for bit
 * what the plain chunk-at-a-time loop gives. */
static WALK_INLINE void walk_chunks(struct tt_cell_analyzer *a, const struct tt_request *r,
				    const struct tt_sample_hook *hook, struct tt__slo_acc *acc,
				    struct walk *w)
{
	const int64_t ws = a->ws, stall = a->stall_ns;
	/* t in [ws, we) as one unsigned comparison (ws >= 0, we > ws) */
	const uint64_t wlen = (uint64_t)a->we - (uint64_t)ws;
	const struct tt_chunk *c = r->chunks, *const end = r->chunks + r->n_chunks, *after;
	struct tt_hist *h = a->tbt;
	uint64_t *count = h->count;
	int64_t first = -1, prev = -1;
	long first_tokens = 0;
	/* the common chunks' running values */
	double hsum = h->sum;
	int64_t mn = INT64_MAX, mx = 0;
	long over = a->gaps_over;
	int64_t bound = 0, max_le = 0, min_gt = 0;
	size_t sc = 0;
	/* the other chunks: one-token ones out of the window or with a gap
	 * <= 0 (rare1; of them out1 out of the window, judged1 with a gap > 0),
	 * zero-token ones, multi-token ones */
	long rare1 = 0, out1 = 0, judged1 = 0, zeros = 0, multis = 0, multi_tokens = 0;
	long tokens = a->tokens, chunks = a->chunks, multi = a->multi;
	long bins[5] = {0, a->by_tokens[1], a->by_tokens[2], a->by_tokens[3], a->by_tokens[4]};
	uint64_t hn = h->n;
	int64_t hmin = h->min, hmax = h->max, longest = a->longest_gap;
	size_t sn = 0;
	/* the samples for a hook, passed a batch at a time */
	struct tt_sample_chunk hb[TT_SAMPLE_BATCH];
	size_t hbn = 0;
	long n1, hot;

	if (acc) {
		bound = acc->bound;
		max_le = acc->max_le;
		min_gt = acc->min_gt;
		sn = acc->n;
		sc = acc->c;
	}
	/* a request's first token-bearing chunk: no gap */
	while (c < end && c->tokens == 0)
		c++;
	if (c < end) {
		const int64_t t = c->t_ns;
		const uint32_t k = c->tokens;

		first = prev = t;
		first_tokens = k;
		if ((uint64_t)t - (uint64_t)ws < wlen) {
			tokens += k;
			chunks++;
			if (k > 1) {
				multi++;
				bins[k < 5 ? k - 1 : 4]++;
			}
			if (hook)
				hook_push(hook, a->index, hb, &hbn, t, 0, k);
		}
		c++;
	}
	after = c;
	for (; c < end; c++) {
		const int64_t t = c->t_ns;
		const uint32_t k = c->tokens;
		int64_t d, g;

		if (WALK_LIKELY(k == 1)) {
			d = t - prev;
			prev = t;
			if (WALK_LIKELY(d > 0 && (uint64_t)t - (uint64_t)ws < wlen)) {
				/* the common chunk: M-slo's gap, M-tbt's sample */
				if (acc) {
					if (d > bound) {
						sc++;
						if (d < min_gt)
							min_gt = d;
					} else if (d > max_le) {
						max_le = d;
					}
				}
				count[tt_hist_index(d)]++;
				hsum += (double)d;
				mn = d < mn ? d : mn;
				mx = d > mx ? d : mx;
				over += d > stall; /* M-stall: gaps over the threshold */
				if (hook)
					hook_push(hook, a->index, hb, &hbn, t, d, 1);
				continue;
			}
			rare1++;
			if (acc && d > 0) { /* as tt__slo_acc_gap */
				judged1++;
				if (d > bound) {
					sc++;
					if (d < min_gt)
						min_gt = d;
				} else if (d > max_le) {
					max_le = d;
				}
			}
			if ((uint64_t)t - (uint64_t)ws >= wlen) {
				out1++;
				continue;
			}
			/* in the window with a gap <= 0: counted, no sample */
			over += d > stall;
			if (d > longest)
				longest = d;
			if (hook)
				hook_push(hook, a->index, hb, &hbn, t, d, 1);
			continue;
		}
		if (k == 0) {
			zeros++;
			continue;
		}
		multis++;
		multi_tokens += k;
		d = t - prev;
		/* M-tbt: a k-token chunk spreads its gap over its k tokens (a
		 * 32-bit division when the gap fits: the same quotient, faster) */
		g = (uint64_t)d <= UINT32_MAX ? (int64_t)((uint32_t)d / k) : d / (int64_t)k;
		prev = t;
		if (acc && g > 0) {
			sn += k;
			if (g > bound) {
				sc += k;
				if (g < min_gt)
					min_gt = g;
			} else if (g > max_le) {
				max_le = g;
			}
		}
		if ((uint64_t)t - (uint64_t)ws >= wlen)
			continue;
		/* M-total: tokens of chunks arriving in the window */
		tokens += k;
		chunks++;
		multi++;
		bins[k < 5 ? k - 1 : 4]++;
		if (g > 0) { /* as tt_hist_add */
			count[tt_hist_index(g)] += k;
			hn += k;
			hsum += (double)g * (double)k;
			if (g < hmin)
				hmin = g;
			if (g > hmax)
				hmax = g;
		}
		if (g > stall)
			over += k;
		/* M-stall: the whole wait between two chunks of one request */
		if (d > longest)
			longest = d;
		if (hook)
			hook_push(hook, a->index, hb, &hbn, t, g, k);
	}
	if (hook && hbn)
		hook->chunks(hook->ctx, a->index, hb, hbn);
	/* the one-token chunks after the first, and the common ones of them */
	n1 = (long)(end - after) - zeros - multis;
	hot = n1 - rare1;
	if (hot > 0) {
		if (mn < hmin)
			hmin = mn;
		if (mx > hmax)
			hmax = mx;
		if (mx > longest)
			longest = mx;
	}
	if (acc) {
		acc->max_le = max_le;
		acc->min_gt = min_gt;
		acc->n = sn + (size_t)hot + (size_t)judged1;
		acc->c = sc;
	}
	a->tokens = tokens + n1 - out1;
	a->chunks = chunks + n1 - out1;
	a->multi = multi;
	a->gaps_over = over;
	a->longest_gap = longest;
	for (int b = 1; b < 5; b++)
		a->by_tokens[b] = bins[b];
	h->n = hn + (uint64_t)hot;
	h->sum = hsum;
	h->min = hmin;
	h->max = hmax;
	w->first = first;
	w->prev = prev;
	w->first_tokens = first_tokens;
	w->total_tokens = first_tokens + n1 + multi_tokens;
}

void tt_cell_analyzer_request(struct tt_cell_analyzer *a, const struct tt_request *r)
{
	int64_t ws = a->ws, we = a->we;
	int64_t first, last;
	long first_tokens, total_tokens;
	const struct tt_sample_hook *hook =
		a->opts.hook && a->opts.hook->chunks ? a->opts.hook : NULL;
	struct tt__slo_acc acc;
	struct walk w;
	int judge;

	if (r->finish == TT_FINISH_ERROR)
		a->errors++; /* M-errors: any role, anywhere in the cell */
	if (a->open_loop)
		tt__rate_acc_request(a->open_loop, r);
	if (a->cell->phase == TT_PHASE_PREFILL) {
		if (r->role == TT_ROLE_SCOUT && r->finish != TT_FINISH_ERROR)
			scout_request(a, r);
		return;
	}
	if (r->role != TT_ROLE_MEASURED || ws < 0)
		return;
	/* M-slo: requests that ended in the window, finished or failed, are
	 * judged; their gaps are gathered in the same walk. */
	judge = a->judge && r->t_end_ns >= ws && r->t_end_ns < we &&
		(r->finish == TT_FINISH_STOP || r->finish == TT_FINISH_LENGTH ||
		 r->finish == TT_FINISH_ERROR);
	if (judge)
		tt__slo_acc_init(&a->opts.slo, &acc);
	if (hook)
		walk_chunks(a, r, hook, judge ? &acc : NULL, &w);
	else if (judge)
		walk_chunks(a, r, NULL, &acc, &w);
	else
		walk_chunks(a, r, NULL, NULL, &w);
	first = w.first;
	last = w.prev;
	first_tokens = w.first_tokens;
	total_tokens = w.total_tokens;
	/* M-requests: the request's [send, end] meets [ws, we); cut: of those,
	 * the ones still running when the window closed (cut by the capture, or
	 * ending after a window that --window/--skip-first moved earlier). */
	if (r->t_send_ns < we && r->t_end_ns >= ws) {
		a->requests++;
		/* M-cache: prompt tokens the server said it served from cache */
		if (r->cached_tokens >= 0 && r->prompt_tokens > 0) {
			a->cached_sum += (double)r->cached_tokens;
			a->prompt_sum += (double)r->prompt_tokens;
		}
		if (r->finish == TT_FINISH_CUT || r->t_end_ns >= we)
			a->cut++;
	}
	/* M-ttft: send to first token, for requests whose first token came before
	 * the window ended (the ramp's requests included: with long requests they
	 * are the only ones). */
	if (first >= 0 && first < we && first > r->t_send_ns) {
		if (tt__dvec_push(&a->ttft, (double)(first - r->t_send_ns) / 1e6))
			a->oom = 1;
		if (a->opts.hook && a->opts.hook->ttft)
			a->opts.hook->ttft(a->opts.hook->ctx, a->index, first,
					   (double)(first - r->t_send_ns) / 1e6);
	}
	/* M-ttft-parts rest: a finished request's end and TTFT, matched at
	 * the end with the span of the server's histogram scrapes. */
	if (first > r->t_send_ns &&
	    (r->finish == TT_FINISH_LENGTH || r->finish == TT_FINISH_STOP) &&
	    (tt__dvec_push(&a->end_ttft, (double)r->t_end_ns) ||
	     tt__dvec_push(&a->end_ttft, (double)(first - r->t_send_ns) / 1e6)))
		a->oom = 1;
	/* M-per-request: (tokens after the first chunk) / (last - first chunk). */
	if (first >= 0 && last > first && first < we && last >= ws &&
	    total_tokens - first_tokens > 0) {
		double tok_s = (double)(total_tokens - first_tokens) / ((double)(last - first) / 1e9);
		if (tt__dvec_push(&a->rate, tok_s))
			a->oom = 1;
		if (a->opts.hook && a->opts.hook->rate)
			a->opts.hook->rate(a->opts.hook->ctx, a->index, first, tok_s);
	}
	tt__timing_request(a, r, first, last, first_tokens, total_tokens); /* M-timing */
	if ((r->finish == TT_FINISH_STOP || r->finish == TT_FINISH_LENGTH) && r->t_end_ns >= ws &&
	    r->t_end_ns < we) {
		a->completed++; /* M-completed */
		/* M-e2e: the same requests, send to end */
		if (r->t_end_ns > r->t_send_ns &&
		    tt__dvec_push(&a->e2e, (double)(r->t_end_ns - r->t_send_ns) / 1e6))
			a->oom = 1;
	}
	if (judge) {
		a->slo_judged++;
		if (tt__slo_decide(&a->opts.slo, r, first, &acc)) {
			a->slo_met++;
			a->slo_tokens += total_tokens;
		}
	}
	/* M-short: ended by the server before the tokens asked */
	if (r->finish == TT_FINISH_STOP || r->finish == TT_FINISH_LENGTH) {
		a->ended++;
		if (a->max_tokens > 0 && total_tokens < a->max_tokens) {
			a->short_n++;
			if (r->finish == TT_FINISH_LENGTH)
				a->short_length++;
			else
				a->short_stop++;
			if (total_tokens > a->short_max)
				a->short_max = total_tokens;
		}
	}
	reasoning_request(a, r);
	/* M-queue: the client's requests in flight, against the server's slots */
	if (r->t_send_ns >= ws && r->t_send_ns < we)
		a->sent_in_window++;
	/* kept only where a slot count makes them evidence (queue_figures) */
	if (a->slots > 0 && r->t_send_ns < we && r->t_end_ns >= ws &&
	    (tt__dvec_push(&a->spans, (double)r->t_send_ns) || tt__dvec_push(&a->spans, (double)r->t_end_ns)))
		a->oom = 1;
	/* M-active (client): time-averages over the window. */
	a->inflight_ns += (double)overlap(r->t_send_ns, r->t_end_ns, ws, we);
	if (first >= 0)
		a->streaming_ns += (double)overlap(first, r->t_end_ns, ws, we);
}

/* First and last value (summed over label sets) of each counter in the
 * window's scrapes. */
static void scrape_counters(struct tt_cell_analyzer *a, const struct tt_scrape *s)
{
	double sum[C_COUNT];
	int seen[C_COUNT] = {0};

	for (size_t i = 0; i < s->n_samples; i++) {
		const char *n = s->samples[i].name;
		if (!n || !isfinite(s->samples[i].value))
			continue;
		if (strncmp(n, "vllm:", 5) == 0) {
			if (strncmp(n + 5, "request_", 8) && strncmp(n + 5, "time_to_first_token", 19) &&
			    strncmp(n + 5, "spec_decode_", 12) && strncmp(n + 5, "prefix_cache_", 13))
				continue;
		} else if (strncmp(n, "tgi_", 4) == 0) {
			if (strncmp(n + 4, "request_queue_duration_", 23))
				continue;
		} else if (strncmp(n, "sglang:", 7) != 0 ||
			   (strncmp(n + 7, "queue_time", 10) && strncmp(n + 7, "time_to_first", 13))) {
			continue;
		}
		for (int c = 0; c < C_COUNT; c++)
			if (strcmp(n, counter_names[c]) == 0) {
				sum[c] = seen[c] ? sum[c] + s->samples[i].value : s->samples[i].value;
				seen[c] = 1;
			}
	}
	for (int c = 0; c < C_COUNT; c++) {
		if (!seen[c])
			continue;
		if (!a->ctr_seen[c]) {
			a->ctr_first[c] = sum[c];
			a->ctr_t_first[c] = s->t_ns;
		}
		a->ctr_last[c] = sum[c];
		a->ctr_t_last[c] = s->t_ns;
		a->ctr_seen[c] = 1;
	}
}

void tt_cell_analyzer_scrape(struct tt_cell_analyzer *a, const struct tt_scrape *s)
{
	double v[TT_GAUGE_COUNT_];
	unsigned found;

	/* Decode: scrapes in [ws, we]; prefill (no window): every scrape of the
	 * cell's trace. */
	if (a->cell->phase != TT_PHASE_PREFILL && (a->ws < 0 || s->t_ns < a->ws || s->t_ns > a->we))
		return;
	/* M-gauges: one name per quantity; a missing or NaN value contributes
	 * nothing, neither a sample nor a zero. */
	if (a->cell->phase != TT_PHASE_PREFILL) /* decode and open-loop cells */
		scrape_counters(a, s);
	found = tt_scrape_gauges(s, a->engine, v);
	if (!found)
		return;
	a->scrapes++;
	for (int g = 0; g < TT_GAUGE_COUNT_; g++)
		if (found & (1u << g))
			a->n_gauge[g]++;
	if (found & (1u << TT_GAUGE_RUNNING))
		a->running_sum += v[TT_GAUGE_RUNNING];
	if (found & (1u << TT_GAUGE_WAITING)) {
		a->waiting_sum += v[TT_GAUGE_WAITING];
		if (v[TT_GAUGE_WAITING] > a->waiting_max)
			a->waiting_max = v[TT_GAUGE_WAITING];
		if (v[TT_GAUGE_WAITING] > 0)
			a->waiting_pos++; /* M-queue: scrapes with waiting > 0 */
	}
	if ((found & (1u << TT_GAUGE_KV)) && v[TT_GAUGE_KV] > a->kv_max)
		a->kv_max = v[TT_GAUGE_KV];
	if (found & (1u << TT_GAUGE_PREEMPTIONS)) {
		if (a->n_gauge[TT_GAUGE_PREEMPTIONS] == 1)
			a->preempt_first = v[TT_GAUGE_PREEMPTIONS];
		a->preempt_last = v[TT_GAUGE_PREEMPTIONS];
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static void nan_dist(struct tt_dist *d)
{
	d->n = 0;
	d->min = d->max = d->mean = d->p50 = NAN;
	for (size_t i = 0; i < TT_MAX_QUANTILES; i++)
		d->q[i] = NAN;
}

/* Summary of a sample vector (values <= 0 dropped, as the reference does). */
static void dist_of(struct dvec *v, const struct tt_analysis_opts *o, struct tt_dist *d)
{
	size_t n = 0;
	double sum = 0;

	nan_dist(d);
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] > 0)
			v->v[n++] = v->v[i];
	v->n = n;
	if (n == 0)
		return;
	qsort(v->v, n, sizeof *v->v, cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v->v[i];
	d->n = n;
	d->min = v->v[0];
	d->max = v->v[n - 1];
	d->mean = sum / (double)n;
	d->p50 = tt_percentile_sorted(v->v, n, 50);
	for (size_t i = 0; i < o->n_quantiles && i < TT_MAX_QUANTILES; i++)
		d->q[i] = tt_percentile_sorted(v->v, n, o->quantiles[i]);
}

static void hist_dist(const struct tt_hist *h, const struct tt_analysis_opts *o,
		      struct tt_dist *d, double scale)
{
	nan_dist(d);
	if (h->n == 0)
		return;
	d->n = (size_t)h->n;
	d->min = (double)h->min * scale;
	d->max = (double)h->max * scale;
	d->mean = h->sum / (double)h->n * scale;
	d->p50 = tt__hist_percentile(h, 50) * scale;
	for (size_t i = 0; i < o->n_quantiles && i < TT_MAX_QUANTILES; i++)
		d->q[i] = tt__hist_percentile(h, o->quantiles[i]) * scale;
}


/* Server evidence over the scrapes taken (M-gauges, "Server evidence"):
 * each gauge's mean over the scrapes that hold it. */
static void server_figures(const struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	const long *n = a->n_gauge;

	f->scrapes = a->scrapes;
	if (a->scrapes == 0)
		return;
	f->has_server_metrics = 1;
	if (n[TT_GAUGE_RUNNING])
		f->running_mean = a->running_sum / (double)n[TT_GAUGE_RUNNING];
	if (n[TT_GAUGE_WAITING]) {
		f->waiting_mean = a->waiting_sum / (double)n[TT_GAUGE_WAITING];
		f->waiting_max = a->waiting_max;
		f->waiting_share = (double)a->waiting_pos / (double)n[TT_GAUGE_WAITING];
	}
	if (n[TT_GAUGE_KV])
		f->kv_usage_max = a->kv_max;
	if (n[TT_GAUGE_PREEMPTIONS])
		f->preemptions = a->preempt_last - a->preempt_first;
}

/* M-stall and M-goodput of a decode cell with a window of w_s seconds. */
static void tails_and_goodput(const struct tt_cell_analyzer *a, struct tt_cell_figures *f,
			      double w_s)
{
	if (a->longest_gap >= 0)
		f->longest_stall_ms = (double)a->longest_gap / 1e6;
	f->gaps_over = a->gaps_over;
	if (a->tbt->n > 0)
		f->gaps_over_share = (double)a->gaps_over / (double)a->tbt->n;
	if (!a->judge)
		return;
	f->slo_judged = a->slo_judged;
	f->slo_met = a->slo_met;
	f->goodput_req_s = (double)a->slo_met / w_s;
	f->goodput_tok_s = (double)a->slo_tokens / w_s;
	if (a->slo_judged > 0) {
		f->slo_share = (double)a->slo_met / (double)a->slo_judged;
		/* compare counts, not a rounded share: 9 of 10 meets 90 % */
		f->slo_ok = (double)a->slo_met >= a->opts.slo.attain * (double)a->slo_judged - 1e-9;
	}
}

/* Increase of counter c over the window; NaN when not seen twice or when it
 * went down (a restarted server). */
static double delta(const struct tt_cell_analyzer *a, enum counter c)
{
	double d = a->ctr_last[c] - a->ctr_first[c];
	return a->ctr_seen[c] && d >= 0 ? d : NAN;
}

/* M-ttft-parts rest: the mean client TTFT of the finished requests that
 * ended in (t_first, t_last] of counter c's scrapes, the requests whose
 * queue and prefill times vLLM observed there (it observes them when a
 * request finishes); NaN when none did. */
static double span_ttft_ms(const struct tt_cell_analyzer *a, enum counter c)
{
	double sum = 0, t0 = (double)a->ctr_t_first[c], t1 = (double)a->ctr_t_last[c];
	long n = 0;

	for (size_t i = 0; i + 1 < a->end_ttft.n; i += 2)
		if (a->end_ttft.v[i] > t0 && a->end_ttft.v[i] <= t1) {
			sum += a->end_ttft.v[i + 1];
			n++;
		}
	return n ? sum / (double)n : NAN;
}

/* M-chunks, M-ttft-parts, M-spec. */
static void chunks_and_server_parts(const struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	double n;

	if (a->chunks > 0)
		f->tokens_per_chunk = (double)a->tokens / (double)a->chunks;
	f->chunks_by_tokens[0] = a->chunks - a->multi;
	for (int k = 1; k < 5; k++)
		f->chunks_by_tokens[k] = a->by_tokens[k];
	n = delta(a, C_QUEUE_N);
	if (n > 0)
		f->queue_ms = delta(a, C_QUEUE_SUM) / n * 1e3;
	else if ((n = delta(a, C_SG_QUEUE_N)) > 0)
		f->queue_ms = delta(a, C_SG_QUEUE_SUM) / n * 1e3;
	else if ((n = delta(a, C_TGI_QUEUE_N)) > 0)
		f->queue_ms = delta(a, C_TGI_QUEUE_SUM) / n * 1e3;
	n = delta(a, C_PREFILL_N);
	if (n > 0)
		f->prefill_ms = delta(a, C_PREFILL_SUM) / n * 1e3;
	n = delta(a, C_TTFT_N);
	if (n > 0)
		f->server_ttft_ms = delta(a, C_TTFT_SUM) / n * 1e3;
	else if ((n = delta(a, C_SG_TTFT_N)) > 0)
		f->server_ttft_ms = delta(a, C_SG_TTFT_SUM) / n * 1e3;
	if (isfinite(f->queue_ms) && isfinite(f->prefill_ms))
		f->ttft_rest_ms = span_ttft_ms(a, C_QUEUE_N) - f->queue_ms - f->prefill_ms;
	f->spec_draft_tokens = delta(a, C_SPEC_DRAFT_TOKENS);
	f->spec_accepted_tokens = delta(a, C_SPEC_ACCEPTED);
	if (f->spec_draft_tokens > 0 && isfinite(f->spec_accepted_tokens))
		f->spec_acceptance = f->spec_accepted_tokens / f->spec_draft_tokens;
	n = delta(a, C_SPEC_DRAFTS);
	if (n > 0 && isfinite(f->spec_accepted_tokens))
		f->spec_accepted_len = 1 + f->spec_accepted_tokens / n;
	/* M-cache */
	if (a->prompt_sum > 0)
		f->cached_share = a->cached_sum / a->prompt_sum;
	n = delta(a, C_PC_QUERIES);
	if (n > 0 && isfinite(delta(a, C_PC_HITS)))
		f->server_cache_hit_rate = delta(a, C_PC_HITS) / n;
}

/* One end of a request's time in flight, for the sweep of M-queue. */
struct flight_ev {
	int64_t t;
	int start; /* 1: sent, 0: ended */
};

static int cmp_flight(const void *x, const void *y)
{
	const struct flight_ev *a = x, *b = y;
	if (a->t != b->t)
		return (a->t > b->t) - (a->t < b->t);
	return a->start - b->start; /* an end before a send at the same time */
}

/* M-queue: the evidence of queueing the status rules weigh (status.c).
 * Little's law turns the time-average of the waiting gauge into the mean
 * wait of a request sent in the window; the client's requests in flight
 * against the server's slots show a queue without any server metric. */
static void queue_figures(struct tt_cell_analyzer *a, struct tt_cell_figures *f, double w_s)
{
	size_t n = a->spans.n / 2;
	struct flight_ev *ev;
	double over_ns = 0, step_s = f->tbt_ms.p50 / 1e3;
	long in = 0, affected = 0;
	int64_t prev;

	f->sent_req_s = (double)a->sent_in_window / w_s;
	f->waiting_scrapes = a->waiting_pos;
	if (a->n_gauge[TT_GAUGE_WAITING] > 0 && isfinite(f->queue_ms) && step_s > 0) {
		/* the server's own queue histogram (M-ttft-parts): each request's
		 * wait, not a sample of the gauge that the client's own sends bias */
		f->queue_wait_steps = f->queue_ms / 1e3 / step_s;
	} else if (a->n_gauge[TT_GAUGE_WAITING] > 0) {
		if (f->waiting_mean <= 0)
			f->queue_wait_steps = 0;
		else if (f->sent_req_s <= 0)
			f->queue_wait_steps = INFINITY; /* waiting, and nothing got in */
		else if (step_s > 0)
			f->queue_wait_steps = f->waiting_mean / f->sent_req_s / step_s;
	}
	f->slots = a->slots;
	if (a->slots <= 0)
		return;
	ev = malloc((n ? n : 1) * 2 * sizeof *ev);
	if (!ev) {
		a->oom = 1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		ev[2 * i].t = (int64_t)a->spans.v[2 * i];
		ev[2 * i].start = 1;
		ev[2 * i + 1].t = (int64_t)a->spans.v[2 * i + 1];
		ev[2 * i + 1].start = 0;
	}
	qsort(ev, 2 * n, sizeof *ev, cmp_flight);
	prev = a->ws;
	for (size_t i = 0; i < 2 * n; i++) {
		int64_t t = ev[i].t < a->ws ? a->ws : ev[i].t > a->we ? a->we : ev[i].t;
		if (in > a->slots)
			over_ns += (double)(t - prev);
		prev = t;
		if (ev[i].start) {
			if (ev[i].t >= a->ws && ev[i].t < a->we && in >= a->slots)
				affected++; /* sent with every slot busy */
			in++;
		} else {
			in--;
		}
	}
	if (in > a->slots)
		over_ns += (double)(a->we - prev);
	free(ev);
	f->over_slots_share = over_ns / (w_s * 1e9);
	f->over_slots_requests = affected;
}

/* A cell that was not run has no figures, even when the capture left a
 * partial trace (a failed or crashed cell): every figure and count is
 * unknown (formats/report-json.md section 1). */
static void blank_not_run(struct tt_cell_figures *f)
{
	if (f->status != TT_STATUS_NOT_RUN)
		return;
	f->prompt_tokens = -1;
	f->total_tok_s = f->avg_active = f->avg_in_flight = f->measured_s = NAN;
	f->avg_active_source = NULL;
	f->waiting_mean = f->waiting_max = f->waiting_share = f->running_mean = NAN;
	f->kv_usage_max = f->preemptions = NAN;
	f->has_server_metrics = 0;
	f->scrapes = 0;
	nan_dist(&f->per_request_tok_s);
	nan_dist(&f->ttft_ms);
	nan_dist(&f->tbt_ms);
	nan_dist(&f->e2e_ms);
	f->completed_req_s = NAN;
	f->window_start_ns = f->window_end_ns = -1;
	f->completed = f->output_tokens = f->requests = f->errors = f->cut = 0;
	f->chunks = f->multi_token_chunks = 0;
	f->longest_stall_ms = f->gaps_over_share = NAN;
	f->gaps_over = 0;
	f->slo_judged = f->slo_met = 0;
	f->slo_share = f->goodput_req_s = f->goodput_tok_s = NAN;
	f->slo_ok = 0;
	f->tokens_per_chunk = f->queue_ms = f->prefill_ms = f->server_ttft_ms = NAN;
	f->ttft_rest_ms = f->spec_draft_tokens = f->spec_accepted_tokens = NAN;
	f->spec_acceptance = f->spec_accepted_len = NAN;
	f->cached_share = f->server_cache_hit_rate = NAN;
	memset(f->chunks_by_tokens, 0, sizeof f->chunks_by_tokens);
	tt__rate_blank(&f->open_loop);
	f->text_requests = 0;
	f->reasoning_tokens = f->answer_tokens = -1;
	nan_dist(&f->ttfr_ms);
	nan_dist(&f->ttfa_ms);
	f->sent_req_s = f->queue_wait_steps = f->over_slots_share = NAN;
	f->waiting_scrapes = 0;
	f->over_slots_requests = -1;
}

void tt_cell_analyzer_finish(struct tt_cell_analyzer *a, const char *damage,
			     struct tt_cell_figures *f)
{
	const struct tt_cell_info *c = a->cell;
	double w_s;

	memset(f, 0, sizeof *f);
	f->phase = c->phase;
	f->context = c->context;
	f->concurrency = c->concurrency;
	f->prompt_tokens = -1;
	f->total_tok_s = f->avg_active = f->avg_in_flight = f->measured_s = NAN;
	f->waiting_mean = f->waiting_max = f->waiting_share = f->running_mean = NAN;
	f->kv_usage_max = f->preemptions = NAN;
	f->avg_active_source = NULL;
	f->longest_stall_ms = f->gaps_over_share = NAN;
	f->slo_share = f->goodput_req_s = f->goodput_tok_s = NAN;
	f->tokens_per_chunk = f->queue_ms = f->prefill_ms = f->server_ttft_ms = NAN;
	f->ttft_rest_ms = f->spec_draft_tokens = f->spec_accepted_tokens = NAN;
	f->spec_acceptance = f->spec_accepted_len = NAN;
	f->cached_share = f->server_cache_hit_rate = NAN;
	f->reasoning_tokens = f->answer_tokens = -1;
	f->sent_req_s = f->queue_wait_steps = f->over_slots_share = NAN;
	f->over_slots_requests = -1;
	f->slots = a->slots;
	nan_dist(&f->ttfr_ms);
	nan_dist(&f->ttfa_ms);
	nan_dist(&f->per_request_tok_s);
	nan_dist(&f->ttft_ms);
	nan_dist(&f->tbt_ms);
	nan_dist(&f->e2e_ms);
	f->completed_req_s = NAN;
	f->window_start_ns = f->window_end_ns = -1;
	f->rate = c->phase == TT_PHASE_RATE ? c->rate : 0;
	tt__rate_blank(&f->open_loop);
	if (a->open_loop && tt__rate_acc_finish(a->open_loop, &a->opts, a->offered, &f->open_loop))
		a->oom = 1;
	if (damage)
		copy_text(f->damage, sizeof f->damage, damage);
	if (a->oom)
		snprintf(f->damage, sizeof f->damage, "out of memory while analysing");
	f->errors = a->errors;
	if (a->opts.hook && a->opts.hook->end)
		a->opts.hook->end(a->opts.hook->ctx, a->index);
	f->ended = a->ended;
	/* M-short: unknown (-1, null) where each request drew its own
	 * max_tokens, which the trace does not keep (--output-tokens) */
	f->short_outputs = c->phase == TT_PHASE_RATE && a->max_tokens <= 0 ? -1 : a->short_n;
	f->short_length = a->short_length;
	f->short_stop = a->short_stop;
	f->short_max_tokens = a->short_max;
	if (tt__cell_is_reported(c)) {
		tt__figures_reported(c, &a->opts, f); /* M-reported */
		return;
	}
	if (c->phase == TT_PHASE_PREFILL) {
		dist_of(&a->scout_ttft, &a->opts, &f->ttft_ms);
		if (a->scout_rate.n) {
			struct tt_dist rd;
			dist_of(&a->scout_rate, &a->opts, &rd);
			f->total_tok_s = rd.p50;
		}
		if (a->scout_prompt.n) {
			/* M-prefill: the lower median of the scouts' prompt tokens
			 * (an integer, from one of the scouts). */
			qsort(a->scout_prompt.v, a->scout_prompt.n, sizeof *a->scout_prompt.v,
			      cmp_double);
			f->prompt_tokens = (int64_t)a->scout_prompt.v[(a->scout_prompt.n - 1) / 2];
		}
		f->completed = (long)a->scout_ttft.n;
		server_figures(a, f);
		tt__status_decide(a, f);
		blank_not_run(f);
		return;
	}
	if (a->ws >= 0) {
		w_s = (double)(a->we - a->ws) / 1e9;
		f->measured_s = w_s; /* M-measured */
		f->output_tokens = a->tokens;
		f->total_tok_s = (double)a->tokens / w_s;
		f->chunks = a->chunks;
		f->multi_token_chunks = a->multi;
		hist_dist(a->tbt, &a->opts, &f->tbt_ms, 1e-6);
		dist_of(&a->ttft, &a->opts, &f->ttft_ms);
		dist_of(&a->rate, &a->opts, &f->per_request_tok_s);
		f->completed = a->completed;
		dist_of(&a->e2e, &a->opts, &f->e2e_ms);        /* M-e2e */
		f->completed_req_s = (double)a->completed / w_s; /* M-req-rate */
		f->window_start_ns = a->ws;
		f->window_end_ns = a->we;
		f->requests = a->requests;
		f->cut = a->cut;
		f->avg_in_flight = a->inflight_ns / (w_s * 1e9);
		f->scrapes = a->scrapes;
		tails_and_goodput(a, f, w_s);
		chunks_and_server_parts(a, f);
		/* M-reasoning: unknown unless some request recorded its text */
		f->text_requests = a->text_requests;
		if (a->text_requests > 0) {
			f->reasoning_tokens = a->reasoning_tokens;
			f->answer_tokens = a->answer_tokens;
		}
		dist_of(&a->ttfr, &a->opts, &f->ttfr_ms);
		dist_of(&a->ttfa, &a->opts, &f->ttfa_ms);
		tt__timing_figures(a, f); /* M-timing */
		server_figures(a, f);
		if (f->has_server_metrics && a->n_gauge[TT_GAUGE_RUNNING] > 0) {
			/* M-active: mean of the server's running gauge over the window. */
			f->avg_active = f->running_mean;
			f->avg_active_source = "server";
		} else {
			f->avg_active = a->streaming_ns / (w_s * 1e9);
			f->avg_active_source = "client";
		}
		queue_figures(a, f, w_s);
	}
	tt__status_decide(a, f);
	blank_not_run(f);
}

void tt_cell_analyzer_free(struct tt_cell_analyzer *a)
{
	if (!a)
		return;
	free(a->tbt);
	tt__rate_acc_free(a->open_loop);
	tt__timing_free(a);
	free(a->ttft.v);
	free(a->e2e.v);
	free(a->end_ttft.v);
	free(a->ttfr.v);
	free(a->ttfa.v);
	free(a->spans.v);
	free(a->rate.v);
	free(a->scout_ttft.v);
	free(a->scout_rate.v);
	free(a->scout_prompt.v);
	free(a);
}

/* ---- whole run ------------------------------------------------------------ */

struct run_ctx {
	struct tt_report *r;
	const struct tt_manifest *m;
	struct tt_cell_analyzer *cur;
	size_t cur_cell;
	unsigned char *done;
	enum tt_code fatal;
	struct tt_error fatal_err;
	unsigned damaged;
	char first_damage[600];
};

static int on_request(void *ctx, const struct tt_request *r)
{
	struct run_ctx *c = ctx;
	if (c->cur)
		tt_cell_analyzer_request(c->cur, r);
	return 0;
}

static int on_scrape(void *ctx, const struct tt_scrape *s)
{
	struct run_ctx *c = ctx;
	if (c->cur)
		tt_cell_analyzer_scrape(c->cur, s);
	return 0;
}

static void begin_cell(void *ctx, size_t cell)
{
	struct run_ctx *c = ctx;
	struct tt_error e;
	c->cur_cell = cell;
	if (tt_cell_analyzer_create(c->m, cell, &c->r->opts, &c->cur, &e)) {
		c->cur = NULL;
		c->fatal = e.code;
		c->fatal_err = e;
	}
}

static void end_cell(void *ctx, size_t cell, enum tt_code code, const struct tt_error *err)
{
	struct run_ctx *c = ctx;
	const char *damage = NULL;

	if (!c->cur)
		return;
	if (code != TT_OK) {
		damage = err && err->msg[0] ? err->msg : tt_strerror(code);
		if (c->damaged++ == 0)
			copy_text(c->first_damage, sizeof c->first_damage, damage);
	}
	tt_cell_analyzer_finish(c->cur, damage, &c->r->cells[cell]);
	c->r->cells[cell].cell = cell;
	/* A cell with no readable record at all cannot be measured. */
	if (code != TT_OK && code != TT_WARN && c->r->cells[cell].status != TT_STATUS_OVER_CAPACITY &&
	    c->r->cells[cell].status != TT_STATUS_NOT_RUN) {
		c->r->cells[cell].status = TT_STATUS_DAMAGED;
		copy_text(c->r->cells[cell].reason, sizeof c->r->cells[cell].reason, damage);
	}
	c->done[cell] = 1;
	tt_cell_analyzer_free(c->cur);
	c->cur = NULL;
}

enum tt_code tt_analyze(struct tt_run *run, const struct tt_analysis_opts *opts,
			struct tt_report **out, struct tt_error *err)
{
	struct tt_report *r = calloc(1, sizeof *r);
	struct run_ctx c;
	struct tt_run_visitor v;
	struct tt_error rerr;
	enum tt_code rc;

	if (!r)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	memset(&c, 0, sizeof c);
	if (opts)
		r->opts = *opts;
	else
		tt_analysis_opts_init(&r->opts);
	if (r->opts.n_quantiles > TT_MAX_QUANTILES)
		r->opts.n_quantiles = TT_MAX_QUANTILES;
	/* Keep the thresholds actually used, so renderers can print them. */
	if (r->opts.queued_share <= 0)
		r->opts.queued_share = TT_QUEUE_SHARE_DEFAULT;
	if (r->opts.min_tokens <= 0)
		r->opts.min_tokens = 100;
	if (r->opts.cut_short_ratio <= 0)
		r->opts.cut_short_ratio = 0.9;
	if (r->opts.stall_ms <= 0)
		r->opts.stall_ms = 100;
	snprintf(r->source, sizeof r->source, "%s", tt_run_path(run));
	rc = tt_manifest_copy(&r->manifest, tt_run_manifest(run), err);
	if (tt_failed(rc)) {
		free(r);
		return rc;
	}
	c.m = &r->manifest;
	c.r = r;
	r->n_cells = r->manifest.n_cells;
	r->cells = calloc(r->n_cells ? r->n_cells : 1, sizeof *r->cells);
	c.done = calloc(r->n_cells ? r->n_cells : 1, 1);
	if (!r->cells || !c.done) {
		free(c.done);
		tt_report_free(r);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	memset(&v, 0, sizeof v);
	v.ctx = &c;
	v.trace.on_request = on_request;
	v.trace.on_scrape = on_scrape;
	v.begin_cell = begin_cell;
	v.end_cell = end_cell;
	tt_error_clear(&rerr);
	rc = tt_run_read_all(run, &v, &rerr);
	if (c.cur) { /* read_all stopped inside a cell */
		tt_cell_analyzer_free(c.cur);
		c.cur = NULL;
	}
	if (c.fatal != TT_OK || rc > TT_WARN) {
		free(c.done);
		tt_report_free(r);
		if (c.fatal) {
			if (err)
				*err = c.fatal_err;
			return c.fatal;
		}
		if (err)
			*err = rerr;
		return rc;
	}
	/* Cells without a trace (over capacity, never run) still get a row. */
	for (size_t i = 0; i < r->n_cells; i++) {
		struct tt_cell_analyzer *a;
		if (c.done[i])
			continue;
		if (tt_cell_analyzer_create(&r->manifest, i, &r->opts, &a, err)) {
			free(c.done);
			tt_report_free(r);
			return err ? err->code : TT_FAILED;
		}
		tt_cell_analyzer_finish(a, NULL, &r->cells[i]);
		r->cells[i].cell = i;
		tt_cell_analyzer_free(a);
	}
	free(c.done);
	*out = r;
	if (c.damaged) {
		return tt_error_setv(err, TT_WARN, rerr.kind, "%u cell%s damaged; first: %s", c.damaged,
				    c.damaged == 1 ? "" : "s", c.first_damage);
	}
	return TT_OK;
}

int tt_report_slo_max_concurrency(const struct tt_report *r, int64_t context)
{
	int best = -1;

	if (!tt_slo_active(&r->opts.slo))
		return -1;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[i];
		if (c->phase == TT_PHASE_DECODE && c->context == context && c->slo_ok &&
		    c->concurrency > best)
			best = c->concurrency;
	}
	return best;
}

void tt_report_free(struct tt_report *r)
{
	if (!r)
		return;
	tt_manifest_release(&r->manifest);
	free(r->cells);
	free(r);
}
