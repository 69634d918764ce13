/* The live progress line: which cell (or search step), what it is doing
 * now (warm-up, readiness, measuring, drain), elapsed time, an ETA,
 * tokens/s, the streams running and waiting, offered against achieved
 * rate in open loop, and errors, redrawn on stderr when it is a terminal
 * (docs/capture.md "The progress line"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "progress_line.h"
#include "capture.h"
#include "xfer.h"

/* A duration as the line shows it; never negative, never unknown: a time
 * that cannot be told is shown as 0 s rather than "?" (the callers give
 * a lower bound where they know no better). */
static void fmt_dur(char *buf, size_t len, double s)
{
	if (!(s > 0) || !isfinite(s))
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void progress_clear(struct cap *c)
{
	if (c->tty)
		fputs("\r\033[K", stderr);
}

double progress_eta_s(const struct cap *c, double cell_elapsed_s)
{
	/* The cells after this one as estimated (remaining_est_s still holds
	 * this cell's estimate), and this one as it knows itself: a readiness
	 * check that takes long pushes the ETA out instead of letting it
	 * reach 0 s. */
	double after = c->remaining_est_s - c->cell_est_s;
	double here = isnan(c->cell_left_s) ? c->cell_est_s - cell_elapsed_s : c->cell_left_s;

	return fmax(0, after) + fmax(0, here);
}

/* What the cell is doing, with its own time: "measuring 12s of 30s". */
static void fmt_phase(const struct cap *c, double cell_elapsed_s, char *buf, size_t len)
{
	const char *ph = c->phase ? c->phase : "starting";
	char in[16], of[16];
	double t = cell_elapsed_s - c->phase_start_s;
	int waiting = c->net.gen_active - c->producing;

	fmt_dur(in, sizeof in, t);
	if (!strcmp(ph, "warm-up") && c->rate_offered <= 0)
		snprintf(buf, len, "warm-up %s, %d of %d prompts warming", in, c->warm_left,
			 c->warm_total);
	else if (!strcmp(ph, "readiness") && c->ready_foreseen) {
		fmt_dur(of, sizeof of, c->ready_timeout_s);
		snprintf(buf, len, "readiness %s of %s (cannot pass: more workers than the "
				   "server's slots), %d of %d streaming",
			 in, of, c->producing, c->net.gen_active);
	} else if (!strcmp(ph, "readiness")) {
		fmt_dur(of, sizeof of, c->ready_timeout_s);
		snprintf(buf, len, "readiness %s (window at %gs steady, by %s at the latest), "
				   "%d of %d streaming",
			 in, c->o_readiness_s, of, c->producing, c->net.gen_active);
	} else if (!strcmp(ph, "measuring") || !strcmp(ph, "warm-up") || !strcmp(ph, "drain")) {
		/* the planned length as given: "of 0.5s", not "of 0s" */
		if (c->phase_len_s < 60)
			snprintf(of, sizeof of, "%.3gs", c->phase_len_s);
		else
			fmt_dur(of, sizeof of, c->phase_len_s);
		snprintf(buf, len, "%s %s of %s%s, %d streaming, %d waiting", ph, in,
			 !strcmp(ph, "drain") ? "at most " : "", of, c->producing,
			 waiting > 0 ? waiting : 0);
	} else
		snprintf(buf, len, "%s %s, %d streaming, %d waiting", ph, in, c->producing,
			 waiting > 0 ? waiting : 0);
}

void progress_tick(struct cap *c, int64_t now, double cell_elapsed_s)
{
	char el[16], eta[16], phase[160], where[96], rate[64] = "", after[48] = "";
	double dt;

	if (!c->tty || now < c->progress_next)
		return;
	c->progress_next = now + 250000000;
	dt = (double)(now - c->progress_t_prev) / 1e9;
	if (dt >= 1) {
		c->live_tok_s = (double)(c->net.tokens_total - c->progress_tokens_prev) / dt;
		c->progress_tokens_prev = c->net.tokens_total;
		c->progress_t_prev = now;
	}
	if (c->rate_offered > 0) {
		/* achieved: requests that ended per second, over the last
		 * second or more (M-rate's achieved rate counts the window's
		 * only; this is the live view) */
		double rdt = (double)(now - c->rate_t_prev) / 1e9;
		if (c->rate_t_prev == 0 || rdt < 0) {
			c->rate_t_prev = now;
			c->rate_ended_prev = c->rate_ended;
		} else if (rdt >= 1) {
			c->rate_achieved = (double)(c->rate_ended - c->rate_ended_prev) / rdt;
			c->rate_ended_prev = c->rate_ended;
			c->rate_t_prev = now;
		}
		if (isnan(c->rate_achieved))
			snprintf(rate, sizeof rate, " | offered %.4g/s achieved -", c->rate_offered);
		else
			snprintf(rate, sizeof rate, " | offered %.4g/s achieved %.3g/s",
				 c->rate_offered, c->rate_achieved);
	}
	fmt_dur(el, sizeof el, (double)(now - c->run_start) / 1e9);
	fmt_dur(eta, sizeof eta, progress_eta_s(c, cell_elapsed_s));
	if (c->search_step > 0) {
		snprintf(where, sizeof where, "search step %d %s", c->search_step, c->cell_label);
		snprintf(after, sizeof after, " (this step; at most %d more)", c->search_left);
	} else {
		size_t n = c->n_cells_run > c->cell_i ? c->n_cells_run : c->cell_i + 1;
		snprintf(where, sizeof where, "cell %zu/%zu %s", c->cell_i + 1, n, c->cell_label);
	}
	fmt_phase(c, cell_elapsed_s, phase, sizeof phase);
	fprintf(stderr, "\r\033[K%s | %s%s | elapsed %s ETA %s%s | %.0f tok/s | %lld errors", where,
		phase, rate, el, eta, after, c->live_tok_s, (long long)c->net.errors_total);
	fflush(stderr);
}

void progress_phase(struct cap *c, const char *phase, double cell_elapsed_s, double len_s)
{
	c->phase = phase;
	c->phase_start_s = cell_elapsed_s;
	c->phase_len_s = len_s;
	c->progress_next = 0; /* redraw now: a new phase is news */
}
