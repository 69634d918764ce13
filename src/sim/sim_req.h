/* tokentrace-sim: one generation request, as the engine schedules it and as
 * the API layer answers it.  Header only: the engine owns the "engine state"
 * fields, the API layer (api_request.c, api_stream.c) the others. */
#ifndef TT_SIM_REQ_H
#define TT_SIM_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "faults.h"

struct sim_server;
struct evhttp_request;
struct event;

enum api_kind { API_COMPLETIONS = 0, API_CHAT };
enum req_state { REQ_NEW = 0, REQ_WAITING, REQ_RUNNING, REQ_FINISHED, REQ_ABORTED };

struct sim_req {
	struct sim_server *srv;
	uint64_t id;                 /* the sim's request number, 1-based */
	char client_id[96];          /* X-Request-Id as sent, or "" */
	struct evhttp_request *http; /* NULL once the client is gone */
	enum api_kind api;
	int stream, include_usage, continuous_usage, return_token_ids, timings_per_token;
	int64_t prompt_tokens;
	uint64_t *block_hash;        /* one per full prompt block */
	size_t nblocks;
	uint64_t text_seed;          /* picks the filler words */
	int64_t max_tokens, min_tokens, target_len;
	int slot_full;               /* llama.cpp: the output stops when the slot
				      * is full, before max_tokens */
	uint64_t arrival_ns;
	uint64_t admit_ns;           /* model time it first left the queue; 0: not yet */

	/* engine state */
	enum req_state state;
	int64_t generated;           /* tokens produced by the engine */
	int64_t computed;            /* KV tokens computed */
	uint64_t hold_until;         /* profile turnover: no work before this (0: none) */
	int64_t prefill_target;      /* KV tokens to compute before the next token */
	int64_t blocks_held;
	int64_t cached_tokens;       /* prefix-cache hit at the last admission */
	int preemptions;
	uint32_t passed_steps;       /* step starts, at or after its arrival, at which it
				      * waited in the queue and was not admitted (truth log) */
	int step_chunk;              /* planned for the current step: prefill tokens */
	int step_decode;             /* planned for the current step: one decode token */
	uint64_t prompt_start_ns;    /* model time the last admission began its prefill */
	uint64_t first_token_ns;     /* model time of the first token (0: none yet) */
	uint64_t last_token_ns;      /* model time of the latest token */
	struct sim_req *wnext, *wprev;

	/* output state */
	uint64_t *pend_ns;           /* model time of each token not yet sent */
	size_t pend_head, pend_len, pend_cap;
	int64_t emitted;             /* tokens sent to the client */
	int role_sent, dirty;
	uint64_t last_model_ns;      /* model time of the last token sent */
	struct fault_spec fault;
	int fault_fired;
	uint64_t stall_until_ns;
	struct event *timer;         /* slow headers / stall wake-up */
	int64_t created;             /* unix time at arrival, for "created" */
	size_t live_idx, dirty_idx;
	int reset_pending;
	int chunked;                 /* HTTP/1.1 chunked framing is ours to write */
	int silent_close;            /* close the connection after the reply,
				      * without saying so (api_silent_close) */
};

#endif
