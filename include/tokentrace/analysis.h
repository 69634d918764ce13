/* tokentrace: the figures of a speed-test matrix, computed from raw traces.
 *
 * docs/metrics.md defines every figure with its formula; each is computed
 * in src/lib/figures.c, which names the definition it implements. */
#ifndef TOKENTRACE_ANALYSIS_H
#define TOKENTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/run.h"
#include "tokentrace/slo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_MAX_QUANTILES 8

/* Cell status, most severe first in the order a cell is judged. */
enum tt_status {
	TT_STATUS_VALID = 0,
	TT_STATUS_QUEUED = 1,        /* "Requests queued" */
	TT_STATUS_OVER_CAPACITY = 2, /* "Over capacity": not run */
	TT_STATUS_ERRORS = 3,        /* "Errors": measured requests failed */
	TT_STATUS_TOO_FEW = 4,       /* "Too few samples" */
	TT_STATUS_CUT_SHORT = 5,     /* "Window cut short" */
	TT_STATUS_DAMAGED = 6,       /* "Damaged trace": parts unreadable */
	TT_STATUS_NOT_RUN = 7,       /* "Not run": pending, crashed or failed */
	TT_STATUS_SHORT = 8,         /* "Short outputs": requests ended before
				      * the tokens asked (judged after Errors) */
	TT_STATUS_NOT_SUSTAINED = 9, /* "Rate not sustained": an open-loop cell's
				      * client or server fell behind its schedule */
	TT_STATUS_CLIENT_OVERLOADED = 10, /* "Client overloaded": the capture waited
				      * for a CPU long enough that its times could
				      * move a median by more than 1 % (M-timing) */
	TT_STATUS_COUNT_ = 11
};
const char *tt_status_name(enum tt_status s);   /* "Requests queued" */
const char *tt_status_key(enum tt_status s);    /* "requests_queued" */
const char *tt_status_legend(enum tt_status s); /* one sentence for the legend */

/* One check that decided (or could have decided) a status. */
struct tt_evidence {
	enum tt_status status; /* the status this check argues for */
	char signal[48];       /* e.g. "vllm:num_requests_waiting>0 share", "errors" */
	double value;
	char op[4];            /* ">", ">=", "<" ... as the check is written */
	double threshold;
	int triggered;         /* value op threshold held */
};

/* Distribution summary; NaN fields (and n = 0) when there were no samples. */
struct tt_dist {
	size_t n;
	double min, max, mean, p50;
	double q[TT_MAX_QUANTILES]; /* at tt_analysis_opts.quantiles */
};

/* Figures of an open-loop cell (docs/metrics.md M-rate); NaN / 0 for
 * other cells.  "Due" is the scheduled send time, "sent" the actual one. */
struct tt_rate_figures {
	double offered_req_s;      /* the cell's rate */
	double scheduled_req_s;    /* requests due in the window / measured_s */
	double achieved_req_s;     /* requests (any role) ended in the window / measured_s */
	double out_tok_s;          /* output tokens (any role) arriving in the window / measured_s */
	long due;                  /* requests due in the window (measured) */
	long unanswered;           /* of which cut without a token */
	struct tt_dist lateness_ms;   /* sent - due */
	double lateness_p99_ms;       /* its 99th percentile (M-sustained) */
	struct tt_dist ttft_due_ms;   /* first token - due (cut: a lower bound, included) */
	struct tt_dist ttft_sent_ms;  /* first token - sent */
	struct tt_dist e2e_due_ms;    /* end - due (cut: a lower bound, included) */
	double ttft_due_growth_ms; /* p50 of ttft_due, last quarter of the window's
				    * requests minus first quarter */
	/* M-sustained: least-squares slope of ttft_due against the due time
	 * over the window's requests, ms of wait per s of window (a server a
	 * fraction e over its capacity adds 1000 e), and its standard error;
	 * NaN with fewer than 8 such requests */
	double ttft_due_trend_ms_s, ttft_due_trend_se_ms_s;
	long ended;                /* requests (any role) ended (stop, length) in the window */
	/* SLOs judged from the due time (M-slo with send := due) */
	long slo_judged, slo_met;
	double slo_share, goodput_req_s;
	int slo_ok;
};

/* How far the capture's own timing can be trusted (docs/metrics.md
 * M-timing), from the timing its trace recorded (formats/run-v1.md 3.5,
 * run format 1.4).  requests 0: not recorded, every other member 0 / NaN. */
