/* The network loop: libcurl's multi interface, one thread, every transfer.
 *
 * curl's multi-loop shape (wait -> act -> info_read, per-transfer state
 * through CURLINFO_PRIVATE), with the wait done by epoll through
 * curl_multi_socket_action so a wake costs the sockets that have data, not
 * every open connection.
 *
 * Arrival times (docs/capture.md, "Timestamps"): right before libcurl reads
 * a readable socket, it is asked, without consuming anything, how many
 * bytes it holds and when the newest of them arrived (the kernel's receive
 * stamp).  Bytes libcurl then hands over from that socket carry that time
 * as long as they are within the bytes counted; anything beyond carries the
 * time the write callback ran.  None is earlier than the packet carrying
 * the bytes reached this machine. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "capture.h"
#include "tcpinfo.h"

static int clock_stepped(struct cap *c);
static void xfer_settle_times(struct cap *c, struct xfer *x);

int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A connection's local end as a number: its port, plus 65536 for IPv6
 * (an IPv4 and an IPv6 connection may share a port); -1 unknown. */
#define LOCAL_KEYS (2 * 65536)
static int local_key(int ipv6, int port)
{
	return port > 0 && port < 65536 ? port + (ipv6 ? 65536 : 0) : -1;
}

static int local_key_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return local_key(0, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (ss.ss_family == AF_INET6)
		return local_key(1, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	return -1;
}

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
			if (!nc)
				return 1;
			x->chunks = nc;
			nf = realloc(x->fallback, ncap * sizeof *nf);
			if (!nf)
				return 1;
			x->fallback = nf;
			x->cap_chunks = ncap;
		}
		if (x->use_fallback && a.src != STAMP_CALLBACK) {
			/* settled already (a last event at the end) */
			a.src = x->use_fallback == FALLBACK_LOOKED ? STAMP_WAKE : STAMP_CALLBACK;
			a.t = x->use_fallback == FALLBACK_LOOKED ? a.fb.looked : a.fb.callback;
		}
		/* Times of one request never go back: a later piece timed by
		 * the kernel can predate an earlier piece timed by the callback
		 * (both are upper bounds of arrival; the later of the two is). */
		if (x->n_chunks && a.t < x->chunks[x->n_chunks - 1].t_ns)
			a.t = x->chunks[x->n_chunks - 1].t_ns;
		x->chunks[x->n_chunks].t_ns = a.t;
		x->chunks[x->n_chunks].tokens = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		x->fallback[x->n_chunks].looked = a.fb.looked > a.t ? a.fb.looked : a.t;
		x->fallback[x->n_chunks].callback = a.fb.callback > a.t ? a.fb.callback : a.t;
		x->n_chunks++;
		x->cap->tokens_total += n;
		x->by_src[a.src]++;
	}
	return 0;
}

/* The arrival of the next n bytes libcurl hands over for x, as they came
 * off its socket (see struct fd_stamp): the first *n_early of them arrived
 * as *early says; the rest, if any, by the time returned (the callback's:
 * now).  Pieces that are not raw socket bytes (TLS, decoded bodies) are
 * all "the rest".  Times are CLOCK_MONOTONIC. */
static int64_t piece_time(struct xfer *x, size_t n, struct arrival *early, size_t *n_early)
{
	struct cap *c = x->cap;
	int64_t t = now_ns();

	*n_early = 0;
	if (x->raw)
		x->fed += n; /* header lines and undecoded body: socket bytes */
	/* Only while libcurl acts on this transfer's own socket.  It also runs
	 * other transfers inside one socket action (expired timers); what they
	 * read off their own sockets then was not counted off, so those counts
	 * are void for the rest of the wake. */
	if (x->fd >= 0 && (size_t)x->fd < c->n_stamps) {
		struct fd_stamp *st = &c->stamps[x->fd];
		if (x->fd == c->cur_fd && st->wake == c->wake && c->void_wake != c->wake && x->raw &&
		    st->covered > 0) {
			*n_early = n < st->covered ? n : st->covered;
			st->covered -= *n_early;
			early->src = st->kernel ? STAMP_KERNEL : STAMP_WAKE;
			early->t = st->t < t ? st->t : t;
			early->fb.looked = st->looked < t ? st->looked : t;
			early->fb.callback = t;
		} else {
			st->covered = 0;
		}
	} else if (x->fd < 0) {
		c->void_wake = c->wake; /* a socket we cannot name was read */
	}
	return t;
}

