/* llm-inference-bench's printed report, the "Speed test matrix" (markdown,
 * or text copied from its page or terminal): formats/import-llm-inference-
 * bench-report.md.  The figures are read from its "All measurements" table
 * as printed, so the imported run's report prints them again unchanged. */
#include "import/imp.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"

#define MAX_COLS 24

enum col {
	C_PHASE, C_CONTEXT, C_CONC, C_STATUS, C_TOTAL, C_PER, C_TTFT, C_TBT, C_ACTIVE, C_DONE,
	C_TOKENS, C_MEASURED, C_COUNT
};
static const char *const col_names[C_COUNT] = {
	"Phase", "Context", "Requests at once", "Status", "Total tok/s", "Per request tok/s",
	"TTFT", "Time between tokens", "Average active requests", "Completed requests",
	"Output tokens", "Measured for"};
/* The reported key of each figure column (NULL: not a figure). */
static const char *const col_keys[C_COUNT] = {
	NULL, NULL, NULL, NULL, "total_tok_s", "per_request_tok_s_p50", "ttft_ms_p50",
	"tbt_ms_p50", "avg_active", "completed", "output_tokens", "measured_s"};

struct line {
	const char *p;
	size_t len, no;
};

static int next_line(const char **cur, const char *end, size_t *no, struct line *l)
{
	const char *p = *cur, *nl;

	if (p >= end)
		return 0;
	nl = memchr(p, '\n', (size_t)(end - p));
	l->p = p;
	l->len = (size_t)((nl ? nl : end) - p);
	if (l->len && l->p[l->len - 1] == '\r')
		l->len--;
	l->no = ++*no;
	*cur = nl ? nl + 1 : end;
	return 1;
}

/* Copy a trimmed field without markdown emphasis ("**", "`", "\_"). */
static void clean(const char *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	while (n && isspace((unsigned char)*p))
		p++, n--;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		if (p[i] == '*' || p[i] == '`')
			continue;
		if (p[i] == '\\' && i + 1 < n && ispunct((unsigned char)p[i + 1]))
			i++;
		out[o++] = p[i];
	}
	out[o] = '\0';
}

/* Split a table row "| a | b |" into trimmed cells. */
static size_t split_row(const char *p, size_t n, char cells[][96], size_t max)
{
	size_t k = 0, i = 0, start;

	while (i < n && p[i] != '|')
		i++;
	if (i == n)
		return 0;
	i++;
	while (i < n && k < max) {
		start = i;
		while (i < n && p[i] != '|')
			i++;
		if (i == n) /* text after the last bar is not a cell */
			break;
		clean(p + start, i - start, cells[k++], 96);
		i++;
	}
	return k;
}

/* "1,819.2" 1819.2; "10.3K" 10300; "57 ms" 57; "30.0 s" 30; dash: absent (0).
 * *res (may be NULL): half a unit of the last digit printed, in the value's
 * units ("1,819.2" 0.05, "10.3K" 50, "57 ms" 0.5): the value is known to
 * within +- *res (formats/import-llm-inference-bench-report.md). */
static int number_res(const char *s, double mult_k, double *out, double *res)
{
	char buf[96], *end;
	size_t o = 0;
	double v, mult = 1, unit = 1;

	if (!*s || strcmp(s, "\xe2\x80\x94") == 0 || strcmp(s, "-") == 0 ||
	    strcmp(s, "\xe2\x80\x93") == 0)
		return 0;
	for (const char *p = s; *p && o + 1 < sizeof buf; p++)
		if (*p != ',')
			buf[o++] = *p;
	buf[o] = '\0';
	v = tt__strtod_c(buf, &end);
	if (end == buf)
		return -1;
	for (const char *d = strchr(buf, '.'); d && ++d < end && *d >= '0' && *d <= '9';)
		unit /= 10;
	if (*end == 'K' || *end == 'k')
		mult = mult_k, end++;
	else if (*end == 'M')
		mult = mult_k * mult_k, end++;
	while (*end == ' ')
		end++;
	if (*end && strcmp(end, "ms") != 0 && strcmp(end, "s") != 0 && strcmp(end, "tokens") != 0)
		return -1;
	if (!isfinite(v) || v < 0)
		return -1;
	*out = v * mult;
	if (res)
		*res = 0.5 * unit * mult;
	return 1;
}

