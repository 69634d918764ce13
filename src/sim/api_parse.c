/* Request bodies: JSON checks with errors that name the field, prompts as
 * text, token ids or chat messages (docs/sim.md, "API"). */
#include "api_parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_config.h"
#include "sim_req.h"
#include "tokenizer.h"

static int fail(struct perr *pe, int status, const char *param, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
static int fail(struct perr *pe, int status, const char *param, const char *fmt, ...)
{
	va_list ap;
	pe->status = status;
	pe->type = status == 404 ? "NotFoundError" : "BadRequestError";
	pe->param = param;
	va_start(ap, fmt);
	vsnprintf(pe->msg, sizeof pe->msg, fmt, ap);
	va_end(ap);
	return -1;
}

cJSON *api_parse_body(const char *body, size_t len, struct perr *pe)
{
	const char *end = NULL;
	cJSON *root;

	if (!len || !body) {
		fail(pe, 400, NULL, "request body is empty; expected a JSON object");
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (!root) {
		size_t at = end && end >= body ? (size_t)(end - body) : 0;
		fail(pe, 400, NULL, "request body is not valid JSON (error at byte %zu of %zu)", at,
		     len);
		return NULL;
	}
	if (!cJSON_IsObject(root)) {
		fail(pe, 400, NULL, "request body must be a JSON object");
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static const char *json_type(const cJSON *v)
{
	if (cJSON_IsString(v)) return "a string";
	if (cJSON_IsNumber(v)) return "a number";
	if (cJSON_IsBool(v)) return "a boolean";
	if (cJSON_IsNull(v)) return "null";
	if (cJSON_IsArray(v)) return "an array";
	return "an object";
}

static int get_bool(const cJSON *root, const char *name, int *out, struct perr *pe)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsBool(v))
		return fail(pe, 400, name, "'%s' must be a boolean, got %s", name, json_type(v));
	*out = cJSON_IsTrue(v);
	return 0;
}

static int get_int(const cJSON *root, const char *name, int64_t lo, int64_t *out, int *present,
		   struct perr *pe)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
	    fabs(v->valuedouble) > 9e15)
		return fail(pe, 400, name, "'%s' must be an integer, got %s", name, json_type(v));
	if (v->valuedouble < (double)lo)
		return fail(pe, 400, name, "'%s' must be at least %lld, got %.0f", name,
			    (long long)lo, v->valuedouble);
	*out = (int64_t)v->valuedouble;
	if (present)
		*present = 1;
	return 0;
}

static int append_text(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = (*cap ? *cap : 256);
		while (nc < *len + n + 1)
			nc *= 2;
		char *nb = realloc(*buf, nc);
		if (!nb)
			return -1;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static int ids_from_array(const cJSON *arr, const char *name, struct ids *out, struct perr *pe)
{
	size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
	const cJSON *it;
	out->v = malloc((n ? n : 1) * sizeof *out->v);
	if (!out->v)
		return fail(pe, 500, name, "out of memory");
	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
		    it->valuedouble < 0 || it->valuedouble > 2147483647.0)
			return fail(pe, 400, name, "'%s'[%zu] must be a token id "
				    "(an integer 0..2147483647), got %s", name, i, json_type(it));
		out->v[i++] = (int64_t)it->valuedouble;
	}
	out->n = i;
	return 0;
}

int api_text_ids(const char *s, struct ids *out, struct perr *pe, const char *name)
{
	out->v = sim_tokenize(s, strlen(s), &out->n);
	if (!out->v)
		return fail(pe, 500, name, "out of memory");
	return 0;
}

int api_prompt_ids(const cJSON *root, struct ids *out, struct perr *pe)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
	if (!p)
		return fail(pe, 400, "prompt", "'prompt' is required: a string or a list of token ids");
	if (cJSON_IsString(p))
		return api_text_ids(p->valuestring, out, pe, "prompt");
	if (cJSON_IsArray(p)) {
		const cJSON *first = cJSON_GetArrayItem(p, 0);
		if (!first || cJSON_IsNumber(first))
			return ids_from_array(p, "prompt", out, pe);
		if (cJSON_GetArraySize(p) != 1)
			return fail(pe, 400, "prompt", "'prompt' holds %d prompts; the simulator "
				    "serves one prompt per request", cJSON_GetArraySize(p));
		if (cJSON_IsString(first))
			return api_text_ids(first->valuestring, out, pe, "prompt");
		if (cJSON_IsArray(first))
			return ids_from_array(first, "prompt", out, pe);
	}
	return fail(pe, 400, "prompt", "'prompt' must be a string or a list of token ids, got %s",
		    json_type(p));
}