static void body_piece(struct xfer *x, const char *p, size_t n)
{
	if (x->http_status >= 200 && x->http_status < 300) {
		enum tt_code rc = tt_sse_feed(&x->sse, p, n);
		if (rc == TT_EFORMAT && !x->malformed) {
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
	if (x->raw && x->chunked) {
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
	int64_t t = piece_time(x, n, &early, &n_early);

	x->last_rx = t;
	if (x->kind == XFER_GEN) {
		if (!x->http_status)
			curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->http_status);
		/* Events that end within the early bytes had arrived as `early`
		 * says; the others carry the callback's time. */
		if (n_early) {
			x->now.src = early.src;
			x->now.t = rel_ns(x->cap, early.t);
			x->now.fb.looked = rel_ns(x->cap, early.fb.looked);
			x->now.fb.callback = rel_ns(x->cap, t);
			gen_bytes(x, ptr, n_early);
		}
		if (n > n_early) {
			x->now.src = STAMP_CALLBACK;
			x->now.t = x->now.fb.looked = x->now.fb.callback = rel_ns(x->cap, t);
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

	x->last_rx = piece_time(x, n, &early, &n_early); /* header bytes count too */
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

/* libcurl closes a connection (the server said Connection: close, or it
 * is dropped from the cache): settle the request on it first, while the
 * kernel's counts can still be read. */
static int closesocket_cb(void *ud, curl_socket_t fd)
{
	struct cap *c = ud;

	if (fd >= 0 && (size_t)fd < c->n_stamps && c->stamps[fd].user)
		xfer_settle_times(c, c->stamps[fd].user);
	if (fd >= 0 && (size_t)fd < c->n_stamps)
		c->stamps[fd].user = NULL;
	return close((int)fd);
}

/* Every connection asks the kernel to stamp what it receives. */
static int sockopt_cb(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	int one = 1;
	(void)ud;
	if (purpose == CURLSOCKTYPE_IPCXN)
		(void)setsockopt((int)fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
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
	x->t_send = rel_ns(x->cap, now_ns());
	/* which socket the transfer runs on: libcurl says only the address */
	x->fd = key >= 0 && x->cap->port_fd ? x->cap->port_fd[key] : -1;
	x->local_key = key;
	if (x->fd >= 0 && (size_t)x->fd < x->cap->n_stamps) {
		x->cap->stamps[x->fd].covered = 0; /* nothing of this answer was there */
		x->cap->stamps[x->fd].user = x;    /* for closesocket_cb */
	}
	x->fed = 0;
	x->counts_known = 0;
	(void)clock_stepped(x->cap);
	x->steps0 = x->cap->clock_steps;
	if (x->fd >= 0) {
		struct tcp_counts tc;
		if (tcp_counts(x->fd, &tc) == 0) {
			x->ooo0 = tc.ooo_packets;
			x->read0 = tc.bytes_read;
			x->counts_known = 1;
		}
	}
	return CURL_PREREQFUNC_OK;
}

/* libcurl tells us which sockets to watch; epoll then wakes us for the
 * sockets with data only.  (curl_multi_poll would poll every connection on
 * every wake: at 128+ streams that was a quarter of the capture's CPU.) */
static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct cap *c = userp;
	struct epoll_event ev;
	(void)easy;

	memset(&ev, 0, sizeof ev);
	ev.data.fd = (int)s;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, (int)s, NULL);
		curl_multi_assign(c->multi, s, NULL);
		return 0;
	}
	if ((size_t)s >= c->n_stamps && s < 1 << 20) {
		size_t nn = ((size_t)s + 1) * 2;
		struct fd_stamp *ns = realloc(c->stamps, nn * sizeof *ns);
		if (ns) {
			memset(ns + c->n_stamps, 0, (nn - c->n_stamps) * sizeof *ns);
			c->stamps = ns;
			c->n_stamps = nn;
		}
	}
	if (!socketp) {
		/* A new socket (maybe on a reused number), or a kept-alive
		 * connection taken up again (its `user` stays: closesocket_cb
		 * and xfer_detach clear it).  Local end -> socket, for
		 * prereq_cb (connect() has bound it). */
		int key = local_key_of((int)s);
		if ((size_t)s < c->n_stamps)
			c->stamps[s].covered = 0;
		if (!c->port_fd) {
			c->port_fd = malloc(LOCAL_KEYS * sizeof *c->port_fd);
			if (c->port_fd)
				memset(c->port_fd, 0xff, LOCAL_KEYS * sizeof *c->port_fd); /* all -1 */
		}
		if (c->port_fd && key >= 0)
			c->port_fd[key] = (int)s;
	}
	if (what & CURL_POLL_IN)
		ev.events |= EPOLLIN;
	if (what & CURL_POLL_OUT)
		ev.events |= EPOLLOUT;
	if (socketp) {
		epoll_ctl(c->epfd, EPOLL_CTL_MOD, (int)s, &ev);
	} else {
		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, (int)s, &ev) != 0 && errno == EEXIST)
			epoll_ctl(c->epfd, EPOLL_CTL_MOD, (int)s, &ev);
		/* any non-NULL marker: "this socket is registered" */
		curl_multi_assign(c->multi, s, c);
	}
	return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct cap *c = userp;
	(void)multi;
	c->curl_timer = timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000;
	return 0;
}

enum tt_code net_init(struct cap *c, struct tt_error *err)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return tt_error_set(err, TT_ENET, "cannot initialise libcurl");
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return tt_error_set(err, TT_ENET, "cannot create an epoll set: %s", strerror(errno));
	c->curl_timer = -1;
	c->cur_fd = -1;
	c->clock_fd = -1;
	(void)clock_stepped(c); /* arms the step detector */
	c->multi = curl_multi_init();
	if (!c->multi)
		return tt_error_set(err, TT_ENOMEM, "cannot create a libcurl multi handle");
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	/* HTTP/1.1, one stream per connection, and keep every worker's connection
	 * open between requests: default cache limits would close some. */
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_NOTHING);
	curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 4096L);
	curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
	return TT_OK;
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
	free(x->resp);
	free(x);
}

