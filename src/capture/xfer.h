/* Transfers: one libcurl easy handle per HTTP request, its callbacks, the
 * SSE stream it feeds, and the record a generation request becomes.  Also
 * struct net, the network state one capture shares between the transfers
 * and the event loop (net_loop.c) that drives them. */
#ifndef TT_CAPTURE_XFER_H
#define TT_CAPTURE_XFER_H

#include <curl/curl.h>
#include <signal.h>
#include <stdint.h>

#include "arrival.h"
#include "protocol/sse.h"
#include "tokentrace/error.h"
#include "tokentrace/trace.h"

struct cap_opts;
struct sink;
struct xfer;

/* One capture's network state. */
struct net {
	const struct cap_opts *o;   /* --cacert, --insecure, --request-timeout */
	CURLM *multi;
	int epfd;                   /* epoll set of libcurl's sockets (net_loop.c) */
	int64_t curl_timer;         /* when libcurl wants a timeout call; -1 none */
	struct timing tm;           /* arrival timing of every socket */
	int tls;                    /* https: socket bytes are not body bytes */
	int raw_ok;                 /* socket bytes are body bytes: plain http,
				     * no proxy */
	int no_proxy_env;           /* no proxy variable is set: libcurl need
				     * not read the environment per transfer */
	struct xfer *free_list;
	int n_active;
	long n_conns;               /* connections open (sockets libcurl made) */
	int64_t origin;             /* CLOCK_MONOTONIC ns of trace time 0 */
	char url[1024];             /* base URL */
	char auth[600];             /* "Authorization: Bearer ..." or "" */
	struct sink *sink;          /* where finished requests are queued */
	size_t cur_cell;            /* manifest index of the cell running
				     * (in X-Request-Id) */
	volatile sig_atomic_t *stop; /* the user asked to stop */
	/* counters for progress */
	int64_t tokens_total;
	int64_t errors_total;
	int gen_active;
	/* transfers waiting for the next wake's CPU-wait sample (xfer.c) */
	struct wait_pend *pend;
	size_t n_pend, cap_pend;
};

static inline int64_t rel_ns(const struct net *c, int64_t t) { return t - c->origin; }

enum xfer_kind { XFER_GEN, XFER_GET };

typedef void (*xfer_done_fn)(struct net *c, struct xfer *x, CURLcode res);

struct xfer {
	CURL *easy;
	enum xfer_kind kind;
	struct net *net;
	struct curl_slist *headers;
	xfer_done_fn done;
	void *user;
	int active;
	struct xfer *next_free;
	char errbuf[CURL_ERROR_SIZE];
	long http_status;
	struct req_timing tm;   /* arrival timing (arrival.h) */
	/* generation requests */
	int slot;
	uint32_t seq;
	enum tt_role role;
	int64_t t_sched, t_send, t_end;
	int64_t prompt_asked;   /* prompt tokens the request asked for; -1 */
	struct {                /* a replayed workload's request (run-v1 3.5,
				 * "Workload"); on 0: none */
		int on;
		uint32_t line, session, turn;
		int64_t output_asked;
		size_t n_blocks;
		const uint32_t *blocks; /* the workload's, alive until the run's end */
	} wl;
	struct tt_sse sse;
	struct tt_oai_stream st;
	struct tt_chunk *chunks;
	size_t n_chunks, cap_chunks;
	struct arrival now;     /* of the piece being parsed (trace time) */
	struct chunk_fallback *fallback; /* per chunk, beside chunks[] (see
					  * struct req_timing) */
	uint8_t *chunk_text;    /* per chunk, beside chunks[]: TT_TEXT_* (run-v1 3.5),
				 * then from chunk_text + cap_chunks the
				 * TT_TIMING_* bytes (one allocation: the sink
				 * frees chunk_text) */
	uint64_t last_id;       /* arrival.id of the last chunk recorded */
	/* M-timing (docs/capture.md "When a stamp is late"): the loop's run
	 * delay (arrival_cpu_wait) at the send, at the first wake after the
	 * pass that sent it, and around the reads of the first and of the
	 * latest token-bearing chunk: a base before the chunk can have
	 * arrived, and a sample after the read; -1 not (yet) known */
	int64_t wait_send, wait_sent;
	int64_t first_base, first_after, look_base, look_after;
	uint64_t gen;           /* counts the uses of this xfer (wait_later) */
	/* raw body (tm.raw): we undo the chunked framing, so byte counts
	 * match the socket's (see struct fd_stamp) */
	int chunked;
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

struct xfer *xfer_get(struct net *c, enum xfer_kind kind);
/* Start: path is appended to the base URL; body NULL for GET.  The body
 * must stay valid until the transfer ends. */
enum tt_code xfer_start(struct net *c, struct xfer *x, const char *path, const char *body,
			size_t body_len, struct tt_error *err);
/* A transfer leaves the multi handle (ended or cancelled): its times are
 * settled first, while its connection is still open. */
void xfer_detach(struct net *c, struct xfer *x);
/* Remove a running transfer (cut or abort) without calling done. */
void xfer_cancel(struct net *c, struct xfer *x);
/* End a transfer that has been silent past --request-timeout: removed and
 * handed to its done callback as a timeout. */
void xfer_timeout(struct net *c, struct xfer *x, int64_t now);
/* The loop's CPU wait so far, sampled at a wake: fill in the transfers
 * that waited for a sample after their send or read (M-timing). */
void xfer_fill_waits(struct net *c, int64_t sample);
void xfer_put(struct net *c, struct xfer *x);
/* Free every transfer put back (at the end). */
void xfer_free_all(struct net *c);

/* Turn a finished generation transfer into a record (finish/fail decided
 * here) and queue it; frees nothing but x's chunk ownership. */
void gen_record(struct net *c, struct xfer *x, CURLcode res, enum tt_finish forced,
		int64_t t_end);

#endif
