/* Markdown report in the seed report's layout (docs/report.md): header
 * block, Hardware/Engine/Run facts, launch command, prefill table, decode
 * matrix, legend with evidence, all measurements.
 *
 * Appends ignore their result: tt_buf failures are sticky and tt_render
 * checks out->failed once at the end. */
#include "text/render_impl.h"
#include "text/render_rate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIDDOT " \xc2\xb7 " /* " · " */
#define TIMES " \xc3\x97 "  /* " × " */
#define ENDASH "\xe2\x80\x93" /* "–" */

/* Text from the run, escaped as the md table writer escapes it. */
#define md_text tt__md_text

static void item(struct tt_buf *out, const char *label, const char *value)
{
	if (!value || !*value)
		return;
	/* The label may be a note key from the run: escaped like any text. */
	tt_buf_puts(out, "- **");
	md_text(out, label);
	tt_buf_puts(out, ":** ");
	md_text(out, value);
	tt_buf_puts(out, "\n");
}

static void item_code(struct tt_buf *out, const char *label, const char *value)
{
	if (!value || !*value)
		return;
	if (strchr(value, '`') || strchr(value, '\n')) {
		item(out, label, value);
		return;
	}
	tt_buf_printf(out, "- **%s:** `%s`\n", label, value);
}

/* ---- header ------------------------------------------------------------ */


static void model_title(const struct tt_manifest *m, struct tt_buf *out)
{
	const char *model = tt__render_note(m, "model_name");
	const char *slash;

	if (!model)
		model = m->model && *m->model ? m->model : m->served_model;
	if (!model || !*model)
		model = "unknown model";
	/* The seed shows the model without its organisation ("LFM2.5-350M"). */
	slash = strrchr(model, '/');
	if (slash && slash[1])
		model = slash + 1;
	tt_buf_puts(out, "**");
	md_text(out, model);
	tt_buf_puts(out, "**");
}

static void hardware_title(const struct tt_manifest *m, struct tt_buf *out)
{
	const char *hw = tt__render_note(m, "hardware");
	const char *gpu = tt__render_note(m, "gpu"), *vram = tt__render_note(m, "vram");
	const char *p;

	if (hw) {
		tt_buf_puts(out, " on ");
		md_text(out, hw);
		return;
	}
	if (!gpu)
		return;
	tt_buf_puts(out, " on ");
	md_text(out, gpu);
	if (vram) {
		/* "141 GB" joins the GPU name as "141GB", as the seed writes it */
		char compact[64];
		size_t o = 0;

		for (p = vram; *p && o + 1 < sizeof compact; p++)
			if (*p != ' ')
				compact[o++] = *p;
		compact[o] = '\0';
		tt_buf_puts(out, " ");
		md_text(out, compact);
	}
}

static void range_summary(struct tt_buf *out, const int64_t *v, size_t n, const char *one,
			  const char *many, int tokens)
{
	char a[32], b[32];

	if (tokens) {
		tt__render_context(v[0], a, sizeof a);
		tt__render_context(v[n - 1], b, sizeof b);
	} else {
		snprintf(a, sizeof a, "%lld", (long long)v[0]);
		snprintf(b, sizeof b, "%lld", (long long)v[n - 1]);
	}
	if (n == 1)
		tt_buf_printf(out, "1 %s (%s)", one, a);
	else
		tt_buf_printf(out, "%zu %s (%s" ENDASH "%s)", n, many, a, b);
}

