/* The PDF report: A4 landscape pages with the header facts, every table
 * (split across pages with the header row repeated) and every chart on a
 * page of its own.  Text goes through pango into real PDF fonts, so it can
 * be searched and copied; the run's strings are drawn as plain text, never
 * as markup. */
#include "tokentrace/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"
#include "report/tables.h"

#define PAGE_W (841.89 / 0.75) /* A4 landscape (841.89 x 595.28 pt) in CSS px */
#define PAGE_H (595.28 / 0.75)
#define MARGIN 40.0
#define FOOTER_H 26.0

struct flow {
	struct canvas *c;
	double y;
	int page;
	double line_h; /* one line of table text at the table's size */
	char footer[800];
};

static void page_footer(struct flow *f)
{
	char buf[900];
	struct tstyle st = tt__tstyle_make(10, 0, tt__chart_muted, 0, 1);
	st.max_w = PAGE_W - 2 * MARGIN - 80;
	tt__cv_line(f->c, MARGIN, PAGE_H - MARGIN + 4, PAGE_W - MARGIN, PAGE_H - MARGIN + 4, 0.6,
		tt__chart_grid);
	tt__cv_text(f->c, MARGIN, PAGE_H - MARGIN + 20, f->footer, &st);
	snprintf(buf, sizeof buf, "page %d", f->page);
	st = tt__tstyle_make(10, 0, tt__chart_muted, 1, 1);
	tt__cv_text(f->c, PAGE_W - MARGIN, PAGE_H - MARGIN + 20, buf, &st);
}

static void new_page(struct flow *f)
{
	page_footer(f);
	tt__canvas_next_page(f->c);
	f->page++;
	f->y = MARGIN;
}

static double bottom(void)
{
	return PAGE_H - MARGIN - FOOTER_H + 10;
}

static void heading(struct flow *f, const char *text, double size)
{
	double h;
	struct tstyle st = tt__tstyle_make(size, 1, tt__chart_ink, 0, 0);
	st.max_w = PAGE_W - 2 * MARGIN;
	tt__cv_measure(f->c, text, size, 1, NULL, &h);
	tt__cv_text(f->c, MARGIN, f->y, text, &st);
	f->y += h + 4;
}

static void paragraph(struct flow *f, const char *text, double size, struct rgb col, int mono)
{
	struct tstyle st = tt__tstyle_make(size, 0, col, 0, 0);
	st.mono = mono;
	double h = tt__cv_paragraph(f->c, 0, 0, PAGE_W - 2 * MARGIN, text, &st, 0);
	if (f->y + h > bottom())
		new_page(f);
	tt__cv_paragraph(f->c, MARGIN, f->y, PAGE_W - 2 * MARGIN, text, &st, 1);
	f->y += h + 6;
}

/* Does every group's column fit the page from y0?  Measured only until one
 * does not. */
static int facts_fit(struct flow *f, const struct fact *facts, size_t n, const char *const *groups,
		     double col_w, double y0)
{
	for (size_t g = 0; g < 3; g++) {
		double y = y0 + 22;
		for (size_t i = 0; i < n; i++) {
			struct tstyle vs = tt__tstyle_make(11.5, 0, tt__chart_ink, 0, 0);
			if (strcmp(facts[i].group, groups[g]) != 0)
				continue;
			y += tt__cv_paragraph(f->c, 0, 0, col_w * 0.55 - 10, facts[i].value, &vs, 0) + 3;
			if (y > bottom())
				return 0;
		}
	}
	return 1;
}

/* More facts than a page holds (thousands of notes): each group in turn,
 * the full width, breaking pages as paragraphs do.  Drawn in three columns
 * they ran off the first page, unseen, and each drawn far below it cost
 * more than the last (7,500 notes took 38.5 s). */
