/* A request's life on the server side, from its acceptance to req_free: the
 * live list, the dirty queue the engine's tokens fill, and the ways its HTTP
 * side ends. */
#include "api_request.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "engine.h"
#include "metrics.h"
#include "sim_clock.h"
#include "sim_config.h"
#include "sim_req.h"
#include "sim_server.h"
#include "truth.h"

int api_request_add(struct sim_server *srv, struct sim_req *r)
{
	if (srv->nlive == srv->live_cap) {
		size_t cap = srv->live_cap ? srv->live_cap * 2 : 64;
		struct sim_req **nl = realloc(srv->live, cap * sizeof *nl);
		if (!nl)
			return -1;
		srv->live = nl;
		srv->live_cap = cap;
	}
	r->live_idx = srv->nlive;
	srv->live[srv->nlive++] = r;
	return 0;
}

/* The dirty list is a FIFO (dirty[dirty_head .. ndirty)): every request
 * with new tokens is served in turn, so under overload none starves while
 * the ones the output pass reached first get served again. */
static void dirty_remove(struct sim_server *srv, struct sim_req *r)
{
	if (!r->dirty)
		return;
	struct sim_req *last = srv->dirty[--srv->ndirty];
	srv->dirty[r->dirty_idx] = last;
	last->dirty_idx = r->dirty_idx;
	r->dirty = 0;
	if (srv->dirty_head > srv->ndirty)
		srv->dirty_head = srv->ndirty;
}

void api_mark_dirty(struct sim_server *srv, struct sim_req *r)
{
	if (r->dirty)
		return;
	if (srv->ndirty == srv->dirty_cap && srv->dirty_head) {
		/* drop the served prefix */
		size_t n = srv->ndirty - srv->dirty_head;
		memmove(srv->dirty, srv->dirty + srv->dirty_head, n * sizeof *srv->dirty);
		for (size_t i = 0; i < n; i++)
			srv->dirty[i]->dirty_idx = i;
		srv->ndirty = n;
		srv->dirty_head = 0;
	}
	if (srv->ndirty == srv->dirty_cap) {
		size_t cap = srv->dirty_cap ? srv->dirty_cap * 2 : 64;
		struct sim_req **nd = realloc(srv->dirty, cap * sizeof *nd);
		if (!nd)
			return; /* the request is flushed when it next gets a token */
		srv->dirty = nd;
		srv->dirty_cap = cap;
	}
	r->dirty = 1;
	r->dirty_idx = srv->ndirty;
	srv->dirty[srv->ndirty++] = r;
}

static void pend_push(struct sim_req *r, uint64_t model_ns)
{
	if (r->pend_head && r->pend_head == r->pend_len)
		r->pend_head = r->pend_len = 0;
	if (r->pend_len == r->pend_cap) {
		if (r->pend_head) {
			memmove(r->pend_ns, r->pend_ns + r->pend_head,
				(r->pend_len - r->pend_head) * sizeof *r->pend_ns);
			r->pend_len -= r->pend_head;
			r->pend_head = 0;
		}
		if (r->pend_len == r->pend_cap) {
			size_t cap = r->pend_cap ? r->pend_cap * 2 : 16;
			uint64_t *np = realloc(r->pend_ns, cap * sizeof *np);
			if (!np)
				return; /* the token still counts; only its truth time is lost */
			r->pend_ns = np;
			r->pend_cap = cap;
		}
	}
	r->pend_ns[r->pend_len++] = model_ns;
}

/* engine hook: r has a new token, produced at model_ns */
static void on_token(void *ctx, struct sim_req *r, uint64_t model_ns)
{
	pend_push(r, model_ns);
	api_mark_dirty(ctx, r);
}

/* engine hook: run the output pass (stream_flush, behind flush_ev) now if
 * a request finished or --merge steps have passed since the last one */
static void on_stepped(void *ctx, int finished, unsigned steps)
{
	struct sim_server *srv = ctx;
	if (srv->dirty_head == srv->ndirty)
		return;
	srv->steps_since_flush += steps;
	if (finished || srv->cfg.merge_steps <= 1 ||
	    srv->steps_since_flush >= (uint64_t)srv->cfg.merge_steps) {
		srv->steps_since_flush = 0;
		event_active(srv->flush_ev, EV_WRITE, 0);
	}
}

/* engine hook: r waited in the queue from its arrival to model_ns (the
 * queue histograms; SGLang and TGI observe it when the batch takes the
 * request, vLLM when the request ends) */
static void on_admitted(void *ctx, struct sim_req *r, uint64_t model_ns)
{
	struct sim_server *srv = ctx;
	metrics_admitted(&srv->m, r->arrival_ns, model_ns);
}

void api_request_hook_engine(struct sim_server *srv)
{
	struct engine_hooks h = {on_token, on_stepped, srv, on_admitted};
	engine_set_hooks(&srv->eng, &h);
}

void req_free(struct sim_req *r)
{
	struct sim_server *srv;
	if (!r)
		return;
	srv = r->srv;
	dirty_remove(srv, r);
	if (r->state == REQ_RUNNING || r->state == REQ_WAITING)
		engine_abort(&srv->eng, r);
	if (srv->nlive && srv->live[r->live_idx] == r) {
		struct sim_req *last = srv->live[--srv->nlive];
		srv->live[r->live_idx] = last;
		last->live_idx = r->live_idx;
	}
	if (r->timer)
		event_free(r->timer);
	free(r->block_hash);
	free(r->pend_ns);
	free(r);
}