static void header(const struct tt_report *r, int64_t *scratch, struct tt_buf *out)
{
	const struct tt_manifest *m = &r->manifest;
	const char *parts[3];
	size_t n, i, np = 0;
	int any = 0;

	tt_buf_puts(out, "# Speed test matrix\n\n");
	model_title(m, out);
	hardware_title(m, out);
	tt_buf_puts(out, "\n\n");

	parts[0] = m->engine;
	parts[1] = m->engine_version;
	parts[2] = tt__render_note(m, "quantization");
	for (i = 0; i < 3; i++) {
		if (!parts[i] || !*parts[i])
			continue;
		if (np++)
			tt_buf_puts(out, MIDDOT);
		md_text(out, parts[i]);
	}
	if (np)
		tt_buf_puts(out, "\n\n");

	n = tt__render_distinct(r, TT_PHASE_DECODE, 0, scratch, r->n_cells);
	if (n) {
		range_summary(out, scratch, n, "context", "contexts", 1);
		tt_buf_puts(out, TIMES);
		n = tt__render_distinct(r, TT_PHASE_DECODE, 1, scratch, r->n_cells);
		range_summary(out, scratch, n, "concurrency level", "concurrency levels", 0);
		any = 1;
	}
	n = tt__render_distinct(r, TT_PHASE_PREFILL, 0, scratch, r->n_cells);
	if (n) {
		tt_buf_puts(out, any ? MIDDOT "prefill at " : "prefill at ");
		for (i = 0; i < n; i++) {
			char ctx[32];

			tt__render_context(scratch[i], ctx, sizeof ctx);
			tt_buf_printf(out, "%s%s", i ? ", " : "", ctx);
		}
		any = 1;
	}
	if (any)
		tt_buf_puts(out, "\n\n");
}

/* ---- facts from the manifest ------------------------------------------ */

static const char *const known_notes[] = {
	"hardware", "hardware_type", "gpu", "vram", "os", "cpu", "quantization", "backend",
	"repository", "build", "commit", "revision", "launch_command", "tool", "decode_test",
	"prefill_mode", "model_name", NULL,
};

static int is_known_note(const char *key)
{
	size_t i;

	for (i = 0; known_notes[i]; i++)
		if (strcmp(key, known_notes[i]) == 0)
			return 1;
	return 0;
}

static void section(struct tt_buf *out, const char *title, size_t *mark)
{
	tt_buf_printf(out, "## %s\n\n", title);
	*mark = out->len;
}

/* Drop a section heading that got no items. */
static void end_section(struct tt_buf *out, const char *title, size_t mark)
{
	size_t head = strlen(title) + 5; /* "## " title "\n\n" */

	if (out->len == mark && !out->failed && mark >= head) {
		out->len = mark - head;
		out->data[out->len] = '\0';
		return;
	}
	tt_buf_puts(out, "\n");
}

