/* Run manifest: formats/run-v1.md section 2. */
#include "tokentrace/run.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "format/manifest_ext.h"
#include "format/manifest_rate.h"
#include "core/c_locale.h"
#include "format/manifest_workload.h"
#include "core/text_clean.h"
#include "tokentrace/units.h"

void tt_manifest_init(struct tt_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->format_major = TT_RUN_FORMAT_MAJOR;
	m->format_minor = TT_RUN_FORMAT_MINOR;
	m->max_model_len = -1;
	m->slot_context = -1;
	m->slots = -1;
	m->duration_s = 30;
	m->max_tokens = 4096;
	m->scrape_interval_s = 0.25;
	m->readiness_s = 3;
	m->readiness_timeout_s = 60;
	m->kv_capacity_tokens = -1;
	tt__manifest_rate_init(m);
}

static void cell_release(struct tt_cell_info *c)
{
	free(c->id);
	free(c->reason);
	free(c->trace);
	tt__cell_ext_release(c);
}

void tt_manifest_release(struct tt_manifest *m)
{
	if (!m)
		return;
	free(m->tool_name);
	free(m->tool_version);
	free(m->created);
	free(m->server_url);
	free(m->engine);
	free(m->engine_version);
	free(m->model);
	free(m->served_model);
	for (size_t i = 0; i < m->n_notes; i++) {
		free(m->notes[i].key);
		free(m->notes[i].value);
	}
	free(m->notes);
	free(m->endpoint);
	free(m->contexts);
	free(m->concurrency);
	free(m->prefill_contexts);
	free(m->prompt_kind);
	free(m->kv_capacity_source);
	for (size_t i = 0; i < m->n_cells; i++)
		cell_release(&m->cells[i]);
	free(m->cells);
	tt__manifest_ext_release(m);
	tt__manifest_rate_release(m);
	tt__manifest_workload_release(m);
	tt_manifest_init(m);
}

enum tt_code tt_manifest_set_str(char **dst, const char *src)
{
	char *copy = NULL;

	if (src && !(copy = strdup(src)))
		return TT_FAILED;
	free(*dst);
	*dst = copy;
	return TT_OK;
}

/* Append a note without looking for its key (the parser dedups once at
 * the end: checking each note against all earlier ones is quadratic). */
static enum tt_code append_note(struct tt_manifest *m, size_t *cap, const char *key,
				const char *value)
{
	struct tt_note *n;
	char *clean = NULL;

	if (value && strstr(key, "command")) {
		clean = tt_redact_secrets(value);
		if (!clean)
			return TT_FAILED;
		value = clean;
	}
	if (m->n_notes == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		n = realloc(m->notes, nc * sizeof *n);
		if (!n) {
			free(clean);
			return TT_FAILED;
		}
		m->notes = n;
		*cap = nc;
	}
	n = m->notes;
	n[m->n_notes].key = strdup(key);
	n[m->n_notes].value = strdup(value ? value : "");
	free(clean);
	if (!n[m->n_notes].key || !n[m->n_notes].value) {
		free(n[m->n_notes].key);
		free(n[m->n_notes].value);
		return TT_FAILED;
	}
	m->n_notes++;
	return TT_OK;
}

struct note_ix {
	const char *key;
	size_t i;
};

static int cmp_note_ix(const void *a, const void *b)
{
	const struct note_ix *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

/* A key given twice keeps its first place and its last value, as
 * tt_manifest_set_note would have left it. */
static enum tt_code dedup_notes(struct tt_manifest *m)
{
	struct note_ix *ix;
	size_t n = m->n_notes, out = 0;
	unsigned char *drop;

	if (n < 2)
		return TT_OK;
	ix = malloc(n * sizeof *ix);
	drop = calloc(n, 1);
	if (!ix || !drop) {
		free(ix);
		free(drop);
		return TT_FAILED;
	}
	for (size_t i = 0; i < n; i++) {
		ix[i].key = m->notes[i].key;
		ix[i].i = i;
	}
	qsort(ix, n, sizeof *ix, cmp_note_ix);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(ix[i].key, ix[j].key) == 0; j++)
			drop[ix[j].i] = 1;
		if (j - i > 1) {
			char *last = m->notes[ix[j - 1].i].value;
			m->notes[ix[j - 1].i].value = m->notes[ix[i].i].value;
			m->notes[ix[i].i].value = last;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (drop[i]) {
			free(m->notes[i].key);
			free(m->notes[i].value);
			continue;
		}
		m->notes[out++] = m->notes[i];
	}
	m->n_notes = out;
	free(ix);
	free(drop);
	return TT_OK;
}

