/* JSON report, schema "tokentrace-report" 1.0 (formats/report-json.md).
 * Built with cJSON, which escapes every string and prints numbers so they
 * read back as the same double; NaN and missing values are null. */
#include "text/render_impl.h"
#include "text/render_rate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_SCHEMA "tokentrace-report"
#define REPORT_VERSION "1.5"

/* Analysis thresholds that are 0 in the options mean these (analysis.h). */
#define DEFAULT_QUEUED_SHARE 0.5
#define DEFAULT_MIN_TOKENS 100
#define DEFAULT_CUT_SHORT_RATIO 0.9

struct jctx {
	int oom; /* some item could not be allocated */
};

static cJSON *attach(struct jctx *j, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !obj) {
		cJSON_Delete(item);
		j->oom = 1;
		return NULL;
	}
	if (key ? !cJSON_AddItemToObject(obj, key, item) : !cJSON_AddItemToArray(obj, item)) {
		cJSON_Delete(item);
		j->oom = 1;
		return NULL;
	}
	return item;
}

/* A number as the shortest text that reads back as the same double.  cJSON's
 * own printer compares with a relative epsilon and would write 0.3 for
 * 0.30000000000000004, so numbers go in as raw text. */
static cJSON *number(double v)
{
	char text[40];

	if (!isfinite(v))
		return cJSON_CreateNull();
	tt__fmt_exact(v, text, sizeof text);
	return cJSON_CreateRaw(text);
}

static void put_num(struct jctx *j, cJSON *obj, const char *key, double v)
{
	attach(j, obj, key, number(v));
}

/* Counts and token numbers: negative means unknown. */
static void put_count(struct jctx *j, cJSON *obj, const char *key, double v)
{
	put_num(j, obj, key, v >= 0 ? v : NAN);
}

