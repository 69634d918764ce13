/* The comparison of two sides: cells matched by phase, context and
 * concurrency; per figure the change, its simultaneous interval and a
 * verdict (docs/diff.md "Method", "Verdicts"). */
#include "diff/diff_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *key, *name, *alias;
	int higher_better;
	enum tt_phase phase;
} figures[TT_DIFF_FIGURE_COUNT_] = {
	{"total_tok_s", "Total tok/s", "total", 1, TT_PHASE_DECODE},
	{"per_request_tok_s", "Per request tok/s", "per-request", 1, TT_PHASE_DECODE},
	{"ttft_p50_ms", "TTFT p50", "ttft", 0, TT_PHASE_DECODE},
	{"ttft_tail_ms", "TTFT tail", "ttft-tail", 0, TT_PHASE_DECODE},
	{"tbt_p50_ms", "TBT p50", "tbt", 0, TT_PHASE_DECODE},
	{"tbt_tail_ms", "TBT tail", "tbt-tail", 0, TT_PHASE_DECODE},
	{"prefill_tok_s", "Prompt tok/s", "prefill", 1, TT_PHASE_PREFILL},
};

const char *tt_diff_figure_key(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].key : "unknown";
}

const char *tt_diff_figure_name(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].name : "Unknown";
}

int tt_diff_figure_parse(const char *name)
{
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		if (!strcmp(name, figures[f].key) || !strcmp(name, figures[f].alias))
			return f;
	return -1;
}

int tt_diff_figure_higher_better(enum tt_diff_figure f)
{
	return (unsigned)f < TT_DIFF_FIGURE_COUNT_ ? figures[f].higher_better : 1;
}

static const char *const verdict_names[] = {"no significant change", "faster", "slower",
					    "not judged"};
static const char *const verdict_keys[] = {"same", "faster", "slower", "unjudged"};

const char *tt_verdict_name(enum tt_verdict v)
{
	return (unsigned)v <= TT_VERDICT_UNJUDGED ? verdict_names[v] : "unknown";
}

const char *tt_verdict_key(enum tt_verdict v)
{
	return (unsigned)v <= TT_VERDICT_UNJUDGED ? verdict_keys[v] : "unknown";
}

double tt__diff_figure_of(const struct tt_cell_figures *c, enum tt_diff_figure f, size_t tail_q)
{
	if (c->phase != figures[f].phase)
		return NAN;
	switch (f) {
	case TT_DIFF_TOTAL:
		return c->total_tok_s;                 /* M-total */
	case TT_DIFF_PER_REQUEST:
		return c->per_request_tok_s.p50;       /* M-per-request */
	case TT_DIFF_TTFT_P50:
		return c->ttft_ms.p50;                 /* M-ttft */
	case TT_DIFF_TTFT_TAIL:
		return tail_q < TT_MAX_QUANTILES ? c->ttft_ms.q[tail_q] : NAN;
	case TT_DIFF_TBT_P50:
		return c->tbt_ms.p50;                  /* M-tbt */
	case TT_DIFF_TBT_TAIL:
		return tail_q < TT_MAX_QUANTILES ? c->tbt_ms.q[tail_q] : NAN;
	case TT_DIFF_PREFILL:
		return c->total_tok_s;                 /* M-prefill: the prompt tok/s */
	default:
		return NAN;
	}
}

/* ---- cells ------------------------------------------------------------- */

static const struct tt_cell_figures *find_cell(const struct tt_report *r, enum tt_phase ph,
					       int64_t ctx, int conc)
{
	for (size_t i = 0; i < r->n_cells; i++)
		if (r->cells[i].phase == ph && r->cells[i].context == ctx &&
		    (ph == TT_PHASE_PREFILL || r->cells[i].concurrency == conc))
			return &r->cells[i];
	return NULL;
}

/* A side's status for a cell: the first run's that has it; mixed when the
 * replicates disagree.  Returns 0 when no run has the cell. */
