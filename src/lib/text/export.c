/* Flat exports of a run (formats/export-v1.md): requests, chunks, scrapes
 * or cells as CSV or JSON lines, streamed through the caller's writer. */
#include "tokentrace/export.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/buf.h"
#include "text/render_impl.h"
#include "text/render_rate.h"

#define FLUSH_AT (64u * 1024u)

/* Columns of each kind of row, in order (the spec's tables). */
static const char *const cols_requests[] = {
	"run", "cell", "phase", "context", "concurrency", "slot", "seq", "role", "finish",
	"fail", "http_status", "prompt_tokens", "cached_tokens", "t_sched_ns", "t_send_ns",
	"t_end_ns", "first_token_ns", "last_token_ns", "n_chunks", "output_tokens", "error", NULL};
static const char *const cols_chunks[] = {"run", "cell", "slot", "seq", "role",
					  "index", "t_ns", "tokens", "text", NULL};
static const char *const cols_scrapes[] = {"run", "cell", "t_ns", "name", "labels", "value", NULL};
static const char *const cols_cells[] = {
	"run", "cell", "phase", "context", "concurrency", "state", "status_key", "status",
	"total_tok_s", "per_request_tok_s", "ttft_ms_p50", "tbt_ms_p50", "avg_active",
	"avg_active_source", "avg_in_flight", "completed", "output_tokens", "measured_s",
	"requests", "errors", "cut", "chunks", "multi_token_chunks", "prompt_tokens", "scrapes",
	"waiting_share", "kv_usage_max", "preemptions", "longest_stall_ms", "gaps_over_share",
	"damage", "tokens_per_chunk", "queue_ms", "prefill_ms", "ttft_rest_ms", "spec_acceptance",
	"spec_accepted_len", "cached_share", "server_cache_hit_rate", "slo_judged", "slo_met",
	"slo_share", "goodput_req_s", "goodput_tok_s", "slo_meets",
	"reasoning_tokens", "answer_tokens", "ttfr_ms_p50", "ttfa_ms_p50", /* 1.1 */
	/* 1.2: open-loop cells (report-json 5.4) */
	"rate_req_s", "scheduled_req_s", "achieved_req_s", "ended", "out_tok_s", "due",
	"unanswered", "lateness_p99_ms", "ttft_due_growth_ms", "ttft_due_trend_ms_s",
	"ttft_due_trend_se_ms_s", "lateness_ms_p50", "ttft_due_ms_p50", "ttft_sent_ms_p50",
	"e2e_due_ms_p50", "slo_due_judged", "slo_due_met", "slo_due_share", "goodput_due_req_s",
	"slo_due_meets", "short_outputs",
	/* 1.3: the figures people look for by default (issue 24.1), the
	 * engine, and the measured window (issue 24.5) */
	"ttft_ms_p90", "ttft_ms_p99", "tbt_ms_p90", "tbt_ms_p99", "e2e_ms_p50", "e2e_ms_p90",
	"e2e_ms_p99", "req_s", "engine", "engine_version", "window_start_ns", "window_end_ns",
	NULL};
static const char *const *const columns[] = {cols_requests, cols_chunks, cols_scrapes,
					     cols_cells};

struct tt_exporter {
	enum tt_export_what what;
	enum tt_export_format fmt;
	tt_export_write_fn write;
	void *ctx;
	struct tt_buf out;
	int header_done, write_failed;
	unsigned long long rows;
	size_t col;            /* column of the row being written */
	/* the run being exported */
	const char *run_key;
	const struct tt_manifest *m;
	size_t cell;
};

