/* The live progress line: cell, elapsed time, ETA, tokens/s, streams
 * open and errors, redrawn on stderr when it is a terminal. */
#include <math.h>
#include <stdio.h>

#include "progress_line.h"
#include "capture.h"
#include "xfer.h"

static void fmt_dur(char *buf, size_t len, double s)
{
	if (s < 0 || !isfinite(s))
		snprintf(buf, len, "?");
	else if (s < 60)
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

void progress_tick(struct cap *c, int64_t now, double cell_elapsed_s)
{
	char el[16], eta[16];
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
	fmt_dur(el, sizeof el, (double)(now - c->run_start) / 1e9);
	/* The cells after this one as estimated, and this one as it knows
	 * itself: a readiness check that takes long pushes the ETA out
	 * instead of letting it reach 0 s. */
	fmt_dur(eta, sizeof eta, c->remaining_est_s - c->cell_est_s +
				 (isnan(c->cell_left_s) ? fmax(0, c->cell_est_s - cell_elapsed_s)
							: c->cell_left_s));
	if (c->ready_wait_s >= 0)
		/* before the window: requests sent are not all running */
		fprintf(stderr, "\r\033[Kcell %zu/%zu %s %.0fs | elapsed %s ETA %s | %.0f tok/s | "
			"steady state? %.0fs of %.0fs, %d of %d streaming | %lld errors",
			c->cell_i + 1, c->n_cells_run, c->cell_label, cell_elapsed_s, el, eta,
			c->live_tok_s, c->ready_wait_s, c->ready_timeout_s, c->producing,
			c->net.gen_active, (long long)c->net.errors_total);
	else
		fprintf(stderr, "\r\033[Kcell %zu/%zu %s %.0fs | elapsed %s ETA %s | %.0f tok/s | %d active | %lld errors",
			c->cell_i + 1, c->n_cells_run, c->cell_label, cell_elapsed_s, el, eta,
			c->live_tok_s, c->net.gen_active, (long long)c->net.errors_total);
	fflush(stderr);
}
