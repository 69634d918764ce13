/* tokentrace-sim: shared declarations of the simulated inference engine.
 *
 * One thread, one libevent loop.  The engine (engine.c) advances in steps on
 * an absolute CLOCK_MONOTONIC timeline; the API layer (api_*.c) turns the
 * tokens each request has produced into SSE chunks when the loop gets to it,
 * so a late loop yields merged chunks but never a drifting schedule. */
#ifndef TT_SIM_H
#define TT_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tokentrace/profile.h"

struct event_base;
struct event;
struct evhttp;
struct evhttp_request;
struct evbuffer;

enum sim_flavor { FLAVOR_VLLM = 0, FLAVOR_SGLANG, FLAVOR_LLAMACPP };

enum fault_kind {
	FAULT_NONE = 0,
	FAULT_HTTP500,
	FAULT_HTTP429,
	FAULT_HTTP503,
	FAULT_RESET,       /* TCP reset mid-stream */
	FAULT_STALL,       /* no bytes for `seconds` mid-stream */
	FAULT_MALFORMED,   /* one broken SSE event mid-stream */
	FAULT_ERROR_EVENT, /* data: {"error":...} then [DONE] */
	FAULT_SLOW_HEADERS,/* response headers `seconds` late */
	FAULT_NO_DONE      /* stream ends without usage chunk and [DONE] */
};

struct fault_spec {
	enum fault_kind kind;
	double seconds;   /* stall and slowheaders */
	double rate;      /* probability per request, or 0 */
	uint64_t req;     /* request number (1-based), or 0 */
	uint64_t every;   /* every Nth request, or 0 */
	int64_t after;    /* tokens sent before a mid-stream fault */
};

#define SIM_MAX_FAULTS 16

struct sim_config {
	const char *host;
	int port;
	const char *model;
	const char *api_key;
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
	int close_every;           /* every Nth generation reply closes its
				    * connection (Connection: close); 0 never */
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

enum api_kind { API_COMPLETIONS = 0, API_CHAT };
enum req_state { REQ_NEW = 0, REQ_WAITING, REQ_RUNNING, REQ_FINISHED, REQ_ABORTED };

/* END record outcomes in the truth log (formats/sim-truth-log.md). */
enum sim_outcome {
	OUT_FINISHED = 0, OUT_CLIENT_GONE = 1, OUT_FAULT_ERROR = 2, OUT_FAULT_RESET = 3,
	OUT_REJECTED = 4, OUT_FAULT_NO_DONE = 5, OUT_SHUTDOWN = 6
};

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
	uint64_t arrival_ns;

	/* engine state */
	enum req_state state;
	int64_t generated;           /* tokens produced by the engine */
	int64_t computed;            /* KV tokens computed */
	uint64_t hold_until;         /* profile turnover: no work before this (0: none) */
	int64_t prefill_target;      /* KV tokens to compute before the next token */
	int64_t blocks_held;
	int64_t cached_tokens;       /* prefix-cache hit at the last admission */
	int preemptions;
	int step_chunk;              /* planned for the current step: prefill tokens */
	int step_decode;             /* planned for the current step: one decode token */
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
};

/* Prefix cache: a bounded set of block hashes. */
struct prefix_cache {
	uint64_t *slots;
	size_t cap, used;
};

struct lateness_hist {
	uint64_t count, max_ns, sum_ns;
	uint64_t us[10001]; /* 1 us bins up to 10 ms, the last one is overflow */
};

struct histogram {
	const double *bounds;
	size_t nb;
	uint64_t *counts; /* nb + 1 (the last one is +Inf) */
	double sum;
	uint64_t count;
};

struct sim_metrics {
	uint64_t prompt_tokens, generation_tokens, prefix_queries, prefix_hits;
	uint64_t preemptions, requests_ok, requests_err, steps, chunks, emitted_tokens;
	uint64_t prompt_ns; /* model time spent in prefill, for llama.cpp */
	struct histogram ttft, itl, e2e;
	/* recent generation throughput for sglang:gen_throughput */
	uint64_t gen_window_start_ns, gen_window_tokens;
	double gen_throughput;
	double busy_slot_sum; /* sum over steps of running count */
};

