/* tokentrace: two engine versions compared cell by cell (docs/diff.md).
 *
 * Each side is one run or several runs of the same setup (replicates).  A
 * side analyses its runs with the report's own figures (analysis.h) and, from
 * the same samples, a bootstrap of each figure: over time slices of the
 * window for the figures of tokens (total tok/s, time between tokens), over
 * requests for the figures of requests (TTFT, per request tok/s, prefill).
 * Replicates add the run-to-run variance.  The comparison matches cells by
 * phase, context and concurrency and gives each figure a change, a
 * confidence interval and a verdict, with the family of every comparison of
 * the diff held to one false-positive rate (Bonferroni). */
#ifndef TOKENTRACE_DIFF_H
#define TOKENTRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/analysis.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The figures compared (docs/diff.md "Figures"). */
enum tt_diff_figure {
	TT_DIFF_TOTAL = 0,       /* total tok/s, decode (M-total); higher is better */
	TT_DIFF_PER_REQUEST = 1, /* per request tok/s, median (M-per-request); higher */
	TT_DIFF_TTFT_P50 = 2,    /* TTFT median, ms (M-ttft); lower is better */
	TT_DIFF_TTFT_TAIL = 3,   /* TTFT at the tail percentile, ms; lower */
	TT_DIFF_TBT_P50 = 4,     /* time between tokens median, ms (M-tbt); lower */
	TT_DIFF_TBT_TAIL = 5,    /* time between tokens at the tail percentile, ms; lower */
	TT_DIFF_PREFILL = 6,     /* prompt tok/s of a prefill row (M-prefill); higher */
	TT_DIFF_FIGURE_COUNT_ = 7
};
/* "total_tok_s", "per_request_tok_s", "ttft_p50_ms", "ttft_tail_ms",
 * "tbt_p50_ms", "tbt_tail_ms", "prefill_tok_s" */
const char *tt_diff_figure_key(enum tt_diff_figure f);
/* "Total tok/s", "TTFT p50", "TTFT tail", ... for tables */
const char *tt_diff_figure_name(enum tt_diff_figure f);
/* A key above, or a short name: "total", "per-request", "ttft", "ttft-tail",
 * "tbt", "tbt-tail", "prefill".  -1 if unknown. */
int tt_diff_figure_parse(const char *name);
/* 1 when a larger value is better (rates), 0 when smaller is (latencies). */
int tt_diff_figure_higher_better(enum tt_diff_figure f);

enum tt_verdict {
	TT_VERDICT_SAME = 0,    /* no significant change */
	TT_VERDICT_FASTER = 1,
	TT_VERDICT_SLOWER = 2,
	TT_VERDICT_UNJUDGED = 3, /* a side lacks the figure or its variance */
	/* Both sides are single reported figures (no samples, no replicates):
	 * no significance can be claimed, only the change against the
	 * tolerance (tt_diff_opts.tolerance; docs/diff.md "Runs without
	 * traces"). */
	TT_VERDICT_WITHIN_TOL = 4, /* the change may be within +-tolerance */
	TT_VERDICT_BEYOND_TOL = 5  /* the change is beyond the tolerance, rounding included */
};
const char *tt_verdict_name(enum tt_verdict v); /* "faster", "no significant change" */
/* "faster", "same", "slower", "unjudged", "within_tolerance", "beyond_tolerance" */
const char *tt_verdict_key(enum tt_verdict v);

/* What a side's variance of a figure comes from (docs/diff.md "Runs
 * without traces"). */
enum tt_diff_basis {
	TT_BASIS_NONE = 0,       /* no figure or no variance */
	TT_BASIS_SAMPLES = 1,    /* bootstrap of one run's raw samples */
	TT_BASIS_REPLICATES = 2, /* spread between the side's runs */
	TT_BASIS_POINT = 3       /* one reported figure: no variance, only its printed precision */
};
const char *tt_diff_basis_key(enum tt_diff_basis b); /* "none", "samples", "replicates", "point" */

struct tt_diff_opts {
	double alpha;        /* false-positive rate of the whole diff (0.05) */
	unsigned replicates; /* bootstrap replicates per run and cell (200) */
	unsigned slices;     /* time slices of a decode window (20) */
	uint64_t seed;       /* bootstrap seed (1): same inputs, same output */
	double tail;         /* tail percentile of TTFT and TBT, in (50, 100) (90) */
	double min_change;   /* %: a significant change smaller than this counts as
				none (1): one run per side does not see run-to-run
				variance (docs/diff.md); 0 turns it off */
	double tolerance;    /* %: a change that two point figures (no samples on
				either side) may show and still count as none; 0: off,
				such figures are not judged */
	/* %, per figure: the run-to-run allowance, the relative standard
	 * deviation by which one run of a setup differs from another beyond
	 * its sampling noise (docs/diff.md "One run per side", measured).  A
	 * side of one run (samples) adds its square to its variance, unless
	 * the other side is a reported point; 0 turns it off. */
	double run_allowance[TT_DIFF_FIGURE_COUNT_];
};
void tt_diff_opts_init(struct tt_diff_opts *o);