static void on_close(struct evhttp_connection *evcon, void *arg)
{
	struct sim_req *r = arg;
	struct sim_server *srv = r->srv;
	(void)evcon;
	if (srv->shutting_down || !r->http)
		return;
	/* A request still being answered is detached from its connection by
	 * libevent and left to us; one still listed is freed by libevent. */
	if (!evhttp_request_get_connection(r->http))
		evhttp_request_free(r->http);
	r->http = NULL;
	truth_end(&srv->truth, r, sim_now_ns(), OUT_CLIENT_GONE, 0);
	srv->m.requests_err++;
	req_free(r);
}

void api_request_attach(struct sim_req *r, struct evhttp_request *http)
{
	r->http = http;
	evhttp_connection_set_closecb(evhttp_request_get_connection(http), on_close, r);
}

void api_finish_http(struct sim_req *r)
{
	struct evhttp_connection *evcon;
	if (!r->http)
		return;
	evcon = evhttp_request_get_connection(r->http);
	if (evcon)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	r->http = NULL;
}

/* RST instead of FIN: linger 0, then free the connection. */
void api_reset_connection(struct sim_req *r)
{
	struct evhttp_connection *evcon;
	if (!r->http)
		return;
	evcon = evhttp_request_get_connection(r->http);
	r->http = NULL;
	if (!evcon)
		return;
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	struct bufferevent *bev = evhttp_connection_get_bufferevent(evcon);
	evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
	if (fd >= 0) {
		struct linger lg = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	evhttp_connection_free(evcon);
}

/* Requests libevent has detached from their connections are ours to free;
 * the others go with their connections in evhttp_free. */
void api_request_detach_all(struct sim_server *srv, uint64_t now)
{
	for (size_t i = 0; i < srv->nlive; i++) {
		struct sim_req *r = srv->live[i];
		truth_end(&srv->truth, r, now, OUT_SHUTDOWN, 0);
		if (r->http && !evhttp_request_get_connection(r->http))
			evhttp_request_free(r->http);
		else if (r->http)
			evhttp_connection_set_closecb(evhttp_request_get_connection(r->http), NULL,
						      NULL);
		r->http = NULL;
	}
}

void api_request_free_all(struct sim_server *srv)
{
	while (srv->nlive)
		req_free(srv->live[srv->nlive - 1]);
}

/* ---- llama-server's silent close ---- */

#define SILENT_CLOSE_IDLE_MS 20

struct closing {
	struct sim_server *srv;
	struct evhttp_connection *evcon;
	struct event *timer;
	int dropped;            /* a request came: it dies unanswered */
	struct closing *next;
};

static void closing_unlink(struct closing *c)
{
	for (struct closing **p = &c->srv->closing; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->timer)
		event_free(c->timer);
	free(c);
}

/* libevent frees the connection first (the client closed it, or the
 * server stops): forget it. */
static void on_closing_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	closing_unlink(arg);
}

static void closing_arm(struct closing *c, int ms)
{
	struct timeval tv = {0, ms * 1000};
	evtimer_add(c->timer, &tv);
}

static void on_closing_timer(evutil_socket_t fd, short what, void *arg)
{
	struct closing *c = arg;
	struct evhttp_connection *evcon = c->evcon;
	struct bufferevent *bev = evhttp_connection_get_bufferevent(evcon);
	(void)fd;
	(void)what;
	/* the reply leaves whole first */
	if (bev && evbuffer_get_length(bufferevent_get_output(bev))) {
		closing_arm(c, 1);
		return;
	}
	if (c->dropped && bev && bufferevent_getfd(bev) >= 0) {
		/* closed with the client's request unread: the kernel resets */
		struct linger lg = {1, 0};
		setsockopt(bufferevent_getfd(bev), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	c->srv->silent_closes++;
	c->srv->silent_dropped += (uint64_t)c->dropped;
	closing_unlink(c);
	evhttp_connection_free(evcon);
}

void api_silent_close(struct sim_server *srv, struct evhttp_connection *evcon)
{
	struct closing *c = calloc(1, sizeof *c);

	if (!c)
		return;
	c->srv = srv;
	c->evcon = evcon;
	c->timer = evtimer_new(srv->base, on_closing_timer, c);
	if (!c->timer) {
		free(c);
		return;
	}
	c->next = srv->closing;
	srv->closing = c;
	evhttp_connection_set_closecb(evcon, on_closing_gone, c);
	closing_arm(c, SILENT_CLOSE_IDLE_MS);
}

int api_silent_close_drop(struct sim_server *srv, struct evhttp_request *http)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(http);

	for (struct closing *c = srv->closing; c; c = c->next)
		if (c->evcon == evcon) {
			/* freed from the timer, not here: libevent is still
			 * inside this connection's read callback */
			c->dropped = 1;
			evtimer_del(c->timer);
			closing_arm(c, 0);
			return 1;
		}
	return 0;
}
