/* Trace writer: formats/run-v1.md section 3.  Records are buffered and
 * written as independent zstd frames, each with one write() and an fsync,
 * so a crash loses at most the frame being filled. */
#include "tokentrace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "format/varint.h"

struct tt_trace_writer {
	int fd;
	char *path;
	ZSTD_CCtx *cctx;
	uint32_t unit;
	size_t frame_bytes;
	int sync;
	uint8_t *raw;          /* current frame's records */
	size_t raw_len, raw_cap;
	int64_t base;          /* current frame's base, in units */
	int in_frame;          /* header written for the current frame */
	uint8_t *scratch;      /* one record's payload */
	size_t scratch_cap;
	uint8_t *out;          /* compressed frame */
	size_t out_cap;
	uint64_t written;
	enum tt_kind sticky;   /* first error: later calls fail the same way */
};

/* The reader marks a record with a time beyond +-2^60 ns damaged
 * (format/trace_read.c TIME_LIMIT): a writer refuses it instead, before any
 * arithmetic on it could overflow (an imported 9.3e18 did). */
#define TIME_LIMIT ((int64_t)1 << 60)

static int out_of_range(int64_t t)
{
	return t < -TIME_LIMIT || t > TIME_LIMIT;
}

/* Not a sticky failure: the record is refused, the trace stays good. */
static enum tt_code refuse_time(struct tt_trace_writer *w, struct tt_error *err, const char *what,
				int64_t t)
{
	return tt_error_set(err, TT_EARG, "trace '%s': %s %lld ns is beyond the +-2^60 ns a "
			    "trace holds", w->path, what, (long long)t);
}

/* Rounded up (formats/run-v1.md 3.4): a stored time is never earlier than
 * the time measured, so an arrival time stays an upper bound. */
static int64_t to_units(int64_t ns, uint32_t unit)
{
	return ns >= 0 ? (ns + (int64_t)unit - 1) / unit : -(-ns / unit);
}

static int reserve(uint8_t **p, size_t *cap, size_t need)
{
	size_t n;
	uint8_t *q;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	q = realloc(*p, n);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

enum tt_code tt_trace_writer_open(const char *path, const struct tt_trace_opts *opts,
				  struct tt_trace_writer **out, struct tt_error *err)
{
	struct tt_trace_writer *w;
	int level = 3;

	w = calloc(1, sizeof *w);
	if (!w)
		return tt_error_set(err, TT_ENOMEM, "out of memory opening '%s'", path);
	w->fd = -1;
	w->unit = TT_TRACE_DEFAULT_UNIT_NS;
	w->frame_bytes = 256 * 1024;
	w->sync = 1;
	if (opts) {
		if (opts->time_unit_ns)
			w->unit = opts->time_unit_ns;
		if (opts->level)
			level = opts->level;
		if (opts->frame_bytes)
			w->frame_bytes = opts->frame_bytes;
		w->sync = opts->sync;
	}
	w->path = strdup(path);
	w->cctx = ZSTD_createCCtx();
	if (!w->path || !w->cctx) {
		tt_trace_writer_close(w, NULL);
		return tt_error_set(err, TT_ENOMEM, "out of memory opening '%s'", path);
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int e = errno;
		tt_trace_writer_close(w, NULL);
		return tt_error_set(err, TT_EIO, "cannot create '%s': %s", path, strerror(e));
	}
	*out = w;
	return TT_OK;
}

static enum tt_code fail(struct tt_trace_writer *w, struct tt_error *err, enum tt_kind code,
			 const char *what)
{
	if (!w->sticky)
		w->sticky = code;
	return tt_error_set(err, code, "trace '%s': %s", w->path, what);
}

static enum tt_code append_raw(struct tt_trace_writer *w, const void *p, size_t n,
			       struct tt_error *err)
{
	if (reserve(&w->raw, &w->raw_cap, w->raw_len + n))
		return fail(w, err, TT_ENOMEM, "out of memory");
	memcpy(w->raw + w->raw_len, p, n);
	w->raw_len += n;
	return TT_OK;
}

static enum tt_code append_record(struct tt_trace_writer *w, uint8_t type, const uint8_t *payload,
				  size_t len, struct tt_error *err)
{
	uint8_t head[11];
	size_t h = 0;
	enum tt_code rc;

	head[h++] = type;
	h += tt_put_varint(head + h, len);
	rc = append_raw(w, head, h, err);
	if (!tt_failed(rc))
		rc = append_raw(w, payload, len, err);
	return rc;
}

/* Start a frame whose times are relative to t_ns. */
static enum tt_code begin_frame(struct tt_trace_writer *w, int64_t t_ns, struct tt_error *err)
{
	uint8_t p[40];
	size_t n = 0;

	w->base = to_units(t_ns, w->unit);
	memcpy(p, "TTRC", 4);
	n = 4;
	n += tt_put_varint(p + n, 1);
	n += tt_put_varint(p + n, 3); /* minor 3: the workload fields of 3.5 */
	n += tt_put_varint(p + n, w->unit);
	n += tt_put_varint(p + n, tt_zigzag(w->base));
	w->in_frame = 1;
	return append_record(w, 1, p, n, err);
}

static enum tt_code write_all(struct tt_trace_writer *w, const uint8_t *p, size_t n,
			      struct tt_error *err)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (!w->sticky)
				w->sticky = TT_EIO;
			return tt_error_set(err, TT_EIO, "cannot write '%s': %s", w->path,
					    strerror(errno));
		}
		p += k;
		n -= (size_t)k;
		w->written += (uint64_t)k;
	}
	return TT_OK;
}

