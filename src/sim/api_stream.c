/* Response bodies: SSE chunks as vLLM, SGLang and llama-server write them,
 * non-streamed JSON, the mid-stream faults, and the output pass that sends
 * them (docs/sim.md, "API"; docs/engines.md for how each server streams). */
#include "api_stream.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "api_reply.h"
#include "api_request.h"
#include "engine.h"
#include "faults.h"
#include "metrics.h"
#include "sim_clock.h"
#include "sim_config.h"
#include "sim_req.h"
#include "sim_server.h"
#include "tokenizer.h"
#include "truth.h"

#define ADD_LIT(b, s) evbuffer_add((b), (s), sizeof(s) - 1)

static const char *finish_reason(const struct sim_req *r)
{
	return r->target_len >= r->max_tokens || r->slot_full ? "length" : "stop";
}

static void add_head(struct sim_server *srv, struct sim_req *r, struct evbuffer *b)
{
	int chat = r->api == API_CHAT;
	evbuffer_add_printf(b, "{\"id\":\"%s-%llu\",\"object\":\"%s\",\"created\":%lld,"
			    "\"model\":\"%s\",", chat ? "chatcmpl" : "cmpl",
			    (unsigned long long)r->id,
			    chat ? (r->stream ? "chat.completion.chunk" : "chat.completion")
				 : "text_completion",
			    (long long)r->created, srv->cfg.model);
}

static void add_usage(struct sim_req *r, struct evbuffer *b, int64_t completion)
{
	evbuffer_add_printf(b, "\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":%lld,"
			    "\"completion_tokens\":%lld}", (long long)r->prompt_tokens,
			    (long long)(r->prompt_tokens + completion), (long long)completion);
}

static void add_words(struct sim_req *r, struct evbuffer *b, int64_t first, int64_t n)
{
	for (int64_t i = first; i < first + n; i++) {
		const char *w = sim_word(r->text_seed, i, NULL);
		ADD_LIT(b, " ");
		evbuffer_add(b, w, strlen(w));
	}
}

static void add_ids(struct sim_req *r, struct evbuffer *b, int64_t first, int64_t n)
{
	ADD_LIT(b, ",\"token_ids\":[");
	for (int64_t i = first; i < first + n; i++) {
		int64_t id;
		sim_word(r->text_seed, i, &id);
		evbuffer_add_printf(b, i > first ? ",%lld" : "%lld", (long long)id);
	}
	ADD_LIT(b, "]");
}

static void add_timings(struct sim_req *r, struct evbuffer *b, int64_t predicted, uint64_t now)
{
	double ms = (double)(now - r->arrival_ns) / 1e6;
	evbuffer_add_printf(b, ",\"timings\":{\"prompt_n\":%lld,\"predicted_n\":%lld,"
			    "\"predicted_ms\":%.3f}", (long long)(r->prompt_tokens - r->cached_tokens),
			    (long long)predicted, ms);
}

/* ---- the hot path: one chunk built in a flat buffer, written at once ---- */

static int ob_need(struct sim_server *srv, size_t n)
{
	if (srv->oblen + n <= srv->obcap)
		return 0;
	size_t cap = srv->obcap ? srv->obcap : 4096;
	while (cap < srv->oblen + n)
		cap *= 2;
	char *nb = realloc(srv->ob, cap);
	if (!nb)
		return -1;
	srv->ob = nb;
	srv->obcap = cap;
	return 0;
}

static void ob_put(struct sim_server *srv, const char *p, size_t n)
{
	if (ob_need(srv, n))
		return;
	memcpy(srv->ob + srv->oblen, p, n);
	srv->oblen += n;
}

#define OB_LIT(srv, s) ob_put((srv), (s), sizeof(s) - 1)

static void ob_u64(struct sim_server *srv, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ob_put(srv, tmp + i, sizeof tmp - i);
}

static void ob_str(struct sim_server *srv, const char *s)
{
	ob_put(srv, s, strlen(s));
}

