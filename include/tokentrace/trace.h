/* tokentrace: the records of a cell trace (formats/run-v1.md, "Trace file").
 *
 * A trace holds, for one cell of the matrix, every request with every
 * streamed chunk, and the server's metric scrapes.  All times are
 * nanoseconds on the capture's CLOCK_MONOTONIC, relative to the run's
 * origin (whose wall-clock time is the manifest's origin_unix_ns). */
#ifndef TOKENTRACE_TRACE_H
#define TOKENTRACE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a request was sent. Only MEASURED requests count in decode figures. */
enum tt_role {
	TT_ROLE_MEASURED = 0, /* a closed-loop worker's request */
	TT_ROLE_WARMUP = 1,   /* warms a slot's prompt in the prefix cache */
	TT_ROLE_SCOUT = 2     /* cold prefill scout (max_tokens 1): the prefill row */
};

/* How a request ended. */
enum tt_finish {
	TT_FINISH_UNKNOWN = 0,
	TT_FINISH_STOP = 1,    /* server said "stop" */
	TT_FINISH_LENGTH = 2,  /* server said "length" (max_tokens reached) */
	TT_FINISH_CUT = 3,     /* still streaming at the end of the window: cut by us */
	TT_FINISH_ERROR = 4,   /* failed: see fail and error */
	TT_FINISH_ABORTED = 5  /* stopped by the user (Ctrl-C) */
};

/* What went wrong with a failed request (TT_FINISH_ERROR). */
enum tt_fail {
	TT_FAIL_NONE = 0,
	TT_FAIL_CONNECT = 1,     /* refused, DNS, TLS: no response */
	TT_FAIL_HTTP = 2,        /* 4xx/5xx status: see http_status */
	TT_FAIL_RESET = 3,       /* connection lost mid-stream */
	TT_FAIL_TIMEOUT = 4,     /* stalled past the request timeout */
	TT_FAIL_ERROR_EVENT = 5, /* server sent an error object in the stream */
	TT_FAIL_MALFORMED = 6,   /* unparseable chunk */
	TT_FAIL_NO_DONE = 7,     /* stream ended without [DONE] or a finish reason */
	TT_FAIL_OTHER = 8
};

/* One streamed chunk: its arrival time and how many output tokens it carried
 * (from cumulative usage or token ids, never from counting chunks).  A chunk
 * with 0 tokens (a role-only chat delta) may be recorded; figures skip it. */
struct tt_chunk {
	int64_t t_ns;
	uint32_t tokens;
};

/* Which text a chunk carried (struct tt_request.chunk_text) (formats/run-v1.md 3.5, "Reasoning and answer
 * text"): a reasoning model's server streams reasoning apart from the answer. */
#define TT_TEXT_ANSWER 1u    /* non-empty delta.content / text */
#define TT_TEXT_REASONING 2u /* non-empty delta.reasoning_content / reasoning */

/* How a chunk's time was taken (struct tt_request.chunk_timing)
 * (formats/run-v1.md 3.5, "Capture timing", trace minor 2). */
#define TT_TIMING_SHARED 1u     /* one read gave this chunk and a later token-bearing
				 * chunk of the request the same stamp: the chunk may
				 * have arrived earlier than its time says */
#define TT_TIMING_NOT_KERNEL 2u /* the time is when the capture looked or its
				 * callback ran, not the kernel's receive stamp */

