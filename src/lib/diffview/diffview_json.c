/* A diff as JSON, schema "tokentrace-diff" (formats/diff-json.md).
 * Built with cJSON; numbers go in as the shortest text that reads back as
 * the same double, NaN and missing values as null. */
#include "diffview/diffview_impl.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/render_impl.h"

#define DIFF_SCHEMA "tokentrace-diff"
#define DIFF_VERSION "1.3"

static cJSON *num(double v)
{
	char text[40];

	if (!isfinite(v))
		return cJSON_CreateNull();
	tt__fmt_exact(v, text, sizeof text);
	return cJSON_CreateRaw(text);
}

/* Add item to obj under key (array when key is NULL); a failed allocation
 * marks *oom and frees item. */
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

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* A side's status of a cell: the key its runs agree on, or "mixed"
 * (docs/diff.md "Status with replicates"). */
static cJSON *side_status(const struct tt_diff_cell *dc, int cand)
{
	if (cand ? dc->cand_mixed : dc->base_mixed)
		return cJSON_CreateString("mixed");
	return cJSON_CreateString(tt_status_key(cand ? dc->cand_status : dc->base_status));
}

/* Status key to the number of the side's runs with that status. */
static cJSON *status_runs(const unsigned short *runs, int *oom)
{
	cJSON *o = cJSON_CreateObject();

	for (int k = 0; o && k < TT_STATUS_COUNT_; k++)
		if (runs[k])
			put(oom, o, tt_status_key((enum tt_status)k), num(runs[k]));
	return o;
}

static cJSON *side_json(int *oom, const struct tt_diff_side *s)
{
	cJSON *runs = cJSON_CreateArray();

	for (size_t i = 0; runs && i < tt_diff_side_runs(s); i++) {
		const struct tt_report *r = tt_diff_side_report(s, i);
		const struct tt_manifest *m = &r->manifest;
		cJSON *o = put(oom, runs, NULL, cJSON_CreateObject());
		cJSON *notes;
		put(oom, o, "source", cJSON_CreateString(r->source));
		put(oom, o, "engine", str_or_null(m->engine));
		put(oom, o, "engine_version", str_or_null(m->engine_version));
		put(oom, o, "model", str_or_null(m->model));
		put(oom, o, "created", str_or_null(m->created));
		put(oom, o, "tool", str_or_null(m->tool_name));
		put(oom, o, "tool_version", str_or_null(m->tool_version));
		notes = put(oom, o, "notes", cJSON_CreateObject());
		for (size_t k = 0; notes && k < m->n_notes; k++)
			put(oom, notes, m->notes[k].key, str_or_null(m->notes[k].value));
	}
	return runs;
}

static const char *const presence_keys[] = {"both", "base", "candidate"};

enum tt_code tt__diff_render_json(const struct tt_diff *d, const struct tt_diff_gate_opts *gate,
				 struct tt_buf *out, struct tt_error *err)
{
	int oom = 0;
	cJSON *root = cJSON_CreateObject(), *o, *cells, *g;
	char *text;

	put(&oom, root, "schema", cJSON_CreateString(DIFF_SCHEMA));
	put(&oom, root, "version", cJSON_CreateString(DIFF_VERSION));
	o = put(&oom, root, "base", cJSON_CreateObject());
	put(&oom, o, "runs", side_json(&oom, d->base));
	o = put(&oom, root, "candidate", cJSON_CreateObject());
	put(&oom, o, "runs", side_json(&oom, d->cand));

	o = put(&oom, root, "method", cJSON_CreateObject());
	put(&oom, o, "alpha", num(d->opts.alpha));
	put(&oom, o, "replicates", num(d->opts.replicates));
	put(&oom, o, "slices", num(d->opts.slices));
	put(&oom, o, "seed", num((double)d->opts.seed));
	put(&oom, o, "tail", num(d->opts.tail));
	put(&oom, o, "min_change_pct", num(d->opts.min_change));
	put(&oom, o, "tolerance_pct", d->opts.tolerance > 0 ? num(d->opts.tolerance) : cJSON_CreateNull());
	put(&oom, o, "point_comparisons", num((double)d->n_point));
	put(&oom, o, "comparisons", num((double)d->n_tests));
	put(&oom, o, "level_each", num(d->level));
	{
		/* docs/diff.md "Runs, the unit of evidence" */
		size_t nb = tt_diff_side_runs(d->base), nc = tt_diff_side_runs(d->cand);
		cJSON *a;
		put(&oom, o, "runs_base", num((double)nb));
		put(&oom, o, "runs_candidate", num((double)nc));
		put(&oom, o, "resampling",
		    cJSON_CreateString(nb > 1 && nc > 1 ? "hierarchical" : "within_run"));
		put(&oom, o, "single_run", cJSON_CreateBool(nb == 1 && nc == 1));
		a = put(&oom, o, "run_allowance_pct", cJSON_CreateObject());
		for (int f = 0; a && f < TT_DIFF_FIGURE_COUNT_; f++)
			put(&oom, a, tt_diff_figure_key((enum tt_diff_figure)f),
			    num(d->opts.run_allowance[f]));
		put(&oom, o, "run_allowance_comparisons", num((double)d->n_allowance));
	}

	o = put(&oom, root, "summary", cJSON_CreateObject());
	put(&oom, o, "slower", num((double)d->n_slower));
	put(&oom, o, "faster", num((double)d->n_faster));
	put(&oom, o, "same", num((double)d->n_same));
	put(&oom, o, "unjudged", num((double)d->n_unjudged));
	put(&oom, o, "within_tolerance", num((double)d->n_within_tol));
	put(&oom, o, "beyond_tolerance", num((double)d->n_beyond_tol));
	put(&oom, o, "status_changes", num((double)d->n_status_changed));
	put(&oom, o, "base_only", num((double)d->n_base_only));
	put(&oom, o, "candidate_only", num((double)d->n_cand_only));