enum tt_code tt_manifest_set_note(struct tt_manifest *m, const char *key, const char *value)
{
	struct tt_note *n;
	char *clean = NULL;
	enum tt_code rc;

	/* A command line is where API keys hide: no writer can store one. */
	if (value && strstr(key, "command")) {
		clean = tt_redact_secrets(value);
		if (!clean)
			return TT_FAILED;
		value = clean;
	}
	rc = TT_OK;
	for (size_t i = 0; i < m->n_notes; i++)
		if (strcmp(m->notes[i].key, key) == 0) {
			rc = tt_manifest_set_str(&m->notes[i].value, value);
			free(clean);
			return rc;
		}
	n = realloc(m->notes, (m->n_notes + 1) * sizeof *n);
	if (!n) {
		free(clean);
		return TT_FAILED;
	}
	m->notes = n;
	n[m->n_notes].key = strdup(key);
	n[m->n_notes].value = strdup(value ? value : "");
	free(clean);
	if (!n[m->n_notes].key || !n[m->n_notes].value) {
		free(n[m->n_notes].key);
		free(n[m->n_notes].value);
		return TT_FAILED;
	}
	m->n_notes++;
	return TT_OK;
}

const char *tt_manifest_note(const struct tt_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n_notes; i++)
		if (strcmp(m->notes[i].key, key) == 0)
			return m->notes[i].value;
	return NULL;
}

struct tt_cell_info *tt__manifest_push_cell(struct tt_manifest *m, const char *id)
{
	struct tt_cell_info *cells, *c;

	cells = realloc(m->cells, (m->n_cells + 1) * sizeof *cells);
	if (!cells)
		return NULL;
	m->cells = cells;
	c = &cells[m->n_cells];
	memset(c, 0, sizeof *c);
	c->id = strdup(id);
	if (!c->id)
		return NULL;
	c->state = TT_CELL_PENDING;
	c->kv_need_tokens = -1;
	c->start_ns = c->ready_ns = c->window_start_ns = c->window_end_ns = c->end_ns = -1;
	m->n_cells++;
	return c;
}

enum tt_code tt_manifest_add_cell(struct tt_manifest *m, enum tt_phase phase, int64_t context,
				  int concurrency, size_t *index)
{
	struct tt_cell_info *c;
	char id[64];

	if (phase == TT_PHASE_PREFILL)
		snprintf(id, sizeof id, "prefill-%lld", (long long)context);
	else
		snprintf(id, sizeof id, "decode-%lldx%d", (long long)context, concurrency);
	c = tt__manifest_push_cell(m, id);
	if (!c)
		return TT_FAILED;
	c->phase = phase;
	c->context = context;
	c->concurrency = phase == TT_PHASE_PREFILL ? 1 : concurrency;
	if (index)
		*index = m->n_cells - 1;
	return TT_OK;
}

/* One cell-id syntax everywhere (issue 24.4): contexts as the capture's
 * options take them (tt_parse_tokens: 8K, 125K, 131072), the concurrency
 * a plain number, the rate as in the id ("0p5") or with a point. */
int tt_cell_id_canonical(const char *id, char *buf, size_t len)
{
	char ctx[32], *end;
	const char *p, *sep;
	int64_t context;

	if (!len)
		return -1;
	snprintf(buf, len, "%s", id ? id : "");
	if (!id)
		return -1;
	if (!strncmp(id, "prefill-", 8))
		p = id + 8, sep = p + strlen(p);
	else if (!strncmp(id, "decode-", 7))
		p = id + 7, sep = strchr(p, 'x');
	else if (!strncmp(id, "rate-", 5))
		p = id + 5, sep = strchr(p, 'r');
	else
		return -1;
	if (!sep || sep == p || (size_t)(sep - p) >= sizeof ctx)
		return -1;
	snprintf(ctx, sizeof ctx, "%.*s", (int)(sep - p), p);
	context = tt_parse_tokens(ctx);
	if (context <= 0)
		return -1;
	if (id[0] == 'p') {
		snprintf(buf, len, "prefill-%lld", (long long)context);
	} else if (id[0] == 'd') {
		long conc;
		if (sep[1] < '0' || sep[1] > '9')
			return -1;
		errno = 0;
		conc = strtol(sep + 1, &end, 10);
		if (*end || errno || conc <= 0 || conc > INT_MAX)
			return -1;
		snprintf(buf, len, "decode-%lldx%ld", (long long)context, conc);
	} else {
		char r[48];
		double rate;
		if ((sep[1] < '0' || sep[1] > '9') || strlen(sep + 1) >= sizeof r)
			return -1;
		snprintf(r, sizeof r, "%s", sep + 1);
		for (char *q = r; *q; q++)
			if (*q == 'p')
				*q = '.';
		rate = tt__strtod_c(r, &end);
		if (*end || !(rate > 0) || !isfinite(rate))
			return -1;
		tt_rate_cell_id(context, rate, buf, len);
	}
	return 0;
}