static void ob_head(struct sim_server *srv, const struct sim_req *r)
{
	int chat = r->api == API_CHAT;
	OB_LIT(srv, "data: {\"id\":\"");
	if (chat)
		OB_LIT(srv, "chatcmpl-");
	else
		OB_LIT(srv, "cmpl-");
	ob_u64(srv, r->id);
	if (chat)
		OB_LIT(srv, "\",\"object\":\"chat.completion.chunk\",\"created\":");
	else
		OB_LIT(srv, "\",\"object\":\"text_completion\",\"created\":");
	ob_u64(srv, (uint64_t)r->created);
	OB_LIT(srv, ",\"model\":\"");
	ob_str(srv, srv->cfg.model);
	OB_LIT(srv, "\",");
}

static void ob_usage(struct sim_server *srv, const struct sim_req *r, int64_t completion)
{
	OB_LIT(srv, "\"usage\":{\"prompt_tokens\":");
	ob_u64(srv, (uint64_t)r->prompt_tokens);
	OB_LIT(srv, ",\"total_tokens\":");
	ob_u64(srv, (uint64_t)(r->prompt_tokens + completion));
	OB_LIT(srv, ",\"completion_tokens\":");
	ob_u64(srv, (uint64_t)completion);
	OB_LIT(srv, "}");
}

/* Writes straight to the socket when libevent has nothing queued for it
 * (the common case: no epoll_ctl, no extra loop turn); whatever the socket
 * does not take, and everything while something is queued, goes through
 * the bufferevent so the order holds. */
static void send_bytes(struct sim_req *r, const char *data, size_t len)
{
	struct evhttp_connection *evcon;
	struct bufferevent *bev;
	char head[24];
	size_t hl = 0;

	if (!r->http || !len)
		return;
	evcon = evhttp_request_get_connection(r->http);
	bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	if (!bev)
		return;
	if (r->chunked) {
		static const char hex[] = "0123456789abcdef";
		char tmp[20];
		size_t i = sizeof tmp, v = len;
		do {
			tmp[--i] = hex[v & 15];
			v >>= 4;
		} while (v);
		hl = sizeof tmp - i;
		memcpy(head, tmp + i, hl);
		head[hl++] = '\r';
		head[hl++] = '\n';
	}
	struct iovec iov[3] = {{head, hl}, {(void *)(uintptr_t)data, len},
			       {(void *)(uintptr_t)"\r\n", r->chunked ? 2u : 0u}};
	size_t total = hl + len + iov[2].iov_len, done = 0;
	evutil_socket_t fd = bufferevent_getfd(bev);
	if (fd >= 0 && !evbuffer_get_length(bufferevent_get_output(bev))) {
		ssize_t w = writev(fd, iov, 3);
		done = w > 0 ? (size_t)w : 0;
	}
	if (done == total)
		return;
	for (int i = 0; i < 3; i++) {
		if (done >= iov[i].iov_len) {
			done -= iov[i].iov_len;
			continue;
		}
		bufferevent_write(bev, (const char *)iov[i].iov_base + done, iov[i].iov_len - done);
		done = 0;
	}
}

static void send_chunk(struct sim_req *r, struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);
	if (len)
		send_bytes(r, (const char *)evbuffer_pullup(b, -1), len);
	evbuffer_drain(b, len);
}

/* TGI writes one event per token, never merged (its router sends each
 * token as the engine yields it), "data:" without a space, an empty id and
 * a system_fingerprint "VERSION-native".  Completions: finish_reason ""
 * until the last token, whose event carries the finish reason ("length",
 * "eos_token") and usage; chat: role and content in every delta, usage in a
 * chunk of its own at the end when asked (finish_stream). */
