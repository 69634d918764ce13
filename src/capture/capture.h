/* tokentrace-capture: one capture's state, struct cap (docs/capture.md).
 *
 * One thread runs libcurl's multi loop and every cell's procedure; a second
 * thread (sink.c) compresses and writes trace records, so neither zstd nor
 * fsync ever delays a timestamp.  The network part of the state is struct
 * net (xfer.h); this adds the run, the server's facts, scraping and
 * progress. */
#ifndef TT_CAPTURE_H
#define TT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/server.h"
#include "tokentrace/run.h"
#include "xfer.h"

struct cap_opts;

struct cap {
	struct cap_opts *o;
	struct net net;             /* loop, transfers, timing, sink */
	struct tt_run_writer *run;
	struct tt_manifest made;    /* a new run's manifest (model points in) */
	struct tt_manifest probed;  /* server facts on resume (model may point in) */
	int info_written;           /* capture-info.json written at the start */
	enum tt_engine engine;
	const char *model;          /* served name */
	int prompt_text;            /* 1: text prompts (chat) */
	int has_metrics;
	/* scraping */
	int64_t next_scrape;
	struct xfer *scrape;
	double last_running, last_waiting; /* NaN unknown */
	int64_t last_scrape_t;
	int last_scrape_failed;  /* the newest scrape got no good answer: its gauges are unknown */
	/* The manifest could not be saved (disk full): the capture stops at
	 * once, the run stays as last saved (readable, resumable). */
	int commit_failed;
	char commit_msg[1024];  /* the first failed commit's reason, for the summary */
	/* progress */
	int tty;
	size_t cell_i, n_cells_run;
	int64_t run_start;
	int64_t progress_next;
	int64_t progress_tokens_prev, progress_t_prev;
	double live_tok_s;
	char cell_label[64];
	double cell_est_s;
	double remaining_est_s;
	/* the running cell's own view (cell.c), for the line: */
	double cell_left_s;         /* the least time it still takes; NaN: use
				     * the estimate */
	double ready_wait_s;        /* >= 0: waiting for readiness this long */
	double ready_timeout_s;     /* ... of at most this long */
	int producing;              /* streams that have had tokens */
	/* a replayed workload (workload_replay.c); NULL: the matrix */
	struct tt_workload *wl;
};

#endif
