/* The report's tables (report_tables.c), each one model of text/table.h,
 * and the HTML and PDF writers of that model (report_html.c,
 * report_pdf.c): the report and the diff write their tables through them. */
#ifndef TOKENTRACE_REPORT_TABLES_H
#define TOKENTRACE_REPORT_TABLES_H

#include <stddef.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/error.h"

#include "text/table.h"

/* The report's tables in order (prefill, decode matrix, all measurements,
 * cells that are not Valid, then those beyond the seed's layout).  *out is
 * an array of *n tables; free with tt__tables_free. */
enum tt_code tt__report_tables(const struct tt_report *r, struct tt__table **out, size_t *n,
			       struct tt_error *err);
void tt__tables_free(struct tt__table *t, size_t n);

/* HTML: a <section id="table-INDEX+1"> with the title as <h2>, the caption,
 * the table (numbers right-aligned, the Status column's cells marked with
 * the row's status class, a matrix entry's first line in bold) and the
 * note. */
void tt__table_html(struct tt_buf *b, const struct tt__table *t, size_t index);

#endif
