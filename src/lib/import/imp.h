/* What every importer shares: the file being read, the run being written,
 * and error messages that name the file, the field and the position. */
#ifndef TT_IMPORT_IMP_H
#define TT_IMPORT_IMP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "tokentrace/import.h"
#include "tokentrace/run.h"
#include "tokentrace/trace.h"

/* Inputs larger than this are refused (a runaway file cannot eat memory). */
#define TT_IMPORT_MAX_BYTES ((size_t)1 << 30)
/* What the run reader takes (formats/run-v1.md 2.2, 3.5; format/manifest.c,
 * format/trace_read.c): an import refuses, naming the member and the limit,
 * whatever its own reader would refuse or skip, so whatever imports reads.
 * Chunks of one request, and tokens of one chunk: */
#define TT_IMPORT_MAX_CHUNKS ((size_t)1 << 20)
#define TT_IMPORT_MAX_CHUNK_TOKENS ((uint32_t)1 << 20)
/* A cell's context (tokens) and concurrency. */
#define TT_IMPORT_MAX_CONTEXT 1e15
#define TT_IMPORT_MAX_CONCURRENCY 1000000
/* Cells of a run: its manifest (about 190 bytes a cell) stays within the
 * reader's 64 MiB. */
#define TT_IMPORT_MAX_CELLS 300000
/* A trace time, ns from the run's origin (the reader marks a record with a
 * time beyond it damaged: 2^60 ns, 36 years). */
#define TT_IMPORT_MAX_TRACE_NS ((int64_t)1 << 60)
/* Times and counts read from a file, before any arithmetic on them: an
 * absolute time (Unix ns) within +-4e18 (the year 2096; the difference of
 * two stays within int64), a duration or gap within 0..2^60 ns, a token
 * count within 0..1e12.  Within these, every sum an importer forms is
 * checked against TT_IMPORT_MAX_TRACE_NS before it could overflow. */
#define TT_IMPORT_MAX_ABS_NS 4e18
#define TT_IMPORT_MAX_SPAN_NS 1152921504606846976.0 /* 2^60 */
#define TT_IMPORT_MAX_TOKENS 1e12
/* How long one request can plausibly run, send to its last token or end:
 * 24 h, 4 times the longest client timeout of the tools read (vLLM bench
 * serve gives up on a request after 6 h, GuideLLM after 5 min by
 * default; the longest request of the fixtures lasts 24.9 s, GuideLLM's).  A last token
 * a year late is a damaged file, not a slow server. */
#define TT_IMPORT_MAX_REQUEST_NS (24.0 * 3600 * 1e9)
/* The largest plausible reported throughput, tok/s: 1e9, 5,800 times the
 * largest of the fixtures (the seed report's 171,800 tok/s on one H200): a
 * whole cluster fits, 1e308 does not. */
#define TT_IMPORT_MAX_TOK_S 1e9

struct tt__imp_ids;
/* The run's cell ids, hashed (imp_build.c); NULL when out of memory. */
struct tt__imp_ids *tt__imp_ids_build(const struct tt_manifest *m);
void tt__imp_ids_free(struct tt__imp_ids *t);

struct tt__imp {
	const char *file;          /* as given: every message starts with it */
	const char *data;          /* the whole file, NUL-terminated */
	size_t len;
	struct tt_run_writer *w;   /* the run being written */
	struct tt_manifest *m;     /* its manifest */
	size_t first_cell;         /* cells this file added start here */
	struct tt_import_source src; /* importer sets tool and tool_version (static strings ok) */
	char newer[256];           /* "" or why the file's schema is newer than we know */
	struct tt__imp_ids *ids;   /* the run's cell ids, hashed (import.c) */
	size_t cells_cap;          /* room in m->cells (import.c add_cell) */
};

/* An importer reads im->data (or root, already parsed when the file is one
 * JSON value; NULL otherwise), adds cells and records to im->w. */
typedef enum tt_code (*tt__importer_fn)(struct tt__imp *im, const cJSON *root,
					struct tt_error *err);
