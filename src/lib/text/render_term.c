/* Terminal report: aligned tables that fit opts->width, status in colour
 * when opts->color.  Wide tables drop their least important columns; the
 * decode matrix splits into column groups instead, so no cell is lost. */
#include "text/render_impl.h"
#include "text/render_rate.h"

#include "core/text_clean.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIDDOT " \xc2\xb7 "
#define GAP 2 /* spaces between columns */

static void pad(struct tt_buf *out, size_t n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;

		tt_buf_append(out, spaces, k);
		n -= k;
	}
}

static void emit(struct tt_buf *out, const char *s, const char *color, int use_color)
{
	if (use_color && color)
		tt_buf_printf(out, "\x1b[%sm%s\x1b[0m", color, s);
	else
		tt_buf_puts(out, s);
}

static void table_print(const struct tt__table *t, size_t avail, int use_color,
			struct tt_buf *out, int *shown)
{
	tt__table_term(t, &tt__term_report, avail, use_color, out, shown);
}

/* Prose wrapped at spaces to fit avail columns; lines after the first are
 * indented by `hang` spaces.  The caller has written `used` columns already. */
static void wrap(struct tt_buf *out, const char *text, size_t used, size_t hang, size_t avail)
{
	const char *p = text;
	size_t col = used;
	int first = 1;

	while (*p) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p), w;
		char word[512];

		snprintf(word, sizeof word, "%.*s", (int)len, p);
		w = tt__display_width(word);
		if (!first && col + 1 + w > avail) {
			tt_buf_puts(out, "\n");
			pad(out, hang);
			col = hang;
		} else if (!first) {
			tt_buf_puts(out, " ");
			col++;
		}
		tt_buf_append(out, p, len);
		col += w;
		first = 0;
		p += len;
		while (*p == ' ')
			p++;
	}
	tt_buf_puts(out, "\n");
}

/* ---- statuses ----------------------------------------------------------- */

static const char *status_color(enum tt_status s)
{
	switch (s) {
	case TT_STATUS_VALID: return "32";
	case TT_STATUS_QUEUED:
	case TT_STATUS_TOO_FEW:
	case TT_STATUS_CUT_SHORT:
	case TT_STATUS_SHORT:
	case TT_STATUS_NOT_SUSTAINED: return "33";
	case TT_STATUS_ERRORS:
	case TT_STATUS_CLIENT_OVERLOADED:
	case TT_STATUS_DAMAGED: return "31";
	case TT_STATUS_OVER_CAPACITY:
	case TT_STATUS_NOT_RUN: return "2";
	case TT_STATUS_COUNT_: break;
	}
	return NULL;
}

/* One-letter tag shown beside a matrix figure whose cell is not Valid, so
 * the status reads without colour too. */
static char status_tag(enum tt_status s)
{
	static const char tags[TT_STATUS_COUNT_] = {0, 'Q', 'X', 'E', 'F', 'C', 'D', 'N', 'S',
							    'R', 'L'};

	return (unsigned)s < TT_STATUS_COUNT_ ? tags[s] : '?';
}

/* ---- sections ----------------------------------------------------------- */

static void header(const struct tt_report *r, int use_color, struct tt_buf *out)
{
	const struct tt_manifest *m = &r->manifest;
	const char *model = m->model && *m->model ? m->model : m->served_model;
	const char *gpu = tt__render_note(m, "gpu"), *vram = tt__render_note(m, "vram");
	const char *quant = tt__render_note(m, "quantization");
	const char *parts[3];
	size_t i, np = 0;

	emit(out, "Speed test matrix", "1", use_color);
	tt_buf_printf(out, MIDDOT "%s", model ? model : "unknown model");
	if (gpu)
		tt_buf_printf(out, " on %s%s%s", gpu, vram ? " " : "", vram ? vram : "");
	tt_buf_puts(out, "\n");
	parts[0] = m->engine;
	parts[1] = m->engine_version;
	parts[2] = quant;
	for (i = 0; i < 3; i++)
		if (parts[i] && *parts[i])
			tt_buf_printf(out, "%s%s", np++ ? MIDDOT : "", parts[i]);
	if (m->duration_s > 0) {
		char num[32];

		tt__fmt_plain(m->duration_s, 3, num, sizeof num);
		tt_buf_printf(out, "%s%s s windows", np++ ? MIDDOT : "", num);
	}
	if (r->source[0]) {
		/* the path the user named: shown, its control characters not */
		char src[sizeof r->source];
		snprintf(src, sizeof src, "%s", r->source);
		tt__text_scrub(src, strlen(src));
		tt_buf_printf(out, "%s%s", np++ ? MIDDOT : "", src);
	}
	tt_buf_puts(out, np ? "\n\n" : "\n");
}

