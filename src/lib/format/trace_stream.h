/* Internal: decode a trace from a stream (a file descriptor, an archive
 * entry) without holding the whole file in memory. */
#ifndef TT_TRACE_STREAM_H
#define TT_TRACE_STREAM_H

#include <stddef.h>

#include "tokentrace/trace.h"

/* Read up to len bytes into buf: bytes read, 0 at the end, < 0 on error. */
typedef ptrdiff_t (*tt_read_fn)(void *ctx, void *buf, size_t len);

enum tt_code tt__trace_decode_stream(tt_read_fn read, void *ctx, const char *name,
				    const struct tt_trace_visitor *v, struct tt_error *err);

#endif