long tt_manifest_find_cell(const struct tt_manifest *m, const char *id)
{
	char canon[96];

	for (size_t i = 0; i < m->n_cells; i++)
		if (strcmp(m->cells[i].id, id) == 0)
			return (long)i;
	/* "decode-8Kx64" names the cell "decode-8192x64" */
	if (tt_cell_id_canonical(id, canon, sizeof canon) == 0 && strcmp(canon, id) != 0)
		for (size_t i = 0; i < m->n_cells; i++)
			if (strcmp(m->cells[i].id, canon) == 0)
				return (long)i;
	return -1;
}

static const char *const state_names[] = {"pending", "running", "done", "over_capacity",
					  "interrupted", "failed"};

const char *tt_cell_state_name(enum tt_cell_state s)
{
	if ((unsigned)s < sizeof state_names / sizeof *state_names)
		return state_names[s];
	return "unknown";
}

/* ---- to JSON ----------------------------------------------------------- */

static cJSON *int_array64(const int64_t *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
}

static void add_time(cJSON *o, const char *k, int64_t v)
{
	if (v >= 0)
		cJSON_AddNumberToObject(o, k, (double)v);
}

enum tt_code tt_manifest_to_json(const struct tt_manifest *m, char **out, struct tt_error *err)
{
	cJSON *root = cJSON_CreateObject(), *o, *a;
	char ver[32];

