/* Cell statuses: their names, and the rules that decide a cell's status
 * from its figures and evidence (docs/metrics.md "Cell status", M-status).
 * A new status rule goes here. */
#include "tokentrace/analysis.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analyzer.h"
#include "analysis/rate.h"
#include "core/c_locale.h"

static const struct {
	const char *name, *key, *legend;
} statuses[TT_STATUS_COUNT_] = {
	{"Valid", "valid", "Valid: every check passed."},
	{"Requests queued", "requests_queued",
	 "Requests queued: the server could not run all requests at once, so some waited in a "
	 "queue."},
	{"Over capacity", "over_capacity",
	 "Over capacity: not run because this many requests at this context would exceed the "
	 "server's KV cache."},
	{"Errors", "errors", "Errors: some requests of the cell failed; figures count only what "
			     "arrived."},
	{"Too few samples", "too_few_samples",
	 "Too few samples: the window holds too few tokens or requests for stable figures."},
	{"Window cut short", "window_cut_short",
	 "Window cut short: the measurement stopped before its planned duration."},
	{"Damaged trace", "damaged_trace",
	 "Damaged trace: part of the cell's trace file was unreadable; figures use the intact "
	 "part."},
	{"Not run", "not_run", "Not run: the capture never measured this cell."},
	{"Short outputs", "short_outputs",
	 "Short outputs: the server ended requests before the output tokens asked for (a "
	 "full context slot, or an end of sequence it did not ignore); figures describe "
	 "shorter requests than planned."},
	{"Rate not sustained", "rate_not_sustained",
	 "Rate not sustained: an open-loop cell's client sent late, or its server ended fewer "
	 "requests than were due or let its backlog grow (the wait from the due time rose "
	 "through the window); latencies from the due time grow with the backlog."},
	{"Client overloaded", "client_overloaded",
	 "Client overloaded: the capture waited for a CPU while chunks arrived, so some times "
	 "are late; the median TTFT or per-request tok/s could be off by more than 1 % and "
	 "0.1 ms."},
};

const char *tt_status_name(enum tt_status s)
{
	return (unsigned)s < TT_STATUS_COUNT_ ? statuses[s].name : "Unknown";
}

const char *tt_status_key(enum tt_status s)
{
	return (unsigned)s < TT_STATUS_COUNT_ ? statuses[s].key : "unknown";
}

const char *tt_status_legend(enum tt_status s)
{
	return (unsigned)s < TT_STATUS_COUNT_ ? statuses[s].legend : "";
}

static void evidence(struct tt_cell_figures *f, enum tt_status st, const char *signal,
		     double value, const char *op, double threshold)
{
	struct tt_evidence *e;
	int hit;

	if (f->n_evidence >= sizeof f->evidence / sizeof *f->evidence)
		return;
	e = &f->evidence[f->n_evidence++];
	e->status = st;
	copy_text(e->signal, sizeof e->signal, signal);
	e->value = value;
	copy_text(e->op, sizeof e->op, op);
	e->threshold = threshold;
	if (strcmp(op, ">") == 0)
		hit = value > threshold;
	else if (strcmp(op, ">=") == 0)
		hit = value >= threshold;
	else if (strcmp(op, "<") == 0)
		hit = value < threshold;
	else
		hit = value == threshold;
	e->triggered = hit;
}

static int triggered(const struct tt_cell_figures *f, enum tt_status st, const char **signal)
{
	for (size_t i = 0; i < f->n_evidence; i++)
		if (f->evidence[i].status == st && f->evidence[i].triggered) {
			if (signal)
				*signal = f->evidence[i].signal;
			return 1;
		}
	return 0;
}

/* M-short: how many, how the server ended them, how far they got, and the
 * capture's arithmetic when it foresaw it (a llama.cpp slot). */
