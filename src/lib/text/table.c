/* The table model (text/table.h) and its term, md and csv writers: one
 * place that pads columns, drops them on narrow terminals, colours
 * statuses and escapes markdown, for the report and the diff alike. */
#include "text/table.h"
#include "text/render_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP 2 /* spaces between terminal columns */

const struct tt__term_style tt__term_report = {2, 1, 0, 1};
const struct tt__term_style tt__term_plain = {0, 0, 1, 0};

int tt__table_init(struct tt__table *t, size_t ncols)
{
	memset(t, 0, sizeof *t);
	tt_buf_init(&t->text, 0);
	if (!ncols || ncols > SIZE_MAX / sizeof *t->c / 16)
		return -1;
	t->ncols = ncols;
	t->align = calloc(ncols, sizeof *t->align);
	t->prio = calloc(ncols, sizeof *t->prio);
	tt_buf_append(&t->text, "", 1); /* offset 0: the empty cell */
	if (!t->align || !t->prio || t->text.failed || tt__table_add_row(t) == (size_t)-1) {
		tt__table_free(t);
		return -1;
	}
	return 0;
}

void tt__table_free(struct tt__table *t)
{
	free(t->title);
	free(t->caption);
	free(t->note);
	free(t->c);
	free(t->row_status);
	free(t->align);
	free(t->prio);
	tt_buf_release(&t->text);
	memset(t, 0, sizeof *t);
}

/* Room for row `row`, new rows cleared.  -1 out of memory (sticky). */
static int reserve(struct tt__table *t, size_t row)
{
	size_t cap = t->cap;
	struct tt__tcell *c;
	int *rs;

	if (row < t->cap)
		return 0;
	if (t->text.failed)
		return -1;
	while (cap <= row)
		cap = cap ? cap * 2 : 16;
	c = realloc(t->c, cap * t->ncols * sizeof *c);
	if (!c)
		goto oom;
	t->c = c;
	rs = realloc(t->row_status, cap * sizeof *rs);
	if (!rs)
		goto oom;
	t->row_status = rs;
	memset(&t->c[t->cap * t->ncols], 0, (cap - t->cap) * t->ncols * sizeof *t->c);
	for (size_t i = t->cap; i < cap; i++)
		t->row_status[i] = -1;
	t->cap = cap;
	return 0;
oom:
	t->text.failed = 1;
	return -1;
}

size_t tt__table_add_row(struct tt__table *t)
{
	size_t row = t->nrows;

	if (reserve(t, row))
		return (size_t)-1;
	memset(&t->c[row * t->ncols], 0, t->ncols * sizeof *t->c);
	t->row_status[row] = -1;
	t->nrows++;
	return row;
}

void tt__table_set(struct tt__table *t, size_t row, size_t col, const char *s, int tone)
{
	struct tt__tcell *c;

	if (col >= t->ncols || reserve(t, row))
		return;
	c = &t->c[row * t->ncols + col];
	c->off = t->text.len;
	c->tone = tone;
	tt_buf_append(&t->text, s ? s : "", s ? strlen(s) + 1 : 1);
}

const char *tt__table_get(const struct tt__table *t, size_t row, size_t col)
{
	if (!t->text.data || t->text.failed || row >= t->cap || col >= t->ncols)
		return "";
	return t->text.data + t->c[row * t->ncols + col].off;
}

int tt__table_tone(const struct tt__table *t, size_t row, size_t col)
{
	return row < t->cap && col < t->ncols ? t->c[row * t->ncols + col].tone : TT__TONE_NONE;
}

static int dup_or_null(char **dst, const char *s)
{
	free(*dst);
	*dst = NULL;
	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -1;
}

int tt__table_text(struct tt__table *t, const char *title, const char *caption,
		   const char *note)
{
	int bad = dup_or_null(&t->title, title);

	bad |= dup_or_null(&t->caption, caption);
	bad |= dup_or_null(&t->note, note);
	if (bad)
		t->text.failed = 1;
	return bad ? -1 : 0;
}

int tt__table_failed(const struct tt__table *t)
{
	return t->text.failed;
}

int tt__status_tone(enum tt_status s)
{
	switch (s) {
	case TT_STATUS_VALID: return TT__TONE_GOOD;
	case TT_STATUS_QUEUED:
	case TT_STATUS_TOO_FEW:
	case TT_STATUS_CUT_SHORT:
	case TT_STATUS_SHORT:
	case TT_STATUS_NOT_SUSTAINED: return TT__TONE_WARN;
	case TT_STATUS_ERRORS:
	case TT_STATUS_CLIENT_OVERLOADED:
	case TT_STATUS_DAMAGED: return TT__TONE_BAD;
	case TT_STATUS_OVER_CAPACITY:
	case TT_STATUS_NOT_RUN: return TT__TONE_DIM;
	case TT_STATUS_COUNT_: break;
	}
	return TT__TONE_NONE;
}

/* ---- term --------------------------------------------------------------- */

size_t tt__display_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

static void pad(struct tt_buf *out, size_t n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;

		tt_buf_append(out, spaces, k);
		n -= k;
	}
}

static const char *const sgr[] = {NULL, "1", "32", "33", "31", "2"};

