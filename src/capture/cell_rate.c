/* An open-loop cell (docs/capture.md "Open-loop load", formats/run-v1.md
 * 2.4): requests go out on a schedule drawn before the cell starts, at
 * their due times, whether or not earlier ones have ended:
 *
 *   warm-up:  requests due in [start, start + warmup_s), role warm-up;
 *   window:   requests due in [window_start, window_end), role measured;
 *   drain:    nothing new; running requests may end until window_end +
 *             drain_s, then the rest are cut.
 *
 * Each record keeps the due time (t_sched) and the moment libcurl handed
 * the request to the connection (t_send), so every latency can be taken
 * from either and the send lateness is known per request. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "capture_opts.h"
#include "cell_end.h"
#include "cell_rate.h"
#include "monotonic.h"
#include "net_loop.h"
#include "probe.h"
#include "progress_line.h"
#include "prompt.h"
#include "schedule.h"
#include "tokentrace/run.h"
#include "workload_replay.h"
#include "xfer.h"

#define POOL 8 /* distinct prompts, used in turn (request k gets prompt k % POOL) */

struct ratecell;

/* One request in flight: its place in the live list and its own body when
 * output lengths are drawn (else it shares the pool's). */
struct rreq {
	struct ratecell *rc;
	struct xfer *x;
	size_t live_i;
	char *body;
};

struct ratecell {
	struct cap *c;
	struct body pool[POOL];
	const char *path;
	int64_t context;
	struct rreq **live;
	size_t n_live, cap_live;
	long n_ok, n_connect_fail, n_start_fail;
	long window_ok; /* requests due in the window that got an answer (success or tokens) */
	int64_t next_housekeep; /* monotonic ns */
	struct schedule_bin *bins; /* --output-tokens @FILE, cumulative */
};

static void rreq_drop(struct ratecell *rc, struct rreq *q)
{
	size_t i = q->live_i;

	rc->live[i] = rc->live[--rc->n_live];
	rc->live[i]->live_i = i;
	free(q->body);
	free(q);
}

static void rate_done(struct net *n, struct xfer *x, CURLcode res)
{
	struct rreq *q = x->user;
	struct ratecell *rc = q->rc;

	int ok = res == CURLE_OK && x->http_status < 300 && !x->error_event && !x->malformed;

	gen_record(n, x, res, TT_FINISH_UNKNOWN, x->t_end);
	if (ok)
		rc->n_ok++;
	else if (!x->http_status)
		rc->n_connect_fail++;
	rc->c->rate_ended++;
	cell_count_refusal(rc->c, res, x->http_status);
	if (x->role == TT_ROLE_MEASURED && (ok || x->st.tokens > 0))
		rc->window_ok++;
	rreq_drop(rc, q);
	xfer_put(n, x);
}

static int send_one(struct ratecell *rc, struct schedule *sc, uint32_t k, enum tt_role role,
		    int64_t due)
{
	struct cap *c = rc->c;
	struct body *b = &rc->pool[k % POOL];
	int64_t out = schedule_output(sc);
	struct rreq *q;
	struct xfer *x;
	struct tt_error e;
	const char *data = b->data;

	if (rc->n_live == rc->cap_live) {
		size_t nc = rc->cap_live ? rc->cap_live * 2 : 64;
		struct rreq **nl = realloc(rc->live, nc * sizeof *nl);
		if (!nl)
			return -1;
		rc->live = nl;
		rc->cap_live = nc;
	}
	q = calloc(1, sizeof *q);
	x = q ? xfer_get(&c->net, XFER_GEN) : NULL;
	if (!x) {
		free(q);
		return -1;
	}
	if (out > 0) {
		struct body own;
		own.data = malloc(b->len + 1);
		own.len = b->len;
		if (!own.data) {
			free(q);
			xfer_put(&c->net, x);
			return -1;
		}
		memcpy(own.data, b->data, b->len + 1);
		body_set_max_tokens(&own, out);
		q->body = own.data;
		data = own.data;
	}
	q->rc = rc;
	q->x = x;
	x->done = rate_done;
	x->user = q;
	x->slot = 0;
	x->seq = k;
	x->role = role;
	x->t_sched = rel_ns(&c->net, due);
	x->prompt_asked = rc->context;
	q->live_i = rc->n_live;
	rc->live[rc->n_live++] = q;
	if (xfer_start(&c->net, x, rc->path, data, b->len, &e) != TT_OK) {
		rreq_drop(rc, q);
		xfer_put(&c->net, x);
		return -1;
	}
	return 0;
}

/* Requests silent past --request-timeout fail as stalled (ten times as
 * long before the first token: a queued request waits its turn). */