static void title(const char *s, size_t avail, int use_color, struct tt_buf *out)
{
	if (tt__display_width(s) > avail) {
		wrap(out, s, 0, 2, avail);
		return;
	}
	emit(out, s, "1", use_color);
	tt_buf_puts(out, "\n");
}

static enum tt_code prefill(const struct tt_report *r, const size_t *order, size_t avail,
			    int use_color, struct tt_buf *out)
{
	struct tt__table t;
	size_t i, n = 0, row = 1;

	for (i = 0; i < r->n_cells; i++)
		n += r->cells[i].phase == TT_PHASE_PREFILL;
	if (!n)
		return TT_OK;
	if (tt__table_init(&t, 4))
		return TT_FAILED;
	t.nrows = n + 1;
	tt__table_set(&t, 0, 0, "Context", TT__TONE_NONE);
	tt__table_set(&t, 0, 1, "Prompt tok/s", TT__TONE_NONE);
	tt__table_set(&t, 0, 2, "TTFT", TT__TONE_NONE);
	tt__table_set(&t, 0, 3, "Status", TT__TONE_NONE);
	t.align[1] = t.align[2] = TT__ALIGN_RIGHT;
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char s[64];

		if (c->phase != TT_PHASE_PREFILL)
			continue;
		tt__render_context(c->context, s, sizeof s);
		tt__table_set(&t, row, 0, s, TT__TONE_NONE);
		tt_fmt_rate(tt__render_has_counts(c) ? c->total_tok_s : NAN, s, sizeof s);
		tt__table_set(&t, row, 1, s, TT__TONE_NONE);
		tt_fmt_ms(tt__render_has_counts(c) ? c->ttft_ms.p50 : NAN, s, sizeof s);
		tt__table_set(&t, row, 2, s, TT__TONE_NONE);
		tt__table_set(&t, row, 3, tt_status_name(c->status), tt__status_tone(c->status));
		row++;
	}
	title("Prefill", avail, use_color, out);
	table_print(&t, avail, use_color, out, NULL);
	tt__table_free(&t);
	return TT_OK;
}


/* A matrix of one figure (ttft = 0: total tok/s, 1: median TTFT), split into
 * column groups that fit the width. */
static enum tt_code matrix(const struct tt_cell_figures **grid, const int64_t *ctxs, size_t nctx,
			   const int64_t *concs, size_t nconc, int ttft, size_t avail,
			   int use_color, struct tt_buf *out)
{
	size_t start = 0;

	while (start < nconc) {
		struct tt__table t;
		size_t take = nconc - start, i, j, width, w[32];
		int shown[32];

		if (take > 31)
			take = 31;
		if (tt__table_init(&t, take + 1))
			return TT_FAILED;
		t.nrows = nctx + 1;
		tt__table_set(&t, 0, 0, "Context", TT__TONE_NONE);
		for (j = 0; j < take; j++) {
			char s[32];

			snprintf(s, sizeof s, "%lld", (long long)concs[start + j]);
			tt__table_set(&t, 0, j + 1, s, TT__TONE_NONE);
			t.align[j + 1] = TT__ALIGN_RIGHT;
		}
		for (i = 0; i < nctx; i++) {
			char s[64];

			tt__render_context(ctxs[i], s, sizeof s);
			tt__table_set(&t, i + 1, 0, s, TT__TONE_NONE);
			for (j = 0; j < take; j++) {
				const struct tt_cell_figures *c = grid[i * nconc + start + j];
				char v[48];

				if (!c) {
					tt__table_set(&t, i + 1, j + 1, TT_DASH, TT__TONE_NONE);
					continue;
				}
				if (!tt__render_has_counts(c)) {
					tt__table_set(&t, i + 1, j + 1,
					    c->status == TT_STATUS_OVER_CAPACITY ? "over cap" : "not run",
					    tt__status_tone(c->status));
					continue;
				}
				if (ttft)
					tt_fmt_ms(c->ttft_ms.p50, v, sizeof v);
				else
					tt_fmt_rate(c->total_tok_s, v, sizeof v);
				if (c->status != TT_STATUS_VALID)
					snprintf(s, sizeof s, "%s %c", v, status_tag(c->status));
				else
					snprintf(s, sizeof s, "%s", v);
				tt__table_set(&t, i + 1, j + 1, s,
				    c->status == TT_STATUS_VALID ? TT__TONE_NONE : tt__status_tone(c->status));
			}
		}
		/* keep as many columns as fit; the rest go to the next group */
		tt__table_widths(&t, w);
		width = 2 + w[0];
		for (j = 0; j < take; j++) {
			if (j > 0 && width + GAP + w[j + 1] > avail)
				break;
			width += GAP + w[j + 1];
		}
		for (; j < take; j++)
			t.prio[j + 1] = (int)j + 1;
		table_print(&t, avail, use_color, out, shown);
		for (j = 0; j < take && shown[j + 1]; j++)
			;
		tt__table_free(&t);
		start += j ? j : 1;
	}
	return TT_OK;
}

