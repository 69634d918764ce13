/* What chart_trace.c reads from a cell's trace for the timeline
 * (chart_timeline.c draws it), and the cache that lets every chart of one
 * report read each trace once.  Internal to chart/. */
#ifndef TT_CHART_TRACE_H
#define TT_CHART_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"

/* The timeline reads its cell twice and keeps only bins: the first pass
 * finds the span (and counts scrapes), the second bins chunks and requests
 * into at most TL_MAX_BINS bins and keeps at most TL_MAX_SCRAPES scrapes
 * (every k-th beyond).  Memory is flat whatever the cell holds: keeping
 * every chunk made a 2.9 M-chunk cell need more than 200 MB, and a small
 * forged trace several GB. */
#define TL_MAX_BINS 4096
#define TL_MAX_SCRAPES 20000

struct tl_scrape {
	int64_t t;
	double running, waiting, kv;
	int has_running, has_waiting, has_kv;
};

struct tl_data {
	int64_t tmin, tmax;        /* pass 1: span of send and end times */
	size_t scrapes_seen;       /* pass 1: scrapes with a gauge */
	int64_t t0;
	double span_s, bin_s;
	size_t nb;
	double *tok, *act, *diff;  /* nb: tokens per bin, in-flight share, its steps */
	size_t scrape_stride, scrape_k;
	struct tl_scrape *scrapes;
	size_t n_scrapes, cap_scrapes;
	const char *engine; /* the manifest's: which gauge names (M-gauges) */
	int pass;
	int oom;
};

/* A cell's records as the timeline needs them, kept in a chart_cache so
 * that every output of one report reads the trace once. */
struct tl_read {
	long cell; /* -1: empty */
	struct tl_data d;
	enum tt_code rc;
	char msg[512];
};

/* Per-cell binned gaps for the CDF (chart_trace.c). */
struct gap_bins {
	int loaded;
	enum tt_code rc;
	uint64_t *bins;
	uint64_t tokens;
};

struct chart_cache {
	struct tt_run *run;
	struct tl_read tl;
	size_t n_cells;
	struct gap_bins *gaps; /* n_cells */
};

/* Read cell into t (bins, scrapes); g, when not NULL, gets the cell's
 * binned gaps for the CDF from the same read. */
enum tt_code tt__tl_load(struct tt_run *run, const struct tt_analysis_opts *o,
			 const struct tt_cell_info *ci, long cell, struct tl_read *t,
			 struct gap_bins *g, struct tt_error *err);
void tt__tl_release(struct tl_read *t);

#endif
