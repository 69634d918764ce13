/* One cell of the matrix, as docs/capture.md ("What is measured, step by
 * step") describes it:
 *
 *   prefill-<ctx>:     one cold scout, max_tokens 1: the prefill row.
 *   decode-<ctx>x<C>:  over capacity?  -> recorded, not run;
 *                      warm every slot's prompt (max_tokens 1);
 *                      C closed-loop workers;
 *                      readiness: all C streams producing and nothing
 *                      queued for readiness_s (or give up after the timeout);
 *                      the window; at its end in-flight streams are cut.
 *
 * The manifest is committed at every state change, so a crash leaves the
 * cell `running` and its trace holds every request that ended before. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cell.h"
#include "cell_end.h"
#include "cell_rate.h"
#include "capture.h"
#include "capture_opts.h"
#include "monotonic.h"
#include "net_loop.h"
#include "probe.h"
#include "progress_line.h"
#include "prompt.h"
#include "sink.h"
#include "tokentrace/run.h"
#include "xfer.h"

enum phase { PH_WARMUP, PH_RUN, PH_OVER };

struct cellrun {
	struct cap *c;
	int n;                 /* slots */
	enum phase phase;
	struct body *bodies;
	struct xfer **cur;
	uint32_t *seq;
	int64_t *restart_at;   /* monotonic ns; -1 none pending */
	int *fails;
	int *produced;
	int64_t *last_tok;     /* monotonic ns of the slot's newest token; 0 none */
	long window_ok;        /* measured requests answered (tokens or success) in the window */
	int in_window;
	int warm_left;
	int scout_done;
	long scout_ok;         /* scouts answered (success or tokens) */
	const char *path;
	int64_t context;       /* prompt tokens asked for */
	long n_ok, n_connect_fail; /* to tell a dead server from bad requests */
};

static double since_s(int64_t a, int64_t b)
{
	return (double)(b - a) / 1e9;
}


static struct tt_cell_info *cell_info(struct cap *c, size_t i)
{
	return &tt_run_writer_manifest(c->run)->cells[i];
}

static void gen_done(struct net *c, struct xfer *x, CURLcode res);

static int start_req(struct cellrun *cr, int slot, enum tt_role role, int64_t sched)
{
	struct cap *c = cr->c;
	struct xfer *x = xfer_get(&c->net, XFER_GEN);
	struct tt_error e;

	if (!x)
		return -1;
	x->done = gen_done;
	x->user = cr;
	x->slot = slot;
	x->seq = cr->seq[slot]++;
	x->role = role;
	x->t_sched = rel_ns(&c->net, sched);
	x->prompt_asked = cr->context;
	if (xfer_start(&c->net, x, cr->path, cr->bodies[slot].data, cr->bodies[slot].len, &e) != TT_OK) {
		xfer_put(&c->net, x);
		return -1;
	}
	cr->cur[slot] = x;
	return 0;
}

static void gen_done(struct net *c, struct xfer *x, CURLcode res)
{
	struct cellrun *cr = x->user;
	int slot = x->slot;
	enum tt_role role = x->role;
	int ok;

	gen_record(c, x, res, TT_FINISH_UNKNOWN, x->t_end);
	ok = res == CURLE_OK && x->http_status < 300 && !x->error_event && !x->malformed;
	if (ok)
		cr->n_ok++;
	else if (!x->http_status)
		cr->n_connect_fail++;
	cell_count_refusal(cr->c, res, x->http_status);
	if (x->st.tokens > 0) {
		cr->produced[slot] = 1;
		cr->last_tok[slot] = x->last_rx;
	}
	/* Refused or unreachable (no HTTP answer at all): the server may be
	 * gone, the slot is not live until it streams again.  A request that
	 * failed otherwise (a reset, a 500, a stall) came from a live server
	 * and does not hold readiness back: with sporadic errors at high
	 * concurrency some slot is always just after one. */
	if (!ok && !x->http_status)
		cr->last_tok[slot] = 0;
	if (cr->in_window && role == TT_ROLE_MEASURED && (ok || x->st.tokens > 0))
		cr->window_ok++;
	cr->cur[slot] = NULL;
	xfer_put(c, x);
	if (role == TT_ROLE_SCOUT) {
		cr->scout_ok += ok || x->st.tokens > 0;
		cr->scout_done = 1;
		return;
	}
	if (role == TT_ROLE_WARMUP) {
		cr->warm_left--;
		return;
	}
	if (cr->phase != PH_RUN)
		return;
	/* Closed loop: the next request goes out now.  After a failure, back
	 * off (50 ms doubling to 3.2 s) so a dead server is not hammered. */
	if (ok) {
		cr->fails[slot] = 0;
		cr->restart_at[slot] = now_ns();
	} else {
		int k = cr->fails[slot] < 6 ? cr->fails[slot] : 6;
		cr->fails[slot]++;
		cr->restart_at[slot] = now_ns() + (int64_t)50000000 * (1 << k);
	}
	if (cr->restart_at[slot] <= now_ns()) {
		int64_t t = cr->restart_at[slot];
		cr->restart_at[slot] = -1;
		if (start_req(cr, slot, TT_ROLE_MEASURED, t) != 0)
			cr->restart_at[slot] = now_ns() + 100000000;
	}
}

