/* tokentrace: server-sent events and OpenAI-style stream chunks.
 *
 * Two layers, both fed from outside input and both fuzzed:
 *
 * 1. struct tt_sse: an incremental SSE parser.  Feed it whatever byte pieces
 *    the transport hands over (an event may be split anywhere, several may
 *    arrive at once); it calls back once per complete event with the event's
 *    data (multi-line data joined by "\n").  Lines may end in LF, CRLF or CR;
 *    `data:` with or without the space; comment lines (`:`) and other fields
 *    are ignored.
 *
 * 2. tt_oai_parse_chunk + struct tt_oai_stream: read one event's JSON the way
 *    vLLM, SGLang, llama.cpp and TGI write it (docs/engines.md) and
 *    turn the stream of chunks into output-token counts per chunk, counted
 *    from cumulative usage.completion_tokens, token_ids, or llama.cpp's
 *    timings.predicted_n, and only as a last resort one per non-empty chunk.
 *
 * 3. struct tt_unchunk: HTTP/1.1 chunked transfer coding undone on bytes as
 *    they came off a socket, for a client that takes its body raw (so that
 *    it can count the socket's bytes; tokentrace-capture does, for timing).
 *
 * The chunk reader is a small allocation-free JSON scanner, not a DOM parser:
 * it runs once per streamed chunk, inside the transport's write callback, and
 * must keep up with a million tokens a second. */
#ifndef TOKENTRACE_SSE_H
#define TOKENTRACE_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Not part of the shared library's API: the programs link the static
 * library, and libtokentrace.so keeps these local (issue 21.5). */
#pragma GCC visibility push(hidden)

/* ---- SSE framing ------------------------------------------------------- */

/* Called for each complete event that has data.  data is not NUL-terminated
 * and is valid only during the call.  Return non-zero to stop feeding
 * (tt_sse_feed then returns TT_EOF). */
typedef int (*tt_sse_event_fn)(void *ctx, const char *data, size_t len);

struct tt_sse_bytes_ {
	char *data;
	size_t len, cap;
};

struct tt_sse {
	tt_sse_event_fn on_event;
	void *ctx;
	size_t max_event;   /* longest line / event data accepted */
	enum tt_kind kind;  /* after feed or end failed: TT_EFORMAT (a line or event
			     * over max_event) or TT_ENOMEM */
	/* private */
	struct tt_sse_bytes_ line_; /* partial line carried between feeds */
	struct tt_sse_bytes_ data_; /* data of the event being assembled */
	const char *span_;  /* or: the data still in the caller's piece (no copy) */
	size_t span_len_;
	int have_data_;
	int skip_lf_;       /* last piece ended in CR: a leading LF belongs to it */
};

/* max_event 0: 64 MiB. */
void tt_sse_init(struct tt_sse *s, tt_sse_event_fn fn, void *ctx, size_t max_event);
void tt_sse_release(struct tt_sse *s);
/* Forget any partial line or event (reuse for a new stream). */
void tt_sse_reset(struct tt_sse *s);
/* Feed a piece.  TT_OK; TT_EOF when a callback asked to stop; TT_FAILED when
 * a line or event exceeded max_event or memory ran out (s->kind says which). */
enum tt_code tt_sse_feed(struct tt_sse *s, const char *bytes, size_t len);
/* The stream ended: deliver an event whose closing blank line never came
 * (servers that close right after the last `data:` line).  Returns as feed. */
enum tt_code tt_sse_end(struct tt_sse *s);

/* ---- HTTP/1.1 chunked framing ------------------------------------------ */

/* RFC 9112 section 7.1: chunk-size in hex, optional extensions, CRLF, data,
 * CRLF; a zero size ends the body, then trailer lines and an empty line.
 * Bare LF is accepted where CRLF is due.  Allocation-free, byte by byte, so
 * a body may be split anywhere. */
typedef void (*tt_unchunk_data_fn)(void *ctx, const char *data, size_t len);