static int side_status(const struct tt_diff_side *s, enum tt_phase ph, int64_t ctx, int conc,
		       enum tt_status *st, int *mixed)
{
	int found = 0;

	*mixed = 0;
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct tt_cell_figures *c = find_cell(s->runs[i].rep, ph, ctx, conc);
		if (!c)
			continue;
		if (!found)
			*st = c->status;
		else if (*st != c->status)
			*mixed = 1;
		found = 1;
	}
	return found;
}

/* One side's estimate of a figure: mean of the runs' log figures and the
 * variance of that mean (docs/diff.md "Replicates"). */
struct est {
	double mu, var;
	size_t runs, missing, no_se;
	int samples; /* some run had raw samples */
};

static void side_estimate(const struct tt_diff_side *s, enum tt_phase ph, int64_t ctx, int conc,
			  enum tt_diff_figure f, struct est *e)
{
	double sum = 0, sum2 = 0, se2 = 0, x[TT_DIFF_MAX_RUNS];
	size_t n_se = 0, n = 0;

	memset(e, 0, sizeof *e);
	for (size_t i = 0; i < s->n_runs; i++) {
		const struct tt__run_boot *rb = &s->runs[i];
		const struct tt_cell_figures *c = find_cell(rb->rep, ph, ctx, conc);
		double v;
		const struct tt__boot *b;
		if (!c)
			continue;
		v = tt__diff_figure_of(c, f, rb->tail_q);
		if (!(v > 0) || !isfinite(v)) {
			e->missing++;
			continue;
		}
		b = &rb->boot[c - rb->rep->cells][f];
		e->samples |= rb->have_samples;
		if (isfinite(b->se)) {
			se2 += b->se * b->se;
			n_se++;
		} else {
			e->no_se++;
		}
		if (n < sizeof x / sizeof *x)
			x[n] = log(v);
		sum += log(v);
		n++;
	}
	e->runs = n;
	if (n == 0) {
		e->mu = e->var = NAN;
		return;
	}
	e->mu = sum / (double)n;
	if (n == 1) {
		e->var = n_se ? se2 : NAN;
		return;
	}
	for (size_t i = 0; i < n && i < sizeof x / sizeof *x; i++)
		sum2 += (x[i] - e->mu) * (x[i] - e->mu);
	{
		double between = sum2 / (double)(n - 1), within = n_se ? se2 / (double)n_se : NAN;
		/* The spread between runs holds the spread within each; with few
		 * runs it can come out small by chance, so the bootstrap's is a
		 * floor. */
		e->var = (isnan(within) || between > within ? between : within) / (double)n;
	}
}

/* Standard normal upper quantile: x with P(Z > x) = q, by bisection. */
static double z_upper(double q)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(mid / sqrt(2.0)) > q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static void note_side(char *buf, size_t len, const char *side, const struct est *e,
		      enum tt_status st)
{
	if (e->runs == 0)
		snprintf(buf, len, "no %s figure (%s)", side, tt_status_name(st));
	else if (!e->samples)
		snprintf(buf, len, "%s has figures but no raw samples: no confidence interval", side);
	else
		snprintf(buf, len, "%s: too few samples for a confidence interval with one run", side);
}

static int cell_order(const void *x, const void *y)
{
	const struct tt_diff_cell *a = x, *b = y;
	int ga = a->presence == TT_DIFF_BOTH ? !a->status_changed : 1 + (int)a->presence;
	int gb = b->presence == TT_DIFF_BOTH ? !b->status_changed : 1 + (int)b->presence;

	if (ga != gb)
		return ga - gb;
	if (a->phase != b->phase)
		return (int)a->phase - (int)b->phase;
	if (a->context != b->context)
		return a->context < b->context ? -1 : 1;
	return a->concurrency - b->concurrency;
}

