/* Prompts of exact length and request bodies (prompt.c). */
#ifndef TT_CAPTURE_PROMPT_H
#define TT_CAPTURE_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "tokentrace/error.h"

/* A request body whose max_tokens can be changed in place. */
struct body {
	char *data;
	size_t len;
};
/* Build the body for (context, slot); slot -1 is the cold scout, which
 * gets a prompt no other request shares. */
enum tt_code body_build(struct cap *c, int64_t context, int slot, int64_t max_tokens,
			int cold, struct body *b, struct tt_error *err);
void body_set_max_tokens(struct body *b, int64_t n);
void body_free(struct body *b);
/* For text prompts: measure the words needed for `context` tokens. */
enum tt_code prompt_calibrate(struct cap *c, int64_t context, struct tt_error *err);

#endif
