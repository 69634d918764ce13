/* Open-loop cells in every text format (docs/metrics.md M-rate): one table
 * row per cell with the send lateness and the latencies from the due time
 * beside those from the send, the achieved rate, and per context the
 * highest rate meeting the SLOs (M-rate-limit) and the capacity.  The term,
 * markdown, html and pdf reports show the table (tt__render_rate_table);
 * CSV appends columns and JSON a cell member (formats/report-csv.md,
 * formats/report-json.md). */
#include "text/render_rate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"

#define MIDDOT " \xc2\xb7 "

const char *tt__render_phase(enum tt_phase p)
{
	return p == TT_PHASE_PREFILL ? "prefill" : p == TT_PHASE_RATE ? "rate" : "decode";
}

int tt__render_has_rate_cells(const struct tt_report *r)
{
	for (size_t i = 0; i < r->n_cells; i++)
		if (r->cells[i].phase == TT_PHASE_RATE)
			return 1;
	return 0;
}

int tt__render_cell_listed(const struct tt_cell_figures *c)
{
	if (c->status != TT_STATUS_VALID)
		return 1;
	return c->phase == TT_PHASE_RATE && c->reason[0] &&
	       !(c->open_loop.ttft_due_trend_se_ms_s <= 10);
}

void tt__render_rate(double rate, char *buf, size_t len)
{
	tt__snprintf_c(buf, len, "%g/s", rate);
}

static void put(struct tt__table *t, size_t row, size_t col, const char *s)
{
	tt__table_set(t, row, col, s, TT__TONE_NONE);
}

static void ms(double v, char *buf, size_t len)
{
	if (isfinite(v) && fabs(v) < 10)
		tt__snprintf_c(buf, len, "%.2f ms", v);
	else
		tt_fmt_ms(v, buf, len);
}

/* The quantile column closest to 99 (the analysis' p99 unless the user
 * asked for others); -1 none. */
static int q99(const struct tt_report *r, char *key, size_t len)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs);
	int best = -1;

	for (size_t i = 0; i < nq; i++)
		if (best < 0 || fabs(qs[i] - 99) < fabs(qs[best] - 99))
			best = (int)i;
	if (best >= 0)
		tt__render_qkey(qs[best], key, len);
	return best;
}

int tt__render_rate_table(const struct tt_report *r, const size_t *order, struct tt__table *t)
{
	static const char *const heads[] = {
		"Context", "Rate", "Status", "Due/s", "Ended/s", "Out tok/s", "Late p50",
		"Late p99", "TTFT p50 sent", "TTFT p50 due", "", "",
		"TTFT growth", "Unanswered", "Goodput/s", "SLO met",
	};
	static const char *const tail[] = {"TTFT ", "E2E "};
	size_t ncol = sizeof heads / sizeof *heads - (tt_slo_active(&r->opts.slo) ? 0 : 2);
	char qk[32], s[64];
	int qi = q99(r, qk, sizeof qk);
	const double *qs;
	double qp = (tt__render_quantiles(r, &qs), qi >= 0 ? qs[qi] : 99);

	if (tt__table_init(t, ncol))
		return -1;
	for (size_t k = 0; k < ncol; k++) {
		if (k == 10 || k == 11)
			snprintf(s, sizeof s, "%s%s due", tail[k - 10], qi >= 0 ? qk : "p99");
		else
			snprintf(s, sizeof s, "%s", heads[k]);
		put(t, 0, k, s);
		t->align[k] = k != 2 ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		const struct tt_rate_figures *o = &c->open_loop;
		size_t row = t->nrows;

		if (c->phase != TT_PHASE_RATE)
			continue;
		t->nrows++;
		tt__render_context(c->context, s, sizeof s);
		put(t, row, 0, s);
		if (row < t->cap) /* the status marked as the other tables mark it */
			t->row_status[row] = (int)c->status;
		tt__render_rate(c->rate, s, sizeof s);
		put(t, row, 1, s);
		put(t, row, 2, tt_status_name(c->status));
		tt_fmt_rate(o->scheduled_req_s, s, sizeof s);
		put(t, row, 3, s);
		tt_fmt_rate(o->achieved_req_s, s, sizeof s);
		put(t, row, 4, s);
		tt_fmt_rate(o->out_tok_s, s, sizeof s);
		put(t, row, 5, s);
		ms(o->lateness_ms.p50, s, sizeof s);
		put(t, row, 6, s);
		ms(o->lateness_p99_ms, s, sizeof s);
		put(t, row, 7, s);
		ms(o->ttft_sent_ms.p50, s, sizeof s);
		put(t, row, 8, s);
		ms(o->ttft_due_ms.p50, s, sizeof s);
		put(t, row, 9, s);
		if (qi < 0 || !tt__render_q_short(&o->ttft_due_ms, qp, s, sizeof s))
			ms(qi >= 0 && o->ttft_due_ms.n ? o->ttft_due_ms.q[qi] : NAN, s, sizeof s);
		put(t, row, 10, s);
		if (qi < 0 || !tt__render_q_short(&o->e2e_due_ms, qp, s, sizeof s))
			ms(qi >= 0 && o->e2e_due_ms.n ? o->e2e_due_ms.q[qi] : NAN, s, sizeof s);
		put(t, row, 11, s);
		ms(o->ttft_due_growth_ms, s, sizeof s);
		put(t, row, 12, s);
		tt_fmt_int(o->due ? (double)o->unanswered : NAN, s, sizeof s);
		put(t, row, 13, s);
		if (ncol > 14) {
			tt_fmt_fixed1(o->goodput_req_s, s, sizeof s);
			put(t, row, 14, s);
			if (isfinite(o->slo_share))
				tt__snprintf_c(s, sizeof s, "%.0f%%%s", o->slo_share * 100,
					       o->slo_ok ? "" : " (no)");
			else
				snprintf(s, sizeof s, TT_DASH);
			put(t, row, 15, s);
		}
	}
	return 0;
}

