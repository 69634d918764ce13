/* Internal to lib/diffview: one entry per format. */
#ifndef TT_DIFFVIEW_IMPL_H
#define TT_DIFFVIEW_IMPL_H

#include "tokentrace/diffview.h"

/* JSON, schema "tokentrace-diff" (formats/diff-json.md). */
enum tt_code tt__diff_render_json(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				 struct tt_buf *out, struct tt_error *err);

/* A figure's verdict, with its basis when a side is not its own samples'
 * bootstrap ("no significant change [point/samples]"). */
void tt__diff_verdict_text(const struct tt_diff_value *v, char *buf, size_t len);

/* A side's status of a cell (cand: the candidate's), docs/diff.md "Status
 * with replicates": the status its runs agree on, or, when they disagree,
 * every status with its count of runs ("Mixed: 2 Valid, 1 Requests
 * queued"); keys: the keys instead ("valid"; "mixed:valid|requests_queued",
 * formats/diff-csv-v1.md).  Returns buf. */
const char *tt__diff_status_text(const struct tt_diff_cell *c, int cand, int keys, char *buf,
				 size_t len);

/* The method in one paragraph, for every format. */
void tt__diff_method_text(const struct tt_diff *d, char *line, size_t len);
/* Open-loop curves of the two sides (diffview_rate.c), appended to the
 * term and md tables when a side has open-loop cells; -1 out of memory. */
int tt__diff_render_rate(const struct tt_diff *d, int md, struct tt_buf *out);
/* The same as text for the HTML and PDF pages: the contexts either side
 * measured at a rate (sorted; none: no open-loop cell), per context the
 * rows, one per rate either side measured (rate, requests/s ended base and
 * candidate, TTFT p50 from the due time base and candidate, p99 the same,
 * status base and candidate; a dash where a side has no such cell), and
 * each side's capacity and SLO limit (docs/diff.md "Open-loop curves"). */
#define TT__DIFF_RATE_COLS 9
size_t tt__diff_rate_contexts(const struct tt_diff *d, int64_t *ctx, size_t cap);
size_t tt__diff_rate_rows(const struct tt_diff *d, int64_t ctx,
			  char (*rows)[TT__DIFF_RATE_COLS][48], size_t cap);
void tt__diff_rate_summary(const struct tt_diff *d, int64_t ctx, char capacity[2][48],
			   char limit[2][64]);

#endif
