/* tokentrace: importing other benchmark tools' result files as runs.
 *
 * An imported run is a run (formats/run-v1.md): the same manifest, cells and
 * statuses, plus where it came from (tool, version, file, SHA-256) and the
 * figures its source did not have (formats/run-v1.md 2.3).  Where the source
 * kept per-request or per-chunk times they become trace records; where it
 * kept only aggregates, a cell carries the figures the source reported.
 * Each format is described in formats/import-<name>.md. */
#ifndef TOKENTRACE_IMPORT_H
#define TOKENTRACE_IMPORT_H

#include <stddef.h>

#include "tokentrace/error.h"
#include "tokentrace/run.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_import_format {
	TT_IMPORT_AUTO = 0,        /* detect from the content */
	TT_IMPORT_LIB_JSON,        /* "llm-inference-bench": its result JSON */
	TT_IMPORT_LIB_REPORT,      /* "llm-inference-bench-report": its printed "Speed test matrix" */
	TT_IMPORT_VLLM,            /* "vllm-bench": vLLM bench serve --save-result JSON */
	TT_IMPORT_GENAI_PERF,      /* "genai-perf": GenAI-Perf profile_export.json */
	TT_IMPORT_AIPERF,          /* "aiperf": AIPerf profile_export.jsonl */
	TT_IMPORT_GUIDELLM,        /* "guidellm": GuideLLM benchmarks.json */
	TT_IMPORT_FORMAT_COUNT_
};
/* "llm-inference-bench", ...; "auto" for TT_IMPORT_AUTO. */
const char *tt_import_format_name(enum tt_import_format f);
/* Name (as above) to format; TT_FAILED (TT_EARG, listing the names) when unknown. */
enum tt_code tt_import_format_parse(const char *name, enum tt_import_format *out,
				    struct tt_error *err);

/* What the file at path is, from its content: *fmt is a format, or
 * TT_IMPORT_AUTO when it is (or looks like) a tokentrace run.  TT_FAILED
 * (TT_EFORMAT) when it is neither, naming the file. */
enum tt_code tt_import_detect(const char *path, enum tt_import_format *fmt, struct tt_error *err);

struct tt_import_opts {
	enum tt_import_format from; /* TT_IMPORT_AUTO: detect each file */
};

/* Import n files into a new run directory dir (must not exist, or be empty).
 * The run is written beside dir and renamed into place only when every file
 * imported: a failure leaves nothing behind.  TT_WARN: imported, but a file
 * was of a newer schema than known and only the fields we know were read
 * (err says which).  opts may be NULL. */
enum tt_code tt_import_files(const char *const *paths, size_t n, const struct tt_import_opts *opts,
			     const char *dir, struct tt_error *err);

/* As tt_import_files for one file's bytes held in memory; name is used in
 * messages and the provenance record. */
enum tt_code tt_import_memory(const void *data, size_t len, const char *name,
			      const struct tt_import_opts *opts, const char *dir,
			      struct tt_error *err);

/* Open path as tt_run_open does when it is a run (directory or archive);
 * otherwise import it (one file of another tool) into a private temporary
 * directory that tt_run_free removes.  tt_run_path then returns path.
 * TT_WARN as for tt_import_files (the run is open).  opts may be NULL. */
enum tt_code tt_import_open(const char *path, const struct tt_import_opts *opts,
			    struct tt_run **out, struct tt_error *err);

/* Remove the directories imports are writing or hold right now (RUN.
 * importing-XXXXXX of tt_import_files, the private run of tt_import_open),
 * for a program stopped by a signal: the library installs no handler; a
 * program's SIGINT/SIGTERM handler calls this, then ends.  Async-signal-
 * safe (system calls only, no allocation, no lock); the imports and runs
 * concerned must not be used afterwards. */
void tt_import_abandon(void);

#ifdef __cplusplus
}
#endif
#endif
