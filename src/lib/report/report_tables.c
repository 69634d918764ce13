/* The report's header facts and tables as plain cells, built once and laid
 * out by both the HTML and the PDF report, so the two show the same text.
 * Numbers use the seed report's style through render.h's formatters and
 * the text renderers' helpers (render_impl.h), so every format agrees. */
#include "tokentrace/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/render.h"

#include "chart/chart_impl.h"
#include "report/tables.h"
#include "text/render_impl.h"
#include "text/render_rate.h"

static char *dupf(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;
static char *dupf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void tt__report_title(const struct tt_report *r, char *buf, size_t len)
{
	char sub[600];
	tt__chart_subtitle(&r->manifest, sub, sizeof sub);
	snprintf(buf, len, "Speed test matrix: %s", sub);
}

/* ---- facts ---------------------------------------------------------- */

static int add_fact(struct fact **f, size_t *n, size_t *cap, const char *group,
		    const char *key, char *value)
{
	if (!value)
		return -1;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		struct fact *nf = realloc(*f, nc * sizeof *nf);
		if (!nf) {
			free(value);
			return -1;
		}
		*f = nf;
		*cap = nc;
	}
	(*f)[(*n)++] = (struct fact){group, key, value};
	return 0;
}

static const char *const shown_notes[] = {
	"hardware", "hardware_type", "gpu", "vram", "cpu", "os", "quantization", "backend",
	"repository", "build", "commit", "revision", "launch_command", "tool", "model_name",
	NULL,
};

static int note_shown(const char *key)
{
	for (size_t i = 0; shown_notes[i]; i++)
		if (strcmp(key, shown_notes[i]) == 0)
			return 1;
	return 0;
}

enum tt_code tt__report_facts(const struct tt_report *r, struct fact **out, size_t *n_out,
			  struct tt_error *err)
{
	const struct tt_manifest *m = &r->manifest;
	struct fact *f = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;
	char num[64];
	static const struct {
		const char *group, *key, *note;
	} notes[] = {
		{"Hardware", "Type", "hardware_type"}, {"Hardware", "Hardware", "hardware"},
		{"Hardware", "GPU", "gpu"},            {"Hardware", "VRAM", "vram"},
		{"Hardware", "CPU", "cpu"},            {"Hardware", "OS", "os"},
	};
	static const struct {
		const char *key, *note;
	} engine_notes[] = {
		{"Quantization", "quantization"}, {"Backend", "backend"},
		{"Repository", "repository"},     {"Build", "build"},
		{"Commit", "commit"},
	};

#define FACT(g, k, v)                                                                          \
	do {                                                                                   \
		if (add_fact(&f, &n, &cap, (g), (k), (v)))                                     \
			bad = 1;                                                               \
	} while (0)
#define NOTE_FACT(g, k, key)                                                                   \
	do {                                                                                   \
		const char *v_ = tt__render_note(m, (key));                                     \
		if (v_)                                                                        \
			FACT((g), (k), dupf("%s", v_));                                        \
	} while (0)