enum tt_code tt_trace_flush(struct tt_trace_writer *w, struct tt_error *err)
{
	size_t bound, n;
	enum tt_code rc;

	if (w->sticky)
		return tt_error_set(err, w->sticky, "trace '%s': earlier write failed", w->path);
	if (!w->in_frame || w->raw_len == 0)
		return TT_OK;
	bound = ZSTD_compressBound(w->raw_len);
	if (reserve(&w->out, &w->out_cap, bound))
		return fail(w, err, TT_ENOMEM, "out of memory");
	n = ZSTD_compress2(w->cctx, w->out, w->out_cap, w->raw, w->raw_len);
	if (ZSTD_isError(n))
		return fail(w, err, TT_EINTERNAL, ZSTD_getErrorName(n));
	rc = write_all(w, w->out, n, err);
	if (tt_failed(rc))
		return rc;
	if (w->sync && fsync(w->fd) != 0 && errno != EINVAL)
		return fail(w, err, TT_EIO, "fsync failed");
	w->raw_len = 0;
	w->in_frame = 0;
	return TT_OK;
}

static enum tt_code finish_record(struct tt_trace_writer *w, uint8_t type, size_t len,
				  struct tt_error *err)
{
	enum tt_code rc = append_record(w, type, w->scratch, len, err);
	if (!tt_failed(rc) && w->raw_len >= w->frame_bytes)
		rc = tt_trace_flush(w, err);
	return rc;
}

enum tt_code tt_trace_write_request(struct tt_trace_writer *w, const struct tt_request *r,
				    struct tt_error *err)
{
	size_t errlen = r->error ? strlen(r->error) : 0;
	size_t need = 170 + errlen + r->n_chunks * 22 + /* + 3 varints and a timing byte per chunk */
		      (r->workload_recorded ? 70 + r->n_blocks * 5 : 0);
	size_t n = 0;
	int64_t sched, send, end, prev;
	enum tt_code rc;

