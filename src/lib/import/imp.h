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
/* Chunks of one request beyond this are refused as implausible. */
#define TT_IMPORT_MAX_CHUNKS 10000000u

struct tt__imp {
	const char *file;          /* as given: every message starts with it */
	const char *data;          /* the whole file, NUL-terminated */
	size_t len;
	struct tt_run_writer *w;   /* the run being written */
	struct tt_manifest *m;     /* its manifest */
	size_t first_cell;         /* cells this file added start here */
	struct tt_import_source src; /* importer sets tool and tool_version (static strings ok) */
	char newer[256];           /* "" or why the file's schema is newer than we know */
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

/* ---- building the run (import.c) ------------------------------------- */

/* Add a cell; one already in the run (from another file) is an error. */
enum tt_code tt__imp_cell(struct tt__imp *im, const char *where, enum tt_phase phase,
			  int64_t context,
			  int concurrency, size_t *index, struct tt_error *err);
/* Set a reported figure on a cell. */
enum tt_code tt__imp_report(struct tt__imp *im, size_t cell, const char *key, double value,
			    struct tt_error *err);
/* Open the cell's trace (no fsync per frame: an import is redone, not resumed). */
enum tt_code tt__imp_trace(struct tt__imp *im, size_t cell, struct tt_trace_writer **out,
			   struct tt_error *err);
/* Set a manifest string when not yet set (the first file of a run wins). */
enum tt_code tt__imp_set(struct tt__imp *im, char **field, const char *value, struct tt_error *err);
enum tt_code tt__imp_note(struct tt__imp *im, const char *key, const char *value,
			  struct tt_error *err);
enum tt_code tt__imp_unavailable(struct tt__imp *im, const char *figure, struct tt_error *err);
/* Add v to a settings list unless there (contexts, prefill_contexts, concurrency). */
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