static void ob_tgi(struct sim_server *srv, struct sim_req *r, int64_t n, int last)
{
	int chat = r->api == API_CHAT;
	for (int64_t i = r->emitted; i < r->emitted + n; i++) {
		int fin = last && i == r->emitted + n - 1;
		const char *w = sim_word(r->text_seed, i, NULL);
		if (chat)
			OB_LIT(srv, "data:{\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":");
		else
			OB_LIT(srv, "data:{\"id\":\"\",\"created\":");
		ob_u64(srv, (uint64_t)r->created);
		OB_LIT(srv, ",\"model\":\"");
		ob_str(srv, srv->cfg.model);
		OB_LIT(srv, "\",\"system_fingerprint\":\"");
		ob_str(srv, srv->cfg.server_version);
		OB_LIT(srv, "-native\",\"choices\":[{");
		if (chat) {
			OB_LIT(srv, "\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\" ");
			ob_str(srv, w);
			OB_LIT(srv, "\"},\"logprobs\":null,\"finish_reason\":");
			if (fin) {
				OB_LIT(srv, "\"");
				ob_str(srv, finish_reason(r));
				OB_LIT(srv, "\"}],\"usage\":null}\n\n");
			} else {
				OB_LIT(srv, "null}],\"usage\":null}\n\n");
			}
			continue;
		}
		OB_LIT(srv, "\"finish_reason\":\"");
		if (fin)
			ob_str(srv, r->target_len >= r->max_tokens ? "length" : "eos_token");
		OB_LIT(srv, "\",\"index\":0,\"logprobs\":null,\"text\":\" ");
		ob_str(srv, w);
		OB_LIT(srv, "\"}]");
		if (fin) {
			OB_LIT(srv, ",");
			ob_usage(srv, r, r->emitted + n);
		}
		OB_LIT(srv, "}\n\n");
	}
}

/* One SSE event with tokens [emitted, emitted + n). */
static void emit_content(struct sim_server *srv, struct sim_req *r, int64_t n, int last,
			 uint64_t now)
{
	int chat = r->api == API_CHAT, lcpp = srv->cfg.flavor == FLAVOR_LLAMACPP;
	/* SGLang writes every field of its chunk model, unset ones as null */
	int sgl = srv->cfg.flavor == FLAVOR_SGLANG;
	/* llama-server reports finish_reason in a chunk of its own, with usage */
	const char *fr = last && !lcpp ? finish_reason(r) : NULL;

	srv->oblen = 0;
	if (srv->cfg.flavor == FLAVOR_TGI) {
		ob_tgi(srv, r, n, last);
		goto send;
	}
	if (chat && !r->role_sent) {
		/* sent right before the first token, as vLLM does */
		ob_head(srv, r);
		OB_LIT(srv, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
			    "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]");
		if (r->continuous_usage) {
			OB_LIT(srv, ",");
			ob_usage(srv, r, 0);
		}
		OB_LIT(srv, "}\n\n");
		r->role_sent = 1;
	}
	ob_head(srv, r);
	if (chat && srv->cfg.reasoning > 0) {
		/* --reasoning: tokens [0, N) go in the reasoning member, the rest
		 * in content; a chunk that spans the switch carries both */
		int64_t rend = r->emitted + n < srv->cfg.reasoning ? r->emitted + n : srv->cfg.reasoning;
		OB_LIT(srv, "\"choices\":[{\"index\":0,\"delta\":{");
		if (sgl)
			OB_LIT(srv, "\"role\":null,\"tool_calls\":null,");
		if (r->emitted < rend) {
			OB_LIT(srv, "\"");
			ob_str(srv, srv->cfg.reasoning_field);
			OB_LIT(srv, "\":\"");
			for (int64_t i = r->emitted; i < rend; i++) {
				OB_LIT(srv, " ");
				ob_str(srv, sim_word(r->text_seed, i, NULL));
			}
			OB_LIT(srv, "\"");
		} else {
			OB_LIT(srv, "\"");
			ob_str(srv, srv->cfg.reasoning_field);
			OB_LIT(srv, "\":null");
		}
		OB_LIT(srv, ",\"content\":");
		if (r->emitted + n > rend) {
			OB_LIT(srv, "\"");
			for (int64_t i = rend > r->emitted ? rend : r->emitted; i < r->emitted + n; i++) {
				OB_LIT(srv, " ");
				ob_str(srv, sim_word(r->text_seed, i, NULL));
			}
			OB_LIT(srv, "\"");
		} else {
			OB_LIT(srv, "null");
		}
		OB_LIT(srv, "},\"logprobs\":null,\"finish_reason\":");
		goto finish;
	}
	if (chat && sgl)
		OB_LIT(srv, "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,"
			    "\"reasoning_content\":null,\"tool_calls\":null,\"content\":\"");
	else if (chat)
		OB_LIT(srv, "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"");
	else
		OB_LIT(srv, "\"choices\":[{\"index\":0,\"text\":\"");
	for (int64_t i = r->emitted; i < r->emitted + n; i++) {
		OB_LIT(srv, " ");
		ob_str(srv, sim_word(r->text_seed, i, NULL));
	}
	if (chat)
		OB_LIT(srv, "\"},\"logprobs\":null,\"finish_reason\":");
	else
		OB_LIT(srv, "\",\"logprobs\":null,\"finish_reason\":");
finish:
	if (fr) {
		OB_LIT(srv, "\"");
		ob_str(srv, fr);
		OB_LIT(srv, "\"");
	} else {
		OB_LIT(srv, "null");
	}
	if (!chat)
		OB_LIT(srv, ",\"stop_reason\":null");
	if (sgl)
		OB_LIT(srv, ",\"matched_stop\":null");
	if (r->return_token_ids) {
		OB_LIT(srv, ",\"token_ids\":[");
		for (int64_t i = r->emitted; i < r->emitted + n; i++) {
			int64_t id;
			sim_word(r->text_seed, i, &id);
			if (i > r->emitted)
				OB_LIT(srv, ",");
			ob_u64(srv, (uint64_t)id);
		}
		OB_LIT(srv, "]");
	}
	OB_LIT(srv, "}]");
	if (r->continuous_usage) {
		OB_LIT(srv, ",");
		ob_usage(srv, r, r->emitted + n);
	} else if (sgl) {
		OB_LIT(srv, ",\"usage\":null");
	}
	if (lcpp && r->timings_per_token) {
		struct evbuffer *b = srv->scratch;
		add_timings(r, b, r->emitted + n, now);
		size_t tl = evbuffer_get_length(b);
		ob_put(srv, (const char *)evbuffer_pullup(b, -1), tl);
		evbuffer_drain(b, tl);
	}
	OB_LIT(srv, "}\n\n");
send:
	send_bytes(r, srv->ob, srv->oblen);

	/* ground truth and metrics */
	const uint64_t *t = r->pend_ns + r->pend_head;
	size_t have = r->pend_len - r->pend_head;
	size_t k = (size_t)n < have ? (size_t)n : have;
	truth_chunk(&srv->truth, r->id, now, r->emitted, t, k);
	if (!r->emitted)
		metrics_observe(&srv->m.ttft, (double)(now - r->arrival_ns) / 1e9);
	for (size_t i = 0; i < k; i++) {
		if (r->last_model_ns)
			metrics_observe(&srv->m.itl, (double)(t[i] - r->last_model_ns) / 1e9);
		r->last_model_ns = t[i];
	}
	r->pend_head += k;
	r->emitted += n;
	srv->m.chunks++;
	srv->m.emitted_tokens += (uint64_t)n;
}

static void end_reply(struct sim_server *srv, struct sim_req *r, enum sim_outcome out,
		      int status)
{
	struct evhttp_request *http = r->http;
	uint64_t now = sim_now_ns();
	int silent = http && r->silent_close;
	struct evhttp_connection *evcon = silent ? evhttp_request_get_connection(http) : NULL;
	api_finish_http(r);
	/* armed before the reply ends: the close callback it sets covers a
	 * connection libevent frees at once */
	if (evcon)
		api_silent_close(srv, evcon);
	if (http)
		evhttp_send_reply_end(http);
	metrics_observe(&srv->m.e2e, (double)(now - r->arrival_ns) / 1e9);
	metrics_ended(&srv->m, r->arrival_ns, r->admit_ns, r->first_token_ns);
	if (out == OUT_FINISHED) {
		srv->m.requests_ok++;
		metrics_finished(&srv->m, (uint64_t)r->emitted, r->first_token_ns, r->last_token_ns);
	}
	else
		srv->m.requests_err++;
	truth_end(&srv->truth, r, now, out, status);
	req_free(r);
}

static void finish_stream(struct sim_server *srv, struct sim_req *r)
{
	struct evbuffer *b = srv->scratch;
	int lcpp = srv->cfg.flavor == FLAVOR_LLAMACPP;

	if (r->fault.kind == FAULT_NO_DONE) {
		end_reply(srv, r, OUT_FAULT_NO_DONE, 200);
		return;
	}
	if (srv->cfg.flavor == FLAVOR_TGI) {
		/* completions: usage came with the last token; chat: its own
		 * chunk when asked */
		if (r->api == API_CHAT && r->include_usage) {
			evbuffer_add_printf(b, "data:{\"object\":\"chat.completion.chunk\",\"id\":\"\","
					    "\"created\":%lld,\"model\":\"%s\",\"system_fingerprint\":"
					    "\"%s-native\",\"choices\":[],", (long long)r->created,
					    srv->cfg.model, srv->cfg.server_version);
			add_usage(r, b, r->emitted);
			ADD_LIT(b, "}\n\n");
		}
		ADD_LIT(b, "data:[DONE]\n\n");
		send_chunk(r, b);
		end_reply(srv, r, OUT_FINISHED, 200);
		return;
	}
	if (lcpp) {
		ADD_LIT(b, "data: ");
		add_head(srv, r, b);
		if (r->api == API_CHAT)
			evbuffer_add_printf(b, "\"choices\":[{\"index\":0,\"delta\":{},"
					    "\"finish_reason\":\"%s\"}],", finish_reason(r));
		else
			evbuffer_add_printf(b, "\"choices\":[{\"index\":0,\"text\":\"\","
					    "\"logprobs\":null,\"finish_reason\":\"%s\"}],",
					    finish_reason(r));
		add_usage(r, b, r->emitted);
		add_timings(r, b, r->emitted, sim_now_ns());
		ADD_LIT(b, "}\n\n");
	} else if (r->include_usage) {
		ADD_LIT(b, "data: ");
		add_head(srv, r, b);
		ADD_LIT(b, "\"choices\":[],");
		add_usage(r, b, r->emitted);
		ADD_LIT(b, "}\n\n");
	}
	ADD_LIT(b, "data: [DONE]\n\n");
	send_chunk(r, b);
	end_reply(srv, r, OUT_FINISHED, 200);
}

static void on_reset(evutil_socket_t fd, short what, void *arg)
{
	struct sim_req *r = arg;
	struct sim_server *srv = r->srv;
	(void)fd;
	(void)what;
	api_reset_connection(r);
	srv->m.requests_err++;
	truth_end(&srv->truth, r, sim_now_ns(), OUT_FAULT_RESET, 200);
	req_free(r);
}

static void on_stall_end(evutil_socket_t fd, short what, void *arg)
{
	struct sim_req *r = arg;
	(void)fd;
	(void)what;
	r->stall_until_ns = 0;
	api_mark_dirty(r->srv, r);
	event_active(r->srv->flush_ev, EV_WRITE, 0);
}

static int arm(struct sim_req *r, double seconds, event_callback_fn cb)
{
	struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - floor(seconds)) * 1e6)};
	if (r->timer)
		event_free(r->timer);
	r->timer = evtimer_new(r->srv->base, cb, r);
	return r->timer ? evtimer_add(r->timer, &tv) : -1;
}