/* M-timing: a median the capture's CPU wait could move by more than this
 * share makes the cell Client overloaded. */
#define TT_TIMING_MOVE_LIMIT 0.01
/* ... and by at least this many ms: a smaller move is within the spread of
 * the recorded times themselves with no client load (docs/metrics.md
 * M-timing: recorded arrival minus the server's write, p99 6-43 us). */
#define TT_TIMING_MOVE_FLOOR_MS 0.1
struct tt_timing_quality {
	long requests;             /* measured requests meeting the window with timing recorded */
	long doubtful_ttft;        /* of M-ttft's, those whose capture waited >= 1 ms for a
				    * CPU between send and first chunk (or unknown) */
	long ttft_requests;        /* M-ttft's requests with timing recorded */
	long chunks;               /* their token-bearing chunks in the window */
	long chunks_shared;        /* of which shared a stamp with a later chunk */
	long chunks_not_kernel;    /* of which were not timed by the kernel */
	long clock_steps;          /* requests during which the wall clock was stepped */
	double cpu_wait_max_ms;    /* the longest CPU wait of one request, send to end */
	double cpu_wait_share;     /* sum of the requests' waits / sum of their durations */
	double ttft_p50_low_ms;    /* M-ttft's median with every TTFT at its lower bound */
	double per_request_p50_low, per_request_p50_high; /* M-per-request's median, bounds */
	double could_move;         /* largest relative change of those medians from the
				    * recorded ones (0.01 = 1 %) */
	double could_move_ms;      /* the same changes as times: the TTFT median's, and the
				    * median decode span's change that moves the rate */
};

struct tt_cell_figures {
	size_t cell;               /* index into the manifest's cells */
	enum tt_phase phase;
	int64_t context;
	int concurrency;
	enum tt_status status;
	char reason[512];          /* human sentence with the deciding evidence */
	struct tt_evidence evidence[16];
	size_t n_evidence;

	/* decode: output tok/s in the window; prefill: prompt tok/s */
	double total_tok_s;
	struct tt_dist per_request_tok_s;
	struct tt_dist ttft_ms;
	struct tt_dist tbt_ms;     /* per token: a k-token chunk spreads its gap over k */
	double avg_active;         /* mean running requests (server gauge, else client) */
	const char *avg_active_source; /* "server", "client" or "reported" (static string) */
	double avg_in_flight;      /* client: time-average of requests sent and not ended */
	long completed;            /* measured requests that finished in the window */
	long output_tokens;        /* tokens arriving in the window */
	double measured_s;         /* window length */
	int64_t prompt_tokens;     /* prefill: scout's prompt tokens as reported; -1 */

	long requests;             /* measured requests overlapping the window */
	long errors;               /* of which failed */
	long cut;                  /* of which cut at window end */
	long chunks;               /* token-bearing chunks in the window */
	long multi_token_chunks;   /* of which carried more than one token */
	int has_server_metrics;
	double waiting_mean, waiting_max, waiting_share; /* waiting gauge over window scrapes */
	double running_mean;
	double kv_usage_max;       /* 0..1; NaN unknown */
	double preemptions;        /* counter increase over the window; NaN unknown */
	long scrapes;              /* scrapes in the window */
	char damage[256];          /* what was unreadable, "" if none */

	/* tails (docs/metrics.md M-stall); decode only */
	double longest_stall_ms;   /* largest gap between token-bearing chunks of one request; NaN none */
	long gaps_over;            /* per-token gaps (M-tbt samples) longer than opts.stall_ms */
	double gaps_over_share;    /* gaps_over / tbt_ms.n; NaN without samples */
	/* goodput under SLOs (M-slo, M-goodput); decode with opts.slo set, else 0 / NaN */
	long slo_judged;           /* measured requests that ended in the window */
	long slo_met;              /* of which met every SLO */
	double slo_share;          /* slo_met / slo_judged */
	double goodput_req_s;      /* slo_met / measured_s */
	double goodput_tok_s;      /* output tokens of the requests that met / measured_s */
	int slo_ok;                /* slo_share >= opts.slo.attain */
	/* M-short: measured requests that ended (stop or length) with fewer
	 * output tokens than max_tokens asked, anywhere in the cell */
	long ended;                /* measured requests that ended so */
	long short_outputs;        /* of which got fewer tokens than asked */
	long short_length, short_stop; /* ... by the server's finish reason */
	long short_max_tokens;     /* the most tokens such a request got; -1 */