static enum tt_code decode(const struct tt_report *r, size_t avail, int use_color,
			   struct tt_buf *out)
{
	int64_t *ctxs = malloc(r->n_cells * sizeof *ctxs);
	int64_t *concs = malloc(r->n_cells * sizeof *concs);
	const struct tt_cell_figures **grid = NULL;
	enum tt_code rc = TT_OK;
	size_t nctx, nconc;

	if (!ctxs || !concs) {
		rc = TT_FAILED;
		goto cleanup;
	}
	nctx = tt__render_distinct(r, TT_PHASE_DECODE, 0, ctxs, r->n_cells);
	nconc = tt__render_distinct(r, TT_PHASE_DECODE, 1, concs, r->n_cells);
	if (!nctx)
		goto cleanup;
	grid = tt__render_grid(r, ctxs, nctx, concs, nconc);
	if (!grid) {
		title("Sustained decode", avail, use_color, out);
		tt_buf_printf(out, "The matrix (%zu contexts by %zu concurrency levels) is left out: "
			      "too large to print.\n\n", nctx, nconc);
		goto cleanup;
	}
	title("Sustained decode: total tok/s (rows: context, columns: simultaneous requests)",
	      avail, use_color, out);
	rc = matrix(grid, ctxs, nctx, concs, nconc, 0, avail, use_color, out);
	if (tt_failed(rc))
		goto cleanup;
	title("Sustained decode: median TTFT", avail, use_color, out);
	rc = matrix(grid, ctxs, nctx, concs, nconc, 1, avail, use_color, out);

cleanup:
	free(grid);
	free(ctxs);
	free(concs);
	return rc;
}

static void notes(const struct tt_report *r, const size_t *order, size_t avail, int use_color,
		  struct tt_buf *out)
{
	char line[sizeof r->cells[0].reason + 128];
	int seen[TT_STATUS_COUNT_] = {0};
	size_t i;
	int s, any = 0;

	for (i = 0; i < r->n_cells; i++) {
		if (r->cells[i].status > 0 && r->cells[i].status < TT_STATUS_COUNT_)
			seen[r->cells[i].status] = any = 1;
		any |= tt__render_cell_listed(&r->cells[i]); /* a too-short rate window */
	}
	if (!any)
		return;
	title("Statuses", avail, use_color, out);
	for (s = 1; s < TT_STATUS_COUNT_; s++) {
		if (!seen[s])
			continue;
		/* the legend sentence starts with the status name */
		tt_buf_puts(out, "  ");
		emit(out, (char[2]){status_tag((enum tt_status)s), '\0'},
		     status_color((enum tt_status)s), use_color);
		tt_buf_puts(out, "  ");
		wrap(out, tt_status_legend((enum tt_status)s), 5, 5, avail);
	}
	tt_buf_puts(out, "\n");
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char ctx[32];

		if (!tt__render_cell_listed(c))
			continue;
		tt__render_context(c->context, ctx, sizeof ctx);
		if (c->phase == TT_PHASE_PREFILL)
			snprintf(line, sizeof line, "prefill %s: %s%s%.*s", ctx,
				 tt_status_name(c->status), c->reason[0] ? MIDDOT : "",
				 (int)sizeof c->reason, c->reason);
		else if (c->phase == TT_PHASE_RATE)
		{
			char rate[32];
			tt__render_rate(c->rate, rate, sizeof rate);
			snprintf(line, sizeof line, "%s at %s: %s%s%.*s", ctx, rate,
				 tt_status_name(c->status), c->reason[0] ? MIDDOT : "",
				 (int)sizeof c->reason, c->reason);
		}
		else
			snprintf(line, sizeof line, "%s x %d: %s%s%.*s", ctx, c->concurrency,
				 tt_status_name(c->status), c->reason[0] ? MIDDOT : "",
				 (int)sizeof c->reason, c->reason);
		/* A reason may quote a path the user gave (damage messages): no
		 * control character reaches the terminal, whatever it holds. */
		tt__text_scrub(line, strlen(line));
		tt_buf_puts(out, "  ");
		wrap(out, line, 2, 4, avail);
	}
	tt_buf_puts(out, "\n");
}