/* Cut or abort every stream still open. */
static void cut_all(struct cellrun *cr, enum tt_finish how, int64_t t_end)
{
	for (int s = 0; s < cr->n; s++) {
		struct xfer *x = cr->cur[s];
		if (!x)
			continue;
		xfer_cancel(&cr->c->net, x);
		gen_record(&cr->c->net, x, CURLE_OK, how, rel_ns(&cr->c->net, t_end));
		if (x->st.tokens > 0) {
			cr->produced[s] = 1;
			if (cr->in_window && x->role == TT_ROLE_MEASURED)
				cr->window_ok++;
		}
		cr->cur[s] = NULL;
		xfer_put(&cr->c->net, x);
	}
}

static void cellrun_free(struct cellrun *cr)
{
	if (cr->bodies)
		for (int s = 0; s < cr->n; s++)
			body_free(&cr->bodies[s]);
	free(cr->bodies);
	free(cr->cur);
	free(cr->seq);
	free(cr->restart_at);
	free(cr->fails);
	free(cr->produced);
	free(cr->last_tok);
}

static enum tt_code cellrun_init(struct cellrun *cr, struct cap *c, int n, struct tt_error *err)
{
	memset(cr, 0, sizeof *cr);
	cr->c = c;
	cr->n = n;
	cr->path = strcmp(c->o->endpoint, "chat") == 0 ? "/v1/chat/completions" : "/v1/completions";
	cr->bodies = calloc((size_t)n, sizeof *cr->bodies);
	cr->cur = calloc((size_t)n, sizeof *cr->cur);
	cr->seq = calloc((size_t)n, sizeof *cr->seq);
	cr->restart_at = calloc((size_t)n, sizeof *cr->restart_at);
	cr->fails = calloc((size_t)n, sizeof *cr->fails);
	cr->produced = calloc((size_t)n, sizeof *cr->produced);
	cr->last_tok = calloc((size_t)n, sizeof *cr->last_tok);
	if (!cr->bodies || !cr->cur || !cr->seq || !cr->restart_at || !cr->fails || !cr->produced ||
	    !cr->last_tok)
		return tt_error_set(err, TT_ENOMEM, "out of memory for %d slots", n);
	for (int s = 0; s < n; s++)
		cr->restart_at[s] = -1;
	return TT_OK;
}

/* Requests silent past --request-timeout fail as stalled (their done
 * callback restarts the worker), and due restarts go out. */
static void housekeep(struct cellrun *cr, int64_t now)
{
	struct cap *c = cr->c;
	int64_t limit = (int64_t)(c->o->request_timeout_s * 1e9);

	for (int s = 0; s < cr->n; s++) {
		struct xfer *x = cr->cur[s];
		/* Before its first token a request may wait its turn in the
		 * server's queue (128 warm-ups of 120K each take minutes), so it
		 * gets ten times as long; once streaming, silence is a stall. */
		if (x && now - x->last_rx > (x->n_chunks ? limit : 10 * limit))
			xfer_timeout(&c->net, x, now);
		if (cr->phase == PH_RUN && !cr->cur[s] && cr->restart_at[s] >= 0 &&
		    cr->restart_at[s] <= now) {
			int64_t t = cr->restart_at[s];
			cr->restart_at[s] = -1;
			if (start_req(cr, s, TT_ROLE_MEASURED, t) != 0)
				cr->restart_at[s] = now + 100000000;
		}
	}
}

