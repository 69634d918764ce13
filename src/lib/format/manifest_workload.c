/* settings.workload (formats/run-v1.md 2.5): what a replay read and how it
 * sliced and timed it, so a report can name the trace it checks against. */
#include "format/manifest_workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/text_clean.h"

struct tt_workload_info *tt_manifest_set_workload(struct tt_manifest *m, const char *kind)
{
	struct tt_workload_info *w = calloc(1, sizeof *w);

	if (!w || tt_failed(tt_manifest_set_str(&w->kind, kind))) {
		free(w);
		return NULL;
	}
	tt__manifest_workload_release(m);
	m->workload = w;
	return w;
}

void tt__manifest_workload_release(struct tt_manifest *m)
{
	struct tt_workload_info *w = m->workload;

	if (!w)
		return;
	free(w->kind);
	free(w->format);
	free(w->file);
	free(w);
	m->workload = NULL;
}

int tt__manifest_workload_to_json(const struct tt_manifest *m, cJSON *settings)
{
	const struct tt_workload_info *w = m->workload;
	cJSON *o;

	if (!w)
		return 0;
	if (!settings || !(o = cJSON_AddObjectToObject(settings, "workload")))
		return -1;
	if (!cJSON_AddStringToObject(o, "kind", w->kind ? w->kind : "trace") ||
	    (w->format && !cJSON_AddStringToObject(o, "format", w->format)) ||
	    (w->file && !cJSON_AddStringToObject(o, "file", w->file)) ||
	    !cJSON_AddNumberToObject(o, "bytes", (double)w->bytes) ||
	    !cJSON_AddNumberToObject(o, "start_s", w->start_s) ||
	    !cJSON_AddNumberToObject(o, "duration_s", w->duration_s) ||
	    !cJSON_AddNumberToObject(o, "speedup", w->speedup) ||
	    !cJSON_AddNumberToObject(o, "output_cap", (double)w->output_cap) ||
	    !cJSON_AddNumberToObject(o, "requests", (double)w->requests) ||
	    !cJSON_AddNumberToObject(o, "rows", (double)w->rows) ||
	    !cJSON_AddNumberToObject(o, "span_s", w->span_s) ||
	    !cJSON_AddNumberToObject(o, "block_tokens", (double)w->block_tokens))
		return -1;
	if (w->groups && (!cJSON_AddNumberToObject(o, "groups", (double)w->groups) ||
			  !cJSON_AddNumberToObject(o, "prefix_tokens", (double)w->prefix_tokens)))
		return -1;
	return 0;
}

static int get_num(const cJSON *o, const char *k, double lo, double hi, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!v)
		return 1; /* absent: left at 0 */
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return 0;
	*out = v->valuedouble;
	return 1;
}

static int get_str(const cJSON *o, const char *k, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!v)
		return 1;
	if (!cJSON_IsString(v))
		return 0;
	*out = tt__text_clean(v->valuestring, strlen(v->valuestring), TT__MAX_SHOWN_STRING, 0);
	return *out != NULL;
}

enum tt_code tt__manifest_workload_from_json(const cJSON *root, const char *name,
					     struct tt_manifest *m, struct tt_error *err)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "settings");
	const cJSON *o = s ? cJSON_GetObjectItemCaseSensitive(s, "workload") : NULL;
	struct tt_workload_info *w;
	double oc = 0, rq = 0, rows = 0, bt = 0, by = 0, gr = 0, pt = 0;
	const char *bad = NULL;

	if (!o)
		return TT_OK;
	if (!cJSON_IsObject(o))
		return tt_error_set(err, TT_EFORMAT, "%s: settings.workload is not an object", name);
	w = tt_manifest_set_workload(m, "trace");
	if (!w)
		return tt_error_set(err, TT_ENOMEM, "out of memory reading %s", name);
	free(w->kind);
	w->kind = NULL;
	if (!get_str(o, "kind", &w->kind))
		bad = "kind";
	else if (!get_str(o, "format", &w->format))
		bad = "format";
	else if (!get_str(o, "file", &w->file))
		bad = "file";
	else if (!get_num(o, "bytes", 0, 1e18, &by))
		bad = "bytes";
	else if (!get_num(o, "groups", 0, 1e9, &gr))
		bad = "groups";
	else if (!get_num(o, "prefix_tokens", 0, 1e9, &pt))
		bad = "prefix_tokens";
	else if (!get_num(o, "start_s", 0, 1e12, &w->start_s))
		bad = "start_s";
	else if (!get_num(o, "duration_s", 0, 1e12, &w->duration_s))
		bad = "duration_s";
	else if (!get_num(o, "speedup", 0, 1e9, &w->speedup))
		bad = "speedup";
	else if (!get_num(o, "span_s", 0, 1e12, &w->span_s))
		bad = "span_s";
	else if (!get_num(o, "output_cap", 0, 1e15, &oc))
		bad = "output_cap";
	else if (!get_num(o, "requests", 0, 1e15, &rq))
		bad = "requests";
	else if (!get_num(o, "rows", 0, 1e15, &rows))
		bad = "rows";
	else if (!get_num(o, "block_tokens", 0, 1e9, &bt))
		bad = "block_tokens";
	if (bad)
		return tt_error_set(err, TT_EFORMAT, "%s: settings.workload.%s has the wrong type "
						     "or is out of range", name, bad);
	w->output_cap = (int64_t)oc;
	w->requests = (int64_t)rq;
	w->rows = (int64_t)rows;
	w->block_tokens = (int64_t)bt;
	w->bytes = (int64_t)by;
	w->groups = (int64_t)gr;
	w->prefix_tokens = (int64_t)pt;
	return TT_OK;
}
