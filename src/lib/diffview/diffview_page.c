/* A diff as one HTML page and as a PDF document: the runs' facts side by
 * side with their differences highlighted, the summary and method, the
 * status changes, the cells of one side, every chart, every figure. */
#include "diffview/diffview_chart.h"
#include "diffview/diffview_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "report/html.h"
#include "tokentrace/units.h"

#define A4_W 1123.0 /* A4 landscape in layout units (1/96 in) */
#define A4_H 794.0

/* ---- the facts of the two sides -------------------------------------------- */

#define MAX_FACTS 64

struct dfact {
	char key[64];
	char base[256], cand[256];
};

static void fact_of(const struct tt_manifest *m, const char *key, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!strcmp(key, "Engine"))
		snprintf(buf, len, "%s", m->engine ? m->engine : "");
	else if (!strcmp(key, "Version"))
		snprintf(buf, len, "%s", m->engine_version ? m->engine_version : "");
	else if (!strcmp(key, "Model"))
		snprintf(buf, len, "%s", m->model ? m->model : "");
	else if (!strcmp(key, "Served model"))
		snprintf(buf, len, "%s", m->served_model ? m->served_model : "");
	else if (!strcmp(key, "Started"))
		snprintf(buf, len, "%s", m->created ? m->created : "");
	else if (!strcmp(key, "Recorded by"))
		snprintf(buf, len, "%s %s", m->tool_name ? m->tool_name : "",
			 m->tool_version ? m->tool_version : "");
	else if (!strcmp(key, "Endpoint"))
		snprintf(buf, len, "%s", m->endpoint ? m->endpoint : "");
	else if (!strcmp(key, "Window"))
		tt__snprintf_c(buf, len, "%g s", m->duration_s);
	else if (!strcmp(key, "Max output"))
		snprintf(buf, len, "%lld tokens", (long long)m->max_tokens);
	else if (!strcmp(key, "KV capacity"))
		snprintf(buf, len, m->kv_capacity_tokens >= 0 ? "%lld tokens" : "unknown",
			 (long long)m->kv_capacity_tokens);
	else if (!strcmp(key, "Cells"))
		snprintf(buf, len, "%zu", m->n_cells);
	else {
		const char *v = tt_manifest_note(m, key);
		snprintf(buf, len, "%s", v ? v : "");
	}
}

/* The facts of each side's first run, the manifest's notes included. */
static size_t collect_facts(const struct tt_diff *d, struct dfact *f)
{
	static const char *const fixed[] = {"Engine",      "Version",   "Model", "Served model",
					    "Started",     "Recorded by", "Endpoint", "Window",
					    "Max output",  "KV capacity", "Cells"};
	const struct tt_manifest *mb = &tt_diff_side_report(d->base, 0)->manifest;
	const struct tt_manifest *mc = &tt_diff_side_report(d->cand, 0)->manifest;
	size_t n = 0;

	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		snprintf(f[n].key, sizeof f[n].key, "%s", fixed[i]);
		fact_of(mb, fixed[i], f[n].base, sizeof f[n].base);
		fact_of(mc, fixed[i], f[n].cand, sizeof f[n].cand);
		n++;
	}
	for (int side = 0; side < 2; side++) {
		const struct tt_manifest *m = side ? mc : mb;
		for (size_t k = 0; k < m->n_notes && n < MAX_FACTS; k++) {
			size_t j;
			for (j = 0; j < n && strcmp(f[j].key, m->notes[k].key); j++)
				;
			if (j < n)
				continue;
			snprintf(f[n].key, sizeof f[n].key, "%s", m->notes[k].key);
			fact_of(mb, f[n].key, f[n].base, sizeof f[n].base);
			fact_of(mc, f[n].key, f[n].cand, sizeof f[n].cand);
			n++;
		}
	}
	return n;
}