static void short_reason(const struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	const struct tt_cell_info *c = a->cell;
	char how[96];

	if (f->short_length && f->short_stop)
		snprintf(how, sizeof how, "finish length: %ld, stop: %ld", f->short_length,
			 f->short_stop);
	else
		snprintf(how, sizeof how, "finish %s", f->short_length ? "length" : "stop");
	snprintf(f->reason, sizeof f->reason,
		 "%ld of %ld request%s ended before the %lld tokens asked (%s; at most %ld "
		 "tokens)%s%s",
		 f->short_outputs, f->ended, f->ended == 1 ? "" : "s", (long long)a->max_tokens,
		 how, f->short_max_tokens, c->reason ? ": " : "", c->reason ? c->reason : "");
}

/* M-timing: the capture's CPU wait could move a median by more than 1 %
 * and by at least TT_TIMING_MOVE_FLOOR_MS (timing.c bounds each request's
 * TTFT and rate by its wait); both must hold, as for Requests queued. */
static int client_overloaded(struct tt_cell_figures *f)
{
	const struct tt_timing_quality *q = &f->timing;
	if (q->requests <= 0)
		return 0; /* not recorded: nothing to judge */
	evidence(f, TT_STATUS_CLIENT_OVERLOADED, "capture CPU wait: median change bound",
		 q->could_move, ">", TT_TIMING_MOVE_LIMIT);
	evidence(f, TT_STATUS_CLIENT_OVERLOADED, "capture CPU wait: median change bound, ms",
		 q->could_move_ms, ">=", TT_TIMING_MOVE_FLOOR_MS);
	if (q->clock_steps > 0)
		evidence(f, TT_STATUS_VALID, "warning: requests with a wall-clock step",
			 (double)q->clock_steps, ">", 0);
	return q->could_move > TT_TIMING_MOVE_LIMIT && q->could_move_ms >= TT_TIMING_MOVE_FLOOR_MS;
}

static void client_overloaded_reason(struct tt_cell_figures *f)
{
	const struct tt_timing_quality *q = &f->timing;
	char hi[48];

	if (isinf(q->per_request_p50_high))
		snprintf(hi, sizeof hi, "unbounded");
	else
		tt__snprintf_c(hi, sizeof hi, "%.4g", q->per_request_p50_high);
	tt__snprintf_c(f->reason, sizeof f->reason,
		       "the capture waited for a CPU up to %.3g ms in one request (%.2g %% of "
		       "their time; %ld of %ld requests >= 1 ms before the first token; %.2g %% "
		       "of chunks shared a stamp): median TTFT %.4g ms could be as low as %.4g "
		       "ms, per-request tok/s %.4g could be %.4g to %s",
		       q->cpu_wait_max_ms, 100 * q->cpu_wait_share, q->doubtful_ttft,
		       q->ttft_requests, q->chunks ? 100.0 * (double)q->chunks_shared / (double)q->chunks : 0.0,
		       f->ttft_ms.p50, q->ttft_p50_low_ms < 1e-3 ? 0 : q->ttft_p50_low_ms,
		       f->per_request_tok_s.p50,
		       q->per_request_p50_low, hi);
}

/* M-status, Requests queued, from the server: the waiting gauge persisted
 * (waiting > 0 in at least queued_share of the window's scrapes, and in
 * TT_QUEUE_MIN_SCRAPES of them: one scrape never decides) and the mean
 * wait it implies (the queue histogram, else Little's law, M-queue) is at
 * least TT_QUEUE_MIN_STEPS decode steps (shorter waits are turnover: a
 * request admitted at the next step).  The counts are in the figures
 * (queueing in JSON), not in the evidence: a cell has 12 entries. */
static int queued_by_gauge(const struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	const double share = a->opts.queued_share;
	int wait_ok;

	if (!f->has_server_metrics || isnan(f->waiting_share))
		return 0;
	evidence(f, TT_STATUS_QUEUED, "share of scrapes with waiting > 0", f->waiting_share, ">=",
		 share);
	/* without a step time (no token gaps) the share alone decides */
	wait_ok = isnan(f->queue_wait_steps) || f->queue_wait_steps >= TT_QUEUE_MIN_STEPS;
	if (!isnan(f->queue_wait_steps))
		evidence(f, TT_STATUS_QUEUED,
			 isfinite(f->queue_ms) ? "mean queue time, decode steps" :
						 "mean wait per request, decode steps",
			 f->queue_wait_steps, ">=", TT_QUEUE_MIN_STEPS);
	return f->waiting_share >= share && f->waiting_scrapes >= TT_QUEUE_MIN_SCRAPES && wait_ok;
}