int tt_export_what_parse(const char *name)
{
	static const char *const names[] = {"requests", "chunks", "scrapes", "cells"};
	for (int i = 0; name && i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int tt_export_format_parse(const char *name)
{
	if (name && strcmp(name, "csv") == 0)
		return TT_EXPORT_CSV;
	if (name && strcmp(name, "jsonl") == 0)
		return TT_EXPORT_JSONL;
	return -1;
}

enum tt_code tt_exporter_create(enum tt_export_what what, enum tt_export_format f,
				tt_export_write_fn write, void *ctx, struct tt_exporter **out,
				struct tt_error *err)
{
	struct tt_exporter *x;

	if ((unsigned)what > TT_EXPORT_CELLS || (unsigned)f > TT_EXPORT_JSONL || !write)
		return tt_error_set(err, TT_EARG, "export: bad arguments");
	x = calloc(1, sizeof *x);
	if (!x)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	x->what = what;
	x->fmt = f;
	x->write = write;
	x->ctx = ctx;
	tt_buf_init(&x->out, 0);
	*out = x;
	return TT_OK;
}

void tt_exporter_free(struct tt_exporter *x)
{
	if (!x)
		return;
	tt_buf_release(&x->out);
	free(x);
}

unsigned long long tt_exporter_rows(const struct tt_exporter *x)
{
	return x->rows;
}

static void flush(struct tt_exporter *x)
{
	if (x->out.len && !x->write_failed && x->write(x->ctx, x->out.data, x->out.len))
		x->write_failed = 1;
	tt_buf_reset(&x->out);
}

/* ---- one field at a time ------------------------------------------------ */

static void begin_row(struct tt_exporter *x)
{
	x->col = 0;
	if (x->fmt == TT_EXPORT_JSONL)
		tt_buf_puts(&x->out, "{");
}

static void end_row(struct tt_exporter *x)
{
	tt_buf_puts(&x->out, x->fmt == TT_EXPORT_JSONL ? "}\n" : "\n");
	x->rows++;
	if (x->out.len >= FLUSH_AT)
		flush(x);
}

/* Start a field: separator, and the key in JSON lines. */
static void key(struct tt_exporter *x)
{
	const char *name = columns[x->what][x->col];

	if (x->col++)
		tt_buf_puts(&x->out, ",");
	if (x->fmt == TT_EXPORT_JSONL)
		tt_buf_printf(&x->out, "\"%s\":", name);
}

static void put_null(struct tt_exporter *x)
{
	key(x);
	if (x->fmt == TT_EXPORT_JSONL)
		tt_buf_puts(&x->out, "null");
}

/* JSON: escaped string; CSV: RFC 4180 quoting when needed. */
static void put_str(struct tt_exporter *x, const char *s)
{
	if (!s) {
		put_null(x);
		return;
	}
	key(x);
	if (x->fmt == TT_EXPORT_JSONL) {
		tt_buf_puts(&x->out, "\"");
		for (const char *p = s; *p; p++) {
			unsigned char c = (unsigned char)*p;
			if (c == '"' || c == '\\')
				tt_buf_printf(&x->out, "\\%c", c);
			else if (c < 0x20)
				tt_buf_printf(&x->out, "\\u%04x", c);
			else
				tt_buf_append(&x->out, p, 1);
		}
		tt_buf_puts(&x->out, "\"");
	} else if (strpbrk(s, ",\"\r\n")) {
		tt_buf_puts(&x->out, "\"");
		for (const char *p = s; *p; p++)
			tt_buf_puts(&x->out, *p == '"' ? "\"\"" : (char[2]){*p, '\0'});
		tt_buf_puts(&x->out, "\"");
	} else {
		tt_buf_puts(&x->out, s);
	}
}

static void put_int(struct tt_exporter *x, int64_t v, int known)
{
	if (!known) {
		put_null(x);
		return;
	}
	key(x);
	tt_buf_printf(&x->out, "%" PRId64, v);
}

/* Shortest text that reads back as the same double; null/empty when not finite. */
static void put_num(struct tt_exporter *x, double v)
{
	char num[40];

	if (!isfinite(v)) {
		put_null(x);
		return;
	}
	key(x);
	tt__fmt_exact(v, num, sizeof num);
	tt_buf_puts(&x->out, num);
}

static void header(struct tt_exporter *x)
{
	if (x->header_done)
		return;
	x->header_done = 1;
	if (x->fmt != TT_EXPORT_CSV)
		return;
	for (size_t i = 0; columns[x->what][i]; i++)
		tt_buf_printf(&x->out, "%s%s", i ? "," : "", columns[x->what][i]);
	tt_buf_puts(&x->out, "\n");
}

/* ---- rows --------------------------------------------------------------- */

static const char *cell_id(const struct tt_exporter *x)
{
	return x->cell < x->m->n_cells ? x->m->cells[x->cell].id : NULL;
}

static int on_request(void *ctx, const struct tt_request *r)
{
	struct tt_exporter *x = ctx;
	const struct tt_cell_info *c = &x->m->cells[x->cell];

	if (x->what == TT_EXPORT_CHUNKS) {
		for (size_t i = 0; i < r->n_chunks; i++) {
			begin_row(x);
			put_str(x, x->run_key);
			put_str(x, c->id);
			put_int(x, r->slot, 1);
			put_int(x, r->seq, 1);
			put_str(x, tt_role_name(r->role));
			put_int(x, (int64_t)i, 1);
			put_int(x, r->chunks[i].t_ns, 1);
			put_int(x, r->chunks[i].tokens, 1);
			if (r->chunk_text) { /* 1.1: run-v1 3.5 */
				static const char *const text[] = {"none", "answer", "reasoning",
								   "both"};
				put_str(x, text[r->chunk_text[i] & 3]);
			} else {
				put_null(x);
			}
			end_row(x);
		}
	} else if (x->what == TT_EXPORT_REQUESTS) {
		int64_t first = -1, last = -1, tokens = 0;
		for (size_t i = 0; i < r->n_chunks; i++) {
			if (!r->chunks[i].tokens)
				continue;
			if (first < 0)
				first = r->chunks[i].t_ns;
			last = r->chunks[i].t_ns;
			tokens += r->chunks[i].tokens;
		}
		begin_row(x);
		put_str(x, x->run_key);
		put_str(x, c->id);
		put_str(x, tt__render_phase(c->phase)); /* prefill, decode, rate */
		put_int(x, c->context, 1);
		put_int(x, c->concurrency, 1);
		put_int(x, r->slot, 1);
		put_int(x, r->seq, 1);
		put_str(x, tt_role_name(r->role));
		put_str(x, tt_finish_name(r->finish));
		put_str(x, tt_fail_name(r->fail));
		put_int(x, r->http_status, r->http_status > 0);
		put_int(x, r->prompt_tokens, r->prompt_tokens >= 0);
		put_int(x, r->cached_tokens, r->cached_tokens >= 0);
		put_int(x, r->t_sched_ns, 1);
		put_int(x, r->t_send_ns, 1);
		put_int(x, r->t_end_ns, 1);
		put_int(x, first, first >= 0);
		put_int(x, last, last >= 0);
		put_int(x, (int64_t)r->n_chunks, 1);
		put_int(x, tokens, 1);
		put_str(x, r->error && *r->error ? r->error : NULL);
		end_row(x);
	}
	return x->write_failed || x->out.failed;
}

static int on_scrape(void *ctx, const struct tt_scrape *s)
{
	struct tt_exporter *x = ctx;

	if (x->what != TT_EXPORT_SCRAPES)
		return 0;
	for (size_t i = 0; i < s->n_samples; i++) {
		begin_row(x);
		put_str(x, x->run_key);
		put_str(x, cell_id(x));
		put_int(x, s->t_ns, 1);
		put_str(x, s->samples[i].name);
		put_str(x, s->samples[i].labels);
		put_num(x, s->samples[i].value);
		end_row(x);
	}
	return x->write_failed || x->out.failed;
}

static void begin_cell(void *ctx, size_t cell)
{
	struct tt_exporter *x = ctx;
	x->cell = cell;
}

static void end_cell(void *ctx, size_t cell, enum tt_code code, const struct tt_error *err)
{
	(void)ctx;
	(void)cell;
	(void)code;
	(void)err;
}

/* 1.2: an open-loop cell's figures, as report-json 5.4 gives them (missing
 * on other cells), and short_outputs (missing where unknown). */
static void rate_columns(struct tt_exporter *x, const struct tt_report *r,
			 const struct tt_cell_figures *c, int counts)
{
	const struct tt_rate_figures *o = &c->open_loop;
	int ol = c->phase == TT_PHASE_RATE;
	int slo = ol && tt_slo_active(&r->opts.slo);

	put_num(x, ol ? c->rate : NAN);
	put_num(x, ol ? o->scheduled_req_s : NAN);
	put_num(x, ol ? o->achieved_req_s : NAN);
	put_int(x, o->ended, ol && counts);
	put_num(x, ol ? o->out_tok_s : NAN);
	put_int(x, o->due, ol);
	put_int(x, o->unanswered, ol);
	put_num(x, ol ? o->lateness_p99_ms : NAN);
	put_num(x, ol ? o->ttft_due_growth_ms : NAN);
	put_num(x, ol ? o->ttft_due_trend_ms_s : NAN);
	put_num(x, ol ? o->ttft_due_trend_se_ms_s : NAN);
	put_num(x, ol ? o->lateness_ms.p50 : NAN);
	put_num(x, ol ? o->ttft_due_ms.p50 : NAN);
	put_num(x, ol ? o->ttft_sent_ms.p50 : NAN);
	put_num(x, ol ? o->e2e_due_ms.p50 : NAN);
	put_int(x, o->slo_judged, slo);
	put_int(x, o->slo_met, slo);
	put_num(x, slo ? o->slo_share : NAN);
	put_num(x, slo ? o->goodput_req_s : NAN);
	if (slo)
		put_str(x, o->slo_ok ? "yes" : "no");
	else
		put_null(x);
	put_int(x, c->short_outputs, counts && c->short_outputs >= 0);
}

/* d at percentile p: NaN unless p is one of the analysis' quantiles (the
 * export's are the default 90 and 99) and enough samples support it. */
static double at_pct(const struct tt_report *r, const struct tt_dist *d, double p)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs);

	for (size_t i = 0; i < nq; i++)
		if (qs[i] == p)
			return tt__render_q(d, i, p);
	return NAN;
}

