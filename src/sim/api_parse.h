/* tokentrace-sim: request bodies into request fields (api_parse.c).  Pure:
 * no I/O; a failure is a struct perr the caller answers with. */
#ifndef TT_SIM_API_PARSE_H
#define TT_SIM_API_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sim_config.h"
#include "sim_req.h"

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

/* body[0..len) as a JSON object (the caller deletes it), or NULL with pe
 * filled (400). */
cJSON *api_parse_body(const char *body, size_t len, struct perr *pe);
/* Prompt token ids of a completions body ("prompt"), of a chat body
 * ("messages"), or of a text; 0, or -1 with pe filled.  out->v is the
 * caller's to free either way. */
int api_prompt_ids(const cJSON *root, struct ids *out, struct perr *pe);
int api_chat_ids(const cJSON *root, struct ids *out, struct perr *pe);
int api_text_ids(const char *s, struct ids *out, struct perr *pe, const char *name);
/* Every field of a generation request into r (r->api and r->id set
 * before); 0, or -1 with pe filled. */
int api_parse_generation(const struct sim_config *c, const cJSON *root, struct sim_req *r,
			 struct ids *ids, struct perr *pe);

#endif
