/* The event loop: libcurl's multi interface, one thread, every transfer.
 *
 * curl's multi-loop shape (wait -> act -> info_read, per-transfer state
 * through CURLINFO_PRIVATE), with the wait done by epoll through
 * curl_multi_socket_action so a wake costs the sockets that have data, not
 * every open connection.  Each readable socket is peeked (arrival.c) right
 * before libcurl reads it. */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <string.h>

#include "net_loop.h"
#include "arrival.h"
#include "monotonic.h"
#include "xfer.h"

/* libcurl tells us which sockets to watch; epoll then wakes us for the
 * sockets with data only.  (curl_multi_poll would poll every connection on
 * every wake: at 128+ streams that was a quarter of the capture's CPU.) */
static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct net *c = userp;
	struct epoll_event ev;
	(void)easy;

	memset(&ev, 0, sizeof ev);
	ev.data.fd = (int)s;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, (int)s, NULL);
		curl_multi_assign(c->multi, s, NULL);
		return 0;
	}
	arrival_socket(&c->tm, (int)s, !socketp);
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
	struct net *c = userp;
	(void)multi;
	c->curl_timer = timeout_ms < 0 ? -1 : now_ns() + (int64_t)timeout_ms * 1000000;
	return 0;
}

enum tt_code net_init(struct net *c, struct tt_error *err)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return tt_error_set(err, TT_ENET, "cannot initialise libcurl");
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return tt_error_set(err, TT_ENET, "cannot create an epoll set: %s", strerror(errno));
	c->curl_timer = -1;
	arrival_init(&c->tm);
	c->tm.wait_wake[0] = c->tm.wait_wake[1] = c->tm.wait_wake[2] = -1;
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

void net_cleanup(struct net *c)
{
	xfer_free_all(c);
	free(c->pend);
	c->pend = NULL;
	c->n_pend = c->cap_pend = 0;
	if (c->multi)
		curl_multi_cleanup(c->multi);
	c->multi = NULL;
	arrival_release(&c->tm);
	if (c->epfd > 0)
		close(c->epfd);
	c->epfd = -1;
	curl_global_cleanup();
}

void net_step(struct net *c, int timeout_ms)
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
	c->tm.wake++;
	/* the loop's CPU wait so far, once a wake (about 1 us): the wait
	 * between two reads of a stream bounds how late the second one's
	 * stamps can be (docs/capture.md "When a stamp is late") */
	if (n > 0 || c->n_pend) {
		int64_t w = arrival_cpu_wait(&c->tm);
		c->tm.wait_wake[2] = c->tm.wait_wake[1];
		c->tm.wait_wake[1] = c->tm.wait_wake[0];
		c->tm.wait_wake[0] = w;
		if (c->n_pend)
			xfer_fill_waits(c, w);
	}
	for (int i = 0; i < n; i++) {
		int flags = 0;
		if (evs[i].events & (EPOLLIN | EPOLLHUP))
			flags |= CURL_CSELECT_IN;
		if (evs[i].events & EPOLLOUT)
			flags |= CURL_CSELECT_OUT;
		if (evs[i].events & EPOLLERR)
			flags |= CURL_CSELECT_ERR;
		if (evs[i].events & EPOLLIN)
			peek_socket(&c->tm, evs[i].data.fd);
		c->tm.cur_fd = evs[i].data.fd;
		curl_multi_socket_action(c->multi, (curl_socket_t)evs[i].data.fd, flags, &running);
		c->tm.cur_fd = -1;
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

static void fetch_done(struct net *c, struct xfer *x, CURLcode res)
{
	(void)c;
	*(CURLcode *)x->user = res;
}

struct xfer *net_fetch(struct net *c, const char *path, const char *body, double timeout_s,
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
