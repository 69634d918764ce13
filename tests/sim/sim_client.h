/* Test harness for tokentrace-sim: start the simulator on --port 0, talk to
 * it with libcurl, read its truth log.  Loopback only, every wait bounded. */
#ifndef TT_TEST_SIM_CLIENT_H
#define TT_TEST_SIM_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sim_proc {
	pid_t pid;
	int port;
	char url[64];
	char listen_line[128];
};

/* Starts TT_SIM_PATH with --port 0 --max-runtime 120 and the given NULL-
 * terminated extra arguments; waits (<= 10 s) for the listen line. */
int sim_spawn(struct sim_proc *p, const char *const *args);
/* SIGTERM, then waits <= 10 s; returns the exit status, or -1. */
int sim_terminate(struct sim_proc *p);
/* Runs the simulator with args and expects it to exit at once; returns the
 * exit status and fills err (stderr text). */
int sim_run_expect_exit(const char *const *args, char *err, size_t errlen);

/* The same, as cmocka assertions: fail the test if the simulator does not
 * start, or does not stop cleanly (exit 0). */
struct sim_proc sim_start_ok(const char *const *args);
void sim_stop_ok(struct sim_proc *p);

uint64_t now_ns(void);

struct http_reply {
	long status;
	char *body;
	size_t len;
	char *headers;
	size_t hlen;
};

/* body NULL means GET.  headers: NULL-terminated "Name: value" list or NULL. */
int http_do(const struct sim_proc *p, const char *path, const char *body,
	    const char *const *headers, struct http_reply *out);
void http_reply_free(struct http_reply *r);
/* Sum of all samples of metric `name` (exact name, any labels) in a
 * Prometheus text body; NAN when absent. */
double prom_value(const char *text, const char *name);
double metric_now(const struct sim_proc *p, const char *name);

struct sse_event {
	uint64_t t_ns;            /* arrival at the client */
	long completion_tokens;   /* usage.completion_tokens, or -1 */
	char *data;               /* payload after "data:", when kept */
};

struct stream_result {
	long status;
	int curl_code;
	uint64_t t_start, t_first_byte, t_end;
	struct sse_event *ev;
	size_t n, cap;
	char *raw;                /* every byte received, when kept */
	size_t rawlen, rawcap;
	char *pending;            /* partial event across callbacks */
	size_t plen, pcap;
	int keep;
	char *headers;
	size_t hlen;
};

/* Returns nonzero to stop all streams now. */
typedef int (*tick_fn)(void *arg, double elapsed_s);

/* Runs n POSTs to path at once (bodies[i]), until all finish or max_s pass.
 * keep: store payloads and raw bytes.  tick (may be NULL) runs about every
 * 10 ms with the seconds since start, and can end the run early. */
int stream_many(const struct sim_proc *p, const char *path, const char *const *bodies, size_t n,
		int keep, double max_s, tick_fn tick, void *arg, struct stream_result *out);
void stream_result_free(struct stream_result *r);

/* A completions body with a prompt of `context` token ids (ids depend on
 * `salt`, so equal salts give equal prompts). */
char *body_token_prompt(long context, int salt, long max_tokens, int stream, const char *extra);

struct truth_chunk {
	uint64_t id, emit_ns;
	uint32_t first, count;
	uint64_t *model_ns;
};

struct truth_req {
	uint64_t id, arrival_ns, end_ns;
	uint32_t prompt_tokens, target_len, completion, cached, preemptions;
	uint64_t admit_ns;     /* version 2 QUEUE record; 0 never admitted */
	uint32_t passed_steps; /* steps that passed it over (waited for capacity) */
	int outcome, status, ended;
	char client_id[96];
};

struct truth {
	struct truth_req *reqs;
	size_t nreqs;
	struct truth_chunk *chunks;
	size_t nchunks;
};

int truth_read(const char *path, struct truth *t);
void truth_free(struct truth *t);
const struct truth_req *truth_find(const struct truth *t, uint64_t id);
/* Sort the chunks by request id, then first token (for bsearch). */
void truth_sort_chunks(struct truth *t);
int truth_chunk_cmp(const void *a, const void *b);

#endif