struct tt_request {
	uint32_t slot;         /* worker slot, 0..C-1 */
	uint32_t seq;          /* per-slot sequence number, from 0 */
	enum tt_role role;
	int64_t t_sched_ns;    /* when the request was due to be sent */
	int64_t t_send_ns;     /* when it was handed to the transport */
	int64_t t_end_ns;      /* last byte, error, or cut */
	int http_status;       /* 0: no response */
	int64_t prompt_tokens; /* as the server reported; -1 unknown */
	int64_t cached_tokens; /* prompt tokens served from the prefix cache; -1 unknown */
	enum tt_finish finish;
	enum tt_fail fail;
	const char *error;     /* NUL-terminated text or NULL; not owned */
	size_t n_chunks;
	const struct tt_chunk *chunks; /* n_chunks, in arrival order; not owned */
	/* n_chunks TT_TEXT_* bytes, which text each chunk carried; NULL: not
	 * recorded (an older or synthetic trace).  Not owned. */
	const uint8_t *chunk_text;
	/* Capture timing (formats/run-v1.md 3.5, trace minor 2); all 0/NULL
	 * when timing_recorded is 0 (an older, synthetic or imported trace). */
	int timing_recorded;
	int64_t cpu_wait_first_ns; /* the capture's network thread waited this long
				    * for a CPU between the send and the first
				    * token-bearing chunk (the whole request without
				    * one); -1 unknown */
	int64_t cpu_wait_last_ns;  /* ... between the read of the chunks before the last
				    * token-bearing chunk's read and that read; -1 unknown */
	int64_t cpu_wait_ns;       /* ... between the send and the end; -1 unknown */
	uint32_t clock_steps;      /* wall-clock steps seen while the request ran */
	const uint8_t *chunk_timing; /* n_chunks TT_TIMING_* bytes; NULL: not
				      * recorded.  Not owned. */
	/* What a replayed workload asked (formats/run-v1.md 3.5, "Workload",
	 * trace minor 3); all 0/NULL when workload_recorded is 0 (the matrix's
	 * own requests, older, synthetic or imported traces). */
	int workload_recorded;
	uint32_t wl_line;        /* the request's line in the trace file, from 1; 0 none */
	int64_t prompt_asked;    /* prompt tokens the request was built with */
	int64_t output_asked;    /* the max_tokens it asked */
	uint32_t session, turn;  /* multi-turn: session and turn, from 1; 0 none */
	size_t n_blocks;
	const uint32_t *blocks;  /* its prompt's block ids (a trace's hash_ids), in
				  * order; not owned */
};

/* One value of one series of one /metrics scrape.  Label text is the
 * Prometheus label set without braces, e.g. `model_name="lfm"`, or "". */
struct tt_sample {
	const char *name;
	const char *labels;
	double value;
};

struct tt_scrape {
	int64_t t_ns;          /* when the scrape's response was complete */
	size_t n_samples;
	const struct tt_sample *samples;
};

/* Names of the enums as written in JSON and messages ("measured", "cut", ...). */
const char *tt_role_name(enum tt_role r);
const char *tt_finish_name(enum tt_finish f);
const char *tt_fail_name(enum tt_fail f);

/* ---- writing ---------------------------------------------------------- */

struct tt_trace_writer;

struct tt_trace_opts {
	uint32_t time_unit_ns; /* stored time resolution; 0 = default (TT_TRACE_DEFAULT_UNIT_NS) */
	int level;             /* zstd level; 0 = default (3) */
	size_t frame_bytes;    /* end a frame when this much is buffered; 0 = 256 KiB */
	int sync;              /* fsync after every frame (crash-safe); default on via opts NULL */
};
#define TT_TRACE_DEFAULT_UNIT_NS 1000u

/* Create (truncate) the trace file at path.  opts may be NULL (defaults, sync on). */
enum tt_code tt_trace_writer_open(const char *path, const struct tt_trace_opts *opts,
				  struct tt_trace_writer **out, struct tt_error *err);
/* Append a record.  Buffered; a frame is written when frame_bytes are buffered. */
enum tt_code tt_trace_write_request(struct tt_trace_writer *w, const struct tt_request *r,
				    struct tt_error *err);
enum tt_code tt_trace_write_scrape(struct tt_trace_writer *w, const struct tt_scrape *s,
				   struct tt_error *err);
/* End the current frame now (write + fsync if sync): everything appended so
 * far survives a crash. */
enum tt_code tt_trace_flush(struct tt_trace_writer *w, struct tt_error *err);
/* Flush, close and free.  w may be NULL.  Returns the first error seen. */
enum tt_code tt_trace_writer_close(struct tt_trace_writer *w, struct tt_error *err);
/* Bytes written to the file so far (compressed). */
uint64_t tt_trace_writer_bytes(const struct tt_trace_writer *w);

/* ---- reading ---------------------------------------------------------- */

/* Callbacks get records in file order; pointers inside are valid only during
 * the call.  A callback returning non-zero stops the read (TT_OK returned). */
struct tt_trace_visitor {
	void *ctx;
	int (*on_request)(void *ctx, const struct tt_request *r);
	int (*on_scrape)(void *ctx, const struct tt_scrape *s);
};

/* Decode a whole trace file held in memory.  name is used in messages.
 * Returns TT_OK, or TT_WARN when damaged frames were skipped (err says which
 * and at what byte offset; every intact frame was still delivered), or an
 * error when nothing could be read. */
enum tt_code tt_trace_decode(const void *data, size_t len, const char *name,
			     const struct tt_trace_visitor *v, struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
