/* The engine model: continuous batching in steps on an absolute timeline,
 * chunked prefill under a token budget, a paged KV cache with preemption and
 * admission against the prefix cache.  Formulas in docs/sim.md, "Engine
 * model". */
#include "engine.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lateness.h"
#include "prefix_cache.h"
#include "sim_clock.h"
#include "sim_config.h"
#include "sim_req.h"
#include "tokentrace/profile.h"

static int64_t blocks_for(const struct engine *e, int64_t tokens)
{
	int64_t bs = e->cfg->block_size;
	return (tokens + bs - 1) / bs;
}

/* ---- queues ---- */

static void waiting_unlink(struct engine *e, struct sim_req *r)
{
	if (r->wprev)
		r->wprev->wnext = r->wnext;
	else
		e->whead = r->wnext;
	if (r->wnext)
		r->wnext->wprev = r->wprev;
	else
		e->wtail = r->wprev;
	r->wnext = r->wprev = NULL;
	e->nwaiting--;
}

static void waiting_push_back(struct engine *e, struct sim_req *r)
{
	r->wnext = NULL;
	r->wprev = e->wtail;
	if (e->wtail)
		e->wtail->wnext = r;
	else
		e->whead = r;
	e->wtail = r;
	e->nwaiting++;
}

static void waiting_push_front(struct engine *e, struct sim_req *r)
{
	r->wprev = NULL;
	r->wnext = e->whead;
	if (e->whead)
		e->whead->wprev = r;
	else
		e->wtail = r;
	e->whead = r;
	e->nwaiting++;
}

static int running_push(struct engine *e, struct sim_req *r)
{
	if (e->nrunning == e->running_cap) {
		size_t cap = e->running_cap ? e->running_cap * 2 : 64;
		struct sim_req **nr = realloc(e->running, cap * sizeof *nr);
		if (!nr)
			return -1;
		e->running = nr;
		e->running_cap = cap;
	}
	e->running[e->nrunning++] = r;
	return 0;
}

static void running_remove(struct engine *e, struct sim_req *r)
{
	for (size_t i = 0; i < e->nrunning; i++)
		if (e->running[i] == r) {
			memmove(&e->running[i], &e->running[i + 1],
				(e->nrunning - i - 1) * sizeof *e->running);
			e->nrunning--;
			return;
		}
}

static void release_blocks(struct engine *e, struct sim_req *r)
{
	e->kv_blocks_used -= r->blocks_held;
	r->blocks_held = 0;
}

/* Recompute later, as vLLM V1 does: the KV is dropped and the request goes
 * back to the head of the queue needing prompt + generated tokens again. */
static void preempt(struct engine *e, struct sim_req *r)
{
	running_remove(e, r);
	release_blocks(e, r);
	r->computed = 0;
	r->prefill_target = r->prompt_tokens + r->generated;
	r->step_chunk = r->step_decode = 0;
	r->state = REQ_WAITING;
	r->preemptions++;
	e->stats.preemptions++;
	waiting_push_front(e, r);
}

/* ---- speed model ---- */

struct step_plan {
	int n_decode;
	double sum_ctx, sum_prompt, prefill_ms;
};

static double prefill_rate(const struct sim_config *c, int64_t context)
{
	double r = NAN;
	if (c->profile)
		r = tt_profile_prefill_tok_s(c->profile, context);
	if (!(r > 0))
		r = c->prefill_tok_s;
	return r;
}

static uint64_t step_duration_ns(const struct sim_config *c, const struct step_plan *p)
{
	double ms = p->prefill_ms;

	if (p->n_decode > 0) {
		double t = NAN;
		if (c->profile)
			t = tt_profile_tbt_ms(c->profile,
					      (int64_t)(p->sum_prompt / p->n_decode + 0.5),
					      p->n_decode);
		if (!(t > 0))
			t = c->step_base_ms + c->per_seq_ms * p->n_decode +
			    c->per_ctx_token_ns * 1e-6 * p->sum_ctx;
		ms += t;
	}
	double ns = ms * 1e6;
	return ns < 1000 ? 1000 : (uint64_t)ns;
}

static void plan_prefill(const struct sim_config *c, struct sim_req *r, int *budget,
			 struct step_plan *p)
{
	int64_t left = r->prefill_target - r->computed;
	int chunk = left < *budget ? (int)left : *budget;
	if (chunk <= 0)
		return;
	r->step_chunk = chunk;
	*budget -= chunk;
	/* Each chunk costs its share of the whole prompt's measured prefill
	 * time, so a cold prefill takes exactly target / rate(target). */
	p->prefill_ms += 1000.0 * chunk / prefill_rate(c, r->prefill_target);
}