static void cell_label(const struct tt_diff_cell *c, char *buf, size_t len)
{
	char ctx[32];

	tt_format_tokens(c->context, ctx, sizeof ctx);
	if (c->phase == TT_PHASE_PREFILL)
		snprintf(buf, len, "prefill %s", ctx);
	else
		snprintf(buf, len, "%s x %d", ctx, c->concurrency);
}

static void figure_label(const struct tt_diff *d, int f, char *buf, size_t len)
{
	if (f == TT_DIFF_TTFT_TAIL || f == TT_DIFF_TBT_TAIL)
		tt__snprintf_c(buf, len, "%s p%g", f == TT_DIFF_TTFT_TAIL ? "TTFT" : "TBT",
			       d->opts.tail);
	else
		snprintf(buf, len, "%s", tt_diff_figure_name((enum tt_diff_figure)f));
}

static void value_text(int f, double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "\xe2\x80\x94");
	else if (tt_diff_figure_higher_better((enum tt_diff_figure)f))
		tt_fmt_rate(v, buf, len);
	else
		tt__snprintf_c(buf, len, v < 10 ? "%.2f ms" : "%.0f ms", v);
}

static void change_text(const struct tt_diff_value *v, char *chg, size_t cl, char *ci, size_t il)
{
	if (isfinite(v->change_pct))
		tt__snprintf_c(chg, cl, "%+.1f%%", v->change_pct);
	else
		snprintf(chg, cl, "\xe2\x80\x94");
	if (isfinite(v->ci_lo_pct))
		tt__snprintf_c(ci, il, "%+.1f%% .. %+.1f%%", v->ci_lo_pct, v->ci_hi_pct);
	else
		snprintf(ci, il, "\xe2\x80\x94");
}

/* ---- HTML ------------------------------------------------------------------ */


static const char css[] =
	"body{font:14px/1.45 'DejaVu Sans',sans-serif;margin:2em auto;max-width:1100px;"
	"color:#222;padding:0 1em}"
	"table{border-collapse:collapse;margin:.8em 0}td,th{border:1px solid #ccc;"
	"padding:3px 8px;text-align:right;vertical-align:top}"
	"td:first-child,th:first-child,td.l,th.l{text-align:left}"
	"tr.differs td{background:#fff1b8}tr.differs td:first-child{font-weight:bold}"
	"td.slower{background:#fbd0b0}td.faster{background:#d8cdea}"
	"td.same,td.unjudged{color:#888}td.status{background:#ffe08a}"
	".summary{font-weight:bold}.note{color:#666}figure{margin:1.2em 0}"
	"img{max-width:100%;height:auto;border:1px solid #eee}";

/* Open-loop curves side by side (docs/diff.md "Open-loop curves"): per
 * context a table of every rate either side measured, then each side's
 * capacity and SLO limit; nothing when neither side has open-loop cells.
 * -1 out of memory. */
static const char *const rate_head[TT__DIFF_RATE_COLS] = {
	"Rate",      "Ended/s base", "candidate",   "TTFT p50 due base", "candidate",
	"TTFT p99 due base", "candidate", "Status base", "candidate"};

