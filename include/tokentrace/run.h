/* tokentrace: runs (formats/run-v1.md).
 *
 * A run is a directory while it is written: manifest.json plus one trace
 * file per cell under cells/.  It can be archived as one file (tar, tar.zst,
 * tar.gz, zip); the reader opens either form, archives in memory. */
#ifndef TOKENTRACE_RUN_H
#define TOKENTRACE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cell measures cold prefill (one request per context) or decode (a
 * context x concurrency load). */
enum tt_phase {
	TT_PHASE_PREFILL = 0,
	TT_PHASE_DECODE = 1,
	TT_PHASE_RATE = 2   /* open loop: requests sent at a rate (format 1.2, 2.4) */
};

#define TT_RUN_FORMAT_MAJOR 1
#define TT_RUN_FORMAT_MINOR 1
/* Minor version a writer puts in a manifest that uses the import members
 * (imported_from, unavailable, a cell's reported figures: formats/run-v1.md
 * 2.3); readers of this version understand it. */
#define TT_RUN_FORMAT_MINOR_IMPORT 1
/* Minor version of a manifest with open-loop cells (formats/run-v1.md 2.4). */
#define TT_RUN_FORMAT_MINOR_RATE 2
/* Minor version of a manifest that records a sweep, an SLO search or an
 * output-length histogram (formats/run-v1.md 2.4, 1.3 members). */
#define TT_RUN_FORMAT_MINOR_SWEEP 3
/* Minor version of a manifest that records a replayed workload
 * (formats/run-v1.md 2.5). */
#define TT_RUN_FORMAT_MINOR_WORKLOAD 5
/* The newest minor version this build reads and writes: formats/run-v1.md's
 * title (1.5: a replayed workload, trace minor 3).  A
 * manifest says the lowest version its members need (1.1 to 1.5); what
 * --version reports is this one (test cli-version compares it with the
 * spec). */
#define TT_RUN_FORMAT_MINOR_NEWEST 5

/* One bin of an output-length histogram (formats/length-hist-v1.md):
 * lengths min..max (both included) drawn with this relative weight. */
struct tt_length_bin {
	int64_t min, max;
	double weight;      /* >= 0, finite */
};

/* What happened to a cell during capture. */
enum tt_cell_state {
	TT_CELL_PENDING = 0,       /* not started */
	TT_CELL_RUNNING = 1,       /* started, not finished (a crash leaves this) */
	TT_CELL_DONE = 2,          /* measured to the end of its window */
	TT_CELL_OVER_CAPACITY = 3, /* not run: C x (context + max_tokens) > KV capacity */
	TT_CELL_INTERRUPTED = 4,   /* stopped by the user before the window ended */
	TT_CELL_FAILED = 5         /* could not be measured (see reason) */
};
const char *tt_cell_state_name(enum tt_cell_state s); /* "done", "over_capacity", ... */

struct tt_cell_info {
	char *id;                /* unique, e.g. "decode-8192x16", "prefill-128000" */
	enum tt_phase phase;
	int64_t context;         /* prompt tokens asked for */
	int concurrency;         /* 1 for prefill cells */
	enum tt_cell_state state;
	char *reason;            /* why the state (arithmetic for over capacity); may be NULL */
	char *trace;             /* trace path relative to the run, e.g. "cells/decode-8192x16.ttz"; NULL if none */
	int64_t kv_need_tokens;  /* C x (context + max_tokens); -1 unknown */
	/* Times in ns from the run origin; -1 when not reached. */
	int64_t start_ns;        /* cell began (first request scheduled) */
	int64_t ready_ns;        /* readiness check passed */
	int64_t window_start_ns; /* measurement window */
	int64_t window_end_ns;
	int64_t end_ns;          /* last request ended or was cut */
	int ready_timed_out;     /* readiness check gave up; the window ran anyway */
	/* Figures a foreign tool reported for this cell (imported runs whose
	 * source kept no per-request times; formats/run-v1.md 2.3): analysis
	 * uses them when the cell has no trace.  Keys as in 2.3. */
	struct tt_reported *reported;
	size_t n_reported;
	char *reported_status;   /* tt_status_key() of the status the source gave; NULL: none */
	double rate;             /* TT_PHASE_RATE: requests/s offered; 0 otherwise */
};