static int64_t cached_prefix(struct engine *e, struct sim_req *r)
{
	const struct sim_config *c = e->cfg;
	size_t hit = 0;
	if (!c->prefix_caching)
		return 0;
	while (hit < r->nblocks && prefix_cache_has(&e->pc, r->block_hash[hit]))
		hit++;
	/* the last block is always recomputed, as in vLLM */
	int64_t max_cached = ((r->prefill_target - 1) / c->block_size) * c->block_size;
	int64_t cached = (int64_t)hit * c->block_size;
	return cached < max_cached ? cached : max_cached;
}

/* With a profile, a request whose prompt is cached still costs its stream
 * the profile's measured decode TTFT before the first token: the turnover a
 * closed-loop worker pays per request (a hybrid model like the seed's
 * LFM2 recomputes much of a repeated prompt; the reference's totals include
 * it).  The request holds its KV but does no work until then; the last step
 * (the uncached block) is left to the step model.  Cold prompts keep the
 * prefill-rate model; parametric runs have no turnover. */
static uint64_t turnover_until(const struct engine *e, const struct sim_req *r, int64_t cached)
{
	const struct sim_config *c = e->cfg;
	double ttft, step;

	if (!c->profile || cached <= 0 || r->generated > 0)
		return 0;
	ttft = tt_profile_ttft_ms(c->profile, r->prompt_tokens, (double)e->nrunning);
	step = tt_profile_tbt_ms(c->profile, r->prompt_tokens, (double)e->nrunning);
	if (!(ttft > 0) || !(step > 0) || ttft <= step)
		return 0;
	return r->arrival_ns + (uint64_t)((ttft - step) * 1e6);
}

/* Composes the step starting at time t; returns 0 when there is nothing to do. */
static int plan_step(struct engine *e, uint64_t t, uint64_t *dur)
{
	const struct sim_config *c = e->cfg;
	struct step_plan p = {0, 0, 0, 0};
	int budget = c->max_batched_tokens, work = 0;

	uint64_t min_hold = 0;

	for (size_t i = 0; i < e->nrunning; i++) {
		struct sim_req *r = e->running[i];
		r->step_chunk = r->step_decode = 0;
		if (r->hold_until > t) {
			if (!min_hold || r->hold_until < min_hold)
				min_hold = r->hold_until;
			continue;
		}
		if (r->computed < r->prefill_target) {
			plan_prefill(c, r, &budget, &p);
			work |= r->step_chunk > 0;
			continue;
		}
		/* room for the step's token and, speculating, its drafts */
		int64_t need = blocks_for(e, r->computed + 1 + (c->spec_draft > 0 ? c->spec_draft : 0));
		int self = 0;
		while (need > r->blocks_held && e->kv_blocks_used >= e->kv_blocks_total) {
			struct sim_req *victim = e->running[e->nrunning - 1];
			self = victim == r;
			preempt(e, victim);
			if (self)
				break;
		}
		if (self) {
			i--; /* running[i] is now the next request, or the end */
			continue;
		}
		while (need > r->blocks_held && e->kv_blocks_used < e->kv_blocks_total) {
			r->blocks_held++;
			e->kv_blocks_used++;
		}
		if (budget <= 0)
			continue;
		budget--;
		r->step_decode = 1;
		p.n_decode++;
		p.sum_ctx += (double)(r->prompt_tokens + r->generated);
		p.sum_prompt += (double)r->prompt_tokens;
		work = 1;
	}
	while (e->whead && budget > 0 && e->nrunning < (size_t)c->max_num_seqs &&
	       e->whead->arrival_ns <= t) {
		struct sim_req *r = e->whead;
		int64_t cached = cached_prefix(e, r);
		int64_t need = blocks_for(e, r->prefill_target);
		if (need > e->kv_blocks_total - e->kv_blocks_used)
			break; /* first come, first served: the head waits for room */
		waiting_unlink(e, r);
		if (running_push(e, r)) {
			waiting_push_front(e, r);
			break;
		}
		r->blocks_held = need;
		e->kv_blocks_used += need;
		r->computed = cached;
		r->cached_tokens = cached;
		r->prompt_start_ns = t;
		r->state = REQ_RUNNING;
		r->step_chunk = r->step_decode = 0;
		if (!r->admit_ns) { /* the queue time servers report: the first wait */
			r->admit_ns = t;
			if (e->hooks.admitted)
				e->hooks.admitted(e->hooks.ctx, r, t);
		}
		e->stats.prefix_queries += (uint64_t)r->prompt_tokens;
		e->stats.prefix_hits += (uint64_t)cached;
		if (!r->preemptions)
			e->stats.prompt_tokens += (uint64_t)r->prompt_tokens;
		r->hold_until = turnover_until(e, r, cached);
		if (r->hold_until > t) {
			if (!min_hold || r->hold_until < min_hold)
				min_hold = r->hold_until;
			continue;
		}
		plan_prefill(c, r, &budget, &p);
		work |= r->step_chunk > 0;
	}
	/* the truth of queueing: each request still waiting that could have
	 * been taken by this step waited for capacity (seqs, KV, budget) */
	for (struct sim_req *w = e->whead; w && w->arrival_ns <= t; w = w->wnext)
		w->passed_steps++;
	if (!work && min_hold > t) {
		/* only held requests: an empty step that ends when the first is
		 * due, or when a request arrives (engine_submit) */
		e->step_start_ns = t;
		e->hold_step = 1;
		*dur = min_hold - t;
		return 1;
	}
	e->hold_step = 0;
	if (!work)
		return 0;
	e->step_start_ns = t;
	*dur = step_duration_ns(c, &p);
	e->stats.busy_slot_sum += (double)e->nrunning;
	return 1;
}