	for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
		NOTE_FACT(notes[i].group, notes[i].key, notes[i].note);
	if (m->engine && *m->engine)
		FACT("Engine", "Engine", dupf("%s", m->engine));
	if (m->engine_version && *m->engine_version)
		FACT("Engine", "Version", dupf("%s", m->engine_version));
	for (size_t i = 0; i < sizeof engine_notes / sizeof engine_notes[0]; i++)
		NOTE_FACT("Engine", engine_notes[i].key, engine_notes[i].note);
	if (m->model && *m->model)
		FACT("Run", "Model", dupf("%s", m->model));
	if (m->served_model && *m->served_model)
		FACT("Run", "Served model", dupf("%s", m->served_model));
	NOTE_FACT("Run", "Revision", "revision");
	NOTE_FACT("Run", "Benchmark tool", "tool");
	if (m->tool_name && *m->tool_name)
		FACT("Run", "Captured by",
		     dupf("%s %s", m->tool_name, m->tool_version ? m->tool_version : ""));
	if (m->created && *m->created)
		FACT("Run", "Created", dupf("%s", m->created));
	if (m->endpoint && *m->endpoint)
		FACT("Run", "Endpoint", dupf("/v1/%s", strcmp(m->endpoint, "chat") == 0
							  ? "chat/completions"
							  : "completions"));
	if (m->duration_s > 0) {
		tt_fmt_fixed1(m->duration_s, num, sizeof num);
		FACT("Run", "Time per measurement", dupf("%s s", num));
	}
	if (m->max_tokens > 0) {
		tt_fmt_int((double)m->max_tokens, num, sizeof num);
		FACT("Run", "Max output", dupf("%s tokens", num));
	}
	/* open loop: each request's own max_tokens (formats/run-v1.md 2.4) */
	{
		char lengths[600];
		if (tt__render_output_lengths(m, lengths, sizeof lengths))
			FACT("Run", "Output lengths", dupf("%s", lengths));
	}
	if (m->kv_capacity_tokens > 0) {
		tt_fmt_int((double)m->kv_capacity_tokens, num, sizeof num);
		FACT("Run", "KV capacity",
		     dupf("%s tokens (%s)", num,
			  m->kv_capacity_source ? m->kv_capacity_source : "unknown source"));
	}
	for (size_t i = 0; i < m->n_notes; i++) {
		const struct tt_note *nt = &m->notes[i];
		if (!nt->key || !nt->value || !*nt->value || note_shown(nt->key))
			continue;
		FACT("Run", nt->key, dupf("%s", nt->value));
	}
	NOTE_FACT("Launch command", "", "launch_command");
#undef FACT
#undef NOTE_FACT
	if (bad) {
		tt__facts_free(f, n);
		return tt_error_set(err, TT_ENOMEM, "out of memory laying out the report");
	}
	*out = f;
	*n_out = n;
	return TT_OK;
}

void tt__facts_free(struct fact *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		free(f[i].value);
	free(f);
}

/* ---- tables --------------------------------------------------------- */

/* A new table at the end of *all: n_rows data rows under its header row
 * (the model's row 0), titled.  NULL out of memory. */
static struct tt__table *table_new(struct tt__table **all, size_t *n, const char *title,
				   const char *caption, size_t n_cols, size_t n_rows)
{
	struct tt__table *nt = realloc(*all, (*n + 1) * sizeof *nt), *t;
	if (!nt)
		return NULL;
	*all = nt;
	t = &nt[*n];
	if (tt__table_init(t, n_cols))
		return NULL;
	(*n)++;
	t->nrows = n_rows + 1;
	if (tt__table_text(t, title, caption, NULL))
		return NULL;
	return t;
}

void tt__tables_free(struct tt__table *t, size_t n)
{
	for (size_t k = 0; t && k < n; k++)
		tt__table_free(&t[k]);
	free(t);
}

/* Data row `row` (0 the first under the header), column col: s, owned
 * and freed here; -1 when s is NULL (out of memory). */
static int set_cell(struct tt__table *t, size_t row, size_t col, char *s)
{
	if (!s)
		return -1;
	tt__table_set(t, row + 1, col, s, TT__TONE_NONE);
	free(s);
	return 0;
}

static void set_head(struct tt__table *t, size_t col, const char *s)
{
	tt__table_set(t, 0, col, s, TT__TONE_NONE);
}

static char *status_legend(const struct tt_report *r)
{
	int seen[TT_STATUS_COUNT_] = {0};
	struct tt_buf b;
	char *s;
	tt_buf_init(&b, 0);
	for (size_t i = 0; i < r->n_cells; i++)
		if ((int)r->cells[i].status > 0 && r->cells[i].status < TT_STATUS_COUNT_)
			seen[r->cells[i].status] = 1;
	for (int k = 1; k < TT_STATUS_COUNT_; k++)
		if (seen[k])
			tt_buf_printf(&b, "%s%s", b.len ? " " : "",
				      tt_status_legend((enum tt_status)k));
	if (b.len == 0) {
		tt_buf_release(&b);
		return NULL;
	}
	s = tt_buf_steal(&b, NULL);
	return s;
}