/* One loop turn with the housekeeping every phase needs.  The wait ends at
 * the deadline or the earliest pending restart, whichever is first. */
static void turn(struct cellrun *cr, int64_t deadline, int64_t cell_start)
{
	struct cap *c = cr->c;
	int64_t now = now_ns(), wait;

	for (int s = 0; s < cr->n; s++)
		if (cr->restart_at[s] >= 0 && cr->restart_at[s] < deadline)
			deadline = cr->restart_at[s];
	wait = (deadline - now + 999999) / 1000000;
	if (wait > 20)
		wait = 20;
	net_step(&c->net, (int)wait);
	now = now_ns();
	housekeep(cr, now);
	c->producing = 0;
	for (int s = 0; s < cr->n; s++)
		c->producing += cr->cur[s] && cr->cur[s]->n_chunks > 0;
	c->warm_left = cr->warm_left;
	scrape_tick(c, now);
	progress_tick(c, now, since_s(cell_start, now));
}


/* Nothing got through and nothing answered: the server is gone.  The cell
 * is kept (its trace says what happened) and the run stops here instead
 * of spending readiness timeouts on every remaining cell. */
static int server_gone(const struct cellrun *cr)
{
	return cr->n_ok == 0 && cr->n_connect_fail > 0;
}

static enum tt_code gone_error(struct cap *c, struct tt_error *err)
{
	return tt_error_set(err, TT_ENET,
			    "no request got an answer from '%s' during the cell; "
			    "stopping (continue later with --resume %s)",
			    c->net.url, tt_run_writer_dir(c->run));
}

static enum tt_code run_prefill(struct cap *c, size_t i, struct tt_trace_writer *tw,
				struct tt_error *err)
{
	struct tt_cell_info *ci = cell_info(c, i);
	struct cellrun cr;
	int64_t start = now_ns();
	enum tt_code rc;
	int stopped = 0, gone, unanswered;

	rc = cellrun_init(&cr, c, 1, err);
	cr.context = ci->context;
	if (rc == TT_OK)
		rc = body_build(c, ci->context, -1, 1, 1, &cr.bodies[0], err);
	if (rc != TT_OK) {
		cellrun_free(&cr);
		cell_finish(c, i, tw, TT_CELL_FAILED, err->msg, NULL);
		return rc;
	}
	cr.phase = PH_OVER;
	ci->start_ns = rel_ns(&c->net, start);
	ci->window_start_ns = ci->start_ns;
	progress_phase(c, "scout", 0, 0);
	/* --prefill-repeats: N cold scouts one after the other, each with a
	 * prompt of its own (the report takes their median, M-prefill). */
	for (int64_t rep = 0; rep < c->o->prefill_repeats && !stopped; rep++) {
		if (rep > 0) {
			body_free(&cr.bodies[0]);
			rc = body_build(c, ci->context, -1, 1, 1, &cr.bodies[0], err);
			if (rc != TT_OK) {
				cellrun_free(&cr);
				cell_finish(c, i, tw, TT_CELL_FAILED, err->msg, NULL);
				return rc;
			}
		}
		cr.scout_done = 0;
		if (start_req(&cr, 0, TT_ROLE_SCOUT, now_ns()) != 0) {
			cellrun_free(&cr);
			cell_finish(c, i, tw, TT_CELL_FAILED, "cannot start the scout request", NULL);
			return TT_OK;
		}
		while (!cr.scout_done) {
			if (*c->net.stop) {
				cut_all(&cr, TT_FINISH_ABORTED, now_ns());
				stopped = 1;
				break;
			}
			turn(&cr, now_ns() + 20000000, start);
		}
		if (!stopped && server_gone(&cr))
			break;
	}
	ci->end_ns = ci->window_end_ns = rel_ns(&c->net, now_ns());
	gone = !stopped && server_gone(&cr);
	/* No scout got an answer (an HTTP 500, an error event, a stall): the
	 * cell measured nothing and fails like a decode window without an
	 * answer; the run stops and a resume measures it again. */
	unanswered = !stopped && !gone && cr.scout_ok == 0;
	cellrun_free(&cr);
	rc = cell_finish(c, i, tw,
			 stopped ? TT_CELL_INTERRUPTED : gone || unanswered ? TT_CELL_FAILED :
			 TT_CELL_DONE,
			 stopped ? "stopped by the user" : gone ? "the server did not answer" :
			 unanswered ? "no scout request got an answer" : NULL,
			 err);
	if (rc == TT_OK && (gone || unanswered))
		return gone_error(c, err);
	return rc != TT_OK ? rc : stopped ? TT_EOF : TT_OK;
}