struct engine {
	struct sim_server *srv;
	struct sim_req **running;
	size_t nrunning, running_cap;
	struct sim_req *whead, *wtail;
	size_t nwaiting;
	int64_t kv_blocks_total, kv_blocks_used;
	struct prefix_cache pc;
	int busy;
	uint64_t step_start_ns, step_end_ns;
	uint64_t steps_since_flush;
	struct event *step_ev;
	struct lateness_hist late;
};

struct truth_log {
	FILE *f;
	char *buf;
};

struct sim_server {
	struct sim_config cfg;
	struct event_base *base;
	struct evhttp *http;
	struct event *flush_ev, *flush_pause_ev, *sigterm_ev, *sigint_ev, *runtime_ev;
	int port;
	struct engine eng;
	struct sim_metrics m;
	struct truth_log truth;
	uint64_t next_req_id;
	uint64_t rng;
	uint64_t start_ns;
	double start_unix;         /* for the _created samples */
	/* requests with tokens to send */
	struct sim_req **dirty;
	size_t dirty_head, ndirty, dirty_cap;
	struct sim_req **live;  /* every request not yet freed, for shutdown */
	size_t nlive, live_cap;
	int exit_code;
	int shutting_down;
	uint64_t cur_arrival_ns;   /* first byte of the request being handled */
	struct evbuffer *scratch;  /* reused to build rare bodies */
	char *ob;                  /* reused to build each chunk */
	size_t oblen, obcap;
};

/* clock.c */
uint64_t sim_now_ns(void);

/* tokenizer.c: the documented toy tokenizer and filler text */
int64_t *sim_tokenize(const char *text, size_t len, size_t *n);
const char *sim_word(uint64_t seed, int64_t index, int64_t *token_id);
uint64_t sim_hash_tokens(const int64_t *ids, size_t n, uint64_t seed);

/* engine.c */
int engine_init(struct engine *e, struct sim_server *srv, char *err, size_t errlen);
void engine_release(struct engine *e);
void engine_submit(struct engine *e, struct sim_req *r);
void engine_abort(struct engine *e, struct sim_req *r);
double engine_kv_usage(const struct engine *e);
void prefix_cache_release(struct prefix_cache *pc);

/* api_http.c: routes, parsing, replies */
int api_start(struct sim_server *srv, char *err, size_t errlen);
void api_mark_dirty(struct sim_server *srv, struct sim_req *r);
void api_flush(struct sim_server *srv);
void req_free(struct sim_req *r);
void req_pend_push(struct sim_req *r, uint64_t model_ns);
void api_finish_http(struct sim_req *r);
void api_reset_connection(struct sim_req *r);

/* api_stream.c: SSE and JSON bodies */
void stream_emit(struct sim_server *srv, struct sim_req *r);
void stream_reject(struct sim_server *srv, struct evhttp_request *http, int status,
		   const char *type, const char *param, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 6, 7)))
#endif
	;

/* metrics.c */
void metrics_init(struct sim_metrics *m);
void metrics_release(struct sim_metrics *m);
void metrics_observe(struct histogram *h, double v);
void metrics_note_tokens(struct sim_metrics *m, uint64_t now_ns, uint64_t n);
void metrics_render(struct sim_server *srv, struct evbuffer *out);
void lateness_note(struct lateness_hist *h, uint64_t late_ns);
uint64_t lateness_quantile_ns(const struct lateness_hist *h, double q);

/* faults.c */
int fault_parse(const char *spec, struct fault_spec *out, char *err, size_t errlen);
struct fault_spec fault_pick(struct sim_server *srv, uint64_t req_no);
const char *fault_name(enum fault_kind k);
uint64_t sim_rand(uint64_t *state);

/* truth.c */
int truth_open(struct truth_log *t, const char *path, char *err, size_t errlen);
void truth_request(struct truth_log *t, const struct sim_req *r);
void truth_chunk(struct truth_log *t, uint64_t id, uint64_t emit_ns, int64_t first,
		 const uint64_t *model_ns, size_t n);
void truth_end(struct truth_log *t, const struct sim_req *r, uint64_t ns,
	       enum sim_outcome outcome, int status);
void truth_close(struct truth_log *t);

#endif