/* M-status, Requests queued, from the client: with the server's slot count
 * known (llama.cpp's /props), more requests in flight than slots means the
 * rest waited, whatever the server's metrics say or whether it has any. */
static int queued_by_slots(struct tt_cell_figures *f)
{
	if (f->slots <= 0 || isnan(f->over_slots_share))
		return 0;
	evidence(f, TT_STATUS_QUEUED, "share of window over the slots", f->over_slots_share, ">=",
		 TT_QUEUE_OVER_SLOTS_SHARE);
	return f->over_slots_share >= TT_QUEUE_OVER_SLOTS_SHARE &&
	       f->over_slots_requests >= TT_QUEUE_MIN_REQUESTS;
}

/* M-status, Requests queued, from the readiness check: it timed out (never,
 * for the readiness time, were all C streams producing with nothing
 * waiting).  It decides only when the window has no queue evidence of its
 * own (no waiting gauge, slots unknown): a waiting gauge above 0 now and
 * then from turnover keeps readiness from passing, while the window's
 * persistent evidence (queued_by_gauge, queued_by_slots) says whether the
 * window's requests waited. */
static int queued_by_readiness(const struct tt_cell_figures *f, int timed_out)
{
	int window_judged = (f->has_server_metrics && !isnan(f->waiting_share)) ||
			    (f->slots > 0 && !isnan(f->over_slots_share));
	return timed_out > 0 && !window_judged;
}

/* The reason of a cell queued by the slots or the gauge. */
static void queued_reason(const struct tt_cell_analyzer *a, struct tt_cell_figures *f, int by_slots)
{
	const struct tt_cell_info *c = a->cell;

	if (by_slots)
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "%d requests in flight on the server's %d slots: more than %d in "
			       "flight for %.0f%% of the window, %ld requests sent with every slot "
			       "busy (median TTFT %.0f ms)%s",
			       c->concurrency, f->slots, f->slots, f->over_slots_share * 100,
			       f->over_slots_requests, f->ttft_ms.p50,
			       f->has_server_metrics ? "" :
			       "; no server metrics: judged from the client's requests in flight");
	else if (isinf(f->queue_wait_steps))
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "server reported waiting requests in %.0f%% of scrapes (mean %.2f, max "
			       "%.0f waiting) and no request was sent in the window: they waited "
			       "throughout (threshold %.0f%% of scrapes)",
			       f->waiting_share * 100, f->waiting_mean, f->waiting_max,
			       a->opts.queued_share * 100);
	else if (isfinite(f->queue_ms) && !isnan(f->queue_wait_steps))
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "server reported waiting requests in %.0f%% of scrapes (mean %.2f, max "
			       "%.0f waiting) and a mean queue time of %.1f ms, %.1f decode steps "
			       "(thresholds %.0f%% of scrapes, %g steps)",
			       f->waiting_share * 100, f->waiting_mean, f->waiting_max, f->queue_ms,
			       f->queue_wait_steps, a->opts.queued_share * 100, TT_QUEUE_MIN_STEPS);
	else if (!isnan(f->queue_wait_steps))
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "server reported waiting requests in %.0f%% of scrapes (mean %.2f, max "
			       "%.0f waiting): a request waited %.1f decode steps on average "
			       "(thresholds %.0f%% of scrapes, %g steps)",
			       f->waiting_share * 100, f->waiting_mean, f->waiting_max,
			       f->queue_wait_steps, a->opts.queued_share * 100, TT_QUEUE_MIN_STEPS);
	else
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "server reported waiting requests in %.0f%% of scrapes (mean %.2f, max "
			       "%.0f waiting; threshold %.0f%%)",
			       f->waiting_share * 100, f->waiting_mean, f->waiting_max,
			       a->opts.queued_share * 100);
}