/* ---- one side: runs and their bootstraps ------------------------------ */

struct tt_diff_side;
#define TT_DIFF_MAX_RUNS 64 /* runs on one side */

/* opts may be NULL (defaults).  The side keeps a copy. */
enum tt_code tt_diff_side_create(const struct tt_diff_opts *opts, struct tt_diff_side **out,
				 struct tt_error *err);
/* Analyse one run (every cell, one at a time: memory does not grow with the
 * traces) with ao (may be NULL; its quantiles get the tail added) and keep
 * its report and bootstrap.  TT_WARN when cells were damaged (kept, marked;
 * err names them), an error when the run could not be analysed. */
enum tt_code tt_diff_side_add(struct tt_diff_side *s, struct tt_run *run,
			      const struct tt_analysis_opts *ao, struct tt_error *err);
size_t tt_diff_side_runs(const struct tt_diff_side *s);
/* The report of run i (owned by the side). */
const struct tt_report *tt_diff_side_report(const struct tt_diff_side *s, size_t i);
void tt_diff_side_free(struct tt_diff_side *s);

/* ---- the comparison ---------------------------------------------------- */

/* One figure of one matched cell.  Values are the sides' figures (the
 * geometric mean over replicates); NaN when unavailable. */
struct tt_diff_value {
	int applies;           /* the figure exists for the cell's phase */
	double base, cand;
	double ratio;          /* cand / base */
	double change_pct;     /* (ratio - 1) x 100 */
	double ci_lo_pct, ci_hi_pct; /* simultaneous interval of change_pct (NaN: none) */
	double z;              /* log ratio over its standard error (NaN: none) */
	double df;             /* degrees of freedom of that standard error */
	double crit;           /* |z| beyond this is significant (t at the diff's level) */
	double se_base, se_cand; /* standard errors of the log figures (NaN: none) */
	enum tt_verdict verdict;
	int worse;             /* the change is for the worse (slower), judged or not */
	int allowance;         /* the run-to-run allowance was added to a side of one run */
	enum tt_diff_basis basis_base, basis_cand; /* what each side's spread comes from */
	double res_base, res_cand; /* +- each side's figure is known to (point figures:
				      its printed precision), figure units; 0: exact */
	char note[200];        /* why unjudged, or which statistics are unavailable */
};

enum tt_diff_presence { TT_DIFF_BOTH = 0, TT_DIFF_BASE_ONLY = 1, TT_DIFF_CAND_ONLY = 2 };

struct tt_diff_cell {
	enum tt_phase phase;
	int64_t context;
	int concurrency;
	enum tt_diff_presence presence;
	/* A side's status of the cell (docs/diff.md "Status with replicates"):
	 * the status every run of the side that has the cell agrees on; when
	 * they disagree (mixed), the first such run's, and the counts tell
	 * the whole story. */
	enum tt_status base_status, cand_status;
	int base_mixed, cand_mixed; /* replicates of a side disagree on the status */
	/* Runs of each side that have the cell, by status. */
	unsigned short base_runs[TT_STATUS_COUNT_], cand_runs[TT_STATUS_COUNT_];
	int status_changed;         /* both present, the sets of statuses differ */
	struct tt_diff_value v[TT_DIFF_FIGURE_COUNT_];
};

struct tt_diff {
	struct tt_diff_opts opts;
	const struct tt_diff_side *base, *cand; /* borrowed: outlive the diff */
	/* Status changes first, then cells on both sides, then cells of one
	 * side only; within each, prefill then decode by context and
	 * concurrency. */
	struct tt_diff_cell *cells;
	size_t n_cells;
	size_t n_tests;          /* comparisons judged: the Bonferroni family */
	double level;            /* two-sided level of each comparison: alpha / n_tests */
	size_t n_faster, n_slower, n_same, n_unjudged; /* over the figures of matched cells */
	size_t n_within_tol, n_beyond_tol; /* point against point, by the tolerance */
	size_t n_point;          /* comparisons judged with a point figure on one side */
	size_t n_allowance;      /* comparisons with the run-to-run allowance on a side */
	size_t n_status_changed, n_base_only, n_cand_only;
};

/* Compare; the sides must outlive the diff. */
enum tt_code tt_diff_compare(const struct tt_diff_side *base, const struct tt_diff_side *cand,
			     struct tt_diff **out, struct tt_error *err);
void tt_diff_free(struct tt_diff *d);

/* The release gate: how many matched cells are significantly slower in
 * figure f by more than threshold_pct (5 for 5 %), or, between two point
 * figures, worse beyond the tolerance by more than threshold_pct. */
size_t tt_diff_gate(const struct tt_diff *d, enum tt_diff_figure f, double threshold_pct);

/* The status gate: how many cells on both sides are Valid in every run of
 * the base that has them and Requests queued or Over capacity in at least
 * one run of the candidate (docs/diff.md "Status with replicates"). */
size_t tt_diff_status_gate(const struct tt_diff *d);

#ifdef __cplusplus
}
#endif
#endif