static void facts_flow(struct flow *f, const struct fact *facts, size_t n, const char *const *groups)
{
	double w = PAGE_W - 2 * MARGIN, kw = w * 0.25;

	for (size_t g = 0; g < 3; g++) {
		int any = 0;
		for (size_t i = 0; i < n && !any; i++)
			any = strcmp(facts[i].group, groups[g]) == 0;
		if (!any)
			continue;
		if (f->y + 40 > bottom())
			new_page(f);
		heading(f, groups[g], 13.5);
		for (size_t i = 0; i < n; i++) {
			struct tstyle ks = tt__tstyle_make(11.5, 0, tt__chart_muted, 0, 0);
			struct tstyle vs = tt__tstyle_make(11.5, 0, tt__chart_ink, 0, 0);
			double h;
			if (strcmp(facts[i].group, groups[g]) != 0)
				continue;
			ks.max_w = kw;
			h = tt__cv_paragraph(f->c, 0, 0, w - kw - 10, facts[i].value, &vs, 0);
			if (f->y + h > bottom())
				new_page(f);
			tt__cv_text(f->c, MARGIN, f->y, facts[i].key, &ks);
			tt__cv_paragraph(f->c, MARGIN + kw + 10, f->y, w - kw - 10, facts[i].value, &vs, 1);
			f->y += h + 3;
		}
		f->y += 10;
	}
}

static void facts_page(struct flow *f, const struct fact *facts, size_t n)
{
	static const char *const groups[] = {"Hardware", "Engine", "Run"};
	double col_w = (PAGE_W - 2 * MARGIN - 2 * 24) / 3, y0 = f->y, ymax = f->y;
	size_t shown = 0;

	if (!facts_fit(f, facts, n, groups, col_w, y0)) {
		facts_flow(f, facts, n, groups);
		goto launch;
	}
	for (size_t g = 0; g < 3; g++) {
		/* groups that have facts fill the columns from the left */
		double x = MARGIN + (double)shown * (col_w + 24), y = y0, kw = 0;
		int any = 0;
		for (size_t i = 0; i < n; i++) {
			double w;
			if (strcmp(facts[i].group, groups[g]) != 0)
				continue;
			tt__cv_measure(f->c, facts[i].key, 11.5, 0, &w, NULL);
			if (w > kw)
				kw = w;
			any = 1;
		}
		if (!any)
			continue;
		shown++;
		if (kw > col_w * 0.45)
			kw = col_w * 0.45;
		{
			struct tstyle st = tt__tstyle_make(13.5, 1, tt__chart_ink, 0, 0);
			tt__cv_text(f->c, x, y, groups[g], &st);
			y += 22;
		}
		for (size_t i = 0; i < n; i++) {
			struct tstyle ks = tt__tstyle_make(11.5, 0, tt__chart_muted, 0, 0);
			struct tstyle vs = tt__tstyle_make(11.5, 0, tt__chart_ink, 0, 0);
			double h;
			if (strcmp(facts[i].group, groups[g]) != 0)
				continue;
			ks.max_w = kw;
			tt__cv_text(f->c, x, y, facts[i].key, &ks);
			h = tt__cv_paragraph(f->c, x + kw + 10, y, col_w - kw - 10, facts[i].value, &vs,
					 1);
			y += h + 3;
		}
		if (y > ymax)
			ymax = y;
	}
	f->y = ymax + 10;
launch:
	for (size_t i = 0; i < n; i++) {
		if (strcmp(facts[i].group, "Launch command") != 0)
			continue;
		heading(f, "Launch command", 13.5);
		paragraph(f, facts[i].value, 10, tt__chart_ink, 1);
	}
}

/* ---- tables --------------------------------------------------------- */

#define TFONT 10.5
#define PAD 5.0

static double cell_natural(struct canvas *c, const char *s, double size)
{
	double wmax = 0;
	const char *p = s;
	while (p) {
		const char *nl = strchr(p, '\n');
		char line[256];
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		double w;
		if (n >= sizeof line)
			n = sizeof line - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		tt__cv_measure(c, line, size, 0, &w, NULL);
		if (w > wmax)
			wmax = w;
		p = nl ? nl + 1 : NULL;
	}
	return wmax;
}

