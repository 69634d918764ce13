/* The comparison of two sides: cells matched by phase, context and
 * concurrency; per figure the change, its simultaneous interval and a
 * verdict (docs/diff.md "Method", "Verdicts"). */
#include "diff/diff_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"

/* ---- cells ------------------------------------------------------------- */

/* Where each run of a side has each cell of the diff: at[run * n + k] is
 * the index of diff cell k in run's report, -1 when the run lacks it.  Built
 * once from a hash of the cells' keys, so matching is linear in the cells
 * (a scan per cell made a diff of 20,000 cells take 35 s: issue 20.9). */
struct sidemap {
	const struct tt_diff_side *s;
	long *at;
	size_t n; /* cells of the diff */
};

/* Open addressing over the diff's cells by (phase, context, concurrency). */
struct keyhash {
	size_t *slot; /* cell index + 1; 0: empty */
	size_t mask;
};

static uint64_t key_hash(enum tt_phase ph, int64_t ctx, int conc)
{
	uint64_t h = (uint64_t)ph * 0x9E3779B97F4A7C15ULL;
	h ^= (uint64_t)ctx + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
	h ^= (uint64_t)(uint32_t)conc + 0x85EBCA77C2B2AE63ULL + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	return h;
}

/* A prefill row is one per context: its concurrency does not count. */
static int key_conc(enum tt_phase ph, int conc)
{
	return ph == TT_PHASE_PREFILL ? 1 : conc;
}

static int keyhash_init(struct keyhash *h, size_t n)
{
	size_t cap = 64;
	while (cap < 2 * n + 2)
		cap *= 2;
	h->slot = calloc(cap, sizeof *h->slot);
	h->mask = cap - 1;
	return h->slot ? 0 : -1;
}

/* The diff cell with this key, or -1; with add, a missing key is put at
 * index add_at (the caller appends that cell). */
static long keyhash_find(struct keyhash *h, const struct tt_diff_cell *cells, enum tt_phase ph,
			 int64_t ctx, int conc, size_t add_at, int add)
{
	size_t i = (size_t)key_hash(ph, ctx, key_conc(ph, conc)) & h->mask;

	for (;; i = (i + 1) & h->mask) {
		const struct tt_diff_cell *c;
		if (!h->slot[i]) {
			if (add)
				h->slot[i] = add_at + 1;
			return -1;
		}
		c = &cells[h->slot[i] - 1];
		if (c->phase == ph && c->context == ctx &&
		    key_conc(c->phase, c->concurrency) == key_conc(ph, conc))
			return (long)(h->slot[i] - 1);
	}
}

static int sidemap_build(struct sidemap *m, const struct tt_diff_side *s, struct keyhash *h,
			 const struct tt_diff_cell *cells, size_t n)
{
	m->s = s;
	m->n = n;
	m->at = malloc((s->n_runs * n > 0 ? s->n_runs * n : 1) * sizeof *m->at);
	if (!m->at)
		return -1;
	for (size_t i = 0; i < s->n_runs * n; i++)
		m->at[i] = -1;
	for (size_t r = 0; r < s->n_runs; r++) {
		const struct tt_report *rep = s->runs[r].rep;
		for (size_t k = 0; k < rep->n_cells; k++) {
			const struct tt_cell_figures *c = &rep->cells[k];
			long at;
			if (c->phase == TT_PHASE_RATE)
				continue;
			at = keyhash_find(h, cells, c->phase, c->context, c->concurrency, 0, 0);
			if (at >= 0 && m->at[r * n + (size_t)at] < 0) /* the first, as a scan finds */
				m->at[r * n + (size_t)at] = (long)k;
		}
	}
	return 0;
}

/* Run r's figures of diff cell k, or NULL. */
static const struct tt_cell_figures *map_cell(const struct sidemap *m, size_t r, size_t k)
{
	long at = m->at[r * m->n + k];
	return at < 0 ? NULL : &m->s->runs[r].rep->cells[at];
}

