/* A diff as term, md and csv tables (diffview.h).  One layout for term and
 * md (status changes first, because they matter most; cells of one side;
 * prefill; the decode matrix of changes; the significant changes; why some
 * figures were not judged), drawn as aligned columns or markdown pipes. */
#include "diffview/diffview_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "text/render_impl.h"
#include "tokentrace/units.h"


void tt_diff_cell_id(const struct tt_diff_cell *c, char *buf, size_t len)
{
	if (c->phase == TT_PHASE_PREFILL)
		snprintf(buf, len, "prefill-%lld", (long long)c->context);
	else
		snprintf(buf, len, "decode-%lldx%d", (long long)c->context, c->concurrency);
}

/* "8K x 16", "8K" for prefill: the cell as the tables show it. */
static void cell_label(const struct tt_diff_cell *c, char *buf, size_t len)
{
	char ctx[32];

	tt_format_tokens(c->context, ctx, sizeof ctx);
	if (c->phase == TT_PHASE_PREFILL)
		snprintf(buf, len, "prefill %s", ctx);
	else
		snprintf(buf, len, "%s x %d", ctx, c->concurrency);
}

static void fmt_value(enum tt_diff_figure f, double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "%s", TT_DASH);
	else if (tt_diff_figure_higher_better(f))
		tt_fmt_rate(v, buf, len);
	else if (v < 10)
		tt__snprintf_c(buf, len, "%.2f ms", v);
	else
		tt_fmt_ms(v, buf, len);
}

static void fmt_pct(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "%s", TT_DASH);
	else
		tt__snprintf_c(buf, len, "%+.1f%%", v);
}

static void fmt_ci(const struct tt_diff_value *v, char *buf, size_t len)
{
	if (!isfinite(v->ci_lo_pct) || !isfinite(v->ci_hi_pct))
		snprintf(buf, len, "%s", TT_DASH);
	else
		tt__snprintf_c(buf, len, "%+.1f%% .. %+.1f%%", v->ci_lo_pct, v->ci_hi_pct);
}

/* A matrix entry: the change and, when judged other than "same", the verdict. */
static void fmt_entry(const struct tt_diff_value *v, char *buf, size_t len)
{
	char pct[32];

	fmt_pct(v->change_pct, pct, sizeof pct);
	if (!isfinite(v->change_pct))
		snprintf(buf, len, "%s", TT_DASH);
	else if (v->verdict == TT_VERDICT_FASTER || v->verdict == TT_VERDICT_SLOWER ||
		 v->verdict == TT_VERDICT_BEYOND_TOL)
		snprintf(buf, len, "%s %s", pct, tt_verdict_name(v->verdict));
	else if (v->verdict == TT_VERDICT_UNJUDGED)
		snprintf(buf, len, "(%s)", pct);
	else
		snprintf(buf, len, "%s", pct);
}

static int verdict_color(enum tt_verdict v)
{
	return v == TT_VERDICT_SLOWER ? TT__TONE_BAD : v == TT_VERDICT_FASTER ? TT__TONE_GOOD :
	       v == TT_VERDICT_BEYOND_TOL ? TT__TONE_WARN : TT__TONE_NONE;
}

void tt__diff_verdict_text(const struct tt_diff_value *v, char *buf, size_t len)
{
	if ((v->basis_base == TT_BASIS_SAMPLES && v->basis_cand == TT_BASIS_SAMPLES) ||
	    v->basis_base == TT_BASIS_NONE || v->basis_cand == TT_BASIS_NONE)
		snprintf(buf, len, "%s", tt_verdict_name(v->verdict));
	else
		snprintf(buf, len, "%s [%s/%s]", tt_verdict_name(v->verdict),
			 tt_diff_basis_key(v->basis_base), tt_diff_basis_key(v->basis_cand));
}

static void tail_name(const struct tt_diff *d, enum tt_diff_figure f, char *buf, size_t len)
{
	char q[16];

	if (f != TT_DIFF_TTFT_TAIL && f != TT_DIFF_TBT_TAIL) {
		snprintf(buf, len, "%s", tt_diff_figure_name(f));
		return;
	}
	tt__render_qkey(d->opts.tail, q, sizeof q);
	snprintf(buf, len, "%s %s", f == TT_DIFF_TTFT_TAIL ? "TTFT" : "TBT", q);
}