static void emit(struct tt_buf *out, const char *s, int tone, int use_color)
{
	if (use_color && tone > 0 && tone < (int)(sizeof sgr / sizeof *sgr))
		tt_buf_printf(out, "\x1b[%sm%s\x1b[0m", sgr[tone], s);
	else
		tt_buf_puts(out, s);
}

void tt__table_widths(const struct tt__table *t, size_t *w)
{
	for (size_t k = 0; k < t->ncols; k++)
		w[k] = 0;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t k = 0; k < t->ncols; k++) {
			size_t n = tt__display_width(tt__table_get(t, r, k));

			if (n > w[k])
				w[k] = n;
		}
}

/* Drop columns by priority (highest first) until the table fits. */
static void fit(const struct tt__table *t, const size_t *w, size_t indent, size_t avail,
		int *shown)
{
	for (;;) {
		size_t total = indent, drop = t->ncols;
		int best = 0;

		for (size_t c = 0; c < t->ncols; c++)
			if (shown[c])
				total += w[c] + GAP;
		if (total - GAP <= avail)
			return;
		for (size_t c = 0; c < t->ncols; c++)
			if (shown[c] && t->prio[c] > best) {
				best = t->prio[c];
				drop = c;
			}
		if (drop == t->ncols)
			return; /* nothing left to drop: let the terminal wrap */
		shown[drop] = 0;
	}
}

void tt__table_term(const struct tt__table *t, const struct tt__term_style *st, size_t avail,
		    int use_color, struct tt_buf *out, int *shown_out)
{
	size_t *w = calloc(t->ncols, sizeof *w), last = 0;
	int *shown = calloc(t->ncols, sizeof *shown);

	if (!w || !shown || t->text.failed) {
		out->failed = 1; /* out of memory while filling: the output fails too */
		goto done;
	}
	tt__table_widths(t, w);
	for (size_t c = 0; c < t->ncols; c++)
		shown[c] = 1;
	if (st->fit)
		fit(t, w, st->indent, avail, shown);
	for (size_t c = 0; c < t->ncols; c++)
		if (shown[c])
			last = c;
	for (size_t r = 0; r < t->nrows; r++) {
		int first = 1;

		pad(out, st->indent);
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = tt__table_get(t, r, c);
			size_t n;

			if (!shown[c])
				continue;
			if (!first)
				pad(out, GAP);
			first = 0;
			n = tt__display_width(s);
			if (t->align[c] == TT__ALIGN_RIGHT)
				pad(out, w[c] - n);
			emit(out, s, r == 0 && st->bold_head ? TT__TONE_STRONG : tt__table_tone(t, r, c),
			     use_color);
			if (t->align[c] != TT__ALIGN_RIGHT && c != last)
				pad(out, w[c] - n);
		}
		tt_buf_puts(out, "\n");
		if (r == 0 && st->rule) {
			first = 1;
			pad(out, st->indent);
			for (size_t c = 0; c < t->ncols; c++) {
				if (!shown[c])
					continue;
				if (!first)
					pad(out, GAP);
				first = 0;
				for (size_t i = 0; i < w[c]; i++)
					tt_buf_puts(out, "-");
			}
			tt_buf_puts(out, "\n");
		}
	}
	tt_buf_puts(out, "\n");
	if (shown_out)
		memcpy(shown_out, shown, t->ncols * sizeof *shown);
done:
	free(w);
	free(shown);
}

/* ---- md ----------------------------------------------------------------- */

/* Text from the run: escape what markdown would read as markup inside a
 * line (CommonMark allows a backslash before any ASCII punctuation; `<`
 * would open raw HTML), fold line breaks.  Values never start a line, so
 * `#`, `>` and list markers need nothing. */
void tt__md_text(struct tt_buf *out, const char *s)
{
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) /* line breaks, and no escapes */
			tt_buf_puts(out, " ");
		else if (strchr("\\`*_[]<|", *p))
			tt_buf_printf(out, "\\%c", *p);
		else
			tt_buf_append(out, p, 1);
	}
}

void tt__table_md(const struct tt__table *t, int escape, struct tt_buf *out)
{
	if (t->text.failed) {
		out->failed = 1;
		return;
	}
	for (size_t r = 0; r < t->nrows; r++) {
		tt_buf_puts(out, "|");
		for (size_t k = 0; k < t->ncols; k++) {
			tt_buf_puts(out, " ");
			if (escape)
				tt__md_text(out, tt__table_get(t, r, k));
			else
				tt_buf_puts(out, tt__table_get(t, r, k));
			tt_buf_puts(out, " |");
		}
		tt_buf_puts(out, "\n");
		if (r == 0) {
			tt_buf_puts(out, "|");
			for (size_t k = 0; k < t->ncols; k++)
				tt_buf_puts(out, t->align[k] == TT__ALIGN_RIGHT ? "---:|" : "---|");
			tt_buf_puts(out, "\n");
		}
	}
	tt_buf_puts(out, "\n");
}

/* ---- csv ---------------------------------------------------------------- */

void tt__table_csv(const struct tt__table *t, struct tt_buf *out)
{
	if (t->text.failed) {
		out->failed = 1;
		return;
	}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t k = 0; k < t->ncols; k++)
			tt__csv_field(out, tt__table_get(t, r, k), k == 0);
		tt_buf_puts(out, "\n"); /* LF, as every CSV we write (formats/report-csv.md) */
	}
}