static void facts(const struct tt_report *r, int has_decode, struct tt_buf *out)
{
	const struct tt_manifest *m = &r->manifest;
	char num[64], text[256];
	const char *cmd;
	size_t mark, i;

	section(out, "Hardware", &mark);
	item(out, "Type", tt__render_note(m, "hardware_type"));
	item(out, "GPU", tt__render_note(m, "gpu"));
	item(out, "VRAM", tt__render_note(m, "vram"));
	item(out, "CPU", tt__render_note(m, "cpu"));
	item(out, "OS", tt__render_note(m, "os"));
	end_section(out, "Hardware", mark);

	section(out, "Engine", &mark);
	item(out, "Engine", m->engine);
	item(out, "Version", m->engine_version);
	item(out, "Quantization", tt__render_note(m, "quantization"));
	item(out, "Backend", tt__render_note(m, "backend"));
	item(out, "Repository", tt__render_note(m, "repository"));
	item(out, "Build", tt__render_note(m, "build"));
	item_code(out, "Commit", tt__render_note(m, "commit"));
	end_section(out, "Engine", mark);

	section(out, "Run", &mark);
	item(out, "Served model", m->served_model);
	item(out, "Revision", tt__render_note(m, "revision"));
	if (tt__render_note(m, "tool")) {
		item(out, "Benchmark tool", tt__render_note(m, "tool"));
	} else if (m->tool_name) {
		snprintf(text, sizeof text, "%s%s%s", m->tool_name, m->tool_version ? " v" : "",
			 m->tool_version ? m->tool_version : "");
		item(out, "Benchmark tool", text);
	}
	/* what the run records (issue 24.6): a closed-loop cell runs for a
	 * fixed duration; open-loop cells send at a rate */
	if (tt__render_note(m, "decode_test"))
		item(out, "Decode test", tt__render_note(m, "decode_test"));
	else if (has_decode && tt__render_has_rate_cells(r))
		item(out, "Decode test", "Fixed duration; open loop (requests sent at a rate)");
	else if (has_decode)
		item(out, "Decode test", "Fixed duration");
	else if (tt__render_has_rate_cells(r))
		item(out, "Decode test", "Open loop (requests sent at a rate)");
	item(out, "Prefill mode", tt__render_note(m, "prefill_mode"));
	if ((has_decode || tt__render_has_rate_cells(r)) && m->duration_s > 0) {
		tt__fmt_plain(m->duration_s, 3, num, sizeof num);
		snprintf(text, sizeof text, "%s s", num);
		item(out, "Time per measurement", text);
	}
	if (m->max_tokens > 0) {
		tt_fmt_int((double)m->max_tokens, num, sizeof num);
		snprintf(text, sizeof text, "%s tokens", num);
		item(out, "Max output", text);
	}
	/* open loop: each request's own max_tokens (formats/run-v1.md 2.4) */
	if (tt__render_output_lengths(m, text, sizeof text))
		item(out, "Output lengths", text);
	item(out, "Endpoint", m->endpoint);
	if (m->kv_capacity_tokens >= 0) {
		tt_fmt_int((double)m->kv_capacity_tokens, num, sizeof num);
		snprintf(text, sizeof text, "%s tokens%s%s%s", num,
			 m->kv_capacity_source ? " (" : "",
			 m->kv_capacity_source ? m->kv_capacity_source : "",
			 m->kv_capacity_source ? ")" : "");
		item(out, "KV cache capacity", text);
	}
	if (r->opts.skip_first_s > 0 || r->opts.window_s > 0) {
		char skip[32], win[32];

		tt__fmt_plain(r->opts.skip_first_s, 3, skip, sizeof skip);
		tt__fmt_plain(r->opts.window_s, 3, win, sizeof win);
		if (r->opts.window_s > 0)
			snprintf(text, sizeof text, "skip first %s s, at most %s s", skip, win);
		else
			snprintf(text, sizeof text, "skip first %s s", skip);
		item(out, "Analysis window", text);
	}
	item(out, "Started", m->created);
	for (i = 0; i < m->n_notes; i++)
		if (m->notes[i].key && !is_known_note(m->notes[i].key))
			item(out, m->notes[i].key, m->notes[i].value);
	end_section(out, "Run", mark);

	cmd = tt__render_note(m, "launch_command");
	if (cmd) {
		/* A fence longer than any backtick run inside keeps the command verbatim. */
		size_t run = 0, longest = 0, fence;
		const char *p;

		for (p = cmd; *p; p++) {
			run = *p == '`' ? run + 1 : 0;
			if (run > longest)
				longest = run;
		}
		fence = longest >= 3 ? longest + 1 : 3;
		tt_buf_puts(out, "## Launch command\n\n");
		for (i = 0; i < fence; i++)
			tt_buf_puts(out, "`");
		tt_buf_puts(out, "\n");
		tt_buf_puts(out, cmd);
		tt_buf_puts(out, cmd[strlen(cmd) - 1] == '\n' ? "" : "\n");
		for (i = 0; i < fence; i++)
			tt_buf_puts(out, "`");
		tt_buf_puts(out, "\n\n");
	}
}

/* ---- tables ------------------------------------------------------------ */

