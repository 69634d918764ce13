/* Transfers: libcurl easy handles, one per request, and their callbacks.
 *
 * curl's multi-loop shape (net_loop.c waits and acts; per-transfer state
 * through CURLINFO_PRIVATE).  A generation request's bytes are timed as
 * they come (arrival.c), unchunked here, fed to the SSE parser, and each
 * event with tokens becomes a chunk; at its end the request becomes a
 * record for the trace sink. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>

#include "xfer.h"
#include "arrival.h"
#include "capture_opts.h"
#include "monotonic.h"
#include "sink.h"

static void resp_append(struct xfer *x, const char *p, size_t n)
{
	if (x->resp_len + n > x->resp_max)
		n = x->resp_max > x->resp_len ? x->resp_max - x->resp_len : 0;
	if (!n)
		return;
	if (x->resp_len + n + 1 > x->resp_cap) {
		size_t ncap = x->resp_cap ? x->resp_cap : 4096;
		char *nd;
		while (ncap < x->resp_len + n + 1)
			ncap *= 2;
		nd = realloc(x->resp, ncap);
		if (!nd)
			return;
		x->resp = nd;
		x->resp_cap = ncap;
	}
	memcpy(x->resp + x->resp_len, p, n);
	x->resp_len += n;
	x->resp[x->resp_len] = '\0';
}

/* M-timing: a sample of the loop's CPU wait taken at the next wake is an
 * upper end for everything this pass did for x (its send, its read). */
enum { WAIT_SENT, WAIT_FIRST, WAIT_LOOK };
struct wait_pend {
	struct xfer *x;
	uint64_t gen;
	int what;
};

static void wait_later(struct net *c, struct xfer *x, int what)
{
	if (c->tm.sched_fd < 0)
		return;
	if (c->n_pend == c->cap_pend) {
		size_t nc = c->cap_pend ? c->cap_pend * 2 : 64;
		struct wait_pend *np = realloc(c->pend, nc * sizeof *np);
		if (!np)
			return; /* unknown then: filled at the record */
		c->pend = np;
		c->cap_pend = nc;
	}
	c->pend[c->n_pend++] = (struct wait_pend){x, x->gen, what};
}

void xfer_fill_waits(struct net *c, int64_t sample)
{
	for (size_t i = 0; i < c->n_pend; i++) {
		struct xfer *x = c->pend[i].x;
		if (x->gen != c->pend[i].gen)
			continue; /* recorded and reused since */
		if (c->pend[i].what == WAIT_SENT && x->wait_sent < 0)
			x->wait_sent = sample;
		else if (c->pend[i].what == WAIT_FIRST && x->first_after < 0)
			x->first_after = sample;
		else if (c->pend[i].what == WAIT_LOOK && x->look_after < 0)
			x->look_after = sample;
	}
	c->n_pend = 0;
}