/* One figure reported by the tool a run was imported from. */
struct tt_reported {
	char *key;               /* e.g. "total_tok_s", "ttft_ms_p50" */
	double value;
};

/* Where an imported run came from (formats/run-v1.md 2.3). */
struct tt_import_source {
	char *format;            /* importer: "llm-inference-bench", "vllm-bench", ... */
	char *tool;              /* the tool that wrote the file */
	char *tool_version;      /* as the file says; NULL unknown */
	char *file;              /* file name as given to the importer */
	char *sha256;            /* 64 lowercase hex digits of the file's bytes */
	int64_t bytes;           /* file size */
};

struct tt_note {
	char *key;
	char *value;
};

/* Everything known about a run.  All strings are heap-owned by the manifest
 * (NULL when absent); set them with tt_manifest_set_str. */
struct tt_manifest {
	int format_major, format_minor;
	char *tool_name, *tool_version;
	char *created;            /* RFC 3339 UTC wall time of the origin */
	int64_t origin_unix_ns;   /* wall-clock time (Unix ns) of monotonic origin */
	char *server_url;         /* never with credentials */
	char *engine;             /* "vllm", "sglang", "llamacpp", "tgi", "unknown", "synthetic" */
	char *engine_version;
	char *model;              /* model id as served in /v1/models */
	char *served_model;       /* name requests were sent with */
	int64_t max_model_len;    /* -1 unknown */
	int64_t slot_context;     /* context each request gets (llama.cpp: the
				   * slot's n_ctx); -1 unknown (format 1.1) */
	int slots;                /* requests the server runs at once
				   * (llama.cpp total_slots); -1 unknown (1.1) */
	struct tt_note *notes;    /* user notes in order (hardware, launch command...) */
	size_t n_notes;
	/* settings */
	char *endpoint;           /* "completions" or "chat" */
	int64_t *contexts;        size_t n_contexts;
	int *concurrency;         size_t n_concurrency;
	int64_t *prefill_contexts; size_t n_prefill_contexts;
	double duration_s;        /* measurement window asked for */
	int64_t max_tokens;
	char *prompt_kind;        /* "token_ids" or "text" */
	uint64_t seed;
	double scrape_interval_s; /* 0: no scrapes */
	double readiness_s;       /* steady time required before the window */
	double readiness_timeout_s;
	int64_t kv_capacity_tokens; /* -1 unknown */
	char *kv_capacity_source;   /* "vllm:cache_config_info", "server-log", "user", ... */
	struct tt_cell_info *cells;
	size_t n_cells;
	/* Imported runs only (format 1.1; empty for captured runs). */
	struct tt_import_source *sources; /* the files, in import order */
	size_t n_sources;
	char **unavailable;       /* figure keys (2.3) the sources did not have */
	size_t n_unavailable;
	/* Open-loop settings (format 1.2, formats/run-v1.md 2.4). */
	double *rates;            /* requests/s asked for, in order */
	size_t n_rates;
	char *arrivals;           /* "constant", "poisson", "gamma"; NULL: constant */
	double burstiness;        /* gamma shape (1: Poisson) */
	double warmup_s;          /* schedule before each window: warm-up requests */
	double drain_s;           /* after the window: running requests may end */
	int64_t output_min, output_max; /* max_tokens drawn in [min, max]; 0, 0: max_tokens */
	/* Format 1.3: what the capture was asked beyond the rate list. */
	int rate_sweep;           /* --rate-sweep */
	char *slo;                /* --slo, canonical (tt_slo_format); NULL: no search */
	struct tt_length_bin *output_bins; /* max_tokens drawn from this histogram
					    * (output_min/max its range); NULL: none */
	size_t n_output_bins;
	char *output_hist_file;   /* the histogram's file name, no directories */
	/* Format 1.5: the replayed workload (formats/run-v1.md 2.5); NULL none. */
	struct tt_workload_info *workload;
};