enum tt_code tt__import_lib_json(struct tt__imp *im, const cJSON *root, struct tt_error *err);
enum tt_code tt__import_lib_report(struct tt__imp *im, const cJSON *root, struct tt_error *err);
enum tt_code tt__import_vllm(struct tt__imp *im, const cJSON *root, struct tt_error *err);
enum tt_code tt__import_genai_perf(struct tt__imp *im, const cJSON *root, struct tt_error *err);
enum tt_code tt__import_aiperf(struct tt__imp *im, const cJSON *root, struct tt_error *err);
enum tt_code tt__import_guidellm(struct tt__imp *im, const cJSON *root, struct tt_error *err);

/* A summary-only file (imp_summary.c): GenAI-Perf's
 * profile_export_genai_perf.json (is_aiperf 0) or AIPerf's
 * profile_export_aiperf.json (1), one aggregate cell. */
enum tt_code tt__imp_summary(struct tt__imp *im, const cJSON *root, int is_aiperf,
			     struct tt_error *err);

/* Detect a format from a file's content (root: the parsed value when the
 * whole file is one JSON value, else NULL).  TT_IMPORT_AUTO: not ours. */
enum tt_import_format tt__import_sniff(const char *data, size_t len, const cJSON *root);

/* ---- JSON access with positions (imp_json.c) ------------------------- */

/* Parse the whole file as one JSON value; a syntax error names the line,
 * column and byte. */
enum tt_code tt__imp_parse(const struct tt__imp *im, const char *text, size_t len,
			   const char *where, cJSON **out, struct tt_error *err);
/* Line and column (from 1) of byte off of im->data. */
void tt__imp_linecol(const char *data, size_t off, size_t *line, size_t *col);

/* A member of object o, where names o in messages ("results[3]").
 * The getters return TT_OK with *found = 1 (or 0 when absent and not
 * required); absent and required, or of the wrong type: TT_FAILED with
 * "FILE: WHERE.KEY: ...".  A JSON null counts as absent. */
enum tt_code tt__imp_num(const struct tt__imp *im, const cJSON *o, const char *where,
			 const char *key, int required, double *out, int *found,
			 struct tt_error *err);
enum tt_code tt__imp_str(const struct tt__imp *im, const cJSON *o, const char *where,
			 const char *key, int required, const char **out, struct tt_error *err);
/* Array or object member (type cJSON_Array / cJSON_Object); *out NULL when absent. */
enum tt_code tt__imp_member(const struct tt__imp *im, const cJSON *o, const char *where,
			    const char *key, int type, int required, const cJSON **out,
			    struct tt_error *err);
