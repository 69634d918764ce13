/* Fuzz entry: decode arbitrary bytes as a trace file, in memory and streamed
 * through small reads (the sliding window the run reader uses), and check
 * both paths deliver the same records.  Every record is touched so bad
 * lengths or pointers show up under the sanitizers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/trace.h"

#include "format/trace_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sum {
	uint64_t hash, records;
};

static int on_request(void *ctx, const struct tt_request *r)
{
	struct sum *s = ctx;
	s->records++;
	for (size_t i = 0; i < r->n_chunks; i++)
		s->hash = s->hash * 31 + r->chunks[i].tokens + (uint64_t)r->chunks[i].t_ns;
	if (r->error)
		for (const char *p = r->error; *p; p++)
			s->hash = s->hash * 31 + (unsigned char)*p;
	return 0;
}

static int on_scrape(void *ctx, const struct tt_scrape *sc)
{
	struct sum *s = ctx;
	s->records++;
	for (size_t i = 0; i < sc->n_samples; i++)
		for (const char *p = sc->samples[i].name; *p; p++)
			s->hash = s->hash * 31 + (unsigned char)*p + (unsigned char)sc->samples[i].labels[0];
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static ptrdiff_t read_small(void *ctx, void *buf, size_t len)
{
	struct reader *r = ctx;
	size_t n = len < 7 ? len : 7;
	if (n > r->left)
		n = r->left;
	memcpy(buf, r->p, n);
	r->p += n;
	r->left -= n;
	return (ptrdiff_t)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sum a = {0, 0}, b = {0, 0};
	struct tt_trace_visitor va = {&a, on_request, on_scrape};
	struct tt_trace_visitor vb = {&b, on_request, on_scrape};
	struct reader rd = {data, size};
	struct tt_error ea, eb;
	enum tt_code ca, cb;

	ca = tt_trace_decode(data, size, "fuzz", &va, &ea);
	cb = tt__trace_decode_stream(read_small, &rd, "fuzz", &vb, &eb);
	if (ca != cb || a.records != b.records || a.hash != b.hash)
		abort(); /* the streamed reader must see exactly what the in-memory one sees */
	return 0;
}