/* A side's status for a cell (docs/diff.md "Status with replicates"): the
 * runs that have the cell counted by status; *st the status they agree on,
 * or the first run's when they do not (mixed).  Returns 0 when no run has
 * the cell. */
static int side_status(const struct sidemap *m, size_t k, enum tt_status *st, int *mixed,
		       unsigned short *runs)
{
	int found = 0;

	*mixed = 0;
	memset(runs, 0, TT_STATUS_COUNT_ * sizeof *runs);
	for (size_t i = 0; i < m->s->n_runs; i++) {
		const struct tt_cell_figures *c = map_cell(m, i, k);
		if (!c)
			continue;
		if ((unsigned)c->status < TT_STATUS_COUNT_)
			runs[c->status]++;
		if (!found)
			*st = c->status;
		else if (*st != c->status)
			*mixed = 1;
		found = 1;
	}
	return found;
}

/* The sides' sets of statuses differ: a status change. */
static int statuses_differ(const unsigned short *a, const unsigned short *b)
{
	for (int k = 0; k < TT_STATUS_COUNT_; k++)
		if (!a[k] != !b[k])
			return 1;
	return 0;
}

/* One side's estimate of a figure: mean of the runs' log figures and the
 * variance of that mean, with its degrees of freedom (docs/diff.md
 * "Replicates"). */
struct est {
	double mu, var, df;
	size_t runs, missing, no_se;
	int samples; /* some run had raw samples */
	const struct tt__boot *only; /* the bootstrap of a side of one run */
	int point;   /* a side of one run whose figure is a reported point */
	double res;  /* that point's printed precision (+-), figure units */
	int allowance; /* the run-to-run allowance was added (one run, samples) */
	enum tt_diff_basis basis;
};

/* The spread between a side's runs of one figure, pooled over its cells:
 * with two or three runs a cell alone cannot tell it, and the engine's
 * run-to-run noise is taken to be alike in every cell (relative).  vb: the
 * variance of one run's log figure of a cell about the cell's mean over
 * runs; df its degrees of freedom (docs/diff.md "Replicates"). */
struct pooled {
	double vb, df;
};

/* The bootstrap of a run that had no trace: nothing known. */
static const struct tt__boot no_boot = {NAN, 0, 0, 0, {0}, {0}};

/* The log figures of the runs of a side that have the cell; n returned. */
static size_t run_values(const struct sidemap *m, size_t k, enum tt_diff_figure f, double *x,
			 const struct tt__boot **b, struct est *e)
{
	size_t n = 0;

	for (size_t i = 0; i < m->s->n_runs; i++) {
		const struct tt__run_boot *rb = &m->s->runs[i];
		const struct tt_cell_figures *c = map_cell(m, i, k);
		double v;
		if (!c)
			continue;
		v = tt__diff_figure_of(c, f, rb->tail_q);
		if (!(v > 0) || !isfinite(v)) {
			if (e)
				e->missing++;
			continue;
		}
		if (e) {
			e->samples |= rb->have_samples;
			e->point = rb->point[c - rb->rep->cells];
			e->res = rb->res[c - rb->rep->cells][f];
		}
		x[n] = log(v);
		b[n] = rb->boot ? &rb->boot[c - rb->rep->cells][f] : &no_boot;
		n++;
	}
	return n;
}

/* The between-run variance of each figure, from the runs x cells table of
 * log figures (cells every run has): a run's deviation from a cell's mean
 * is a run effect shared by all cells of the run (its machine load,
 * warm-up, clocks) plus a part of its own, x_rc = mu_c + rho_r + e_rc.  With
 * n runs and C cells, MS_R = C sum_r dbar_r^2 / (n - 1) estimates
 * C s_rho^2 + s_e^2 and MS_E = (sum d_rc^2 - C sum_r dbar_r^2) /
 * ((n - 1)(C - 1)) estimates s_e^2 (d_rc = x_rc - xbar_c, dbar_r its mean
 * over the cells); the variance of a cell's run, s_rho^2 + s_e^2, is
 * MS_R / C + (1 - 1/C) MS_E, with Satterthwaite's degrees of freedom: about
 * n - 1 when the runs drift as a whole, up to (n - 1) C when each cell
 * drifts on its own.  Fewer than 2 such cells: the spread pooled over the
 * cells, with n - 1 degrees of freedom. */
