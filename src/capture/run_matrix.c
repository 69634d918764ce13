/* Running the matrix: every cell the run has not finished, in the
 * manifest's order, with the start line, the pause between cells and the
 * ETA the progress line shows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "run_matrix.h"
#include "capture.h"
#include "capture_opts.h"
#include "cell.h"
#include "monotonic.h"
#include "net_loop.h"
#include "progress_line.h"
#include "protocol/server.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"
#include "xfer.h"

static double estimate_cell_s(const struct cap *c, const struct tt_cell_info *ci)
{
	if (ci->phase == TT_PHASE_PREFILL)
		return 1;
	if (ci->phase == TT_PHASE_RATE)
		return c->o->warmup_s + c->o->duration_s + 1;
	/* A readiness check that cannot pass (more workers than llama.cpp's
	 * slots) waits its whole timeout: foreseen, so counted. */
	{
		const struct tt_manifest *m = tt_run_writer_manifest(c->run);
		if (m->slots > 0 && ci->concurrency > m->slots)
			return c->o->duration_s + c->o->readiness_timeout_s + 2;
	}
	return c->o->duration_s + c->o->readiness_s + 2;
}

/* Cells still to measure: never started, cut by a crash or the user, or
 * failed (a resume retries them: the server that failed them may be back,
 * and a failed cell measured nothing worth keeping). */
static int to_run(enum tt_cell_state st)
{
	return st == TT_CELL_PENDING || st == TT_CELL_RUNNING || st == TT_CELL_INTERRUPTED ||
	       st == TT_CELL_FAILED;
}