static int rate_html(const struct tt_diff *d, struct tt_buf *out)
{
	int64_t ctxs[64];
	size_t nctx = tt__diff_rate_contexts(d, ctxs, 64);
	char(*rows)[TT__DIFF_RATE_COLS][48];

	if (!nctx)
		return 0;
	rows = calloc(256, sizeof *rows);
	if (!rows)
		return -1;
	tt_buf_puts(out, "<h2 id=\"open-loop\">Open-loop curves</h2>\n<p class=\"note\">Each side's "
			 "figures at every rate either side measured: requests per second ended "
			 "in the window, TTFT from the due time, the status (a dash: that side "
			 "did not measure the rate); then each side's capacity and SLO limit. "
			 "These are the sides' figures, not tested changes.</p>\n");
	for (size_t i = 0; i < nctx; i++) {
		size_t nr = tt__diff_rate_rows(d, ctxs[i], rows, 256);
		char ctx[48], cap[2][48], lim[2][64];

		tt_format_tokens(ctxs[i], ctx, sizeof ctx);
		tt_buf_puts(out, "<h3>Context ");
		tt__html_esc(out, ctx);
		tt_buf_puts(out, "</h3>\n<table class=\"open-loop\"><tr>");
		for (size_t j = 0; j < TT__DIFF_RATE_COLS; j++)
			tt_buf_printf(out, "<th%s>%s</th>", j >= 7 ? " class=\"l\"" : "",
				      rate_head[j]);
		tt_buf_puts(out, "</tr>\n");
		for (size_t k = 0; k < nr; k++) {
			/* a status that differs between the sides is highlighted */
			int differs = strcmp(rows[k][7], rows[k][8]) != 0;
			tt_buf_puts(out, "<tr>");
			for (size_t j = 0; j < TT__DIFF_RATE_COLS; j++) {
				tt_buf_puts(out, j == 8 && differs ? "<td class=\"l status\">"
						 : j >= 7	  ? "<td class=\"l\">"
								  : "<td>");
				tt__html_esc(out, rows[k][j]);
				tt_buf_puts(out, "</td>");
			}
			tt_buf_puts(out, "</tr>\n");
		}
		tt__diff_rate_summary(d, ctxs[i], cap, lim);
		tt_buf_puts(out, "</table>\n<p>Capacity (requests/s ended, highest): base ");
		tt__html_esc(out, cap[0]);
		tt_buf_puts(out, ", candidate ");
		tt__html_esc(out, cap[1]);
		tt_buf_puts(out, ". SLO limit: base ");
		tt__html_esc(out, lim[0]);
		tt_buf_puts(out, ", candidate ");
		tt__html_esc(out, lim[1]);
		tt_buf_puts(out, ".</p>\n");
	}
	free(rows);
	return out->failed ? -1 : 0;
}

enum tt_code tt_diff_render_html(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				 const char *cell, struct tt_buf *out, struct tt_error *err)
{
	struct dfact *facts = calloc(MAX_FACTS, sizeof *facts);
	size_t nf, nb = tt_diff_side_runs(d->base), nc = tt_diff_side_runs(d->cand);
	char line[2400], a[96], b[96], c[96], sb[256], sc[256];
	struct tt_buf img;
	enum tt_code rc = TT_OK;

	if (!facts)
		return tt_error_set(err, TT_ENOMEM, "out of memory writing the diff page");
	tt_buf_init(&img, 0);
	nf = collect_facts(d, facts);
	tt__html_head(out, "tokentrace diff", css, NULL, NULL);
	tt_buf_puts(out, "<h1>tokentrace diff</h1>\n<p class=\"summary\">");
	tt_diff_summary(d, gate, line, sizeof line);
	tt__html_esc(out, line);
	tt_buf_puts(out, "</p>\n<p>");
	tt__diff_method_text(d, line, sizeof line);
	tt__html_esc(out, line);
	tt_buf_puts(out, "</p>\n");

	/* The runs, side by side; a row that differs is highlighted. */
	tt_buf_puts(out, "<h2>Runs</h2>\n<table id=\"facts\"><tr><th>Fact</th><th class=\"l\">Base");
	if (nb > 1)
		tt_buf_printf(out, " (first of %zu runs)", nb);
	tt_buf_puts(out, "</th><th class=\"l\">Candidate");
	if (nc > 1)
		tt_buf_printf(out, " (first of %zu runs)", nc);
	tt_buf_puts(out, "</th></tr>\n");
	tt_buf_puts(out, "<tr><td>Source</td><td class=\"l\">");
	tt__html_esc(out, tt_diff_side_report(d->base, 0)->source);
	tt_buf_puts(out, "</td><td class=\"l\">");
	tt__html_esc(out, tt_diff_side_report(d->cand, 0)->source);
	tt_buf_puts(out, "</td></tr>\n");
	for (size_t i = 0; i < nf; i++) {
		int differs = strcmp(facts[i].base, facts[i].cand) != 0;
		tt_buf_printf(out, "<tr%s><td>", differs ? " class=\"differs\"" : "");
		tt__html_esc(out, facts[i].key);
		tt_buf_puts(out, "</td><td class=\"l\">");
		tt__html_esc(out, facts[i].base);
		tt_buf_puts(out, "</td><td class=\"l\">");
		tt__html_esc(out, facts[i].cand);
		tt_buf_puts(out, "</td></tr>\n");
	}
	tt_buf_puts(out, "</table>\n");