static int add_key(struct tt_diff *d, size_t *cap, const struct tt_cell_figures *c)
{
	for (size_t i = 0; i < d->n_cells; i++)
		if (d->cells[i].phase == c->phase && d->cells[i].context == c->context &&
		    (c->phase == TT_PHASE_PREFILL || d->cells[i].concurrency == c->concurrency))
			return 0;
	if (d->n_cells == *cap) {
		size_t n = *cap ? *cap * 2 : 32;
		struct tt_diff_cell *g = realloc(d->cells, n * sizeof *g);
		if (!g)
			return -1;
		d->cells = g;
		*cap = n;
	}
	memset(&d->cells[d->n_cells], 0, sizeof *d->cells);
	d->cells[d->n_cells].phase = c->phase;
	d->cells[d->n_cells].context = c->context;
	d->cells[d->n_cells].concurrency = c->phase == TT_PHASE_PREFILL ? 1 : c->concurrency;
	d->n_cells++;
	return 0;
}

static void judge(struct tt_diff *d, struct tt_diff_cell *dc)
{
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		struct tt_diff_value *v = &dc->v[f];
		double sd;
		int better;

		if (!v->applies || v->verdict == TT_VERDICT_UNJUDGED)
			continue;
		sd = sqrt(v->se_base * v->se_base + v->se_cand * v->se_cand);
		v->ci_lo_pct = (exp(log(v->ratio) - d->z_crit * sd) - 1) * 100;
		v->ci_hi_pct = (exp(log(v->ratio) + d->z_crit * sd) - 1) * 100;
		better = tt_diff_figure_higher_better((enum tt_diff_figure)f) ? v->ratio > 1 :
										 v->ratio < 1;
		if (fabs(v->z) > d->z_crit && fabs(v->change_pct) >= d->opts.min_change)
			v->verdict = better ? TT_VERDICT_FASTER : TT_VERDICT_SLOWER;
		else
			v->verdict = TT_VERDICT_SAME;
	}
}

enum tt_code tt_diff_compare(const struct tt_diff_side *base, const struct tt_diff_side *cand,
			     struct tt_diff **out, struct tt_error *err)
{
	struct tt_diff *d;
	size_t cap = 0;