static void rate_housekeep(struct ratecell *rc, int64_t now)
{
	int64_t limit = (int64_t)(rc->c->o->request_timeout_s * 1e9);

	for (size_t i = rc->n_live; i-- > 0;) {
		struct xfer *x = rc->live[i]->x;
		if (now - x->last_rx > (x->n_chunks ? limit : 10 * limit))
			xfer_timeout(&rc->c->net, x, now);
	}
}

/* Wait until `until` (monotonic ns) or activity: the loop's wait has
 * millisecond steps, so the last millisecond is slept precisely. */
static void wait_until(struct ratecell *rc, int64_t until)
{
	int64_t left = until - now_ns();

	if (left > 2000000) {
		int ms = (int)((left - 1000000) / 1000000);
		net_step(&rc->c->net, ms > 20 ? 20 : ms);
		return;
	}
	net_step(&rc->c->net, 0);
	if (until > now_ns()) {
		struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
}

static void tick(struct ratecell *rc, int64_t start)
{
	int64_t now = now_ns();
	struct cap *c = rc->c;

	/* Every 50 ms, not every turn: the turns come at the request rate and
	 * the live list can hold thousands of requests when a server falls
	 * behind (a scan per turn then took the capture's whole core). */
	if (now >= rc->next_housekeep) {
		rc->next_housekeep = now + 50000000;
		rate_housekeep(rc, now);
		c->producing = 0;
		for (size_t i = 0; i < rc->n_live; i++)
			c->producing += rc->live[i]->x->n_chunks > 0;
	}
	scrape_tick(c, now);
	progress_tick(c, now, (double)(now - start) / 1e9);
}

static void cut_live(struct ratecell *rc, enum tt_finish how, int64_t t_end)
{
	while (rc->n_live) {
		struct rreq *q = rc->live[rc->n_live - 1];
		struct xfer *x = q->x;
		xfer_cancel(&rc->c->net, x);
		gen_record(&rc->c->net, x, CURLE_OK, how, rel_ns(&rc->c->net, t_end));
		if (x->role == TT_ROLE_MEASURED && x->st.tokens > 0)
			rc->window_ok++;
		rreq_drop(rc, q);
		xfer_put(&rc->c->net, x);
	}
}

static void ratecell_free(struct ratecell *rc)
{
	for (int s = 0; s < POOL; s++)
		body_free(&rc->pool[s]);
	free(rc->live);
	free(rc->bins);
}

enum tt_code cell_run_rate(struct cap *c, size_t i, struct tt_trace_writer *tw,
			   struct tt_error *err)
{
	struct tt_manifest *m = tt_run_writer_manifest(c->run);
	struct tt_cell_info *ci = &m->cells[i];
	struct ratecell rc;
	struct schedule sc;
	int arr = arrivals_parse(c->o->arrivals);
	double rate = ci->rate, mean_ns = 1e9 / ci->rate;
	int64_t start, ws, we, wend, due;
	uint32_t k = 0;
	enum tt_code rc_code = TT_OK;
	int stopped = 0;

	if (c->wl) /* a replayed trace: its own schedule */
		return workload_run(c, i, tw, err);
	memset(&rc, 0, sizeof rc);
	rc.c = c;
	rc.context = ci->context;
	rc.path = strcmp(c->o->endpoint, "chat") == 0 ? "/v1/chat/completions" : "/v1/completions";
	for (int s = 0; rc_code == TT_OK && s < POOL; s++)
		rc_code = body_build(c, ci->context, s, c->o->max_tokens, 0, &rc.pool[s], err);
	if (rc_code != TT_OK) {
		ratecell_free(&rc);
		cell_finish(c, i, tw, TT_CELL_FAILED, err->msg, NULL);
		return rc_code;
	}
	schedule_init(&sc, m->seed, ci->id, rate, arr < 0 ? ARR_CONSTANT : (enum arrivals)arr,
		      c->o->burstiness, c->o->out_min, c->o->out_max);
	if (c->o->n_out_bins) {
		double cum = 0;
		rc.bins = malloc(c->o->n_out_bins * sizeof *rc.bins);
		if (!rc.bins) {
			ratecell_free(&rc);
			tt_error_set(err, TT_ENOMEM, "out of memory");
			cell_finish(c, i, tw, TT_CELL_FAILED, err->msg, NULL);
			return TT_FAILED;
		}
		for (size_t b = 0; b < c->o->n_out_bins; b++) {
			cum += c->o->out_bins[b].weight;
			rc.bins[b].min = c->o->out_bins[b].min;
			rc.bins[b].max = c->o->out_bins[b].max;
			rc.bins[b].cum = cum;
		}
		schedule_set_bins(&sc, rc.bins, c->o->n_out_bins);
	}
	/* The schedule starts a little ahead, so building it costs no lateness. */
	start = now_ns() + 10000000;
	ws = start + (int64_t)(c->o->warmup_s * 1e9);
	we = ws + (int64_t)(c->o->duration_s * 1e9);
	wend = we + (int64_t)(c->o->drain_s * 1e9);
	ci->start_ns = rel_ns(&c->net, start);
	ci->window_start_ns = rel_ns(&c->net, ws);
	ci->window_end_ns = rel_ns(&c->net, we);
	due = sc.kind == ARR_CONSTANT ? start : start + schedule_gap_ns(&sc);
	c->cell_left_s = (double)(wend - start) / 1e9;
	c->rate_offered = rate;
	c->rate_ended = c->rate_ended_prev = 0;
	c->rate_t_prev = 0;
	c->rate_achieved = NAN;
	progress_phase(c, c->o->warmup_s > 0 ? "warm-up" : "measuring", 0,
		       c->o->warmup_s > 0 ? c->o->warmup_s : c->o->duration_s);

	while (!*c->net.stop && !refused(c)) {
		int64_t now = now_ns();
		if (now >= ws && c->phase && strcmp(c->phase, "measuring"))
			progress_phase(c, "measuring", (double)(ws - start) / 1e9, c->o->duration_s);
		/* Every request that is due goes out now, late ones too: a
		 * late send is recorded as such, never skipped. */
		while (due <= now && due < we) {
			if (send_one(&rc, &sc, k, due < ws ? TT_ROLE_WARMUP : TT_ROLE_MEASURED, due))
				rc.n_start_fail++;
			k++;
			due = sc.kind == ARR_CONSTANT ? start + llround((double)k * mean_ns)
						      : due + schedule_gap_ns(&sc);
		}
		if (now >= we)
			break;
		wait_until(&rc, due < we ? due : we);
		tick(&rc, start);
		c->cell_left_s = (double)(we - now_ns()) / 1e9;
	}
	/* The drain: running requests may end. */
	if (!*c->net.stop && rc.n_live)
		progress_phase(c, "drain", (double)(we - start) / 1e9, c->o->drain_s);
	while (!*c->net.stop && !refused(c) && rc.n_live && now_ns() < wend) {
		net_step(&c->net, 20);
		tick(&rc, start);
		c->cell_left_s = (double)(wend - now_ns()) / 1e9;
	}
	if (*c->net.stop || refused(c)) {
		stopped = *c->net.stop != 0;
		cut_live(&rc, TT_FINISH_ABORTED, now_ns());
	} else {
		cut_live(&rc, TT_FINISH_CUT, now_ns());
	}
	c->rate_offered = 0;
	ci = &tt_run_writer_manifest(c->run)->cells[i];
	ci->end_ns = rel_ns(&c->net, now_ns());
	if ((stopped || refused(c)) && ci->end_ns < ci->window_end_ns)
		ci->window_end_ns = ci->end_ns > ci->window_start_ns ? ci->end_ns : -1;
	if (!stopped && refused(c)) {
		/* fail fast: the server is gone (cell_end.h) */
		ratecell_free(&rc);
		rc_code = cell_finish(c, i, tw, TT_CELL_FAILED, refused_reason(c), err);
		return rc_code != TT_OK ? rc_code : refused_error(c, err);
	}
	if (!stopped && rc.n_ok == 0 && rc.n_connect_fail > 0) {
		ratecell_free(&rc);
		rc_code = cell_finish(c, i, tw, TT_CELL_FAILED, "the server did not answer", err);
		if (rc_code != TT_OK)
			return rc_code;
		return tt_error_set(err, TT_ENET,
				    "no request got an answer from '%s' during the cell; stopping "
				    "(continue later with --resume %s)",
				    c->net.url, tt_run_writer_dir(c->run));
	}
	/* No request due in the window got an answer (every one refused, an
	 * HTTP error, a stall...): the cell measured nothing and fails, as a
	 * closed-loop window without an answer does; the run stops and a
	 * resume measures it again (docs/capture.md "Failures"). */
	if (!stopped && rc.window_ok == 0) {
		ratecell_free(&rc);
		rc_code = cell_finish(c, i, tw, TT_CELL_FAILED,
				      "no request due in the window got an answer", err);
		if (rc_code != TT_OK)
			return rc_code;
		return tt_error_set(err, TT_ENET,
				    "no request due in the window of '%s' got an answer from '%s'; "
				    "stopping (continue later with --resume %s)",
				    ci->id, c->net.url, tt_run_writer_dir(c->run));
	}
	ratecell_free(&rc);
	if (stopped) {
		rc_code = cell_finish(c, i, tw, TT_CELL_INTERRUPTED, "stopped by the user", err);
		return rc_code != TT_OK ? rc_code : TT_EOF;
	}
	return cell_finish(c, i, tw, TT_CELL_DONE, NULL, err);
}
