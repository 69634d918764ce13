/* Fuzz entry: decode arbitrary bytes as a trace file; every record is
 * touched so that bad lengths or pointers show up under the sanitizers. */
#include <stddef.h>
#include <stdint.h>

#include "tokentrace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_request(void *ctx, const struct tt_request *r)
{
	uint64_t *sum = ctx;
	for (size_t i = 0; i < r->n_chunks; i++)
		*sum += r->chunks[i].tokens + (uint64_t)r->chunks[i].t_ns;
	if (r->error)
		for (const char *p = r->error; *p; p++)
			*sum += (unsigned char)*p;
	return 0;
}

static int on_scrape(void *ctx, const struct tt_scrape *s)
{
	uint64_t *sum = ctx;
	for (size_t i = 0; i < s->n_samples; i++)
		for (const char *p = s->samples[i].name; *p; p++)
			*sum += (unsigned char)*p + (unsigned char)s->samples[i].labels[0];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t sum = 0;
	struct tt_trace_visitor v = {&sum, on_request, on_scrape};
	struct tt_error err;

	tt_trace_decode(data, size, "fuzz", &v, &err);
	return 0;
}
