/* The summary at the end: capture-info.json with the final counts, the
 * line that says how the cells ended, and the exit status. */
#include <stdio.h>

#include "run_summary.h"
#include "capture.h"
#include "capture_opts.h"
#include "monotonic.h"
#include "run_open.h"
#include "tokentrace/run.h"
#include "xfer.h"

int run_summary(struct cap *c)
{
	struct cap_opts *o = c->o;
	struct tt_manifest *wm = tt_run_writer_manifest(c->run);
	size_t done = 0, over = 0, failed = 0, interrupted = 0;
	int status;

	if (c->info_written)
		run_write_capture_info(c);
	for (size_t i = 0; i < wm->n_cells; i++) {
		switch (wm->cells[i].state) {
		case TT_CELL_DONE: done++; break;
		case TT_CELL_OVER_CAPACITY: over++; break;
		case TT_CELL_FAILED: failed++; break;
		case TT_CELL_INTERRUPTED: interrupted++; break;
		default: break;
		}
	}
	if (!o->quiet)
		fprintf(stderr, "tokentrace-capture: %zu of %zu cell%s done, %zu over capacity, %zu failed, %zu interrupted; %lld output tokens, %lld failed request%s, %.1f s; run in '%s'\n",
			done, wm->n_cells, wm->n_cells == 1 ? "" : "s", over, failed, interrupted,
			(long long)c->net.tokens_total, (long long)c->net.errors_total,
			c->net.errors_total == 1 ? "" : "s",
			(double)(now_ns() - c->run_start) / 1e9, tt_run_writer_dir(c->run));
	if (c->commit_failed) {
		fprintf(stderr, "tokentrace-capture: error: cannot save the run's manifest: %s; "
			"stopped (the run is readable as last saved; free space and continue "
			"with --resume %s)\n", c->commit_msg, tt_run_writer_dir(c->run));
		status = 1;
	} else if (*c->net.stop) {
		if (!o->quiet)
			fprintf(stderr, "tokentrace-capture: stopped; continue with --resume %s\n",
				tt_run_writer_dir(c->run));
		status = 130;
	} else if (failed) {
		/* docs/capture.md "Exit status": cells that could not run */
		fprintf(stderr, "tokentrace-capture: %zu cell%s could not run:", failed,
			failed == 1 ? "" : "s");
		for (size_t i = 0, k = 0; i < wm->n_cells && k < 8; i++)
			if (wm->cells[i].state == TT_CELL_FAILED) {
				fprintf(stderr, "%s %s (%s)", k ? ";" : "", wm->cells[i].id,
					wm->cells[i].reason ? wm->cells[i].reason : "failed");
				k++;
			}
		fprintf(stderr, "%s\n", failed > 8 ? "; ..." : "");
		status = 3;
	} else {
		status = 0;
	}
	return status;
}
