/* Trace reader: formats/run-v1.md section 3.  Every intact frame is
 * delivered; damaged or truncated frames are skipped and reported with their
 * byte offset (a WARN, as libarchive grades it). */
#include "tokentrace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_FRAMEHEADERSIZE_MAX */
#include <zstd.h>

#include "core/text_clean.h"
#include "format/trace_stream.h"
#include "format/varint.h"

#define MAX_FRAME_CONTENT ((size_t)64 << 20)
#define ZSTD_MAGIC 0xFD2FB528u

struct decoder {
	const char *name;
	const struct tt_trace_visitor *v;
	struct tt_chunk *chunks;
	size_t chunks_cap;
	uint8_t *text_col;   /* the text column of the request being decoded */
	size_t text_col_cap;
	uint8_t *timing_col; /* its capture timing column (trace minor 2) */
	size_t timing_col_cap;
	uint32_t *blocks;    /* its block ids (trace minor 3) */
	size_t blocks_cap;
	char *text;
	size_t text_cap;
	struct tt_sample *samples;
	size_t samples_cap;
	char *strs;
	size_t strs_cap;
	uint8_t *frame;
	size_t frame_cap;
	ZSTD_DCtx *dctx;
	/* (role, slot, seq) of every request delivered: open addressing */
	uint64_t *seen;
	size_t seen_cap, seen_n;
	/* damage */
	unsigned damaged;
	char first_damage[400];
	int stopped;
	const char *implausible;
};