/* M-status, Window cut short: the window the capture recorded, not one
 * chosen at report time (--skip-first, --window cut requests, M-window,
 * but a re-analysis does not make a capture short). */
static double recorded_window_ratio(const struct tt_cell_analyzer *a)
{
	const struct tt_cell_info *c = a->cell;

	if (a->duration_s <= 0 || c->window_start_ns < 0 || c->window_end_ns <= c->window_start_ns)
		return 1;
	return (double)(c->window_end_ns - c->window_start_ns) / 1e9 / a->duration_s;
}

/* M-sustained: did an open-loop cell's client and server keep up with the
 * schedule?  Three checks argue for Rate not sustained, and one warning
 * (status valid) says when the window was too short to tell. */
static void rate_sustained_evidence(struct tt_cell_figures *f)
{
	const struct tt_rate_figures *ol = &f->open_loop;

	/* the client: sends left late */
	evidence(f, TT_STATUS_NOT_SUSTAINED, "send lateness p99 ms", ol->lateness_p99_ms, ">",
		 TT_RATE_LATE_P99_MS);
	/* the server (tt_rate_server_behind): fewer requests ended than were
	 * due, or a backlog growing through the window */
	evidence(f, TT_STATUS_NOT_SUSTAINED, "achieved / scheduled requests",
		 ol->scheduled_req_s > 0 ? ol->achieved_req_s / ol->scheduled_req_s : 1, "<",
		 TT_RATE_ACHIEVED_SHARE);
	evidence(f, TT_STATUS_NOT_SUSTAINED, "TTFT-from-due trend ms/s", ol->ttft_due_trend_ms_s,
		 ">", TT_RATE_TREND_MS_S);
	/* too short to tell: no trend, or one too noisy to tell 5 % over capacity */
	evidence(f, TT_STATUS_VALID, "warning: TTFT-from-due trend standard error ms/s",
		 isfinite(ol->ttft_due_trend_se_ms_s) ? ol->ttft_due_trend_se_ms_s : INFINITY, ">",
		 TT_RATE_TREND_SE_MS_S);
}

/* The reason of an open-loop cell that kept up, or that was not sustained. */
static void rate_reason(struct tt_cell_figures *f)
{
	const struct tt_rate_figures *ol = &f->open_loop;
	char trend[96];

	if (isfinite(ol->ttft_due_trend_ms_s))
		tt__snprintf_c(trend, sizeof trend, "%.3g +/- %.2g ms/s", ol->ttft_due_trend_ms_s,
			       ol->ttft_due_trend_se_ms_s);
	else
		snprintf(trend, sizeof trend, "unknown (fewer than %d requests with a first token)",
			 TT_RATE_TREND_MIN_N);
	if (f->status == TT_STATUS_NOT_SUSTAINED)
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "%.4g requests/s due, %.4g/s ended in the window; send lateness "
			       "p99 %.3g ms; TTFT from the due time grew %.0f ms through the "
			       "window (trend %s)",
			       ol->scheduled_req_s, ol->achieved_req_s, ol->lateness_p99_ms,
			       ol->ttft_due_growth_ms, trend);
	else if (f->status == TT_STATUS_VALID &&
		 !(ol->ttft_due_trend_se_ms_s <= TT_RATE_TREND_SE_MS_S))
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "kept up as far as the window tells, but the window was too short "
			       "to tell 5%% over capacity: TTFT-from-due trend %s (standard "
			       "error above %.0f ms/s)",
			       trend, TT_RATE_TREND_SE_MS_S);
	else if (f->status == TT_STATUS_VALID)
		tt__snprintf_c(f->reason, sizeof f->reason,
			       "kept up: %.4g requests/s due, %.4g/s ended; TTFT-from-due trend "
			       "%s",
			       ol->scheduled_req_s, ol->achieved_req_s, trend);
}

