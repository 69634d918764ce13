/* tokentrace: request traces to replay (formats/workload-trace-v1.md):
 * Mooncake / AIPerf JSONL and the Azure LLM inference trace CSV, read into
 * a compact table of requests (their times, lengths and prompt block ids)
 * that tokentrace-capture --trace sends at their own times. */
#ifndef TOKENTRACE_WORKLOAD_H
#define TOKENTRACE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_workload_format {
	TT_WORKLOAD_AUTO = 0,     /* detect from the first non-blank line */
	TT_WORKLOAD_MOONCAKE = 1, /* JSONL: timestamp, input_length, output_length, hash_ids */
	TT_WORKLOAD_AZURE = 2     /* CSV: TIMESTAMP, ContextTokens, GeneratedTokens */
};

/* Tokens per block id (Mooncake's hash_ids). */
#define TT_WORKLOAD_BLOCK_TOKENS 512

/* One request of a trace: 24 bytes (the ids live in tt_workload.blocks). */
struct tt_workload_req {
	int64_t t_ns;        /* due, ns after the first kept request (speedup applied) */
	uint32_t input;      /* prompt tokens */
	uint32_t output;     /* output tokens asked (after the output cap) */
	uint32_t line;       /* its line in the file, from 1 */
	uint32_t block_end;  /* its block ids are blocks[previous request's
			      * block_end (0 for the first) .. block_end) */
};

struct tt_workload {
	enum tt_workload_format format;
	size_t n;                     /* requests kept */
	struct tt_workload_req *reqs;
	uint32_t *blocks;             /* every kept request's ids, in order */
	size_t n_blocks;              /* < 2^32 */
	uint64_t rows;                /* requests in the file before slicing */
	uint64_t output_capped;       /* requests whose output the cap lowered */
	int64_t span_ns;              /* the last kept request's t_ns */
	int64_t input_total, output_total; /* sums over the kept requests */
	uint64_t bytes;               /* the file's size */
};

/* What to keep of the file and how to time it (formats/workload-trace-v1.md
 * "What the capture keeps"). */
struct tt_workload_opts {
	double start_s;      /* keep requests at or after this trace time (s) */
	double duration_s;   /* ... and before start_s + this; <= 0: to the end */
	double speedup;      /* divide times by this (> 0; 0 taken as 1) */
	int64_t output_cap;  /* lower larger outputs to this; 0: none */
};

/* Read a trace held in memory; name is the file's name for messages.  On
 * success *out owns a new table (free with tt_workload_free); else err says
 * which line and why (TT_EFORMAT), or TT_ENOMEM.  opts may be NULL (all of
 * it, at its own times). */
enum tt_code tt_workload_parse(const char *data, size_t len, const char *name,
			       enum tt_workload_format format,
			       const struct tt_workload_opts *opts, struct tt_workload **out,
			       struct tt_error *err);
/* The same from a file, read line by line (memory grows with the requests
 * kept, not with the file). */
enum tt_code tt_workload_load(const char *path, enum tt_workload_format format,
			      const struct tt_workload_opts *opts, struct tt_workload **out,
			      struct tt_error *err);
void tt_workload_free(struct tt_workload *w);
/* "mooncake", "azure", "auto". */
const char *tt_workload_format_name(enum tt_workload_format f);
/* The name back; -1 when unknown. */
int tt_workload_format_parse(const char *s);
/* Request i's block ids; *n gets their count. */
const uint32_t *tt_workload_blocks(const struct tt_workload *w, size_t i, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