static void note_damage(struct decoder *d, size_t offset, const char *what)
{
	if (d->damaged++ == 0)
		snprintf(d->first_damage, sizeof d->first_damage, "%s at byte offset %zu", what,
			 offset);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *q;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* Times in a damaged (or hostile) file can be anything: arithmetic wraps
 * (no undefined behaviour) and results outside +-2^60 ns (36 years) mark the
 * record as damaged, so later differences cannot overflow. */
#define TIME_LIMIT ((int64_t)1 << 60)

static int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t to_ns(int64_t units, uint32_t unit, int *ok)
{
	if (units > TIME_LIMIT / (int64_t)unit || units < -TIME_LIMIT / (int64_t)unit) {
		*ok = 0;
		return 0;
	}
	return units * (int64_t)unit;
}

/* A chunk carrying more tokens than this is not a measurement. */
#define MAX_CHUNK_TOKENS ((uint32_t)1 << 20)
/* Nor a request streaming more chunks than this (2^20: eight times the
 * longest outputs servers allow).  A forged record of 30 M empty chunks
 * compresses to 2 KB and took 540 MB to hold. */
#define MAX_REQUEST_CHUNKS ((uint64_t)1 << 20)

static uint64_t req_key(const struct tt_request *r)
{
	/* seq and slot below 2^28 each in any real run; the role on top. */
	return (uint64_t)r->role << 58 ^ ((uint64_t)r->slot & 0x3FFFFFFF) << 28 ^
	       ((uint64_t)r->seq & 0xFFFFFFF) ^ ((uint64_t)(r->seq >> 28) << 40);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* 1 if the key was there already, 0 if added, -2 out of memory.  Keys are
 * stored plus one so that 0 marks an empty slot. */
static int seen_add(struct decoder *d, uint64_t key)
{
	size_t i;

	key += 1;
	if (!key)
		key = 1;
	if (2 * (d->seen_n + 1) > d->seen_cap) {
		size_t nc = d->seen_cap ? d->seen_cap * 2 : 1024;
		uint64_t *n = calloc(nc, sizeof *n);
		if (!n)
			return -2;
		for (size_t k = 0; k < d->seen_cap; k++) {
			if (!d->seen[k])
				continue;
			for (i = mix(d->seen[k]) & (nc - 1); n[i]; i = (i + 1) & (nc - 1))
				;
			n[i] = d->seen[k];
		}
		free(d->seen);
		d->seen = n;
		d->seen_cap = nc;
	}
	for (i = mix(key) & (d->seen_cap - 1); d->seen[i]; i = (i + 1) & (d->seen_cap - 1))
		if (d->seen[i] == key)
			return 1;
	d->seen[i] = key;
	d->seen_n++;
	return 0;
}

/* Returns 0 if the record was good, -1 if damaged, -2 out of memory, -3 if
 * it was whole but not plausible (skipped alone, the frame goes on). */
static int decode_request(struct decoder *d, struct tt_cursor *c, uint32_t unit, int64_t base)
{
	struct tt_request r;
	uint64_t v, n;
	int64_t sched, send, t;
	size_t elen;
	const uint8_t *e;
	int big = 0;

	memset(&r, 0, sizeof r);
	r.slot = (uint32_t)tt_get_varint(c);
	r.seq = (uint32_t)tt_get_varint(c);
	v = tt_get_u8(c);
	r.role = v <= TT_ROLE_SCOUT ? (enum tt_role)v : TT_ROLE_MEASURED;
	v = tt_get_u8(c);
	r.finish = v <= TT_FINISH_ABORTED ? (enum tt_finish)v : TT_FINISH_UNKNOWN;
	v = tt_get_u8(c);
	r.fail = v <= TT_FAIL_OTHER ? (enum tt_fail)v : TT_FAIL_OTHER;
	r.http_status = (int)(tt_get_varint(c) & 0xffff);
	v = tt_get_varint(c);
	r.prompt_tokens = v ? (int64_t)(v - 1) : -1;
	v = tt_get_varint(c);
	r.cached_tokens = v ? (int64_t)(v - 1) : -1;
	sched = wadd(base, tt_get_svarint(c));
	send = wadd(sched, tt_get_svarint(c));
	r.t_sched_ns = to_ns(sched, unit, &c->ok);
	r.t_send_ns = to_ns(send, unit, &c->ok);
	r.t_end_ns = to_ns(wadd(send, tt_get_svarint(c)), unit, &c->ok);
	e = tt_get_str(c, &elen);
	n = tt_get_varint(c);
	if (!c->ok)
		return -1;
	/* Each chunk takes at least two bytes: a count beyond that is damage. */
	if (n > (uint64_t)(c->end - c->p) / 2)
		return -1;
	if (n > MAX_REQUEST_CHUNKS) {
		d->implausible = "a request claims over 2^20 chunks";
		return -3;
	}
	if (elen) {
		if (grow((void **)&d->text, &d->text_cap, elen + 1, 1))
			return -2;
		memcpy(d->text, e, elen);
		d->text[elen] = '\0';
		/* A server's words: shown in reports and dump, so no escape
		 * sequence and no invalid UTF-8 gets through. */
		tt__text_scrub(d->text, elen);
		r.error = d->text;
	}
	if (grow((void **)&d->chunks, &d->chunks_cap, n ? n : 1, sizeof *d->chunks))
		return -2;
	/* The two chunk columns: the loops the whole run's chunks go through.
	 * A time out of range marks the record damaged as to_ns does (what
	 * is stored for it then is never read); a chunk of too many tokens
	 * makes it implausible, decided after every damage check. */
	{
		struct tt_chunk *ch = d->chunks;
		const uint64_t lim = (uint64_t)(TIME_LIMIT / (int64_t)unit);
		uint64_t out = 0;

		t = send;
		for (uint64_t i = 0; i < n; i++) {
			t = wadd(t, (int64_t)tt_get_varint(c));
			/* -lim <= t <= lim, in one unsigned comparison */
			out |= (uint64_t)t + lim > 2 * lim;
			ch[i].t_ns = (int64_t)((uint64_t)t * unit);
		}
		if (out)
			c->ok = 0;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = tt_get_varint(c);
			big |= k > MAX_CHUNK_TOKENS;
			ch[i].tokens = k > MAX_CHUNK_TOKENS ? MAX_CHUNK_TOKENS + 1 : (uint32_t)k;
		}
	}
	if (!c->ok)
		return -1;
	/* Trace minor 1: the text column, absent in older records (3.5). */
	if (c->p < c->end && tt_get_u8(c) == 1) {
		if (n > (uint64_t)(c->end - c->p))
			return -1;
		if (grow((void **)&d->text_col, &d->text_col_cap, n ? n : 1, 1))
			return -2;
		for (uint64_t i = 0; i < n; i++)
			d->text_col[i] = (uint8_t)(tt_get_u8(c) & (TT_TEXT_ANSWER | TT_TEXT_REASONING));
		r.chunk_text = d->text_col;
	}
	/* Trace minor 2: the capture timing, absent in older records (3.5). */
	if (c->p < c->end && tt_get_u8(c) == 1) {
		v = tt_get_varint(c);
		r.cpu_wait_first_ns = v ? (int64_t)((v - 1) & INT64_MAX) : -1;
		v = tt_get_varint(c);
		r.cpu_wait_last_ns = v ? (int64_t)((v - 1) & INT64_MAX) : -1;
		v = tt_get_varint(c);
		r.cpu_wait_ns = v ? (int64_t)((v - 1) & INT64_MAX) : -1;
		v = tt_get_varint(c);
		r.clock_steps = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		if (!c->ok || n > (uint64_t)(c->end - c->p))
			return -1;
		if (grow((void **)&d->timing_col, &d->timing_col_cap, n ? n : 1, 1))
			return -2;
		for (uint64_t i = 0; i < n; i++)
			d->timing_col[i] = (uint8_t)(tt_get_u8(c) &
						     (TT_TIMING_SHARED | TT_TIMING_NOT_KERNEL));
		r.chunk_timing = d->timing_col;
		r.timing_recorded = 1;
	}
	/* Trace minor 3: the workload, after the timing flag (3.5). */
	if (c->p < c->end && tt_get_u8(c) == 1) {
		uint64_t nb;
		v = tt_get_varint(c);
		r.wl_line = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		r.prompt_asked = (int64_t)(tt_get_varint(c) & INT64_MAX);
		r.output_asked = (int64_t)(tt_get_varint(c) & INT64_MAX);
		v = tt_get_varint(c);
		r.session = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		v = tt_get_varint(c);
		r.turn = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		nb = tt_get_varint(c);
		/* each id takes at least a byte */
		if (!c->ok || nb > (uint64_t)(c->end - c->p))
			return -1;
		if (grow((void **)&d->blocks, &d->blocks_cap, nb ? nb : 1, sizeof *d->blocks))
			return -2;
		for (uint64_t i = 0; i < nb; i++) {
			v = tt_get_varint(c);
			d->blocks[i] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		}
		if (!c->ok)
			return -1;
		r.n_blocks = (size_t)nb;
		r.blocks = d->blocks;
		r.workload_recorded = 1;
	}
	if (big) {
		d->implausible = "a chunk claims over 2^20 tokens";
		return -3;
	}
	r.n_chunks = (size_t)n;
	r.chunks = d->chunks;
	/* The same request twice (a writer's bug or a forged trace) would be
	 * counted twice: 200 copies made 5.0 average active at concurrency 1. */
	switch (seen_add(d, req_key(&r))) {
	case -2:
		return -2;
	case 1:
		d->implausible = "a request record repeated (same role, slot and seq)";
		return -3;
	default:
		break;
	}
	if (d->v->on_request && d->v->on_request(d->v->ctx, &r))
		d->stopped = 1;
	return 0;
}

static int decode_scrape(struct decoder *d, struct tt_cursor *c, uint32_t unit, int64_t base)
{
	struct tt_scrape s;
	uint64_t n;
	size_t strbytes = 0, off = 0;

	s.t_ns = to_ns(wadd(base, tt_get_svarint(c)), unit, &c->ok);
	n = tt_get_varint(c);
	if (!c->ok || n > (uint64_t)(c->end - c->p) / 10)
		return -1;
	if (grow((void **)&d->samples, &d->samples_cap, n ? n : 1, sizeof *d->samples))
		return -2;
	/* Names and labels need NUL terminators: copy them into one block.  The
	 * block is sized from the remaining payload so pointers stay stable. */
	strbytes = (size_t)(c->end - c->p) + 2 * n + 1;
	if (grow((void **)&d->strs, &d->strs_cap, strbytes, 1))
		return -2;
	for (uint64_t i = 0; i < n; i++) {
		size_t nl, ll;
		const uint8_t *name = tt_get_str(c, &nl);
		const uint8_t *labels = tt_get_str(c, &ll);
		double value = tt_get_f64(c);
		if (!c->ok)
			return -1;
		memcpy(d->strs + off, name, nl);
		d->strs[off + nl] = '\0';
		tt__text_scrub(d->strs + off, nl);
		d->samples[i].name = d->strs + off;
		off += nl + 1;
		memcpy(d->strs + off, labels, ll);
		d->strs[off + ll] = '\0';
		tt__text_scrub(d->strs + off, ll);
		d->samples[i].labels = d->strs + off;
		off += ll + 1;
		d->samples[i].value = value;
	}
	s.n_samples = (size_t)n;
	s.samples = d->samples;
	if (d->v->on_scrape && d->v->on_scrape(d->v->ctx, &s))
		d->stopped = 1;
	return 0;
}

/* Parse the records of one decompressed frame: 1 if its header was
 * understood (its records were delivered, up to any damage), 0 if the frame
 * was skipped whole, -2 out of memory. */
static int decode_frame(struct decoder *d, const uint8_t *p, size_t len, size_t offset)
{
	struct tt_cursor c = {p, p + len, 1};
	uint32_t unit = 0;
	int64_t base = 0;
	int first = 1, accepted = 0;

	while (c.p < c.end && !d->stopped) {
		uint8_t type = tt_get_u8(&c);
		uint64_t rlen = tt_get_varint(&c);
		struct tt_cursor rc;
		int r = 0;

		if (!c.ok || rlen > (uint64_t)(c.end - c.p)) {
			note_damage(d, offset, "record overruns its frame");
			return accepted;
		}
		rc.p = c.p;
		rc.end = c.p + rlen;
		rc.ok = 1;
		c.p += rlen;
		if (first) {
			uint64_t major, minor;
			if (type != 1 || rlen < 4 || memcmp(rc.p, "TTRC", 4) != 0) {
				note_damage(d, offset, "frame does not start with a TTRC header");
				return 0;
			}
			rc.p += 4;
			major = tt_get_varint(&rc);
			minor = tt_get_varint(&rc);
			unit = (uint32_t)tt_get_varint(&rc);
			base = tt_get_svarint(&rc);
			if (!rc.ok || unit == 0) {
				note_damage(d, offset, "bad frame header");
				return 0;
			}
			if (major != 1) {
				char what[160];
				snprintf(what, sizeof what,
					 "found trace version %llu.%llu, this reader understands 1.x",
					 (unsigned long long)major, (unsigned long long)minor);
				note_damage(d, offset, what);
				return 0;
			}
			first = 0;
			accepted = 1;
			continue;
		}
		if (type == 2)
			r = decode_request(d, &rc, unit, base);
		else if (type == 3)
			r = decode_scrape(d, &rc, unit, base);
		/* other types: skipped, forward compatible */
		if (r == -2)
			return -2;
		if (r == -3) {
			note_damage(d, offset, d->implausible);
			continue;
		}
		if (r == -1) {
			note_damage(d, offset, type == 2 ? "damaged request record" :
							   "damaged scrape record");
			return accepted;
		}
	}
	return accepted;
}

/* Input window over the trace bytes.  In memory the window is the whole
 * buffer; streamed, it holds at most a frame or two plus one read, so memory
 * stays flat however large a cell's trace grows. */
struct source {
	tt_read_fn read;
	void *ctx;
	const uint8_t *p;
	size_t start, end;     /* unread bytes are p[start..end) */
	uint8_t *own;          /* streamed: the buffer p points into */
	size_t cap;
	uint64_t base;         /* file offset of p[0] */
	int eof;
	int ioerr;
};

#define READ_CHUNK ((size_t)256 << 10)
#define MAX_WINDOW ((size_t)256 << 20)

/* Make `want` unread bytes available if the input has them; returns how many
 * are available (fewer only at the end of the input). */
static size_t src_fill(struct source *s, size_t want)
{
	if (want > MAX_WINDOW)
		want = MAX_WINDOW;
	while (s->end - s->start < want && !s->eof) {
		ptrdiff_t got;
		if (s->start > 0) { /* slide unread bytes to the front */
			memmove(s->own, s->own + s->start, s->end - s->start);
			s->base += s->start;
			s->end -= s->start;
			s->start = 0;
		}
		if (s->cap - s->end < READ_CHUNK) {
			size_t cap = s->cap ? s->cap * 2 : READ_CHUNK * 2;
			uint8_t *n;
			while (cap - s->end < READ_CHUNK)
				cap *= 2;
			n = realloc(s->own, cap);
			if (!n) {
				s->eof = 1;
				s->ioerr = 2;
				break;
			}
			s->own = n;
			s->cap = cap;
			s->p = n;
		}
		got = s->read(s->ctx, s->own + s->end, s->cap - s->end);
		if (got < 0) {
			s->eof = 1;
			s->ioerr = 1;
		} else if (got == 0) {
			s->eof = 1;
		} else {
			s->end += (size_t)got;
		}
	}
	return s->end - s->start < want ? s->end - s->start : want;
}

static uint64_t src_offset(const struct source *s)
{
	return s->base + s->start;
}

/* Skip to the next zstd frame magic; returns 0 if the input ended first. */
static int src_skip_to_magic(struct source *s)
{
	static const uint8_t magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

	s->start++;
	for (;;) {
		size_t have = src_fill(s, READ_CHUNK);
		const uint8_t *q = s->p + s->start;
		for (size_t i = 0; i + 4 <= have; i++)
			if (q[i] == magic[0] && memcmp(q + i, magic, 4) == 0) {
				s->start += i;
				return 1;
			}
		if (have < READ_CHUNK) { /* the input ends inside this window */
			s->start = s->end;
			return 0;
		}
		s->start += have - 3; /* a magic may straddle the boundary */
	}
}

static enum tt_code decode_source(struct source *s, const char *name,
				  const struct tt_trace_visitor *v, struct tt_error *err)
{
	struct decoder d;
	unsigned frames = 0;
	enum tt_code rc = TT_OK;

	memset(&d, 0, sizeof d);
	d.name = name;
	d.v = v;
	if (src_fill(s, 1) == 0) {
		if (s->ioerr == 2)
			return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", name);
		return tt_error_set(err, s->ioerr ? TT_EIO : TT_ETRUNC,
				    s->ioerr ? "cannot read trace '%s'" : "trace '%s' is empty (0 bytes)",
				    name);
	}
	d.dctx = ZSTD_createDCtx();
	if (!d.dctx)
		return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", name);
	while (!d.stopped) {
		size_t have = src_fill(s, 4), fsize = 0, got, want;
		unsigned long long csize;
		uint32_t magic;
		const uint8_t *q;

		if (have == 0)
			break;
		q = s->p + s->start;
		if (have < 4) {
			note_damage(&d, src_offset(s), "truncated frame (file cut short)");
			break;
		}
		magic = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
			(uint32_t)q[3] << 24;
		if (magic != ZSTD_MAGIC && (magic & 0xFFFFFFF0u) != 0x184D2A50u) {
			uint64_t at = src_offset(s);
			int more = src_skip_to_magic(s);
			note_damage(&d, at, more ? "bytes that are not a zstd frame" :
						   "trailing bytes that are not a zstd frame");
			continue;
		}
		/* The frame's size: read on until the whole frame is in the window. */
		for (want = 64 << 10;; want *= 2) {
			have = src_fill(s, want);
			fsize = ZSTD_findFrameCompressedSize(s->p + s->start, have);
			if (!ZSTD_isError(fsize) || have < want || want >= MAX_WINDOW)
				break;
		}
		if (ZSTD_isError(fsize)) {
			uint64_t at = src_offset(s);
			int more = src_skip_to_magic(s);
			note_damage(&d, at, more ? "damaged frame" : "truncated frame (file cut short)");
			continue;
		}
		q = s->p + s->start;
		if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
			s->start += fsize;
			continue;
		}
		csize = ZSTD_getFrameContentSize(q, fsize);
		if (csize == ZSTD_CONTENTSIZE_UNKNOWN || csize == ZSTD_CONTENTSIZE_ERROR ||
		    csize > MAX_FRAME_CONTENT) {
			note_damage(&d, src_offset(s), "frame without a valid content size");
			s->start += fsize;
			continue;
		}
		if (grow((void **)&d.frame, &d.frame_cap, (size_t)csize + 1, 1)) {
			rc = tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", name);
			goto cleanup;
		}
		got = ZSTD_decompressDCtx(d.dctx, d.frame, (size_t)csize + 1, q, fsize);
		if (ZSTD_isError(got) || got != csize) {
			char what[200];
			snprintf(what, sizeof what, "damaged frame (%s)",
				 ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size mismatch");
			note_damage(&d, src_offset(s), what);
			s->start += fsize;
			continue;
		}
		switch (decode_frame(&d, d.frame, got, src_offset(s))) {
		case -2:
			rc = tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", name);
			goto cleanup;
		case 1:
			frames++;
			break;
		default:
			break;
		}
		s->start += fsize;
	}
	/* Running out of memory is not damage in the file: the call failed,
	 * whatever was delivered before.  A read error is damage from here on
	 * (in an archive it is the compressed stream that broke). */
	if (s->ioerr == 2) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory reading '%s' at byte offset %llu",
				  name, (unsigned long long)src_offset(s));
		goto cleanup;
	}
	if (s->ioerr)
		note_damage(&d, src_offset(s), "read error");
	if (d.damaged) {
		if (frames == 0)
			rc = tt_error_set(err, TT_EFORMAT, "trace '%s' is unreadable: %s", name,
					  d.first_damage);
		else
			rc = tt_error_setv(err, TT_WARN, TT_EFORMAT,
					  "trace '%s': %u damaged part%s skipped, first: %s", name,
					  d.damaged, d.damaged == 1 ? "" : "s", d.first_damage);
	}
cleanup:
	ZSTD_freeDCtx(d.dctx);
	free(d.seen);
	free(d.chunks);
	free(d.text_col);
	free(d.timing_col);
	free(d.blocks);
	free(d.text);
	free(d.samples);
	free(d.strs);
	free(d.frame);
	return rc;
}

enum tt_code tt_trace_decode(const void *data, size_t len, const char *name,
			     const struct tt_trace_visitor *v, struct tt_error *err)
{
	struct source s;

	memset(&s, 0, sizeof s);
	s.p = data;
	s.end = len;
	s.eof = 1;
	return decode_source(&s, name, v, err);
}

enum tt_code tt__trace_decode_stream(tt_read_fn read, void *ctx, const char *name,
				    const struct tt_trace_visitor *v, struct tt_error *err)
{
	struct source s;
	enum tt_code rc;

	memset(&s, 0, sizeof s);
	s.read = read;
	s.ctx = ctx;
	rc = decode_source(&s, name, v, err);
	free(s.own);
	return rc;
}