static int on_event(void *ctx, const char *data, size_t len)
{
	struct xfer *x = ctx;
	struct tt_oai_chunk ch;
	int64_t n;

	if (tt_oai_parse_chunk(data, len, &ch) != TT_OK) {
		/* One bad chunk fails the request: counts after it cannot be trusted. */
		if (!x->malformed)
			snprintf(x->err, sizeof x->err, "%s", ch.error);
		x->malformed = 1;
		return 1;
	}
	if (ch.done) {
		x->got_done = 1;
		return 0;
	}
	if (ch.is_error) {
		x->error_event = 1;
		snprintf(x->err, sizeof x->err, "%s", ch.error);
		return 0;
	}
	n = tt_oai_stream_account(&x->st, &ch);
	if (ch.finish != TT_OAI_FINISH_NONE)
		x->finish = ch.finish;
	if (n > 0) {
		struct arrival a = x->now;
		if (x->n_chunks == x->cap_chunks) {
			size_t ncap = x->cap_chunks ? x->cap_chunks * 2 : 256;
			struct tt_chunk *nc = realloc(x->chunks, ncap * sizeof *nc);
			struct chunk_fallback *nf;
			uint8_t *nt;
			if (!nc)
				return 1;
			x->chunks = nc;
			nf = realloc(x->fallback, ncap * sizeof *nf);
			if (!nf)
				return 1;
			x->fallback = nf;
			/* the text bytes, then the timing bytes, moved up */
			nt = realloc(x->chunk_text, 2 * ncap);
			if (!nt)
				return 1;
			if (x->cap_chunks)
				memmove(nt + ncap, nt + x->cap_chunks, x->n_chunks);
			x->chunk_text = nt;
			x->cap_chunks = ncap;
		}
		if (x->tm.use_fallback && a.src != STAMP_CALLBACK) {
			/* settled already (a last event at the end) */
			a.src = x->tm.use_fallback == FALLBACK_LOOKED ? STAMP_WAKE : STAMP_CALLBACK;
			a.t = x->tm.use_fallback == FALLBACK_LOOKED ? a.fb.looked : a.fb.callback;
		}
		/* Times of one request never go back: a later piece timed by
		 * the kernel can predate an earlier piece timed by the callback
		 * (both are upper bounds of arrival; the later of the two is). */
		if (x->n_chunks && a.t < x->chunks[x->n_chunks - 1].t_ns)
			a.t = x->chunks[x->n_chunks - 1].t_ns;
		/* One read gave the previous chunk and this one the same
		 * time: the newest bytes' stamp, late for the earlier chunk
		 * (run-v1 3.5 "Capture timing"). */
		if (x->n_chunks && a.id == x->last_id) {
			x->chunk_text[x->cap_chunks + x->n_chunks - 1] |= TT_TIMING_SHARED;
		} else {
			/* a new read: its chunk arrived after wake k-2's sample
			 * (and after the send); its read is done by the next
			 * wake's sample */
			int64_t base = x->net->tm.wait_wake[2];
			x->look_base = base > x->wait_send ? base : x->wait_send;
			x->look_after = -1;
			wait_later(x->net, x, WAIT_LOOK);
			if (!x->n_chunks) {
				x->first_base = x->look_base;
				wait_later(x->net, x, WAIT_FIRST);
			}
		}
		x->last_id = a.id;
		x->chunk_text[x->cap_chunks + x->n_chunks] =
			a.src == STAMP_KERNEL ? 0 : TT_TIMING_NOT_KERNEL;
		x->chunks[x->n_chunks].t_ns = a.t;
		x->chunks[x->n_chunks].tokens = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		/* run-v1 3.5: reasoning and answer text kept apart */
		x->chunk_text[x->n_chunks] = (uint8_t)((ch.has_answer ? TT_TEXT_ANSWER : 0) |
						       (ch.has_reasoning ? TT_TEXT_REASONING : 0));
		x->fallback[x->n_chunks].looked = a.fb.looked > a.t ? a.fb.looked : a.t;
		x->fallback[x->n_chunks].callback = a.fb.callback > a.t ? a.fb.callback : a.t;
		x->n_chunks++;
		x->net->tokens_total += n;
		x->tm.by_src[a.src]++;
	}
	return 0;
}

static void body_piece(struct xfer *x, const char *p, size_t n)
{
	if (x->http_status >= 200 && x->http_status < 300) {
		enum tt_code rc = tt_sse_feed(&x->sse, p, n);
		if (rc > TT_WARN && x->sse.kind == TT_EFORMAT && !x->malformed) {
			snprintf(x->err, sizeof x->err, "stream event longer than %zu bytes",
				 x->sse.max_event);
			x->malformed = 1;
		}
		return;
	}
	resp_append(x, p, n);
}

static void body_data(void *ctx, const char *p, size_t n)
{
	body_piece(ctx, p, n);
}

static void gen_bytes(struct xfer *x, const char *p, size_t n)
{
	if (x->tm.raw && x->chunked) {
		if (!x->malformed && tt_unchunk_feed(&x->unchunk, p, n, body_data, x) != TT_OK) {
			snprintf(x->err, sizeof x->err, "broken chunked framing in the response");
			x->malformed = 1;
		}
	} else {
		body_piece(x, p, n);
	}
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb, n_early;
	struct arrival early;
	int64_t t = piece_time(&x->net->tm, &x->tm, n, &early, &n_early);

	x->last_rx = t;
	if (x->kind == XFER_GEN) {
		if (!x->http_status)
			curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->http_status);
		/* Events that end within the early bytes had arrived as `early`
		 * says; the others carry the callback's time. */
		if (n_early) {
			x->now.src = early.src;
			x->now.id = early.id;
			x->now.t = rel_ns(x->net, early.t);
			x->now.fb.looked = rel_ns(x->net, early.fb.looked);
			x->now.fb.callback = rel_ns(x->net, t);
			gen_bytes(x, ptr, n_early);
		}
		if (n > n_early) {
			x->now.src = STAMP_CALLBACK;
			x->now.id = ++x->net->tm.looks; /* this callback's own time */
			x->now.t = x->now.fb.looked = x->now.fb.callback = rel_ns(x->net, t);
			gen_bytes(x, ptr + n_early, n - n_early);
		}
		return x->malformed ? CURL_WRITEFUNC_ERROR : n;
	}
	resp_append(x, ptr, n);
	return n;
}