/* One matrix or prefill entry: the rate, the status when not Valid, TTFT. */
static void cell_summary(const struct tt_cell_figures *c, int with_ttft_word, struct tt_buf *out)
{
	char rate[64], ttft[64];

	if (!tt__render_has_counts(c)) {
		md_text(out, tt_status_name(c->status));
		return;
	}
	tt_fmt_rate(c->total_tok_s, rate, sizeof rate);
	tt_fmt_ms(c->ttft_ms.p50, ttft, sizeof ttft);
	tt_buf_puts(out, rate);
	if (c->status != TT_STATUS_VALID) {
		tt_buf_puts(out, MIDDOT);
		md_text(out, tt_status_name(c->status));
	}
	if (with_ttft_word)
		tt_buf_printf(out, MIDDOT "%s TTFT", ttft);
	if (c->errors > 0)
		tt_buf_printf(out, MIDDOT "%ld error%s", c->errors, c->errors == 1 ? "" : "s");
}

static void prefill_table(const struct tt_report *r, const size_t *order, struct tt_buf *out)
{
	size_t i;

	tt_buf_puts(out, "## Prefill\n\nprompt tok/s by context length\n\n"
			 "| Context | Prompt tok/s | TTFT |\n|---|---|---|\n");
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char ctx[32], ttft[64];

		if (c->phase != TT_PHASE_PREFILL)
			continue;
		tt__render_context(c->context, ctx, sizeof ctx);
		tt_buf_printf(out, "| %s | ", ctx);
		cell_summary(c, 0, out);
		if (tt__render_has_counts(c))
			tt_fmt_ms(c->ttft_ms.p50, ttft, sizeof ttft);
		else
			snprintf(ttft, sizeof ttft, "%s", TT_DASH);
		tt_buf_printf(out, " | %s |\n", ttft);
	}
	tt_buf_puts(out, "\n");
}

/* The decode matrix (tt__render_matrix_table) in the seed's layout: every
 * column's rule "---", an entry's lines joined with " · ". */
static int decode_matrix(const struct tt_report *r, struct tt_buf *out)
{
	struct tt__table t;
	size_t nctx, nconc;
	int rc = tt__render_matrix_table(r, &t, &nctx, &nconc);

	if (rc < 0)
		return -1;
	if (rc == 1) {
		tt_buf_printf(out, "## Sustained decode\n\nThe matrix (%zu contexts by %zu "
			      "concurrency levels) is left out: too large to print.\n\n", nctx, nconc);
		return 0;
	}
	tt_buf_puts(out, "## Sustained decode\n\ntotal tok/s" MIDDOT
			 "rows are context length, columns are simultaneous requests\n\n");
	for (size_t i = 0; i < t.nrows; i++) {
		tt_buf_puts(out, "|");
		for (size_t j = 0; j < t.ncols; j++) {
			const char *e = tt__table_get(&t, i, j), *nl;

			tt_buf_puts(out, " ");
			for (; (nl = strchr(e, '\n')); e = nl + 1) {
				char part[128];
				snprintf(part, sizeof part, "%.*s", (int)(nl - e), e);
				md_text(out, part);
				tt_buf_puts(out, MIDDOT);
			}
			md_text(out, e);
			tt_buf_puts(out, " |");
		}
		tt_buf_puts(out, "\n");
		if (i == 0) {
			tt_buf_puts(out, "|");
			for (size_t j = 0; j < t.ncols; j++)
				tt_buf_puts(out, "---|");
			tt_buf_puts(out, "\n");
		}
	}
	tt_buf_puts(out, "\n");
	tt__table_free(&t);
	return 0;
}

/* The statuses that occur, Valid aside, each with its one-sentence legend. */
static void legend(const struct tt_report *r, struct tt_buf *out)
{
	int seen[TT_STATUS_COUNT_] = {0};
	size_t i, n = 0;
	int s;

	for (i = 0; i < r->n_cells; i++)
		if ((int)r->cells[i].status > 0 && r->cells[i].status < TT_STATUS_COUNT_)
			seen[r->cells[i].status] = 1;
	for (s = 1; s < TT_STATUS_COUNT_; s++) {
		if (!seen[s])
			continue;
		/* the legend sentence starts with the status name */
		tt_buf_puts(out, n++ ? " " : "");
		md_text(out, tt_status_legend((enum tt_status)s));
	}
	if (n)
		tt_buf_puts(out, "\n\n");
}

