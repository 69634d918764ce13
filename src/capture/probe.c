/* Server facts before the run (engine, model, KV capacity), and /metrics
 * scrapes during it. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "capture.h"
#include "capture_opts.h"
#include "net_loop.h"
#include "protocol/prom.h"
#include "protocol/server.h"
#include "sink.h"
#include "xfer.h"

/* Sum of one metric's series, reading only the lines that start with its
 * name: the full parse happens on the writer thread, off the loop. */
static double gauge(const char *text, size_t len, const char *name)
{
	size_t nl = strlen(name);
	double sum = NAN;
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *next = eol ? eol + 1 : end;
		if ((size_t)(next - p) > nl && memcmp(p, name, nl) == 0 &&
		    (p[nl] == '{' || p[nl] == ' ')) {
			struct tt_prom *one = NULL;
			if (tt_prom_parse(p, (size_t)(next - p), &one, NULL) == TT_OK &&
			    one->n_samples == 1 && !isnan(one->samples[0].value))
				sum = (isnan(sum) ? 0 : sum) + one->samples[0].value;
			tt_prom_free(one);
		}
		p = next;
	}
	return sum;
}

static void scrape_done(struct net *n, struct xfer *x, CURLcode res)
{
	struct cap *c = x->user;

	(void)n;
	c->scrape = NULL;
	if (res == CURLE_OK && x->http_status == 200 && x->resp_len) {
		const char *run = tt_metric_running(c->engine);
		const char *wait = tt_metric_waiting(c->engine);
		c->last_running = run ? gauge(x->resp, x->resp_len, run) : NAN;
		c->last_waiting = wait ? gauge(x->resp, x->resp_len, wait) : NAN;
		c->last_scrape_t = x->t_end;
		/* The scrape is stamped when its response was complete; the
		 * writer thread parses it (the text changes hands, no copy). */
		sink_scrape(c->net.sink, x->t_end, x->resp, x->resp_len);
		x->resp = NULL;
		x->resp_len = x->resp_cap = 0;
		c->last_scrape_failed = 0;
	} else {
		/* The last good value is no news of a server that stopped
		 * answering: readiness must not go on it (issue 14). */
		c->last_running = c->last_waiting = NAN;
		c->last_scrape_failed = 1;
	}
	xfer_put(&c->net, x);
}

void scrape_tick(struct cap *c, int64_t now)
{
	struct xfer *x;

	if (!c->has_metrics || c->o->scrape_s <= 0 || c->scrape || now < c->next_scrape)
		return;
	/* Keep the grid: a late scrape does not shift the ones after it. */
	c->next_scrape += (int64_t)(c->o->scrape_s * 1e9);
	if (c->next_scrape < now)
		c->next_scrape = now + (int64_t)(c->o->scrape_s * 1e9);
	x = xfer_get(&c->net, XFER_GET);
	if (!x)
		return;
	x->done = scrape_done;
	x->user = c;
	if (xfer_start(&c->net, x, "/metrics", NULL, 0, NULL) != TT_OK) {
		xfer_put(&c->net, x);
		return;
	}
	c->scrape = x;
}

void scrape_stop(struct cap *c)
{
	if (c->scrape) {
		xfer_put(&c->net, c->scrape);
		c->scrape = NULL;
	}
}

static char *read_file(const char *path, size_t *len, struct tt_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;
		if (n + 65536 + 1 > cap) {
			char *nb;
			cap = cap ? cap * 2 : 131072;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, 65536, f);
		n += got;
		if (got < 65536)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		tt_error_set(err, TT_EIO, "cannot read '%s'", path);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* llama.cpp lists a model with meta.n_ctx, the context of one slot (its
 * /props says the same and is read after it); -1 elsewhere. */
static int64_t meta_n_ctx(const cJSON *model)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(model, "meta");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(meta, "n_ctx");
	return cJSON_IsNumber(n) && n->valuedouble >= 1 ? (int64_t)n->valuedouble : -1;
}

/* llama.cpp: /props gives each slot's context, the slot count and the
 * build (llama-server has no /version). */
static void probe_llamacpp_props(struct cap *c, struct tt_manifest *m)
{
	struct xfer *x = net_fetch(&c->net, "/props", NULL, 10, NULL);
	struct tt_llamacpp_props p;

	if (!x)
		return;
	if (x->http_status == 200 && x->resp_len && tt_llamacpp_props(x->resp, x->resp_len, &p)) {
		if (p.slot_context > 0)
			m->slot_context = p.slot_context;
		if (p.slots > 0)
			m->slots = p.slots;
		if (p.build[0] && !m->engine_version)
			tt_manifest_set_str(&m->engine_version, p.build);
	}
	xfer_put(&c->net, x);
}

