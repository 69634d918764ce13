/* CSV report (formats/report-csv.md): one row per cell.  The first twelve
 * columns are seed-matrix.csv's, at the precision the report shows, so a run
 * diffs against a profile; the columns after them carry full precision. */
#include "text/render_impl.h"
#include "text/render_rate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dist_names[] = {"per_request_tok_s", "ttft_ms", "tbt_ms"};

/* RFC 4180: quote a field holding a comma, quote or line break; double
 * quotes.  A text field starting with = + - @ TAB or CR is what a
 * spreadsheet runs as a formula: it gets a leading apostrophe and quotes
 * (formats/report-csv.md 1).  Numbers go through num_field. */
static void quoted(struct tt_buf *out, const char *s, int formula)
{
	const char *p;

	tt_buf_puts(out, formula ? "\"'" : "\"");
	for (p = s; *p; p++) {
		if (*p == '"')
			tt_buf_puts(out, "\"\"");
		else
			tt_buf_append(out, p, 1);
	}
	tt_buf_puts(out, "\"");
}

void tt__csv_field(struct tt_buf *out, const char *s, int first)
{
	if (!first)
		tt_buf_puts(out, ",");
	if (!s)
		return;
	if (strchr("=+-@\t\r", s[0]) && s[0]) {
		quoted(out, s, 1);
		return;
	}
	if (!strpbrk(s, ",\"\r\n")) {
		tt_buf_puts(out, s);
		return;
	}
	quoted(out, s, 0);
}

/* A number we formatted ourselves ("-0.5" is no formula). */
static void num_field(struct tt_buf *out, const char *s)
{
	tt_buf_puts(out, ",");
	tt_buf_puts(out, s);
}

/* Control characters other than line breaks and tabs (which RFC 4180
 * quoting carries) become '?', C1 controls in UTF-8 too. */
static void scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;

	for (; *p; p++) {
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			*p = '?';
		else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
			p[0] = p[1] = '?';
	}
}

static void exact(struct tt_buf *out, double v)
{
	char num[40];

	tt__fmt_exact(v, num, sizeof num);
	num_field(out, num);
}

static void count(struct tt_buf *out, long v, int known)
{
	char num[32];

	num[0] = '\0';
	if (known && v >= 0)
		snprintf(num, sizeof num, "%ld", v);
	num_field(out, num);
}

static void header(const struct tt_report *r, struct tt_buf *out)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs), d, i;
	char name[64], qkey[32];

	tt_buf_puts(out, "phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,"
			 "tbt_ms,avg_active,completed,output_tokens,measured_s,"
			 "id,context_tokens,status_key,total_tok_s_exact,avg_active_exact,"
			 "measured_s_exact");
	for (d = 0; d < 3; d++) {
		static const char *const stats[] = {"p50", "min", "max", "mean"};

		for (i = 0; i < 4; i++) {
			snprintf(name, sizeof name, "%s_%s", dist_names[d], stats[i]);
			tt__csv_field(out, name, 0);
		}
		for (i = 0; i < nq; i++) {
			tt__render_qkey(qs[i], qkey, sizeof qkey);
			snprintf(name, sizeof name, "%s_%s", dist_names[d], qkey);
			tt__csv_field(out, name, 0);
		}
		snprintf(name, sizeof name, "%s_n", dist_names[d]);
		tt__csv_field(out, name, 0);
	}
	tt_buf_puts(out, ",avg_active_source,avg_in_flight,requests,errors,cut,chunks,"
			 "multi_token_chunks,prompt_tokens,scrapes,waiting_mean,waiting_max,"
			 "waiting_share,running_mean,kv_usage_max,preemptions,damage,status_reason,"
			 "longest_stall_ms,gaps_over_share,tokens_per_chunk,chunks_1,chunks_2,chunks_3,"
			 "chunks_4,chunks_5plus,queue_ms,prefill_ms,server_ttft_ms,ttft_rest_ms,"
			 "spec_draft_tokens,spec_accepted_tokens,spec_acceptance,spec_accepted_len,"
			 "cached_share,server_cache_hit_rate");
	if (tt_slo_active(&r->opts.slo))
		tt_buf_puts(out, ",slo_judged,slo_met,slo_share,goodput_req_s,goodput_tok_s,slo_meets,"
				 "slo_max_concurrency");
	tt_buf_puts(out, ",reasoning_tokens,answer_tokens,ttfr_ms_p50,ttfa_ms_p50"); /* 1.2 */
	if (tt__render_has_rate_cells(r))
		tt__render_rate_csv_header(r, out); /* 1.2: open-loop columns */
	tt_buf_puts(out, "\n");
}

/* What every row asks of the whole report, found once (asked per row, each
 * a pass over every cell, 100k cells took 70.7 s). */
struct whole {
	int has_rate;           /* any open-loop cell: the rate columns */
	int64_t slo_context;    /* the context slo_max was found for */
	int slo_max;            /* tt_report_slo_max_concurrency of it */
	int slo_known;
};

static int slo_max_of(const struct tt_report *r, struct whole *w, int64_t context)
{
	/* Rows come ordered by phase, context and concurrency: one pass per
	 * context, not per row. */
	if (!w->slo_known || w->slo_context != context) {
		w->slo_max = tt_report_slo_max_concurrency(r, context);
		w->slo_context = context;
		w->slo_known = 1;
	}
	return w->slo_max;
}

