/* tokentrace: facts about an inference server, read from what it serves.
 *
 * Engine detection and KV-cache capacity from /version, /metrics,
 * SGLang's /get_server_info and a vLLM startup log (docs/engines.md).
 * Pure parsing: the capture program fetches, these functions read. */
#ifndef TOKENTRACE_SERVER_H
#define TOKENTRACE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Not part of the shared library's API: the programs link the static
 * library, and libtokentrace.so keeps these local (issue 21.5). */
#pragma GCC visibility push(hidden)

enum tt_engine {
	TT_ENGINE_UNKNOWN = 0,
	TT_ENGINE_VLLM = 1,
	TT_ENGINE_SGLANG = 2,
	TT_ENGINE_LLAMACPP = 3,
	TT_ENGINE_TGI = 4
};

/* "vllm", "sglang", "llamacpp", "tgi", "unknown" (the manifest's names). */
const char *tt_engine_name(enum tt_engine e);

/* Guess the engine from whatever is known (each may be NULL / 0):
 * the /metrics samples (metric name prefixes: vllm:, sglang:, llamacpp:,
 * tgi_), the HTTP Server header, and the /version body.  Metric names
 * decide first, being the most specific. */
enum tt_engine tt_engine_detect(const struct tt_sample *samples, size_t n,
				const char *server_header, const char *version_body);

/* Engine version from a /version body such as {"version":"0.8.1"} into buf;
 * returns 1 if found. */
int tt_engine_version(const char *version_body, char *buf, size_t len);

/* What llama.cpp's GET /props says of its slots (docs/engines.md). */
struct tt_llamacpp_props {
	int64_t slot_context; /* default_generation_settings.n_ctx: the context
			       * each slot gives one request; -1 absent */
	int slots;            /* total_slots; -1 absent */
	char build[128];      /* build_info (the engine version); "" absent */
};

/* Reads a /props body into *out (fields absent: -1, "").  Returns 1 when
 * the body is a JSON object with at least one of them, else 0. */
int tt_llamacpp_props(const char *json, size_t len, struct tt_llamacpp_props *out);

/* TGI's GET /info: max_total_tokens (prompt + output a request may hold;
 * longer is refused with HTTP 422) and version.  Fields absent: -1, "".
 * Returns 1 when the body is a JSON object with at least one of them. */
int tt_tgi_info(const char *json, size_t len, int64_t *max_total_tokens, char *version,
		size_t version_len);

/* Gauges the capture watches, by engine (NULL when the engine has none). */
const char *tt_metric_running(enum tt_engine e); /* requests decoding now */
const char *tt_metric_waiting(enum tt_engine e); /* requests queued */

/* KV capacity in tokens from a scrape: vllm:cache_config_info labels
 * num_gpu_blocks x block_size, or sglang:max_total_num_tokens.  -1 when the
 * scrape does not say.  *source (may be NULL) gets the manifest's source
 * name ("vllm:cache_config_info", "sglang:max_total_num_tokens"). */
int64_t tt_kv_from_metrics(const struct tt_sample *samples, size_t n, const char **source);

/* KV capacity from SGLang's /get_server_info JSON (max_total_num_tokens at
 * the top level or in internal_states[]).  -1 when absent. */
int64_t tt_kv_from_sglang_info(const char *json, size_t len);

/* KV capacity from a vLLM server log: the last line holding
 * "GPU KV cache size: 123,456 tokens" (thousands separators allowed).
 * -1 when no such line. */
int64_t tt_kv_from_server_log(const char *text, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
