/* The per-cell analyzer's state, shared by the figures (figures.c) and the
 * status rules (status.c) that judge them.  Internal to analysis/. */
#ifndef TT_ANALYSIS_ANALYZER_H
#define TT_ANALYSIS_ANALYZER_H

#include <stdint.h>
#include <string.h>

#include "tokentrace/analysis.h"
#include "tokentrace/gauges.h"

struct tt_hist;
struct tt__rate_acc;
struct tt__timing_acc;

struct dvec {
	double *v;
	size_t n, cap;
};

/* Append x, doubling the array (64 first); -1 out of memory (figures.c). */
int tt__dvec_push(struct dvec *d, double x);

/* Counters and histogram sums read as deltas over the window (vLLM's
 * names; M-ttft-parts, M-spec). */
enum counter {
	C_QUEUE_SUM, C_QUEUE_N, C_PREFILL_SUM, C_PREFILL_N, C_TTFT_SUM, C_TTFT_N,
	C_SPEC_ACCEPTED, C_SPEC_DRAFT_TOKENS, C_SPEC_DRAFTS, C_PC_HITS, C_PC_QUERIES,
	C_SG_QUEUE_SUM, C_SG_QUEUE_N, C_SG_TTFT_SUM, C_SG_TTFT_N, C_TGI_QUEUE_SUM, C_TGI_QUEUE_N,
	C_COUNT
};

struct tt_cell_analyzer {
	const struct tt_cell_info *cell;
	size_t index;            /* the cell's manifest index, for the hook */
	struct tt_analysis_opts opts;
	double duration_s;
	int64_t ws, we;          /* window, ns; ws < 0: no window */
	const char *imported_tool; /* an imported run: the tool that measured it (the
				   * manifest's); NULL for a capture or synth run */
	int oom;

	/* decode */
	long tokens, chunks, multi;
	struct tt_hist *tbt;     /* per-token gaps, ns (M-tbt) */
	struct dvec ttft;        /* ms (M-ttft) */
	struct dvec e2e;         /* ms (M-e2e): the M-completed requests' send to end */
	struct dvec rate;        /* per-request tok/s (M-per-request) */
	struct dvec scout_ttft;  /* prefill */
	struct dvec scout_rate;
	struct dvec scout_prompt;
	long completed, requests, errors, cut;
	double inflight_ns, streaming_ns;
	int64_t stall_ns, longest_gap;   /* M-stall */
	long gaps_over;
	int judge;                       /* M-slo: SLOs set, decode cell */
	long by_tokens[5];               /* M-chunks: chunks of 2, 3, 4, 5+ tokens ([0] unused) */
	double cached_sum, prompt_sum;   /* M-cache */
	double ctr_first[C_COUNT], ctr_last[C_COUNT]; /* M-ttft-parts, M-spec */
	int64_t ctr_t_first[C_COUNT], ctr_t_last[C_COUNT]; /* their scrapes' times */
	int ctr_seen[C_COUNT];
	struct dvec end_ttft;    /* M-ttft-parts rest: (end ns, TTFT ms) pairs of
				  * the measured requests that finished */
	long slo_judged, slo_met, slo_tokens;
	int64_t max_tokens;      /* asked per measured request */
	long ended, short_n, short_length, short_stop, short_max;
	/* M-reasoning */
	long text_requests, reasoning_tokens, answer_tokens;
	struct dvec ttfr, ttfa;  /* ms */

	/* scrapes (M-gauges): each gauge over the scrapes that hold it */
	char engine[16];
	long scrapes, waiting_pos;
	long n_gauge[TT_GAUGE_COUNT_];
	double running_sum, waiting_sum, waiting_max, kv_max;
	double preempt_first, preempt_last;

	/* M-queue: the client's view of queueing */
	int slots;               /* the run's server.slots; -1 unknown */
	long sent_in_window;     /* measured requests sent in [ws, we) */
	struct dvec spans;       /* (send ns, end ns) of measured requests meeting the
				  * window; kept only when slots are known */

	struct tt__rate_acc *open_loop; /* M-rate; open-loop cells only */
	double offered;                 /* their rate */
	struct tt__timing_acc *timing;  /* M-timing; NULL until a request
					 * with capture timing (timing.c) */
};

/* Copy a string into a fixed field, cut to fit. */
static inline void copy_text(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* M-timing (timing.c): a measured request's capture timing, given its
 * first and last token-bearing chunk times and tokens as the figures took
 * them; the cell's timing quality; the accumulator freed. */
void tt__timing_request(struct tt_cell_analyzer *a, const struct tt_request *r, int64_t first,
			int64_t last, long first_tokens, long total_tokens);
void tt__timing_figures(struct tt_cell_analyzer *a, struct tt_cell_figures *f);
void tt__timing_free(struct tt_cell_analyzer *a);
/* Requests queued (docs/metrics.md M-status, M-queue; each threshold's
 * measurements are there). */
#define TT_QUEUE_SHARE_DEFAULT 0.5  /* share of window scrapes with waiting > 0 */
#define TT_QUEUE_MIN_SCRAPES 2       /* scrapes with waiting > 0: one never decides */
#define TT_QUEUE_MIN_STEPS 2.0       /* mean wait per request, decode steps: less is turnover */
#define TT_QUEUE_OVER_SLOTS_SHARE 0.5 /* share of the window with more in flight than slots */
#define TT_QUEUE_MIN_REQUESTS 2      /* requests sent with every slot busy */

/* Decide the cell's status from its figures (status.c, docs/metrics.md
 * "M-status"). */
void tt__status_decide(struct tt_cell_analyzer *a, struct tt_cell_figures *f);

#endif