static void put_str(struct jctx *j, cJSON *obj, const char *key, const char *s)
{
	attach(j, obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

static void put_bool(struct jctx *j, cJSON *obj, const char *key, int v)
{
	attach(j, obj, key, cJSON_CreateBool(v ? 1 : 0));
}

static cJSON *put_obj(struct jctx *j, cJSON *obj, const char *key)
{
	return attach(j, obj, key, cJSON_CreateObject());
}

static cJSON *put_arr(struct jctx *j, cJSON *obj, const char *key)
{
	return attach(j, obj, key, cJSON_CreateArray());
}

static void put_i64s(struct jctx *j, cJSON *obj, const char *key, const int64_t *v, size_t n)
{
	cJSON *a = put_arr(j, obj, key);
	size_t i;

	for (i = 0; a && i < n; i++)
		attach(j, a, NULL, number((double)v[i]));
}

/* ---- run -------------------------------------------------------------- */

/* run.settings.open_loop (1.3): what an open-loop capture was asked
 * (formats/run-v1.md 2.4); null for a run without rates. */
static void run_open_loop(struct jctx *j, const struct tt_manifest *m, cJSON *s)
{
	cJSON *o, *a, *ot, *b;
	size_t i;

	if (!m->n_rates) {
		attach(j, s, "open_loop", cJSON_CreateNull());
		return;
	}
	o = put_obj(j, s, "open_loop");
	if (!o)
		return;
	a = put_arr(j, o, "rates");
	for (i = 0; a && i < m->n_rates; i++)
		attach(j, a, NULL, number(m->rates[i]));
	put_str(j, o, "arrivals", m->arrivals ? m->arrivals : "constant");
	put_num(j, o, "burstiness", m->burstiness > 0 ? m->burstiness : 1);
	put_num(j, o, "warmup_s", m->warmup_s);
	put_num(j, o, "drain_s", m->drain_s);
	put_bool(j, o, "rate_sweep", m->rate_sweep);
	put_str(j, o, "slo", m->slo);
	if (m->output_max <= 0) {
		attach(j, o, "output_tokens", cJSON_CreateNull());
		return;
	}
	ot = put_obj(j, o, "output_tokens");
	if (!ot)
		return;
	put_num(j, ot, "min", (double)m->output_min);
	put_num(j, ot, "max", (double)m->output_max);
	if (!m->n_output_bins) {
		attach(j, ot, "bins", cJSON_CreateNull());
		attach(j, ot, "file", cJSON_CreateNull());
		return;
	}
	b = put_arr(j, ot, "bins");
	for (i = 0; b && i < m->n_output_bins; i++) {
		cJSON *e = attach(j, b, NULL, cJSON_CreateObject());
		if (!e)
			break;
		put_num(j, e, "min", (double)m->output_bins[i].min);
		put_num(j, e, "max", (double)m->output_bins[i].max);
		put_num(j, e, "weight", m->output_bins[i].weight);
	}
	put_str(j, ot, "file", m->output_hist_file);
}

static void run_settings(struct jctx *j, const struct tt_manifest *m, cJSON *run)
{
	cJSON *s = put_obj(j, run, "settings"), *p, *a;
	size_t i;

	if (!s)
		return;
	put_str(j, s, "endpoint", m->endpoint);
	put_i64s(j, s, "contexts", m->contexts, m->n_contexts);
	a = put_arr(j, s, "concurrency");
	for (i = 0; a && i < m->n_concurrency; i++)
		attach(j, a, NULL, number(m->concurrency[i]));
	put_i64s(j, s, "prefill_contexts", m->prefill_contexts, m->n_prefill_contexts);
	put_num(j, s, "duration_s", m->duration_s);
	put_count(j, s, "max_tokens", (double)m->max_tokens);
	p = put_obj(j, s, "prompt");
	if (p) {
		put_str(j, p, "kind", m->prompt_kind);
		put_num(j, p, "seed", (double)m->seed);
	}
	put_num(j, s, "scrape_interval_s", m->scrape_interval_s);
	put_num(j, s, "readiness_s", m->readiness_s);
	put_num(j, s, "readiness_timeout_s", m->readiness_timeout_s);
	run_open_loop(j, m, s);
}

/* run.analysis.slo: the objectives and, per decode context, the highest
 * concurrency meeting them (M-goodput); null without --slo. */
static void run_slo(struct jctx *j, const struct tt_report *r, cJSON *a)
{
	const struct tt_slo *s = &r->opts.slo;
	cJSON *o, *arr;
	int64_t *ctx;
	size_t n, i;

	if (!tt_slo_active(s)) {
		attach(j, a, "slo", cJSON_CreateNull());
		return;
	}
	o = put_obj(j, a, "slo");
	if (!o)
		return;
	put_num(j, o, "ttft_ms", s->ttft_ms > 0 ? s->ttft_ms : NAN);
	put_num(j, o, "tbt_ms", s->tbt_ms > 0 ? s->tbt_ms : NAN);
	put_num(j, o, "tbt_pct", s->tbt_pct);
	put_num(j, o, "e2e_ms", s->e2e_ms > 0 ? s->e2e_ms : NAN);
	put_num(j, o, "attain", s->attain);
	arr = put_arr(j, o, "max_concurrency");
	ctx = malloc((r->n_cells ? r->n_cells : 1) * sizeof *ctx);
	if (!ctx) {
		j->oom = 1;
		return;
	}
	n = tt__render_distinct(r, TT_PHASE_DECODE, 0, ctx, r->n_cells);
	for (i = 0; arr && i < n; i++) {
		cJSON *e = attach(j, arr, NULL, cJSON_CreateObject());
		if (!e)
			break;
		put_num(j, e, "context", (double)ctx[i]);
		put_count(j, e, "concurrency", tt_report_slo_max_concurrency(r, ctx[i]));
	}
	free(ctx);
}

static void run_analysis(struct jctx *j, const struct tt_report *r, cJSON *run)
{
	const struct tt_analysis_opts *o = &r->opts;
	cJSON *a = put_obj(j, run, "analysis"), *q;
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs), i;

	if (!a)
		return;
	put_num(j, a, "skip_first_s", o->skip_first_s);
	put_num(j, a, "window_s", o->window_s);
	q = put_arr(j, a, "quantiles");
	for (i = 0; q && i < nq; i++)
		attach(j, q, NULL, number(qs[i]));
	put_num(j, a, "queued_share", o->queued_share > 0 ? o->queued_share : DEFAULT_QUEUED_SHARE);
	put_num(j, a, "min_tokens", o->min_tokens > 0 ? (double)o->min_tokens : DEFAULT_MIN_TOKENS);
	put_num(j, a, "cut_short_ratio",
		o->cut_short_ratio > 0 ? o->cut_short_ratio : DEFAULT_CUT_SHORT_RATIO);
	put_num(j, a, "stall_ms", o->stall_ms > 0 ? o->stall_ms : 100);
	run_slo(j, r, a);
}

static void run_object(struct jctx *j, const struct tt_report *r, cJSON *root)
{
	const struct tt_manifest *m = &r->manifest;
	cJSON *run = put_obj(j, root, "run"), *o, *notes;
	char ver[32];
	size_t i;

	if (!run)
		return;
	put_str(j, run, "source", r->source[0] ? r->source : NULL);
	o = put_obj(j, run, "tool");
	if (o) {
		put_str(j, o, "name", m->tool_name);
		put_str(j, o, "version", m->tool_version);
	}
	snprintf(ver, sizeof ver, "%d.%d", m->format_major, m->format_minor);
	put_str(j, run, "format_version", ver);
	put_str(j, run, "created", m->created);
	o = put_obj(j, run, "server");
	if (o) {
		put_str(j, o, "url", m->server_url);
		put_str(j, o, "engine", m->engine);
		put_str(j, o, "engine_version", m->engine_version);
	}
	o = put_obj(j, run, "model");
	if (o) {
		put_str(j, o, "id", m->model);
		put_str(j, o, "served_name", m->served_model);
		put_count(j, o, "max_model_len", (double)m->max_model_len);
	}
	notes = put_arr(j, run, "notes");
	for (i = 0; notes && i < m->n_notes; i++) {
		cJSON *n = attach(j, notes, NULL, cJSON_CreateObject());

		if (!n)
			break;
		put_str(j, n, "key", m->notes[i].key);
		put_str(j, n, "value", m->notes[i].value);
	}
	run_settings(j, m, run);
	o = put_obj(j, run, "kv_capacity");
	if (o) {
		put_count(j, o, "tokens", (double)m->kv_capacity_tokens);
		put_str(j, o, "source", m->kv_capacity_source);
	}
	run_analysis(j, r, run);
}

/* ---- cells ------------------------------------------------------------ */

static void dist(struct jctx *j, const struct tt_report *r, cJSON *cell, const char *key,
		 const struct tt_dist *d)
{
	cJSON *o = put_obj(j, cell, key);
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs), i;
	char qkey[32];

	if (!o)
		return;
	put_num(j, o, "p50", d->p50);
	for (i = 0; i < nq; i++) {
		tt__render_qkey(qs[i], qkey, sizeof qkey);
		if (strcmp(qkey, "p50") == 0)
			continue;
		put_num(j, o, qkey, tt__render_q(d, i, qs[i])); /* M-pct: null if unsupported */
	}
	put_num(j, o, "min", d->min);
	put_num(j, o, "max", d->max);
	put_num(j, o, "mean", d->mean);
	put_num(j, o, "n", (double)d->n);
}

