/* tokentrace-sim: the ground-truth log (formats/sim-truth-log.md). */
#ifndef TT_SIM_TRUTH_H
#define TT_SIM_TRUTH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_req.h"

/* END record outcomes in the truth log (formats/sim-truth-log.md). */
enum sim_outcome {
	OUT_FINISHED = 0, OUT_CLIENT_GONE = 1, OUT_FAULT_ERROR = 2, OUT_FAULT_RESET = 3,
	OUT_REJECTED = 4, OUT_FAULT_NO_DONE = 5, OUT_SHUTDOWN = 6
};

struct truth_log {
	FILE *f;
	char *buf;
};

/* Opens the log at path (NULL: no log, every call below does nothing);
 * 0, or -1 with a message in err. */
int truth_open(struct truth_log *t, const char *path, char *err, size_t errlen);
/* A REQUEST record: r's number, arrival, prompt and target length, X-Request-Id. */
void truth_request(struct truth_log *t, const struct sim_req *r);
/* A CHUNK record: tokens [first, first + n) of request id, sent at emit_ns,
 * produced by the model at model_ns[0..n). */
void truth_chunk(struct truth_log *t, uint64_t id, uint64_t emit_ns, int64_t first,
		 const uint64_t *model_ns, size_t n);
/* A QUEUE record (when r was first admitted, how many steps passed it
 * over), then an END record: how and when r ended, with the HTTP status. */
void truth_end(struct truth_log *t, const struct sim_req *r, uint64_t ns,
	       enum sim_outcome outcome, int status);
/* Flushes and closes; safe on a log never opened. */
void truth_close(struct truth_log *t);

#endif
