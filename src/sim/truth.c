/* Ground-truth log (formats/sim-truth-log.md): little-endian binary records
 * through a 1 MiB stdio buffer, so logging a token costs a memcpy. */
#include "truth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_req.h"

#define TRUTH_MAGIC "TTSIMTR1"
#define TRUTH_VERSION 2u

enum { REC_REQUEST = 1, REC_CHUNK = 2, REC_END = 3, REC_QUEUE = 4 };

static void put_u8(FILE *f, unsigned v)
{
	putc((int)(v & 0xff), f);
}

static void put_u16(FILE *f, unsigned v)
{
	unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	fwrite(b, 1, 2, f);
}

static void put_u32(FILE *f, uint32_t v)
{
	unsigned char b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	fwrite(b, 1, 4, f);
}

static void put_u64(FILE *f, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	fwrite(b, 1, 8, f);
}

int truth_open(struct truth_log *t, const char *path, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	if (!path)
		return 0;
	t->f = fopen(path, "wb");
	if (!t->f) {
		snprintf(err, errlen, "cannot open truth log '%s': %s", path, strerror(errno));
		return -1;
	}
	t->buf = malloc(1 << 20);
	if (t->buf)
		setvbuf(t->f, t->buf, _IOFBF, 1 << 20);
	fwrite(TRUTH_MAGIC, 1, 8, t->f);
	put_u32(t->f, TRUTH_VERSION);
	put_u32(t->f, 0);
	return 0;
}

void truth_request(struct truth_log *t, const struct sim_req *r)
{
	if (!t->f)
		return;
	size_t n = strlen(r->client_id);
	put_u8(t->f, REC_REQUEST);
	put_u64(t->f, r->id);
	put_u64(t->f, r->arrival_ns);
	put_u32(t->f, (uint32_t)r->prompt_tokens);
	put_u32(t->f, (uint32_t)r->target_len);
	put_u16(t->f, (unsigned)n);
	fwrite(r->client_id, 1, n, t->f);
}

void truth_chunk(struct truth_log *t, uint64_t id, uint64_t emit_ns, int64_t first,
		 const uint64_t *model_ns, size_t n)
{
	if (!t->f)
		return;
	put_u8(t->f, REC_CHUNK);
	put_u64(t->f, id);
	put_u64(t->f, emit_ns);
	put_u32(t->f, (uint32_t)first);
	put_u32(t->f, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		put_u64(t->f, model_ns[i]);
}

void truth_end(struct truth_log *t, const struct sim_req *r, uint64_t ns,
	       enum sim_outcome outcome, int status)
{
	if (!t->f)
		return;
	/* version 2: how the request waited for the engine, then its end */
	put_u8(t->f, REC_QUEUE);
	put_u64(t->f, r->id);
	put_u64(t->f, r->admit_ns);
	put_u32(t->f, r->passed_steps);
	put_u8(t->f, REC_END);
	put_u64(t->f, r->id);
	put_u64(t->f, ns);
	put_u32(t->f, (uint32_t)r->emitted);
	put_u32(t->f, (uint32_t)r->cached_tokens);
	put_u32(t->f, (uint32_t)r->preemptions);
	put_u8(t->f, (unsigned)outcome);
	put_u16(t->f, (unsigned)status);
}

void truth_close(struct truth_log *t)
{
	if (t->f) {
		fflush(t->f);
		fclose(t->f);
	}
	t->f = NULL;
	free(t->buf);
	t->buf = NULL;
}