static int number(const char *s, double mult_k, double *out)
{
	return number_res(s, mult_k, out, NULL);
}

static void status_key(const char *name, char *key, size_t cap)
{
	size_t o = 0;
	for (const char *p = name; *p && o + 1 < cap; p++)
		key[o++] = *p == ' ' ? '_' : (char)tolower((unsigned char)*p);
	key[o] = '\0';
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static const char *const known_status[] = {"valid", "requests_queued", "over_capacity",
					   "errors", "too_few_samples", "window_cut_short",
					   "damaged_trace", "not_run"};

static enum tt_code row(struct tt__imp *im, const int *at, char cells[][96], size_t n,
			const struct line *l, struct tt_error *err)
{
	char where[64], key[64];
	enum tt_phase phase;
	double ctx, conc = 1, v, res;
	size_t idx;
	enum tt_code rc;
	int known = 0, r;
	struct tt_cell_info *c;

	snprintf(where, sizeof where, "line %zu", l->no);
	for (int k = 0; k < C_COUNT; k++)
		if (at[k] >= 0 && (size_t)at[k] >= n) {
			/* The last line, without its newline: the text was cut. */
			if (l->p + l->len >= im->data + im->len - 1 && im->data[im->len - 1] != '\n')
				return tt_error_set(err, TT_ETRUNC, "'%s': %s: the text ends inside a "
						    "table row: truncated", im->file, where);
			return tt__imp_fail_err(im, err, where, "the row has %zu cells, the table "
						"header more", n);
		}
	if (strcmp(cells[at[C_PHASE]], "Prefill") == 0)
		phase = TT_PHASE_PREFILL;
	else if (strstr(cells[at[C_PHASE]], "decode") || strstr(cells[at[C_PHASE]], "Decode"))
		phase = TT_PHASE_DECODE;
	else
		return tt__imp_fail_err(im, err, where, "column 'Phase': '%s' is neither Prefill "
					"nor Sustained decode", cells[at[C_PHASE]]);
	if (number(cells[at[C_CONTEXT]], 1024, &ctx) != 1 || ctx != floor(ctx))
		return tt__imp_fail_err(im, err, where, "column 'Context': '%s' is not a context "
					"length (8K = 8192 tokens)", cells[at[C_CONTEXT]]);
	if (tt_failed(rc = tt__imp_range(im, where, "column 'Context'", ctx, 0, TT_IMPORT_MAX_CONTEXT,
				"tokens", err)))
		return rc;
	if (at[C_CONC] >= 0 && (number(cells[at[C_CONC]], 1000, &conc) != 1 || conc < 1 ||
				conc > 1e6 || conc != floor(conc)))
		return tt__imp_fail_err(im, err, where, "column 'Requests at once': '%s' is not a "
					"count in 1..1000000", cells[at[C_CONC]]);
	if (tt_failed(rc = tt__imp_cell(im, where, phase, ctx, conc, &idx, err)))
		return rc;
	c = &im->m->cells[idx];
	c->state = TT_CELL_DONE;
	status_key(cells[at[C_STATUS]], key, sizeof key);
	for (size_t s = 0; s < sizeof known_status / sizeof *known_status; s++)
		known |= strcmp(key, known_status[s]) == 0;
	if (!known)
		return tt__imp_fail_err(im, err, where, "column 'Status': '%s' is not a status",
					cells[at[C_STATUS]]);
	if (strcmp(key, "over_capacity") == 0) {
		c->state = TT_CELL_OVER_CAPACITY;
		if (tt_manifest_set_str(&c->reason, "over capacity as the imported report says"))
			return tt__imp_nomem(im, err);
	} else if (strcmp(key, "not_run") == 0) {
		c->state = TT_CELL_PENDING;
	} else if (tt_manifest_set_str(&c->reported_status, key)) {
		return tt__imp_nomem(im, err);
	}
	for (int k = C_TOTAL; k < C_COUNT && c->state == TT_CELL_DONE; k++) {
		if (at[k] < 0)
			continue;
		r = number_res(cells[at[k]], 1000, &v, &res);
		if (r < 0)
			return tt__imp_fail_err(im, err, where, "column '%s': '%s' is not a number",
						col_names[k], cells[at[k]]);
		if (r > 0 && tt_failed(rc = tt__imp_report(im, idx, col_keys[k], v, err)))
			return rc;
		/* The printed precision, for the diff (docs/diff.md "Runs without
		 * traces"): KEY_res, half a unit of the last digit printed. */
		snprintf(key, sizeof key, "%s_res", col_keys[k]);
		if (r > 0 && tt_failed(rc = tt__imp_report(im, idx, key, res, err)))
			return rc;
	}
	if (phase == TT_PHASE_PREFILL)
		rc = tt__imp_add_i64(im, &im->m->prefill_contexts, &im->m->n_prefill_contexts,
				     (int64_t)ctx, err);
	else if (!tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, (int64_t)ctx, err)))
		rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc, err);
	return rc;
}