	if (d->n_status_changed) {
		tt_buf_puts(out, "<h2>Status changes</h2>\n<table id=\"status-changes\"><tr><th>Cell"
				 "</th><th class=\"l\">Base</th><th class=\"l\">Candidate</th></tr>\n");
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			if (!dc->status_changed)
				continue;
			cell_label(dc, a, sizeof a);
			tt_buf_printf(out, "<tr><td>%s</td><td class=\"l\">%s</td>"
					   "<td class=\"l status\">%s</td></tr>\n",
				      a, tt__diff_status_text(dc, 0, 0, sb, sizeof sb),
				      tt__diff_status_text(dc, 1, 0, sc, sizeof sc));
		}
		tt_buf_puts(out, "</table>\n");
	}
	if (d->n_base_only || d->n_cand_only) {
		tt_buf_puts(out, "<h2>Cells in one side only</h2>\n<table id=\"one-side\"><tr><th>"
				 "Cell</th><th class=\"l\">Only in</th><th class=\"l\">Status</th></tr>\n");
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			int base = dc->presence == TT_DIFF_BASE_ONLY;
			if (dc->presence == TT_DIFF_BOTH)
				continue;
			cell_label(dc, a, sizeof a);
			tt_buf_printf(out, "<tr><td>%s</td><td class=\"l\">%s</td><td class=\"l\">%s"
					   "</td></tr>\n",
				      a, base ? "base" : "candidate",
				      tt__diff_status_text(dc, !base, 0, sb, sizeof sb));
		}
		tt_buf_puts(out, "</table>\n");
	}

	tt_buf_puts(out, "<h2>Charts</h2>\n");
	for (int k = 0; k < TT_DIFF_CHART_KIND_COUNT_; k++) {
		struct tt_diff_chart_opts o;
		struct tt_error cerr;
		if (!tt__diff_chart_has_data(d, (enum tt_diff_chart_kind)k, cell))
			continue;
		tt_diff_chart_opts_init(&o);
		o.kind = (enum tt_diff_chart_kind)k;
		o.format = TT_CHART_SVG;
		o.cell = cell;
		if (gate && gate->on) /* the heatmap shows the figure the gate judges */
			o.figure = gate->figure;
		tt_buf_reset(&img);
		tt_error_clear(&cerr);
		if (tt_diff_chart_render(d, &o, &img, &cerr) != TT_OK) {
			if (cerr.kind == TT_ENOMEM || cerr.kind == TT_EARG) {
				rc = tt_error_set(err, cerr.kind, "%s", cerr.msg);
				goto cleanup;
			}
			tt_buf_printf(out, "<p class=\"note\">%s: not drawn: ",
				      tt__diff_chart_title(o.kind));
			tt__html_esc(out, cerr.msg);
			tt_buf_puts(out, "</p>\n");
			continue;
		}
		tt_buf_printf(out, "<figure id=\"chart-%s\"><img width=\"960\" height=\"600\" alt=\"",
			      tt_diff_chart_kind_name(o.kind));
		tt__html_esc(out, tt__diff_chart_title(o.kind));
		tt_buf_puts(out, "\" src=\"data:image/svg+xml;base64,");
		tt__html_base64(out, (const unsigned char *)img.data, img.len);
		tt_buf_puts(out, "\"><figcaption>");
		tt__html_esc(out, tt__diff_chart_about(o.kind));
		tt_buf_puts(out, "</figcaption></figure>\n");
	}

	if (rate_html(d, out)) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory writing the diff page");
		goto cleanup;
	}
	tt_buf_puts(out, "<h2>Every figure</h2>\n<table id=\"figures\"><tr><th>Cell</th>"
			 "<th class=\"l\">Figure</th><th>Base</th><th>Candidate</th><th>Change</th>"
			 "<th>Interval</th><th class=\"l\">Verdict</th><th class=\"l\">Note</th></tr>\n");
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *v = &dc->v[f];
			char fl[48], chg[32], ci[64], vt[64];
			if (!v->applies || dc->presence != TT_DIFF_BOTH)
				continue;
			tt__diff_verdict_text(v, vt, sizeof vt);
			cell_label(dc, a, sizeof a);
			figure_label(d, f, fl, sizeof fl);
			value_text(f, v->base, b, sizeof b);
			value_text(f, v->cand, c, sizeof c);
			change_text(v, chg, sizeof chg, ci, sizeof ci);
			tt_buf_printf(out, "<tr><td>%s</td><td class=\"l\">%s</td><td>%s</td><td>%s"
					   "</td><td>%s</td><td>%s</td><td class=\"l %s\">%s</td>"
					   "<td class=\"l note\">",
				      a, fl, b, c, chg, ci, tt_verdict_key(v->verdict), vt);
			tt__html_esc(out, v->note);
			tt_buf_puts(out, "</td></tr>\n");
		}
	}
	tt_buf_puts(out, "</table>\n<p class=\"note\">Figures: docs/metrics.md; change, interval "
			 "and verdict: docs/diff.md.</p>\n</body></html>\n");
