/* tokentrace-capture: shared state of the program (docs/capture.md).
 *
 * One thread runs libcurl's multi loop and every cell's procedure; a second
 * thread (sink.c) compresses and writes trace records, so neither zstd nor
 * fsync ever delays a timestamp. */
#ifndef TT_CAPTURE_H
#define TT_CAPTURE_H

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "tokentrace/error.h"
#include "tokentrace/run.h"
#include "protocol/server.h"
#include "protocol/sse.h"
#include "tokentrace/trace.h"

/* ---- options ----------------------------------------------------------- */

struct cap_opts {
	const char *url;          /* base URL, no trailing slash */
	const char *out;          /* run directory */
	const char *resume;       /* run directory to continue */
	const char *model;        /* NULL: first of /v1/models */
	const char *api_key;      /* never written anywhere */
	const char *cacert;       /* CA bundle for https, or NULL: the system's */
	int insecure;             /* https without certificate checks */
	const char *endpoint;     /* "completions" or "chat" */
	const char *prompt_kind;  /* "token_ids", "text" or NULL (auto) */
	const char *cells;        /* subset, comma-separated ids; NULL all */
	const char *order;        /* "context" or "concurrency" */
	const char *server_log;
	int64_t *contexts; size_t n_contexts;
	int *concurrency; size_t n_concurrency;
	int64_t *prefill; size_t n_prefill;
	double duration_s;
	int64_t max_tokens;
	uint64_t seed;
	int seed_given;
	double scrape_s;
	double readiness_s;
	double readiness_timeout_s;
	double request_timeout_s;
	double pause_s;
	int64_t kv_capacity;      /* -1: detect */
	int quiet;
	char **notes; size_t n_notes; /* "key=value" as given */
};

/* ---- the trace sink (sink.c) ------------------------------------------- */

struct sink;
enum tt_code sink_start(struct sink **out, struct tt_error *err);
/* Direct subsequent records to tw (NULL: drop them).  Waits until records
 * queued for the previous writer are written. */
enum tt_code sink_set_writer(struct sink *s, struct tt_trace_writer *tw, struct tt_error *err);
/* Queue a finished request; takes ownership of chunks (malloc'd) and error. */
void sink_request(struct sink *s, const struct tt_request *r, struct tt_chunk *chunks,
		  char *error);
/* Queue a scrape's /metrics text (malloc'd; the sink takes it and parses
 * it on its own thread). */
void sink_scrape(struct sink *s, int64_t t_ns, char *text, size_t len);
void sink_stop(struct sink *s);

/* ---- transfers (net.c) ------------------------------------------------- */

enum xfer_kind { XFER_GEN, XFER_GET };

/* What a socket held when we looked, before libcurl read it: the kernel's
 * receive stamp of the newest of those bytes (SO_TIMESTAMPNS, read with a
 * non-consuming MSG_PEEK|MSG_TRUNC), else the moment we looked.  Either way
 * every one of those bytes had arrived by then.  `covered` counts down as
 * libcurl hands the socket's bytes over (raw: headers + undecoded body), so
 * bytes that arrived after the look never get the earlier time. */
struct fd_stamp {
	uint64_t wake;
	int64_t t;
	int64_t looked; /* when we looked (t's fallback, see struct xfer) */
	size_t covered;
	int kernel;     /* t is the kernel's receive stamp */
	struct xfer *user; /* the request on this socket (prereq to detach) */
};

/* How chunk arrival times were taken (docs/capture.md, "Timestamps"). */
enum stamp_src { STAMP_KERNEL, STAMP_WAKE, STAMP_CALLBACK, STAMP_N };

/* A chunk's other upper bounds of arrival: when we looked (valid while
 * the byte count holds) and when libcurl's callback ran (always valid). */
struct chunk_fallback {
	int64_t looked, callback;
};

/* The arrival of a piece of bytes: its time t, taken as src says, and its
 * fallbacks (equal to t for a piece timed by the callback). */
struct arrival {
	int64_t t;
	enum stamp_src src;
	struct chunk_fallback fb;
};
enum { FALLBACK_NONE, FALLBACK_LOOKED, FALLBACK_CALLBACK };