static int header_is(const char *buf, size_t n, const char *name, const char **v, size_t *k)
{
	size_t l = strlen(name);
	if (n <= l || strncasecmp(buf, name, l) != 0)
		return 0;
	*k = n - l;
	*v = buf + l;
	while (*k && (**v == ' ' || **v == '\t')) {
		(*v)++;
		(*k)--;
	}
	while (*k && ((*v)[*k - 1] == '\r' || (*v)[*k - 1] == '\n'))
		(*k)--;
	return 1;
}

static size_t header_cb(char *buf, size_t size, size_t nitems, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nitems, k;
	const char *v;
	struct arrival early;
	size_t n_early;

	x->last_rx = piece_time(&x->net->tm, &x->tm, n, &early, &n_early); /* header bytes count too */
	if (n > 5 && strncmp(buf, "HTTP/", 5) == 0) {
		/* a status line: a new response (after a 1xx, or the first) */
		x->chunked = 0;
		tt_unchunk_init(&x->unchunk);
	} else if (header_is(buf, n, "transfer-encoding:", &v, &k)) {
		x->chunked = k >= 7 && strncasecmp(v + k - 7, "chunked", 7) == 0;
	} else if (header_is(buf, n, "server:", &v, &k)) {
		if (k >= sizeof x->server_hdr)
			k = sizeof x->server_hdr - 1;
		memcpy(x->server_hdr, v, k);
		x->server_hdr[k] = '\0';
	}
	return n;
}

/* Settle a generation request's times (arrival_settle) once, while its
 * connection is still open. */
static void xfer_settle_times(struct net *c, struct xfer *x)
{
	if (x->kind != XFER_GEN)
		return;
	arrival_settle(&c->tm, &x->tm, x->chunks, x->fallback, x->n_chunks);
	if (x->tm.use_fallback) /* none of its times is the kernel's now */
		for (size_t i = 0; i < x->n_chunks; i++)
			x->chunk_text[x->cap_chunks + i] |= TT_TIMING_NOT_KERNEL;
}

/* libcurl closes a connection (the server said Connection: close, or it
 * is dropped from the cache): settle the request on it first, while the
 * kernel's counts can still be read. */
static int closesocket_cb(void *ud, curl_socket_t fd)
{
	struct net *c = ud;

	if (fd >= 0 && (size_t)fd < c->tm.n_stamps && c->tm.stamps[fd].user)
		xfer_settle_times(c, c->tm.stamps[fd].user);
	if (fd >= 0 && (size_t)fd < c->tm.n_stamps)
		c->tm.stamps[fd].user = NULL;
	c->n_conns--;
	return close((int)fd);
}

/* Every connection asks the kernel to stamp what it receives. */
static int sockopt_cb(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	struct net *c = ud;
	if (purpose == CURLSOCKTYPE_IPCXN) {
		arrival_stamp_socket((int)fd);
		c->n_conns++;
	}
	return CURL_SOCKOPT_OK;
}

/* Called by libcurl right before the request goes out on a connection. */
static int prereq_cb(void *ud, char *conn_primary_ip, char *conn_local_ip,
		     int conn_primary_port, int conn_local_port)
{
	struct xfer *x = ud;
	int key = local_key(conn_local_ip && strchr(conn_local_ip, ':'), conn_local_port);
	(void)conn_primary_ip;
	(void)conn_primary_port;
	x->t_send = rel_ns(x->net, now_ns());
	x->wait_send = arrival_cpu_wait(&x->net->tm);
	x->wait_sent = -1;
	wait_later(x->net, x, WAIT_SENT);
	arrival_request_sent(&x->net->tm, &x->tm, key, x);
	return CURL_PREREQFUNC_OK;
}

static void xfer_free(struct xfer *x)
{
	if (!x)
		return;
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	tt_sse_release(&x->sse);
	free(x->chunks);
	free(x->fallback);
	free(x->chunk_text);
	free(x->resp);
	free(x);
}

void xfer_free_all(struct net *c)
{
	while (c->free_list) {
		struct xfer *x = c->free_list;
		c->free_list = x->next_free;
		xfer_free(x);
	}
}