/* How recent a slot's newest token must be for the slot to count as
 * streaming: a slot that produced once is not live forever (a server that
 * died after one token was declared ready, issue 14). */
#define LIVE_NS ((int64_t)5000000000)

/* Every slot streaming now: its newest token is recent, its last request
 * got an answer (not refused or unreachable), and a request is open or
 * about to go out. */
static int all_live(const struct cellrun *cr, int64_t now)
{
	for (int s = 0; s < cr->n; s++) {
		int64_t t = cr->last_tok[s];
		if (cr->cur[s] && cr->cur[s]->n_chunks && cr->cur[s]->last_rx > t)
			t = cr->cur[s]->last_rx;
		if (!cr->produced[s] || !t || now - t > LIVE_NS ||
		    (!cr->cur[s] && cr->restart_at[s] < 0))
			return 0;
	}
	return 1;
}

static enum tt_code run_decode(struct cap *c, size_t i, struct tt_trace_writer *tw,
			       struct tt_error *err)
{
	struct tt_cell_info *ci = cell_info(c, i);
	struct cellrun cr;
	int n = ci->concurrency;
	int64_t start = now_ns(), workers, steady = -1, ready = -1, wend;
	int64_t window = (int64_t)(c->o->duration_s * 1e9);
	enum tt_code rc;
	const char *stop_reason = NULL;

	rc = cellrun_init(&cr, c, n, err);
	cr.context = ci->context;
	for (int s = 0; rc == TT_OK && s < n; s++)
		rc = body_build(c, ci->context, s, 1, 0, &cr.bodies[s], err);
	if (rc != TT_OK) {
		cellrun_free(&cr);
		cell_finish(c, i, tw, TT_CELL_FAILED, err->msg, NULL);
		return rc;
	}
	ci->start_ns = rel_ns(&c->net, start);

	/* Warm every slot's prompt into the prefix cache, all at once. */
	cr.phase = PH_WARMUP;
	{
		/* More workers than the server's slots (llama.cpp says how
		 * many): the readiness check cannot pass, the window starts at
		 * its timeout, and the line's ETA counts it from now. */
		const struct tt_manifest *m = tt_run_writer_manifest(c->run);
		c->ready_foreseen = m->slots > 0 && n > m->slots;
	}
	c->o_readiness_s = c->o->readiness_s;
	c->ready_timeout_s = c->o->readiness_timeout_s;
	c->warm_total = n;
	progress_phase(c, "warm-up", 0, 0);
	for (int s = 0; s < n; s++)
		if (start_req(&cr, s, TT_ROLE_WARMUP, now_ns()) == 0)
			cr.warm_left++;
	while (cr.warm_left > 0 && !*c->net.stop && !refused(c)) {
		/* the least still to come: readiness, then the window */
		c->cell_left_s = c->o->duration_s +
				 (c->ready_foreseen ? c->o->readiness_timeout_s : c->o->readiness_s);
		turn(&cr, now_ns() + 20000000, start);
	}
	if (*c->net.stop)
		goto stopped;
	if (refused(c))
		goto refused;

