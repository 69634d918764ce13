/* Importing: the run being built from another tool's file (its cells,
 * requests, reported figures, provenance notes), shared by every importer
 * (imp.h); detection and the ways in are import.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/imp.h"

/* ---- building the run ------------------------------------------------ */

/* The run's cell ids, hashed: index + 1 of m->cells in each slot, 0 empty.
 * Open addressing, at most half full. */
struct tt__imp_ids {
	size_t *slot;
	size_t cap, n;
};

static uint64_t hash_id(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int ids_put(struct tt__imp_ids *t, const struct tt_manifest *m, size_t idx)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;
		size_t *ns = calloc(nc, sizeof *ns);
		if (!ns)
			return -1;
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->slot[k])
				continue;
			for (i = hash_id(m->cells[t->slot[k] - 1].id) & (nc - 1); ns[i]; i = (i + 1) & (nc - 1))
				;
			ns[i] = t->slot[k];
		}
		free(t->slot);
		t->slot = ns;
		t->cap = nc;
	}
	for (i = hash_id(m->cells[idx].id) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i] = idx + 1;
	t->n++;
	return 0;
}

void tt__imp_ids_free(struct tt__imp_ids *t)
{
	if (t)
		free(t->slot);
	free(t);
}

/* The ids of the cells already in the run (earlier files). */
struct tt__imp_ids *tt__imp_ids_build(const struct tt_manifest *m)
{
	struct tt__imp_ids *t = calloc(1, sizeof *t);

	for (size_t i = 0; t && i < m->n_cells; i++)
		if (ids_put(t, m, i)) {
			tt__imp_ids_free(t);
			return NULL;
		}
	return t;
}

