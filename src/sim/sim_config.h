/* tokentrace-sim: the configuration main.c reads from the command line and
 * every other module reads from (docs/sim.md lists the options). */
#ifndef TT_SIM_CONFIG_H
#define TT_SIM_CONFIG_H

#include <stdint.h>

#include "faults.h"

struct tt_profile;

enum sim_flavor { FLAVOR_VLLM = 0, FLAVOR_SGLANG, FLAVOR_LLAMACPP, FLAVOR_TGI };

#define SIM_MAX_FAULTS 16

struct sim_config {
	const char *host;
	int port;
	const char *model;
	const char *api_key;
	int api_key_generation_only; /* the key on generation routes only */
	const char *server_version;
	enum sim_flavor flavor;
	int64_t max_model_len;
	int64_t kv_capacity;       /* tokens */
	int block_size;
	int max_num_seqs;
	int max_batched_tokens;    /* chunked-prefill token budget per step */
	int stream_interval;
	int merge_steps;           /* output loop runs once per this many steps */
	int prefix_caching;
	int eos_after;             /* natural output length without ignore_eos */
	int reasoning;             /* chat: the first N output tokens are reasoning */
	const char *reasoning_field; /* the delta member they go in (reasoning_content) */
	int spec_draft;            /* speculative decoding: K draft tokens per step; 0 off */
	double spec_accept;        /* each draft token accepted with this probability */
	int close_every;           /* every Nth generation reply closes its
				    * connection (Connection: close); 0 never */
	int silent_close;          /* every Nth streamed reply says keep-alive,
				    * then its connection is closed (llama-server);
				    * 0 never, -1 the flavor's default */
	/* parametric speed model */
	double step_base_ms, per_seq_ms, per_ctx_token_ns, prefill_tok_s;
	const char *profile_path;
	struct tt_profile *profile;
	const char *truth_path;
	double max_runtime_s;
	uint64_t seed;
	struct fault_spec faults[SIM_MAX_FAULTS];
	int nfaults;
};

/* llama.cpp flavor: the context each slot gives one request (llama-server
 * splits its context evenly among --parallel slots; here the KV capacity
 * among --max-num-seqs slots). */
static inline int64_t sim_slot_context(const struct sim_config *c)
{
	return c->kv_capacity / c->max_num_seqs;
}

#endif
