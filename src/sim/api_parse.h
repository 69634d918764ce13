/* tokentrace-sim: parsing request bodies (api_parse.c). */
#ifndef TT_SIM_API_PARSE_H
#define TT_SIM_API_PARSE_H

#include <cjson/cJSON.h>

#include "sim.h"

/* Error text of a parse step, with the HTTP status and the field named. */
struct perr {
	int status;
	const char *type, *param;
	char msg[512];
};

struct ids {
	int64_t *v;
	size_t n;
};

/* The body as a JSON object, or NULL after answering 400 itself. */
cJSON *api_parse_body(struct sim_server *srv, struct evhttp_request *http);
/* Prompt token ids of a completions body ("prompt"), of a chat body
 * ("messages"), or of a text; 0, or -1 with pe filled. */
int api_prompt_ids(const cJSON *root, struct ids *out, struct perr *pe);
int api_chat_ids(const cJSON *root, struct ids *out, struct perr *pe);
int api_text_ids(const char *s, struct ids *out, struct perr *pe, const char *name);
/* Every field of a generation request into r; 0, or -1 with pe filled. */
int api_parse_generation(struct sim_server *srv, const cJSON *root, struct sim_req *r,
			 struct ids *ids, struct perr *pe);

#endif
