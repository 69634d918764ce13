/* Replayed requests' bodies (workload_prompt.c). */
#ifndef TT_CAPTURE_WORKLOAD_PROMPT_H
#define TT_CAPTURE_WORKLOAD_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "tokentrace/workload.h"

/* Request i's body (malloc'd, NUL-terminated) and its length; 0, or -1
 * out of memory. */
int workload_body(const struct cap *c, const struct tt_workload *w, size_t i, char **body,
		  size_t *len);
/* Token t of block id `block` under this seed (docs/workloads.md). */
uint32_t workload_token(uint64_t seed, uint32_t block, uint32_t t);

#endif
