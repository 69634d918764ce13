/* Open-loop cells in the text formats (render_rate.c). */
#ifndef TOKENTRACE_RENDER_RATE_H
#define TOKENTRACE_RENDER_RATE_H

#include <cjson/cJSON.h>

#include "text/render_impl.h"

/* "prefill", "decode", "rate" */
const char *tt__render_phase(enum tt_phase p);
int tt__render_has_rate_cells(const struct tt_report *r);
/* 1 when a cell is listed with its status reason: every cell that is not
 * Valid, and a Valid open-loop cell whose window was too short to tell
 * 5 % over capacity (docs/metrics.md M-sustained). */
int tt__render_cell_listed(const struct tt_cell_figures *c);
/* "4/s", "0.5/s" */
void tt__render_rate(double rate, char *buf, size_t len);
/* The open-loop table (row 0 the header; nrows 1: no such cell).  -1 out
 * of memory.  Release with tt__table_free. */
int tt__render_rate_table(const struct tt_report *r, const size_t *order, struct tt__table *t);
/* Per context: capacity and the SLO limit with its interval. */
void tt__render_rate_summary(const struct tt_report *r, char *buf, size_t len);
/* CSV columns appended when the report has open-loop cells. */
void tt__render_rate_csv_header(const struct tt_report *r, struct tt_buf *out);
void tt__render_rate_csv_row(const struct tt_report *r, const struct tt_cell_figures *c,
			     struct tt_buf *out);
/* A cell's "open_loop" JSON member (NULL: out of memory). */
cJSON *tt__render_rate_json(const struct tt_report *r, const struct tt_cell_figures *c);

#endif