static void pool_between(const struct sidemap *m, struct pooled *p)
{
	double x[TT_DIFF_MAX_RUNS], dsum[TT_DIFF_MAX_RUNS];
	const struct tt__boot *b[TT_DIFF_MAX_RUNS];
	size_t runs = m->s->n_runs;

	memset(p, 0, TT_DIFF_FIGURE_COUNT_ * sizeof *p);
	if (runs < 2)
		return;
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		double ss_all = 0, df_all = 0, d2 = 0, ssr = 0, C = 0;
		memset(dsum, 0, sizeof dsum);
		for (size_t i = 0; i < m->n; i++) {
			size_t n = run_values(m, i, (enum tt_diff_figure)f, x, b, NULL);
			double mean = 0;
			if (n < 2)
				continue;
			for (size_t k = 0; k < n; k++)
				mean += x[k] / (double)n;
			for (size_t k = 0; k < n; k++)
				ss_all += (x[k] - mean) * (x[k] - mean);
			df_all += (double)(n - 1);
			if (n != runs)
				continue; /* the table holds the cells every run has */
			for (size_t k = 0; k < n; k++) {
				dsum[k] += x[k] - mean;
				d2 += (x[k] - mean) * (x[k] - mean);
			}
			C++;
		}
		if (C >= 2) {
			double msr, mse, a1 = 1 / C, a2 = 1 - 1 / C, dfr = (double)(runs - 1),
				     dfe = (double)(runs - 1) * (C - 1), num, den;
			for (size_t k = 0; k < runs; k++)
				ssr += C * (dsum[k] / C) * (dsum[k] / C);
			msr = ssr / dfr;
			mse = d2 > ssr ? (d2 - ssr) / dfe : 0;
			p[f].vb = a1 * msr + a2 * mse;
			num = p[f].vb * p[f].vb;
			den = a1 * msr * a1 * msr / dfr + a2 * mse * a2 * mse / dfe;
			p[f].df = den > 0 ? num / den : dfr;
			if (p[f].df < dfr)
				p[f].df = dfr; /* never below the runs' own */
		} else if (df_all > 0) {
			p[f].vb = ss_all / df_all;
			p[f].df = (double)(runs - 1);
		}
	}
}

static void side_estimate(const struct sidemap *m, const struct pooled *pool, size_t k,
			  enum tt_diff_figure f, struct est *e)
{
	const struct tt_diff_side *s = m->s;
	double x[TT_DIFF_MAX_RUNS], sum = 0, se2 = 0, df_within = 0;
	const struct tt__boot *b[TT_DIFF_MAX_RUNS];
	size_t n, n_se = 0;