long tt__imp_find_cell(struct tt__imp *im, const char *id)
{
	const struct tt__imp_ids *t = im->ids;

	if (!t || !t->cap)
		return -1;
	for (size_t i = hash_id(id) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (strcmp(im->m->cells[t->slot[i] - 1].id, id) == 0)
			return (long)(t->slot[i] - 1);
	return -1;
}

/* Rebuild the table: cells are only renamed, never removed, so this is
 * rare (GuideLLM's provisional cells, once each). */
enum tt_code tt__imp_rename_cell(struct tt__imp *im, size_t i, const char *id,
				 struct tt_error *err)
{
	struct tt__imp_ids *t;
	size_t old_cap = im->ids ? im->ids->cap : 0;

	if (tt_manifest_set_str(&im->m->cells[i].id, id))
		return tt__imp_nomem(im, err);
	/* Remove and reinsert everything after the renamed one is found:
	 * simplest is a fresh table of the same size. */
	if (!(t = calloc(1, sizeof *t)) || !(t->slot = calloc(old_cap ? old_cap : 1024,
							     sizeof *t->slot))) {
		tt__imp_ids_free(t);
		return tt__imp_nomem(im, err);
	}
	t->cap = old_cap ? old_cap : 1024;
	for (size_t k = 0; k < im->m->n_cells; k++)
		if (ids_put(t, im->m, k)) {
			tt__imp_ids_free(t);
			return tt__imp_nomem(im, err);
		}
	tt__imp_ids_free(im->ids);
	im->ids = t;
	return TT_OK;
}

/* tt_manifest_add_cell, with room for the next cells: it grows the array
 * by one cell each time, which copies the array every time under ASan and
 * made a fuzzed 1000 x 1000 matrix time out.  The cell is set up as it
 * sets one up (format/manifest.c tt__manifest_push_cell). */
static int add_cell(struct tt__imp *im, enum tt_phase phase, int64_t ctx, int conc,
		    const char *id, size_t *index)
{
	struct tt_manifest *m = im->m;
	struct tt_cell_info *c;

	if (im->cells_cap < m->n_cells)
		im->cells_cap = m->n_cells; /* another file's array: no room assumed */
	if (m->n_cells == im->cells_cap) {
		size_t nc = im->cells_cap ? im->cells_cap * 2 : 16;
		struct tt_cell_info *cells = realloc(m->cells, nc * sizeof *cells);
		if (!cells)
			return -1;
		m->cells = cells;
		im->cells_cap = nc;
	}
	c = &m->cells[m->n_cells];
	memset(c, 0, sizeof *c);
	if (!(c->id = strdup(id)))
		return -1;
	c->state = TT_CELL_PENDING;
	c->kv_need_tokens = -1;
	c->start_ns = c->ready_ns = c->window_start_ns = c->window_end_ns = c->end_ns = -1;
	c->phase = phase;
	c->context = ctx;
	c->concurrency = phase == TT_PHASE_PREFILL ? 1 : conc;
	*index = m->n_cells++;
	return 0;
}

enum tt_code tt__imp_cell(struct tt__imp *im, const char *where, enum tt_phase phase,
			  double context, double concurrency, size_t *index, struct tt_error *err)
{
	char id[64];
	long have;
	int64_t ctx;
	int conc;
	enum tt_code rc;

	if (context != floor(context) &&
	    tt_failed(rc = tt__imp_fail_err(im, err, where, "context %g tokens is not an integer", context)))
		return rc;
	if (tt_failed(rc = tt__imp_range(im, where, "context", context, 0, TT_IMPORT_MAX_CONTEXT, "tokens",
				err)))
		return rc;
	if (phase == TT_PHASE_PREFILL)
		concurrency = 1;
	if (concurrency != floor(concurrency) &&
	    tt_failed(rc = tt__imp_fail_err(im, err, where, "concurrency %g is not an integer", concurrency)))
		return rc;
	if (tt_failed(rc = tt__imp_range(im, where, "concurrency", concurrency, 1, TT_IMPORT_MAX_CONCURRENCY,
				"requests", err)))
		return rc;
	ctx = (int64_t)context;
	conc = (int)concurrency;
	if (phase == TT_PHASE_PREFILL)
		snprintf(id, sizeof id, "prefill-%lld", (long long)ctx);
	else
		snprintf(id, sizeof id, "decode-%lldx%d", (long long)ctx, conc);
	have = tt__imp_find_cell(im, id);
	if (have >= 0)
		return tt_error_set(err, TT_EFORMAT, "'%s': %s%scell %s (%lld tokens of context, %d "
				    "at once) appears twice%s", im->file, where ? where : "",
				    where && where[0] ? ": " : "", id, (long long)ctx,
				    conc, (size_t)have < im->first_cell ?
				    " (an earlier file of this import has it too)" : "");
	if (!im->ids && !(im->ids = calloc(1, sizeof *im->ids)))
		return tt__imp_nomem(im, err);
	if (im->m->n_cells >= TT_IMPORT_MAX_CELLS)
		return tt__imp_fail_err(im, err, where, "more than %d cells: more than a run's "
					"manifest holds (64 MiB, about 190 bytes a cell)",
					TT_IMPORT_MAX_CELLS);
	if (add_cell(im, phase, ctx, conc, id, index) || ids_put(im->ids, im->m, *index))
		return tt__imp_nomem(im, err);
	return TT_OK;
}

enum tt_code tt__imp_write(struct tt__imp *im, struct tt_trace_writer *tw, const char *where,
			   const struct tt_request *r, struct tt_error *err)
{
	const int64_t lim = TT_IMPORT_MAX_TRACE_NS;
	const char *what = NULL;
	int64_t t = 0;

	if (r->n_chunks > TT_IMPORT_MAX_CHUNKS)
		return tt__imp_fail_err(im, err, where, "%zu chunks: more than the 2^20 a request of "
					"a run holds", r->n_chunks);
	if (r->t_sched_ns < -lim || r->t_sched_ns > lim)
		what = "its schedule", t = r->t_sched_ns;
	else if (r->t_send_ns < -lim || r->t_send_ns > lim)
		what = "its send time", t = r->t_send_ns;
	else if (r->t_end_ns < -lim || r->t_end_ns > lim)
		what = "its end", t = r->t_end_ns;
	for (size_t j = 0; !what && j < r->n_chunks; j++) {
		if (r->chunks[j].t_ns < -lim || r->chunks[j].t_ns > lim)
			what = "a chunk's arrival", t = r->chunks[j].t_ns;
		else if (r->chunks[j].tokens > TT_IMPORT_MAX_CHUNK_TOKENS)
			return tt__imp_fail_err(im, err, where, "a chunk of %lu tokens: more than the "
						"2^20 a chunk of a run holds (its output tokens "
						"spread over too few chunks)",
						(unsigned long)r->chunks[j].tokens);
	}
	if (what)
		return tt__imp_fail_err(im, err, where, "%s is %lld ns from the run's origin, beyond "
					"the +-2^60 ns (36 years) a run's trace holds", what,
					(long long)t);
	{
		/* All within +-2^60: the span cannot overflow. */
		int64_t lo = r->t_send_ns, hi = r->t_end_ns > lo ? r->t_end_ns : lo;
		const char *last = "its end";
		for (size_t j = 0; j < r->n_chunks; j++) {
			if (r->chunks[j].t_ns < lo)
				lo = r->chunks[j].t_ns;
			if (r->chunks[j].t_ns > hi)
				hi = r->chunks[j].t_ns, last = "a token";
		}
		if ((double)(hi - lo) > TT_IMPORT_MAX_REQUEST_NS)
			return tt__imp_fail_err(im, err, where, "the request runs %.0f s from its send "
						"to %s, more than the 24 h a request can "
						"plausibly run (vLLM bench serve gives up after 6 h)",
						(double)(hi - lo) / 1e9, last);
	}
	return tt_trace_write_request(tw, r, err);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

long tt__imp_max_in_flight(double *send, double *end, size_t n)
{
	size_t k = 0, e = 0;
	long best = 0;

	/* In flight at s: sent at or before s, ending after s.  Count the sends
	 * at or before s, less those whose max(send, end) is at or before s. */
	for (size_t i = 0; i < n; i++) {
		if (isnan(send[i]))
			continue;
		end[k] = isnan(end[i]) || end[i] < send[i] ? send[i] : end[i];
		send[k] = send[i];
		k++;
	}
	n = k;
	qsort(send, n, sizeof *send, cmp_double);
	qsort(end, n, sizeof *end, cmp_double);
	for (size_t i = 0; i < n; i++) {
		size_t started = i + 1;
		long now;
		while (started < n && send[started] == send[i])
			started++;
		while (e < n && end[e] <= send[i])
			e++;
		now = (long)started - (long)e;
		if (now > best)
			best = now;
	}
	return best;
}

/* The plausible range of a reported figure (run-v1.md 2.3 keys). */
static int plausible(const char *key, double *hi, const char **unit)
{
	size_t n = strlen(key);
	char base[64];

	if (n > 4 && strcmp(key + n - 4, "_res") == 0 && n - 4 < sizeof base) {
		memcpy(base, key, n - 4);
		base[n - 4] = '\0';
		return plausible(base, hi, unit);
	}
	if ((n > 2 && strcmp(key + n - 2, "_n") == 0) || !strcmp(key, "output_tokens") ||
	    !strcmp(key, "prompt_tokens") || !strcmp(key, "completed") ||
	    !strcmp(key, "requests") || !strcmp(key, "errors"))
		*hi = TT_IMPORT_MAX_TOKENS, *unit = "";
	else if (!strcmp(key, "total_tok_s") || !strncmp(key, "per_request_tok_s_", 18))
		*hi = TT_IMPORT_MAX_TOK_S, *unit = "tok/s";
	else if (!strncmp(key, "ttft_ms_", 8) || !strncmp(key, "tbt_ms_", 7))
		*hi = TT_IMPORT_MAX_REQUEST_NS / 1e6, *unit = "ms (24 h)";
	else if (!strcmp(key, "avg_active") || !strcmp(key, "running_mean") ||
		 !strcmp(key, "waiting_mean") || !strcmp(key, "waiting_max"))
		*hi = TT_IMPORT_MAX_CONCURRENCY, *unit = "requests";
	else if (!strcmp(key, "waiting_share"))
		*hi = 1, *unit = "";
	else if (!strcmp(key, "measured_s"))
		*hi = TT_IMPORT_MAX_SPAN_NS / 1e9, *unit = "s";
	else
		return 0;
	return 1;
}

enum tt_code tt__imp_report(struct tt__imp *im, size_t cell, const char *key, double value,
			    struct tt_error *err)
{
	return tt__imp_report_member(im, cell, key, NULL, value, err);
}

enum tt_code tt__imp_report_member(struct tt__imp *im, size_t cell, const char *key,
				   const char *member, double value, struct tt_error *err)
{
	double hi;
	const char *unit;

	/* Finite as read, but a scale (s to ms) can overflow: the reader
	 * refuses a figure that is not finite. */
	if (!isfinite(value))
		return tt__imp_fail_err(im, err, im->m->cells[cell].id, "reported %s is not a "
					"finite number once in its unit", key);
	if (plausible(key, &hi, &unit) && !(value >= 0 && value <= hi))
		return tt__imp_fail_err(im, err, im->m->cells[cell].id, "%s%s%s%s: %g is outside "
					"0..%g%s%s, what it can plausibly be", member ? member : key,
					member ? " (" : "", member ? key : "", member ? ")" : "",
					value, hi, unit[0] ? " " : "", unit);
	if (tt_cell_set_reported(&im->m->cells[cell], key, value))
		return tt__imp_nomem(im, err);
	return TT_OK;
}

enum tt_code tt__imp_trace(struct tt__imp *im, size_t cell, struct tt_trace_writer **out,
			   struct tt_error *err)
{
	struct tt_trace_opts o = {.time_unit_ns = 1000, .level = 3, .frame_bytes = 0, .sync = 0};
	return tt_run_writer_open_cell(im->w, cell, &o, out, err);
}

enum tt_code tt__imp_set(struct tt__imp *im, char **field, const char *value, struct tt_error *err)
{
	if (*field || !value || !value[0])
		return TT_OK;
	return tt_manifest_set_str(field, value) ? tt__imp_nomem(im, err) : TT_OK;
}

enum tt_code tt__imp_endpoint(struct tt__imp *im, const char *value, struct tt_error *err)
{
	if (!value)
		return TT_OK;
	if (strstr(value, "chat"))
		return tt__imp_set(im, &im->m->endpoint, "chat", err);
	if (strstr(value, "completions"))
		return tt__imp_set(im, &im->m->endpoint, "completions", err);
	return TT_OK;
}

enum tt_code tt__imp_note(struct tt__imp *im, const char *key, const char *value,
			  struct tt_error *err)
{
	char *clean;
	enum tt_code rc;

	if (!value || !value[0] || tt_manifest_note(im->m, key))
		return TT_OK;
	/* A foreign file's server URL or command may carry credentials
	 * (user:password@, ?api_key=): redacted as the capture redacts. */
	if (!(clean = tt_redact_secrets(value)))
		return tt__imp_nomem(im, err);
	rc = tt_manifest_set_note(im->m, key, clean) ? tt__imp_nomem(im, err) : TT_OK;
	free(clean);
	return rc;
}

enum tt_code tt__imp_unavailable(struct tt__imp *im, const char *figure, struct tt_error *err)
{
	return tt_manifest_add_unavailable(im->m, figure) ? tt__imp_nomem(im, err) : TT_OK;
}

enum tt_code tt__imp_add_i64(struct tt__imp *im, int64_t **v, size_t *n, int64_t x,
			     struct tt_error *err)
{
	int64_t *nv;

	/* The last value again (a matrix's rows, one context each) costs no
	 * room; duplicates elsewhere go when the lists are made unique. */
	if (*n && (*v)[*n - 1] == x)
		return TT_OK;
	/* Doubling: the capacity is 4, then twice each power of two reached
	 * (a list shortened in place keeps more room than this assumes). */
	if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) {
		if (!(nv = realloc(*v, (*n ? *n * 2 : 4) * sizeof *nv)))
			return tt__imp_nomem(im, err);
		*v = nv;
	}
	(*v)[(*n)++] = x;
	return TT_OK;
}

enum tt_code tt__imp_add_int(struct tt__imp *im, int **v, size_t *n, int x, struct tt_error *err)
{
	int *nv;

	if (*n && (*v)[*n - 1] == x)
		return TT_OK;
	if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) {
		if (!(nv = realloc(*v, (*n ? *n * 2 : 4) * sizeof *nv)))
			return tt__imp_nomem(im, err);
		*v = nv;
	}
	(*v)[(*n)++] = x;
	return TT_OK;
}

/* Tokens of chunk j of n carrying `tokens` in all: the first chunk one token
 * (vLLM streams the first token alone), the rest spread evenly, earlier
 * chunks taking the remainder; more chunks than tokens: the last carry 0. */
uint32_t tt__imp_chunk_tokens(size_t j, size_t n, long tokens)
{
	long rest, per, extra;

	if (tokens <= 0)
		return 0;
	if ((long)n >= tokens)
		return j < (size_t)tokens ? 1 : 0;
	if (j == 0)
		return 1;
	rest = tokens - 1;
	per = rest / (long)(n - 1);
	extra = rest % (long)(n - 1);
	return (uint32_t)(per + ((long)(j - 1) < extra ? 1 : 0));
}

