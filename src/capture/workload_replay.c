/* Trace replay (docs/workloads.md "Trace replay", formats/run-v1.md 2.5):
 * the requests of a trace file sent at their own times, as one open-loop
 * cell.  Every request of the slice is measured (no warm-up: the trace is
 * the workload, its cold start included); request k is due at the cell's
 * start plus its trace time, and each record keeps what it asked (its
 * line, prompt and output lengths, block ids: run-v1 3.5 "Workload").
 *
 * Bodies are built ahead of their due time while the loop has time to
 * spare (a 100K-token prompt is 700 KB of digits), so a burst of requests
 * sharing one timestamp goes out back to back.  The loop itself is the
 * open-loop cell's (cell_rate.c), kept apart because its requests own
 * their bodies and carry the workload's fields. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload_replay.h"
#include "capture_opts.h"
#include "cell_end.h"
#include "monotonic.h"
#include "net_loop.h"
#include "probe.h"
#include "progress_line.h"
#include "schedule.h"
#include "tokentrace/workload.h"
#include "workload_prompt.h"
#include "xfer.h"

/* Bodies built ahead of the request to send next, at most: a burst of
 * more than this many requests with one timestamp builds the rest as it
 * sends.  And at most this many bytes of them. */
#define AHEAD 256
#define AHEAD_BYTES ((size_t)512 << 20)
/* See wait_until.  SPIN_NS: the sleep ends this long before the due time
 * and the rest is spun, so a timer wake-up's latency (50 to 100 us on
 * the loaded 2-core test machine) is not send lateness; at 57 bursts a
 * second that is under 1 % of a core. */
#define WAIT_READ_NS 300000
/* From the window's start to the first request's due time: room for the
 * scrape that opens the window (a loopback scrape takes about 1 ms). */
#define LEAD_NS 50000000
#define SPIN_NS 100000

struct wcell;

struct wreq {
	struct wcell *wc;
	struct xfer *x;
	size_t live_i;
	char *body;
};

struct wcell {
	struct cap *c;
	const struct tt_workload *w;
	const char *path;
	struct wreq **live;
	size_t n_live, cap_live;
	char *ring[AHEAD];      /* body of request k at k % AHEAD, for k in [sent, built) */
	size_t ring_len[AHEAD];
	size_t sent, built, ahead_bytes;
	int64_t build_ns;       /* the last build's time: a build starts only
				 * with twice that to spare before a due time */
	long n_ok, n_connect_fail, n_start_fail, window_ok;
	int64_t next_housekeep;
};

/* --shared-prefix GROUPS:LEN (docs/workloads.md "Shared prefixes"): the
 * open-loop cell's schedule (schedule.c: its gaps and output lengths, seeded
 * by the run's seed and the cell's id) as a workload whose request k
 * belongs to group k mod GROUPS and begins with the group's LEN / 512
 * blocks (ids g * SP_GROUP_IDS + b); the rest of its prompt is its own. */
#define SP_GROUP_IDS 1000000u

static enum tt_code shared_prefix_workload(struct cap *c, struct tt_error *err)
{
	struct cap_opts *o = c->o;
	double rate = o->rates[0];
	int64_t ctx = o->contexts[0], span = llround(o->duration_s * 1e9), t = 0;
	uint32_t nb = (uint32_t)(o->sp_tokens / TT_WORKLOAD_BLOCK_TOKENS);
	struct tt_workload *w = calloc(1, sizeof *w);
	struct schedule sc;
	struct schedule_bin *bins = NULL;
	char id[64];
	size_t cap = (size_t)(rate * o->duration_s) + 16;
	int arr = arrivals_parse(o->arrivals);

