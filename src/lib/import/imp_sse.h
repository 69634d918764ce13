/* Raw SSE text of a foreign tool's export, counted as our capture counts. */
#ifndef TT_IMPORT_IMP_SSE_H
#define TT_IMPORT_IMP_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/sse.h"
#include "tokentrace/trace.h"

struct tt__imp_stream {
	struct tt_oai_stream st;
	enum tt_finish finish;  /* from finish_reason; UNKNOWN when none */
	int done;               /* [DONE] seen */
	int error;              /* an error event */
	char error_text[256];
	long malformed;         /* events that were not JSON */
};

void tt__imp_stream_init(struct tt__imp_stream *s);
/* One piece of response text (may hold several events): the output tokens
 * it carried. */
int64_t tt__imp_stream_piece(struct tt__imp_stream *s, const char *text, size_t len);

/* One event's data (no SSE framing: a packet already split, or a whole
 * non-streamed body): the output tokens it carried. */
int64_t tt__imp_stream_event(struct tt__imp_stream *s, const char *data, size_t len);

#endif