	if (!root)
		goto nomem;
	cJSON_AddStringToObject(root, "format", "tokentrace-run");
	snprintf(ver, sizeof ver, "%d.%d", m->format_major,
		 m->workload && m->format_minor < TT_RUN_FORMAT_MINOR_WORKLOAD ?
			 TT_RUN_FORMAT_MINOR_WORKLOAD :
		 tt__manifest_sweep_used(m) && m->format_minor < TT_RUN_FORMAT_MINOR_SWEEP ?
			 TT_RUN_FORMAT_MINOR_SWEEP :
		 tt__manifest_rate_used(m) && m->format_minor < TT_RUN_FORMAT_MINOR_RATE ?
			 TT_RUN_FORMAT_MINOR_RATE :
		 tt__manifest_ext_used(m) && m->format_minor < TT_RUN_FORMAT_MINOR_IMPORT ?
			 TT_RUN_FORMAT_MINOR_IMPORT : m->format_minor);
	cJSON_AddStringToObject(root, "format_version", ver);
	o = cJSON_AddObjectToObject(root, "tool");
	add_str(o, "name", m->tool_name);
	add_str(o, "version", m->tool_version);
	add_str(root, "created", m->created);
	/* A string: Unix ns exceed 2^53, which a JSON number cannot hold exactly. */
	snprintf(ver, sizeof ver, "%lld", (long long)m->origin_unix_ns);
	cJSON_AddStringToObject(root, "origin_unix_ns", ver);
	o = cJSON_AddObjectToObject(root, "server");
	add_str(o, "url", m->server_url);
	add_str(o, "engine", m->engine);
	add_str(o, "engine_version", m->engine_version);
	if (m->slots >= 0)
		cJSON_AddNumberToObject(o, "slots", (double)m->slots);
	o = cJSON_AddObjectToObject(root, "model");
	add_str(o, "id", m->model);
	add_str(o, "served_name", m->served_model);
	if (m->max_model_len >= 0)
		cJSON_AddNumberToObject(o, "max_model_len", (double)m->max_model_len);
	if (m->slot_context >= 0)
		cJSON_AddNumberToObject(o, "slot_context", (double)m->slot_context);
	a = cJSON_AddArrayToObject(root, "notes");
	for (size_t i = 0; i < m->n_notes; i++) {
		cJSON *n = cJSON_CreateObject();
		cJSON_AddStringToObject(n, "key", m->notes[i].key);
		cJSON_AddStringToObject(n, "value", m->notes[i].value);
		cJSON_AddItemToArray(a, n);
	}
	o = cJSON_AddObjectToObject(root, "settings");
	add_str(o, "endpoint", m->endpoint ? m->endpoint : "completions");
	cJSON_AddItemToObject(o, "contexts", int_array64(m->contexts, m->n_contexts));
	a = cJSON_AddArrayToObject(o, "concurrency");
	for (size_t i = 0; i < m->n_concurrency; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(m->concurrency[i]));
	cJSON_AddItemToObject(o, "prefill_contexts",
			      int_array64(m->prefill_contexts, m->n_prefill_contexts));
	cJSON_AddNumberToObject(o, "duration_s", m->duration_s);
	cJSON_AddNumberToObject(o, "max_tokens", (double)m->max_tokens);
	{
		cJSON *p = cJSON_AddObjectToObject(o, "prompt");
		add_str(p, "kind", m->prompt_kind ? m->prompt_kind : "token_ids");
		cJSON_AddNumberToObject(p, "seed", (double)m->seed);
	}
	cJSON_AddNumberToObject(o, "scrape_interval_s", m->scrape_interval_s);
	cJSON_AddNumberToObject(o, "readiness_s", m->readiness_s);
	cJSON_AddNumberToObject(o, "readiness_timeout_s", m->readiness_timeout_s);
	o = cJSON_AddObjectToObject(root, "kv_capacity");
	cJSON_AddNumberToObject(o, "tokens", (double)m->kv_capacity_tokens);
	add_str(o, "source", m->kv_capacity_source ? m->kv_capacity_source : "unknown");
	a = cJSON_AddArrayToObject(root, "cells");
	for (size_t i = 0; i < m->n_cells; i++) {
		const struct tt_cell_info *c = &m->cells[i];
		cJSON *e;
		if (c->phase == TT_PHASE_RATE)
			continue; /* in rate_cells (2.4) */
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "id", c->id);
		cJSON_AddStringToObject(e, "phase", c->phase == TT_PHASE_PREFILL ? "prefill" : "decode");
		cJSON_AddNumberToObject(e, "context", (double)c->context);
		cJSON_AddNumberToObject(e, "concurrency", c->concurrency);
		cJSON_AddStringToObject(e, "state", tt_cell_state_name(c->state));
		add_str(e, "reason", c->reason);
		add_str(e, "trace", c->trace);
		if (c->kv_need_tokens >= 0)
			cJSON_AddNumberToObject(e, "kv_need_tokens", (double)c->kv_need_tokens);
		add_time(e, "start_ns", c->start_ns);
		add_time(e, "ready_ns", c->ready_ns);
		add_time(e, "window_start_ns", c->window_start_ns);
		add_time(e, "window_end_ns", c->window_end_ns);
		add_time(e, "end_ns", c->end_ns);
		if (c->ready_timed_out)
			cJSON_AddBoolToObject(e, "ready_timed_out", 1);
		cJSON_AddItemToArray(a, e);
		if (tt__cell_ext_to_json(c, e))
			goto nomem;
	}
	if (tt__manifest_ext_to_json(m, root))
		goto nomem;
	if (tt__manifest_rate_to_json(m, root, cJSON_GetObjectItemCaseSensitive(root, "settings")))
		goto nomem;
	if (tt__manifest_workload_to_json(m, cJSON_GetObjectItemCaseSensitive(root, "settings")))
		goto nomem;
	*out = cJSON_Print(root);
	cJSON_Delete(root);
	if (!*out)
		goto nomem;
	return TT_OK;
nomem:
	cJSON_Delete(root);
	return tt_error_set(err, TT_ENOMEM, "out of memory writing the manifest");
}

/* ---- from JSON ----------------------------------------------------------- */

static const char *get_str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_num(const cJSON *o, const char *k, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

static int64_t get_i64(const cJSON *o, const char *k, int64_t dflt)
{
	double d;
	if (!get_num(o, k, &d) || d < -9.2e18 || d > 9.2e18)
		return dflt;
	return (int64_t)d;
}

/* Every string read from a manifest reaches outputs: it is made valid
 * UTF-8 without control characters and cut to TT__MAX_SHOWN_STRING here,
 * once, so no renderer can pass an escape sequence or a 10 MB name on. */
static char *clean_copy(const char *s, int keep_lines)
{
	return tt__text_clean(s, strlen(s), TT__MAX_SHOWN_STRING, keep_lines);
}

static int dup_str(char **dst, const cJSON *o, const char *k)
{
	const char *s = get_str(o, k);
	char *c;

	if (!s)
		return 0;
	if (!(c = clean_copy(s, 0)))
		return 1;
	free(*dst);
	*dst = c;
	return 0;
}

/* Integer array member; non-integers and out-of-range values are errors. */
static int get_i64_array(const cJSON *o, const char *k, int64_t **out, size_t *n)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, k), *e;
	size_t i = 0, count;

	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return -1;
	count = (size_t)cJSON_GetArraySize(a);
	*out = calloc(count ? count : 1, sizeof **out);
	if (!*out)
		return -2;
	cJSON_ArrayForEach(e, a)
	{
		if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e15)
			return -1;
		(*out)[i++] = (int64_t)e->valuedouble;
	}
	*n = i;
	return 0;
}