static enum tt_code measurements(const struct tt_report *r, const size_t *order, size_t avail,
				 int use_color, struct tt_buf *out)
{
	static const char *const heads[] = {
		"Phase", "Context", "Conc", "Status", "Total tok/s", "Per req", "TTFT",
		"TBT", "Active", "Completed", "Output tok", "Measured", "Errors",
	};
	/* dropped first when narrow: highest number; latencies stay longest */
	static const int prio[] = {0, 0, 0, 0, 0, 3, 0, 2, 5, 6, 7, 8, 4};
	struct tt__table t;
	size_t i, k, ncol = sizeof heads / sizeof heads[0];

	if (tt__table_init(&t, ncol))
		return TT_FAILED;
	t.nrows = r->n_cells + 1;
	for (k = 0; k < ncol; k++) {
		tt__table_set(&t, 0, k, heads[k], TT__TONE_NONE);
		t.prio[k] = prio[k];
		t.align[k] = k >= 4 || k == 2 ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		int counts = tt__render_has_counts(c), dec = tt__render_has_decode_figures(c);
		size_t row = i + 1;
		char s[64];

		tt__table_set(&t, row, 0, tt__render_phase(c->phase), TT__TONE_NONE);
		tt__render_context(c->context, s, sizeof s);
		tt__table_set(&t, row, 1, s, TT__TONE_NONE);
		if (c->phase == TT_PHASE_RATE) /* no fixed number at once: its rate */
			tt__render_rate(c->rate, s, sizeof s);
		else
			snprintf(s, sizeof s, "%d", c->concurrency);
		tt__table_set(&t, row, 2, s, TT__TONE_NONE);
		tt__table_set(&t, row, 3, tt_status_name(c->status), tt__status_tone(c->status));
		tt_fmt_rate(counts ? c->total_tok_s : NAN, s, sizeof s);
		tt__table_set(&t, row, 4, s, TT__TONE_NONE);
		tt_fmt_rate(dec ? c->per_request_tok_s.p50 : NAN, s, sizeof s);
		tt__table_set(&t, row, 5, s, TT__TONE_NONE);
		tt_fmt_ms(counts ? c->ttft_ms.p50 : NAN, s, sizeof s);
		tt__table_set(&t, row, 6, s, TT__TONE_NONE);
		tt_fmt_fixed1(dec ? c->tbt_ms.p50 : NAN, s, sizeof s);
		if (dec && isfinite(c->tbt_ms.p50))
			strcat(s, " ms");
		tt__table_set(&t, row, 7, s, TT__TONE_NONE);
		tt_fmt_fixed1(dec ? c->avg_active : NAN, s, sizeof s);
		tt__table_set(&t, row, 8, s, TT__TONE_NONE);
		tt_fmt_int(counts && c->completed >= 0 ? (double)c->completed : NAN, s, sizeof s);
		tt__table_set(&t, row, 9, s, TT__TONE_NONE);
		tt_fmt_int(dec && c->output_tokens >= 0 ? (double)c->output_tokens : NAN, s,
			   sizeof s);
		tt__table_set(&t, row, 10, s, TT__TONE_NONE);
		tt_fmt_fixed1(dec ? c->measured_s : NAN, s, sizeof s);
		if (dec && isfinite(c->measured_s))
			strcat(s, " s");
		tt__table_set(&t, row, 11, s, TT__TONE_NONE);
		tt_fmt_int(counts && c->errors >= 0 ? (double)c->errors : NAN, s, sizeof s);
		tt__table_set(&t, row, 12, s, counts && c->errors > 0 ? TT__TONE_BAD : TT__TONE_NONE);
	}
	title("All measurements (latencies are medians)", avail, use_color, out);
	table_print(&t, avail, use_color, out, NULL);
	tt__table_free(&t);
	return TT_OK;
}

/* A table whose drop priorities its builder chose. */
static enum tt_code title_table(struct tt__table *x, const char *head, size_t avail,
				int use_color, struct tt_buf *out)
{
	title(head, avail, use_color, out);
	table_print(x, avail, use_color, out, NULL);
	return out->failed ? TT_FAILED : TT_OK;
}

static enum tt_code xtable_term(struct tt__table *x, const char *head, size_t avail,
				int use_color, struct tt_buf *out)
{
	/* narrow terminals drop the rightmost columns first, never the keys */
	for (size_t k = 0; k < x->ncols; k++)
		x->prio[k] = k < 2 ? 0 : (int)k;
	title(head, avail, use_color, out);
	table_print(x, avail, use_color, out, NULL);
	return out->failed ? TT_FAILED : TT_OK;
}