struct tt_unchunk {
	/* private */
	int state_;
	int n_;         /* hex digits read, or: the trailer line is not empty */
	uint64_t left_; /* data bytes left in the current chunk (or size so far) */
};

void tt_unchunk_init(struct tt_unchunk *u);
/* Feed raw body bytes; data passes to fn (possibly in several pieces).
 * TT_OK; TT_FAILED when the framing is broken (no hex digit where a size
 * is due, a size over 15 hex digits): the body cannot be trusted after it.
 * Bytes after the end of the body are ignored. */
enum tt_code tt_unchunk_feed(struct tt_unchunk *u, const char *bytes, size_t len,
			     tt_unchunk_data_fn fn, void *ctx);
/* 1 once the last chunk and its trailer have been read. */
int tt_unchunk_done(const struct tt_unchunk *u);

/* ---- OpenAI stream chunks ---------------------------------------------- */

enum tt_oai_finish {
	TT_OAI_FINISH_NONE = 0,  /* absent or null */
	TT_OAI_FINISH_STOP = 1,
	TT_OAI_FINISH_LENGTH = 2,
	TT_OAI_FINISH_OTHER = 3
};

/* What one chunk said.  Counts are -1 when absent. */
struct tt_oai_chunk {
	int done;                  /* the data was `[DONE]` */
	int is_error;              /* an "error" member (object or string) */
	char error[256];           /* its message (or type/code), cut to fit */
	int n_choices;             /* -1: no "choices" member */
	int64_t completion_tokens; /* usage.completion_tokens (cumulative) */
	int64_t prompt_tokens;     /* usage.prompt_tokens */
	int64_t cached_tokens;     /* usage.prompt_tokens_details.cached_tokens */
	int64_t token_ids;         /* total length of choices[].token_ids arrays */
	int64_t predicted_n;       /* timings.predicted_n (llama.cpp) */
	int has_content;           /* some text / delta.content / reasoning is non-empty */
	int has_answer;            /* non-empty text / delta.content */
	int has_reasoning;         /* non-empty delta.reasoning_content / delta.reasoning */
	enum tt_oai_finish finish;
};

/* Read one event's data.  TT_OK, or TT_FAILED when it is not a JSON object
 * (chunk->error then says where it broke). */
enum tt_code tt_oai_parse_chunk(const char *data, size_t len, struct tt_oai_chunk *chunk);

/* Token counting across the chunks of one response. */
enum tt_oai_count {
	TT_OAI_COUNT_NONE = 0,   /* nothing seen yet */
	TT_OAI_COUNT_USAGE = 1,  /* cumulative usage in content chunks */
	TT_OAI_COUNT_IDS = 2,    /* token_ids per chunk */
	TT_OAI_COUNT_TIMINGS = 3,/* cumulative timings.predicted_n */
	TT_OAI_COUNT_CHUNKS = 4  /* fallback: one token per non-empty chunk */
};

struct tt_oai_stream {
	enum tt_oai_count method; /* how tokens were counted (last chunk) */
	int64_t tokens;           /* output tokens so far */
	int64_t usage_total;      /* last usage.completion_tokens seen; -1 */
	int64_t prompt_tokens;    /* last usage.prompt_tokens seen; -1 */
	int64_t cached_tokens;    /* -1 */
};

void tt_oai_stream_init(struct tt_oai_stream *st);
/* Account one parsed chunk; returns the output tokens it carried (>= 0).
 * A cumulative counter (usage.completion_tokens, else timings.predicted_n)
 * gives the chunk's tokens as its increase over the tokens counted so far;
 * without one, the length of token_ids; without those, 1 for a chunk with
 * non-empty text.  So a server that reports usage only in its last chunk
 * (llama.cpp) still ends with the right total: the last chunk carries
 * whatever the per-chunk fallback missed. */
int64_t tt_oai_stream_account(struct tt_oai_stream *st, const struct tt_oai_chunk *c);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