	/* Closed-loop workers. */
	cr.phase = PH_RUN;
	for (int s = 0; s < n; s++) {
		body_set_max_tokens(&cr.bodies[s], c->o->max_tokens);
		cr.produced[s] = 0;
		if (start_req(&cr, s, TT_ROLE_MEASURED, now_ns()) != 0)
			cr.restart_at[s] = now_ns() + 100000000;
	}
	workers = now_ns();
	progress_phase(c, "readiness", since_s(start, workers), 0);
	for (;;) {
		int64_t now;
		int server_ok;

		turn(&cr, now_ns() + 20000000, start);
		if (*c->net.stop)
			goto stopped;
		if (refused(c))
			goto refused;
		now = now_ns();
		for (int s = 0; s < n; s++)
			if (cr.cur[s] && cr.cur[s]->n_chunks)
				cr.produced[s] = 1;
		/* Nothing queued: the server's waiting gauge is zero (when it has
		 * one) in the newest scrape. */
		server_ok = !c->has_metrics ||
			    (!c->last_scrape_failed && (isnan(c->last_waiting) || c->last_waiting <= 0));
		if (all_live(&cr, now) && server_ok) {
			if (steady < 0)
				steady = now;
			if (since_s(steady, now) >= c->o->readiness_s) {
				ready = now;
				break;
			}
		} else {
			steady = -1;
		}
		if (since_s(workers, now) >= c->o->readiness_timeout_s) {
			ready = now;
			ci->ready_timed_out = 1;
			break;
		}
		/* For the line: the window comes at the latest at the timeout;
		 * at the soonest once the steady state has lasted long enough. */
		c->ready_wait_s = since_s(workers, now);
		c->ready_timeout_s = c->o->readiness_timeout_s;
		c->cell_left_s = c->o->duration_s +
				 (c->ready_foreseen
					  ? fmax(0, c->o->readiness_timeout_s - since_s(workers, now))
					  : fmax(0, c->o->readiness_s -
							    (steady < 0 ? 0 : since_s(steady, now))));
	}
	c->ready_wait_s = -1;
	/* Not committed now: an fsync with C streams flowing would stall the
	 * loop and delay their timestamps.  The cell's end commits it. */
	ci->ready_ns = ci->window_start_ns = rel_ns(&c->net, ready);

	wend = ready + window;
	cr.in_window = 1;
	progress_phase(c, "measuring", since_s(start, ready), c->o->duration_s);
	while (now_ns() < wend) {
		c->cell_left_s = since_s(now_ns(), wend);
		turn(&cr, wend, start);
		if (*c->net.stop)
			goto stopped;
		if (refused(c))
			goto refused;
	}
	cr.phase = PH_OVER;
	cut_all(&cr, TT_FINISH_CUT, wend);
	ci->window_end_ns = rel_ns(&c->net, wend);
	ci->end_ns = rel_ns(&c->net, now_ns());
	if (server_gone(&cr)) {
		cellrun_free(&cr);
		rc = cell_finish(c, i, tw, TT_CELL_FAILED, "the server did not answer", err);
		return rc != TT_OK ? rc : gone_error(c, err);
	}
	/* A window in which no measured request got an answer measured
	 * nothing: the cell failed, whatever happened before it (it was
	 * 'done' with 0 tokens when the server died after readiness). */
	if (cr.window_ok == 0) {
		cellrun_free(&cr);
		rc = cell_finish(c, i, tw, TT_CELL_FAILED,
				 "no request got an answer during the measurement window", err);
		return rc != TT_OK ? rc : gone_error(c, err);
	}
	cellrun_free(&cr);
	return cell_finish(c, i, tw, TT_CELL_DONE, NULL, err);

refused:
	/* Fail fast: the server is gone mid-cell.  The cell failed (a
	 * resume measures it again) and the run stops now, instead of
	 * waiting out the readiness timeout of every cell left. */
	cr.phase = PH_OVER;
	cut_all(&cr, TT_FINISH_ABORTED, now_ns());
	ci->end_ns = rel_ns(&c->net, now_ns());
	if (ci->window_start_ns >= 0)
		ci->window_end_ns = ci->end_ns;
	cellrun_free(&cr);
	rc = cell_finish(c, i, tw, TT_CELL_FAILED, refused_reason(c), err);
	return rc != TT_OK ? rc : refused_error(c, err);

stopped:
	cr.phase = PH_OVER;
	cut_all(&cr, TT_FINISH_ABORTED, now_ns());
	ci->end_ns = rel_ns(&c->net, now_ns());
	if (ci->window_start_ns >= 0)
		ci->window_end_ns = ci->end_ns;
	cellrun_free(&cr);
	stop_reason = "stopped by the user";
	rc = cell_finish(c, i, tw, TT_CELL_INTERRUPTED, stop_reason, err);
	return rc != TT_OK ? rc : TT_EOF;
}

enum tt_code cell_run(struct cap *c, size_t i, struct tt_error *err)
{
	struct tt_manifest *m = tt_run_writer_manifest(c->run);
	struct tt_cell_info *ci = &m->cells[i];
	struct tt_trace_writer *tw = NULL;
	enum tt_code rc;