/* Beyond the seed's layout, only when asked for: tails and goodput. */
static enum tt_code extra_sections(const struct tt_report *r, const size_t *order, size_t avail,
				   int use_color, struct tt_buf *out)
{
	struct tt__table x;
	enum tt_code rc = TT_OK;
	char text[1024];

	/* the default figures (issue 24.1): every report shows them */
	if (tt__render_latency_table(r, order, &x))
		return TT_FAILED;
	if (x.nrows > 1)
		rc = title_table(&x, "Latency (median and tails over requests; Req/s: requests "
				     "completed per second; E2E: send to the last token)",
				 avail, use_color, out);
	tt__table_free(&x);
	if (!tt_failed(rc) && tt__render_has_rate_cells(r)) {
		if (tt__render_rate_table(r, order, &x))
			return TT_FAILED;
		rc = xtable_term(&x, "Open-loop cells (latencies from the due time and from the "
				     "send; Late: send lateness)", avail, use_color, out);
		tt__table_free(&x);
		tt__render_rate_summary(r, text, sizeof text);
		if (!tt_failed(rc) && text[0]) {
			wrap(out, text, 0, 0, avail);
			tt_buf_puts(out, "\n");
		}
	}
	if (!tt_failed(rc) && r->opts.show_tails) {
		if (tt__render_tails_table(r, order, &x))
			return TT_FAILED;
		if (x.nrows > 1)
			rc = xtable_term(&x, "Tails (longest stall: largest gap between chunks of one "
					     "request)", avail, use_color, out);
		tt__table_free(&x);
	}
	if (!tt_failed(rc)) {
		if (tt__render_prefill_repeats_table(r, order, &x))
			return TT_FAILED;
		if (x.nrows > 1)
			rc = xtable_term(&x, "Prefill repeats (median and spread of the cold scouts)",
					 avail, use_color, out);
		tt__table_free(&x);
	}
	if (!tt_failed(rc)) {
		if (tt__render_reasoning_table(r, order, &x))
			return TT_FAILED;
		if (x.nrows > 1)
			rc = xtable_term(&x, "Reasoning (tokens streamed as reasoning vs answer, time "
					     "to the first of each)", avail, use_color, out);
		tt__table_free(&x);
	}
	if (!tt_failed(rc)) {
		if (tt__render_server_parts_table(r, order, &x))
			return TT_FAILED;
		if (x.nrows > 1)
			rc = xtable_term(&x, "Where TTFT goes (server queue, prefill, rest), tokens "
					     "per chunk, speculative decoding", avail, use_color, out);
		tt__table_free(&x);
	}
	if (!tt_failed(rc) && tt_slo_active(&r->opts.slo)) {
		if (tt__render_goodput_table(r, order, &x))
			return TT_FAILED;
		if (x.nrows > 1) {
			rc = xtable_term(&x, "Goodput under SLOs", avail, use_color, out);
			tt__render_slo_sentence(r, text, sizeof text);
			wrap(out, text, 0, 0, avail);
			tt_buf_puts(out, "Highest concurrency meeting the SLOs: ");
			tt__render_slo_max_line(r, text, sizeof text);
			tt_buf_puts(out, text);
			tt_buf_puts(out, "\n");
		}
		tt__table_free(&x);
	}
	return rc;
}

enum tt_code tt__render_term_text(const struct tt_report *r, const struct tt_render_opts *opts,
				 struct tt_buf *out, struct tt_error *err)
{
	size_t avail = opts->width > 0 ? (size_t)opts->width : 120;
	int use_color = opts->color != 0;
	size_t *order = NULL;
	enum tt_code rc = TT_OK;

	if (r->n_cells && !(order = tt__render_order(r))) {
		rc = TT_FAILED;
		goto cleanup;
	}
	header(r, use_color, out);
	if (!r->n_cells) {
		tt_buf_puts(out, "no cells\n");
		goto cleanup;
	}
	rc = prefill(r, order, avail, use_color, out);
	if (!tt_failed(rc))
		rc = decode(r, avail, use_color, out);
	if (!tt_failed(rc))
		notes(r, order, avail, use_color, out);
	if (!tt_failed(rc))
		rc = measurements(r, order, avail, use_color, out);
	if (!tt_failed(rc))
		rc = extra_sections(r, order, avail, use_color, out);

cleanup:
	free(order);
	if (tt_failed(rc))
		return tt_error_set(err, TT_ENOMEM, "render term: out of memory");
	return TT_OK;
}