/* Returns 1 when r has been freed. */
static int fire_fault(struct sim_server *srv, struct sim_req *r, uint64_t now)
{
	struct evbuffer *b = srv->scratch;
	r->fault_fired = 1;
	switch (r->fault.kind) {
	case FAULT_RESET:
		/* a moment for the chunks already queued to reach the client */
		r->reset_pending = 1;
		engine_abort(&srv->eng, r);
		if (arm(r, 0.02, on_reset)) {
			on_reset(-1, 0, r);
			return 1;
		}
		return 0;
	case FAULT_STALL:
		r->stall_until_ns = now + (uint64_t)(r->fault.seconds * 1e9);
		if (arm(r, r->fault.seconds, on_stall_end))
			r->stall_until_ns = 0;
		return 0;
	case FAULT_MALFORMED:
		evbuffer_add_printf(b, "data: {\"id\":\"%s-%llu\",\"choices\":[{\"index\":0,"
				    "\"text\":\"trunc\n\n", r->api == API_CHAT ? "chatcmpl" : "cmpl",
				    (unsigned long long)r->id);
		send_chunk(r, b);
		return 0;
	case FAULT_ERROR_EVENT:
		engine_abort(&srv->eng, r);
		evbuffer_add_printf(b, "data: {\"error\":{\"message\":\"simulated engine error on "
				    "request %llu\",\"type\":\"InternalServerError\",\"param\":null,"
				    "\"code\":500}}\n\ndata: [DONE]\n\n", (unsigned long long)r->id);
		send_chunk(r, b);
		end_reply(srv, r, OUT_FAULT_ERROR, 200);
		return 1;
	default:
		return 0;
	}
}