static double longest_word(struct canvas *c, const char *s, double size, int bold)
{
	double wmax = 0;
	char word[128];
	while (*s) {
		size_t n = strcspn(s, " ");
		double w;
		if (n >= sizeof word)
			n = sizeof word - 1;
		memcpy(word, s, n);
		word[n] = '\0';
		tt__cv_measure(c, word, size, bold, &w, NULL);
		if (w > wmax)
			wmax = w;
		s += n;
		while (*s == ' ')
			s++;
	}
	return wmax;
}

static double cell_height(struct canvas *c, const char *s, double w, double size)
{
	struct tstyle st = tt__tstyle_make(size, 0, tt__chart_ink, 0, 0);
	return tt__cv_paragraph(c, 0, 0, w, s, &st, 0);
}

static void draw_cell_text(struct canvas *c, const char *s, double x, double y, double w,
			   double size, int align, int status)
{
	struct tstyle st = tt__tstyle_make(size, 0, tt__chart_ink, 0, 0);
	if (status > 0) {
		double tw, th;
		static const struct rgb chip[TT_STATUS_COUNT_] = {
			{1, 1, 1}, {1.0, 0.945, 0.84}, {0.925, 0.93, 0.945}, {0.99, 0.885, 0.84},
			{0.925, 0.93, 0.945}, {0.925, 0.93, 0.945}, {0.925, 0.93, 0.945},
			{0.925, 0.93, 0.945}, {1.0, 0.945, 0.84}, {1.0, 0.945, 0.84},
			{0.99, 0.885, 0.84}};
		tt__cv_measure(c, s, size, 0, &tw, &th);
		tt__cv_rect(c, x - 3, y - 1, fmin(tw, w) + 6, th + 2,
			chip[status < TT_STATUS_COUNT_ ? status : 2]);
	}
	if (align == TT__ALIGN_RIGHT && !strchr(s, '\n')) {
		st.ax = 1;
		tt__cv_text(c, x + w, y, s, &st);
		return;
	}
	if (align == TT__ALIGN_RIGHT) {
		/* multi-line matrix entries: first line (the rate) bold */
		const char *p = s;
		int first = 1;
		while (p) {
			const char *nl = strchr(p, '\n');
			char line[256];
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			double th;
			if (n >= sizeof line)
				n = sizeof line - 1;
			memcpy(line, p, n);
			line[n] = '\0';
			st = tt__tstyle_make(first ? size : size - 1, first, first ? tt__chart_ink : tt__chart_muted,
					 1, 0);
			tt__cv_measure(c, line, st.size, first, NULL, &th);
			tt__cv_text(c, x + w, y, line, &st);
			y += th;
			first = 0;
			p = nl ? nl + 1 : NULL;
		}
		return;
	}
	tt__cv_paragraph(c, x, y, w, s, &st, 1);
}

/* Split a header at spaces only ("Total tok/s" never becomes "Total tok/"
 * + "s"), greedily into lines of at most w. */
#define HDR_LINES 4
static size_t header_lines(struct canvas *c, const char *s, double w, double size,
			   char lines[HDR_LINES][96])
{
	size_t n = 0;
	lines[0][0] = '\0';
	while (*s) {
		char cand[200];
		size_t wl = strcspn(s, " ");
		double tw;
		if (wl > 90)
			wl = 90;
		if (lines[n][0])
			snprintf(cand, sizeof cand, "%s %.*s", lines[n], (int)wl, s);
		else
			snprintf(cand, sizeof cand, "%.*s", (int)wl, s);
		tt__cv_measure(c, cand, size, 1, &tw, NULL);
		if (tw <= w || !lines[n][0] || n + 1 == HDR_LINES) {
			snprintf(lines[n], 96, "%.95s", cand);
		} else {
			n++;
			snprintf(lines[n], 96, "%.*s", (int)wl, s);
		}
		s += wl;
		while (*s == ' ')
			s++;
	}
	return n + 1;
}

