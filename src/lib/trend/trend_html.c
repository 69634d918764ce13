/* trend: the answer as one self-contained HTML page: the summary, the
 * change points by size, and per series that changed a chart of its values
 * across the runs with each level and change point marked and named (inline
 * SVG: no script, nothing fetched). */
#include "trend/trend_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "report/html.h"

/* Series charted at most: the page of a history with every series changed
 * stays readable; the table still lists every change point. */
#define MAX_CHARTS 200

static const char css[] =
	"body{font-family:sans-serif;margin:1.5em;max-width:70em}"
	"table{border-collapse:collapse;font-size:90%}"
	"td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:nowrap}"
	"td.n{text-align:right}.reg{color:#b00}.imp{color:#070}"
	"svg{display:block;margin:0.5em 0 1.5em 0}"
	"svg text{font-size:11px;font-family:sans-serif}";

/* Numbers with '.' whatever the locale, in the few styles of the page. */
enum style { S_COORD, S_VALUE, S_P, S_PCT };

static void num(struct tt_buf *b, enum style st, double v)
{
	char t[48];

	switch (st) {
	case S_COORD:
		tt__snprintf_c(t, sizeof t, "%.1f", v);
		break;
	case S_VALUE:
		tt__snprintf_c(t, sizeof t, "%.4g", v);
		break;
	case S_P:
		tt__snprintf_c(t, sizeof t, "%.3g", v);
		break;
	default:
		tt__snprintf_c(t, sizeof t, "%+.1f%%", v);
		break;
	}
	tt_buf_puts(b, t);
}

static void chart(const struct tt_trend_result *r, const struct tt_trend_series *se,
		  struct tt_buf *b)
{
	/* the plot is 10..190 high; below it the runs' numbers, then the
	 * change points' names (never over the values) */
	const double W = 720, H = 220, L = 70, R = 10, T = 10, B = 30;
	double lo = INFINITY, hi = -INFINITY, pad;
	size_t nx = r->n_runs > 1 ? r->n_runs - 1 : 1;

	for (size_t k = 0; k < se->n; k++) {
		lo = fmin(lo, se->value[k]);
		hi = fmax(hi, se->value[k]);
	}
	pad = (hi - lo) * 0.08;
	if (!(pad > 0))
		pad = fabs(hi) * 0.01 + 1e-9;
	lo -= pad;
	hi += pad;
#define X(i) (L + (W - L - R) * (double)(i) / (double)nx)
#define Y(v) (T + (H - T - B) * (hi - (v)) / (hi - lo))
	tt_buf_puts(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"250\" "
		       "role=\"img\"><rect x=\"70\" y=\"10\" width=\"640\" height=\"180\" "
		       "fill=\"none\" stroke=\"#999\"/>");
	/* y axis: the bounds; x axis: the first and last run */
	tt_buf_puts(b, "<text x=\"66\" y=\"20\" text-anchor=\"end\">");
	num(b, S_VALUE, hi);
	tt_buf_puts(b, "</text><text x=\"66\" y=\"190\" text-anchor=\"end\">");
	num(b, S_VALUE, lo);
	tt_buf_printf(b, "</text><text x=\"70\" y=\"205\">#1</text><text x=\"710\" y=\"205\" "
			 "text-anchor=\"end\">#%zu</text>", r->n_runs);
	/* the levels between change points, dashed */
	for (size_t c = 0; c <= se->n_changes; c++) {
		const struct tt_trend_change *ch = r->changes + se->first_change;
		size_t a = c ? ch[c - 1].point : 0;
		size_t z = c < se->n_changes ? ch[c].point : se->n;
		/* the level's median, as the change points measured it */
		double m = c < se->n_changes ? ch[c].before : ch[c - 1].after;
		if (!isfinite(m) || z == 0)
			continue;
		tt_buf_puts(b, "<line stroke=\"#555\" stroke-dasharray=\"4 3\" x1=\"");
		num(b, S_COORD, X(se->run[a]));
		tt_buf_puts(b, "\" x2=\"");
		num(b, S_COORD, X(se->run[z - 1]));
		tt_buf_puts(b, "\" y1=\"");
		num(b, S_COORD, Y(m));
		tt_buf_puts(b, "\" y2=\"");
		num(b, S_COORD, Y(m));
		tt_buf_puts(b, "\"/>");
	}
	/* the change points: a line at the first run of the new level */
	for (size_t c = 0; c < se->n_changes; c++) {
		const struct tt_trend_change *ch = &r->changes[se->first_change + c];
		const struct tt_trend_run *run = &r->runs[ch->run];
		double x = X(ch->run);
		tt_buf_printf(b, "<line stroke=\"%s\" x1=\"", ch->regression ? "#b00" : "#070");
		num(b, S_COORD, x);
		tt_buf_puts(b, "\" x2=\"");
		num(b, S_COORD, x);
		/* the label on the side with more room */
		tt_buf_printf(b, "\" y1=\"10\" y2=\"%d\"/><text x=\"", 208 + 12 * (int)(c % 3));
		num(b, S_COORD, x > W / 2 ? x - 3 : x + 3);
		tt_buf_printf(b, "\" y=\"%d\" fill=\"%s\"%s>#%zu ", 220 + 12 * (int)(c % 3),
			      ch->regression ? "#b00" : "#070",
			      x > W / 2 ? " text-anchor=\"end\"" : "", ch->run + 1);
		tt__html_esc(b, run->path ? run->path : "");
		if (run->engine_version) {
			tt_buf_puts(b, " (");
			tt__html_esc(b, run->engine_version);
			tt_buf_puts(b, ")");
		}
		tt_buf_puts(b, " ");
		num(b, S_PCT, ch->change_pct);
		tt_buf_puts(b, "</text>");
	}
	/* the values */
	tt_buf_puts(b, "<polyline fill=\"none\" stroke=\"#1f5fa8\" points=\"");
	for (size_t k = 0; k < se->n; k++) {
		if (k)
			tt_buf_puts(b, " ");
		num(b, S_COORD, X(se->run[k]));
		tt_buf_puts(b, ",");
		num(b, S_COORD, Y(se->value[k]));
	}
	tt_buf_puts(b, "\"/>");
	for (size_t k = 0; k < se->n; k++) {
		tt_buf_puts(b, "<circle r=\"2\" fill=\"#1f5fa8\" cx=\"");
		num(b, S_COORD, X(se->run[k]));
		tt_buf_puts(b, "\" cy=\"");
		num(b, S_COORD, Y(se->value[k]));
		tt_buf_puts(b, "\"/>");
	}
#undef X
#undef Y
	tt_buf_puts(b, "</svg>\n");
}