	memset(e, 0, sizeof *e);
	n = run_values(m, k, f, x, b, e);
	e->runs = n;
	e->mu = e->var = e->df = NAN;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		if (isfinite(b[i]->se) && b[i]->units > 1) {
			se2 += b[i]->se * b[i]->se;
			df_within += (double)(b[i]->units - 1);
			n_se++;
		} else {
			e->no_se++;
		}
	}
	e->mu = sum / (double)n;
	if (n == 1 && s->n_runs == 1)
		e->only = b[0];
	e->point = e->point && n == 1 && s->n_runs == 1;
	if (!e->point)
		e->res = 0;
	{
		/* Within a run: the bootstrap's variance of its log figure (the
		 * mean over the runs that have one).  Between runs: the spread of
		 * the runs' log figures, pooled over the side's cells. */
		double within = n_se ? se2 / (double)n_se : NAN;
		double between = s->n_runs > 1 && pool[f].df > 0 ? pool[f].vb : NAN;
		if (!isnan(between)) {
			/* The hierarchical bootstrap (docs/diff.md "Replicates"):
			 * draw n runs with replacement, then the time slices of
			 * each drawn run; the variance of the mean of the drawn
			 * runs' log figures is (between + within) / n. */
			e->var = (between + (isnan(within) ? 0 : within)) / (double)n;
			e->df = pool[f].df;
			e->basis = TT_BASIS_REPLICATES;
		} else if (!isnan(within)) {
			e->var = within / (double)n;
			e->df = df_within;
			e->basis = TT_BASIS_SAMPLES;
		} else if (e->point) {
			e->basis = TT_BASIS_POINT;
		}
	}
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

static int add_key(struct tt_diff *d, size_t *cap, struct keyhash *h,
		   const struct tt_cell_figures *c)
{
	/* Open-loop cells share concurrency 0 and are told apart by their
	 * rate: their curves are shown whole by diffview (docs/diff.md
	 * "Open-loop curves"), not matched and tested here. */
	if (c->phase == TT_PHASE_RATE)
		return 0;
	if (d->n_cells == *cap) {
		size_t n = *cap ? *cap * 2 : 32;
		struct tt_diff_cell *g = realloc(d->cells, n * sizeof *g);
		if (!g)
			return -1;
		d->cells = g;
		*cap = n;
	}
	if (keyhash_find(h, d->cells, c->phase, c->context, c->concurrency, d->n_cells, 1) >= 0)
		return 0;
	memset(&d->cells[d->n_cells], 0, sizeof *d->cells);
	d->cells[d->n_cells].phase = c->phase;
	d->cells[d->n_cells].context = c->context;
	d->cells[d->n_cells].concurrency = c->phase == TT_PHASE_PREFILL ? 1 : c->concurrency;
	d->n_cells++;
	return 0;
}

/* The second test, for percentiles of sides of one run: each side's rank
 * interval at half the comparison's level must miss the other's, or the
 * change may be a percentile jumping across a gap in the values. */
static int rank_overlap(const struct tt__boot *b, const struct tt__boot *c, double level)
{
	double k = tt__t_quantile_upper(level / 4, 2e6), blo, bhi, clo, chi;

	if (!tt__boot_rank_interval(b, k, &blo, &bhi) || !tt__boot_rank_interval(c, k, &clo, &chi))
		return 0;
	return blo <= chi && clo <= bhi;
}

/* How far a side's printed precision widens the log ratio's interval below
 * (lo) and above (hi): a point base b known to +-r leaves ln c - ln b
 * anywhere in [ln c - ln(b + r), ln c - ln(b - r)]; a point candidate the
 * other way round. */
static void rounding(const struct tt_diff_value *v, double *lo, double *hi)
{
	if (v->res_base > 0) {
		*lo += log((v->base + v->res_base) / v->base);
		*hi += v->res_base < v->base ? log(v->base / (v->base - v->res_base)) : INFINITY;
	}
	if (v->res_cand > 0) {
		*lo += v->res_cand < v->cand ? log(v->cand / (v->cand - v->res_cand)) : INFINITY;
		*hi += log((v->cand + v->res_cand) / v->cand);
	}
}

/* Two point figures: no variance on either side, so no significance; the
 * change is held against the tolerance, the printed precision included
 * (docs/diff.md "Runs without traces"). */