	if (w->sticky)
		return tt_error_set(err, w->sticky, "trace '%s': earlier write failed", w->path);
	if (out_of_range(r->t_sched_ns))
		return refuse_time(w, err, "a request's schedule", r->t_sched_ns);
	if (out_of_range(r->t_send_ns))
		return refuse_time(w, err, "a request's send time", r->t_send_ns);
	if (out_of_range(r->t_end_ns))
		return refuse_time(w, err, "a request's end", r->t_end_ns);
	for (size_t i = 0; i < r->n_chunks; i++)
		if (out_of_range(r->chunks[i].t_ns))
			return refuse_time(w, err, "a chunk's arrival", r->chunks[i].t_ns);
	if (!w->in_frame && tt_failed(rc = begin_frame(w, r->t_sched_ns, err)))
		return rc;
	if (reserve(&w->scratch, &w->scratch_cap, need))
		return fail(w, err, TT_ENOMEM, "out of memory");
	sched = to_units(r->t_sched_ns, w->unit);
	send = to_units(r->t_send_ns, w->unit);
	end = to_units(r->t_end_ns, w->unit);
	n += tt_put_varint(w->scratch + n, r->slot);
	n += tt_put_varint(w->scratch + n, r->seq);
	w->scratch[n++] = (uint8_t)r->role;
	w->scratch[n++] = (uint8_t)r->finish;
	w->scratch[n++] = (uint8_t)r->fail;
	n += tt_put_varint(w->scratch + n, r->http_status > 0 ? (uint64_t)r->http_status : 0);
	n += tt_put_varint(w->scratch + n, r->prompt_tokens >= 0 ? (uint64_t)r->prompt_tokens + 1 : 0);
	n += tt_put_varint(w->scratch + n, r->cached_tokens >= 0 ? (uint64_t)r->cached_tokens + 1 : 0);
	n += tt_put_varint(w->scratch + n, tt_zigzag(sched - w->base));
	n += tt_put_varint(w->scratch + n, tt_zigzag(send - sched));
	n += tt_put_varint(w->scratch + n, tt_zigzag(end - send));
	n += tt_put_varint(w->scratch + n, errlen);
	if (errlen)
		memcpy(w->scratch + n, r->error, errlen);
	n += errlen;
	n += tt_put_varint(w->scratch + n, r->n_chunks);
	prev = send;
	for (size_t i = 0; i < r->n_chunks; i++) {
		int64_t t = to_units(r->chunks[i].t_ns, w->unit);
		/* Arrival times are monotonic; a clock that went backwards is clamped
		 * rather than stored as a huge unsigned gap. */
		n += tt_put_varint(w->scratch + n, t > prev ? (uint64_t)(t - prev) : 0);
		if (t > prev)
			prev = t;
	}
	for (size_t i = 0; i < r->n_chunks; i++)
		n += tt_put_varint(w->scratch + n, r->chunks[i].tokens);
	/* the text column: which chunks carried reasoning, which the answer */
	w->scratch[n++] = r->chunk_text ? 1 : 0;
	if (r->chunk_text)
		for (size_t i = 0; i < r->n_chunks; i++)
			w->scratch[n++] = (uint8_t)(r->chunk_text[i] & (TT_TEXT_ANSWER | TT_TEXT_REASONING));
	/* minor 2, the capture timing: only when recorded (absent = unknown) */
	if (r->timing_recorded) {
		w->scratch[n++] = 1;
		n += tt_put_varint(w->scratch + n, r->cpu_wait_first_ns >= 0 ? (uint64_t)r->cpu_wait_first_ns + 1 : 0);
		n += tt_put_varint(w->scratch + n, r->cpu_wait_last_ns >= 0 ? (uint64_t)r->cpu_wait_last_ns + 1 : 0);
		n += tt_put_varint(w->scratch + n, r->cpu_wait_ns >= 0 ? (uint64_t)r->cpu_wait_ns + 1 : 0);
		n += tt_put_varint(w->scratch + n, r->clock_steps);
		for (size_t i = 0; i < r->n_chunks; i++)
			w->scratch[n++] = r->chunk_timing ? (uint8_t)(r->chunk_timing[i] &
					 (TT_TIMING_SHARED | TT_TIMING_NOT_KERNEL)) : 0;
	}
	/* minor 3, the workload: after a timing flag, 0 when there was none */
	if (r->workload_recorded) {
		if (!r->timing_recorded)
			w->scratch[n++] = 0;
		w->scratch[n++] = 1;
		n += tt_put_varint(w->scratch + n, r->wl_line);
		n += tt_put_varint(w->scratch + n, r->prompt_asked > 0 ? (uint64_t)r->prompt_asked : 0);
		n += tt_put_varint(w->scratch + n, r->output_asked > 0 ? (uint64_t)r->output_asked : 0);
		n += tt_put_varint(w->scratch + n, r->session);
		n += tt_put_varint(w->scratch + n, r->turn);
		n += tt_put_varint(w->scratch + n, r->blocks ? r->n_blocks : 0);
		for (size_t i = 0; r->blocks && i < r->n_blocks; i++)
			n += tt_put_varint(w->scratch + n, r->blocks[i]);
	}
	return finish_record(w, 2, n, err);
}

