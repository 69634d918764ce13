/* The HTTP side: routes, authentication, request parsing and the lifetime of
 * a request from arrival to its last byte (docs/sim.md, "API"). */
#include "api_parse.h"

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (64u << 20)

/* ---- request bookkeeping ---- */

static int live_add(struct sim_server *srv, struct sim_req *r)
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

void req_pend_push(struct sim_req *r, uint64_t model_ns)
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

/* Frees the request; its HTTP side must already be finished or detached. */
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

/* Ends the HTTP side of r normally (the last byte has been queued). */
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

/* When the first byte of the request now being read reached each socket:
 * the model's clock starts there, so a large body's upload and parse do not
 * add to TTFT (a client measures from its send). */
#define MAX_FD_TRACKED 65536
static uint64_t first_byte_ns[MAX_FD_TRACKED];

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct bufferevent *bev = arg;
	evutil_socket_t fd = bufferevent_getfd(bev);
	(void)buf;
	if (fd >= 0 && fd < MAX_FD_TRACKED && info->n_added && !info->orig_size &&
	    !first_byte_ns[fd])
		first_byte_ns[fd] = sim_now_ns();
}

static uint64_t take_first_byte(struct evhttp_request *http, uint64_t now)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(http);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
	uint64_t t = now;
	if (fd >= 0 && fd < MAX_FD_TRACKED) {
		/* a stamp left by a connection that died mid-request, its fd since
		 * reused, is old: ignore stamps older than 30 s */
		if (first_byte_ns[fd] && first_byte_ns[fd] <= now &&
		    now - first_byte_ns[fd] < 30000000000ull)
			t = first_byte_ns[fd];
		first_byte_ns[fd] = 0;
	}
	return t;
}

/* ---- small reply helpers ---- */

static void add_common_headers(struct evhttp_request *http, const char *ctype)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(http);
	evhttp_add_header(h, "Content-Type", ctype);
	const char *rid = evhttp_find_header(evhttp_request_get_input_headers(http),
					     "X-Request-Id");
	if (rid)
		evhttp_add_header(h, "X-Request-Id", rid);
}

static void reply_text(struct evhttp_request *http, int status, const char *ctype,
		       const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	add_common_headers(http, ctype);
	evbuffer_add(b, body, len);
	evhttp_send_reply(http, status, status == 200 ? "OK" : "Error", b);
	evbuffer_free(b);
}

static void reply_json(struct evhttp_request *http, int status, cJSON *obj)
{
	char *s = cJSON_PrintUnformatted(obj);
	if (!s) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	reply_text(http, status, "application/json", s, strlen(s));
	cJSON_free(s);
}

