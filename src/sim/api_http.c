/* The HTTP server: listening, routes, authentication, the simple routes'
 * replies, and taking a generation request in (parse, faults that answer
 * at once, handing it to the engine) (docs/sim.md, "API"). */
#include "api_http.h"

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api_parse.h"
#include "api_reply.h"
#include "api_request.h"
#include "api_stream.h"
#include "engine.h"
#include "faults.h"
#include "lateness.h"
#include "metrics.h"
#include "sim_clock.h"
#include "sim_config.h"
#include "sim_req.h"
#include "sim_server.h"
#include "truth.h"

#define MAX_BODY (64u << 20)

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

static const char *flavor_owner(enum sim_flavor f)
{
	return f == FLAVOR_SGLANG ? "sglang" : f == FLAVOR_LLAMACPP ? "llamacpp" :
	       f == FLAVOR_TGI ? "tgi" : "vllm";
}

/* ---- simple routes ---- */

static void h_health(struct sim_server *srv, struct evhttp_request *http)
{
	if (srv->cfg.flavor == FLAVOR_LLAMACPP)
		api_reply_text(http, 200, "application/json", "{\"status\":\"ok\"}", 15);
	else
		api_reply_text(http, 200, "application/json", "", 0);
}

static void h_version(struct sim_server *srv, struct evhttp_request *http)
{
	if (srv->cfg.flavor == FLAVOR_LLAMACPP) {
		/* llama-server has no /version; it answers 404 like any unknown route */
		api_reject(http, 404, "not_found_error", NULL, "File Not Found");
		return;
	}
	if (srv->cfg.flavor == FLAVOR_TGI) {
		/* TGI neither: its version is in /info */
		api_reply_text(http, 404, "text/plain", "", 0);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "version", srv->cfg.server_version);
	api_reply_json(http, 200, o);
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
	/* llama-server and TGI list no length (TGI's is in /info) */
	if (srv->cfg.flavor != FLAVOR_LLAMACPP && srv->cfg.flavor != FLAVOR_TGI)
		cJSON_AddNumberToObject(m, "max_model_len", (double)srv->cfg.max_model_len);
	if (srv->cfg.flavor == FLAVOR_LLAMACPP) {
		/* llama-server lists no max_model_len: meta.n_ctx is a slot's
		 * context, n_ctx_train the model's */
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddNumberToObject(meta, "n_ctx", (double)sim_slot_context(&srv->cfg));
		cJSON_AddNumberToObject(meta, "n_ctx_train", (double)srv->cfg.max_model_len);
		cJSON_AddNumberToObject(meta, "n_vocab", 65536);
		cJSON_AddItemToObject(m, "meta", meta);
	}
	cJSON_AddItemToArray(data, m);
	cJSON_AddItemToObject(o, "data", data);
	api_reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_metrics(struct sim_server *srv, struct evhttp_request *http)
{
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	metrics_render(&srv->m, &srv->eng, &srv->cfg, srv->start_unix, b);
	api_add_headers(http, "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(http, 200, "OK", b);
	evbuffer_free(b);
}

/* TGI's /info (its router's Info): the limits and the version. */
static void h_info(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "model_id", srv->cfg.model);
	cJSON_AddNullToObject(o, "model_sha");
	cJSON_AddStringToObject(o, "model_pipeline_tag", "text-generation");
	cJSON_AddNumberToObject(o, "max_concurrent_requests", 128);
	cJSON_AddNumberToObject(o, "max_best_of", 2);
	cJSON_AddNumberToObject(o, "max_stop_sequences", 4);
	cJSON_AddNumberToObject(o, "max_input_tokens", (double)(srv->cfg.max_model_len - 1));
	cJSON_AddNumberToObject(o, "max_total_tokens", (double)srv->cfg.max_model_len);
	cJSON_AddNumberToObject(o, "validation_workers", 2);
	cJSON_AddNumberToObject(o, "max_client_batch_size", 4);
	cJSON_AddStringToObject(o, "router", "text-generation-router");
	cJSON_AddStringToObject(o, "version", srv->cfg.server_version);
	cJSON_AddNullToObject(o, "sha");
	cJSON_AddNullToObject(o, "docker_label");
	api_reply_json(http, 200, o);
	cJSON_Delete(o);
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
	api_reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_slots(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *a = cJSON_CreateArray();
	int64_t n_ctx = sim_slot_context(&srv->cfg);
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
	api_reply_json(http, 200, a);
	cJSON_Delete(a);
}

static void h_props(struct sim_server *srv, struct evhttp_request *http)
{
	cJSON *o = cJSON_CreateObject(), *g = cJSON_CreateObject();
	cJSON_AddNumberToObject(g, "n_ctx", (double)sim_slot_context(&srv->cfg));
	cJSON_AddItemToObject(o, "default_generation_settings", g);
	cJSON_AddNumberToObject(o, "total_slots", srv->cfg.max_num_seqs);
	cJSON_AddStringToObject(o, "model_path", srv->cfg.model);
	cJSON_AddStringToObject(o, "build_info", srv->cfg.server_version);
	api_reply_json(http, 200, o);
	cJSON_Delete(o);
}

static void h_stats(struct sim_server *srv, struct evhttp_request *http)
{
	const struct lateness_hist *l = &srv->eng.late;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "steps", (double)srv->eng.stats.steps);
	cJSON_AddNumberToObject(o, "generation_tokens", (double)srv->eng.stats.generation_tokens);
	cJSON_AddNumberToObject(o, "chunks", (double)srv->m.chunks);
	cJSON_AddNumberToObject(o, "emitted_tokens", (double)srv->m.emitted_tokens);
	cJSON_AddNumberToObject(o, "preemptions", (double)srv->eng.stats.preemptions);
	cJSON_AddNumberToObject(o, "silent_closes", (double)srv->silent_closes);
	cJSON_AddNumberToObject(o, "silent_close_dropped", (double)srv->silent_dropped);
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
	api_reply_json(http, 200, o);
	cJSON_Delete(o);
}

/* The body as a JSON object, or NULL after answering 400. */
static cJSON *read_body(struct evhttp_request *http)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(http);
	size_t len = evbuffer_get_length(in);
	const char *body = (const char *)evbuffer_pullup(in, -1);
	struct perr pe = {0, NULL, NULL, {0}};
	cJSON *root = api_parse_body(body, len, &pe);
	if (!root)
		api_reject(http, pe.status, pe.type, pe.param, "%s", pe.msg);
	return root;
}

