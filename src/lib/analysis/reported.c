/* Reported figures (docs/metrics.md "M-reported"): a cell imported from a
 * tool that kept only aggregates carries the figures that tool printed
 * (formats/run-v1.md 2.3).  They are taken as they are: nothing is
 * recomputed or estimated, and a figure the source did not give stays
 * unknown. */
#include "analysis/reported.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/c_locale.h"

int tt__cell_is_reported(const struct tt_cell_info *c)
{
	return !c->trace && (c->n_reported || c->reported_status) &&
	       (c->state == TT_CELL_DONE || c->state == TT_CELL_INTERRUPTED);
}

static double num(const struct tt_cell_info *c, const char *key)
{
	double v;
	return tt_cell_reported(c, key, &v) ? v : NAN;
}

static long count(const struct tt_cell_info *c, const char *key, long dflt)
{
	double v;
	return tt_cell_reported(c, key, &v) && v >= 0 && v < 9e18 ? (long)v : dflt;
}

/* A distribution from NAME_mean, NAME_p50, NAME_min, NAME_max, NAME_pQ
 * (each quantile asked for) and NAME_n. */
static void dist(const struct tt_cell_info *c, const char *name,
		 const struct tt_analysis_opts *o, struct tt_dist *d)
{
	char key[64];
	int any = 0;

	snprintf(key, sizeof key, "%s_mean", name);
	any |= isfinite(d->mean = num(c, key));
	snprintf(key, sizeof key, "%s_p50", name);
	any |= isfinite(d->p50 = num(c, key));
	snprintf(key, sizeof key, "%s_min", name);
	any |= isfinite(d->min = num(c, key));
	snprintf(key, sizeof key, "%s_max", name);
	any |= isfinite(d->max = num(c, key));
	for (size_t i = 0; i < o->n_quantiles && i < TT_MAX_QUANTILES; i++) {
		tt__snprintf_c(key, sizeof key, "%s_p%g", name, o->quantiles[i]);
		any |= isfinite(d->q[i] = num(c, key));
	}
	snprintf(key, sizeof key, "%s_n", name);
	/* The count of samples, or 1: "present, count not reported". */
	d->n = any ? (size_t)count(c, key, 1) : 0;
}

void tt__figures_reported(const struct tt_cell_info *c, const struct tt_analysis_opts *o,
			  struct tt_cell_figures *f)
{
	f->total_tok_s = num(c, "total_tok_s");
	f->measured_s = num(c, "measured_s");
	f->avg_active = num(c, "avg_active");
	f->avg_active_source = "reported";
	f->output_tokens = count(c, "output_tokens", -1);
	f->completed = count(c, "completed", -1);
	f->requests = count(c, "requests", 0);
	f->errors = count(c, "errors", 0);
	f->prompt_tokens = count(c, "prompt_tokens", -1);
	f->waiting_mean = num(c, "waiting_mean");
	f->waiting_max = num(c, "waiting_max");
	f->waiting_share = num(c, "waiting_share");
	f->running_mean = num(c, "running_mean");
	f->has_server_metrics = isfinite(f->running_mean) || isfinite(f->waiting_mean);
	dist(c, "ttft_ms", o, &f->ttft_ms);
	dist(c, "tbt_ms", o, &f->tbt_ms);
	dist(c, "per_request_tok_s", o, &f->per_request_tok_s);
	f->status = TT_STATUS_VALID;
	for (int s = 0; c->reported_status && s < TT_STATUS_COUNT_; s++)
		if (strcmp(c->reported_status, tt_status_key((enum tt_status)s)) == 0)
			f->status = (enum tt_status)s;
	snprintf(f->reason, sizeof f->reason, "%s%sfigures as the source tool reported them "
		 "(imported; no per-request times)",
		 c->reason ? c->reason : "", c->reason ? "; " : "");
}