static int is_mid_stream(enum fault_kind k)
{
	return k == FAULT_RESET || k == FAULT_STALL || k == FAULT_MALFORMED ||
	       k == FAULT_ERROR_EVENT;
}

static void emit_whole(struct sim_server *srv, struct sim_req *r, uint64_t now)
{
	struct evbuffer *b = srv->scratch;
	int64_t n = r->generated;
	const uint64_t *t = r->pend_ns + r->pend_head;
	size_t k = r->pend_len - r->pend_head;

	if (is_mid_stream(r->fault.kind) && !r->fault_fired) {
		if (r->fault.kind == FAULT_STALL) {
			r->fault_fired = 1;
			r->stall_until_ns = now + (uint64_t)(r->fault.seconds * 1e9);
			if (!arm(r, r->fault.seconds, on_stall_end))
				return;
		} else if (r->fault.kind == FAULT_RESET) {
			fire_fault(srv, r, now);
			return;
		} else if (r->fault.kind == FAULT_ERROR_EVENT) {
			api_reject(r->http, 500, "InternalServerError", NULL,
				   "simulated engine error on request %llu", (unsigned long long)r->id);
			api_finish_http(r);
			srv->m.requests_err++;
			truth_end(&srv->truth, r, now, OUT_FAULT_ERROR, 500);
			req_free(r);
			return;
		}
	}
	truth_chunk(&srv->truth, r->id, now, 0, t, k);
	if (k)
		metrics_observe(&srv->m.ttft, (double)(t[0] - r->arrival_ns) / 1e9);
	for (size_t i = 1; i < k; i++)
		metrics_observe(&srv->m.itl, (double)(t[i] - t[i - 1]) / 1e9);
	r->pend_head = r->pend_len;
	r->emitted = n;

	add_head(srv, r, b);
	if (r->api == API_CHAT) {
		ADD_LIT(b, "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
			   "\"content\":\"");
		add_words(r, b, 0, n);
		evbuffer_add_printf(b, "\"},\"logprobs\":null,\"finish_reason\":\"%s\"",
				    finish_reason(r));
	} else {
		ADD_LIT(b, "\"choices\":[{\"index\":0,\"text\":\"");
		add_words(r, b, 0, n);
		evbuffer_add_printf(b, "\",\"logprobs\":null,\"finish_reason\":\"%s\","
				    "\"stop_reason\":null", finish_reason(r));
	}
	if (r->return_token_ids)
		add_ids(r, b, 0, n);
	ADD_LIT(b, "}],");
	add_usage(r, b, n);
	if (r->fault.kind == FAULT_MALFORMED)
		ADD_LIT(b, ",\"truncated\":"); /* the body stops mid-object */
	else
		ADD_LIT(b, "}");
	struct evhttp_request *http = r->http;
	if (http) {
		api_add_headers(http, "application/json");
		api_finish_http(r);
		evhttp_send_reply(http, 200, "OK", b);
	}
	evbuffer_drain(b, evbuffer_get_length(b));
	metrics_observe(&srv->m.e2e, (double)(now - r->arrival_ns) / 1e9);
	metrics_ended(&srv->m, r->arrival_ns, r->admit_ns, r->first_token_ns);
	srv->m.requests_ok++;
	metrics_finished(&srv->m, (uint64_t)n, r->first_token_ns, r->last_token_ns);
	srv->m.chunks++;
	truth_end(&srv->truth, r, now, OUT_FINISHED, 200);
	req_free(r);
}