/* ---- generation requests ---- */

static void start_request(struct sim_req *r)
{
	struct sim_server *srv = r->srv;
	if (r->stream && r->http) {
		api_add_headers(r->http, "text/event-stream; charset=utf-8");
		evhttp_add_header(evhttp_request_get_output_headers(r->http), "Cache-Control",
				  "no-cache");
		/* as llama.cpp's HTTP server ends a keep-alive connection after
		 * a number of requests: libevent closes it after this reply */
		if (srv->cfg.close_every > 0 && r->id % (uint64_t)srv->cfg.close_every == 0)
			evhttp_add_header(evhttp_request_get_output_headers(r->http), "Connection",
					  "close");
		/* llama-server says keep-alive and then closes the connection
		 * after the reply (api_silent_close) */
		if (srv->cfg.silent_close > 0 && !(srv->cfg.close_every > 0 &&
		    r->id % (uint64_t)srv->cfg.close_every == 0) &&
		    r->id % (uint64_t)srv->cfg.silent_close == 0) {
			r->silent_close = 1;
			evhttp_add_header(evhttp_request_get_output_headers(r->http), "Keep-Alive",
					  "timeout=5, max=100");
		}
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
	cJSON *root = read_body(http);
	const char *rid;

	if (!root)
		return;
	r = calloc(1, sizeof *r);
	if (!r) {
		api_reject(http, 500, "InternalServerError", NULL, "out of memory");
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
	if (api_parse_generation(&srv->cfg, root, r, &ids, &pe)) {
		if (srv->cfg.flavor == FLAVOR_TGI)
			api_reject_tgi(http, pe.status == 400 ? 422 : pe.status, "validation", pe.msg);
		else
			api_reject(http, pe.status, pe.type, pe.param, "%s", pe.msg);
		truth_request(&srv->truth, r);
		truth_end(&srv->truth, r, sim_now_ns(), OUT_REJECTED, pe.status);
		srv->m.requests_err++;
		goto cleanup;
	}
	r->fault = fault_pick(srv->cfg.faults, srv->cfg.nfaults, &srv->rng, r->id);
	truth_request(&srv->truth, r);
	switch (r->fault.kind) {
	case FAULT_HTTP500:
	case FAULT_HTTP429:
	case FAULT_HTTP503: {
		int st = r->fault.kind == FAULT_HTTP500 ? 500 : r->fault.kind == FAULT_HTTP429 ? 429 : 503;
		const char *type = st == 500 ? "InternalServerError" :
				   st == 429 ? "RateLimitError" : "ServiceUnavailableError";
		api_reject(http, st, type, NULL, "simulated fault: HTTP %d on request %llu",
			      st, (unsigned long long)r->id);
		truth_end(&srv->truth, r, sim_now_ns(), OUT_REJECTED, st);
		srv->m.requests_err++;
		goto cleanup;
	}
	default:
		break;
	}
	if (api_request_add(srv, r)) {
		api_reject(http, 500, "InternalServerError", NULL, "out of memory");
		goto cleanup;
	}
	api_request_attach(r, http);
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
	cJSON *root = read_body(http), *o = NULL, *arr;
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
		api_reject(http, pe.status, pe.type, pe.param, "%s", pe.msg);
		goto cleanup;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "count", (double)ids.n);
	cJSON_AddNumberToObject(o, "max_model_len", (double)srv->cfg.max_model_len);
	arr = cJSON_AddArrayToObject(o, "tokens");
	for (size_t i = 0; i < ids.n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)ids.v[i]));
	cJSON_AddNullToObject(o, "token_strs");
	api_reply_json(http, 200, o);
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

