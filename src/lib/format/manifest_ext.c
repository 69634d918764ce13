/* Import members of the run manifest: where an imported run came from, the
 * figures its source did not have, and the figures a source reported for a
 * cell it kept no per-request times for (formats/run-v1.md 2.3). */
#include "format/manifest_ext.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum tt_code tt_cell_set_reported(struct tt_cell_info *c, const char *key, double value)
{
	struct tt_reported *r;

	for (size_t i = 0; i < c->n_reported; i++)
		if (strcmp(c->reported[i].key, key) == 0) {
			c->reported[i].value = value;
			return TT_OK;
		}
	r = realloc(c->reported, (c->n_reported + 1) * sizeof *r);
	if (!r)
		return TT_FAILED;
	c->reported = r;
	r[c->n_reported].key = strdup(key);
	if (!r[c->n_reported].key)
		return TT_FAILED;
	r[c->n_reported].value = value;
	c->n_reported++;
	return TT_OK;
}

int tt_cell_reported(const struct tt_cell_info *c, const char *key, double *value)
{
	for (size_t i = 0; i < c->n_reported; i++)
		if (strcmp(c->reported[i].key, key) == 0) {
			if (value)
				*value = c->reported[i].value;
			return 1;
		}
	return 0;
}

static void source_release(struct tt_import_source *s)
{
	free(s->format);
	free(s->tool);
	free(s->tool_version);
	free(s->file);
	free(s->sha256);
}

enum tt_code tt_manifest_add_source(struct tt_manifest *m, const struct tt_import_source *src)
{
	struct tt_import_source *v = realloc(m->sources, (m->n_sources + 1) * sizeof *v), *s;

	if (!v)
		return TT_FAILED;
	m->sources = v;
	s = &v[m->n_sources];
	memset(s, 0, sizeof *s);
	s->bytes = src->bytes;
	if (tt_manifest_set_str(&s->format, src->format) || tt_manifest_set_str(&s->tool, src->tool) ||
	    tt_manifest_set_str(&s->tool_version, src->tool_version) ||
	    tt_manifest_set_str(&s->file, src->file) || tt_manifest_set_str(&s->sha256, src->sha256)) {
		source_release(s);
		return TT_FAILED;
	}
	m->n_sources++;
	return TT_OK;
}

int tt_manifest_unavailable(const struct tt_manifest *m, const char *figure)
{
	for (size_t i = 0; i < m->n_unavailable; i++)
		if (strcmp(m->unavailable[i], figure) == 0)
			return 1;
	return 0;
}

enum tt_code tt_manifest_add_unavailable(struct tt_manifest *m, const char *figure)
{
	char **v;

	if (tt_manifest_unavailable(m, figure))
		return TT_OK;
	v = realloc(m->unavailable, (m->n_unavailable + 1) * sizeof *v);
	if (!v)
		return TT_FAILED;
	m->unavailable = v;
	if (!(v[m->n_unavailable] = strdup(figure)))
		return TT_FAILED;
	m->n_unavailable++;
	return TT_OK;
}

int tt__manifest_ext_used(const struct tt_manifest *m)
{
	if (m->n_sources || m->n_unavailable)
		return 1;
	for (size_t i = 0; i < m->n_cells; i++)
		if (m->cells[i].n_reported || m->cells[i].reported_status)
			return 1;
	return 0;
}

static int add_str(cJSON *o, const char *k, const char *v)
{
	return v && !cJSON_AddStringToObject(o, k, v) ? -1 : 0;
}

int tt__manifest_ext_to_json(const struct tt_manifest *m, cJSON *root)
{
	cJSON *a;

	if (m->n_sources) {
		if (!(a = cJSON_AddArrayToObject(root, "imported_from")))
			return -1;
		for (size_t i = 0; i < m->n_sources; i++) {
			const struct tt_import_source *s = &m->sources[i];
			cJSON *o = cJSON_CreateObject();
			if (!o || !cJSON_AddItemToArray(a, o))
				return -1;
			if (add_str(o, "format", s->format) || add_str(o, "tool", s->tool) ||
			    add_str(o, "tool_version", s->tool_version) || add_str(o, "file", s->file) ||
			    add_str(o, "sha256", s->sha256) ||
			    !cJSON_AddNumberToObject(o, "bytes", (double)s->bytes))
				return -1;
		}
	}
	if (m->n_unavailable) {
		if (!(a = cJSON_AddArrayToObject(root, "unavailable")))
			return -1;
		for (size_t i = 0; i < m->n_unavailable; i++) {
			cJSON *s = cJSON_CreateString(m->unavailable[i]);
			if (!s || !cJSON_AddItemToArray(a, s))
				return -1;
		}
	}
	return 0;
}