static double header_height(struct canvas *c, const char *s, double w, double size)
{
	char lines[HDR_LINES][96];
	double th;
	tt__cv_measure(c, "Ag", size, 1, NULL, &th);
	return (double)header_lines(c, s, w, size, lines) * th;
}

static void table_header(struct flow *f, const struct tt__table *t, const double *cw, double size,
			 double hh, int cont)
{
	double x = MARGIN;
	char title[300];
	snprintf(title, sizeof title, "%s%s", t->title ? t->title : "", cont ? " (continued)" : "");
	heading(f, title, 15);
	if (t->caption && !cont) {
		struct tstyle st = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		f->y += tt__cv_paragraph(f->c, MARGIN, f->y, PAGE_W - 2 * MARGIN, t->caption, &st, 1) + 4;
	}
	{
		double total = 0;
		for (size_t j = 0; j < t->ncols; j++)
			total += cw[j];
		tt__cv_rect(f->c, MARGIN, f->y, total, hh, (struct rgb){0.94, 0.95, 0.96});
	}
	for (size_t j = 0; j < t->ncols; j++) {
		int right = t->align[j] == TT__ALIGN_RIGHT;
		struct tstyle st = tt__tstyle_make(size, 1, tt__chart_ink, right ? 1 : 0, 0);
		char lines[HDR_LINES][96];
		double th, yy;
		size_t n = header_lines(f->c, tt__table_get(t, 0, j), cw[j] - 2 * PAD, size, lines);
		tt__cv_measure(f->c, "Ag", size, 1, NULL, &th);
		/* bottom-aligned, as tables set their headers */
		yy = f->y + hh - PAD - (double)n * th;
		for (size_t k = 0; k < n; k++)
			tt__cv_text(f->c, right ? x + cw[j] - PAD : x + PAD, yy + (double)k * th, lines[k],
				&st);
		x += cw[j];
	}
	f->y += hh;
}

