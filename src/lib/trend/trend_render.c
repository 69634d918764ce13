/* trend: the answer as text (term, md, csv) and JSON, schema
 * "tokentrace-trend" (formats/trend-json.md). */
#include "trend/trend_impl.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "text/render_impl.h"

#define TREND_SCHEMA "tokentrace-trend"
#define TREND_VERSION "1.0"

static const char *order_name(const struct tt_trend_opts *o)
{
	return o->order == TT_TREND_ORDER_KEY ? "key" :
	       o->order == TT_TREND_ORDER_GIVEN ? "given" : "start";
}

/* Change points by size, largest first (ties: series, then run). */
size_t *tt__trend_by_size(const struct tt_trend_result *r)
{
	size_t *v = malloc((r->n_changes ? r->n_changes : 1) * sizeof *v);

	if (!v)
		return NULL;
	for (size_t i = 0; i < r->n_changes; i++)
		v[i] = i;
	for (size_t i = 1; i < r->n_changes; i++)
		for (size_t j = i; j > 0; j--) {
			double a = fabs(r->changes[v[j - 1]].change_pct);
			double b = fabs(r->changes[v[j]].change_pct);
			size_t t;
			if (a >= b)
				break;
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v;
}

/* "0.6.1", "key 0.6.1" or "-": what names the run's version. */
static void run_version(const struct tt_trend_result *r, const struct tt_trend_run *run,
			char *buf, size_t len)
{
	const char *ev = run->engine_version ? run->engine_version : "-";

	if (r->opts.order == TT_TREND_ORDER_KEY && strcmp(r->opts.key, "engine_version"))
		snprintf(buf, len, "%s; %s %s", ev, r->opts.key, run->key ? run->key : "-");
	else
		snprintf(buf, len, "%s", ev);
}

void tt__trend_method_sentence(const struct tt_trend_result *r, struct tt_buf *b)
{
	const struct tt_trend_opts *o = &r->opts;
	size_t n_regr = 0;
	char alpha[32], minc[32];

	for (size_t i = 0; i < r->n_changes; i++)
		n_regr += r->changes[i].regression != 0;
	tt_buf_printf(b, "%zu runs ordered by %s%s, %zu series (cell x figure), %zu change "
		      "point%s (%zu regression%s).\n",
		      r->n_runs, o->order == TT_TREND_ORDER_KEY ? "key " :
		      o->order == TT_TREND_ORDER_GIVEN ? "the order given" : "start time",
		      o->order == TT_TREND_ORDER_KEY ? o->key : "", r->n_series,
		      r->n_changes, r->n_changes == 1 ? "" : "s", n_regr, n_regr == 1 ? "" : "s");
	tt__snprintf_c(alpha, sizeof alpha, "%g", o->alpha);
	tt__snprintf_c(minc, sizeof minc, "%g", o->min_change);
	tt_buf_printf(b, "Method: E-Divisive means, permutation test at alpha %s (%u permutations, "
		      "seed %llu), levels of at least %u runs, changes under %s %% not reported "
		      "(docs/trend.md).\n", alpha, o->permutations,
		      (unsigned long long)o->seed, o->min_size, minc);
	if (r->no_key)
		tt_buf_printf(b, "Note: %zu run%s without %s, put last.\n", r->no_key,
			      r->no_key == 1 ? "" : "s", o->key);
	if (r->partial_cells)
		tt_buf_printf(b, "Note: %zu cell%s not in every run (other matrices, or runs that "
			      "lost cells): %s series have gaps.\n", r->partial_cells,
			      r->partial_cells == 1 ? " is" : "s are",
			      r->partial_cells == 1 ? "its" : "their");
	if (r->no_start)
		tt_buf_printf(b, "Note: %zu run%s without a start time, put after those with "
			      "one%s.\n", r->no_start, r->no_start == 1 ? "" : "s",
			      o->order == TT_TREND_ORDER_KEY ? " of the same key" : "");
}

static enum tt_code render_text(const struct tt_trend_result *r, int md, struct tt_buf *b,
				struct tt_error *err)
{
	size_t *ord = tt__trend_by_size(r);
	static const char *const head[] = {"Cell", "Figure", "Change", "Before", "After", "p",
					    "Kind", "First run of the new level", "Version"};
	enum { NCOL = 9 };
	char (*cell)[NCOL][160] = NULL;
	size_t w[NCOL];

	if (!ord)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	if (md)
		tt_buf_puts(b, "# Trend\n\n");
	tt__trend_method_sentence(r, b);
	tt_buf_puts(b, "\n");
	if (!r->n_changes) {
		tt_buf_puts(b, "No change points.\n");
		free(ord);
		return TT_OK;
	}
	if (md)
		tt_buf_puts(b, "## Change points, largest first\n\n");
	else
		tt_buf_puts(b, "Change points, largest first:\n\n");
	if (!(cell = calloc(r->n_changes, sizeof *cell))) {
		free(ord);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	for (size_t c = 0; c < NCOL; c++)
		w[c] = strlen(head[c]);
	for (size_t i = 0; i < r->n_changes; i++) {
		const struct tt_trend_change *ch = &r->changes[ord[i]];
		const struct tt_trend_series *se = &r->series[ch->series];
		const struct tt_trend_run *run = &r->runs[ch->run];
		char (*row)[160] = cell[i];

		snprintf(row[0], 160, "%s", se->cell);
		snprintf(row[1], 160, "%s", tt_diff_figure_name(se->figure));
		/* numbers with '.' whatever the caller's locale */
		tt__snprintf_c(row[2], 160, "%+.1f%%", ch->change_pct);
		tt__snprintf_c(row[3], 160, "%.4g", ch->before);
		tt__snprintf_c(row[4], 160, "%.4g", ch->after);
		tt__snprintf_c(row[5], 160, "%.3g", ch->p_value);
		snprintf(row[6], 160, "%s", ch->regression ? "regression" : "improvement");
		snprintf(row[7], 160, "#%zu %s", ch->run + 1, run->path ? run->path : "-");
		run_version(r, run, row[8], 160);
		for (size_t c = 0; c < NCOL; c++) {
			if (md) { /* a '|' in a path would cut the cell */
				for (char *q = row[c]; *q; q++)
					if (*q == '|')
						*q = '/';
			}
			if (strlen(row[c]) > w[c])
				w[c] = strlen(row[c]);
		}
	}
	for (size_t i = 0; i <= r->n_changes; i++) {
		for (size_t c = 0; c < NCOL; c++) {
			const char *s = i ? cell[i - 1][c] : head[c];
			int right = c >= 2 && c <= 5;
			if (md)
				tt_buf_printf(b, "| %s ", s);
			else if (right)
				tt_buf_printf(b, "%s%*s", c ? "  " : "", (int)w[c], s);
			else
				tt_buf_printf(b, "%s%-*s", c ? "  " : "", c + 1 < NCOL ? (int)w[c] : 0,
					      s);
		}
		tt_buf_puts(b, md ? "|\n" : "\n");
		if (md && i == 0) {
			for (size_t c = 0; c < NCOL; c++)
				tt_buf_puts(b, c >= 2 && c <= 5 ? "|---:" : "|---");
			tt_buf_puts(b, "|\n");
		}
	}
	free(cell);
	free(ord);
	return TT_OK;
}

static void csv_num(struct tt_buf *b, double v)
{
	char t[40];

	if (!isfinite(v)) {
		tt_buf_puts(b, ",");
		return;
	}
	tt__fmt_exact(v, t, sizeof t);
	tt_buf_printf(b, ",%s", t);
}

static enum tt_code render_csv(const struct tt_trend_result *r, struct tt_buf *b)
{
	tt_buf_puts(b, "cell,figure,run_number,run,engine_version,key,before,after,change_pct,"
		       "p_value,kind\n");
	for (size_t i = 0; i < r->n_changes; i++) {
		const struct tt_trend_change *ch = &r->changes[i];
		const struct tt_trend_series *se = &r->series[ch->series];
		const struct tt_trend_run *run = &r->runs[ch->run];

		tt__csv_field(b, se->cell, 1);
		tt__csv_field(b, tt_diff_figure_key(se->figure), 0);
		tt_buf_printf(b, ",%zu", ch->run + 1);
		tt__csv_field(b, run->path ? run->path : "", 0);
		tt__csv_field(b, run->engine_version ? run->engine_version : "", 0);
		tt__csv_field(b, run->key ? run->key : "", 0);
		csv_num(b, ch->before);
		csv_num(b, ch->after);
		csv_num(b, ch->change_pct);
		csv_num(b, ch->p_value);
		tt_buf_printf(b, ",%s\n", ch->regression ? "regression" : "improvement");
	}
	return TT_OK;
}

/* ---- JSON --------------------------------------------------------------- */

static cJSON *num(double v)
{
	char text[40];

	if (!isfinite(v))
		return cJSON_CreateNull();
	tt__fmt_exact(v, text, sizeof text);
	return cJSON_CreateRaw(text);
}

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *put(int *oom, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !obj ||
	    (key ? !cJSON_AddItemToObject(obj, key, item) : !cJSON_AddItemToArray(obj, item))) {
		cJSON_Delete(item);
		*oom = 1;
		return NULL;
	}
	return item;
}

static enum tt_code render_json(const struct tt_trend_result *r, struct tt_buf *b,
				struct tt_error *err)
{
	const struct tt_trend_opts *o = &r->opts;
	cJSON *root = cJSON_CreateObject(), *m, *a;
	size_t *ord = tt__trend_by_size(r);
	int oom = !root || !ord;
	char *text;

	put(&oom, root, "schema", cJSON_CreateString(TREND_SCHEMA));
	put(&oom, root, "version", cJSON_CreateString(TREND_VERSION));
	put(&oom, root, "order", cJSON_CreateString(order_name(o)));
	put(&oom, root, "key", o->order == TT_TREND_ORDER_KEY ? cJSON_CreateString(o->key)
							       : cJSON_CreateNull());
	m = put(&oom, root, "method", cJSON_CreateObject());
	put(&oom, m, "name", cJSON_CreateString("e-divisive-means"));
	put(&oom, m, "alpha", num(o->alpha));
	put(&oom, m, "permutations", cJSON_CreateNumber(o->permutations));
	put(&oom, m, "seed", num((double)o->seed));
	put(&oom, m, "min_size", cJSON_CreateNumber(o->min_size));
	put(&oom, m, "min_change_pct", num(o->min_change));
	put(&oom, m, "tail", num(o->tail));
	put(&oom, m, "tests", cJSON_CreateNumber((double)r->tests));
	put(&oom, root, "partial_cells", cJSON_CreateNumber((double)r->partial_cells));
	a = put(&oom, root, "runs", cJSON_CreateArray());
	for (size_t i = 0; i < r->n_runs && !oom; i++) {
		const struct tt_trend_run *run = &r->runs[i];
		cJSON *x = put(&oom, a, NULL, cJSON_CreateObject());
		put(&oom, x, "path", str_or_null(run->path));
		put(&oom, x, "engine", str_or_null(run->engine));
		put(&oom, x, "engine_version", str_or_null(run->engine_version));
		put(&oom, x, "key", str_or_null(run->key));
		if (run->start_unix_ns) { /* exact: a double would round the ns */
			char t[32];
			snprintf(t, sizeof t, "%lld", (long long)run->start_unix_ns);
			put(&oom, x, "start_unix_ns", cJSON_CreateRaw(t));
		} else {
			put(&oom, x, "start_unix_ns", cJSON_CreateNull());
		}
		put(&oom, x, "imported", cJSON_CreateBool(run->imported));
	}
	a = put(&oom, root, "change_points", cJSON_CreateArray());
	for (size_t i = 0; i < r->n_changes && !oom; i++) {
		const struct tt_trend_change *ch = &r->changes[ord[i]];
		const struct tt_trend_series *se = &r->series[ch->series];
		const struct tt_trend_run *run = &r->runs[ch->run];
		cJSON *x = put(&oom, a, NULL, cJSON_CreateObject());
		put(&oom, x, "cell", cJSON_CreateString(se->cell));
		put(&oom, x, "figure", cJSON_CreateString(tt_diff_figure_key(se->figure)));
		put(&oom, x, "run", str_or_null(run->path));
		put(&oom, x, "run_index", cJSON_CreateNumber((double)ch->run));
		put(&oom, x, "engine_version", str_or_null(run->engine_version));
		put(&oom, x, "key", str_or_null(run->key));
		put(&oom, x, "before", num(ch->before));
		put(&oom, x, "after", num(ch->after));
		put(&oom, x, "change_pct", num(ch->change_pct));
		put(&oom, x, "p_value", num(ch->p_value));
		put(&oom, x, "regression", cJSON_CreateBool(ch->regression));
	}
	a = put(&oom, root, "series", cJSON_CreateArray());
	for (size_t s = 0; s < r->n_series && !oom; s++) {
		const struct tt_trend_series *se = &r->series[s];
		cJSON *x = put(&oom, a, NULL, cJSON_CreateObject()), *ri, *va;
		put(&oom, x, "cell", cJSON_CreateString(se->cell));
		put(&oom, x, "figure", cJSON_CreateString(tt_diff_figure_key(se->figure)));
		ri = put(&oom, x, "run_index", cJSON_CreateArray());
		va = put(&oom, x, "values", cJSON_CreateArray());
		for (size_t k = 0; k < se->n && !oom; k++) {
			put(&oom, ri, NULL, cJSON_CreateNumber((double)se->run[k]));
			put(&oom, va, NULL, num(se->value[k]));
		}
		put(&oom, x, "change_points", cJSON_CreateNumber((double)se->n_changes));
	}
	free(ord);
	if (oom || !(text = cJSON_Print(root))) {
		cJSON_Delete(root);
		return tt_error_set(err, TT_ENOMEM, "out of memory writing the trend as JSON");
	}
	cJSON_Delete(root);
	tt_buf_puts(b, text);
	tt_buf_puts(b, "\n");
	free(text);
	return TT_OK;
}

static enum tt_code render_any(const struct tt_trend_result *r, enum tt_format f,
			       struct tt_buf *out, struct tt_error *err)
{
	switch (f) {
	case TT_FORMAT_TERM:
		return render_text(r, 0, out, err);
	case TT_FORMAT_MD:
		return render_text(r, 1, out, err);
	case TT_FORMAT_CSV:
		return render_csv(r, out);
	case TT_FORMAT_JSON:
		return render_json(r, out, err);
	case TT_FORMAT_HTML:
		return tt__trend_render_html(r, out, err);
	default:
		return tt_error_set(err, TT_EARG, "trend: format %d is not written yet (term, md, "
				    "csv, json, html)", (int)f);
	}
}

enum tt_code tt_trend_render(const struct tt_trend_result *r, enum tt_format f,
			     const struct tt_render_opts *ro, struct tt_buf *out,
			     struct tt_error *err)
{
	enum tt_code rc;

	(void)ro;
	rc = render_any(r, f, out, err);
	/* an append that failed is sticky on the buffer: the text is cut */
	if (!tt_failed(rc) && out->failed)
		return tt_error_set(err, TT_ENOMEM, "out of memory writing the trend");
	return rc;
}