/* Each table_* below adds one table to *all (*n of them): it returns -1
 * when the table itself could not be made, and sets *bad when one of its
 * cells could not; tt__report_tables turns either into TT_ENOMEM. */

static int table_prefill(const struct tt_report *r, const size_t *order, size_t n_pre,
			 struct tt__table **all, size_t *n, int *bad)
{
	size_t row = 0;
	struct tt__table *t = table_new(all, n, "Prefill", "Prompt tok/s by context length: one cold "
							"request per context.",
				    4, n_pre);
	if (!t)
		return -1;
	set_head(t, 0, "Context");
	set_head(t, 1, "Prompt tok/s");
	set_head(t, 2, "TTFT");
	set_head(t, 3, "Status");
	t->align[1] = t->align[2] = TT__ALIGN_RIGHT;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char a[64], b[64];
		if (c->phase != TT_PHASE_PREFILL)
			continue;
		tt__render_context(c->context, a, sizeof a);
		*bad |= set_cell(t, row, 0, dupf("%s", a));
		if (tt__render_has_counts(c)) {
			tt_fmt_rate(c->total_tok_s, a, sizeof a);
			tt_fmt_ms(c->ttft_ms.p50, b, sizeof b);
		} else {
			snprintf(a, sizeof a, TT_DASH);
			snprintf(b, sizeof b, TT_DASH);
		}
		*bad |= set_cell(t, row, 1, dupf("%s", a));
		*bad |= set_cell(t, row, 2, dupf("%s", b));
		*bad |= set_cell(t, row, 3, dupf("%s", tt_status_name(c->status)));
		t->row_status[row + 1] = (int)c->status;
		row++;
	}
	return 0;
}

static int table_extra(struct tt__table *x, const char *title, const char *caption,
		       const char *note, struct tt__table **all, size_t *n, int *bad);

/* The decode matrix (tt__render_matrix_table, as md shows it): none when
 * there is no decode cell or it is too large to print. */
static int table_decode(const struct tt_report *r, struct tt__table **all, size_t *n, int *bad)
{
	struct tt__table t;
	char *legend;
	int rc = tt__render_matrix_table(r, &t, NULL, NULL);

	if (rc < 0)
		return -1;
	if (rc == 1)
		return 0;
	legend = status_legend(r);
	rc = table_extra(&t, "Sustained decode",
			 "Total tok/s, rows are context length, columns are simultaneous "
			 "requests; median TTFT below.",
			 legend, all, n, bad);
	free(legend);
	tt__table_free(&t);
	return rc;
}

#define ALL_COLS 12

/* One row of "All measurements": a dash where a figure is unknown. */
static void measurement_row(const struct tt_cell_figures *c, char v[ALL_COLS][64])
{
	int counts = tt__render_has_counts(c), dec = tt__render_has_decode_figures(c);
	for (size_t j = 0; j < ALL_COLS; j++)
		snprintf(v[j], sizeof v[j], TT_DASH);
	snprintf(v[0], sizeof v[0], "%s",
		 c->phase == TT_PHASE_PREFILL ? "Prefill"
		 : c->phase == TT_PHASE_RATE  ? "Open loop"
					      : "Sustained decode");
	tt__render_context(c->context, v[1], sizeof v[1]);
	if (c->phase == TT_PHASE_RATE) /* no fixed number at once: its rate */
		tt__render_rate(c->rate, v[2], sizeof v[2]);
	else
		snprintf(v[2], sizeof v[2], "%d", c->concurrency);
	snprintf(v[3], sizeof v[3], "%s", tt_status_name(c->status));
	if (counts) {
		tt_fmt_rate(c->total_tok_s, v[4], sizeof v[4]);
		tt_fmt_ms(c->ttft_ms.p50, v[6], sizeof v[6]);
		if (c->completed >= 0)
			tt_fmt_int((double)c->completed, v[9], sizeof v[9]);
	}
	if (dec) {
		tt_fmt_rate(c->per_request_tok_s.p50, v[5], sizeof v[5]);
		if (isfinite(c->tbt_ms.p50)) {
			tt_fmt_fixed1(c->tbt_ms.p50, v[7], sizeof v[7] - 4);
			strcat(v[7], " ms");
		}
		tt_fmt_fixed1(c->avg_active, v[8], sizeof v[8]);
		if (c->output_tokens >= 0)
			tt_fmt_int((double)c->output_tokens, v[10], sizeof v[10]);
		if (isfinite(c->measured_s)) {
			tt_fmt_fixed1(c->measured_s, v[11], sizeof v[11] - 3);
			strcat(v[11], " s");
		}
	}
}