/* Decide the status from the evidence, most severe first ("M-status"). */
void tt__status_decide(struct tt_cell_analyzer *a, struct tt_cell_figures *f)
{
	const struct tt_cell_info *c = a->cell;
	const struct tt_analysis_opts *o = &a->opts;
	int decode = c->phase != TT_PHASE_PREFILL; /* decode and open-loop cells */
	int closed = c->phase == TT_PHASE_DECODE;
	int queued = 0, by_slots = 0, by_gauge = 0, overloaded = 0;

	f->status = TT_STATUS_VALID;
	if (c->state == TT_CELL_OVER_CAPACITY) {
		f->status = TT_STATUS_OVER_CAPACITY;
		snprintf(f->reason, sizeof f->reason, "not run: %s",
			 c->reason ? c->reason : "C x (context + max tokens) > KV capacity");
		return;
	}
	if (c->state == TT_CELL_PENDING || c->state == TT_CELL_RUNNING ||
	    c->state == TT_CELL_FAILED || !c->trace) {
		f->status = TT_STATUS_NOT_RUN;
		snprintf(f->reason, sizeof f->reason, "%s%s%s",
			 c->state == TT_CELL_RUNNING ? "the capture stopped inside this cell" :
			 c->state == TT_CELL_FAILED ? "the capture could not measure this cell" :
			 !c->trace ? "no trace recorded" : "the capture never reached this cell",
			 c->reason ? ": " : "", c->reason ? c->reason : "");
		return;
	}
	if (decode && a->ws < 0) {
		f->status = TT_STATUS_NOT_RUN;
		snprintf(f->reason, sizeof f->reason, "%s",
			 c->state == TT_CELL_INTERRUPTED
				 ? "interrupted: the capture was stopped before this cell's window"
				 : "no measurement window recorded");
		return;
	}
	/* Interrupted (Ctrl-C): what the cut window looked like says nothing
	 * about the server (it read "Requests queued", issue 24.4).  The
	 * window was cut short, by the user; only damage is worse. */
	if (c->state == TT_CELL_INTERRUPTED && !f->damage[0]) {
		double ratio = decode ? recorded_window_ratio(a) : NAN;
		evidence(f, TT_STATUS_CUT_SHORT, "cell interrupted (capture stopped)", 1, ">", 0);
		f->status = decode ? TT_STATUS_CUT_SHORT : TT_STATUS_NOT_RUN;
		if (decode && isfinite(ratio))
			tt__snprintf_c(f->reason, sizeof f->reason,
				       "interrupted (%s): the capture measured %.1f s of %.1f s "
				       "planned",
				       c->reason ? c->reason : "stopped", ratio * a->duration_s,
				       a->duration_s);
		else
			snprintf(f->reason, sizeof f->reason, "interrupted (%s)",
				 c->reason ? c->reason : "stopped");
		return;
	}
	evidence(f, TT_STATUS_DAMAGED, "damaged trace parts", f->damage[0] ? 1 : 0, ">", 0);
	evidence(f, TT_STATUS_ERRORS, "failed requests", (double)f->errors, ">", 0);
	if (c->phase == TT_PHASE_RATE)
		rate_sustained_evidence(f);
	if (decode) {
		if (closed) {
			by_slots = queued_by_slots(f);
			by_gauge = queued_by_gauge(a, f);
			queued = by_slots | by_gauge;
		}
		evidence(f, TT_STATUS_SHORT, "requests ended before max_tokens",
			 f->short_outputs >= 0 ? (double)f->short_outputs : NAN, ">", 0);
		if (closed) {
			evidence(f, TT_STATUS_QUEUED, "readiness check timed out", c->ready_timed_out,
				 ">", 0);
			queued |= queued_by_readiness(f, c->ready_timed_out);
		}
		evidence(f, TT_STATUS_CUT_SHORT, "recorded window / duration_s",
			 recorded_window_ratio(a), "<", o->cut_short_ratio);
		evidence(f, TT_STATUS_TOO_FEW, "output tokens in window", (double)f->output_tokens, "<",
			 (double)o->min_tokens);
		evidence(f, TT_STATUS_TOO_FEW, "requests with a first token", (double)f->ttft_ms.n, "<",
			 1);
		overloaded = client_overloaded(f);
		/* M-cache: a warning, not a status (it argues for "valid") */
		if (isfinite(f->cached_share))
			evidence(f, TT_STATUS_VALID, "warning: prompt share served from cache",
				 f->cached_share, "<", 0.5);
		else if (isfinite(f->server_cache_hit_rate))
			evidence(f, TT_STATUS_VALID, "warning: server prefix cache hit rate",
				 f->server_cache_hit_rate, "<", 0.5);
	} else {
		evidence(f, TT_STATUS_TOO_FEW, "scout requests with a first token",
			 (double)f->ttft_ms.n, "<", 1);
	}
	{
		static const enum tt_status order[] = {TT_STATUS_DAMAGED,
						       TT_STATUS_CLIENT_OVERLOADED, TT_STATUS_ERRORS,
						       TT_STATUS_NOT_SUSTAINED, TT_STATUS_SHORT, TT_STATUS_QUEUED,
						       TT_STATUS_CUT_SHORT, TT_STATUS_TOO_FEW};
		const char *sig = NULL;
		for (size_t i = 0; i < sizeof order / sizeof *order; i++)
			/* Requests queued, Client overloaded: only a whole rule
			 * decides (M-status) */
			if (order[i] == TT_STATUS_QUEUED ? queued
			    : order[i] == TT_STATUS_CLIENT_OVERLOADED ? overloaded
								      : triggered(f, order[i], &sig)) {
				f->status = order[i];
				break;
			}
		if (f->status == TT_STATUS_DAMAGED)
			copy_text(f->reason, sizeof f->reason, f->damage);
		else if (f->status == TT_STATUS_CLIENT_OVERLOADED)
			client_overloaded_reason(f);
		else if (f->status == TT_STATUS_ERRORS)
			snprintf(f->reason, sizeof f->reason, "%ld request%s failed", f->errors,
				 f->errors == 1 ? "" : "s");
		else if (f->status == TT_STATUS_SHORT)
			short_reason(a, f);
		else if (f->status == TT_STATUS_NOT_SUSTAINED ||
			 (f->status == TT_STATUS_VALID && c->phase == TT_PHASE_RATE))
			rate_reason(f);
		else if (f->status == TT_STATUS_QUEUED && (by_slots || by_gauge))
			queued_reason(a, f, by_slots);
		else if (f->status == TT_STATUS_QUEUED && c->concurrency == 1)
			/* what readiness needs (docs/capture.md, Readiness) */
			snprintf(f->reason, sizeof f->reason,
				 "the readiness check timed out: the stream never produced tokens "
				 "steadily, with nothing waiting on the server, for the readiness "
				 "time");
		else if (f->status == TT_STATUS_QUEUED)
			snprintf(f->reason, sizeof f->reason,
				 "the readiness check timed out: the %d streams never all produced "
				 "tokens, with nothing waiting on the server, for the readiness time",
				 c->concurrency);
		else if (f->status == TT_STATUS_CUT_SHORT)
			/* reasons go into CSV and JSON: '.' in any locale */
			tt__snprintf_c(f->reason, sizeof f->reason,
				       "the capture measured %.1f s of %.1f s planned",
				       recorded_window_ratio(a) * a->duration_s, a->duration_s);
		else if (f->status == TT_STATUS_TOO_FEW)
			snprintf(f->reason, sizeof f->reason, "%s: %s",
				 sig ? sig : "samples", decode ? "too few to judge" : "none");
		else if (closed && !f->has_server_metrics && f->slots > 0)
			snprintf(f->reason, sizeof f->reason,
				 "no server metrics: queueing judged from the client's requests in "
				 "flight against the server's %d slots, and the readiness check",
				 f->slots);
		else if (decode && !f->has_server_metrics && a->imported_tool)
			/* an imported run records no readiness check (issue 24.6) */
			snprintf(f->reason, sizeof f->reason,
				 "no server metrics and no readiness check (measured by %s): "
				 "queueing not judged", a->imported_tool);
		else if (decode && !f->has_server_metrics)
			snprintf(f->reason, sizeof f->reason,
				 "no server metrics: queueing judged from the readiness check only");
	}
}
