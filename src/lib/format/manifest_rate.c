/* The open-loop members of a manifest: settings (rates, arrivals,
 * burstiness, warm-up, drain, output lengths) and the rate_cells array
 * (formats/run-v1.md 2.4, format 1.2), and what 1.3 added: the sweep and
 * SLO search asked for and an output-length histogram. */
#include "format/manifest_rate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "core/text_clean.h"

void tt__manifest_rate_init(struct tt_manifest *m)
{
	m->burstiness = 1;
	m->warmup_s = 5;
	m->drain_s = 10;
}

int tt__manifest_rate_used(const struct tt_manifest *m)
{
	if (m->n_rates || m->arrivals || m->output_max > 0 || tt__manifest_sweep_used(m))
		return 1;
	for (size_t i = 0; i < m->n_cells; i++)
		if (m->cells[i].phase == TT_PHASE_RATE)
			return 1;
	return 0;
}

int tt__manifest_sweep_used(const struct tt_manifest *m)
{
	return m->rate_sweep || m->slo || m->n_output_bins;
}

void tt_rate_cell_id(int64_t context, double rate, char *buf, size_t len)
{
	char r[48];

	tt__snprintf_c(r, sizeof r, "%g", rate);
	for (char *p = r; *p; p++)
		if (*p == '.')
			*p = 'p';
	snprintf(buf, len, "rate-%lldr%s", (long long)context, r);
}

int tt__rate_cell_id_valid(const char *id)
{
	const char *p = id;
	size_t n = 0;

	if (strncmp(p, "rate-", 5) != 0)
		return 0;
	p += 5;
	while (*p >= '0' && *p <= '9')
		p++, n++;
	if (!n || *p++ != 'r')
		return 0;
	n = 0;
	while (*p >= '0' && *p <= '9')
		p++, n++;
	if (!n)
		return 0;
	if (*p == 'p') {
		p++;
		n = 0;
		while (*p >= '0' && *p <= '9')
			p++, n++;
		if (!n)
			return 0;
	}
	return *p == '\0' && p - id < 64;
}

enum tt_code tt_manifest_add_rate_cell(struct tt_manifest *m, int64_t context, double rate,
				       size_t *index)
{
	struct tt_cell_info *c;
	char id[64];

	if (!(rate > 0) || !isfinite(rate) || context < 0)
		return TT_FAILED;
	tt_rate_cell_id(context, rate, id, sizeof id);
	c = tt__manifest_push_cell(m, id);
	if (!c)
		return TT_FAILED;
	c->phase = TT_PHASE_RATE;
	c->context = context;
	c->concurrency = 0;
	c->rate = rate;
	if (index)
		*index = m->n_cells - 1;
	return TT_OK;
}

static const char *const states[] = {"pending", "running", "done", "over_capacity",
				     "interrupted", "failed"};

static void add_time(cJSON *o, const char *k, int64_t v)
{
	if (v >= 0)
		cJSON_AddNumberToObject(o, k, (double)v);
}

/* output_tokens.bins (1.3): [{"min", "max", "weight"}, ...] and file. */
static int bins_to_json(const struct tt_manifest *m, cJSON *o)
{
	cJSON *a = cJSON_AddArrayToObject(o, "bins");

	if (!a)
		return -1;
	for (size_t i = 0; i < m->n_output_bins; i++) {
		cJSON *b = cJSON_CreateObject();
		if (!b)
			return -1;
		cJSON_AddItemToArray(a, b);
		cJSON_AddNumberToObject(b, "min", (double)m->output_bins[i].min);
		cJSON_AddNumberToObject(b, "max", (double)m->output_bins[i].max);
		cJSON_AddNumberToObject(b, "weight", m->output_bins[i].weight);
	}
	if (m->output_hist_file)
		cJSON_AddStringToObject(o, "file", m->output_hist_file);
	return 0;
}