	c->net.cur_cell = i;
	/* A rerun (resume) starts the cell afresh. */
	ci->start_ns = ci->ready_ns = ci->window_start_ns = ci->window_end_ns = ci->end_ns = -1;
	ci->ready_timed_out = 0;
	tt_manifest_set_str(&ci->reason, NULL);
	if (ci->phase == TT_PHASE_DECODE) {
		int64_t need = (int64_t)ci->concurrency * (ci->context + m->max_tokens);
		ci->kv_need_tokens = need;
		if (m->kv_capacity_tokens > 0 && need > m->kv_capacity_tokens) {
			char reason[256];
			snprintf(reason, sizeof reason, "%d x (%lld + %lld) = %lld > %lld KV tokens",
				 ci->concurrency, (long long)ci->context, (long long)m->max_tokens,
				 (long long)need, (long long)m->kv_capacity_tokens);
			ci->state = TT_CELL_OVER_CAPACITY;
			tt_manifest_set_str(&ci->reason, reason);
			cell_commit(c);
			return TT_OK;
		}
	}
	if (m->max_model_len > 0) {
		int64_t want = ci->context + (ci->phase == TT_PHASE_DECODE ? m->max_tokens : 1);
		if (want > m->max_model_len) {
			/* The server would refuse every request: say so once. */
			char reason[256];
			snprintf(reason, sizeof reason,
				 "%lld prompt + %lld output tokens = %lld > max_model_len %lld",
				 (long long)ci->context,
				 (long long)(want - ci->context), (long long)want,
				 (long long)m->max_model_len);
			ci->state = TT_CELL_FAILED;
			tt_manifest_set_str(&ci->reason, reason);
			cell_commit(c);
			return TT_OK;
		}
	}
	if (m->slot_context > 0) {
		/* llama.cpp gives each request one slot of slot_context tokens:
		 * a prompt that fills it is refused (HTTP 400, checked on the
		 * project's build: 4096 of 4096 is refused, 4095 runs), and an
		 * output stops when prompt + output reach it (finish "length"). */
		int64_t out = ci->phase == TT_PHASE_DECODE ? m->max_tokens : 1;
		char reason[256];
		if (ci->context >= m->slot_context) {
			/* Over capacity, as a KV cache too small is (issue 22.6):
			 * the server's size, not a failure, decides */
			snprintf(reason, sizeof reason,
				 "%lld prompt tokens >= slot context %lld: the server refuses "
				 "every request", (long long)ci->context, (long long)m->slot_context);
			ci->state = TT_CELL_OVER_CAPACITY;
			tt_manifest_set_str(&ci->reason, reason);
			cell_commit(c);
			return TT_OK;
		}
		if (ci->context + out > m->slot_context) {
			/* Run it: the server answers, with short outputs; the
			 * report says so (docs/metrics.md, "Short outputs"). */
			snprintf(reason, sizeof reason,
				 "%lld prompt + %lld output tokens = %lld > slot context %lld: "
				 "at most %lld output tokens per request",
				 (long long)ci->context, (long long)out, (long long)(ci->context + out),
				 (long long)m->slot_context, (long long)(m->slot_context - ci->context));
			tt_manifest_set_str(&ci->reason, reason);
		}
	}
	rc = prompt_calibrate(c, ci->context, err);
	if (rc != TT_OK) {
		ci->state = TT_CELL_FAILED;
		tt_manifest_set_str(&ci->reason, err->msg);
		cell_commit(c);
		return TT_OK;
	}
	rc = tt_run_writer_open_cell(c->run, i, NULL, &tw, err);
	if (rc != TT_OK)
		return rc;
	ci = &m->cells[i];
	ci->state = TT_CELL_RUNNING;
	ci->start_ns = rel_ns(&c->net, now_ns());
	cell_commit(c);
	rc = sink_set_writer(c->net.sink, tw, err);
	if (rc != TT_OK) {
		tt_trace_writer_close(tw, NULL);
		return rc;
	}
	if (ci->phase == TT_PHASE_PREFILL)
		return run_prefill(c, i, tw, err);
	if (ci->phase == TT_PHASE_RATE)
		return cell_run_rate(c, i, tw, err);
	return run_decode(c, i, tw, err);
}
