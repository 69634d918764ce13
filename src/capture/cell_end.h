/* The end of a cell (cell_end.c). */
#ifndef TT_CAPTURE_CELL_END_H
#define TT_CAPTURE_CELL_END_H

#include <curl/curl.h>
#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Commit the manifest (a failure is reported and the capture goes on). */
void cell_commit(struct cap *c);
/* Close cell i's trace tw and set its final state (and reason). */
enum tt_code cell_finish(struct cap *c, size_t i, struct tt_trace_writer *tw,
			 enum tt_cell_state st, const char *reason, struct tt_error *err);

/* Fail fast (docs/capture.md "Failures"): this many generation requests
 * in a row refused at connect (CURLE_COULDNT_CONNECT), with no HTTP
 * answer between them, and the server is taken for gone: the cell fails
 * and the run stops.  3: a closed-loop worker's back-off (50, 100 ms)
 * makes three refusals of one worker 150 ms; a live server that is only
 * busy queues or answers 503, it does not refuse connections.  Measured:
 * the capture ends 0.37 s (1K x 1) and 0.07 s (1K x 16) after the
 * simulator exits mid-window (docs/capture.md "Failures"). */
#define REFUSED_IN_ROW_STOP 3
/* Count a generation request's end: refused at connect, or answered. */
void cell_count_refusal(struct cap *c, CURLcode res, long http_status);
/* Whether the rule above has fired. */
int refused(const struct cap *c);
/* The failed cell's reason, and the run's error naming the rule and the
 * --resume command. */
const char *refused_reason(const struct cap *c);
enum tt_code refused_error(struct cap *c, struct tt_error *err);

#endif
