/* Fuzz entry point: SSE framing and OpenAI chunk reading (src/lib/sse.c).
 * The input is fed twice: whole, and cut into pieces whose sizes come from
 * the first byte, as a transport would hand them over.  Both feeds must see
 * the same events. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	struct tt_oai_stream st;
	uint64_t sum; /* a digest of the events, to compare the two feeds */
	size_t n;
};

static int on_event(void *ctx, const char *d, size_t len)
{
	struct state *s = ctx;
	struct tt_oai_chunk c;

	s->n++;
	for (size_t i = 0; i < len; i++)
		s->sum = s->sum * 31 + (unsigned char)d[i];
	s->sum = s->sum * 31 + len;
	if (tt_oai_parse_chunk(d, len, &c) == TT_OK && !c.done && !c.is_error)
		tt_oai_stream_account(&s->st, &c);
	return 0;
}

static enum tt_code feed(const uint8_t *data, size_t size, size_t step, struct state *s)
{
	struct tt_sse sse;
	enum tt_code rc = TT_OK;

	memset(s, 0, sizeof *s);
	tt_oai_stream_init(&s->st);
	tt_sse_init(&sse, on_event, s, 4096);
	for (size_t i = 0; i < size && rc == TT_OK; i += step) {
		size_t n = size - i < step ? size - i : step;
		rc = tt_sse_feed(&sse, (const char *)data + i, n);
	}
	if (rc == TT_OK)
		rc = tt_sse_end(&sse);
	tt_sse_release(&sse);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state a, b;
	size_t step;
	enum tt_code ra, rb;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] % 7) + 1;
	data++;
	size--;
	ra = feed(data, size, size ? size : 1, &a);
	rb = feed(data, size, step, &b);
	if (ra == TT_OK && rb == TT_OK && (a.n != b.n || a.sum != b.sum || a.st.tokens != b.st.tokens))
		abort(); /* the split changed what was seen */
	return 0;
}
