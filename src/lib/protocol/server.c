/* Server facts: see protocol/server.h. */
#include "protocol/server.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/prom.h"

const char *tt_engine_name(enum tt_engine e)
{
	switch (e) {
	case TT_ENGINE_VLLM: return "vllm";
	case TT_ENGINE_SGLANG: return "sglang";
	case TT_ENGINE_LLAMACPP: return "llamacpp";
	case TT_ENGINE_TGI: return "tgi";
	case TT_ENGINE_UNKNOWN: break;
	}
	return "unknown";
}

static int has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Case-insensitive substring test, for headers and free-form bodies. */
static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] &&
		       (hay[i] | 0x20) == (needle[i] | 0x20))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

enum tt_engine tt_engine_detect(const struct tt_sample *samples, size_t n,
				const char *server_header, const char *version_body)
{
	for (size_t i = 0; i < n; i++) {
		const char *m = samples[i].name;
		if (has_prefix(m, "vllm:"))
			return TT_ENGINE_VLLM;
		if (has_prefix(m, "sglang:"))
			return TT_ENGINE_SGLANG;
		if (has_prefix(m, "llamacpp:"))
			return TT_ENGINE_LLAMACPP;
		if (has_prefix(m, "tgi_"))
			return TT_ENGINE_TGI;
	}
	if (server_header) {
		if (contains_ci(server_header, "llama.cpp") || contains_ci(server_header, "llama-server"))
			return TT_ENGINE_LLAMACPP;
		if (contains_ci(server_header, "text-generation-inference"))
			return TT_ENGINE_TGI;
		if (contains_ci(server_header, "sglang"))
			return TT_ENGINE_SGLANG;
		if (contains_ci(server_header, "vllm"))
			return TT_ENGINE_VLLM;
	}
	if (version_body) {
		/* vLLM answers {"version":"x"} and nothing else; TGI's /info-like
		 * bodies name themselves; SGLang's /version is {"version":"x"} as well,
		 * so a bare version means "vLLM or SGLang" and metrics decide. */
		if (contains_ci(version_body, "text-generation") || contains_ci(version_body, "tgi"))
			return TT_ENGINE_TGI;
		if (contains_ci(version_body, "sglang"))
			return TT_ENGINE_SGLANG;
		if (contains_ci(version_body, "llama"))
			return TT_ENGINE_LLAMACPP;
		if (contains_ci(version_body, "vllm"))
			return TT_ENGINE_VLLM;
	}
	return TT_ENGINE_UNKNOWN;
}

int tt_engine_version(const char *version_body, char *buf, size_t len)
{
	cJSON *root, *v;
	int found = 0;

	if (buf && len)
		buf[0] = '\0';
	if (!version_body || !buf || !len)
		return 0;
	root = cJSON_Parse(version_body);
	v = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (cJSON_IsString(v) && v->valuestring) {
		snprintf(buf, len, "%s", v->valuestring);
		found = 1;
	}
	cJSON_Delete(root);
	return found;
}

int tt_llamacpp_props(const char *json, size_t len, struct tt_llamacpp_props *out)
{
	cJSON *root, *dgs, *v;
	int found = 0;

	out->slot_context = -1;
	out->slots = -1;
	out->build[0] = '\0';
	if (!json)
		return 0;
	root = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return 0;
	}
	dgs = cJSON_GetObjectItemCaseSensitive(root, "default_generation_settings");
	v = cJSON_GetObjectItemCaseSensitive(dgs, "n_ctx");
	if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e12) {
		out->slot_context = (int64_t)v->valuedouble;
		found = 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "total_slots");
	if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e6) {
		out->slots = (int)v->valuedouble;
		found = 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "build_info");
	if (cJSON_IsString(v) && v->valuestring[0]) {
		snprintf(out->build, sizeof out->build, "%s", v->valuestring);
		found = 1;
	}
	cJSON_Delete(root);
	return found;
}