/* "FILE: WHERE: message" as TT_EFORMAT. */
enum tt_code tt__imp_fail_err(const struct tt__imp *im, struct tt_error *err, const char *where,
			      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
enum tt_code tt__imp_nomem(const struct tt__imp *im, struct tt_error *err);
/* v (from the member `member` of `where`) within lo..hi `unit`, else
 * "FILE: WHERE.MEMBER: V is outside LO..HI UNIT"; NaN and infinities are
 * outside.  Check before casting a double from outside to an integer. */
enum tt_code tt__imp_range(const struct tt__imp *im, const char *where, const char *member,
			   double v, double lo, double hi, const char *unit, struct tt_error *err);
/* The same for a time of outside, in ns after scaling (v * scale), stored
 * rounded in *out: lo..hi ns. */
enum tt_code tt__imp_ns(const struct tt__imp *im, const char *where, const char *member,
			double v, double scale, double lo, double hi, int64_t *out,
			struct tt_error *err);
/* a + b (ns), refused as beyond the reader's TT_IMPORT_MAX_TRACE_NS when
 * the sum is: a and b within +-2^62 never overflow. */
enum tt_code tt__imp_add_ns(const struct tt__imp *im, const char *where, const char *member,
			    int64_t a, int64_t b, int64_t *out, struct tt_error *err);

/* ---- building the run (import.c) ------------------------------------- */

/* Add a cell; one already in the run (from another file) is an error, and
 * so are a context outside 0..TT_IMPORT_MAX_CONTEXT and a concurrency
 * outside 1..TT_IMPORT_MAX_CONCURRENCY (the reader's), or either not an
 * integer.  Both are doubles so that no caller casts an unchecked value. */
enum tt_code tt__imp_cell(struct tt__imp *im, const char *where, enum tt_phase phase,
			  double context, double concurrency, size_t *index, struct tt_error *err);
/* Is there a cell of this id (phase, context and concurrency)?  -1: no.
 * Constant time: the ids of the run are hashed (tt_manifest_find_cell
 * would make a matrix quadratic). */
long tt__imp_find_cell(struct tt__imp *im, const char *id);
/* Rename cell i to id (its context known once its requests are read). */
enum tt_code tt__imp_rename_cell(struct tt__imp *im, size_t i, const char *id,
				 struct tt_error *err);
/* Set a reported figure on a cell, refused outside what it can plausibly
 * be (docs/import.md "Limits"): tok/s 0..TT_IMPORT_MAX_TOK_S, latencies
 * (ms) 0..TT_IMPORT_MAX_REQUEST_NS, counts 0..TT_IMPORT_MAX_TOKENS,
 * requests running or waiting 0..TT_IMPORT_MAX_CONCURRENCY, shares 0..1,
 * measured_s within the 2^60 ns a run holds; other keys finite.  member:
 * the file's name of it for the message (NULL: key). */
enum tt_code tt__imp_report(struct tt__imp *im, size_t cell, const char *key, double value,
			    struct tt_error *err);
enum tt_code tt__imp_report_member(struct tt__imp *im, size_t cell, const char *key,
				   const char *member, double value, struct tt_error *err);
/* Write one request to a cell's trace, refused (naming where: "line 3",
 * "requests[7]") when the run reader would not take it: a time beyond
 * +-TT_IMPORT_MAX_TRACE_NS, more than TT_IMPORT_MAX_CHUNKS chunks, or a
 * chunk of more than TT_IMPORT_MAX_CHUNK_TOKENS tokens. */
enum tt_code tt__imp_write(struct tt__imp *im, struct tt_trace_writer *tw, const char *where,
			   const struct tt_request *r, struct tt_error *err);
/* The most requests in flight at once: at each send time s, the requests
 * sent at or before s that end after it.  send and end (ns or s, any one
 * unit) are the caller's scratch, sorted here; NaN sends are not counted, a
 * NaN end counts as never in flight.  O(n log n).  -1: out of memory. */
long tt__imp_max_in_flight(double *send, double *end, size_t n);
/* Open the cell's trace (no fsync per frame: an import is redone, not resumed). */
enum tt_code tt__imp_trace(struct tt__imp *im, size_t cell, struct tt_trace_writer **out,
			   struct tt_error *err);
/* Set a manifest string when not yet set (the first file of a run wins). */
enum tt_code tt__imp_set(struct tt__imp *im, char **field, const char *value, struct tt_error *err);
/* The endpoint a file names ("/v1/chat/completions", "openai-chat",
 * "chat"): "chat" when it says chat, "completions" when it says
 * completions, else left unset (the run's default, "completions"); the
 * first file of a run that says it wins. */
enum tt_code tt__imp_endpoint(struct tt__imp *im, const char *value, struct tt_error *err);
enum tt_code tt__imp_note(struct tt__imp *im, const char *key, const char *value,
			  struct tt_error *err);
enum tt_code tt__imp_unavailable(struct tt__imp *im, const char *figure, struct tt_error *err);
/* Add v to a settings list (contexts, prefill_contexts, concurrency); the
 * lists are sorted and made unique once the import is complete. */
enum tt_code tt__imp_add_i64(struct tt__imp *im, int64_t **v, size_t *n, int64_t x,
			     struct tt_error *err);
enum tt_code tt__imp_add_int(struct tt__imp *im, int **v, size_t *n, int x, struct tt_error *err);

/* Output tokens of chunk j of n when a request's n chunks carried `tokens`
 * in all and the source does not say which chunk carried how many: the
 * first chunk one (servers stream the first token alone), the others spread
 * evenly, earlier chunks taking the remainder; with more chunks than
 * tokens, the last chunks carry 0. */
uint32_t tt__imp_chunk_tokens(size_t j, size_t n, long tokens);

/* ---- checksum (sha256.c) --------------------------------------------- */
void tt__sha256_hex(const void *data, size_t len, char hex[65]);

#endif