static int table_measurements(const struct tt_report *r, const size_t *order,
			      struct tt__table **all, size_t *n, int *bad)
{
	static const char *const head[ALL_COLS] = {
		"Phase", "Context", "Requests at once", "Status", "Total tok/s",
		"Per request tok/s", "TTFT", "Time between tokens", "Average active requests",
		"Completed requests", "Output tokens", "Measured for"};
	struct tt__table *t = table_new(all, n, "All measurements",
				    "Latencies are medians. Total tok/s is output across all "
				    "simultaneous requests. Per request tok/s is the median over "
				    "requests.",
				    ALL_COLS, r->n_cells);
	if (!t)
		return -1;
	for (size_t j = 0; j < ALL_COLS; j++) {
		set_head(t, j, head[j]);
		t->align[j] = (j == 0 || j == 3) ? TT__ALIGN_LEFT : TT__ALIGN_RIGHT;
	}
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char v[ALL_COLS][64];
		measurement_row(c, v);
		for (size_t j = 0; j < ALL_COLS; j++)
			*bad |= set_cell(t, i, j, dupf("%s", v[j]));
		t->row_status[i + 1] = (int)c->status;
	}
	t->note = status_legend(r);
	return 0;
}

static int table_not_valid(const struct tt_report *r, const size_t *order, size_t n_bad,
			   struct tt__table **all, size_t *n, int *bad)
{
	size_t row = 0;
	struct tt__table *t = table_new(all, n, "Cells that are not Valid",
				    "Each status with the evidence that decided it.", 3, n_bad);
	if (!t)
		return -1;
	set_head(t, 0, "Cell");
	set_head(t, 1, "Status");
	set_head(t, 2, "Why");
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char id[96];
		if (c->status == TT_STATUS_VALID)
			continue;
		tt__render_cell_id(r, c, id, sizeof id);
		*bad |= set_cell(t, row, 0, dupf("%s", id));
		*bad |= set_cell(t, row, 1, dupf("%s", tt_status_name(c->status)));
		*bad |= set_cell(t, row, 2, dupf("%s", c->reason[0] ? c->reason : TT_DASH));
		t->row_status[row + 1] = (int)c->status;
		row++;
	}
	return 0;
}

/* A table beyond the seed's layout (text/render_extra.c): the model
 * itself moves to the end of *all, titled; x is left empty (freeing it is
 * harmless).  Nothing when it has no data row. */
static int table_extra(struct tt__table *x, const char *title, const char *caption,
		       const char *note, struct tt__table **all, size_t *n, int *bad)
{
	struct tt__table *nt;

	if (x->nrows < 2)
		return 0;
	nt = realloc(*all, (*n + 1) * sizeof *nt);
	if (!nt)
		return -1;
	*all = nt;
	nt[*n] = *x;
	memset(x, 0, sizeof *x);
	*bad |= tt__table_text(&nt[*n], title, caption, note) != 0;
	(*n)++;
	return 0;
}