static void finish(struct engine *e, struct sim_req *r)
{
	release_blocks(e, r);
	r->state = REQ_FINISHED;
}

/* sglang:gen_throughput is the rate over the last logging interval (1 s). */
static void note_tokens(struct engine_stats *s, uint64_t now_ns, uint64_t n)
{
	if (!s->gen_window_start_ns)
		s->gen_window_start_ns = now_ns;
	s->gen_window_tokens += n;
	if (now_ns - s->gen_window_start_ns >= 1000000000u) {
		s->gen_throughput = (double)s->gen_window_tokens * 1e9 /
				    (double)(now_ns - s->gen_window_start_ns);
		s->gen_window_start_ns = now_ns;
		s->gen_window_tokens = 0;
	}
}

/* xorshift64* (as faults.c): the --spec-accept draws depend only on --seed
 * and the order of decode steps. */
static double spec_uniform(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* Speculative decoding (--spec-draft K, --spec-accept P): a decode step
 * drafts min(K, tokens still to produce - 1) tokens, and the verifier
 * accepts the longest prefix of them whose draws fall below P (rejection
 * sampling stops at the first rejection).  The step then yields the
 * accepted drafts plus the verifier's own token.  Returns the accepted
 * count; counts the step as vLLM's spec_decode counters do. */
static int64_t spec_step(struct engine *e, const struct sim_req *r)
{
	int64_t left = r->target_len - r->generated - 1, k = e->cfg->spec_draft, acc = 0;

	if (k <= 0 || left <= 0)
		return 0;
	if (k > left)
		k = left;
	while (acc < k && spec_uniform(&e->spec_rng) < e->cfg->spec_accept)
		acc++;
	e->stats.spec_drafts++;
	e->stats.spec_draft_tokens += (uint64_t)k;
	e->stats.spec_accepted_tokens += (uint64_t)acc;
	return acc;
}

/* The step that ended at time t: hand out its tokens. */
static int complete_step(struct engine *e, uint64_t t)
{
	size_t j = 0;
	int finished = 0;
	uint64_t produced = 0;

	for (size_t i = 0; i < e->nrunning; i++) {
		struct sim_req *r = e->running[i];
		int64_t token = 0;
		if (r->step_chunk) {
			r->computed += r->step_chunk;
			if (r->computed >= r->prefill_target) {
				token = 1;
				e->stats.prompt_ms += (t - r->prompt_start_ns) / 1000000u;
				if (e->cfg->prefix_caching)
					for (size_t b = 0; b < r->nblocks; b++)
						prefix_cache_add(&e->pc, r->block_hash[b]);
			}
		} else if (r->step_decode) {
			token = 1 + spec_step(e, r);
			r->computed += token;
		}
		r->step_chunk = r->step_decode = 0;
		if (token) {
			/* a speculative step's tokens share the step's end */
			if (!r->first_token_ns)
				r->first_token_ns = t;
			r->last_token_ns = t;
			for (int64_t k = 0; k < token; k++) {
				r->generated++;
				produced++;
				e->hooks.token(e->hooks.ctx, r, t);
			}
			if (r->generated >= r->target_len) {
				finish(e, r);
				finished = 1;
				continue;
			}
		}
		e->running[j++] = r;
	}
	e->nrunning = j;
	e->stats.generation_tokens += produced;
	e->stats.steps++;
	note_tokens(&e->stats, t, produced);
	return finished;
}

/* The timer is armed this much before a step's end and the last stretch is
 * waited out by polling the clock: a wake-up from epoll on a VM takes tens
 * of microseconds, which would otherwise be step lateness. */
#define SPIN_NS 30000u

static void arm_timer(struct engine *e)
{
	uint64_t now = sim_now_ns();
	uint64_t at = e->step_end_ns > SPIN_NS ? e->step_end_ns - SPIN_NS : 0;
	uint64_t d = at > now ? at - now : 0;
	struct timeval tv = {(time_t)(d / 1000000000u), (suseconds_t)((d % 1000000000u) / 1000)};
	/* evtimer_add counts from the loop's cached time, which may be a whole
	 * callback old; d was computed from the clock now */
	event_base_update_cache_time(e->base);
	evtimer_add(e->step_ev, &tv);
}

static void start_step_at(struct engine *e, uint64_t t)
{
	uint64_t dur;
	if (plan_step(e, t, &dur)) {
		e->busy = 1;
		e->step_end_ns = t + dur;
	} else {
		e->busy = 0;
	}
}

/* Runs every step whose end time has passed, in order, each at its own
 * scheduled time: a late loop catches up without shifting the schedule,
 * and the tokens of the caught-up steps leave as merged chunks. */
static void on_step(evutil_socket_t fd, short what, void *arg)
{
	struct engine *e = arg;
	uint64_t now = sim_now_ns();
	int finished = 0;
	unsigned steps = 0;
	(void)fd;
	(void)what;

	if (e->busy && now < e->step_end_ns && e->step_end_ns - now <= SPIN_NS)
		while ((now = sim_now_ns()) < e->step_end_ns)
			;

	while (e->busy && e->step_end_ns <= now) {
		uint64_t t = e->step_end_ns;
		lateness_note(&e->late, now - t);
		finished |= complete_step(e, t);
		steps++;
		start_step_at(e, t);
		if (!e->busy && e->whead) {
			/* work arrived after t but before now: start it now */
			start_step_at(e, now);
		}
	}
	e->hooks.stepped(e->hooks.ctx, finished, steps);
	if (e->busy)
		arm_timer(e);
}

void engine_submit(struct engine *e, struct sim_req *r)
{
	r->state = REQ_WAITING;
	r->prefill_target = r->prompt_tokens;
	waiting_push_back(e, r);
	if (e->busy && e->hold_step) {
		/* An engine whose running requests are all in their turnover
		 * hold is idle: it takes a new request at once, as a real engine
		 * admits requests between steps that do work.  (An empty step
		 * that ran to the end of the hold kept new requests waiting,
		 * and a calibrated simulator reported queueing the engine it
		 * imitates never showed.)  Nothing was planned in that step, so
		 * it ends here. */
		uint64_t now = sim_now_ns();
		uint64_t t = r->arrival_ns > e->step_start_ns ? r->arrival_ns : e->step_start_ns;
		evtimer_del(e->step_ev);
		e->busy = 0;
		e->step_end_ns = t < now ? t : now;
	}
	if (!e->busy) {
		/* The model's clock starts when the request arrived, not after we
		 * parsed it: the profile's TTFT already holds a real server's
		 * parsing and tokenizing. */
		uint64_t t = r->arrival_ns > e->step_end_ns ? r->arrival_ns : e->step_end_ns;
		uint64_t now = sim_now_ns();
		start_step_at(e, t < now ? t : now);
		if (e->busy)
			arm_timer(e);
	}
}

void engine_abort(struct engine *e, struct sim_req *r)
{
	if (r->state == REQ_RUNNING) {
		running_remove(e, r);
		release_blocks(e, r);
	} else if (r->state == REQ_WAITING) {
		waiting_unlink(e, r);
	}
	r->state = REQ_ABORTED;
}

size_t engine_running_gauge(const struct engine *e)
{
	uint64_t now = sim_now_ns();
	size_t n = 0;

	for (size_t i = 0; i < e->nrunning; i++)
		n += e->running[i]->hold_until <= now;
	return n;
}

double engine_kv_usage(const struct engine *e)
{
	return e->kv_blocks_total ? (double)e->kv_blocks_used / (double)e->kv_blocks_total : 0;
}

int engine_init(struct engine *e, const struct sim_config *cfg, struct event_base *base,
		char *err, size_t errlen)
{
	memset(e, 0, sizeof *e);
	e->cfg = cfg;
	e->base = base;
	e->kv_blocks_total = cfg->kv_capacity / cfg->block_size;
	e->spec_rng = cfg->seed ^ 0x5DEECE66DULL;
	if (prefix_cache_init(&e->pc, (size_t)e->kv_blocks_total)) {
		snprintf(err, errlen, "out of memory for the prefix cache");
		return -1;
	}
	e->step_ev = evtimer_new(base, on_step, e);
	if (!e->step_ev || event_priority_set(e->step_ev, 0)) {
		snprintf(err, errlen, "cannot create the step timer");
		return -1;
	}
	return 0;
}

void engine_set_hooks(struct engine *e, const struct engine_hooks *hooks)
{
	e->hooks = *hooks;
}

void engine_release(struct engine *e)
{
	if (e->step_ev)
		event_free(e->step_ev);
	e->step_ev = NULL;
	free(e->running);
	e->running = NULL;
	prefix_cache_release(&e->pc);
}
