/* tokentrace: a history of many runs, and where its figures changed
 * (docs/trend.md).
 *
 * A trend keeps, of each run added, only its per-cell figures (the figures
 * `tokentrace diff` compares: tt_diff_figure), so a history of thousands of
 * runs fits in memory.  The runs are put in an order (start time, a named
 * key such as the engine version, or as given), every cell x figure becomes
 * a series across the runs, and each series is searched for change points
 * with E-Divisive means (Matteson and James 2014, as in MongoDB's CI and
 * Apache Otava): the split that maximises the energy statistic, kept when a
 * seeded permutation test finds it significant, then each part again. */
#ifndef TOKENTRACE_TREND_H
#define TOKENTRACE_TREND_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/diff.h"
#include "tokentrace/error.h"
#include "tokentrace/render.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_trend_order {
	TT_TREND_ORDER_START = 0, /* the run's start (manifest origin), then as given */
	TT_TREND_ORDER_KEY = 1,   /* a named key (tt_trend_opts.key), versions
				   * compared part by part ("0.9.2" < "0.10.0") */
	TT_TREND_ORDER_GIVEN = 2  /* as added */
};

struct tt_trend_opts {
	double alpha;           /* significance of each split's permutation test (0.01) */
	unsigned permutations;  /* permutations per test (199), 19..100000 */
	uint64_t seed;          /* permutation seed (1): same runs, same answer */
	unsigned min_size;      /* fewest runs on either side of a change (3), >= 2 */
	double min_change;      /* %: significant changes smaller are not reported (2) */
	double tail;            /* tail percentile of TTFT and TBT (90) */
	enum tt_trend_order order;
	char key[64];           /* TT_TREND_ORDER_KEY: "engine_version", "engine",
				 * "model", "created", "tool_version" or a run note
				 * ("build", "commit") */
};
void tt_trend_opts_init(struct tt_trend_opts *o);

/* One cell of one run: its figures (NaN: not measured, or not of its phase). */
struct tt_trend_cell {
	char id[64];            /* the cell id, e.g. "decode-8192x16" */
	enum tt_phase phase;
	enum tt_status status;
	double v[TT_DIFF_FIGURE_COUNT_];
};

/* One run as the trend keeps it. */
struct tt_trend_run {
	char *path;             /* as given */
	char *engine, *engine_version; /* NULL: unknown */
	char *key;              /* the value of opts.key; NULL: the run has none */
	int64_t start_unix_ns;  /* manifest origin; 0: unknown */
	int imported;           /* the run was imported from another tool's file */
	struct tt_trend_cell *cells;
	size_t n_cells;
};

struct tt_trend;

/* opts may be NULL (defaults); the trend keeps a copy. */
enum tt_code tt_trend_create(const struct tt_trend_opts *opts, struct tt_trend **out,
			     struct tt_error *err);
void tt_trend_free(struct tt_trend *t);
/* The analysis options a run must be analysed with (the tail among the
 * quantiles): base (may be NULL: defaults) copied into *out. */
void tt_trend_analysis_opts(const struct tt_trend *t, const struct tt_analysis_opts *base,
			    struct tt_analysis_opts *out);
/* Analyse one run (tt_analyze with tt_trend_analysis_opts) and keep its
 * figures under path.  TT_WARN: some cells were damaged (kept, marked;
 * err names them); an error: nothing was added. */
enum tt_code tt_trend_add_run(struct tt_trend *t, struct tt_run *run, const char *path,
			      const struct tt_analysis_opts *ao, struct tt_error *err);
/* Keep a run's figures taken from an analysis already made (rep analysed
 * with tt_trend_analysis_opts), or read back from a catalog (r: its strings
 * and cells are copied). */
enum tt_code tt_trend_add_report(struct tt_trend *t, const struct tt_report *rep,
				 const char *path, struct tt_error *err);
enum tt_code tt_trend_add_figures(struct tt_trend *t, const struct tt_trend_run *r,
				  struct tt_error *err);
/* The figures a report gives a trend, into *out (release with
 * tt_trend_run_release); the catalog stores exactly these. */
enum tt_code tt_trend_run_from_report(const struct tt_trend *t, const struct tt_report *rep,
				      const char *path, struct tt_trend_run *out,
				      struct tt_error *err);
void tt_trend_run_release(struct tt_trend_run *r);
size_t tt_trend_runs(const struct tt_trend *t);

/* ---- the answer --------------------------------------------------------- */