/* Tails (with --quantiles/--stalls) and goodput (with --slo). */
static int tables_extra(const struct tt_report *r, const size_t *order, struct tt__table **all,
			size_t *n, int *bad)
{
	struct tt__table x;
	char text[1024], line[768], head[64];
	int rc = 0;

	/* the default figures (issue 24.1): every report shows them */
	if (tt__render_latency_table(r, order, &x))
		return -1;
	rc = table_extra(&x, "Latency and request rate", LATENCY_CAPTION, NULL, all, n, bad);
	tt__table_free(&x);
	if (!rc && tt__render_has_rate_cells(r)) {
		/* open-loop cells (text/render_rate.c, docs/metrics.md M-rate) */
		if (tt__render_rate_table(r, order, &x))
			return -1;
		tt__render_rate_summary(r, line, sizeof line);
		rc = table_extra(&x, "Open-loop cells",
				 "Requests sent at a rate, on schedule: latencies from the due time "
				 "(what a user waited) beside those from the send; Late is the send "
				 "lateness.", line[0] ? line : NULL, all, n, bad);
		tt__table_free(&x);
	}
	if (!rc && r->opts.show_tails) {
		if (tt__render_tails_table(r, order, &x))
			return -1;
		tt__render_stall_head(r, head, sizeof head);
		snprintf(text, sizeof text,
			 "TTFT and time between tokens at the chosen percentiles; the longest "
			 "stall is the largest gap between two chunks of one request; %s is the "
			 "share of per-token gaps over the threshold.", head);
		rc = table_extra(&x, "Tails", text, NULL, all, n, bad);
		tt__table_free(&x);
	}
	if (!rc) {
		if (tt__render_prefill_repeats_table(r, order, &x))
			return -1;
		rc = table_extra(&x, "Prefill repeats",
				 "Prefill cells measured with several cold scouts: the median the "
				 "tables show, and the spread ((max - min) / median).",
				 NULL, all, n, bad);
		tt__table_free(&x);
	}
	if (!rc) {
		if (tt__render_reasoning_table(r, order, &x))
			return -1;
		rc = table_extra(&x, "Reasoning",
				 "Output tokens in the window streamed as reasoning and as the "
				 "answer; median time from send to the first reasoning token and "
				 "to the first answer token.",
				 NULL, all, n, bad);
		tt__table_free(&x);
	}
	if (!rc) {
		if (tt__render_server_parts_table(r, order, &x))
			return -1;
		rc = table_extra(&x, "Where TTFT goes, and tokens per chunk",
				 "Mean output tokens per chunk and the share of chunks carrying "
				 "more than one; the client's mean TTFT split into the server's "
				 "mean queue and prefill times over the window and the rest "
				 "(network, client), which add up to the TTFT beside them: the "
				 "mean over the requests the server's histograms count (where "
				 "none finished between the scrapes, Rest is unknown and TTFT is "
				 "the mean over every request); speculative decoding acceptance and tokens "
				 "per verification step, from the server's counters.",
				 NULL, all, n, bad);
		tt__table_free(&x);
	}
	if (!rc && tt_slo_active(&r->opts.slo)) {
		if (tt__render_goodput_table(r, order, &x))
			return -1;
		tt__render_slo_sentence(r, text, sizeof text);
		tt__render_slo_max_line(r, line, sizeof line);
		snprintf(head, sizeof head, "Highest concurrency meeting the SLOs: ");
		{
			char note[900];
			snprintf(note, sizeof note, "%s%s.", head, line);
			rc = table_extra(&x, "Goodput under SLOs", text, note, all, n, bad);
		}
		tt__table_free(&x);
	}
	return rc;
}

enum tt_code tt__report_tables(const struct tt_report *r, struct tt__table **out, size_t *n_out,
			   struct tt_error *err)
{
	struct tt__table *all = NULL;
	size_t n = 0, *order = NULL, n_pre = 0, n_dec = 0, n_bad = 0;
	int bad = 0;

