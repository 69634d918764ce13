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
	/* What the cell is doing now (docs/capture.md "The progress line"):
	 * "warm-up", "readiness", "measuring", "drain", "scout"; the line
	 * names it.  Set by the cell, read by progress_line.c. */
	const char *phase;
	double phase_start_s;       /* cell time the phase began */
	double phase_len_s;         /* its planned length (measuring, drain) */
	double o_readiness_s;       /* --readiness, as the run has it */
	int warm_total, warm_left;  /* closed-loop warm-up: prompts sent, not yet back */
	int ready_foreseen;         /* the readiness check cannot pass (more
				     * workers than the server's slots): the
				     * timeout counts in the ETA */
	/* open loop: the schedule's rate and the requests ended, for
	 * offered against achieved on the line */
	double rate_offered;        /* requests/s; 0: closed loop */
	long rate_ended;            /* requests ended in this cell */
	long rate_ended_prev;
	int64_t rate_t_prev;
	double rate_achieved;       /* over the last second or more; NaN unknown */
	/* --slo / --rate-sweep: the search step running (0: a cell of the
	 * matrix) and the most steps the budget leaves after it */
	int search_step, search_left;
	/* fail fast (docs/capture.md "Failures"): generation requests refused
	 * at connect in a row, with no answer between them */
	int refused_in_row;
	/* --redo: cells of the run (manifest order) to measure again although
	 * finished; NULL none (run_open.c run_redo, read by run_matrix.c) */
	unsigned char *redo;
	size_t n_redo;
	/* a replayed workload (workload_replay.c); NULL: the matrix */
	struct tt_workload *wl;
};

#endif