/* A replayed request trace (formats/run-v1.md 2.5, format 1.5). */
struct tt_workload_info {
	char *kind;               /* "trace", "shared-prefix" */
	char *format;             /* "mooncake", "azure" */
	char *file;               /* name without directories */
	double start_s, duration_s, speedup, span_s;
	int64_t output_cap, requests, rows, block_tokens, bytes;
	int64_t groups, prefix_tokens; /* kind "shared-prefix": groups, their prefix */
};

void tt_manifest_init(struct tt_manifest *m);
/* Give m a workload of this kind (all else zero; its strings set with
 * tt_manifest_set_str).  Returns it, or NULL when out of memory. */
struct tt_workload_info *tt_manifest_set_workload(struct tt_manifest *m, const char *kind);
/* Free everything the manifest owns and re-init it.  m may be NULL. */
void tt_manifest_release(struct tt_manifest *m);
/* Replace *dst with a copy of src (NULL allowed). */
enum tt_code tt_manifest_set_str(char **dst, const char *src);
/* Append or replace a note.  A note whose key contains "command" (e.g.
 * launch_command) is stored with tt_redact_secrets applied. */
enum tt_code tt_manifest_set_note(struct tt_manifest *m, const char *key, const char *value);
const char *tt_manifest_note(const struct tt_manifest *m, const char *key);
/* Append a cell (id, phase, context, concurrency; state pending, times -1).
 * On success *index (may be NULL) is its position. */
enum tt_code tt_manifest_add_cell(struct tt_manifest *m, enum tt_phase phase, int64_t context,
				  int concurrency, size_t *index);
/* Append an open-loop cell (rate-<context>r<rate>, phase TT_PHASE_RATE,
 * concurrency 0, state pending, times -1); rate > 0 and finite. */
enum tt_code tt_manifest_add_rate_cell(struct tt_manifest *m, int64_t context, double rate,
				       size_t *index);
/* The id of the open-loop cell (context, rate) into buf: "rate-8192r0p5". */
void tt_rate_cell_id(int64_t context, double rate, char *buf, size_t len);
/* Parse an output-length histogram (formats/length-hist-v1.md) from len
 * bytes; name (the file) is named in errors with the line.  On success
 * *bins (caller frees) holds *n >= 1 bins whose weights sum to > 0. */
enum tt_code tt_length_hist_parse(const char *data, size_t len, const char *name,
				  struct tt_length_bin **bins, size_t *n, struct tt_error *err);
/* Read the file at path (at most 1 MiB) and parse it as above. */
enum tt_code tt_length_hist_load(const char *path, struct tt_length_bin **bins, size_t *n,
				 struct tt_error *err);
/* Index of the cell with this id, or -1.  The id may write its context
 * as the capture's options do ("decode-8Kx64" finds "decode-8192x64"). */
long tt_manifest_find_cell(const struct tt_manifest *m, const char *id);
/* The id as the run writes it, into buf: contexts in tokens
 * ("decode-8Kx64" -> "decode-8192x64", "prefill-125K" -> "prefill-128000",
 * "rate-8Kr0.5" -> "rate-8192r0p5").  0, or -1 when id is no cell id (buf
 * then holds id as given). */
int tt_cell_id_canonical(const char *id, char *buf, size_t len);

/* Record a figure the source reported for cell c (replaces a previous value). */
enum tt_code tt_cell_set_reported(struct tt_cell_info *c, const char *key, double value);
/* 1 and *value set when c has a reported figure named key, else 0. */
int tt_cell_reported(const struct tt_cell_info *c, const char *key, double *value);
/* Append a copy of src (its strings are copied) to m->sources. */
enum tt_code tt_manifest_add_source(struct tt_manifest *m, const struct tt_import_source *src);
/* Add a figure key to m->unavailable (once). */
enum tt_code tt_manifest_add_unavailable(struct tt_manifest *m, const char *figure);
/* 1 when m lists figure as unavailable. */
int tt_manifest_unavailable(const struct tt_manifest *m, const char *figure);