static void judge_points(const struct tt_diff_opts *o, struct tt_diff_value *v)
{
	double lo = 0, hi = 0, tl, th;

	rounding(v, &lo, &hi);
	v->ci_lo_pct = (exp(log(v->ratio) - lo) - 1) * 100;
	v->ci_hi_pct = (exp(log(v->ratio) + hi) - 1) * 100;
	if (!(o->tolerance > 0)) {
		v->verdict = TT_VERDICT_UNJUDGED;
		snprintf(v->note, sizeof v->note,
			 "both sides are single reported figures (no samples, no replicates): "
			 "no variance is known; --tolerance PCT compares them");
		return;
	}
	tl = -o->tolerance;
	th = o->tolerance;
	v->verdict = v->ci_lo_pct > th || v->ci_hi_pct < tl ? TT_VERDICT_BEYOND_TOL :
							    TT_VERDICT_WITHIN_TOL;
	tt__snprintf_c(v->note, sizeof v->note,
		       "both sides are single reported figures: no variance is known, so no "
		       "significance; held against the tolerance of %g%% only", o->tolerance);
}

static void judge(struct tt_diff *d, struct tt_diff_cell *dc,
		  const struct tt__boot *const (*only)[2])
{
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		struct tt_diff_value *v = &dc->v[f];
		double sd, round_lo, round_hi, lo, hi;
		int better, sig;

		if (!v->applies || v->verdict != TT_VERDICT_SAME)
			continue;
		sd = sqrt(v->se_base * v->se_base + v->se_cand * v->se_cand);
		v->crit = tt__t_quantile_upper(d->level / 2, v->df);
		/* The sampling interval, widened by what a point figure's printed
		 * precision leaves open (0 for figures of samples). */
		round_lo = round_hi = 0;
		rounding(v, &round_lo, &round_hi);
		lo = log(v->ratio) - v->crit * sd - round_lo;
		hi = log(v->ratio) + v->crit * sd + round_hi;
		v->ci_lo_pct = (exp(lo) - 1) * 100;
		v->ci_hi_pct = (exp(hi) - 1) * 100;
		sig = lo > 0 || hi < 0;
		better = tt_diff_figure_higher_better((enum tt_diff_figure)f) ? v->ratio > 1 :
										 v->ratio < 1;
		if (sig && fabs(v->change_pct) >= d->opts.min_change &&
		    rank_overlap(only[f][0], only[f][1], d->level)) {
			v->verdict = TT_VERDICT_SAME;
			snprintf(v->note, sizeof v->note,
				 "the percentile sits near a gap in the values: its ranks around "
				 "it overlap between the runs");
		} else if (sig && fabs(v->change_pct) >= d->opts.min_change) {
			v->verdict = better ? TT_VERDICT_FASTER : TT_VERDICT_SLOWER;
		} else {
			v->verdict = TT_VERDICT_SAME;
		}
	}
}