	if (r->n_cells) {
		order = tt__render_order(r);
		if (!order)
			goto oom;
	}
	for (size_t i = 0; i < r->n_cells; i++) {
		if (r->cells[i].phase == TT_PHASE_PREFILL)
			n_pre++;
		else
			n_dec++;
		if (r->cells[i].status != TT_STATUS_VALID)
			n_bad++;
	}
	if (n_pre && table_prefill(r, order, n_pre, &all, &n, &bad))
		goto oom;
	if (n_dec && table_decode(r, &all, &n, &bad))
		goto oom;
	if (r->n_cells && table_measurements(r, order, &all, &n, &bad))
		goto oom;
	if (n_bad && table_not_valid(r, order, n_bad, &all, &n, &bad))
		goto oom;
	if (r->n_cells && tables_extra(r, order, &all, &n, &bad))
		goto oom;
	for (size_t k = 0; k < n; k++)
		bad |= tt__table_failed(&all[k]);
	if (bad)
		goto oom;
	free(order);
	*out = all;
	*n_out = n;
	return TT_OK;
oom:
	free(order);
	tt__tables_free(all, n);
	return tt_error_set(err, TT_ENOMEM, "out of memory laying out the report tables");
}

/* ---- which charts a report shows ------------------------------------ */

size_t tt__report_chart_list(const struct tt_report *r, struct tt_run *run,
			 struct tt_chart_opts *out, size_t cap)
{
	static const enum tt_chart_kind decode_kinds[] = {
		TT_CHART_HEATMAP, TT_CHART_THROUGHPUT, TT_CHART_PER_REQUEST, TT_CHART_TRADEOFF,
		TT_CHART_TTFT,    TT_CHART_TBT};
	static const enum tt_chart_kind rate_kinds[] = {
		TT_CHART_RATE_LATENCY, TT_CHART_RATE_THROUGHPUT, TT_CHART_RATE_GOODPUT};
	size_t n = 0;
	int has_pre = 0, has_dec = 0, has_rate = 0;
	for (size_t i = 0; i < r->n_cells; i++) {
		/* open-loop cells have their own charts whatever their figures:
		 * each chart says so when there is nothing to draw */
		if (r->cells[i].phase == TT_PHASE_RATE)
			has_rate = 1;
		if (!tt__chart_cell_has_value(&r->cells[i]))
			continue;
		if (r->cells[i].phase == TT_PHASE_PREFILL)
			has_pre = 1;
		else if (r->cells[i].phase == TT_PHASE_DECODE)
			has_dec = 1;
	}
	for (size_t k = 0; has_dec && k < sizeof decode_kinds / sizeof decode_kinds[0]; k++) {
		if (n == cap)
			return n;
		tt_chart_opts_init(&out[n]);
		out[n++].kind = decode_kinds[k];
	}
	if (has_pre && n < cap) {
		tt_chart_opts_init(&out[n]);
		out[n++].kind = TT_CHART_PREFILL;
	}
	/* where TTFT goes: says so when the run has no server timings */
	if (has_dec && n < cap) {
		tt_chart_opts_init(&out[n]);
		out[n++].kind = TT_CHART_TTFT_PARTS;
	}
	if (run && has_dec) {
		if (n < cap) {
			tt_chart_opts_init(&out[n]);
			out[n++].kind = TT_CHART_TIMELINE;
		}
		if (n < cap) {
			tt_chart_opts_init(&out[n]);
			out[n++].kind = TT_CHART_TBT_CDF;
		}
	}
	/* open loop (docs/charts.md "Open-loop charts"), the SLO limit shaded
	 * when the report has SLOs */
	for (size_t k = 0; has_rate && k < sizeof rate_kinds / sizeof rate_kinds[0]; k++) {
		if (n == cap)
			return n;
		tt_chart_opts_init(&out[n]);
		out[n++].kind = rate_kinds[k];
	}
	return n;
}