/* ---- tables: the one model (text/table.h), drawn as md pipes or aligned
 * term columns with dashes under the header -------------------------------- */

static int t_row(struct tt__table *t)
{
	return tt__table_add_row(t) == (size_t)-1 ? -1 : 0;
}

static void t_set(struct tt__table *t, size_t col, const char *s, int tone)
{
	tt__table_set(t, t->nrows - 1, col, s, tone);
}

static void t_free(struct tt__table *t)
{
	tt__table_free(t);
}

static void t_draw(const struct tt__table *t, int md, int color, struct tt_buf *out)
{
	if (md)
		tt__table_md(t, 0, out);
	else
		tt__table_term(t, &tt__term_plain, 0, color, out, NULL);
}

static int t_begin(struct tt__table *t, size_t ncols, const char *const *head, const int *right)
{
	if (tt__table_init(t, ncols))
		return -1;
	for (size_t k = 0; k < ncols; k++) {
		t_set(t, k, head[k], TT__TONE_NONE);
		t->align[k] = right && right[k] ? TT__ALIGN_RIGHT : TT__ALIGN_LEFT;
	}
	return 0;
}

static void heading(struct tt_buf *out, int md, const char *text)
{
	if (md)
		tt_buf_printf(out, "## %s\n\n", text);
	else
		tt_buf_printf(out, "%s\n\n", text);
}

/* ---- the facts of the runs -------------------------------------------- */

static void side_facts(struct tt_buf *out, int md, const char *name, const struct tt_diff_side *s)
{
	size_t n = tt_diff_side_runs(s);

	for (size_t i = 0; i < n; i++) {
		const struct tt_report *r = tt_diff_side_report(s, i);
		const struct tt_manifest *m = &r->manifest;
		char label[64];
		if (i)
			snprintf(label, sizeof label, "%s run %zu", name, i + 1);
		else
			snprintf(label, sizeof label, "%s", name);
		tt_buf_printf(out, "%s%s%s: %s (%s %s, %s)\n", md ? "- **" : "", label,
			      md ? "**" : "", r->source,
			      m->engine ? m->engine : "unknown engine",
			      m->engine_version ? m->engine_version : "",
			      m->model ? m->model : "unknown model");
	}
}

/* The run-to-run allowance as words: "2 %" when every figure has the same,
 * else "1.5 % to 4 %"; "" when none is set. */
static void allowance_text(const struct tt_diff *d, char *buf, size_t len)
{
	double lo = INFINITY, hi = 0;

	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		double a = d->opts.run_allowance[f];
		if (a > 0 && a < lo)
			lo = a;
		if (a > hi)
			hi = a;
	}
	if (!(hi > 0))
		buf[0] = '\0';
	else if (lo == hi)
		tt__snprintf_c(buf, len, "%g %%", hi);
	else
		tt__snprintf_c(buf, len, "%g %% to %g %%", lo, hi);
}

/* What the verdicts can say, by runs per side (docs/diff.md "Runs, the
 * unit of evidence"). */
static void runs_text(const struct tt_diff *d, char *line, size_t len)
{
	size_t nb = tt_diff_side_runs(d->base), nc = tt_diff_side_runs(d->cand);
	char allow[64];

	allowance_text(d, allow, sizeof allow);
	if (nb > 1 && nc > 1) {
		tt__snprintf_c(line, len,
			       "Runs per side %zu and %zu: each interval comes from a hierarchical "
			       "resampling, runs and then time slices within runs, so it holds the "
			       "run-to-run spread measured between the replicates.  ", nb, nc);
		return;
	}
	if (nb == 1 && nc == 1)
		tt__snprintf_c(line, len,
			       "One run per side: the verdicts cover the noise within each run only "
			       "and cannot tell a version change from run-to-run drift.  ");
	else
		tt__snprintf_c(line, len,
			       "The %s has one run: its own run-to-run spread is not measured.  ",
			       nb == 1 ? "base" : "candidate");
	{
		size_t n = strlen(line);
		if (d->n_allowance)
			tt__snprintf_c(line + n, len - n,
				       "A run-to-run allowance (%s by figure, measured on repeated "
				       "captures: docs/diff.md \"One run per side\") was added to "
				       "%s in %zu comparisons.  ",
				       allow, nb == 1 && nc == 1 ? "each side" : "that side",
				       d->n_allowance);
		else
			tt__snprintf_c(line + n, len - n,
				       "No run-to-run allowance was applied.  ");
		n = strlen(line);
		tt__snprintf_c(line + n, len - n,
			       "For a release decision measure replicates (tokentrace-capture "
			       "--repeat 3) and diff them.  ");
	}
}

