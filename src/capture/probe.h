/* Server facts before the run (probe.c), and /metrics scrapes during it. */
#ifndef TT_CAPTURE_PROBE_H
#define TT_CAPTURE_PROBE_H

#include <stdint.h>

#include "capture.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

/* Called from every loop turn: start a scrape when one is due. */
void scrape_tick(struct cap *c, int64_t now);
/* Drop a scrape still running (at the end). */
void scrape_stop(struct cap *c);
/* Detect engine, model, KV capacity; fill the manifest. */
enum tt_code probe_server(struct cap *c, struct tt_manifest *m, struct tt_error *err);

#endif