/* Sends what r has produced since the last pass (as far as --stream-interval
 * and its fault allow), and ends r when it is done. */
static void stream_emit(struct sim_server *srv, struct sim_req *r)
{
	uint64_t now = sim_now_ns();
	int done = r->state == REQ_FINISHED;

	if (!r->http || r->reset_pending || (r->stall_until_ns && r->stall_until_ns > now))
		return;
	if (!r->stream) {
		if (done)
			emit_whole(srv, r, now);
		return;
	}
	int64_t pending = r->generated - r->emitted;
	int64_t n = pending;
	int mid = is_mid_stream(r->fault.kind) && !r->fault_fired;
	int cut = 0;
	if (mid && r->emitted + n >= r->fault.after) {
		n = r->fault.after - r->emitted;
		if (n < 0)
			n = 0;
		cut = 1;
	}
	/* --stream-interval: the first token at once, then every K tokens */
	if (!cut && !done && r->emitted > 0 && n < srv->cfg.stream_interval)
		n = 0;
	if (n > 0)
		emit_content(srv, r, n, done && n == pending, now);
	if (cut && fire_fault(srv, r, now))
		return;
	if (cut && r->fault.kind != FAULT_MALFORMED)
		return; /* reset or stall: nothing more now */
	if (cut && r->generated > r->emitted) {
		/* malformed event sent; the rest goes out as usual */
		stream_emit(srv, r);
		return;
	}
	if (done && r->emitted == r->generated)
		finish_stream(srv, r);
}