static int parse_phase(const char *s, enum tt_phase *p)
{
	if (s && strcmp(s, "prefill") == 0)
		*p = TT_PHASE_PREFILL;
	else if (s && strcmp(s, "decode") == 0)
		*p = TT_PHASE_DECODE;
	else
		return -1;
	return 0;
}

static int parse_state(const char *s, enum tt_cell_state *st)
{
	for (size_t i = 0; i < sizeof state_names / sizeof *state_names; i++)
		if (s && strcmp(s, state_names[i]) == 0) {
			*st = (enum tt_cell_state)i;
			return 0;
		}
	return -1;
}

static int cmp_cell_id(const void *a, const void *b)
{
	const struct tt_cell_info *x = *(const struct tt_cell_info *const *)a;
	const struct tt_cell_info *y = *(const struct tt_cell_info *const *)b;
	return strcmp(x->id, y->id);
}

/* Cell ids are unique: sorted once, neighbours compared (linear-log, where
 * looking each id up among the earlier ones was quadratic). */
static enum tt_code check_unique_ids(const char *name, struct tt_manifest *m,
				     struct tt_error *err)
{
	const struct tt_cell_info **v;
	enum tt_code rc = TT_OK;

	if (m->n_cells < 2)
		return TT_OK;
	v = malloc(m->n_cells * sizeof *v);
	if (!v)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n_cells; i++)
		v[i] = &m->cells[i];
	qsort(v, m->n_cells, sizeof *v, cmp_cell_id);
	for (size_t i = 1; i < m->n_cells; i++)
		if (strcmp(v[i - 1]->id, v[i]->id) == 0) {
			rc = tt_error_set(err, TT_EFORMAT, "%s: cell id '%s' appears twice", name,
					  v[i]->id);
			break;
		}
	free(v);
	return rc;
}

/* The spec's pattern, ^[a-z]+-[0-9]+(x[0-9]+)?$ (formats/run-v1.md 1): an
 * id reaches every output, so nothing else may pass. */
static int valid_cell_id(const char *id)
{
	const char *p = id;
	size_t n = 0;

	while (*p >= 'a' && *p <= 'z')
		p++;
	if (p == id || *p++ != '-')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++, n++;
	if (!n)
		return 0;
	if (*p == 'x') {
		p++;
		n = 0;
		while (*p >= '0' && *p <= '9')
			p++, n++;
		if (!n)
			return 0;
	}
	return *p == '\0' && p - id < 64;
}

static enum tt_code parse_cells(const cJSON *a, const char *name, struct tt_manifest *m,
				struct tt_error *err)
{
	const cJSON *e;
	size_t i = 0, count;

