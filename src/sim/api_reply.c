/* Whole replies: common headers, text and JSON bodies, error objects as
 * vLLM's OpenAI server writes them (docs/sim.md, "API"). */
#include "api_reply.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void api_add_headers(struct evhttp_request *http, const char *ctype)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(http);
	evhttp_add_header(h, "Content-Type", ctype);
	const char *rid = evhttp_find_header(evhttp_request_get_input_headers(http),
					     "X-Request-Id");
	if (rid)
		evhttp_add_header(h, "X-Request-Id", rid);
}

void api_reply_text(struct evhttp_request *http, int status, const char *ctype,
		    const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	api_add_headers(http, ctype);
	evbuffer_add(b, body, len);
	evhttp_send_reply(http, status, status == 200 ? "OK" : "Error", b);
	evbuffer_free(b);
}

void api_reply_json(struct evhttp_request *http, int status, cJSON *obj)
{
	char *s = cJSON_PrintUnformatted(obj);
	if (!s) {
		evhttp_send_error(http, 500, "out of memory");
		return;
	}
	api_reply_text(http, status, "application/json", s, strlen(s));
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

void api_reject(struct evhttp_request *http, int status, const char *type, const char *param,
		const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	cJSON *root = cJSON_CreateObject(), *e = cJSON_CreateObject();
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
	api_add_headers(http, "application/json");
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

void api_reject_tgi(struct evhttp_request *http, int status, const char *type, const char *msg)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "error", msg);
	cJSON_AddStringToObject(root, "error_type", type);
	api_reply_json(http, status, root);
	cJSON_Delete(root);
}