static const char *status_reason(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

/* OpenAI-style error object: {"error":{"message","type","param","code"}}. */
void stream_reject(struct sim_server *srv, struct evhttp_request *http, int status,
		   const char *type, const char *param, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	cJSON *root = cJSON_CreateObject(), *e = cJSON_CreateObject();
	(void)srv;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(e, "message", msg);
	cJSON_AddStringToObject(e, "type", type);
	if (param)
		cJSON_AddStringToObject(e, "param", param);
	else
		cJSON_AddNullToObject(e, "param");
	cJSON_AddNumberToObject(e, "code", status);
	cJSON_AddItemToObject(root, "error", e);
	char *s = cJSON_PrintUnformatted(root);
	struct evbuffer *b = evbuffer_new();
	add_common_headers(http, "application/json");
	if (status == 429 || status == 503)
		evhttp_add_header(evhttp_request_get_output_headers(http), "Retry-After", "1");
	if (b && s)
		evbuffer_add(b, s, strlen(s));
	evhttp_send_reply(http, status, status_reason(status), b);
	if (b)
		evbuffer_free(b);
	cJSON_free(s);
	cJSON_Delete(root);
}

static const char *flavor_owner(enum sim_flavor f)
{
	return f == FLAVOR_SGLANG ? "sglang" : f == FLAVOR_LLAMACPP ? "llamacpp" : "vllm";
}

/* ---- simple routes ---- */

static void h_health(struct sim_server *srv, struct evhttp_request *http)
{
	if (srv->cfg.flavor == FLAVOR_LLAMACPP)
		reply_text(http, 200, "application/json", "{\"status\":\"ok\"}", 15);
	else
		reply_text(http, 200, "application/json", "", 0);
}

static void h_version(struct sim_server *srv, struct evhttp_request *http)
{
	if (srv->cfg.flavor == FLAVOR_LLAMACPP) {
		/* llama-server has no /version; it answers 404 like any unknown route */
		stream_reject(srv, http, 404, "not_found_error", NULL, "File Not Found");
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "version", srv->cfg.server_version);
	reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_models(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *o = cJSON_CreateObject(), *data = cJSON_CreateArray(), *m = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "object", "list");
	cJSON_AddStringToObject(m, "id", srv->cfg.model);
	cJSON_AddStringToObject(m, "object", "model");
	cJSON_AddNumberToObject(m, "created", (double)time(NULL));
	cJSON_AddStringToObject(m, "owned_by", flavor_owner(srv->cfg.flavor));
	cJSON_AddStringToObject(m, "root", srv->cfg.model);
	cJSON_AddNullToObject(m, "parent");
	cJSON_AddNumberToObject(m, "max_model_len", (double)srv->cfg.max_model_len);
	if (srv->cfg.flavor == FLAVOR_LLAMACPP) {
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddNumberToObject(meta, "n_ctx_train", (double)srv->cfg.max_model_len);
		cJSON_AddNumberToObject(meta, "n_vocab", 65536);
		cJSON_AddItemToObject(m, "meta", meta);
	}
	cJSON_AddItemToArray(data, m);
	cJSON_AddItemToObject(o, "data", data);
	reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_metrics(struct sim_server *srv, struct evhttp_request *http)
{
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	metrics_render(srv, b);
	add_common_headers(http, "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(http, 200, "OK", b);
	evbuffer_free(b);
}

static void h_server_info(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model_path", srv->cfg.model);
	cJSON_AddStringToObject(o, "served_model_name", srv->cfg.model);
	cJSON_AddNumberToObject(o, "max_total_num_tokens",
				(double)(srv->eng.kv_blocks_total * srv->cfg.block_size));
	cJSON_AddNumberToObject(o, "context_length", (double)srv->cfg.max_model_len);
	cJSON_AddNumberToObject(o, "max_running_requests", srv->cfg.max_num_seqs);
	cJSON_AddNumberToObject(o, "page_size", srv->cfg.block_size);
	cJSON_AddStringToObject(o, "version", srv->cfg.server_version);
	reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_slots(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *a = cJSON_CreateArray();
	int64_t n_ctx = srv->cfg.kv_capacity / srv->cfg.max_num_seqs;
	for (int i = 0; i < srv->cfg.max_num_seqs; i++) {
		cJSON *s = cJSON_CreateObject();
		const struct sim_req *r = (size_t)i < srv->eng.nrunning ? srv->eng.running[i] : NULL;
		cJSON_AddNumberToObject(s, "id", i);
		cJSON_AddNumberToObject(s, "id_task", r ? (double)r->id : -1);
		cJSON_AddNumberToObject(s, "n_ctx", (double)n_ctx);
		cJSON_AddBoolToObject(s, "is_processing", r != NULL);
		cJSON *next = cJSON_CreateObject();
		cJSON_AddNumberToObject(next, "n_decoded", r ? (double)r->generated : 0);
		cJSON_AddNumberToObject(next, "n_remain", r ? (double)(r->target_len - r->generated) : -1);
		cJSON_AddItemToObject(s, "next_token", next);
		cJSON_AddNumberToObject(s, "n_decoded", r ? (double)r->generated : 0);
		cJSON_AddItemToArray(a, s);
	}
	reply_json(http, 200, a);
	cJSON_Delete(a);
}

static void h_props(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *o = cJSON_CreateObject(), *g = cJSON_CreateObject();
	cJSON_AddNumberToObject(g, "n_ctx", (double)(srv->cfg.kv_capacity / srv->cfg.max_num_seqs));
	cJSON_AddItemToObject(o, "default_generation_settings", g);
	cJSON_AddNumberToObject(o, "total_slots", srv->cfg.max_num_seqs);
	cJSON_AddStringToObject(o, "model_path", srv->cfg.model);
	cJSON_AddStringToObject(o, "build_info", srv->cfg.server_version);
	reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_stats(struct sim_server *srv, struct evhttp_request *http)
{
	const struct lateness_hist *l = &srv->eng.late;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "steps", (double)srv->m.steps);
	cJSON_AddNumberToObject(o, "generation_tokens", (double)srv->m.generation_tokens);
	cJSON_AddNumberToObject(o, "chunks", (double)srv->m.chunks);
	cJSON_AddNumberToObject(o, "emitted_tokens", (double)srv->m.emitted_tokens);
	cJSON_AddNumberToObject(o, "preemptions", (double)srv->m.preemptions);
	cJSON_AddNumberToObject(o, "lateness_p50_us", (double)lateness_quantile_ns(l, 0.5) / 1e3);
	cJSON_AddNumberToObject(o, "lateness_p99_us", (double)lateness_quantile_ns(l, 0.99) / 1e3);
	cJSON_AddNumberToObject(o, "lateness_max_us", (double)l->max_ns / 1e3);
	uint64_t within = 0;
	for (int i = 0; i < 100; i++)
		within += l->us[i];
	cJSON_AddNumberToObject(o, "lateness_within_100us",
				l->count ? (double)within / (double)l->count : 1.0);
	cJSON_AddNumberToObject(o, "lateness_mean_us",
				l->count ? (double)l->sum_ns / (double)l->count / 1e3 : 0);
	cJSON_AddNumberToObject(o, "running", (double)srv->eng.nrunning);
	cJSON_AddNumberToObject(o, "waiting", (double)srv->eng.nwaiting);
	cJSON_AddNumberToObject(o, "kv_blocks_used", (double)srv->eng.kv_blocks_used);
	cJSON_AddNumberToObject(o, "kv_blocks_total", (double)srv->eng.kv_blocks_total);
	/* ?reset=1: start a new lateness window (benchmarks skip their ramp-up) */
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(http);
	const char *q = uri ? evhttp_uri_get_query(uri) : NULL;
	if (q && strstr(q, "reset=1"))
		memset(&srv->eng.late, 0, sizeof srv->eng.late);
	reply_json(http, 200, o);
	cJSON_Delete(o);
}

/* ---- generation requests ---- */

static void start_request(struct sim_req *r)
{
	struct sim_server *srv = r->srv;
	if (r->stream && r->http) {
		add_common_headers(r->http, "text/event-stream; charset=utf-8");
		evhttp_add_header(evhttp_request_get_output_headers(r->http), "Cache-Control",
				  "no-cache");
		/* as llama.cpp's HTTP server ends a keep-alive connection after
		 * a number of requests: libevent closes it after this reply */
		if (srv->cfg.close_every > 0 && r->id % (uint64_t)srv->cfg.close_every == 0)
			evhttp_add_header(evhttp_request_get_output_headers(r->http), "Connection",
					  "close");
		evhttp_send_reply_start(r->http, 200, "OK");
		/* we write the chunk framing ourselves (api_stream.c, send_bytes) */
		const char *te = evhttp_find_header(evhttp_request_get_output_headers(r->http),
						    "Transfer-Encoding");
		r->chunked = te && !strcmp(te, "chunked");
	}
	engine_submit(&srv->eng, r);
}

static void on_slow_headers(evutil_socket_t fd, short what, void *arg)
{
	struct sim_req *r = arg;
	(void)fd;
	(void)what;
	start_request(r);
}

static void h_generate(struct sim_server *srv, struct evhttp_request *http, enum api_kind api)
{
	struct perr pe = {0, NULL, NULL, {0}};
	struct ids ids = {NULL, 0};
	struct sim_req *r = NULL;
	/* arrival is before parsing: a 128K-token prompt is ~750 KB of JSON and
	 * the model's clock must not wait for our parser */
	uint64_t arrival = srv->cur_arrival_ns;
	cJSON *root = api_parse_body(srv, http);
	const char *rid;

	if (!root)
		return;
	r = calloc(1, sizeof *r);
	if (!r) {
		stream_reject(srv, http, 500, "InternalServerError", NULL, "out of memory");
		goto cleanup;
	}
	r->srv = srv;
	r->api = api;
	r->id = ++srv->next_req_id;
	r->arrival_ns = arrival;
	r->created = (int64_t)time(NULL);
	rid = evhttp_find_header(evhttp_request_get_input_headers(http), "X-Request-Id");
	if (rid)
		snprintf(r->client_id, sizeof r->client_id, "%s", rid);
	if (api_parse_generation(srv, root, r, &ids, &pe)) {
		stream_reject(srv, http, pe.status, pe.type, pe.param, "%s", pe.msg);
		truth_request(&srv->truth, r);
		truth_end(&srv->truth, r, sim_now_ns(), OUT_REJECTED, pe.status);
		srv->m.requests_err++;
		goto cleanup;
	}
	r->fault = fault_pick(srv, r->id);
	truth_request(&srv->truth, r);
	switch (r->fault.kind) {
	case FAULT_HTTP500:
	case FAULT_HTTP429:
	case FAULT_HTTP503: {
		int st = r->fault.kind == FAULT_HTTP500 ? 500 : r->fault.kind == FAULT_HTTP429 ? 429 : 503;
		const char *type = st == 500 ? "InternalServerError" :
				   st == 429 ? "RateLimitError" : "ServiceUnavailableError";
		stream_reject(srv, http, st, type, NULL, "simulated fault: HTTP %d on request %llu",
			      st, (unsigned long long)r->id);
		truth_end(&srv->truth, r, sim_now_ns(), OUT_REJECTED, st);
		srv->m.requests_err++;
		goto cleanup;
	}
	default:
		break;
	}
	if (live_add(srv, r)) {
		stream_reject(srv, http, 500, "InternalServerError", NULL, "out of memory");
		goto cleanup;
	}
	r->http = http;
	evhttp_connection_set_closecb(evhttp_request_get_connection(http), on_close, r);
	if (r->fault.kind == FAULT_SLOW_HEADERS) {
		double s = r->fault.seconds;
		struct timeval tv = {(time_t)s, (suseconds_t)((s - floor(s)) * 1e6)};
		r->timer = evtimer_new(srv->base, on_slow_headers, r);
		if (r->timer && !evtimer_add(r->timer, &tv)) {
			r = NULL;
			goto cleanup;
		}
	}
	start_request(r);
	r = NULL;
cleanup:
	if (r)
		req_free(r);
	free(ids.v);
	cJSON_Delete(root);
}

static void h_tokenize(struct sim_server *srv, struct evhttp_request *http)
{
	struct perr pe = {0, NULL, NULL, {0}};
	struct ids ids = {NULL, 0};
	cJSON *root = api_parse_body(srv, http), *o = NULL, *arr;
	const cJSON *v;
	int rc;

	if (!root)
		return;
	if (cJSON_GetObjectItemCaseSensitive(root, "messages")) {
		rc = api_chat_ids(root, &ids, &pe);
	} else if ((v = cJSON_GetObjectItemCaseSensitive(root, "content")) && cJSON_IsString(v)) {
		rc = api_text_ids(v->valuestring, &ids, &pe, "content"); /* llama.cpp */
	} else {
		rc = api_prompt_ids(root, &ids, &pe);
	}
	if (rc) {
		stream_reject(srv, http, pe.status, pe.type, pe.param, "%s", pe.msg);
		goto cleanup;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "count", (double)ids.n);
	cJSON_AddNumberToObject(o, "max_model_len", (double)srv->cfg.max_model_len);
	arr = cJSON_AddArrayToObject(o, "tokens");
	for (size_t i = 0; i < ids.n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)ids.v[i]));
	cJSON_AddNullToObject(o, "token_strs");
	reply_json(http, 200, o);
cleanup:
	cJSON_Delete(o);
	cJSON_Delete(root);
	free(ids.v);
}

/* ---- routing ---- */

enum route_auth { AUTH_NONE = 0, AUTH_KEY = 1 };

struct route {
	const char *path;
	enum evhttp_cmd_type method;
	enum route_auth auth;
	int flavors; /* bit per flavor */
	void (*fn)(struct sim_server *, struct evhttp_request *);
};

static void h_completions(struct sim_server *srv, struct evhttp_request *http)
{
	h_generate(srv, http, API_COMPLETIONS);
}

static void h_chat(struct sim_server *srv, struct evhttp_request *http)
{
	h_generate(srv, http, API_CHAT);
}

#define ALL 7
#define SGL (1 << FLAVOR_SGLANG)
#define LCPP (1 << FLAVOR_LLAMACPP)

static const struct route routes[] = {
	{"/health", EVHTTP_REQ_GET, AUTH_NONE, ALL, h_health},
	{"/version", EVHTTP_REQ_GET, AUTH_NONE, ALL, h_version},
	{"/v1/models", EVHTTP_REQ_GET, AUTH_KEY, ALL, h_models},
	{"/metrics", EVHTTP_REQ_GET, AUTH_KEY, ALL, h_metrics},
	{"/tokenize", EVHTTP_REQ_POST, AUTH_KEY, ALL, h_tokenize},
	{"/v1/completions", EVHTTP_REQ_POST, AUTH_KEY, ALL, h_completions},
	{"/v1/chat/completions", EVHTTP_REQ_POST, AUTH_KEY, ALL, h_chat},
	{"/get_server_info", EVHTTP_REQ_GET, AUTH_KEY, SGL, h_server_info},
	{"/slots", EVHTTP_REQ_GET, AUTH_KEY, LCPP, h_slots},
	{"/props", EVHTTP_REQ_GET, AUTH_KEY, LCPP, h_props},
	{"/sim/stats", EVHTTP_REQ_GET, AUTH_NONE, ALL, h_stats},
};

static int authorized(struct sim_server *srv, struct evhttp_request *http)
{
	const char *h = evhttp_find_header(evhttp_request_get_input_headers(http),
					   "Authorization");
	if (!srv->cfg.api_key)
		return 1;
	return h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, srv->cfg.api_key);
}

/* Chunks are small and must leave at once: without TCP_NODELAY, Nagle and
 * the client's delayed ACK hold them for tens of milliseconds. */
static void no_delay(struct evhttp_request *http)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(http);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void on_request(struct evhttp_request *http, void *arg)
{
	struct sim_server *srv = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(http);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type method = evhttp_request_get_command(http);
	int path_known = 0;

	if (!path)
		path = "/";
	srv->cur_arrival_ns = take_first_byte(http, sim_now_ns());
	no_delay(http);
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		const struct route *rt = &routes[i];
		if (strcmp(rt->path, path) || !(rt->flavors & (1 << srv->cfg.flavor)))
			continue;
		path_known = 1;
		if (rt->method != method)
			continue;
		if (rt->auth == AUTH_KEY && !authorized(srv, http)) {
			stream_reject(srv, http, 401, "AuthenticationError", NULL,
				      "Unauthorized: send 'Authorization: Bearer <api key>'");
			return;
		}
		rt->fn(srv, http);
		return;
	}
	if (path_known)
		stream_reject(srv, http, 405, "MethodNotAllowed", NULL, "Method Not Allowed on '%s'",
			      path);
	else
		stream_reject(srv, http, 404, "NotFoundError", NULL, "Not Found: '%s'", path);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	api_flush(arg);
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

/* Sends what the dirty requests have produced.  Gives the loop back after
 * ~25 us so a due engine step is never held up by a long flush. */
void api_flush(struct sim_server *srv)
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

/* Big token-id prompts (128K ids are ~750 KB of JSON) arrive in fewer loop
 * turns with a larger single read than libevent's 16 KiB. */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	(void)arg;
	if (bev) {
		bufferevent_set_max_single_read(bev, 1 << 20);
		evbuffer_add_cb(bufferevent_get_input(bev), on_input, bev);
	}
	return bev;
}

