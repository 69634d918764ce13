/* Synthetic runs (synth.h).  Each decode cell is generated from a handful of
 * parameters (TTFT, token-gap centre and mean, client turnaround, window
 * offset), and the parameters are calibrated by analysing the generated
 * records with the same code the report uses, so the run reproduces the
 * profile under docs/metrics.md's definitions. */
#include "tokentrace/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"

#define MS 1000000LL
#define CLUSTER_SHARE 0.9   /* share of token gaps near the centre */
#define SCRAPE_NS (250 * MS)
#define CALIBRATION_PASSES 8

void tt_synth_opts_init(struct tt_synth_opts *o)
{
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->multi_rate = 0.05;
	o->scale = 1;
	o->max_tokens = 4096;
}

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	/* splitmix64: small, fast, and good enough for jitter. */
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double urand(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

struct params {
	double ttft_ms;    /* median TTFT */
	double center_ms;  /* most token gaps sit within +-2 % of this */
	double mean_ms;    /* mean token gap: 1000 / per-request tok/s */
	double delta_ms;   /* client turnaround between a worker's requests */
	double ramp_ms;    /* window start after the workers start */
	double early_ms;   /* >0: window opens this long before the first tokens */
	double window_ms;
	double active;     /* running gauge mean to show */
	int queued;        /* show waiting requests */
	double error_rate;
	double multi_rate;
	int concurrency;
	int64_t out_tokens;
	int64_t context;
};

struct sink {
	struct tt_cell_analyzer *an;
	struct tt_trace_writer *w;
	struct tt_error *err;
	enum tt_code rc;
	struct tt_chunk *chunks;
	size_t cap;
};

static void emit_request(struct sink *s, const struct tt_request *r)
{
	if (s->an)
		tt_cell_analyzer_request(s->an, r);
	if (s->w && !s->rc)
		s->rc = tt_trace_write_request(s->w, r, s->err);
}

static void emit_scrape(struct sink *s, const struct tt_scrape *sc)
{
	if (s->an)
		tt_cell_analyzer_scrape(s->an, sc);
	if (s->w && !s->rc)
		s->rc = tt_trace_write_scrape(s->w, sc, s->err);
}

static double gap_ms(const struct params *p, struct rng *r)
{
	double long_ms = (p->mean_ms - CLUSTER_SHARE * p->center_ms) / (1 - CLUSTER_SHARE);

	if (long_ms < 0.2 * p->center_ms)
		long_ms = 0.2 * p->center_ms;
	if (urand(r) < CLUSTER_SHARE)
		return p->center_ms * (1 + 0.04 * (urand(r) - 0.5));
	return long_ms * (1 + 0.2 * (urand(r) - 0.5));
}

struct cell_times {
	int64_t start, ready, ws, we, end;
};

/* One decode cell: warm-ups, then C closed-loop workers from ts; the window
 * is [ts + ramp, ts + ramp + window); streams still running at its end are
 * cut.  Records go to the sink.  Deterministic for a given rng seed. */
/* Warm-ups: each slot's prompt, max_tokens 1.  Emitted to s unless s is
 * NULL; returns when the last one ended (the workers start 10 ms later). */
static int64_t gen_warmups(const struct params *p, struct rng *r, int64_t t0, struct sink *s)
{
	int64_t warm_end = t0;
	struct tt_chunk ch;

	for (int slot = 0; slot < p->concurrency; slot++) {
		struct tt_request q;
		memset(&q, 0, sizeof q);
		q.slot = (uint32_t)slot;
		q.role = TT_ROLE_WARMUP;
		q.t_sched_ns = t0 + slot * 50000LL;
		q.t_send_ns = q.t_sched_ns + 20000 + (int64_t)(urand(r) * 60000);
		ch.t_ns = q.t_send_ns + (int64_t)(p->ttft_ms * MS * (1 + 0.01 * urand(r)));
		ch.tokens = 1;
		q.t_end_ns = ch.t_ns + 100000;
		q.http_status = 200;
		q.prompt_tokens = p->context;
		q.cached_tokens = -1;
		q.finish = TT_FINISH_LENGTH;
		q.n_chunks = 1;
		q.chunks = &ch;
		if (s)
			emit_request(s, &q);
		if (q.t_end_ns > warm_end)
			warm_end = q.t_end_ns;
	}
	return warm_end;
}

/* The measurement window gen_decode will use, without generating the cell. */
static void window_of(const struct params *p, uint64_t seed, int64_t t0, int64_t *ws, int64_t *we)
{
	struct rng r = {seed};
	int64_t ts = gen_warmups(p, &r, t0, NULL) + 10 * MS;

	*ws = ts + (int64_t)(p->ramp_ms * MS);
	*we = *ws + (int64_t)(p->window_ms * MS);
}

static int gen_decode(const struct params *p, uint64_t seed, int64_t t0, struct sink *s,
		      struct cell_times *ct)
{
	struct rng r = {seed};
	int C = p->concurrency;
	int64_t ts, ws, we, warm_end;
	int64_t n = p->out_tokens;

	if ((size_t)n + 1 > s->cap) {
		struct tt_chunk *c = realloc(s->chunks, ((size_t)n + 1) * sizeof *c);
		if (!c)
			return -1;
		s->chunks = c;
		s->cap = (size_t)n + 1;
	}
	warm_end = gen_warmups(p, &r, t0, s);
	ts = warm_end + 10 * MS;
	ws = ts + (int64_t)(p->ramp_ms * MS);
	we = ws + (int64_t)(p->window_ms * MS);
	for (int slot = 0; slot < C; slot++) {
		int64_t sched = ts;
		for (uint32_t seq = 0; sched < we; seq++) {
			struct tt_request q;
			int64_t t;
			size_t nc = 0;
			int64_t fail_at = -1;

			memset(&q, 0, sizeof q);
			q.slot = (uint32_t)slot;
			q.seq = seq;
			q.role = TT_ROLE_MEASURED;
			q.t_sched_ns = sched;
			q.t_send_ns = sched + 20000 + (int64_t)(urand(&r) * 60000);
			q.http_status = 200;
			q.prompt_tokens = p->context;
			q.cached_tokens = p->context - p->context % 16;
			if (p->error_rate > 0 && urand(&r) < p->error_rate)
				fail_at = n / 2;
			t = q.t_send_ns + (int64_t)(p->ttft_ms * MS * (1 + 0.01 * (urand(&r) - 0.5)));
			q.finish = TT_FINISH_LENGTH;
			for (int64_t i = 0; i < n;) {
				uint32_t k = 1;
				if (i > 0)
					t += (int64_t)(gap_ms(p, &r) * MS);
				if (i > 0 && i + 1 < n && p->multi_rate > 0 && urand(&r) < p->multi_rate) {
					t += (int64_t)(gap_ms(p, &r) * MS);
					k = 2;
				}
				if (t >= we) {
					q.finish = TT_FINISH_CUT;
					break;
				}
				if (fail_at >= 0 && i >= fail_at) {
					q.finish = TT_FINISH_ERROR;
					q.fail = TT_FAIL_RESET;
					q.error = "connection reset by peer (synthetic fault)";
					break;
				}
				s->chunks[nc].t_ns = t;
				s->chunks[nc].tokens = k;
				nc++;
				i += k;
			}
			q.n_chunks = nc;
			q.chunks = s->chunks;
			if (q.finish == TT_FINISH_CUT)
				q.t_end_ns = we;
			else
				q.t_end_ns = (nc ? s->chunks[nc - 1].t_ns : q.t_send_ns) + 200000;
			emit_request(s, &q);
			if (q.finish == TT_FINISH_CUT)
				break;
			sched = q.t_end_ns + (int64_t)(p->delta_ms * MS);
		}
	}
	/* Server scrapes every 250 ms: the running gauge shows `active` on
	 * average (the deficit spread evenly over the window's scrapes), the
	 * waiting gauge shows a queue where the profile says so. */
	{
		int64_t first = t0 + SCRAPE_NS;
		long in_window = 0, k = 0;
		double deficit = C - p->active, acc = 0;
		for (int64_t t = first; t <= we; t += SCRAPE_NS)
			if (t >= ws)
				in_window++;
		for (int64_t t = first; t <= we; t += SCRAPE_NS) {
			struct tt_sample smp[4];
			struct tt_scrape sc;
			double running = C, waiting = 0;
			if (t >= ws && in_window > 0) {
				double before = floor(acc + 0.5);
				acc += deficit;
				running = C - (floor(acc + 0.5) - before);
				if (p->queued)
					waiting = 1;
				k++;
			}
			smp[0] = (struct tt_sample){"vllm:num_requests_running", "model_name=\"synthetic\"",
						    running};
			smp[1] = (struct tt_sample){"vllm:num_requests_waiting", "model_name=\"synthetic\"",
						    waiting};
			smp[2] = (struct tt_sample){"vllm:kv_cache_usage_perc", "model_name=\"synthetic\"",
						    0};
			smp[3] = (struct tt_sample){"vllm:num_preemptions_total",
						    "model_name=\"synthetic\"", 0};
			sc.t_ns = t;
			sc.n_samples = 4;
			sc.samples = smp;
			emit_scrape(s, &sc);
		}
	}
	ct->start = t0;
	ct->ready = ws;
	ct->ws = ws;
	ct->we = we;
	ct->end = we;
	return 0;
}

/* Window offset that puts exactly `per_slot` request ends inside the window,
 * in the middle of the range of offsets that do; at least `min_ms`. */
static double choose_ramp(const struct params *p, double min_ms, long per_slot)
{
	double d = p->ttft_ms + (double)(p->out_tokens - 1) * p->mean_ms + 0.2;
	double cyc = d + p->delta_ms;
	double best_lo = -1, best_len = -1, run_lo = -1;
	const int steps = 400;

	if (per_slot < 0)
		return min_ms;
	for (int j = 0; j <= steps; j++) {
		double r = min_ms + cyc * j / steps;
		long count = 0;
		for (long k = 0;; k++) {
			double e = d + (double)k * cyc;
			if (e >= r + p->window_ms)
				break;
			if (e >= r)
				count++;
		}
		if (count == per_slot) {
			if (run_lo < 0)
				run_lo = r;
			if (r - run_lo > best_len) {
				best_len = r - run_lo;
				best_lo = run_lo;
			}
		} else {
			run_lo = -1;
		}
	}
	return best_lo < 0 ? min_ms : best_lo + best_len / 2;
}

struct synth {
	const struct tt_profile *prof;
	struct tt_synth_opts o;
	struct tt_run_writer *rw;
	struct tt_manifest *m;
	struct sink sink;
	uint64_t bytes;
};

static enum tt_code analyze_params(struct synth *s, size_t cell, const struct params *p,
				   uint64_t seed, int64_t t0, struct tt_cell_figures *f,
				   struct cell_times *ct, struct tt_error *err)
{
	struct tt_cell_analyzer *an;
	struct tt_cell_info *c = &s->m->cells[cell];
	enum tt_code rc;

	s->sink.w = NULL;
	window_of(p, seed, t0, &c->window_start_ns, &c->window_end_ns);
	c->state = TT_CELL_DONE;
	/* The analyzer judges a cell without a trace as not run. */
	if (!c->trace && tt_manifest_set_str(&c->trace, "cells/pending"))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	rc = tt_cell_analyzer_create(s->m, cell, NULL, &an, err);
	if (tt_failed(rc))
		return rc;
	s->sink.an = an;
	if (gen_decode(p, seed, t0, &s->sink, ct)) {
		tt_cell_analyzer_free(an);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	tt_cell_analyzer_finish(an, NULL, f);
	tt_cell_analyzer_free(an);
	s->sink.an = NULL;
	return TT_OK;
}

static double rel_err(double got, double want)
{
	if (isnan(want) || want == 0)
		return 0;
	if (isnan(got))
		return 1;
	return fabs(got - want) / fabs(want);
}

static enum tt_code synth_decode(struct synth *s, size_t cell, const struct tt_profile_point *pt,
				 int64_t *t, struct tt_error *err)
{
	struct params p, best;
	double best_score = 0;
	struct tt_cell_figures f;
	struct cell_times ct;
	struct tt_cell_info *c = &s->m->cells[cell];
	uint64_t seed = s->o.seed * 1000003ULL + cell;
	long per_slot = -1;
	double min_ramp;
	struct tt_trace_writer *w = NULL;
	struct tt_trace_opts topts;
	enum tt_code rc;

	memset(&p, 0, sizeof p);
	p.concurrency = pt->concurrency;
	p.context = pt->context;
	p.out_tokens = s->o.max_tokens;
	p.ttft_ms = isnan(pt->ttft_ms) ? 100 : pt->ttft_ms;
	p.center_ms = isnan(pt->tbt_ms) ? 10 : pt->tbt_ms;
	p.mean_ms = isnan(pt->per_request_tok_s) ? p.center_ms : 1000.0 / pt->per_request_tok_s;
	p.window_ms = (isnan(pt->measured_s) ? 30 : pt->measured_s) * 1000 * s->o.scale;
	p.active = isnan(pt->avg_active) ? pt->concurrency : pt->avg_active;
	p.queued = strcmp(pt->status, "Requests queued") == 0;
	p.error_rate = strcmp(pt->status, "Errors") == 0 ? 0.05 : s->o.error_rate;
	p.multi_rate = s->o.multi_rate;
	if (pt->completed >= 0 && s->o.scale == 1 && pt->completed % pt->concurrency == 0)
		per_slot = pt->completed / pt->concurrency;
	/* The readiness check needs every stream producing, then 3 s steady. */
	min_ramp = p.ttft_ms * 1.01 + 3000;
	for (int pass = 0; pass < CALIBRATION_PASSES; pass++) {
		double score;
		p.ramp_ms = p.early_ms > 0 ? fmax(0, p.ttft_ms - p.early_ms) :
					     choose_ramp(&p, min_ramp, per_slot);
		rc = analyze_params(s, cell, &p, seed, *t, &f, &ct, err);
		if (tt_failed(rc))
			return rc;
		/* Keep the pass that came closest: adjustments interact a little. */
		score = fmax(fmax(rel_err(f.total_tok_s, pt->total_tok_s),
				  rel_err(f.per_request_tok_s.p50, pt->per_request_tok_s)),
			     fmax(rel_err(f.tbt_ms.p50, pt->tbt_ms), rel_err(f.ttft_ms.p50, pt->ttft_ms)));
		if (pass == 0 || score < best_score) {
			best_score = score;
			best = p;
		}
		if (f.tbt_ms.n && !isnan(pt->tbt_ms))
			p.center_ms *= pt->tbt_ms / f.tbt_ms.p50;
		if (f.per_request_tok_s.n && !isnan(pt->per_request_tok_s))
			p.mean_ms *= f.per_request_tok_s.p50 / pt->per_request_tok_s;
		if (f.ttft_ms.n && !isnan(pt->ttft_ms))
			p.ttft_ms *= pt->ttft_ms / f.ttft_ms.p50;
		if (!isnan(pt->total_tok_s) && f.total_tok_s > 0) {
			/* Per-worker cycle time needed for the target total rate. */
			double need = (double)p.concurrency * (double)p.out_tokens / pt->total_tok_s;
			double have = (double)p.concurrency * (double)p.out_tokens / f.total_tok_s;
			double d = p.ttft_ms + (double)(p.out_tokens - 1) * p.mean_ms;
			if (d < p.ramp_ms + p.window_ms) {
				p.delta_ms += (need - have) * 1000;
				if (p.delta_ms < 0)
					p.delta_ms = 0;
			} else if (f.total_tok_s > pt->total_tok_s) {
				/* Requests outlast the window, so turnaround cannot lower the
				 * rate: open the window before every stream produces (the
				 * profile's total is below C x per-request rate: its streams
				 * were not all producing through the window). */
				p.early_ms += (f.total_tok_s - pt->total_tok_s) / f.total_tok_s * p.window_ms;
			}
		}
	}
	p = best;
	memset(&topts, 0, sizeof topts);
	topts.time_unit_ns = s->o.time_unit_ns;
	topts.level = s->o.level;
	topts.sync = 0; /* synthetic: a crash just means running synth again */
	rc = tt_run_writer_open_cell(s->rw, cell, &topts, &w, err);
	if (tt_failed(rc))
		return rc;
	s->sink.w = w;
	s->sink.an = NULL;
	s->sink.rc = TT_OK;
	if (gen_decode(&p, seed, *t, &s->sink, &ct))
		rc = tt_error_set(err, TT_ENOMEM, "out of memory");
	else
		rc = s->sink.rc;
	s->sink.w = NULL;
	if (!tt_failed(rc))
		rc = tt_trace_flush(w, err);
	s->bytes += tt_trace_writer_bytes(w);
	{
		enum tt_code crc = tt_trace_writer_close(w, tt_failed(rc) ? NULL : err);
		if (!tt_failed(rc))
			rc = crc;
	}
	if (tt_failed(rc))
		return rc;
	c->state = TT_CELL_DONE;
	c->start_ns = ct.start;
	c->ready_ns = ct.ready;
	c->window_start_ns = ct.ws;
	c->window_end_ns = ct.we;
	c->end_ns = ct.end;
	*t = ct.end + 2000 * MS;
	return TT_OK;
}

static enum tt_code synth_prefill(struct synth *s, size_t cell, const struct tt_profile_point *pt,
				  int64_t *t, struct tt_error *err)
{
	struct tt_cell_info *c = &s->m->cells[cell];
	struct rng r = {s->o.seed * 1000003ULL + cell};
	struct tt_trace_writer *w = NULL;
	struct tt_trace_opts topts;
	struct tt_request q;
	struct tt_chunk ch;
	double ttft_ms = isnan(pt->ttft_ms) ? 100 : pt->ttft_ms;
	enum tt_code rc, crc;

	memset(&topts, 0, sizeof topts);
	topts.time_unit_ns = s->o.time_unit_ns;
	topts.level = s->o.level;
	rc = tt_run_writer_open_cell(s->rw, cell, &topts, &w, err);
	if (tt_failed(rc))
		return rc;
	memset(&q, 0, sizeof q);
	q.role = TT_ROLE_SCOUT;
	q.t_sched_ns = *t;
	q.t_send_ns = *t + 20000 + (int64_t)(urand(&r) * 60000);
	ch.t_ns = q.t_send_ns + (int64_t)(ttft_ms * MS);
	ch.tokens = 1;
	q.t_end_ns = ch.t_ns + 100000;
	q.http_status = 200;
	/* The profile's prompt tok/s and TTFT fix the prompt length the server
	 * counted (the seed's reference tool sent text: its server counted about
	 * 1.7 % fewer tokens than the nominal context at 120K and 125K). */
	q.prompt_tokens = isnan(pt->total_tok_s) ? pt->context :
						   (int64_t)llround(pt->total_tok_s * ttft_ms / 1000);
	q.cached_tokens = 0;
	q.finish = TT_FINISH_LENGTH;
	q.n_chunks = 1;
	q.chunks = &ch;
	rc = tt_trace_write_request(w, &q, err);
	if (!tt_failed(rc))
		rc = tt_trace_flush(w, err);
	s->bytes += tt_trace_writer_bytes(w);
	crc = tt_trace_writer_close(w, tt_failed(rc) ? NULL : err);
	if (!tt_failed(rc))
		rc = crc;
	if (tt_failed(rc))
		return rc;
	c->state = TT_CELL_DONE;
	c->start_ns = *t;
	c->end_ns = q.t_end_ns;
	*t = q.t_end_ns + 500 * MS;
	return TT_OK;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static enum tt_code add_unique(int64_t **v, size_t *n, int64_t x)
{
	int64_t *nv;
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == x)
			return TT_OK;
	nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (!nv)
		return TT_FAILED;
	nv[(*n)++] = x;
	*v = nv;
	return TT_OK;
}

/* Settings, KV capacity and the cells, from the profile. */
static enum tt_code build_manifest(struct synth *s, struct tt_manifest *m, struct tt_error *err)
{
	const struct tt_profile *p = s->prof;
	size_t n = tt_profile_count(p);
	int64_t *conc = NULL, max_ok = 0, min_over = -1, *dec = NULL;
	size_t nconc = 0, ndec = 0;
	char ts[64], buf[256];
	time_t now = 0;
	double duration = 0;

	tt_manifest_init(m);
	m->duration_s = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tt_profile_point *pt = tt_profile_at(p, i);
		if (pt->phase == TT_PHASE_DECODE) {
			int64_t need = (int64_t)pt->concurrency * (pt->context + s->o.max_tokens);
			if (add_unique(&dec, &ndec, pt->context) ||
			    add_unique(&conc, &nconc, pt->concurrency))
				goto nomem;
			if (strcmp(pt->status, "Over capacity") == 0) {
				if (min_over < 0 || need < min_over)
					min_over = need;
			} else if (need > max_ok) {
				max_ok = need;
			}
			if (!isnan(pt->measured_s) && pt->measured_s > duration)
				duration = pt->measured_s;
		}
	}
	qsort(dec, ndec, sizeof *dec, cmp_i64);
	qsort(conc, nconc, sizeof *conc, cmp_i64);
	m->contexts = dec;
	m->n_contexts = ndec;
	dec = NULL;
	m->concurrency = calloc(nconc ? nconc : 1, sizeof *m->concurrency);
	if (!m->concurrency)
		goto nomem;
	for (size_t i = 0; i < nconc; i++)
		m->concurrency[i] = (int)conc[i];
	m->n_concurrency = nconc;
	for (size_t i = 0; i < n; i++) {
		const struct tt_profile_point *pt = tt_profile_at(p, i);
		int in_dec = 0;
		if (pt->phase != TT_PHASE_PREFILL)
			continue;
		for (size_t j = 0; j < m->n_contexts; j++)
			in_dec |= m->contexts[j] == pt->context;
		if (!in_dec && add_unique(&m->prefill_contexts, &m->n_prefill_contexts, pt->context))
			goto nomem;
	}
	/* A capacity between the largest cell that ran and the smallest that did
	 * not, on a 16-token block boundary. */
	if (min_over > 0)
		m->kv_capacity_tokens = ((max_ok + (min_over - max_ok) / 2) / 16) * 16;
	else
		m->kv_capacity_tokens = ((max_ok + max_ok / 4) / 16) * 16;
	m->duration_s = (duration > 0 ? duration : 30) * s->o.scale;
	m->max_tokens = s->o.max_tokens;
	m->seed = s->o.seed;
	m->scrape_interval_s = 0.25;
	m->origin_unix_ns = 1764633600LL * 1000000000LL; /* fixed: synth output is deterministic */
	now = (time_t)(m->origin_unix_ns / 1000000000LL);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (tt_manifest_set_str(&m->tool_name, "tokentrace synth") ||
	    tt_manifest_set_str(&m->tool_version, tt_version()) ||
	    tt_manifest_set_str(&m->created, ts) ||
	    tt_manifest_set_str(&m->engine, "synthetic") ||
	    tt_manifest_set_str(&m->engine_version, tt_version()) ||
	    tt_manifest_set_str(&m->model, s->o.model ? s->o.model : "synthetic-model") ||
	    tt_manifest_set_str(&m->served_model, s->o.model ? s->o.model : "synthetic-model") ||
	    tt_manifest_set_str(&m->endpoint, "completions") ||
	    tt_manifest_set_str(&m->prompt_kind, "token_ids") ||
	    tt_manifest_set_str(&m->kv_capacity_source, "profile") ||
	    tt_manifest_set_str(&m->server_url, "synthetic:"))
		goto nomem;
	for (size_t i = 0; i < s->o.n_notes; i++) {
		const char *kv = s->o.notes[i], *eq = strchr(kv, '=');
		char key[128];
		if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key) {
			tt_manifest_release(m);
			free(conc);
			return tt_error_set(err, TT_EARG, "note '%s' is not KEY=VALUE", kv);
		}
		memcpy(key, kv, (size_t)(eq - kv));
		key[eq - kv] = '\0';
		if (tt_manifest_set_note(m, key, eq + 1))
			goto nomem;
	}
	/* Cells in the reference tool's order: prefill rows, then decode rows. */
	for (int phase = 0; phase < 2; phase++)
		for (size_t i = 0; i < n; i++) {
			const struct tt_profile_point *pt = tt_profile_at(p, i);
			size_t idx;
			if ((int)pt->phase != phase)
				continue;
			if (tt_manifest_add_cell(m, pt->phase, pt->context, pt->concurrency, &idx))
				goto nomem;
			if (pt->phase == TT_PHASE_DECODE) {
				struct tt_cell_info *c = &m->cells[idx];
				c->kv_need_tokens = (int64_t)pt->concurrency * (pt->context + m->max_tokens);
				if (strcmp(pt->status, "Over capacity") == 0) {
					c->state = TT_CELL_OVER_CAPACITY;
					snprintf(buf, sizeof buf, "%d x (%lld + %lld) = %lld > %lld KV tokens",
						 pt->concurrency, (long long)pt->context,
						 (long long)m->max_tokens, (long long)c->kv_need_tokens,
						 (long long)m->kv_capacity_tokens);
					if (tt_manifest_set_str(&c->reason, buf))
						goto nomem;
				}
			}
		}
	free(conc);
	return TT_OK;
nomem:
	free(conc);
	free(dec);
	tt_manifest_release(m);
	return tt_error_set(err, TT_ENOMEM, "out of memory");
}