cleanup:
	tt_buf_release(&img);
	free(facts);
	if (rc == TT_OK && out->failed)
		rc = tt_error_set(err, TT_ENOMEM, "out of memory writing the diff page");
	return rc;
}

/* ---- PDF --------------------------------------------------------------------- */

/* Rows of text down a page, a new page when one is full. */
struct pager {
	struct canvas *c;
	double y;
};

static void need(struct pager *p, double h)
{
	if (p->y + h > A4_H - 40) {
		tt__canvas_next_page(p->c);
		tt__cv_rect(p->c, 0, 0, A4_W, A4_H, (struct rgb){1, 1, 1});
		p->y = 40;
	}
}

static void heading(struct pager *p, const char *text)
{
	struct tstyle st = tt__tstyle_make(17, 1, tt__chart_ink, 0, 0);
	need(p, 60);
	tt__cv_text(p->c, 40, p->y, text, &st);
	p->y += 30;
}

/* One row of columns at x positions xs (n columns); highlight: a fill behind. */
static void row(struct pager *p, const char *const *cols, const double *xs, size_t n, int bold,
		const struct rgb *highlight)
{
	struct tstyle st = tt__tstyle_make(11, bold, tt__chart_ink, 0, 0);
	need(p, 18);
	if (highlight)
		tt__cv_rect(p->c, 36, p->y - 2, A4_W - 72, 17, *highlight);
	for (size_t i = 0; i < n; i++) {
		st.max_w = (i + 1 < n ? xs[i + 1] : A4_W - 40) - xs[i] - 8;
		tt__cv_text(p->c, xs[i], p->y, cols[i], &st);
	}
	p->y += 17;
}