int run_matrix(struct cap *c, struct tt_run_writer *const *reps, size_t n_reps)
{
	struct cap_opts *o = c->o;
	struct tt_error err;
	enum tt_code rc;
	struct tt_manifest *wm;
	size_t todo = 0, retry = 0, n_cells;
	double est = 0;
	unsigned char *run_it;

	if (n_reps == 0) { /* no --repeat: the one run */
		reps = &c->run;
		n_reps = 1;
	}
	c->run = reps[0];
	wm = tt_run_writer_manifest(c->run);
	n_cells = wm->n_cells;
	run_it = calloc(n_cells * n_reps + 1, 1);
	if (!run_it) {
		fprintf(stderr, "tokentrace-capture: error: out of memory\n");
		return 1;
	}
	/* Decided once: a cell that fails now is not retried in this pass.
	 * Repeats (--repeat) are runs of the same matrix, so cell i is the
	 * same cell in each (docs/capture.md "Repeats"). */
	for (size_t r = 0; r < n_reps; r++) {
		struct tt_manifest *rm = tt_run_writer_manifest(reps[r]);
		for (size_t i = 0; i < n_cells && i < rm->n_cells; i++) {
			enum tt_cell_state st = rm->cells[i].state;
			if (to_run(st) || (r == 0 && i < c->n_redo && c->redo[i])) {
				run_it[i * n_reps + r] = 1;
				todo++;
				retry += st == TT_CELL_FAILED;
				est += estimate_cell_s(c, &rm->cells[i]);
			}
		}
	}
	if (retry && !o->quiet)
		fprintf(stderr, "tokentrace-capture: retrying %zu failed cell(s)\n", retry);
	c->n_cells_run = todo;
	c->run_start = c->progress_t_prev = now_ns();
	c->next_scrape = now_ns();
	if (!o->quiet) {
		char kv[96] = "KV capacity unknown", slots[96] = "", where[4200];
		if (wm->kv_capacity_tokens > 0)
			snprintf(kv, sizeof kv, "KV capacity %lld tokens (%s)",
				 (long long)wm->kv_capacity_tokens,
				 wm->kv_capacity_source ? wm->kv_capacity_source : "?");
		if (wm->slot_context > 0 && wm->slots > 0)
			snprintf(slots, sizeof slots, ", %d slot%s of %lld tokens", wm->slots,
				 wm->slots == 1 ? "" : "s", (long long)wm->slot_context);
		else if (wm->slot_context > 0)
			snprintf(slots, sizeof slots, ", slots of %lld tokens",
				 (long long)wm->slot_context);
		if (n_reps > 1)
			snprintf(where, sizeof where, "%zu repeats, '%s' .. '%s'", n_reps,
				 tt_run_writer_dir(reps[0]), tt_run_writer_dir(reps[n_reps - 1]));
		else
			snprintf(where, sizeof where, "'%s'", tt_run_writer_dir(c->run));
		fprintf(stderr, "tokentrace-capture: %s%s%s %s, model '%s', %s%s, %zu cell(s) to run into %s\n",
			tt_engine_name(c->engine), wm->engine_version ? " " : "",
			wm->engine_version ? wm->engine_version : "",
			c->has_metrics ? "with /metrics" : "without /metrics",
			/* The run's copy, cleaned as the engine version is (valid
			 * UTF-8, no control characters: the manifest's strings go
			 * through core/text_clean.c); c->model is the server's
			 * bytes, sent back as they came. */
			wm->served_model ? wm->served_model : wm->model ? wm->model : "?", kv, slots,
			todo, where);
	}
	c->cell_i = 0;
	c->remaining_est_s = est;
	/* Cell by cell, each cell's repeats in a row: slow drift of the
	 * machine or the server then falls on every repeat alike, not on the
	 * last repeats of the matrix. */
	for (size_t k = 0; k < n_cells * n_reps; k++) {
		size_t i = k / n_reps, r = k % n_reps;
		struct tt_cell_info *ci;

		if (!run_it[k])
			continue;
		c->run = reps[r];
		wm = tt_run_writer_manifest(c->run);
		ci = &wm->cells[i];
		if (ci->state == TT_CELL_FAILED && !o->quiet)
			fprintf(stderr, "tokentrace-capture: retrying cell '%s'%s (failed before: %s)\n",
				ci->id, n_reps > 1 ? " of a repeat" : "", ci->reason ? ci->reason : "?");
		else if (!to_run(ci->state) && !o->quiet)
			fprintf(stderr, "tokentrace-capture: measuring cell '%s' again (--redo; it was "
					"%s)\n", ci->id, tt_cell_state_name(ci->state));
		if (*c->net.stop)
			break;
		if (n_reps > 1) {
			char rep[24];
			snprintf(rep, sizeof rep, " rep %u/%u", (unsigned)(r + 1) % 100u,
				 (unsigned)n_reps % 100u);
			snprintf(c->cell_label, sizeof c->cell_label, "%.40s%s", ci->id, rep);
		} else
			snprintf(c->cell_label, sizeof c->cell_label, "%s", ci->id);
		c->cell_est_s = estimate_cell_s(c, ci);
		c->cell_left_s = NAN;
		c->ready_wait_s = -1;
		c->search_step = 0;
		progress_phase(c, NULL, 0, 0);
		rc = cell_run(c, i, &err);
		wm = tt_run_writer_manifest(c->run);
		ci = &wm->cells[i];
		c->remaining_est_s -= c->cell_est_s;
		c->cell_i++;
		if (rc == TT_EOF)
			break;
		if (rc != TT_OK) {
			progress_clear(c);
			fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
			c->run = reps[0];
			free(run_it);
			return 1;
		}
		if (ci->state == TT_CELL_FAILED && !o->quiet) {
			progress_clear(c);
			fprintf(stderr, "tokentrace-capture: warning: cell '%s'%s failed: %s\n", ci->id,
				n_reps > 1 ? " of a repeat" : "", ci->reason ? ci->reason : "?");
		}
		if (o->pause_s > 0 && c->cell_i < c->n_cells_run) {
			int64_t until = now_ns() + (int64_t)(o->pause_s * 1e9);
			while (now_ns() < until && !*c->net.stop)
				net_step(&c->net, 20);
		}
	}
	progress_clear(c);
	c->run = reps[0];
	free(run_it);
	return 0;
}