/* One change point: the level of a series moved at run `run`. */
struct tt_trend_change {
	size_t series;          /* index into tt_trend_result.series */
	size_t run;             /* the first run of the new level (index into runs) */
	size_t point;           /* its index within the series' points */
	double before, after;   /* medians of the levels either side */
	double change_pct;      /* (after - before) / before x 100 */
	double p_value;         /* the permutation test's */
	int regression;         /* the figure got worse (tt_diff_figure_higher_better) */
};

/* One cell x figure across the runs that have it. */
struct tt_trend_series {
	char cell[64];
	enum tt_diff_figure figure;
	size_t n;               /* points */
	size_t *run;            /* each point's run (index into runs, increasing) */
	double *value;
	size_t first_change, n_changes; /* its changes in tt_trend_result.changes */
};

struct tt_trend_result {
	struct tt_trend_opts opts;
	const struct tt_trend_run *runs; /* in the trend's order (owned by the trend) */
	size_t n_runs;
	struct tt_trend_series *series;
	size_t n_series;
	struct tt_trend_change *changes; /* by series, then by run */
	size_t n_changes;
	size_t tests;           /* permutation tests made */
	size_t no_key;          /* TT_TREND_ORDER_KEY: runs without the key (put last) */
	size_t no_start;        /* TT_TREND_ORDER_START: runs without a start time (put last) */
	size_t partial_cells;   /* cells missing from some runs (other matrices, failed
				 * archives): their series have gaps */
};

/* Order the runs, build the series and find their change points.  The
 * result refers to the trend's runs: free it before the trend. */
enum tt_code tt_trend_analyze(struct tt_trend *t, struct tt_trend_result **out,
			      struct tt_error *err);
void tt_trend_result_free(struct tt_trend_result *r);

/* Change points of one series given as values (the method alone, for
 * tests and other callers): *idx (caller frees) receives the points where
 * a new level begins, increasing, and p (may be NULL; caller frees) their
 * p-values; stream seeds the permutations.  Non-finite values are refused. */
enum tt_code tt_trend_changes(const double *x, size_t n, const struct tt_trend_opts *o,
			      uint64_t stream, size_t **idx, double **p, size_t *n_idx,
			      size_t *tests, struct tt_error *err);

/* --fail-if-regressed: the number of series whose newest level is a
 * regression of at least pct % (their last change point reported is one):
 * the newest run is at a level worse than the one before it. */
size_t tt_trend_gate(const struct tt_trend_result *r, double pct);

/* ---- the catalog (formats/catalog-v1.md) ------------------------------- */

/* An SQLite file keeping each run's figures under its content hash and the
 * analysis settings they depend on (the tail, skip_first_s, window_s). */
struct tt_trend_catalog;
/* Open path, created when missing; an SQLite file of another application
 * or of a newer catalog version is refused (TT_EFORMAT, TT_EVERSION). */
enum tt_code tt_trend_catalog_open(const char *path, struct tt_trend_catalog **out,
				   struct tt_error *err);
void tt_trend_catalog_close(struct tt_trend_catalog *c);
/* The run's content hash (64 lowercase hex digits): SHA-256 of a file's
 * bytes; of a run directory, SHA-256 of the list "NAME SIZE SHA256\n" of
 * manifest.json and each file of cells/ by name (formats/catalog-v1.md). */
enum tt_code tt_trend_run_hash(const char *path, char hex[65], struct tt_error *err);
/* The run's content hash as above, without reading the run when the
 * catalog holds it for the same path with the same stamp (each file's
 * size, modification and change times, inode: formats/catalog-v1.md
 * "files"); computed and remembered otherwise. */
enum tt_code tt_trend_catalog_hash(struct tt_trend_catalog *c, const char *path, char hex[65],
				   struct tt_error *err);
/* A run stored under hash with ao's settings: added to t under path
 * (TT_OK), or TT_EOF when the catalog does not have it. */
enum tt_code tt_trend_catalog_lookup(struct tt_trend_catalog *c, struct tt_trend *t,
				     const char *hash, const char *path,
				     const struct tt_analysis_opts *ao, struct tt_error *err);
/* Store a run's figures (rep analysed with tt_trend_analysis_opts(t, ao))
 * under hash, replacing what was there; one transaction. */
enum tt_code tt_trend_catalog_store(struct tt_trend_catalog *c, const struct tt_trend *t,
				    const char *hash, const struct tt_report *rep,
				    const struct tt_analysis_opts *ao, struct tt_error *err);

/* The result as text: term, md, csv or json (formats/trend-json.md). */
enum tt_code tt_trend_render(const struct tt_trend_result *r, enum tt_format f,
			     const struct tt_render_opts *ro, struct tt_buf *out,
			     struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
