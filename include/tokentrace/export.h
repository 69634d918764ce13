/* tokentrace: a run's records and figures as flat rows for other tools
 * (formats/export-v1.md): requests, chunks, scrapes or cells, one row per
 * item with the run and cell as keys, in CSV or JSON lines, so archived
 * runs can be queried in DuckDB, pandas or Spark without this library.
 *
 * Rows are streamed: they go to the caller's write function in pieces of
 * about 64 KiB, and memory does not grow with the number of rows. */
#ifndef TOKENTRACE_EXPORT_H
#define TOKENTRACE_EXPORT_H

#include <stddef.h>

#include "tokentrace/analysis.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_export_what {
	TT_EXPORT_REQUESTS = 0, /* one row per request */
	TT_EXPORT_CHUNKS = 1,   /* one row per streamed chunk */
	TT_EXPORT_SCRAPES = 2,  /* one row per sample of a /metrics scrape */
	TT_EXPORT_CELLS = 3     /* one row per cell: its figures (as the report) */
};
enum tt_export_format { TT_EXPORT_CSV = 0, TT_EXPORT_JSONL = 1 };

/* "requests", "chunks", "scrapes", "cells" / "csv", "jsonl"; -1 if unknown. */
int tt_export_what_parse(const char *name);
int tt_export_format_parse(const char *name);

/* Receives output bytes; returns 0, or non-zero to stop (the export then
 * fails with TT_EIO). */
typedef int (*tt_export_write_fn)(void *ctx, const void *data, size_t len);

struct tt_exporter;
enum tt_code tt_exporter_create(enum tt_export_what what, enum tt_export_format f,
				tt_export_write_fn write, void *ctx, struct tt_exporter **out,
				struct tt_error *err);
/* Append one run's rows; run_key is the value of the `run` column (e.g. the
 * path the user gave).  opts (may be NULL: defaults) are the analysis
 * options of the cells' figures.  The CSV header is written before the first
 * run's rows.  TT_WARN: damaged cells were skipped in part (err says which);
 * their intact records were exported. */
enum tt_code tt_exporter_run(struct tt_exporter *x, struct tt_run *run, const char *run_key,
			     const struct tt_analysis_opts *opts, struct tt_error *err);
/* Write what is buffered (and the CSV header when no run was added). */
enum tt_code tt_exporter_finish(struct tt_exporter *x, struct tt_error *err);
/* Rows written so far. */
unsigned long long tt_exporter_rows(const struct tt_exporter *x);
void tt_exporter_free(struct tt_exporter *x);

#ifdef __cplusplus
}
#endif
#endif