/* 1.3: tails of TTFT and TBT, E2E (M-e2e) and requests per second
 * (M-req-rate) of closed-loop cells, the engine, the measured window. */
static void default_columns(struct tt_exporter *x, const struct tt_report *r,
			    const struct tt_cell_figures *c)
{
	put_num(x, at_pct(r, &c->ttft_ms, 90));
	put_num(x, at_pct(r, &c->ttft_ms, 99));
	put_num(x, at_pct(r, &c->tbt_ms, 90));
	put_num(x, at_pct(r, &c->tbt_ms, 99));
	put_num(x, c->e2e_ms.p50); /* NaN where no request completed in a window */
	put_num(x, at_pct(r, &c->e2e_ms, 90));
	put_num(x, at_pct(r, &c->e2e_ms, 99));
	put_num(x, c->phase == TT_PHASE_DECODE ? c->completed_req_s : NAN);
	put_str(x, r->manifest.engine && *r->manifest.engine ? r->manifest.engine : NULL);
	put_str(x, r->manifest.engine_version && *r->manifest.engine_version
			   ? r->manifest.engine_version : NULL);
	put_int(x, c->window_start_ns, c->window_start_ns >= 0);
	put_int(x, c->window_end_ns, c->window_start_ns >= 0);
}

/* One row per cell, from the same analysis as the report. */
static void cell_rows(struct tt_exporter *x, const struct tt_report *r)
{
	size_t *order = tt__render_order(r);

	for (size_t k = 0; k < r->n_cells; k++) {
		const struct tt_cell_figures *c = &r->cells[order ? order[k] : k];
		const struct tt_cell_info *ci = &r->manifest.cells[c->cell];
		int counts = tt__render_has_counts(c), srv = c->has_server_metrics;

		begin_row(x);
		put_str(x, x->run_key);
		put_str(x, ci->id);
		put_str(x, tt__render_phase(c->phase)); /* prefill, decode, rate */
		put_int(x, c->context, 1);
		put_int(x, c->concurrency, 1);
		put_str(x, tt_cell_state_name(ci->state));
		put_str(x, tt_status_key(c->status));
		put_str(x, tt_status_name(c->status));
		put_num(x, c->total_tok_s);
		put_num(x, c->per_request_tok_s.p50);
		put_num(x, c->ttft_ms.p50);
		put_num(x, c->tbt_ms.p50);
		put_num(x, c->avg_active);
		put_str(x, c->avg_active_source);
		put_num(x, c->avg_in_flight);
		put_int(x, c->completed, counts);
		put_int(x, c->output_tokens, counts);
		put_num(x, c->measured_s);
		put_int(x, c->requests, counts);
		put_int(x, c->errors, counts);
		put_int(x, c->cut, counts);
		put_int(x, c->chunks, counts);
		put_int(x, c->multi_token_chunks, counts);
		put_int(x, c->prompt_tokens, c->prompt_tokens >= 0);
		put_int(x, c->scrapes, srv);
		put_num(x, srv ? c->waiting_share : NAN);
		put_num(x, srv ? c->kv_usage_max : NAN);
		put_num(x, srv ? c->preemptions : NAN);
		put_num(x, c->longest_stall_ms);
		put_num(x, c->gaps_over_share);
		put_str(x, c->damage[0] ? c->damage : NULL);
		put_num(x, c->tokens_per_chunk);
		put_num(x, c->queue_ms);
		put_num(x, c->prefill_ms);
		put_num(x, c->ttft_rest_ms);
		put_num(x, c->spec_acceptance);
		put_num(x, c->spec_accepted_len);
		put_num(x, c->cached_share);
		put_num(x, c->server_cache_hit_rate);
		{
			/* goodput: with SLOs, for decode cells that were run */
			int slo = tt_slo_active(&r->opts.slo) && c->phase == TT_PHASE_DECODE && counts;
			put_int(x, c->slo_judged, slo);
			put_int(x, c->slo_met, slo);
			put_num(x, slo ? c->slo_share : NAN);
			put_num(x, slo ? c->goodput_req_s : NAN);
			put_num(x, slo ? c->goodput_tok_s : NAN);
			if (slo && c->slo_judged > 0)
				put_str(x, c->slo_ok ? "yes" : "no");
			else
				put_null(x);
		}
		/* 1.1: M-reasoning */
		put_int(x, c->reasoning_tokens, counts && c->phase != TT_PHASE_PREFILL &&
						    c->reasoning_tokens >= 0);
		put_int(x, c->answer_tokens, counts && c->phase != TT_PHASE_PREFILL &&
						 c->answer_tokens >= 0);
		put_num(x, c->ttfr_ms.p50);
		put_num(x, c->ttfa_ms.p50);
		rate_columns(x, r, c, counts);
		default_columns(x, r, c);
		end_row(x);
	}
	free(order);
}