void tt__render_rate_summary(const struct tt_report *r, char *buf, size_t len)
{
	int64_t ctx[256];
	size_t n = tt__render_distinct(r, TT_PHASE_RATE, 0, ctx, 256), used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < len; i++) {
		double lo, hi, cap = tt_report_rate_capacity(r, ctx[i]);
		char c[32], a[48] = "", b[224] = "";
		int k;

		tt__render_context(ctx[i], c, sizeof c);
		if (isfinite(cap))
			tt__snprintf_c(a, sizeof a, "capacity %.4g requests/s", cap);
		if (tt_report_rate_limit(r, ctx[i], &lo, &hi)) {
			if (isnan(lo))
				tt__snprintf_c(b, sizeof b, "%sno rate measured meets the SLOs%s",
					       a[0] ? ", " : "", isnan(hi) ? "" : " (lowest tried ");
			else if (isnan(hi))
				tt__snprintf_c(b, sizeof b, "%sSLOs met up to %g/s, the highest rate "
					       "measured", a[0] ? ", " : "", lo);
			else
				tt__snprintf_c(b, sizeof b, "%shighest rate meeting the SLOs %g/s "
					       "(limit in [%g, %g)/s, +/- %.2g/s)", a[0] ? ", " : "",
					       lo, lo, hi, (hi - lo) / 2);
			if (isnan(lo) && !isnan(hi)) {
				size_t bl = strlen(b);
				tt__snprintf_c(b + bl, sizeof b - bl, "%g/s)", hi);
			}
			/* M-rate-limit: a limit above the capacity is said so */
			if (tt_report_rate_limit_above_capacity(r, ctx[i])) {
				size_t bl = strlen(b);
				tt__snprintf_c(b + bl, sizeof b - bl, ", above the capacity: not "
					       "sustained");
			}
		}
		k = snprintf(buf + used, len - used, "%s%s: %s%s", i ? MIDDOT : "", c, a, b);
		if (k < 0)
			break;
		used += (size_t)k < len - used ? (size_t)k : len - used - 1;
	}
}

/* ---- CSV ----------------------------------------------------------------- */

static void csv_num(struct tt_buf *out, double v)
{
	char num[48];
	tt_buf_puts(out, ",");
	if (isfinite(v)) {
		tt__fmt_exact(v, num, sizeof num);
		tt_buf_puts(out, num);
	}
}

static const char *const dists[] = {"lateness_ms", "ttft_due_ms", "ttft_sent_ms", "e2e_due_ms"};

void tt__render_rate_csv_header(const struct tt_report *r, struct tt_buf *out)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs);
	char key[32];

	tt_buf_puts(out, ",rate_req_s,scheduled_req_s,achieved_req_s,out_tok_s,due,unanswered,"
			 "lateness_ms_p99_exact,ttft_due_growth_ms");
	for (size_t d = 0; d < 4; d++) {
		char col[64];
		snprintf(col, sizeof col, ",%s_p50,%s_max", dists[d], dists[d]);
		tt_buf_puts(out, col);
		for (size_t i = 0; i < nq; i++) {
			tt__render_qkey(qs[i], key, sizeof key);
			snprintf(col, sizeof col, ",%s_%s", dists[d], key);
			tt_buf_puts(out, col);
		}
	}
	if (tt_slo_active(&r->opts.slo))
		tt_buf_puts(out, ",slo_due_judged,slo_due_met,slo_due_share,goodput_due_req_s,"
				 "rate_limit_lo,rate_limit_hi");
}

