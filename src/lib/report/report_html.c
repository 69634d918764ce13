/* The HTML report: one self-contained page.  Charts are SVG documents
 * embedded as data: URIs (vector, and each keeps its own ids, which inline
 * SVG from cairo would not: glyph ids would clash between charts).  A
 * Content-Security-Policy forbids every fetch and every script, and every
 * string that came from a run is escaped. */
#include "tokentrace/report.h"

#include <stdio.h>
#include <string.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"
#include "report/html.h"
#include "report/tables.h"
#include "text/render_rate.h"


static const char css[] =
	":root{color-scheme:light}"
	"body{margin:0;background:#f6f7f9;color:#1a1a1a;font:15px/1.45 'DejaVu Sans',"
	"system-ui,sans-serif}"
	"main{max-width:1180px;margin:0 auto;padding:28px 24px 48px}"
	"h1{font-size:28px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 6px}"
	".sub{color:#5f6368;font-size:17px;margin:0 0 18px}"
	".facts{display:flex;flex-wrap:wrap;gap:14px}"
	".facts section{background:#fff;border:1px solid #e3e5e8;border-radius:8px;"
	"padding:10px 16px;min-width:230px;flex:1}"
	".facts h3{margin:0 0 6px;font-size:15px}"
	"dl{display:grid;grid-template-columns:auto 1fr;gap:2px 14px;margin:0}"
	"dt{color:#5f6368}dd{margin:0;overflow-wrap:anywhere}"
	"pre{background:#fff;border:1px solid #e3e5e8;border-radius:8px;padding:10px 14px;"
	"white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px}"
	".caption{color:#5f6368;margin:0 0 8px}"
	".scroll{overflow-x:auto;background:#fff;border:1px solid #e3e5e8;border-radius:8px}"
	"table{border-collapse:collapse;width:100%;font-size:14px}"
	"th,td{padding:6px 10px;border-bottom:1px solid #eceef1;vertical-align:top}"
	"td{white-space:nowrap}td.w{white-space:normal;min-width:280px}"
	"th{background:#f0f2f5;text-align:left;font-weight:600;position:sticky;top:0}"
	"td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}"
	"tbody tr:nth-child(even){background:#fafbfc}"
	".st{display:inline-block;padding:0 6px;border-radius:4px;font-size:13px}"
	".s1{background:#fff1d6}.s2{background:#eceef1;color:#5f6368}.s3{background:#fde2d6}"
	".s4,.s5,.s6,.s7{background:#eceef1}"
	".note{color:#5f6368;font-size:13px;margin:6px 0 0}.m{color:#5f6368;font-size:12px}"
	"nav{font-size:14px;margin:0 0 14px}nav a{color:#0b57d0;margin-right:14px}"
	"figure{margin:18px 0;background:#fff;border:1px solid #e3e5e8;border-radius:8px;"
	"padding:8px}"
	"figure img{display:block;width:100%;height:auto}"
	"figcaption{color:#5f6368;font-size:13px;padding:4px 8px}"
	"footer{color:#5f6368;font-size:12px;margin-top:40px}";

/* Added only to a page with open-loop cells, so that every other page
 * stays as it was: Rate not sustained takes Requests queued's colour, as
 * in the PDF. */
static const char css_rate[] = ".s9{background:#fff1d6}";
/* Likewise on a page with a Client overloaded cell: Errors' colour, as in
 * the PDF (its figures are wrong, not only incomplete). */
static const char css_overloaded[] = ".s10{background:#fde2d6}";

static int has_overloaded(const struct tt_report *r)
{
	for (size_t i = 0; i < r->n_cells; i++)
		if (r->cells[i].status == TT_STATUS_CLIENT_OVERLOADED)
			return 1;
	return 0;
}

static void facts_html(struct tt_buf *b, const struct fact *f, size_t n)
{
	const char *group = NULL;
	int open = 0;
	tt_buf_puts(b, "<div class=\"facts\">");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(f[i].group, "Launch command") == 0)
			continue;
		if (!group || strcmp(group, f[i].group) != 0) {
			if (open)
				tt_buf_puts(b, "</dl></section>");
			group = f[i].group;
			tt_buf_puts(b, "<section><h3>");
			tt__html_esc(b, group);
			tt_buf_puts(b, "</h3><dl>");
			open = 1;
		}
		tt_buf_puts(b, "<dt>");
		tt__html_esc(b, f[i].key);
		tt_buf_puts(b, "</dt><dd>");
		tt__html_esc(b, f[i].value);
		tt_buf_puts(b, "</dd>");
	}
	if (open)
		tt_buf_puts(b, "</dl></section>");
	tt_buf_puts(b, "</div>");
	for (size_t i = 0; i < n; i++) {
		if (strcmp(f[i].group, "Launch command") != 0)
			continue;
		tt_buf_puts(b, "<h2>Launch command</h2><pre>");
		tt__html_esc(b, f[i].value);
		tt_buf_puts(b, "</pre>");
	}
}