enum tt_code tt_synth_run(const struct tt_profile *p, const char *dir,
			  const struct tt_synth_opts *o, uint64_t *bytes, struct tt_error *err)
{
	struct synth s;
	struct tt_manifest m;
	enum tt_code rc;
	int64_t t = 1000 * MS;

	memset(&s, 0, sizeof s);
	s.prof = p;
	if (o)
		s.o = *o;
	else
		tt_synth_opts_init(&s.o);
	if (s.o.scale <= 0)
		s.o.scale = 1;
	if (s.o.max_tokens <= 0)
		s.o.max_tokens = 4096;
	if (s.o.multi_rate < 0)
		s.o.multi_rate = 0;
	s.sink.err = err;
	rc = build_manifest(&s, &m, err);
	if (tt_failed(rc))
		return rc;
	rc = tt_run_writer_create(dir, &m, &s.rw, err);
	tt_manifest_release(&m);
	if (tt_failed(rc))
		return rc;
	s.m = tt_run_writer_manifest(s.rw);
	for (size_t i = 0; i < s.m->n_cells && !tt_failed(rc); i++) {
		struct tt_cell_info *c = &s.m->cells[i];
		const struct tt_profile_point *pt =
			tt_profile_find(p, c->phase, c->context, c->concurrency);
		if (c->state == TT_CELL_OVER_CAPACITY || !pt)
			continue;
		if (c->phase == TT_PHASE_PREFILL)
			rc = synth_prefill(&s, i, pt, &t, err);
		else
			rc = synth_decode(&s, i, pt, &t, err);
	}
	if (!tt_failed(rc))
		rc = tt_run_writer_commit(s.rw, err);
	if (!tt_failed(rc) && bytes)
		*bytes = s.bytes;
	tt_run_writer_free(s.rw);
	free(s.sink.chunks);
	return rc;
}
