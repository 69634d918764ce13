/* Open-loop sweeps, run after the cells of the matrix (docs/capture.md
 * "Sweeps and the SLO limit").  Each step adds one rate cell to the run,
 * measures it like any other (cell_run), then reads the run back through
 * the library (tt_analyze) to decide the next rate from its figures
 * (docs/metrics.md M-rate, M-sustained, M-rate-limit), so the decisions
 * use exactly the figures the report will show.
 *
 *   --rate-sweep: from the lowest rate asked (--rates, else 1/s), double
 *     until the server falls behind (achieved below 0.9 x scheduled) or the
 *     achieved rate stops rising (below 1.05 x the previous); the capacity
 *     is the highest achieved rate; then measure 0.25, 0.5, 0.75 and 0.9
 *     of it.
 *   --slo: with lo the highest rate meeting the SLOs (every lower one
 *     meeting too) and hi the lowest above it that does not: double from
 *     the highest measured while there is no hi, halve from the lowest
 *     while there is no lo, then bisect until hi / lo - 1 <= 5 %.
 *
 * Every loop is bounded: at most SWEEP_MAX_CELLS cells per context.
 *
 * The run is the sweep's only state: each decision is made from the rate
 * cells measured so far (and the settings, recorded in the manifest), a
 * cell already measured is not measured again, and the budget counts the
 * cells the sweep added to the run.  A resumed run (--resume) therefore
 * replays the decisions made before it stopped and carries on with the
 * next one, as the capture would have without the stop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sweep.h"
#include "capture.h"
#include "capture_opts.h"
#include "cell.h"
#include "cell_end.h"
#include "progress_line.h"
#include "tokentrace/analysis.h"
#include "tokentrace/run.h"

#define SWEEP_MAX_CELLS 16
#define SWEEP_PRECISION 0.05

/* Rates are rounded to 3 significant digits: ids stay short and a probe
 * close to one measured is that one. */
static double round3(double r)
{
	double scale = pow(10, 2 - floor(log10(r)));
	return round(r * scale) / scale;
}

static long find_rate_cell(const struct tt_manifest *m, int64_t ctx, double rate)
{
	char id[64];
	tt_rate_cell_id(ctx, rate, id, sizeof id);
	return tt_manifest_find_cell(m, id);
}

/* Cells the sweep may still add for ctx: SWEEP_MAX_CELLS less the rate
 * cells of ctx in the run that --rates did not ask for (the sweep added
 * them, in this capture or before a resume). */
static int budget_left(const struct cap *c, int64_t ctx)
{
	const struct tt_manifest *m = tt_run_writer_manifest(c->run);
	int used = 0;

	for (size_t i = 0; i < m->n_cells; i++) {
		int asked = 0;
		if (m->cells[i].phase != TT_PHASE_RATE || m->cells[i].context != ctx)
			continue;
		for (size_t k = 0; k < c->o->n_rates && !asked; k++)
			asked = c->o->rates[k] == m->cells[i].rate;
		used += !asked;
	}
	return SWEEP_MAX_CELLS - used;
}

/* Measure (context, rate) unless done already.  Returns 0, 1 to stop the
 * sweep (the user stopped, an error: message printed, or the budget is
 * spent: *budget then 0). */
static int measure(struct cap *c, int64_t ctx, double rate, int *budget)
{
	struct tt_manifest *m = tt_run_writer_manifest(c->run);
	long i = find_rate_cell(m, ctx, rate);
	struct tt_error err;
	enum tt_code rc;
	size_t idx;

	*budget = budget_left(c, ctx);
	if (i >= 0 && m->cells[i].state == TT_CELL_DONE)
		return 0;
	if ((i < 0 && *budget <= 0) || *c->net.stop)
		return 1;
	if (i < 0) {
		if (tt_manifest_add_rate_cell(m, ctx, rate, &idx) != TT_OK) {
			fprintf(stderr, "error: out of memory\n");
			return 1;
		}
		cell_commit(c);
	} else {
		idx = (size_t)i;
	}
	snprintf(c->cell_label, sizeof c->cell_label, "%s", m->cells[idx].id);
	c->cell_est_s = c->o->warmup_s + c->o->duration_s + c->o->drain_s + 1;
	/* The line counts this step alone in its ETA and says how many more
	 * the budget allows: the next rates depend on this step's figures. */
	c->remaining_est_s = c->cell_est_s;
	c->cell_left_s = NAN;
	c->ready_wait_s = -1;
	c->search_step = SWEEP_MAX_CELLS - *budget + (i < 0);
	c->search_left = *budget - (i < 0);
	if (c->search_left < 0)
		c->search_left = 0;
	progress_phase(c, NULL, 0, 0);
	rc = cell_run(c, idx, &err);
	if (rc == TT_EOF) {
		progress_clear(c);
		return 1;
	}
	if (rc != TT_OK) {
		progress_clear(c);
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	return 0;
}

/* The run's figures now. */
static struct tt_report *analyze(struct cap *c)
{
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts o;
	struct tt_error err;
	enum tt_code rc;

	tt_analysis_opts_init(&o);
	if (c->o->slo && tt_slo_parse(c->o->slo, &o.slo, &err) != TT_OK)
		return NULL;
	if (tt_run_open(tt_run_writer_dir(c->run), &run, &err) != TT_OK)
		return NULL;
	rc = tt_analyze(run, &o, &rep, &err);
	tt_run_free(run);
	if (rc != TT_OK && rc != TT_WARN) {
		fprintf(stderr, "warning: cannot read the run back: %s\n", err.msg);
		return NULL;
	}
	return rep;
}

static const struct tt_cell_figures *figures(const struct tt_report *rep, int64_t ctx,
					     double rate)
{
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_RATE && rep->cells[i].context == ctx &&
		    rep->cells[i].rate == rate)
			return &rep->cells[i];
	return NULL;
}