int tt_tgi_info(const char *json, size_t len, int64_t *max_total_tokens, char *version,
		size_t version_len)
{
	cJSON *root, *v;
	int found = 0;

	*max_total_tokens = -1;
	if (version && version_len)
		version[0] = '\0';
	if (!json)
		return 0;
	root = cJSON_ParseWithLength(json, len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return 0;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "max_total_tokens");
	if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e12) {
		*max_total_tokens = (int64_t)v->valuedouble;
		found = 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (cJSON_IsString(v) && v->valuestring[0] && version && version_len) {
		snprintf(version, version_len, "%s", v->valuestring);
		found = 1;
	}
	cJSON_Delete(root);
	return found;
}

const char *tt_metric_running(enum tt_engine e)
{
	switch (e) {
	case TT_ENGINE_VLLM: return "vllm:num_requests_running";
	case TT_ENGINE_SGLANG: return "sglang:num_running_reqs";
	case TT_ENGINE_LLAMACPP: return "llamacpp:requests_processing";
	case TT_ENGINE_TGI: return "tgi_batch_current_size";
	case TT_ENGINE_UNKNOWN: break;
	}
	return NULL;
}

const char *tt_metric_waiting(enum tt_engine e)
{
	switch (e) {
	case TT_ENGINE_VLLM: return "vllm:num_requests_waiting";
	case TT_ENGINE_SGLANG: return "sglang:num_queue_reqs";
	case TT_ENGINE_LLAMACPP: return "llamacpp:requests_deferred";
	case TT_ENGINE_TGI: return "tgi_queue_size";
	case TT_ENGINE_UNKNOWN: break;
	}
	return NULL;
}

static int64_t label_int(const char *labels, const char *key)
{
	char buf[64], *end = NULL;
	long long v;

	if (!tt_prom_label(labels, key, buf, sizeof buf) || !buf[0])
		return -1;
	v = strtoll(buf, &end, 10);
	return end && *end == '\0' && v >= 0 ? (int64_t)v : -1;
}

int64_t tt_kv_from_metrics(const struct tt_sample *samples, size_t n, const char **source)
{
	const struct tt_sample *s = tt_prom_find(samples, n, "vllm:cache_config_info");
	double v;

	if (s) {
		int64_t blocks = label_int(s->labels, "num_gpu_blocks");
		int64_t bs = label_int(s->labels, "block_size");
		if (blocks > 0 && bs > 0 && blocks < INT64_MAX / bs) {
			if (source)
				*source = "vllm:cache_config_info";
			return blocks * bs;
		}
	}
	v = tt_prom_sum(samples, n, "sglang:max_total_num_tokens");
	if (!isnan(v) && v > 0 && v < 9e15) {
		if (source)
			*source = "sglang:max_total_num_tokens";
		return (int64_t)v;
	}
	return -1;
}

static int64_t json_tokens(const cJSON *o)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "max_total_num_tokens");
	if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 9e15)
		return (int64_t)v->valuedouble;
	return -1;
}

int64_t tt_kv_from_sglang_info(const char *json, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *states, *it;
	int64_t v = -1;

	if (!root)
		return -1;
	v = json_tokens(root);
	states = cJSON_GetObjectItemCaseSensitive(root, "internal_states");
	if (v < 0 && cJSON_IsArray(states)) {
		cJSON_ArrayForEach(it, states) {
			v = json_tokens(it);
			if (v >= 0)
				break;
		}
	}
	cJSON_Delete(root);
	return v;
}

int64_t tt_kv_from_server_log(const char *text, size_t len)
{
	static const char key[] = "GPU KV cache size:";
	const size_t klen = sizeof key - 1;
	int64_t found = -1;

	for (size_t i = 0; i + klen <= len; i++) {
		size_t p;
		int64_t v = 0;
		int digits = 0;

		if (text[i] != 'G' || memcmp(text + i, key, klen) != 0)
			continue;
		p = i + klen;
		while (p < len && text[p] == ' ')
			p++;
		while (p < len && ((text[p] >= '0' && text[p] <= '9') || text[p] == ',')) {
			if (text[p] != ',') {
				if (v > (INT64_MAX - 9) / 10)
					break;
				v = v * 10 + (text[p] - '0');
				digits++;
			}
			p++;
		}
		while (p < len && text[p] == ' ')
			p++;
		if (digits && p + 6 <= len && memcmp(text + p, "tokens", 6) == 0)
			found = v; /* the last line wins: a log may hold several starts */
		i = p > i ? p - 1 : i;
	}
	return found;
}