void tt__render_rate_csv_row(const struct tt_report *r, const struct tt_cell_figures *c,
			     struct tt_buf *out)
{
	const struct tt_rate_figures *o = &c->open_loop;
	const struct tt_dist *dv[] = {&o->lateness_ms, &o->ttft_due_ms, &o->ttft_sent_ms,
				      &o->e2e_due_ms};
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs);
	int ol = c->phase == TT_PHASE_RATE;

	csv_num(out, ol ? c->rate : NAN);
	csv_num(out, ol ? o->scheduled_req_s : NAN);
	csv_num(out, ol ? o->achieved_req_s : NAN);
	csv_num(out, ol ? o->out_tok_s : NAN);
	csv_num(out, ol ? (double)o->due : NAN);
	csv_num(out, ol ? (double)o->unanswered : NAN);
	csv_num(out, ol ? o->lateness_p99_ms : NAN);
	csv_num(out, ol ? o->ttft_due_growth_ms : NAN);
	for (size_t d = 0; d < 4; d++) {
		csv_num(out, ol ? dv[d]->p50 : NAN);
		csv_num(out, ol ? dv[d]->max : NAN);
		for (size_t i = 0; i < nq; i++)
			csv_num(out, ol ? tt__render_q(dv[d], i, qs[i]) : NAN);
	}
	if (tt_slo_active(&r->opts.slo)) {
		double lo = NAN, hi = NAN;
		if (ol)
			tt_report_rate_limit(r, c->context, &lo, &hi);
		csv_num(out, ol ? (double)o->slo_judged : NAN);
		csv_num(out, ol ? (double)o->slo_met : NAN);
		csv_num(out, ol ? o->slo_share : NAN);
		csv_num(out, ol ? o->goodput_req_s : NAN);
		csv_num(out, lo);
		csv_num(out, hi);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static void jnum(cJSON *o, const char *k, double v)
{
	char text[48];
	if (!isfinite(v)) {
		cJSON_AddNullToObject(o, k);
		return;
	}
	tt__fmt_exact(v, text, sizeof text);
	cJSON_AddRawToObject(o, k, text);
}

static void jdist(const struct tt_report *r, cJSON *o, const char *k, const struct tt_dist *d)
{
	const double *qs;
	size_t nq = tt__render_quantiles(r, &qs);
	cJSON *e = cJSON_AddObjectToObject(o, k);
	char key[32];

	if (!e)
		return;
	jnum(e, "n", (double)d->n);
	jnum(e, "min", d->min);
	jnum(e, "max", d->max);
	jnum(e, "mean", d->mean);
	jnum(e, "p50", d->p50);
	for (size_t i = 0; i < nq; i++) {
		tt__render_qkey(qs[i], key, sizeof key);
		jnum(e, key, tt__render_q(d, i, qs[i]));
	}
}

cJSON *tt__render_rate_json(const struct tt_report *r, const struct tt_cell_figures *c)
{
	const struct tt_rate_figures *o = &c->open_loop;
	cJSON *j = cJSON_CreateObject();

	if (!j)
		return NULL;
	jnum(j, "rate_req_s", c->rate);
	jnum(j, "scheduled_req_s", o->scheduled_req_s);
	jnum(j, "achieved_req_s", o->achieved_req_s);
	jnum(j, "out_tok_s", o->out_tok_s);
	jnum(j, "due", (double)o->due);
	jnum(j, "unanswered", (double)o->unanswered);
	jnum(j, "lateness_p99_ms", o->lateness_p99_ms);
	jnum(j, "ttft_due_growth_ms", o->ttft_due_growth_ms);
	jdist(r, j, "lateness_ms", &o->lateness_ms);
	jdist(r, j, "ttft_due_ms", &o->ttft_due_ms);
	jdist(r, j, "ttft_sent_ms", &o->ttft_sent_ms);
	jdist(r, j, "e2e_due_ms", &o->e2e_due_ms);
	/* 1.4: M-sustained's figures */
	jnum(j, "ended", c->status == TT_STATUS_NOT_RUN ? NAN : (double)o->ended);
	jnum(j, "ttft_due_trend_ms_s", o->ttft_due_trend_ms_s);
	jnum(j, "ttft_due_trend_se_ms_s", o->ttft_due_trend_se_ms_s);
	if (tt_slo_active(&r->opts.slo)) {
		cJSON *s = cJSON_AddObjectToObject(j, "slo_due");
		double lo, hi;
		if (s) {
			jnum(s, "judged", (double)o->slo_judged);
			jnum(s, "met", (double)o->slo_met);
			jnum(s, "share", o->slo_share);
			jnum(s, "goodput_req_s", o->goodput_req_s);
			cJSON_AddBoolToObject(s, "meets", o->slo_ok);
			tt_report_rate_limit(r, c->context, &lo, &hi);
			jnum(s, "limit_lo_req_s", lo);
			jnum(s, "limit_hi_req_s", hi);
			/* 1.4: the limit is above the context's capacity */
			cJSON_AddBoolToObject(s, "limit_above_capacity",
					      tt_report_rate_limit_above_capacity(r, c->context));
		}
	}
	return j;
}