int tt__manifest_rate_to_json(const struct tt_manifest *m, cJSON *root, cJSON *settings)
{
	cJSON *a;

	if (!tt__manifest_rate_used(m))
		return 0;
	if (settings) {
		a = cJSON_AddArrayToObject(settings, "rates");
		if (!a)
			return -1;
		for (size_t i = 0; i < m->n_rates; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(m->rates[i]));
		cJSON_AddStringToObject(settings, "arrivals", m->arrivals ? m->arrivals : "constant");
		cJSON_AddNumberToObject(settings, "burstiness", m->burstiness);
		cJSON_AddNumberToObject(settings, "warmup_s", m->warmup_s);
		cJSON_AddNumberToObject(settings, "drain_s", m->drain_s);
		if (m->output_max > 0) {
			cJSON *o = cJSON_AddObjectToObject(settings, "output_tokens");
			if (!o)
				return -1;
			cJSON_AddNumberToObject(o, "min", (double)m->output_min);
			cJSON_AddNumberToObject(o, "max", (double)m->output_max);
			if (m->n_output_bins && bins_to_json(m, o))
				return -1;
		}
		if (m->rate_sweep)
			cJSON_AddBoolToObject(settings, "rate_sweep", 1);
		if (m->slo)
			cJSON_AddStringToObject(settings, "slo", m->slo);
	}
	a = cJSON_AddArrayToObject(root, "rate_cells");
	if (!a)
		return -1;
	for (size_t i = 0; i < m->n_cells; i++) {
		const struct tt_cell_info *c = &m->cells[i];
		cJSON *e;

		if (c->phase != TT_PHASE_RATE)
			continue;
		e = cJSON_CreateObject();
		if (!e)
			return -1;
		cJSON_AddItemToArray(a, e);
		cJSON_AddStringToObject(e, "id", c->id);
		cJSON_AddStringToObject(e, "phase", "rate");
		cJSON_AddNumberToObject(e, "context", (double)c->context);
		cJSON_AddNumberToObject(e, "rate", c->rate);
		cJSON_AddStringToObject(e, "state", tt_cell_state_name(c->state));
		if (c->reason)
			cJSON_AddStringToObject(e, "reason", c->reason);
		if (c->trace)
			cJSON_AddStringToObject(e, "trace", c->trace);
		if (c->kv_need_tokens >= 0)
			cJSON_AddNumberToObject(e, "kv_need_tokens", (double)c->kv_need_tokens);
		add_time(e, "start_ns", c->start_ns);
		add_time(e, "window_start_ns", c->window_start_ns);
		add_time(e, "window_end_ns", c->window_end_ns);
		add_time(e, "end_ns", c->end_ns);
	}
	return 0;
}