	if (!base || !cand || !base->n_runs || !cand->n_runs)
		return tt_error_set(err, TT_EARG, "a diff needs at least one run on each side");
	d = calloc(1, sizeof *d);
	if (!d)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	d->opts = base->o;
	d->base = base;
	d->cand = cand;
	/* Every cell of either side, once. */
	for (int side = 0; side < 2; side++) {
		const struct tt_diff_side *s = side ? cand : base;
		for (size_t i = 0; i < s->n_runs; i++)
			for (size_t k = 0; k < s->runs[i].rep->n_cells; k++)
				if (add_key(d, &cap, &s->runs[i].rep->cells[k])) {
					tt_diff_free(d);
					return tt_error_set(err, TT_ENOMEM, "out of memory");
				}
	}
	for (size_t i = 0; i < d->n_cells; i++) {
		struct tt_diff_cell *dc = &d->cells[i];
		int hb = side_status(base, dc->phase, dc->context, dc->concurrency, &dc->base_status,
				     &dc->base_mixed);
		int hc = side_status(cand, dc->phase, dc->context, dc->concurrency, &dc->cand_status,
				     &dc->cand_mixed);

		dc->presence = hb && hc ? TT_DIFF_BOTH : hb ? TT_DIFF_BASE_ONLY : TT_DIFF_CAND_ONLY;
		dc->status_changed = hb && hc && dc->base_status != dc->cand_status;
		d->n_status_changed += (size_t)dc->status_changed;
		d->n_base_only += dc->presence == TT_DIFF_BASE_ONLY;
		d->n_cand_only += dc->presence == TT_DIFF_CAND_ONLY;
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			struct tt_diff_value *v = &dc->v[f];
			struct est eb, ec;

			v->applies = figures[f].phase == dc->phase;
			v->base = v->cand = v->ratio = v->change_pct = NAN;
			v->ci_lo_pct = v->ci_hi_pct = v->z = v->se_base = v->se_cand = NAN;
			v->verdict = TT_VERDICT_UNJUDGED;
			if (!v->applies)
				continue;
			side_estimate(base, dc->phase, dc->context, dc->concurrency,
				      (enum tt_diff_figure)f, &eb);
			side_estimate(cand, dc->phase, dc->context, dc->concurrency,
				      (enum tt_diff_figure)f, &ec);
			if (eb.runs)
				v->base = exp(eb.mu);
			if (ec.runs)
				v->cand = exp(ec.mu);
			if (dc->presence != TT_DIFF_BOTH) {
				snprintf(v->note, sizeof v->note, "cell only in the %s",
					 hb ? "base" : "candidate");
				continue;
			}
			if (!eb.runs || !ec.runs) {
				note_side(v->note, sizeof v->note, eb.runs ? "candidate" : "base",
					  eb.runs ? &ec : &eb,
					  eb.runs ? dc->cand_status : dc->base_status);
				continue;
			}
			v->ratio = v->cand / v->base;
			v->change_pct = (v->ratio - 1) * 100;
			v->worse = tt_diff_figure_higher_better((enum tt_diff_figure)f) ? v->ratio < 1 :
											 v->ratio > 1;
			if (isnan(eb.var) || isnan(ec.var)) {
				note_side(v->note, sizeof v->note, isnan(eb.var) ? "base" : "candidate",
					  isnan(eb.var) ? &eb : &ec,
					  isnan(eb.var) ? dc->base_status : dc->cand_status);
				continue;
			}
			v->se_base = sqrt(eb.var);
			v->se_cand = sqrt(ec.var);
			{
				double sd = sqrt(eb.var + ec.var), dl = ec.mu - eb.mu;
				v->z = sd > 0 ? dl / sd : dl == 0 ? 0 : dl > 0 ? INFINITY : -INFINITY;
			}
			if (eb.missing || ec.missing)
				snprintf(v->note, sizeof v->note,
					 "figure missing in %zu of the runs; judged on the others",
					 eb.missing + ec.missing);
			v->verdict = TT_VERDICT_SAME; /* judged below */
			d->n_tests++;
		}
	}
	/* Bonferroni over every comparison judged: the chance that any verdict
	 * of this diff is a false "faster" or "slower" stays below alpha. */
	d->z_crit = z_upper(d->opts.alpha / (2.0 * (double)(d->n_tests ? d->n_tests : 1)));
	for (size_t i = 0; i < d->n_cells; i++) {
		judge(d, &d->cells[i]);
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *v = &d->cells[i].v[f];
			if (!v->applies)
				continue;
			d->n_faster += v->verdict == TT_VERDICT_FASTER;
			d->n_slower += v->verdict == TT_VERDICT_SLOWER;
			d->n_same += v->verdict == TT_VERDICT_SAME;
			d->n_unjudged += v->verdict == TT_VERDICT_UNJUDGED;
		}
	}
	if (d->n_cells)
		qsort(d->cells, d->n_cells, sizeof *d->cells, cell_order);
	*out = d;
	return TT_OK;
}

void tt_diff_free(struct tt_diff *d)
{
	if (!d)
		return;
	free(d->cells);
	free(d);
}

size_t tt_diff_gate(const struct tt_diff *d, enum tt_diff_figure f, double threshold_pct)
{
	size_t n = 0;

	if ((unsigned)f >= TT_DIFF_FIGURE_COUNT_)
		return 0;
	for (size_t i = 0; i < d->n_cells; i++) {
		const struct tt_diff_value *v = &d->cells[i].v[f];
		if (d->cells[i].presence == TT_DIFF_BOTH && v->verdict == TT_VERDICT_SLOWER &&
		    fabs(v->change_pct) > threshold_pct)
			n++;
	}
	return n;
}