/* Whether the output pass is more than a step behind the engine: the
 * oldest token waiting at the head of the queue is older than one step. */
static int behind(const struct sim_server *srv, uint64_t now)
{
	const struct sim_req *r = srv->dirty[srv->dirty_head];
	uint64_t step = srv->eng.step_end_ns - srv->eng.step_start_ns;
	if (r->pend_head >= r->pend_len)
		return 0;
	return now - r->pend_ns[r->pend_head] > step;
}

/* The pass yields after ~25 us so that a due engine step is never held up
 * by a long flush. */
void stream_flush(struct sim_server *srv)
{
	uint64_t start = sim_now_ns();
	unsigned k = 0;
	while (srv->dirty_head < srv->ndirty) {
		struct sim_req *r = srv->dirty[srv->dirty_head++];
		r->dirty = 0;
		stream_emit(srv, r);
		uint64_t now;
		if ((++k & 7) == 0 && (now = sim_now_ns()) - start > 25000) {
			if (srv->dirty_head < srv->ndirty) {
				if (behind(srv, now)) {
					/* Overloaded: give the core back for a moment
					 * before the next slice.  Chunks merge meanwhile,
					 * as on a real server, and a simulator that sleeps
					 * now and then is woken on time by the kernel,
					 * where a busy one waits for its turn. */
					struct timeval pause = {0, 25};
					/* relative to now, not to the loop's cached
					 * time, which is a whole slice old */
					event_base_update_cache_time(srv->base);
					evtimer_add(srv->flush_pause_ev, &pause);
				} else {
					event_active(srv->flush_ev, EV_WRITE, 0);
				}
			}
			return;
		}
	}
	srv->dirty_head = srv->ndirty = 0;
}