	if (!w || !(w->reqs = malloc(cap * sizeof *w->reqs)) ||
	    !(w->blocks = malloc(cap * nb * sizeof *w->blocks)))
		goto nomem;
	tt_rate_cell_id(ctx, rate, id, sizeof id);
	schedule_init(&sc, o->seed, id, rate, arr < 0 ? ARR_CONSTANT : (enum arrivals)arr,
		      o->burstiness, o->out_min, o->out_max);
	if (o->n_out_bins) {
		double cum = 0;
		if (!(bins = malloc(o->n_out_bins * sizeof *bins)))
			goto nomem;
		for (size_t b = 0; b < o->n_out_bins; b++) {
			cum += o->out_bins[b].weight;
			bins[b].min = o->out_bins[b].min;
			bins[b].max = o->out_bins[b].max;
			bins[b].cum = cum;
		}
		schedule_set_bins(&sc, bins, o->n_out_bins);
	}
	w->format = TT_WORKLOAD_AUTO;
	for (size_t k = 0; t < span; k++) {
		struct tt_workload_req *r;
		int64_t out = schedule_output(&sc);
		uint32_t g = (uint32_t)(k % (size_t)o->sp_groups);
		if (w->n == cap) {
			size_t nc = cap * 2;
			struct tt_workload_req *nr = realloc(w->reqs, nc * sizeof *nr);
			uint32_t *nbk = nr ? realloc(w->blocks, nc * nb * sizeof *nbk) : NULL;
			if (nr)
				w->reqs = nr;
			if (!nbk)
				goto nomem;
			w->blocks = nbk;
			cap = nc;
		}
		for (uint32_t b = 0; b < nb; b++)
			w->blocks[w->n_blocks++] = g * SP_GROUP_IDS + b;
		r = &w->reqs[w->n++];
		r->t_ns = t;
		r->input = (uint32_t)ctx;
		r->output = (uint32_t)(out > 0 ? out : o->max_tokens);
		r->line = (uint32_t)(k + 1);
		r->block_end = (uint32_t)w->n_blocks;
		w->span_ns = t;
		w->input_total += ctx;
		w->output_total += r->output;
		t += arr == ARR_CONSTANT || arr < 0 ? llround((double)(k + 1) * 1e9 / rate) - t
						    : schedule_gap_ns(&sc);
	}
	w->rows = w->n;
	free(bins);
	c->wl = w;
	return TT_OK;
nomem:
	free(bins);
	tt_workload_free(w);
	return tt_error_set(err, TT_ENOMEM, "out of memory building the shared-prefix workload");
}

enum tt_code workload_open(struct cap *c, struct tt_error *err)
{
	struct cap_opts *o = c->o;
	struct tt_workload_opts wo = {o->trace_start_s, o->trace_duration_s, o->speedup,
				      o->output_cap};

	if (o->shared_prefix)
		return shared_prefix_workload(c, err);
	return tt_workload_load(o->trace, (enum tt_workload_format)tt_workload_format_parse(o->trace_format),
				&wo, &c->wl, err);
}

enum tt_code workload_manifest(struct cap *c, struct tt_manifest *m)
{
	const struct tt_workload *w = c->wl;
	struct tt_workload_info *wi = tt_manifest_set_workload(m, c->o->shared_prefix ? "shared-prefix"
										    : "trace");
	const char *slash = c->o->trace ? strrchr(c->o->trace, '/') : NULL;
	double span = (double)w->span_ns / 1e9, rate = span > 0 ? (double)w->n / span : (double)w->n;
	int64_t ctx = llround((double)w->input_total / (double)w->n);
	int64_t omin = INT64_MAX, omax = 0;
	size_t idx;

	if (!wi)
		return TT_FAILED;
	if (c->o->shared_prefix) {
		wi->groups = c->o->sp_groups;
		wi->prefix_tokens = c->o->sp_tokens;
	} else if (tt_failed(tt_manifest_set_str(&wi->format, tt_workload_format_name(w->format))) ||
		   tt_failed(tt_manifest_set_str(&wi->file, slash ? slash + 1 : c->o->trace))) {
		return TT_FAILED;
	}
	wi->start_s = c->o->trace_start_s;
	wi->duration_s = c->o->trace_duration_s;
	wi->speedup = c->o->speedup;
	wi->output_cap = c->o->output_cap;
	wi->requests = (int64_t)w->n;
	wi->rows = (int64_t)w->rows;
	wi->span_s = span;
	wi->block_tokens = TT_WORKLOAD_BLOCK_TOKENS;
	wi->bytes = (int64_t)w->bytes;
	if (c->o->shared_prefix) { /* the schedule the options asked for */
		rate = c->o->rates[0];
		span = c->o->duration_s;
	}
	for (size_t i = 0; i < w->n; i++) {
		if (w->reqs[i].output < omin)
			omin = w->reqs[i].output;
		if (w->reqs[i].output > omax)
			omax = w->reqs[i].output;
	}
	/* The matrix's settings say what the replay is as an open-loop cell:
	 * one rate, the mean context, every request measured. */
	free(m->contexts);
	free(m->concurrency);
	m->concurrency = NULL;
	m->n_concurrency = 0;
	free(m->rates); /* --shared-prefix: the settings' own --rates copy */
	m->contexts = malloc(sizeof *m->contexts);
	m->rates = malloc(sizeof *m->rates);
	if (!m->contexts || !m->rates)
		return TT_FAILED;
	m->contexts[0] = ctx;
	m->n_contexts = 1;
	m->rates[0] = rate;
	m->n_rates = 1;
	m->warmup_s = 0;
	m->drain_s = c->o->drain_s;
	m->duration_s = span;
	m->output_min = omin;
	m->output_max = omax;
	m->max_tokens = omax;
	return tt_manifest_add_rate_cell(m, ctx, rate, &idx);
}