static double lowest_rate(const struct cap_opts *o)
{
	double lo = o->n_rates ? o->rates[0] : 1;
	for (size_t i = 1; i < o->n_rates; i++)
		if (o->rates[i] < lo)
			lo = o->rates[i];
	return lo;
}

/* --rate-sweep: the saturation rate, then a spread below it. */
static int saturation(struct cap *c, int64_t ctx, int *budget, double *cap_out)
{
	double rate = round3(lowest_rate(c->o)), prev = 0;
	struct tt_report *rep;

	*cap_out = NAN;
	for (;;) {
		const struct tt_cell_figures *f;
		int stop;

		if (measure(c, ctx, rate, budget))
			return *budget > 0 ? 1 : 0;
		rep = analyze(c);
		if (!rep)
			return 1;
		f = figures(rep, ctx, rate);
		/* The server's side of M-sustained only: a client that was late
		 * once (a busy machine) says nothing about the server's limit. */
		stop = !f || tt_rate_server_behind(&f->open_loop) ||
		       !(f->open_loop.achieved_req_s >= 1.05 * prev);
		if (f && f->open_loop.achieved_req_s > prev)
			prev = f->open_loop.achieved_req_s;
		tt_report_free(rep);
		if (stop)
			break;
		rate = round3(rate * 2);
	}
	*cap_out = prev;
	if (!(prev > 0))
		return 0;
	{
		static const double spread[] = {0.25, 0.5, 0.75, 0.9};
		for (size_t k = 0; k < sizeof spread / sizeof *spread; k++)
			if (measure(c, ctx, round3(prev * spread[k]), budget))
				return *budget > 0 ? 1 : 0;
	}
	return 0;
}

/* --slo: the bounded search for the highest rate meeting the SLOs. */
static int slo_search(struct cap *c, int64_t ctx, int *budget, double *lo_out, double *hi_out,
		      double *cap_out)
{
	for (;;) {
		struct tt_report *rep = analyze(c);
		double lo, hi, next, minr = INFINITY, maxr = 0;
		size_t n;

		if (!rep)
			return 1;
		n = tt_report_rate_limit(rep, ctx, &lo, &hi);
		*cap_out = tt_report_rate_capacity(rep, ctx);
		for (size_t i = 0; i < rep->n_cells; i++)
			if (rep->cells[i].phase == TT_PHASE_RATE && rep->cells[i].context == ctx &&
			    rep->cells[i].open_loop.due > 0) {
				minr = fmin(minr, rep->cells[i].rate);
				maxr = fmax(maxr, rep->cells[i].rate);
			}
		tt_report_free(rep);
		*lo_out = lo;
		*hi_out = hi;
		if (n == 0)
			next = round3(lowest_rate(c->o));
		else if (isnan(hi))
			next = round3(maxr * 2);
		else if (isnan(lo))
			next = round3(minr / 2);
		else if (hi / lo - 1 <= SWEEP_PRECISION)
			return 0;
		else
			next = round3((lo + hi) / 2);
		if (!isnan(lo) && !isnan(hi) && (next <= lo || next >= hi))
			return 0; /* no rate left between them at 3 digits */
		if (next < 1e-3)
			return 0;
		{
			/* tried already (measured: the same figures would decide
			 * the same again; or failed in this capture, as a resume
			 * retries failed cells first: trying again would loop) */
			if (find_rate_cell(tt_run_writer_manifest(c->run), ctx, next) >= 0)
				return 0;
		}
		if (measure(c, ctx, next, budget))
			return *budget > 0 ? 1 : 0;
	}
}

int run_sweep(struct cap *c)
{
	const struct cap_opts *o = c->o;

	if (!o->rate_sweep && !o->slo)
		return 0;
	for (size_t i = 0; i < o->n_contexts && !*c->net.stop; i++) {
		int64_t ctx = o->contexts[i];
		int budget = budget_left(c, ctx);
		double cap = NAN, lo = NAN, hi = NAN, measured_cap = NAN;

		if (o->rate_sweep && saturation(c, ctx, &budget, &cap))
			return *c->net.stop ? 0 : 1;
		if (o->slo && slo_search(c, ctx, &budget, &lo, &hi, &measured_cap))
			return *c->net.stop ? 0 : 1;
		progress_clear(c);
		if (!o->quiet) {
			fprintf(stderr, "tokentrace-capture: context %lld:", (long long)ctx);
			if (o->rate_sweep)
				fprintf(stderr, " saturation %.4g requests/s;", cap);
			if (o->slo && !isnan(lo) && !isnan(hi))
				fprintf(stderr, " highest rate meeting the SLOs %g/s (limit in [%g, "
						"%g)/s);", lo, lo, hi);
			else if (o->slo && !isnan(lo))
				fprintf(stderr, " SLOs met up to %g/s, the highest rate measured;",
					lo);
			else if (o->slo)
				fprintf(stderr, " no rate measured meets the SLOs;");
			/* M-rate-limit: never a limit above the capacity unsaid */
			if (o->slo && !isnan(lo) && !isnan(measured_cap) && lo > measured_cap)
				fprintf(stderr, " that rate is above the measured capacity %.4g "
						"requests/s (the most the server ended): it was not "
						"sustained;", measured_cap);
			fprintf(stderr, "%s\n", budget <= 0 ? " (cell budget spent)" : "");
		}
	}
	return 0;
}