struct xfer *xfer_get(struct net *c, enum xfer_kind kind)
{
	struct xfer *x = c->free_list;

	if (x) {
		c->free_list = x->next_free;
		/* libcurl (7.88 at least) counts the requests it silently resends
		 * on a fresh connection, when a reused one turns out closed, on
		 * the easy handle, and only curl_easy_reset sets the count back:
		 * recycled without it, a handle gives up on its sixth resend
		 * ever ("Connection died, tried 5 times before giving up").
		 * llama-server closes every streamed connection after saying
		 * keep-alive, so a worker resends often (docs/engines.md).  The
		 * connection cache is the multi handle's: nothing is lost here,
		 * and xfer_start sets every option again. */
		curl_easy_reset(x->easy);
	} else {
		x = calloc(1, sizeof *x);
		if (!x)
			return NULL;
		x->easy = curl_easy_init();
		if (!x->easy) {
			free(x);
			return NULL;
		}
		tt_sse_init(&x->sse, on_event, x, 0);
	}
	x->kind = kind;
	x->net = c;
	x->next_free = NULL;
	x->done = NULL;
	x->user = NULL;
	x->http_status = 0;
	x->tm.fd = -1;
	x->errbuf[0] = '\0';
	x->slot = 0;
	x->seq = 0;
	x->role = TT_ROLE_MEASURED;
	x->t_sched = x->t_send = x->t_end = -1;
	x->prompt_asked = -1;
	memset(&x->wl, 0, sizeof x->wl);
	tt_sse_reset(&x->sse);
	tt_oai_stream_init(&x->st);
	x->n_chunks = 0;
	x->last_id = 0;
	x->wait_send = x->wait_sent = -1;
	x->first_base = x->first_after = x->look_base = x->look_after = -1;
	x->gen++;
	x->tm.steps0 = c->tm.clock_steps;
	memset(x->tm.by_src, 0, sizeof x->tm.by_src);
	x->tm.settled = 0;
	x->tm.counts_known = 0;
	x->tm.fed = 0;
	x->tm.use_fallback = 0;
	x->tm.local_key = -1;
	x->got_done = x->error_event = x->malformed = 0;
	x->finish = TT_OAI_FINISH_NONE;
	x->err[0] = '\0';
	x->resp_len = 0;
	x->resp_max = kind == XFER_GEN ? 16384 : (size_t)64 << 20;
	x->server_hdr[0] = '\0';
	return x;
}

void xfer_put(struct net *c, struct xfer *x)
{
	if (!x)
		return;
	if (x->active)
		xfer_cancel(c, x);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	/* Keep a small chunk array for reuse; a large one goes back to malloc. */
	if (x->cap_chunks > 4096) {
		free(x->chunks);
		x->chunks = NULL;
		free(x->fallback);
		x->fallback = NULL;
		free(x->chunk_text);
		x->chunk_text = NULL;
		x->cap_chunks = 0;
	}
	x->next_free = c->free_list;
	c->free_list = x;
}

enum tt_code xfer_start(struct net *c, struct xfer *x, const char *path, const char *body,
			size_t body_len, struct tt_error *err)
{
	char url[1400];
	CURL *e = x->easy;
	CURLMcode mc;

	snprintf(url, sizeof url, "%s%s", c->url, path);
	curl_slist_free_all(x->headers);
	x->headers = NULL;
	if (c->auth[0])
		x->headers = curl_slist_append(x->headers, c->auth);
	if (body) {
		x->headers = curl_slist_append(x->headers, "Content-Type: application/json");
		/* A large body would otherwise wait for "100 Continue" up to 1 s. */
		x->headers = curl_slist_append(x->headers, "Expect:");
	}
	if (x->kind == XFER_GEN) {
		char id[96];
		snprintf(id, sizeof id, "X-Request-Id: tt-%zu-%d-%u-%d", c->cur_cell,
			 x->slot, x->seq, (int)x->role);
		x->headers = curl_slist_append(x->headers, id);
		x->headers = curl_slist_append(x->headers, "Accept: text/event-stream");
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	/* Without a proxy variable set, say so: libcurl otherwise looks the
	 * variables up again for every transfer (getenv, no_proxy matching). */
	if (c->no_proxy_env)
		curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
	curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, c);
	/* HTTP/1.1: every transfer in flight holds a connection.  When none is
	 * idle, say so: libcurl would otherwise walk every open connection to
	 * the host looking for one, for each new transfer, and past a
	 * server's capacity (thousands in flight) that walk was most of the
	 * capture's CPU and made its sends late (tests/bench/README.md). */
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, c->n_conns <= c->n_active ? 1L : 0L);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, closesocket_cb);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);
	/* generation bodies come raw and are unchunked here (timing) */
	x->tm.raw = x->kind == XFER_GEN && c->raw_ok;
	x->chunked = 0;
	tt_unchunk_init(&x->unchunk);
	curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, x->tm.raw ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
	curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
	if (c->o->cacert)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->o->cacert);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c->o->insecure ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c->o->insecure ? 0L : 2L);
	if (body) {
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	} else {
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	}
	if (x->t_sched < 0)
		x->t_sched = rel_ns(c, now_ns());
	x->t_send = x->t_sched; /* until libcurl says it actually sent */
	x->last_rx = now_ns();
	mc = curl_multi_add_handle(c->multi, e);
	if (mc != CURLM_OK)
		return tt_error_set(err, TT_ENET, "cannot start a request to '%s': %s", url,
				    curl_multi_strerror(mc));
	x->active = 1;
	c->n_active++;
	if (x->kind == XFER_GEN)
		c->gen_active++;
	return TT_OK;
}