/* TGI: /info gives the longest request (max_total_tokens, refused beyond
 * as vLLM's max_model_len is) and the version (TGI has no /version). */
static void probe_tgi_info(struct cap *c, struct tt_manifest *m)
{
	struct xfer *x = net_fetch(&c->net, "/info", NULL, 10, NULL);
	int64_t total;
	char ver[128];

	if (!x)
		return;
	if (x->http_status == 200 && x->resp_len &&
	    tt_tgi_info(x->resp, x->resp_len, &total, ver, sizeof ver)) {
		if (total > 0 && m->max_model_len < 0)
			m->max_model_len = total;
		if (ver[0] && !m->engine_version)
			tt_manifest_set_str(&m->engine_version, ver);
	}
	xfer_put(&c->net, x);
}

/* First model of /v1/models and its max_model_len. */
static enum tt_code probe_models(struct cap *c, struct tt_manifest *m, struct tt_error *err)
{
	struct xfer *x = net_fetch(&c->net, "/v1/models", NULL, 30, err);
	enum tt_code rc = TT_OK;
	cJSON *root = NULL, *data, *first, *id, *mml;

	if (!x)
		return err ? err->code : TT_FAILED;
	if (x->http_status == 401 || x->http_status == 403) {
		rc = tt_error_set(err, TT_ENET,
				  "'%s/v1/models' answered HTTP %ld: the server wants an API key "
				  "(--api-key or TOKENTRACE_API_KEY)", c->net.url, x->http_status);
		goto cleanup;
	}
	if (x->http_status != 200) {
		if (!c->o->model)
			rc = tt_error_set(err, TT_ENET,
					  "'%s/v1/models' answered HTTP %ld; give the model with --model",
					  c->net.url, x->http_status);
		goto cleanup;
	}
	root = cJSON_ParseWithLength(x->resp ? x->resp : "", x->resp_len);
	data = cJSON_GetObjectItemCaseSensitive(root, "data");
	first = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
	id = cJSON_GetObjectItemCaseSensitive(first, "id");
	mml = cJSON_GetObjectItemCaseSensitive(first, "max_model_len");
	if (cJSON_IsString(id)) {
		tt_manifest_set_str(&m->model, id->valuestring);
		if (cJSON_IsNumber(mml))
			m->max_model_len = (int64_t)mml->valuedouble;
		m->slot_context = meta_n_ctx(first);
	} else if (!c->o->model) {
		rc = tt_error_set(err, TT_EFORMAT,
				  "'%s/v1/models' lists no model; give the model with --model", c->net.url);
		goto cleanup;
	}
	if (c->o->model) {
		/* The model asked for may be another of the list: take its length. */
		cJSON *it;
		cJSON_ArrayForEach(it, data) {
			cJSON *iid = cJSON_GetObjectItemCaseSensitive(it, "id");
			cJSON *ml = cJSON_GetObjectItemCaseSensitive(it, "max_model_len");
			if (cJSON_IsString(iid) && strcmp(iid->valuestring, c->o->model) == 0) {
				tt_manifest_set_str(&m->model, iid->valuestring);
				m->max_model_len = cJSON_IsNumber(ml) ? (int64_t)ml->valuedouble : -1;
				m->slot_context = meta_n_ctx(it);
			}
		}
		tt_manifest_set_str(&m->served_model, c->o->model);
		if (!m->model)
			tt_manifest_set_str(&m->model, c->o->model);
	} else {
		tt_manifest_set_str(&m->served_model, m->model);
	}
cleanup:
	cJSON_Delete(root);
	xfer_put(&c->net, x);
	return rc;
}

/* A server may guard generation with a key and leave /v1/models open (a
 * gateway): ask the generation route with a body that is not a request
 * (an empty JSON array), which a server checks only after the key, so
 * nothing is generated and no request is counted; 401 or 403 stops the
 * capture before anything is written (issue 22.6). */