/* The facts the report lists as "- Key" then "- Value" (its page or
 * terminal) or "- **Key:** Value" (markdown). */
static const char *const fact_notes[][2] = {
	{"Type", "hardware_type"}, {"GPU", "gpu"}, {"VRAM", "vram"}, {"CPU", "cpu"},
	{"OS", "os"}, {"Quantization", "quantization"}, {"Backend", "backend"},
	{"Repository", "repository"}, {"Build", "build"}, {"Commit", "commit"},
	{"Revision", "revision"}, {"Decode test", "decode_test"},
	{"Prefill mode", "prefill_mode"}, {"Launch command", "launch_command"}};

static enum tt_code fact(struct tt__imp *im, const char *k, const char *v, struct tt_error *err)
{
	struct tt_manifest *m = im->m;
	double d;

	if (!*v)
		return TT_OK;
	for (size_t i = 0; i < sizeof fact_notes / sizeof *fact_notes; i++)
		if (strcmp(k, fact_notes[i][0]) == 0)
			return tt__imp_note(im, fact_notes[i][1], v, err);
	if (strcmp(k, "Engine") == 0)
		return tt__imp_set(im, &m->engine, v, err);
	if (strcmp(k, "Version") == 0)
		return tt__imp_set(im, &m->engine_version, v, err);
	if (strcmp(k, "Served model") == 0)
		return tt__imp_set(im, &m->served_model, v, err);
	if (strcmp(k, "Time per measurement") == 0 && number(v, 1000, &d) == 1)
		m->duration_s = d;
	if (strcmp(k, "Max output") == 0 && number(v, 1000, &d) == 1 && d <= TT_IMPORT_MAX_TOKENS)
		m->max_tokens = (int64_t)d;
	if (strcmp(k, "Benchmark tool") == 0) {
		/* "llm-inference-bench v0.4.29" */
		static char version[64];
		const char *sp = strrchr(v, ' ');
		if (sp && sp[1] == 'v' && isdigit((unsigned char)sp[2])) {
			snprintf(version, sizeof version, "%s", sp + 2);
			im->src.tool_version = version;
		}
		return TT_OK;
	}
	return TT_OK;
}