/* The open-loop curves as rate_html shows them; -1 out of memory. */
static int rate_pdf(struct pager *pg, const struct tt_diff *d)
{
	static const double xs[TT__DIFF_RATE_COLS] = {40, 120, 220, 320, 450, 580, 710, 830, 960};
	static const char *const h[TT__DIFF_RATE_COLS] = {
		"Rate", "Ended/s base", "cand", "TTFT p50 due base", "cand", "TTFT p99 due base",
		"cand", "Status base", "cand"};
	const struct rgb yellow = RGB_HEX(0xFFF1B8);
	int64_t ctxs[64];
	size_t nctx = tt__diff_rate_contexts(d, ctxs, 64);
	char(*rows)[TT__DIFF_RATE_COLS][48];
	char line[400];

	if (!nctx)
		return 0;
	rows = calloc(256, sizeof *rows);
	if (!rows)
		return -1;
	pg->y += 16;
	heading(pg, "Open-loop curves (base / candidate)");
	for (size_t i = 0; i < nctx; i++) {
		size_t nr = tt__diff_rate_rows(d, ctxs[i], rows, 256);
		char ctx[48], cap[2][48], lim[2][64];
		const char *title[1] = {line};

		tt_format_tokens(ctxs[i], ctx, sizeof ctx);
		snprintf(line, sizeof line, "Context %s", ctx);
		row(pg, title, xs, 1, 1, NULL);
		row(pg, h, xs, TT__DIFF_RATE_COLS, 1, NULL);
		for (size_t k = 0; k < nr; k++) {
			const char *cols[TT__DIFF_RATE_COLS];
			for (size_t j = 0; j < TT__DIFF_RATE_COLS; j++)
				cols[j] = rows[k][j];
			row(pg, cols, xs, TT__DIFF_RATE_COLS, 0,
			    strcmp(rows[k][7], rows[k][8]) ? &yellow : NULL);
		}
		tt__diff_rate_summary(d, ctxs[i], cap, lim);
		snprintf(line, sizeof line,
			 "Capacity (requests/s ended, highest): %s / %s. SLO limit: %s / %s.", cap[0],
			 cap[1], lim[0], lim[1]);
		row(pg, title, xs, 1, 0, NULL);
		pg->y += 8;
	}
	free(rows);
	return 0;
}

enum tt_code tt_diff_render_pdf(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				const char *cell, struct tt_buf *out, struct tt_error *err)
{
	struct canvas c;
	struct pager pg;
	struct dfact *facts = calloc(MAX_FACTS, sizeof *facts);
	size_t nf;
	char line[2400];
	enum tt_code rc;
	const struct rgb yellow = RGB_HEX(0xFFF1B8), orange = RGB_HEX(0xFBD0B0),
			 purple = RGB_HEX(0xD8CDEA);
	struct tstyle body = tt__tstyle_make(12, 0, tt__chart_ink, 0, 0);

	if (!facts)
		return tt_error_set(err, TT_ENOMEM, "out of memory writing the diff document");
	rc = tt__canvas_open(&c, TT_CHART_PDF, A4_W, A4_H, 96, out, err);
	if (rc != TT_OK) {
		free(facts);
		return rc;
	}
	tt__canvas_set_date(&c, tt__chart_pdf_date(&tt_diff_side_report(d->cand, 0)->manifest));
	tt__canvas_set_title(&c, "tokentrace diff");
	tt__cv_rect(&c, 0, 0, A4_W, A4_H, (struct rgb){1, 1, 1});
	pg.c = &c;
	pg.y = 40;
	{
		struct tstyle t = tt__tstyle_make(24, 1, tt__chart_ink, 0, 0);
		tt__cv_text(&c, 40, pg.y, "tokentrace diff", &t);
		pg.y += 44;
	}
	tt_diff_summary(d, gate, line, sizeof line);
	body.bold = 1;
	pg.y += tt__cv_paragraph(&c, 40, pg.y, A4_W - 80, line, &body, 1) + 8;
	body.bold = 0;
	tt__diff_method_text(d, line, sizeof line);
	pg.y += tt__cv_paragraph(&c, 40, pg.y, A4_W - 80, line, &body, 1) + 16;