/* A transfer leaves the multi handle (ended or cancelled): its times are
 * settled first, while its connection is still open. */
void xfer_detach(struct net *c, struct xfer *x)
{
	xfer_settle_times(c, x);
	if (x->tm.fd >= 0 && (size_t)x->tm.fd < c->tm.n_stamps && c->tm.stamps[x->tm.fd].user == x)
		c->tm.stamps[x->tm.fd].user = NULL;
	curl_multi_remove_handle(c->multi, x->easy);
	x->active = 0;
	c->n_active--;
	if (x->kind == XFER_GEN)
		c->gen_active--;
}

void xfer_cancel(struct net *c, struct xfer *x)
{
	if (x->active)
		xfer_detach(c, x);
}

void xfer_timeout(struct net *c, struct xfer *x, int64_t now)
{
	/* Our own stall clock rather than libcurl's low-speed check, which
	 * averages over several seconds and so fires late and unevenly. */
	xfer_cancel(c, x);
	if (!x->http_status)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->http_status);
	x->t_end = rel_ns(c, now);
	snprintf(x->errbuf, sizeof x->errbuf, "no data for %.3g s (--request-timeout)",
		 c->o->request_timeout_s);
	if (x->done)
		x->done(c, x, CURLE_OPERATION_TIMEDOUT);
	else
		xfer_put(c, x);
}

static enum tt_fail fail_of(CURLcode res)
{
	switch (res) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
		return TT_FAIL_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		return TT_FAIL_TIMEOUT;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
		return TT_FAIL_RESET;
	default:
		return TT_FAIL_OTHER;
	}
}

