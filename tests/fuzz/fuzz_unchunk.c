/* Fuzz entry point: HTTP/1.1 chunked framing undone (src/lib/unchunk.c), the
 * decoder tokentrace-capture runs on raw response bodies.  The input is fed
 * whole, then in pieces whose sizes come from its first byte; both feeds
 * must pass on the same data, fail at the same point, and never pass on
 * more bytes than came in. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf;
	size_t len;
};

static void collect(void *ctx, const char *p, size_t n)
{
	struct out *o = ctx;
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static enum tt_code feed(const uint8_t *d, size_t size, size_t step, struct out *o, int *done)
{
	struct tt_unchunk u;
	enum tt_code rc = TT_OK;

	tt_unchunk_init(&u);
	for (size_t i = 0; i < size && rc == TT_OK; i += step) {
		size_t k = size - i < step ? size - i : step;
		rc = tt_unchunk_feed(&u, (const char *)d + i, k, collect, o);
	}
	*done = tt_unchunk_done(&u);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out a = {0}, b = {0};
	enum tt_code ra, rb;
	int da, db;
	size_t step;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] % 16) + 1;
	data++;
	size--;
	a.buf = malloc(size + 1);
	b.buf = malloc(size + 1);
	if (!a.buf || !b.buf)
		abort();
	ra = feed(data, size, size ? size : 1, &a, &da);
	rb = feed(data, size, step, &b, &db);
	if (ra != rb || da != db || a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
		abort();
	if (a.len > size)
		abort();
	free(a.buf);
	free(b.buf);
	return 0;
}