static void table_pdf(struct flow *f, const struct tt__table *t)
{
	/* the model's row 0 is the header: data row i is its row i + 1 */
	size_t n_cols = t->ncols, n_rows = t->nrows - 1;
	double *cw = calloc(n_cols, sizeof *cw);
	double *rows = calloc(n_rows ? n_rows : 1, sizeof *rows); /* row heights */
	/* natural width of every cell at TFONT: with hinting off, text width
	 * is proportional to the font size, so one measure serves every size */
	double *nat = calloc(n_rows * n_cols + 1, sizeof *nat);
	double avail = PAGE_W - 2 * MARGIN, total = 0, size = TFONT, hh = 0;
	int status_col = -1;
	if (!cw || !rows || !nat) {
		free(cw);
		free(rows);
		free(nat);
		return;
	}
	for (size_t j = 0; j < n_cols; j++)
		if (strcmp(tt__table_get(t, 0, j), "Status") == 0)
			status_col = (int)j;
	for (size_t i = 0; i < n_rows * n_cols; i++)
		nat[i] = cell_natural(f->c, tt__table_get(t, 1 + i / n_cols, i % n_cols), TFONT);
	/* Natural widths; shrink the font until the table fits the page. */
	for (int pass = 0; pass < 4; pass++) {
		total = 0;
		for (size_t j = 0; j < n_cols; j++) {
			double w = longest_word(f->c, tt__table_get(t, 0, j), size, 1);
			for (size_t i = 0; i < n_rows; i++) {
				double cwid = nat[i * n_cols + j] * size / TFONT;
				if (cwid > avail * 0.45)
					cwid = avail * 0.45;
				if (cwid > w)
					w = cwid;
			}
			cw[j] = w + 2 * PAD + 4;
			total += cw[j];
		}
		if (total <= avail || size <= 7.5)
			break;
		size = fmax(7.5, size * avail / total);
	}
	if (total > avail || total > avail * 0.7) {
		/* fill the width: wide tables read better stretched evenly */
		double k = avail / total;
		for (size_t j = 0; j < n_cols; j++)
			cw[j] *= k;
		total = avail;
	}
	tt__cv_measure(f->c, "Ag", size, 0, NULL, &f->line_h);
	for (size_t j = 0; j < n_cols; j++) {
		double h = header_height(f->c, tt__table_get(t, 0, j), cw[j] - 2 * PAD, size);
		if (h > hh)
			hh = h;
	}
	hh += 2 * PAD;

	{
		/* A table that fits on one page is not split; a longer one starts
		 * where the title, header and a few rows fit. */
		double need = 60 + hh;
		for (size_t i = 0; i < n_rows; i++) {
			double rh = 0;
			for (size_t j = 0; j < n_cols; j++) {
				const char *s = tt__table_get(t, i + 1, j);
				/* one line unless it wraps or breaks: skip pango */
				if (!strchr(s, '\n') &&
				    nat[i * n_cols + j] * size / TFONT <= cw[j] - 2 * PAD)
					rh = fmax(rh, f->line_h);
				else
					rh = fmax(rh, cell_height(f->c, s, cw[j] - 2 * PAD, size));
			}
			rows[i] = rh + 2 * PAD;
			need += rows[i];
		}
		if (f->y + need > bottom() &&
		    (need <= bottom() - MARGIN || f->y + 60 + hh + 3 * 22 > bottom()))
			new_page(f);
		else if (f->y > MARGIN)
			f->y += 14;
	}
	table_header(f, t, cw, size, hh, 0);
	for (size_t i = 0; i < n_rows; i++) {
		double rh = rows[i], x = MARGIN;
		if (f->y + rh > bottom()) {
			new_page(f);
			table_header(f, t, cw, size, hh, 1);
		}
		if (i % 2 == 1)
			tt__cv_rect(f->c, MARGIN, f->y, total, rh, (struct rgb){0.98, 0.984, 0.988});
		for (size_t j = 0; j < n_cols; j++) {
			draw_cell_text(f->c, tt__table_get(t, i + 1, j), x + PAD, f->y + PAD,
				       cw[j] - 2 * PAD, size, t->align[j],
				       (int)j == status_col && i + 1 < t->cap ? t->row_status[i + 1] : 0);
			x += cw[j];
		}
		f->y += rh;
		tt__cv_line(f->c, MARGIN, f->y, MARGIN + total, f->y, 0.5, tt__chart_grid);
	}
	f->y += 6;
	if (t->note)
		paragraph(f, t->note, 10.5, tt__chart_muted, 0);
	free(cw);
	free(rows);
	free(nat);
}

enum tt_code tt__report_pdf(const struct tt_report *r, struct tt_run *run,
			struct chart_cache *cache, struct tt_buf *out, struct tt_error *err)
{
	struct canvas c;
	struct flow f;
	struct fact *facts = NULL;
	struct tt__table *tables = NULL;
	size_t n_facts = 0, n_tables = 0, n_charts;
	struct tt_chart_opts charts[16];
	char title[700], sub[600];
	enum tt_code rc;

	memset(&c, 0, sizeof c);
	rc = tt__report_facts(r, &facts, &n_facts, err);
	if (rc == TT_OK)
		rc = tt__report_tables(r, &tables, &n_tables, err);
	if (rc == TT_OK)
		rc = tt__canvas_open(&c, TT_CHART_PDF, PAGE_W, PAGE_H, 96, out, err);
	if (rc != TT_OK)
		goto cleanup;
	tt__report_title(r, title, sizeof title);
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	tt__canvas_set_date(&c, tt__chart_pdf_date(&r->manifest));
	tt__canvas_set_title(&c, title);