/* Chat messages become "<|role|>\n" + content + "\n" each, then
 * "<|assistant|>\n", tokenized with the text tokenizer. */
int api_chat_ids(const cJSON *root, struct ids *out, struct perr *pe)
{
	const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages"), *m;
	char *text = NULL;
	size_t len = 0, cap = 0, i = 0;
	int rc = 0, oom = 0;

	if (!msgs || !cJSON_IsArray(msgs) || !cJSON_GetArraySize(msgs))
		return fail(pe, 400, "messages", "'messages' is required: a non-empty list of "
			    "{\"role\",\"content\"} objects");
	cJSON_ArrayForEach(m, msgs) {
		const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsObject(m) || !cJSON_IsString(role)) {
			rc = fail(pe, 400, "messages", "'messages'[%zu] must be an object with a "
				  "string 'role'", i);
			goto cleanup;
		}
		/* append_text fails only when out of memory; checked once below */
		oom |= append_text(&text, &len, &cap, "<|", 2);
		oom |= append_text(&text, &len, &cap, role->valuestring, strlen(role->valuestring));
		oom |= append_text(&text, &len, &cap, "|>\n", 3);
		if (cJSON_IsString(content)) {
			oom |= append_text(&text, &len, &cap, content->valuestring,
					   strlen(content->valuestring));
		} else if (cJSON_IsArray(content)) {
			const cJSON *part;
			cJSON_ArrayForEach(part, content) {
				const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
				if (!cJSON_IsString(t)) {
					rc = fail(pe, 400, "messages", "'messages'[%zu].content parts "
						  "must be {\"type\":\"text\",\"text\":...}", i);
					goto cleanup;
				}
				oom |= append_text(&text, &len, &cap, t->valuestring,
						   strlen(t->valuestring));
			}
		} else if (content && !cJSON_IsNull(content)) {
			rc = fail(pe, 400, "messages", "'messages'[%zu].content must be a string or "
				  "a list of parts, got %s", i, json_type(content));
			goto cleanup;
		}
		oom |= append_text(&text, &len, &cap, "\n", 1);
		i++;
	}
	oom |= append_text(&text, &len, &cap, "<|assistant|>\n", 14);
	if (!oom)
		out->v = sim_tokenize(text, len, &out->n);
	if (oom || !out->v)
		rc = fail(pe, 500, "messages", "out of memory");
cleanup:
	free(text);
	return rc;
}

int api_parse_generation(const struct sim_config *c, const cJSON *root, struct sim_req *r,
			 struct ids *ids, struct perr *pe)
{
	const cJSON *v;
	int64_t max_tokens = -1;
	int has_max = 0, ignore_eos = 0, temp_set = 0;
	double temperature = 1.0;