/* Each cell that is not Valid, with the evidence that decided it. */
static void evidence_notes(const struct tt_report *r, const size_t *order, struct tt_buf *out)
{
	size_t i, n = 0;

	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[order[i]];
		char ctx[32];

		if (!tt__render_cell_listed(c))
			continue;
		tt__render_context(c->context, ctx, sizeof ctx);
		if (c->phase == TT_PHASE_PREFILL) {
			tt_buf_printf(out, "- Prefill at %s: ", ctx);
		} else if (c->phase == TT_PHASE_RATE) {
			char rate[32];
			tt__render_rate(c->rate, rate, sizeof rate);
			tt_buf_printf(out, "- %s context at %s: ", ctx, rate);
		} else
			tt_buf_printf(out, "- %s context" TIMES "%d request%s: ", ctx, c->concurrency,
				      c->concurrency == 1 ? "" : "s");
		md_text(out, tt_status_name(c->status));
		if (c->reason[0]) {
			tt_buf_puts(out, MIDDOT);
			md_text(out, c->reason);
		}
		tt_buf_puts(out, "\n");
		n++;
	}
	if (n)
		tt_buf_puts(out, "\n");
}

/* How the run's TTFT was measured, from what it records (issue 24.6): the
 * capture (and synth, which reproduces it) and llm-inference-bench warm
 * the prompt cache first; another tool's import does not say. */
static void ttft_sentence(const struct tt_manifest *m, struct tt_buf *out)
{
	const struct tt_import_source *src = m->n_sources && m->sources ? &m->sources[0] : NULL;

	if (!src || (src->format && strncmp(src->format, "llm-inference-bench", 19) == 0)) {
		tt_buf_puts(out, "TTFT is measured after the benchmark warms the server's prompt "
				 "cache, so it mostly excludes prefill.\n\n");
		return;
	}
	tt_buf_puts(out, "TTFT is as ");
	md_text(out, src->tool ? src->tool : src->format ? src->format : "the imported tool");
	tt_buf_puts(out, " measured it, from each request's send; the run does not record "
			 "whether the server's prompt cache was warmed first.\n\n");
}

static void cell_row(const struct tt_cell_figures *c, struct tt_buf *out)
{
	int counts = tt__render_has_counts(c), dec = tt__render_has_decode_figures(c);
	char ctx[32], total[64], per[64], ttft[64], tbt[64], act[64], done[64], tok[64], meas[64];

	tt__render_context(c->context, ctx, sizeof ctx);
	snprintf(total, sizeof total, TT_DASH);
	snprintf(per, sizeof per, TT_DASH);
	snprintf(ttft, sizeof ttft, TT_DASH);
	snprintf(tbt, sizeof tbt, TT_DASH);
	snprintf(act, sizeof act, TT_DASH);
	snprintf(done, sizeof done, TT_DASH);
	snprintf(tok, sizeof tok, TT_DASH);
	snprintf(meas, sizeof meas, TT_DASH);
	if (counts) {
		tt_fmt_rate(c->total_tok_s, total, sizeof total);
		tt_fmt_ms(c->ttft_ms.p50, ttft, sizeof ttft);
		if (c->completed >= 0)
			tt_fmt_int((double)c->completed, done, sizeof done);
	}
	if (dec) {
		tt_fmt_rate(c->per_request_tok_s.p50, per, sizeof per);
		if (isfinite(c->tbt_ms.p50)) {
			tt_fmt_fixed1(c->tbt_ms.p50, tbt, sizeof tbt);
			strcat(tbt, " ms");
		}
		tt_fmt_fixed1(c->avg_active, act, sizeof act);
		if (c->output_tokens >= 0)
			tt_fmt_int((double)c->output_tokens, tok, sizeof tok);
		if (isfinite(c->measured_s)) {
			tt_fmt_fixed1(c->measured_s, meas, sizeof meas);
			strcat(meas, " s");
		}
	}
	if (c->phase == TT_PHASE_RATE) { /* no fixed number at once: its rate */
		char rate[32];
		tt__render_rate(c->rate, rate, sizeof rate);
		tt_buf_printf(out, "| Open loop | %s | %s | ", ctx, rate);
	} else
		tt_buf_printf(out, "| %s | %s | %d | ",
			      c->phase == TT_PHASE_PREFILL ? "Prefill" : "Sustained decode", ctx,
			      c->concurrency);
	md_text(out, tt_status_name(c->status));
	tt_buf_printf(out, " | %s | %s | %s | %s | %s | %s | %s | %s |\n", total, per, ttft, tbt,
		      act, done, tok, meas);
}

