/* One table model for every table the report and the diff print (issue
 * 21.2): text cells with an alignment per column, a tone per cell (a
 * status's or a verdict's colour), a drop priority per column for narrow
 * terminals, a status per row, and a title, caption and note.  The writers
 * for term, md and csv are here (text/table.c); the HTML and PDF writers
 * are in report/ (report/tables.h), which draws with cairo and escapes with
 * the one HTML escaper.  A table is built once and every format writes the
 * same cells.
 *
 * Cells point into one text buffer: a diff of 100,000 cells has 600,000
 * rows in md, and fixed-size cells took 7 KB a cell. */
#ifndef TOKENTRACE_TEXT_TABLE_H
#define TOKENTRACE_TEXT_TABLE_H

#include <stddef.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"

enum tt__align { TT__ALIGN_LEFT = 0, TT__ALIGN_RIGHT = 1, TT__ALIGN_CENTRE = 2 };

/* How a writer with colour shows a cell (term: SGR 1, 32, 33, 31, 2). */
enum tt__tone {
	TT__TONE_NONE = 0,
	TT__TONE_STRONG, /* headers */
	TT__TONE_GOOD,   /* Valid, faster */
	TT__TONE_WARN,   /* a status worth a look, a changed status */
	TT__TONE_BAD,    /* errors, slower */
	TT__TONE_DIM,    /* not run, over capacity */
};

struct tt__tcell {
	size_t off; /* of the text in the table's buffer; 0 is "" */
	int tone;   /* enum tt__tone */
};

struct tt__table {
	char *title;   /* owned, may be NULL; the html and pdf writers show it */
	char *caption; /* a sentence under the title; may be NULL */
	char *note;    /* under the table (a status legend); may be NULL */
	size_t ncols;
	size_t nrows;  /* rows shown, the header (row 0) included */
	size_t cap;    /* rows allocated; rows at or past nrows are being built */
	struct tt__tcell *c; /* cap x ncols */
	int *row_status;     /* cap: enum tt_status of the row's cell, -1 none */
	int *align;          /* ncols: enum tt__align */
	int *prio;           /* ncols: dropped first (highest) when narrow; 0 never */
	struct tt_buf text;
};

/* An empty table of ncols columns with its header row (nrows 1).  -1 out of
 * memory (t is left released). */
int tt__table_init(struct tt__table *t, size_t ncols);
void tt__table_free(struct tt__table *t);
/* Set the cell text (copied) and tone.  A row at or past nrows is made
 * (cleared) as needed; a row counts once t->nrows is moved past it.  Out of
 * memory is sticky: tt__table_failed says so and the writers fail. */
void tt__table_set(struct tt__table *t, size_t row, size_t col, const char *s, int tone);
const char *tt__table_get(const struct tt__table *t, size_t row, size_t col);
int tt__table_tone(const struct tt__table *t, size_t row, size_t col);
/* Append a row (cleared, row status -1): its index, or (size_t)-1. */
size_t tt__table_add_row(struct tt__table *t);
/* Title, caption and note copied (each may be NULL).  -1 out of memory. */
int tt__table_text(struct tt__table *t, const char *title, const char *caption,
		   const char *note);
int tt__table_failed(const struct tt__table *t);
/* The tone a status is shown in. */
int tt__status_tone(enum tt_status s);

/* ---- writers ------------------------------------------------------------ */

/* Terminal: columns padded to the widest cell (UTF-8 aware), the last one
 * unpadded when left-aligned, a blank line after the table. */
struct tt__term_style {
	size_t indent;   /* spaces before each row */
	int bold_head;   /* the header row in the strong tone */
	int rule;        /* dashes under the header */
	int fit;         /* drop columns by prio until the table fits avail */
};
/* The report's tables: two spaces in, bold header, fitted to the width. */
extern const struct tt__term_style tt__term_report;
/* The diff's: flush left, dashes under the header, never dropped. */
extern const struct tt__term_style tt__term_plain;
/* Write the table's rows (the title, caption and note are the document's
 * to place).  shown (ncols entries, may be NULL) receives which columns
 * were kept. */
void tt__table_term(const struct tt__table *t, const struct tt__term_style *st, size_t avail,
		    int use_color, struct tt_buf *out, int *shown);
/* Column widths (display columns) into w (ncols entries). */
void tt__table_widths(const struct tt__table *t, size_t *w);
/* Markdown pipes with the alignment row ("---:" right-aligned), a blank
 * line after.  escape: run text escaped as CommonMark punctuation. */
void tt__table_md(const struct tt__table *t, int escape, struct tt_buf *out);
/* The markdown escaping the md writer applies (line breaks folded). */
void tt__md_text(struct tt_buf *out, const char *s);
/* CSV: every row, header first, RFC 4180 quoting as tt__csv_field, LF line ends. */
void tt__table_csv(const struct tt__table *t, struct tt_buf *out);
/* Display columns of a UTF-8 string: continuation bytes take none. */
size_t tt__display_width(const char *s);

#endif