struct cap;
struct xfer;
typedef void (*xfer_done_fn)(struct cap *c, struct xfer *x, CURLcode res);

struct xfer {
	CURL *easy;
	enum xfer_kind kind;
	struct cap *cap;
	struct curl_slist *headers;
	xfer_done_fn done;
	void *user;
	int active;
	struct xfer *next_free;
	char errbuf[CURL_ERROR_SIZE];
	long http_status;
	int fd;                 /* the connection's socket (from its local port,
				 * in prereq_cb); -1 not known */
	/* generation requests */
	int slot;
	uint32_t seq;
	enum tt_role role;
	int64_t t_sched, t_send, t_end;
	struct tt_sse sse;
	struct tt_oai_stream st;
	struct tt_chunk *chunks;
	size_t n_chunks, cap_chunks;
	struct arrival now;     /* of the piece being parsed (trace time) */
	/* A kernel stamp is the receive time of the newest packet among the
	 * bytes; after a lost packet the kernel queues later packets until the
	 * retransmission arrives, and their stamps are older than the moment
	 * the bytes could be read.  So each chunk also keeps its fallbacks, and
	 * a request that fails the checks at its end is recorded with those
	 * (xfer_settle_times). */
	struct chunk_fallback *fallback; /* per chunk, beside chunks[] */
	int64_t by_src[STAMP_N]; /* this request's chunks by how timed; added
				  * to the capture's when recorded */
	/* The byte counting is checked too: libcurl must have handed over, raw,
	 * exactly the bytes the kernel says the connection read meanwhile. */
	uint32_t ooo0;          /* connection's out-of-order packets at the send */
	uint64_t read0;         /* connection's bytes read by then */
	uint64_t fed;           /* raw bytes libcurl handed over since */
	int counts_known;       /* ooo0 and read0 were read (local_key's socket) */
	int local_key;          /* local end of its connection (net.c) */
	uint64_t steps0;        /* wall-clock steps seen by the send */
	int settled;            /* xfer_settle_times ran */
	int use_fallback;       /* settled: FALLBACK_LOOKED (out of order) or
				 * FALLBACK_CALLBACK (miscounted, unknown) */
	/* raw body (plain http, generation): libcurl hands over the bytes as
	 * they came off the socket and we undo the chunked framing, so byte
	 * counts match the socket's (see struct fd_stamp) */
	int raw, chunked;
	struct tt_unchunk unchunk;
	int64_t last_rx;        /* monotonic ns of the last bytes (or the start) */
	int got_done, error_event, malformed;
	enum tt_oai_finish finish;
	char err[256];
	/* plain GETs/POSTs and error bodies: the response, capped */
	char *resp;
	size_t resp_len, resp_cap, resp_max;
	char server_hdr[128];
};

struct cap {
	struct cap_opts *o;
	CURLM *multi;
	int epfd;                   /* epoll set of libcurl's sockets */
	struct fd_stamp *stamps;    /* by socket: bytes waiting at the last wake */
	size_t n_stamps;
	uint64_t wake;              /* counts epoll wakes */
	int tls;                    /* https: socket bytes are not body bytes */
	int cur_fd;                 /* socket libcurl is acting on; -1 none */
	uint64_t void_wake;         /* no byte count holds in this wake */
	int raw_ok;                 /* socket bytes are body bytes: plain http,
				     * no proxy */
	int clock_fd;               /* wall-clock step detector (timerfd) */
	uint64_t clock_steps;       /* steps seen (clock_stepped) */
	int64_t real_off;           /* CLOCK_REALTIME - MONOTONIC (real_offset) */
	int real_off_known;         /* real_off holds (until a wall-clock step) */
	uint64_t real_off_tried;    /* wake of the last try */
	int *port_fd;               /* local end (net.c, local_key) -> socket; -1 none */
	int64_t stamps_by_src[STAMP_N]; /* chunks recorded, by how timed */
	int64_t settled_ooo, settled_miscount, settled_unknown, settled_clock; /* requests */
	int64_t curl_timer;         /* when libcurl wants a timeout call; -1 none */
	struct xfer *free_list;
	int n_active;
	int64_t origin;             /* CLOCK_MONOTONIC ns of trace time 0 */
	char url[1024];             /* base URL */
	char auth[600];             /* "Authorization: Bearer ..." or "" */
	struct tt_run_writer *run;
	struct sink *sink;
	enum tt_engine engine;
	const char *model;          /* served name */
	int prompt_text;            /* 1: text prompts (chat) */
	int has_metrics;
	/* scraping */
	int64_t next_scrape;
	struct xfer *scrape;
	double last_running, last_waiting; /* NaN unknown */
	int64_t last_scrape_t;
	/* counters for progress */
	int64_t tokens_total;
	int64_t errors_total;
	int gen_active;
	volatile sig_atomic_t *stop;
	/* progress */
	int tty;
	size_t cell_i, n_cells_run;
	size_t cur_cell;            /* manifest index of the cell running */
	int64_t run_start;
	int64_t progress_next;
	int64_t progress_tokens_prev, progress_t_prev;
	double live_tok_s;
	char cell_label[64];
	double cell_est_s;
	double remaining_est_s;
};