enum tt_code tt_exporter_run(struct tt_exporter *x, struct tt_run *run, const char *run_key,
			     const struct tt_analysis_opts *opts, struct tt_error *err)
{
	enum tt_code rc;

	header(x);
	x->run_key = run_key;
	x->m = tt_run_manifest(run);
	if (x->what == TT_EXPORT_CELLS) {
		struct tt_report *r = NULL;
		rc = tt_analyze(run, opts, &r, err);
		if (rc > TT_WARN)
			return rc;
		cell_rows(x, r);
		tt_report_free(r);
	} else {
		struct tt_run_visitor v;
		memset(&v, 0, sizeof v);
		v.ctx = x;
		v.trace.on_request = on_request;
		v.trace.on_scrape = on_scrape;
		v.begin_cell = begin_cell;
		v.end_cell = end_cell;
		rc = tt_run_read_all(run, &v, err);
		if (rc > TT_WARN && !x->write_failed && !x->out.failed)
			return rc;
	}
	if (x->out.failed)
		return tt_error_set(err, TT_ENOMEM, "export: out of memory");
	if (x->write_failed)
		return tt_error_set(err, TT_EIO, "export: the output could not be written");
	return rc;
}

enum tt_code tt_exporter_finish(struct tt_exporter *x, struct tt_error *err)
{
	header(x);
	flush(x);
	if (x->out.failed)
		return tt_error_set(err, TT_ENOMEM, "export: out of memory");
	if (x->write_failed)
		return tt_error_set(err, TT_EIO, "export: the output could not be written");
	return TT_OK;
}