static enum tt_code probe_generation_key(struct cap *c, struct tt_error *err)
{
	const char *path = c->o->endpoint && strcmp(c->o->endpoint, "chat") == 0 ?
				   "/v1/chat/completions" : "/v1/completions";
	struct xfer *x = net_fetch(&c->net, path, "[]", 10, NULL);
	enum tt_code rc = TT_OK;

	if (!x)
		return TT_OK; /* the cells will say what is wrong */
	if (x->http_status == 401 || x->http_status == 403)
		rc = tt_error_set(err, TT_ENET,
				  "'%s%s' answered HTTP %ld: the server wants an API key for "
				  "generation%s (--api-key or TOKENTRACE_API_KEY)",
				  c->net.url, path, x->http_status,
				  c->o->api_key && *c->o->api_key ? ", and refused the one given" : "");
	xfer_put(&c->net, x);
	return rc;
}

enum tt_code probe_server(struct cap *c, struct tt_manifest *m, struct tt_error *err)
{
	struct xfer *x;
	struct tt_prom *prom = NULL;
	char *version_body = NULL;
	char server_hdr[128] = "";
	char ver[128];
	enum tt_code rc;
	const char *src = NULL;
	int64_t kv = -1;

	rc = probe_models(c, m, err);
	if (rc != TT_OK)
		return rc;
	rc = probe_generation_key(c, err);
	if (rc != TT_OK)
		return rc;

	x = net_fetch(&c->net, "/version", NULL, 10, NULL);
	if (x) {
		if (x->http_status == 200 && x->resp)
			version_body = strdup(x->resp);
		snprintf(server_hdr, sizeof server_hdr, "%s", x->server_hdr);
		xfer_put(&c->net, x);
	}
	x = net_fetch(&c->net, "/metrics", NULL, 10, NULL);
	if (x) {
		if (x->http_status == 200 && x->resp_len &&
		    tt_prom_parse(x->resp, x->resp_len, &prom, NULL) <= TT_WARN &&
		    prom->n_samples > 0)
			c->has_metrics = 1;
		if (!server_hdr[0])
			snprintf(server_hdr, sizeof server_hdr, "%s", x->server_hdr);
		xfer_put(&c->net, x);
	}
	c->engine = tt_engine_detect(prom ? prom->samples : NULL, prom ? prom->n_samples : 0,
				     server_hdr, version_body);
	tt_manifest_set_str(&m->engine, tt_engine_name(c->engine));
	if (tt_engine_version(version_body, ver, sizeof ver))
		tt_manifest_set_str(&m->engine_version, ver);
	if (c->engine == TT_ENGINE_LLAMACPP)
		probe_llamacpp_props(c, m);
	else
		m->slot_context = -1; /* meta.n_ctx means a slot on llama.cpp only */
	if (c->engine == TT_ENGINE_TGI)
		probe_tgi_info(c, m);

	/* KV capacity: the user's word first, then the log (right for hybrid
	 * models), then what the server says about itself. */
	if (c->o->kv_capacity > 0) {
		kv = c->o->kv_capacity;
		src = "user";
	}
	if (kv < 0 && c->o->server_log) {
		size_t len = 0;
		char *log = read_file(c->o->server_log, &len, err);
		if (!log) {
			rc = err ? err->code : TT_FAILED;
			goto cleanup;
		}
		kv = tt_kv_from_server_log(log, len);
		free(log);
		if (kv < 0) {
			rc = tt_error_set(err, TT_EFORMAT,
					  "'%s' has no line 'GPU KV cache size: N tokens'",
					  c->o->server_log);
			goto cleanup;
		}
		src = "server-log";
	}
	/* SGLang's own report first: its source name is the one the run
	 * format lists; the metric says the same where it exists. */
	if (kv < 0 && c->engine == TT_ENGINE_SGLANG) {
		x = net_fetch(&c->net, "/get_server_info", NULL, 10, NULL);
		if (x) {
			if (x->http_status == 200 && x->resp_len)
				kv = tt_kv_from_sglang_info(x->resp, x->resp_len);
			if (kv > 0)
				src = "sglang:get_server_info";
			xfer_put(&c->net, x);
		}
	}
	if (kv < 0 && prom)
		kv = tt_kv_from_metrics(prom->samples, prom->n_samples, &src);
	m->kv_capacity_tokens = kv > 0 ? kv : -1;
	tt_manifest_set_str(&m->kv_capacity_source, kv > 0 ? src : "unknown");
	rc = TT_OK;
cleanup:
	tt_prom_free(prom);
	free(version_body);
	return rc;
}
