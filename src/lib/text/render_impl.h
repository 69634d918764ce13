/* Internal to the text renderers (render*.c): one entry per format and the
 * helpers they share, so every format shows a cell the same way. */
#ifndef TOKENTRACE_RENDER_IMPL_H
#define TOKENTRACE_RENDER_IMPL_H

#include <stddef.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/render.h"

#include "text/table.h"

#define TT_DASH "\xe2\x80\x94" /* "—": a value that is missing or does not apply */

enum tt_code tt__render_md_text(const struct tt_report *r, struct tt_buf *out,
			       struct tt_error *err);
enum tt_code tt__render_term_text(const struct tt_report *r, const struct tt_render_opts *opts,
				 struct tt_buf *out, struct tt_error *err);
enum tt_code tt__render_csv_text(const struct tt_report *r, struct tt_buf *out,
				struct tt_error *err);
enum tt_code tt__render_json_text(const struct tt_report *r, struct tt_buf *out,
				 struct tt_error *err);

/* One CSV text field (RFC 4180 quoting; a leading = + - @ TAB or CR is
 * neutralised with an apostrophe, formats/report-csv.md 1), preceded by a
 * comma unless first; NULL writes an empty field.  Every CSV we write uses
 * it for text. */
void tt__csv_field(struct tt_buf *out, const char *s, int first);

/* Cells in display order: prefill by context, then decode by context and
 * concurrency (report order breaks ties).  Returns a malloc'd array of
 * r->n_cells indices (caller frees), or NULL on allocation failure (or when
 * there are no cells: check r->n_cells). */
size_t *tt__render_order(const struct tt_report *r);

/* The quantiles the report's figures were computed at (the analysis default
 * {90, 99} when the options left them unset); returns the count. */
size_t tt__render_quantiles(const struct tt_report *r, const double **q);
/* "p90", "p99.9": the key of quantile q in percent. */
void tt__render_qkey(double q, char *buf, size_t len);
/* The fewest samples that support percentile p (docs/metrics.md M-pct,
 * "Quantiles from few samples"): 1 for the median, ceil(100 / (100 - p))
 * above it, ceil(100 / p) below. */
size_t tt__render_q_min_n(double p);
/* d's i-th chosen quantile, at p percent: NaN without samples or with too
 * few to support p (printed as unknown: null, empty, a dash). */
double tt__render_q(const struct tt_dist *d, size_t i, double p);
/* Human tables: when d has samples but too few for p, "needs n>=N" (with
 * the sign U+2265) into buf (the reason, in the value's place) and 1; else 0. */
int tt__render_q_short(const struct tt_dist *d, double p, char *buf, size_t len);

/* A manifest note by key, NULL when absent or empty. */
const char *tt__render_note(const struct tt_manifest *m, const char *key);
/* The cell's id: the manifest's, else made up as the run format makes it. */
void tt__render_cell_id(const struct tt_report *r, const struct tt_cell_figures *c, char *buf,
		       size_t len);
/* "8K", "125K" */
void tt__render_context(int64_t context, char *buf, size_t len);
/* An open-loop run's output lengths (formats/run-v1.md 2.4) as the run
 * facts say them: "uniform, 5 to 60 tokens", "from a histogram (f.csv) of
 * 4 bins, ...".  Returns 0 when every request asks max_tokens (buf ""). */
int tt__render_output_lengths(const struct tt_manifest *m, char *buf, size_t len);

/* Whether the seed-report columns of a cell show counts (completed, output
 * tokens) and decode-only figures: not for cells that were not run, and the
 * decode-only figures not for prefill rows. */
int tt__render_has_counts(const struct tt_cell_figures *c);
/* Sorted distinct contexts (want_conc 0) or concurrency levels (1) of the
 * cells of a phase, into vals (room for cap); returns how many (<= cap).
 * Shared by the table renderers and the charts. */
size_t tt__render_distinct(const struct tt_report *r, enum tt_phase phase, int want_conc,
			  int64_t *vals, size_t cap);
int tt__render_has_decode_figures(const struct tt_cell_figures *c);

/* The decode matrix as a grid: entry [i * nconc + j] is the first decode
 * cell at ctxs[i] (sorted) and concs[j] (sorted), or NULL.  One pass over
 * the cells, where looking each entry up was quadratic.  NULL (no grid: the
 * caller leaves the matrix out and says so) when nctx x nconc exceeds
 * TT__RENDER_MAX_GRID or memory is short.  Caller frees. */