void tt__diff_method_text(const struct tt_diff *d, char *line, size_t len)
{
	size_t k;

	runs_text(d, line, len);
	k = strlen(line);
	tt__snprintf_c(line + k, len - k,
		       "Method: bootstrap (%u replicates; decode windows in %u time slices), "
		       "runs per side %zu and %zu; %zu comparisons held together to a %g%% "
		       "false-positive rate (Bonferroni: each a t test at %.2g)%s.  "
		       "See docs/diff.md.",
		       d->opts.replicates, d->opts.slices, tt_diff_side_runs(d->base),
		       tt_diff_side_runs(d->cand), d->n_tests, d->opts.alpha * 100, d->level,
		       d->opts.min_change > 0 ? "; smaller changes than the minimum count as none" : "");
	if (d->n_point) {
		size_t n = strlen(line);
		tt__snprintf_c(line + n, len - n,
			       "  %zu comparisons have a single reported figure on one side (no "
			       "samples): its run-to-run variance cannot be known, their intervals "
			       "hold the other side's sampling spread and the printed precision "
			       "only.", d->n_point);
	}
	if (d->opts.tolerance > 0) {
		size_t n = strlen(line);
		tt__snprintf_c(line + n, len - n,
			       "  Tolerance for two reported figures: %g%% (no significance "
			       "claimed).", d->opts.tolerance);
	}
}

static void method_line(const struct tt_diff *d, struct tt_buf *out)
{
	char line[2400];

	tt__diff_method_text(d, line, sizeof line);
	tt_buf_printf(out, "%s\n\n", line);
}

void tt_diff_summary(const struct tt_diff *d, const struct tt_diff_gate_opts *gate, char *buf,
		     size_t len)
{
	char g[320] = "";

	if (gate && gate->on) {
		size_t n = tt_diff_gate(d, gate->figure, gate->threshold_pct);
		tt__snprintf_c(g, sizeof g, "; gate %s slower by > %g%%: %s (%zu cell%s)",
			       tt_diff_figure_key(gate->figure), gate->threshold_pct,
			       n ? "FAIL" : "pass", n, n == 1 ? "" : "s");
	}
	if (gate && gate->status_change) {
		size_t n = tt_diff_status_gate(d), k = strlen(g);
		snprintf(g + k, sizeof g - k, "; gate Valid to queued or over capacity: %s (%zu cell%s)",
			 n ? "FAIL" : "pass", n, n == 1 ? "" : "s");
	}
	snprintf(buf, len,
		 "tokentrace diff: %zu slower, %zu faster, %zu no significant change, %zu not judged; "
		 "%zu status change%s; %zu cell%s only in base, %zu only in candidate%s",
		 d->n_slower, d->n_faster, d->n_same, d->n_unjudged, d->n_status_changed,
		 d->n_status_changed == 1 ? "" : "s", d->n_base_only, d->n_base_only == 1 ? "" : "s",
		 d->n_cand_only, g);
	if (d->n_within_tol || d->n_beyond_tol || d->opts.tolerance > 0) {
		size_t n = strlen(buf);
		tt__snprintf_c(buf + n, len - n, "; %zu within, %zu beyond the tolerance of %g%%",
			       d->n_within_tol, d->n_beyond_tol, d->opts.tolerance);
	}
}

/* ---- term and md ---------------------------------------------------------- */

static const enum tt_diff_figure decode_figs[] = {TT_DIFF_TOTAL, TT_DIFF_PER_REQUEST,
						  TT_DIFF_TTFT_P50, TT_DIFF_TTFT_TAIL,
						  TT_DIFF_TBT_P50, TT_DIFF_TBT_TAIL};
#define N_DECODE (sizeof decode_figs / sizeof *decode_figs)