enum tt_code tt_trace_write_scrape(struct tt_trace_writer *w, const struct tt_scrape *s,
				   struct tt_error *err)
{
	size_t need = 32, n = 0;
	enum tt_code rc;

	if (w->sticky)
		return tt_error_set(err, w->sticky, "trace '%s': earlier write failed", w->path);
	if (out_of_range(s->t_ns))
		return refuse_time(w, err, "a scrape's time", s->t_ns);
	if (!w->in_frame && tt_failed(rc = begin_frame(w, s->t_ns, err)))
		return rc;
	for (size_t i = 0; i < s->n_samples; i++)
		need += 30 + strlen(s->samples[i].name) +
			(s->samples[i].labels ? strlen(s->samples[i].labels) : 0);
	if (reserve(&w->scratch, &w->scratch_cap, need))
		return fail(w, err, TT_ENOMEM, "out of memory");
	n += tt_put_varint(w->scratch + n, tt_zigzag(to_units(s->t_ns, w->unit) - w->base));
	n += tt_put_varint(w->scratch + n, s->n_samples);
	for (size_t i = 0; i < s->n_samples; i++) {
		const char *name = s->samples[i].name;
		const char *labels = s->samples[i].labels ? s->samples[i].labels : "";
		size_t nl = strlen(name), ll = strlen(labels);
		uint64_t u;

		n += tt_put_varint(w->scratch + n, nl);
		memcpy(w->scratch + n, name, nl);
		n += nl;
		n += tt_put_varint(w->scratch + n, ll);
		memcpy(w->scratch + n, labels, ll);
		n += ll;
		memcpy(&u, &s->samples[i].value, sizeof u);
		for (int b = 0; b < 8; b++)
			w->scratch[n++] = (uint8_t)(u >> (8 * b));
	}
	return finish_record(w, 3, n, err);
}

uint64_t tt_trace_writer_bytes(const struct tt_trace_writer *w)
{
	return w ? w->written : 0;
}

enum tt_code tt_trace_writer_close(struct tt_trace_writer *w, struct tt_error *err)
{
	enum tt_code rc = TT_OK;

	if (!w)
		return TT_OK;
	if (w->fd >= 0) {
		rc = tt_trace_flush(w, err);
		if (w->sync && fsync(w->fd) != 0 && errno != EINVAL && !tt_failed(rc))
			rc = tt_error_set(err, TT_EIO, "fsync '%s' failed", w->path);
		if (close(w->fd) != 0 && !tt_failed(rc))
			rc = tt_error_set(err, TT_EIO, "close '%s' failed", w->path);
	}
	ZSTD_freeCCtx(w->cctx);
	free(w->path);
	free(w->raw);
	free(w->scratch);
	free(w->out);
	free(w);
	return rc;
}
