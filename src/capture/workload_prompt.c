/* A replayed request's body (docs/workloads.md "Trace replay"): its prompt
 * is token ids, built block by block so that equal block ids give equal
 * tokens and the server's prefix cache sees exactly the sharing the trace
 * describes.
 *
 * Block id h is the 512 ids ID_BASE + mix64(key(h) + t) % ID_SPAN,
 * t = 0..511, key(h) = mix64(seed ^ mix64(h ^ BLOCK_TAG)); a request's last
 * block, when its prompt ends inside it, is the leading part of it.
 * Tokens past the request's ids are its own: keyed by its line in the file
 * (UNIQUE_TAG), so no two requests share them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_prompt.h"
#include "capture_opts.h"

#define ID_BASE 1000u
#define ID_SPAN 20000u
#define BLOCK_TAG 0x626c6f636b000000ull  /* "block" */
#define UNIQUE_TAG 0x756e697175650000ull /* "unique" */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Digits of v at p, no NUL; the length. */
static size_t put_u32(char *p, uint32_t v)
{
	char tmp[12];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

uint32_t workload_token(uint64_t seed, uint32_t block, uint32_t t)
{
	uint64_t key = mix64(seed ^ mix64(block ^ BLOCK_TAG));
	return ID_BASE + (uint32_t)(mix64(key + t) % ID_SPAN);
}

/* s as a JSON string's content (quotes and backslashes escaped, control
 * bytes as \u00XX); at most 6 bytes per byte. */
static size_t put_json(char *p, const char *s)
{
	size_t o = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			p[o++] = '\\';
			p[o++] = (char)ch;
		} else if (ch < 0x20) {
			o += (size_t)sprintf(p + o, "\\u%04x", ch);
		} else {
			p[o++] = (char)ch;
		}
	}
	return o;
}

int workload_body(const struct cap *c, const struct tt_workload *w, size_t i, char **body,
		  size_t *len)
{
	const struct tt_workload_req *r = &w->reqs[i];
	size_t n_ids, o = 0;
	const uint32_t *ids = tt_workload_blocks(w, i, &n_ids);
	uint64_t seed = c->o->seed;
	uint64_t own = mix64(seed ^ mix64((uint64_t)r->line ^ UNIQUE_TAG));
	size_t cap = (size_t)r->input * 7 + strlen(c->model) * 6 + 400;
	char *p = malloc(cap);
	uint32_t t = 0;

	if (!p)
		return -1;
	o += (size_t)sprintf(p, "{\"max_tokens\":%u,\"min_tokens\":%u,\"model\":\"", r->output,
			     r->output);
	o += put_json(p + o, c->model);
	memcpy(p + o, "\",\"prompt\":[", 12);
	o += 12;
	for (size_t b = 0; b < n_ids && t < r->input; b++) {
		uint64_t key = mix64(seed ^ mix64(ids[b] ^ BLOCK_TAG));
		for (uint32_t k = 0; k < TT_WORKLOAD_BLOCK_TOKENS && t < r->input; k++, t++) {
			if (t)
				p[o++] = ',';
			o += put_u32(p + o, ID_BASE + (uint32_t)(mix64(key + k) % ID_SPAN));
		}
	}
	for (uint32_t k = 0; t < r->input; k++, t++) {
		if (t)
			p[o++] = ',';
		o += put_u32(p + o, ID_BASE + (uint32_t)(mix64(own + k) % ID_SPAN));
	}
	o += (size_t)sprintf(p + o, "],\"temperature\":0,\"ignore_eos\":true,\"stream\":true,"
				    "\"stream_options\":{\"include_usage\":true,"
				    "\"continuous_usage_stats\":true}%s}",
			     c->engine == TT_ENGINE_LLAMACPP
				     ? ",\"timings_per_token\":true,\"cache_prompt\":true"
				     : "");
	*body = p;
	*len = o;
	return 0;
}