const char *tt__diff_status_text(const struct tt_diff_cell *c, int cand, int keys, char *buf,
				 size_t len)
{
	const unsigned short *runs = cand ? c->cand_runs : c->base_runs;
	size_t at;
	int first = 1;

	if (!(cand ? c->cand_mixed : c->base_mixed)) {
		enum tt_status st = cand ? c->cand_status : c->base_status;
		snprintf(buf, len, "%s", keys ? tt_status_key(st) : tt_status_name(st));
		return buf;
	}
	snprintf(buf, len, "%s", keys ? "mixed:" : "Mixed: ");
	for (int k = 0; k < TT_STATUS_COUNT_; k++) {
		if (!runs[k])
			continue;
		at = strlen(buf);
		if (keys)
			snprintf(buf + at, len - at, "%s%s", first ? "" : "|",
				 tt_status_key((enum tt_status)k));
		else
			snprintf(buf + at, len - at, "%s%u %s", first ? "" : ", ", runs[k],
				 tt_status_name((enum tt_status)k));
		first = 0;
	}
	return buf;
}

static int render_tables(const struct tt_diff *d, int md, int color,
			 const struct tt_diff_gate_opts *gate, struct tt_buf *out)
{
	struct tt__table t;
	char a[96], b[96], c[256], st[520], sb[256], sc[256], line[600];
	int any;

	tt_buf_puts(out, md ? "# tokentrace diff\n\n" : "tokentrace diff\n\n");
	side_facts(out, md, "Base", d->base);
	side_facts(out, md, "Candidate", d->cand);
	tt_buf_puts(out, "\n");
	method_line(d, out);
	tt_diff_summary(d, gate, line, sizeof line);
	tt_buf_printf(out, "%s\n\n", line);

	if (d->n_status_changed) {
		static const char *const h[] = {"Cell", "Base status", "Candidate status"};
		heading(out, md, "Status changes");
		if (t_begin(&t, 3, h, NULL))
			return -1;
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			if (!dc->status_changed)
				continue;
			if (t_row(&t))
				goto oom;
			cell_label(dc, a, sizeof a);
			t_set(&t, 0, a, TT__TONE_NONE);
			t_set(&t, 1, tt__diff_status_text(dc, 0, 0, b, sizeof b), TT__TONE_NONE);
			t_set(&t, 2, tt__diff_status_text(dc, 1, 0, c, sizeof c), TT__TONE_WARN);
		}
		t_draw(&t, md, color, out);
		t_free(&t);
	}
	if (d->n_base_only || d->n_cand_only) {
		static const char *const h[] = {"Cell", "Only in", "Status"};
		heading(out, md, "Cells in one side only");
		if (t_begin(&t, 3, h, NULL))
			return -1;
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			int base = dc->presence == TT_DIFF_BASE_ONLY;
			if (dc->presence == TT_DIFF_BOTH)
				continue;
			if (t_row(&t))
				goto oom;
			cell_label(dc, a, sizeof a);
			t_set(&t, 0, a, TT__TONE_NONE);
			t_set(&t, 1, base ? "base" : "candidate", TT__TONE_NONE);
			t_set(&t, 2,
			      tt__diff_status_text(dc, !base, 0, b, sizeof b),
			      TT__TONE_NONE);
		}
		t_draw(&t, md, color, out);
		t_free(&t);
	}
	/* Prefill rows: one figure each. */
	any = 0;
	for (size_t i = 0; i < d->n_cells; i++)
		any |= d->cells[i].phase == TT_PHASE_PREFILL && d->cells[i].presence == TT_DIFF_BOTH;
	if (any) {
		static const char *const h[] = {"Context", "Base prompt tok/s", "Candidate",
						"Change", "Interval", "Verdict"};
		static const int right[] = {0, 1, 1, 1, 1, 0};
		heading(out, md, "Prefill");
		if (t_begin(&t, 6, h, right))
			return -1;
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			const struct tt_diff_value *v = &dc->v[TT_DIFF_PREFILL];
			if (dc->phase != TT_PHASE_PREFILL || dc->presence != TT_DIFF_BOTH)
				continue;
			if (t_row(&t))
				goto oom;
			tt_format_tokens(dc->context, a, sizeof a);
			t_set(&t, 0, a, TT__TONE_NONE);
			fmt_value(TT_DIFF_PREFILL, v->base, b, sizeof b);
			t_set(&t, 1, b, TT__TONE_NONE);
			fmt_value(TT_DIFF_PREFILL, v->cand, b, sizeof b);
			t_set(&t, 2, b, TT__TONE_NONE);
			fmt_pct(v->change_pct, b, sizeof b);
			t_set(&t, 3, b, TT__TONE_NONE);
			fmt_ci(v, b, sizeof b);
			t_set(&t, 4, b, TT__TONE_NONE);
			t_set(&t, 5, tt_verdict_name(v->verdict), verdict_color(v->verdict));
		}
		t_draw(&t, md, color, out);
		t_free(&t);
	}
	/* Decode: the matrix of changes. */
	any = 0;
	for (size_t i = 0; i < d->n_cells; i++)
		any |= d->cells[i].phase == TT_PHASE_DECODE && d->cells[i].presence == TT_DIFF_BOTH;
	if (any) {
		const char *h[2 + N_DECODE];
		char names[N_DECODE][32];
		int right[2 + N_DECODE] = {0};
		h[0] = "Cell";
		h[1] = "Status";
		for (size_t k = 0; k < N_DECODE; k++) {
			tail_name(d, decode_figs[k], names[k], sizeof names[k]);
			h[2 + k] = names[k];
			right[2 + k] = 1;
		}
		heading(out, md, "Decode: change of each figure (candidate vs base)");
		if (t_begin(&t, 2 + N_DECODE, h, right))
			return -1;
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			if (dc->phase != TT_PHASE_DECODE || dc->presence != TT_DIFF_BOTH)
				continue;
			if (t_row(&t))
				goto oom;
			cell_label(dc, a, sizeof a);
			t_set(&t, 0, a, TT__TONE_NONE);
			if (dc->status_changed)
				snprintf(st, sizeof st, "%s -> %s",
					 tt__diff_status_text(dc, 0, 0, sb, sizeof sb),
					 tt__diff_status_text(dc, 1, 0, sc, sizeof sc));
			else
				tt__diff_status_text(dc, 0, 0, st, sizeof st);
			t_set(&t, 1, st, dc->status_changed ? TT__TONE_WARN : TT__TONE_NONE);
			for (size_t k = 0; k < N_DECODE; k++) {
				const struct tt_diff_value *v = &dc->v[decode_figs[k]];
				fmt_entry(v, b, sizeof b);
				t_set(&t, 2 + k, b, verdict_color(v->verdict));
			}
		}
		t_draw(&t, md, color, out);
		t_free(&t);
		tt_buf_puts(out, "A change in parentheses was not judged (Notes say why); one "
				 "without a word is no significant change.\n\n");
	}
	/* Every figure judged faster or slower (md: every figure), with values. */
	{
		static const char *const h[] = {"Cell", "Figure", "Base", "Candidate", "Change",
						"Interval", "Verdict"};
		static const int right[] = {0, 0, 1, 1, 1, 1, 0};
		size_t rows = 0, compared = 0;
		heading(out, md, md ? "Every figure" : "Changes found");
		if (t_begin(&t, 7, h, right))
			return -1;
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
				const struct tt_diff_value *v = &dc->v[f];
				if (!v->applies || dc->presence != TT_DIFF_BOTH)
					continue;
				compared++;
				if (!md && v->verdict != TT_VERDICT_FASTER &&
				    v->verdict != TT_VERDICT_SLOWER && v->verdict != TT_VERDICT_BEYOND_TOL)
					continue;
				if (t_row(&t))
					goto oom;
				rows++;
				cell_label(dc, a, sizeof a);
				t_set(&t, 0, a, TT__TONE_NONE);
				tail_name(d, (enum tt_diff_figure)f, b, sizeof b);
				t_set(&t, 1, b, TT__TONE_NONE);
				fmt_value((enum tt_diff_figure)f, v->base, b, sizeof b);
				t_set(&t, 2, b, TT__TONE_NONE);
				fmt_value((enum tt_diff_figure)f, v->cand, b, sizeof b);
				t_set(&t, 3, b, TT__TONE_NONE);
				fmt_pct(v->change_pct, b, sizeof b);
				t_set(&t, 4, b, TT__TONE_NONE);
				fmt_ci(v, b, sizeof b);
				t_set(&t, 5, b, TT__TONE_NONE);
				tt__diff_verdict_text(v, c, sizeof c);
				t_set(&t, 6, c, verdict_color(v->verdict));
			}
		}
		if (rows)
			t_draw(&t, md, color, out);
		else if (!compared)
			/* issue 25.5: 0 comparisons are not "no change" */
			tt_buf_puts(out, "Nothing compared: no figure of a cell that both sides have "
					 "(cells match by phase, context and concurrency).\n\n");
		else
			tt_buf_puts(out, "No significant change.\n\n");
		t_free(&t);
	}
	/* Why figures were not judged: each reason once, with a count. */
	{
		const char *seen[64];
		size_t count[64], n = 0;
		for (size_t i = 0; i < d->n_cells; i++)
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
				const struct tt_diff_value *v = &d->cells[i].v[f];
				size_t k;
				if (!v->applies || !v->note[0] || d->cells[i].presence != TT_DIFF_BOTH)
					continue;
				for (k = 0; k < n && strcmp(seen[k], v->note); k++)
					;
				if (k == n && n < 64) {
					seen[n] = v->note;
					count[n++] = 0;
				}
				if (k < 64)
					count[k]++;
			}
		if (n) {
			heading(out, md, "Notes");
			for (size_t k = 0; k < n; k++)
				tt_buf_printf(out, "- %s (%zu figure%s)\n", seen[k], count[k],
					      count[k] == 1 ? "" : "s");
			tt_buf_puts(out, "\n");
		}
	}
	return 0;