static int num(const cJSON *o, const char *k, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

static int64_t time_of(const cJSON *o, const char *k)
{
	double d;
	if (!num(o, k, &d) || d < 0 || d > 9e15)
		return -1;
	return (int64_t)d;
}

/* output_tokens.bins (1.3): each bin 1 <= min <= max <= 9999999999 and
 * weight >= 0, inside output_tokens' min..max; their weights sum to > 0. */
static enum tt_code bins_from_json(const cJSON *ot, const char *name, struct tt_manifest *m,
				   struct tt_error *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(ot, "bins"), *e;
	const cJSON *file = cJSON_GetObjectItemCaseSensitive(ot, "file");
	size_t n = 0;
	double total = 0;

	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1)
		return tt_error_set(err, TT_EFORMAT, "%s: settings: output_tokens.bins is not "
				    "a non-empty array", name);
	m->output_bins = calloc((size_t)cJSON_GetArraySize(a), sizeof *m->output_bins);
	if (!m->output_bins)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, a)
	{
		double lo, hi, w;
		if (!num(e, "min", &lo) || !num(e, "max", &hi) || !num(e, "weight", &w) ||
		    lo < (double)m->output_min || hi < lo || hi > (double)m->output_max ||
		    lo != floor(lo) || hi != floor(hi) || w < 0)
			return tt_error_set(err, TT_EFORMAT, "%s: settings: output_tokens.bins[%zu] "
					    "needs integers min <= max within output_tokens' "
					    "range and a weight >= 0", name, n);
		m->output_bins[n].min = (int64_t)lo;
		m->output_bins[n].max = (int64_t)hi;
		m->output_bins[n].weight = w;
		total += w;
		n++;
	}
	m->n_output_bins = n;
	if (!(total > 0) || !isfinite(total))
		return tt_error_set(err, TT_EFORMAT, "%s: settings: output_tokens.bins weigh "
				    "nothing in all", name);
	if (cJSON_IsString(file) &&
	    !(m->output_hist_file = tt__text_clean(file->valuestring, strlen(file->valuestring),
						   TT__MAX_SHOWN_STRING, 0)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	return TT_OK;
}

static enum tt_code settings_from_json(const cJSON *s, const char *name, struct tt_manifest *m,
				       struct tt_error *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, "rates"), *e;
	const cJSON *ar = cJSON_GetObjectItemCaseSensitive(s, "arrivals");
	const cJSON *ot = cJSON_GetObjectItemCaseSensitive(s, "output_tokens");
	double d;

	if (a) {
		size_t n = 0;
		if (!cJSON_IsArray(a))
			return tt_error_set(err, TT_EFORMAT, "%s: settings: rates is not an array", name);
		m->rates = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *m->rates);
		if (!m->rates)
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		cJSON_ArrayForEach(e, a)
		{
			if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) || !isfinite(e->valuedouble))
				return tt_error_set(err, TT_EFORMAT, "%s: settings: rates[%zu] is not a "
						    "positive number", name, n);
			m->rates[n++] = e->valuedouble;
		}
		m->n_rates = n;
	}
	if (ar) {
		if (!cJSON_IsString(ar) || (strcmp(ar->valuestring, "constant") &&
					    strcmp(ar->valuestring, "poisson") &&
					    strcmp(ar->valuestring, "gamma")))
			return tt_error_set(err, TT_EFORMAT, "%s: settings: arrivals is not constant, "
					    "poisson or gamma", name);
		if (tt_manifest_set_str(&m->arrivals, ar->valuestring))
			return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	if (num(s, "burstiness", &d)) {
		if (!(d > 0))
			return tt_error_set(err, TT_EFORMAT, "%s: settings: burstiness %g is not > 0",
					    name, d);
		m->burstiness = d;
	}
	if (num(s, "warmup_s", &d) && d >= 0)
		m->warmup_s = d;
	if (num(s, "drain_s", &d) && d >= 0)
		m->drain_s = d;
	if (ot) {
		double lo, hi;
		if (!num(ot, "min", &lo) || !num(ot, "max", &hi) || lo < 1 || hi < lo || hi > 1e10)
			return tt_error_set(err, TT_EFORMAT, "%s: settings: output_tokens needs "
					    "1 <= min <= max", name);
		m->output_min = (int64_t)lo;
		m->output_max = (int64_t)hi;
		if (cJSON_GetObjectItemCaseSensitive(ot, "bins")) {
			enum tt_code rc = bins_from_json(ot, name, m, err);
			if (rc != TT_OK)
				return rc;
		}
	}
	{
		const cJSON *sw = cJSON_GetObjectItemCaseSensitive(s, "rate_sweep");
		const cJSON *slo = cJSON_GetObjectItemCaseSensitive(s, "slo");
		if (sw && !cJSON_IsBool(sw))
			return tt_error_set(err, TT_EFORMAT, "%s: settings: rate_sweep is not a "
					    "boolean", name);
		m->rate_sweep = cJSON_IsTrue(sw);
		if (slo) {
			if (!cJSON_IsString(slo) || !*slo->valuestring)
				return tt_error_set(err, TT_EFORMAT, "%s: settings: slo is not a "
						    "non-empty string", name);
			m->slo = tt__text_clean(slo->valuestring, strlen(slo->valuestring),
						TT__MAX_SHOWN_STRING, 0);
			if (!m->slo)
				return tt_error_set(err, TT_ENOMEM, "out of memory");
		}
	}
	return TT_OK;
}