static void wreq_drop(struct wcell *wc, struct wreq *q)
{
	size_t i = q->live_i;

	wc->live[i] = wc->live[--wc->n_live];
	wc->live[i]->live_i = i;
	free(q->body);
	free(q);
}

static void wl_done(struct net *n, struct xfer *x, CURLcode res)
{
	struct wreq *q = x->user;
	struct wcell *wc = q->wc;
	int ok = res == CURLE_OK && x->http_status < 300 && !x->error_event && !x->malformed;

	gen_record(n, x, res, TT_FINISH_UNKNOWN, x->t_end);
	if (ok)
		wc->n_ok++;
	else if (!x->http_status)
		wc->n_connect_fail++;
	if (ok || x->st.tokens > 0)
		wc->window_ok++;
	wreq_drop(wc, q);
	xfer_put(n, x);
}

/* Build the next body ahead; 0, or -1 out of memory. */
static int build_next(struct wcell *wc)
{
	size_t k = wc->built, s = k % AHEAD;
	int64_t t0 = now_ns();

	if (workload_body(wc->c, wc->w, k, &wc->ring[s], &wc->ring_len[s]))
		return -1;
	wc->ahead_bytes += wc->ring_len[s];
	wc->built++;
	wc->build_ns = now_ns() - t0;
	return 0;
}

static int send_next(struct wcell *wc, int64_t due)
{
	struct cap *c = wc->c;
	size_t k = wc->sent, s = k % AHEAD, n_ids;
	const struct tt_workload_req *r = &wc->w->reqs[k];
	struct wreq *q;
	struct xfer *x;
	struct tt_error e;

	if (wc->built == k && build_next(wc))
		return -1;
	wc->sent++;
	wc->ahead_bytes -= wc->ring_len[s];
	if (wc->n_live == wc->cap_live) {
		size_t nc = wc->cap_live ? wc->cap_live * 2 : 64;
		struct wreq **nl = realloc(wc->live, nc * sizeof *nl);
		if (!nl)
			goto fail;
		wc->live = nl;
		wc->cap_live = nc;
	}
	q = calloc(1, sizeof *q);
	x = q ? xfer_get(&c->net, XFER_GEN) : NULL;
	if (!x) {
		free(q);
		goto fail;
	}
	q->wc = wc;
	q->x = x;
	q->body = wc->ring[s];
	wc->ring[s] = NULL;
	x->done = wl_done;
	x->user = q;
	x->slot = 0;
	x->seq = (uint32_t)k;
	x->role = TT_ROLE_MEASURED;
	x->t_sched = rel_ns(&c->net, due);
	x->prompt_asked = r->input;
	x->wl.on = 1;
	x->wl.line = r->line;
	x->wl.output_asked = r->output;
	x->wl.blocks = tt_workload_blocks(wc->w, k, &n_ids);
	x->wl.n_blocks = n_ids;
	q->live_i = wc->n_live;
	wc->live[wc->n_live++] = q;
	if (xfer_start(&c->net, x, wc->path, q->body, wc->ring_len[s], &e) != TT_OK) {
		wreq_drop(wc, q);
		xfer_put(&c->net, x);
		return -1;
	}
	return 0;
fail:
	free(wc->ring[s]);
	wc->ring[s] = NULL;
	return -1;
}

/* Requests silent past --request-timeout fail as stalled (ten times as
 * long before the first token), as in an open-loop cell. */