static void evidence(struct jctx *j, const struct tt_cell_figures *c, cJSON *cell)
{
	cJSON *a = put_arr(j, cell, "evidence");
	size_t i, n = c->n_evidence < 12 ? c->n_evidence : 12;

	for (i = 0; a && i < n; i++) {
		const struct tt_evidence *e = &c->evidence[i];
		cJSON *o = attach(j, a, NULL, cJSON_CreateObject());
		char sig[sizeof e->signal + 1], op[sizeof e->op + 1];

		if (!o)
			return;
		/* fixed arrays from the analysis: never trust a terminator */
		memcpy(sig, e->signal, sizeof e->signal);
		sig[sizeof e->signal] = '\0';
		memcpy(op, e->op, sizeof e->op);
		op[sizeof e->op] = '\0';
		put_str(j, o, "signal", sig);
		put_num(j, o, "value", e->value);
		put_str(j, o, "op", op);
		put_num(j, o, "threshold", e->threshold);
		put_bool(j, o, "triggered", e->triggered);
		put_str(j, o, "status", tt_status_key(e->status));
	}
}

static void cell_object(struct jctx *j, const struct tt_report *r, size_t idx, cJSON *cells)
{
	const struct tt_cell_figures *c = &r->cells[idx];
	cJSON *o = attach(j, cells, NULL, cJSON_CreateObject()), *s;
	int counts = tt__render_has_counts(c);
	char text[sizeof c->reason + 1];

	if (!o)
		return;
	tt__render_cell_id(r, c, text, sizeof text);
	put_str(j, o, "id", text);
	put_str(j, o, "phase", tt__render_phase(c->phase));
	if (c->phase == TT_PHASE_RATE) /* 1.2: formats/report-json.md 5.4 */
		attach(j, o, "open_loop", tt__render_rate_json(r, c));
	put_num(j, o, "context", (double)c->context);
	put_num(j, o, "concurrency", c->concurrency);
	put_str(j, o, "status", tt_status_name(c->status));
	put_str(j, o, "status_key", tt_status_key(c->status));
	memcpy(text, c->reason, sizeof c->reason);
	text[sizeof c->reason] = '\0';
	put_str(j, o, "status_reason", text);
	evidence(j, c, o);

	put_num(j, o, "total_tok_s", c->total_tok_s);
	put_num(j, o, "per_request_tok_s", c->per_request_tok_s.p50);
	dist(j, r, o, "per_request_tok_s_dist", &c->per_request_tok_s);
	dist(j, r, o, "ttft_ms", &c->ttft_ms);
	dist(j, r, o, "tbt_ms", &c->tbt_ms);
	/* 1.5: M-e2e and M-req-rate (issue 24.1) */
	dist(j, r, o, "e2e_ms", &c->e2e_ms);
	put_num(j, o, "req_s", c->phase == TT_PHASE_DECODE ? c->completed_req_s : NAN);
	put_num(j, o, "avg_active", c->avg_active);
	put_str(j, o, "avg_active_source", c->avg_active_source);
	put_num(j, o, "avg_in_flight", c->avg_in_flight);
	put_count(j, o, "completed", counts ? (double)c->completed : -1);
	put_count(j, o, "output_tokens", counts ? (double)c->output_tokens : -1);
	put_num(j, o, "measured_s", c->measured_s);
	put_count(j, o, "prompt_tokens", (double)c->prompt_tokens);
	put_count(j, o, "requests", counts ? (double)c->requests : -1);
	put_count(j, o, "errors", counts ? (double)c->errors : -1);
	put_count(j, o, "cut", counts ? (double)c->cut : -1);
	put_count(j, o, "short_outputs",
		  counts && c->short_outputs >= 0 ? (double)c->short_outputs : -1);
	put_count(j, o, "chunks", counts ? (double)c->chunks : -1);
	put_count(j, o, "multi_token_chunks", counts ? (double)c->multi_token_chunks : -1);

	s = put_obj(j, o, "server");
	if (s) {
		int has = c->has_server_metrics;

		put_bool(j, s, "available", has);
		put_count(j, s, "scrapes", has ? (double)c->scrapes : -1);
		put_num(j, s, "waiting_mean", has ? c->waiting_mean : NAN);
		put_num(j, s, "waiting_max", has ? c->waiting_max : NAN);
		put_num(j, s, "waiting_share", has ? c->waiting_share : NAN);
		put_num(j, s, "running_mean", has ? c->running_mean : NAN);
		put_num(j, s, "kv_usage_max", has ? c->kv_usage_max : NAN);
		put_num(j, s, "preemptions", has ? c->preemptions : NAN);
	}
	memcpy(text, c->damage, sizeof c->damage);
	text[sizeof c->damage] = '\0';
	put_str(j, o, "damage", text[0] ? text : NULL);

	put_num(j, o, "longest_stall_ms", c->longest_stall_ms);
	put_num(j, o, "gaps_over_share", c->gaps_over_share);
	put_num(j, o, "tokens_per_chunk", c->tokens_per_chunk);
	s = put_arr(j, o, "chunks_by_tokens");
	for (int k = 0; s && k < 5; k++)
		attach(j, s, NULL, number(counts && c->phase != TT_PHASE_PREFILL ?
						  (double)c->chunks_by_tokens[k] : NAN));
	s = put_obj(j, o, "ttft_parts");
	if (s) {
		put_num(j, s, "queue_ms", c->queue_ms);
		put_num(j, s, "prefill_ms", c->prefill_ms);
		put_num(j, s, "server_ttft_ms", c->server_ttft_ms);
		put_num(j, s, "rest_ms", c->ttft_rest_ms);
	}
	s = put_obj(j, o, "spec_decode");
	if (s) {
		put_num(j, s, "draft_tokens", c->spec_draft_tokens);
		put_num(j, s, "accepted_tokens", c->spec_accepted_tokens);
		put_num(j, s, "acceptance", c->spec_acceptance);
		put_num(j, s, "accepted_len", c->spec_accepted_len);
	}
	s = put_obj(j, o, "prefix_cache");
	if (s) {
		put_num(j, s, "cached_share", c->cached_share);
		put_num(j, s, "server_hit_rate", c->server_cache_hit_rate);
	}
	/* 1.2: reasoning models (M-reasoning), null where no text was recorded */
	if (c->phase != TT_PHASE_PREFILL && counts && c->text_requests > 0) {
		s = put_obj(j, o, "reasoning");
		if (s) {
			put_count(j, s, "requests", (double)c->text_requests);
			put_count(j, s, "reasoning_tokens", (double)c->reasoning_tokens);
			put_count(j, s, "answer_tokens", (double)c->answer_tokens);
			dist(j, r, s, "ttfr_ms", &c->ttfr_ms);
			dist(j, r, s, "ttfa_ms", &c->ttfa_ms);
		}
	} else {
		attach(j, o, "reasoning", cJSON_CreateNull());
	}
	if (tt_slo_active(&r->opts.slo) && c->phase == TT_PHASE_DECODE && counts) {
		s = put_obj(j, o, "slo");
		if (s) {
			put_count(j, s, "judged", (double)c->slo_judged);
			put_count(j, s, "met", (double)c->slo_met);
			put_num(j, s, "share", c->slo_share);
			put_num(j, s, "goodput_req_s", c->goodput_req_s);
			put_num(j, s, "goodput_tok_s", c->goodput_tok_s);
			put_bool(j, s, "meets", c->slo_ok);
		}
	} else {
		attach(j, o, "slo", cJSON_CreateNull());
	}
	/* 1.4: the capture's timing quality (M-timing), only where recorded */
	if (counts && c->timing.requests > 0) {
		const struct tt_timing_quality *q = &c->timing;
		s = put_obj(j, o, "timing");
		if (s) {
			put_count(j, s, "requests", (double)q->requests);
			put_count(j, s, "ttft_requests", (double)q->ttft_requests);
			put_count(j, s, "doubtful_ttft", (double)q->doubtful_ttft);
			put_count(j, s, "chunks", (double)q->chunks);
			put_count(j, s, "chunks_shared", (double)q->chunks_shared);
			put_count(j, s, "chunks_not_kernel", (double)q->chunks_not_kernel);
			put_count(j, s, "clock_steps", (double)q->clock_steps);
			put_num(j, s, "cpu_wait_max_ms", q->cpu_wait_max_ms);
			put_num(j, s, "cpu_wait_share", q->cpu_wait_share);
			put_num(j, s, "ttft_ms_p50_low", q->ttft_p50_low_ms);
			put_num(j, s, "per_request_tok_s_p50_low", q->per_request_p50_low);
			put_num(j, s, "per_request_tok_s_p50_high", q->per_request_p50_high);
			put_num(j, s, "could_move", q->could_move);
			put_num(j, s, "could_move_ms", q->could_move_ms);
		}
	}
	/* 1.4: the evidence of queueing (M-queue), decode cells with a window */
	if (c->phase == TT_PHASE_DECODE && counts && !isnan(c->sent_req_s)) {
		s = put_obj(j, o, "queueing");
		if (s) {
			put_num(j, s, "sent_req_s", c->sent_req_s);
			put_num(j, s, "queue_wait_steps", c->queue_wait_steps);
			put_count(j, s, "waiting_scrapes",
				  c->has_server_metrics ? (double)c->waiting_scrapes : -1);
			put_count(j, s, "slots", c->slots > 0 ? (double)c->slots : -1);
			put_num(j, s, "over_slots_share", c->over_slots_share);
			put_count(j, s, "over_slots_requests", (double)c->over_slots_requests);
		}
	} else {
		attach(j, o, "queueing", cJSON_CreateNull());
	}
}