	v = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsString(v))
			return fail(pe, 400, "model", "'model' must be a string, got %s", json_type(v));
		if (strcmp(v->valuestring, c->model))
			return fail(pe, 404, "model", "The model `%s` does not exist.",
				    v->valuestring);
	}
	if (c->flavor == FLAVOR_TGI && r->api == API_COMPLETIONS) {
		/* TGI's prompt is a string or a list of strings */
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "prompt");
		const cJSON *first = cJSON_IsArray(p) ? cJSON_GetArrayItem(p, 0) : NULL;
		if (cJSON_IsArray(p) && (!first || cJSON_IsNumber(first) || cJSON_IsArray(first)))
			return fail(pe, 422, "prompt", "Failed to deserialize the JSON body into the "
				    "target type: prompt: data did not match any variant of untagged "
				    "enum Prompt");
	}
	if (r->api == API_CHAT) {
		if (api_chat_ids(root, ids, pe))
			return -1;
	} else if (api_prompt_ids(root, ids, pe)) {
		return -1;
	}
	if (!ids->n)
		return fail(pe, 400, "prompt", "the prompt is empty (0 tokens)");
	if (get_int(root, "max_tokens", 1, &max_tokens, &has_max, pe))
		return -1;
	if (r->api == API_CHAT && !has_max &&
	    get_int(root, "max_completion_tokens", 1, &max_tokens, &has_max, pe))
		return -1;
	r->min_tokens = 0;
	if (get_int(root, "min_tokens", 0, &r->min_tokens, NULL, pe))
		return -1;
	if (get_bool(root, "ignore_eos", &ignore_eos, pe) || get_bool(root, "stream", &r->stream, pe) ||
	    get_bool(root, "return_token_ids", &r->return_token_ids, pe) ||
	    get_bool(root, "timings_per_token", &r->timings_per_token, pe))
		return -1;
	if (c->flavor == FLAVOR_TGI) {
		/* TGI's OpenAI routes know neither: its outputs end at the
		 * model's end of sequence */
		ignore_eos = 0;
		r->min_tokens = 0;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "temperature");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 100)
			return fail(pe, 400, "temperature", "'temperature' must be a number >= 0");
		temperature = v->valuedouble;
		temp_set = 1;
	}
	int64_t n = 1;
	if (get_int(root, "n", 1, &n, NULL, pe))
		return -1;
	if (n != 1)
		return fail(pe, 400, "n", "'n' = %lld: the simulator generates one choice per "
			    "request", (long long)n);
	v = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsObject(v))
			return fail(pe, 400, "stream_options", "'stream_options' must be an object");
		if (!r->stream)
			return fail(pe, 400, "stream_options",
				    "Stream options can only be defined when `stream=True`.");
		if (get_bool(v, "include_usage", &r->include_usage, pe) ||
		    get_bool(v, "continuous_usage_stats", &r->continuous_usage, pe))
			return -1;
	}
	r->prompt_tokens = (int64_t)ids->n;
	if (c->flavor == FLAVOR_LLAMACPP) {
		/* llama-server refuses a prompt that fills its slot, and lets
		 * an output run until the slot is full (below) */
		int64_t slot = sim_slot_context(c);
		if (r->prompt_tokens >= slot) {
			fail(pe, 400, "prompt", "request (%lld tokens) exceeds the available context "
			     "size (%lld tokens), try increasing it", (long long)r->prompt_tokens,
			     (long long)slot);
			pe->type = "exceed_context_size_error";
			return -1;
		}
		if (!has_max)
			max_tokens = slot - r->prompt_tokens;
		if (max_tokens < 1)
			return fail(pe, 400, "max_tokens", "max_tokens must be at least 1");
	} else if (!has_max) {
		max_tokens = c->max_model_len - r->prompt_tokens;
	}
	if (c->flavor == FLAVOR_TGI && r->prompt_tokens + max_tokens > c->max_model_len)
		return fail(pe, 422, "max_tokens", "`inputs` tokens + `max_new_tokens` must be <= "
			    "%lld. Given: %lld `inputs` tokens and %lld `max_new_tokens`",
			    (long long)c->max_model_len, (long long)r->prompt_tokens,
			    (long long)max_tokens);
	if (c->flavor != FLAVOR_LLAMACPP && (r->prompt_tokens + max_tokens > c->max_model_len ||
					     max_tokens < 1))
		return fail(pe, 400, has_max ? "max_tokens" : "prompt",
			    "This model's maximum context length is %lld tokens. However, you "
			    "requested %lld tokens (%lld in the messages, %lld in the completion). "
			    "Please reduce the length of the messages or completion.",
			    (long long)c->max_model_len, (long long)(r->prompt_tokens + max_tokens),
			    (long long)r->prompt_tokens, (long long)max_tokens);
	if (r->min_tokens > max_tokens)
		return fail(pe, 400, "min_tokens", "min_tokens (%lld) must be less than or equal "
			    "to max_tokens (%lld)", (long long)r->min_tokens, (long long)max_tokens);
	r->max_tokens = max_tokens;
	/* Without ignore_eos the toy model "stops" after eos_after tokens. */
	int64_t target = ignore_eos ? max_tokens : c->eos_after;
	if (target > max_tokens)
		target = max_tokens;
	if (target < r->min_tokens)
		target = r->min_tokens;
	if (target < 1)
		target = 1;
	if (c->flavor == FLAVOR_LLAMACPP && r->prompt_tokens + target > sim_slot_context(c)) {
		/* the slot fills: the output stops early, finish "length" */
		target = sim_slot_context(c) - r->prompt_tokens;
		r->slot_full = 1;
	}
	r->target_len = target;
	r->text_seed = sim_hash_tokens(ids->v, ids->n, 0);
	if (temp_set && temperature > 0)
		r->text_seed ^= r->id * 0x9E3779B97F4A7C15ULL;
	if (c->flavor == FLAVOR_LLAMACPP) {
		/* llama-server sends usage only in the final chunk */
		r->continuous_usage = 0;
		r->include_usage = r->stream;
	}
	/* block hashes for the prefix cache: a chain, so a block matches only
	 * when everything before it matches too */
	size_t bs = (size_t)c->block_size;
	r->nblocks = ids->n / bs;
	if (r->nblocks) {
		r->block_hash = malloc(r->nblocks * sizeof *r->block_hash);
		if (!r->block_hash)
			return fail(pe, 500, NULL, "out of memory");
		uint64_t h = 0;
		for (size_t b = 0; b < r->nblocks; b++) {
			h = sim_hash_tokens(ids->v + b * bs, bs, h);
			r->block_hash[b] = h;
		}
	}
	return 0;
}