void gen_record(struct net *c, struct xfer *x, CURLcode res, enum tt_finish forced,
		int64_t t_end)
{
	struct tt_request r;
	char *error = NULL;
	const char *why = NULL;

	memset(&r, 0, sizeof r);
	r.slot = (uint32_t)x->slot;
	r.seq = x->seq;
	r.role = x->role;
	r.t_sched_ns = x->t_sched;
	r.t_send_ns = x->t_send;
	r.t_end_ns = t_end;
	r.http_status = (int)x->http_status;
	r.finish = TT_FINISH_UNKNOWN;
	r.fail = TT_FAIL_NONE;
	if (forced == TT_FINISH_UNKNOWN && res == CURLE_OK && x->http_status < 300 && !x->malformed)
		tt_sse_end(&x->sse); /* a last event without its blank line */
	r.prompt_tokens = x->st.prompt_tokens;
	r.cached_tokens = x->st.cached_tokens;
	/* A request cut (or aborted) while streaming has not had its usage
	 * yet (llama.cpp and vLLM without continuous usage send it last): it
	 * records the prompt it asked for, its cache hit unknown (-1), which
	 * is how a reader tells (formats/run-v1.md 3.5). */
	if (forced != TT_FINISH_UNKNOWN && r.prompt_tokens < 0 && x->prompt_asked > 0) {
		r.prompt_tokens = x->prompt_asked;
		r.cached_tokens = -1;
	}

	if (forced != TT_FINISH_UNKNOWN) {
		r.finish = forced;
	} else if (x->malformed) {
		r.finish = TT_FINISH_ERROR;
		r.fail = TT_FAIL_MALFORMED;
		why = x->err;
	} else if (res == CURLE_OK && x->http_status >= 400) {
		r.finish = TT_FINISH_ERROR;
		r.fail = TT_FAIL_HTTP;
		why = x->resp_len ? x->resp : "no body";
	} else if (x->error_event) {
		r.finish = TT_FINISH_ERROR;
		r.fail = TT_FAIL_ERROR_EVENT;
		why = x->err;
	} else if (res != CURLE_OK) {
		r.finish = TT_FINISH_ERROR;
		r.fail = fail_of(res);
		why = x->errbuf[0] ? x->errbuf : curl_easy_strerror(res);
	} else if (!x->got_done) {
		/* Every OpenAI route we use ends its stream with [DONE]; without
		 * it the last usage chunk may be missing too (llama.cpp ends this
		 * way after an error), so the request is not trusted. */
		r.finish = TT_FINISH_ERROR;
		r.fail = TT_FAIL_NO_DONE;
		why = x->finish != TT_OAI_FINISH_NONE ? "stream ended without [DONE]"
						     : "stream ended without [DONE] or a finish reason";
	} else if (x->finish == TT_OAI_FINISH_LENGTH) {
		r.finish = TT_FINISH_LENGTH;
	} else if (x->finish != TT_OAI_FINISH_NONE) {
		r.finish = TT_FINISH_STOP;
	} else {
		r.finish = TT_FINISH_UNKNOWN;
	}
	if (r.finish == TT_FINISH_ERROR)
		c->errors_total++;
	if (why) {
		size_t n = strlen(why);
		if (n > 512)
			n = 512;
		error = malloc(n + 1);
		if (error) {
			memcpy(error, why, n);
			error[n] = '\0';
			/* One line in the trace: error bodies may hold newlines. */
			for (size_t i = 0; i < n; i++)
				if (error[i] == '\n' || error[i] == '\r')
					error[i] = ' ';
		}
	}
	r.n_chunks = x->n_chunks;
	/* every chunk's text was looked at (on_event); the sink owns it now */
	r.chunk_text = x->n_chunks ? x->chunk_text : NULL;
	/* the capture's own timing (run-v1 3.5): how late its times can be */
	{
		int64_t w_end = arrival_cpu_wait(&c->tm);
		r.timing_recorded = 1;
		r.chunk_timing = x->n_chunks ? x->chunk_text + x->cap_chunks : NULL;
		/* a sample still to come is replaced by this one, later */
		int64_t sent = x->wait_sent >= 0 ? x->wait_sent : w_end;
		int64_t first = x->first_after >= 0 ? x->first_after : w_end;
		int64_t look = x->look_after >= 0 ? x->look_after : w_end;
		int known = x->wait_send >= 0 && w_end >= 0;
		r.cpu_wait_ns = known ? w_end - x->wait_send : -1;
		if (!known)
			r.cpu_wait_first_ns = -1;
		else if (!x->n_chunks || x->first_base < 0)
			r.cpu_wait_first_ns = r.cpu_wait_ns;
		else /* the send's pass, and the first chunk's read */
			r.cpu_wait_first_ns = (sent - x->wait_send) + (first - x->first_base);
		r.cpu_wait_last_ns = known && x->n_chunks && x->look_base >= 0 ? look - x->look_base : -1;
		r.clock_steps = (uint32_t)(arrival_clock_steps(&c->tm) - x->tm.steps0);
	}
	/* a replayed workload's request: what it asked (run-v1 3.5, minor 3) */
	if (x->wl.on) {
		r.workload_recorded = 1;
		r.wl_line = x->wl.line;
		r.prompt_asked = x->prompt_asked;
		r.output_asked = x->wl.output_asked;
		r.session = x->wl.session;
		r.turn = x->wl.turn;
		r.n_blocks = x->wl.n_blocks;
		r.blocks = x->wl.blocks;
	}
	sink_request(c->sink, &r, x->n_chunks ? x->chunks : NULL, error);
	for (int i = 0; i < STAMP_N; i++)
		c->tm.stamps_by_src[i] += x->tm.by_src[i];
	memset(x->tm.by_src, 0, sizeof x->tm.by_src);
	if (x->n_chunks) {
		/* The sink owns the array now; its companion goes too. */
		x->chunks = NULL;
		x->cap_chunks = 0;
		free(x->fallback);
		x->fallback = NULL;
		x->chunk_text = NULL;
	} else {
		/* keep ours; nothing was handed over */
	}
	x->n_chunks = 0;
}