	if (!cJSON_IsArray(a))
		return tt_error_set(err, TT_EFORMAT, "%s: 'cells' is not an array", name);
	/* One allocation for all cells: growing by one per cell copies the
	 * array each time. */
	count = (size_t)cJSON_GetArraySize(a);
	if (count) {
		m->cells = calloc(count, sizeof *m->cells);
		if (!m->cells)
			return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	cJSON_ArrayForEach(e, a)
	{
		const char *id = get_str(e, "id");
		enum tt_phase phase;
		enum tt_cell_state st = TT_CELL_PENDING;
		double ctx, conc;
		struct tt_cell_info *c;
		size_t idx;
		const char *trace = get_str(e, "trace");

		if (id && !valid_cell_id(id))
			return tt_error_set(err, TT_EFORMAT, "%s: cell %zu: id is not of the form "
					    "prefill-<context> or decode-<context>x<concurrency>", name, i);
		if (!id || parse_phase(get_str(e, "phase"), &phase) || !get_num(e, "context", &ctx) ||
		    !get_num(e, "concurrency", &conc) || ctx < 0 || ctx > 1e15 || conc < 1 || conc > 1e6 ||
		    parse_state(get_str(e, "state"), &st))
			return tt_error_set(err, TT_EFORMAT,
					    "%s: cell %zu ('%s') lacks a valid id, phase, context, "
					    "concurrency or state",
					    name, i, id ? id : "?");
		/* A trace path must stay inside the run. */
		if (trace && (trace[0] == '/' || strstr(trace, "..")))
			return tt_error_set(err, TT_EFORMAT, "%s: cell '%s': trace path '%s' leaves the run",
					    name, id, trace);
		idx = m->n_cells;
		c = &m->cells[idx];
		memset(c, 0, sizeof *c);
		m->n_cells++;
		c->phase = phase;
		c->context = (int64_t)ctx;
		c->concurrency = phase == TT_PHASE_PREFILL ? 1 : (int)conc;
		if (tt_manifest_set_str(&c->id, id) || dup_str(&c->reason, e, "reason") ||
		    dup_str(&c->trace, e, "trace"))
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		c->state = st;
		c->kv_need_tokens = get_i64(e, "kv_need_tokens", -1);
		c->start_ns = get_i64(e, "start_ns", -1);
		c->ready_ns = get_i64(e, "ready_ns", -1);
		c->window_start_ns = get_i64(e, "window_start_ns", -1);
		c->window_end_ns = get_i64(e, "window_end_ns", -1);
		c->end_ns = get_i64(e, "end_ns", -1);
		c->ready_timed_out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ready_timed_out"));
		{
			enum tt_code rc = tt__cell_ext_from_json(e, name, c, err);
			if (tt_failed(rc))
				return rc;
		}
		i++;
	}
	return check_unique_ids(name, m, err);
}

/* "MAJOR.MINOR", digits only; a number too large for an int is not a
 * version we know, but it is still named as written (it was "-1.1"). */
static int parse_version(const char *s, int *major, int *minor)
{
	long v[2];
	for (int k = 0; k < 2; k++) {
		const char *p = s;
		v[k] = 0;
		while (*p >= '0' && *p <= '9') {
			v[k] = v[k] < 100000000 ? v[k] * 10 + (*p - '0') : 999999999;
			p++;
		}
		if (p == s || (k == 0 ? *p != '.' : *p != '\0'))
			return -1;
		s = p + 1;
	}
	/* Saturated: a huge minor is still a readable 1.x. */
	*major = (int)v[0];
	*minor = (int)v[1];
	return 0;
}

enum tt_code tt_manifest_from_json(const char *text, size_t len, const char *name,
				   struct tt_manifest *m, struct tt_error *err)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *o;
	const char *ver;
	int major = 0, minor = 0;
	enum tt_code rc = TT_OK;
	double d;