static void housekeep(struct wcell *wc, int64_t now)
{
	int64_t limit = (int64_t)(wc->c->o->request_timeout_s * 1e9);

	for (size_t i = wc->n_live; i-- > 0;) {
		struct xfer *x = wc->live[i]->x;
		if (now - x->last_rx > (x->n_chunks ? limit : 10 * limit))
			xfer_timeout(&wc->c->net, x, now);
	}
}

static void tick(struct wcell *wc, int64_t start)
{
	int64_t now = now_ns();
	struct cap *c = wc->c;

	if (now >= wc->next_housekeep) {
		wc->next_housekeep = now + 50000000;
		housekeep(wc, now);
		c->producing = 0;
		for (size_t i = 0; i < wc->n_live; i++)
			c->producing += wc->live[i]->x->n_chunks > 0;
	}
	scrape_tick(c, now);
	progress_tick(c, now, (double)(now - start) / 1e9);
}

/* Wait until `until` or activity; the last millisecond slept precisely
 * (the loop's wait has millisecond steps). */
static void wait_until(struct wcell *wc, int64_t until)
{
	int64_t left = until - now_ns();

	if (left > 2000000) {
		int ms = (int)((left - 1000000) / 1000000);
		net_step(&wc->c->net, ms > 20 ? 20 : ms);
		return;
	}
	/* Reading what came in can take longer than a short wait: within
	 * WAIT_READ_NS of the due time the loop only sleeps (the chunks keep
	 * their kernel receive stamps, read a moment later). */
	if (left > WAIT_READ_NS)
		net_step(&wc->c->net, 0);
	if (until - SPIN_NS > now_ns()) {
		int64_t wake = until - SPIN_NS;
		struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (now_ns() < until)
		;
}

static void cut_live(struct wcell *wc, enum tt_finish how, int64_t t_end)
{
	while (wc->n_live) {
		struct wreq *q = wc->live[wc->n_live - 1];
		struct xfer *x = q->x;
		xfer_cancel(&wc->c->net, x);
		gen_record(&wc->c->net, x, CURLE_OK, how, rel_ns(&wc->c->net, t_end));
		if (x->st.tokens > 0)
			wc->window_ok++;
		wreq_drop(wc, q);
		xfer_put(&wc->c->net, x);
	}
}

static void wcell_free(struct wcell *wc)
{
	for (size_t s = 0; s < AHEAD; s++)
		free(wc->ring[s]);
	free(wc->live);
}

/* Connections opened before the clock starts: the most requests the
 * slice has due within WARM_WINDOW_NS, at most WARM_MAX.  A request that
 * finds no idle connection opens one first, and that connect and the
 * server's accept are send lateness: in a replay against the simulator
 * the first bursts, on new connections, went out 1.1 to 1.9 ms late where
 * later bursts of the same size took 0.3 to 0.5 ms. */
#define WARM_WINDOW_NS 500000000
#define WARM_MAX 64

static void warm_done(struct net *n, struct xfer *x, CURLcode res)
{
	(void)n;
	(void)res;
	(*(int *)x->user)--;
}

static void warm_connections(struct cap *c, const struct tt_workload *w)
{
	size_t most = 1, j = 0;
	int running = 0;
	struct xfer *xs[WARM_MAX];
	int64_t deadline;

	for (size_t i = 0; i < w->n; i++) {
		while (w->reqs[i].t_ns - w->reqs[j].t_ns >= WARM_WINDOW_NS)
			j++;
		if (i - j + 1 > most)
			most = i - j + 1;
	}
	if (most > WARM_MAX)
		most = WARM_MAX;
	for (size_t k = 0; k < most; k++) {
		xs[k] = xfer_get(&c->net, XFER_GET);
		if (!xs[k])
			break;
		xs[k]->done = warm_done;
		xs[k]->user = &running;
		if (xfer_start(&c->net, xs[k], "/v1/models", NULL, 0, NULL) != TT_OK) {
			xfer_put(&c->net, xs[k]);
			break;
		}
		running++;
	}
	most = (size_t)running;
	deadline = now_ns() + 5000000000LL;
	while (running > 0 && now_ns() < deadline && !*c->net.stop)
		net_step(&c->net, 20);
	for (size_t k = 0; k < most; k++) {
		if (running > 0)
			xfer_cancel(&c->net, xs[k]);
		xfer_put(&c->net, xs[k]);
	}
}

enum tt_code workload_run(struct cap *c, size_t i, struct tt_trace_writer *tw,
			  struct tt_error *err)
{
	struct tt_cell_info *ci = &tt_run_writer_manifest(c->run)->cells[i];
	const struct tt_workload *w = c->wl;
	struct wcell wc;
	int64_t start, t0, we, wend;
	int stopped = 0, nomem = 0;
	enum tt_code rc;

	memset(&wc, 0, sizeof wc);
	wc.c = c;
	wc.w = w;
	wc.path = "/v1/completions";
	/* the first bodies before the clock starts */
	while (wc.built < w->n && wc.built < AHEAD && wc.ahead_bytes < AHEAD_BYTES && !nomem)
		nomem = build_next(&wc);
	if (nomem) {
		wcell_free(&wc);
		cell_finish(c, i, tw, TT_CELL_FAILED, "out of memory building prompts", NULL);
		return tt_error_set(err, TT_ENOMEM, "out of memory building the trace's prompts");
	}
	warm_connections(c, w);
	/* The window opens with a scrape of the server's counters, LEAD_NS
	 * before the first request is due, so the report's counter deltas
	 * (the prefix-cache hit rate) take in the trace's cold start: with
	 * the scrapes' own grid the first ones were left out. */
	start = now_ns() + 10000000;
	c->next_scrape = start;
	t0 = start + LEAD_NS;
	we = t0 + w->span_ns + 1;
	wend = we + (int64_t)(c->o->drain_s * 1e9);
	ci->start_ns = rel_ns(&c->net, start);
	ci->window_start_ns = ci->start_ns;
	ci->window_end_ns = rel_ns(&c->net, we);
	c->cell_left_s = (double)(wend - start) / 1e9;

	while (!*c->net.stop && wc.sent < w->n) {
		int64_t now = now_ns(), due;
		/* Every request that is due goes out now, late ones too: a
		 * late send is recorded as such, never skipped. */
		while (wc.sent < w->n && (due = t0 + w->reqs[wc.sent].t_ns) <= now)
			if (send_next(&wc, due))
				wc.n_start_fail++;
		if (wc.sent == w->n)
			break;
		/* The chores come after the sends and before the wait, so the
		 * loop goes straight from the wait to the next send. */
		tick(&wc, start);
		c->cell_left_s = (double)(wend - now_ns()) / 1e9;
		due = t0 + w->reqs[wc.sent].t_ns;
		if (wc.built < w->n && wc.built - wc.sent < AHEAD && wc.ahead_bytes < AHEAD_BYTES &&
		    due - now_ns() > 2 * wc.build_ns + 500000) {
			if (build_next(&wc))
				break;
			net_step(&c->net, 0);
		} else {
			wait_until(&wc, due);
		}
	}
	/* The drain: running requests may end. */
	while (!*c->net.stop && wc.n_live && now_ns() < wend) {
		net_step(&c->net, 20);
		tick(&wc, start);
		c->cell_left_s = (double)(wend - now_ns()) / 1e9;
	}
	stopped = *c->net.stop != 0;
	cut_live(&wc, stopped ? TT_FINISH_ABORTED : TT_FINISH_CUT, now_ns());
	ci = &tt_run_writer_manifest(c->run)->cells[i];
	ci->end_ns = rel_ns(&c->net, now_ns());
	if (stopped && ci->end_ns < ci->window_end_ns)
		ci->window_end_ns = ci->end_ns > ci->window_start_ns ? ci->end_ns : -1;
	wcell_free(&wc);
	if (stopped) {
		rc = cell_finish(c, i, tw, TT_CELL_INTERRUPTED, "stopped by the user", err);
		return rc != TT_OK ? rc : TT_EOF;
	}
	if (wc.window_ok == 0) {
		rc = cell_finish(c, i, tw, TT_CELL_FAILED, "no request of the trace got an answer", err);
		if (rc != TT_OK)
			return rc;
		return tt_error_set(err, TT_ENET, "no request of the trace got an answer from '%s'",
				    c->net.url);
	}
	return cell_finish(c, i, tw, TT_CELL_DONE, NULL, err);
}

void workload_close(struct cap *c)
{
	tt_workload_free(c->wl);
	c->wl = NULL;
}