#define ALL 15
#define SGL (1 << FLAVOR_SGLANG)
#define LCPP (1 << FLAVOR_LLAMACPP)
#define TGI (1 << FLAVOR_TGI)

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
	{"/info", EVHTTP_REQ_GET, AUTH_KEY, TGI, h_info},
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
	/* a request on a connection being closed silently is never answered */
	if (api_silent_close_drop(srv, http))
		return;
	srv->cur_arrival_ns = take_first_byte(http, sim_now_ns());
	no_delay(http);
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		const struct route *rt = &routes[i];
		if (strcmp(rt->path, path) || !(rt->flavors & (1 << srv->cfg.flavor)))
			continue;
		path_known = 1;
		if (rt->method != method)
			continue;
		if (rt->auth == AUTH_KEY && !authorized(srv, http) &&
		    (!srv->cfg.api_key_generation_only || rt->fn == h_completions ||
		     rt->fn == h_chat)) {
			api_reject(http, 401, "AuthenticationError", NULL,
				      "Unauthorized: send 'Authorization: Bearer <api key>'");
			return;
		}
		rt->fn(srv, http);
		return;
	}
	if (path_known)
		api_reject(http, 405, "MethodNotAllowed", NULL, "Method Not Allowed on '%s'",
			      path);
	else
		api_reject(http, 404, "NotFoundError", NULL, "Not Found: '%s'", path);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	stream_flush(arg);
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

	api_request_hook_engine(srv);
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
	/* libevent listens with a backlog of 128: a burst of new connections
	 * (an open-loop client catching up after the machine stalled) would
	 * overflow it, and each connection dropped so waits for the client's
	 * SYN retransmission, 1 s.  Servers listen deeper (uvicorn 2048); the
	 * kernel caps this at somaxconn.  A second listen() only resizes. */
	listen(evhttp_bound_socket_get_fd(sock), 4096);
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

void api_stop(struct sim_server *srv)
{
	srv->shutting_down = 1;
	api_request_detach_all(srv, sim_now_ns());
	if (srv->http)
		evhttp_free(srv->http);
	srv->http = NULL;
	api_request_free_all(srv);
	if (srv->flush_ev)
		event_free(srv->flush_ev);
	if (srv->flush_pause_ev)
		event_free(srv->flush_pause_ev);
	srv->flush_ev = srv->flush_pause_ev = NULL;
	if (srv->scratch)
		evbuffer_free(srv->scratch);
	srv->scratch = NULL;
	free(srv->ob);
	free(srv->live);
	free(srv->dirty);
	srv->ob = NULL;
	srv->live = srv->dirty = NULL;
}