	tt_manifest_init(m);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
		return tt_error_set(err, TT_EFORMAT, "%s: not valid JSON (near byte %zu)", name, off);
	}
	if (!cJSON_IsObject(root) || !get_str(root, "format") ||
	    strcmp(get_str(root, "format"), "tokentrace-run") != 0) {
		rc = tt_error_set(err, TT_EFORMAT, "%s: not a tokentrace run manifest "
				  "(no \"format\": \"tokentrace-run\")", name);
		goto cleanup;
	}
	ver = get_str(root, "format_version");
	if (!ver || parse_version(ver, &major, &minor)) {
		rc = tt_error_set(err, TT_EFORMAT, "%s: missing or bad format_version (want "
				  "\"MAJOR.MINOR\", e.g. \"1.0\")", name);
		goto cleanup;
	}
	if (major != TT_RUN_FORMAT_MAJOR) {
		rc = tt_error_set(err, TT_EVERSION,
				  "%s: run format version %.20s%s found; this tokentrace %s reads "
				  "versions %d.x",
				  name, ver, strlen(ver) > 20 ? "..." : "", tt_version(),
				  TT_RUN_FORMAT_MAJOR);
		goto cleanup;
	}
	m->format_major = major;
	m->format_minor = minor;
	o = cJSON_GetObjectItemCaseSensitive(root, "tool");
	if (dup_str(&m->tool_name, o, "name") || dup_str(&m->tool_version, o, "version") ||
	    dup_str(&m->created, root, "created"))
		goto nomem;
	if (get_str(root, "origin_unix_ns"))
		m->origin_unix_ns = strtoll(get_str(root, "origin_unix_ns"), NULL, 10);
	o = cJSON_GetObjectItemCaseSensitive(root, "server");
	if (dup_str(&m->server_url, o, "url") || dup_str(&m->engine, o, "engine") ||
	    dup_str(&m->engine_version, o, "engine_version"))
		goto nomem;
	{
		int64_t slots = get_i64(o, "slots", -1);
		m->slots = slots >= 0 && slots <= INT32_MAX ? (int)slots : -1;
	}
	o = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (dup_str(&m->model, o, "id") || dup_str(&m->served_model, o, "served_name"))
		goto nomem;
	m->max_model_len = get_i64(o, "max_model_len", -1);
	m->slot_context = get_i64(o, "slot_context", -1);
	o = cJSON_GetObjectItemCaseSensitive(root, "notes");
	if (cJSON_IsArray(o)) {
		const cJSON *n;
		size_t cap = 0;
		cJSON_ArrayForEach(n, o)
		{
			const char *k = get_str(n, "key"), *v = get_str(n, "value");
			char *ck, *cv;
			int bad;
			if (!k || !v)
				continue;
			ck = clean_copy(k, 0);
			cv = clean_copy(v, 1); /* a launch command may span lines */
			bad = !ck || !cv || append_note(m, &cap, ck, cv);
			free(ck);
			free(cv);
			if (bad)
				goto nomem;
		}
		if (dedup_notes(m))
			goto nomem;
	}
	o = cJSON_GetObjectItemCaseSensitive(root, "settings");
	if (o) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt");
		int64_t *conc = NULL;
		size_t nconc = 0;
		int bad;

		if (dup_str(&m->endpoint, o, "endpoint"))
			goto nomem;
		bad = get_i64_array(o, "contexts", &m->contexts, &m->n_contexts);
		if (!bad)
			bad = get_i64_array(o, "prefill_contexts", &m->prefill_contexts,
					    &m->n_prefill_contexts);
		if (!bad)
			bad = get_i64_array(o, "concurrency", &conc, &nconc);
		if (bad == -2) {
			free(conc);
			goto nomem;
		}
		if (bad) {
			free(conc);
			rc = tt_error_set(err, TT_EFORMAT, "%s: settings: contexts, prefill_contexts "
					  "and concurrency must be arrays of non-negative integers", name);
			goto cleanup;
		}
		if (nconc) {
			m->concurrency = calloc(nconc, sizeof *m->concurrency);
			if (!m->concurrency) {
				free(conc);
				goto nomem;
			}
			for (size_t i = 0; i < nconc; i++) {
				if (conc[i] < 1 || conc[i] > 1000000) {
					rc = tt_error_set(err, TT_EFORMAT, "%s: settings: concurrency "
							  "%lld is not in 1..1000000", name, (long long)conc[i]);
					free(conc);
					goto cleanup;
				}
				m->concurrency[i] = (int)conc[i];
			}
			m->n_concurrency = nconc;
		}
		free(conc);
		if (get_num(o, "duration_s", &d))
			m->duration_s = d;
		m->max_tokens = get_i64(o, "max_tokens", m->max_tokens);
		if (p) {
			if (dup_str(&m->prompt_kind, p, "kind"))
				goto nomem;
			m->seed = (uint64_t)get_i64(p, "seed", 0);
		}
		if (get_num(o, "scrape_interval_s", &d))
			m->scrape_interval_s = d;
		if (get_num(o, "readiness_s", &d))
			m->readiness_s = d;
		if (get_num(o, "readiness_timeout_s", &d))
			m->readiness_timeout_s = d;
	}
	o = cJSON_GetObjectItemCaseSensitive(root, "kv_capacity");
	if (o) {
		m->kv_capacity_tokens = get_i64(o, "tokens", -1);
		if (dup_str(&m->kv_capacity_source, o, "source"))
			goto nomem;
	}
	o = cJSON_GetObjectItemCaseSensitive(root, "cells");
	if (o) {
		rc = parse_cells(o, name, m, err);
		if (tt_failed(rc))
			goto cleanup;
	}
	rc = tt__manifest_ext_from_json(root, name, m, err);
	if (rc == TT_OK)
		rc = tt__manifest_rate_from_json(root, name, m, err);
	if (rc == TT_OK)
		rc = tt__manifest_workload_from_json(root, name, m, err);
	goto cleanup;
nomem:
	rc = tt_error_set(err, TT_ENOMEM, "out of memory reading %s", name);
cleanup:
	cJSON_Delete(root);
	if (tt_failed(rc))
		tt_manifest_release(m);
	return rc;
}

/* ---- secrets -------------------------------------------------------------- */

static int ieq_prefix(const char *s, const char *p)
{
	for (; *p; s++, p++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*p))
			return 0;
	return 1;
}