/* Deep copy of src into dst (dst is initialised first; release it later). */
enum tt_code tt_manifest_copy(struct tt_manifest *dst, const struct tt_manifest *src,
			      struct tt_error *err);
/* Serialize to JSON text (caller frees *out with free()). */
enum tt_code tt_manifest_to_json(const struct tt_manifest *m, char **out, struct tt_error *err);
/* Parse JSON text; unknown fields are ignored; a newer major version is refused
 * with TT_EVERSION naming the version found and the versions understood. */
enum tt_code tt_manifest_from_json(const char *text, size_t len, const char *name,
				   struct tt_manifest *m, struct tt_error *err);

/* Redact secrets in a launch command line: values of --api-key, --token,
 * --hf-token, *_KEY=, *_TOKEN=, Bearer ... become <redacted>.  Returns a new
 * string (free()) or NULL on allocation failure. */
char *tt_redact_secrets(const char *text);

/* ---- writing a run directory ------------------------------------------ */

struct tt_run_writer;

/* Create dir (must not exist, or be empty) with cells/ and write manifest.json. */
enum tt_code tt_run_writer_create(const char *dir, const struct tt_manifest *m,
				  struct tt_run_writer **out, struct tt_error *err);
/* Open an existing run directory to continue it (--resume). */
enum tt_code tt_run_writer_resume(const char *dir, struct tt_run_writer **out,
				  struct tt_error *err);
/* The writer's manifest: change it, then tt_run_writer_commit. */
struct tt_manifest *tt_run_writer_manifest(struct tt_run_writer *w);
/* Atomically replace manifest.json (temp file, fsync, rename, fsync dir). */
enum tt_code tt_run_writer_commit(struct tt_run_writer *w, struct tt_error *err);
/* Start cell `cell`'s trace file (cells/<id>.ttz, truncated), set its trace
 * path in the manifest, and return a trace writer (close it yourself). */
enum tt_code tt_run_writer_open_cell(struct tt_run_writer *w, size_t cell,
				     const struct tt_trace_opts *opts,
				     struct tt_trace_writer **out, struct tt_error *err);
const char *tt_run_writer_dir(const struct tt_run_writer *w);
void tt_run_writer_free(struct tt_run_writer *w);

/* ---- reading a run ---------------------------------------------------- */

struct tt_run;

/* Open a run directory, or an archive holding one run (read in memory).
 * Only the manifest is read now; traces are read per cell. */
enum tt_code tt_run_open(const char *path, struct tt_run **out, struct tt_error *err);
const struct tt_manifest *tt_run_manifest(const struct tt_run *run);
const char *tt_run_path(const struct tt_run *run);
void tt_run_free(struct tt_run *run);

/* Read one cell's trace.  TT_WARN: damaged parts skipped (err says where);
 * TT_FAILED with err->kind TT_ENOTFOUND: the cell has no trace. */
enum tt_code tt_run_read_cell(struct tt_run *run, size_t cell, const struct tt_trace_visitor *v,
			      struct tt_error *err);

/* Read every cell's trace, one at a time, in storage order (one pass over an
 * archive).  begin/end bracket each cell; end gets that cell's code and error.
 * Returns the worst of the cells' results: TT_WARN when some cells were
 * missing, malformed or cut short (their damage is skipped, the other cells
 * are good), TT_FAILED when any cell failed otherwise (out of memory, I/O),
 * whatever the other cells did.  err's kind is the worst result's; its
 * message names every cell that was not read cleanly. */
struct tt_run_visitor {
	void *ctx;
	struct tt_trace_visitor trace; /* its ctx is ignored: ctx above is passed */
	void (*begin_cell)(void *ctx, size_t cell);
	void (*end_cell)(void *ctx, size_t cell, enum tt_code code, const struct tt_error *err);
};
enum tt_code tt_run_read_all(struct tt_run *run, const struct tt_run_visitor *v,
			     struct tt_error *err);

#ifdef __cplusplus
}
#endif
#endif