void net_cleanup(struct cap *c)
{
	if (c->scrape) {
		xfer_put(c, c->scrape);
		c->scrape = NULL;
	}
	while (c->free_list) {
		struct xfer *x = c->free_list;
		c->free_list = x->next_free;
		xfer_free(x);
	}
	if (c->multi)
		curl_multi_cleanup(c->multi);
	c->multi = NULL;
	free(c->stamps);
	c->stamps = NULL;
	free(c->port_fd);
	c->port_fd = NULL;
	if (c->clock_fd >= 0)
		close(c->clock_fd);
	c->clock_fd = -1;
	c->n_stamps = 0;
	if (c->epfd > 0)
		close(c->epfd);
	c->epfd = -1;
	curl_global_cleanup();
}

struct xfer *xfer_get(struct cap *c, enum xfer_kind kind)
{
	struct xfer *x = c->free_list;

	if (x) {
		c->free_list = x->next_free;
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
	x->cap = c;
	x->next_free = NULL;
	x->done = NULL;
	x->user = NULL;
	x->http_status = 0;
	x->fd = -1;
	x->errbuf[0] = '\0';
	x->slot = 0;
	x->seq = 0;
	x->role = TT_ROLE_MEASURED;
	x->t_sched = x->t_send = x->t_end = -1;
	tt_sse_reset(&x->sse);
	tt_oai_stream_init(&x->st);
	x->n_chunks = 0;
	memset(x->by_src, 0, sizeof x->by_src);
	x->settled = 0;
	x->counts_known = 0;
	x->fed = 0;
	x->use_fallback = 0;
	x->local_key = -1;
	x->got_done = x->error_event = x->malformed = 0;
	x->finish = TT_OAI_FINISH_NONE;
	x->err[0] = '\0';
	x->resp_len = 0;
	x->resp_max = kind == XFER_GEN ? 16384 : (size_t)64 << 20;
	x->server_hdr[0] = '\0';
	return x;
}

void xfer_put(struct cap *c, struct xfer *x)
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
		x->cap_chunks = 0;
	}
	x->next_free = c->free_list;
	c->free_list = x;
}

