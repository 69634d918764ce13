/* Internal to lib/diff: what a side keeps of each run, shared by the
 * bootstrap (diff_side.c) and the comparison (diff_compare.c). */
#ifndef TT_DIFF_IMPL_H
#define TT_DIFF_IMPL_H

#include <stddef.h>

#include "tokentrace/diff.h"

/* Rank steps of a percentile's rank interval: k = 0.5, 1, ... 6 binomial
 * standard deviations of its rank (diff_side.c, rank_table). */
#define TT__RANK_STEPS 12

/* What resampling could say about one figure of one cell of one run. */
struct tt__boot {
	double se;      /* standard deviation of the log figure over replicates; NaN: none */
	size_t units;   /* slices or requests resampled */
	int per_slice;  /* units are time slices (1) or requests (0) */
	int has_rank;   /* a percentile: the log values at p -/+ k rank sd below */
	double rank_lo[TT__RANK_STEPS], rank_hi[TT__RANK_STEPS];
};

/* The rank interval of a percentile at k rank standard deviations (k
 * clamped to 0.5..6): log values, lo and hi.  0 when b has none. */
int tt__boot_rank_interval(const struct tt__boot *b, double k, double *lo, double *hi);

/* A cell's time between tokens at percentiles 0, 1, ... 100, in ms (NaN:
 * none): enough to draw its distribution beside another run's. */
#define TT__CDF_POINTS 101

struct tt__run_boot {
	struct tt_report *rep;          /* owned */
	/* rep->n_cells rows each; NULL when no cell had a trace (a run of
	 * reported figures only): no bootstrap, no distribution */
	double (*tbt_cdf)[TT__CDF_POINTS];
	struct tt__boot (*boot)[TT_DIFF_FIGURE_COUNT_];
	int have_samples;               /* the hook saw raw samples (a trace was read) */
	unsigned char *point;           /* rep->n_cells: the cell has reported figures, no trace */
	double (*res)[TT_DIFF_FIGURE_COUNT_]; /* rep->n_cells rows: a point figure's
						  printed precision (+-), 0: exact */
	size_t tail_q;                  /* index of opts.tail in rep->opts.quantiles */
};

struct tt_diff_side {
	struct tt_diff_opts o;
	struct tt__run_boot *runs;
	size_t n_runs;
};

/* The figure f of a cell as the report computed it; NaN when absent. */
double tt__diff_figure_of(const struct tt_cell_figures *c, enum tt_diff_figure f, size_t tail_q);
/* The phase whose cells have figure f (diff_figures.c). */
enum tt_phase tt__diff_figure_phase(enum tt_diff_figure f);
/* Student's t (student_t.c): P(T > t), t >= 0, and x with P(T > x) = q. */
double tt__t_upper(double t, double df);
double tt__t_quantile_upper(double q, double df);

#endif