enum tt_code tt_diff_compare(const struct tt_diff_side *base, const struct tt_diff_side *cand,
			     struct tt_diff **out, struct tt_error *err)
{
	struct tt_diff *d;
	struct pooled pool_b[TT_DIFF_FIGURE_COUNT_], pool_c[TT_DIFF_FIGURE_COUNT_];
	const struct tt__boot *(*only)[TT_DIFF_FIGURE_COUNT_][2] = NULL;
	struct keyhash h = {NULL, 0};
	struct sidemap mb = {base, NULL, 0}, mc = {cand, NULL, 0};
	size_t cap = 0, total = 0;

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
			total += s->runs[i].rep->n_cells;
	}
	if (keyhash_init(&h, total))
		goto oom;
	for (int side = 0; side < 2; side++) {
		const struct tt_diff_side *s = side ? cand : base;
		for (size_t i = 0; i < s->n_runs; i++)
			for (size_t k = 0; k < s->runs[i].rep->n_cells; k++)
				if (add_key(d, &cap, &h, &s->runs[i].rep->cells[k]))
					goto oom;
	}
	if (sidemap_build(&mb, base, &h, d->cells, d->n_cells) ||
	    sidemap_build(&mc, cand, &h, d->cells, d->n_cells))
		goto oom;
	free(h.slot);
	h.slot = NULL;
	pool_between(&mb, pool_b);
	pool_between(&mc, pool_c);
	only = calloc(d->n_cells ? d->n_cells : 1, sizeof *only);
	if (!only)
		goto oom;
	for (size_t i = 0; i < d->n_cells; i++) {
		struct tt_diff_cell *dc = &d->cells[i];
		int hb = side_status(&mb, i, &dc->base_status, &dc->base_mixed, dc->base_runs);
		int hc = side_status(&mc, i, &dc->cand_status, &dc->cand_mixed, dc->cand_runs);

		dc->presence = hb && hc ? TT_DIFF_BOTH : hb ? TT_DIFF_BASE_ONLY : TT_DIFF_CAND_ONLY;
		dc->status_changed = hb && hc && statuses_differ(dc->base_runs, dc->cand_runs);
		d->n_status_changed += (size_t)dc->status_changed;
		d->n_base_only += dc->presence == TT_DIFF_BASE_ONLY;
		d->n_cand_only += dc->presence == TT_DIFF_CAND_ONLY;
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			struct tt_diff_value *v = &dc->v[f];
			struct est eb, ec;

			v->applies = tt__diff_figure_phase((enum tt_diff_figure)f) == dc->phase;
			v->base = v->cand = v->ratio = v->change_pct = NAN;
			v->ci_lo_pct = v->ci_hi_pct = v->z = v->se_base = v->se_cand = NAN;
			v->df = v->crit = NAN;
			v->verdict = TT_VERDICT_UNJUDGED;
			if (!v->applies)
				continue;
			side_estimate(&mb, pool_b, i, (enum tt_diff_figure)f, &eb);
			side_estimate(&mc, pool_c, i, (enum tt_diff_figure)f, &ec);
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
			v->basis_base = eb.basis;
			v->basis_cand = ec.basis;
			v->res_base = eb.res;
			v->res_cand = ec.res;
			if (eb.basis == TT_BASIS_POINT && ec.basis == TT_BASIS_POINT) {
				judge_points(&d->opts, v);
				continue;
			}
			if ((isnan(eb.var) && eb.basis != TT_BASIS_POINT) ||
			    (isnan(ec.var) && ec.basis != TT_BASIS_POINT)) {
				int nb = isnan(eb.var) && eb.basis != TT_BASIS_POINT;
				note_side(v->note, sizeof v->note, nb ? "base" : "candidate",
					  nb ? &eb : &ec, nb ? dc->base_status : dc->cand_status);
				continue;
			}
			/* A side of one captured run: what another run of the
			 * same setup would differ by beyond its sampling noise,
			 * measured on this kind of capture (docs/diff.md "One run
			 * per side"), unless the other side is a reported point
			 * (whose own run-to-run variance is unknown anyway: "Runs
			 * without traces"). */
			if (eb.basis != TT_BASIS_POINT && ec.basis != TT_BASIS_POINT) {
				double ab = d->opts.run_allowance[f] / 100, ac = ab;
				if (eb.basis == TT_BASIS_SAMPLES && ab > 0) {
					eb.var += ab * ab / (double)eb.runs;
					eb.allowance = 1;
				}
				if (ec.basis == TT_BASIS_SAMPLES && ac > 0) {
					ec.var += ac * ac / (double)ec.runs;
					ec.allowance = 1;
				}
				v->allowance = eb.allowance || ec.allowance;
				d->n_allowance += (size_t)v->allowance;
			}
			/* A point side: its sampling and run-to-run variance are
			 * unknown (0 here); the interval is the other side's
			 * sampling spread, widened by the point's precision. */
			if (eb.basis == TT_BASIS_POINT) {
				eb.var = 0;
				eb.df = ec.df;
			}
			if (ec.basis == TT_BASIS_POINT) {
				ec.var = 0;
				ec.df = eb.df;
			}
			v->se_base = sqrt(eb.var);
			v->se_cand = sqrt(ec.var);
			{
				double sd = sqrt(eb.var + ec.var), dl = ec.mu - eb.mu;
				v->z = sd > 0 ? dl / sd : dl == 0 ? 0 : dl > 0 ? INFINITY : -INFINITY;
				/* Welch-Satterthwaite: the degrees of freedom of the sum
				 * of the two variances. */
				v->df = (eb.var + ec.var) * (eb.var + ec.var) /
					(eb.var * eb.var / eb.df + ec.var * ec.var / ec.df);
				if (!(v->df >= 1))
					v->df = 1;
			}
			if (eb.missing || ec.missing)
				snprintf(v->note, sizeof v->note,
					 "figure missing in %zu of the runs; judged on the others",
					 eb.missing + ec.missing);
			else if (eb.basis == TT_BASIS_POINT || ec.basis == TT_BASIS_POINT)
				snprintf(v->note, sizeof v->note,
					 "%s is a single reported figure: its own sampling and "
					 "run-to-run variance are unknown, the interval holds the "
					 "other side's sampling spread and its printed precision only",
					 eb.basis == TT_BASIS_POINT ? "base" : "candidate");
			d->n_point += eb.basis == TT_BASIS_POINT || ec.basis == TT_BASIS_POINT;
			only[i][f][0] = eb.only;
			only[i][f][1] = ec.only;
			v->verdict = TT_VERDICT_SAME; /* judged below */
			d->n_tests++;
		}
	}
	/* Bonferroni over every comparison judged: the chance that any verdict
	 * of this diff is a false "faster" or "slower" stays below alpha.  Each
	 * comparison is a t test at alpha / n_tests (two-sided). */
	d->level = d->opts.alpha / (double)(d->n_tests ? d->n_tests : 1);
	for (size_t i = 0; i < d->n_cells; i++) {
		judge(d, &d->cells[i], (const struct tt__boot *const (*)[2])only[i]);
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *v = &d->cells[i].v[f];
			if (!v->applies || d->cells[i].presence != TT_DIFF_BOTH)
				continue;
			d->n_faster += v->verdict == TT_VERDICT_FASTER;
			d->n_slower += v->verdict == TT_VERDICT_SLOWER;
			d->n_same += v->verdict == TT_VERDICT_SAME;
			d->n_unjudged += v->verdict == TT_VERDICT_UNJUDGED;
			d->n_within_tol += v->verdict == TT_VERDICT_WITHIN_TOL;
			d->n_beyond_tol += v->verdict == TT_VERDICT_BEYOND_TOL;
		}
	}
	free(only);
	free(mb.at);
	free(mc.at);
	if (d->n_cells)
		qsort(d->cells, d->n_cells, sizeof *d->cells, cell_order);
	*out = d;
	return TT_OK;
oom:
	free(h.slot);
	free(mb.at);
	free(mc.at);
	free(only);
	tt_diff_free(d);
	return tt_error_set(err, TT_ENOMEM, "out of memory");
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
		if (d->cells[i].presence == TT_DIFF_BOTH &&
		    (v->verdict == TT_VERDICT_SLOWER ||
		     (v->verdict == TT_VERDICT_BEYOND_TOL && v->worse)) &&
		    fabs(v->change_pct) > threshold_pct)
			n++;
	}
	return n;
}

size_t tt_diff_status_gate(const struct tt_diff *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n_cells; i++) {
		/* A base that is itself mixed is no Valid baseline to hold the
		 * candidate to; a candidate that queues in any of its runs has
		 * lost capacity the base showed in all of its runs. */
		const struct tt_diff_cell *c = &d->cells[i];
		n += c->presence == TT_DIFF_BOTH && !c->base_mixed &&
		     c->base_status == TT_STATUS_VALID &&
		     (c->cand_runs[TT_STATUS_QUEUED] || c->cand_runs[TT_STATUS_OVER_CAPACITY]);
	}
	return n;
}
