/* Replaying a request trace (workload_replay.c, docs/workloads.md). */
#ifndef TT_CAPTURE_WORKLOAD_REPLAY_H
#define TT_CAPTURE_WORKLOAD_REPLAY_H

#include <stddef.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Read --trace (sliced, timed) into c->wl: before any request is sent. */
enum tt_code workload_open(struct cap *c, struct tt_error *err);
/* A new run's settings and its one cell for the replay (formats/run-v1.md
 * 2.5); TT_FAILED out of memory. */
enum tt_code workload_manifest(struct cap *c, struct tt_manifest *m);
/* Run cell i, the replay. */
enum tt_code workload_run(struct cap *c, size_t i, struct tt_trace_writer *tw,
			  struct tt_error *err);
void workload_close(struct cap *c);

#endif