int tt__cell_ext_to_json(const struct tt_cell_info *c, cJSON *cell)
{
	if (c->n_reported) {
		cJSON *o = cJSON_AddObjectToObject(cell, "reported");
		if (!o)
			return -1;
		for (size_t i = 0; i < c->n_reported; i++)
			if (isfinite(c->reported[i].value) &&
			    !cJSON_AddNumberToObject(o, c->reported[i].key, c->reported[i].value))
				return -1;
	}
	return add_str(cell, "reported_status", c->reported_status);
}

static enum tt_code nomem(struct tt_error *err, const char *name)
{
	return tt_error_set(err, TT_ENOMEM, "out of memory reading %s", name);
}

static enum tt_code source_from_json(const cJSON *o, size_t i, const char *name,
				     struct tt_manifest *m, struct tt_error *err)
{
	static const char *const keys[] = {"format", "tool", "tool_version", "file", "sha256"};
	const char *v[5];
	struct tt_import_source s;
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bytes");

	if (!cJSON_IsObject(o))
		return tt_error_set(err, TT_EFORMAT, "%s: imported_from[%zu] is not an object", name, i);
	for (size_t k = 0; k < 5; k++) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
		if (e && !cJSON_IsString(e))
			return tt_error_set(err, TT_EFORMAT, "%s: imported_from[%zu].%s is not a string",
					    name, i, keys[k]);
		v[k] = e ? e->valuestring : NULL;
	}
	if (b && !cJSON_IsNumber(b))
		return tt_error_set(err, TT_EFORMAT, "%s: imported_from[%zu].bytes is not a number",
				    name, i);
	s = (struct tt_import_source){.format = (char *)v[0], .tool = (char *)v[1],
				      .tool_version = (char *)v[2], .file = (char *)v[3],
				      .sha256 = (char *)v[4],
				      .bytes = b ? (int64_t)b->valuedouble : -1};
	return tt_manifest_add_source(m, &s) ? nomem(err, name) : TT_OK;
}

enum tt_code tt__manifest_ext_from_json(const cJSON *root, const char *name,
					struct tt_manifest *m, struct tt_error *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "imported_from"), *e;
	size_t i = 0;
	enum tt_code rc;

	if (a && !cJSON_IsArray(a))
		return tt_error_set(err, TT_EFORMAT, "%s: imported_from is not an array", name);
	cJSON_ArrayForEach(e, a)
	{
		if (tt_failed(rc = source_from_json(e, i++, name, m, err)))
			return rc;
	}
	a = cJSON_GetObjectItemCaseSensitive(root, "unavailable");
	if (a && !cJSON_IsArray(a))
		return tt_error_set(err, TT_EFORMAT, "%s: unavailable is not an array", name);
	i = 0;
	cJSON_ArrayForEach(e, a)
	{
		if (!cJSON_IsString(e))
			return tt_error_set(err, TT_EFORMAT, "%s: unavailable[%zu] is not a string",
					    name, i);
		if (tt_manifest_add_unavailable(m, e->valuestring))
			return nomem(err, name);
		i++;
	}
	return TT_OK;
}

enum tt_code tt__cell_ext_from_json(const cJSON *cell, const char *name, struct tt_cell_info *c,
				    struct tt_error *err)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(cell, "reported"), *e;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(cell, "reported_status");

	if (o && !cJSON_IsObject(o))
		return tt_error_set(err, TT_EFORMAT, "%s: cell '%s': reported is not an object", name,
				    c->id);
	cJSON_ArrayForEach(e, o)
	{
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
			return tt_error_set(err, TT_EFORMAT,
					    "%s: cell '%s': reported.%s is not a finite number", name,
					    c->id, e->string ? e->string : "?");
		if (tt_cell_set_reported(c, e->string, e->valuedouble))
			return nomem(err, name);
	}
	if (st && !cJSON_IsString(st))
		return tt_error_set(err, TT_EFORMAT, "%s: cell '%s': reported_status is not a string",
				    name, c->id);
	if (st && tt_manifest_set_str(&c->reported_status, st->valuestring))
		return nomem(err, name);
	return TT_OK;
}

void tt__manifest_ext_release(struct tt_manifest *m)
{
	for (size_t i = 0; i < m->n_sources; i++)
		source_release(&m->sources[i]);
	free(m->sources);
	for (size_t i = 0; i < m->n_unavailable; i++)
		free(m->unavailable[i]);
	free(m->unavailable);
}

void tt__cell_ext_release(struct tt_cell_info *c)
{
	for (size_t i = 0; i < c->n_reported; i++)
		free(c->reported[i].key);
	free(c->reported);
	free(c->reported_status);
}