	/* chunks and the server's own timings (M-chunks, M-ttft-parts,
	 * M-spec); decode only, NaN when unknown */
	double tokens_per_chunk;   /* output_tokens / chunks */
	long chunks_by_tokens[5];  /* token-bearing chunks in the window carrying 1, 2, 3, 4, 5+ */
	double queue_ms;           /* server: mean queue time of requests over the window */
	double prefill_ms;         /* server: mean prefill time */
	double server_ttft_ms;     /* server: mean time to first token */
	double ttft_rest_ms;       /* client mean TTFT - queue - prefill: network, client, rest */
	double spec_draft_tokens;  /* increase of the draft token counter over the window */
	double spec_accepted_tokens;
	double spec_acceptance;    /* accepted / draft tokens */
	double spec_accepted_len;  /* 1 + accepted / drafts: tokens per verification step */
	/* prefix cache (M-cache); decode only, NaN when unknown */
	double cached_share;       /* client: cached / prompt tokens of measured requests */
	double server_cache_hit_rate; /* server: prefix cache hits / queries over the window */
	double rate;               /* open-loop cells: requests/s offered; 0 others */
	struct tt_rate_figures open_loop; /* M-rate; open-loop cells only */
	/* reasoning models (M-reasoning); decode only, from requests whose
	 * trace recorded which text each chunk carried (run-v1 3.5) */
	long text_requests;        /* measured requests overlapping the window with text recorded */
	long reasoning_tokens;     /* window tokens in reasoning-phase chunks; -1 unknown */
	long answer_tokens;        /* window tokens in answer-phase chunks; -1 unknown */
	struct tt_dist ttfr_ms;    /* send to the first reasoning token (M-ttfr) */
	struct tt_dist ttfa_ms;    /* send to the first answer token (M-ttfa) */
	/* M-timing: the capture's timing quality; decode only */
	struct tt_timing_quality timing;
	/* queueing evidence (M-queue); decode cells, NaN / -1 when unknown */
	double sent_req_s;         /* measured requests sent in the window / measured_s */
	double queue_wait_steps;   /* Little's law: waiting_mean / sent_req_s, in decode
				    * steps (TBT p50); +inf: waiting with nothing sent */
	long waiting_scrapes;      /* window scrapes with the waiting gauge > 0 */
	int slots;                 /* requests the server runs at once (run's server.slots); -1 */
	double over_slots_share;   /* share of the window with more measured requests in
				    * flight than slots; NaN when slots unknown */
	long over_slots_requests;  /* measured requests sent in the window while slots or
				    * more were already in flight; -1 when slots unknown */
	/* the figures people look for by default (issue 24.1); decode cells,
	 * NaN otherwise */
	struct tt_dist e2e_ms;     /* M-e2e: send to end of the M-completed requests */
	double completed_req_s;    /* M-req-rate: completed / measured_s */
	int64_t window_start_ns, window_end_ns; /* M-window's [ws, we) on the run's
						 * clock; -1 without a window */
};

/* The samples behind the figures, as the analyzer counts them (for
 * statistics that need more than a summary, such as the confidence
 * intervals of `tokentrace diff`, docs/diff.md).  Each callback may be NULL;
 * `cell` is the manifest index.  Values are passed before the summaries drop
 * non-positive ones (a receiver that mirrors a figure drops them too). */
struct tt_sample_chunk {
	int64_t t_ns;
	int64_t gap_ns;
	uint32_t k;
};
#define TT_SAMPLE_BATCH 256

struct tt_sample_hook {
	void *ctx;
	/* The analyzer of a cell was created: its window (M-window) in ns, or
	 * -1, -1 when it has none; end: its records are all in (called by
	 * tt_cell_analyzer_finish). */
	void (*begin)(void *ctx, size_t cell, int64_t ws_ns, int64_t we_ns);
	void (*end)(void *ctx, size_t cell);
	/* Token-bearing chunks arriving in the window, n at a time (at most
	 * TT_SAMPLE_BATCH, those of one request in arrival order): each of
	 * k tokens at t_ns (M-total), and gap_ns > 0 the per-token gap it
	 * adds k times (M-tbt), 0 for a request's first chunk. */
	void (*chunks)(void *ctx, size_t cell, const struct tt_sample_chunk *c, size_t n);
	/* One request's TTFT in ms (M-ttft), per request tok/s (M-per-request),
	 * or a prefill scout's prompt tok/s (M-prefill); t_ns is the first token. */
	void (*ttft)(void *ctx, size_t cell, int64_t t_ns, double ms);
	void (*rate)(void *ctx, size_t cell, int64_t t_ns, double tok_s);
	void (*prefill)(void *ctx, size_t cell, double tok_s);
};

