/* The trace sink: a writer thread that encodes, compresses and writes the
 * records, so neither zstd nor fsync ever delays a timestamp. */
#ifndef TT_CAPTURE_SINK_H
#define TT_CAPTURE_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/trace.h"

struct sink;
enum tt_code sink_start(struct sink **out, struct tt_error *err);
/* Direct subsequent records to tw (NULL: drop them).  Waits until records
 * queued for the previous writer are written. */
enum tt_code sink_set_writer(struct sink *s, struct tt_trace_writer *tw, struct tt_error *err);
/* Queue a finished request; takes ownership of chunks (malloc'd) and error,
 * and of r->chunk_text (malloc'd, or NULL). */
void sink_request(struct sink *s, const struct tt_request *r, struct tt_chunk *chunks,
		  char *error);
/* Queue a scrape's /metrics text (malloc'd; the sink takes it and parses
 * it on its own thread). */
void sink_scrape(struct sink *s, int64_t t_ns, char *text, size_t len);
void sink_stop(struct sink *s);

#endif