/* The Status column: where the row's status is marked. */
static int status_column(const struct tt__table *t)
{
	for (size_t j = 0; j < t->ncols; j++)
		if (strcmp(tt__table_get(t, 0, j), "Status") == 0)
			return (int)j;
	return -1;
}

void tt__table_html(struct tt_buf *b, const struct tt__table *t, size_t index)
{
	int status_col = status_column(t);

	tt_buf_printf(b, "<section id=\"table-%zu\"><h2>", index + 1);
	tt__html_esc(b, t->title ? t->title : "");
	tt_buf_puts(b, "</h2>");
	if (t->caption) {
		tt_buf_puts(b, "<p class=\"caption\">");
		tt__html_esc(b, t->caption);
		tt_buf_puts(b, "</p>");
	}
	tt_buf_puts(b, "<div class=\"scroll\"><table><thead><tr>");
	for (size_t j = 0; j < t->ncols; j++) {
		tt_buf_puts(b, t->align[j] == TT__ALIGN_RIGHT ? "<th class=\"r\">" : "<th>");
		tt__html_esc(b, tt__table_get(t, 0, j));
		tt_buf_puts(b, "</th>");
	}
	tt_buf_puts(b, "</tr></thead><tbody>");
	for (size_t i = 1; i < t->nrows; i++) {
		tt_buf_puts(b, "<tr>");
		for (size_t j = 0; j < t->ncols; j++) {
			const char *s = tt__table_get(t, i, j);
			int st = i < t->cap ? t->row_status[i] : -1;
			/* numbers never wrap; long sentences (the reasons) do */
			if (t->align[j] == TT__ALIGN_RIGHT)
				tt_buf_puts(b, "<td class=\"r\">");
			else if (strlen(s) > 48)
				tt_buf_puts(b, "<td class=\"w\">");
			else
				tt_buf_puts(b, "<td>");
			if ((int)j == status_col && st > 0) {
				tt_buf_printf(b, "<span class=\"st s%d\">", st);
				tt__html_esc(b, s);
				tt_buf_puts(b, "</span>");
			} else if (strchr(s, '\n')) {
				/* matrix entries: the rate first, in bold */
				const char *nl = strchr(s, '\n');
				char first[128];
				snprintf(first, sizeof first, "%.*s", (int)(nl - s), s);
				tt_buf_puts(b, "<strong>");
				tt__html_esc(b, first);
				tt_buf_puts(b, "</strong><br><span class=\"m\">");
				tt__html_esc_lines(b, nl + 1);
				tt_buf_puts(b, "</span>");
			} else {
				tt__html_esc(b, s);
			}
			tt_buf_puts(b, "</td>");
		}
		tt_buf_puts(b, "</tr>");
	}
	tt_buf_puts(b, "</tbody></table></div>");
	if (t->note) {
		tt_buf_puts(b, "<p class=\"note\">");
		tt__html_esc(b, t->note);
		tt_buf_puts(b, "</p>");
	}
	tt_buf_puts(b, "</section>");
}

enum tt_code tt_render_html(const struct tt_report *r, struct tt_run *run, struct tt_buf *out,
			    struct tt_error *err)
{
	return tt__report_html(r, run, NULL, NULL, TT_CHART_SVG, out, err);
}

enum tt_code tt__report_html(const struct tt_report *r, struct tt_run *run,
			 struct chart_cache *cache, const struct tt_buf *imgs,
			 enum tt_chart_format img_format, struct tt_buf *out,
			 struct tt_error *err)
{
	struct fact *facts = NULL;
	struct tt__table *tables = NULL;
	size_t n_facts = 0, n_tables = 0, n_charts;
	struct tt_chart_opts charts[16];
	struct tt_buf svg;
	char title[700], sub[600];
	enum tt_code rc;