static void row(const struct tt_report *r, const struct tt_cell_figures *c, struct tt_buf *out,
		struct whole *w)
{
	int counts = tt__render_has_counts(c), dec = tt__render_has_decode_figures(c);
	int srv = c->has_server_metrics;
	const struct tt_dist *dists[3];
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs), d, i;
	char num[64], text[sizeof c->reason + 1];

	dists[0] = &c->per_request_tok_s;
	dists[1] = &c->ttft_ms;
	dists[2] = &c->tbt_ms;

	tt__csv_field(out, tt__render_phase(c->phase), 1);
	tt__render_context(c->context, num, sizeof num);
	num_field(out, num);
	snprintf(num, sizeof num, "%d", c->concurrency);
	num_field(out, num);
	tt__csv_field(out, tt_status_name(c->status), 0);
	tt__fmt_rate_plain(counts ? c->total_tok_s : NAN, num, sizeof num);
	num_field(out, num);
	tt__fmt_plain(dec ? c->per_request_tok_s.p50 : NAN, 1, num, sizeof num);
	num_field(out, num);
	tt__fmt_plain(counts ? c->ttft_ms.p50 : NAN, 0, num, sizeof num);
	num_field(out, num);
	tt__fmt_plain(dec ? c->tbt_ms.p50 : NAN, 1, num, sizeof num);
	num_field(out, num);
	tt__fmt_plain(dec ? c->avg_active : NAN, 1, num, sizeof num);
	num_field(out, num);
	count(out, c->completed, counts);
	count(out, c->output_tokens, dec);
	tt__fmt_plain(dec ? c->measured_s : NAN, 1, num, sizeof num);
	num_field(out, num);

	tt__render_cell_id(r, c, text, sizeof text);
	tt__csv_field(out, text, 0);
	snprintf(num, sizeof num, "%lld", (long long)c->context);
	num_field(out, num);
	tt__csv_field(out, tt_status_key(c->status), 0);
	exact(out, c->total_tok_s);
	exact(out, c->avg_active);
	exact(out, c->measured_s);
	for (d = 0; d < 3; d++) {
		exact(out, dists[d]->p50);
		exact(out, dists[d]->min);
		exact(out, dists[d]->max);
		exact(out, dists[d]->mean);
		for (i = 0; i < nq; i++)
			exact(out, tt__render_q(dists[d], i, qs[i]));
		count(out, (long)dists[d]->n, 1);
	}
	tt__csv_field(out, c->avg_active_source, 0);
	exact(out, c->avg_in_flight);
	count(out, c->requests, counts);
	count(out, c->errors, counts);
	count(out, c->cut, counts);
	count(out, c->chunks, counts);
	count(out, c->multi_token_chunks, counts);
	count(out, (long)c->prompt_tokens, 1);
	count(out, c->scrapes, srv);
	exact(out, srv ? c->waiting_mean : NAN);
	exact(out, srv ? c->waiting_max : NAN);
	exact(out, srv ? c->waiting_share : NAN);
	exact(out, srv ? c->running_mean : NAN);
	exact(out, srv ? c->kv_usage_max : NAN);
	exact(out, srv ? c->preemptions : NAN);
	/* Damage and reasons quote paths the user gave: no control
	 * characters (a CSV is read in terminals too). */
	memcpy(text, c->damage, sizeof c->damage);
	text[sizeof c->damage] = '\0';
	scrub(text);
	tt__csv_field(out, text, 0);
	memcpy(text, c->reason, sizeof c->reason);
	text[sizeof c->reason] = '\0';
	scrub(text);
	tt__csv_field(out, text, 0);
	exact(out, c->longest_stall_ms);
	exact(out, c->gaps_over_share);
	exact(out, c->tokens_per_chunk);
	for (d = 0; d < 5; d++)
		count(out, c->chunks_by_tokens[d], dec);
	exact(out, c->queue_ms);
	exact(out, c->prefill_ms);
	exact(out, c->server_ttft_ms);
	exact(out, c->ttft_rest_ms);
	exact(out, c->spec_draft_tokens);
	exact(out, c->spec_accepted_tokens);
	exact(out, c->spec_acceptance);
	exact(out, c->spec_accepted_len);
	exact(out, c->cached_share);
	exact(out, c->server_cache_hit_rate);
	if (tt_slo_active(&r->opts.slo)) {
		int judged = dec && c->phase == TT_PHASE_DECODE;
		count(out, c->slo_judged, judged);
		count(out, c->slo_met, judged);
		exact(out, judged ? c->slo_share : NAN);
		exact(out, judged ? c->goodput_req_s : NAN);
		exact(out, judged ? c->goodput_tok_s : NAN);
		tt__csv_field(out, judged ? (c->slo_ok ? "yes" : "no") : "", 0);
		count(out, c->phase == TT_PHASE_DECODE ? slo_max_of(r, w, c->context) : -1, 1);
	}
	/* 1.2: M-reasoning; empty where no text was recorded */
	count(out, c->reasoning_tokens, dec && c->phase == TT_PHASE_DECODE);
	count(out, c->answer_tokens, dec && c->phase == TT_PHASE_DECODE);
	exact(out, c->ttfr_ms.p50);
	exact(out, c->ttfa_ms.p50);
	if (w->has_rate)
		tt__render_rate_csv_row(r, c, out);
	tt_buf_puts(out, "\n");
}

enum tt_code tt__render_csv_text(const struct tt_report *r, struct tt_buf *out,
				struct tt_error *err)
{
	size_t *order = NULL, i;
	struct whole w = {.has_rate = tt__render_has_rate_cells(r)};

	if (r->n_cells && !(order = tt__render_order(r)))
		return tt_error_set(err, TT_ENOMEM, "render csv: out of memory");
	header(r, out);
	for (i = 0; i < r->n_cells; i++)
		row(r, &r->cells[order[i]], out, &w);
	free(order);
	return TT_OK;
}