enum tt_code tt__render_json_text(const struct tt_report *r, struct tt_buf *out,
				 struct tt_error *err)
{
	struct jctx j = {0};
	enum tt_code rc = TT_OK;
	cJSON *root = cJSON_CreateObject(), *gen;
	size_t *order = NULL, i;
	char *text = NULL;

	if (!root)
		return tt_error_set(err, TT_ENOMEM, "render json: out of memory");
	if (r->n_cells && !(order = tt__render_order(r))) {
		rc = tt_error_set(err, TT_ENOMEM, "render json: out of memory");
		goto cleanup;
	}
	put_str(&j, root, "schema", REPORT_SCHEMA);
	put_str(&j, root, "version", REPORT_VERSION);
	gen = put_obj(&j, root, "generator");
	if (gen) {
		put_str(&j, gen, "name", "tokentrace");
		put_str(&j, gen, "version", tt_version());
	}
	run_object(&j, r, root);
	/* The cells are printed one at a time into the output, so memory holds
	 * one cell's tree rather than the whole report's (100k cells took over
	 * 1 GB as one tree).  The bytes are those cJSON_Print gives for the
	 * whole tree: the root is printed with "cells": [] as its last member,
	 * and each cell object, printed alone, is indented one level deeper
	 * (a tab after each newline; JSON strings hold no raw newline). */
	put_arr(&j, root, "cells");
	if (j.oom || !(text = cJSON_Print(root))) {
		rc = tt_error_set(err, TT_ENOMEM, "render json: out of memory");
		goto cleanup;
	}
	{
		size_t tl = strlen(text);
		if (tl < 4 || strcmp(text + tl - 4, "[]\n}") != 0) {
			rc = tt_error_set(err, TT_EINTERNAL, "render json: unexpected layout");
			goto cleanup;
		}
		if (tt_buf_append(out, text, tl - 3) != TT_OK) /* up to and with '[' */
			goto full;
	}
	for (i = 0; i < r->n_cells; i++) {
		cJSON *one = cJSON_CreateArray();
		char *ct = NULL, *p, *nl;

		if (one)
			cell_object(&j, r, order[i], one);
		if (!one || j.oom || !(ct = cJSON_Print(one->child))) {
			cJSON_Delete(one);
			rc = tt_error_set(err, TT_ENOMEM, "render json: out of memory");
			goto cleanup;
		}
		cJSON_Delete(one);
		if (i && tt_buf_puts(out, ", ") != TT_OK) {
			free(ct);
			goto full;
		}
		for (p = ct; (nl = strchr(p, '\n')); p = nl + 1)
			if (tt_buf_append(out, p, (size_t)(nl + 1 - p)) != TT_OK ||
			    tt_buf_puts(out, "\t\t") != TT_OK) {
				free(ct);
				goto full;
			}
		if (tt_buf_puts(out, p) != TT_OK) {
			free(ct);
			goto full;
		}
		free(ct);
	}
	if (tt_buf_puts(out, "]\n}\n") != TT_OK)
		goto full;
	goto cleanup;
full:
	rc = tt_error_set(err, TT_ENOMEM, "render json: output buffer full or out of memory");

cleanup:
	free(text);
	free(order);
	cJSON_Delete(root);
	return rc;
}