	memset(&f, 0, sizeof f);
	f.c = &c;
	f.y = MARGIN;
	f.page = 1;
	snprintf(f.footer, sizeof f.footer, "tokentrace %s · %s", tt_version(), sub);

	heading(&f, "Speed test matrix", 26);
	{
		struct tstyle st = tt__tstyle_make(16, 0, tt__chart_muted, 0, 0);
		f.y += tt__cv_paragraph(&c, MARGIN, f.y, PAGE_W - 2 * MARGIN, sub, &st, 1) + 14;
	}
	facts_page(&f, facts, n_facts);
	for (size_t k = 0; k < n_tables; k++)
		table_pdf(&f, &tables[k]);

	n_charts = tt__report_chart_list(r, run, charts, sizeof charts / sizeof charts[0]);
	for (size_t k = 0; k < n_charts; k++) {
		struct tt_error cerr;
		struct canvas pc;
		enum tt_code crc;
		new_page(&f);
		tt_error_clear(&cerr);
		charts[k].format = TT_CHART_PDF;
		/* Drawn first on an isolated recording surface, then on the page
		 * only when that went well: a chart that fails in cairo (a NaN
		 * reaching a transformation) would otherwise leave the page's
		 * context in error and fail the whole document.  (Painting the
		 * recording onto the page instead leaks it in cairo's PDF
		 * backend; drawing twice costs milliseconds, the traces come
		 * from the cache.) */
		crc = tt__canvas_isolate(&c, &pc, &cerr);
		if (crc == TT_OK) {
			crc = tt__chart_draw(&pc, MARGIN, MARGIN - 10, PAGE_W - 2 * MARGIN,
					 PAGE_H - 2 * MARGIN - FOOTER_H + 10, r, run, &charts[k],
					 cache, NULL, &cerr);
			if (crc == TT_OK)
				crc = tt__canvas_check(&pc, tt__chart_kind_title(charts[k].kind), &cerr);
			tt__canvas_release(&pc);
		}
		if (crc == TT_OK) {
			cairo_save(c.cr);
			crc = tt__chart_draw(&c, MARGIN, MARGIN - 10, PAGE_W - 2 * MARGIN,
					 PAGE_H - 2 * MARGIN - FOOTER_H + 10, r, run, &charts[k],
					 cache, NULL, &cerr);
			cairo_restore(c.cr);
		}
		if (crc > TT_WARN && cerr.kind == TT_ENOMEM) {
			rc = tt_error_set(err, TT_ENOMEM, "%s", cerr.msg);
			goto cleanup;
		}
		if (crc != TT_OK) {
			/* The page says why the chart is missing; the report stands. */
			char msg[1400];
			f.y = MARGIN;
			heading(&f, tt__chart_kind_title(charts[k].kind), 18);
			snprintf(msg, sizeof msg, "Not drawn: %s", cerr.msg);
			paragraph(&f, msg, 12, tt__chart_muted, 0);
		}
	}
	page_footer(&f);
	rc = tt__canvas_finish(&c, err);
cleanup:
	tt__canvas_release(&c);
	tt__facts_free(facts, n_facts);
	tt__tables_free(tables, n_tables);
	return rc;
}

enum tt_code tt_render_pdf_buf(const struct tt_report *r, struct tt_run *run,
			       struct tt_buf *out, struct tt_error *err)
{
	if (!r || !out)
		return tt_error_set(err, TT_EARG, "no report to render");
	return tt__report_pdf(r, run, NULL, out, err);
}

enum tt_code tt_render_pdf(const struct tt_report *r, struct tt_run *run, const char *path,
			   struct tt_error *err)
{
	struct tt_buf b;
	enum tt_code rc;

	if (!r || !path)
		return tt_error_set(err, TT_EARG, "no report or path for the PDF");
	tt_buf_init(&b, 0);
	rc = tt__report_pdf(r, run, NULL, &b, err);
	if (rc == TT_OK)
		rc = tt_buf_write_file(&b, path, err);
	tt_buf_release(&b);
	return rc;
}