#define TT__RENDER_MAX_GRID ((size_t)1 << 20)
const struct tt_cell_figures **tt__render_grid(const struct tt_report *r, const int64_t *ctxs,
					       size_t nctx, const int64_t *concs, size_t nconc);

/* The decode matrix as one table, for every format that shows it whole
 * (md, html, pdf; the terminal splits its two figures into column groups
 * from the same grid): rows are contexts, columns concurrency levels, an
 * entry's lines are the total tok/s, the status when not Valid, "N ms
 * TTFT" and "N errors" (a format joins them as it shows them: md with
 * " · "), a dash for no cell, the status alone for a cell not run.  Tone:
 * the status of a cell that is not Valid.  Returns 0 (t->nrows 0: no
 * decode cell), 1 when the grid is too large to print (TT__RENDER_MAX_GRID;
 * t empty), -1 out of memory; *nctx, *nconc (may be NULL) the sizes. */
int tt__render_matrix_table(const struct tt_report *r, struct tt__table *t, size_t *nctx,
			    size_t *nconc);

/* Plain number with at most `decimals` decimals, trailing zeros dropped,
 * no separators ("959.9", "972", "30"); "" for NaN/inf. */
void tt__fmt_plain(double v, int decimals, char *buf, size_t len);
/* Total tok/s rounded exactly as tt_fmt_rate shows it, written plain:
 * 143100 for "143.1K", 1819.2 for "1,819.2". */
void tt__fmt_rate_plain(double v, char *buf, size_t len);
/* Shortest text that reads back as the same double; "" for NaN/inf. */
void tt__fmt_exact(double v, char *buf, size_t len);

/* The tables beyond the seed's layout, as text cells every format shows
 * alike (render_extra.c): tails (M-stall, chosen quantiles) and goodput
 * under SLOs (M-goodput).  Row 0 is the header; tables are the one model
 * of text/table.h. */
/* The figures people look for by default (issue 24.1): per decode cell its
 * status, requests per second (M-req-rate), the median and chosen
 * quantiles (default p90, p99) of TTFT, time between tokens and E2E
 * latency (M-ttft, M-tbt, M-e2e), and its errors.  Shown without options
 * in every human format. */
#define LATENCY_CAPTION                                                                  \
	"Per decode cell: requests completed per second (Req/s), and the median and "        \
	"tails over requests of TTFT, time between tokens (TBT) and end-to-end latency "     \
	"(E2E: send to the last token of a request that completed in the window), as "      \
	"vllm bench serve and GuideLLM print them (docs/metrics.md M-req-rate, M-ttft, "     \
	"M-tbt, M-e2e)."
int tt__render_latency_table(const struct tt_report *r, const size_t *order, struct tt__table *t);
int tt__render_tails_table(const struct tt_report *r, const size_t *order, struct tt__table *t);
int tt__render_goodput_table(const struct tt_report *r, const size_t *order,
			     struct tt__table *t);
/* Server timings and chunks (M-chunks, M-ttft-parts, M-spec): only when
 * some decode cell has the server's timings or speculative decoding
 * counters, or the tails were asked for (t->nrows is 1 otherwise). */
int tt__render_server_parts_table(const struct tt_report *r, const size_t *order,
				  struct tt__table *t);
/* Prefill cells with several scouts (capture --prefill-repeats): the
 * median and the spread (t->nrows is 1 when every prefill cell has one). */
int tt__render_prefill_repeats_table(const struct tt_report *r, const size_t *order,
				     struct tt__table *t);
/* Reasoning and answer tokens, time to first reasoning / answer token
 * (M-reasoning); nrows 1 unless some decode cell streamed reasoning. */
int tt__render_reasoning_table(const struct tt_report *r, const size_t *order,
			       struct tt__table *t);
/* "TTFT <= 500 ms, time between tokens (p99 of each request) <= 50 ms; a
 * cell meets them when at least 90% of its requests ending in the window do." */
void tt__render_slo_sentence(const struct tt_report *r, char *buf, size_t len);
/* "8K: 64 · 120K: none" (highest concurrency meeting the SLOs per context). */
void tt__render_slo_max_line(const struct tt_report *r, char *buf, size_t len);
/* "the share of per-token gaps over 100 ms" header text: "Gaps > 100 ms". */
void tt__render_stall_head(const struct tt_report *r, char *buf, size_t len);

#endif