int api_start(struct sim_server *srv, char *err, size_t errlen)
{
	struct evhttp_bound_socket *sock;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	srv->http = evhttp_new(srv->base);
	srv->scratch = evbuffer_new();
	srv->flush_ev = event_new(srv->base, -1, 0, on_flush, srv);
	srv->flush_pause_ev = evtimer_new(srv->base, on_flush, srv);
	if (!srv->http || !srv->scratch || !srv->flush_ev || !srv->flush_pause_ev ||
	    event_priority_set(srv->flush_ev, 1) || event_priority_set(srv->flush_pause_ev, 1)) {
		snprintf(err, errlen, "cannot create the HTTP server");
		return -1;
	}
	evhttp_set_max_body_size(srv->http, MAX_BODY);
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
				   EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS);
	evhttp_set_timeout(srv->http, 3600);
	evhttp_set_gencb(srv->http, on_request, srv);
	evhttp_set_bevcb(srv->http, make_bev, srv);
	sock = evhttp_bind_socket_with_handle(srv->http, srv->cfg.host, (ev_uint16_t)srv->cfg.port);
	if (!sock) {
		snprintf(err, errlen, "cannot listen on %s:%d (address in use or not local?)",
			 srv->cfg.host, srv->cfg.port);
		return -1;
	}
	if (getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&ss, &sl)) {
		snprintf(err, errlen, "getsockname failed");
		return -1;
	}
	if (ss.ss_family == AF_INET)
		srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		srv->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}