/* Does the option/variable name ending right before `end` name a secret? */
static int secret_name(const char *start, const char *end)
{
	static const char *const words[] = {"key", "token", "secret", "password", "passwd"};
	size_t n = (size_t)(end - start);
	for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
		size_t w = strlen(words[i]);
		if (n >= w && ieq_prefix(end - w, words[i]))
			return 1;
	}
	return 0;
}

/* Where a value starting at p ends: a quoted value at its closing quote,
 * spaces and all ("SEKRET q4" is one key), else at the next space. */
static const char *value_end(const char *p)
{
	if (*p == '"' || *p == '\'') {
		const char *q = strchr(p + 1, *p);
		return q ? q + 1 : p + strlen(p);
	}
	while (*p && !isspace((unsigned char)*p))
		p++;
	return p;
}

static char *put(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* A URL word: the user:password@ of its authority, and the value of every
 * query parameter whose name names a secret (?api_key=, &token=), become
 * <redacted>, as the capture shows a URL (capture/run_open.c shown_url). */
static char *redact_url(char *o, const char *w, const char *e, const char *red, size_t rn)
{
	const char *auth = strstr(w, "://") + 3, *host_end, *at, *q;

	host_end = auth;
	while (host_end < e && *host_end != '/' && *host_end != '?' && *host_end != '#')
		host_end++;
	at = NULL;
	for (const char *c = auth; c < host_end; c++)
		if (*c == '@')
			at = c;
	o = put(o, w, (size_t)(auth - w));
	if (at) {
		o = put(o, red, rn);
		auth = at;
	}
	q = memchr(auth, '?', (size_t)(e - auth));
	if (!q)
		return put(o, auth, (size_t)(e - auth));
	o = put(o, auth, (size_t)(q + 1 - auth));
	for (const char *p = q + 1; p < e;) {
		const char *amp = p, *eq;
		while (amp < e && *amp != '&' && *amp != ';' && *amp != '#')
			amp++;
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq && secret_name(p, eq)) {
			o = put(o, p, (size_t)(eq + 1 - p));
			o = put(o, red, rn);
		} else {
			o = put(o, p, (size_t)(amp - p));
		}
		if (amp < e)
			*o++ = *amp++;
		p = amp;
	}
	return o;
}

char *tt_redact_secrets(const char *text)
{
	static const char red[] = "<redacted>";
	const size_t rn = sizeof red - 1;
	size_t len = strlen(text);
	/* Worst case every byte starts a redacted value. */
	char *out = malloc(len * (sizeof red) + 1), *o = out;
	const char *p = text;

	if (!out)
		return NULL;
	while (*p) {
		const char *w = p, *e;
		int redact_next = 0;
		while (*p && !isspace((unsigned char)*p))
			p++;
		e = p;
		/* WORD is NAME=VALUE, --name=VALUE, --name VALUE, -k VALUE,
		 * "Bearer VALUE", or a URL with credentials or a key in it. */
		{
			const char *eq = memchr(w, '=', (size_t)(e - w));
			const char *scheme = strstr(w, "://");
			if (scheme && scheme < e && (!eq || scheme < eq)) {
				o = redact_url(o, w, e, red, rn);
			} else if (eq && secret_name(w, eq)) {
				o = put(o, w, (size_t)(eq - w + 1));
				o = put(o, red, rn);
				/* a quoted value may hold spaces: all of it goes */
				if (eq[1] == '"' || eq[1] == '\'')
					p = e = value_end(eq + 1);
			} else {
				o = put(o, w, (size_t)(e - w));
				if (!eq && ((e - w > 2 && w[0] == '-' && secret_name(w, e)) ||
					    (e - w == 2 && w[0] == '-' && w[1] == 'k') ||
					    (e - w == 6 && ieq_prefix(w, "bearer"))))
					redact_next = 1;
			}
		}
		while (*p && isspace((unsigned char)*p))
			*o++ = *p++;
		if (redact_next && *p && *p != '-') {
			p = value_end(p);
			o = put(o, red, rn);
		}
	}
	*o = '\0';
	return out;
}

enum tt_code tt_manifest_copy(struct tt_manifest *dst, const struct tt_manifest *src,
			      struct tt_error *err)
{
	/* Through JSON: one code path to keep right, and a manifest is small. */
	char *json = NULL;
	enum tt_code rc = tt_manifest_to_json(src, &json, err);

	if (tt_failed(rc)) {
		tt_manifest_init(dst);
		return rc;
	}
	rc = tt_manifest_from_json(json, strlen(json), "manifest", dst, err);
	free(json);
	return rc;
}
