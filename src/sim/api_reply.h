/* tokentrace-sim: whole replies: the headers every reply carries, text and
 * JSON bodies, and the OpenAI-style error object. */
#ifndef TT_SIM_API_REPLY_H
#define TT_SIM_API_REPLY_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct evhttp_request;

/* Content-Type ctype, and X-Request-Id echoed when the client sent one. */
void api_add_headers(struct evhttp_request *http, const char *ctype);
/* Sends body[0..len) with status (200 "OK", else "Error"). */
void api_reply_text(struct evhttp_request *http, int status, const char *ctype,
		    const char *body, size_t len);
/* Sends obj unformatted as application/json; obj stays the caller's. */
void api_reply_json(struct evhttp_request *http, int status, cJSON *obj);
/* Sends {"error":{"message","type","param","code"}} with status (and
 * Retry-After: 1 on 429 and 503); param may be NULL. */
/* TGI's error body: {"error":"MSG","error_type":"TYPE"}. */
void api_reject_tgi(struct evhttp_request *http, int status, const char *type, const char *msg);
void api_reject(struct evhttp_request *http, int status, const char *type, const char *param,
		const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 5, 6)))
#endif
	;

#endif