int64_t now_ns(void);           /* CLOCK_MONOTONIC */
static inline int64_t rel_ns(const struct cap *c, int64_t t) { return t - c->origin; }

enum tt_code net_init(struct cap *c, struct tt_error *err);
void net_cleanup(struct cap *c);
struct xfer *xfer_get(struct cap *c, enum xfer_kind kind);
/* Start: path is appended to the base URL; body NULL for GET.  The body
 * must stay valid until the transfer ends. */
enum tt_code xfer_start(struct cap *c, struct xfer *x, const char *path, const char *body,
			size_t body_len, struct tt_error *err);
/* Remove a running transfer (cut or abort) without calling done. */
void xfer_cancel(struct cap *c, struct xfer *x);
/* End a transfer that has been silent past --request-timeout: removed and
 * handed to its done callback as a timeout. */
void xfer_timeout(struct cap *c, struct xfer *x, int64_t now);
void xfer_put(struct cap *c, struct xfer *x);
/* One turn of the loop: wait up to timeout_ms for activity, then run
 * libcurl and the done callbacks. */
void net_step(struct cap *c, int timeout_ms);
/* Blocking helper for probes: GET or POST path, response into x->resp.
 * Returns the transfer (caller puts it back) or NULL with err set when no
 * response came. */
struct xfer *net_fetch(struct cap *c, const char *path, const char *body, double timeout_s,
		       struct tt_error *err);

/* Turn a finished generation transfer into a record (finish/fail decided
 * here) and queue it; frees nothing but x's chunk ownership. */
void gen_record(struct cap *c, struct xfer *x, CURLcode res, enum tt_finish forced,
		int64_t t_end);

/* ---- scrapes (probe.c) ------------------------------------------------- */

/* Called from every loop turn: start a scrape when one is due. */
void scrape_tick(struct cap *c, int64_t now);
/* Detect engine, model, KV capacity; fill the manifest. */
enum tt_code probe_server(struct cap *c, struct tt_manifest *m, struct tt_error *err);

/* ---- prompts (prompt.c) ------------------------------------------------ */

/* A request body whose max_tokens can be changed in place. */
struct body {
	char *data;
	size_t len;
};
/* Build the body for (context, slot); slot -1 is the cold scout, which
 * gets a prompt no other request shares. */
enum tt_code body_build(struct cap *c, int64_t context, int slot, int64_t max_tokens,
			int cold, struct body *b, struct tt_error *err);
void body_set_max_tokens(struct body *b, int64_t n);
void body_free(struct body *b);
/* For text prompts: measure the words needed for `context` tokens. */
enum tt_code prompt_calibrate(struct cap *c, int64_t context, struct tt_error *err);

/* ---- cells (cell.c) ---------------------------------------------------- */

/* Run cell i of the manifest.  Returns TT_OK when the cell ended (done,
 * over capacity, failed) and TT_EOF when the user stopped the run. */
enum tt_code cell_run(struct cap *c, size_t i, struct tt_error *err);

/* ---- progress (main.c) ------------------------------------------------- */
void progress_tick(struct cap *c, int64_t now, double cell_elapsed_s);
void progress_clear(struct cap *c);

#endif