	tt_buf_init(&svg, 0);
	if (!r || !out)
		return tt_error_set(err, TT_EARG, "no report to render");
	rc = tt__report_facts(r, &facts, &n_facts, err);
	if (rc != TT_OK)
		goto cleanup;
	rc = tt__report_tables(r, &tables, &n_tables, err);
	if (rc != TT_OK)
		goto cleanup;
	tt__report_title(r, title, sizeof title);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);

	tt__html_head(out, title, css, tt__render_has_rate_cells(r) ? css_rate : "",
		      has_overloaded(r) ? css_overloaded : "");
	tt_buf_puts(out, "<main>\n<header><h1>Speed test matrix</h1><p class=\"sub\">");
	tt__html_esc(out, sub);
	tt_buf_puts(out, "</p></header>\n");
	n_charts = tt__report_chart_list(r, run, charts, sizeof charts / sizeof charts[0]);
	tt_buf_puts(out, "<nav>");
	for (size_t k = 0; k < n_tables; k++) {
		tt_buf_printf(out, "<a href=\"#table-%zu\">", k + 1);
		tt__html_esc(out, tables[k].title);
		tt_buf_puts(out, "</a>");
	}
	if (n_charts)
		tt_buf_puts(out, "<a href=\"#charts\">Charts</a>");
	tt_buf_puts(out, "</nav>\n");
	facts_html(out, facts, n_facts);
	tt_buf_puts(out, "\n");
	for (size_t k = 0; k < n_tables; k++) {
		tt__table_html(out, &tables[k], k);
		tt_buf_puts(out, "\n");
	}

	if (n_charts)
		tt_buf_puts(out, "<section id=\"charts\"><h2>Charts</h2>\n");
	for (size_t k = 0; k < n_charts; k++) {
		struct tt_error cerr;
		const char *name = tt_chart_kind_name(charts[k].kind);
		const struct tt_buf *img = &svg;
		const char *mime = "image/svg+xml";
		int slot = tt__chart_kind_slot(charts[k].kind);
		charts[k].format = TT_CHART_SVG;
		tt_buf_reset(&svg);
		tt_error_clear(&cerr);
		if (imgs && slot >= 0 && imgs[slot].len > 0 &&
		    (img_format == TT_CHART_SVG || img_format == TT_CHART_PNG)) {
			img = &imgs[slot]; /* drawn already: the same bytes */
			if (img_format == TT_CHART_PNG)
				mime = "image/png";
		} else if (tt__chart_render(r, run, &charts[k], cache, &svg, NULL, &cerr) != TT_OK) {
			/* A chart that cannot be drawn (no trace for it, damage) is
			 * named with the reason; the rest of the report stands. */
			if (cerr.code > TT_WARN && cerr.kind == TT_ENOMEM) {
				rc = tt_error_set(err, TT_ENOMEM, "%s", cerr.msg);
				goto cleanup;
			}
			tt_buf_printf(out, "<p class=\"note\" id=\"chart-%s\">", name);
			tt__html_esc(out, tt__chart_kind_title(charts[k].kind));
			tt_buf_puts(out, ": not drawn: ");
			tt__html_esc(out, cerr.msg);
			tt_buf_puts(out, "</p>\n");
			continue;
		}
		tt_buf_printf(out, "<figure id=\"chart-%s\"><img width=\"960\" height=\"600\" alt=\"",
			      name);
		tt__html_esc(out, tt__chart_kind_title(charts[k].kind));
		tt_buf_printf(out, "\" src=\"data:%s;base64,", mime);
		tt__html_base64(out, (const unsigned char *)img->data, img->len);
		tt_buf_puts(out, "\"><figcaption>");
		tt__html_esc(out, tt_chart_kind_about(charts[k].kind));
		tt_buf_printf(out, " (<code>tokentrace chart RUN %s</code>)</figcaption></figure>\n",
			      name);
	}
	if (n_charts)
		tt_buf_puts(out, "</section>\n");
	tt_buf_puts(out, "<footer>Made by tokentrace ");
	tt__html_esc(out, tt_version());
	tt_buf_puts(out, " from ");
	tt__html_esc(out, r->source[0] ? r->source : "a run");
	if (r->manifest.created) {
		tt_buf_puts(out, ", captured ");
		tt__html_esc(out, r->manifest.created);
	}
	tt_buf_puts(out, ". Every figure is computed from the raw trace.</footer>\n"
			 "</main>\n</body>\n</html>\n");
	if (out->failed)
		rc = tt_error_set(err, TT_ENOMEM, "the HTML report does not fit in its buffer");
cleanup:
	tt_buf_release(&svg);
	tt__facts_free(facts, n_facts);
	tt__tables_free(tables, n_tables);
	return rc;
}