static void all_measurements(const struct tt_report *r, const size_t *order, struct tt_buf *out)
{
	size_t i;

	tt_buf_puts(out, "## All measurements\n\n"
			 "Latencies are medians. Total tok/s is output across all simultaneous "
			 "requests. Per request tok/s is the median over requests.\n\n"
			 "| Phase | Context | Requests at once | Status | Total tok/s | "
			 "Per request tok/s | TTFT | Time between tokens | Average active requests | "
			 "Completed requests | Output tokens | Measured for |\n"
			 "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < r->n_cells; i++)
		cell_row(&r->cells[order[i]], out);
	tt_buf_puts(out, "\n");
	legend(r, out);
}

static void xtable_md(const struct tt__table *t, struct tt_buf *out)
{
	tt__table_md(t, 1, out);
}

/* Beyond the seed's layout, only when asked for: tails (--quantiles,
 * --stalls) and goodput (--slo). */
static int extra_sections(const struct tt_report *r, const size_t *order, struct tt_buf *out)
{
	struct tt__table t;
	char text[1024], head[64];

	/* the default figures (issue 24.1): every report shows them */
	if (tt__render_latency_table(r, order, &t))
		return -1;
	if (t.nrows > 1) {
		tt_buf_puts(out, "## Latency and request rate\n\n" LATENCY_CAPTION "\n\n");
		xtable_md(&t, out);
	}
	tt__table_free(&t);
	if (tt__render_has_rate_cells(r)) {
		if (tt__render_rate_table(r, order, &t))
			return -1;
		tt_buf_puts(out, "## Open-loop cells\n\n"
				 "Requests sent at a rate, on schedule (docs/metrics.md M-rate): "
				 "latencies from the due time (what a user waited) beside those from "
				 "the send; Late is the send lateness.\n\n");
		xtable_md(&t, out);
		tt__table_free(&t);
		tt__render_rate_summary(r, text, sizeof text);
		if (text[0]) {
			md_text(out, text);
			tt_buf_puts(out, "\n\n");
		}
	}
	if (r->opts.show_tails) {
		if (tt__render_tails_table(r, order, &t))
			return -1;
		if (t.nrows > 1) {
			tt__render_stall_head(r, head, sizeof head);
			tt_buf_puts(out, "## Tails\n\n"
					 "Per decode cell: TTFT and time between tokens at the chosen "
					 "percentiles, the longest stall (largest gap between two chunks "
					 "of one request in the window) and the share of per-token gaps "
					 "longer than the threshold (");
			md_text(out, head);
			tt_buf_puts(out, ").\n\n");
			xtable_md(&t, out);
		}
		tt__table_free(&t);
	}
	if (tt__render_prefill_repeats_table(r, order, &t))
		return -1;
	if (t.nrows > 1) {
		tt_buf_puts(out, "## Prefill repeats\n\n"
				 "Prefill cells measured with several cold scouts (capture "
				 "--prefill-repeats): the median the tables show, and the spread "
				 "((max - min) / median) that one scout alone would hide.\n\n");
		xtable_md(&t, out);
	}
	tt__table_free(&t);
	if (tt__render_reasoning_table(r, order, &t))
		return -1;
	if (t.nrows > 1) {
		tt_buf_puts(out, "## Reasoning\n\n"
				 "Per decode cell: output tokens in the window that the server "
				 "streamed as reasoning and as the answer, and the median time from "
				 "send to the first reasoning token and to the first answer token "
				 "(docs/metrics.md M-reasoning).\n\n");
		xtable_md(&t, out);
	}
	tt__table_free(&t);
	if (tt__render_server_parts_table(r, order, &t))
		return -1;
	if (t.nrows > 1) {
		tt_buf_puts(out, "## Where TTFT goes, and tokens per chunk\n\n"
				 "Per decode cell: mean output tokens per stream chunk and the share "
				 "of chunks carrying more than one (merged outputs, speculative "
				 "decoding); the client's mean TTFT split into the server's mean "
				 "queue and prefill times over the window and the rest (network, "
				 "client), which add up to the TTFT beside them: the mean over the "
				 "requests the server's histograms count (those that finished "
				 "between the window's first and last scrape; where no such request "
				 "finished, Rest is unknown and TTFT is the mean over every "
				 "request); the server's speculative decoding acceptance and "
				 "tokens per verification step; the share of prompt tokens the "
				 "server served from its prefix cache (warmed requests should be "
				 "near 100%), and its prefix cache hit rate.\n\n");
		xtable_md(&t, out);
	}
	tt__table_free(&t);
	if (tt_slo_active(&r->opts.slo)) {
		if (tt__render_goodput_table(r, order, &t))
			return -1;
		if (t.nrows > 1) {
			tt_buf_puts(out, "## Goodput under SLOs\n\n");
			tt__render_slo_sentence(r, text, sizeof text);
			md_text(out, text);
			tt_buf_puts(out, "\n\n");
			xtable_md(&t, out);
			tt__render_slo_max_line(r, text, sizeof text);
			tt_buf_puts(out, "Highest concurrency meeting the SLOs: ");
			md_text(out, text);
			tt_buf_puts(out, ".\n\n");
		}
		tt__table_free(&t);
	}
	return 0;
}

enum tt_code tt__render_md_text(const struct tt_report *r, struct tt_buf *out,
			       struct tt_error *err)
{
	enum tt_code rc = TT_OK;
	size_t *order = NULL, i;
	int64_t *a = NULL, *b = NULL;
	int has_prefill = 0, has_decode = 0;

	if (r->n_cells) {
		order = tt__render_order(r);
		a = malloc(r->n_cells * sizeof *a);
		b = malloc(r->n_cells * sizeof *b);
		if (!order || !a || !b) {
			rc = tt_error_set(err, TT_ENOMEM, "render md: out of memory");
			goto cleanup;
		}
	}
	for (i = 0; i < r->n_cells; i++) {
		if (r->cells[i].phase == TT_PHASE_PREFILL)
			has_prefill = 1;
		else if (r->cells[i].phase == TT_PHASE_DECODE)
			has_decode = 1; /* open-loop cells have their own table */
	}

	header(r, a, out);
	facts(r, has_decode, out);
	if (has_prefill)
		prefill_table(r, order, out);
	if (has_decode) {
		if (decode_matrix(r, out)) {
			rc = tt_error_set(err, TT_ENOMEM, "render md: out of memory");
			goto cleanup;
		}
		legend(r, out);
		evidence_notes(r, order, out);
		ttft_sentence(&r->manifest, out);
	} else {
		evidence_notes(r, order, out);
	}
	if (r->n_cells)
		all_measurements(r, order, out);
	if (r->n_cells && extra_sections(r, order, out)) {
		rc = tt_error_set(err, TT_ENOMEM, "render md: out of memory");
		goto cleanup;
	}
	/* one trailing newline, not two */
	if (!out->failed && out->len >= 2 && out->data[out->len - 1] == '\n' &&
	    out->data[out->len - 2] == '\n')
		out->data[--out->len] = '\0';

cleanup:
	free(order);
	free(a);
	free(b);
	return rc;
}