enum tt_code xfer_start(struct cap *c, struct xfer *x, const char *path, const char *body,
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
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, closesocket_cb);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, c);
	/* generation bodies come raw and are unchunked here (timing) */
	x->raw = x->kind == XFER_GEN && c->raw_ok;
	x->chunked = 0;
	tt_unchunk_init(&x->unchunk);
	curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, x->raw ? 0L : 1L);
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

/* At the end of a request, while its connection is still open (see
 * closesocket_cb for a connection libcurl closes first): if the
 * connection received packets out of order since the request went out (or
 * that cannot be known), its kernel-stamped chunks take the time we looked
 * instead (see struct xfer). */
static void xfer_settle_times(struct cap *c, struct xfer *x)
{
	struct tcp_counts tc;
	int64_t prev = INT64_MIN;

	/* Once per request, whenever counted bytes were handed over: an event
	 * still to come (tt_sse_end in gen_record) keeps its stamp only if the
	 * request passed. */
	if (x->kind != XFER_GEN || !x->raw || x->settled || !x->fed)
		return;
	x->settled = 1;
	/* A wrong or unknown count voids the looked times too (they rest on
	 * it): the callback's times are bounds whatever happened. */
	(void)clock_stepped(c);
	if (c->clock_steps != x->steps0) {
		c->settled_clock++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (!x->counts_known || x->fd < 0 || local_key_of(x->fd) != x->local_key ||
		   tcp_counts(x->fd, &tc) != 0) {
		c->settled_unknown++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (tc.bytes_read - x->read0 != x->fed) {
		c->settled_miscount++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (tc.ooo_packets != x->ooo0) {
		c->settled_ooo++;
		x->use_fallback = FALLBACK_LOOKED;
	} else {
		return;
	}
	for (size_t i = 0; i < x->n_chunks; i++) {
		int64_t t = x->use_fallback == FALLBACK_LOOKED ? x->fallback[i].looked
							       : x->fallback[i].callback;
		if (t < prev)
			t = prev;
		x->chunks[i].t_ns = prev = t;
	}
	{ /* the chunks moved now count as timed by their fallback */
		int64_t moved = x->by_src[STAMP_KERNEL];
		x->by_src[STAMP_KERNEL] = 0;
		if (x->use_fallback == FALLBACK_CALLBACK) {
			moved += x->by_src[STAMP_WAKE];
			x->by_src[STAMP_WAKE] = 0;
		}
		x->by_src[x->use_fallback == FALLBACK_LOOKED ? STAMP_WAKE : STAMP_CALLBACK] += moved;
	}
}

/* A transfer leaves the multi handle (ended or cancelled): its times are
 * settled first, while its connection is still open. */
static void xfer_detach(struct cap *c, struct xfer *x)
{
	xfer_settle_times(c, x);
	if (x->fd >= 0 && (size_t)x->fd < c->n_stamps && c->stamps[x->fd].user == x)
		c->stamps[x->fd].user = NULL;
	curl_multi_remove_handle(c->multi, x->easy);
	x->active = 0;
	c->n_active--;
	if (x->kind == XFER_GEN)
		c->gen_active--;
}

void xfer_cancel(struct cap *c, struct xfer *x)
{
	if (x->active)
		xfer_detach(c, x);
}

void xfer_timeout(struct cap *c, struct xfer *x, int64_t now)
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

/* Has the wall clock been set (stepped) since we last asked?  A timerfd on
 * CLOCK_REALTIME armed with TFD_TIMER_CANCEL_ON_SET is cancelled by every
 * step, leap seconds included.  Unknown counts as stepped.  Each step
 * counts in c->clock_steps: a request during which it grew cannot trust
 * its wall-clock-mapped kernel stamps (xfer_settle_times). */
static int clock_stepped(struct cap *c)
{
	struct itimerspec its;
	uint64_t ticks;

	if (c->clock_fd >= 0 && read(c->clock_fd, &ticks, sizeof ticks) < 0 && errno == EAGAIN)
		return 0;
	if (c->clock_fd < 0)
		c->clock_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->clock_fd < 0)
		return 1;
	memset(&its, 0, sizeof its);
	clock_gettime(CLOCK_REALTIME, &its.it_value);
	its.it_value.tv_sec += 10L * 365 * 86400; /* never fires */
	if (timerfd_settime(c->clock_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) != 0) {
		close(c->clock_fd);
		c->clock_fd = -1;
		return 1;
	}
	c->real_off_known = 0; /* the offset is from before */
	c->clock_steps++;
	return 1;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, for mapping the kernel's receive
 * stamps (wall clock) onto ours.  The two clocks run at one rate (NTP
 * slews both), so the offset holds until the wall clock is stepped
 * (clock_stepped forgets it; a request spanning a step is settled with
 * callback times).  Read between two monotonic readings and kept only when
 * they are at most 1 us apart: a read interrupted in the middle would be
 * off by the interruption.  At most one try (4 readings) per wake; 0 while
 * unknown: the bytes then get the time we looked. */
static int real_offset(struct cap *c)
{
	if (c->real_off_known || c->real_off_tried == c->wake)
		return c->real_off_known;
	c->real_off_tried = c->wake;
	for (int i = 0; i < 4; i++) {
		struct timespec rt;
		int64_t a = now_ns(), b;
		clock_gettime(CLOCK_REALTIME, &rt);
		b = now_ns();
		if (b - a <= 1000) {
			/* against the later monotonic reading: the offset can only
			 * come out low, so mapped stamps only late (by < 1 us) */
			c->real_off = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - b;
			c->real_off_known = 1;
			break;
		}
	}
	return c->real_off_known;
}

/* Right before libcurl reads socket fd: how many bytes it holds, and the
 * kernel's receive stamp of the newest of them (struct fd_stamp).  Done
 * per socket, not for all at the wake: the stamp does not depend on when
 * we look, and looking late counts in the bytes that came meanwhile. */
static void peek_socket(struct cap *c, int fd)
{
	union { /* aligned for the cmsghdr read from it */
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {NULL, INT_MAX / 2};
	struct msghdr mh;
	ssize_t r;
	struct fd_stamp *st;

	if (fd < 0 || (size_t)fd >= c->n_stamps)
		return;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof cbuf.buf;
	/* counts the bytes without copying or consuming them */
	r = recvmsg(fd, &mh, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (r <= 0)
		return;
	st = &c->stamps[fd];
	st->wake = c->wake;
	st->covered = (size_t)r;
	st->t = st->looked = now_ns();
	st->kernel = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		struct timespec ts;
		int64_t k;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		if (!real_offset(c))
			continue;
		memcpy(&ts, CMSG_DATA(cm), sizeof ts);
		k = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - c->real_off;
		/* no later than we looked, and at most 1 s old; a wall-clock
		 * step during the request is caught at its end (settle) */
		if (k <= st->t && k > st->t - 1000000000) {
			st->t = k;
			st->kernel = 1;
		}
	}
}

void net_step(struct cap *c, int timeout_ms)
{
	struct epoll_event evs[256];
	int running = 0, left = 0, n;
	CURLMsg *msg;

	if (timeout_ms < 0)
		timeout_ms = 0;
	if (c->curl_timer >= 0) {
		int64_t until = (c->curl_timer - now_ns() + 999999) / 1000000;
		if (until < timeout_ms)
			timeout_ms = until < 0 ? 0 : (int)until;
	}
	n = epoll_wait(c->epfd, evs, (int)(sizeof evs / sizeof evs[0]), timeout_ms);
	c->wake++;
	for (int i = 0; i < n; i++) {
		int flags = 0;
		if (evs[i].events & (EPOLLIN | EPOLLHUP))
			flags |= CURL_CSELECT_IN;
		if (evs[i].events & EPOLLOUT)
			flags |= CURL_CSELECT_OUT;
		if (evs[i].events & EPOLLERR)
			flags |= CURL_CSELECT_ERR;
		if (evs[i].events & EPOLLIN)
			peek_socket(c, evs[i].data.fd);
		c->cur_fd = evs[i].data.fd;
		curl_multi_socket_action(c->multi, (curl_socket_t)evs[i].data.fd, flags, &running);
		c->cur_fd = -1;
	}
	if (c->curl_timer >= 0 && now_ns() >= c->curl_timer) {
		c->curl_timer = -1;
		curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	while ((msg = curl_multi_info_read(c->multi, &left))) {
		struct xfer *x = NULL;
		CURLcode res;

		if (msg->msg != CURLMSG_DONE)
			continue;
		res = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (!x)
			continue;
		xfer_detach(c, x);
		if (!x->http_status)
			curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->http_status);
		x->t_end = rel_ns(c, now_ns());
		if (x->done)
			x->done(c, x, res);
		else
			xfer_put(c, x);
	}
}

static void fetch_done(struct cap *c, struct xfer *x, CURLcode res)
{
	(void)c;
	*(CURLcode *)x->user = res;
}

struct xfer *net_fetch(struct cap *c, const char *path, const char *body, double timeout_s,
		       struct tt_error *err)
{
	struct xfer *x = xfer_get(c, XFER_GET);
	CURLcode res = (CURLcode)-1;
	int64_t deadline = now_ns() + (int64_t)(timeout_s * 1e9);

	if (!x) {
		tt_error_set(err, TT_ENOMEM, "out of memory");
		return NULL;
	}
	x->done = fetch_done;
	x->user = &res;
	if (xfer_start(c, x, path, body, body ? strlen(body) : 0, err) != TT_OK) {
		xfer_put(c, x);
		return NULL;
	}
	while (res == (CURLcode)-1 && now_ns() < deadline && !*c->stop)
		net_step(c, 50);
	if (res == (CURLcode)-1) {
		xfer_cancel(c, x);
		tt_error_set(err, TT_ENET, "no answer from '%s%s' within %.0f s", c->url, path,
			     timeout_s);
		xfer_put(c, x);
		return NULL;
	}
	if (res != CURLE_OK) {
		tt_error_set(err, TT_ENET, "cannot connect to '%s%s': %s", c->url, path,
			     x->errbuf[0] ? x->errbuf : curl_easy_strerror(res));
		xfer_put(c, x);
		return NULL;
	}
	return x;
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

void gen_record(struct cap *c, struct xfer *x, CURLcode res, enum tt_finish forced,
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
	sink_request(c->sink, &r, x->n_chunks ? x->chunks : NULL, error);
	for (int i = 0; i < STAMP_N; i++)
		c->stamps_by_src[i] += x->by_src[i];
	memset(x->by_src, 0, sizeof x->by_src);
	if (x->n_chunks) {
		/* The sink owns the array now; its companion goes too. */
		x->chunks = NULL;
		x->cap_chunks = 0;
		free(x->fallback);
		x->fallback = NULL;
	} else {
		/* keep ours; nothing was handed over */
	}
	x->n_chunks = 0;
}