	heading(&pg, "Runs (differences highlighted)");
	{
		static const double xs[] = {40, 240, 680};
		const char *h[] = {"Fact", "Base", "Candidate"};
		const char *src[] = {"Source", tt_diff_side_report(d->base, 0)->source,
				     tt_diff_side_report(d->cand, 0)->source};
		row(&pg, h, xs, 3, 1, NULL);
		row(&pg, src, xs, 3, 0, NULL);
		nf = collect_facts(d, facts);
		for (size_t i = 0; i < nf; i++) {
			const char *cols[] = {facts[i].key, facts[i].base, facts[i].cand};
			row(&pg, cols, xs, 3, 0, strcmp(facts[i].base, facts[i].cand) ? &yellow : NULL);
		}
	}
	if (d->n_status_changed || d->n_base_only || d->n_cand_only) {
		static const double xs[] = {40, 240, 500};
		const char *h[] = {"Cell", "Base", "Candidate"};
		pg.y += 16;
		heading(&pg, "Status changes and cells of one side");
		row(&pg, h, xs, 3, 1, NULL);
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			char a[96], sb[256], sc[256];
			const char *cols[3];
			if (!dc->status_changed && dc->presence == TT_DIFF_BOTH)
				continue;
			cell_label(dc, a, sizeof a);
			cols[0] = a;
			cols[1] = dc->presence == TT_DIFF_CAND_ONLY ?
					  "(not in the base)" :
					  tt__diff_status_text(dc, 0, 0, sb, sizeof sb);
			cols[2] = dc->presence == TT_DIFF_BASE_ONLY ?
					  "(not in the candidate)" :
					  tt__diff_status_text(dc, 1, 0, sc, sizeof sc);
			row(&pg, cols, xs, 3, 0, dc->status_changed ? &yellow : NULL);
		}
	}
	if (rate_pdf(&pg, d)) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory writing the diff document");
		tt__canvas_release(&c);
		free(facts);
		return rc;
	}
	/* One chart per page. */
	for (int k = 0; k < TT_DIFF_CHART_KIND_COUNT_ && rc == TT_OK; k++) {
		struct tt_diff_chart_opts o;
		if (!tt__diff_chart_has_data(d, (enum tt_diff_chart_kind)k, cell))
			continue;
		tt_diff_chart_opts_init(&o);
		o.kind = (enum tt_diff_chart_kind)k;
		o.cell = cell;
		if (gate && gate->on)
			o.figure = gate->figure;
		tt__canvas_next_page(&c);
		rc = tt__diff_chart_draw(&c, 20, 40, A4_W - 40, A4_H - 80, d, &o, err);
	}
	if (rc == TT_OK) {
		static const double xs[] = {40, 170, 310, 430, 550, 650, 830};
		const char *h[] = {"Cell", "Figure", "Base", "Candidate", "Change", "Interval",
				   "Verdict"};
		size_t shown = 0;
		tt__canvas_next_page(&c);
		tt__cv_rect(&c, 0, 0, A4_W, A4_H, (struct rgb){1, 1, 1});
		pg.y = 40;
		heading(&pg, "Changes found (faster, slower, beyond tolerance)");
		row(&pg, h, xs, 7, 1, NULL);
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_cell *dc = &d->cells[i];
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
				const struct tt_diff_value *v = &dc->v[f];
				char a[96], fl[48], b[48], cc[48], chg[32], ci[64], vt[64];
				const char *cols[7];
				if (!v->applies || (v->verdict != TT_VERDICT_FASTER &&
						    v->verdict != TT_VERDICT_SLOWER &&
						    v->verdict != TT_VERDICT_BEYOND_TOL))
					continue;
				cell_label(dc, a, sizeof a);
				figure_label(d, f, fl, sizeof fl);
				value_text(f, v->base, b, sizeof b);
				value_text(f, v->cand, cc, sizeof cc);
				change_text(v, chg, sizeof chg, ci, sizeof ci);
				cols[0] = a;
				cols[1] = fl;
				cols[2] = b;
				cols[3] = cc;
				cols[4] = chg;
				cols[5] = ci;
				tt__diff_verdict_text(v, vt, sizeof vt);
				cols[6] = vt;
				row(&pg, cols, xs, 7, 0,
				    v->verdict == TT_VERDICT_SLOWER ? &orange : &purple);
				shown++;
			}
		}
		if (!shown)
			tt__cv_text(&c, 40, pg.y + 8, "No significant change.", &body);
		rc = tt__canvas_check(&c, "the diff document", err);
	}
	if (rc == TT_OK)
		rc = tt__canvas_finish(&c, err);
	tt__canvas_release(&c);
	free(facts);
	return rc;
}