enum tt_code tt__trend_render_html(const struct tt_trend_result *r, struct tt_buf *b,
				   struct tt_error *err)
{
	struct tt_buf text;
	size_t charted = 0, *ord;

	tt__html_head(b, "tokentrace trend", css, NULL, NULL);
	tt_buf_puts(b, "<h1>Trend</h1>\n<p>");
	tt_buf_init(&text, 0);
	tt__trend_method_sentence(r, &text);
	tt__html_esc_lines(b, text.data ? text.data : "");
	tt_buf_release(&text);
	tt_buf_puts(b, "</p>\n");
	if (!r->n_changes) {
		tt_buf_puts(b, "<p>No change points.</p>\n</body></html>\n");
		return TT_OK;
	}
	if (!(ord = tt__trend_by_size(r)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	tt_buf_puts(b, "<h2>Change points, largest first</h2>\n<table><tr><th>Cell</th>"
		       "<th>Figure</th><th>Change</th><th>Before</th><th>After</th><th>p</th>"
		       "<th>Kind</th><th>First run of the new level</th><th>Engine version</th>"
		       "<th>Key</th></tr>\n");
	for (size_t i = 0; i < r->n_changes; i++) {
		const struct tt_trend_change *ch = &r->changes[ord[i]];
		const struct tt_trend_series *se = &r->series[ch->series];
		const struct tt_trend_run *run = &r->runs[ch->run];

		tt_buf_puts(b, "<tr><td>");
		tt__html_esc(b, se->cell);
		tt_buf_printf(b, "</td><td>%s</td><td class=\"n %s\">", tt_diff_figure_name(se->figure),
			      ch->regression ? "reg" : "imp");
		num(b, S_PCT, ch->change_pct);
		tt_buf_puts(b, "</td><td class=\"n\">");
		num(b, S_VALUE, ch->before);
		tt_buf_puts(b, "</td><td class=\"n\">");
		num(b, S_VALUE, ch->after);
		tt_buf_puts(b, "</td><td class=\"n\">");
		num(b, S_P, ch->p_value);
		tt_buf_printf(b, "</td><td>%s</td><td>#%zu ",
			      ch->regression ? "regression" : "improvement", ch->run + 1);
		tt__html_esc(b, run->path ? run->path : "");
		tt_buf_puts(b, "</td><td>");
		tt__html_esc(b, run->engine_version ? run->engine_version : "-");
		tt_buf_puts(b, "</td><td>");
		tt__html_esc(b, run->key ? run->key : "-");
		tt_buf_puts(b, "</td></tr>\n");
	}
	tt_buf_puts(b, "</table>\n<h2>Series that changed</h2>\n<p>Each point is one run "
		       "(x: its place in the order), dashed lines the levels' medians, "
		       "vertical lines the first run of each new level (red: worse, green: "
		       "better).</p>\n");
	free(ord);
	for (size_t s = 0; s < r->n_series; s++) {
		const struct tt_trend_series *se = &r->series[s];
		if (!se->n_changes)
			continue;
		if (charted++ == MAX_CHARTS) {
			tt_buf_printf(b, "<p>Only the first %d series are charted; the table lists "
					 "every change point.</p>\n", MAX_CHARTS);
			break;
		}
		tt_buf_puts(b, "<h3>");
		tt__html_esc(b, se->cell);
		tt_buf_printf(b, ": %s</h3>\n", tt_diff_figure_name(se->figure));
		chart(r, se, b);
	}
	tt_buf_puts(b, "</body></html>\n");
	return TT_OK;
}