struct tt_analysis_opts {
	double skip_first_s;       /* shift the window start later by this much */
	double window_s;           /* 0: to the recorded window end; else at most this long */
	size_t n_quantiles;        /* 0: default {90, 99} */
	double quantiles[TT_MAX_QUANTILES]; /* in percent, e.g. 90, 99, 99.9 */
	/* Status thresholds (docs/metrics.md "Cell status"); 0 = default. */
	double queued_share;       /* waiting>0 in at least this share of scrapes: 0.5 */
	long min_tokens;           /* fewer output tokens in the window: too few (100) */
	double cut_short_ratio;    /* window shorter than ratio x duration: cut short (0.9) */
	double stall_ms;           /* M-stall threshold: gaps longer count (0 = default 100) */
	int show_tails;            /* the human tables (term, md, html, pdf) add the Tails table */
	struct tt_slo slo;         /* goodput objectives (tt_slo_init: none) */
	const struct tt_sample_hook *hook; /* NULL: none (not owned; outlives the analysis) */
};
void tt_analysis_opts_init(struct tt_analysis_opts *o);

struct tt_report {
	struct tt_manifest manifest;   /* a copy, owned by the report */
	struct tt_analysis_opts opts;
	struct tt_cell_figures *cells; /* one per manifest cell, same order */
	size_t n_cells;
	char source[1024];             /* the run's path */
};

/* Analyse every cell of a run, streaming one cell at a time.  TT_WARN when
 * some cells were damaged (their figures are marked; err lists them). */
enum tt_code tt_analyze(struct tt_run *run, const struct tt_analysis_opts *opts,
			struct tt_report **out, struct tt_error *err);
void tt_report_free(struct tt_report *r);

/* Lower-level: analyse one cell from its records (used by tt_analyze, synth
 * calibration and tests).  Feed records, then finish. */
struct tt_cell_analyzer;
enum tt_code tt_cell_analyzer_create(const struct tt_manifest *m, size_t cell,
				     const struct tt_analysis_opts *opts,
				     struct tt_cell_analyzer **out, struct tt_error *err);
void tt_cell_analyzer_request(struct tt_cell_analyzer *a, const struct tt_request *r);
void tt_cell_analyzer_scrape(struct tt_cell_analyzer *a, const struct tt_scrape *s);
/* Compute the figures; damage (may be NULL) describes unreadable parts. */
void tt_cell_analyzer_finish(struct tt_cell_analyzer *a, const char *damage,
			     struct tt_cell_figures *out);
void tt_cell_analyzer_free(struct tt_cell_analyzer *a);

/* The highest concurrency of a context whose decode cell meets the SLOs
 * (slo_ok), or -1 when none does or no SLO was set (M-goodput). */
int tt_report_slo_max_concurrency(const struct tt_report *r, int64_t context);

/* The highest rate of a context whose open-loop cell meets the SLOs with
 * every lower rate's cell meeting them too (M-rate-limit): *lo that rate
 * (NaN: none does), *hi the next rate measured above it (NaN: none).  The
 * limit lies in [lo, hi).  Returns the number of rate cells judged. */
size_t tt_report_rate_limit(const struct tt_report *r, int64_t context, double *lo, double *hi);
/* The highest achieved request rate among a context's open-loop cells
 * (where throughput stops rising: the saturation rate), NaN without any. */
double tt_report_rate_capacity(const struct tt_report *r, int64_t context);

/* M-sustained, the server's side: 1 when an open-loop cell's server fell
 * behind its schedule (fewer requests ended than were due, or the wait
 * from the due time grew through the window), else 0.  The client's side
 * (late sends) is left out: a busy client says nothing of the server. */
int tt_rate_server_behind(const struct tt_rate_figures *f);
/* 1 when the context's SLO limit (tt_report_rate_limit's lo) is above its
 * capacity (tt_report_rate_capacity): the SLOs were met at a rate the
 * server was never measured to end requests at (M-rate-limit). */
int tt_report_rate_limit_above_capacity(const struct tt_report *r, int64_t context);

/* Percentile with linear interpolation between closest ranks (numpy's
 * default) over sorted values; p in [0, 100]. */
double tt_percentile_sorted(const double *sorted, size_t n, double p);

#ifdef __cplusplus
}
#endif
#endif