enum tt_code tt__manifest_rate_from_json(const cJSON *root, const char *name,
					 struct tt_manifest *m, struct tt_error *err)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "settings");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "rate_cells"), *e;
	size_t k = 0;
	enum tt_code rc;

	if (s && (rc = settings_from_json(s, name, m, err)) != TT_OK)
		return rc;
	if (!a)
		return TT_OK;
	if (!cJSON_IsArray(a))
		return tt_error_set(err, TT_EFORMAT, "%s: 'rate_cells' is not an array", name);
	cJSON_ArrayForEach(e, a)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "state");
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(e, "reason");
		const cJSON *trace = cJSON_GetObjectItemCaseSensitive(e, "trace");
		double ctx, rate;
		int state = -1;
		size_t idx;
		struct tt_cell_info *c;
		char want[64];

		for (int i = 0; cJSON_IsString(st) && i < 6; i++)
			if (!strcmp(st->valuestring, states[i]))
				state = i;
		if (!cJSON_IsString(id) || !tt__rate_cell_id_valid(id->valuestring) ||
		    !num(e, "context", &ctx) || ctx < 0 || ctx > 1e15 || !num(e, "rate", &rate) ||
		    !(rate > 0) || state < 0)
			return tt_error_set(err, TT_EFORMAT,
					    "%s: rate cell %zu lacks a valid id (rate-<context>r<rate>), "
					    "context, rate or state", name, k);
		tt_rate_cell_id((int64_t)ctx, rate, want, sizeof want);
		if (strcmp(want, id->valuestring) || tt_manifest_find_cell(m, want) >= 0)
			return tt_error_set(err, TT_EFORMAT, "%s: rate cell %zu: id '%s' %s", name, k,
					    id->valuestring,
					    strcmp(want, id->valuestring) ? "does not match its context "
					    "and rate" : "appears twice");
		if (cJSON_IsString(trace) &&
		    (trace->valuestring[0] == '/' || strstr(trace->valuestring, "..")))
			return tt_error_set(err, TT_EFORMAT, "%s: cell '%s': trace path '%s' leaves "
					    "the run", name, want, trace->valuestring);
		if (tt_manifest_add_rate_cell(m, (int64_t)ctx, rate, &idx))
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		c = &m->cells[idx];
		c->state = (enum tt_cell_state)state;
		/* as every manifest string (manifest.c clean_copy): valid UTF-8,
		 * no control characters, cut, before any output sees it */
		if (cJSON_IsString(reason) &&
		    !(c->reason = tt__text_clean(reason->valuestring, strlen(reason->valuestring),
						 TT__MAX_SHOWN_STRING, 0)))
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		if (cJSON_IsString(trace) &&
		    !(c->trace = tt__text_clean(trace->valuestring, strlen(trace->valuestring),
						TT__MAX_SHOWN_STRING, 0)))
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		c->kv_need_tokens = time_of(e, "kv_need_tokens");
		c->start_ns = time_of(e, "start_ns");
		c->window_start_ns = time_of(e, "window_start_ns");
		c->window_end_ns = time_of(e, "window_end_ns");
		c->end_ns = time_of(e, "end_ns");
		k++;
	}
	return TT_OK;
}

void tt__manifest_rate_release(struct tt_manifest *m)
{
	free(m->rates);
	free(m->arrivals);
	free(m->slo);
	free(m->output_bins);
	free(m->output_hist_file);
	m->rates = NULL;
	m->arrivals = NULL;
	m->n_rates = 0;
	m->slo = NULL;
	m->output_bins = NULL;
	m->n_output_bins = 0;
	m->output_hist_file = NULL;
	m->rate_sweep = 0;
}