	if (gate && gate->on) {
		size_t n = tt_diff_gate(d, gate->figure, gate->threshold_pct);
		g = put(&oom, root, "gate", cJSON_CreateObject());
		put(&oom, g, "figure", cJSON_CreateString(tt_diff_figure_key(gate->figure)));
		put(&oom, g, "threshold_pct", num(gate->threshold_pct));
		put(&oom, g, "failing_cells", num((double)n));
		put(&oom, g, "failed", cJSON_CreateBool(n > 0));
	} else {
		put(&oom, root, "gate", cJSON_CreateNull());
	}
	if (gate && gate->status_change) {
		size_t n = tt_diff_status_gate(d);
		g = put(&oom, root, "status_gate", cJSON_CreateObject());
		put(&oom, g, "failing_cells", num((double)n));
		put(&oom, g, "failed", cJSON_CreateBool(n > 0));
	} else {
		put(&oom, root, "status_gate", cJSON_CreateNull());
	}

	cells = put(&oom, root, "cells", cJSON_CreateArray());
	for (size_t i = 0; cells && i < d->n_cells; i++) {
		const struct tt_diff_cell *dc = &d->cells[i];
		char id[64];
		cJSON *c = put(&oom, cells, NULL, cJSON_CreateObject()), *figs;

		tt_diff_cell_id(dc, id, sizeof id);
		put(&oom, c, "id", cJSON_CreateString(id));
		put(&oom, c, "phase",
		    cJSON_CreateString(dc->phase == TT_PHASE_PREFILL ? "prefill" : "decode"));
		put(&oom, c, "context", num((double)dc->context));
		put(&oom, c, "concurrency", num(dc->concurrency));
		put(&oom, c, "presence", cJSON_CreateString(presence_keys[dc->presence]));
		put(&oom, c, "base_status",
		    dc->presence != TT_DIFF_CAND_ONLY ? side_status(dc, 0) : cJSON_CreateNull());
		put(&oom, c, "candidate_status",
		    dc->presence != TT_DIFF_BASE_ONLY ? side_status(dc, 1) : cJSON_CreateNull());
		put(&oom, c, "base_status_mixed", cJSON_CreateBool(dc->base_mixed));
		put(&oom, c, "candidate_status_mixed", cJSON_CreateBool(dc->cand_mixed));
		put(&oom, c, "base_status_runs",
		    dc->presence != TT_DIFF_CAND_ONLY ? status_runs(dc->base_runs, &oom)
						      : cJSON_CreateNull());
		put(&oom, c, "candidate_status_runs",
		    dc->presence != TT_DIFF_BASE_ONLY ? status_runs(dc->cand_runs, &oom)
						      : cJSON_CreateNull());
		put(&oom, c, "status_changed", cJSON_CreateBool(dc->status_changed));
		figs = put(&oom, c, "figures", cJSON_CreateObject());
		for (int f = 0; figs && f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *v = &dc->v[f];
			cJSON *fo, *ci;
			if (!v->applies)
				continue;
			fo = put(&oom, figs, tt_diff_figure_key((enum tt_diff_figure)f),
				 cJSON_CreateObject());
			put(&oom, fo, "base", num(v->base));
			put(&oom, fo, "candidate", num(v->cand));
			put(&oom, fo, "ratio", num(v->ratio));
			put(&oom, fo, "change_pct", num(v->change_pct));
			if (isfinite(v->ci_lo_pct)) {
				ci = put(&oom, fo, "ci_pct", cJSON_CreateArray());
				put(&oom, ci, NULL, num(v->ci_lo_pct));
				put(&oom, ci, NULL, num(v->ci_hi_pct));
			} else {
				put(&oom, fo, "ci_pct", cJSON_CreateNull());
			}
			put(&oom, fo, "z", num(v->z));
			put(&oom, fo, "df", num(v->df));
			put(&oom, fo, "critical", num(v->crit));
			put(&oom, fo, "se_log_base", num(v->se_base));
			put(&oom, fo, "se_log_candidate", num(v->se_cand));
			put(&oom, fo, "verdict", cJSON_CreateString(tt_verdict_key(v->verdict)));
			put(&oom, fo, "worse", cJSON_CreateBool(v->worse));
			{
				char basis[32];
				snprintf(basis, sizeof basis, "%s/%s", tt_diff_basis_key(v->basis_base),
					 tt_diff_basis_key(v->basis_cand));
				put(&oom, fo, "basis", cJSON_CreateString(basis));
			}
			put(&oom, fo, "run_allowance", cJSON_CreateBool(v->allowance));
			put(&oom, fo, "precision_base", num(v->res_base));
			put(&oom, fo, "precision_candidate", num(v->res_cand));
			put(&oom, fo, "note", v->note[0] ? cJSON_CreateString(v->note) : cJSON_CreateNull());
		}
	}
	if (oom || !root) {
		cJSON_Delete(root);
		return tt_error_set(err, TT_ENOMEM, "out of memory while rendering the diff as JSON");
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (!text)
		return tt_error_set(err, TT_ENOMEM, "out of memory while rendering the diff as JSON");
	tt_buf_puts(out, text);
	tt_buf_puts(out, "\n");
	free(text);
	if (out->failed)
		return tt_error_set(err, TT_ENOMEM, "out of memory while rendering the diff as JSON");
	return TT_OK;
}