oom:
	t_free(&t);
	return -1;
}

/* ---- csv ------------------------------------------------------------------ */

static void csv_num(struct tt_buf *out, double v)
{
	char n[40];
	tt__fmt_exact(v, n, sizeof n);
	tt_buf_printf(out, ",%s", n);
}

static const char *const presence_keys[] = {"both", "base", "candidate"};

static void render_csv(const struct tt_diff *d, struct tt_buf *out)
{
	tt_buf_puts(out, "cell,phase,context,concurrency,presence,base_status,candidate_status,"
			 "status_changed,figure,base,candidate,ratio,change_pct,ci_lo_pct,ci_hi_pct,"
			 "z,verdict,note\n");
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		char id[64], sb[256], sc[256];

		tt_diff_cell_id(dc, id, sizeof id);
		tt__diff_status_text(dc, 0, 1, sb, sizeof sb);
		tt__diff_status_text(dc, 1, 1, sc, sizeof sc);
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *v = &dc->v[f];
			if (!v->applies)
				continue;
			tt_buf_printf(out, "%s,%s,%lld,%d,%s,%s,%s,%d,%s", id,
				      dc->phase == TT_PHASE_PREFILL ? "prefill" : "decode",
				      (long long)dc->context, dc->concurrency,
				      presence_keys[dc->presence],
				      dc->presence != TT_DIFF_CAND_ONLY ? sb : "",
				      dc->presence != TT_DIFF_BASE_ONLY ? sc : "",
				      dc->status_changed, tt_diff_figure_key((enum tt_diff_figure)f));
			csv_num(out, v->base);
			csv_num(out, v->cand);
			csv_num(out, v->ratio);
			csv_num(out, v->change_pct);
			csv_num(out, v->ci_lo_pct);
			csv_num(out, v->ci_hi_pct);
			csv_num(out, v->z);
			tt_buf_printf(out, ",%s", tt_verdict_key(v->verdict));
			tt__csv_field(out, v->note, 0);
			tt_buf_puts(out, "\n");
		}
	}
}

enum tt_code tt_diff_render(const struct tt_diff *d, enum tt_format f,
			    const struct tt_render_opts *opts, const struct tt_diff_gate_opts *gate,
			    struct tt_buf *out, struct tt_error *err)
{
	int bad = 0;

	switch (f) {
	case TT_FORMAT_TERM:
	case TT_FORMAT_MD:
		bad = render_tables(d, f == TT_FORMAT_MD, f == TT_FORMAT_TERM && opts && opts->color,
				    gate, out);
		if (!bad)
			bad = tt__diff_render_rate(d, f == TT_FORMAT_MD, out);
		break;
	case TT_FORMAT_CSV:
		render_csv(d, out);
		break;
	case TT_FORMAT_JSON:
		return tt__diff_render_json(d, gate, out, err);
	default:
		return tt_error_set(err, TT_EARG, "a diff renders as term, md, csv or json here; "
						  "html and pdf are written by tt_diff_write");
	}
	if (bad || out->failed)
		return tt_error_set(err, TT_ENOMEM, "out of memory while rendering the diff");
	return TT_OK;
}