static int is_fact_key(const char *k)
{
	static const char *const other[] = {"Engine", "Version", "Served model",
					    "Time per measurement", "Max output", "Benchmark tool"};
	for (size_t i = 0; i < sizeof fact_notes / sizeof *fact_notes; i++)
		if (strcmp(k, fact_notes[i][0]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof other / sizeof *other; i++)
		if (strcmp(k, other[i]) == 0)
			return 1;
	return 0;
}

enum tt_code tt__import_lib_report(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const char *cur = im->data, *end = im->data + im->len;
	struct line l, prev = {0};
	size_t no = 0, rows = 0;
	char cells[MAX_COLS][96], text[1024], pending_key[96] = "";
	int at[C_COUNT], in_table = 0, title = 0, model_next = 0;
	enum tt_code rc;

	(void)root;
	im->src.tool = "llm-inference-bench";
	/* The tool streams from /v1/chat/completions (REFERENCE section 1). */
	if (tt_failed(rc = tt__imp_set(im, &im->m->endpoint, "chat", err)))
		return rc;
	while (next_line(&cur, end, &no, &l)) {
		const char *bar = memchr(l.p, '|', l.len);
		clean(l.p, l.len, text, sizeof text);
		if (!title && strstr(text, "Speed test matrix")) {
			title = 1;
			model_next = 1;
			continue;
		}
		if (model_next && text[0]) {
			/* "LFM2.5-350M on H200 NVL 141GB" */
			char *on = strstr(text, " on ");
			if (on)
				*on = '\0';
			if (tt_failed(rc = tt__imp_set(im, &im->m->model, text[0] == '#' ? text + 2 : text, err)))
				return rc;
			model_next = 0;
			continue;
		}
		if (bar && !in_table) {
			size_t n = split_row(bar, l.len - (size_t)(bar - l.p), cells, MAX_COLS);
			if (n && strcmp(cells[0], "Phase") == 0) {
				for (int k = 0; k < C_COUNT; k++) {
					at[k] = -1;
					for (size_t j = 0; j < n; j++)
						if (strcmp(cells[j], col_names[k]) == 0)
							at[k] = (int)j;
				}
				if (at[C_CONTEXT] < 0 || at[C_STATUS] < 0) {
					char where[32];
					snprintf(where, sizeof where, "line %zu", l.no);
					return tt__imp_fail_err(im, err, where, "the table has no "
								"'Context' or 'Status' column");
				}
				in_table = 1;
				continue;
			}
		}
		if (in_table) {
			size_t n;
			if (!bar) {
				in_table = 0;
				continue;
			}
			n = split_row(bar, l.len - (size_t)(bar - l.p), cells, MAX_COLS);
			if (n == 0 || strncmp(cells[0], "---", 3) == 0)
				continue;
			if (tt_failed(rc = row(im, at, cells, n, &l, err)))
				return rc;
			rows++;
			continue;
		}
		/* Facts: "- **Key:** value", or "- Key" then the value on the next line. */
		if (pending_key[0]) {
			const char *v = text[0] == '-' ? text + 1 : text;
			while (*v == ' ')
				v++;
			if (tt_failed(rc = fact(im, pending_key, v, err)))
				return rc;
			pending_key[0] = '\0';
			continue;
		}
		if (strcmp(text, "Launch command") == 0 || strcmp(text, "## Launch command") == 0) {
			snprintf(pending_key, sizeof pending_key, "Launch command");
			continue;
		}
		if (text[0] == '-' && text[1] == ' ') {
			char *colon = strstr(text + 2, ": ");
			if (colon && colon[-1] != ' ') {
				*colon = '\0';
				if (is_fact_key(text + 2) && tt_failed(rc = fact(im, text + 2, colon + 2, err)))
					return rc;
			} else if (is_fact_key(text + 2)) {
				snprintf(pending_key, sizeof pending_key, "%.90s", text + 2);
			}
		}
		prev = l;
	}
	(void)prev;
	if (!title)
		return tt__imp_fail_err(im, err, "", "no 'Speed test matrix' title: not an "
					"llm-inference-bench report");
	if (rows == 0)
		return tt__imp_fail_err(im, err, "", "no row of the 'All measurements' table "
					"(| Phase | Context | ... |) was found");
	/* Prefill contexts that are also decode contexts are not prefill-only
	 * (both lists sorted: one merge, not a search per context). */
	{
		struct tt_manifest *m = im->m;
		size_t k = 0, j = 0;
		qsort(m->contexts, m->n_contexts, sizeof *m->contexts, cmp_i64);
		qsort(m->prefill_contexts, m->n_prefill_contexts, sizeof *m->prefill_contexts, cmp_i64);
		for (size_t i = 0; i < m->n_prefill_contexts; i++) {
			while (j < m->n_contexts && m->contexts[j] < m->prefill_contexts[i])
				j++;
			if ((j == m->n_contexts || m->contexts[j] != m->prefill_contexts[i]) &&
			    (!k || m->prefill_contexts[k - 1] != m->prefill_contexts[i]))
				m->prefill_contexts[k++] = m->prefill_contexts[i];
		}
		m->n_prefill_contexts = k;
	}
	return TT_OK;
}
